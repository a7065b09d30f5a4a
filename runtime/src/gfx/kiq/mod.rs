//! The KIQ (kernel interface queue) as a queue mapper: PM4 MAP_QUEUES /
//! UNMAP_QUEUES on the KIQ ring, the HWS/CPSCH style.
//!
//! Each operation writes its packet (`gfx11_kiq_map_queues()` /
//! `gfx_v12_0_kiq_map_queues()` encodings, which are the same `nvd.h`
//! packets on both generations) followed by the KIQ fence
//! (`gfx_v11_0_ring_emit_fence_kiq()`: WRITE_DATA of the sequence number to
//! memory with write-confirm), stores the write pointer (in dwords) to the
//! ring's wptr slot and doorbell (`gfx_v11_0_ring_set_wptr_compute()`),
//! and polls the fence with a bound. The KIQ reports no per-packet status:
//! a packet it cannot execute stalls the ring, which shows up as a typed
//! timeout naming the packet.
//!
//! The KIQ's own HQD is brought up on MES pipe 1 by
//! [`crate::gfx::kiq::hqd::bring_up_on_mes`]; [`Kiq::new`] takes that running ring.

pub mod hqd;
pub mod v9;

use crate::gfx::doorbells::Doorbells;
use crate::gfx::error::KiqTimeout;
use crate::gfx::error::{MapError, RingInUse};
use crate::gfx::mapper::{Mapping, QueueMapper, QueueResources};
use crate::gfx::mqd::build_aql;
use crate::ip::Generation;
use crate::mem::Dev;
use crate::time::Pause;
use crate::time::{Clock, Deadline};
use barebell_firmware_if::pm4::{self, QueueEngine, unmap_action, write_dst};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering};

/// Ring, wptr slot and fence slot of the KIQ, page-aligned.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct KiqMemory<const RING_DWORDS: usize> {
    ring: UnsafeCell<[u32; RING_DWORDS]>,
    wptr: AtomicU64,
    fence: AtomicU64,
    /// Where the KIQ reports its read pointer (`CP_HQD_PQ_RPTR_REPORT_ADDR`).
    rptr: AtomicU64,
}

// SAFETY: the CPU writes ring dwords only from the one `Kiq` holding the
// ring's claim (taken in `Kiq::new` from the host-memory claim table,
// `crate::mem::claim`, released on drop),
// and only above the KIQ's read position (one operation is outstanding at
// a time and completes before the next is written); the wptr and fence
// are atomics.
unsafe impl<const N: usize> Sync for KiqMemory<N> {}

impl<const RING_DWORDS: usize> KiqMemory<RING_DWORDS> {
    const VALID: () = assert!(
        RING_DWORDS.is_power_of_two() && RING_DWORDS >= 64,
        "the KIQ ring holds a power of two of at least 64 dwords"
    );

    pub const fn new() -> Self {
        let () = Self::VALID;
        KiqMemory {
            ring: UnsafeCell::new([0; RING_DWORDS]),
            wptr: AtomicU64::new(0),
            fence: AtomicU64::new(0),
            rptr: AtomicU64::new(0),
        }
    }
    pub fn ring_address(&self) -> u64 {
        self.ring.get() as u64
    }
    pub fn wptr_address(&self) -> u64 {
        self.wptr.as_ptr() as u64
    }
    pub fn fence_address(&self) -> u64 {
        self.fence.as_ptr() as u64
    }
    pub fn rptr_address(&self) -> u64 {
        self.rptr.as_ptr() as u64
    }
}

impl<const N: usize> Default for KiqMemory<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// A running KIQ ring and its doorbell.
#[derive(Debug, Clone, Copy)]
pub struct KiqRing<'a, const RING_DWORDS: usize> {
    pub memory: Dev<'a, KiqMemory<RING_DWORDS>>,
    pub doorbell: crate::aql::doorbell::Doorbell,
}

/// Bound for one KIQ operation (the MES API bound; Linux's KIQ register
/// helpers use `MAX_KIQ_REG_WAIT` polls of a few µs each).
pub const KIQ_TIMEOUT_NS: u64 = 2_100_000_000;

