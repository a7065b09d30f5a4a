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
        let v = GrbmGfxCntl::new()
            .with_meid(me)
            .with_pipeid(pipe)
            .with_queueid(queue);
        gc.write(reg, v.into_bits())?;
        Ok(GrbmSelect { gc, reg })
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
