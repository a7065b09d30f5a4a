//! Memory-controller microcode (SI..VI): `mc_firmware_header_v1_0`.
//!
//! Besides the image it carries an "io debug" array of register/value
//! pairs that `gmc_v8_0_mc_load_microcode()` writes before loading; its
//! size is in bytes despite the header comment saying dwords.

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct mc_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct McV1_0 {
    pub header: CommonFirmwareHeader,
    pub io_debug_size_bytes: Le32,
    pub io_debug_array_offset_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<McV1_0>() == 40);

pub(crate) fn parse<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<&'a McV1_0>, Error> {
    if c.header_version() != (1, 0) {
        return Ok(None);
    }
    let h: &McV1_0 = c.view("mc_firmware_header_v1_0")?;
    out.push(c.payload_section("ucode")?)?;
    out.push_nonempty(c.section(
        "io_debug",
        "io_debug_array_offset_bytes+io_debug_size_bytes",
        h.io_debug_array_offset_bytes.get().into(),
        h.io_debug_size_bytes.get().into(),
    )?)?;
    Ok(Some(h))
}

pub const FACTS: &[Fact] = &layout_facts!("amdgpu_ucode.h", McV1_0 = "struct mc_firmware_header_v1_0" {
    header = "header",
    io_debug_size_bytes = "io_debug_size_bytes",
    io_debug_array_offset_bytes = "io_debug_array_offset_bytes",
});
