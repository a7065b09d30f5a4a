//! [`Gfx11`]: the GC 11 and GC 12 block models (Navi3x, Navi4x) of a
//! [`super::VirtualGpu`], built from the part description ([`build`]).
//!
//! - BAR5 routes each register to the block model that owns it: the
//!   discovery window (IFWI flag, VRAM size, `MM_INDEX`/`MM_DATA`), the
//!   NBIO, the MMHUB and GFXHUB hub models, the PSP (MP0 and the RLC
//!   autoload status), and the MEC (every other GC register: MES
//!   control, HQDs, doorbell range, KIQ). Accesses past the BAR are lost
//!   (counted) unless they go through the NBIO's RSMU index/data pair,
//!   as on a card.
//! - BAR2 is a page of 64-bit doorbells the MEC model watches; a store
//!   reaches a queue only through the NBIO's doorbell aperture and its
//!   S2A routing to the GC (`NbioModel::route_gc_doorbell`).
//! - The CP model reads every MEC-mapped queue through its VMID
//!   (`CpTranslate`): the GFXHUB's context registers and walk
//!   (`HubModel::translate_vmid_as`, client CPC) for direct and KIQ
//!   queues, the process tables MES was given for MES queues; then the
//!   VRAM backing or the IOMMU.
//! - A pause is where the firmware stand-ins run: the KIQ and MES models
//!   are found through the MEC model once their rings exist (as firmware
//!   would find them) and serviced, and the CP model runs to idle. The
//!   bring-up pauses between looks at every fence, so one thread
//!   suffices (the unikernel has one CPU).
//!
//! What is a model convention and not a public fact: the FB location,
//! FB offset and display mode the "VBIOS" leaves ([`crate::Part`]), the
//! discovery table's IP bases, the Navi48 TMR size the PSP model asks
//! for (Navi31's is a real card's), the PSP's timings
//! (`psp::PspTiming::MODEL`), and everything listed as such in the block
//! models.

// Issue 15: what tinygrad's AM driver needs (SOC blocks, refusals,
// discovery in VRAM, doorbell stores).
mod am;
mod build;
pub use am::FACTS as AM_FACTS;
pub use am::RefusalMark;
use am::soc_blocks;

use crate::SimClock;
use crate::bar::DoorbellPage;
use crate::dcn::DcnModel;
use crate::discovery::{self, VramWindow};
use crate::dma::Dma;
use crate::error::ModelError;
use crate::gmc::{Access, Gmc, VmFault};
use crate::hub::{HubModel, HubRefusal};
use crate::kiq::{KernelView, KiqDevice, KiqModel, RegisterStores};
use crate::mec::Mec;
use crate::mes::{MesApiVersion, MesModel};
use crate::nbio::NbioModel;
use crate::psp::PspModel;
use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::ip::Generation;
use barebell::platform::Aperture;
use barebell::regs::hub::HubRegs;
use barebell::regs::{IpBases, Reg};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;

/// Steps the CP model may take in one pause before it must be idle.
const CP_STEPS_PER_PAUSE: u64 = 1_000_000;
use super::backing::Backing;
use super::{Files, Inputs};

/// The firmware stand-ins, found once their rings exist.
#[derive(Default)]
struct Firmwares {
    kiq: Option<KiqModel>,
    sched: Option<MesModel>,
    pipe1: Option<MesModel>,
    /// The MEC's [`Mec::epoch`] when these were found: once the firmware
    /// stopped (halt, mode-1 reset) they are dropped and found again on
    /// the rings the next driver makes.
    epoch: u64,
}

/// The GC 11 / GC 12 block models of a [`super::VirtualGpu`].
pub struct Gfx11 {
    nbio: Arc<NbioModel>,
    mmhub: Arc<HubModel>,
    gfxhub: Arc<HubModel>,
    dcn: Option<Arc<DcnModel>>,
    psp: Arc<PspModel>,
    mec: Arc<Mec>,
    api: MesApiVersion,
    mes_info: MesInfo,
    firmwares: Mutex<Firmwares>,
    /// What the firmware stand-ins a CP reset dropped had logged, and
    /// any frames they left undone (kept for the diagnostics).
    retired: Mutex<Vec<String>>,
    doorbells: Box<DoorbellPage>,
    /// The memory a walk reaches (the device's VRAM backing and DMA
    /// chunks).
    space: Space,
    clock: SimClock,
    /// Fault switch: the MES and KIQ firmware stand-ins never run.
    schedulers_silent: AtomicBool,
    /// Issue 20 fault switches: the MES scheduler pipe / the KIQ stops
    /// consuming its ring (a hung firmware); a CP soft reset or a mode-1
    /// reset clears them (the firmware restarts from its reset state).
    mes_hung: AtomicBool,
    kiq_hung: AtomicBool,
    /// CP resets the firmware stand-ins have seen (they restart after one).
    fw_epoch: core::sync::atomic::AtomicU64,
    /// Register stores the KIQ made, for the device's register bus.
    kiq_registers: RegisterStores,
    /// Issue 15: the SOC blocks (SMU, IH, SDMA, clock gating, S2A).
    soc: Arc<crate::socblocks::SocBlocks>,
    /// SDMA engine 0, as the device's engine list.
    sdma: Vec<Arc<crate::sdma::SdmaModel>>,
}

impl core::fmt::Debug for Gfx11 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Gfx11").finish_non_exhaustive()
    }
}

