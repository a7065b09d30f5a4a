//! [`VirtualGpu`]: one model GPU behind the same [`Platform`] a real one
//! is reached through.
//!
//! - BAR5 (1 MiB, as a Navi3x/Navi4x board maps it) routes each register
//!   to the block model that owns it: the discovery window (IFWI flag,
//!   VRAM size, `MM_INDEX`/`MM_DATA`), the NBIO, the MMHUB and GFXHUB
//!   hub models, the PSP (MP0 and the RLC autoload status), and the MEC
//!   (every other GC register: MES control, HQDs, doorbell range, KIQ).
//!   Accesses past the BAR are lost (counted) unless they go through the
//!   NBIO's RSMU index/data pair, as on a card.
//! - BAR0 is host memory the MC model reads as VRAM from offset 0.
//! - BAR2 is a page of 64-bit doorbells the MEC model watches; a store
//!   reaches a queue only through the NBIO's doorbell aperture and its
//!   S2A routing to the GC (`NbioModel::route_gc_doorbell`).
//! - The DMA region is host memory in the model's IOMMU at a fixed bus
//!   address. The CP model reads every MEC-mapped queue through its VMID
//!   (`CpTranslate`): the GFXHUB's context registers and walk
//!   (`HubModel::translate_vmid_as`, client CPC) for direct and KIQ
//!   queues, the process tables MES was given for MES queues; then the
//!   VRAM backing or the IOMMU.
//! - [`Platform::pause`] is where the firmware stand-ins run: the KIQ and
//!   MES models are found through the MEC model once their rings exist
//!   (as firmware would find them) and serviced, and the CP model runs to
//!   idle. The bring-up calls it between looks at every fence, so one
//!   thread suffices (the unikernel has one CPU).
//!
//! What is a model convention and not a public fact: the FB location,
//! FB offset and display mode the "VBIOS" leaves ([`crate::Part`]), the
//! discovery table's IP bases, the bus addresses of the DMA region and of
//! BAR2, the Navi48 TMR size the PSP model asks for (Navi31's is a real
//! card's), the PSP's timings (`psp::PspTiming::MODEL`), and everything
//! listed as such in the block models.

// Issue 15: what tinygrad's AM driver needs (SOC blocks, refusals,
// discovery in VRAM, doorbell stores).
mod am;
mod build;
pub use am::FACTS as AM_FACTS;
pub use am::RefusalMark;
use am::soc_blocks;

use crate::bar::BarWindow;
use crate::bar::DoorbellPage;
use crate::dcn::DcnModel;
use crate::discovery::{self, VramWindow};
use crate::dma::Dma;
use crate::error::ModelError;
use crate::gmc::{Access, Gmc, VmFault};
use crate::hub::{HubModel, HubRefusal};
use crate::kiq::KiqModel;
use crate::mec::Mec;
use crate::mes::{MesApiVersion, MesModel};
use crate::nbio::NbioModel;
use crate::parts::Part;
use crate::psp::PspModel;
use crate::{Seed, SimClock};
use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::ip::Generation;
use barebell::nbio::MMIO_REG_HOLE_OFFSET;
use barebell::platform::{Aperture, DMA_CHUNK, DmaRegion, Platform};
use barebell::regs::hub::HubRegs;
use barebell::regs::{IpBases, Reg};
use barebell::time::Clock;
use barebell_firmware_if::source::FirmwareSource;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;

/// BAR5's length on Navi3x/Navi4x boards.
pub const REGS_BYTES: usize = 1 << 20;
/// Where the model's IOMMU puts the DMA region on the bus (a model value;
/// the VFIO path uses the same IOVA).
pub const DMA_BUS: u64 = 1 << 32;
/// BAR2's bus address (a model value).
pub const DOORBELL_BUS: u64 = 0x00FC_0000_0000;
/// Simulated time a host read of the clock costs (a model convention: the
/// host's own work between two looks at the device).
pub const HOST_READ_NS: u64 = 10;
/// Steps the CP model may take in one pause before it must be idle.
const CP_STEPS_PER_PAUSE: u64 = 1_000_000;
/// Simulated time a pause costs when no model had anything to do (a
/// model convention: a host that backs off while the device is idle). A
/// wait for something the device will never do then ends after
/// `bound / PAUSE_IDLE_NS` looks instead of `bound / HOST_READ_NS`.
pub const PAUSE_IDLE_NS: u64 = 10_000;

