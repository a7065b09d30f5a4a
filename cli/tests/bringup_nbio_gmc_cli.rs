//! `barebell bringup --until rlc --trace`: the `nbio` and `gmc` steps run
//! on the NBIO and MMHUB models, and the GFXHUB comes up after the RLC
//! autoload (as `gfx_v11_0_hw_init()` enables it), for both parts: NBIO
//! 4.3.0, GFXHUB 3.0 and MMHUB 3.0.0 on Navi31; NBIF 6.3.1, GFXHUB 12.0 and
//! MMHUB 4.1.0 on Navi48. Trace lines are `W BLOCK.REGISTER @offset =
//! value`; the checks ignore the offset (a discovery model value).
//!
//! Expected trace values are composed by hand from Linux 6.12 headers:
//! `BIF_DOORBELL_APER_EN` is bit 0 of `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN`,
//! the HDP remap holds the byte offset `0x80000 - 4096` (+4 for the REG
//! flush, `KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL`), and `GCVM_CONTEXT0_CNTL`
//! = ENABLE_CONTEXT (0x1) | PAGE_TABLE_DEPTH 3 (mask 0x6), the same value
//! in `MMVM_CONTEXT0_CNTL` and in the gfx12 headers (the fields that moved
//! in gfx12 are zero here). `MMMC_VM_MX_L1_TLB_CNTL` = ENABLE_L1_TLB 0x1 |
//! SYSTEM_ACCESS_MODE 3 << 3 | ENABLE_ADVANCED_DRIVER_MODEL 0x40 |
//! MTYPE_UC 3 << 11 (`mmhub_3_0_0_sh_mask.h`, `mmhub_4_1_0_sh_mask.h`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

fn run(part: &str, until: &str) -> (i32, Vec<String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["bringup", "--part", part, "--until", until, "--trace"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    (
        out.status.code().unwrap(),
        text.lines().map(|l| l.trim().to_string()).collect(),
    )
}

/// A trace line `DIR BLOCK.NAME @offset = VALUE` for `want` = `"DIR
/// BLOCK.NAME = VALUE"`, whatever the offset.
fn traced(lines: &[String], want: &str) -> bool {
    let (head, value) = want.split_once(" = ").unwrap();
    lines
        .iter()
        .any(|l| l.starts_with(&format!("{head} @")) && l.ends_with(&format!(" = {value}")))
}

#[test]
fn navi31_runs_nbio_and_gmc_on_the_models() {
    let (code, lines) = run("navi31", "rlc");
    assert_eq!(code, 0, "{lines:#?}");
    let has = |s: &str| traced(&lines, s);
    assert!(has("W NBIO.BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = 0x0007f000"));
    assert!(has("W NBIO.BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = 0x0007f004"));
    assert!(has(
        "W NBIO.RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 0x00000001"
    ));
    assert!(has("W GC.GCVM_CONTEXT0_CNTL = 0x00000007"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step nbio: NBIO 4.3.0 init; HDP flush"))
    );
    assert!(has("W MMHUB.MMVM_CONTEXT0_CNTL = 0x00000007"));
    assert!(has("W MMHUB.MMMC_VM_MX_L1_TLB_CNTL = 0x00001859"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step rlc: GFXHUB 3.0 enabled"))
    );
    assert!(lines.iter().any(|l| l.contains("MMHUB 3.0.0 enabled")));
    // The GFXHUB comes up after the PSP, not in the gmc step.
    let gmc = lines
        .iter()
        .position(|l| l.starts_with("step gmc"))
        .unwrap();
    let psp = lines
        .iter()
        .position(|l| l.starts_with("step psp"))
        .unwrap();
    let gfxhub = lines
        .iter()
        .position(|l| l.starts_with("W GC.GCVM_CONTEXT0_CNTL @"))
        .unwrap();
    assert!(gmc < psp && psp < gfxhub, "{gmc} {psp} {gfxhub}");
    // --until gmc stops before the PSP.
    let (code, lines) = run("navi31", "gmc");
    assert_eq!(code, 0, "{lines:#?}");
    assert!(!lines.iter().any(|l| l.starts_with("step psp")));
}

#[test]
fn navi48_runs_nbif_and_the_gfx12_hubs() {
    let (code, lines) = run("navi48", "rlc");
    assert_eq!(code, 0, "{lines:#?}");
    // NBIF 6.3.1 runs the same sequence on its own registers
    // (`nbif_6_3_1_offset.h`, same names and values as 4.3.0's).
    let has = |s: &str| traced(&lines, s);
    assert!(has("W NBIO.BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = 0x0007f000"));
    assert!(has("W NBIO.BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = 0x0007f004"));
    assert!(has(
        "W NBIO.RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 0x00000001"
    ));
    // The flush is posted by a read of RCC_CONFIG_MEMSIZE (hdp_v7_0.c).
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("R NBIO.RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE @"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step nbio: NBIF 6.3.1 init"))
    );
    assert!(has("W GC.GCVM_CONTEXT0_CNTL = 0x00000007"));
    assert!(has("W MMHUB.MMVM_CONTEXT0_CNTL = 0x00000007"));
    assert!(has("W MMHUB.MMMC_VM_MX_L1_TLB_CNTL = 0x00001859"));
    // A user context in the gfx12 layout (`gc_12_0_0_sh_mask.h`):
    // 0x7 | the seven _ENABLE_DEFAULT bits 0x800, 0x2000, 0x8000,
    // 0x20000, 0x80000, 0x200000, 0x800000.
    assert!(has("W GC.GCVM_CONTEXT1_CNTL = 0x00aaa807"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step rlc: GFXHUB 12.0 enabled"))
    );
    assert!(lines.iter().any(|l| l.contains("MMHUB 4.1.0 enabled")));
}
