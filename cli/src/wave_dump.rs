//! `barebell run --wave-dump`: a wave's registers from the model's
//! interpreter (SGPRs, VGPRs, PC, EXEC), for the wave that faulted or
//! hung, or for a chosen wave when it ends.

use crate::target::Device;
use barebell_isa::dump::{WaveDump, WaveId};
use barebell_isa::launch::Dumps;
use barebell_kernel::job::Job;
use serde_json::{Value, json};

/// Which wave `--wave-dump` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The wave that faulted, or was running when the kernel was stopped
    /// (the instruction bound, `--timeout-s`, a signal).
    Fault,
    /// This wave, when it executes `s_endpgm` (and the faulting wave
    /// still, if the kernel faults).
    Wave(WaveId),
}

impl Which {
    pub fn watch(self) -> Option<WaveId> {
        match self {
            Which::Fault => None,
            Which::Wave(w) => Some(w),
        }
    }
}

/// Parses `fault`, or `X[,Y[,Z]]/W`: wave W of workgroup (X, Y, Z).
pub fn parse(s: &str) -> Result<Which, String> {
    if s == "fault" {
        return Ok(Which::Fault);
    }
    let bad = || {
        format!(
            "`{s}`: give `fault`, or a workgroup and a wave as X[,Y[,Z]]/W (wave 1 of workgroup 3: `3/1`)"
        )
    };
    let (group, wave) = s.split_once('/').ok_or_else(bad)?;
    let num = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
    let mut workgroup = [0u32; 3];
    let parts: Vec<&str> = group.split(',').collect();
    if parts.len() > 3 {
        return Err(bad());
    }
    for (i, p) in parts.iter().enumerate() {
        workgroup[i] = num(p)?;
    }
    Ok(Which::Wave(WaveId {
        workgroup,
        wave: num(wave)?,
    }))
}

/// Refuses a wave the job's grid does not have, before the device is
/// touched: the workgroup must lie in the grid, the wave in the
/// workgroup (`wave_size` lanes per wave).
pub fn check(which: Which, job: &Job, wave_size: u32) -> Result<(), String> {
    let Which::Wave(w) = which else {
        return Ok(());
    };
    let g = &job.geometry;
    let mut lanes = 1u64;
    for i in 0..3 {
        // `grid` counts workgroups (HIP's gridDim).
        let groups = u64::from(g.grid[i]);
        if u64::from(w.workgroup[i]) >= groups {
            let [x, y, z] = w.workgroup;
            return Err(format!(
                "--wave-dump: the grid has no workgroup ({x}, {y}, {z}): {groups} workgroup(s) along {}",
                ["x", "y", "z"][i]
            ));
        }
        lanes *= u64::from(g.block[i].max(1));
    }
    let waves = lanes.div_ceil(u64::from(wave_size.max(1)));
    if u64::from(w.wave) >= waves {
        return Err(format!(
            "--wave-dump: a workgroup of {lanes} work-items has {waves} wave(s) of {wave_size} (0 to {})",
            waves - 1
        ));
    }
    Ok(())
}

/// Installs the watch on a model device (a GPU has no interpreter:
/// refused before it is opened, see [`refuse_on_gpu`]).
pub fn set_watch(device: &Device, watch: Option<WaveId>) {
    match device {
        Device::Model(m) => m.cp().shader.watch = watch,
        Device::Hw(_) => {}
    }
}

/// The model's dumps of the last dispatch.
pub fn dumps(device: &Device) -> Option<Dumps> {
    match device {
        Device::Model(m) => Some(m.cp().shader.dumps.clone()),
        Device::Hw(_) => None,
    }
}

/// Why `--wave-dump` is refused on a GPU.
pub const ON_GPU: &str = "--wave-dump reads the model's interpreter; reading a GPU's waves (the SQ's SQ_IND_INDEX/SQ_IND_DATA registers, as umr does) is not built";

/// The text a failed run appends: the stopped wave, or why there is none.
pub fn after_error(which: Which, d: &Dumps) -> String {
    match &d.stopped {
        Some(x) => format!("\n{x}"),
        None if which == Which::Fault => {
            "\n--wave-dump: no wave stopped the dispatch (the error came before or after the waves ran)"
                .to_string()
        }
        None => String::new(),
    }
}

/// The dump as JSON: registers as numbers, VGPRs as one array of lanes
/// per register.
pub fn to_json(x: &WaveDump) -> Value {
    let vgprs: Vec<Value> = (0..x.nvgpr)
        .map(|r| {
            Value::from(
                (0..x.wave_size)
                    .map(|l| x.vgpr(r, l).unwrap_or(0))
                    .collect::<Vec<u32>>(),
            )
        })
        .collect();
    json!({
        "workgroup": x.id.workgroup,
        "wave": x.id.wave,
        "reason": x.reason.as_str(),
        "pc": x.pc,
        "exec": x.exec,
        "vcc": x.vcc,
        "scc": x.scc,
        "m0": x.m0,
        "wave_size": x.wave_size,
        "sgprs": x.sgprs,
        "ttmps": x.ttmps,
        "vgprs": vgprs,
    })
}
