//! `barebell bringup --mapping` on both model parts: every mode reaches
//! `queue ready` after discovery, PSP, RLC and MES start.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

#[test]
fn every_mapping_reaches_queue_ready_on_both_parts() {
    for part in ["navi31", "navi48"] {
        for mode in ["mes", "direct", "kiq"] {
            let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
                .args(["bringup", "--part", part, "--mapping", mode])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{part}/{mode}:\n{text}");
            for step in ["step discovery", "step psp", "step rlc", "step mes"] {
                assert!(text.contains(step), "{part}/{mode}: no {step}:\n{text}");
            }
            let ready = format!("queue ready: {mode} mapping");
            assert!(text.contains(&ready), "{part}/{mode}:\n{text}");
        }
    }
}

/// SIGPIPE is handled (issue 20): `| head -1` stops the bring-up before
/// its next step, the teardown still runs (its output to the closed pipe
/// is dropped, not a panic), and the exit status is 128 + SIGPIPE.
#[test]
fn a_closed_pipe_ends_the_trace_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["bringup", "--trace"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.starts_with("model navi31"), "{first}");
    drop(out); // what `| head -1` does
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("interrupted by SIGPIPE"), "{err}");
    assert!(err.contains("teardown complete:"), "{err}");
    assert_eq!(
        status.code(),
        Some(128 + libc::SIGPIPE),
        "{status:?}\n{err}"
    );
}
