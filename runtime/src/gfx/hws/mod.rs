//! The hardware scheduler (HWS, KFD's CPSCH mode) on GC 9.x: the PM4
//! packets KFD's packet manager sends on the HIQ ([`packets`]), the
//! runlist IB it builds ([`runlist`]), and a client that writes them to a
//! HIQ ring and waits for their fence ([`Hws`]).
//!
//! # Protocol (`kfd_device_queue_manager.c`, `kfd_packet_manager.c`)
//!
//! `start_cpsch()` sends SET_RESOURCES (`set_sched_resources()`: the VMIDs
//! and MEC queue slots HWS may use). `map_queues_cpsch()` builds the
//! runlist IB (`pm_create_runlist_ib()`) and sends one RUN_LIST naming it
//! (`pm_send_runlist()`). `unmap_queues_cpsch()` sends UNMAP_QUEUES, then
//! QUERY_STATUS with a fence, and waits for the fence with
//! `amdkfd_fence_wait_timeout()` (bounded by `queue_preemption_timeout_ms`,
//! 9 s by default). A fence that does not come is KFD's "HWS hang": it
//! logs that the CP may be in an unrecoverable state and calls
//! `kfd_hws_hang()`, which schedules a GPU reset; the HWS reports no
//! status of its own.
//!
//! # What this client does differently
//!
//! [`Hws`] follows every packet it sends with a QUERY_STATUS fence and
//! waits for it, not only UNMAP_QUEUES: a packet the scheduler refuses
//! shows up as a [`HwsError::FenceTimeout`] naming that packet. The fence
//! value is a sequence number rather than KFD's fixed `KFD_FENCE_COMPLETED`
//! after `KFD_FENCE_INIT`, so a late fence of an earlier, timed-out packet
//! cannot satisfy a later wait. Ring writes follow `kq_submit_packet()`:
//! the 64-bit write pointer, in dwords, goes to the ring's wptr slot and
//! its doorbell.

pub mod hiq;
pub mod packets;
pub mod runlist;

use crate::aql::doorbell::Doorbell;
use crate::mem::Dev;
use crate::time::{Clock, Deadline, Pause};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering};
pub use packets::{
    Engine, MapProcessForm, ProcessDesc, QueueDesc, SchedulingResources, UnmapFilter,
};
pub use runlist::{DoorbellRange, ProcessQueues, Runlist, RunlistConfig};

