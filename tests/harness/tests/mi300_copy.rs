//! Issue 19 on the MI300 model device (`VirtualGpu`): the bring-up's
//! SDMA queue (`barebell_bringup::sdma`) on SDMA 4.4.2 instance 0, mapped
//! by registers (`direct`, `kiq`) or through the HWS (`hws`), copying
//! host→device, device→host and device→device byte for byte; a copy into
//! an unmapped range gives the fault AID 0's MMHUB latched; the SDMA
//! engines count in the model's quiescence check.
//!
//! Expected values are written by hand from Linux 6.12 and the pinned
//! sources, never taken from the code under test:
//! - SDMA instance 0's doorbell index 0x100
//!   (`AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_START`, `amdgpu_doorbell.h`;
//!   `aqua_vanjaram_doorbell_index_init()`), doorbell dword 0x200;
//! - 4 MiB per COPY_LINEAR (`COUNT` is bits 21:0 of byte count − 1 in
//!   `vega10_sdma_pkt_open.h`);
//! - KFD's first VMID on GC 9.4.3 is 3 (`gmc_v9_0_sw_init()`), the one
//!   the HWS gives the only process;
//! - `VM_L2_PROTECTION_FAULT_STATUS` (`mmhub_1_8_0_sh_mask.h`): RW bit
//!   18, VMID at 23:20.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use barebell::sdma::CopyDirection;
use barebell_bringup::sdma::{BOUND_NS, CopyError, CopyQueue};
use barebell_bringup::{FirmwareDir, Gpu, Mapping, Options, Quiet, Step};
use barebell_model::VirtualGpu;
use barebell_model::parts;
use barebell_model::vgpu::HostMemory;

/// Host and device buffers of this many bytes each (two of each).
const fn user_bytes(largest: usize) -> usize {
    (2 * largest.next_multiple_of(4096) + (4 << 20)).next_multiple_of(2 << 20)
}

fn device(largest: usize) -> VirtualGpu {
    let user = user_bytes(largest);
    let mem = HostMemory::allocate_sized((64 << 20) + user, (4 << 20) + user).unwrap();
    VirtualGpu::new(
        parts::mi300x(),
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(7),
    )
    .unwrap()
}

fn why(m: &VirtualGpu) -> String {
    let mut s = String::new();
    if let Some(h) = m.gc_9_4_3().unwrap().mec().hws() {
        s += &format!("HWS refusal: {:?}\n", h.refusal());
    }
    for r in m.gc_9_4_3().unwrap().mec().refusals() {
        s += &format!("CP refusal: {r}\n");
    }
    for r in m.gc_9_4_3().unwrap().sdma_refusals() {
        s += &format!("SDMA: {r}\n");
    }
    for (i, e) in m.sdma().iter().enumerate() {
        if let Some(st) = e.stopped() {
            s += &format!("SDMA {i} stopped: {st:?}\n");
        }
    }
    s
}

fn up<'p>(m: &'p VirtualGpu, mapping: Mapping, largest: usize) -> Gpu<'p> {
    let user = user_bytes(largest);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        user_memory: user,
        user_vram: user,
        ..Options::default()
    };
    barebell_bringup::run(m, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{}", why(m)))
}

/// `n` bytes of `view` from `at`, read with volatile loads.
fn snap(view: &barebell::mem::DmaView<'_>, at: usize, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    assert!(view.read(at, &mut out), "read past the view");
    out
}

/// Writes `n` bytes of `pattern(salt)` at the start of `view`.
fn put_pattern(view: &barebell::mem::DmaView<'_>, n: usize, salt: u64) {
    let mut b = vec![0u8; n];
    pattern(&mut b, salt);
    assert!(view.write(0, &b));
}

fn pattern(buf: &mut [u8], salt: u64) {
    let mut x = salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
}

