//! A GPU opened through VFIO or sysfs, as a [`Platform`] the one bring-up
//! sequence runs on.
//!
//! **Never run on a GPU.** The same bring-up runs on the device model in
//! every test; what differs here is only where the BARs and the DMA
//! region come from ([`super::device`], [`super::dma`]).

use super::Target;
use super::device::{self, Device, OpenError};
use barebell::bus::RegisterBus;
use barebell::platform::{Aperture, DmaRegion, Platform};
use barebell::time::{Clock, StdClock};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};

/// An opened GPU.
#[derive(Debug)]
pub struct HwPlatform {
    dev: Device,
    name: String,
    clock: StdClock,
    claimed: AtomicBool,
}

impl HwPlatform {
    /// Opens `target` with every refusal check of [`device::open`].
    pub fn open(target: Target) -> Result<Self, OpenError> {
        let dev = device::open(target)?;
        Ok(HwPlatform {
            name: format!("{target}"),
            dev,
            clock: StdClock::default(),
            claimed: AtomicBool::new(false),
        })
    }

    /// One line saying what was opened.
    pub fn describe(&self) -> String {
        let d = &self.dev;
        format!(
            "opened {} through {}: AMD device {:04x}; BAR5 {:#x} bytes, BAR0 {:#x} bytes, doorbell BAR2 {:#x} bytes at bus {:#x}; DMA region {:#x} bytes at bus {:#x} (unverified on hardware)",
            d.bdf,
            d.how(),
            d.device_id,
            d.register_bar_len(),
            d.vram.len(),
            d.doorbells.len(),
            d.doorbell_bus,
            d.dma.len(),
            d.dma.bus()
        )
    }

    /// Keeps the device's memory for the rest of the process: once the
    /// rings exist, MES and the CP keep addresses in the DMA region and may
    /// read them until a reset, which barebell does not do yet; returning
    /// that memory to the OS (or unmapping it from the IOMMU) while the
    /// device can still reach it would hand the device someone else's
    /// memory (without an IOMMU) or fault it. The process exit closes the
    /// VFIO fds, which tears the IOMMU mapping down.
    pub fn retire(self) {
        std::mem::forget(self);
    }
}

fn aperture(ptr: *mut u8, len: usize) -> Aperture {
    Aperture {
        host: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
        len: if ptr.is_null() { 0 } else { len },
    }
}

// SAFETY: `Device` maps BAR5 as an uncached shared mapping wrapped in an
// `Mmio` (one volatile access per call); BAR0 and BAR2 as shared BAR
// mappings of their full length; the DMA region is locked, zeroed host
// memory at `DMA_HOST_VA`, reached by the device at each chunk's bus
// address (an IOVA mapping through VFIO, or the chunk's physical address
// from pagemap with the IOMMU off). All of it lives as long as the
// `Device`, which this value owns, and nothing else in the process uses
// it.
unsafe impl Platform for HwPlatform {
    fn regs(&self) -> &dyn RegisterBus {
        &self.dev.regs
    }
    fn regs_len(&self) -> usize {
        self.dev.register_bar_len()
    }
    fn vram(&self) -> Aperture {
        aperture(self.dev.vram.as_ptr(), self.dev.vram.len())
    }
    fn doorbells(&self) -> Aperture {
        aperture(self.dev.doorbells.as_ptr(), self.dev.doorbells.len())
    }
    fn doorbell_bus(&self) -> u64 {
        self.dev.doorbell_bus
    }
    fn dma(&self) -> DmaRegion<'_> {
        DmaRegion {
            host: NonNull::new(self.dev.dma.as_ptr()).unwrap_or(NonNull::dangling()),
            len: self.dev.dma.len(),
            chunk_bus: self.dev.dma.chunks(),
        }
    }
    fn clock(&self) -> &dyn Clock {
        &self.clock
    }
    fn pause(&self) {
        std::thread::yield_now();
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::AcqRel)
    }
}
