//! The bring-up's one error type: which step failed, and why; with the
//! errors of its steps (the start step's [`StartError`] among them) and the
//! [`TeardownReport`] an error carries (its [`Stage`]s and [`Outcome`]s;
//! [`crate::teardown`] runs the stages).

use crate::firmware::FirmwareError;
use crate::sink::Step;
use alloc::string::String;
use alloc::vec::Vec;
use barebell::aql::queue::BindError;
use barebell::aql::{DoorbellError, PacketError, SubmitError, signal::SignalTimeout};
use barebell::bus::{BlockError, IndirectError, WaitError};
use barebell::discovery::{Error as TableError, ReadError};
use barebell::gfx::error::{KiqTimeout, MapError, MesError};
use barebell::gfx::mes::start::MesStartError;
use barebell::gmc::hub::HubError;
use barebell::gmc::hub::invalidate::InvalidateError;
use barebell::mem::MemError;
use barebell::nbio::NbioError;
use barebell::psp::PspError;
use barebell::smu::SmuError;
use core::fmt;

/// Why a bring-up stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BringupError {
    pub step: Step,
    pub kind: ErrorKind,
    /// What the teardown after the failure did ([`crate::run`] tears the
    /// device down before it returns an error); `None` for errors of
    /// later work on a [`crate::Gpu`] (unmapping, a launch).
    pub teardown: Option<alloc::boxed::Box<TeardownReport>>,
}

impl BringupError {
    /// This error, with the teardown that followed it.
    pub fn with_teardown(mut self, report: TeardownReport) -> Self {
        self.teardown = Some(alloc::boxed::Box::new(report));
        self
    }
}

/// What went wrong inside a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// A bounded wait on a register ended without its condition.
    Wait(WaitError),
    /// A register the step needs has no base in the discovery table.
    Register(BlockError),
    /// The discovery table could not be read or parsed.
    Discovery(TableError),
    /// The discovery table could not be read from VRAM.
    DiscoveryRead(ReadError),
    /// The discovery table lacks an IP block the step needs.
    MissingIp {
        ip: &'static str,
    },
    /// A block the step needs has no implementation for the part's
    /// generation yet (GC 9.4.3: every step after discovery today).
    NotImplemented(barebell::ip::Unsupported),
    /// barebell has no support for this IP version.
    Unsupported {
        what: &'static str,
        version: (u8, u8, u8),
    },
    Nbio(NbioError),
    /// The RLC/MEC start on every XCC, where the GC block reports it as
    /// one error (GC 9.4.3's `gfx_v9_4_3_hw_init()`; GC 11/12's rlc step
    /// reports its register waits as [`ErrorKind::Wait`]).
    CpStart(barebell::gfx::start_v9_4_3::StartError),
    /// The per-XCC KIQs or the queue spread over XCCs
    /// (`crate::gfx::gfx_v9_4_3::xcc`).
    Xcc(XccError),
    Indirect(IndirectError),
    /// An allocation in VRAM, GTT or the ring area did not fit.
    Memory(MemError),
    /// The memory layout cannot be built on this platform.
    Layout(LayoutError),
    /// The platform was brought up once already: its memory belongs to
    /// that run.
    AlreadyClaimed {
        platform: String,
    },
    /// A page-table mapping was refused.
    PageTable {
        table: &'static str,
        va: u64,
        why: barebell::gmc::pagetable::MapError,
    },
    Hub(HubError),
    /// The XGMI registers (`MC_VM_XGMI_LFB_CNTL/SIZE`) could not be read
    /// or name a hive Linux refuses.
    Xgmi(barebell::gmc::hub::gfxhub_v1_2::XgmiError),
    Invalidate(InvalidateError),
    /// A firmware file is missing, unreadable or malformed.
    Firmware(FirmwareError),
    Psp(PspError),
    MesStart(MesStartError),
    Mes(MesError),
    Kiq(KiqTimeout),
    /// A queue could not be mapped or unmapped.
    Map(MapError),
    /// The first packet could not be submitted or did not complete.
    Queue(QueueError),
    /// The SDMA queue's first fence did not come.
    Sdma(barebell::sdma::SdmaError),
    /// PMFW did not take `EnableAllSmuFeatures`.
    SmuFeatures(SmuError),
    /// PMFW did not answer the unload notice (`PrepareForDriverUnload`).
    SmuUnload(SmuError),
    /// The IH ring could not be set up, read or disabled.
    Ih(barebell::ih::IhError),
    /// The device reads all-ones: it is gone or its decode is off.
    DeviceGone {
        register: &'static str,
    },
    /// The device's start-of-day state could not be made known
    /// ([`crate::start`]).
    Start(StartError),
    /// The caller asked the bring-up to stop (a signal in the CLI,
    /// [`crate::Sink::cancelled`]).
    Interrupted,
}

