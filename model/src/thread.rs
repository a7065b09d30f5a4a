//! Runs a [`CpModel`] on its own OS thread, so that the runtime's atomics
//! meet a truly concurrent consumer.

use crate::cp::CpModel;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// A CP model running on a thread until [`CpThread::stop`].
#[derive(Debug)]
pub struct CpThread {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<CpModel>,
}

/// What the model thread does when a step made no progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Spin this many times, then yield the CPU to the scheduler. Right
    /// when the thread shares a CPU with others (tests, a busy machine).
    YieldAfter(u32),
    /// Never yield, like a hardware CP that polls its doorbells. Right
    /// only on a CPU of its own: latency measurements use it, because a
    /// yield hands the wake-up time of the scheduler to every pickup.
    /// It also skips the PAUSE hint between steps: PAUSE took about 25 ns
    /// on the machine this was tuned on, a third of an idle step, so a
    /// doorbell that just missed a step's look waited that much longer,
    /// and whether it missed flipped between runs (the pickup p50 jumped
    /// between two values 40-50 ns apart).
    Spin,
}

impl CpThread {
    pub fn spawn(model: CpModel) -> std::io::Result<Self> {
        Self::spawn_with(model, Idle::YieldAfter(64), || {})
    }

    /// As [`CpThread::spawn`] with an idle policy, running `setup` on the
    /// new thread first (e.g. to pin it to a CPU).
    pub fn spawn_with(
        mut model: CpModel,
        idle_policy: Idle,
        setup: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("barebell-model-cp".into())
            .spawn(move || {
                setup();
                let mut idle = 0u32;
                while !flag.load(Ordering::Relaxed) {
                    if model.step().progressed() {
                        idle = 0;
                    } else {
                        idle = idle.saturating_add(1);
                        match idle_policy {
                            Idle::YieldAfter(n) if idle > n => std::thread::yield_now(),
                            Idle::YieldAfter(_) => std::hint::spin_loop(),
                            Idle::Spin => {}
                        }
                    }
                }
                model
            })?;
        Ok(CpThread { stop, handle })
    }

    /// Stops the thread and hands the model back for inspection.
    pub fn stop(self) -> std::thread::Result<CpModel> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join()
    }
}

/// Runs a [`crate::mec::Mec`]'s CP model, and any firmware models' `service` calls
/// (MES, KIQ), on their own OS thread, so the runtime can use a plain
/// spinning pause and real time, as on hardware.
#[derive(Debug)]
pub struct MecThread {
    stop: std::sync::Arc<core::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

/// A firmware model's service call, run on the [`MecThread`].
pub type Service = std::boxed::Box<dyn Fn() -> usize + Send>;

impl MecThread {
    pub fn spawn(
        mec: &'static crate::mec::Mec,
        services: std::vec::Vec<Service>,
    ) -> std::io::Result<Self> {
        Self::spawn_with(mec, services, Idle::YieldAfter(64), || {})
    }

    /// As [`MecThread::spawn`] with an idle policy, running `setup` on the
    /// new thread first (e.g. to pin it to a CPU).
    pub fn spawn_with(
        mec: &'static crate::mec::Mec,
        services: std::vec::Vec<Service>,
        idle_policy: Idle,
        setup: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Self> {
        use core::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(core::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("barebell-model-mec".into())
            .spawn(move || {
                setup();
                let mut idle = 0u32;
                while !flag.load(Ordering::Relaxed) {
                    let mut work = mec.step().progressed();
                    for s in &services {
                        work |= s() > 0;
                    }
                    if work {
                        idle = 0;
                    } else {
                        idle = idle.saturating_add(1);
                        // As in `CpThread`: `Spin` steps again at once.
                        match idle_policy {
                            Idle::YieldAfter(n) if idle > n => std::thread::yield_now(),
                            Idle::YieldAfter(_) => core::hint::spin_loop(),
                            Idle::Spin => {}
                        }
                    }
                }
            })?;
        Ok(MecThread { stop, handle })
    }

    pub fn stop(self) -> std::thread::Result<()> {
        self.stop.store(true, core::sync::atomic::Ordering::Relaxed);
        self.handle.join()
    }
}

/// Runs `f` while `service` runs in a loop on a thread of its own (a CP
/// side beside the host, as a GPU's runs); `service` says whether it did
/// any work, and an idle thread spins or yields as `idle` says. `setup`
/// runs first on the new thread (e.g. to pin it). The thread is scoped:
/// it cannot outlive what `service` borrows.
pub fn with_service_thread<R>(
    service: &(dyn Fn() -> bool + Sync),
    idle: Idle,
    setup: impl FnOnce() + Send,
    f: impl FnOnce() -> R,
) -> std::io::Result<R> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name("barebell-model-cp".into())
            .spawn_scoped(s, || {
                setup();
                let mut idle_for = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    if service() {
                        idle_for = 0;
                    } else {
                        idle_for = idle_for.saturating_add(1);
                        // `Spin` services again at once (a pause here
                        // delays the pickup being measured); `YieldAfter`
                        // yields.
                        if let Idle::YieldAfter(n) = idle
                            && idle_for > n
                        {
                            std::thread::yield_now();
                        }
                    }
                }
            })?;
        let r = f();
        stop.store(true, Ordering::Relaxed);
        h.join()
            .map_err(|_| std::io::Error::other("the model's CP thread panicked"))?;
        Ok(r)
    })
}
