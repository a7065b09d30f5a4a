//! The AQL submit path against barebell-model's CP model, inside the VM.
//!
//! This is not bring-up (no firmware, no MQD, no GPU): it is barebell's
//! production `AqlQueue` (static ring, ROCR publish order, 64-bit doorbell
//! store) driven against the model's command processor, which is
//! `no_std + alloc` and so runs here unchanged. With one CPU the two sides
//! interleave: submit, then step the model until it is idle, then check
//! the completion signal and the dispatch the model's placeholder kernel
//! saw. Each iteration's submit (reserve + publish + doorbell) is timed
//! with the TSC into barebell's histogram, as is the model's run.

use crate::mmio_latency::print_summary;
use crate::println;
use alloc::boxed::Box;
use barebell::aql::doorbell::Doorbell;
use barebell::aql::packet::Dispatch;
use barebell::aql::queue::{AqlQueue, QueueConfig, QueueMemory};
use barebell::aql::signal::{Condition, SignalMemory};
use barebell::latency::Histogram;
use barebell::latency::tsc::{self, TscClock, TscScale};
use barebell_model::Seed;
use barebell_model::cp::{CpModel, HqdBinding};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering};

const SLOTS: usize = 64;
const KERNEL: u64 = 0x7000;
const BOUND_NS: u64 = 1_000_000_000;
const MAX_STEPS: u64 = 100_000;

#[repr(C, align(4096))]
struct DoorbellPage([AtomicU64; 512]);

static LAUNCHES: AtomicU64 = AtomicU64::new(0);
static LAST_GRID: AtomicU64 = AtomicU64::new(0);

pub fn run(scale: TscScale, iterations: u64, seed: u64) -> Result<(), &'static str> {
    let mut model = CpModel::new(Seed(seed));
    model.register_kernel(
        KERNEL,
        Box::new(|info| {
            LAUNCHES.fetch_add(1, Ordering::Relaxed);
            LAST_GRID.store(u64::from(info.grid[0]), Ordering::Relaxed);
        }),
    );
    let mem: &'static QueueMemory<SLOTS> = Box::leak(Box::new(QueueMemory::new()));
    let page: &'static DoorbellPage =
        Box::leak(Box::new(DoorbellPage([const { AtomicU64::new(0) }; 512])));
    let signal: &'static SignalMemory = Box::leak(Box::new(SignalMemory::new(1)));
    let slot = NonNull::from(&page.0[0]).cast::<u64>();
    // SAFETY: the page is leaked ('static) and accessed only atomically.
    let doorbell = unsafe { Doorbell::from_ptr(slot) }.map_err(|_| "doorbell alignment")?;
    let queue = AqlQueue::new(mem, doorbell, QueueConfig::default())
        .map_err(|_| "queue memory already bound")?;
    // SAFETY: all three are leaked, so they outlive the model; both sides
    // touch their shared fields atomically or through the AQL protocol.
    unsafe {
        let d = model.dma_mut();
        d.map(
            mem as *const _ as u64,
            size_of::<QueueMemory<SLOTS>>() as u64,
        );
        d.map(page as *const _ as u64, size_of::<DoorbellPage>() as u64);
        d.map(signal as *const _ as u64, size_of::<SignalMemory>() as u64);
    }
    model
        .bind(HqdBinding {
            ring_base: mem.ring_address(),
            slots: SLOTS as u64,
            descriptor: mem.descriptor_address(),
            doorbell: slot.as_ptr() as u64,
            poll_write_index: false,
        })
        .map_err(|_| "binding the queue to the model")?;
    let clock = TscClock(scale);
    let mut submit = Box::new(Histogram::new());
    let mut model_run = Box::new(Histogram::new());
    for i in 0..iterations {
        let grid = 64 * (1 + (i % 16) as u32);
        let pkt = Dispatch::linear(grid, 64, KERNEL, 0)
            .signal(signal.handle())
            .packet()
            .map_err(|_| "building the dispatch packet")?;
        signal.reset(1);
        let t0 = tsc::start();
        let id = queue.submit(&pkt, &clock, BOUND_NS).map_err(|e| {
            println!("UK ERROR AQL submit {i}: {e}");
            "submit"
        })?;
        let t1 = tsc::end();
        let steps = model.run_until_idle(MAX_STEPS);
        let t2 = tsc::end();
        if id != i || steps.is_none() {
            println!("UK ERROR AQL iteration {i}: id {id}, steps {steps:?}");
            return Err("model did not go idle");
        }
        signal
            .wait(Condition::Eq, 0, &clock, BOUND_NS)
            .map_err(|_| "completion signal did not reach 0")?;
        if LAUNCHES.load(Ordering::Relaxed) != i + 1
            || LAST_GRID.load(Ordering::Relaxed) != u64::from(grid)
        {
            return Err("the model's kernel did not see this dispatch");
        }
        submit.record(scale.to_ns(t1.wrapping_sub(t0)));
        model_run.record(scale.to_ns(t2.wrapping_sub(t1)));
    }
    if !model.errors().is_empty() {
        println!("UK ERROR model errors: {:?}", model.errors());
        return Err("model recorded errors");
    }
    println!(
        "UK AQL model dispatches={} read_index={} doorbell={} launches={} errors=0",
        iterations,
        queue.read_index(),
        page.0[0].load(Ordering::Acquire),
        LAUNCHES.load(Ordering::Relaxed)
    );
    print_summary("aql-submit", &submit);
    print_summary("aql-model-run", &model_run);
    Ok(())
}
