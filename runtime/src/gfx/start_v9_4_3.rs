//! RLC and MEC start on GC 9.4.3 (MI300), per XCC, after the PSP has
//! loaded their firmware ([`crate::psp::mp13_0_6`]).
//!
//! Follows `gfx_v9_4_3_hw_init()` with `AMDGPU_FW_LOAD_PSP` on bare metal:
//! 1. `gfx_v9_4_3_rlc_resume()`, for every XCC in turn
//!    (`gfx_v9_4_3_xcc_rlc_resume()`): with PSP loading Linux neither
//!    stops, loads nor starts the RLC (that branch is for direct loading);
//!    it enters RLC safe mode (`amdgpu_gfx_rlc_enter_safe_mode()`: only
//!    when `gfx_v9_4_3_is_rlc_enabled()` sees `RLC_CNTL.RLC_ENABLE_F32`,
//!    which it reads on XCC 0 whatever the XCC, and GC 9.4.3 has
//!    `AMD_CG_SUPPORT_GFX_CGCG`/`MGCG` in `soc15.c`'s `cg_flags`), writes
//!    `RLC_CGCG_CGLS_CTRL = 0` ("disable CG"), enables the save/restore
//!    machine (`gfx_v9_4_3_xcc_init_pg()` → `RLC_SRM_CNTL.SRM_ENABLE`,
//!    for RLC v2.1 firmware) and leaves safe mode.
//! 2. `gfx_v9_4_3_cp_resume()`, for every XCC in turn
//!    (`gfx_v9_4_3_xcc_cp_resume()`): GUI-idle interrupts off
//!    (`CP_INT_CNTL_RING0`), MEC halted (`CP_MEC_CNTL` = halt/resets,
//!    `gfx_v9_4_3_xcc_cp_compute_enable(false)`, then `udelay(50)`), the
//!    KIQ (`gfx_v9_4_3_xcc_kiq_resume()`, [`CpResumeHooks::kiq`]), the MEC
//!    released (`CP_MEC_CNTL = 0` at the top of
//!    `gfx_v9_4_3_xcc_kcq_resume()`, `udelay(50)`), the compute queues
//!    ([`CpResumeHooks::queues`]), GUI-idle interrupts on.
//!
//! Each XCC is reached through its own [`Block`] (its GC instance's
//! bases from discovery), so the caller decides which XCCs exist.
//!
//! Where this deviates from Linux: Linux's safe-mode wait gives up
//! silently after `usec_timeout` µs; this returns
//! [`StartError::SafeMode`] after the same [`SAFE_MODE_TIMEOUT_NS`].
//!
//! No step here has run on hardware.

use crate::bus::{Block, BlockError, RegisterBus, WaitError};
use crate::regs::gc_9_4_3_rlc::{
    CP_INT_CNTL_RING0, CP_MEC_CNTL, CpIntCntlRing0, CpMecCntl, RLC_CGCG_CGLS_CTRL, RLC_CNTL,
    RLC_SAFE_MODE, RLC_SRM_CNTL, RlcCntl, RlcSafeMode, RlcSrmCntl,
};
use crate::time::{Clock, delay};

/// `adev->usec_timeout` polls of `udelay(1)`: the safe-mode wait.
pub const SAFE_MODE_TIMEOUT_NS: u64 = 100_000_000;
/// The `udelay(50)` after each `CP_MEC_CNTL` write
/// (`gfx_v9_4_3_xcc_cp_compute_enable()`).
pub const MEC_CNTL_DELAY_NS: u64 = 50_000;

/// Why starting an XCC's RLC or MEC failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartError {
    /// No XCC was given.
    NoXcc,
    /// A register of XCC `xcc` is not in its bases.
    Register { xcc: usize, error: BlockError },
    /// The RLC of XCC `xcc` did not acknowledge the safe-mode request.
    SafeMode { xcc: usize, error: WaitError },
    /// A caller's step (KIQ, queues) failed on XCC `xcc`.
    Step { xcc: usize, step: &'static str },
}

