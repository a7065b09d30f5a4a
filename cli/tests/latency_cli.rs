//! `barebell latency` as a user runs it: the README's main command on the
//! model, the JSON keys the README documents, and `--compare`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

fn barebell(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("barebell-latency-{}-{name}", std::process::id()))
}

const PHASE_KEYS: [&str; 8] = ["count", "min", "mean", "p50", "p90", "p99", "p99_9", "max"];

fn check_phases(phases: &serde_json::Value, iterations: u64) {
    for phase in [
        "publish",
        "doorbell",
        "pickup",
        "completion",
        "total",
        "cp_launch",
        "cp_exec",
    ] {
        let p = &phases[phase];
        for k in PHASE_KEYS {
            assert!(p[k].is_number(), "phases.{phase}.{k} missing: {p}");
        }
        assert_eq!(p["count"], iterations);
        let (p50, p99, max) = (
            p["p50"].as_u64().unwrap(),
            p["p99"].as_u64().unwrap(),
            p["max"].as_u64().unwrap(),
        );
        assert!(p50 <= p99 && p99 <= max, "{phase}: {p}");
    }
    // The total is the sum of the four phases, so its median cannot be
    // below any one phase's minimum.
    let total_p50 = phases["total"]["p50"].as_u64().unwrap();
    for phase in ["publish", "doorbell", "pickup", "completion"] {
        assert!(phases[phase]["min"].as_u64().unwrap() <= total_p50);
    }
}

