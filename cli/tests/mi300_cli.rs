//! `--part mi300x|mi308x`: the bring-up runs discovery on the model's
//! table, prints the multi-die topology, and stops with the typed GC 9.4.3
//! error at step start; the commands that need a queue refuse the parts.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

fn barebell(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bringup_mi300x_prints_the_topology_and_stops_typed() {
    let (code, out, err) = barebell(&["bringup", "--model", "--part", "mi300x"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("4 AIDs (aid_mask 0xf), 8 XCCs (xcc_mask 0xff)"),
        "{out}"
    );
    assert!(
        out.contains("4 SE x 1 SH x 10 CU = 40 CUs per XCC"),
        "{out}"
    );
    assert!(out.contains("8 XCCs x 38 CUs = 304 CUs"), "{out}");
    assert!(out.contains("AID 3: MMHUB 1.8.0, NBIO 7.9.0"), "{out}");
    assert!(
        out.contains("XCC 7: GC instance 7 on die 3, GC 9.4.3"),
        "{out}"
    );
    assert!(
        err.contains("step start: GC scratch registers (start-of-day signature) has no GC 9.4.3 implementation yet"),
        "{err}"
    );
    // The teardown ran and nothing past the boot registers was touched.
    assert!(err.contains("finalize signature: not needed"), "{err}");
    assert!(!err.contains("INCOMPLETE"), "{err}");
    assert!(!err.contains("register accesses past"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bringup_mi308x_shows_the_physical_xccs_left_by_the_harvest_table() {
    let (code, out, err) = barebell(&["bringup", "--model", "--part", "mi308x"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("4 XCCs (xcc_mask 0x55)"), "{out}");
    assert!(out.contains("4 XCCs x 20 CUs = 80 CUs"), "{out}");
    assert!(out.contains("XCC 1: GC instance 2 on die 1"), "{out}");
    assert!(out.contains("XCC 3: GC instance 6 on die 3"), "{out}");
    assert!(err.contains("has no GC 9.4.3 implementation yet"), "{err}");
}

#[test]
fn queue_commands_refuse_gc_9_4_3_parts() {
    for args in [
        &["latency", "--part", "mi300x"][..],
        &["copy", "--part", "mi300x"][..],
        &["vector-add", "--part", "mi308x"][..],
    ] {
        let (code, out, err) = barebell(args);
        assert_eq!(code, 1, "{args:?}: {out}\n{err}");
        assert!(
            err.contains("has no GC 9.4.3 implementation yet"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
