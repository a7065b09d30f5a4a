//! A ready-to-run PSP bring-up on the model with the real blobs: the
//! discovery table, the model primed with what it must see, and its
//! buffers placed as Linux places them, behind the runtime's own VMID0
//! page tables. Shared by the integration tests, `barebell bringup` and
//! the unikernel.
//!
//! The path from an MC address to a byte is the runtime's code end to
//! end: [`barebell::mem::VramAllocator`] places the VMID0 tables and the
//! TMR in VRAM, [`barebell::mem::DmaArena`] hands out the host buffers at
//! bus addresses, [`barebell::gmc::pagetable::TableArena`] maps them into the GART
//! with the SYSTEM and SNOOPED bits, and [`barebell::gmc::hub::gart_enable`]
//! programs the MMHUB model (the hub discovery names) that the PSP's
//! [`barebell_model::mc::Mc`] decodes through.
//! Where Linux puts the buffers (`amdgpu_psp.c`): `fw_pri` in GTT on bare
//! metal; ring, command and fence buffers in `VRAM | GTT` (TTM tries VRAM
//! first), which the rig puts in GTT, so that every GPCOM access walks
//! the GART; the TMR in VRAM at `PSP_TMR_ALIGNMENT`.
//!
//! Only reading blobs from a directory needs `std`; [`rig_from`] takes
//! blobs handed over in memory.

use barebell::gmc::hub::{HubError, InvalidateError};
use barebell::gmc::pagetable::MapError;
use barebell_model::SimClock;
use barebell_model::clock::HostClock;
use barebell_model::discovery;
use barebell_model::error::ModelError;
use barebell_model::hub::HubModel;
use barebell_model::mc::{CID_MP0, Mc};
pub use barebell_model::psp::firmware::*;
use barebell_model::psp::{PspExpect, PspModel, PspPlacement, RlcStatus};

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use barebell::discovery::{Discovery, IpInfo, hw_id};
use barebell::gmc::hub::{HubConfig, HubRegs};
use barebell::gmc::pagetable::{Flags, Table, TableArena};
use barebell::ip::Generation;
use barebell::mem::{DmaArena, PAGE_ALIGN, VramAllocator};
use barebell::psp::{self, DmaBuf, FaultHub, GcRegs, Plan, PspBuffers, PspRegs, Tmr};
use barebell_bringup::FirmwareError;
use barebell_firmware_if::{Firmware, Kind, parse};
use core::ptr::NonNull;
#[cfg(feature = "std")]
use std::path::Path;

/// Why a rig could not be built: the model refused to be built, or the
/// runtime's own fixture steps (GART mapping, hub init, VMID0 flush)
/// failed on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RigError {
    Model(ModelError),
    /// A blob the rig hands the runtime is missing, malformed or lacks a
    /// section, as the runtime's firmware reader sees it.
    Firmware(FirmwareError),
    /// The part's discovery table, read back as a driver reads it, does
    /// not parse (a model bug).
    Discovery(barebell::discovery::Error),
    /// A fixture's GART mapping at `va` was refused.
    PageTable {
        va: u64,
        error: MapError,
    },
    /// A fixture's allocation (VRAM, GTT, a PSP buffer) did not fit.
    Memory {
        what: &'static str,
        error: barebell::mem::MemError,
    },
    /// The runtime's hub init refused the fixture's configuration.
    Hub {
        hub: &'static str,
        error: HubError,
    },
    /// The runtime's VMID0 flush on the fixture's hub did not complete.
    Invalidate {
        hub: &'static str,
        error: InvalidateError,
    },
}

impl From<ModelError> for RigError {
    fn from(e: ModelError) -> Self {
        RigError::Model(e)
    }
}

impl From<FirmwareError> for RigError {
    fn from(e: FirmwareError) -> Self {
        RigError::Firmware(e)
    }
}

impl core::fmt::Display for RigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RigError::Model(e) => write!(f, "{e}"),
            RigError::Firmware(e) => write!(f, "{e}"),
            RigError::Memory { what, error } => write!(f, "{what}: {error}"),
            RigError::Discovery(e) => write!(f, "the model's discovery table: {e}"),
            RigError::PageTable { va, error } => write!(f, "GART map {va:#x}: {error}"),
            RigError::Hub { hub, error } => write!(f, "{hub} init: {error}"),
            RigError::Invalidate { hub, error } => write!(f, "{hub} VMID0 flush: {error}"),
        }
    }
}

