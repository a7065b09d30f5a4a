//! NBIO 7.9.0 (MI300, GC 9.4.3) registers `nbio_v7_9.c` programs at
//! hardware init, checked against `asic_reg/nbio/nbio_7_9_0_offset.h`
//! from Linux 6.12; the fields against `nbio_7_9_0_sh_mask.h`
//! ([`FIELD_FACTS`]).
//!
//! The HDP remap, doorbell-aperture and self-ring registers sit where
//! NBIO 4.3.0 has them (segment 2, the same dword offsets and field
//! masks), so the runtime's NBIO bitfield structs serve both; what is new
//! is the index/data pair (`BIF_BX0_PCIE_INDEX2`/`_DATA2`, segment 0,
//! with `_INDEX2_HI` for 64-bit addresses), the per-AID doorbell fence
//! (`XCC_DOORBELL_FENCE`, segment 5), the BACO control Linux clears, and
//! the doorbell routing entries (`DOORBELL0_CTRL_ENTRY_n`, segment 8, and
//! `S2A_DOORBELL_ENTRY_n_CTRL`, segment 5).
//!
//! Segment 8 (`BIFC_DOORBELL_ACCESS_EN_PF`, `BIFC_GFX_INT_MONITOR_MASK`,
//! `DOORBELL0_CTRL_ENTRY_n`) is reached through the discovered bases like
//! any other ([`crate::regs::MAX_SEGMENTS`]); a table that lists fewer
//! NBIO segments leaves them unwritten ([`crate::nbio::init_v7_9`]).

super::registers! {
    "nbio_7_9_0_offset.h";
    BIF_BX0_PCIE_INDEX2 = 0x000e, 0;
    BIF_BX0_PCIE_DATA2 = 0x000f, 0;
    BIF_BX0_PCIE_INDEX2_HI = 0x0011, 0;
    RCC_STRAP0_RCC_DEV0_EPF0_STRAP0 = 0x0016, 2;
    RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 0x00c0, 2;
    RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE = 0x00c3, 2;
    BIF_BX0_INTERRUPT_CNTL = 0x00f1, 2;
    BIF_BX0_INTERRUPT_CNTL2 = 0x00f2, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH = 0x00f3, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW = 0x00f4, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL = 0x00f5, 2;
    BIF_BX_PF0_GPU_HDP_FLUSH_REQ = 0x0106, 2;
    BIF_BX_PF0_GPU_HDP_FLUSH_DONE = 0x0107, 2;
    BIF_BX0_BACO_CNTL = 0x010b, 2;
    BIF_BX_PF0_PARTITION_COMPUTE_STATUS = 0x0163, 2;
    BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = 0x012d, 2;
    BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = 0x012e, 2;
    XCC_DOORBELL_FENCE = 0x740c, 5;
    S2A_DOORBELL_ENTRY_1_CTRL = 0x7a81, 5;
    S2A_DOORBELL_ENTRY_2_CTRL = 0x7a82, 5;
    S2A_DOORBELL_ENTRY_3_CTRL = 0x7a83, 5;
    S2A_DOORBELL_ENTRY_5_CTRL = 0x7a85, 5;
    S2A_DOORBELL_ENTRY_6_CTRL = 0x7a86, 5;
    DOORBELL0_CTRL_ENTRY_0 = 0xcd00, 8;
    DOORBELL0_CTRL_ENTRY_1 = 0xcd01, 8;
    DOORBELL0_CTRL_ENTRY_2 = 0xcd02, 8;
    DOORBELL0_CTRL_ENTRY_3 = 0xcd03, 8;
    DOORBELL0_CTRL_ENTRY_4 = 0xcd04, 8;
    BIFC_DOORBELL_ACCESS_EN_PF = 0xcf6e, 8;
    BIFC_GFX_INT_MONITOR_MASK = 0xe8ad, 8;
}

/// `XCC_DOORBELL_FENCE.SHUB_SLV_MODE`: what `nbio_v7_9_init_registers()`
/// writes to the fence of every AID but 0.
pub const XCC_DOORBELL_FENCE_SHUB_SLV_MODE: u32 = 0x0001_0000;
/// `BIF_BX0_BACO_CNTL.BACO_EN` and `.BACO_DUMMY_EN`, cleared by
/// `nbio_v7_9_init_registers()` when set.
pub const BACO_EN: u32 = 0x0000_0001;
pub const BACO_DUMMY_EN: u32 = 0x0000_0004;
/// `BIF_BX_PF0_PARTITION_COMPUTE_STATUS.PARTITION_MODE` (bits 7:4), the
/// compute partition mode `nbio_v7_9_get_compute_partition_mode()` reads:
/// `enum amdgpu_gfx_partition` (`amdgpu_gfx.h`: SPX 0, DPX 1, TPX 2, QPX
/// 3, CPX 4).
pub const PARTITION_MODE: u32 = 0x0000_00F0;
pub const PARTITION_MODE_SHIFT: u32 = 4;

