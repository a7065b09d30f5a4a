//! Bare-metal enumeration: find every function below the first bus of a
//! [`ConfigAccess`], descending through PCI-to-PCI bridges.
//!
//! Bus numbers are taken as firmware assigned them (the secondary bus
//! register of each bridge); this does not renumber. It follows the shape
//! of Linux's pci_scan_child_bus(): 32 devices per bus, function 0 first,
//! functions 1..=7 only when function 0 sets the multi-function bit, and a
//! bridge's secondary bus scanned when the bridge is found (depth first,
//! so the order matches `lspci`'s). A visited-bus set stops a
//! misprogrammed bridge that points back up the tree from looping.

use crate::bdf::Bdf;
use crate::config::{self, ConfigSpace, HeaderType};
use crate::ecam::{ConfigAccess, Function};

/// A function found on the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub bdf: Bdf,
    pub vendor: u16,
    pub device: u16,
    /// `(base, sub, prog-if)`.
    pub class: (u8, u8, u8),
    pub header: HeaderType,
    /// For a bridge: the bus it leads to, if it is above this one and in
    /// the access range (otherwise the bridge is not descended).
    pub secondary: Option<u8>,
}

/// Counters from one scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStats {
    pub functions: u32,
    pub buses: u32,
    /// Bridges whose secondary bus was out of range, zero, or already seen.
    pub skipped_bridges: u32,
}

/// Walks the hierarchy from the first bus of `access` in `segment` and
/// calls `visit` for every function found.
pub fn scan<A: ConfigAccess + ?Sized>(
    access: &A,
    segment: u16,
    visit: &mut dyn FnMut(&Found),
) -> ScanStats {
    let mut st = State {
        seen: [0; 4],
        stats: ScanStats::default(),
    };
    let (first, _) = access.bus_range();
    scan_bus(access, segment, first, &mut st, visit);
    st.stats
}

struct State {
    seen: [u64; 4],
    stats: ScanStats,
}

impl State {
    fn mark(&mut self, bus: u8) -> bool {
        let (w, b) = (usize::from(bus / 64), bus % 64);
        match self.seen.get_mut(w) {
            Some(word) if *word & (1 << b) == 0 => {
                *word |= 1 << b;
                true
            }
            _ => false,
        }
    }
}

fn scan_bus<A: ConfigAccess + ?Sized>(
    access: &A,
    segment: u16,
    bus: u8,
    st: &mut State,
    visit: &mut dyn FnMut(&Found),
) {
    if !st.mark(bus) {
        return;
    }
    st.stats.buses += 1;
    let (lo, hi) = access.bus_range();
    for device in 0..32u8 {
        let f0 = Function::new(access, Bdf::new(segment, bus, device, 0));
        if !f0.is_present() {
            continue;
        }
        let functions = if f0.is_multifunction() { 8 } else { 1 };
        for function in 0..functions {
            let f = Function::new(access, Bdf::new(segment, bus, device, function));
            if !f.is_present() {
                continue;
            }
            let header = f.header_type();
            let secondary = config::bridge_buses(&f)
                .map(|b| b.secondary)
                .filter(|&s| s > bus && s >= lo && s <= hi);
            let found = Found {
                bdf: f.bdf,
                vendor: f.vendor_id(),
                device: f.device_id(),
                class: f.class(),
                header,
                secondary,
            };
            st.stats.functions += 1;
            visit(&found);
            match secondary {
                Some(s) => scan_bus(access, segment, s, st, visit),
                None if header == HeaderType::Bridge => st.stats.skipped_bridges += 1,
                None => {}
            }
        }
    }
}
