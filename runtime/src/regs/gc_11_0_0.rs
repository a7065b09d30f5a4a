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
