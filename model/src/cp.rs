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
//! - Wake-up: a queue the MEC maps learns of new packets only from
//!   doorbell stores the MEC routes to it ([`CpModel::ring`]), or from
//!   its write pointer when polling is on: once per
//!   `CP_PQ_WPTR_POLL_CNTL1` request ("trigger a one-shot polling read
//!   from memory in the CP", `hqd_load_v11()`), continuously while
//!   `CP_PQ_WPTR_POLL_CNTL.EN` is set (the MQD comment "only used if
//!   CP_PQ_WPTR_POLL_CNTL.CP_PQ_WPTR_POLL_CNTL__EN_MASK=1",
//!   `gfx_v11_0_compute_mqd_init()`; Linux turns it off,
//!   `gfx_v11_0_kiq_init_register()`). A standalone rig queue
//!   ([`HqdBinding`]) reads its doorbell word itself.
//! - Addresses: a MEC-mapped queue's ring, `amd_queue_t`, packets and
//!   signals are device addresses in its VMID, translated through the
//!   hub ([`Translate`]) and cached per queue until an invalidation; a
//!   translation that fails halts the queue with [`CpError::Vm`] (the
//!   hub latches the fault).
//! - A queue on a MEC pipe launches nothing while that pipe is not
//!   running ([`CpModel::set_running_pipes`]).
//!
//! Everything the CP reads it decodes with [`crate::hsa`], its own
//! reading of ROCR's headers.
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
use crate::gmc::{Access, AddressSpace, VmRefusal};
use crate::hsa::{condition, header, packet, queue as amdq, signal as amds};
use crate::log::Keep;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;
use rand::Rng as _;

mod aql_ib;
mod pm4;
mod pm4_compute;
pub use pm4::{Pm4Binding, Pm4Error, Pm4Stats};
pub use pm4_compute::Pm4Registers;
pub(crate) use pm4_compute::compare;

/// Where a standalone queue lives (a rig with no MEC in front of the CP:
/// the CP is told the addresses directly, reads them as host addresses
/// and watches its doorbell word itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HqdBinding {
    pub ring_base: u64,
    /// Ring size in 64-byte packets (power of two).
    pub slots: u64,
    /// `amd_queue_t` address; the CP derives the read/write index and
    /// properties addresses from it.
    pub descriptor: u64,
    /// The 8-byte doorbell slot the CP reads (a rig convention: a MEC
    /// model is woken by doorbell stores routed to it instead).
    pub doorbell: u64,
    /// Also poll `write_dispatch_id` (as `CP_HQD_PQ_WPTR_POLL_ADDR` lets a
    /// CP do). The model watches doorbell *memory*, so it can miss a value
    /// that a second producer overwrote with a lower one before the model
    /// looked; real doorbell hardware sees every write. Multi-producer
    /// tests turn this on so a lost observation cannot strand a packet.
    pub poll_write_index: bool,
}

/// How the CP model turns a queue's device address into a host address:
/// the hub's context registers and page walk, then the IOMMU or the VRAM
/// backing. Set by whoever composes the CP with a hub (the `VirtualGpu`).
pub trait Translate: Send {
    fn translate(&self, space: AddressSpace, va: u64, access: Access) -> Result<u64, VmRefusal>;
    /// Changes whenever a TLB invalidation completes on the hub: cached
    /// translations older than it are dropped.
    fn generation(&self) -> u64;
}

/// Translations cached per queue, as a UTCL1/L2 TLB holds them.
#[derive(Debug, Clone, Copy, Default)]
struct Tlb {
    entries: [(u64, u64); 8],
    used: usize,
    next: usize,
}

impl Tlb {
    fn get(&self, page: u64) -> Option<u64> {
        self.entries
            .iter()
            .take(self.used)
            .find(|(p, _)| *p == page)
            .map(|(_, h)| *h)
    }
    fn put(&mut self, page: u64, host: u64) {
        if let Some(e) = self.entries.get_mut(self.next) {
            *e = (page, host);
        }
        self.next = (self.next + 1) % self.entries.len();
        self.used = (self.used + 1).min(self.entries.len());
    }
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
    /// A PM4 queue stopped at the packet at dword `rptr` of its ring
    /// ([`pm4`]).
    Pm4 {
        queue: usize,
        rptr: u64,
        why: Pm4Error,
    },
    /// A device address of the queue did not translate in its VMID.
    Vm {
        queue: usize,
        space: AddressSpace,
        va: u64,
        what: &'static str,
        why: VmRefusal,
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
            CpError::Pm4 { queue, rptr, why } => {
                write!(f, "PM4 queue {queue}, ring dword {rptr:#x}: {why}")
            }
            CpError::Vm {
                queue,
                space,
                va,
                what,
                why,
            } => write!(
                f,
                "queue {queue}: {what} at {va:#x} does not translate in {space:?}: {why:?}"
            ),
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
    /// The host function standing in for the kernel, run at completion,
    /// with what it is told; machine code already ran at launch, so
    /// nothing of the wave packet is kept (the entry stays small: it is
    /// moved on every completion).
    host: Option<(u64, DispatchInfo)>,
}

/// How a queue learns of new packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// A rig without a MEC: the CP reads this doorbell word itself.
    Memory {
        doorbell: u64,
        poll_write_index: bool,
    },
    /// Doorbell stores routed by the MEC ([`CpModel::ring`]) and the
    /// write-pointer polls the registers ask for.
    Routed,
}

