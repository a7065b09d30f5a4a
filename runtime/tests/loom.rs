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
use barebell::aql::queue::{QueueMem, submit_batch_with, submit_with};
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
    /// The doorbell: a plain 64-bit store of last id + 1 (0 = never), as
    /// production's `Doorbell::ring` makes it, so the last writer wins and
    /// the value can move backwards under two producers.
    doorbell: AtomicU64,
    /// Highest value ever rung: a tally outside the model (std atomic).
    max_rung: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl LoomQueue {
    fn new(slots: usize) -> Self {
        LoomQueue {
            write: AtomicU64::new(0),
            read: AtomicU64::new(0),
            headers: (0..slots).map(|_| AtomicU32::new(INVALID)).collect(),
            bodies: (0..slots).map(|_| UnsafeCell::new([0; 60])).collect(),
            doorbell: AtomicU64::new(0),
            max_rung: Default::default(),
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
        self.doorbell.store(last_id + 1, Ordering::Release);
        self.max_rung
            .fetch_max(last_id + 1, std::sync::atomic::Ordering::Relaxed);
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
    producers_and_consumer_with(slots, a_tags, false, b_tags, preemptions)
}

/// As [`producers_and_consumer`]; with `a_batch` producer A submits its
/// tags as one batch (`submit_batch_with`: one reservation, bodies, then
/// headers in order, one doorbell).
fn producers_and_consumer_with(
    slots: usize,
    a_tags: &'static [u8],
    a_batch: bool,
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
                    // Whatever the doorbell says (last writer wins, so it
                    // may lag), the packet it names was published before
                    // it was rung: its header is valid, or it is consumed.
                    let rung = q.doorbell.load(Ordering::Acquire);
                    if rung > id {
                        let named = ((rung - 1) % q.slots()) as usize;
                        assert!(
                            q.headers[named].load(Ordering::Acquire) != INVALID,
                            "doorbell {rung} rung before packet {} was published",
                            rung - 1
                        );
                    }
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
                if a_batch {
                    let batch: Vec<_> = a_tags.iter().map(|&t| packet(t)).collect();
                    submit_batch_with(&*q, &batch, &Never, 1).unwrap();
                    return;
                }
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
        assert_eq!(q.max_rung.load(std::sync::atomic::Ordering::Relaxed), total);
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

/// Batch submit: producer A's two packets as one batch against producer
/// B's single packet, on a two-slot ring (the batch fills it, so B waits
/// for the consumer; or B goes first and the batch waits).
#[test]
fn batch_and_single_producer_one_consumer() {
    producers_and_consumer_with(2, &[0xa1, 0xa2], true, &[0xb1], 1);
}

/// Two producers (one packet each) and the consumer at preemption bound
/// 2, in CI: a two-slot ring, so neither producer waits for space and the
/// explored interleavings are those of reservation, body, publish and
/// doorbell against each other and the consumer (the full-ring wait is
/// the bound-1 models' and the ignored one-slot model's).
#[test]
fn two_producers_one_consumer_bound_2() {
    producers_and_consumer(2, &[0xa1], &[0xb1], 2);
}

/// The wrap model at preemption bound 2. Not in CI: it did not finish
/// within 8 minutes on this 2-core machine (shared with fuzz runs). Run
/// it on demand with `-- --ignored wrap_bound_2`.
#[test]
#[ignore = "preemption bound 2 did not finish within 8 minutes"]
fn two_producers_one_consumer_wrap_bound_2() {
    producers_and_consumer(2, &[0xa1, 0xa2], &[0xb1], 2);
}

/// The one-slot two-producer model at preemption bound 2. Not in CI: it
/// did not finish within 7 minutes on this 2-core machine (shared with
/// other builds), over CI's budget for the stage. Run it on demand with
/// `-- --ignored bound_2`.
#[test]
#[ignore = "preemption bound 2 did not finish within 7 minutes"]
fn two_producers_one_consumer_full_ring_bound_2() {
    producers_and_consumer(1, &[0xa1], &[0xb1], 2);
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
