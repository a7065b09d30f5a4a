//! Display microcontroller firmware: DMCU (`dmcu_firmware_header_v1_0`)
//! and DMCUB (`dmcub_firmware_header_v1_0`).
//!
//! DMCU carries its interrupt vectors at the end of the payload
//! (`intv_offset_bytes` from the payload start); DMCUB an instruction/
//! constant region followed by initialised BSS/data (follows the DMCU
//! cases of `amdgpu_ucode_init_single_fw()` and `dm_dmub_hw_init()`).

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct dmcu_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct DmcuV1_0 {
    pub header: CommonFirmwareHeader,
    pub intv_offset_bytes: Le32,
    pub intv_size_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<DmcuV1_0>() == 40);

/// `struct dmcub_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct DmcubV1_0 {
    pub header: CommonFirmwareHeader,
    pub inst_const_bytes: Le32,
    pub bss_data_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<DmcubV1_0>() == 40);

/// A decoded display-controller blob.
#[derive(Debug, Clone, Copy)]
pub enum Display<'a> {
    Dmcu(&'a DmcuV1_0),
    Dmcub(&'a DmcubV1_0),
}

pub(crate) fn parse_dmcu<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<Display<'a>>, Error> {
    if c.header_version() != (1, 0) {
        return Ok(None);
    }
    let h: &DmcuV1_0 = c.view("dmcu_firmware_header_v1_0")?;
    let total = u64::from(h.header.ucode_size_bytes.get());
    let intv = u64::from(h.intv_size_bytes.get());
    let eram = total.checked_sub(intv).ok_or(Error::BadSize {
        field: "intv_size_bytes",
        value: intv,
        limit: total,
    })?;
    let base = c.array_offset();
    out.push(c.section("eram", "ucode_size_bytes-intv_size_bytes", base, eram)?)?;
    out.push_nonempty(c.section(
        "intv",
        "intv_offset_bytes+intv_size_bytes",
        base + u64::from(h.intv_offset_bytes.get()),
        intv,
    )?)?;
    Ok(Some(Display::Dmcu(h)))
}

pub(crate) fn parse_dmcub<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<Display<'a>>, Error> {
    if c.header_version() != (1, 0) {
        return Ok(None);
    }
    let h: &DmcubV1_0 = c.view("dmcub_firmware_header_v1_0")?;
    let base = c.array_offset();
    let inst = u64::from(h.inst_const_bytes.get());
    out.push(c.section("inst_const", "inst_const_bytes", base, inst)?)?;
    out.push_nonempty(c.section(
        "bss_data",
        "inst_const_bytes+bss_data_bytes",
        base + inst,
        h.bss_data_bytes.get().into(),
    )?)?;
    Ok(Some(Display::Dmcub(h)))
}

const H: &str = "amdgpu_ucode.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, DmcuV1_0 = "struct dmcu_firmware_header_v1_0" {
        header = "header",
        intv_offset_bytes = "intv_offset_bytes",
        intv_size_bytes = "intv_size_bytes",
    }),
    layout_facts!(H, DmcubV1_0 = "struct dmcub_firmware_header_v1_0" {
        header = "header",
        inst_const_bytes = "inst_const_bytes",
        bss_data_bytes = "bss_data_bytes",
    }),
);
