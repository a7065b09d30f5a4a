//! Robustness of the submit path and the bounded waits against a
//! misbehaving device or host: a corrupted read index, a clock that never
//! moves. Each test names the finding of issue 21 it covers.

// Helpers outside #[test] functions unwrap and panic as tests do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use barebell::aql::packet::KernelDispatchPacket;
use barebell::aql::queue::{QueueMem, SubmitError, submit_batch_with, submit_with};
use barebell::aql::signal::{Condition, SignalValue, wait_until};
use barebell::time::Clock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use zerocopy::FromBytes;

/// Queue memory whose read index the test sets directly, as a corrupted
/// `read_dispatch_id` would be.
struct FakeQueue {
    slots: u64,
    write: AtomicU64,
    read: AtomicU64,
    published: AtomicU32,
}

impl FakeQueue {
    fn new(slots: u64, write: u64, read: u64) -> Self {
        FakeQueue {
            slots,
            write: AtomicU64::new(write),
            read: AtomicU64::new(read),
            published: AtomicU32::new(0),
        }
    }
}

impl QueueMem for FakeQueue {
    fn slots(&self) -> u64 {
        self.slots
    }
    fn reserve(&self, n: u64) -> u64 {
        self.write.fetch_add(n, Ordering::Relaxed)
    }
    fn read_index(&self) -> u64 {
        self.read.load(Ordering::Acquire)
    }
    fn write_body(&self, _id: u64, _packet: &[u8; 64]) {}
    fn publish(&self, _id: u64, _header_word: u32) {
        self.published.fetch_add(1, Ordering::Relaxed);
    }
    fn ring(&self, _last_id: u64) {}
}

fn packet() -> KernelDispatchPacket {
    let mut b = [0u8; 64];
    b[0] = 2; // HSA_PACKET_TYPE_KERNEL_DISPATCH
    KernelDispatchPacket::read_from_bytes(&b).unwrap()
}

/// A clock that never moves: a TSC clock on a host without one, or a
/// stopped timer.
struct Stalled;
impl Clock for Stalled {
    fn now_ns(&self) -> u64 {
        1_000
    }
}

/// Runs `f` on its own thread and fails if it does not return within
/// `secs` (an unbounded wait would otherwise hang the test run).
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("the wait did not end within {secs} s"))
}

/// Issue 21 finding 2: a read index corrupted to a value inside the
/// batch's own id range (ids 8..12 reserved, read index 10) is ahead of
/// packets that were never published. The fast path used to accept it
/// because `last - read < slots` held.
#[test]
fn read_index_inside_the_batch_is_refused() {
    let q = FakeQueue::new(16, 8, 10);
    let e = submit_batch_with(&q, &[packet(); 4], &Stalled, 1_000_000).unwrap_err();
    assert_eq!(
        e,
        SubmitError::ReadIndexAhead {
            packet_id: 8,
            read_index: 10
        }
    );
    assert_eq!(q.published.load(Ordering::Relaxed), 0, "nothing published");
}

/// The same for a single packet whose id equals the read index minus one
/// (read index one past the unpublished packet), and for the batch's last
/// id: both are ahead of the first unpublished id.
#[test]
fn read_index_past_first_unpublished_is_refused() {
    let q = FakeQueue::new(16, 8, 9);
    assert_eq!(
        submit_with(&q, &packet(), &Stalled, 1_000_000).unwrap_err(),
        SubmitError::ReadIndexAhead {
            packet_id: 8,
            read_index: 9
        }
    );
    let q = FakeQueue::new(16, 8, 11);
    assert!(matches!(
        submit_batch_with(&q, &[packet(); 4], &Stalled, 1_000_000),
        Err(SubmitError::ReadIndexAhead { .. })
    ));
    // A read index exactly at the first id, or behind it by up to
    // `slots - count`, is fine; across u64 wrap too.
    let q = FakeQueue::new(16, 8, 8);
    assert_eq!(submit_batch_with(&q, &[packet(); 4], &Stalled, 1), Ok(8));
    let q = FakeQueue::new(16, 20, 8);
    assert_eq!(submit_batch_with(&q, &[packet(); 4], &Stalled, 1), Ok(20));
    let q = FakeQueue::new(16, u64::MAX - 1, u64::MAX - 13);
    assert_eq!(
        submit_batch_with(&q, &[packet(); 4], &Stalled, 1),
        Ok(u64::MAX - 1)
    );
}

