//! After MES start: the KIQ and MES rings, one user queue mapped by the
//! chosen mode, and one AQL packet through it, on a real GPU's registers
//! and doorbell BAR. **Never run on a GPU.**
//!
//! The sequence is the model chain's (`barebell_model::chain`: gfx11 KIQ by
//! register programming as `gfx_v11_0_kiq_setting()`/`kiq_hqd::bring_up`
//! do, the scheduler ring by KIQ MAP_QUEUES as
//! `mes_v11_0_kiq_enable_queue()` has the KIQ map it; gfx12 uni-MES with pipe 1's ring by registers and
//! the scheduler ring by a `map_legacy_kq` ADD_QUEUE on pipe 1, as
//! `mes_v12_0_hw_init()` does), calling the same runtime functions. It is
//! written out here rather than shared because the model chain
//! interleaves model-only work between the same calls (finding each
//! model through the MEC once its ring is mapped, stepping the CP,
//! placing memory with `ModelGpu`, checking a kernel ran); here those
//! points are the [`Service`] hooks, which do nothing on hardware and
//! drive the models in `model_platform`'s tests. Register accesses here
//! go straight to the platform's bus: `--trace` covers the steps up to
//! MES start.
//!
//! Memory: every ring, MQD, EOP buffer, the queue and its signal are
//! placed in the DMA region's ring area, which the `gmc` step mapped at
//! VA = host address into VMID0 (where the KIQ and MES rings run, as
//! Linux's kernel rings do) and into the process page tables (where the
//! user queue runs: MES is told their root in ADD_QUEUE's process, and
//! for direct/KIQ mapping barebell writes it into [`USER_VMID`]'s context
//! as `gfxhub_v3_0_setup_vm_pt_regs()` does for KFD's VMIDs).
//!
//! The packet is an AQL BARRIER_AND with no dependencies and a completion
//! signal, not a dispatch: there is no code-object loader in barebell,
//! and a barrier launches no wavefront. Why it should complete at once:
//! the HSA runtime header this machine ships (`/usr/include/hsa/hsa.h`,
//! `hsa_barrier_and_packet_t`) documents a dependency handle of 0 as a
//! dependency the packet processor treats as met, so with all five at 0
//! nothing is waited for, and the completion signal is how the packet
//! processor reports the packet done (the CP model does the same:
//! `tests/harness/tests/aql.rs`). Whether the gfx11/gfx12 CP firmware
//! handles it like that is unverified here.

use super::chain::{HwError, Platform};
use crate::latency_target::MappingMode;
use barebell::aql::doorbell::Doorbell;
use barebell::aql::packet::{BarrierKind, BarrierPacket, Fences};
use barebell::aql::queue::{AqlQueue, QueueConfig, QueueMemory};
use barebell::aql::signal::{Condition, SignalMemory};
use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::hqd::DirectHqd;
use barebell::gfx::kiq::hqd::{KiqSlot, bring_up};
use barebell::gfx::kiq::{Kiq, KiqMemory, KiqRing};
use barebell::gfx::mapper::{HqdRegs, Mapping, QueueMapper, QueueResources};
use barebell::gfx::mes::rings::MesRingParts;
use barebell::gfx::mes::rings::load_pipe_ring;
use barebell::gfx::mes::rings::map_legacy_scheduler_ring;
use barebell::gfx::mes::rings::map_scheduler_ring;
use barebell::gfx::mes::start::MesVersions;
use barebell::gfx::mes::{
    HwBases, Mes, MesApi, MesMemory, MesRing, Process, ProcessContext, V11, V12,
};
use barebell::gfx::mqd::{EopBuffer, MqdPage};
use barebell::gmc::hub::HubRegs;
use barebell::ip::Generation;
use barebell::regs::IpBases;
use barebell::time::StdClock;
use core::ptr::NonNull;

/// What the runtime's waits call between polls.
pub type Pause = Box<dyn FnMut()>;

/// Slots of the user queue (the latency target's ring size).
pub const SLOTS: usize = crate::latency_target::SLOTS;
const KIQ_RING: usize = 256;
const MES_RING: usize = 1024;
/// Bound on each wait for the barrier (submit space, completion).
pub const BOUND_NS: u64 = 2_000_000_000;
/// The VMID a direct or KIQ-mapped user queue runs in: the first of the
/// VMIDs Linux leaves to KFD (`gmc_v11_0_sw_init()` sets
/// `first_kfd_vmid` to 8: graphics/compute use 1-7, KFD 8-15).
pub const USER_VMID: u8 = 8;
const PASID: u32 = 0x8001;

