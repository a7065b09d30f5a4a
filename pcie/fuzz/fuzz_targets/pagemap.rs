//! `/proc/self/pagemap` entries (`barebell_pcie::pagemap::decode`) on
//! arbitrary bytes: never a panic or overflow trap; a decoded address
//! keeps the virtual address's offset in the page and its frame number
//! is the entry's; every error is one of the typed refusals.
//!
//! Input: a page-size selector byte (4, 16 or 64 KiB), the first virtual
//! address (u64, little-endian), then one u64 entry per page, as the
//! kernel's pagemap file lays them out.
#![no_main]

use barebell_pcie::pagemap::{PFN_MASK, PRESENT, PagemapError, decode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let page = 4096usize << (2 * (sel % 3));
    let mut words = rest.chunks_exact(8).map(|c| {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        u64::from_le_bytes(b)
    });
    let Some(first) = words.next() else {
        return;
    };
    for (i, entry) in words.enumerate() {
        let vaddr = (first as usize).wrapping_add(i.wrapping_mul(page));
        match decode(entry, vaddr, page) {
            Ok(pa) => {
                assert_ne!(entry & PRESENT, 0);
                assert_eq!(pa % page as u64, (vaddr % page) as u64);
                assert_eq!(pa / page as u64, entry & PFN_MASK);
            }
            Err(e) => {
                match e {
                    PagemapError::NotPresent { .. } => assert_eq!(entry & PRESENT, 0),
                    PagemapError::Hidden { .. } => assert_eq!(entry & PFN_MASK, 0),
                    PagemapError::OutOfRange { pfn, .. } => assert_eq!(pfn, entry & PFN_MASK),
                    PagemapError::Io(_) => panic!("decode does no I/O"),
                }
                let _ = e.to_string();
            }
        }
    }
});
