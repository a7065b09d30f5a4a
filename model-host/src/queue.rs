//! Placing runtime objects where the model can reach them.
//!
//! On hardware, queues and signals live in memory the GPU maps; here they
//! live in leaked host allocations mapped into the model's DMA windows.
//! Leaking is the point: a model running on its own thread may touch them
//! for as long as the process lives, which is the contract `Dma::map` asks
//! for. Used by the integration tests, by `barebell latency` and (it needs
//! only `alloc`) by the unikernel.

use alloc::boxed::Box;
use alloc::vec::Vec;
use barebell::aql::doorbell::Doorbell;
use barebell::aql::queue::{AqlQueue, QueueConfig, QueueMemory};
use barebell::aql::signal::SignalMemory;
use barebell_model::DoorbellPage;
use barebell_model::cp::{CpError, CpModel, HqdBinding};
use core::ptr::NonNull;

/// The doorbell index used within each queue's page.
pub const DOORBELL_INDEX: usize = 3;

/// A queue bound to the model.
#[derive(Debug)]
pub struct ModelQueue<const N: usize> {
    pub queue: AqlQueue<'static, N>,
    pub model_queue: usize,
    pub doorbells: &'static DoorbellPage,
}

impl<const N: usize> ModelQueue<N> {
    /// The value last written to this queue's doorbell.
    pub fn doorbell_value(&self) -> u64 {
        self.doorbells.0[DOORBELL_INDEX].load(core::sync::atomic::Ordering::Acquire)
    }
}

/// Why a queue could not be placed.
#[derive(Debug)]
pub enum PlaceError {
    Doorbell(barebell::aql::doorbell::DoorbellError),
    Bind(CpError),
    /// The queue memory already belongs to a live queue.
    Memory(barebell::aql::queue::BindError),
}

impl core::fmt::Display for PlaceError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PlaceError::Doorbell(e) => write!(f, "doorbell: {e}"),
            PlaceError::Bind(e) => write!(f, "binding the queue to the CP model: {e}"),
            PlaceError::Memory(e) => write!(f, "{e}"),
        }
    }
}

/// Makes a queue of `N` slots, maps its memory into `model`, binds it.
pub fn queue<const N: usize>(
    model: &mut CpModel,
    config: QueueConfig,
    poll_write_index: bool,
) -> Result<ModelQueue<N>, PlaceError> {
    let mem: &'static QueueMemory<N> = Box::leak(Box::new(QueueMemory::new()));
    let doorbells: &'static DoorbellPage = Box::leak(DoorbellPage::boxed());
    let slot = NonNull::from(&doorbells.0[DOORBELL_INDEX]).cast::<u64>();
    // SAFETY: the page is leaked ('static) and only accessed atomically.
    let doorbell = unsafe { Doorbell::from_ptr(slot) }.map_err(PlaceError::Doorbell)?;
    let queue = AqlQueue::new(mem, doorbell, config).map_err(PlaceError::Memory)?;
    // SAFETY: `mem` and `doorbells` are leaked, so they outlive the model;
    // the runtime accesses their shared parts atomically or per the AQL
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
        .map_err(PlaceError::Bind)?;
    Ok(ModelQueue {
        queue,
        model_queue,
        doorbells,
    })
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
