//! Where firmware bytes come from, and why they could not be had
//! (feature `alloc`): the one interface the bring-up loads blobs through
//! and the device model reads its own copies through, kept here so that
//! neither depends on the other.

use alloc::string::String;
use alloc::vec::Vec;

/// Where firmware blobs come from: a directory on the host
/// (`/lib/firmware/amdgpu`), the unikernel's initrd archive, a test's
/// table. A closure `Fn(&str) -> Result<Vec<u8>, FirmwareError>` is one.
pub trait FirmwareSource {
    /// The bytes of `name` (e.g. `psp_13_0_0_sos.bin`), or why not.
    fn load(&self, name: &str) -> Result<Vec<u8>, FirmwareError>;
}

impl<F: Fn(&str) -> Result<Vec<u8>, FirmwareError>> FirmwareSource for F {
    fn load(&self, name: &str) -> Result<Vec<u8>, FirmwareError> {
        self(name)
    }
}

/// Why a firmware file could not be had or used. Every variant names the
/// file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirmwareError {
    /// The source has no file of that name; `place` says where it looked
    /// (a directory, "the initrd").
    NotFound { name: String, place: String },
    /// The file is there but could not be read; `detail` is what the
    /// system said.
    Unreadable {
        name: String,
        place: String,
        detail: String,
    },
    /// The container does not parse as the kind its name says.
    Malformed { name: String, error: crate::Error },
    /// It parses, but lacks what the step needs (a section, a header
    /// kind).
    Lacks { name: String, what: &'static str },
}

impl FirmwareError {
    /// The file the error is about.
    pub fn name(&self) -> &str {
        match self {
            FirmwareError::NotFound { name, .. }
            | FirmwareError::Unreadable { name, .. }
            | FirmwareError::Malformed { name, .. }
            | FirmwareError::Lacks { name, .. } => name,
        }
    }
}

impl core::fmt::Display for FirmwareError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FirmwareError::NotFound { name, place } => write!(
                f,
                "firmware {name} is not in {place} (Debian's firmware-amd-graphics package provides the amdgpu blobs)"
            ),
            FirmwareError::Unreadable {
                name,
                place,
                detail,
            } => write!(f, "firmware {name} in {place} cannot be read: {detail}"),
            FirmwareError::Malformed { name, error } => write!(f, "firmware {name}: {error}"),
            FirmwareError::Lacks { name, what } => write!(f, "firmware {name} has no {what}"),
        }
    }
}
