//! The command processor's AQL front end.
//!
//! What it enforces, and where the rule comes from:
//! - It consumes packets only up to the id the doorbell announced, and
//!   stalls on a slot whose header is still INVALID, as the HSA packet
//!   processor model requires (HSA Platform System Architecture spec,
//!   "packet processor"; ROCR relies on it by publishing the header last).
//! - It reads the header with acquire ordering and the body only after.
//! - Barrier bit: the packet does not launch until every earlier packet of
//!   its queue has completed. Barrier-AND waits for all non-null
//!   dependencies to reach 0, barrier-OR for any one.
//! - After consuming a slot it writes INVALID into the header and then
//!   advances `read_dispatch_id` with release ordering, which is what lets
//!   the producer reuse the slot.
//! - Completion: end timestamp (if the queue's profiling bit is set), then
//!   an atomic release decrement of the completion signal, then the event
//!   mailbox.
//! - Reserved header bits or the reserved fence scope are malformed; agent
//!   dispatch packets are not executed by GPU CPs. Either halts the queue
//!   with a recorded error, as a queue error does on hardware.
//!
//! Kernels: a dispatch runs the kernel's machine code on the model's
//! shader engines ([`crate::wave`]: kernel descriptor, SGPR/VGPR set-up,
//! LDS, scratch check, waves through `barebell_isa`) when it launches,
//! right after consuming the slot (the packet is still there for a kernel
//! that reads it through the dispatch pointer: a producer can only reuse
//! the slot after a whole ring of later packets). A wave that stops is recorded as
//! [`CpError::Kernel`]; the queue halts and the completion signal is not
//! decremented. **Model convention**: a host function registered for a
//! `kernel_object` address ([`CpModel::register_kernel`]) runs instead of
//! machine code; tests and `barebell latency --kernel-ns` use it for
//! synthetic kernels. Nothing about it models the GPU.

use crate::Rng;
use crate::dma::{Dma, DmaFault};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use barebell::aql::packet::{
    AMD_AQL_FORMAT_PM4_IB, AMD_PACKET_TYPE_BARRIER_VALUE, FenceScope, INVALID_HEADER, PacketHeader,
    PacketType,
};
use barebell::aql::queue::{AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT, AmdQueue};
use barebell::aql::signal::{AmdSignal, Condition};
use core::mem::offset_of;
use core::sync::atomic::Ordering;
use rand::Rng as _;

/// Where a queue lives, as the MQD tells the CP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HqdBinding {
    pub ring_base: u64,
    /// Ring size in 64-byte packets (power of two).
    pub slots: u64,
    /// `amd_queue_t` address; the CP derives the read/write index and
    /// properties addresses from it.
    pub descriptor: u64,
    /// The 8-byte doorbell slot.
    pub doorbell: u64,
    /// Also poll `write_dispatch_id` (as `CP_HQD_PQ_WPTR_POLL_ADDR` lets a
    /// CP do). The model watches doorbell *memory*, so it can miss a value
    /// that a second producer overwrote with a lower one before the model
    /// looked; real doorbell hardware sees every write. Multi-producer
    /// tests turn this on so a lost observation cannot strand a packet.
    pub poll_write_index: bool,
}

/// What a registered host kernel is told about its launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchInfo {
    pub queue: usize,
    pub packet_id: u64,
    pub dimensions: u8,
    pub grid: [u32; 3],
    pub workgroup: [u16; 3],
    pub kernarg_address: u64,
}

/// A host function standing in for a kernel (see the module docs).
pub type HostKernel = Box<dyn FnMut(&DispatchInfo) + Send>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpError {
    MalformedHeader {
        queue: usize,
        id: u64,
        header: u16,
    },
    UnsupportedPacket {
        queue: usize,
        id: u64,
        header: u16,
        detail: &'static str,
    },
    BadDispatch {
        queue: usize,
        id: u64,
        what: &'static str,
    },
    /// The dispatch's kernel stopped (see [`crate::wave`]).
    Kernel {
        queue: usize,
        id: u64,
        fault: crate::wave::KernelFault,
    },
    Dma {
        queue: usize,
        fault: DmaFault,
    },
}

