//! Host bytes the device writes (a kernel's output buffer, an SDMA
//! destination), held without a Rust reference while the device may
//! write them.
//!
//! A `&mut [u8]` (or `&[u8]`) kept across a dispatch tells the compiler
//! that nothing else changes those bytes meanwhile, which is false: the
//! device (on the model, its thread) writes them. [`DmaView`] takes the
//! exclusive borrow for its whole life, so no other reference to the
//! bytes can exist, and copies in and out with volatile accesses through
//! its raw pointer. Reads that mean something happen after the
//! completion signal's acquire load, which orders the device's writes
//! before them.

use core::marker::PhantomData;
use core::ptr::NonNull;

/// `len` device-writable bytes at `ptr`, borrowed for `'a`.
#[derive(Debug, Clone, Copy)]
pub struct DmaView<'a> {
    ptr: NonNull<u8>,
    len: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: a view is a pointer and a length; every access goes through
// volatile copies of bytes, which any thread may make (the device's
// thread writes the same bytes by design; see the module docs for the
// ordering).
unsafe impl Send for DmaView<'_> {}
// SAFETY: as for Send; `&DmaView` gives no reference to the bytes.
unsafe impl Sync for DmaView<'_> {}

impl<'a> DmaView<'a> {
    /// The view over `bytes`, which stay exclusively borrowed for `'a`.
    pub fn new(bytes: &'a mut [u8]) -> DmaView<'a> {
        DmaView {
            len: bytes.len(),
            ptr: NonNull::from(bytes).cast(),
            _borrow: PhantomData,
        }
    }

    /// The first byte's address (the device address where VA = host).
    pub fn address(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// Copies `src` to byte `at`; false (nothing written) if it does not
    /// fit. Aligned 8-byte volatile stores where the address allows, byte
    /// stores elsewhere.
    pub fn write(&self, at: usize, src: &[u8]) -> bool {
        if at.checked_add(src.len()).is_none_or(|end| end > self.len) {
            return false;
        }
        let mut i = 0;
        while i < src.len() {
            // SAFETY: `at + i < len` (checked above and by the loop), so
            // the pointer stays inside the bytes borrowed for 'a, to which
            // no reference exists while the view lives. Below, the word
            // store is at an 8-byte-aligned address with 8 bytes left, the
            // byte store needs no alignment.
            let p = unsafe { self.ptr.as_ptr().add(at + i) };
            if (p as usize).is_multiple_of(8)
                && let Some(w) = src.get(i..i + 8)
            {
                let mut b = [0u8; 8];
                b.copy_from_slice(w);
                // SAFETY: see above.
                unsafe { p.cast::<u64>().write_volatile(u64::from_ne_bytes(b)) };
                i += 8;
            } else {
                // SAFETY: see above.
                unsafe { p.write_volatile(src[i]) };
                i += 1;
            }
        }
        true
    }

    /// The first `n` bytes (all of them if fewer), read as [`write`]
    /// writes them.
    ///
    /// [`write`]: DmaView::write
    pub fn head(&self, n: usize) -> Vec<u8> {
        let n = n.min(self.len);
        let mut out = Vec::with_capacity(n);
        let mut i = 0;
        while i < n {
            // SAFETY: `i < n <= len`, so the pointer stays inside the
            // borrowed bytes. Below, volatile loads (the device may have
            // written them): the word load at an 8-byte-aligned address
            // with 8 bytes left, the byte load needs no alignment.
            let p = unsafe { self.ptr.as_ptr().add(i) };
            if (p as usize).is_multiple_of(8) && i + 8 <= n {
                // SAFETY: see above.
                let w = unsafe { p.cast::<u64>().read_volatile() };
                out.extend_from_slice(&w.to_ne_bytes());
                i += 8;
            } else {
                // SAFETY: see above.
                out.push(unsafe { p.read_volatile() });
                i += 1;
            }
        }
        out
    }

    /// Every byte.
    pub fn to_vec(self) -> Vec<u8> {
        self.head(self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::DmaView;

    #[test]
    fn copies_in_and_out_within_bounds() {
        let mut bytes = [0u8; 8];
        let v = DmaView::new(&mut bytes);
        let mut big = [0u8; 67];
        let w = DmaView::new(&mut big[1..]);
        let src: Vec<u8> = (0..66u8).collect();
        assert!(w.write(0, &src));
        assert_eq!(w.to_vec(), src);
        assert_eq!(w.head(9), src[..9]);
        assert!(v.write(2, &[1, 2, 3]));
        assert!(!v.write(6, &[1, 2, 3]));
        assert!(!v.write(usize::MAX, &[1]));
        assert_eq!(v.to_vec(), [0, 0, 1, 2, 3, 0, 0, 0]);
        assert_eq!(v.head(3), [0, 0, 1]);
        assert_eq!(v.head(100).len(), 8);
    }
}
