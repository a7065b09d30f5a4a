#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Guest RAM as the model's system memory: once QEMU maps the guest's
//! RAM from address 0 (`DMA_MAP` with the RAM's file), the model's DMA
//! region is that RAM at bus address 0, so what the guest stores at a
//! guest-physical address is what the device reads at the same bus
//! address.

use barebell::platform::Platform;
use barebell_vfio_peer::trace::Trace;
use barebell_vfio_peer::{ModelFunction, Options};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::FromRawFd;
use vfio_user::{DmaMapFlags, ServerBackend};

/// A memfd standing for QEMU's `memory-backend-memfd` guest RAM.
fn guest_ram(bytes: u64) -> File {
    // SAFETY: a NUL-terminated name, no other arguments.
    let fd = unsafe { libc::memfd_create(c"guest-ram".as_ptr(), 0) };
    assert!(fd >= 0);
    // SAFETY: a descriptor just created, owned by nobody else.
    let f = unsafe { File::from_raw_fd(fd) };
    f.set_len(bytes).unwrap();
    f
}

#[test]
fn the_model_reaches_guest_ram_at_guest_physical_addresses() {
    let opts = Options {
        part: "navi31".into(),
        bar0_mib: 256,
        seed: 1,
    };
    let mut f = ModelFunction::new(&opts, Trace::none()).unwrap();
    assert_eq!(
        f.system_ram_bytes(),
        0,
        "the model's own DMA region at first"
    );
    let mut ram = guest_ram(64 << 20);
    ram.seek(SeekFrom::Start(0x0230_0010)).unwrap();
    ram.write_all(b"guest data").unwrap();
    let rw = DmaMapFlags::READ_WRITE;
    // As QEMU maps a q35 guest's low RAM: below the VGA hole, then from
    // 1 MiB, both from the same file at offsets equal to their addresses.
    f.dma_map(rw, 0, 0, 0xA_0000, Some(ram.try_clone().unwrap()))
        .unwrap();
    f.dma_map(
        rw,
        0x10_0000,
        0x10_0000,
        (64 << 20) - 0x10_0000,
        Some(ram.try_clone().unwrap()),
    )
    .unwrap();
    assert_eq!(f.system_ram_bytes(), 64 << 20);
    let dma = f.gpu().dma();
    assert_eq!(dma.len, 64 << 20);
    assert_eq!(dma.chunk_bus.first(), Some(&0));
    assert_eq!(dma.bus_addr(0x0230_0010), Some(0x0230_0010));
    let mut seen = [0u8; 10];
    // SAFETY: offset 0x230_0010 + 10 lies inside the 64 MiB region.
    unsafe {
        core::ptr::copy_nonoverlapping(
            dma.host.as_ptr().add(0x0230_0010),
            seen.as_mut_ptr(),
            seen.len(),
        )
    };
    assert_eq!(&seen, b"guest data");
}

#[test]
fn a_guest_that_touched_the_function_keeps_its_model() {
    let opts = Options {
        part: "navi31".into(),
        bar0_mib: 256,
        seed: 1,
    };
    let mut f = ModelFunction::new(&opts, Trace::none()).unwrap();
    let mut b = [0u8; 4];
    f.region_read(5, 0x378c, &mut b).unwrap();
    let ram = guest_ram(8 << 20);
    f.dma_map(DmaMapFlags::READ_WRITE, 0, 0, 8 << 20, Some(ram))
        .unwrap();
    assert_eq!(f.system_ram_bytes(), 0, "no rebuild under a running driver");
}