/// The points where a device model needs to act; on hardware the
/// firmware does it and [`OnHardware`] only pauses.
pub trait Service {
    /// The KIQ HQD is loaded: what the KIQ's waits call.
    fn kiq_loaded(&mut self) -> Pause;
    /// The scheduler ring of MES `pipe` is mapped: what its waits call.
    fn mes_ring_mapped(&mut self, pipe: u8) -> Pause;
    /// The process with page-table root `ptb` maps `[base, base + len)`.
    fn process_maps(&mut self, _ptb: u64, _base: u64, _len: u64) {}
    /// A doorbell of the user queue was rung.
    fn doorbell_rung(&mut self) {}
}

/// Real firmware: pauses yield the CPU; the runtime's waits bound them.
#[derive(Debug, Default)]
pub struct OnHardware;

impl Service for OnHardware {
    fn kiq_loaded(&mut self) -> Pause {
        Box::new(std::thread::yield_now)
    }
    fn mes_ring_mapped(&mut self, _pipe: u8) -> Pause {
        Box::new(std::thread::yield_now)
    }
}

/// The DMA region's ring area, handed out page by page.
#[derive(Debug)]
pub struct Area {
    base: usize,
    next: usize,
    end: usize,
}

impl Area {
    /// # Safety
    /// `[base, base + len)` must be writable memory that stays mapped for
    /// the rest of the process and that nothing else uses.
    pub unsafe fn new(base: NonNull<u8>, len: usize) -> Self {
        let b = base.as_ptr() as usize;
        Area {
            base: b,
            next: b,
            end: b.saturating_add(len),
        }
    }

    /// First byte and length, as VA = host address.
    pub fn range(&self) -> (u64, u64) {
        (self.base as u64, (self.end - self.base) as u64)
    }

    /// Moves `v` into the next free page(s).
    fn put<T>(&mut self, v: T) -> Result<&'static T, HwError> {
        let align = core::mem::align_of::<T>().max(4096);
        let at = self.next.next_multiple_of(align);
        let size = core::mem::size_of::<T>().max(1);
        let end = at.checked_add(size).filter(|e| *e <= self.end);
        let Some(end) = end else {
            return Err(HwError::Step {
                step: "rings",
                detail: format!(
                    "ring area full: {size:#x} bytes more do not fit below {:#x}",
                    self.end
                ),
            });
        };
        self.next = end;
        let p = at as *mut T;
        // SAFETY: `[at, at + size)` lies inside the area (checked above),
        // is aligned for T, and is handed out once; the area outlives the
        // process's use of it (the contract of `new`), so the reference
        // may be 'static. The device touches it only once told its
        // address, after this write.
        unsafe {
            p.write(v);
            Ok(&*p)
        }
    }
}

/// What the rings step needs from the earlier ones.
pub struct Inputs<'a> {
    pub platform: &'static Platform<'static>,
    pub gc_bases: IpBases,
    pub generation: Generation,
    pub versions: MesVersions,
    /// `SET_HW_RESOURCES`' base arrays, from discovery.
    pub hw_bases: HwBases,
    /// The GFXHUB's register table (to point [`USER_VMID`] at the
    /// process tables).
    pub gfxhub: &'static HubRegs,
    /// The process page tables' root (VRAM physical address).
    pub process_root: u64,
    pub area: Area,
    pub service: &'a mut dyn Service,
}

/// A mapped user queue whose first barrier completed.
pub struct Ready {
    pub queue: AqlQueue<'static, SLOTS>,
    pub signal: &'static SignalMemory,
    pub doorbell: u32,
    pub packet_id: u64,
    pub mapping: Mapping,
    pub mapper: Box<dyn QueueMapper>,
    /// Wall time of the mapping call.
    pub create_ns: u64,
}

impl core::fmt::Debug for Ready {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ready")
            .field("doorbell", &self.doorbell)
            .field("packet_id", &self.packet_id)
            .field("mapping", &self.mapping)
            .finish_non_exhaustive()
    }
}

