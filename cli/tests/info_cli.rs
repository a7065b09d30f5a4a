//! `barebell info` on every model part: the ISA LLVM builds the part's
//! code for, the XCC count and VRAM the part declares, and firmware
//! versions equal to what `barebell fw info` reads from the same files.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::Value;

mod common;
use common::barebell_ok as barebell;

#[test]
fn every_part_reports_its_isa_xccs_vram_and_firmware() {
    // (part, LLVM processor, XCCs, VRAM MiB as the bring-up prints it)
    for (part, isa, xccs) in [
        ("navi31", "gfx1100", 1),
        ("navi48", "gfx1201", 1),
        ("mi300x", "gfx942", 8),
        ("mi308x", "gfx942", 4),
    ] {
        let v: Value =
            serde_json::from_str(&barebell(&["info", "--part", part, "--json"])).unwrap();
        assert_eq!(v["isa"], isa, "{part}");
        assert_eq!(v["xccs"], xccs, "{part}");
        let up = barebell(&["bringup", "--part", part, "--until", "discovery"]);
        let mib = v["vram_bytes"].as_u64().unwrap() >> 20;
        assert!(
            up.contains(&format!("({mib} MiB of VRAM")),
            "{part}: {mib} MiB vs\n{up}"
        );
        let files = v["firmware"].as_array().unwrap();
        assert!(files.len() >= 5, "{part}: {files:?}");
        for f in files {
            let name = f["file"].as_str().unwrap();
            let path = format!("/lib/firmware/amdgpu/{name}");
            let fw = barebell(&["fw", "info", &path]);
            let ucode = f["ucode_version"].as_str().unwrap();
            let line = fw.lines().find(|l| l.starts_with(name)).unwrap();
            assert!(
                line.split_whitespace().any(|w| w == ucode),
                "{part}: {name}: info says {ucode}, fw info says {line}"
            );
        }
        let text = barebell(&["info", "--part", part]);
        assert!(
            text.contains(&format!("amdgcn-amd-amdhsa--{isa}")),
            "{text}"
        );
    }
}
