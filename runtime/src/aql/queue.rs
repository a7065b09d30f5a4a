//! The user-mode queue descriptor the CP reads: `amd_queue_t`.
//!
//! The CP is told only the address of `read_dispatch_id` (the MQD's
//! `cp_hqd_pq_rptr_report_addr`) and of `write_dispatch_id`
//! (`cp_hqd_pq_wptr_poll_addr`); it finds the rest of the descriptor by
//! fixed offsets from there. So the two indices must live inside a
//! complete, correctly laid out `amd_queue_t`, not in a struct of our own
//! design. [`FACTS`] pins that layout to ROCR's `amd_hsa_queue.h`.

use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `hsa_queue_t` (large model).
#[derive(Debug, Clone, Copy, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct HsaQueue {
    /// `hsa_queue_type32_t`.
    pub type_: u32,
    /// Bit set of `hsa_queue_feature_t`.
    pub features: u32,
    pub base_address: u64,
    pub doorbell_signal: u64,
    /// Number of packets in the ring.
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// `amd_queue_t`: 256 bytes, 64-byte aligned.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C, align(64))]
pub struct AmdQueue {
    pub hsa_queue: HsaQueue,
    pub reserved1: [u32; 4],
    pub write_dispatch_id: u64,
    pub group_segment_aperture_base_hi: u32,
    pub private_segment_aperture_base_hi: u32,
    pub max_cu_id: u32,
    pub max_wave_id: u32,
    pub max_legacy_doorbell_dispatch_id_plus_1: u64,
    pub legacy_doorbell_lock: u32,
    pub reserved2: [u32; 9],
    pub read_dispatch_id: u64,
    pub read_dispatch_id_field_base_byte_offset: u32,
    pub compute_tmpring_size: u32,
    pub scratch_resource_descriptor: [u32; 4],
    pub scratch_backing_memory_location: u64,
    pub scratch_backing_memory_byte_size: u64,
    pub scratch_wave64_lane_byte_size: u32,
    pub queue_properties: u32,
    pub reserved3: [u32; 2],
    pub queue_inactive_signal: u64,
    pub reserved4: [u32; 14],
}

/// `HSA_QUEUE_TYPE_MULTI`: several producers may reserve slots.
pub const HSA_QUEUE_TYPE_MULTI: u32 = 0;
/// `HSA_QUEUE_FEATURE_KERNEL_DISPATCH`.
pub const HSA_QUEUE_FEATURE_KERNEL_DISPATCH: u32 = 1;
/// `AMD_QUEUE_PROPERTIES_IS_PTR64` bit position.
pub const AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT: u32 = 1;
/// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING` bit position: with it set the CP
/// writes start/end timestamps into completion signals.
pub const AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT: u32 = 3;

const _: () = {
    assert!(core::mem::size_of::<AmdQueue>() == 256);
    assert!(core::mem::align_of::<AmdQueue>() == 64);
    assert!(core::mem::offset_of!(AmdQueue, write_dispatch_id) == 56);
    assert!(core::mem::offset_of!(AmdQueue, read_dispatch_id) == 128);
};

const Q: &str = "hsa/amd_hsa_queue.h";

