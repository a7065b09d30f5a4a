//! GC 9.4.3 (MI300) RLC and MEC start, per XCC, as the model sees it:
//! the registers `gfx_v9_4_3.c` writes after PSP loading
//! (`gfx_v9_4_3_xcc_rlc_resume()`, `gfx_v9_4_3_xcc_cp_resume()`), decoded
//! with the model's own offsets and masks written from
//! `gc_9_4_3_offset.h` / `gc_9_4_3_sh_mask.h` ([`FACTS`]), never the
//! runtime's register tables.
//!
//! What it enforces, and where each rule comes from:
//! - `CP_MEC_CNTL` comes out of reset halted: `mmCP_MEC_CNTL_DEFAULT` is
//!   0x50000000 (`MEC_ME1_HALT | MEC_ME2_HALT`) in `gc_9_0_default.h`.
//!   Linux 6.12 ships no `gc_9_4_3_default.h`, so the gfx9 value is the
//!   model's reset value for 9.4.3 (a model value, labelled as such); the
//!   halt bits are at the same positions in `gc_9_4_3_sh_mask.h`.
//! - A MEC runs ([`RlcMecV943::mec_run`]) only when its XCC's
//!   `CP_MEC_CNTL` has `MEC_ME1_HALT` and `MEC_ME1_PIPE0_RESET` clear
//!   (`gfx_v9_4_3_xcc_cp_compute_enable(true)` writes 0) and the PSP put
//!   `GFX_FW_TYPE_CP_MEC` and `GFX_FW_TYPE_CP_MEC_ME1` in place
//!   ([`LoadedFirmware`]); otherwise it runs nothing and says why.
//! - The RLC runs once the PSP loaded `RLC_G`: with PSP loading,
//!   `gfx_v9_4_3_xcc_rlc_resume()` never sets `RLC_CNTL.RLC_ENABLE_F32`
//!   (that is the direct-loading branch), yet the next step asks whether
//!   the RLC runs (`gfx_v9_4_3_is_rlc_enabled()`), so the PSP's load is
//!   what starts it. That inference is the model's rule. A driver write
//!   of `RLC_ENABLE_F32 = 0` stops it.
//! - Safe mode: a write of `RLC_SAFE_MODE.CMD` is acknowledged (CMD reads
//!   0 again) by a running RLC; `MESSAGE` 1 enters, 0 leaves
//!   (`gfx_v9_4_3_xcc_set_safe_mode()` / `unset_safe_mode()`). A stopped
//!   RLC never acknowledges. The acknowledgement is immediate (a model
//!   value: the real latency is not public).
//! - `RLC_CGCG_CGLS_CTRL` written while a running RLC is outside safe
//!   mode is logged as a refusal (model rule: Linux only writes it inside
//!   safe mode, `amdgpu_gfx_rlc_enter_safe_mode()`).
//!
//! Every write is logged per XCC ([`RlcMecV943::writes`]) so tests can
//! compare the driver's order with Linux's.

use crate::SimClock;
use crate::log::Keep;
use crate::psp::LoadedFirmware;
use crate::psp::iface::fw;
use crate::regfile::ACCESS_NS;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell_facts::Fact;
use spin::Mutex;

const OFF: &str = "gc_9_4_3_offset.h";
const SH: &str = "gc_9_4_3_sh_mask.h";

/// `(dword offset, BASE_IDX)` of each register the model decodes.
pub mod reg {
    pub const CP_MEC_CNTL: (u32, usize) = (0x008d, 0);
    pub const CP_INT_CNTL_RING0: (u32, usize) = (0x106a, 0);
    pub const RLC_CNTL: (u32, usize) = (0x4c00, 1);
    pub const RLC_SAFE_MODE: (u32, usize) = (0x4c05, 1);
    pub const RLC_CGCG_CGLS_CTRL: (u32, usize) = (0x4c49, 1);
    pub const RLC_SRM_CNTL: (u32, usize) = (0x4c80, 1);
    pub const GB_ADDR_CONFIG: (u32, usize) = (0x063e, 0);
}