/// What the MES model checks SET_HW_RSRC and ADD_QUEUE against, from the
/// part's own description (not from what the runtime discovered).
#[derive(Debug, Clone, Copy)]
struct MesInfo {
    gc: [Option<u32>; 5],
    mmhub: [Option<u32>; 5],
    osssys: [Option<u32>; 5],
    sdma: usize,
    /// `GCVM_CONTEXT1_CNTL` in the BAR.
    ctx1_cntl: usize,
}

impl MesInfo {
    fn of(desc: &discovery::PartDesc, ctx1_cntl: usize) -> Self {
        let ips = || desc.dies.iter().flat_map(|d| d.iter());
        let five = |id: u16| {
            let mut o = [None; 5];
            if let Some(ip) = ips().find(|ip| ip.hw_id == id && ip.instance == 0) {
                for (d, b) in o.iter_mut().zip(ip.bases) {
                    *d = Some(*b as u32);
                }
            }
            o
        };
        MesInfo {
            gc: five(discovery::GC_HWID),
            mmhub: five(discovery::MMHUB_HWID),
            osssys: five(discovery::OSSSYS_HWID),
            sdma: ips().filter(|ip| ip.hw_id == discovery::SDMA0_HWID).count(),
            ctx1_cntl,
        }
    }

    fn part(&self, hub: Arc<HubModel>, sdma: Arc<crate::sdma::SdmaModel>) -> crate::mes::MesPart {
        let at = self.ctx1_cntl;
        crate::mes::MesPart {
            gc_base: self.gc,
            mmhub_base: self.mmhub,
            osssys_base: self.osssys,
            sdma_instances: self.sdma,
            context_cntl: Box::new(move || hub.read32(at)),
            sdma: Some(sdma),
        }
    }
}

fn offsets(regs: &[Reg], bases: &IpBases) -> BTreeSet<usize> {
    regs.iter().filter_map(|r| r.byte_offset(bases)).collect()
}

/// A hub's own registers: its named ones plus contexts 1..=15's CNTL,
/// base, start and end (`gfxhub_v3_0_setup_vmid_config()` and a user
/// VMID's base reach them as context 1's register plus a stride, names
/// the tables do not list).
/// Invalidation engines per hub (the loop bound of
/// `mmhub_v3_0_program_invalidation()`).
const INVALIDATION_ENGINES: u32 = 18;

fn hub_offsets(named: &[Reg], h: &HubRegs, bases: &IpBases) -> BTreeSet<usize> {
    let mut set = offsets(named, bases);
    let at = |r: Reg, dwords: u32| r.byte_offset(bases).map(|o| o + 4 * dwords as usize);
    for i in 0..15u32 {
        set.extend(at(h.ctx1_cntl, i * h.ctx_distance()));
        for lo in [h.ctx1_base_lo, h.ctx1_start_lo, h.ctx1_end_lo] {
            let a = i * h.ctx_addr_distance();
            set.extend(at(lo, a));
            set.extend(at(lo, a + 1));
        }
    }
    // The invalidation engines' address ranges, LO32/HI32 per engine:
    // `mmhub_v3_0_program_invalidation()` / `gfxhub_v3_0_program_invalidation()`
    // (and AM's `AM_GMC.init_hw`) write all 18 (`for (i = 0; i < 18; ++i)`).
    for i in 0..INVALIDATION_ENGINES {
        let a = i * h.eng_addr_distance();
        set.extend(at(h.inv_eng0_range_lo, a));
        set.extend(at(h.inv_eng0_range_lo, a + 1));
    }
    set
}

/// Builds the GC 11 / GC 12 block models of `x.part`: each from the
/// part description ([`build`]), in this order.
pub(super) fn build(x: &Inputs<'_>) -> Result<super::Built, ModelError> {
    let (part, clock, memory) = (x.part, x.clock, x.memory);
    let (table, _) = discovery::build(&part.firmware.desc);
    // The part's own IP list: the model never parses the table it
    // writes (a driver does).
    let d = discovery::PartIps::new(&part.firmware.desc);
    let pl = build::place(&d)?;
    let window = Arc::new(VramWindow::new(
        clock,
        part.firmware.vram_mib,
        table.clone(),
    ));
    let nbio_ip = part.nbio.ok_or(ModelError::Unsupported {
        what: "NBIO model",
        version: pl.nbif.version.triple(),
    })?;
    let nbio = Arc::new(NbioModel::new(
        clock,
        nbio_ip,
        pl.nbif.bases,
        nbio_ip.hole(),
    ));
    let (mmhub, gfxhub, fb_regs) = build::hubs(clock, part, &pl)?;
    let dcn = build::dcn(clock, part, &d, memory);
    let psp = build::psp(clock, part, &pl, x.files, &mmhub, memory)?;
    let (doorbells, mec) = build::mec(clock, part, &pl, x.files, x.seed, memory, &psp)?;
    let side = build::GcSide {
        pl: &pl,
        g: part.generation,
        window,
        nbio,
        mmhub,
        gfxhub,
        psp,
        mec,
    };
    let soc = build::soc(clock, &d, part, x.files, &side, fb_regs, memory)?;
    // The display's registers, then the SOC blocks', before the GC's
    // catch-all.
    let mut routes: build::Routes = Vec::new();
    if let Some(m) = &dcn {
        routes.push((m.offsets().collect(), m.clone()));
    }
    routes.extend(soc.routes());
    routes.extend(build::gc_routes(&side)?);
    let (router, index_data) = build::router(&side, &d, &soc, routes)?;
    let (api, mes_info) = build::mes(part, &pl)?;
    build::place_discovery(part, memory, &table);
    let gc = Gfx11 {
        nbio: side.nbio,
        mmhub: side.mmhub,
        gfxhub: side.gfxhub,
        dcn,
        psp: side.psp.clone(),
        mec: side.mec,
        api,
        mes_info,
        firmwares: Mutex::new(Firmwares::default()),
        retired: Mutex::new(Vec::new()),
        doorbells,
        space: Space {
            backing: Backing::new(memory, x.chunk_bus),
            gfx12: part.generation == Generation::Gfx12,
            fb_offset: part.fb_offset,
        },
        clock: clock.clone(),
        schedulers_silent: AtomicBool::new(false),
        mes_hung: AtomicBool::new(false),
        kiq_hung: AtomicBool::new(false),
        fw_epoch: core::sync::atomic::AtomicU64::new(0),
        kiq_registers: RegisterStores::default(),
        sdma: soc.sdma_engines(),
        soc,
    };
    gc.connect_translators();
    Ok(super::Built {
        router,
        index_data,
        index_data2: None,
        psp: side.psp,
        ih: gc.soc.ih.clone(),
        pci: gc.soc.pci.clone(),
        bus_master: gc.soc.bus_master.clone(),
        gc: Box::new(gc),
    })
}

