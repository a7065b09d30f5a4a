//! `cargo xtask ci`: the ordered list of stages CI runs.
//!
//! A stage is a name and a function returning a one-line result. Stages
//! run in order; a failure is recorded and the rest still run (so one run
//! shows every problem), and the exit code is non-zero if any failed.
//! Later work adds its stages (benchmarks, the QEMU boot) to [`stages`].

use crate::util::{cargo, run as run_cmd, use_ci_builds};
use crate::{
    am_peer, apt, bench, conformance, disk, freestanding, fwcheck, headers, isa_diff, kernel,
    linux_peer, lspci, qemu, qemu_pci, rocm,
};
use anyhow::Result;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

type StageFn = fn(&Path) -> Result<String>;

fn stages(install: bool) -> Vec<(&'static str, StageFn)> {
    let mut v: Vec<(&'static str, StageFn)> = vec![("disk space", disk::check)];
    if install {
        v.push(("deps (apt)", |_| apt::ensure()));
    }
    v.extend([
        (
            "linux headers",
            (|r| headers::ensure(r).map(|h| format!("cached at {}", h.root.display()))) as StageFn,
        ),
        ("fmt", |r| {
            run_cmd(cargo().current_dir(r).args(["fmt", "--all", "--check"]))?;
            Ok("clean".into())
        }),
        ("clippy", |r| {
            run_cmd(cargo().current_dir(r).args([
                "clippy",
                "--workspace",
                "--all-targets",
                "--quiet",
                "--",
                "-D",
                "warnings",
            ]))?;
            Ok("no warnings".into())
        }),
        ("test", |r| {
            // --no-fail-fast: one failing suite must not hide the others.
            run_cmd(
                cargo()
                    .current_dir(r)
                    .args(["test", "--workspace", "--no-fail-fast"]),
            )?;
            Ok("all passed".into())
        }),
        ("conformance", conformance::run_all),
        ("conformance self-test", conformance::self_test),
        ("freestanding", freestanding::run),
        ("loom", bench::loom),
        ("miri (AQL publish)", bench::miri),
        ("bench-instr", bench::instr),
        ("lspci parity", lspci::run),
        ("pci in qemu", qemu_pci::run_stage),
        ("unikernel in qemu", qemu::run),
        ("firmware C cross-check", fwcheck::run),
        ("kernel fuzz smoke", kernel::smoke),
        ("fuzz smoke", kernel::smoke_all),
        ("isa tables vs llvm-mc", |r| isa_diff::tables(r, true)),
        ("isa vs llvm", isa_diff::run),
        ("am peer", |r| am_peer::run(r, false)),
        ("linux peer", linux_peer::stage),
        ("rocm", rocm::run),
    ]);
    v
}

pub fn run(root: &Path, install: bool) -> ExitCode {
    let started = Instant::now();
    use_ci_builds();
    let mut results = Vec::new();
    for (name, f) in stages(install) {
        eprintln!("\n=== xtask ci: {name} ===");
        let t = Instant::now();
        let r = f(root);
        let secs = t.elapsed().as_secs_f64();
        match &r {
            Ok(msg) => eprintln!("--- {name}: ok ({secs:.1} s): {msg}"),
            Err(e) => eprintln!("--- {name}: FAILED ({secs:.1} s): {e:#}"),
        }
        results.push((name, secs, r));
    }
    let failed = results.iter().filter(|r| r.2.is_err()).count();
    println!("\n==================== barebell ci summary ====================");
    for (name, secs, r) in &results {
        let (tag, msg) = match r {
            Ok(m) => ("ok  ", m.lines().next().unwrap_or("").to_string()),
            Err(e) => (
                "FAIL",
                format!("{e:#}").lines().next().unwrap_or("").to_string(),
            ),
        };
        let msg: String = msg.chars().take(90).collect();
        println!("{tag} {name:<22} {secs:>7.1} s  {msg}");
    }
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    // Keeps disk::FRESH_RUN_BYTES honest: on a fresh clone this is the
    // number it was set from.
    match disk::used(&root.join("target")) {
        Ok(b) => println!("target/ holds {} after the run", disk::gib(b)),
        Err(e) => println!("target/'s size: {e:#}"),
    }
    println!(
        "ci stages: {} passed, {} failed",
        results.len() - failed,
        failed
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
