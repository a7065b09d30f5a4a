//! GC 9.4.3 (MI300X, MI308X): the GFX block of a part with several XCCs
//! and no MES.
//!
//! - the rlc step ([`rlc`]): `gfx_v9_4_3_hw_init()` with PSP loading, on
//!   every XCC;
//! - the rings and queue steps ([`queue`], over the per-XCC machinery in
//!   [`xcc`]): every XCC's KIQ, then one AQL queue spread over the XCCs,
//!   mapped `direct`, `kiq` or `hws` (KFD's CPSCH);
//! - the teardown's MEC halt and GFXHUBs off.
//!
//! [`GfxV9_4_3`] is the block ([`super::GfxBlock`]).

pub mod queue;
pub mod xcc;

use crate::error::{At, BringupError, ErrorKind, Outcome, ResultAt};
use crate::firmware::{self, FirmwareError, FirmwareSet, FirmwareSource};
use crate::gmc::Memory;
use crate::queue::Mapping;
use crate::sink::{Sink, Step};
use crate::{Gpu, Options};
use alloc::string::String;
use alloc::vec::Vec;
use barebell::gfx::start_v9_4_3;
use barebell::gmc::hub::v9;
use barebell::mem::DeviceArena;
use barebell::nbio::Nbio;

/// GC 9.4.3's block.
#[derive(Debug)]
pub struct GfxV9_4_3;

impl super::GfxBlock for GfxV9_4_3 {
    fn name(&self) -> &'static str {
        "GC 9.4.3"
    }

    fn mappings(&self) -> &'static [Mapping] {
        &Mapping::GFX94
    }

    fn refuse(&self, _: Mapping, _: (u8, u8, u8)) -> ErrorKind {
        ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
            "MES (GC 9.4.3 schedules with the HWS on the MEC: --mapping hws)",
            barebell::ip::Generation::Gfx94,
        ))
    }

    fn rlc(
        &self,
        gpu: &Gpu<'_>,
        _: &Memory<'_>,
        _: &Nbio,
        set: &FirmwareSet,
        fw: &dyn FirmwareSource,
        opts: &Options,
        sink: &dyn Sink,
    ) -> Result<(), BringupError> {
        rlc(gpu, set, fw, kiqs_follow(opts), sink)
    }

    fn queue_steps<'p>(
        &self,
        gpu: &mut Gpu<'p>,
        mem: &Memory<'p>,
        area: DeviceArena<'p>,
        uarea: DeviceArena<'p>,
        _: &FirmwareSet,
        _: &dyn FirmwareSource,
        mapping: Mapping,
        opts: &Options,
        sink: &'p dyn Sink,
    ) -> Result<(), BringupError> {
        rings_and_queue(xcc::GC_9_4_3, gpu, mem, area, uarea, mapping, opts, sink)
    }

    fn halt_mec(&self, gpu: &mut Gpu<'_>) -> Outcome {
        halt_mec(gpu)
    }

    /// `gfxhub_v1_2_gart_disable()` on every XCC; GC 9.4.3 programs its
    /// GFXHUBs in the gmc step.
    fn flush_process_tlbs(&self, gpu: &Gpu<'_>) -> Result<(), BringupError> {
        flush_kfd_vmids(xcc::GC_9_4_3, gpu)
    }

    fn gfxhub_off(&self, gpu: &Gpu<'_>) -> Outcome {
        if gpu.entered >= Step::Gmc {
            crate::gmc::gmc_v9_0::hubs_off_v9(&gpu.bus, &gpu.ips.xccs(), &v9::GFXHUB_1_2, "XCCs")
        } else {
            Outcome::NotNeeded("the GFXHUB was never programmed")
        }
    }
}

/// [`super::GfxBlock::flush_process_tlbs`] on GC 9.x: `gmc_v9_0_flush_gpu_tlb()`
/// (legacy flush, the GFXHUB's invalidation engine) for each KFD VMID
/// (`gc.first_kfd_vmid` to 15) on every XCC.
pub(crate) fn flush_kfd_vmids(gc: xcc::V9Gc, gpu: &Gpu<'_>) -> Result<(), BringupError> {
    let clock = gpu.platform.clock();
    for x in gpu.ips.xccs() {
        let block = gpu.bus.block(x.bases);
        for vmid in gc.first_kfd_vmid..16 {
            v9::flush_gpu_tlb(&block, clock, gc.gfxhub, vmid, 0).at(Step::Queue)?;
        }
    }
    Ok(())
}

