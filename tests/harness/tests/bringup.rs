//! The one bring-up sequence over the model GPU: every part, every
//! mapping, to a completed first packet.

use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

fn bring_up(part: barebell_model::Part, mapping: Option<Mapping>) {
    let name = part.name;
    let gpu = virtual_gpu(part, 1);
    let opts = Options {
        until: Step::Queue,
        mapping,
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    let r = barebell_bringup::run(&gpu, &fw, &opts, &Quiet);
    let mut up = match r {
        Ok(up) => up,
        Err(e) => panic!("{name} {mapping:?}: {e}\n{}", gpu.firmware_logs()),
    };
    assert!(
        gpu.psp().refusals().is_empty(),
        "{:?}",
        gpu.psp().refusals()
    );
    assert_eq!(gpu.bar5_counts().beyond, 0, "an access past BAR5 was lost");
    // The VBIOS's picture (navi31's model display) is still on screen.
    assert_eq!(
        gpu.gfx11().unwrap().scanout_clobbered(),
        None,
        "{name}: framebuffer overwritten"
    );
    assert!(gpu.psp().sos_running());
    assert!(
        gpu.gfx11().unwrap().mmhub().vmid0().is_some(),
        "MMHUB VMID0 not enabled"
    );
    assert!(
        gpu.gfx11().unwrap().gfxhub().vmid0().is_some(),
        "GFXHUB VMID0 not enabled"
    );
    match mapping {
        None => assert_eq!(up.reached, Step::Rlc),
        Some(m) => {
            let q = up.queue.as_ref().expect("a mapped queue");
            assert_eq!(q.mode, m);
            assert_eq!(q.signal.value(), 0, "first packet's completion signal");
            assert!(
                gpu.gfx11().unwrap().mec().cp().errors().is_empty(),
                "{:?}",
                gpu.gfx11().unwrap().mec().cp().errors()
            );
            let q = up.queue.take().unwrap();
            q.unmap().unwrap();
        }
    }
}

#[test]
fn navi31_to_rlc() {
    bring_up(parts::navi31(), None);
}

#[test]
fn navi48_to_rlc() {
    bring_up(parts::navi48(), None);
}

#[test]
fn navi31_every_mapping() {
    for m in Mapping::ALL {
        bring_up(parts::navi31(), Some(m));
    }
}

#[test]
fn navi48_every_mapping() {
    for m in Mapping::ALL {
        bring_up(parts::navi48(), Some(m));
    }
}

/// The bring-up as far as `mapping`'s first packet, or a panic carrying
/// the firmware models' logs.
fn up_to_queue(part: barebell_model::Part, mapping: Mapping) -> barebell_model::VirtualGpu {
    let name = part.name;
    let gpu = virtual_gpu(part, 7);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    // Kept running (no teardown) so the test reads the model as the
    // bring-up left it.
    match barebell_bringup::run(&gpu, &fw, &opts, &Quiet) {
        Ok(up) => up.abandon(),
        Err(e) => panic!("{name} {mapping:?}: {e}\n{}", gpu.firmware_logs()),
    }
    gpu
}

/// Linux 6.12's gfx11 topology (`amdgpu_discovery_set_mes_ip_blocks()`
/// sets `enable_mes_kiq` for GC 11.0.0): the KIQ is MES pipe 1.
/// `mes_v11_0_kiq_setting()` names ME 3 pipe 1 queue 0 in
/// `RLC_CP_SCHEDULERS` (0x80 | 3 << 5 | 1 << 3 = 0xE8), no KIQ comes up
/// on a MEC slot, and the KIQ gets SET_RESOURCES (0xA0, `nvd.h`) before
/// the MAP_QUEUES (0xA2) of a compute queue, as `amdgpu_gfx_enable_kcq()`
/// sends them; its first MAP_QUEUES is the scheduler ring's
/// (`mes_v11_0_kiq_enable_queue()`).
#[test]
fn navi31_kiq_is_mes_pipe_1_and_gets_set_resources_first() {
    use barebell_model::kiq::{KiqEvent, KiqHome};
    use barebell_model::mec::MecEvent;
    let gpu = up_to_queue(parts::navi31(), Mapping::Kiq);
    assert_eq!(gpu.gfx11().unwrap().kiq_home(), Some(KiqHome::MesPipe1));
    assert_eq!(gpu.gfx11().unwrap().mec().rlc_cp_schedulers() & 0xFF, 0xE8);
    assert!(
        !gpu.gfx11()
            .unwrap()
            .mec()
            .events()
            .iter()
            .any(|e| matches!(e, MecEvent::KiqActivated { .. })),
        "{:?}",
        gpu.gfx11().unwrap().mec().events()
    );
    let ops: Vec<u8> = gpu
        .gfx11()
        .unwrap()
        .kiq_log()
        .iter()
        .filter_map(|e| match e {
            KiqEvent::Done { opcode } if *opcode != 0x37 => Some(*opcode),
            _ => None,
        })
        .collect();
    assert_eq!(
        ops,
        [0xA2, 0xA0, 0xA2],
        "{:?}",
        gpu.gfx11().unwrap().kiq_log()
    );
}

/// gfx12 uni-MES has no PM4 KIQ: MES pipe 1 is the KIQ and speaks the
/// MES API. `amdgpu_gfx_mes_enable_kcq()` maps compute queues there with
/// `amdgpu_mes_map_legacy_queue()` (`mes_v12_0_map_legacy_queue()`: an
/// ADD_QUEUE, opcode 2, with `map_legacy_kq`), so `--mapping kiq` does
/// too: pipe 1 answers two ADD_QUEUEs (the scheduler ring, then the user
/// queue) and no PM4 KIQ appears.
#[test]
fn navi48_kiq_mapping_goes_through_mes_pipe_1() {
    use barebell_model::mes::MesEvent;
    let gpu = up_to_queue(parts::navi48(), Mapping::Kiq);
    assert_eq!(
        gpu.gfx11().unwrap().kiq_home(),
        None,
        "{}",
        gpu.firmware_logs()
    );
    let adds = gpu
        .gfx11()
        .unwrap()
        .mes_pipe1_log()
        .iter()
        .filter(|e| matches!(e, MesEvent::Done { opcode: 2 }))
        .count();
    assert_eq!(adds, 2, "{:?}", gpu.gfx11().unwrap().mes_pipe1_log());
}

/// A DMA region whose ring area (mapped at VA = host address) would
/// reach into the user-VRAM window at `gmc::USER_VRAM_VA` is refused with
/// `LayoutError::RingAreaClash`, before anything is mapped over it. The
/// region is placed by hand 4 MiB below that VA, so its ring area (past
/// the GTT chunk) runs across it.
#[test]
fn a_ring_area_across_the_user_vram_window_is_refused() {
    use barebell_bringup::error::{ErrorKind, LayoutError};
    use barebell_bringup::gmc::USER_VRAM_VA;
    const MIB: usize = 1 << 20;
    let dma_at = USER_VRAM_VA as usize - 4 * MIB;
    let gpu = hand_placed(parts::navi31(), 64 * MIB, dma_at, 8 * MIB);
    let fw = FirmwareDir::system();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Direct),
        user_memory: 2 * MIB,
        user_vram: 2 * MIB,
        ..Options::default()
    };
    let Err(e) = barebell_bringup::run(&gpu, &fw, &opts, &Quiet) else {
        panic!("a ring area across the user-VRAM window was accepted");
    };
    match e.kind {
        ErrorKind::Layout(LayoutError::RingAreaClash { start, a, .. }) => {
            assert_eq!(start, (dma_at + 2 * MIB) as u64);
            assert_eq!(a, USER_VRAM_VA);
        }
        other => panic!("not a ring-area clash: {other}"),
    }
}