impl Gfx11 {
    /// The CP reads every MEC-mapped queue through its VMID: the GFXHUB's
    /// context registers and walk (for MES queues, the context MES
    /// programmed for the VMID it assigned). SDMA 0 reaches memory through
    /// its VMID's walk and is rung through BAR2, the NBIO aperture and S2A
    /// entry 2 (issue 19).
    fn connect_translators(&self) {
        let t = CpTranslate {
            hub: self.gfxhub.clone(),
            space: self.space(),
        };
        self.mec.cp().set_translator(Box::new(t));
        let hdp_flush = self.mec.cp().pm4_registers().hdp_flush;
        let clients = [crate::sdma::CID_SDMA0, crate::sdma::CID_SDMA1];
        for (n, (engine, client)) in self.soc.sdma_engines().iter().zip(clients).enumerate() {
            let port = SdmaPortImpl {
                hub: self.gfxhub.clone(),
                vram: self.space.backing.vram_window(),
                iommu: self.space.backing.iommu_window(),
                fb_offset: self.space.fb_offset,
                doorbells: &*self.doorbells as *const DoorbellPage as u64,
                nbio: self.nbio.clone(),
                s2a: self.soc.s2a.clone(),
                clock: self.clock.clone(),
                hdp_flush,
                cpu: self.space.backing.cpu,
                client,
                instance: n as u8,
                ih: self.soc.ih.clone(),
            };
            engine.set_port(Arc::new(port));
        }
    }

    /// The MEC model (HQDs, MES pipes, the CP behind them), e.g. to run
    /// it on a thread of its own.
    pub fn mec(&self) -> &Mec {
        &self.mec
    }

    /// What can still reach host or device memory on its own, where
    /// `amdgpu_device_fini_hw()` leaves nothing that can:
    /// - an HQD active on the MEC (a user queue, the KIQ, a kernel queue):
    ///   it points at a ring, an MQD and a doorbell;
    /// - a MES pipe running (`mes_v11_0_enable(false)` halts both);
    /// - a MEC pipe running or the MEC not halted
    ///   (`gfx_v11_0_cp_compute_enable(false)` sets `MEC_HALT`);
    /// - the PSP's GPCOM ring not destroyed (`psp_ring_stop()`);
    /// - the doorbell aperture or the self-ring aperture open
    ///   (`soc21_common_hw_fini()` closes both);
    /// - an IH ring enabled (`ih_v6_0_hw_fini()` → `ih_v6_0_irq_disable()`):
    ///   it writes its ring and write-pointer copy on every interrupt;
    fn still_running(&self) -> Vec<String> {
        let mut why = Vec::new();
        for h in self.mec.active_hqds() {
            let (me, pipe, queue) = h.slot;
            why.push(format!(
                "HQD ME {me} pipe {pipe} queue {queue} active (doorbell dword {:#x}, VMID {})",
                h.doorbell_dword, h.vmid
            ));
        }
        for pipe in 0..2u8 {
            if self.mec.mes_pipe_running(pipe) {
                why.push(format!("MES pipe {pipe} running"));
            }
        }
        let running = self.mec.running_pipes();
        if running != 0 {
            why.push(format!("MEC pipes {running:#06b} running"));
        }
        if self.mec.mec_cntl() & crate::cpregs::mec_cntl::HALT == 0 {
            why.push("MEC not halted (CP_MEC_RS64_CNTL.MEC_HALT clear)".into());
        }
        // Linux's `sdma_v6_0_hw_fini()` / `sdma_v7_0_hw_fini()` end with
        // `sdma_v*_enable(adev, false)`: every instance's queue stopped
        // (`sdma_v6_0_gfx_stop()`: RB_ENABLE, IB_ENABLE clear) and its
        // `SDMA0_F32_CNTL.HALT` (`SDMA0_MCU_CNTL` on 7.0) set. A queue or a
        // running engine left behind still reads rings and writes fences
        // in memory the teardown hands back.
        for (n, e) in self.soc.sdma_engines().iter().enumerate() {
            if let Some(q) = e.queue() {
                why.push(format!(
                    "SDMA {n}: queue active (ring {:#x}, VMID {}, doorbell dword {:?})",
                    q.ring, q.vmid, q.doorbell
                ));
            }
            if e.running() {
                why.push(format!(
                    "SDMA {n}: engine running (F32_CNTL/MCU_CNTL HALT clear)"
                ));
            }
        }
        if let Some((addr, bytes)) = self.psp.ring() {
            why.push(format!(
                "PSP GPCOM ring live at {addr:#x} ({bytes:#x} bytes)"
            ));
        }
        if self.nbio.doorbell_aperture_open() {
            why.push("doorbell aperture open".into());
        }
        if let Some(b) = self.nbio.selfring_base() {
            why.push(format!("doorbell self-ring aperture open at {b:#x}"));
        }
        for r in self.soc.ih.rings() {
            why.push(format!(
                "IH ring {} enabled at {:#x} ({:#x} bytes)",
                r.ring, r.base, r.bytes
            ));
        }
        // An enabled VM context still walks its page tables, which live
        // in memory the teardown hands back: Linux turns every context
        // off (`gfxhub_v3_0_gart_disable()` from `gfx_v11_0_hw_fini()`,
        // `mmhub_v3_0_gart_disable()` from `gmc_v11_0_hw_fini()`, and
        // their v12 / 4.1.0 twins, all 16 contexts' CNTL written 0).
        for (name, hub) in [("GFXHUB", &self.gfxhub), ("MMHUB", &self.mmhub)] {
            let on: Vec<u8> = (0..16u8).filter(|&v| hub.context_regs(v).enabled).collect();
            if let Some(&first) = on.first() {
                why.push(format!(
                    "{name} VM contexts {on:?} enabled (context {first}'s page-table base {:#x})",
                    hub.context_regs(first).base
                ));
            }
        }
        // sOS keeps running on its TMR after the teardown (Linux frees
        // it only in `psp_hw_fini()`): nothing may have written into it.
        if let Err(e) = self.psp.tmr_intact() {
            why.push(e);
        }
        why
    }

