//! Starting the MEC (the RS64 compute micro-engine) once the RLC autoload
//! has put its code in place.
//!
//! The MEC comes out of reset halted (`regCP_MEC_RS64_CNTL_DEFAULT` =
//! `MEC_HALT`, `gc_11_0_0_default.h`) and runs no queue, KIQ, direct or
//! MES-mapped, until it is started. Two steps, as Linux 6.12 does them for
//! PSP-loaded RS64 firmware:
//!
//! 1. [`config_rs64`] follows the MEC part of `gfx_v11_0_config_gfx_rs64()`
//!    (`gfx_v12_0_config_gfx_rs64()` is the same on the same registers),
//!    which `gfx_v11_0_hw_init()` runs right after
//!    `gfx_v11_0_wait_for_rlc_autoload_complete()`: every pipe's
//!    `CP_MEC_RS64_PRGRM_CNTR_START(_HI)` (banked per pipe, `GRBM_GFX_CNTL`
//!    ME 1) gets the ucode start address from the `gc_*_mec.bin`
//!    `gfx_firmware_header_v2_0` in dwords, then all four pipes get a
//!    reset pulse so they take it. tinygrad's `_config_mec()` does the same.
//! 2. [`compute_enable`] follows `gfx_v11_0_cp_compute_enable(adev, true)`
//!    (`gfx_v11_0_cp_resume()`; tinygrad's `_enable_mec()`): the pipes
//!    out of reset and active, `MEC_HALT` and `MEC_INVALIDATE_ICACHE`
//!    clear, then the `udelay(50)` both `gfx_v11_0_cp_compute_enable()`
//!    and `gfx_v12_0_cp_compute_enable()` end with, on the caller's clock
//!    ([`crate::time::delay`]), before any queue is loaded.
//!
//! The PFP and ME (graphics) pipes `gfx_v11_0_config_gfx_rs64()` also
//! configures, before the MEC, are [`crate::gfx::pfp_me`]'s.

use crate::bus::{Block, BlockError, RegisterBus};
use crate::gfx::grbm::GrbmSelect;
use crate::ip::Generation;
use crate::regs::{IpBases, Reg};
use crate::time::{Clock, delay};
use barebell_facts::Fact;
use bitfield_struct::bitfield;

/// `CP_MEC_RS64_CNTL`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct MecRs64Cntl {
    #[bits(4)]
    pub spare: u8,
    pub invalidate_icache: bool,
    #[bits(11)]
    __: u16,
    /// `MEC_PIPE0_RESET` .. `MEC_PIPE3_RESET`, bit per pipe.
    #[bits(4)]
    pub pipe_reset: u8,
    #[bits(6)]
    __: u8,
    /// `MEC_PIPE0_ACTIVE` .. `MEC_PIPE3_ACTIVE`, bit per pipe.
    #[bits(4)]
    pub pipe_active: u8,
    pub halt: bool,
    pub step: bool,
}

/// `GRBM_GFX_CNTL.MEID` of the first MEC.
pub const MEC_ME: u8 = 1;
/// Pipes per MEC (`gfx_v11_0_sw_init()`: `num_pipe_per_mec = 4`).
pub const PIPES: u8 = 4;
/// Every pipe's bit in [`MecRs64Cntl::pipe_reset`] / `pipe_active`.
pub const ALL_PIPES: u8 = (1 << PIPES) - 1;

struct Regs {
    grbm: Reg,
    cntl: Reg,
    pc: Reg,
    pc_hi: Reg,
}

const fn regs(g: Generation) -> Result<Regs, crate::ip::Unsupported> {
    Ok(match g {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new("MEC register table", g));
        }
        Generation::Gfx11 => {
            use crate::regs::gc_11_0_0 as r;
            Regs {
                grbm: r::GRBM_GFX_CNTL,
                cntl: r::CP_MEC_RS64_CNTL,
                pc: r::CP_MEC_RS64_PRGRM_CNTR_START,
                pc_hi: r::CP_MEC_RS64_PRGRM_CNTR_START_HI,
            }
        }
        Generation::Gfx12 => {
            use crate::regs::gc_12_0_0 as r;
            Regs {
                grbm: r::GRBM_GFX_CNTL,
                cntl: r::CP_MEC_RS64_CNTL,
                pc: r::CP_MEC_RS64_PRGRM_CNTR_START,
                pc_hi: r::CP_MEC_RS64_PRGRM_CNTR_START_HI,
            }
        }
    })
}

