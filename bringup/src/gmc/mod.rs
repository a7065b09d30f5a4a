//! Step 3, gmc: the memory layout and the MMHUB, as `gmc_v11_0_hw_init()`
//! / `gmc_v12_0_hw_init()` set them up.
//!
//! - The FB (VRAM) sits where the VBIOS put it: `MMMC_VM_FB_LOCATION_BASE`
//!   (`mmhub_v3_0_get_fb_location()`, `mmhub_v4_1_0_get_fb_location()`);
//!   `MMMC_VM_FB_OFFSET` is the physical address of VRAM offset 0
//!   (`mmhub_v3_0_get_mc_fb_offset()` → `vm_manager.vram_base_offset`,
//!   `gmc_v11_0_vram_gtt_location()`), added to every VRAM address a PDE,
//!   a context base, the default page or the TMR's physical address holds
//!   (`amdgpu_gmc_vram_mc2pa()`, `amdgpu_gmc_vram_pa()`).
//! - The GART goes where `amdgpu_gmc_gart_location()` puts it (high on
//!   gfx11, low on gfx12; [`barebell::gmc::layout`]).
//! - VRAM is laid out bottom-up above the VBIOS framebuffer, which the
//!   display may still scan out: Linux keeps `stolen_vga_memory` (and
//!   `stolen_extended_memory`) at VRAM 0, sized by
//!   `amdgpu_gmc_get_vbios_allocations()` from `gmc_v11_0_get_vbios_fb_size()`
//!   (the DCN's VGA mode or primary surface; 0 without display hardware)
//!   or `gmc_v12_0_get_vbios_fb_size()` (0), and frees it only in
//!   `amdgpu_ttm_fini()`; barebell keeps it for the whole run.
//!   Above it: VMID0's tables, the default (scratch) page, the process
//!   tables; the allocator is kept for the TMR, which the psp step sizes
//!   from LOAD_TOC's answer (`psp_tmr_init()`).
//! - GTT is the DMA region's first chunk, reached through GART PTEs with
//!   SYSTEM|SNOOPED (`amdgpu_ttm_tt_pte_flags()` for cached GTT): the
//!   PSP's `fw_pri`, ring, command and fence buffers and the dummy page.
//! - The rest of the DMA region is the ring area, mapped at GPU VA = host
//!   address into VMID0 (whose range grows from the GART to cover it).
//!   Its first half holds the driver's structures and is in VMID0 only:
//!   the MES and KIQ rings with their fences and write pointers, the HIQ
//!   and its runlist, the MES process context, every MQD (KFD maps none
//!   of them into a user VM: `allocate_mqd()` in `kfd_mqd_manager_v11.c`
//!   and `kfd_mqd_manager_v9.c` takes MQDs from the kernel's GTT,
//!   `pqm_create_queue()` the MES process context from
//!   `amdgpu_amdkfd_alloc_gtt_mem()`). Its second half, the user rings,
//!   is also mapped into the process tables: a user queue's AQL ring, its
//!   read/write pointers, its EOP buffer and its signal, which KFD takes
//!   from user memory (`set_queue_properties_from_user()` in
//!   `kfd_chardev.c`), at their CPU address in the process's GPU VM. A
//!   user kernel's store to an MQD or a driver ring faults (issue 32). The
//!   ring area must miss the FB (the system aperture) and the GART.
//! - The last `user_memory` bytes of the DMA region (an option) are kept
//!   out of the ring area as user memory ([`crate::usermem`]): mapped at
//!   GPU VA = host address into the process tables only, with the flags
//!   KFD gives a user's system-memory allocation: `get_pte_flags()` in
//!   `amdgpu_amdkfd_gpuvm.c` asks `amdgpu_gem_va_map_flags()` for
//!   READABLE, WRITEABLE (`KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE`) and
//!   EXECUTABLE (`KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE`, which ROCR sets for
//!   code-object memory) and the default MTYPE, which
//!   `gmc_v11_0_map_mtype()` turns into `MTYPE_NC` (0, the field left
//!   clear); `amdgpu_vm_bo_update()` adds `amdgpu_ttm_tt_pte_flags()`'s
//!   SYSTEM and SNOOPED for cached GTT, and `gmc_v11_0_get_vm_pte()` keeps
//!   the mapping's EXECUTABLE bit, which instruction fetch needs (the
//!   hub refuses an execute access to a PTE without it).
//! - Then an HDP flush, MMHUB init (`mmhub_v3_0_gart_enable()`,
//!   `mmhub_v4_1_0_gart_enable()`), another flush, and VMID0's TLB flush
//!   on the MMHUB's GART engine (`gmc_v11_0_gart_enable()`).
//!
//! The layout is the same on every platform: only the platform's BAR0
//! length and DMA region (its host address and bus addresses) differ.

pub mod block;
pub mod gmc_v11_0;
pub mod gmc_v12_0;
pub mod gmc_v9_0;

pub use block::GmcBlock;

/// The GMC block for GC `version` ([`GmcBlock`]), or `None` if barebell
/// has none.
pub fn block_for(version: (u8, u8, u8)) -> Option<&'static dyn GmcBlock> {
    match version {
        (9, 4, 2) | (9, 4, 3) => Some(&gmc_v9_0::GmcV9_0),
        (11, _, _) => Some(&gmc_v11_0::GmcV11_0),
        (12, _, _) => Some(&gmc_v12_0::GmcV12_0),
        _ => None,
    }
}

use crate::Gpu;
use crate::error::{BringupError, ErrorKind, LayoutError, ResultAt};
use crate::nbio::flush_hdp;
use crate::sink::{Sink, Step};
use barebell::gmc::hub::{self, GART_ENGINE, HubConfig, HubRegs, hub_for};
use barebell::gmc::layout::{GMC_HOLE_START, McLayout, vbios_fb_size_gfx11, vbios_reservation};
use barebell::gmc::pagetable::{Flags, Table, TableArena};
use barebell::ip::{Generation, hw_id};
use barebell::mem::{DeviceArena, DmaArena, PAGE_ALIGN, VramAllocator, VramRange};
use barebell::nbio::Nbio;
use barebell::platform::{DMA_CHUNK, DmaRegion, Platform};
use barebell::psp::{self, DmaBuf, PspBuffers};
use core::ptr::NonNull;

