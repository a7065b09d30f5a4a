//! `BAREBELL_HSAKMT_DEVICE` naming anything but the model is refused at
//! `hsaKmtOpenKFD`, before a model or a device is touched, with the
//! reason on stderr. One test: it changes the process's environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use hsakmt::abi::status;
use hsakmt::device::DEVICE_VAR;
use hsakmt::hsaKmtOpenKFD;

#[test]
fn a_device_other_than_the_model_is_refused() {
    // SAFETY: the only test in this binary; no other thread reads the
    // environment while it changes.
    unsafe { std::env::set_var(DEVICE_VAR, "vfio:0000:03:00.0") };
    assert_eq!(hsaKmtOpenKFD(), status::ERROR);
    let e = hsakmt::device::Kfd::open().err().unwrap();
    assert!(e.to_string().contains("drives the MI210 model only"), "{e}");
    // SAFETY: as above.
    unsafe { std::env::remove_var(DEVICE_VAR) };
}
