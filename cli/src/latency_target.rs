//! The devices `barebell latency` measures against: the CP model with a
//! queue bound straight to it, or a model GPU whose queue was created by
//! one of the three mapping modes (MES ADD_QUEUE, direct HQD load, KIQ
//! MAP_QUEUES). Whatever the mode, submission is the same AQL path; what
//! differs is how the queue reached the CP and how long that took.

use barebell::aql::queue::{AqlQueue, QueueConfig};
use barebell::aql::signal::SignalMemory;
use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::mapper::{HqdRegs, QueueMapper};
use barebell::gfx::mes::{HwBases, Mes, Process, V11, V12};
use barebell::ip::Generation;
use barebell::time::StdClock;
use barebell_model::Seed;
use barebell_model::cp::{CpError, CpModel};
use barebell_model::mec_host::{GC_BASES, MecThread, ModelGpu, Service};
use barebell_model::thread::{CpThread, Idle};
use std::time::Instant;

pub const SLOTS: usize = 256;
/// The kernel object the model's placeholder host function answers to.
pub const KERNEL_OBJECT: u64 = 0x10_0000;
/// Page-table base the MES model is told the process uses; the model
/// checks queue memory against the windows registered for it.
const PTB: u64 = 0x7_0000_1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MappingMode {
    /// MES ADD_QUEUE (what KFD does on gfx11+).
    Mes,
    /// Direct HQD register load (what tinygrad's AM driver does).
    Direct,
    /// PM4 MAP_QUEUES on the KIQ ring (HWS/CPSCH style).
    Kiq,
}

impl MappingMode {
    pub fn name(self) -> &'static str {
        match self {
            MappingMode::Mes => "mes",
            MappingMode::Direct => "direct",
            MappingMode::Kiq => "kiq",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Navi31-class, gfx11 (MES API v11).
    Navi31,
    /// Navi48-class, gfx12 (uni-MES, API v12).
    Navi48,
}

impl Part {
    fn generation(self) -> Generation {
        match self {
            Part::Navi31 => Generation::Gfx11,
            Part::Navi48 => Generation::Gfx12,
        }
    }
}

/// What the measured loop needs, plus how to shut the device down.
pub struct Target {
    pub queue: AqlQueue<'static, SLOTS>,
    pub signal: &'static SignalMemory,
    /// Wall time of the mapping call (MQD build + firmware round trip).
    pub create_ns: Option<u64>,
    stop: Box<dyn FnOnce() -> Result<Vec<CpError>, String>>,
}

impl Target {
    /// A target built elsewhere (the hardware path): `stop` unmaps the
    /// queue and returns what the device recorded.
    pub fn new(
        queue: AqlQueue<'static, SLOTS>,
        signal: &'static SignalMemory,
        create_ns: Option<u64>,
        stop: Box<dyn FnOnce() -> Result<Vec<CpError>, String>>,
    ) -> Self {
        Target {
            queue,
            signal,
            create_ns,
            stop,
        }
    }

    /// Unmaps (where mapped), stops the model thread, returns the CP
    /// model's recorded errors.
    pub fn finish(self) -> Result<Vec<CpError>, String> {
        (self.stop)()
    }
}

/// Shared CP model settings: host time for timestamps, the placeholder
/// kernel, its duration.
fn configure(cp: &mut CpModel, kernel_ns: u64, time: fn() -> u64) {
    cp.use_time_source(time);
    cp.dispatch_ns = kernel_ns..=kernel_ns;
    cp.register_kernel(KERNEL_OBJECT, Box::new(|_| {}));
}

fn pin(cpu: Option<usize>) -> impl FnOnce() + Send + 'static {
    move || {
        if let Some(c) = cpu {
            let _ = crate::latency::pin_current_thread(c);
        }
    }
}