/// Firmware blobs by file name, for the PSP model's expectations (the
/// images it must see loaded, byte for byte): the same source the
/// bring-up loads from (a directory, the initrd, a closure).
pub type Files<'a> = &'a dyn FirmwareSource;

/// The host memory a [`VirtualGpu`] stands on: BAR0's backing (the
/// modelled VRAM from offset 0) and the DMA region.
pub struct HostMemory {
    vram: NonNull<u8>,
    vram_len: usize,
    dma: NonNull<u8>,
    dma_len: usize,
    release: Option<Box<dyn FnOnce() + Send>>,
}

impl core::fmt::Debug for HostMemory {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HostMemory")
            .field("vram", &self.vram)
            .field("vram_len", &self.vram_len)
            .field("dma", &self.dma)
            .field("dma_len", &self.dma_len)
            .finish_non_exhaustive()
    }
}

// SAFETY: the pointers name memory this value owns (the contract of
// `new`); moving the owner between threads moves nothing.
unsafe impl Send for HostMemory {}
// SAFETY: `&HostMemory` only hands out the pointers.
unsafe impl Sync for HostMemory {}

impl HostMemory {
    /// `(vram, vram_len, dma, dma_len)`, for platforms of this crate
    /// other than [`VirtualGpu`] ([`crate::shell`]).
    pub(crate) fn regions(&self) -> (NonNull<u8>, usize, NonNull<u8>, usize) {
        (self.vram, self.vram_len, self.dma, self.dma_len)
    }

    /// # Safety
    /// `vram` and `dma` must point to `vram_len` and `dma_len` bytes of
    /// zeroed, writable memory that stay valid until `release` runs (or
    /// forever, without one), that nothing else uses, and that do not
    /// overlap; `dma` must be 2 MiB aligned and `dma_len` a multiple of
    /// 2 MiB. `release` runs once, when the value is dropped.
    pub unsafe fn new(
        vram: NonNull<u8>,
        vram_len: usize,
        dma: NonNull<u8>,
        dma_len: usize,
        release: Option<Box<dyn FnOnce() + Send>>,
    ) -> Self {
        HostMemory {
            vram,
            vram_len,
            dma,
            dma_len,
            release,
        }
    }

    /// `vram_len` bytes of VRAM backing from the heap and
    /// [`barebell::platform::DMA_BYTES`] of DMA region mapped at
    /// [`barebell::platform::DMA_HOST_VA`] (the next free slot above it
    /// when several models share a process), as the hardware targets
    /// place theirs.
    #[cfg(feature = "std")]
    pub fn allocate(vram_len: usize) -> Result<Self, ModelError> {
        Self::allocate_sized(vram_len, barebell::platform::DMA_BYTES)
    }

