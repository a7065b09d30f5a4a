//! What the PSP model of each part must see: the part's discovery table
//! and firmware files, the bootloader stages and GFX images Linux 6.12
//! sends from them, and the TMR size the part's PSP answers LOAD_TOC
//! with. Read from the blobs with the model's own container reader
//! ([`crate::ucode`]), never the runtime's.

use super::PspExpect;
use super::iface::{bl, fw as t};
use crate::discovery::{self, MI300X, MI308X, NAVI31, NAVI48, PartDesc};
use crate::error::ModelError;
use crate::files::FileError;
use crate::ucode::{self, Image, psp_fw};
use alloc::vec;
use alloc::vec::Vec;

/// Where VRAM starts in the MC map (a model value; the VBIOS sets it
/// on a card).
pub const FB_START: u64 = 0x0080_0000_0000;
/// `psp_hw_start()`'s bootloader stages: the SOS-bundle component each
/// carries (`enum psp_fw_type`) and the command that loads it (`enum
/// psp_bootloader_cmd`). A stage whose component the bundle lacks is
/// skipped (`is_psp_fw_valid()`).
pub const STAGES: [(u32, u32); 9] = [
    (psp_fw::KDB, bl::LOAD_KEY_DATABASE),
    (psp_fw::SPL, bl::LOAD_TOS_SPL_TABLE),
    (psp_fw::SYS_DRV, bl::LOAD_SYSDRV),
    (psp_fw::SOC_DRV, bl::LOAD_SOCDRV),
    (psp_fw::INTF_DRV, bl::LOAD_INTFDRV),
    (psp_fw::DBG_DRV, bl::LOAD_DBGDRV),
    (psp_fw::RAS_DRV, bl::LOAD_RASDRV),
    (psp_fw::IPKEYMGR_DRV, bl::LOAD_IPKEYMGRDRV),
    (psp_fw::SOS, bl::LOAD_SOSDRV),
];

/// What the model knows of an MP0 version's firmware loading, from
/// Linux 6.12: `psp_early_init()` and the `psp_v13_0_funcs` /
/// `psp_v14_0_funcs` tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mp0 {
    /// 14.0.2/14.0.3 keep `boot_time_tmr` (the firmware set the TMR up
    /// at boot: no SETUP_TMR); 13.0.0 clears it.
    pub boot_time_tmr: bool,
    /// `psp_v13_0_funcs` has no `bootloader_load_ipkeymgr_drv`, so an
    /// MP0 13.0.0 bootloader never sees that stage.
    pub ipkeymgr_stage: bool,
    /// The SPL stage (`PSP_BL__LOAD_TOS_SPL_TABLE`, run when the bundle
    /// has an SPL component) carries the bundle's KDB, not its SPL:
    /// `psp_v13_0_bootloader_load_spl()` passes `&psp->kdb`, and
    /// tinygrad's AM sends `spl_key` = the KDB below MP0 14 and the SPL
    /// from 14 on (`AM_PSP.init_hw`), which sOS took on a gfx1100;
    /// `psp_v14_0_bootloader_load_spl()` passes `&psp->spl`.
    pub spl_carries_kdb: bool,
}

impl Mp0 {
    pub fn for_version(v: (u8, u8, u8)) -> Option<Mp0> {
        match v {
            (13, 0, 0) => Some(Mp0 {
                boot_time_tmr: false,
                ipkeymgr_stage: false,
                spl_carries_kdb: true,
            }),
            (14, 0, 2) | (14, 0, 3) => Some(Mp0 {
                boot_time_tmr: true,
                ipkeymgr_stage: true,
                spl_carries_kdb: false,
            }),
            _ => None,
        }
    }
}

