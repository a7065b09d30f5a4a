//! [`Gc943`]: the GC 9.4.3 block models (MI300X, MI308X) of a
//! [`super::VirtualGpu`], per XCC, AID and instance.
//!
//! The blocks are the model's own GC 9.4.3 ones, each decoding with its
//! own offsets written from the Linux 6.12 headers:
//! - the discovery window ([`VramWindow`]: the IFWI flag, the VRAM size,
//!   `MM_INDEX`/`MM_DATA` onto the four-die table);
//! - one GFXHUB v1.2 per XCC and one MMHUB 1.8 per AID
//!   ([`HubV9Model`], each owning its segment-0 VM/MC block);
//! - the PSP on MP0 13.0.6 ([`PspModel`] with [`crate::psp::mp13_0_6`]'s
//!   expectations), reaching memory as an MMHUB client of AID 0 through
//!   [`Mc`] (the system aperture, then VMID0's gfx9 walk);
//! - the RLC and MEC start registers of every XCC ([`RlcMecV943`]), which
//!   run only the firmware the PSP put in place;
//! - NBIO 7.9 per AID ([`NbioModel`]: the HDP remap into the register
//!   BAR's hole, the doorbell and self-ring apertures, AID 0's
//!   segment-8 doorbell access enable that every doorbell passes, the
//!   XCC doorbell fence), the IH on OSSSYS 4.4.2 ([`crate::ih::IhModel`], writing its
//!   ring through AID 0's MMHUB) and the SMU on MP1 13.0.6
//!   ([`crate::smu::SmuModel`]: its PMFW runs from power-on, started by
//!   the boot firmware, not the PSP);
//! - the CP of every XCC ([`MecV943`]: HQDs, the KIQ of each XCC, the
//!   HIQ and its HWS, AQL queues spread over the XCCs on one gfx942
//!   [`CpModel`]), reaching memory through each XCC's GFXHUB (VMID
//!   contexts) or a process's tables (HWS queues), then the IOMMU or the
//!   VRAM backing ([`Xlate`]);
//! - every SDMA 4.4.2 instance the discovery table lists
//!   ([`SdmaModel::new_v4_4_2`] on the instance's own bases), each
//!   translating through the MMHUB 1.8 of its AID (`instance / 4`:
//!   `sdma_v4_4_2_sw_init()` sets `ring->vm_hub = AMDGPU_MMHUB0(aid_id)`)
//!   and then the same IOMMU / VRAM backing ([`SdmaPort9`]); the queues
//!   the HWS maps on an SDMA engine are put on the engine
//!   (at every pause, a model convention for the firmware's part).
//!
//! BAR2 is the CP block's page of 64-bit doorbells; a store found there
//! reaches a KIQ or queue only through AID 0's NBIO 7.9 doorbell aperture
//! (stores made while it is closed are dropped and recorded by the NBIO
//! model), when the platform pauses.
//!
//! BAR5 is 1 MiB (a model value: Navi3x's; MI300's BAR5 length is not in
//! the public sources used here). Registers past it are reached only
//! through NBIO 7.9's `BIF_BX0_PCIE_INDEX2`/`DATA2` pair, as
//! `amdgpu_device_rreg()` sends them to `amdgpu_device_indirect_rreg()`
//! (`nbio_v7_9_get_pcie_index_offset()`); every XCC but the first and
//! every AID's MMHUB but AID 0's lie past it with the model's bases.
//!
//! A register no block claims is kept in a plain register file and
//! recorded ([`Gc943::unclaimed`]): the bring-up's tests require
//! that the record holds only what they expect.
//!
//! Model values (not public facts): the discovery table's bases
//! ([`crate::discovery::MI300_DIES`]), the FB location and offset the
//! "IFWI" leaves ([`crate::Part`]), the bus addresses of the DMA region
//! and of BAR2, BAR5's length, and those listed in the block models.

use super::backing::Backing;
use crate::SimClock;
use crate::decode::pte_v9::{self, AccessV9, ContextV9, TranslationV9};
use crate::discovery::{self, IpDesc, VramWindow};
use crate::error::ModelError;
use crate::gmc::VmRefusal;
use crate::hub_v9::{self, HubV9Model};
use crate::log::Keep;
use crate::mec_v9_4_3::{MecV943, Space, XccTranslate};
use crate::nbio::{NbioIp, NbioModel};
use crate::parts::Part;
use crate::psp::PspModel;
use crate::rlc_mec_v9_4_3::RlcMecV943;
use crate::sdma::{SdmaModel, SdmaVmError};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::platform::Aperture;
use barebell::regs::IpBases;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;

mod am;
mod build;
mod shader_arrays;
mod stored;

pub use am::RefusalMark943;

/// The PMFW version the model's SMU reports by default (a model value:
/// at least 85.115.0, so Linux would pick the primary sOS set,
/// `psp_v13_0_is_aux_sos_load_required()`); a part description may give
/// another ([`crate::psp::firmware::PartFirmware::pmfw`]).
pub const PMFW_VERSION: u32 = crate::psp::mp13_0_6::PRIMARY_SOS_MIN_PMFW;