/// `part` over VRAM backing of `vram_len` bytes (reserved lazily, so a
/// backing as large as the part's whole VRAM costs only what is touched)
/// and a DMA region of `dma_len` bytes placed at host address `dma_at`.
fn hand_placed(
    part: barebell_model::Part,
    vram_len: usize,
    dma_at: usize,
    dma_len: usize,
) -> barebell_model::VirtualGpu {
    use barebell_model::vgpu::HostMemory;
    use std::ptr::NonNull;
    // SAFETY: fresh anonymous mappings; the fixed one refuses to replace
    // anything already at `dma_at` (MAP_FIXED_NOREPLACE).
    let (vram, dma) = unsafe {
        let anon = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let vram = libc::mmap(
            std::ptr::null_mut(),
            vram_len,
            rw,
            anon | libc::MAP_NORESERVE,
            -1,
            0,
        );
        let dma = libc::mmap(
            dma_at as *mut libc::c_void,
            dma_len,
            rw,
            anon | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        );
        (vram, dma)
    };
    assert_ne!(vram, libc::MAP_FAILED);
    assert_eq!(dma as usize, dma_at, "the DMA region could not be placed");
    let (v, d) = (vram as usize, dma as usize);
    let release = Box::new(move || {
        // SAFETY: the two mappings made above, unmapped once.
        unsafe {
            libc::munmap(v as *mut libc::c_void, vram_len);
            libc::munmap(d as *mut libc::c_void, dma_len);
        }
    });
    // SAFETY: zeroed, writable, disjoint anonymous mappings of the given
    // lengths (the DMA one 2 MiB aligned and whole 2 MiB chunks, which the
    // callers pass), released only by `release`.
    let mem = unsafe {
        HostMemory::new(
            NonNull::new(vram.cast()).unwrap(),
            vram_len,
            NonNull::new(dma.cast()).unwrap(),
            dma_len,
            Some(release),
        )
    };
    let fw = barebell_model::FilesDir::system();
    barebell_model::VirtualGpu::new(part, &fw, mem, barebell_model::Seed(1)).unwrap()
}

