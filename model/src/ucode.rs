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

/// `struct psp_firmware_header_v1_3` (Aldebaran's sOS bundle): legacy
/// descriptors (`struct psp_fw_legacy_bin_desc`: version, offset, size)
/// at these byte offsets.
mod psp_v1 {
    pub const DESC_BYTES: usize = 12;
    pub const DESC_OFFSET_BYTES: usize = 4;
    pub const DESC_SIZE_BYTES: usize = 8;
    /// `v1_0.sos`, `v1_1.toc`, `v1_1.kdb`, `spl`, `rl`, `sys_drv_aux`,
    /// `sos_aux`.
    pub const SOS: usize = 32;
    pub const TOC: usize = 44;
    pub const KDB: usize = 56;
    pub const SPL: usize = 68;
    pub const RL: usize = 80;
    pub const SYS_DRV_AUX: usize = 92;
    pub const SOS_AUX: usize = 104;
    pub const BYTES: usize = 116;
}

/// The components of a v1.3 sOS bundle as `psp_init_sos_microcode()`
/// takes them (`None` where the size is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SosV1<'a> {
    pub sys_drv: Option<&'a [u8]>,
    pub sos: Option<&'a [u8]>,
    pub toc: Option<&'a [u8]>,
    pub kdb: Option<&'a [u8]>,
    pub spl: Option<&'a [u8]>,
    pub rl: Option<&'a [u8]>,
}

/// A v1.3 bundle's components. With `aux` (MP0 13.0.2 not connected to
/// a CPU: `psp_init_sos_base_fw()` "Load alternate PSP SOS FW") the
/// system driver and sOS are `sys_drv_aux` and `sos_aux`; otherwise the
/// system driver is the array's first `sos.offset_bytes` bytes and the
/// sOS `sos`. The TOC, KDB, SPL and register list are at their offsets
/// from the ucode array's start (the v1.3 branch of
/// `psp_init_sos_microcode()`).
pub fn sos_v1_3(blob: &[u8], aux: bool) -> Result<SosV1<'_>, Error> {
    need(blob, 1, 3, "a v1.3 SOS bundle")?;
    if blob.len() < psp_v1::BYTES {
        return Err(Error::Short { len: blob.len() });
    }
    let base = u32_at(blob, common::UCODE_ARRAY_OFFSET_BYTES)?;
    let desc = |at: usize| -> Result<Option<&[u8]>, Error> {
        let off = u32_at(blob, at + psp_v1::DESC_OFFSET_BYTES)?;
        let size = u32_at(blob, at + psp_v1::DESC_SIZE_BYTES)?;
        if size == 0 {
            return Ok(None);
        }
        span(blob, base.saturating_add(off), size).map(Some)
    };
    let (sys_drv, sos) = if aux {
        (desc(psp_v1::SYS_DRV_AUX)?, desc(psp_v1::SOS_AUX)?)
    } else {
        let sys_size = u32_at(blob, psp_v1::SOS + psp_v1::DESC_OFFSET_BYTES)?;
        let sys = match sys_size {
            0 => None,
            n => Some(span(blob, base, n)?),
        };
        (sys, desc(psp_v1::SOS)?)
    };
    Ok(SosV1 {
        sys_drv,
        sos,
        toc: desc(psp_v1::TOC)?,
        kdb: desc(psp_v1::KDB)?,
        spl: desc(psp_v1::SPL)?,
        rl: desc(psp_v1::RL)?,
    })
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

/// `struct psp_firmware_header_v1_3` and its legacy descriptor.
pub const SOS_V1_LAYOUT: [Fact; 11] = [
    Fact::size(H, "struct psp_fw_legacy_bin_desc", psp_v1::DESC_BYTES),
    Fact::offset(
        H,
        "struct psp_fw_legacy_bin_desc",
        "offset_bytes",
        psp_v1::DESC_OFFSET_BYTES,
    ),
    Fact::offset(
        H,
        "struct psp_fw_legacy_bin_desc",
        "size_bytes",
        psp_v1::DESC_SIZE_BYTES,
    ),
    Fact::size(H, "struct psp_firmware_header_v1_3", psp_v1::BYTES),
    Fact::offset(
        H,
        "struct psp_firmware_header_v1_3",
        "v1_1.v1_0.sos",
        psp_v1::SOS,
    ),
    Fact::offset(
        H,
        "struct psp_firmware_header_v1_3",
        "v1_1.toc",
        psp_v1::TOC,
    ),
    Fact::offset(
        H,
        "struct psp_firmware_header_v1_3",
        "v1_1.kdb",
        psp_v1::KDB,
    ),
    Fact::offset(H, "struct psp_firmware_header_v1_3", "spl", psp_v1::SPL),
    Fact::offset(H, "struct psp_firmware_header_v1_3", "rl", psp_v1::RL),
    Fact::offset(
        H,
        "struct psp_firmware_header_v1_3",
        "sys_drv_aux",
        psp_v1::SYS_DRV_AUX,
    ),
    Fact::offset(
        H,
        "struct psp_firmware_header_v1_3",
        "sos_aux",
        psp_v1::SOS_AUX,
    ),
];

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
pub const FACTS: &[Fact] = barebell_facts::fact_table!(LAYOUT, PSP_FW, SOS_V1_LAYOUT);

