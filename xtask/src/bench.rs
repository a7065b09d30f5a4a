//! Concurrency models and performance counts for the submit path.
//!
//! `loom`: the loom models in runtime/tests/loom.rs, built with
//! `--cfg loom` into their own target dir (so the flag never leaks into
//! ordinary builds).
//!
//! `miri`: `runtime/tests/publish_race.rs` under Miri, whose data-race
//! detector sees what no x86-64 run can: whether `AqlQueue`'s header
//! store is a release (a relaxed one races with the consumer's body
//! read). Miri needs the nightly toolchain with its `miri` component;
//! the stage installs them with rustup when they are missing.
//!
//! `bench-instr`: instruction counts per submit under callgrind, which are
//! repeatable on a noisy machine where wall time is not. Each mode of the
//! `submit-instr` binary runs N submissions; `--toggle-collect` limits
//! counting to the one function that performs a submission, so loop
//! overhead and set-up are excluded on both sides.
//!
//! `kernel-instr`: instructions per kernel launch (kernargs, packet and
//! submit), per prepare and per submit, counted the same way.

use crate::util::{cargo, output, run, with_ci_env};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

pub fn loom(root: &Path) -> Result<String> {
    let out = cargo()
        .current_dir(root)
        .env("RUSTFLAGS", "--cfg loom")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .args([
            "test",
            "-p",
            "barebell",
            "--test",
            "loom",
            "--release",
            "--target-dir",
        ])
        .arg(root.join("target/loom"))
        .args(["--", "--nocapture", "--test-threads=1"])
        .output()
        .context("running the loom tests")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{text}");
    if !out.status.success() {
        bail!("loom models failed");
    }
    let explored: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("loom explored"))
        .collect();
    let passed = text
        .lines()
        .find(|l| l.starts_with("test result:"))
        .unwrap_or("")
        .to_string();
    Ok(format!("{passed}; {}", explored.join("; ")))
}

/// A `rustup run nightly` command with the outer cargo's toolchain
/// settings removed, so the nightly cargo and rustc are the ones used.
fn nightly(root: &Path) -> Command {
    let mut c = with_ci_env(Command::new("rustup"));
    c.current_dir(root).args(["run", "nightly"]);
    for v in [
        "CARGO",
        "RUSTC",
        "RUSTDOC",
        "RUSTUP_TOOLCHAIN",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
    ] {
        c.env_remove(v);
    }
    c
}