/// VMID0's range: 512 MiB (`gmc_v11_0_mc_init()`'s default GART size)
/// at MC 0, where `amdgpu_gmc_gart_location()`'s best fit puts it
/// when the space below VRAM fits it and is the smaller side.
pub const GART_START: u64 = 0;
pub const GART_BYTES: u64 = 512 << 20;
/// Where the model's IOMMU puts the rig's host buffers on the bus (a
/// model value; inside the VRAM size, so a PTE that forgets SYSTEM
/// lands in VRAM rather than off the end).
pub const GTT_BUS: u64 = 0x1_0000_0000;
/// GART addresses of the buffers (a model choice: 2 MiB aligned for
/// `fw_pri`, so its PTEs can carry a 2 MiB fragment).
pub const FW_PRI_VA: u64 = 0x20_0000;
pub const RING_VA: u64 = 0x40_0000;
pub const CMD_VA: u64 = 0x40_1000;
pub const FENCE_VA: u64 = 0x40_2000;
pub const FW_PRI_BYTES: u64 = 2 << 20;
/// VMID0 tables the rig gives the runtime's arena.
pub const GART_TABLES: usize = 8;

/// How the rig maps one GTT buffer into VMID0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mapping {
    /// 4 KiB PTEs with SYSTEM and SNOOPED, fragments as the runtime
    /// picks them.
    #[default]
    Gtt,
    /// No PTE at all.
    Missing,
    /// The bus address in a PTE without SYSTEM (so it names VRAM).
    NoSystemBit,
    /// 2 MiB pages (PDB0 entries with `PDE_PTE`) where aligned.
    LargePage,
}

/// The mapping of each GTT buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layout {
    pub fw_pri: Mapping,
    pub ring: Mapping,
    pub cmd: Mapping,
    pub fence: Mapping,
}

/// One GTT buffer: its GART address, bus address, size and host
/// memory (for tests that plant bytes the runtime would not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GttBuf {
    pub va: u64,
    pub bus: u64,
    pub len: u64,
    pub host: NonNull<u8>,
}

/// The four GTT buffers, as placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gtt {
    pub fw_pri: GttBuf,
    pub ring: GttBuf,
    pub cmd: GttBuf,
    pub fence: GttBuf,
}

/// The flags of a GTT mapping (`AMDGPU_PTE_SYSTEM | AMDGPU_PTE_SNOOPED`
/// plus read/write, as `amdgpu_ttm_tt_pte_flags()` gives cached GTT);
/// `system: false` for the deliberately broken variant.
pub fn gtt_flags(system: bool) -> Flags {
    Flags {
        readable: true,
        writeable: true,
        executable: false,
        system,
        snooped: system,
    }
}

/// Simulated time a host read of the rig's clock costs (a model
/// convention, as `vgpu::HOST_READ_NS`).
pub const RIG_HOST_READ_NS: u64 = 100;
/// The TMR the rig reserves before LOAD_TOC answers (a fixture value,
/// larger than any answer, as tinygrad reserves its maximum up front).
pub const RIG_TMR_BYTES: u32 = 0x200_0000;

/// Everything a run needs; the model and memory are leaked so the
/// runtime can borrow them for `'static`.
#[derive(Debug)]
pub struct Rig {
    pub clock: &'static SimClock,
    /// The same time as the runtime sees it: every read of it moves it
    /// by [`RIG_HOST_READ_NS`], so the runtime's delays (`mdelay()`)
    /// end. Hand this, not [`Rig::clock`], to the runtime.
    pub host: &'static HostClock,
    pub model: &'static PspModel,
    pub table: Vec<u8>,
    pub mp0: IpInfo,
    pub gc: IpInfo,
    pub regs: PspRegs,
    pub gc_regs: GcRegs,
    pub plan: Plan,
    pub sos: Firmware<'static>,
    pub smu: &'static [u8],
    /// Parsed GFX blobs, one per file.
    pub blobs: Vec<Firmware<'static>>,
    pub tmr: Tmr,
    pub bufs: Option<PspBuffers>,
    /// The MMHUB model the PSP's DMA goes through, programmed by the
    /// runtime.
    pub hub: &'static HubModel,
    /// Its register table (MMHUB 3.0.0 or 4.1.0, from discovery).
    pub hub_regs: &'static HubRegs,
    pub mmhub: IpInfo,
    /// The PSP's view of the MC address space.
    pub mc: &'static Mc,
    /// The same MC, for another PSP model over it.
    pub mc_arc: Arc<Mc>,
    /// The runtime's VMID0 tables (in modelled VRAM): tests remap
    /// through it. Unused after [`behind`].
    pub gart: TableArena<'static>,
    pub gtt: Gtt,
    /// VRAM as the runtime's allocator left it. Unused after
    /// [`behind`].
    pub vram: VramAllocator,
}