#[cfg(all(test, feature = "std"))]
mod sos_v1_tests {
    use super::*;

    /// A v1.3 bundle built by hand: array at 0x100, sys 0x10 bytes, sOS
    /// 0x8 at 0x10, KDB 4 at 0x18, the aux pair at 0x20/0x30.
    fn bundle() -> std::vec::Vec<u8> {
        let mut b = std::vec![0u8; 0x140];
        b[8..10].copy_from_slice(&1u16.to_le_bytes());
        b[10..12].copy_from_slice(&3u16.to_le_bytes());
        b[24..28].copy_from_slice(&0x100u32.to_le_bytes());
        let mut put = |at: usize, off: u32, size: u32| {
            b[at + 4..at + 8].copy_from_slice(&off.to_le_bytes());
            b[at + 8..at + 12].copy_from_slice(&size.to_le_bytes());
        };
        put(psp_v1::SOS, 0x10, 0x8);
        put(psp_v1::KDB, 0x18, 0x4);
        put(psp_v1::SYS_DRV_AUX, 0x20, 0x10);
        put(psp_v1::SOS_AUX, 0x30, 0x8);
        for (i, v) in b[0x100..].iter_mut().enumerate() {
            *v = i as u8;
        }
        b
    }

    #[test]
    fn primary_and_aux_sets_are_where_psp_init_sos_microcode_finds_them() {
        let b = bundle();
        let p = sos_v1_3(&b, false).unwrap();
        assert_eq!(p.sys_drv.unwrap(), &b[0x100..0x110]);
        assert_eq!(p.sos.unwrap(), &b[0x110..0x118]);
        assert_eq!(p.kdb.unwrap(), &b[0x118..0x11C]);
        assert_eq!((p.toc, p.spl, p.rl), (None, None, None));
        let a = sos_v1_3(&b, true).unwrap();
        assert_eq!(a.sys_drv.unwrap(), &b[0x120..0x130]);
        assert_eq!(a.sos.unwrap(), &b[0x130..0x138]);
        assert_eq!(a.kdb, p.kdb);
    }

    #[test]
    fn a_component_past_the_end_is_refused() {
        let mut b = bundle();
        b[psp_v1::SOS_AUX + 8..psp_v1::SOS_AUX + 12].copy_from_slice(&0x1000u32.to_le_bytes());
        assert!(matches!(sos_v1_3(&b, true), Err(Error::SpanPastEnd { .. })));
        assert!(sos_v1_3(&b[..40], true).is_err());
    }

    #[test]
    fn aldebarans_bundle_has_both_sets() {
        let Ok(b) = std::fs::read("/lib/firmware/amdgpu/aldebaran_sos.bin") else {
            panic!("aldebaran_sos.bin (firmware-amd-graphics) is needed");
        };
        let a = sos_v1_3(&b, true).unwrap();
        let p = sos_v1_3(&b, false).unwrap();
        // `barebell fw info` (firmware-if's own reader) lists sys_drv 125072,
        // sos 83024, kdb 3632, rl 5568, sys_drv_aux 137360, sos_aux 91264.
        assert_eq!(p.sys_drv.map(<[u8]>::len), Some(125_072));
        assert_eq!(p.sos.map(<[u8]>::len), Some(83_024));
        assert_eq!(a.sys_drv.map(<[u8]>::len), Some(137_360));
        assert_eq!(a.sos.map(<[u8]>::len), Some(91_264));
        assert_eq!(a.kdb.map(<[u8]>::len), Some(3_632));
        assert_eq!(a.rl.map(<[u8]>::len), Some(5_568));
        assert_eq!((a.toc, a.spl), (None, None));
    }
}
