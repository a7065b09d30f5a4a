//! User queues (`hsaKmtCreateQueue`, `hsaKmtDestroyQueue`): an AQL compute
//! queue ROCR placed in its own memory, added to the HWS's runlist the
//! bring-up left running, as KFD's `create_queue_cpsch()` does.
//!
//! What is checked before the device is touched, as Linux 6.12's KFD
//! checks it:
//! - the type: AQL compute (`HSA_QUEUE_COMPUTE_AQL`) or SDMA
//!   (`HSA_QUEUE_SDMA`, `HSA_QUEUE_SDMA_XGMI`); PM4 queues are refused as
//!   not supported;
//! - percentage ≤ 100 and priority in the header's range
//!   (`set_queue_properties_from_user()`);
//! - the ring size a power of two of at least 1 KiB
//!   (`KFD_MIN_QUEUE_RING_SIZE`; KFD clamps smaller sizes up, and the
//!   clamped ring then fails the next check);
//! - the ring, read pointer and write pointer each lie in memory mapped for
//!   the GPU, as `kfd_queue_acquire_buffers()` requires of them through
//!   `kfd_queue_buffer_get()`: the ring the start of an allocation of
//!   exactly its size, each pointer in the first page of a one-page
//!   allocation. A buffer that was never passed to
//!   `hsaKmtMapMemoryToGPU(Nodes)` is refused ("no mapping").
//!
//! SDMA queues (ROCR's `BlitSdma` copies): the slot is KFD's
//! `allocate_sdma_queue()`'s, the first free one of the PCIe engines
//! (0, 1) or the XGMI ones (2, 3, 4), engine = slot mod engines, queue =
//! slot / engines; the doorbell is `allocate_doorbell()`'s for that slot
//! (vega20's `sdma_engine[]`, + 512 for odd queues, + queue / 2); the
//! MQD is KFD's `struct v9_sdma_mqd`, and the queue joins the HWS's
//! runlist, which loads it onto the engine. The engines are unhalted
//! before the first one (`sdma_v4_0_start()`). As the thunk does
//! (`hsaKmtCreateQueue` for SDMA), the library gives the queue its read
//! and write pointers itself, in a zeroed page of GPU-mapped memory
//! ([`crate::device::Kfd::create_queue`]), and hands their addresses back.
//!
//! The MQD comes from the bring-up's driver memory (VMID 0 only, as
//! `allocate_mqd()` takes it from GTT), the EOP buffer from its user ring
//! area (in the process tables, where the thunk's `handle_concrete_asic()`
//! puts its VRAM EOP buffer). The doorbell is the next free 64-bit
//! doorbell of the vega20 user-queue range after the bring-up's own queue
//! (*model convention*: KFD hands out per-process doorbell pages; here the
//! one process shares amdgpu's range), and ROCR gets a pointer into the
//! doorbell aperture for it.

use barebell::gfx::hws::runlist::SdmaDoorbells;
use barebell::gfx::mapper::{Mapping, QueueResources, SdmaResources};
use barebell::gfx::mqd::{EopBuffer, MqdPage};
use barebell::gfx::mqd_v9::vega20;
use barebell::mem::Dev;
use barebell::sdma::{QueueSetup, SdmaMqd, SdmaVersion};
use barebell_bringup::Gpu;
use std::collections::BTreeMap;

/// `HSA_QUEUE_COMPUTE_AQL` (`hsakmttypes.h`).
pub const QUEUE_COMPUTE_AQL: u32 = 21;
/// `HSA_QUEUE_SDMA` and `HSA_QUEUE_SDMA_XGMI` (`hsakmttypes.h`).
pub const QUEUE_SDMA: u32 = 2;
pub const QUEUE_SDMA_XGMI: u32 = 5;
/// Aldebaran's SDMA engines as KFD splits them: `kfd_get_num_sdma_engines()`
/// is `min(num_instances, 2)` when XGMI is supported (it is on GC 9.4.2:
/// XGMI 6.1.0, `gmc_v9_0_early_init()`), the other three XGMI engines
/// (`kfd_get_num_xgmi_sdma_engines()`); 8 queues each
/// (`kfd_device_info_set_sdma_info()` for SDMA 4.4.0).
pub const SDMA_ENGINES: u8 = 2;
pub const XGMI_SDMA_ENGINES: u8 = 3;
pub const SDMA_QUEUES_PER_ENGINE: u32 = 8;
/// `KFD_MIN_QUEUE_RING_SIZE` (`kfd_priv.h`).
pub const MIN_RING_BYTES: u64 = 1024;
/// `KFD_MAX_QUEUE_PERCENTAGE` (`kfd_priv.h`).
pub const MAX_PERCENTAGE: u32 = 100;
/// `HSA_QUEUE_PRIORITY_MINIMUM` .. `HSA_QUEUE_PRIORITY_MAXIMUM`.
pub const PRIORITIES: core::ops::RangeInclusive<i32> = -3..=3;
/// Page size of the buffers a queue names.
const PAGE: u64 = 4096;
/// The process key the HWS mapper is given (the scheduler picks the VMID).
const PROCESS: u8 = 1;

