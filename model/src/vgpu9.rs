//! [`VirtualGpu9`]: a GC 9.4.3 part (MI300X, MI308X) as one model GPU
//! behind the same [`Platform`] a real one is reached through.
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
//!   run only the firmware the PSP put in place.
//!
//! BAR5 is 1 MiB (a model value: Navi3x's; MI300's BAR5 length is not in
//! the public sources used here). Registers past it are reached only
//! through NBIO 7.9's `BIF_BX0_PCIE_INDEX2`/`DATA2` pair, as
//! `amdgpu_device_rreg()` sends them to `amdgpu_device_indirect_rreg()`
//! (`nbio_v7_9_get_pcie_index_offset()`); every XCC but the first and
//! every AID's MMHUB but AID 0's lie past it with the model's bases.
//!
//! A register no block claims is kept in a plain register file and
//! recorded ([`VirtualGpu9::unclaimed`]): the bring-up's tests require
//! that the record holds only what they expect.
//!
//! Model values (not public facts): the discovery table's bases
//! ([`crate::discovery::MI300_DIES`]), the FB location and offset the
//! "IFWI" leaves ([`crate::Part`]), the bus addresses of the DMA region
//! and of BAR2, BAR5's length, and those listed in the block models.

use crate::SimClock;
use crate::bar::{BarWindow, DoorbellPage};
use crate::discovery::{self, IpDesc, VramWindow};
use crate::error::ModelError;
use crate::hub_v9::{self, HubV9Model};
use crate::mc::{CID_MP0, Mc};
use crate::parts::Part;
use crate::psp::{PspModel, PspPlacement};
use crate::rlc_mec_v9_4_3::RlcMecV943;
use crate::vgpu::{DMA_BUS, DOORBELL_BUS, Files, HOST_READ_NS, HostMemory, REGS_BYTES};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::ip::Generation;
use barebell::platform::{Aperture, DMA_CHUNK, DmaRegion, Platform};
use barebell::regs::IpBases;
use barebell::time::Clock;
use core::ops::RangeInclusive;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Mutex;

/// `regBIF_BX0_PCIE_INDEX2` / `regBIF_BX0_PCIE_DATA2` (BASE_IDX 0) of
/// `nbio_7_9_0_offset.h`: the pair `nbio_v7_9_get_pcie_index_offset()`
/// and `_data_offset()` name.
pub const PCIE_INDEX2: u32 = 0x000e;
pub const PCIE_DATA2: u32 = 0x000f;
/// `regMP0_SMN_C2PMSG_32` and `_103` (BASE_IDX 0) of `mp_13_0_6_offset.h`:
/// the MP0 mailbox registers, all routed to the PSP model.
pub const MP0_C2PMSG_FIRST: u32 = 0x0060;
pub const MP0_C2PMSG_LAST: u32 = 0x00a7;

/// The model's conformance facts for this file.
pub const FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        "nbio_7_9_0_offset.h",
        "regBIF_BX0_PCIE_INDEX2",
        PCIE_INDEX2 as u64,
    ),
    barebell_facts::Fact::constant(
        "nbio_7_9_0_offset.h",
        "regBIF_BX0_PCIE_DATA2",
        PCIE_DATA2 as u64,
    ),
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
/// table's 64-bit bases: `amdgpu_discovery_reg_base_init()`).
fn bases8(ip: &IpDesc) -> [u32; 8] {
    let mut b = [0u32; 8];
    for (o, v) in b.iter_mut().zip(ip.bases) {
        *o = (*v & 0x3FFF_FFFF) as u32;
    }
    b
}

/// Routes each register to the block that owns it; the rest go to a
/// plain register file and are recorded.
struct Router9 {
    ranges: Vec<(RangeInclusive<usize>, Arc<dyn RegisterBus + Send + Sync>)>,
    single: BTreeMap<usize, Arc<dyn RegisterBus + Send + Sync>>,
    rest: Mutex<BTreeMap<usize, u32>>,
    unclaimed: Mutex<Vec<(bool, usize)>>,
}

