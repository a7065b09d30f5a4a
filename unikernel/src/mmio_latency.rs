//! MMIO store latency to a real (emulated) PCI device: QEMU's `edu`
//! (vendor 0x1234, device 0x11e8; QEMU `hw/misc/edu.c`,
//! `docs/specs/edu.rst`), used as a doorbell-like target.
//!
//! The store goes to edu's "card liveness check" register (BAR0 + 0x04):
//! a 32-bit write the device answers by returning the bitwise NOT on the
//! next read, which proves the stores really reach the device model and
//! are not absorbed by a mapping mistake. Three series, each timed with
//! barebell's fenced TSC reads and recorded (in ns) in barebell's
//! fixed-memory histogram:
//!
//! - `timer`: an empty start/end pair, the floor every other number sits on;
//! - `mmio-store`: one uncached 32-bit store (posted: on hardware the CPU
//!   may retire it before the device sees it);
//! - `mmio-store-readback`: the store followed by a read of the same
//!   register, which cannot complete before the store has (PCI ordering),
//!   i.e. the device-visible round trip.
//!
//! Under TCG every access to the BAR is a trip into QEMU's device
//! emulation, so these are emulator costs, not PCIe numbers.

use crate::println;
use alloc::boxed::Box;
use barebell::latency::Histogram;
use barebell::latency::tsc::{self, TscScale};

pub const EDU_VENDOR: u16 = 0x1234;
pub const EDU_DEVICE: u16 = 0x11e8;
const EDU_IDENT: usize = 0x00;
const EDU_LIVENESS: usize = 0x04;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmioError {
    /// The identification register did not read `0x..0000ed` (edu's
    /// ident is `0x010000ed`: version 1.0 in the top bytes, 0xed below).
    Ident { read: u32 },
    /// The liveness register did not return the complement of a store.
    Liveness { wrote: u32, read: u32 },
}

impl core::fmt::Display for MmioError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MmioError::Ident { read } => write!(f, "edu ident reads {read:#x}, not ..ed"),
            MmioError::Liveness { wrote, read } => write!(
                f,
                "edu liveness: wrote {wrote:#x}, read {read:#x} (want {:#x})",
                !wrote
            ),
        }
    }
}

pub fn print_summary(name: &str, h: &Histogram) {
    match h.summary() {
        Some(s) => {
            defmt::info!(
                "LAT {=str} count={=u64} min={=u64} mean={=f64} p50={=u64} p90={=u64} p99={=u64} p99.9={=u64} max={=u64} unit=ns",
                name,
                s.count,
                s.min,
                s.mean,
                s.p50,
                s.p90,
                s.p99,
                s.p99_9,
                s.max
            );
            println!(
                "UK LAT {name} count={} min={} mean={:.1} p50={} p90={} p99={} p99.9={} max={} unit=ns",
                s.count, s.min, s.mean, s.p50, s.p90, s.p99, s.p99_9, s.max
            )
        }
        None => println!("UK LAT {name} count=0"),
    }
}

/// # Safety
/// `bar0` must be the identity-mapped (uncached) BAR0 of an edu device,
/// at least 256 bytes long.
pub unsafe fn run(bar0: *mut u8, scale: TscScale, iterations: u32) -> Result<(), MmioError> {
    // SAFETY: the caller's contract: BAR0 is mapped and holds edu's
    // registers; offsets 0 and 4 are 32-bit registers.
    let (ident, live) = unsafe {
        (
            bar0.add(EDU_IDENT).cast::<u32>(),
            bar0.add(EDU_LIVENESS).cast::<u32>(),
        )
    };
    // SAFETY: as above.
    let id = unsafe { ident.read_volatile() };
    if id & 0xff != 0xed {
        return Err(MmioError::Ident { read: id });
    }
    println!("UK MMIO edu ident={id:#010x}");
    let mut timer = Box::new(Histogram::new());
    let mut store = Box::new(Histogram::new());
    let mut round = Box::new(Histogram::new());
    for i in 0..iterations {
        let t0 = tsc::start();
        let t1 = tsc::end();
        timer.record(scale.to_ns(t1.wrapping_sub(t0)));

        let v = 0x5a00_0000 ^ i;
        let t0 = tsc::start();
        // SAFETY: as above.
        unsafe { live.write_volatile(v) };
        let t1 = tsc::end();
        store.record(scale.to_ns(t1.wrapping_sub(t0)));
        // SAFETY: as above.
        let r = unsafe { live.read_volatile() };
        if r != !v {
            return Err(MmioError::Liveness { wrote: v, read: r });
        }

        let v = 0xa500_0000 ^ i;
        let t0 = tsc::start();
        // SAFETY: as above.
        let r = unsafe {
            live.write_volatile(v);
            live.read_volatile()
        };
        let t1 = tsc::end();
        round.record(scale.to_ns(t1.wrapping_sub(t0)));
        if r != !v {
            return Err(MmioError::Liveness { wrote: v, read: r });
        }
    }
    println!(
        "UK MMIO liveness register returned the complement of all {} stores",
        2 * iterations
    );
    print_summary("timer", &timer);
    print_summary("mmio-store", &store);
    print_summary("mmio-store-readback", &round);
    Ok(())
}
