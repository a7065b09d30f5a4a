//! Putting a compute queue on the hardware: one trait, several mappers.
//!
//! A queue is memory (ring, `amd_queue_t`, MQD page, EOP buffer) plus a
//! doorbell. "Mapping" it means making one hardware queue slot (HQD) on a
//! MEC pipe load that MQD and listen on that doorbell. There are three ways
//! to get there, which users can compare:
//! - [`crate::mes::Mes`]: ask the MES scheduler (ADD_QUEUE), as KFD does on
//!   gfx11 and later;
//! - [`crate::hqd::DirectHqd`]: write the HQD registers ourselves, as
//!   tinygrad's AM driver does;
//! - [`crate::kiq::Kiq`]: PM4 MAP_QUEUES on the KIQ ring, the HWS style.
//!
//! Doorbells are allocated here, not by the mappers' back ends, so that a
//! collision is refused before anything reaches the device.

use crate::bus::{RegisterBus, WaitError};
use crate::mqd::{AqlMqdParams, EOP_BYTES, EopBuffer, Generation, MqdError, MqdPage};
use crate::queue::QueueMemory;
use crate::regs::{IpBases, Reg};
use barebell_facts::Fact;

/// `AMDGPU_NAVI10_DOORBELL_*` (`amdgpu_doorbell.h`): the 64-bit doorbell
/// indices Linux assigns on gfx10 and later. barebell keeps the same plan
/// so a trace of our bring-up reads like one of amdgpu's.
pub mod doorbell_index {
    pub const KIQ: u32 = 0x000;
    pub const MEC_RING0: u32 = 0x003;
    pub const MES_RING0: u32 = 0x00B;
    pub const MES_RING1: u32 = 0x00C;
    pub const USERQUEUE_START: u32 = 0x00D;
    pub const USERQUEUE_END: u32 = 0x08A;
}

/// Doorbells the MEC range registers can cover: `DOORBELL_RANGE_LOWER/UPPER`
/// hold byte offsets in bits 11:2 (mask 0xFFC), i.e. the first 4 KiB of
/// the doorbell BAR, 512 64-bit doorbells.
pub const MEC_DOORBELLS: u32 = 512;
/// `CP_MEC_DOORBELL_RANGE_LOWER__DOORBELL_RANGE_LOWER_MASK` (same for UPPER).
pub const DOORBELL_RANGE_MASK: u32 = 0xFFC;

/// Why a doorbell could not be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoorbellAllocError {
    /// Outside the range the MEC listens on (`lower..=upper`).
    OutOfRange { index: u32, lower: u32, upper: u32 },
    /// Another queue has it.
    InUse { index: u32 },
    /// Every doorbell of the range is taken.
    Exhausted { lower: u32, upper: u32 },
}

impl core::fmt::Display for DoorbellAllocError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            DoorbellAllocError::OutOfRange {
                index,
                lower,
                upper,
            } => write!(
                f,
                "doorbell {index:#x} is outside the MEC doorbell range {lower:#x}..={upper:#x}"
            ),
            DoorbellAllocError::InUse { index } => {
                write!(f, "doorbell {index:#x} is already used by another queue")
            }
            DoorbellAllocError::Exhausted { lower, upper } => {
                write!(f, "no free doorbell in {lower:#x}..={upper:#x}")
            }
        }
    }
}

/// The MEC doorbell range and which of its doorbells are taken. Indices are
/// 64-bit doorbell slots (the BAR2 byte offset divided by 8).
#[derive(Debug, Clone)]
pub struct Doorbells {
    lower: u32,
    upper: u32,
    used: [u64; (MEC_DOORBELLS / 64) as usize],
}

impl Doorbells {
    /// The range Linux programs (`gfx_v11_0_kiq_init_register()`): from the
    /// KIQ's doorbell to the last user-queue doorbell.
    pub const fn linux_default() -> Self {
        Doorbells {
            lower: doorbell_index::KIQ,
            upper: doorbell_index::USERQUEUE_END,
            used: [0; (MEC_DOORBELLS / 64) as usize],
        }
    }

    /// A range `lower..=upper`; both must lie below [`MEC_DOORBELLS`].
    pub fn new(lower: u32, upper: u32) -> Result<Self, DoorbellAllocError> {
        if lower > upper || upper >= MEC_DOORBELLS {
            return Err(DoorbellAllocError::OutOfRange {
                index: upper,
                lower: 0,
                upper: MEC_DOORBELLS - 1,
            });
        }
        Ok(Doorbells {
            lower,
            upper,
            used: [0; (MEC_DOORBELLS / 64) as usize],
        })
    }

    pub fn range(&self) -> (u32, u32) {
        (self.lower, self.upper)
    }

