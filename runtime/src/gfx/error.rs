//! The gfx layer's errors, in one leaf module so that the mappers and
//! their back ends (direct HQD, KIQ, MES) can share [`MapError`] without
//! importing each other.

use crate::bus::{BlockError, WaitError};

/// Why an MQD could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MqdError {
    /// The ring must be a power of two of at least 256 bytes (four AQL
    /// packets), and `QUEUE_SIZE` holds at most 63.
    RingSize { bytes: u64 },
    /// A field needs this alignment: the ring and EOP bases are stored
    /// `>> 8`, the MQD base and the index addresses must be 8-aligned.
    Misaligned {
        field: &'static str,
        address: u64,
        align: u64,
    },
    /// An address is zero.
    Missing { field: &'static str },
    /// The doorbell offset does not fit `DOORBELL_OFFSET` (26 bits).
    DoorbellOffset { dword: u32 },
    /// The EOP buffer must be a power of two of at least 16 bytes.
    EopSize { bytes: u64 },
    /// VMIDs are 4 bits.
    Vmid { vmid: u8 },
    /// The generation's MQD layout is not written yet.
    Unsupported(crate::ip::Unsupported),
}

impl core::fmt::Display for MqdError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MqdError::RingSize { bytes } => write!(
                f,
                "ring of {bytes} bytes: must be a power of two from 256 bytes"
            ),
            MqdError::Misaligned {
                field,
                address,
                align,
            } => write!(f, "{field} {address:#x} is not {align}-byte aligned"),
            MqdError::Missing { field } => write!(f, "{field} is zero"),
            MqdError::DoorbellOffset { dword } => {
                write!(f, "doorbell dword offset {dword:#x} exceeds 26 bits")
            }
            MqdError::EopSize { bytes } => write!(
                f,
                "EOP buffer of {bytes} bytes: must be a power of two from 16 bytes"
            ),
            MqdError::Vmid { vmid } => write!(f, "VMID {vmid} exceeds 15"),
            MqdError::Unsupported(e) => write!(f, "{e}"),
        }
    }
}

/// What MES wrote to a frame's status slot, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MesStatus {
    /// v11: the ring fence advanced past the frame but its own fence was
    /// never written (Linux's `!*status_ptr` failure; v11 gives no code).
    NotCompleted { value: u64 },
    /// v12: `MES_ERR_CODE` decoded.
    V12(barebell_firmware_if::mes_api::v12::Status),
}

impl core::fmt::Display for MesStatus {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use barebell_firmware_if::mes_api::v12::Status;
        match *self {
            MesStatus::NotCompleted { value } => {
                write!(f, "its fence was never written (the slot holds {value:#x})")
            }
            MesStatus::V12(Status::Done(v)) => write!(f, "completed with fence {v:#x}"),
            MesStatus::V12(Status::Failed {
                api_error,
                opcode,
                misc_opcode,
                category,
            }) => write!(
                f,
                "MES_ERR_CODE api_error {api_error:#x}, opcode {opcode:#x}, misc opcode {misc_opcode:#x}, category {category:#x}"
            ),
        }
    }
}

/// Why a MES API call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MesError {
    /// The ring fence did not reach `seq` within the bound: MES is hung
    /// or was never started. `frame` names the API frame.
    Timeout {
        frame: &'static str,
        seq: u64,
        fence: u64,
        waited_ns: u64,
    },
    /// MES processed `frame` and refused it.
    Failed {
        frame: &'static str,
        status: MesStatus,
    },
    /// ADD_QUEUE before SET_HW_RSRC succeeded.
    NotInitialised { frame: &'static str },
    /// No process registered under this key.
    UnknownProcess { key: u8 },
    /// Every process slot is in use.
    TooManyProcesses,
    /// While waiting for `frame`'s fence, the device stopped answering
    /// (a register read all ones): it is gone, not hung.
    DeviceGone { frame: &'static str, waited_ns: u64 },
}

impl core::fmt::Display for MesError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MesError::Timeout {
                frame,
                seq,
                fence,
                waited_ns,
            } => write!(
                f,
                "MES did not answer {frame} within {waited_ns} ns (ring fence {fence}, waiting for {seq})"
            ),
            MesError::Failed { frame, status } => {
                write!(f, "MES refused {frame}: {status}")
            }
            MesError::NotInitialised { frame } => {
                write!(f, "{frame} sent before SET_HW_RSRC succeeded")
            }
            MesError::UnknownProcess { key } => write!(f, "no process registered as {key}"),
            MesError::TooManyProcesses => write!(f, "all 16 process slots are in use"),
            MesError::DeviceGone { frame, waited_ns } => write!(
                f,
                "the device is gone (its registers read all ones) after {waited_ns} ns waiting for MES to answer {frame}"
            ),
        }
    }
}

