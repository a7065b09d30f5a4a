//! A user kernel cannot reach the driver's queue structures: its store to
//! the user queue's MQD, to the KIQ's ring, to the MES scheduler's ring
//! (Navi) or to the HIQ's ring (MI300) faults in the queue's VMID, on every
//! part and mapping, and the device is still torn down completely (`run
//! --mapping` fails if the teardown is incomplete or the model is not
//! quiescent after it). KFD keeps all of them out of a process VM: MQDs
//! come from `kfd_gtt_sa_allocate()` (`allocate_mqd()`), the KIQ, HIQ and
//! MES rings from the kernel's GTT.
//!
//! The addresses come from the introspection commands on the same part
//! and mapping (the model's layout is the same from run to run): `queue
//! dump` for the MQD, `ring decode --queue` for the rings, not from the
//! layout code.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One directory per part: the tests run in parallel threads of one
/// process, and two parts sharing a target (gfx942) must not write the same
/// code object or job file while the other reads it.
fn dir(part: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("user-store-{}", std::process::id()))
        .join(part);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A one-lane kernel storing to the address it is given.
fn poke_job(part: &str, mcpu: &str, address: u64) -> PathBuf {
    let d = dir(part);
    let co = d.join(format!("poke-{mcpu}.co"));
    if !co.exists() {
        let src = d.join("poke.cl");
        std::fs::write(
            &src,
            "kernel void poke(ulong addr) { *(global volatile uint *)addr = 0xdead; }\n",
        )
        .unwrap();
        let ok = Command::new("clang-19")
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
            .status()
            .expect("clang-19 (cargo xtask ci installs it)");
        assert!(ok.success());
    }
    let job = d.join(format!("poke-{mcpu}-{address:x}.json"));
    std::fs::write(
        &job,
        format!(
            r#"{{"code_object": "{}", "kernel": "poke", "grid": [1], "block": [1], "buffers": {{}}, "args": [{{"u64": {address}}}]}}"#,
            co.display()
        ),
    )
    .unwrap();
    job
}

/// `barebell ARGS` on the part and mapping: stdout if it succeeded.
fn try_run(part: &str, mapping: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .args(["--part", part, "--mapping", mapping])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap())
}

/// The ring address in `ring of ... at 0xADDR (...` of `ring decode
/// --queue`, if that queue has a ring.
fn ring_at(part: &str, mapping: &str, queue: &str) -> Option<u64> {
    let out = try_run(part, mapping, &["ring", "decode", "--queue", queue])?;
    let hex = out
        .lines()
        .next()?
        .split(" at 0x")
        .nth(1)?
        .split_whitespace()
        .next()?;
    u64::from_str_radix(hex, 16).ok()
}

/// Every `mqd_addr` in the packets of a queue's ring (MAP_QUEUES, MES
/// ADD_QUEUE): the queues that ring mapped.
fn mapped_mqds(part: &str, mapping: &str, queue: &str) -> Vec<u64> {
    let Some(out) = try_run(
        part,
        mapping,
        &["ring", "decode", "--queue", queue, "--json"],
    ) else {
        return Vec::new();
    };
    let v: Value = serde_json::from_str(&out).unwrap();
    v.as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["fields"].as_array().cloned().unwrap_or_default())
        .filter(|f| f[0] == "mqd_addr")
        .filter_map(|f| f[1].as_u64())
        .collect()
}

/// The driver structures a user kernel must not reach: the user queue's
/// MQD; the ring of every scheduler HQD (the KIQ, MES pipes, the HIQ);
/// and every queue those rings mapped, its MQD and its ring (the MES
/// scheduler's, which the KIQ or the MES KIQ pipe maps).
fn targets(part: &str, mapping: &str) -> Vec<(String, u64)> {
    let dump: Value = serde_json::from_str(
        &try_run(part, mapping, &["queue", "dump", "--json"]).expect("queue dump"),
    )
    .unwrap();
    let user_mqd = dump[0]["mqd_address"].as_u64().unwrap();
    let mut t = vec![("the user queue's MQD".to_string(), user_mqd)];
    for q in ["3.0.0", "3.1.0", "2.0.0", "2.1.0"] {
        let Some(ring) = ring_at(part, mapping, q) else {
            continue;
        };
        t.push((format!("the ring of HQD {q}"), ring));
        for mqd in mapped_mqds(part, mapping, q) {
            // The KIQ maps the user queue too: its ring is the user's.
            if mqd == user_mqd {
                continue;
            }
            t.push((format!("an MQD HQD {q}'s ring mapped"), mqd));
            if let Some(r) = ring_at(part, mapping, &format!("mqd@{mqd:#x}")) {
                t.push((format!("the ring of the queue of MQD {mqd:#x}"), r));
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    t.retain(|(_, a)| seen.insert(*a));
    t
}

fn check(part: &str, mcpu: &str, mappings: &[&str]) {
    for &mapping in mappings {
        let targets = targets(part, mapping);
        // Every scheduler mapping has a scheduler ring besides the MQD.
        if mapping != "direct" {
            assert!(targets.len() >= 2, "{part} {mapping}: only {targets:x?}");
        }
        eprintln!("{part} {mapping}: {targets:x?}");
        for (what, address) in targets {
            let job = poke_job(part, mcpu, address);
            let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
                .args([
                    "run",
                    job.to_str().unwrap(),
                    "--part",
                    part,
                    "--mapping",
                    mapping,
                ])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let ctx = format!("{part} {mapping}: a store to {what} at {address:#x}: {err}");
            assert!(!out.status.success(), "{ctx}");
            assert!(
                err.contains(&format!(
                    "write of page {:#x} does not translate",
                    address & !0xfff
                )),
                "{ctx}"
            );
            assert!(!err.contains("teardown was incomplete"), "{ctx}");
            assert!(!err.contains("not quiescent"), "{ctx}");
        }
    }
}

#[test]
fn navi31_every_mapping() {
    check("navi31", "gfx1100", &["mes", "direct", "kiq"]);
}

#[test]
fn navi48_every_mapping() {
    check("navi48", "gfx1201", &["mes", "direct", "kiq"]);
}

#[test]
fn mi300x_every_mapping() {
    check("mi300x", "gfx942", &["hws", "direct", "kiq"]);
}

#[test]
fn mi308x_every_mapping() {
    check("mi308x", "gfx942", &["hws", "direct", "kiq"]);
}