impl Ready {
    /// Takes the queue off the hardware.
    pub fn unmap(mut self) -> Result<(), HwError> {
        self.mapper.unmap(&self.mapping).map_err(|e| HwError::Step {
            step: "unmap",
            detail: format!("{e:?}"),
        })
    }
}

fn err<E: core::fmt::Debug>(what: &'static str) -> impl Fn(E) -> HwError {
    move |e| HwError::Step {
        step: "rings",
        detail: format!("{what}: {e:?}"),
    }
}

fn doorbell(p: &Platform<'static>, index: u32) -> Result<Doorbell, HwError> {
    let (bar, len) = p.doorbells;
    // SAFETY: the platform's doorbell aperture is a live mapping of BAR2
    // (or the model's doorbell page) of `len` bytes for the process.
    unsafe { Doorbell::in_aperture(bar, len, index) }.map_err(err("doorbell"))
}

/// The barrier the hardware path submits: no dependencies, completion
/// signal `signal`, system-scope fences so the signal write is visible
/// to the host.
pub fn barrier(signal: &SignalMemory) -> Result<BarrierPacket, HwError> {
    BarrierPacket::new(BarrierKind::And, &[], signal.handle(), Fences::SYSTEM)
        .map_err(err("barrier packet"))
}

/// Loads the KIQ by registers (MEC1 pipe 1 queue 0, `gfx_v11_0_kiq_init_register()`).
fn kiq_up(i: &mut Inputs<'_>) -> Result<Kiq<'static, StdClock, Pause, KIQ_RING>, HwError> {
    let mem = i.area.put(KiqMemory::<KIQ_RING>::new())?;
    let mqd = i.area.put(MqdPage::new())?;
    let eop = i.area.put(EopBuffer::new())?;
    let slot = KiqSlot {
        pipe: 1,
        queue: 0,
        doorbell: doorbell_index::KIQ,
    };
    // SAFETY: all three live in the ring area for the process, mapped at
    // VA = host address in VMID0; the MQD page is fresh.
    unsafe {
        bring_up(
            i.platform.regs,
            &i.gc_bases,
            i.generation,
            slot,
            mem,
            mqd,
            eop,
        )
    }
    .map_err(err("KIQ bring-up"))?;
    let pause = i.service.kiq_loaded();
    let ring = KiqRing {
        memory: mem,
        doorbell: doorbell(i.platform, doorbell_index::KIQ)?,
    };
    let mut kiq = Kiq::new(
        ring,
        StdClock::default(),
        pause,
        i.generation,
        Doorbells::linux_default(),
    );
    // Keep user queues off the KIQ's own slot.
    kiq.set_allowed_slots([0xFF, 0xFE, 0xFF, 0xFF]);
    println!("step kiq: KIQ HQD loaded by register programming (pipe 1 queue 0)");
    Ok(kiq)
}

fn mes_parts(
    i: &mut Inputs<'_>,
    doorbell: u32,
) -> Result<MesRingParts<'static, MES_RING>, HwError> {
    Ok(MesRingParts {
        ring: i.area.put(MesMemory::<MES_RING>::new())?,
        mqd: i.area.put(MqdPage::new())?,
        eop: i.area.put(EopBuffer::new())?,
        doorbell,
    })
}

