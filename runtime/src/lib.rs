//! barebell: drive an AMD GPU with no kernel driver.
//!
//! This crate is `no_std` and allocation-free. Everything that touches the
//! device goes through one seam, [`bus::RegisterBus`], so that the same code
//! runs against a BAR5 mapping in production and against the device model in
//! `tests/sim`. Queues, rings and signals are plain memory that both sides
//! reach through raw pointers, which keeps the submit path byte-for-byte the
//! production code even under test.
//!
//! Every hardware fact used here is listed in [`conformance::FACTS`] and
//! checked against the public header it came from by `cargo xtask ci`.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "std")]
extern crate std;

pub mod aql;
pub mod bus;
pub mod conformance;
pub mod discovery;
pub mod doorbell;
pub mod gmc;
pub mod hqd;
pub mod hub;
pub mod indirect;
pub mod kiq;
pub mod kiq_hqd;
pub mod latency;
pub mod mapper;
pub mod mem;
pub mod mes;
pub mod mes_start;
pub mod mqd;
pub mod nbio;
pub mod psp;
pub mod queue;
pub mod regs;
pub mod signal;
pub mod time;
