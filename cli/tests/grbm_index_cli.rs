//! `regs read --se N --sh N`: SE/SH-banked registers are read with
//! GRBM_GFX_INDEX selecting one shader engine and array (broadcast to
//! the instances), and the index goes back to broadcast everywhere
//! afterwards, as Linux's `*_select_se_sh(adev, 0xffffffff, 0xffffffff,
//! 0xffffffff)` leaves it. Field positions come from the register tables
//! (`SE_INDEX`, `SA_INDEX` on gfx11/12, `SH_INDEX` on GC 9.4.3); the
//! expected values are the flags given.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::barebell_ok;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn fields(args: &[&str]) -> Value {
    let v: Value = serde_json::from_str(&barebell_ok(args)).unwrap();
    v["fields"].clone()
}

#[test]
fn one_se_and_array_selected_on_every_generation() {
    // The MI300 parts' GC table gives one array per SE.
    for (part, sh, n) in [
        ("navi31", "SA", 1),
        ("navi48", "SA", 1),
        ("mi300x", "SH", 0),
    ] {
        let f = fields(&[
            "regs",
            "read",
            "GC.GRBM_GFX_INDEX",
            "--se",
            "1",
            "--sh",
            &n.to_string(),
            "--json",
            "--part",
            part,
        ]);
        assert_eq!(f["SE_INDEX"], 1, "{part}: {f}");
        assert_eq!(f[format!("{sh}_INDEX")], n, "{part}: {f}");
        assert_eq!(f["SE_BROADCAST_WRITES"], 0, "{part}: {f}");
        assert_eq!(f[format!("{sh}_BROADCAST_WRITES")], 0, "{part}: {f}");
        assert_eq!(f["INSTANCE_BROADCAST_WRITES"], 1, "{part}: {f}");
        // Only the SE chosen: the arrays stay broadcast.
        let f = fields(&[
            "regs",
            "read",
            "GC.GRBM_GFX_INDEX",
            "--se",
            "2",
            "--json",
            "--part",
            part,
        ]);
        assert_eq!(f["SE_INDEX"], 2, "{part}: {f}");
        assert_eq!(f[format!("{sh}_BROADCAST_WRITES")], 1, "{part}: {f}");
    }
}

#[test]
fn the_index_is_broadcast_again_after_a_selected_read() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["bringup", "--shell"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"regs read GC.GRBM_GFX_INDEX --se 3\nregs read GC.GRBM_GFX_INDEX\nquit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let values: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("GC.GRBM_GFX_INDEX = "))
        .collect();
    assert_eq!(values.len(), 2, "{text}");
    assert!(
        values[0].starts_with("GC.GRBM_GFX_INDEX = 0x60030000"),
        "{text}"
    );
    // SE, SA and instance broadcast: bits 31, 29, 30.
    assert!(
        values[1].starts_with("GC.GRBM_GFX_INDEX = 0xe0000000"),
        "{text}"
    );
}

#[test]
fn an_se_the_part_lacks_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["regs", "read", "GC.GRBM_GFX_INDEX", "--se", "6"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--se 6: discovery's GC table gives 6 (0 to 5)"),
        "{err}"
    );
}