/// `regMP1_PUB_SCRATCH0` (`psp_v13_0.c`, `0x3b10090`, read with
/// `RREG32(regMP1_PUB_SCRATCH0 / 4)`): the byte offset of the word the
/// PMFW keeps its version in, past BAR5 (reached through the index pair).
pub const MP1_PUB_SCRATCH0: usize = 0x03B1_0090;

/// `MP1_PUB_SCRATCH0` as the PMFW leaves it: its version, read-only to the
/// driver (a write is dropped: the model's choice, the PMFW owns it).
pub(super) struct PubScratch(pub u32);

impl RegisterBus for PubScratch {
    fn read32(&self, _: usize) -> u32 {
        self.0
    }
    fn write32(&self, _: usize, _: u32) {}
}
/// `regMP0_SMN_C2PMSG_32` and `_103` (BASE_IDX 0) of `mp_13_0_6_offset.h`:
/// the MP0 mailbox registers, all routed to the PSP model.
pub const MP0_C2PMSG_FIRST: u32 = 0x0060;
pub const MP0_C2PMSG_LAST: u32 = 0x00a7;

/// SDMA instances per AID (`adev->sdma.num_inst_per_aid = 4`,
/// `aqua_vanjaram.c`): instance `i` is on AID `i / 4` and translates
/// through that AID's MMHUB (`sdma_v4_4_2_sw_init()`).
pub const SDMA_PER_AID: usize = 4;
/// The PSP firmware type each SDMA of an AID runs (`psp_get_fw_type()`:
/// `AMDGPU_UCODE_ID_SDMA0..3` → `GFX_FW_TYPE_SDMA0..3`).
const SDMA_FW: [u32; 4] = [
    crate::psp::iface::fw::SDMA0,
    crate::psp::iface::fw::SDMA1,
    crate::psp::iface::fw::SDMA2,
    crate::psp::iface::fw::SDMA3,
];

/// The model's conformance facts for this file.
pub const FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        "mp_13_0_6_offset.h",
        "regMP0_SMN_C2PMSG_32",
        MP0_C2PMSG_FIRST as u64,
    ),
    barebell_facts::Fact::constant(
        "mp_13_0_6_offset.h",
        "regMP0_SMN_C2PMSG_103",
        MP0_C2PMSG_LAST as u64,
    ),
];

/// The IPs of `hw_id` the part lists (all dies), not harvested, in
/// instance order.
fn instances(part: &Part, hw_id: u16) -> Vec<&'static IpDesc> {
    let desc = &part.firmware.desc;
    let mut v: Vec<&'static IpDesc> = desc
        .dies
        .iter()
        .flat_map(|d| d.iter())
        .filter(|ip| ip.hw_id == hw_id)
        .filter(|ip| !desc.harvested.contains(&(hw_id, ip.instance)))
        .collect();
    v.sort_by_key(|ip| ip.instance);
    v
}

/// An IP's segment bases in dwords as Linux keeps them (bits 29:0 of the
/// table's 64-bit bases: `amdgpu_discovery_reg_base_init()`), every
/// segment the table lists.
fn bases(ip: &IpDesc) -> IpBases {
    let mut b = IpBases::default();
    for (o, v) in b.0.iter_mut().zip(ip.bases) {
        *o = (*v & 0x3FFF_FFFF) as u32;
    }
    b
}

/// The first eight of [`bases`]: what the GC blocks (four segments on GC
/// 9.4.3) and the hubs take.
fn bases8(ip: &IpDesc) -> [u32; 8] {
    let mut b = [0u32; 8];
    for (o, v) in b.iter_mut().zip(bases(ip).0) {
        *o = v;
    }
    b
}

/// What no block claims: kept in a plain register file and recorded.
pub(super) struct Unclaimed {
    regs: Mutex<BTreeMap<usize, u32>>,
    seen: Mutex<Vec<(bool, usize)>>,
}

impl RegisterBus for Unclaimed {
    fn read32(&self, off: usize) -> u32 {
        self.seen.lock().keep((false, off));
        self.regs.lock().get(&off).copied().unwrap_or(0)
    }
    fn write32(&self, off: usize, v: u32) {
        self.seen.lock().keep((true, off));
        // Capped as the gfx11/gfx12 register file is
        // (`crate::regfile::MAX_REGISTERS`, model convention).
        let mut regs = self.regs.lock();
        if regs.len() < crate::regfile::MAX_REGISTERS || regs.contains_key(&off) {
            regs.insert(off, v);
        }
    }
}

