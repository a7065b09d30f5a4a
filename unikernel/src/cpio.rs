//! The "newc" cpio reader (the initramfs format: `070701` magic, a
//! 110-byte header of 8-digit hex fields, the name, then the data, each
//! padded to 4 bytes; Linux's `init/initramfs.c` reads the same layout).
//! Pure and `alloc`-only, so `unikernel/fuzz` includes this file by path
//! and fuzzes exactly what the unikernel runs.

use alloc::string::String;
use alloc::vec::Vec;

const NEWC_MAGIC: &[u8] = b"070701";
const NEWC_HEADER: usize = 110;
const TRAILER: &str = "TRAILER!!!";

fn hex_field(h: &[u8], index: usize) -> Option<usize> {
    let at = 6 + 8 * index;
    let s = core::str::from_utf8(h.get(at..at + 8)?).ok()?;
    usize::from_str_radix(s, 16).ok()
}

fn align4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// Why an archive could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpioError {
    /// The entry starting at byte `at` (inside the archive) has no newc
    /// magic, a field that is not hex, a name that is not UTF-8, or a
    /// name or data that runs past the end.
    BadEntry { at: usize },
    /// The archive's `len` bytes end without the `TRAILER!!!` entry.
    NoTrailer { len: usize },
}

impl core::fmt::Display for CpioError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CpioError::BadEntry { at } => {
                write!(f, "not a newc cpio entry at byte {at}")
            }
            CpioError::NoTrailer { len } => {
                write!(f, "the archive's {len} bytes end without a {TRAILER} entry")
            }
        }
    }
}

/// Splits a newc archive into (file name, bytes) in archive order.
pub fn entries(a: &[u8]) -> Result<Vec<(String, &[u8])>, CpioError> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        // The last entry's padding may run past the end of a cut archive.
        if at >= a.len() {
            return Err(CpioError::NoTrailer { len: a.len() });
        }
        let bad = CpioError::BadEntry { at };
        let h = a.get(at..at + NEWC_HEADER).ok_or(bad)?;
        if !h.starts_with(NEWC_MAGIC) {
            return Err(bad);
        }
        // Fields after the magic: 6 is c_filesize, 11 is c_namesize.
        let size = hex_field(h, 6).ok_or(bad)?;
        let name_len = hex_field(h, 11).ok_or(bad)?;
        let name_at = at + NEWC_HEADER;
        let name = a
            .get(name_at..name_at + name_len.saturating_sub(1))
            .and_then(|n| core::str::from_utf8(n).ok())
            .ok_or(bad)?;
        let data_at = align4(name_at + name_len);
        let data = a.get(data_at..data_at + size).ok_or(bad)?;
        if name == TRAILER {
            return Ok(out);
        }
        out.push((String::from(name), data));
        at = align4(data_at + size);
    }
}
