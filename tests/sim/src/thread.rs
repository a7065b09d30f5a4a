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

impl CpThread {
    pub fn spawn(model: CpModel) -> std::io::Result<Self> {
        Self::spawn_with(model, || {})
    }

    /// As [`CpThread::spawn`], running `setup` on the new thread first
    /// (e.g. to pin it to a CPU).
    pub fn spawn_with(
        mut model: CpModel,
        setup: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("barebell-sim-cp".into())
            .spawn(move || {
                setup();
                let mut idle = 0u32;
                while !flag.load(Ordering::Relaxed) {
                    if model.step().progressed() {
                        idle = 0;
                    } else {
                        idle = idle.saturating_add(1);
                        if idle > 64 {
                            std::thread::yield_now();
                        } else {
                            std::hint::spin_loop();
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
