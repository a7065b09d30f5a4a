//! GC 12.0.x (gfx1200/gfx1201) registers used by barebell.
//!
//! Checked against `asic_reg/gc/gc_12_0_0_offset.h` and `_sh_mask.h`
//! from Linux 6.12, the only GC 12 headers there; `gfx_v12_0.c` uses them
//! for both 12.0.0 and 12.0.1. Note that `RLC_RLCS_BOOTLOAD_STATUS` moved
//! (0x4e7c here, 0x4e82 on GC 11.0.0) and its low status bits were
//! renumbered, so the two generations cannot share a constant.

super::registers! {
    "gc_12_0_0_offset.h";
    GRBM_GFX_CNTL = 0x0900, 1;
    CP_STAT = 0x0f40, 0;
    RLC_RLCS_BOOTLOAD_STATUS = 0x4e7c, 1;
    CP_MQD_BASE_ADDR = 0x1fa9, 0;
    CP_HQD_ACTIVE = 0x1fab, 0;
    CP_HQD_PQ_WPTR_HI = 0x1fe0, 0;
    CP_HQD_PQ_DOORBELL_CONTROL = 0x1fb8, 0;
    CP_HQD_DEQUEUE_REQUEST = 0x1fc1, 0;
    CP_HQD_EOP_RPTR = 0x1fd1, 0;
    CP_HQD_PQ_WPTR_LO = 0x1fdf, 0;
    CP_HQD_PQ_WPTR_POLL_ADDR = 0x1fb6, 0;
    CP_HQD_PQ_WPTR_POLL_ADDR_HI = 0x1fb7, 0;
    CP_PQ_WPTR_POLL_CNTL1 = 0x1e24, 0;
    CP_MEC_DOORBELL_RANGE_LOWER = 0x1dfc, 0;
    CP_MEC_DOORBELL_RANGE_UPPER = 0x1dfd, 0;
    CP_MES_CNTL = 0x2807, 1;
    CP_MES_GP3_LO = 0x2849, 1;
    CP_MES_PRGRM_CNTR_START = 0x2800, 1;
    CP_MES_PRGRM_CNTR_START_HI = 0x289d, 1;
    RLC_CP_SCHEDULERS = 0x098a, 1;
}

/// `RLC_RLCS_BOOTLOAD_STATUS` on GC 12.0.0
/// (`gfx_v12_0_wait_for_rlc_autoload_complete()` waits for
/// `bootload_complete`).
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RlcBootloadStatus {
    pub gfx_fuse_dist_done: bool,
    pub gfx_init_done: bool,
    pub gfx_security_policy_loaded: bool,
    pub gfx_security_policy_done: bool,
    pub rlc_gpm_iram_loaded: bool,
    pub rlc_gpm_iram_done: bool,
    #[bits(25)]
    pub status_6_30: u32,
    pub bootload_complete: bool,
}

const SH: &str = "gc_12_0_0_sh_mask.h";

/// Field positions, checked against `gc_12_0_0_sh_mask.h`.
pub const FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "GFX_FUSE_DIST_DONE",
        RlcBootloadStatus::GFX_FUSE_DIST_DONE_OFFSET,
        RlcBootloadStatus::GFX_FUSE_DIST_DONE_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "GFX_INIT_DONE",
        RlcBootloadStatus::GFX_INIT_DONE_OFFSET,
        RlcBootloadStatus::GFX_INIT_DONE_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "GFX_SECURITY_POLICY_LOADED",
        RlcBootloadStatus::GFX_SECURITY_POLICY_LOADED_OFFSET,
        RlcBootloadStatus::GFX_SECURITY_POLICY_LOADED_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "GFX_SECURITY_POLICY_DONE",
        RlcBootloadStatus::GFX_SECURITY_POLICY_DONE_OFFSET,
        RlcBootloadStatus::GFX_SECURITY_POLICY_DONE_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "RLC_GPM_IRAM_LOADED",
        RlcBootloadStatus::RLC_GPM_IRAM_LOADED_OFFSET,
        RlcBootloadStatus::RLC_GPM_IRAM_LOADED_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "RLC_GPM_IRAM_DONE",
        RlcBootloadStatus::RLC_GPM_IRAM_DONE_OFFSET,
        RlcBootloadStatus::RLC_GPM_IRAM_DONE_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "STATUS_6_30",
        RlcBootloadStatus::STATUS_6_30_OFFSET,
        RlcBootloadStatus::STATUS_6_30_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "BOOTLOAD_COMPLETE",
        RlcBootloadStatus::BOOTLOAD_COMPLETE_OFFSET,
        RlcBootloadStatus::BOOTLOAD_COMPLETE_BITS
    ),
);
