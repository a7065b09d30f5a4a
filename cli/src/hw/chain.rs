//! The bring-up steps over a real GPU's BARs, in Linux's order, calling
//! the same runtime functions as the model path (`crate::bringup`):
//!
//! - `discovery`: the IFWI wait and `RCC_CONFIG_MEMSIZE`, then the table
//!   at VRAM size − 64 KiB, copied through BAR0 when BAR0 reaches it and
//!   otherwise through `MM_INDEX`/`MM_DATA` (`runtime::discovery::
//!   read_from_vram`). Linux uses `MM_INDEX`/`MM_DATA` at this point
//!   (its VRAM aperture is mapped later, in `gmc_v11_0_mc_init()`); the
//!   BAR0 read is barebell's choice;
//! - `nbio`: `nbio::init` for the discovered NBIO 4.3.0 / NBIF 6.3.1,
//!   then one HDP flush through the remapped page (`soc21_common_hw_init()`);
//! - `gmc` (`gmc_v11_0_hw_init()` / `gmc_v12_0_hw_init()`): the FB
//!   location from `MMMC_VM_FB_LOCATION_BASE`
//!   (`mmhub_v3_0_get_fb_location()`, `mmhub_v4_1_0_get_fb_location()`),
//!   the GART placed as `amdgpu_gmc_gart_location()` places it (512 MiB;
//!   high on gfx11, low on gfx12), VMID0 tables in VRAM written through
//!   BAR0, the PSP's `fw_pri` (1 MiB), ring, command and fence buffers in
//!   GTT (the DMA region, bound with SYSTEM|SNOOPED PTEs before the hub
//!   is enabled), the TMR in VRAM, HDP flushes, MMHUB init
//!   (`hub::gart_enable`);
//! - `psp`: the firmware the discovered versions name, `psp::load_firmware`
//!   (with the MMHUB as the fault hub, so a fence timeout reports the
//!   latched VM fault);
//! - `rlc`: `Psp::wait_rlc_autoload`, then GFXHUB init on the same VMID0
//!   tables and an HDP flush (`gfx_v11_0_hw_init()` enables the GFXHUB
//!   after the autoload wait);
//! - with `--mapping` (and for `latency`): MES start (`mes_start::start`,
//!   start addresses from the MES blobs' headers), then [`super::rings`]:
//!   the KIQ and MES rings, one user queue mapped by the chosen mode and
//!   one AQL BARRIER_AND through it (not a dispatch: barebell has no
//!   code-object loader).
//!
//! The DMA region is two kinds of memory. Its first 2 MiB chunk is GTT:
//! the PSP's buffers, reached through GART PTEs as Linux reaches them.
//! The rest is the ring area, mapped by the `gmc` step at GPU VA = host
//! address into VMID0 (whose range grows from the GART to cover it) and
//! into a second set of tables for the user process, chunk by chunk with
//! each chunk's bus address. That is the layout KFD gives a user queue
//! (its ring at its CPU address in the process's GPU VM), and it lets the
//! runtime's ring, queue, MQD and signal types, which hand the device
//! their host addresses, live there unchanged. The ring area must miss
//! the FB (the system aperture) and the GART; `dma::DMA_VA` puts it where
//! it does, and the step refuses a layout where it does not.
//!
//! VRAM is laid out bottom-up by `VramAllocator` above a 16 MiB hole kept
//! for the VBIOS framebuffer (Linux reserves `stolen_vga_memory` there,
//! sized by `amdgpu_gmc_get_vbios_fb_size()`; barebell does not read that
//! size). `MMMC_VM_FB_OFFSET` (`get_mc_fb_offset()`) is taken as 0 (dGPUs; Linux reads it), so a
//! VRAM offset is its physical address.
//!
//! Not done, unlike Linux: no reset first. A GPU that amdgpu (or an
//! earlier run) already brought up still has sOS running and its rings
//! set up; the PSP step then sees `SosAlreadyAlive` and may fail at ring
//! creation. Linux resets on reload (`amdgpu_device_need_reset_on_init()`,
//! mode-1 reset through the PSP); barebell has no reset built.
//!
//! **Never run on a GPU.**

use super::Target;
use super::device::{self, Device, OpenError};
use super::firmware::{self, FirmwareSet};
use super::rings::{self, Area, Inputs, OnHardware, Ready, Service};
use crate::bringup::Step;
use crate::latency_target::MappingMode;
use barebell::bus::indirect::IndirectBus;
use barebell::bus::trace::{Access, Symbols, TraceBus};
use barebell::bus::{RegCondition, RegisterBus, WaitError, poll};
use barebell::discovery::IpInfo;
use barebell::discovery::{Discovery, TABLE_BYTES, TMR_OFFSET, boot, hw_id, read_from_vram};
use barebell::gfx::mes::HwBases;
use barebell::gmc::hub::{HubConfig, HubRegs, hub_for};
use barebell::gmc::pagetable::{Flags, Table, TableArena};
use barebell::ip::Generation;
use barebell::mem::{DmaArena, PAGE_ALIGN, VramAllocator, VramRange};
use barebell::nbio::{MMIO_REG_HOLE_OFFSET, Nbio, NbioError};
use barebell::psp::{self, DmaBuf, FaultHub, GcRegs, Image, Plan, Psp, PspBuffers, PspRegs, Tmr};
use barebell::regs::{IpBases, Reg};
use barebell::time::StdClock;
use barebell_firmware_if::Body;
use core::ptr::NonNull;
use std::fmt;
use std::path::Path;

/// What the hardware path stopped on.
#[derive(Debug)]
pub enum HwError {
    Open(OpenError),
    /// A step ran and failed.
    Step {
        step: &'static str,
        detail: String,
    },
    /// The step needs something barebell has not built for hardware.
    NotBuilt {
        step: &'static str,
        missing: String,
    },
}

