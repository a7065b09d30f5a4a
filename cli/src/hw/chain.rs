//! The bring-up steps over a real GPU's BARs, in Linux's order, calling
//! the same runtime functions as the model path (`crate::bringup`):
//!
//! - `discovery`: the IFWI wait and `RCC_CONFIG_MEMSIZE`, then the table
//!   at VRAM size − 64 KiB, copied through BAR0 when BAR0 reaches it and
//!   otherwise through `MM_INDEX`/`MM_DATA` (`runtime::discovery::
//!   read_from_vram`). Linux uses `MM_INDEX`/`MM_DATA` at this point
//!   (its VRAM aperture is mapped later, in `gmc_v11_0_mc_init()`); the
//!   BAR0 read is barebell's choice;
//! - `nbio`: `nbio::init` for the discovered NBIO/NBIF version, then one
//!   HDP flush through the remapped page;
//! - `gmc`: the FB location from `GCMC_VM_FB_LOCATION_BASE`
//!   (`gfxhub_v3_0_get_fb_location()`; Linux reads the MMHUB copy, which
//!   the VBIOS programs to the same value — unconfirmed), VMID0 tables in
//!   VRAM written through BAR0, an HDP flush, GFXHUB init
//!   (`gfxhub_v3_0_gart_enable()`). GC 11.0.0 only;
//! - `psp`: buffers in VRAM through BAR0 (Linux puts ring, command and
//!   fence buffers in VRAM and the TMR in VRAM; its `fw_pri` buffer is in
//!   GTT unless `debug_use_vram_fw_buf`, barebell uses VRAM because GART
//!   through MMHUB is not built), the firmware the discovered versions
//!   name, `psp::load_firmware`; every register write is preceded by an
//!   HDP flush so the PSP sees what the CPU wrote to VRAM (Linux flushes
//!   before each ring submission);
//! - `rlc`: `Psp::wait_rlc_autoload`;
//! - with `--mapping`: MES start (`mes_start::start`, start addresses from
//!   the MES blobs' headers), then the rings, which stop with
//!   [`HwError::NotBuilt`]: see [`RINGS_MISSING`].
//!
//! VRAM is laid out bottom-up by `VramAllocator` above a 16 MiB hole kept
//! for the VBIOS framebuffer (Linux reserves `stolen_vga_memory` there,
//! sized by `amdgpu_gmc_get_vbios_fb_size()`; barebell does not read that
//! size). `GCMC_VM_FB_OFFSET` is taken as 0 (dGPUs; Linux reads it), so a
//! VRAM offset is its physical address.
//!
//! **Never run on a GPU.**

use super::Target;
use super::device::{self, Device, OpenError};
use super::firmware::{self, FirmwareSet};
use crate::bringup::Step;
use crate::latency_target::MappingMode;
use barebell::bus::{RegCondition, RegisterBus, WaitError, poll};
use barebell::discovery::{Discovery, TABLE_BYTES, TMR_OFFSET, boot, hw_id, read_from_vram};
use barebell::mem::{VramAllocator, VramRange};
use barebell::psp::{self, DmaBuf, GcRegs, Image, Plan, Psp, PspBuffers, PspRegs, Tmr};
use barebell::regs::trace::{Access, Symbols, TraceBus};
use barebell::regs::{IpBases, Reg, gc_11_0_0};
use barebell::time::StdClock;
use barebell_firmware_if::Body;
use core::ptr::NonNull;
use std::fmt;
use std::path::Path;

/// The piece the rings step lacks on hardware.
pub const RINGS_MISSING: &str = "GPU-visible memory for the KIQ and MES rings, MQDs and the user queue: \
the runtime hands the device host addresses, which a GPU reaches only through VMID0/process page tables \
(or the AGP aperture) pointing at the DMA region, and MMHUB/GART mapping of host memory is not built";

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
/// `PSP_TMR_SIZE` for everything but Aldebaran, and `PSP_TMR_ALIGNMENT`
/// (amdgpu_psp.h; not compiled by the harness: the header needs the
/// whole driver).
const TMR_SIZE: u32 = 0x40_0000;
const TMR_ALIGN: u64 = 0x10_0000;
/// `GCMC_VM_FB_LOCATION_BASE__FB_BASE_MASK`; the field holds bits 24+.
const FB_BASE_MASK: u32 = 0x00FF_FFFF;

/// The NBIO/NBIF instance the `nbio` step programs, and the HDP flush
/// through its remapped page. Only NBIO 4.3.0 has a runtime module.
#[derive(Debug, Clone, Copy)]
struct NbioIp {
    bases: IpBases,
}

