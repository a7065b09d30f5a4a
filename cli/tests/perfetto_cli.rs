//! `--perfetto FILE` writes files the Perfetto UI's JSON loader takes: the
//! object form of the Trace Event Format (`traceEvents`, each event with
//! `name`, `ph`, `pid`, `tid`, `ts` in microseconds; `dur` on complete
//! events, a scope on instant events), checked here by a validator
//! written from that format's description, not by the writer's code; and
//! the events say what the run's own text output says.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn file(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("perfetto-cli");
    std::fs::create_dir_all(&d).unwrap();
    d.join(format!("{}-{name}", std::process::id()))
}

fn barebell(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "barebell {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The trace's events, after checking every one against the format.
fn valid_events(path: &Path) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().expect("a traceEvents array");
    for e in events {
        let ph = e["ph"].as_str().unwrap_or_else(|| panic!("no ph: {e}"));
        assert!(e["name"].is_string(), "no name: {e}");
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "pid/tid: {e}");
        if !e["args"].is_null() {
            assert!(e["args"].is_object(), "args: {e}");
        }
        match ph {
            "M" => assert!(
                ["process_name", "thread_name"].contains(&e["name"].as_str().unwrap()),
                "{e}"
            ),
            "X" => {
                assert!(e["ts"].as_f64().unwrap() >= 0.0, "{e}");
                assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
            }
            "i" => {
                assert!(e["ts"].as_f64().unwrap() >= 0.0, "{e}");
                assert!(["t", "p", "g"].contains(&e["s"].as_str().unwrap()), "{e}");
            }
            other => panic!("an event kind barebell does not write: {other}"),
        }
    }
    events.clone()
}

fn names<'a>(events: &'a [Value], ph: &str, tid: u64) -> Vec<&'a str> {
    events
        .iter()
        .filter(|e| e["ph"] == ph && e["tid"] == tid)
        .map(|e| e["name"].as_str().unwrap())
        .collect()
}

#[test]
fn a_bringup_trace_has_each_step_and_every_register_access() {
    for part in ["navi31", "mi300x"] {
        let mapping = if part == "navi31" { "mes" } else { "hws" };
        let path = file(&format!("bringup-{part}.json"));
        let p = path.to_str().unwrap();
        let out = barebell(&[
            "bringup",
            "--part",
            part,
            "--mapping",
            mapping,
            "--trace",
            "--perfetto",
            p,
        ]);
        let events = valid_events(&path);
        // The steps, in the order the text output reports them.
        let mut steps: Vec<&str> = Vec::new();
        for l in out.lines() {
            if let Some(rest) = l.strip_prefix("step ") {
                let s = rest.split(':').next().unwrap();
                if steps.last() != Some(&s) {
                    steps.push(s);
                }
            }
        }
        assert!(steps.len() >= 8, "{part}: {steps:?}");
        assert_eq!(names(&events, "X", 1), steps, "{part}");
        // Slices back to back, in time order.
        let slices: Vec<(f64, f64)> = events
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect();
        for w in slices.windows(2) {
            assert!(
                (w[0].0 + w[0].1 - w[1].0).abs() < 0.01,
                "{part}: {w:?} are not back to back"
            );
        }
        // Every access `--trace` printed, in order, as an instant.
        let printed: Vec<String> = out
            .lines()
            .filter_map(|l| l.strip_prefix("  "))
            .filter(|l| l.starts_with("W ") || l.starts_with("R "))
            .map(|l| l.split(" @").next().unwrap().to_string())
            .collect();
        let recorded: Vec<String> = names(&events, "i", 2)
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(printed.len() > 1000, "{part}: {} accesses", printed.len());
        let printed_unnamed: Vec<String> = printed
            .iter()
            .map(|l| {
                // `W [0x1234] = ...` prints as `W [0x1234]`.
                l.split(" = ").next().unwrap().to_string()
            })
            .collect();
        assert_eq!(recorded, printed_unnamed, "{part}");
        let count = format!("({} register accesses)", printed.len());
        assert!(out.contains(&count), "{part}: no `{count}` in the output");
    }
}

