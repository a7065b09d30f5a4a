//! `--part mi300x|mi308x`: the bring-up runs on the GC 9.4.3 model device
//! (`VirtualGpu`), prints the multi-die topology and every step (per-XCC
//! hubs, PSP 13.0.6 with the real blobs, RLC/MEC per XCC, the KIQ per
//! XCC, the HIQ and a runlist for `hws`), maps one AQL queue over every
//! XCC `direct`, `kiq` or `hws`, and tears down to a quiescent device.

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
fn bringup_mi300x_prints_the_topology_and_every_step_to_rlc() {
    let (code, out, err) = barebell(&["bringup", "--model", "--part", "mi300x"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("4 AIDs (aid_mask 0xf), 8 XCCs (xcc_mask 0xff)"),
        "{out}"
    );
    assert!(
        out.contains("4 SE x 1 SH x 10 CU = 40 CUs per XCC"),
        "{out}"
    );
    assert!(out.contains("8 XCCs x 38 CUs declared"), "{out}");
    assert!(out.contains("AID 3: MMHUB 1.8.0, NBIO 7.9.0"), "{out}");
    assert!(
        out.contains("XCC 7: GC instance 7 on die 3, GC 9.4.3"),
        "{out}"
    );
    assert!(
        out.contains("GFXHUB v1.2 on 8 XCCs and MMHUB 1.8 on 4 AIDs enabled"),
        "{out}"
    );
    assert!(
        out.contains("step psp: MP0 13.0.6: 7 bootloader components"),
        "{out}"
    );
    assert!(
        out.contains("step rlc: GC 9.4.3 (revision 1) on 8 XCCs"),
        "{out}"
    );
    assert!(out.contains("teardown complete"), "{out}");
    assert!(out.contains("model check: quiescent"), "{out}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bringup_mi308x_shows_the_physical_xccs_left_by_the_harvest_table() {
    let (code, out, err) = barebell(&["bringup", "--model", "--part", "mi308x"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("4 XCCs (xcc_mask 0x55)"), "{out}");
    assert!(out.contains("4 XCCs x 20 CUs declared"), "{out}");
    assert!(out.contains("XCC 1: GC instance 2 on die 1"), "{out}");
    assert!(out.contains("XCC 3: GC instance 6 on die 3"), "{out}");
    assert!(
        out.contains("step rlc: GC 9.4.3 (revision 1) on 4 XCCs"),
        "{out}"
    );
}

/// Issue 18's acceptance: `queue ready: <mapping> mapping` after
/// discovery, PSP 13.0.6, per-XCC RLC/MEC/KIQ (and for hws the HIQ and a
/// runlist), on both parts and all three mappings; the teardown leaves
/// the model quiescent.
#[test]
fn every_mapping_maps_a_queue_over_every_xcc() {
    for (part, xccs) in [("mi300x", 8), ("mi308x", 4)] {
        for mapping in ["hws", "direct", "kiq"] {
            let (code, out, err) =
                barebell(&["bringup", "--model", "--part", part, "--mapping", mapping]);
            let ctx = format!("{part} {mapping}:\n{out}\n{err}");
            assert_eq!(code, 0, "{ctx}");
            assert!(out.contains("step psp: MP0 13.0.6"), "{ctx}");
            assert!(
                out.contains(&format!("step rlc: GC 9.4.3 (revision 1) on {xccs} XCCs")),
                "{ctx}"
            );
            if mapping == "direct" {
                assert!(out.contains("step rings: skipped"), "{ctx}");
            } else {
                assert!(
                    out.contains(&format!("step rings: KIQ up on {xccs} XCCs")),
                    "{ctx}"
                );
            }
            assert!(
                out.contains(&format!(
                    "step queue: queue ready: {mapping} mapping, doorbell slot 0x10, {xccs} XCCs"
                )),
                "{ctx}"
            );
            if mapping == "hws" {
                assert!(out.contains("VMID picked by the HWS"), "{ctx}");
            }
            assert!(
                out.contains(&format!("unmap queue: done: {mapping} unmap answered")),
                "{ctx}"
            );
            assert!(out.contains("teardown complete"), "{ctx}");
            assert!(out.contains("model check: quiescent"), "{ctx}");
        }
    }
}

/// GC 9.4.3 has no MES: asking for it is refused before the device is
/// touched, with the typed error naming the mapping it has.
/// A mapping the part lacks is refused before the device is touched (no
/// model line, no step); without `--mapping` the introspection commands
/// bring a GC 9.4.3 part up with the HWS, KFD's CPSCH, its own scheduler.
#[test]
fn a_mapping_the_part_lacks_is_refused_untouched_and_the_default_is_the_parts_own() {
    for (part, bad) in [("mi300x", "mes"), ("mi308x", "mes"), ("navi31", "hws")] {
        for cmd in [
            vec!["bringup", "--part", part, "--mapping", bad],
            vec![
                "regs",
                "read",
                "GC.CP_HQD_ACTIVE",
                "--part",
                part,
                "--mapping",
                bad,
            ],
            vec!["queue", "dump", "--part", part, "--mapping", bad],
            vec!["latency", "--part", part, "--mapping", bad],
            vec!["run", "job.json", "--part", part, "--mapping", bad],
        ] {
            let (code, out, err) = barebell(&cmd);
            assert_ne!(code, 0, "{cmd:?}");
            assert!(
                err.contains(&format!("--mapping {bad}: {part}")),
                "{cmd:?}: {err}"
            );
            assert!(
                !out.contains("step ") && !out.contains("model "),
                "{cmd:?}: {out}"
            );
            assert!(
                !err.contains("teardown"),
                "{cmd:?}: nothing to tear down: {err}"
            );
        }
    }
    // The default on mi300x is hws: the bring-up reaches its queue (the
    // register read itself awaits GC 9.4.3's register table).
    let (_, _, err) = barebell(&["queue", "dump", "--part", "mi300x"]);
    assert!(!err.contains("no GC 9.4.3 implementation"), "{err}");
    assert!(err.contains("teardown complete"), "{err}");
}

fn regs_json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = barebell(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// `regs read --xcc N` on the GC 9.4.3 parts reads XCC N's own GC
/// instance (`GET_INST(GC, N)`), banked through that XCC's
/// GRBM_GFX_CNTL: the HWS mapped the queue on every XCC (ME 1 pipe 0
/// queue 1, the model's slot), so its HQD is active on each, and queue 2
/// is not. The register offset is gc_9_4_3_offset.h's (0x1247, segment 0)
/// at each instance's own bases. XCCs past the part's are refused before
/// the device is touched.
#[test]
fn regs_read_reaches_every_xcc_and_refuses_past_the_last() {
    for (part, xccs) in [("mi300x", 8u8), ("mi308x", 4)] {
        let mut offsets = std::collections::BTreeSet::new();
        for xcc in 0..xccs {
            let x = xcc.to_string();
            let args = |q: &str| {
                [
                    "regs",
                    "read",
                    "GC.CP_HQD_ACTIVE",
                    "--part",
                    part,
                    "--xcc",
                    &x,
                    "--me",
                    "1",
                    "--pipe",
                    "0",
                    "--queue",
                    q,
                    "--json",
                ]
                .map(String::from)
            };
            let v = regs_json(&args("1").each_ref().map(String::as_str));
            assert_eq!(v["value"], 1, "{part} XCC {xcc}: {v}");
            assert_eq!(v["offset"], 0x1247, "{part} XCC {xcc}");
            assert_eq!(v["base_idx"], 0);
            offsets.insert(v["byte_offset"].as_u64().unwrap());
            let v = regs_json(&args("2").each_ref().map(String::as_str));
            assert_eq!(v["value"], 0, "{part} XCC {xcc} queue 2: {v}");
        }
        assert_eq!(
            offsets.len(),
            usize::from(xccs),
            "{part}: one GC instance per XCC"
        );
        let past = xccs.to_string();
        let (code, out, err) = barebell(&[
            "regs",
            "read",
            "GC.CP_HQD_ACTIVE",
            "--part",
            part,
            "--xcc",
            &past,
        ]);
        assert_ne!(code, 0);
        assert!(
            err.contains(&format!("XCC {xccs}: this part has {xccs} XCCs")),
            "{err}"
        );
        assert!(out.is_empty() && !err.contains("teardown"), "{err}");
    }
    let (code, _, err) = barebell(&[
        "regs",
        "read",
        "MMHUB.MMVM_L2_CNTL",
        "--part",
        "mi300x",
        "--xcc",
        "1",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("MMHUB is not per XCC"), "{err}");
}
