//! AMD GPU firmware containers and on-GPU firmware protocols, as zero-copy
//! views over byte slices.
//!
//! Nothing here does I/O or allocates: a caller hands in `&[u8]` (a blob
//! read from `/lib/firmware/amdgpu`, or a region of VRAM) and gets typed,
//! bounds-checked views back. The style follows smoltcp's `wire` module:
//! check lengths once, up front, then read fields without further checks.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "std")]
extern crate std;

pub mod conformance;
pub mod ucode;
