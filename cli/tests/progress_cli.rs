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

/// `latency` draws between its chunks of iterations; the vadd kernel in
/// the interpreter makes a few thousand of them outlast 2 s.
#[test]
fn latency_shows_progress_between_chunks() {
    let args = "latency --kernel vadd --iterations 6000 --warmup 0";
    let shown = under_pty(args, "");
    assert!(shown.contains("latency ["), "no progress line:\n{shown}");
    assert!(shown.contains("/6000"), "no iteration count:\n{shown}");
    let quiet = under_pty(args, "--quiet");
    assert!(
        !quiet.contains("latency ["),
        "progress despite --quiet:\n{quiet}"
    );
}

/// `run` cannot step through a kernel, so a thread of its own shows a
/// spinner once the kernel has run 2 s: a kernel that spins on a flag
/// nobody sets, ended by `--timeout-s 3`.
#[test]
fn a_long_kernel_shows_a_spinner() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("progress-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("spin.cl");
    std::fs::write(
        &src,
        "kernel void spin(global volatile uint *f) { while (*f == 0) {} }\n",
    )
    .unwrap();
    let co = dir.join("spin.co");
    let ok = Command::new("clang-19")
        .args([
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx1100",
            "-nogpulib",
            "-O2",
            "-x",
            "cl",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&co)
        .status()
        .expect("clang-19 (cargo xtask ci installs it)");
    assert!(ok.success());
    let job = dir.join("spin.json");
    std::fs::write(
        &job,
        format!(
            r#"{{"code_object": "{}", "kernel": "spin", "grid": [1], "block": [32], "buffers": {{"f": {{"type": "u32", "count": 1}}}}, "args": [{{"buffer": "f"}}]}}"#,
            co.display()
        ),
    )
    .unwrap();
    let run = |extra: &str| {
        let out = Command::new("script")
            .args(["-qfc"])
            .arg(format!(
                "{} run {} --timeout-s 3 {extra}",
                env!("CARGO_BIN_EXE_barebell"),
                job.display()
            ))
            .arg("/dev/null")
            .env("TERM", "xterm")
            .output()
            .expect("util-linux's script");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = run("");
    assert!(shown.contains("run ["), "no spinner:\n{shown}");
    assert!(shown.contains("kernel spin"), "{shown}");
    assert!(shown.contains("did not finish within 3 s"), "{shown}");
    let quiet = run("--quiet");
    assert!(
        !quiet.contains("run ["),
        "spinner despite --quiet:\n{quiet}"
    );
}
