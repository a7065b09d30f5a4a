//! Finding the ECAM window: RSDP (from the PVH start info) → XSDT, or the
//! RSDT on an ACPI 1.0 RSDP, → MCFG. Layouts are the ACPI spec's (RSDP:
//! signature "RSD PTR " at 0, revision at 15, RSDT address at 16, XSDT
//! address at 24; every SDT: signature at 0, length at 4, 36-byte header);
//! Linux reads them the same way in `acpi_tb_parse_root_table()`.
//!
//! Every table's checksum is verified (all bytes sum to 0 mod 256); a
//! table that fails is skipped with a message rather than trusted. The
//! tables sit in RAM below 1 GiB on QEMU, which the boot map covers; one
//! that does not is refused.
//!
//! The walk itself is [`crate::acpi_tables`] (pure, fuzzed on the host);
//! this module gives it the boot identity map as memory.

use crate::acpi_tables::{AcpiError, Found, find_mcfg_in};
use crate::println;

/// The boot code's identity map: tables outside it are refused.
const MAPPED: u64 = 1 << 30;

/// Bytes of physical memory below [`MAPPED`].
fn phys(what: &'static str, address: u64, len: usize) -> Result<&'static [u8], AcpiError> {
    let end = address.checked_add(len as u64);
    if address == 0 || end.is_none_or(|e| e > MAPPED) {
        return Err(AcpiError::Unmapped { what, address });
    }
    // SAFETY: the range is inside the boot identity map of RAM; firmware's
    // ACPI tables are not written after boot.
    Ok(unsafe { core::slice::from_raw_parts(address as usize as *const u8, len) })
}

pub fn find_mcfg(rsdp: Option<u64>) -> Result<Found<'static>, AcpiError> {
    find_mcfg_in(rsdp, &phys, &mut |err| {
        println!("UK ACPI skipping a root-table entry: {err}");
    })
}
