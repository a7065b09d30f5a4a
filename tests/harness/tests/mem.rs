//! The DMA arena and the VRAM allocator, from the device's side.
//!
//! The arena's bus addresses are checked by letting the model's DMA
//! engine read through them: in the model a bus address is a host
//! address, so an arena created over a host buffer at its own address
//! must give chunks the model reads back as what the CPU wrote. The VRAM
//! boot-region numbers are the literals of Linux 6.12 `amdgpu_discovery.h`
//! (`DISCOVERY_TMR_OFFSET (64 << 10)`, `DISCOVERY_TMR_SIZE (10 << 10)`),
//! written here by hand.

use barebell::mem::{DmaArena, MemError, PAGE_ALIGN, PSP_ALIGN, VramAllocator};
use barebell::psp::{PspBuffers, PspError};
use barebell_model::dma::Dma;

/// A leaked host buffer whose bus address, in the model, is its address.
fn leaked(len: usize) -> (&'static mut [u8], u64) {
    let mem: &'static mut [u8] = Box::leak(vec![0u8; len].into_boxed_slice());
    let bus = mem.as_ptr() as u64;
    (mem, bus)
}

#[test]
fn device_reads_what_the_cpu_wrote_at_the_chunk_bus_address() {
    let (mem, bus) = leaked(3 << 20);
    let mut dma = Dma::default();
    // SAFETY: leaked, so it outlives `dma`; the host writes before the
    // model reads.
    unsafe { dma.map(bus, 3 << 20) };
    // SAFETY: in the model a bus address is the host address, and `mem`
    // is leaked.
    let mut arena = unsafe { DmaArena::new(mem, bus) }.unwrap();
    // Knock the cursor off alignment first, as a small buffer would.
    let _fence = arena.alloc(4, 4).unwrap();
    let mut a = arena.alloc(4096, PSP_ALIGN).unwrap();
    let mut b = arena.alloc(8, PAGE_ALIGN).unwrap();
    assert_eq!(a.bus_addr() % (1 << 20), 0);
    assert_eq!(b.bus_addr() % 4096, 0);
    assert!(b.bus_addr() >= a.bus_addr() + 4096);
    a.bytes()[..4].copy_from_slice(&0xC0DE_F00Du32.to_le_bytes());
    b.bytes()
        .copy_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
    let seen_a = dma.u32(a.bus_addr(), "a").unwrap();
    let seen_b = dma.u64(b.bus_addr(), "b").unwrap();
    use std::sync::atomic::Ordering::Relaxed;
    assert_eq!(seen_a.load(Relaxed), 0xC0DE_F00D);
    assert_eq!(seen_b.load(Relaxed), 0x1122_3344_5566_7788);
}

