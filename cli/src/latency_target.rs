//! The devices `barebell latency` measures against: the CP model with a
//! queue bound straight to it (no bring-up), or a device brought up by the
//! one bring-up sequence with its user queue mapped by one of the three
//! modes (MES ADD_QUEUE, direct HQD load, KIQ MAP_QUEUES): the model GPU
//! (`VirtualGpu`) or a GPU. Whatever the mode, submission is the same AQL
//! path; what differs is how the queue reached the CP and how long that
//! took.

use crate::latency_kernel::{KernelSpec, Placed};
use crate::target::{Device, PartArg};
use barebell::aql::packet::KernelDispatchPacket;
use barebell::aql::queue::{AqlQueue, QueueConfig};
use barebell::aql::signal::SignalMemory;
use barebell_bringup::{FirmwareDir, Mapping, Sink, Step};
use barebell_model::Seed;
use barebell_model::cp::{CpError, CpModel};
use barebell_model::thread::{CpThread, Idle};

pub const SLOTS: usize = barebell_bringup::queue::SLOTS;
/// The kernel object the model's placeholder host function answers to.
pub const KERNEL_OBJECT: u64 = 0x10_0000;

/// What the measured loop needs.
#[derive(Debug)]
pub struct Target<'a> {
    pub queue: &'a AqlQueue<'a, SLOTS>,
    pub signal: &'a SignalMemory,
    /// Host wall time of the mapping call (MQD build + firmware or
    /// register round trip; on the model the firmware stand-ins run in
    /// that time, on this thread).
    pub create_ns: Option<u64>,
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
            let _ = crate::cpu::pin_current_thread(c);
        }
    }
}