impl fmt::Display for BringupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {}: {}", self.step, self.kind)?;
        if let Some(t) = &self.teardown {
            write!(f, "\n{t}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Wait(e) => write!(f, "{e}"),
            ErrorKind::Register(e) => write!(f, "{e}"),
            ErrorKind::Discovery(e) => write!(f, "discovery table: {e}"),
            ErrorKind::DiscoveryRead(e) => write!(f, "reading the discovery table: {e}"),
            ErrorKind::MissingIp { ip } => write!(f, "no {ip} in the discovery table"),
            ErrorKind::Unsupported { what, version } => write!(
                f,
                "{what} {}.{}.{} is not supported",
                version.0, version.1, version.2
            ),
            ErrorKind::NotImplemented(e) => write!(f, "{e}"),
            ErrorKind::Nbio(e) => write!(f, "{e}"),
            ErrorKind::CpStart(e) => write!(f, "RLC/MEC start: {e}"),
            ErrorKind::Xcc(e) => write!(f, "{e}"),
            ErrorKind::Indirect(e) => write!(f, "indirect register access: {e}"),
            ErrorKind::Memory(e) => write!(f, "memory: {e}"),
            ErrorKind::Layout(e) => write!(f, "memory layout: {e}"),
            ErrorKind::AlreadyClaimed { platform } => write!(
                f,
                "{platform} was already brought up once; its memory belongs to that run"
            ),
            ErrorKind::PageTable { table, va, why } => {
                write!(f, "{table} page tables refused {va:#x}: {why}")
            }
            ErrorKind::Hub(e) => write!(f, "{e}"),
            ErrorKind::Xgmi(e) => write!(f, "XGMI: {e}"),
            ErrorKind::Invalidate(e) => write!(f, "TLB invalidation: {e}"),
            ErrorKind::Firmware(e) => write!(f, "{e}"),
            ErrorKind::Psp(e) => write!(f, "{e}"),
            ErrorKind::MesStart(e) => write!(f, "{e}"),
            ErrorKind::Mes(e) => write!(f, "MES: {e}"),
            ErrorKind::SmuFeatures(e) => write!(f, "enabling the SMU's features: {e}"),
            ErrorKind::SmuUnload(e) => write!(f, "telling the SMU the driver lets go: {e}"),
            ErrorKind::Kiq(e) => write!(f, "{e}"),
            ErrorKind::Map(e) => write!(f, "{e}"),
            ErrorKind::Queue(e) => write!(f, "{e}"),
            ErrorKind::Sdma(e) => write!(f, "{e}"),
            ErrorKind::Ih(e) => write!(f, "{e}"),
            ErrorKind::DeviceGone { register } => {
                write!(f, "{register} reads all-ones: the device is gone")
            }
            ErrorKind::Start(e) => write!(f, "{e}"),
            ErrorKind::Interrupted => {
                f.write_str("interrupted (a signal asked the bring-up to stop)")
            }
        }
    }
}

