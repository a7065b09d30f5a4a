//! Kernel dispatch on the CP model's shader engines with hand-built kernel
//! descriptors and machine code: completion, the queue error an
//! unimplemented or illegal instruction raises, and the scratch refusal.
//! (Compiler-built kernels run through `barebell run` in the CLI's tests.)

use barebell::aql::packet::{Dispatch, KernelDispatchPacket, SignalHandle};
use barebell::aql::queue::QueueConfig;
use barebell_model::cp::{CpError, CpModel};
use barebell_model::wave::{KernelFault, WaveFault};
use barebell_model::{Seed, TickingClock};
use barebell_tests::{rig, signals};

const BOUND_NS: u64 = 1_000_000;

/// One page holding a kernel descriptor at 0 and code at 256.
#[repr(C, align(4096))]
struct Page([u8; 4096]);

/// Places `code` behind a wave32 kernel descriptor with
/// `private_segment_fixed_size = private`, maps the page into the model,
/// returns the descriptor's address. Layout (LLVM 19
/// `AMDHSAKernelDescriptor.h`): private_segment_fixed_size at 4,
/// kernel_code_entry_byte_offset at 16, compute_pgm_rsrc1 at 48 (both
/// FLOAT_DENORM_MODE fields 3 at bits 16..19), kernel_code_properties at
/// 56 (ENABLE_WAVEFRONT_SIZE32 is bit 10).
fn kernel(m: &mut CpModel, code: &[u8], private: u32) -> u64 {
    let page: &'static mut Page = Box::leak(Box::new(Page([0; 4096])));
    let b = &mut page.0;
    b[4..8].copy_from_slice(&private.to_le_bytes());
    b[16..24].copy_from_slice(&256i64.to_le_bytes());
    b[48..52].copy_from_slice(&(0xf_u32 << 16).to_le_bytes());
    b[56..58].copy_from_slice(&(1u16 << 10).to_le_bytes());
    b[256..256 + code.len()].copy_from_slice(code);
    let addr = b.as_ptr() as u64;
    // SAFETY: leaked, so it outlives the model.
    unsafe { m.dma_mut().map(addr, 4096) };
    addr
}

fn packet(kd: u64, signal: SignalHandle) -> KernelDispatchPacket {
    Dispatch::linear(64, 32, kd, 0)
        .signal(signal)
        .packet()
        .unwrap()
}

/// [`packet`] asking for `private` bytes per work-item, as the runtime
/// fills it from the descriptor's fixed size.
fn packet_private(kd: u64, signal: SignalHandle, private: u32) -> KernelDispatchPacket {
    let mut d = Dispatch::linear(64, 32, kd, 0).signal(signal);
    d.private_segment_size = private;
    d.packet().unwrap()
}

/// The runtime's `amd_queue_t` offsets of the scratch fields.
fn off(field: &str) -> u64 {
    use barebell::aql::queue::AmdQueue;
    use core::mem::offset_of;
    (match field {
        "loc" => offset_of!(AmdQueue, scratch_backing_memory_location),
        "size" => offset_of!(AmdQueue, scratch_backing_memory_byte_size),
        "inactive" => offset_of!(AmdQueue, queue_inactive_signal),
        _ => offset_of!(AmdQueue, scratch_wave64_lane_byte_size),
    }) as u64
}

const S_ENDPGM: [u8; 4] = [0x00, 0x00, 0xb0, 0xbf];

#[test]
fn machine_code_runs_and_the_signal_drops() {
    let mut m = CpModel::new(Seed(3));
    let kd = kernel(&mut m, &S_ENDPGM, 0);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 1);
    r.queue
        .submit(
            &packet(kd, s[0].handle()),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(m.errors(), []);
    assert_eq!(s[0].value(), 0);
    // 64 work-items in workgroups of 32: two workgroups of one wave32
    // each, one s_endpgm per wave.
    assert_eq!(m.shader.dispatches, 1);
    assert_eq!(m.shader.last.workgroups, 2);
    assert_eq!(m.shader.last.waves, 2);
    assert_eq!(m.shader.last.instructions, 2);
}