/// What ROCR asks for: `hsaKmtCreateQueue`'s arguments.
#[derive(Debug, Clone, Copy)]
pub struct QueueRequest {
    pub node: u32,
    pub ty: u32,
    pub percentage: u32,
    pub priority: i32,
    pub ring: u64,
    pub ring_bytes: u64,
    pub read_pointer: u64,
    pub write_pointer: u64,
}

/// Why a queue was not made or not destroyed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueError {
    /// Not an AQL compute queue.
    Type(u32),
    BadNode(u32),
    /// Percentage or priority out of range.
    Range(&'static str),
    /// The ring size is not a power of two of at least 1 KiB.
    RingSize(u64),
    /// A buffer the queue names is not mapped for the GPU as KFD wants it.
    NoMapping {
        what: &'static str,
        address: u64,
    },
    /// Every user doorbell is taken.
    NoDoorbell,
    /// Every SDMA queue slot of that kind is taken
    /// (`allocate_sdma_queue()`'s -ENOMEM).
    NoSdmaSlot {
        xgmi: bool,
    },
    /// No driver memory left for an MQD or EOP buffer.
    NoMemory,
    /// The device is not up to its queue step.
    NotReady,
    /// The scheduler refused or did not answer.
    Device(String),
    /// No queue has this id.
    Unknown(u64),
}

impl core::fmt::Display for QueueError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            QueueError::Type(t) => write!(
                f,
                "queue type {t} is not supported (AQL compute queues, type {QUEUE_COMPUTE_AQL}, and SDMA queues, types {QUEUE_SDMA} and {QUEUE_SDMA_XGMI})"
            ),
            QueueError::NoSdmaSlot { xgmi } => write!(
                f,
                "every {} SDMA queue is taken ({} engines of {SDMA_QUEUES_PER_ENGINE} queues)",
                if *xgmi { "XGMI" } else { "PCIe" },
                if *xgmi {
                    XGMI_SDMA_ENGINES
                } else {
                    SDMA_ENGINES
                }
            ),
            QueueError::BadNode(n) => write!(f, "node {n} is not the GPU"),
            QueueError::Range(what) => write!(f, "{what} out of range"),
            QueueError::RingSize(b) => write!(
                f,
                "a ring of {b} bytes: the size must be a power of two of at least {MIN_RING_BYTES}"
            ),
            QueueError::NoMapping { what, address } => write!(
                f,
                "the {what} at {address:#x} is not in a buffer mapped for the GPU as the queue needs it"
            ),
            QueueError::NoDoorbell => write!(f, "every user-queue doorbell is taken"),
            QueueError::NoMemory => write!(f, "no driver memory left for another queue"),
            QueueError::NotReady => write!(f, "the device has no scheduler running"),
            QueueError::Device(e) => write!(f, "the scheduler: {e}"),
            QueueError::Unknown(id) => write!(f, "no queue {id}"),
        }
    }
}

/// A queue the scheduler runs.
#[derive(Debug, Clone, Copy)]
struct Live {
    /// The scheduler's mapping while active.
    mapping: Option<Mapping>,
    request: QueueRequest,
    doorbell: u32,
    hw: Hw,
    /// The allocations (their first addresses) the queue holds: write
    /// pointer, read pointer, ring.
    buffers: [u64; 3],
}

/// What the scheduler needs of a queue besides its ring.
#[derive(Debug, Clone, Copy)]
enum Hw {
    Compute(Parts),
    Sdma(SdmaSlot),
}

/// An SDMA queue's slot (`allocate_sdma_queue()`) and MQD.
#[derive(Debug, Clone, Copy)]
struct SdmaSlot {
    xgmi: bool,
    /// KFD's `sdma_id`: the bit of the engine kind's bitmap.
    id: u32,
    engine: u8,
    queue: u32,
    mqd: Dev<'static, SdmaMqd>,
}