/// Why the start step could not bring the device to a known state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartError {
    /// sOS runs but PMFW answers nothing: no mode-1 reset through the
    /// SMU is possible, and firmware cannot be loaded over a live sOS.
    SmuDead,
    /// The SMU mailbox failed during the reset.
    Smu(SmuError),
    /// sOS still signs life after the reset: it did not happen.
    ResetTookNoEffect { c2pmsg_81: u32 },
    /// No mode-1 reset is known for this MP1.
    NoReset { mp1: (u8, u8, u8) },
    /// The platform cannot save the function's PCI state, which a mode-1
    /// reset loses: refused before the reset is sent.
    NoPciState,
    /// The saved PCI state could not be put back after the reset.
    PciRestoreFailed,
    /// The GPU is node `node` of an XGMI hive of `nodes`: a mode-1 reset
    /// of one member is refused (Linux resets a hive as a whole; tinygrad
    /// refuses a hive member, having seen a lone reset kill the fabric).
    HiveMember { node: u8, nodes: u8 },
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::SmuDead => f.write_str(
                "the device was left running (sOS alive in C2PMSG_81) but the SMU answers no message: it cannot be mode-1 reset through the SMU; power-cycle the machine (or reset the slot) and run again",
            ),
            StartError::Smu(e) => write!(f, "mode-1 reset: {e}"),
            StartError::ResetTookNoEffect { c2pmsg_81 } => write!(
                f,
                "mode-1 reset sent, but sOS still signs life (C2PMSG_81 = {c2pmsg_81:#x}): the reset did not happen"
            ),
            StartError::NoReset { mp1 } => write!(
                f,
                "the device was left running, and barebell knows no mode-1 reset for MP1 {}.{}.{}",
                mp1.0, mp1.1, mp1.2
            ),
            StartError::NoPciState => f.write_str(
                "the device was left running and needs a mode-1 reset, which clears its PCI configuration (BARs, command register); this platform cannot save and restore it, so the reset was not sent",
            ),
            StartError::PciRestoreFailed => f.write_str(
                "mode-1 reset sent, but the saved PCI configuration could not be restored: the device decodes no BAR",
            ),
            StartError::HiveMember { node, nodes } => write!(
                f,
                "this GPU is node {node} of an XGMI hive of {nodes} GPUs and needs a reset, but resetting one GPU of a hive alone can take down the XGMI links of all of them, so barebell does not: reset the whole hive (every GPU in it together, or power-cycle the machine) and run again"
            ),
        }
    }
}

/// Why the memory layout cannot be built on this platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutError {
    /// VRAM `offset..end` lies beyond BAR0's `bar0` bytes; CPU access to
    /// VRAM outside BAR0 is not built.
    BeyondBar0 { offset: u64, end: u64, bar0: usize },
    /// BAR0 + `offset` is not aligned for page tables.
    Misaligned { offset: u64 },
    /// A VRAM range of `size` bytes does not fit the host's address space.
    TooLarge { size: u64 },
    /// `vram_bytes` of VRAM at FB base `fb_base` (16 MiB units) runs into
    /// the MC hole.
    McHole { vram_bytes: u64, fb_base: u32 },
    /// The DMA region must be more than one `chunk` (GTT, then the ring
    /// area); this one has `len` bytes.
    DmaTooSmall { len: usize, chunk: usize },
    /// The ring area `start..=end` (host address = GPU VA) overlaps
    /// `what` at `a..=b`, so it cannot sit at VA = host address.
    RingAreaClash {
        start: u64,
        end: u64,
        what: &'static str,
        a: u64,
        b: u64,
    },
    /// VMID0 would span 2^48 bytes or more (the GART and the ring area
    /// too far apart for four levels of tables).
    Vmid0TooWide { start: u64, end: u64 },
    /// The user memory asked for (`Options::user_memory`) is not whole
    /// pages, or does not leave the ring area `ring_min` bytes of the DMA
    /// region's `dma` (past its GTT chunk).
    UserMemory {
        asked: usize,
        dma: usize,
        ring_min: usize,
    },
    /// A GTT chunk came back at a null host address.
    NullGtt,
    /// The PSP buffers were taken already (a step ran twice).
    PspBuffersTaken,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LayoutError::BeyondBar0 { offset, end, bar0 } => write!(
                f,
                "VRAM {offset:#x}..{end:#x} lies beyond BAR0 ({bar0:#x} bytes); CPU access to VRAM outside BAR0 is not built"
            ),
            LayoutError::Misaligned { offset } => write!(f, "BAR0 + {offset:#x} is misaligned"),
            LayoutError::TooLarge { size } => {
                write!(
                    f,
                    "a VRAM range of {size:#x} bytes is too large for this host"
                )
            }
            LayoutError::McHole {
                vram_bytes,
                fb_base,
            } => write!(
                f,
                "{} MiB of VRAM at FB base {fb_base:#x} runs into the MC hole",
                vram_bytes >> 20
            ),
            LayoutError::DmaTooSmall { len, chunk } => write!(
                f,
                "a DMA region of more than one {chunk:#x}-byte chunk (GTT, then the ring area) is needed; this one has {len:#x} bytes"
            ),
            LayoutError::RingAreaClash {
                start,
                end,
                what,
                a,
                b,
            } => write!(
                f,
                "the ring area at host {start:#x}..={end:#x} overlaps {what} at {a:#x}..={b:#x}, so it cannot sit at VA = host address"
            ),
            LayoutError::Vmid0TooWide { start, end } => write!(
                f,
                "VMID0 would cover {start:#x}..={end:#x}, more than the 2^48 bytes four levels of page tables reach (the ring area is too far from the GART)"
            ),
            LayoutError::UserMemory {
                asked,
                dma,
                ring_min,
            } => write!(
                f,
                "user memory of {asked:#x} bytes: it must be whole 4 KiB pages and leave the ring area at least {ring_min:#x} bytes of the {dma:#x}-byte DMA region past its GTT chunk"
            ),
            LayoutError::NullGtt => write!(f, "a null GTT chunk"),
            LayoutError::PspBuffersTaken => write!(f, "the PSP buffers were already used"),
        }
    }
}