/// One AQL queue served by four XCCs (the GC 9.4.3 SPX arrangement; the
/// split does not depend on the ISA, so gfx1100 code serves here): 256
/// work-items in workgroups of 32 are 8 workgroups, dealt round-robin
/// one at a time, 2 per XCC; the completion signal, 1 before, is
/// decremented once for the packet (HSA: one decrement per packet), so it
/// reads 0, not -3.
#[test]
fn one_dispatch_over_four_xccs_signals_once() {
    let mut m = CpModel::new(Seed(5));
    m.shader.xccs = 4;
    m.shader.tg_chunk = 1;
    let kd = kernel(&mut m, &S_ENDPGM, 0);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 1);
    let p = Dispatch::linear(256, 32, kd, 0)
        .signal(s[0].handle())
        .packet()
        .unwrap();
    r.queue
        .submit(&p, &TickingClock::new(1_000), BOUND_NS)
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(m.errors(), []);
    assert_eq!(s[0].value(), 0);
    assert_eq!(m.shader.dispatches, 1);
    assert_eq!(m.shader.last.workgroups, 8);
    assert_eq!(m.shader.xcc_workgroups, [2, 2, 2, 2, 0, 0, 0, 0]);
}

#[test]
fn unimplemented_instruction_is_the_queue_error_and_the_signal_stays() {
    // v_mov_b32_e32 v0, 0 ; v_cubeid_f32 v0, v1, v2, v3 ; s_endpgm
    // (llvm-mc-19's text for these bytes on gfx1100).
    let code = [
        0x80, 0x02, 0x00, 0x7e, 0x00, 0x00, 0x0c, 0xd6, 0x01, 0x05, 0x0e, 0x04, 0x00, 0x00, 0xb0,
        0xbf,
    ];
    let mut m = CpModel::new(Seed(4));
    let kd = kernel(&mut m, &code, 0);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 2, 1);
    let clock = TickingClock::new(1_000);
    r.queue
        .submit(&packet(kd, s[0].handle()), &clock, BOUND_NS)
        .unwrap();
    r.queue
        .submit(&packet(kd, s[1].handle()), &clock, BOUND_NS)
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    let [CpError::Kernel { queue, id, fault }] = m.errors() else {
        panic!("one kernel error expected, got {:?}", m.errors());
    };
    assert_eq!((*queue, *id), (0, 0));
    let KernelFault::Wave {
        pc,
        fault: WaveFault::Unimplemented { text },
        ..
    } = fault
    else {
        panic!("not an unimplemented instruction: {fault:?}");
    };
    assert_eq!(*pc, kd + 256 + 4);
    assert_eq!(text.as_str(), "v_cubeid_f32 v0, v1, v2, v3");
    let msg = m.errors()[0].to_string();
    assert!(
        msg.contains(&format!(
            "unimplemented instruction `v_cubeid_f32 v0, v1, v2, v3` at {:#x}",
            kd + 260
        )),
        "{msg}"
    );
    // The queue halted on the packet: neither signal dropped, the second
    // packet was never launched.
    assert_eq!((s[0].value(), s[1].value()), (1, 1));
    let st = m.stats(0).unwrap();
    assert!(st.halted);
    assert_eq!(st.consumed, 1);
    assert_eq!(r.queue.read_index(), 1);
}

#[test]
fn illegal_word_is_named_with_its_address() {
    // 0xffffffff is no gfx1100 instruction (llvm-mc-19: invalid encoding).
    let mut m = CpModel::new(Seed(5));
    let kd = kernel(&mut m, &[0xff; 4], 0);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 1);
    r.queue
        .submit(
            &packet(kd, s[0].handle()),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert!(
        matches!(
            m.errors(),
            [CpError::Kernel {
                fault: KernelFault::Wave {
                    fault: WaveFault::Illegal { word: 0xffff_ffff },
                    ..
                },
                ..
            }]
        ),
        "{:?}",
        m.errors()
    );
    assert!(
        m.errors()[0]
            .to_string()
            .contains("illegal instruction 0xffffffff")
    );
    assert_eq!(s[0].value(), 1);
}

#[test]
fn private_segment_without_queue_scratch_is_refused() {
    // The runtime's queue descriptor has no scratch (AqlQueue::new zeroes
    // the scratch fields); the kernel asks for 16 private bytes per lane.
    let mut m = CpModel::new(Seed(6));
    let kd = kernel(&mut m, &S_ENDPGM, 16);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 1);
    r.queue
        .submit(
            &packet_private(kd, s[0].handle(), 16),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(
        m.errors(),
        [CpError::Kernel {
            queue: 0,
            id: 0,
            fault: KernelFault::NoScratch { kernel_bytes: 16 }
        }]
    );
    assert!(m.errors()[0].to_string().contains("no scratch"));
    assert_eq!(s[0].value(), 1);
    assert_eq!(m.shader.dispatches, 0);
}