/// The queue bound straight to the CP model: no MQD, no firmware, no
/// bring-up. `after_spawn` runs as soon as the model thread exists (the
/// caller pins itself there: a thread spawned from a pinned thread starts
/// confined to its CPU, and an unpinned caller may share the model's CPU).
/// `f` measures; the CP model's recorded errors come back with its result.
#[allow(clippy::too_many_arguments)] // a flat list of the CLI options it takes
pub fn with_unmapped<R>(
    seed: u64,
    kernel_ns: u64,
    kernel: Option<(&KernelSpec, PartArg)>,
    barrier: bool,
    time: fn() -> u64,
    idle: Idle,
    cpu: Option<usize>,
    after_spawn: &mut dyn FnMut(),
    f: impl FnOnce(&Target<'_>, Work) -> R,
) -> Result<(R, Vec<CpError>), String> {
    let mut model = CpModel::new(Seed(seed));
    configure(&mut model, kernel_ns, time);
    let q = barebell_model_host::queue::queue::<SLOTS>(
        &mut model,
        QueueConfig {
            profiling: true,
            ..Default::default()
        },
        false,
    )
    .map_err(|e| e.to_string())?;
    let signal = &barebell_model_host::queue::signals(&mut model, 1, 0)[0];
    let placed = match kernel {
        Some((k, part)) => {
            let (kpart, target) = crate::model_launch::part(part)?;
            model.shader.target = target;
            model.shader.xccs = crate::model_launch::xccs(part);
            let ctx =
                barebell_kernel::LaunchContext::new(kpart, q.queue.memory().descriptor_address());
            Some(k.place(&mut model, &ctx, signal.handle())?)
        }
        None => None,
    };
    let cp = CpThread::spawn_with(model, idle, pin(cpu))
        .map_err(|e| format!("starting the model thread: {e}"))?;
    after_spawn();
    let t = Target {
        queue: &q.queue,
        signal,
        create_ns: None,
    };
    let r = f(&t, work(placed.as_ref(), barrier));
    let m = cp
        .stop()
        .map_err(|_| "the model thread panicked".to_string())?;
    if m.errors().is_empty()
        && let Some(p) = &placed
    {
        p.check()?;
    }
    Ok((r, m.errors().to_vec()))
}

/// A sink that reports nothing and keeps host wall time, so the mapping
/// call is timed as the host sees it.
#[derive(Debug)]
struct Stopwatch(std::time::Instant);

impl Default for Stopwatch {
    fn default() -> Self {
        Stopwatch(std::time::Instant::now())
    }
}

impl Sink for Stopwatch {
    fn step(&self, _: Step, _: std::fmt::Arguments<'_>) {}
    fn wall_ns(&self) -> Option<u64> {
        u64::try_from(self.0.elapsed().as_nanos()).ok()
    }
}

/// The work for a placed kernel, else the barrier or the placeholder.
fn work(placed: Option<&Placed<'_>>, barrier: bool) -> Work {
    match placed {
        Some(p) => Work::Kernel(p.packet),
        None if barrier => Work::Barrier,
        None => Work::ModelKernel,
    }
}

/// What the measured loop submits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// A dispatch of the model CP's placeholder host function
    /// ([`KERNEL_OBJECT`]; a model convention).
    ModelKernel,
    /// A dispatch of a real kernel (`--kernel`), run by the model's
    /// shader engines.
    Kernel(KernelDispatchPacket),
    /// An AQL BARRIER_AND with no dependencies (`--packet barrier`).
    Barrier,
}

/// `device` brought up by the one bring-up sequence to a user queue
/// mapped by `mapping`, then `f` measures on it: on the model with the
/// MEC model on a thread of its own (pinned by `cpu`), on a GPU with its
/// own CP. The device is torn down after `f` (also when `f` or the
/// kernel placement failed); the CP model's recorded
/// errors (model only) come back with `f`'s result.
#[allow(clippy::too_many_arguments)] // a flat list of the CLI options it takes
pub fn with_device<R>(
    device: &Device,
    fw: &FirmwareDir,
    mapping: Mapping,
    kernel_ns: u64,
    kernel: Option<(&KernelSpec, PartArg)>,
    barrier: bool,
    time: fn() -> u64,
    idle: Idle,
    cpu: Option<usize>,
    after_spawn: &mut dyn FnMut(),
    f: impl FnOnce(&Target<'_>, Work) -> R,
) -> Result<(R, Vec<CpError>), String> {
    let fail = |e: &dyn std::fmt::Display| {
        format!(
            "{}: {} mapping: {e}{}",
            device.name(),
            mapping.name(),
            device.diagnostics()
        )
    };
    let watch = Stopwatch::default();
    let mut b = crate::device_launch::bring_up(device, fw, mapping, &watch)?;
    // A kernel goes into the bring-up's user memory, mapped in the page
    // tables the queue's VMID walks: the same code on the model and on a
    // GPU. A built-in kernel is rebuilt for the part discovery found.
    let placed = match kernel {
        Some((k, _)) => match crate::device_launch::place_kernel(&mut b, k) {
            Ok(p) => Some(p),
            Err(e) => {
                let torn = b.shutdown();
                return Err(
                    match crate::device_launch::teardown_verdict(device, &torn) {
                        Ok(()) => e,
                        Err(t) => format!("{e}\n{t}"),
                    },
                );
            }
        },
        None => None,
    };
    let q = match b.launcher.queue() {
        Ok(q) => q,
        Err(e) => {
            let e = e.to_string();
            let torn = b.shutdown();
            return Err(
                match crate::device_launch::teardown_verdict(device, &torn) {
                    Ok(()) => e,
                    Err(t) => format!("{e}\n{t}"),
                },
            );
        }
    };
    let t = Target {
        queue: &q.queue,
        signal: q.signal,
        create_ns: Some(q.create_ns),
    };
    let r = match device {
        Device::Model(m) => {
            configure(&mut m.cp(), kernel_ns, time);
            let w = work(placed.as_ref(), barrier);
            m.with_cp_thread(idle, pin(cpu), || {
                after_spawn();
                f(&t, w)
            })
            .map_err(|e| fail(&e))
        }
        Device::Hw(_) => {
            after_spawn();
            // Without a kernel: the barrier (the caller asks for the
            // empty kernel by default on a GPU).
            Ok(f(&t, work(placed.as_ref(), true)))
        }
    };
    // The device torn down whatever the run gave (issue 20: every exit).
    let torn = b.shutdown();
    let verdict = crate::device_launch::teardown_verdict(device, &torn);
    let r = match (r, verdict) {
        (Ok(r), Ok(())) => r,
        (Err(e), Ok(())) => return Err(e),
        (Ok(_), Err(t)) => return Err(fail(&t)),
        (Err(e), Err(t)) => return Err(format!("{e}\n{t}")),
    };
    let errors = match device {
        Device::Model(m) => m.cp().errors().to_vec(),
        Device::Hw(_) => Vec::new(),
    };
    if errors.is_empty()
        && let Some(p) = &placed
    {
        p.check()?;
    }
    Ok((r, errors))
}
