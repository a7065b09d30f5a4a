//! `barebell run --wave-dump`: a wave's registers from the interpreter.
//!
//! The expected values come from the kernels' own source, not from the
//! interpreter: inline assembly at the end of `mark` puts known constants
//! in v5, s20 and M0 (clobbered, so the compiler keeps its own values
//! elsewhere), and the watched wave's EXEC follows from the job's
//! geometry. `poke` stores through an address no page table maps; `spin`
//! never ends.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::barebell_ok;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = r#"
kernel void mark(global uint *out) {
  uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x()
         + __builtin_amdgcn_workitem_id_x();
  out[i] = i;
  __asm__ volatile("v_mov_b32 v5, 0x1234\n"
                   "s_mov_b32 s20, 0xabcd\n"
                   "s_mov_b32 m0, 0x77" ::: "v5", "s20", "m0");
}

kernel void poke(ulong addr) {
  *(global volatile uint *)addr = 1;
}

kernel void spin(global volatile uint *flag) {
  while (*flag == 0) {}
}
"#;

/// A directory of its own for each job: the tests run in parallel, and
/// two clang runs writing one `k-<mcpu>.co` raced (one test read the file
/// while the other's clang was replacing it).
fn dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("wave-dump-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds the kernels for `mcpu` and writes a job for `kernel`.
fn job(mcpu: &str, kernel: &str, grid: u32, block: u32, body: &str) -> PathBuf {
    let d = dir();
    let src = d.join("k.cl");
    std::fs::write(&src, SOURCE).unwrap();
    let co = d.join(format!("k-{mcpu}.co"));
    let out = Command::new("clang-19")
        .args([
            "-target",
            "amdgcn-amd-amdhsa",
            "-nogpulib",
            "-O2",
            "-x",
            "cl",
        ])
        .arg(format!("-mcpu={mcpu}"))
        .arg(&src)
        .arg("-o")
        .arg(&co)
        .output()
        .expect("clang-19 (cargo xtask ci installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = d.join(format!("{kernel}-{mcpu}.json"));
    std::fs::write(
        &path,
        format!(
            r#"{{"code_object": "{}", "kernel": "{kernel}", "grid": [{grid}], "block": [{block}], {body}}}"#,
            co.display()
        ),
    )
    .unwrap();
    path
}

fn fails(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success(), "barebell {args:?} succeeded");
    String::from_utf8(out.stderr).unwrap()
}

/// The watched wave's registers hold what the kernel's last instructions
/// put there, in JSON and in text.
fn watched(part: &str, mcpu: &str, wave_size: u64) {
    // Two workgroups of 96 work-items: wave32 gives 3 full waves, wave64
    // a full one and one of 32 lanes.
    let j = job(
        mcpu,
        "mark",
        2,
        96,
        r#""buffers": {"out": {"type": "u32", "count": 192}}, "args": [{"buffer": "out"}]"#,
    );
    let j = j.to_str().unwrap();
    let last = 96u64.div_ceil(wave_size) - 1;
    let which = format!("1/{last}");
    let out = barebell_ok(&["run", j, "--part", part, "--json", "--wave-dump", &which]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let d = &v["wave_dump"];
    assert_eq!(d["workgroup"], serde_json::json!([1, 0, 0]), "{out}");
    assert_eq!(d["wave"], last);
    assert_eq!(d["wave_size"], wave_size);
    let lanes = 96 - last * wave_size;
    let exec = if lanes == 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    };
    assert_eq!(d["exec"], exec, "{out}");
    assert_eq!(d["sgprs"][20], 0xabcd, "{out}");
    assert_eq!(d["m0"], 0x77, "{out}");
    let v5 = d["vgprs"][5].as_array().unwrap();
    assert_eq!(v5.len() as u64, wave_size);
    for (lane, x) in v5.iter().enumerate().take(lanes as usize) {
        assert_eq!(x, 0x1234, "lane {lane}: {out}");
    }
    // The text form names the wave and shows the same registers.
    let text = barebell_ok(&["run", j, "--part", part, "--wave-dump", &which]);
    assert!(
        text.contains(&format!(
            "wave {last} of workgroup (1, 0, 0): ended (s_endpgm)"
        )),
        "{text}"
    );
    let v5_line = text
        .lines()
        .find(|l| l.trim_start().starts_with("v5 "))
        .unwrap_or_else(|| panic!("no v5 line: {text}"));
    assert!(v5_line.contains("00001234"), "{v5_line}");
    assert!(text.contains("m0 0x00000077"), "{text}");
}

#[test]
fn navi31_watched_wave() {
    watched("navi31", "gfx1100", 32);
}

#[test]
fn mi300x_watched_wave() {
    watched("mi300x", "gfx942", 64);
}

#[test]
fn a_faulting_wave_is_dumped_at_the_failing_store() {
    let j = job(
        "gfx1100",
        "poke",
        1,
        32,
        r#""buffers": {}, "args": [{"u64": 3735879680}]"#,
    );
    let err = fails(&["run", j.to_str().unwrap(), "--wave-dump", "fault"]);
    assert!(err.contains("faulted"), "{err}");
    // The dump's pc is the instruction the fault names.
    let at = err
        .split("memory fault at ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .unwrap_or_else(|| panic!("no fault address: {err}"));
    assert!(
        err.contains(&format!("  pc {at}  exec 0xffffffff")),
        "{err}"
    );
    // Without the flag, no dump.
    let plain = fails(&["run", j.to_str().unwrap()]);
    assert!(!plain.contains("faulted"), "{plain}");
}

#[test]
fn a_hung_wave_is_dumped_when_the_bound_stops_it() {
    let j = job(
        "gfx1100",
        "spin",
        1,
        32,
        r#""buffers": {"flag": {"type": "u32", "count": 1}}, "args": [{"buffer": "flag"}]"#,
    );
    let err = fails(&[
        "run",
        j.to_str().unwrap(),
        "--timeout-s",
        "1",
        "--wave-dump",
        "fault",
    ]);
    assert!(
        err.contains("running when the host stopped the dispatch"),
        "{err}"
    );
}

#[test]
fn a_wave_the_grid_lacks_is_refused_before_the_run() {
    let j = job(
        "gfx1100",
        "mark",
        2,
        96,
        r#""buffers": {"out": {"type": "u32", "count": 192}}, "args": [{"buffer": "out"}]"#,
    );
    let j = j.to_str().unwrap();
    let err = fails(&["run", j, "--wave-dump", "2/0"]);
    assert!(err.contains("the grid has no workgroup (2, 0, 0)"), "{err}");
    let err = fails(&["run", j, "--wave-dump", "0/3"]);
    assert!(err.contains("3 wave(s) of 32 (0 to 2)"), "{err}");
    let err = fails(&["run", j, "--wave-dump", "1"]);
    assert!(err.contains("X[,Y[,Z]]/W"), "{err}");
}