/// The GC 9.4.3 block models of a [`super::VirtualGpu`].
pub struct Gc943 {
    gfxhubs: Vec<Arc<HubV9Model>>,
    mmhubs: Vec<Arc<HubV9Model>>,
    psp: Arc<PspModel>,
    rlc_mec: Arc<RlcMecV943>,
    nbios: Vec<Arc<NbioModel>>,
    mec: Arc<MecV943>,
    ih: Arc<crate::ih::IhModel>,
    smu: Arc<crate::smu::SmuModel>,
    /// The SDMA 4.4.2 (4.4.0 on Aldebaran) instances, in instance order
    /// (engine `n` = instance `n` on a one-partition part).
    sdma: Vec<Arc<SdmaModel>>,
    /// The engines and doorbell plan the HWS maps SDMA queues by.
    sdma_engines: crate::hws::SdmaEngines,
    /// Per engine: the index into `mmhubs` it translates through.
    sdma_hubs: Vec<usize>,
    /// Per engine: the HWS-mapped SDMA queue it runs, `(doorbell offset,
    /// MQD address)`, as last put on it at a pause.
    sdma_hws: Mutex<Vec<Option<(u32, u64)>>>,
    /// What the model's HWS-to-engine step refused, in order.
    sdma_refusals: Mutex<Vec<String>>,
    unclaimed: Arc<Unclaimed>,
    /// The refusal log the IH, SDMA and SMU models share: what the SOC
    /// blocks refused, in order.
    log: Arc<crate::soc::RefusalLog>,
    /// Whether a second driver wants registers no block claims refused
    /// (`am::set_strict`).
    strict: AtomicBool,
    /// The device fell off the bus (the router's fault switch).
    gone: Arc<AtomicBool>,
    /// What the XCCs' CPs reach memory through.
    xlate: Arc<Xlate>,
}

impl core::fmt::Debug for Gc943 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Gc943").finish_non_exhaustive()
    }
}

/// Builds the GC 9.4.3 block models of `x.part`: the block models of
/// each kind, per XCC, AID or instance ([`build`]), in this order.
pub(super) fn build(x: &super::Inputs<'_>) -> Result<super::Built, ModelError> {
    let (part, clock, memory) = (x.part, x.clock, x.memory);
    let (table, _) = discovery::build(&part.firmware.desc);
    am::place_discovery(part.firmware.vram_mib, memory, &table);
    let window = Arc::new(VramWindow::new(clock, part.firmware.vram_mib, table));
    let i = build::instances_of(part)?;
    let f = build::Flavour::of(&i)?;
    let (gfxhubs, mmhubs) = build::hubs(part, &i, &f);
    let pmfw = part.firmware.pmfw.unwrap_or(PMFW_VERSION);
    let psp = build::psp(clock, x.files, (&i, &f), &mmhubs[0], memory, pmfw)?;
    let rlc_mec = Arc::new(RlcMecV943::new(
        clock,
        i.xccs.iter().map(|x| bases8(x)).collect(),
        psp.loaded(),
    ));
    let nbios = build::nbios(clock, &i, f.nbio);
    let log = Arc::new(crate::soc::RefusalLog::new());
    let ih = build::ih(clock, &i, &log, &mmhubs[0], memory)?;
    let sdma = build::sdma(clock, (&i, &f), &psp, &log)?;
    let bus_master = Arc::new(AtomicBool::new(false));
    let pci = Arc::new(crate::pci_config::PciConfig::new(bus_master.clone(), clock));
    let (mec, xlate) = build::mec(clock, x.seed, &i, &rlc_mec, &gfxhubs, memory, x.chunk_bus);
    if !f.is_9_4_3() {
        mec.gc_9_4_2();
        // GC 9.4.2's shaders run gfx90a code (`gfx_target_version`
        // 90010, `kgd2kfd_probe()`).
        mec.cp().shader.target = barebell_isa::Target::Gfx90a;
    }
    {
        // The CP's end-of-pipe interrupts reach the IH (AID 0's OSSSYS).
        let ih = ih.clone();
        let narrow = |v: u32| u8::try_from(v).unwrap_or(u8::MAX);
        mec.set_eop_line(Box::new(move |xcc, (me, pipe, queue), context| {
            let slot = (narrow(me), narrow(pipe), narrow(queue));
            ih.raise(crate::ih::IvEntry::cp_eop_v9(xcc, slot, context));
        }));
    }
    let scope = build::ResetScope {
        nbios: nbios.clone(),
        ih: ih.clone(),
        sdma: sdma.clone(),
        bus_master: bus_master.clone(),
        pci: pci.clone(),
        psp: psp.clone(),
        rlc_mec: rlc_mec.clone(),
        mec: mec.clone(),
        hive: part.xgmi,
    };
    let smu = build::smu(clock, (&i, &f), scope, log.clone(), pmfw)?;
    build::connect_sdma(clock, (&sdma, &f), &mmhubs, &xlate, &mec, (&nbios[0], &ih))?;
    // Doorbells reach the CP block through AID 0's NBIO aperture.
    let nb0 = nbios[0].clone();
    mec.set_doorbell_gate(Box::new(move |dword, value| {
        nb0.doorbell_write(dword / 2, value) == crate::nbio::DoorbellOutcome::Rang
    }));
    let unclaimed = Arc::new(Unclaimed {
        regs: Mutex::new(BTreeMap::new()),
        seen: Mutex::new(Vec::new()),
    });
    let router = build::router(
        &build::Routed {
            i: &i,
            gfxhubs: &gfxhubs,
            mmhubs: &mmhubs,
            rlc_mec: &rlc_mec,
            mec: &mec,
            psp: &psp,
            nbios: &nbios,
            ih: &ih,
            smu: &smu,
            sdma: &sdma,
            window: &window,
            pmfw,
            flavour: &f,
            xcc: part.xcc,
        },
        &unclaimed,
    );
    let index_data = nbios[0].index_pair().ok_or(ModelError::Register {
        name: "BIF_BX0_PCIE_INDEX2/DATA2",
    })?;
    // The RSMU pair too: `nbio_7_9_0_offset.h` defines it where NBIO
    // 4.3 has it, and tinygrad's AM sends every register past BAR5
    // through it on every part (`AMDev.rreg`/`indirect_rreg`).
    let index_data2 = {
        use crate::socregs::nbio_7_9_0::{BIF_BX_PF0_RSMU_DATA, BIF_BX_PF0_RSMU_INDEX};
        i.nbifs
            .first()
            .filter(|_| f.nbio == NbioIp::Nbio7_9_0)
            .and_then(|n| {
                let b = bases(n);
                BIF_BX_PF0_RSMU_INDEX
                    .byte_offset(&b)
                    .zip(BIF_BX_PF0_RSMU_DATA.byte_offset(&b))
            })
    };
    let gc = Gc943 {
        gfxhubs,
        mmhubs,
        psp: psp.clone(),
        rlc_mec,
        nbios,
        mec,
        ih: ih.clone(),
        smu,
        sdma_hws: Mutex::new(alloc::vec![None; sdma.len()]),
        sdma_engines: f.sdma_engines(sdma.len()),
        sdma_hubs: (0..sdma.len()).map(|n| f.sdma_hub(n)).collect(),
        sdma,
        sdma_refusals: Mutex::new(Vec::new()),
        unclaimed,
        log,
        strict: AtomicBool::new(false),
        gone: router.gone_flag(),
        xlate,
    };
    Ok(super::Built {
        gc: Box::new(gc),
        router,
        index_data,
        index_data2,
        psp,
        ih,
        pci,
        bus_master,
    })
}

