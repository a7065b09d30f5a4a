//! The GC compute block: MQD layouts ([`mqd`]), the GRBM bank select
//! ([`grbm`]), the doorbell allocator ([`doorbells`]), and the three ways
//! a queue reaches a hardware queue slot, behind one trait
//! ([`mapper::QueueMapper`]): direct HQD programming ([`hqd`]), the KIQ
//! ([`kiq`]) and the MES scheduler ([`mes`]).
//!
//! Dependency order, leaf first: `error`, `grbm`, `doorbells`, `mqd` →
//! `mapper` → `hqd`, `kiq`, `mes`.

pub mod doorbells;
pub mod error;
pub mod grbm;
pub mod hqd;
pub mod hqd_v9;
pub mod hws;
pub mod init;
pub mod init_v9_4_3;
pub mod kiq;
pub mod mapper;
pub mod mec;
pub mod mes;
pub mod mqd;
pub mod mqd_v9;
pub mod pfp_me;
pub mod queue_v9;
pub mod reset;
pub mod start_v9_0;
pub mod start_v9_4_3;

pub use doorbells::{Doorbells, doorbell_index};
pub use error::{DoorbellAllocError, KiqTimeout, MapError, MesError, MqdError};
pub use mapper::{HqdRegs, Mapping, QueueMapper, QueueResources};
