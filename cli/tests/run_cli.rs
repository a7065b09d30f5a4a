//! `barebell run JOB.json` on the model: kernels built here with clang-19
//! for gfx1100 and gfx1201 as code objects v4, v5 and v6 (and the generic
//! targets at v6), and for gfx942 on the GC 9.4.3 parts, loaded and
//! launched by the CLI, their buffers checked against references computed
//! here from the job's own inputs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const KERNELS: &str = include_str!("kernels/run.cl");

/// (processor, code object version, model part).
const TARGETS: &[(&str, u8, &str)] = &[
    ("gfx1100", 4, "navi31"),
    ("gfx1100", 5, "navi31"),
    ("gfx1100", 6, "navi31"),
    ("gfx11-generic", 6, "navi31"),
    ("gfx1201", 4, "navi48"),
    ("gfx1201", 5, "navi48"),
    ("gfx1201", 6, "navi48"),
    ("gfx12-generic", 6, "navi48"),
];

/// A name part unique to this call: test threads share the process id.
fn unique() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}.{n}", std::process::id())
}

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("run-cli");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds `kernels/run.cl` for `mcpu` at code object version `cov`.
fn build(mcpu: &str, cov: u8) -> PathBuf {
    let d = dir();
    let src = d.join("run.cl");
    if std::fs::read_to_string(&src).ok().as_deref() != Some(KERNELS) {
        let tmp = d.join(format!("run.cl.{}", unique()));
        std::fs::write(&tmp, KERNELS).unwrap();
        std::fs::rename(&tmp, &src).unwrap();
    }
    let out = d.join(format!("run-{mcpu}-v{cov}.co"));
    let tmp = d.join(format!("run-{mcpu}-v{cov}.{}.tmp", unique()));
    let st = Command::new("clang-19")
        .args(["-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O2"])
        .arg(format!("-mcpu={mcpu}"))
        .arg(format!("-mcode-object-version={cov}"))
        .args(["-cl-kernel-arg-info", "-x", "cl"])
        .arg(&src)
        .arg("-o")
        .arg(&tmp)
        .status()
        .expect("clang-19 (`cargo xtask deps` installs it)");
    assert!(st.success(), "clang-19 failed for {mcpu} v{cov}");
    std::fs::rename(&tmp, &out).unwrap();
    out
}

/// Runs `barebell run --json` on `job` (with `code_object` set to `co`);
/// returns (success, stdout, stderr).
fn run(co: &Path, part: &str, mut job: Value, extra: &[&str]) -> (bool, String, String) {
    job["code_object"] = Value::from(co.to_str().unwrap());
    let name = format!(
        "{}-{}-{}.json",
        co.file_stem().unwrap().to_str().unwrap(),
        job["kernel"].as_str().unwrap(),
        unique()
    );
    let path = dir().join(name);
    std::fs::write(&path, job.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .arg("run")
        .arg(&path)
        .args(["--part", part, "--json"])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn run_ok(co: &Path, part: &str, job: Value) -> Value {
    let (ok, out, err) = run(co, part, job, &[]);
    assert!(ok, "{}: {err}", co.display());
    serde_json::from_str(&out).unwrap()
}

fn values(v: &Value, buffer: &str) -> Vec<f64> {
    v["buffers"][buffer]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// A small seeded generator for inputs (the test's own, not the model's).
fn inputs(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as i32 - (1 << 23)) as f32 / 4096.0
        })
        .collect()
}

