//! `barebell-vfio-user`: serves one model part to one QEMU
//! `vfio-user-pci` client on a Unix socket, until the client goes.

use barebell_vfio_peer::trace::Trace;
use barebell_vfio_peer::{ModelFunction, Options};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// Serve a model GPU to QEMU's vfio-user-pci.
#[derive(Parser, Debug)]
#[command(name = "barebell-vfio-user")]
struct Args {
    /// The model part (navi31, navi48, mi300x, mi308x, mi210).
    #[arg(long, default_value = "navi31")]
    part: String,
    /// The Unix socket QEMU connects to (must not exist yet).
    #[arg(long)]
    socket: PathBuf,
    /// Write every access to this file, one line each.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Write the firmware models' event logs (KIQ, MES, MEC) here when
    /// the client goes.
    #[arg(long)]
    firmware_log: Option<PathBuf>,
    /// BAR0's length in MiB (a power of two; the guest's visible VRAM).
    #[arg(long, default_value_t = 256)]
    bar0_mib: u32,
    /// The model's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let trace = match &args.trace {
        Some(p) => match Trace::to_file(p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!(
                    "barebell-vfio-user: cannot write the trace {}: {e}",
                    p.display()
                );
                return ExitCode::FAILURE;
            }
        },
        None => Trace::none(),
    };
    let opts = Options {
        part: args.part.clone(),
        bar0_mib: args.bar0_mib,
        seed: args.seed,
    };
    let mut function = match ModelFunction::new(&opts, trace) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("barebell-vfio-user: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = match vfio_user::Server::new(
        &args.socket,
        false,
        ModelFunction::irqs(),
        function.regions(),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "barebell-vfio-user: cannot listen on {}: {e}",
                args.socket.display()
            );
            return ExitCode::FAILURE;
        }
    };
    println!(
        "barebell-vfio-user: model {} listening on {}",
        args.part,
        args.socket.display()
    );
    let served = server.run(&mut function);
    let c = function.counts();
    let trace = function.finish_trace();
    let diagnostics = function.gpu().diagnostics();
    println!(
        "barebell-vfio-user: client gone; {} register reads, {} register writes, {} doorbells, \
         {} config writes, {} refused accesses, {} interrupts signalled ({} with no vector), {} MiB \
         of guest RAM mapped ({} MiB as the model's system memory), {} model diagnostics",
        c.reg_reads,
        c.reg_writes,
        c.doorbells,
        c.config_writes,
        c.refused,
        c.interrupts,
        c.interrupts_dropped,
        function.guest_ram_bytes() >> 20,
        function.system_ram_bytes() >> 20,
        diagnostics.len()
    );
    for d in diagnostics.iter().take(20) {
        println!("barebell-vfio-user: model: {d}");
    }
    if let Some(p) = &args.firmware_log
        && let Err(e) = std::fs::write(p, function.gpu().firmware_logs() + "\n")
    {
        eprintln!("barebell-vfio-user: cannot write {}: {e}", p.display());
    }
    if let Err(e) = trace {
        eprintln!("barebell-vfio-user: the trace is incomplete: {e}");
        return ExitCode::FAILURE;
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barebell-vfio-user: the connection failed: {e}");
            ExitCode::FAILURE
        }
    }
}
