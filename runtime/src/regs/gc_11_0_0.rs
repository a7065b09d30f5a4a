//! GC 11.0.0 (Navi31, gfx1100) registers used by barebell.
//!
//! Checked against `asic_reg/gc/gc_11_0_0_offset.h` from Linux 6.12.
//! The compute HQD window `CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI` is the
//! register image of MQD dwords 128..=183 (`struct v11_compute_mqd`), which
//! is why direct HQD programming can copy that slice verbatim.

super::registers! {
    "gc_11_0_0_offset.h";
    GRBM_GFX_CNTL = 0x0900, 1;
    CP_MES_CNTL = 0x2807, 1;
    CP_MES_GP3_LO = 0x2849, 1;
    CP_MQD_BASE_ADDR = 0x1fa9, 0;
    CP_HQD_ACTIVE = 0x1fab, 0;
    CP_HQD_PQ_WPTR_HI = 0x1fe0, 0;
    RLC_RLCS_BOOTLOAD_STATUS = 0x4e82, 1;
    CP_STAT = 0x0f40, 0;
    GCVM_INVALIDATE_ENG0_REQ = 0x16ab, 0;
    GCVM_INVALIDATE_ENG1_REQ = 0x16ac, 0;
    GCVM_INVALIDATE_ENG17_REQ = 0x16bc, 0;
    GCVM_INVALIDATE_ENG0_ACK = 0x16bd, 0;
    GCVM_INVALIDATE_ENG0_SEM = 0x1699, 0;
    GCVM_INVALIDATE_ENG17_SEM = 0x16aa, 0;
    GCVM_INVALIDATE_ENG17_ACK = 0x16ce, 0;
    CP_HQD_PQ_DOORBELL_CONTROL = 0x1fb8, 0;
    CP_HQD_DEQUEUE_REQUEST = 0x1fc1, 0;
    CP_HQD_EOP_RPTR = 0x1fd1, 0;
    CP_HQD_PQ_WPTR_LO = 0x1fdf, 0;
    CP_HQD_PQ_WPTR_POLL_ADDR = 0x1fb6, 0;
    CP_HQD_PQ_WPTR_POLL_ADDR_HI = 0x1fb7, 0;
    CP_PQ_WPTR_POLL_CNTL1 = 0x1e24, 0;
    CP_MEC_DOORBELL_RANGE_LOWER = 0x1dfc, 0;
    CP_MEC_DOORBELL_RANGE_UPPER = 0x1dfd, 0;
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
    // GFXHUB init (`gfxhub_v3_0_gart_enable()`), used by `crate::gmc::hub`.
    GCMC_VM_FB_LOCATION_BASE = 0x1678, 0;
    GCMC_VM_FB_LOCATION_TOP = 0x1679, 0;
    GCMC_VM_FB_OFFSET = 0x15a7, 0;
    GCMC_VM_AGP_TOP = 0x167a, 0;
    GCMC_VM_AGP_BOT = 0x167b, 0;
    GCMC_VM_AGP_BASE = 0x167c, 0;
    GCMC_VM_SYSTEM_APERTURE_LOW_ADDR = 0x167d, 0;
    GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR = 0x167e, 0;
    GCMC_VM_MX_L1_TLB_CNTL = 0x167f, 0;
    GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB = 0x15a8, 0;
    GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB = 0x15a9, 0;
    GCVM_L2_CNTL = 0x15bc, 0;
    GCVM_L2_CNTL2 = 0x15bd, 0;
    GCVM_L2_CNTL3 = 0x15be, 0;
    GCVM_L2_CNTL4 = 0x15d4, 0;
    GCVM_L2_CNTL5 = 0x15da, 0;
    GCVM_L2_PROTECTION_FAULT_CNTL2 = 0x15c5, 0;
    GCVM_L2_PROTECTION_FAULT_CNTL = 0x15c4, 0;
    GCVM_L2_PROTECTION_FAULT_STATUS = 0x15c8, 0;
    GCVM_L2_PROTECTION_FAULT_ADDR_LO32 = 0x15c9, 0;
    GCVM_L2_PROTECTION_FAULT_ADDR_HI32 = 0x15ca, 0;
    GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32 = 0x15cb, 0;
    GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32 = 0x15cc, 0;
    GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32 = 0x15ce, 0;
    GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32 = 0x15cf, 0;
    GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32 = 0x15d0, 0;
    GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32 = 0x15d1, 0;
    GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32 = 0x15d2, 0;
    GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32 = 0x15d3, 0;
    GCVM_CONTEXT0_CNTL = 0x1688, 0;
    GCVM_CONTEXT1_CNTL = 0x1689, 0;
    GCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32 = 0x16cf, 0;
    GCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32 = 0x16d0, 0;
    GCVM_INVALIDATE_ENG1_ADDR_RANGE_LO32 = 0x16d1, 0;
    GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32 = 0x16f3, 0;
    GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32 = 0x16f4, 0;
    GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32 = 0x16f5, 0;
    GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32 = 0x1713, 0;
    GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32 = 0x1714, 0;
    GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32 = 0x1715, 0;
    GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32 = 0x1716, 0;
    GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32 = 0x1733, 0;
    GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32 = 0x1734, 0;
    GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32 = 0x1735, 0;
    GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32 = 0x1736, 0;
    GRBM_SOFT_RESET = 0x0da8, 0;
    SPI_COMPUTE_QUEUE_RESET = 0x1f73, 0;
}