impl Gc943 {
    pub fn rlc_mec(&self) -> &RlcMecV943 {
        &self.rlc_mec
    }

    /// The CP of every XCC (HQDs, KIQs, the HWS, the CP model).
    pub fn mec(&self) -> &MecV943 {
        &self.mec
    }

    /// The GFXHUB v1.2 of each XCC, in instance order.
    pub fn gfxhubs(&self) -> &[Arc<HubV9Model>] {
        &self.gfxhubs
    }

    /// The MMHUB 1.8 of each AID, in instance order.
    pub fn mmhubs(&self) -> &[Arc<HubV9Model>] {
        &self.mmhubs
    }

    /// The NBIO 7.9 of each AID, in instance order.
    pub fn nbios(&self) -> &[Arc<NbioModel>] {
        &self.nbios
    }

    pub fn ih(&self) -> &crate::ih::IhModel {
        &self.ih
    }

    pub fn smu(&self) -> &crate::smu::SmuModel {
        &self.smu
    }

    /// The SDMA 4.4.2 instances, in instance order.
    pub fn sdma(&self) -> &[Arc<SdmaModel>] {
        &self.sdma
    }

    /// The host address XCC `xcc`'s CP reaches at `va` through the
    /// process tables rooted at `root` (a VRAM physical address, as
    /// MAP_PROCESS's `page_table_base` names it): the walk its GFXHUB
    /// makes, then the IOMMU (SYSTEM pages) or the VRAM backing.
    pub fn translate(
        &self,
        xcc: usize,
        root: u64,
        va: u64,
        access: crate::gmc::Access,
    ) -> Result<u64, VmRefusal> {
        let space = Space::Process {
            page_table_base: root,
        };
        self.xlate.translate(xcc, space, va, access)
    }

    /// What the SOC blocks (SMU, IH, SDMA engines) refused, in order.
    pub fn soc_refusals(&self) -> Vec<crate::soc::Refusal> {
        self.log.all()
    }

    /// What the model refused when putting an HWS-mapped SDMA queue on
    /// its engine, in order.
    pub fn sdma_refusals(&self) -> Vec<String> {
        self.sdma_refusals.lock().clone()
    }

