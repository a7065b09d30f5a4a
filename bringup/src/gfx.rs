//! Steps 5 and 6: the GFX block after the PSP.
//!
//! rlc (`gfx_v11_0_hw_init()` / `gfx_v12_0_hw_init()`): wait for the RLC
//! autoload (`gfx_v11_0_wait_for_rlc_autoload_complete()`), then enable
//! the GFXHUB on the same VMID0 tables (`gfx_v11_0_gfxhub_enable()`:
//! `gfxhub_v3_0_gart_enable()`, an HDP flush, the fault defaults, VMID0's
//! TLB flush).
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
use barebell::gmc::hub::{self, GART_ENGINE};
use barebell::nbio::Nbio;
use barebell::psp::{self, GcRegs};
use barebell_firmware_if::Body;

/// The RLC autoload wait, then the GFXHUB.
pub fn rlc(
    gpu: &Gpu<'_>,
    mem: &Memory<'_>,
    nbio: &Nbio,
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
    hub::gart_enable(bus, &gc.bases, mem.gfxhub, &mem.cfg).at(s)?;
    flush_hdp(bus, nbio).at(s)?;
    // gfx_v11_0_gfxhub_enable(): the fault defaults, as for the MMHUB.
    hub::set_fault_enable_default(bus, &gc.bases, mem.gfxhub, true).at(s)?;
    hub::invalidate(
        bus,
        gpu.platform.clock(),
        &gc.bases,
        mem.gfxhub,
        GART_ENGINE,
        0,
        0,
    )
    .at(s)?;
    sink.step(
        s,
        format_args!(
            "{} enabled with the same VMID0 tables, VMID0 flushed",
            mem.gfxhub.name
        ),
    );
    Ok(())
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