/// VMID0 tables: a root, and per mapped range (the GART's GTT buffers,
/// the ring area at its host address) a PDB1, a PDB0 and the PTBs
/// covering a few MiB.
pub const GART_TABLES: usize = 16;
/// The process page tables: a root, PDB1, PDB0 and the ring area's PTBs.
/// The user memory and user VRAM add a PTB per 2 MiB they span
/// ([`process_tables`]).
pub const PROCESS_TABLES: usize = 8;

/// GPU VA of the user VRAM in the process tables (barebell's choice; KFD
/// hands a VRAM allocation a VA from the process's own VA allocator).
/// Below 2^47, the top of the user context (`va_end` given MES).
pub const USER_VRAM_VA: u64 = 0x6000_0000_0000;

/// Where the user VRAM sits in the process's address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UserVramVa {
    /// At [`USER_VRAM_VA`].
    #[default]
    Fixed,
    /// At the host address of its CPU view through BAR0 (GPU VA = CPU
    /// VA), as ROCR assumes of VRAM it can reach: KFD maps a public VRAM
    /// BO into the GPU VM at the address the thunk's CPU mapping of it has
    /// (`fmm_allocate_device()` then `fmm_map_to_cpu()`, large BAR).
    /// A driver that maps each buffer itself unmaps the range and maps
    /// buffers back with their own permissions
    /// ([`crate::Gpu::map_user_range`]).
    Host,
}

/// Process tables needed with `user_bytes` of user memory and
/// `user_vram` bytes of user VRAM: a PTB per 2 MiB of each (plus one for
/// an unaligned start), on top of [`PROCESS_TABLES`].
pub fn process_tables(user_bytes: usize, user_vram: usize) -> usize {
    let ptbs = |n: usize| n.div_ceil(2 << 20) + 1;
    PROCESS_TABLES + ptbs(user_bytes) + ptbs(user_vram)
}
/// GART offsets of the GTT buffers (barebell's choice; Linux's TTM picks
/// them).
const FW_PRI_OFF: u64 = 0;
const RING_OFF: u64 = 1 << 20;
const CMD_OFF: u64 = RING_OFF + 4096;
const FENCE_OFF: u64 = CMD_OFF + 4096;
/// `PSP_1_MEG`: Linux's `fw_pri` buffer size.
const FW_PRI_BYTES: usize = 1 << 20;
/// The IH ring's GART offset and size (`ih_v6_0_sw_init()`: 256 KiB).
const IH_OFF: u64 = 3 << 19;
pub const IH_RING_BYTES: usize = 256 << 10;

/// The layout as the steps and traces report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutReport {
    pub mc: McLayout,
    /// Bytes kept at VRAM 0 for the VBIOS framebuffer.
    pub vbios_fb: u64,
    /// The physical address of VRAM offset 0 (`vm_manager.vram_base_offset`):
    /// `MMMC_VM_FB_OFFSET` in bytes, plus on an XGMI hive member its node's
    /// segment (`gmc_v9_0_vram_gtt_location()`).
    pub vram_base_offset: u64,
    /// The GPU's place in an XGMI hive, if it is in one.
    pub xgmi: Option<barebell::gmc::hub::gfxhub_v1_2::XgmiInfo>,
    /// VMID0's VA range (the GART, grown to cover the ring area).
    pub vmid0: (u64, u64),
    /// VMID0's root table, VRAM physical address.
    pub vmid0_root: u64,
    /// The process tables' root, VRAM physical address.
    pub process_root: u64,
    /// The ring area: first byte (GPU VA = host address) and length, in
    /// VMID0. Its first part holds the driver's structures (VMID0 only);
    /// its last part, [`LayoutReport::user_rings`], the user queues'.
    pub ring_area: (u64, u64),
    /// The user queues' part of the ring area (their AQL rings, pointers,
    /// EOP buffers and signals): first byte and length, mapped in VMID0
    /// and in the process tables.
    pub user_rings: (u64, u64),
    /// The user memory: first byte (GPU VA = host address, process tables
    /// only) and length.
    pub user_memory: (u64, u64),
    /// The user VRAM: GPU VA (process tables only) and length; 0 bytes
    /// unless [`crate::Options::user_vram`] asked for it.
    pub user_vram: (u64, u64),
    /// GTT's bus address (the DMA region's first chunk).
    pub gtt_bus: u64,
}

/// What the gmc step leaves for the later ones.
pub struct Memory<'p> {
    gart: TableArena<'p>,
    pub(crate) process: TableArena<'p>,
    ring_area: Option<DeviceArena<'p>>,
    ring_range: (u64, u64),
    user_rings: Option<DeviceArena<'p>>,
    user_rings_range: (u64, u64),
    user: Option<crate::usermem::UserMemory<'p>>,
    user_range: (u64, u64),
    user_vram: Option<crate::usermem::UserVram<'p>>,
    user_vram_range: (u64, u64),
    pub(crate) cfg: HubConfig,
    /// The gfx11/gfx12 hubs' tables (`None` on GC 9.4.3, whose gfx9 hubs
    /// [`crate::gmc::gmc_v9_0`] programs).
    pub(crate) hubs: Option<Gfx11Hubs>,
    gtt: DmaArena<'p>,
    gtt_bus: u64,
    gart_start: u64,
    pub(crate) bufs: Option<PspBuffers>,
    /// The IH ring and its write-pointer page in GTT (the ih step).
    pub(crate) ih: Option<DmaBuf>,
    /// VRAM past the tables, for the TMR (the psp step).
    pub(crate) vram: VramAllocator,
    pub(crate) mc: McLayout,
    vbios_fb: u64,
    pub(crate) vram_base_offset: u64,
    xgmi: Option<barebell::gmc::hub::gfxhub_v1_2::XgmiInfo>,
}

impl core::fmt::Debug for Memory<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Memory")
            .field("layout", &self.report())
            .finish_non_exhaustive()
    }
}

