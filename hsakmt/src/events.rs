//! Events (`hsaKmtCreateEvent` ...): host objects ROCR waits on.
//!
//! The thunk's events are KFD's, signalled by the GPU's interrupts through
//! an event mailbox. barebell's model raises no host interrupt for them
//! yet, so an event here is signalled by `hsaKmtSetEvent` only, and every
//! wait is bounded by [`WAIT_SLICE_MS`]: ROCR re-reads the signal value
//! after each wait (`InterruptSignal::WaitRelaxed`, its async-events loop
//! in `Runtime::AsyncEventsLoop`), so a completion the device writes into
//! a signal is seen within one slice. `HWData2` (the mailbox address ROCR
//! hands the CP) is 0: the CP writes no mailbox.

use crate::abi::{HsaEvent, HsaEventDescriptor, status};
use std::collections::HashSet;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The longest one wait blocks, whatever ROCR asks (its async thread asks
/// for 0xFFFFFFFE ms).
pub const WAIT_SLICE_MS: u32 = 5;

/// An event: the C struct ROCR reads first (`#[repr(C)]`, so a pointer to
/// the box is a pointer to the `HsaEvent`), then its state. The C struct
/// is written while ROCR holds the pointer (a memory fault's data,
/// [`report_memory_fault`]), hence the cell.
#[repr(C)]
#[derive(Debug)]
pub struct Event {
    pub c: core::cell::UnsafeCell<HsaEvent>,
    manual_reset: bool,
    signalled: Mutex<bool>,
    wake: Condvar,
}

/// Live events by address, so a stale or foreign pointer is refused.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);
static NEXT_ID: Mutex<u32> = Mutex::new(1);

fn live() -> std::sync::MutexGuard<'static, Option<HashSet<usize>>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A new event for `desc`.
pub fn create(desc: &HsaEventDescriptor, manual_reset: bool, signalled: bool) -> *mut HsaEvent {
    let id = {
        let mut n = NEXT_ID
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let id = *n;
        *n = n.wrapping_add(1).max(1);
        id
    };
    let mut c = HsaEvent {
        EventId: id,
        ..Default::default()
    };
    c.EventData.EventType = desc.EventType;
    let ev = Box::new(Event {
        c: core::cell::UnsafeCell::new(c),
        manual_reset,
        signalled: Mutex::new(signalled),
        wake: Condvar::new(),
    });
    let p = Box::into_raw(ev);
    live().get_or_insert_with(HashSet::new).insert(p as usize);
    p.cast()
}

/// The event behind `p`, if this library made it and it lives.
///
/// # Safety
/// The returned reference is valid until [`destroy`] of the same pointer,
/// which ROCR calls only once nothing waits on it.
pub unsafe fn get<'a>(p: *const HsaEvent) -> Option<&'a Event> {
    if !live().as_ref().is_some_and(|s| s.contains(&(p as usize))) {
        return None;
    }
    // SAFETY: `p` came from `create` (it is in LIVE) and is not destroyed;
    // the caller's contract bounds the lifetime.
    Some(unsafe { &*p.cast::<Event>() })
}

/// Frees the event; `INVALID_HANDLE` for one this library does not know.
/// A null event is accepted (ROCR destroys a null VM-fault event when
/// interrupts are off).
pub fn destroy(p: *mut HsaEvent) -> u32 {
    if p.is_null() {
        return status::SUCCESS;
    }
    if !live().as_mut().is_some_and(|s| s.remove(&(p as usize))) {
        return status::INVALID_HANDLE;
    }
    // SAFETY: `p` was `Box::into_raw` in `create` and was live until the
    // line above removed it, so this is its only release.
    drop(unsafe { Box::from_raw(p.cast::<Event>()) });
    status::SUCCESS
}

impl Event {
    /// Signals it and wakes its waiters.
    pub fn set(&self) {
        let mut s = self
            .signalled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *s = true;
        self.wake.notify_all();
    }

    /// Whether it is signalled now; an auto-reset event is reset by the
    /// look that finds it set.
    pub fn take(&self) -> bool {
        let mut s = self
            .signalled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let was = *s;
        if was && !self.manual_reset {
            *s = false;
        }
        was
    }

    /// Waits until signalled or `until`.
    fn wait_until(&self, until: Instant) -> bool {
        let mut s = self
            .signalled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while !*s {
            let now = Instant::now();
            if now >= until {
                return false;
            }
            s = match self.wake.wait_timeout(s, until - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        if !self.manual_reset {
            *s = false;
        }
        true
    }
}

// SAFETY: the cell is written only by `report_memory_fault`, with
// volatile stores of whole words while the live-set lock is held, and
// read by ROCR, which tolerates a concurrent update exactly as it does
// with the thunk (KFD's data lands while ROCR may be looking).
unsafe impl Sync for Event {}

/// `HSA_EVENTTYPE_MEMORY`'s `HsaAccessAttributeFailure` bits
/// (`hsakmttypes.h`).
pub mod failure {
    pub const NOT_PRESENT: u32 = 1 << 0;
    pub const READ_ONLY: u32 = 1 << 1;
    pub const NO_EXECUTE: u32 = 1 << 2;
}

/// `HSA_EVENTID_MEMORY_FATAL_PROCESS`.
const MEMORY_FATAL_PROCESS: u32 = 1;

/// A GPU memory fault, told to every memory event (ROCR's VM-fault
/// event): its `HsaMemoryAccessFault` filled (node, address, failure
/// bits, fatal to the process) and the event set, what KFD's
/// `kfd_signal_vm_fault_event()` and the thunk's event wait do. ROCR's
/// wait sees the nonzero failure word and runs its VM-fault handler,
/// which reports the fault and ends the process, as on KFD. Returns how
/// many events were told.
pub fn report_memory_fault(node: u32, va: u64, failure: u32) -> usize {
    let set = live();
    let Some(set) = set.as_ref() else {
        return 0;
    };
    let mut told = 0;
    for &p in set {
        // SAFETY: every address in the live set is a boxed `Event` that
        // `destroy` has not freed (it removes the address under the same
        // lock before freeing).
        let e = unsafe { &*(p as *const Event) };
        let c = e.c.get();
        // SAFETY: the event type is written once, at creation.
        if unsafe { (*c).EventData.EventType } != crate::abi::event_type::MEMORY {
            continue;
        }
        let data = [
            node,
            va as u32,
            (va >> 32) as u32,
            failure,
            MEMORY_FATAL_PROCESS,
        ];
        // SAFETY: `c` points into the live box; `EventData.EventData` is
        // five u32 words (packed(4)), written one word at a time.
        unsafe {
            let words = core::ptr::addr_of_mut!((*c).EventData.EventData).cast::<u32>();
            for (i, w) in data.into_iter().enumerate() {
                words.add(i).write_volatile(w);
            }
        }
        e.set();
        told += 1;
    }
    told
}

/// The deadline of a wait of `ms` milliseconds, bounded by the slice.
pub fn deadline(ms: u32) -> Instant {
    Instant::now() + Duration::from_millis(u64::from(ms.min(WAIT_SLICE_MS)))
}

/// `hsaKmtWaitOnMultipleEvents`: any (or all) of `events` signalled before
/// the bounded deadline.
pub fn wait(events: &[&Event], all: bool, ms: u32) -> u32 {
    let until = deadline(ms);
    if all {
        let done = events.iter().all(|e| e.wait_until(until));
        return if done {
            status::SUCCESS
        } else {
            status::WAIT_TIMEOUT
        };
    }
    loop {
        if events.iter().any(|e| e.take()) {
            return status::SUCCESS;
        }
        if Instant::now() >= until {
            return status::WAIT_TIMEOUT;
        }
        // Several events cannot share one condvar here: look again after
        // a short sleep, within the slice.
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// `hsaKmtWaitOnEvent`.
pub fn wait_one(e: &Event, ms: u32) -> u32 {
    if e.wait_until(deadline(ms)) {
        status::SUCCESS
    } else {
        status::WAIT_TIMEOUT
    }
}
