//! Which firmware files the discovered IP versions need, named as
//! `amdgpu_ucode_request()`'s callers name them (`psp_init_sos_microcode()`,
//! `smu_v13_0_init_microcode()`, `gfx_v11_0_init_microcode()`,
//! `amdgpu_mes_init_microcode()`, `amdgpu_sdma_init_microcode()`): the IP
//! version with dots as underscores, then the role. Each blob's kind comes
//! from firmware-if's file-name classification; the runtime's
//! `psp::gfx_images` picks the LOAD_IP_FW images out of them.

use barebell_firmware_if::{Firmware, Kind, parse};
use std::path::Path;

type V = (u8, u8, u8);

/// The files one part needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirmwareSet {
    pub sos: String,
    pub smu: String,
    /// GFX-side blobs in load order of their first use; MES scheduler
    /// first among the MES ones.
    pub gfx: Vec<String>,
    /// The MES blobs whose headers give the pipes' start addresses
    /// (scheduler, then KIQ if a separate blob).
    pub mes: Vec<String>,
}

fn v(x: V) -> String {
    format!("{}_{}_{}", x.0, x.1, x.2)
}

/// The set for MP0 `mp0`, MP1 `mp1`, GC `gc` and SDMA0 `sdma`, or the
/// version that has no set here.
pub fn for_versions(mp0: V, mp1: V, gc: V, sdma: Option<V>) -> Result<FirmwareSet, String> {
    let g = v(gc);
    let sos = format!("psp_{}_sos.bin", v(mp0));
    let smu = format!("smu_{}.bin", v(mp1));
    let common = ["pfp", "me", "mec", "rlc", "imu"].map(|r| format!("gc_{g}_{r}.bin"));
    match gc.0 {
        // gfx11: MES scheduler from `_mes_2` (the "new" MES firmware
        // `amdgpu_mes_init_microcode()` asks for first) and the KIQ pipe
        // from `_mes1`; SDMA 6 has one blob with ctx/ctl sections.
        11 => {
            let mes = vec![format!("gc_{g}_mes_2.bin"), format!("gc_{g}_mes1.bin")];
            let mut gfx: Vec<String> = Vec::new();
            if let Some(s) = sdma {
                gfx.push(format!("sdma_{}.bin", v(s)));
            }
            gfx.extend(common);
            gfx.extend(mes.iter().cloned());
            Ok(FirmwareSet { sos, smu, gfx, mes })
        }
        // gfx12 with uni-MES (`adev->enable_uni_mes`): one MES blob. SDMA 7
        // loads as SDMA_RS64, which barebell does not map, so it is left
        // out (as the model's rig does).
        12 => {
            let mes = vec![format!("gc_{g}_uni_mes.bin")];
            let mut gfx: Vec<String> = common.into();
            gfx.extend(mes.iter().cloned());
            Ok(FirmwareSet { sos, smu, gfx, mes })
        }
        _ => Err(format!(
            "GC {gc:?} has no firmware set (gfx11 and gfx12 only)"
        )),
    }
}

/// Reads and parses `name` from `dir`; the bytes are leaked so the
/// firmware views live for the whole run.
pub fn load(dir: &Path, name: &str) -> Result<Firmware<'static>, String> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    parse(Kind::from_file_name(name), bytes).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use barebell_model::psp::rig;

    /// The names derived from versions equal the model rig's list, which
    /// was written out by hand from `amdgpu_ucode.h` and the init_microcode
    /// functions for the same two parts.
    #[test]
    fn derived_names_match_the_hand_written_part_lists() {
        for (part, mp0, mp1, gc, sdma) in [
            (
                rig::navi31(),
                (13, 0, 0),
                (13, 0, 0),
                (11, 0, 0),
                Some((6, 0, 0)),
            ),
            (
                rig::navi48(),
                (14, 0, 3),
                (14, 0, 3),
                (12, 0, 1),
                Some((7, 0, 1)),
            ),
        ] {
            let set = for_versions(mp0, mp1, gc, sdma).unwrap();
            assert_eq!(set.sos, part.sos);
            assert_eq!(set.smu, part.smu.0);
            let mut want: Vec<&str> = part.gfx.iter().map(|g| g.2).collect();
            want.sort();
            want.dedup();
            let mut got: Vec<&str> = set.gfx.iter().map(String::as_str).collect();
            got.sort();
            assert_eq!(got, want, "{}", part.desc.name);
        }
    }

    #[test]
    fn other_generations_are_refused_by_name() {
        let e = for_versions((13, 0, 0), (13, 0, 0), (10, 3, 0), None).unwrap_err();
        assert!(e.contains("GC (10, 3, 0)"), "{e}");
    }
}