/// The MMHUB and GFXHUB register tables of a gfx11/gfx12 part.
#[derive(Debug, Clone, Copy)]
pub struct Gfx11Hubs {
    pub mmhub: &'static HubRegs,
    pub gfxhub: &'static HubRegs,
}

impl<'p> Memory<'p> {
    /// The gfx11/gfx12 hub tables, or the typed error of a step that has
    /// no GC 9.4.3 form.
    pub(crate) fn gfx11_hubs(&self, step: Step, g: Generation) -> Result<Gfx11Hubs, BringupError> {
        self.hubs
            .ok_or_else(|| {
                ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
                    "the gfx11/gfx12 hub tables (GC 9.4.3 has gfx9 hubs)",
                    g,
                ))
            })
            .at(step)
    }

    pub fn report(&self) -> LayoutReport {
        LayoutReport {
            mc: self.mc,
            vbios_fb: self.vbios_fb,
            vram_base_offset: self.vram_base_offset,
            xgmi: self.xgmi,
            vmid0: (self.cfg.start, self.cfg.end),
            vmid0_root: self.gart.root(),
            process_root: self.process.root(),
            ring_area: self.ring_range,
            user_rings: self.user_rings_range,
            user_memory: self.user_range,
            user_vram: self.user_vram_range,
            gtt_bus: self.gtt_bus,
        }
    }

    /// The user memory, for the bring-up's result (once).
    pub(crate) fn take_user_memory(&mut self) -> Option<crate::usermem::UserMemory<'p>> {
        self.user.take()
    }

    /// The user VRAM, for the bring-up's result (once).
    pub(crate) fn take_user_vram(&mut self) -> Option<crate::usermem::UserVram<'p>> {
        self.user_vram.take()
    }

    /// The ring area's driver part (VMID0 only), for the rings and queue
    /// steps (once).
    pub(crate) fn take_ring_area(&mut self) -> DeviceArena<'p> {
        self.ring_area.take().unwrap_or_else(|| {
            // SAFETY: an empty range: nothing can be placed in it.
            unsafe { DeviceArena::new(NonNull::dangling(), 0) }
        })
    }

    /// The ring area's user part (VMID0 and the process tables), for the
    /// queue step (once).
    /// The process tables, for buffers mapped after the bring-up
    /// ([`crate::Gpu::map_process`]).
    pub(crate) fn into_process_tables(self) -> TableArena<'p> {
        self.process
    }

    pub(crate) fn take_user_rings(&mut self) -> DeviceArena<'p> {
        self.user_rings.take().unwrap_or_else(|| {
            // SAFETY: an empty range: nothing can be placed in it.
            unsafe { DeviceArena::new(NonNull::dangling(), 0) }
        })
    }
}

fn layout_err(e: LayoutError) -> BringupError {
    BringupError {
        step: Step::Gmc,
        kind: ErrorKind::Layout(e),
        teardown: None,
    }
}

/// A CPU view of `r` (VRAM) through BAR0, as `n` page tables.
///
/// A `&mut` out of a shared platform reference: sound because the
/// platform promises its VRAM is used only through it, this bring-up
/// claimed the platform (once), and the VRAM allocator hands each range
/// out once.
#[allow(clippy::mut_from_ref)]
fn vram_tables<'p>(p: &'p dyn Platform, r: &VramRange) -> Result<&'p mut [Table], BringupError> {
    let n = usize::try_from(r.size / 4096)
        .map_err(|_| layout_err(LayoutError::TooLarge { size: r.size }))?;
    let ptr = p.vram().at(r.offset, r.size).ok_or_else(|| {
        layout_err(LayoutError::BeyondBar0 {
            offset: r.offset,
            end: r.end(),
            bar0: p.vram().len,
        })
    })?;
    if !(ptr.as_ptr() as usize).is_multiple_of(core::mem::align_of::<Table>()) {
        return Err(layout_err(LayoutError::Misaligned { offset: r.offset }));
    }
    // SAFETY: `n` pages of VRAM inside BAR0 (checked by `at`), handed out
    // once by the VRAM allocator, so nothing else aliases them; the
    // platform keeps BAR0 mapped for 'p and lets nothing else use it
    // (its `unsafe impl`), and the platform was claimed by this
    // bring-up. `Table` is plain u64s and the pointer is aligned.
    let t = unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr().cast::<Table>(), n) };
    t.fill(Table::EMPTY);
    Ok(t)
}

/// The ring area's first and last GPU VA (= host address), refused if it
/// falls in the FB (the system aperture, where VMID0 does not
/// translate), in the GART, or at or above the MC hole.
fn ring_range(start: u64, len: u64, mc: &McLayout) -> Result<(u64, u64), BringupError> {
    let end = start + len - 1;
    let overlaps = |a: u64, b: u64| start <= b && a <= end;
    let clash = if overlaps(mc.fb_start, mc.fb_end) {
        Some(("the FB (system aperture)", mc.fb_start, mc.fb_end))
    } else if overlaps(mc.gart_start, mc.gart_end) {
        Some(("the GART", mc.gart_start, mc.gart_end))
    } else if end >= GMC_HOLE_START {
        Some(("the MC hole", GMC_HOLE_START, u64::MAX))
    } else {
        None
    };
    match clash {
        Some((what, a, b)) => Err(layout_err(LayoutError::RingAreaClash {
            start,
            end,
            what,
            a,
            b,
        })),
        None => Ok((start, end)),
    }
}

/// The VBIOS framebuffer's size in bytes: `amdgpu_gmc_get_vbios_fb_size()`
/// where `amdgpu_gmc_get_vbios_allocations()` calls it, i.e. only with
/// display hardware (`amdgpu_device_has_display_hardware()`), by the GMC
/// version's block.
fn vbios_fb_size(gpu: &Gpu<'_>) -> Result<u64, BringupError> {
    if gpu.ips.dmu.is_none() {
        return Ok(0);
    }
    gpu.blocks.gmc.vbios_fb_size(gpu)
}