/// A blob by file name, as `'static` bytes.
pub trait Blobs {
    fn get(&mut self, name: &str) -> Result<&'static [u8], FirmwareError>;
}

/// Blobs read (and leaked) from a directory.
#[cfg(feature = "std")]
struct Dir(barebell_bringup::FirmwareDir);

#[cfg(feature = "std")]
impl Blobs for Dir {
    fn get(&mut self, name: &str) -> Result<&'static [u8], FirmwareError> {
        use barebell_bringup::FirmwareSource;
        let bytes = self.0.load(name)?;
        Ok(Box::leak(bytes.into_boxed_slice()))
    }
}

/// The generation of a GC version, for the model's RLC status registers.
fn gc_regs_generation(v: (u8, u8, u8)) -> Result<Generation, ModelError> {
    match v.0 {
        11 => Ok(Generation::Gfx11),
        12 => Ok(Generation::Gfx12),
        _ => Err(ModelError::Unsupported {
            what: "RLC status registers of GC",
            version: v,
        }),
    }
}

/// Zeroed, leaked host memory.
fn leaked(len: usize) -> &'static mut [u8] {
    Box::leak(vec![0u8; len].into_boxed_slice())
}

/// Builds a rig for `part` from the blobs in `dir`; `tweak` may alter
/// what the model expects before it is built.
#[cfg(feature = "std")]
pub fn rig(
    dir: &Path,
    part: &PartFirmware,
    tweak: impl FnOnce(&mut PspExpect),
) -> Result<Rig, RigError> {
    rig_from(
        &mut Dir(barebell_bringup::FirmwareDir(dir.into())),
        part,
        tweak,
    )
}

/// As [`rig`], with each GTT buffer mapped as `layout` says.
#[cfg(feature = "std")]
pub fn rig_layout(
    dir: &Path,
    part: &PartFirmware,
    layout: Layout,
    tweak: impl FnOnce(&mut PspExpect),
) -> Result<Rig, RigError> {
    rig_from_layout(
        &mut Dir(barebell_bringup::FirmwareDir(dir.into())),
        part,
        layout,
        tweak,
    )
}

/// As [`rig`], with the blobs from `blobs`.
pub fn rig_from(
    source: &mut dyn Blobs,
    part: &PartFirmware,
    tweak: impl FnOnce(&mut PspExpect),
) -> Result<Rig, RigError> {
    rig_from_layout(source, part, Layout::default(), tweak)
}

