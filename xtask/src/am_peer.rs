//! `cargo xtask am-peer` (issue 15): tinygrad's AM driver boots the
//! model's navi31 and navi48 through the model's C ABI, and each boot's
//! register trace is compared with barebell's own bring-up trace.
//!
//! 1. `am-peer/install.sh`: tinygrad 0.14.0 from PyPI into
//!    `target/am-peer/site`, the wheel checked by pip `--require-hashes`
//!    against the sha256 in `am-peer/requirements.txt`; nothing of
//!    tinygrad is copied into the repository.
//! 2. `cargo build --release -p barebell-model-ffi -p barebell-cli`.
//! 3. Per part: `am-peer/run.sh --part P --strict --backend
//!    target/release/libbarebell_model_ffi.so --out target/am-peer/P-am.txt`
//!    (AM's `AMDev(...)` to its boot done, then its compute and SDMA
//!    queues), `barebell bringup --part P --mapping direct --trace`
//!    into `target/am-peer/P-barebell.txt`, and `barebell trace diff`
//!    of the two into `target/am-peer/am-diff-P.txt`. With `--write`
//!    the diffs go to `docs/am-diff-P.txt` instead (how they are
//!    regenerated).
//!
//! Fails when either boot does not reach AM's boot done, when the
//! model does not show AM's PM4 compute queue active on a started MEC
//! pipe having executed the harness's probe packets, or (without
//! `--write`) when a regenerated diff differs from the committed
//! `docs/am-diff-P.txt`, so the documented diff cannot go stale. Ends with
//! `am peer: navi31 boot done (N register writes), navi48 boot done (N
//! register writes)`.

use crate::util::{cargo, run as run_cmd};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

const PARTS: [&str; 2] = ["navi31", "navi48"];

/// What the model shows for AM's compute queue: a started MEC pipe
/// running the PM4 HQD on ME 1 pipe 0 queue 0 (`AM_GFX.setup_ring(...,
/// idx=0, aql=False)`), as `vgpu_status` reports it.
const HQD_LINE: &str = "  model: MEC: HQD me 1 pipe 0 queue 0 active (PM4, VMID 0,";

/// Runs one AM boot; returns the register writes to boot done and the
/// PM4 packets the compute queue executed.
fn am_boot(root: &Path, part: &str, out: &Path) -> Result<(u64, u64)> {
    let lib = root.join("target/release/libbarebell_model_ffi.so");
    let o = Command::new(root.join("am-peer/run.sh"))
        .current_dir(root)
        .args(["--part", part, "--strict", "--backend"])
        .arg(&lib)
        .arg("--out")
        .arg(out)
        .output()
        .context("could not start am-peer/run.sh")?;
    let stdout = String::from_utf8_lossy(&o.stdout);
    // Strict mode: a register no block model knows, or any other
    // refusal, fails the access and so AM's boot (run.py exits 1); the
    // boot itself is judged by its summary line.
    let want = format!("am peer: {part} boot done (");
    let Some(line) = stdout.lines().find(|l| l.starts_with(&want)) else {
        bail!(
            "AM did not boot the model's {part}:\n{}\n{}",
            stdout
                .lines()
                .filter(|l| !l.contains("refused: BAR5"))
                .collect::<Vec<_>>()
                .join("\n"),
            String::from_utf8_lossy(&o.stderr)
        );
    };
    eprintln!("{line}");
    for l in stdout.lines().filter(|l| {
        l.contains("refused:") && !l.contains("refused: BAR5") || l.starts_with("  model:")
    }) {
        eprintln!("{l}");
    }
    let writes = line[want.len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no write count in {line:?}"))?;
    // The compute queue: the HQD active on a started MEC pipe, and the
    // harness's probe packets executed (run.py fails the run otherwise).
    let Some(hqd) = stdout
        .lines()
        .find(|l| l.starts_with(HQD_LINE) && l.contains(") on a started MEC pipe"))
    else {
        bail!("the model shows no PM4 HQD active on a started MEC pipe for {part}:\n{stdout}");
    };
    let packets = hqd
        .split(", ")
        .find_map(|f| f.strip_suffix(" packets executed"))
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no packet count in {hqd:?}"))?;
    Ok((writes, packets))
}

pub fn run(root: &Path, write: bool) -> Result<String> {
    run_cmd(Command::new(root.join("am-peer/install.sh")).current_dir(root))?;
    run_cmd(cargo().current_dir(root).args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "barebell-model-ffi",
        "-p",
        "barebell-cli",
    ]))?;
    let work = root.join("target/am-peer");
    std::fs::create_dir_all(&work)?;
    let barebell = root.join("target/release/barebell");
    let mut done = Vec::new();
    let mut queues = Vec::new();
    for part in PARTS {
        let am = Path::new("target/am-peer").join(format!("{part}-am.txt"));
        let (writes, packets) = am_boot(root, part, &root.join(&am))?;
        let bb = Path::new("target/am-peer").join(format!("{part}-barebell.txt"));
        let trace = Command::new(&barebell)
            .current_dir(root)
            .args(["bringup", "--part", part, "--mapping", "direct", "--trace"])
            .output()
            .context("could not start barebell bringup")?;
        if !trace.status.success() {
            bail!(
                "barebell bringup --part {part} failed:\n{}",
                String::from_utf8_lossy(&trace.stderr)
            );
        }
        std::fs::write(root.join(&bb), &trace.stdout)?;
        // Relative paths: the diff's header names them, and the checked-in
        // diff must not depend on where the repository lives.
        let diff = Command::new(&barebell)
            .current_dir(root)
            .args(["trace", "diff"])
            .arg(&bb)
            .arg(&am)
            .output()
            .context("could not start barebell trace diff")?;
        if !diff.status.success() {
            bail!(
                "barebell trace diff failed:\n{}",
                String::from_utf8_lossy(&diff.stderr)
            );
        }
        let to = if write {
            root.join(format!("docs/am-diff-{part}.txt"))
        } else {
            work.join(format!("am-diff-{part}.txt"))
        };
        std::fs::write(&to, &diff.stdout)?;
        eprintln!("{part}: diff in {}", to.display());
        if !write {
            let doc = format!("docs/am-diff-{part}.txt");
            let committed = std::fs::read_to_string(root.join(&doc)).unwrap_or_default();
            let fresh = String::from_utf8_lossy(&diff.stdout);
            if committed != fresh {
                let at = committed
                    .lines()
                    .zip(fresh.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| committed.lines().count().min(fresh.lines().count()));
                bail!(
                    "{doc} differs from the diff regenerated now (first at line {}: committed `{}`, now `{}`); run `cargo xtask am-peer --write` and commit it with the change that moved it",
                    at + 1,
                    committed.lines().nth(at).unwrap_or("<end>"),
                    fresh.lines().nth(at).unwrap_or("<end>")
                );
            }
        }
        done.push(format!("{part} boot done ({writes} register writes)"));
        queues.push(format!("{part} ({packets} PM4 packets executed)"));
    }
    println!(
        "am peer: compute queue (PM4 HQD me 1 pipe 0 queue 0, VMID 0) active on a started MEC pipe: {}",
        queues.join(", ")
    );
    let line = format!("am peer: {}", done.join(", "));
    println!("{line}");
    Ok(line)
}
