//! DCN 3.2.0 (Navi31's display) registers: the three
//! `gmc_v11_0_get_vbios_fb_size()` reads to size the framebuffer a
//! VBIOS left on screen ([`crate::gmc::layout::vbios_fb_size_gfx11`]).
//! Checked against Linux 6.12 `asic_reg/dcn/dcn_3_2_0_offset.h` and
//! `_sh_mask.h`; `gmc_v11_0.c` includes exactly these for every GC 11.

super::registers! {
    "dcn_3_2_0_offset.h";
    D1VGA_CONTROL = 0x000c, 1;
    HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION = 0x05ea, 2;
    HUBPREQ0_DCSURF_SURFACE_PITCH = 0x0607, 2;
}

/// `D1VGA_CONTROL.D1VGA_MODE_ENABLE`: `(shift, width)`.
pub const D1VGA_MODE_ENABLE: (u32, u32) = (0, 1);
/// `HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION.PRI_VIEWPORT_HEIGHT`.
pub const PRI_VIEWPORT_HEIGHT: (u32, u32) = (16, 14);
/// `HUBPREQ0_DCSURF_SURFACE_PITCH.PITCH` (pixels).
pub const PITCH: (u32, u32) = (0, 14);

/// The value of field `(shift, width)` in `reg`.
pub const fn field(reg: u32, (shift, width): (u32, u32)) -> u32 {
    (reg >> shift) & ((1 << width) - 1)
}

/// The fields above, against `dcn_3_2_0_sh_mask.h`.
pub const FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::field_facts!(
        "dcn_3_2_0_sh_mask.h",
        "D1VGA_CONTROL",
        "D1VGA_MODE_ENABLE",
        D1VGA_MODE_ENABLE.0,
        D1VGA_MODE_ENABLE.1
    ),
    super::field_facts!(
        "dcn_3_2_0_sh_mask.h",
        "HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION",
        "PRI_VIEWPORT_HEIGHT",
        PRI_VIEWPORT_HEIGHT.0,
        PRI_VIEWPORT_HEIGHT.1
    ),
    super::field_facts!(
        "dcn_3_2_0_sh_mask.h",
        "HUBPREQ0_DCSURF_SURFACE_PITCH",
        "PITCH",
        PITCH.0,
        PITCH.1
    ),
);
