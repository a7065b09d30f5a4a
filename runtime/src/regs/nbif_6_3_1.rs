//! NBIF 6.3.1 (Navi4x, soc24) registers the `nbio` step programs.
//!
//! Checked against `asic_reg/nbif/nbif_6_3_1_offset.h` and
//! `nbif_6_3_1_sh_mask.h` from Linux 6.12, independently of NBIO 4.3.0's
//! headers. The two generations happen to agree on every register and
//! field listed here (same dword offsets, same `BASE_IDX`, same field
//! positions); that agreement is what the two fact tables establish, not
//! something assumed, so a future header that moves one of them fails
//! conformance here rather than silently reusing the Navi3x value.
//!
//! The field layouts are the structs in [`super::nbio_4_3_0::init`],
//! checked a second time below against this IP's `sh_mask.h`.

use super::nbio_4_3_0::init::{DoorbellAperEn, RemapHdpFlushCntl, SelfringAperCntl};

super::registers! {
    "nbif_6_3_1_offset.h";
    BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = 0x012d, 2;
    BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = 0x012e, 2;
    RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 0x00c0, 2;
    RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE = 0x00c3, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH = 0x00f3, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW = 0x00f4, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL = 0x00f5, 2;
    BIF_BX_PF0_RSMU_INDEX = 0x0000, 1;
    BIF_BX_PF0_RSMU_DATA = 0x0001, 1;
    GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL = 0x01cb, 2;
    GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL = 0x01cd, 2;
    GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL = 0x01ce, 2;
}

const SH: &str = "nbif_6_3_1_sh_mask.h";

/// `__SHIFT` and `_MASK` facts for one field, from the mask the shared
/// struct's public accessors give (all ones with the field cleared,
/// inverted); the struct's own `*_OFFSET` constants are private to
/// [`super::nbio_4_3_0::init`].
macro_rules! field {
    ($reg:literal, $field:literal, $mask:expr) => {{
        const MASK: u32 = $mask;
        [
            barebell_facts::Fact::constant(
                SH,
                concat!($reg, "__", $field, "__SHIFT"),
                MASK.trailing_zeros() as u64,
            ),
            barebell_facts::Fact::constant(SH, concat!($reg, "__", $field, "_MASK"), MASK as u64),
        ]
    }};
}

/// The shared field layouts, checked against `nbif_6_3_1_sh_mask.h`.
pub const FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    field!(
        "BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL",
        "ADDRESS",
        !RemapHdpFlushCntl::from_bits(u32::MAX)
            .with_address(0)
            .into_bits()
    ),
    field!(
        "BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL",
        "ADDRESS",
        !RemapHdpFlushCntl::from_bits(u32::MAX)
            .with_address(0)
            .into_bits()
    ),
    field!(
        "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN",
        "BIF_DOORBELL_APER_EN",
        !DoorbellAperEn::from_bits(u32::MAX)
            .with_bif_doorbell_aper_en(false)
            .into_bits()
    ),
    field!(
        "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL",
        "DOORBELL_SELFRING_GPA_APER_EN",
        !SelfringAperCntl::from_bits(u32::MAX)
            .with_doorbell_selfring_gpa_aper_en(false)
            .into_bits()
    ),
    field!(
        "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL",
        "DOORBELL_SELFRING_GPA_APER_MODE",
        !SelfringAperCntl::from_bits(u32::MAX)
            .with_doorbell_selfring_gpa_aper_mode(false)
            .into_bits()
    ),
    field!(
        "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL",
        "DOORBELL_SELFRING_GPA_APER_SIZE",
        !SelfringAperCntl::from_bits(u32::MAX)
            .with_doorbell_selfring_gpa_aper_size(0)
            .into_bits()
    ),
);