/// The TMR size a real Navi31 asks for: Linux prints the TMR it sized
/// from LOAD_TOC's answer in `psp_tmr_load()` ("reserve 0x%lx from 0x%llx
/// for PSP TMR", `amdgpu_bo_size(psp->tmr_bo)` after `psp_tmr_init()`
/// allocated `resp.tmr_size` bytes), and a public RX 7900 XTX log shows
/// "reserve 0x1300000 from 0x85fc000000 for PSP TMR"
/// (github.com/ROCm/legacy-rocm-build issue 2253); tinygrad's AM reserves
/// the same 0x1300000 as its maximum (`AM_PSP.init_sw`).
pub const NAVI31_TMR: u32 = 0x130_0000;
/// What the model's Navi48 answers: no public MP0 14.0.3 value exists
/// (the part keeps a boot-time TMR, so neither driver sends SETUP_TMR
/// and no log prints a size). A model value: Navi31's.
pub const NAVI48_TMR_MODEL_VALUE: u32 = NAVI31_TMR;
/// One part's firmware set: the SOS bundle, the SMU blob, and the GFX
/// images `(fw_type, file, image)` in `AMDGPU_UCODE_ID` order, written
/// out by hand from `amdgpu_ucode.h`, `psp_get_fw_type()` and
/// `amdgpu_ucode_init_single_fw()` so that it checks the runtime's own
/// table.
#[derive(Debug, Clone)]
pub struct PartFirmware {
    pub desc: PartDesc,
    /// Board VRAM size (RX 7900 XTX / RX 9070 XT).
    pub vram_mib: u32,
    pub sos: &'static str,
    /// The SMC blob; its image is the common one (`AMDGPU_UCODE_ID_SMC`).
    pub smu: &'static str,
    /// The TMR size the part's PSP answers LOAD_TOC with.
    pub tmr_size: u32,
    pub gfx: Vec<(u32, &'static str, Image)>,
    /// The PMFW version the SMU reports where the PMFW runs from power-on
    /// (MP1 13.0.6, started by the boot firmware, not the PSP); it picks
    /// the sOS set the PSP takes. `None`: the part's default (model
    /// value, [`crate::vgpu::gfx_v9_4_3::PMFW_VERSION`]), or a part whose
    /// PMFW the PSP loads.
    pub pmfw: Option<u32>,
}

impl PartFirmware {
    /// The MP0 version of the part's discovery table.
    pub fn mp0(&self) -> Option<Mp0> {
        self.desc
            .dies
            .iter()
            .flat_map(|d| d.iter())
            .find(|ip| ip.hw_id == discovery::MP0_HWID)
            .and_then(|ip| Mp0::for_version(ip.version))
    }
}

pub fn navi31() -> PartFirmware {
    let (pfp, me, mec) = ("gc_11_0_0_pfp.bin", "gc_11_0_0_me.bin", "gc_11_0_0_mec.bin");
    let (mes, kiq, imu) = (
        "gc_11_0_0_mes_2.bin",
        "gc_11_0_0_mes1.bin",
        "gc_11_0_0_imu.bin",
    );
    let (sdma, rlc) = ("sdma_6_0_0.bin", "gc_11_0_0_rlc.bin");
    PartFirmware {
        desc: NAVI31,
        vram_mib: 24 * 1024,
        sos: "psp_13_0_0_sos.bin",
        smu: "smu_13_0_0.bin",
        tmr_size: NAVI31_TMR,
        pmfw: None,
        gfx: vec![
            (t::SDMA_UCODE_TH0, sdma, Image::SdmaTh0),
            (t::SDMA_UCODE_TH1, sdma, Image::SdmaTh1),
            (t::RS64_PFP, pfp, Image::Rs64Ucode),
            (t::RS64_ME, me, Image::Rs64Ucode),
            (t::RS64_MEC, mec, Image::Rs64Ucode),
            (t::RS64_PFP_P0_STACK, pfp, Image::Rs64Data),
            (t::RS64_PFP_P1_STACK, pfp, Image::Rs64Data),
            (t::RS64_ME_P0_STACK, me, Image::Rs64Data),
            (t::RS64_ME_P1_STACK, me, Image::Rs64Data),
            (t::RS64_MEC_P0_STACK, mec, Image::Rs64Data),
            (t::RS64_MEC_P1_STACK, mec, Image::Rs64Data),
            (t::RS64_MEC_P2_STACK, mec, Image::Rs64Data),
            (t::RS64_MEC_P3_STACK, mec, Image::Rs64Data),
            (t::CP_MES, mes, Image::MesUcode),
            (t::MES_STACK, mes, Image::MesData),
            (t::CP_MES_KIQ, kiq, Image::MesUcode),
            (t::MES_KIQ_STACK, kiq, Image::MesData),
            (t::IMU_I, imu, Image::ImuI),
            (t::IMU_D, imu, Image::ImuD),
            (t::RLC_RESTORE_LIST_GPM_MEM, rlc, Image::RlcListGpm),
            (t::RLC_RESTORE_LIST_SRM_MEM, rlc, Image::RlcListSrm),
            (t::RLC_IRAM, rlc, Image::RlcIram),
            (t::RLC_DRAM_BOOT, rlc, Image::RlcDram),
            (t::RLC_P, rlc, Image::RlcP),
            (t::RLC_V, rlc, Image::RlcV),
            (t::RLC_G, rlc, Image::Common),
        ],
    }
}

/// The gfx12 set. SDMA 7's v3 header holds one image, loaded as
/// `AMDGPU_UCODE_ID_SDMA_RS64`, which `psp_get_fw_type()` sends as
/// `GFX_FW_TYPE_SDMA_UCODE_TH0` (`amdgpu_sdma_init_microcode()`). With
/// `enable_uni_mes`, `mes_v12_0_early_init()` runs
/// `amdgpu_mes_init_microcode()` for both pipes on the one unified blob:
/// pipe 0 as `CP_MES`/`CP_MES_DATA`, pipe 1 as `CP_MES1`/`CP_MES1_DATA`
/// (`GFX_FW_TYPE_CP_MES_KIQ`/`MES_KIQ_STACK`).
pub fn navi48() -> PartFirmware {
    let (pfp, me, mec) = ("gc_12_0_1_pfp.bin", "gc_12_0_1_me.bin", "gc_12_0_1_mec.bin");
    let (mes, imu, rlc) = (
        "gc_12_0_1_uni_mes.bin",
        "gc_12_0_1_imu.bin",
        "gc_12_0_1_rlc.bin",
    );
    let sdma = "sdma_7_0_1.bin";
    PartFirmware {
        desc: NAVI48,
        vram_mib: 16 * 1024,
        sos: "psp_14_0_3_sos.bin",
        smu: "smu_14_0_3.bin",
        tmr_size: NAVI48_TMR_MODEL_VALUE,
        pmfw: None,
        gfx: vec![
            (t::SDMA_UCODE_TH0, sdma, Image::SdmaRs64),
            (t::RS64_PFP, pfp, Image::Rs64Ucode),
            (t::RS64_ME, me, Image::Rs64Ucode),
            (t::RS64_MEC, mec, Image::Rs64Ucode),
            (t::RS64_PFP_P0_STACK, pfp, Image::Rs64Data),
            (t::RS64_PFP_P1_STACK, pfp, Image::Rs64Data),
            (t::RS64_ME_P0_STACK, me, Image::Rs64Data),
            (t::RS64_ME_P1_STACK, me, Image::Rs64Data),
            (t::RS64_MEC_P0_STACK, mec, Image::Rs64Data),
            (t::RS64_MEC_P1_STACK, mec, Image::Rs64Data),
            (t::RS64_MEC_P2_STACK, mec, Image::Rs64Data),
            (t::RS64_MEC_P3_STACK, mec, Image::Rs64Data),
            (t::CP_MES, mes, Image::MesUcode),
            (t::MES_STACK, mes, Image::MesData),
            (t::CP_MES_KIQ, mes, Image::MesUcode),
            (t::MES_KIQ_STACK, mes, Image::MesData),
            (t::IMU_I, imu, Image::ImuI),
            (t::IMU_D, imu, Image::ImuD),
            (t::RLC_RESTORE_LIST_GPM_MEM, rlc, Image::RlcListGpm),
            (t::RLC_RESTORE_LIST_SRM_MEM, rlc, Image::RlcListSrm),
            (t::RLC_IRAM, rlc, Image::RlcIram),
            (t::RLC_DRAM_BOOT, rlc, Image::RlcDram),
            (t::RLC_G, rlc, Image::Common),
        ],
    }
}

/// The firmware Linux 6.12 requests for a GC 9.4.3 part, `(file,
/// requesting function)`, all in Debian's firmware-amd-graphics under
/// /lib/firmware/amdgpu:
/// - `psp_v13_0_init_microcode()` for MP0 13.0.6: `psp_init_sos_microcode()`
///   and `psp_init_ta_microcode()`;
/// - `gfx_v9_4_3_init_rlc_microcode()` and
///   `gfx_v9_4_3_init_cp_compute_microcode()` (bare metal: `_mec.bin`; the
///   `_sjt_mec.bin` only under SR-IOV); the MEC blob carries both
///   `AMDGPU_UCODE_ID_CP_MEC1` and its jump table `CP_MEC1_JT`;
/// - `sdma_v4_4_2_init_microcode()` → `amdgpu_sdma_init_microcode(adev, 0,
///   true)`: one blob for every instance;
/// - `smu_v13_0_6_init_microcode()`: `smu_13_0_6.bin`.
///
/// Which images of them PSP loads (and in which order) is the `psp13`
/// work; [`PartFirmware::gfx`] stays empty for these parts until then.
pub const GC_9_4_3_FILES: [(&str, &str); 6] = [
    ("psp_13_0_6_sos.bin", "psp_init_sos_microcode"),
    ("psp_13_0_6_ta.bin", "psp_init_ta_microcode"),
    ("gc_9_4_3_rlc.bin", "gfx_v9_4_3_init_rlc_microcode"),
    ("gc_9_4_3_mec.bin", "gfx_v9_4_3_init_cp_compute_microcode"),
    ("sdma_4_4_2.bin", "sdma_v4_4_2_init_microcode"),
    ("smu_13_0_6.bin", "smu_v13_0_6_init_microcode"),
];

/// MI300X: 192 GiB of HBM3 (ROCm's gpu-arch-specs table). No TMR size
/// is public for MP0 13.0.6; the PSP model does not run this part yet, so
/// none is declared (0, never answered).
pub fn mi300x() -> PartFirmware {
    PartFirmware {
        desc: MI300X,
        vram_mib: 192 * 1024,
        sos: "psp_13_0_6_sos.bin",
        smu: "smu_13_0_6.bin",
        tmr_size: 0,
        pmfw: None,
        gfx: Vec::new(),
    }
}

/// MI210 (Aldebaran): 64 GiB of HBM2e (AMD's MI210 specification); the
/// sOS and SMC blobs Linux requests for MP0/MP1 13.0.2
/// (`psp_init_sos_microcode()` with `aldebaran`, `smu_v13_0_init_microcode()`).
/// Its TMR is the driver's (`boot_time_tmr` false for 13.0.2), sized
/// `PSP_TMR_SIZE()` = 8 MiB on Aldebaran (`amdgpu_psp.h`), the size the
/// model's PSP answers with. Which images PSP loads is the PSP 13.0.2
/// model's ([`crate::psp`]).
pub fn mi210() -> PartFirmware {
    PartFirmware {
        desc: discovery::MI210,
        vram_mib: 64 * 1024,
        sos: "aldebaran_sos.bin",
        smu: "aldebaran_smc.bin",
        tmr_size: ALDEBARAN_TMR,
        pmfw: None,
        gfx: Vec::new(),
    }
}

/// `PSP_TMR_SIZE(adev)` for `CHIP_ALDEBARAN` (`amdgpu_psp.h`: 0x800000).
pub const ALDEBARAN_TMR: u32 = 0x80_0000;

/// MI308X: 192 GiB (a **model value**: MI300X's).
pub fn mi308x() -> PartFirmware {
    PartFirmware {
        desc: MI308X,
        ..mi300x()
    }
}

/// What the PSP model must see for `part`, read from its blobs with the
/// model's own container reader ([`crate::ucode`]). `read` gives a
/// blob's bytes by file name.
pub fn expect(
    part: &PartFirmware,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, FileError>,
) -> Result<PspExpect, ModelError> {
    let mp0 = part.mp0().ok_or(ModelError::Unsupported {
        what: "PSP model behaviour of the part's MP0",
        version: (0, 0, 0),
    })?;
    fn named(file: &str) -> impl Fn(ucode::Error) -> ModelError + '_ {
        move |error| ModelError::Blob {
            name: file.into(),
            error,
        }
    }
    let lacks = |what: &'static str| ModelError::BlobLacks {
        name: part.sos.into(),
        what,
    };
    let sos = read(part.sos)?;
    let mut stages = Vec::new();
    for (component, command) in STAGES {
        if command == bl::LOAD_IPKEYMGRDRV && !mp0.ipkeymgr_stage {
            continue;
        }
        let Some(bytes) = ucode::sos_component(&sos, component).map_err(named(part.sos))? else {
            continue;
        };
        let bytes = if component == psp_fw::SPL && mp0.spl_carries_kdb {
            ucode::sos_component(&sos, psp_fw::KDB)
                .map_err(named(part.sos))?
                .ok_or_else(|| lacks("KDB component (MP0 13.0.0's SPL stage carries it)"))?
        } else {
            bytes
        };
        stages.push((command, bytes.to_vec()));
    }
    let toc = ucode::sos_component(&sos, psp_fw::TOC)
        .map_err(named(part.sos))?
        .ok_or_else(|| lacks("TOC component"))?
        .to_vec();
    let smu_blob = read(part.smu)?;
    let smu = ucode::image(&smu_blob, Image::Common)
        .map_err(named(part.smu))?
        .to_vec();
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut gfx = Vec::new();
    for (fw_type, file, which) in &part.gfx {
        if !files.iter().any(|(f, _)| f == file) {
            files.push((file, read(file)?));
        }
        let blob = files
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, b)| b.as_slice())
            .unwrap_or(&[]);
        let bytes = ucode::image(blob, *which).map_err(named(file))?;
        gfx.push((*fw_type, bytes.to_vec()));
    }
    Ok(PspExpect {
        stages,
        toc,
        tmr_size: part.tmr_size,
        smu: Some(smu),
        gfx,
        boot_time_tmr: mp0.boot_time_tmr,
        ..PspExpect::default()
    })
}