    /// S2A doorbell entries 0 and 3 as the device holds them.
    pub fn s2a_entries(&self) -> [u32; 2] {
        [self.soc.s2a.entry(0), self.soc.s2a.entry(3)]
    }

    /// Fault switch: the MES and KIQ firmware never answer (as on a part
    /// whose MES code did not load). tinygrad's topology, one AQL queue
    /// loaded straight into MEC pipe 0 queue 0, needs neither.
    pub fn silence_schedulers(&self, on: bool) {
        self.schedulers_silent.store(on, Ordering::Relaxed);
    }

    /// Fault switch (issue 20): the MES scheduler pipe stops consuming
    /// its ring: frames sit unread, its read pointer and fences stay put.
    /// Cleared by a CP soft reset or a mode-1 reset.
    pub fn hang_mes(&self) {
        self.mes_hung.store(true, Ordering::Relaxed);
    }

    /// Fault switch (issue 20): the KIQ (gfx11: the KIQ firmware on MES
    /// pipe 1; gfx12 uni-MES: pipe 1's MES API) stops consuming its ring.
    /// Cleared by a CP soft reset or a mode-1 reset.
    pub fn hang_kiq(&self) {
        self.kiq_hung.store(true, Ordering::Relaxed);
    }

    /// The device fell off the bus: nothing on it runs any more: the
    /// CP, the MES scheduler pipe and the KIQ stop, so no fence or read
    /// pointer moves again.
    fn stop_everything(&self) {
        self.mec.cp().faults.stop_consuming = true;
        self.mes_hung.store(true, Ordering::Relaxed);
        self.kiq_hung.store(true, Ordering::Relaxed);
    }

    pub fn nbio(&self) -> &NbioModel {
        &self.nbio
    }

    pub fn mmhub(&self) -> &HubModel {
        &self.mmhub
    }

    pub fn gfxhub(&self) -> &HubModel {
        &self.gfxhub
    }

    /// The display model, if the part has one.
    pub fn dcn(&self) -> Option<&DcnModel> {
        self.dcn.as_deref()
    }

    /// The first VRAM offset of the VBIOS's picture on screen that the
    /// host overwrote, or `None` (intact, or no display).
    pub fn scanout_clobbered(&self) -> Option<u64> {
        self.dcn.as_ref().and_then(|m| m.clobbered())
    }

    /// The host address the GPU reaches at `va` through the tables
    /// rooted at `root` (a VRAM physical address): the walk the hub
    /// makes, then the IOMMU (SYSTEM pages) or the VRAM backing.
    pub fn translate(&self, root: u64, va: u64, access: Access) -> Result<u64, VmFault> {
        self.space().translate(root, va, access)
    }

    fn space(&self) -> Space {
        self.space.clone()
    }

    /// What a KIQ found on this device gets: VMID 0's decode on the
    /// GFXHUB ([`vmid0_host`]) and the KIQ's register stores.
    fn kiq_device(&self) -> KiqDevice {
        KiqDevice {
            view: Some(self.kernel_view()),
            registers: Some(self.kiq_registers.clone()),
        }
    }

    /// VMID 0's decode on the GFXHUB ([`vmid0_host`]), for the KIQ and
    /// MES firmware.
    fn kernel_view(&self) -> KernelView {
        let (hub, space) = (self.gfxhub.clone(), self.space());
        KernelView(Box::new(move |va, access| {
            vmid0_host(&hub, &space, va, access)
        }))
    }

    /// Where the KIQ firmware the model found runs, once it found one.
    pub fn kiq_home(&self) -> Option<crate::kiq::KiqHome> {
        self.firmwares.lock().kiq.as_ref().map(KiqModel::home)
    }

    /// The KIQ model's event log (empty before a KIQ came up).
    pub fn kiq_log(&self) -> Vec<crate::kiq::KiqEvent> {
        self.firmwares
            .lock()
            .kiq
            .as_ref()
            .map(KiqModel::log)
            .unwrap_or_default()
    }

