//! Bring-up after RLC autoload on the model GPU, inside the VM: start MES,
//! bring up the rings each mapping needs by register programming, map one
//! user queue, run a dispatch through barebell's `AqlQueue` and wait for
//! its completion signal, then print `queue ready`.
//!
//! The steps are the host's (`cli/src/bringup_queue.rs`, which follows
//! `mes_v11_0_enable`, `gfx_v11_0_kiq_setting` + KIQ MAP_QUEUES for the
//! scheduler ring on gfx11, and both uni-MES pipes with `map_legacy_kq` on
//! gfx12), run with the same `no_std` runtime code against the same
//! `no_std + alloc` model. The difference is scheduling: there is one CPU
//! and no threads, so the firmware models are serviced inline from the
//! runtime's pause closures (exactly as the host's bring-up does) and the
//! CP model is stepped to idle after the doorbell store.
//!
//! Discovery, PSP and RLC (the earlier steps, which need several real
//! firmware blobs) are not run here; they run on the host only.

use crate::println;
use alloc::boxed::Box;
use barebell::aql::Dispatch;
use barebell::hqd::DirectHqd;
use barebell::kiq::{Kiq, KiqRing};
use barebell::kiq_hqd::{KiqSlot, bring_up};
use barebell::latency::tsc::{self, TscClock, TscScale};
use barebell::mapper::{Doorbells, HqdRegs, QueueMapper, doorbell_index};
use barebell::mes::{HwBases, Mes, MesRing, Process, V11, V12};
use barebell::mes_start::{
    MesRingParts, MesStart, load_pipe_ring, map_legacy_scheduler_ring, map_scheduler_ring, start,
};
use barebell::mqd::Generation;
use barebell::queue::QueueConfig;
use barebell::signal::Condition;
use barebell_sim::Seed;
use barebell_sim::kiq::KiqModel;
use barebell_sim::mec::Mec;
use barebell_sim::mec_host::{GC_BASES, ModelGpu};
use barebell_sim::mes::{MesApiVersion, MesModel};
use core::fmt::Debug;
use core::sync::atomic::{AtomicU64, Ordering};

const KERNEL: u64 = 0x7000;
const BOUND_NS: u64 = 2_000_000_000;
const KIQ_RING: usize = 256;
const MES_RING: usize = 1024;
/// The page-table root the MES model is told the process uses.
const PTB: u64 = 0x7_0000_3000;
const MAX_STEPS: u64 = 1_000_000;

type Pause = Box<dyn FnMut()>;

static LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// How the user queue reaches an HQD.
#[derive(Debug, Clone, Copy)]
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

    fn name(self) -> &'static str {
        match self {
            Mapping::Mes => "mes",
            Mapping::Direct => "direct",
            Mapping::Kiq => "kiq",
        }
    }
}

fn gen_name(g: Generation) -> &'static str {
    match g {
        Generation::Gfx11 => "gfx11",
        Generation::Gfx12 => "gfx12",
    }
}