/// Layout facts checked against ROCR's `hsa.h` and `amd_hsa_queue.h`.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!("hsa/hsa.h", HsaQueue = "hsa_queue_t" {
        type_ = "type", features = "features", base_address = "base_address",
        doorbell_signal = "doorbell_signal", size = "size", reserved1 = "reserved1", id = "id",
    }),
    layout_facts!(Q, AmdQueue = "amd_queue_t" {
        hsa_queue = "hsa_queue",
        write_dispatch_id = "write_dispatch_id",
        group_segment_aperture_base_hi = "group_segment_aperture_base_hi",
        private_segment_aperture_base_hi = "private_segment_aperture_base_hi",
        max_cu_id = "max_cu_id", max_wave_id = "max_wave_id",
        max_legacy_doorbell_dispatch_id_plus_1 = "max_legacy_doorbell_dispatch_id_plus_1",
        legacy_doorbell_lock = "legacy_doorbell_lock",
        read_dispatch_id = "read_dispatch_id",
        read_dispatch_id_field_base_byte_offset = "read_dispatch_id_field_base_byte_offset",
        compute_tmpring_size = "compute_tmpring_size",
        scratch_resource_descriptor = "scratch_resource_descriptor",
        scratch_backing_memory_location = "scratch_backing_memory_location",
        scratch_backing_memory_byte_size = "scratch_backing_memory_byte_size",
        scratch_wave64_lane_byte_size = "scratch_wave64_lane_byte_size",
        queue_properties = "queue_properties",
        queue_inactive_signal = "queue_inactive_signal",
    }),
    [
        Fact::constant(
            Q,
            "__alignof__(amd_queue_t)",
            core::mem::align_of::<AmdQueue>() as u64
        ),
        Fact::constant(
            "hsa/hsa.h",
            "HSA_QUEUE_TYPE_MULTI",
            HSA_QUEUE_TYPE_MULTI as u64
        ),
        Fact::constant(
            "hsa/hsa.h",
            "HSA_QUEUE_FEATURE_KERNEL_DISPATCH",
            HSA_QUEUE_FEATURE_KERNEL_DISPATCH as u64
        ),
        Fact::constant(
            Q,
            "AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT",
            AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT as u64
        ),
        Fact::constant(
            Q,
            "AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT",
            AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT as u64
        ),
    ],
);

// ---------------------------------------------------------------------------
// The ring and the submit path.
// ---------------------------------------------------------------------------

use crate::aql::doorbell::Doorbell;
use crate::aql::packet::{INVALID_HEADER, Packet};
use crate::time::{Clock, Deadline};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One 64-byte ring slot.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct Slot(UnsafeCell<[u32; 16]>);

impl Slot {
    /// A slot whose header is INVALID.
    const fn empty() -> Slot {
        let mut words = [0u32; 16];
        words[0] = INVALID_HEADER as u32;
        Slot(UnsafeCell::new(words))
    }
}

/// Static storage for one AQL queue: the ring, then the `amd_queue_t`.
///
/// Page-aligned because the CP takes the ring base in 256-byte units
/// (`CP_HQD_PQ_BASE` holds `address >> 8`) and because a queue is mapped
/// to the GPU page by page. The ring comes first so it gets that
/// alignment; the descriptor follows at `SLOTS * 64`, which is a multiple
/// of 64 as `amd_queue_t` requires.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct QueueMemory<const SLOTS: usize> {
    ring: [Slot; SLOTS],
    desc: UnsafeCell<AmdQueue>,
}

// SAFETY: the ring and descriptor are shared with the device by design.
// The only non-atomic write of the descriptor is in `AqlQueue::new`, which
// first claims the descriptor's address in the host-memory claim table
// (`crate::mem::claim`: not a flag in this memory, which the device or a
// user kernel can store to), so no other `AqlQueue` over this
// memory exists while it writes; every access after that goes through atomics (indices, header
// words) or follows the publish protocol (slot bodies are written only by
// the producer that reserved the slot, while the CP cannot read it, and are
// read by the CP only after an acquire load of a published header).
unsafe impl<const SLOTS: usize> Sync for QueueMemory<SLOTS> {}

impl<const SLOTS: usize> QueueMemory<SLOTS> {
    /// Every header INVALID, every index zero.
    pub const fn new() -> Self {
        QueueMemory {
            ring: [const { Slot::empty() }; SLOTS],
            // SAFETY: `AmdQueue` is plain integers and arrays of integers,
            // for which all-zero bytes are a valid value.
            desc: UnsafeCell::new(unsafe { core::mem::zeroed() }),
        }
    }

    /// Whether an [`AqlQueue`] currently owns this memory.
    pub fn is_bound(&self) -> bool {
        crate::mem::claim::is_claimed(self.descriptor_address() as usize)
    }

    /// Address of the ring (the MQD's `cp_hqd_pq_base`).
    pub fn ring_address(&self) -> u64 {
        self.ring.as_ptr() as u64
    }

    /// Address of the `amd_queue_t`.
    pub fn descriptor_address(&self) -> u64 {
        self.desc.get() as u64
    }

