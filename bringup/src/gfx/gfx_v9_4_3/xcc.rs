//! GC 9.4.3 (MI300) after the RLC/MEC start: the KIQ of every XCC (the
//! rings step) and one AQL user queue spread over the XCCs (the queue
//! step), mapped three ways, and their teardown. GC 9.4.2 (MI210) runs
//! the same steps on its one GC; [`V9Gc`] holds what differs.
//!
//! - [`kiqs_up`]: per XCC, `gfx_v9_4_3_xcc_kiq_resume()` (KIQ on MEC 2
//!   pipe 1 queue 0, its v9 MQD, the HQD loaded register by register with
//!   that XCC's MEC doorbell range), then SET_RESOURCES on it with the
//!   queue mask the caller's queues need, as `amdgpu_gfx_enable_kcq()`
//!   sends it before any MAP_QUEUES (`gfx_v9_4_3_kiq_set_resources()`).
//! - [`place_queue`]: the ring and `amd_queue_t`, one v9 MQD per XCC
//!   (`init_mqd_v9_4_3()`, [`MQD_STRIDE`] apart, one doorbell shared by
//!   every XCC as KFD gives a user queue), EOP buffer, completion signal.
//! - [`map_direct`]: `load_mqd_v9_4_3()`: the HQD of [`USER_SLOT`] loaded
//!   on each XCC from that XCC's MQD (what tinygrad does on MI300).
//! - [`map_kiq`]: MAP_QUEUES on each XCC's KIQ naming that XCC's MQD.
//! - [`map_hws`]: KFD's CPSCH path: one HIQ v9 MQD per XCC
//!   (`init_mqd_hiq_v9_4_3()`), each mapped through its XCC's KIQ by
//!   `kgd_gfx_v9_hiq_mqd_load()`'s MAP_QUEUES
//!   (`hiq_load_mqd_kiq_v9_4_3()`,
//!   [`barebell::gfx::hws::hiq::kiq_map_hiq`]), then on the
//!   HIQ SET_RESOURCES (`set_sched_resources()`), a runlist with the
//!   process's MAP_PROCESS and the queue's MAP_QUEUES
//!   (`pm_create_runlist_ib()`), RUN_LIST, each fenced by QUERY_STATUS.
//! - [`XccQueue::unmap`]: `destroy_mqd_v9_4_3()` (direct), UNMAP_QUEUES
//!   per XCC KIQ (`gfx_v9_4_3_kiq_unmap_queues()`, `RESET_QUEUES`), or
//!   HWS UNMAP_QUEUES for the process plus its fence
//!   (`unmap_queues_cpsch()`), then each XCC's HIQ unmapped by its KIQ
//!   (`destroy_hiq_mqd_v9_4_3()`); every wait bounded.
//!
//! Everything is placed in the caller's [`DeviceArena`] (GPU VA = host
//! address in VMID 0 and in the process tables, the [`Dev`] contract).
//! Each XCC is a [`Block`] with that XCC's GC bases (`Ips::xcc`).

use crate::queue::Mapping;
use alloc::vec::Vec;
use barebell::aql::doorbell::DoorbellAperture;
use barebell::aql::{
    AqlQueue, BarrierKind, BarrierPacket, Fences, QueueConfig, QueueMemory, SignalMemory,
};
use barebell::bus::{Block, RegisterBus};
use barebell::gfx::Doorbells;
use barebell::gfx::hqd_v9::{self, HqdSlot, HqdV9Error};
use barebell::gfx::hws::hiq::{KFD_HIQ_PIPE_ID, KFD_HIQ_QUEUE, kiq_map_hiq};
use barebell::gfx::hws::runlist::{self, ProcessQueues, RunlistConfig};
use barebell::gfx::hws::{
    HiqMemory, HiqRing, Hws, ProcessDesc, QueueDesc, SchedulingResources, UnmapFilter,
};
use barebell::gfx::kiq::{Kiq, KiqMemory, KiqRing};
use barebell::gfx::mqd::{EopBuffer, MqdPage};
use barebell::gfx::mqd_v9::{
    DoorbellPlan, MQD_BYTES, MecDoorbellRange, MqdQueue, V9Mqd, XccDoorbell, XccMqds, init_mqd,
};
use barebell::gfx::queue_v9::{
    KiqV9Parts, RunlistIb, XccMqdPages, check_preemption_failed, kiq_fini, kiq_resume,
    set_resource_bit, set_resources,
};
use barebell::gfx::start_v9_4_3::{CpResumeHooks, StartError};
use barebell::ip::Generation;
use barebell::mem::{Dev, DeviceArena};
use barebell::regs::gc_9_4_3::PqControl;
use barebell::time::{Clock, Pause};
use barebell_firmware_if::pm4::{self, MapQueuesCntl, QueueEngine, unmap_action};
use core::sync::atomic::AtomicU64;

/// KIQ ring, in dwords.
pub const KIQ_RING: usize = 256;
/// HIQ ring, in dwords.
pub const HIQ_RING: usize = 256;
/// User queue slots (64-byte AQL packets).
pub const SLOTS: usize = 256;
/// Runlist IB, in dwords (one aldebaran MAP_PROCESS and a MAP_QUEUES is
/// 28; KFD allocates a page and more).
pub const RUNLIST_DWORDS: usize = 1024;
/// `mqd_stride_v9()` without CWSR: `sizeof(struct v9_mqd)`.
pub const MQD_STRIDE: u64 = MQD_BYTES as u64;
/// The slot the direct and KIQ mappings load on every XCC: MEC 1 pipe 1
/// queue 0 (amdgpu's own compute rings start at pipe 0 queue 0,
/// `amdgpu_gfx_compute_queue_acquire()`; barebell runs none, and keeps
/// off that slot so a later KCQ does not collide).
pub const USER_SLOT: HqdSlot = HqdSlot {
    pipe_id: 1,
    queue_id: 0,
};
/// The user queue's doorbell: the first of layout 1's user-queue block
/// (`AMDGPU_DOORBELL_LAYOUT1_USERQUEUE_START`), 64-bit index.
pub const USER_DOORBELL: u32 = barebell::gfx::mqd_v9::layout1::USERQUEUE_START;
/// The HIQ's doorbell (`AMDGPU_DOORBELL_LAYOUT1_HIQ`), 64-bit index.
pub const HIQ_DOORBELL: u32 = runlist::layout1::HIQ;
/// The HIQ's slot: `KFD_CIK_HIQ_PIPE` 4 queue 0, MEC 2 pipe 0 queue 0.
pub const HIQ_SLOT: HqdSlot = HqdSlot {
    pipe_id: KFD_HIQ_PIPE_ID as u8,
    queue_id: KFD_HIQ_QUEUE as u8,
};
/// KFD's PASID for the one process (any nonzero 16-bit value).
pub const PASID: u16 = 0x8001;
/// Bound on every wait here (fences, dequeues).
pub const BOUND_NS: u64 = 2_100_000_000;