    fn bit(&self, index: u32) -> Result<(usize, u64), DoorbellAllocError> {
        if index < self.lower || index > self.upper {
            return Err(DoorbellAllocError::OutOfRange {
                index,
                lower: self.lower,
                upper: self.upper,
            });
        }
        Ok(((index / 64) as usize, 1u64 << (index % 64)))
    }

    pub fn is_used(&self, index: u32) -> bool {
        match self.bit(index) {
            Ok((w, b)) => self.used.get(w).is_some_and(|x| x & b != 0),
            Err(_) => false,
        }
    }

    /// Takes `index`, or says why not.
    pub fn claim(&mut self, index: u32) -> Result<(), DoorbellAllocError> {
        let (w, b) = self.bit(index)?;
        let word = self.used.get_mut(w).ok_or(DoorbellAllocError::OutOfRange {
            index,
            lower: self.lower,
            upper: self.upper,
        })?;
        if *word & b != 0 {
            return Err(DoorbellAllocError::InUse { index });
        }
        *word |= b;
        Ok(())
    }

    /// Takes the lowest free doorbell in `from..=self.upper`.
    pub fn allocate_from(&mut self, from: u32) -> Result<u32, DoorbellAllocError> {
        let mut i = from.max(self.lower);
        while i <= self.upper {
            if self.claim(i).is_ok() {
                return Ok(i);
            }
            i += 1;
        }
        Err(DoorbellAllocError::Exhausted {
            lower: self.lower,
            upper: self.upper,
        })
    }

    /// Takes the lowest free user-queue doorbell.
    pub fn allocate(&mut self) -> Result<u32, DoorbellAllocError> {
        self.allocate_from(doorbell_index::USERQUEUE_START)
    }

    pub fn release(&mut self, index: u32) {
        if let Ok((w, b)) = self.bit(index)
            && let Some(word) = self.used.get_mut(w)
        {
            *word &= !b;
        }
    }

    /// Writes `CP_MEC_DOORBELL_RANGE_LOWER/UPPER` (byte offsets, as
    /// `gfx_v11_0_kiq_init_register()` writes `(index * 2) << 2`).
    pub fn program<B: RegisterBus + ?Sized>(
        &self,
        bus: &B,
        regs: &HqdRegs,
        bases: &IpBases,
    ) -> Result<(), MapError> {
        let lower = regs.at(regs.doorbell_range_lower, bases)?;
        let upper = regs.at(regs.doorbell_range_upper, bases)?;
        bus.write32(lower, (self.lower * 8) & DOORBELL_RANGE_MASK);
        bus.write32(upper, (self.upper * 8) & DOORBELL_RANGE_MASK);
        Ok(())
    }
}

/// The GC registers a mapper touches, per generation. GC 11.0.0 and
/// 12.0.0 place them identically; each set is checked against its own
/// `gc_*_offset.h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HqdRegs {
    pub generation: Generation,
    pub grbm_gfx_cntl: Reg,
    pub mqd_base_addr: Reg,
    pub hqd_active: Reg,
    pub doorbell_control: Reg,
    pub dequeue_request: Reg,
    pub eop_rptr: Reg,
    pub wptr_lo: Reg,
    pub wptr_hi: Reg,
    pub wptr_poll_addr: Reg,
    pub wptr_poll_addr_hi: Reg,
    pub wptr_poll_cntl1: Reg,
    pub doorbell_range_lower: Reg,
    pub doorbell_range_upper: Reg,
}