/// Flags of GTT and ring-area mappings: cached system memory
/// (`AMDGPU_PTE_SYSTEM | AMDGPU_PTE_SNOOPED`, `amdgpu_ttm_tt_pte_flags()`).
const SYSTEM_RW: Flags = Flags {
    readable: true,
    writeable: true,
    executable: false,
    system: true,
    snooped: true,
};

/// Flags of the user memory: what KFD gives a writable, executable
/// system-memory allocation (module docs): `SYSTEM_RW` plus EXECUTABLE,
/// MTYPE_NC (0).
const SYSTEM_RWX: Flags = Flags {
    executable: true,
    ..SYSTEM_RW
};

/// Flags of the user VRAM: what KFD gives a writable VRAM allocation
/// (`amdgpu_gem_va_map_flags()`: READABLE, WRITEABLE; VRAM, so neither
/// SYSTEM nor SNOOPED; not executable).
const VRAM_RW: Flags = Flags {
    readable: true,
    writeable: true,
    executable: false,
    system: false,
    snooped: false,
};

/// Maps `[va, va + len)` of the DMA region (GPU VA = host address, `off`
/// bytes from its start) into `t`, page runs split at chunk boundaries
/// (each chunk is contiguous on the bus, the chunks need not be).
pub(crate) fn map_dma_range(
    t: &mut TableArena<'_>,
    table: &'static str,
    chunk_bus: &[u64],
    va: u64,
    off: usize,
    len: usize,
    flags: Flags,
) -> Result<(), BringupError> {
    let mut done = 0usize;
    while done < len {
        let o = off + done;
        let k = o / DMA_CHUNK;
        let n = (DMA_CHUNK - o % DMA_CHUNK).min(len - done);
        let a = va + done as u64;
        let bus = chunk_bus
            .get(k)
            .map(|b| b + (o % DMA_CHUNK) as u64)
            .ok_or_else(|| {
                layout_err(LayoutError::DmaTooSmall {
                    len: off + len,
                    chunk: DMA_CHUNK,
                })
            })?;
        t.map(a, bus, n as u64, flags, false)
            .map_err(|why| ErrorKind::PageTable { table, va: a, why })
            .at(Step::Gmc)?;
        done += n;
    }
    Ok(())
}

/// Places everything, enables the MMHUB; keeps the DMA region's last
/// `user_bytes` as user memory.
pub fn run<'p>(
    gpu: &Gpu<'p>,
    nbio: &Nbio,
    user_bytes: usize,
    (user_vram, vram_va, spare_tables): (usize, UserVramVa, usize),
    sink: &dyn Sink,
) -> Result<Memory<'p>, BringupError> {
    let p = gpu.platform;
    let hubs = gpu.blocks.gmc.hub_tables(&gpu.ips)?;
    let (mc, vram_base_offset, xgmi) = fb_location(gpu)?;
    let plan = place_vram(gpu, &mc, user_bytes, user_vram, spare_tables)?;
    let (gart, mut process) = table_arenas(gpu, &plan, vram_base_offset)?;
    let dma = p.dma();
    let (gtt, gtt_bus) = gtt_arena(&dma)?;
    let area = place_dma_rest(&dma, &mc, user_bytes)?;
    let mut gart = gart.with_va_base(area.vmid0.0);
    let user_va = map_dma_rest(&mut gart, &mut process, &dma, &area, user_bytes)?;
    let (user_vram_mem, user_vram_range) = match plan.user_vram_at {
        Some(r) => map_user_vram(p, &mut process, r, &area, vram_base_offset, vram_va)?,
        None => (None, (USER_VRAM_VA, 0)),
    };
    // SAFETY: `[area_at, area_at + driver_len)` is the DMA region past its
    // first chunk, the ring area's first part: valid for 'p and, by the
    // platform's contract, kept mapped until the device can no longer
    // reach it; used by nothing else (the platform was claimed once); and
    // mapped just above at VA = host address in VMID0, the context the
    // rings and every MQD are read in.
    let ring_area = unsafe { DeviceArena::new(area.area_at, area.driver_len) };
    // SAFETY: the rest of the ring area, after the driver part and before
    // the user memory: as above, used by nothing else, and mapped at VA =
    // host address in VMID0 and in the process tables, which the user
    // queue runs in.
    let user_rings = unsafe {
        DeviceArena::new(
            area.area_at.add(area.driver_len),
            area.area_len - area.driver_len,
        )
    };
    // SAFETY: the DMA region's last `user_bytes`, after the ring area: as
    // above, used by nothing else, and mapped at VA = host address in the
    // process tables, which every user queue runs in (the queue step).
    let user =
        unsafe { crate::usermem::UserMemory::new(area.area_at.add(area.area_len), user_bytes) };

    let cfg = vmid0_config(&gart, &area, &mc, plan.scratch.offset + vram_base_offset);
    let mut m = Memory {
        gart,
        process,
        ring_area: Some(ring_area),
        ring_range: (area.ring_va, area.area_len as u64),
        user_rings: Some(user_rings),
        user_rings_range: (
            area.ring_va + area.driver_len as u64,
            (area.area_len - area.driver_len) as u64,
        ),
        user: Some(user),
        user_range: (user_va, user_bytes as u64),
        user_vram: user_vram_mem,
        user_vram_range,
        cfg,
        hubs,
        gtt,
        gtt_bus,
        gart_start: mc.gart_start,
        bufs: None,
        ih: None,
        vram: plan.vram,
        mc,
        vbios_fb: plan.vbios_fb,
        vram_base_offset,
        xgmi,
    };
    bind_gtt_buffers(&mut m)?;
    // The table stores through BAR0 are plain stores; keep the compiler
    // (and the CPU) from moving them past the flush and the hub writes.
    core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    let enabled = gpu.blocks.gmc.enable_hubs(gpu, nbio, &m)?;
    report(sink, &m, &enabled);
    Ok(m)
}

