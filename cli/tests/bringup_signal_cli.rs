//! `barebell bringup --model` interrupted by SIGINT mid-bring-up: the
//! signal is handled (not the default kill), the bring-up stops before
//! its next step, the teardown runs, and the process (which owns the
//! model) prints the model's own quiescence check.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

#[test]
fn sigint_mid_bringup_tears_down_and_leaves_the_model_quiescent() {
    for part in ["navi31", "navi48"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args(["bringup", "--model", "--part", part, "--mapping", "mes"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "{part}: {seen}");
            seen.push_str(&line);
            if line.starts_with("step nbio:") {
                break;
            }
        }
        // SAFETY: `kill` on the pid of a child this test spawned and has
        // not yet waited for.
        let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(r, 0);
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        let text = seen + &rest;
        assert_eq!(
            status.code(),
            Some(128 + libc::SIGINT),
            "{part}:\n{text}\n{err}"
        );
        assert!(
            err.contains("interrupted by SIGINT; the device was torn down"),
            "{part}: {err}"
        );
        // Stopped mid-bring-up, before the queue step.
        assert!(
            err.contains("interrupted (a signal asked the bring-up to stop)"),
            "{part}: {err}"
        );
        assert!(!text.contains("queue ready"), "{part}: {text}");
        assert!(err.contains("teardown complete:"), "{part}: {err}");
        for stage in [
            "halt MEC:",
            "destroy PSP ring:",
            "close doorbell aperture: done",
            "clear bus mastering: done",
        ] {
            assert!(
                text.contains(&format!("step teardown: {stage}")),
                "{part}: {stage}\n{text}"
            );
        }
        assert!(
            text.contains("model check: quiescent"),
            "{part}:\n{text}\n{err}"
        );
    }
}

#[test]
fn a_finished_bringup_is_torn_down_and_the_model_quiescent() {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["bringup", "--model", "--part", "navi31", "--mapping", "kiq"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}\n{err}");
    assert!(
        text.contains("step teardown: unmap queue: done: kiq unmap answered"),
        "{text}"
    );
    assert!(text.contains("\nteardown complete\n"), "{text}");
    assert!(text.contains("model check: quiescent"), "{text}");
}

/// `bringup --shell` waiting for a line (stdin open, nothing typed) sees
/// SIGINT and SIGTERM within a second: the shell ends, the device is torn
/// down, the model is quiescent and the exit status is the signal's.
/// (Its stdin reader used to block until input closed.)
#[test]
fn the_shell_ends_on_a_signal_while_waiting_for_input() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args([
                "bringup",
                "--model",
                "--mapping",
                "direct",
                "--until",
                "queue",
                "--shell",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "{seen}");
            seen.push_str(&line);
            if line.starts_with("shell:") {
                break;
            }
        }
        // SAFETY: `kill` on the pid of a child this test spawned and has
        // not yet waited for.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
        let asked = std::time::Instant::now();
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let status = child.wait().unwrap();
        let took = asked.elapsed();
        drop(stdin);
        let text = seen + &rest;
        assert!(took.as_secs_f64() < 5.0, "signal {sig}: {took:?}\n{text}");
        assert_eq!(status.code(), Some(128 + sig), "{text}");
        assert!(
            text.contains("step teardown: clear bus mastering: done"),
            "{text}"
        );
        assert!(text.contains("model check: quiescent"), "{text}");
    }
}
