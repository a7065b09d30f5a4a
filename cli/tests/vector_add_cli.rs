//! `barebell vector-add --json` as a user runs it: the seeds' program
//! (c = a + b, SDMA in and out, one launch) on both model parts and both
//! mappings, the result checked element by element against the host's
//! own sums, and the device torn down after it (the SDMA queue removed
//! before the teardown, by registers or by MES REMOVE_QUEUE).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

fn vector_add(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["vector-add", "--json"])
        .args(args)
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

/// The steps the module documents, in the order the program runs them.
const STEPS: [&str; 10] = [
    "device",
    "queue",
    "malloc",
    "inputs",
    "memcpy_h2d",
    "launch",
    "synchronize",
    "memcpy_d2h",
    "check",
    "teardown",
];

fn check(v: &serde_json::Value, elements: u64, block: u64) {
    assert_eq!(v["elements"], elements);
    assert_eq!(v["workgroups"], elements.div_ceil(block));
    assert_eq!(v["buffer_bytes"], elements * 4);
    assert_eq!(v["verified"], true, "{v}");
    assert_eq!(v["mismatches"], 0);
    assert_eq!(v["teardown_complete"], true, "{v}");
    let steps: Vec<&str> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps, STEPS);
    // The rows are back to back: they add up to the total, to the ns.
    let sum: u64 = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ns"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, v["total_ns"].as_u64().unwrap(), "{v}");
    let teardown = v["teardown"].as_array().unwrap();
    assert_eq!(teardown[0], "stop SDMA queue: done");
}

/// A size that is not a multiple of the block: the last workgroup is
/// partial, so the kernel's `i < n` bound matters, and the copies end
/// mid-page.
#[test]
fn navi31_direct_with_a_partial_last_workgroup() {
    let v = vector_add(&["--part", "navi31", "--elements", "1000"]);
    assert_eq!(v["mapping"], "direct");
    check(&v, 1000, 256);
}

/// MI210: gfx90a's vadd on the HWS's compute queue, the copies on SDMA
/// 4.4.0 engine 0 through the same HWS.
#[test]
fn mi210_hws() {
    let v = vector_add(&["--part", "mi210", "--mapping", "hws", "--elements", "4096"]);
    assert_eq!(v["mapping"], "hws");
    check(&v, 4096, 256);
}

#[test]
fn navi48_mes_with_the_sdma_queue_removed_by_mes() {
    let v = vector_add(&["--part", "navi48", "--mapping", "mes", "--elements", "4096"]);
    assert_eq!(v["mapping"], "mes");
    check(&v, 4096, 256);
}

/// The seeds' own part and path: an MI308X (GC 9.4.3, gfx942) with the
/// compute and SDMA queues in the hardware scheduler's runlist (KFD's
/// CPSCH), the dispatch spread over the 4 XCCs; and MI300X by KIQ.
#[test]
fn mi308x_hws_and_mi300x_kiq() {
    let v = vector_add(&["--part", "mi308x", "--mapping", "hws", "--elements", "5000"]);
    assert_eq!(v["mapping"], "hws");
    check(&v, 5000, 256);
    let v = vector_add(&["--part", "mi300x", "--mapping", "kiq", "--elements", "4096"]);
    assert_eq!(v["mapping"], "kiq");
    check(&v, 4096, 256);
}

/// A SIGINT in the middle of the program (the default 1,048,576 elements
/// take seconds in a debug build) is handled, not fatal: the SDMA queue
/// and the device are torn down, the model ends quiescent, and the exit
/// status is the one a shell reports for a death by SIGINT.
#[test]
fn a_sigint_mid_run_tears_the_device_down() {
    let child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["vector-add", "--part", "navi31"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
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

/// `--elements` and `--block` have documented ranges; 0, one past each
/// maximum and 2^32 - 1 (which used to abort on allocation) are refused
/// by the argument parser before anything runs.
#[test]
fn elements_and_block_outside_their_ranges_are_refused_up_front() {
    for (opt, value, range) in [
        ("--elements", "0", "1..=67108864"),
        ("--elements", "67108865", "1..=67108864"),
        ("--elements", "4294967295", "1..=67108864"),
        ("--block", "0", "1..=1024"),
        ("--block", "1025", "1..=1024"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args(["vector-add", opt, value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{opt} {value}: {err}");
        assert!(
            err.contains(opt) && err.contains(range),
            "{opt} {value}: {err}"
        );
    }
}

/// A mapping the part's vector-add cannot use is refused before the model
/// is built or brought up, in the user's words (no step ran, nothing to
/// tear down).
#[test]
fn a_mapping_the_part_lacks_is_refused_before_the_device_is_touched() {
    for (part, mapping, says) in [
        ("navi31", "kiq", "use --mapping direct or mes"),
        ("navi48", "hws", "use --mapping direct or mes"),
        ("mi210", "direct", "through the HWS only; use --mapping hws"),
        (
            "mi300x",
            "mes",
            "has no MES; use --mapping direct, kiq or hws",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args(["vector-add", "--part", part, "--mapping", mapping])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "{part} {mapping}");
        assert!(err.contains(says), "{part} {mapping}: {err}");
        assert!(!err.contains("issue "), "{part} {mapping}: {err}");
        assert!(
            !stdout.contains("step ") && !err.contains("step "),
            "{part} {mapping}: {stdout}{err}"
        );
    }
}
