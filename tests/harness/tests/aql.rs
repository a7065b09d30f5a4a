//! The AQL submit path against the CP model: ordering, wrap, full rings,
//! hung and misbehaving CPs.

use barebell::aql::packet::{
    AgentDispatchPacket, BarrierKind, BarrierPacket, BarrierValuePacket, Dispatch, Fences,
    KernelDispatchPacket, PacketHeader, SignalHandle,
};
use barebell::aql::queue::{QueueConfig, QueueMem, SubmitError};
use barebell::aql::signal::{Condition, SignalTimeout};
use barebell::time::StdClock;
use barebell_model::cp::{CpError, CpModel};
use barebell_model::thread::CpThread;
use barebell_model::wave::KernelFault;
use barebell_model::{Seed, TickingClock};
use barebell_tests::{rig, rig_with, signals};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

const KERNEL_A: u64 = 0x1000;
const KERNEL_B: u64 = 0x2000;
const BOUND_NS: u64 = 1_000_000;
const MAX_STEPS: u64 = 100_000;

fn clock() -> TickingClock {
    TickingClock::new(1_000)
}

fn dispatch(kernel: u64, signal: SignalHandle) -> KernelDispatchPacket {
    Dispatch::linear(256, 64, kernel, 0)
        .signal(signal)
        .packet()
        .unwrap()
}

/// Registers KERNEL_A and KERNEL_B to append their name to a log.
fn logging_kernels(model: &mut CpModel) -> Arc<Mutex<Vec<&'static str>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    for (k, name) in [(KERNEL_A, "A"), (KERNEL_B, "B")] {
        let l = log.clone();
        model.register_kernel(k, Box::new(move |_| l.lock().unwrap().push(name)));
    }
    log
}

#[test]
fn dispatch_runs_and_signal_drops_for_many_seeds() {
    for seed in 0..32 {
        let mut m = CpModel::new(Seed(seed));
        let seen = Arc::new(Mutex::new(None));
        let s2 = seen.clone();
        m.register_kernel(
            KERNEL_A,
            Box::new(move |info| *s2.lock().unwrap() = Some(*info)),
        );
        let r = rig::<16>(&mut m, QueueConfig::default());
        let sig = signals(&mut m, 1, 1);
        let pkt = Dispatch {
            grid: [640, 2, 1],
            workgroup: [64, 2, 1],
            ..Dispatch::linear(1, 1, KERNEL_A, 0xabc0)
        }
        .signal(sig[0].handle())
        .packet()
        .unwrap();
        let id = r.queue.submit(&pkt, &clock(), BOUND_NS).unwrap();
        assert_eq!(id, 0);
        assert_eq!(
            r.doorbell_value(),
            0,
            "doorbell carries the id of the last packet"
        );
        m.run_until_idle(MAX_STEPS).expect("model went idle");
        assert_eq!(
            sig[0].wait(Condition::Eq, 0, &clock(), BOUND_NS),
            Ok(0),
            "seed {seed}"
        );
        let info = seen.lock().unwrap().expect("kernel ran");
        assert_eq!(info.grid, [640, 2, 1]);
        assert_eq!(info.workgroup, [64, 2, 1]);
        assert_eq!(info.dimensions, 2);
        assert_eq!(info.kernarg_address, 0xabc0);
        assert_eq!(r.queue.read_index(), 1);
        assert!(m.errors().is_empty());
    }
}

#[test]
fn barrier_bit_orders_completion() {
    let mut reordered_without_barrier = 0;
    for seed in 0..64 {
        for barrier in [false, true] {
            let mut m = CpModel::new(Seed(seed));
            let log = logging_kernels(&mut m);
            let r = rig::<16>(&mut m, QueueConfig::default());
            let a = dispatch(KERNEL_A, SignalHandle::NONE);
            let b = Dispatch::linear(256, 64, KERNEL_B, 0)
                .fences(Fences::SYSTEM.with_barrier(barrier))
                .packet()
                .unwrap();
            r.queue.submit_batch(&[a, b], &clock(), BOUND_NS).unwrap();
            m.run_until_idle(MAX_STEPS).unwrap();
            let order = log.lock().unwrap().clone();
            assert_eq!(order.len(), 2);
            if barrier {
                assert_eq!(
                    order,
                    ["A", "B"],
                    "seed {seed}: barrier bit must hold B until A completes"
                );
            } else if order == ["B", "A"] {
                reordered_without_barrier += 1;
            }
        }
    }
    // Without the barrier bit the model lets independent dispatches finish
    // out of order; otherwise the barrier test above would prove nothing.
    assert!(reordered_without_barrier > 0);
}

