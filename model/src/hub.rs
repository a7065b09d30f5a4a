//! A VM hub (GFXHUB 3.0, MMHUB 3.0.0, GFXHUB 12.0 or MMHUB 4.1.0) as a
//! translation gate in front of the GMC walk, with the L2
//! protection-fault registers.
//!
//! The model keeps the hub registers the runtime programs, at the hub's
//! block bases, and for each access through a VMID checks what the VM L2
//! would need before it walks anything: the L1 TLB and the L2 cache
//! enabled, the context enabled, a page-table base with its VALID bit
//! (`amdgpu_gmc_pd_addr()` adds it), for VMID0 a system aperture whose
//! low bound is not above its high bound, and the VA inside the
//! context's start/end range. Only then does it hand the walk to
//! [`crate::gmc::Gmc`] with the context the registers describe
//! ([`crate::gmc::Context`]): the root, `PAGE_TABLE_START_ADDR` (the walk
//! indexes `VA - START`), `PAGE_TABLE_DEPTH` and `PAGE_TABLE_BLOCK_SIZE`.
//! Every depth the 2-bit field holds is walked, as the hardware does:
//! Linux runs VMID0 as a flat table (depth 0,
//! `gfxhub_v3_0_enable_system_domain()`), tinygrad as four levels (depth
//! 3, `AM_GMC.enable_vm_addressing()`), and `amdgpu_gmc_init_pdb0()`
//! parts with depth 1; all on silicon. VMIDs 1–15 are walked the same way
//! from their own registers ([`HubModel::translate_vmid_as`]). It also
//! watches the order Linux programs things in: context 0 enabled before
//! its page-table base, its L1 TLB or its L2 cache is a sticky
//! [`OrderViolation`] every later translation reports. Whether hardware
//! faults or returns the default page for each of these is not public;
//! the model refuses, the strict reading (unconfirmed).
//!
//! A translation that reaches the context and then fails (out of range,
//! or the walk faults) latches `*_L2_PROTECTION_FAULT_STATUS` (`_LO32` on
//! gfx12) and `_ADDR_LO32/HI32` as Linux reads them: the first fault
//! sticks, later ones only set `MORE_FAULTS`, and writing 1 to bit 0 of
//! `*_L2_PROTECTION_FAULT_CNTL` clears them (`gmc_v11_0_process_interrupt()`);
//! the model lets that bit read back as 0 (unconfirmed). Which
//! `PERMISSION_FAULTS`/`WALKER_ERROR` codes hardware reports is not in the
//! headers; the model's choice, documented on [`fault_status`], is a
//! convention, not a fact.
//!
//! The invalidation engines (`*_INVALIDATE_ENG0..17_SEM/REQ/ACK`): a
//! request clears the engine's ACK and the requested VMIDs' ACK bits rise
//! a few ACK reads later ([`ACK_READS`]). On the MMHUB (where Linux's
//! `gmc_v1x_0_use_invalidate_semaphore()` takes the semaphore) a read of
//! `_SEM` acquires it and reads 1, writing 0 releases it. A request
//! without the semaphore held is served and counted
//! ([`InvalidationStats::without_semaphore`]): Linux sends the MMHUB's
//! flushes through MES or the KIQ with no semaphore
//! (`gmc_v11_0_flush_gpu_tlb()` → `amdgpu_gmc_fw_reg_write_reg_wait()`)
//! and relies on their acknowledge. A request with no VMID bit or with
//! reserved bits 31:27 set is refused on every hub (model convention,
//! unconfirmed). A write of bit 25 to
//! `MMVM_L2_BANK_SELECT_RESERVED_CID2` is counted as a private
//! invalidation and the bit reads back clear (unconfirmed).
//!
//! The model walks the tables on every access and caches nothing, so a
//! missing invalidation cannot show up as a stale translation. Instead it
//! is flagged: a write to a context's page-table base marks that VMID
//! stale until an invalidation of it completes, and every VMID0
//! translation while VMID0 is stale counts in [`HubModel::stale_walks`]
//! (it still translates). That is what hardware could serve from a stale
//! TLB; tests assert the bring-up paths never do it.
//!
//! Masks and offsets of the fields are hand-written from the
//! `_sh_mask.h` headers, not the runtime's bitfield structs; register
//! offsets come from the runtime's conformance-checked tables.

use crate::RegisterFile;
use crate::decode::mes_regs::PAGE_NUMBER_HI4;
use crate::dma::Dma;
use crate::gmc::{Access, Context, FaultReason, Format, Gmc, Translation, VmFault};
use barebell::bus::{ALL_ONES, RegisterBus};
use barebell::ip::Generation;
use barebell::ip::hw_id;
use barebell::regs::hub::{GFXHUB_3_0, HubRegs};
use barebell::regs::{IpBases, Reg};
use spin::Mutex;