/// Field masks (`gc_9_4_3_sh_mask.h`).
pub mod mask {
    pub const RLC_ENABLE_F32: u32 = 0x0000_0001;
    pub const SAFE_MODE_CMD: u32 = 0x0000_0001;
    pub const SAFE_MODE_MESSAGE: u32 = 0x0000_001E;
    pub const SAFE_MODE_MESSAGE_SHIFT: u32 = 1;
    pub const SRM_ENABLE: u32 = 0x0000_0001;
    pub const MEC_ME1_PIPE0_RESET: u32 = 0x0001_0000;
    /// `MEC_ME2_PIPE0_RESET`; pipe 1's is the next bit, as ME 1's pipes
    /// 1-3 follow `MEC_ME1_PIPE0_RESET`.
    pub const MEC_ME2_PIPE0_RESET: u32 = 0x0010_0000;
    pub const MEC_ME2_HALT: u32 = 0x1000_0000;
    pub const MEC_ME1_HALT: u32 = 0x4000_0000;
}

/// `CP_MEC_CNTL` after reset: `mmCP_MEC_CNTL_DEFAULT` of
/// `gc_9_0_default.h` (no 9.4.3 default header exists; model value).
pub const CP_MEC_CNTL_RESET_MODEL_VALUE: u32 = 0x5000_0000;

const NAMES: [(&str, (u32, usize)); 7] = [
    ("CP_MEC_CNTL", reg::CP_MEC_CNTL),
    ("CP_INT_CNTL_RING0", reg::CP_INT_CNTL_RING0),
    ("RLC_CNTL", reg::RLC_CNTL),
    ("RLC_SAFE_MODE", reg::RLC_SAFE_MODE),
    ("RLC_CGCG_CGLS_CTRL", reg::RLC_CGCG_CGLS_CTRL),
    ("RLC_SRM_CNTL", reg::RLC_SRM_CNTL),
    ("GB_ADDR_CONFIG", reg::GB_ADDR_CONFIG),
];

/// Why an XCC's MEC runs nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MecRefusal {
    /// No such XCC.
    NoXcc { xcc: usize },
    /// The PSP never put `CP_MEC` and `CP_MEC_ME1` in place.
    NoFirmware { xcc: usize },
    /// `CP_MEC_CNTL` still halts the ME or holds the pipe in reset.
    Halted {
        xcc: usize,
        me: u32,
        pipe: u32,
        cp_mec_cntl: u32,
    },
}

impl core::fmt::Display for MecRefusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MecRefusal::NoXcc { xcc } => write!(f, "no XCC {xcc}"),
            MecRefusal::NoFirmware { xcc } => {
                write!(
                    f,
                    "XCC {xcc}: MEC firmware was never loaded through the PSP"
                )
            }
            MecRefusal::Halted {
                xcc,
                me,
                pipe,
                cp_mec_cntl,
            } => write!(
                f,
                "XCC {xcc}: ME {me} pipe {pipe} halted or in reset (CP_MEC_CNTL {cp_mec_cntl:#x})"
            ),
        }
    }
}

/// One logged register write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    pub xcc: usize,
    pub reg: &'static str,
    pub value: u32,
}

#[derive(Debug, Clone)]
struct Xcc {
    mec_cntl: u32,
    int_cntl: u32,
    rlc_stopped: bool,
    safe_mode: u32,
    in_safe_mode: bool,
    cgcg: u32,
    srm: u32,
    /// `GB_ADDR_CONFIG` (`gfx_v9_4_3_init_golden_registers()` writes
    /// `GOLDEN_GB_ADDR_CONFIG`): stored and read back. The model has no
    /// tiled surfaces, so nothing depends on it; power-on 0 is a model
    /// value.
    gb_addr_config: u32,
}

