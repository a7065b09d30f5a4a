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
    /// The second pair's INDEX, where the NBIO has two.
    index2: u32,
    counts: BarCounts,
}

/// `len` bytes of `inner` mapped directly, the rest through INDEX/DATA at
/// byte offsets `index`/`data` (which must lie inside the window).
pub struct BarWindow<B> {
    inner: B,
    len: usize,
    index: usize,
    data: usize,
    /// A second INDEX/DATA pair onto the same space, where the NBIO has
    /// one (see [`BarWindow::with_second_pair`]).
    pair2: Option<(usize, usize)>,
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
            pair2: None,
            state: Mutex::new(State::default()),
            config: None,
        }
    }

    /// A second INDEX/DATA pair at byte offsets `index`/`data`, with its
    /// own cursor, reaching the same register space (NBIO 7.9 has both
    /// `BIF_BX0_PCIE_INDEX2`/`DATA2`, the pair Linux uses, and
    /// `BIF_BX_PF0_RSMU_INDEX`/`DATA`, the pair tinygrad's AM uses on
    /// every part, `AMDev.indirect_rreg`).
    pub fn with_second_pair(mut self, index: usize, data: usize) -> Self {
        self.pair2 = Some((index, data));
        self
    }

    /// The register the pair at `byte_offset` reaches, or `None` when
    /// `byte_offset` is neither pair's DATA. Counts the access.
    fn through_data(&self, byte_offset: usize) -> Option<usize> {
        let mut s = self.state.lock();
        let target = if byte_offset == self.data {
            s.index
        } else if self.pair2.is_some_and(|(_, d)| d == byte_offset) {
            s.index2
        } else {
            return None;
        };
        s.counts.indirect += 1;
        Some(target as usize)
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

impl<B: RegisterBus> BarWindow<B> {
    /// A store from inside the device (a CP packet's register write over
    /// its own register bus): the whole register space, neither limited
    /// to the BAR nor gated by the function's memory decode.
    pub fn internal_write32(&self, byte_offset: usize, value: u32) {
        self.inner.write32(byte_offset, value);
    }

    /// A read by the device itself (a CP wait polling a register), past
    /// the BAR's decode and size like [`BarWindow::internal_write32`].
    pub fn internal_read32(&self, byte_offset: usize) -> u32 {
        self.inner.read32(byte_offset)
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
        if self.pair2.is_some_and(|(i, _)| i == byte_offset) {
            return self.state.lock().index2;
        }
        if let Some(target) = self.through_data(byte_offset) {
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
        if self.pair2.is_some_and(|(i, _)| i == byte_offset) {
            self.state.lock().index2 = value;
            return;
        }
        if let Some(target) = self.through_data(byte_offset) {
            return self.inner.write32(target, value);
        }
        self.inner.write32(byte_offset, value)
    }
}

/// How many 64-bit doorbells the model backs at the start of BAR2: 16
/// pages, the kernel's doorbells and the first KFD processes' slices
/// (each `amdgpu_mes_doorbell_process_slice()` = 8 KiB; the Linux peer's
/// first KFD queue rings BAR2 byte 0x4000). *Model value*: a part's BAR
/// is larger; a store past these is refused.
pub const DOORBELL_SLOTS: usize = 8192;

/// The doorbells at the start of BAR2 ([`DOORBELL_SLOTS`] of them).
#[repr(C, align(4096))]
#[derive(Debug, zerocopy::FromZeros)]
pub struct DoorbellPage(pub [AtomicU64; DOORBELL_SLOTS]);

impl DoorbellPage {
    /// Every doorbell 0, allocated on the heap (64 KiB, never on the
    /// stack).
    pub fn boxed() -> alloc::boxed::Box<Self> {
        use zerocopy::FromZeros;
        // Out of memory for 64 KiB at start-up is the allocator's abort,
        // as for any `Box::new`.
        Self::new_box_zeroed().unwrap_or_else(|_| {
            alloc::alloc::handle_alloc_error(core::alloc::Layout::new::<Self>())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;

    struct Space(Mutex<BTreeMap<usize, u32>>);
    impl RegisterBus for Space {
        fn read32(&self, at: usize) -> u32 {
            self.0.lock().get(&at).copied().unwrap_or(0)
        }
        fn write32(&self, at: usize, v: u32) {
            self.0.lock().insert(at, v);
        }
    }

    /// Two pairs, two cursors, one space: a register past the window
    /// reached through either pair is the same register.
    #[test]
    fn the_second_pair_reaches_the_same_space_with_its_own_index() {
        let w = BarWindow::new(Space(Mutex::new(BTreeMap::new())), 0x1000, 0x38, 0x3C)
            .with_second_pair(0x50, 0x54);
        w.write32(0x50, 0x0200_0000);
        w.write32(0x54, 7);
        w.write32(0x38, 0x0200_0000);
        assert_eq!(w.read32(0x3C), 7);
        assert_eq!(w.read32(0x50), 0x0200_0000);
        w.write32(0x38, 0x0300_0000);
        assert_eq!(w.read32(0x54), 7, "the second pair kept its own cursor");
        assert_eq!(w.counts().indirect, 3);
    }
}
