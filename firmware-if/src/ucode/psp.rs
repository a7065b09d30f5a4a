//! PSP firmware: the SOS bundle, the TOC, ASD and the trusted applications.
//!
//! The SOS bundle comes in two families. v1.x has fixed legacy
//! descriptors (`psp_fw_legacy_bin_desc`), with the system driver
//! implied as the bytes before SOS. v2.x has a counted list of typed
//! descriptors (`psp_fw_bin_desc`) that follows the header; note that
//! `header_size_bytes` does not include that list. v2.1 adds an index
//! splitting the list into primary and auxiliary (alternate SOS) halves.
//! All descriptor offsets count from `ucode_array_offset_bytes` (follows
//! `psp_init_sos_microcode()` and `parse_ta_v1_microcode()`).

use super::{CommonFirmwareHeader, Container, Error, Le32, Section, Sections};
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct psp_fw_legacy_bin_desc`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct LegacyBinDesc {
    pub fw_version: Le32,
    pub offset_bytes: Le32,
    pub size_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<LegacyBinDesc>() == 12);

/// `struct psp_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PspV1_0 {
    pub header: CommonFirmwareHeader,
    pub sos: LegacyBinDesc,
}
const _: () = assert!(core::mem::size_of::<PspV1_0>() == 44);

/// `struct psp_firmware_header_v1_1`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PspV1_1 {
    pub v1_0: PspV1_0,
    pub toc: LegacyBinDesc,
    pub kdb: LegacyBinDesc,
}
const _: () = assert!(core::mem::size_of::<PspV1_1>() == 68);

/// `struct psp_firmware_header_v1_2`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PspV1_2 {
    pub v1_0: PspV1_0,
    pub res: LegacyBinDesc,
    pub kdb: LegacyBinDesc,
}
const _: () = assert!(core::mem::size_of::<PspV1_2>() == 68);

/// `struct psp_firmware_header_v1_3`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PspV1_3 {
    pub v1_1: PspV1_1,
    pub spl: LegacyBinDesc,
    pub rl: LegacyBinDesc,
    pub sys_drv_aux: LegacyBinDesc,
    pub sos_aux: LegacyBinDesc,
}
const _: () = assert!(core::mem::size_of::<PspV1_3>() == 116);

/// `struct psp_fw_bin_desc`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct BinDesc {
    pub fw_type: Le32,
    pub fw_version: Le32,
    pub offset_bytes: Le32,
    pub size_bytes: Le32,
}
const _: () = assert!(core::mem::size_of::<BinDesc>() == 16);

/// `struct psp_firmware_header_v2_0` without its flexible array.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PspV2_0 {
    pub header: CommonFirmwareHeader,
    pub psp_fw_bin_count: Le32,
}
const _: () = assert!(core::mem::size_of::<PspV2_0>() == 36);

/// `struct psp_firmware_header_v2_1` without its flexible array.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PspV2_1 {
    pub header: CommonFirmwareHeader,
    pub psp_fw_bin_count: Le32,
    pub psp_aux_fw_bin_index: Le32,
}
const _: () = assert!(core::mem::size_of::<PspV2_1>() == 40);

/// `struct ta_firmware_header_v1_0`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct TaV1_0 {
    pub header: CommonFirmwareHeader,
    pub xgmi: LegacyBinDesc,
    pub ras: LegacyBinDesc,
    pub hdcp: LegacyBinDesc,
    pub dtm: LegacyBinDesc,
    pub securedisplay: LegacyBinDesc,
}
const _: () = assert!(core::mem::size_of::<TaV1_0>() == 92);

