//! MP0 13.0.6 (MI300X, MI308X).

use super::*;

/// MP0 13.0.6's block.
#[derive(Debug)]
pub struct PspV13_0_6;

impl PspBlock for PspV13_0_6 {
    fn name(&self) -> &'static str {
        "psp_v13_0_6"
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

/// MP0 13.0.6 (MI300, GC 9.4.3), as `psp_hw_start()` and
/// `psp_load_non_psp_fw()` run for it ([`barebell::psp::mp13_0_6`]): the
/// bootloader's steady state (`psp_v13_0_wait_for_bootloader_steady_state()`),
/// the sOS bundle's stages, the ring, an empty SETUP_TMR (boot-time TMR),
/// LOAD_IP_FW for the SDMA, MEC (and its jump table) and RLC ucode, the
/// register list. No LOAD_TOC, no SMU image, no AUTOLOAD_RLC: the RLC and
/// MEC are started per XCC by the rlc step.
///
/// The sOS set: Linux picks the auxiliary one for a PMFW older than
/// 85.115.0 (`psp_init_sos_base_fw()` on `adev->pm.fw_version`, which the
/// SMU reports). The bring-up does not ask MP1 13.0.6 for its version; it
/// sends the primary set, which the model's PSP expects (model
/// convention: its PMFW is at least 85.115.0).
pub(super) fn load(
    gpu: &Gpu<'_>,
    mem: &mut Memory<'_>,
    fw: &dyn FirmwareSource,
    set: FirmwareSet,
    sink: &dyn Sink,
) -> Result<FirmwareSet, BringupError> {
    use barebell::psp::mp13_0_6 as mp;
    let s = Step::Psp;
    let ips = &gpu.ips;
    let clock = gpu.platform.clock();
    let regs = PspRegs::MP0_13_0_6;
    let bufs = mem.bufs.take().ok_or(LayoutError::PspBuffersTaken).at(s)?;
    let load = |name: &str| -> Result<Vec<u8>, BringupError> { fw.load(name).at(s) };
    let sos_bytes = load(&set.sos)?;
    let sos = firmware::parse_named(&set.sos, &sos_bytes).at(s)?;
    let named = |role: &str| -> Result<&String, BringupError> {
        set.gfx
            .iter()
            .find(|n| n.contains(role))
            .ok_or_else(|| FirmwareError::Lacks {
                name: set.sos.clone(),
                what: "a GC 9.4.3 blob in the firmware set",
            })
            .at(s)
    };
    let (sdma_name, mec_name, rlc_name) = (named("sdma_")?, named("_mec")?, named("_rlc")?);
    let (sdma_b, mec_b, rlc_b) = (load(sdma_name)?, load(mec_name)?, load(rlc_name)?);
    let sdma = firmware::parse_named(sdma_name, &sdma_b).at(s)?;
    let mec = firmware::parse_named(mec_name, &mec_b).at(s)?;
    let rlc = firmware::parse_named(rlc_name, &rlc_b).at(s)?;
    let ta_bytes = match &set.ta {
        Some(n) => Some((n.clone(), load(n)?)),
        None => None,
    };
    let ta_fw = match &ta_bytes {
        Some((n, b)) => Some(firmware::parse_named(n, b).at(s)?),
        None => None,
    };
    let ta = match &ta_fw {
        Some(t) => Some(mp::ta_plan(t).at(s)?),
        None => None,
    };
    let mut images = [Image {
        fw_type: 0,
        bytes: &[],
    }; 16];
    let n = mp::gfx_images(
        mp::GfxBlobs {
            sdma: &sdma,
            mec: &mec,
            rlc: &rlc,
        },
        &mut images,
    )
    .at(s)?;
    let gfx = images.get(..n).unwrap_or(&[]);
    mp::wait_for_bootloader_steady_state(
        &gpu.bus,
        clock,
        &ips.mp0.bases,
        mp::BOOTLOADER_TIMEOUT_NS,
    )
    .at(s)?;
    let mut p = Psp::new(&gpu.bus, clock, regs, &ips.mp0.bases, bufs)
        .at(s)?
        .with_bootloader_timeout(mp::BOOTLOADER_TIMEOUT_NS);
    // psp_v13_0_is_aux_sos_load_required(): the sOS set by PMFW version.
    let pmfw = mp::read_pmfw_version(&gpu.bus).at(s)?;
    let sos_set = mp::SosSet::for_pmfw_version(pmfw);
    // smu_v13_0_6_init_microcode(): the P2S table rides in the SMU blob.
    let smu_bytes = load(&set.smu)?;
    let smu = firmware::parse_named(&set.smu, &smu_bytes).at(s)?;
    let p2s = mp::p2s_table(&smu);
    let report = mp::load_firmware(&mut p, &sos, sos_set, p2s, gfx, ta.as_ref()).at(s)?;
    sink.step(
        s,
        format_args!(
            "MP0 13.0.6: {} bootloader components ({} sOS set: PMFW {}.{}.{} in MP1_PUB_SCRATCH0), ring, empty SETUP_TMR (boot-time TMR), {}{} LOAD_IP_FW ({} images from {}, {}, {}){}; RAS TA not loaded ({} in {})",
            report.components,
            match sos_set {
                mp::SosSet::Primary => "primary",
                mp::SosSet::Aux => "auxiliary",
            },
            pmfw >> 16 & 0xff,
            pmfw >> 8 & 0xff,
            pmfw & 0xff,
            if report.p2s_loaded {
                alloc::format!("the P2S table from {}, ", set.smu)
            } else {
                alloc::string::String::new()
            },
            report.ip_fw_loads + usize::from(report.rl_loaded),
            n,
            sdma_name,
            mec_name,
            rlc_name,
            if report.rl_loaded { " and the register list" } else { "" },
            report.tas_not_loaded,
            set.ta.as_deref().unwrap_or("no TA blob"),
        ),
    );
    enable_smu_features(gpu, sink)?;
    Ok(set)
}
