//! Firmware blobs handed in as the PVH module (QEMU's `-initrd`): a
//! "newc" cpio archive (the initramfs format) whose entries are
//! firmware-amd-graphics files under their own names. The first one is
//! read and reported with `barebell-firmware-if` (the third `no_std`
//! crate), and `cargo xtask qemu` compares what is printed with that
//! blob's own header bytes, read on the host at the offsets of
//! `struct common_firmware_header` (Linux's `amdgpu_ucode.h`). All of
//! them feed the bring-up on the model (`crate::bringup`), which asks for
//! the files the discovered IP versions need by name.

use crate::println;
use alloc::string::String;
use alloc::vec::Vec;
use barebell_firmware_if::ucode::Container;

/// Modules above the boot identity map are refused.
const MAPPED: u64 = 1 << 30;
const NEWC_MAGIC: &[u8] = b"070701";
const NEWC_HEADER: usize = 110;
const TRAILER: &str = "TRAILER!!!";

/// The archive's entries: file name and bytes, in archive order.
pub type Blobs = Vec<(String, &'static [u8])>;

fn hex_field(h: &[u8], index: usize) -> Option<usize> {
    let at = 6 + 8 * index;
    let s = core::str::from_utf8(h.get(at..at + 8)?).ok()?;
    usize::from_str_radix(s, 16).ok()
}

fn align4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// Splits a newc archive; `None` names the offset where it stopped
/// making sense.
fn entries(a: &'static [u8]) -> Result<Blobs, usize> {
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

pub fn load(module: Option<(u64, u64)>) -> Result<Blobs, &'static str> {
    let Some((pa, len)) = module else {
        println!("UK FW no module (pass a cpio archive of firmware blobs with -initrd)");
        return Ok(Vec::new());
    };
    if pa.checked_add(len).is_none_or(|e| e > MAPPED) || pa == 0 {
        println!("UK ERROR FW module at {pa:#x}+{len:#x} is outside the boot identity map");
        return Err("firmware module unmapped");
    }
    // SAFETY: the loader placed `len` bytes of the module at `pa`, inside
    // the identity-mapped first GiB (checked above); nothing writes them.
    let archive = unsafe { core::slice::from_raw_parts(pa as usize as *const u8, len as usize) };
    let blobs = entries(archive).map_err(|at| {
        println!("UK ERROR FW module is not a newc cpio archive (stopped at byte {at})");
        "firmware archive"
    })?;
    println!(
        "UK FW archive bytes={len} entries={} (newc cpio)",
        blobs.len()
    );
    if let Some((name, blob)) = blobs.first() {
        report(name, blob)?;
    }
    Ok(blobs)
}

fn report(name: &str, blob: &[u8]) -> Result<(), &'static str> {
    let c = Container::parse(blob).map_err(|e| {
        println!("UK ERROR FW container {name}: {e}");
        "firmware container"
    })?;
    let h = c.header();
    let (hv_major, hv_minor) = c.header_version();
    let payload = c.payload().map_err(|_| "firmware payload")?;
    println!(
        "UK FW module bytes={} size_bytes={} header_size_bytes={} header_version={hv_major}.{hv_minor} ip_version={}.{} ucode_version={:#x} ucode_size_bytes={} ucode_array_offset_bytes={} payload={}",
        blob.len(),
        h.size_bytes.get(),
        h.header_size_bytes.get(),
        h.ip_version_major.get(),
        h.ip_version_minor.get(),
        h.ucode_version.get(),
        h.ucode_size_bytes.get(),
        h.ucode_array_offset_bytes.get(),
        payload.len()
    );
    Ok(())
}
