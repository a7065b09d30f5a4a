//! Device-visible memory as a type.
//!
//! A [`DeviceArena`] is a range of host memory that the device reaches at
//! GPU VA = host address in every context that will use what it hands
//! out (the ring area the bring-up maps into VMID0 and into the process
//! page tables, as KFD maps a user queue's memory at its CPU address).
//! Its constructor is the one place that argument is made; what it hands
//! out is a plain shared reference with the arena's lifetime, so the
//! types placed there (rings, MQDs, EOP buffers, queues, signals), which
//! give the device their host addresses, can be used without `unsafe` at
//! their call sites.

use super::MemError;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// 4 KiB: what every placement is aligned to at least (an MQD, a ring, a
/// table each take whole pages).
const PAGE: usize = 4096;

/// A bump allocator over device-visible host memory.
#[derive(Debug)]
pub struct DeviceArena<'a> {
    base: usize,
    next: usize,
    end: usize,
    _mem: PhantomData<&'a mut [u8]>,
}

// SAFETY: the arena only holds addresses; what it hands out is `&'a T`,
// whose own Send/Sync rules apply.
unsafe impl Send for DeviceArena<'_> {}

impl<'a> DeviceArena<'a> {
    /// # Safety
    /// `[base, base + len)` must be writable host memory that stays valid
    /// for `'a`, that nothing else in the process uses, and that the
    /// device reaches at GPU VA = host address in every context that is
    /// given an address of what the arena hands out.
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
    /// reference the device can be given the address of.
    pub fn put<T>(&mut self, value: T) -> Result<&'a T, MemError> {
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
        unsafe {
            p.write(value);
            Ok(&*p)
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
        let (xa, ya) = (x as *const u64 as usize, y.as_ptr() as usize);
        assert_eq!(xa % PAGE, 0);
        assert_eq!(ya, xa + PAGE);
        assert_eq!(a.remaining(), 4 * PAGE - (PAGE + 4400));
        assert!(matches!(
            a.put([0u8; 2 * PAGE]),
            Err(MemError::OutOfSpace { .. })
        ));
    }
}