/// An MQD page and an EOP buffer, kept for the next queue when one goes.
type Parts = (Dev<'static, MqdPage>, Dev<'static, EopBuffer>);

/// The queues ROCR made, and the driver memory destroyed ones left.
#[derive(Debug, Default)]
pub struct Queues {
    live: BTreeMap<u64, Live>,
    spare: Vec<Parts>,
    spare_sdma: Vec<Dev<'static, SdmaMqd>>,
    /// Whether the SDMA engines were started (before the first SDMA
    /// queue; the bring-up's teardown halts them).
    sdma_started: bool,
    next_id: u64,
}

/// Whether `ty` is an SDMA queue type.
pub fn is_sdma(ty: u32) -> bool {
    ty == QUEUE_SDMA || ty == QUEUE_SDMA_XGMI
}

impl Queues {
    pub fn len(&self) -> usize {
        self.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Queue ids, oldest first.
    pub fn ids(&self) -> Vec<u64> {
        self.live.keys().copied().collect()
    }
}

impl Queues {
    /// `hsaKmtCreateQueue` on `gpu`: the queue id and ROCR's doorbell
    /// pointer. `mapped(address, len)` says whether a buffer is mapped for
    /// the GPU as this module's documentation requires (`len`
    /// 0 for a read or write pointer).
    pub fn create(
        &mut self,
        gpu: Option<&mut Gpu<'static>>,
        r: &QueueRequest,
        mapped: impl Fn(u64, u64) -> bool,
    ) -> Result<(u64, *mut u64), QueueError> {
        if r.node != 1 {
            return Err(QueueError::BadNode(r.node));
        }
        if r.ty != QUEUE_COMPUTE_AQL && !is_sdma(r.ty) {
            return Err(QueueError::Type(r.ty));
        }
        if r.percentage > MAX_PERCENTAGE {
            return Err(QueueError::Range("queue percentage"));
        }
        if !PRIORITIES.contains(&r.priority) {
            return Err(QueueError::Range("queue priority"));
        }
        if !r.ring_bytes.is_power_of_two() || r.ring_bytes < MIN_RING_BYTES {
            return Err(QueueError::RingSize(r.ring_bytes));
        }
        let checks = [
            ("write pointer", r.write_pointer, 0),
            ("read pointer", r.read_pointer, 0),
            ("ring", r.ring, r.ring_bytes),
        ];
        for (what, address, len) in checks {
            if !mapped(address, len) {
                return Err(QueueError::NoMapping { what, address });
            }
        }
        let gpu = gpu.ok_or(QueueError::NotReady)?;
        let (doorbell, hw) = if is_sdma(r.ty) {
            let slot = self.take_sdma_slot(gpu, r.ty == QUEUE_SDMA_XGMI)?;
            let index = SdmaDoorbells::vega20(SDMA_ENGINES + XGMI_SDMA_ENGINES)
                .queue_index(slot.engine, slot.queue)
                .ok_or(QueueError::NoDoorbell);
            match index {
                Ok(i) => (i, Hw::Sdma(slot)),
                Err(e) => {
                    self.spare_sdma.push(slot.mqd);
                    return Err(e);
                }
            }
        } else {
            let doorbell = self.free_doorbell().ok_or(QueueError::NoDoorbell)?;
            (doorbell, Hw::Compute(self.take_parts(gpu)?))
        };
        let pointer = match gpu.doorbells.doorbell(doorbell) {
            Ok(d) => d.address() as *mut u64,
            Err(e) => {
                self.give_back(hw);
                return Err(QueueError::Device(e.to_string()));
            }
        };
        // A queue made at 0 % is inactive: not in the runlist until an
        // update gives it a share (KFD's `QUEUE_IS_ACTIVE()`).
        let mapping = if r.percentage > 0 {
            match self
                .start_engines(gpu, hw)
                .and_then(|()| map_on(gpu, hw, r, doorbell))
            {
                Ok(m) => Some(m),
                Err(e) => {
                    self.give_back(hw);
                    return Err(e);
                }
            }
        } else {
            None
        };
        self.next_id += 1;
        let id = self.next_id;
        self.live.insert(
            id,
            Live {
                mapping,
                request: *r,
                doorbell,
                hw,
                buffers: buffers_of(r),
            },
        );
        Ok((id, pointer))
    }

