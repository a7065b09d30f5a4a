//! RLC microcode: `rlc_firmware_header_v1_0` and `v2_0`..`v2_4`.
//!
//! Each v2 minor version appends fields to the previous one, so the Rust
//! types nest exactly as Linux's do. Besides the RLC_G image, v2.1+ carry
//! the save/restore lists, v2.2 the IRAM/DRAM images (gfx10.3+), v2.3 the
//! RLC_P/RLC_V images and v2.4 the tap-delay tables. All `*_offset_bytes`
//! count from the start of the file (follows
//! `amdgpu_gfx_rlc_init_microcode_v2_1()` and its siblings).

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct rlc_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RlcV1_0 {
    pub header: CommonFirmwareHeader,
    pub ucode_feature_version: Le32,
    pub save_and_restore_offset: Le32,
    pub clear_state_descriptor_offset: Le32,
    pub avail_scratch_ram_locations: Le32,
    pub master_pkt_description_offset: Le32,
}
const _: () = assert!(core::mem::size_of::<RlcV1_0>() == 52);

/// `struct rlc_firmware_header_v2_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RlcV2_0 {
    pub header: CommonFirmwareHeader,
    pub ucode_feature_version: Le32,
    pub jt_offset: Le32,
    pub jt_size: Le32,
    pub save_and_restore_offset: Le32,
    pub clear_state_descriptor_offset: Le32,
    pub avail_scratch_ram_locations: Le32,
    pub reg_restore_list_size: Le32,
    pub reg_list_format_start: Le32,
    pub reg_list_format_separate_start: Le32,
    pub starting_offsets_start: Le32,
    pub reg_list_format_size_bytes: Le32,
    pub reg_list_format_array_offset_bytes: Le32,
    pub reg_list_size_bytes: Le32,
    pub reg_list_array_offset_bytes: Le32,
    pub reg_list_format_separate_size_bytes: Le32,
    pub reg_list_format_separate_array_offset_bytes: Le32,
    pub reg_list_separate_size_bytes: Le32,
    pub reg_list_separate_array_offset_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<RlcV2_0>() == 104);

/// `struct rlc_firmware_header_v2_1`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RlcV2_1 {
    pub v2_0: RlcV2_0,
    pub reg_list_format_direct_reg_list_length: Le32,
    pub save_restore_list_cntl_ucode_ver: Le32,
    pub save_restore_list_cntl_feature_ver: Le32,
    pub save_restore_list_cntl_size_bytes: Le32,
    pub save_restore_list_cntl_offset_bytes: Le32,
    pub save_restore_list_gpm_ucode_ver: Le32,
    pub save_restore_list_gpm_feature_ver: Le32,
    pub save_restore_list_gpm_size_bytes: Le32,
    pub save_restore_list_gpm_offset_bytes: Le32,
    pub save_restore_list_srm_ucode_ver: Le32,
    pub save_restore_list_srm_feature_ver: Le32,
    pub save_restore_list_srm_size_bytes: Le32,
    pub save_restore_list_srm_offset_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<RlcV2_1>() == 156);

/// `struct rlc_firmware_header_v2_2`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RlcV2_2 {
    pub v2_1: RlcV2_1,
    pub rlc_iram_ucode_size_bytes: Le32,
    pub rlc_iram_ucode_offset_bytes: Le32,
    pub rlc_dram_ucode_size_bytes: Le32,
    pub rlc_dram_ucode_offset_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<RlcV2_2>() == 172);

/// `struct rlc_firmware_header_v2_3`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RlcV2_3 {
    pub v2_2: RlcV2_2,
    pub rlcp_ucode_version: Le32,
    pub rlcp_ucode_feature_version: Le32,
    pub rlcp_ucode_size_bytes: Le32,
    pub rlcp_ucode_offset_bytes: Le32,
    pub rlcv_ucode_version: Le32,
    pub rlcv_ucode_feature_version: Le32,
    pub rlcv_ucode_size_bytes: Le32,
    pub rlcv_ucode_offset_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<RlcV2_3>() == 204);