impl Default for Xcc {
    fn default() -> Self {
        Xcc {
            mec_cntl: CP_MEC_CNTL_RESET_MODEL_VALUE,
            int_cntl: 0,
            rlc_stopped: false,
            safe_mode: 0,
            in_safe_mode: false,
            cgcg: 0,
            srm: 0,
            gb_addr_config: 0,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    xcc: Vec<Xcc>,
    other: BTreeMap<usize, u32>,
    writes: Vec<Write>,
    refusals: Vec<(usize, &'static str)>,
}

/// The RLC/MEC start registers of every XCC of a GC 9.4.3 part.
#[derive(Debug)]
pub struct RlcMecV943 {
    clock: SimClock,
    /// Each XCC's segment bases, in dwords (model values for a part
    /// without a public discovery table).
    bases: Vec<[u32; 8]>,
    loaded: Arc<LoadedFirmware>,
    state: Mutex<State>,
}

impl RlcMecV943 {
    /// XCCs at `bases`, running what `loaded` says the PSP put in place.
    pub fn new(clock: &SimClock, bases: Vec<[u32; 8]>, loaded: Arc<LoadedFirmware>) -> Self {
        let n = bases.len();
        RlcMecV943 {
            clock: clock.clone(),
            bases,
            loaded,
            state: Mutex::new(State {
                xcc: alloc::vec![Xcc::default(); n],
                ..State::default()
            }),
        }
    }

    fn decode(&self, byte_offset: usize) -> Option<(usize, &'static str)> {
        if !byte_offset.is_multiple_of(4) {
            return None;
        }
        let dw = byte_offset / 4;
        self.bases.iter().enumerate().find_map(|(i, b)| {
            NAMES.iter().find_map(|(name, (off, idx))| {
                let base = *b.get(*idx)?;
                (base.checked_add(*off)? as usize == dw).then_some((i, *name))
            })
        })
    }

    /// The byte offsets of every register this block decodes, on every
    /// XCC: what a device routes to it.
    pub fn offsets(&self) -> Vec<usize> {
        self.bases
            .iter()
            .flat_map(|b| {
                NAMES.iter().filter_map(move |(_, (off, idx))| {
                    Some((b.get(*idx)?.checked_add(*off)? as usize) * 4)
                })
            })
            .collect()
    }

    fn rlc_runs(&self, x: &Xcc) -> bool {
        !x.rlc_stopped && self.loaded.has(fw::RLC_G)
    }

    /// Whether XCC `xcc`'s RLC runs: its firmware in place and no driver
    /// write of `RLC_ENABLE_F32 = 0` since.
    pub fn rlc_running(&self, xcc: usize) -> bool {
        self.state
            .lock()
            .xcc
            .get(xcc)
            .is_some_and(|x| self.rlc_runs(x))
    }

    /// Whether XCC `xcc`'s MEC runs its firmware, or why not.
    pub fn mec_run(&self, xcc: usize) -> Result<(), MecRefusal> {
        self.mec_run_on(xcc, 1, 0)
    }

    /// Whether XCC `xcc`'s ME `me` (1 or 2) runs its pipe `pipe`: the
    /// firmware in place and `CP_MEC_CNTL`'s `MEC_ME<me>_HALT` and
    /// `MEC_ME<me>_PIPE<pipe>_RESET` clear (`gc_9_4_3_sh_mask.h`;
    /// `gfx_v9_4_3_xcc_cp_compute_enable(true)` writes 0, clearing all of
    /// them, before `gfx_v9_4_3_xcc_kiq_resume()`). The KIQ lives on ME 2
    /// pipe 1 and the HIQ on ME 2 pipe 0, so a bring-up that leaves ME 2
    /// halted runs neither.
    pub fn mec_run_on(&self, xcc: usize, me: u32, pipe: u32) -> Result<(), MecRefusal> {
        let s = self.state.lock();
        let x = s.xcc.get(xcc).ok_or(MecRefusal::NoXcc { xcc })?;
        if !(self.loaded.has(fw::CP_MEC) && self.loaded.has(fw::CP_MEC_ME1)) {
            return Err(MecRefusal::NoFirmware { xcc });
        }
        let bits = match (me, pipe) {
            (1, 0..=3) => mask::MEC_ME1_HALT | mask::MEC_ME1_PIPE0_RESET << pipe,
            (2, 0..=1) => mask::MEC_ME2_HALT | mask::MEC_ME2_PIPE0_RESET << pipe,
            // No such ME or pipe: nothing runs there.
            _ => u32::MAX,
        };
        if x.mec_cntl & bits != 0 {
            return Err(MecRefusal::Halted {
                xcc,
                me,
                pipe,
                cp_mec_cntl: x.mec_cntl,
            });
        }
        Ok(())
    }

    /// Every register write, in order.
    pub fn writes(&self) -> Vec<Write> {
        self.state.lock().writes.clone()
    }

    /// Writes the model refused to honour, with the XCC.
    pub fn refusals(&self) -> Vec<(usize, &'static str)> {
        self.state.lock().refusals.clone()
    }

    /// Whether XCC `xcc`'s save/restore machine was enabled.
    /// A mode-1 reset: every XCC's RLC and MEC registers back to their
    /// power-on values (`CP_MEC_CNTL` halted,
    /// [`CP_MEC_CNTL_RESET_MODEL_VALUE`]). Kept: the write and refusal
    /// logs. Whether the RLC runs follows the PSP's record of what it
    /// loaded, which its own reset clears.
    pub fn reset(&self) {
        let mut s = self.state.lock();
        let n = s.xcc.len();
        s.xcc = (0..n).map(|_| Xcc::default()).collect();
        s.other.clear();
    }

    pub fn gb_addr_config(&self, xcc: usize) -> Option<u32> {
        self.state.lock().xcc.get(xcc).map(|x| x.gb_addr_config)
    }

    pub fn srm_enabled(&self, xcc: usize) -> bool {
        self.state
            .lock()
            .xcc
            .get(xcc)
            .is_some_and(|x| x.srm & mask::SRM_ENABLE != 0)
    }

    /// Whether XCC `xcc`'s RLC is in safe mode.
    pub fn in_safe_mode(&self, xcc: usize) -> bool {
        self.state
            .lock()
            .xcc
            .get(xcc)
            .is_some_and(|x| x.in_safe_mode)
    }
}

impl RegisterBus for RlcMecV943 {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.clock.advance(ACCESS_NS);
        let s = self.state.lock();
        let Some((i, name)) = self.decode(byte_offset) else {
            return s.other.get(&byte_offset).copied().unwrap_or(0);
        };
        let Some(x) = s.xcc.get(i) else { return 0 };
        match name {
            "CP_MEC_CNTL" => x.mec_cntl,
            "CP_INT_CNTL_RING0" => x.int_cntl,
            "RLC_CNTL" => {
                if self.rlc_runs(x) {
                    mask::RLC_ENABLE_F32
                } else {
                    0
                }
            }
            "RLC_SAFE_MODE" => x.safe_mode,
            "RLC_CGCG_CGLS_CTRL" => x.cgcg,
            "GB_ADDR_CONFIG" => x.gb_addr_config,
            _ => x.srm,
        }
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        let Some((i, name)) = self.decode(byte_offset) else {
            s.other.insert(byte_offset, value);
            return;
        };
        s.writes.push(Write {
            xcc: i,
            reg: name,
            value,
        });
        let runs = s.xcc.get(i).is_some_and(|x| self.rlc_runs(x));
        let mut refusal = None;
        if let Some(x) = s.xcc.get_mut(i) {
            match name {
                "CP_MEC_CNTL" => x.mec_cntl = value,
                "CP_INT_CNTL_RING0" => x.int_cntl = value,
                "RLC_CNTL" => x.rlc_stopped = value & mask::RLC_ENABLE_F32 == 0,
                "RLC_SAFE_MODE" => {
                    x.safe_mode = value;
                    if value & mask::SAFE_MODE_CMD != 0 && runs {
                        let msg =
                            (value & mask::SAFE_MODE_MESSAGE) >> mask::SAFE_MODE_MESSAGE_SHIFT;
                        x.in_safe_mode = msg == 1;
                        x.safe_mode &= !mask::SAFE_MODE_CMD;
                    }
                }
                "RLC_CGCG_CGLS_CTRL" => {
                    if runs && !x.in_safe_mode {
                        refusal = Some("RLC_CGCG_CGLS_CTRL outside RLC safe mode");
                    }
                    x.cgcg = value;
                }
                "GB_ADDR_CONFIG" => x.gb_addr_config = value,
                _ => x.srm = value,
            }
        }
        if let Some(why) = refusal {
            s.refusals.keep((i, why));
        }
    }
}

/// The offsets and masks above, checked against the 9.4.3 headers, and
/// the borrowed gfx9 reset value against `gc_9_0_default.h`.
pub const FACTS: &[Fact] = &[
    Fact::constant(OFF, "regCP_MEC_CNTL", reg::CP_MEC_CNTL.0 as u64),
    Fact::constant(OFF, "regGB_ADDR_CONFIG", reg::GB_ADDR_CONFIG.0 as u64),
    Fact::constant(
        OFF,
        "regGB_ADDR_CONFIG_BASE_IDX",
        reg::GB_ADDR_CONFIG.1 as u64,
    ),
    Fact::constant(OFF, "regCP_MEC_CNTL_BASE_IDX", reg::CP_MEC_CNTL.1 as u64),
    Fact::constant(OFF, "regCP_INT_CNTL_RING0", reg::CP_INT_CNTL_RING0.0 as u64),
    Fact::constant(
        OFF,
        "regCP_INT_CNTL_RING0_BASE_IDX",
        reg::CP_INT_CNTL_RING0.1 as u64,
    ),
    Fact::constant(OFF, "regRLC_CNTL", reg::RLC_CNTL.0 as u64),
    Fact::constant(OFF, "regRLC_CNTL_BASE_IDX", reg::RLC_CNTL.1 as u64),
    Fact::constant(OFF, "regRLC_SAFE_MODE", reg::RLC_SAFE_MODE.0 as u64),
    Fact::constant(
        OFF,
        "regRLC_SAFE_MODE_BASE_IDX",
        reg::RLC_SAFE_MODE.1 as u64,
    ),
    Fact::constant(
        OFF,
        "regRLC_CGCG_CGLS_CTRL",
        reg::RLC_CGCG_CGLS_CTRL.0 as u64,
    ),
    Fact::constant(
        OFF,
        "regRLC_CGCG_CGLS_CTRL_BASE_IDX",
        reg::RLC_CGCG_CGLS_CTRL.1 as u64,
    ),
    Fact::constant(OFF, "regRLC_SRM_CNTL", reg::RLC_SRM_CNTL.0 as u64),
    Fact::constant(OFF, "regRLC_SRM_CNTL_BASE_IDX", reg::RLC_SRM_CNTL.1 as u64),
    Fact::constant(
        SH,
        "RLC_CNTL__RLC_ENABLE_F32_MASK",
        mask::RLC_ENABLE_F32 as u64,
    ),
    Fact::constant(SH, "RLC_SAFE_MODE__CMD_MASK", mask::SAFE_MODE_CMD as u64),
    Fact::constant(
        SH,
        "RLC_SAFE_MODE__MESSAGE_MASK",
        mask::SAFE_MODE_MESSAGE as u64,
    ),
    Fact::constant(
        SH,
        "RLC_SAFE_MODE__MESSAGE__SHIFT",
        mask::SAFE_MODE_MESSAGE_SHIFT as u64,
    ),
    Fact::constant(SH, "RLC_SRM_CNTL__SRM_ENABLE_MASK", mask::SRM_ENABLE as u64),
    Fact::constant(
        SH,
        "CP_MEC_CNTL__MEC_ME1_PIPE0_RESET_MASK",
        mask::MEC_ME1_PIPE0_RESET as u64,
    ),
    Fact::constant(
        SH,
        "CP_MEC_CNTL__MEC_ME2_HALT_MASK",
        mask::MEC_ME2_HALT as u64,
    ),
    Fact::constant(
        SH,
        "CP_MEC_CNTL__MEC_ME1_HALT_MASK",
        mask::MEC_ME1_HALT as u64,
    ),
    Fact::constant(
        "gc_9_0_default.h",
        "mmCP_MEC_CNTL_DEFAULT",
        CP_MEC_CNTL_RESET_MODEL_VALUE as u64,
    ),
];