/// Pipes and queues of MEC1 the KIQ may map user queues to.
const PIPES: u8 = crate::gfx::hqd::PIPES;
const QUEUES: u8 = crate::gfx::hqd::QUEUES_PER_PIPE;

/// Maps queues with KIQ MAP_QUEUES.
///
/// # One writer per ring
///
/// Issue 21's finding (as for [`crate::gfx::mes::Mes`]): `KiqMemory` is
/// `Sync` on the assumption of one writer, yet its ring handles are `Copy`
/// and the constructor safe. [`Kiq::new`] claims the ring in the
/// host-memory claim table ([`crate::mem::claim`]), so
/// a second mapper meanwhile is [`RingInUse`] at run time
/// (`a_second_mapper_over_one_kiq_ring_is_refused` in
/// tests/harness/tests/kiq.rs); at compile time the ring is reachable only
/// through a mapper, which writes only through `&mut self`:
///
/// ```compile_fail,E0596
/// use barebell::gfx::kiq::Kiq;
/// use barebell::time::{Clock, Pause};
/// // Two writers through one shared mapper: a packet needs `&mut Kiq`.
/// fn second_writer<C: Clock, P: Pause>(shared: &Kiq<'_, C, P, 256>) {
///     let _ = shared.submit("NOP", &[0]);
/// }
/// ```
///
/// ```compile_fail,E0616
/// use barebell::gfx::kiq::KiqMemory;
/// // A writer that bypasses the mapper's claim: the ring is private.
/// fn bypass(memory: &KiqMemory<256>) {
///     let _ = &memory.ring;
/// }
/// ```
pub struct Kiq<'a, C, P, const RING_DWORDS: usize> {
    /// The ring's one-writer claim, in host memory.
    _claim: crate::mem::claim::Claim,
    ring: KiqRing<'a, RING_DWORDS>,
    clock: C,
    pause: P,
    generation: Generation,
    seq: u32,
    doorbells: Doorbells,
    busy: [u8; PIPES as usize],
    allowed: [u8; PIPES as usize],
    /// SET_RESOURCES completed.
    resources: bool,
    /// A packet whose fence timed out: the KIQ may still be reading its
    /// dwords, so nothing is written over them until its fence arrives.
    pending: Option<(&'static str, u32)>,
    pub timeout_ns: u64,
    presence: Option<crate::bus::Presence<'a>>,
}

impl<C, P, const N: usize> core::fmt::Debug for Kiq<'_, C, P, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kiq")
            .field("seq", &self.seq)
            .field("generation", &self.generation)
            .field("busy", &self.busy)
            .finish_non_exhaustive()
    }
}

impl<'a, C: Clock, P: Pause, const RING_DWORDS: usize> Kiq<'a, C, P, RING_DWORDS> {
    /// A mapper over a running KIQ ring; it is the ring's one writer
    /// until dropped (a second one meanwhile is [`RingInUse`]).
    pub fn new(
        ring: KiqRing<'a, RING_DWORDS>,
        clock: C,
        pause: P,
        generation: Generation,
        doorbells: Doorbells,
    ) -> Result<Self, RingInUse> {
        let m = ring.memory;
        let claim = crate::mem::claim::Claim::take(m.ring_address() as usize)
            .map_err(|e| RingInUse::from_claim(m.ring_address(), e))?;
        let seq = ring.memory.fence.load(Ordering::Acquire) as u32;
        Ok(Kiq {
            _claim: claim,
            ring,
            clock,
            pause,
            generation,
            seq,
            doorbells,
            busy: [0; PIPES as usize],
            allowed: [0xFF; PIPES as usize],
            resources: false,
            pending: None,
            timeout_ns: KIQ_TIMEOUT_NS,
            presence: None,
        })
    }

    /// Restricts the MEC1 slots used (bit `q` of `mask[pipe]`).
    pub fn set_allowed_slots(&mut self, mask: [u8; PIPES as usize]) {
        self.allowed = mask;
    }

    pub fn doorbells(&self) -> &Doorbells {
        &self.doorbells
    }

