//! The seam between the one bring-up sequence and a device: [`Platform`].
//!
//! A GPU reached through VFIO, through sysfs `resourceN` mappings, through
//! ECAM in the unikernel, and the device model's `VirtualGpu` all look
//! the same to the bring-up: a register aperture (BAR5), VRAM as far as
//! BAR0 maps it, the doorbell aperture (BAR2) and its bus address, and a
//! region of host memory the device reaches by DMA. The platform also
//! supplies the clock the bring-up's bounded waits run on, and a
//! [`Platform::pause`] hook that every wait calls between looks at the
//! device: on hardware it only spins, on the model it is where firmware
//! stand-ins (the MES, KIQ and CP models) get to run, so that the model
//! runs exactly the code a GPU would run and only the platform differs.
//!
//! Everything the bring-up hands the device (page tables, rings, MQDs,
//! queues, signals) lives in memory a platform provides, so the argument
//! "this memory is valid, stays alive and is device-visible at this
//! address" is made once, by the platform's implementor, in the `unsafe
//! impl` of this trait.

use crate::bus::RegisterBus;
use crate::time::Clock;
use core::ptr::NonNull;

/// Where every platform puts its DMA region in the host's address space,
/// and so (the ring area being mapped at GPU VA = host address) in the
/// GPU's: 32 TiB. The GPU's MC space also holds the FB (the system
/// aperture) and the GART, and the region must miss both; at 32 TiB it is
/// far above any FB a VBIOS places (tens of GiB above 0) and below gfx11's
/// high GART (just under 2^47), inside the 47-bit user space. The
/// bring-up's gmc step checks the final layout anyway.
pub const DMA_HOST_VA: usize = 0x2000_0000_0000;

/// Bytes of the DMA region every platform provides: the first chunk is
/// GTT (the PSP's buffers), the rest the ring area.
pub const DMA_BYTES: usize = 4 << 20;

/// Size of one chunk of the DMA region: each chunk is contiguous on the
/// bus (a 2 MiB hugepage, or one IOMMU mapping), the chunks need not be.
pub const DMA_CHUNK: usize = 2 << 20;

/// A window of the host's address space: a BAR mapping or host memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aperture {
    pub host: NonNull<u8>,
    pub len: usize,
}

impl Aperture {
    /// The host pointer to `offset`, if `offset..offset + len` lies inside.
    pub fn at(&self, offset: u64, len: u64) -> Option<NonNull<u8>> {
        let end = offset.checked_add(len)?;
        if end > self.len as u64 {
            return None;
        }
        let off = usize::try_from(offset).ok()?;
        // SAFETY: `offset + len <= self.len`, so the pointer stays inside
        // the aperture the platform promised is mapped.
        Some(unsafe { self.host.add(off) })
    }

    /// One 32-bit read at `offset` (all-ones outside, as an unclaimed
    /// PCIe read returns).
    pub fn read32(&self, offset: u64) -> u32 {
        match self.at(offset, 4) {
            Some(p) => {
                // SAFETY: in bounds (checked by `at`); the platform
                // promised the aperture is mapped and readable; `[u8; 4]`
                // has alignment 1, and a volatile access keeps the compiler
                // from merging or caching device reads.
                let b = unsafe { core::ptr::read_volatile(p.as_ptr().cast::<[u8; 4]>()) };
                u32::from_le_bytes(b)
            }
            None => crate::bus::ALL_ONES,
        }
    }
}

/// Host memory the device reaches by DMA, as whole [`DMA_CHUNK`]s.
#[derive(Debug, Clone, Copy)]
pub struct DmaRegion<'a> {
    pub host: NonNull<u8>,
    pub len: usize,
    /// The bus address of each chunk's first byte.
    pub chunk_bus: &'a [u64],
}

impl DmaRegion<'_> {
    /// The bus address of host byte `offset` of the region.
    pub fn bus_addr(&self, offset: usize) -> Option<u64> {
        if offset >= self.len {
            return None;
        }
        let chunk = *self.chunk_bus.get(offset / DMA_CHUNK)?;
        chunk.checked_add((offset % DMA_CHUNK) as u64)
    }
}

