//! Command-processor microcode (PFP, ME, CE, MEC): `gfx_firmware_header`.
//!
//! v1.0 is the legacy F32 engine; on gfx9 its MEC image ends in a jump
//! table that PSP loads as a separate ucode id. v2.0 is RS64 (gfx11+):
//! instruction and data images live apart, and the loader programs the
//! instruction start address into `CP_*_PRGRM_CNTR_START` in dwords.

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections, join64};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct gfx_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GfxV1_0 {
    pub header: CommonFirmwareHeader,
    pub ucode_feature_version: Le32,
    /// Jump-table position, in dwords from the payload start.
    pub jt_offset: Le32,
    /// Jump-table length in dwords.
    pub jt_size: Le32,
}
const _: () = assert!(core::mem::size_of::<GfxV1_0>() == 44);
const _: () = assert!(core::mem::offset_of!(GfxV1_0, jt_size) == 40);

/// `struct gfx_firmware_header_v2_0` (RS64).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GfxV2_0 {
    pub header: CommonFirmwareHeader,
    pub ucode_feature_version: Le32,
    pub ucode_size_bytes: Le32,
    pub ucode_offset_bytes: Le32,
    pub data_size_bytes: Le32,
    pub data_offset_bytes: Le32,
    pub ucode_start_addr_lo: Le32,
    pub ucode_start_addr_hi: Le32,
}
const _: () = assert!(core::mem::size_of::<GfxV2_0>() == 60);
const _: () = assert!(core::mem::offset_of!(GfxV2_0, ucode_start_addr_hi) == 56);

/// A decoded CP blob.
#[derive(Debug, Clone, Copy)]
pub enum Gfx<'a> {
    /// Legacy F32 engine.
    V1(&'a GfxV1_0),
    /// RS64 engine.
    V2(&'a GfxV2_0),
}

impl<'a> Gfx<'a> {
    pub fn is_rs64(&self) -> bool {
        matches!(self, Gfx::V2(_))
    }

    /// The value written to `CP_*_PRGRM_CNTR_START{,_HI}`: the RS64
    /// instruction start address in dwords (follows
    /// `gfx_v11_0_cp_gfx_load_pfp_microcode_rs64()`). Legacy engines have
    /// no such register.
    pub fn pc_start(&self) -> Option<u64> {
        match self {
            Gfx::V1(_) => None,
            Gfx::V2(h) => Some(join64(h.ucode_start_addr_lo, h.ucode_start_addr_hi) >> 2),
        }
    }

    pub fn feature_version(&self) -> u32 {
        match self {
            Gfx::V1(h) => h.ucode_feature_version.get(),
            Gfx::V2(h) => h.ucode_feature_version.get(),
        }
    }
}

/// Decodes a CP blob and lists its sections, following the CP cases of
/// `amdgpu_ucode_init_single_fw()`.
pub(crate) fn parse<'a>(c: &Container<'a>, out: &mut Sections) -> Result<Option<Gfx<'a>>, Error> {
    let base = c.array_offset();
    match c.header_version() {
        (1, 0) => {
            let h: &GfxV1_0 = c.view("gfx_firmware_header_v1_0")?;
            let total = u64::from(h.header.ucode_size_bytes.get());
            let jt_bytes = u64::from(h.jt_size.get()) * 4;
            if jt_bytes == 0 {
                out.push(c.payload_section("ucode")?)?;
            } else {
                // PSP loads the image without the table (which sits at
                // its end) and the table as a ucode id of its own.
                let code = total.checked_sub(jt_bytes).ok_or(Error::BadSize {
                    field: "jt_size*4",
                    value: jt_bytes,
                    limit: total,
                })?;
                out.push(c.section("ucode", "ucode_size_bytes-jt_size*4", base, code)?)?;
                let jt_at = base + u64::from(h.jt_offset.get()) * 4;
                out.push(c.section("jt", "jt_offset*4+jt_size*4", jt_at, jt_bytes)?)?;
            }
            Ok(Some(Gfx::V1(h)))
        }
        (2, 0) => {
            let h: &GfxV2_0 = c.view("gfx_firmware_header_v2_0")?;
            // Linux takes the RS64 image from ucode_array_offset_bytes, not
            // ucode_offset_bytes; check the latter too so a blob whose two
            // fields disagree about bounds is still rejected.
            c.section(
                "ucode",
                "ucode_offset_bytes+ucode_size_bytes",
                h.ucode_offset_bytes.get().into(),
                h.ucode_size_bytes.get().into(),
            )?;
            out.push(c.section(
                "ucode",
                "ucode_array_offset_bytes+ucode_size_bytes(v2)",
                base,
                h.ucode_size_bytes.get().into(),
            )?)?;
            out.push_nonempty(c.section(
                "data",
                "data_offset_bytes+data_size_bytes",
                h.data_offset_bytes.get().into(),
                h.data_size_bytes.get().into(),
            )?)?;
            Ok(Some(Gfx::V2(h)))
        }
        _ => Ok(None),
    }
}

const H: &str = "amdgpu_ucode.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, GfxV1_0 = "struct gfx_firmware_header_v1_0" {
        header = "header",
        ucode_feature_version = "ucode_feature_version",
        jt_offset = "jt_offset",
        jt_size = "jt_size",
    }),
    layout_facts!(H, GfxV2_0 = "struct gfx_firmware_header_v2_0" {
        header = "header",
        ucode_feature_version = "ucode_feature_version",
        ucode_size_bytes = "ucode_size_bytes",
        ucode_offset_bytes = "ucode_offset_bytes",
        data_size_bytes = "data_size_bytes",
        data_offset_bytes = "data_offset_bytes",
        ucode_start_addr_lo = "ucode_start_addr_lo",
        ucode_start_addr_hi = "ucode_start_addr_hi",
    }),
);
