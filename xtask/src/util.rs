//! Process helpers shared by the stages.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

pub fn workspace_root() -> PathBuf {
    // xtask lives one level below the workspace root.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// Runs a command with inherited stdio; fails with the command line if it
/// does not exit 0.
pub fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// Runs a command and returns its stdout; stderr is inherited.
pub fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed with {}:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Set by `cargo xtask ci`: every cargo this process starts from then on
/// builds without incremental state. On a fresh clone that state was 4.1 GiB
/// of `target/debug/incremental` (session 17's measurement), and a CI run has
/// no edit loop for it to speed up.
static CI_BUILDS: AtomicBool = AtomicBool::new(false);

/// Switches this process's cargo children to CI builds (see [`CI_BUILDS`]).
pub fn use_ci_builds() {
    CI_BUILDS.store(true, Ordering::Relaxed);
}

/// The cargo this xtask runs under, with CI's settings when they apply.
pub fn cargo() -> Command {
    with_ci_env(Command::new(
        std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
    ))
}

/// Adds CI's build settings to `cmd`, a cargo command, when they apply.
pub fn with_ci_env(mut cmd: Command) -> Command {
    if CI_BUILDS.load(Ordering::Relaxed) {
        cmd.env("CARGO_INCREMENTAL", "0");
    }
    cmd
}

/// Fails when `fresh` (a report regenerated now) differs from the
/// committed file `doc` (relative to `root`), naming the first line that
/// differs and `fix`, what regenerates and commits it.
pub fn check_committed(root: &Path, doc: &str, fresh: &str, fix: &str) -> Result<()> {
    let committed = std::fs::read_to_string(root.join(doc)).unwrap_or_default();
    if committed == fresh {
        return Ok(());
    }
    let at = committed
        .lines()
        .zip(fresh.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(fresh.lines().count()));
    bail!(
        "{doc} differs from the one regenerated now (first at line {}: committed `{}`, now `{}`); {fix}",
        at + 1,
        committed.lines().nth(at).unwrap_or("<end>"),
        fresh.lines().nth(at).unwrap_or("<end>")
    )
}
