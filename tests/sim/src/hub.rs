//! GFXHUB (GC 11.0.0) as a translation gate in front of the GMC walk.
//!
//! The model keeps the hub registers the runtime programs and, for each
//! access through VMID0, checks what the VM L2 would need before it walks
//! anything: the L1 TLB and the L2 cache enabled, context 0 enabled with
//! a four-level depth and 4 KiB blocks, a page-table base with its VALID
//! bit, and the VA inside the context's start/end range. Only then does
//! it hand the walk to [`crate::gmc::Gmc`] over the root the registers
//! name. Whether real hardware faults or silently returns the default
//! page for each of these is not public; the model refuses, which is the
//! strict reading (unconfirmed).
//!
//! Masks and offsets are hand-written from `gc_11_0_0_sh_mask.h`, not the
//! runtime's bitfield structs.

use crate::RegisterFile;
use crate::dma::Dma;
use crate::gmc::{Access, Gmc, Translation, VmFault};
use barebell::bus::RegisterBus;
use barebell::regs::IpBases;
use barebell::regs::gc_11_0_0 as gc;

const ENABLE_L1_TLB: u32 = 0x1;
const ENABLE_L2_CACHE: u32 = 0x1;
const ENABLE_CONTEXT: u32 = 0x1;
const DEPTH_MASK: u32 = 0x6;
const DEPTH_SHIFT: u32 = 1;
const BLOCK_SIZE_MASK: u32 = 0x78;
const ADDR_MASK: u64 = 0x0000_FFFF_FFFF_F000;

/// Why the hub did not translate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubRefusal {
    L1TlbDisabled,
    L2CacheDisabled,
    ContextDisabled {
        vmid: u8,
    },
    /// The model walks four levels (depth 3) of 4 KiB blocks only.
    UnsupportedLayout {
        depth: u32,
        block_size: u32,
    },
    /// The page-table base lacks its VALID bit.
    InvalidBase {
        raw: u64,
    },
    /// The VA is outside the context's start..=end range.
    OutOfRange {
        va: u64,
        start: u64,
        end: u64,
    },
    /// The walk itself faulted.
    Fault(VmFault),
}

/// The hub registers over a register file, at the discovered GC bases.
#[derive(Debug)]
pub struct HubModel<'c> {
    regs: RegisterFile<'c>,
    gc: IpBases,
}

impl<'c> HubModel<'c> {
    pub fn new(clock: &'c crate::SimClock, gc: IpBases) -> Self {
        HubModel {
            regs: RegisterFile::new(clock),
            gc,
        }
    }

    fn get(&self, r: barebell::regs::Reg, dwords: u32) -> u32 {
        let r = barebell::regs::Reg {
            offset: r.offset + dwords,
            ..r
        };
        r.byte_offset(&self.gc)
            .map_or(0, |o| self.regs.device_get(o))
    }

    fn pair(&self, lo: barebell::regs::Reg, hi: barebell::regs::Reg) -> u64 {
        u64::from(self.get(hi, 0)) << 32 | u64::from(self.get(lo, 0))
    }

    /// `(enabled, depth, block_size, end_pfn)` of user context `vmid`
    /// (1..=15), as programmed. Context `n`'s registers are `n - 1`
    /// strides past context 1's: 1 dword for CNTL, 2 for the address
    /// pairs (`gc_11_0_0_offset.h`).
    pub fn user_context(&self, vmid: u8) -> (bool, u32, u32, u64) {
        let i = u32::from(vmid.saturating_sub(1));
        let cntl = self.get(gc::GCVM_CONTEXT1_CNTL, i);
        let end = u64::from(self.get(gc::GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32, 2 * i)) << 32
            | u64::from(self.get(gc::GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32, 2 * i));
        (
            cntl & ENABLE_CONTEXT != 0,
            (cntl & DEPTH_MASK) >> DEPTH_SHIFT,
            (cntl & BLOCK_SIZE_MASK) >> 3,
            end,
        )
    }

    /// Translates `va` through VMID0, walking the tables in `dma` from the
    /// root the context-0 registers name.
    pub fn translate(&self, dma: &Dma, va: u64, access: Access) -> Result<Translation, HubRefusal> {
        if self.get(gc::GCMC_VM_MX_L1_TLB_CNTL, 0) & ENABLE_L1_TLB == 0 {
            return Err(HubRefusal::L1TlbDisabled);
        }
        if self.get(gc::GCVM_L2_CNTL, 0) & ENABLE_L2_CACHE == 0 {
            return Err(HubRefusal::L2CacheDisabled);
        }
        let cntl = self.get(gc::GCVM_CONTEXT0_CNTL, 0);
        if cntl & ENABLE_CONTEXT == 0 {
            return Err(HubRefusal::ContextDisabled { vmid: 0 });
        }
        let depth = (cntl & DEPTH_MASK) >> DEPTH_SHIFT;
        let block_size = (cntl & BLOCK_SIZE_MASK) >> 3;
        if depth != 3 || block_size != 0 {
            return Err(HubRefusal::UnsupportedLayout { depth, block_size });
        }
        let raw = self.pair(
            gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
            gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
        );
        if raw & 1 == 0 {
            return Err(HubRefusal::InvalidBase { raw });
        }
        let start = self.pair(
            gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
            gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
        ) << 12;
        let end = self.pair(
            gc::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
            gc::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
        ) << 12
            | 0xFFF;
        if va < start || va > end {
            return Err(HubRefusal::OutOfRange { va, start, end });
        }
        Gmc::new(dma, raw & ADDR_MASK, false)
            .translate(va, access)
            .map_err(HubRefusal::Fault)
    }
}

impl RegisterBus for HubModel<'_> {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.regs.read32(byte_offset)
    }
    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.write32(byte_offset, value)
    }
}
