//! `cargo xtask`: everything CI does, runnable by hand one stage at a time.

mod am_peer;
mod apt;
mod bench;
mod ci;
mod conformance;
mod disk;
mod freestanding;
mod fresh;
mod fwcheck;
mod headers;
mod isa_diff;
mod kernel;
mod linux_peer;
mod lspci;
mod mutants;
mod qemu;
mod qemu_pci;
mod reg_tables;
mod rocm;
mod rocm_compare;
mod util;

// The unikernel's newc reader, tested against this crate's writer.
#[cfg(test)]
extern crate alloc;
#[cfg(test)]
#[path = "../../unikernel/src/cpio.rs"]
mod uk_cpio;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Install artifacts, then run every stage; print a summary.
    Ci {
        /// Skip the apt stage (the artifacts must already be installed).
        #[arg(long)]
        no_install: bool,
    },
    /// The README's two commands (and `cargo xtask ci` a second time) on a
    /// clean Debian 12 root built with debootstrap, cached under
    /// target/fresh (root; not a CI stage: it takes three CI runs' time).
    Fresh {
        /// Keep the run's root (target/fresh/root) for a look afterwards.
        #[arg(long)]
        keep: bool,
    },
    /// Install the Debian packages the tests read (needs root).
    Deps,
    /// One shard of the mutation run (cargo-mutants, scope and oracle in
    /// .cargo/mutants.toml), recorded in docs/mutants/; or, with --tally,
    /// the figures of every shard recorded (docs/mutants.md).
    Mutants {
        /// The shard to run, K/N (cargo-mutants' round-robin sharding).
        #[arg(long, required_unless_present = "tally")]
        shard: Option<mutants::Shard>,
        /// Re-run the recorded shard's survivors with the slow tests, at
        /// the commit the shard was taken at.
        #[arg(long, requires = "shard")]
        slow: bool,
        /// Re-run the recorded shard's survivors with the tests of `HEAD`,
        /// where their code is unchanged since the shard's commit.
        #[arg(long, requires = "shard", conflicts_with = "slow")]
        recheck: bool,
        /// With --recheck: re-run only the survivors whose names match
        /// this regular expression (the others stay as recorded).
        #[arg(long, requires = "recheck", value_name = "REGEX")]
        only: Option<String>,
        /// Print the tally of the recorded shards instead.
        #[arg(long, conflicts_with = "shard")]
        tally: bool,
    },
    /// Extract the Linux 6.12 headers into target/artifacts.
    Headers,
    /// Check every library fact against the public headers.
    Conformance,
    /// Link the no_std crates into a freestanding ELF.
    Freestanding,
    /// Run the loom models of the submit path and the signal wait.
    Loom,
    /// Run the AQL publish under Miri's data-race detector (installs
    /// the nightly toolchain's Miri with rustup if it is missing).
    Miri,
    /// Count instructions per submit under callgrind vs the C floor.
    BenchInstr,
    /// Compare `barebell pci` with `lspci -vvv -nn` on this machine (root).
    Lspci,
    /// Run the ECAM, port-I/O and VFIO backends in a QEMU guest.
    QemuPci,
    /// Build the unikernel, boot it in QEMU (q35, TCG) and check its PCI
    /// listing against QEMU's own, plus its latency summaries.
    Qemu,
    /// Compare barebell-isa's disassembly with LLVM 19 (random words and the
    /// test suite's code objects).
    IsaDiff,
    /// Regenerate barebell-isa's opcode tables (isa/data/*.txt) from
    /// llvm-mc-19, or with --check fail if the committed ones differ.
    IsaTables {
        #[arg(long)]
        check: bool,
    },
    /// Regenerate `barebell regs`'s register tables (catalog/data/regs/*.txt)
    /// from the Linux 6.12 offset and sh_mask headers, or with --check
    /// fail if the committed ones differ (the conformance stage does).
    RegTables {
        #[arg(long)]
        check: bool,
    },
    /// Boot the model's navi31 and navi48 with tinygrad's AM driver
    /// (pinned wheel) through the model's C ABI, and diff AM's register
    /// trace with barebell's bring-up trace.
    AmPeer {
        /// Write the diffs to docs/am-diff-<part>.txt.
        #[arg(long)]
        write: bool,
    },
    /// Boot Debian's stock 6.12 kernel in QEMU (from a Debian 13 root
    /// built with debootstrap, cached under target/linux-peer) with the
    /// model attached over vfio-user (barebell-vfio-user), load amdgpu
    /// with the part's firmware and report the milestone reached (root;
    /// not a CI stage).
    LinuxPeer {
        /// The part whose firmware the guest gets (navi31 so far).
        #[arg(long, default_value = "navi31")]
        part: String,
        /// QEMU accelerator: tcg, or kvm where nested KVM works.
        #[arg(long, default_value = "tcg")]
        accel: String,
        /// amdgpu's module parameters, replacing the part's defaults
        /// (for example "ip_block_mask=0xffffffcf").
        #[arg(long)]
        params: Option<String>,
        /// Write the trace diff to docs/linux-diff-<part>.txt (else it
        /// goes to the run directory).
        #[arg(long)]
        write: bool,
    },
    /// ROCm 5.2.3's own user space on barebell's libhsakmt.so.1 (hsakmt/)
    /// over the MI210 model: builds the library, runs Debian's rocminfo,
    /// an HSA program and the HIP vectorAdd on it inside a mount
    /// namespace (root).
    Rocm,
    /// ROCm on barebell's libhsakmt beside barebell's own vector-add and
    /// the seeds' MI308X figures: phase times, and instructions per
    /// hipLaunchKernelGGL and per AQL submit under callgrind (root).
    RocmCompare,
    /// Cross-check the firmware parser against a C reader built on
    /// Linux's amdgpu_ucode.h, over every gc/psp/sdma/imu/smu blob.
    Fwcheck,
    /// Build the kernel loader's fuzz seed corpus (kernel/fuzz/corpus)
    /// from the test kernels with clang-19.
    KernelCorpus,
    /// Write a newc cpio archive of FILES to OUT with the writer `cargo
    /// xtask qemu` uses for its firmware module (the unikernel cpio
    /// fuzz target's seeds), each file cut to its first --head bytes.
    Newc {
        out: std::path::PathBuf,
        files: Vec<std::path::PathBuf>,
        #[arg(long, default_value_t = usize::MAX)]
        head: usize,
    },
    /// Count instructions per kernel launch under callgrind.
    KernelInstr,
    /// The `fuzz smoke` CI stage alone: every target of
    /// `kernel::FUZZ_TARGETS` for its fixed budget.
    FuzzSmoke,
    /// Run one fuzz target: the kernel loader's (code_object, metadata)
    /// or any in `kernel::FUZZ_TARGETS` (caps, pci_decode, sysfs, pagemap,
    /// container, discovery, mes_status, hub_fault, psp, ih, vgpu_regs,
    /// ring_decode, pm4_hws, mqd, sdma_packet, pte_v9, mes_frame, fw_rings,
    /// job, disasm, interp, cpio, acpi).
    KernelFuzz {
        #[arg(default_value = "code_object")]
        target: String,
        /// Stop after this many seconds (0: no limit).
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Stop after this many executions (0: no limit).
        #[arg(long, default_value_t = 0)]
        runs: u64,
        /// Build with AddressSanitizer (needs the nightly toolchain).
        #[arg(long)]
        asan: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = util::workspace_root();
    let r = match cli.command {
        Cmd::Ci { no_install } => return ci::run(&root, !no_install),
        Cmd::Fresh { keep } => {
            return match fresh::run_fresh(&root, keep) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("xtask fresh: {e:#}");
                    ExitCode::FAILURE
                }
            };
        }
        Cmd::Deps => apt::ensure().map(|s| println!("{s}")),
        Cmd::Mutants {
            shard,
            slow,
            recheck,
            only,
            tally,
        } => match shard {
            Some(shard) if slow => mutants::run_slow(&root, shard),
            Some(shard) if recheck => mutants::recheck(&root, shard, only.as_deref()),
            Some(shard) if !tally => mutants::run(&root, shard),
            _ => mutants::tally_ledger(&root),
        }
        .map(|s| println!("{s}")),
        Cmd::Headers => headers::ensure(&root).map(|h| println!("{}", h.root.display())),
        Cmd::Conformance => conformance::run_all(&root).map(|s| println!("{s}")),
        Cmd::Freestanding => freestanding::run(&root).map(|s| println!("{s}")),
        Cmd::Loom => bench::loom(&root).map(|s| println!("{s}")),
        Cmd::Miri => bench::miri(&root).map(|s| println!("{s}")),
        Cmd::BenchInstr => bench::instr(&root).map(|_| ()),
        Cmd::Lspci => lspci::run(&root).map(|s| println!("{s}")),
        Cmd::QemuPci => qemu_pci::run_stage(&root).map(|s| println!("{s}")),
        Cmd::Qemu => qemu::run(&root).map(|s| println!("{s}")),
        Cmd::Fwcheck => fwcheck::run(&root).map(|s| println!("{s}")),
        Cmd::Rocm => apt::ensure()
            .and_then(|_| rocm::run(&root))
            .map(|s| println!("{s}")),
        Cmd::RocmCompare => apt::ensure()
            .and_then(|_| rocm_compare::run(&root))
            .map(|s| println!("{s}")),
        Cmd::LinuxPeer {
            part,
            accel,
            params,
            write,
        } => linux_peer::run(&root, &part, &accel, params.as_deref(), write).map(|_| ()),
        Cmd::AmPeer { write } => am_peer::run(&root, write).map(|_| ()),
        Cmd::KernelCorpus => kernel::corpus(&root).map(|s| println!("{s}")),
        Cmd::Newc { out, files, head } => (|| {
            let mut v = Vec::new();
            for f in &files {
                let mut data = std::fs::read(f)?;
                data.truncate(head);
                let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("file");
                v.push((name.to_string(), data));
            }
            std::fs::write(&out, qemu::newc(&v)?)?;
            anyhow::Ok(())
        })(),
        Cmd::FuzzSmoke => kernel::smoke_all(&root).map(|s| println!("{s}")),
        Cmd::KernelInstr => bench::kernel_instr(&root).map(|(s, _, _)| println!("{s}")),
        Cmd::KernelFuzz {
            target,
            seconds,
            runs,
            asan,
        } => kernel::fuzz(&root, &target, seconds, runs, asan).map(|r| {
            println!(
                "{}: {} executions in {:.1} s, 0 crashes",
                r.target, r.runs, r.seconds
            )
        }),
        Cmd::IsaDiff => isa_diff::run(&root).map(|s| println!("{s}")),
        Cmd::RegTables { check } => reg_tables::run(&root, check).map(|s| println!("{s}")),
        Cmd::IsaTables { check } => isa_diff::tables(&root, check).map(|s| println!("{s}")),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}