/// `GCVM_INVALIDATE_ENG*_REQ`: what `gfxhub_v3_0_get_invalidate_req()`
/// composes.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmInvalidateReq {
    /// One bit per VMID to invalidate.
    #[bits(16)]
    pub per_vmid_invalidate_req: u16,
    #[bits(3)]
    pub flush_type: u8,
    pub invalidate_l2_ptes: bool,
    pub invalidate_l2_pde0: bool,
    pub invalidate_l2_pde1: bool,
    pub invalidate_l2_pde2: bool,
    pub invalidate_l1_ptes: bool,
    pub clear_protection_fault_status_addr: bool,
    pub log_request: bool,
    pub invalidate_4k_pages_only: bool,
    #[bits(5)]
    __: u8,
}

/// Registers between one invalidation engine and the next
/// (`hub->eng_distance` in `gfxhub_v3_0_init()`).
pub const GCVM_ENG_DISTANCE: u32 =
    GCVM_INVALIDATE_ENG1_REQ.offset - GCVM_INVALIDATE_ENG0_REQ.offset;

const SH_VM: &str = "gc_11_0_0_sh_mask.h";

/// `GCVM_INVALIDATE_ENG0_REQ` field positions, and the engine-17
/// arithmetic Linux relies on, checked against the headers.
pub const VM_FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "PER_VMID_INVALIDATE_REQ",
        GcvmInvalidateReq::PER_VMID_INVALIDATE_REQ_OFFSET,
        GcvmInvalidateReq::PER_VMID_INVALIDATE_REQ_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "FLUSH_TYPE",
        GcvmInvalidateReq::FLUSH_TYPE_OFFSET,
        GcvmInvalidateReq::FLUSH_TYPE_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "INVALIDATE_L2_PTES",
        GcvmInvalidateReq::INVALIDATE_L2_PTES_OFFSET,
        GcvmInvalidateReq::INVALIDATE_L2_PTES_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "INVALIDATE_L2_PDE0",
        GcvmInvalidateReq::INVALIDATE_L2_PDE0_OFFSET,
        GcvmInvalidateReq::INVALIDATE_L2_PDE0_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "INVALIDATE_L2_PDE1",
        GcvmInvalidateReq::INVALIDATE_L2_PDE1_OFFSET,
        GcvmInvalidateReq::INVALIDATE_L2_PDE1_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "INVALIDATE_L2_PDE2",
        GcvmInvalidateReq::INVALIDATE_L2_PDE2_OFFSET,
        GcvmInvalidateReq::INVALIDATE_L2_PDE2_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "INVALIDATE_L1_PTES",
        GcvmInvalidateReq::INVALIDATE_L1_PTES_OFFSET,
        GcvmInvalidateReq::INVALIDATE_L1_PTES_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "CLEAR_PROTECTION_FAULT_STATUS_ADDR",
        GcvmInvalidateReq::CLEAR_PROTECTION_FAULT_STATUS_ADDR_OFFSET,
        GcvmInvalidateReq::CLEAR_PROTECTION_FAULT_STATUS_ADDR_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "LOG_REQUEST",
        GcvmInvalidateReq::LOG_REQUEST_OFFSET,
        GcvmInvalidateReq::LOG_REQUEST_BITS
    ),
    super::field_facts!(
        SH_VM,
        "GCVM_INVALIDATE_ENG0_REQ",
        "INVALIDATE_4K_PAGES_ONLY",
        GcvmInvalidateReq::INVALIDATE_4K_PAGES_ONLY_OFFSET,
        GcvmInvalidateReq::INVALIDATE_4K_PAGES_ONLY_BITS
    ),
    [
        barebell_facts::Fact::constant(
            "gc_11_0_0_offset.h",
            "regGCVM_INVALIDATE_ENG0_REQ + 17 * (regGCVM_INVALIDATE_ENG1_REQ - regGCVM_INVALIDATE_ENG0_REQ)",
            (GCVM_INVALIDATE_ENG0_REQ.offset + 17 * GCVM_ENG_DISTANCE) as u64,
        ),
        barebell_facts::Fact::constant(
            "gc_11_0_0_offset.h",
            "regGCVM_INVALIDATE_ENG17_ACK - regGCVM_INVALIDATE_ENG0_ACK",
            (17 * GCVM_ENG_DISTANCE) as u64,
        ),
    ],
);

