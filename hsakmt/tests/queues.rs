//! `hsaKmtCreateQueue`/`hsaKmtDestroyQueue` against the MI210 model, the
//! way ROCR's `AqlQueue` uses them: an `amd_queue_t` page whose
//! `read_dispatch_id` (+0x80) and `write_dispatch_id` (+0x38) it names, a
//! ring of its own, packets published by storing the header last, the
//! packet index stored into the doorbell pointer the library returned.
//! The model's HWS runs the queue; the only proof of work is the device
//! decrementing the completion signal and advancing the read index.
//!
//! What must fail, fails: a queue over memory never mapped for the GPU is
//! refused before the device is touched (Linux 6.12's
//! `kfd_queue_acquire_buffers()`), a packet announced on another
//! doorbell is never consumed, a buffer never mapped faults (and the
//! fault reaches ROCR's VM-fault event), and registered host memory is
//! reached by the device only while it is mapped.
//! SDMA queues run the packets ROCR's `BlitSdma` sends on gfx9, on the
//! engine and doorbell KFD would give them.
//! One test: the device is process-wide, as KFD's is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use core::ffi::c_void;
use core::sync::atomic::{AtomicI64, AtomicU16, AtomicU64, Ordering};
use hsakmt::abi::*;
use hsakmt::*;
use std::time::{Duration, Instant};

/// `amd_queue_t` offsets (`amd_hsa_queue.h`).
const READ_DISPATCH_ID: usize = 0x80;
const WRITE_DISPATCH_ID: usize = 0x38;
/// `HSA_PACKET_TYPE_BARRIER_AND` with the barrier bit and system-scope
/// acquire and release fences (`hsa.h`: type bits 0-7, barrier bit 8,
/// acquire scope bits 9-10, release scope bits 11-12, SYSTEM = 2).
const BARRIER_AND_HEADER: u16 = 3 | 1 << 8 | 2 << 9 | 2 << 11;
/// `HSA_PACKET_TYPE_INVALID`, what a free slot holds.
const INVALID_HEADER: u16 = 1;
/// ROCR's flags for queue memory (`0x21040`: HostAccess, Exec, Uncached).
const QUEUE_FLAGS: u32 = 0x21040;

fn alloc(size: u64) -> *mut c_void {
    let mut p: *mut c_void = core::ptr::null_mut();
    // SAFETY: `p` is a live local.
    let r = unsafe { hsaKmtAllocMemory(0, size, QUEUE_FLAGS, &mut p) };
    assert_eq!(r, status::SUCCESS);
    p
}

fn map(p: *mut c_void, size: u64) {
    let mut node = 1u32;
    let mut alt = 0u64;
    // SAFETY: every pointer is a live local or one this library returned.
    let r = unsafe { hsaKmtMapMemoryToGPUNodes(p, size, &mut alt, 0, 1, &mut node) };
    assert_eq!(r, status::SUCCESS);
}

/// A ROCR-like AQL queue: its `amd_queue_t` page, ring and signal page.
struct Rocr {
    queue: *mut u8,
    ring: *mut u8,
    slots: u64,
    signal: *mut u8,
}

impl Rocr {
    fn new(slots: u64) -> Rocr {
        let r = Rocr {
            queue: alloc(0x1000).cast(),
            ring: alloc(slots * 64).cast(),
            slots,
            signal: alloc(0x1000).cast(),
        };
        for i in 0..slots as usize {
            // SAFETY: inside the ring allocation; slot headers are u16
            // aligned.
            unsafe { r.ring.add(i * 64).cast::<u16>().write(INVALID_HEADER) };
        }
        r
    }

    fn map_all(&self) {
        map(self.queue.cast(), 0x1000);
        map(self.ring.cast(), self.slots * 64);
        map(self.signal.cast(), 0x1000);
    }

    fn index(&self, at: usize) -> &AtomicU64 {
        // SAFETY: inside the queue page, 8-byte aligned; the device writes
        // it only atomically.
        unsafe { AtomicU64::from_ptr(self.queue.add(at).cast()) }
    }

    /// `amd_signal_t.value` (+8) of the signal page's one signal.
    fn value(&self) -> &AtomicI64 {
        // SAFETY: inside the signal page, 8-byte aligned.
        unsafe { AtomicI64::from_ptr(self.signal.add(8).cast()) }
    }

