//! `barebell info`: what `rocminfo` prints for an agent, for the model or
//! a GPU: the ISA, the GC version and its XCCs, compute units, wave size
//! and LDS from the discovery table's GC info, VRAM, the IP blocks, the
//! queue mappings barebell offers on the part, and the firmware files the
//! bring-up would load with their header versions.
//!
//! It runs the bring-up's discovery step only (nothing is programmed) and
//! tears down as every command does.

use crate::target::{self, TargetArgs};
use barebell::ip::Generation;
use barebell_bringup::discovery::Ips;
use barebell_bringup::{FirmwareDir, Options, Quiet, Step};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// One JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Where the amdgpu firmware blobs are (their versions are read).
    #[arg(long, default_value = FirmwareDir::SYSTEM)]
    pub firmware_dir: PathBuf,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// KFD's `gfx_target_version` for a GC version (`kgd2kfd_probe()` in
/// `kfd_device.c`: 90402 for GC 9.4.3, 110000 for 11.0.0, 120001 for
/// 12.0.1), for the versions barebell's parts have.
pub fn gfx_target_version(gc: (u8, u8, u8)) -> Option<u32> {
    match gc {
        // kgd2kfd_probe(): Aldebaran.
        (9, 4, 2) => Some(90010),
        (9, 4, 3) => Some(90402),
        (11, 0, 0) => Some(110000),
        (12, 0, 1) => Some(120001),
        _ => None,
    }
}

/// The ISA name ROCR builds from `gfx_target_version`: `gfx`, the major
/// version in decimal, minor and stepping one hex digit each (`gfx942`,
/// `gfx1100`, `gfx1201`).
pub fn isa_name(target_version: u32) -> String {
    let (major, minor, stepping) = (
        target_version / 10000,
        (target_version / 100) % 100,
        target_version % 100,
    );
    format!("gfx{major}{minor:x}{stepping:x}")
}

#[derive(Debug, Serialize)]
pub struct Info {
    pub device: String,
    pub isa: Option<String>,
    pub gfx_target_version: Option<u32>,
    pub gc_version: String,
    pub xccs: u32,
    pub shader_engines: Option<u32>,
    /// CUs one XCC can hold (`max_shader_engines × max_sh_per_se ×
    /// max_cu_per_sh`); harvesting can leave fewer active.
    pub max_cus_per_xcc: Option<u32>,
    pub wave_size: Option<u32>,
    /// `gc_lds_size`, in KiB: KFD reports it as `lds_size_in_kb`
    /// (`kfd_create_vcrat_image_gpu()` copies `cu_info->lds_size`, which
    /// `amdgpu_discovery_get_gfx_info()` reads from the GC table).
    pub lds_kib: Option<u32>,
    pub vram_bytes: u64,
    pub mappings: Vec<&'static str>,
    pub ips: Vec<String>,
    pub firmware: Vec<crate::report::FirmwareRecord>,
}

fn mappings(g: Generation) -> Vec<&'static str> {
    match g {
        // No MES on GC 9.4.3: the HWS runlist (KFD's CPSCH), the KIQ, or
        // the HQD directly.
        // GC 9.4.2 likewise (one GC).
        Generation::Gfx94 | Generation::Gfx90a => vec!["hws", "kiq", "direct"],
        Generation::Gfx11 | Generation::Gfx12 => vec!["mes", "kiq", "direct"],
    }
}

fn describe(device: String, ips: &Ips, fw: &FirmwareDir) -> Info {
    let gc = ips.gc.version.triple();
    let target = gfx_target_version(gc);
    let g = ips.gc_info;
    // Each block once, in discovery order, with its instance count.
    let mut seen: Vec<(String, usize)> = Vec::new();
    for i in &ips.all {
        let (a, b, c) = i.version.triple();
        let name = match barebell_bringup::nbio::ip_name(i.hw_id) {
            "IP" => format!("hw_id {} {a}.{b}.{c}", i.hw_id),
            n => format!("{n} {a}.{b}.{c}"),
        };
        match seen.iter_mut().find(|(n, _)| *n == name) {
            Some((_, k)) => *k += 1,
            None => seen.push((name, 1)),
        }
    }
    let blocks: Vec<String> = seen
        .into_iter()
        .map(|(n, k)| if k == 1 { n } else { format!("{n} (x{k})") })
        .collect();
    Info {
        device,
        isa: target.map(isa_name),
        gfx_target_version: target,
        gc_version: format!("{}.{}.{}", gc.0, gc.1, gc.2),
        xccs: ips.topology.num_xcc().max(1),
        shader_engines: g.map(|g| g.num_se),
        max_cus_per_xcc: g.map(|g| g.max_cus_per_gc()),
        wave_size: g.map(|g| g.wave_size),
        lds_kib: g.map(|g| g.lds_size),
        vram_bytes: ips.vram_bytes,
        mappings: mappings(ips.generation),
        ips: blocks,
        firmware: crate::report::firmware(ips, fw),
    }
}

