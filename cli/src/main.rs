//! `barebell`: the command-line front end.

mod bringup;
mod copy;
mod cpu;
mod device_launch;
mod disasm;
mod dma_view;
mod fw;
mod hostmem;
mod info;
mod introspect;
mod latency;
mod latency_kernel;
mod latency_plot;
mod latency_target;
mod model_launch;
mod naming;
mod pci;
mod perfetto;
mod progress;
mod report;
mod run;
mod shell_input;
mod stop;
mod target;
mod teardown;
mod trace_diff;
mod trace_name;
mod vector_add;
mod vm_walk;
mod wave_dump;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "barebell",
    version,
    about = "Drive AMD GPUs with no kernel driver"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List every hardware fact the libraries rely on, with the public
    /// header `cargo xtask conformance` checks it against.
    Facts {
        /// Only facts checked against this header key (e.g. `hsa/hsa.h`).
        #[arg(long)]
        header: Option<String>,
    },
    /// Measure doorbell-submission latency by phase (publish, doorbell,
    /// pickup, completion) on the built-in device model (`--vfio` and
    /// `--sysfs` target a GPU: unverified on hardware).
    Latency(latency::LatencyArgs),
    /// Run the bring-up (discovery, nbio, gmc, psp, rlc, and with
    /// --mapping mes, rings and a user queue) on the device model,
    /// optionally tracing every register access by name (`--vfio` and
    /// `--sysfs` target a GPU: unverified on hardware).
    Bringup(bringup::BringupArgs),
    /// Disassemble the kernels of an AMDGPU code object (gfx1100/gfx1201)
    /// in LLVM syntax.
    Disasm(disasm::DisasmArgs),
    /// Run a kernel from a JSON job file (code object, kernel, grid, block,
    /// buffers, arguments) on the device model and print every buffer;
    /// `--mapping` runs it on a user queue the bring-up mapped (`--vfio`/
    /// `--sysfs`: the same code, UNVERIFIED ON HARDWARE).
    Run(run::RunArgs),
    /// Copy with the SDMA engine on the device model (h2d, d2h, d2d over a
    /// range of sizes), verify every byte, print submit-to-fence latency
    /// and bandwidth (docs/copy.md).
    Copy(copy::CopyArgs),
    /// The seeds' HIP program on the device model: a 1,048,576-element
    /// f32 vectorAdd (4,096 workgroups of 256) with SDMA copies in and
    /// out, each step timed beside the seeds' ROCm figure.
    VectorAdd(vector_add::VectorAddArgs),
    /// What rocminfo prints for an agent, for the model or a GPU: ISA, GC
    /// version and XCCs, compute units, wave size, LDS, VRAM, IP blocks,
    /// queue mappings and the firmware versions the bring-up loads
    /// (discovery only; nothing is programmed).
    Info(info::InfoArgs),
    /// Inspect amdgpu firmware containers.
    Fw {
        #[command(subcommand)]
        command: fw::FwCommand,
    },
    /// Inspect PCI functions: list, show one, or decode a config dump.
    Pci {
        #[command(subcommand)]
        command: pci::PciCommand,
    },
    #[command(flatten)]
    Intro(introspect::Intro),
    /// Work with register traces (`bringup --trace`, am-peer's).
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
}

#[derive(Subcommand, Debug)]
enum TraceCommand {
    /// Compare two traces register by register, per IP block: registers
    /// one side writes and the other never does, final values that
    /// differ (address registers masked), and the order of the steps.
    Diff {
        a: std::path::PathBuf,
        b: std::path::PathBuf,
    },
    /// Name a raw reference trace (the Linux peer's `R <offset> <value>`
    /// lines) with the registers of a model part's discovered blocks, in
    /// the form `bringup --trace` prints, for `trace diff`.
    Name {
        /// The model part the trace was recorded on.
        #[arg(long, value_enum)]
        part: target::PartArg,
        /// Where the amdgpu firmware blobs are (the model reads them).
        #[arg(long, default_value = barebell_bringup::FirmwareDir::SYSTEM)]
        firmware_dir: std::path::PathBuf,
        /// Linux's `drivers/gpu/drm/amd/include/asic_reg` directory: names
        /// the registers barebell's tables do not list from the IP's
        /// offset header.
        #[arg(long)]
        headers: Option<std::path::PathBuf>,
        raw: std::path::PathBuf,
    },
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so `barebell latency | head` would panic in
    // println! once head exits. Restore the default action and end
    // quietly, as Unix tools do. `barebell bringup` handles SIGPIPE
    // itself (with SIGINT and SIGTERM), so that the device is torn down.
    // SAFETY: setting a signal's disposition to SIG_DFL at the start of
    // main, before any thread exists, has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Bringup(args) => bringup::run(args),
        Command::Copy(args) => copy::run(args),
        Command::VectorAdd(args) => vector_add::run(args),
        Command::Fw { command } => fw::run(command),
        Command::Info(args) => info::run(args),
        Command::Disasm(args) => disasm::run(args),
        Command::Latency(args) => latency::run(args),
        Command::Run(args) => run::run(args),
        Command::Pci { command } => pci::run(command),
        Command::Intro(cmd) => introspect::run(cmd),
        Command::Trace {
            command: TraceCommand::Diff { a, b },
        } => trace_diff::run(&a, &b),
        Command::Trace {
            command:
                TraceCommand::Name {
                    part,
                    firmware_dir,
                    headers,
                    raw,
                },
        } => trace_name::run(part, &firmware_dir, headers.as_deref(), &raw),
        Command::Facts { header } => {
            let mut n = 0usize;
            for (krate, fact) in barebell_catalog::all_facts() {
                if header.as_deref().is_some_and(|h| h != fact.header) {
                    continue;
                }
                println!(
                    "{krate:<12} {:<28} {} = {:#x}",
                    fact.header, fact.probe, fact.value
                );
                n += 1;
            }
            if n == 0 {
                eprintln!("barebell: no facts matched");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
    }
}
