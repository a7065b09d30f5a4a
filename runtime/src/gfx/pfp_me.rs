//! The graphics CP's RS64 engines, PFP and ME: their program counters.
//!
//! `gfx_v11_0_config_gfx_rs64()` and `gfx_v12_0_config_gfx_rs64()`, which
//! `gfx_v11_0_hw_init()` / `gfx_v12_0_hw_init()` run with PSP loading right
//! after the RLC autoload, start with these two engines before the MEC
//! ([`crate::gfx::mec::config_rs64`]): for pipes 0 and 1 (`GRBM_GFX_CNTL`
//! ME 0), `CP_PFP_PRGRM_CNTR_START(_HI)` gets the `gc_*_pfp.bin` start
//! address in dwords, then `CP_ME_CNTL.PFP_PIPE0/1_RESET` are set and
//! cleared; the same for the ME (`CP_ME_PRGRM_CNTR_START(_HI)`,
//! `ME_PIPE0/1_RESET`) from `gc_*_me.bin`. tinygrad's `_config_mec()` does
//! it on GC 12 (pipe 0). barebell runs no graphics ring; the engines are
//! left halted (`CP_ME_CNTL`'s `PFP_HALT`/`ME_HALT` untouched), at their
//! code, as Linux leaves them until `gfx_v11_0_cp_gfx_start()`.

use crate::bus::{Block, BlockError, RegisterBus};
use crate::gfx::grbm::GrbmSelect;
use crate::ip::Generation;
use crate::regs::{IpBases, Reg};
use barebell_facts::Fact;

/// `CP_ME_CNTL.PFP_PIPE0_RESET | PFP_PIPE1_RESET`.
pub const PFP_PIPES_RESET: u32 = 0x000C_0000;
/// `CP_ME_CNTL.ME_PIPE0_RESET | ME_PIPE1_RESET`.
pub const ME_PIPES_RESET: u32 = 0x0030_0000;
/// PFP/ME pipes (`gfx_v11_0_config_gfx_rs64()` loops over 2).
pub const PIPES: u8 = 2;
/// `GRBM_GFX_CNTL.MEID` of the graphics engines.
pub const GFX_ME: u8 = 0;

/// The two engines' start addresses in dwords (`ucode_start_addr >> 2`
/// of each `gfx_firmware_header_v2_0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GfxPcs {
    pub pfp: u64,
    pub me: u64,
}

struct Regs {
    grbm: Reg,
    cntl: Reg,
    pfp: (Reg, Reg),
    me: (Reg, Reg),
}

const fn regs(g: Generation) -> Result<Regs, crate::ip::Unsupported> {
    Ok(match g {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new("RS64 PFP/ME registers", g));
        }
        Generation::Gfx11 => {
            use crate::regs::gc_11_0_0 as r;
            Regs {
                grbm: r::GRBM_GFX_CNTL,
                cntl: r::CP_ME_CNTL,
                pfp: (r::CP_PFP_PRGRM_CNTR_START, r::CP_PFP_PRGRM_CNTR_START_HI),
                me: (r::CP_ME_PRGRM_CNTR_START, r::CP_ME_PRGRM_CNTR_START_HI),
            }
        }
        Generation::Gfx12 => {
            use crate::regs::gc_12_0_0 as r;
            Regs {
                grbm: r::GRBM_GFX_CNTL,
                cntl: r::CP_ME_CNTL,
                pfp: (r::CP_PFP_PRGRM_CNTR_START, r::CP_PFP_PRGRM_CNTR_START_HI),
                me: (r::CP_ME_PRGRM_CNTR_START, r::CP_ME_PRGRM_CNTR_START_HI),
            }
        }
    })
}

/// The PFP and ME parts of `gfx_v11_0_config_gfx_rs64()` /
/// `gfx_v12_0_config_gfx_rs64()`: each engine's pipes pointed at `pcs`,
/// then its pipes' reset pulsed so they take it.
pub fn config_rs64<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
    pcs: GfxPcs,
) -> Result<(), BlockError> {
    let r = regs(generation)?;
    let gc = Block::new(bus, *bases);
    for reg in [r.grbm, r.cntl, r.pfp.0, r.pfp.1, r.me.0, r.me.1] {
        gc.offset(reg)?;
    }
    for ((lo, hi), pc, reset) in [
        (r.pfp, pcs.pfp, PFP_PIPES_RESET),
        (r.me, pcs.me, ME_PIPES_RESET),
    ] {
        {
            // Deselected (ME 0, pipe 0) when it drops, as the Linux loop
            // ends with `soc21_grbm_select(adev, 0, 0, 0, 0)`.
            let sel = GrbmSelect::new(gc, r.grbm, GFX_ME, 0, 0)?;
            for pipe in 0..PIPES {
                if pipe > 0 {
                    sel.switch(GFX_ME, pipe, 0)?;
                }
                gc.write(lo, pc as u32)?;
                gc.write(hi, (pc >> 32) as u32)?;
            }
        }
        let held = gc.read(r.cntl)? | reset;
        gc.write(r.cntl, held)?;
        gc.write(r.cntl, held & !reset)?;
    }
    Ok(())
}

macro_rules! cntl_facts {
    ($h:literal) => {
        [
            Fact::constant(
                $h,
                "CP_ME_CNTL__PFP_PIPE0_RESET_MASK",
                (PFP_PIPES_RESET & 0x0004_0000) as u64,
            ),
            Fact::constant(
                $h,
                "CP_ME_CNTL__PFP_PIPE1_RESET_MASK",
                (PFP_PIPES_RESET & 0x0008_0000) as u64,
            ),
            Fact::constant(
                $h,
                "CP_ME_CNTL__ME_PIPE0_RESET_MASK",
                (ME_PIPES_RESET & 0x0010_0000) as u64,
            ),
            Fact::constant(
                $h,
                "CP_ME_CNTL__ME_PIPE1_RESET_MASK",
                (ME_PIPES_RESET & 0x0020_0000) as u64,
            ),
        ]
    };
}

/// `CP_ME_CNTL` reset fields against both generations' `sh_mask` headers.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    cntl_facts!("gc_11_0_0_sh_mask.h"),
    cntl_facts!("gc_12_0_0_sh_mask.h"),
);
