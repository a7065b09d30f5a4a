//! The graphics CP's RS64 engines, PFP and ME (GRBM ME 0, pipes 0 and 1),
//! as far as their start addresses go.
//!
//! `gfx_v11_0_config_gfx_rs64()` and `gfx_v12_0_config_gfx_rs64()`
//! (`gfx_v11_0_hw_init()` / `gfx_v12_0_hw_init()` with PSP loading, right
//! after the RLC autoload) program, for pipes 0 and 1 selected through
//! `GRBM_GFX_CNTL` (ME 0), `CP_PFP_PRGRM_CNTR_START(_HI)` and
//! `CP_ME_PRGRM_CNTR_START(_HI)` with the `gc_*_pfp.bin` / `gc_*_me.bin`
//! `gfx_firmware_header_v2_0` start address (`(start_lo >> 2) | (start_hi
//! << 30)`, `start_hi >> 2`), then pulse `CP_ME_CNTL.PFP_PIPEn_RESET` and
//! `ME_PIPEn_RESET`. tinygrad's `_config_mec()` does the same on GC 12
//! (pipe 0).
//!
//! The model keeps the same rule it keeps for the MEC pipes
//! ([`crate::mec`]): an engine pipe takes the start address programmed for
//! it when its reset bit goes from 1 to 0 (*model rule*, by analogy with
//! the MEC: Linux writes the address, then pulses the reset, for both).
//! A pipe that takes an address other than its blob's is recorded
//! ([`GfxPipeEvent::WrongPc`]). Nothing in barebell's compute path runs on
//! these engines, so the record is what tests look at: whether a driver
//! left every PFP/ME pipe at its code, as Linux does.

use crate::cpregs::grbm;
use alloc::vec::Vec;

/// `CP_ME_CNTL` fields (`gc_11_0_0_sh_mask.h`, equal in
/// `gc_12_0_0_sh_mask.h`).
pub mod me_cntl {
    /// `PFP_PIPE0_RESET`; pipe 1 is the next bit.
    pub const PFP_PIPE0_RESET: u32 = 0x0004_0000;
    /// `ME_PIPE0_RESET`; pipe 1 is the next bit.
    pub const ME_PIPE0_RESET: u32 = 0x0010_0000;
    pub const PFP_HALT: u32 = 0x0400_0000;
    pub const ME_HALT: u32 = 0x1000_0000;
    /// `regCP_ME_CNTL_DEFAULT` (`gc_11_0_0_default.h`); GC 12 has no
    /// default header in Linux 6.12, so the GC 11 value stands for both
    /// (*model convention*).
    pub const DEFAULT: u32 = 0x1500_0000;
}

/// PFP or ME.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Pfp,
    Me,
}

impl Engine {
    fn index(self) -> usize {
        match self {
            Engine::Pfp => 0,
            Engine::Me => 1,
        }
    }

    fn reset_bit(self, pipe: usize) -> u32 {
        let base = match self {
            Engine::Pfp => me_cntl::PFP_PIPE0_RESET,
            Engine::Me => me_cntl::ME_PIPE0_RESET,
        };
        base << pipe
    }
}

/// What happened to a PFP/ME pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GfxPipeEvent {
    /// The pipe left reset and took `pc` (dwords).
    Took { engine: Engine, pipe: u8, pc: u64 },
    /// The pipe left reset with a start address that is not its blob's.
    WrongPc {
        engine: Engine,
        pipe: u8,
        pc: u64,
        expected: u64,
    },
}

/// PFP/ME pipes per engine (`gfx_v11_0_config_gfx_rs64()` loops over 2).
pub const GFX_PIPES: usize = 2;

/// Which register of the engines a write hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GfxReg {
    Pc(Engine),
    PcHi(Engine),
    Cntl,
}

/// The engines' start-address state.
#[derive(Debug, Clone)]
pub struct GfxPipes {
    /// `[engine][pipe]`: `CP_*_PRGRM_CNTR_START(_HI)` as written
    /// (`regCP_PFP/ME_PRGRM_CNTR_START_DEFAULT` 0).
    pc: [[(u32, u32); GFX_PIPES]; 2],
    /// `[engine][pipe]`: the start address taken at the last reset release.
    program: [[Option<(u32, u32)>; GFX_PIPES]; 2],
    /// `[engine]`: the blob's start address, when the model knows it.
    expected: [Option<(u32, u32)>; 2],
    cntl: u32,
}

impl Default for GfxPipes {
    fn default() -> Self {
        GfxPipes {
            pc: [[(0, 0); GFX_PIPES]; 2],
            program: [[None; GFX_PIPES]; 2],
            expected: [None; 2],
            cntl: me_cntl::DEFAULT,
        }
    }
}

fn join(v: (u32, u32)) -> u64 {
    u64::from(v.1) << 32 | u64::from(v.0)
}

impl GfxPipes {
    /// Power-on state; the expected start addresses are kept.
    pub fn reset(&mut self) {
        let expected = self.expected;
        *self = GfxPipes {
            expected,
            ..GfxPipes::default()
        };
    }

    pub fn expect(&mut self, engine: Engine, pc: (u32, u32)) {
        if let Some(e) = self.expected.get_mut(engine.index()) {
            *e = Some(pc);
        }
    }

