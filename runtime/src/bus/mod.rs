//! The one seam between the runtime and the device: [`RegisterBus`].
//!
//! Production implements it with volatile accesses into the BAR5 mapping
//! ([`Mmio`]); tests implement it with the device model. Everything above
//! this module speaks byte offsets into the register aperture and never
//! touches a pointer to registers directly.

use crate::time::{Clock, Deadline};

pub mod block;
pub mod indirect;
pub mod trace;

pub use block::{Block, BlockError};
pub use indirect::{IndirectBus, IndirectError};

/// Value a PCIe read returns when no device answers (surprise removal,
/// link down, function-level reset in progress). AMD parts also return it
/// for registers behind a powered-off block, so a poll that sees it cannot
/// tell "not ready" from "not there" and must stop.
pub const ALL_ONES: u32 = 0xFFFF_FFFF;

/// 32-bit register access at a byte offset into the register aperture.
///
/// Implementations must make every call one access of the device, in
/// program order: no caching, no merging. That is what the bring-up
/// sequences assume when they write a register and read another.
pub trait RegisterBus {
    fn read32(&self, byte_offset: usize) -> u32;
    fn write32(&self, byte_offset: usize, value: u32);
}

impl<B: RegisterBus + ?Sized> RegisterBus for &B {
    fn read32(&self, byte_offset: usize) -> u32 {
        (**self).read32(byte_offset)
    }
    fn write32(&self, byte_offset: usize, value: u32) {
        (**self).write32(byte_offset, value)
    }
}

/// A register aperture mapped into our address space (BAR5 on AMD GPUs).
#[derive(Debug)]
pub struct Mmio {
    base: core::ptr::NonNull<u32>,
    len: usize,
}

// SAFETY: `Mmio` is a handle to device memory; the device serialises
// concurrent 32-bit accesses itself and the type holds no Rust-side state.
unsafe impl Send for Mmio {}
// SAFETY: as above; `&Mmio` only performs single volatile accesses.
unsafe impl Sync for Mmio {}

impl Mmio {
    /// # Safety
    /// `base` must point to `len` bytes that stay mapped, uncached (or
    /// otherwise suitable for device registers) and valid for volatile
    /// 32-bit reads and writes for as long as the returned value lives.
    pub unsafe fn new(base: core::ptr::NonNull<u8>, len: usize) -> Self {
        Mmio {
            base: base.cast(),
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn slot(&self, byte_offset: usize) -> Option<*mut u32> {
        let end = byte_offset.checked_add(4)?;
        if end > self.len || !byte_offset.is_multiple_of(4) {
            return None;
        }
        // SAFETY: `byte_offset + 4 <= len`, so the result stays inside the
        // mapping `new` was promised, and it is 4-byte aligned.
        Some(unsafe { self.base.as_ptr().add(byte_offset / 4) })
    }
}

impl RegisterBus for Mmio {
    /// Out-of-range or misaligned offsets read as [`ALL_ONES`], the value an
    /// unclaimed PCIe read returns, so callers see the same thing as a dead
    /// device rather than a fault in the host.
    fn read32(&self, byte_offset: usize) -> u32 {
        match self.slot(byte_offset) {
            // SAFETY: `slot` checked bounds and alignment against the
            // mapping `new` was given.
            Some(p) => unsafe { p.read_volatile() },
            None => ALL_ONES,
        }
    }

    /// Out-of-range or misaligned offsets are dropped, as a PCIe posted
    /// write to nowhere is.
    fn write32(&self, byte_offset: usize, value: u32) {
        if let Some(p) = self.slot(byte_offset) {
            // SAFETY: `slot` checked bounds and alignment.
            unsafe { p.write_volatile(value) }
        }
    }
}

/// Why a bounded wait on a register ended without its condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitError {
    /// The bound passed; `last` is the final value read.
    Timeout {
        what: &'static str,
        byte_offset: usize,
        waited_ns: u64,
        last: u32,
    },
    /// The register read as all-ones: the device is gone or the block is
    /// powered off. Waiting longer cannot help.
    DeviceGone {
        what: &'static str,
        byte_offset: usize,
    },
}

impl core::fmt::Display for WaitError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            WaitError::Timeout {
                what,
                byte_offset,
                waited_ns,
                last,
            } => write!(
                f,
                "timed out after {waited_ns} ns waiting for {what} (register byte offset {byte_offset:#x}, last value {last:#010x})"
            ),
            WaitError::DeviceGone { what, byte_offset } => write!(
                f,
                "device gone while waiting for {what}: register byte offset {byte_offset:#x} reads all-ones"
            ),
        }
    }
}

/// How a wait on device *memory* (a completion signal, a fence) learns
/// the device is still there: one register read every `every_ns`
/// (issue 20). Memory the device writes never reads all ones by itself,
/// so without this a vanished device looks like a hang. `byte_offset`
/// names a register that cannot legitimately read all ones.
#[derive(Clone, Copy)]
pub struct Presence<'b> {
    pub bus: &'b dyn RegisterBus,
    pub byte_offset: usize,
    pub every_ns: u64,
}

impl Presence<'_> {
    /// One read: false if it came back all ones.
    pub fn present(&self) -> bool {
        self.bus.read32(self.byte_offset) != ALL_ONES
    }
}

