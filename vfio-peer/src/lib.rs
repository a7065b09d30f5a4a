//! barebell's device model as a PCI function a QEMU guest sees, over
//! vfio-user (the rust-vmm `vfio_user` server): the stock Linux amdgpu
//! driver in the guest binds to it (`cargo xtask linux-peer`,
//! `docs/linux-peer.md`).
//!
//! - [`config`]: the configuration space (ids, class, BAR types, PM,
//!   PCI Express and MSI-X capabilities);
//! - [`memory`]: VRAM in a memfd the model and QEMU both map, and the
//!   guest RAM QEMU hands over in `DMA_MAP`;
//! - [`function`]: the region and IRQ tables and the message handlers;
//! - [`trace`]: every access, one line each;
//! - [`vbios`]: the minimal ATOM ROM the function serves.

pub mod config;
pub mod function;
pub mod memory;
pub mod trace;
pub mod vbios;

pub use function::{ModelFunction, Options, SetupError};