/// The `*_INVALIDATE_ENG0_REQ` fields `*_get_invalidate_req()` sets, for
/// one header and register prefix. Expanded here because the positions
/// are [`GcvmInvalidateReq`]'s private constants.
macro_rules! invalidate_req_field_facts {
    ($sh:literal, $vm:literal) => {
        barebell_facts::fact_table!(
            super::vm_fields::vm_field!(
                $sh,
                $vm,
                "_INVALIDATE_ENG0_REQ",
                "PER_VMID_INVALIDATE_REQ",
                GcvmInvalidateReq,
                PER_VMID_INVALIDATE_REQ_OFFSET,
                PER_VMID_INVALIDATE_REQ_BITS
            ),
            super::vm_fields::vm_field!(
                $sh,
                $vm,
                "_INVALIDATE_ENG0_REQ",
                "FLUSH_TYPE",
                GcvmInvalidateReq,
                FLUSH_TYPE_OFFSET,
                FLUSH_TYPE_BITS
            ),
            super::vm_fields::vm_field!(
                $sh,
                $vm,
                "_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L2_PTES",
                GcvmInvalidateReq,
                INVALIDATE_L2_PTES_OFFSET,
                INVALIDATE_L2_PTES_BITS
            ),
            super::vm_fields::vm_field!(
                $sh,
                $vm,
                "_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L2_PDE0",
                GcvmInvalidateReq,
                INVALIDATE_L2_PDE0_OFFSET,
                INVALIDATE_L2_PDE0_BITS
            ),
            super::vm_fields::vm_field!(
                $sh,
                $vm,
                "_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L2_PDE1",
                GcvmInvalidateReq,
                INVALIDATE_L2_PDE1_OFFSET,
                INVALIDATE_L2_PDE1_BITS
            ),
            super::vm_fields::vm_field!(
                $sh,
                $vm,
                "_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L2_PDE2",
                GcvmInvalidateReq,
                INVALIDATE_L2_PDE2_OFFSET,
                INVALIDATE_L2_PDE2_BITS
            ),
            super::vm_fields::vm_field!(
                $sh,
                $vm,
                "_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L1_PTES",
                GcvmInvalidateReq,
                INVALIDATE_L1_PTES_OFFSET,
                INVALIDATE_L1_PTES_BITS
            ),
            super::vm_fields::vm_field!(
                $sh,
                $vm,
                "_INVALIDATE_ENG0_REQ",
                "CLEAR_PROTECTION_FAULT_STATUS_ADDR",
                GcvmInvalidateReq,
                CLEAR_PROTECTION_FAULT_STATUS_ADDR_OFFSET,
                CLEAR_PROTECTION_FAULT_STATUS_ADDR_BITS
            ),
        )
    };
}

