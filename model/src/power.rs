//! Clock gating, power and scratch registers around the GC: what tinygrad's
//! AM writes after its GFX and SDMA init (`AM_GFX.init_hw`,
//! `AM_GFX.set_clockgating_state`, `AM_SOC.set_clockgating_state`,
//! `AMDev.__init__`'s boot flags) and Linux's `gfx_v11_0` /
//! `gfx_v12_0` clock-gating paths.
//!
//! - `RLC_SAFE_MODE`: the driver writes `CMD` (with `MESSAGE` 1 to enter,
//!   0 to leave) and, on entry, polls until the RLC clears `CMD`
//!   (`gfx_v11_0_set_safe_mode()` / `_unset_safe_mode()`). Only running
//!   RLC firmware acknowledges: the model clears `CMD` when the RLC
//!   autoload has completed ([`PowerHooks::rlc_running`]) and
//!   `RLC_CNTL.RLC_ENABLE_F32` is set; a request nobody can acknowledge is
//!   refused (the driver would time out on entry).
//! - Clock-gating controls (`RLC_CGCG_CGLS_CTRL`,
//!   `RLC_CGTT_MGCG_OVERRIDE`) are taken as written; writes outside safe
//!   mode are counted ([`PowerModel::cg_writes_outside_safe_mode`]): both
//!   drivers change them inside it (`gfx_v11_0_update_gfx_clock_gating()`
//!   brackets with `amdgpu_gfx_rlc_enter_safe_mode()`), what the RLC does
//!   otherwise is not public.
//! - `RLC_SRM_CNTL` (the RLC's save/restore machine) is taken as written
//!   from its reset value (`AUTO_INCR_ADDR`); [`PowerModel::srm_enabled`]
//!   tells whether a driver turned `SRM_ENABLE` on, as
//!   `gfx_v11_0_rlc_enable_srm()` / `gfx_v12_0_rlc_enable_srm()` do in
//!   `gfx_v1x_0_rlc_resume()` with PSP loading (tinygrad's
//!   `AM_GFX.init_hw()` too). What the RLC does without it (it saves and
//!   restores registers around power gating) is not public, so nothing
//!   is refused.
//! - `SCRATCH_REG0..7` are plain storage the GPU never writes: they keep
//!   what the driver left across driver instances (tinygrad's partial
//!   boot reads `SCRATCH_REG7`/`SCRATCH_REG6`) and only a mode-1 reset
//!   returns them to their default (0).
//!
//! Reset values: `gc_11_0_0_default.h` on Navi31; on Navi48 (no GC 12
//! default header) the same numbers (*model value*: the registers and
//! their fields are the same in `gc_12_0_0_sh_mask.h`). `HDP_MEM_POWER_CTRL`
//! and `MM_ATC_L2_MISC_CG` read 0 (*model value*, no default header).

use crate::SimClock;
use crate::soc::{RefusalLog, RegStore, field};
use crate::socregs::{self, Reg};
use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::ip::Generation;
use barebell::regs::IpBases;
use barebell_facts::Fact;
use spin::Mutex;

/// `RLC_SAFE_MODE` and `RLC_CNTL` fields (equal in GC 11.0.0 and 12.0.0).
pub mod rlc {
    pub const SAFE_MODE_CMD: u32 = 0x0000_0001;
    pub const SAFE_MODE_MESSAGE: u32 = 0x0000_001E;
    pub const ENABLE_F32: u32 = 0x0000_0001;
    /// `RLC_SRM_CNTL__SRM_ENABLE_MASK`.
    pub const SRM_ENABLE: u32 = 0x0000_0001;
}

const D: &str = "gc_11_0_0_default.h";

pub const FACTS: &[Fact] = &[
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "RLC_SAFE_MODE__CMD_MASK",
        rlc::SAFE_MODE_CMD as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "RLC_SAFE_MODE__MESSAGE_MASK",
        rlc::SAFE_MODE_MESSAGE as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "RLC_CNTL__RLC_ENABLE_F32_MASK",
        rlc::ENABLE_F32 as u64,
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "RLC_SAFE_MODE__CMD_MASK",
        rlc::SAFE_MODE_CMD as u64,
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "RLC_SAFE_MODE__MESSAGE_MASK",
        rlc::SAFE_MODE_MESSAGE as u64,
    ),
    Fact::constant("gc_11_0_0_default.h", "regSCRATCH_REG6_DEFAULT", 0),
    Fact::constant(D, "regSCRATCH_REG7_DEFAULT", 0),
    Fact::constant(D, "regRLC_CNTL_DEFAULT", RLC_CNTL_DEFAULT as u64),
    Fact::constant(D, "regRLC_SRM_CNTL_DEFAULT", RLC_SRM_CNTL_DEFAULT as u64),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "RLC_SRM_CNTL__SRM_ENABLE_MASK",
        rlc::SRM_ENABLE as u64,
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "RLC_SRM_CNTL__SRM_ENABLE_MASK",
        rlc::SRM_ENABLE as u64,
    ),
    Fact::constant(D, "regRLC_SPM_MC_CNTL_DEFAULT", 0),
    Fact::constant(D, "regRLC_SAFE_MODE_DEFAULT", 0),
    Fact::constant(
        D,
        "regRLC_CGCG_CGLS_CTRL_DEFAULT",
        RLC_CGCG_CGLS_CTRL_DEFAULT as u64,
    ),
    Fact::constant(
        D,
        "regRLC_CGTT_MGCG_OVERRIDE_DEFAULT",
        RLC_CGTT_MGCG_OVERRIDE_DEFAULT as u64,
    ),
    Fact::constant(
        D,
        "regCP_RB_WPTR_POLL_CNTL_DEFAULT",
        CP_RB_WPTR_POLL_CNTL_DEFAULT as u64,
    ),
    Fact::constant(D, "regCP_INT_CNTL_DEFAULT", 0),
    Fact::constant(D, "regGRBM_SOFT_RESET_DEFAULT", 0),
    Fact::constant(D, "regSPI_COMPUTE_QUEUE_RESET_DEFAULT", 0),
];