    /// `hsaKmtUpdateQueue`, as KFD's `update_queue()` does it under the
    /// HWS: the queue leaves the runlist if it was in it, takes the new
    /// ring, share and priority, and comes back if its share is above 0
    /// (`QUEUE_IS_ACTIVE()`); ROCR suspends a queue this way after an
    /// error. The priority is checked and kept, not applied: the MQD
    /// carries none (`init_mqd()`'s pipe and queue priorities are left at
    /// their reset values).
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        gpu: Option<&mut Gpu<'static>>,
        id: u64,
        percentage: u32,
        priority: i32,
        ring: u64,
        ring_bytes: u64,
        mapped: impl Fn(u64, u64) -> bool,
    ) -> Result<(), QueueError> {
        if percentage > MAX_PERCENTAGE {
            return Err(QueueError::Range("queue percentage"));
        }
        if !PRIORITIES.contains(&priority) {
            return Err(QueueError::Range("queue priority"));
        }
        if !ring_bytes.is_power_of_two() || ring_bytes < MIN_RING_BYTES {
            return Err(QueueError::RingSize(ring_bytes));
        }
        if !mapped(ring, ring_bytes) {
            return Err(QueueError::NoMapping {
                what: "ring",
                address: ring,
            });
        }
        let gpu = gpu.ok_or(QueueError::NotReady)?;
        let live = self.live.get_mut(&id).ok_or(QueueError::Unknown(id))?;
        if let Some(m) = live.mapping {
            unmap_on(gpu, live.hw, &m)?;
            live.mapping = None;
        }
        live.request.percentage = percentage;
        live.request.priority = priority;
        live.request.ring = ring;
        live.request.ring_bytes = ring_bytes;
        live.buffers = buffers_of(&live.request);
        if percentage > 0 {
            let hw = live.hw;
            self.start_engines(gpu, hw)?;
            let live = self.live.get_mut(&id).ok_or(QueueError::Unknown(id))?;
            live.mapping = Some(map_on(gpu, hw, &live.request, live.doorbell)?);
        }
        Ok(())
    }

    /// `hsaKmtDestroyQueue`: the queue off the runlist.
    pub fn destroy(&mut self, gpu: Option<&mut Gpu<'static>>, id: u64) -> Result<(), QueueError> {
        let live = *self.live.get(&id).ok_or(QueueError::Unknown(id))?;
        let gpu = gpu.ok_or(QueueError::NotReady)?;
        if let Some(m) = live.mapping {
            unmap_on(gpu, live.hw, &m)?;
        }
        self.live.remove(&id);
        self.give_back(live.hw);
        Ok(())
    }

    /// Driver memory of a queue that is gone (or never made), for the
    /// next one.
    fn give_back(&mut self, hw: Hw) {
        match hw {
            Hw::Compute(parts) => self.spare.push(parts),
            Hw::Sdma(slot) => self.spare_sdma.push(slot.mqd),
        }
    }

    /// The SDMA engines unhalted before the first SDMA queue maps
    /// (`sdma_v4_0_start()` does it at amdgpu's init; here on first use).
    fn start_engines(&mut self, gpu: &mut Gpu<'static>, hw: Hw) -> Result<(), QueueError> {
        if self.sdma_started || !matches!(hw, Hw::Sdma(_)) {
            return Ok(());
        }
        barebell_bringup::sdma::start(gpu).map_err(|e| QueueError::Device(e.to_string()))?;
        self.sdma_started = true;
        Ok(())
    }

    /// `allocate_sdma_queue()`: the first slot of the kind's bitmap no
    /// live queue holds; engine and queue from it, and an MQD.
    fn take_sdma_slot(
        &mut self,
        gpu: &mut Gpu<'static>,
        xgmi: bool,
    ) -> Result<SdmaSlot, QueueError> {
        let (engines, first) = if xgmi {
            (XGMI_SDMA_ENGINES, SDMA_ENGINES)
        } else {
            (SDMA_ENGINES, 0)
        };
        let held = |id: u32| {
            self.live
                .values()
                .any(|l| matches!(l.hw, Hw::Sdma(s) if s.xgmi == xgmi && s.id == id))
        };
        let id = (0..u32::from(engines) * SDMA_QUEUES_PER_ENGINE)
            .find(|&id| !held(id))
            .ok_or(QueueError::NoSdmaSlot { xgmi })?;
        let mqd = match self.spare_sdma.pop() {
            Some(m) => m,
            None => gpu
                .ring_area
                .as_mut()
                .ok_or(QueueError::NotReady)?
                .put(SdmaMqd::new())
                .map_err(|_| QueueError::NoMemory)?,
        };
        Ok(SdmaSlot {
            xgmi,
            id,
            engine: first + (id % u32::from(engines)) as u8,
            queue: id / u32::from(engines),
            mqd,
        })
    }