impl Router9 {
    fn owner(&self, off: usize) -> Option<&Arc<dyn RegisterBus + Send + Sync>> {
        self.single.get(&off).or_else(|| {
            self.ranges
                .iter()
                .find(|(r, _)| r.contains(&off))
                .map(|(_, m)| m)
        })
    }
}

impl RegisterBus for Router9 {
    fn read32(&self, off: usize) -> u32 {
        match self.owner(off) {
            Some(m) => m.read32(off),
            None => {
                self.unclaimed.lock().push((false, off));
                self.rest.lock().get(&off).copied().unwrap_or(0)
            }
        }
    }
    fn write32(&self, off: usize, v: u32) {
        match self.owner(off) {
            Some(m) => m.write32(off, v),
            None => {
                self.unclaimed.lock().push((true, off));
                self.rest.lock().insert(off, v);
            }
        }
    }
}

/// A GC 9.4.3 model GPU that the bring-up drives as it would drive a card.
pub struct VirtualGpu9 {
    name: String,
    part: Part,
    clock: SimClock,
    host_clock: crate::clock::HostClock,
    bar5: BarWindow<Routed>,
    router: Arc<Router9>,
    gfxhubs: Vec<Arc<HubV9Model>>,
    mmhubs: Vec<Arc<HubV9Model>>,
    psp: Arc<PspModel>,
    rlc_mec: Arc<RlcMecV943>,
    doorbells: Box<DoorbellPage>,
    chunk_bus: Vec<u64>,
    claimed: AtomicBool,
    bus_master: AtomicBool,
    /// Last: the models above hold addresses inside it.
    memory: HostMemory,
}

impl core::fmt::Debug for VirtualGpu9 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("VirtualGpu9")
            .field("name", &self.name)
            .field("memory", &self.memory)
            .finish_non_exhaustive()
    }
}

/// The router as BAR5's inner bus (shared with the device for its record).
struct Routed(Arc<Router9>);

impl RegisterBus for Routed {
    fn read32(&self, off: usize) -> u32 {
        self.0.read32(off)
    }
    fn write32(&self, off: usize, v: u32) {
        self.0.write32(off, v)
    }
}