/// The KIQ did not reach the fence after `packet` within the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KiqTimeout {
    pub packet: &'static str,
    pub seq: u32,
    pub fence: u32,
    pub waited_ns: u64,
    /// The wait ended because the device stopped answering (a register
    /// read all ones), not at its bound.
    pub device_gone: bool,
}

impl core::fmt::Display for KiqTimeout {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.device_gone {
            return write!(
                f,
                "the device is gone (its registers read all ones) after {} ns waiting for the KIQ to complete {}",
                self.waited_ns, self.packet
            );
        }
        write!(
            f,
            "KIQ did not complete {} within {} ns (fence {}, waiting for {})",
            self.packet, self.waited_ns, self.fence, self.seq
        )
    }
}

/// Why a doorbell could not be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoorbellAllocError {
    /// Outside the range the MEC listens on (`lower..=upper`).
    OutOfRange { index: u32, lower: u32, upper: u32 },
    /// Another queue has it.
    InUse { index: u32 },
    /// Every doorbell of the range is taken.
    Exhausted { lower: u32, upper: u32 },
}

impl core::fmt::Display for DoorbellAllocError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            DoorbellAllocError::OutOfRange {
                index,
                lower,
                upper,
            } => write!(
                f,
                "doorbell {index:#x} is outside the MEC doorbell range {lower:#x}..={upper:#x}"
            ),
            DoorbellAllocError::InUse { index } => {
                write!(f, "doorbell {index:#x} is already used by another queue")
            }
            DoorbellAllocError::Exhausted { lower, upper } => {
                write!(f, "no free doorbell in {lower:#x}..={upper:#x}")
            }
        }
    }
}

/// A second mapper over a ring that already has one: each MES or KIQ
/// ring has exactly one writer (the ring dwords are plain memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingInUse {
    /// The ring's address.
    pub ring: u64,
    /// Not another mapper: the process's table of claimed structures
    /// ([`crate::mem::claim::CLAIMS`]) is full.
    pub table_full: bool,
}

impl RingInUse {
    /// Why `claim` failed for the ring at `ring`.
    pub fn from_claim(ring: u64, e: crate::mem::claim::ClaimError) -> RingInUse {
        RingInUse {
            ring,
            table_full: e == crate::mem::claim::ClaimError::Full,
        }
    }
}

impl core::fmt::Display for RingInUse {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.table_full {
            return write!(
                f,
                "the ring at {:#x} cannot be claimed: {} rings and queues are claimed in this process already",
                self.ring,
                crate::mem::claim::CLAIMS
            );
        }
        write!(
            f,
            "the ring at {:#x} already has a live mapper (one writer per ring)",
            self.ring
        )
    }
}

/// Why a queue could not be mapped or unmapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    Mqd(MqdError),
    Doorbell(DoorbellAllocError),
    /// All HQD slots this mapper may use are taken.
    NoFreeSlot,
    /// The chosen HQD is already active.
    HqdBusy {
        pipe: u8,
        queue: u8,
    },
    /// A register could not be reached: its segment base is missing from
    /// the discovery bases.
    Register(BlockError),
    /// The HQD did not go inactive after `CP_HQD_DEQUEUE_REQUEST`.
    Dequeue(WaitError),
    /// The mapping is not one this mapper made (or already unmapped).
    NotMapped {
        doorbell: u32,
    },
    /// MES refused or did not answer.
    Mes(MesError),
    /// The KIQ did not complete a packet.
    Kiq(KiqTimeout),
    /// MAP_QUEUES before SET_RESOURCES: the KIQ takes queues only after
    /// it was given its resources (`amdgpu_gfx_enable_kcq()`).
    KiqNoResources,
    /// The ring already has a mapper.
    RingInUse(RingInUse),
    /// This mapper does not map SDMA queues (only MES does here).
    SdmaUnsupported {
        mapper: &'static str,
    },
    /// The generation has no implementation of a piece the mapper needs.
    Unsupported(crate::ip::Unsupported),
    /// GC 9.4.3: a step on XCC `xcc` (its HQD, its KIQ) failed.
    Xcc {
        xcc: usize,
        failure: XccFailure,
    },
    /// GC 9.4.3: the HWS (on the HIQ) refused or did not fence a packet.
    Hws(crate::gfx::hws::HwsError),
    /// GC 9.4.3: an SDMA 4.4.2 queue could not be mapped through the HWS.
    SdmaV442(crate::sdma::map_v4_4_2::SdmaV442Error),
    /// An SDMA queue slot the part does not have (`engines` engines, or
    /// a queue past `num_sdma_queues_per_engine`).
    SdmaSlot {
        engine: u8,
        queue: u32,
        engines: u8,
    },
    /// KFD's v9 SDMA MQD (`update_mqd_sdma()`) refused the queue.
    SdmaMqdV9(crate::sdma::mqd_v9::SdmaMqdV9Error),
}