impl fmt::Display for HwError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HwError::Open(e) => write!(f, "{e}"),
            HwError::Step { step, detail } => write!(f, "step {step}: {detail}"),
            HwError::NotBuilt { step, missing } => {
                write!(f, "step {step}: not built for hardware: {missing}")
            }
        }
    }
}

impl From<OpenError> for HwError {
    fn from(e: OpenError) -> Self {
        HwError::Open(e)
    }
}

fn step_err<E: fmt::Display>(step: &'static str) -> impl Fn(E) -> HwError {
    move |e| HwError::Step {
        step,
        detail: e.to_string(),
    }
}

/// What to run.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    pub until: Step,
    pub trace: bool,
    pub mapping: Option<MappingMode>,
    pub firmware_dir: &'a Path,
}

/// Kept back at the bottom of VRAM for the VBIOS framebuffer.
pub const VBIOS_FB_HOLE: u64 = 16 << 20;
/// `IFWI init` wait, as Linux's loop (1000 × ~1 ms).
const IFWI_TIMEOUT_NS: u64 = 1_000_000_000;
/// `PSP_TMR_SIZE` for everything but Aldebaran (amdgpu_psp.h; not compiled by the harness: the header needs the
/// whole driver).
const TMR_SIZE: u32 = 0x40_0000;
/// `MMMC_VM_FB_LOCATION_BASE__FB_BASE_MASK` (mmhub_3_0_0 and 4_1_0
/// sh_mask headers); the field holds MC address bits 24 and up.
const FB_BASE_MASK: u32 = 0x00FF_FFFF;

/// VRAM as seen through BAR0: bounds-checked pointers for CPU access.
struct Vram<'d> {
    p: &'d Platform<'d>,
}

impl Vram<'_> {
    /// The CPU pointer to VRAM offset `r.offset`, if BAR0 covers all of
    /// `r`.
    fn cpu(&self, r: &VramRange, step: &'static str) -> Result<NonNull<u8>, HwError> {
        let end = r.offset.saturating_add(r.size);
        if end > self.p.vram.len() as u64 {
            return Err(HwError::NotBuilt {
                step,
                missing: format!(
                    "VRAM {:#x}..{end:#x} lies beyond BAR0 ({:#x} bytes); CPU access to VRAM outside BAR0 (resizable BAR or MM_INDEX writes) is not built",
                    r.offset,
                    self.p.vram.len()
                ),
            });
        }
        let off = usize::try_from(r.offset).map_err(step_err(step))?;
        // SAFETY: `off + size <= BAR0 length`, checked above, so the
        // result stays inside the mapping.
        let p = unsafe { self.p.vram.as_ptr().add(off) };
        NonNull::new(p).ok_or(HwError::Step {
            step,
            detail: "BAR0 mapped at null".into(),
        })
    }
}

/// What the steps run over: the register aperture, VRAM as BAR0 maps
/// it, host memory the device can reach, and the doorbell BAR. A
/// [`Device`] provides one; tests build one over the model.
pub struct Platform<'p> {
    pub regs: &'p dyn RegisterBus,
    /// How many bytes of the register space `regs` maps directly (BAR5's
    /// length, Linux's `rmmio_size`); once the NBIO is known, the steps
    /// reach registers past it through the RSMU index/data pair.
    pub regs_len: usize,
    pub vram: &'p dyn Bar0,
    /// The DMA region: host pointer and length (whole 2 MiB chunks).
    pub dma: (NonNull<u8>, usize),
    /// Bus address of each 2 MiB chunk of the DMA region.
    pub dma_chunks: &'p [u64],
    /// BAR2's bus address (the NBIO doorbell aperture).
    pub doorbell_bus: u64,
    /// BAR2 as the host maps it: where doorbell stores go.
    pub doorbells: (NonNull<u8>, usize),
}

impl Device {
    /// The device as the steps see it.
    pub fn platform(&self) -> Result<Platform<'_>, HwError> {
        let null = |what: &str| HwError::Step {
            step: "open",
            detail: format!("{what} at null"),
        };
        let dma = NonNull::new(self.dma.as_ptr()).ok_or_else(|| null("DMA region"))?;
        let doorbells = NonNull::new(self.doorbells.as_ptr()).ok_or_else(|| null("BAR2"))?;
        Ok(Platform {
            regs: &self.regs,
            regs_len: self.regs.len(),
            vram: &self.vram,
            dma: (dma, self.dma.len()),
            dma_chunks: self.dma.chunks(),
            doorbell_bus: self.doorbell_bus,
            doorbells: (doorbells, self.doorbells.len()),
        })
    }
}

/// Opens `target` and runs the steps on it up to `o.until` (and the
/// mapping steps if asked, up to a mapped queue whose barrier completed).
///
/// The device is leaked, not dropped: once the rings exist, MES and the
/// CP keep the DMA region's addresses (rings, MQDs, process context) and
/// may read them until a reset, which barebell does not do; unmapping
/// the IOMMU range or freeing the hugepages under them would turn that
/// into faults or, without an IOMMU, DMA into reused memory. The process
/// exit closes the VFIO fds, which tears the IOMMU mapping down.
pub fn bring_up(target: Target, o: &Options<'_>) -> Result<Option<Ready>, HwError> {
    let dev: &'static Device = Box::leak(Box::new(device::open(target)?));
    println!(
        "opened {} through {}: AMD device {:04x}; BAR5 {:#x} bytes, BAR0 {:#x} bytes, doorbell BAR2 {:#x} bytes at bus {:#x}; DMA region {:#x} bytes at bus {:#x} (unverified on hardware)",
        dev.bdf,
        dev.how(),
        dev.device_id,
        dev.register_bar_len(),
        dev.vram.len(),
        dev.doorbells.len(),
        dev.doorbell_bus,
        dev.dma.len(),
        dev.dma.bus()
    );
    let p: &'static Platform<'static> = Box::leak(Box::new(dev.platform()?));
    run(p, o, &mut OnHardware)
}