#[test]
fn barrier_and_waits_for_all_and_or_for_any() {
    for kind in [BarrierKind::And, BarrierKind::Or] {
        let mut m = CpModel::new(Seed(7));
        let log = logging_kernels(&mut m);
        let r = rig::<8>(&mut m, QueueConfig::default());
        let s = signals(&mut m, 3, 1);
        let (dep1, dep2, done) = (&s[0], &s[1], &s[2]);
        let bar = BarrierPacket::new(
            kind,
            &[dep1.handle(), dep2.handle()],
            done.handle(),
            Fences::SYSTEM,
        )
        .unwrap();
        r.queue.submit(&bar, &clock(), BOUND_NS).unwrap();
        r.queue
            .submit(&dispatch(KERNEL_A, SignalHandle::NONE), &clock(), BOUND_NS)
            .unwrap();
        m.run_until_idle(1_000).unwrap();
        assert_eq!(done.value(), 1, "{kind:?}: no dependency met yet");
        assert!(
            log.lock().unwrap().is_empty(),
            "packets behind a barrier wait"
        );
        dep1.reset(0);
        m.run_until_idle(1_000).unwrap();
        match kind {
            BarrierKind::And => {
                assert_eq!(done.value(), 1, "AND needs both");
                dep2.reset(0);
                m.run_until_idle(1_000).unwrap();
                assert_eq!(done.value(), 0);
            }
            BarrierKind::Or => assert_eq!(done.value(), 0, "OR needs one"),
        }
        assert_eq!(*log.lock().unwrap(), ["A"]);
    }
}

#[test]
fn barrier_value_packet_waits_on_masked_condition() {
    let mut m = CpModel::new(Seed(3));
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 2, 0);
    s[0].reset(0x10);
    let p = BarrierValuePacket::new(
        s[0].handle(),
        Condition::Eq,
        0x3,
        0xf,
        s[1].handle(),
        Fences::SYSTEM,
    );
    s[1].reset(1);
    r.queue.submit(&p, &clock(), BOUND_NS).unwrap();
    m.run_until_idle(1_000).unwrap();
    assert_eq!(s[1].value(), 1);
    s[0].reset(0x13); // masked low nibble now 3
    m.run_until_idle(1_000).unwrap();
    assert_eq!(s[1].value(), 0);
}

#[test]
fn ring_wraps_many_times() {
    let mut m = CpModel::new(Seed(11));
    let count = Arc::new(AtomicU64::new(0));
    let c = count.clone();
    m.register_kernel(
        KERNEL_A,
        Box::new(move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        }),
    );
    let r = rig::<4>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 40);
    for round in 0..10u64 {
        for i in 0..4 {
            let id = r
                .queue
                .submit(&dispatch(KERNEL_A, s[0].handle()), &clock(), BOUND_NS)
                .unwrap();
            assert_eq!(id, round * 4 + i);
        }
        m.run_until_idle(MAX_STEPS).unwrap();
    }
    assert_eq!(count.load(Ordering::Relaxed), 40);
    assert_eq!(s[0].value(), 0);
    assert_eq!(r.queue.read_index(), 40);
    assert_eq!(m.stats(r.model_queue).unwrap().consumed, 40);
}

