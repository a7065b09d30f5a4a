//! Host bytes the device may write (user buffers, a kernel's output, an
//! SDMA destination, VRAM through BAR0), held without a Rust reference.
//!
//! A `&mut [u8]` (or `&[u8]`) kept while a dispatch runs tells the
//! compiler that nothing else changes those bytes meanwhile, which is
//! false: the device (on the model, its thread) writes them, and so may a
//! user kernel at any address its page tables give it. [`DmaView`] owns
//! the right to the bytes for its life and copies in and out with
//! volatile accesses through a raw pointer. Reads that mean something
//! happen after the completion signal's acquire load, which orders the
//! device's writes before them.
//!
//! No allocation: copies go into caller-owned buffers.

use core::marker::PhantomData;
use core::ptr::NonNull;

/// `len` device-writable bytes at `ptr`, borrowed for `'a`.
#[derive(Debug, Clone, Copy)]
pub struct DmaView<'a> {
    ptr: NonNull<u8>,
    len: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: a view is a pointer and a length; every access is a volatile
// copy of bytes, which any thread may make (the device's thread writes
// the same bytes by design; see the module docs for the ordering).
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

    /// The view over `[ptr, ptr + len)`.
    ///
    /// # Safety
    /// The bytes must be host memory valid for reads and writes for `'a`,
    /// to which no Rust reference exists while a view of them lives (the
    /// device may write them; every access here is volatile).
    pub unsafe fn from_raw(ptr: NonNull<u8>, len: usize) -> DmaView<'a> {
        DmaView {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// The bytes as a slice, for memory the device only reads (a code
    /// image, a kernarg segment) filled by the host before the dispatch
    /// that reads it.
    ///
    /// # Safety
    /// Nothing may write the bytes but through the slice while it lives:
    /// no dispatch that writes them may run (a kernel reads its code and
    /// kernargs; a user kernel that stores to them breaks this contract
    /// as it would break `hipMemcpy`'s), and no other view of them is used.
    pub unsafe fn into_host_bytes(self) -> &'a mut [u8] {
        // SAFETY: the view covers `len` bytes valid for 'a (`new`'s borrow
        // or `from_raw`'s contract); the caller promises exclusivity.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The first byte's host address (the device address where GPU VA =
    /// host address).
    pub fn address(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `len` bytes from `at`, or `None` if they do not fit.
    pub fn sub(&self, at: usize, len: usize) -> Option<DmaView<'a>> {
        let end = at.checked_add(len)?;
        if end > self.len {
            return None;
        }
        // SAFETY: `at <= len`, so the pointer stays inside (or one past)
        // the borrowed bytes; the new view covers a part of them for the
        // same 'a.
        let ptr = unsafe { self.ptr.add(at) };
        Some(DmaView {
            ptr,
            len,
            _borrow: PhantomData,
        })
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

    /// Sets `len` bytes from `at` to `byte`; false (nothing written) if
    /// they do not fit.
    pub fn fill(&self, at: usize, len: usize, byte: u8) -> bool {
        let Some(part) = self.sub(at, len) else {
            return false;
        };
        let chunk = [byte; 64];
        let mut i = 0;
        while i < len {
            let n = (len - i).min(chunk.len());
            part.write(i, &chunk[..n]);
            i += n;
        }
        true
    }

    /// Copies `dst.len()` bytes from byte `at` into `dst`; false (nothing
    /// read) if they do not fit. Volatile loads, as [`DmaView::write`]
    /// stores.
    pub fn read(&self, at: usize, dst: &mut [u8]) -> bool {
        if at.checked_add(dst.len()).is_none_or(|end| end > self.len) {
            return false;
        }
        let mut i = 0;
        while i < dst.len() {
            // SAFETY: `at + i < len`, so the pointer stays inside the
            // borrowed bytes. Below, volatile loads (the device may have
            // written them): the word load at an 8-byte-aligned address
            // with 8 bytes left, the byte load needs no alignment.
            let p = unsafe { self.ptr.as_ptr().add(at + i) };
            if (p as usize).is_multiple_of(8) && i + 8 <= dst.len() {
                // SAFETY: see above.
                let w = unsafe { p.cast::<u64>().read_volatile() };
                dst[i..i + 8].copy_from_slice(&w.to_ne_bytes());
                i += 8;
            } else {
                // SAFETY: see above.
                dst[i] = unsafe { p.read_volatile() };
                i += 1;
            }
        }
        true
    }

    /// Whether the bytes from `at` equal `want` (false if they do not
    /// fit), compared in chunks through a small stack buffer.
    pub fn equals(&self, at: usize, want: &[u8]) -> bool {
        if at.checked_add(want.len()).is_none_or(|end| end > self.len) {
            return false;
        }
        let mut buf = [0u8; 256];
        want.chunks(buf.len()).enumerate().all(|(k, w)| {
            let got = &mut buf[..w.len()];
            self.read(at + k * 256, got) && got == w
        })
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
        let mut src = [0u8; 66];
        for (i, b) in src.iter_mut().enumerate() {
            *b = i as u8;
        }
        assert!(w.write(0, &src));
        let mut back = [0u8; 66];
        assert!(w.read(0, &mut back));
        assert_eq!(back, src);
        assert!(w.equals(3, &src[3..]));
        assert!(!w.equals(3, &src[2..65]));
        assert!(v.write(2, &[1, 2, 3]));
        assert!(!v.write(6, &[1, 2, 3]));
        assert!(!v.write(usize::MAX, &[1]));
        let mut all = [0u8; 8];
        assert!(v.read(0, &mut all));
        assert_eq!(all, [0, 0, 1, 2, 3, 0, 0, 0]);
        assert!(!v.read(1, &mut all));
        assert!(v.fill(5, 3, 0xEE));
        assert!(!v.fill(6, 3, 0xEE));
        assert!(v.read(0, &mut all));
        assert_eq!(all, [0, 0, 1, 2, 3, 0xEE, 0xEE, 0xEE]);
        let s = v.sub(2, 3).unwrap();
        assert_eq!((s.len(), s.address()), (3, v.address() + 2));
        assert!(v.sub(6, 3).is_none());
        assert!(v.sub(usize::MAX, 2).is_none());
    }
}
