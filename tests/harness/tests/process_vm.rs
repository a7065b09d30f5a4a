//! Buffers mapped into a process's GPU VM after the bring-up, as KFD's
//! `kfd_ioctl_map_memory_to_gpu()` / `kfd_ioctl_unmap_memory_from_gpu()`
//! do: `amdgpu_vm_bo_map()` / `amdgpu_vm_bo_unmap()` on the process VM,
//! then `kfd_flush_tlb()` for the VMID the process's queues run in.
//!
//! The model decides every verdict: its GFXHUB walks the process tables
//! the bring-up reports (`Gfx11::translate`) and its invalidation
//! engines count what the driver asked them to flush. The expected
//! addresses follow from what the caller handed over and nothing else:
//! a system page the GPU reaches through a bus window is the host page
//! behind that window; a user-memory or host-placed VRAM page sits at
//! its own host address (GPU VA = CPU VA, what ROCR assumes of a
//! userptr BO and of large-BAR VRAM, `fmm_map_to_cpu()`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell_bringup::gmc::UserVramVa;
use barebell_bringup::process_vm::Access;
use barebell_bringup::queue::USER_VMID;
use barebell_bringup::{Gpu, Mapping, Options, Quiet, Step};
use barebell_model::VirtualGpu;
use barebell_model::gmc::Access as Walk;
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

const PAGE: u64 = 4096;

/// A bus window where nothing else is mapped: the one barebell's
/// libhsakmt hands registered memory on the model.
const BUS: u64 = 0x7000_0000_0000;

const READ_ONLY: Access = Access {
    writeable: false,
    executable: false,
};
const READ_WRITE: Access = Access {
    writeable: true,
    executable: false,
};

fn up(gpu: &VirtualGpu) -> Gpu<'_> {
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Mes),
        user_vram: 1 << 20,
        user_vram_va: UserVramVa::Host,
        ..Default::default()
    };
    barebell_bringup::run(gpu, &FirmwareDir::system(), &opts, &Quiet).unwrap()
}

fn walk(gpu: &VirtualGpu, root: u64, va: u64, access: Walk) -> Option<u64> {
    gpu.gfx11().unwrap().translate(root, va, access).ok()
}

/// Completed invalidations of the user queue's VMID on the GFXHUB.
fn flushes(gpu: &VirtualGpu) -> u32 {
    gpu.gfx11().unwrap().gfxhub().invalidations().completed[usize::from(USER_VMID)]
}

fn done(gpu: &VirtualGpu, up: Gpu<'_>) {
    let report = up.shutdown();
    assert!(report.complete(), "{report}");
    gpu.quiescent().unwrap();
}

#[test]
fn unmapping_user_memory_takes_it_from_the_gpu_and_mapping_it_back_restores_it() {
    let gpu = virtual_gpu(parts::navi31(), 11);
    let mut up = up(&gpu);
    let root = up.memory.as_ref().unwrap().process_root;
    let (start, len) = up.memory.as_ref().unwrap().user_memory;
    // Three pages from the end of the user memory, clear of what the
    // bring-up itself placed at its start.
    let va = start + len - 3 * PAGE;
    assert_eq!(walk(&gpu, root, va, Walk::Write), Some(va), "control");

    let before = flushes(&gpu);
    up.unmap_process(va, 2 * PAGE).unwrap();
    assert!(flushes(&gpu) > before, "the unmap flushed the queue VMID");
    assert_eq!(walk(&gpu, root, va, Walk::Read), None);
    assert_eq!(walk(&gpu, root, va + PAGE, Walk::Read), None);
    // The page after the range keeps its mapping.
    assert_eq!(
        walk(&gpu, root, va + 2 * PAGE, Walk::Read),
        Some(va + 2 * PAGE)
    );

    // Back read-only: readable at its own address, never writeable.
    let before = flushes(&gpu);
    up.map_user_range(va, 2 * PAGE, READ_ONLY).unwrap();
    assert!(flushes(&gpu) > before, "the map flushed the queue VMID");
    assert_eq!(walk(&gpu, root, va + PAGE, Walk::Read), Some(va + PAGE));
    assert_eq!(walk(&gpu, root, va + PAGE, Walk::Write), None);

    // And writeable again once the owner asks for it.
    up.unmap_process(va, 2 * PAGE).unwrap();
    up.map_user_range(va, 2 * PAGE, READ_WRITE).unwrap();
    assert_eq!(walk(&gpu, root, va, Walk::Write), Some(va));
    assert_eq!(walk(&gpu, root, va + PAGE, Walk::Write), Some(va + PAGE));
    done(&gpu, up);
}