/// Points every MEC pipe at `pc_dwords` (the ucode start address >> 2,
/// `GfxV2_0`'s `ucode_start_addr`) and pulses the pipes' reset so they
/// take it (`gfx_v11_0_config_gfx_rs64()`, MEC part). Leaves the MEC as
/// it found it otherwise (halted, at power-on).
pub fn config_rs64<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
    pc_dwords: u64,
) -> Result<(), BlockError> {
    let r = regs(generation)?;
    let gc = Block::new(bus, *bases);
    for reg in [r.grbm, r.cntl, r.pc, r.pc_hi] {
        gc.offset(reg)?;
    }
    {
        // One selection for all four pipes; deselected (ME 0, pipe 0) when
        // it drops, as the Linux loop ends with `soc21_grbm_select(0..)`.
        let sel = GrbmSelect::new(gc, r.grbm, MEC_ME, 0, 0)?;
        for pipe in 0..PIPES {
            if pipe > 0 {
                sel.switch(MEC_ME, pipe, 0)?;
            }
            gc.write(r.pc, pc_dwords as u32)?;
            gc.write(r.pc_hi, (pc_dwords >> 32) as u32)?;
        }
    }
    let held = MecRs64Cntl::from_bits(gc.read(r.cntl)?).with_pipe_reset(ALL_PIPES);
    gc.write(r.cntl, held.into_bits())?;
    gc.write(r.cntl, held.with_pipe_reset(0).into_bits())?;
    Ok(())
}

/// The `udelay(50)` at the end of `gfx_v11_0_cp_compute_enable()` and
/// `gfx_v12_0_cp_compute_enable()`.
pub const COMPUTE_ENABLE_DELAY_NS: u64 = 50_000;

/// `gfx_v11_0_cp_compute_enable(adev, enable)`, RS64 branch: with
/// `enable`, every pipe out of reset and active, the MEC unhalted; without,
/// the reverse; then [`COMPUTE_ENABLE_DELAY_NS`] on `clock`. Returns the
/// value written.
pub fn compute_enable<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    bases: &IpBases,
    generation: Generation,
    enable: bool,
) -> Result<u32, BlockError> {
    let r = regs(generation)?;
    let gc = Block::new(bus, *bases);
    let pipes = |on: bool| if on { ALL_PIPES } else { 0 };
    let v = MecRs64Cntl::from_bits(gc.read(r.cntl)?)
        .with_invalidate_icache(!enable)
        .with_pipe_reset(pipes(!enable))
        .with_pipe_active(pipes(enable))
        .with_halt(!enable)
        .into_bits();
    gc.write(r.cntl, v)?;
    delay(clock, COMPUTE_ENABLE_DELAY_NS);
    Ok(v)
}

macro_rules! cntl_facts {
    ($h:literal) => {
        [
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_INVALIDATE_ICACHE_MASK",
                MecRs64Cntl::new().with_invalidate_icache(true).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE0_RESET_MASK",
                MecRs64Cntl::new().with_pipe_reset(1).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE3_RESET_MASK",
                MecRs64Cntl::new().with_pipe_reset(8).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE0_ACTIVE_MASK",
                MecRs64Cntl::new().with_pipe_active(1).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE3_ACTIVE_MASK",
                MecRs64Cntl::new().with_pipe_active(8).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_HALT_MASK",
                MecRs64Cntl::new().with_halt(true).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_STEP_MASK",
                MecRs64Cntl::new().with_step(true).into_bits() as u64,
            ),
        ]
    };
}

/// `CP_MEC_RS64_CNTL` fields against both generations' `sh_mask` headers.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    cntl_facts!("gc_11_0_0_sh_mask.h"),
    cntl_facts!("gc_12_0_0_sh_mask.h"),
);
