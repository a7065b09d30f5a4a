//! A VM hub (GFXHUB 3.0, MMHUB 3.0.0, GFXHUB 12.0 or MMHUB 4.1.0) as a
//! translation gate in front of the GMC walk, with the L2
//! protection-fault registers.
//!
//! The model keeps the hub registers the runtime programs, at the hub's
//! block bases, and for each access through VMID0 checks what the VM L2
//! would need before it walks anything: the L1 TLB and the L2 cache
//! enabled, context 0 enabled with a four-level depth and 4 KiB blocks, a
//! page-table base with its VALID bit, a system aperture whose low bound
//! is not above its high bound, and the VA inside the context's
//! start/end range. Only then does it hand the walk to
//! [`crate::gmc::Gmc`] over the root the registers name. It also watches
//! the order Linux programs things in: context 0 enabled before its
//! page-table base, its L1 TLB or its L2 cache is a sticky
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
//! Masks and offsets of the fields are hand-written from the
//! `_sh_mask.h` headers, not the runtime's bitfield structs; register
//! offsets come from the runtime's conformance-checked tables.

use crate::RegisterFile;
use crate::dma::Dma;
use crate::gmc::{Access, FaultReason, Gmc, Translation, VmFault};
use barebell::bus::RegisterBus;
use barebell::hub::{GFXHUB_3_0, Generation, HubRegs};
use barebell::regs::{IpBases, Reg};
use spin::Mutex;

const ENABLE_L1_TLB: u32 = 0x1;
const ENABLE_L2_CACHE: u32 = 0x1;
const ENABLE_CONTEXT: u32 = 0x1;
const DEPTH_MASK: u32 = 0x6;
const DEPTH_SHIFT: u32 = 1;
/// `PAGE_TABLE_BLOCK_SIZE`: 0x78 on GC 11 / MMHUB 3.0, 0xF0 on GC 12 /
/// MMHUB 4.1.
const BLOCK_SIZE_GFX11: (u32, u32) = (0x78, 3);
const BLOCK_SIZE_GFX12: (u32, u32) = (0xF0, 4);
const ADDR_MASK: u64 = 0x0000_FFFF_FFFF_F000;
/// `*_L2_PROTECTION_FAULT_STATUS(_LO32)` fields; the same positions in all
/// four headers.
const MORE_FAULTS: u32 = 0x1;
const WALKER_ERROR_SHIFT: u32 = 1;
const PERMISSION_FAULTS_SHIFT: u32 = 4;
const MAPPING_ERROR: u32 = 0x100;
const CID_SHIFT: u32 = 9;
const CID_MASK: u32 = 0x3_FE00;
const RW: u32 = 0x4_0000;
/// `*_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR`.
const CLEAR_FAULT: u32 = 0x1;
/// `*_L2_PROTECTION_FAULT_ADDR_HI32__LOGICAL_PAGE_ADDR_HI4`.
const ADDR_HI4: u64 = 0xF;

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
    /// The model walks four levels (depth 3) of 4 KiB blocks only.
    UnsupportedLayout { depth: u32, block_size: u32 },
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
}

/// The status word the model latches for a failed translation (model
/// convention, unconfirmed): `PERMISSION_FAULTS` bit 0 for an invalid
/// entry, bit 1/2/3 for a missing read/write/execute permission;
/// `WALKER_ERROR` 1 for a table address outside memory, 2 for a broken
/// fragment; `MAPPING_ERROR` for a VA outside the context's range. `RW` is set
/// for writes, `VMID` is 0, `CID` the client's id.
pub fn fault_status(reason: Option<FaultReason>, access: Access, cid: u16) -> u32 {
    let class = match reason {
        Some(FaultReason::Invalid { .. }) => 0x1 << PERMISSION_FAULTS_SHIFT,
        Some(FaultReason::Permission) => match access {
            Access::Read => 0x2 << PERMISSION_FAULTS_SHIFT,
            Access::Write => 0x4 << PERMISSION_FAULTS_SHIFT,
            Access::Execute => 0x8 << PERMISSION_FAULTS_SHIFT,
        },
        Some(FaultReason::BadTable { .. }) => 1 << WALKER_ERROR_SHIFT,
        Some(FaultReason::FragmentMismatch { .. }) => 2 << WALKER_ERROR_SHIFT,
        None => MAPPING_ERROR,
    };
    let rw = if access == Access::Write { RW } else { 0 };
    class | rw | ((u32::from(cid) << CID_SHIFT) & CID_MASK)
}