    fn create(&self) -> (u32, HsaQueueResource) {
        let mut res = HsaQueueResource {
            QueueId: 0,
            Queue_DoorBell: core::ptr::null_mut(),
            Queue_write_ptr: self.queue.wrapping_add(WRITE_DISPATCH_ID).cast(),
            Queue_read_ptr: self.queue.wrapping_add(READ_DISPATCH_ID).cast(),
            ErrorReason: core::ptr::null_mut(),
        };
        // SAFETY: `res` is a live local; the ring is this library's.
        let r = unsafe {
            hsaKmtCreateQueue(
                1,
                21,
                100,
                0,
                self.ring.cast(),
                self.slots * 64,
                core::ptr::null_mut(),
                &mut res,
            )
        };
        (r, res)
    }

    /// Writes a barrier-AND with this queue's signal into the next slot,
    /// header last with release ordering (as `hsa_signal_store` callers
    /// publish), and bumps `write_dispatch_id`; returns the packet index.
    fn publish_barrier(&self) -> u64 {
        let id = self.index(WRITE_DISPATCH_ID).load(Ordering::Relaxed);
        let slot = (id % self.slots) as usize;
        // SAFETY: `[kind i64][value i64]...` of `amd_signal_t` in the
        // signal page: kind AMD_SIGNAL_KIND_USER (1), value 1.
        unsafe { self.signal.cast::<i64>().write(1) };
        self.value().store(1, Ordering::Release);
        // SAFETY: the slot lies inside the ring; the device reads it only
        // after the header store below publishes it.
        unsafe {
            let p = self.ring.add(slot * 64);
            core::ptr::write_bytes(p.add(2), 0, 62);
            p.add(56).cast::<u64>().write(self.signal as u64);
        }
        self.index(WRITE_DISPATCH_ID)
            .store(id + 1, Ordering::Relaxed);
        // SAFETY: the slot's header, u16 aligned.
        unsafe { AtomicU16::from_ptr(self.ring.add(slot * 64).cast()) }
            .store(BARRIER_AND_HEADER, Ordering::Release);
        id
    }

