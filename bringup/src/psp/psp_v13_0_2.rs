//! MP0 13.0.2 (Aldebaran: MI210, MI250).

use super::*;

/// MP0 13.0.2's block.
#[derive(Debug)]
pub struct PspV13_0_2;

impl PspBlock for PspV13_0_2 {
    fn name(&self) -> &'static str {
        "psp_v13_0_2"
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

/// MP0 13.0.2 as `psp_hw_start()` and `psp_load_non_psp_fw()` run it
/// ([`barebell::psp::mp13_0_2`]): the KDB, the auxiliary system driver
/// and sOS, the ring, an 8 MiB TMR in VRAM, the SMU image, SETUP_TMR,
/// LOAD_IP_FW for the five SDMA, the MEC and its jump table and the RLC,
/// the register list. No AUTOLOAD_RLC: the gfx step starts the RLC and
/// MEC. The TMR is recorded for a partial re-init, as on gfx11.
pub(super) fn load(
    gpu: &Gpu<'_>,
    mem: &mut Memory<'_>,
    fw: &dyn FirmwareSource,
    set: FirmwareSet,
    sink: &dyn Sink,
) -> Result<FirmwareSet, BringupError> {
    use barebell::psp::{mp13_0_2 as mp, mp13_0_6::GfxBlobs};
    let s = Step::Psp;
    let ips = &gpu.ips;
    let bufs = mem.bufs.take().ok_or(LayoutError::PspBuffersTaken).at(s)?;
    let load = |name: &str| -> Result<Vec<u8>, BringupError> { fw.load(name).at(s) };
    let sos_bytes = load(&set.sos)?;
    let sos = firmware::parse_named(&set.sos, &sos_bytes).at(s)?;
    let smu_bytes = load(&set.smu)?;
    let smu_fw = firmware::parse_named(&set.smu, &smu_bytes).at(s)?;
    let smu = smu_fw
        .section("ucode")
        .map(|x| smu_fw.bytes(x))
        .ok_or_else(|| FirmwareError::Lacks {
            name: set.smu.clone(),
            what: "ucode section",
        })
        .at(s)?;
    let named = |role: &str| -> Result<&String, BringupError> {
        set.gfx
            .iter()
            .find(|n| n.contains(role))
            .ok_or_else(|| FirmwareError::Lacks {
                name: set.sos.clone(),
                what: "an Aldebaran blob in the firmware set",
            })
            .at(s)
    };
    let (sdma_name, mec_name, rlc_name) = (named("_sdma")?, named("_mec")?, named("_rlc")?);
    let (sdma_b, mec_b, rlc_b) = (load(sdma_name)?, load(mec_name)?, load(rlc_name)?);
    let sdma = firmware::parse_named(sdma_name, &sdma_b).at(s)?;
    let mec = firmware::parse_named(mec_name, &mec_b).at(s)?;
    let rlc = firmware::parse_named(rlc_name, &rlc_b).at(s)?;
    let mut images = [Image {
        fw_type: 0,
        bytes: &[],
    }; 16];
    let n = mp::gfx_images(
        GfxBlobs {
            sdma: &sdma,
            mec: &mec,
            rlc: &rlc,
        },
        &mut images,
    )
    .at(s)?;
    let gfx = images.get(..n).unwrap_or(&[]);
    let mut p = Psp::new(
        &gpu.bus,
        gpu.platform.clock(),
        PspRegs::MP0_13_0_2,
        &ips.mp0.bases,
        bufs,
    )
    .at(s)?;
    let mut tmr = VramTmr(&mut mem.vram, mem.vram_base_offset);
    let report = mp::load_firmware(&mut p, &sos, smu, gfx, &mut tmr).at(s)?;
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
    sink.step(
        s,
        format_args!(
            "MP0 13.0.2: {} bootloader components (the auxiliary sys_drv/sOS pair){}, ring, TMR {:#x} bytes at VRAM {:#x}, the SMU image, SETUP_TMR, {} LOAD_IP_FW ({} GFX images from {}, {}, {}){}",
            report.components,
            if report.sos_was_alive { "; sOS was alive" } else { "" },
            mp::ALDEBARAN_TMR_SIZE,
            report.tmr.map_or(0, |t| t.phys_addr),
            report.ip_fw_loads + usize::from(report.rl_loaded),
            n,
            sdma_name,
            mec_name,
            rlc_name,
            if report.rl_loaded { " and the register list" } else { "" },
        ),
    );
    enable_smu_features(gpu, sink)?;
    Ok(set)
}
