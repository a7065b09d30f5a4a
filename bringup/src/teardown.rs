//! Teardown: everything the bring-up set up, undone in reverse order, on
//! every exit (success, an error at any step, a signal in the CLI).
//!
//! Linux tears a device down in `amdgpu_device_fini_hw()`, which calls
//! each IP block's `hw_fini` in the reverse of `hw_init` order, then the
//! PCI layer clears bus mastering (`pci_clear_master()` in
//! `amdgpu_pci_remove()` → `pci_disable_device()`). barebell follows the
//! same order over what its bring-up did, one stage a line:
//!
//! 1. [`Stage::UnmapQueue`]: the user queue off its HQD, by the way it
//!    was mapped: MES REMOVE_QUEUE (`remove_queue_mes()`), KIQ
//!    UNMAP_QUEUES (`amdgpu_gfx_disable_kcq()`), or the HQD dequeue
//!    request and wait (`gfx_v11_0_kcq_fini_register()`, tinygrad's
//!    direct path);
//! 2. [`Stage::HaltSdma`]: the SDMA engines barebell started, their
//!    queue stopped and `HALT` set (`sdma_v6_0_hw_fini()`,
//!    `sdma_v7_0_hw_fini()`, `sdma_v4_4_2_hw_fini()`), after the caller
//!    took its SDMA queue off the scheduler;
//! 3. [`Stage::HaltMes`]: both MES pipes reset and halted
//!    (`mes_v11_0_hw_fini()` → `mes_v11_0_enable(false)`;
//!    `mes_v12_0_enable(false)`); the KIQ on MES pipe 1 and the scheduler
//!    ring stop with them;
//! 4. [`Stage::HaltMec`]: the MEC pipes reset, inactive and halted
//!    (`gfx_v11_0_hw_fini()` → `gfx_v11_0_cp_compute_enable(false)`);
//! 5. [`Stage::Gfxhub`]: the GFXHUB's 16 VM contexts, L1 TLB and L2 cache
//!    off (`gfx_v11_0_hw_fini()` ends with `gfxhub.funcs->gart_disable()`:
//!    `gfxhub_v3_0_gart_disable()`, `gfxhub_v12_0_gart_disable()`);
//! 6. [`Stage::SmuUnload`]: the SMU told the driver lets go
//!    (`smu_disable_dpms()`: `PrepareForDriverUnload` on MP1 13.0.6,
//!    `smu_v13_0_6_notify_unload()`, then the RLCs stopped,
//!    `gfx_v9_4_3_rlc_stop()`; nothing on 13.0.0 and 14.0.2, whose PMFW
//!    handles its features itself);
//! 7. [`Stage::PspRing`]: the PSP's GPCOM ring destroyed
//!    (`psp_hw_fini()` → `psp_ring_stop()` → DESTROY_RINGS);
//! 8. [`Stage::IhRing`]: interrupt ring 0 disabled (`ih_v6_0_hw_fini()`
//!    → `ih_v6_0_irq_disable()`), before its GTT memory goes back;
//! 9. [`Stage::Mmhub`]: the GART off: the MMHUB's contexts, L1 TLB and L2
//!    cache (`gmc_v11_0_hw_fini()` → `gmc_v11_0_gart_disable()` →
//!    `mmhub_v3_0_gart_disable()`; `mmhub_v4_1_0_gart_disable()`), after
//!    the PSP and IH, which reach memory through it;
//! 10. [`Stage::Doorbells`]: the doorbell and self-ring apertures closed
//!     (`soc21_common_hw_fini()`: `enable_doorbell_aperture(false)`,
//!     `enable_doorbell_selfring_aperture(false)`);
//! 11. [`Stage::BusMaster`]: `PCI_COMMAND` bus master cleared, so the
//!     device can start no DMA at all;
//! 12. [`Stage::ReleaseMemory`]: the user memory handed back; the DMA
//!     region is the platform's, released when it drops (the CLI keeps a
//!     GPU's region for the life of the process unless every stage above
//!     was done);
//! 13. [`Stage::Signature`]: `SCRATCH_REG6` = 0 when every stage above was
//!     done, 1 otherwise (tinygrad's `AMDev.fini` writes its error state
//!     there), when the start step finished, so that the next run
//!     re-inits partially only after a complete teardown
//!     ([`crate::start`]).
//!
//! A stage runs when the bring-up step that set its state up was begun
//! (a failing step may have done half its work); a stage that fails does
//! not stop the later ones, as Linux's `hw_fini` loop carries on.
//!
//! The report the stages make up ([`TeardownReport`], [`Stage`],
//! [`Outcome`]) is defined in [`crate::error`], since a
//! [`crate::BringupError`] carries it.

