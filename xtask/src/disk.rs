//! Disk space for `cargo xtask ci`: checked before anything is built.
//!
//! A run that fills the disk fails late (the first CI run to do so died in
//! the freestanding stage, a quarter of an hour in, with "No space left on
//! device" from the linker) and leaves a half-written target directory.
//! This stage says up front how much the run needs and how much there is.

use crate::util::output;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

const GIB: u64 = 1 << 30;

/// What a whole `cargo xtask ci` run on a fresh clone leaves in `target/`,
/// with room to grow: 8.9 GiB measured (the summary's `target/ holds`
/// line, `du -sb target`) after `.ci/run` on a fresh clone of `main` on
/// 2026-12-07 (docs/contributing.md, "Disk space").
pub const FRESH_RUN_BYTES: u64 = 10 * GIB;

/// Kept free beyond the run's own need: apt's downloads, the QEMU images
/// under /tmp and the toolchains Miri and the fuzzers install land outside
/// `target/`.
const HEADROOM_BYTES: u64 = 2 * GIB;

/// Bytes free to an unprivileged writer on the filesystem holding `path`.
fn available(path: &Path) -> Result<u64> {
    let out = output(Command::new("df").args(["-B1", "--output=avail"]).arg(path))?;
    out.lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .with_context(|| format!("could not read df's answer for {}: {out:?}", path.display()))
}

/// Bytes under `path` (0 when it does not exist yet).
pub fn used(path: &Path) -> Result<u64> {
    if !path.exists() {
        return Ok(0);
    }
    let out = output(Command::new("du").args(["-sb"]).arg(path))?;
    out.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("could not read du's answer for {}: {out:?}", path.display()))
}

/// `bytes` in GiB with one decimal, for messages.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / GIB as f64)
}

/// How much more a run needs, given what `target/` already holds. A warm
/// target directory is counted as reusable; a run never needs less than
/// the headroom.
fn needed(target_bytes: u64) -> u64 {
    FRESH_RUN_BYTES.saturating_sub(target_bytes) + HEADROOM_BYTES
}

/// The stage: fails, naming both numbers, when the disk cannot hold a run.
pub fn check(root: &Path) -> Result<String> {
    let target = root.join("target");
    let held = used(&target)?;
    let free = available(root)?;
    let need = needed(held);
    if free < need {
        bail!(
            "not enough disk space for a CI run: {} free on the filesystem of {}, and the run \
             needs about {} more (a run on a fresh clone leaves {} in target/, which holds {} \
             now, plus {} for downloads and images). Free some space (`cargo clean` removes \
             target/) and run again.",
            gib(free),
            root.display(),
            gib(need),
            gib(FRESH_RUN_BYTES),
            gib(held),
            gib(HEADROOM_BYTES),
        );
    }
    Ok(format!(
        "{} free; the run needs about {} more (target/ holds {})",
        gib(free),
        gib(need),
        gib(held)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_clone_needs_the_whole_run_and_headroom() {
        assert_eq!(needed(0), 12 * GIB);
    }

    #[test]
    fn a_warm_target_counts_as_reused_but_headroom_stays() {
        assert_eq!(needed(4 * GIB), 8 * GIB);
        assert_eq!(needed(40 * GIB), 2 * GIB);
    }

    #[test]
    fn df_and_du_answer_for_this_checkout() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert!(available(here).is_ok_and(|b| b > 0));
        assert!(used(here).is_ok_and(|b| b > 0));
        assert_eq!(used(&here.join("no-such-dir")).ok(), Some(0));
    }
}
