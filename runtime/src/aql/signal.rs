//! Completion signals: `amd_signal_t` in memory the CP writes.
//!
//! A dispatch names its completion signal by address (the `hsa_signal_t`
//! handle is the address of an `amd_signal_t`). When the work finishes the
//! CP atomically decrements `value` with release semantics and, if the
//! queue has profiling enabled, writes `start_ts`/`end_ts` first. A waiter
//! therefore loads `value` with acquire ordering, and only then may read the
//! timestamps or the kernel's results.

use crate::aql::packet::SignalHandle;
use crate::time::{Clock, Deadline};
use barebell_facts::{Fact, layout_facts};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `amd_signal_t` (64 bytes, 64-byte aligned).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C, align(64))]
pub struct AmdSignal {
    /// `amd_signal_kind64_t`.
    pub kind: i64,
    /// The signal value (a union with hardware doorbell pointers for
    /// doorbell-kind signals, which barebell does not use).
    pub value: i64,
    pub event_mailbox_ptr: u64,
    pub event_id: u32,
    pub reserved1: u32,
    pub start_ts: u64,
    pub end_ts: u64,
    /// Union with `reserved2`.
    pub queue_ptr: u64,
    pub reserved3: [u32; 2],
}

/// `AMD_SIGNAL_KIND_USER`.
pub const AMD_SIGNAL_KIND_USER: i64 = 1;

pub use super::condition::Condition;

/// A bounded signal wait that ran out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalTimeout {
    pub condition: Condition,
    pub compare: i64,
    /// Value at the last look.
    pub last: i64,
    pub waited_ns: u64,
}

impl core::fmt::Display for SignalTimeout {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "signal wait for value {:?} {} timed out after {} ns; value is {}",
            self.condition, self.compare, self.waited_ns, self.last
        )
    }
}

/// Why a memory wait that checks the device ended without its condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryWaitError {
    Timeout(SignalTimeout),
    /// The presence register read all ones: the device is gone.
    DeviceGone {
        waited_ns: u64,
        last: i64,
    },
}

impl core::fmt::Display for MemoryWaitError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MemoryWaitError::Timeout(t) => write!(f, "{t}"),
            MemoryWaitError::DeviceGone { waited_ns, last } => write!(
                f,
                "device gone after {waited_ns} ns of a signal wait (a register reads all ones; the signal is {last})"
            ),
        }
    }
}

/// What a wait loop needs from a signal: an acquire load of its value, and
/// what to do between looks. Production uses [`SignalMemory`]; the loom
/// model implements it over loom's atomics so the same loop is checked.
pub trait SignalValue {
    fn load_acquire(&self) -> i64;
    fn pause(&self) {
        core::hint::spin_loop();
    }
}

/// Waits until `cond(value, compare)` holds, for at most `timeout_ns`.
pub fn wait_until<S, C>(
    signal: &S,
    cond: Condition,
    compare: i64,
    clock: &C,
    timeout_ns: u64,
) -> Result<i64, SignalTimeout>
where
    S: SignalValue + ?Sized,
    C: Clock + ?Sized,
{
    let mut deadline = Deadline::after(clock, timeout_ns);
    loop {
        let v = signal.load_acquire();
        if cond.holds(v, compare) {
            return Ok(v);
        }
        if deadline.expired(clock) {
            return Err(SignalTimeout {
                condition: cond,
                compare,
                last: v,
                waited_ns: deadline.elapsed_ns(clock),
            });
        }
        signal.pause();
    }
}

/// Storage for one signal, shared with the device. Put it in a `static` or
/// other memory the device can reach; its address is the handle.
#[repr(transparent)]
#[derive(Debug)]
pub struct SignalMemory(UnsafeCell<AmdSignal>);

// SAFETY: after construction, every field is accessed only through atomics
// (`value`, timestamps) or is read-only; the device writes with atomics too.
unsafe impl Sync for SignalMemory {}

