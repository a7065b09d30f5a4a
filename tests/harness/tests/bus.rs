//! Bounded register polls against the model: the runtime must return typed
//! errors for a device that never becomes ready and for one that vanishes.

use barebell::bus::{RegCondition, WaitError, poll};
use barebell::time::Clock;
use barebell_model::{RegisterFile, SimClock, regfile::ACCESS_NS};

const READY: RegCondition = RegCondition {
    what: "test ready bit",
    byte_offset: 0x40,
    mask: 0x8000_0000,
    want: 0x8000_0000,
};

#[test]
fn poll_sees_device_ready() {
    let clock = SimClock::new();
    let regs = RegisterFile::new(&clock);
    regs.device_set(0x40, 0x8000_0001);
    assert_eq!(poll(&regs, &clock, READY, 10 * ACCESS_NS), Ok(0x8000_0001));
}

#[test]
fn poll_times_out_in_simulated_time() {
    let clock = SimClock::new();
    let regs = RegisterFile::new(&clock);
    regs.device_set(0x40, 0x1);
    let err = poll(&regs, &clock, READY, 2_000_000_000).unwrap_err();
    match err {
        WaitError::Timeout {
            waited_ns, last, ..
        } => {
            assert!(waited_ns >= 2_000_000_000);
            assert_eq!(last, 1);
        }
        other => panic!("expected timeout, got {other:?}"),
    }
    // 2 s of simulated time at one access per ACCESS_NS.
    assert_eq!(regs.access_counts().0, 2_000_000_000 / ACCESS_NS);
    assert!(clock.now_ns() >= 2_000_000_000);
}

#[test]
fn unplugged_device_ends_poll_at_once() {
    let clock = SimClock::new();
    let regs = RegisterFile::new(&clock);
    regs.unplug();
    assert_eq!(
        poll(&regs, &clock, READY, 2_000_000_000),
        Err(WaitError::DeviceGone {
            what: "test ready bit",
            byte_offset: 0x40
        })
    );
    assert_eq!(regs.access_counts().0, 1);
}
