//! gfx11 (RDNA3), gfx12 (RDNA4), gfx942 (CDNA3) and gfx90a (CDNA2; both
//! the subsets in docs/isa.md) machine code: decoding, LLVM-syntax
//! printing, a wave interpreter and the dispatch launch that feeds it.
//!
//! - [`decode()`] turns bytes into an [`Inst`] for a [`Target`]; its
//!   [`Inst::display`] prints what `llvm-objdump-19 -d` prints for the same
//!   bytes (checked by `cargo xtask isa-diff`, see docs/isa.md).
//! - [`launch::launch`] runs a dispatch: given a [`mem::Memory`] (read,
//!   write, atomics, typed [`mem::MemFault`] on unmapped addresses), a
//!   [`launch::LaunchConfig`] (target, seed) and the AQL packet's fields
//!   ([`launch::Dispatch`]), it reads the kernel descriptor at
//!   `kernel_object` ([`kd::KernelDescriptor`]), sets up SGPRs/VGPRs, LDS and
//!   scratch as the CP/SPI does, runs every wave in a seed-chosen order and
//!   returns [`launch::Stats`] or a typed [`launch::LaunchError`] (a wave's
//!   [`exec::ExecError`] names an unimplemented or illegal instruction and
//!   its address).
//! - [`exec`] is the interpreter itself; [`table`] the opcode tables;
//!   [`inst`] the types decoding, printing and the interpreter share
//!   ([`Target`], [`Syntax`], [`Inst`]).
//! - With the `std` feature, `objdump::disassemble` lists a code object's
//!   functions (used by `barebell disasm`).
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod decode;
pub mod dump;
pub mod exec;
pub mod image;
pub mod inst;
pub mod kd;
pub mod launch;
pub mod mem;
pub mod print;
mod print_mem;
pub mod table;

#[cfg(feature = "std")]
pub mod objdump;

pub use decode::{DecodeError, decode};
pub use inst::{Inst, Syntax, Target};
