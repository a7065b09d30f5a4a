//! BAR5's router: each register to the block model that owns it, for
//! every part. Block models claim single offsets or ranges when the
//! device is built from its part description; what no block claims goes
//! to the part's catch-all ([`Router::rest`]), which decides whether to
//! keep, log or refuse it.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use core::ops::RangeInclusive;
use core::sync::atomic::{AtomicBool, Ordering};

/// A block model on the register bus.
pub(crate) type Bus = Arc<dyn RegisterBus + Send + Sync>;

/// Called after every write that reached the device (offset, value): how
/// a block reacts to another block's register (a CP reset the power
/// block stores, a mode-1 reset through the SMU's mailbox).
pub(crate) type Tap = Box<dyn Fn(usize, u32) + Send + Sync>;

/// One router per device.
pub(crate) struct Router {
    /// Offsets claimed one by one; the latest claim of an offset wins.
    single: BTreeMap<usize, Bus>,
    /// Ranges claimed whole, looked at after `single`, first match wins.
    ranges: Vec<(RangeInclusive<usize>, Bus)>,
    /// What no block claims.
    rest: Bus,
    taps: Vec<Tap>,
    /// Fault switch: the device fell off the bus. A PCIe read that no
    /// function completes returns all ones and writes are dropped (the
    /// root complex's completer-abort answer, which Linux's
    /// `amdgpu_device_rreg()` callers and `pci_device_is_present()` treat
    /// as a vanished device).
    gone: Arc<AtomicBool>,
}

impl Router {
    /// A router sending everything to `rest` until blocks claim offsets.
    pub(crate) fn new(rest: Bus) -> Self {
        Router {
            single: BTreeMap::new(),
            ranges: Vec::new(),
            rest,
            taps: Vec::new(),
            gone: Arc::new(AtomicBool::new(false)),
        }
    }

    /// `to` owns every offset of `offsets` (over earlier claims).
    pub(crate) fn claim(&mut self, offsets: impl IntoIterator<Item = usize>, to: &Bus) {
        for off in offsets {
            self.single.insert(off, to.clone());
        }
    }

    /// `to` owns `range` (where no single claim says otherwise).
    pub(crate) fn claim_range(&mut self, range: RangeInclusive<usize>, to: Bus) {
        self.ranges.push((range, to));
    }

    pub(crate) fn tap(&mut self, t: Tap) {
        self.taps.push(t);
    }

    /// The fault switch [`Router::gone`] reads.
    pub(crate) fn gone_flag(&self) -> Arc<AtomicBool> {
        self.gone.clone()
    }

    fn owner(&self, off: usize) -> &Bus {
        self.single
            .get(&off)
            .or_else(|| {
                self.ranges
                    .iter()
                    .find(|(r, _)| r.contains(&off))
                    .map(|(_, m)| m)
            })
            .unwrap_or(&self.rest)
    }
}

impl RegisterBus for Router {
    fn read32(&self, off: usize) -> u32 {
        if self.gone.load(Ordering::Relaxed) {
            return barebell::bus::ALL_ONES;
        }
        self.owner(off).read32(off)
    }
    fn write32(&self, off: usize, v: u32) {
        if self.gone.load(Ordering::Relaxed) {
            return;
        }
        self.owner(off).write32(off, v);
        for t in &self.taps {
            t(off, v);
        }
    }
}
