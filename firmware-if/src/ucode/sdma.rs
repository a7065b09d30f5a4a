//! SDMA microcode: `sdma_firmware_header_v1_0`/`v1_1`/`v2_0`/`v3_0`.
//!
//! v1.x is one image (CIK..gfx10); v2.0 (SDMA 6) splits it into a context
//! thread (TH0) and a control thread (TH1), each with its own jump table;
//! v3.0 (SDMA 7) is one RS64 image. Sections follow the SDMA cases of
//! `amdgpu_ucode_init_single_fw()`.

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct sdma_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SdmaV1_0 {
    pub header: CommonFirmwareHeader,
    pub ucode_feature_version: Le32,
    pub ucode_change_version: Le32,
    /// Jump-table position in dwords from the payload start.
    pub jt_offset: Le32,
    /// Jump-table length in dwords.
    pub jt_size: Le32,
}
const _: () = assert!(core::mem::size_of::<SdmaV1_0>() == 48);

/// `struct sdma_firmware_header_v1_1`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SdmaV1_1 {
    pub v1_0: SdmaV1_0,
    pub digest_size: Le32,
}
const _: () = assert!(core::mem::size_of::<SdmaV1_1>() == 52);

/// `struct sdma_firmware_header_v2_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SdmaV2_0 {
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
const _: () = assert!(core::mem::size_of::<SdmaV2_0>() == 64);

/// `struct sdma_firmware_header_v3_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SdmaV3_0 {
    pub header: CommonFirmwareHeader,
    pub ucode_feature_version: Le32,
    pub ucode_offset_bytes: Le32,
    pub ucode_size_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<SdmaV3_0>() == 44);

/// A decoded SDMA blob.
#[derive(Debug, Clone, Copy)]
pub enum Sdma<'a> {
    V1_0(&'a SdmaV1_0),
    V1_1(&'a SdmaV1_1),
    V2_0(&'a SdmaV2_0),
    V3_0(&'a SdmaV3_0),
}

fn check_jt(
    c: &Container<'_>,
    field: &'static str,
    start: u64,
    jt_offset: Le32,
    jt_size: Le32,
) -> Result<(), Error> {
    let at = start + u64::from(jt_offset.get()) * 4;
    c.section("jt", field, at, u64::from(jt_size.get()) * 4)
        .map(|_| ())
}

pub(crate) fn parse<'a>(c: &Container<'a>, out: &mut Sections) -> Result<Option<Sdma<'a>>, Error> {
    let base = c.array_offset();
    match c.header_version() {
        (1, minor @ 0..=1) => {
            let h: &SdmaV1_0 = c.view("sdma_firmware_header_v1_0")?;
            out.push(c.payload_section("ucode")?)?;
            check_jt(c, "jt_offset*4+jt_size*4", base, h.jt_offset, h.jt_size)?;
            if minor == 1 {
                Ok(Some(Sdma::V1_1(c.view("sdma_firmware_header_v1_1")?)))
            } else {
                Ok(Some(Sdma::V1_0(h)))
            }
        }
        (2, 0) => {
            let h: &SdmaV2_0 = c.view("sdma_firmware_header_v2_0")?;
            out.push(c.section(
                "ctx",
                "ctx_ucode_size_bytes",
                base,
                h.ctx_ucode_size_bytes.get().into(),
            )?)?;
            let ctl = u64::from(h.ctl_ucode_offset.get());
            out.push(c.section(
                "ctl",
                "ctl_ucode_offset+ctl_ucode_size_bytes",
                ctl,
                h.ctl_ucode_size_bytes.get().into(),
            )?)?;
            // The direct (non-PSP) loader streams (jt_offset + jt_size)
            // bytes of each thread from its start (sdma_v6_0_load_microcode());
            // that span must lie in the blob too.
            let ctx_span = u64::from(h.ctx_jt_offset.get()) + u64::from(h.ctx_jt_size.get());
            c.section("ctx", "ctx_jt_offset+ctx_jt_size", base, ctx_span)?;
            let ctl_span = u64::from(h.ctl_jt_offset.get()) + u64::from(h.ctl_jt_size.get());
            c.section("ctl", "ctl_jt_offset+ctl_jt_size", ctl, ctl_span)?;
            Ok(Some(Sdma::V2_0(h)))
        }
        (3, 0) => {
            let h: &SdmaV3_0 = c.view("sdma_firmware_header_v3_0")?;
            c.section(
                "ucode",
                "ucode_offset_bytes+ucode_size_bytes",
                h.ucode_offset_bytes.get().into(),
                h.ucode_size_bytes.get().into(),
            )?;
            out.push(c.section(
                "ucode",
                "ucode_array_offset_bytes+ucode_size_bytes(v3)",
                base,
                h.ucode_size_bytes.get().into(),
            )?)?;
            Ok(Some(Sdma::V3_0(h)))
        }
        _ => Ok(None),
    }
}

const H: &str = "amdgpu_ucode.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, SdmaV1_0 = "struct sdma_firmware_header_v1_0" {
        header = "header",
        ucode_feature_version = "ucode_feature_version",
        ucode_change_version = "ucode_change_version",
        jt_offset = "jt_offset",
        jt_size = "jt_size",
    }),
    layout_facts!(H, SdmaV1_1 = "struct sdma_firmware_header_v1_1" {
        v1_0 = "v1_0",
        digest_size = "digest_size",
    }),
    layout_facts!(H, SdmaV2_0 = "struct sdma_firmware_header_v2_0" {
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
    layout_facts!(H, SdmaV3_0 = "struct sdma_firmware_header_v3_0" {
        header = "header",
        ucode_feature_version = "ucode_feature_version",
        ucode_offset_bytes = "ucode_offset_bytes",
        ucode_size_bytes = "ucode_size_bytes",
    }),
);