/// `enum psp_fw_type`: what a v2.x SOS descriptor holds.
pub mod fw_type {
    pub const UNKNOWN: u32 = 0;
    pub const SOS: u32 = 1;
    pub const SYS_DRV: u32 = 2;
    pub const KDB: u32 = 3;
    pub const TOC: u32 = 4;
    pub const SPL: u32 = 5;
    pub const RL: u32 = 6;
    pub const SOC_DRV: u32 = 7;
    pub const INTF_DRV: u32 = 8;
    pub const DBG_DRV: u32 = 9;
    pub const RAS_DRV: u32 = 10;
    pub const IPKEYMGR_DRV: u32 = 11;
    pub const MAX_INDEX: u32 = 12;
}

/// `enum ta_fw_type`: what a v2.0 TA descriptor holds.
pub mod ta_type {
    pub const UNKNOWN: u32 = 0;
    pub const ASD: u32 = 1;
    pub const XGMI: u32 = 2;
    pub const RAS: u32 = 3;
    pub const HDCP: u32 = 4;
    pub const DTM: u32 = 5;
    pub const RAP: u32 = 6;
    pub const SECUREDISPLAY: u32 = 7;
    pub const MAX_INDEX: u32 = 8;
}

/// `UCODE_MAX_PSP_PACKAGING`: Linux rejects SOS bundles with this many
/// descriptors or more (`(0x100 - 32 - 4) / 16 * 2`).
pub const MAX_PSP_PACKAGING: u32 = 26;

fn sos_name(t: u32, aux: bool) -> &'static str {
    const MAIN: [&str; 12] = [
        "unknown",
        "sos",
        "sys_drv",
        "kdb",
        "toc",
        "spl",
        "rl",
        "soc_drv",
        "intf_drv",
        "dbg_drv",
        "ras_drv",
        "ipkeymgr_drv",
    ];
    const AUX: [&str; 12] = [
        "unknown_aux",
        "sos_aux",
        "sys_drv_aux",
        "kdb_aux",
        "toc_aux",
        "spl_aux",
        "rl_aux",
        "soc_drv_aux",
        "intf_drv_aux",
        "dbg_drv_aux",
        "ras_drv_aux",
        "ipkeymgr_drv_aux",
    ];
    let table = if aux { AUX } else { MAIN };
    usize::try_from(t)
        .ok()
        .and_then(|i| table.get(i))
        .copied()
        .unwrap_or(if aux { "unknown_aux" } else { "unknown" })
}

fn ta_name(t: u32) -> &'static str {
    const N: [&str; 8] = [
        "unknown",
        "asd",
        "xgmi",
        "ras",
        "hdcp",
        "dtm",
        "rap",
        "securedisplay",
    ];
    usize::try_from(t)
        .ok()
        .and_then(|i| N.get(i))
        .copied()
        .unwrap_or("unknown")
}

/// A decoded PSP-family blob.
#[derive(Debug, Clone, Copy)]
pub enum Psp<'a> {
    SosV1 {
        v1_0: &'a PspV1_0,
        minor: u16,
    },
    SosV2 {
        count: u32,
        /// v2.1 only: descriptors at or past this index are the auxiliary set.
        aux_index: Option<u32>,
        descs: &'a [BinDesc],
    },
    /// A TOC or ASD blob: just the common-header payload.
    Payload,
    TaV1(&'a TaV1_0),
    TaV2 {
        descs: &'a [BinDesc],
    },
}

fn rel(
    c: &Container<'_>,
    name: &'static str,
    field: &'static str,
    off: u64,
    size: Le32,
) -> Result<Section, Error> {
    c.section(name, field, c.array_offset() + off, size.get().into())
}

fn desc_list<'a>(
    c: &Container<'a>,
    at: u64,
    count: u32,
    field: &'static str,
) -> Result<&'a [BinDesc], Error> {
    if count >= MAX_PSP_PACKAGING {
        return Err(Error::BadSize {
            field,
            value: count.into(),
            limit: MAX_PSP_PACKAGING.into(),
        });
    }
    let len = u64::from(count) * core::mem::size_of::<BinDesc>() as u64;
    let s = c.section("descriptors", field, at, len)?;
    <[BinDesc]>::ref_from_bytes(c.bytes_of(&s)).map_err(|_| Error::BadSize {
        field,
        value: count.into(),
        limit: MAX_PSP_PACKAGING.into(),
    })
}

