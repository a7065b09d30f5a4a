//! The unikernel's ACPI walk (`unikernel/src/acpi_tables.rs`: RSDP →
//! XSDT/RSDT → MCFG) over arbitrary physical memory: never a panic or
//! overflow trap, whatever the tables' lengths, checksums and pointers
//! say; a found MCFG is a whole, checksummed MCFG table.
//!
//! Input: memory regions, each `address: u64, len: u32` (little-endian)
//! then `len` bytes; the first region's address is the RSDP's (what the
//! PVH start info names). A read outside every region is `Unmapped`, as
//! a read outside the boot identity map is in the image.
#![no_main]

#[path = "../../src/acpi_tables.rs"]
#[allow(dead_code)] // `Skipped` is the image's command-line refusal
mod acpi_tables;

use acpi_tables::{AcpiError, find_mcfg_in};
use libfuzzer_sys::fuzz_target;

fn regions(mut d: &[u8]) -> Vec<(u64, &[u8])> {
    let mut out = Vec::new();
    while d.len() >= 12 {
        let addr = u64::from_le_bytes(d[..8].try_into().unwrap());
        let len = u32::from_le_bytes(d[8..12].try_into().unwrap()) as usize;
        let body = &d[12..];
        let take = len.min(body.len());
        out.push((addr, &body[..take]));
        d = &body[take..];
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let mem = regions(data);
    let rsdp = mem.first().map(|r| r.0);
    let read = |what: &'static str, address: u64, len: usize| -> Result<&[u8], AcpiError> {
        mem.iter()
            .find_map(|&(at, bytes)| {
                let off = usize::try_from(address.checked_sub(at)?).ok()?;
                bytes.get(off..off.checked_add(len)?)
            })
            .ok_or(AcpiError::Unmapped { what, address })
    };
    let mut skipped = 0;
    match find_mcfg_in(rsdp, &read, &mut |e| {
        skipped += 1;
        let _ = format!("{e}");
    }) {
        Ok(f) => {
            assert!(f.root == "XSDT" || f.root == "RSDT");
            assert_eq!(f.mcfg.get(..4), Some(&b"MCFG"[..]));
            assert!(f.mcfg.len() >= 36);
            assert_eq!(f.mcfg.iter().fold(0u8, |a, &x| a.wrapping_add(x)), 0);
            assert_eq!(read("MCFG", f.mcfg_address, f.mcfg.len()), Ok(f.mcfg));
            assert!(read("root", f.root_address, 36).is_ok());
        }
        Err(e) => {
            let _ = format!("{e}");
        }
    }
});