impl core::fmt::Display for CpError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            CpError::MalformedHeader { queue, id, header } => write!(
                f,
                "queue {queue}, packet {id}: malformed AQL header {header:#06x}"
            ),
            CpError::UnsupportedPacket {
                queue,
                id,
                header,
                detail,
            } => write!(
                f,
                "queue {queue}, packet {id}: header {header:#06x} is not supported by the model: {detail}"
            ),
            CpError::BadDispatch { queue, id, what } => {
                write!(f, "queue {queue}, packet {id}: bad dispatch: {what}")
            }
            CpError::Kernel { queue, id, fault } => {
                write!(f, "queue {queue}, packet {id}: kernel: {fault}")
            }
            CpError::Dma { queue, fault } => write!(f, "queue {queue}: {fault}"),
        }
    }
}

/// Switches that make the CP misbehave, for testing the runtime's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpFaults {
    /// The CP stops doing anything (a hung pipe).
    pub stop_consuming: bool,
    /// The next consumed packet reports a read index far ahead of reality.
    pub corrupt_read_index: bool,
}

#[derive(Debug, Clone, Copy)]
enum Work {
    Dispatch {
        kernel_object: u64,
        info: DispatchInfo,
        /// The packet for the shader engines (none: a host function).
        isa: Option<barebell_isa::launch::Dispatch>,
    },
    Barrier,
}

#[derive(Debug, Clone, Copy)]
struct InFlight {
    due_ns: u64,
    start_ns: u64,
    signal: u64,
    work: Work,
}

#[derive(Debug)]
struct Queue {
    b: HqdBinding,
    /// Highest packet id announced so far (doorbell values may arrive out
    /// of order from several producers; the CP keeps the maximum).
    announced: u64,
    profiling: bool,
    in_flight: Vec<InFlight>,
    halted: bool,
    /// Taken off the CP by a dequeue/REMOVE_QUEUE: launches nothing more,
    /// in-flight work still completes (a drain).
    unmapped: bool,
    consumed: u64,
    stalls: u64,
}

/// Per-queue counters for tests and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueStats {
    pub consumed: u64,
    pub in_flight: usize,
    pub stalls: u64,
    pub halted: bool,
}

/// The CP model. Deterministic: all timing comes from the seeded RNG and
/// the model's own nanosecond counter.
pub struct CpModel {
    dma: Dma,
    rng: Rng,
    now_ns: u64,
    queues: Vec<Queue>,
    kernels: BTreeMap<u64, HostKernel>,
    /// The shader engines that run dispatched kernels.
    pub shader: crate::wave::Shader,
    errors: Vec<CpError>,
    pub faults: CpFaults,
    /// Launch-to-completion time of a dispatch, drawn per packet.
    pub dispatch_ns: core::ops::RangeInclusive<u64>,
    /// If set, the model's time (and so CP timestamps) comes from here
    /// instead of its seeded counter: used when the model runs on a thread
    /// next to a latency measurement, so timestamps are host nanoseconds.
    time_source: Option<fn() -> u64>,
}

impl core::fmt::Debug for CpModel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CpModel")
            .field("now_ns", &self.now_ns)
            .field("queues", &self.queues)
            .field("errors", &self.errors)
            .field("faults", &self.faults)
            .finish_non_exhaustive()
    }
}

/// Outcome of one [`CpModel::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub launched: u32,
    pub completed: u32,
}

impl Step {
    pub fn progressed(&self) -> bool {
        self.launched + self.completed > 0
    }
}

const HDR: &str = "packet header";