/// Logs the error's detail and turns it into the run's failure reason.
fn fail<E: Debug>(step: &'static str) -> impl Fn(E) -> &'static str {
    move |x| {
        println!("UK ERROR bring-up {step}: {x:?}");
        step
    }
}

/// KIQ brought up by register programming (pipe 1, queue 0), with its
/// model serviced from the mapper's pause.
fn kiq_up(
    gpu: &ModelGpu,
    generation: Generation,
    scale: TscScale,
) -> Result<Kiq<'static, TscClock, Pause, KIQ_RING>, &'static str> {
    let (mem, mqd, eop) = gpu.kiq_parts::<KIQ_RING>();
    let slot = KiqSlot {
        pipe: 1,
        queue: 0,
        doorbell: doorbell_index::KIQ,
    };
    // SAFETY: leaked, device-mapped memory; the MQD page is fresh.
    unsafe { bring_up(gpu.mec, &GC_BASES, generation, slot, mem, mqd, eop) }
        .map_err(fail("KIQ bring-up"))?;
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
    let mut kiq = Kiq::new(
        ring,
        TscClock(scale),
        pause,
        generation,
        Doorbells::linux_default(),
    );
    // Keep user queues off the KIQ's own slot (pipe 1, queue 0).
    kiq.set_allowed_slots([0xFF, 0xFE, 0xFF, 0xFF]);
    println!(
        "UK BRINGUP {} step kiq: KIQ HQD loaded by register programming (pipe 1 queue 0)",
        gen_name(generation)
    );
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

/// Maps one user queue with `mapper`, runs a dispatch, unmaps.
fn user_queue(
    gpu: &ModelGpu,
    mapper: &mut dyn QueueMapper,
    generation: Generation,
    mode: Mapping,
    sched: Option<&MesModel<'static, 'static>>,
    scale: TscScale,
) -> Result<(), &'static str> {
    let q = gpu
        .queue::<64>(doorbell_index::USERQUEUE_START, QueueConfig::default())
        .ok_or("placing the user queue")?;
    if let Some(m) = sched {
        for (b, l) in q.ranges() {
            m.map_process_memory(PTB, b, l);
        }
    }
    // SAFETY: leaked, device-mapped queue memory.
    let mapping = unsafe { mapper.map(&q.resources(1)) }.map_err(fail("mapping the user queue"))?;
    gpu.mec.cp().register_kernel(
        KERNEL,
        Box::new(|_| {
            LAUNCHES.fetch_add(1, Ordering::Relaxed);
        }),
    );
    let sig = barebell_sim::host::signals(&mut gpu.mec.cp(), 1, 1);
    let signal = sig.first().ok_or("no signal")?;
    let p = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(signal.handle())
        .packet()
        .map_err(fail("dispatch packet"))?;
    let clock = TscClock(scale);
    let before = LAUNCHES.load(Ordering::Relaxed);
    let id = q
        .queue
        .submit(&p, &clock, BOUND_NS)
        .map_err(fail("submit"))?;
    gpu.mec
        .run_until_idle(MAX_STEPS)
        .ok_or("the model did not go idle after the dispatch")?;
    signal
        .wait(Condition::Eq, 0, &clock, BOUND_NS)
        .map_err(fail("completion signal"))?;
    if LAUNCHES.load(Ordering::Relaxed) != before + 1 {
        return Err("the model's kernel did not see the dispatch");
    }
    println!(
        "UK BRINGUP {} queue ready: {} mapping, doorbell {:#x}, dispatch {id} completed (signal 1 -> 0)",
        gen_name(generation),
        mode.name(),
        q.doorbell
    );
    defmt::info!(
        "BRINGUP {=str} queue ready: {=str} mapping",
        gen_name(generation),
        mode.name()
    );
    mapper.unmap(&mapping).map_err(fail("unmapping"))?;
    let cp = gpu.mec.cp();
    if !cp.errors().is_empty() {
        println!("UK ERROR bring-up CP model errors: {:?}", cp.errors());
        return Err("the CP model recorded errors");
    }
    Ok(())
}

type Direct = DirectHqd<&'static Mec<'static>, TscClock>;

fn direct(gpu: &ModelGpu, g: Generation, scale: TscScale) -> Result<Direct, &'static str> {
    DirectHqd::new(
        gpu.mec,
        TscClock(scale),
        GC_BASES,
        g,
        Doorbells::linux_default(),
    )
    .map_err(fail("direct HQD"))
}

