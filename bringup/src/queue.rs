//! Step 8, queue: one AQL user queue, mapped by the chosen mode, and a
//! first packet through it.
//!
//! The queue's ring and `amd_queue_t`, MQD, EOP buffer and completion
//! signal are placed in the ring area (GPU VA = host address in VMID0 and
//! in the process tables). By mapping mode:
//! - `mes`: the process is registered with MES (its page-table root, a
//!   process context) and the queue added by ADD_QUEUE, as KFD does on
//!   gfx11+ (`add_queue_mes()`); MES picks the VMID;
//! - `direct`: the HQD registers are written straight from the MQD, as
//!   tinygrad's AM does; the queue runs in [`USER_VMID`], whose GFXHUB
//!   context is pointed at the process tables first;
//! - `kiq`: through the KIQ, same VMID: on gfx11 PM4 MAP_QUEUES on the
//!   KIQ ring (MES pipe 1, after its SET_RESOURCES), as
//!   `amdgpu_gfx_enable_kcq()` maps kernel compute queues; on gfx12
//!   uni-MES, whose KIQ is MES pipe 1 speaking the MES API, a
//!   `map_legacy_kq` ADD_QUEUE there, as `amdgpu_gfx_mes_enable_kcq()`
//!   does.
//!
//! The packet is an AQL BARRIER_AND with no dependencies and a completion
//! signal: the HSA header (`hsa.h`, `hsa_barrier_and_packet_t`) treats a
//! dependency handle of 0 as met, so it completes once the packet
//! processor has fetched it; no kernel code is involved.

use crate::Gpu;
use crate::error::{BringupError, ErrorKind, QueueError, ResultAt};
use crate::gmc::Memory;
use crate::rings::{self, Pauser, Rings, Scheduler};
use crate::sink::{Sink, Step};
use alloc::boxed::Box;
use barebell::aql::{
    AqlQueue, BarrierKind, BarrierPacket, Condition, Fences, QueueConfig, QueueMemory, SignalMemory,
};
use barebell::gfx::doorbells::{Doorbells, doorbell_index};
use barebell::gfx::hqd::DirectHqd;
use barebell::gfx::mapper::{Mapping as HqdMapping, QueueMapper, QueueResources};
use barebell::gfx::mes::legacy::LegacyQueues;
use barebell::gfx::mes::{Process, ProcessContext};
use barebell::gfx::mqd::{EopBuffer, MqdPage};
use barebell::gmc::hub::{self, GART_ENGINE};
use barebell::mem::DeviceArena;

/// Slots of the user queue.
pub const SLOTS: usize = 256;
/// Bound on each wait for the first packet (submit space, completion).
pub const BOUND_NS: u64 = 2_000_000_000;
/// The VMID a direct or KIQ-mapped user queue runs in: the first of the
/// VMIDs Linux leaves to KFD (`gmc_v11_0_sw_init()` sets `first_kfd_vmid`
/// to 8: graphics and compute use 1-7, KFD 8-15).
pub const USER_VMID: u8 = 8;
/// The PASID MES is given for the process.
const PASID: u32 = 0x8001;

/// How the user queue reaches a hardware queue slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapping {
    /// MES ADD_QUEUE (what KFD does on gfx11+).
    Mes,
    /// Direct HQD register load (what tinygrad's AM driver does).
    Direct,
    /// PM4 MAP_QUEUES on the KIQ ring (HWS/CPSCH style).
    Kiq,
    /// The hardware scheduler on the MEC (KFD's CPSCH on GC 9.x): the HIQ
    /// mapped through the KIQ, then a runlist on the HIQ
    /// ([`crate::gfx::gfx_v9_4_3::queue`]); GC 9.4.3 only.
    Hws,
}

impl Mapping {
    /// The mappings of gfx11/gfx12 parts.
    pub const ALL: [Mapping; 3] = [Mapping::Mes, Mapping::Direct, Mapping::Kiq];
    /// The mappings of GC 9.4.3 parts (no MES).
    pub const GFX94: [Mapping; 3] = [Mapping::Hws, Mapping::Direct, Mapping::Kiq];

    pub fn name(self) -> &'static str {
        match self {
            Mapping::Mes => "mes",
            Mapping::Direct => "direct",
            Mapping::Kiq => "kiq",
            Mapping::Hws => "hws",
        }
    }
}

