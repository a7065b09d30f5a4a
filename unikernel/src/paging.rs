//! Page tables for device memory, with the caching each kind of memory
//! needs.
//!
//! The boot code maps the first GiB write-back; everything else is mapped
//! here on demand with 2 MiB pages: the ECAM window and register BARs
//! uncached (UC), prefetchable BARs (where a GPU's VRAM aperture lives)
//! write-combining (WC). Addresses above 4 GiB get page tables like any
//! other; the identity map reaches 128 TiB (4-level paging, the lower
//! canonical half).
//!
//! One range is not identity mapped: the model GPU's DMA region, whose
//! frames [`map_to`] places at `barebell::platform::DMA_HOST_VA` (where
//! the host CLI and the hardware targets put theirs), after [`unmap`]
//! took their identity alias away (see `crate::devmem`).
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
    /// [`map_to`] and [`unmap`] take whole 2 MiB pages only.
    Misaligned { va: u64, phys: u64, len: u64 },
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
            MapError::Misaligned { va, phys, len } => write!(
                f,
                "VA {va:#x}, PA {phys:#x}, {len:#x} bytes: not whole 2 MiB pages"
            ),
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
        self.map_pages(start, start, end - start, cache)
    }

    /// Maps `[va, va + len)` to `[phys, phys + len)`, all 2 MiB aligned
    /// and checked by the callers.
    fn map_pages(&mut self, va: u64, phys: u64, len: u64, cache: Cache) -> Result<u64, MapError> {
        let mut pages = 0;
        let mut off = 0;
        while off < len {
            let (v, p) = (va + off, phys + off);
            let pd = self.pd_for(v)?;
            // SAFETY: `pd` is a live page directory and the index is
            // < 512; the entry maps [v, v + 2 MiB) to [p, p + 2 MiB), which
            // is what the caller asked for (identity for `map`). invlpg
            // drops a stale translation if the entry was present.
            unsafe {
                pd.add((v >> 21 & 511) as usize)
                    .write_volatile(p | PRESENT | WRITABLE | HUGE | cache.bits());
                core::arch::asm!("invlpg [{0}]", in(reg) v, options(nostack));
            }
            pages += 1;
            off += PAGE_2M;
        }
        Ok(pages)
    }

    /// The page directory covering `va`, made if absent.
    fn pd_for(&mut self, va: u64) -> Result<*mut u64, MapError> {
        let pml4 = (&raw mut BOOT_PML4).cast::<u64>();
        // SAFETY: the indices are < 512, inside each 512-entry table.
        let pdpt = self.next_level(unsafe { pml4.add((va >> 39 & 511) as usize) }, va)?;
        // SAFETY: as above.
        self.next_level(unsafe { pdpt.add((va >> 30 & 511) as usize) }, va)
    }

    /// Clears the 2 MiB entries of `[va, va + len)` that are present.
    fn unmap(&mut self, va: u64, len: u64) -> Result<u64, MapError> {
        let mut pages = 0;
        let mut off = 0;
        while off < len {
            let v = va + off;
            off += PAGE_2M;
            let Some(e) = self.entry_ptr(v)? else {
                continue;
            };
            // SAFETY: `e` is the present 2 MiB leaf entry for `v` in a
            // live table (found by `entry_ptr`); clearing it and invlpg
            // make `v` fault from now on, which is the point.
            unsafe {
                e.write_volatile(0);
                core::arch::asm!("invlpg [{0}]", in(reg) v, options(nostack));
            }
            pages += 1;
        }
        Ok(pages)
    }

    /// A pointer to the present 2 MiB leaf entry mapping `va`, if any
    /// (the page-directory entry: neither the boot code nor this mapper
    /// makes 4 KiB page tables).
    fn entry_ptr(&self, va: u64) -> Result<Option<*mut u64>, MapError> {
        let mut table = (&raw mut BOOT_PML4).cast::<u64>();
        for shift in [39u32, 30, 21] {
            // SAFETY: index < 512 within a live table.
            let at = unsafe { table.add((va >> shift & 511) as usize) };
            // SAFETY: `at` points into a live table, written only under
            // the mapper's lock, which the caller holds.
            let e = unsafe { at.read_volatile() };
            if e & PRESENT == 0 {
                return Ok(None);
            }
            if shift == 21 {
                return Ok(Some(at));
            }
            if e & HUGE != 0 {
                return Err(MapError::HugeParent { address: va });
            }
            table = (e & ADDR_MASK) as *mut u64;
        }
        Ok(None)
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

/// Maps `[va, va + len)` to the physical range at `phys` with 2 MiB pages
/// of type `cache`; all three must be multiples of 2 MiB and the range
/// must lie in the lower canonical half. Returns the number of pages
/// written. What was mapped at `va` before is replaced.
pub fn map_to(va: u64, phys: u64, len: u64, cache: Cache) -> Result<u64, MapError> {
    let aligned = (va | phys | len) & (PAGE_2M - 1) == 0;
    if !aligned {
        return Err(MapError::Misaligned { va, phys, len });
    }
    if va.checked_add(len).is_none_or(|e| e > LIMIT) {
        return Err(MapError::OutOfRange {
            start: va,
            end: va.saturating_add(len),
        });
    }
    MAPPER.lock().map_pages(va, phys, len, cache)
}

/// Takes the 2 MiB pages of `[va, va + len)` out of the page tables
/// (those present); returns how many were. Both must be multiples of
/// 2 MiB.
pub fn unmap(va: u64, len: u64) -> Result<u64, MapError> {
    if (va | len) & (PAGE_2M - 1) != 0 {
        return Err(MapError::Misaligned { va, phys: va, len });
    }
    MAPPER.lock().unmap(va, len)
}

/// The leaf (2 MiB) entry mapping `address`, for the log.
pub fn leaf_entry(address: u64) -> Option<u64> {
    MAPPER.lock().entry(address)
}

/// Page tables handed out so far, and the pool size.
pub fn tables_used() -> (usize, usize) {
    (MAPPER.lock().used, POOL_TABLES)
}
