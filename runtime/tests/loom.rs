//! Loom models of the submit path and the signal wait.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p barebell --test loom
//! --release` (`cargo xtask ci` does this in its `loom` stage). The models
//! drive the *library's* algorithms (`submit_with`, `wait_until`) through
//! loom implementations of `QueueMem` and `SignalValue`, so loom explores
//! the interleavings of the production code, and loom's cells catch any
//! data race on packet bodies.
#![cfg(loom)]

use barebell::aql::packet::KernelDispatchPacket;
use barebell::aql::queue::{QueueMem, submit_with};
use barebell::aql::signal::{Condition, SignalValue, wait_until};
use barebell::time::Clock;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use loom::thread;
use zerocopy::FromBytes;

const INVALID: u32 = 1;

/// Queue memory under loom: indices, per-slot header word and body.
struct LoomQueue {
    write: AtomicU64,
    read: AtomicU64,
    headers: Vec<AtomicU32>,
    bodies: Vec<UnsafeCell<[u8; 60]>>,
    /// Highest doorbell value + 1 ever rung (0 = never).
    max_doorbell: AtomicU64,
}

impl LoomQueue {
    fn new(slots: usize) -> Self {
        LoomQueue {
            write: AtomicU64::new(0),
            read: AtomicU64::new(0),
            headers: (0..slots).map(|_| AtomicU32::new(INVALID)).collect(),
            bodies: (0..slots).map(|_| UnsafeCell::new([0; 60])).collect(),
            max_doorbell: AtomicU64::new(0),
        }
    }
}

impl QueueMem for LoomQueue {
    fn slots(&self) -> u64 {
        self.headers.len() as u64
    }
    fn reserve(&self, n: u64) -> u64 {
        self.write.fetch_add(n, Ordering::Relaxed)
    }
    fn read_index(&self) -> u64 {
        self.read.load(Ordering::Acquire)
    }
    fn write_body(&self, id: u64, packet: &[u8; 64]) {
        let slot = (id % self.slots()) as usize;
        // SAFETY: loom tracks this access; a race would fail the model.
        self.bodies[slot].with_mut(|b| unsafe { (*b).copy_from_slice(&packet[4..]) });
    }
    fn publish(&self, id: u64, header_word: u32) {
        self.headers[(id % self.slots()) as usize].store(header_word, Ordering::Release);
    }
    fn ring(&self, last_id: u64) {
        self.max_doorbell.fetch_max(last_id + 1, Ordering::Release);
    }
    fn pause(&self) {
        thread::yield_now();
    }
}

/// A clock that never expires within a model run: bounded waits then end
/// only by their condition, which is what the model must show happens.
struct Never;
impl Clock for Never {
    fn now_ns(&self) -> u64 {
        0
    }
}

/// A real dispatch packet whose body bytes all equal `tag` and whose
/// setup field carries it, so the consumer can tell a torn body.
fn packet(tag: u8) -> KernelDispatchPacket {
    let mut b = [tag; 64];
    b[0] = 2; // HSA_PACKET_TYPE_KERNEL_DISPATCH
    b[1] = 0;
    b[2] = tag;
    b[3] = 0;
    KernelDispatchPacket::read_from_bytes(&b).unwrap()
}