use crate::Gpu;
use crate::error::{At, ErrorKind, Outcome, Stage, TeardownReport};
use crate::sink::{Sink, Step};
use alloc::string::String;
use alloc::vec::Vec;
use barebell::gfx::mes::start as mes_start;
use barebell::nbio::{self, Nbio};
use barebell::psp::{self, PspRegs};

use crate::error::outcome;

/// Tears `gpu` down as far as its bring-up got ([`Gpu::entered`]),
/// reporting each stage to `sink` under [`Step::Teardown`]: the stages
/// below, in order, each a function of its own.
pub(crate) fn run(gpu: &mut Gpu<'_>, sink: &dyn Sink) -> TeardownReport {
    // Once: `Gpu`'s drop guard skips a device torn down here.
    gpu.torn_down = true;
    report_latched(gpu, sink);
    let mut stages = Vec::new();
    let mut put = |stage: Stage, o: Outcome| {
        sink.step(Step::Teardown, format_args!("{}: {o}", stage.name()));
        stages.push((stage, o));
    };
    put(Stage::UnmapQueue, unmap_queue(gpu));
    put(Stage::HaltSdma, halt_sdma(gpu));
    put(Stage::HaltMes, halt_mes(gpu));
    put(Stage::HaltMec, halt_mec(gpu));
    put(Stage::Gfxhub, gfxhub_off(gpu));
    put(Stage::SmuUnload, smu_unload(gpu));
    put(Stage::PspRing, psp_ring(gpu));
    put(Stage::IhRing, ih_ring(gpu));
    put(Stage::Mmhub, mmhub_off(gpu));
    put(Stage::Doorbells, doorbells_closed(gpu));
    put(Stage::BusMaster, bus_master_off(gpu));
    put(Stage::ReleaseMemory, release_memory(gpu));
    // The signature's "finalized" flag, last: a register write, which
    // needs no bus mastering.
    let done = stages
        .iter()
        .all(|(_, o)| matches!(o, Outcome::Done(_) | Outcome::NotNeeded(_)));
    let o = signature(gpu, done);
    sink.step(
        Step::Teardown,
        format_args!("{}: {o}", Stage::Signature.name()),
    );
    stages.push((Stage::Signature, o));
    TeardownReport { stages }
}

/// Before the stages: what the hubs latched, before anything is undone: after a failed
/// step it is often the reason (a ring or fence the CP could not reach);
/// and what the IH ring holds: the same faults with their VMID, and
/// shader errors with their queue.
fn report_latched(gpu: &mut Gpu<'_>, sink: &dyn Sink) {
    match gpu.latched_faults() {
        Ok(faults) => faults.iter().for_each(|f| sink.fault(f)),
        Err(e) => sink.step(
            Step::Teardown,
            format_args!("the hubs' fault status could not be read: {e}"),
        ),
    }
    match gpu.poll_interrupts() {
        Ok(list) => list.iter().for_each(|i| sink.interrupt(i)),
        Err(e) => sink.step(
            Step::Teardown,
            format_args!("the IH ring could not be read: {e}"),
        ),
    }
}

/// Stage 1: the user queue, while MES and the KIQ still answer.
fn unmap_queue(gpu: &mut Gpu<'_>) -> Outcome {
    match gpu.queue.take() {
        Some(q) => {
            let how = q.mode.name();
            match q.unmap() {
                Ok(()) => Outcome::Done(alloc::format!("{how} unmap answered")),
                Err(e) => Outcome::Failed(e.kind),
            }
        }
        None => Outcome::NotNeeded("no user queue was mapped"),
    }
}

