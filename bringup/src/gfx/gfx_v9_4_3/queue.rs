//! Steps 9 and 10 on GC 9.4.3 (MI300) and GC 9.4.2 (MI210), as
//! [`V9Gc`] describes each: the KIQ of every XCC, or of the one GC
//! (rings), and one AQL user queue spread over every XCC (queue), mapped
//! `direct`, `kiq` or `hws` by [`crate::gfx::gfx_v9_4_3::xcc`], then a
//! first barrier through it, as the gfx11/gfx12 queue step does.
//!
//! - Direct and KIQ mappings run the queue in [`USER_VMID`]: its GFXHUB
//!   context on every XCC is pointed at the process tables
//!   (`gfxhub_v1_2_setup_vm_pt_regs()`; `gfxhub_v1_0_setup_vm_pt_regs()`
//!   on GC 9.4.2; what KFD's `set_vm_context_page_table_base` reaches),
//!   then that VMID's TLB is flushed on every XCC
//!   (`gmc_v9_0_flush_gpu_tlb()`).
//! - The HWS mapping names the process by its page-table base in
//!   MAP_PROCESS (`pm_map_process_aldebaran()`, both versions); the
//!   scheduler picks the VMID.
//!
//! The queue is handed out as the bring-up's [`UserQueue`]; its unmapping
//! ([`XccUnmapper`]) takes the queue off every XCC the way it was mapped,
//! then takes the KIQs down (`gfx_v9_4_3_xcc_kiq_fini_register()`).

use crate::Gpu;
use crate::error::{BringupError, ErrorKind, ResultAt};
use crate::gfx::gfx_v9_4_3::xcc::{self as g, USER_SLOT, V9Gc, XccError, XccKiqClient, XccMapped};
use crate::gmc::Memory;
use crate::queue::{Mapping, USER_VMID, UserQueue};
use crate::rings::{ClockRef, Pauser};
use crate::sink::{Sink, Step};
use alloc::boxed::Box;
use alloc::vec::Vec;
use barebell::gfx::error::{MapError, XccFailure};
use barebell::gfx::hws::UnmapFilter;
use barebell::gfx::hws::packets::QueueDesc;
use barebell::gfx::hws::runlist::{self, ProcessQueues, SdmaDoorbells};
use barebell::gfx::mapper::{Mapping as HqdMapping, QueueMapper, QueueResources, SdmaResources};
use barebell::gfx::mqd_v9::{MqdQueue, init_mqd};
use barebell::gmc::hub::v9;
use barebell::mem::DeviceArena;
use barebell::regs::IpBases;
use barebell::sdma::map_v4_4_2::{self, HwsSdmaQueue};

impl From<XccError> for ErrorKind {
    fn from(e: XccError) -> Self {
        ErrorKind::Xcc(e)
    }
}

/// The rings step: every XCC's KIQ up, with SET_RESOURCES naming
/// [`USER_SLOT`].
pub fn rings<'p>(
    gc: V9Gc,
    gpu: &Gpu<'p>,
    area: &mut DeviceArena<'p>,
    sink: &dyn Sink,
) -> Result<Vec<XccKiqClient<'p>>, BringupError> {
    let s = Step::Rings;
    let kiqs = g::rings_gfx94(gc, gpu, area)
        .map_err(ErrorKind::from)
        .at(s)?;
    let slots = kiqs
        .iter()
        .map(|k| alloc::format!("{:#x}", gc.doorbells.kiq_doorbell(k.xcc as u32)))
        .collect::<Vec<_>>()
        .join(", ");
    let mask = kiqs.first().map_or(0, |k| k.queue_mask);
    if gc.multi_xcc {
        sink.step(
            s,
            format_args!(
                "KIQ up on {} XCCs (MEC 2 pipe 1 queue 0 each, doorbell slots {slots}), each loaded with its MEC halted, then the MEC released; SET_RESOURCES (queue mask {mask:#x}) answered on each",
                kiqs.len(),
            ),
        );
    } else {
        let r = gc.doorbells.mec_range(0);
        sink.step(
            s,
            format_args!(
                "KIQ up (MEC 2 pipe 1 queue 0, doorbell slot {slots}, MEC doorbell range {:#x}-{:#x} as {}), loaded into the MEC still halted from reset, then the MEC released (gfx_v9_0_cp_resume()); SET_RESOURCES (queue mask {mask:#x}) answered",
                r.lower_bytes, r.upper_bytes, gc.doorbells.name,
            ),
        );
    }
    Ok(kiqs)
}