/// The steps, on any platform. With a mapping, returns the mapped queue
/// after its first barrier completed.
pub fn run(
    p: &'static Platform<'static>,
    o: &Options<'_>,
    service: &mut dyn Service,
) -> Result<Option<Ready>, HwError> {
    let platform = p;
    let clock = StdClock::default();
    let trace = o.trace;
    let print = move |a: Access| {
        if trace {
            println!("  {a}");
        }
    };

    // discovery
    let boot_blocks = [(boot::ALL, IpBases::default())];
    let bus = TraceBus::new(
        p.regs,
        Symbols {
            blocks: &boot_blocks,
        },
        print,
    );
    let mut table = vec![0u8; TABLE_BYTES];
    let (pos, how) = read_table(p.vram, &bus, &clock, &mut table)?;
    let d = Discovery::parse(&table).map_err(step_err("discovery"))?;
    let vram_bytes = pos + TMR_OFFSET;
    println!(
        "step discovery: table read at VRAM {pos:#x} through {how} ({} MiB of VRAM)",
        vram_bytes >> 20
    );
    let ip = |id: u16, name: &'static str| {
        d.ip(id, 0).ok_or(HwError::Step {
            step: "discovery",
            detail: format!("no {name} in the discovery table"),
        })
    };
    let (mp0, mp1, gc, nbif) = (
        ip(hw_id::MP0, "MP0")?,
        ip(hw_id::MP1, "MP1")?,
        ip(hw_id::GC, "GC")?,
        ip(hw_id::NBIF, "NBIF")?,
    );
    println!(
        "step discovery: {} IP instances; GC {:?}; MP0 {:?}; MP1 {:?}; NBIF {:?}",
        d.ip_count(),
        gc.version.triple(),
        mp0.version.triple(),
        mp1.version.triple(),
        nbif.version.triple()
    );
    if o.until == Step::Discovery {
        return Ok(None);
    }

    // nbio
    let nbio =
        Nbio::for_version(nbif.version.triple(), nbif.bases).map_err(|e| HwError::NotBuilt {
            step: "nbio",
            missing: e.to_string(),
        })?;
    // From here on, registers past BAR5 go through the NBIO's index/data
    // pair, as amdgpu_device_rreg() sends them to pcie_rreg.
    let indirect: &'static IndirectBus<&'static dyn RegisterBus> = Box::leak(Box::new(
        IndirectBus::new(p.regs, p.regs_len, nbio.regs.rsmu_pair(), &nbif.bases)
            .map_err(step_err("nbio"))?,
    ));
    let p: &'static Platform<'static> = Box::leak(Box::new(Platform {
        regs: indirect,
        ..*p
    }));
    let nbio_blocks: Vec<(&'static [Reg], IpBases)> =
        nbio.regs.symbols.iter().map(|r| (*r, nbif.bases)).collect();
    let nbio_bus = TraceBus::new(
        p.regs,
        Symbols {
            blocks: &nbio_blocks,
        },
        print,
    );
    barebell::nbio::init(&nbio_bus, &nbio, p.doorbell_bus).map_err(step_err("nbio"))?;
    flush_hdp(&nbio_bus, &nbio).map_err(step_err("nbio"))?;
    println!(
        "step nbio: {} init; HDP flush remapped to BAR5 + {:#x} and used once; doorbell aperture open; self-ring at {:#x}",
        nbio.regs.ip, MMIO_REG_HOLE_OFFSET, p.doorbell_bus
    );
    if o.until == Step::Nbio {
        return Ok(None);
    }

    // gmc: MMHUB, as gmc_v11_0/v12_0_hw_init() do; GFXHUB waits for the
    // gfx block's hw_init, after the RLC autoload.
    let mmhub_ip = ip(hw_id::MMHUB, "MMHUB")?;
    let g = gc.version.triple();
    let mmhub_regs = hub_for(hw_id::MMHUB, mmhub_ip.version.triple());
    let gfxhub = hub_for(hw_id::GC, g).ok_or_else(|| HwError::NotBuilt {
        step: "gmc",
        missing: format!("GFXHUB init for GC {g:?}"),
    })?;
    let mut blocks = crate::bringup::symbol_blocks(&[&mp0, &gc]);
    blocks.push((mmhub_regs.map(|h| h.all).unwrap_or(&[]), mmhub_ip.bases));
    blocks.extend(nbio_blocks.iter().copied());
    let bus = TraceBus::new(p.regs, Symbols { blocks: &blocks }, print);
    let mut m = gmc(p, &bus, &clock, &nbio, &mmhub_ip, vram_bytes)?;
    println!(
        "step gmc: FB at MC {:#x}..={:#x}; {} enabled, VMID0 {:#x}..={:#x} (GART from {:#x}; ring area at VA = host {:#x}, {:#x} bytes, also in the process tables at VRAM {:#x}) with tables at VRAM {:#x}; PSP buffers in GTT at bus {:#x}, TMR at VRAM {:#x}",
        m.cfg.fb_start,
        m.cfg.fb_end,
        m.mmhub.name,
        m.cfg.start,
        m.cfg.end,
        m.gart_start,
        m.rings.0.as_ptr() as u64,
        m.rings.1,
        m.process.root(),
        m.cfg.pt_base,
        p.dma_chunks.first().copied().unwrap_or(0),
        m.tmr.phys_addr
    );
    if o.until == Step::Gmc {
        return Ok(None);
    }

    // psp
    let set = firmware::for_versions(
        mp0.version.triple(),
        mp1.version.triple(),
        g,
        d.ip(hw_id::SDMA0, 0).map(|s| s.version.triple()),
    )
    .map_err(|missing| HwError::NotBuilt {
        step: "psp",
        missing,
    })?;
    let (regs, plan, gc_regs) = psp_tables(mp0.version.triple(), g)?;
    let bufs = m.bufs.take().ok_or(HwError::Step {
        step: "psp",
        detail: "buffers already taken".into(),
    })?;
    let mut p = Psp::new(&bus, &clock, regs, &mp0.bases, bufs)
        .map_err(step_err("psp"))?
        .with_fault_hub(FaultHub {
            bus: &bus,
            bases: m.mmhub_bases,
            regs: m.mmhub,
        });
    let report = load(&mut p, plan, &set, o.firmware_dir, m.tmr)?;
    println!(
        "step psp: {} bootloader components, TMR {:#x} bytes asked by the TOC, {} LOAD_IP_FW, AUTOLOAD_RLC sent",
        report.components, report.tmr_size, report.ip_fw_loads
    );
    if o.until == Step::Psp {
        return Ok(None);
    }

    // rlc, then GFXHUB (gfx_v11_0_hw_init(): RLC autoload wait, then
    // gfx_v11_0_gfxhub_enable(): GFXHUB init, HDP flush)
    p.wait_rlc_autoload(gc_regs, &gc.bases)
        .map_err(step_err("rlc"))?;
    println!("step rlc: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle");
    barebell::gmc::hub::gart_enable(&bus, &gc.bases, gfxhub, &m.cfg).map_err(step_err("gfxhub"))?;
    flush_hdp(&bus, &nbio).map_err(step_err("gfxhub"))?;
    // gfx_v11_0_gfxhub_enable() / gfx_v12_0_gfxhub_enable(): VMID0's TLB
    // flush on the GFXHUB after the HDP flush.
    barebell::gmc::hub::invalidate(
        &bus,
        &clock,
        &gc.bases,
        gfxhub,
        barebell::gmc::hub::GART_ENGINE,
        0,
        0,
    )
    .map_err(step_err("gfxhub"))?;
    println!(
        "step gfxhub: {} enabled with the same VMID0 tables, VMID0 flushed",
        gfxhub.name
    );
    let Some(mode) = o.mapping else {
        return Ok(None);
    };

    // mes
    let generation = gfxhub.generation;
    let start = mes_start(&set, o.firmware_dir)?;
    let versions = barebell::gfx::mes::start::start(&bus, &clock, &gc.bases, generation, &start)
        .map_err(step_err("mes"))?;
    println!(
        "step mes: MES pipes unhalted; scheduler firmware {:#x}, API {}",
        versions.firmware(),
        versions.api()
    );
    let bases5 = |b: IpBases| {
        let mut o = [0u32; 5];
        o.copy_from_slice(b.0.get(..5).unwrap_or(&[0; 5]));
        o
    };
    let osssys = ip(hw_id::OSSSYS, "OSSSYS")?;
    let Memory {
        process, rings: r, ..
    } = m;
    // SAFETY: the ring area is the DMA region past its first chunk, which
    // the platform keeps mapped for the process ('static) and which only
    // the rings step uses from here on.
    let area = unsafe { Area::new(r.0, r.1) };
    let ready = rings::run(
        Inputs {
            platform,
            gc_bases: gc.bases,
            generation,
            versions,
            hw_bases: HwBases {
                gc: bases5(gc.bases),
                mmhub: bases5(mmhub_ip.bases),
                osssys: bases5(osssys.bases),
            },
            gfxhub,
            process_root: process.root(),
            area,
            service,
        },
        mode,
    )?;
    println!(
        "queue ready: {} mapping, doorbell {:#x}, barrier {} completed (signal 1 -> 0; an AQL BARRIER_AND with no dependencies, not a dispatch; unverified on hardware)",
        mode.name(),
        ready.doorbell,
        ready.packet_id
    );
    Ok(Some(ready))
}