/// The other three hubs write their request register through
/// [`GcvmInvalidateReq`] too (`hub::invalidate`): its fields checked
/// against `gc_12_0_0_sh_mask.h`, `mmhub_3_0_0_sh_mask.h` and
/// `mmhub_4_1_0_sh_mask.h` (GC 11.0.0's own are in [`VM_FIELD_FACTS`]).
pub const INVALIDATE_REQ_FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    *invalidate_req_field_facts!("gc_12_0_0_sh_mask.h", "GCVM"),
    *invalidate_req_field_facts!("mmhub_3_0_0_sh_mask.h", "MMVM"),
    *invalidate_req_field_facts!("mmhub_4_1_0_sh_mask.h", "MMVM"),
);

/// `RLC_RLCS_BOOTLOAD_STATUS` on GC 11.0.0. `bootload_complete` is what
/// `gfx_v11_0_wait_for_rlc_autoload_complete()` waits for, together with
/// `CP_STAT == 0`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RlcBootloadStatus {
    pub gfx_init_done: bool,
    #[bits(2)]
    __: u8,
    pub rlc_gpm_iram_loaded: bool,
    pub rlc_gpm_iram_done: bool,
    #[bits(26)]
    pub reserved: u32,
    pub bootload_complete: bool,
}

const SH: &str = "gc_11_0_0_sh_mask.h";

/// Field positions, checked against `gc_11_0_0_sh_mask.h`.
pub const FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
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
        "RESERVED",
        RlcBootloadStatus::RESERVED_OFFSET,
        RlcBootloadStatus::RESERVED_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_RLCS_BOOTLOAD_STATUS",
        "BOOTLOAD_COMPLETE",
        RlcBootloadStatus::BOOTLOAD_COMPLETE_OFFSET,
        RlcBootloadStatus::BOOTLOAD_COMPLETE_BITS
    ),
);

/// Number of dwords in the HQD register window that mirrors the MQD.
pub const HQD_WINDOW_DWORDS: u32 = CP_HQD_PQ_WPTR_HI.offset - CP_MQD_BASE_ADDR.offset + 1;

/// MQD dword that holds the image of `CP_MQD_BASE_ADDR`.
pub const MQD_HQD_FIRST_DWORD: u32 = 128;

/// Ties the register window to the MQD layout in `v11_structs.h`: the
/// first and last window registers must sit at the MQD dwords the window
/// arithmetic above assumes.
pub const MQD_WINDOW_FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::offset(
        "v11_structs.h",
        "struct v11_compute_mqd",
        "cp_mqd_base_addr_lo",
        (MQD_HQD_FIRST_DWORD * 4) as usize,
    ),
    barebell_facts::Fact::offset(
        "v11_structs.h",
        "struct v11_compute_mqd",
        "cp_hqd_pq_wptr_hi",
        ((MQD_HQD_FIRST_DWORD + HQD_WINDOW_DWORDS - 1) * 4) as usize,
    ),
];

// GFXHUB init (`gfxhub_v3_0_gart_enable()`): the fields `crate::gmc::hub`
// sets. Layouts generated once from `gc_11_0_0_sh_mask.h`; the facts below
// check them against it on every CI run. `GCVM_CONTEXT0_CNTL` and
// `GCVM_CONTEXT1_CNTL` share one layout (checked for both).

/// `GCMC_VM_MX_L1_TLB_CNTL`.
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
    #[bits(3)]
    pub mtype: u8,
    #[bits(18)]
    __: u32,
}