/// Why the first packet could not go through the user queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueError {
    /// The platform's doorbell aperture has no doorbell `index`.
    Doorbell { index: u32, error: DoorbellError },
    /// The barrier packet could not be built.
    Barrier(PacketError),
    /// The packet could not be written to the ring.
    Submit(SubmitError),
    /// The completion signal did not reach its value in time.
    Signal(SignalTimeout),
    /// The MES mapping was asked for without the MES rings up.
    NoScheduler,
    /// The queue memory already belongs to a live queue.
    Bind(BindError),
    /// The queue's read index stood still with packets pending for the
    /// watchdog's bound ([`crate::recover::WATCHDOG_NS`]).
    Hung(barebell::aql::watchdog::Stall),
    /// A register read all ones during the wait: the device is gone.
    DeviceGone { waited_ns: u64 },
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueError::Doorbell { index, error } => {
                write!(f, "{}: {error}", barebell::aql::doorbell::Slot::new(*index))
            }
            QueueError::Barrier(e) => write!(f, "barrier packet: {e}"),
            QueueError::Submit(e) => write!(f, "submit: {e}"),
            QueueError::Bind(e) => write!(f, "queue memory: {e}"),
            QueueError::Signal(e) => write!(f, "completion signal: {e}"),
            QueueError::Hung(s) => write!(f, "queue hung: {s}"),
            QueueError::DeviceGone { waited_ns } => write!(
                f,
                "the device is gone after {waited_ns} ns of the wait (a register reads all ones)"
            ),
            QueueError::NoScheduler => {
                write!(
                    f,
                    "the MES mapping needs the MES scheduler ring, which is not up"
                )
            }
        }
    }
}

/// `step.fail(kind)`: the error of `kind` in `step`.
pub(crate) trait At {
    fn at(self, step: Step) -> BringupError;
}

macro_rules! at_from {
    ($($t:ty => $v:ident),* $(,)?) => {
        $(
            impl At for $t {
                fn at(self, step: Step) -> BringupError {
                    BringupError { step, kind: ErrorKind::$v(self), teardown: None }
                }
            }
        )*
    };
}

at_from!(
    WaitError => Wait,
    BlockError => Register,
    TableError => Discovery,
    ReadError => DiscoveryRead,
    NbioError => Nbio,
    IndirectError => Indirect,
    MemError => Memory,
    HubError => Hub,
    InvalidateError => Invalidate,
    PspError => Psp,
    MesStartError => MesStart,
    MesError => Mes,
    KiqTimeout => Kiq,
    MapError => Map,
    FirmwareError => Firmware,
    LayoutError => Layout,
    QueueError => Queue,
    barebell::ih::IhError => Ih,
    barebell::ip::Unsupported => NotImplemented,
    barebell::gfx::start_v9_4_3::StartError => CpStart,
);

impl At for ErrorKind {
    fn at(self, step: Step) -> BringupError {
        BringupError {
            step,
            kind: self,
            teardown: None,
        }
    }
}

/// `result.at(step)?`.
pub(crate) trait ResultAt<T> {
    fn at(self, step: Step) -> Result<T, BringupError>;
}

impl<T, E: At> ResultAt<T> for Result<T, E> {
    fn at(self, step: Step) -> Result<T, BringupError> {
        self.map_err(|e| e.at(step))
    }
}