/// What differs between the GC 9 versions this machinery drives: GC 9.4.3
/// (several XCCs, `gfx_v9_4_3.c`) and GC 9.4.2 (one GC, `gfx_v9_0.c`).
/// Everything else (the HQD registers, the v9 MQD, the KIQ and HIQ slots,
/// the PM4 packets) is the same on both: the registers this module
/// touches have the same offsets in `gc_9_4_2_offset.h` and
/// `gc_9_4_3_offset.h` (tests/harness/tests/mi210_queue.rs checks them).
#[derive(Debug, Clone, Copy)]
pub struct V9Gc {
    /// As messages name it ("GC 9.4.3").
    pub name: &'static str,
    pub generation: Generation,
    /// Where Linux puts the KIQ, HIQ and user queues.
    pub doorbells: DoorbellPlan,
    /// `adev->vm_manager.first_kfd_vmid`.
    pub first_kfd_vmid: u32,
    /// `qpd->sh_mem_config` and `qpd->sh_mem_bases` (`update_qpd_v9()`).
    pub qpd_sh_mem_config: u32,
    pub qpd_sh_mem_bases: u32,
    /// GC 9.4.3: `init_mqd_v9_4_3()` (one MQD per XCC, stride, logical
    /// XCC ids) and the MEC halted before each KIQ is loaded
    /// (`gfx_v9_4_3_xcc_cp_resume()`); GC 9.4.2: `init_mqd()` and the KIQ
    /// loaded into the MEC still halted from reset (`gfx_v9_0_cp_resume()`).
    pub multi_xcc: bool,
    /// The GFXHUB whose contexts the direct and KIQ mappings point at the
    /// process tables.
    pub gfxhub: &'static barebell::gmc::hub::v9::HubV9Regs,
    /// `RunlistConfig` for this GC with `amdgpu_queues` taken by amdgpu.
    pub runlist: fn(u64) -> RunlistConfig,
}

/// GC 9.4.3 (MI300X, MI308X).
pub const GC_9_4_3: V9Gc = V9Gc {
    name: "GC 9.4.3",
    generation: Generation::Gfx94,
    doorbells: DoorbellPlan::LAYOUT1,
    first_kfd_vmid: runlist::FIRST_KFD_VMID_GC_9_4_3,
    qpd_sh_mem_config: barebell::gfx::init_v9_4_3::qpd_sh_mem_config().into_bits(),
    qpd_sh_mem_bases: barebell::gfx::init_v9_4_3::qpd_sh_mem_bases().into_bits(),
    multi_xcc: true,
    gfxhub: &barebell::gmc::hub::v9::GFXHUB_1_2,
    runlist: gc_9_4_3_runlist,
};

fn gc_9_4_3_runlist(amdgpu_queues: u64) -> RunlistConfig {
    RunlistConfig::gc_9_4_3(0, amdgpu_queues)
}

/// GC 9.4.2 (Aldebaran: MI210).
pub const GC_9_4_2: V9Gc = V9Gc {
    name: "GC 9.4.2",
    generation: Generation::Gfx90a,
    doorbells: DoorbellPlan::VEGA20,
    first_kfd_vmid: barebell::gfx::start_v9_0::FIRST_KFD_VMID as u32,
    qpd_sh_mem_config: barebell::gfx::start_v9_0::qpd_sh_mem_config().into_bits(),
    // `compute_sh_mem_bases_64bit()`: the same LDS and scratch apertures.
    qpd_sh_mem_bases: barebell::gfx::init_v9_4_3::qpd_sh_mem_bases().into_bits(),
    multi_xcc: false,
    gfxhub: &barebell::gmc::hub::v9::GFXHUB_1_0,
    runlist: gc_9_4_2_runlist,
};

/// KFD's runlist defaults on GC 9.4.2: GC 9.4.3's
/// ([`RunlistConfig::with_doorbell_range`] says which are shared) with
/// vega20's MEC doorbell range.
fn gc_9_4_2_runlist(amdgpu_queues: u64) -> RunlistConfig {
    let r = DoorbellPlan::VEGA20.mec_range(0);
    RunlistConfig::gc_9_4_3(0, amdgpu_queues).with_doorbell_range(r.lower_bytes, r.upper_bytes)
}

impl V9Gc {
    /// The user queue's doorbell: the first of the plan's user-queue
    /// block, 64-bit index.
    pub const fn user_doorbell(&self) -> u32 {
        self.doorbells.userqueue_start
    }

    /// The HIQ's doorbell, 64-bit index.
    pub const fn hiq_doorbell(&self) -> u32 {
        self.doorbells.hiq
    }
}

pub use crate::error::XccError;

fn doorbell(a: &DoorbellAperture, index: u32) -> Result<barebell::aql::Doorbell, XccError> {
    a.doorbell(index)
        .map_err(|error| XccError::Doorbell { index, error })
}

/// One XCC's running KIQ.
pub struct XccKiq<'p, C, P> {
    pub xcc: usize,
    pub kiq: Kiq<'p, C, P, KIQ_RING>,
    /// The MQD its HQD was loaded from.
    pub mqd: V9Mqd,
    /// The queue mask its SET_RESOURCES carried.
    pub queue_mask: u64,
}

impl<C, P> core::fmt::Debug for XccKiq<'_, C, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("XccKiq")
            .field("xcc", &self.xcc)
            .field("queue_mask", &self.queue_mask)
            .finish_non_exhaustive()
    }
}

/// The SET_RESOURCES queue mask naming `slots` of MEC 1
/// (`amdgpu_gfx_enable_kcq()`: one bit per queue the KIQ will map,
/// `amdgpu_queue_mask_bit_to_set_resource_bit()`).
pub fn queue_mask(slots: &[HqdSlot]) -> u64 {
    slots.iter().fold(0u64, |m, s| {
        let bit = set_resource_bit(
            u32::from(s.pipe_id / hqd_v9::PIPES_PER_MEC),
            u32::from(s.pipe_id % hqd_v9::PIPES_PER_MEC),
            u32::from(s.queue_id),
        );
        m | 1u64.checked_shl(bit).unwrap_or(0)
    })
}

