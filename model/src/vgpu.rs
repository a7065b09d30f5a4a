//! [`VirtualGpu`]: every model part, one device type, behind the same
//! [`Platform`] a real GPU is reached through.
//!
//! A part description ([`Part`]) declares dies, XCCs, AIDs and IP
//! versions. [`VirtualGpu::new`] looks the part's GC IP version up in
//! [`GC_MODELS`], the model's counterpart of Linux's per-IP-version
//! `amd_ip_funcs` tables, and the entry builds every block model the GC
//! generation brings, per instance (XCC, AID, SDMA engine), from the
//! part description:
//! - [`gfx_v11_0`]: GC 11 and GC 12 (Navi3x, Navi4x): one XCC, the MEC
//!   with MES and the KIQ, GFXHUB/MMHUB v3-v4, the SOC blocks;
//! - [`gfx_v9_4_3`]: GC 9.4.3 (MI300X, MI308X): XCCs and AIDs as counts,
//!   a GFXHUB v1.2 per XCC, an MMHUB 1.8 and NBIO 7.9 per AID, the HWS.
//!
//! What is the same on every part lives here, once: the BAR5 [`Router`]
//! (with the RSMU or PCIE index/data pair for offsets past the BAR), the
//! PCI config space and bus mastering, the simulated clock and the
//! host's view of it, the DMA region's bus addresses, the `Platform`
//! impl, the diagnostics and fault switches.
//!
//! Model values (not public facts): BAR5's length (1 MiB, as a
//! Navi3x/Navi4x board maps it; MI300's is not in the public sources
//! used here), the bus addresses of the DMA region and of BAR2, and the
//! host's read cost and back-off ([`HOST_READ_NS`], [`PAUSE_IDLE_NS`]).

mod backing;
pub mod gfx_v11_0;
pub mod gfx_v9_4_3;
mod memory;
mod router;

pub use gfx_v11_0::{AM_FACTS, RefusalMark};
pub use memory::HostMemory;

use crate::cp::CpModel;
use crate::error::ModelError;
use crate::files::FirmwareFiles;
use crate::parts::Part;
use crate::psp::PspModel;
use crate::sdma::SdmaModel;
use crate::{Seed, SimClock};
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::platform::{Aperture, DMA_CHUNK, DmaRegion, Platform};
use barebell::time::Clock;
use core::any::Any;
use core::sync::atomic::{AtomicBool, Ordering};
use router::Router;

/// BAR5's length (a model value: Navi3x/Navi4x boards map 1 MiB).
pub const REGS_BYTES: usize = 1 << 20;
/// Where the model's IOMMU puts the DMA region on the bus (a model value;
/// the VFIO path uses the same IOVA).
pub const DMA_BUS: u64 = 1 << 32;
/// BAR2's bus address (a model value).
pub const DOORBELL_BUS: u64 = 0x00FC_0000_0000;
/// Simulated time a host read of the clock costs (a model convention: the
/// host's own work between two looks at the device).
pub const HOST_READ_NS: u64 = 10;
/// Simulated time a pause costs when no model had anything to do (a
/// model convention: a host that backs off while the device is idle). A
/// wait for something the device will never do then ends after
/// `bound / PAUSE_IDLE_NS` looks instead of `bound / HOST_READ_NS`.
pub const PAUSE_IDLE_NS: u64 = 10_000;

/// Firmware blobs by file name, for the PSP model's expectations (the
/// images it must see loaded, byte for byte): the same source the
/// bring-up loads from (a directory, the initrd, a closure).
pub type Files<'a> = &'a dyn FirmwareFiles;

