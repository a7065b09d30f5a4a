//! `barebell bringup --until gmc --trace`: the `nbio` and `gmc` steps run
//! on the NBIO and hub models for both parts: NBIO 4.3.0, GFXHUB 3.0 and
//! MMHUB 3.0.0 on Navi31; NBIF 6.3.1, GFXHUB 12.0 and MMHUB 4.1.0 on
//! Navi48.
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
    assert!(has("W MMVM_CONTEXT0_CNTL = 0x00000007"));
    assert!(has("W MMMC_VM_MX_L1_TLB_CNTL = 0x00001859"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step gmc: GFXHUB 3.0 enabled"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("step gmc: MMHUB 3.0.0 enabled"))
    );
    // --until gmc stops before the PSP.
    assert!(!lines.iter().any(|l| l.starts_with("step psp")));
}

#[test]
fn navi48_runs_nbif_and_the_gfx12_hubs() {
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
    assert!(!lines.iter().any(|l| l.starts_with("step gmc: skipped")));
    assert!(has("W GCVM_CONTEXT0_CNTL = 0x00000007"));
    assert!(has("W MMVM_CONTEXT0_CNTL = 0x00000007"));
    assert!(has("W MMMC_VM_MX_L1_TLB_CNTL = 0x00001859"));
    // A user context in the gfx12 layout (`gc_12_0_0_sh_mask.h`):
    // 0x7 | the seven _ENABLE_DEFAULT bits 0x800, 0x2000, 0x8000,
    // 0x20000, 0x80000, 0x200000, 0x800000.
    assert!(has("W GCVM_CONTEXT1_CNTL = 0x00aaa807"));
    for hub in ["GFXHUB 12.0", "MMHUB 4.1.0"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("step gmc: {hub} enabled"))),
            "{hub}: {lines:#?}"
        );
    }
}