/// An SOS bundle (`*_sos.bin`).
pub(crate) fn parse_sos<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<Psp<'a>>, Error> {
    match c.header_version() {
        (1, minor @ 0..=3) => {
            let h: &PspV1_0 = c.view("psp_firmware_header_v1_0")?;
            // The system driver is everything before SOS.
            out.push_nonempty(rel(
                c,
                "sys_drv",
                "sos.offset_bytes",
                0,
                h.sos.offset_bytes,
            )?)?;
            out.push_nonempty(rel(
                c,
                "sos",
                "sos.offset_bytes+sos.size_bytes",
                h.sos.offset_bytes.get().into(),
                h.sos.size_bytes,
            )?)?;
            let legacy =
                |out: &mut Sections, name, field, d: &LegacyBinDesc| -> Result<(), Error> {
                    out.push_nonempty(rel(
                        c,
                        name,
                        field,
                        d.offset_bytes.get().into(),
                        d.size_bytes,
                    )?)
                };
            match minor {
                1 => {
                    let h: &PspV1_1 = c.view("psp_firmware_header_v1_1")?;
                    legacy(out, "toc", "toc.offset_bytes+toc.size_bytes", &h.toc)?;
                    legacy(out, "kdb", "kdb.offset_bytes+kdb.size_bytes", &h.kdb)?;
                }
                2 => {
                    let h: &PspV1_2 = c.view("psp_firmware_header_v1_2")?;
                    legacy(out, "kdb", "kdb.offset_bytes+kdb.size_bytes", &h.kdb)?;
                }
                3 => {
                    let h: &PspV1_3 = c.view("psp_firmware_header_v1_3")?;
                    legacy(out, "toc", "toc.offset_bytes+toc.size_bytes", &h.v1_1.toc)?;
                    legacy(out, "kdb", "kdb.offset_bytes+kdb.size_bytes", &h.v1_1.kdb)?;
                    legacy(out, "spl", "spl.offset_bytes+spl.size_bytes", &h.spl)?;
                    legacy(out, "rl", "rl.offset_bytes+rl.size_bytes", &h.rl)?;
                    legacy(
                        out,
                        "sys_drv_aux",
                        "sys_drv_aux.offset_bytes+size_bytes",
                        &h.sys_drv_aux,
                    )?;
                    legacy(
                        out,
                        "sos_aux",
                        "sos_aux.offset_bytes+size_bytes",
                        &h.sos_aux,
                    )?;
                }
                _ => {}
            }
            Ok(Some(Psp::SosV1 { v1_0: h, minor }))
        }
        (2, minor @ 0..=1) => {
            let (count, aux_index, at) = if minor == 0 {
                let h: &PspV2_0 = c.view("psp_firmware_header_v2_0")?;
                (
                    h.psp_fw_bin_count.get(),
                    None,
                    core::mem::size_of::<PspV2_0>() as u64,
                )
            } else {
                let h: &PspV2_1 = c.view("psp_firmware_header_v2_1")?;
                let aux = h.psp_aux_fw_bin_index.get();
                let count = h.psp_fw_bin_count.get();
                if aux > count {
                    return Err(Error::BadSize {
                        field: "psp_aux_fw_bin_index",
                        value: aux.into(),
                        limit: count.into(),
                    });
                }
                (count, Some(aux), core::mem::size_of::<PspV2_1>() as u64)
            };
            let descs = desc_list(c, at, count, "psp_fw_bin_count")?;
            for (i, d) in descs.iter().enumerate() {
                let is_aux = aux_index.is_some_and(|a| i as u64 >= u64::from(a));
                let name = sos_name(d.fw_type.get(), is_aux);
                out.push_nonempty(rel(
                    c,
                    name,
                    "psp_fw_bin.offset_bytes+size_bytes",
                    d.offset_bytes.get().into(),
                    d.size_bytes,
                )?)?;
            }
            Ok(Some(Psp::SosV2 {
                count,
                aux_index,
                descs,
            }))
        }
        _ => Ok(None),
    }
}

