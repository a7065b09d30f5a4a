//! The model's own reader of the firmware containers (`amdgpu_ucode.h`,
//! Linux 6.12), for what the PSP model must see loaded.
//!
//! Each image is cut out of its blob the way the PSP load path does it:
//! GFX-side images as `amdgpu_ucode_init_single_fw()` does under
//! `AMDGPU_FW_LOAD_PSP` (and, for the RLC's extra images,
//! `amdgpu_gfx_rlc_init_microcode_v2_1/2/3()`), SOS-bundle components as
//! `parse_sos_bin_descriptor()` does. This is written for the model and
//! shares nothing with barebell-firmware-if, so a parser slip on the
//! runtime side shows as a payload the model refuses. Every offset used
//! is a conformance fact ([`FACTS`]).
//!
//! Only the fields the model needs are read; headers of other versions
//! than the ones named are refused with a message.

use barebell_facts::Fact;

const H: &str = "amdgpu_ucode.h";

/// `struct common_firmware_header`.
mod common {
    pub const BYTES: usize = 32;
    pub const HEADER_VERSION_MAJOR: usize = 8;
    pub const HEADER_VERSION_MINOR: usize = 10;
    pub const UCODE_SIZE_BYTES: usize = 20;
    pub const UCODE_ARRAY_OFFSET_BYTES: usize = 24;
}

/// `struct gfx_firmware_header_v2_0` (RS64 PFP/ME/MEC).
mod gfx2 {
    pub const UCODE_SIZE_BYTES: usize = 36;
    pub const DATA_SIZE_BYTES: usize = 44;
    pub const DATA_OFFSET_BYTES: usize = 48;
}

/// `struct gfx_firmware_header_v1_0` (the gfx9 MEC): the jump table's
/// dword offset and size inside the payload.
mod gfx1 {
    pub const JT_OFFSET: usize = 36;
    pub const JT_SIZE: usize = 40;
}

/// `struct sdma_firmware_header_v2_0` (SDMA 6) and `_v3_0` (SDMA 7).
mod sdma {
    pub const V2_CTX_UCODE_SIZE_BYTES: usize = 36;
    pub const V2_CTL_UCODE_OFFSET: usize = 48;
    pub const V2_CTL_UCODE_SIZE_BYTES: usize = 52;
    pub const V3_UCODE_SIZE_BYTES: usize = 40;
}

/// `struct mes_firmware_header_v1_0`.
mod mes {
    pub const UCODE_SIZE_BYTES: usize = 36;
    pub const UCODE_OFFSET_BYTES: usize = 40;
    pub const DATA_SIZE_BYTES: usize = 48;
    pub const DATA_OFFSET_BYTES: usize = 52;
}

/// `struct imu_firmware_header_v1_0`.
mod imu {
    pub const IRAM_SIZE_BYTES: usize = 32;
    pub const DRAM_SIZE_BYTES: usize = 40;
}

/// `struct rlc_firmware_header_v2_1` .. `_v2_3`: (size, offset) field
/// pairs; offsets count from the start of the blob.
mod rlc {
    pub const LIST_CNTL: (usize, usize) = (116, 120);
    pub const LIST_GPM: (usize, usize) = (132, 136);
    pub const LIST_SRM: (usize, usize) = (148, 152);
    pub const IRAM: (usize, usize) = (156, 160);
    pub const DRAM: (usize, usize) = (164, 168);
    pub const RLCP: (usize, usize) = (180, 184);
    pub const RLCV: (usize, usize) = (196, 200);
}

/// `struct psp_firmware_header_v2_0` and `struct psp_fw_bin_desc`.
mod psp {
    pub const BIN_COUNT: usize = 32;
    pub const BINS: usize = 36;
    pub const DESC_BYTES: usize = 16;
    pub const DESC_FW_TYPE: usize = 0;
    pub const DESC_OFFSET_BYTES: usize = 8;
    pub const DESC_SIZE_BYTES: usize = 12;
    /// `struct psp_firmware_header_v2_1`: the index where the auxiliary
    /// set starts, and the descriptors after it.
    pub const AUX_INDEX: usize = 36;
    pub const BINS_V2_1: usize = 40;
}

/// `enum psp_fw_type`: the components of an SOS bundle.
pub mod psp_fw {
    pub const SOS: u32 = 1;
    pub const SYS_DRV: u32 = 2;
    pub const KDB: u32 = 3;
    pub const TOC: u32 = 4;
    pub const SPL: u32 = 5;
    pub const SOC_DRV: u32 = 7;
    pub const INTF_DRV: u32 = 8;
    pub const DBG_DRV: u32 = 9;
    pub const RAS_DRV: u32 = 10;
    pub const IPKEYMGR_DRV: u32 = 11;
    /// `PSP_FW_TYPE_PSP_RL`: the register list (`psp_rl_load()`).
    pub const RL: u32 = 6;
}

