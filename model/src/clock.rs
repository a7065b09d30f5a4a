//! Simulated time.

use core::sync::atomic::{AtomicU64, Ordering};

/// A clock that moves only when the simulation says so.
///
/// Register accesses in the model advance it by a fixed cost, so a bounded
/// poll in the runtime always terminates after a computable number of
/// accesses, independent of how fast the host is.
#[derive(Debug, Default)]
pub struct SimClock {
    now_ns: AtomicU64,
}

impl SimClock {
    pub const fn new() -> Self {
        SimClock {
            now_ns: AtomicU64::new(0),
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