/// Whether the rings step brings KIQs up after the rlc step: a mapping
/// through the KIQ (kiq) or through the HIQ the KIQs map (hws), and a
/// bring-up that goes on to the rings step.
pub(crate) fn kiqs_follow(opts: &Options) -> bool {
    matches!(opts.mapping, Some(Mapping::Kiq | Mapping::Hws)) && opts.until >= Step::Rings
}

/// The rlc step on GC 9.4.3 (MI300): `gfx_v9_4_3_hw_init()` with PSP
/// loading, on every XCC in logical order: `gfx_v9_4_3_rlc_resume()`
/// ([`barebell::gfx::start_v9_4_3::rlc_resume`]: RLC safe mode, clock
/// gating off, the save/restore machine for RLC v2.1 firmware), then
/// `gfx_v9_4_3_cp_resume()`. That halts each MEC, loads its KIQ, then
/// releases it: when KIQs follow (`kiqs`), the rings step runs it with
/// the KIQs ([`xcc::kiqs_up`]); otherwise it runs here with no KIQ (the
/// direct mapping loads its queue into the running MEC, as tinygrad
/// does on MI300).
pub fn rlc(
    gpu: &Gpu<'_>,
    set: &FirmwareSet,
    fw: &dyn FirmwareSource,
    kiqs: bool,
    sink: &dyn Sink,
) -> Result<(), BringupError> {
    use barebell::gfx::init_v9_4_3 as init;
    use barebell::gfx::start_v9_4_3::{self as start, MecOnly};
    // `adev->vm_manager.first_kfd_vmid` on GC 9.4.3 (`gmc_v9_0_sw_init()`).
    const FIRST_KFD_VMID: u8 = barebell::gfx::hws::runlist::FIRST_KFD_VMID_GC_9_4_3 as u8;
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
    let clock = gpu.platform.clock();
    // `adev->rev_id` (`soc15_get_rev_id()` → `nbio_v7_9_get_rev_id()`),
    // which the golden settings depend on.
    let nbif = &gpu.ips.nbif;
    let rev_id = barebell::nbio::rev_id_v7_9(&gpu.bus, nbif.bases, nbif.version.sub_revision)
        .map_err(ErrorKind::Nbio)
        .at(s)?;
    // gfx_v9_4_3_hw_init(): golden registers, then the constants, on
    // every XCC, before the RLC and MEC.
    for (x, gc) in xccs.iter().enumerate() {
        init::golden(gc, x, rev_id).at(s)?;
        init::constants(gc, x, FIRST_KFD_VMID).at(s)?;
    }
    let r = start::rlc_resume(&xccs, clock, v2_1).at(s)?;
    if !kiqs {
        start::cp_resume(&xccs, clock, &mut MecOnly).at(s)?;
    }
    sink.step(
        s,
        format_args!(
            "GC 9.4.3 (revision {rev_id}) on {} XCCs: GB_ADDR_CONFIG {:#x} and {}; SH_MEM_CONFIG {:#x} on VMIDs 0-15, SH_MEM_BASES 0 (VMID 0) and {:#x} (1-{}), KFD VMIDs {}-15 {:#x}/{:#x}; RLC running (PSP-loaded), {} through safe mode, CGCG off, {}; {}",
            r.xccs,
            init::GOLDEN_GB_ADDR_CONFIG,
            if rev_id == 0 {
                "TCP_UTCL1_CNTL1.REDUCE_FIFO_DEPTH_BY_2 = 2"
            } else {
                "TCP_UTCL1_CNTL2.SPARE = 1"
            },
            init::vmid_sh_mem_config().into_bits(),
            init::vmid_sh_mem_bases().into_bits(),
            FIRST_KFD_VMID - 1,
            FIRST_KFD_VMID,
            init::compute_sh_mem_config().into_bits(),
            init::compute_sh_mem_bases().into_bits(),
            r.safe_mode,
            if v2_1 {
                "save/restore machine on (RLC v2.1 firmware)"
            } else {
                "no save/restore machine (RLC firmware before v2.1)"
            },
            if kiqs {
                "MEC start left to the rings step, which halts each MEC, loads its KIQ, then releases it (gfx_v9_4_3_xcc_cp_resume())"
            } else {
                "MEC halted then released (CP_MEC_CNTL 0) on every XCC"
            }
        ),
    );
    Ok(())
}