impl SignalMemory {
    pub const fn new(initial: i64) -> Self {
        SignalMemory(UnsafeCell::new(AmdSignal {
            kind: AMD_SIGNAL_KIND_USER,
            value: initial,
            event_mailbox_ptr: 0,
            event_id: 0,
            reserved1: 0,
            start_ts: 0,
            end_ts: 0,
            queue_ptr: 0,
            reserved3: [0; 2],
        }))
    }

    /// The `hsa_signal_t` handle to put in a packet.
    #[inline]
    pub fn handle(&self) -> SignalHandle {
        SignalHandle(self.0.get() as u64)
    }

    #[inline]
    fn value_atomic(&self) -> &AtomicI64 {
        // SAFETY: the field is 8-byte aligned inside a 64-byte aligned
        // struct, lives as long as `self`, and is only accessed atomically.
        unsafe { AtomicI64::from_ptr(&raw mut (*self.0.get()).value) }
    }

    #[inline]
    fn u64_atomic(&self, field: *mut u64) -> &AtomicU64 {
        // SAFETY: callers pass a pointer to an aligned u64 field of our
        // `AmdSignal`, which lives as long as `self` and is only accessed
        // atomically by us and by the device.
        unsafe { AtomicU64::from_ptr(field) }
    }

    #[inline]
    pub fn value(&self) -> i64 {
        self.value_atomic().load(Ordering::Acquire)
    }

    /// Sets the value and clears the timestamps, for reuse. Only call while
    /// no packet naming this signal is in flight.
    #[inline]
    pub fn reset(&self, value: i64) {
        let p = self.0.get();
        // SAFETY: pointers to aligned fields of our own struct.
        self.u64_atomic(unsafe { &raw mut (*p).start_ts })
            .store(0, Ordering::Relaxed);
        // SAFETY: as above.
        self.u64_atomic(unsafe { &raw mut (*p).end_ts })
            .store(0, Ordering::Relaxed);
        self.value_atomic().store(value, Ordering::Release);
    }

    /// `(start_ts, end_ts)` in GPU clock ticks, if the CP wrote them (the
    /// queue has profiling enabled). Read after the wait succeeded, which
    /// provides the acquire that makes them visible.
    pub fn timestamps(&self) -> Option<(u64, u64)> {
        let p = self.0.get();
        // SAFETY: pointers to aligned fields of our own struct.
        let start = self
            .u64_atomic(unsafe { &raw mut (*p).start_ts })
            .load(Ordering::Relaxed);
        // SAFETY: as above.
        let end = self
            .u64_atomic(unsafe { &raw mut (*p).end_ts })
            .load(Ordering::Relaxed);
        (start != 0 || end != 0).then_some((start, end))
    }

    pub fn wait<C: Clock + ?Sized>(
        &self,
        cond: Condition,
        compare: i64,
        clock: &C,
        timeout_ns: u64,
    ) -> Result<i64, SignalTimeout> {
        wait_until(self, cond, compare, clock, timeout_ns)
    }

    /// [`SignalMemory::wait`], calling `pause` between looks (the
    /// platform's hook: a spin on hardware, the device model's turn to
    /// run when it shares this thread).
    pub fn wait_pausing<C: Clock + ?Sized, P: crate::time::Pause>(
        &self,
        cond: Condition,
        compare: i64,
        clock: &C,
        timeout_ns: u64,
        pause: &mut P,
    ) -> Result<i64, SignalTimeout> {
        struct With<'a, P>(&'a SignalMemory, core::cell::RefCell<&'a mut P>);
        impl<P: crate::time::Pause> SignalValue for With<'_, P> {
            fn load_acquire(&self) -> i64 {
                self.0.value()
            }
            fn pause(&self) {
                if let Ok(mut p) = self.1.try_borrow_mut() {
                    p.pause();
                }
            }
        }
        wait_until(
            &With(self, core::cell::RefCell::new(pause)),
            cond,
            compare,
            clock,
            timeout_ns,
        )
    }
}

