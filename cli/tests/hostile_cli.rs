//! The CLI as a hostile or careless user drives it: every numeric option
//! at and past its boundaries, malformed and truncated files for every
//! command that reads one, bad names, and signals. Each input runs the
//! real binary under a memory cap and a kill timeout and is classified:
//! a typed error (non-zero exit with a message) or a normal run is fine;
//! a panic (`panicked at`, exit 101), an abort (SIGABRT, an allocation
//! failure) or a hang (killed at the timeout) fails the test. It prints
//! one line: `N inputs: N typed errors or normal runs, 0 panics, 0 aborts,
//! 0 hangs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Address-space cap for each input (the model reserves its VRAM backing
/// and DMA region; a runaway allocation aborts instead of swapping).
const MEMORY_CAP: u64 = 16 << 30;
/// A run still going after this is a hang.
const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
struct Case {
    args: Vec<String>,
    /// Send this signal after the delay, then expect the process to end.
    signal: Option<(i32, Duration)>,
}

fn case(args: &[&str]) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        signal: None,
    }
}

#[derive(Debug, PartialEq)]
enum Verdict {
    Fine,
    Panic(String),
    Abort(String),
    Hang,
}

fn run(c: &Case) -> Verdict {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_barebell"));
    cmd.args(&c.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit between fork and exec only changes the child's
    // own limit; it allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: MEMORY_CAP,
                rlim_max: MEMORY_CAP,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let start = Instant::now();
    let mut signalled = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if let Some((sig, after)) = c.signal
            && !signalled
            && start.elapsed() >= after
        {
            // SAFETY: kill(2) on this test's own child.
            unsafe { libc::kill(child.id() as i32, sig) };
            signalled = true;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = reader.join().unwrap();
    let Some(status) = status else {
        return Verdict::Hang;
    };
    if stderr.contains("panicked at") || status.code() == Some(101) {
        return Verdict::Panic(stderr.lines().take(3).collect::<Vec<_>>().join(" | "));
    }
    if status.signal() == Some(libc::SIGABRT)
        || stderr.contains("memory allocation of")
        || status.signal() == Some(libc::SIGSEGV)
    {
        return Verdict::Abort(format!(
            "{status:?}: {}",
            stderr.lines().last().unwrap_or("")
        ));
    }
    Verdict::Fine
}

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(name: &str, bytes: &[u8]) -> String {
    let p = dir().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

/// A real gfx1100 code object with a `spin` kernel and a `copy` kernel.
fn code_object() -> Vec<u8> {
    let src = write(
        "k.cl",
        b"kernel void copy(global uint *a, global const uint *b) { uint i = __builtin_amdgcn_workitem_id_x(); a[i] = b[i]; }\n\
          kernel void spin(global volatile uint *x) { while (x[0] == 0) x[1] += 1; }\n",
    );
    let out = dir().join("k.co");
    let st = Command::new("clang-19")
        .args([
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx1100",
            "-nogpulib",
            "-O2",
        ])
        .args(["-cl-kernel-arg-info", "-x", "cl", &src, "-o"])
        .arg(&out)
        .status()
        .expect("clang-19 (`cargo xtask deps` installs it)");
    assert!(st.success());
    std::fs::read(out).unwrap()
}

/// Little-endian u64 at `at`.
fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// The code object with its first PT_LOAD's `p_align` or `p_memsz` set.
fn patched_phdr(co: &[u8], field: usize, v: u64) -> Vec<u8> {
    let mut b = co.to_vec();
    let phoff = u64::from_le_bytes(b[0x20..0x28].try_into().unwrap()) as usize;
    let phentsize = u16::from_le_bytes(b[0x36..0x38].try_into().unwrap()) as usize;
    let phnum = u16::from_le_bytes(b[0x38..0x3a].try_into().unwrap()) as usize;
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        if u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) == 1 {
            put64(&mut b, at + field, v);
            break;
        }
    }
    b
}

fn job(co: &str, kernel: &str, grid: &str, block: &str, buffers: &str, args: &str) -> String {
    format!(
        "{{\"code_object\": \"{co}\", \"kernel\": \"{kernel}\", \"grid\": {grid}, \"block\": {block}, \"buffers\": {buffers}, \"args\": {args}}}"
    )
}

const BIG: [&str; 11] = [
    "-1",
    "0",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "abc",
    "",
    "0x10",
];

fn numeric_cases(cases: &mut Vec<Case>) {
    // Options with their command prefix and the values to add to BIG
    // (each option's own boundary and one past it; cheap valid values).
    let opts: &[(&[&str], &str, &[&str])] = &[
        (
            &["copy", "--direction", "h2d"],
            "--bytes",
            &["1", "4096", "1073741825"],
        ),
        (
            &["copy", "--bytes", "4096", "--direction", "h2d"],
            "--reps",
            &["1", "2"],
        ),
        (&["vector-add"], "--elements", &["1", "1000", "67108865"]),
        (
            &["vector-add", "--elements", "1000"],
            "--block",
            &["1", "1024", "1025"],
        ),
        (&["vector-add", "--elements", "1000"], "--seed", &["1"]),
        (
            &["latency", "--warmup", "0"],
            "--iterations",
            &["1", "100", "10000001"],
        ),
        (
            &["latency", "--iterations", "10"],
            "--warmup",
            &["0", "10", "10000001"],
        ),
        (
            &["latency", "--iterations", "10", "--warmup", "0"],
            "--pace-us",
            &["0", "1", "1000001"],
        ),
        (
            &["latency", "--iterations", "10", "--warmup", "0"],
            "--jitter-ns",
            &["0", "1000000", "1000001"],
        ),
        (
            &["latency", "--iterations", "10", "--warmup", "0"],
            "--batch",
            &["1", "4"],
        ),
        (
            &["latency", "--iterations", "10", "--warmup", "0"],
            "--bound-ms",
            &["1", "2000"],
        ),
        (
            &["latency", "--iterations", "10", "--warmup", "0"],
            "--cpu",
            &["0", "1", "4096"],
        ),
        (
            &["latency", "--iterations", "10", "--warmup", "0"],
            "--seed",
            &["1"],
        ),
        (
            &["latency", "--iterations", "10", "--warmup", "0"],
            "--kernel-ns",
            &["0", "1000"],
        ),
        (
            &["regs", "read", "GC.CP_HQD_ACTIVE"],
            "--xcc",
            &["1", "255", "256"],
        ),
        (
            &["regs", "read", "GC.CP_HQD_ACTIVE"],
            "--me",
            &["1", "4", "255"],
        ),
        (
            &["regs", "read", "GC.CP_HQD_ACTIVE"],
            "--pipe",
            &["3", "4", "255"],
        ),
        (
            &["regs", "read", "GC.CP_HQD_ACTIVE"],
            "--instance",
            &["1", "255"],
        ),
        (&["bringup", "--until", "discovery"], "--seed", &["1"]),
    ];
    for (prefix, opt, extra) in opts {
        for v in BIG.iter().chain(extra.iter()) {
            let mut a: Vec<&str> = prefix.to_vec();
            a.push(opt);
            a.push(v);
            cases.push(case(&a));
        }
    }
    for v in ["0x1_0000_0000", "-1", "abc", "0xffffffff", "4294967296", ""] {
        cases.push(case(&["regs", "write", "GC.SCRATCH_REG0", v]));
    }
    for name in [
        "",
        "GC",
        "GC.",
        ".",
        "NOPE.X",
        "GC.NOPE",
        "GC.CP_HQD_ACTIVE.NOPE",
        "GC.*",
        "*.*",
        "GC.CP_HQD_?",
        "MMHUB.",
        "gc.cp_hqd_active",
        "GC..X",
        "GC.CP_HQD_ACTIVE.ACTIVE.X",
    ] {
        cases.push(case(&["regs", "read", name, "--mapping", "direct"]));
    }
    for a in [
        "0",
        "0xffffffffffffffff",
        "abc",
        "-5",
        "0x7f000",
        "18446744073709551616",
    ] {
        cases.push(case(&["regs", "name", a, "--mapping", "direct"]));
    }
    for p in ["", "*", "?", "CP_", "[", "\u{fffd}"] {
        cases.push(case(&["regs", "list", p, "--mapping", "direct"]));
    }
}

fn file_cases(cases: &mut Vec<Case>, co: &[u8]) {
    // Truncations of a real code object, for disasm and run.
    let cuts = [
        0usize, 1, 3, 4, 16, 52, 63, 64, 65, 100, 200, 500, 1000, 2000, 4000,
    ];
    for &n in &cuts {
        let n = n.min(co.len());
        let f = write(&format!("cut{n}.co"), &co[..n]);
        cases.push(case(&["disasm", &f]));
        let j = write(
            &format!("cut{n}.json"),
            job(&f, "copy", "[1]", "[32]", r#"{"a": {"type": "u32", "count": 32, "fill": 0}, "b": {"type": "u32", "count": 32, "fill": 1}}"#, r#"[{"buffer": "a"}, {"buffer": "b"}]"#).as_bytes(),
        );
        cases.push(case(&["run", &j]));
    }
    // Byte flips in the ELF header and program headers.
    for at in (0..0x80).step_by(3) {
        let mut b = co.to_vec();
        b[at] ^= 0xff;
        let f = write(&format!("flip{at}.co"), &b);
        cases.push(case(&["disasm", &f]));
    }
    // p_align 2^63 and a huge p_memsz (offsets 0x30 and 0x28 in Elf64_Phdr).
    for (field, v) in [
        (0x30usize, 1u64 << 63),
        (0x28, 1 << 62),
        (0x28, u64::MAX),
        (0x30, 3),
    ] {
        let f = write(&format!("ph{field}-{v}.co"), &patched_phdr(co, field, v));
        cases.push(case(&["disasm", &f]));
        let j = write(
            &format!("ph{field}-{v}.json"),
            job(&f, "copy", "[1]", "[32]", r#"{"a": {"type": "u32", "count": 32, "fill": 0}, "b": {"type": "u32", "count": 32, "fill": 1}}"#, r#"[{"buffer": "a"}, {"buffer": "b"}]"#).as_bytes(),
        );
        cases.push(case(&["run", &j]));
    }
    let good = write("good.co", co);
    let bufs = r#"{"a": {"type": "u32", "count": 32, "fill": 0}, "b": {"type": "u32", "count": 32, "fill": 1}}"#;
    let args = r#"[{"buffer": "a"}, {"buffer": "b"}]"#;
    // Job files: malformed JSON, geometry at every boundary, sizes past
    // the caps, arguments that do not fit the kernel.
    let mut jobs: Vec<String> = vec![
        String::new(),
        "{".into(),
        "[]".into(),
        "null".into(),
        "{}".into(),
        r#"{"kernel": "copy"}"#.into(),
        job(&good, "nope", "[1]", "[32]", bufs, args),
        job("/nonexistent.co", "copy", "[1]", "[32]", bufs, args),
        job(&good, "copy", "[1]", "[32]", bufs, "[]"),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            bufs,
            r#"[{"f32": 1.0}, {"buffer": "b"}]"#,
        ),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            bufs,
            r#"[{"buffer": "zz"}, {"buffer": "b"}]"#,
        ),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            r#"{"a": {"type": "u33", "count": 1}}"#,
            args,
        ),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            r#"{"a": {"type": "u32", "count": 268435457}, "b": {"type": "u32", "count": 1}}"#,
            args,
        ),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            r#"{"a": {"type": "u32", "count": 268435456}, "b": {"type": "u32", "count": 268435456}}"#,
            args,
        ),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            r#"{"a": {"type": "u32", "count": 268435456, "fill": 0}, "b": {"type": "u32", "count": 32}}"#,
            args,
        ),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            r#"{"a": {"type": "u32", "values": [1, "x"]}, "b": {"type": "u32", "count": 32}}"#,
            args,
        ),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            r#"{"a": {"type": "u32", "count": 32, "fill": -1}, "b": {"type": "u32", "count": 32}}"#,
            args,
        ),
        job(
            &good,
            "copy",
            "[1]",
            "[32]",
            r#"{"a": {"type": "f64", "count": 32, "fill": 1e400}, "b": {"type": "u32", "count": 32}}"#,
            args,
        ),
    ];
    for (grid, block) in [
        ("[0]", "[32]"),
        ("[1]", "[0]"),
        ("[1]", "[1025]"),
        ("[1]", "[65536]"),
        ("[4294967295]", "[32]"),
        ("[4294967296]", "[32]"),
        ("[1, 1, 1, 1]", "[32]"),
        ("[]", "[32]"),
        ("[1]", "[]"),
        ("[1]", "[32, 32, 32]"),
        ("[-1]", "[32]"),
        ("[65535, 65535]", "[1, 1]"),
        ("[1]", "[32]"),
    ] {
        jobs.push(job(&good, "copy", grid, block, bufs, args));
    }
    for (i, j) in jobs.iter().enumerate() {
        let f = write(&format!("job{i}.json"), j.as_bytes());
        let mut c = case(&["run", &f, "--timeout-s", "2"]);
        cases.push(c.clone());
        c.args.extend(["--mapping", "direct"].map(String::from));
        cases.push(c);
    }
    // A spinning kernel and a 65535 x 65535 grid end at the bound.
    let spin = write(
        "spin.json",
        job(
            &good,
            "spin",
            "[1]",
            "[32]",
            r#"{"x": {"type": "u32", "count": 2, "fill": 0}}"#,
            r#"[{"buffer": "x"}]"#,
        )
        .as_bytes(),
    );
    cases.push(case(&["run", &spin, "--timeout-s", "1"]));
    cases.push(case(&[
        "run",
        &spin,
        "--timeout-s",
        "1",
        "--mapping",
        "direct",
    ]));
    // Garbage for every file reader: firmware, rings, PCI config, traces.
    let mut seed = 0x1234_5678u64;
    for n in [
        0usize, 1, 3, 4, 7, 8, 31, 32, 63, 64, 255, 256, 257, 1024, 4096, 4097,
    ] {
        let bytes: Vec<u8> = (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 56) as u8
            })
            .collect();
        let f = write(&format!("garbage{n}.bin"), &bytes);
        cases.push(case(&["fw", "info", &f]));
        for fmt in ["aql", "pm4", "mes", "sdma", "auto"] {
            cases.push(case(&["ring", "decode", &f, "--format", fmt]));
        }
        cases.push(case(&["pci", "decode", &f]));
        cases.push(case(&["trace", "diff", &f, &f]));
        cases.push(case(&["disasm", &f]));
    }
    // Truncations of real firmware containers.
    for name in [
        "gc_11_0_0_mec.bin",
        "psp_13_0_0_sos.bin",
        "gc_12_0_1_rlc.bin",
    ] {
        let Ok(blob) = std::fs::read(format!("/lib/firmware/amdgpu/{name}")) else {
            continue;
        };
        for n in [0usize, 4, 31, 32, 63, 64, 100, 255, 256, 1000, 4096] {
            let f = write(&format!("{name}.{n}"), &blob[..n.min(blob.len())]);
            cases.push(case(&["fw", "info", &f]));
        }
    }
    for p in ["/nonexistent", "/", "/dev/null", "/proc/self/mem"] {
        cases.push(case(&["disasm", p]));
        cases.push(case(&["fw", "info", p]));
        cases.push(case(&["run", p]));
    }
}

