//! MP0 13.0.2 (Aldebaran: MI210, MI250): `psp_hw_start()` and
//! `psp_load_non_psp_fw()` as Linux 6.12 runs them on bare metal.
//!
//! What sets 13.0.2 apart, each from the source:
//! - **the auxiliary sOS pair**: its v1.3 bundle carries two system
//!   drivers and two sOS, and `psp_init_sos_base_fw()` takes
//!   `sys_drv_aux`/`sos_aux` on 13.0.2 unless the GPU is connected to a
//!   CPU ("Load alternate PSP SOS FW"); the KDB and register list are the
//!   bundle's only ones;
//! - **a driver TMR**: `psp_early_init()` clears `boot_time_tmr` (and
//!   `autoload_supported`), so `psp_tmr_init()` allocates
//!   `PSP_TMR_SIZE()`, 8 MiB on `CHIP_ALDEBARAN` (`amdgpu_psp.h`), with
//!   no LOAD_TOC (the bundle's TOC is empty), and `psp_tmr_load()` sends
//!   SETUP_TMR;
//! - **the SMU image before SETUP_TMR**: 13.0.2 has
//!   `pmfw_centralized_cstate_management` (`psp_check_pmfw_centralized_cstate_management()`),
//!   so `psp_hw_start()` calls `psp_load_smu_fw()` between the TMR's
//!   allocation and SETUP_TMR, and `fw_load_skip_check()` skips the SMC in
//!   the ucode loop;
//! - **no RLC autoload**: the ucode loop sends [`GFX_ORDER`] and the
//!   register list, and the RLC and MEC are started by the driver
//!   (`gfx_v9_0_rlc_resume()`, `gfx_v9_0_cp_resume()`).
//!
//! The bootloader stages are `psp_v13_0.c`'s, as on 13.0.6
//! ([`super::mp13_0_6::STAGES`]); 13.0.2 waits on `C2PMSG_35` ten times
//! (`psp_v13_0_wait_for_bootloader()`) and has no VMBX wait.

use super::mp13_0_6::{self, BlobRole, GfxBlobs, STAGES};
use super::{Component, Image, Loaded, Psp, PspError, TmrSource, fw_type};
use crate::bus::RegisterBus;
use crate::time::Clock;
use barebell_firmware_if::{Firmware, Kind};

/// `PSP_TMR_SIZE(adev)` for `CHIP_ALDEBARAN` (`amdgpu_psp.h`).
pub const ALDEBARAN_TMR_SIZE: u32 = 0x80_0000;

/// SDMA engines whose ucode `amdgpu_sdma_init_microcode(adev, 0, true)`
/// registers on Aldebaran (`adev->sdma.num_instances = 5`, one image
/// for all).
pub const SDMA_PSP_INSTANCES: usize = 5;

/// The ucode `psp_load_non_psp_fw()` sends for GC 9.4.2 / SDMA 4.4.0, in
/// `AMDGPU_UCODE_ID` order: `SDMA0..SDMA4`, `CP_MEC1` and its jump table
/// (no MEC2: `gfx_v9_0_load_mec2_fw_bin_support()` is false for 9.4.2),
/// the three RLC v2.1 restore lists, `RLC_G`. The SMC goes earlier
/// ([`load_firmware`]); VCN is not loaded by barebell (no VCN block).
pub const GFX_ORDER: [(u32, BlobRole, &str); 11] = [
    (fw_type::SDMA0, BlobRole::Sdma, "ucode"),
    (fw_type::SDMA1, BlobRole::Sdma, "ucode"),
    (fw_type::SDMA2, BlobRole::Sdma, "ucode"),
    (fw_type::SDMA3, BlobRole::Sdma, "ucode"),
    (fw_type::SDMA4, BlobRole::Sdma, "ucode"),
    (fw_type::CP_MEC, BlobRole::Mec, "ucode"),
    (fw_type::CP_MEC_ME1, BlobRole::Mec, "jt"),
    (
        fw_type::RLC_RESTORE_LIST_SRM_CNTL,
        BlobRole::Rlc,
        "save_restore_list_cntl",
    ),
    (
        fw_type::RLC_RESTORE_LIST_GPM_MEM,
        BlobRole::Rlc,
        "save_restore_list_gpm",
    ),
    (
        fw_type::RLC_RESTORE_LIST_SRM_MEM,
        BlobRole::Rlc,
        "save_restore_list_srm",
    ),
    (fw_type::RLC_G, BlobRole::Rlc, "ucode"),
];