    /// Whether a live queue holds the allocation at `base`.
    pub fn uses(&self, base: u64) -> bool {
        self.live.values().any(|l| l.buffers.contains(&base))
    }

    /// Every live queue destroyed (the device is closing), newest first.
    pub fn destroy_all(&mut self, mut gpu: Option<&mut Gpu<'static>>) -> Vec<String> {
        let mut failed = Vec::new();
        for id in self.ids().into_iter().rev() {
            if let Err(e) = self.destroy(gpu.as_deref_mut(), id) {
                failed.push(format!("queue {id}: {e}"));
            }
        }
        failed
    }

    /// The next vega20 user-queue doorbell no queue holds (the bring-up's
    /// own queue holds the first).
    fn free_doorbell(&self) -> Option<u32> {
        (vega20::USERQUEUE_START + 1..=vega20::USERQUEUE_END)
            .find(|d| !self.live.values().any(|l| l.doorbell == *d))
    }

    /// A spare MQD page and EOP buffer, else new ones.
    fn take_parts(&mut self, gpu: &mut Gpu<'static>) -> Result<Parts, QueueError> {
        if let Some(p) = self.spare.pop() {
            return Ok(p);
        }
        let mqd = gpu
            .ring_area
            .as_mut()
            .ok_or(QueueError::NotReady)?
            .put(MqdPage::new())
            .map_err(|_| QueueError::NoMemory)?;
        let eop = gpu
            .user_rings
            .as_mut()
            .ok_or(QueueError::NotReady)?
            .put(EopBuffer::new())
            .map_err(|_| QueueError::NoMemory)?;
        Ok((mqd, eop))
    }
}

/// The allocations (first addresses) a queue holds: write pointer, read
/// pointer, ring.
fn buffers_of(r: &QueueRequest) -> [u64; 3] {
    let page = |a: u64| a & !(PAGE - 1);
    [page(r.write_pointer), page(r.read_pointer), r.ring]
}

/// The queue `r` put on the scheduler with its MQD (and EOP buffer) and
/// doorbell.
fn map_on(
    gpu: &mut Gpu<'static>,
    hw: Hw,
    r: &QueueRequest,
    doorbell: u32,
) -> Result<Mapping, QueueError> {
    let parts = match hw {
        Hw::Compute(parts) => parts,
        Hw::Sdma(slot) => return map_sdma_on(gpu, slot, r, doorbell),
    };
    let res = QueueResources::process_aql(
        parts.0,
        parts.1,
        r.ring,
        r.ring_bytes,
        r.read_pointer,
        r.write_pointer,
        doorbell,
        PROCESS,
    )
    .ok_or(QueueError::NotReady)?;
    gpu.queue
        .as_mut()
        .ok_or(QueueError::NotReady)?
        .mapper_mut()
        .map(&res)
        .map_err(|e| QueueError::Device(e.to_string()))
}

/// An SDMA queue put on the HWS's runlist (`create_queue_cpsch()` with
/// KFD's v9 SDMA MQD), in the process's VMID (the HWS picks it).
fn map_sdma_on(
    gpu: &mut Gpu<'static>,
    slot: SdmaSlot,
    r: &QueueRequest,
    doorbell: u32,
) -> Result<Mapping, QueueError> {
    let ring_bytes =
        usize::try_from(r.ring_bytes).map_err(|_| QueueError::RingSize(r.ring_bytes))?;
    let res = SdmaResources {
        mqd: slot.mqd,
        setup: QueueSetup {
            ring: r.ring,
            ring_bytes,
            rptr_addr: r.read_pointer,
            wptr_addr: r.write_pointer,
            doorbell_index: doorbell,
            vmid: 0,
        },
        version: SdmaVersion::V4_4_0,
        process: PROCESS,
        engine: slot.engine,
        queue: slot.queue,
    };
    gpu.queue
        .as_mut()
        .ok_or(QueueError::NotReady)?
        .mapper_mut()
        .map_sdma(&res)
        .map_err(|e| QueueError::Device(e.to_string()))
}

/// A mapped queue off the scheduler.
fn unmap_on(gpu: &mut Gpu<'static>, hw: Hw, m: &Mapping) -> Result<(), QueueError> {
    let mapper = gpu.queue.as_mut().ok_or(QueueError::NotReady)?.mapper_mut();
    match hw {
        Hw::Compute(_) => mapper.unmap(m),
        Hw::Sdma(_) => mapper.unmap_sdma(m),
    }
    .map_err(|e| QueueError::Device(e.to_string()))
}