/// Brings up the KIQ of every XCC in `xccs` (XCC `n` = `xccs[n]`) the way
/// `gfx_v9_4_3_xcc_cp_resume()` does, XCC by XCC: GUI-idle interrupts off,
/// the MEC halted, the KIQ's HQD loaded (`gfx_v9_4_3_xcc_kiq_resume()`),
/// the MEC released (the top of `gfx_v9_4_3_xcc_kcq_resume()`), then
/// SET_RESOURCES with `queue_mask` ([`queue_mask`]; what
/// `amdgpu_gfx_enable_kcq()` sends there) and GUI-idle interrupts on
/// ([`barebell::gfx::start_v9_4_3::cp_resume`] with the KIQ as its hooks).
/// Stops at the first failure.
#[allow(clippy::too_many_arguments)]
pub fn kiqs_up<'p, B, C, P>(
    gc: V9Gc,
    xccs: &[Block<'_, B>],
    area: &mut DeviceArena<'p>,
    doorbells: &DoorbellAperture,
    clock: C,
    pause: P,
    queue_mask: u64,
    presence: Option<barebell::bus::Presence<'p>>,
) -> Result<Vec<XccKiq<'p, C, P>>, XccError>
where
    B: RegisterBus + ?Sized,
    C: Clock + Copy,
    P: Pause + Clone,
{
    let mut hooks = KiqHooks {
        gc,
        xccs,
        area,
        doorbells,
        clock,
        pause,
        queue_mask,
        presence,
        loaded: None,
        out: Vec::with_capacity(xccs.len()),
        error: None,
    };
    let r = if gc.multi_xcc {
        barebell::gfx::start_v9_4_3::cp_resume(xccs, &clock, &mut hooks)
    } else {
        match xccs {
            [one] => barebell::gfx::start_v9_0::cp_resume(one, &clock, &mut hooks),
            _ => Err(StartError::Step {
                xcc: 0,
                step: "one GC (GC 9.4.2 has no XCCs)",
            }),
        }
    };
    match r {
        Ok(()) => Ok(hooks.out),
        Err(e) => Err(hooks.error.take().unwrap_or(XccError::Start(e))),
    }
}

/// The KIQ as [`barebell::gfx::start_v9_4_3::cp_resume`]'s hooks: loaded
/// while the MEC is halted, given SET_RESOURCES once it runs.
struct KiqHooks<'a, 'b, 'p, B: ?Sized, C, P> {
    gc: V9Gc,
    xccs: &'a [Block<'b, B>],
    area: &'a mut DeviceArena<'p>,
    doorbells: &'a DoorbellAperture,
    clock: C,
    pause: P,
    queue_mask: u64,
    presence: Option<barebell::bus::Presence<'p>>,
    /// The KIQ loaded on the current XCC, waiting for its MEC to run.
    loaded: Option<(KiqV9Parts<'p, KIQ_RING>, V9Mqd)>,
    out: Vec<XccKiq<'p, C, P>>,
    /// The failure behind a hook's `StartError::Step`.
    error: Option<XccError>,
}

impl<'p, B, C, P> KiqHooks<'_, '_, 'p, B, C, P>
where
    B: RegisterBus + ?Sized,
    C: Clock + Copy,
    P: Pause + Clone,
{
    fn fail(&mut self, xcc: usize, step: &'static str, e: XccError) -> StartError {
        self.error = Some(e);
        StartError::Step { xcc, step }
    }

    /// `gfx_v9_4_3_xcc_kiq_resume()`: the KIQ's memory and its HQD.
    fn load(&mut self, xcc: usize) -> Result<(KiqV9Parts<'p, KIQ_RING>, V9Mqd), XccError> {
        let gc = self
            .xccs
            .get(xcc)
            .ok_or(XccError::Hqd(HqdV9Error::MissingXcc { xcc }))?;
        let parts = KiqV9Parts {
            ring: self.area.put(KiqMemory::<KIQ_RING>::new())?,
            mqd: self.area.put(MqdPage::new())?,
            eop: self.area.put(EopBuffer::new())?,
            doorbell_index: self.gc.doorbells.kiq_doorbell(xcc as u32),
            mec_range: self.gc.doorbells.mec_range(xcc as u32),
        };
        let mqd = kiq_resume(*gc, &self.clock, xcc, &parts)
            .map_err(|error| XccError::Kiq { xcc, error })?;
        Ok((parts, mqd))
    }

    /// The KIQ's client, then SET_RESOURCES through it.
    fn enable(&mut self, xcc: usize) -> Result<XccKiq<'p, C, P>, XccError> {
        let (parts, mqd) = self.loaded.take().ok_or(XccError::NoKiq { xcc })?;
        let ring = KiqRing {
            memory: parts.ring,
            doorbell: doorbell(self.doorbells, parts.doorbell_index)?,
        };
        let mut kiq = Kiq::new(
            ring,
            self.clock,
            self.pause.clone(),
            self.gc.generation,
            Doorbells::linux_default(),
        )
        .map_err(XccError::RingInUse)?;
        kiq.timeout_ns = BOUND_NS;
        if let Some(p) = self.presence {
            kiq.set_presence(p);
        }
        kiq.submit("SET_RESOURCES", &set_resources(self.queue_mask))
            .map_err(|error| XccError::KiqPacket { xcc, error })?;
        Ok(XccKiq {
            xcc,
            kiq,
            mqd,
            queue_mask: self.queue_mask,
        })
    }
}

impl<B, C, P> CpResumeHooks for KiqHooks<'_, '_, '_, B, C, P>
where
    B: RegisterBus + ?Sized,
    C: Clock + Copy,
    P: Pause + Clone,
{
    fn kiq(&mut self, xcc: usize) -> Result<(), StartError> {
        match self.load(xcc) {
            Ok(l) => {
                self.loaded = Some(l);
                Ok(())
            }
            Err(e) => Err(self.fail(xcc, "KIQ load", e)),
        }
    }

    fn queues(&mut self, xcc: usize) -> Result<(), StartError> {
        match self.enable(xcc) {
            Ok(k) => {
                self.out.push(k);
                Ok(())
            }
            Err(e) => Err(self.fail(xcc, "KIQ SET_RESOURCES", e)),
        }
    }
}