#[test]
fn saxpy_on_every_target_and_code_object_version() {
    for &(mcpu, cov, part) in TARGETS {
        let co = build(mcpu, cov);
        // 5 workgroups of 64 over n = 300: the last workgroup is cut by
        // the kernel's bound check; y past n must stay as it was.
        let (n, len) = (300usize, 320usize);
        let y = inputs(u64::from(cov) * 31 + mcpu.len() as u64, len);
        let x = inputs(7 + u64::from(cov), len);
        let a = 1.75f32;
        let job = serde_json::json!({
            "code_object": "", "kernel": "saxpy", "grid": [5], "block": [64],
            "buffers": {
                "y": {"type": "f32", "values": y},
                "x": {"type": "f32", "values": x},
            },
            "args": [{"buffer": "y"}, {"buffer": "x"}, {"f32": a}, {"u32": n}]
        });
        let v = run_ok(&co, part, job);
        assert_eq!(v["kernel"], "saxpy");
        assert!(v["dispatch_ns"].as_u64().unwrap() > 0);
        let got = values(&v, "y");
        for i in 0..len {
            let g = got[i] as f32;
            if i < n {
                // One rounding (fused) or two (multiply, then add): clang
                // may contract `a * x + y` (OpenCL's default fp-contract).
                let fused = a.mul_add(x[i], y[i]);
                let split = a * x[i] + y[i];
                assert!(
                    g == fused || g == split,
                    "{mcpu} v{cov} y[{i}] = {g}, expected {fused} or {split}"
                );
            } else {
                assert_eq!(g, y[i], "{mcpu} v{cov}: y[{i}] past n changed");
            }
        }
        assert_eq!(
            values(&v, "x"),
            x.iter().map(|&f| f64::from(f)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn implicit_block_counts_and_group_sizes_reach_the_kernel() {
    // A 3-D launch: 3 x 2 x 2 workgroups of 8 x 4 x 2 work-items. Each
    // workgroup writes (block counts, group sizes), which must be the
    // job's grid and block.
    for &(mcpu, cov, part) in TARGETS.iter().filter(|t| t.1 >= 5) {
        let co = build(mcpu, cov);
        let job = serde_json::json!({
            "code_object": "", "kernel": "dims", "grid": [3, 2, 2], "block": [8, 4, 2],
            "buffers": {"out": {"type": "u32", "count": 12 * 6, "fill": 0}},
            "args": [{"buffer": "out"}]
        });
        let v = run_ok(&co, part, job);
        let got = values(&v, "out");
        for g in 0..12 {
            assert_eq!(
                &got[g * 6..g * 6 + 6],
                &[3.0, 2.0, 2.0, 8.0, 4.0, 2.0],
                "{mcpu} v{cov}, workgroup {g}"
            );
        }
    }
}

#[test]
fn dispatch_packet_sizes_reach_the_kernel_on_every_version() {
    // v4 has no implicit block counts; the kernel reads the packet through
    // the dispatch pointer: workgroup size 32, grid 4 x 32 = 128.
    for &(mcpu, cov, part) in TARGETS {
        let co = build(mcpu, cov);
        let job = serde_json::json!({
            "code_object": "", "kernel": "packet_dims", "grid": [4], "block": [32],
            "buffers": {"out": {"type": "u32", "count": 16, "fill": 7}},
            "args": [{"buffer": "out"}]
        });
        let v = run_ok(&co, part, job);
        let got = values(&v, "out");
        for g in 0..4 {
            assert_eq!(
                &got[g * 4..g * 4 + 4],
                &[32.0, 128.0, 32.0, g as f64],
                "{mcpu} v{cov}, workgroup {g}"
            );
        }
    }
}

#[test]
fn a_private_array_runs_in_queue_scratch() {
    for &(mcpu, cov, part) in &[("gfx1100", 5, "navi31"), ("gfx1201", 6, "navi48")] {
        let co = build(mcpu, cov);
        let k = 5u32;
        let job = serde_json::json!({
            "code_object": "", "kernel": "private_rev", "grid": [2], "block": [64],
            "buffers": {"out": {"type": "u32", "count": 128, "fill": 0}},
            "args": [{"buffer": "out"}, {"u32": k}]
        });
        let v = run_ok(&co, part, job);
        let got = values(&v, "out");
        for (i, g) in got.iter().enumerate() {
            let i = i as u32;
            assert_eq!(
                *g,
                f64::from(i * 100 + (i + k) % 48),
                "{mcpu} v{cov} out[{i}]"
            );
        }
    }
}

#[test]
fn a_job_that_does_not_fit_the_metadata_fails_before_launch() {
    let co = build("gfx1100", 5);
    // A scalar where the kernel takes buffer `y`.
    let job = serde_json::json!({
        "code_object": "", "kernel": "saxpy", "grid": [1], "block": [64],
        "buffers": {"x": {"type": "f32", "count": 64, "fill": 1.0}},
        "args": [{"f32": 1.0}, {"buffer": "x"}, {"f32": 2.0}, {"u32": 64}]
    });
    let (ok, out, err) = run(&co, "navi31", job, &[]);
    assert!(!ok);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("argument 0 (y)"), "{err}");
    assert!(err.contains("expects a buffer"), "{err}");
    // Too few arguments.
    let job = serde_json::json!({
        "code_object": "", "kernel": "saxpy", "grid": [1], "block": [64],
        "buffers": {"x": {"type": "f32", "count": 64, "fill": 1.0}},
        "args": [{"buffer": "x"}]
    });
    let (ok, _, err) = run(&co, "navi31", job, &[]);
    assert!(!ok);
    assert!(err.contains("takes 4 arguments; the job gives 1"), "{err}");
    // A gfx1201 code object on the gfx11 part is refused by the loader.
    let co12 = build("gfx1201", 5);
    let job = serde_json::json!({
        "code_object": "", "kernel": "packet_dims", "grid": [1], "block": [32],
        "buffers": {"out": {"type": "u32", "count": 4}},
        "args": [{"buffer": "out"}]
    });
    let (ok, _, err) = run(&co12, "navi31", job, &[]);
    assert!(!ok);
    assert!(err.contains("gfx1201") && err.contains("navi31"), "{err}");
}

/// `barebell run --mapping`: the one bring-up on the model GPU, the job
/// on the user queue it mapped, its code, kernargs and buffers in the
/// user memory the queue's page tables map (VMID 8 for direct and KIQ,
/// MES's pick for mes); the CP reads them through those tables.
#[test]
fn mapped_queues_run_jobs_on_both_parts() {
    for &(mcpu, cov, part) in &[("gfx1100", 5, "navi31"), ("gfx1201", 6, "navi48")] {
        let co = build(mcpu, cov);
        for mapping in ["mes", "direct", "kiq"] {
            let (n, len) = (200usize, 256usize);
            let y = inputs(u64::from(cov) + mapping.len() as u64, len);
            let x = inputs(11, len);
            let a = -0.5f32;
            let job = serde_json::json!({
                "code_object": "", "kernel": "saxpy", "grid": [4], "block": [64],
                "buffers": {
                    "y": {"type": "f32", "values": y},
                    "x": {"type": "f32", "values": x},
                },
                "args": [{"buffer": "y"}, {"buffer": "x"}, {"f32": a}, {"u32": n}]
            });
            let (ok, out, err) = run(&co, part, job, &["--mapping", mapping]);
            assert!(ok, "{mcpu} {mapping}: {err}");
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["kernel"], "saxpy");
            let got = values(&v, "y");
            for i in 0..len {
                let g = got[i] as f32;
                if i < n {
                    let fused = a.mul_add(x[i], y[i]);
                    let split = a * x[i] + y[i];
                    assert!(
                        g == fused || g == split,
                        "{mcpu} {mapping} y[{i}] = {g}, expected {fused} or {split}"
                    );
                } else {
                    assert_eq!(g, y[i], "{mcpu} {mapping}: y[{i}] past n changed");
                }
            }
            // The implicit block counts and group sizes, read through the
            // kernarg segment in user memory.
            let job = serde_json::json!({
                "code_object": "", "kernel": "dims", "grid": [2, 3, 1], "block": [4, 2, 8],
                "buffers": {"out": {"type": "u32", "count": 6 * 6, "fill": 0}},
                "args": [{"buffer": "out"}]
            });
            let (ok, out, err) = run(&co, part, job, &["--mapping", mapping]);
            assert!(ok, "{mcpu} {mapping}: {err}");
            let v: Value = serde_json::from_str(&out).unwrap();
            let got = values(&v, "out");
            for g in 0..6 {
                assert_eq!(
                    &got[g * 6..g * 6 + 6],
                    &[2.0, 3.0, 1.0, 4.0, 2.0, 8.0],
                    "{mcpu} {mapping}, workgroup {g}"
                );
            }
        }
    }
}

/// A kernel reading an address its queue's page tables do not map stops
/// with the VM fault: the walk's refusal and the address space it was
/// made in, on a mapped queue; a plain unmapped-memory fault on the
/// unmapped path (no page tables there).
#[test]
fn a_kernel_reading_an_unmapped_address_reports_the_vm_fault() {
    let co = build("gfx1100", 5);
    let job = serde_json::json!({
        "code_object": "", "kernel": "peek", "grid": [1], "block": [1],
        "buffers": {"out": {"type": "u32", "count": 4, "fill": 7}},
        "args": [{"buffer": "out"}, {"u64": 0x1000u64}]
    });
    for (mapping, space) in [
        ("direct", "Vmid(8)"),
        ("kiq", "Vmid(8)"),
        // MES's pick: the lowest VMID of the mask SET_HW_RSRC gave it
        // (Linux's 0xffffff00), a model convention.
        ("mes", "Vmid(8)"),
    ] {
        let (ok, out, err) = run(&co, "navi31", job.clone(), &["--mapping", mapping]);
        assert!(!ok, "{mapping}: {out}");
        assert!(out.is_empty(), "{mapping}: {out}");
        assert!(
            err.contains("read of 4 bytes at 0x1000")
                && err.contains("VM fault: read of page 0x1000 does not translate in")
                && err.contains(space)
                && err.contains("Walk(Invalid"),
            "{mapping}: {err}"
        );
    }
    // On the unmapped path (no page tables, the CP's DMA windows) the same
    // read is a plain unmapped-memory fault.
    let (ok, _, err) = run(&co, "navi31", job, &[]);
    assert!(!ok);
    assert!(
        err.contains("read of 4 bytes at 0x1000 hits unmapped memory") && !err.contains("VM fault"),
        "{err}"
    );
}

/// On `--vfio`/`--sysfs` the job goes through the same bring-up and
/// launch code as `--mapping` on the model; here there is no GPU, so the
/// open fails naming the address, and `--help` says it is unverified.
#[test]
fn hardware_targets_take_the_mapped_path_and_are_labelled_unverified() {
    let co = build("gfx1100", 5);
    let job = serde_json::json!({
        "code_object": "", "kernel": "packet_dims", "grid": [1], "block": [32],
        "buffers": {"out": {"type": "u32", "count": 4}},
        "args": [{"buffer": "out"}]
    });
    let path = dir().join(format!("hw.{}.json", unique()));
    let mut job = job;
    job["code_object"] = Value::from(co.to_str().unwrap());
    std::fs::write(&path, job.to_string()).unwrap();
    for flag in ["--vfio", "--sysfs"] {
        let extra: &[&str] = if flag == "--sysfs" {
            &["--unsafe-physical-dma"]
        } else {
            &[]
        };
        let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .arg("run")
            .arg(&path)
            .args([flag, "ffff:1f:1f.7"])
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("ffff:1f:1f.7"), "{flag}: {err}");
    }
    let help = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("UNVERIFIED ON HARDWARE"), "{help}");
    assert!(!help.to_lowercase().contains("supported"), "{help}");
}

