//! `GRBM_GFX_CNTL`: which ME/pipe/queue (and VMID) the banked GC registers
//! address (`soc21_grbm_select()`, `soc24_grbm_select()`).
//!
//! Selecting a bank is global device state: every HQD register access
//! between a select and the next goes to that bank. [`GrbmSelect`] makes
//! the select a scope, so that every exit, error paths included, puts the
//! selection back to ME 0 pipe 0 queue 0 as Linux does after each HQD load
//! (`soc21_grbm_select(adev, 0, 0, 0, 0)` under `srbm_mutex`).

use crate::bus::{Block, BlockError, RegisterBus};
use crate::regs::Reg;
use bitfield_struct::bitfield;

/// `GRBM_GFX_CNTL` (`gc_11_0_0_sh_mask.h`, same layout in GC 12).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GrbmGfxCntl {
    #[bits(2)]
    pub pipeid: u8,
    #[bits(2)]
    pub meid: u8,
    #[bits(4)]
    pub vmid: u8,
    #[bits(3)]
    pub queueid: u8,
    #[bits(3)]
    pub ctxid: u8,
    #[bits(18)]
    __: u32,
}

fn select_value(me: u8, pipe: u8, queue: u8) -> u32 {
    GrbmGfxCntl::new()
        .with_meid(me)
        .with_pipeid(pipe)
        .with_queueid(queue)
        .into_bits()
}

/// A bank selection that lasts as long as the value: dropping it selects
/// ME 0, pipe 0, queue 0 again.
#[derive(Debug)]
pub struct GrbmSelect<'b, B: RegisterBus + ?Sized> {
    gc: Block<'b, B>,
    reg: Reg,
}

impl<'b, B: RegisterBus + ?Sized> GrbmSelect<'b, B> {
    /// Selects `me`/`pipe`/`queue` through `reg` (the part's
    /// `GRBM_GFX_CNTL`).
    pub fn new(
        gc: Block<'b, B>,
        reg: Reg,
        me: u8,
        pipe: u8,
        queue: u8,
    ) -> Result<Self, BlockError> {
        gc.write(reg, select_value(me, pipe, queue))?;
        Ok(GrbmSelect { gc, reg })
    }

    /// Selects another bank without going through ME 0 pipe 0 queue 0
    /// in between; the guard still deselects when dropped.
    pub fn switch(&self, me: u8, pipe: u8, queue: u8) -> Result<(), BlockError> {
        self.gc.write(self.reg, select_value(me, pipe, queue))
    }

    /// Selects VMID `vmid`'s bank (ME 0, pipe 0, queue 0), for the
    /// per-VMID registers `soc21_grbm_select(adev, 0, 0, 0, vmid)` reaches
    /// (`SH_MEM_CONFIG`, `SH_MEM_BASES`).
    pub fn switch_vmid(&self, vmid: u8) -> Result<(), BlockError> {
        self.gc
            .write(self.reg, GrbmGfxCntl::new().with_vmid(vmid).into_bits())
    }

    /// The block the selection applies to.
    pub fn block(&self) -> Block<'b, B> {
        self.gc
    }
}

impl<B: RegisterBus + ?Sized> Drop for GrbmSelect<'_, B> {
    fn drop(&mut self) {
        // The register resolved when the guard was made, so this cannot
        // fail; a failure would leave nothing better to do anyway.
        let _ = self.gc.write(self.reg, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gfx::error::MapError;
    use crate::gfx::kiq::KiqMemory;
    use crate::gfx::kiq::hqd::bring_up_on_mes;
    use crate::gfx::mqd::{EopBuffer, MqdPage};
    use crate::ip::Generation;
    use crate::mem::Dev;
    use crate::regs::{IpBases, gc_11_0_0 as gc};
    use core::cell::Cell;

    /// GC segment 1 (`GRBM_GFX_CNTL`, `RLC_CP_SCHEDULERS`) at 0; segment
    /// 0 (every HQD register) so high that `base + offset` overflows: the
    /// HQD registers cannot be placed, the select register can.
    const BASES: IpBases = IpBases::new(&[0xFFFF_F000, 0, 0, 0, 0, 0, 0, 0]);

    /// Keeps `GRBM_GFX_CNTL` and every value written to it; everything
    /// else reads 0 and drops writes.
    struct Grbm {
        at: usize,
        value: Cell<u32>,
        selects: Cell<u32>,
    }

    impl Grbm {
        fn new() -> Self {
            let at = gc::GRBM_GFX_CNTL.byte_offset(&BASES).unwrap();
            Grbm {
                at,
                value: Cell::new(0),
                selects: Cell::new(0),
            }
        }
    }

    impl RegisterBus for Grbm {
        fn read32(&self, at: usize) -> u32 {
            if at == self.at { self.value.get() } else { 0 }
        }
        fn write32(&self, at: usize, v: u32) {
            if at == self.at {
                self.value.set(v);
                if v != 0 {
                    self.selects.set(self.selects.get() + 1);
                }
            }
        }
    }

    #[test]
    fn kiq_bring_up_failing_mid_load_leaves_no_queue_selected() {
        let bus = Grbm::new();
        let ring = KiqMemory::<64>::new();
        let mqd = MqdPage::new();
        let eop = EopBuffer::new();
        // SAFETY: there is no device: the fake bus is given addresses in
        // register values only and never reaches memory through them.
        let (ring, mqd, eop) =
            unsafe { (Dev::assume(&ring), Dev::assume(&mqd), Dev::assume(&eop)) };
        let r = bring_up_on_mes(&bus, &BASES, Generation::Gfx11, ring, mqd, eop, 0x18);
        assert_eq!(
            r,
            Err(MapError::Register(BlockError::OutsideBases {
                register: "CP_MQD_BASE_ADDR"
            }))
        );
        assert_eq!(bus.selects.get(), 1, "the KIQ slot was selected");
        assert_eq!(
            GrbmGfxCntl::from_bits(bus.value.get()),
            GrbmGfxCntl::new(),
            "GRBM_GFX_CNTL still selects a queue after the error"
        );
    }

    #[test]
    fn mes_pipe_ring_load_failing_mid_load_leaves_no_queue_selected() {
        use crate::gfx::mes::MesMemory;
        use crate::gfx::mes::rings::{MesRingParts, load_pipe_ring};
        let bus = Grbm::new();
        let ring = MesMemory::<1024>::new();
        let mqd = MqdPage::new();
        let eop = EopBuffer::new();
        // SAFETY: as above.
        let parts = unsafe {
            MesRingParts {
                ring: Dev::assume(&ring),
                mqd: Dev::assume(&mqd),
                eop: Dev::assume(&eop),
                doorbell: 0xC,
            }
        };
        let r = load_pipe_ring(&bus, &BASES, Generation::Gfx12, 1, parts);
        assert_eq!(
            r,
            Err(MapError::Register(BlockError::OutsideBases {
                register: "CP_MQD_BASE_ADDR"
            }))
        );
        assert_eq!(bus.selects.get(), 1, "MES pipe 1 was selected");
        assert_eq!(bus.value.get(), 0, "GRBM_GFX_CNTL still selects pipe 1");
    }
}