#[derive(Debug)]
struct Queue {
    ring_base: u64,
    slots: u64,
    descriptor: u64,
    wake: Wake,
    space: AddressSpace,
    /// The MEC pipe it sits on; `None` for a standalone rig queue.
    pipe: Option<u8>,
    /// Highest packet id announced so far (doorbell values may arrive out
    /// of order from several producers; the CP keeps the maximum).
    announced: u64,
    /// A one-shot write-pointer poll is pending.
    poll_once: bool,
    profiling: bool,
    in_flight: Vec<InFlight>,
    halted: bool,
    /// Taken off the CP by a dequeue/REMOVE_QUEUE: launches nothing more,
    /// in-flight work still completes (a drain).
    unmapped: bool,
    /// Injected hang ([`CpModel::hang`]): nothing more launches and
    /// nothing in flight completes, until the queue's waves are killed.
    stuck: bool,
    consumed: u64,
    stalls: u64,
    tlb: Tlb,
    /// A PM4 queue's read pointer and counters; `None` for AQL queues.
    pm4: Option<pm4::Pm4State>,
    /// An AQL vendor packet's PM4 IB stopped at a wait: the packet id
    /// and the IB dword it goes on from ([`aql_ib`]).
    ib_progress: Option<(u64, u64)>,
    /// Where its waves' flat addresses reach LDS and scratch (the
    /// interpreter's default for a rig queue).
    apertures: barebell_isa::exec::Apertures,
    /// The dispatch waiting for the runtime to give the queue scratch
    /// (the code stored in `queue_inactive_signal`), by packet id.
    scratch_wait: Option<u64>,
    /// Scratch requests raised so far.
    scratch_requests: u64,
}

/// Per-queue counters for tests and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueStats {
    pub consumed: u64,
    pub in_flight: usize,
    pub stalls: u64,
    pub halted: bool,
    /// Highest packet id the queue has been told of.
    pub announced: u64,
    /// Times the queue asked its runtime for scratch, and the packet
    /// waiting for it now.
    pub scratch_requests: u64,
    pub scratch_wait: Option<u64>,
}

/// A MEC-mapped queue, as the MEC hands it to the CP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MecBinding {
    pub ring_base: u64,
    pub slots: u64,
    pub descriptor: u64,
    pub space: AddressSpace,
    pub pipe: u8,
    /// The queue's VMID's `SH_MEM_BASES` as the MEC holds it: where its
    /// waves' flat addresses reach LDS and scratch.
    pub sh_mem_bases: u32,
}

/// How the CP reads one ring slot: the consumer half of the AQL publish
/// protocol. The header word is loaded with acquire ordering, and only
/// if its type is not INVALID is the body read: a producer that stores
/// the header with release ordering after the body is therefore seen
/// whole, and one that does not is seen torn (`model/tests/publish.rs`
/// runs this function under every interleaving of both producers'
/// stores with its two loads).
pub trait RingRead {
    /// The first dword of the slot at device address `slot`, acquire.
    fn header_acquire(&self, slot: u64) -> Result<u32, CpError>;
    /// Bytes 4..64 of the slot.
    fn body(&self, slot: u64, out: &mut [u8; 60]) -> Result<(), CpError>;
}

/// The packet in `slot` if its header is valid: bytes 0..4 are the word
/// the acquire load saw, 4..64 the body read after it.
pub fn fetch_packet<R: RingRead + ?Sized>(r: &R, slot: u64) -> Result<Option<[u8; 64]>, CpError> {
    let word = r.header_acquire(slot)?;
    if header::packet_type(word as u16) == header::INVALID {
        return Ok(None);
    }
    let mut body = [0u8; 60];
    r.body(slot, &mut body)?;
    let mut p = [0u8; 64];
    p[..4].copy_from_slice(&word.to_le_bytes());
    p[4..].copy_from_slice(&body);
    Ok(Some(p))
}

/// What a dispatch's waves reach memory through: the queue's address
/// space, as the queue's own reads are translated ([`CpModel`]'s `host`):
/// the hub's walk for the queue's VMID (with the access kind, so a fetch
/// needs an EXECUTABLE PTE and a store a WRITEABLE one), then the CP's
/// windows over host memory. A rig queue (identity space, or a MEC
/// without a hub) reads its DMA windows directly. Translations are kept
/// per page and access for the dispatch (the UTCL1's part; the dispatch
/// runs inside one CP step, so no invalidation can land meanwhile).
struct QueueView<'a> {
    dma: &'a Dma,
    translator: Option<&'a dyn Translate>,
    space: AddressSpace,
    tlb: core::cell::RefCell<ViewTlb>,
}

/// `(page, access, host page)` entries and the next one to replace.
type ViewTlb = ([(u64, Access, u64); 16], usize);

impl<'a> QueueView<'a> {
    fn new(dma: &'a Dma, translator: Option<&'a dyn Translate>, space: AddressSpace) -> Self {
        QueueView {
            dma,
            translator,
            space,
            tlb: core::cell::RefCell::new(([(u64::MAX, Access::Read, 0); 16], 0)),
        }
    }
}

// SAFETY: every `Ok` answer is an address `Dma::host_of` returned for the
// whole range, inside a window whose mapper promised `DeviceView`'s terms
// (`Dma::map`/`map_at`'s contract).
unsafe impl crate::wave::DeviceView for QueueView<'_> {
    fn host_of(&self, addr: u64, len: u64, access: Access) -> Result<u64, crate::wave::Miss> {
        use crate::wave::Miss;
        let t = match (self.space, self.translator) {
            (AddressSpace::Identity, _) | (_, None) => {
                return self.dma.host_of(addr, len).ok_or(Miss::Unmapped);
            }
            (_, Some(t)) => t,
        };
        let off = addr & 0xFFF;
        if off + len.max(1) > 0x1000 {
            // The caller splits at pages.
            return Err(Miss::Unmapped);
        }
        let page = addr & !0xFFF;
        let cached = self.tlb.try_borrow().ok().and_then(|c| {
            c.0.iter()
                .find(|e| e.0 == page && e.1 == access)
                .map(|e| e.2)
        });
        let host = match cached {
            Some(h) => h,
            None => {
                let space = self.space;
                let h = t
                    .translate(space, page, access)
                    .map_err(|why| Miss::Vm { space, why })?;
                if let Ok(mut c) = self.tlb.try_borrow_mut() {
                    let i = c.1;
                    if let Some(e) = c.0.get_mut(i) {
                        *e = (page, access, h);
                    }
                    c.1 = (i + 1) % 16;
                }
                h
            }
        };
        self.dma.host_of(host + off, len).ok_or(Miss::Unmapped)
    }
}