/// Takes every XCC's KIQ down (`gfx_v9_4_3_xcc_q_fini_register()` on its
/// slot), in XCC order; the clients are dropped first, releasing their
/// rings. Stops at the first failure.
pub fn kiqs_down<B, C, KC, KP>(
    xccs: &[Block<'_, B>],
    kiqs: Vec<XccKiq<'_, KC, KP>>,
    clock: &C,
) -> Result<(), XccError>
where
    B: RegisterBus + ?Sized,
    C: Clock + ?Sized,
{
    let on: Vec<usize> = kiqs.iter().map(|k| k.xcc).collect();
    drop(kiqs);
    for xcc in on {
        let gc = *xccs
            .get(xcc)
            .ok_or(XccError::Hqd(HqdV9Error::MissingXcc { xcc }))?;
        kiq_fini(gc, clock, xcc).map_err(|error| XccError::Kiq { xcc, error })?;
    }
    Ok(())
}

/// The HWS client over the HIQ.
pub type HwsClient<'p, C, P> = Hws<'p, C, P, HIQ_RING>;

/// An AQL queue over `xccs` XCCs, placed and (once a `map_*` returned)
/// mapped.
pub struct XccQueue<'p, C, P> {
    pub gc: V9Gc,
    pub queue: AqlQueue<'p, SLOTS>,
    pub memory: Dev<'p, QueueMemory<SLOTS>>,
    pub signal: Dev<'p, SignalMemory>,
    pub mqds: Dev<'p, XccMqdPages>,
    pub eop: Dev<'p, EopBuffer>,
    /// The 64-bit doorbell index every XCC's MQD names.
    pub doorbell: u32,
    pub xccs: usize,
    /// Where the MQDs are, once built by a `map_*` call.
    pub layout: Option<XccMqds>,
    pub mapping: Option<Mapping>,
    /// The HWS client (hws mapping): UNMAP_QUEUES goes through it.
    pub hws: Option<HwsClient<'p, C, P>>,
    /// The HIQ (hws mapping), destroyed after the queue is unmapped.
    pub hiq: Option<(HiqParts<'p>, usize)>,
}

impl<C, P> core::fmt::Debug for XccQueue<'_, C, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("XccQueue")
            .field("doorbell", &self.doorbell)
            .field("xccs", &self.xccs)
            .field("layout", &self.layout)
            .field("mapping", &self.mapping)
            .finish_non_exhaustive()
    }
}

/// Places the user queue's memory and binds the AQL queue to its
/// doorbell (`USER_DOORBELL`); nothing reaches the device yet.
pub fn place_queue<'p, C, P>(
    gc: V9Gc,
    area: &mut DeviceArena<'p>,
    uarea: &mut DeviceArena<'p>,
    doorbells: &DoorbellAperture,
    xccs: usize,
) -> Result<XccQueue<'p, C, P>, XccError> {
    // Ring, pointers, EOP buffer and signal in `uarea` (the process
    // tables): `set_queue_properties_from_user()` in `kfd_chardev.c`
    // takes them from user memory. The MQDs in `area` (VMID0 only):
    // `allocate_mqd()` in `kfd_mqd_manager_v9.c` takes them from
    // `amdgpu_amdkfd_alloc_gtt_mem()`.
    let memory = uarea.put(QueueMemory::<SLOTS>::new())?;
    let mqds = area.put(XccMqdPages::new())?;
    let eop = uarea.put(EopBuffer::new())?;
    let signal = uarea.put(SignalMemory::new(1))?;
    let db = doorbell(doorbells, gc.user_doorbell())?;
    let queue = AqlQueue::new(
        memory.get(),
        db,
        // Profiling on, as the gfx11/gfx12 user queue (`queue.rs`): the
        // CP stamps start and end into the completion signal, which
        // `barebell latency` reads as cp_launch/cp_exec.
        QueueConfig {
            profiling: true,
            ..Default::default()
        },
    )
    .map_err(|_| XccError::State {
        what: "the AQL queue memory could not be bound to its doorbell",
    })?;
    Ok(XccQueue {
        gc,
        queue,
        memory,
        signal,
        mqds,
        eop,
        doorbell: gc.user_doorbell(),
        xccs,
        layout: None,
        mapping: None,
        hws: None,
        hiq: None,
    })
}

impl<'p, C: Clock, P: Pause> XccQueue<'p, C, P> {
    /// The queue as `init_mqd()`/`update_mqd()` take it.
    pub fn aql(&self, vmid: u8) -> MqdQueue {
        MqdQueue {
            ring_address: self.memory.ring_address(),
            ring_bytes: (SLOTS * 64) as u64,
            read_index_address: self.memory.read_index_address(),
            write_index_address: self.memory.write_index_address(),
            eop_address: self.eop.address(),
            eop_bytes: barebell::gfx::mqd::EOP_BYTES,
            vmid,
            ctx_save: None,
        }
    }

    /// `init_mqd_v9_4_3()` for this queue: one MQD per XCC, the shared
    /// doorbell checked against Linux's ranges, logical XCC 0 first. The
    /// `map_*` calls run it; [`map_kiq_built`] takes its result.
    pub fn build(&mut self, vmid: u8) -> Result<XccMqds, XccError> {
        if self.mapping.is_some() {
            return Err(XccError::State {
                what: "the user queue is already mapped",
            });
        }
        if !self.gc.multi_xcc {
            return self.build_one(vmid);
        }
        let plan = self.gc.doorbells;
        let ranges: Vec<MecDoorbellRange> =
            (0..self.xccs as u32).map(|x| plan.mec_range(x)).collect();
        let layout = self.mqds.init(
            &self.aql(vmid),
            self.xccs,
            0,
            XccDoorbell::Shared {
                dword: self.doorbell.saturating_mul(2),
            },
            &ranges,
        )?;
        self.layout = Some(layout);
        Ok(layout)
    }

    /// `init_mqd()` then `update_mqd()` for a one-GC part (GC 9.4.2,
    /// `mqd_manager_init_v9()`'s generic path): one MQD, none of
    /// `init_mqd_v9_4_3()`'s per-XCC fields, its doorbell checked against
    /// the MEC's one range.
    fn build_one(&mut self, vmid: u8) -> Result<XccMqds, XccError> {
        let dword = self.doorbell.saturating_mul(2);
        let range = self.gc.doorbells.mec_range(0);
        if self.xccs != 1 {
            return Err(XccError::State {
                what: "a one-GC part's queue spans more than one GC",
            });
        }
        if !range.contains_dword(dword) {
            return Err(XccError::Mqd(
                barebell::gfx::mqd_v9::MqdV9Error::DoorbellOutsideRange {
                    xcc: 0,
                    dword,
                    range,
                },
            ));
        }
        let m = init_mqd(self.mqds.address(), dword, &self.aql(vmid))?;
        let address = self.mqds.write(0, &m).ok_or(XccError::State {
            what: "the MQD page cannot hold the MQD",
        })?;
        let layout = XccMqds {
            address,
            stride: MQD_STRIDE,
            xccs: 1,
        };
        self.layout = Some(layout);
        Ok(layout)
    }