impl CpModel {
    pub fn new(seed: crate::Seed) -> Self {
        CpModel {
            dma: Dma::default(),
            rng: seed.rng(),
            now_ns: 0,
            queues: Vec::new(),
            kernels: BTreeMap::new(),
            shader: crate::wave::Shader::new(seed.0),
            errors: Vec::new(),
            faults: CpFaults::default(),
            dispatch_ns: 200..=5_000,
            time_source: None,
        }
    }

    /// Takes time from `f` (nanoseconds) instead of simulating it. The
    /// run stops being deterministic; use it only with the thread driver.
    pub fn use_time_source(&mut self, f: fn() -> u64) {
        self.time_source = Some(f);
    }

    pub fn dma_mut(&mut self) -> &mut Dma {
        &mut self.dma
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Registers a host function to run instead of machine code for
    /// `kernel_object` (a model convention for synthetic kernels).
    pub fn register_kernel(&mut self, kernel_object: u64, f: HostKernel) {
        self.kernels.insert(kernel_object, f);
    }

    /// Maps a queue (what MES ADD_QUEUE or an HQD load ends with). The
    /// doorbell slot is device memory: it is reset to "nothing announced"
    /// (`read index - 1`), as the doorbell page holds no stale value for a
    /// freshly mapped queue.
    pub fn bind(&mut self, b: HqdBinding) -> Result<usize, CpError> {
        let q = self.queues.len();
        let dma_err = |fault| CpError::Dma { queue: q, fault };
        if !b.slots.is_power_of_two() || !b.ring_base.is_multiple_of(256) {
            return Err(CpError::BadDispatch {
                queue: q,
                id: 0,
                what: "ring size not a power of two or base not 256-byte aligned",
            });
        }
        let read = self
            .dma
            .u64(
                b.descriptor + offset_of!(AmdQueue, read_dispatch_id) as u64,
                "read_dispatch_id",
            )
            .map_err(dma_err)?
            .load(Ordering::Acquire);
        let props = self
            .dma
            .u32(
                b.descriptor + offset_of!(AmdQueue, queue_properties) as u64,
                "queue_properties",
            )
            .map_err(dma_err)?
            .load(Ordering::Relaxed);
        self.dma
            .u64(b.doorbell, "doorbell")
            .map_err(dma_err)?
            .store(read.wrapping_sub(1), Ordering::Release);
        self.queues.push(Queue {
            b,
            announced: read.wrapping_sub(1),
            profiling: props >> AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT & 1 == 1,
            in_flight: Vec::new(),
            halted: false,
            unmapped: false,
            consumed: 0,
            stalls: 0,
        });
        Ok(q)
    }

    /// Takes queue `q` off the CP (what a dequeue or MES REMOVE_QUEUE ends
    /// with): nothing more launches from it; work in flight completes.
    /// Returns false if `q` is unknown or already unmapped.
    pub fn unbind(&mut self, q: usize) -> bool {
        match self.queues.get_mut(q) {
            Some(queue) if !queue.unmapped => {
                queue.unmapped = true;
                true
            }
            _ => false,
        }
    }

    pub fn errors(&self) -> &[CpError] {
        &self.errors
    }

    pub fn stats(&self, queue: usize) -> Option<QueueStats> {
        self.queues.get(queue).map(|q| QueueStats {
            consumed: q.consumed,
            in_flight: q.in_flight.len(),
            stalls: q.stalls,
            halted: q.halted,
        })
    }

    /// One deterministic step: time advances, due work completes, and each
    /// queue (in a seeded rotation) gets a chance to launch one packet.
    pub fn step(&mut self) -> Step {
        let mut s = Step {
            launched: 0,
            completed: 0,
        };
        if self.faults.stop_consuming {
            return s;
        }
        match self.time_source {
            Some(f) => self.now_ns = f(),
            None => self.now_ns += self.rng.random_range(10..=100),
        }
        for q in 0..self.queues.len() {
            s.completed += self.retire(q);
        }
        let n = self.queues.len();
        if n > 0 {
            let first = self.rng.random_range(0..n);
            for k in 0..n {
                let q = (first + k) % n;
                if self.process(q) {
                    s.launched += 1;
                }
            }
        }
        s
    }

    /// Steps until nothing is announced, in flight or launchable, or
    /// `max_steps` pass. Returns the steps taken, or `None` on the bound.
    pub fn run_until_idle(&mut self, max_steps: u64) -> Option<u64> {
        let mut idle_for = 0;
        for i in 0..max_steps {
            let s = self.step();
            let busy = self.queues.iter().any(|q| !q.in_flight.is_empty());
            if s.progressed() || busy {
                idle_for = 0;
            } else {
                idle_for += 1;
                if idle_for >= 2 {
                    return Some(i + 1);
                }
            }
        }
        None
    }

    fn fail(&mut self, q: usize, e: CpError) {
        self.errors.push(e);
        if let Some(queue) = self.queues.get_mut(q) {
            queue.halted = true;
        }
    }

    fn retire(&mut self, q: usize) -> u32 {
        let now = self.now_ns;
        let Some(queue) = self.queues.get_mut(q) else {
            return 0;
        };
        let mut due: Vec<InFlight> = Vec::new();
        queue.in_flight.retain(|f| {
            if f.due_ns <= now {
                due.push(*f);
                false
            } else {
                true
            }
        });
        due.sort_by_key(|f| f.due_ns);
        let profiling = queue.profiling;
        let mut n = 0;
        for f in due {
            if let Work::Dispatch {
                kernel_object,
                info,
                isa: None,
            } = f.work
                && let Some(k) = self.kernels.get_mut(&kernel_object)
            {
                k(&info);
            }
            if let Err(fault) = self.complete_signal(f.signal, profiling, f.start_ns, now) {
                self.fail(q, CpError::Dma { queue: q, fault });
            }
            n += 1;
        }
        n
    }

    fn complete_signal(
        &self,
        handle: u64,
        profiling: bool,
        start: u64,
        end: u64,
    ) -> Result<(), DmaFault> {
        if handle == 0 {
            return Ok(());
        }
        if profiling {
            self.dma
                .u64(
                    handle + offset_of!(AmdSignal, start_ts) as u64,
                    "signal start_ts",
                )?
                .store(start, Ordering::Relaxed);
            self.dma
                .u64(
                    handle + offset_of!(AmdSignal, end_ts) as u64,
                    "signal end_ts",
                )?
                .store(end, Ordering::Relaxed);
        }
        self.dma
            .i64(handle + offset_of!(AmdSignal, value) as u64, "signal value")?
            .fetch_sub(1, Ordering::Release);
        let mailbox = self
            .dma
            .u64(
                handle + offset_of!(AmdSignal, event_mailbox_ptr) as u64,
                "signal mailbox",
            )?
            .load(Ordering::Relaxed);
        if mailbox != 0 {
            let id = self
                .dma
                .u32(
                    handle + offset_of!(AmdSignal, event_id) as u64,
                    "signal event_id",
                )?
                .load(Ordering::Relaxed);
            self.dma
                .u64(mailbox, "event mailbox")?
                .store(u64::from(id), Ordering::Release);
        }
        Ok(())
    }

    fn signal_value(&self, handle: u64) -> Result<i64, DmaFault> {
        Ok(self
            .dma
            .i64(
                handle + offset_of!(AmdSignal, value) as u64,
                "dependency signal",
            )?
            .load(Ordering::Acquire))
    }

    /// Tries to launch the packet at the queue's read index.
    fn process(&mut self, q: usize) -> bool {
        match self.try_process(q) {
            Ok(launched) => launched,
            Err(e) => {
                self.fail(q, e);
                false
            }
        }
    }

    fn try_process(&mut self, q: usize) -> Result<bool, CpError> {
        let Some(queue) = self.queues.get(q) else {
            return Ok(false);
        };
        if queue.halted || queue.unmapped {
            return Ok(false);
        }
        let b = queue.b;
        let dma_err = |fault| CpError::Dma { queue: q, fault };
        let rptr_addr = b.descriptor + offset_of!(AmdQueue, read_dispatch_id) as u64;
        let read = self
            .dma
            .u64(rptr_addr, "read_dispatch_id")
            .map_err(dma_err)?
            .load(Ordering::Relaxed);
        // `a` is later than `b` in wrapping u64 order.
        let later = |a: u64, b: u64| a != b && a.wrapping_sub(b) < 1 << 63;
        let mut announced = queue.announced;
        let rung = self
            .dma
            .u64(b.doorbell, "doorbell")
            .map_err(dma_err)?
            .load(Ordering::Acquire);
        if later(rung, announced) {
            announced = rung;
        }
        if b.poll_write_index {
            let wptr_addr = b.descriptor + offset_of!(AmdQueue, write_dispatch_id) as u64;
            let w = self
                .dma
                .u64(wptr_addr, "write_dispatch_id")
                .map_err(dma_err)?
                .load(Ordering::Acquire);
            if later(w.wrapping_sub(1), announced) {
                announced = w.wrapping_sub(1);
            }
        }
        self.queues[q].announced = announced;
        if later(read, announced) {
            return Ok(false);
        }
        let slot = b.ring_base + (read & (b.slots - 1)) * 64;
        let word = self
            .dma
            .u32(slot, HDR)
            .map_err(dma_err)?
            .load(Ordering::Acquire);
        let header = PacketHeader::from_bits(word as u16);
        let raw = word as u16;
        if raw & 0xff == PacketType::Invalid as u16 {
            self.queues[q].stalls += 1;
            return Ok(false);
        }
        if header.reserved() != 0
            || header.acquire() == FenceScope::Reserved
            || header.release() == FenceScope::Reserved
        {
            return Err(CpError::MalformedHeader {
                queue: q,
                id: read,
                header: raw,
            });
        }
        let mut body = [0u8; 64];
        self.dma
            .read(slot, &mut body, "packet body")
            .map_err(dma_err)?;
        let u16_at = |o: usize| u16::from_le_bytes([body[o], body[o + 1]]);
        let u32_at =
            |o: usize| u32::from_le_bytes([body[o], body[o + 1], body[o + 2], body[o + 3]]);
        let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
        let signal = u64_at(56);
        let barrier_blocked = header.barrier() && !self.queues[q].in_flight.is_empty();
        let work = match header.packet_type() {
            PacketType::KernelDispatch => {
                if barrier_blocked {
                    return Ok(false);
                }
                let dims = (u16_at(2) & 3) as u8;
                let info = DispatchInfo {
                    queue: q,
                    packet_id: read,
                    dimensions: dims,
                    workgroup: [u16_at(4), u16_at(6), u16_at(8)],
                    grid: [u32_at(12), u32_at(16), u32_at(20)],
                    kernarg_address: u64_at(40),
                };
                if !(1..=3).contains(&dims) {
                    return Err(CpError::BadDispatch {
                        queue: q,
                        id: read,
                        what: "setup dimensions not 1..=3",
                    });
                }
                if info.grid.contains(&0) || info.workgroup.contains(&0) {
                    return Err(CpError::BadDispatch {
                        queue: q,
                        id: read,
                        what: "zero grid or workgroup size",
                    });
                }
                let kernel_object = u64_at(32);
                // Machine code unless a host function stands in for it.
                let isa = (!self.kernels.contains_key(&kernel_object))
                    .then(|| crate::wave::decode_packet(&body, slot, b.descriptor, read));
                Work::Dispatch {
                    kernel_object,
                    info,
                    isa,
                }
            }
            t @ (PacketType::BarrierAnd | PacketType::BarrierOr) => {
                if barrier_blocked {
                    return Ok(false);
                }
                let mut any_met = false;
                let mut all_met = true;
                let mut any_dep = false;
                for i in 0..5 {
                    let h = u64_at(8 + 8 * i);
                    if h == 0 {
                        continue;
                    }
                    any_dep = true;
                    let met = self.signal_value(h).map_err(dma_err)? == 0;
                    any_met |= met;
                    all_met &= met;
                }
                // With no dependencies both kinds are satisfied at once
                // (unconfirmed for barrier-OR: the HSA spec is read here as
                // "no dependency left to wait for").
                let ready = match t {
                    PacketType::BarrierAnd => all_met,
                    _ => any_met || !any_dep,
                };
                if !ready {
                    self.queues[q].stalls += 1;
                    return Ok(false);
                }
                Work::Barrier
            }
            PacketType::VendorSpecific => {
                if barrier_blocked {
                    return Ok(false);
                }
                let format = u16_at(2);
                if format & 0xff == u16::from(AMD_PACKET_TYPE_BARRIER_VALUE) {
                    let sig = u64_at(8);
                    let value = u64_at(16) as i64;
                    let mask = u64_at(24) as i64;
                    let Some(cond) = Condition::from_u32(u32_at(32)) else {
                        return Err(CpError::UnsupportedPacket {
                            queue: q,
                            id: read,
                            header: raw,
                            detail: "barrier-value condition > 3",
                        });
                    };
                    let v = self.signal_value(sig).map_err(dma_err)?;
                    if !cond.holds(v & mask, value) {
                        self.queues[q].stalls += 1;
                        return Ok(false);
                    }
                    Work::Barrier
                } else if format == AMD_AQL_FORMAT_PM4_IB {
                    // The model has no PM4 engine; refusing is more honest
                    // than pretending the indirect buffer ran.
                    return Err(CpError::UnsupportedPacket {
                        queue: q,
                        id: read,
                        header: raw,
                        detail: "PM4 indirect buffers are not modelled",
                    });
                } else {
                    return Err(CpError::UnsupportedPacket {
                        queue: q,
                        id: read,
                        header: raw,
                        detail: "unknown AMD vendor format",
                    });
                }
            }
            PacketType::AgentDispatch => {
                return Err(CpError::UnsupportedPacket {
                    queue: q,
                    id: read,
                    header: raw,
                    detail: "agent dispatch on a GPU queue",
                });
            }
            PacketType::Invalid => {
                return Err(CpError::MalformedHeader {
                    queue: q,
                    id: read,
                    header: raw,
                });
            }
        };
        // Launch: the slot is consumed.
        let start = self.now_ns;
        let due = match work {
            Work::Dispatch { .. } => start + self.rng.random_range(self.dispatch_ns.clone()),
            Work::Barrier => start,
        };
        self.dma
            .u16(slot, HDR)
            .map_err(dma_err)?
            .store(INVALID_HEADER, Ordering::Relaxed);
        let next = if self.faults.corrupt_read_index {
            self.faults.corrupt_read_index = false;
            read.wrapping_add(1)
                .wrapping_add(self.rng.random_range(b.slots * 4..1 << 40))
        } else {
            read.wrapping_add(1)
        };
        self.dma
            .u64(rptr_addr, "read_dispatch_id")
            .map_err(dma_err)?
            .store(next, Ordering::Release);
        self.queues[q].consumed += 1;
        // The waves run once the packet is consumed; the kernel still
        // finds it in its slot through the dispatch pointer. A wave that
        // stops halts the queue before the completion signal is queued.
        if let Work::Dispatch { isa: Some(d), .. } = &work {
            self.shader
                .dispatch(&self.dma, d)
                .map_err(|fault| CpError::Kernel {
                    queue: q,
                    id: read,
                    fault,
                })?;
        }
        let queue = &mut self.queues[q];
        queue.in_flight.push(InFlight {
            due_ns: due,
            start_ns: start,
            signal,
            work,
        });
        Ok(true)
    }
}
