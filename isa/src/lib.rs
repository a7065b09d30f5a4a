//! gfx11 (RDNA3) and gfx12 (RDNA4) machine code: decoding, LLVM-syntax
//! printing, a wave interpreter and the dispatch launch that feeds it.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod decode;
pub mod exec;
pub mod kd;
pub mod launch;
pub mod mem;
pub mod print;
mod print_mem;
pub mod table;

#[cfg(feature = "std")]
pub mod objdump;

pub use decode::{DecodeError, Inst, Target, decode};
pub use print::Syntax;
