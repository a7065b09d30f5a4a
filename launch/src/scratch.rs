//! Queue scratch: the `amd_queue_t` fields ROCR's
//! `AqlQueue::InitScratchSRD()` fills, for kernels with private memory.

use barebell::aql::queue::AmdQueue;
use barebell_kernel::scratch::ScratchPlan;
use core::mem::offset_of;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Writes queue scratch into the `amd_queue_t` at `descriptor` (its host
/// address, which is its device address), as ROCR's
/// `AqlQueue::InitScratchSRD()` fills it: the SRD, `compute_tmpring_size`,
/// the backing memory's address and size, the per-lane size last.
///
/// # Safety
/// `descriptor` must be the `amd_queue_t` of a live queue, in memory that
/// stays valid, with no dispatch running on it (the device reads these
/// fields only while it launches one).
pub unsafe fn write_queue_scratch(descriptor: u64, plan: &ScratchPlan, backing: u64) {
    let d = descriptor;
    let srd = plan.resource_descriptor(backing);
    // SAFETY: the caller's contract; the fields are aligned integers of
    // `amd_queue_t` (offsets from ROCR's header, conformance-checked in
    // the runtime's `AmdQueue`).
    unsafe {
        let u32_at = |o: usize| AtomicU32::from_ptr((d + o as u64) as *mut u32);
        let u64_at = |o: usize| AtomicU64::from_ptr((d + o as u64) as *mut u64);
        for (i, w) in srd.iter().enumerate() {
            u32_at(offset_of!(AmdQueue, scratch_resource_descriptor) + 4 * i)
                .store(*w, Ordering::Relaxed);
        }
        u32_at(offset_of!(AmdQueue, compute_tmpring_size))
            .store(plan.compute_tmpring_size, Ordering::Relaxed);
        u64_at(offset_of!(AmdQueue, scratch_backing_memory_location))
            .store(backing, Ordering::Relaxed);
        u64_at(offset_of!(AmdQueue, scratch_backing_memory_byte_size))
            .store(plan.bytes, Ordering::Relaxed);
        u32_at(offset_of!(AmdQueue, scratch_wave64_lane_byte_size))
            .store(plan.wave64_lane_byte_size, Ordering::Release);
    }
}