    /// The MES scheduler pipe's event log (empty before MES came up).
    pub fn mes_log(&self) -> Vec<crate::mes::MesEvent> {
        self.firmwares
            .lock()
            .sched
            .as_ref()
            .map(MesModel::log)
            .unwrap_or_default()
    }

    /// MES pipe 1's event log on gfx12 uni-MES (empty otherwise).
    pub fn mes_pipe1_log(&self) -> Vec<crate::mes::MesEvent> {
        self.firmwares
            .lock()
            .pipe1
            .as_ref()
            .map(MesModel::log)
            .unwrap_or_default()
    }

    /// What the firmware stand-ins logged, for error reports.
    pub fn firmware_logs(&self) -> String {
        let f = self.firmwares.lock();
        format!(
            "{}KIQ model: {:?}\nMES pipe 1: {:?}\nscheduler: {:?}\nMEC: {:?}",
            self.retired
                .lock()
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
            f.kiq.as_ref().map(|k| k.log()),
            f.pipe1.as_ref().map(|m| m.log()),
            f.sched.as_ref().map(|m| m.log()),
            self.mec.events()
        )
    }

    /// Keeps what the MES stand-ins about to be dropped logged, and any
    /// frames they left undone, for the diagnostics.
    fn retire(&self, f: &Firmwares, why: &str) {
        let mut r = self.retired.lock();
        for (name, m) in [("MES", &f.sched), ("MES pipe 1", &f.pipe1)] {
            if let Some(m) = m {
                if let Some(stall) = m.stalled() {
                    r.push(format!("{name} (before {why}): {stall}"));
                }
                for e in m.log() {
                    if let crate::mes::MesEvent::Refused { opcode, why: w } = e {
                        r.push(format!(
                            "the {name} model (before {why}) refused opcode {opcode}: {w:?}"
                        ));
                    }
                }
                r.push(format!("{name} (before {why}) log: {:?}", m.log()));
            }
        }
    }

    fn translator(&self) -> crate::mes::Translator {
        let space = self.space();
        Box::new(move |root, va, access| space.translate(root, va, access))
    }
}

/// The memory a walk reaches (plain numbers, so a translator can own a
/// copy) and how the walk reads PTEs.
#[derive(Debug, Clone)]
struct Space {
    backing: Backing,
    gfx12: bool,
    /// Physical address of VRAM offset 0 (`*MC_VM_FB_OFFSET`).
    fb_offset: u64,
}

impl Space {
    fn translate(&self, root: u64, va: u64, access: Access) -> Result<u64, VmFault> {
        let vram = self.backing.vram_window();
        let t = Gmc::new(&vram, root & !0xFFF, self.gfx12)
            .with_vram_base(self.fb_offset)
            .translate(va, access)?;
        t.coherent(self.backing.cpu)
            .map_err(|reason| VmFault { va, access, reason })?;
        let fb = self.fb_offset;
        self.backing.host(t.pa, t.system, fb).ok_or(VmFault {
            va,
            access,
            reason: crate::gmc::FaultReason::BadTable { level: 3 },
        })
    }
}

/// Whether S2A doorbell entry 2 (`entry`, as the device holds it) routes
/// doorbell `dword` to SDMA: enabled, not dropping, AWID 0xe and
/// `AWADDR_31_28_VALUE` 3 as `nbio_v4_3_sdma_doorbell_range()` programs
/// them, and `dword` inside `RANGE_OFFSET .. + RANGE_SIZE` (dwords).
fn sdma_claims(entry: u32, dword: u32) -> bool {
    use crate::s2a::entry as e;
    use crate::soc::field;
    crate::nbio::s2a::routes(entry, (0xe, 3)) && {
        let off = field(entry, e::RANGE_OFFSET);
        let size = field(entry, e::RANGE_SIZE);
        dword >= off && dword < off + size
    }
}

/// What SDMA 0 reaches the device through (`crate::sdma::SdmaPort`).
struct SdmaPortImpl {
    hub: Arc<HubModel>,
    /// Windows over the VirtualGpu's VRAM backing and DMA chunks (built
    /// once: a copy translates every page it touches).
    vram: Dma,
    iommu: Dma,
    fb_offset: u64,
    /// Host address of the boxed doorbell page.
    doorbells: u64,
    nbio: Arc<NbioModel>,
    s2a: Arc<crate::s2a::S2aModel>,
    clock: SimClock,
    /// The NBIO's HDP flush request and done registers (dwords).
    hdp_flush: Option<(u32, u32)>,
    /// How the CPU maps the DMA region.
    cpu: crate::gmc::CpuCaching,
    /// The engine's GFXHUB client id (what its faults latch).
    client: u16,
    /// The engine's instance, and the IH its traps go to.
    instance: u8,
    ih: Arc<crate::ih::IhModel>,
}

// SAFETY: `doorbells` is the address of the VirtualGpu's boxed doorbell
// page (512 `AtomicU64`s, only accessed atomically) and `vram`/`iommu`
// are windows over its memory, all of which outlive the SDMA model
// holding this port (the SOC blocks drop with the VirtualGpu, before its
// memory); the windows are only read through.
unsafe impl Send for SdmaPortImpl {}
// SAFETY: as above.
unsafe impl Sync for SdmaPortImpl {}