const RLC_CNTL_DEFAULT: u32 = 0x0000_0001;
const RLC_SRM_CNTL_DEFAULT: u32 = 0x0000_0002;
const RLC_CGCG_CGLS_CTRL_DEFAULT: u32 = 0x0001_003c;
const RLC_CGTT_MGCG_OVERRIDE_DEFAULT: u32 = 0x0006_07ff;
const CP_RB_WPTR_POLL_CNTL_DEFAULT: u32 = 0x0040_0000;

/// What the block needs from the rest of the GPU.
pub struct PowerHooks {
    /// Whether the RLC autoload completed (RLC firmware in place).
    pub rlc_running: Box<dyn Fn() -> bool + Send + Sync>,
}

impl core::fmt::Debug for PowerHooks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PowerHooks").finish_non_exhaustive()
    }
}

/// Where the block's registers are: the GC, HDP and MMHUB bases and
/// versions.
#[derive(Debug, Clone, Copy)]
pub struct PowerPlacement {
    pub generation: Generation,
    pub gc: IpBases,
    pub hdp: (IpBases, (u8, u8, u8)),
    pub mmhub: (IpBases, (u8, u8, u8)),
}

#[derive(Debug, Default)]
struct State {
    safe_mode: bool,
    safe_mode_entries: u32,
    cg_outside: u32,
    soft_resets: Vec<u32>,
}

/// The block.
pub struct PowerModel {
    stores: Vec<RegStore>,
    safe_mode_at: usize,
    rlc_cntl_at: usize,
    cg_at: [usize; 2],
    soft_reset_at: usize,
    hooks: PowerHooks,
    log: Arc<RefusalLog>,
    state: Mutex<State>,
}

impl core::fmt::Debug for PowerModel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PowerModel")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

fn gc_registers(g: Generation) -> Vec<(Reg, u32)> {
    macro_rules! list {
        ($r:path) => {{
            use $r as r;
            alloc::vec![
                (r::SCRATCH_REG4, 0),
                (r::SCRATCH_REG5, 0),
                (r::SCRATCH_REG6, 0),
                (r::SCRATCH_REG7, 0),
                (r::RLC_CNTL, RLC_CNTL_DEFAULT),
                (r::RLC_SRM_CNTL, RLC_SRM_CNTL_DEFAULT),
                (r::RLC_SPM_MC_CNTL, 0),
                (r::RLC_SAFE_MODE, 0),
                (r::RLC_CGCG_CGLS_CTRL, RLC_CGCG_CGLS_CTRL_DEFAULT),
                (r::RLC_CGTT_MGCG_OVERRIDE, RLC_CGTT_MGCG_OVERRIDE_DEFAULT),
                (r::CP_RB_WPTR_POLL_CNTL, CP_RB_WPTR_POLL_CNTL_DEFAULT),
                (r::CP_INT_CNTL, 0),
                (r::GRBM_SOFT_RESET, 0),
                (r::SPI_COMPUTE_QUEUE_RESET, 0),
            ]
        }};
    }
    match g {
        // No GC 9.4.3 power registers are modelled: none are listed.
        Generation::Gfx90a | Generation::Gfx94 => Vec::new(),
        Generation::Gfx11 => list!(socregs::gc_11_0_0),
        Generation::Gfx12 => list!(socregs::gc_12_0_0),
    }
}

