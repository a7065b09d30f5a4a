//! GPU configuration tables (`*_gpu_info.bin`, gfx9 and early gfx10):
//! `gpu_info_firmware_header_v1_0` followed by a `gpu_info_firmware_v1_x`
//! payload that tells the driver shader-engine counts before IP discovery
//! existed (follows `amdgpu_device_parse_gpu_info_fw()`).

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, LittleEndian, U16};

/// `struct gpu_info_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GpuInfoHeaderV1_0 {
    pub header: CommonFirmwareHeader,
    /// Version of the payload layout.
    pub version_major: U16<LittleEndian>,
    pub version_minor: U16<LittleEndian>,
}
const _: () = assert!(core::mem::size_of::<GpuInfoHeaderV1_0>() == 36);

/// `struct gpu_info_firmware_v1_0`: the payload's first 15 dwords, which
/// every payload version begins with.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GpuInfoV1_0 {
    pub gc_num_se: Le32,
    pub gc_num_cu_per_sh: Le32,
    pub gc_num_sh_per_se: Le32,
    pub gc_num_rb_per_se: Le32,
    pub gc_num_tccs: Le32,
    pub gc_num_gprs: Le32,
    pub gc_num_max_gs_thds: Le32,
    pub gc_gs_table_depth: Le32,
    pub gc_gsprim_buff_depth: Le32,
    pub gc_parameter_cache_depth: Le32,
    pub gc_double_offchip_lds_buffer: Le32,
    pub gc_wave_size: Le32,
    pub gc_max_waves_per_simd: Le32,
    pub gc_max_scratch_slots_per_cu: Le32,
    pub gc_lds_size: Le32,
}
const _: () = assert!(core::mem::size_of::<GpuInfoV1_0>() == 60);

/// A decoded gpu_info blob.
#[derive(Debug, Clone, Copy)]
pub struct GpuInfo<'a> {
    pub header: &'a GpuInfoHeaderV1_0,
    pub info: &'a GpuInfoV1_0,
}

pub(crate) fn parse<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<GpuInfo<'a>>, Error> {
    if c.header_version() != (1, 0) {
        return Ok(None);
    }
    let header: &GpuInfoHeaderV1_0 = c.view("gpu_info_firmware_header_v1_0")?;
    let payload = c.payload_section("gpu_info")?;
    let (info, _) =
        GpuInfoV1_0::ref_from_prefix(c.bytes_of(&payload)).map_err(|_| Error::BadSize {
            field: "ucode_size_bytes",
            value: payload.size as u64,
            limit: core::mem::size_of::<GpuInfoV1_0>() as u64,
        })?;
    out.push(payload)?;
    Ok(Some(GpuInfo { header, info }))
}

const H: &str = "amdgpu_ucode.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, GpuInfoHeaderV1_0 = "struct gpu_info_firmware_header_v1_0" {
        header = "header",
        version_major = "version_major",
        version_minor = "version_minor",
    }),
    layout_facts!(H, GpuInfoV1_0 = "struct gpu_info_firmware_v1_0" {
        gc_num_se = "gc_num_se",
        gc_num_cu_per_sh = "gc_num_cu_per_sh",
        gc_num_sh_per_se = "gc_num_sh_per_se",
        gc_num_rb_per_se = "gc_num_rb_per_se",
        gc_num_tccs = "gc_num_tccs",
        gc_num_gprs = "gc_num_gprs",
        gc_num_max_gs_thds = "gc_num_max_gs_thds",
        gc_gs_table_depth = "gc_gs_table_depth",
        gc_gsprim_buff_depth = "gc_gsprim_buff_depth",
        gc_parameter_cache_depth = "gc_parameter_cache_depth",
        gc_double_offchip_lds_buffer = "gc_double_offchip_lds_buffer",
        gc_wave_size = "gc_wave_size",
        gc_max_waves_per_simd = "gc_max_waves_per_simd",
        gc_max_scratch_slots_per_cu = "gc_max_scratch_slots_per_cu",
        gc_lds_size = "gc_lds_size",
    }),
);