/// `GCVM_L2_CNTL`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2Cntl {
    pub enable_l2_cache: bool,
    pub enable_l2_fragment_processing: bool,
    #[bits(6)]
    __: u8,
    pub l2_pde0_cache_tag_generation_mode: bool,
    #[bits(2)]
    __: u8,
    pub enable_default_page_out_to_system_memory: bool,
    #[bits(6)]
    __: u8,
    pub pde_fault_classification: bool,
    #[bits(2)]
    pub context1_identity_access_mode: u8,
    #[bits(5)]
    pub identity_mode_fragment_size: u8,
    #[bits(6)]
    __: u8,
}

/// `GCVM_L2_CNTL2`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2Cntl2 {
    pub invalidate_all_l1_tlbs: bool,
    pub invalidate_l2_cache: bool,
    #[bits(30)]
    __: u32,
}

/// `GCVM_L2_CNTL3`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2Cntl3 {
    #[bits(6)]
    pub bank_select: u8,
    #[bits(9)]
    __: u16,
    #[bits(5)]
    pub l2_cache_bigk_fragment_size: u8,
    #[bits(12)]
    __: u16,
}

/// `GCVM_L2_CNTL4`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2Cntl4 {
    #[bits(6)]
    __: u8,
    pub vmc_tap_pde_request_physical: bool,
    pub vmc_tap_pte_request_physical: bool,
    #[bits(24)]
    __: u32,
}

/// `GCVM_L2_CNTL5`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2Cntl5 {
    #[bits(5)]
    pub l2_cache_smallk_fragment_size: u8,
    #[bits(27)]
    __: u32,
}

/// `GCVM_L2_PROTECTION_FAULT_CNTL2`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2ProtectionFaultCntl2 {
    #[bits(18)]
    __: u32,
    pub active_page_migration_pte_read_retry: bool,
    #[bits(13)]
    __: u16,
}

/// `GCVM_CONTEXT0_CNTL`.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmContextCntl {
    pub enable_context: bool,
    #[bits(2)]
    pub page_table_depth: u8,
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
    #[bits(9)]
    __: u16,
}

/// `GCVM_L2_PROTECTION_FAULT_CNTL`: Linux clears the latched fault by
/// setting bit 0 (`WREG32_P(hub->vm_l2_pro_fault_cntl, 1, ~1)` in
/// `gmc_v11_0_process_interrupt()`).
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2ProtectionFaultCntl {
    pub clear_protection_fault_status_addr: bool,
    pub allow_subsequent_protection_fault_status_addr_updates: bool,
    /// The `*_ENABLE_DEFAULT` bits `*_set_fault_enable_default()` sets:
    /// a fault of that kind goes to the default page.
    pub range_protection_fault_enable_default: bool,
    pub pde0_protection_fault_enable_default: bool,
    pub pde1_protection_fault_enable_default: bool,
    pub pde2_protection_fault_enable_default: bool,
    pub translate_further_protection_fault_enable_default: bool,
    pub nack_protection_fault_enable_default: bool,
    pub dummy_page_protection_fault_enable_default: bool,
    pub valid_protection_fault_enable_default: bool,
    pub read_protection_fault_enable_default: bool,
    pub write_protection_fault_enable_default: bool,
    pub execute_protection_fault_enable_default: bool,
    #[bits(16)]
    pub client_id_no_retry_fault_interrupt: u16,
    pub other_client_id_no_retry_fault_interrupt: bool,
    pub crash_on_no_retry_fault: bool,
    pub crash_on_retry_fault: bool,
}

/// `GCVM_L2_PROTECTION_FAULT_ADDR_LO32`: bits 12..44 of the faulting VA.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2ProtectionFaultAddrLo32 {
    pub logical_page_addr_lo32: u32,
}

/// `GCVM_L2_PROTECTION_FAULT_ADDR_HI32`: bits 44..48 of the faulting VA.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2ProtectionFaultAddrHi32 {
    #[bits(4)]
    pub logical_page_addr_hi4: u8,
    #[bits(28)]
    __: u32,
}

