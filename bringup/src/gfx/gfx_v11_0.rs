//! Steps 5 and 6: the GFX block after the PSP.
//!
//! rlc (`gfx_v11_0_hw_init()` / `gfx_v12_0_hw_init()`, in its order):
//! wait for the RLC autoload (`gfx_v11_0_wait_for_rlc_autoload_complete()`),
//! point the PFP, ME and MEC pipes at their ucode
//! (`gfx_v11_0_config_gfx_rs64()` / `gfx_v12_0_config_gfx_rs64()`),
//! enable the GFXHUB on the same VMID0 tables
//! (`gfx_v11_0_gfxhub_enable()`: `gfxhub_v3_0_gart_enable()`, an HDP
//! flush, the fault defaults, VMID0's TLB flush), the golden registers, constants and compute
//! VMID apertures (`gfx_v11_0_init_golden_registers()`,
//! `gfx_v11_0_constants_init()`, `gfx_v11_0_init_compute_vmid()`), the
//! S2A doorbell routing (`nbio_v4_3_gc_doorbell_init()` /
//! `nbif_v6_3_1_gc_doorbell_init()`), the RLC's save/restore machine
//! (`gfx_v11_0_rlc_resume()`: `gfx_v11_0_rlc_enable_srm()`), then start the MEC
//! (`gfx_v11_0_cp_compute_enable()`, which `gfx_v11_0_cp_resume()` runs
//! before any queue is set up, with its 50 µs wait).
//!
//! mes (`mes_v11_0_enable()` / `mes_v12_0_enable()`): the MES pipes'
//! program counters from the MES blobs' headers, pipes unhalted, versions
//! read back. On gfx12 the KIQ (MES pipe 1) is named to the RLC first,
//! as `mes_v12_0_kiq_hw_init()` does (`mes_v12_0_kiq_setting()`).
//!
//! [`GfxV11`] is the block: these steps, then MES and the rings
//! ([`crate::rings`]) and the user queue ([`crate::queue`]).

use crate::error::{BringupError, ErrorKind, Outcome, ResultAt};
use crate::firmware::{self, FirmwareError, FirmwareSet, FirmwareSource};
use crate::gmc::Memory;
use crate::nbio::flush_hdp;
use crate::queue::{self, Mapping};
use crate::rings;
use crate::sink::{Sink, Step};
use crate::{Gpu, Options};
use barebell::gfx::kiq::hqd::name_kiq;
use barebell::gfx::mes::start::{self, MesStart, MesVersions};
use barebell::gfx::pfp_me::{self, GfxPcs};
use barebell::gfx::{init, mec};
use barebell::gmc::hub::{self, GART_ENGINE};
use barebell::ip::{Generation, hw_id};
use barebell::mem::DeviceArena;
use barebell::nbio::Nbio;
use barebell::psp::{self, GcRegs};
use barebell_firmware_if::Body;
use core::ops::ControlFlow;

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
    // `gfx_v11_0_config_gfx_rs64()`: PFP, ME, then MEC.
    let gfx_pcs = GfxPcs {
        pfp: rs64_pc(set, fw, "_pfp.bin").at(s)?,
        me: rs64_pc(set, fw, "_me.bin").at(s)?,
    };
    pfp_me::config_rs64(bus, &gc.bases, gpu.ips.generation, gfx_pcs).at(s)?;
    let pc = rs64_pc(set, fw, "_mec.bin").at(s)?;
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
    // `gfx_v11_0_rlc_resume()` (PSP loading): the RLC's save/restore
    // machine on; the clear-state buffer is not set up (see
    // `barebell::gfx::init`).
    let srm = init::rlc_resume(bus, &gc.bases, g).at(s)?;
    sink.step(
        s,
        format_args!(
            "golden registers; GRBM_CNTL.READ_TIMEOUT 0xff; SH_MEM_CONFIG {:#x} for VMIDs 0-15, \
             SH_MEM_BASES {:#x} (1-7) and {:#x} (KFD 8-15); S2A doorbell entries 0 and 3 \
             {:#x} {:#x}; RLC_SRM_CNTL {srm:#x}",
            init::DEFAULT_SH_MEM_CONFIG.into_bits(),
            init::GFX_SH_MEM_BASES.into_bits(),
            init::COMPUTE_SH_MEM_BASES.into_bits(),
            barebell::nbio::GC_S2A_ENTRIES[0].into_bits(),
            barebell::nbio::GC_S2A_ENTRIES[1].into_bits(),
        ),
    );
    let cntl = mec::compute_enable(bus, gpu.platform.clock(), &gc.bases, g, true).at(s)?;
    sink.step(
        s,
        format_args!(
            "PFP pipes 0-1 at {:#x}, ME pipes 0-1 at {:#x}, MEC pipes 0-3 at {pc:#x} \
             (CP_*_PRGRM_CNTR_START), resets pulsed; CP_MEC_RS64_CNTL {cntl:#010x}: \
             active, unhalted, 50 us waited",
            gfx_pcs.pfp, gfx_pcs.me
        ),
    );
    Ok(())
}