/// `struct rlc_firmware_header_v2_4`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RlcV2_4 {
    pub v2_3: RlcV2_3,
    pub global_tap_delays_ucode_size_bytes: Le32,
    pub global_tap_delays_ucode_offset_bytes: Le32,
    pub se0_tap_delays_ucode_size_bytes: Le32,
    pub se0_tap_delays_ucode_offset_bytes: Le32,
    pub se1_tap_delays_ucode_size_bytes: Le32,
    pub se1_tap_delays_ucode_offset_bytes: Le32,
    pub se2_tap_delays_ucode_size_bytes: Le32,
    pub se2_tap_delays_ucode_offset_bytes: Le32,
    pub se3_tap_delays_ucode_size_bytes: Le32,
    pub se3_tap_delays_ucode_offset_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<RlcV2_4>() == 244);

/// A decoded RLC blob; `minor` is the v2 minor version (0..=4).
#[derive(Debug, Clone, Copy)]
pub enum Rlc<'a> {
    V1(&'a RlcV1_0),
    V2 { v2_0: &'a RlcV2_0, minor: u16 },
}

fn piece(
    c: &Container<'_>,
    out: &mut Sections,
    name: &'static str,
    field: &'static str,
    offset: Le32,
    size: Le32,
) -> Result<(), Error> {
    out.push_nonempty(c.section(name, field, offset.get().into(), size.get().into())?)
}

pub(crate) fn parse<'a>(c: &Container<'a>, out: &mut Sections) -> Result<Option<Rlc<'a>>, Error> {
    let (major, minor) = c.header_version();
    match (major, minor) {
        (1, 0) => {
            let h: &RlcV1_0 = c.view("rlc_firmware_header_v1_0")?;
            out.push(c.payload_section("ucode")?)?;
            Ok(Some(Rlc::V1(h)))
        }
        (2, 0..=4) => {
            let h: &RlcV2_0 = c.view("rlc_firmware_header_v2_0")?;
            out.push(c.payload_section("ucode")?)?;
            reg_lists_v2_0(c, out, h)?;
            if minor >= 1 {
                save_restore_lists_v2_1(c, out)?;
            }
            if minor >= 2 {
                iram_dram_v2_2(c, out)?;
            }
            if minor >= 3 {
                rlcp_rlcv_v2_3(c, out)?;
            }
            if minor >= 4 {
                tap_delays_v2_4(c, out)?;
            }
            Ok(Some(Rlc::V2 { v2_0: h, minor }))
        }
        _ => Ok(None),
    }
}

/// v2.0's register lists.
fn reg_lists_v2_0(c: &Container<'_>, out: &mut Sections, h: &RlcV2_0) -> Result<(), Error> {
    piece(
        c,
        out,
        "reg_list_format",
        "reg_list_format_array_offset_bytes",
        h.reg_list_format_array_offset_bytes,
        h.reg_list_format_size_bytes,
    )?;
    piece(
        c,
        out,
        "reg_list",
        "reg_list_array_offset_bytes",
        h.reg_list_array_offset_bytes,
        h.reg_list_size_bytes,
    )?;
    piece(
        c,
        out,
        "reg_list_format_separate",
        "reg_list_format_separate_array_offset_bytes",
        h.reg_list_format_separate_array_offset_bytes,
        h.reg_list_format_separate_size_bytes,
    )?;
    piece(
        c,
        out,
        "reg_list_separate",
        "reg_list_separate_array_offset_bytes",
        h.reg_list_separate_array_offset_bytes,
        h.reg_list_separate_size_bytes,
    )
}

/// v2.1's save/restore lists.
fn save_restore_lists_v2_1(c: &Container<'_>, out: &mut Sections) -> Result<(), Error> {
    let h: &RlcV2_1 = c.view("rlc_firmware_header_v2_1")?;
    piece(
        c,
        out,
        "save_restore_list_cntl",
        "save_restore_list_cntl_offset_bytes",
        h.save_restore_list_cntl_offset_bytes,
        h.save_restore_list_cntl_size_bytes,
    )?;
    piece(
        c,
        out,
        "save_restore_list_gpm",
        "save_restore_list_gpm_offset_bytes",
        h.save_restore_list_gpm_offset_bytes,
        h.save_restore_list_gpm_size_bytes,
    )?;
    piece(
        c,
        out,
        "save_restore_list_srm",
        "save_restore_list_srm_offset_bytes",
        h.save_restore_list_srm_offset_bytes,
        h.save_restore_list_srm_size_bytes,
    )
}