    /// The barrier a first submission sends: no dependencies, this
    /// queue's signal, system-scope fences.
    pub fn barrier(&self) -> Result<BarrierPacket, XccError> {
        BarrierPacket::new(BarrierKind::And, &[], self.signal.handle(), Fences::SYSTEM).map_err(
            |_| XccError::State {
                what: "the barrier packet could not be built",
            },
        )
    }

    /// Resets an HWS-mapped queue in place (`reset_queues_cpsch()`):
    /// see [`MappedRef::reset`].
    pub fn reset(&mut self) -> Result<bool, XccError> {
        self.mapped_ref().reset()
    }

    fn mapped_ref(&mut self) -> MappedRef<'_, 'p, C, P> {
        MappedRef {
            gc: self.gc,
            mqds: &self.mqds,
            doorbell: self.doorbell,
            xccs: self.xccs,
            layout: self.layout,
            mapping: &mut self.mapping,
            hws: &mut self.hws,
            hiq: &mut self.hiq,
        }
    }

    /// Takes the queue off every XCC, by the way it was mapped. `xccs`
    /// (direct) are the GC blocks, `kiqs` (kiq) the XCCs' KIQs.
    pub fn unmap<B: RegisterBus + ?Sized, KC: Clock, KP: Pause>(
        &mut self,
        xccs: &[Block<'_, B>],
        kiqs: &mut [XccKiq<'_, KC, KP>],
        clock: &C,
    ) -> Result<(), XccError> {
        self.mapped_ref().unmap(xccs, kiqs, clock)
    }

    /// The AQL queue and its signal for a caller that submits, and the
    /// rest ([`XccMapped`]) for the one that unmaps.
    pub fn split(
        self,
    ) -> (
        AqlQueue<'p, SLOTS>,
        Dev<'p, SignalMemory>,
        XccMapped<'p, C, P>,
    ) {
        (
            self.queue,
            self.signal,
            XccMapped {
                gc: self.gc,
                memory: self.memory,
                mqds: self.mqds,
                eop: self.eop,
                doorbell: self.doorbell,
                xccs: self.xccs,
                layout: self.layout,
                mapping: self.mapping,
                hws: self.hws,
                hiq: self.hiq,
            },
        )
    }
}

/// A mapped user queue without its AQL queue and signal
/// ([`XccQueue::split`]): what unmapping it needs.
pub struct XccMapped<'p, C, P> {
    pub gc: V9Gc,
    pub memory: Dev<'p, QueueMemory<SLOTS>>,
    pub mqds: Dev<'p, XccMqdPages>,
    pub eop: Dev<'p, EopBuffer>,
    pub doorbell: u32,
    pub xccs: usize,
    pub layout: Option<XccMqds>,
    pub mapping: Option<Mapping>,
    pub hws: Option<HwsClient<'p, C, P>>,
    pub hiq: Option<(HiqParts<'p>, usize)>,
}

impl<C, P> core::fmt::Debug for XccMapped<'_, C, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("XccMapped")
            .field("doorbell", &self.doorbell)
            .field("xccs", &self.xccs)
            .field("mapping", &self.mapping)
            .finish_non_exhaustive()
    }
}

impl<'p, C: Clock, P: Pause> XccMapped<'p, C, P> {
    /// Resets an HWS-mapped queue in place (`reset_queues_cpsch()`):
    /// see [`MappedRef::reset`].
    pub fn reset(&mut self) -> Result<bool, XccError> {
        self.mapped_ref().reset()
    }

    fn mapped_ref(&mut self) -> MappedRef<'_, 'p, C, P> {
        MappedRef {
            gc: self.gc,
            mqds: &self.mqds,
            doorbell: self.doorbell,
            xccs: self.xccs,
            layout: self.layout,
            mapping: &mut self.mapping,
            hws: &mut self.hws,
            hiq: &mut self.hiq,
        }
    }

    /// As [`XccQueue::unmap`].
    pub fn unmap<B: RegisterBus + ?Sized, KC: Clock, KP: Pause>(
        &mut self,
        xccs: &[Block<'_, B>],
        kiqs: &mut [XccKiq<'_, KC, KP>],
        clock: &C,
    ) -> Result<(), XccError> {
        self.mapped_ref().unmap(xccs, kiqs, clock)
    }
}

/// What unmapping reads and clears, borrowed from either owner.
struct MappedRef<'a, 'p, C, P> {
    gc: V9Gc,
    mqds: &'a Dev<'p, XccMqdPages>,
    doorbell: u32,
    xccs: usize,
    layout: Option<XccMqds>,
    mapping: &'a mut Option<Mapping>,
    hws: &'a mut Option<HwsClient<'p, C, P>>,
    hiq: &'a mut Option<(HiqParts<'p>, usize)>,
}

impl<C: Clock, P: Pause> MappedRef<'_, '_, C, P> {
    /// Resets the queue through the HWS: UNMAP_QUEUES for the process with
    /// RESET_QUEUES, fenced and checked as `reset_queues_cpsch()` →
    /// `unmap_queues_cpsch(..., reset = true)` does. The scheduler kills
    /// the queue's waves and takes it off, whether or not they drain.
    /// `Ok(false)` for a queue the HWS did not map (the KIQ and direct
    /// unmaps reset already). The HIQ stays: [`Self::unmap`] follows.
    pub fn reset(&mut self) -> Result<bool, XccError> {
        if *self.mapping != Some(Mapping::Hws) {
            return Ok(false);
        }
        let hws = self.hws.as_mut().ok_or(XccError::State {
            what: "the HWS client is gone",
        })?;
        hws.unmap_queues(UnmapFilter::Pasid(PASID), true)?;
        hws.fence()?;
        if let Some((parts, n)) = self.hiq.as_ref() {
            check_preemption_failed(&parts.mqds, *n)?;
        }
        Ok(true)
    }

