//! PCI configuration space access for finding and opening the GPU.
//!
//! The core is `no_std`: a [`ConfigSpace`] trait with 8/16/32-bit accessors
//! and typed register offsets checked against Linux's `pci_regs.h`.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "std")]
extern crate std;

pub mod config;
pub mod conformance;

pub use config::ConfigSpace;