/// What one GC generation's block models do for the device: the CP side
/// (firmware stand-ins, CP, SDMA engines) and what only they know
/// (quiescence, logs, their fault switches).
pub(crate) trait GcModel: Send + Sync {
    /// One look by the device between two host looks: the firmware
    /// stand-ins, the CP and the SDMA engines run. Whether nothing had
    /// anything to do.
    fn pause(&self) -> bool;
    /// Register stores the CP side made since the last call (a KIQ's
    /// `WRITE_DATA` to a register), as BAR byte offsets and values, for
    /// the device to apply through its register bus.
    fn take_register_stores(&self) -> Vec<(u32, u32)> {
        Vec::new()
    }
    /// Registers a CP-side wait polls (BAR byte offsets): the device
    /// reads them after each look, after the stores, and hands the values
    /// back through [`GcModel::register_values`].
    fn register_waits(&self) -> Vec<u32> {
        Vec::new()
    }
    fn register_values(&self, _values: &[(u32, u32)]) {}
    /// What can still reach memory (see [`VirtualGpu::quiescent`]).
    fn still_running(&self) -> Vec<String>;
    /// What the device side refused or faulted on, one line each.
    fn diagnostics(&self) -> Vec<String>;
    /// Everything the firmware stand-ins logged.
    fn firmware_logs(&self) -> String;
    /// Stop everything on the device (it fell off the bus).
    fn fall_off_bus(&self);
    /// Hang the compute queue on 64-bit doorbell `index`.
    fn hang_queue(&self, index: u32) -> bool;
    /// The CP model behind every compute queue.
    fn cp(&self) -> spin::MutexGuard<'_, CpModel>;
    /// One round of the CP side's work; whether anything moved.
    fn service_cp(&self) -> bool;
    /// BAR2: the page of 64-bit doorbells the CP side watches.
    fn doorbells(&self) -> Aperture;
    /// A host store of `value` to BAR2 byte `byte_offset`, through the
    /// generation's doorbell gate; the reason when it does not ring.
    fn doorbell_write(&self, byte_offset: u64, value: u64) -> Result<(), String>;
    /// The SDMA engines, in instance order.
    fn sdma(&self) -> &[Arc<SdmaModel>];
    fn as_any(&self) -> &dyn Any;
}

/// What a GC generation's builder hands the device.
pub(crate) struct Built {
    pub gc: Box<dyn GcModel>,
    pub router: Router,
    /// The register index/data pair reaching offsets past BAR5 (the
    /// NBIO's RSMU pair, or `BIF_BX0_PCIE_INDEX2/DATA2` on NBIO 7.9).
    pub index_data: (usize, usize),
    /// A second such pair, where the NBIO has one.
    pub index_data2: Option<(usize, usize)>,
    pub psp: Arc<PspModel>,
    pub ih: Arc<crate::ih::IhModel>,
    pub pci: Arc<crate::pci_config::PciConfig>,
    pub bus_master: Arc<AtomicBool>,
}

/// What a builder gets: the part, its firmware, the memory the device
/// stands on, the seed and clock, and the DMA region's bus addresses.
pub(crate) struct Inputs<'a> {
    pub part: &'a Part,
    pub files: Files<'a>,
    pub memory: &'a HostMemory,
    pub seed: Seed,
    pub clock: &'a SimClock,
    pub chunk_bus: &'a [u64],
}

type Builder = fn(&Inputs<'_>) -> Result<Built, ModelError>;
/// A GC IP version: major, minor, and a revision (`None`: any).
type GcKey = (u8, u8, Option<u8>);

/// The GC block models by GC IP version (major, minor, and the revision
/// where one generation's revisions differ; `None`: every revision): the
/// registry [`VirtualGpu::new`] builds a part from.
const GC_MODELS: &[(GcKey, Builder)] = &[
    // GC 9.4.2 (Aldebaran) is GC 9.4.3's single-XCC forerunner: the same
    // builder, with the block versions its IPs select.
    ((9, 4, Some(2)), gfx_v9_4_3::build),
    ((9, 4, Some(3)), gfx_v9_4_3::build),
    ((11, 0, None), gfx_v11_0::build),
    ((12, 0, None), gfx_v11_0::build),
];

/// A model GPU that the bring-up drives as it would drive a card.
pub struct VirtualGpu {
    name: String,
    part: Part,
    clock: SimClock,
    /// What the bring-up waits on: the simulated clock, moved by
    /// [`HOST_READ_NS`] per read.
    host_clock: crate::clock::HostClock,
    bar5: crate::bar::BarWindow<Router>,
    gone: Arc<AtomicBool>,
    psp: Arc<PspModel>,
    ih: Arc<crate::ih::IhModel>,
    pci: Arc<crate::pci_config::PciConfig>,
    bus_master: Arc<AtomicBool>,
    chunk_bus: Vec<u64>,
    claimed: AtomicBool,
    gc: Box<dyn GcModel>,
    /// Last: the models above hold addresses inside it.
    memory: HostMemory,
}

impl core::fmt::Debug for VirtualGpu {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("VirtualGpu")
            .field("name", &self.name)
            .field("memory", &self.memory)
            .finish_non_exhaustive()
    }
}

/// The part's GC IP version from its own description.
fn gc_version(part: &Part) -> Option<(u8, u8, u8)> {
    let ip = part
        .firmware
        .desc
        .dies
        .iter()
        .flat_map(|d| d.iter())
        .find(|ip| ip.hw_id == crate::discovery::GC_HWID && ip.instance == 0)?;
    Some(ip.version)
}

