//! `--node N` on an MI300 part: the model is node N of an 8-GPU XGMI hive
//! (256 GiB segments, model values) and the gmc step follows
//! `gmc_v9_0_vram_gtt_location()`. Expected values by hand: node 3's
//! offset is 3 × 0x40_0000_0000 = 0xC0_0000_0000; its VRAM at MC
//! 0x80_0000_0000 + 0xC0_0000_0000 = 0x140_0000_0000.

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

/// The acceptance command: the trace shows the LFB registers read on
/// XCC 0, the node offset in the gmc step's layout, and the HDP's
/// non-surface base at this node's VRAM (`hdp_v4_0_init_registers()`:
/// `vram_start >> 8` = 0x1_4000_0000 split 0x4000_0000 / 0x1).
#[test]
fn bringup_node_3_traces_the_node_offset() {
    let (code, out, err) = barebell(&[
        "bringup",
        "--model",
        "--part",
        "mi300x",
        "--node",
        "3",
        "--mapping",
        "hws",
        "--trace",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("R GC.MC_VM_XGMI_LFB_CNTL @0x6edc = 0x00000073"),
        "{out}"
    );
    assert!(
        out.contains("R GC.MC_VM_XGMI_LFB_SIZE @0x6ee0 = 0x00004000"),
        "{out}"
    );
    assert!(
        out.contains("step gmc: XGMI node 3 of 8, segment 0x4000000000: node offset 0xc000000000"),
        "{out}"
    );
    assert!(
        out.contains("VRAM at MC 0x14000000000 (FB base + node offset), physical 0xc000000000"),
        "{out}"
    );
    assert!(
        out.contains("W HDP.HDP_NONSURFACE_BASE @0x3d80 = 0x40000000"),
        "{out}"
    );
    assert!(
        out.contains("W HDP.HDP_NONSURFACE_BASE_HI @0x3d88 = 0x00000001"),
        "{out}"
    );
    assert!(
        out.contains("step queue: queue ready: hws mapping"),
        "{out}"
    );
}

/// `--node` is refused, in the user's words, on a part without XGMI and
/// past the hive's last node.
#[test]
fn node_is_refused_where_there_is_no_such_hive_node() {
    let (code, _, err) = barebell(&["bringup", "--model", "--part", "navi31", "--node", "1"]);
    assert_ne!(code, 0);
    assert!(err.contains("navi31 is not an XGMI part"), "{err}");
    let (code, _, err) = barebell(&["bringup", "--model", "--part", "mi300x", "--node", "8"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("node 8 does not exist: a hive of 8 GPUs has nodes 0 to 7"),
        "{err}"
    );
}
