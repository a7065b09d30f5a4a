//! `AMDGPU_PTE_SNOOPED` on system memory. Without it the GPU reads and
//! writes DRAM past the CPU's caches, so it sees stale data wherever the
//! CPU still holds a dirty line. Linux sets it on every PTE of cached
//! system memory (`amdgpu_ttm_tt_pde_flags()` in `amdgpu_ttm.c`: SYSTEM,
//! plus SNOOPED when `ttm->caching == ttm_cached`); tinygrad's AM maps
//! every system buffer `snooped=True` (`runtime/support/system.py`).
//!
//! The model refuses a GPU access through a system PTE without SNOOPED
//! (model convention, `barebell_model::gmc::Translation::coherent`), so a
//! runtime that leaves the bit off fails its bring-up at the first ring
//! the CP or the MES reads from system memory (gfx11/gfx12 and GC 9.4.3's
//! gfx9 PTEs alike).

use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::dma::Dma;
use barebell_model::gmc::{self as walk, Access, Context, CpuCaching, FaultReason, Format, Gmc};
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

const V: u64 = walk::bits::VALID;
const R: u64 = walk::bits::READABLE;
const W: u64 = walk::bits::WRITEABLE;
const SYS: u64 = walk::bits::SYSTEM;
const SNOOP: u64 = walk::bits::SNOOPED;
const PAGE: u64 = 4096;

/// The rule itself, over a hand-built flat table: a system page is
/// coherent only with SNOOPED where the CPU maps it write-back; a VRAM
/// page needs no snoop. Where a guest OS picks each page's caching (the
/// Linux peer), a page without SNOOPED is one it does not cache
/// (`amdgpu_ttm_tt_pde_flags()`): coherent.
#[test]
fn a_system_page_without_snooped_is_not_coherent() {
    let layout = std::alloc::Layout::from_size_align(4096, 4096).unwrap();
    // SAFETY: non-zero size; the memory is leaked (never freed).
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
    assert!(!p.is_null());
    // SAFETY: 4096 zeroed bytes, 4 KiB aligned, owned by nobody else.
    let t: &'static mut [u64] = unsafe { std::slice::from_raw_parts_mut(p, 512) };
    let base = t.as_ptr() as u64;
    let mut dma = Dma::default();
    // SAFETY: leaked, outlives `dma`; written before any walk.
    unsafe { dma.map(base, 4096) };
    t[0] = V | R | W | SYS | SNOOP | 0x1_0000_0000;
    t[1] = V | R | W | SYS | 0x1_0000_1000;
    t[2] = V | R | W | 0x2_0000_0000;
    let ctx = Context {
        root: base,
        start: 0,
        end: 512 * PAGE - 1,
        depth: 0,
        block_size: 0,
        format: Format::Gfx11,
    };
    let mut g = Gmc::with_context(&dma, ctx);
    let snooped = g.translate(0, Access::Read).unwrap();
    assert!(snooped.system && snooped.snooped);
    let wb = CpuCaching::WriteBack;
    assert_eq!(snooped.coherent(wb), Ok(()));
    let plain = g.translate(PAGE, Access::Write).unwrap();
    assert!(plain.system && !plain.snooped);
    assert_eq!(plain.coherent(wb), Err(FaultReason::NotSnooped));
    assert_eq!(plain.coherent(CpuCaching::OwnerChooses), Ok(()));
    let vram = g.translate(2 * PAGE, Access::Read).unwrap();
    assert!(!vram.system && !vram.snooped);
    assert_eq!(vram.coherent(wb), Ok(()));
    // Not a walk fault: nothing is latched.
    assert_eq!(g.fault(), None);
}

/// The runtime's mappings of system memory carry SNOOPED: the bring-up
/// runs its queue (the CP fetches the ring and writes the signal through
/// the process tables, in the DMA region), and the user ring translates
/// through the model's coherence check.
fn bring_up_over_system_memory(part: barebell_model::Part) {
    let name = part.name;
    let gpu = virtual_gpu(part, 5);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Mes),
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let root = up.memory.expect("the gmc step's layout").process_root;
    let q = up.queue.as_ref().expect("the user queue");
    let ring = q.queue.memory().ring_address();
    gpu.gfx11()
        .unwrap()
        .translate(root, ring, Access::Read)
        .unwrap_or_else(|e| panic!("{name}: user ring {ring:#x}: {e:?}"));
    let report = up.shutdown();
    assert!(report.complete(), "{name}: {report}");
}

#[test]
fn navi31_maps_system_memory_snooped() {
    bring_up_over_system_memory(parts::navi31());
}

#[test]
fn navi48_maps_system_memory_snooped() {
    bring_up_over_system_memory(parts::navi48());
}

/// GC 9.4.3, the gfx9 PTE format: the KIQ's and HIQ's rings in the GART
/// and the user queue in the process tables are all system memory, so a
/// bring-up to the queue step reads each through a SNOOPED check.
#[test]
fn mi300x_maps_system_memory_snooped() {
    let mem = barebell_model::vgpu::HostMemory::allocate(64 << 20).unwrap();
    let gpu = barebell_model::VirtualGpu::new(
        parts::mi300x(),
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(7),
    )
    .unwrap();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Hws),
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("mi300x: {e}"));
    assert_eq!(up.queue.as_ref().map(|q| q.mode), Some(Mapping::Hws));
    let report = up.shutdown();
    assert!(report.complete(), "mi300x: {report}");
}
