//! Device memory for user work: code objects, kernel arguments, buffers
//! and queue scratch, in the memory a GPU reaches from the user queue.
//!
//! The gmc step keeps the last [`crate::Options::user_memory`] bytes of the
//! DMA region out of the ring area and maps them into the process page
//! tables only, at GPU VA = host address, with the PTE flags KFD gives
//! user system memory (see [`crate::gmc`]: readable, writeable,
//! executable, system, snooped). The user queue runs in those tables
//! whatever the mapping: a direct or KIQ queue in
//! [`crate::queue::USER_VMID`], whose GFXHUB context the queue step points
//! at the process root; a MES queue in the VMID MES picks, which MES
//! points at the root the process was registered with. VMID0 does not map
//! it: nothing of the bring-up's own runs there.
//!
//! [`UserMemory`] hands the region out as volatile views
//! ([`barebell::mem::DmaView`]: user kernels may write any of it), bump-allocated and
//! never freed (a run loads its work once), with a typed error when it
//! runs out.

use barebell::mem::DmaView;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// Default size of the user memory: 1 MiB of the 4 MiB DMA region (the
/// first 2 MiB chunk is GTT, the ring area keeps the rest).
pub const DEFAULT_BYTES: usize = 1 << 20;

/// The ring area keeps at least this much (the queue, MQDs, EOP buffers,
/// the KIQ and MES rings and the MES process context need ~200 KiB).
pub const MIN_RING_AREA: usize = 512 << 10;

/// Why user memory could not be handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserMemoryError {
    /// `align` is zero or not a power of two.
    BadAlignment { align: usize },
    /// Not enough left: `available` bytes remain past the aligned cursor,
    /// of `total`.
    Exhausted {
        requested: usize,
        align: usize,
        available: usize,
        total: usize,
    },
}

impl core::fmt::Display for UserMemoryError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            UserMemoryError::BadAlignment { align } => {
                write!(f, "alignment {align} is not a power of two")
            }
            UserMemoryError::Exhausted {
                requested,
                align,
                available,
                total,
            } => write!(
                f,
                "device user memory exhausted: {requested} bytes ({align}-byte aligned) asked, {available} of {total} bytes left (the bring-up option user_memory sizes it)"
            ),
        }
    }
}

/// A bump allocator over the user memory (GPU VA = host address in the
/// process page tables).
#[derive(Debug)]
pub struct UserMemory<'p> {
    base: usize,
    next: usize,
    end: usize,
    _mem: PhantomData<&'p mut [u8]>,
}

// SAFETY: the allocator holds only addresses; the views it hands out
// are volatile and `Send` themselves.
unsafe impl Send for UserMemory<'_> {}

impl<'p> UserMemory<'p> {
    /// # Safety
    /// `[base, base + len)` must be writable host memory, valid for `'p`
    /// and until the device can no longer reach it, used by nothing else,
    /// and mapped at GPU VA = host address in every context a queue given
    /// its addresses runs in.
    pub(crate) unsafe fn new(base: NonNull<u8>, len: usize) -> Self {
        let b = base.as_ptr() as usize;
        UserMemory {
            base: b,
            next: b,
            end: b.saturating_add(len),
            _mem: PhantomData,
        }
    }

    /// First byte (GPU VA = host address) and length.
    pub fn range(&self) -> (u64, u64) {
        (self.base as u64, (self.end - self.base) as u64)
    }

    /// Bytes not yet handed out.
    pub fn remaining(&self) -> usize {
        self.end - self.next
    }

    /// `len` zeroed bytes (at least 1) whose address is aligned to `align`,
    /// as a volatile view: the device, and any user kernel the process
    /// tables let reach them, may write these bytes at any time, so no
    /// Rust reference to them is handed out. The view's address is the
    /// GPU VA the device reaches them at.
    pub fn alloc(&mut self, len: usize, align: usize) -> Result<DmaView<'p>, UserMemoryError> {
        if align == 0 || !align.is_power_of_two() {
            return Err(UserMemoryError::BadAlignment { align });
        }
        let len = len.max(1);
        let total = self.end - self.base;
        let exhausted = |available| UserMemoryError::Exhausted {
            requested: len,
            align,
            available,
            total,
        };
        let start = self
            .next
            .checked_next_multiple_of(align)
            .ok_or(exhausted(0))?;
        let end = start.checked_add(len).ok_or(exhausted(0))?;
        if end > self.end {
            return Err(exhausted(self.end.saturating_sub(start)));
        }
        self.next = end;
        let ptr = NonNull::new(start as *mut u8).ok_or(exhausted(0))?;
        // SAFETY: `[start, end)` lies inside the region (checked above),
        // which is valid host memory for 'p (the contract of `new`), and
        // is handed out once, so no other view or reference covers it.
        let v = unsafe { DmaView::from_raw(ptr, len) };
        v.fill(0, len, 0);
        Ok(v)
    }
}

/// A piece of user VRAM: its GPU VA and the host's volatile view of it
/// through BAR0 (the device writes it; no Rust reference is handed out).
#[derive(Debug, Clone, Copy)]
pub struct VramBuf<'p> {
    pub va: u64,
    pub host: DmaView<'p>,
}

/// A bump allocator over the user VRAM: device memory mapped at
/// [`crate::gmc::USER_VRAM_VA`] in the process tables, reached by the
/// host through BAR0.
#[derive(Debug)]
pub struct UserVram<'p> {
    host: usize,
    va: u64,
    next: usize,
    len: usize,
    _mem: PhantomData<&'p mut [u8]>,
}

