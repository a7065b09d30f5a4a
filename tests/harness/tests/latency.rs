//! The latency tool's measured loop against the CP model on a thread: it
//! produces sane phase samples, allocates nothing and makes no system call.

use barebell::aql::packet::Dispatch;
use barebell::aql::queue::QueueConfig;
use barebell::latency::run::{Params, Sample, measure};
use barebell::latency::tsc::{self, TscScale};
use barebell_model::Seed;
use barebell_model::cp::CpModel;
use barebell_model::thread::CpThread;

const KERNEL: u64 = 0x4000;

/// A model with one queue and one signal, its CP on a thread.
fn setup() -> (
    barebell_model_host::queue::ModelQueue<64>,
    &'static barebell::aql::signal::SignalMemory,
    CpThread,
) {
    let mut m = CpModel::new(Seed(21));
    m.dispatch_ns = 0..=0;
    m.register_kernel(KERNEL, Box::new(|_| {}));
    let q = barebell_model_host::queue::queue::<64>(&mut m, QueueConfig::default(), false).unwrap();
    let s = &barebell_model_host::queue::signals(&mut m, 1, 0)[0];
    let cp = CpThread::spawn(m).unwrap();
    (q, s, cp)
}

/// A fixed scale is enough here: the test checks structure, not speed.
fn scale() -> TscScale {
    TscScale::from_hz(tsc::features().cpuid_hz.unwrap_or(2_000_000_000)).unwrap()
}

const PARAMS: Params = Params {
    batch: 1,
    pace_ns: 0,
    bound_ns: 2_000_000_000,
    jitter_ns: 0,
};

#[test]
fn phases_are_measured_and_the_loop_does_not_allocate() {
    let (q, s, cp) = setup();
    let pkt = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(s.handle())
        .packet()
        .unwrap();
    let mut samples = vec![Sample::default(); 2_000];
    let before = barebell_tests::allocations_on_this_thread();
    measure(&q.queue, &pkt, s, scale(), PARAMS, 0, &mut samples).unwrap();
    let after = barebell_tests::allocations_on_this_thread();
    let m = cp.stop().unwrap();
    assert_eq!(after - before, 0, "allocations in the measured loop");
    assert!(m.errors().is_empty());
    assert_eq!(q.queue.read_index(), 2_000);
    for smp in &samples {
        // The CP cannot pick up before the doorbell, and every phase is a
        // real interval on a monotonic counter.
        assert!(smp.pickup > 0 && smp.publish > 0 && smp.doorbell > 0 && smp.completion > 0);
    }
}

#[test]
fn batches_ring_once_and_complete() {
    let (q, s, cp) = setup();
    let pkt = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(s.handle())
        .packet()
        .unwrap();
    let mut samples = vec![Sample::default(); 100];
    measure(
        &q.queue,
        &pkt,
        s,
        scale(),
        Params { batch: 8, ..PARAMS },
        0,
        &mut samples,
    )
    .unwrap();
    cp.stop().unwrap();
    assert_eq!(q.queue.read_index(), 800);
    assert_eq!(q.doorbell_value(), 799);
    let err = measure(
        &q.queue,
        &pkt,
        s,
        scale(),
        Params {
            batch: 65,
            ..PARAMS
        },
        0,
        &mut samples,
    )
    .unwrap_err();
    assert_eq!(
        err,
        barebell::latency::run::LatencyError::BadBatch {
            batch: 65,
            slots: 64
        }
    );
}

#[test]
fn measured_loop_makes_no_system_call() {
    // SAFETY: fork in a test process; the child starts the model thread,
    // installs a seccomp filter on its own thread and runs the loop.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let (q, s, _cp) = setup();
        let pkt = Dispatch::linear(64, 64, KERNEL, 0)
            .signal(s.handle())
            .packet()
            .unwrap();
        let mut samples = vec![Sample::default(); 2_000];
        let sc = scale();
        // The filter binds this thread only (no TSYNC): the model thread,
        // which yields to the scheduler, stays unfiltered.
        let code = if !barebell_tests::install_exit_only_filter() {
            3
        } else if measure(&q.queue, &pkt, s, sc, PARAMS, 0, &mut samples).is_err() {
            4
        } else {
            0
        };
        // SAFETY: exit_group is allowed by the filter.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: exited {} / signal {}",
        if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
        if libc::WIFSIGNALED(status) {
            libc::WTERMSIG(status)
        } else {
            0
        }
    );
}