    /// Address the CP reports its read index to (`cp_hqd_pq_rptr_report_addr`).
    pub fn read_index_address(&self) -> u64 {
        self.descriptor_address() + core::mem::offset_of!(AmdQueue, read_dispatch_id) as u64
    }

    /// Address the CP polls the write index at (`cp_hqd_pq_wptr_poll_addr`).
    pub fn write_index_address(&self) -> u64 {
        self.descriptor_address() + core::mem::offset_of!(AmdQueue, write_dispatch_id) as u64
    }
}

impl<const SLOTS: usize> Default for QueueMemory<SLOTS> {
    fn default() -> Self {
        Self::new()
    }
}

/// The shared-memory operations the submit algorithm is built from.
///
/// Production implements them over the raw queue memory; the loom tests
/// implement them over loom's atomics and cells, so the algorithm in
/// [`submit_with`] is the code that the model checker explores.
pub trait QueueMem {
    /// Ring size in packets; a power of two.
    fn slots(&self) -> u64;
    /// Reserves `n` packet ids; returns the first.
    fn reserve(&self, n: u64) -> u64;
    /// The CP's read index (acquire).
    fn read_index(&self) -> u64;
    /// Writes bytes 4..64 of `packet` into the slot for `id`.
    fn write_body(&self, id: u64, packet: &[u8; 64]);
    /// Store-release of the header word into the slot for `id`.
    fn publish(&self, id: u64, header_word: u32);
    /// The 64-bit doorbell store.
    fn ring(&self, last_id: u64);
    /// Called between looks while the ring is full.
    fn pause(&self) {
        core::hint::spin_loop();
    }
}

/// Why a submit did not publish its packet(s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitError {
    /// The ring stayed full for the whole bound: the CP is not consuming.
    ///
    /// The reserved ids (`first_id..first_id + count`) remain reserved and
    /// unpublished, so the CP will stall at `first_id` even if it recovers.
    /// The queue must be torn down and re-created (as ROCR does after a
    /// queue error); it cannot be repaired from the producer side.
    QueueFull {
        first_id: u64,
        count: u64,
        read_index: u64,
        waited_ns: u64,
    },
    /// The read index is ahead of a packet id that was never published:
    /// the CP (or something writing its rptr report address) corrupted it.
    ReadIndexAhead {
        packet_id: u64,
        read_index: u64,
    },
    /// A batch larger than the ring can never fit.
    BatchTooLarge {
        len: usize,
        slots: u64,
    },
    EmptyBatch,
}

impl core::fmt::Display for SubmitError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            SubmitError::QueueFull {
                first_id,
                count,
                read_index,
                waited_ns,
            } => write!(
                f,
                "queue stayed full for {waited_ns} ns (read index {read_index}, reserved ids {first_id}..{}): the CP is not consuming; the queue must be re-created",
                first_id.wrapping_add(count)
            ),
            SubmitError::ReadIndexAhead {
                packet_id,
                read_index,
            } => write!(
                f,
                "CP read index {read_index} is ahead of unpublished packet {packet_id}: read index corrupted"
            ),
            SubmitError::BatchTooLarge { len, slots } => {
                write!(f, "batch of {len} packets exceeds the {slots}-slot ring")
            }
            SubmitError::EmptyBatch => write!(f, "empty batch"),
        }
    }
}

