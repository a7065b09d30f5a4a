//! Every wait on the device has a bound and a typed error.
//!
//! This polls a register of the device model three times: once while the
//! device reports ready, once while it never does (a 2 s bound in simulated
//! time, so the program finishes instantly), and once after the device has
//! been unplugged, when reads return all-ones.

use barebell::bus::{RegCondition, poll};
use barebell_model::{RegisterFile, SimClock};

fn main() {
    let clock = SimClock::new();
    let regs = RegisterFile::new(&clock);
    let ready = RegCondition {
        what: "example status register, bit 31 (ready)",
        byte_offset: 0x100,
        mask: 1 << 31,
        want: 1 << 31,
    };

    regs.device_set(ready.byte_offset, 1 << 31);
    report("ready", poll(&regs, &clock, ready, 2_000_000_000));

    regs.device_set(ready.byte_offset, 0);
    report("never ready", poll(&regs, &clock, ready, 2_000_000_000));

    regs.unplug();
    report("unplugged", poll(&regs, &clock, ready, 2_000_000_000));
}

fn report(case: &str, r: Result<u32, barebell::bus::WaitError>) {
    match r {
        Ok(v) => println!("{case:>12}: ok, value {v:#010x}"),
        Err(e) => println!("{case:>12}: {e}"),
    }
}
