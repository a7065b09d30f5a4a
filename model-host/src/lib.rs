//! The driver side of the device model.
//!
//! `barebell-model` is the device: it decodes what reaches it with its own
//! code and never names the runtime's queue, MQD, MES, KIQ, PSP or page
//! table types. Tests, benches and the CLI still need to put the
//! runtime's objects where a model reaches them without running the whole
//! bring-up: an AQL queue bound straight to a CP model ([`queue`]), KIQ
//! and MES rings next to a MEC model ([`mec`]), or the PSP's buffers behind
//! the runtime's own VMID0 tables ([`psp_rig`]). That is driver code, so it
//! lives here, on the runtime's side of the line.
//!
//! The full bring-up (`barebell_bringup::run` over
//! `barebell_model::VirtualGpu`) needs none of this.

#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod mec;
pub mod psp_rig;
pub mod queue;
pub mod start;

pub use queue::{DOORBELL_INDEX, ModelQueue, PlaceError, signals};
