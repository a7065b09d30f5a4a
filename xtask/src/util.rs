//! Process helpers shared by the stages.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

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

pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
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