/// Stage 2: SDMA, after its queue came off the scheduler (the caller's
/// `CopyQueue::stop`) and while MES still runs.
fn halt_sdma(gpu: &Gpu<'_>) -> Outcome {
    if gpu.sdma_started {
        sdma_halt(gpu)
    } else {
        Outcome::NotNeeded("no SDMA engine was started")
    }
}

/// Stage 3: MES (and with it the KIQ on pipe 1 and the scheduler ring).
fn halt_mes(gpu: &Gpu<'_>) -> Outcome {
    if gpu.entered >= Step::Mes && gpu.mes_started {
        outcome(
            mes_start::halt(&gpu.bus, &gpu.ips.gc.bases, gpu.ips.generation)
                .map(|v| alloc::format!("CP_MES_CNTL = {v:#010x} (pipes reset, MES_HALT)")),
        )
    } else {
        Outcome::NotNeeded("MES was never started")
    }
}

/// Stage 4: the MEC, by the GC version's block.
fn halt_mec(gpu: &mut Gpu<'_>) -> Outcome {
    if gpu.entered >= Step::Rlc {
        gpu.blocks.gfx.halt_mec(gpu)
    } else {
        Outcome::NotNeeded("the MEC was never started")
    }
}

/// Stage 5: the GFXHUB, once nothing on the CP side fetches through it,
/// by the GC version's block.
fn gfxhub_off(gpu: &Gpu<'_>) -> Outcome {
    gpu.blocks.gfx.gfxhub_off(gpu)
}

/// Stage 7: the PSP's ring.
fn psp_ring(gpu: &Gpu<'_>) -> Outcome {
    if gpu.entered < Step::Psp {
        return Outcome::NotNeeded("the PSP step never ran");
    }
    match PspRegs::for_version(gpu.ips.mp0.version.triple()) {
        Some(regs) => outcome(
            psp::destroy_rings(&gpu.bus, gpu.platform.clock(), regs, &gpu.ips.mp0.bases).map(
                |live| {
                    if live {
                        String::from("DESTROY_RINGS answered")
                    } else {
                        String::from("no ring size in C2PMSG_71: no ring was created")
                    }
                },
            ),
        ),
        None => Outcome::NotNeeded("no PSP registers for this MP0: no ring was created"),
    }
}

/// Stage 6: the SMU hears that the driver lets the device go, where
/// Linux tells it: `smu_hw_fini()` → `smu_disable_dpms()`, which runs
/// after the GFX block's `hw_fini` and before the PSP's (the reverse of
/// the IP order, SMC after GFX). MP1 13.0.6 takes
/// `PrepareForDriverUnload` (`smu_v13_0_6_notify_unload()`); Linux ignores
/// its answer, so an answer other than OK is reported as done, and only a
/// mailbox that does not answer at all fails. MP1 13.0.0 and 14.0.2 take
/// nothing ([`barebell::smu::PMFW_HANDLES_UNLOAD`]).
fn smu_unload(gpu: &Gpu<'_>) -> Outcome {
    use barebell::smu::{Mp1, SmuError, notify_unload};
    if gpu.entered < Step::Psp {
        return Outcome::NotNeeded("the PSP step, which enables the SMU's features, never ran");
    }
    let Some(mp1) = Mp1::for_version(gpu.ips.mp1.version.triple()) else {
        return Outcome::NotNeeded("barebell drives no SMU mailbox on this MP1");
    };
    let (bus, clock, bases) = (&gpu.bus, gpu.platform.clock(), &gpu.ips.mp1.bases);
    let rlc = || rlc_stop_gfx94(gpu);
    match notify_unload(bus, clock, mp1, bases) {
        Ok(Some(msg)) => match rlc() {
            Ok(stopped) => Outcome::Done(alloc::format!(
                "{}: {} ({msg:#x}) answered{stopped}",
                mp1.name,
                mp1.unload_name
            )),
            Err(e) => Outcome::Failed(e),
        },
        Ok(None) => Outcome::NotNeeded(barebell::smu::PMFW_HANDLES_UNLOAD),
        Err(SmuError::Response { msg, resp, .. }) => Outcome::Done(alloc::format!(
            "{}: {} ({msg:#x}) answered {resp:#x}, which Linux ignores",
            mp1.name,
            mp1.unload_name
        )),
        Err(e) => Outcome::Failed(ErrorKind::SmuUnload(e)),
    }
}

