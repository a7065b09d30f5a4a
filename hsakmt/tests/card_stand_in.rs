//! The card path (`BAREBELL_HSAKMT_DEVICE=vfio:BDF` or `sysfs:BDF`) with
//! the MI210 model standing in for the card behind barebell-host's
//! platform: the platform's own DMA region (the size this library opens a
//! card with), the bring-up over it, the CU count read through the
//! shader-array registers, an AQL queue through the HWS, registered
//! memory through the platform's IOMMU mapping, the teardown. What a
//! real card adds (VFIO's ioctls, the BAR mappings) is not exercised: no
//! machine here has one.
//! One test: the host platform's DMA region sits at one fixed address for
//! the process's life.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use core::sync::atomic::{AtomicI64, AtomicU16, AtomicU64, Ordering};
use hsakmt::backend::Backend;
use hsakmt::device::{Allocation, CARD_DMA_BYTES, Kfd, Kind, MODEL_VRAM_BYTES, PAGE};
use hsakmt::queues::QueueRequest;
use std::time::{Duration, Instant};

/// `HSA_QUEUE_COMPUTE_AQL` (`hsakmttypes.h`).
const COMPUTE_AQL: u32 = 21;
/// `amd_queue_t` offsets (`amd_hsa_queue.h`).
const READ_DISPATCH_ID: u64 = 0x80;
const WRITE_DISPATCH_ID: u64 = 0x38;
/// A barrier-AND with the barrier bit and system-scope fences (`hsa.h`).
const BARRIER_AND_HEADER: u16 = 3 | 1 << 8 | 2 << 9 | 2 << 11;

/// A page-granular system allocation, mapped for the GPU as
/// `hsaKmtAllocMemory` + `hsaKmtMapMemoryToGPU` would make it.
fn mapped(kfd: &mut Kfd, size: u64) -> u64 {
    let at = kfd.heap.alloc(size, PAGE).unwrap();
    kfd.allocations.insert(
        at,
        Allocation {
            size,
            node: 0,
            flags: 0x21040,
            kind: Kind::System,
            user_data: 0,
            gpu_mapped: false,
            bus: 0,
        },
    );
    kfd.map_allocation(at).unwrap();
    at
}

/// `*at` as an atomic (memory this test owns through the library).
fn atomic64(at: u64) -> &'static AtomicU64 {
    // SAFETY: 8-byte aligned, inside a live mapped allocation; the device
    // writes it only atomically.
    unsafe { AtomicU64::from_ptr(at as *mut u64) }
}

#[test]
fn the_card_path_counts_cus_runs_a_queue_and_registers_memory() {
    let _fixed = barebell_host::FIXED_DMA.lock().unwrap();
    let card = barebell_host::model_of_part_standing_in(
        barebell_model::parts::mi210(),
        &barebell_model::FilesDir::system(),
        MODEL_VRAM_BYTES,
        CARD_DMA_BYTES,
    )
    .unwrap();
    let card: &'static _ = Box::leak(Box::new(card));
    let mut kfd = Kfd::open_on(Backend::Card(card)).unwrap();

    // 104 CUs (AMD's MI210 specification), read through GRBM_GFX_INDEX
    // and the shader-array registers as gfx_v9_0_get_cu_info() reads
    // them: 4 SIMDs each.
    assert_eq!(kfd.topology.nodes[1].props.NumFComputeCores, 104 * 4);

    // An AQL queue as ROCR makes one: its amd_queue_t page, ring, signal.
    let queue = mapped(&mut kfd, 0x1000);
    let ring = mapped(&mut kfd, 64 * 64);
    let signal = mapped(&mut kfd, 0x1000);
    for i in 0..64 {
        // SAFETY: inside the ring; slot headers are u16 aligned.
        unsafe { ((ring + i * 64) as *mut u16).write(1) };
    }
    let (_, doorbell, none) = kfd
        .create_queue(&QueueRequest {
            node: 1,
            ty: COMPUTE_AQL,
            percentage: 100,
            priority: 0,
            ring,
            ring_bytes: 64 * 64,
            read_pointer: queue + READ_DISPATCH_ID,
            write_pointer: queue + WRITE_DISPATCH_ID,
        })
        .unwrap();
    assert!(none.is_none());
    // SAFETY: `amd_signal_t`: kind USER (1), value 1 at +8.
    unsafe { (signal as *mut i64).write(1) };
    // SAFETY: the signal's value, 8-byte aligned.
    let value = unsafe { AtomicI64::from_ptr((signal + 8) as *mut i64) };
    value.store(1, Ordering::Release);
    // SAFETY: slot 0 lies inside the ring; published by the header below.
    unsafe {
        core::ptr::write_bytes((ring + 2) as *mut u8, 0, 62);
        ((ring + 56) as *mut u64).write(signal);
    }
    atomic64(queue + WRITE_DISPATCH_ID).store(1, Ordering::Relaxed);
    // SAFETY: slot 0's header, u16 aligned.
    unsafe { AtomicU16::from_ptr(ring as *mut u16) }.store(BARRIER_AND_HEADER, Ordering::Release);
    // SAFETY: the doorbell pointer the library returned, live while open.
    unsafe { AtomicU64::from_ptr(doorbell) }.store(0, Ordering::Release);
    let t = Instant::now();
    while value.load(Ordering::Acquire) != 0 && t.elapsed() < Duration::from_secs(30) {
        kfd.step();
    }
    assert_eq!(
        value.load(Ordering::Acquire),
        0,
        "the barrier never completed"
    );
    assert_eq!(
        atomic64(queue + READ_DISPATCH_ID).load(Ordering::Acquire),
        1
    );

    // Registered host memory: a window in the card's IOMMU range.
    let layout = std::alloc::Layout::from_size_align(0x2000, 0x1000).unwrap();
    // SAFETY: a non-zero size; freed below after the window is gone.
    let host = unsafe { std::alloc::alloc_zeroed(layout) };
    kfd.register(host as u64, 0x2000, 0).unwrap();
    kfd.map_registered(host as u64).unwrap();
    let bus = kfd.allocations[&(host as u64)].bus;
    assert!((1 << 36..(1 << 36) + (1 << 38)).contains(&bus), "{bus:#x}");
    kfd.unmap_registered(host as u64).unwrap();
    // SAFETY: allocated above with `layout`; no window reaches it now.
    unsafe { std::alloc::dealloc(host, layout) };

    kfd.close().unwrap();
}
