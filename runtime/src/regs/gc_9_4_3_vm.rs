//! GC 9.4.3's VM hub registers (GFXHUB v1.2, one per XCC), checked
//! against `gc_9_4_3_offset.h` / `gc_9_4_3_sh_mask.h`. GC 9.4.3's header
//! names them without the `GC` prefix gfx11 uses (`regVM_CONTEXT0_CNTL`,
//! `regMC_VM_MX_L1_TLB_CNTL`), as `gfxhub_v1_2.c` writes them.
//!
//! The field layouts below are the gfx9 ones; MMHUB 1.8
//! ([`crate::regs::mmhub_1_8_0`]) lays the same registers out alike, and
//! [`FIELD_FACTS`] checks every field against both `_sh_mask.h` headers.
//! The CP/HQD registers of GC 9.4.3 live in another module (`gc_9_4_3`).

use bitfield_struct::bitfield;

crate::regs::registers! { "gc_9_4_3_offset.h";
    VM_L2_CNTL = 0x0820, 0;
    VM_L2_CNTL2 = 0x0821, 0;
    VM_L2_CNTL3 = 0x0822, 0;
    VM_L2_PROTECTION_FAULT_CNTL = 0x0827, 0;
    VM_L2_PROTECTION_FAULT_CNTL2 = 0x0828, 0;
    VM_L2_PROTECTION_FAULT_STATUS = 0x082b, 0;
    VM_L2_PROTECTION_FAULT_ADDR_LO32 = 0x082c, 0;
    VM_L2_PROTECTION_FAULT_ADDR_HI32 = 0x082d, 0;
    VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32 = 0x082e, 0;
    VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32 = 0x082f, 0;
    VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32 = 0x0831, 0;
    VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32 = 0x0832, 0;
    VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32 = 0x0833, 0;
    VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32 = 0x0834, 0;
    VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32 = 0x0835, 0;
    VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32 = 0x0836, 0;
    VM_L2_CNTL4 = 0x0837, 0;
    VM_CONTEXT0_CNTL = 0x0860, 0;
    VM_CONTEXT1_CNTL = 0x0861, 0;
    VM_INVALIDATE_ENG0_SEM = 0x0871, 0;
    VM_INVALIDATE_ENG0_REQ = 0x0883, 0;
    VM_INVALIDATE_ENG1_REQ = 0x0884, 0;
    VM_INVALIDATE_ENG0_ACK = 0x0895, 0;
    VM_INVALIDATE_ENG0_ADDR_RANGE_LO32 = 0x08a7, 0;
    VM_INVALIDATE_ENG0_ADDR_RANGE_HI32 = 0x08a8, 0;
    VM_INVALIDATE_ENG1_ADDR_RANGE_LO32 = 0x08a9, 0;
    VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32 = 0x08cb, 0;
    VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32 = 0x08cc, 0;
    VM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32 = 0x08cd, 0;
    VM_CONTEXT1_PAGE_TABLE_BASE_ADDR_HI32 = 0x08ce, 0;
    VM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32 = 0x08eb, 0;
    VM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32 = 0x08ec, 0;
    VM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32 = 0x08ed, 0;
    VM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32 = 0x08ee, 0;
    VM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32 = 0x090b, 0;
    VM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32 = 0x090c, 0;
    VM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32 = 0x090d, 0;
    VM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32 = 0x090e, 0;
    MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB = 0x0948, 0;
    MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB = 0x0949, 0;
    MC_VM_FB_LOCATION_BASE = 0x095c, 0;
    MC_VM_FB_LOCATION_TOP = 0x095d, 0;
    MC_VM_AGP_TOP = 0x095e, 0;
    MC_VM_AGP_BOT = 0x095f, 0;
    MC_VM_AGP_BASE = 0x0960, 0;
    MC_VM_SYSTEM_APERTURE_LOW_ADDR = 0x0961, 0;
    MC_VM_SYSTEM_APERTURE_HIGH_ADDR = 0x0962, 0;
    MC_VM_MX_L1_TLB_CNTL = 0x0963, 0;
    MC_VM_FB_OFFSET = 0x0947, 0;
    MC_VM_XGMI_LFB_CNTL = 0x0957, 0;
    MC_VM_XGMI_LFB_SIZE = 0x0958, 0;
}