/// The queue bound straight to the CP model: no MQD, no firmware.
/// `after_spawn` runs as soon as the model thread exists (the caller pins
/// itself there: a thread spawned from a pinned thread starts confined to
/// its CPU, and an unpinned caller may share the model's CPU while it maps).
pub fn unmapped(
    seed: u64,
    kernel_ns: u64,
    time: fn() -> u64,
    idle: Idle,
    cpu: Option<usize>,
    after_spawn: &mut dyn FnMut(),
) -> Result<Target, String> {
    let mut model = CpModel::new(Seed(seed));
    configure(&mut model, kernel_ns, time);
    let q = barebell_model::host::queue::<SLOTS>(
        &mut model,
        QueueConfig {
            profiling: true,
            ..Default::default()
        },
        false,
    )
    .map_err(|e| e.to_string())?;
    let signal = &barebell_model::host::signals(&mut model, 1, 0)[0];
    let cp = CpThread::spawn_with(model, idle, pin(cpu))
        .map_err(|e| format!("starting the model thread: {e}"))?;
    after_spawn();
    Ok(Target {
        queue: q.queue,
        signal,
        create_ns: None,
        stop: Box::new(move || {
            let m = cp
                .stop()
                .map_err(|_| "the model thread panicked".to_string())?;
            Ok(m.errors().to_vec())
        }),
    })
}