/// Installs the nightly toolchain's Miri when `cargo miri` is missing.
fn ensure_miri(root: &Path) -> Result<()> {
    let have = nightly(root)
        .args(["cargo", "miri", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if have {
        return Ok(());
    }
    eprintln!("installing the nightly toolchain with miri and rust-src (rustup)");
    run(Command::new("rustup").args([
        "toolchain",
        "install",
        "nightly",
        "--profile",
        "minimal",
        "--component",
        "miri",
        "--component",
        "rust-src",
    ]))
    .context("installing Miri (rustup toolchain install nightly --component miri)")
}

/// The AQL publish under Miri's data-race detector.
pub fn miri(root: &Path) -> Result<String> {
    ensure_miri(root)?;
    let out = nightly(root)
        // The test leaks its queue memory on purpose (the device's memory
        // outlives the queue), and takes the ring's address as the
        // runtime reports it, an integer.
        .env(
            "MIRIFLAGS",
            "-Zmiri-ignore-leaks -Zmiri-permissive-provenance",
        )
        .args([
            "cargo",
            "miri",
            "test",
            "-p",
            "barebell",
            "--test",
            "publish_race",
        ])
        .output()
        .context("running cargo miri")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        eprint!("{text}");
        bail!("Miri found undefined behaviour in the AQL publish, or did not run");
    }
    let passed = text
        .lines()
        .find(|l| l.starts_with("test result:"))
        .unwrap_or("")
        .to_string();
    Ok(format!("publish_race under Miri: {passed}"))
}

const ITERATIONS: u64 = 100_000;

/// Instructions per call of `function` when `submit-instr MODE` runs.
pub(crate) fn count(bin: &Path, mode: &str, function: &str, work: &Path) -> Result<f64> {
    let out_file = work.join(format!("callgrind.{mode}.out"));
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(format!("--toggle-collect={function}"))
        .arg(bin)
        .arg(mode)
        .arg(ITERATIONS.to_string())
        .output()
        .context("running valgrind (install valgrind)")?;
    if !out.status.success() {
        bail!(
            "callgrind run of {mode} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(collected(&String::from_utf8_lossy(&out.stderr), function)? as f64 / ITERATIONS as f64)
}

/// The instructions callgrind's summary (`Collected :`) says it counted
/// in `function`; an error if none.
pub(crate) fn collected(stderr: &str, function: &str) -> Result<u64> {
    let n: u64 = stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .with_context(|| format!("no 'Collected :' line from callgrind:\n{stderr}"))?;
    if n == 0 {
        bail!("callgrind counted nothing in {function}: symbol missing?");
    }
    Ok(n)
}

/// barebell's submit must stay at or below this share of the instructions
/// the same ROCR protocol takes hand-written in C (`bench/src/floor.c`,
/// `barebell_floor_protocol_submit`).
pub const MAX_VS_C: f64 = 0.90;

/// A launch of a loaded kernel (`launch::Typed::launch`: store the
/// explicit arguments at their offsets, arm the signal, submit) must stay at or below this many
/// times the AQL submit of a ready packet, counted in the same binary.
pub const MAX_PREPARED_VS_SUBMIT: f64 = 2.0;

pub fn instr(root: &Path) -> Result<String> {
    run(cargo().current_dir(root).args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "barebell-bench",
        "--bin",
        "submit-instr",
    ]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), std::path::PathBuf::from);
    let bin = target.join("release/submit-instr");
    let work = root.join("target/bench-instr");
    std::fs::create_dir_all(&work)?;
    let barebell = count(&bin, "barebell", "barebell_submit_one", &work)?;
    let floor = count(&bin, "floor", "barebell_floor_submit", &work)?;
    let c_protocol = count(&bin, "c-protocol", "barebell_floor_protocol_submit", &work)?;
    let asm = output(
        Command::new("objdump")
            .args(["-d", "--no-show-raw-insn"])
            .arg(&bin),
    )
    .map(|d| disassembly_of(&d, "barebell_submit_one"))
    .unwrap_or_default();
    if !asm.is_empty() {
        println!("barebell_submit_one, as compiled:\n{asm}");
    }
    // One SDMA copy submission (issue 19 item 6): 4 MiB, the seeds'
    // hipMemcpy size and the most one COPY_LINEAR moves (44 bytes of
    // ring: the packet and a FENCE), the write pointer and the doorbell.
    // A figure, not a bound.
    let sdma = count(&bin, "sdma", "barebell_sdma_submit_one", &work)?;
    let vs_c = barebell / c_protocol;
    let line = format!(
        "submit instructions: barebell {barebell:.1}, hand-written C protocol {c_protocol:.1} (ratio {vs_c:.2}, bound {MAX_VS_C:.2}), copy-only floor {floor:.1}; SDMA 4 MiB copy submission {sdma:.1}"
    );
    println!("{line}");
    if vs_c > MAX_VS_C {
        bail!(
            "{line}: barebell's submit takes more than {MAX_VS_C} of the hand-written C protocol's instructions"
        );
    }
    // The kernel launch (checks, kernargs, packet, submit), counted the
    // same way (`cargo xtask kernel-instr`).
    let (launch, prepared, submit) = kernel_instr(root)?;
    println!("kernel launch {launch}");
    let loaded = format!(
        "launch of a loaded kernel: {} instructions (submit {})",
        prepared.round(),
        submit.round()
    );
    println!("{loaded}");
    if prepared > MAX_PREPARED_VS_SUBMIT * submit {
        bail!(
            "{loaded}: a launch of a loaded kernel takes more than {MAX_PREPARED_VS_SUBMIT} times the submit's instructions"
        );
    }
    Ok(format!("{line}; kernel launch {launch}; {loaded}"))
}

/// `cargo xtask kernel-instr`: instructions per launch (kernargs, packet
/// and submit), per prepare (no submit) and per submit of a ready packet,
/// counted under callgrind as `bench-instr` counts submit; and a launch
/// of a loaded kernel (`Prepared::launch` with `&[Arg]`, and its typed
/// form). Returns the line, and the typed launch's and the submit's
/// counts.
pub fn kernel_instr(root: &Path) -> Result<(String, f64, f64)> {
    run(cargo().current_dir(root).args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "barebell-kernel",
        "--features",
        "std",
        "--example",
        "launch_instr",
    ]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), std::path::PathBuf::from);
    let bin = target.join("release/examples/launch_instr");
    let work = root.join("target/kernel-instr");
    std::fs::create_dir_all(&work)?;
    let launch = count(&bin, "launch", "barebell_launch_one", &work)?;
    let prepare = count(&bin, "prepare", "barebell_prepare_one", &work)?;
    let submit = count(&bin, "submit", "barebell_kernel_submit_one", &work)?;
    let prepared = count(&bin, "prepared", "barebell_prepared_launch_one", &work)?;
    let loaded = count(&bin, "loaded", "barebell_loaded_launch_one", &work)?;
    Ok((
        format!(
            "instructions per call: launch {launch:.1} (prepare {prepare:.1} + submit); prepared launch with &[Arg] {prepared:.1}, typed {loaded:.1}; submit alone {submit:.1}"
        ),
        loaded,
        submit,
    ))
}

fn disassembly_of(dump: &str, symbol: &str) -> String {
    let start = format!("<{symbol}>:");
    let mut out = String::new();
    let mut inside = false;
    for l in dump.lines() {
        if l.contains(&start) {
            inside = true;
            continue;
        }
        if inside {
            if l.trim().is_empty() {
                break;
            }
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}