    /// The HWS's SDMA queues onto the engines, and those it unmapped off
    /// them (*model convention*: what the HWS firmware does with an SDMA
    /// queue is not public; the model does what the rig in
    /// tests/harness/tests/sdma_v4_4_2.rs does): for a queue whose
    /// process has a VMID, the process's page-table base (MAP_PROCESS)
    /// goes into that VMID's context of the engine's AID's MMHUB (what
    /// KFD's `set_vm_context_page_table_base` does for the driver's own
    /// VMIDs, `mmhub_v1_8_setup_vm_pt_regs()`), then the MQD's queue onto
    /// the engine ([`SdmaModel::map_scheduled`]). Returns the engines
    /// changed.
    fn sync_hws_sdma(&self) -> usize {
        let hws = self.mec.hws();
        let want = match &hws {
            Some(h) => {
                h.set_sdma(self.sdma_engines);
                h.sdma_queues()
            }
            None => Vec::new(),
        };
        let mut on = self.sdma_hws.lock();
        let mut changed = 0;
        for (e, engine) in self.sdma.iter().enumerate() {
            let mut mine = want
                .iter()
                .filter(|q| usize::from(q.engine) == e && q.vmid.is_some());
            let q = mine.next();
            let key = q.map(|q| (q.doorbell_offset, q.mqd_address));
            let Some(slot) = on.get_mut(e) else { continue };
            if *slot == key {
                continue;
            }
            // *Model convention*: one queue per engine (the engine's RLC
            // queues beyond the first are not modelled); the others are
            // named, never dropped silently.
            for other in mine {
                self.sdma_refusals.lock().keep(format!(
                    "SDMA engine {e}: the HWS's queue on doorbell dword {:#x} not started: the model runs one queue per engine (the one on dword {:#x})",
                    other.doorbell_offset,
                    q.map_or(0, |q| q.doorbell_offset)
                ));
            }
            changed += 1;
            if slot.is_some() {
                engine.unmap_scheduled();
            }
            *slot = key;
            let (Some(q), Some(h)) = (q, &hws) else {
                continue;
            };
            let Some(ptb) = h
                .processes()
                .iter()
                .find(|p| p.pasid == q.pasid)
                .map(|p| p.page_table_base)
            else {
                continue;
            };
            let hub = self.sdma_hubs.get(e).and_then(|&h| self.mmhubs.get(h));
            let (Some(hub), Some(vmid), Some(eq)) = (hub, q.vmid, q.engine_queue()) else {
                continue;
            };
            let at = hub.offsets.ctx0_base_lo + u32::from(vmid) * hub_v9::CTX_ADDR_DISTANCE;
            hub.set_device_reg(at, ptb as u32);
            hub.set_device_reg(at + 1, (ptb >> 32) as u32);
            if let Err(why) = engine.map_scheduled(eq) {
                self.sdma_refusals.lock().keep(format!(
                    "SDMA engine {e}: the HWS's queue on doorbell dword {:#x} not started: {why}",
                    q.doorbell_offset
                ));
            }
        }
        changed
    }

    /// Register accesses no block model claimed, `(write, byte offset)`,
    /// in order (kept in a plain register file).
    pub fn unclaimed(&self) -> Vec<(bool, usize)> {
        self.unclaimed.seen.lock().clone()
    }

    /// What can still reach memory where `amdgpu_device_fini_hw()` leaves
    /// nothing that can (see [`crate::vgpu::VirtualGpu::quiescent`]): a
    /// VM context enabled on any hub, the PSP's GPCOM ring, a MEC not
    /// halted, an SDMA engine with an active queue
    /// (`sdma_v4_4_2_hw_fini()` stops every instance's queue).
    fn still_running(&self) -> Vec<String> {
        let mut why = Vec::new();
        for (kind, hubs) in [
            ("GFXHUB of XCC", &self.gfxhubs),
            ("MMHUB of AID", &self.mmhubs),
        ] {
            for (i, h) in hubs.iter().enumerate() {
                let on = h.enabled_contexts();
                if !on.is_empty() {
                    why.push(format!("{kind} {i}: VM contexts {on:?} enabled"));
                }
            }
        }
        for q in self.mec.queues().iter().filter(|q| !q.retired) {
            why.push(format!(
                "queue on doorbell dword {:#x} still mapped ({:?})",
                q.doorbell_dword, q.source
            ));
        }
        for x in 0..self.gfxhubs.len() {
            if self.mec.kiq_running(x) {
                why.push(format!("XCC {x}: KIQ active"));
            }
            if self.rlc_mec.mec_run(x).is_ok() {
                why.push(format!(
                    "XCC {x}: MEC running (CP_MEC_CNTL halt bits clear)"
                ));
            }
        }
        // `sdma_v4_4_2_hw_fini()`: `sdma_v4_4_2_inst_enable(adev, false,
        // inst_mask)` stops every instance's queues; with the PSP having
        // loaded the firmware it returns before `SDMA_F32_CNTL.HALT`, so
        // a running engine with no queue is what Linux leaves.
        for (i, e) in self.sdma.iter().enumerate() {
            if let Some(q) = e.queue() {
                why.push(format!(
                    "SDMA {i}: queue active (ring {:#x}, VMID {}, doorbell dword {:?})",
                    q.ring, q.vmid, q.doorbell
                ));
            }
        }
        if let Some((addr, bytes)) = self.psp.ring() {
            why.push(format!(
                "PSP GPCOM ring live at {addr:#x} ({bytes:#x} bytes)"
            ));
        }
        for (i, n) in self.nbios.iter().enumerate() {
            if n.doorbell_aperture_open() {
                why.push(format!("AID {i}: doorbell aperture open"));
            }
            if let Some(b) = n.selfring_base() {
                why.push(format!(
                    "AID {i}: doorbell self-ring aperture open at {b:#x}"
                ));
            }
        }
        for r in self.ih.rings() {
            why.push(format!(
                "IH ring {} enabled at {:#x} ({:#x} bytes)",
                r.ring, r.base, r.bytes
            ));
        }
        why
    }
}