    /// [`HostMemory::allocate`] with a DMA region of `dma_bytes` (rounded
    /// up to whole 2 MiB chunks): room for big user buffers (the SDMA
    /// copy tests).
    #[cfg(feature = "std")]
    pub fn allocate_sized(vram_len: usize, dma_bytes: usize) -> Result<Self, ModelError> {
        use barebell::platform::DMA_HOST_VA;
        #[allow(non_snake_case)]
        let DMA_BYTES = dma_bytes.max(DMA_CHUNK).next_multiple_of(DMA_CHUNK);
        let no_vram = ModelError::VramBacking { bytes: vram_len };
        let layout = std::alloc::Layout::from_size_align(vram_len.max(4096), 4096)
            .map_err(|_| no_vram.clone())?;
        // SAFETY: non-zero size.
        let vram = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }).ok_or(no_vram)?;
        // The first free slot from DMA_HOST_VA up: a lone model (the CLI)
        // sits exactly where a GPU's region would.
        let mut tried = 0;
        let dma = loop {
            let at = DMA_HOST_VA + tried * 2 * DMA_BYTES;
            // SAFETY: a fresh anonymous mapping at an address nothing in
            // this process uses (MAP_FIXED_NOREPLACE refuses a clash).
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    DMA_BYTES,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if p as usize == at {
                break at;
            }
            if p != libc::MAP_FAILED {
                // An old kernel ignored NOREPLACE and put it elsewhere.
                // SAFETY: the mapping just made, unmapped at once.
                unsafe { libc::munmap(p, DMA_BYTES) };
            }
            tried += 1;
            if tried > 64 {
                // SAFETY: `vram` came from `alloc_zeroed(layout)`.
                unsafe { std::alloc::dealloc(vram.as_ptr(), layout) };
                return Err(ModelError::DmaRegion {
                    bytes: DMA_BYTES,
                    above: DMA_HOST_VA,
                    errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
                });
            }
        };
        let vram_addr = vram.as_ptr() as usize;
        let release = Box::new(move || {
            // SAFETY: the two allocations made above, released once.
            unsafe {
                libc::munmap(dma as *mut libc::c_void, DMA_BYTES);
                std::alloc::dealloc(vram_addr as *mut u8, layout);
            }
        });
        let dma = NonNull::new(dma as *mut u8).ok_or(ModelError::DmaRegion {
            bytes: DMA_BYTES,
            above: DMA_HOST_VA,
            errno: 0,
        })?;
        // SAFETY: both regions were just allocated, zeroed, disjoint,
        // owned by this value until `release`; the DMA region is at a
        // multiple of 2 MiB (DMA_HOST_VA and the stride are) and
        // DMA_BYTES is whole chunks.
        Ok(unsafe { HostMemory::new(vram, vram_len, dma, DMA_BYTES, Some(release)) })
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        if let Some(r) = self.release.take() {
            r();
        }
    }
}

/// Routes each register to the model that owns it; the MEC takes the
/// rest.
struct Router {
    routes: Vec<(BTreeSet<usize>, Arc<dyn RegisterBus + Send + Sync>)>,
    rest: Arc<Mec>,
    /// Issue 15: where an access no block model claims is logged (and,
    /// in strict mode, refused instead of reaching the MEC's storage).
    unknown: crate::unknown::UnknownRegisters,
    /// Issue 20: the CP reset registers the power block stores, which
    /// the MEC model acts on (`GRBM_SOFT_RESET`, `SPI_COMPUTE_QUEUE_RESET`).
    cp_reset: (usize, usize),
    /// The SMU's mailbox offsets and mode-1 resets seen so far: a mode-1
    /// reset returns the CP to its reset state too.
    smu: (BTreeSet<usize>, Arc<crate::smu::SmuModel>),
    mode1_seen: core::sync::atomic::AtomicUsize,
    /// Fault switch: the device fell off the bus. A PCIe read that no
    /// function completes returns all ones and writes are dropped (the
    /// root complex's completer-abort answer, which Linux's
    /// `amdgpu_device_rreg()` callers and `pci_device_is_present()` treat
    /// as a vanished device).
    gone: Arc<AtomicBool>,
}

impl Router {
    fn read(&self, off: usize) -> u32 {
        if self.gone.load(Ordering::Relaxed) {
            return barebell::bus::ALL_ONES;
        }
        match self.routes.iter().find(|(set, _)| set.contains(&off)) {
            Some((_, m)) => m.read32(off),
            None if self.unknown.refuse(off, None) => 0,
            None => self.rest.read32(off),
        }
    }
    fn write(&self, off: usize, v: u32) {
        if self.gone.load(Ordering::Relaxed) {
            return;
        }
        match self.routes.iter().find(|(set, _)| set.contains(&off)) {
            Some((_, m)) => m.write32(off, v),
            None if self.unknown.refuse(off, Some(v)) => {}
            None => self.rest.write32(off, v),
        }
        if off == self.cp_reset.0 {
            self.rest.grbm_soft_reset(v);
        } else if off == self.cp_reset.1 {
            self.rest.spi_queue_reset(v);
        } else if self.smu.0.contains(&off) {
            let n = self
                .smu
                .1
                .events()
                .iter()
                .filter(|e| matches!(e, crate::smu::SmuEvent::Mode1Reset))
                .count();
            if self.mode1_seen.swap(n, Ordering::Relaxed) != n {
                // Model convention: a mode-1 reset resets the whole ASIC
                // (`amdgpu_device_mode1_reset()` re-inits every block), so
                // the compute CP returns to what a CP soft reset leaves.
                self.rest.hard_reset();
            }
        }
    }
}

