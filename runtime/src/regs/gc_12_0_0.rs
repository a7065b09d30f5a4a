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
    // mes_v12_0_enable_unmapped_doorbell_handling(),
    // mes_v12_0_init_aggregated_doorbell().
    CP_UNMAPPED_DOORBELL = 0x0880, 1;
    CP_MES_DOORBELL_CONTROL1 = 0x283c, 1;
    CP_MES_DOORBELL_CONTROL2 = 0x283d, 1;
    CP_MES_DOORBELL_CONTROL3 = 0x283e, 1;
    CP_MES_DOORBELL_CONTROL4 = 0x283f, 1;
    CP_MES_DOORBELL_CONTROL5 = 0x2840, 1;
    CP_HQD_GFX_CONTROL = 0x1e9f, 0;
    CP_MES_GP3_LO = 0x2849, 1;
    CP_MES_PRGRM_CNTR_START = 0x2800, 1;
    CP_MES_PRGRM_CNTR_START_HI = 0x289d, 1;
    RLC_CP_SCHEDULERS = 0x098a, 1;
    // MEC start (`gfx_v11_0_config_gfx_rs64()`, `gfx_v11_0_cp_compute_enable()`).
    CP_MEC_RS64_CNTL = 0x2904, 1;
    CP_MEC_RS64_PRGRM_CNTR_START = 0x2900, 1;
    CP_MEC_RS64_PRGRM_CNTR_START_HI = 0x2938, 1;
    CP_ME_CNTL = 0x0803, 1;
    CP_PFP_PRGRM_CNTR_START = 0x1e44, 0;
    CP_PFP_PRGRM_CNTR_START_HI = 0x1e59, 0;
    CP_ME_PRGRM_CNTR_START = 0x1e45, 0;
    CP_ME_PRGRM_CNTR_START_HI = 0x1e79, 0;
    CP_PQ_WPTR_POLL_CNTL = 0x1e23, 0;
    // GFX init after autoload (`gfx_v11_0_constants_init()`, golden
    // settings, `gfx_v11_0_rlc_resume()`).
    GRBM_CNTL = 0x0da0, 0;
    SCRATCH_REG4 = 0x2044, 1;
    SCRATCH_REG5 = 0x2045, 1;
    SCRATCH_REG6 = 0x2046, 1;
    SCRATCH_REG7 = 0x2047, 1;
    SH_MEM_CONFIG = 0x09e4, 1;
    SH_MEM_BASES = 0x09e3, 1;
    TCP_CNTL = 0x19a2, 1;
    RLC_SRM_CNTL = 0x4c80, 1;
    // VM hub (gfxhub_v12_0.c).
    GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32 = 0x168f, 0;
    GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32 = 0x1690, 0;
    GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32 = 0x16af, 0;
    GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32 = 0x16b0, 0;
    GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32 = 0x16cf, 0;
    GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32 = 0x16d0, 0;
    GCMC_VM_FB_LOCATION_BASE = 0x1614, 0;
    GCMC_VM_FB_LOCATION_TOP = 0x1615, 0;
    GCMC_VM_FB_OFFSET = 0x15a7, 0;
    GCMC_VM_AGP_BASE = 0x1618, 0;
    GCMC_VM_AGP_BOT = 0x1617, 0;
    GCMC_VM_AGP_TOP = 0x1616, 0;
    GCMC_VM_SYSTEM_APERTURE_LOW_ADDR = 0x1619, 0;
    GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR = 0x161a, 0;
    GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB = 0x15a8, 0;
    GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB = 0x15a9, 0;
    GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32 = 0x15d4, 0;
    GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32 = 0x15d5, 0;
    GCVM_L2_PROTECTION_FAULT_CNTL = 0x15cc, 0;
    GCVM_L2_PROTECTION_FAULT_CNTL2 = 0x15cd, 0;
    GCVM_L2_PROTECTION_FAULT_STATUS_LO32 = 0x15d0, 0;
    GCVM_L2_PROTECTION_FAULT_STATUS_HI32 = 0x15d1, 0;
    GCVM_L2_PROTECTION_FAULT_ADDR_LO32 = 0x15d2, 0;
    GCVM_L2_PROTECTION_FAULT_ADDR_HI32 = 0x15d3, 0;
    GCMC_VM_MX_L1_TLB_CNTL = 0x161b, 0;
    GCVM_L2_CNTL = 0x15c4, 0;
    GCVM_L2_CNTL2 = 0x15c5, 0;
    GCVM_L2_CNTL3 = 0x15c6, 0;
    GCVM_L2_CNTL4 = 0x15dd, 0;
    GCVM_L2_CNTL5 = 0x15e3, 0;
    GCVM_CONTEXT0_CNTL = 0x1624, 0;
    GCVM_CONTEXT1_CNTL = 0x1625, 0;
    GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32 = 0x1691, 0;
    GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32 = 0x16b1, 0;
    GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32 = 0x16b2, 0;
    GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32 = 0x16d1, 0;
    GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32 = 0x16d2, 0;
    GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32 = 0x15d7, 0;
    GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32 = 0x15d8, 0;
    GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32 = 0x15d9, 0;
    GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32 = 0x15da, 0;
    GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32 = 0x15db, 0;
    GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32 = 0x15dc, 0;
    GCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32 = 0x166b, 0;
    GCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32 = 0x166c, 0;
    GCVM_INVALIDATE_ENG1_ADDR_RANGE_LO32 = 0x166d, 0;
    GCVM_INVALIDATE_ENG0_REQ = 0x1647, 0;
    GCVM_INVALIDATE_ENG1_REQ = 0x1648, 0;
    GCVM_INVALIDATE_ENG0_ACK = 0x1659, 0;
    GCVM_INVALIDATE_ENG0_SEM = 0x1635, 0;
    GCVM_INVALIDATE_ENG17_SEM = 0x1646, 0;
    GCVM_INVALIDATE_ENG17_REQ = 0x1658, 0;
    GCVM_INVALIDATE_ENG17_ACK = 0x166a, 0;
    GRBM_SOFT_RESET = 0x0da8, 0;
    SPI_COMPUTE_QUEUE_RESET = 0x1f73, 0;
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