    /// Takes the queue off every XCC, by the way it was mapped. `xccs`
    /// (direct) are the GC blocks, `kiqs` (kiq) the XCCs' KIQs.
    pub fn unmap<B: RegisterBus + ?Sized, KC: Clock, KP: Pause>(
        &mut self,
        xccs: &[Block<'_, B>],
        kiqs: &mut [XccKiq<'_, KC, KP>],
        clock: &C,
    ) -> Result<(), XccError> {
        let layout = self.layout.ok_or(XccError::State {
            what: "the user queue is not mapped",
        })?;
        match *self.mapping {
            None => {
                return Err(XccError::State {
                    what: "the user queue is not mapped",
                });
            }
            Some(Mapping::Direct) => {
                hqd_v9::destroy_mqd_v9_4_3(
                    xccs,
                    clock,
                    &self.mqds.bytes(),
                    &layout,
                    USER_SLOT,
                    BOUND_NS,
                )?;
            }
            Some(Mapping::Kiq) => {
                for xcc in 0..self.xccs {
                    let k = kiq_of(kiqs, xcc)?;
                    // gfx_v9_4_3_kiq_unmap_queues() with RESET_QUEUES, as
                    // amdgpu_gfx_disable_kcq() sends it.
                    let p = pm4::unmap_queues(
                        unmap_action::RESET_QUEUES,
                        false,
                        self.doorbell.saturating_mul(2),
                        (0, 0),
                    );
                    k.kiq
                        .submit("UNMAP_QUEUES", &p)
                        .map_err(|error| XccError::KiqPacket { xcc, error })?;
                }
            }
            Some(Mapping::Mes) => {
                return Err(XccError::State {
                    what: "GC 9 has no MES: no queue here was mapped by it",
                });
            }
            Some(Mapping::Hws) => {
                let hws = self.hws.as_mut().ok_or(XccError::State {
                    what: "the HWS client is gone",
                })?;
                // unmap_queues_cpsch(): UNMAP_QUEUES (preempt), the fence,
                // then check_preemption_failed_v9_4_3(): a queue the
                // scheduler could not preempt stays mapped, and so does
                // everything here, for a reset to take off.
                hws.unmap_queues(UnmapFilter::Pasid(PASID), false)?;
                hws.fence()?;
                if let Some((parts, n)) = self.hiq.as_ref() {
                    check_preemption_failed(&parts.mqds, *n)?;
                }
                *self.hws = None;
                unmap_hiqs(self.gc, self.hiq, kiqs)?;
            }
        }
        *self.mapping = None;
        Ok(())
    }
}

/// XCC `xcc`'s KIQ among `kiqs`.
fn kiq_of<'a, 'p, KC, KP>(
    kiqs: &'a mut [XccKiq<'p, KC, KP>],
    xcc: usize,
) -> Result<&'a mut XccKiq<'p, KC, KP>, XccError> {
    kiqs.iter_mut()
        .find(|k| k.xcc == xcc)
        .ok_or(XccError::NoKiq { xcc })
}

/// stop_cpsch() → kernel_queue_uninitialize() → `destroy_hiq_mqd_v9_4_3()`:
/// on each XCC whose HIQ was mapped, `amdgpu_amdkfd_unmap_hiq()`, an
/// UNMAP_QUEUES (`RESET_QUEUES`) naming the HIQ's doorbell on that XCC's
/// KIQ, waited for. `hiq` is cleared once every one is unmapped.
fn unmap_hiqs<KC: Clock, KP: Pause>(
    gc: V9Gc,
    hiq: &mut Option<(HiqParts<'_>, usize)>,
    kiqs: &mut [XccKiq<'_, KC, KP>],
) -> Result<(), XccError> {
    let Some((_, mapped)) = *hiq else {
        return Ok(());
    };
    for xcc in 0..mapped {
        let k = kiq_of(kiqs, xcc)?;
        let p = pm4::unmap_queues(
            unmap_action::RESET_QUEUES,
            false,
            gc.hiq_doorbell().saturating_mul(2),
            (0, 0),
        );
        k.kiq
            .submit("UNMAP_QUEUES (HIQ)", &p)
            .map_err(|error| XccError::KiqPacket { xcc, error })?;
    }
    *hiq = None;
    Ok(())
}

/// `load_mqd_v9_4_3()`: the queue's MQDs loaded into [`USER_SLOT`] of
/// every XCC in VMID `vmid` (whose GFXHUB context the caller pointed at
/// the process tables); on GC 9.4.2 `load_mqd()`, whose
/// `kgd_gfx_v9_hqd_load()` copies a shorter window
/// ([`hqd_v9::HqdWindow::Gfx9`]).
pub fn map_direct<B: RegisterBus + ?Sized, C: Clock, P: Pause>(
    q: &mut XccQueue<'_, C, P>,
    xccs: &[Block<'_, B>],
    vmid: u8,
) -> Result<XccMqds, XccError> {
    let layout = q.build(vmid)?;
    hqd_v9::load_mqds(
        xccs,
        &q.mqds.bytes(),
        &layout,
        USER_SLOT,
        Some(q.memory.write_index_address()),
        if q.gc.multi_xcc {
            hqd_v9::HqdWindow::Gc9_4_3
        } else {
            hqd_v9::HqdWindow::Gfx9
        },
    )?;
    q.mapping = Some(Mapping::Direct);
    Ok(layout)
}

/// MAP_QUEUES on each XCC's KIQ naming that XCC's MQD, on [`USER_SLOT`],
/// with the MQD's VMID (`gfx_v9_4_3_kiq_map_queues()`'s packet; KFD's
/// `kgd_gfx_v9_hiq_mqd_load()` fills the VMID from the MQD likewise).
pub fn map_kiq<C: Clock, P: Pause, KC: Clock, KP: Pause>(
    q: &mut XccQueue<'_, C, P>,
    kiqs: &mut [XccKiq<'_, KC, KP>],
    vmid: u8,
) -> Result<XccMqds, XccError> {
    let layout = q.build(vmid)?;
    map_kiq_built(q, kiqs, vmid, layout)
}

/// [`map_kiq`]'s MAP_QUEUES for MQDs already built
/// ([`XccQueue::build`]).
pub fn map_kiq_built<C: Clock, P: Pause, KC: Clock, KP: Pause>(
    q: &mut XccQueue<'_, C, P>,
    kiqs: &mut [XccKiq<'_, KC, KP>],
    vmid: u8,
    layout: XccMqds,
) -> Result<XccMqds, XccError> {
    let me_pipe = USER_SLOT.pipe_id % hqd_v9::PIPES_PER_MEC;
    for xcc in 0..q.xccs {
        let k = kiq_of(kiqs, xcc)?;
        let mqd = layout.address_of(xcc).ok_or(XccError::State {
            what: "no MQD for an XCC of the queue",
        })?;
        let mut p = pm4::map_queues(
            QueueEngine::Compute,
            me_pipe,
            USER_SLOT.queue_id,
            q.doorbell.saturating_mul(2),
            mqd,
            q.memory.write_index_address(),
        );
        // gfx9 numbers the ME field from MEC 1 = 0
        // (`PACKET3_MAP_QUEUES_ME((ring->me == 1 ? 0 : 1))` in
        // `gfx_v9_4_3_kiq_map_queues()`); gfx11's packet writes 1 there.
        p[1] = MapQueuesCntl::from_bits(p[1])
            .with_me(USER_SLOT.pipe_id / hqd_v9::PIPES_PER_MEC)
            .with_vmid(vmid)
            .into_bits();
        k.kiq
            .submit("MAP_QUEUES", &p)
            .map_err(|error| XccError::KiqPacket { xcc, error })?;
    }
    q.mapping = Some(Mapping::Kiq);
    Ok(layout)
}

/// The HIQ's ring, its MQDs (one per XCC, [`MQD_STRIDE`] apart), read
/// pointer and runlist IB.
#[derive(Debug, Clone, Copy)]
pub struct HiqParts<'p> {
    pub ring: Dev<'p, HiqMemory<HIQ_RING>>,
    pub mqds: Dev<'p, XccMqdPages>,
    pub eop: Dev<'p, EopBuffer>,
    pub rptr: Dev<'p, AtomicU64>,
    pub ib: Dev<'p, RunlistIb<RUNLIST_DWORDS>>,
}

/// KFD's HIQ MQD for logical XCC `xcc` (`init_mqd_hiq_v9_4_3()`: per
/// XCC, `init_mqd()` at `xcc * kfd_hiq_mqd_stride()` then PRIV_STATE and
/// KMD_QUEUE, `NO_UPDATE_RPTR` on every XCC but the master, XCC 0, and
/// `cp_mqd_stride_size`; a PM4 queue: no AQL control, no slot write
/// pointer, the ring's own read/write pointers), VMID 0. Every XCC's HIQ
/// is the same queue: one ring, one doorbell.
pub fn hiq_mqd(parts: &HiqParts<'_>, xcc: usize, doorbell_dword: u32) -> Result<V9Mqd, XccError> {
    let q = MqdQueue {
        ring_address: parts.ring.ring_address(),
        ring_bytes: (HIQ_RING * 4) as u64,
        read_index_address: parts.rptr.address(),
        write_index_address: parts.ring.wptr_address(),
        eop_address: parts.eop.address(),
        eop_bytes: barebell::gfx::mqd::EOP_BYTES,
        vmid: 0,
        ctx_save: None,
    };
    let address = parts
        .mqds
        .address()
        .saturating_add(MQD_STRIDE.saturating_mul(xcc as u64));
    let mut m = init_mqd(address, doorbell_dword, &q)?;
    // What init_mqd()/update_mqd() set only for AQL queues comes off:
    // `init_mqd()` sets `DOORBELL_BIF_DROP` only `if (q->format ==
    // KFD_QUEUE_FORMAT_AQL)`, and the HIQ is a PM4 queue.
    m.hqd.cp_hqd_pq_doorbell_control =
        barebell::gfx::mqd::DoorbellControl::from_bits(m.hqd.cp_hqd_pq_doorbell_control)
            .with_doorbell_bif_drop(false)
            .into_bits();
    m.hqd.cp_hqd_aql_control = 0;
    m.hqd.cp_hqd_pq_control = PqControl::from_bits(m.hqd.cp_hqd_pq_control)
        // "Set no_update_rptr = 0 in Master XCC" (init_mqd_hiq_v9_4_3()).
        .with_no_update_rptr(xcc != 0)
        .with_slot_based_wptr(0)
        .with_queue_full_en(false)
        .with_wpp_clamp_en(false)
        .with_priv_state(true)
        .with_kmd_queue(true)
        .into_bits();
    m.cp_mqd_stride_size = MQD_STRIDE as u32;
    Ok(m)
}

/// The HWS path: the HIQ mapped on every XCC through that XCC's KIQ
/// (`hiq_load_mqd_kiq_v9_4_3()`: `kgd_gfx_v9_hiq_mqd_load()` per XCC, each
/// naming its own MQD), then on the HIQ SET_RESOURCES with KFD's VMIDs
/// (3..15 on GC 9.4.3) and `hws_mask`, a runlist of one process (PASID
/// [`PASID`], page-table base `page_table_base` as `amdgpu_gmc_pd_addr()`
/// makes it) with this queue, RUN_LIST, each fenced.
#[allow(clippy::too_many_arguments)]
pub fn map_hws<'p, C: Clock + Copy, P: Pause + Clone, KC: Clock, KP: Pause>(
    q: &mut XccQueue<'p, C, P>,
    kiqs: &mut [XccKiq<'_, KC, KP>],
    area: &mut DeviceArena<'p>,
    doorbells: &DoorbellAperture,
    clock: C,
    pause: P,
    hws_mask: u64,
    page_table_base: u64,
    presence: Option<barebell::bus::Presence<'p>>,
) -> Result<XccMqds, XccError> {
    let layout = q.build(0)?;
    let parts = HiqParts {
        ring: area.put(HiqMemory::<HIQ_RING>::new())?,
        mqds: area.put(XccMqdPages::new())?,
        eop: area.put(EopBuffer::new())?,
        rptr: area.put(AtomicU64::new(0))?,
        ib: area.put(RunlistIb::<RUNLIST_DWORDS>::new())?,
    };
    let gc = q.gc;
    let hiq_dword = gc.hiq_doorbell().saturating_mul(2);
    // Every MQD in place before the first MAP_QUEUES names one.
    let mut mqds = Vec::with_capacity(q.xccs);
    for xcc in 0..q.xccs {
        let m = hiq_mqd(&parts, xcc, hiq_dword)?;
        let at = parts.mqds.write(xcc, &m).ok_or(XccError::State {
            what: "more XCCs than the HIQ's MQD pages hold",
        })?;
        mqds.push((xcc, at, m));
    }
    // The HIQ goes into the caller's queue at once, so that a failure
    // below still unmaps the HIQs that were mapped.
    q.hiq = Some((parts, 0));
    for (xcc, at, m) in mqds {
        let k = kiq_of(kiqs, xcc)?;
        let p = kiq_map_hiq(
            KFD_HIQ_PIPE_ID,
            u32::from(hqd_v9::PIPES_PER_MEC),
            KFD_HIQ_QUEUE,
            m.hqd.cp_hqd_vmid,
            hiq_dword,
            at,
            parts.ring.wptr_address(),
        );
        k.kiq
            .submit("MAP_QUEUES (HIQ)", &p)
            .map_err(|error| XccError::KiqPacket { xcc, error })?;
        q.hiq = Some((parts, xcc + 1));
    }
    let ring = HiqRing {
        memory: parts.ring,
        doorbell: doorbell(doorbells, gc.hiq_doorbell())?,
    };
    let mut hws = Hws::new(ring, clock, pause)?;
    hws.timeout_ns = BOUND_NS;
    if let Some(p) = presence {
        hws.set_presence(p);
    }
    let vmids = runlist::compute_vmid_bitmap(gc.first_kfd_vmid);
    hws.set_resources(&SchedulingResources::kfd(vmids, hws_mask))?;
    let queues = [QueueDesc::compute(
        q.doorbell.saturating_mul(2),
        layout.address,
        q.memory.write_index_address(),
    )];
    let procs = [ProcessQueues {
        process: kfd_process(gc, page_table_base),
        queues: &queues,
    }];
    let cfg = (gc.runlist)(!hws_mask & runlist::queue_mask(4, 8, 0));
    let rl = parts
        .ib
        .fill(|ib, at| runlist::build(&cfg, &procs, ib, at))?;
    hws.run_list(&rl)?;
    q.hws = Some(hws);
    q.mapping = Some(Mapping::Hws);
    Ok(layout)
}

/// KFD's one process as the runlist's MAP_PROCESS names it: PASID
/// [`PASID`], its root `page_table_base`, and the apertures
/// `update_qpd_v9()` gives a GC 9.4.3 process
/// ([`barebell::gfx::init_v9_4_3::qpd_sh_mem_config`], `_bases`).
pub fn kfd_process(gc: V9Gc, page_table_base: u64) -> ProcessDesc {
    let mut p = ProcessDesc::new(PASID, page_table_base);
    p.sh_mem_config = gc.qpd_sh_mem_config;
    p.sh_mem_bases = gc.qpd_sh_mem_bases;
    p
}

/// The KIQ client type the bring-up's rings step would hold per XCC.
pub type XccKiqClient<'p> = XccKiq<'p, crate::rings::ClockRef<'p>, crate::rings::Pauser<'p>>;
/// The user queue type the bring-up's queue step would hold.
pub type GpuXccQueue<'p> = XccQueue<'p, crate::rings::ClockRef<'p>, crate::rings::Pauser<'p>>;

/// Glue for the rings step on GC 9.4.3: [`kiqs_up`] on every live XCC of
/// `gpu` (`Ips::xccs()`, logical order), with the platform's clock,
/// pause and doorbell aperture, and SET_RESOURCES naming [`USER_SLOT`].
/// Compiled, not yet run: no device composes the CP block
/// (`barebell_model::mec_v9_4_3`) yet; the rig in
/// tests/harness/tests/mec_v9_4_3.rs runs [`kiqs_up`] itself.
pub fn rings_gfx94<'p>(
    gc: V9Gc,
    gpu: &crate::Gpu<'p>,
    area: &mut DeviceArena<'p>,
) -> Result<Vec<XccKiqClient<'p>>, XccError> {
    let p = gpu.platform;
    let xcc_ips = gpu.ips.xccs();
    let xccs: Vec<_> = xcc_ips.iter().map(|x| gpu.bus.block(x.bases)).collect();
    kiqs_up(
        gc,
        &xccs,
        area,
        &gpu.doorbells,
        p.clock(),
        crate::rings::Pauser(p),
        queue_mask(&[USER_SLOT]),
        crate::recover::presence(gpu),
    )
}

/// Glue for the queue step on GC 9.4.3: places the user queue over every
/// live XCC and maps it by `mapping`. `vmid` is the VMID of a direct or
/// KIQ mapping (its GFXHUB context on every XCC must already point at
/// the process tables, as the gfx11 queue step's `point_vmid` does);
/// `page_table_base` the process's root as `amdgpu_gmc_pd_addr()` gives
/// it (hws). The caller submits the first packet
/// ([`XccQueue::barrier`]) and tears down with [`XccQueue::unmap`]
/// then [`kiqs_down`]. Compiled, not yet run on a device (see
/// [`rings_gfx94`]).
#[allow(clippy::too_many_arguments)]
pub fn queue_gfx94<'p>(
    gc: V9Gc,
    gpu: &crate::Gpu<'p>,
    area: &mut DeviceArena<'p>,
    uarea: &mut DeviceArena<'p>,
    kiqs: &mut [XccKiqClient<'p>],
    mapping: Mapping,
    vmid: u8,
    page_table_base: u64,
) -> Result<GpuXccQueue<'p>, XccError> {
    let p = gpu.platform;
    let xcc_ips = gpu.ips.xccs();
    let xccs: Vec<_> = xcc_ips.iter().map(|x| gpu.bus.block(x.bases)).collect();
    let mut q = place_queue(gc, area, uarea, &gpu.doorbells, xccs.len())?;
    match mapping {
        Mapping::Mes => {
            return Err(XccError::State {
                what: "GC 9 has no MES (KFD schedules with the HWS on the MEC)",
            });
        }
        Mapping::Direct => {
            map_direct(&mut q, &xccs, vmid)?;
        }
        Mapping::Kiq => {
            map_kiq(&mut q, kiqs, vmid)?;
        }
        Mapping::Hws => {
            // KFD's HWS queue mask: every MEC 1 slot but amdgpu's own
            // (`USER_SLOT` stays amdgpu's here, as its KIQ maps it).
            let amdgpu = queue_mask(&[USER_SLOT]);
            let hws_mask = runlist::queue_mask(
                runlist::PIPES_PER_MEC_GC_9_4_3,
                runlist::QUEUES_PER_PIPE_GC_9_4_3,
                amdgpu,
            );
            map_hws(
                &mut q,
                kiqs,
                area,
                &gpu.doorbells,
                p.clock(),
                crate::rings::Pauser(p),
                hws_mask,
                page_table_base,
                crate::recover::presence(gpu),
            )?;
        }
    }
    Ok(q)
}