pub(crate) const ENABLE_L1_TLB: u32 = 0x1;
pub(crate) const ENABLE_L2_CACHE: u32 = 0x1;
pub(crate) const ENABLE_CONTEXT: u32 = 0x1;
pub(crate) const DEPTH_MASK: u32 = 0x6;
pub(crate) const DEPTH_SHIFT: u32 = 1;
/// `PAGE_TABLE_BLOCK_SIZE`: 0x78 on GC 11 / MMHUB 3.0, 0xF0 on GC 12 /
/// MMHUB 4.1.
pub(crate) const BLOCK_SIZE_GFX11: (u32, u32) = (0x78, 3);
pub(crate) const BLOCK_SIZE_GFX12: (u32, u32) = (0xF0, 4);
/// GC 9.4.3's `VM_CONTEXT1_CNTL.PAGE_TABLE_BLOCK_SIZE` (`gc_9_4_3_sh_mask.h`):
/// where gfx11 has it.
pub(crate) const BLOCK_SIZE_GC_9_4_3: (u32, u32) = (0x78, 3);
pub(crate) const ADDR_MASK: u64 = 0x0000_FFFF_FFFF_F000;
/// `*_L2_PROTECTION_FAULT_STATUS(_LO32)` fields; the same positions in all
/// four headers.
pub(crate) const MORE_FAULTS: u32 = 0x1;
pub(crate) const WALKER_ERROR_SHIFT: u32 = 1;
pub(crate) const PERMISSION_FAULTS_SHIFT: u32 = 4;
pub(crate) const MAPPING_ERROR: u32 = 0x100;
pub(crate) const CID_SHIFT: u32 = 9;
pub(crate) const CID_MASK: u32 = 0x3_FE00;
pub(crate) const RW: u32 = 0x4_0000;
/// `VMID` (mask 0xF00000), the same in all four headers.
pub(crate) const VMID_SHIFT: u32 = 20;
pub(crate) const VMID_MASK: u32 = 0xF0_0000;
/// `*_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR`.
pub(crate) const CLEAR_FAULT: u32 = 0x1;
/// `*_L2_PROTECTION_FAULT_ADDR_HI32__LOGICAL_PAGE_ADDR_HI4`.
pub(crate) const ADDR_HI4: u64 = 0xF;
/// `*_INVALIDATE_ENG0_REQ__PER_VMID_INVALIDATE_REQ_MASK`; bits 31:27 are
/// reserved (the last field, `INVALIDATE_4K_PAGES_ONLY`, is bit 26).
pub(crate) const PER_VMID: u32 = 0xFFFF;
pub(crate) const REQ_RESERVED_SHIFT: u32 = 27;
/// `*_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK`.
pub(crate) const PRIVATE_INVALIDATION: u32 = 0x0200_0000;
/// ACK reads after a request before the ACK bits rise.
pub const ACK_READS: u32 = 3;
const ENGINES: usize = 18;

/// The invalidation engines' state and what they saw.
#[derive(Debug, Default)]
struct Engines {
    /// Per engine: VMIDs requested and not yet acknowledged, ACK reads
    /// left until they are, and the ACK bits.
    pending: [(u16, u32, u16); ENGINES],
    sem_held: [bool; ENGINES],
    stats: InvalidationStats,
    /// VMIDs whose page-table base changed since their last completed
    /// invalidation.
    stale: u16,
    stale_walks: u32,
    never_ack: bool,
    never_grant: bool,
    unplugged: bool,
}

/// What the invalidation engines of one hub saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InvalidationStats {
    /// Requests taken (ACK will rise).
    pub accepted: u32,
    /// Requests refused: no VMID bit, or reserved bits.
    pub refused: u32,
    /// Requests served on a semaphore hub (MMHUB) with the semaphore not
    /// held (also in `accepted`): Linux's MES/KIQ flushes.
    pub without_semaphore: u32,
    /// Completed invalidations per VMID.
    pub completed: [u32; 16],
    /// Semaphore acquires and releases.
    pub acquires: u32,
    pub releases: u32,
    /// Bit-25 writes to `*_L2_BANK_SELECT_RESERVED_CID2`.
    pub private_invalidations: u32,
    /// The last request value accepted or refused, per engine.
    pub last_request: [u32; ENGINES],
}

