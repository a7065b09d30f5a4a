//! PCI configuration space access for finding and opening the GPU.
//!
//! The core is `no_std` and allocation-free: a [`ConfigSpace`] trait with
//! 8/16/32-bit accessors, header and BAR decoding ([`bar`]), capability
//! walks and typed capability views ([`caps`]), and bare-metal enumeration
//! ([`enumerate`]) over any [`ecam::ConfigAccess`] (ECAM, or x86 port I/O
//! in [`portio`]). Every offset, id and mask is checked against Linux's
//! `pci_regs.h` by `cargo xtask conformance`.
//!
//! Behind `std` are the Linux host backends: [`sysfs`] (config file,
//! resource mmap, resize, enable), [`pagemap`] (virtual to physical
//! for DMA without an IOMMU) and [`vfio`] (group/container and
//! iommufd/cdev). The VFIO ioctl numbers and structs live in [`vfio_uapi`]
//! (always compiled, so their facts are always checked).
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "std")]
extern crate std;

/// Declares register constants together with the fact table that checks
/// each one against the C expression named after `=>`.
macro_rules! checked_consts {
    ($header:expr, $table:ident; $( $(#[$m:meta])* $name:ident : $ty:ty = $val:expr => $c:literal; )*) => {
        $( $(#[$m])* pub const $name: $ty = $val; )*
        /// Facts for the constants above.
        pub const $table: &[barebell_facts::Fact] = &[
            $( barebell_facts::Fact::constant($header, $c, $name as u64), )*
        ];
    };
}
pub(crate) use checked_consts;

pub mod bar;
pub mod bdf;
pub mod caps;
pub mod config;
pub mod conformance;
pub mod ecam;
#[cfg(feature = "std")]
pub mod emergency;
pub mod enumerate;
pub mod mem;
#[cfg(feature = "std")]
pub mod pagemap;
#[cfg(target_arch = "x86_64")]
pub mod portio;
#[cfg(feature = "std")]
pub mod sigbus;
#[cfg(feature = "std")]
pub mod sysfs;
#[cfg(feature = "std")]
pub mod vfio;
pub mod vfio_uapi;

pub use bdf::Bdf;
pub use config::ConfigSpace;