// SAFETY: only addresses; the views it hands out are volatile and `Send`.
unsafe impl Send for UserVram<'_> {}

impl<'p> UserVram<'p> {
    /// # Safety
    /// `[host, host + len)` must be the host's view of VRAM mapped at GPU
    /// VA `va` in every context a queue given its addresses runs in,
    /// valid for `'p`, used by nothing else.
    pub(crate) unsafe fn new(host: NonNull<u8>, va: u64, len: usize) -> Self {
        UserVram {
            host: host.as_ptr() as usize,
            va,
            next: 0,
            len,
            _mem: PhantomData,
        }
    }

    /// First byte's GPU VA and length.
    pub fn range(&self) -> (u64, u64) {
        (self.va, self.len as u64)
    }

    pub fn remaining(&self) -> usize {
        self.len - self.next
    }

    /// `len` bytes (at least 1) aligned to `align`, with their GPU VA.
    /// Not zeroed: VRAM keeps what was there.
    pub fn alloc(&mut self, len: usize, align: usize) -> Result<VramBuf<'p>, UserMemoryError> {
        if align == 0 || !align.is_power_of_two() {
            return Err(UserMemoryError::BadAlignment { align });
        }
        let len = len.max(1);
        let exhausted = |available| UserMemoryError::Exhausted {
            requested: len,
            align,
            available,
            total: self.len,
        };
        let start = self
            .next
            .checked_next_multiple_of(align)
            .ok_or(exhausted(0))?;
        let end = start.checked_add(len).ok_or(exhausted(0))?;
        if end > self.len {
            return Err(exhausted(self.len.saturating_sub(start)));
        }
        self.next = end;
        let ptr = NonNull::new((self.host + start) as *mut u8).ok_or(exhausted(0))?;
        // SAFETY: `[start, end)` lies in the region (checked above), valid
        // host memory for 'p (`new`'s contract), and is handed out once.
        let host = unsafe { DmaView::from_raw(ptr, len) };
        Ok(VramBuf {
            va: self.va + start as u64,
            host,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_aligned_disjoint_zeroed_pieces_then_a_typed_error() {
        let mut buf = alloc::vec![0xAAu8; 8192];
        let base = NonNull::new(buf.as_mut_ptr()).unwrap();
        // SAFETY: `buf` outlives `m` and nothing else uses it meanwhile.
        let mut m = unsafe { UserMemory::new(base, 8192) };
        let a = m.alloc(100, 256).unwrap();
        assert!(a.address().is_multiple_of(256));
        assert!(a.equals(0, &[0u8; 100]));
        let a_end = a.address() + a.len() as u64;
        let b = m.alloc(10, 4096).unwrap();
        assert!(b.address() >= a_end);
        assert_eq!(
            m.alloc(1, 3).unwrap_err(),
            UserMemoryError::BadAlignment { align: 3 }
        );
        let left = m.remaining();
        match m.alloc(left + 1, 1) {
            Err(UserMemoryError::Exhausted {
                requested,
                available,
                total,
                ..
            }) => assert_eq!((requested, available, total), (left + 1, left, 8192)),
            other => panic!("{other:?}"),
        }
        assert_eq!(m.alloc(left, 1).unwrap().len(), left);
    }

    #[test]
    fn the_ranges_and_what_is_left_follow_the_pieces_handed_out() {
        let mut buf = alloc::vec![0u8; 3 * 4096];
        let at = (buf.as_mut_ptr() as usize).next_multiple_of(4096);
        let base = NonNull::new(at as *mut u8).unwrap();
        // SAFETY: `[at, at + 8192)` lies in `buf`, which outlives `m` and
        // `v`; the two are used one after the other, never together.
        let mut m = unsafe { UserMemory::new(base, 8192) };
        assert_eq!(m.range(), (at as u64, 8192));
        assert_eq!(m.remaining(), 8192);
        m.alloc(100, 64).unwrap();
        assert_eq!(m.remaining(), 8192 - 100);
        assert_eq!(
            m.alloc(1, 0).unwrap_err(),
            UserMemoryError::BadAlignment { align: 0 }
        );
        // SAFETY: as above; `m` hands out nothing more.
        let mut v = unsafe { UserVram::new(base, 0x8000_0000_0000, 8192) };
        assert_eq!(v.range(), (0x8000_0000_0000, 8192));
        assert_eq!(v.remaining(), 8192);
        let b = v.alloc(10, 4096).unwrap();
        assert_eq!(b.va, 0x8000_0000_0000);
        assert_eq!(b.host.address(), at as u64);
        let c = v.alloc(5, 4096).unwrap();
        assert_eq!(c.va, 0x8000_0000_1000);
        assert_eq!(v.remaining(), 8192 - 4096 - 5);
        assert_eq!(
            v.alloc(1, 6).unwrap_err(),
            UserMemoryError::BadAlignment { align: 6 }
        );
        match v.alloc(8192, 1) {
            Err(UserMemoryError::Exhausted {
                available, total, ..
            }) => {
                assert_eq!((available, total), (4096 - 5, 8192))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_messages_say_what_was_asked_and_what_is_left() {
        let e = UserMemoryError::Exhausted {
            requested: 300,
            align: 64,
            available: 12,
            total: 4096,
        };
        let s = alloc::format!("{e}");
        for part in [
            "300 bytes",
            "64-byte aligned",
            "12 of 4096 bytes left",
            "user_memory",
        ] {
            assert!(s.contains(part), "{s}");
        }
        let s = alloc::format!("{}", UserMemoryError::BadAlignment { align: 3 });
        assert!(s.contains("alignment 3"), "{s}");
    }
}