    /// Writes `packet`, then the fence, rings, and waits.
    ///
    /// After a timeout the KIQ may still be reading the timed-out packet:
    /// the next call first waits (bounded) for that packet's fence and,
    /// while it has not come, refuses with that packet's timeout again
    /// instead of writing over dwords the firmware has not consumed. The
    /// ring stays unusable until the KIQ catches up or is reset (as
    /// [`crate::gfx::mes::Mes`] does with a timed-out frame).
    pub fn submit(&mut self, name: &'static str, packet: &[u32]) -> Result<(), KiqTimeout> {
        self.settle()?;
        let mem = self.ring.memory;
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let fence = pm4::write_data(0, write_dst::MEMORY, true, mem.fence_address(), seq);
        let mut wptr = mem.wptr.load(Ordering::Relaxed);
        let ring = mem.ring.get().cast::<u32>();
        for d in packet.iter().chain(fence.iter()) {
            let at = (wptr as usize) & (RING_DWORDS - 1);
            // SAFETY: `at < RING_DWORDS`; the KIQ has consumed every dword
            // written before: each packet ends with its fence, and the
            // previous fence completed, in its own call or (after a
            // timeout) in the `pending` wait above.
            unsafe { ring.add(at).write_volatile(*d) };
            wptr = wptr.wrapping_add(1);
        }
        mem.wptr.store(wptr, Ordering::Release);
        self.ring.doorbell.ring(wptr);
        self.wait_fence(name, seq).inspect_err(|_| {
            self.pending = Some((name, seq));
        })
    }

    /// Waits (bounded) until the fence reaches `seq`. A late fence of an
    /// earlier packet carries an older sequence number and cannot satisfy
    /// it.
    fn wait_fence(&mut self, name: &'static str, seq: u32) -> Result<(), KiqTimeout> {
        let mem = self.ring.memory;
        let mut deadline = Deadline::after(&self.clock, self.timeout_ns);
        let start = self.clock.now_ns();
        let mut watch = crate::bus::PresenceWatch::new(start);
        loop {
            let f = mem.fence.load(Ordering::Acquire) as u32;
            if fence_reached(f, seq) {
                return Ok(());
            }
            let expired = deadline.expired(&self.clock);
            let now = self.clock.now_ns();
            let gone = watch.gone(self.presence.as_ref(), now, expired);
            if gone || expired {
                return Err(KiqTimeout {
                    packet: name,
                    seq,
                    fence: f,
                    waited_ns: now.saturating_sub(start),
                    device_gone: gone,
                });
            }
            self.pause.pause();
        }
    }

    /// Reads `presence` while waiting for fences, so that a device that
    /// vanished ends a wait within one interval, marked
    /// [`KiqTimeout::device_gone`], instead of at the bound.
    pub fn set_presence(&mut self, presence: crate::bus::Presence<'a>) {
        self.presence = Some(presence);
    }

    /// Waits (bounded) for a timed-out packet's fence; while it has not
    /// come, that packet's timeout again.
    fn settle(&mut self) -> Result<(), KiqTimeout> {
        if let Some((old, old_seq)) = self.pending {
            self.wait_fence(old, old_seq)?;
            self.pending = None;
        }
        Ok(())
    }

    /// Whether a timed-out packet is still unaccounted for (the KIQ may
    /// still read it); the next [`Kiq::submit`] waits for it first.
    pub fn has_pending_packet(&self) -> bool {
        self.pending.is_some()
    }

    /// SET_RESOURCES handing the KIQ `queue_mask` (`gfx11_kiq_set_resources()`).
    /// [`QueueMapper::map`] refuses to run before this completed, as
    /// `amdgpu_gfx_enable_kcq()` sends it ahead of every MAP_QUEUES.
    pub fn set_resources(&mut self, queue_mask: u64) -> Result<(), KiqTimeout> {
        self.submit("SET_RESOURCES", &pm4::set_resources(queue_mask))?;
        self.resources = true;
        Ok(())
    }

    /// The queue mask naming exactly the slots this mapper may use:
    /// bit `pipe * 8 + queue` of MEC 0, as
    /// `amdgpu_queue_mask_bit_to_set_resource_bit()` numbers them.
    pub fn allowed_queue_mask(&self) -> u64 {
        self.allowed
            .iter()
            .enumerate()
            .fold(0, |m, (pipe, q)| m | u64::from(*q) << (8 * pipe))
    }

