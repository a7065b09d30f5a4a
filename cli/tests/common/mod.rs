//! Helpers the CLI's test binaries share.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

/// Runs this build's `barebell` with `args`, requires success and returns
/// its stdout (stderr in the failure message).
pub fn barebell_ok(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "barebell {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