#[test]
fn u64_indices_wrap_through_zero() {
    let start = u64::MAX - 5;
    let mut m = CpModel::new(Seed(5));
    m.register_kernel(KERNEL_A, Box::new(|_| {}));
    let r = rig::<4>(
        &mut m,
        QueueConfig {
            start_index: start,
            ..Default::default()
        },
    );
    let s = signals(&mut m, 1, 12);
    let mut ids = Vec::new();
    for _ in 0..3 {
        for _ in 0..4 {
            ids.push(
                r.queue
                    .submit(&dispatch(KERNEL_A, s[0].handle()), &clock(), BOUND_NS)
                    .unwrap(),
            );
            assert_eq!(r.doorbell_value(), *ids.last().unwrap());
        }
        m.run_until_idle(MAX_STEPS).unwrap();
    }
    let expect: Vec<u64> = (0..12).map(|i| start.wrapping_add(i)).collect();
    assert_eq!(ids, expect);
    assert_eq!(r.queue.read_index(), start.wrapping_add(12));
    assert_eq!(r.queue.read_index(), 6);
    assert_eq!(s[0].value(), 0);
}

#[test]
fn full_ring_gives_typed_timeout() {
    let mut m = CpModel::new(Seed(1));
    m.register_kernel(KERNEL_A, Box::new(|_| {}));
    let r = rig::<4>(&mut m, QueueConfig::default());
    for _ in 0..4 {
        r.queue
            .submit(&dispatch(KERNEL_A, SignalHandle::NONE), &clock(), BOUND_NS)
            .unwrap();
    }
    let err = r
        .queue
        .submit(&dispatch(KERNEL_A, SignalHandle::NONE), &clock(), BOUND_NS)
        .unwrap_err();
    match err {
        SubmitError::QueueFull {
            first_id,
            count,
            read_index,
            waited_ns,
        } => {
            assert_eq!((first_id, count, read_index), (4, 1, 0));
            assert!(waited_ns >= BOUND_NS);
        }
        e => panic!("expected QueueFull, got {e:?}"),
    }
    let batch = [dispatch(KERNEL_A, SignalHandle::NONE); 5];
    assert_eq!(
        r.queue.submit_batch(&batch, &clock(), BOUND_NS),
        Err(SubmitError::BatchTooLarge { len: 5, slots: 4 })
    );
}

#[test]
fn hung_cp_gives_typed_signal_timeout_not_a_hang() {
    let mut m = CpModel::new(Seed(9));
    m.register_kernel(KERNEL_A, Box::new(|_| {}));
    let r = rig::<8>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 1);
    m.faults.stop_consuming = true;
    let cp = CpThread::spawn(m).unwrap();
    r.queue
        .submit(
            &dispatch(KERNEL_A, s[0].handle()),
            &StdClock::default(),
            BOUND_NS,
        )
        .unwrap();
    let err = s[0]
        .wait(Condition::Eq, 0, &StdClock::default(), 20_000_000)
        .unwrap_err();
    assert!(
        matches!(err, SignalTimeout { condition: Condition::Eq, compare: 0, last: 1, waited_ns } if waited_ns >= 20_000_000)
    );
    let m = cp.stop().unwrap();
    assert_eq!(m.stats(r.model_queue).unwrap().consumed, 0);
}

#[test]
fn corrupted_read_index_is_reported() {
    let mut m = CpModel::new(Seed(2));
    m.register_kernel(KERNEL_A, Box::new(|_| {}));
    let r = rig::<8>(&mut m, QueueConfig::default());
    m.faults.corrupt_read_index = true;
    r.queue
        .submit(&dispatch(KERNEL_A, SignalHandle::NONE), &clock(), BOUND_NS)
        .unwrap();
    m.run_until_idle(MAX_STEPS).unwrap();
    let err = r
        .queue
        .submit(&dispatch(KERNEL_A, SignalHandle::NONE), &clock(), BOUND_NS)
        .unwrap_err();
    assert!(
        matches!(err, SubmitError::ReadIndexAhead { packet_id: 1, read_index } if read_index > 8),
        "{err:?}"
    );
}

#[test]
fn cp_stalls_on_an_unpublished_slot() {
    let mut m = CpModel::new(Seed(4));
    let log = logging_kernels(&mut m);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let p = dispatch(KERNEL_A, SignalHandle::NONE);
    // Reserve and write the body and ring, but do not publish the header.
    let id = r.queue.reserve(1);
    r.queue
        .write_body(id, barebell::aql::packet::Packet::bytes(&p));
    r.queue.ring(id);
    m.run_until_idle(1_000).unwrap();
    let st = m.stats(r.model_queue).unwrap();
    assert_eq!(st.consumed, 0);
    assert!(st.stalls > 0);
    r.queue
        .publish(id, barebell::aql::packet::Packet::header_word(&p));
    m.run_until_idle(MAX_STEPS).unwrap();
    assert_eq!(*log.lock().unwrap(), ["A"]);
}