/// `GCVM_L2_PROTECTION_FAULT_STATUS`: the first fault the VM L2 saw,
/// held until cleared (what `gfxhub_v3_0_print_l2_protection_fault_status()`
/// decodes). MMHUB 3.0.0's `MMVM_` twin has the same layout.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcvmL2ProtectionFaultStatus {
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
    #[bits(4)]
    pub vfid: u8,
    pub prt: bool,
    #[bits(2)]
    __: u8,
}

/// The fault registers' fields, checked against `gc_11_0_0_sh_mask.h`.
pub const FAULT_FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::vm_fields::vm_fault_reg_field_facts!(SH, "GCVM"),
    super::vm_fields::vm_status_field_facts!(
        SH,
        "GCVM",
        "_L2_PROTECTION_FAULT_STATUS",
        GcvmL2ProtectionFaultStatus
    ),
);

/// MMHUB 3.0.0 uses every GC 11.0.0 hub layout: each field the hub
/// sequence and the fault decoding touch, checked against
/// `mmhub_3_0_0_sh_mask.h` under its `MMVM_`/`MMMC_` name.
pub const MMHUB_3_0_0_FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::vm_fields::vm_l2_field_facts!("mmhub_3_0_0_sh_mask.h", "MMVM"),
    super::vm_fields::vm_fault_reg_field_facts!("mmhub_3_0_0_sh_mask.h", "MMVM"),
    super::vm_fields::vm_layout_field_facts!("mmhub_3_0_0_sh_mask.h", "MMVM", "MMMC"),
    super::vm_fields::vm_status_field_facts!(
        "mmhub_3_0_0_sh_mask.h",
        "MMVM",
        "_L2_PROTECTION_FAULT_STATUS",
        GcvmL2ProtectionFaultStatus
    ),
);

/// The gfx12-generation hubs (GC 12.0.0, MMHUB 4.1.0) keep GC 11.0.0's
/// L2 control and fault control/address layouts: checked against their
/// headers here (the layouts that moved are checked in `gc_12_0_0`).
pub const GFX12_SHARED_FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::vm_fields::vm_l2_field_facts!("gc_12_0_0_sh_mask.h", "GCVM"),
    super::vm_fields::vm_fault_reg_field_facts!("gc_12_0_0_sh_mask.h", "GCVM"),
    super::vm_fields::vm_l2_field_facts!("mmhub_4_1_0_sh_mask.h", "MMVM"),
    super::vm_fields::vm_fault_reg_field_facts!("mmhub_4_1_0_sh_mask.h", "MMVM"),
);