/// The unmapping of a GC 9.4.3 user queue: the queue off every XCC by its
/// mapping, then every XCC's KIQ down.
pub struct XccUnmapper<'p> {
    mapped: XccMapped<'p, ClockRef<'p>, Pauser<'p>>,
    kiqs: Vec<XccKiqClient<'p>>,
    xcc_bases: Vec<IpBases>,
    gpu_bus: crate::bus::Bus<'p>,
    clock: ClockRef<'p>,
    /// The process's page-table base as MAP_PROCESS names it, and KFD's
    /// HWS queue mask (hws mapping), for a runlist that adds an SDMA
    /// queue ([`QueueMapper::map_sdma`]).
    pd: u64,
    hws_mask: u64,
    /// Every SDMA 4.4.2 instance's bases, in instance order (GC 9.4.3).
    sdma_bases: Vec<IpBases>,
    /// The SDMA engines runlists may name, and KFD's doorbell plan for
    /// them.
    sdma_plan: SdmaDoorbells,
    /// Queues added after the bring-up's own ([`QueueMapper::map`],
    /// [`QueueMapper::map_sdma`]; hws mapping, one-GC parts), compute and
    /// SDMA, in the order the runlist names them.
    added: Vec<QueueDesc>,
}

impl core::fmt::Debug for XccUnmapper<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("XccUnmapper")
            .field("mapped", &self.mapped)
            .field("kiqs", &self.kiqs.len())
            .finish_non_exhaustive()
    }
}