/// Waits until ids `first..first + count` fit in the ring.
///
/// The read index is valid only in `[first + count - slots, first]`: it
/// cannot pass `first`, which is reserved and unpublished, and the ids
/// fit once it is at most `slots - count` behind `first`. Both sides are
/// one wrapping distance, `first - read`, checked in one compare on the
/// fast path. A read index ahead of `first` (inside or past this
/// reservation) is [`SubmitError::ReadIndexAhead`].
#[inline(always)]
fn wait_for_space<M, C>(
    mem: &M,
    first: u64,
    count: u64,
    clock: &C,
    timeout_ns: u64,
) -> Result<(), SubmitError>
where
    M: QueueMem + ?Sized,
    C: Clock + ?Sized,
{
    let slots = mem.slots();
    // `count <= slots` (checked by the callers).
    let room = slots.wrapping_sub(count);
    let read = mem.read_index();
    // Fast path: one acquire load, one subtract, one compare.
    if first.wrapping_sub(read) <= room {
        return Ok(());
    }
    let mut deadline = Deadline::after(clock, timeout_ns);
    loop {
        let read = mem.read_index();
        let behind = first.wrapping_sub(read);
        if behind <= room {
            return Ok(());
        }
        // The CP can never have consumed `first` (unpublished). In
        // wrapping arithmetic "read > first" shows up as a huge distance.
        if behind > u64::MAX / 2 {
            return Err(SubmitError::ReadIndexAhead {
                packet_id: first,
                read_index: read,
            });
        }
        if deadline.expired(clock) {
            return Err(SubmitError::QueueFull {
                first_id: first,
                count,
                read_index: read,
                waited_ns: deadline.elapsed_ns(clock),
            });
        }
        mem.pause();
    }
}

/// Everything of a submission but the doorbell: reserve, wait for space,
/// write bytes 4..64, store-release the header word. Returns the id. The
/// latency tool uses this split to time the doorbell store on its own.
#[inline(always)]
pub fn publish_with<M, P, C>(
    mem: &M,
    packet: &P,
    clock: &C,
    timeout_ns: u64,
) -> Result<u64, SubmitError>
where
    M: QueueMem + ?Sized,
    P: Packet,
    C: Clock + ?Sized,
{
    let id = mem.reserve(1);
    wait_for_space(mem, id, 1, clock, timeout_ns)?;
    mem.write_body(id, packet.bytes());
    mem.publish(id, packet.header_word());
    Ok(id)
}

/// One packet, in ROCR's order: [`publish_with`], then ring the doorbell
/// with this packet's id. Returns the packet id.
#[inline(always)]
pub fn submit_with<M, P, C>(
    mem: &M,
    packet: &P,
    clock: &C,
    timeout_ns: u64,
) -> Result<u64, SubmitError>
where
    M: QueueMem + ?Sized,
    P: Packet,
    C: Clock + ?Sized,
{
    let id = publish_with(mem, packet, clock, timeout_ns)?;
    mem.ring(id);
    Ok(id)
}

/// Several packets with one doorbell: all bodies, then the headers in
/// order, then a single ring with the last id. Returns the first id.
pub fn submit_batch_with<M, P, C>(
    mem: &M,
    packets: &[P],
    clock: &C,
    timeout_ns: u64,
) -> Result<u64, SubmitError>
where
    M: QueueMem + ?Sized,
    P: Packet,
    C: Clock + ?Sized,
{
    let n = packets.len() as u64;
    if n == 0 {
        return Err(SubmitError::EmptyBatch);
    }
    if n > mem.slots() {
        return Err(SubmitError::BatchTooLarge {
            len: packets.len(),
            slots: mem.slots(),
        });
    }
    let first = mem.reserve(n);
    wait_for_space(mem, first, n, clock, timeout_ns)?;
    let mut id = first;
    for p in packets {
        mem.write_body(id, p.bytes());
        id = id.wrapping_add(1);
    }
    let mut id = first;
    for p in packets {
        mem.publish(id, p.header_word());
        id = id.wrapping_add(1);
    }
    mem.ring(first.wrapping_add(n - 1));
    Ok(first)
}

/// Why [`AqlQueue::new`] refused the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindError {
    /// Another [`AqlQueue`] owns this queue memory; a second one would
    /// rewrite the descriptor under its producers.
    MemoryInUse { descriptor: u64 },
    /// [`crate::mem::claim::CLAIMS`] rings and queues are claimed in this
    /// process already.
    ClaimTableFull { descriptor: u64 },
}

impl core::fmt::Display for BindError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            BindError::MemoryInUse { descriptor } => write!(
                f,
                "queue memory at {descriptor:#x} already belongs to a live AQL queue"
            ),
            BindError::ClaimTableFull { descriptor } => write!(
                f,
                "queue memory at {descriptor:#x} cannot be claimed: {} rings and queues are claimed in this process already",
                crate::mem::claim::CLAIMS
            ),
        }
    }
}