impl super::GcModel for Gc943 {
    fn pause(&self) -> bool {
        // The CP block scans BAR2 (through the NBIO's aperture), services
        // the KIQs and the HWS, and steps the CP; then the HWS's SDMA
        // queues reach their engines and every engine looks at its
        // doorbell.
        let mut work = 0;
        if !self.gone.load(Ordering::Relaxed) {
            work += self.mec.service();
            // A KIQ waiting on a register is not idle: the device reads
            // the register after this look (`VirtualGpu::step`).
            work += self.mec.register_waits().len();
            work += self.sync_hws_sdma();
            for e in &self.sdma {
                work += e.service() + e.register_waits().len();
            }
        }
        work == 0
    }
    fn still_running(&self) -> Vec<String> {
        Gc943::still_running(self)
    }
    fn diagnostics(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in self.mec.refusals() {
            out.push(format!("the GC 9.4.3 CP model refused: {r}"));
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
        out.extend(self.mec.hiq_status());
        if let Some(h) = self.mec.hws() {
            let mut done = 0usize;
            for e in h.log() {
                match e {
                    crate::hws::HwsEvent::Refused { opcode, why } => {
                        out.push(format!("the HWS model refused opcode {opcode:#x}: {why}"));
                    }
                    crate::hws::HwsEvent::Done { .. } => done += 1,
                }
            }
            let (p, q) = (h.processes().len(), h.queues().len());
            out.push(format!(
                "the HWS model ran {done} HIQ packets; now {p} processes, {q} queues mapped"
            ));
        }
        for r in self.sdma_refusals() {
            out.push(format!("the SDMA model refused: {r}"));
        }
        out.extend(self.ih.summary());
        for (n, e) in self.sdma.iter().enumerate() {
            for t in e.troubles() {
                out.push(format!("SDMA {n}: {t}"));
            }
            let st = e.stats();
            if st.packets > 0 {
                out.push(format!(
                    "SDMA {n}: {} packets ({} doorbells), {} bytes copied, {} filled, {} fences",
                    st.packets, st.doorbells, st.copied_bytes, st.filled_bytes, st.fences
                ));
            }
        }
        for r in self.soc_refusals() {
            out.push(format!("the model refused: {r}"));
        }
        if let Some(n) = self.nbios.first() {
            for (i, v) in n.dropped() {
                out.push(format!(
                    "the NBIO dropped doorbell {i:#x} = {v:#x} (aperture closed)"
                ));
            }
        }
        let stray = self.unclaimed();
        if let Some((w, at)) = stray.first() {
            out.push(format!(
                "{} register accesses reached no block model (first: {} at byte {at:#x})",
                stray.len(),
                if *w { "a write" } else { "a read" }
            ));
        }
        out
    }
    fn firmware_logs(&self) -> String {
        self.diagnostics().join("\n")
    }
    fn take_register_stores(&self) -> Vec<(u32, u32)> {
        let mut out = self.mec.take_register_stores();
        for e in &self.sdma {
            out.extend(e.take_register_stores());
        }
        out
    }
    fn register_waits(&self) -> Vec<u32> {
        let mut out = self.mec.register_waits();
        for e in &self.sdma {
            out.extend(e.register_waits());
        }
        out
    }
    fn register_values(&self, values: &[(u32, u32)]) {
        self.mec.register_values(values);
        for e in &self.sdma {
            e.register_values(values);
        }
    }
    fn fall_off_bus(&self) {
        // Every XCC's CP, KIQ and HWS, and the SDMA engines stop.
        self.mec.halt_all();
    }
    fn hang_queue(&self, index: u32) -> bool {
        self.mec.hang_doorbell(index.saturating_mul(2))
    }
    fn cp(&self) -> spin::MutexGuard<'_, crate::cp::CpModel> {
        self.mec.cp()
    }
    fn service_cp(&self) -> bool {
        self.mec.service() > 0
    }
    fn doorbell_write(&self, byte_offset: u64, value: u64) -> Result<(), String> {
        Gc943::doorbell_write(self, byte_offset, value)
    }
    fn doorbells(&self) -> Aperture {
        let (host, len) = self.mec.doorbell_page();
        Aperture {
            // The page is boxed inside the CP block, never null.
            host: NonNull::new(host as *mut u8).unwrap_or(NonNull::dangling()),
            len,
        }
    }
    fn sdma(&self) -> &[Arc<SdmaModel>] {
        &self.sdma
    }
    fn as_any(&self) -> &dyn core::any::Any {
        self
    }
}

/// How the CP reaches memory on a GC 9.4.3 device: XCC `n`'s GFXHUB for a
/// VMID context, or a process's own tables (an HWS queue: the scheduler
/// programs the VMID it picked with the MAP_PROCESS page-table base;
/// the model walks that base directly, with the user contexts' shape
/// `gfxhub_v1_2_xcc_setup_vmid_config()` gives every VMID: depth 2,
/// block size 9, model convention for the VMID the HWS picks); then the
/// IOMMU (a SYSTEM page) or the VRAM backing.
struct Xlate {
    gfxhubs: Vec<Arc<HubV9Model>>,
    backing: Backing,
}

