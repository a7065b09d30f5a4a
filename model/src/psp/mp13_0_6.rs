//! What the model's PSP must see on MP0 13.0.6 (MI300, GC 9.4.3, SDMA
//! 4.4.2), written for the model from Linux 6.12 (`amdgpu_psp.c`,
//! `psp_v13_0.c`, `gfx_v9_4_3.c`, `sdma_v4_4_2.c`, `amdgpu_sdma.c`,
//! `amdgpu_rlc.c`, `aqua_vanjaram.c`), with blobs read by the model's own
//! reader ([`crate::ucode`]):
//!
//! - bootloader stages in `psp_hw_start()` order from the bundle's primary
//!   (or, for an old PMFW, auxiliary) descriptor set: KDB, SYS_DRV,
//!   SOC_DRV, INTF_DRV, DBG_DRV, RAS_DRV, SOS (the real bundle has no SPL,
//!   and `psp_v13_0_funcs` has no IPKEYMGR stage);
//! - no LOAD_TOC (`boot_time_tmr` kept, `autoload_supported` cleared by
//!   `psp_early_init()`, so `psp_tmr_init()` does not run), an empty
//!   SETUP_TMR (`psp_tmr_load()` with no TMR buffer), no SMU image, no
//!   AUTOLOAD_RLC ([`super::PspExpect::direct_load`]);
//! - the GFX ucode ([`GFX`]) and the register list (`psp_rl_load()`).

use super::PspExpect;
use super::iface::{bl, fw as t};
use crate::error::ModelError;
use crate::files::FileError;
use crate::ucode::{self, Image, psp_fw};
use alloc::vec::Vec;

/// The SOS bundle, TA blob and GFX blobs, by file name.
pub const SOS: &str = "psp_13_0_6_sos.bin";
pub const TA: &str = "psp_13_0_6_ta.bin";
pub const MEC: &str = "gc_9_4_3_mec.bin";
pub const RLC: &str = "gc_9_4_3_rlc.bin";
pub const SDMA: &str = "sdma_4_4_2.bin";
/// The SMU blob: on MP1 13.0.6 its pptable entries carry the P2S tables
/// (`smu_v13_0_6_init_microcode()`).
pub const SMU: &str = "smu_13_0_6.bin";
/// `P2S_TABLE_ID_X` (`smu_v13_0_6_ppt.c`): the P2S table of a dGPU whose
/// PCI device id does not end in 5 (MI300X, MI308X).
pub const P2S_TABLE_ID_X: u32 = 0x5032_5358;
/// `struct smc_firmware_header_v2_1`: `pptable_count` and
/// `pptable_entry_offset` after the 36-byte v1.0 header; each
/// `struct smc_soft_pptable_entry` is `id`, `ppt_offset_bytes`,
/// `ppt_size_bytes` (offsets from the blob's start).
const PPTABLE_COUNT_AT: usize = 36;
const PPTABLE_ENTRY_OFFSET_AT: usize = 40;
const PPTABLE_ENTRY_BYTES: usize = 12;

/// 85.115.0: the first PMFW version with which Linux loads the bundle's
/// primary sOS set; below it the auxiliary ("4e") set
/// (`psp_v13_0_is_aux_sos_load_required()`: `pmfw_ver < 0x557300`).
pub const PRIMARY_SOS_MIN_PMFW: u32 = 0x0055_7300;

/// `psp_hw_start()`'s stages with `psp_v13_0_funcs` (component type,
/// bootloader command). The SPL stage carries the KDB
/// (`psp_v13_0_bootloader_load_spl()`) and runs only with an SPL.
pub const STAGES: [(u32, u32); 8] = [
    (psp_fw::KDB, bl::LOAD_KEY_DATABASE),
    (psp_fw::SPL, bl::LOAD_TOS_SPL_TABLE),
    (psp_fw::SYS_DRV, bl::LOAD_SYSDRV),
    (psp_fw::SOC_DRV, bl::LOAD_SOCDRV),
    (psp_fw::INTF_DRV, bl::LOAD_INTFDRV),
    (psp_fw::DBG_DRV, bl::LOAD_DBGDRV),
    (psp_fw::RAS_DRV, bl::LOAD_RASDRV),
    (psp_fw::SOS, bl::LOAD_SOSDRV),
];

/// The ucode `psp_load_non_psp_fw()` sends for GC 9.4.3 / SDMA 4.4.2, in
/// `AMDGPU_UCODE_ID` order, written by hand from the sources:
/// `SDMA0..3` (one per SDMA of an AID, `num_inst_per_aid` = 4 in
/// `aqua_vanjaram.c`; the same v1 image, `amdgpu_sdma_init_microcode(adev,
/// 0, true)`), `CP_MEC1` and `CP_MEC1_JT`
/// (`gfx_v9_4_3_init_cp_compute_microcode()`; the JT is not skipped
/// without autoload, `fw_load_skip_check()`), the three RLC restore lists
/// (RLC v2.1) and `RLC_G`.
pub const GFX: [(u32, &str, Image); 10] = [
    (t::SDMA0, SDMA, Image::Common),
    (t::SDMA1, SDMA, Image::Common),
    (t::SDMA2, SDMA, Image::Common),
    (t::SDMA3, SDMA, Image::Common),
    (t::CP_MEC, MEC, Image::MecV1Code),
    (t::CP_MEC_ME1, MEC, Image::MecV1Jt),
    (t::RLC_RESTORE_LIST_SRM_CNTL, RLC, Image::RlcListCntl),
    (t::RLC_RESTORE_LIST_GPM_MEM, RLC, Image::RlcListGpm),
    (t::RLC_RESTORE_LIST_SRM_MEM, RLC, Image::RlcListSrm),
    (t::RLC_G, RLC, Image::Common),
];

