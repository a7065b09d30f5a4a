//! MP0 13.0.0, 14.0.2 and 14.0.3 (Navi 3x, Navi 4x): `psp_hw_start()`
//! and `psp_load_non_psp_fw()` with LOAD_TOC, the TMR it sizes, the SMU
//! image and AUTOLOAD_RLC, in the order the runtime's [`Plan`] for the
//! version gives (Linux has `psp_v13_0.c` and `psp_v14_0.c`; their
//! differences here are the plan and register tables). Then the SMU
//! block's hardware init as far as barebell needs it: PMFW, now running,
//! gets `EnableAllSmuFeatures` ([`enable_smu_features`]).

use super::*;

/// The block of the plan-driven MP0 versions.
#[derive(Debug)]
pub struct PspV13_0;

impl PspBlock for PspV13_0 {
    fn name(&self) -> &'static str {
        "psp_v13_0"
    }

    fn load(
        &self,
        gpu: &Gpu<'_>,
        mem: &mut Memory<'_>,
        fw: &dyn FirmwareSource,
        set: FirmwareSet,
        sink: &dyn Sink,
    ) -> Result<FirmwareSet, BringupError> {
        load(gpu, mem, fw, set, sink)
    }
}

/// Loads the firmware `set` names, by the MP0 version's plan.
pub(super) fn load(
    gpu: &Gpu<'_>,
    mem: &mut Memory<'_>,
    fw: &dyn FirmwareSource,
    set: FirmwareSet,
    sink: &dyn Sink,
) -> Result<FirmwareSet, BringupError> {
    let s = Step::Psp;
    let ips = &gpu.ips;
    let mp0 = ips.mp0.version.triple();
    let unsupported = |what| ErrorKind::Unsupported { what, version: mp0 };
    let regs = PspRegs::for_version(mp0)
        .ok_or(unsupported("PSP registers of MP0"))
        .at(s)?;
    let plan = Plan::for_version(mp0)
        .ok_or(unsupported("a PSP plan for MP0"))
        .at(s)?;
    let bufs = mem.bufs.take().ok_or(LayoutError::PspBuffersTaken).at(s)?;
    let sos_bytes = fw.load(&set.sos).at(s)?;
    let sos = firmware::parse_named(&set.sos, &sos_bytes).at(s)?;
    let smu_bytes = fw.load(&set.smu).at(s)?;
    let smu_fw = firmware::parse_named(&set.smu, &smu_bytes).at(s)?;
    let smu = smu_fw
        .section("ucode")
        .map(|x| smu_fw.bytes(x))
        .ok_or_else(|| FirmwareError::Lacks {
            name: set.smu.clone(),
            what: "ucode section",
        })
        .at(s)?;
    let files = set
        .gfx
        .iter()
        .map(|n| fw.load(n).at(s))
        .collect::<Result<Vec<_>, _>>()?;
    let blobs = set
        .gfx
        .iter()
        .zip(&files)
        .map(|(n, b)| firmware::parse_named(n, b).at(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut images = vec![
        Image {
            fw_type: 0,
            bytes: &[]
        };
        64
    ];
    let n = psp::gfx_images(&blobs, &mut images).at(s)?;
    let gfx = images.get(..n).unwrap_or(&[]);
    let mut p = Psp::new(&gpu.bus, gpu.platform.clock(), regs, &ips.mp0.bases, bufs)
        .at(s)?
        .with_fault_hub(FaultHub {
            bus: &gpu.bus,
            bases: ips.mmhub.bases,
            regs: mem.gfx11_hubs(s, ips.generation)?.mmhub,
        });
    let mut tmr = VramTmr(&mut mem.vram, mem.vram_base_offset);
    let report = psp::load_firmware(&mut p, plan, &sos, Some(smu), gfx, Some(&mut tmr)).at(s)?;
    if let Some(t) = report.tmr {
        // For a partial re-init: sOS keeps running on this TMR.
        crate::start::write_tmr_record(
            &gpu.bus,
            &crate::start::gc_bases(ips),
            ips.generation,
            t.phys_addr.saturating_sub(mem.vram_base_offset),
            u64::from(t.capacity),
        )
        .map_err(ErrorKind::Register)
        .at(s)?;
    }
    let placed = match report.tmr {
        Some(t) => alloc::format!(" at VRAM {:#x}", t.phys_addr),
        None => alloc::string::String::from(" (boot-time TMR: none allocated, no SETUP_TMR)"),
    };
    sink.step(
        s,
        format_args!(
            "{} bootloader components, TMR {:#x} bytes asked by the TOC{placed}, {} LOAD_IP_FW ({} GFX images from {} files), AUTOLOAD_RLC sent",
            report.components,
            report.tmr_size,
            report.ip_fw_loads,
            n,
            set.gfx.len()
        ),
    );
    enable_smu_features(gpu, sink)?;
    Ok(set)
}
