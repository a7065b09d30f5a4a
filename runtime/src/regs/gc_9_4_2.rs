//! GC 9.4.2 (Aldebaran, gfx90a) registers of `gfx_v9_0_hw_init()` as
//! barebell runs it ([`crate::gfx::start_v9_0`]), checked against
//! `asic_reg/gc/gc_9_4_2_offset.h` (and the field masks against
//! `gc_9_4_2_sh_mask.h`, [`FIELD_FACTS`]). The CP/HQD registers sit
//! where GC 9.4.3 has them ([`crate::regs::gc_9_4_3`]; the two 9.4.3-only
//! ones aside), and the bitfield layouts are that module's and
//! [`crate::regs::gc_9_4_3_rlc`]'s, checked here against 9.4.2's masks.

super::registers! {
    "gc_9_4_2_offset.h";
    GRBM_CNTL = 0x0000, 0;
    GRBM_GFX_CNTL = 0x0022, 0;
    CP_MEC_CNTL = 0x008d, 0;
    CC_GC_SHADER_ARRAY_CONFIG = 0x026f, 0;
    GC_USER_SHADER_ARRAY_CONFIG = 0x0270, 0;
    SH_MEM_BASES = 0x030a, 0;
    SH_MEM_CONFIG = 0x030d, 0;
    TA_CNTL_AUX = 0x0542, 0;
    GB_ADDR_CONFIG = 0x063e, 0;
    TCP_CHAN_STEER_0 = 0x0b03, 0;
    TCP_CHAN_STEER_1 = 0x0b04, 0;
    TCP_CHAN_STEER_2 = 0x0b09, 0;
    TCP_CHAN_STEER_3 = 0x0b0a, 0;
    TCP_CHAN_STEER_4 = 0x0b0b, 0;
    TCP_CHAN_STEER_5 = 0x0b0c, 0;
    TCI_CNTL_3 = 0x0b5d, 0;
    CP_INT_CNTL_RING0 = 0x106a, 0;
    TCP_UTCL1_CNTL1 = 0x12b5, 0;
    GDS_VMID0_BASE = 0x1300, 0;
    GDS_VMID0_SIZE = 0x1301, 0;
    GDS_GWS_VMID0 = 0x1320, 0;
    GDS_OA_VMID0 = 0x1330, 0;
    RLC_CNTL = 0x4c00, 1;
    RLC_CGCG_CGLS_CTRL = 0x4c49, 1;
    RLC_SPM_MC_CNTL = 0x4c71, 1;
    RLC_SRM_CNTL = 0x4c80, 1;
    GRBM_GFX_INDEX = 0x2200, 1;
}

/// `GRBM_GFX_INDEX` fields (`gfx_v9_0_select_se_sh()`).
pub const GRBM_GFX_INDEX_SH_INDEX_SHIFT: u32 = 8;
pub const GRBM_GFX_INDEX_SE_INDEX_SHIFT: u32 = 16;
pub const GRBM_GFX_INDEX_SH_BROADCAST_WRITES_MASK: u32 = 0x2000_0000;
pub const GRBM_GFX_INDEX_INSTANCE_BROADCAST_WRITES_MASK: u32 = 0x4000_0000;
pub const GRBM_GFX_INDEX_SE_BROADCAST_WRITES_MASK: u32 = 0x8000_0000;
/// `CC_GC_SHADER_ARRAY_CONFIG__INACTIVE_CUS` (the same in
/// `GC_USER_SHADER_ARRAY_CONFIG`).
pub const INACTIVE_CUS_SHIFT: u32 = 16;

/// `GRBM_CNTL__READ_TIMEOUT_MASK`.
pub const READ_TIMEOUT_MASK: u32 = 0xFF;
/// `RLC_SPM_MC_CNTL__RLC_SPM_VMID_MASK` and `__SHIFT`.
pub const RLC_SPM_VMID_MASK: u32 = 0xF;
pub const RLC_SPM_VMID_SHIFT: u32 = 0;
/// `SMUIO_MCM_CONFIG` (`smuio_13_0_2_offset.h`, SMUIO segment 0) and its
/// `DIE_ID` field: which die of an MCM package this GPU is
/// (`smuio_v13_0_get_die_id()`), what picks the TCP channel steering.
pub const SMUIO_MCM_CONFIG: crate::regs::Reg = crate::regs::Reg {
    name: "SMUIO_MCM_CONFIG",
    offset: 0x0024,
    base_idx: 0,
};
pub const DIE_ID_MASK: u32 = 0x1;

