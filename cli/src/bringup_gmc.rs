//! The `gmc` bring-up step: VMID0 page tables in VRAM below the boot
//! region, then GFXHUB init (`gfxhub_v3_0_gart_enable()`) on the hub model,
//! which must then translate through the runtime's tables.

use crate::bringup::BringupArgs;
use barebell::discovery::{Discovery, hw_id};
use barebell::regs::gc_11_0_0;
use barebell::regs::trace::{Access, Symbols, TraceBus};

/// Where VRAM starts in the MC map: a model value.
pub const FB_START: u64 = 0x0080_0000_0000;

/// Runs the `gmc` step on its own hub model.
pub fn step(
    args: &BringupArgs,
    clock: &barebell_sim::SimClock,
    d: &Discovery<'_>,
    vram_mib: u32,
) -> Result<(), String> {
    use barebell::gmc::{Flags, Format, LARGE_PAGE, Table, TableArena};
    use barebell::hub::{HubConfig, gfxhub_gart_enable};
    use barebell::mem::VramAllocator;
    use barebell_sim::gmc::Access as VmAccess;
    use barebell_sim::hub::HubModel;

    let trace = args.trace;
    let gc = d.ip(hw_id::GC, 0).ok_or("no GC")?;
    if gc.version.triple() != (11, 0, 0) {
        println!(
            "step gmc: skipped: GC {:?} has no hub init (only GFXHUB 3.0 / GC 11.0.0 is built)",
            gc.version.triple()
        );
        return Ok(());
    }
    // VMID0: a 2 MiB page of VRAM at VA 0, taken from the allocator so it
    // stays below the discovery/boot region. The tables themselves sit in
    // host memory the hub model reads as if it were VRAM.
    let size = u64::from(vram_mib) << 20;
    let mut vram =
        VramAllocator::with_boot_region(size, FB_START).map_err(|e| format!("gmc: {e}"))?;
    let page = vram
        .alloc(LARGE_PAGE, LARGE_PAGE)
        .map_err(|e| format!("gmc: {e}"))?;
    // The page the system aperture answers unmapped accesses with
    // (`mem_scratch`); its physical address is its VRAM offset here.
    let scratch = vram.alloc(4096, 4096).map_err(|e| format!("gmc: {e}"))?;
    let tables: &'static mut [Table] = Box::leak(vec![Table::EMPTY; 4].into_boxed_slice());
    let mc = tables.as_ptr() as u64;
    let mut dma = barebell_sim::dma::Dma::default();
    // SAFETY: leaked, so it lives as long as `dma`; the tables are written
    // before the model reads them.
    unsafe { dma.map(mc, 4 * 4096) };
    let mut arena = TableArena::new(tables, mc, Format::Gfx11);
    let rw = Flags {
        readable: true,
        writeable: true,
        executable: false,
        system: false,
        snooped: false,
    };
    arena
        .map(0, page.mc, LARGE_PAGE, rw, true)
        .map_err(|e| format!("gmc: {e:?}"))?;
    let hub = HubModel::new(clock, gc.bases);
    let blocks = [(gc_11_0_0::ALL, gc.bases)];
    let bus = TraceBus::new(&hub, Symbols { blocks: &blocks }, move |a: Access| {
        if trace {
            println!("  {a}");
        }
    });
    let cfg = HubConfig {
        pt_base: arena.root(),
        start: 0,
        end: (1 << 30) - 1,
        fb_start: FB_START,
        fb_end: FB_START + size - 1,
        agp_start: u64::MAX >> 16,
        agp_end: 0,
        default_page: scratch.offset,
        dummy_page: 0,
    };
    gfxhub_gart_enable(&bus, &gc.bases, &cfg).map_err(|e| format!("gmc: {e}"))?;
    let t = hub
        .translate(&dma, 0x1000, VmAccess::Read)
        .map_err(|e| format!("gmc: the hub model refused VA 0x1000: {e:?}"))?;
    if t.pa != page.mc + 0x1000 {
        return Err(format!("gmc: VA 0x1000 went to {:#x}", t.pa));
    }
    println!(
        "step gmc: GFXHUB enabled, VMID0 root {:#x}; VA 0x1000 -> MC {:#x} through the hub model's walk ({} KiB TLB entry)",
        arena.root(),
        t.pa,
        t.tlb_bytes >> 10
    );
    Ok(())
}