impl XccUnmapper<'_> {
    /// `create_queue_cpsch()` for an SDMA queue on GC 9.4.2 (hws
    /// mapping): the slot KFD's `allocate_sdma_queue()` chose (`q.engine`,
    /// `q.queue`) must exist, the doorbell must be the one
    /// `allocate_doorbell()` gives it (`sdma_doorbell_idx[engine]`, + 512
    /// for odd queues, + `queue / 2`; here in the bring-up's own doorbell
    /// page, *model convention* as for compute queues), the MQD is KFD's
    /// (`init_mqd_sdma()` → `update_mqd_sdma()`), then the queue joins the
    /// runlist (`execute_queues_cpsch()`), which the HWS loads onto the
    /// engine's RLC queue.
    fn add_sdma(&mut self, q: &SdmaResources<'_>) -> Result<HqdMapping, MapError> {
        if self.mapped.mapping != Some(Mapping::Hws) {
            return Err(MapError::SdmaUnsupported {
                mapper: "GC 9.4.2 direct/KIQ (SDMA queues go through the HWS: --mapping hws)",
            });
        }
        let slot = MapError::SdmaSlot {
            engine: q.engine,
            queue: q.queue,
            engines: self.sdma_plan.engines,
        };
        let index = self.sdma_plan.queue_index(q.engine, q.queue).ok_or(slot)?;
        if q.setup.doorbell_index != index {
            return Err(MapError::Doorbell(
                barebell::gfx::error::DoorbellAllocError::OutOfRange {
                    index: q.setup.doorbell_index,
                    lower: index,
                    upper: index,
                },
            ));
        }
        let dword = index.saturating_mul(2);
        if self.added.iter().any(|a| a.doorbell_offset == dword) {
            return Err(MapError::Doorbell(
                barebell::gfx::error::DoorbellAllocError::InUse { index },
            ));
        }
        let m = barebell::sdma::mqd_v9::V9SdmaMqd::build(&barebell::sdma::mqd_v9::SdmaMqdQueue {
            ring_address: q.setup.ring,
            ring_bytes: q.setup.ring_bytes as u64,
            rptr_address: q.setup.rptr_addr,
            doorbell_dword: dword,
            vmid: 0,
            engine: u32::from(q.engine),
            queue: q.queue,
        })
        .map_err(MapError::SdmaMqdV9)?;
        q.mqd.get().write(&m.dwords());
        self.added.push(QueueDesc {
            engine: barebell::gfx::hws::packets::Engine::Sdma { id: q.engine },
            ..QueueDesc::compute(dword, q.mqd.address(), q.setup.wptr_addr)
        });
        if let Err(e) = self.execute_queues() {
            self.added.pop();
            return Err(e);
        }
        Ok(HqdMapping {
            doorbell: index,
            mqd_address: q.mqd.address(),
            pipe: 0,
            queue: 0,
            vmid: 0,
        })
    }

    /// `destroy_queue_cpsch()` for a queue [`QueueMapper::map`] or
    /// [`Self::add_sdma`] added: off the list, then
    /// `execute_queues_cpsch()`.
    fn remove_added(&mut self, m: &HqdMapping) -> Result<(), MapError> {
        let dword = m.doorbell.saturating_mul(2);
        let i = self
            .added
            .iter()
            .position(|a| a.doorbell_offset == dword && a.mqd_address == m.mqd_address)
            .ok_or(MapError::NotMapped {
                doorbell: m.doorbell,
            })?;
        let gone = self.added.remove(i);
        if let Err(e) = self.execute_queues() {
            self.added.insert(i, gone);
            return Err(e);
        }
        Ok(())
    }

    /// `execute_queues_cpsch()` on GC 9.4.2: the dynamic queues off
    /// (`unmap_queues_cpsch()` with `KFD_UNMAP_QUEUES_FILTER_DYNAMIC_QUEUES`,
    /// then its fence), then one runlist of the process's queues, the
    /// bring-up's first (`pm_send_runlist()`). The IB is the HIQ's one,
    /// rewritten only once the scheduler let go of it.
    fn execute_queues(&mut self) -> Result<(), MapError> {
        let gc = self.mapped.gc;
        let layout = self.mapped.layout.ok_or(MapError::NotMapped {
            doorbell: self.mapped.doorbell,
        })?;
        let (Some(hws), Some((parts, _))) = (self.mapped.hws.as_mut(), self.mapped.hiq.as_ref())
        else {
            return Err(MapError::NotMapped {
                doorbell: self.mapped.doorbell,
            });
        };
        hws.unmap_queues(UnmapFilter::Dynamic, false)
            .map_err(MapError::Hws)?;
        hws.fence().map_err(MapError::Hws)?;
        let mut queues = Vec::with_capacity(1 + self.added.len());
        queues.push(QueueDesc::compute(
            self.mapped.doorbell.saturating_mul(2),
            layout.address,
            self.mapped.memory.write_index_address(),
        ));
        queues.extend(self.added.iter().copied());
        let procs = [ProcessQueues {
            process: g::kfd_process(gc, self.pd),
            queues: &queues,
        }];
        let cfg =
            (gc.runlist)(!self.hws_mask & runlist::queue_mask(4, 8, 0)).with_sdma(self.sdma_plan);
        let rl = parts
            .ib
            .fill(|ib, at| runlist::build(&cfg, &procs, ib, at))
            .map_err(MapError::Hws)?;
        hws.run_list(&rl).map_err(MapError::Hws)
    }
}

