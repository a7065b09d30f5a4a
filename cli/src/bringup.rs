//! `barebell bringup`: the one bring-up sequence (`barebell-bringup`) on
//! the device model (the default) or on a GPU (`--vfio`, `--sysfs`;
//! unverified on hardware). Only the platform differs between the two:
//! the model is a `VirtualGpu` over host memory laid out as the hardware
//! targets lay theirs.

use crate::report;
use crate::target::{self, TargetArgs};
use barebell::bus::trace::Access;
use barebell_bringup::{FirmwareDir, Options, Sink, Step};
use clap::{Args, ValueEnum};
use std::cell::Cell;
use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::stop::{
    handle as handle_stop_signals, requested as stop_signal, status as signal_status,
};

/// `--until`: the last step to run.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepArg {
    Discovery,
    /// The start-of-day state: detected, then reset or re-inited as needed.
    Start,
    Nbio,
    Gmc,
    Ih,
    Psp,
    Rlc,
    Mes,
    Rings,
    Queue,
}

impl From<StepArg> for Step {
    fn from(s: StepArg) -> Step {
        match s {
            StepArg::Discovery => Step::Discovery,
            StepArg::Start => Step::Start,
            StepArg::Nbio => Step::Nbio,
            StepArg::Gmc => Step::Gmc,
            StepArg::Ih => Step::Ih,
            StepArg::Psp => Step::Psp,
            StepArg::Rlc => Step::Rlc,
            StepArg::Mes => Step::Mes,
            StepArg::Rings => Step::Rings,
            StepArg::Queue => Step::Queue,
        }
    }
}

pub use crate::target::MappingArg;

/// `--start`: the state the model is left in before the bring-up.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartArg {
    /// Power-on: nothing ran.
    Clean,
    /// A full bring-up left running, no barebell signature (what amdgpu,
    /// or any driver, leaves): the bring-up mode-1 resets first.
    Amdgpu,
    /// barebell's earlier run, finished and torn down: the bring-up
    /// re-inits partially (no PSP step).
    Barebell,
    /// barebell's signature from a run that was never torn down: the
    /// bring-up mode-1 resets first.
    Malformed,
}

