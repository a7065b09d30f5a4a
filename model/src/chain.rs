//! The bring-up chain after RLC autoload, on the model GPU, shared by
//! `barebell bringup --mapping` and the unikernel: start MES, bring up the
//! rings the chosen mapping needs by register programming, map one user
//! queue, run a dispatch through it, check the kernel ran and its signal
//! dropped, unmap. Follows the chains in `tests/harness/tests/
//! mapping_bringup.rs` (gfx11: `mes_v11_0_enable`, KIQ by
//! `gfx_v11_0_kiq_setting`, the scheduler ring by KIQ MAP_QUEUES; gfx12:
//! both uni-MES pipes, pipe 1's ring by registers, the scheduler ring by a
//! `map_legacy_kq` ADD_QUEUE).
//!
//! The firmware models are serviced inline from the runtime's pause
//! closures and the CP model is stepped to idle after the doorbell, so the
//! chain needs no threads (the unikernel has one CPU). The PSP/RLC model of
//! the earlier steps and this MEC/MES model are separate objects: RLC
//! autoload completing in one does not load firmware into the other.

use crate::Seed;
use crate::kiq::KiqModel;
use crate::mec_host::{GC_BASES, ModelGpu};
use crate::mes::{MesApiVersion, MesModel};
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use barebell::aql::packet::Dispatch;
use barebell::aql::queue::QueueConfig;
use barebell::aql::signal::Condition;
use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::hqd::DirectHqd;
use barebell::gfx::kiq::hqd::{KiqSlot, bring_up};
use barebell::gfx::kiq::{Kiq, KiqRing};
use barebell::gfx::mapper::{HqdRegs, QueueMapper};
use barebell::gfx::mes::rings::MesRingParts;
use barebell::gfx::mes::rings::load_pipe_ring;
use barebell::gfx::mes::rings::map_legacy_scheduler_ring;
use barebell::gfx::mes::rings::map_scheduler_ring;
use barebell::gfx::mes::start::{MesStart, start};
use barebell::gfx::mes::{HwBases, Mes, MesMemory, MesRing, Process, V11, V12};
use barebell::ip::Generation;
use barebell::time::Clock;
use core::sync::atomic::{AtomicU64, Ordering};

/// How the user queue reaches an HQD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapping {
    /// MES ADD_QUEUE on the scheduler ring.
    Mes,
    /// HQD registers written directly.
    Direct,
    /// KIQ MAP_QUEUES.
    Kiq,
}

impl Mapping {
    pub const ALL: [Mapping; 3] = [Mapping::Mes, Mapping::Direct, Mapping::Kiq];

    pub fn name(self) -> &'static str {
        match self {
            Mapping::Mes => "mes",
            Mapping::Direct => "direct",
            Mapping::Kiq => "kiq",
        }
    }
}

/// Where the chain reports progress.
pub trait Report {
    /// A finished step, e.g. `step mes: MES pipe 0 unhalted; …`.
    fn step(&mut self, line: core::fmt::Arguments<'_>);
    /// The queue was mapped and a dispatch through it completed.
    fn queue_ready(&mut self, mapping: Mapping, doorbell: u32, packet_id: u64);
}

const KERNEL: u64 = 0x7000;
const MAX_STEPS: u64 = 1_000_000;
const BOUND_NS: u64 = 2_000_000_000;
const KIQ_RING: usize = 256;
const MES_RING: usize = 1024;
/// The page-table root the MES model is told the process uses.
const PTB: u64 = 0x7_0000_3000;

type Pause = Box<dyn FnMut()>;

fn e(what: &str) -> impl Fn(&dyn core::fmt::Debug) -> String + '_ {
    move |x| format!("{what}: {x:?}")
}

