//! A firmware container handed in as a PVH module (QEMU's `-initrd`),
//! read with `barebell-firmware-if`: the third `no_std` crate, running
//! with no OS. `cargo xtask qemu` passes a real blob from
//! firmware-amd-graphics and compares what is printed here with the
//! blob's own header bytes, read on the host at the offsets of
//! `struct common_firmware_header` (Linux's `amdgpu_ucode.h`).

use crate::println;
use barebell_firmware_if::ucode::Container;

/// Modules above the boot identity map are refused.
const MAPPED: u64 = 1 << 30;

pub fn report(module: Option<(u64, u64)>) -> Result<(), &'static str> {
    let Some((pa, len)) = module else {
        println!("UK FW no module (pass a firmware blob with -initrd)");
        return Ok(());
    };
    if pa.checked_add(len).is_none_or(|e| e > MAPPED) || pa == 0 {
        println!("UK ERROR FW module at {pa:#x}+{len:#x} is outside the boot identity map");
        return Err("firmware module unmapped");
    }
    // SAFETY: the loader placed `len` bytes of the module at `pa`, inside
    // the identity-mapped first GiB (checked above); nothing writes them.
    let blob = unsafe { core::slice::from_raw_parts(pa as usize as *const u8, len as usize) };
    let c = Container::parse(blob).map_err(|e| {
        println!("UK ERROR FW container: {e}");
        "firmware container"
    })?;
    let h = c.header();
    let (hv_major, hv_minor) = c.header_version();
    let payload = c.payload().map_err(|_| "firmware payload")?;
    println!(
        "UK FW module bytes={len} size_bytes={} header_size_bytes={} header_version={hv_major}.{hv_minor} ip_version={}.{} ucode_version={:#x} ucode_size_bytes={} ucode_array_offset_bytes={} payload={}",
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
