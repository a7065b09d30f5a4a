//! Multimedia and helper engines: VCN/UVD/VCE/ISP (common header only),
//! VPE (`vpe_firmware_header_v1_0`) and the multimedia user-mode
//! scheduler (`umsch_mm_firmware_header_v1_0`).
//!
//! The VCN, UVD, VCE and ISP loaders read nothing past the common header
//! (`amdgpu_vcn_sw_init()` and friends take the payload as one image), so
//! for them the common header *is* the full layout.

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections, join64};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct vpe_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct VpeV1_0 {
    pub header: CommonFirmwareHeader,
    pub ucode_feature_version: Le32,
    pub ctx_ucode_size_bytes: Le32,
    pub ctx_jt_offset: Le32,
    pub ctx_jt_size: Le32,
    pub ctl_ucode_offset: Le32,
    pub ctl_ucode_size_bytes: Le32,
    pub ctl_jt_offset: Le32,
    pub ctl_jt_size: Le32,
}
const _: () = assert!(core::mem::size_of::<VpeV1_0>() == 64);

/// `struct umsch_mm_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct UmschMmV1_0 {
    pub header: CommonFirmwareHeader,
    pub umsch_mm_ucode_version: Le32,
    pub umsch_mm_ucode_size_bytes: Le32,
    pub umsch_mm_ucode_offset_bytes: Le32,
    pub umsch_mm_ucode_data_version: Le32,
    pub umsch_mm_ucode_data_size_bytes: Le32,
    pub umsch_mm_ucode_data_offset_bytes: Le32,
    pub umsch_mm_irq_start_addr_lo: Le32,
    pub umsch_mm_irq_start_addr_hi: Le32,
    pub umsch_mm_uc_start_addr_lo: Le32,
    pub umsch_mm_uc_start_addr_hi: Le32,
    pub umsch_mm_data_start_addr_lo: Le32,
    pub umsch_mm_data_start_addr_hi: Le32,
}
const _: () = assert!(core::mem::size_of::<UmschMmV1_0>() == 80);

/// A decoded multimedia blob.
#[derive(Debug, Clone, Copy)]
pub enum Multimedia<'a> {
    /// VCN/UVD/VCE/ISP: one image, described by the common header.
    Payload,
    Vpe(&'a VpeV1_0),
    UmschMm(&'a UmschMmV1_0),
}

impl Multimedia<'_> {
    /// UMSCH instruction start address (bytes), as the loader takes it.
    pub fn uc_start_addr(&self) -> Option<u64> {
        match self {
            Multimedia::UmschMm(h) => Some(join64(
                h.umsch_mm_uc_start_addr_lo,
                h.umsch_mm_uc_start_addr_hi,
            )),
            _ => None,
        }
    }
}

pub(crate) fn parse_payload<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<Multimedia<'a>>, Error> {
    if c.header_version().0 != 1 {
        return Ok(None);
    }
    out.push(c.payload_section("ucode")?)?;
    Ok(Some(Multimedia::Payload))
}

/// VPE: two threads like SDMA v2 (follows the VPE cases of
/// `amdgpu_ucode_init_single_fw()`).
pub(crate) fn parse_vpe<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<Multimedia<'a>>, Error> {
    if c.header_version() != (1, 0) {
        return Ok(None);
    }
    let h: &VpeV1_0 = c.view("vpe_firmware_header_v1_0")?;
    out.push(c.section(
        "ctx",
        "ctx_ucode_size_bytes",
        c.array_offset(),
        h.ctx_ucode_size_bytes.get().into(),
    )?)?;
    out.push(c.section(
        "ctl",
        "ctl_ucode_offset+ctl_ucode_size_bytes",
        h.ctl_ucode_offset.get().into(),
        h.ctl_ucode_size_bytes.get().into(),
    )?)?;
    Ok(Some(Multimedia::Vpe(h)))
}

/// UMSCH: instruction and data images like MES (follows the UMSCH cases
/// of `amdgpu_ucode_init_single_fw()`).
pub(crate) fn parse_umsch<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<Multimedia<'a>>, Error> {
    if c.header_version() != (1, 0) {
        return Ok(None);
    }
    let h: &UmschMmV1_0 = c.view("umsch_mm_firmware_header_v1_0")?;
    c.section(
        "ucode",
        "umsch_mm_ucode_offset_bytes+umsch_mm_ucode_size_bytes",
        h.umsch_mm_ucode_offset_bytes.get().into(),
        h.umsch_mm_ucode_size_bytes.get().into(),
    )?;
    out.push(c.section(
        "ucode",
        "ucode_array_offset_bytes+umsch_mm_ucode_size_bytes",
        c.array_offset(),
        h.umsch_mm_ucode_size_bytes.get().into(),
    )?)?;
    out.push_nonempty(c.section(
        "data",
        "umsch_mm_ucode_data_offset_bytes+umsch_mm_ucode_data_size_bytes",
        h.umsch_mm_ucode_data_offset_bytes.get().into(),
        h.umsch_mm_ucode_data_size_bytes.get().into(),
    )?)?;
    Ok(Some(Multimedia::UmschMm(h)))
}

const H: &str = "amdgpu_ucode.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, VpeV1_0 = "struct vpe_firmware_header_v1_0" {
        header = "header",
        ucode_feature_version = "ucode_feature_version",
        ctx_ucode_size_bytes = "ctx_ucode_size_bytes",
        ctx_jt_offset = "ctx_jt_offset",
        ctx_jt_size = "ctx_jt_size",
        ctl_ucode_offset = "ctl_ucode_offset",
        ctl_ucode_size_bytes = "ctl_ucode_size_bytes",
        ctl_jt_offset = "ctl_jt_offset",
        ctl_jt_size = "ctl_jt_size",
    }),
    layout_facts!(H, UmschMmV1_0 = "struct umsch_mm_firmware_header_v1_0" {
        header = "header",
        umsch_mm_ucode_version = "umsch_mm_ucode_version",
        umsch_mm_ucode_size_bytes = "umsch_mm_ucode_size_bytes",
        umsch_mm_ucode_offset_bytes = "umsch_mm_ucode_offset_bytes",
        umsch_mm_ucode_data_version = "umsch_mm_ucode_data_version",
        umsch_mm_ucode_data_size_bytes = "umsch_mm_ucode_data_size_bytes",
        umsch_mm_ucode_data_offset_bytes = "umsch_mm_ucode_data_offset_bytes",
        umsch_mm_irq_start_addr_lo = "umsch_mm_irq_start_addr_lo",
        umsch_mm_irq_start_addr_hi = "umsch_mm_irq_start_addr_hi",
        umsch_mm_uc_start_addr_lo = "umsch_mm_uc_start_addr_lo",
        umsch_mm_uc_start_addr_hi = "umsch_mm_uc_start_addr_hi",
        umsch_mm_data_start_addr_lo = "umsch_mm_data_start_addr_lo",
        umsch_mm_data_start_addr_hi = "umsch_mm_data_start_addr_hi",
    }),
);