impl Xlate {
    fn host(&self, t: &TranslationV9, fb_offset: u64) -> Result<u64, VmRefusal> {
        self.backing
            .host(t.pa, t.system, fb_offset)
            .ok_or(VmRefusal::Unbacked { pa: t.pa })
    }
}

fn walk_refusal(r: crate::hub_v9::HubV9Refusal) -> VmRefusal {
    use crate::decode::pte_v9::WalkFaultV9;
    use crate::gmc::FaultReason;
    use crate::hub_v9::HubV9Refusal as R;
    match r {
        R::InvalidBase { raw } => VmRefusal::InvalidBase { raw },
        // A root table in another hive node's memory: nothing here backs it.
        R::PeerMemory { pa, .. } => VmRefusal::Unbacked { pa },
        R::Fault(WalkFaultV9::OutOfRange) => VmRefusal::OutOfRange { start: 0, end: 0 },
        R::Fault(WalkFaultV9::Invalid { level }) => VmRefusal::Walk(FaultReason::Invalid { level }),
        R::Fault(WalkFaultV9::BadTable { level }) => {
            VmRefusal::Walk(FaultReason::BadTable { level })
        }
        R::Fault(WalkFaultV9::Permission) => VmRefusal::Walk(FaultReason::Permission),
        _ => VmRefusal::ContextDisabled,
    }
}

impl XccTranslate for Xlate {
    fn translate(
        &self,
        xcc: usize,
        space: Space,
        va: u64,
        access: crate::gmc::Access,
    ) -> Result<u64, VmRefusal> {
        let a = match access {
            crate::gmc::Access::Read => AccessV9::Read,
            crate::gmc::Access::Write => AccessV9::Write,
            crate::gmc::Access::Execute => AccessV9::Execute,
        };
        let hub = self.gfxhubs.get(xcc).ok_or(VmRefusal::ContextDisabled)?;
        // Physical address of this GPU's VRAM offset 0: MC_VM_FB_OFFSET,
        // plus its node's segment on an XGMI hive member
        // (`gmc_v9_0_vram_gtt_location()`).
        let fb_offset = crate::mc::McHub::vram_pa_base(&**hub);
        let vram = self.backing.vram_window();
        let t = match space {
            Space::Vmid(0) => {
                // VMID 0: the system aperture first (what the KIQ's and
                // HIQ's rings in VRAM would use), then the GART walk.
                match crate::mc::McHub::system_aperture(&**hub) {
                    Some((low, high)) if (low..=high).contains(&va) => {
                        let pa = (va - low).saturating_add(crate::mc::McHub::fb_offset(&**hub));
                        let off = crate::mc::local_vram(&**hub, pa)
                            .map_err(|_| VmRefusal::Unbacked { pa })?;
                        return if off < self.backing.vram.1 {
                            Ok(self.backing.vram.0 + off)
                        } else {
                            Err(VmRefusal::Unbacked { pa: va })
                        };
                    }
                    _ => hub
                        .translate(&vram, fb_offset, 0, va, a)
                        .map_err(walk_refusal)?,
                }
            }
            Space::Vmid(v) => hub
                .translate(&vram, fb_offset, v, va, a)
                .map_err(walk_refusal)?,
            Space::Process { page_table_base } => {
                let ctx = ContextV9 {
                    root: page_table_base & pte_v9::bits::ADDRESS,
                    start: 0,
                    end: (1u64 << 48) - 1,
                    depth: 2,
                    block_size: 9,
                };
                pte_v9::walk(&vram, fb_offset, &ctx, va, a)
                    .map_err(|f| walk_refusal(crate::hub_v9::HubV9Refusal::Fault(f)))?
            }
        };
        // SNOOPED on a system page, as on gfx11/12
        // (`crate::gmc::Translation::coherent`; Linux sets it on every
        // GC 9.4.3 PTE, `gmc_v9_0_get_coherence_flags()`).
        crate::gmc::coherent(t.system, t.snooped, self.backing.cpu).map_err(VmRefusal::Walk)?;
        self.host(&t, fb_offset)
    }

    fn generation(&self) -> u64 {
        self.gfxhubs.iter().map(|h| u64::from(h.requests())).sum()
    }

    fn bind_process(&self, vmid: u8, page_table_base: u64) {
        if !(1..=15).contains(&vmid) {
            return;
        }
        for h in &self.gfxhubs {
            let lo = h.offsets.ctx0_base_lo + u32::from(vmid) * crate::hub_v9::CTX_ADDR_DISTANCE;
            h.set_device_reg(lo, page_table_base as u32);
            h.set_device_reg(lo + 1, (page_table_base >> 32) as u32);
        }
    }
}

