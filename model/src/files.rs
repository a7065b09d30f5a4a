//! Where the model reads the firmware blobs it checks the driver's loads
//! against (the PSP model's expected images, the MEC/PFP/ME start
//! addresses, the SMU's version).
//!
//! The model reads files with its own small interface, not the runtime's
//! firmware source: what it expects must not change when the runtime's
//! loader does. It reads the same directory the driver loads from, so
//! the two see the same bytes.

use alloc::string::String;
use alloc::vec::Vec;

/// Why a blob could not be had: the file `name` and what went wrong
/// (not there, unreadable), in words that follow the name ("is not in
/// /lib/firmware/amdgpu").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub name: String,
    pub detail: String,
}

impl core::fmt::Display for FileError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "firmware {} {}", self.name, self.detail)
    }
}

/// Firmware blobs by file name (`psp_13_0_0_sos.bin`).
pub trait FirmwareFiles {
    /// The bytes of `name`, or why not.
    fn read(&self, name: &str) -> Result<Vec<u8>, FileError>;
}

impl<F: Fn(&str) -> Result<Vec<u8>, FileError>> FirmwareFiles for F {
    fn read(&self, name: &str) -> Result<Vec<u8>, FileError> {
        self(name)
    }
}

/// The blobs in one directory, read with `std::fs`.
#[cfg(feature = "std")]
#[derive(Debug, Clone)]
pub struct FilesDir(pub std::path::PathBuf);

#[cfg(feature = "std")]
impl FilesDir {
    /// Where Debian's firmware-amd-graphics puts the amdgpu blobs.
    pub const SYSTEM: &'static str = "/lib/firmware/amdgpu";

    pub fn system() -> Self {
        FilesDir(Self::SYSTEM.into())
    }
}

#[cfg(feature = "std")]
impl FirmwareFiles for FilesDir {
    fn read(&self, name: &str) -> Result<Vec<u8>, FileError> {
        std::fs::read(self.0.join(name)).map_err(|e| FileError {
            name: name.into(),
            detail: match e.kind() {
                std::io::ErrorKind::NotFound => alloc::format!(
                    "is not in {} (Debian's firmware-amd-graphics package provides the amdgpu blobs)",
                    self.0.display()
                ),
                _ => alloc::format!("in {} cannot be read: {e}", self.0.display()),
            },
        })
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_names_the_file_and_the_directory() {
        let dir = FilesDir("/nonexistent-barebell-dir".into());
        let e = dir.read("psp_13_0_0_sos.bin").unwrap_err();
        assert_eq!(e.name, "psp_13_0_0_sos.bin");
        let text = alloc::format!("{e}");
        assert!(
            text.contains("psp_13_0_0_sos.bin is not in /nonexistent-barebell-dir"),
            "{text}"
        );
    }

    #[test]
    fn a_closure_is_a_source() {
        let one = |name: &str| -> Result<Vec<u8>, FileError> {
            if name == "a.bin" {
                Ok(alloc::vec![1, 2, 3])
            } else {
                Err(FileError {
                    name: name.into(),
                    detail: "is not in the set".into(),
                })
            }
        };
        let files: &dyn FirmwareFiles = &one;
        assert_eq!(files.read("a.bin").unwrap(), [1, 2, 3]);
        let e = files.read("b.bin").unwrap_err();
        assert_eq!(alloc::format!("{e}"), "firmware b.bin is not in the set");
    }
}