/// The RLC stop `smu_disable_dpms()` ends with on GC 9.4.2 and later
/// (`gfx_v9_4_3_rlc_stop()` on every XCC, `gfx_v9_0_rlc_stop()` on GC
/// 9.4.2): "" on other generations.
fn rlc_stop_gfx94(gpu: &Gpu<'_>) -> Result<String, ErrorKind> {
    if gpu.ips.generation == barebell::ip::Generation::Gfx90a {
        // gfx_v9_0_rlc_stop() on the one GC.
        barebell::gfx::start_v9_0::rlc_stop(&gpu.bus.block(gpu.ips.gc.bases))
            .map_err(ErrorKind::Register)?;
        return Ok(String::from(
            "; RLC stopped (RLC_ENABLE_F32 clear, GUI-idle interrupts off)",
        ));
    }
    if gpu.ips.generation != barebell::ip::Generation::Gfx94 {
        return Ok(String::new());
    }
    let xccs: Vec<_> = gpu
        .ips
        .xccs()
        .iter()
        .map(|x| gpu.bus.block(x.bases))
        .collect();
    let n = barebell::gfx::start_v9_4_3::rlc_stop(&xccs).map_err(ErrorKind::CpStart)?;
    Ok(alloc::format!(
        "; RLC stopped on {n} XCCs (RLC_ENABLE_F32 clear, GUI-idle interrupts off)"
    ))
}

/// Stage 8: the IH ring, before its memory can go back.
fn ih_ring(gpu: &mut Gpu<'_>) -> Outcome {
    match gpu.ih.take() {
        Some(ring) => outcome(
            ring.disable(&gpu.bus)
                .map(|v| alloc::format!("IH_RB_CNTL = {v:#010x} (RB_ENABLE clear), pointers 0")),
        ),
        // The ih step began and failed half-way: disable by the
        // registers alone.
        None if gpu.entered >= Step::Ih => {
            let osssys = gpu.ips.osssys;
            match barebell::ih::IhRegs::for_version(osssys.version.triple()) {
                Some(regs) => outcome(
                    barebell::ih::irq_disable(&gpu.bus, &osssys.bases, regs)
                        .map(|v| alloc::format!("IH_RB_CNTL = {v:#010x} (RB_ENABLE clear)")),
                ),
                None => Outcome::NotNeeded("no IH registers for this OSSSYS: nothing was enabled"),
            }
        }
        None => Outcome::NotNeeded("the IH step never ran"),
    }
}

/// Stage 9: the MMHUB (the GART), after the PSP and the IH ring, which reach
/// memory through it (programmed in the gmc step).
fn mmhub_off(gpu: &Gpu<'_>) -> Outcome {
    gpu.blocks.gmc.mmhub_off(gpu)
}

/// Stage 10: the doorbell and self-ring apertures.
fn doorbells_closed(gpu: &Gpu<'_>) -> Outcome {
    if gpu.entered < Step::Nbio {
        return Outcome::NotNeeded("the NBIO step never ran");
    }
    let nbif = gpu.ips.nbif;
    match Nbio::for_version(nbif.version.triple(), nbif.bases) {
        Ok(n) => outcome(
            nbio::enable_doorbell_selfring(&gpu.bus, &n, None)
                .and_then(|()| nbio::enable_doorbell_aperture(&gpu.bus, &n, false))
                .map(|()| String::from("self-ring aperture and doorbell BAR closed")),
        ),
        Err(e) => Outcome::Failed(e.at(Step::Teardown).kind),
    }
}

/// Stage 11: Bus mastering.
fn bus_master_off(gpu: &Gpu<'_>) -> Outcome {
    if gpu.platform.set_bus_master(false) {
        Outcome::Done(String::from("PCI_COMMAND bus master cleared"))
    } else {
        Outcome::Unavailable("this platform cannot write PCI_COMMAND")
    }
}

