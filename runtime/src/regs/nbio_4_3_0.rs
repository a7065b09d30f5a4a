//! NBIO 4.3.0 (Navi3x) registers used by barebell.
//!
//! Checked against `asic_reg/nbio/nbio_4_3_0_offset.h` from Linux 6.12.
//! The discovery read runs before any base is known, so Linux uses the
//! absolute offsets in `amdgpu_discovery.c` instead
//! ([`crate::discovery::boot`]); these are the same registers named by
//! their NBIO header, so a part's discovered NBIO bases can be checked to
//! put them where those absolute offsets say.

super::registers! {
    "nbio_4_3_0_offset.h";
    BIF_BX_PF0_MM_INDEX = 0x0000, 0;
    BIF_BX_PF0_MM_DATA = 0x0001, 0;
    BIF_BX_PF0_MM_INDEX_HI = 0x0006, 0;
    RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE = 0x00c3, 2;
    BIF_BX_PF0_RSMU_INDEX = 0x0000, 1;
    BIF_BX_PF0_RSMU_DATA = 0x0001, 1;
}

/// Registers `nbio_v4_3.c` programs at hardware init: the HDP flush
/// remap and the doorbell apertures (checked against the same header).
pub mod init {
    super::super::registers! {
        "nbio_4_3_0_offset.h";
        BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = 0x012d, 2;
        BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = 0x012e, 2;
        RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 0x00c0, 2;
        BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH = 0x00f3, 2;
        BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW = 0x00f4, 2;
        BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL = 0x00f5, 2;
        BIF_BX_PF0_GPU_HDP_FLUSH_REQ = 0x0106, 2;
        BIF_BX_PF0_GPU_HDP_FLUSH_DONE = 0x0107, 2;
        S2A_DOORBELL_ENTRY_0_CTRL = 0x4f7640, 3;
        S2A_DOORBELL_ENTRY_2_CTRL = 0x4f7642, 3;
        S2A_DOORBELL_ENTRY_3_CTRL = 0x4f7643, 3;
    }

    /// `BIF_BX0_REMAP_HDP_{MEM,REG}_FLUSH_CNTL`: the byte offset in the
    /// register BAR where the HDP flush register reappears. Bits 1:0 are
    /// not stored, so the value is the byte offset itself.
    #[bitfield_struct::bitfield(u32)]
    #[derive(PartialEq, Eq)]
    pub struct RemapHdpFlushCntl {
        #[bits(2)]
        __: u8,
        #[bits(17)]
        pub address: u32,
        #[bits(13)]
        __: u16,
    }

    /// `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN`.
    #[bitfield_struct::bitfield(u32)]
    #[derive(PartialEq, Eq)]
    pub struct DoorbellAperEn {
        pub bif_doorbell_aper_en: bool,
        #[bits(31)]
        __: u32,
    }

    /// `BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL`: lets the GPU's own
    /// writes to the doorbell BAR's bus address ring doorbells.
    #[bitfield_struct::bitfield(u32)]
    #[derive(PartialEq, Eq)]
    pub struct SelfringAperCntl {
        pub doorbell_selfring_gpa_aper_en: bool,
        pub doorbell_selfring_gpa_aper_mode: bool,
        #[bits(6)]
        __: u8,
        #[bits(12)]
        pub doorbell_selfring_gpa_aper_size: u16,
        #[bits(12)]
        __: u16,
    }

    const SH: &str = "nbio_4_3_0_sh_mask.h";

    /// Field positions, checked against `nbio_4_3_0_sh_mask.h`, and the
    /// two `enum kfd_mmio_remap` offsets inside the remapped page.
    pub const FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
        super::super::field_facts!(
            SH,
            "BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL",
            "ADDRESS",
            RemapHdpFlushCntl::ADDRESS_OFFSET,
            RemapHdpFlushCntl::ADDRESS_BITS
        ),
        super::super::field_facts!(
            SH,
            "BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL",
            "ADDRESS",
            RemapHdpFlushCntl::ADDRESS_OFFSET,
            RemapHdpFlushCntl::ADDRESS_BITS
        ),
        super::super::field_facts!(
            SH,
            "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN",
            "BIF_DOORBELL_APER_EN",
            DoorbellAperEn::BIF_DOORBELL_APER_EN_OFFSET,
            DoorbellAperEn::BIF_DOORBELL_APER_EN_BITS
        ),
        super::super::field_facts!(
            SH,
            "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL",
            "DOORBELL_SELFRING_GPA_APER_EN",
            SelfringAperCntl::DOORBELL_SELFRING_GPA_APER_EN_OFFSET,
            SelfringAperCntl::DOORBELL_SELFRING_GPA_APER_EN_BITS
        ),
        super::super::field_facts!(
            SH,
            "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL",
            "DOORBELL_SELFRING_GPA_APER_MODE",
            SelfringAperCntl::DOORBELL_SELFRING_GPA_APER_MODE_OFFSET,
            SelfringAperCntl::DOORBELL_SELFRING_GPA_APER_MODE_BITS
        ),
        super::super::field_facts!(
            SH,
            "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL",
            "DOORBELL_SELFRING_GPA_APER_SIZE",
            SelfringAperCntl::DOORBELL_SELFRING_GPA_APER_SIZE_OFFSET,
            SelfringAperCntl::DOORBELL_SELFRING_GPA_APER_SIZE_BITS
        ),
    );
}
