//! AMD GPU firmware containers and on-GPU firmware protocols, as zero-copy
//! views over byte slices.
//!
//! Nothing here does I/O or allocates: a caller hands in `&[u8]` (a blob
//! read from `/lib/firmware/amdgpu`, or a region of VRAM) and gets typed,
//! bounds-checked views back. The style follows smoltcp's `wire` module:
//! check lengths once, up front, then read fields without further checks.
//!
//! - [`ucode`], [`kind`], [`firmware`]: the containers (`amdgpu_ucode.h`).
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "std")]
extern crate std;

pub mod conformance;
pub mod firmware;
pub mod kind;
pub mod mes_api;
pub mod pm4;
pub mod psp_gfx;
pub mod ucode;

pub use firmware::{Body, Firmware, Unsupported, parse};
pub use kind::{CpEngine, Kind, MesPipe};
pub use ucode::{Error, Section};