#[test]
fn malformed_and_unsupported_packets_halt_the_queue() {
    let mut m = CpModel::new(Seed(6));
    let log = logging_kernels(&mut m);
    let r = rig::<8>(&mut m, QueueConfig::default());
    let mut bad = dispatch(KERNEL_A, SignalHandle::NONE);
    bad.header |= 1 << 13; // a reserved header bit
    r.queue.submit(&bad, &clock(), BOUND_NS).unwrap();
    r.queue
        .submit(&dispatch(KERNEL_B, SignalHandle::NONE), &clock(), BOUND_NS)
        .unwrap();
    m.run_until_idle(1_000).unwrap();
    assert_eq!(
        m.errors(),
        [CpError::MalformedHeader {
            queue: 0,
            id: 0,
            header: bad.header
        }]
    );
    assert!(m.stats(0).unwrap().halted);
    assert!(log.lock().unwrap().is_empty());

    let r2 = rig::<8>(&mut m, QueueConfig::default());
    let agent = AgentDispatchPacket::new(1, [0; 4], 0, SignalHandle::NONE, Fences::SYSTEM);
    r2.queue.submit(&agent, &clock(), BOUND_NS).unwrap();
    let unknown = dispatch(0xdead, SignalHandle::NONE);
    let r3 = rig::<8>(&mut m, QueueConfig::default());
    r3.queue.submit(&unknown, &clock(), BOUND_NS).unwrap();
    m.run_until_idle(1_000).unwrap();
    assert!(matches!(
        m.errors()[1],
        CpError::UnsupportedPacket { queue: 1, .. }
    ));
    // No host function and no kernel descriptor mapped at 0xdead: the
    // shader engines cannot read the descriptor.
    assert!(
        matches!(
            m.errors()[2],
            CpError::Kernel {
                queue: 2,
                id: 0,
                fault: KernelFault::Descriptor {
                    kernel_object: 0xdead,
                    ..
                }
            }
        ),
        "{:?}",
        m.errors()[2]
    );
    let _ = PacketHeader::new();
}

#[test]
fn cp_timestamps_only_with_profiling() {
    for profiling in [false, true] {
        let mut m = CpModel::new(Seed(8));
        m.register_kernel(KERNEL_A, Box::new(|_| {}));
        let r = rig::<8>(
            &mut m,
            QueueConfig {
                profiling,
                ..Default::default()
            },
        );
        let s = signals(&mut m, 1, 1);
        r.queue
            .submit(&dispatch(KERNEL_A, s[0].handle()), &clock(), BOUND_NS)
            .unwrap();
        m.run_until_idle(MAX_STEPS).unwrap();
        s[0].wait(Condition::Eq, 0, &clock(), BOUND_NS).unwrap();
        match s[0].timestamps() {
            Some((start, end)) => {
                assert!(profiling);
                assert!(start > 0 && end >= start);
            }
            None => assert!(!profiling),
        }
    }
}

#[test]
fn batch_rings_once_with_last_id() {
    let mut m = CpModel::new(Seed(10));
    m.register_kernel(KERNEL_A, Box::new(|_| {}));
    let r = rig::<16>(
        &mut m,
        QueueConfig {
            start_index: 100,
            ..Default::default()
        },
    );
    let s = signals(&mut m, 1, 5);
    let batch = [dispatch(KERNEL_A, s[0].handle()); 5];
    let first = r.queue.submit_batch(&batch, &clock(), BOUND_NS).unwrap();
    assert_eq!(first, 100);
    assert_eq!(r.doorbell_value(), 104);
    m.run_until_idle(MAX_STEPS).unwrap();
    assert_eq!(s[0].value(), 0);
    assert_eq!(
        r.queue
            .submit_batch::<KernelDispatchPacket, _>(&[], &clock(), BOUND_NS),
        Err(SubmitError::EmptyBatch)
    );
}