/// A mapped user queue whose first packet completed.
pub struct UserQueue<'p> {
    pub queue: AqlQueue<'p, SLOTS>,
    pub signal: &'p SignalMemory,
    pub doorbell: u32,
    pub mode: Mapping,
    pub mapping: HqdMapping,
    /// Time of the mapping call (MQD build + firmware round trip): host
    /// wall time when the sink keeps it, else the platform's clock.
    pub create_ns: u64,
    /// The first packet's id.
    pub packet_id: u64,
    mapper: Box<dyn QueueMapper + 'p>,
    platform: &'p dyn barebell::platform::Platform,
    /// The register the waits read to tell a gone device from a hang.
    presence: Option<barebell::bus::Presence<'p>>,
}

impl core::fmt::Debug for UserQueue<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("UserQueue")
            .field("doorbell", &self.doorbell)
            .field("mode", &self.mode)
            .field("mapping", &self.mapping)
            .field("create_ns", &self.create_ns)
            .finish_non_exhaustive()
    }
}

impl<'p> UserQueue<'p> {
    /// The barrier the bring-up submits: no dependencies, this queue's
    /// signal, system-scope fences so the signal write is visible to the
    /// host.
    pub fn barrier(&self) -> Result<BarrierPacket, BringupError> {
        barrier(self.signal)
    }

    /// Waits for the completion signal to reach `value`, pausing on the
    /// platform between looks, for at most `bound_ns`. A queue whose read
    /// index stands still with packets unfetched for
    /// [`crate::recover::WATCHDOG_NS`] (or `bound_ns`, if shorter) is
    /// reported hung ([`QueueError::Hung`]) before the bound passes.
    pub fn wait_signal(&self, value: i64, bound_ns: u64) -> Result<i64, BringupError> {
        use barebell::aql::watchdog::{Watch, Watchdog};
        use barebell::time::Pause;
        let p = self.platform;
        let clock = p.clock();
        let start = clock.now_ns();
        let bound = crate::recover::WATCHDOG_NS.min(bound_ns);
        let mut dog = Watchdog::new(bound, self.queue.read_index(), start);
        let mut pause = Pauser(p);
        let mut checked = start;
        loop {
            let v = self.signal.value();
            if v == value {
                return Ok(v);
            }
            let now = clock.now_ns();
            // Once per watchdog interval, and before calling it a hang or a
            // timeout: is the device still there?
            let due = now.saturating_sub(checked) >= bound;
            if due {
                checked = now;
            }
            if let Some(pr) = &self.presence
                && due
                && !pr.present()
            {
                return Err(QueueError::DeviceGone {
                    waited_ns: now.saturating_sub(start),
                })
                .at(Step::Queue);
            }
            if now.saturating_sub(start) >= bound_ns {
                // Past the bound: the signal wait's own typed timeout.
                return self
                    .signal
                    .wait_pausing(Condition::Eq, value, clock, 0, &mut pause)
                    .map_err(QueueError::Signal)
                    .at(Step::Queue);
            }
            let (read, write) = (self.queue.read_index(), self.queue.write_index());
            if let Watch::Hung(s) = dog.observe(read, write, now) {
                return Err(QueueError::Hung(s)).at(Step::Queue);
            }
            pause.pause();
        }
    }

    /// A queue another module mapped (GC 9.4.3, [`crate::gfx::gfx_v9_4_3::queue`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        queue: AqlQueue<'p, SLOTS>,
        signal: &'p SignalMemory,
        doorbell: u32,
        mode: Mapping,
        mapping: HqdMapping,
        create_ns: u64,
        mapper: Box<dyn QueueMapper + 'p>,
        gpu: &Gpu<'p>,
    ) -> Self {
        UserQueue {
            queue,
            signal,
            doorbell,
            mode,
            mapping,
            create_ns,
            packet_id: 0,
            mapper,
            platform: gpu.platform,
            presence: crate::recover::presence(gpu),
        }
    }

    /// The mapper that mapped this queue (MES adds SDMA queues through
    /// it, [`crate::sdma`]).
    pub fn mapper_mut(&mut self) -> &mut (dyn QueueMapper + 'p) {
        &mut *self.mapper
    }

    /// Takes the queue off the device.
    pub fn unmap(mut self) -> Result<(), BringupError> {
        self.mapper.unmap(&self.mapping).at(Step::Unmap)
    }
}