/// A TOC (`*_toc.bin`) or ASD (`*_asd.bin`) blob: Linux reads only the
/// common header of these (`psp_init_toc_microcode()`,
/// `psp_init_asd_microcode()`), whatever its minor version.
pub(crate) fn parse_payload<'a>(
    c: &Container<'a>,
    name: &'static str,
    out: &mut Sections,
) -> Result<Option<Psp<'a>>, Error> {
    if c.header_version().0 != 1 {
        return Ok(None);
    }
    out.push(c.payload_section(name)?)?;
    Ok(Some(Psp::Payload))
}

/// Trusted applications (`*_ta.bin`), following `parse_ta_v1_microcode()`
/// and `parse_ta_bin_descriptor()`.
pub(crate) fn parse_ta<'a>(
    c: &Container<'a>,
    out: &mut Sections,
) -> Result<Option<Psp<'a>>, Error> {
    match c.header_version() {
        (1, 0) => {
            let h: &TaV1_0 = c.view("ta_firmware_header_v1_0")?;
            // XGMI and HDCP start at the payload; RAS follows XGMI's start
            // and DTM/secure display follow HDCP's, both by their offsets.
            out.push_nonempty(rel(c, "xgmi", "xgmi.size_bytes", 0, h.xgmi.size_bytes)?)?;
            out.push_nonempty(rel(
                c,
                "ras",
                "ras.offset_bytes+ras.size_bytes",
                h.ras.offset_bytes.get().into(),
                h.ras.size_bytes,
            )?)?;
            out.push_nonempty(rel(c, "hdcp", "hdcp.size_bytes", 0, h.hdcp.size_bytes)?)?;
            out.push_nonempty(rel(
                c,
                "dtm",
                "dtm.offset_bytes+dtm.size_bytes",
                h.dtm.offset_bytes.get().into(),
                h.dtm.size_bytes,
            )?)?;
            out.push_nonempty(rel(
                c,
                "securedisplay",
                "securedisplay.offset_bytes+size_bytes",
                h.securedisplay.offset_bytes.get().into(),
                h.securedisplay.size_bytes,
            )?)?;
            Ok(Some(Psp::TaV1(h)))
        }
        (2, 0) => {
            let h: &PspV2_0 = c.view("ta_firmware_header_v2_0")?;
            let descs = desc_list(
                c,
                core::mem::size_of::<PspV2_0>() as u64,
                h.psp_fw_bin_count.get(),
                "ta_fw_bin_count",
            )?;
            for d in descs {
                out.push_nonempty(rel(
                    c,
                    ta_name(d.fw_type.get()),
                    "ta_fw_bin.offset_bytes+size_bytes",
                    d.offset_bytes.get().into(),
                    d.size_bytes,
                )?)?;
            }
            Ok(Some(Psp::TaV2 { descs }))
        }
        _ => Ok(None),
    }
}

