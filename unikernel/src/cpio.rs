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

/// Splits a newc archive into (file name, bytes) in archive order; `Err`
/// names the offset where it stopped making sense.
pub fn entries(a: &[u8]) -> Result<Vec<(String, &[u8])>, usize> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let h = a.get(at..at + NEWC_HEADER).ok_or(at)?;
        if !h.starts_with(NEWC_MAGIC) {
            return Err(at);
        }
        // Fields after the magic: 6 is c_filesize, 11 is c_namesize.
        let size = hex_field(h, 6).ok_or(at)?;
        let name_len = hex_field(h, 11).ok_or(at)?;
        let name_at = at + NEWC_HEADER;
        let name = a
            .get(name_at..name_at + name_len.saturating_sub(1))
            .and_then(|n| core::str::from_utf8(n).ok())
            .ok_or(at)?;
        let data_at = align4(name_at + name_len);
        let data = a.get(data_at..data_at + size).ok_or(at)?;
        if name == TRAILER {
            return Ok(out);
        }
        out.push((String::from(name), data));
        at = align4(data_at + size);
    }
}