impl VirtualGpu9 {
    /// Builds the GC 9.4.3 `part` over `memory`, with the PSP model
    /// expecting the firmware `files` holds for it.
    pub fn new(part: Part, files: Files<'_>, memory: HostMemory) -> Result<Self, ModelError> {
        if part.generation != Generation::Gfx94 {
            return Err(ModelError::Unsupported {
                what: "VirtualGpu9 (GC 9.4.3 parts only; see VirtualGpu)",
                version: (0, 0, 0),
            });
        }
        let clock = SimClock::new();
        let (table, _) = discovery::build(&part.firmware.desc);
        let window = Arc::new(VramWindow::new(&clock, part.firmware.vram_mib, table));
        let missing = |ip: &'static str| ModelError::MissingIp { ip };
        let xccs = instances(&part, discovery::GC_HWID);
        let aids = instances(&part, discovery::MMHUB_HWID);
        let mp0 = *instances(&part, discovery::MP0_HWID)
            .first()
            .ok_or(missing("MP0"))?;
        if xccs.is_empty() {
            return Err(missing("GC"));
        }
        if aids.is_empty() {
            return Err(missing("MMHUB"));
        }
        let gfxhubs: Vec<Arc<HubV9Model>> = xccs
            .iter()
            .map(|x| Arc::new(HubV9Model::new(hub_v9::GFXHUB_1_2, bases8(x)[0])))
            .collect();
        let mmhubs: Vec<Arc<HubV9Model>> = aids
            .iter()
            .map(|a| Arc::new(HubV9Model::new(hub_v9::MMHUB_1_8, bases8(a)[0])))
            .collect();
        // What the IFWI leaves in every hub's FB location and offset
        // (`mmhub_v1_8_get_fb_location()` reads BASE and TOP in 16 MiB
        // units; `_get_mc_fb_offset()` OFFSET): the part's FB start, its
        // last 16 MiB, and the physical address of VRAM offset 0.
        let vram_bytes = u64::from(part.firmware.vram_mib) << 20;
        let fb_top = (part.fb_start + vram_bytes - 1) >> 24;
        for h in gfxhubs.iter().chain(&mmhubs) {
            let o = h.offsets;
            h.set_device_reg(o.fb_location_base, (part.fb_start >> 24) as u32);
            h.set_device_reg(o.fb_location_top, fb_top as u32);
            h.set_device_reg(o.fb_offset, (part.fb_offset >> 24) as u32);
        }

        // The PSP: an MMHUB client of AID 0 (`mmhub_v1_8`'s client list
        // names MP0 as on the other hubs; the model uses the same id).
        let mut mc = Mc::new(mmhubs[0].clone(), CID_MP0);
        let (vram, vram_len, dma, dma_len) = memory.regions();
        // SAFETY: both ranges belong to `memory`, which the VirtualGpu9
        // owns and drops after every model (field order).
        unsafe {
            mc.back_vram(0, vram.as_ptr(), vram_len as u64);
            mc.map_bus(DMA_BUS, dma.as_ptr(), dma_len as u64);
        }
        let expect = crate::psp::mp13_0_6::expect(&mut |name| files.load(name), false)?;
        let psp = Arc::new(PspModel::new(
            &clock,
            PspPlacement {
                regs: barebell::regs::mp::PspRegs::MP0_13_0_6,
                mp0_bases: IpBases(bases8(mp0)),
                gc: None,
                gc_bases: IpBases(bases8(xccs[0])),
            },
            expect,
            Arc::new(mc),
        ));
        let rlc_mec = Arc::new(RlcMecV943::new(
            &clock,
            xccs.iter().map(|x| bases8(x)).collect(),
            psp.loaded(),
        ));

        let mut ranges: Vec<(RangeInclusive<usize>, Arc<dyn RegisterBus + Send + Sync>)> =
            Vec::new();
        for h in gfxhubs.iter().chain(&mmhubs) {
            ranges.push((h.byte_range(), h.clone()));
        }
        let mut single: BTreeMap<usize, Arc<dyn RegisterBus + Send + Sync>> = BTreeMap::new();
        for off in [
            discovery::MM_INDEX,
            discovery::MM_DATA,
            discovery::MM_INDEX_HI,
            discovery::RCC_CONFIG_MEMSIZE,
            discovery::MP0_SMN_C2PMSG_33,
        ] {
            single.insert(off, window.clone());
        }
        for off in rlc_mec.offsets() {
            single.insert(off, rlc_mec.clone());
        }
        let m0 = bases8(mp0)[0] as usize;
        ranges.push((
            (m0 + MP0_C2PMSG_FIRST as usize) * 4..=(m0 + MP0_C2PMSG_LAST as usize) * 4,
            psp.clone(),
        ));
        let router = Arc::new(Router9 {
            ranges,
            single,
            rest: Mutex::new(BTreeMap::new()),
            unclaimed: Mutex::new(Vec::new()),
        });
        let nbif = *instances(&part, discovery::NBIF_HWID)
            .first()
            .ok_or(missing("NBIO"))?;
        let nb = bases8(nbif)[0] as usize;
        let bar5 = BarWindow::new(
            Routed(router.clone()),
            REGS_BYTES,
            (nb + PCIE_INDEX2 as usize) * 4,
            (nb + PCIE_DATA2 as usize) * 4,
        );
        let chunk_bus = (0..dma_len / DMA_CHUNK)
            .map(|i| DMA_BUS + (i * DMA_CHUNK) as u64)
            .collect();
        Ok(VirtualGpu9 {
            name: format!("model {}", part.name),
            part,
            host_clock: clock.host_view(HOST_READ_NS),
            clock,
            bar5,
            router,
            gfxhubs,
            mmhubs,
            psp,
            rlc_mec,
            doorbells: Box::new(DoorbellPage([const { AtomicU64::new(0) }; 512])),
            chunk_bus,
            claimed: AtomicBool::new(false),
            bus_master: AtomicBool::new(false),
            memory,
        })
    }

    pub fn part(&self) -> &Part {
        &self.part
    }

    pub fn sim_clock(&self) -> &SimClock {
        &self.clock
    }

    pub fn psp(&self) -> &PspModel {
        &self.psp
    }