/// Copies each size in each direction, checking every destination byte
/// and a guard of 64 bytes after it.
fn copies(m: &VirtualGpu, gpu: &mut Gpu<'_>, q: &mut CopyQueue<'_>, sizes: &[usize]) {
    let largest = *sizes.iter().max().unwrap();
    let each = largest.next_multiple_of(4096) + 4096;
    let host = gpu.user.as_mut().unwrap();
    let h_a = host.alloc(each, 4096).unwrap();
    let h_b = host.alloc(each, 4096).unwrap();
    let vram = gpu.user_vram.as_mut().unwrap();
    let d_a = vram.alloc(each, 4096).unwrap();
    let d_b = vram.alloc(each, 4096).unwrap();
    let mut salt = 0;
    for &n in sizes {
        for dir in CopyDirection::ALL {
            salt += 1;
            let (src_va, dst_va) = match dir {
                CopyDirection::HostToDevice => {
                    put_pattern(&h_a, n, salt);
                    assert!(d_a.host.fill(0, n + 64, 0xEE));
                    (h_a.address(), d_a.va)
                }
                CopyDirection::DeviceToHost => {
                    put_pattern(&d_a.host, n, salt);
                    assert!(h_b.fill(0, n + 64, 0xEE));
                    (d_a.va, h_b.address())
                }
                CopyDirection::DeviceToDevice => {
                    put_pattern(&d_a.host, n, salt);
                    assert!(d_b.host.fill(0, n + 64, 0xEE));
                    (d_a.va, d_b.va)
                }
            };
            let before = m.sdma()[0].stats();
            q.copy(dst_va, src_va, n as u64, dir)
                .unwrap_or_else(|e| panic!("{} {n}: {e}\n{}", dir.name(), why(m)));
            let (src, dst) = match dir {
                CopyDirection::HostToDevice => (&h_a, &d_a.host),
                CopyDirection::DeviceToHost => (&d_a.host, &h_b),
                CopyDirection::DeviceToDevice => (&d_a.host, &d_b.host),
            };
            let (src, dst) = (snap(src, 0, n), snap(dst, 0, n + 64));
            assert!(src[..n] == dst[..n], "{} {n} bytes differ", dir.name());
            assert!(
                dst[n..n + 64].iter().all(|b| *b == 0xEE),
                "{} {n}: written past the end",
                dir.name()
            );
            let after = m.sdma()[0].stats();
            assert_eq!(after.copied_bytes - before.copied_bytes, n as u64);
            // ceil(n / 4 MiB) COPY_LINEARs and one FENCE.
            assert_eq!(
                after.packets - before.packets,
                n.div_ceil(4 << 20) as u64 + 1,
                "{} {n}",
                dir.name()
            );
        }
    }
}

fn run(mapping: Mapping, sizes: &[usize]) {
    let largest = *sizes.iter().max().unwrap();
    let m = device(largest);
    let mut gpu = up(&m, mapping, largest);
    let mut q = barebell_bringup::sdma::open(&mut gpu, mapping, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{}", why(&m)));
    assert_eq!(q.doorbell, 0x100);
    // The queue is on instance 0, on doorbell dword 0x200; no other
    // instance runs one.
    let on = m.sdma()[0].queue().unwrap();
    assert_eq!(on.doorbell, Some(0x200));
    assert!(m.sdma()[1..].iter().all(|e| e.queue().is_none()));
    match mapping {
        // The queue step's VMID for a directly loaded queue.
        Mapping::Direct | Mapping::Kiq => {
            assert_eq!((q.vmid, on.vmid), (Some(8), 8));
        }
        // The HWS gave the process KFD's first VMID.
        _ => assert_eq!((q.vmid, on.vmid), (None, 3)),
    }
    copies(&m, &mut gpu, &mut q, sizes);
    q.stop(&mut gpu).unwrap();
    assert!(m.sdma()[0].queue().is_none(), "{}", why(&m));
    let report = gpu.shutdown();
    assert!(report.complete(), "{report:?}");
    m.quiescent().unwrap();
    // With the PSP loading SDMA firmware, Linux never writes
    // `SDMA_F32_CNTL.HALT` (`sdma_v4_4_2_inst_enable()` returns before it,
    // `sdma_v4_4_2_inst_start()` unhalts only firmware it loads itself):
    // the engine ran because its firmware was in place, and no driver
    // write halted or unhalted it.
    use barebell_model::sdma::SdmaEvent;
    let events = m.sdma()[0].events();
    assert!(
        events.contains(&SdmaEvent::StartedWithItsFirmware),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, SdmaEvent::Unhalted | SdmaEvent::Halted)),
        "{mapping:?}: SDMA_F32_CNTL.HALT written: {events:?}"
    );
}

/// 1 byte, 4 KiB + 3, and 4 MiB + 5 (two COPY_LINEARs).
const SIZES: [usize; 3] = [1, 4096 + 3, (4 << 20) + 5];

#[test]
fn direct_copies_byte_exact_in_every_direction() {
    run(Mapping::Direct, &SIZES);
}

#[test]
fn kiq_mapped_bring_up_copies_with_a_directly_loaded_sdma_queue() {
    run(Mapping::Kiq, &[1, 4096 + 3]);
}

#[test]
fn hws_copies_byte_exact_in_every_direction() {
    run(Mapping::Hws, &SIZES);
}

#[test]
fn sixty_four_mib_through_the_hws() {
    // 64 MiB: sixteen COPY_LINEARs per copy.
    run(Mapping::Hws, &[64 << 20]);
}

/// A VA the process tables leave unmapped.
const UNMAPPED: u64 = 0x1234_5678_9000;