/// The gfx11/gfx12 hubs' register tables (GMC 11.0 and 12.0, which
/// differ only in the tables [`hub_for`] picks).
pub(crate) fn gfx11_12_hub_tables(ips: &crate::discovery::Ips) -> Result<Gfx11Hubs, BringupError> {
    let s = Step::Gmc;
    let mmhub_v = ips.mmhub.version.triple();
    let mmhub = hub_for(hw_id::MMHUB, mmhub_v)
        .ok_or(ErrorKind::Unsupported {
            what: "MMHUB",
            version: mmhub_v,
        })
        .at(s)?;
    let gc_v = ips.gc.version.triple();
    let gfxhub = hub_for(hw_id::GC, gc_v)
        .ok_or(ErrorKind::Unsupported {
            what: "GFXHUB of GC",
            version: gc_v,
        })
        .at(s)?;
    Ok(Gfx11Hubs { mmhub, gfxhub })
}

/// The latched faults of the GFXHUB and the MMHUB on GMC 11.0 and 12.0
/// (`GCVM_L2_PROTECTION_FAULT_STATUS` and its MMHUB twin), once the hubs
/// were set up.
pub(crate) fn gfx11_12_latched_faults(
    gpu: &Gpu<'_>,
) -> Result<alloc::vec::Vec<hub::VmFault>, hub::HubError> {
    let mut faults = alloc::vec::Vec::new();
    if gpu.gfxhub.is_none() {
        return Ok(faults);
    }
    for (id, ip) in [(hw_id::GC, &gpu.ips.gc), (hw_id::MMHUB, &gpu.ips.mmhub)] {
        if let Some(h) = hub_for(id, ip.version.triple()) {
            faults.extend(hub::read_fault(&gpu.bus, &ip.bases, h)?);
        }
    }
    Ok(faults)
}

/// `mmhub_v3_0_gart_disable()` / `mmhub_v4_1_0_gart_disable()`, after the
/// gmc step was begun.
pub(crate) fn gfx11_12_mmhub_off(gpu: &Gpu<'_>) -> crate::error::Outcome {
    if gpu.entered >= Step::Gmc {
        crate::gmc::hub_off(&gpu.bus, hw_id::MMHUB, &gpu.ips.mmhub)
    } else {
        crate::error::Outcome::NotNeeded("the MMHUB was never programmed")
    }
}

/// The MC layout around the FB the VBIOS placed, `vm_manager.vram_base_offset`
/// (`MMMC_VM_FB_OFFSET` in bytes) and the GPU's place in an XGMI hive.
///
/// On a hive member `gmc_v9_0_vram_gtt_location()` adds
/// `physical_node_id * node_segment_size` (`gfxhub_v1_2_get_xgmi_info()`)
/// both to the FB base, giving `vram_start`, and to `vram_base_offset`,
/// "the xgmi offset of the physical node"; tinygrad does the same
/// (`AM_GMC.init_sw`: `paddr_base`, `mc_base = fb_base + paddr_base`).
/// Without it every VRAM physical address (the page-table bases and
/// PDEs, the default page, the TMR) would name node 0's memory.
fn fb_location(
    gpu: &Gpu<'_>,
) -> Result<
    (
        McLayout,
        u64,
        Option<barebell::gmc::hub::gfxhub_v1_2::XgmiInfo>,
    ),
    BringupError,
> {
    let s = Step::Gmc;
    let bus = &gpu.bus;
    let ips = &gpu.ips;
    // FB location from the MMHUB (`mmhub_v*_get_fb_location()`); FB
    // offset from the hub Linux asks (`mmhub_v3_0_get_mc_fb_offset()`;
    // on GC 9.x `gfxhub_v1_2_get_mc_fb_offset()` of XCC 0, which
    // `gmc_v9_0_vram_gtt_location()` uses).
    let r = gpu.blocks.gmc.fb_regs(ips);
    let (fb_reg, offset_reg, offset_bases, place) = (r.location, r.offset, r.offset_bases, r.gart);
    let read = |r: barebell::regs::Reg, bases| -> Result<u32, BringupError> {
        let v = bus.block(bases).read(r).at(s)?;
        if v == barebell::bus::ALL_ONES {
            return Err(ErrorKind::DeviceGone { register: r.name }).at(s);
        }
        Ok(v)
    };
    let hive = gpu.blocks.gmc.hive(gpu)?;
    let fb_base = read(fb_reg, ips.mmhub.bases)?;
    // `mmhub_v3_0_get_mc_fb_offset()` / `mmhub_v4_1_0_get_mc_fb_offset()`:
    // the whole register, shifted by 24.
    let fb_offset = u64::from(read(offset_reg, offset_bases)?) << 24;
    let mc = match hive {
        Some(h) => McLayout::hive(
            place,
            fb_base,
            h.fb_location_top,
            ips.vram_bytes,
            h.xgmi.node_offset(),
        ),
        None => McLayout::new(place, fb_base, ips.vram_bytes),
    }
    .ok_or_else(|| {
        layout_err(LayoutError::McHole {
            vram_bytes: ips.vram_bytes,
            fb_base,
        })
    })?;
    let node_offset = hive.map_or(0, |h| h.xgmi.node_offset());
    let vram_base_offset = fb_offset
        .checked_add(node_offset)
        .ok_or_else(|| layout_err(LayoutError::TooLarge { size: node_offset }))?;
    Ok((mc, vram_base_offset, hive.map(|h| h.xgmi)))
}

/// VRAM as the gmc step lays it out ([`place_vram`]).
struct VramPlan {
    /// The allocator past the ranges below, kept for the TMR.
    vram: VramAllocator,
    /// Bytes kept at VRAM 0 for the VBIOS framebuffer.
    vbios_fb: u64,
    /// VMID0's tables.
    tables_at: VramRange,
    /// The default (scratch) page.
    scratch: VramRange,
    /// The process tables.
    process_at: VramRange,
    /// The user VRAM, if asked for.
    user_vram_at: Option<VramRange>,
}

