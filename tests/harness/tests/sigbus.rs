//! Issue 20, item 4: a SIGBUS on a BAR access becomes a typed error.
//!
//! A file-backed shared mapping whose file is truncated under it raises a
//! real SIGBUS on the next access (the kernel's `VM_FAULT_SIGBUS`, the
//! answer vfio-pci gives a BAR access while memory decode is off). Mapped
//! as the CLI maps BAR5 (`barebell_pcie::sysfs::BarMapping`) and read
//! through the runtime's `Mmio` and a bounded register poll, the access
//! must end with `WaitError::DeviceGone`, not kill the process.

use barebell::bus::{Mmio, RegCondition, WaitError, poll};
use barebell::time::Clock;
use barebell_pcie::sysfs::BarMapping;
use std::io::Write;
use std::ptr::NonNull;

struct Host(std::time::Instant);
impl Clock for Host {
    fn now_ns(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

#[test]
fn a_sigbus_during_a_register_poll_is_device_gone() {
    barebell_pcie::sigbus::install().unwrap();
    let path = std::env::temp_dir().join(format!("barebell-harness-sigbus-{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.write_all(&[0u8; 8192]).unwrap();
    let bar = BarMapping::new(&f, 0, 8192).unwrap();
    // SAFETY: `bar` is a live shared mapping of 8192 bytes, page-aligned,
    // and outlives `mmio` (dropped at the end of the test, after it).
    let mmio = unsafe { Mmio::new(NonNull::new(bar.as_ptr()).unwrap(), bar.len()) };
    let clock = Host(std::time::Instant::now());
    let cond = RegCondition {
        what: "a bit that never sets",
        byte_offset: 0x1000,
        mask: 1,
        want: 1,
    };
    // Before: an ordinary timeout (the register reads 0).
    assert!(matches!(
        poll(&mmio, &clock, cond, 1_000_000),
        Err(WaitError::Timeout { .. })
    ));
    // The "BAR" loses its backing: the next access faults with SIGBUS.
    f.set_len(0).unwrap();
    match poll(&mmio, &clock, cond, 1_000_000_000) {
        Err(WaitError::DeviceGone { byte_offset, .. }) => assert_eq!(byte_offset, 0x1000),
        other => panic!("expected DeviceGone, got {other:?}"),
    }
    assert!(barebell_pcie::sigbus::device_gone());
    let _ = mmio;
    drop(bar);
    std::fs::remove_file(path).unwrap();
}
