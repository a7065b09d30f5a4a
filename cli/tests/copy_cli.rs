//! `barebell copy --json` as a user runs it, on both model parts: the
//! document has the fields docs/copy.md describes, every copy verified.
//! The expected engine names, VMID, doorbell and per-packet limit come
//! from the sources (SDMA 6.0 on GC 11, 7.0 on GC 12; KFD's first VMID 8;
//! `AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0` = 0x100; `copy_max_bytes` =
//! 0x400000), not from the code under test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

fn copy(part: &str, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["copy", "--part", part, "--json", "--reps", "1"])
        .args(extra)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn navi31_all_directions_up_to_5_mib() {
    let v = copy("navi31", &["--bytes", "5242883"]);
    assert_eq!(v["engine"], "SDMA 6.0");
    assert_eq!(v["mapping"], "direct");
    assert_eq!(v["vmid"], 8);
    assert_eq!(v["doorbell"], 0x100);
    assert_eq!(v["copy_max_bytes"], 0x40_0000);
    // The SDMA queue and then the device torn down after the copies.
    assert_eq!(v["teardown_complete"], true, "{v}");
    assert_eq!(v["teardown"][0], "stop SDMA queue: done");
    let rows = v["results"].as_array().unwrap();
    // Sizes 1, 4 KiB, 64 KiB, 1 MiB, then 5 MiB + 3: five, three ways.
    assert_eq!(rows.len(), 15);
    for r in rows {
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["latency_ns"]["median"].as_u64().unwrap() > 0);
        assert!(r["submit_ns"].as_u64().unwrap() <= r["latency_ns"]["max"].as_u64().unwrap());
    }
    let last = &rows[14];
    assert_eq!(last["bytes"], 5_242_883);
    assert_eq!(last["packets"], 2);
    assert_eq!(last["direction"], "d2d");
}

#[test]
fn navi48_one_direction() {
    let v = copy("navi48", &["--bytes", "4097", "--direction", "d2h"]);
    assert_eq!(v["engine"], "SDMA 7.0");
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|r| r["direction"] == "d2h" && r["verified"] == true)
    );
}

#[test]
fn navi31_mes_mapping() {
    let v = copy("navi31", &["--bytes", "4194305", "--mapping", "mes"]);
    assert_eq!(v["mapping"], "mes");
    assert!(v["vmid"].is_null(), "MES picks the VMID");
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 15);
    assert!(rows.iter().all(|r| r["verified"] == true));
    assert_eq!(rows[14]["packets"], 2);
}