/// The CP model. Deterministic: all timing comes from the seeded RNG and
/// the model's own nanosecond counter.
pub struct CpModel {
    dma: Dma,
    rng: Rng,
    now_ns: u64,
    queues: Vec<Queue>,
    /// Completions being retired (reused between steps).
    due: Vec<InFlight>,
    kernels: BTreeMap<u64, HostKernel>,
    /// The shader engines that run dispatched kernels.
    pub shader: crate::wave::Shader,
    errors: Vec<CpError>,
    /// SQ error interrupts not yet taken by the MEC (issue 20).
    sq_events: Vec<crate::wave::SqEvent>,
    pub faults: CpFaults,
    /// Launch-to-completion time of a dispatch, drawn per packet.
    pub dispatch_ns: core::ops::RangeInclusive<u64>,
    /// If set, the model's time (and so CP timestamps) comes from here
    /// instead of its seeded counter: used when the model runs on a thread
    /// next to a latency measurement, so timestamps are host nanoseconds.
    time_source: Option<fn() -> u64>,
    translator: Option<Box<dyn Translate>>,
    tlb_generation: u64,
    /// MEC pipes that run (bit per pipe).
    running_pipes: u8,
    /// `CP_PQ_WPTR_POLL_CNTL.EN`.
    wptr_polling: bool,
    /// Each PM4 queue's `COMPUTE_*` registers ([`pm4_compute`]).
    pm4_sh: BTreeMap<usize, [u32; pm4_compute::WINDOW]>,
    /// Where PM4 packets' registers are.
    pm4_registers: Pm4Registers,
    /// Register stores PM4 queues made (`SET_UCONFIG_REG`, `WRITE_DATA`
    /// to a register), as BAR byte offsets and values, for the device's
    /// register bus ([`CpModel::take_register_stores`]).
    register_stores: Vec<(usize, u32, u32)>,
    /// End-of-pipe interrupts `RELEASE_MEM` asked for (`INT_SEL` 1 or 2):
    /// the queue and the packet's context id (`src_data[0]` of the IV
    /// entry, `gfx_v11_0_eop_irq()`), for the device's interrupt line
    /// ([`CpModel::take_eop_interrupts`]).
    eop_interrupts: Vec<(usize, u32)>,
}

impl core::fmt::Debug for CpModel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CpModel")
            .field("now_ns", &self.now_ns)
            .field("queues", &self.queues)
            .field("errors", &self.errors)
            .field("faults", &self.faults)
            .field("running_pipes", &self.running_pipes)
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

// `a` is later than `b` in wrapping u64 order.
fn later(a: u64, b: u64) -> bool {
    a != b && a.wrapping_sub(b) < 1 << 63
}

fn u16_at(b: &[u8; 64], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8; 64], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn u64_at(b: &[u8; 64], o: usize) -> u64 {
    u64::from(u32_at(b, o)) | u64::from(u32_at(b, o + 4)) << 32
}

/// One queue's view of memory for [`fetch_packet`]: the slot's device
/// address translated in the queue's space.
struct QueueRing<'a> {
    cp: &'a CpModel,
    q: usize,
    host: u64,
}

impl RingRead for QueueRing<'_> {
    fn header_acquire(&self, _slot: u64) -> Result<u32, CpError> {
        Ok(self
            .cp
            .dma
            .u32(self.host, HDR)
            .map_err(|fault| CpError::Dma {
                queue: self.q,
                fault,
            })?
            .load(Ordering::Acquire))
    }
    fn body(&self, _slot: u64, out: &mut [u8; 60]) -> Result<(), CpError> {
        self.cp
            .dma
            .read(self.host + 4, out, "packet body")
            .map_err(|fault| CpError::Dma {
                queue: self.q,
                fault,
            })
    }
}

impl CpModel {
    pub fn new(seed: crate::Seed) -> Self {
        CpModel {
            due: Vec::new(),
            dma: Dma::default(),
            rng: seed.rng(),
            now_ns: 0,
            queues: Vec::new(),
            kernels: BTreeMap::new(),
            shader: crate::wave::Shader::new(seed.0),
            errors: Vec::new(),
            sq_events: Vec::new(),
            faults: CpFaults::default(),
            dispatch_ns: 200..=5_000,
            time_source: None,
            translator: None,
            tlb_generation: 0,
            running_pipes: 0,
            wptr_polling: false,
            pm4_sh: BTreeMap::new(),
            pm4_registers: Pm4Registers::default(),
            register_stores: Vec::new(),
            eop_interrupts: Vec::new(),
        }
    }

    /// The end-of-pipe interrupts raised since the last call, in order:
    /// the queue and the `RELEASE_MEM` context id.
    pub fn take_eop_interrupts(&mut self) -> Vec<(usize, u32)> {
        core::mem::take(&mut self.eop_interrupts)
    }

    /// The register stores PM4 queues made since the last call, in order
    /// (BAR byte offset, value).
    pub fn take_register_stores(&mut self) -> Vec<(u32, u32)> {
        self.take_queue_register_stores()
            .into_iter()
            .map(|(_, at, v)| (at, v))
            .collect()
    }

    /// As [`CpModel::take_register_stores`], with the queue that made
    /// each store (a part whose packets name queue-local registers, GC
    /// 9.4.3's XCCs, places them by queue).
    pub fn take_queue_register_stores(&mut self) -> Vec<(usize, u32, u32)> {
        core::mem::take(&mut self.register_stores)
    }

    /// Takes time from `f` (nanoseconds) instead of simulating it. The
    /// run stops being deterministic; use it only with the thread driver.
    pub fn use_time_source(&mut self, f: fn() -> u64) {
        self.time_source = Some(f);
    }