#[test]
fn a_range_in_neither_user_region_is_refused_and_changes_nothing() {
    let gpu = virtual_gpu(parts::navi31(), 12);
    let mut up = up(&gpu);
    let root = up.memory.as_ref().unwrap().process_root;
    let (start, len) = up.memory.as_ref().unwrap().user_memory;
    let last = start + len - PAGE;
    let before = flushes(&gpu);
    // One page past the end of the user memory: its last page is inside,
    // the second is not.
    let e = up.map_user_range(last, 2 * PAGE, READ_WRITE).unwrap_err();
    assert!(e.to_string().contains("process"), "{e}");
    assert_eq!(flushes(&gpu), before, "nothing changed, nothing flushed");
    assert_eq!(walk(&gpu, root, last, Walk::Write), Some(last));
    // A page below the user memory.
    assert!(up.map_user_range(start - PAGE, PAGE, READ_WRITE).is_err());
    done(&gpu, up);
}

#[test]
fn host_placed_user_vram_maps_back_at_its_host_address() {
    let gpu = virtual_gpu(parts::navi31(), 13);
    let mut up = up(&gpu);
    let root = up.memory.as_ref().unwrap().process_root;
    let (vstart, vlen) = up.memory.as_ref().unwrap().user_vram;
    assert_eq!(vlen, 1 << 20);
    let va = vstart + 5 * PAGE;
    assert_eq!(walk(&gpu, root, va, Walk::Read), Some(va), "control");
    up.unmap_process(va, PAGE).unwrap();
    assert_eq!(walk(&gpu, root, va, Walk::Read), None);
    up.map_user_range(va, PAGE, READ_ONLY).unwrap();
    assert_eq!(walk(&gpu, root, va, Walk::Read), Some(va));
    assert_eq!(walk(&gpu, root, va, Walk::Write), None);
    done(&gpu, up);
}

#[test]
fn user_vram_maps_at_a_va_of_the_owners_choosing() {
    let gpu = virtual_gpu(parts::navi31(), 14);
    let mut up = up(&gpu);
    let root = up.memory.as_ref().unwrap().process_root;
    let (vstart, vlen) = up.memory.as_ref().unwrap().user_vram;
    // A VA far from every other mapping, as the thunk's scratch aperture
    // is (`fmm_map_to_gpu_scratch()`).
    let va = 0x10_0000_0000;
    assert_eq!(walk(&gpu, root, va, Walk::Read), None, "control");
    let vram = vstart + 3 * PAGE;
    let before = flushes(&gpu);
    up.map_vram(va, vram, 2 * PAGE, READ_WRITE).unwrap();
    assert!(flushes(&gpu) > before);
    assert_eq!(walk(&gpu, root, va, Walk::Write), Some(vram));
    assert_eq!(
        walk(&gpu, root, va + PAGE + 8, Walk::Write),
        Some(vram + PAGE + 8)
    );
    assert_eq!(walk(&gpu, root, va + 2 * PAGE, Walk::Read), None);
    // Past the end of the user VRAM, and below it: refused, nothing mapped.
    let after = vstart + vlen - PAGE;
    assert!(
        up.map_vram(va + 16 * PAGE, after, 2 * PAGE, READ_WRITE)
            .is_err()
    );
    assert!(
        up.map_vram(va + 16 * PAGE, vstart - PAGE, PAGE, READ_WRITE)
            .is_err()
    );
    assert_eq!(walk(&gpu, root, va + 16 * PAGE, Walk::Read), None);
    up.unmap_process(va, 2 * PAGE).unwrap();
    assert_eq!(walk(&gpu, root, va, Walk::Read), None);
    done(&gpu, up);
}