/// VRAM, bottom up, from above the VBIOS framebuffer: VMID0's tables, the
/// default page, the process tables and the user VRAM.
fn place_vram(
    gpu: &Gpu<'_>,
    mc: &McLayout,
    user_bytes: usize,
    user_vram: usize,
    spare_tables: usize,
) -> Result<VramPlan, BringupError> {
    let s = Step::Gmc;
    let vbios_fb = vbios_reservation(vbios_fb_size(gpu)?, mc.vram_bytes);
    let mut vram = VramAllocator::with_boot_region(mc.vram_bytes, mc.vram_start).at(s)?;
    // A partial re-init leaves sOS running on the TMR barebell's earlier
    // run gave it (`psp_tmr_init()` allocates it, only `psp_hw_fini()`
    // frees it): nothing laid out here may overlap it.
    if let Some((offset, size)) = gpu.start.as_ref().and_then(|r| r.live_tmr) {
        vram.keep_clear_of(offset, size);
    }
    if vbios_fb > 0 {
        vram.alloc(vbios_fb, PAGE_ALIGN).at(s)?;
    }
    let tables_at = vram.alloc(GART_TABLES as u64 * 4096, PAGE_ALIGN).at(s)?;
    let scratch = vram.alloc(4096, PAGE_ALIGN).at(s)?;
    let process_at = vram
        .alloc(
            (process_tables(user_bytes, user_vram) + spare_tables) as u64 * 4096,
            PAGE_ALIGN,
        )
        .at(s)?;
    // The user VRAM, 2 MiB aligned, mapped once the process tables exist
    // ([`map_user_vram`]).
    let user_vram_at = if user_vram > 0 {
        Some(
            vram.alloc((user_vram as u64).next_multiple_of(4096), 2 << 20)
                .at(s)?,
        )
    } else {
        None
    };
    Ok(VramPlan {
        vram,
        vbios_fb,
        tables_at,
        scratch,
        process_at,
        user_vram_at,
    })
}

/// VMID0's tables and the process tables, in the VRAM [`place_vram`]
/// gave them.
fn table_arenas<'p>(
    gpu: &Gpu<'p>,
    plan: &VramPlan,
    vram_base_offset: u64,
) -> Result<(TableArena<'p>, TableArena<'p>), BringupError> {
    let p = gpu.platform;
    // PDEs and the root hold VRAM physical addresses (Linux converts them
    // with `amdgpu_gmc_vram_mc2pa()` in `gmc_v11_0_get_vm_pde()`).
    let gart = TableArena::new(
        vram_tables(p, &plan.tables_at)?,
        plan.tables_at.offset + vram_base_offset,
        gpu.ips.generation,
    );
    let process = TableArena::new(
        vram_tables(p, &plan.process_at)?,
        plan.process_at.offset + vram_base_offset,
        gpu.ips.generation,
    );
    Ok((gart, process))
}

/// GTT: the DMA region's first chunk, at its bus address through the
/// GART; the rest is the ring area. Returns the arena and its bus address.
fn gtt_arena<'p>(dma: &DmaRegion<'p>) -> Result<(DmaArena<'p>, u64), BringupError> {
    let too_small = LayoutError::DmaTooSmall {
        len: dma.len,
        chunk: DMA_CHUNK,
    };
    let gtt_bus = *dma.chunk_bus.first().ok_or_else(|| layout_err(too_small))?;
    if dma.len <= DMA_CHUNK {
        return Err(layout_err(too_small));
    }
    // SAFETY: the platform's DMA region is `dma.len` bytes of host memory
    // that lives for 'p and that nothing else uses (its `unsafe impl`);
    // this bring-up claimed the platform. Chunk 0 goes to the GTT arena,
    // the rest to the ring area, so the two never overlap.
    let gtt_mem = unsafe { core::slice::from_raw_parts_mut(dma.host.as_ptr(), DMA_CHUNK) };
    // SAFETY: chunk 0 of the platform's DMA region is reached by the
    // device at `chunk_bus[0]` for as long as the device may use it (the
    // `Platform` contract on `dma`), and `gtt_mem` is exactly that chunk.
    let gtt = unsafe { DmaArena::new(gtt_mem, gtt_bus) }.at(Step::Gmc)?;
    Ok((gtt, gtt_bus))
}

/// Where the DMA region past its first chunk goes ([`place_dma_rest`]).
struct DmaRest {
    /// The ring area's first byte (GPU VA = host address); the user
    /// memory follows it.
    area_at: NonNull<u8>,
    /// The ring area's length.
    area_len: usize,
    /// Its first part's length: the driver's structures, VMID0 only.
    driver_len: usize,
    /// Bytes past the first chunk: the ring area and the user memory.
    rest: usize,
    /// The ring area's GPU VA.
    ring_va: u64,
    /// VMID0's first and last VA.
    vmid0: (u64, u64),
}

/// The rest of the DMA region: the ring area, then the user memory, both
/// at VA = host address; and VMID0's range, which covers the GART and the
/// ring area.
fn place_dma_rest(
    dma: &DmaRegion<'_>,
    mc: &McLayout,
    user_bytes: usize,
) -> Result<DmaRest, BringupError> {
    let rest = dma.len - DMA_CHUNK;
    if !user_bytes.is_multiple_of(4096)
        || rest < user_bytes.saturating_add(crate::usermem::MIN_RING_AREA)
    {
        return Err(layout_err(LayoutError::UserMemory {
            asked: user_bytes,
            dma: dma.len,
            ring_min: crate::usermem::MIN_RING_AREA,
        }));
    }
    // SAFETY: as in `gtt_arena`; `dma.len > DMA_CHUNK` (checked there), so
    // this stays inside.
    let area_at = unsafe { dma.host.add(DMA_CHUNK) };
    let area_len = rest - user_bytes;
    // Half for the driver, half for the user queues, page aligned.
    let driver_len = (area_len / 2) & !0xFFF;
    // Both the ring area and the user memory sit at VA = host address.
    let (ring_va, _) = ring_range(area_at.as_ptr() as u64, rest as u64, mc)?;
    let ring_end = ring_va + area_len as u64 - 1;
    // VMID0 covers both the GART and the ring area; the hub walks `VA -
    // PAGE_TABLE_START_ADDR`, so its tables are indexed from that start
    // (`amdgpu_gart_map()` indexes the GART by the offset into the
    // aperture; tinygrad's AM by `vaddr - va_base`). The process tables
    // are a user context's: start 0 (`*_setup_vmid_config()`).
    let (vmid0_start, vmid0_end) = (mc.gart_start.min(ring_va), mc.gart_end.max(ring_end));
    if vmid0_end - vmid0_start >= 1 << 48 {
        return Err(layout_err(LayoutError::Vmid0TooWide {
            start: vmid0_start,
            end: vmid0_end,
        }));
    }
    Ok(DmaRest {
        area_at,
        area_len,
        driver_len,
        rest,
        ring_va,
        vmid0: (vmid0_start, vmid0_end),
    })
}