/// Runs producer A (tags `a_tags`, in order), producer B (`b_tags`) and a
/// consumer playing the CP over a `slots`-packet ring, and checks what the
/// consumer saw.
fn producers_and_consumer(
    slots: usize,
    a_tags: &'static [u8],
    b_tags: &'static [u8],
    preemptions: usize,
) {
    // Counts explored executions, to show the model did explore.
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.max_branches = 100_000;
    b.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let total = (a_tags.len() + b_tags.len()) as u64;
        let q = Arc::new(LoomQueue::new(slots));
        let consumer = {
            let q = q.clone();
            thread::spawn(move || {
                let mut tags = Vec::new();
                for id in 0..total {
                    let slot = (id % q.slots()) as usize;
                    let word = loop {
                        let w = q.headers[slot].load(Ordering::Acquire);
                        if w != INVALID {
                            break w;
                        }
                        thread::yield_now();
                    };
                    let tag = (word >> 16) as u8;
                    q.bodies[slot].with(|body| {
                        // SAFETY: loom checks this read against the writes.
                        let body = unsafe { &*body };
                        assert!(body.iter().all(|&x| x == tag), "torn packet body");
                    });
                    q.headers[slot].store(INVALID, Ordering::Relaxed);
                    q.read.store(id + 1, Ordering::Release);
                    tags.push(tag);
                }
                tags
            })
        };
        let producer_a = {
            let q = q.clone();
            thread::spawn(move || {
                let mut last = None;
                for &t in a_tags {
                    let id = submit_with(&*q, &packet(t), &Never, 1).unwrap();
                    assert!(last.is_none_or(|l| id > l));
                    last = Some(id);
                }
            })
        };
        for &t in b_tags {
            submit_with(&*q, &packet(t), &Never, 1).unwrap();
        }
        producer_a.join().unwrap();
        let tags = consumer.join().unwrap();
        let pos = |t| tags.iter().position(|&x| x == t).unwrap();
        for w in a_tags.windows(2) {
            assert!(
                pos(w[0]) < pos(w[1]),
                "one producer's packets stay in order"
            );
        }
        for t in b_tags {
            assert!(tags.contains(t));
        }
        // The highest doorbell rung names the last packet id.
        assert_eq!(q.max_doorbell.load(Ordering::Relaxed), total);
        assert_eq!(q.write.load(Ordering::Relaxed), total);
    });
    let runs = runs.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("loom explored {runs} executions ({slots} slots, {preemptions} preemptions)");
    assert!(runs > 10, "loom explored only {runs} executions");
}

/// (a) Two producers and one consumer over reservation, publish and
/// doorbell, on a one-slot ring: the second producer must wait for the
/// consumer to free the slot. Every interleaving with up to one
/// preemption (two preemptions did not finish in 10 minutes here).
#[test]
fn two_producers_one_consumer_full_ring() {
    producers_and_consumer(1, &[0xa1], &[0xb1], 1);
}

/// Three packets through a two-slot ring (wrap plus a full wait); the
/// state space is larger, so one preemption.
#[test]
fn two_producers_one_consumer_wrap() {
    producers_and_consumer(2, &[0xa1, 0xa2], &[0xb1], 1);
}

struct LoomSignal(AtomicI64);
impl SignalValue for LoomSignal {
    fn load_acquire(&self) -> i64 {
        self.0.load(Ordering::Acquire)
    }
    fn pause(&self) {
        thread::yield_now();
    }
}

/// (b) The signal wait: once it returns, what the CP wrote before its
/// release decrement is visible.
#[test]
fn signal_wait_sees_data_written_before_decrement() {
    loom::model(|| {
        let sig = Arc::new(LoomSignal(AtomicI64::new(1)));
        let data = Arc::new(UnsafeCell::new(0u64));
        let cp = {
            let (sig, data) = (sig.clone(), data.clone());
            thread::spawn(move || {
                // SAFETY: loom tracks this write against the reader.
                data.with_mut(|d| unsafe { *d = 42 });
                sig.0.fetch_sub(1, Ordering::Release);
            })
        };
        assert_eq!(wait_until(&*sig, Condition::Eq, 0, &Never, 1), Ok(0));
        // SAFETY: the acquire in the wait orders this after the write.
        data.with(|d| assert_eq!(unsafe { *d }, 42));
        cp.join().unwrap();
    });
}

/// The wait's bound under loom: a CP that never signals gives the typed
/// timeout.
#[test]
fn signal_wait_times_out_when_nobody_signals() {
    struct Ticking(AtomicU64);
    impl Clock for Ticking {
        fn now_ns(&self) -> u64 {
            self.0.fetch_add(10, Ordering::Relaxed)
        }
    }
    loom::model(|| {
        let sig = LoomSignal(AtomicI64::new(1));
        let clock = Ticking(AtomicU64::new(0));
        let e = wait_until(&sig, Condition::Eq, 0, &clock, 30).unwrap_err();
        assert_eq!(e.last, 1);
        assert!(e.waited_ns >= 30);
    });
}
