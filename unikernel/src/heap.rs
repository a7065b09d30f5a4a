//! The heap: `linked_list_allocator` over a static region, behind a spin
//! lock. Only set-up code allocates (the device model's tables, the PCI
//! listing); the measured loops do not. The high-water mark is kept, for
//! the log.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};
use linked_list_allocator::Heap;
use spin::Mutex;

/// The bring-up is the big user: the firmware files it reads (copies out
/// of the archive), the PSP model's copies of every image it expects, the
/// models' state. The model's VRAM backing and DMA region are not on the
/// heap (`crate::devmem`).
pub const HEAP_BYTES: usize = 16 << 20;

#[repr(C, align(4096))]
struct Region([u8; HEAP_BYTES]);

static mut REGION: Region = Region([0; HEAP_BYTES]);

struct Locked(Mutex<Heap>);

/// The most bytes in use at once.
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[global_allocator]
static ALLOCATOR: Locked = Locked(Mutex::new(Heap::empty()));

// SAFETY: `Heap` hands out disjoint, suitably aligned blocks from memory
// it owns exclusively (see `init`), and the lock serialises every call.
unsafe impl GlobalAlloc for Locked {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut h = self.0.lock();
        let p = h
            .allocate_first_fit(layout)
            .map_or(core::ptr::null_mut(), NonNull::as_ptr);
        PEAK.fetch_max(h.used(), Ordering::Relaxed);
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            // SAFETY: GlobalAlloc's contract: `ptr` came from `alloc` with
            // this layout.
            unsafe { self.0.lock().deallocate(p, layout) }
        }
    }
}

/// Hands the static region to the allocator. Called once, before any
/// allocation.
pub fn init() -> (usize, usize) {
    let start = (&raw mut REGION).cast::<u8>();
    // SAFETY: REGION is used by nothing else: it is private to this module
    // and only its address is taken, here, once.
    unsafe { ALLOCATOR.0.lock().init(start, HEAP_BYTES) };
    (start as usize, HEAP_BYTES)
}

/// Bytes in use, free, and the most ever in use.
pub fn usage() -> (usize, usize, usize) {
    let h = ALLOCATOR.0.lock();
    (h.used(), h.free(), PEAK.load(Ordering::Relaxed))
}