/// Why the HWS path refused or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwsError {
    /// The scheduler did not write the fence after `packet` in time:
    /// it refused the packet (or one before it) or hung. KFD:
    /// `amdkfd_fence_wait_timeout()` returns `-ETIME`, then `kfd_hws_hang()`.
    FenceTimeout {
        packet: &'static str,
        seq: u64,
        fence: u64,
        waited_ns: u64,
    },
    /// While waiting for `packet`'s fence, the device stopped answering
    /// (a register read all ones): it is gone, not hung.
    DeviceGone {
        packet: &'static str,
        waited_ns: u64,
    },
    /// Another client writes this HIQ ring (or, `table_full`, the
    /// process's claim table is full).
    RingInUse { ring: u64, table_full: bool },
    /// A packet with its fence does not fit in the ring.
    PacketTooLarge { dwords: usize, ring_dwords: usize },
    /// RUN_LIST before SET_RESOURCES (`start_cpsch()` sends the resources
    /// first).
    NoResources,
    /// No process to map (`map_queues_cpsch()` sends nothing then).
    EmptyRunlist,
    /// The runlist IB address is not dword-aligned (`ib_base_lo` holds
    /// bits 31:2).
    IbMisaligned { address: u64 },
    /// The caller's IB buffer is shorter than the runlist
    /// (`pm_create_runlist_ib()`: "Not enough space left in runlist IB").
    IbTooSmall { needed: usize, have: usize },
    /// The runlist is longer than RUN_LIST's 20-bit `ib_size`.
    IbTooLarge { dwords: usize },
    /// More processes per quantum than `process_cnt` holds.
    TooManyProcesses { process_cnt: usize, max: usize },
    /// More queues than a process's `num_queues` or the device
    /// (`KFD_MAX_NUM_OF_QUEUES_PER_DEVICE`) allows.
    TooManyQueues {
        pasid: Option<u16>,
        count: usize,
        max: usize,
    },
    /// PASID 0 or one PASID twice in a runlist.
    BadPasid { pasid: u16 },
    /// The page-table base is not a valid PDE as `amdgpu_gmc_pd_addr()`
    /// makes it.
    PageTableBase { pasid: u16, value: u64 },
    /// A compute queue's doorbell is outside the MEC's doorbell range.
    DoorbellOutOfRange {
        pasid: u16,
        doorbell_offset: u32,
        range: DoorbellRange,
    },
    /// Two queues share a doorbell.
    DuplicateDoorbell { doorbell_offset: u32 },
    /// A queue without an MQD or write-pointer address.
    NullQueueAddress { pasid: u16, doorbell_offset: u32 },
    /// An SDMA queue on an engine the part does not have
    /// (`allocate_sdma_queue()` draws engines below
    /// `get_num_all_sdma_engines()`).
    SdmaEngine { pasid: u16, engine: u8, engines: u8 },
    /// An SDMA queue whose doorbell is not one of its engine's
    /// (`allocate_doorbell()`'s static SDMA assignment).
    SdmaDoorbellOutOfRange {
        pasid: u16,
        engine: u8,
        doorbell_offset: u32,
    },
    /// The scheduler completed an UNMAP_QUEUES (PREEMPT) but gave up on
    /// the queue at `doorbell_offset` on XCC `xcc`: its waves did not
    /// drain. The queue is still mapped; only a RESET takes it off
    /// (`unmap_queues_cpsch()`, `check_preemption_failed_v9_4_3()`).
    PreemptionFailed { xcc: usize, doorbell_offset: u32 },
}