impl SignalMemory {
    /// [`SignalMemory::wait_pausing`] that also reads `presence` every
    /// `presence.every_ns` and ends with
    /// [`MemoryWaitError::DeviceGone`] when it reads all ones.
    pub fn wait_present<C: Clock + ?Sized, P: crate::time::Pause>(
        &self,
        cond: Condition,
        compare: i64,
        clock: &C,
        timeout_ns: u64,
        pause: &mut P,
        presence: &crate::bus::Presence<'_>,
    ) -> Result<i64, MemoryWaitError> {
        let mut deadline = Deadline::after(clock, timeout_ns);
        let start = clock.now_ns();
        let mut checked = start;
        loop {
            let v = self.value();
            if cond.holds(v, compare) {
                return Ok(v);
            }
            let now = clock.now_ns();
            if now.saturating_sub(checked) >= presence.every_ns {
                checked = now;
                if !presence.present() {
                    return Err(MemoryWaitError::DeviceGone {
                        waited_ns: now.saturating_sub(start),
                        last: v,
                    });
                }
            }
            if deadline.expired(clock) {
                // A bound that ends on a gone device says so.
                if !presence.present() {
                    return Err(MemoryWaitError::DeviceGone {
                        waited_ns: deadline.elapsed_ns(clock),
                        last: v,
                    });
                }
                return Err(MemoryWaitError::Timeout(SignalTimeout {
                    condition: cond,
                    compare,
                    last: v,
                    waited_ns: deadline.elapsed_ns(clock),
                }));
            }
            pause.pause();
        }
    }
}

impl SignalValue for SignalMemory {
    #[inline]
    fn load_acquire(&self) -> i64 {
        self.value()
    }
}

const _: () = {
    assert!(core::mem::size_of::<AmdSignal>() == 64);
    assert!(core::mem::align_of::<AmdSignal>() == 64);
};

const S: &str = "hsa/amd_hsa_signal.h";