/// `init_mqd()`'s refusal of a queue's resources, as the mapper reports
/// it (the gfx layer's MQD errors; the rest cannot arise for one GC's
/// queue without a context-save area, and name the queue unmapped).
fn mqd_refusal(e: barebell::gfx::mqd_v9::MqdV9Error, doorbell: u32) -> MapError {
    use barebell::gfx::MqdError as M;
    use barebell::gfx::mqd_v9::MqdV9Error as V;
    let m = match e {
        V::RingSize { bytes } => M::RingSize { bytes },
        V::EopSize { bytes } => M::EopSize { bytes },
        V::Missing { field } => M::Missing { field },
        V::Misaligned {
            field,
            address,
            align,
        } => M::Misaligned {
            field,
            address,
            align,
        },
        V::Vmid { vmid } => M::Vmid { vmid },
        V::DoorbellOffset { dword } => M::DoorbellOffset { dword },
        V::DoorbellOutsideRange { .. }
        | V::XccCount { .. }
        | V::MissingRange { .. }
        | V::Buffer { .. }
        | V::CtxSave { .. } => return MapError::NotMapped { doorbell },
    };
    MapError::Mqd(m)
}

/// `doorbell`: the user queue's, named when nothing more precise is.
fn map_err(e: XccError, doorbell: u32) -> MapError {
    match e {
        XccError::KiqPacket { error, .. } => MapError::Kiq(error),
        XccError::Kiq { xcc, error } => {
            use barebell::gfx::queue_v9::KiqV9Error as K;
            let failure = match error {
                K::Register { error, .. } => XccFailure::Register(error),
                K::RingSize { .. } => XccFailure::Refused("the KIQ ring size"),
                K::DoorbellOutsideRange { .. } => {
                    XccFailure::Refused("a KIQ doorbell outside the MEC doorbell range")
                }
                K::Xcc { .. } => XccFailure::Refused("no such XCC"),
            };
            MapError::Xcc { xcc, failure }
        }
        XccError::Hqd(e) => {
            use barebell::gfx::hqd_v9::HqdV9Error as H;
            match e {
                H::Register { xcc, error } => MapError::Xcc {
                    xcc,
                    failure: XccFailure::Register(error),
                },
                H::Dequeue { xcc, error } => MapError::Xcc {
                    xcc,
                    failure: XccFailure::Wait(error),
                },
                H::Busy { slot, .. } => MapError::HqdBusy {
                    pipe: slot.pipe_id,
                    queue: slot.queue_id,
                },
                H::Slot { .. } => MapError::NoFreeSlot,
                H::MissingMqd { xcc } => MapError::Xcc {
                    xcc,
                    failure: XccFailure::Refused("the MQD buffer ends before this XCC's MQD"),
                },
                H::MissingXcc { xcc } => MapError::Xcc {
                    xcc,
                    failure: XccFailure::Refused("no GC registers for this XCC"),
                },
            }
        }
        XccError::Hws(e) => MapError::Hws(e),
        XccError::Start(e) => {
            use barebell::gfx::start_v9_4_3::StartError as S;
            match e {
                S::Register { xcc, error } => MapError::Xcc {
                    xcc,
                    failure: XccFailure::Register(error),
                },
                S::SafeMode { xcc, error } => MapError::Xcc {
                    xcc,
                    failure: XccFailure::Wait(error),
                },
                S::Step { xcc, step } => MapError::Xcc {
                    xcc,
                    failure: XccFailure::Refused(step),
                },
                S::NoXcc => MapError::Xcc {
                    xcc: 0,
                    failure: XccFailure::Refused("no XCC"),
                },
            }
        }
        XccError::RingInUse(e) => MapError::RingInUse(e),
        XccError::NoKiq { .. } => MapError::KiqNoResources,
        XccError::Mqd(_)
        | XccError::Memory(_)
        | XccError::Doorbell { .. }
        | XccError::State { .. } => MapError::NotMapped { doorbell },
    }
}

