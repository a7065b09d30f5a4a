//! Step 7, rings: the kernel rings MES and the KIQ run on, after MES start.
//!
//! gfx11 (`mes_v11_0_kiq_hw_init()` with `enable_mes_kiq`, which Linux
//! 6.12 sets for every GC 11 part in `amdgpu_discovery_set_mes_ip_blocks()`):
//! the KIQ is MES pipe 1 — `mes_v11_0_kiq_setting()` names ME 3 pipe 1
//! queue 0 in `RLC_CP_SCHEDULERS` and `mes_v11_0_queue_init_register()`
//! loads the KIQ ring there (doorbell `mes_ring1`); the MES scheduler ring
//! is mapped by KIQ MAP_QUEUES (`mes_v11_0_kiq_enable_queue()`), then
//! SET_HW_RSRC and QUERY_SCHEDULER_STATUS (`mes_v11_0_hw_init()`); then the
//! KIQ gets SET_RESOURCES with the queue mask of the slots it may map
//! (`amdgpu_gfx_enable_kcq()` sends it before any MAP_QUEUES).
//!
//! gfx12 uni-MES (`mes_v12_0_hw_init()`): MES pipe 1's ring by registers
//! (`mes_v12_0_queue_init_register()`), SET_HW_RSRC and SET_HW_RSRC_1 on
//! it, pipe 0's scheduler ring by a `map_legacy_kq` ADD_QUEUE on pipe 1
//! (`mes_v12_0_map_legacy_queue()`), SET_HW_RSRC and SET_HW_RSRC_1 on
//! pipe 0. There is no PM4 KIQ: pipe 1 is the KIQ.
//!
//! Everything lives in the ring area (GPU VA = host address in VMID0).

use crate::Gpu;
use crate::error::{BringupError, QueueError, ResultAt};
use crate::sink::{Sink, Step};
use barebell::aql::Doorbell;
use barebell::gfx::doorbells::{Doorbells, doorbell_index};
use barebell::gfx::error::MapError;
use barebell::gfx::kiq::hqd::bring_up_on_mes;
use barebell::gfx::kiq::{Kiq, KiqMemory, KiqRing};
use barebell::gfx::mapper::HqdRegs;
use barebell::gfx::mes::rings::{
    MesRingParts, enable_unmapped_doorbell_handling, init_aggregated_doorbell, load_pipe_ring,
    map_legacy_scheduler_ring, map_scheduler_ring,
};
use barebell::gfx::mes::start::MesVersions;
use barebell::gfx::mes::{HwBases, Mes, MesMemory, MesRing, V11, V12};
use barebell::gfx::mqd::{EopBuffer, MqdPage};
use barebell::ip::Generation;
use barebell::mem::{Dev, DeviceArena};
use barebell::regs::IpBases;

/// KIQ ring size, in dwords.
pub const KIQ_RING: usize = 256;
/// MES ring size, in dwords.
pub const MES_RING: usize = 1024;

pub use crate::bus::{ClockRef, Pauser};
pub type KiqClient<'p> = Kiq<'p, ClockRef<'p>, Pauser<'p>, KIQ_RING>;
pub type MesClient<'p, A> = Mes<'p, ClockRef<'p>, Pauser<'p>, MES_RING, A>;

/// The scheduler, by API version.
pub enum Scheduler<'p> {
    V11(MesClient<'p, V11>),
    V12(MesClient<'p, V12>),
}

impl core::fmt::Debug for Scheduler<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Scheduler::V11(_) => f.write_str("Scheduler::V11"),
            Scheduler::V12(_) => f.write_str("Scheduler::V12"),
        }
    }
}

impl core::fmt::Debug for Rings<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Rings")
            .field("scheduler", &self.scheduler)
            .field("kiq", &self.kiq.is_some())
            .field("pipe1", &self.pipe1.is_some())
            .finish()
    }
}

/// The rings, up and answering.
pub struct Rings<'p> {
    pub scheduler: Scheduler<'p>,
    /// gfx11: the KIQ (on MES pipe 1) the scheduler ring was mapped
    /// through, given its SET_RESOURCES.
    pub kiq: Option<KiqClient<'p>>,
    /// gfx12: MES pipe 1, uni-MES's KIQ.
    pub pipe1: Option<MesClient<'p, V12>>,
}