/// One full chain on a fresh model GPU, ending in a completed dispatch.
pub fn run(
    generation: Generation,
    mode: Mapping,
    scale: TscScale,
    seed: u64,
) -> Result<(), &'static str> {
    let t0 = tsc::start();
    let gn = gen_name(generation);
    let gpu = ModelGpu::new(generation, Seed(seed)).ok_or("building the model GPU")?;
    Doorbells::linux_default()
        .program(gpu.mec, &HqdRegs::for_generation(generation), &GC_BASES)
        .map_err(fail("doorbell range"))?;
    let clock = TscClock(scale);
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
            .map_err(fail("MES start"))?;
            println!("UK BRINGUP {gn} step mes: MES pipe 0 unhalted; versions {versions:x?}");
            let mut kiq = kiq_up(&gpu, generation, scale)?;
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
            .map_err(fail("MES scheduler ring via KIQ"))?;
            let sched: &'static MesModel<'static, 'static> = Box::leak(Box::new(
                MesModel::from_mec(gpu.mec, MesApiVersion::V11)
                    .ok_or("the MES model found no scheduler ring")?,
            ));
            let pause: Pause = Box::new(move || {
                sched.service();
            });
            let ring = MesRing {
                memory: mem,
                doorbell: gpu
                    .doorbell(doorbell_index::MES_RING0)
                    .ok_or("MES doorbell")?,
            };
            let mut mes: Mes<'_, _, _, MES_RING, V11> =
                Mes::new(ring, clock, pause, Doorbells::linux_default());
            mes.set_versions(versions);
            mes.set_hw_resources(&HwBases::default())
                .map_err(fail("SET_HW_RSRC"))?;
            mes.query_status().map_err(fail("QUERY_SCHEDULER_STATUS"))?;
            println!(
                "UK BRINGUP {gn} step mes: scheduler ring mapped by KIQ MAP_QUEUES; SET_HW_RSRC and QUERY_SCHEDULER_STATUS answered"
            );
            match mode {
                Mapping::Mes => {
                    mes.register_process(1, process(&gpu))
                        .map_err(fail("process"))?;
                    user_queue(&gpu, &mut mes, generation, mode, Some(sched), scale)?
                }
                Mapping::Kiq => user_queue(&gpu, &mut kiq, generation, mode, None, scale)?,
                Mapping::Direct => {
                    let mut d = direct(&gpu, generation, scale)?;
                    user_queue(&gpu, &mut d, generation, mode, None, scale)?
                }
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
            .map_err(fail("MES start"))?;
            println!(
                "UK BRINGUP {gn} step mes: uni-MES pipes 0 and 1 unhalted; versions {versions:x?}"
            );
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
            .map_err(fail("MES pipe 1 ring"))?;
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
                Mes::new(ring1, TscClock(scale), pause1, Doorbells::linux_default());
            kiq_pipe.set_versions(versions);
            kiq_pipe
                .set_hw_resources(&HwBases::default())
                .map_err(fail("pipe 1 SET_HW_RSRC"))?;
            kiq_pipe
                .set_hw_resources_1()
                .map_err(fail("pipe 1 SET_HW_RSRC_1"))?;
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
            .map_err(fail("scheduler ring via map_legacy_kq"))?;
            let sched: &'static MesModel<'static, 'static> = Box::leak(Box::new(
                MesModel::from_mec(gpu.mec, MesApiVersion::V12)
                    .ok_or("the MES model found no scheduler ring")?,
            ));
            let pause0: Pause = Box::new(move || {
                sched.service();
            });
            let ring0 = MesRing {
                memory: m0,
                doorbell: gpu
                    .doorbell(doorbell_index::MES_RING0)
                    .ok_or("MES doorbell")?,
            };
            let mut mes: Mes<'_, _, _, MES_RING, V12> =
                Mes::new(ring0, TscClock(scale), pause0, Doorbells::linux_default());
            mes.set_versions(versions);
            mes.set_hw_resources(&HwBases::default())
                .map_err(fail("SET_HW_RSRC"))?;
            mes.set_hw_resources_1().map_err(fail("SET_HW_RSRC_1"))?;
            println!(
                "UK BRINGUP {gn} step mes: pipe 1 ring loaded by registers; scheduler ring mapped by map_legacy_kq ADD_QUEUE; SET_HW_RSRC/_1 answered"
            );
            match mode {
                Mapping::Mes => {
                    mes.register_process(1, process(&gpu))
                        .map_err(fail("process"))?;
                    user_queue(&gpu, &mut mes, generation, mode, Some(sched), scale)?
                }
                Mapping::Kiq => {
                    let mut kiq = kiq_up(&gpu, generation, scale)?;
                    user_queue(&gpu, &mut kiq, generation, mode, None, scale)?
                }
                Mapping::Direct => {
                    let mut d = direct(&gpu, generation, scale)?;
                    user_queue(&gpu, &mut d, generation, mode, None, scale)?
                }
            }
        }
    }
    let us = scale.to_ns(tsc::end().wrapping_sub(t0)) / 1000;
    println!(
        "UK BRINGUP {gn} {} done in {us}us (model GPU built, MES started, rings up, queue mapped, dispatch completed, unmapped)",
        mode.name()
    );
    Ok(())
}