impl QueueMapper for XccUnmapper<'_> {
    /// Asks every scheduler behind the queue for a sign of life, each
    /// bounded by its own wait: the HWS (hws mapping) a QUERY_STATUS fence
    /// (`pm_send_query_status()` and `amdkfd_fence_wait_timeout()`, what
    /// KFD waits on after every HWS packet and what tells it the HWS hung),
    /// then every XCC's KIQ its SET_RESOURCES again
    /// (`gfx_v9_4_3_kiq_set_resources()`, as the gfx11 KIQ probe does).
    fn probe(&mut self) -> Result<(), MapError> {
        if let Some(hws) = self.mapped.hws.as_mut() {
            hws.fence().map_err(MapError::Hws)?;
        }
        for k in &mut self.kiqs {
            k.kiq
                .submit(
                    "SET_RESOURCES",
                    &barebell::gfx::queue_v9::set_resources(k.queue_mask),
                )
                .map_err(MapError::Kiq)?;
        }
        Ok(())
    }

    /// A further compute queue through the HWS the bring-up's queue was
    /// mapped by, as KFD's `create_queue_cpsch()` adds a process's queue:
    /// its MQD built by `init_mqd()` (VMID 0 in the MQD; the scheduler
    /// picks the process's VMID), then `execute_queues_cpsch()`: the
    /// dynamic queues preempted (`unmap_queues_cpsch()`, fenced), and a
    /// runlist naming every queue sent (`map_queues_cpsch()`). One-GC
    /// parts (GC 9.4.2) only: a GC 9.4.3 queue needs one MQD per XCC,
    /// which [`QueueResources`] does not carry. The direct and KIQ
    /// mappings have no scheduler to add to and refuse.
    fn map(&mut self, q: &QueueResources<'_>) -> Result<HqdMapping, MapError> {
        let gc = self.mapped.gc;
        if self.mapped.mapping != Some(Mapping::Hws) {
            return Err(MapError::Unsupported(barebell::ip::Unsupported::new(
                "a second queue without the HWS (--mapping hws adds queues to its runlist)",
                gc.generation,
            )));
        }
        if gc.multi_xcc {
            return Err(MapError::Unsupported(barebell::ip::Unsupported::new(
                "a second queue on a multi-XCC GC (one MQD per XCC)",
                gc.generation,
            )));
        }
        let p = q.mqd_params();
        let dword = p.doorbell_dword;
        let taken = dword == self.mapped.doorbell.saturating_mul(2)
            || self.added.iter().any(|a| a.doorbell_offset == dword);
        if taken {
            return Err(MapError::Doorbell(
                barebell::gfx::error::DoorbellAllocError::InUse {
                    index: q.doorbell(),
                },
            ));
        }
        let range = gc.doorbells.mec_range(0);
        if !range.contains_dword(dword) {
            return Err(MapError::Doorbell(
                barebell::gfx::error::DoorbellAllocError::OutOfRange {
                    index: q.doorbell(),
                    lower: range.lower_bytes / 8,
                    upper: range.upper_bytes / 8,
                },
            ));
        }
        let queue = MqdQueue {
            ring_address: p.ring_address,
            ring_bytes: p.ring_bytes,
            read_index_address: p.read_index_address,
            write_index_address: p.write_index_address,
            eop_address: p.eop_address,
            eop_bytes: p.eop_bytes,
            vmid: 0,
            ctx_save: None,
        };
        let m = init_mqd(p.mqd_address, dword, &queue).map_err(|e| mqd_refusal(e, q.doorbell()))?;
        q.mqd().write(&m);
        self.added.push(QueueDesc::compute(
            dword,
            p.mqd_address,
            p.write_index_address,
        ));
        if let Err(e) = self.execute_queues() {
            self.added.pop();
            return Err(e);
        }
        Ok(HqdMapping {
            doorbell: q.doorbell(),
            mqd_address: p.mqd_address,
            pipe: 0,
            queue: 0,
            vmid: 0,
        })
    }

    /// An SDMA 4.4.2 queue through the HWS the user queue was mapped by
    /// (`--mapping hws`; the direct and KIQ mappings have no scheduler
    /// and refuse): engine 0 queue 0 of process [`g::PASID`], the doorbell
    /// KFD's `allocate_doorbell()` gives it, in a runlist naming the
    /// compute queue first ([`map_v4_4_2::prepare_hws`]; a RUN_LIST
    /// replaces the scheduler's list, as `execute_queues_cpsch()`
    /// re-sends every queue). The runlist IB is the HIQ's one, rewritten
    /// (KFD's packet manager also reuses its one IB buffer).
    fn map_sdma(&mut self, q: &SdmaResources<'_>) -> Result<HqdMapping, MapError> {
        if !self.mapped.gc.multi_xcc {
            return self.add_sdma(q);
        }
        let engines = u8::try_from(self.sdma_bases.len()).unwrap_or(u8::MAX);
        let index =
            SdmaDoorbells::gc_9_4_3(engines)
                .queue_index(0, 0)
                .ok_or(MapError::SdmaV442(map_v4_4_2::SdmaV442Error::Engine {
                    engine: 0,
                    engines: self.sdma_bases.len(),
                }))?;
        if q.setup.doorbell_index != index {
            return Err(MapError::NotMapped {
                doorbell: q.setup.doorbell_index,
            });
        }
        let layout = self.mapped.layout.ok_or(MapError::NotMapped {
            doorbell: self.mapped.doorbell,
        })?;
        let compute = QueueDesc::compute(
            self.mapped.doorbell.saturating_mul(2),
            layout.address,
            self.mapped.memory.write_index_address(),
        );
        let (Some(hws), Some((parts, _))) = (self.mapped.hws.as_mut(), self.mapped.hiq.as_ref())
        else {
            return Err(MapError::SdmaUnsupported {
                mapper: "GC 9.4.3 direct/KIQ",
            });
        };
        let gc = self.mapped.gc;
        let config =
            (gc.runlist)(!self.hws_mask & runlist::queue_mask(4, 8, 0)).with_sdma_engines(engines);
        let (bases, pd) = (&self.sdma_bases, self.pd);
        let mqd = q.mqd;
        let ring = (q.setup.ring, q.setup.rptr_addr, q.setup.wptr_addr);
        let rl = parts
            .ib
            .fill(|ib, at| {
                map_v4_4_2::prepare_hws(
                    bases,
                    HwsSdmaQueue {
                        process: g::kfd_process(gc, pd),
                        engine: 0,
                        queue: 0,
                        mqd,
                        doorbell_dword: index.saturating_mul(2),
                        ib,
                        ib_address: at,
                        config,
                    },
                    ring,
                    &[compute],
                )
            })
            .map_err(MapError::SdmaV442)?;
        hws.run_list(&rl).map_err(MapError::Hws)?;
        Ok(HqdMapping {
            doorbell: index,
            mqd_address: mqd.address(),
            pipe: 0,
            queue: 0,
            vmid: 0,
        })
    }

    /// Takes the HWS's SDMA queue off: UNMAP_QUEUES for the process, then
    /// the fence (`unmap_queues_cpsch()`), as KFD's
    /// `process_termination_cpsch()` does when the process ends. barebell's
    /// v9 UNMAP_QUEUES has no single-queue filter, so the compute queue
    /// leaves with it: stop the SDMA queue last, right before the
    /// teardown (whose own UNMAP_QUEUES then finds the process gone).
    fn unmap_sdma(&mut self, m: &HqdMapping) -> Result<(), MapError> {
        if !self.mapped.gc.multi_xcc {
            return self.remove_added(m);
        }
        let hws = self.mapped.hws.as_mut().ok_or(MapError::SdmaUnsupported {
            mapper: "GC 9.4.3 direct/KIQ",
        })?;
        hws.unmap_queues(UnmapFilter::Pasid(g::PASID), false)
            .map_err(MapError::Hws)?;
        hws.fence().map_err(MapError::Hws)
    }

    /// `reset_queues_cpsch()`: UNMAP_QUEUES with RESET_QUEUES for the
    /// process (HWS mapping only; `Ok(false)` otherwise).
    fn reset_queue(&mut self, _m: &HqdMapping) -> Result<bool, MapError> {
        self.mapped
            .reset()
            .map_err(|e| map_err(e, self.mapped.doorbell))
    }

    /// A queue [`QueueMapper::map`] added leaves the runlist
    /// (`destroy_queue_cpsch()`: off the list, then
    /// `execute_queues_cpsch()`); the bring-up's own queue leaves every XCC
    /// the way it was mapped, then the KIQs go down.
    fn unmap(&mut self, m: &HqdMapping) -> Result<(), MapError> {
        let dword = m.doorbell.saturating_mul(2);
        if dword != self.mapped.doorbell.saturating_mul(2) {
            return self.remove_added(m);
        }
        let xccs: Vec<_> = self
            .xcc_bases
            .iter()
            .map(|b| self.gpu_bus.block(*b))
            .collect();
        self.mapped
            .unmap(&xccs, &mut self.kiqs, &self.clock)
            .map_err(|e| map_err(e, self.mapped.doorbell))?;
        let kiqs = core::mem::take(&mut self.kiqs);
        g::kiqs_down(&xccs, kiqs, self.clock).map_err(|e| map_err(e, self.mapped.doorbell))
    }
}