fn flush_hdp<B: RegisterBus + ?Sized>(bus: &B, nbio: &Nbio) -> Result<(), NbioError> {
    barebell::nbio::flush_hdp(bus, nbio, MMIO_REG_HOLE_OFFSET)
}

/// VRAM as far as BAR0 maps it: what the discovery read needs, so that
/// tests can stand a buffer in for the BAR.
pub trait Bar0 {
    fn len(&self) -> usize;
    /// The mapping's first byte, for CPU writes (page tables).
    fn as_ptr(&self) -> *mut u8;
    /// One 32-bit read; all-ones outside.
    fn read32(&self, offset: usize) -> u32;
}

impl Bar0 for barebell_pcie::sysfs::BarMapping {
    fn len(&self) -> usize {
        barebell_pcie::sysfs::BarMapping::len(self)
    }
    fn as_ptr(&self) -> *mut u8 {
        barebell_pcie::sysfs::BarMapping::as_ptr(self)
    }
    fn read32(&self, offset: usize) -> u32 {
        barebell_pcie::sysfs::BarMapping::read32(self, offset)
    }
}

/// The IFWI wait and VRAM size as `read_from_vram` does them, then the
/// table through BAR0 if it reaches, else through `read_from_vram`.
fn read_table<B: RegisterBus + ?Sized, C: barebell::time::Clock + ?Sized>(
    bar0: &dyn Bar0,
    bus: &B,
    clock: &C,
    out: &mut [u8],
) -> Result<(u64, &'static str), HwError> {
    let at = |r: Reg| r.offset as usize * 4;
    let ready = RegCondition {
        what: boot::MP0_SMN_C2PMSG_33.name,
        byte_offset: at(boot::MP0_SMN_C2PMSG_33),
        mask: 0x8000_0000,
        want: 0x8000_0000,
    };
    if let Err(e @ WaitError::DeviceGone { .. }) = poll(bus, clock, ready, IFWI_TIMEOUT_NS) {
        return Err(step_err("discovery")(e));
    }
    let mib = bus.read32(at(boot::RCC_CONFIG_MEMSIZE));
    let pos = (u64::from(mib) << 20).checked_sub(TMR_OFFSET);
    match pos {
        Some(pos)
            if mib != barebell::bus::ALL_ONES && pos + TABLE_BYTES as u64 <= bar0.len() as u64 =>
        {
            for (i, chunk) in out.chunks_exact_mut(4).take(TABLE_BYTES / 4).enumerate() {
                let off = usize::try_from(pos).map_err(step_err("discovery"))? + 4 * i;
                chunk.copy_from_slice(&bar0.read32(off).to_le_bytes());
            }
            Ok((pos, "BAR0"))
        }
        _ => {
            let pos = read_from_vram(bus, clock, IFWI_TIMEOUT_NS, out)
                .map_err(|e| step_err("discovery")(format!("{e:?}")))?;
            Ok((pos, "MM_INDEX/MM_DATA"))
        }
    }
}

