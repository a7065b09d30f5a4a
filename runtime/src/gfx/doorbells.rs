//! The doorbell plan and allocator: which 64-bit doorbell each ring uses,
//! and the MEC range that must cover them.

use crate::bus::{Block, RegisterBus};
use crate::gfx::error::{DoorbellAllocError, MapError};
use crate::gfx::mapper::HqdRegs;
use crate::regs::IpBases;
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
    /// SDMA engine 0's queue 0 (`AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0`;
    /// `sdma_v6_0_sw_init()` uses `sdma_engine[0] << 1` as its dword).
    pub const SDMA_ENGINE0: u32 = 0x100;
}

/// Doorbells the MEC range registers can cover: `DOORBELL_RANGE_LOWER/UPPER`
/// hold byte offsets in bits 11:2 (mask 0xFFC), i.e. the first 4 KiB of
/// the doorbell BAR, 512 64-bit doorbells.
pub const MEC_DOORBELLS: u32 = 512;

/// `CP_MEC_DOORBELL_RANGE_LOWER__DOORBELL_RANGE_LOWER_MASK` (same for UPPER).
pub const DOORBELL_RANGE_MASK: u32 = 0xFFC;

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
        let gc = Block::new(bus, *bases);
        gc.write(
            regs.doorbell_range_lower,
            (self.lower * 8) & DOORBELL_RANGE_MASK,
        )?;
        gc.write(
            regs.doorbell_range_upper,
            (self.upper * 8) & DOORBELL_RANGE_MASK,
        )?;
        Ok(())
    }
}

/// `amdgpu_doorbell.h` facts for the doorbell plan.
pub const FACTS: &[Fact] = &[
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0",
        doorbell_index::SDMA_ENGINE0 as u64,
    ),
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
