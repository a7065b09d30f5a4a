//! Steps 5 and 6: the GFX block after the PSP.
//!
//! rlc (`gfx_v11_0_hw_init()` / `gfx_v12_0_hw_init()`, in its order):
//! wait for the RLC autoload (`gfx_v11_0_wait_for_rlc_autoload_complete()`),
//! point the MEC pipes at their ucode (`gfx_v11_0_config_gfx_rs64()`, MEC
//! part), enable the GFXHUB on the same VMID0 tables
//! (`gfx_v11_0_gfxhub_enable()`: `gfxhub_v3_0_gart_enable()`, an HDP
//! flush, the fault defaults, VMID0's TLB flush), the golden registers, constants and compute
//! VMID apertures (`gfx_v11_0_init_golden_registers()`,
//! `gfx_v11_0_constants_init()`, `gfx_v11_0_init_compute_vmid()`), the
//! S2A doorbell routing (`nbio_v4_3_gc_doorbell_init()` /
//! `nbif_v6_3_1_gc_doorbell_init()`), then start the MEC
//! (`gfx_v11_0_cp_compute_enable()`, which `gfx_v11_0_cp_resume()` runs
//! before any queue is set up).
//!
//! mes (`mes_v11_0_enable()` / `mes_v12_0_enable()`): the MES pipes'
//! program counters from the MES blobs' headers, pipes unhalted, versions
//! read back.

use crate::Gpu;
use crate::error::{BringupError, ErrorKind, ResultAt};
use crate::firmware::{self, FirmwareError, FirmwareSet, FirmwareSource};
use crate::gmc::Memory;
use crate::nbio::flush_hdp;
use crate::sink::{Sink, Step};
use barebell::gfx::mes::start::{self, MesStart, MesVersions};
use barebell::gfx::{init, mec};
use barebell::gmc::hub::{self, GART_ENGINE};
use barebell::nbio::Nbio;
use barebell::psp::{self, GcRegs};
use barebell_firmware_if::Body;

/// The RLC autoload wait, the MEC program counters, the GFXHUB, then the
/// MEC started.
pub fn rlc(
    gpu: &Gpu<'_>,
    mem: &Memory<'_>,
    nbio: &Nbio,
    set: &FirmwareSet,
    fw: &dyn FirmwareSource,
    sink: &dyn Sink,
) -> Result<(), BringupError> {
    let s = Step::Rlc;
    let gc = gpu.ips.gc;
    let regs = GcRegs::for_version(gc.version.triple())
        .ok_or(ErrorKind::Unsupported {
            what: "RLC registers of GC",
            version: gc.version.triple(),
        })
        .at(s)?;
    psp::wait_rlc_autoload(&gpu.bus, gpu.platform.clock(), regs, &gc.bases).at(s)?;
    sink.step(
        s,
        format_args!("RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle"),
    );
    let bus = &gpu.bus;
    let gfxhub = mem.gfx11_hubs(s, gpu.ips.generation)?.gfxhub;
    let pc = mec_pc(set, fw).at(s)?;
    mec::config_rs64(bus, &gc.bases, gpu.ips.generation, pc).at(s)?;
    hub::gart_enable(bus, &gc.bases, gfxhub, &mem.cfg).at(s)?;
    flush_hdp(bus, nbio).at(s)?;
    // gfx_v11_0_gfxhub_enable(): the fault defaults, as for the MMHUB.
    hub::set_fault_enable_default(bus, &gc.bases, gfxhub, true).at(s)?;
    hub::invalidate(
        bus,
        gpu.platform.clock(),
        &gc.bases,
        gfxhub,
        GART_ENGINE,
        0,
        0,
    )
    .at(s)?;
    sink.step(
        s,
        format_args!(
            "{} enabled with the same VMID0 tables, VMID0 flushed",
            gfxhub.name
        ),
    );
    // `gfx_v11_0_init_golden_registers()`, `gfx_v11_0_constants_init()`,
    // then `adev->nbio.funcs->gc_doorbell_init()`, in hw_init's order.
    let g = gpu.ips.generation;
    init::golden(bus, &gc.bases, g).at(s)?;
    init::constants(bus, &gc.bases, g).at(s)?;
    barebell::nbio::gc_doorbell_init(bus, nbio).at(s)?;
    sink.step(
        s,
        format_args!(
            "golden registers; GRBM_CNTL.READ_TIMEOUT 0xff; SH_MEM_CONFIG {:#x} for VMIDs 0-15, \
             SH_MEM_BASES {:#x} (1-7) and {:#x} (KFD 8-15); S2A doorbell entries 0 and 3 \
             {:#x} {:#x}",
            init::DEFAULT_SH_MEM_CONFIG.into_bits(),
            init::GFX_SH_MEM_BASES.into_bits(),
            init::COMPUTE_SH_MEM_BASES.into_bits(),
            barebell::nbio::GC_S2A_ENTRIES[0].into_bits(),
            barebell::nbio::GC_S2A_ENTRIES[1].into_bits(),
        ),
    );
    let cntl = mec::compute_enable(bus, &gc.bases, g, true).at(s)?;
    sink.step(
        s,
        format_args!(
            "MEC pipes 0-3 at {pc:#x} (CP_MEC_RS64_PRGRM_CNTR_START), reset pulsed; \
             CP_MEC_RS64_CNTL {cntl:#010x}: active, unhalted"
        ),
    );
    Ok(())
}