/// Context 0 was enabled before something Linux programs first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderViolation {
    /// `*_CONTEXT0_CNTL.ENABLE_CONTEXT` set while the page-table base
    /// lacked its VALID bit (Linux writes the base first,
    /// `*_init_gart_aperture_regs()`).
    ContextBeforeBase,
    /// ... while the L1 TLB was off (`*_init_tlb_regs()` comes first).
    ContextBeforeL1Tlb,
    /// ... while the L2 cache was off (`*_init_cache_regs()` comes first).
    ContextBeforeL2,
}

/// Why the hub did not translate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubRefusal {
    /// `*MC_VM_MX_L1_TLB_CNTL.ENABLE_L1_TLB` is clear.
    L1TlbDisabled,
    /// `*_L2_CNTL.ENABLE_L2_CACHE` is clear.
    L2CacheDisabled,
    /// `*_CONTEXT0_CNTL.ENABLE_CONTEXT` is clear.
    ContextDisabled { vmid: u8 },
    /// The programming order broke what Linux's order guarantees.
    Order(OrderViolation),
    /// The page-table base lacks its VALID bit.
    InvalidBase { raw: u64 },
    /// `*MC_VM_SYSTEM_APERTURE_LOW_ADDR` above `_HIGH_ADDR` (256 KiB units).
    ApertureInverted { low: u32, high: u32 },
    /// The VA is outside the context's start..=end range (latched as a
    /// fault).
    OutOfRange { va: u64, start: u64, end: u64 },
    /// The walk itself faulted (latched as a fault).
    Fault(VmFault),
}

/// VMID0's context as programmed: what a client's GART access goes
/// through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vmid0 {
    /// Root table (PDB2) address, VALID bit stripped.
    pub root: u64,
    /// First and last byte of the VA range.
    pub start: u64,
    pub end: u64,
    /// The system aperture, first and last byte (256 KiB granules).
    pub fb_start: u64,
    pub fb_end: u64,
    /// `*MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR` as a byte address.
    pub default_page: u64,
    /// `PAGE_TABLE_DEPTH` and `PAGE_TABLE_BLOCK_SIZE` of `*_CONTEXT0_CNTL`.
    pub depth: u8,
    pub block_size: u8,
}

/// One context's registers as programmed (any VMID).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextRegs {
    /// `ENABLE_CONTEXT`.
    pub enabled: bool,
    /// `*_PAGE_TABLE_BASE_ADDR_LO32/HI32` as written (VALID in bit 0).
    pub base: u64,
    /// First and last byte of the VA range.
    pub start: u64,
    pub end: u64,
    pub depth: u8,
    pub block_size: u8,
}

/// The status word the model latches for a failed translation (model
/// convention, unconfirmed): `PERMISSION_FAULTS` bit 0 for an invalid
/// entry, bit 1/2/3 for a missing read/write/execute permission;
/// `WALKER_ERROR` 1 for a table address outside memory, 2 for a broken
/// fragment; `MAPPING_ERROR` for a VA outside the context's range. `RW` is set
/// for writes, `VMID` is 0 (see [`fault_status_vmid`]), `CID` the client's id.
pub fn fault_status(reason: Option<FaultReason>, access: Access, cid: u16) -> u32 {
    fault_status_vmid(reason, access, cid, 0)
}

/// [`fault_status`] for a fault in context `vmid` (the `VMID` field).
pub fn fault_status_vmid(reason: Option<FaultReason>, access: Access, cid: u16, vmid: u8) -> u32 {
    let class = match reason {
        Some(FaultReason::Invalid { .. }) => 0x1 << PERMISSION_FAULTS_SHIFT,
        Some(FaultReason::Permission) => match access {
            Access::Read => 0x2 << PERMISSION_FAULTS_SHIFT,
            Access::Write => 0x4 << PERMISSION_FAULTS_SHIFT,
            Access::Execute => 0x8 << PERMISSION_FAULTS_SHIFT,
        },
        Some(FaultReason::BadTable { .. }) => 1 << WALKER_ERROR_SHIFT,
        Some(FaultReason::FragmentMismatch { .. }) => 2 << WALKER_ERROR_SHIFT,
        // `NotSnooped` is refused after the walk and never latched (it
        // is no hardware fault); listed for completeness.
        Some(FaultReason::OutOfRange | FaultReason::NotSnooped) | None => MAPPING_ERROR,
    };
    let rw = if access == Access::Write { RW } else { 0 };
    class
        | rw
        | ((u32::from(cid) << CID_SHIFT) & CID_MASK)
        | ((u32::from(vmid) << VMID_SHIFT) & VMID_MASK)
}