impl NbioIp {
    fn for_version(v: (u8, u8, u8), bases: IpBases) -> Result<Self, HwError> {
        if v == (4, 3, 0) {
            Ok(NbioIp { bases })
        } else {
            Err(HwError::NotBuilt {
                step: "nbio",
                missing: format!("NBIF {v:?} init (only NBIO 4.3.0 is built)"),
            })
        }
    }
    fn init<B: RegisterBus + ?Sized>(&self, bus: &B, doorbell_bus: u64) -> Result<(), HwError> {
        barebell::nbio::init(bus, &self.bases, doorbell_bus).map_err(step_err("nbio"))
    }
    fn flush<B: RegisterBus + ?Sized>(&self, bus: &B) -> Result<(), barebell::nbio::NbioError> {
        barebell::nbio::flush_hdp(bus, barebell::nbio::MMIO_REG_HOLE_OFFSET)
    }
}

/// A bus that flushes HDP before every register write, so VRAM written
/// through BAR0 is visible to whatever the write tells to look at it.
struct FlushingBus<'a, B: RegisterBus + ?Sized> {
    inner: &'a B,
    nbio: NbioIp,
}

impl<B: RegisterBus + ?Sized> RegisterBus for FlushingBus<'_, B> {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.inner.read32(byte_offset)
    }
    fn write32(&self, byte_offset: usize, value: u32) {
        // The flush was checked once before this bus was built; a device
        // that has gone shows up on the next read of any poll.
        let _ = self.nbio.flush(self.inner);
        self.inner.write32(byte_offset, value)
    }
}

fn symbols_for(v: (u8, u8, u8)) -> &'static [Reg] {
    use barebell::regs::{gc_12_0_0, mp_13_0_0, mp_14_0_2};
    match v {
        (11, 0, 0) => gc_11_0_0::ALL,
        (12, 0, 0) | (12, 0, 1) => gc_12_0_0::ALL,
        (13, 0, 0) => mp_13_0_0::ALL,
        (14, 0, 2) | (14, 0, 3) => mp_14_0_2::ALL,
        _ => &[],
    }
}

/// VRAM as seen through BAR0: bounds-checked pointers for CPU access.
struct Vram<'d> {
    dev: &'d Device,
}

impl Vram<'_> {
    /// The CPU pointer to VRAM offset `r.offset`, if BAR0 covers all of
    /// `r`.
    fn cpu(&self, r: &VramRange, step: &'static str) -> Result<NonNull<u8>, HwError> {
        let end = r.offset.saturating_add(r.size);
        if end > self.dev.vram.len() as u64 {
            return Err(HwError::NotBuilt {
                step,
                missing: format!(
                    "VRAM {:#x}..{end:#x} lies beyond BAR0 ({:#x} bytes); CPU access to VRAM outside BAR0 (resizable BAR or MM_INDEX writes) is not built",
                    r.offset,
                    self.dev.vram.len()
                ),
            });
        }
        let off = usize::try_from(r.offset).map_err(step_err(step))?;
        // SAFETY: `off + size <= BAR0 length`, checked above, so the
        // result stays inside the mapping.
        let p = unsafe { self.dev.vram.as_ptr().add(off) };
        NonNull::new(p).ok_or(HwError::Step {
            step,
            detail: "BAR0 mapped at null".into(),
        })
    }
}

