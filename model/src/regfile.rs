//! A register aperture with PCIe removal semantics.
//!
//! Unwritten registers read as their reset value (zero unless preset).
//! After [`RegisterFile::unplug`], every read returns all-ones and writes
//! vanish, which is what the host sees after a surprise removal or a link
//! drop; the runtime must notice instead of spinning.

use crate::SimClock;
use alloc::collections::BTreeMap;
use barebell::bus::{ALL_ONES, RegisterBus};
use spin::Mutex;

/// Simulated cost of one register access. PCIe reads to a GPU take on the
/// order of a microsecond round trip; the exact number only scales time.
pub const ACCESS_NS: u64 = 1_000;

#[derive(Debug, Default)]
struct State {
    regs: BTreeMap<usize, u32>,
    unplugged: bool,
    reads: u64,
    writes: u64,
}

/// A sparse register file implementing [`RegisterBus`].
#[derive(Debug)]
pub struct RegisterFile {
    clock: SimClock,
    state: Mutex<State>,
}

impl RegisterFile {
    pub fn new(clock: &SimClock) -> Self {
        RegisterFile {
            clock: clock.clone(),
            state: Mutex::new(State::default()),
        }
    }

    /// Sets a register's value without counting as a bus access (the
    /// device itself changing state).
    pub fn device_set(&self, byte_offset: usize, value: u32) {
        self.state.lock().regs.insert(byte_offset, value);
    }

    pub fn device_get(&self, byte_offset: usize) -> u32 {
        self.state
            .lock()
            .regs
            .get(&byte_offset)
            .copied()
            .unwrap_or(0)
    }

    /// Every register back to zero (its value at power-on unless the
    /// owner presets it again): a mode-1 reset.
    pub fn clear(&self) {
        self.state.lock().regs.clear();
    }

    /// Removes the device from the bus.
    pub fn unplug(&self) {
        self.state.lock().unplugged = true;
    }

    /// `(reads, writes)` the host has made.
    pub fn access_counts(&self) -> (u64, u64) {
        let s = self.state.lock();
        (s.reads, s.writes)
    }
}

impl RegisterBus for RegisterFile {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        s.reads += 1;
        if s.unplugged || !byte_offset.is_multiple_of(4) {
            return ALL_ONES;
        }
        s.regs.get(&byte_offset).copied().unwrap_or(0)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        s.writes += 1;
        if s.unplugged || !byte_offset.is_multiple_of(4) {
            return;
        }
        s.regs.insert(byte_offset, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unplugged_reads_all_ones_and_drops_writes() {
        let c = SimClock::new();
        let r = RegisterFile::new(&c);
        r.write32(8, 5);
        assert_eq!(r.read32(8), 5);
        r.unplug();
        r.write32(8, 6);
        assert_eq!(r.read32(8), ALL_ONES);
        assert_eq!(r.device_get(8), 5);
        assert_eq!(r.access_counts(), (2, 2));
    }
}