/// The ring area at VA = host address in VMID0 and in the process
/// tables; the user memory after it in the process tables only. Returns
/// the user memory's VA.
fn map_dma_rest<'t>(
    gart: &mut TableArena<'t>,
    process: &mut TableArena<'t>,
    dma: &DmaRegion<'_>,
    area: &DmaRest,
    user_bytes: usize,
) -> Result<u64, BringupError> {
    // The driver's part in VMID0 only: KFD maps none of the driver's
    // structures into a process VM (`allocate_mqd()` in
    // `kfd_mqd_manager_v11.c` takes MQDs from `kfd_gtt_sa_allocate()`;
    // the MES, KIQ and HIQ rings and their fences are kernel rings and
    // write-back slots in the kernel's GTT, reached through VMID0).
    map_dma_range(
        gart,
        "VMID0",
        dma.chunk_bus,
        area.ring_va,
        DMA_CHUNK,
        area.area_len,
        SYSTEM_RW,
    )?;
    // The user queues' part in the process tables too: their ring,
    // pointers and EOP buffer are user memory
    // (`set_queue_properties_from_user()` in `kfd_chardev.c`).
    map_dma_range(
        process,
        "process",
        dma.chunk_bus,
        area.ring_va + area.driver_len as u64,
        DMA_CHUNK + area.driver_len,
        area.area_len - area.driver_len,
        SYSTEM_RW,
    )?;
    let user_va = area.ring_va + area.area_len as u64;
    map_dma_range(
        process,
        "process",
        dma.chunk_bus,
        user_va,
        DMA_CHUNK + area.area_len,
        user_bytes,
        SYSTEM_RWX,
    )?;
    Ok(user_va)
}

/// The user VRAM `r` in the process tables at the VA `at` asks for,
/// refused if it would meet the ring area; its CPU view through BAR0 and
/// its range.
fn map_user_vram<'p>(
    p: &'p dyn Platform,
    process: &mut TableArena<'_>,
    r: VramRange,
    area: &DmaRest,
    vram_base_offset: u64,
    at: UserVramVa,
) -> Result<(Option<crate::usermem::UserVram<'p>>, (u64, u64)), BringupError> {
    let host = p.vram().at(r.offset, r.size).ok_or_else(|| {
        layout_err(LayoutError::BeyondBar0 {
            offset: r.offset,
            end: r.end(),
            bar0: p.vram().len,
        })
    })?;
    let va = match at {
        UserVramVa::Fixed => USER_VRAM_VA,
        UserVramVa::Host => host.as_ptr() as u64,
    };
    let (ring_va, rest) = (area.ring_va, area.rest);
    let clash = va <= ring_va + rest as u64 && ring_va <= va + r.size;
    if clash {
        return Err(layout_err(LayoutError::RingAreaClash {
            start: ring_va,
            end: ring_va + rest as u64 - 1,
            what: "the user VRAM",
            a: va,
            b: va + r.size - 1,
        }));
    }
    process
        .map(va, r.offset + vram_base_offset, r.size, VRAM_RW, false)
        .map_err(|why| ErrorKind::PageTable {
            table: "process",
            va,
            why,
        })
        .at(Step::Gmc)?;
    // SAFETY: `r` is VRAM inside BAR0 (checked by `at`), handed out
    // once by the VRAM allocator; the platform keeps BAR0 mapped for
    // 'p and lets nothing else use it; it was just mapped at `va` in the
    // process tables.
    let mem = unsafe { crate::usermem::UserVram::new(host, va, r.size as usize) };
    Ok((Some(mem), (va, r.size)))
}

/// VMID0's hub configuration: its tables and range, the FB, the default
/// page at VRAM physical address `default_page`.
fn vmid0_config(
    gart: &TableArena<'_>,
    area: &DmaRest,
    mc: &McLayout,
    default_page: u64,
) -> HubConfig {
    HubConfig {
        pt_base: gart.root(),
        start: area.vmid0.0,
        end: area.vmid0.1,
        fb_start: mc.fb_start,
        fb_end: mc.fb_end,
        // Empty (start > end): AGP stays off (`amdgpu_agp` defaults to off
        // for these parts' `amdgpu_gmc_agp_location()` callers).
        agp_start: u64::MAX >> 16,
        agp_end: 0,
        default_page,
        // Set by `bind_gtt_buffers`, once the GTT buffers are placed.
        dummy_page: 0,
    }
}

/// The GTT buffers: the PSP's, the IH ring's and the dummy page. They are
/// bound before the hub is enabled; the VMID0 flush after `gart_enable`
/// covers them.
fn bind_gtt_buffers(m: &mut Memory<'_>) -> Result<(), BringupError> {
    m.bufs = Some(PspBuffers {
        fw_pri: gtt_buf(m, FW_PRI_OFF, FW_PRI_BYTES, psp::BOOTLOADER_ALIGN)?,
        ring: gtt_buf(m, RING_OFF, psp::RING_BYTES, PAGE_ALIGN)?,
        cmd: gtt_buf(m, CMD_OFF, 4096, PAGE_ALIGN)?,
        fence: gtt_buf(m, FENCE_OFF, 4096, PAGE_ALIGN)?,
    });
    // The IH ring (`ih_v6_0_sw_init()`: 256 KiB, GPU address in GTT when
    // the PSP loads firmware) with its write-pointer page.
    m.ih = Some(gtt_buf(
        m,
        IH_OFF,
        IH_RING_BYTES + barebell::ih::WPTR_PAGE,
        PAGE_ALIGN,
    )?);
    // `adev->dummy_page_addr`: a page of its own, since the hub may
    // redirect faulting writes there.
    let dummy = m.gtt.alloc(4096, PAGE_ALIGN).at(Step::Gmc)?;
    m.cfg.dummy_page = dummy.bus_addr();
    Ok(())
}