/// A model GPU with the queue created through `mode`.
#[allow(clippy::too_many_arguments)] // a flat list of the CLI options it takes
pub fn mapped(
    mode: MappingMode,
    part: Part,
    seed: u64,
    kernel_ns: u64,
    time: fn() -> u64,
    idle: Idle,
    cpu: Option<usize>,
    after_spawn: &mut dyn FnMut(),
) -> Result<Target, String> {
    let generation = part.generation();
    let gpu = ModelGpu::new(generation, Seed(seed)).ok_or("building the model GPU")?;
    configure(&mut gpu.mec.cp(), kernel_ns, time);
    let config = QueueConfig {
        profiling: true,
        ..Default::default()
    };
    let placed = gpu
        .queue::<SLOTS>(doorbell_index::USERQUEUE_START, config)
        .ok_or("placing the queue")?;
    let signal = &barebell_model::host::signals(&mut gpu.mec.cp(), 1, 0)[0];
    let doorbells = Doorbells::linux_default();
    let err = |e: &dyn std::fmt::Display| format!("{} mapping: {e}", mode.name());
    match mode {
        MappingMode::Direct => {
            let mut m = barebell::gfx::hqd::DirectHqd::new(
                gpu.mec,
                StdClock::default(),
                GC_BASES,
                generation,
                doorbells,
            )
            .map_err(|e| err(&format_args!("{e:?}")))?;
            let res = placed.resources(1);
            let t = Instant::now();
            // SAFETY: `placed`'s memory is leaked and mapped for the device.
            let mapping = unsafe { m.map(&res) }.map_err(|e| err(&format_args!("{e:?}")))?;
            let create_ns = t.elapsed().as_nanos() as u64;
            let thread =
                MecThread::spawn_with(gpu.mec, Vec::new(), idle, pin(cpu)).map_err(|e| err(&e))?;
            after_spawn();
            Ok(Target {
                queue: placed.queue,
                signal,
                create_ns: Some(create_ns),
                stop: Box::new(move || {
                    thread
                        .stop()
                        .map_err(|_| "the model thread panicked".to_string())?;
                    m.unmap(&mapping)
                        .map_err(|e| format!("direct unmap: {e:?}"))?;
                    Ok(gpu.mec.cp().errors().to_vec())
                }),
            })
        }
        MappingMode::Kiq => {
            doorbells
                .program(gpu.mec, &HqdRegs::for_generation(generation), &GC_BASES)
                .map_err(|e| err(&format_args!("{e:?}")))?;
            let (ring, model) = gpu.kiq::<256>().ok_or("placing the KIQ ring")?;
            let model = Box::leak(Box::new(model));
            let services: Vec<Service> = vec![Box::new(move || model.service())];
            let thread =
                MecThread::spawn_with(gpu.mec, services, idle, pin(cpu)).map_err(|e| err(&e))?;
            after_spawn();
            let mut k = barebell::gfx::kiq::Kiq::new(
                ring,
                StdClock::default(),
                core::hint::spin_loop,
                generation,
                doorbells,
            );
            k.set_resources(0xFFFF_FFFF)
                .map_err(|e| err(&format_args!("{e:?}")))?;
            let res = placed.resources(1);
            let t = Instant::now();
            // SAFETY: as above.
            let mapping = unsafe { k.map(&res) }.map_err(|e| err(&format_args!("{e:?}")))?;
            let create_ns = t.elapsed().as_nanos() as u64;
            Ok(Target {
                queue: placed.queue,
                signal,
                create_ns: Some(create_ns),
                stop: Box::new(move || {
                    k.unmap(&mapping).map_err(|e| format!("KIQ unmap: {e:?}"))?;
                    thread
                        .stop()
                        .map_err(|_| "the model thread panicked".to_string())?;
                    Ok(gpu.mec.cp().errors().to_vec())
                }),
            })
        }
        MappingMode::Mes => {
            doorbells
                .program(gpu.mec, &HqdRegs::for_generation(generation), &GC_BASES)
                .map_err(|e| err(&format_args!("{e:?}")))?;
            let (ring, model) = gpu.mes::<1024>().ok_or("placing the MES ring")?;
            let model = Box::leak(Box::new(model));
            for (b, l) in placed.ranges() {
                model.map_process_memory(PTB, b, l);
            }
            let services: Vec<Service> = vec![Box::new(move || model.service())];
            let thread =
                MecThread::spawn_with(gpu.mec, services, idle, pin(cpu)).map_err(|e| err(&e))?;
            after_spawn();
            let process = Process {
                pasid: 0x8001,
                page_table_base: PTB,
                va_start: 0,
                va_end: (1 << 47) - 1,
                context: gpu.process_context(),
            };
            let res = placed.resources(1);
            // The API version follows the part: v11 frames on gfx11, v12
            // (uni-MES, with SET_HW_RSRC_1) on gfx12.
            let (create_ns, unmap): (u64, Box<dyn FnOnce() -> Result<(), String>>) =
                match generation {
                    Generation::Gfx11 => {
                        let mut mes: Mes<'_, _, _, 1024, V11> =
                            Mes::new(ring, StdClock::default(), core::hint::spin_loop, doorbells);
                        mes.register_process(1, process)
                            .map_err(|e| err(&format_args!("{e:?}")))?;
                        mes.set_hw_resources(&HwBases::default())
                            .map_err(|e| err(&format_args!("{e:?}")))?;
                        let t = Instant::now();
                        // SAFETY: as above.
                        let mapping =
                            unsafe { mes.map(&res) }.map_err(|e| err(&format_args!("{e:?}")))?;
                        let ns = t.elapsed().as_nanos() as u64;
                        (
                            ns,
                            Box::new(move || {
                                mes.unmap(&mapping)
                                    .map_err(|e| format!("MES REMOVE_QUEUE: {e:?}"))
                            }),
                        )
                    }
                    Generation::Gfx12 => {
                        let mut mes: Mes<'_, _, _, 1024, V12> =
                            Mes::new(ring, StdClock::default(), core::hint::spin_loop, doorbells);
                        mes.register_process(1, process)
                            .map_err(|e| err(&format_args!("{e:?}")))?;
                        mes.set_hw_resources(&HwBases::default())
                            .map_err(|e| err(&format_args!("{e:?}")))?;
                        mes.set_hw_resources_1()
                            .map_err(|e| err(&format_args!("{e:?}")))?;
                        let t = Instant::now();
                        // SAFETY: as above.
                        let mapping =
                            unsafe { mes.map(&res) }.map_err(|e| err(&format_args!("{e:?}")))?;
                        let ns = t.elapsed().as_nanos() as u64;
                        (
                            ns,
                            Box::new(move || {
                                mes.unmap(&mapping)
                                    .map_err(|e| format!("MES REMOVE_QUEUE: {e:?}"))
                            }),
                        )
                    }
                };
            Ok(Target {
                queue: placed.queue,
                signal,
                create_ns: Some(create_ns),
                stop: Box::new(move || {
                    unmap()?;
                    thread
                        .stop()
                        .map_err(|_| "the model thread panicked".to_string())?;
                    Ok(gpu.mec.cp().errors().to_vec())
                }),
            })
        }
    }
}