    /// Translates MEC-mapped queues' addresses through `t` from now on.
    pub fn set_translator(&mut self, t: Box<dyn Translate>) {
        self.tlb_generation = t.generation();
        self.translator = Some(t);
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

    /// MEC pipes that run, bit per pipe (the MEC model's pipe control).
    pub fn set_running_pipes(&mut self, mask: u8) {
        self.running_pipes = mask;
    }

    /// `CP_PQ_WPTR_POLL_CNTL.EN`: continuous write-pointer polling.
    pub fn set_wptr_polling(&mut self, on: bool) {
        self.wptr_polling = on;
    }

    /// Maps a standalone rig queue. The doorbell slot is reset to
    /// "nothing announced" (`read index - 1`): it is device memory, and
    /// holds no stale value for a freshly mapped queue.
    pub fn bind(&mut self, b: HqdBinding) -> Result<usize, CpError> {
        let q = self.queues.len();
        self.push(
            b.ring_base,
            b.slots,
            b.descriptor,
            Wake::Memory {
                doorbell: b.doorbell,
                poll_write_index: b.poll_write_index,
            },
            AddressSpace::Identity,
            None,
        )?;
        let announced = self.queues.get(q).map_or(0, |x| x.announced);
        self.dma
            .u64(b.doorbell, "doorbell")
            .map_err(|fault| CpError::Dma { queue: q, fault })?
            .store(announced, Ordering::Release);
        Ok(q)
    }

    /// Maps a queue the MEC loaded on one of its pipes: it is woken only
    /// through [`CpModel::ring`] and the polls the registers ask for.
    pub fn bind_mec(&mut self, b: MecBinding) -> Result<usize, CpError> {
        let q = self.push(
            b.ring_base,
            b.slots,
            b.descriptor,
            Wake::Routed,
            b.space,
            Some(b.pipe),
        )?;
        if let Some(x) = self.queues.get_mut(q) {
            x.apertures = barebell_isa::exec::Apertures::from_sh_mem_bases(b.sh_mem_bases);
        }
        Ok(q)
    }

    fn push(
        &mut self,
        ring_base: u64,
        slots: u64,
        descriptor: u64,
        wake: Wake,
        space: AddressSpace,
        pipe: Option<u8>,
    ) -> Result<usize, CpError> {
        let q = self.queues.len();
        if !slots.is_power_of_two() || !ring_base.is_multiple_of(256) {
            return Err(CpError::BadDispatch {
                queue: q,
                id: 0,
                what: "ring size not a power of two or base not 256-byte aligned",
            });
        }
        self.queues.push(Queue {
            ring_base,
            slots,
            descriptor,
            wake,
            space,
            pipe,
            announced: 0,
            poll_once: false,
            profiling: false,
            in_flight: Vec::new(),
            halted: false,
            unmapped: false,
            stuck: false,
            consumed: 0,
            stalls: 0,
            tlb: Tlb::default(),
            pm4: None,
            ib_progress: None,
            apertures: barebell_isa::exec::Apertures::default(),
            scratch_wait: None,
            scratch_requests: 0,
        });
        let r = (|| {
            let read = self
                .u64_at(
                    q,
                    descriptor + amdq::READ_DISPATCH_ID,
                    Access::Read,
                    "read_dispatch_id",
                )?
                .load(Ordering::Acquire);
            let props = self
                .u32_at(
                    q,
                    descriptor + amdq::QUEUE_PROPERTIES,
                    Access::Read,
                    "queue_properties",
                )?
                .load(Ordering::Relaxed);
            Ok::<_, CpError>((read, props))
        })();
        match r {
            Ok((read, props)) => {
                if let Some(x) = self.queues.get_mut(q) {
                    x.announced = read.wrapping_sub(1);
                    x.profiling = props >> amdq::ENABLE_PROFILING_SHIFT & 1 == 1;
                }
                Ok(q)
            }
            Err(e) => {
                self.queues.pop();
                Err(e)
            }
        }
    }

    /// A doorbell store routed to queue `q` (its value: the id of the last
    /// packet announced).
    pub fn ring(&mut self, q: usize, value: u64) {
        if let Some(x) = self.queues.get_mut(q)
            && later(value, x.announced)
        {
            x.announced = value;
        }
    }

    /// A one-shot read of queue `q`'s write pointer
    /// (`CP_PQ_WPTR_POLL_CNTL1`).
    pub fn poll_once(&mut self, q: usize) {
        if let Some(x) = self.queues.get_mut(q) {
            x.poll_once = true;
        }
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

    /// Fault injection: queue `q` hangs. *Model convention* for what a
    /// hung compute queue looks like from outside (no public source says
    /// more): its read index stops where it is, work it launched never
    /// completes (a wave that never ends, so no completion signal is
    /// decremented), and a dequeue request waits for waves that never
    /// drain (see [`crate::mec`]). Returns false if `q` is unknown.
    pub fn hang(&mut self, q: usize) -> bool {
        match self.queues.get_mut(q) {
            Some(queue) => {
                queue.stuck = true;
                true
            }
            None => false,
        }
    }

    /// Whether the first and the last byte of `len` bytes at `va` in
    /// `space` are memory the CP can write (through the hub's walk for a
    /// VMID, the DMA windows otherwise). Used for a buffer the CP writes
    /// by its declared size (the EOP buffer): a size larger than the
    /// buffer puts its end where the CP's writes would miss.
    pub fn reaches(&self, space: AddressSpace, va: u64, len: u64) -> bool {
        use crate::wave::DeviceView;
        let Some(last) = va.checked_add(len.saturating_sub(1)) else {
            return false;
        };
        let view = QueueView::new(&self.dma, self.translator.as_deref(), space);
        [va, last]
            .iter()
            .all(|&a| view.host_of(a, 1, Access::Write).is_ok())
    }

    /// Whether queue `q` is hung.
    pub fn is_stuck(&self, q: usize) -> bool {
        self.queues.get(q).is_some_and(|x| x.stuck)
    }

    /// Kills queue `q`'s waves (`SPI_COMPUTE_QUEUE_RESET` on its slot, a
    /// CP soft reset): work in flight is dropped without its completion
    /// signal being touched, and the hang is cleared. Returns how many
    /// launched packets were dropped.
    pub fn kill_waves(&mut self, q: usize) -> usize {
        match self.queues.get_mut(q) {
            Some(queue) => {
                queue.stuck = false;
                let n = queue.in_flight.len();
                queue.in_flight.clear();
                n
            }
            None => 0,
        }
    }

    /// `GRBM_SOFT_RESET` CP bits: every queue is taken off the CP and its
    /// waves killed (the CP blocks return to their reset state; nothing is
    /// mapped after it).
    pub fn soft_reset(&mut self) {
        for q in 0..self.queues.len() {
            self.kill_waves(q);
            self.unbind(q);
        }
    }

    /// Whether any queue has work in flight.
    /// Drops every queue's cached translations (a KIQ `INVALIDATE_TLBS`:
    /// the model keeps no per-PASID tags, so it invalidates all, which a
    /// cache may always do).
    pub fn invalidate_tlbs(&mut self) {
        for q in &mut self.queues {
            q.tlb = Tlb::default();
        }
    }

    /// Lets the CP (its queues, packets and kernels) reach `len` host
    /// bytes at `host`, which the translators now give for pinned pages
    /// ([`crate::vgpu::VirtualGpu::map_host_dma`]); refused (`false`) if
    /// the range meets one the CP already reaches.
    ///
    /// # Safety
    /// As [`Dma::map`]: the host range stays valid until
    /// [`CpModel::unmap_host`] takes it away.
    pub unsafe fn map_host(&mut self, host: u64, len: u64) -> bool {
        if len == 0 || self.dma.overlaps(host, len) {
            return false;
        }
        // SAFETY: forwarded contract.
        unsafe { self.dma.map(host, len) };
        true
    }

    /// Takes away the range [`CpModel::map_host`] mapped at `host`;
    /// whether there was one.
    pub fn unmap_host(&mut self, host: u64) -> bool {
        self.dma.unmap(host)
    }

    pub fn busy(&self) -> bool {
        self.queues.iter().any(|q| !q.in_flight.is_empty())
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
            announced: q.announced,
            scratch_requests: q.scratch_requests,
            scratch_wait: q.scratch_wait,
        })
    }