/// Why a per-XCC KIQ or the queue over the XCCs failed (the GC 9.4.3
/// block's rings and queue steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XccError {
    /// Bringing up XCC `xcc`'s KIQ failed.
    Kiq {
        xcc: usize,
        error: barebell::gfx::queue_v9::KiqV9Error,
    },
    /// XCC `xcc`'s KIQ did not complete `error.packet` within its bound:
    /// it refused the packet (the KIQ reports nothing else) or hung.
    KiqPacket {
        xcc: usize,
        error: KiqTimeout,
    },
    /// The KIQ ring already has a writer.
    RingInUse(barebell::gfx::error::RingInUse),
    /// No KIQ was brought up for XCC `xcc`.
    NoKiq {
        xcc: usize,
    },
    Mqd(barebell::gfx::mqd_v9::MqdV9Error),
    Hqd(barebell::gfx::hqd_v9::HqdV9Error),
    Hws(barebell::gfx::hws::HwsError),
    Memory(MemError),
    Doorbell {
        index: u32,
        error: DoorbellError,
    },
    /// A mapping call for a queue already mapped, or an unmap of one
    /// that is not.
    State {
        what: &'static str,
    },
    /// Halting or releasing the MEC around the KIQ failed.
    Start(barebell::gfx::start_v9_4_3::StartError),
}

impl fmt::Display for XccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XccError::Kiq { error, .. } => write!(f, "{error}"),
            XccError::KiqPacket { xcc, error } => write!(f, "XCC {xcc} KIQ: {error}"),
            XccError::RingInUse(e) => write!(f, "{e}"),
            XccError::NoKiq { xcc } => write!(f, "no KIQ was brought up on XCC {xcc}"),
            XccError::Start(e) => write!(f, "{e}"),
            XccError::Mqd(e) => write!(f, "v9 MQD: {e}"),
            XccError::Hqd(e) => write!(f, "HQD: {e}"),
            XccError::Hws(e) => write!(f, "HWS: {e}"),
            XccError::Memory(e) => write!(f, "ring area: {e}"),
            XccError::Doorbell { index, error } => {
                write!(f, "{}: {error}", barebell::aql::doorbell::Slot::new(*index))
            }
            XccError::State { what } => write!(f, "{what}"),
        }
    }
}

impl From<MemError> for XccError {
    fn from(e: MemError) -> Self {
        XccError::Memory(e)
    }
}
impl From<barebell::gfx::hws::HwsError> for XccError {
    fn from(e: barebell::gfx::hws::HwsError) -> Self {
        XccError::Hws(e)
    }
}
impl From<barebell::gfx::mqd_v9::MqdV9Error> for XccError {
    fn from(e: barebell::gfx::mqd_v9::MqdV9Error) -> Self {
        XccError::Mqd(e)
    }
}
impl From<barebell::gfx::hqd_v9::HqdV9Error> for XccError {
    fn from(e: barebell::gfx::hqd_v9::HqdV9Error) -> Self {
        XccError::Hqd(e)
    }
}

/// One teardown stage, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    UnmapQueue,
    HaltSdma,
    HaltMes,
    HaltMec,
    Gfxhub,
    SmuUnload,
    PspRing,
    IhRing,
    Mmhub,
    Doorbells,
    BusMaster,
    ReleaseMemory,
    Signature,
}

impl Stage {
    pub const ALL: [Stage; 13] = [
        Stage::UnmapQueue,
        Stage::HaltSdma,
        Stage::HaltMes,
        Stage::HaltMec,
        Stage::Gfxhub,
        Stage::SmuUnload,
        Stage::PspRing,
        Stage::IhRing,
        Stage::Mmhub,
        Stage::Doorbells,
        Stage::BusMaster,
        Stage::ReleaseMemory,
        Stage::Signature,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::UnmapQueue => "unmap queue",
            Stage::HaltSdma => "halt SDMA",
            Stage::HaltMes => "halt MES",
            Stage::HaltMec => "halt MEC",
            Stage::Gfxhub => "disable GFXHUB",
            Stage::SmuUnload => "tell the SMU of the unload",
            Stage::PspRing => "destroy PSP ring",
            Stage::IhRing => "disable IH ring",
            Stage::Mmhub => "disable GART (MMHUB)",
            Stage::Doorbells => "close doorbell aperture",
            Stage::BusMaster => "clear bus mastering",
            Stage::ReleaseMemory => "release memory",
            Stage::Signature => "finalize signature",
        }
    }
}

/// What one stage did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the detail says what was written or sent.
    Done(String),
    /// Nothing to undo: the bring-up never set this up.
    NotNeeded(&'static str),
    /// The platform cannot do it (e.g. no config-space access).
    Unavailable(&'static str),
    /// Tried and failed.
    Failed(ErrorKind),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Done(d) => write!(f, "done: {d}"),
            Outcome::NotNeeded(why) => write!(f, "not needed: {why}"),
            Outcome::Unavailable(why) => write!(f, "NOT DONE: {why}"),
            Outcome::Failed(e) => write!(f, "FAILED: {e}"),
        }
    }
}

