//! Doorbells: one 64-bit slot per queue in BAR2.
//!
//! On gfx9 and later each doorbell is 8 bytes and is addressed by a
//! doorbell index in 8-byte units (`AMDGPU_NAVI10_DOORBELL_*` in Linux's
//! `amdgpu_doorbell.h` number them); the MQD's
//! `cp_hqd_pq_doorbell_control` carries the byte offset. Writing the slot
//! is the whole of "submission" from the CPU's point of view.

use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering};

/// Size of one doorbell slot in bytes.
pub const DOORBELL_BYTES: usize = 8;

/// A doorbell as every report names it: by its 64-bit slot (Linux's
/// `AMDGPU_NAVI10_DOORBELL_*` / `AMDGPU_DOORBELL_LAYOUT1_*` index; BAR2
/// byte offset = 8 × slot), whatever unit the source held. Registers and
/// MQDs hold dwords (`DOORBELL_OFFSET` = 2 × slot); [`Slot::from_dword`]
/// converts, and a dword that is not a slot's first is shown as a dword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    dword: u64,
}

impl Slot {
    /// 64-bit doorbell index `slot`.
    pub const fn new(slot: u32) -> Self {
        Slot {
            dword: slot as u64 * 2,
        }
    }

    /// The doorbell a dword offset (`DOORBELL_OFFSET`) names.
    pub const fn from_dword(dword: u32) -> Self {
        Slot {
            dword: dword as u64,
        }
    }
}

/// `doorbell slot 0xd`, or `doorbell dword 0x1b (not a 64-bit slot)`.
impl core::fmt::Display for Slot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.dword.is_multiple_of(2) {
            write!(f, "doorbell slot {:#x}", self.dword / 2)
        } else {
            write!(f, "doorbell dword {:#x} (not a 64-bit slot)", self.dword)
        }
    }
}

/// Why a doorbell could not be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoorbellError {
    /// `index * 8 + 8` does not fit in the doorbell aperture.
    OutOfAperture { index: u32, aperture_bytes: usize },
    /// The slot address is not 8-byte aligned.
    Misaligned { address: usize },
}

impl core::fmt::Display for DoorbellError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            DoorbellError::OutOfAperture {
                index,
                aperture_bytes,
            } => write!(
                f,
                "doorbell slot {index:#x} lies beyond the {aperture_bytes}-byte doorbell aperture"
            ),
            DoorbellError::Misaligned { address } => {
                write!(f, "doorbell slot at {address:#x} is not 8-byte aligned")
            }
        }
    }
}

/// A 64-bit doorbell slot.
///
/// The store is a single 64-bit release store. On x86-64 that is one `mov`
/// to the slot, which is what the CP needs (a torn 2×32-bit write would be
/// seen as two doorbells). Release ordering keeps the packet writes before
/// it, including for a model CP that runs on another thread.
#[derive(Debug, Clone, Copy)]
pub struct Doorbell {
    slot: NonNull<u64>,
}

// SAFETY: a doorbell is a device (or model) address; ringing it from any
// thread is a single atomic store.
unsafe impl Send for Doorbell {}
// SAFETY: as above; `ring` takes `&self` and performs one atomic store.
unsafe impl Sync for Doorbell {}

impl Doorbell {
    /// # Safety
    /// `slot` must stay valid for 8-byte atomic stores for as long as the
    /// doorbell (or any copy of it) is used, and every other access to it
    /// must be atomic (the CP model) or by the device.
    pub unsafe fn from_ptr(slot: NonNull<u64>) -> Result<Self, DoorbellError> {
        if !(slot.as_ptr() as usize).is_multiple_of(DOORBELL_BYTES) {
            return Err(DoorbellError::Misaligned {
                address: slot.as_ptr() as usize,
            });
        }
        Ok(Doorbell { slot })
    }

    /// Doorbell `index` inside a mapped doorbell aperture (BAR2); the same
    /// as [`DoorbellAperture::new`] then [`DoorbellAperture::doorbell`].
    ///
    /// # Safety
    /// As [`DoorbellAperture::new`].
    pub unsafe fn in_aperture(
        aperture: NonNull<u8>,
        aperture_bytes: usize,
        index: u32,
    ) -> Result<Self, DoorbellError> {
        // SAFETY: forwarded contract.
        unsafe { DoorbellAperture::new(aperture, aperture_bytes) }.doorbell(index)
    }