/// Linux's GART size (`amdgpu_gart_size` -1: 512 MiB, `gmc_v11_0_mc_init()`).
pub const GART_BYTES: u64 = 512 << 20;
/// `AMDGPU_GMC_HOLE_START` (amdgpu_gmc.h): MC addresses stop below it.
const GMC_HOLE_START: u64 = 0x0000_8000_0000_0000;
/// VMID0 tables: a root, and per mapped range (the GART's GTT buffers,
/// the ring area at its host address) a PDB1, a PDB0 and the PTBs
/// covering a few MiB.
const GART_TABLES: usize = 16;
/// The process page tables: a root, PDB1, PDB0 and the ring area's PTBs.
const PROCESS_TABLES: usize = 8;
/// The DMA region's chunk size; chunk 0 is GTT for the PSP, the rest is
/// the ring area.
const CHUNK: usize = super::dma::HUGE;
/// GART addresses of the GTT buffers, as offsets from the GART start
/// (barebell's choice; Linux's TTM picks them).
const FW_PRI_OFF: u64 = 0;
const RING_OFF: u64 = 1 << 20;
const CMD_OFF: u64 = RING_OFF + 4096;
const FENCE_OFF: u64 = CMD_OFF + 4096;
/// `PSP_1_MEG`: Linux's `fw_pri` buffer size.
const FW_PRI_BYTES: usize = 1 << 20;

/// Where the GART goes, as `amdgpu_gmc_gart_location()` decides it:
/// gfx11 (`gmc_v11_0_vram_gtt_location()`) places it high, gfx12 low.
pub fn gart_location(high: bool, fb_start: u64, fb_end: u64, size: u64) -> (u64, u64) {
    const FOUR_GB: u64 = 1 << 32;
    let max = GMC_HOLE_START - 1;
    let below = fb_start;
    let above = (max + 1).saturating_sub((fb_end + 1).next_multiple_of(FOUR_GB));
    let size = size.min(below.max(above));
    let start = if high {
        max - size + 1
    } else if below >= size {
        0
    } else {
        fb_end.next_multiple_of(FOUR_GB)
    };
    let start = start & !(FOUR_GB - 1);
    (start, start + size - 1)
}

/// What the `gmc` step leaves for the later ones.
struct Memory<'a> {
    gart: TableArena<'a>,
    /// The GART's first byte (VMID0's range starts lower when the ring
    /// area lies below it).
    gart_start: u64,
    /// The user process's page tables: the ring area at VA = host
    /// address, nothing else.
    process: TableArena<'a>,
    /// The ring area: host pointer and length.
    rings: (NonNull<u8>, usize),
    cfg: HubConfig,
    mmhub: &'static HubRegs,
    mmhub_bases: IpBases,
    gtt: DmaArena<'a>,
    bufs: Option<PspBuffers>,
    tmr: Tmr,
}