/// How the queue step names the queue's address space.
struct AddressSpace(Mapping, u8);

impl core::fmt::Display for AddressSpace {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Mapping::Mes => write!(f, "PASID {PASID:#x}, VMID picked by MES"),
            Mapping::Hws => write!(f, "PASID {PASID:#x}, VMID picked by the HWS"),
            Mapping::Direct | Mapping::Kiq => write!(f, "VMID {}", self.1),
        }
    }
}

fn barrier(signal: &SignalMemory) -> Result<BarrierPacket, BringupError> {
    BarrierPacket::new(BarrierKind::And, &[], signal.handle(), Fences::SYSTEM)
        .map_err(QueueError::Barrier)
        .at(Step::Queue)
}

/// Points [`USER_VMID`]'s GFXHUB context at the process tables, as
/// `gfxhub_v3_0_setup_vm_pt_regs()` does for a KFD VMID (MES does this
/// itself for the queues it maps), then flushes that VMID's TLB. Linux
/// sends this flush through the KIQ once it runs
/// (`gmc_v11_0_flush_gpu_tlb()`'s firmware path); barebell writes the same
/// request and polls the same ACK itself.
fn point_user_vmid(gpu: &Gpu<'_>, mem: &Memory<'_>) -> Result<(), BringupError> {
    let hubs = mem.gfx11_hubs(Step::Queue, gpu.ips.generation)?;
    point_vmid(gpu, hubs.gfxhub, mem.process.root())
}

/// [`point_user_vmid`] from the GFXHUB table and the process root.
pub(crate) fn point_vmid(
    gpu: &Gpu<'_>,
    hub: &'static barebell::regs::hub::HubRegs,
    root: u64,
) -> Result<(), BringupError> {
    let s = Step::Queue;
    let gc = gpu.bus.block(gpu.ips.gc.bases);
    let n = u32::from(USER_VMID) - 1;
    let lo = gc
        .offset_nth(hub.ctx1_base_lo, n, hub.ctx_addr_distance())
        .at(s)?;
    let base = root | 1;
    use barebell::bus::RegisterBus;
    gpu.bus.write32(lo, base as u32);
    gpu.bus.write32(lo + 4, (base >> 32) as u32);
    hub::invalidate(
        &gpu.bus,
        gpu.platform.clock(),
        &gpu.ips.gc.bases,
        hub,
        GART_ENGINE,
        u32::from(USER_VMID),
        0,
    )
    .at(s)?;
    Ok(())
}