    /// Tells the CP that packets up to and including `last_packet_id` are
    /// published.
    #[inline(always)]
    pub fn ring(&self, last_packet_id: u64) {
        // SAFETY: `from_ptr` checked alignment and its caller promised the
        // slot is valid for atomic 8-byte stores for our lifetime.
        unsafe { AtomicU64::from_ptr(self.slot.as_ptr()) }.store(last_packet_id, Ordering::Release);
    }

    pub fn address(&self) -> usize {
        self.slot.as_ptr() as usize
    }
}

/// A mapped doorbell aperture (BAR2, or the model's doorbell page). The
/// argument that the mapping is live is made once, by [`DoorbellAperture::new`];
/// [`DoorbellAperture::doorbell`] then hands out bounds-checked doorbells
/// safely.
#[derive(Debug, Clone, Copy)]
pub struct DoorbellAperture {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the aperture is an address range; the doorbells it hands out
// are `Send + Sync` for the reasons given on `Doorbell`.
unsafe impl Send for DoorbellAperture {}
// SAFETY: as above; `doorbell` only computes addresses.
unsafe impl Sync for DoorbellAperture {}

impl DoorbellAperture {
    /// # Safety
    /// `base` must be a live mapping of `len` bytes of the doorbell BAR
    /// (uncached), or of host memory that every other party accesses only
    /// with atomic 8-byte stores and loads (the device model's doorbell
    /// page), and stay so for as long as any doorbell this aperture hands
    /// out (or any copy of one) is used.
    pub unsafe fn new(base: NonNull<u8>, len: usize) -> Self {
        DoorbellAperture { base, len }
    }

    /// The aperture's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// 64-bit doorbell `index`, refused if it lies outside the aperture.
    pub fn doorbell(&self, index: u32) -> Result<Doorbell, DoorbellError> {
        let out = DoorbellError::OutOfAperture {
            index,
            aperture_bytes: self.len,
        };
        let offset = (index as usize).checked_mul(DOORBELL_BYTES).ok_or(out)?;
        if offset.checked_add(DOORBELL_BYTES).ok_or(out)? > self.len {
            return Err(out);
        }
        // SAFETY: `offset + 8 <= len`, inside the mapping `new` was given.
        let slot = unsafe { self.base.add(offset) }.cast::<u64>();
        // SAFETY: `new`'s contract covers every slot inside the aperture.
        unsafe { Doorbell::from_ptr(slot) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gfx11 user-queue doorbell (`AMDGPU_NAVI10_DOORBELL_USERQUEUE_START`
    /// = 0x00D, `amdgpu_doorbell.h`) whose MQD holds `DOORBELL_OFFSET`
    /// 0x1a, shown as one slot from either unit.
    #[test]
    fn a_doorbell_reads_the_same_from_a_slot_or_a_dword() {
        extern crate alloc;
        use alloc::string::ToString;
        assert_eq!(Slot::new(0xd).to_string(), "doorbell slot 0xd");
        assert_eq!(Slot::from_dword(0x1a), Slot::new(0xd));
        assert_eq!(Slot::from_dword(0x1a).to_string(), "doorbell slot 0xd");
        assert_eq!(
            Slot::from_dword(0x1b).to_string(),
            "doorbell dword 0x1b (not a 64-bit slot)"
        );
        assert_eq!(Slot::new(u32::MAX).to_string(), "doorbell slot 0xffffffff");
    }

    #[test]
    fn aperture_bounds() {
        let mut page = [0u64; 4];
        let base = NonNull::new(page.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: `page` outlives the doorbells below.
        let aperture = unsafe { DoorbellAperture::new(base, 32) };
        let d = aperture.doorbell(3).unwrap();
        d.ring(0x1234_5678_9abc_def0);
        assert_eq!(
            aperture.doorbell(4).unwrap_err(),
            DoorbellError::OutOfAperture {
                index: 4,
                aperture_bytes: 32
            }
        );
        assert_eq!(page[3], 0x1234_5678_9abc_def0);
        assert_eq!(d.address(), page.as_ptr() as usize + 24);
        assert_eq!(aperture.len(), 32);
        assert!(!aperture.is_empty());
        // SAFETY: an empty aperture hands out nothing.
        let none = unsafe { DoorbellAperture::new(base, 0) };
        assert!(none.is_empty());
        assert!(none.doorbell(0).is_err());
        // SAFETY: 4 bytes into a 32-byte array stays in bounds.
        let odd = unsafe { base.add(4) }.cast::<u64>();
        // SAFETY: a misaligned pointer is rejected before any access.
        let r = unsafe { Doorbell::from_ptr(odd) };
        assert!(matches!(r, Err(DoorbellError::Misaligned { .. })));
    }
}
