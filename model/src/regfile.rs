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

/// Distinct registers a file holds values for (model convention; see
/// `write32`): far more than any block has.
pub const MAX_REGISTERS: usize = 1 << 18;

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
        // Model convention: at most `MAX_REGISTERS` distinct offsets hold
        // a value; a write to a new offset past them is dropped (a write
        // to a register the device lacks stores nothing; the cap keeps a
        // driver that writes everywhere, through the RSMU index/data pair
        // too, from growing the model without end).
        if s.regs.len() >= MAX_REGISTERS && !s.regs.contains_key(&byte_offset) {
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

    #[test]
    fn holds_at_most_max_registers_distinct_offsets() {
        let c = SimClock::new();
        let r = RegisterFile::new(&c);
        for i in 0..MAX_REGISTERS + 5 {
            r.write32(i * 4, 1);
        }
        // The last write inside the cap stuck; the ones past it did not,
        // and an offset already held still takes new values.
        assert_eq!(r.read32((MAX_REGISTERS - 1) * 4), 1);
        assert_eq!(r.read32(MAX_REGISTERS * 4), 0);
        r.write32(0, 7);
        assert_eq!(r.read32(0), 7);
    }
}