/// Queue creation options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueConfig {
    /// Initial read/write index. Hardware starts at 0; tests start near
    /// 2^64 to exercise wrap.
    pub start_index: u64,
    /// Sets `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING`, asking the CP to write
    /// start/end timestamps into completion signals.
    pub profiling: bool,
    /// `hsa_queue_t::id`.
    pub id: u64,
}

/// An AQL user queue: static ring + descriptor + doorbell.
///
/// `AqlQueue` is `Sync`: any number of threads may submit through a shared
/// reference (multi-producer, like `HSA_QUEUE_TYPE_MULTI`).
#[derive(Debug)]
pub struct AqlQueue<'m, const SLOTS: usize> {
    mem: &'m QueueMemory<SLOTS>,
    doorbell: Doorbell,
    /// The descriptor's one-owner claim, in host memory.
    _claim: crate::mem::claim::Claim,
}

impl<'m, const SLOTS: usize> AqlQueue<'m, SLOTS> {
    const VALID: () = assert!(
        SLOTS.is_power_of_two() && SLOTS >= 4,
        "an AQL ring holds a power of two of at least 4 packets"
    );

    /// Initialises the descriptor and binds the doorbell. Call before the
    /// queue is mapped to the CP: it rewrites the indices.
    ///
    /// The queue owns `mem` until it is dropped: a second `new` over the
    /// same memory meanwhile is [`BindError::MemoryInUse`], so the plain
    /// descriptor write here never races another queue's producers.
    pub fn new(
        mem: &'m QueueMemory<SLOTS>,
        doorbell: Doorbell,
        config: QueueConfig,
    ) -> Result<Self, BindError> {
        let () = Self::VALID;
        let descriptor = mem.descriptor_address();
        let claim = crate::mem::claim::Claim::take(descriptor as usize).map_err(|e| match e {
            crate::mem::claim::ClaimError::Taken => BindError::MemoryInUse { descriptor },
            crate::mem::claim::ClaimError::Full => BindError::ClaimTableFull { descriptor },
        })?;
        let mut properties = 1 << AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT;
        if config.profiling {
            properties |= 1 << AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT;
        }
        let desc = AmdQueue {
            hsa_queue: HsaQueue {
                type_: HSA_QUEUE_TYPE_MULTI,
                features: HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
                base_address: mem.ring_address(),
                // ROCR points this at a doorbell-kind signal; barebell has
                // the doorbell itself and no signal object for it.
                doorbell_signal: 0,
                size: SLOTS as u32,
                reserved1: 0,
                id: config.id,
            },
            write_dispatch_id: config.start_index,
            read_dispatch_id: config.start_index,
            read_dispatch_id_field_base_byte_offset: core::mem::offset_of!(
                AmdQueue,
                read_dispatch_id
            ) as u32,
            queue_properties: properties,
            // SAFETY: all-zero is a valid `AmdQueue` (plain integers).
            ..unsafe { core::mem::zeroed() }
        };
        // SAFETY: the descriptor's claim is ours (`claim` above), so no
        // other `AqlQueue` (the only other host-side accessor) exists over
        // this memory, and
        // the queue is not mapped to a CP yet (documented contract), so
        // nothing reads or writes the descriptor concurrently. The ring
        // headers are reset through atomics.
        unsafe { mem.desc.get().write(desc) };
        for slot in &mem.ring {
            // SAFETY: slot word 0 is an aligned u32 inside `mem`.
            unsafe { AtomicU32::from_ptr(slot.0.get().cast::<u32>()) }
                .store(INVALID_HEADER as u32, Ordering::Relaxed);
        }
        core::sync::atomic::fence(Ordering::Release);
        Ok(AqlQueue {
            mem,
            doorbell,
            _claim: claim,
        })
    }