/// Steps 8 to 10 on GC 9.4.3 and GC 9.4.2 (`gc`): no MES (KFD's CPSCH
/// runs the HWS on the MEC); the rings step brings up every XCC's KIQ
/// unless the queue is loaded directly.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rings_and_queue<'p>(
    gc: xcc::V9Gc,
    gpu: &mut Gpu<'p>,
    mem: &Memory<'p>,
    mut area: DeviceArena<'p>,
    mut uarea: DeviceArena<'p>,
    mapping: Mapping,
    opts: &Options,
    sink: &'p dyn Sink,
) -> Result<(), BringupError> {
    sink.step(
        Step::Mes,
        format_args!(
            "skipped: {} has no MES; KFD schedules with the HWS on the MEC (CPSCH)",
            gc.name
        ),
    );
    gpu.reached = Step::Mes;
    if opts.stops_after(Step::Mes) {
        return Ok(());
    }
    let mut kiqs = if mapping == Mapping::Direct {
        sink.step(
            Step::Rings,
            format_args!("skipped: the direct mapping needs no KIQ"),
        );
        Vec::new()
    } else {
        crate::enter(gpu, sink, Step::Rings)?;
        queue::rings(gc, gpu, &mut area, sink)?
    };
    gpu.reached = Step::Rings;
    if opts.stops_after(Step::Rings) {
        gpu.xcc_kiqs = kiqs;
        return Ok(());
    }
    crate::enter(gpu, sink, Step::Queue)?;
    let mut slot = None;
    let r = queue::run(
        gc,
        gpu,
        mem,
        (&mut area, &mut uarea),
        &mut kiqs,
        mapping,
        &mut slot,
        sink,
    );
    gpu.queue = slot;
    gpu.xcc_kiqs = kiqs;
    r?;
    gpu.ring_area = Some(area);
    gpu.user_rings = Some(uarea);
    gpu.reached = Step::Queue;
    Ok(())
}

/// GC 9.4.3: the KIQs no queue took (`gfx_v9_4_3_xcc_kiq_fini_register()`),
/// then `gfx_v9_4_3_xcc_cp_compute_enable(false)` on every XCC
/// (`gfx_v9_4_3_hw_fini()` → `gfx_v9_4_3_xcc_fini()`).
fn halt_mec(gpu: &mut Gpu<'_>) -> Outcome {
    let p = gpu.platform;
    let xccs = gpu.ips.xccs();
    let kiqs = core::mem::take(&mut gpu.xcc_kiqs);
    let bus = &gpu.bus;
    let blocks: Vec<_> = xccs.iter().map(|x| bus.block(x.bases)).collect();
    let n_kiqs = kiqs.len();
    let down = if kiqs.is_empty() {
        Ok(())
    } else {
        xcc::kiqs_down(&blocks, kiqs, p.clock())
    };
    let r = blocks
        .iter()
        .enumerate()
        .try_for_each(|(i, b)| start_v9_4_3::cp_compute_enable(b, p.clock(), i, false));
    // Linux writes the halt and waits 50 µs with no read-back; a write to
    // a vanished device goes nowhere, so read it back before saying done.
    let gone = blocks.iter().any(|b| {
        b.read(barebell::regs::gc_9_4_3_rlc::CP_MEC_CNTL)
            .is_ok_and(|v| v == barebell::bus::ALL_ONES)
    });
    if gone {
        return Outcome::Failed(ErrorKind::DeviceGone {
            register: "CP_MEC_CNTL",
        });
    }
    match (down, r) {
        (Ok(()), Ok(())) => Outcome::Done(alloc::format!(
            "{}CP_MEC_CNTL = {:#010x} (MEC_ME1/ME2 halted, pipes reset) on {} XCCs",
            if n_kiqs > 0 {
                alloc::format!("{n_kiqs} KIQs taken down; ")
            } else {
                String::new()
            },
            barebell::regs::gc_9_4_3_rlc::CpMecCntl::HALT.into_bits(),
            xccs.len()
        )),
        (Err(e), _) => Outcome::Failed(ErrorKind::Xcc(e)),
        (_, Err(e)) => Outcome::Failed(e.at(Step::Teardown).kind),
    }
}
