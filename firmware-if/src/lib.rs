//! AMD GPU firmware containers and on-GPU firmware protocols, as zero-copy
//! views over byte slices.
//!
//! Nothing here does I/O or allocates: a caller hands in `&[u8]` (a blob
//! read from `/lib/firmware/amdgpu`, or a region of VRAM) and gets typed,
//! bounds-checked views back. The style follows smoltcp's `wire` module:
//! check lengths once, up front, then read fields without further checks.
//!
//! - [`ucode`], [`kind`], [`firmware`]: the containers (`amdgpu_ucode.h`),
//!   which engine and pipe a blob is for, and the values its loader
//!   programs.
//! - [`mes_api`]: MES scheduler frames, v11 and v12 as distinct layouts.
//! - [`psp_gfx`]: PSP bootloader codes and GPCOM commands.
//! - [`pm4`]: gfx11 PM4 type-3 packets for the KIQ and compute rings.
//!
//! - With the `alloc` feature, [`source`]: `FirmwareSource`, where blob
//!   bytes come from, and `FirmwareError`, why they could not be had.
//!
//! Every layout, bit position and constant is also a [`conformance`]
//! fact, compiled against the Linux 6.12 header it comes from.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod conformance;
pub mod firmware;
pub mod kind;
pub mod mes_api;
pub mod pm4;
pub mod psp_gfx;
#[cfg(feature = "alloc")]
pub mod source;
pub mod ucode;

pub use firmware::{Body, Firmware, Unsupported, parse};
pub use kind::{CpEngine, Kind, MesPipe};
pub use ucode::{Error, Section};
