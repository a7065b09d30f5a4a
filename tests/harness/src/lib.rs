//! Shared fixtures for the integration tests: queue memory, doorbells and
//! signals placed where both the runtime and the device model can reach
//! them, and the model bound to them.
//!
//! Memory is leaked on purpose: a model running on a thread must be able
//! to touch it for as long as the process lives, which is exactly the
//! contract `Dma::map` asks for.

use barebell::doorbell::Doorbell;
use barebell::queue::{AqlQueue, QueueConfig, QueueMemory};
use barebell::signal::SignalMemory;
use barebell_sim::cp::{CpModel, HqdBinding};
use core::ptr::NonNull;
use core::sync::atomic::AtomicU64;

/// One page of doorbells, as BAR2 would hold them.
#[repr(C, align(4096))]
pub struct DoorbellPage(pub [AtomicU64; 512]);

/// A queue, its doorbell, and the model index it is bound under.
pub struct Rig<const N: usize> {
    pub queue: AqlQueue<'static, N>,
    pub model_queue: usize,
    pub doorbells: &'static DoorbellPage,
}

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

/// Makes a queue of `N` slots, maps its memory into `model`, binds it.
pub fn rig<const N: usize>(model: &mut CpModel, config: QueueConfig) -> Rig<N> {
    rig_with(model, config, false)
}

/// As [`rig`], choosing whether the model also polls the write index
/// (see `HqdBinding::poll_write_index`).
pub fn rig_with<const N: usize>(
    model: &mut CpModel,
    config: QueueConfig,
    poll_write_index: bool,
) -> Rig<N> {
    let mem: &'static QueueMemory<N> = leak(QueueMemory::new());
    let doorbells: &'static DoorbellPage = leak(DoorbellPage([const { AtomicU64::new(0) }; 512]));
    let slot = NonNull::from(&doorbells.0[3]).cast::<u64>();
    // SAFETY: the page is leaked ('static) and only accessed atomically.
    let doorbell = unsafe { Doorbell::from_ptr(slot) }.expect("aligned doorbell");
    let queue = AqlQueue::new(mem, doorbell, config);
    // SAFETY: `mem` and `doorbells` are leaked, so they outlive the model;
    // the runtime accesses the shared parts atomically or per the AQL
    // publish protocol.
    unsafe {
        model.dma_mut().map(
            mem as *const _ as u64,
            core::mem::size_of::<QueueMemory<N>>() as u64,
        );
        model.dma_mut().map(
            doorbells as *const _ as u64,
            core::mem::size_of::<DoorbellPage>() as u64,
        );
    }
    let model_queue = model
        .bind(HqdBinding {
            ring_base: mem.ring_address(),
            slots: N as u64,
            descriptor: mem.descriptor_address(),
            doorbell: slot.as_ptr() as u64,
            poll_write_index,
        })
        .expect("bind");
    Rig {
        queue,
        model_queue,
        doorbells,
    }
}

/// `n` signals with value `initial`, mapped into `model`.
pub fn signals(model: &mut CpModel, n: usize, initial: i64) -> &'static [SignalMemory] {
    let v: Vec<SignalMemory> = (0..n).map(|_| SignalMemory::new(initial)).collect();
    let s: &'static [SignalMemory] = Box::leak(v.into_boxed_slice());
    // SAFETY: leaked, so it outlives the model; signal fields are accessed
    // atomically by both sides.
    unsafe {
        model
            .dma_mut()
            .map(s.as_ptr() as u64, core::mem::size_of_val(s) as u64);
    }
    s
}

impl<const N: usize> Rig<N> {
    /// The value last written to this queue's doorbell.
    pub fn doorbell_value(&self) -> u64 {
        self.doorbells.0[3].load(core::sync::atomic::Ordering::Acquire)
    }
}
