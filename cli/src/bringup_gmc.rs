//! The `gmc` bring-up step: VMID0 page tables (the GART), then the GFXHUB
//! and MMHUB of the part initialised on their hub models, both of which
//! must then translate through the runtime's tables.
//!
//! Navi31 runs GFXHUB 3.0 and MMHUB 3.0.0, Navi48 GFXHUB 12.0 and
//! MMHUB 4.1.0, all through the one `hub::gart_enable` sequence with the
//! hub's register table. As in `gmc_v11_0_gart_enable()` /
//! `gmc_v12_0_gart_enable()`, both hubs get the same VMID0 context (one
//! GART table). The MMHUB is the one that matters for the PSP: it is an
//! MMHUB client, so its buffers behind VMID0 are translated by the
//! MMHUB's context, and [`GmcState`] keeps everything that context needs
//! alive for the steps after this one.

use crate::bringup::BringupArgs;
use barebell::bus::trace::{Access, Symbols, TraceBus};
use barebell::discovery::{Discovery, hw_id};
use barebell::gmc::hub::{GART_ENGINE, HubConfig, HubRegs, gart_enable, hub_for, invalidate};
use barebell::gmc::pagetable::{Flags, LARGE_PAGE, Table, TableArena};
use barebell::mem::{VramAllocator, VramRange};
use barebell::regs::IpBases;
use barebell_model::dma::Dma;
use barebell_model::gmc::Access as VmAccess;
use barebell_model::hub::HubModel;
use core::ptr::NonNull;

/// Where VRAM starts in the MC map: a model value.
pub const FB_START: u64 = 0x0080_0000_0000;
/// VMID0's VA range (the GART): the first GiB.
pub const GART_END: u64 = (1 << 30) - 1;
/// Page tables available to VMID0: the root and what later steps map.
pub const VMID0_TABLES: usize = 16;

/// One initialised hub: its model, its table and where its block sits.
#[derive(Debug)]
pub struct HubState<'c> {
    /// The hub model, VMID0 enabled.
    pub model: HubModel<'c>,
    /// The runtime's register table it was programmed through.
    pub regs: &'static HubRegs,
    /// Discovered bases of its block (GC or MMHUB).
    pub bases: IpBases,
}

/// What the `gmc` step leaves for later steps: both hubs with VMID0
/// enabled, the VRAM allocator, VMID0's tables (shared by both hubs, as
/// Linux shares `adev->gart`) and the DMA view the hub models read the
/// tables through.
// The fields are for the steps after `gmc`; until those read them, holding
// them (and so the hub models' state) is all this struct does.
#[allow(dead_code)]
#[derive(Debug)]
pub struct GmcState<'c> {
    pub gfxhub: HubState<'c>,
    pub mmhub: HubState<'c>,
    pub vram: VramAllocator,
    /// VMID0's tables; map more with `vmid0.map(..)`, the hubs walk them
    /// from the root they were programmed with.
    pub vmid0: TableArena<'static>,
    /// The tables' memory as the hub models read it (VRAM offset → host
    /// backing).
    pub dma: Dma,
    /// Where VMID0's tables sit in VRAM, and their host backing.
    pub tables_at: VramRange,
    pub tables_host: NonNull<u8>,
    /// What both hubs were programmed with.
    pub config: HubConfig,
    /// The 2 MiB VRAM page mapped at VA 0.
    pub page: VramRange,
}

fn hub_state<'c>(
    clock: &'c barebell_model::SimClock,
    d: &Discovery<'_>,
    hw: u16,
    what: &str,
) -> Result<HubState<'c>, String> {
    let ip = d
        .ip(hw, 0)
        .ok_or_else(|| format!("gmc: no {what} in discovery"))?;
    let regs = hub_for(hw, ip.version.triple()).ok_or_else(|| {
        format!(
            "gmc: {what} {:?} has no hub init (built: GFXHUB 3.0, MMHUB 3.0.0, GFXHUB 12.0, MMHUB 4.1.0)",
            ip.version.triple()
        )
    })?;
    Ok(HubState {
        model: HubModel::for_hub(clock, ip.bases, regs),
        regs,
        bases: ip.bases,
    })
}