fn signal_cases(cases: &mut Vec<Case>) {
    let ms = Duration::from_millis;
    for (args, sig, after) in [
        (vec!["bringup", "--shell"], libc::SIGINT, ms(800)),
        (vec!["bringup", "--shell"], libc::SIGTERM, ms(800)),
        (
            vec!["latency", "--iterations", "10000000", "--mapping", "direct"],
            libc::SIGINT,
            ms(1500),
        ),
        (
            vec!["copy", "--bytes", "1073741824"],
            libc::SIGINT,
            ms(1500),
        ),
        (
            vec!["vector-add", "--elements", "67108864"],
            libc::SIGTERM,
            ms(1500),
        ),
        (vec!["bringup", "--mapping", "mes"], libc::SIGINT, ms(20)),
    ] {
        cases.push(Case {
            args: args.iter().map(|s| s.to_string()).collect(),
            signal: Some((sig, after)),
        });
    }
}

#[test]
fn hostile_inputs_give_typed_errors_or_normal_runs() {
    let co = code_object();
    let mut cases = Vec::new();
    numeric_cases(&mut cases);
    file_cases(&mut cases, &co);
    signal_cases(&mut cases);
    let n = cases.len();
    assert!(n >= 500, "{n} inputs");
    let queue = Mutex::new(cases.into_iter());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let Some(c) = queue.lock().unwrap().next() else {
                        break;
                    };
                    let v = run(&c);
                    results.lock().unwrap().push((c.args, v));
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let count = |f: fn(&Verdict) -> bool| results.iter().filter(|(_, v)| f(v)).count();
    let fine = count(|v| *v == Verdict::Fine);
    let panics = count(|v| matches!(v, Verdict::Panic(_)));
    let aborts = count(|v| matches!(v, Verdict::Abort(_)));
    let hangs = count(|v| *v == Verdict::Hang);
    // Straight to the process's stdout, past the test harness's capture
    // (which takes only `print!`), so CI's log shows the count on every
    // run, not only when the test fails.
    let line = format!(
        "{n} inputs: {fine} typed errors or normal runs, {panics} panics, {aborts} aborts, {hangs} hangs\n"
    );
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), line.as_bytes());
    let bad: Vec<_> = results
        .iter()
        .filter(|(_, v)| *v != Verdict::Fine)
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}