    pub fn memory(&self) -> &'m QueueMemory<SLOTS> {
        self.mem
    }

    pub fn doorbell(&self) -> &Doorbell {
        &self.doorbell
    }

    fn write_index_atomic(&self) -> &AtomicU64 {
        // SAFETY: `write_dispatch_id` is an aligned u64 inside the
        // descriptor, which lives for 'm; after `new` it is accessed only
        // atomically (by producers and by the CP's wptr poll).
        unsafe { AtomicU64::from_ptr(&raw mut (*self.mem.desc.get()).write_dispatch_id) }
    }

    fn read_index_atomic(&self) -> &AtomicU64 {
        // SAFETY: as for the write index; the CP writes it atomically.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.mem.desc.get()).read_dispatch_id) }
    }

    /// Next id to be reserved.
    pub fn write_index(&self) -> u64 {
        self.write_index_atomic().load(Ordering::Relaxed)
    }

    /// Ids below this one have been consumed by the CP.
    pub fn read_index(&self) -> u64 {
        self.read_index_atomic().load(Ordering::Acquire)
    }

    /// Publishes one packet and rings the doorbell; returns its id.
    #[inline]
    pub fn submit<P: Packet, C: Clock + ?Sized>(
        &self,
        packet: &P,
        clock: &C,
        timeout_ns: u64,
    ) -> Result<u64, SubmitError> {
        submit_with(self, packet, clock, timeout_ns)
    }

    /// Publishes one packet without ringing; see [`publish_with`].
    #[inline]
    pub fn publish_packet<P: Packet, C: Clock + ?Sized>(
        &self,
        packet: &P,
        clock: &C,
        timeout_ns: u64,
    ) -> Result<u64, SubmitError> {
        publish_with(self, packet, clock, timeout_ns)
    }

    /// Rings the doorbell for packets up to `last_id`.
    #[inline(always)]
    pub fn ring_doorbell(&self, last_id: u64) {
        self.doorbell.ring(last_id);
    }

    /// Publishes `packets` with one doorbell; returns the first id.
    pub fn submit_batch<P: Packet, C: Clock + ?Sized>(
        &self,
        packets: &[P],
        clock: &C,
        timeout_ns: u64,
    ) -> Result<u64, SubmitError> {
        submit_batch_with(self, packets, clock, timeout_ns)
    }

    #[inline(always)]
    fn slot_ptr(&self, id: u64) -> *mut u32 {
        // Masking keeps the index in bounds for every u64 id; SLOTS is a
        // power of two, so this is also correct across u64 wrap.
        let i = (id as usize) & (SLOTS - 1);
        // SAFETY: `i < SLOTS`, so the element exists.
        unsafe { self.mem.ring.get_unchecked(i) }
            .0
            .get()
            .cast::<u32>()
    }
}

impl<const SLOTS: usize> QueueMem for AqlQueue<'_, SLOTS> {
    #[inline(always)]
    fn slots(&self) -> u64 {
        SLOTS as u64
    }

    #[inline(always)]
    fn reserve(&self, n: u64) -> u64 {
        self.write_index_atomic().fetch_add(n, Ordering::Relaxed)
    }

    #[inline(always)]
    fn read_index(&self) -> u64 {
        self.read_index_atomic().load(Ordering::Acquire)
    }

    #[inline(always)]
    fn write_body(&self, id: u64, packet: &[u8; 64]) {
        let dst = self.slot_ptr(id).cast::<u8>();
        // SAFETY: the slot is 64 bytes; bytes 4..64 are written only by the
        // producer that reserved `id` and read by the CP only after it has
        // seen this slot's header published (acquire), which happens after
        // this copy (release in `publish`). The previous occupant was
        // consumed: `wait_for_space` saw read index > id - SLOTS (acquire).
        unsafe { core::ptr::copy_nonoverlapping(packet.as_ptr().add(4), dst.add(4), 60) };
    }

    #[inline(always)]
    fn publish(&self, id: u64, header_word: u32) {
        // SAFETY: word 0 of the slot is an aligned u32 that both sides
        // access only atomically.
        unsafe { AtomicU32::from_ptr(self.slot_ptr(id)) }.store(header_word, Ordering::Release);
    }

    #[inline(always)]
    fn ring(&self, last_id: u64) {
        self.doorbell.ring(last_id);
    }
}