#[test]
fn scratch_is_sized_by_the_packet_not_the_descriptor() {
    // The descriptor asks for 16 private bytes, the packet for none, and
    // the queue has no scratch: the CP sizes scratch from the packet
    // (ROCR's `AqlQueue::HandleInsufficientScratch()`), so a kernel that
    // never touches scratch runs. The reverse, a packet asking for 16
    // over a descriptor asking for none, needs the queue's scratch.
    let mut m = CpModel::new(Seed(16));
    let kd = kernel(&mut m, &S_ENDPGM, 16);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 1);
    r.queue
        .submit(
            &packet_private(kd, s[0].handle(), 0),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(m.errors(), []);
    assert_eq!(s[0].value(), 0);
    assert_eq!(m.shader.dispatches, 1);

    let mut m = CpModel::new(Seed(17));
    let kd = kernel(&mut m, &S_ENDPGM, 0);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 1);
    r.queue
        .submit(
            &packet_private(kd, s[0].handle(), 16),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(
        m.errors(),
        [CpError::Kernel {
            queue: 0,
            id: 0,
            fault: KernelFault::NoScratch { kernel_bytes: 16 }
        }]
    );
    assert_eq!(s[0].value(), 1);
}

#[test]
fn queue_scratch_too_small_per_lane_is_refused() {
    // amd_queue_t's scratch fields as AqlQueue::InitScratchSRD fills
    // them, at the runtime's offsets (the model decodes them with its
    // own). 8 bytes per wave64 lane give a wave32 lane 16; the kernel asks
    // for 32.
    let mut m = CpModel::new(Seed(7));
    let kd = kernel(&mut m, &S_ENDPGM, 32);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let backing: &'static mut [u8] = Box::leak(vec![0u8; 4096].into_boxed_slice());
    let d = r.queue.memory().descriptor_address();
    // SAFETY: the descriptor is this queue's leaked amd_queue_t; the model
    // runs on this thread, after these stores.
    unsafe {
        std::sync::atomic::AtomicU64::from_ptr((d + off("loc")) as *mut u64).store(
            backing.as_ptr() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        std::sync::atomic::AtomicU64::from_ptr((d + off("size")) as *mut u64)
            .store(4096, std::sync::atomic::Ordering::Relaxed);
        std::sync::atomic::AtomicU32::from_ptr((d + off("lane")) as *mut u32)
            .store(8, std::sync::atomic::Ordering::Relaxed);
    }
    let s = signals(&mut m, 1, 1);
    r.queue
        .submit(
            &packet_private(kd, s[0].handle(), 32),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(
        m.errors(),
        [CpError::Kernel {
            queue: 0,
            id: 0,
            fault: KernelFault::ScratchTooSmall {
                kernel_bytes: 32,
                queue_bytes: 16
            }
        }]
    );
    assert_eq!(s[0].value(), 1);
}

#[test]
fn queue_scratch_large_enough_lets_the_kernel_run() {
    let mut m = CpModel::new(Seed(8));
    let kd = kernel(&mut m, &S_ENDPGM, 32);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let backing: &'static mut [u8] = Box::leak(vec![0u8; 4096].into_boxed_slice());
    let d = r.queue.memory().descriptor_address();
    // SAFETY: as above.
    unsafe {
        std::sync::atomic::AtomicU64::from_ptr((d + off("loc")) as *mut u64).store(
            backing.as_ptr() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        std::sync::atomic::AtomicU64::from_ptr((d + off("size")) as *mut u64)
            .store(4096, std::sync::atomic::Ordering::Relaxed);
        std::sync::atomic::AtomicU32::from_ptr((d + off("lane")) as *mut u32)
            .store(16, std::sync::atomic::Ordering::Relaxed);
    }
    let s = signals(&mut m, 1, 1);
    r.queue
        .submit(
            &packet_private(kd, s[0].handle(), 32),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(m.errors(), []);
    assert_eq!(s[0].value(), 0);
}

/// Stores `v` at byte `at` of the queue descriptor `d` (the runtime's side
/// of `amd_queue_t`).
fn put_u64(d: u64, at: u64, v: u64) {
    // SAFETY: `d` is the rig queue's leaked amd_queue_t and `at` one of
    // its 8-byte aligned fields; the model runs on this thread, after the
    // store.
    unsafe {
        std::sync::atomic::AtomicU64::from_ptr((d + at) as *mut u64)
            .store(v, std::sync::atomic::Ordering::Release)
    };
}

/// The dynamic-scratch handshake ROCR 5.2.3's
/// `AqlQueue::DynamicScratchHandler` answers. A queue whose
/// `queue_inactive_signal` is set gets no refusal when a dispatch needs
/// scratch it lacks: the CP stores the "insufficient scratch" code there
/// (0x400 for this wave32 kernel; bit 0 for wave64: ROCR tests `error_code
/// & 0x401`), leaves the packet unconsumed (`read_dispatch_id` on it, where
/// the handler reads `private_segment_size`), and waits; once the runtime
/// wrote the scratch fields and stored 0 ("Restart the queue"), the
/// dispatch runs. Before the model did this, the dispatch was refused
/// at once (`private_segment_without_queue_scratch_is_refused`).
#[test]
fn a_queue_with_an_inactive_signal_asks_its_runtime_for_scratch() {
    let mut m = CpModel::new(Seed(9));
    let kd = kernel(&mut m, &S_ENDPGM, 16);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 2, 1);
    s[1].reset(0);
    let d = r.queue.memory().descriptor_address();
    put_u64(d, off("inactive"), s[1].handle().0);
    r.queue
        .submit(
            &packet_private(kd, s[0].handle(), 16),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(m.errors(), []);
    assert_eq!(
        s[1].value(),
        0x400,
        "the insufficient-scratch code (wave32)"
    );
    assert_eq!(m.stats(0).unwrap().consumed, 0);
    assert_eq!(m.stats(0).unwrap().scratch_wait, Some(0));
    assert_eq!(m.shader.dispatches, 0);
    // Still waiting while the value stays.
    m.run_until_idle(10_000).unwrap();
    assert_eq!(m.stats(0).unwrap().scratch_requests, 1);
    assert_eq!(s[0].value(), 1);
    // The runtime's answer: scratch for 16 bytes per wave32 lane (8 per
    // wave64 lane), then 0.
    let backing: &'static mut [u8] = Box::leak(vec![0u8; 4096].into_boxed_slice());
    put_u64(d, off("loc"), backing.as_ptr() as u64);
    put_u64(d, off("size"), 4096);
    // SAFETY: as in `put_u64`, a u32 field.
    unsafe {
        std::sync::atomic::AtomicU32::from_ptr((d + off("lane")) as *mut u32)
            .store(8, std::sync::atomic::Ordering::Release)
    };
    s[1].reset(0);
    m.run_until_idle(10_000).unwrap();
    assert_eq!(m.errors(), []);
    assert_eq!(s[0].value(), 0);
    assert_eq!(m.shader.dispatches, 1);
    assert_eq!(m.stats(0).unwrap().scratch_wait, None);
}

/// A runtime that answers without giving scratch (stores 0 and leaves the
/// fields empty) gets the refusal, not a second request.
#[test]
fn an_answer_without_scratch_is_refused() {
    let mut m = CpModel::new(Seed(10));
    let kd = kernel(&mut m, &S_ENDPGM, 16);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 2, 1);
    s[1].reset(0);
    put_u64(
        r.queue.memory().descriptor_address(),
        off("inactive"),
        s[1].handle().0,
    );
    r.queue
        .submit(
            &packet_private(kd, s[0].handle(), 16),
            &TickingClock::new(1_000),
            BOUND_NS,
        )
        .unwrap();
    m.run_until_idle(10_000).unwrap();
    assert_eq!(s[1].value(), 0x400);
    s[1].reset(0);
    m.run_until_idle(10_000).unwrap();
    assert_eq!(
        m.errors(),
        [CpError::Kernel {
            queue: 0,
            id: 0,
            fault: KernelFault::NoScratch { kernel_bytes: 16 }
        }]
    );
    assert_eq!(m.stats(0).unwrap().scratch_requests, 1);
    assert_eq!(s[1].value(), 0);
}