/// One hub's registers over a register file, at its block's discovered
/// bases.
#[derive(Debug)]
pub struct HubModel {
    regs: RegisterFile,
    bases: IpBases,
    hub: &'static HubRegs,
    order: Mutex<Option<OrderViolation>>,
    engines: Mutex<Engines>,
    interrupt: Mutex<Option<alloc::sync::Arc<InterruptLine>>>,
}

/// One faulting translation, as the hub's UTCL2 reports it to the IH
/// (issue 20): what `gmc_v11_0_process_interrupt()` decodes from the IV
/// entry the IH model writes for it ([`crate::ih`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubFault {
    /// The faulting address (its page is what the entry carries).
    pub va: u64,
    pub vmid: u8,
    pub access: Access,
    /// The UTCL2 client id (`CID`).
    pub cid: u16,
    /// The walk's reason; `None` for a VA outside the context's range.
    pub reason: Option<FaultReason>,
    /// The status word latched (or that would have been, had an earlier
    /// fault not stuck).
    pub status: u32,
}

/// Where the hub's fault interrupts go (the VirtualGpu wires it to the
/// IH model).
pub struct InterruptLine(pub alloc::boxed::Box<dyn Fn(HubFault) + Send + Sync>);

impl core::fmt::Debug for InterruptLine {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("InterruptLine")
    }
}

impl HubModel {
    /// GFXHUB 3.0 (GC 11.0.0) at the discovered GC bases.
    pub fn new(clock: &crate::SimClock, gc: IpBases) -> Self {
        Self::for_hub(clock, gc, &GFXHUB_3_0)
    }

    /// Any of the runtime's hub tables, at the discovered bases of its
    /// block (`hub.hw_id`).
    pub fn for_hub(clock: &crate::SimClock, bases: IpBases, hub: &'static HubRegs) -> Self {
        HubModel {
            regs: RegisterFile::new(clock),
            bases,
            hub,
            order: Mutex::new(None),
            engines: Mutex::new(Engines::default()),
            interrupt: Mutex::new(None),
        }
    }

    /// Sends every fault this hub latches to `line` from now on: the
    /// UTCL2's interrupt to the IH (`gmc_v11_0_process_interrupt()` is
    /// its handler). Without one, faults are only latched.
    pub fn set_interrupt(&self, line: InterruptLine) {
        *self.interrupt.lock() = Some(alloc::sync::Arc::new(line));
    }