    /// Waits up to `bound` for the signal to reach 0.
    fn wait(&self, bound: Duration) -> bool {
        let t = Instant::now();
        while t.elapsed() < bound {
            if self.value().load(Ordering::Acquire) == 0 {
                return true;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        false
    }
}

fn ring(doorbell: *mut u64, id: u64) {
    // SAFETY: a doorbell pointer this library returned (8-byte aligned,
    // live while the device is open), stored with a 64-bit release store
    // as ROCR's `AqlQueue::StoreRelaxed` does on gfx9.
    unsafe { AtomicU64::from_ptr(doorbell) }.store(id, Ordering::Release);
}

#[test]
fn rocr_style_queues_and_registered_memory_on_the_hws() {
    assert_eq!(hsaKmtOpenKFD(), status::SUCCESS);

    // Never mapped for the GPU: refused before the device is touched.
    let a = Rocr::new(128);
    let (r, _) = a.create();
    assert_eq!(r, status::ERROR, "a queue over unmapped memory");
    // A write pointer in the ring's second page (not the first page of a
    // one-page buffer) is refused too.
    a.map_all();
    let mut res = HsaQueueResource {
        QueueId: 0,
        Queue_DoorBell: core::ptr::null_mut(),
        Queue_write_ptr: a.ring.wrapping_add(0x1000 + WRITE_DISPATCH_ID).cast(),
        Queue_read_ptr: a.queue.wrapping_add(READ_DISPATCH_ID).cast(),
        ErrorReason: core::ptr::null_mut(),
    };
    assert_eq!(
        // SAFETY: `res` is a live local; the ring is this library's.
        unsafe {
            hsaKmtCreateQueue(
                1,
                21,
                100,
                0,
                a.ring.cast(),
                128 * 64,
                core::ptr::null_mut(),
                &mut res,
            )
        },
        status::ERROR
    );
    // A ring size that is no power of two.
    assert_eq!(
        // SAFETY: as above.
        unsafe {
            hsaKmtCreateQueue(
                1,
                21,
                100,
                0,
                a.ring.cast(),
                3000,
                core::ptr::null_mut(),
                &mut res,
            )
        },
        status::INVALID_PARAMETER
    );

    // Mapped: the queue runs a barrier through the HWS.
    let (r, qa) = a.create();
    assert_eq!(r, status::SUCCESS);
    assert!(!{ qa.Queue_DoorBell }.is_null());
    assert_eq!({ qa.Queue_DoorBell } as usize % 8, 0);
    // A buffer a live queue uses cannot be unmapped (`unmap_bo_from_gpuvm()`).
    assert_eq!(hsaKmtUnmapMemoryToGPU(a.ring.cast()), status::ERROR);
    let id = a.publish_barrier();
    ring(qa.Queue_DoorBell, id);
    assert!(
        a.wait(Duration::from_secs(20)),
        "the barrier did not complete"
    );
    assert_eq!(a.index(READ_DISPATCH_ID).load(Ordering::Acquire), 1);

    // A second queue joins the runlist; the first keeps running.
    let b = Rocr::new(64);
    b.map_all();
    let (r, qb) = b.create();
    assert_eq!(r, status::SUCCESS);
    assert_ne!({ qa.Queue_DoorBell }, { qb.Queue_DoorBell });
    assert_ne!({ qa.QueueId }, { qb.QueueId });

    // Announced on the wrong doorbell (the first queue's): the second
    // queue's packet is never consumed.
    let id = b.publish_barrier();
    ring(qa.Queue_DoorBell, 0);
    assert!(
        !b.wait(Duration::from_secs(2)),
        "a packet announced on another queue's doorbell ran"
    );
    assert_eq!(b.index(READ_DISPATCH_ID).load(Ordering::Acquire), 0);
    // The right doorbell: it runs.
    ring(qb.Queue_DoorBell, id);
    assert!(
        b.wait(Duration::from_secs(20)),
        "the barrier did not complete"
    );

    // The first queue still runs after the runlist was re-sent.
    let id = a.publish_barrier();
    ring(qa.Queue_DoorBell, id);
    assert!(a.wait(Duration::from_secs(20)), "queue a stopped");
    assert_eq!(a.index(READ_DISPATCH_ID).load(Ordering::Acquire), 2);

    // Destroyed: gone from the runlist, its id unknown, its memory free to
    // unmap.
    assert_eq!(hsaKmtDestroyQueue(qb.QueueId), status::SUCCESS);
    assert_eq!(hsaKmtDestroyQueue(qb.QueueId), status::INVALID_PARAMETER);
    assert_eq!(hsaKmtUnmapMemoryToGPU(b.ring.cast()), status::SUCCESS);
    let id = b.publish_barrier();
    ring(qb.Queue_DoorBell, id);
    assert!(
        !b.wait(Duration::from_secs(1)),
        "a destroyed queue consumed a packet"
    );

    // Suspended (0 %, as ROCR's `AqlQueue::Suspend` asks): off the
    // runlist, a packet waits; resumed, it runs.
    let ring_bytes = a.slots * 64;
    assert_eq!(
        hsaKmtUpdateQueue(
            qa.QueueId,
            0,
            0,
            a.ring.cast(),
            ring_bytes,
            core::ptr::null_mut()
        ),
        status::SUCCESS
    );
    let id = a.publish_barrier();
    ring(qa.Queue_DoorBell, id);
    assert!(
        !a.wait(Duration::from_secs(1)),
        "a suspended queue ran a packet"
    );
    assert_eq!(
        hsaKmtUpdateQueue(
            qa.QueueId,
            100,
            0,
            a.ring.cast(),
            ring_bytes,
            core::ptr::null_mut()
        ),
        status::SUCCESS
    );
    ring(qa.Queue_DoorBell, id);
    assert!(
        a.wait(Duration::from_secs(20)),
        "the resumed queue did not run"
    );
    assert_eq!(
        hsaKmtUpdateQueue(
            qa.QueueId,
            101,
            0,
            a.ring.cast(),
            ring_bytes,
            core::ptr::null_mut()
        ),
        status::INVALID_PARAMETER
    );
    assert_eq!(
        hsaKmtUpdateQueue(
            999,
            100,
            0,
            a.ring.cast(),
            ring_bytes,
            core::ptr::null_mut()
        ),
        status::INVALID_PARAMETER
    );

    unmapped_buffer();
    registered_memory(&a, qa.Queue_DoorBell);
    sdma_queues();

    // Queue a stays live: the close takes it off, then tears down.
    assert_eq!(hsaKmtCloseKFD(), status::SUCCESS);
}

/// A buffer allocated but never mapped for the GPU is not in the
/// process tables: a completion signal placed there is never written, the
/// host keeps its value, though the queue itself (mapped) consumed the
/// packet's slot. KFD maps a BO only on `kfd_ioctl_map_memory_to_gpu()`.
fn unmapped_buffer() {
    // ROCR's VM-fault event (`Runtime::BindVmFaultHandler`: MEMORY, manual
    // reset): the fault is reported to it with its address and reason.
    let desc = HsaEventDescriptor {
        EventType: event_type::MEMORY,
        ..Default::default()
    };
    let mut fault_event: *mut HsaEvent = core::ptr::null_mut();
    assert_eq!(
        // SAFETY: `desc` and `fault_event` are live locals.
        unsafe { hsaKmtCreateEvent(&desc, true, false, &mut fault_event) },
        status::SUCCESS
    );
    let c = Rocr::new(64);
    map(c.queue.cast(), 0x1000);
    map(c.ring.cast(), 64 * 64);
    let (r, qc) = c.create();
    assert_eq!(r, status::SUCCESS);
    let id = c.publish_barrier();
    ring(qc.Queue_DoorBell, id);
    assert!(
        !c.wait(Duration::from_secs(2)),
        "the device wrote a signal in a buffer never mapped for it"
    );
    assert_eq!(c.value().load(Ordering::Acquire), 1);
    let t = Instant::now();
    let mut told = false;
    while !told && t.elapsed() < Duration::from_secs(10) {
        // SAFETY: an event this library made and has not destroyed.
        told = unsafe { hsaKmtWaitOnEvent(fault_event, 100) } == status::SUCCESS;
    }
    assert!(told, "the VM-fault event was not set");
    // SAFETY: the event's C struct, which the library filled before it
    // set the event (`HsaMemoryAccessFault`: NodeId, VirtualAddress,
    // Failure, Flags as five packed words).
    let words: [u32; 5] = unsafe { (*fault_event).EventData.EventData };
    let va = u64::from(words[1]) | u64::from(words[2]) << 32;
    assert_eq!(words[0], 1, "GPU node");
    assert_eq!(va & !0xfff, c.signal as u64, "the signal's page faulted");
    assert_eq!(words[3], 1, "Failure.NotPresent");
    assert_eq!(words[4], 1, "HSA_EVENTID_MEMORY_FATAL_PROCESS");
    assert_eq!(hsaKmtDestroyEvent(fault_event), status::SUCCESS);
    // Mapped now: the next barrier's signal is written (the faulted queue
    // is replaced by a fresh one over the same memory).
    assert_eq!(hsaKmtDestroyQueue(qc.QueueId), status::SUCCESS);
    map(c.signal.cast(), 0x1000);
    c.index(READ_DISPATCH_ID).store(0, Ordering::Relaxed);
    c.index(WRITE_DISPATCH_ID).store(0, Ordering::Relaxed);
    // SAFETY: the slot's header, u16 aligned, inside the ring.
    unsafe { c.ring.cast::<u16>().write(INVALID_HEADER) };
    let (r, qc) = c.create();
    assert_eq!(r, status::SUCCESS);
    let id = c.publish_barrier();
    ring(qc.Queue_DoorBell, id);
    assert!(
        c.wait(Duration::from_secs(20)),
        "the mapped signal was not written"
    );
    assert_eq!(hsaKmtDestroyQueue(qc.QueueId), status::SUCCESS);
}

/// Two pages of the caller's own heap memory (outside every buffer the
/// library hands out), registered: the device writes a completion signal
/// there once they are mapped, and cannot once they are unmapped.
fn registered_memory(a: &Rocr, doorbell: *mut u64) {
    let layout = std::alloc::Layout::from_size_align(0x2000, 0x1000).unwrap();
    // SAFETY: a non-zero size.
    let host = unsafe { std::alloc::alloc_zeroed(layout) };
    assert!(!host.is_null());
    let p: *mut c_void = host.cast();
    assert_eq!(
        hsaKmtRegisterMemoryWithFlags(p, 0x2000, 0x2040),
        status::SUCCESS
    );
    // The same pages again: refused.
    assert_eq!(
        hsaKmtRegisterMemoryWithFlags(p, 0x1000, 0x2040),
        status::ERROR
    );
    let mut info = core::mem::MaybeUninit::<HsaPointerInfo>::zeroed();
    assert_eq!(
        // SAFETY: `info` is a live local.
        unsafe { hsaKmtQueryPointerInfo(host.wrapping_add(0x1800).cast(), info.as_mut_ptr()) },
        status::SUCCESS
    );
    // SAFETY: written by the call.
    let info = unsafe { info.assume_init() };
    assert_eq!({ info.Type }, 2, "HSA_POINTER_REGISTERED_USER");
    assert_eq!({ info.GPUAddress }, host as u64);

    // The signal lives in the registered pages (second page).
    let user = Rocr {
        queue: a.queue,
        ring: a.ring,
        slots: a.slots,
        signal: host.wrapping_add(0x1000),
    };
    map(p, 0x2000);
    let id = user.publish_barrier();
    ring(doorbell, id);
    assert!(
        user.wait(Duration::from_secs(20)),
        "the device did not write the signal in registered memory"
    );

    // Unmapped: the device's next write there faults (the queue stops),
    // and the host memory keeps its value.
    assert_eq!(hsaKmtUnmapMemoryToGPU(p), status::SUCCESS);
    let id = user.publish_barrier();
    ring(doorbell, id);
    assert!(
        !user.wait(Duration::from_secs(2)),
        "the device wrote to registered memory after it was unmapped"
    );
    assert_eq!(user.value().load(Ordering::Acquire), 1);
    assert_eq!(
        // SAFETY: the library refuses a pointer it did not allocate.
        unsafe { hsaKmtFreeMemory(p, 0x2000) },
        status::INVALID_PARAMETER
    );
    assert_eq!(hsaKmtDeregisterMemory(p), status::SUCCESS);
    assert_eq!(hsaKmtDeregisterMemory(p), status::INVALID_PARAMETER);
    // SAFETY: allocated above with `layout`; the device can no longer
    // reach it (unmapped, its window closed).
    unsafe { std::alloc::dealloc(host, layout) };
}

/// `hsaKmtCreateQueue` with `HSA_QUEUE_SDMA` as ROCR's `BlitSdma`
/// makes it on gfx90a (ring of 1 MiB, percentage 100, priority
/// maximum, no read or write pointer given): the library returns its own
/// zeroed pointers, the queue runs ROCR's packets (its HDP flush, a
/// COPY_LINEAR, an ATOMIC add of -1 on the completion signal), and the
/// doorbells are KFD's for the slots `allocate_sdma_queue()` picks.
///
/// Packet encodings are written by hand from `vega10_sdma_pkt_open.h`
/// (COPY_LINEAR op 1, count = bytes - 1; ATOMIC op 10 with operation 47
/// `SDMA_ATOMIC_ADD64` in bits 31:25) and ROCR 5.2's
/// `sdma_registers.h` (`hdp_flush_cmd`). Doorbell distances from
/// `vega20_doorbell_index_init()`: engines 0x100, 0x10A, 0x114; odd
/// queues + 512 (`KFD_QUEUE_DOORBELL_MIRROR_OFFSET`), 8 bytes each.
fn sdma_queues() {
    const RING: u64 = 1 << 20;
    const N: usize = 5000;
    let ring = alloc(RING);
    map(ring, RING);
    let (src, dst, signal) = (alloc(0x2000), alloc(0x2000), alloc(0x1000));
    for p in [src, dst] {
        map(p, 0x2000);
    }
    map(signal, 0x1000);
    let create = |ty: u32| {
        let mut res = HsaQueueResource {
            QueueId: 0,
            Queue_DoorBell: core::ptr::null_mut(),
            Queue_write_ptr: core::ptr::null_mut(),
            Queue_read_ptr: core::ptr::null_mut(),
            ErrorReason: core::ptr::null_mut(),
        };
        // SAFETY: `res` is a live local; the ring is this library's.
        let r = unsafe {
            hsaKmtCreateQueue(1, ty, 100, 3, ring, RING, core::ptr::null_mut(), &mut res)
        };
        (r, res)
    };
    let (r, q) = create(2);
    assert_eq!(r, status::SUCCESS);
    let (rptr, wptr) = ({ q.Queue_read_ptr }, { q.Queue_write_ptr });
    assert!(!rptr.is_null() && !wptr.is_null() && rptr != wptr);
    // SAFETY: the pointers the library returned, live with the queue.
    let (rptr, wptr) = unsafe {
        (
            AtomicU64::from_ptr(rptr.cast()),
            AtomicU64::from_ptr(wptr.cast()),
        )
    };
    assert_eq!(
        wptr.load(Ordering::Acquire),
        0,
        "ROCR seeds its indices from *wptr"
    );

    // SAFETY: inside the allocations above, written before the doorbell.
    unsafe {
        for i in 0..N {
            src.cast::<u8>().add(i).write((i * 7 + 3) as u8);
        }
        dst.cast::<u8>().write_bytes(0xEE, N + 64);
        signal.cast::<i64>().add(1).write(1);
    }
    let value = signal as u64 + 8;
    let lo = |a: u64| a as u32;
    let hi = |a: u64| (a >> 32) as u32;
    let packets: Vec<u32> = [
        // ROCR's HDP flush.
        vec![0x8, 0, 0x8000_0000, 0, 0, 0],
        // COPY_LINEAR src → dst.
        vec![
            1,
            N as u32 - 1,
            0,
            lo(src as u64),
            hi(src as u64),
            lo(dst as u64),
            hi(dst as u64),
        ],
        // ATOMIC ADD64 of -1 on the signal's value.
        vec![
            0x5E00_000A,
            lo(value),
            hi(value),
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            0,
            0,
            0,
        ],
    ]
    .concat();
    // SAFETY: inside the ring.
    unsafe { core::ptr::copy_nonoverlapping(packets.as_ptr(), ring.cast::<u32>(), packets.len()) };
    let bytes = packets.len() as u64 * 4;
    // ROCR's order: the write pointer in memory, then the doorbell, both
    // the unwrapped byte index.
    wptr.store(bytes, Ordering::Release);
    ring_doorbell(q.Queue_DoorBell, bytes);
    let t = Instant::now();
    // SAFETY: the signal's value, 8-byte aligned in its page.
    let v = unsafe { AtomicI64::from_ptr(signal.cast::<i64>().add(1)) };
    while v.load(Ordering::Acquire) != 0 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_micros(200));
    }
    assert_eq!(
        v.load(Ordering::Acquire),
        0,
        "the SDMA queue did not complete"
    );
    assert_eq!(rptr.load(Ordering::Acquire), bytes);
    // SAFETY: as above.
    let (s, d) = unsafe {
        (
            core::slice::from_raw_parts(src.cast::<u8>(), N),
            core::slice::from_raw_parts(dst.cast::<u8>(), N + 64),
        )
    };
    assert!(s == &d[..N], "the copy differs");
    assert!(d[N..].iter().all(|b| *b == 0xEE), "copied past the end");