    /// The host address of device address `va` of queue `q`, `len` bytes.
    fn host(
        &mut self,
        q: usize,
        va: u64,
        len: u64,
        access: Access,
        what: &'static str,
    ) -> Result<u64, CpError> {
        let Some(queue) = self.queues.get_mut(q) else {
            return Ok(va);
        };
        let space = queue.space;
        if space == AddressSpace::Identity {
            return Ok(va);
        }
        let vm = |why| CpError::Vm {
            queue: q,
            space,
            va,
            what,
            why,
        };
        if (va & 0xFFF) + len > 0x1000 {
            return Err(vm(VmRefusal::CrossesPage));
        }
        let page = va & !0xFFF;
        if let Some(h) = queue.tlb.get(page) {
            return Ok(h + (va & 0xFFF));
        }
        let Some(t) = self.translator.as_ref() else {
            // A MEC without a hub: no VMIDs to translate through (a rig).
            return Ok(va);
        };
        let h = t.translate(space, page, access).map_err(vm)?;
        if let Some(queue) = self.queues.get_mut(q) {
            queue.tlb.put(page, h);
        }
        Ok(h + (va & 0xFFF))
    }

    fn u64_at(
        &mut self,
        q: usize,
        va: u64,
        access: Access,
        what: &'static str,
    ) -> Result<&core::sync::atomic::AtomicU64, CpError> {
        let h = self.host(q, va, 8, access, what)?;
        self.dma
            .u64(h, what)
            .map_err(|fault| CpError::Dma { queue: q, fault })
    }

    fn i64_at(
        &mut self,
        q: usize,
        va: u64,
        access: Access,
        what: &'static str,
    ) -> Result<&core::sync::atomic::AtomicI64, CpError> {
        let h = self.host(q, va, 8, access, what)?;
        self.dma
            .i64(h, what)
            .map_err(|fault| CpError::Dma { queue: q, fault })
    }

