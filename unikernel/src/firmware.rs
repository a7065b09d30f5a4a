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

/// The archive's entries: file name and bytes, in archive order.
pub type Blobs = Vec<(String, &'static [u8])>;

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
    let blobs = crate::cpio::entries(archive).map_err(|e| {
        println!("UK ERROR FW module is not a newc cpio archive ({e})");
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
