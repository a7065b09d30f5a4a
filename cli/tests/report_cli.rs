//! `barebell bringup --report FILE` (issue 20 item 6) on the model: the
//! JSON report holds what the run printed, line for line; the register
//! trace equals what `--trace` prints; the firmware versions equal the
//! blobs' own headers read here; the teardown is complete and the model
//! quiescent. It is written after a signal and when the device cannot be
//! opened, and `docs/hardware.md` names exactly its keys.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const FIRMWARE: &str = "/lib/firmware/amdgpu";

fn barebell() -> Command {
    Command::new(env!("CARGO_BIN_EXE_barebell"))
}

fn report_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    dir.join(format!("report-{name}-{}.json", std::process::id()))
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// `common_firmware_header` (`amdgpu_ucode.h`): `ucode_version` is the
/// u32 at byte 16, after size_bytes, header_size_bytes and four u16s.
fn ucode_version(file: &str) -> (usize, String) {
    let b = std::fs::read(Path::new(FIRMWARE).join(file)).unwrap();
    let v = u32::from_le_bytes(b[16..20].try_into().unwrap());
    (b.len(), format!("{v:#x}"))
}

#[test]
fn the_report_holds_what_the_run_printed() {
    // GC versions of the two parts: Navi31 is GC 11.0.0, Navi48 GC 12.0.1
    // (Linux's gfx_v11_0.c / gfx_v12_0.c firmware names gc_11_0_0_*,
    // gc_12_0_1_*).
    for (part, mapping, gc) in [("navi31", "mes", "11.0.0"), ("navi48", "direct", "12.0.1")] {
        let path = report_path(part);
        let out = barebell()
            .args(["bringup", "--part", part, "--mapping", mapping, "--trace"])
            .arg("--report")
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success(), "{part}: {text}");
        assert!(text.contains(&format!("report: {}", path.display())));
        let r = read(&path);
        assert_eq!(r["format"], "barebell-bringup-report/1");
        assert_eq!(r["outcome"]["ok"], true, "{part}: {}", r["outcome"]);
        assert!(r["outcome"]["error"].is_null());
        assert_eq!(r["target"]["name"], format!("model {part}"));
        // Every step line, in order.
        let printed: Vec<&str> = text.lines().filter(|l| l.starts_with("step ")).collect();
        let steps = r["steps"].as_array().unwrap();
        let recorded: Vec<String> = steps
            .iter()
            .map(|s| {
                format!(
                    "step {}: {}",
                    s["step"].as_str().unwrap(),
                    s["detail"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(recorded, printed, "{part}");
        let at: Vec<u64> = steps.iter().map(|s| s["at_ns"].as_u64().unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] <= w[1]), "{part}: {at:?}");
        assert!(
            steps
                .iter()
                .any(|s| s["since_previous_ns"].as_u64().unwrap() > 0)
        );
        // The whole register trace, as --trace printed it.
        let traced: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("  "))
            .map(String::from)
            .collect();
        let trace = strings(&r["trace"]);
        assert!(trace.len() > 1000, "{part}: {} accesses", trace.len());
        assert_eq!(trace, traced, "{part}");
        // Discovery: the part's GC version.
        let ips = r["discovery"]["ips"].as_array().unwrap();
        let gc_ip = ips.iter().find(|i| i["hw_id"] == 11).unwrap();
        assert_eq!(gc_ip["version"], gc, "{part}");
        // Firmware: sizes and ucode versions equal the blobs' own.
        let fw = r["firmware"].as_array().unwrap();
        assert!(fw.len() >= 8, "{part}: {fw:?}");
        assert!(fw.iter().any(|f| {
            f["file"]
                .as_str()
                .unwrap()
                .starts_with(&format!("gc_{}_mec", gc.replace('.', "_")))
        }));
        for f in fw {
            let file = f["file"].as_str().unwrap();
            let (bytes, version) = ucode_version(file);
            assert_eq!(f["bytes"].as_u64(), Some(bytes as u64), "{file}");
            assert_eq!(
                f["ucode_version"].as_str(),
                Some(version.as_str()),
                "{file}"
            );
        }
        assert_eq!(r["faults"].as_array().unwrap().len(), 0);
        assert_eq!(r["interrupts"].as_array().unwrap().len(), 0);
        // The teardown, stage by stage, and the model's check.
        assert_eq!(r["teardown"]["complete"], true);
        let stages: Vec<&str> = r["teardown"]["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["stage"].as_str().unwrap())
            .collect();
        assert_eq!(
            stages,
            [
                "unmap queue",
                "halt SDMA",
                "halt MES",
                "halt MEC",
                "disable GFXHUB",
                "tell the SMU of the unload",
                "destroy PSP ring",
                "disable IH ring",
                "disable GART (MMHUB)",
                "close doorbell aperture",
                "clear bus mastering",
                "release memory",
                "finalize signature"
            ]
        );
        let mes = &r["teardown"]["stages"][2]["outcome"];
        assert_eq!(
            mes,
            if mapping == "direct" {
                "not needed"
            } else {
                "done"
            }
        );
        assert!(
            r["model_check"].as_str().unwrap().starts_with("quiescent"),
            "{}",
            r["model_check"]
        );
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn a_report_is_written_after_sigint() {
    let path = report_path("sigint");
    let mut child = barebell()
        .args(["bringup", "--model", "--part", "navi31", "--mapping", "kiq"])
        .arg("--report")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    loop {
        let mut line = String::new();
        assert_ne!(stdout.read_line(&mut line).unwrap(), 0);
        if line.starts_with("step gmc:") {
            break;
        }
    }
    // SAFETY: `kill` on the pid of a child this test spawned and has not
    // yet waited for.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(r, 0);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGINT), "{rest}");
    let r = read(&path);
    assert_eq!(r["outcome"]["ok"], false);
    assert_eq!(r["outcome"]["interrupted_by"], "SIGINT");
    let failed = r["outcome"]["failed_step"].as_str().unwrap();
    assert!(
        ["ih", "psp", "rlc", "mes", "rings", "queue"].contains(&failed),
        "{failed}"
    );
    assert!(r["discovery"].is_null());
    assert_eq!(r["teardown"]["complete"], true, "{}", r["teardown"]);
    assert!(r["model_check"].as_str().unwrap().starts_with("quiescent"));
    let steps: Vec<&str> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    // One line per teardown stage: unmap queue, halt SDMA, halt MES, halt MEC,
    // disable GFXHUB, tell the SMU of the unload, destroy PSP ring, disable
    // IH ring, disable GART (MMHUB), close doorbell aperture, clear bus
    // mastering, release memory, finalize signature.
    assert_eq!(steps.iter().filter(|s| **s == "teardown").count(), 13);
    assert!(!steps.contains(&"queue"));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_report_says_why_the_device_was_not_opened() {
    let empty = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-firmware");
    std::fs::create_dir_all(&empty).unwrap();
    let path = report_path("unopened");
    let out = barebell()
        .args(["bringup", "--part", "navi48", "--mapping", "mes"])
        .arg("--firmware-dir")
        .arg(&empty)
        .arg("--report")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let r = read(&path);
    assert_eq!(r["outcome"]["failed_step"], "open");
    assert!(
        r["outcome"]["error"]
            .as_str()
            .unwrap()
            .contains("psp_14_0_3_sos.bin is not in"),
        "{}",
        r["outcome"]
    );
    assert_eq!(r["target"]["name"], "model navi48");
    assert!(r["steps"].as_array().unwrap().is_empty());
    let _ = std::fs::remove_file(&path);
}

/// The keys in `docs/hardware.md`'s report table are the keys written.
#[test]
fn the_manual_names_every_key_of_the_report() {
    let path = report_path("keys");
    let out = barebell()
        .args(["bringup", "--part", "navi31", "--until", "nbio", "--report"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let r = read(&path);
    let written: BTreeSet<String> = r.as_object().unwrap().keys().cloned().collect();
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/hardware.md"))
        .unwrap();
    let section = doc
        .split("## The bring-up report")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    let documented: BTreeSet<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(String::from)
        .collect();
    assert_eq!(documented, written);
    let _ = std::fs::remove_file(&path);
}

/// `--start barebell`: the model is left as barebell's earlier run left
/// it; the report says what the start step found and did, and the run
/// ends torn down with the model quiescent.
#[test]
fn the_report_says_what_the_start_step_found() {
    let path = report_path("start-barebell");
    let out = barebell()
        .args([
            "bringup",
            "--model",
            "--part",
            "navi31",
            "--mapping",
            "direct",
            "--start",
            "barebell",
        ])
        .arg("--report")
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("step psp: skipped"), "{stdout}");
    let r = read(&path);
    assert_eq!(r["start"]["state"], "left by barebell", "{}", r["start"]);
    assert_eq!(
        r["start"]["action"],
        "partial re-init (firmware in place, no PSP step)"
    );
    assert_eq!(r["start"]["sos_alive"], true);
    assert_eq!(r["start"]["scratch_reg7"], "0xbb000001");
    assert!(
        r["start"]["model_prepared"]
            .as_str()
            .unwrap()
            .starts_with("barebell:")
    );
    assert!(r["model_check"].as_str().unwrap().starts_with("quiescent"));
    let _ = std::fs::remove_file(&path);
}