/// Hub-init field positions, checked against `gc_11_0_0_sh_mask.h`.
pub const HUB_FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::field_facts!(
        SH,
        "GCMC_VM_MX_L1_TLB_CNTL",
        "ENABLE_L1_TLB",
        GcmcVmMxL1TlbCntl::ENABLE_L1_TLB_OFFSET,
        GcmcVmMxL1TlbCntl::ENABLE_L1_TLB_BITS
    ),
    super::field_facts!(
        SH,
        "GCMC_VM_MX_L1_TLB_CNTL",
        "SYSTEM_ACCESS_MODE",
        GcmcVmMxL1TlbCntl::SYSTEM_ACCESS_MODE_OFFSET,
        GcmcVmMxL1TlbCntl::SYSTEM_ACCESS_MODE_BITS
    ),
    super::field_facts!(
        SH,
        "GCMC_VM_MX_L1_TLB_CNTL",
        "SYSTEM_APERTURE_UNMAPPED_ACCESS",
        GcmcVmMxL1TlbCntl::SYSTEM_APERTURE_UNMAPPED_ACCESS_OFFSET,
        GcmcVmMxL1TlbCntl::SYSTEM_APERTURE_UNMAPPED_ACCESS_BITS
    ),
    super::field_facts!(
        SH,
        "GCMC_VM_MX_L1_TLB_CNTL",
        "ENABLE_ADVANCED_DRIVER_MODEL",
        GcmcVmMxL1TlbCntl::ENABLE_ADVANCED_DRIVER_MODEL_OFFSET,
        GcmcVmMxL1TlbCntl::ENABLE_ADVANCED_DRIVER_MODEL_BITS
    ),
    super::field_facts!(
        SH,
        "GCMC_VM_MX_L1_TLB_CNTL",
        "ECO_BITS",
        GcmcVmMxL1TlbCntl::ECO_BITS_OFFSET,
        GcmcVmMxL1TlbCntl::ECO_BITS_BITS
    ),
    super::field_facts!(
        SH,
        "GCMC_VM_MX_L1_TLB_CNTL",
        "MTYPE",
        GcmcVmMxL1TlbCntl::MTYPE_OFFSET,
        GcmcVmMxL1TlbCntl::MTYPE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL",
        "ENABLE_L2_CACHE",
        GcvmL2Cntl::ENABLE_L2_CACHE_OFFSET,
        GcvmL2Cntl::ENABLE_L2_CACHE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL",
        "ENABLE_L2_FRAGMENT_PROCESSING",
        GcvmL2Cntl::ENABLE_L2_FRAGMENT_PROCESSING_OFFSET,
        GcvmL2Cntl::ENABLE_L2_FRAGMENT_PROCESSING_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL",
        "L2_PDE0_CACHE_TAG_GENERATION_MODE",
        GcvmL2Cntl::L2_PDE0_CACHE_TAG_GENERATION_MODE_OFFSET,
        GcvmL2Cntl::L2_PDE0_CACHE_TAG_GENERATION_MODE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL",
        "ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY",
        GcvmL2Cntl::ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY_OFFSET,
        GcvmL2Cntl::ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL",
        "PDE_FAULT_CLASSIFICATION",
        GcvmL2Cntl::PDE_FAULT_CLASSIFICATION_OFFSET,
        GcvmL2Cntl::PDE_FAULT_CLASSIFICATION_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL",
        "CONTEXT1_IDENTITY_ACCESS_MODE",
        GcvmL2Cntl::CONTEXT1_IDENTITY_ACCESS_MODE_OFFSET,
        GcvmL2Cntl::CONTEXT1_IDENTITY_ACCESS_MODE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL",
        "IDENTITY_MODE_FRAGMENT_SIZE",
        GcvmL2Cntl::IDENTITY_MODE_FRAGMENT_SIZE_OFFSET,
        GcvmL2Cntl::IDENTITY_MODE_FRAGMENT_SIZE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL2",
        "INVALIDATE_ALL_L1_TLBS",
        GcvmL2Cntl2::INVALIDATE_ALL_L1_TLBS_OFFSET,
        GcvmL2Cntl2::INVALIDATE_ALL_L1_TLBS_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL2",
        "INVALIDATE_L2_CACHE",
        GcvmL2Cntl2::INVALIDATE_L2_CACHE_OFFSET,
        GcvmL2Cntl2::INVALIDATE_L2_CACHE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL3",
        "BANK_SELECT",
        GcvmL2Cntl3::BANK_SELECT_OFFSET,
        GcvmL2Cntl3::BANK_SELECT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL3",
        "L2_CACHE_BIGK_FRAGMENT_SIZE",
        GcvmL2Cntl3::L2_CACHE_BIGK_FRAGMENT_SIZE_OFFSET,
        GcvmL2Cntl3::L2_CACHE_BIGK_FRAGMENT_SIZE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL4",
        "VMC_TAP_PDE_REQUEST_PHYSICAL",
        GcvmL2Cntl4::VMC_TAP_PDE_REQUEST_PHYSICAL_OFFSET,
        GcvmL2Cntl4::VMC_TAP_PDE_REQUEST_PHYSICAL_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL4",
        "VMC_TAP_PTE_REQUEST_PHYSICAL",
        GcvmL2Cntl4::VMC_TAP_PTE_REQUEST_PHYSICAL_OFFSET,
        GcvmL2Cntl4::VMC_TAP_PTE_REQUEST_PHYSICAL_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_CNTL5",
        "L2_CACHE_SMALLK_FRAGMENT_SIZE",
        GcvmL2Cntl5::L2_CACHE_SMALLK_FRAGMENT_SIZE_OFFSET,
        GcvmL2Cntl5::L2_CACHE_SMALLK_FRAGMENT_SIZE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_L2_PROTECTION_FAULT_CNTL2",
        "ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY",
        GcvmL2ProtectionFaultCntl2::ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY_OFFSET,
        GcvmL2ProtectionFaultCntl2::ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "ENABLE_CONTEXT",
        GcvmContextCntl::ENABLE_CONTEXT_OFFSET,
        GcvmContextCntl::ENABLE_CONTEXT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "PAGE_TABLE_DEPTH",
        GcvmContextCntl::PAGE_TABLE_DEPTH_OFFSET,
        GcvmContextCntl::PAGE_TABLE_DEPTH_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "PAGE_TABLE_BLOCK_SIZE",
        GcvmContextCntl::PAGE_TABLE_BLOCK_SIZE_OFFSET,
        GcvmContextCntl::PAGE_TABLE_BLOCK_SIZE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "RETRY_PERMISSION_OR_INVALID_PAGE_FAULT",
        GcvmContextCntl::RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_OFFSET,
        GcvmContextCntl::RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "RANGE_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::RANGE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::RANGE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "PDE0_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::PDE0_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::PDE0_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "VALID_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::VALID_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::VALID_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "READ_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::READ_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::READ_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "WRITE_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::WRITE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::WRITE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT0_CNTL",
        "EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
);

