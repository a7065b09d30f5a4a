//! `barebell bringup`: the one bring-up sequence (`barebell-bringup`) on
//! the device model (the default) or on a GPU (`--vfio`, `--sysfs`;
//! unverified on hardware). Only the platform differs between the two:
//! the model is a `VirtualGpu` over host memory laid out as the hardware
//! targets lay theirs.

use crate::target::{self, TargetArgs};
use barebell::bus::trace::Access;
use barebell_bringup::{FirmwareDir, Options, Sink, Step};
use clap::{Args, ValueEnum};
use std::cell::Cell;
use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

/// `--until`: the last step to run.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepArg {
    Discovery,
    Nbio,
    Gmc,
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
            StepArg::Nbio => Step::Nbio,
            StepArg::Gmc => Step::Gmc,
            StepArg::Psp => Step::Psp,
            StepArg::Rlc => Step::Rlc,
            StepArg::Mes => Step::Mes,
            StepArg::Rings => Step::Rings,
            StepArg::Queue => Step::Queue,
        }
    }
}

pub use crate::target::MappingArg;

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
        println!("step {step}: {detail}");
    }
    fn tracing(&self) -> bool {
        self.trace
    }
    fn access(&self, a: Access) {
        self.accesses.set(self.accesses.get() + 1);
        println!("  {a}");
    }
    fn wall_ns(&self) -> Option<u64> {
        u64::try_from(self.start.elapsed().as_nanos()).ok()
    }
}

pub fn run(args: BringupArgs) -> ExitCode {
    match bring_up(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barebell bringup: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bring_up(args: &BringupArgs) -> Result<(), String> {
    let fw = FirmwareDir(args.firmware_dir.clone());
    let opts = Options {
        until: args.until.into(),
        mapping: args.mapping.map(Into::into),
        ..Default::default()
    };
    let device = target::open(&args.target, &fw, 1)?;
    println!("{}", device.describe());
    let sink = TextSink::new(args.trace);
    let result = {
        let platform = device.platform();
        barebell_bringup::run(platform, &fw, &opts, &sink).map(|mut gpu| {
            if args.shell {
                println!(
                    "shell: {} brought up to {}; commands: regs read|write, queue dump, ring decode, quit",
                    device.name(),
                    gpu.reached
                );
                crate::introspect::shell(
                    &mut gpu,
                    args.target.hardware(),
                    std::io::stdin().lock(),
                    std::io::stdout(),
                );
            }
            if let Some(q) = gpu.queue {
                q.unmap().map(|()| {
                    println!("step unmap: the queue is off the device");
                })
            } else {
                Ok(())
            }
        })
    };
    let outcome = match result {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) | Err(e) => Err(format!("{}: {e}{}", device.name(), device.diagnostics())),
    };
    device.finish();
    outcome
}