// GFXHUB 12.0 (`gfxhub_v12_0_gart_enable()`): the two layouts that moved
// against GC 11.0.0, and the fault status, which gained a word. The L2
// control layouts are unchanged, so `crate::gmc::hub` writes those with the GC
// 11.0.0 structs; `HUB_FIELD_FACTS` checks every field it writes against
// this generation's header.

/// `GCMC_VM_MX_L1_TLB_CNTL` (gfx12 generation: MTYPE is 2 bits).
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcmcVmMxL1TlbCntl {
    pub enable_l1_tlb: bool,
    #[bits(2)]
    __: u8,
    #[bits(2)]
    pub system_access_mode: u8,
    pub system_aperture_unmapped_access: bool,
    pub enable_advanced_driver_model: bool,
    #[bits(4)]
    pub eco_bits: u8,
    #[bits(2)]
    pub mtype: u8,
    #[bits(19)]
    __: u32,
}

/// `GCVM_CONTEXT0_CNTL`/`GCVM_CONTEXT1_CNTL` (gfx12 generation: bit 3 is
/// unused and everything above it sits one bit higher than on GC 11).
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmContextCntl {
    pub enable_context: bool,
    #[bits(2)]
    pub page_table_depth: u8,
    #[bits(1)]
    __: u8,
    #[bits(4)]
    pub page_table_block_size: u8,
    pub retry_permission_or_invalid_page_fault: bool,
    #[bits(2)]
    __: u8,
    pub range_protection_fault_enable_default: bool,
    #[bits(1)]
    __: u8,
    pub dummy_page_protection_fault_enable_default: bool,
    #[bits(1)]
    __: u8,
    pub pde0_protection_fault_enable_default: bool,
    #[bits(1)]
    __: u8,
    pub valid_protection_fault_enable_default: bool,
    #[bits(1)]
    __: u8,
    pub read_protection_fault_enable_default: bool,
    #[bits(1)]
    __: u8,
    pub write_protection_fault_enable_default: bool,
    #[bits(1)]
    __: u8,
    pub execute_protection_fault_enable_default: bool,
    #[bits(8)]
    __: u8,
}

/// `GCVM_L2_PROTECTION_FAULT_STATUS_LO32` (gfx12 generation: VFID is 5
/// bits, PRT moved to bit 30, UCE is new). `gfxhub_v12_0` decodes this
/// word only; `_HI32` holds `FED`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2ProtectionFaultStatusLo32 {
    pub more_faults: bool,
    #[bits(3)]
    pub walker_error: u8,
    #[bits(4)]
    pub permission_faults: u8,
    pub mapping_error: bool,
    #[bits(9)]
    pub cid: u16,
    pub rw: bool,
    pub atomic: bool,
    #[bits(4)]
    pub vmid: u8,
    pub vf: bool,
    #[bits(5)]
    pub vfid: u8,
    pub prt: bool,
    pub uce: bool,
}

/// The gfx12 layouts of the L1 TLB, context and fault status registers,
/// checked against `gc_12_0_0_sh_mask.h` (`GCVM_`/`GCMC_`) and
/// `mmhub_4_1_0_sh_mask.h` (`MMVM_`/`MMMC_`), which share them.
pub const HUB_FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::vm_fields::vm_layout_field_facts!(SH, "GCVM", "GCMC"),
    super::vm_fields::vm_status_field_facts!(
        SH,
        "GCVM",
        "_L2_PROTECTION_FAULT_STATUS_LO32",
        GcvmL2ProtectionFaultStatusLo32
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_PROTECTION_FAULT_STATUS_LO32",
        "UCE",
        GcvmL2ProtectionFaultStatusLo32::UCE_OFFSET,
        GcvmL2ProtectionFaultStatusLo32::UCE_BITS
    ),
    super::vm_fields::vm_layout_field_facts!("mmhub_4_1_0_sh_mask.h", "MMVM", "MMMC"),
    super::vm_fields::vm_status_field_facts!(
        "mmhub_4_1_0_sh_mask.h",
        "MMVM",
        "_L2_PROTECTION_FAULT_STATUS_LO32",
        GcvmL2ProtectionFaultStatusLo32
    ),
    super::field_facts!(
        "mmhub_4_1_0_sh_mask.h",
        "MMVM_L2_PROTECTION_FAULT_STATUS_LO32",
        "UCE",
        GcvmL2ProtectionFaultStatusLo32::UCE_OFFSET,
        GcvmL2ProtectionFaultStatusLo32::UCE_BITS
    ),
);