impl crate::sdma::SdmaPort for SdmaPortImpl {
    fn translate(
        &self,
        vmid: u8,
        va: u64,
        access: Access,
    ) -> Result<(u64, u64), crate::sdma::SdmaVmError> {
        use crate::sdma::SdmaVmError;
        // VMID 0 decodes the system aperture first, as the CP's kernel
        // queues do (`aperture_host`): Linux's kernel SDMA work names VRAM
        // by MC address (`amdgpu_vm_sdma_update()`'s page-table entries,
        // `amdgpu_bo_gpu_offset()`).
        if vmid == 0
            && let Some(v) = self.hub.vmid0()
            && v.fb_start != 0
            && (v.fb_start..=v.fb_end).contains(&va)
        {
            let off = va - v.fb_start;
            let host = self.vram.host_of(off, 1).ok_or(SdmaVmError::Unbacked {
                pa: off + self.fb_offset,
            })?;
            let run = (v.fb_end - va + 1).min(self.vram.run_from(off));
            return Ok((host, run.max(1)));
        }
        let tr = self
            .hub
            .translate_vmid_as(&self.vram, vmid, va, access, self.client)
            .map_err(|refusal| SdmaVmError::Refused { refusal })?;
        // SNOOPED on a system page (`Translation::coherent`).
        tr.coherent(self.cpu)
            .map_err(|_| SdmaVmError::NotSnooped { pa: tr.pa })?;
        let (mem, at) = if tr.system {
            (&self.iommu, Some(tr.pa))
        } else {
            (&self.vram, tr.pa.checked_sub(self.fb_offset))
        };
        let at = at.ok_or(SdmaVmError::Unbacked { pa: tr.pa })?;
        let host = mem
            .host_of(at, 1)
            .ok_or(SdmaVmError::Unbacked { pa: tr.pa })?;
        // The rest of the TLB entry that served `va` (a fragment or large
        // page is contiguous), as far as one memory window backs it;
        // at least the rest of the 4 KiB page.
        let span = tr.tlb_bytes.max(4096);
        let page_run = 4096 - va % 4096;
        let run = span - va % span;
        let run = if run > page_run && mem.covers(at, run) {
            run
        } else {
            page_run
        };
        Ok((host, run))
    }

    fn doorbell(&self, dword: u32) -> u64 {
        let slot = (dword / 2) as usize;
        let page = self.doorbells as *const DoorbellPage;
        // SAFETY: the page outlives this port (see the `Send` impl); its
        // slots are atomics.
        unsafe { &*page }
            .0
            .get(slot)
            .map_or(0, |a| a.load(Ordering::Acquire))
    }

    fn routed(&self, dword: u32) -> bool {
        self.nbio.doorbell_aperture_open() && sdma_claims(self.s2a.entry(2), dword)
    }

    fn now_ns(&self) -> u64 {
        barebell::time::Clock::now_ns(&self.clock)
    }

    fn hdp_flush(&self) -> Option<(u32, u32)> {
        self.hdp_flush
    }

    fn trap(&self, context: u32) {
        self.ih
            .raise(crate::ih::IvEntry::sdma_trap(self.instance, context));
    }
}

/// The host address a VMID 0 access by the CP to `va` reaches:
/// - inside the system aperture (`GCMC_VM_SYSTEM_APERTURE_LOW/HIGH_ADDR`,
///   the FB range `gfxhub_v3_0_init_system_aperture_regs()` programs with
///   AGP off, as [`crate::mc`] decodes it for the PSP): VRAM, offset
///   `va - low` (Linux's kernel BOs in VRAM go to rings and MQDs at these
///   MC addresses, `amdgpu_bo_gpu_offset()`);
/// - inside context 0's `PAGE_TABLE_START/END` (the GART): context 0's
///   walk (faults latched by the hub);
/// - anything else, or with context 0 off: `va` itself, the host-address
///   window the CP side has always read for the runtime's own kernel
///   rings (*model convention*: barebell places them at GPU VA = host
///   address; a device would fault).
fn aperture_host(hub: &HubModel, space: &Space, va: u64) -> Option<Option<u64>> {
    let v = hub.vmid0()?;
    if v.fb_start == 0 || !(v.fb_start..=v.fb_end).contains(&va) {
        return None;
    }
    let pa = (va - v.fb_start).saturating_add(space.fb_offset);
    Some(space.backing.host(pa, false, space.fb_offset))
}

/// See [`aperture_host`]: VMID 0's decode for the CP's kernel queues.
fn vmid0_host(hub: &HubModel, space: &Space, va: u64, access: Access) -> Option<u64> {
    if let Some(h) = aperture_host(hub, space, va) {
        return h;
    }
    let Some(v) = hub.vmid0() else {
        return Some(va);
    };
    if !(v.start..=v.end).contains(&va) {
        return Some(va);
    }
    let vram = space.backing.vram_window();
    let t = hub.translate_vmid_as(&vram, 0, va, access, CID_CPC).ok()?;
    t.coherent(space.backing.cpu).ok()?;
    space.backing.host(t.pa, t.system, space.fb_offset)
}

/// GFXHUB client id of the compute CP (`CPC`, index 5 of
/// `gfxhub_client_ids` in `gfxhub_v3_0.c`), what a CP fault latches.
const CID_CPC: u16 = 5;

/// The CP's view of a queue's address space (`cp::Translate`).
struct CpTranslate {
    hub: Arc<HubModel>,
    space: Space,
}