impl HqdRegs {
    pub const fn for_generation(g: Generation) -> Self {
        match g {
            Generation::Gfx11 => {
                use crate::regs::gc_11_0_0 as r;
                HqdRegs {
                    generation: g,
                    grbm_gfx_cntl: r::GRBM_GFX_CNTL,
                    mqd_base_addr: r::CP_MQD_BASE_ADDR,
                    hqd_active: r::CP_HQD_ACTIVE,
                    doorbell_control: r::CP_HQD_PQ_DOORBELL_CONTROL,
                    dequeue_request: r::CP_HQD_DEQUEUE_REQUEST,
                    eop_rptr: r::CP_HQD_EOP_RPTR,
                    wptr_lo: r::CP_HQD_PQ_WPTR_LO,
                    wptr_hi: r::CP_HQD_PQ_WPTR_HI,
                    wptr_poll_addr: r::CP_HQD_PQ_WPTR_POLL_ADDR,
                    wptr_poll_addr_hi: r::CP_HQD_PQ_WPTR_POLL_ADDR_HI,
                    wptr_poll_cntl1: r::CP_PQ_WPTR_POLL_CNTL1,
                    doorbell_range_lower: r::CP_MEC_DOORBELL_RANGE_LOWER,
                    doorbell_range_upper: r::CP_MEC_DOORBELL_RANGE_UPPER,
                }
            }
            Generation::Gfx12 => {
                use crate::regs::gc_12_0_0 as r;
                HqdRegs {
                    generation: g,
                    grbm_gfx_cntl: r::GRBM_GFX_CNTL,
                    mqd_base_addr: r::CP_MQD_BASE_ADDR,
                    hqd_active: r::CP_HQD_ACTIVE,
                    doorbell_control: r::CP_HQD_PQ_DOORBELL_CONTROL,
                    dequeue_request: r::CP_HQD_DEQUEUE_REQUEST,
                    eop_rptr: r::CP_HQD_EOP_RPTR,
                    wptr_lo: r::CP_HQD_PQ_WPTR_LO,
                    wptr_hi: r::CP_HQD_PQ_WPTR_HI,
                    wptr_poll_addr: r::CP_HQD_PQ_WPTR_POLL_ADDR,
                    wptr_poll_addr_hi: r::CP_HQD_PQ_WPTR_POLL_ADDR_HI,
                    wptr_poll_cntl1: r::CP_PQ_WPTR_POLL_CNTL1,
                    doorbell_range_lower: r::CP_MEC_DOORBELL_RANGE_LOWER,
                    doorbell_range_upper: r::CP_MEC_DOORBELL_RANGE_UPPER,
                }
            }
        }
    }

    /// Byte offset of `reg`, or a typed error naming it.
    pub fn at(&self, reg: Reg, bases: &IpBases) -> Result<usize, MapError> {
        reg.byte_offset(bases)
            .ok_or(MapError::RegisterOutsideAperture { register: reg.name })
    }

    /// Byte offset of HQD window register `i` (MQD dword `128 + i`).
    pub fn window(&self, i: usize, bases: &IpBases) -> Result<usize, MapError> {
        let first = self.at(self.mqd_base_addr, bases)?;
        first
            .checked_add(i * 4)
            .ok_or(MapError::RegisterOutsideAperture {
                register: "HQD window",
            })
    }
}

/// What a mapper needs to know about one queue, in GPU addresses.
#[derive(Debug, Clone, Copy)]
pub struct QueueResources<'a> {
    pub mqd: &'a MqdPage,
    pub eop: &'a EopBuffer,
    pub ring_address: u64,
    pub ring_bytes: u64,
    pub read_index_address: u64,
    pub write_index_address: u64,
    /// 64-bit doorbell index in the doorbell BAR.
    pub doorbell: u32,
    pub vmid: u8,
}

impl<'a> QueueResources<'a> {
    /// The resources of an AQL queue in `mem`. On the model (and with an
    /// identity-mapped IOMMU) GPU addresses equal CPU addresses.
    pub fn aql<const SLOTS: usize>(
        mem: &QueueMemory<SLOTS>,
        mqd: &'a MqdPage,
        eop: &'a EopBuffer,
        doorbell: u32,
        vmid: u8,
    ) -> Self {
        QueueResources {
            mqd,
            eop,
            ring_address: mem.ring_address(),
            ring_bytes: (SLOTS * 64) as u64,
            read_index_address: mem.read_index_address(),
            write_index_address: mem.write_index_address(),
            doorbell,
            vmid,
        }
    }

    /// The MQD parameters for these resources.
    pub fn mqd_params(&self) -> AqlMqdParams {
        AqlMqdParams {
            mqd_address: self.mqd.address(),
            ring_address: self.ring_address,
            ring_bytes: self.ring_bytes,
            read_index_address: self.read_index_address,
            write_index_address: self.write_index_address,
            doorbell_dword: self.doorbell.saturating_mul(2),
            eop_address: self.eop.address(),
            eop_bytes: EOP_BYTES,
            vmid: self.vmid,
        }
    }
}

/// A mapped queue: enough to unmap it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    pub doorbell: u32,
    pub mqd_address: u64,
    /// MEC pipe and queue slot (direct HQD / KIQ); MES picks its own and
    /// does not tell, so these are 0 for MES.
    pub pipe: u8,
    pub queue: u8,
    pub vmid: u8,
}

/// Why a queue could not be mapped or unmapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    Mqd(MqdError),
    Doorbell(DoorbellAllocError),
    /// All HQD slots this mapper may use are taken.
    NoFreeSlot,
    /// The chosen HQD is already active.
    HqdBusy {
        pipe: u8,
        queue: u8,
    },
    /// The register's segment base is missing from the discovery bases.
    RegisterOutsideAperture {
        register: &'static str,
    },
    /// The HQD did not go inactive after `CP_HQD_DEQUEUE_REQUEST`.
    Dequeue(WaitError),
    /// The mapping is not one this mapper made (or already unmapped).
    NotMapped {
        doorbell: u32,
    },
    /// MES refused or did not answer.
    Mes(crate::mes::MesError),
    /// The KIQ did not complete a packet.
    Kiq(crate::kiq::KiqTimeout),
}