/// Runs the `gmc` step on its own hub models and returns them.
pub fn step<'c>(
    args: &BringupArgs,
    clock: &'c barebell_model::SimClock,
    d: &Discovery<'_>,
    vram_mib: u32,
) -> Result<GmcState<'c>, String> {
    let trace = args.trace;
    let gfxhub = hub_state(clock, d, hw_id::GC, "GC")?;
    let mmhub = hub_state(clock, d, hw_id::MMHUB, "MMHUB")?;
    let format = gfxhub.regs.generation;
    // VMID0: a 2 MiB page of VRAM at VA 0, taken from the allocator so it
    // stays below the discovery/boot region, and the tables themselves in
    // VRAM too (host memory the hub models read as that VRAM). PTEs and
    // PDEs hold VRAM physical addresses, as Linux's do
    // (`amdgpu_gmc_vram_mc2pa()` in `gmc_v11_0_get_vm_pde()`; a VRAM PTE
    // is the BO's offset plus `vram_base_offset`, 0 on a dGPU); here a
    // VRAM offset is its physical address.
    let size = u64::from(vram_mib) << 20;
    let mut vram =
        VramAllocator::with_boot_region(size, FB_START).map_err(|e| format!("gmc: {e}"))?;
    let page = vram
        .alloc(LARGE_PAGE, LARGE_PAGE)
        .map_err(|e| format!("gmc: {e}"))?;
    // The page the system aperture answers unmapped accesses with
    // (`mem_scratch`); its physical address is its VRAM offset here.
    let scratch = vram.alloc(4096, 4096).map_err(|e| format!("gmc: {e}"))?;
    let table_bytes = (VMID0_TABLES * 4096) as u64;
    let tables_at = vram
        .alloc(table_bytes, 4096)
        .map_err(|e| format!("gmc: VMID0 tables: {e}"))?;
    let tables: &'static mut [Table] =
        Box::leak(vec![Table::EMPTY; VMID0_TABLES].into_boxed_slice());
    let tables_host = NonNull::new(tables.as_mut_ptr().cast::<u8>()).ok_or("gmc: null tables")?;
    let mut dma = Dma::default();
    // SAFETY: leaked, so it lives as long as `dma`; the host writes the
    // tables through `vmid0` before the models walk them.
    unsafe { dma.map_at(tables_at.offset, tables_host.as_ptr(), table_bytes) };
    let mut vmid0 = TableArena::new(tables, tables_at.offset, format);
    let rw = Flags {
        readable: true,
        writeable: true,
        executable: false,
        system: false,
        snooped: false,
    };
    vmid0
        .map(0, page.offset, LARGE_PAGE, rw, true)
        .map_err(|e| format!("gmc: {e:?}"))?;
    let config = HubConfig {
        pt_base: vmid0.root(),
        start: 0,
        end: GART_END,
        fb_start: FB_START,
        fb_end: FB_START + size - 1,
        agp_start: u64::MAX >> 16,
        agp_end: 0,
        default_page: scratch.offset,
        dummy_page: 0,
    };
    // gmc_v11_0_gart_enable() / gmc_v12_0_gart_enable(): GFXHUB, then MMHUB.
    for h in [&gfxhub, &mmhub] {
        let blocks = [(h.regs.all, h.bases)];
        let bus = TraceBus::new(&h.model, Symbols { blocks: &blocks }, move |a: Access| {
            if trace {
                println!("  {a}");
            }
        });
        gart_enable(&bus, &h.bases, h.regs, &config)
            .map_err(|e| format!("gmc: {}: {e}", h.regs.name))?;
        // VMID0's TLB flush on the GART engine, as gmc_v1x_0_gart_enable()
        // (MMHUB) and gfx_v1x_0_gfxhub_enable() (GFXHUB) follow the hub's
        // init with it. No HDP flush: the tables are host memory here.
        invalidate(&bus, clock, &h.bases, h.regs, GART_ENGINE, 0, 0)
            .map_err(|e| format!("gmc: {} VMID0 flush: {e}", h.regs.name))?;
        let t = h
            .model
            .translate(&dma, 0x1000, VmAccess::Read)
            .map_err(|e| format!("gmc: the {} model refused VA 0x1000: {e:?}", h.regs.name))?;
        if h.model.stale_walks() != 0 {
            return Err(format!(
                "gmc: {}: the model walked VMID0 before its TLB flush",
                h.regs.name
            ));
        }
        if t.pa != page.offset + 0x1000 {
            return Err(format!(
                "gmc: {}: VA 0x1000 went to {:#x}",
                h.regs.name, t.pa
            ));
        }
        let inv = h.model.invalidations();
        println!(
            "step gmc: {} enabled, VMID0 flushed on engine {GART_ENGINE} ({}); VA 0x1000 -> VRAM {:#x} through the hub model's walk ({} KiB TLB entry), root at VRAM {:#x}",
            h.regs.name,
            if h.regs.use_semaphore {
                format!(
                    "semaphore taken {} / released {}, private invalidation {}",
                    inv.acquires, inv.releases, inv.private_invalidations
                )
            } else {
                "no semaphore".to_string()
            },
            t.pa,
            t.tlb_bytes >> 10,
            vmid0.root(),
        );
    }
    Ok(GmcState {
        gfxhub,
        mmhub,
        vram,
        vmid0,
        dma,
        tables_at,
        tables_host,
        config,
        page,
    })
}