#[test]
fn a_vector_add_trace_has_its_steps_adding_up_to_the_total() {
    let path = file("vadd.json");
    let out = barebell(&[
        "vector-add",
        "--elements",
        "4096",
        "--json",
        "--perfetto",
        path.to_str().unwrap(),
    ]);
    let report: Value = serde_json::from_str(&out).unwrap();
    let events = valid_events(&path);
    let want: Vec<&str> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(names(&events, "X", 1), want);
    let end = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let total_us = report["total_ns"].as_f64().unwrap() / 1000.0;
    assert!((end - total_us).abs() < 0.01, "{end} vs {total_us}");
}

#[test]
fn a_run_trace_has_its_load_and_dispatch() {
    let src = file("k.cl");
    std::fs::write(
        &src,
        "kernel void inc(global uint *x) { x[__builtin_amdgcn_workitem_id_x()] += 1; }\n",
    )
    .unwrap();
    let co = file("k.co");
    let st = Command::new("clang-19")
        .args([
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx1100",
            "-nogpulib",
            "-O2",
        ])
        .args(["-cl-kernel-arg-info", "-x", "cl"])
        .arg(&src)
        .arg("-o")
        .arg(&co)
        .status()
        .expect("clang-19 (`cargo xtask deps` installs it)");
    assert!(st.success());
    let job = file("k.json");
    std::fs::write(
        &job,
        serde_json::json!({
            "code_object": co.to_str().unwrap(), "kernel": "inc", "grid": [1], "block": [32],
            "buffers": {"x": {"type": "u32", "count": 32, "fill": 41}},
            "args": [{"buffer": "x"}]
        })
        .to_string(),
    )
    .unwrap();
    let path = file("run.json");
    let out = barebell(&[
        "run",
        job.to_str().unwrap(),
        "--json",
        "--perfetto",
        path.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["buffers"]["x"]["values"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x == 42)
    );
    let events = valid_events(&path);
    assert_eq!(names(&events, "X", 1), ["load", "dispatch"]);
    let dispatch = events.iter().find(|e| e["name"] == "dispatch").unwrap();
    let want_us = v["dispatch_ns"].as_f64().unwrap() / 1000.0;
    assert!(
        (dispatch["dur"].as_f64().unwrap() - want_us).abs() < 0.01,
        "{dispatch} vs {want_us}"
    );
    assert!(dispatch["args"]["waves"].as_u64().unwrap() >= 1);
}

/// latency's sample: at most 2,000 submissions, each its four phases back
/// to back and in time order, the iterations those of the CSV.
#[test]
fn a_latency_trace_has_a_sample_of_submissions_with_their_phases() {
    let path = file("lat.json");
    let csv = file("lat.csv");
    barebell(&[
        "latency",
        "--iterations",
        "5000",
        "--warmup",
        "100",
        "--perfetto",
        path.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let events = valid_events(&path);
    let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(
        !slices.is_empty() && slices.len() <= 4 * 2000,
        "{}",
        slices.len()
    );
    assert_eq!(slices.len() % 4, 0);
    let csv = std::fs::read_to_string(&csv).unwrap();
    let rows: std::collections::HashMap<u64, Vec<u64>> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<u64> = l.split(',').take(5).map(|x| x.parse().unwrap()).collect();
            (f[0], f[1..].to_vec())
        })
        .collect();
    let mut last_start = -1.0;
    for s in slices.chunks(4) {
        let names: Vec<&str> = s.iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["publish", "doorbell", "pickup", "completion"]);
        let it = s[0]["args"]["iteration"].as_u64().unwrap();
        assert!(s.iter().all(|e| e["args"]["iteration"] == it));
        // The durations are the CSV's for that iteration.
        let durs: Vec<f64> = s.iter().map(|e| e["dur"].as_f64().unwrap()).collect();
        for (d, ns) in durs.iter().zip(&rows[&it]) {
            assert!((d - *ns as f64 / 1000.0).abs() < 0.002, "iteration {it}");
        }
        for w in s.windows(2) {
            let end = w[0]["ts"].as_f64().unwrap() + w[0]["dur"].as_f64().unwrap();
            assert!((end - w[1]["ts"].as_f64().unwrap()).abs() < 0.002);
        }
        let start = s[0]["ts"].as_f64().unwrap();
        assert!(start >= last_start, "submissions in time order");
        last_start = start;
    }
}
