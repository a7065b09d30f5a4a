//! barebell: drive an AMD GPU with no kernel driver.
//!
//! This crate is `no_std` and allocation-free. Everything that touches the
//! device goes through one seam, [`bus::RegisterBus`], so that the same code
//! runs against a BAR5 mapping in production and against the device model
//! (`barebell-model`). Queues, rings and signals are plain memory that both
//! sides reach through raw pointers, which keeps the submit path
//! byte-for-byte the production code even under test.
//!
//! Modules follow the hardware blocks, leaf first:
//! - [`time`], [`ip`]: clocks and bounded waits; IP ids and the GPU
//!   generation;
//! - [`bus`]: the register bus, register-block handles, the indirect
//!   (RSMU) bus and the symbolic trace;
//! - [`regs`]: register offsets per IP version, checked against Linux;
//! - [`discovery`], [`nbio`], [`gmc`] (page tables, hubs, VRAM layout),
//!   [`psp`], [`gfx`] (MQDs, HQDs, KIQ, MES, doorbells, the queue mappers);
//! - [`mem`]: device-visible memory (the DMA arena and typed handles);
//! - [`aql`]: AQL packets, queues, signals and doorbells: the submit path;
//! - [`latency`]: the measurement loop, timer and histogram.
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
pub mod gfx;
pub mod gmc;
pub mod ih;
pub mod ip;
pub mod latency;
pub mod mem;
#[cfg(test)]
mod messages;
pub mod nbio;
pub mod platform;
pub mod psp;
pub mod regs;
pub mod sdma;
pub mod smu;
pub mod time;