/// Places the user queue, maps it, submits one barrier and waits for its
/// signal. The queue goes into `slot` as soon as it is mapped, so that a
/// first packet that fails leaves it where the teardown unmaps it.
pub fn run<'p>(
    gpu: &Gpu<'p>,
    mem: &Memory<'p>,
    // The ring area's driver part (VMID0 only) and user part (also in the
    // process tables).
    (area, uarea): (&mut DeviceArena<'p>, &mut DeviceArena<'p>),
    rings: Option<Rings<'p>>,
    mode: Mapping,
    slot: &mut Option<UserQueue<'p>>,
    sink: &dyn Sink,
) -> Result<(), BringupError> {
    let s = Step::Queue;
    let p = gpu.platform;
    // The ring, its pointers, the EOP buffer and the signal in the user
    // part (process tables): `set_queue_properties_from_user()` in
    // `kfd_chardev.c` takes ring, rptr/wptr and eop_buffer_address from
    // user memory. The MQD in the driver part (VMID0 only), as
    // `allocate_mqd()` in `kfd_mqd_manager_v11.c` takes it from
    // `kfd_gtt_sa_allocate()`.
    let qmem = uarea.put(QueueMemory::<SLOTS>::new()).at(s)?;
    let mqd = area.put(MqdPage::new()).at(s)?;
    let eop = uarea.put(EopBuffer::new()).at(s)?;
    let signal = uarea.put(SignalMemory::new(1)).at(s)?;
    let db = rings::doorbell(gpu, doorbell_index::USERQUEUE_START, s)?;
    let queue = AqlQueue::new(
        qmem.get(),
        db,
        QueueConfig {
            profiling: true,
            ..Default::default()
        },
    )
    .map_err(QueueError::Bind)
    .at(s)?;
    let (scheduler, kiq, pipe1) = match rings {
        Some(Rings {
            scheduler,
            kiq,
            pipe1,
        }) => (Some(scheduler), kiq, pipe1),
        None => (None, None, None),
    };
    let (mut mapper, vmid): (Box<dyn QueueMapper + 'p>, u8) = match mode {
        Mapping::Hws => {
            return Err(ErrorKind::Unsupported {
                what: "the HWS (CPSCH) mapping: GC 9.x's scheduler; gfx11/gfx12 use MES, GC",
                version: gpu.ips.gc.version.triple(),
            })
            .at(s);
        }
        Mapping::Mes => {
            let scheduler = scheduler.ok_or(QueueError::NoScheduler).at(s)?;
            // Linux keeps the context control it programmed
            // (`hub->vm_cntx_cntl`); barebell reads it back.
            let vm_context_cntl = gpu
                .bus
                .block(gpu.ips.gc.bases)
                .read(mem.gfx11_hubs(s, gpu.ips.generation)?.gfxhub.ctx1_cntl)
                .at(s)?;
            let process = Process {
                pasid: PASID,
                page_table_base: mem.process.root(),
                vm_context_cntl,
                // Page numbers, as KFD's `add_queue_mes()` sends them.
                va_start: 0,
                va_end: hub::MAX_PFN - 1,
                context: area.put(ProcessContext::new()).at(s)?,
            };
            // MES takes the process key here and picks the VMID itself
            // (the key names the process to the mapper; it is no VMID).
            let m: Box<dyn QueueMapper + 'p> = match scheduler {
                Scheduler::V11(mut m) => {
                    m.register_process(1, process).at(s)?;
                    Box::new(m)
                }
                Scheduler::V12(mut m) => {
                    m.register_process(1, process).at(s)?;
                    Box::new(m)
                }
            };
            (m, 1)
        }
        Mapping::Kiq => {
            point_user_vmid(gpu, mem)?;
            let m: Box<dyn QueueMapper + 'p> = match (kiq, pipe1) {
                (Some(k), _) => Box::new(k),
                (None, Some(p1)) => Box::new(LegacyQueues::new(p1, Doorbells::linux_default())),
                (None, None) => {
                    return Err(ErrorKind::Unsupported {
                        what: "a KIQ on this GC",
                        version: gpu.ips.gc.version.triple(),
                    })
                    .at(s);
                }
            };
            (m, USER_VMID)
        }
        Mapping::Direct => {
            point_user_vmid(gpu, mem)?;
            let d = DirectHqd::new(
                gpu.bus.clone(),
                p.clock(),
                gpu.ips.gc.bases,
                gpu.ips.generation,
                Doorbells::linux_default(),
            )
            .at(s)?;
            (Box::new(d), USER_VMID)
        }
    };
    let res = QueueResources::aql(qmem, mqd, eop, doorbell_index::USERQUEUE_START, vmid);
    let now = || sink.wall_ns().unwrap_or_else(|| p.clock().now_ns());
    let t = now();
    let mapping = mapper.map(&res).at(s)?;
    let create_ns = now().saturating_sub(t);
    let q = slot.insert(UserQueue {
        queue,
        signal: signal.get(),
        doorbell: doorbell_index::USERQUEUE_START,
        mode,
        mapping,
        create_ns,
        packet_id: 0,
        mapper,
        platform: p,
        presence: crate::recover::presence(gpu),
    });
    let packet = barrier(&signal)?;
    q.packet_id = q
        .queue
        .submit(&packet, p.clock(), BOUND_NS)
        .map_err(QueueError::Submit)
        .at(s)?;
    q.wait_signal(0, BOUND_NS)?;
    // MES picks the VMID itself and does not say which (KFD does not know
    // it either): the report names the process, not a VMID.
    let space = AddressSpace(mode, q.mapping.vmid);
    sink.step(
        s,
        format_args!(
            "queue ready: {} mapping, {}, {space}, barrier {} completed (signal 1 -> 0; an AQL BARRIER_AND with no dependencies)",
            mode.name(),
            barebell::aql::doorbell::Slot::new(q.doorbell),
            q.packet_id
        ),
    );
    Ok(())
}