impl From<MqdError> for MapError {
    fn from(e: MqdError) -> Self {
        MapError::Mqd(e)
    }
}
impl From<DoorbellAllocError> for MapError {
    fn from(e: DoorbellAllocError) -> Self {
        MapError::Doorbell(e)
    }
}
impl From<crate::mes::MesError> for MapError {
    fn from(e: crate::mes::MesError) -> Self {
        MapError::Mes(e)
    }
}

impl core::fmt::Display for MapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MapError::Mqd(e) => write!(f, "MQD: {e}"),
            MapError::Doorbell(e) => write!(f, "doorbell: {e}"),
            MapError::NoFreeSlot => write!(f, "no free HQD slot"),
            MapError::HqdBusy { pipe, queue } => {
                write!(f, "HQD pipe {pipe} queue {queue} is already active")
            }
            MapError::RegisterOutsideAperture { register } => {
                write!(f, "register {register} has no base in the discovery table")
            }
            MapError::Dequeue(e) => write!(f, "dequeue: {e}"),
            MapError::NotMapped { doorbell } => {
                write!(f, "no queue on doorbell {doorbell:#x} was mapped here")
            }
            MapError::Mes(e) => write!(f, "MES: {e}"),
            MapError::Kiq(e) => write!(f, "{e}"),
        }
    }
}

/// Maps and unmaps compute queues. Implementations claim the doorbell
/// before touching the device, so a collision is an error with nothing
/// sent.
pub trait QueueMapper {
    /// Builds the queue's MQD and makes the hardware run it.
    ///
    /// # Safety
    /// Every address in `q` must be valid memory the device may read and
    /// write for as long as the queue stays mapped, and `q.mqd` must not be
    /// mapped already.
    unsafe fn map(&mut self, q: &QueueResources<'_>) -> Result<Mapping, MapError>;

    /// Takes the queue off the hardware and frees its doorbell.
    fn unmap(&mut self, m: &Mapping) -> Result<(), MapError>;
}

/// `amdgpu_doorbell.h` facts for the doorbell plan.
pub const FACTS: &[Fact] = &[
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_NAVI10_DOORBELL_KIQ",
        doorbell_index::KIQ as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_NAVI10_DOORBELL_MEC_RING0",
        doorbell_index::MEC_RING0 as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_NAVI10_DOORBELL_MES_RING0",
        doorbell_index::MES_RING0 as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_NAVI10_DOORBELL_MES_RING1",
        doorbell_index::MES_RING1 as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_NAVI10_DOORBELL_USERQUEUE_START",
        doorbell_index::USERQUEUE_START as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_NAVI10_DOORBELL_USERQUEUE_END",
        doorbell_index::USERQUEUE_END as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "CP_MEC_DOORBELL_RANGE_LOWER__DOORBELL_RANGE_LOWER_MASK",
        DOORBELL_RANGE_MASK as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "CP_MEC_DOORBELL_RANGE_UPPER__DOORBELL_RANGE_UPPER_MASK",
        DOORBELL_RANGE_MASK as u64,
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_MEC_DOORBELL_RANGE_LOWER__DOORBELL_RANGE_LOWER_MASK",
        DOORBELL_RANGE_MASK as u64,
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_MEC_DOORBELL_RANGE_UPPER__DOORBELL_RANGE_UPPER_MASK",
        DOORBELL_RANGE_MASK as u64,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doorbells_refuse_collisions_and_out_of_range() {
        let mut d = Doorbells::linux_default();
        let a = d.allocate().unwrap();
        assert_eq!(a, doorbell_index::USERQUEUE_START);
        assert_eq!(d.claim(a), Err(DoorbellAllocError::InUse { index: a }));
        assert!(matches!(
            d.claim(doorbell_index::USERQUEUE_END + 1),
            Err(DoorbellAllocError::OutOfRange { .. })
        ));
        d.release(a);
        assert_eq!(d.claim(a), Ok(()));
        let mut small = Doorbells::new(20, 21).unwrap();
        small.allocate_from(0).unwrap();
        small.allocate_from(0).unwrap();
        assert_eq!(
            small.allocate_from(0),
            Err(DoorbellAllocError::Exhausted {
                lower: 20,
                upper: 21
            })
        );
    }
}
