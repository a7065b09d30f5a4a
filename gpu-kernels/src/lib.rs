//! The GPU kernels barebell ships: `empty` and `vadd` from
//! `kernels/latency.cl`, compiled by clang-19 at build time for gfx1100
//! (navi31), gfx1201 (navi48), gfx942 (mi300x, mi308x) and gfx90a (mi210)
//! as code objects v5.
//!
//! A crate of its own so that the one build step that needs clang-19 is
//! small and fails loudly: the build stops with a message naming clang-19
//! and `cargo xtask deps` when the compiler is missing, and the next build
//! after it is installed succeeds with no `cargo clean`
//! (`tests/missing_clang.rs`).
#![no_std]

include!(concat!(env!("OUT_DIR"), "/built.rs"));

/// Where the kernels' source lives in the repository.
pub const SOURCE: &str = "gpu-kernels/kernels/latency.cl";