impl core::fmt::Display for HwsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            HwsError::FenceTimeout {
                packet,
                seq,
                fence,
                waited_ns,
            } => write!(
                f,
                "the HWS did not complete {packet} within {waited_ns} ns (fence {fence}, waiting for {seq}); \
                 it refused the packet or hung, as KFD's HWS-hang path would report"
            ),
            HwsError::PreemptionFailed {
                xcc,
                doorbell_offset,
            } => write!(
                f,
                "the HWS could not preempt the queue at doorbell dword {doorbell_offset:#x} on XCC {xcc}: \
                 its kernel did not finish, so the queue is still mapped and needs a reset"
            ),
            HwsError::DeviceGone { packet, waited_ns } => write!(
                f,
                "the device is gone (its registers read all ones) after {waited_ns} ns waiting for the HWS to complete {packet}"
            ),
            HwsError::RingInUse {
                ring,
                table_full: true,
            } => write!(
                f,
                "the HIQ ring at {ring:#x} cannot be claimed: {} rings and queues are claimed in this process already",
                crate::mem::claim::CLAIMS
            ),
            HwsError::RingInUse { ring, .. } => {
                write!(f, "the HIQ ring at {ring:#x} already has a writer")
            }
            HwsError::PacketTooLarge {
                dwords,
                ring_dwords,
            } => write!(
                f,
                "a {dwords}-dword packet and its fence do not fit in the {ring_dwords}-dword HIQ ring"
            ),
            HwsError::NoResources => {
                write!(
                    f,
                    "RUN_LIST before SET_RESOURCES: send the scheduling resources first"
                )
            }
            HwsError::EmptyRunlist => write!(f, "a runlist needs at least one process"),
            HwsError::IbMisaligned { address } => {
                write!(f, "runlist IB address {address:#x} is not dword-aligned")
            }
            HwsError::IbTooSmall { needed, have } => write!(
                f,
                "the runlist needs {needed} dwords of IB, the buffer has {have}"
            ),
            HwsError::IbTooLarge { dwords } => write!(
                f,
                "a {dwords}-dword runlist exceeds RUN_LIST's 20-bit ib_size"
            ),
            HwsError::TooManyProcesses { process_cnt, max } => write!(
                f,
                "{process_cnt} processes per quantum exceed the {max} RUN_LIST can name"
            ),
            HwsError::TooManyQueues { pasid, count, max } => match pasid {
                Some(p) => write!(f, "process {p} has {count} queues; at most {max} fit"),
                None => write!(f, "{count} queues exceed the device's {max}"),
            },
            HwsError::BadPasid { pasid } => {
                write!(f, "PASID {pasid} is 0 or appears twice in the runlist")
            }
            HwsError::PageTableBase { pasid, value } => write!(
                f,
                "process {pasid}: page-table base {value:#x} is not a valid page-directory entry \
                 (address bits 47:12, VALID set, only SYSTEM/SNOOPED besides)"
            ),
            HwsError::DoorbellOutOfRange {
                pasid,
                doorbell_offset,
                range,
            } => write!(
                f,
                "process {pasid}: doorbell dword {doorbell_offset:#x} (byte {:#x}) is outside the MEC doorbell range {:#x}..={:#x}",
                u64::from(doorbell_offset) * 4,
                range.lower,
                range.upper
            ),
            HwsError::DuplicateDoorbell { doorbell_offset } => {
                write!(
                    f,
                    "doorbell dword {doorbell_offset:#x} is used by two queues"
                )
            }
            HwsError::NullQueueAddress {
                pasid,
                doorbell_offset,
            } => write!(
                f,
                "process {pasid}: the queue on doorbell {doorbell_offset:#x} has no MQD or write-pointer address"
            ),
            HwsError::SdmaEngine {
                pasid,
                engine,
                engines,
            } => write!(
                f,
                "process {pasid}: SDMA engine {engine} does not exist (the part has {engines} KFD may use)"
            ),
            HwsError::SdmaDoorbellOutOfRange {
                pasid,
                engine,
                doorbell_offset,
            } => write!(
                f,
                "process {pasid}: doorbell dword {doorbell_offset:#x} is not one of SDMA engine {engine}'s doorbells"
            ),
        }
    }
}

/// The HIQ's ring, write-pointer slot and fence, page-aligned.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct HiqMemory<const RING_DWORDS: usize> {
    ring: UnsafeCell<[u32; RING_DWORDS]>,
    wptr: AtomicU64,
    fence: AtomicU64,
}

// SAFETY: ring dwords are written only by the one `Hws` holding the ring's
// claim (taken in `Hws::new` from the host-memory claim table,
// `crate::mem::claim`, released on drop), and only
// past what the scheduler has consumed (each operation completes, or times
// out, before the next is written); wptr and fence are atomics.
unsafe impl<const N: usize> Sync for HiqMemory<N> {}

impl<const RING_DWORDS: usize> HiqMemory<RING_DWORDS> {
    const VALID: () = assert!(
        RING_DWORDS.is_power_of_two() && RING_DWORDS >= 64,
        "the HIQ ring holds a power of two of at least 64 dwords"
    );