fn place<'p, T>(area: &mut DeviceArena<'p>, v: T) -> Result<Dev<'p, T>, BringupError> {
    area.put(v).at(Step::Rings)
}

/// The platform's doorbell `index` (64-bit slots).
pub fn doorbell(gpu: &Gpu<'_>, index: u32, step: Step) -> Result<Doorbell, BringupError> {
    gpu.doorbells
        .doorbell(index)
        .map_err(|error| QueueError::Doorbell { index, error })
        .at(step)
}

/// `SET_HW_RESOURCES`' base arrays: the first five segment bases.
fn bases5(b: IpBases) -> [u32; 5] {
    let mut o = [0u32; 5];
    if let Some(src) = b.0.get(..5) {
        o.copy_from_slice(src);
    }
    o
}

/// The KIQ slots user queues may take on gfx11: queues 0 and 1 of each
/// pipe. GC 11.0.0 drivers use four queues a pipe (`gfx_v11_0_sw_init()`:
/// `num_queue_per_pipe = 4`) and give MES queues 2 and 3
/// (`amdgpu_mes_init()`: `compute_hqd_mask = 0xc`).
pub const GFX11_KIQ_SLOTS: [u8; 4] = [0x3; 4];

/// Makes MES pipe 1 the KIQ and loads its ring
/// (`mes_v11_0_kiq_setting()`, `mes_v11_0_queue_init_register()`);
/// doorbell `MES_RING1` (`mes_v11_0_kiq_ring_init()`: `mes_ring1 << 1`).
fn kiq_up<'p>(
    gpu: &Gpu<'p>,
    area: &mut DeviceArena<'p>,
    step: Step,
    sink: &dyn Sink,
) -> Result<KiqClient<'p>, BringupError> {
    let mem = area.put(KiqMemory::<KIQ_RING>::new()).at(step)?;
    let mqd = area.put(MqdPage::new()).at(step)?;
    let eop = area.put(EopBuffer::new()).at(step)?;
    bring_up_on_mes(
        &gpu.bus,
        &gpu.ips.gc.bases,
        gpu.ips.generation,
        mem,
        mqd,
        eop,
        doorbell_index::MES_RING1,
    )
    .at(step)?;
    let p = gpu.platform;
    let ring = KiqRing {
        memory: mem,
        doorbell: doorbell(gpu, doorbell_index::MES_RING1, step)?,
    };
    let mut kiq = Kiq::new(
        ring,
        p.clock(),
        Pauser(p),
        gpu.ips.generation,
        Doorbells::linux_default(),
    )
    .map_err(MapError::from)
    .at(step)?;
    if let Some(presence) = crate::recover::presence(gpu) {
        kiq.set_presence(presence);
    }
    kiq.set_allowed_slots(GFX11_KIQ_SLOTS);
    sink.step(
        step,
        format_args!(
            "KIQ on MES pipe 1: RLC_CP_SCHEDULERS names ME 3 pipe 1 queue 0, ring loaded by registers"
        ),
    );
    Ok(kiq)
}

fn parts<'p>(
    area: &mut DeviceArena<'p>,
    doorbell: u32,
) -> Result<MesRingParts<'p, MES_RING>, BringupError> {
    Ok(MesRingParts {
        ring: place(area, MesMemory::<MES_RING>::new())?,
        mqd: place(area, MqdPage::new())?,
        eop: place(area, EopBuffer::new())?,
        doorbell,
    })
}

