//! Shared pieces of the submit benchmarks: a queue in static memory whose
//! doorbell is plain memory, and a stand-in for the CP that only frees
//! slots (so a benchmark measures the CPU side alone).

use barebell::aql::doorbell::Doorbell;
use barebell::aql::packet::{Dispatch, KernelDispatchPacket};
use barebell::aql::queue::{AqlQueue, QueueConfig, QueueMemory};
use barebell::time::Clock;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering};

pub const SLOTS: usize = 1024;

pub static MEM: QueueMemory<SLOTS> = QueueMemory::new();
pub static DOORBELL: AtomicU64 = AtomicU64::new(0);

/// Never consulted on the fast path; the ring is drained before it fills.
#[derive(Debug)]
pub struct NoClock;
impl Clock for NoClock {
    fn now_ns(&self) -> u64 {
        0
    }
}

pub fn queue() -> Option<AqlQueue<'static, SLOTS>> {
    // SAFETY: a static slot, accessed only atomically.
    let d = unsafe { Doorbell::from_ptr(NonNull::from(&DOORBELL).cast()) }.ok()?;
    AqlQueue::new(&MEM, d, QueueConfig::default()).ok()
}

/// Plays the CP's part of freeing slots: read index := write index.
pub fn drain(q: &AqlQueue<'static, SLOTS>) {
    let rptr = MEM.read_index_address() as *mut u64;
    // SAFETY: the read index is an aligned u64 inside a static, accessed
    // only atomically by the queue and by this function.
    unsafe { AtomicU64::from_ptr(rptr) }.store(q.write_index(), Ordering::Release);
}

pub fn packet() -> Option<KernelDispatchPacket> {
    Dispatch::linear(1 << 20, 256, 0x7f00_0000_1000, 0x7f00_0000_2000)
        .packet()
        .ok()
}