/// What failed on one XCC of a GC 9.4.3 part ([`MapError::Xcc`]): plain
/// data, so this module needs none of the GC 9.4.3 ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XccFailure {
    /// A register could not be reached.
    Register(BlockError),
    /// A bounded wait (a dequeue, the KIQ's slot going inactive) ended.
    Wait(WaitError),
    /// Something the step needs is not there or not valid.
    Refused(&'static str),
}

impl core::fmt::Display for XccFailure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            XccFailure::Register(e) => write!(f, "{e}"),
            XccFailure::Wait(e) => write!(f, "{e}"),
            XccFailure::Refused(what) => write!(f, "{what}"),
        }
    }
}

impl From<crate::ip::Unsupported> for MapError {
    fn from(e: crate::ip::Unsupported) -> Self {
        MapError::Unsupported(e)
    }
}

impl From<crate::ip::Unsupported> for MqdError {
    fn from(e: crate::ip::Unsupported) -> Self {
        MqdError::Unsupported(e)
    }
}

impl From<RingInUse> for MapError {
    fn from(e: RingInUse) -> Self {
        MapError::RingInUse(e)
    }
}

impl From<MqdError> for MapError {
    fn from(e: MqdError) -> Self {
        MapError::Mqd(e)
    }
}

impl From<DoorbellAllocError> for MapError {
    fn from(e: DoorbellAllocError) -> Self {
        MapError::Doorbell(e)
    }
}

impl From<BlockError> for MapError {
    fn from(e: BlockError) -> Self {
        MapError::Register(e)
    }
}

impl From<MesError> for MapError {
    fn from(e: MesError) -> Self {
        MapError::Mes(e)
    }
}

impl core::fmt::Display for MapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MapError::Mqd(e) => write!(f, "MQD: {e}"),
            MapError::Doorbell(e) => write!(f, "doorbell: {e}"),
            MapError::NoFreeSlot => write!(f, "no free HQD slot"),
            MapError::HqdBusy { pipe, queue } => {
                write!(f, "HQD pipe {pipe} queue {queue} is already active")
            }
            MapError::Register(e) => write!(f, "{e}"),
            MapError::Dequeue(e) => write!(f, "dequeue: {e}"),
            MapError::NotMapped { doorbell } => {
                write!(f, "no queue on doorbell {doorbell:#x} was mapped here")
            }
            MapError::Mes(e) => write!(f, "MES: {e}"),
            MapError::Kiq(e) => write!(f, "{e}"),
            MapError::SdmaUnsupported { mapper } => {
                write!(f, "the {mapper} mapper does not map SDMA queues")
            }
            MapError::KiqNoResources => write!(
                f,
                "the KIQ was given no SET_RESOURCES yet, so it cannot map a queue"
            ),
            MapError::RingInUse(e) => write!(f, "{e}"),
            MapError::Unsupported(e) => write!(f, "{e}"),
            MapError::Xcc { xcc, failure } => write!(f, "XCC {xcc}: {failure}"),
            MapError::Hws(e) => write!(f, "HWS: {e}"),
            MapError::SdmaV442(e) => write!(f, "{e}"),
            MapError::SdmaSlot {
                engine,
                queue,
                engines,
            } => write!(
                f,
                "SDMA engine {engine} queue {queue} does not exist: the part has {engines} SDMA engines of {} queues each",
                crate::gfx::hws::runlist::SDMA_QUEUES_PER_ENGINE_4_4_2
            ),
            MapError::SdmaMqdV9(e) => write!(f, "SDMA MQD: {e}"),
        }
    }
}
