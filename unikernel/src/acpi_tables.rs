//! The ACPI table walk behind [`crate::acpi`]: RSDP → XSDT (or RSDT) →
//! MCFG over a memory reader, with no unsafe code and no I/O, so that
//! `unikernel/fuzz` includes this file by path and fuzzes exactly what
//! the unikernel runs (its reader is the boot identity map; the fuzz
//! target's is a list of regions). Layouts are in [`crate::acpi`]'s notes.

const SDT_HEADER: usize = 36;

/// Reads `len` bytes of physical memory at `address` for table `what`
/// (an `Unmapped` error when it cannot).
pub type Memory<'a, 'm> = &'m dyn Fn(&'static str, u64, usize) -> Result<&'a [u8], AcpiError>;

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
    /// The table read whole does not start with the header read first:
    /// not one table in memory (the fuzzer's overlapping regions; on a
    /// machine, firmware rewriting it under the reader).
    Inconsistent {
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
            AcpiError::Inconsistent { what, address } => write!(
                f,
                "{what} at {address:#x} reads differently whole than its header did"
            ),
            AcpiError::NoMcfg => f.write_str("no MCFG table in the root table"),
            AcpiError::Skipped => f.write_str("ACPI skipped on request (`no-mcfg`)"),
        }
    }
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
fn sdt<'a>(mem: Memory<'a, '_>, what: &'static str, address: u64) -> Result<&'a [u8], AcpiError> {
    let head = mem(what, address, SDT_HEADER)?;
    let len = u32_at(head, 4) as usize;
    let t = mem(what, address, len.max(SDT_HEADER))?;
    if t.get(..SDT_HEADER) != Some(head) {
        return Err(AcpiError::Inconsistent { what, address });
    }
    if !sums_to_zero(t) {
        return Err(AcpiError::BadChecksum { what, address });
    }
    Ok(t)
}

/// Which root table was used, and the MCFG found through it.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    pub root: &'static str,
    pub root_address: u64,
    pub mcfg_address: u64,
    pub mcfg: &'a [u8],
}

/// Finds the MCFG from the RSDP at `rsdp`; `skipped` hears about each
/// root-table entry that could not be read.
pub fn find_mcfg_in<'a>(
    rsdp: Option<u64>,
    mem: Memory<'a, '_>,
    skipped: &mut dyn FnMut(AcpiError),
) -> Result<Found<'a>, AcpiError> {
    let rsdp = rsdp.ok_or(AcpiError::NoRsdp)?;
    let r = mem("RSDP", rsdp, 20)?;
    if r.get(..8) != Some(b"RSD PTR ") || !sums_to_zero(r) {
        return Err(AcpiError::BadRsdp { address: rsdp });
    }
    let revision = r.get(15).copied().unwrap_or(0);
    // ACPI 2.0+: use the XSDT (64-bit entries) if the extended RSDP
    // checks out; ACPI 1.0: the RSDT (32-bit entries).
    let (root, root_address, entry) = if revision >= 2 {
        let r2 = mem("RSDP", rsdp, 36)?;
        let xsdt = u64_at(r2, 24);
        if sums_to_zero(r2) && xsdt != 0 {
            ("XSDT", xsdt, 8)
        } else {
            ("RSDT", u64::from(u32_at(r, 16)), 4)
        }
    } else {
        ("RSDT", u64::from(u32_at(r, 16)), 4)
    };
    let t = sdt(mem, root, root_address)?;
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
        let head = match mem("SDT", a, SDT_HEADER) {
            Ok(h) => h,
            Err(err) => {
                skipped(err);
                continue;
            }
        };
        let sig = head.get(..4).unwrap_or(&[]);
        if sig == b"MCFG" {
            let mcfg = sdt(mem, "MCFG", a)?;
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