/// v2.2's IRAM and DRAM images.
fn iram_dram_v2_2(c: &Container<'_>, out: &mut Sections) -> Result<(), Error> {
    let h: &RlcV2_2 = c.view("rlc_firmware_header_v2_2")?;
    piece(
        c,
        out,
        "rlc_iram",
        "rlc_iram_ucode_offset_bytes",
        h.rlc_iram_ucode_offset_bytes,
        h.rlc_iram_ucode_size_bytes,
    )?;
    piece(
        c,
        out,
        "rlc_dram",
        "rlc_dram_ucode_offset_bytes",
        h.rlc_dram_ucode_offset_bytes,
        h.rlc_dram_ucode_size_bytes,
    )
}

/// v2.3's RLC_P and RLC_V images.
fn rlcp_rlcv_v2_3(c: &Container<'_>, out: &mut Sections) -> Result<(), Error> {
    let h: &RlcV2_3 = c.view("rlc_firmware_header_v2_3")?;
    piece(
        c,
        out,
        "rlcp",
        "rlcp_ucode_offset_bytes",
        h.rlcp_ucode_offset_bytes,
        h.rlcp_ucode_size_bytes,
    )?;
    piece(
        c,
        out,
        "rlcv",
        "rlcv_ucode_offset_bytes",
        h.rlcv_ucode_offset_bytes,
        h.rlcv_ucode_size_bytes,
    )
}

/// v2.4's tap-delay tables.
fn tap_delays_v2_4(c: &Container<'_>, out: &mut Sections) -> Result<(), Error> {
    let h: &RlcV2_4 = c.view("rlc_firmware_header_v2_4")?;
    let taps = [
        (
            "global_tap_delays",
            "global_tap_delays_ucode_offset_bytes",
            h.global_tap_delays_ucode_offset_bytes,
            h.global_tap_delays_ucode_size_bytes,
        ),
        (
            "se0_tap_delays",
            "se0_tap_delays_ucode_offset_bytes",
            h.se0_tap_delays_ucode_offset_bytes,
            h.se0_tap_delays_ucode_size_bytes,
        ),
        (
            "se1_tap_delays",
            "se1_tap_delays_ucode_offset_bytes",
            h.se1_tap_delays_ucode_offset_bytes,
            h.se1_tap_delays_ucode_size_bytes,
        ),
        (
            "se2_tap_delays",
            "se2_tap_delays_ucode_offset_bytes",
            h.se2_tap_delays_ucode_offset_bytes,
            h.se2_tap_delays_ucode_size_bytes,
        ),
        (
            "se3_tap_delays",
            "se3_tap_delays_ucode_offset_bytes",
            h.se3_tap_delays_ucode_offset_bytes,
            h.se3_tap_delays_ucode_size_bytes,
        ),
    ];
    for (name, field, off, size) in taps {
        piece(c, out, name, field, off, size)?;
    }
    Ok(())
}