#[test]
fn two_producers_and_a_cp_thread() {
    const PER: u64 = 5_000;
    let mut m = CpModel::new(Seed(12));
    m.dispatch_ns = 50..=500;
    let count = Arc::new(AtomicU64::new(0));
    let c = count.clone();
    m.register_kernel(
        KERNEL_A,
        Box::new(move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        }),
    );
    let r = rig_with::<64>(&mut m, QueueConfig::default(), true);
    let s = signals(&mut m, 1, (2 * PER) as i64);
    let cp = CpThread::spawn(m).unwrap();
    let q = &r.queue;
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| {
                let clock = StdClock::default();
                for _ in 0..PER {
                    q.submit(&dispatch(KERNEL_A, s[0].handle()), &clock, 5_000_000_000)
                        .unwrap();
                }
            });
        }
    });
    s[0].wait(Condition::Eq, 0, &StdClock::default(), 30_000_000_000)
        .unwrap();
    let m = cp.stop().unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 2 * PER);
    assert_eq!(r.queue.read_index(), 2 * PER);
    assert!(m.errors().is_empty());
}

/// The PM4-IB slot's jump command, decoded with the model's own PM4
/// header fields (`model::decode::pm4`, conformance-checked against
/// `nvd.h`'s `PACKET3()`), must be an `INDIRECT_BUFFER` whose count says
/// three body dwords: the address pair and the size dword that follow it
/// in the 4-dword `ib_jump_cmd` (ROCR `amd_aql_queue.cpp`).
#[test]
fn pm4_ib_jump_command_is_a_type3_indirect_buffer_with_three_body_dwords() {
    use barebell::aql::packet::Pm4IbPacket;
    use barebell_decode::pm4;
    let p = Pm4IbPacket::new(0x1234_5678_9abc, 16, SignalHandle::NONE, Fences::SYSTEM).unwrap();
    let h = p.ib_jump_cmd[0];
    assert_eq!(pm4::HEADER_TYPE.get(h), pm4::PACKET_TYPE3);
    assert_eq!(pm4::HEADER_OPCODE.get(h), pm4::opcode::INDIRECT_BUFFER);
    // `count` is the body length minus one; the body is the rest of the jump.
    assert_eq!(
        pm4::HEADER_COUNT.get(h) + 1,
        (p.ib_jump_cmd.len() - 1) as u32
    );
}

/// An empty ring holds `size` packets (HSA: the write index may run
/// `size` ahead of the read index), so a batch of exactly `size` fits and
/// the CP model consumes every one of them.
#[test]
fn a_batch_of_exactly_the_ring_size_fits_and_completes() {
    let mut m = CpModel::new(Seed(21));
    m.register_kernel(KERNEL_A, Box::new(|_| {}));
    let r = rig::<16>(&mut m, QueueConfig::default());
    let s = signals(&mut m, 1, 16);
    let batch = [dispatch(KERNEL_A, s[0].handle()); 16];
    assert_eq!(r.queue.submit_batch(&batch, &clock(), BOUND_NS), Ok(0));
    m.run_until_idle(MAX_STEPS).unwrap();
    assert_eq!(s[0].value(), 0);
    assert_eq!(r.queue.read_index(), 16);
}

/// The runtime's decoding of a barrier-value condition code agrees with
/// the model's own (`model::hsa::condition`, checked against `hsa.h`'s
/// `hsa_signal_condition_t`) on every defined code, and refuses the rest
/// as the model does.
#[test]
fn condition_codes_decode_as_the_model_reads_them() {
    use barebell_decode::hsa::condition;
    let pairs = [(0i64, 0i64), (1, 0), (0, 1), (-5, 3), (7, 7)];
    for code in 0..8u32 {
        match Condition::from_u32(code) {
            Some(c) => {
                for (v, cmp) in pairs {
                    assert_eq!(
                        Some(c.holds(v, cmp)),
                        condition::holds(code, v, cmp),
                        "code {code}"
                    );
                }
            }
            None => assert_eq!(condition::holds(code, 0, 0), None, "code {code}"),
        }
    }
}
