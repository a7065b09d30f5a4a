//! Identity page tables for device memory, with the caching each kind of
//! memory needs.
//!
//! The boot code maps the first GiB write-back; everything else is mapped
//! here on demand with 2 MiB pages: the ECAM window and register BARs
//! uncached (UC), prefetchable BARs (where a GPU's VRAM aperture lives)
//! write-combining (WC). Addresses above 4 GiB get page tables like any
//! other; the identity map reaches 256 TiB (4-level paging).
//!
//! x86 has no WC encoding in the page-table bits themselves: PWT, PCD and
//! (for a 2 MiB page) bit 12 select one of eight PAT entries, and the PAT
//! MSR says what each entry means. [`init_pat`] programs the layout Linux
//! uses (`pat_bp_init()`: WB, WC, UC-, UC, WB, WP, UC-, WT, except that
//! entry 5 is WT here since nothing uses WP), so that PWT alone selects WC
//! and PCD|PWT selects UC. The MTRRs firmware set are left alone; for
//! the combinations used (MTRR UC or WB with PAT UC or WC) the PAT type
//! wins (Intel SDM vol. 3, "Selecting Memory Types for Pentium III and
//! More Recent Processor Families").

use spin::Mutex;

const PRESENT: u64 = 1 << 0;
const WRITABLE: u64 = 1 << 1;
const PWT: u64 = 1 << 3;
const PCD: u64 = 1 << 4;
const HUGE: u64 = 1 << 7;
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;
const PAGE_2M: u64 = 1 << 21;
/// 4-level paging: 48-bit virtual addresses, and an identity map cannot go
/// above the lower canonical half.
const LIMIT: u64 = 1 << 47;

const IA32_PAT: u32 = 0x277;
/// Entries 0..7 (low byte first): WB(6) WC(1) UC-(7) UC(0) WB(6) WT(4)
/// UC-(7) UC(0).
const PAT_VALUE: u64 = 0x0007_0406_0007_0106;

/// How a range is cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// What the boot map uses for RAM (PAT entry 0); named for the log.
    #[allow(dead_code)]
    WriteBack,
    /// Strong uncached: every access goes to the device, in order.
    Uncached,
    /// Write-combining: stores may merge and are posted; reads uncached.
    WriteCombining,
}

impl Cache {
    const fn bits(self) -> u64 {
        match self {
            Cache::WriteBack => 0,
            Cache::WriteCombining => PWT,
            Cache::Uncached => PCD | PWT,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Cache::WriteBack => "WB",
            Cache::Uncached => "UC",
            Cache::WriteCombining => "WC",
        }
    }

    /// PAT index this type is mapped through (for the log).
    pub const fn pat_index(self) -> u64 {
        let b = self.bits();
        (b >> 3 & 1) | (b >> 4 & 1) << 1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    /// `[start, end)` reaches beyond what an identity map can cover.
    OutOfRange { start: u64, end: u64 },
    /// The static pool of page tables is used up.
    NoTables { needed_for: u64 },
    /// A 1 GiB page already covers `address`; splitting is not done.
    HugeParent { address: u64 },
}

impl core::fmt::Display for MapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MapError::OutOfRange { start, end } => {
                write!(
                    f,
                    "range {start:#x}..{end:#x} is beyond the 47-bit identity map"
                )
            }
            MapError::NoTables { needed_for } => {
                write!(f, "out of page tables while mapping {needed_for:#x}")
            }
            MapError::HugeParent { address } => {
                write!(f, "{address:#x} lies in a 1 GiB page")
            }
        }
    }
}

#[repr(C, align(4096))]
struct Table([u64; 512]);

const POOL_TABLES: usize = 64;

struct Mapper {
    used: usize,
}

static MAPPER: Mutex<Mapper> = Mutex::new(Mapper { used: 0 });
static mut POOL: [Table; POOL_TABLES] = [const { Table([0; 512]) }; POOL_TABLES];

unsafe extern "C" {
    static mut BOOT_PML4: [u64; 512];
}

fn rdmsr(msr: u32) -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: IA32_PAT exists on every x86-64 CPU; rdmsr has no memory
    // effects.
    unsafe {
        core::arch::asm!("rdmsr", in("ecx") msr, out("eax") lo, out("edx") hi, options(nomem, nostack))
    };
    u64::from(hi) << 32 | u64::from(lo)
}