/// KIQ brought up by register programming, with its model and mapper.
fn kiq_up<C: Clock>(
    gpu: &ModelGpu,
    generation: Generation,
    clock: C,
    report: &mut dyn Report,
) -> Result<Kiq<'static, C, Pause, KIQ_RING>, String> {
    let (mem, mqd, eop) = gpu.kiq_parts::<KIQ_RING>();
    let slot = KiqSlot {
        pipe: 1,
        queue: 0,
        doorbell: doorbell_index::KIQ,
    };
    // SAFETY: leaked, device-mapped memory; the MQD page is fresh.
    unsafe { bring_up(gpu.mec, &GC_BASES, generation, slot, mem, mqd, eop) }
        .map_err(|x| e("KIQ bring-up")(&x))?;
    let model: &'static KiqModel<'static, 'static> = Box::leak(Box::new(
        KiqModel::from_mec(gpu.mec).ok_or("the KIQ model found no KIQ HQD")?,
    ));
    let pause: Pause = Box::new(move || {
        model.service();
    });
    let ring = KiqRing {
        memory: mem,
        doorbell: gpu.doorbell(doorbell_index::KIQ).ok_or("KIQ doorbell")?,
    };
    let mut kiq = Kiq::new(ring, clock, pause, generation, Doorbells::linux_default());
    // Keep user queues off the KIQ's own slot (pipe 1, queue 0).
    kiq.set_allowed_slots([0xFF, 0xFE, 0xFF, 0xFF]);
    report.step(format_args!(
        "step kiq: KIQ HQD loaded by register programming (pipe 1 queue 0)"
    ));
    Ok(kiq)
}

fn process(gpu: &ModelGpu) -> Process<'static> {
    Process {
        pasid: 0x8001,
        page_table_base: PTB,
        va_start: 0,
        va_end: (1 << 47) - 1,
        context: gpu.process_context(),
    }
}

/// Maps one user queue with `mapper`, runs a dispatch, checks that the
/// kernel ran once and the signal dropped, unmaps.
fn user_queue<C: Clock>(
    gpu: &ModelGpu,
    mapper: &mut dyn QueueMapper,
    mode: Mapping,
    sched: Option<&MesModel<'static, 'static>>,
    clock: &C,
    report: &mut dyn Report,
) -> Result<(), String> {
    let q = gpu
        .queue::<64>(doorbell_index::USERQUEUE_START, QueueConfig::default())
        .ok_or("placing the user queue")?;
    if let Some(m) = sched {
        for (b, l) in q.ranges() {
            m.map_process_memory(PTB, b, l);
        }
    }
    // SAFETY: leaked, device-mapped queue memory.
    let mapping =
        unsafe { mapper.map(&q.resources(1)) }.map_err(|x| e("mapping the user queue")(&x))?;
    let launches = Arc::new(AtomicU64::new(0));
    let counter = launches.clone();
    gpu.mec.cp().register_kernel(
        KERNEL,
        Box::new(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        }),
    );
    let sig = crate::host::signals(&mut gpu.mec.cp(), 1, 1);
    let signal = sig.first().ok_or("no signal")?;
    let p = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(signal.handle())
        .packet()
        .map_err(|x| e("packet")(&x))?;
    let id = q
        .queue
        .submit(&p, clock, BOUND_NS)
        .map_err(|x| e("submit")(&x))?;
    gpu.mec
        .run_until_idle(MAX_STEPS)
        .ok_or("the model did not go idle")?;
    signal
        .wait(Condition::Eq, 0, clock, BOUND_NS)
        .map_err(|x| e("completion")(&x))?;
    let ran = launches.load(Ordering::Relaxed);
    if ran != 1 {
        return Err(format!("the dispatch's kernel ran {ran} times, not once"));
    }
    report.queue_ready(mode, q.doorbell, id);
    mapper.unmap(&mapping).map_err(|x| e("unmapping")(&x))?;
    let errors = gpu.mec.cp().errors().to_vec();
    if !errors.is_empty() {
        return Err(format!("the CP model recorded errors: {errors:?}"));
    }
    Ok(())
}