impl VirtualGpu {
    /// One look by the device ([`Platform::pause`]): the block models
    /// take their steps, the register stores the CP side made reach the
    /// register space (the device's own bus, not the BAR: GC 9.4.3's XCCs
    /// past the first lie beyond BAR5), and an idle device lets simulated
    /// time pass.
    /// Returns whether the device was idle.
    fn step(&self) -> bool {
        let idle = self.gc.pause();
        for (at, v) in self.gc.take_register_stores() {
            self.bar5.internal_write32(at as usize, v);
        }
        let waits = self.gc.register_waits();
        if !waits.is_empty() {
            let values: Vec<(u32, u32)> = waits
                .iter()
                .map(|&at| (at, self.bar5.internal_read32(at as usize)))
                .collect();
            self.gc.register_values(&values);
        }
        if idle {
            self.clock.advance(PAUSE_IDLE_NS);
        }
        idle
    }

    /// Lets the device work until it is idle, at most `looks` looks:
    /// what a device does on its own after a doorbell, for a host that
    /// then polls memory rather than registers (Linux's
    /// `amdgpu_fence_wait_polling()` on a MES or KIQ fence). Returns
    /// whether it went idle.
    pub fn run_until_idle(&self, looks: u32) -> bool {
        (0..looks).any(|_| self.step())
    }

    /// Builds `part` over `memory`, with the PSP model expecting the
    /// firmware `files` holds for it, stepping from `seed`: the GC
    /// generation's block models ([`GC_MODELS`]), then BAR5 over them.
    pub fn new(
        part: Part,
        files: Files<'_>,
        memory: HostMemory,
        seed: Seed,
    ) -> Result<Self, ModelError> {
        Self::new_at(part, files, memory, seed, DMA_BUS)
    }

    /// [`VirtualGpu::new`] with the DMA region's chunks at bus addresses
    /// `dma_bus`, `dma_bus + 2 MiB`, ... instead of [`DMA_BUS`]: a guest's
    /// RAM as the region, at its guest-physical addresses (the vfio-user
    /// peer, whose guest has no IOMMU, passes 0).
    pub fn new_at(
        part: Part,
        files: Files<'_>,
        mut memory: HostMemory,
        seed: Seed,
        dma_bus: u64,
    ) -> Result<Self, ModelError> {
        memory.dma_bus = dma_bus;
        let version = gc_version(&part).ok_or(ModelError::Unsupported {
            what: "a part without a GC in its description",
            version: (0, 0, 0),
        })?;
        let build = GC_MODELS
            .iter()
            .find(|((major, minor, rev), _)| {
                (*major, *minor) == (version.0, version.1) && rev.is_none_or(|r| r == version.2)
            })
            .map(|(_, b)| *b)
            .ok_or(ModelError::Unsupported {
                what: "GC block models",
                version,
            })?;
        // `ip_discovery_header` lists 16 dies at most, and the table has
        // [`crate::discovery::TABLE_BYTES`]: a bigger description cannot
        // be written as a driver would read it.
        let (_, layout) = crate::discovery::build(&part.firmware.desc);
        if part.firmware.desc.dies.len() > crate::discovery::MAX_DIES
            || layout.binary_size > crate::discovery::TABLE_BYTES
        {
            return Err(ModelError::Unsupported {
                what: "a part description whose discovery table has more than 16 dies or 10 KiB",
                version,
            });
        }
        let clock = SimClock::new();
        let chunk_bus: Vec<u64> = (0..memory.dma_len / DMA_CHUNK)
            .map(|i| dma_bus + (i * DMA_CHUNK) as u64)
            .collect();
        let built = build(&Inputs {
            part: &part,
            files,
            memory: &memory,
            seed,
            clock: &clock,
            chunk_bus: &chunk_bus,
        })?;
        let gone = built.router.gone_flag();
        let (index, data) = built.index_data;
        let mut bar5 = crate::bar::BarWindow::new(built.router, REGS_BYTES, index, data)
            .with_config(built.pci.clone());
        if let Some((i2, d2)) = built.index_data2 {
            bar5 = bar5.with_second_pair(i2, d2);
        }
        Ok(VirtualGpu {
            name: format!("model {}", part.name),
            part,
            host_clock: clock.host_view(HOST_READ_NS),
            clock,
            bar5,
            gone,
            psp: built.psp,
            ih: built.ih,
            pci: built.pci,
            bus_master: built.bus_master,
            chunk_bus,
            claimed: AtomicBool::new(false),
            gc: built.gc,
            memory,
        })
    }