    pub const fn new() -> Self {
        let () = Self::VALID;
        HiqMemory {
            ring: UnsafeCell::new([0; RING_DWORDS]),
            wptr: AtomicU64::new(0),
            fence: AtomicU64::new(0),
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
    /// The last fence value the scheduler wrote.
    pub fn fence(&self) -> u64 {
        self.fence.load(Ordering::Acquire)
    }
}

impl<const N: usize> Default for HiqMemory<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// A running HIQ ring and its doorbell.
#[derive(Debug, Clone, Copy)]
pub struct HiqRing<'a, const RING_DWORDS: usize> {
    pub memory: Dev<'a, HiqMemory<RING_DWORDS>>,
    pub doorbell: Doorbell,
}

/// KFD's bound on a scheduler fence: `queue_preemption_timeout_ms`.
pub const HWS_TIMEOUT_NS: u64 = packets::QUEUE_PREEMPTION_TIMEOUT_MS as u64 * 1_000_000;

/// Writes HWS packets to a HIQ ring: the one writer of that ring.
pub struct Hws<'a, C, P, const RING_DWORDS: usize> {
    /// The ring's one-writer claim, in host memory.
    _claim: crate::mem::claim::Claim,
    ring: HiqRing<'a, RING_DWORDS>,
    clock: C,
    pause: P,
    seq: u64,
    resources: bool,
    /// `pm_use_ext_eng()` for UNMAP_QUEUES.
    pub sdma_ext_eng: bool,
    /// A packet whose fence timed out: the scheduler may still be reading
    /// it, so nothing is written over it until its fence arrives.
    pending: Option<(&'static str, u64)>,
    pub timeout_ns: u64,
    presence: Option<crate::bus::Presence<'a>>,
}

impl<C, P, const N: usize> core::fmt::Debug for Hws<'_, C, P, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hws")
            .field("seq", &self.seq)
            .field("resources", &self.resources)
            .finish_non_exhaustive()
    }
}

impl<'a, C: Clock, P: Pause, const RING_DWORDS: usize> Hws<'a, C, P, RING_DWORDS> {
    /// A client over a running HIQ ring; it is the ring's one writer
    /// until dropped.
    pub fn new(ring: HiqRing<'a, RING_DWORDS>, clock: C, pause: P) -> Result<Self, HwsError> {
        let m = ring.memory;
        let claim = crate::mem::claim::Claim::take(m.ring_address() as usize).map_err(|e| {
            HwsError::RingInUse {
                ring: m.ring_address(),
                table_full: e == crate::mem::claim::ClaimError::Full,
            }
        })?;
        let seq = m.fence.load(Ordering::Acquire);
        Ok(Hws {
            _claim: claim,
            ring,
            clock,
            pause,
            seq,
            resources: false,
            sdma_ext_eng: false,
            pending: None,
            timeout_ns: HWS_TIMEOUT_NS,
            presence: None,
        })
    }

    /// Writes `packet` then a QUERY_STATUS fence, rings the doorbell, and
    /// waits for the fence with a bound.
    ///
    /// After a timeout the scheduler may still be reading the timed-out
    /// packet: the next call first waits (bounded) for its fence and,
    /// while it has not come, refuses with that packet's timeout again
    /// rather than write over dwords not yet consumed; the HIQ stays
    /// unusable until the scheduler catches up or is reset.
    pub fn submit(&mut self, name: &'static str, packet: &[u32]) -> Result<(), HwsError> {
        let mem = self.ring.memory;
        let total = packet.len() + packets::query_status::DWORDS;
        if total >= RING_DWORDS {
            return Err(HwsError::PacketTooLarge {
                dwords: packet.len(),
                ring_dwords: RING_DWORDS,
            });
        }
        if let Some((old, old_seq)) = self.pending {
            self.wait_fence(old, old_seq)?;
            self.pending = None;
        }
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let fence = packets::query_status(mem.fence_address(), seq);
        let mut wptr = mem.wptr.load(Ordering::Relaxed);
        let ring = mem.ring.get().cast::<u32>();
        for d in packet.iter().chain(fence.iter()) {
            let at = (wptr as usize) & (RING_DWORDS - 1);
            // SAFETY: `at < RING_DWORDS`; the scheduler consumed every
            // dword written before: each packet ends with its fence, and
            // the previous fence completed, in its own call or (after a
            // timeout) in the `pending` wait above; `self` is the one
            // writer.
            unsafe { ring.add(at).write_volatile(*d) };
            wptr = wptr.wrapping_add(1);
        }
        mem.wptr.store(wptr, Ordering::Release);
        self.ring.doorbell.ring(wptr);
        self.wait_fence(name, seq).inspect_err(|_| {
            self.pending = Some((name, seq));
        })
    }

    /// Reads `presence` while waiting for fences, so that a device that
    /// vanished ends a wait as [`HwsError::DeviceGone`] within one
    /// interval instead of at the bound.
    pub fn set_presence(&mut self, presence: crate::bus::Presence<'a>) {
        self.presence = Some(presence);
    }

