//! Progress on stderr: shown on a terminal once a run has lasted 2 s,
//! never with `--quiet`, never when stderr is not a terminal. The
//! terminal is a pty made by util-linux's `script`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

const ARGS: &str = "vector-add --elements 2097152";

fn under_pty(args: &str, extra: &str) -> String {
    let out = Command::new("script")
        .args(["-qfec"])
        .arg(format!("{} {args} {extra}", env!("CARGO_BIN_EXE_barebell")))
        .arg("/dev/null")
        .env("TERM", "xterm")
        .output()
        .expect("util-linux's script");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn a_long_run_on_a_terminal_shows_progress_unless_quiet() {
    // The run must outlast the 2 s threshold for the test to mean
    // anything: on a faster machine, a larger one.
    let mut args = ARGS;
    let t = std::time::Instant::now();
    let mut shown = under_pty(args, "");
    if t.elapsed().as_secs_f64() < 2.5 {
        args = "vector-add --elements 16777216";
        let t = std::time::Instant::now();
        shown = under_pty(args, "");
        assert!(
            t.elapsed().as_secs_f64() > 2.5,
            "the run took only {:?}",
            t.elapsed()
        );
    }
    assert!(shown.contains("vector-add ["), "no progress line:\n{shown}");
    assert!(shown.contains("/10"), "no step count:\n{shown}");
    let quiet = under_pty(args, "--quiet");
    assert!(
        !quiet.contains("vector-add ["),
        "progress despite --quiet:\n{quiet}"
    );
    assert!(quiet.contains("result: verified"), "{quiet}");
}

#[test]
fn piped_stderr_shows_no_progress() {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(ARGS.split_whitespace())
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("vector-add ["), "{err}");
}