/// The MMHUB's GART on (GMC 11.0 and 12.0; the GFXHUB follows in the
/// rlc step). Returns what was enabled, for the report.
pub(crate) fn gfx11_12_enable_mmhub(
    gpu: &Gpu<'_>,
    nbio: &Nbio,
    m: &Memory<'_>,
) -> Result<alloc::string::String, BringupError> {
    let s = Step::Gmc;
    let bus = &gpu.bus;
    let ips = &gpu.ips;
    let h = m.gfx11_hubs(s, ips.generation)?;
    flush_hdp(bus, nbio).at(s)?;
    hub::gart_enable(bus, &ips.mmhub.bases, h.mmhub, &m.cfg).at(s)?;
    // gmc_v11_0_gart_enable() / gmc_v12_0_gart_enable(): HDP flush, the
    // fault defaults (amdgpu_vm_fault_stop's default: faults go to the
    // default page), then VMID0's TLB flush on the MMHUB's GART engine.
    flush_hdp(bus, nbio).at(s)?;
    hub::set_fault_enable_default(bus, &ips.mmhub.bases, h.mmhub, true).at(s)?;
    hub::invalidate(
        bus,
        gpu.platform.clock(),
        &ips.mmhub.bases,
        h.mmhub,
        GART_ENGINE,
        0,
        0,
    )
    .at(s)?;
    Ok(alloc::string::String::from(h.mmhub.name))
}

/// The step's line: the layout and what was enabled; on an XGMI hive
/// member first a line with its node offset.
fn report(sink: &dyn Sink, m: &Memory<'_>, enabled: &str) {
    let r = m.report();
    if let Some(x) = r.xgmi {
        sink.step(
            Step::Gmc,
            format_args!(
                "XGMI node {} of {}, segment {:#x}: node offset {:#x} (gmc_v9_0_vram_gtt_location()); VRAM at MC {:#x} (FB base + node offset), physical {:#x} (FB_OFFSET + node offset)",
                x.node,
                x.nodes,
                x.segment,
                x.node_offset(),
                r.mc.vram_start,
                r.vram_base_offset,
            ),
        );
    }
    sink.step(
        Step::Gmc,
        format_args!(
            "FB at MC {:#x}..={:#x}, FB_OFFSET {:#x}, VBIOS framebuffer {:#x} bytes kept; GART {:#x}..={:#x}; {} enabled, VMID0 {:#x}..={:#x} with tables at VRAM {:#x}; ring area at VA = host {:#x}, {:#x} bytes, also in the process tables at VRAM {:#x}; user memory at VA = host {:#x}, {:#x} bytes, process tables only, executable; PSP buffers in GTT at bus {:#x}",
            r.mc.fb_start,
            r.mc.fb_end,
            r.vram_base_offset,
            r.vbios_fb,
            r.mc.gart_start,
            r.mc.gart_end,
            enabled,
            r.vmid0.0,
            r.vmid0.1,
            r.vmid0_root,
            r.ring_area.0,
            r.ring_area.1,
            r.process_root,
            r.user_memory.0,
            r.user_memory.1,
            r.gtt_bus,
        ),
    );
}

/// Maps `len` bytes of GTT at GART offset `off` (4 KiB PTEs, cached
/// system memory) and returns the PSP's view of it.
fn gtt_buf(m: &mut Memory<'_>, off: u64, len: usize, align: u64) -> Result<DmaBuf, BringupError> {
    let s = Step::Gmc;
    let mut chunk = m.gtt.alloc(len, align).at(s)?;
    let va = m.gart_start + off;
    m.gart
        .map(va, chunk.bus_addr(), len as u64, SYSTEM_RW, false)
        .map_err(|why| ErrorKind::PageTable {
            table: "VMID0",
            va,
            why,
        })
        .at(s)?;
    let host = NonNull::new(chunk.as_mut_ptr()).ok_or_else(|| layout_err(LayoutError::NullGtt))?;
    // SAFETY: the chunk is `len` bytes of the claimed DMA region, handed
    // out once by the arena and used by the host only through this
    // DmaBuf; the device reaches it at `va` through the GART mapping just
    // written.
    Ok(unsafe { DmaBuf::new(host, len, va) })
}

/// One hub's translation off ([`hub::gart_disable`]).
pub(crate) fn hub_off(
    bus: &crate::bus::Bus<'_>,
    id: u16,
    ip: &barebell::discovery::IpInfo,
) -> crate::error::Outcome {
    match hub::hub_for(id, ip.version.triple()) {
        Some(regs) => crate::error::outcome(hub::gart_disable(bus, &ip.bases, regs).map(|n| {
            alloc::format!(
                "{}: 16 contexts off ({n} were enabled), L1 TLB and L2 cache off",
                regs.name
            )
        })),
        None => crate::error::Outcome::NotNeeded(
            "no register table for this hub: nothing was programmed",
        ),
    }
}

#[cfg(test)]
mod block_tests {
    use super::block_for;

    #[test]
    fn each_gc_version_gets_linuxs_gmc_block() {
        // amdgpu_discovery_set_gmc_ip_blocks(): GC 9.4.2 and 9.4.3 →
        // gmc_v9_0, GC 11.x → gmc_v11_0, GC 12.x → gmc_v12_0.
        assert_eq!(block_for((9, 4, 3)).unwrap().name(), "gmc_v9_0");
        assert_eq!(block_for((9, 4, 2)).unwrap().name(), "gmc_v9_0");
        assert_eq!(block_for((11, 0, 0)).unwrap().name(), "gmc_v11_0");
        assert_eq!(block_for((11, 0, 3)).unwrap().name(), "gmc_v11_0");
        assert_eq!(block_for((12, 0, 1)).unwrap().name(), "gmc_v12_0");
        assert!(block_for((9, 4, 1)).is_none());
    }
}