    /// Waits (bounded) until the fence reaches `seq`.
    fn wait_fence(&mut self, name: &'static str, seq: u64) -> Result<(), HwsError> {
        let mem = self.ring.memory;
        let mut deadline = Deadline::after(&self.clock, self.timeout_ns);
        let start = self.clock.now_ns();
        let mut watch = crate::bus::PresenceWatch::new(start);
        loop {
            let f = mem.fence.load(Ordering::Acquire);
            if f.wrapping_sub(seq) < u64::MAX / 2 {
                return Ok(());
            }
            let expired = deadline.expired(&self.clock);
            let now = self.clock.now_ns();
            if watch.gone(self.presence.as_ref(), now, expired) {
                return Err(HwsError::DeviceGone {
                    packet: name,
                    waited_ns: now.saturating_sub(start),
                });
            }
            if expired {
                return Err(HwsError::FenceTimeout {
                    packet: name,
                    seq,
                    fence: f,
                    waited_ns: deadline.elapsed_ns(&self.clock),
                });
            }
            self.pause.pause();
        }
    }

    /// Whether a timed-out packet is still unaccounted for; the next
    /// [`Hws::submit`] waits for it first.
    pub fn has_pending_packet(&self) -> bool {
        self.pending.is_some()
    }

    /// SET_RESOURCES (`pm_send_set_resources()`).
    pub fn set_resources(&mut self, r: &SchedulingResources) -> Result<(), HwsError> {
        self.submit("SET_RESOURCES", &packets::set_resources(r))?;
        self.resources = true;
        Ok(())
    }

    /// RUN_LIST naming a built runlist IB (`pm_send_runlist()`: not
    /// chained, `process_cnt` as the builder computed it).
    pub fn run_list(&mut self, rl: &Runlist) -> Result<(), HwsError> {
        if !self.resources {
            return Err(HwsError::NoResources);
        }
        let p = packets::run_list(rl.ib_address, rl.ib_dwords, false, rl.process_cnt);
        self.submit("RUN_LIST", &p)
    }

    /// UNMAP_QUEUES (`pm_send_unmap_queue()`), fenced as
    /// `unmap_queues_cpsch()` fences it.
    pub fn unmap_queues(&mut self, filter: UnmapFilter, reset: bool) -> Result<(), HwsError> {
        let p = packets::unmap_queues(filter, reset, self.sdma_ext_eng);
        self.submit("UNMAP_QUEUES", &p)
    }

    /// A QUERY_STATUS fence alone: waits until the scheduler has consumed
    /// everything before it.
    pub fn fence(&mut self) -> Result<(), HwsError> {
        self.submit("QUERY_STATUS", &[])
    }

    /// The last sequence number sent.
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use core::cell::Cell;
    use core::ptr::NonNull;
    use std::boxed::Box;
    use std::vec::Vec;

    struct Ticking(Cell<u64>);
    impl Clock for Ticking {
        fn now_ns(&self) -> u64 {
            self.0.set(self.0.get() + 1_000);
            self.0.get()
        }
    }

    fn ring() -> (&'static HiqMemory<64>, Doorbell, &'static AtomicU64) {
        let mem: &'static HiqMemory<64> = Box::leak(Box::new(HiqMemory::new()));
        let slot: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
        // SAFETY: `slot` is leaked, 8-aligned, and only accessed atomically.
        let db = unsafe { Doorbell::from_ptr(NonNull::from(slot).cast()) };
        (mem, db.ok().unwrap_or_else(|| unreachable!()), slot)
    }

