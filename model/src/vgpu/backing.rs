//! The memory behind a device's physical addresses, for every part: the
//! VRAM backing (VRAM offset 0 at the FB offset's physical address) and
//! the DMA region through the model's IOMMU (each 2 MiB chunk at its bus
//! address). Every generation's translators and SDMA ports end here once
//! their hub's walk gave a physical address.

use super::HostMemory;
use crate::dma::Dma;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::platform::DMA_CHUNK;

/// Pinned host ranges behind the IOMMU: `(bus address, length, host
/// address)`, added and taken away while the device runs, shared by every
/// copy of a [`Backing`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Pinned(Arc<spin::RwLock<Vec<(u64, u64, u64)>>>);

impl Pinned {
    /// Adds a range unless its bus or host range meets one already there.
    pub(crate) fn add(&self, bus: u64, len: u64, host: u64) -> bool {
        let overlap =
            |a: u64, al: u64, b: u64, bl: u64| a < b.saturating_add(bl) && b < a.saturating_add(al);
        let mut v = self.0.write();
        let clash = v
            .iter()
            .any(|&(b, l, h)| overlap(bus, len, b, l) || overlap(host, len, h, l));
        if len == 0 || clash {
            return false;
        }
        v.push((bus, len, host));
        true
    }

    /// Takes away the range at bus address `bus`; its host range.
    pub(crate) fn remove(&self, bus: u64) -> Option<(u64, u64)> {
        let mut v = self.0.write();
        let i = v.iter().position(|&(b, _, _)| b == bus)?;
        let (_, l, h) = v.remove(i);
        Some((h, l))
    }

    fn host(&self, pa: u64) -> Option<u64> {
        self.0
            .read()
            .iter()
            .find_map(|&(b, l, h)| pa.checked_sub(b).filter(|o| *o < l).map(|o| h + o))
    }

    fn to_end(&self, host: u64) -> Option<u64> {
        self.0
            .read()
            .iter()
            .find(|&&(_, l, h)| host >= h && host - h < l)
            .map(|&(_, l, h)| h + l - host)
    }
}

/// Host ranges as plain numbers, so a translator can own a copy.
#[derive(Debug, Clone)]
pub(crate) struct Backing {
    /// VRAM backing: host address, length.
    pub vram: (u64, u64),
    /// DMA region: host address, length.
    pub dma: (u64, u64),
    /// Each DMA chunk's bus address, in order.
    pub chunk_bus: Vec<u64>,
    /// How the CPU maps the DMA region.
    pub cpu: crate::gmc::CpuCaching,
    /// Pinned host ranges (the device's own list, shared).
    pub pinned: Pinned,
}

impl Backing {
    pub(crate) fn new(memory: &HostMemory, chunk_bus: &[u64]) -> Self {
        Backing {
            vram: (memory.vram.as_ptr() as u64, memory.vram_len as u64),
            dma: (memory.dma.as_ptr() as u64, memory.dma_len as u64),
            chunk_bus: chunk_bus.to_vec(),
            cpu: memory.cpu,
            pinned: memory.pinned.clone(),
        }
    }

    /// A window over the VRAM backing, VRAM offset 0 at device address 0.
    pub(crate) fn vram_window(&self) -> Dma {
        let mut d = Dma::default();
        // SAFETY: the device's own VRAM backing, which outlives every
        // block model holding a `Backing` (the device drops its memory
        // last); the window is only read and written through `Dma`'s
        // checked accessors.
        unsafe { d.map_at(0, self.vram.0 as *mut u8, self.vram.1) };
        d
    }

    /// The IOMMU: each DMA chunk at its bus address.
    pub(crate) fn iommu_window(&self) -> Dma {
        let mut d = Dma::default();
        for (i, bus) in self.chunk_bus.iter().enumerate() {
            let host = self.dma.0 + (i * DMA_CHUNK) as u64;
            // SAFETY: as for `vram_window`: the device's own DMA chunks.
            unsafe { d.map_at(*bus, host as *mut u8, DMA_CHUNK as u64) };
        }
        d
    }

    /// The host address of physical address `pa`: through the IOMMU for a
    /// SYSTEM page (`pa` is a bus address), else VRAM offset
    /// `pa - fb_offset`. `None` where nothing backs it.
    pub(crate) fn host(&self, pa: u64, system: bool, fb_offset: u64) -> Option<u64> {
        if system {
            self.chunk_bus
                .iter()
                .enumerate()
                .find_map(|(i, b)| {
                    pa.checked_sub(*b)
                        .filter(|o| *o < DMA_CHUNK as u64)
                        .map(|o| self.dma.0 + (i * DMA_CHUNK) as u64 + o)
                })
                .or_else(|| self.pinned.host(pa))
        } else {
            pa.checked_sub(fb_offset)
                .filter(|o| *o < self.vram.1)
                .map(|o| self.vram.0 + o)
        }
    }

    /// Bytes from host address `host` to the end of the backing range
    /// (VRAM or DMA region) it lies in; 0 outside both.
    pub(crate) fn to_end(&self, host: u64) -> u64 {
        [self.dma, self.vram]
            .into_iter()
            .find(|(b, l)| host >= *b && host < b + l)
            .map(|(b, l)| b + l - host)
            .or_else(|| self.pinned.to_end(host))
            .unwrap_or(0)
    }
}