/// Layout facts against ROCR's `amd_hsa_signal.h` and `hsa.h`.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(S, AmdSignal = "amd_signal_t" {
        kind = "kind", value = "value", event_mailbox_ptr = "event_mailbox_ptr",
        event_id = "event_id", reserved1 = "reserved1", start_ts = "start_ts",
        end_ts = "end_ts", queue_ptr = "queue_ptr", reserved3 = "reserved3",
    }),
    [
        Fact::constant(
            S,
            "__alignof__(amd_signal_t)",
            core::mem::align_of::<AmdSignal>() as u64
        ),
        Fact::constant(S, "AMD_SIGNAL_KIND_USER", AMD_SIGNAL_KIND_USER as u64),
        Fact::constant("hsa/hsa.h", "HSA_SIGNAL_CONDITION_EQ", Condition::Eq as u64),
        Fact::constant("hsa/hsa.h", "HSA_SIGNAL_CONDITION_NE", Condition::Ne as u64),
        Fact::constant("hsa/hsa.h", "HSA_SIGNAL_CONDITION_LT", Condition::Lt as u64),
        Fact::constant(
            "hsa/hsa.h",
            "HSA_SIGNAL_CONDITION_GTE",
            Condition::Gte as u64
        ),
        Fact::constant(
            "hsa/hsa.h",
            "sizeof(hsa_signal_t)",
            core::mem::size_of::<SignalHandle>() as u64
        ),
    ],
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{Presence, RegisterBus};
    use core::cell::Cell;

    /// A clock the pauses move.
    struct Manual(Cell<u64>);
    impl Clock for Manual {
        fn now_ns(&self) -> u64 {
            self.0.get()
        }
    }

    /// A register that reads all ones from `gone_at` ns on, and counts
    /// its reads.
    struct Bar<'c> {
        clock: &'c Manual,
        gone_at: u64,
        reads: Cell<u32>,
    }
    impl RegisterBus for Bar<'_> {
        fn read32(&self, _: usize) -> u32 {
            self.reads.set(self.reads.get() + 1);
            if self.clock.0.get() >= self.gone_at {
                u32::MAX
            } else {
                0x10
            }
        }
        fn write32(&self, _: usize, _: u32) {}
    }

    fn wait(gone_at: u64, timeout_ns: u64, every_ns: u64) -> (Result<i64, MemoryWaitError>, u32) {
        let signal = SignalMemory::new(1);
        let clock = Manual(Cell::new(1_000));
        let bar = Bar {
            clock: &clock,
            gone_at,
            reads: Cell::new(0),
        };
        let presence = Presence {
            bus: &bar,
            byte_offset: 0,
            every_ns,
        };
        let mut pause = || clock.0.set(clock.0.get() + 100);
        let r = signal.wait_present(Condition::Eq, 0, &clock, timeout_ns, &mut pause, &presence);
        (r, bar.reads.get())
    }

    /// `wait_pausing` reads the signal's own value: a value already
    /// there is returned as read, and one that never comes times out with
    /// the last value seen.
    #[test]
    fn wait_pausing_reads_the_signal_it_waits_on() {
        let signal = SignalMemory::new(7);
        let clock = Manual(Cell::new(0));
        let mut pause = || clock.0.set(clock.0.get() + 10);
        assert_eq!(
            signal.wait_pausing(Condition::Eq, 7, &clock, 100, &mut pause),
            Ok(7)
        );
        assert_eq!(
            signal.wait_pausing(Condition::Gte, 5, &clock, 100, &mut pause),
            Ok(7)
        );
        let t = signal
            .wait_pausing(Condition::Lt, 1, &clock, 100, &mut pause)
            .unwrap_err();
        assert_eq!((t.last, t.compare), (7, 1));
        assert!(t.waited_ns >= 100, "{}", t.waited_ns);
    }

    #[test]
    fn a_value_that_holds_returns_at_once_without_a_register_read() {
        let signal = SignalMemory::new(0);
        let clock = Manual(Cell::new(0));
        let bar = Bar {
            clock: &clock,
            gone_at: 0,
            reads: Cell::new(0),
        };
        let presence = Presence {
            bus: &bar,
            byte_offset: 0,
            every_ns: 1,
        };
        let r = signal.wait_present(Condition::Eq, 0, &clock, 10, &mut || {}, &presence);
        assert_eq!(r, Ok(0));
        assert_eq!(bar.reads.get(), 0);
    }

    #[test]
    fn a_device_that_goes_away_ends_the_wait_within_one_interval() {
        // Gone 1,000 ns in, read every 500 ns, bound 1 s: "gone" by
        // 2,500 ns (the first read at or after 2,000, in 100 ns pauses).
        match wait(2_000, 1_000_000_000, 500) {
            (Err(MemoryWaitError::DeviceGone { waited_ns, last }), reads) => {
                assert_eq!(last, 1);
                assert!((1_000..=1_500).contains(&waited_ns), "{waited_ns}");
                assert!(reads <= 3, "{reads} reads: one per interval");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_present_device_whose_signal_never_moves_times_out_at_the_bound() {
        match wait(u64::MAX, 5_000, 1_000) {
            (Err(MemoryWaitError::Timeout(t)), reads) => {
                assert_eq!((t.compare, t.last, t.condition), (0, 1, Condition::Eq));
                assert!((5_000..5_200).contains(&t.waited_ns), "{}", t.waited_ns);
                assert!(
                    (4..=6).contains(&reads),
                    "{reads} reads in 5 us at one per us"
                );
            }
            other => panic!("{other:?}"),
        }
        // Gone only as the bound ends: the answer is "gone", not a timeout.
        assert!(matches!(
            wait(5_950, 5_000, 1_000_000),
            (Err(MemoryWaitError::DeviceGone { .. }), _)
        ));
    }
}