    fn free_slot(&self) -> Option<(u8, u8)> {
        for pipe in 0..PIPES {
            let p = usize::from(pipe);
            let free = self.allowed.get(p).copied().unwrap_or(0)
                & !self.busy.get(p).copied().unwrap_or(0xFF);
            if free != 0 {
                return Some((pipe, free.trailing_zeros() as u8));
            }
        }
        None
    }
}

impl<C: Clock, P: Pause, const N: usize> QueueMapper for Kiq<'_, C, P, N> {
    fn probe(&mut self) -> Result<(), MapError> {
        let mask = self.allowed_queue_mask();
        self.set_resources(mask).map_err(MapError::Kiq)
    }

    fn map(&mut self, q: &QueueResources<'_>) -> Result<Mapping, MapError> {
        if !self.resources {
            return Err(MapError::KiqNoResources);
        }
        // A packet that timed out first: nothing is reserved for this
        // queue while the ring cannot take its MAP_QUEUES.
        self.settle().map_err(MapError::Kiq)?;
        let (pipe, queue) = self.free_slot().ok_or(MapError::NoFreeSlot)?;
        self.doorbells.claim(q.doorbell)?;
        let params = q.mqd_params();
        if let Err(e) = build_aql(self.generation, &q.mqd, &params) {
            self.doorbells.release(q.doorbell);
            return Err(e.into());
        }
        let packet = pm4::map_queues(
            QueueEngine::Compute,
            pipe,
            queue,
            params.doorbell_dword,
            params.mqd_address,
            params.write_index_address,
        );
        // The slot is taken before the packet is sent: if the KIQ times
        // out it may still run MAP_QUEUES later, so the slot and the
        // doorbell both stay reserved (a later map must not land a second
        // queue on the same HQD).
        if let Some(b) = self.busy.get_mut(usize::from(pipe)) {
            *b |= 1 << queue;
        }
        if let Err(e) = self.submit("MAP_QUEUES", &packet) {
            return Err(MapError::Kiq(e));
        }
        Ok(Mapping {
            doorbell: q.doorbell,
            mqd_address: params.mqd_address,
            pipe,
            queue,
            vmid: q.vmid,
        })
    }

    fn unmap(&mut self, m: &Mapping) -> Result<(), MapError> {
        let p = usize::from(m.pipe);
        let mapped = m.queue < QUEUES
            && self.busy.get(p).is_some_and(|b| b & (1 << m.queue) != 0)
            && self.doorbells.is_used(m.doorbell);
        if !mapped {
            return Err(MapError::NotMapped {
                doorbell: m.doorbell,
            });
        }
        // `amdgpu_gfx_disable_kcq()` resets the queues it unmaps.
        let packet = pm4::unmap_queues(
            unmap_action::RESET_QUEUES,
            false,
            m.doorbell.saturating_mul(2),
            (0, 0),
        );
        self.submit("UNMAP_QUEUES", &packet)
            .map_err(MapError::Kiq)?;
        if let Some(b) = self.busy.get_mut(p) {
            *b &= !(1 << m.queue);
        }
        self.doorbells.release(m.doorbell);
        Ok(())
    }
}

/// `amdgpu_fence_wait_polling()`'s test (amdgpu_fence.c): the wait is
/// over once `(int32_t)(wait_seq - fence) <= 0`, the fence at or past
/// `seq` in wrapping sequence order.
const fn fence_reached(fence: u32, seq: u32) -> bool {
    (seq.wrapping_sub(fence) as i32) <= 0
}

#[cfg(test)]
mod tests {
    use super::fence_reached;

    /// Linux keeps waiting while `(int32_t)(wait_seq - fence) > 0`; the
    /// edges worked out by hand.
    #[test]
    fn the_fence_test_is_linuxs() {
        assert!(fence_reached(5, 5));
        assert!(fence_reached(6, 5));
        assert!(!fence_reached(4, 5));
        // Across the wrap.
        assert!(fence_reached(1, u32::MAX));
        assert!(!fence_reached(u32::MAX, 1));
        // wait_seq - fence = 0x8000_0000, i32::MIN: over.
        assert!(fence_reached(0x8000_0000, 0));
        // wait_seq - fence = 0x7fff_ffff: still waiting.
        assert!(!fence_reached(0x8000_0001, 0));
    }
}