/// Stage 12: Memory. The user memory is a window of the platform's DMA region
/// (it owns nothing itself); the region goes back with the platform.
fn release_memory(gpu: &mut Gpu<'_>) -> Outcome {
    let had_user = gpu.user.take().is_some();
    gpu.user_vram = None;
    gpu.ring_area = None;
    gpu.user_rings = None;
    Outcome::Done(alloc::format!(
        "{}; the DMA region goes back with the platform",
        if had_user {
            "user memory handed back"
        } else {
            "no user memory"
        }
    ))
}

/// Stage 13: `SCRATCH_REG6`: 0 when every stage before was done, 1 otherwise.
fn signature(gpu: &Gpu<'_>, done: bool) -> Outcome {
    if !(gpu.entered > Step::Start || gpu.start.is_some()) {
        return Outcome::NotNeeded("the bring-up wrote nothing to the device");
    }
    let v = u32::from(!done);
    let gc = crate::start::gc_bases(&gpu.ips);
    let written = crate::start::write_signature(&gpu.bus, &gc, gpu.ips.generation, None, v);
    // Read back: a vanished device drops the write.
    if written.is_ok()
        && let Ok((r6, _)) = crate::start::scratch_regs(gpu.ips.generation)
        && barebell::bus::Block::new(&gpu.bus, gc)
            .read(r6)
            .is_ok_and(|x| x == barebell::bus::ALL_ONES)
    {
        return Outcome::Failed(ErrorKind::DeviceGone {
            register: "SCRATCH_REG6",
        });
    }
    outcome(written.map(|()| {
        if done {
            String::from("SCRATCH_REG6 = 0 (finalized)")
        } else {
            String::from("SCRATCH_REG6 = 1 (teardown incomplete: the next run resets)")
        }
    }))
}

/// Every SDMA engine barebell may have started, stopped and halted
/// (`sdma_v6_0_hw_fini()` / `sdma_v7_0_hw_fini()` → `sdma_v*_enable(adev,
/// false)`; `sdma_v4_4_2_hw_fini()` → `sdma_v4_4_2_inst_enable(adev,
/// false, mask)` on every instance, which stops the queues and, the PSP
/// having loaded the firmware, leaves `HALT` alone). Linux halts every instance on every
/// teardown; barebell only after it opened a queue (engine 0 on SDMA 6/7,
/// every 4.4.2 instance on GC 9.4.3), since nothing else unhalts one.
fn sdma_halt(gpu: &Gpu<'_>) -> Outcome {
    let version = match barebell::sdma::SdmaVersion::for_generation(gpu.ips.generation) {
        Ok(v) => v,
        Err(e) => return Outcome::Failed(ErrorKind::NotImplemented(e)),
    };
    let Some(block) = gpu.blocks.sdma else {
        return Outcome::NotNeeded("the part has no SDMA block barebell drives");
    };
    let engines = block.engines(gpu);
    let n = engines.len();
    outcome(
        engines
            .into_iter()
            .try_for_each(|b| barebell::sdma::halt(&gpu.bus, b, version))
            .map(|()| {
                let how = if version == barebell::sdma::SdmaVersion::V4_4_2 {
                    "stopped, left running with the firmware the PSP loaded"
                } else {
                    "stopped and halted"
                };
                alloc::format!(
                    "{} engine{} {how} ({})",
                    n,
                    if n == 1 { "" } else { "s" },
                    version.name()
                )
            }),
    )
}

/// Teardown before discovery finished: only bus mastering to clear.
pub(crate) fn before_discovery(
    platform: &dyn barebell::platform::Platform,
    sink: &dyn Sink,
) -> TeardownReport {
    let mut stages = Vec::new();
    for s in Stage::ALL {
        let o = match s {
            Stage::BusMaster if platform.set_bus_master(false) => {
                Outcome::Done(String::from("PCI_COMMAND bus master cleared"))
            }
            Stage::BusMaster => Outcome::Unavailable("this platform cannot write PCI_COMMAND"),
            _ => Outcome::NotNeeded("discovery did not finish: nothing else was set up"),
        };
        sink.step(Step::Teardown, format_args!("{}: {o}", s.name()));
        stages.push((s, o));
    }
    TeardownReport { stages }
}