fn unmapped_copy_faults(mapping: Mapping, vmid: u8) {
    let m = device(8192);
    let mut gpu = up(&m, mapping, 8192);
    let mut q = barebell_bringup::sdma::open(&mut gpu, mapping, &Quiet).unwrap();
    let src = gpu.user.as_mut().unwrap().alloc(4096, 4096).unwrap();
    let src = src.address();
    let seq = q.submit_copy(UNMAPPED + 0x10, src, 100).unwrap();
    let e = q.wait(seq, BOUND_NS / 100).unwrap_err();
    let CopyError::Fault { fault, .. } = e else {
        panic!("expected the latched fault, got {e}");
    };
    assert_eq!(fault.hub, "MMHUB 1.8");
    assert_eq!(fault.addr, UNMAPPED);
    assert_eq!((fault.vmid, fault.write), (vmid, true));
    // RW (bit 18) and the VMID (23:20) as the hub latched them.
    assert_eq!(
        fault.status & (1 << 18 | 0xF << 20),
        1 << 18 | u32::from(vmid) << 20
    );
    assert!(e.to_string().contains("MMHUB 1.8"), "{e}");
    // AID 0's MMHUB took it: the other AIDs' latched nothing.
    assert!(m.gc_9_4_3().unwrap().mmhubs()[0].fault_latched());
    assert!(
        m.gc_9_4_3().unwrap().mmhubs()[1..]
            .iter()
            .all(|h| !h.fault_latched())
    );
    q.stop(&mut gpu).unwrap();
    assert!(gpu.shutdown().complete());
    m.quiescent().unwrap();
}

#[test]
fn direct_copy_into_an_unmapped_range_returns_the_mmhub_fault() {
    unmapped_copy_faults(Mapping::Direct, 8);
}

#[test]
fn hws_copy_into_an_unmapped_range_returns_the_mmhub_fault() {
    unmapped_copy_faults(Mapping::Hws, 3);
}

#[test]
fn an_sdma_queue_left_running_is_stopped_by_the_teardown() {
    // Loaded by registers and never stopped by the caller: the teardown's
    // SDMA stage stops every instance's queue (`sdma_v4_4_2_hw_fini()` →
    // `sdma_v4_4_2_inst_enable(false)`, which leaves `HALT` alone when
    // the PSP loaded the firmware), so the model, which reports an active
    // queue, ends quiescent with the engine still running its firmware.
    for mapping in [Mapping::Direct, Mapping::Kiq] {
        let m = device(8192);
        let mut gpu = up(&m, mapping, 8192);
        let q = barebell_bringup::sdma::open(&mut gpu, mapping, &Quiet).unwrap();
        assert!(m.sdma()[0].running());
        drop(q);
        let report = gpu.shutdown();
        assert!(
            matches!(
                report.outcome(barebell_bringup::Stage::HaltSdma),
                Some(barebell_bringup::Outcome::Done(_))
            ),
            "{mapping:?}"
        );
        assert!(report.complete());
        assert!(m.sdma().iter().all(|e| e.queue().is_none()));
        assert!(m.sdma()[0].running(), "{mapping:?}");
        m.quiescent().unwrap();
    }
    // Stopped first (`sdma_v4_4_2_inst_gfx_stop()`), the same teardown
    // leaves the device quiescent.
    for mapping in [Mapping::Direct, Mapping::Kiq] {
        let m = device(8192);
        let mut gpu = up(&m, mapping, 8192);
        let q = barebell_bringup::sdma::open(&mut gpu, mapping, &Quiet).unwrap();
        q.stop(&mut gpu).unwrap();
        assert!(m.sdma()[0].queue().is_none());
        assert!(gpu.shutdown().complete());
        m.quiescent().unwrap();
    }
}

#[test]
fn an_hws_sdma_queue_leaves_the_engine_with_its_process() {
    // The HWS maps the SDMA queue in the compute queue's process: the
    // teardown's UNMAP_QUEUES for that process (and the HIQ's end) takes
    // it off the engine even when the caller did not stop it.
    let m = device(8192);
    let mut gpu = up(&m, Mapping::Hws, 8192);
    let q = barebell_bringup::sdma::open(&mut gpu, Mapping::Hws, &Quiet).unwrap();
    assert_eq!(
        m.gc_9_4_3()
            .unwrap()
            .mec()
            .hws()
            .unwrap()
            .sdma_queues()
            .len(),
        1
    );
    // One compute queue (the bring-up's) and an SDMA queue.
    barebell_tests::assert_runlist_not_over_subscribed(&m);
    drop(q);
    assert!(gpu.shutdown().complete());
    assert!(m.sdma()[0].queue().is_none());
    m.quiescent().unwrap();
}