    /// The hub table this model serves.
    pub fn hub(&self) -> &'static HubRegs {
        self.hub
    }

    /// The block bases the registers sit at.
    pub fn bases(&self) -> IpBases {
        self.bases
    }

    fn at(&self, r: Reg, dwords: u32) -> Option<usize> {
        Reg {
            offset: r.offset + dwords,
            ..r
        }
        .byte_offset(&self.bases)
    }

    fn get(&self, r: Reg, dwords: u32) -> u32 {
        self.at(r, dwords).map_or(0, |o| self.regs.device_get(o))
    }

    fn set(&self, r: Reg, v: u32) {
        if let Some(o) = self.at(r, 0) {
            self.regs.device_set(o, v);
        }
    }

    fn pair(&self, lo: Reg, hi: Reg) -> u64 {
        u64::from(self.get(hi, 0)) << 32 | u64::from(self.get(lo, 0))
    }

    fn block_size_field(&self) -> (u32, u32) {
        match self.hub.generation {
            Generation::Gfx90a | Generation::Gfx94 => BLOCK_SIZE_GC_9_4_3,
            Generation::Gfx11 => BLOCK_SIZE_GFX11,
            Generation::Gfx12 => BLOCK_SIZE_GFX12,
        }
    }

    /// `(enabled, depth, block_size, end_pfn)` of user context `vmid`
    /// (1..=15), as programmed. Context `n`'s registers are `n - 1`
    /// strides past context 1's: 1 dword for CNTL, 2 for the address
    /// pairs (checked against the offset headers).
    pub fn user_context(&self, vmid: u8) -> (bool, u32, u32, u64) {
        let i = u32::from(vmid.saturating_sub(1));
        let cntl = self.get(self.hub.ctx1_cntl, i);
        let end = u64::from(self.get(self.hub.ctx1_end_hi, 2 * i)) << 32
            | u64::from(self.get(self.hub.ctx1_end_lo, 2 * i));
        let (bs_mask, bs_shift) = self.block_size_field();
        (
            cntl & ENABLE_CONTEXT != 0,
            (cntl & DEPTH_MASK) >> DEPTH_SHIFT,
            (cntl & bs_mask) >> bs_shift,
            end,
        )
    }

    /// Context 0 as programmed, or `None` while it is not enabled.
    pub fn vmid0(&self) -> Option<Vmid0> {
        let h = self.hub;
        if self.get(h.ctx0_cntl, 0) & ENABLE_CONTEXT == 0 {
            return None;
        }
        let c = self.context_regs(0);
        Some(Vmid0 {
            root: c.base & ADDR_MASK,
            start: c.start,
            end: c.end,
            fb_start: u64::from(self.get(h.aperture_low, 0)) << 18,
            fb_end: u64::from(self.get(h.aperture_high, 0)) << 18 | 0x3_FFFF,
            default_page: self.pair(h.default_addr_lsb, h.default_addr_msb) << 12,
            depth: c.depth,
            block_size: c.block_size,
        })
    }

    /// Context `vmid`'s registers (0..=15) as programmed. Context `n >= 1`
    /// sits `n - 1` strides past context 1 (`ctx_distance` dwords for
    /// CNTL, `ctx_addr_distance` for the address pairs, as
    /// `*_setup_vmid_config()` steps them; checked against the offset
    /// headers); HI32 is the dword after each LO32.
    pub fn context_regs(&self, vmid: u8) -> ContextRegs {
        let h = self.hub;
        let (cntl, base, start, end) = if vmid == 0 {
            (
                self.get(h.ctx0_cntl, 0),
                self.pair(h.ctx0_base_lo, h.ctx0_base_hi),
                self.pair(h.ctx0_start_lo, h.ctx0_start_hi),
                self.pair(h.ctx0_end_lo, h.ctx0_end_hi),
            )
        } else {
            let i = u32::from(vmid.min(15) - 1);
            let a = i * h.ctx_addr_distance();
            let pair = |lo: Reg| u64::from(self.get(lo, a + 1)) << 32 | u64::from(self.get(lo, a));
            (
                self.get(h.ctx1_cntl, i * h.ctx_distance()),
                pair(h.ctx1_base_lo),
                pair(h.ctx1_start_lo),
                pair(h.ctx1_end_lo),
            )
        };
        let (bs_mask, bs_shift) = self.block_size_field();
        ContextRegs {
            enabled: cntl & ENABLE_CONTEXT != 0,
            base,
            // START/END hold page numbers; END names the last page.
            start: start << 12,
            end: end << 12 | 0xFFF,
            depth: ((cntl & DEPTH_MASK) >> DEPTH_SHIFT) as u8,
            block_size: ((cntl & bs_mask) >> bs_shift) as u8,
        }
    }

    /// Programs user context `vmid` (1..=15) from the device side, as the
    /// MES firmware does for the VMID it assigns a process
    /// (`mes_v11_0_add_hw_queue()` hands it `page_table_base_addr`,
    /// `process_va_start/end` and `vm_context_cntl`; the firmware writes
    /// them into the context): CNTL, the page-table base (VALID included,
    /// as sent), and START/END as page numbers. The HI32 halves of START
    /// and END keep only `LOGICAL_PAGE_NUMBER_HI4` (the register's field,
    /// [`crate::decode::mes_regs::PAGE_NUMBER_HI4`]). Not counted as host accesses; the VMID is not
    /// marked stale (MES invalidates what it programs; how is not public).
    /// Returns false for VMID 0 or past 15.
    pub fn program_context(
        &self,
        vmid: u8,
        cntl: u32,
        base: u64,
        start_page: u64,
        end_page: u64,
    ) -> bool {
        if !(1..=15).contains(&vmid) {
            return false;
        }
        let h = self.hub;
        let i = u32::from(vmid - 1);
        let a = i * h.ctx_addr_distance();
        let put = |r: Reg, dwords: u32, v: u32| {
            if let Some(o) = self.at(r, dwords) {
                self.regs.device_set(o, v);
            }
        };
        put(h.ctx1_cntl, i * h.ctx_distance(), cntl);
        put(h.ctx1_base_lo, a, base as u32);
        put(h.ctx1_base_lo, a + 1, (base >> 32) as u32);
        put(h.ctx1_start_lo, a, start_page as u32);
        put(
            h.ctx1_start_lo,
            a + 1,
            (start_page >> 32) as u32 & PAGE_NUMBER_HI4,
        );
        put(h.ctx1_end_lo, a, end_page as u32);
        put(
            h.ctx1_end_lo,
            a + 1,
            (end_page >> 32) as u32 & PAGE_NUMBER_HI4,
        );
        true
    }

    /// The walk context of `vmid` as its registers describe it.
    pub fn context(&self, vmid: u8) -> Context {
        let c = self.context_regs(vmid);
        Context {
            root: c.base & ADDR_MASK,
            start: c.start,
            end: c.end,
            depth: c.depth,
            block_size: c.block_size,
            format: match self.hub.generation {
                // gfx9 puts AMDGPU_PDE_PTE at bit 54 as gfx11 does
                // (`amdgpu_vm.h`; [`Format::Gfx11`] covers gfx9–gfx11).
                Generation::Gfx90a | Generation::Gfx94 | Generation::Gfx11 => Format::Gfx11,
                Generation::Gfx12 => Format::Gfx12,
            },
        }
    }

    /// `*MC_VM_FB_OFFSET` as a byte address: the physical address of VRAM
    /// offset 0, what every VRAM address in a PDE, a PTE or a context
    /// base is relative to (`mmhub_v3_0_get_mc_fb_offset()` shifts the
    /// register by 24). 0 if the hub's table lacks the register.
    pub fn fb_offset(&self) -> u64 {
        self.hub
            .all
            .iter()
            .find(|r| r.name.ends_with("MC_VM_FB_OFFSET"))
            .map_or(0, |r| u64::from(self.get(*r, 0)) << 24)
    }

    /// A hub register as the device holds it (not counted as an access).
    pub fn device_reg(&self, r: Reg) -> u32 {
        self.get(r, 0)
    }

    /// Sets a hub register from the device side (not counted as an
    /// access, no write side effects).
    pub fn set_device_reg(&self, r: Reg, value: u32) {
        self.set(r, value)
    }

    /// Whether requests need the engine's semaphore: the MMHUB, where
    /// `gmc_v11_0_use_invalidate_semaphore()` / v12 take it.
    pub fn semaphore_hub(&self) -> bool {
        self.hub.hw_id == hw_id::MMHUB
    }

    /// What the invalidation engines saw so far.
    pub fn invalidations(&self) -> InvalidationStats {
        self.engines.lock().stats
    }

    /// Whether `engine`'s semaphore is held.
    pub fn semaphore_held(&self, engine: usize) -> bool {
        self.engines
            .lock()
            .sem_held
            .get(engine)
            .copied()
            .unwrap_or(false)
    }

    /// VMID0 translations made while VMID0's page-table base had changed
    /// since its last invalidation.
    pub fn stale_walks(&self) -> u32 {
        self.engines.lock().stale_walks
    }

    /// Whether `vmid`'s page-table base changed since its last completed
    /// invalidation.
    pub fn stale(&self, vmid: u8) -> bool {
        vmid < 16 && self.engines.lock().stale & (1 << vmid) != 0
    }

    /// Makes every engine hold its ACK bits down forever.
    pub fn never_ack(&self) {
        self.engines.lock().never_ack = true;
    }

    /// Makes every semaphore read 0 forever.
    pub fn never_grant_semaphore(&self) {
        self.engines.lock().never_grant = true;
    }

    /// A mode-1 reset: every register back to its power-on value (0: no
    /// public default header for the hub blocks, *model value*), so every
    /// context is disabled and VMID0 has no table; the invalidation
    /// engines forget pending requests and held semaphores. The fault
    /// switches ([`HubModel::never_ack`], ...) stay set. What the IFWI
    /// programs again after the reset (the FB location) is the
    /// [`crate::VirtualGpu`]'s to restore.
    pub fn reset(&self) {
        self.regs.clear();
        *self.order.lock() = None;
        let mut e = self.engines.lock();
        let (never_ack, never_grant, unplugged, stats) =
            (e.never_ack, e.never_grant, e.unplugged, e.stats);
        *e = Engines {
            never_ack,
            never_grant,
            unplugged,
            stats,
            ..Engines::default()
        };
    }

    /// The hub's registers read as all-ones from now on.
    pub fn unplug(&self) {
        self.engines.lock().unplugged = true;
        self.regs.unplug();
    }

    /// Engine whose `reg` (engine-0 register of the table) is at
    /// `byte_offset`.
    fn engine_at(&self, reg: Reg, byte_offset: usize) -> Option<usize> {
        let base = self.at(reg, 0)?;
        let stride = self.hub.eng_distance() as usize * 4;
        let off = byte_offset.checked_sub(base)?;
        (stride != 0 && off % stride == 0 && off / stride < ENGINES).then_some(off / stride)
    }

    /// VMID whose page-table base (LO32 or HI32) is at `byte_offset`.
    fn base_vmid(&self, byte_offset: usize) -> Option<u8> {
        let h = self.hub;
        if self.at(h.ctx0_base_lo, 0) == Some(byte_offset)
            || self.at(h.ctx0_base_hi, 0) == Some(byte_offset)
        {
            return Some(0);
        }
        let d = h.ctx_addr_distance();
        (0..15u32).find_map(|i| {
            (self.at(h.ctx1_base_lo, i * d) == Some(byte_offset)
                || self.at(h.ctx1_base_lo, i * d + 1) == Some(byte_offset))
            .then_some(i as u8 + 1)
        })
    }

    fn on_read(&self, byte_offset: usize) {
        let h = self.hub;
        if let Some(e) = self.engine_at(h.inv_eng0_sem, byte_offset) {
            let mut s = self.engines.lock();
            if !s.sem_held[e] && !s.never_grant {
                s.sem_held[e] = true;
                s.stats.acquires += 1;
            }
            let v = u32::from(s.sem_held[e]);
            drop(s);
            self.regs.device_set(byte_offset, v);
        }
        if let Some(e) = self.engine_at(h.inv_eng0_ack, byte_offset) {
            let mut s = self.engines.lock();
            let (mask, left, ack) = s.pending[e];
            if mask != 0 && !s.never_ack {
                if left > 0 {
                    s.pending[e].1 = left - 1;
                } else {
                    for v in 0..16 {
                        if mask & (1 << v) != 0 {
                            s.stats.completed[v] += 1;
                        }
                    }
                    s.stale &= !mask;
                    s.pending[e] = (0, 0, ack | mask);
                }
            }
            let v = u32::from(s.pending[e].2);
            drop(s);
            self.regs.device_set(byte_offset, v);
        }
    }

    fn on_engine_write(&self, byte_offset: usize, value: u32) {
        let h = self.hub;
        if let Some(e) = self.engine_at(h.inv_eng0_req, byte_offset) {
            let mut s = self.engines.lock();
            s.stats.last_request[e] = value;
            let mask = (value & PER_VMID) as u16;
            let no_sem = self.semaphore_hub() && !s.sem_held[e];
            let malformed = mask == 0 || value >> REQ_RESERVED_SHIFT != 0;
            if malformed {
                s.stats.refused += 1;
                s.pending[e] = (0, 0, 0);
            } else {
                s.stats.accepted += 1;
                s.stats.without_semaphore += u32::from(no_sem);
                s.pending[e] = (mask, ACK_READS, 0);
            }
            drop(s);
            if let Some(ack) = self.at(h.inv_eng0_ack, e as u32 * h.eng_distance()) {
                self.regs.device_set(ack, 0);
            }
        }
        if let Some(e) = self.engine_at(h.inv_eng0_sem, byte_offset) {
            let mut s = self.engines.lock();
            if value & 1 == 0 && s.sem_held[e] {
                s.sem_held[e] = false;
                s.stats.releases += 1;
            }
            let v = u32::from(s.sem_held[e]);
            drop(s);
            self.regs.device_set(byte_offset, v);
        }
        if let Some(cid2) = h.l2_bank_select_reserved_cid2
            && self.at(cid2, 0) == Some(byte_offset)
            && value & PRIVATE_INVALIDATION != 0
        {
            self.engines.lock().stats.private_invalidations += 1;
            self.regs
                .device_set(byte_offset, value & !PRIVATE_INVALIDATION);
        }
        if let Some(vmid) = self.base_vmid(byte_offset) {
            self.engines.lock().stale |= 1 << vmid;
        }
    }

    /// The order violation recorded so far, if any.
    pub fn order_violation(&self) -> Option<OrderViolation> {
        *self.order.lock()
    }

    /// Translates `va` through VMID0 for client id 0, walking the tables in
    /// `dma` from the root the context-0 registers name.
    pub fn translate(&self, dma: &Dma, va: u64, access: Access) -> Result<Translation, HubRefusal> {
        self.translate_as(dma, va, access, 0)
    }

    /// [`HubModel::translate`] for UTCL2 client `cid` (what a latched
    /// fault's `CID` names, e.g. 6 = MP0, the PSP, on MMHUB 3.0.0 and
    /// 4.1.0 per `mmhub_client_ids_v3_0_0`/`_v4_1_0`).
    pub fn translate_as(
        &self,
        dma: &Dma,
        va: u64,
        access: Access,
        cid: u16,
    ) -> Result<Translation, HubRefusal> {
        self.translate_vmid_as(dma, 0, va, access, cid)
    }

    /// Translates `va` through context `vmid` (0..=15) for client `cid`,
    /// walking the tables in `dma` (VRAM by offset; table addresses are
    /// physical, [`HubModel::fb_offset`] apart) from the root, start,
    /// depth and block size that context's registers hold. A VRAM page's
    /// `pa` is physical too. VMID0 also needs its system
    /// aperture in order (its only user here is the MC, which decodes the
    /// aperture first).
    pub fn translate_vmid_as(
        &self,
        dma: &Dma,
        vmid: u8,
        va: u64,
        access: Access,
        cid: u16,
    ) -> Result<Translation, HubRefusal> {
        let h = self.hub;
        if let Some(v) = self.order_violation() {
            return Err(HubRefusal::Order(v));
        }
        if self.get(h.l1_tlb_cntl, 0) & ENABLE_L1_TLB == 0 {
            return Err(HubRefusal::L1TlbDisabled);
        }
        if self.get(h.l2_cntl, 0) & ENABLE_L2_CACHE == 0 {
            return Err(HubRefusal::L2CacheDisabled);
        }
        let vmid = vmid.min(15);
        let regs = self.context_regs(vmid);
        if !regs.enabled {
            return Err(HubRefusal::ContextDisabled { vmid });
        }
        if regs.base & 1 == 0 {
            return Err(HubRefusal::InvalidBase { raw: regs.base });
        }
        if vmid == 0 {
            let (low, high) = (self.get(h.aperture_low, 0), self.get(h.aperture_high, 0));
            if low > high {
                return Err(HubRefusal::ApertureInverted { low, high });
            }
        }
        {
            let mut s = self.engines.lock();
            if vmid == 0 && s.stale & 1 != 0 {
                s.stale_walks += 1;
            }
        }
        let (start, end) = (regs.start, regs.end);
        let fault = |reason: Option<FaultReason>| {
            let status = fault_status_vmid(reason, access, cid, vmid);
            self.latch(va, status);
            self.interrupt(HubFault {
                va,
                vmid,
                access,
                cid,
                reason,
                status,
            });
        };
        if va < start || va > end {
            fault(None);
            return Err(HubRefusal::OutOfRange { va, start, end });
        }
        Gmc::with_context(dma, self.context(vmid))
            .with_vram_base(self.fb_offset())
            .translate(va, access)
            .map_err(|f| {
                fault(Some(f.reason));
                HubRefusal::Fault(f)
            })
    }

    /// Raises the fault's interrupt, if a line is connected. The line is
    /// called with no hub lock held (the IH's own write goes through a
    /// hub).
    fn interrupt(&self, f: HubFault) {
        let line = self.interrupt.lock().clone();
        if let Some(l) = line {
            (l.0)(f);
        }
    }

    /// Records a fault: the first one sticks, later ones set MORE_FAULTS.
    fn latch(&self, va: u64, status: u32) {
        let h = self.hub;
        let old = self.get(h.fault_status, 0);
        if old != 0 {
            self.set(h.fault_status, old | MORE_FAULTS);
            return;
        }
        let page = va >> 12;
        self.set(h.fault_status, status);
        self.set(h.fault_addr_lo, page as u32);
        self.set(h.fault_addr_hi, ((page >> 32) & ADDR_HI4) as u32);
    }

    fn on_write(&self, byte_offset: usize, value: u32) {
        let h = self.hub;
        if self.at(h.fault_cntl, 0) == Some(byte_offset) && value & CLEAR_FAULT != 0 {
            self.set(h.fault_status, 0);
            self.set(h.fault_addr_lo, 0);
            self.set(h.fault_addr_hi, 0);
            self.set(h.fault_cntl, value & !CLEAR_FAULT);
        }
        if self.at(h.ctx0_cntl, 0) == Some(byte_offset) && value & ENABLE_CONTEXT != 0 {
            let violation = if self.get(h.ctx0_base_lo, 0) & 1 == 0 {
                Some(OrderViolation::ContextBeforeBase)
            } else if self.get(h.l1_tlb_cntl, 0) & ENABLE_L1_TLB == 0 {
                Some(OrderViolation::ContextBeforeL1Tlb)
            } else if self.get(h.l2_cntl, 0) & ENABLE_L2_CACHE == 0 {
                Some(OrderViolation::ContextBeforeL2)
            } else {
                None
            };
            let mut order = self.order.lock();
            if order.is_none() {
                *order = violation;
            }
        }
    }
}

impl RegisterBus for HubModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        let v = self.regs.read32(byte_offset);
        if v == ALL_ONES {
            return v;
        }
        self.on_read(byte_offset);
        self.regs.device_get(byte_offset)
    }
    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.write32(byte_offset, value);
        if self.engines.lock().unplugged {
            return;
        }
        self.on_write(byte_offset, value);
        self.on_engine_write(byte_offset, value);
    }
}
