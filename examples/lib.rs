//! Runnable examples live next to this file; run one with
//! `cargo run -p barebell-examples --example bounded_poll`.

use std::fmt;

/// The error of an example's `main`: any error's text. The library
/// crates' errors implement `Display` (some of them not `Error`: they are
/// `no_std`), so `?` turns each into this; a failing example prints it.
pub struct Failed(pub String);

impl<E: fmt::Display> From<E> for Failed {
    fn from(e: E) -> Self {
        Failed(e.to_string())
    }
}

impl fmt::Debug for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
