//! The submit path: AQL packets ([`packet`]), the user-mode queue
//! ([`queue`]), completion signals ([`signal`]) and doorbells
//! ([`doorbell`]), as ROCR lays them out (`amd_aql_queue.cpp`,
//! `amd_hsa_queue.h`, `amd_hsa_signal.h`).

pub mod condition;
pub mod doorbell;
pub mod packet;
pub mod queue;
pub mod signal;
pub mod watchdog;

pub use doorbell::{Doorbell, DoorbellAperture, DoorbellError};
pub use packet::{
    BarrierKind, BarrierPacket, Dispatch, Fences, KernelDispatchPacket, Packet, PacketError,
    PacketHeader, SignalHandle,
};
pub use queue::{AqlQueue, QueueConfig, QueueMemory, SubmitError};
pub use signal::{Condition, SignalMemory};