#[test]
fn registered_system_pages_are_reached_through_their_bus_window() {
    let gpu = virtual_gpu(parts::navi31(), 15);
    let mut up = up(&gpu);
    let root = up.memory.as_ref().unwrap().process_root;
    let mut pages = vec![0u8; 6 * PAGE as usize];
    let at = (pages.as_mut_ptr() as u64).next_multiple_of(PAGE);
    // SAFETY: `pages` outlives the window, taken away below before it
    // is dropped; the host does not touch it meanwhile.
    assert!(unsafe { gpu.map_host_dma(BUS, at as *mut u8, 4 * PAGE) });
    let va = 0x20_0000_0000;
    let before = flushes(&gpu);
    up.map_process(va, BUS, 4 * PAGE, READ_WRITE).unwrap();
    assert!(flushes(&gpu) > before);
    assert_eq!(walk(&gpu, root, va, Walk::Write), Some(at));
    assert_eq!(
        walk(&gpu, root, va + 3 * PAGE + 4, Walk::Write),
        Some(at + 3 * PAGE + 4)
    );
    assert_eq!(walk(&gpu, root, va + 4 * PAGE, Walk::Read), None);
    up.unmap_process(va, 4 * PAGE).unwrap();
    assert_eq!(walk(&gpu, root, va, Walk::Read), None);
    assert!(gpu.unmap_host_dma(BUS));
    done(&gpu, up);
    drop(pages);
}

#[test]
fn mapping_before_the_queue_step_is_refused() {
    let gpu = virtual_gpu(parts::navi31(), 16);
    let opts = Options {
        until: Step::Gmc,
        ..Default::default()
    };
    let mut up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet).unwrap();
    let e = up
        .map_process(0x20_0000_0000, BUS, PAGE, READ_WRITE)
        .unwrap_err();
    assert!(e.to_string().contains("process tables"), "{e}");
    assert!(up.unmap_process(0x20_0000_0000, PAGE).is_err());
    let report = up.shutdown();
    assert!(report.complete(), "{report}");
}

/// GC 9.4.3 on node 3 of a hive: VRAM physical addresses carry the
/// node's segment (`gmc_v9_0_vram_gtt_location()` adds
/// `physical_node_id * node_segment_size` to `vram_base_offset`), so a
/// VRAM page the process tables map must name this node's memory, not
/// node 0's, for the CP of every XCC to reach the bytes the host sees
/// through BAR0. Each XCC's GFXHUB takes the flush.
#[test]
fn on_node_3_of_a_hive_user_vram_maps_into_this_nodes_memory() {
    gc9_user_vram(parts::mi300x().in_hive(3).unwrap());
}

/// The same on MI210 (GC 9.4.2, one XCC, GFXHUB 1.0).
#[test]
fn on_mi210_user_vram_maps_at_a_va_of_the_owners_choosing() {
    gc9_user_vram(parts::mi210());
}

