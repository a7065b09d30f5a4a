//! `bringup --shell`: `help`, and on a terminal a prompt, line editing,
//! history and Ctrl-C cancelling the line; SIGTERM ends it within a
//! second while it waits at the prompt. The terminal is a real pty made
//! by util-linux's `script`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn piped(input: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["bringup", "--shell"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_lists_every_command_and_explains_one() {
    let out = piped("help\nhelp regs read\nhelp nonsense\nquit\n");
    for cmd in [
        "regs read",
        "regs write",
        "queue dump",
        "queue unmap",
        "ring decode",
        "quit",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("  {cmd} "))),
            "`help` does not list `{cmd}`:\n{out}"
        );
    }
    // `help regs read` is the command's own help, options included.
    assert!(out.contains("--me"), "{out}");
    assert!(
        out.contains("error: no shell command `nonsense`; `help` lists them"),
        "{out}"
    );
    assert!(!out.contains("error: A shell line"), "{out}");
}

/// The shell under a pty; input is written with pauses, as typed.
fn terminal() -> Child {
    Command::new("script")
        .args(["-qfec"])
        .arg(format!(
            "{} bringup --shell",
            env!("CARGO_BIN_EXE_barebell")
        ))
        .arg("/dev/null")
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux's script")
}

fn typed(child: &mut Child, keys: &[&[u8]]) {
    let stdin = child.stdin.as_mut().unwrap();
    for k in keys {
        std::thread::sleep(Duration::from_millis(400));
        stdin.write_all(k).unwrap();
        stdin.flush().unwrap();
    }
}

/// Waits up to `limit` for the prompt to appear in the pty output.
fn wait_for_prompt(child: &mut Child, limit: Duration) -> String {
    let mut out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    let mut text = Vec::new();
    while start.elapsed() < limit {
        if let Ok(b) = rx.recv_timeout(Duration::from_millis(50)) {
            text.extend(b);
            if String::from_utf8_lossy(&text).contains("barebell> ") {
                break;
            }
        }
    }
    // Keep draining so the pty never blocks the shell.
    std::thread::spawn(move || while rx.recv().is_ok() {});
    String::from_utf8_lossy(&text).into_owned()
}

#[test]
fn a_terminal_gets_a_prompt_history_and_ctrl_c_cancels_the_line() {
    let mut child = terminal();
    typed(
        &mut child,
        &[
            b"regs read GC.CP_MEC_RS64_CNTL.MEC_HALT\n",
            // Up arrow: the previous line again.
            b"\x1b[A\n",
            // A line abandoned with Ctrl-C runs nothing.
            b"regs write GC.SCRATCH_REG0 1",
            b"\x03",
            b"quit\n",
        ],
    );
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.matches("barebell> ").count() >= 4, "{text}");
    assert_eq!(
        text.matches("GC.CP_MEC_RS64_CNTL.MEC_HALT = 0x0").count(),
        2,
        "the recalled line ran once more:\n{text}"
    );
    assert!(
        !text.contains("SCRATCH_REG0 ="),
        "the cancelled write ran:\n{text}"
    );
    assert!(text.contains("teardown complete"), "{text}");
}

/// The pid of the barebell process `script` started.
fn shell_pid(script: u32) -> Option<i32> {
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Field 4 (after the parenthesised name) is the parent.
        let parent = stat
            .rsplit_once(") ")
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if parent == Some(script) && cmd.contains("--shell") {
            return Some(pid);
        }
    }
    None
}

#[test]
fn sigterm_ends_the_shell_at_the_prompt_within_a_second() {
    let mut child = terminal();
    let seen = wait_for_prompt(&mut child, Duration::from_secs(30));
    assert!(seen.contains("barebell> "), "no prompt:\n{seen}");
    let pid = shell_pid(child.id()).expect("barebell under script");
    let sent = Instant::now();
    // SAFETY: kill(2) on a pid this test's child started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(3),
            "the shell still runs {:?} after SIGTERM",
            sent.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = sent.elapsed();
    assert!(took < Duration::from_millis(1500), "{took:?}");
    // script exits with its command's status: 128 + SIGTERM.
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
}
