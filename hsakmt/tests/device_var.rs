//! `BAREBELL_HSAKMT_DEVICE` is read at `hsaKmtOpenKFD`: a value that names
//! no device is refused before a model or a card is touched, and a card
//! that is not there is refused by the host platform's checks, each with
//! the reason on stderr. One test: it changes the process's environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use hsakmt::abi::status;
use hsakmt::device::{DEVICE_VAR, Kfd};
use hsakmt::hsaKmtOpenKFD;

fn refusal(value: &str) -> String {
    // SAFETY: the only test in this binary; no other thread reads the
    // environment while it changes.
    unsafe { std::env::set_var(DEVICE_VAR, value) };
    assert_eq!(hsaKmtOpenKFD(), status::ERROR, "{value}");
    Kfd::open().err().unwrap().to_string()
}

#[test]
fn a_bad_name_or_a_missing_card_is_refused() {
    let e = refusal("gpu0");
    assert!(
        e.contains("expected `model`, `vfio:DDDD:BB:DD.F` or `sysfs:DDDD:BB:DD.F`"),
        "{e}"
    );
    // No PCI function at this address on any machine (bus 0xfe, device
    // 0x1f, function 7 of domain 0xfffe).
    let e = refusal("vfio:fffe:fe:1f.7");
    assert!(e.starts_with("opening the card: "), "{e}");
    assert!(e.contains("fffe:fe:1f.7"), "{e}");
    // sysfs: refused without the physical-DMA opt-in, then by the host
    // platform's checks.
    let e = refusal("sysfs:fffe:fe:1f.7");
    assert!(
        e.contains("without BAREBELL_HSAKMT_UNSAFE_PHYSICAL_DMA=1"),
        "{e}"
    );
    // SAFETY: as above.
    unsafe { std::env::set_var("BAREBELL_HSAKMT_UNSAFE_PHYSICAL_DMA", "1") };
    let e = refusal("sysfs:fffe:fe:1f.7");
    assert!(e.starts_with("opening the card: "), "{e}");
    // SAFETY: as above.
    unsafe { std::env::remove_var("BAREBELL_HSAKMT_UNSAFE_PHYSICAL_DMA") };
    // SAFETY: as above.
    unsafe { std::env::remove_var(DEVICE_VAR) };
}
