//! A wave's architectural state copied out of the interpreter: what a
//! bring-up engineer reads from a hung or faulting wave (SGPRs, VGPRs,
//! PC, EXEC), as `umr --waves` prints it from a GPU's SQ registers.
//!
//! [`crate::launch::launch_dump`] takes one when a wave stops the
//! dispatch (a fault, the instruction bound, a host stop) and, if the
//! configuration names a wave ([`crate::launch::LaunchConfig::watch`]),
//! when that wave ends.

use crate::exec::Wave;
use crate::inst::Target;
use alloc::vec::Vec;
use core::fmt;

/// A wave by its workgroup id and its index in the workgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaveId {
    pub workgroup: [u32; 3],
    pub wave: u32,
}

/// Why the state was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpReason {
    /// The watched wave executed `s_endpgm`.
    Ended,
    /// The wave stopped the dispatch with an error; `pc` is the
    /// instruction that failed.
    Faulted,
    /// The dispatch ran out of its instruction bound while this wave ran.
    Timeout,
    /// The host stopped the dispatch while this wave ran.
    Stopped,
}

impl DumpReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DumpReason::Ended => "ended (s_endpgm)",
            DumpReason::Faulted => "faulted",
            DumpReason::Timeout => "running when the instruction bound ran out",
            DumpReason::Stopped => "running when the host stopped the dispatch",
        }
    }
}

/// Scalar registers a dump shows: s0..s105 (every gfx9-gfx12 wave
/// addresses 106; what the descriptor allocates may be fewer).
pub const DUMP_SGPRS: usize = 106;

/// One wave's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaveDump {
    pub id: WaveId,
    pub reason: DumpReason,
    /// The next instruction to run, or for [`DumpReason::Faulted`] the one
    /// that failed.
    pub pc: u64,
    pub exec: u64,
    pub vcc: u64,
    pub scc: bool,
    pub m0: u32,
    pub wave_size: u32,
    /// s0..s105.
    pub sgprs: Vec<u32>,
    /// ttmp0..ttmp15 (gfx12 delivers workgroup ids in ttmp7/ttmp9).
    pub ttmps: [u32; 16],
    /// VGPRs the wave has, register-major: `vgprs[r * wave_size + lane]`.
    pub vgprs: Vec<u32>,
    pub nvgpr: u32,
}

impl WaveDump {
    /// Copies `w`'s state; `pc` overrides the wave's own (which has moved
    /// past a failed instruction).
    pub fn take(target: Target, w: &Wave, id: WaveId, reason: DumpReason, pc: u64) -> WaveDump {
        let pair = |r: usize| {
            let lo = u64::from(w.s[r]);
            if w.wave_size == 64 {
                lo | u64::from(w.s[r + 1]) << 32
            } else {
                lo
            }
        };
        let mut ttmps = [0u32; 16];
        ttmps.copy_from_slice(&w.s[108..124]);
        WaveDump {
            id,
            reason,
            pc,
            exec: w.exec(),
            vcc: pair(106),
            scc: w.scc,
            // M0 is operand 124 on gfx9 and 125 from gfx10 (AMDGPUUsage's
            // operand tables; 124 is NULL there).
            m0: if target.is_gfx9() { w.s[124] } else { w.s[125] },
            wave_size: w.wave_size,
            sgprs: w.s[..DUMP_SGPRS].to_vec(),
            ttmps,
            vgprs: w.v.clone(),
            nvgpr: w.nvgpr,
        }
    }

    /// VGPR `r` of `lane`, if the wave has it.
    pub fn vgpr(&self, r: u32, lane: u32) -> Option<u32> {
        if r >= self.nvgpr || lane >= self.wave_size {
            return None;
        }
        self.vgprs
            .get((r * self.wave_size + lane) as usize)
            .copied()
    }
}

fn mask(f: &mut fmt::Formatter<'_>, wave_size: u32, m: u64) -> fmt::Result {
    if wave_size == 32 {
        write!(f, "0x{:08x}", m as u32)
    } else {
        write!(f, "0x{m:016x}")
    }
}

/// The text form: a header line, the special registers, then SGPRs and
/// VGPRs eight to a line (every lane, `[n]` the line's first lane; EXEC
/// says which lanes are on).
impl fmt::Display for WaveDump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.id.workgroup;
        writeln!(
            f,
            "wave {} of workgroup ({x}, {y}, {z}): {}",
            self.id.wave,
            self.reason.as_str()
        )?;
        write!(f, "  pc 0x{:x}  exec ", self.pc)?;
        mask(f, self.wave_size, self.exec)?;
        write!(f, "  vcc ")?;
        mask(f, self.wave_size, self.vcc)?;
        writeln!(
            f,
            "  scc {}  m0 0x{:08x}  wave{}",
            u8::from(self.scc),
            self.m0,
            self.wave_size
        )?;
        // Rows past the last non-zero SGPR are folded into one line.
        let used = self
            .sgprs
            .iter()
            .rposition(|&v| v != 0)
            .map_or(0, |i| i / 8 + 1);
        for (row, chunk) in self.sgprs.chunks(8).enumerate().take(used) {
            write!(f, "  s{:<3}", row * 8)?;
            for v in chunk {
                write!(f, " {v:08x}")?;
            }
            writeln!(f)?;
        }
        if used * 8 < self.sgprs.len() {
            writeln!(f, "  s{}..s{}: all zero", used * 8, self.sgprs.len() - 1)?;
        }
        for (row, chunk) in self.ttmps.chunks(8).enumerate() {
            write!(f, "  ttmp{:<2}", row * 8)?;
            for v in chunk {
                write!(f, " {v:08x}")?;
            }
            writeln!(f)?;
        }
        for r in 0..self.nvgpr {
            for first in (0..self.wave_size).step_by(8) {
                if first == 0 {
                    write!(f, "  v{r:<3}")?;
                } else {
                    write!(f, "      ")?;
                }
                write!(f, " [{first:>2}]")?;
                for l in first..(first + 8).min(self.wave_size) {
                    write!(f, " {:08x}", self.vgpr(r, l).unwrap_or(0))?;
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}
