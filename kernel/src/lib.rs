//! barebell-kernel: load AMDHSA code objects and launch their kernels on
//! barebell AQL queues, HIP-style.
//!
//! - [`loader`]: ELF code objects v4, v5 and v6 through the `object`
//!   crate; segments copied into device memory the caller provides at the
//!   address it picks; dynamic relocations applied; kernels found by name.
//! - [`target`]: `e_flags` (processor, xnack, sramecc, generic version) and
//!   the check that a code object fits a part.
//! - [`metadata`] / [`msgpack`]: the `NT_AMDGPU_METADATA` note.
//! - [`descriptor`]: the 64-byte kernel descriptor, decoded.
//! - [`layout`]: a kernel's arguments reduced at load time to the explicit
//!   and hidden slots a launch reads.
//! - [`kernarg`]: typed arguments checked against the metadata, and every
//!   hidden argument filled where the metadata puts it.
//! - [`launch`]: the dispatch packet and the one-call launch.
//! - [`scratch`]: queue scratch as ROCR sets it up for gfx11/gfx12.
//! - `job` (feature `job`): the JSON job format of `barebell run`.
//!
//! `no_std` + `alloc`: parsing allocates (kernel tables, metadata); the
//! launch path does not. Every layout and constant is a fact in
//! [`conformance::FACTS`], checked against LLVM 19's headers (and Linux
//! 6.12 for the scratch register fields) by `cargo xtask conformance`.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod conformance;
pub mod descriptor;
#[cfg(feature = "job")]
pub mod job;
pub mod kernarg;
pub mod launch;
pub mod layout;
pub mod loader;
pub mod metadata;
pub mod msgpack;
pub mod scratch;
pub mod target;

pub use kernarg::{Arg, ArgError, Geometry, HiddenValues, KernargBuffer, Scalar};
pub use launch::{Completion, LaunchContext, LaunchError, Prepared, launch};
pub use loader::{CodeObject, DeviceImage, Kernel, LoadError, LoadedCode};
pub use target::{Mach, Part};