/// As [`rig_from`], with each GTT buffer mapped as `layout` says.
pub fn rig_from_layout(
    source: &mut dyn Blobs,
    part: &PartFirmware,
    layout: Layout,
    tweak: impl FnOnce(&mut PspExpect),
) -> Result<Rig, RigError> {
    let clock: &'static SimClock = Box::leak(Box::new(SimClock::new()));
    let host: &'static HostClock = Box::leak(Box::new(clock.host_view(RIG_HOST_READ_NS)));
    let (table, _) = discovery::build(&part.desc);
    let d = Discovery::parse(&table).map_err(RigError::Discovery)?;
    let ip = |id: u16, ip: &'static str| d.ip(id, 0).ok_or(ModelError::MissingIp { ip });
    let mp0 = ip(hw_id::MP0, "MP0")?;
    let gc = ip(hw_id::GC, "GC")?;
    let unsupported =
        |what: &'static str, version: (u8, u8, u8)| ModelError::Unsupported { what, version };
    let v = mp0.version.triple();
    let regs = PspRegs::for_version(v).ok_or(unsupported("PSP registers", v))?;
    let plan = Plan::for_version(v).ok_or(unsupported("PSP plan", v))?;
    let g = gc.version.triple();
    let gc_regs = GcRegs::for_version(g).ok_or(unsupported("RLC registers", g))?;

    // Every blob once, leaked for the run.
    let mut cache: Vec<(&str, &'static [u8])> = Vec::new();
    let mut names = vec![part.sos, part.smu];
    names.extend(part.gfx.iter().map(|g| g.1));
    for name in names {
        if !cache.iter().any(|(n, _)| *n == name) {
            cache.push((name, source.get(name)?));
        }
    }
    let bytes = |name: &str| {
        cache
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| *b)
            .ok_or_else(|| FirmwareError::NotFound {
                name: name.into(),
                place: "the blobs the rig read".into(),
            })
    };
    // What the model must see, by its own reader.
    let mut expect = expect(part, &mut |name| {
        bytes(name)
            .map(<[u8]>::to_vec)
            .map_err(|_| barebell_model::FileError {
                name: name.into(),
                detail: "is not among the blobs the rig read".into(),
            })
    })?;
    tweak(&mut expect);
    // What the runtime is handed, by barebell-firmware-if, as the
    // bring-up parses it.
    let runtime_parse = |name: &str| -> Result<Firmware<'static>, FirmwareError> {
        parse(Kind::from_file_name(name), bytes(name)?).map_err(|error| FirmwareError::Malformed {
            name: name.into(),
            error,
        })
    };
    let sos = runtime_parse(part.sos)?;
    let smu_fw = runtime_parse(part.smu)?;
    let smu = smu_fw
        .section("ucode")
        .map(|x| smu_fw.bytes(x))
        .ok_or_else(|| FirmwareError::Lacks {
            name: part.smu.into(),
            what: "SMU ucode section",
        })?;
    let mut blobs: Vec<(&str, Firmware<'static>)> = Vec::new();
    for (_, file, _) in &part.gfx {
        if !blobs.iter().any(|(f, _)| f == file) {
            blobs.push((file, runtime_parse(file)?));
        }
    }
    let place = PspPlacement {
        regs,
        mp0_bases: mp0.bases,
        gc: Some(
            RlcStatus::for_generation(gc_regs_generation(g)?)
                .ok_or(unsupported("RLC status registers of GC", g))?,
        ),
        gc_bases: gc.bases,
    };
    let mmhub = ip(hw_id::MMHUB, "MMHUB")?;
    let mv = mmhub.version.triple();
    let hub_regs =
        barebell::gmc::hub::hub_for(hw_id::MMHUB, mv).ok_or(unsupported("MMHUB hub table", mv))?;
    let (hub, mc, gart, vram, gtt, bufs, tmr) = memory(clock, &mmhub, hub_regs, part, layout)?;
    let mc = Arc::new(mc);
    let model = PspModel::new(clock, place, expect, mc.clone());
    Ok(Rig {
        clock,
        host,
        model: Box::leak(Box::new(model)),
        table,
        mp0,
        gc,
        regs,
        gc_regs,
        plan,
        sos,
        smu,
        blobs: blobs.into_iter().map(|(_, f)| f).collect(),
        tmr,
        bufs: Some(bufs),
        hub: leak_arc(hub),
        hub_regs,
        mmhub,
        mc: leak_arc(mc.clone()),
        mc_arc: mc,
        gart,
        gtt,
        vram,
    })
}

/// The rig is a test fixture whose parts live for the process: a
/// shared model leaked as a `'static` reference.
fn leak_arc<T>(a: Arc<T>) -> &'static T {
    let r: &'static Arc<T> = Box::leak(Box::new(a));
    r
}

impl Rig {
    /// The hub the runtime reads a PSP timeout's VM fault from.
    pub fn fault_hub(&self) -> FaultHub<'static> {
        FaultHub {
            bus: self.hub,
            bases: self.hub.bases(),
            regs: self.hub_regs,
        }
    }
}

type Memory = (
    Arc<HubModel>,
    Mc,
    TableArena<'static>,
    VramAllocator,
    Gtt,
    PspBuffers,
    Tmr,
);

