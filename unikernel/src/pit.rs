//! TSC calibration against the 8254 PIT, for processors (and emulators)
//! that report no TSC frequency in CPUID leaf 0x15.
//!
//! Follows Linux's `pit_calibrate_tsc()`: channel 2, gated through port
//! 0x61 bit 0 with the speaker off, mode 0 (the output goes high at
//! terminal count, readable as port 0x61 bit 5), loaded with the count for
//! a fixed interval at the PIT's 1.193182 MHz; the TSC delta over that
//! interval gives the rate.

use crate::port::{inb, outb};

const PIT_HZ: u64 = 1_193_182;
const MS: u64 = 50;

/// TSC ticks per second, or `None` if the PIT never reached terminal count
/// (no PIT) or the TSC did not move.
pub fn calibrate_tsc_hz() -> Option<u64> {
    let latch = PIT_HZ * MS / 1000;
    let gate = inb(0x61);
    outb(0x61, (gate & !0x02) | 0x01);
    outb(0x43, 0xb0); // channel 2, lobyte/hibyte, mode 0, binary
    outb(0x42, (latch & 0xff) as u8);
    outb(0x42, (latch >> 8) as u8);
    let t0 = barebell::latency::tsc::start();
    let mut spins: u64 = 0;
    let mut done = false;
    while spins < 200_000_000 {
        if inb(0x61) & 0x20 != 0 {
            done = true;
            break;
        }
        spins += 1;
    }
    let t1 = barebell::latency::tsc::end();
    outb(0x61, gate);
    let ticks = t1.wrapping_sub(t0);
    (done && ticks > 0).then(|| ticks * 1000 / MS)
}
