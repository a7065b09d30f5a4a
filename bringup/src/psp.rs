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
            regs: mem.mmhub,
        });
    let mut tmr = VramTmr(&mut mem.vram, mem.vram_base_offset);
    let report = psp::load_firmware(&mut p, plan, &sos, Some(smu), gfx, Some(&mut tmr)).at(s)?;
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