/// VRAM, GTT, the VMID0 tables and the hub, built by the runtime's
/// code: the memory behind every PSP access.
fn memory(
    clock: &'static SimClock,
    mmhub: &IpInfo,
    hub_regs: &'static HubRegs,
    part: &PartFirmware,
    layout: Layout,
) -> Result<Memory, RigError> {
    let e = |what: &'static str| move |error| RigError::Memory { what, error };
    let size = u64::from(part.vram_mib) << 20;
    let mut vram = VramAllocator::with_boot_region(size, FB_START).map_err(e("VRAM"))?;
    let hub = Arc::new(HubModel::for_hub(clock, mmhub.bases, hub_regs));
    let mut mc = Mc::new(hub.clone(), CID_MP0);

    // The VMID0 tables in VRAM, backed by host memory the model reads
    // as that VRAM. PDEs and the context base hold VRAM physical
    // addresses (`gmc_v11_0_get_vm_pde()` applies
    // `amdgpu_gmc_vram_mc2pa()`), which here are VRAM offsets.
    let table_bytes = GART_TABLES as u64 * 4096;
    let tables_at = vram
        .alloc(table_bytes, PAGE_ALIGN)
        .map_err(e("GART tables"))?;
    let tables: &'static mut [Table] =
        Box::leak(vec![Table::EMPTY; GART_TABLES].into_boxed_slice());
    // SAFETY: leaked, so valid for the model's lifetime; the host
    // writes the tables only before the model walks them, or (tests)
    // between commands.
    unsafe { mc.back_vram(tables_at.offset, tables.as_mut_ptr().cast(), table_bytes) };
    let format = match hub_regs.generation {
        barebell::ip::Generation::Gfx90a => Generation::Gfx90a,
        barebell::ip::Generation::Gfx94 => Generation::Gfx94,
        barebell::ip::Generation::Gfx11 => Generation::Gfx11,
        barebell::ip::Generation::Gfx12 => Generation::Gfx12,
    };
    let mut gart = TableArena::new(tables, tables_at.offset, format);
    let (gtt, bufs, tmr, dummy_bus) = place_buffers(&mut mc, &mut gart, &mut vram, layout)?;
    // The page the system aperture answers unmapped accesses with.
    let scratch = vram.alloc(4096, PAGE_ALIGN).map_err(e("scratch page"))?;

    // MMHUB init by the runtime, as `gmc_v11_0_gart_enable()` /
    // `gmc_v12_0_gart_enable()` do it (`mmhub_v3_0_gart_enable()`,
    // `mmhub_v4_1_0_gart_enable()`).
    let cfg = HubConfig {
        pt_base: gart.root(),
        start: GART_START,
        end: GART_START + GART_BYTES - 1,
        fb_start: FB_START,
        fb_end: FB_START + size - 1,
        // Empty (start > end): barebell never enables AGP.
        agp_start: u64::MAX >> 16,
        agp_end: 0,
        default_page: scratch.offset,
        dummy_page: dummy_bus,
    };
    barebell::gmc::hub::gart_enable(&*hub, &mmhub.bases, hub_regs, &cfg).map_err(|error| {
        RigError::Hub {
            hub: hub_regs.name,
            error,
        }
    })?;
    // Then VMID0's TLB flush on engine 17, as both functions do right
    // after (no HDP flush: the host wrote the tables directly).
    barebell::gmc::hub::invalidate(
        &*hub,
        clock,
        &mmhub.bases,
        hub_regs,
        barebell::gmc::hub::GART_ENGINE,
        0,
        0,
    )
    .map_err(|error| RigError::Invalidate {
        hub: hub_regs.name,
        error,
    })?;
    Ok((hub, mc, gart, vram, gtt, bufs, tmr))
}

