//! The host side of a real GPU: the VFIO and sysfs platforms (BARs, DMA
//! memory, pinning) behind `barebell::platform::Platform`.
//!
//! The real-hardware targets, `--vfio BDF` and `--sysfs BDF`: opening the
//! function and providing it as a [`barebell::platform::Platform`] the
//! one bring-up runs on.
//!
//! **Never run on a GPU.** No machine this was written on has an AMD GPU.
//! What has run: the argument handling and every refusal that a non-AMD
//! device can trigger (tests in `cli/tests/hw_*.rs`), and, in the QEMU
//! guest of `cargo xtask qemu-pci`, the VFIO open path up to the vendor
//! refusal on QEMU's `edu` device. The bring-up behind it is the code the
//! model target runs in every test.
//!
//! - `device` opens the function (VFIO or sysfs), refuses anything that
//!   is not a usable AMD GPU ([`OpenError`]), and maps BAR0 (VRAM), BAR2
//!   (doorbells) and BAR5 (registers);
//! - `dma` provides host memory the GPU can reach at a fixed host
//!   address, with each 2 MiB chunk's bus address (an IOMMU mapping
//!   through VFIO, or pinned hugepages resolved through
//!   [`barebell_pcie::pagemap`] when the IOMMU is off; [`DmaError`]);
//! - `platform` wraps the opened device as a `Platform`: [`HwPlatform`].

mod device;
mod dma;
mod platform;

pub use device::OpenError;
pub use dma::DmaError;
pub use platform::HwPlatform;
#[cfg(any(test, feature = "model-stand-in"))]
pub use platform::{FIXED_DMA, model_of_part_standing_in, model_standing_in};

use barebell_pcie::Bdf;

/// A hardware target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `--vfio BDF`: a function bound to `vfio-pci`, its DMA memory
    /// mapped through the IOMMU.
    Vfio(Bdf),
    /// `--sysfs BDF`: a function with no driver, opened as root, its DMA
    /// memory locked hugepages the device reaches by physical address.
    Sysfs(Bdf),
}

impl core::fmt::Display for Target {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Target::Vfio(b) => write!(f, "vfio {b}"),
            Target::Sysfs(b) => write!(f, "sysfs {b}"),
        }
    }
}