/// `GCVM_CONTEXT1_CNTL` has the `GCVM_CONTEXT0_CNTL` layout.
pub const CONTEXT1_CNTL_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::field_facts!(
        SH,
        "GCVM_CONTEXT1_CNTL",
        "ENABLE_CONTEXT",
        GcvmContextCntl::ENABLE_CONTEXT_OFFSET,
        GcvmContextCntl::ENABLE_CONTEXT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT1_CNTL",
        "PAGE_TABLE_DEPTH",
        GcvmContextCntl::PAGE_TABLE_DEPTH_OFFSET,
        GcvmContextCntl::PAGE_TABLE_DEPTH_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT1_CNTL",
        "PAGE_TABLE_BLOCK_SIZE",
        GcvmContextCntl::PAGE_TABLE_BLOCK_SIZE_OFFSET,
        GcvmContextCntl::PAGE_TABLE_BLOCK_SIZE_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT1_CNTL",
        "RETRY_PERMISSION_OR_INVALID_PAGE_FAULT",
        GcvmContextCntl::RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_OFFSET,
        GcvmContextCntl::RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT1_CNTL",
        "RANGE_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::RANGE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::RANGE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
    super::field_facts!(
        SH,
        "GCVM_CONTEXT1_CNTL",
        "EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT",
        GcvmContextCntl::EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
        GcvmContextCntl::EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
    ),
);

/// Reset values `gfxhub_v3_0_init_cache_regs()` starts from
/// (`gc_11_0_0_default.h`).
pub const GCVM_L2_CNTL3_DEFAULT: u32 = 0x8012_0007;
pub const GCVM_L2_CNTL4_DEFAULT: u32 = 0x0000_00c1;
pub const GCVM_L2_CNTL5_DEFAULT: u32 = 0x0000_3fe0;

/// The three defaults, checked against `gc_11_0_0_default.h`.
pub const DEFAULT_FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        "gc_11_0_0_default.h",
        "regGCVM_L2_CNTL3_DEFAULT",
        GCVM_L2_CNTL3_DEFAULT as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_11_0_0_default.h",
        "regGCVM_L2_CNTL4_DEFAULT",
        GCVM_L2_CNTL4_DEFAULT as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_11_0_0_default.h",
        "regGCVM_L2_CNTL5_DEFAULT",
        GCVM_L2_CNTL5_DEFAULT as u64,
    ),
];