    // The next slots: engine 1 queue 0, then engine 0 queue 1 (odd: the
    // mirror half), and the first XGMI engine (2).
    let (r1, q1) = create(2);
    let (r2, q2) = create(2);
    let (r3, q3) = create(5);
    assert_eq!(
        (r1, r2, r3),
        (status::SUCCESS, status::SUCCESS, status::SUCCESS)
    );
    let at = |d: *mut u64| d as usize - q.Queue_DoorBell as usize;
    assert_eq!(at(q1.Queue_DoorBell), (0x10A - 0x100) * 8);
    assert_eq!(at(q2.Queue_DoorBell), 512 * 8);
    assert_eq!(at(q3.Queue_DoorBell), (0x114 - 0x100) * 8);
    // A ring a live SDMA queue holds stays mapped.
    assert_eq!(hsaKmtUnmapMemoryToGPU(ring), status::ERROR);
    // A PM4 compute queue (`HSA_QUEUE_COMPUTE`) is not supported.
    assert_eq!(create(1).0, status::NOT_SUPPORTED);
    for id in [q.QueueId, q1.QueueId, q2.QueueId, q3.QueueId] {
        assert_eq!(hsaKmtDestroyQueue(id), status::SUCCESS);
    }
    // Freed slots are taken again: engine 0 queue 0's doorbell.
    let (r, again) = create(2);
    assert_eq!(r, status::SUCCESS);
    assert_eq!({ again.Queue_DoorBell }, { q.Queue_DoorBell });
    assert_eq!(hsaKmtDestroyQueue(again.QueueId), status::SUCCESS);
    assert_eq!(hsaKmtUnmapMemoryToGPU(ring), status::SUCCESS);
}

fn ring_doorbell(doorbell: *mut u64, value: u64) {
    ring(doorbell, value);
}