/// Why the reader refused a blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// Shorter than a firmware header.
    Short { len: usize },
    /// A header field at byte `at` lies past the blob's `len` bytes.
    FieldPastEnd { at: usize, len: usize },
    /// An image of `size` bytes at `offset` runs past the blob's end.
    SpanPastEnd { offset: u32, size: u32, len: usize },
    /// The header version is not one `what` is read from.
    Version {
        what: &'static str,
        want: (u16, u16),
        got: (u16, u16),
    },
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Error::Short { len } => write!(f, "{len} bytes: shorter than a firmware header"),
            Error::FieldPastEnd { at, len } => {
                write!(f, "header field at byte {at} past the end ({len} bytes)")
            }
            Error::SpanPastEnd { offset, size, len } => write!(
                f,
                "{size} bytes at {offset:#x} run past the blob ({len} bytes)"
            ),
            Error::Version { what, want, got } => write!(
                f,
                "{what} is read from header v{}.{}+, this blob has v{}.{}",
                want.0, want.1, got.0, got.1
            ),
        }
    }
}

/// Which image of a blob, by the ucode id it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Image {
    /// The default case: `ucode_size_bytes` at `ucode_array_offset_bytes`
    /// (SMC, RLC_G).
    Common,
    /// `CP_RS64_{PFP,ME,MEC}`: `ucode_size_bytes` of the v2.0 header at
    /// the common array offset.
    Rs64Ucode,
    /// `CP_RS64_*_Pn_STACK`: `data_size_bytes` at `data_offset_bytes`.
    Rs64Data,
    /// `SDMA_UCODE_TH0` (v2.0): `ctx_ucode_size_bytes` at the array offset.
    SdmaTh0,
    /// `SDMA_UCODE_TH1` (v2.0): `ctl_ucode_size_bytes` at `ctl_ucode_offset`.
    SdmaTh1,
    /// `SDMA_RS64` (v3.0): `ucode_size_bytes` at the array offset.
    SdmaRs64,
    /// `CP_MES` / `CP_MES1`: `mes_ucode_size_bytes` at `mes_ucode_offset_bytes`.
    MesUcode,
    /// `CP_MES_DATA` / `CP_MES1_DATA`.
    MesData,
    /// `IMU_I`: `imu_iram_ucode_size_bytes` at the array offset.
    ImuI,
    /// `IMU_D`: `imu_dram_ucode_size_bytes` right after the IRAM image.
    ImuD,
    /// `RLC_RESTORE_LIST_CNTL` (v2.1+).
    RlcListCntl,
    /// `RLC_RESTORE_LIST_GPM_MEM` (v2.1+).
    RlcListGpm,
    /// `RLC_RESTORE_LIST_SRM_MEM` (v2.1+).
    RlcListSrm,
    /// `RLC_IRAM` (v2.2+).
    RlcIram,
    /// `RLC_DRAM` (v2.2+).
    RlcDram,
    /// `RLC_P` (v2.3+).
    RlcP,
    /// `RLC_V` (v2.3+).
    RlcV,
    /// `CP_MEC1` of a v1.0 gfx header (gfx9): `ucode_size_bytes` less
    /// `jt_size * 4`, at the array offset.
    MecV1Code,
    /// `CP_MEC1_JT`: `jt_size * 4` bytes at the array offset plus
    /// `jt_offset * 4`.
    MecV1Jt,
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, Error> {
    match b.get(at..at.saturating_add(4)) {
        Some(&[x, y, z, w]) => Ok(u32::from_le_bytes([x, y, z, w])),
        _ => Err(Error::FieldPastEnd { at, len: b.len() }),
    }
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, Error> {
    match b.get(at..at.saturating_add(2)) {
        Some(&[x, y]) => Ok(u16::from_le_bytes([x, y])),
        _ => Err(Error::FieldPastEnd { at, len: b.len() }),
    }
}

fn span(b: &[u8], offset: u32, size: u32) -> Result<&[u8], Error> {
    let start = offset as usize;
    b.get(start..start.saturating_add(size as usize))
        .ok_or(Error::SpanPastEnd {
            offset,
            size,
            len: b.len(),
        })
}

fn version(b: &[u8]) -> Result<(u16, u16), Error> {
    if b.len() < common::BYTES {
        return Err(Error::Short { len: b.len() });
    }
    Ok((
        u16_at(b, common::HEADER_VERSION_MAJOR)?,
        u16_at(b, common::HEADER_VERSION_MINOR)?,
    ))
}

fn need(b: &[u8], major: u16, min_minor: u16, what: &'static str) -> Result<(), Error> {
    let got = version(b)?;
    if got.0 != major || got.1 < min_minor {
        return Err(Error::Version {
            what,
            want: (major, min_minor),
            got,
        });
    }
    Ok(())
}

/// The bytes of `which` in `blob`.
pub fn image(blob: &[u8], which: Image) -> Result<&[u8], Error> {
    let array = |b: &[u8]| u32_at(b, common::UCODE_ARRAY_OFFSET_BYTES);
    let pair = |(s, o): (usize, usize)| -> Result<&[u8], Error> {
        span(blob, u32_at(blob, o)?, u32_at(blob, s)?)
    };
    match which {
        Image::Common => {
            version(blob)?;
            span(blob, array(blob)?, u32_at(blob, common::UCODE_SIZE_BYTES)?)
        }
        Image::Rs64Ucode => {
            need(blob, 2, 0, "an RS64 CP image")?;
            span(blob, array(blob)?, u32_at(blob, gfx2::UCODE_SIZE_BYTES)?)
        }
        Image::Rs64Data => {
            need(blob, 2, 0, "an RS64 CP stack")?;
            pair((gfx2::DATA_SIZE_BYTES, gfx2::DATA_OFFSET_BYTES))
        }
        Image::SdmaTh0 => {
            need(blob, 2, 0, "SDMA_UCODE_TH0")?;
            span(
                blob,
                array(blob)?,
                u32_at(blob, sdma::V2_CTX_UCODE_SIZE_BYTES)?,
            )
        }
        Image::SdmaTh1 => {
            need(blob, 2, 0, "SDMA_UCODE_TH1")?;
            pair((sdma::V2_CTL_UCODE_SIZE_BYTES, sdma::V2_CTL_UCODE_OFFSET))
        }
        Image::SdmaRs64 => {
            need(blob, 3, 0, "SDMA_RS64")?;
            span(blob, array(blob)?, u32_at(blob, sdma::V3_UCODE_SIZE_BYTES)?)
        }
        Image::MesUcode => {
            need(blob, 1, 0, "a MES image")?;
            pair((mes::UCODE_SIZE_BYTES, mes::UCODE_OFFSET_BYTES))
        }
        Image::MesData => {
            need(blob, 1, 0, "a MES stack")?;
            pair((mes::DATA_SIZE_BYTES, mes::DATA_OFFSET_BYTES))
        }
        Image::ImuI => {
            need(blob, 1, 0, "IMU_I")?;
            span(blob, array(blob)?, u32_at(blob, imu::IRAM_SIZE_BYTES)?)
        }
        Image::ImuD => {
            need(blob, 1, 0, "IMU_D")?;
            let at = array(blob)?.saturating_add(u32_at(blob, imu::IRAM_SIZE_BYTES)?);
            span(blob, at, u32_at(blob, imu::DRAM_SIZE_BYTES)?)
        }
        Image::RlcListCntl => {
            need(blob, 2, 1, "an RLC restore list").and_then(|()| pair(rlc::LIST_CNTL))
        }
        Image::RlcListGpm => {
            need(blob, 2, 1, "an RLC restore list").and_then(|()| pair(rlc::LIST_GPM))
        }
        Image::RlcListSrm => {
            need(blob, 2, 1, "an RLC restore list").and_then(|()| pair(rlc::LIST_SRM))
        }
        Image::RlcIram => need(blob, 2, 2, "RLC_IRAM").and_then(|()| pair(rlc::IRAM)),
        Image::RlcDram => need(blob, 2, 2, "RLC_DRAM").and_then(|()| pair(rlc::DRAM)),
        Image::RlcP => need(blob, 2, 3, "RLC_P").and_then(|()| pair(rlc::RLCP)),
        Image::RlcV => need(blob, 2, 3, "RLC_V").and_then(|()| pair(rlc::RLCV)),
        Image::MecV1Code => {
            need(blob, 1, 0, "CP_MEC1")?;
            let jt = u32_at(blob, gfx1::JT_SIZE)?.saturating_mul(4);
            let total = u32_at(blob, common::UCODE_SIZE_BYTES)?;
            span(blob, array(blob)?, total.saturating_sub(jt))
        }
        Image::MecV1Jt => {
            need(blob, 1, 0, "CP_MEC1_JT")?;
            let at = u32_at(blob, gfx1::JT_OFFSET)?.saturating_mul(4);
            let at = array(blob)?.saturating_add(at);
            span(blob, at, u32_at(blob, gfx1::JT_SIZE)?.saturating_mul(4))
        }
    }
}

/// The component of type `fw_type` ([`psp_fw`]) in an SOS bundle
/// (`psp_firmware_header_v2_0`), if the bundle has one: `size_bytes` at
/// the common array offset plus the descriptor's `offset_bytes`.
pub fn sos_component(blob: &[u8], fw_type: u32) -> Result<Option<&[u8]>, Error> {
    let got = version(blob)?;
    if got.1 != 0 {
        // v2.1 adds `psp_aux_fw_bin_index` before the descriptors.
        return Err(Error::Version {
            what: "an SOS bundle (v2.1 is read by sos_component_in)",
            want: (2, 0),
            got,
        });
    }
    sos_component_in(blob, fw_type, false)
}

/// As [`sos_component`], for a v2.0 or v2.1 bundle; in v2.1, from the
/// primary descriptors (`0 .. count - aux_index`) or, with `aux`, the
/// auxiliary ones (`aux_index .. count`), as `psp_init_sos_microcode()`
/// splits them.
pub fn sos_component_in(blob: &[u8], fw_type: u32, aux: bool) -> Result<Option<&[u8]>, Error> {
    need(blob, 2, 0, "an SOS bundle")?;
    let minor = version(blob)?.1;
    let base = u32_at(blob, common::UCODE_ARRAY_OFFSET_BYTES)?;
    let count = u32_at(blob, psp::BIN_COUNT)? as usize;
    let (bins, range) = if minor >= 1 {
        let a = (u32_at(blob, psp::AUX_INDEX)? as usize).min(count);
        let r = if aux {
            a..count
        } else {
            0..count.saturating_sub(a)
        };
        (psp::BINS_V2_1, r)
    } else {
        (psp::BINS, 0..count)
    };
    for i in range {
        let d = bins + i * psp::DESC_BYTES;
        if u32_at(blob, d + psp::DESC_FW_TYPE)? == fw_type {
            let off = base.saturating_add(u32_at(blob, d + psp::DESC_OFFSET_BYTES)?);
            return span(blob, off, u32_at(blob, d + psp::DESC_SIZE_BYTES)?).map(Some);
        }
    }
    Ok(None)
}

const C: &str = "struct common_firmware_header";
const G2: &str = "struct gfx_firmware_header_v2_0";
const S2: &str = "struct sdma_firmware_header_v2_0";
const S3: &str = "struct sdma_firmware_header_v3_0";
const M1: &str = "struct mes_firmware_header_v1_0";
const I1: &str = "struct imu_firmware_header_v1_0";
const R21: &str = "struct rlc_firmware_header_v2_1";
const R22: &str = "struct rlc_firmware_header_v2_2";
const R23: &str = "struct rlc_firmware_header_v2_3";
const P2: &str = "struct psp_firmware_header_v2_0";
const PD: &str = "struct psp_fw_bin_desc";

const LAYOUT: [Fact; 45] = [
    Fact::offset(
        H,
        "struct gfx_firmware_header_v1_0",
        "jt_offset",
        gfx1::JT_OFFSET,
    ),
    Fact::offset(
        H,
        "struct gfx_firmware_header_v1_0",
        "jt_size",
        gfx1::JT_SIZE,
    ),
    Fact::offset(
        H,
        "struct psp_firmware_header_v2_1",
        "psp_aux_fw_bin_index",
        psp::AUX_INDEX,
    ),
    Fact::offset(
        H,
        "struct psp_firmware_header_v2_1",
        "psp_fw_bin",
        psp::BINS_V2_1,
    ),
    Fact::size(H, C, common::BYTES),
    Fact::offset(H, C, "header_version_major", common::HEADER_VERSION_MAJOR),
    Fact::offset(H, C, "header_version_minor", common::HEADER_VERSION_MINOR),
    Fact::offset(H, C, "ucode_size_bytes", common::UCODE_SIZE_BYTES),
    Fact::offset(
        H,
        C,
        "ucode_array_offset_bytes",
        common::UCODE_ARRAY_OFFSET_BYTES,
    ),
    Fact::offset(H, G2, "ucode_size_bytes", gfx2::UCODE_SIZE_BYTES),
    Fact::offset(H, G2, "data_size_bytes", gfx2::DATA_SIZE_BYTES),
    Fact::offset(H, G2, "data_offset_bytes", gfx2::DATA_OFFSET_BYTES),
    Fact::offset(H, S2, "ctx_ucode_size_bytes", sdma::V2_CTX_UCODE_SIZE_BYTES),
    Fact::offset(H, S2, "ctl_ucode_offset", sdma::V2_CTL_UCODE_OFFSET),
    Fact::offset(H, S2, "ctl_ucode_size_bytes", sdma::V2_CTL_UCODE_SIZE_BYTES),
    Fact::offset(H, S3, "ucode_size_bytes", sdma::V3_UCODE_SIZE_BYTES),
    Fact::offset(H, M1, "mes_ucode_size_bytes", mes::UCODE_SIZE_BYTES),
    Fact::offset(H, M1, "mes_ucode_offset_bytes", mes::UCODE_OFFSET_BYTES),
    Fact::offset(H, M1, "mes_ucode_data_size_bytes", mes::DATA_SIZE_BYTES),
    Fact::offset(H, M1, "mes_ucode_data_offset_bytes", mes::DATA_OFFSET_BYTES),
    Fact::offset(H, I1, "imu_iram_ucode_size_bytes", imu::IRAM_SIZE_BYTES),
    Fact::offset(H, I1, "imu_dram_ucode_size_bytes", imu::DRAM_SIZE_BYTES),
    Fact::offset(
        H,
        R21,
        "save_restore_list_cntl_size_bytes",
        rlc::LIST_CNTL.0,
    ),
    Fact::offset(
        H,
        R21,
        "save_restore_list_cntl_offset_bytes",
        rlc::LIST_CNTL.1,
    ),
    Fact::offset(H, R21, "save_restore_list_gpm_size_bytes", rlc::LIST_GPM.0),
    Fact::offset(
        H,
        R21,
        "save_restore_list_gpm_offset_bytes",
        rlc::LIST_GPM.1,
    ),
    Fact::offset(H, R21, "save_restore_list_srm_size_bytes", rlc::LIST_SRM.0),
    Fact::offset(
        H,
        R21,
        "save_restore_list_srm_offset_bytes",
        rlc::LIST_SRM.1,
    ),
    Fact::offset(H, R22, "rlc_iram_ucode_size_bytes", rlc::IRAM.0),
    Fact::offset(H, R22, "rlc_iram_ucode_offset_bytes", rlc::IRAM.1),
    Fact::offset(H, R22, "rlc_dram_ucode_size_bytes", rlc::DRAM.0),
    Fact::offset(H, R22, "rlc_dram_ucode_offset_bytes", rlc::DRAM.1),
    Fact::offset(H, R23, "rlcp_ucode_size_bytes", rlc::RLCP.0),
    Fact::offset(H, R23, "rlcp_ucode_offset_bytes", rlc::RLCP.1),
    Fact::offset(H, R23, "rlcv_ucode_size_bytes", rlc::RLCV.0),
    Fact::offset(H, R23, "rlcv_ucode_offset_bytes", rlc::RLCV.1),
    Fact::offset(H, P2, "psp_fw_bin_count", psp::BIN_COUNT),
    Fact::offset(H, P2, "psp_fw_bin", psp::BINS),
    Fact::size(H, PD, psp::DESC_BYTES),
    Fact::offset(H, PD, "fw_type", psp::DESC_FW_TYPE),
    Fact::offset(H, PD, "offset_bytes", psp::DESC_OFFSET_BYTES),
    Fact::offset(H, PD, "size_bytes", psp::DESC_SIZE_BYTES),
    // The RLC and SOS-bundle fields hang off the v2.0 headers' ends.
    Fact::size(H, "struct rlc_firmware_header_v2_0", 104),
    Fact::size(H, R21, 156),
    Fact::size(H, R22, 172),
];

const PSP_FW: [Fact; 11] = [
    Fact::constant(H, "PSP_FW_TYPE_PSP_RL", psp_fw::RL as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_SOS", psp_fw::SOS as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_SYS_DRV", psp_fw::SYS_DRV as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_KDB", psp_fw::KDB as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_TOC", psp_fw::TOC as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_SPL", psp_fw::SPL as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_SOC_DRV", psp_fw::SOC_DRV as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_INTF_DRV", psp_fw::INTF_DRV as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_DBG_DRV", psp_fw::DBG_DRV as u64),
    Fact::constant(H, "PSP_FW_TYPE_PSP_RAS_DRV", psp_fw::RAS_DRV as u64),
    Fact::constant(
        H,
        "PSP_FW_TYPE_PSP_IPKEYMGR_DRV",
        psp_fw::IPKEYMGR_DRV as u64,
    ),
];

/// The container facts the model's reader relies on.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(LAYOUT, PSP_FW);
