//! Step 4, psp: firmware into the GPU through the PSP, in the order of
//! `psp_hw_start()` and `psp_load_non_psp_fw()`: the bootloader components
//! of the sOS bundle, the GPCOM ring, LOAD_TOC and the TMR it sizes (VRAM
//! allocated after the answer, as `psp_tmr_init()` does), the SMU
//! firmware and SETUP_TMR in the MP0 version's order, LOAD_IP_FW for
//! every GFX ucode, then AUTOLOAD_RLC. The PSP reaches its buffers through the MMHUB's VMID0
//! (GTT), so a command that never completes is reported with the fault
//! the MMHUB latched.

use crate::Gpu;
use crate::error::{BringupError, ErrorKind, LayoutError, ResultAt};
use crate::firmware::{self, FirmwareError, FirmwareSet, FirmwareSource};
use crate::gmc::Memory;
use crate::sink::{Sink, Step};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use barebell::mem::VramAllocator;
use barebell::psp::{self, FaultHub, Image, Plan, Psp, PspError, PspRegs, Tmr, TmrSource};

/// `psp_tmr_init()`'s allocation, made once LOAD_TOC has answered: VRAM,
/// `PSP_TMR_ALIGNMENT`, exactly the size asked for. The second field is
/// `MMMC_VM_FB_OFFSET`: the PSP gets the TMR's physical address,
/// `amdgpu_gmc_vram_pa()` in `psp_prep_tmr_cmd_buf()`.
struct VramTmr<'a>(&'a mut VramAllocator, u64);

impl TmrSource for VramTmr<'_> {
    fn tmr(&mut self, size: u32) -> Result<Tmr, PspError> {
        let free = self.0.free();
        let at = self
            .0
            .alloc(u64::from(size), psp::TMR_ALIGN)
            .map_err(|_| PspError::TooLarge {
                what: "TMR in the VRAM left",
                len: size as usize,
                capacity: usize::try_from(free).unwrap_or(usize::MAX),
            })?;
        Ok(Tmr {
            mc_addr: at.mc,
            capacity: size,
            phys_addr: at.offset + self.1,
        })
    }
}

/// The firmware files the discovered versions name.
pub fn firmware_set(gpu: &Gpu<'_>) -> Result<FirmwareSet, BringupError> {
    let ips = &gpu.ips;
    let gc = ips.gc.version.triple();
    FirmwareSet::for_versions(
        ips.mp0.version.triple(),
        ips.mp1.version.triple(),
        gc,
        ips.sdma0.map(|d| d.version.triple()),
    )
    .ok_or(ErrorKind::Unsupported {
        what: "GC",
        version: gc,
    })
    .at(Step::Psp)
}

/// Loads the firmware the discovered versions name; returns the set for
/// the MES start.
pub fn run(
    gpu: &Gpu<'_>,
    mem: &mut Memory<'_>,
    fw: &dyn FirmwareSource,
    sink: &dyn Sink,
) -> Result<FirmwareSet, BringupError> {
    let s = Step::Psp;
    let ips = &gpu.ips;
    let mp0 = ips.mp0.version.triple();
    let set = firmware_set(gpu)?;
    if mp0 == (13, 0, 6) {
        return run_13_0_6(gpu, mem, fw, set, sink);
    }
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
    Ok(set)
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
fn run_13_0_6(
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
    let report = mp::load_firmware(&mut p, &sos, mp::SosSet::Primary, gfx, ta.as_ref()).at(s)?;
    sink.step(
        s,
        format_args!(
            "MP0 13.0.6: {} bootloader components (primary sOS set), ring, empty SETUP_TMR (boot-time TMR), {} LOAD_IP_FW ({} images from {}, {}, {}){}; RAS TA not loaded ({} in {})",
            report.components,
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
    Ok(set)
}