const H: &str = "amdgpu_ucode.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, RlcV1_0 = "struct rlc_firmware_header_v1_0" {
        header = "header",
        ucode_feature_version = "ucode_feature_version",
        save_and_restore_offset = "save_and_restore_offset",
        clear_state_descriptor_offset = "clear_state_descriptor_offset",
        avail_scratch_ram_locations = "avail_scratch_ram_locations",
        master_pkt_description_offset = "master_pkt_description_offset",
    }),
    layout_facts!(H, RlcV2_0 = "struct rlc_firmware_header_v2_0" {
        header = "header",
        ucode_feature_version = "ucode_feature_version",
        jt_offset = "jt_offset",
        jt_size = "jt_size",
        save_and_restore_offset = "save_and_restore_offset",
        clear_state_descriptor_offset = "clear_state_descriptor_offset",
        avail_scratch_ram_locations = "avail_scratch_ram_locations",
        reg_restore_list_size = "reg_restore_list_size",
        reg_list_format_start = "reg_list_format_start",
        reg_list_format_separate_start = "reg_list_format_separate_start",
        starting_offsets_start = "starting_offsets_start",
        reg_list_format_size_bytes = "reg_list_format_size_bytes",
        reg_list_format_array_offset_bytes = "reg_list_format_array_offset_bytes",
        reg_list_size_bytes = "reg_list_size_bytes",
        reg_list_array_offset_bytes = "reg_list_array_offset_bytes",
        reg_list_format_separate_size_bytes = "reg_list_format_separate_size_bytes",
        reg_list_format_separate_array_offset_bytes = "reg_list_format_separate_array_offset_bytes",
        reg_list_separate_size_bytes = "reg_list_separate_size_bytes",
        reg_list_separate_array_offset_bytes = "reg_list_separate_array_offset_bytes",
    }),
    layout_facts!(H, RlcV2_1 = "struct rlc_firmware_header_v2_1" {
        v2_0 = "v2_0",
        reg_list_format_direct_reg_list_length = "reg_list_format_direct_reg_list_length",
        save_restore_list_cntl_ucode_ver = "save_restore_list_cntl_ucode_ver",
        save_restore_list_cntl_feature_ver = "save_restore_list_cntl_feature_ver",
        save_restore_list_cntl_size_bytes = "save_restore_list_cntl_size_bytes",
        save_restore_list_cntl_offset_bytes = "save_restore_list_cntl_offset_bytes",
        save_restore_list_gpm_ucode_ver = "save_restore_list_gpm_ucode_ver",
        save_restore_list_gpm_feature_ver = "save_restore_list_gpm_feature_ver",
        save_restore_list_gpm_size_bytes = "save_restore_list_gpm_size_bytes",
        save_restore_list_gpm_offset_bytes = "save_restore_list_gpm_offset_bytes",
        save_restore_list_srm_ucode_ver = "save_restore_list_srm_ucode_ver",
        save_restore_list_srm_feature_ver = "save_restore_list_srm_feature_ver",
        save_restore_list_srm_size_bytes = "save_restore_list_srm_size_bytes",
        save_restore_list_srm_offset_bytes = "save_restore_list_srm_offset_bytes",
    }),
    layout_facts!(H, RlcV2_2 = "struct rlc_firmware_header_v2_2" {
        v2_1 = "v2_1",
        rlc_iram_ucode_size_bytes = "rlc_iram_ucode_size_bytes",
        rlc_iram_ucode_offset_bytes = "rlc_iram_ucode_offset_bytes",
        rlc_dram_ucode_size_bytes = "rlc_dram_ucode_size_bytes",
        rlc_dram_ucode_offset_bytes = "rlc_dram_ucode_offset_bytes",
    }),
    layout_facts!(H, RlcV2_3 = "struct rlc_firmware_header_v2_3" {
        v2_2 = "v2_2",
        rlcp_ucode_version = "rlcp_ucode_version",
        rlcp_ucode_feature_version = "rlcp_ucode_feature_version",
        rlcp_ucode_size_bytes = "rlcp_ucode_size_bytes",
        rlcp_ucode_offset_bytes = "rlcp_ucode_offset_bytes",
        rlcv_ucode_version = "rlcv_ucode_version",
        rlcv_ucode_feature_version = "rlcv_ucode_feature_version",
        rlcv_ucode_size_bytes = "rlcv_ucode_size_bytes",
        rlcv_ucode_offset_bytes = "rlcv_ucode_offset_bytes",
    }),
    layout_facts!(H, RlcV2_4 = "struct rlc_firmware_header_v2_4" {
        v2_3 = "v2_3",
        global_tap_delays_ucode_size_bytes = "global_tap_delays_ucode_size_bytes",
        global_tap_delays_ucode_offset_bytes = "global_tap_delays_ucode_offset_bytes",
        se0_tap_delays_ucode_size_bytes = "se0_tap_delays_ucode_size_bytes",
        se0_tap_delays_ucode_offset_bytes = "se0_tap_delays_ucode_offset_bytes",
        se1_tap_delays_ucode_size_bytes = "se1_tap_delays_ucode_size_bytes",
        se1_tap_delays_ucode_offset_bytes = "se1_tap_delays_ucode_offset_bytes",
        se2_tap_delays_ucode_size_bytes = "se2_tap_delays_ucode_size_bytes",
        se2_tap_delays_ucode_offset_bytes = "se2_tap_delays_ucode_offset_bytes",
        se3_tap_delays_ucode_size_bytes = "se3_tap_delays_ucode_size_bytes",
        se3_tap_delays_ucode_offset_bytes = "se3_tap_delays_ucode_offset_bytes",
    }),
);