/// What SDMA 4.4.2 instance `instance` reaches the device through: the
/// MMHUB 1.8 of its AID for the VMID's walk, then the IOMMU (a SYSTEM
/// page) or the VRAM backing as the CP's [`Xlate`] does; doorbells from
/// BAR2's page, reaching the engine while AID 0's NBIO doorbell aperture
/// is open (as the CP's are) when the slot is one of the instance's
/// (*model convention* for the routing: an even dword whose 64-bit index,
/// within its 1024-doorbell process slice and less the 512 mirror, is in
/// the instance's `aqua_vanjaram_doorbell_index_init()` range, the check
/// the HWS model applies to MAP_QUEUES; the NBIO 7.9 S2A entries
/// `nbio_v7_9_sdma_doorbell_range()` writes are not modelled).
struct SdmaPort9 {
    instance: u8,
    engines: crate::hws::SdmaEngines,
    hub: Arc<HubV9Model>,
    xlate: Arc<Xlate>,
    /// Host address of the CP block's boxed doorbell page, and its slots.
    doorbells: u64,
    slots: usize,
    nbio: Arc<NbioModel>,
    clock: SimClock,
    /// AID 0's HDP flush request and done registers (dwords).
    hdp_flush: Option<(u32, u32)>,
    /// The bits above the 18-bit register field of the engine's AID
    /// (its MMHUB's base): Linux writes AID `n`'s absolute offsets
    /// (`0x401abd4` for AID 1's MMHUB) into SRBM_WRITE's 18-bit `addr`,
    /// so the field names a register of the engine's own AID (*model
    /// reading*).
    aid_prefix: u32,
    /// AID 0's IH, where the engine's traps go.
    ih: Arc<crate::ih::IhModel>,
    /// The IV entry a TRAP raises (instance, context): 4.4.2's or 4.4.0's
    /// client ids.
    trap: fn(usize, u32) -> crate::ih::IvEntry,
}

impl crate::sdma::SdmaPort for SdmaPort9 {
    fn translate(
        &self,
        vmid: u8,
        va: u64,
        access: crate::gmc::Access,
    ) -> Result<(u64, u64), SdmaVmError> {
        let a = match access {
            crate::gmc::Access::Read => AccessV9::Read,
            crate::gmc::Access::Write => AccessV9::Write,
            crate::gmc::Access::Execute => AccessV9::Execute,
        };
        let fb_offset = crate::mc::McHub::vram_pa_base(&*self.hub);
        // VMID 0: the system aperture first, as the CP's translator does
        // (`Xlate`): Linux's kernel SDMA work names VRAM by MC address
        // (`amdgpu_vm_sdma_update()`'s page-table entries).
        if vmid == 0
            && let Some((low, high)) = crate::mc::McHub::system_aperture(&*self.hub)
            && (low..=high).contains(&va)
        {
            let pa = (va - low).saturating_add(crate::mc::McHub::fb_offset(&*self.hub));
            let off =
                crate::mc::local_vram(&*self.hub, pa).map_err(|_| SdmaVmError::Unbacked { pa })?;
            let (vram, len) = self.xlate.backing.vram;
            if off >= len {
                return Err(SdmaVmError::Unbacked { pa });
            }
            return Ok((vram + off, (len - off).min(high - va + 1)));
        }
        let t = self
            .hub
            .translate(&self.xlate.backing.vram_window(), fb_offset, vmid, va, a)
            .map_err(|refusal| SdmaVmError::RefusedV9 { refusal })?;
        // SNOOPED on a system page (`crate::gmc::Translation::coherent`).
        // Not modelled: the DAGB write-snoop override MMHUB 1.8 sets for
        // SDMA (`mmhub_v1_8_init_snoop_override_regs()`), which makes SDMA
        // writes probe the CPU's caches whatever the PTE says; the model
        // asks the PTE for writes too.
        crate::gmc::coherent(t.system, t.snooped, self.xlate.backing.cpu)
            .map_err(|_| SdmaVmError::NotSnooped { pa: t.pa })?;
        let host = self
            .xlate
            .host(&t, fb_offset)
            .map_err(|_| SdmaVmError::Unbacked { pa: t.pa })?;
        // The rest of the leaf that maps `va`, as far as the backing the
        // host address lies in reaches (the DMA region and VRAM are each
        // one host range).
        let page = t.page_bytes.max(4096);
        let leaf = page - va % page;
        let end = self.xlate.backing.to_end(host);
        Ok((host, leaf.min(end).max(1)))
    }

    fn doorbell(&self, dword: u32) -> u64 {
        let slot = (dword / 2) as usize;
        if slot >= self.slots {
            return 0;
        }
        let at = self.doorbells + slot as u64 * 8;
        // SAFETY: the page is boxed inside the CP block (it never moves);
        // the engines read it only while the device that owns both
        // services them, so it is alive; the slot is in range and
        // 8-aligned, and the page is only ever accessed atomically.
        unsafe { &*(at as *const core::sync::atomic::AtomicU64) }.load(Ordering::Acquire)
    }

    fn routed(&self, dword: u32) -> bool {
        self.nbio.doorbell_aperture_open() && self.engines.contains(self.instance, dword)
    }

    fn now_ns(&self) -> u64 {
        barebell::time::Clock::now_ns(&self.clock)
    }

    fn hdp_flush(&self) -> Option<(u32, u32)> {
        self.hdp_flush
    }

    fn register(&self, reg: u32) -> u32 {
        self.aid_prefix | reg & crate::decode::sdma::SRBM_ADDR.mask()
    }

    fn trap(&self, context: u32) {
        self.ih
            .raise((self.trap)(usize::from(self.instance), context));
    }
}