/// One hub's registers over a register file, at its block's discovered
/// bases.
#[derive(Debug)]
pub struct HubModel<'c> {
    regs: RegisterFile<'c>,
    bases: IpBases,
    hub: &'static HubRegs,
    order: Mutex<Option<OrderViolation>>,
}

impl<'c> HubModel<'c> {
    /// GFXHUB 3.0 (GC 11.0.0) at the discovered GC bases.
    pub fn new(clock: &'c crate::SimClock, gc: IpBases) -> Self {
        Self::for_hub(clock, gc, &GFXHUB_3_0)
    }

    /// Any of the runtime's hub tables, at the discovered bases of its
    /// block (`hub.hw_id`).
    pub fn for_hub(clock: &'c crate::SimClock, bases: IpBases, hub: &'static HubRegs) -> Self {
        HubModel {
            regs: RegisterFile::new(clock),
            bases,
            hub,
            order: Mutex::new(None),
        }
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
        let raw = self.pair(h.ctx0_base_lo, h.ctx0_base_hi);
        Some(Vmid0 {
            root: raw & ADDR_MASK,
            start: self.pair(h.ctx0_start_lo, h.ctx0_start_hi) << 12,
            end: self.pair(h.ctx0_end_lo, h.ctx0_end_hi) << 12 | 0xFFF,
            fb_start: u64::from(self.get(h.aperture_low, 0)) << 18,
            fb_end: u64::from(self.get(h.aperture_high, 0)) << 18 | 0x3_FFFF,
            default_page: self.pair(h.default_addr_lsb, h.default_addr_msb) << 12,
        })
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
        let cntl = self.get(h.ctx0_cntl, 0);
        if cntl & ENABLE_CONTEXT == 0 {
            return Err(HubRefusal::ContextDisabled { vmid: 0 });
        }
        let depth = (cntl & DEPTH_MASK) >> DEPTH_SHIFT;
        let (bs_mask, bs_shift) = self.block_size_field();
        let block_size = (cntl & bs_mask) >> bs_shift;
        if depth != 3 || block_size != 0 {
            return Err(HubRefusal::UnsupportedLayout { depth, block_size });
        }
        let raw = self.pair(h.ctx0_base_lo, h.ctx0_base_hi);
        if raw & 1 == 0 {
            return Err(HubRefusal::InvalidBase { raw });
        }
        let (low, high) = (self.get(h.aperture_low, 0), self.get(h.aperture_high, 0));
        if low > high {
            return Err(HubRefusal::ApertureInverted { low, high });
        }
        let start = self.pair(h.ctx0_start_lo, h.ctx0_start_hi) << 12;
        let end = self.pair(h.ctx0_end_lo, h.ctx0_end_hi) << 12 | 0xFFF;
        if va < start || va > end {
            self.latch(va, fault_status(None, access, cid));
            return Err(HubRefusal::OutOfRange { va, start, end });
        }
        Gmc::new(dma, raw & ADDR_MASK, h.generation == Generation::Gfx12)
            .translate(va, access)
            .map_err(|f| {
                self.latch(va, fault_status(Some(f.reason), access, cid));
                HubRefusal::Fault(f)
            })
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
        // VMID 0: the model translates context 0 only.
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

impl RegisterBus for HubModel<'_> {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.regs.read32(byte_offset)
    }
    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.write32(byte_offset, value);
        self.on_write(byte_offset, value);
    }
}