/// Runs the steps on `target` up to `o.until` (and the mapping steps if
/// asked).
pub fn bring_up(target: Target, o: &Options<'_>) -> Result<(), HwError> {
    let dev = device::open(target)?;
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
        &dev.regs,
        Symbols {
            blocks: &boot_blocks,
        },
        print,
    );
    let mut table = vec![0u8; TABLE_BYTES];
    let (pos, how) = read_table(&dev, &bus, &clock, &mut table)?;
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
        return Ok(());
    }

    // nbio
    let nbio = NbioIp::for_version(nbif.version.triple(), nbif.bases)?;
    let nbio_names: &'static [Reg] = match nbif.version.triple() {
        (4, 3, 0) => barebell::regs::nbio_4_3_0::init::ALL,
        _ => &[],
    };
    let nbio_blocks = [(nbio_names, nbif.bases)];
    let nbio_bus = TraceBus::new(
        &dev.regs,
        Symbols {
            blocks: &nbio_blocks,
        },
        print,
    );
    nbio.init(&nbio_bus, dev.doorbell_bus)?;
    nbio.flush(&nbio_bus).map_err(step_err("nbio"))?;
    println!(
        "step nbio: HDP flush remapped to BAR5 + {:#x} and used once; doorbell aperture open; self-ring at {:#x}",
        barebell::nbio::MMIO_REG_HOLE_OFFSET,
        dev.doorbell_bus
    );
    if o.until == Step::Nbio {
        return Ok(());
    }

    // gmc
    let g = gc.version.triple();
    if g != (11, 0, 0) {
        return Err(HwError::NotBuilt {
            step: "gmc",
            missing: format!("hub init for GC {g:?} (only GFXHUB 3.0 / GC 11.0.0 is built)"),
        });
    }
    let gc_blocks = [
        (symbols_for(mp0.version.triple()), mp0.bases),
        (symbols_for(g), gc.bases),
    ];
    let gc_bus = TraceBus::new(&dev.regs, Symbols { blocks: &gc_blocks }, print);
    let mut vram = gmc(&dev, &gc_bus, &nbio, &gc.bases, vram_bytes)?;
    if o.until == Step::Gmc {
        return Ok(());
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
    let flushing = FlushingBus {
        inner: &gc_bus,
        nbio,
    };
    let (regs, plan, gc_regs) = psp_tables(mp0.version.triple(), g)?;
    let bufs = psp_buffers(&dev, &mut vram)?;
    let tmr_range = vram
        .alloc(u64::from(TMR_SIZE), TMR_ALIGN)
        .map_err(step_err("psp"))?;
    let tmr = Tmr {
        mc_addr: tmr_range.mc,
        capacity: TMR_SIZE,
        phys_addr: tmr_range.offset,
    };
    let mut p = Psp::new(&flushing, &clock, regs, &mp0.bases, bufs).map_err(step_err("psp"))?;
    let report = load(&mut p, plan, &set, o.firmware_dir, tmr)?;
    println!(
        "step psp: {} bootloader components, TMR {:#x} bytes asked by the TOC, {} LOAD_IP_FW, AUTOLOAD_RLC sent",
        report.components, report.tmr_size, report.ip_fw_loads
    );
    if o.until == Step::Psp && o.mapping.is_none() {
        return Ok(());
    }

    // rlc
    p.wait_rlc_autoload(gc_regs, &gc.bases)
        .map_err(step_err("rlc"))?;
    println!("step rlc: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle");
    let Some(_mode) = o.mapping else {
        return Ok(());
    };

    // mes
    let start = mes_start(&set, o.firmware_dir)?;
    let versions = barebell::mes_start::start(
        &flushing,
        &clock,
        &gc.bases,
        barebell::mqd::Generation::Gfx11,
        &start,
    )
    .map_err(step_err("mes"))?;
    println!(
        "step mes: MES pipes unhalted; scheduler firmware {:#x}, API {}",
        versions.firmware(),
        versions.api()
    );
    Err(HwError::NotBuilt {
        step: "rings",
        missing: RINGS_MISSING.into(),
    })
}

