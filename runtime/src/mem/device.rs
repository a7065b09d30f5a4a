//! Device-visible memory as a type.
//!
//! A [`DeviceArena`] is a range of host memory that the device reaches at
//! GPU VA = host address in every context that will use what it hands
//! out (the ring area the bring-up maps into VMID0 and into the process
//! page tables, as KFD maps a user queue's memory at its CPU address).
//! Its constructor is the one place that argument is made. What it hands
//! out is a [`Dev`]: a shared reference that also carries that promise,
//! so the functions that give the device an address (queue mapping, the
//! KIQ and MES ring loads) take `Dev` handles and need no `unsafe` at
//! their call sites. The only other way to make a `Dev` is
//! [`Dev::assume`], for memory placed by other means (the device model's
//! leaked fixtures), which states the same contract.

use super::MemError;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// 4 KiB: what every placement is aligned to at least (an MQD, a ring, a
/// table each take whole pages).
const PAGE: usize = 4096;

/// A `T` in device-visible memory: a shared reference to it, plus the
/// promise that the device reaches it at GPU VA = its host address and
/// that it stays allocated (and used for nothing else) until the device
/// can no longer reach it, which may be after `'a` ends.
///
/// Made only by [`DeviceArena::put`] or [`Dev::assume`]. `Copy`, and
/// `Deref`s to `T`; [`Dev::get`] gives the reference for all of `'a`.
pub struct Dev<'a, T>(&'a T);

impl<T> Clone for Dev<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Dev<'_, T> {}

impl<T> core::ops::Deref for Dev<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0
    }
}

impl<T: core::fmt::Debug> core::fmt::Debug for Dev<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Dev").field(&self.address()).finish()
    }
}

impl<'a, T> Dev<'a, T> {
    /// Treats `value` as device memory.
    ///
    /// # Safety
    /// `value` must lie in host memory that
    /// - the device reaches at GPU VA = host address in every context
    ///   (VMID, page tables, the model's DMA windows) that will be given
    ///   an address inside it, and
    /// - stays allocated, and holds nothing but `value`, until the device
    ///   can no longer reach it: for as long as any queue, ring or MQD
    ///   that names it may run, even after `'a` ends. Leaked memory, or
    ///   memory a platform keeps until the device is quiesced, qualifies.
    pub unsafe fn assume(value: &'a T) -> Self {
        Dev(value)
    }

    /// The reference, for all of `'a`.
    pub fn get(self) -> &'a T {
        self.0
    }

    /// The first byte's address: the host address, which is the GPU VA.
    pub fn address(self) -> u64 {
        core::ptr::from_ref(self.0) as u64
    }
}

/// A bump allocator over device-visible host memory.
#[derive(Debug)]
pub struct DeviceArena<'a> {
    base: usize,
    next: usize,
    end: usize,
    _mem: PhantomData<&'a mut [u8]>,
}

// SAFETY: the arena only holds addresses; what it hands out is `Dev<'a, T>`,
// whose own Send/Sync rules apply.
unsafe impl Send for DeviceArena<'_> {}

impl<'a> DeviceArena<'a> {
    /// # Safety
    /// `[base, base + len)` must be writable host memory that stays valid
    /// for `'a` and, beyond it, until the device can no longer reach it;
    /// that nothing else in the process uses; and that the device reaches
    /// at GPU VA = host address in every context that is given an address
    /// of what the arena hands out. This is the [`Dev::assume`] contract
    /// for everything [`DeviceArena::put`] places.
    pub unsafe fn new(base: NonNull<u8>, len: usize) -> Self {
        let b = base.as_ptr() as usize;
        DeviceArena {
            base: b,
            next: b,
            end: b.saturating_add(len),
            _mem: PhantomData,
        }
    }

    /// First byte and length, as GPU VA = host address.
    pub fn range(&self) -> (u64, u64) {
        (self.base as u64, (self.end - self.base) as u64)
    }

    /// Bytes not yet handed out.
    pub fn remaining(&self) -> usize {
        self.end - self.next
    }

    /// Moves `value` into the next free, page-aligned bytes and returns a
    /// handle the device can be given the address of.
    pub fn put<T>(&mut self, value: T) -> Result<Dev<'a, T>, MemError> {
        let align = core::mem::align_of::<T>().max(PAGE);
        let size = core::mem::size_of::<T>().max(1);
        let start = self.next.checked_next_multiple_of(align);
        let end = start.and_then(|s| s.checked_add(size));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(MemError::Overflow {
                base: self.next as u64,
                size: size as u64,
            });
        };
        if end > self.end {
            return Err(MemError::OutOfSpace {
                requested: size as u64,
                align: align as u64,
                available: self.end.saturating_sub(start) as u64,
            });
        }
        self.next = end;
        let p = start as *mut T;
        // SAFETY: `[start, start + size)` lies inside the arena (checked
        // above), is aligned for `T`, and is handed out once, so nothing
        // aliases it; the memory is valid for `'a` (the contract of
        // `new`). Writing the value before making the reference
        // initialises it; the device learns its address only after this.
        // The `Dev` contract is `new`'s, for this part of the arena, which
        // holds nothing but the value.
        unsafe {
            p.write(value);
            Ok(Dev::assume(&*p))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_are_page_aligned_disjoint_and_bounded() {
        #[repr(C, align(4096))]
        struct Pages([u8; 4 * PAGE]);
        let mut mem = Pages([0; 4 * PAGE]);
        let base = NonNull::new(mem.0.as_mut_ptr()).unwrap();
        // SAFETY: `mem` outlives the arena and nothing else uses it.
        let mut a = unsafe { DeviceArena::new(base, 4 * PAGE) };
        let x = a.put(7u64).unwrap();
        let y = a.put([1u32; 1100]).unwrap();
        assert_eq!(*x, 7);
        assert_eq!(y[1099], 1);
        let (xa, ya) = (x.address() as usize, y.address() as usize);
        assert_eq!(xa % PAGE, 0);
        assert_eq!(ya, xa + PAGE);
        assert_eq!(a.remaining(), 4 * PAGE - (PAGE + 4400));
        assert!(matches!(
            a.put([0u8; 2 * PAGE]),
            Err(MemError::OutOfSpace { .. })
        ));
    }
}