/// The MEC ucode start in dwords, from the `gc_*_mec.bin`
/// `gfx_firmware_header_v2_0` (`gfx_v11_0_config_gfx_rs64()` reads
/// `ucode_start_addr_lo/hi` from `adev->gfx.mec_fw`).
fn mec_pc(set: &FirmwareSet, fw: &dyn FirmwareSource) -> Result<u64, FirmwareError> {
    let name = set
        .gfx
        .iter()
        .find(|n| n.ends_with("_mec.bin"))
        .ok_or(FirmwareError::Lacks {
            name: "gc_*_mec.bin".into(),
            what: "a MEC blob in the firmware set",
        })?;
    let bytes = fw.load(name)?;
    let f = firmware::parse_named(name, &bytes)?;
    match f.body {
        Body::Gfx(g) if g.is_rs64() => g.pc_start(),
        _ => None,
    }
    .ok_or_else(|| FirmwareError::Lacks {
        name: name.clone(),
        what: "gfx_firmware_header_v2_0 (an RS64 MEC start address)",
    })
}

/// Pipe start addresses from the MES blobs' headers (what Linux keeps in
/// `adev->mes.uc_start_addr[pipe]`), then `mes::start::start`.
pub fn mes_start(
    gpu: &Gpu<'_>,
    set: &FirmwareSet,
    fw: &dyn FirmwareSource,
    sink: &dyn Sink,
) -> Result<MesVersions, BringupError> {
    let s = Step::Mes;
    let mut uc = [0u64; 2];
    for (slot, name) in uc.iter_mut().zip(&set.mes) {
        let bytes = fw.load(name).at(s)?;
        let f = firmware::parse_named(name, &bytes).at(s)?;
        match f.body {
            Body::Mes(m) => *slot = m.uc_start_addr(),
            _ => {
                return Err(FirmwareError::Lacks {
                    name: name.clone(),
                    what: "MES v1.0 header",
                })
                .at(s);
            }
        }
    }
    // One blob (uni-MES, gfx12): both pipes run it from the same start
    // address (`amdgpu_mes_init_microcode()` loads the uni_mes file for
    // each pipe; `mes_v12_0_enable()` starts both).
    if set.mes.len() == 1 {
        uc[1] = uc[0];
    }
    let versions = start::start(
        &gpu.bus,
        gpu.platform.clock(),
        &gpu.ips.gc.bases,
        gpu.ips.generation,
        &MesStart {
            uc_start: uc,
            kiq_pipe: true,
        },
    )
    .at(s)?;
    sink.step(
        s,
        format_args!(
            "MES pipes unhalted at {:#x} and {:#x}; scheduler firmware {:#x}, API {}",
            uc[0] >> 2,
            uc[1] >> 2,
            versions.firmware(),
            versions.api()
        ),
    );
    Ok(versions)
}

/// The rlc step on GC 9.4.3 (MI300): `gfx_v9_4_3_hw_init()` with PSP
/// loading, on every XCC in logical order
/// ([`barebell::gfx::start_v9_4_3::start`]): RLC safe mode, clock gating
/// off, the save/restore machine (RLC v2.1 firmware), then the MEC halted
/// and released. The KIQ that Linux loads while each MEC is halted
/// (`gfx_v9_4_3_xcc_kiq_resume()`) is brought up by the rings step once
/// the MECs run (as tinygrad loads its queues into a running MEC).
pub fn rlc_v9_4_3(
    gpu: &Gpu<'_>,
    set: &FirmwareSet,
    fw: &dyn FirmwareSource,
    sink: &dyn Sink,
) -> Result<(), BringupError> {
    use barebell::gfx::start_v9_4_3::{self as start, MecOnly};
    let s = Step::Rlc;
    let name = set
        .gfx
        .iter()
        .find(|n| n.ends_with("_rlc.bin"))
        .ok_or(FirmwareError::Lacks {
            name: "gc_*_rlc.bin".into(),
            what: "an RLC blob in the firmware set",
        })
        .at(s)?;
    let bytes = fw.load(name).at(s)?;
    let rlc = firmware::parse_named(name, &bytes).at(s)?;
    // `adev->gfx.rlc.is_rlc_v2_1`: the RLC header is v2.1 or later
    // (`amdgpu_gfx_rlc_init_microcode()`).
    let v2_1 = rlc.container.header_version() >= (2, 1);
    let xcc_ips = gpu.ips.xccs();
    let xccs: alloc::vec::Vec<_> = xcc_ips.iter().map(|x| gpu.bus.block(x.bases)).collect();
    let r = start::start(&xccs, gpu.platform.clock(), v2_1, &mut MecOnly).at(s)?;
    sink.step(
        s,
        format_args!(
            "GC 9.4.3 on {} XCCs: RLC running (PSP-loaded), {} through safe mode, CGCG off, {}; MEC halted then released (CP_MEC_CNTL 0) on every XCC",
            r.xccs,
            r.safe_mode,
            if v2_1 {
                "save/restore machine on (RLC v2.1 firmware)"
            } else {
                "no save/restore machine (RLC firmware before v2.1)"
            }
        ),
    );
    Ok(())
}