/// Workgroups each XCC ran, from `--json`'s `xcc_workgroups`.
fn xcc_counts(v: &Value) -> Vec<u64> {
    v["xcc_workgroups"]
        .as_array()
        .unwrap_or_else(|| panic!("no xcc_workgroups in {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Issue 18: a gfx942 kernel runs on the GC 9.4.3 parts, by default (the
/// CP model with the queue bound straight to it) and on a user queue the
/// one bring-up mapped directly, through the KIQ and through the HWS
/// runlist, to the right result, its workgroups spread over every XCC.
///
/// The expected spread is worked by hand from the model's documented
/// convention (`barebell_isa::launch::Share`, `Shader::xccs`): every XCC
/// runs the dispatch, workgroups are dealt round-robin by flat id in
/// chunks of `compute_tg_chunk_size`, which `init_mqd_v9_4_3()` sets to 1
/// (and the unmapped CP model uses 1): workgroup `g` runs on XCC
/// `g % xccs`. 19 workgroups over 8 XCCs: ids 0..18, XCCs 0-2 get three
/// (0/8/16, 1/9/17, 2/10/18), XCCs 3-7 two. Over 4 XCCs (mi308x as
/// modelled): XCCs 0-2 get five (0,4,...,16 / ... / 2,...,18), XCC 3 four
/// (3, 7, 11, 15).
#[test]
fn gfx942_saxpy_spreads_over_every_xcc_on_both_gc_9_4_3_parts() {
    let co = build("gfx942", 5);
    let parts: [(&str, &[u64]); 2] = [
        ("mi300x", &[3, 3, 3, 2, 2, 2, 2, 2]),
        ("mi308x", &[5, 5, 5, 4]),
    ];
    for (part, spread) in parts {
        for mapping in [None, Some("direct"), Some("kiq"), Some("hws")] {
            let label = format!("{part} {}", mapping.unwrap_or("unmapped"));
            // 19 workgroups of 64 over n = 1200: the last workgroup is cut
            // by the bound check; y past n must stay as it was.
            let (n, len) = (1200usize, 1216usize);
            let y = inputs(part.len() as u64 * 13 + label.len() as u64, len);
            let x = inputs(23, len);
            let a = 2.25f32;
            let job = serde_json::json!({
                "code_object": "", "kernel": "saxpy", "grid": [19], "block": [64],
                "buffers": {
                    "y": {"type": "f32", "values": y},
                    "x": {"type": "f32", "values": x},
                },
                "args": [{"buffer": "y"}, {"buffer": "x"}, {"f32": a}, {"u32": n}]
            });
            let extra: Vec<&str> = mapping.map(|m| vec!["--mapping", m]).unwrap_or_default();
            let (ok, out, err) = run(&co, part, job, &extra);
            assert!(ok, "{label}: {err}");
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["kernel"], "saxpy");
            let got = values(&v, "y");
            for i in 0..len {
                let g = got[i] as f32;
                if i < n {
                    let fused = a.mul_add(x[i], y[i]);
                    let split = a * x[i] + y[i];
                    assert!(
                        g == fused || g == split,
                        "{label} y[{i}] = {g}, expected {fused} or {split}"
                    );
                } else {
                    assert_eq!(g, y[i], "{label}: y[{i}] past n changed");
                }
            }
            assert_eq!(
                values(&v, "x"),
                x.iter().map(|&f| f64::from(f)).collect::<Vec<_>>(),
                "{label}"
            );
            let counts = xcc_counts(&v);
            assert_eq!(counts, spread, "{label}");
            assert!(counts.iter().all(|&c| c > 0), "{label}: {counts:?}");
        }
    }
}

/// The implicit block counts and group sizes reach a gfx942 kernel
/// through the kernarg segment, unmapped and on the HWS queue; a private
/// array runs in queue scratch sized as ROCR sizes it for gfx9 (unmapped:
/// the mapped path's 1 MiB of user memory holds no full-device scratch on
/// any part).
#[test]
fn gfx942_hidden_arguments_and_scratch() {
    let co = build("gfx942", 5);
    for mapping in [None, Some("hws")] {
        let extra: Vec<&str> = mapping.map(|m| vec!["--mapping", m]).unwrap_or_default();
        let job = serde_json::json!({
            "code_object": "", "kernel": "dims", "grid": [3, 2, 2], "block": [8, 4, 2],
            "buffers": {"out": {"type": "u32", "count": 12 * 6, "fill": 0}},
            "args": [{"buffer": "out"}]
        });
        let (ok, out, err) = run(&co, "mi300x", job, &extra);
        assert!(ok, "{mapping:?}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let got = values(&v, "out");
        for g in 0..12 {
            assert_eq!(
                &got[g * 6..g * 6 + 6],
                &[3.0, 2.0, 2.0, 8.0, 4.0, 2.0],
                "{mapping:?}, workgroup {g}"
            );
        }
        // 12 workgroups, one at a time round-robin over 8 XCCs: XCCs 0-3
        // run two (0/8 .. 3/11), XCCs 4-7 one.
        assert_eq!(xcc_counts(&v), [2, 2, 2, 2, 1, 1, 1, 1], "{mapping:?}");
    }
    let k = 5u32;
    let job = serde_json::json!({
        "code_object": "", "kernel": "private_rev", "grid": [9], "block": [64],
        "buffers": {"out": {"type": "u32", "count": 576, "fill": 0}},
        "args": [{"buffer": "out"}, {"u32": k}]
    });
    let v = run_ok(&co, "mi300x", job);
    for (i, g) in values(&v, "out").iter().enumerate() {
        let i = i as u32;
        assert_eq!(*g, f64::from(i * 100 + (i + k) % 48), "out[{i}]");
    }
    // 9 workgroups over 8 XCCs: XCC 0 runs 0 and 8.
    assert_eq!(xcc_counts(&v), [2, 1, 1, 1, 1, 1, 1, 1]);
}

/// Code for another processor, or for xnack on where the part runs with
/// xnack off, is refused by the loader's target check before anything
/// runs, naming both sides; on the mapped path too.
#[test]
fn gc_9_4_3_parts_refuse_code_for_other_targets() {
    let job = serde_json::json!({
        "code_object": "", "kernel": "packet_dims", "grid": [1], "block": [32],
        "buffers": {"out": {"type": "u32", "count": 4}},
        "args": [{"buffer": "out"}]
    });
    let co = build("gfx1100", 5);
    for extra in [&[][..], &["--mapping", "hws"][..]] {
        let (ok, out, err) = run(&co, "mi300x", job.clone(), extra);
        assert!(!ok, "{extra:?}: {out}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("code object built for gfx1100")
                && err.contains("cannot run on mi300x (gfx942:sramecc+:xnack-)")
                && err.contains("the processor differs"),
            "{extra:?}: {err}"
        );
    }
    // clang's default gfx942 code (xnack any) ran above; xnack+ code does
    // not fit the part's xnack- (a model value, docs/kernel.md).
    let co = build("gfx942:xnack+", 5);
    let (ok, _, err) = run(&co, "mi308x", job, &[]);
    assert!(!ok);
    assert!(
        err.contains("cannot run on mi308x") && err.contains("the xnack setting does not fit"),
        "{err}"
    );
}

/// A user coming from OpenCL writes the global size as the grid: 128
/// elements in blocks of 64 become 128 workgroups (8192 work-items). The
/// run goes ahead, as a HIP launch would, but stderr names the grid that
/// was probably meant; the same job written in workgroups gets no warning.
#[test]
fn a_grid_written_as_a_global_size_is_warned_about() {
    let co = build("gfx1100", 5);
    let job = |grid: u32| {
        serde_json::json!({
            "code_object": "", "kernel": "saxpy", "grid": [grid], "block": [64],
            "buffers": {
                "y": {"type": "f32", "count": 128, "fill": 1.0},
                "x": {"type": "f32", "count": 128, "fill": 2.0},
            },
            "args": [{"buffer": "y"}, {"buffer": "x"}, {"f32": 3.0}, {"u32": 128}]
        })
    };
    let (ok, out, err) = run(&co, "navi31", job(128), &[]);
    assert!(ok, "{err}");
    assert!(
        err.contains("warning: grid counts workgroups, not work-items: 128 workgroups of 64 in x launch 8192 work-items")
            && err.contains("the grid is 2"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(values(&v, "y").iter().all(|&y| y == 7.0), "{out}");
    let (ok, _, err) = run(&co, "navi31", job(2), &[]);
    assert!(ok && !err.contains("warning"), "{err}");
}

fn spin_job(co: &Path) -> PathBuf {
    let job = serde_json::json!({
        "code_object": co.to_str().unwrap(), "kernel": "spin", "grid": [1], "block": [32],
        "buffers": {"x": {"type": "u32", "count": 2, "fill": 0}},
        "args": [{"buffer": "x"}]
    });
    let path = dir().join(format!("spin-{}.json", unique()));
    std::fs::write(&path, job.to_string()).unwrap();
    path
}

/// A kernel that never ends is stopped at `--timeout-s` (default 60 s,
/// Linux's bare-metal compute job timeout) with a report, on the
/// unmapped path and on a mapped queue, which is then torn down.
#[test]
fn a_hung_kernel_is_stopped_at_its_wall_clock_bound() {
    let co = build("gfx1100", 5);
    let job = spin_job(&co);
    for extra in [&[][..], &["--mapping", "direct"][..]] {
        let t = std::time::Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .arg("run")
            .arg(&job)
            .args(["--timeout-s", "1"])
            .args(extra)
            .output()
            .unwrap();
        let took = t.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {err}");
        assert!(
            err.contains("the kernel did not finish within 1 s (--timeout-s)")
                && err.contains("stopped by the host after"),
            "{extra:?}: {err}"
        );
        assert!(
            took < std::time::Duration::from_secs(10),
            "{extra:?}: {took:?}"
        );
    }
    // Out of range.
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .arg("run")
        .arg(&job)
        .args(["--timeout-s", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--timeout-s"));
}

/// SIGINT in the middle of a kernel on a mapped queue: the dispatch is
/// stopped, the device torn down, and the process ends within a second
/// with the status a shell reports for SIGINT.
#[test]
fn sigint_mid_kernel_tears_down_within_a_second() {
    let co = build("gfx1100", 5);
    let job = spin_job(&co);
    let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .arg("run")
        .arg(&job)
        .args(["--mapping", "direct"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The bring-up takes a fraction of a second; then the kernel spins.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the kernel should still run"
    );
    let sent = std::time::Instant::now();
    // SAFETY: kill(2) on this test's own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(took < std::time::Duration::from_secs(1), "{took:?}");
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted by SIGINT; the device was torn down"),
        "{err}"
    );
}

/// A second stop signal while the first one's teardown is still to come
/// ends the process at once, saying so, with the status a shell reports
/// for the second signal (on a GPU, bus mastering is cleared first:
/// `barebell_pcie::emergency`, tested against a config-space file there).
#[test]
fn a_second_stop_signal_exits_at_once() {
    let co = build("gfx1100", 5);
    let job = spin_job(&co);
    let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .arg("run")
        .arg(&job)
        .args(["--mapping", "direct"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the kernel should still run"
    );
    let sent = std::time::Instant::now();
    // Two different signals, so that the kernel cannot merge them into
    // one pending signal. SAFETY: kill(2) on this test's own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(sent.elapsed() < std::time::Duration::from_secs(1), "{err}");
    // The status is the second signal's; which of the two the kernel
    // delivers first is its choice.
    let code = out.status.code();
    assert!(
        code == Some(128 + libc::SIGTERM) || code == Some(128 + libc::SIGINT),
        "{code:?}: {err}"
    );
    // The model has no bus mastering to clear, and says nothing of it.
    assert!(
        err.contains("second stop signal: exiting without the teardown"),
        "{err}"
    );
}
