//! The register BAR as the host sees it: a window of `len` bytes onto the
//! device's register space, plus the NBIO index/data pair that reaches
//! the rest.
//!
//! The device models answer any offset, which a real BAR5 does not: it is
//! 1 MiB on Navi3x/Navi4x boards, while discovered bases reach byte
//! 0x900_0000 and beyond. This window makes the host side honest. A direct
//! access past `len` is what an unclaimed PCIe access is (reads all-ones,
//! writes vanish) and is counted, so a test can require that none
//! happened. The pair behaves as `amdgpu_device_indirect_rreg()` relies
//! on: INDEX holds a byte address into the full register space and reads
//! back what was stored; DATA reads or writes the register INDEX names.
//! INDEX is one cursor shared by every host thread, as on the device.

use barebell::bus::{ALL_ONES, RegisterBus};
use core::sync::atomic::AtomicU64;
use spin::Mutex;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BarCounts {
    /// Accesses that went through DATA.
    pub indirect: u64,
    /// Direct accesses past the end of the BAR (lost).
    pub beyond: u64,
}

#[derive(Debug, Default)]
struct State {
    index: u32,
    counts: BarCounts,
}

/// `len` bytes of `inner` mapped directly, the rest through INDEX/DATA at
/// byte offsets `index`/`data` (which must lie inside the window).
pub struct BarWindow<B> {
    inner: B,
    len: usize,
    index: usize,
    data: usize,
    state: Mutex<State>,
    /// The function's decode state: with memory decode off (after a reset,
    /// before the host restores its PCI state) every access is lost.
    config: Option<alloc::sync::Arc<crate::pci_config::PciConfig>>,
}

impl<B> core::fmt::Debug for BarWindow<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BarWindow")
            .field("len", &self.len)
            .field("index", &self.index)
            .field("data", &self.data)
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl<B> BarWindow<B> {
    pub fn new(inner: B, len: usize, index: usize, data: usize) -> Self {
        BarWindow {
            inner,
            len,
            index,
            data,
            state: Mutex::new(State::default()),
            config: None,
        }
    }

    /// The window answers only while `config` decodes memory.
    pub fn with_config(mut self, config: alloc::sync::Arc<crate::pci_config::PciConfig>) -> Self {
        self.config = Some(config);
        self
    }

    /// `false` (and the access counted) when the function decodes no
    /// memory.
    fn decoded(&self) -> bool {
        match &self.config {
            Some(c) if !c.decodes() => {
                c.refused();
                false
            }
            _ => true,
        }
    }

    pub fn counts(&self) -> BarCounts {
        self.state.lock().counts
    }

    fn inside(&self, byte_offset: usize) -> bool {
        byte_offset
            .checked_add(4)
            .is_some_and(|end| end <= self.len)
    }
}

impl<B: RegisterBus> RegisterBus for BarWindow<B> {
    fn read32(&self, byte_offset: usize) -> u32 {
        if !self.decoded() {
            return ALL_ONES;
        }
        if !self.inside(byte_offset) {
            self.state.lock().counts.beyond += 1;
            return ALL_ONES;
        }
        if byte_offset == self.index {
            return self.state.lock().index;
        }
        if byte_offset == self.data {
            let target = {
                let mut s = self.state.lock();
                s.counts.indirect += 1;
                s.index as usize
            };
            return self.inner.read32(target);
        }
        self.inner.read32(byte_offset)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        if !self.decoded() {
            return;
        }
        if !self.inside(byte_offset) {
            self.state.lock().counts.beyond += 1;
            return;
        }
        if byte_offset == self.index {
            self.state.lock().index = value;
            return;
        }
        if byte_offset == self.data {
            let target = {
                let mut s = self.state.lock();
                s.counts.indirect += 1;
                s.index as usize
            };
            return self.inner.write32(target, value);
        }
        self.inner.write32(byte_offset, value)
    }
}

/// One page of doorbells, as BAR2 would hold them.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct DoorbellPage(pub [AtomicU64; 512]);
