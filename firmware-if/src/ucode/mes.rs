//! MES microcode: `mes_firmware_header_v1_0`.
//!
//! One layout serves both MES pipes (the scheduler and the KIQ) and
//! gfx12's unified MES; which pipe a blob is for is decided by its file
//! name, exactly as `amdgpu_mes_init_microcode()` picks it (see
//! [`crate::kind`]). The instruction and data images each have a start
//! address the loader programs itself when it does not go through PSP.

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections, join64};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct mes_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct MesV1_0 {
    pub header: CommonFirmwareHeader,
    pub mes_ucode_version: Le32,
    pub mes_ucode_size_bytes: Le32,
    pub mes_ucode_offset_bytes: Le32,
    pub mes_ucode_data_version: Le32,
    pub mes_ucode_data_size_bytes: Le32,
    pub mes_ucode_data_offset_bytes: Le32,
    pub mes_uc_start_addr_lo: Le32,
    pub mes_uc_start_addr_hi: Le32,
    pub mes_data_start_addr_lo: Le32,
    pub mes_data_start_addr_hi: Le32,
}
const _: () = assert!(core::mem::size_of::<MesV1_0>() == 72);
const _: () = assert!(core::mem::offset_of!(MesV1_0, mes_uc_start_addr_lo) == 56);

/// A decoded MES blob.
#[derive(Debug, Clone, Copy)]
pub struct Mes<'a> {
    pub header: &'a MesV1_0,
}

impl Mes<'_> {
    /// Instruction start address as the header gives it (bytes).
    pub fn uc_start_addr(&self) -> u64 {
        join64(
            self.header.mes_uc_start_addr_lo,
            self.header.mes_uc_start_addr_hi,
        )
    }

    /// Data start address (bytes).
    pub fn data_start_addr(&self) -> u64 {
        join64(
            self.header.mes_data_start_addr_lo,
            self.header.mes_data_start_addr_hi,
        )
    }

    /// The value for `CP_MES_PRGRM_CNTR_START{,_HI}`: the start address in
    /// dwords (follows `mes_v11_0_load_microcode()`).
    pub fn pc_start(&self) -> u64 {
        self.uc_start_addr() >> 2
    }
}

pub(crate) fn parse<'a>(c: &Container<'a>, out: &mut Sections) -> Result<Option<Mes<'a>>, Error> {
    if c.header_version() != (1, 0) {
        return Ok(None);
    }
    let h: &MesV1_0 = c.view("mes_firmware_header_v1_0")?;
    out.push(c.section(
        "ucode",
        "mes_ucode_offset_bytes+mes_ucode_size_bytes",
        h.mes_ucode_offset_bytes.get().into(),
        h.mes_ucode_size_bytes.get().into(),
    )?)?;
    out.push_nonempty(c.section(
        "data",
        "mes_ucode_data_offset_bytes+mes_ucode_data_size_bytes",
        h.mes_ucode_data_offset_bytes.get().into(),
        h.mes_ucode_data_size_bytes.get().into(),
    )?)?;
    Ok(Some(Mes { header: h }))
}

pub const FACTS: &[Fact] = &layout_facts!("amdgpu_ucode.h", MesV1_0 = "struct mes_firmware_header_v1_0" {
    header = "header",
    mes_ucode_version = "mes_ucode_version",
    mes_ucode_size_bytes = "mes_ucode_size_bytes",
    mes_ucode_offset_bytes = "mes_ucode_offset_bytes",
    mes_ucode_data_version = "mes_ucode_data_version",
    mes_ucode_data_size_bytes = "mes_ucode_data_size_bytes",
    mes_ucode_data_offset_bytes = "mes_ucode_data_offset_bytes",
    mes_uc_start_addr_lo = "mes_uc_start_addr_lo",
    mes_uc_start_addr_hi = "mes_uc_start_addr_hi",
    mes_data_start_addr_lo = "mes_data_start_addr_lo",
    mes_data_start_addr_hi = "mes_data_start_addr_hi",
});