    /// The part description the model was built from.
    pub fn part(&self) -> &Part {
        &self.part
    }

    pub fn sim_clock(&self) -> &SimClock {
        &self.clock
    }

    pub fn psp(&self) -> &PspModel {
        &self.psp
    }

    /// The IH model: its rings and every entry raised.
    pub fn ih(&self) -> &crate::ih::IhModel {
        &self.ih
    }

    /// The SDMA engines, in instance order.
    pub fn sdma(&self) -> &[Arc<SdmaModel>] {
        self.gc.sdma()
    }

    /// The GC 11 / GC 12 block models, on a Navi3x or Navi4x part.
    pub fn gfx11(&self) -> Option<&gfx_v11_0::Gfx11> {
        self.gc.as_any().downcast_ref()
    }

    /// The function's PCI configuration state (what a mode-1 reset clears).
    pub fn pci(&self) -> &crate::pci_config::PciConfig {
        &self.pci
    }

    /// The GC 9.4.3 block models, on an MI300X or MI308X part.
    pub fn gc_9_4_3(&self) -> Option<&gfx_v9_4_3::Gc943> {
        self.gc.as_any().downcast_ref()
    }

    /// The CP model behind every compute queue (on GC 9.4.3, the one
    /// every XCC's CP shares): its shader engines, its error log.
    pub fn cp(&self) -> spin::MutexGuard<'_, CpModel> {
        self.gc.cp()
    }

    /// Lets the device reach `len` pinned host bytes at `host` under bus
    /// address `bus`: the IOMMU mapping VFIO's `VFIO_IOMMU_MAP_DMA` makes
    /// for a user range (what KFD's userptr BOs rest on). A SYSTEM page
    /// whose address falls in `bus..bus + len` then translates to the
    /// host range, for the CP and its kernels. `false` if the bus or host
    /// range meets one already mapped.
    ///
    /// # Safety
    /// The host range stays valid, and is accessed by the host only as
    /// [`crate::dma::Dma::map`] requires, until
    /// [`VirtualGpu::unmap_host_dma`] takes it away.
    pub unsafe fn map_host_dma(&self, bus: u64, host: *mut u8, len: u64) -> bool {
        if !self.memory.pinned.add(bus, len, host as u64) {
            return false;
        }
        // SAFETY: forwarded contract.
        if unsafe { self.cp().map_host(host as u64, len) } {
            return true;
        }
        self.memory.pinned.remove(bus);
        false
    }

    /// Takes away what [`VirtualGpu::map_host_dma`] mapped at `bus`:
    /// translations to it find nothing behind them any more.
    pub fn unmap_host_dma(&self, bus: u64) -> bool {
        match self.memory.pinned.remove(bus) {
            Some((host, _)) => self.cp().unmap_host(host),
            None => false,
        }
    }

    /// One round of the CP side's work (doorbells, schedulers, queues);
    /// whether anything moved.
    pub fn service_cp(&self) -> bool {
        self.gc.service_cp()
    }

    /// Whether `PCI_COMMAND` bus master (bit 2, `PCI_COMMAND_MASTER` in
    /// `pci_regs.h`) is on as the host last set it. The PCI Local Bus
    /// Specification (3.0, section 6.2.2) says a function with the bit
    /// clear may not generate PCI accesses: no DMA.
    pub fn bus_master(&self) -> bool {
        self.bus_master.load(Ordering::Relaxed)
    }

    /// Sets `PCI_COMMAND` bus master as a host's config write would.
    pub fn set_bus_master(&self, on: bool) {
        self.bus_master.store(on, Ordering::Release);
    }

    /// Gives the device up: another host program may claim it.
    pub fn release_claim(&self) {
        self.claimed.store(false, Ordering::Release);
    }

    /// Whether the device is left as `amdgpu_device_fini_hw()` leaves it:
    /// nothing that can reach host or device memory on its own. `Err`
    /// lists every engine or aperture that still can (the GC
    /// generation's list: HQDs, schedulers, MEC, SDMA, PSP ring,
    /// doorbell apertures, IH rings, VM contexts), then PCI bus mastering
    /// (`pci_clear_master()`).
    pub fn quiescent(&self) -> Result<(), NotQuiescent> {
        let mut why = self.gc.still_running();
        if self.bus_master() {
            why.push("PCI bus mastering on".into());
        }
        if why.is_empty() {
            Ok(())
        } else {
            Err(NotQuiescent(why))
        }
    }

    /// What the device side refused or faulted on: the PSP's refusals
    /// and memory faults, then the GC generation's (CP, schedulers,
    /// SDMA, stray registers), one line each.
    pub fn diagnostics(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in self.psp.refusals() {
            out.push(format!("the PSP model refused: {r}"));
        }
        for x in self.psp.mc().faults() {
            out.push(format!("the PSP's memory access faulted: {x}"));
        }
        out.extend(self.gc.diagnostics());
        out
    }

    /// Everything the firmware stand-ins logged (MES, KIQ, MEC), for a
    /// failure's report.
    pub fn firmware_logs(&self) -> String {
        self.gc.firmware_logs()
    }

    /// Fault switch: the device falls off the bus: every BAR5 read
    /// returns all ones, writes are dropped, and nothing on it runs any
    /// more, so no fence, signal or read pointer moves again.
    pub fn fall_off_bus(&self) {
        self.gone.store(true, Ordering::Relaxed);
        self.gc.fall_off_bus();
    }

    /// Whether [`VirtualGpu::fall_off_bus`] was thrown.
    pub fn gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// Fault switch: the compute queue on 64-bit doorbell `index` hangs
    /// (stops consuming its ring; see [`crate::cp::CpModel::hang`]).
    /// False if no queue is mapped there.
    pub fn hang_queue(&self, index: u32) -> bool {
        self.gc.hang_queue(index)
    }

    /// A host's 64-bit store of `value` to BAR2 byte `byte_offset`, as a
    /// second driver (tinygrad's AM, the Linux guest) makes it: it rings
    /// only through the part's NBIO doorbell aperture; otherwise the
    /// store is dropped and the reason returned.
    pub fn doorbell_write(&self, byte_offset: u64, value: u64) -> Result<(), String> {
        self.gc.doorbell_write(byte_offset, value)
    }

    /// A 32-bit doorbell store (Linux's `WDOORBELL32()`, the IH's read
    /// pointer in `ih_v6_0_set_rptr()`): the half of the 64-bit slot it
    /// names changes, the other keeps its value, and the slot is stored as
    /// [`VirtualGpu::doorbell_write`] stores it.
    pub fn doorbell_write32(&self, byte_offset: u64, value: u32) -> Result<(), String> {
        let page = self.gc.doorbells();
        let slot = byte_offset & !7;
        if slot + 8 > page.len as u64 {
            return Err(alloc::format!(
                "32-bit doorbell store at BAR2 byte {byte_offset:#x}: outside the model's \
                 {:#x}-byte doorbell page",
                page.len
            ));
        }
        // SAFETY: inside the doorbell page (checked above), 8-aligned; the
        // page is only accessed atomically.
        let old = unsafe {
            &*(page.host.as_ptr().add(slot as usize) as *const core::sync::atomic::AtomicU64)
        }
        .load(Ordering::Acquire);
        let merged = if byte_offset & 4 == 0 {
            old & !0xFFFF_FFFF | u64::from(value)
        } else {
            old & 0xFFFF_FFFF | u64::from(value) << 32
        };
        self.gc.doorbell_write(slot, merged)
    }

    /// Accesses BAR5 lost past its end, and those through the index/data
    /// pair.
    pub fn bar5_counts(&self) -> crate::bar::BarCounts {
        self.bar5.counts()
    }

    /// Runs the CP side on a thread of its own while `f` runs, as a GPU's
    /// CP runs beside the host: the runtime's waits then see real time
    /// and a CP that needs no pause. `setup` runs first on the new thread
    /// (e.g. to pin it). The thread is scoped: it cannot outlive this
    /// VirtualGpu.
    #[cfg(feature = "std")]
    pub fn with_cp_thread<R>(
        &self,
        idle: crate::thread::Idle,
        setup: impl FnOnce() + Send,
        f: impl FnOnce() -> R,
    ) -> std::io::Result<R> {
        crate::thread::with_service_thread(&|| self.gc.service_cp(), idle, setup, f)
    }
}