    /// Whether graphics pipe `pipe` runs: PFP and ME unhalted
    /// (`gfx_v11_0_cp_gfx_enable()` clears `ME_HALT` and `PFP_HALT`), both
    /// out of reset with the start address they took at its release, and
    /// that address their blob's where the model knows it.
    pub fn runs(&self, pipe: usize) -> bool {
        if self.cntl & (me_cntl::ME_HALT | me_cntl::PFP_HALT) != 0 {
            return false;
        }
        [Engine::Pfp, Engine::Me].iter().all(|e| {
            let i = e.index();
            let took = self.program[i].get(pipe).copied().flatten();
            match (took, self.expected[i]) {
                (Some(pc), Some(want)) => pc == want,
                (Some(_), None) => true,
                (None, _) => false,
            }
        })
    }

    /// The start address `engine`'s `pipe` took at its last reset release.
    pub fn program(&self, engine: Engine, pipe: usize) -> Option<u64> {
        let p = self.program.get(engine.index())?.get(pipe)?;
        p.map(join)
    }

    /// A write under GRBM selection `grbm_value`.
    pub fn write(&mut self, grbm_value: u32, reg: GfxReg, value: u32) -> Vec<GfxPipeEvent> {
        let (me, pipe, _) = grbm::slot(grbm_value);
        let pipe = usize::from(pipe);
        match reg {
            GfxReg::Pc(e) | GfxReg::PcHi(e) => {
                if me != 0 {
                    return Vec::new();
                }
                let hi = matches!(reg, GfxReg::PcHi(_));
                if let Some(pc) = self.pc.get_mut(e.index()).and_then(|x| x.get_mut(pipe)) {
                    if hi {
                        pc.1 = value;
                    } else {
                        pc.0 = value;
                    }
                }
                Vec::new()
            }
            GfxReg::Cntl => self.cntl(value),
        }
    }

    fn cntl(&mut self, value: u32) -> Vec<GfxPipeEvent> {
        let old = self.cntl;
        self.cntl = value;
        let mut out = Vec::new();
        for engine in [Engine::Pfp, Engine::Me] {
            let i = engine.index();
            for pipe in 0..GFX_PIPES {
                let bit = engine.reset_bit(pipe);
                if value & bit != 0 {
                    // In reset: no program until the reset is released.
                    self.program[i][pipe] = None;
                    continue;
                }
                if old & bit == 0 {
                    continue;
                }
                // Leaving reset: the pipe takes its start address.
                let pc = self.pc[i][pipe];
                self.program[i][pipe] = Some(pc);
                let p = pipe as u8;
                out.push(match self.expected[i] {
                    Some(e) if e != pc => GfxPipeEvent::WrongPc {
                        engine,
                        pipe: p,
                        pc: join(pc),
                        expected: join(e),
                    },
                    _ => GfxPipeEvent::Took {
                        engine,
                        pipe: p,
                        pc: join(pc),
                    },
                });
            }
        }
        out
    }

    /// A banked read under GRBM selection `grbm_value`.
    pub fn read(&self, grbm_value: u32, reg: GfxReg) -> u32 {
        let (me, pipe, _) = grbm::slot(grbm_value);
        let pc = |e: Engine| {
            if me != 0 {
                return (0, 0);
            }
            self.pc
                .get(e.index())
                .and_then(|x| x.get(usize::from(pipe)))
                .copied()
                .unwrap_or((0, 0))
        };
        match reg {
            GfxReg::Pc(e) => pc(e).0,
            GfxReg::PcHi(e) => pc(e).1,
            GfxReg::Cntl => self.cntl,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(pipe: u32) -> u32 {
        // GRBM_GFX_CNTL.PIPEID is bits 1:0, MEID bits 3:2 (ME 0 here).
        pipe
    }

    #[test]
    fn a_pipe_takes_its_address_only_on_reset_release() {
        let mut g = GfxPipes::default();
        g.expect(Engine::Pfp, (0x10, 0));
        g.write(select(0), GfxReg::Pc(Engine::Pfp), 0x10);
        assert_eq!(g.program(Engine::Pfp, 0), None);
        let held = me_cntl::DEFAULT | me_cntl::PFP_PIPE0_RESET;
        g.write(0, GfxReg::Cntl, held);
        let ev = g.write(0, GfxReg::Cntl, me_cntl::DEFAULT);
        assert_eq!(g.program(Engine::Pfp, 0), Some(0x10));
        assert_eq!(
            ev,
            [GfxPipeEvent::Took {
                engine: Engine::Pfp,
                pipe: 0,
                pc: 0x10
            }]
        );
        // Pipe 1 was never pulsed.
        assert_eq!(g.program(Engine::Pfp, 1), None);
    }

    #[test]
    fn a_wrong_address_is_recorded() {
        let mut g = GfxPipes::default();
        g.expect(Engine::Me, (0x20, 0));
        g.write(select(1), GfxReg::Pc(Engine::Me), 0x24);
        g.write(0, GfxReg::Cntl, me_cntl::ME_PIPE0_RESET << 1);
        let ev = g.write(0, GfxReg::Cntl, 0);
        assert_eq!(
            ev,
            [GfxPipeEvent::WrongPc {
                engine: Engine::Me,
                pipe: 1,
                pc: 0x24,
                expected: 0x20
            }]
        );
    }
}