impl core::fmt::Display for StartError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StartError::NoXcc => write!(f, "GC 9.4.3 start: no XCC given"),
            StartError::Register { xcc, error } => write!(f, "XCC {xcc}: {error}"),
            StartError::SafeMode { xcc, error } => {
                write!(f, "XCC {xcc}: RLC did not enter safe mode: {error}")
            }
            StartError::Step { xcc, step } => write!(f, "XCC {xcc}: {step} failed"),
        }
    }
}

fn reg(xcc: usize) -> impl Fn(BlockError) -> StartError {
    move |error| match error {
        BlockError::Wait(error) => StartError::SafeMode { xcc, error },
        error => StartError::Register { xcc, error },
    }
}

/// `gfx_v9_4_3_is_rlc_enabled()`: `RLC_CNTL.RLC_ENABLE_F32` of XCC 0.
pub fn rlc_enabled<B: RegisterBus + ?Sized>(xcc0: &Block<'_, B>) -> Result<bool, StartError> {
    let v = xcc0.read(RLC_CNTL).map_err(reg(0))?;
    Ok(RlcCntl::from_bits(v).rlc_enable_f32())
}

/// What [`rlc_resume`] did on each XCC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RlcResume {
    /// XCCs that went through safe mode (the RLC was running).
    pub safe_mode: usize,
    pub xccs: usize,
}

/// `gfx_v9_4_3_rlc_resume()` with PSP loading, over `xccs` in order.
/// `rlc_v2_1` is `adev->gfx.rlc.is_rlc_v2_1` (the RLC blob's header is
/// v2.1 or later): it gates the save/restore machine.
pub fn rlc_resume<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    xccs: &[Block<'_, B>],
    clock: &C,
    rlc_v2_1: bool,
) -> Result<RlcResume, StartError> {
    let xcc0 = xccs.first().ok_or(StartError::NoXcc)?;
    let mut out = RlcResume::default();
    for (i, b) in xccs.iter().enumerate() {
        let e = reg(i);
        // amdgpu_gfx_rlc_enter_safe_mode(): asks XCC 0 whether the RLC
        // runs, then gfx_v9_4_3_xcc_set_safe_mode() on this XCC.
        let safe = rlc_enabled(xcc0)?;
        if safe {
            let enter = RlcSafeMode::new().with_cmd(true).with_message(1);
            b.write(RLC_SAFE_MODE, enter.into_bits()).map_err(&e)?;
            let cmd = RlcSafeMode::new().with_cmd(true).into_bits();
            b.poll(
                clock,
                RLC_SAFE_MODE,
                cmd,
                0,
                "RLC_SAFE_MODE.CMD",
                SAFE_MODE_TIMEOUT_NS,
            )
            .map_err(&e)?;
            out.safe_mode += 1;
        }
        // "disable CG".
        b.write(RLC_CGCG_CGLS_CTRL, 0).map_err(&e)?;
        // gfx_v9_4_3_xcc_init_pg() → enable_save_restore_machine().
        if rlc_v2_1 {
            let srm = RlcSrmCntl::new().with_srm_enable(true).into_bits();
            b.update(RLC_SRM_CNTL, srm, srm).map_err(&e)?;
        }
        // amdgpu_gfx_rlc_exit_safe_mode() → unset_safe_mode(): CMD alone.
        if safe {
            let exit = RlcSafeMode::new().with_cmd(true);
            b.write(RLC_SAFE_MODE, exit.into_bits()).map_err(&e)?;
        }
        out.xccs += 1;
    }
    Ok(out)
}