/// `MC_VM_XGMI_LFB_CNTL__PF_LFB_REGION_MASK`: the GPU's XGMI node.
pub const PF_LFB_REGION_MASK: u32 = 0xF;
/// `MC_VM_XGMI_LFB_CNTL__PF_MAX_REGION_MASK` and `__SHIFT`: the hive's
/// last node; 0 means XGMI is off.
pub const PF_MAX_REGION_MASK: u32 = 0xF0;
pub const PF_MAX_REGION_SHIFT: u32 = 4;
/// `MC_VM_XGMI_LFB_SIZE__PF_LFB_SIZE_MASK`: a node's segment in 16 MiB.
pub const PF_LFB_SIZE_MASK: u32 = 0x1_FFFF;

/// `VM_CONTEXT0_CNTL` .. `VM_CONTEXT15_CNTL` (gfx9 layout).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct VmContextCntl {
    pub enable_context: bool,
    #[bits(2)]
    pub page_table_depth: u8,
    #[bits(4)]
    pub page_table_block_size: u8,
    pub retry_permission_or_invalid_page_fault: bool,
    pub retry_other_fault: bool,
    pub range_protection_fault_enable_interrupt: bool,
    pub range_protection_fault_enable_default: bool,
    pub dummy_page_protection_fault_enable_interrupt: bool,
    pub dummy_page_protection_fault_enable_default: bool,
    pub pde0_protection_fault_enable_interrupt: bool,
    pub pde0_protection_fault_enable_default: bool,
    pub valid_protection_fault_enable_interrupt: bool,
    pub valid_protection_fault_enable_default: bool,
    pub read_protection_fault_enable_interrupt: bool,
    pub read_protection_fault_enable_default: bool,
    pub write_protection_fault_enable_interrupt: bool,
    pub write_protection_fault_enable_default: bool,
    pub execute_protection_fault_enable_interrupt: bool,
    pub execute_protection_fault_enable_default: bool,
    #[bits(9)]
    __: u16,
}

/// `MC_VM_MX_L1_TLB_CNTL` (gfx9 layout: 2-bit MTYPE, `ATC_EN`).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct McVmMxL1TlbCntl {
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
    pub atc_en: bool,
    #[bits(18)]
    __: u32,
}

/// `VM_L2_CNTL`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct VmL2Cntl {
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

/// `VM_L2_CNTL2`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct VmL2Cntl2 {
    pub invalidate_all_l1_tlbs: bool,
    pub invalidate_l2_cache: bool,
    #[bits(30)]
    __: u32,
}

/// `VM_L2_CNTL3`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct VmL2Cntl3 {
    #[bits(6)]
    pub bank_select: u8,
    #[bits(9)]
    __: u16,
    #[bits(5)]
    pub l2_cache_bigk_fragment_size: u8,
    #[bits(12)]
    __: u16,
}

/// `VM_L2_CNTL4`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct VmL2Cntl4 {
    #[bits(6)]
    __: u8,
    pub vmc_tap_pde_request_physical: bool,
    pub vmc_tap_pte_request_physical: bool,
    #[bits(24)]
    __: u32,
}

/// `VM_L2_PROTECTION_FAULT_CNTL`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct VmL2ProtectionFaultCntl {
    pub clear_protection_fault_status_addr: bool,
    pub allow_subsequent_protection_fault_status_addr_updates: bool,
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
    #[bits(17)]
    __: u32,
    pub crash_on_no_retry_fault: bool,
    pub crash_on_retry_fault: bool,
}

/// `VM_L2_PROTECTION_FAULT_CNTL2`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct VmL2ProtectionFaultCntl2 {
    #[bits(18)]
    __: u32,
    pub active_page_migration_pte_read_retry: bool,
    #[bits(13)]
    __: u16,
}

/// `VM_INVALIDATE_ENG0_REQ` (gfx9: a 2-bit `FLUSH_TYPE`).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct VmInvalidateReq {
    pub per_vmid_invalidate_req: u16,
    #[bits(2)]
    pub flush_type: u8,
    pub invalidate_l2_ptes: bool,
    pub invalidate_l2_pde0: bool,
    pub invalidate_l2_pde1: bool,
    pub invalidate_l2_pde2: bool,
    pub invalidate_l1_ptes: bool,
    pub clear_protection_fault_status_addr: bool,
    pub log_request: bool,
    #[bits(7)]
    __: u8,
}

