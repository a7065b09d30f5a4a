//! `barebell fw info/scan` as a user runs them. Expected values are read
//! straight from the blob's bytes (`mes_firmware_header_v1_0` offsets),
//! not from the parser.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

const MES: &str = "/lib/firmware/amdgpu/gc_11_0_0_mes_2.bin";

fn le32(b: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(b[at..at + 4].try_into().unwrap()))
}

fn barebell(args: &[&str]) -> (i32, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap(), json)
}

#[test]
fn info_json_reports_absolute_sections() {
    let blob = std::fs::read(MES).unwrap();
    let (code, v) = barebell(&["fw", "info", MES, "--json"]);
    assert_eq!(code, 0);
    let r = &v[0];
    assert_eq!(r["file"], MES);
    assert_eq!(r["kind"], "mes-sched");
    assert_eq!(r["header_version"], "1.0");
    assert_eq!(r["ip_version"], "11.0");
    assert_eq!(r["ucode_version"], le32(&blob, 16));
    assert!(r["error"].is_null());
    let s = &r["sections"];
    assert_eq!(s[0]["name"], "ucode");
    assert_eq!(s[0]["offset"], le32(&blob, 40));
    assert_eq!(s[0]["size"], le32(&blob, 36));
    assert_eq!(s[1]["name"], "data");
    assert_eq!(s[1]["offset"], le32(&blob, 52));
    assert_eq!(s[1]["size"], le32(&blob, 48));
}

#[test]
fn info_fails_on_a_bad_file_and_scan_reports_it() {
    let dir = std::env::temp_dir().join(format!("barebell-fw-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("junk_rlc.bin");
    std::fs::write(&bad, [0xffu8; 40]).unwrap();
    std::fs::copy(MES, dir.join("gc_11_0_0_mes_2.bin")).unwrap();

    let (code, v) = barebell(&["fw", "info", bad.to_str().unwrap(), "--json"]);
    assert_ne!(code, 0);
    assert_eq!(v[0]["status"], "error");
    assert!(v[0]["error"].as_str().unwrap().contains("size_bytes"));

    let (code, v) = barebell(&["fw", "scan", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!(a[0]["status"], "parsed");
    assert_eq!(a[1]["status"], "error");
    std::fs::remove_dir_all(&dir).unwrap();
}