struct Never;
impl SignalValue for Never {
    fn load_acquire(&self) -> i64 {
        1
    }
}

/// Issue 21 finding 5: with a clock that never moves a wait must still
/// end (here: a signal nobody decrements, and a ring that stays full).
#[test]
fn waits_end_with_a_stalled_clock() {
    let e = within(30, || {
        wait_until(&Never, Condition::Eq, 0, &Stalled, 1_000_000).unwrap_err()
    });
    assert_eq!(e.last, 1);
    let e = within(30, || {
        let q = FakeQueue::new(4, 4, 0);
        submit_with(&q, &packet(), &Stalled, 1_000_000).unwrap_err()
    });
    assert!(matches!(e, SubmitError::QueueFull { .. }), "{e:?}");
}

mod queue_memory {
    use super::*;
    use barebell::aql::doorbell::Doorbell;
    use barebell::aql::queue::{AqlQueue, BindError, QueueConfig, QueueMemory};
    use std::ptr::NonNull;

    /// Issue 21 finding 1 (`AqlQueue::new`): a second queue over memory a
    /// live queue uses would rewrite the descriptor under it (a plain,
    /// non-atomic write racing the first queue's `fetch_add`). Before the
    /// fix this was observable single-threaded: the write index was reset
    /// and ids repeated. Now the second `new` is refused while the first
    /// queue lives, and allowed again after it is dropped.
    #[test]
    fn second_queue_over_live_memory_is_refused() {
        let mem: &'static QueueMemory<16> = Box::leak(Box::new(QueueMemory::new()));
        let bell: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
        // SAFETY: a leaked u64, accessed only atomically.
        let d = || unsafe { Doorbell::from_ptr(NonNull::from(bell).cast()) }.unwrap();
        let q1 = AqlQueue::new(mem, d(), QueueConfig::default()).unwrap();
        let a = q1.submit(&packet(), &Stalled, 1).unwrap();
        let second = AqlQueue::new(mem, d(), QueueConfig::default());
        assert_eq!(
            second.unwrap_err(),
            BindError::MemoryInUse {
                descriptor: mem.descriptor_address()
            }
        );
        let b = q1.submit(&packet(), &Stalled, 1).unwrap();
        assert_ne!(a, b, "a second AqlQueue::new reset the live queue's ids");
        drop(q1);
        assert!(!mem.is_bound());
        let q2 = AqlQueue::new(mem, d(), QueueConfig::default()).unwrap();
        assert_eq!(q2.write_index(), 0);
    }

    /// Issue 32 item 6: the one-owner claim is not in the queue's memory,
    /// which the device (or a user kernel, for a user queue) can store to.
    /// With the whole 256-byte `amd_queue_t` overwritten, a second queue
    /// over the memory is still refused.
    #[test]
    fn device_stores_cannot_release_the_claim() {
        let mem: &'static QueueMemory<16> = Box::leak(Box::new(QueueMemory::new()));
        let bell: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
        // SAFETY: a leaked u64, accessed only atomically.
        let d = || unsafe { Doorbell::from_ptr(NonNull::from(bell).cast()) }.unwrap();
        let q1 = AqlQueue::new(mem, d(), QueueConfig::default()).unwrap();
        let desc = mem.descriptor_address() as *mut u8;
        for i in 0..256 {
            // SAFETY: the descriptor is an `UnsafeCell<AmdQueue>` of 256
            // bytes inside the leaked allocation, which the device may
            // store to at any time (that is the point); nothing reads it
            // concurrently here. Volatile: a stand-in for a DMA write.
            unsafe {
                desc.add(i)
                    .write_volatile(if i % 2 == 0 { 0 } else { 0x02 })
            };
        }
        assert_eq!(
            AqlQueue::new(mem, d(), QueueConfig::default()).unwrap_err(),
            BindError::MemoryInUse {
                descriptor: mem.descriptor_address()
            }
        );
        assert!(mem.is_bound());
        drop(q1);
        assert!(!mem.is_bound());
    }
}
