//! Why a model could not be built.

use crate::files::FileError;

/// Why a [`crate::VirtualGpu`] (or its host memory) could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// A firmware file the model checks the loads against is missing or
    /// unreadable.
    Firmware(FileError),
    /// A blob the model checks the loads against lacks `what` (a
    /// section, a header field).
    BlobLacks {
        name: alloc::string::String,
        what: &'static str,
    },
    /// The part's discovery table lacks an IP block the model needs.
    MissingIp { ip: &'static str },
    /// barebell has no table (registers, hub, PSP plan) for this IP
    /// version of the part.
    Unsupported {
        what: &'static str,
        version: (u8, u8, u8),
    },
    /// The model has no implementation of a block for the part's
    /// generation yet (GC 9.4.3: everything past the discovery table).
    NotImplemented(barebell::ip::Unsupported),
    /// A register the model places has no base in the part's table.
    Register { name: &'static str },
    /// The PSP model's own container reader ([`crate::ucode`]) refused
    /// a blob it checks the loads against.
    Blob {
        name: alloc::string::String,
        error: crate::ucode::Error,
    },
    /// The heap had no `bytes` of VRAM backing.
    VramBacking { bytes: usize },
    /// No free slot for the DMA region at or above `above` in the host's
    /// address space; `errno` is what the last `mmap` said.
    DmaRegion {
        bytes: usize,
        above: usize,
        errno: i32,
    },
}

impl From<FileError> for ModelError {
    fn from(e: FileError) -> Self {
        ModelError::Firmware(e)
    }
}

impl core::fmt::Display for ModelError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ModelError::Firmware(e) => write!(f, "{e}"),
            ModelError::BlobLacks { name, what } => {
                write!(f, "firmware {name}, as the model reads it, lacks {what}")
            }
            ModelError::MissingIp { ip } => {
                write!(f, "the model's discovery table has no {ip}")
            }
            ModelError::Unsupported { what, version } => {
                write!(f, "no {what} for {}.{}.{}", version.0, version.1, version.2)
            }
            ModelError::NotImplemented(e) => write!(f, "{e}"),
            ModelError::Register { name } => {
                write!(f, "{name} has no base in the model's discovery table")
            }
            ModelError::Blob { name, error } => {
                write!(f, "{name}, as the PSP model reads it: {error}")
            }
            ModelError::VramBacking { bytes } => {
                write!(f, "VRAM backing: {bytes:#x} bytes not available")
            }
            ModelError::DmaRegion {
                bytes,
                above,
                errno,
            } => write!(
                f,
                "DMA region: no free {bytes:#x}-byte slot above {above:#x} (last mmap: errno {errno})"
            ),
        }
    }
}