/// The `gmc` step (`gmc_v11_0_hw_init()` / `gmc_v12_0_hw_init()`): FB
/// location from the MMHUB (`mmhub_v3_0_get_fb_location()`,
/// `mmhub_v4_1_0_get_fb_location()`), VMID0 tables in VRAM written
/// through BAR0, MMHUB init (`*_gart_enable()`), an HDP flush, VMID0's
/// TLB flush on engine 17.
fn gmc<'d, B: RegisterBus + ?Sized, C: barebell::time::Clock + ?Sized>(
    p: &'d Platform<'d>,
    bus: &B,
    clock: &C,
    nbio: &Nbio,
    mmhub_ip: &IpInfo,
    vram_bytes: u64,
) -> Result<Memory<'d>, HwError> {
    let v = mmhub_ip.version.triple();
    let mmhub = hub_for(hw_id::MMHUB, v).ok_or_else(|| HwError::NotBuilt {
        step: "gmc",
        missing: format!("MMHUB {v:?} init (MMHUB 3.0.0 and 4.1.0 are built)"),
    })?;
    let (fb_reg, format, high) = match mmhub.generation {
        Generation::Gfx11 => (
            barebell::regs::mmhub_3_0_0::MMMC_VM_FB_LOCATION_BASE,
            Generation::Gfx11,
            true,
        ),
        Generation::Gfx12 => (
            barebell::regs::mmhub_4_1_0::MMMC_VM_FB_LOCATION_BASE,
            Generation::Gfx12,
            false,
        ),
    };
    let at = fb_reg.byte_offset(&mmhub_ip.bases).ok_or(HwError::Step {
        step: "gmc",
        detail: format!("{} is outside the MMHUB bases", fb_reg.name),
    })?;
    let base = bus.read32(at);
    if base == barebell::bus::ALL_ONES {
        return Err(step_err("gmc")(format!(
            "{} reads all-ones: device gone",
            fb_reg.name
        )));
    }
    let fb_start = u64::from(base & FB_BASE_MASK) << 24;
    let fb_end = fb_start + vram_bytes - 1;
    let (gart_start, gart_end) = gart_location(high, fb_start, fb_end, GART_BYTES);

    let mut vram =
        VramAllocator::with_boot_region(vram_bytes, fb_start).map_err(step_err("gmc"))?;
    vram.alloc(VBIOS_FB_HOLE, PAGE_ALIGN)
        .map_err(step_err("gmc"))?;
    let tables_at = vram
        .alloc(GART_TABLES as u64 * 4096, PAGE_ALIGN)
        .map_err(step_err("gmc"))?;
    let scratch = vram.alloc(4096, PAGE_ALIGN).map_err(step_err("gmc"))?;
    let process_at = vram
        .alloc(PROCESS_TABLES as u64 * 4096, PAGE_ALIGN)
        .map_err(step_err("gmc"))?;
    let process_cpu = Vram { p }.cpu(&process_at, "gmc")?;
    let cpu = Vram { p }.cpu(&tables_at, "gmc")?;
    // SAFETY: GART_TABLES pages of VRAM inside BAR0 (checked by `cpu`),
    // handed out once by the allocator, so nothing else aliases them;
    // `Table` is plain u64s and the pointer is page aligned. The GPU reads
    // them only after the hub init below, and the platform (and with it
    // the BAR0 mapping) outlives the returned arena.
    let tables: &'d mut [Table] =
        unsafe { core::slice::from_raw_parts_mut(cpu.as_ptr().cast::<Table>(), GART_TABLES) };
    tables.fill(Table::EMPTY);
    // PDEs and the root hold VRAM physical addresses (Linux converts them
    // with `amdgpu_gmc_vram_mc2pa()`): offset + FB_OFFSET, FB_OFFSET = 0.
    let mut gart = TableArena::new(tables, tables_at.offset, format);
    // SAFETY: as for the VMID0 tables: PROCESS_TABLES pages of VRAM
    // inside BAR0, handed out once, page aligned, outliving the arena.
    let ptables: &'d mut [Table] = unsafe {
        core::slice::from_raw_parts_mut(process_cpu.as_ptr().cast::<Table>(), PROCESS_TABLES)
    };
    let mut process = TableArena::new(ptables, process_at.offset, format);

    // GTT: the DMA region's first chunk, seen by the GPU at its bus
    // address through the GART.
    let (dma, len) = p.dma;
    let (Some(&gtt_bus), true) = (p.dma_chunks.first(), len > CHUNK) else {
        return Err(HwError::NotBuilt {
            step: "gmc",
            missing: format!(
                "a DMA region of more than one {CHUNK:#x}-byte chunk (GTT, then the ring area); this one has {len:#x} bytes"
            ),
        });
    };
    // SAFETY: the platform's DMA region is `len` bytes of host memory
    // that outlives the platform and that nothing else in this process
    // touches while the steps run; chunk 0 goes to the arena, the rest
    // to the ring area, so the two never overlap.
    let host = unsafe { core::slice::from_raw_parts_mut(dma.as_ptr(), CHUNK) };
    let gtt = DmaArena::new(host, gtt_bus).map_err(step_err("gmc"))?;
    // SAFETY: `len > CHUNK`, so the ring area starts inside the region.
    let rings_at = unsafe { dma.add(CHUNK) };
    let rings = (rings_at, len - CHUNK);
    let (ring_va, ring_end) = ring_range(rings, (fb_start, fb_end), (gart_start, gart_end))?;
    // The ring area at VA = host address, chunk by chunk (each chunk is
    // contiguous on the bus, the chunks need not be), in VMID0 and in
    // the process tables.
    let ring_flags = Flags {
        readable: true,
        writeable: true,
        executable: false,
        system: true,
        snooped: true,
    };
    for (k, bus) in p.dma_chunks.iter().enumerate().skip(1) {
        let va = ring_va + ((k - 1) * CHUNK) as u64;
        if va > ring_end {
            break;
        }
        for (name, t) in [("VMID0", &mut gart), ("process", &mut process)] {
            t.map(va, *bus, CHUNK as u64, ring_flags, false)
                .map_err(|e| step_err("gmc")(format!("{name} map of {va:#x}: {e:?}")))?;
        }
    }
    let cfg = HubConfig {
        pt_base: gart.root(),
        // VMID0 covers both the GART and the ring area.
        start: gart_start.min(ring_va),
        end: gart_end.max(ring_end),
        fb_start,
        fb_end,
        // Empty (start > end): AGP stays off (`amdgpu_agp` defaults to
        // off for these parts' `amdgpu_gmc_agp_location()` callers).
        agp_start: u64::MAX >> 16,
        agp_end: 0,
        default_page: scratch.offset,
        // Set below, once the GTT buffers are placed.
        dummy_page: 0,
    };
    // The TMR: VRAM, `PSP_TMR_ALIGNMENT` aligned, `PSP_TMR_SIZE` bytes
    // (Linux sizes it from the TOC; `load_firmware` refuses a TOC that
    // asks for more).
    let tmr_at = vram
        .alloc(u64::from(TMR_SIZE), psp::TMR_ALIGN)
        .map_err(step_err("gmc"))?;
    let tmr = Tmr {
        mc_addr: tmr_at.mc,
        capacity: TMR_SIZE,
        phys_addr: tmr_at.offset,
    };
    let mut m = Memory {
        gart,
        gart_start,
        process,
        rings,
        cfg,
        mmhub,
        mmhub_bases: mmhub_ip.bases,
        gtt,
        bufs: None,
        tmr,
    };
    // The GTT buffers are bound before the hub is enabled; the VMID0
    // flush after `gart_enable` covers them.
    m.bufs = Some(psp_buffers(&mut m)?);
    // `adev->dummy_page_addr`: a page of its own, since the hub may
    // redirect faulting writes there.
    let dummy = m.gtt.alloc(4096, PAGE_ALIGN).map_err(step_err("gmc"))?;
    m.cfg.dummy_page = dummy.bus_addr();
    // The table stores through BAR0 are plain stores; keep the compiler
    // (and the CPU) from moving them past the flush and the hub writes.
    core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    flush_hdp(bus, nbio).map_err(step_err("gmc"))?;
    barebell::gmc::hub::gart_enable(bus, &mmhub_ip.bases, mmhub, &m.cfg)
        .map_err(step_err("gmc"))?;
    flush_hdp(bus, nbio).map_err(step_err("gmc"))?;
    // gmc_v11_0_gart_enable() / gmc_v12_0_gart_enable(): HDP flush (just
    // done), then VMID0's TLB flush on the MMHUB's GART engine.
    barebell::gmc::hub::invalidate(
        bus,
        clock,
        &mmhub_ip.bases,
        mmhub,
        barebell::gmc::hub::GART_ENGINE,
        0,
        0,
    )
    .map_err(step_err("gmc"))?;
    Ok(m)
}