const H: &str = "amdgpu_ucode.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, LegacyBinDesc = "struct psp_fw_legacy_bin_desc" {
        fw_version = "fw_version",
        offset_bytes = "offset_bytes",
        size_bytes = "size_bytes",
    }),
    layout_facts!(H, PspV1_0 = "struct psp_firmware_header_v1_0" { header = "header", sos = "sos" }),
    layout_facts!(H, PspV1_1 = "struct psp_firmware_header_v1_1" { v1_0 = "v1_0", toc = "toc", kdb = "kdb" }),
    layout_facts!(H, PspV1_2 = "struct psp_firmware_header_v1_2" { v1_0 = "v1_0", res = "res", kdb = "kdb" }),
    layout_facts!(H, PspV1_3 = "struct psp_firmware_header_v1_3" {
        v1_1 = "v1_1",
        spl = "spl",
        rl = "rl",
        sys_drv_aux = "sys_drv_aux",
        sos_aux = "sos_aux",
    }),
    layout_facts!(H, BinDesc = "struct psp_fw_bin_desc" {
        fw_type = "fw_type",
        fw_version = "fw_version",
        offset_bytes = "offset_bytes",
        size_bytes = "size_bytes",
    }),
    // The flexible arrays start right after the fixed part.
    layout_facts!(H, PspV2_0 = "struct psp_firmware_header_v2_0" { header = "header", psp_fw_bin_count = "psp_fw_bin_count" }),
    [Fact::offset(
        H,
        "struct psp_firmware_header_v2_0",
        "psp_fw_bin",
        core::mem::size_of::<PspV2_0>()
    )],
    layout_facts!(H, PspV2_1 = "struct psp_firmware_header_v2_1" {
        header = "header",
        psp_fw_bin_count = "psp_fw_bin_count",
        psp_aux_fw_bin_index = "psp_aux_fw_bin_index",
    }),
    [Fact::offset(
        H,
        "struct psp_firmware_header_v2_1",
        "psp_fw_bin",
        core::mem::size_of::<PspV2_1>()
    )],
    layout_facts!(H, PspV2_0 = "struct ta_firmware_header_v2_0" { header = "header", psp_fw_bin_count = "ta_fw_bin_count" }),
    [Fact::offset(
        H,
        "struct ta_firmware_header_v2_0",
        "ta_fw_bin",
        core::mem::size_of::<PspV2_0>()
    )],
    layout_facts!(H, TaV1_0 = "struct ta_firmware_header_v1_0" {
        header = "header",
        xgmi = "xgmi",
        ras = "ras",
        hdcp = "hdcp",
        dtm = "dtm",
        securedisplay = "securedisplay",
    }),
    [
        Fact::constant(H, "PSP_FW_TYPE_UNKOWN", fw_type::UNKNOWN as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_SOS", fw_type::SOS as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_SYS_DRV", fw_type::SYS_DRV as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_KDB", fw_type::KDB as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_TOC", fw_type::TOC as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_SPL", fw_type::SPL as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_RL", fw_type::RL as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_SOC_DRV", fw_type::SOC_DRV as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_INTF_DRV", fw_type::INTF_DRV as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_DBG_DRV", fw_type::DBG_DRV as u64),
        Fact::constant(H, "PSP_FW_TYPE_PSP_RAS_DRV", fw_type::RAS_DRV as u64),
        Fact::constant(
            H,
            "PSP_FW_TYPE_PSP_IPKEYMGR_DRV",
            fw_type::IPKEYMGR_DRV as u64
        ),
        Fact::constant(H, "PSP_FW_TYPE_MAX_INDEX", fw_type::MAX_INDEX as u64),
        Fact::constant(H, "TA_FW_TYPE_UNKOWN", ta_type::UNKNOWN as u64),
        Fact::constant(H, "TA_FW_TYPE_PSP_ASD", ta_type::ASD as u64),
        Fact::constant(H, "TA_FW_TYPE_PSP_XGMI", ta_type::XGMI as u64),
        Fact::constant(H, "TA_FW_TYPE_PSP_RAS", ta_type::RAS as u64),
        Fact::constant(H, "TA_FW_TYPE_PSP_HDCP", ta_type::HDCP as u64),
        Fact::constant(H, "TA_FW_TYPE_PSP_DTM", ta_type::DTM as u64),
        Fact::constant(H, "TA_FW_TYPE_PSP_RAP", ta_type::RAP as u64),
        Fact::constant(
            H,
            "TA_FW_TYPE_PSP_SECUREDISPLAY",
            ta_type::SECUREDISPLAY as u64
        ),
        Fact::constant(H, "TA_FW_TYPE_MAX_INDEX", ta_type::MAX_INDEX as u64),
        Fact::constant(H, "UCODE_MAX_PSP_PACKAGING", MAX_PSP_PACKAGING as u64),
    ],
);