/// The IFWI wait and VRAM size as `read_from_vram` does them, then the
/// table through BAR0 if it reaches, else through `read_from_vram`.
fn read_table<B: RegisterBus + ?Sized>(
    dev: &Device,
    bus: &B,
    clock: &StdClock,
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
            if mib != barebell::bus::ALL_ONES
                && pos + TABLE_BYTES as u64 <= dev.vram.len() as u64 =>
        {
            for (i, chunk) in out.chunks_exact_mut(4).take(TABLE_BYTES / 4).enumerate() {
                let off = usize::try_from(pos).map_err(step_err("discovery"))? + 4 * i;
                chunk.copy_from_slice(&dev.vram.read32(off).to_le_bytes());
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

/// The `gmc` step; returns the VRAM allocator for the later steps.
fn gmc<B: RegisterBus + ?Sized>(
    dev: &Device,
    bus: &B,
    nbio: &NbioIp,
    gc: &IpBases,
    vram_bytes: u64,
) -> Result<VramAllocator, HwError> {
    use barebell::gmc::{Flags, Format, LARGE_PAGE, Table, TableArena};
    use barebell::hub::{HubConfig, gfxhub_gart_enable};
    let reg = |r: Reg| {
        r.byte_offset(gc).ok_or(HwError::Step {
            step: "gmc",
            detail: format!("{} is outside the GC bases", r.name),
        })
    };
    let base = bus.read32(reg(gc_11_0_0::GCMC_VM_FB_LOCATION_BASE)?);
    let top = bus.read32(reg(gc_11_0_0::GCMC_VM_FB_LOCATION_TOP)?);
    if base == barebell::bus::ALL_ONES {
        return Err(step_err("gmc")(
            "GCMC_VM_FB_LOCATION_BASE reads all-ones: device gone",
        ));
    }
    let fb_start = u64::from(base & FB_BASE_MASK) << 24;
    let fb_end = fb_start + vram_bytes - 1;
    let mut vram =
        VramAllocator::with_boot_region(vram_bytes, fb_start).map_err(step_err("gmc"))?;
    vram.alloc(VBIOS_FB_HOLE, 4096).map_err(step_err("gmc"))?;
    let page = vram
        .alloc(LARGE_PAGE, LARGE_PAGE)
        .map_err(step_err("gmc"))?;
    let scratch = vram.alloc(4096, 4096).map_err(step_err("gmc"))?;
    let tables_at = vram.alloc(4 * 4096, 4096).map_err(step_err("gmc"))?;
    let cpu = Vram { dev }.cpu(&tables_at, "gmc")?;
    // SAFETY: four pages of VRAM inside BAR0 (checked by `cpu`), handed
    // out once by the allocator, so nothing else aliases them; `Table` is
    // plain u64s and the pointer is page aligned. The GPU reads them only
    // after GFXHUB init below.
    let tables: &mut [Table] =
        unsafe { core::slice::from_raw_parts_mut(cpu.as_ptr().cast::<Table>(), 4) };
    tables.fill(Table::EMPTY);
    // Entries and the root hold physical addresses (Linux converts VRAM
    // table addresses with `amdgpu_gmc_vram_mc2pa()`): offset + FB_OFFSET,
    // with FB_OFFSET taken as 0.
    let mut arena = TableArena::new(tables, tables_at.offset, Format::Gfx11);
    let rw = Flags {
        readable: true,
        writeable: true,
        executable: false,
        system: false,
        snooped: false,
    };
    arena
        .map(0, page.offset, LARGE_PAGE, rw, true)
        .map_err(|e| step_err("gmc")(format!("{e:?}")))?;
    nbio.flush(bus).map_err(step_err("gmc"))?;
    let cfg = HubConfig {
        pt_base: arena.root(),
        start: 0,
        end: (1 << 30) - 1,
        fb_start,
        fb_end,
        agp_start: u64::MAX >> 16,
        agp_end: 0,
        default_page: scratch.offset,
        dummy_page: dev.dma.bus(),
    };
    gfxhub_gart_enable(bus, gc, &cfg).map_err(step_err("gmc"))?;
    println!(
        "step gmc: FB at MC {fb_start:#x}..={fb_end:#x} (FB_LOCATION_TOP reads {:#x}); VMID0 tables at VRAM {:#x}, VA 0 -> VRAM {:#x} (2 MiB); GFXHUB enabled (MMHUB init not built)",
        u64::from(top & FB_BASE_MASK) << 24,
        tables_at.offset,
        page.offset
    );
    Ok(vram)
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

/// `fw_pri` (2 MiB, 1 MiB aligned), ring, command and fence buffers in
/// VRAM inside BAR0.
fn psp_buffers(dev: &Device, vram: &mut VramAllocator) -> Result<PspBuffers, HwError> {
    let v = Vram { dev };
    let mut buf = |size: usize, align: u64| -> Result<DmaBuf, HwError> {
        let r = vram.alloc(size as u64, align).map_err(step_err("psp"))?;
        let cpu = v.cpu(&r, "psp")?;
        // SAFETY: `size` bytes of VRAM inside BAR0 (checked by `cpu`),
        // handed out once by the allocator, 4 KiB aligned; the device
        // reaches them at MC address `r.mc`.
        Ok(unsafe { DmaBuf::new(cpu, size, r.mc) })
    };
    Ok(PspBuffers {
        fw_pri: buf(2 << 20, psp::BOOTLOADER_ALIGN)?,
        ring: buf(psp::RING_BYTES, 4096)?,
        cmd: buf(4096, 4096)?,
        fence: buf(4096, 4096)?,
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
fn mes_start(set: &FirmwareSet, dir: &Path) -> Result<barebell::mes_start::MesStart, HwError> {
    let mut uc = [0u64; 2];
    for (slot, name) in uc.iter_mut().zip(&set.mes) {
        let f = firmware::load(dir, name).map_err(step_err("mes"))?;
        match f.body {
            Body::Mes(m) => *slot = m.uc_start_addr(),
            _ => return Err(step_err("mes")(format!("{name}: not a MES v1.0 header"))),
        }
    }
    Ok(barebell::mes_start::MesStart {
        uc_start: uc,
        kiq_pipe: set.mes.len() > 1,
    })
}