fn gc9_user_vram(part: parts::Part) {
    let gpu = virtual_gpu(part, 17);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Hws),
        user_vram: 1 << 20,
        user_vram_va: UserVramVa::Host,
        ..Default::default()
    };
    let mut up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", gpu.diagnostics()));
    let root = up.memory.as_ref().unwrap().process_root;
    let (vstart, _) = up.memory.as_ref().unwrap().user_vram;
    let gc = gpu.gc_9_4_3().unwrap();
    let xccs = gc.gfxhubs().len();
    let walk = |x: usize, va: u64, a: Walk| gc.translate(x, root, va, a).ok();
    let requests = || {
        gc.gfxhubs()
            .iter()
            .map(|h| h.requests())
            .collect::<Vec<_>>()
    };

    let va = 0x10_0000_0000;
    let vram = vstart + 3 * PAGE;
    let before = requests();
    up.map_vram(va, vram, 2 * PAGE, READ_WRITE).unwrap();
    for (x, (b, a)) in before.iter().zip(requests()).enumerate() {
        assert!(a > *b, "XCC {x}'s GFXHUB was not flushed");
    }
    for x in 0..xccs {
        assert_eq!(walk(x, va + 8, Walk::Write), Some(vram + 8), "XCC {x}");
        assert_eq!(walk(x, va + PAGE, Walk::Read), Some(vram + PAGE), "XCC {x}");
    }

    // The host-placed user VRAM, taken out and mapped back read-only.
    let at = vstart + 7 * PAGE;
    assert_eq!(walk(0, at, Walk::Write), Some(at), "control");
    up.unmap_process(at, PAGE).unwrap();
    assert_eq!(walk(0, at, Walk::Read), None);
    up.map_user_range(at, PAGE, READ_ONLY).unwrap();
    for x in 0..xccs {
        assert_eq!(walk(x, at, Walk::Read), Some(at), "XCC {x}");
        assert_eq!(walk(x, at, Walk::Write), None, "XCC {x}");
    }
    let report = up.shutdown();
    assert!(report.complete(), "{report}");
    gpu.quiescent().unwrap();
}

/// User VRAM at its fixed VA (not its host address) is not a host range
/// a caller can name: mapping it by host address is refused.
#[test]
fn user_vram_at_its_fixed_va_cannot_be_mapped_by_host_address() {
    let gpu = virtual_gpu(parts::navi31(), 18);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Mes),
        user_vram: 1 << 20,
        ..Default::default()
    };
    let mut up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet).unwrap();
    let root = up.memory.as_ref().unwrap().process_root;
    let (vstart, _) = up.memory.as_ref().unwrap().user_vram;
    let va = 0x10_0000_0000;
    assert!(up.map_vram(va, vstart, PAGE, READ_WRITE).is_err());
    assert_eq!(walk(&gpu, root, va, Walk::Read), None);
    done(&gpu, up);
}

/// A range mapped back across a boundary of the DMA region's 2 MiB
/// chunks (`DMA_CHUNK`: each chunk contiguous on the bus, the chunks need
/// not be, so the range is mapped one run per chunk) ends at its length:
/// the page after it stays unmapped. Two ranges one page apart, so that
/// at least one of them ends inside a chunk.
#[test]
fn a_range_mapped_back_across_a_dma_chunk_ends_at_its_length() {
    let chunk = barebell::platform::DMA_CHUNK as u64;
    let gpu = barebell_tests::virtual_gpu_sized(parts::navi31(), 12, 64 << 20, 12 << 20);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Mes),
        user_memory: 3 * chunk as usize,
        ..Default::default()
    };
    let mut up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet).unwrap();
    let root = up.memory.as_ref().unwrap().process_root;
    let (start, len) = up.memory.as_ref().unwrap().user_memory;
    let n = chunk + 2 * PAGE;
    assert!(len >= n + 8 * PAGE, "user memory of {len:#x} bytes");
    for shift in [0, PAGE] {
        let va = start + len - n - 4 * PAGE + shift;
        up.unmap_process(va, n + PAGE).unwrap();
        up.map_user_range(va, n, READ_WRITE).unwrap();
        assert_eq!(walk(&gpu, root, va, Walk::Write), Some(va));
        let last = va + n - PAGE;
        assert_eq!(walk(&gpu, root, last, Walk::Write), Some(last));
        assert_eq!(
            walk(&gpu, root, va + n, Walk::Read),
            None,
            "shift {shift:#x}"
        );
        up.unmap_process(va, n).unwrap();
        up.map_user_range(va, n + PAGE, READ_WRITE).unwrap();
    }
    done(&gpu, up);
}