/// `RCC_STRAP0_RCC_DEV0_EPF0_STRAP0.STRAP_ATI_REV_ID_DEV0_F0` (bits
/// 27:24): the revision `nbio_v7_9_get_rev_id()` reads when discovery's
/// NBIO sub-revision is 0.
pub const STRAP_ATI_REV_ID: u32 = 0x0F00_0000;
pub const STRAP_ATI_REV_ID_SHIFT: u32 = 24;

/// `DOORBELL0_CTRL_ENTRY_0` fields (every entry has them).
pub const RANGE_OFFSET_ENTRY: u32 = 0x0000_03FF;
pub const RANGE_SIZE_ENTRY: u32 = 0x0000_7C00;

const SH: &str = "nbio_7_9_0_sh_mask.h";

/// The field masks used (and the ones the shared NBIO bitfield structs
/// declare), against `nbio_7_9_0_sh_mask.h`.
pub const FIELD_FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        SH,
        "RCC_STRAP0_RCC_DEV0_EPF0_STRAP0__STRAP_ATI_REV_ID_DEV0_F0_MASK",
        STRAP_ATI_REV_ID as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "RCC_STRAP0_RCC_DEV0_EPF0_STRAP0__STRAP_ATI_REV_ID_DEV0_F0__SHIFT",
        STRAP_ATI_REV_ID_SHIFT as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "XCC_DOORBELL_FENCE__SHUB_SLV_MODE_MASK",
        XCC_DOORBELL_FENCE_SHUB_SLV_MODE as u64,
    ),
    barebell_facts::Fact::constant(SH, "BIF_BX0_BACO_CNTL__BACO_EN_MASK", BACO_EN as u64),
    barebell_facts::Fact::constant(
        SH,
        "BIF_BX_PF0_PARTITION_COMPUTE_STATUS__PARTITION_MODE_MASK",
        PARTITION_MODE as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "BIF_BX_PF0_PARTITION_COMPUTE_STATUS__PARTITION_MODE__SHIFT",
        PARTITION_MODE_SHIFT as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "BIF_BX0_BACO_CNTL__BACO_DUMMY_EN_MASK",
        BACO_DUMMY_EN as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "DOORBELL0_CTRL_ENTRY_0__BIF_DOORBELL0_RANGE_OFFSET_ENTRY_MASK",
        RANGE_OFFSET_ENTRY as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "DOORBELL0_CTRL_ENTRY_0__BIF_DOORBELL0_RANGE_SIZE_ENTRY_MASK",
        RANGE_SIZE_ENTRY as u64,
    ),
    // The shared structs of `crate::regs::nbio_4_3_0::init`, against this
    // header too.
    barebell_facts::Fact::constant(
        SH,
        "BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL__ADDRESS_MASK",
        super::nbio_4_3_0::init::RemapHdpFlushCntl::new()
            .with_address(0x1_FFFF)
            .into_bits() as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN__BIF_DOORBELL_APER_EN_MASK",
        super::nbio_4_3_0::init::DoorbellAperEn::new()
            .with_bif_doorbell_aper_en(true)
            .into_bits() as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL__DOORBELL_SELFRING_GPA_APER_EN_MASK",
        super::nbio_4_3_0::init::SelfringAperCntl::new()
            .with_doorbell_selfring_gpa_aper_en(true)
            .into_bits() as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL__DOORBELL_SELFRING_GPA_APER_MODE_MASK",
        super::nbio_4_3_0::init::SelfringAperCntl::new()
            .with_doorbell_selfring_gpa_aper_mode(true)
            .into_bits() as u64,
    ),
    barebell_facts::Fact::constant(
        SH,
        "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL__DOORBELL_SELFRING_GPA_APER_SIZE_MASK",
        super::nbio_4_3_0::init::SelfringAperCntl::new()
            .with_doorbell_selfring_gpa_aper_size(0xFFF)
            .into_bits() as u64,
    ),
];