    pub fn rlc_mec(&self) -> &RlcMecV943 {
        &self.rlc_mec
    }

    /// The GFXHUB v1.2 of each XCC, in instance order.
    pub fn gfxhubs(&self) -> &[Arc<HubV9Model>] {
        &self.gfxhubs
    }

    /// The MMHUB 1.8 of each AID, in instance order.
    pub fn mmhubs(&self) -> &[Arc<HubV9Model>] {
        &self.mmhubs
    }

    /// Accesses BAR5 lost past its end, and those through the index/data
    /// pair.
    pub fn bar5_counts(&self) -> crate::bar::BarCounts {
        self.bar5.counts()
    }

    /// Register accesses no block model claimed, `(write, byte offset)`,
    /// in order (kept in a plain register file).
    pub fn unclaimed(&self) -> Vec<(bool, usize)> {
        self.router.unclaimed.lock().clone()
    }

    /// Whether `PCI_COMMAND` bus master is on as the host last set it.
    pub fn bus_master(&self) -> bool {
        self.bus_master.load(Ordering::Relaxed)
    }

    /// Whether the device is left as `amdgpu_device_fini_hw()` leaves it
    /// (see [`crate::vgpu::VirtualGpu::quiescent`]); `Err` lists what can
    /// still reach memory: a VM context enabled on any hub, the PSP's
    /// GPCOM ring, a MEC not halted, bus mastering.
    pub fn quiescent(&self) -> Result<(), crate::vgpu::NotQuiescent> {
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
        for x in 0..self.gfxhubs.len() {
            if self.rlc_mec.mec_run(x).is_ok() {
                why.push(format!(
                    "XCC {x}: MEC running (CP_MEC_CNTL halt bits clear)"
                ));
            }
        }
        if let Some((addr, bytes)) = self.psp.ring() {
            why.push(format!(
                "PSP GPCOM ring live at {addr:#x} ({bytes:#x} bytes)"
            ));
        }
        if self.bus_master() {
            why.push("PCI bus mastering on".into());
        }
        if why.is_empty() {
            Ok(())
        } else {
            Err(crate::vgpu::NotQuiescent(why))
        }
    }
}

// SAFETY: every promise of the trait is kept by construction:
// - `regs` is the BAR window over the routed block models, one call into
//   a model per access, in program order;
// - `vram` is `memory`'s VRAM backing, owned by this value and used only
//   through it (the MC model reads it as VRAM);
// - `doorbells` is the boxed doorbell page, owned by this value, valid
//   for aligned 64-bit stores;
// - `dma` is `memory`'s DMA region: whole 2 MiB chunks, owned by this
//   value until it drops (after every model that holds its addresses),
//   in the model IOMMU at `chunk_bus`.
unsafe impl Platform for VirtualGpu9 {
    fn regs(&self) -> &dyn RegisterBus {
        &self.bar5
    }
    fn regs_len(&self) -> usize {
        REGS_BYTES
    }
    fn vram(&self) -> Aperture {
        let (vram, vram_len, _, _) = self.memory.regions();
        Aperture {
            host: vram,
            len: vram_len,
        }
    }
    fn doorbells(&self) -> Aperture {
        Aperture {
            host: NonNull::from(&*self.doorbells).cast(),
            len: core::mem::size_of::<DoorbellPage>(),
        }
    }
    fn doorbell_bus(&self) -> u64 {
        DOORBELL_BUS
    }
    fn dma(&self) -> DmaRegion<'_> {
        let (_, _, dma, dma_len) = self.memory.regions();
        DmaRegion {
            host: dma,
            len: dma_len,
            chunk_bus: &self.chunk_bus,
        }
    }
    fn clock(&self) -> &dyn Clock {
        &self.host_clock
    }
    fn pause(&self) {
        // Nothing runs on its own yet besides the PSP, which answers on
        // register access; a pause is the host backing off.
        self.clock.advance(crate::vgpu::PAUSE_IDLE_NS);
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::AcqRel)
    }
    fn set_bus_master(&self, on: bool) -> bool {
        self.bus_master.store(on, Ordering::Release);
        true
    }
}
