//! Virtual-to-physical translation through `/proc/self/pagemap`, for DMA
//! without an IOMMU (`--sysfs`). One little-endian u64 per virtual page:
//! bit 63 "present", bits 0..=54 the page frame number, which the kernel
//! reports as 0 unless the reader has `CAP_SYS_ADMIN`
//! (Documentation/admin-guide/mm/pagemap.rst). [`decode`] is the pure
//! entry decoder (fuzzed by `pcie/fuzz`'s `pagemap` target).

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;

pub const PRESENT: u64 = 1 << 63;
pub const PFN_MASK: u64 = (1 << 55) - 1;
const PATH: &str = "/proc/self/pagemap";

#[derive(Debug)]
pub enum PagemapError {
    Io(std::io::Error),
    /// The page is not resident (it must be locked first).
    NotPresent {
        vaddr: usize,
    },
    /// The kernel hid the frame number: not root.
    Hidden {
        vaddr: usize,
    },
    /// The frame number times the page size does not fit in a 64-bit
    /// address (no kernel reports such a frame; a corrupt read would).
    OutOfRange {
        vaddr: usize,
        pfn: u64,
    },
}

impl fmt::Display for PagemapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PagemapError::Io(e) => write!(f, "{PATH}: {e}"),
            PagemapError::NotPresent { vaddr } => {
                write!(f, "{PATH}: page at {vaddr:#x} is not resident")
            }
            PagemapError::Hidden { vaddr } => write!(
                f,
                "{PATH}: the frame number of {vaddr:#x} reads 0 (the kernel hides it without CAP_SYS_ADMIN; run as root)"
            ),
            PagemapError::OutOfRange { vaddr, pfn } => write!(
                f,
                "{PATH}: frame number {pfn:#x} of {vaddr:#x} is past the 64-bit physical address space"
            ),
        }
    }
}

/// The physical address of `vaddr`, from one pagemap entry.
pub fn decode(entry: u64, vaddr: usize, page: usize) -> Result<u64, PagemapError> {
    if entry & PRESENT == 0 {
        return Err(PagemapError::NotPresent { vaddr });
    }
    let pfn = entry & PFN_MASK;
    if pfn == 0 {
        return Err(PagemapError::Hidden { vaddr });
    }
    // A 55-bit frame number times the page size can exceed 64 bits.
    pfn.checked_mul(page as u64)
        .and_then(|base| base.checked_add((vaddr % page) as u64))
        .ok_or(PagemapError::OutOfRange { vaddr, pfn })
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).unwrap_or(4096)
}

/// The physical address of `vaddr` in this process.
pub fn physical(vaddr: usize) -> Result<u64, PagemapError> {
    let page = page_size();
    let f = File::open(PATH).map_err(PagemapError::Io)?;
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, (vaddr / page * 8) as u64)
        .map_err(PagemapError::Io)?;
    decode(u64::from_le_bytes(b), vaddr, page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_decode_as_the_kernel_documents() {
        assert_eq!(
            decode(PRESENT | 0x1234, 0x7000_0abc, 4096).unwrap(),
            0x1234abc
        );
        assert!(matches!(
            decode(0x1234, 0x1000, 4096),
            Err(PagemapError::NotPresent { .. })
        ));
        assert!(matches!(
            decode(PRESENT, 0x1000, 4096),
            Err(PagemapError::Hidden { .. })
        ));
        // Bits 55..=62 are flags (soft-dirty, exclusive, ...), not PFN.
        assert_eq!(decode(PRESENT | (1 << 55) | 7, 0, 4096).unwrap(), 7 * 4096);
    }

    /// Fuzzing finding (issue 21): the largest frame number the entry can
    /// hold (55 bits) times the page size does not fit in 64 bits; the
    /// multiplication trapped (overflow checks) instead of a typed error.
    #[test]
    fn a_frame_number_past_64_bit_addresses_is_a_typed_error() {
        assert!(matches!(
            decode(PRESENT | PFN_MASK, 0x1000, 4096),
            Err(PagemapError::OutOfRange { vaddr: 0x1000, .. })
        ));
        // The largest frame that still fits decodes.
        let last = u64::MAX / 4096;
        assert_eq!(
            decode(PRESENT | last, 0xfff, 4096).unwrap(),
            last * 4096 + 0xfff
        );
    }
}