/// With BAR0 as large as VRAM (a resizable BAR), the discovery table at
/// VRAM size − 64 KiB is read straight through BAR0, and it reads the
/// same IP instances as through `MM_INDEX`/`MM_DATA` on a small BAR.
#[test]
fn a_bar0_that_reaches_the_discovery_table_reads_it_directly() {
    const MIB: usize = 1 << 20;
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let vram = (part.firmware.vram_mib as usize) << 20;
        let small = virtual_gpu(part.clone(), 1);
        let through_index = barebell_bringup::discovery::run(&small, &Quiet).unwrap();
        assert_eq!(through_index.read_through, "MM_INDEX/MM_DATA", "{name}");
        drop(small);
        let big = hand_placed(
            part,
            vram,
            barebell::platform::DMA_HOST_VA + 64 * MIB,
            8 * MIB,
        );
        let through_bar = barebell_bringup::discovery::run(&big, &Quiet).unwrap();
        assert_eq!(through_bar.read_through, "BAR0", "{name}");
        assert_eq!(through_bar.table_at, vram as u64 - (64 << 10), "{name}");
        assert_eq!(through_bar.all, through_index.all, "{name}");
    }
}

/// `{:?}` of a brought-up GPU, what a user's log shows of it, names its
/// platform and the last step it reached.
#[test]
fn a_gpu_debug_prints_its_platform_and_the_step_it_reached() {
    use barebell::platform::Platform;
    let gpu = virtual_gpu(parts::navi31(), 3);
    let o = Options {
        until: Step::Start,
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &o, &Quiet).unwrap();
    let text = format!("{up:?}");
    assert!(text.starts_with("Gpu {"), "{text}");
    assert!(
        text.contains(&format!("platform: {:?}", gpu.name())),
        "{text}"
    );
    assert!(text.contains("reached: Start"), "{text}");
    assert!(up.shutdown().complete());
}

/// The bring-up's user queue is created with profiling on
/// (`AMD_QUEUE_PROPERTIES_ENABLE_PROFILING` in `amd_queue_t`, what ROCR's
/// `AqlQueue::SetProfiling` sets), so the CP stamps the start and end of
/// each packet into its completion signal (`amd_signal_t::start_ts` /
/// `end_ts`, `amd_hsa_signal.h`). `barebell latency` reports cp_launch and
/// cp_exec from them; without the bit the CP writes neither. Checked on
/// the gfx11/gfx12 queue (`queue.rs`) and on GC 9.4.3's (`xcc.rs`).
#[test]
fn the_first_packets_signal_carries_the_cps_timestamps() {
    for (part, mapping) in [
        (parts::navi31(), Mapping::Mes),
        (parts::navi48(), Mapping::Direct),
        (parts::mi300x(), Mapping::Hws),
    ] {
        let name = part.name;
        let gpu = virtual_gpu(part, 4);
        let o = Options {
            until: Step::Queue,
            mapping: Some(mapping),
            ..Default::default()
        };
        let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &o, &Quiet)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let q = up.queue.as_ref().expect("a mapped queue");
        assert_eq!(q.signal.value(), 0, "{name}: the first packet completed");
        let (start, end) = q
            .signal
            .timestamps()
            .unwrap_or_else(|| panic!("{name}: no CP timestamps in the completion signal"));
        assert!(start > 0 && end >= start, "{name}: {start}..{end}");
        assert!(up.shutdown().complete(), "{name}");
    }
}