/// The queue step: the VMID pointed at the process tables (direct, kiq),
/// the queue placed and mapped, a barrier through it.
#[allow(clippy::too_many_arguments)]
pub fn run<'p>(
    gc: V9Gc,
    gpu: &Gpu<'p>,
    mem: &Memory<'p>,
    // The ring area's driver part (VMID0 only) and user part (also in the
    // process tables).
    (area, uarea): (&mut DeviceArena<'p>, &mut DeviceArena<'p>),
    kiqs: &mut Vec<XccKiqClient<'p>>,
    mode: Mapping,
    slot: &mut Option<UserQueue<'p>>,
    sink: &'p dyn Sink,
) -> Result<(), BringupError> {
    let s = Step::Queue;
    let p = gpu.platform;
    let clock = p.clock();
    let mapping = match mode {
        Mapping::Direct | Mapping::Kiq | Mapping::Hws => mode,
        Mapping::Mes => {
            return Err(ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
                "MES (GC 9 schedules with the HWS on the MEC: --mapping hws)",
                gpu.ips.generation,
            )))
            .at(s);
        }
    };
    let xcc_ips = gpu.ips.xccs();
    let xcc_bases: Vec<IpBases> = xcc_ips.iter().map(|x| x.bases).collect();
    let xccs: Vec<_> = xcc_bases.iter().map(|b| gpu.bus.block(*b)).collect();
    // `amdgpu_gmc_pd_addr()`: the root's address with the PDE's VALID bit.
    let pd = mem.process.root() | 1;
    if mapping == Mapping::Direct {
        // No KIQ ran: the MEC doorbell range its init writes, written here.
        for (i, x) in xccs.iter().enumerate() {
            barebell::gfx::queue_v9::mec_doorbell_range(*x, i, gc.doorbells.mec_range(i as u32))
                .map_err(|error| ErrorKind::Xcc(XccError::Kiq { xcc: i, error }))
                .at(s)?;
        }
    }
    if mapping != Mapping::Hws {
        v9::setup_vm_pt_regs(&xccs, gc.gfxhub, u32::from(USER_VMID), pd).at(s)?;
        for x in &xccs {
            v9::flush_gpu_tlb(x, clock, gc.gfxhub, u32::from(USER_VMID), 0).at(s)?;
        }
    }
    let now = || sink.wall_ns().unwrap_or_else(|| clock.now_ns());
    let t = now();
    let q = g::queue_gfx94(gc, gpu, area, uarea, kiqs, mapping, USER_VMID, pd)
        .map_err(ErrorKind::from)
        .at(s)?;
    let create_ns = now().saturating_sub(t);
    let layout = q.layout;
    let doorbell = q.doorbell;
    let (queue, signal, mapped) = q.split();
    let hqd = HqdMapping {
        doorbell,
        mqd_address: layout.map_or(0, |l| l.address),
        pipe: USER_SLOT.pipe_id,
        queue: USER_SLOT.queue_id,
        vmid: if mapping == Mapping::Hws {
            0
        } else {
            USER_VMID
        },
    };
    // From here the queue's unmapper owns the KIQs (it unmaps through
    // them, then takes them down); until here the teardown does.
    // KFD's HWS queue mask, as `g::queue_gfx94` computes it.
    let hws_mask = runlist::queue_mask(
        runlist::PIPES_PER_MEC_GC_9_4_3,
        runlist::QUEUES_PER_PIPE_GC_9_4_3,
        g::queue_mask(&[USER_SLOT]),
    );
    let unmapper = XccUnmapper {
        mapped,
        kiqs: core::mem::take(kiqs),
        xcc_bases,
        gpu_bus: gpu.bus.clone(),
        clock,
        pd,
        hws_mask,
        // SDMA 4.4.2 comes with GC 9.4.3 only; GC 9.4.2's is SDMA 4.4.0.
        sdma_bases: if gc.multi_xcc {
            crate::sdma::sdma_v4_4_2::sdma_v4_4_2_bases(gpu)
        } else {
            Vec::new()
        },
        sdma_plan: {
            let n = u8::try_from(gpu.ips.topology.sdma_mask.count_ones()).unwrap_or(u8::MAX);
            if gc.multi_xcc {
                SdmaDoorbells::gc_9_4_3(n)
            } else {
                SdmaDoorbells::vega20(n)
            }
        },
        added: Vec::new(),
    };
    let q = slot.insert(UserQueue::from_parts(
        queue,
        signal.get(),
        doorbell,
        mode,
        hqd,
        create_ns,
        Box::new(unmapper),
        gpu,
    ));
    let packet = q.barrier()?;
    q.packet_id = q
        .queue
        .submit(&packet, clock, crate::queue::BOUND_NS)
        .map_err(crate::error::QueueError::Submit)
        .at(s)?;
    q.wait_signal(0, crate::queue::BOUND_NS)?;
    let (mqds, hiq) = if gc.multi_xcc {
        (
            alloc::format!(
                "{} XCCs (one v9 MQD each, {} bytes apart at {:#x})",
                xccs.len(),
                g::MQD_STRIDE,
                hqd.mqd_address
            ),
            alloc::format!(
                "a HIQ on each of the {} XCCs mapped through its KIQ (MEC 2 pipe 0 queue 0, doorbell slot {:#x}, hiq_load_mqd_kiq_v9_4_3())",
                xccs.len(),
                gc.hiq_doorbell()
            ),
        )
    } else {
        (
            alloc::format!("one GC (v9 MQD at {:#x}, init_mqd())", hqd.mqd_address),
            alloc::format!(
                "the HIQ mapped through the KIQ (MEC 2 pipe 0 queue 0, doorbell slot {:#x}, kfd_hiq_load_mqd_kiq())",
                gc.hiq_doorbell()
            ),
        )
    };
    sink.step(
        s,
        format_args!(
            "queue ready: {} mapping, {}, {mqds}, {}, barrier {} completed (signal 1 -> 0; an AQL BARRIER_AND with no dependencies)",
            mode.name(),
            barebell::aql::doorbell::Slot::new(doorbell),
            if mapping == Mapping::Hws {
                alloc::format!(
                    "{hiq}, PASID {:#x}, VMID picked by the HWS",
                    g::PASID
                )
            } else {
                alloc::format!("VMID {USER_VMID}")
            },
            q.packet_id
        ),
    );
    Ok(())
}