impl StartArg {
    fn state(self) -> barebell_model_host::start::StartState {
        use barebell_model_host::start::{Malformed, StartState};
        match self {
            StartArg::Clean => StartState::Clean,
            StartArg::Amdgpu => StartState::Amdgpu,
            StartArg::Barebell => StartState::Barebell,
            StartArg::Malformed => StartState::Malformed(Malformed::Unfinalized),
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct BringupArgs {
    /// Stop after this step. Without --mapping the bring-up ends at rlc
    /// (RLC autoload and GFXHUB); mes, rings and queue need a mapping.
    #[arg(long, value_enum, default_value = "queue")]
    pub until: StepArg,
    /// After rlc: start MES, bring up the rings, map one user queue this
    /// way and complete a first packet through it.
    #[arg(long, value_enum)]
    pub mapping: Option<MappingArg>,
    /// Print every register access with its block and register name.
    #[arg(long)]
    pub trace: bool,
    /// Where the amdgpu firmware blobs are. The model needs them too: its
    /// PSP checks every image it is sent against these files (Debian's
    /// firmware-amd-graphics installs them here).
    #[arg(long, default_value = FirmwareDir::SYSTEM)]
    pub firmware_dir: PathBuf,
    /// After the bring-up, read `regs`, `queue` and `ring` commands from
    /// stdin (one per line, `quit` ends) and run them against this
    /// device, then unmap the queue.
    #[arg(long)]
    pub shell: bool,
    /// Write a JSON report of the run to FILE: the discovered IPs, the
    /// firmware files and their header versions, each step's line and
    /// timing, the full register trace, latched VM faults and the
    /// teardown. Written on success, on error and after a signal; see
    /// docs/hardware.md for the format.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Write the run as a Chrome/Perfetto trace-event JSON file (open it
    /// at ui.perfetto.dev): each step a slice, each step line and every
    /// register access an instant event. Written on success, on error and
    /// after a signal.
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,
    /// The model only: leave the model in this start-of-day state first,
    /// by running an earlier driver on it (a GPU is in whatever state
    /// its last driver left). The bring-up's start step then detects it
    /// and acts: nothing (clean), a mode-1 reset through the SMU (amdgpu,
    /// malformed), or a partial re-init without the PSP step (barebell).
    /// See docs/hardware.md, "When the card was left by amdgpu or by
    /// barebell".
    #[arg(long, value_enum, value_name = "STATE")]
    pub start: Option<StartArg>,
    /// The device: the model (default, with --part) or a GPU.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// Prints steps as `step <name>: <detail>` and, with `--trace`, every
/// access as `  W GC.CP_HQD_ACTIVE @0x… = 0x…`.
#[derive(Debug)]
pub struct TextSink {
    pub trace: bool,
    accesses: Cell<u64>,
    start: std::time::Instant,
}

impl TextSink {
    pub fn new(trace: bool) -> Self {
        TextSink {
            trace,
            accesses: Cell::new(0),
            start: std::time::Instant::now(),
        }
    }
}

impl Sink for TextSink {
    fn step(&self, step: Step, detail: fmt::Arguments<'_>) {
        // A closed stdout (SIGPIPE, handled) must not stop the teardown.
        let _ = writeln!(std::io::stdout(), "step {step}: {detail}");
    }
    fn cancelled(&self) -> bool {
        stop_signal().is_some()
    }
    fn tracing(&self) -> bool {
        self.trace
    }
    fn access(&self, a: Access) {
        self.accesses.set(self.accesses.get() + 1);
        let _ = writeln!(std::io::stdout(), "  {a}");
    }
    fn wall_ns(&self) -> Option<u64> {
        u64::try_from(self.start.elapsed().as_nanos()).ok()
    }
    fn fault(&self, f: &barebell::gmc::hub::VmFault) {
        let _ = writeln!(std::io::stdout(), "fault: {f}");
    }
    fn interrupt(&self, i: &barebell::ih::Interrupt) {
        let _ = writeln!(std::io::stdout(), "interrupt: {i}");
    }
}

pub fn run(args: BringupArgs) -> ExitCode {
    handle_stop_signals();
    let r = bring_up(&args);
    if let Some(sig) = stop_signal() {
        eprintln!(
            "barebell bringup: interrupted by {sig}; the device was torn down (see the teardown report)"
        );
        if let Err(e) = r {
            eprintln!("barebell bringup: {e}");
        }
        return ExitCode::from(signal_status());
    }
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barebell bringup: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints a line to stdout, ignoring a closed pipe (SIGPIPE is handled:
/// the teardown must still run).
macro_rules! out {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// The target, or the error; with `--report`, a report that says which
/// device could not be opened and why.
fn open_device(args: &BringupArgs, fw: &FirmwareDir) -> Result<target::Device, String> {
    target::open(&args.target, fw, 1).or_else(|e| {
        // Nothing ran; the report still says which device and why.
        if let Some(path) = &args.report {
            let name = match args.target.hardware() {
                Some(h) => h.to_string(),
                None => format!("model {}", args.target.part.name()),
            };
            report::write(path, &report::unopened(name, &e))?;
            out!("report: {}", path.display());
        }
        Err(e)
    })
}

/// `--start STATE`: the model left as an earlier driver would leave it;
/// the line that says how.
fn prepare_start(
    args: &BringupArgs,
    device: &target::Device,
    fw: &FirmwareDir,
) -> Result<Option<String>, String> {
    match (args.start, device) {
        (None, _) => Ok(None),
        (Some(st), target::Device::Model(m)) => {
            if m.gfx11().is_none() {
                return Err(
                    "--start: the GC 9.4.3 model parts start clean only (no prepared start states yet)"
                        .into(),
                );
            }
            let line = barebell_model_host::start::prepare(m, fw, st.state())
                .map_err(|e| format!("--start: {e}"))?;
            out!("model start state: {line}");
            Ok(Some(line))
        }
        (Some(_), target::Device::Hw(_)) => Err(
            "--start prepares the model; a GPU is in whatever state its last driver left it (the start step reads it)".into(),
        ),
    }
}

fn bring_up(args: &BringupArgs) -> Result<(), String> {
    let fw = FirmwareDir(args.firmware_dir.clone());
    // A mapping the part lacks is refused before the device is touched.
    let mapping = match args.mapping {
        Some(m) if args.target.hardware().is_none() => {
            Some(args.target.part.check_mapping(m.into())?)
        }
        m => m.map(Into::into),
    };
    let opts = Options {
        until: args.until.into(),
        mapping,
        ..Default::default()
    };
    let device = open_device(args, &fw)?;
    out!("{}", device.describe());
    let prepared = prepare_start(args, &device, &fw)?;
    // Before the bring-up hands the DMA region to the device.
    device.recheck_dma()?;
    let text = TextSink::new(args.trace);
    let recorder = args.report.as_ref().map(|_| report::Recorder::new(&text));
    let inner: &dyn Sink = match &recorder {
        Some(r) => r,
        None => &text,
    };
    let perfetto = args.perfetto.as_ref().map(|_| {
        crate::perfetto::PerfettoSink::new(inner, &format!("barebell bringup: {}", device.name()))
    });
    let unnamed: &dyn Sink = match &perfetto {
        Some(p) => p,
        None => inner,
    };
    let naming = crate::naming::NamingSink::new(unnamed);
    let sink: &dyn Sink = &naming;
    let mut ips = None;
    let mut start = None;
    // Every exit from here runs the teardown: an error inside `run`
    // tears down before it returns (the report rides in the error), a
    // signal ends `run` with `Interrupted` the same way, and a finished
    // bring-up is shut down below.
    let result = {
        let platform = device.platform();
        barebell_bringup::run(platform, &fw, &opts, sink).map(|mut gpu| {
            if args.shell && stop_signal().is_none() {
                out!(
                    "shell: {} brought up to {}; commands: regs read|write, queue dump, ring decode, vm walk, help, quit",
                    device.name(),
                    gpu.reached
                );
                let input = crate::shell_input::ShellInput::open();
                let echo = input.echo();
                crate::introspect::shell(
                    &mut gpu,
                    args.target.hardware(),
                    input,
                    echo,
                    std::io::stdout(),
                );
            }
            if recorder.is_some() {
                ips = Some(gpu.ips.clone());
            }
            start = gpu.start;
            gpu.shutdown()
        })
    };
    let (mut outcome, complete) = match &result {
        Ok(report) => {
            // The sink printed each stage as it ran.
            let complete = report.complete();
            out!(
                "teardown {}",
                if complete { "complete" } else { "INCOMPLETE" }
            );
            let r = if complete {
                Ok(())
            } else {
                Err(format!("{}: the teardown was incomplete", device.name()))
            };
            (r, complete)
        }
        Err(e) => {
            let complete = e.teardown.as_deref().is_some_and(|t| t.complete());
            (
                Err(format!("{}: {e}{}", device.name(), device.diagnostics())),
                complete,
            )
        }
    };
    // And after: a page that moved while the device had its address.
    if let Err(e) = device.recheck_dma() {
        out!("{e}");
        outcome = outcome.and(Err(e));
    }
    let model_check = device.quiescence().map(|q| match q {
        Ok(()) => barebell_model::QUIESCENT.to_string(),
        Err(why) => format!("NOT quiescent: {why}"),
    });
    if let Some(m) = &model_check {
        out!("model check: {m}");
    }
    if let (Some(r), Some(path)) = (&recorder, &args.report) {
        let rep = r.report(
            report::TargetRecord {
                name: device.name().to_string(),
                description: device.describe(),
            },
            &fw,
            report::Ending {
                ips: ips.as_ref(),
                start: start
                    .as_ref()
                    .map(|r| report::StartRecord::new(r, prepared.clone())),
                teardown: match &result {
                    Ok(t) => Some(t),
                    Err(e) => e.teardown.as_deref(),
                },
                error: result.as_ref().err(),
                interrupted_by: stop_signal(),
                model_check,
            },
        );
        match report::write(path, &rep) {
            Ok(()) => out!("report: {}", path.display()),
            Err(e) => outcome = outcome.and(Err(e)),
        }
    }
    if args.trace {
        let (total, unnamed) = naming.counts();
        let untabled = naming.untabled();
        let why = if untabled.is_empty() {
            "no Linux 6.12 header of the device's IP versions declares a register at their offsets"
                .to_string()
        } else {
            format!(
                "no register table of barebell covers {}, and the tables it has name nothing at the rest",
                untabled.join(", ")
            )
        };
        out!("trace: {total} register accesses, {unnamed} unnamed ({why})");
    }
    if let (Some(p), Some(path)) = (&perfetto, &args.perfetto) {
        match p.finish(path) {
            Ok(n) => out!("perfetto: {} ({n} register accesses)", path.display()),
            Err(e) => outcome = outcome.and(Err(e)),
        }
    }
    device.finish(complete);
    outcome
}
