//! `barebell bringup --until gmc --trace`: the `nbio` and `gmc` steps run
//! on the NBIO and hub models for the Navi31 part; on the Navi48 part the
//! `nbio` step runs NBIF 6.3.1 and the `gmc` step says it is skipped
//! (GC 12 init is not built).
//!
//! Expected trace values are composed by hand from Linux 6.12 headers:
//! `BIF_DOORBELL_APER_EN` is bit 0 of `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN`,
//! the HDP remap holds the byte offset `0x80000 - 4096` (+4 for the REG
//! flush, `KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL`), and `GCVM_CONTEXT0_CNTL`
//! = ENABLE_CONTEXT (0x1) | PAGE_TABLE_DEPTH 3 (mask 0x6).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

fn run(part: &str) -> (i32, Vec<String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(["bringup", "--part", part, "--until", "gmc", "--trace"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    (
        out.status.code().unwrap(),
        text.lines().map(|l| l.trim().to_string()).collect(),
    )
}

#[test]
fn navi31_runs_nbio_and_gmc_on_the_models() {
    let (code, lines) = run("navi31");
    assert_eq!(code, 0, "{lines:#?}");
    let has = |s: &str| lines.iter().any(|l| l == s);
    assert!(has("W BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = 0x0007f000"));
    assert!(has("W BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = 0x0007f004"));
    assert!(has("W RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 0x00000001"));
    assert!(has("W GCVM_CONTEXT0_CNTL = 0x00000007"));
    assert!(lines.iter().any(|l| l.starts_with("step nbio: HDP flush")));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step gmc: GFXHUB enabled"))
    );
    // --until gmc stops before the PSP.
    assert!(!lines.iter().any(|l| l.starts_with("step psp")));
}

#[test]
fn navi48_says_nbio_and_gmc_are_not_built() {
    let (code, lines) = run("navi48");
    assert_eq!(code, 0, "{lines:#?}");
    // NBIF 6.3.1 runs the same sequence on its own registers
    // (`nbif_6_3_1_offset.h`, same names and values as 4.3.0's).
    let has = |s: &str| lines.iter().any(|l| l == s);
    assert!(has("W BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = 0x0007f000"));
    assert!(has("W BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = 0x0007f004"));
    assert!(has("W RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 0x00000001"));
    // The flush is posted by a read of RCC_CONFIG_MEMSIZE (hdp_v7_0.c).
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("R RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE = "))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step nbio: HDP flush") && l.ends_with("NBIF 6.3.1 registers"))
    );
    assert!(!lines.iter().any(|l| l.starts_with("step nbio: skipped")));
    assert!(lines.iter().any(|l| l.starts_with("step gmc: skipped")));
}
