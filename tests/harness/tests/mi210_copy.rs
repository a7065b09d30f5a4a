//! SDMA 4.4.0 on the MI210 model (Aldebaran, GC 9.4.2): the bring-up's
//! copy queue (`barebell_bringup::sdma`) on engine 0 through the HWS,
//! copying byte for byte in every direction; the engines a driver never
//! unhalts run nothing; the teardown halts all five.
//!
//! Expected values are written by hand from Linux 6.12, never taken from
//! the code under test:
//! - engine 0's doorbell: `AMDGPU_VEGA20_DOORBELL_sDMA_ENGINE0` = 0x100
//!   (`amdgpu_doorbell.h`; `vega20_doorbell_index_init()`, which `soc15.c`
//!   uses for Aldebaran), doorbell dword 0x200;
//! - KFD's first VMID on GC 9.4.2 is 3 (`gmc_v9_0_sw_init()`:
//!   `first_kfd_vmid` is 3 on the compute-only GC 9.4.1–9.4.4, 8
//!   elsewhere), the one the HWS gives the only process;
//! - five instances (`adev->sdma.num_instances = 5` for SDMA 4.4.0 in
//!   `amdgpu_discovery.c`'s `CHIP_ALDEBARAN` case), each halted and
//!   unhalted by `sdma_v4_0_enable()`;
//! - 4 MiB per COPY_LINEAR (22-bit `COUNT` of `vega10_sdma_pkt_open.h`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use barebell::sdma::CopyDirection;
use barebell_bringup::sdma::{BOUND_NS, CopyError};
use barebell_bringup::{FirmwareDir, Gpu, Mapping, Options, Quiet, Step};
use barebell_model::VirtualGpu;
use barebell_model::parts;
use barebell_model::sdma::SdmaEvent;
use barebell_model::vgpu::HostMemory;

const USER: usize = 16 << 20;

fn device() -> VirtualGpu {
    let mem = HostMemory::allocate_sized((64 << 20) + USER, (4 << 20) + USER).unwrap();
    VirtualGpu::new(
        parts::mi210(),
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(7),
    )
    .unwrap()
}

fn why(m: &VirtualGpu) -> String {
    m.diagnostics().join("\n")
}

fn up(m: &VirtualGpu) -> Gpu<'_> {
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Hws),
        user_memory: USER,
        user_vram: USER,
        ..Options::default()
    };
    barebell_bringup::run(m, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{}", why(m)))
}

fn pattern(n: usize, salt: u64) -> Vec<u8> {
    let mut x = salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut b = vec![0u8; n];
    for chunk in b.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    b
}