/// `gfx_v9_4_3_rlc_stop()`, which `smu_disable_dpms()` calls after the
/// SMU's unload notice on GC 9.4.2 and later: on every XCC
/// (`gfx_v9_4_3_xcc_rlc_stop()`), `RLC_CNTL.RLC_ENABLE_F32` cleared and
/// the GUI-idle interrupts off. Linux then waits for the RLC serdes to go
/// idle and gives up silently after `usec_timeout`; barebell does not
/// wait (the serdes masters are not modelled, and nothing follows that
/// depends on them). Returns the XCCs stopped.
pub fn rlc_stop<B: RegisterBus + ?Sized>(xccs: &[Block<'_, B>]) -> Result<usize, StartError> {
    let enable = RlcCntl::new().with_rlc_enable_f32(true).into_bits();
    for (x, b) in xccs.iter().enumerate() {
        b.update(RLC_CNTL, enable, 0).map_err(reg(x))?;
        gui_idle_interrupt(b, x, false)?;
    }
    Ok(xccs.len())
}

/// `gfx_v9_4_3_xcc_enable_gui_idle_interrupt()`: read-modify-write of the
/// three enables in `CP_INT_CNTL_RING0`.
pub fn gui_idle_interrupt<B: RegisterBus + ?Sized>(
    b: &Block<'_, B>,
    xcc: usize,
    enable: bool,
) -> Result<(), StartError> {
    let mask = CpIntCntlRing0::GUI_IDLE.into_bits();
    b.update(CP_INT_CNTL_RING0, mask, if enable { mask } else { 0 })
        .map_err(reg(xcc))?;
    Ok(())
}

/// `gfx_v9_4_3_xcc_cp_compute_enable()`: `CP_MEC_CNTL` = 0 to run the MEC,
/// [`CpMecCntl::HALT`] to stop it, then `udelay(50)`.
pub fn cp_compute_enable<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    b: &Block<'_, B>,
    clock: &C,
    xcc: usize,
    enable: bool,
) -> Result<(), StartError> {
    let v = if enable {
        0
    } else {
        CpMecCntl::HALT.into_bits()
    };
    b.write(CP_MEC_CNTL, v).map_err(reg(xcc))?;
    delay(clock, MEC_CNTL_DELAY_NS);
    Ok(())
}

/// The steps of `gfx_v9_4_3_xcc_cp_resume()` that belong to other
/// modules: the KIQ (while the MEC is halted) and the compute queues
/// (once it runs). Both default to nothing.
pub trait CpResumeHooks {
    /// `gfx_v9_4_3_xcc_kiq_resume()` for XCC `xcc`.
    fn kiq(&mut self, _xcc: usize) -> Result<(), StartError> {
        Ok(())
    }
    /// The rest of `gfx_v9_4_3_xcc_kcq_resume()` and the ring tests.
    fn queues(&mut self, _xcc: usize) -> Result<(), StartError> {
        Ok(())
    }
}

/// No KIQ, no queues: the MEC alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct MecOnly;
impl CpResumeHooks for MecOnly {}

/// `gfx_v9_4_3_cp_resume()` with PSP loading, over `xccs` in order (the
/// partition-mode query before the loop is the caller's).
pub fn cp_resume<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    xccs: &[Block<'_, B>],
    clock: &C,
    hooks: &mut dyn CpResumeHooks,
) -> Result<(), StartError> {
    if xccs.is_empty() {
        return Err(StartError::NoXcc);
    }
    for (i, b) in xccs.iter().enumerate() {
        gui_idle_interrupt(b, i, false)?;
        cp_compute_enable(b, clock, i, false)?;
        hooks.kiq(i)?;
        cp_compute_enable(b, clock, i, true)?;
        hooks.queues(i)?;
        gui_idle_interrupt(b, i, true)?;
    }
    Ok(())
}

/// [`rlc_resume`] then [`cp_resume`], as `gfx_v9_4_3_hw_init()` runs them.
pub fn start<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    xccs: &[Block<'_, B>],
    clock: &C,
    rlc_v2_1: bool,
    hooks: &mut dyn CpResumeHooks,
) -> Result<RlcResume, StartError> {
    let r = rlc_resume(xccs, clock, rlc_v2_1)?;
    cp_resume(xccs, clock, hooks)?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CP_MEC_CNTL` halt value, from the `gc_9_4_3_sh_mask.h` masks
    /// `gfx_v9_4_3_xcc_cp_compute_enable(false)` ORs together, summed by
    /// hand: 0x10 | 0x10000 | 0x20000 | 0x40000 | 0x80000 | 0x100000 |
    /// 0x200000 | 0x40000000 | 0x10000000.
    #[test]
    fn halt_value_is_linuxs() {
        assert_eq!(CpMecCntl::HALT.into_bits(), 0x503F_0010);
    }

    /// CMP_BUSY | CNTX_BUSY | CNTX_EMPTY = 0x40000 | 0x80000 | 0x100000.
    #[test]
    fn gui_idle_bits() {
        assert_eq!(CpIntCntlRing0::GUI_IDLE.into_bits(), 0x001C_0000);
    }
}