    fn u32_at(
        &mut self,
        q: usize,
        va: u64,
        access: Access,
        what: &'static str,
    ) -> Result<&core::sync::atomic::AtomicU32, CpError> {
        let h = self.host(q, va, 4, access, what)?;
        self.dma
            .u32(h, what)
            .map_err(|fault| CpError::Dma { queue: q, fault })
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
        if let Some(t) = &self.translator {
            let g = t.generation();
            if g != self.tlb_generation {
                self.tlb_generation = g;
                for q in &mut self.queues {
                    q.tlb = Tlb::default();
                }
            }
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
            let busy = self
                .queues
                .iter()
                .any(|q| !q.in_flight.is_empty() && !q.stuck);
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

    /// The SQ error interrupts raised since the last call (waves stopped
    /// by an illegal instruction or a memory violation).
    pub fn take_sq_events(&mut self) -> Vec<crate::wave::SqEvent> {
        core::mem::take(&mut self.sq_events)
    }

    fn fail(&mut self, q: usize, e: CpError) {
        if let CpError::Kernel { fault, .. } = &e
            && let Some((wave, pc, error)) = fault.sq_error()
        {
            let vmid = match self.queues.get(q).map(|x| x.space) {
                Some(AddressSpace::Vmid(v)) => v,
                _ => 0,
            };
            self.sq_events.keep(crate::wave::SqEvent {
                queue: q,
                vmid,
                wave,
                pc,
                error,
            });
        }
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
        if queue.stuck {
            return 0;
        }
        // A buffer kept between steps: no allocation per completion.
        let mut due = core::mem::take(&mut self.due);
        due.clear();
        queue.in_flight.retain(|f| {
            if f.due_ns <= now {
                due.push(*f);
                false
            } else {
                true
            }
        });
        if due.is_empty() {
            self.due = due;
            return 0;
        }
        due.sort_by_key(|f| f.due_ns);
        let profiling = queue.profiling;
        let mut n = 0;
        for f in due.drain(..) {
            if let Some((kernel_object, info)) = f.host
                && let Some(k) = self.kernels.get_mut(&kernel_object)
            {
                k(&info);
            }
            if let Err(e) = self.complete_signal(q, f.signal, profiling, f.start_ns, now) {
                self.fail(q, e);
            }
            n += 1;
        }
        self.due = due;
        n
    }

    fn complete_signal(
        &mut self,
        q: usize,
        handle: u64,
        profiling: bool,
        start: u64,
        end: u64,
    ) -> Result<(), CpError> {
        if handle == 0 {
            return Ok(());
        }
        if profiling {
            self.u64_at(q, handle + amds::START_TS, Access::Write, "signal start_ts")?
                .store(start, Ordering::Relaxed);
            self.u64_at(q, handle + amds::END_TS, Access::Write, "signal end_ts")?
                .store(end, Ordering::Relaxed);
        }
        self.i64_at(q, handle + amds::VALUE, Access::Write, "signal value")?
            .fetch_sub(1, Ordering::Release);
        self.notify_mailbox(q, handle)
    }

    /// Writes signal `handle`'s event id into its event mailbox, if it
    /// has one (what the CP does after changing an interrupt signal's
    /// value: ROCR's `InterruptSignal` and the thunk's event page).
    fn notify_mailbox(&mut self, q: usize, handle: u64) -> Result<(), CpError> {
        let mailbox = self
            .u64_at(
                q,
                handle + amds::EVENT_MAILBOX_PTR,
                Access::Read,
                "signal mailbox",
            )?
            .load(Ordering::Relaxed);
        if mailbox != 0 {
            let id = self
                .u32_at(q, handle + amds::EVENT_ID, Access::Read, "signal event_id")?
                .load(Ordering::Relaxed);
            self.u64_at(q, mailbox, Access::Write, "event mailbox")?
                .store(u64::from(id), Ordering::Release);
        }
        Ok(())
    }

    fn signal_value(&mut self, q: usize, handle: u64) -> Result<i64, CpError> {
        Ok(self
            .i64_at(q, handle + amds::VALUE, Access::Read, "dependency signal")?
            .load(Ordering::Acquire))
    }

    /// Tries to launch the packet at the queue's read index.
    fn process(&mut self, q: usize) -> bool {
        if self.queues.get(q).is_some_and(|x| x.stuck) {
            return false;
        }
        if self.queues.get(q).is_some_and(|x| x.pm4.is_some()) {
            return self.process_pm4(q);
        }
        match self.try_process(q) {
            Ok(launched) => launched,
            Err(e) => {
                self.fail(q, e);
                false
            }
        }
    }

    /// The highest id queue `q` knows of after looking where its wake-up
    /// comes from.
    fn look(&mut self, q: usize) -> Result<u64, CpError> {
        let Some(queue) = self.queues.get(q) else {
            return Ok(0);
        };
        let (wake, descriptor, mut announced, once) = (
            queue.wake,
            queue.descriptor,
            queue.announced,
            queue.poll_once,
        );
        let poll = match wake {
            Wake::Memory {
                doorbell,
                poll_write_index,
            } => {
                let rung = self
                    .dma
                    .u64(doorbell, "doorbell")
                    .map_err(|fault| CpError::Dma { queue: q, fault })?
                    .load(Ordering::Acquire);
                if later(rung, announced) {
                    announced = rung;
                }
                poll_write_index
            }
            Wake::Routed => self.wptr_polling || once,
        };
        if poll {
            let w = self
                .u64_at(
                    q,
                    descriptor + amdq::WRITE_DISPATCH_ID,
                    Access::Read,
                    "write_dispatch_id",
                )?
                .load(Ordering::Acquire);
            if later(w.wrapping_sub(1), announced) {
                announced = w.wrapping_sub(1);
            }
        }
        if let Some(x) = self.queues.get_mut(q) {
            x.announced = announced;
            x.poll_once = false;
        }
        Ok(announced)
    }

    fn try_process(&mut self, q: usize) -> Result<bool, CpError> {
        let Some(queue) = self.queues.get(q) else {
            return Ok(false);
        };
        if queue.halted || queue.unmapped {
            return Ok(false);
        }
        if let Some(p) = queue.pipe
            && self.running_pipes >> p & 1 == 0
        {
            return Ok(false);
        }
        let (ring_base, slots, descriptor) = (queue.ring_base, queue.slots, queue.descriptor);
        let rptr_addr = descriptor + amdq::READ_DISPATCH_ID;
        let read = self
            .u64_at(q, rptr_addr, Access::Read, "read_dispatch_id")?
            .load(Ordering::Relaxed);
        let announced = self.look(q)?;
        if later(read, announced) {
            return Ok(false);
        }
        let slot = ring_base + (read & (slots - 1)) * 64;
        let host = self.host(q, slot, 64, Access::Read, HDR)?;
        let Some(body) = fetch_packet(&QueueRing { cp: self, q, host }, slot)? else {
            self.stall(q);
            return Ok(false);
        };
        let raw = u16_at(&body, 0);
        let kind = header::packet_type(raw);
        if raw & header::RESERVED_MASK != 0
            || header::acquire(raw) == header::SCOPE_RESERVED
            || header::release(raw) == header::SCOPE_RESERVED
        {
            return Err(CpError::MalformedHeader {
                queue: q,
                id: read,
                header: raw,
            });
        }
        let signal = u64_at(&body, packet::COMPLETION_SIGNAL);
        let barrier_blocked =
            header::barrier(raw) && self.queues.get(q).is_some_and(|x| !x.in_flight.is_empty());
        let work = match kind {
            header::KERNEL_DISPATCH => {
                if barrier_blocked {
                    return Ok(false);
                }
                self.dispatch_work(q, read, &body, slot, descriptor)?
            }
            header::BARRIER_AND | header::BARRIER_OR => {
                if barrier_blocked {
                    return Ok(false);
                }
                let Some(work) = self.barrier_work(q, kind, &body)? else {
                    return Ok(false);
                };
                work
            }
            header::VENDOR_SPECIFIC => {
                if barrier_blocked {
                    return Ok(false);
                }
                let Some(work) = self.vendor_work(q, read, raw, &body)? else {
                    return Ok(false);
                };
                work
            }
            header::AGENT_DISPATCH => {
                return Err(CpError::UnsupportedPacket {
                    queue: q,
                    id: read,
                    header: raw,
                    detail: "agent dispatch on a GPU queue",
                });
            }
            _ => {
                return Err(CpError::MalformedHeader {
                    queue: q,
                    id: read,
                    header: raw,
                });
            }
        };
        if let Work::Dispatch { isa: Some(d), .. } = &work
            && !self.scratch_ready(q, read, d)?
        {
            self.stall(q);
            return Ok(false);
        }
        // Launch: the slot is consumed.
        let start = self.now_ns;
        let due = match work {
            // Saturating: the host sets the range, and no value it sends
            // may panic the model.
            Work::Dispatch { .. } => {
                start.saturating_add(self.rng.random_range(self.dispatch_ns.clone()))
            }
            Work::Barrier => start,
        };
        self.consume(q, read, slots, rptr_addr, host)?;
        self.launch(q, read, start, due, signal, work)?;
        Ok(true)
    }

    /// The dynamic-scratch handshake ROCR's
    /// `AqlQueue::DynamicScratchHandler` (5.2.3) answers: a dispatch that
    /// needs more scratch than its `amd_queue_t` gives is not launched;
    /// the CP stores the "insufficient scratch" code into the queue's
    /// `queue_inactive_signal` (bit 0 for wave64, bit 10 for wave32:
    /// [`amdq::INSUFFICIENT_SCRATCH_WAVE64`]) and writes the signal's
    /// event mailbox, leaving `read_dispatch_id` on the packet, where the
    /// handler finds it. The runtime rewrites the queue's scratch fields
    /// and stores 0 ("Restart the queue"); the dispatch is then tried
    /// again. *Model convention* for the CP's side, which no public source
    /// describes: the check is the one [`crate::wave`] makes at launch,
    /// the restart is the value going back to 0, and no interrupt is
    /// raised (the runtime's waits are bounded and re-read the value). A
    /// queue without an inactive signal, or one still short after the
    /// runtime answered, gets the launch's refusal. `false`: not yet.
    fn scratch_ready(
        &mut self,
        q: usize,
        read: u64,
        d: &barebell_isa::launch::Dispatch,
    ) -> Result<bool, CpError> {
        let Some(x) = self.queues.get(q) else {
            return Ok(true);
        };
        let (space, descriptor, waiting) = (x.space, x.descriptor, x.scratch_wait);
        let view = QueueView::new(&self.dma, self.translator.as_deref(), space);
        let short = self
            .shader
            .scratch_short(&view, d)
            .map_err(|fault| CpError::Kernel {
                queue: q,
                id: read,
                fault,
            })?;
        let Some(wave32) = short else {
            if let Some(x) = self.queues.get_mut(q) {
                x.scratch_wait = None;
            }
            return Ok(true);
        };
        let handle = self
            .u64_at(
                q,
                descriptor + amdq::QUEUE_INACTIVE_SIGNAL,
                Access::Read,
                "queue_inactive_signal",
            )?
            .load(Ordering::Acquire);
        if handle == 0 {
            return Ok(true);
        }
        if waiting == Some(read) {
            let v = self.signal_value(q, handle)?;
            if v != 0 {
                return Ok(false);
            }
            // Answered, and still short: the launch refuses it.
            if let Some(x) = self.queues.get_mut(q) {
                x.scratch_wait = None;
            }
            return Ok(true);
        }
        let code = if wave32 {
            amdq::INSUFFICIENT_SCRATCH_WAVE32
        } else {
            amdq::INSUFFICIENT_SCRATCH_WAVE64
        };
        self.i64_at(
            q,
            handle + amds::VALUE,
            Access::Write,
            "queue_inactive_signal value",
        )?
        .store(code, Ordering::Release);
        self.notify_mailbox(q, handle)?;
        if let Some(x) = self.queues.get_mut(q) {
            x.scratch_wait = Some(read);
            x.scratch_requests += 1;
        }
        Ok(false)
    }

    /// Counts a stall of queue `q`: a packet not yet runnable.
    fn stall(&mut self, q: usize) {
        if let Some(x) = self.queues.get_mut(q) {
            x.stalls += 1;
        }
    }

    /// The work of kernel-dispatch packet `read` (at `slot`), its
    /// dimensions and sizes checked.
    fn dispatch_work(
        &self,
        q: usize,
        read: u64,
        body: &[u8; 64],
        slot: u64,
        descriptor: u64,
    ) -> Result<Work, CpError> {
        let setup = u16_at(body, packet::SETUP);
        let dims = (setup >> packet::SETUP_DIMENSIONS_SHIFT
            & ((1 << packet::SETUP_DIMENSIONS_WIDTH) - 1)) as u8;
        let wg = packet::WORKGROUP_SIZE_X;
        let gr = packet::GRID_SIZE_X;
        let info = DispatchInfo {
            queue: q,
            packet_id: read,
            dimensions: dims,
            workgroup: [u16_at(body, wg), u16_at(body, wg + 2), u16_at(body, wg + 4)],
            grid: [u32_at(body, gr), u32_at(body, gr + 4), u32_at(body, gr + 8)],
            kernarg_address: u64_at(body, packet::KERNARG_ADDRESS),
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
        let kernel_object = u64_at(body, packet::KERNEL_OBJECT);
        // Machine code unless a host function stands in for it.
        let isa = (!self.kernels.contains_key(&kernel_object))
            .then(|| crate::wave::decode_packet(body, slot, descriptor, read));
        Ok(Work::Dispatch {
            kernel_object,
            info,
            isa,
        })
    }

    /// A barrier-AND or barrier-OR packet's work once its dependencies
    /// allow it; `None` (a stall) before.
    fn barrier_work(
        &mut self,
        q: usize,
        kind: u16,
        body: &[u8; 64],
    ) -> Result<Option<Work>, CpError> {
        let mut any_met = false;
        let mut all_met = true;
        let mut any_dep = false;
        for i in 0..packet::DEP_SIGNALS {
            let h = u64_at(body, packet::DEP_SIGNAL + 8 * i);
            if h == 0 {
                continue;
            }
            any_dep = true;
            let met = self.signal_value(q, h)? == 0;
            any_met |= met;
            all_met &= met;
        }
        // With no dependencies both kinds are satisfied at once
        // (unconfirmed for barrier-OR: the HSA spec is read here as
        // "no dependency left to wait for").
        let ready = if kind == header::BARRIER_AND {
            all_met
        } else {
            any_met || !any_dep
        };
        if !ready {
            self.stall(q);
            return Ok(None);
        }
        Ok(Some(Work::Barrier))
    }

    /// An AMD vendor-specific packet's work: a barrier-value packet once
    /// its condition holds, a PM4 indirect buffer once it ran (`None`, a
    /// stall, before); other formats are refused.
    fn vendor_work(
        &mut self,
        q: usize,
        read: u64,
        raw: u16,
        body: &[u8; 64],
    ) -> Result<Option<Work>, CpError> {
        let format = body[packet::AMD_FORMAT];
        if format == packet::AMD_BARRIER_VALUE {
            let sig = u64_at(body, packet::BV_SIGNAL);
            let value = u64_at(body, packet::BV_VALUE) as i64;
            let mask = u64_at(body, packet::BV_MASK) as i64;
            let cond = u32_at(body, packet::BV_COND);
            let v = self.signal_value(q, sig)?;
            let Some(holds) = condition::holds(cond, v & mask, value) else {
                return Err(CpError::UnsupportedPacket {
                    queue: q,
                    id: read,
                    header: raw,
                    detail: "barrier-value condition > 3",
                });
            };
            if !holds {
                self.stall(q);
                return Ok(None);
            }
            Ok(Some(Work::Barrier))
        } else if format == packet::AMD_FORMAT_PM4_IB {
            // The IB's packets run on the PM4 engine ([`aql_ib`]).
            if !self.aql_pm4_ib(q, read, body)? {
                self.stall(q);
                return Ok(None);
            }
            Ok(Some(Work::Barrier))
        } else {
            Err(CpError::UnsupportedPacket {
                queue: q,
                id: read,
                header: raw,
                detail: "unknown AMD vendor format",
            })
        }
    }

    /// Consumes packet `read` of queue `q`: its header (at host address
    /// `host`) set INVALID, the read index (at `rptr_addr`) moved past it.
    fn consume(
        &mut self,
        q: usize,
        read: u64,
        slots: u64,
        rptr_addr: u64,
        host: u64,
    ) -> Result<(), CpError> {
        // The 16-bit header set INVALID, the setup half kept: one 32-bit
        // read-modify-write, the width the producer publishes the
        // header+setup word with (`AqlQueue`'s atomic u32 store), so no
        // two atomic accesses of different sizes ever touch these bytes
        // (Miri's weak-memory model refuses mixed sizes).
        let _ = self
            .dma
            .u32(host, HDR)
            .map_err(|fault| CpError::Dma { queue: q, fault })?
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
                Some((w & !0xFFFF) | u32::from(header::INVALID))
            });
        let next = if self.faults.corrupt_read_index {
            self.faults.corrupt_read_index = false;
            read.wrapping_add(1)
                .wrapping_add(self.rng.random_range(slots * 4..1 << 40))
        } else {
            read.wrapping_add(1)
        };
        self.u64_at(q, rptr_addr, Access::Write, "read_dispatch_id")?
            .store(next, Ordering::Release);
        if let Some(queue) = self.queues.get_mut(q) {
            queue.consumed += 1;
        }
        Ok(())
    }

    /// Runs the waves of consumed packet `read` and queues its
    /// completion (`signal`, due at `due`).
    fn launch(
        &mut self,
        q: usize,
        read: u64,
        start: u64,
        due: u64,
        signal: u64,
        work: Work,
    ) -> Result<(), CpError> {
        // The waves run once the packet is consumed; the kernel still
        // finds it in its slot through the dispatch pointer. A wave that
        // stops halts the queue before the completion signal is queued.
        if let Work::Dispatch { isa: Some(d), .. } = &work {
            let (space, apertures) = self.queues.get(q).map_or(
                (
                    AddressSpace::Identity,
                    barebell_isa::exec::Apertures::default(),
                ),
                |x| (x.space, x.apertures),
            );
            let view = QueueView::new(&self.dma, self.translator.as_deref(), space);
            self.shader
                .dispatch(&view, d, apertures)
                .map_err(|fault| CpError::Kernel {
                    queue: q,
                    id: read,
                    fault,
                })?;
        }
        if let Some(queue) = self.queues.get_mut(q) {
            let host = match work {
                Work::Dispatch {
                    kernel_object,
                    info,
                    isa: None,
                } => Some((kernel_object, info)),
                _ => None,
            };
            queue.in_flight.push(InFlight {
                due_ns: due,
                start_ns: start,
                signal,
                host,
            });
        }
        Ok(())
    }
}
