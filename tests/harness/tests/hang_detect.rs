//! Issue 20, item 4, written against the API the bring-up had before hang
//! detection existed: a hung user queue must be reported as a hang, within
//! the watchdog's bound (500 ms of device time), naming the stuck read
//! index — not as a 2 s completion-signal timeout.

use barebell::platform::Platform;
use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

/// The watchdog's bound plus what one pause of the model may add.
const DETECT_WITHIN_NS: u64 = 500_000_000 + 50_000_000;

fn hung_wait_is_a_hang(part: barebell_model::Part, mapping: Mapping) {
    let name = part.name;
    let gpu = virtual_gpu(part, 5);
    let fw = FirmwareDir::system();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        ..Default::default()
    };
    let mut up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet).unwrap();
    let q = up.queue.as_mut().unwrap();
    assert!(
        gpu.hang_queue(q.doorbell),
        "{name} {mapping:?}: no queue to hang"
    );
    q.signal.reset(1);
    let packet = q.barrier().unwrap();
    let id = q.queue.submit(&packet, gpu.clock(), 1_000_000_000).unwrap();
    let t = gpu.clock().now_ns();
    let e = q.wait_signal(0, 2_000_000_000).unwrap_err();
    let took = gpu.clock().now_ns() - t;
    let text = e.to_string();
    assert!(
        text.contains(&format!("read index stuck at {id}")),
        "{name} {mapping:?}: not reported as a hang: {text}"
    );
    assert!(
        took <= DETECT_WITHIN_NS,
        "{name} {mapping:?}: detected after {took} ns: {text}"
    );
}

#[test]
fn navi31_hung_queue_wait_reports_a_hang_within_the_bound() {
    for m in Mapping::ALL {
        hung_wait_is_a_hang(parts::navi31(), m);
    }
}

#[test]
fn navi48_hung_queue_wait_reports_a_hang_within_the_bound() {
    for m in Mapping::ALL {
        hung_wait_is_a_hang(parts::navi48(), m);
    }
}

/// The other way a wait ends: the queue is idle (its barrier ran, so
/// nothing is unfetched and the watchdog has nothing to call hung), but the
/// signal never takes the value asked for. Past the bound that is the
/// signal wait's own typed timeout, naming the value it last read.
#[test]
fn an_idle_queue_waiting_for_a_value_never_written_times_out() {
    use barebell::aql::signal::Condition;
    use barebell_bringup::ErrorKind;
    use barebell_bringup::error::QueueError;
    let gpu = virtual_gpu(parts::navi31(), 5);
    let fw = FirmwareDir::system();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Mes),
        ..Default::default()
    };
    let mut up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet).unwrap();
    let q = up.queue.as_mut().unwrap();
    q.signal.reset(1);
    let packet = q.barrier().unwrap();
    q.queue.submit(&packet, gpu.clock(), 1_000_000_000).unwrap();
    assert_eq!(q.wait_signal(0, 1_000_000_000).unwrap(), 0);
    let bound = 20_000_000;
    let t = gpu.clock().now_ns();
    let e = q.wait_signal(7, bound).unwrap_err();
    let took = gpu.clock().now_ns() - t;
    match e.kind {
        ErrorKind::Queue(QueueError::Signal(s)) => {
            assert_eq!((s.condition, s.compare, s.last), (Condition::Eq, 7, 0));
        }
        other => panic!("not the signal's timeout: {other:?}"),
    }
    assert!(
        took >= bound,
        "gave up after {took} ns of a {bound} ns bound"
    );
}