/// Both waits give up at their bound with the typed error, measured from
/// the TSC stamp that opened the phase: a CP that consumes nothing fails
/// the pickup, one that never finishes the dispatch fails the completion.
#[test]
fn waits_end_at_the_bound_with_a_typed_error() {
    use barebell::latency::run::LatencyError;
    const BOUND_NS: u64 = 20_000_000;
    let params = Params {
        bound_ns: BOUND_NS,
        ..PARAMS
    };
    let run = |configure: fn(&mut CpModel)| {
        let mut m = CpModel::new(Seed(22));
        m.register_kernel(KERNEL, Box::new(|_| {}));
        configure(&mut m);
        let q =
            barebell_model_host::queue::queue::<64>(&mut m, QueueConfig::default(), false).unwrap();
        let s = &barebell_model_host::queue::signals(&mut m, 1, 0)[0];
        let cp = CpThread::spawn(m).unwrap();
        let pkt = Dispatch::linear(64, 64, KERNEL, 0)
            .signal(s.handle())
            .packet()
            .unwrap();
        let mut samples = vec![Sample::default(); 4];
        let err = measure(&q.queue, &pkt, s, scale(), params, 7, &mut samples).unwrap_err();
        cp.stop().unwrap();
        err
    };

    let err = run(|m| m.faults.stop_consuming = true);
    let LatencyError::Pickup {
        iteration,
        packet_id,
        read_index,
        waited_ns,
    } = err
    else {
        panic!("expected a pickup timeout, got {err:?}");
    };
    assert_eq!((iteration, packet_id, read_index), (7, 0, 0));
    // At least the bound; at most one deadline check (64 looks) late, with
    // a wide margin for a preempted test thread.
    assert!((BOUND_NS..BOUND_NS + 1_000_000_000).contains(&waited_ns));

    // The model's own counter advances 10-100 ns a step, so a dispatch
    // this long is still running when the bound passes.
    let err = run(|m| m.dispatch_ns = u64::MAX / 2..=u64::MAX / 2);
    let LatencyError::Completion { iteration, timeout } = err else {
        panic!("expected a completion timeout, got {err:?}");
    };
    assert_eq!((iteration, timeout.compare, timeout.last), (7, 0, 1));
    assert!((BOUND_NS..BOUND_NS + 1_000_000_000).contains(&timeout.waited_ns));

    // A duration past u64::MAX from now (what `latency --kernel-ns
    // 18446744073709551615` once sent) is a dispatch that never ends, not
    // an overflow that panics the model's CP thread.
    let err = run(|m| m.dispatch_ns = u64::MAX..=u64::MAX);
    assert!(matches!(err, LatencyError::Completion { .. }), "{err:?}");
}

/// `jitter_ns` waits between iterations, outside the phases: with 20 µs of
/// jitter, the median time between consecutive doorbells not spent in the
/// phases is about 10 µs (uniform over 0-20 µs), and it varies.
#[test]
fn jitter_spreads_iteration_starts_outside_the_phases() {
    let (q, s, cp) = setup();
    let pkt = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(s.handle())
        .packet()
        .unwrap();
    let sc = scale();
    let mut samples = vec![Sample::default(); 400];
    let params = Params {
        jitter_ns: 20_000,
        ..PARAMS
    };
    measure(&q.queue, &pkt, s, sc, params, 0, &mut samples).unwrap();
    cp.stop().unwrap();
    // Time between one doorbell and the next not spent in the next
    // iteration's own publish and doorbell phases, nor in this one's
    // pickup and completion.
    let mut extra: Vec<u64> = samples
        .windows(2)
        .map(|w| {
            let gap = w[1].doorbell_at - w[0].doorbell_at;
            let phases = w[0].pickup + w[0].completion + w[1].publish + w[1].doorbell;
            sc.to_ns(gap.saturating_sub(phases))
        })
        .collect();
    extra.sort_unstable();
    let median = extra[extra.len() / 2];
    assert!(
        (5_000..15_000).contains(&median),
        "median extra wait {median} ns"
    );
    let (lo, hi) = (extra[0], extra[extra.len() - 1]);
    assert!(hi - lo > 10_000, "extra wait spans only {lo}..{hi} ns");
}