/// The PSP's buffers: `fw_pri`, ring, command and fence in GTT (host
/// memory on the bus through `mc`'s IOMMU, mapped into `gart` as
/// `layout` says), the TMR in VRAM from `vram`. Also returns the bus
/// address of a dummy page (`adev->dummy_page_addr`).
fn place_buffers(
    mc: &mut Mc,
    gart: &mut TableArena<'static>,
    vram: &mut VramAllocator,
    layout: Layout,
) -> Result<(Gtt, PspBuffers, Tmr, u64), RigError> {
    let e = |what: &'static str| move |error| RigError::Memory { what, error };
    // The TMR: VRAM, 1 MiB aligned (`PSP_TMR_ALIGNMENT`); the PSP
    // never hands its bytes back, so the model does not back it.
    let tmr_at = vram
        .alloc(u64::from(RIG_TMR_BYTES), psp::TMR_ALIGN)
        .map_err(e("TMR"))?;

    // GTT: host memory on the bus at GTT_BUS through the model's IOMMU.
    let host = leaked(4 << 20);
    // SAFETY: the rig maps each chunk it hands out into the model's bus
    // at the chunk's bus address (`map_bus` below) before the device is
    // given it; `host` is leaked, so it outlives the device.
    let mut arena = unsafe { DmaArena::new(host, GTT_BUS) }.map_err(e("GTT"))?;
    let mut place = |va: u64, len: u64, align: u64, map: Mapping| {
        let mut chunk = arena
            .alloc(len as usize, align)
            .map_err(e("a GTT buffer"))?;
        let bus = chunk.bus_addr();
        let p = NonNull::from(chunk.bytes()).cast::<u8>();
        // SAFETY: leaked with the arena's memory.
        unsafe { mc.map_bus(bus, p.as_ptr(), len) };
        let mapped = match map {
            Mapping::Gtt => gart.map(va, bus, len, gtt_flags(true), false),
            Mapping::Missing => Ok(()),
            Mapping::NoSystemBit => gart.map(va, bus, len, gtt_flags(false), false),
            Mapping::LargePage => gart.map(va, bus, len, gtt_flags(true), true),
        };
        mapped.map_err(|error| RigError::PageTable { va, error })?;
        // SAFETY: the chunk is leaked and exclusive to this DmaBuf on
        // the host; the device sees it at `va` through the GART.
        let buf = unsafe { DmaBuf::new(p, len as usize, va) };
        Ok::<_, RigError>((
            GttBuf {
                va,
                bus,
                len,
                host: p,
            },
            buf,
        ))
    };
    let two_mib = 2 << 20;
    let (fw_g, fw_b) = place(FW_PRI_VA, FW_PRI_BYTES, two_mib, layout.fw_pri)?;
    let ring_len = psp::RING_BYTES as u64;
    let (ring_g, ring_b) = place(RING_VA, ring_len, PAGE_ALIGN, layout.ring)?;
    let (cmd_g, cmd_b) = place(CMD_VA, 4096, PAGE_ALIGN, layout.cmd)?;
    let (fence_g, fence_b) = place(FENCE_VA, 4096, PAGE_ALIGN, layout.fence)?;
    // `adev->dummy_page_addr`: one more host page on the bus.
    let mut dummy = arena.alloc(4096, PAGE_ALIGN).map_err(e("dummy page"))?;
    let dummy_bus = dummy.bus_addr();
    // SAFETY: leaked with the arena's memory.
    unsafe { mc.map_bus(dummy_bus, dummy.as_mut_ptr(), 4096) };
    let gtt = Gtt {
        fw_pri: fw_g,
        ring: ring_g,
        cmd: cmd_g,
        fence: fence_g,
    };
    let bufs = PspBuffers {
        fw_pri: fw_b,
        ring: ring_b,
        cmd: cmd_b,
        fence: fence_b,
    };
    let tmr = Tmr {
        mc_addr: tmr_at.mc,
        capacity: RIG_TMR_BYTES,
        phys_addr: tmr_at.offset,
    };
    Ok((gtt, bufs, tmr, dummy_bus))
}

/// VMID0 tables as a hub model reaches them: the address PDEs and the
/// context base use for them, and the host memory behind it.
#[derive(Debug, Clone, Copy)]
pub struct TableMemory {
    pub device: u64,
    pub host: NonNull<u8>,
    pub len: u64,
}

/// Moves the rig's PSP behind a VMID0 someone else built: `hub` (an
/// MMHUB model the `gmc` bring-up step initialised, walking `tables`),
/// with the GTT buffers mapped into that step's `gart` and the TMR
/// taken from its `vram`. The PSP model is rebuilt (same
/// expectations) over a new [`Mc`]; the rig's own hub, tables
/// ([`Rig::gart`]) and VRAM allocator are left unused. The hub model
/// caches no translations, so the new PTEs need no invalidation here
/// (on hardware they would: unconfirmed whether Linux flushes MMHUB
/// for PSP buffers mapped after `gart_enable`).
///
/// # Safety
/// `tables.host` must point to `tables.len` bytes that stay valid
/// while the model lives (as [`Dma::map`](barebell_model::dma::Dma::map)).
pub unsafe fn behind(
    r: &mut Rig,
    hub: Arc<HubModel>,
    tables: TableMemory,
    gart: &mut TableArena<'static>,
    vram: &mut VramAllocator,
    layout: Layout,
) -> Result<(), RigError> {
    let mut mc = Mc::new(hub.clone(), CID_MP0);
    // SAFETY: the caller's contract.
    unsafe { mc.back_vram(tables.device, tables.host.as_ptr(), tables.len) };
    let (gtt, bufs, tmr, _) = place_buffers(&mut mc, gart, vram, layout)?;
    let mc = Arc::new(mc);
    let place = r.model.placement();
    let expect = r.model.expect().clone();
    r.model = Box::leak(Box::new(PspModel::new(r.clock, place, expect, mc.clone())));
    r.mc = leak_arc(mc.clone());
    r.mc_arc = mc;
    r.hub_regs = hub.hub();
    r.hub = leak_arc(hub);
    r.gtt = gtt;
    r.bufs = Some(bufs);
    r.tmr = tmr;
    Ok(())
}
