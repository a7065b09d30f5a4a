//! What the model's PSP must see on MP0 13.0.2 (Aldebaran: GC 9.4.2,
//! SDMA 4.4.0), written for the model from Linux 6.12 (`amdgpu_psp.c`,
//! `psp_v13_0.c`, `gfx_v9_0.c`, `amdgpu_sdma.c`, `amdgpu_rlc.c`), with the
//! v1.3 bundle read by the model's own reader ([`crate::ucode::sos_v1_3`]):
//!
//! - bootloader stages KDB, SYS_DRV, SOS from the bundle's auxiliary
//!   pair (`psp_init_sos_base_fw()` loads `sys_drv_aux`/`sos_aux` on
//!   13.0.2 unless connected to a CPU); the bundle has no SPL or TOC;
//! - no LOAD_TOC; the driver's TMR of `PSP_TMR_SIZE()` = 8 MiB
//!   (`psp_tmr_init()`, `boot_time_tmr` cleared by `psp_early_init()`);
//! - the SMU image before SETUP_TMR (`pmfw_centralized_cstate_management`);
//! - no AUTOLOAD_RLC ([`super::PspExpect::direct_load`]): the GFX ucode
//!   ([`GFX`]) and the register list, each in place when loaded.

use super::PspExpect;
use super::iface::{bl, fw as t};
use crate::error::ModelError;
use crate::files::FileError;
use crate::ucode::{self, Image};
use alloc::vec::Vec;

pub const SOS: &str = "aldebaran_sos.bin";
pub const SMC: &str = "aldebaran_smc.bin";
pub const MEC: &str = "aldebaran_mec.bin";
pub const RLC: &str = "aldebaran_rlc.bin";
pub const SDMA: &str = "aldebaran_sdma.bin";

/// `PSP_TMR_SIZE()` on `CHIP_ALDEBARAN` (`amdgpu_psp.h`).
pub const TMR_SIZE: u32 = crate::psp::firmware::ALDEBARAN_TMR;

/// The ucode `psp_load_non_psp_fw()` sends for GC 9.4.2 / SDMA 4.4.0, in
/// `AMDGPU_UCODE_ID` order: `SDMA0..4` (`adev->sdma.num_instances = 5`,
/// one image, `amdgpu_sdma_init_microcode(adev, 0, true)`), `CP_MEC1` and
/// its jump table (no MEC2 on 9.4.2: `gfx_v9_0_load_mec2_fw_bin_support()`),
/// the three RLC v2.1 restore lists, `RLC_G`. The SMC is loaded before
/// SETUP_TMR, not here (`fw_load_skip_check()`).
pub const GFX: [(u32, &str, Image); 11] = [
    (t::SDMA0, SDMA, Image::Common),
    (t::SDMA1, SDMA, Image::Common),
    (t::SDMA2, SDMA, Image::Common),
    (t::SDMA3, SDMA, Image::Common),
    (t::SDMA4, SDMA, Image::Common),
    (t::CP_MEC, MEC, Image::MecV1Code),
    (t::CP_MEC_ME1, MEC, Image::MecV1Jt),
    (t::RLC_RESTORE_LIST_SRM_CNTL, RLC, Image::RlcListCntl),
    (t::RLC_RESTORE_LIST_GPM_MEM, RLC, Image::RlcListGpm),
    (t::RLC_RESTORE_LIST_SRM_MEM, RLC, Image::RlcListSrm),
    (t::RLC_G, RLC, Image::Common),
];

/// What the 13.0.2 PSP model must see, from the blobs `read` gives.
pub fn expect(
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, FileError>,
) -> Result<PspExpect, ModelError> {
    fn named(file: &str) -> impl Fn(ucode::Error) -> ModelError + '_ {
        move |error| ModelError::Blob {
            name: file.into(),
            error,
        }
    }
    let sos = read(SOS)?;
    let b = ucode::sos_v1_3(&sos, true).map_err(named(SOS))?;
    let lacks = |what| ModelError::BlobLacks {
        name: SOS.into(),
        what,
    };
    let mut stages = Vec::new();
    if let Some(kdb) = b.kdb {
        stages.push((bl::LOAD_KEY_DATABASE, kdb.to_vec()));
    }
    let sys = b.sys_drv.ok_or(lacks("sys_drv_aux"))?;
    stages.push((bl::LOAD_SYSDRV, sys.to_vec()));
    let sos_aux = b.sos.ok_or(lacks("sos_aux"))?;
    stages.push((bl::LOAD_SOSDRV, sos_aux.to_vec()));
    let smc = read(SMC)?;
    let smu = ucode::image(&smc, Image::Common).map_err(named(SMC))?;
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
        tmr_size: TMR_SIZE,
        smu: Some(smu.to_vec()),
        gfx,
        boot_time_tmr: false,
        direct_load: true,
        reg_list: b.rl.map(<[u8]>::to_vec),
    })
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    fn read(name: &str) -> Result<Vec<u8>, FileError> {
        std::fs::read(std::format!("/lib/firmware/amdgpu/{name}")).map_err(|e| FileError {
            name: name.into(),
            detail: std::format!("{e}"),
        })
    }

    /// The model waits for the auxiliary pair: a driver that sends the
    /// bundle's primary system driver or sOS (what a reader without
    /// `psp_init_sos_base_fw()`'s 13.0.2 rule would) sends bytes the
    /// model's stages do not hold.
    #[test]
    fn the_stages_are_the_auxiliary_pair() {
        let e = expect(&mut read).unwrap();
        let sos = read(SOS).unwrap();
        let primary = ucode::sos_v1_3(&sos, false).unwrap();
        let aux = ucode::sos_v1_3(&sos, true).unwrap();
        let cmds: Vec<u32> = e.stages.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            cmds,
            [bl::LOAD_KEY_DATABASE, bl::LOAD_SYSDRV, bl::LOAD_SOSDRV]
        );
        assert_eq!(e.stages[1].1, aux.sys_drv.unwrap());
        assert_ne!(e.stages[1].1, primary.sys_drv.unwrap());
        assert_eq!(e.stages[2].1, aux.sos.unwrap());
        assert_ne!(e.stages[2].1, primary.sos.unwrap());
        assert!(e.toc.is_empty());
        assert_eq!(e.tmr_size, 0x80_0000);
        assert_eq!(e.gfx.len(), 11);
        assert!(e.reg_list.is_some());
    }
}
