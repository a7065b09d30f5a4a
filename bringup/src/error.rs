//! The bring-up's one error type: which step failed, and why.

use crate::sink::Step;
use alloc::string::String;
use barebell::bus::{BlockError, IndirectError, WaitError};
use barebell::discovery::{Error as TableError, ReadError};
use barebell::gfx::error::{KiqTimeout, MapError, MesError};
use barebell::gfx::mes::start::MesStartError;
use barebell::gmc::hub::HubError;
use barebell::gmc::hub::invalidate::InvalidateError;
use barebell::mem::MemError;
use barebell::nbio::NbioError;
use barebell::psp::PspError;
use core::fmt;

/// Why a bring-up stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BringupError {
    pub step: Step,
    pub kind: ErrorKind,
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
    /// barebell has no support for this IP version.
    Unsupported {
        what: &'static str,
        version: (u8, u8, u8),
    },
    Nbio(NbioError),
    Indirect(IndirectError),
    /// An allocation in VRAM, GTT or the ring area did not fit.
    Memory(MemError),
    /// The memory layout cannot be built on this platform.
    Layout(String),
    /// A page-table mapping was refused.
    PageTable {
        table: &'static str,
        va: u64,
        why: barebell::gmc::pagetable::MapError,
    },
    Hub(HubError),
    Invalidate(InvalidateError),
    /// A firmware file is missing or malformed.
    Firmware {
        name: String,
        why: String,
    },
    Psp(PspError),
    MesStart(MesStartError),
    Mes(MesError),
    Kiq(KiqTimeout),
    /// A queue could not be mapped or unmapped.
    Map(MapError),
    /// The first packet could not be submitted or did not complete.
    Queue(String),
    /// The device reads all-ones: it is gone or its decode is off.
    DeviceGone {
        register: &'static str,
    },
}

impl fmt::Display for BringupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {}: {}", self.step, self.kind)
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
                "{what} {}.{}.{} is not supported (gfx11 and gfx12 parts only)",
                version.0, version.1, version.2
            ),
            ErrorKind::Nbio(e) => write!(f, "{e}"),
            ErrorKind::Indirect(e) => write!(f, "indirect register access: {e}"),
            ErrorKind::Memory(e) => write!(f, "memory: {e}"),
            ErrorKind::Layout(s) => write!(f, "memory layout: {s}"),
            ErrorKind::PageTable { table, va, why } => {
                write!(f, "{table} page tables refused {va:#x}: {why}")
            }
            ErrorKind::Hub(e) => write!(f, "{e}"),
            ErrorKind::Invalidate(e) => write!(f, "TLB invalidation: {e}"),
            ErrorKind::Firmware { name, why } => write!(f, "firmware {name}: {why}"),
            ErrorKind::Psp(e) => write!(f, "{e}"),
            ErrorKind::MesStart(e) => write!(f, "{e}"),
            ErrorKind::Mes(e) => write!(f, "MES: {e}"),
            ErrorKind::Kiq(e) => write!(f, "{e}"),
            ErrorKind::Map(e) => write!(f, "{e}"),
            ErrorKind::Queue(s) => write!(f, "{s}"),
            ErrorKind::DeviceGone { register } => {
                write!(f, "{register} reads all-ones: the device is gone")
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
                    BringupError { step, kind: ErrorKind::$v(self) }
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
);

impl At for ErrorKind {
    fn at(self, step: Step) -> BringupError {
        BringupError { step, kind: self }
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
