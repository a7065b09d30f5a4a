//! SMC/SMU microcode: `smc_firmware_header_v1_0`/`v2_0`/`v2_1`.
//!
//! v2.x blobs append "soft" PowerPlay tables the driver may use instead of
//! the VBIOS one: v2.0 one table, v2.1 a list of `smc_soft_pptable_entry`.
//! All their offsets count from the start of the file (follows
//! `smu_v11_0_set_pptable_v2_1()`).

use super::{CommonFirmwareHeader, Container, Error, Le32, Sections};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct smc_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SmcV1_0 {
    pub header: CommonFirmwareHeader,
    pub ucode_start_addr: Le32,
}
const _: () = assert!(core::mem::size_of::<SmcV1_0>() == 36);

/// `struct smc_firmware_header_v2_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SmcV2_0 {
    pub v1_0: SmcV1_0,
    pub ppt_offset_bytes: Le32,
    pub ppt_size_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<SmcV2_0>() == 44);

/// `struct smc_soft_pptable_entry`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SmcSoftPptableEntry {
    pub id: Le32,
    pub ppt_offset_bytes: Le32,
    pub ppt_size_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<SmcSoftPptableEntry>() == 12);

/// `struct smc_firmware_header_v2_1`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SmcV2_1 {
    pub v1_0: SmcV1_0,
    pub pptable_count: Le32,
    pub pptable_entry_offset: Le32,
}
const _: () = assert!(core::mem::size_of::<SmcV2_1>() == 44);

/// A decoded SMC blob.
#[derive(Debug, Clone, Copy)]
pub enum Smc<'a> {
    V1_0(&'a SmcV1_0),
    V2_0(&'a SmcV2_0),
    V2_1 {
        header: &'a SmcV2_1,
        entries: &'a [SmcSoftPptableEntry],
    },
}

impl Smc<'_> {
    /// `ucode_start_addr`: where the SMC image is loaded in SMC SRAM
    /// (used by the SI..VI direct loaders).
    pub fn ucode_start_addr(&self) -> u32 {
        match self {
            Smc::V1_0(h) => h.ucode_start_addr.get(),
            Smc::V2_0(h) => h.v1_0.ucode_start_addr.get(),
            Smc::V2_1 { header, .. } => header.v1_0.ucode_start_addr.get(),
        }
    }
}

/// The section name of pptable entry `i` (its position in the v2.1 list).
pub fn pptable_section(i: usize) -> Option<&'static str> {
    PPT_NAMES.get(i).copied()
}

/// Section names for soft PowerPlay tables, by list position.
const PPT_NAMES: [&str; 16] = [
    "pptable0",
    "pptable1",
    "pptable2",
    "pptable3",
    "pptable4",
    "pptable5",
    "pptable6",
    "pptable7",
    "pptable8",
    "pptable9",
    "pptable10",
    "pptable11",
    "pptable12",
    "pptable13",
    "pptable14",
    "pptable15",
];

pub(crate) fn parse<'a>(c: &Container<'a>, out: &mut Sections) -> Result<Option<Smc<'a>>, Error> {
    match c.header_version() {
        (1, 0) => {
            let h: &SmcV1_0 = c.view("smc_firmware_header_v1_0")?;
            out.push(c.payload_section("ucode")?)?;
            Ok(Some(Smc::V1_0(h)))
        }
        (2, 0) => {
            let h: &SmcV2_0 = c.view("smc_firmware_header_v2_0")?;
            out.push(c.payload_section("ucode")?)?;
            out.push_nonempty(c.section(
                "pptable",
                "ppt_offset_bytes+ppt_size_bytes",
                h.ppt_offset_bytes.get().into(),
                h.ppt_size_bytes.get().into(),
            )?)?;
            Ok(Some(Smc::V2_0(h)))
        }
        (2, 1) => {
            let h: &SmcV2_1 = c.view("smc_firmware_header_v2_1")?;
            out.push(c.payload_section("ucode")?)?;
            let count = h.pptable_count.get();
            let limit = PPT_NAMES.len() as u64;
            if u64::from(count) > limit {
                return Err(Error::BadSize {
                    field: "pptable_count",
                    value: count.into(),
                    limit,
                });
            }
            let at = u64::from(h.pptable_entry_offset.get());
            let len = u64::from(count) * core::mem::size_of::<SmcSoftPptableEntry>() as u64;
            let list = c.section(
                "pptable_entries",
                "pptable_entry_offset+pptable_count*12",
                at,
                len,
            )?;
            let bytes = c.bytes_of(&list);
            let entries =
                <[SmcSoftPptableEntry]>::ref_from_bytes(bytes).map_err(|_| Error::BadSize {
                    field: "pptable_count",
                    value: count.into(),
                    limit,
                })?;
            for (e, name) in entries.iter().zip(PPT_NAMES) {
                out.push_nonempty(c.section(
                    name,
                    "smc_soft_pptable_entry.ppt_offset_bytes+ppt_size_bytes",
                    e.ppt_offset_bytes.get().into(),
                    e.ppt_size_bytes.get().into(),
                )?)?;
            }
            Ok(Some(Smc::V2_1 { header: h, entries }))
        }
        _ => Ok(None),
    }
}

const H: &str = "amdgpu_ucode.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, SmcV1_0 = "struct smc_firmware_header_v1_0" {
        header = "header",
        ucode_start_addr = "ucode_start_addr",
    }),
    layout_facts!(H, SmcV2_0 = "struct smc_firmware_header_v2_0" {
        v1_0 = "v1_0",
        ppt_offset_bytes = "ppt_offset_bytes",
        ppt_size_bytes = "ppt_size_bytes",
    }),
    layout_facts!(H, SmcSoftPptableEntry = "struct smc_soft_pptable_entry" {
        id = "id",
        ppt_offset_bytes = "ppt_offset_bytes",
        ppt_size_bytes = "ppt_size_bytes",
    }),
    layout_facts!(H, SmcV2_1 = "struct smc_firmware_header_v2_1" {
        v1_0 = "v1_0",
        pptable_count = "pptable_count",
        pptable_entry_offset = "pptable_entry_offset",
    }),
);