/// Fills `out` with [`GFX_ORDER`]'s images ([`mp13_0_6::gfx_images_in`]).
pub fn gfx_images<'a>(blobs: GfxBlobs<'a, '_>, out: &mut [Image<'a>]) -> Result<usize, PspError> {
    mp13_0_6::gfx_images_in(&GFX_ORDER, blobs, out)
}

/// The name barebell-firmware-if gives a v1.3 bundle's component as
/// 13.0.2 loads it: the auxiliary system driver and sOS.
pub fn section(c: Component) -> &'static str {
    match c {
        Component::SysDrv => "sys_drv_aux",
        Component::Sos => "sos_aux",
        other => other.section(),
    }
}

/// What [`load_firmware`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Report {
    /// Bootloader stages sent.
    pub components: usize,
    /// The sOS answered alive before its stage (a partial re-init).
    pub sos_was_alive: bool,
    /// The TMR SETUP_TMR named.
    pub tmr: Option<super::Tmr>,
    /// LOAD_IP_FW commands for the SMU and GFX images.
    pub ip_fw_loads: usize,
    /// Whether the bundle's register list was loaded.
    pub rl_loaded: bool,
}

/// `psp_hw_start()` then `psp_load_non_psp_fw()` for 13.0.2: the
/// bootloader stages, the ring, the TMR from `tmr`, the SMU image, the
/// SETUP_TMR, the GFX images and the register list.
pub fn load_firmware<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    psp: &mut Psp<'_, B, C>,
    sos: &Firmware<'_>,
    smu: &[u8],
    gfx: &[Image<'_>],
    tmr: &mut dyn TmrSource,
) -> Result<Report, PspError> {
    if sos.kind != Kind::PspSos || sos.section(section(Component::Sos)).is_none() {
        return Err(PspError::Missing {
            what: "the auxiliary sOS (sos_aux) MP0 13.0.2 loads",
            blob: "the SOS bundle",
        });
    }
    let mut report = Report::default();
    for c in STAGES {
        let Some(s) = sos.section(section(c)) else {
            continue;
        };
        // psp_v13_0_bootloader_load_spl() sends the KDB (no SPL in the
        // Aldebaran bundle, so the stage does not run there).
        let bytes = if c == Component::Spl {
            let kdb = sos
                .section(Component::Kdb.section())
                .ok_or(PspError::Missing {
                    what: "the KDB the SPL stage carries",
                    blob: "the SOS bundle",
                })?;
            sos.bytes(kdb)
        } else {
            sos.bytes(s)
        };
        match psp.bootloader_load(c, bytes)? {
            Loaded::Loaded => report.components += 1,
            Loaded::SosAlreadyAlive => report.sos_was_alive = true,
        }
    }
    psp.ring_create()?;
    // psp_tmr_init(): PSP_TMR_SIZE, no TOC to ask.
    let t = tmr.tmr(ALDEBARAN_TMR_SIZE)?;
    report.tmr = Some(t);
    // pmfw_centralized_cstate_management: psp_load_smu_fw() here.
    psp.load_ip_fw(fw_type::SMU, smu)?;
    report.ip_fw_loads += 1;
    psp.setup_tmr(t.mc_addr, ALDEBARAN_TMR_SIZE, t.phys_addr)?;
    for img in gfx {
        psp.load_ip_fw(img.fw_type, img.bytes)?;
        report.ip_fw_loads += 1;
    }
    // psp_load_fw() → psp_rl_load() after the ucode loop.
    if let Some(s) = sos.section("rl") {
        psp.load_ip_fw(fw_type::REG_LIST, sos.bytes(s))?;
        report.rl_loaded = true;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ucode_order_has_five_sdma_and_no_mec2() {
        let sdma: usize = GFX_ORDER
            .iter()
            .filter(|(_, r, _)| *r == BlobRole::Sdma)
            .count();
        assert_eq!(sdma, SDMA_PSP_INSTANCES);
        assert!(!GFX_ORDER.iter().any(|(t, _, _)| *t == fw_type::CP_MEC_ME2));
        assert_eq!(GFX_ORDER.last().map(|g| g.0), Some(fw_type::RLC_G));
    }

    #[test]
    fn the_aux_pair_is_what_13_0_2_loads() {
        assert_eq!(section(Component::Sos), "sos_aux");
        assert_eq!(section(Component::SysDrv), "sys_drv_aux");
        assert_eq!(section(Component::Kdb), "kdb");
    }
}