/// The ring area's first and last GPU VA (= host address), refused if it
/// falls in the FB (the system aperture, where VMID0 does not
/// translate), in the GART, or at or above the MC hole.
fn ring_range(
    rings: (NonNull<u8>, usize),
    fb: (u64, u64),
    gart: (u64, u64),
) -> Result<(u64, u64), HwError> {
    let start = rings.0.as_ptr() as u64;
    let end = start + rings.1 as u64 - 1;
    let overlaps = |(a, b): (u64, u64)| start <= b && a <= end;
    let clash = if overlaps(fb) {
        Some(("the FB (system aperture)", fb))
    } else if overlaps(gart) {
        Some(("the GART", gart))
    } else if end >= GMC_HOLE_START {
        Some(("the MC hole", (GMC_HOLE_START, u64::MAX)))
    } else {
        None
    };
    match clash {
        Some((what, (a, b))) => Err(HwError::Step {
            step: "gmc",
            detail: format!(
                "the ring area at host {start:#x}..={end:#x} overlaps {what} at {a:#x}..={b:#x}, so it cannot sit at VA = host address"
            ),
        }),
        None => Ok((start, end)),
    }
}

/// Maps `len` bytes of GTT at GART offset `off` (4 KiB PTEs with SYSTEM
/// and SNOOPED, as `amdgpu_ttm_tt_pte_flags()` gives cached GTT) and
/// returns the PSP's view of it.
fn gtt_buf(m: &mut Memory<'_>, off: u64, len: usize, align: u64) -> Result<DmaBuf, HwError> {
    let mut chunk = m.gtt.alloc(len, align).map_err(step_err("psp"))?;
    let va = m.gart_start + off;
    let flags = Flags {
        readable: true,
        writeable: true,
        executable: false,
        system: true,
        snooped: true,
    };
    m.gart
        .map(va, chunk.bus_addr(), len as u64, flags, false)
        .map_err(|e| step_err("psp")(format!("GART map {va:#x}: {e:?}")))?;
    let p = NonNull::new(chunk.as_mut_ptr()).ok_or(HwError::Step {
        step: "psp",
        detail: "null GTT chunk".into(),
    })?;
    // SAFETY: the chunk is `len` bytes of the locked DMA region, handed
    // out once by the arena and used by the host only through this
    // DmaBuf; the device reaches it at `va` through the GART.
    Ok(unsafe { DmaBuf::new(p, len, va) })
}

fn psp_tables(mp0: (u8, u8, u8), gc: (u8, u8, u8)) -> Result<(PspRegs, Plan, GcRegs), HwError> {
    let nb = |missing: String| HwError::NotBuilt {
        step: "psp",
        missing,
    };
    Ok((
        PspRegs::for_version(mp0).ok_or_else(|| nb(format!("PSP registers for MP0 {mp0:?}")))?,
        Plan::for_version(mp0).ok_or_else(|| nb(format!("a PSP plan for MP0 {mp0:?}")))?,
        GcRegs::for_version(gc).ok_or_else(|| nb(format!("RLC registers for GC {gc:?}")))?,
    ))
}

/// The PSP buffers in GTT as Linux's `psp_sw_init()` sizes `fw_pri`
/// (`PSP_1_MEG`, 1 MiB aligned), with the ring, command and fence pages
/// (Linux asks for VRAM or GTT for these; barebell uses GTT).
fn psp_buffers(m: &mut Memory<'_>) -> Result<PspBuffers, HwError> {
    Ok(PspBuffers {
        fw_pri: gtt_buf(m, FW_PRI_OFF, FW_PRI_BYTES, psp::BOOTLOADER_ALIGN)?,
        ring: gtt_buf(m, RING_OFF, psp::RING_BYTES, PAGE_ALIGN)?,
        cmd: gtt_buf(m, CMD_OFF, 4096, PAGE_ALIGN)?,
        fence: gtt_buf(m, FENCE_OFF, 4096, PAGE_ALIGN)?,
    })
}