impl PowerModel {
    /// `None` when a register of the block has no base in the table or
    /// the HDP/MMHUB version has no table.
    pub fn new(
        clock: &SimClock,
        place: PowerPlacement,
        hooks: PowerHooks,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        let (gc, missing) = RegStore::new(clock, &place.gc, &gc_registers(place.generation));
        if !missing.is_empty() {
            return None;
        }
        let hdp_reg = match place.hdp.1 {
            (6, 0, 0) => socregs::hdp_6_0_0::HDP_MEM_POWER_CTRL,
            (7, 0, 0) => socregs::hdp_7_0_0::HDP_MEM_POWER_CTRL,
            _ => return None,
        };
        let (hdp, missing) = RegStore::new(clock, &place.hdp.0, &[(hdp_reg, 0)]);
        if !missing.is_empty() {
            return None;
        }
        let mut stores = alloc::vec![gc, hdp];
        // MMHUB 4.1.0 has no ATC L2 CG register.
        if place.mmhub.1 == (3, 0, 0) {
            let (mm, missing) = RegStore::new(
                clock,
                &place.mmhub.0,
                &[(socregs::mmhub_3_0_0::MM_ATC_L2_MISC_CG, 0)],
            );
            if !missing.is_empty() {
                return None;
            }
            stores.push(mm);
        }
        let gc = &stores[0];
        Some(PowerModel {
            safe_mode_at: gc.at("RLC_SAFE_MODE")?,
            rlc_cntl_at: gc.at("RLC_CNTL")?,
            cg_at: [
                gc.at("RLC_CGCG_CGLS_CTRL")?,
                gc.at("RLC_CGTT_MGCG_OVERRIDE")?,
            ],
            soft_reset_at: gc.at("GRBM_SOFT_RESET")?,
            stores,
            hooks,
            log,
            state: Mutex::new(State::default()),
        })
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        self.stores.iter().flat_map(RegStore::offsets).collect()
    }

    fn store(&self, byte_offset: usize) -> Option<&RegStore> {
        self.stores.iter().find(|s| s.slot(byte_offset).is_some())
    }

    /// Whether `RLC_SRM_CNTL.SRM_ENABLE` is set.
    pub fn srm_enabled(&self) -> bool {
        self.get("RLC_SRM_CNTL")
            .is_some_and(|v| v & rlc::SRM_ENABLE != 0)
    }

    /// A register's value as the device holds it, by name.
    pub fn get(&self, name: &str) -> Option<u32> {
        self.stores
            .iter()
            .find_map(|s| s.at(name).map(|o| s.get(o)))
    }

    /// Sets a register by name from the device side (no bus access): what
    /// a previous driver left, for a start-of-day state. Returns whether
    /// the model has a register of that name.
    pub fn set(&self, name: &str, value: u32) -> bool {
        match self.stores.iter().find_map(|s| s.at(name).map(|o| (s, o))) {
            Some((s, o)) => {
                s.set(o, value);
                true
            }
            None => false,
        }
    }

    pub fn in_safe_mode(&self) -> bool {
        self.state.lock().safe_mode
    }

    pub fn safe_mode_entries(&self) -> u32 {
        self.state.lock().safe_mode_entries
    }

    pub fn cg_writes_outside_safe_mode(&self) -> u32 {
        self.state.lock().cg_outside
    }

    /// Values written to `GRBM_SOFT_RESET`, in order.
    pub fn soft_resets(&self) -> Vec<u32> {
        self.state.lock().soft_resets.clone()
    }

    /// Back to the power-on state (mode-1 reset), scratch included.
    pub fn reset(&self) {
        for s in &self.stores {
            s.reset();
        }
        *self.state.lock() = State::default();
    }

    fn on_safe_mode(&self, value: u32) {
        if value & rlc::SAFE_MODE_CMD == 0 {
            return;
        }
        let gc = &self.stores[0];
        let f32 = gc.get(self.rlc_cntl_at) & rlc::ENABLE_F32 != 0;
        if !(self.hooks.rlc_running)() || !f32 {
            self.log.push(
                "RLC",
                format!(
                    "RLC_SAFE_MODE = {value:#x} with no RLC firmware running (autoload not \
                     complete or RLC_CNTL.RLC_ENABLE_F32 clear): nothing acknowledges it \
                     (gfx_v11_0_set_safe_mode() waits for CMD to clear)"
                ),
            );
            return;
        }
        let enter = field(value, rlc::SAFE_MODE_MESSAGE) == 1;
        gc.set(self.safe_mode_at, value & !rlc::SAFE_MODE_CMD);
        let mut s = self.state.lock();
        s.safe_mode = enter;
        if enter {
            s.safe_mode_entries += 1;
        }
    }
}

impl RegisterBus for PowerModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        match self.store(byte_offset) {
            Some(s) => s.host_read(byte_offset),
            None => barebell::bus::ALL_ONES,
        }
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        let Some(store) = self.store(byte_offset) else {
            return;
        };
        store.host_write(byte_offset, value);
        if byte_offset == self.safe_mode_at {
            self.on_safe_mode(value);
        } else if self.cg_at.contains(&byte_offset) {
            let mut s = self.state.lock();
            if !s.safe_mode {
                s.cg_outside += 1;
            }
        } else if byte_offset == self.soft_reset_at {
            self.state.lock().soft_resets.push(value);
        }
    }
}