#[test]
fn hws_copies_byte_exact_in_every_direction() {
    let m = device();
    let mut gpu = up(&m);
    let mut q = barebell_bringup::sdma::open(&mut gpu, Mapping::Hws, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{}", why(&m)));
    assert_eq!(q.doorbell, 0x100);
    let on = m.sdma()[0].queue().unwrap_or_else(|| panic!("{}", why(&m)));
    assert_eq!(on.doorbell, Some(0x200));
    assert_eq!(on.vmid, 3);
    assert_eq!(m.sdma().len(), 5);
    assert!(m.sdma()[1..].iter().all(|e| e.queue().is_none()));
    // One compute queue (the bring-up's) and an SDMA queue.
    barebell_tests::assert_runlist_not_over_subscribed(&m);
    // Every instance was unhalted by a driver write.
    for (i, e) in m.sdma().iter().enumerate() {
        assert!(e.events().contains(&SdmaEvent::Unhalted), "SDMA {i}");
    }
    let each = (4 << 20) + 8192;
    let host = gpu.user.as_mut().unwrap();
    let h_a = host.alloc(each, 4096).unwrap();
    let h_b = host.alloc(each, 4096).unwrap();
    let vram = gpu.user_vram.as_mut().unwrap();
    let d_a = vram.alloc(each, 4096).unwrap();
    let d_b = vram.alloc(each, 4096).unwrap();
    let mut salt = 0;
    for n in [1usize, 4096 + 3, (4 << 20) + 5] {
        for dir in CopyDirection::ALL {
            salt += 1;
            let bytes = pattern(n, salt);
            let (src, dst, src_va, dst_va) = match dir {
                CopyDirection::HostToDevice => (&h_a, &d_a.host, h_a.address(), d_a.va),
                CopyDirection::DeviceToHost => (&d_a.host, &h_b, d_a.va, h_b.address()),
                CopyDirection::DeviceToDevice => (&d_a.host, &d_b.host, d_a.va, d_b.va),
            };
            assert!(src.write(0, &bytes));
            assert!(dst.fill(0, n + 64, 0xEE));
            let before = m.sdma()[0].stats();
            q.copy(dst_va, src_va, n as u64, dir)
                .unwrap_or_else(|e| panic!("{} {n}: {e}\n{}", dir.name(), why(&m)));
            let mut got = vec![0u8; n + 64];
            assert!(dst.read(0, &mut got));
            assert!(got[..n] == bytes[..], "{} {n} bytes differ", dir.name());
            assert!(got[n..].iter().all(|b| *b == 0xEE), "{} {n}", dir.name());
            let after = m.sdma()[0].stats();
            assert_eq!(after.copied_bytes - before.copied_bytes, n as u64);
            assert_eq!(
                after.packets - before.packets,
                n.div_ceil(4 << 20) as u64 + 1
            );
        }
    }
    q.stop(&mut gpu).unwrap();
    assert!(m.sdma()[0].queue().is_none(), "{}", why(&m));
    let report = gpu.shutdown();
    assert!(report.complete(), "{report:?}");
    // `sdma_v4_0_hw_fini()` → `sdma_v4_0_enable(adev, false)`: every
    // instance halted again.
    for (i, e) in m.sdma().iter().enumerate() {
        assert!(!e.running(), "SDMA {i} left running");
        assert_eq!(e.events().last(), Some(&SdmaEvent::Halted), "SDMA {i}");
    }
    m.quiescent().unwrap();
}

#[test]
fn a_copy_into_an_unmapped_range_returns_the_mmhub_fault() {
    const UNMAPPED: u64 = 0x1234_5678_9000;
    let m = device();
    let mut gpu = up(&m);
    let mut q = barebell_bringup::sdma::open(&mut gpu, Mapping::Hws, &Quiet).unwrap();
    let src = gpu.user.as_mut().unwrap().alloc(4096, 4096).unwrap();
    let seq = q.submit_copy(UNMAPPED + 0x10, src.address(), 100).unwrap();
    let e = q.wait(seq, BOUND_NS / 100).unwrap_err();
    let CopyError::Fault { fault, .. } = e else {
        panic!("expected the latched fault, got {e}");
    };
    // Aldebaran's SDMA translates through its one MMHUB
    // (`sdma_v4_0_sw_init()`: `AMDGPU_MMHUB0(0)`), driven as MMHUB 1.7.
    assert_eq!(fault.hub, "MMHUB 1.7");
    assert_eq!(fault.addr, UNMAPPED);
    assert_eq!((fault.vmid, fault.write), (3, true));
}

/// An engine that comes out of reset halted runs nothing until a driver
/// unhalts it, as `sdma_v4_0_start()` does: the HWS's queue is not put on
/// it, the model says why, and a fence never lands. This is what the
/// bring-up did before it unhalted SDMA 4.4.0 engines.
#[test]
fn an_engine_nobody_unhalted_runs_no_hws_queue() {
    use barebell::gfx::mapper::SdmaResources;
    use barebell::sdma::{QueueSetup, SdmaMemory, SdmaMqd, SdmaQueue, SdmaVersion};
    let m = device();
    let mut gpu = up(&m);
    let mem = gpu
        .user_rings
        .as_mut()
        .unwrap()
        .put(SdmaMemory::new())
        .unwrap();
    let mqd = gpu.ring_area.as_mut().unwrap().put(SdmaMqd::new()).unwrap();
    let db = gpu.doorbells.doorbell(0x100).unwrap();
    let p = gpu.platform;
    let mut queue = SdmaQueue::new(
        mem,
        db,
        SdmaVersion::V4_4_0,
        p.clock(),
        barebell_bringup::rings::Pauser(p),
    );
    let (ring, rptr_addr, wptr_addr) = queue.addresses();
    gpu.queue
        .as_mut()
        .unwrap()
        .mapper_mut()
        .map_sdma(&SdmaResources {
            mqd,
            setup: QueueSetup {
                ring,
                ring_bytes: barebell::sdma::queue::RING_BYTES,
                rptr_addr,
                wptr_addr,
                doorbell_index: 0x100,
                vmid: 0,
            },
            version: SdmaVersion::V4_4_0,
            process: 0,
            engine: 0,
            queue: 0,
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", why(&m)));
    let refusals = m.gc_9_4_3().unwrap().sdma_refusals();
    assert!(
        refusals.iter().any(|r| r.contains("halted")),
        "{refusals:?}"
    );
    assert!(m.sdma()[0].queue().is_none());
    let seq = queue.push_fence(BOUND_NS).unwrap();
    queue.commit();
    assert!(queue.wait(seq, BOUND_NS / 1000).is_err());
}

#[test]
fn an_sdma_queue_by_registers_is_refused_with_the_reason() {
    for mapping in [Mapping::Direct, Mapping::Kiq] {
        let m = device();
        let opts = Options {
            until: Step::Queue,
            mapping: Some(mapping),
            user_memory: USER,
            user_vram: USER,
            ..Options::default()
        };
        let mut gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet).unwrap();
        let e = barebell_bringup::sdma::open(&mut gpu, mapping, &Quiet).unwrap_err();
        assert!(e.to_string().contains("--mapping hws"), "{mapping:?}: {e}");
        // Refused before any engine was touched.
        assert!(
            m.sdma().iter().all(|e| e.events().is_empty()),
            "{mapping:?}"
        );
        assert!(gpu.shutdown().complete());
    }
}