    /// A scheduler stand-in that writes every QUERY_STATUS fence it finds
    /// up to the doorbell (reading dwords 3..6 as `pm4_mes_query_status`
    /// places address and data) and records the opcodes it saw.
    #[test]
    fn every_packet_is_fenced_and_a_silent_scheduler_times_out() {
        let (mem, doorbell, slot) = ring();
        // SAFETY: `mem` is leaked; this test is the only device.
        let memory = unsafe { Dev::assume(mem) };
        let seen: &'static std::sync::Mutex<Vec<u32>> = Box::leak(Box::default());
        let answer: &'static core::sync::atomic::AtomicBool =
            Box::leak(Box::new(core::sync::atomic::AtomicBool::new(true)));
        let rptr = Cell::new(0u64);
        let pause = move || {
            let w = slot.load(Ordering::Acquire);
            while answer.load(Ordering::Relaxed) && rptr.get() < w {
                let at = |i: u64| {
                    // SAFETY: in-bounds read of the leaked ring.
                    unsafe {
                        mem.ring
                            .get()
                            .cast::<u32>()
                            .add((i % 64) as usize)
                            .read_volatile()
                    }
                };
                let h = at(rptr.get());
                let len = u64::from((h >> 16) & 0x3FFF) + 2;
                let op = (h >> 8) & 0xFF;
                if let Ok(mut s) = seen.lock() {
                    s.push(op);
                }
                if op == 0xA4 {
                    let addr = u64::from(at(rptr.get() + 3)) | u64::from(at(rptr.get() + 4)) << 32;
                    let data = u64::from(at(rptr.get() + 5)) | u64::from(at(rptr.get() + 6)) << 32;
                    assert_eq!(addr, mem.fence_address());
                    mem.fence.store(data, Ordering::Release);
                }
                rptr.set(rptr.get() + len);
            }
        };
        let mut hws = Hws::new(HiqRing { memory, doorbell }, Ticking(Cell::new(0)), pause)
            .unwrap_or_else(|_| unreachable!());
        hws.timeout_ns = 100_000;
        assert_eq!(
            Hws::new(HiqRing { memory, doorbell }, Ticking(Cell::new(0)), || {}).err(),
            Some(HwsError::RingInUse {
                ring: mem.ring_address(),
                table_full: false,
            })
        );
        let rl = Runlist {
            ib_address: 0x1000,
            ib_dwords: 28,
            process_cnt: 1,
            over_subscribed: false,
            processes: 1,
            queues: 1,
        };
        assert_eq!(hws.run_list(&rl), Err(HwsError::NoResources));
        hws.set_resources(&SchedulingResources::kfd(0xFFF8, 0xFFFF_FFFE))
            .unwrap_or_else(|e| unreachable!("{e}"));
        hws.run_list(&rl).unwrap_or_else(|e| unreachable!("{e}"));
        hws.unmap_queues(UnmapFilter::All, false)
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(
            seen.lock().map(|s| s.clone()).unwrap_or_default(),
            [0xA0, 0xA4, 0xA5, 0xA4, 0xA3, 0xA4]
        );
        assert_eq!(mem.fence(), 3);
        assert_eq!(
            hws.submit("BIG", &[0; 60]),
            Err(HwsError::PacketTooLarge {
                dwords: 60,
                ring_dwords: 64
            })
        );
        answer.store(false, Ordering::Relaxed);
        match hws.fence() {
            Err(HwsError::FenceTimeout {
                packet: "QUERY_STATUS",
                seq: 4,
                fence: 3,
                waited_ns,
            }) => assert!(waited_ns >= 100_000),
            other => unreachable!("{other:?}"),
        }
        // The scheduler still has not read that packet: the next submit
        // writes nothing over it and names the old packet again.
        assert!(hws.has_pending_packet());
        let wptr = mem.wptr.load(Ordering::Relaxed);
        assert!(matches!(
            hws.unmap_queues(UnmapFilter::All, false),
            Err(HwsError::FenceTimeout {
                packet: "QUERY_STATUS",
                seq: 4,
                ..
            })
        ));
        assert_eq!(mem.wptr.load(Ordering::Relaxed), wptr, "written over");
        // Once it catches up, the ring is usable again.
        answer.store(true, Ordering::Relaxed);
        hws.unmap_queues(UnmapFilter::All, false)
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert!(!hws.has_pending_packet());
        assert_eq!(mem.fence(), 5);
    }
}
