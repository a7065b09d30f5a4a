//! IMU microcode (gfx11+): `imu_firmware_header_v1_0`.
//!
//! Linux places the DRAM image directly after the IRAM image, both
//! counted from `ucode_array_offset_bytes`, and ignores the two
//! `*_offset_bytes` fields (follows the IMU cases of
//! `amdgpu_ucode_init_single_fw()`); the sections here do the same, and
//! the ignored fields are still bounds-checked.

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct imu_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ImuV1_0 {
    pub header: CommonFirmwareHeader,
    pub imu_iram_ucode_size_bytes: Le32,
    pub imu_iram_ucode_offset_bytes: Le32,
    pub imu_dram_ucode_size_bytes: Le32,
    pub imu_dram_ucode_offset_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<ImuV1_0>() == 48);

pub(crate) fn parse<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<&'a ImuV1_0>, Error> {
    if c.header_version() != (1, 0) {
        return Ok(None);
    }
    let h: &ImuV1_0 = c.view("imu_firmware_header_v1_0")?;
    let base = c.array_offset();
    let iram = u64::from(h.imu_iram_ucode_size_bytes.get());
    let dram = u64::from(h.imu_dram_ucode_size_bytes.get());
    out.push(c.section("iram", "imu_iram_ucode_size_bytes", base, iram)?)?;
    out.push_nonempty(c.section(
        "dram",
        "imu_iram_ucode_size_bytes+imu_dram_ucode_size_bytes",
        base + iram,
        dram,
    )?)?;
    Ok(Some(h))
}

pub const FACTS: &[Fact] = &layout_facts!("amdgpu_ucode.h", ImuV1_0 = "struct imu_firmware_header_v1_0" {
    header = "header",
    imu_iram_ucode_size_bytes = "imu_iram_ucode_size_bytes",
    imu_iram_ucode_offset_bytes = "imu_iram_ucode_offset_bytes",
    imu_dram_ucode_size_bytes = "imu_dram_ucode_size_bytes",
    imu_dram_ucode_offset_bytes = "imu_dram_ucode_offset_bytes",
});
