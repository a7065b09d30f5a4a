//! Simulated time.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

/// A clock that moves only when the simulation says so.
///
/// Register accesses in the model advance it by a fixed cost, so a bounded
/// poll in the runtime always terminates after a computable number of
/// accesses, independent of how fast the host is. Cloning gives another
/// handle on the same time: every block model of one GPU shares one clock.
#[derive(Debug, Default, Clone)]
pub struct SimClock {
    now_ns: Arc<AtomicU64>,
}

impl SimClock {
    pub fn new() -> Self {
        SimClock {
            now_ns: Arc::new(AtomicU64::new(0)),
        }
    }

    pub fn advance(&self, ns: u64) {
        self.now_ns.fetch_add(ns, Ordering::Relaxed);
    }
}

impl barebell::time::Clock for SimClock {
    fn now_ns(&self) -> u64 {
        self.now_ns.load(Ordering::Relaxed)
    }

    /// Simulated time moves forward by `ns`, as a sleeping host sees it.
    fn sleep_ns(&self, ns: u64) {
        self.advance(ns);
    }
}

impl SimClock {
    /// This time as the host sees it: every read costs `step_ns` of
    /// simulated time (the host's own work between looks), so that a wait
    /// that only watches the clock (a `udelay`) still ends.
    pub fn host_view(&self, step_ns: u64) -> HostClock {
        HostClock {
            sim: self.clone(),
            step_ns,
        }
    }
}

/// A [`SimClock`] that moves by a fixed step whenever the host reads it.
#[derive(Debug, Clone)]
pub struct HostClock {
    sim: SimClock,
    step_ns: u64,
}

impl barebell::time::Clock for HostClock {
    fn now_ns(&self) -> u64 {
        self.sim
            .now_ns
            .fetch_add(self.step_ns, Ordering::Relaxed)
            .wrapping_add(self.step_ns)
    }

    /// A host that sleeps `ns` (a `delay`): simulated time moves by that
    /// much at once instead of `ns / step_ns` reads of the clock.
    fn sleep_ns(&self, ns: u64) {
        self.sim.advance(ns.max(self.step_ns));
    }
}

/// A clock that advances by a fixed step every time it is read, so that a
/// bounded wait on a device that will never answer (nothing else moves
/// time) still ends after a known number of looks.
#[derive(Debug)]
pub struct TickingClock {
    step_ns: u64,
    now_ns: AtomicU64,
}

impl TickingClock {
    pub const fn new(step_ns: u64) -> Self {
        TickingClock {
            step_ns,
            now_ns: AtomicU64::new(0),
        }
    }
}

impl barebell::time::Clock for TickingClock {
    fn now_ns(&self) -> u64 {
        self.now_ns.fetch_add(self.step_ns, Ordering::Relaxed)
    }
}