/// PSP buffers carved from the arena pass the runtime's own 1 MiB check;
/// a `fw_pri` at 4 KiB alignment is refused with the typed error that
/// names the buffer.
#[test]
fn psp_buffers_from_the_arena() {
    let (mem, bus) = leaked(4 << 20);
    // SAFETY: in the model a bus address is the host address, and `mem`
    // is leaked.
    let mut arena = unsafe { DmaArena::new(mem, bus) }.unwrap();
    let fence = arena
        .alloc(4096, PAGE_ALIGN)
        .unwrap()
        .into_psp_buf()
        .unwrap();
    let ring = arena
        .alloc(4096, PAGE_ALIGN)
        .unwrap()
        .into_psp_buf()
        .unwrap();
    let cmd = arena
        .alloc(4096, PAGE_ALIGN)
        .unwrap()
        .into_psp_buf()
        .unwrap();
    let fw_pri = arena
        .alloc(1 << 20, PSP_ALIGN)
        .unwrap()
        .into_psp_buf()
        .unwrap();
    assert_eq!(fw_pri.mc_addr() & 0xF_FFFF, 0);
    let rig = barebell_model_host::psp_rig::rig(
        std::path::Path::new("/lib/firmware/amdgpu"),
        &barebell_model_host::psp_rig::navi31(),
        |_| {},
    )
    .unwrap();
    let ok = barebell::psp::Psp::new(
        rig.model,
        rig.clock,
        rig.regs,
        &rig.mp0.bases,
        PspBuffers {
            fw_pri,
            ring,
            cmd,
            fence,
        },
    );
    assert!(ok.is_ok());

    // A second set whose fw_pri is only page aligned.
    let (mem, bus) = leaked(2 << 20);
    // SAFETY: in the model a bus address is the host address, and `mem`
    // is leaked.
    let mut arena = unsafe { DmaArena::new(mem, bus) }.unwrap();
    let _skew = arena.alloc(4096, PSP_ALIGN).unwrap();
    let bad = arena
        .alloc(4096, PAGE_ALIGN)
        .unwrap()
        .into_psp_buf()
        .unwrap();
    let bad_mc = bad.mc_addr();
    assert_ne!(bad_mc & 0xF_FFFF, 0);
    let bufs = PspBuffers {
        fw_pri: bad,
        ring: arena
            .alloc(4096, PAGE_ALIGN)
            .unwrap()
            .into_psp_buf()
            .unwrap(),
        cmd: arena
            .alloc(4096, PAGE_ALIGN)
            .unwrap()
            .into_psp_buf()
            .unwrap(),
        fence: arena
            .alloc(4096, PAGE_ALIGN)
            .unwrap()
            .into_psp_buf()
            .unwrap(),
    };
    let err =
        barebell::psp::Psp::new(rig.model, rig.clock, rig.regs, &rig.mp0.bases, bufs).unwrap_err();
    assert_eq!(
        err,
        PspError::Misaligned {
            what: "fw_pri buffer",
            mc_addr: bad_mc,
            align: 0x10_0000,
        }
    );
}

#[test]
fn arena_exhaustion_reports_what_is_left() {
    // 7168 bytes whose bus base is 1 KiB into a page: 3072 bytes of
    // padding to reach the next page leave 4096 usable.
    let (mem, _) = leaked(8192);
    // SAFETY: no device reads this arena; only the arithmetic is tested.
    let mut arena = unsafe { DmaArena::new(&mut mem[1024..], 1024) }.unwrap();
    assert_eq!(
        arena.alloc(4097, 4096).unwrap_err(),
        MemError::OutOfSpace {
            requested: 4097,
            align: 4096,
            available: 4096
        }
    );
    assert_eq!(arena.alloc(4096, 4096).unwrap().bus_addr(), 4096);
}

#[test]
fn vram_boot_region_matches_linux_discovery_placement() {
    // Navi31 has 24 GiB; the layout rule does not depend on the size.
    let size = 24u64 << 30;
    let v = VramAllocator::with_boot_region(size, 0x80_0000_0000).unwrap();
    let d = v.discovery_table().unwrap();
    assert_eq!(d.offset, size - 0x1_0000);
    assert_eq!(d.size, 10 * 1024);
    assert_eq!(d.mc, 0x80_0000_0000 + size - 0x1_0000);
    let boot = v.boot_region();
    assert_eq!((boot.offset, boot.size), (size - 0x1_0000, 0x1_0000));
    assert!(d.offset >= boot.offset && d.end() <= size);
    assert_eq!(v.free(), size - 0x1_0000);
}

#[test]
fn vram_allocations_never_reach_the_discovery_table() {
    let size = 16u64 << 20;
    let mut v = VramAllocator::with_boot_region(size, 0).unwrap();
    let d = v.discovery_table().unwrap();
    let mut last_end = 0;
    loop {
        match v.alloc(1 << 20, 1 << 20) {
            Ok(r) => {
                assert!(r.offset >= last_end);
                assert!(r.end() <= d.offset);
                last_end = r.end();
            }
            Err(e) => {
                assert!(matches!(e, MemError::OutOfSpace { .. }));
                break;
            }
        }
    }
    // 15 whole MiB fit below size - 64 KiB; the 16th does not.
    assert_eq!(last_end, 15 << 20);
    let tail = v.alloc(v.free(), 4096).unwrap();
    assert_eq!(tail.end(), size - 0x1_0000);
    assert_eq!(
        v.alloc(1, 1).unwrap_err(),
        MemError::OutOfSpace {
            requested: 1,
            align: 1,
            available: 0
        }
    );
}