/// An RS64 engine's ucode start in dwords, from the `gc_*<suffix>`
/// (`_pfp.bin`, `_me.bin`, `_mec.bin`) `gfx_firmware_header_v2_0`
/// (`gfx_v11_0_config_gfx_rs64()` reads `ucode_start_addr_lo/hi` from
/// `adev->gfx.pfp_fw`, `me_fw` and `mec_fw`).
fn rs64_pc(
    set: &FirmwareSet,
    fw: &dyn FirmwareSource,
    suffix: &'static str,
) -> Result<u64, FirmwareError> {
    let name = set
        .gfx
        .iter()
        .find(|n| n.ends_with(suffix))
        .ok_or(FirmwareError::Lacks {
            name: alloc::format!("gc_*{suffix}"),
            what: "an RS64 blob in the firmware set",
        })?;
    let bytes = fw.load(name)?;
    let f = firmware::parse_named(name, &bytes)?;
    match f.body {
        Body::Gfx(g) if g.is_rs64() => g.pc_start(),
        _ => None,
    }
    .ok_or_else(|| FirmwareError::Lacks {
        name: name.clone(),
        what: "gfx_firmware_header_v2_0 (an RS64 start address)",
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
    // `mes_v12_0_kiq_hw_init()` begins with `mes_v12_0_kiq_setting()` on
    // `mes.ring[AMDGPU_MES_KIQ_PIPE]` under uni-MES: RLC_CP_SCHEDULERS
    // names ME 3 pipe 1 queue 0 before MES is enabled. (gfx11 names its
    // MES KIQ after the start, in the rings step, as
    // `mes_v11_0_kiq_hw_init()` does.)
    let gfx12 = gpu.ips.generation == Generation::Gfx12;
    if gfx12 {
        name_kiq(
            &gpu.bus,
            &gpu.ips.gc.bases,
            gpu.ips.generation,
            start::MES_ME,
            start::KIQ_PIPE,
            0,
        )
        .at(s)?;
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
            "{}MES pipes unhalted at {:#x} and {:#x}; scheduler firmware {:#x}, API {}",
            if gfx12 {
                "RLC_CP_SCHEDULERS names ME 3 pipe 1 queue 0 (the KIQ); "
            } else {
                ""
            },
            uc[0] >> 2,
            uc[1] >> 2,
            versions.firmware(),
            versions.api()
        ),
    );
    Ok(versions)
}

/// GC 11.0 and GC 12.0's block ([`super::GfxBlock`]).
#[derive(Debug)]
pub struct GfxV11;

impl super::GfxBlock for GfxV11 {
    fn name(&self) -> &'static str {
        "GC 11/12"
    }

    fn mappings(&self) -> &'static [Mapping] {
        &Mapping::ALL
    }

    fn refuse(&self, _: Mapping, gc: (u8, u8, u8)) -> ErrorKind {
        ErrorKind::Unsupported {
            what: "the HWS (CPSCH) mapping: GC 9.x's scheduler; gfx11/gfx12 use MES, GC",
            version: gc,
        }
    }

    fn rlc(
        &self,
        gpu: &Gpu<'_>,
        mem: &Memory<'_>,
        nbio: &Nbio,
        set: &FirmwareSet,
        fw: &dyn FirmwareSource,
        _: &Options,
        sink: &dyn Sink,
    ) -> Result<(), BringupError> {
        rlc(gpu, mem, nbio, set, fw, sink)
    }

    fn queue_steps<'p>(
        &self,
        gpu: &mut Gpu<'p>,
        mem: &Memory<'p>,
        mut area: DeviceArena<'p>,
        mut uarea: DeviceArena<'p>,
        set: &FirmwareSet,
        fw: &dyn FirmwareSource,
        mapping: Mapping,
        opts: &Options,
        sink: &'p dyn Sink,
    ) -> Result<(), BringupError> {
        let ControlFlow::Continue(rings) =
            mes_and_rings(gpu, &mut area, set, fw, mapping, opts, sink)?
        else {
            return Ok(());
        };
        // 10. the user queue: kept in `gpu` as soon as it is mapped, so
        // that a first packet that fails still has it unmapped by the
        // teardown.
        crate::enter(gpu, sink, Step::Queue)?;
        let mut slot = None;
        let r = queue::run(
            gpu,
            mem,
            (&mut area, &mut uarea),
            rings,
            mapping,
            &mut slot,
            sink,
        );
        gpu.queue = slot;
        r?;
        gpu.ring_area = Some(area);
        gpu.user_rings = Some(uarea);
        gpu.reached = Step::Queue;
        Ok(())
    }

    /// `gfx_v11_0_hw_fini()` → `gfx_v11_0_cp_compute_enable(false)`.
    fn halt_mec(&self, gpu: &mut Gpu<'_>) -> Outcome {
        crate::error::outcome(
            mec::compute_enable(
                &gpu.bus,
                gpu.platform.clock(),
                &gpu.ips.gc.bases,
                gpu.ips.generation,
                false,
            )
            .map(|v| {
                alloc::format!("CP_MEC_RS64_CNTL = {v:#010x} (pipes reset and inactive, MEC_HALT)")
            }),
        )
    }

    /// `gfx_v11_0_hw_fini()` ends with `gfxhub_v3_0_gart_disable()`
    /// (`gfxhub_v12_0_gart_disable()`); the GFXHUB was programmed in the
    /// rlc step.
    /// `gmc_v11_0_flush_gpu_tlb()` by registers (the GFXHUB's GART
    /// engine) for KFD's VMIDs, 8 to 15 (`first_kfd_vmid`, set by
    /// `gmc_v11_0_sw_init()`).
    fn flush_process_tlbs(&self, gpu: &Gpu<'_>) -> Result<(), BringupError> {
        let hub = gpu
            .gfxhub
            .ok_or(ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
                "a GFXHUB table for this GC",
                gpu.ips.generation,
            )))
            .at(Step::Queue)?;
        for vmid in u32::from(crate::queue::USER_VMID)..16 {
            barebell::gmc::hub::invalidate(
                &gpu.bus,
                gpu.platform.clock(),
                &gpu.ips.gc.bases,
                hub,
                barebell::gmc::hub::GART_ENGINE,
                vmid,
                0,
            )
            .at(Step::Queue)?;
        }
        Ok(())
    }

    fn gfxhub_off(&self, gpu: &Gpu<'_>) -> Outcome {
        if gpu.entered >= Step::Rlc {
            crate::gmc::hub_off(&gpu.bus, hw_id::GC, &gpu.ips.gc)
        } else {
            Outcome::NotNeeded("the GFXHUB was never programmed")
        }
    }
}

