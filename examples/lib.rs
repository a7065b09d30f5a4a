//! Runnable examples live next to this file; run one with
//! `cargo run -p barebell-examples --example bounded_poll`.