/// Programs the PAT (see the module docs) and returns (old, new).
pub fn init_pat() -> (u64, u64) {
    let old = rdmsr(IA32_PAT);
    // SAFETY: writing a valid PAT layout; every mapping made so far uses
    // PAT index 0 (PWT = PCD = 0), which stays WB, so no live mapping
    // changes type. wbinvd and the CR3 reload then drop anything cached
    // under the old layout, as the SDM asks for a PAT change.
    unsafe {
        core::arch::asm!(
            "wrmsr",
            "wbinvd",
            "mov {t}, cr3",
            "mov cr3, {t}",
            in("ecx") IA32_PAT,
            in("eax") PAT_VALUE as u32,
            in("edx") (PAT_VALUE >> 32) as u32,
            t = out(reg) _,
            options(nostack)
        )
    };
    (old, rdmsr(IA32_PAT))
}

impl Mapper {
    /// The table an entry points at, creating it if absent.
    fn next_level(&mut self, entry: *mut u64, address: u64) -> Result<*mut u64, MapError> {
        // SAFETY: `entry` points into a live page table (the boot tables
        // or the pool), which only this mapper writes, under its lock.
        let e = unsafe { entry.read_volatile() };
        if e & PRESENT != 0 {
            if e & HUGE != 0 {
                return Err(MapError::HugeParent { address });
            }
            return Ok((e & ADDR_MASK) as *mut u64);
        }
        if self.used >= POOL_TABLES {
            return Err(MapError::NoTables {
                needed_for: address,
            });
        }
        // SAFETY: pool slot `used` has never been handed out (the index
        // only grows), and the pool is .bss, so it is zeroed; the lock
        // serialises access.
        let t = unsafe { (&raw mut POOL).cast::<Table>().add(self.used) }.cast::<u64>();
        self.used += 1;
        // SAFETY: as above for `entry`; the new table is zero (no present
        // entries) and identity mapped, so its address is its pointer.
        unsafe { entry.write_volatile(t as u64 | PRESENT | WRITABLE) };
        Ok(t)
    }

    fn map(&mut self, phys: u64, len: u64, cache: Cache) -> Result<u64, MapError> {
        let start = phys & !(PAGE_2M - 1);
        let end = phys
            .checked_add(len)
            .and_then(|e| e.checked_add(PAGE_2M - 1))
            .map(|e| e & !(PAGE_2M - 1))
            .filter(|&e| e <= LIMIT)
            .ok_or(MapError::OutOfRange {
                start: phys,
                end: phys.saturating_add(len),
            })?;
        let pml4 = (&raw mut BOOT_PML4).cast::<u64>();
        let mut pages = 0;
        let mut p = start;
        while p < end {
            let i4 = (p >> 39 & 511) as usize;
            let i3 = (p >> 30 & 511) as usize;
            let i2 = (p >> 21 & 511) as usize;
            // SAFETY: the indices are < 512, inside each 512-entry table.
            let pdpt = self.next_level(unsafe { pml4.add(i4) }, p)?;
            // SAFETY: as above.
            let pd = self.next_level(unsafe { pdpt.add(i3) }, p)?;
            // SAFETY: as above; the entry maps [p, p + 2 MiB) to itself,
            // which is what every caller means by "identity map". invlpg
            // drops a stale translation if the entry was present.
            unsafe {
                pd.add(i2)
                    .write_volatile(p | PRESENT | WRITABLE | HUGE | cache.bits());
                core::arch::asm!("invlpg [{0}]", in(reg) p, options(nostack));
            }
            pages += 1;
            p += PAGE_2M;
        }
        Ok(pages)
    }

    fn entry(&self, address: u64) -> Option<u64> {
        let mut table = (&raw const BOOT_PML4).cast::<u64>();
        for shift in [39u32, 30, 21] {
            // SAFETY: index < 512 within a live table.
            let e = unsafe { table.add((address >> shift & 511) as usize).read_volatile() };
            if e & PRESENT == 0 {
                return None;
            }
            if shift == 21 || e & HUGE != 0 {
                return Some(e);
            }
            table = (e & ADDR_MASK) as *const u64;
        }
        None
    }
}

/// Identity-maps `[phys, phys + len)` with 2 MiB pages of type `cache`;
/// returns the number of pages written. Remapping a range changes its
/// type. Afterwards `phys as *mut u8` is a valid pointer to the range.
pub fn map(phys: u64, len: u64, cache: Cache) -> Result<u64, MapError> {
    MAPPER.lock().map(phys, len, cache)
}

/// The leaf (2 MiB) entry mapping `address`, for the log.
pub fn leaf_entry(address: u64) -> Option<u64> {
    MAPPER.lock().entry(address)
}

/// Page tables handed out so far, and the pool size.
pub fn tables_used() -> (usize, usize) {
    (MAPPER.lock().used, POOL_TABLES)
}