/// Paces [`Presence`] reads within one wait: at most one per
/// `every_ns`, and one more when the wait's bound ends, so that a fence a
/// vanished device will never write ends as "device gone" within one
/// interval, not as a timeout at the bound (issue 32 item 5).
#[derive(Debug, Clone, Copy)]
pub struct PresenceWatch {
    checked: u64,
}

impl PresenceWatch {
    /// A watch whose first read falls `every_ns` after `now`.
    pub fn new(now: u64) -> PresenceWatch {
        PresenceWatch { checked: now }
    }

    /// Whether `presence` (none: never) says the device is gone, read
    /// if an interval has passed since the last read, or if `bound_ended`.
    pub fn gone(&mut self, presence: Option<&Presence<'_>>, now: u64, bound_ended: bool) -> bool {
        let Some(p) = presence else {
            return false;
        };
        if !bound_ended && now.saturating_sub(self.checked) < p.every_ns {
            return false;
        }
        self.checked = now;
        !p.present()
    }
}

impl core::fmt::Debug for Presence<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Presence")
            .field("byte_offset", &self.byte_offset)
            .field("every_ns", &self.every_ns)
            .finish_non_exhaustive()
    }
}

/// A condition on one register: `(value & mask) == want`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegCondition {
    pub what: &'static str,
    pub byte_offset: usize,
    pub mask: u32,
    pub want: u32,
}

/// Polls `cond` until it holds or `timeout_ns` passes on `clock`.
///
/// An all-ones read ends the wait at once with [`WaitError::DeviceGone`]:
/// the registers barebell polls (PSP mailboxes, status and ack registers)
/// never legitimately read all-ones, and a condition such as "bit 31 set"
/// would otherwise be satisfied by a dead device.
pub fn poll<B, C>(bus: &B, clock: &C, cond: RegCondition, timeout_ns: u64) -> Result<u32, WaitError>
where
    B: RegisterBus + ?Sized,
    C: Clock + ?Sized,
{
    let mut deadline = Deadline::after(clock, timeout_ns);
    loop {
        let v = bus.read32(cond.byte_offset);
        if v == ALL_ONES {
            return Err(WaitError::DeviceGone {
                what: cond.what,
                byte_offset: cond.byte_offset,
            });
        }
        if v & cond.mask == cond.want {
            return Ok(v);
        }
        if deadline.expired(clock) {
            return Err(WaitError::Timeout {
                what: cond.what,
                byte_offset: cond.byte_offset,
                waited_ns: deadline.elapsed_ns(clock),
                last: v,
            });
        }
        core::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    /// Each read advances simulated time by 10 ns; the register becomes
    /// ready after `ready_after` reads, or reads all-ones once `gone`.
    struct Fake {
        now: Cell<u64>,
        reads: Cell<u32>,
        ready_after: u32,
        gone: bool,
    }
    impl Clock for Fake {
        fn now_ns(&self) -> u64 {
            self.now.get()
        }
    }
    impl RegisterBus for Fake {
        fn read32(&self, _: usize) -> u32 {
            self.now.set(self.now.get() + 10);
            self.reads.set(self.reads.get() + 1);
            if self.gone {
                ALL_ONES
            } else if self.reads.get() > self.ready_after {
                0x8000_0000
            } else {
                0x1
            }
        }
        fn write32(&self, _: usize, _: u32) {}
    }

    fn fake(ready_after: u32, gone: bool) -> Fake {
        Fake {
            now: Cell::new(0),
            reads: Cell::new(0),
            ready_after,
            gone,
        }
    }

    const BIT31: RegCondition = RegCondition {
        what: "C2PMSG_35 ready",
        byte_offset: 0x100,
        mask: 0x8000_0000,
        want: 0x8000_0000,
    };

    #[test]
    fn poll_returns_value_once_condition_holds() {
        let f = fake(3, false);
        assert_eq!(poll(&f, &f, BIT31, 1_000), Ok(0x8000_0000));
        assert_eq!(f.reads.get(), 4);
    }

    #[test]
    fn poll_times_out_with_last_value() {
        let f = fake(u32::MAX, false);
        let err = poll(&f, &f, BIT31, 100).unwrap_err();
        assert_eq!(
            err,
            WaitError::Timeout {
                what: "C2PMSG_35 ready",
                byte_offset: 0x100,
                waited_ns: 100,
                last: 1
            }
        );
    }

    #[test]
    fn all_ones_is_device_gone_not_success() {
        let f = fake(0, true);
        assert_eq!(
            poll(&f, &f, BIT31, 1_000),
            Err(WaitError::DeviceGone {
                what: "C2PMSG_35 ready",
                byte_offset: 0x100
            })
        );
        assert_eq!(f.reads.get(), 1);
    }

    #[test]
    fn mmio_bounds_and_alignment() {
        let mut mem = [0u32; 4];
        let base = core::ptr::NonNull::new(mem.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: `mem` outlives `m` and is valid for 16 bytes.
        let m = unsafe { Mmio::new(base, 16) };
        m.write32(4, 0xdead_beef);
        m.write32(16, 1); // out of range: dropped
        m.write32(2, 1); // misaligned: dropped
        assert_eq!(m.read32(4), 0xdead_beef);
        assert_eq!(m.read32(16), ALL_ONES);
        assert_eq!(m.read32(usize::MAX - 1), ALL_ONES);
        assert_eq!(m.read32(6), ALL_ONES);
        let _ = m;
        assert_eq!(mem, [0, 0xdead_beef, 0, 0]);
    }
}