/// Steps 8 and 9 on gfx11/gfx12: MES started and the rings, or both
/// skipped for the direct mapping. Breaks where `opts` says to stop.
fn mes_and_rings<'p>(
    gpu: &mut Gpu<'p>,
    area: &mut DeviceArena<'p>,
    set: &FirmwareSet,
    fw: &dyn FirmwareSource,
    mapping: Mapping,
    opts: &Options,
    sink: &dyn Sink,
) -> Result<ControlFlow<(), Option<rings::Rings<'p>>>, BringupError> {
    if mapping == Mapping::Direct {
        for st in [Step::Mes, Step::Rings] {
            sink.step(
                st,
                format_args!("skipped: the direct mapping needs neither MES nor the KIQ"),
            );
            gpu.reached = st;
            if opts.stops_after(st) {
                return Ok(ControlFlow::Break(()));
            }
        }
        return Ok(ControlFlow::Continue(None));
    }
    crate::enter(gpu, sink, Step::Mes)?;
    gpu.mes_started = true;
    let versions = mes_start(gpu, set, fw, sink)?;
    gpu.reached = Step::Mes;
    if opts.stops_after(Step::Mes) {
        return Ok(ControlFlow::Break(()));
    }
    crate::enter(gpu, sink, Step::Rings)?;
    let rings = rings::run(gpu, area, versions, sink)?;
    gpu.reached = Step::Rings;
    if opts.stops_after(Step::Rings) {
        return Ok(ControlFlow::Break(()));
    }
    Ok(ControlFlow::Continue(Some(rings)))
}
