//! The bounded wait for a dispatch's completion signal.

use crate::LaunchError;
use alloc::string::String;
use barebell::aql::signal::SignalMemory;
use barebell::aql::watchdog::{Watch as Look, Watchdog};
use barebell::platform::Platform;
use barebell_bringup::UserQueue;

/// What a wait asks its caller between two looks at the signal. Every
/// method has a default that never stops the wait: [`NoWatch`].
pub trait Watch {
    /// The first error the device recorded, if the caller can tell (the
    /// model's CP log; a GPU's faults arrive as interrupts, which
    /// barebell does not handle yet).
    fn device_error(&self) -> Option<String> {
        None
    }

    /// The name of a stop request (a signal) that should end the wait.
    fn stop(&self) -> Option<&'static str> {
        None
    }

    /// Called once per look while the dispatch is pending (progress).
    fn waiting(&self) {}
}

/// A watcher that only waits: the signal, the watchdog and the bound end
/// the wait.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWatch;

impl Watch for NoWatch {}

/// Waits for `signal` to reach 0, pausing on the platform between looks,
/// failing early with the device's error or a stop, or with a hang when
/// the queue's read index stands still with packets unfetched for
/// [`barebell_bringup::recover::WATCHDOG_NS`] (or `bound_ns` if shorter).
pub fn wait(
    platform: &dyn Platform,
    queue: &UserQueue<'_>,
    signal: &SignalMemory,
    bound_ns: u64,
    watch: &dyn Watch,
) -> Result<(), LaunchError> {
    let clock = platform.clock();
    let start = clock.now_ns();
    let mut dog = Watchdog::new(
        barebell_bringup::recover::WATCHDOG_NS.min(bound_ns),
        queue.queue.read_index(),
        start,
    );
    loop {
        if signal.value() == 0 {
            return Ok(());
        }
        if let Some(e) = watch.device_error() {
            return Err(LaunchError::Device(e));
        }
        if let Some(by) = watch.stop() {
            let signal = signal.value();
            return Err(LaunchError::Interrupted { by, signal });
        }
        let now = clock.now_ns();
        let (read, write) = (queue.queue.read_index(), queue.queue.write_index());
        if let Look::Hung(s) = dog.observe(read, write, now) {
            return Err(LaunchError::Hung(s));
        }
        if now.saturating_sub(start) > bound_ns {
            let signal = signal.value();
            return Err(LaunchError::Timeout { bound_ns, signal });
        }
        watch.waiting();
        platform.pause();
    }
}