/// The field masks the start sequence uses, against `gc_9_4_2_sh_mask.h`
/// (and `SMUIO_MCM_CONFIG` against the SMUIO 13.0.2 headers).
pub const FIELD_FACTS: &[barebell_facts::Fact] = {
    use barebell_facts::Fact;
    const H: &str = "gc_9_4_2_sh_mask.h";
    &[
        Fact::constant(
            H,
            "GRBM_GFX_INDEX__SH_INDEX__SHIFT",
            GRBM_GFX_INDEX_SH_INDEX_SHIFT as u64,
        ),
        Fact::constant(
            H,
            "GRBM_GFX_INDEX__SE_INDEX__SHIFT",
            GRBM_GFX_INDEX_SE_INDEX_SHIFT as u64,
        ),
        Fact::constant(
            H,
            "GRBM_GFX_INDEX__SH_BROADCAST_WRITES_MASK",
            GRBM_GFX_INDEX_SH_BROADCAST_WRITES_MASK as u64,
        ),
        Fact::constant(
            H,
            "GRBM_GFX_INDEX__INSTANCE_BROADCAST_WRITES_MASK",
            GRBM_GFX_INDEX_INSTANCE_BROADCAST_WRITES_MASK as u64,
        ),
        Fact::constant(
            H,
            "GRBM_GFX_INDEX__SE_BROADCAST_WRITES_MASK",
            GRBM_GFX_INDEX_SE_BROADCAST_WRITES_MASK as u64,
        ),
        Fact::constant(
            H,
            "CC_GC_SHADER_ARRAY_CONFIG__INACTIVE_CUS__SHIFT",
            INACTIVE_CUS_SHIFT as u64,
        ),
        Fact::constant(
            H,
            "GC_USER_SHADER_ARRAY_CONFIG__INACTIVE_CUS__SHIFT",
            INACTIVE_CUS_SHIFT as u64,
        ),
        Fact::constant(H, "GRBM_CNTL__READ_TIMEOUT_MASK", READ_TIMEOUT_MASK as u64),
        Fact::constant(
            H,
            "RLC_SPM_MC_CNTL__RLC_SPM_VMID_MASK",
            RLC_SPM_VMID_MASK as u64,
        ),
        Fact::constant(
            H,
            "RLC_SPM_MC_CNTL__RLC_SPM_VMID__SHIFT",
            RLC_SPM_VMID_SHIFT as u64,
        ),
        Fact::constant(H, "RLC_CNTL__RLC_ENABLE_F32_MASK", 1),
        Fact::constant(H, "RLC_SRM_CNTL__SRM_ENABLE_MASK", 1),
        Fact::constant(
            H,
            "CP_INT_CNTL_RING0__CNTX_BUSY_INT_ENABLE_MASK | CP_INT_CNTL_RING0__CNTX_EMPTY_INT_ENABLE_MASK | CP_INT_CNTL_RING0__CMP_BUSY_INT_ENABLE_MASK",
            super::gc_9_4_3_rlc::CpIntCntlRing0::GUI_IDLE.into_bits() as u64,
        ),
        Fact::constant(
            H,
            "CP_MEC_CNTL__MEC_ME1_HALT_MASK | CP_MEC_CNTL__MEC_ME2_HALT_MASK",
            (super::gc_9_4_3_rlc::CpMecCntl::new()
                .with_mec_me1_halt(true)
                .with_mec_me2_halt(true)
                .into_bits()) as u64,
        ),
        Fact::constant(
            H,
            "SH_MEM_CONFIG__ALIGNMENT_MODE_MASK",
            super::gc_9_4_3::ShMemConfig::new()
                .with_alignment_mode(3)
                .into_bits() as u64,
        ),
        Fact::constant(
            H,
            "SH_MEM_CONFIG__RETRY_DISABLE_MASK",
            super::gc_9_4_3::ShMemConfig::new()
                .with_retry_disable(true)
                .into_bits() as u64,
        ),
        Fact::constant(
            H,
            "GRBM_GFX_CNTL__VMID_MASK",
            super::gc_9_4_3::GrbmGfxCntl::new()
                .with_vmid(0xF)
                .into_bits() as u64,
        ),
        Fact::constant("smuio_13_0_2_offset.h", "regSMUIO_MCM_CONFIG", 0x24),
        Fact::constant("smuio_13_0_2_offset.h", "regSMUIO_MCM_CONFIG_BASE_IDX", 0),
        Fact::constant(
            "smuio_13_0_2_sh_mask.h",
            "SMUIO_MCM_CONFIG__DIE_ID_MASK",
            DIE_ID_MASK as u64,
        ),
    ]
};