impl crate::cp::Translate for CpTranslate {
    fn translate(
        &self,
        space: crate::gmc::AddressSpace,
        va: u64,
        access: Access,
    ) -> Result<u64, crate::gmc::VmRefusal> {
        use crate::gmc::{AddressSpace, VmRefusal};
        let vmid = match space {
            AddressSpace::Identity => return Ok(va),
            AddressSpace::Vmid(v) => v,
        };
        // VMID 0 decodes the system aperture before its context
        // ([`aperture_host`]); Linux's kernel compute queues keep their
        // MQDs and EOP buffers in VRAM at MC addresses.
        if vmid == 0
            && let Some(h) = aperture_host(&self.hub, &self.space, va)
        {
            return h.ok_or(VmRefusal::Unbacked { pa: va });
        }
        let vram = self.space.backing.vram_window();
        let t = self
            .hub
            .translate_vmid_as(&vram, vmid, va, access, CID_CPC)
            .map_err(|r| match r {
                HubRefusal::InvalidBase { raw } => VmRefusal::InvalidBase { raw },
                HubRefusal::OutOfRange { start, end, .. } => VmRefusal::OutOfRange { start, end },
                HubRefusal::Fault(f) => VmRefusal::Walk(f.reason),
                _ => VmRefusal::ContextDisabled,
            })?;
        // The CP's and the waves' accesses: SNOOPED on a system page
        // (`Translation::coherent`).
        t.coherent(self.space.backing.cpu)
            .map_err(VmRefusal::Walk)?;
        self.space
            .backing
            .host(t.pa, t.system, self.space.fb_offset)
            .ok_or(VmRefusal::Unbacked { pa: t.pa })
    }

    fn generation(&self) -> u64 {
        let s = self.hub.invalidations();
        s.completed.iter().map(|&n| u64::from(n)).sum()
    }
}