impl RegisterBus for Router {
    fn read32(&self, off: usize) -> u32 {
        self.read(off)
    }
    fn write32(&self, off: usize, v: u32) {
        self.write(off, v)
    }
}

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

/// A model GPU that the bring-up drives as it would drive a card.
pub struct VirtualGpu {
    name: String,
    part: Part,
    clock: SimClock,
    /// What the bring-up waits on: the simulated clock, moved by
    /// [`HOST_READ_NS`] per read.
    host_clock: crate::clock::HostClock,
    bar5: BarWindow<Router>,
    nbio: Arc<NbioModel>,
    mmhub: Arc<HubModel>,
    gfxhub: Arc<HubModel>,
    dcn: Option<Arc<DcnModel>>,
    psp: Arc<PspModel>,
    mec: Arc<Mec>,
    api: MesApiVersion,
    mes_info: MesInfo,
    firmwares: Mutex<Firmwares>,
    doorbells: Box<DoorbellPage>,
    chunk_bus: Vec<u64>,
    claimed: AtomicBool,
    /// Fault switch: the MES and KIQ firmware stand-ins never run.
    schedulers_silent: AtomicBool,
    /// Issue 20 fault switches: the MES scheduler pipe / the KIQ stops
    /// consuming its ring (a hung firmware); a CP soft reset or a mode-1
    /// reset clears them (the firmware restarts from its reset state).
    mes_hung: AtomicBool,
    kiq_hung: AtomicBool,
    /// CP resets the firmware stand-ins have seen (they restart after one).
    fw_epoch: core::sync::atomic::AtomicU64,
    /// The device fell off the bus ([`VirtualGpu::fall_off_bus`]).
    gone: Arc<AtomicBool>,
    /// Issue 15: the SOC blocks (SMU, IH, SDMA, clock gating, S2A).
    soc: Arc<crate::socblocks::SocBlocks>,
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

/// What the MES model checks SET_HW_RSRC and ADD_QUEUE against, from the
/// part's own description (not from what the runtime discovered).
#[derive(Debug, Clone, Copy)]
struct MesInfo {
    gc: [u32; 5],
    mmhub: [u32; 5],
    osssys: [u32; 5],
    sdma: usize,
    /// `GCVM_CONTEXT1_CNTL` in the BAR.
    ctx1_cntl: usize,
}

impl MesInfo {
    fn of(desc: &discovery::PartDesc, ctx1_cntl: usize) -> Self {
        let ips = || desc.dies.iter().flat_map(|d| d.iter());
        let five = |id: u16| {
            let mut o = [0u32; 5];
            if let Some(ip) = ips().find(|ip| ip.hw_id == id && ip.instance == 0) {
                for (d, b) in o.iter_mut().zip(ip.bases) {
                    *d = *b as u32;
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

impl VirtualGpu {
    /// Builds `part` over `memory`, with the PSP model expecting the
    /// firmware `files` holds for it, stepping from `seed`: each block
    /// model from the part description ([`build`]), in this order.
    pub fn new(
        part: Part,
        files: Files<'_>,
        memory: HostMemory,
        seed: Seed,
    ) -> Result<Self, ModelError> {
        // GC 9.4.3 parts (mi300x, mi308x) are a different device: the
        // gfx9 hubs, PSP 13.0.6 and per-XCC RLC/MEC of
        // [`crate::vgpu9::VirtualGpu9`].
        if part.generation == Generation::Gfx94 {
            return Err(ModelError::NotImplemented(barebell::ip::Unsupported::new(
                "VirtualGpu (GC 9.4.3 parts run on VirtualGpu9)",
                part.generation,
            )));
        }
        let clock = SimClock::new();
        let (table, _) = discovery::build(&part.firmware.desc);
        // The part's own IP list: the model never parses the table it
        // writes (a driver does).
        let d = discovery::PartIps::new(&part.firmware.desc);
        let pl = build::place(&d)?;
        let window = Arc::new(VramWindow::new(
            &clock,
            part.firmware.vram_mib,
            table.clone(),
        ));
        let nbio = Arc::new(NbioModel::new(
            &clock,
            part.nbio.ok_or(ModelError::Unsupported {
                what: "NBIO model",
                version: pl.nbif.version.triple(),
            })?,
            pl.nbif.bases,
            MMIO_REG_HOLE_OFFSET as usize,
        ));
        let (mmhub, gfxhub, fb_regs) = build::hubs(&clock, &part, &pl)?;
        let dcn = build::dcn(&clock, &part, &d, &memory);
        let chunk_bus: Vec<u64> = (0..memory.dma_len / DMA_CHUNK)
            .map(|i| DMA_BUS + (i * DMA_CHUNK) as u64)
            .collect();
        let psp = build::psp(&clock, &part, &pl, files, &mmhub, &memory)?;
        let (doorbells, mec) = build::mec(&clock, &part, &pl, files, seed, &memory, &psp)?;
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
        let soc = build::soc(&clock, &d, &part, files, &side, fb_regs, &memory)?;
        // The display's registers, then the SOC blocks', before the GC's
        // catch-all.
        let mut routes: build::Routes = Vec::new();
        if let Some(m) = &dcn {
            routes.push((m.offsets().collect(), m.clone()));
        }
        routes.extend(soc.routes());
        routes.extend(build::gc_routes(&side)?);
        let (bar5, gone) = build::bar5(&side, &d, &soc, routes)?;
        let (api, mes_info) = build::mes(&part, &pl)?;
        let gpu = VirtualGpu {
            name: format!("model {}", part.name),
            part,
            host_clock: clock.host_view(HOST_READ_NS),
            clock,
            bar5,
            nbio: side.nbio,
            mmhub: side.mmhub,
            gfxhub: side.gfxhub,
            dcn,
            psp: side.psp,
            mec: side.mec,
            api,
            mes_info,
            firmwares: Mutex::new(Firmwares::default()),
            doorbells,
            chunk_bus,
            claimed: AtomicBool::new(false),
            schedulers_silent: AtomicBool::new(false),
            mes_hung: AtomicBool::new(false),
            kiq_hung: AtomicBool::new(false),
            fw_epoch: core::sync::atomic::AtomicU64::new(0),
            gone,
            soc,
            memory,
        };
        gpu.place_discovery(&table);
        gpu.connect_translators();
        Ok(gpu)
    }

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
        let view = CpTranslate {
            hub: self.gfxhub.clone(),
            space: self.space(),
        };
        let port = SdmaPortImpl {
            hub: self.gfxhub.clone(),
            vram: view.vram(),
            iommu: view.iommu(),
            fb_offset: self.part.fb_offset,
            doorbells: &*self.doorbells as *const DoorbellPage as u64,
            nbio: self.nbio.clone(),
            s2a: self.soc.s2a.clone(),
            clock: self.clock.clone(),
        };
        self.soc.sdma.set_port(Arc::new(port));
    }

    pub fn part(&self) -> &Part {
        &self.part
    }

    pub fn sim_clock(&self) -> &SimClock {
        &self.clock
    }

    /// The MEC model (HQDs, MES pipes, the CP behind them), e.g. to run
    /// it on a thread of its own.
    pub fn mec(&self) -> &Mec {
        &self.mec
    }

    pub fn psp(&self) -> &PspModel {
        &self.psp
    }

    /// Whether `PCI_COMMAND` bus master (bit 2, `PCI_COMMAND_MASTER` in
    /// `pci_regs.h`) is on as the host last set it. The PCI Local Bus
    /// Specification (3.0, section 6.2.2) says a function with the bit
    /// clear may not generate PCI accesses: no DMA. The model records the
    /// bit; its DMA users do not consult it yet.
    pub fn bus_master(&self) -> bool {
        self.soc.bus_master.load(Ordering::Relaxed)
    }

    /// Whether the device is left as `amdgpu_device_fini_hw()` leaves it:
    /// nothing that can reach host or device memory on its own. `Err`
    /// lists every engine or aperture that still can:
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
    /// - PCI bus mastering on (`pci_clear_master()`).
    pub fn quiescent(&self) -> Result<(), NotQuiescent> {
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
        if let Some(q) = self.soc.sdma.queue() {
            why.push(format!(
                "SDMA 0: queue active (ring {:#x}, VMID {}, doorbell dword {:?})",
                q.ring, q.vmid, q.doorbell
            ));
        }
        if self.soc.sdma.running() {
            why.push("SDMA 0: engine running (F32_CNTL/MCU_CNTL HALT clear)".into());
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
        if self.bus_master() {
            why.push("PCI bus mastering on".into());
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
        if why.is_empty() {
            Ok(())
        } else {
            Err(NotQuiescent(why))
        }
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

    /// Fault switch (issue 20): the compute queue on 64-bit doorbell
    /// `index` hangs (see [`crate::cp::CpModel::hang`]). False if no queue
    /// is mapped there.
    pub fn hang_queue(&self, index: u32) -> bool {
        self.mec.hang_doorbell(index.saturating_mul(2))
    }

    /// Fault switch (issue 20): the device falls off the bus: every BAR5
    /// read returns all ones, writes are dropped, and nothing on it runs
    /// any more: the CP, the MES scheduler pipe and the KIQ stop, so no
    /// fence or read pointer moves again.
    pub fn fall_off_bus(&self) {
        self.gone.store(true, Ordering::Relaxed);
        self.mec.cp().faults.stop_consuming = true;
        self.mes_hung.store(true, Ordering::Relaxed);
        self.kiq_hung.store(true, Ordering::Relaxed);
    }

    /// The IH model (issue 20): its rings and every entry raised.
    pub fn ih(&self) -> &crate::ih::IhModel {
        &self.soc.ih
    }

    /// SDMA engine 0.
    pub fn sdma(&self) -> &crate::sdma::SdmaModel {
        &self.soc.sdma
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

    /// Accesses BAR5 lost past its end, and those through the RSMU pair.
    pub fn bar5_counts(&self) -> crate::bar::BarCounts {
        self.bar5.counts()
    }

    /// The host address the GPU reaches at `va` through the tables
    /// rooted at `root` (a VRAM physical address): the walk the hub
    /// makes, then the IOMMU (SYSTEM pages) or the VRAM backing.
    pub fn translate(&self, root: u64, va: u64, access: Access) -> Result<u64, VmFault> {
        self.space().translate(root, va, access)
    }

    fn space(&self) -> Space {
        Space {
            vram: (
                self.memory.vram.as_ptr() as u64,
                self.memory.vram_len as u64,
            ),
            dma: (self.memory.dma.as_ptr() as u64, self.memory.dma_len as u64),
            chunk_bus: self.chunk_bus.clone(),
            gfx12: self.part.generation == Generation::Gfx12,
            fb_offset: self.part.fb_offset,
        }
    }

    /// Runs the MEC model (the CP behind every HQD) on a thread of its
    /// own while `f` runs, as a GPU's CP runs beside the host: the
    /// runtime's waits then see real time and a CP that needs no pause.
    /// `setup` runs first on the new thread (e.g. to pin it). The thread
    /// is scoped: it cannot outlive this VirtualGpu.
    #[cfg(feature = "std")]
    pub fn with_mec_thread<R>(
        &self,
        idle: crate::thread::Idle,
        setup: impl FnOnce() + Send,
        f: impl FnOnce() -> R,
    ) -> std::io::Result<R> {
        let mec: &Mec = &self.mec;
        crate::thread::with_service_thread(&|| mec.step().progressed(), idle, setup, f)
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
            "KIQ model: {:?}\nMES pipe 1: {:?}\nscheduler: {:?}\nMEC: {:?}",
            f.kiq.as_ref().map(|k| k.log()),
            f.pipe1.as_ref().map(|m| m.log()),
            f.sched.as_ref().map(|m| m.log()),
            self.mec.events()
        )
    }

    fn translator(&self) -> crate::mes::Translator {
        let space = self.space();
        Box::new(move |root, va, access| space.translate(root, va, access))
    }
}

/// The memory a walk reaches: VRAM backing and the DMA region with its
/// chunks' bus addresses (plain numbers, so a translator can own a copy).
#[derive(Debug, Clone)]
struct Space {
    vram: (u64, u64),
    dma: (u64, u64),
    chunk_bus: Vec<u64>,
    gfx12: bool,
    /// Physical address of VRAM offset 0 (`*MC_VM_FB_OFFSET`).
    fb_offset: u64,
}

impl Space {
    fn translate(&self, root: u64, va: u64, access: Access) -> Result<u64, VmFault> {
        let mut vram = Dma::default();
        let mut iommu = Dma::default();
        // SAFETY: windows over the VirtualGpu's own memory, read during
        // this call only; whoever holds a `Space` (a MES model's
        // translator) is dropped with the VirtualGpu, before its memory.
        unsafe {
            vram.map_at(0, self.vram.0 as *mut u8, self.vram.1);
            for (i, bus) in self.chunk_bus.iter().enumerate() {
                let host = self.dma.0 + (i * DMA_CHUNK) as u64;
                iommu.map_at(*bus, host as *mut u8, DMA_CHUNK as u64);
            }
        }
        let t = Gmc::new(&vram, root & !0xFFF, self.gfx12)
            .with_vram_base(self.fb_offset)
            .translate(va, access)?;
        let (space, at) = if t.system {
            (&iommu, Some(t.pa))
        } else {
            (&vram, t.pa.checked_sub(self.fb_offset))
        };
        at.and_then(|a| space.host_of(a, 1)).ok_or(VmFault {
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
        let tr = self
            .hub
            .translate_vmid_as(&self.vram, vmid, va, access, crate::sdma::CID_SDMA0)
            .map_err(|refusal| SdmaVmError::Refused { refusal })?;
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
}

/// GFXHUB client id of the compute CP (`CPC`, index 5 of
/// `gfxhub_client_ids` in `gfxhub_v3_0.c`), what a CP fault latches.
const CID_CPC: u16 = 5;

/// The CP's view of a queue's address space (`cp::Translate`).
struct CpTranslate {
    hub: Arc<HubModel>,
    space: Space,
}

impl CpTranslate {
    fn vram(&self) -> Dma {
        let mut vram = Dma::default();
        // SAFETY: a window over the VirtualGpu's own VRAM backing, read
        // during one translation only; the CP model holding this
        // translator is dropped with the VirtualGpu, before its memory.
        unsafe { vram.map_at(0, self.space.vram.0 as *mut u8, self.space.vram.1) };
        vram
    }

    fn iommu(&self) -> Dma {
        let mut iommu = Dma::default();
        for (i, bus) in self.space.chunk_bus.iter().enumerate() {
            let host = self.space.dma.0 + (i * DMA_CHUNK) as u64;
            // SAFETY: as for `vram`: the VirtualGpu's own DMA chunks.
            unsafe { iommu.map_at(*bus, host as *mut u8, DMA_CHUNK as u64) };
        }
        iommu
    }
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
        let vram = self.vram();
        let t = self
            .hub
            .translate_vmid_as(&vram, vmid, va, access, CID_CPC)
            .map_err(|r| match r {
                HubRefusal::InvalidBase { raw } => VmRefusal::InvalidBase { raw },
                HubRefusal::OutOfRange { start, end, .. } => VmRefusal::OutOfRange { start, end },
                HubRefusal::Fault(f) => VmRefusal::Walk(f.reason),
                _ => VmRefusal::ContextDisabled,
            })?;
        let (mem, at) = if t.system {
            (self.iommu(), Some(t.pa))
        } else {
            (vram, t.pa.checked_sub(self.space.fb_offset))
        };
        at.and_then(|a| mem.host_of(a, 1))
            .ok_or(VmRefusal::Unbacked { pa: t.pa })
    }

    fn generation(&self) -> u64 {
        let s = self.hub.invalidations();
        s.completed.iter().map(|&n| u64::from(n)).sum()
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
//   through it (the MC model reads it as VRAM);
// - `doorbells` is the boxed doorbell page, owned by this value, valid
//   for aligned 64-bit stores, at the bus address the MEC model uses;
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
        Aperture {
            host: NonNull::from(&*self.doorbells).cast(),
            len: core::mem::size_of::<DoorbellPage>(),
        }
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
        let mut f = self.firmwares.lock();
        let epoch = self.mec.epoch();
        if f.epoch != epoch {
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
                MesApiVersion::V11 => KiqModel::from_mes_pipe(self.mec.clone())
                    .or_else(|| KiqModel::from_mec(self.mec.clone())),
                MesApiVersion::V12 => KiqModel::from_mec(self.mec.clone()),
            };
        }
        if f.sched.is_none() {
            f.sched = MesModel::from_mec(self.mec.clone(), self.api).map(|m| {
                m.with_translator(self.translator())
                    .with_hub(self.gfxhub.clone())
                    .with_part(
                        self.mes_info
                            .part(self.gfxhub.clone(), self.soc.sdma.clone()),
                    )
            });
        }
        if f.pipe1.is_none() && self.api == MesApiVersion::V12 {
            f.pipe1 = MesModel::from_mec_pipe(self.mec.clone(), 1, self.api).map(|m| {
                m.with_part(
                    self.mes_info
                        .part(self.gfxhub.clone(), self.soc.sdma.clone()),
                )
            });
        }
        let epoch = self.mec.cp_resets();
        if self.fw_epoch.swap(epoch, Ordering::Relaxed) != epoch {
            // The CP was reset: the firmware stand-ins lost their rings
            // and state (and a hung one its hang).
            *f = Firmwares::default();
            self.mes_hung.store(false, Ordering::Relaxed);
            self.kiq_hung.store(false, Ordering::Relaxed);
        }
        let mut worked = 0;
        if self.schedulers_silent.load(Ordering::Relaxed) {
            drop(f);
            self.soc.sdma.service();
            let steps = self.mec.run_until_idle(CP_STEPS_PER_PAUSE);
            if steps.is_some_and(|n| n <= 2) {
                self.clock.advance(PAUSE_IDLE_NS);
            }
            return;
        }
        let (mes_hung, kiq_hung) = (
            self.mes_hung.load(Ordering::Relaxed),
            self.kiq_hung.load(Ordering::Relaxed),
        );
        if let Some(k) = f.kiq.as_ref().filter(|_| !kiq_hung) {
            worked += k.service();
        }
        if let Some(m) = f.pipe1.as_ref().filter(|_| !kiq_hung) {
            worked += m.service();
        }
        if let Some(m) = f.sched.as_ref().filter(|_| !mes_hung) {
            worked += m.service();
        }
        drop(f);
        worked += self.soc.sdma.service();
        // `run_until_idle` takes two steps to see an idle CP.
        let steps = self.mec.run_until_idle(CP_STEPS_PER_PAUSE);
        if worked == 0 && steps.is_some_and(|n| n <= 2) {
            self.clock.advance(PAUSE_IDLE_NS);
        }
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
        self.soc.pci.save();
        true
    }
    fn restore_pci_state(&self) -> bool {
        self.soc.pci.restore()
    }
}