/// A device the bring-up can run on.
///
/// # Safety
/// By implementing this trait the implementor promises, for as long as
/// the value lives:
/// - [`regs`](Platform::regs) performs each call as one device access,
///   in program order;
/// - [`vram`](Platform::vram) maps `len` bytes of VRAM from VRAM offset
///   0, readable and writable by the CPU, and nothing else in the process
///   uses it except through this platform;
/// - [`doorbells`](Platform::doorbells) maps the doorbell aperture, whose
///   first byte the device sees at [`doorbell_bus`](Platform::doorbell_bus),
///   valid for aligned 64-bit stores;
/// - [`dma`](Platform::dma) is page-aligned, writable host memory of whole
///   chunks, each chunk reached by the device at its `chunk_bus` address,
///   used by nothing else in the process, and kept mapped (and, without
///   an IOMMU, kept resident at those physical addresses) until the
///   device can no longer reach it.
pub unsafe trait Platform {
    /// The register aperture as mapped (BAR5).
    fn regs(&self) -> &dyn RegisterBus;
    /// How many bytes of the register space [`regs`](Platform::regs)
    /// reaches directly (BAR5's length, Linux's `rmmio_size`).
    fn regs_len(&self) -> usize;
    /// VRAM as the CPU maps it (BAR0).
    fn vram(&self) -> Aperture;
    /// The doorbell aperture as the CPU maps it (BAR2).
    fn doorbells(&self) -> Aperture;
    /// BAR2's bus address (what the NBIO's doorbell aperture is set to).
    fn doorbell_bus(&self) -> u64;
    /// Host memory the device reaches by DMA.
    fn dma(&self) -> DmaRegion<'_>;
    /// The clock every bounded wait runs on.
    fn clock(&self) -> &dyn Clock;
    /// Called between looks at device state while waiting: hardware
    /// spins or yields; the model lets its firmware stand-ins run.
    fn pause(&self);
    /// A short name for messages (`"vfio 0000:03:00.0"`, `"model navi31"`).
    fn name(&self) -> &str;
    /// `true` the first time it is called, `false` after: a bring-up
    /// hands the platform's VRAM and DMA region to the device once, and
    /// claims them first so that a second bring-up over the same memory
    /// is refused instead of aliasing it.
    fn claim(&self) -> bool;
    /// Sets or clears `PCI_COMMAND` bus master (`pci_set_master()` /
    /// `pci_clear_master()`): with it clear the device may not start DMA
    /// (PCI Local Bus Specification 3.0, section 6.2.2). Returns whether
    /// the platform did it; the default cannot (a platform whose config
    /// space is not reachable, e.g. a unikernel that leaves it to
    /// firmware).
    fn set_bus_master(&self, on: bool) -> bool {
        let _ = on;
        false
    }
    /// Saves the function's PCI configuration state before a reset that
    /// loses it (`amdgpu_device_cache_pci_state()` → `pci_save_state()`).
    /// Returns whether the platform did; the default cannot.
    fn save_pci_state(&self) -> bool {
        false
    }
    /// Puts back what [`Platform::save_pci_state`] saved
    /// (`amdgpu_device_load_pci_state()` → `pci_restore_state()`: the
    /// BARs, then COMMAND), so the function decodes its BARs again.
    /// Returns whether it did.
    fn restore_pci_state(&self) -> bool {
        false
    }
    /// Clears ASPM Control (L0s/L1 entry) in the function's PCI Express
    /// Link Control, as tinygrad's `AMDev._disable_aspm()` does before it
    /// touches a BAR (its silicon lesson: with L1 on across retimers,
    /// register reads come back as 0xffffffff; clearing the GPU end alone
    /// keeps the link out of L1). Returns whether the platform did; the
    /// default cannot.
    fn disable_aspm(&self) -> bool {
        false
    }
    /// The function's PCI device id (config offset 2), which Linux keys
    /// its chip on before anything else (`amdgpu_drv.c`'s `pciidlist`):
    /// the bring-up takes Aldebaran's IP list from it
    /// ([`crate::discovery::aldebaran`]). `None` where config space is
    /// not reachable; the bring-up then trusts the discovery table.
    fn pci_device_id(&self) -> Option<u16> {
        None
    }
}