/// One field's `__SHIFT`/`_MASK` facts in `$sh`.
macro_rules! f {
    ($sh:literal, $reg:literal, $field:literal, $ty:ident, $off:ident, $bits:ident) => {
        crate::regs::field_facts!($sh, $reg, $field, $ty::$off, $ty::$bits)
    };
}

/// Every field the GFXHUB v1.2 / MMHUB 1.8 sequences touch, in one
/// `_sh_mask.h`.
macro_rules! hub_v9_field_facts {
    ($sh:literal) => {
        barebell_facts::fact_table!(
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "ENABLE_CONTEXT",
                VmContextCntl,
                ENABLE_CONTEXT_OFFSET,
                ENABLE_CONTEXT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "PAGE_TABLE_DEPTH",
                VmContextCntl,
                PAGE_TABLE_DEPTH_OFFSET,
                PAGE_TABLE_DEPTH_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "PAGE_TABLE_BLOCK_SIZE",
                VmContextCntl,
                PAGE_TABLE_BLOCK_SIZE_OFFSET,
                PAGE_TABLE_BLOCK_SIZE_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "RETRY_PERMISSION_OR_INVALID_PAGE_FAULT",
                VmContextCntl,
                RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_OFFSET,
                RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "RANGE_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmContextCntl,
                RANGE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                RANGE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmContextCntl,
                DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "PDE0_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmContextCntl,
                PDE0_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                PDE0_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "VALID_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmContextCntl,
                VALID_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                VALID_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "READ_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmContextCntl,
                READ_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                READ_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "WRITE_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmContextCntl,
                WRITE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                WRITE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT1_CNTL",
                "EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmContextCntl,
                EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT0_CNTL",
                "ENABLE_CONTEXT",
                VmContextCntl,
                ENABLE_CONTEXT_OFFSET,
                ENABLE_CONTEXT_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT0_CNTL",
                "PAGE_TABLE_DEPTH",
                VmContextCntl,
                PAGE_TABLE_DEPTH_OFFSET,
                PAGE_TABLE_DEPTH_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT0_CNTL",
                "PAGE_TABLE_BLOCK_SIZE",
                VmContextCntl,
                PAGE_TABLE_BLOCK_SIZE_OFFSET,
                PAGE_TABLE_BLOCK_SIZE_BITS
            ),
            f!(
                $sh,
                "VM_CONTEXT0_CNTL",
                "RETRY_PERMISSION_OR_INVALID_PAGE_FAULT",
                VmContextCntl,
                RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_OFFSET,
                RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_BITS
            ),
            f!(
                $sh,
                "MC_VM_MX_L1_TLB_CNTL",
                "ENABLE_L1_TLB",
                McVmMxL1TlbCntl,
                ENABLE_L1_TLB_OFFSET,
                ENABLE_L1_TLB_BITS
            ),
            f!(
                $sh,
                "MC_VM_MX_L1_TLB_CNTL",
                "SYSTEM_ACCESS_MODE",
                McVmMxL1TlbCntl,
                SYSTEM_ACCESS_MODE_OFFSET,
                SYSTEM_ACCESS_MODE_BITS
            ),
            f!(
                $sh,
                "MC_VM_MX_L1_TLB_CNTL",
                "SYSTEM_APERTURE_UNMAPPED_ACCESS",
                McVmMxL1TlbCntl,
                SYSTEM_APERTURE_UNMAPPED_ACCESS_OFFSET,
                SYSTEM_APERTURE_UNMAPPED_ACCESS_BITS
            ),
            f!(
                $sh,
                "MC_VM_MX_L1_TLB_CNTL",
                "ENABLE_ADVANCED_DRIVER_MODEL",
                McVmMxL1TlbCntl,
                ENABLE_ADVANCED_DRIVER_MODEL_OFFSET,
                ENABLE_ADVANCED_DRIVER_MODEL_BITS
            ),
            f!(
                $sh,
                "MC_VM_MX_L1_TLB_CNTL",
                "ECO_BITS",
                McVmMxL1TlbCntl,
                ECO_BITS_OFFSET,
                ECO_BITS_BITS
            ),
            f!(
                $sh,
                "MC_VM_MX_L1_TLB_CNTL",
                "MTYPE",
                McVmMxL1TlbCntl,
                MTYPE_OFFSET,
                MTYPE_BITS
            ),
            f!(
                $sh,
                "MC_VM_MX_L1_TLB_CNTL",
                "ATC_EN",
                McVmMxL1TlbCntl,
                ATC_EN_OFFSET,
                ATC_EN_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL",
                "ENABLE_L2_CACHE",
                VmL2Cntl,
                ENABLE_L2_CACHE_OFFSET,
                ENABLE_L2_CACHE_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL",
                "ENABLE_L2_FRAGMENT_PROCESSING",
                VmL2Cntl,
                ENABLE_L2_FRAGMENT_PROCESSING_OFFSET,
                ENABLE_L2_FRAGMENT_PROCESSING_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL",
                "L2_PDE0_CACHE_TAG_GENERATION_MODE",
                VmL2Cntl,
                L2_PDE0_CACHE_TAG_GENERATION_MODE_OFFSET,
                L2_PDE0_CACHE_TAG_GENERATION_MODE_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL",
                "ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY",
                VmL2Cntl,
                ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY_OFFSET,
                ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL",
                "PDE_FAULT_CLASSIFICATION",
                VmL2Cntl,
                PDE_FAULT_CLASSIFICATION_OFFSET,
                PDE_FAULT_CLASSIFICATION_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL",
                "CONTEXT1_IDENTITY_ACCESS_MODE",
                VmL2Cntl,
                CONTEXT1_IDENTITY_ACCESS_MODE_OFFSET,
                CONTEXT1_IDENTITY_ACCESS_MODE_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL",
                "IDENTITY_MODE_FRAGMENT_SIZE",
                VmL2Cntl,
                IDENTITY_MODE_FRAGMENT_SIZE_OFFSET,
                IDENTITY_MODE_FRAGMENT_SIZE_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL2",
                "INVALIDATE_ALL_L1_TLBS",
                VmL2Cntl2,
                INVALIDATE_ALL_L1_TLBS_OFFSET,
                INVALIDATE_ALL_L1_TLBS_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL2",
                "INVALIDATE_L2_CACHE",
                VmL2Cntl2,
                INVALIDATE_L2_CACHE_OFFSET,
                INVALIDATE_L2_CACHE_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL3",
                "BANK_SELECT",
                VmL2Cntl3,
                BANK_SELECT_OFFSET,
                BANK_SELECT_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL3",
                "L2_CACHE_BIGK_FRAGMENT_SIZE",
                VmL2Cntl3,
                L2_CACHE_BIGK_FRAGMENT_SIZE_OFFSET,
                L2_CACHE_BIGK_FRAGMENT_SIZE_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL4",
                "VMC_TAP_PDE_REQUEST_PHYSICAL",
                VmL2Cntl4,
                VMC_TAP_PDE_REQUEST_PHYSICAL_OFFSET,
                VMC_TAP_PDE_REQUEST_PHYSICAL_BITS
            ),
            f!(
                $sh,
                "VM_L2_CNTL4",
                "VMC_TAP_PTE_REQUEST_PHYSICAL",
                VmL2Cntl4,
                VMC_TAP_PTE_REQUEST_PHYSICAL_OFFSET,
                VMC_TAP_PTE_REQUEST_PHYSICAL_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "CLEAR_PROTECTION_FAULT_STATUS_ADDR",
                VmL2ProtectionFaultCntl,
                CLEAR_PROTECTION_FAULT_STATUS_ADDR_OFFSET,
                CLEAR_PROTECTION_FAULT_STATUS_ADDR_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "RANGE_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                RANGE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                RANGE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "PDE0_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                PDE0_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                PDE0_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "PDE1_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                PDE1_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                PDE1_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "PDE2_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                PDE2_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                PDE2_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "TRANSLATE_FURTHER_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                TRANSLATE_FURTHER_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                TRANSLATE_FURTHER_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "NACK_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                NACK_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                NACK_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                DUMMY_PAGE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "VALID_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                VALID_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                VALID_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "READ_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                READ_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                READ_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "WRITE_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                WRITE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                WRITE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT",
                VmL2ProtectionFaultCntl,
                EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT_OFFSET,
                EXECUTE_PROTECTION_FAULT_ENABLE_DEFAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "CRASH_ON_NO_RETRY_FAULT",
                VmL2ProtectionFaultCntl,
                CRASH_ON_NO_RETRY_FAULT_OFFSET,
                CRASH_ON_NO_RETRY_FAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL",
                "CRASH_ON_RETRY_FAULT",
                VmL2ProtectionFaultCntl,
                CRASH_ON_RETRY_FAULT_OFFSET,
                CRASH_ON_RETRY_FAULT_BITS
            ),
            f!(
                $sh,
                "VM_L2_PROTECTION_FAULT_CNTL2",
                "ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY",
                VmL2ProtectionFaultCntl2,
                ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY_OFFSET,
                ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY_BITS
            ),
            f!(
                $sh,
                "VM_INVALIDATE_ENG0_REQ",
                "PER_VMID_INVALIDATE_REQ",
                VmInvalidateReq,
                PER_VMID_INVALIDATE_REQ_OFFSET,
                PER_VMID_INVALIDATE_REQ_BITS
            ),
            f!(
                $sh,
                "VM_INVALIDATE_ENG0_REQ",
                "FLUSH_TYPE",
                VmInvalidateReq,
                FLUSH_TYPE_OFFSET,
                FLUSH_TYPE_BITS
            ),
            f!(
                $sh,
                "VM_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L2_PTES",
                VmInvalidateReq,
                INVALIDATE_L2_PTES_OFFSET,
                INVALIDATE_L2_PTES_BITS
            ),
            f!(
                $sh,
                "VM_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L2_PDE0",
                VmInvalidateReq,
                INVALIDATE_L2_PDE0_OFFSET,
                INVALIDATE_L2_PDE0_BITS
            ),
            f!(
                $sh,
                "VM_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L2_PDE1",
                VmInvalidateReq,
                INVALIDATE_L2_PDE1_OFFSET,
                INVALIDATE_L2_PDE1_BITS
            ),
            f!(
                $sh,
                "VM_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L2_PDE2",
                VmInvalidateReq,
                INVALIDATE_L2_PDE2_OFFSET,
                INVALIDATE_L2_PDE2_BITS
            ),
            f!(
                $sh,
                "VM_INVALIDATE_ENG0_REQ",
                "INVALIDATE_L1_PTES",
                VmInvalidateReq,
                INVALIDATE_L1_PTES_OFFSET,
                INVALIDATE_L1_PTES_BITS
            ),
            f!(
                $sh,
                "VM_INVALIDATE_ENG0_REQ",
                "CLEAR_PROTECTION_FAULT_STATUS_ADDR",
                VmInvalidateReq,
                CLEAR_PROTECTION_FAULT_STATUS_ADDR_OFFSET,
                CLEAR_PROTECTION_FAULT_STATUS_ADDR_BITS
            ),
            [barebell_facts::Fact::constant(
                $sh,
                "VM_INVALIDATE_ENG0_ACK__PER_VMID_INVALIDATE_ACK_MASK",
                0xFFFF
            )],
            [barebell_facts::Fact::constant(
                $sh,
                "VM_INVALIDATE_ENG0_SEM__SEMAPHORE_MASK",
                0x1
            )],
            [
                barebell_facts::Fact::constant(
                    $sh,
                    "MC_VM_XGMI_LFB_CNTL__PF_LFB_REGION_MASK",
                    PF_LFB_REGION_MASK as u64
                ),
                barebell_facts::Fact::constant(
                    $sh,
                    "MC_VM_XGMI_LFB_CNTL__PF_MAX_REGION_MASK",
                    PF_MAX_REGION_MASK as u64
                ),
                barebell_facts::Fact::constant(
                    $sh,
                    "MC_VM_XGMI_LFB_CNTL__PF_MAX_REGION__SHIFT",
                    PF_MAX_REGION_SHIFT as u64
                ),
                barebell_facts::Fact::constant(
                    $sh,
                    "MC_VM_XGMI_LFB_SIZE__PF_LFB_SIZE_MASK",
                    PF_LFB_SIZE_MASK as u64
                ),
            ],
        )
    };
}

/// The hub field layouts, checked against GC 9.4.3's and MMHUB 1.8's
/// `_sh_mask.h`.
pub const FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    *hub_v9_field_facts!("gc_9_4_3_sh_mask.h"),
    *hub_v9_field_facts!("mmhub_1_8_0_sh_mask.h"),
);