/// The MES model of the scheduler ring the runtime just mapped (found
/// through the MEC, as firmware would), the pause that services it, and
/// the runtime's view of that ring.
fn scheduler<const N: usize>(
    gpu: &ModelGpu,
    api: MesApiVersion,
    memory: &'static MesMemory<N>,
) -> Result<
    (
        &'static MesModel<'static, 'static>,
        Pause,
        MesRing<'static, N>,
    ),
    String,
> {
    let sched: &'static MesModel<'static, 'static> = Box::leak(Box::new(
        MesModel::from_mec(gpu.mec, api).ok_or("the MES model found no scheduler ring")?,
    ));
    let pause: Pause = Box::new(move || {
        sched.service();
    });
    let ring = MesRing {
        memory,
        doorbell: gpu
            .doorbell(doorbell_index::MES_RING0)
            .ok_or("MES doorbell")?,
    };
    Ok((sched, pause, ring))
}

/// A user queue loaded straight into an HQD, which needs neither MES nor
/// the KIQ.
fn direct_queue<C: Clock + Clone>(
    gpu: &ModelGpu,
    generation: Generation,
    clock: &C,
    report: &mut dyn Report,
) -> Result<(), String> {
    let mut d = DirectHqd::new(
        gpu.mec,
        clock.clone(),
        GC_BASES,
        generation,
        Doorbells::linux_default(),
    )
    .map_err(|x| e("direct HQD")(&x))?;
    user_queue(gpu, &mut d, Mapping::Direct, None, clock, report)
}