/// Brings the rings up for the discovered generation.
pub fn run<'p>(
    gpu: &Gpu<'p>,
    area: &mut DeviceArena<'p>,
    versions: MesVersions,
    sink: &dyn Sink,
) -> Result<Rings<'p>, BringupError> {
    let s = Step::Rings;
    let p = gpu.platform;
    let gc = gpu.ips.gc.bases;
    let generation = gpu.ips.generation;
    let hw = HwBases {
        gc: bases5(gc),
        mmhub: bases5(gpu.ips.mmhub.bases),
        osssys: bases5(gpu.ips.osssys.bases),
        sdma_engines: gpu
            .ips
            .all
            .iter()
            .filter(|i| i.hw_id == barebell::discovery::hw_id::SDMA0)
            .count() as u8,
    };
    Doorbells::linux_default()
        .program(&gpu.bus, &HqdRegs::for_generation(generation).at(s)?, &gc)
        .at(s)?;
    match generation {
        Generation::Gfx90a | Generation::Gfx94 => Err(barebell::ip::Unsupported::new(
            "the scheduler rings (KIQ and HWS on the MEC)",
            generation,
        ))
        .at(s),
        Generation::Gfx11 => {
            let mut kiq = kiq_up(gpu, area, s, sink)?;
            let sched = parts(area, doorbell_index::MES_RING0)?;
            map_scheduler_ring(&mut kiq, sched).at(s)?;
            let ring = MesRing {
                memory: sched.ring,
                doorbell: doorbell(gpu, doorbell_index::MES_RING0, s)?,
            };
            let mut mes: MesClient<'p, V11> =
                Mes::new(ring, p.clock(), Pauser(p), Doorbells::linux_default())
                    .map_err(MapError::from)
                    .at(s)?;
            if let Some(presence) = crate::recover::presence(gpu) {
                mes.set_presence(presence);
            }
            mes.set_versions(versions);
            mes.set_hw_resources(&hw).at(s)?;
            mes.query_status().at(s)?;
            let mask = kiq.allowed_queue_mask();
            kiq.set_resources(mask).at(s)?;
            sink.step(
                s,
                format_args!(
                    "MES scheduler ring mapped by KIQ MAP_QUEUES; SET_HW_RSRC and QUERY_SCHEDULER_STATUS answered; KIQ SET_RESOURCES queue mask {mask:#x}"
                ),
            );
            Ok(Rings {
                scheduler: Scheduler::V11(mes),
                kiq: Some(kiq),
                pipe1: None,
            })
        }
        Generation::Gfx12 => {
            let p1 = parts(area, doorbell_index::MES_RING1)?;
            load_pipe_ring(&gpu.bus, &gc, generation, 1, p1).at(s)?;
            let ring1 = MesRing {
                memory: p1.ring,
                doorbell: doorbell(gpu, doorbell_index::MES_RING1, s)?,
            };
            let mut pipe1: MesClient<'p, V12> =
                Mes::new(ring1, p.clock(), Pauser(p), Doorbells::linux_default())
                    .map_err(MapError::from)
                    .at(s)?;
            if let Some(presence) = crate::recover::presence(gpu) {
                pipe1.set_presence(presence);
            }
            pipe1.set_versions(versions);
            pipe1.set_kiq_pipe_hw_resources(&hw).at(s)?;
            pipe1.set_hw_resources_1().at(s)?;
            // mes_v12_0_hw_init(): unmapped-doorbell handling first, then
            // the scheduler pipe's ring and SET_HW_RSRC.
            enable_unmapped_doorbell_handling(&gpu.bus, &gc).at(s)?;
            let p0 = parts(area, doorbell_index::MES_RING0)?;
            map_legacy_scheduler_ring(&mut pipe1, p0).at(s)?;
            let ring0 = MesRing {
                memory: p0.ring,
                doorbell: doorbell(gpu, doorbell_index::MES_RING0, s)?,
            };
            let mut mes: MesClient<'p, V12> =
                Mes::new(ring0, p.clock(), Pauser(p), Doorbells::linux_default())
                    .map_err(MapError::from)
                    .at(s)?;
            if let Some(presence) = crate::recover::presence(gpu) {
                mes.set_presence(presence);
            }
            mes.set_versions(versions);
            mes.set_hw_resources(&hw).at(s)?;
            mes.set_hw_resources_1().at(s)?;
            init_aggregated_doorbell(&gpu.bus, &gc).at(s)?;
            mes.query_status().at(s)?;
            sink.step(
                s,
                format_args!(
                    "MES pipe 1 ring loaded by registers; scheduler ring mapped by map_legacy_kq ADD_QUEUE; SET_HW_RSRC and SET_HW_RSRC_1 answered on both pipes"
                ),
            );
            Ok(Rings {
                scheduler: Scheduler::V12(mes),
                kiq: None,
                pipe1: Some(pipe1),
            })
        }
    }
}
