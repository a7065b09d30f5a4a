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

use crate::println;

/// The boot code's identity map: tables outside it are refused.
const MAPPED: u64 = 1 << 30;
const SDT_HEADER: usize = 36;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcpiError {
    NoRsdp,
    BadRsdp {
        address: u64,
    },
    Unmapped {
        what: &'static str,
        address: u64,
    },
    BadChecksum {
        what: &'static str,
        address: u64,
    },
    NoMcfg,
    /// `no-mcfg` on the command line: ACPI was not consulted.
    Skipped,
}

impl core::fmt::Display for AcpiError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AcpiError::NoRsdp => f.write_str("the PVH start info names no RSDP"),
            AcpiError::BadRsdp { address } => {
                write!(f, "no valid RSDP signature/checksum at {address:#x}")
            }
            AcpiError::Unmapped { what, address } => {
                write!(f, "{what} at {address:#x} is outside the boot identity map")
            }
            AcpiError::BadChecksum { what, address } => {
                write!(f, "{what} at {address:#x} fails its checksum")
            }
            AcpiError::NoMcfg => f.write_str("no MCFG table in the root table"),
            AcpiError::Skipped => f.write_str("ACPI skipped on request (`no-mcfg`)"),
        }
    }
}

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

fn sums_to_zero(b: &[u8]) -> bool {
    b.iter().fold(0u8, |a, &x| a.wrapping_add(x)) == 0
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    b.get(o..o + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// A whole system description table, checksum verified.
fn sdt(what: &'static str, address: u64) -> Result<&'static [u8], AcpiError> {
    let head = phys(what, address, SDT_HEADER)?;
    let len = u32_at(head, 4) as usize;
    let t = phys(what, address, len.max(SDT_HEADER))?;
    if !sums_to_zero(t) {
        return Err(AcpiError::BadChecksum { what, address });
    }
    Ok(t)
}

/// Which root table was used, and the MCFG found through it.
#[derive(Debug, Clone, Copy)]
pub struct Found {
    pub root: &'static str,
    pub root_address: u64,
    pub mcfg_address: u64,
    pub mcfg: &'static [u8],
}

pub fn find_mcfg(rsdp: Option<u64>) -> Result<Found, AcpiError> {
    let rsdp = rsdp.ok_or(AcpiError::NoRsdp)?;
    let r = phys("RSDP", rsdp, 20)?;
    if r.get(..8) != Some(b"RSD PTR ") || !sums_to_zero(r) {
        return Err(AcpiError::BadRsdp { address: rsdp });
    }
    let revision = r.get(15).copied().unwrap_or(0);
    // ACPI 2.0+: use the XSDT (64-bit entries) if the extended RSDP
    // checks out; ACPI 1.0: the RSDT (32-bit entries).
    let (root, root_address, entry) = if revision >= 2 {
        let r2 = phys("RSDP", rsdp, 36)?;
        let xsdt = u64_at(r2, 24);
        if sums_to_zero(r2) && xsdt != 0 {
            ("XSDT", xsdt, 8)
        } else {
            ("RSDT", u64::from(u32_at(r, 16)), 4)
        }
    } else {
        ("RSDT", u64::from(u32_at(r, 16)), 4)
    };
    let t = sdt(root, root_address)?;
    if t.get(..4) != Some(root.as_bytes()) {
        return Err(AcpiError::BadChecksum {
            what: root,
            address: root_address,
        });
    }
    let body = t.get(SDT_HEADER..).unwrap_or(&[]);
    for e in body.chunks_exact(entry) {
        let a = if entry == 8 {
            u64_at(e, 0)
        } else {
            u64::from(u32_at(e, 0))
        };
        let head = match phys("SDT", a, SDT_HEADER) {
            Ok(h) => h,
            Err(err) => {
                println!("UK ACPI skipping a root-table entry: {err}");
                continue;
            }
        };
        let sig = head.get(..4).unwrap_or(&[]);
        if sig == b"MCFG" {
            let mcfg = sdt("MCFG", a)?;
            return Ok(Found {
                root,
                root_address,
                mcfg_address: a,
                mcfg,
            });
        }
    }
    Err(AcpiError::NoMcfg)
}
