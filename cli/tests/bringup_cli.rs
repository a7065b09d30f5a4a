//! `barebell bringup --until rlc --trace` as a user runs it, on both model
//! parts. The expected trace lines are protocol facts from the Linux
//! sources, not output of the code under test: the first bootloader
//! command is `PSP_BL__LOAD_KEY_DATABASE` (0x80000) written to C2PMSG_35,
//! the ring is created with `PSP_RING_TYPE__KM << 16` (0x20000) in
//! C2PMSG_64, the RLC reports `BOOTLOAD_COMPLETE` (bit 31), and the
//! discovery binary starts with `BINARY_SIGNATURE` (0x28211407).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

fn bringup(part: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["bringup", "--part", part, "--until", "rlc", "--trace"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// Trace lines are `DIR BLOCK.REGISTER @offset = VALUE`; these checks
/// drop the offset (a discovery model value) and keep the rest.
fn without_offset(l: &str) -> String {
    match (l.find(" @"), l.find(" = ")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &l[..a], &l[b..]),
        _ => l.to_string(),
    }
}

fn check(part: &str, mailbox: &str) {
    let (code, text) = bringup(part);
    assert_eq!(code, 0, "{text}");
    let lines: Vec<String> = text.lines().map(|l| without_offset(l.trim())).collect();
    let first_cmd = lines
        .iter()
        .position(|l| l.starts_with(&format!("W MP0.{mailbox}_35 =")))
        .unwrap();
    assert_eq!(lines[first_cmd], format!("W MP0.{mailbox}_35 = 0x00080000"));
    assert!(lines.contains(&format!("W MP0.{mailbox}_64 = 0x00020000")));
    assert!(lines.contains(&"R GC.RLC_RLCS_BOOTLOAD_STATUS = 0x80000000".to_string()));
    assert!(lines.iter().any(|l| l.starts_with("step rlc:")));
    // The first dword read through MM_DATA is BINARY_SIGNATURE.
    let first_data = lines
        .iter()
        .find(|l| l.starts_with("R BOOT.MM_DATA ="))
        .unwrap();
    assert_eq!(*first_data, "R BOOT.MM_DATA = 0x28211407");
}

#[test]
fn navi31_reaches_rlc_with_symbolic_trace() {
    check("navi31", "MP0_SMN_C2PMSG");
}

#[test]
fn navi48_reaches_rlc_with_symbolic_trace() {
    check("navi48", "MPASP_SMN_C2PMSG");
}

/// `barebell bringup --model --part navi31 --until psp` names the TMR size the
/// PSP's LOAD_TOC asked for: 0x1300000 on the model's Navi31, the size a
/// real RX 7900 XTX asks for (Linux prints it in `psp_tmr_load()`:
/// "reserve 0x1300000 from 0x85fc000000 for PSP TMR", public log in
/// github.com/ROCm/legacy-rocm-build issue 2253).
#[test]
fn navi31_psp_step_names_the_tmr_size_the_toc_asked_for() {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["bringup", "--model", "--part", "navi31", "--until", "psp"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    let psp = text
        .lines()
        .find(|l| l.starts_with("step psp:"))
        .unwrap_or_else(|| panic!("no psp step in:\n{text}"));
    assert!(
        psp.contains("TMR 0x1300000 bytes asked by the TOC"),
        "{psp}"
    );
}