/// The RLC's and MEC's code: what an XCC's RLC and MEC need before they
/// run ([`crate::rlc_mec_v9_4_3`]).
pub const MEC_CODE: [u32; 2] = [t::CP_MEC, t::CP_MEC_ME1];

/// What the 13.0.6 PSP model must see, from the blobs `read` gives;
/// `aux` picks the bundle's auxiliary descriptor set
/// (`psp_v13_0_is_aux_sos_load_required()`).
pub fn expect(
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, FileError>,
    aux: bool,
) -> Result<PspExpect, ModelError> {
    fn named(file: &str) -> impl Fn(ucode::Error) -> ModelError + '_ {
        move |error| ModelError::Blob {
            name: file.into(),
            error,
        }
    }
    let sos = read(SOS)?;
    let mut stages = Vec::new();
    for (component, command) in STAGES {
        let Some(bytes) = ucode::sos_component_in(&sos, component, aux).map_err(named(SOS))? else {
            continue;
        };
        let bytes = if component == psp_fw::SPL {
            ucode::sos_component_in(&sos, psp_fw::KDB, aux)
                .map_err(named(SOS))?
                .ok_or(ModelError::BlobLacks {
                    name: SOS.into(),
                    what: "the KDB the SPL stage carries",
                })?
        } else {
            bytes
        };
        stages.push((command, bytes.to_vec()));
    }
    let reg_list = ucode::sos_component_in(&sos, psp_fw::RL, aux)
        .map_err(named(SOS))?
        .map(<[u8]>::to_vec);
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut gfx = Vec::new();
    for (fw_type, file, which) in GFX {
        if !files.iter().any(|(f, _)| *f == file) {
            files.push((file, read(file)?));
        }
        let blob = files
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, b)| b.as_slice())
            .unwrap_or(&[]);
        let bytes = ucode::image(blob, which).map_err(named(file))?;
        gfx.push((fw_type, bytes.to_vec()));
    }
    // `psp_load_p2s_table()` loads it first when the sOS is at least
    // 0x0036003C on a dGPU (both sets' sOS in Debian's bundle are:
    // 0x00360256 and 0x0036024E); the model takes it in any order, as
    // every other GFX image.
    if let Some(p2s) = p2s_table(&read(SMU)?, P2S_TABLE_ID_X) {
        gfx.push((t::P2S_TABLE, p2s.to_vec()));
    }
    Ok(PspExpect {
        stages,
        toc: Vec::new(),
        tmr_size: 0,
        smu: None,
        gfx,
        boot_time_tmr: true,
        direct_load: true,
        reg_list,
    })
}

/// The P2S table `id` of an SMU blob (`smu_v13_0_6_init_microcode()`'s
/// walk of the v2.1 header's pptable entries), if it has one.
pub fn p2s_table(blob: &[u8], id: u32) -> Option<&[u8]> {
    let u32_at = |at: usize| -> Option<u32> {
        let b = blob.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let count = u32_at(PPTABLE_COUNT_AT)? as usize;
    let first = u32_at(PPTABLE_ENTRY_OFFSET_AT)? as usize;
    (0..count).find_map(|i| {
        let at = first.checked_add(i.checked_mul(PPTABLE_ENTRY_BYTES)?)?;
        if u32_at(at)? != id {
            return None;
        }
        let off = u32_at(at + 4)? as usize;
        let len = u32_at(at + 8)? as usize;
        blob.get(off..off.checked_add(len)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p2s_table_is_found_by_id_and_bounded() {
        // A v2.1 header with two entries (ids 1 and P2S_TABLE_ID_X), built
        // by hand: entry table at 0x30, the X table at 0x48, 4 bytes.
        let mut b = alloc::vec![0u8; 0x4C];
        b[36..40].copy_from_slice(&2u32.to_le_bytes());
        b[40..44].copy_from_slice(&0x30u32.to_le_bytes());
        b[0x30..0x34].copy_from_slice(&1u32.to_le_bytes());
        b[0x3C..0x40].copy_from_slice(&P2S_TABLE_ID_X.to_le_bytes());
        b[0x40..0x44].copy_from_slice(&0x48u32.to_le_bytes());
        b[0x44..0x48].copy_from_slice(&4u32.to_le_bytes());
        b[0x48..0x4C].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(p2s_table(&b, P2S_TABLE_ID_X), Some(&[1u8, 2, 3, 4][..]));
        assert_eq!(p2s_table(&b, 7), None);
        // An entry pointing past the blob is not a table.
        b[0x44..0x48].copy_from_slice(&5u32.to_le_bytes());
        assert_eq!(p2s_table(&b, P2S_TABLE_ID_X), None);
    }
}