/// What [`VirtualGpu::quiescent`] found when it found nothing left
/// running: the line the CLI and the unikernel print after a teardown.
pub const QUIESCENT: &str = "quiescent (no HQD active, SDMA, MES and MEC halted, PSP ring destroyed, IH rings disabled, doorbell apertures closed, bus mastering off)";

/// What [`VirtualGpu::quiescent`] found still able to reach memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotQuiescent(pub Vec<String>);

impl core::fmt::Display for NotQuiescent {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the device is not quiescent: ")?;
        f.write_str(&self.0.join("; "))
    }
}

// SAFETY: every promise of the trait is kept by construction:
// - `regs` is the BAR window over the routed block models, each access
//   one call into a model, in program order;
// - `vram` is `memory`'s VRAM backing, owned by this value, used only
//   through it (the MC models read it as VRAM);
// - `doorbells` is the CP side's boxed doorbell page, owned (through the
//   GC block models) by this value, valid for aligned 64-bit stores, at
//   the bus address the CP side uses;
// - `dma` is `memory`'s DMA region: 2 MiB aligned whole chunks, owned by
//   this value until it drops (after every model that holds its
//   addresses), in the model IOMMU at `chunk_bus`.
unsafe impl Platform for VirtualGpu {
    fn regs(&self) -> &dyn RegisterBus {
        &self.bar5
    }
    fn regs_len(&self) -> usize {
        REGS_BYTES
    }
    fn vram(&self) -> Aperture {
        Aperture {
            host: self.memory.vram,
            len: self.memory.vram_len,
        }
    }
    fn doorbells(&self) -> Aperture {
        self.gc.doorbells()
    }
    fn doorbell_bus(&self) -> u64 {
        DOORBELL_BUS
    }
    fn dma(&self) -> DmaRegion<'_> {
        DmaRegion {
            host: self.memory.dma,
            len: self.memory.dma_len,
            chunk_bus: &self.chunk_bus,
        }
    }
    fn clock(&self) -> &dyn Clock {
        &self.host_clock
    }
    fn pause(&self) {
        self.step();
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::AcqRel)
    }
    fn set_bus_master(&self, on: bool) -> bool {
        VirtualGpu::set_bus_master(self, on);
        true
    }
    fn save_pci_state(&self) -> bool {
        self.pci.save();
        true
    }
    fn restore_pci_state(&self) -> bool {
        self.pci.restore()
    }
    fn disable_aspm(&self) -> bool {
        self.pci.disable_aspm();
        true
    }
    fn pci_device_id(&self) -> Option<u16> {
        Some(self.part.pci_device_id())
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::discovery::{IpDesc, PartDesc};

    /// No firmware at all: the part is refused before any is read.
    fn no_files(name: &str) -> Result<Vec<u8>, crate::FileError> {
        Err(crate::FileError {
            name: name.into(),
            detail: "is not there (no firmware at all)".into(),
        })
    }

    /// A description with more dies than `ip_discovery_header` lists is
    /// a typed refusal, not a panic.
    #[test]
    fn a_part_with_17_dies_is_refused() {
        let mut part = crate::parts::mi300x();
        let first: &'static [IpDesc] = part.firmware.desc.dies[0];
        let dies: Vec<&'static [IpDesc]> = (0..17).map(|_| first).collect();
        let desc = PartDesc {
            dies: Box::leak(dies.into_boxed_slice()),
            ..part.firmware.desc
        };
        part.firmware.desc = desc;
        let mem = HostMemory::allocate(1 << 20).unwrap();
        let e = VirtualGpu::new(part, &no_files, mem, Seed(1)).unwrap_err();
        let text = alloc::format!("{e}");
        assert!(text.contains("16 dies"), "{text}");
    }

    /// A GC version with no block models in the registry (GC 9.4.2, as
    /// on an MI210) is a typed refusal naming the version.
    #[test]
    fn a_gc_version_without_block_models_is_refused() {
        let mut part = crate::parts::mi300x();
        let dies: Vec<&'static [IpDesc]> = part
            .firmware
            .desc
            .dies
            .iter()
            .map(|d| {
                let v: Vec<IpDesc> = d
                    .iter()
                    .map(|ip| {
                        let mut ip = *ip;
                        if ip.hw_id == crate::discovery::GC_HWID {
                            ip.version = (9, 4, 1);
                        }
                        ip
                    })
                    .collect();
                &*Box::leak(v.into_boxed_slice())
            })
            .collect();
        part.firmware.desc = PartDesc {
            dies: Box::leak(dies.into_boxed_slice()),
            ..part.firmware.desc
        };
        let mem = HostMemory::allocate(1 << 20).unwrap();
        let e = VirtualGpu::new(part, &no_files, mem, Seed(1)).unwrap_err();
        let text = alloc::format!("{e}");
        assert!(
            text.contains("GC block models") && text.contains("9.4.1"),
            "{text}"
        );
    }
}