/// MI300X (GC 9.4.3): SDMA 4.4.2 instance 0 through the HWS, in the
/// bring-up's process. Expected by hand: amdgpu's doorbell for SDMA
/// instance 0 and KFD's for engine 0 queue 0 are both 0x100
/// (`AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_START`,
/// `aqua_vanjaram_doorbell_index_init()`); COUNT is 22 bits on SDMA 4.4.2
/// (`vega10_sdma_pkt_open.h`): 4 MiB per COPY_LINEAR, so 4 MiB + 5 bytes
/// take two; the HWS picks the VMID.
#[test]
fn mi300x_hws_mapping_all_directions() {
    let v = copy("mi300x", &["--bytes", "4194309", "--mapping", "hws"]);
    assert_eq!(v["part"], "mi300x");
    assert_eq!(v["engine"], "SDMA 4.4.2");
    assert_eq!(v["mapping"], "hws");
    assert!(v["vmid"].is_null(), "the HWS picks the VMID: {v}");
    assert_eq!(v["doorbell"], 0x100);
    assert_eq!(v["copy_max_bytes"], 0x40_0000);
    assert_eq!(v["teardown_complete"], true, "{v}");
    assert_eq!(v["teardown"][0], "stop SDMA queue: done");
    assert_eq!(v["teardown"][1], "unmap queue: done: hws unmap answered");
    let t = v["teardown"].as_array().unwrap();
    assert_eq!(t.last().unwrap(), "model: quiescent");
    let rows = v["results"].as_array().unwrap();
    // Sizes 1, 4 KiB, 64 KiB, 1 MiB, then 4 MiB + 5: five, three ways.
    assert_eq!(rows.len(), 15);
    for r in rows {
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["latency_ns"]["median"].as_u64().unwrap() > 0);
        assert!(r["bandwidth_gib_s"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(rows[14]["bytes"], 4_194_309);
    assert_eq!(rows[14]["packets"], 2);
}

/// MI210: SDMA 4.4.0 engine 0 through the HWS, on vega20's engine-0
/// doorbell (`AMDGPU_VEGA20_DOORBELL_sDMA_ENGINE0` = 0x100); the teardown
/// halts all five engines (`sdma_v4_0_hw_fini()`).
#[test]
fn mi210_hws_mapping() {
    let v = copy("mi210", &["--bytes", "65536", "--mapping", "hws"]);
    assert_eq!(v["engine"], "SDMA 4.4.0");
    assert_eq!(v["mapping"], "hws");
    assert!(v["vmid"].is_null(), "the HWS picks the VMID: {v}");
    assert_eq!(v["doorbell"], 0x100);
    assert_eq!(v["teardown_complete"], true, "{v}");
    let t = v["teardown"].as_array().unwrap();
    assert!(
        t.iter()
            .any(|l| l == "halt SDMA: done: 5 engines stopped and halted (SDMA 4.4.0)"),
        "{v}"
    );
    let rows = v["results"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["verified"] == true), "{v}");
}

/// MI300X and MI308X with the SDMA queue loaded by registers in VMID 8
/// (the bring-up's user VMID, `USER_VMID`), under a direct and a KIQ
/// compute mapping.
#[test]
fn mi300_direct_and_kiq_mappings() {
    for (part, mapping) in [("mi300x", "direct"), ("mi308x", "kiq")] {
        let v = copy(
            part,
            &[
                "--bytes",
                "4099",
                "--mapping",
                mapping,
                "--direction",
                "d2d",
            ],
        );
        assert_eq!(v["mapping"], mapping);
        assert_eq!(v["vmid"], 8);
        assert_eq!(v["doorbell"], 0x100);
        let rows = v["results"].as_array().unwrap();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|r| r["verified"] == true), "{v}");
        assert_eq!(v["teardown_complete"], true, "{v}");
    }
}

/// Mappings a part does not have are refused before anything runs.
#[test]
fn mappings_a_part_lacks_are_refused() {
    for (part, mapping, says) in [
        ("mi300x", "mes", "has no MES"),
        ("navi31", "hws", "directly or by MES"),
        ("mi210", "direct", "through the HWS only"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args(["copy", "--part", part, "--mapping", mapping])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

/// A SIGINT while `copy` measures (64 MiB in 10 repetitions, all
/// directions, takes seconds in a debug build) is handled, not fatal: the
/// SDMA queue and the device are torn down, the model ends quiescent, and
/// the exit status is the one a shell reports for a death by SIGINT.
#[test]
fn a_sigint_mid_copy_tears_the_device_down() {
    let child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args([
            "copy", "--part", "navi31", "--bytes", "67108864", "--reps", "10",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: signals the child spawned above, which has not been waited on.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + libc::SIGINT), "{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(err.contains("teardown complete"), "{err}");
    assert!(err.contains("stop SDMA queue: done"), "{err}");
    assert!(err.contains("model: quiescent"), "{err}");
}

/// `--bytes` has a documented range, 1 B to 1 GiB; 0, one past it and
/// 2^63 (which used to panic) are refused by the argument parser.
#[test]
fn bytes_outside_its_range_are_refused_before_the_run() {
    for value in ["0", "1073741825", "9223372036854775808"] {
        let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args(["copy", "--bytes", value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--bytes {value}: {err}");
        assert!(
            err.contains("--bytes") && err.contains("1..=1073741824"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}
