//! `barebell vm walk`: the user queue's ring translates in the VMID its
//! HQD runs in, to the host byte at the ring's address (the bring-up puts
//! the ring area at GPU VA = host address); the queue's MQD does not
//! (KFD maps no MQD into a process VM, `allocate_mqd()` uses kernel GTT);
//! in VMID 0 the MQD does. Addresses and the VMID come from `queue dump`,
//! which reads the HQD registers, not from the walk.
//!
//! On the MI300 parts the HWS picks the VMID; the model's CP firmware
//! writes MAP_PROCESS's page-table base into that context's registers
//! (`pm_map_process_v9()`), which is what the walk reads.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::barebell_ok;
use serde_json::Value;
use std::process::Command;

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&barebell_ok(args)).unwrap()
}

fn check(part: &str) {
    let dump = json(&["queue", "dump", "--json", "--part", part]);
    let q = &dump[0];
    let vmid = q["vmid"].as_u64().unwrap().to_string();
    let ring = q["ring"].as_u64().unwrap();
    let mqd = q["mqd_address"].as_u64().unwrap();
    assert_ne!(vmid, "0", "{part}: the user queue runs in VMID 0: {q}");
    let walk = |va: u64, vmid: &str| {
        json(&[
            "vm",
            "walk",
            &format!("{va:#x}"),
            "--vmid",
            vmid,
            "--json",
            "--part",
            part,
        ])
    };
    let w = walk(ring + 0x40, &vmid);
    assert_eq!(w["enabled"], true, "{part}: {w}");
    let o = &w["outcome"];
    assert_eq!(o["system"], true, "{part}: {w}");
    let host = format!("host {:#x}", ring + 0x40);
    assert!(o["where"].as_str().unwrap().ends_with(&host), "{part}: {w}");
    let w = walk(mqd, &vmid);
    let stopped = w["outcome"]["stopped"].as_str().unwrap_or_default();
    assert!(
        stopped.starts_with("not mapped"),
        "{part}: MQD {mqd:#x} in VMID {vmid}: {w}"
    );
    let w = walk(mqd, "0");
    let host = format!("host {mqd:#x}");
    assert!(
        w["outcome"]["where"]
            .as_str()
            .unwrap_or_default()
            .ends_with(&host),
        "{part}: MQD in VMID 0: {w}"
    );
    // The text form names the hub and prints the translation.
    let text = barebell_ok(&[
        "vm",
        "walk",
        &format!("{ring:#x}"),
        "--vmid",
        &vmid,
        "--part",
        part,
    ]);
    assert!(text.starts_with("GFXHUB (GC "), "{text}");
    assert!(text.contains(&format!("VA {ring:#x} -> PA ")), "{text}");
}

#[test]
fn navi31() {
    check("navi31");
}

#[test]
fn navi48() {
    check("navi48");
}

#[test]
fn mi300x() {
    check("mi300x");
}

#[test]
fn refusals_are_in_the_users_words() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let e = run(&["vm", "walk", "0x1000", "--vmid", "16"]);
    assert!(e.contains("VMIDs 0 to 15"), "{e}");
    let e = run(&["vm", "walk", "0x1000", "--instance", "1"]);
    assert!(e.contains("one GFXHUB"), "{e}");
    let e = run(&[
        "vm",
        "walk",
        "0x1000",
        "--part",
        "mi300x",
        "--instance",
        "8",
    ]);
    assert!(e.contains("8 XCCs (0 to 7)"), "{e}");
    let e = run(&["vm", "walk", "banana"]);
    assert!(e.contains("banana"), "{e}");
    // VMID 0 starts at the GART: a low VA is outside it.
    let out = barebell_ok(&["vm", "walk", "0x1000"]);
    assert!(out.contains("outside the context's range"), "{out}");
}
