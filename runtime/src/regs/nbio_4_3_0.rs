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
}