/// Loads the set's blobs and runs `psp::load_firmware`.
fn load<B: RegisterBus + ?Sized>(
    p: &mut Psp<'_, B, StdClock>,
    plan: Plan,
    set: &FirmwareSet,
    dir: &Path,
    tmr: Tmr,
) -> Result<psp::LoadReport, HwError> {
    let fw = |name: &str| firmware::load(dir, name).map_err(step_err("psp"));
    let sos = fw(&set.sos)?;
    let smu_fw = fw(&set.smu)?;
    let smu = smu_fw
        .section("ucode")
        .map(|s| smu_fw.bytes(s))
        .ok_or_else(|| step_err("psp")(format!("{}: no ucode section", set.smu)))?;
    let blobs = set
        .gfx
        .iter()
        .map(|n| fw(n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut images = vec![
        Image {
            fw_type: 0,
            bytes: &[]
        };
        64
    ];
    let n = psp::gfx_images(&blobs, &mut images).map_err(step_err("psp"))?;
    let gfx = images.get(..n).unwrap_or(&[]);
    psp::load_firmware(p, plan, &sos, Some(smu), gfx, Some(tmr)).map_err(step_err("psp"))
}

/// Pipe start addresses from the MES blobs' headers (what Linux keeps in
/// `adev->mes.uc_start_addr[pipe]`).
fn mes_start(
    set: &FirmwareSet,
    dir: &Path,
) -> Result<barebell::gfx::mes::start::MesStart, HwError> {
    let mut uc = [0u64; 2];
    for (slot, name) in uc.iter_mut().zip(&set.mes) {
        let f = firmware::load(dir, name).map_err(step_err("mes"))?;
        match f.body {
            Body::Mes(m) => *slot = m.uc_start_addr(),
            _ => return Err(step_err("mes")(format!("{name}: not a MES v1.0 header"))),
        }
    }
    // One blob (uni-MES, gfx12): both pipes run it from the same start
    // address (`amdgpu_mes_init_microcode()` loads the uni_mes file for
    // each pipe; `mes_v12_0_enable()` starts both).
    if set.mes.len() == 1 {
        uc[1] = uc[0];
    }
    Ok(barebell::gfx::mes::start::MesStart {
        uc_start: uc,
        kiq_pipe: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use barebell_model::SimClock;
    use barebell_model::discovery::{NAVI31, NAVI48, VramWindow, build};

    /// A BAR0 of `len` bytes over VRAM holding `table` where discovery
    /// puts it on a board of `mib` MiB.
    struct Buffer(Vec<u8>);
    impl Bar0 for Buffer {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn as_ptr(&self) -> *mut u8 {
            self.0.as_ptr().cast_mut()
        }
        fn read32(&self, offset: usize) -> u32 {
            self.0
                .get(offset..offset + 4)
                .map_or(u32::MAX, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
    }

    /// The hardware path's discovery read against the model's register
    /// window (IFWI flag, memory size, MM_INDEX/MM_DATA) and a buffer
    /// standing in for BAR0: through BAR0 when the BAR reaches the table,
    /// else through the window; both must return the bytes the model
    /// synthesised from its part description.
    #[test]
    fn discovery_reads_the_model_table_through_bar0_or_mm_index() {
        for desc in [NAVI31, NAVI48] {
            let (table, _) = build(&desc);
            let clock = SimClock::new();
            let mib = 64u32;
            let pos = (u64::from(mib) << 20) - TMR_OFFSET;
            let window = VramWindow::new(&clock, mib, table.clone());
            let mut vram = vec![0u8; (mib as usize) << 20];
            vram[pos as usize..pos as usize + table.len()].copy_from_slice(&table);
            let mut out = vec![0u8; TABLE_BYTES];
            let (at, how) = read_table(&Buffer(vram), &window, &clock, &mut out).unwrap();
            assert_eq!((at, how), (pos, "BAR0"), "{}", desc.name);
            assert_eq!(&out[..table.len()], &table[..], "{}", desc.name);

            let mut out = vec![0u8; TABLE_BYTES];
            let small = Buffer(vec![0u8; 256 << 10]);
            let (at, how) = read_table(&small, &window, &clock, &mut out).unwrap();
            assert_eq!((at, how), (pos, "MM_INDEX/MM_DATA"), "{}", desc.name);
            assert_eq!(&out[..table.len()], &table[..], "{}", desc.name);
            Discovery::parse(&out).unwrap();
        }
    }

    /// `amdgpu_gmc_gart_location()` worked by hand for a 24 GiB board at
    /// MC 0x80_0000_0000: HIGH puts the 512 MiB GART at the top of the
    /// 47-bit MC space rounded down to 4 GiB; LOW puts it at 0 since it
    /// fits below the FB.
    #[test]
    fn gart_lands_where_linux_puts_it() {
        let fb = 0x80_0000_0000u64;
        let end = fb + (24u64 << 30) - 1;
        assert_eq!(
            gart_location(true, fb, end, GART_BYTES),
            (0x7FFF_0000_0000, 0x7FFF_1FFF_FFFF)
        );
        assert_eq!(gart_location(false, fb, end, GART_BYTES), (0, 0x1FFF_FFFF));
        // LOW with no room below the FB: after it, 4 GiB aligned.
        assert_eq!(
            gart_location(false, 0x1000_0000, 0x1000_0000 + (1 << 30) - 1, GART_BYTES),
            (0x1_0000_0000, 0x1_1FFF_FFFF)
        );
    }
}
