//! Start-of-day states (issue 20): a [`VirtualGpu`] as an earlier driver
//! left it, for the bring-up to meet. Each state is made the honest way,
//! by running a driver on the model and letting go of it, never by
//! poking the result into the block models:
//!
//! - [`StartState::Clean`]: power-on, nothing ran (`C2PMSG_81` reads 0).
//! - [`StartState::Amdgpu`]: a full bring-up (MES mapping, a user queue)
//!   left running with no barebell signature in `SCRATCH_REG6/7`: sOS and
//!   PMFW alive, MES and the MEC running, the KIQ, the scheduler ring and
//!   a user queue live, the doorbell aperture open, bus mastering on. The
//!   driver that ran is barebell's own bring-up (*model convention*: the
//!   same engines amdgpu starts, not amdgpu's exact register values);
//!   what amdgpu leaves in `SCRATCH_REG6/7` (nothing) is what this state
//!   has there.
//! - [`StartState::Barebell`]: barebell's earlier run, finished and torn
//!   down: its signature in `SCRATCH_REG7`, `SCRATCH_REG6` cleared by
//!   the teardown, sOS and PMFW alive, every engine halted.
//! - [`StartState::Malformed`]: one of [`Malformed`]'s states.
//!
//! Between the earlier driver and the next, the model's claim is
//! released ([`VirtualGpu::release_claim`]): a new driver instance on the
//! same card.

use alloc::format;
use alloc::string::String;
use barebell_bringup::start::SIGNATURE;
use barebell_bringup::{FirmwareSource, Mapping, Options, Quiet, Step};
use barebell_model::VirtualGpu;

/// Which state the device is left in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartState {
    Clean,
    Amdgpu,
    Barebell,
    Malformed(Malformed),
}

/// The malformed states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// barebell's signature in `SCRATCH_REG7` with `SCRATCH_REG6` still 1:
    /// a run that never reached its teardown (SIGKILL, a crash) left the
    /// device running. tinygrad's `AMDev.__init__` calls its own version
    /// of this "Malformed state. Issuing a full reset."
    Unfinalized,
    /// barebell's signature, finalized, but a VM fault latched in
    /// `GCVM_L2_PROTECTION_FAULT_STATUS` (tinygrad checks
    /// `pf_status_reg("GC")` in the same test).
    FaultLatched,
    /// A driver left the device running (as [`StartState::Amdgpu`]) and
    /// its PMFW then hung: sOS alive, PMFW silent, so no mode-1 reset
    /// through the SMU is possible.
    SmuDead,
}

impl StartState {
    pub const NAMES: [&'static str; 4] = ["clean", "amdgpu", "barebell", "malformed"];

    /// The state a `--start` name stands for (`malformed` is
    /// [`Malformed::Unfinalized`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "clean" => Some(StartState::Clean),
            "amdgpu" => Some(StartState::Amdgpu),
            "barebell" => Some(StartState::Barebell),
            "malformed" => Some(StartState::Malformed(Malformed::Unfinalized)),
            _ => None,
        }
    }
}

/// The fault status the [`Malformed::FaultLatched`] state leaves (a
/// non-zero `GCVM_L2_PROTECTION_FAULT_STATUS`: CID 5 (CPC), read, VMID 1
/// as `gmc_v11_0_process_interrupt()` decodes it; *model value*).
pub const LATCHED_FAULT_STATUS: u32 = 0x0001_0a01;

/// Leaves `gpu` in `state` by running an earlier driver on it with the
/// firmware in `fw`; returns a line saying what was left.
pub fn prepare(
    gpu: &VirtualGpu,
    fw: &dyn FirmwareSource,
    state: StartState,
) -> Result<String, String> {
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Mes),
        ..Default::default()
    };
    let earlier = |what: &str| -> Result<barebell_bringup::Gpu<'_>, String> {
        barebell_bringup::run(gpu, fw, &opts, &Quiet)
            .map_err(|e| format!("the earlier {what} run failed: {e}"))
    };
    // The prepared states are the gfx11/gfx12 model's (its SOC blocks
    // hold the scratch registers they set).
    let g = gpu.gfx11().ok_or_else(|| {
        format!(
            "start states are prepared on the gfx11/gfx12 parts only, not {}",
            gpu.part().name
        )
    })?;
    let power = &g.soc().power;
    let line = match state {
        StartState::Clean => String::from("clean: power-on state, nothing ran"),
        StartState::Amdgpu => {
            // Left running: the bring-up's `Gpu` is let go without its
            // teardown, as a driver that still holds the device (or died)
            // leaves it.
            earlier("amdgpu-like")?.abandon();
            power.set("SCRATCH_REG6", 0);
            power.set("SCRATCH_REG7", 0);
            String::from(
                "amdgpu: a full bring-up left running (sOS, PMFW, MES, MEC, KIQ, rings and a user queue live), no barebell signature",
            )
        }
        StartState::Barebell => {
            let t = earlier("barebell")?.shutdown();
            if !t.complete() {
                return Err(format!("the earlier barebell run's teardown: {t}"));
            }
            String::from(
                "barebell: an earlier barebell run finished and torn down (signature in SCRATCH_REG7, SCRATCH_REG6 = 0)",
            )
        }
        StartState::Malformed(m) => {
            let up = earlier("barebell")?;
            match m {
                Malformed::Unfinalized | Malformed::SmuDead => up.abandon(),
                Malformed::FaultLatched => {
                    let t = up.shutdown();
                    if !t.complete() {
                        return Err(format!("the earlier barebell run's teardown: {t}"));
                    }
                }
            }
            let (reg7, reg6) = match m {
                Malformed::Unfinalized => (SIGNATURE, 1),
                Malformed::FaultLatched => (SIGNATURE, 0),
                Malformed::SmuDead => (0, 0),
            };
            power.set("SCRATCH_REG7", reg7);
            power.set("SCRATCH_REG6", reg6);
            match m {
                Malformed::Unfinalized => String::from(
                    "malformed: barebell's signature with SCRATCH_REG6 = 1 (a run killed before its teardown left the device running)",
                ),
                Malformed::FaultLatched => {
                    let hub = g.gfxhub();
                    let reg = hub
                        .hub()
                        .all
                        .iter()
                        .find(|r| {
                            r.name == "GCVM_L2_PROTECTION_FAULT_STATUS"
                                || r.name == "GCVM_L2_PROTECTION_FAULT_STATUS_LO32"
                        })
                        .copied()
                        .ok_or("the GFXHUB table has no GCVM_L2_PROTECTION_FAULT_STATUS")?;
                    hub.set_device_reg(reg, LATCHED_FAULT_STATUS);
                    String::from(
                        "malformed: barebell's signature, finalized, with a VM fault latched in the GFXHUB",
                    )
                }
                Malformed::SmuDead => {
                    g.soc().smu.set_hung(true);
                    String::from(
                        "malformed: left running with no signature, sOS alive, PMFW hung (answers no message)",
                    )
                }
            }
        }
    };
    gpu.release_claim();
    Ok(line)
}