impl super::GcModel for Gfx11 {
    fn pause(&self) -> bool {
        let mut f = self.firmwares.lock();
        let epoch = self.mec.epoch();
        if f.epoch != epoch {
            self.retire(&f, "the firmware stopped");
            *f = Firmwares {
                epoch,
                ..Firmwares::default()
            };
        }
        if f.kiq.is_none() {
            // gfx11 runs the KIQ firmware on MES pipe 1 (`enable_mes_kiq`,
            // `mes_v11_0_kiq_setting()`); a KIQ on a MEC slot is the
            // `!enable_mes_kiq` path, which the KIQ model refuses while
            // MES pipe 1 runs. gfx12 uni-MES runs the MES API on pipe 1
            // (the `pipe1` model below), so only a MEC KIQ can appear.
            f.kiq = match self.api {
                MesApiVersion::V11 => KiqModel::from_mes_pipe(self.mec.clone(), self.kiq_device())
                    .or_else(|| KiqModel::from_mec(self.mec.clone(), self.kiq_device())),
                MesApiVersion::V12 => KiqModel::from_mec(self.mec.clone(), self.kiq_device()),
            };
        }
        if f.sched.is_none() {
            f.sched = MesModel::from_mec(self.mec.clone(), self.api).map(|m| {
                m.with_translator(self.translator())
                    .with_kernel_view(self.kernel_view())
                    .with_cpu_caching(self.space.backing.cpu)
                    .with_register_stores(self.kiq_registers.clone())
                    .with_hub(self.gfxhub.clone())
                    .with_part(
                        self.mes_info
                            .part(self.gfxhub.clone(), self.soc.sdma.clone()),
                    )
            });
        }
        // gfx12 uni-MES: `mes_v12_0_kiq_hw_init()` tells the RLC that MES
        // pipe 1 (ME 3 pipe 1 queue 0, `mes.ring[AMDGPU_MES_KIQ_PIPE]`) is
        // the KIQ (`mes_v12_0_kiq_setting()`: `RLC_CP_SCHEDULERS`) before
        // it starts MES and loads that ring. The model serves pipe 1's
        // ring only once `RLC_CP_SCHEDULERS` names it, as it does for the
        // gfx11 MES KIQ ([`KiqModel::from_mes_pipe`]) (*model rule*: what
        // the RLC does with an unnamed KIQ is not public; both drivers name
        // it before the ring comes up).
        let named =
            self.mec.rlc_cp_schedulers() & 0xFF == crate::kiq::scheduler0(crate::kiq::MES_KIQ_SLOT);
        if f.pipe1.is_none() && self.api == MesApiVersion::V12 && named {
            f.pipe1 = MesModel::from_mec_pipe(self.mec.clone(), 1, self.api).map(|m| {
                m.with_kernel_view(self.kernel_view())
                    .with_cpu_caching(self.space.backing.cpu)
                    .with_register_stores(self.kiq_registers.clone())
                    .with_part(
                        self.mes_info
                            .part(self.gfxhub.clone(), self.soc.sdma.clone()),
                    )
            });
        }
        let epoch = self.mec.cp_resets();
        if self.fw_epoch.swap(epoch, Ordering::Relaxed) != epoch {
            // The CP was reset: the firmware stand-ins lost their rings
            // and state (and a hung one its hang).
            self.retire(&f, "a CP reset");
            *f = Firmwares::default();
            self.mes_hung.store(false, Ordering::Relaxed);
            self.kiq_hung.store(false, Ordering::Relaxed);
        }
        let mut worked = 0;
        if self.schedulers_silent.load(Ordering::Relaxed) {
            drop(f);
            for e in self.soc.sdma_engines() {
                e.service();
            }
            let steps = self.mec.run_until_idle(CP_STEPS_PER_PAUSE);
            return steps.is_some_and(|n| n <= 2);
        }
        let (mes_hung, kiq_hung) = (
            self.mes_hung.load(Ordering::Relaxed),
            self.kiq_hung.load(Ordering::Relaxed),
        );
        if let Some(k) = f.kiq.as_ref().filter(|_| !kiq_hung) {
            worked += k.service();
        }
        if let Some(m) = f.pipe1.as_ref().filter(|_| !kiq_hung) {
            worked += m.service() + m.register_waits().len();
        }
        if let Some(m) = f.sched.as_ref().filter(|_| !mes_hung) {
            worked += m.service() + m.register_waits().len();
        }
        drop(f);
        for e in self.soc.sdma_engines() {
            worked += e.service() + e.register_waits().len();
        }
        // `run_until_idle` takes two steps to see an idle CP.
        let steps = self.mec.run_until_idle(CP_STEPS_PER_PAUSE);
        worked == 0 && steps.is_some_and(|n| n <= 2)
    }
    fn still_running(&self) -> Vec<String> {
        Gfx11::still_running(self)
    }
    fn diagnostics(&self) -> Vec<String> {
        let mut out = Vec::new();
        // As on GC 9.4.3: what the CP side refused or stopped on.
        for e in self.mec.events() {
            use crate::mec::MecEvent as E;
            match e {
                E::Refused {
                    me,
                    pipe,
                    queue,
                    why,
                } => out.push(format!(
                    "the MEC model refused HQD me {me} pipe {pipe} queue {queue}: {why:?}"
                )),
                E::MesPipeWithoutCode { pipe } => out.push(format!(
                    "MES pipe {pipe} was started with no code loaded for it (the RLC autoload did not place it)"
                )),
                E::MesRingRefused { pipe, why } => {
                    out.push(format!("MES pipe {pipe}'s ring was refused: {why}"));
                }
                _ => {}
            }
        }
        {
            let cp = self.mec.cp();
            for e in cp.errors() {
                out.push(format!("the CP model: {e}"));
            }
            // Every queue that stopped, stalled or still has work out.
            for q in 0.. {
                let Some(st) = cp.stats(q) else { break };
                if st.halted || st.in_flight > 0 || st.stalls > 0 {
                    out.push(format!(
                        "the CP model: queue {q} consumed {} packets, announced up to {:#x}, {} in flight, {} stalls{}{}",
                        st.consumed,
                        st.announced,
                        st.in_flight,
                        st.stalls,
                        if st.halted { ", halted" } else { "" },
                        match (st.scratch_wait, st.scratch_requests) {
                            (Some(id), n) => format!(
                                ", packet {id:#x} waiting for the runtime's scratch (scratch requests: {n})"
                            ),
                            (None, 0) => String::new(),
                            (None, n) => format!(", scratch requests: {n}"),
                        }
                    ));
                }
            }
        }
        for (name, log) in [
            ("MES", self.mes_log()),
            ("MES pipe 1", self.mes_pipe1_log()),
        ] {
            for e in log {
                if let crate::mes::MesEvent::Refused { opcode, why } = e {
                    out.push(format!("the {name} model refused opcode {opcode}: {why:?}"));
                }
            }
        }
        for e in self.kiq_log() {
            if let crate::kiq::KiqEvent::Halted { opcode, why } = e {
                out.push(format!(
                    "the KIQ model halted on opcode {opcode:#x}: {why:?}"
                ));
            }
        }
        for (n, e) in self.soc.sdma_engines().iter().enumerate() {
            for t in e.troubles() {
                out.push(format!("SDMA {n}: {t}"));
            }
        }
        out.extend(self.soc.ih.summary());
        {
            let f = self.firmwares.lock();
            for (name, m) in [("MES", &f.sched), ("MES pipe 1", &f.pipe1)] {
                if let Some(why) = m.as_ref().and_then(MesModel::stalled) {
                    out.push(format!("{name}: {why}"));
                }
            }
            out.extend(
                self.retired
                    .lock()
                    .iter()
                    .filter(|l| !l.contains(" log: "))
                    .cloned(),
            );
        }
        out
    }
    fn firmware_logs(&self) -> String {
        Gfx11::firmware_logs(self)
    }
    fn take_register_stores(&self) -> Vec<(u32, u32)> {
        let mut out = core::mem::take(&mut *self.kiq_registers.lock());
        out.extend(self.mec.cp().take_register_stores());
        for e in self.soc.sdma_engines() {
            out.extend(e.take_register_stores());
        }
        out
    }
    fn register_waits(&self) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .soc
            .sdma_engines()
            .iter()
            .flat_map(|e| e.register_waits())
            .collect();
        let f = self.firmwares.lock();
        for m in [&f.sched, &f.pipe1].into_iter().flatten() {
            out.extend(m.register_waits());
        }
        out
    }
    fn register_values(&self, values: &[(u32, u32)]) {
        for e in self.soc.sdma_engines() {
            e.register_values(values);
        }
        let f = self.firmwares.lock();
        for m in [&f.sched, &f.pipe1].into_iter().flatten() {
            m.register_values(values);
        }
    }
    fn fall_off_bus(&self) {
        self.stop_everything();
    }
    fn hang_queue(&self, index: u32) -> bool {
        self.mec.hang_doorbell(index.saturating_mul(2))
    }
    fn cp(&self) -> spin::MutexGuard<'_, crate::cp::CpModel> {
        self.mec.cp()
    }
    fn service_cp(&self) -> bool {
        self.mec.step().progressed()
    }
    fn doorbell_write(&self, byte_offset: u64, value: u64) -> Result<(), String> {
        Gfx11::doorbell_write(self, byte_offset, value)
    }
    fn doorbells(&self) -> Aperture {
        Aperture {
            host: NonNull::from(&*self.doorbells).cast(),
            len: core::mem::size_of::<DoorbellPage>(),
        }
    }
    fn sdma(&self) -> &[Arc<crate::sdma::SdmaModel>] {
        &self.sdma
    }
    fn as_any(&self) -> &dyn core::any::Any {
        self
    }
}