/// Runs the chain for `generation`, mapping one user queue by `mode`.
pub fn run<C: Clock + Clone>(
    generation: Generation,
    mode: Mapping,
    seed: u64,
    clock: C,
    report: &mut dyn Report,
) -> Result<(), String> {
    let gpu = ModelGpu::new(generation, Seed(seed)).ok_or("building the model GPU")?;
    Doorbells::linux_default()
        .program(gpu.mec, &HqdRegs::for_generation(generation), &GC_BASES)
        .map_err(|x| e("doorbell range")(&x))?;
    let clock = clock.clone();
    match generation {
        Generation::Gfx11 => {
            let versions = start(
                gpu.mec,
                &clock,
                &GC_BASES,
                generation,
                &MesStart {
                    uc_start: [0x10_0000, 0],
                    kiq_pipe: false,
                },
            )
            .map_err(|x| e("MES start")(&x))?;
            report.step(format_args!(
                "step mes: MES pipe 0 unhalted; versions {versions:x?}"
            ));
            let mut kiq = kiq_up(&gpu, generation, clock.clone(), report)?;
            let (mem, mqd, eop) = gpu.mes_parts::<MES_RING>();
            // SAFETY: leaked, device-mapped memory; the MQD page is fresh.
            unsafe {
                map_scheduler_ring(
                    &mut kiq,
                    MesRingParts {
                        ring: mem,
                        mqd,
                        eop,
                        doorbell: doorbell_index::MES_RING0,
                    },
                )
            }
            .map_err(|x| e("MES scheduler ring via KIQ")(&x))?;
            let (sched, pause, ring) = scheduler(&gpu, MesApiVersion::V11, mem)?;
            let mut mes: Mes<'_, _, _, MES_RING, V11> =
                Mes::new(ring, clock.clone(), pause, Doorbells::linux_default());
            mes.set_versions(versions);
            mes.set_hw_resources(&HwBases::default())
                .map_err(|x| e("SET_HW_RSRC")(&x))?;
            mes.query_status()
                .map_err(|x| e("QUERY_SCHEDULER_STATUS")(&x))?;
            report.step(format_args!(
                "step mes: scheduler ring mapped by KIQ MAP_QUEUES; SET_HW_RSRC and QUERY_SCHEDULER_STATUS answered"
            ));
            match mode {
                Mapping::Mes => {
                    mes.register_process(1, process(&gpu))
                        .map_err(|x| e("process")(&x))?;
                    user_queue(&gpu, &mut mes, mode, Some(sched), &clock, report)
                }
                Mapping::Kiq => user_queue(&gpu, &mut kiq, mode, None, &clock, report),
                Mapping::Direct => direct_queue(&gpu, generation, &clock, report),
            }
        }
        Generation::Gfx12 => {
            let versions = start(
                gpu.mec,
                &clock,
                &GC_BASES,
                generation,
                &MesStart {
                    uc_start: [0x10_0000, 0x20_0000],
                    kiq_pipe: true,
                },
            )
            .map_err(|x| e("MES start")(&x))?;
            report.step(format_args!(
                "step mes: uni-MES pipes 0 and 1 unhalted; versions {versions:x?}"
            ));
            let (m1, q1, e1) = gpu.mes_parts::<MES_RING>();
            // SAFETY: leaked, device-mapped memory; the MQD page is fresh.
            unsafe {
                load_pipe_ring(
                    gpu.mec,
                    &GC_BASES,
                    generation,
                    1,
                    MesRingParts {
                        ring: m1,
                        mqd: q1,
                        eop: e1,
                        doorbell: doorbell_index::MES_RING1,
                    },
                )
            }
            .map_err(|x| e("MES pipe 1 ring")(&x))?;
            let pipe1: &'static MesModel<'static, 'static> = Box::leak(Box::new(
                MesModel::from_mec_pipe(gpu.mec, 1, MesApiVersion::V12)
                    .ok_or("the MES model found no pipe-1 ring")?,
            ));
            let pause1: Pause = Box::new(move || {
                pipe1.service();
            });
            let ring1 = MesRing {
                memory: m1,
                doorbell: gpu
                    .doorbell(doorbell_index::MES_RING1)
                    .ok_or("MES pipe 1 doorbell")?,
            };
            let mut kiq_pipe: Mes<'_, _, _, MES_RING, V12> =
                Mes::new(ring1, clock.clone(), pause1, Doorbells::linux_default());
            kiq_pipe.set_versions(versions);
            kiq_pipe
                .set_hw_resources(&HwBases::default())
                .map_err(|x| e("pipe 1 SET_HW_RSRC")(&x))?;
            kiq_pipe
                .set_hw_resources_1()
                .map_err(|x| e("pipe 1 SET_HW_RSRC_1")(&x))?;
            let (m0, q0, e0) = gpu.mes_parts::<MES_RING>();
            // SAFETY: as above.
            unsafe {
                map_legacy_scheduler_ring(
                    &mut kiq_pipe,
                    MesRingParts {
                        ring: m0,
                        mqd: q0,
                        eop: e0,
                        doorbell: doorbell_index::MES_RING0,
                    },
                )
            }
            .map_err(|x| e("scheduler ring via map_legacy_kq")(&x))?;
            let (sched, pause0, ring0) = scheduler(&gpu, MesApiVersion::V12, m0)?;
            let mut mes: Mes<'_, _, _, MES_RING, V12> =
                Mes::new(ring0, clock.clone(), pause0, Doorbells::linux_default());
            mes.set_versions(versions);
            mes.set_hw_resources(&HwBases::default())
                .map_err(|x| e("SET_HW_RSRC")(&x))?;
            mes.set_hw_resources_1()
                .map_err(|x| e("SET_HW_RSRC_1")(&x))?;
            report.step(format_args!(
                "step mes: pipe 1 ring loaded by registers; scheduler ring mapped by map_legacy_kq ADD_QUEUE; SET_HW_RSRC/_1 answered"
            ));
            match mode {
                Mapping::Mes => {
                    mes.register_process(1, process(&gpu))
                        .map_err(|x| e("process")(&x))?;
                    user_queue(&gpu, &mut mes, mode, Some(sched), &clock, report)
                }
                Mapping::Kiq => {
                    let mut kiq = kiq_up(&gpu, generation, clock.clone(), report)?;
                    user_queue(&gpu, &mut kiq, mode, None, &clock, report)
                }
                Mapping::Direct => direct_queue(&gpu, generation, &clock, report),
            }
        }
    }
}
