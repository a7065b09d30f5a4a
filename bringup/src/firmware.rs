//! Which firmware files the discovered IP versions need, and where the
//! bring-up gets their bytes.
//!
//! Files are named as `amdgpu_ucode_request()`'s callers name them
//! (`psp_init_sos_microcode()`, `smu_v13_0_init_microcode()`,
//! `gfx_v11_0_init_microcode()`, `amdgpu_mes_init_microcode()`,
//! `amdgpu_sdma_init_microcode()`): the IP version with dots as
//! underscores, then the role.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use barebell_firmware_if::{Firmware, Kind, parse};

pub use barebell_firmware_if::source::{FirmwareError, FirmwareSource};

type V = (u8, u8, u8);

/// The files one part needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirmwareSet {
    pub sos: String,
    pub smu: String,
    /// GFX-side blobs (SDMA, PFP, ME, MEC, RLC, IMU, MES).
    pub gfx: Vec<String>,
    /// The MES blobs whose headers give the pipes' start addresses
    /// (scheduler, then KIQ if a separate blob).
    pub mes: Vec<String>,
    /// The TA blob (`psp_<mp0>_ta.bin`) the part's PSP step reads, if it
    /// reads one (MP0 13.0.6: `psp_init_ta_microcode()`).
    pub ta: Option<String>,
}

fn v(x: V) -> String {
    format!("{}_{}_{}", x.0, x.1, x.2)
}

impl FirmwareSet {
    /// The set for MP0 `mp0`, MP1 `mp1`, GC `gc` and SDMA0 `sdma`, or
    /// `None` for a GC generation barebell does not bring up.
    pub fn for_versions(mp0: V, mp1: V, gc: V, sdma: Option<V>) -> Option<FirmwareSet> {
        let g = v(gc);
        let sos = format!("psp_{}_sos.bin", v(mp0));
        let smu = format!("smu_{}.bin", v(mp1));
        let common = ["pfp", "me", "mec", "rlc", "imu"].map(|r| format!("gc_{g}_{r}.bin"));
        if gc == (9, 4, 2) {
            return Some(Self::aldebaran());
        }
        match gc.0 {
            // gfx11: MES scheduler from `_mes_2` (the firmware
            // `amdgpu_mes_init_microcode()` asks for first) and the KIQ
            // pipe from `_mes1`; SDMA 6 has one blob with ctx/ctl sections.
            11 => {
                let mes = vec![format!("gc_{g}_mes_2.bin"), format!("gc_{g}_mes1.bin")];
                let mut gfx: Vec<String> = Vec::new();
                if let Some(s) = sdma {
                    gfx.push(format!("sdma_{}.bin", v(s)));
                }
                gfx.extend(common);
                gfx.extend(mes.iter().cloned());
                Some(FirmwareSet {
                    sos,
                    smu,
                    gfx,
                    mes,
                    ta: None,
                })
            }
            // gfx12 with uni-MES (`adev->enable_uni_mes`): one MES blob,
            // loaded for both pipes (`mes_v12_0_early_init()`); SDMA 7's
            // one image loads as SDMA_RS64 (`amdgpu_sdma_init_microcode()`).
            12 => {
                let mes = vec![format!("gc_{g}_uni_mes.bin")];
                let mut gfx: Vec<String> = Vec::new();
                if let Some(s) = sdma {
                    gfx.push(format!("sdma_{}.bin", v(s)));
                }
                gfx.extend(common);
                gfx.extend(mes.iter().cloned());
                Some(FirmwareSet {
                    sos,
                    smu,
                    gfx,
                    mes,
                    ta: None,
                })
            }
            // GC 9.4.3 (MI300): the SDMA 4.4.2 blob, the MEC and the RLC
            // (`gfx_v9_4_3_init_microcode()`: no PFP/ME/IMU, no MES), the
            // TA blob MP0 13.0.6 reads; the SMU's firmware is the IFWI's
            // (`psp_13_0_6` sends no SMU image).
            9 => {
                let mut gfx: Vec<String> = Vec::new();
                if let Some(s) = sdma {
                    gfx.push(format!("sdma_{}.bin", v(s)));
                }
                gfx.extend(["mec", "rlc"].map(|r| format!("gc_{g}_{r}.bin")));
                Some(FirmwareSet {
                    ta: Some(format!("psp_{}_ta.bin", v(mp0))),
                    sos,
                    smu,
                    gfx,
                    mes: Vec::new(),
                })
            }
            _ => None,
        }
    }
}

/// Parses `bytes` as the container `name`'s kind says.
impl FirmwareSet {
    /// Aldebaran (GC 9.4.2): Linux names its blobs by chip, not by IP
    /// version (`amdgpu_ucode_legacy_naming()` gives "aldebaran" for MP0
    /// 13.0.2 and GC 9.4.2, "aldebaran_smc" and "aldebaran_sdma" for MP1
    /// 13.0.2 and SDMA 4.4.0): the sOS bundle and TA
    /// (`psp_init_sos_microcode()`, `psp_init_ta_microcode()`), the SMC
    /// (`smu_v13_0_init_microcode()`), the SDMA, MEC and RLC images.
    pub fn aldebaran() -> FirmwareSet {
        FirmwareSet {
            sos: String::from("aldebaran_sos.bin"),
            smu: String::from("aldebaran_smc.bin"),
            gfx: [
                "aldebaran_sdma.bin",
                "aldebaran_mec.bin",
                "aldebaran_rlc.bin",
            ]
            .map(String::from)
            .to_vec(),
            mes: Vec::new(),
            ta: Some(String::from("aldebaran_ta.bin")),
        }
    }
}

pub fn parse_named<'b>(name: &str, bytes: &'b [u8]) -> Result<Firmware<'b>, FirmwareError> {
    parse(Kind::from_file_name(name), bytes).map_err(|error| FirmwareError::Malformed {
        name: String::from(name),
        error,
    })
}

/// Firmware files in a directory (`/lib/firmware/amdgpu`, where Debian's
/// firmware-amd-graphics puts them).
#[cfg(feature = "std")]
#[derive(Debug, Clone)]
pub struct FirmwareDir(pub std::path::PathBuf);

#[cfg(feature = "std")]
impl FirmwareDir {
    pub const SYSTEM: &'static str = "/lib/firmware/amdgpu";

    pub fn system() -> Self {
        FirmwareDir(Self::SYSTEM.into())
    }
}

#[cfg(feature = "std")]
impl FirmwareSource for FirmwareDir {
    fn load(&self, name: &str) -> Result<Vec<u8>, FirmwareError> {
        use alloc::string::ToString;
        std::fs::read(self.0.join(name)).map_err(|e| {
            let (name, place) = (String::from(name), self.0.display().to_string());
            match e.kind() {
                std::io::ErrorKind::NotFound => FirmwareError::NotFound { name, place },
                _ => FirmwareError::Unreadable {
                    name,
                    place,
                    detail: e.to_string(),
                },
            }
        })
    }
}
