//! Library half of the `barebell` CLI.

pub mod pci_describe;