fn process(i: &mut Inputs<'_>) -> Result<Process<'static>, HwError> {
    Ok(Process {
        pasid: PASID,
        page_table_base: i.process_root,
        va_start: 0,
        va_end: (1 << 47) - 1,
        context: i.area.put(ProcessContext::new())?,
    })
}

/// Points [`USER_VMID`]'s GFXHUB context at the process tables, as
/// `gfxhub_v3_0_setup_vm_pt_regs()` does for a KFD VMID (MES does this
/// itself for the queues it maps).
fn point_user_vmid(i: &Inputs<'_>) -> Result<(), HwError> {
    let hub = i.gfxhub;
    let n = u32::from(USER_VMID) - 1;
    let at = |lo: barebell::regs::Reg| {
        lo.byte_offset(&i.gc_bases)
            .map(|b| b + (n * hub.ctx_addr_distance()) as usize * 4)
            .ok_or(HwError::Step {
                step: "rings",
                detail: format!("{} is outside the GC bases", lo.name),
            })
    };
    let lo = at(hub.ctx1_base_lo)?;
    let base = i.process_root | 1;
    i.platform.regs.write32(lo, base as u32);
    i.platform.regs.write32(lo + 4, (base >> 32) as u32);
    // The context's cached walk must go: flush the VMID on the GART
    // engine. Linux sends this flush through the KIQ once it runs
    // (`gmc_v11_0_flush_gpu_tlb()`'s fw path); barebell writes the same
    // request and polls the same ACK itself. The process tables were
    // written through BAR0 before the gmc step's HDP flush, and nothing
    // has gone through the BAR into them since.
    let clock = StdClock::default();
    barebell::gmc::hub::invalidate(
        i.platform.regs,
        &clock,
        &i.gc_bases,
        hub,
        barebell::gmc::hub::GART_ENGINE,
        u32::from(USER_VMID),
        0,
    )
    .map_err(err("flushing the user VMID's TLB"))?;
    Ok(())
}

/// Places the user queue, maps it with `mapper`, submits one barrier and
/// waits for its signal.
fn user_queue(
    i: &mut Inputs<'_>,
    mut mapper: Box<dyn QueueMapper>,
    mode: MappingMode,
) -> Result<Ready, HwError> {
    let mem = i.area.put(QueueMemory::<SLOTS>::new())?;
    let mqd = i.area.put(MqdPage::new())?;
    let eop = i.area.put(EopBuffer::new())?;
    let signal = i.area.put(SignalMemory::new(1))?;
    let db = doorbell(i.platform, doorbell_index::USERQUEUE_START)?;
    let queue = AqlQueue::new(
        mem,
        db,
        QueueConfig {
            profiling: true,
            ..Default::default()
        },
    );
    let vmid = match mode {
        // MES takes the process key here and picks the VMID itself.
        MappingMode::Mes => 1,
        MappingMode::Direct | MappingMode::Kiq => {
            point_user_vmid(i)?;
            USER_VMID
        }
    };
    let res = QueueResources::aql(mem, mqd, eop, doorbell_index::USERQUEUE_START, vmid);
    let t = std::time::Instant::now();
    // SAFETY: the queue memory, MQD and EOP buffer live in the ring area
    // for the rest of the process, mapped at VA = host address in the
    // queue's VMID; the MQD page is fresh.
    let mapping = unsafe { mapper.map(&res) }.map_err(err("mapping the user queue"))?;
    let create_ns = t.elapsed().as_nanos() as u64;
    let p = barrier(signal)?;
    let clock = StdClock::default();
    let id = queue.submit(&p, &clock, BOUND_NS).map_err(err("submit"))?;
    i.service.doorbell_rung();
    signal
        .wait(Condition::Eq, 0, &clock, BOUND_NS)
        .map_err(err("barrier completion"))?;
    Ok(Ready {
        queue,
        signal,
        doorbell: doorbell_index::USERQUEUE_START,
        packet_id: id,
        mapping,
        mapper,
        create_ns,
    })
}

/// The mapper the user queue goes through: the scheduler (after
/// registering the process whose tables cover the ring area), the KIQ
/// `kiq` brings up, or direct HQD programming.
fn choose_mapper<A: MesApi + 'static>(
    i: &mut Inputs<'_>,
    mut mes: Mes<'static, StdClock, Pause, MES_RING, A>,
    mode: MappingMode,
    kiq: impl FnOnce(&mut Inputs<'_>) -> Result<Box<dyn QueueMapper>, HwError>,
) -> Result<Box<dyn QueueMapper>, HwError> {
    match mode {
        MappingMode::Mes => {
            let p = process(i)?;
            let (base, len) = i.area.range();
            i.service.process_maps(i.process_root, base, len);
            mes.register_process(1, p).map_err(err("process"))?;
            Ok(Box::new(mes))
        }
        MappingMode::Kiq => kiq(i),
        MappingMode::Direct => direct(i),
    }
}

fn direct(i: &mut Inputs<'_>) -> Result<Box<dyn QueueMapper>, HwError> {
    let d = DirectHqd::new(
        i.platform.regs,
        StdClock::default(),
        i.gc_bases,
        i.generation,
        Doorbells::linux_default(),
    )
    .map_err(err("direct HQD"))?;
    Ok(Box::new(d))
}

/// The rings and the user queue for `mode`; MES must already run.
pub fn run(mut i: Inputs<'_>, mode: MappingMode) -> Result<Ready, HwError> {
    Doorbells::linux_default()
        .program(
            i.platform.regs,
            &HqdRegs::for_generation(i.generation),
            &i.gc_bases,
        )
        .map_err(err("doorbell range"))?;
    match i.generation {
        Generation::Gfx11 => {
            let mut kiq = kiq_up(&mut i)?;
            let parts = mes_parts(&mut i, doorbell_index::MES_RING0)?;
            let memory = parts.ring;
            // SAFETY: ring, MQD and EOP live in the ring area, mapped in
            // VMID0; the MQD page is fresh.
            unsafe { map_scheduler_ring(&mut kiq, parts) }
                .map_err(err("MES scheduler ring via KIQ"))?;
            let pause = i.service.mes_ring_mapped(0);
            let ring = MesRing {
                memory,
                doorbell: doorbell(i.platform, doorbell_index::MES_RING0)?,
            };
            let mut mes: Mes<'static, StdClock, Pause, MES_RING, V11> =
                Mes::new(ring, StdClock::default(), pause, Doorbells::linux_default());
            mes.set_versions(i.versions);
            mes.set_hw_resources(&i.hw_bases)
                .map_err(err("SET_HW_RSRC"))?;
            mes.query_status().map_err(err("QUERY_SCHEDULER_STATUS"))?;
            println!(
                "step mes: scheduler ring mapped by KIQ MAP_QUEUES; SET_HW_RSRC and QUERY_SCHEDULER_STATUS answered"
            );
            let mapper = choose_mapper(&mut i, mes, mode, |_| Ok(Box::new(kiq)))?;
            user_queue(&mut i, mapper, mode)
        }
        Generation::Gfx12 => {
            let p1 = mes_parts(&mut i, doorbell_index::MES_RING1)?;
            let m1 = p1.ring;
            // SAFETY: as above.
            unsafe { load_pipe_ring(i.platform.regs, &i.gc_bases, i.generation, 1, p1) }
                .map_err(err("MES pipe 1 ring"))?;
            let pause1 = i.service.mes_ring_mapped(1);
            let ring1 = MesRing {
                memory: m1,
                doorbell: doorbell(i.platform, doorbell_index::MES_RING1)?,
            };
            let mut pipe1: Mes<'static, StdClock, Pause, MES_RING, V12> = Mes::new(
                ring1,
                StdClock::default(),
                pause1,
                Doorbells::linux_default(),
            );
            pipe1.set_versions(i.versions);
            pipe1
                .set_hw_resources(&i.hw_bases)
                .map_err(err("pipe 1 SET_HW_RSRC"))?;
            pipe1
                .set_hw_resources_1()
                .map_err(err("pipe 1 SET_HW_RSRC_1"))?;
            let p0 = mes_parts(&mut i, doorbell_index::MES_RING0)?;
            let m0 = p0.ring;
            // SAFETY: as above.
            unsafe { map_legacy_scheduler_ring(&mut pipe1, p0) }
                .map_err(err("scheduler ring via map_legacy_kq"))?;
            let pause0 = i.service.mes_ring_mapped(0);
            let ring0 = MesRing {
                memory: m0,
                doorbell: doorbell(i.platform, doorbell_index::MES_RING0)?,
            };
            let mut mes: Mes<'static, StdClock, Pause, MES_RING, V12> = Mes::new(
                ring0,
                StdClock::default(),
                pause0,
                Doorbells::linux_default(),
            );
            mes.set_versions(i.versions);
            mes.set_hw_resources(&i.hw_bases)
                .map_err(err("SET_HW_RSRC"))?;
            mes.set_hw_resources_1().map_err(err("SET_HW_RSRC_1"))?;
            println!(
                "step mes: pipe 1 ring loaded by registers; scheduler ring mapped by map_legacy_kq ADD_QUEUE; SET_HW_RSRC/_1 answered"
            );
            let mapper = choose_mapper(&mut i, mes, mode, |i| Ok(Box::new(kiq_up(i)?)))?;
            user_queue(&mut i, mapper, mode)
        }
    }
}