fn text(i: &Info) -> String {
    let opt = |v: Option<u32>| v.map_or("not in the table".to_string(), |v| v.to_string());
    let mut s = String::new();
    s.push_str(&format!("Agent: {}\n", i.device));
    s.push_str(&format!(
        "  ISA:                {}\n",
        i.isa
            .as_deref()
            .map_or("unknown to barebell".to_string(), |n| format!(
                "amdgcn-amd-amdhsa--{n} (gfx_target_version {})",
                i.gfx_target_version.unwrap_or(0)
            ))
    ));
    s.push_str(&format!(
        "  GC:                 {} ({} XCC{})\n",
        i.gc_version,
        i.xccs,
        if i.xccs == 1 { "" } else { "s" }
    ));
    s.push_str(&format!(
        "  Shader engines:     {} per XCC\n",
        opt(i.shader_engines)
    ));
    s.push_str(&format!(
        "  Compute units:      up to {} per XCC (discovery's GC info; harvesting may leave fewer)\n",
        opt(i.max_cus_per_xcc)
    ));
    s.push_str(&format!("  Wavefront size:     {}\n", opt(i.wave_size)));
    s.push_str(&format!(
        "  LDS:                {} KiB per CU\n",
        opt(i.lds_kib)
    ));
    s.push_str(&format!(
        "  VRAM:               {} MiB\n",
        i.vram_bytes >> 20
    ));
    s.push_str(&format!(
        "  Queue mappings:     {}\n",
        if i.mappings.is_empty() {
            String::from("none yet (the bring-up stops at a running MEC)")
        } else {
            i.mappings.join(", ")
        }
    ));
    s.push_str(&format!("  IP blocks:          {}\n", i.ips.join(", ")));
    s.push_str("  Firmware (the files the bring-up loads):\n");
    for f in &i.firmware {
        match (&f.ucode_version, &f.error) {
            (Some(v), _) => s.push_str(&format!(
                "    {:<28} ucode {v}, header {}\n",
                f.file,
                f.header_version.as_deref().unwrap_or("?")
            )),
            (None, e) => s.push_str(&format!(
                "    {:<28} {}\n",
                f.file,
                e.as_deref().unwrap_or("unreadable")
            )),
        }
    }
    s
}

fn info(args: &InfoArgs) -> Result<Info, String> {
    let fw = FirmwareDir(args.firmware_dir.clone());
    let device = target::open(&args.target, &fw, 1)?;
    let opts = Options {
        until: Step::Discovery,
        mapping: None,
        ..Options::default()
    };
    let (found, report) = {
        let gpu = barebell_bringup::run(device.platform(), &fw, &opts, &Quiet)
            .map_err(|e| format!("{}: discovery: {e}{}", device.name(), device.diagnostics()))?;
        (describe(device.describe(), &gpu.ips, &fw), gpu.shutdown())
    };
    let complete = report.complete();
    if !complete {
        eprintln!("teardown incomplete:\n{report}");
    }
    if let Some(Err(why)) = device.quiescence() {
        eprintln!("model check: NOT quiescent: {why}");
    }
    device.finish(complete);
    Ok(found)
}

pub fn run(args: InfoArgs) -> ExitCode {
    match info(&args) {
        Ok(i) if args.json => match serde_json::to_string_pretty(&i) {
            Ok(s) => {
                println!("{s}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("barebell info: {e}");
                ExitCode::FAILURE
            }
        },
        Ok(i) => {
            print!("{}", text(&i));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("barebell info: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ROCR's names for KFD's target versions (the LLVM processors the
    /// parts' code objects are built for).
    #[test]
    fn isa_names_from_kfd_target_versions() {
        assert_eq!(isa_name(90402), "gfx942");
        assert_eq!(isa_name(110000), "gfx1100");
        assert_eq!(isa_name(120001), "gfx1201");
        assert_eq!(isa_name(90010), "gfx90a");
        assert_eq!(gfx_target_version((9, 4, 3)), Some(90402));
        assert_eq!(gfx_target_version((10, 3, 0)), None);
    }
}