/// What a teardown did, stage by stage.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TeardownReport {
    pub stages: Vec<(Stage, Outcome)>,
}

impl TeardownReport {
    /// Whether every stage was done or not needed: nothing the bring-up
    /// set up can still reach memory.
    pub fn complete(&self) -> bool {
        self.stages
            .iter()
            .all(|(_, o)| matches!(o, Outcome::Done(_) | Outcome::NotNeeded(_)))
    }

    /// The outcome of `stage`.
    pub fn outcome(&self, stage: Stage) -> Option<&Outcome> {
        self.stages
            .iter()
            .find(|(s, _)| *s == stage)
            .map(|(_, o)| o)
    }
}

impl fmt::Display for TeardownReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.complete() {
            "complete"
        } else {
            "INCOMPLETE"
        };
        write!(f, "teardown {verdict}:")?;
        for (s, o) in &self.stages {
            write!(f, "\n  {}: {o}", s.name())?;
        }
        Ok(())
    }
}

/// A teardown stage's outcome from its result: done with what it did, or
/// failed with why.
pub(crate) fn outcome<E: At>(r: Result<String, E>) -> Outcome {
    match r {
        Ok(d) => Outcome::Done(d),
        Err(e) => Outcome::Failed(e.at(Step::Teardown).kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[track_caller]
    fn says(e: impl fmt::Display, parts: &[&str]) {
        let s = e.to_string();
        for p in parts {
            assert!(s.contains(p), "{s:?} does not say {p:?}");
        }
    }

    /// What the layout refuses is told with its numbers and its rule.
    #[test]
    fn layout_refusals_name_the_numbers_and_the_rule() {
        says(
            LayoutError::BeyondBar0 {
                offset: 0x1000,
                end: 0x2000,
                bar0: 0x800,
            },
            &["0x1000..0x2000", "0x800 bytes", "beyond BAR0"],
        );
        says(
            LayoutError::McHole {
                vram_bytes: 2 << 20,
                fb_base: 0x7fff_0000,
            },
            &["2 MiB", "0x7fff0000", "MC hole"],
        );
        says(
            LayoutError::UserMemory {
                asked: 0x1001,
                dma: 0x10000,
                ring_min: 0x8000,
            },
            &["0x1001 bytes", "4 KiB pages", "0x8000", "0x10000-byte"],
        );
        says(
            LayoutError::DmaTooSmall {
                len: 0x10,
                chunk: 0x20,
            },
            &["0x20-byte chunk", "0x10 bytes"],
        );
        says(LayoutError::PspBuffersTaken, &["PSP buffers"]);
    }

    /// An XCC error keeps the inner error's words and says which XCC or
    /// which part failed; the conversions keep the inner error.
    #[test]
    fn xcc_errors_say_where_and_keep_the_cause() {
        says(XccError::NoKiq { xcc: 5 }, &["no KIQ", "XCC 5"]);
        says(
            XccError::State {
                what: "queue already mapped",
            },
            &["queue already mapped"],
        );
        let mem = MemError::Empty;
        assert_eq!(XccError::from(mem), XccError::Memory(mem));
        says(XccError::from(mem), &["ring area: ", &mem.to_string()]);
        let mqd = barebell::gfx::mqd_v9::MqdV9Error::RingSize { bytes: 100 };
        assert_eq!(XccError::from(mqd), XccError::Mqd(mqd));
        says(XccError::from(mqd), &["v9 MQD: ", &mqd.to_string()]);
        let hqd = barebell::gfx::hqd_v9::HqdV9Error::MissingXcc { xcc: 7 };
        assert_eq!(XccError::from(hqd), XccError::Hqd(hqd));
        says(XccError::from(hqd), &["HQD: ", "XCC 7"]);
    }

    /// A bring-up error begins with the step it stopped in, named as
    /// `--until` takes it (`docs/hardware.md`: `--until rlc`), so that a
    /// user can re-run up to that step.
    #[test]
    fn a_bringup_error_names_its_step_as_until_spells_it() {
        for (name, step) in [("gmc", Step::Gmc), ("psp", Step::Psp), ("rlc", Step::Rlc)] {
            let text = ErrorKind::Interrupted.at(step).to_string();
            assert!(
                text.starts_with(&alloc::format!("step {name}: ")),
                "{text:?}"
            );
        }
    }
}
