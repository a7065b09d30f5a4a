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
use crate::ucode::{self, Image, psp_fw};
use alloc::vec::Vec;
use barebell_firmware_if::source::FirmwareError;

/// The SOS bundle, TA blob and GFX blobs, by file name.
pub const SOS: &str = "psp_13_0_6_sos.bin";
pub const TA: &str = "psp_13_0_6_ta.bin";
pub const MEC: &str = "gc_9_4_3_mec.bin";
pub const RLC: &str = "gc_9_4_3_rlc.bin";
pub const SDMA: &str = "sdma_4_4_2.bin";

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
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, FirmwareError>,
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
                .ok_or(FirmwareError::Lacks {
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