#[test]
fn default_run_writes_documented_json_csv_and_svg() {
    let (json, csv, svg) = (tmp("run.json"), tmp("run.csv"), tmp("run.svg"));
    let (code, out) = barebell(&[
        "latency",
        "--iterations",
        "500",
        "--warmup",
        "100",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("phase (ns)") && out.contains("total"), "{out}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["params"]["iterations"], 500);
    assert_eq!(v["params"]["mapping"], "unmapped");
    assert!(v["timer"]["tsc_hz"].as_u64().unwrap() > 0);
    check_phases(&v["phases"], 500);
    let rows = std::fs::read_to_string(&csv).unwrap();
    let mut lines = rows.lines();
    assert_eq!(
        lines.next(),
        Some(
            "iteration,publish_ns,doorbell_ns,pickup_ns,completion_ns,total_ns,cp_launch_ns,cp_exec_ns"
        )
    );
    assert_eq!(lines.count(), 500);
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.contains("CDF by phase"));
    // The log-binned histogram spans min..max: its bars (plotters fills
    // them #D62728) are drawn, and a log axis has more than one bar for
    // any spread of latencies.
    assert!(s.contains("total latency, log bins and counts (min..max)"));
    assert!(
        s.matches("fill=\"#D62728\"").count() >= 2,
        "no log-histogram bars"
    );
    for f in [json, csv, svg] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn compare_runs_all_three_mapping_modes() {
    for part in ["navi31", "navi48"] {
        let json = tmp(&format!("cmp-{part}.json"));
        let (code, out) = barebell(&[
            "latency",
            "--compare",
            "--part",
            part,
            "--iterations",
            "300",
            "--warmup",
            "50",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{out}");
        for mode in ["mes", "direct", "kiq"] {
            assert!(
                out.lines().any(|l| l.starts_with(mode)),
                "no {mode} row:\n{out}"
            );
        }
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        for mode in ["mes", "direct", "kiq"] {
            let r = &v["runs"][mode];
            assert!(r["create_ns"].as_u64().unwrap() > 0, "{mode}: {r}");
            check_phases(&r["phases"], 300);
        }
        let _ = std::fs::remove_file(json);
    }
}

#[test]
fn kernel_vadd_runs_on_the_model_and_the_json_names_it() {
    for part in ["navi31", "navi48"] {
        let json = tmp(&format!("vadd-{part}.json"));
        let (code, out) = barebell(&[
            "latency",
            "--kernel",
            "vadd",
            "--part",
            part,
            "--iterations",
            "50",
            "--warmup",
            "5",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("kernel: vadd from built-in"), "{out}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        std::fs::remove_file(&json).ok();
        assert_eq!(v["params"]["kernel"], "vadd");
        let mcpu = if part == "navi31" {
            "gfx1100"
        } else {
            "gfx1201"
        };
        assert!(
            v["params"]["kernel_detail"]
                .as_str()
                .unwrap()
                .contains(mcpu),
            "{v}"
        );
        let first = v["params"]["first_launch_ns"].as_u64().unwrap();
        let load = v["params"]["load_ns"].as_u64().unwrap();
        assert!(
            load > 0 && load < first,
            "load {load} ns, first launch {first} ns"
        );
        check_phases(&v["phases"], 50);
    }
}

/// `--kernel vadd --mapping mes`: the model GPU brought up, the kernel
/// in the user memory the MES-mapped queue's page tables map (vadd's
/// result is checked by the CLI after the run), the JSON naming it. The
/// same placement code runs for a GPU's default empty-kernel dispatch.
#[test]
fn kernel_vadd_on_a_mes_mapped_queue_and_the_json_names_it() {
    let json = tmp("vadd-mes.json");
    let (code, out) = barebell(&[
        "latency",
        "--kernel",
        "vadd",
        "--mapping",
        "mes",
        "--iterations",
        "30",
        "--warmup",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("mapped by mes"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    assert_eq!(v["params"]["kernel"], "vadd");
    assert_eq!(v["params"]["mapping"], "mes");
    assert_eq!(v["params"]["packet"], "dispatch");
    assert!(v["create_ns"].as_u64().unwrap() > 0);
    check_phases(&v["phases"], 30);
    // The GPU default, the empty kernel, on a direct-mapped queue.
    let (code, out) = barebell(&[
        "latency",
        "--kernel",
        "empty",
        "--mapping",
        "direct",
        "--part",
        "navi48",
        "--iterations",
        "20",
        "--warmup",
        "2",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("gfx1201"), "{out}");
}

/// `--packet barrier` measures the barrier (the option a GPU keeps).
#[test]
fn packet_barrier_measures_a_barrier() {
    let json = tmp("barrier.json");
    let (code, out) = barebell(&[
        "latency",
        "--packet",
        "barrier",
        "--mapping",
        "kiq",
        "--iterations",
        "20",
        "--warmup",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    assert_eq!(v["params"]["packet"], "barrier");
    assert!(v["params"]["kernel"].is_null());
    check_phases(&v["phases"], 20);
    let (code, out) = barebell(&["latency", "--packet", "barrier", "--kernel", "vadd"]);
    assert_ne!(code, 0);
    assert!(out.contains("cannot be used with"), "{out}");
}

#[test]
fn kernel_from_a_file_needs_file_colon_name() {
    let (code, out) = barebell(&["latency", "--kernel", "nonsense", "--iterations", "1"]);
    assert_ne!(code, 0);
    assert!(out.contains("give empty, vadd or FILE.co:NAME"), "{out}");
}

/// Issue 18: `latency --part mi300x --mapping hws` measures on the queue
/// the HWS runlist mapped, `--compare` on a GC 9.4.3 part runs direct,
/// kiq and hws (no MES there), and the built-in vadd runs as gfx942 code
/// over the XCCs (its result checked by the CLI after the run).
#[test]
fn gc_9_4_3_parts_measure_hws_and_compare_direct_kiq_hws() {
    let json = tmp("mi300x-hws.json");
    let (code, out) = barebell(&[
        "latency",
        "--part",
        "mi300x",
        "--mapping",
        "hws",
        "--iterations",
        "100",
        "--warmup",
        "10",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("queue mapped by hws"), "{out}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    assert_eq!(v["params"]["mapping"], "hws");
    assert_eq!(v["params"]["part"], "mi300x");
    assert!(v["create_ns"].as_u64().unwrap() > 0, "{v}");
    check_phases(&v["phases"], 100);

    let json = tmp("mi308x-cmp.json");
    let (code, out) = barebell(&[
        "latency",
        "--compare",
        "--part",
        "mi308x",
        "--iterations",
        "100",
        "--warmup",
        "10",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    for mode in ["direct", "kiq", "hws"] {
        assert!(
            out.lines().any(|l| l.starts_with(mode)),
            "no {mode} row:\n{out}"
        );
    }
    assert!(!out.lines().any(|l| l.starts_with("mes")), "{out}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    for mode in ["direct", "kiq", "hws"] {
        let r = &v["runs"][mode];
        assert!(r["create_ns"].as_u64().unwrap() > 0, "{mode}: {r}");
        check_phases(&r["phases"], 100);
    }

    for extra in [&[][..], &["--mapping", "kiq"][..]] {
        let json = tmp("mi300x-vadd.json");
        let mut args = vec![
            "latency",
            "--part",
            "mi300x",
            "--kernel",
            "vadd",
            "--iterations",
            "20",
            "--warmup",
            "2",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (code, out) = barebell(&args);
        assert_eq!(code, 0, "{extra:?}: {out}");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        std::fs::remove_file(&json).ok();
        assert!(
            v["params"]["kernel_detail"]
                .as_str()
                .unwrap()
                .contains("gfx942"),
            "{v}"
        );
        check_phases(&v["phases"], 20);
    }
}

/// Every count and time option has a documented range; a value outside it
/// (here each one's maximum, which used to abort on allocation or spin
/// for ever) is refused by the argument parser before anything runs.
#[test]
fn out_of_range_counts_and_times_are_refused_before_the_run() {
    const MAX: &str = "18446744073709551615";
    for (opt, value, range) in [
        ("--iterations", MAX, "1..=10000000"),
        ("--iterations", "0", "1..=10000000"),
        ("--warmup", MAX, "0..=10000000"),
        ("--jitter-ns", MAX, "0..=1000000"),
        ("--pace-us", MAX, "0..=1000000"),
    ] {
        let t = std::time::Instant::now();
        let (code, out) = barebell(&["latency", opt, value]);
        assert_eq!(code, 2, "{opt} {value}: {out}");
        assert!(out.contains(opt), "{opt} {value}: {out}");
        assert!(out.contains(range), "{opt} {value}: {out}");
        assert!(!out.contains("panicked"), "{opt} {value}: {out}");
        assert!(
            t.elapsed().as_secs() < 5,
            "{opt} {value} took {:?}",
            t.elapsed()
        );
    }
}
