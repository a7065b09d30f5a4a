//! Host memory the GPU can reach, and the bus address it reaches it at.
//!
//! The GPU reaches it through the GART (VMID0 PTEs with the SYSTEM bit
//! hold bus addresses), so all that matters is one contiguous range on
//! the bus. Through VFIO the region is mapped at a fixed IOVA
//! ([`VFIO_IOVA`]). Without an IOMMU (`--sysfs`) it is one locked 2 MiB
//! hugepage (physically contiguous) whose physical address comes from
//! `/proc/self/pagemap`, and the IOMMU must be off or in passthrough for
//! the device to see that address (tinygrad's AM driver does the same for
//! its sysfs path).
//!
//! **Never run with a GPU.** The VFIO map ran on QEMU's `edu` only (the
//! `pcie` crate's own test); the pagemap path runs in this crate's tests.

use super::pagemap::{self, PagemapError};
use barebell_pcie::sysfs::SysfsDevice;
use barebell_pcie::vfio::{VfioDevice, VfioError};
use core::ptr::NonNull;
use std::fmt;

/// 2 MiB: the hugepage size and the region's alignment.
pub const HUGE: usize = 2 << 20;
/// Where the VFIO path maps the region: 4 GiB, above x86's MSI window
/// and inside even a 39-bit IOMMU aperture (barebell's choice).
pub const VFIO_IOVA: u64 = 1 << 32;

#[derive(Debug)]
pub enum DmaError {
    /// mmap failed; for hugepages, usually none reserved.
    Mmap {
        len: usize,
        hugepage: bool,
        source: std::io::Error,
    },
    /// mlock failed (RLIMIT_MEMLOCK).
    Lock {
        len: usize,
        source: std::io::Error,
    },
    /// The region is larger than one hugepage, so not contiguous.
    TooLarge {
        len: usize,
    },
    /// VFIO refused the IOMMU mapping.
    Map(VfioError),
    Pagemap(PagemapError),
    /// `--sysfs` while the IOMMU translates for the device: physical
    /// addresses would be wrong on the bus.
    IommuTranslating {
        group: u32,
        kind: String,
    },
}

impl fmt::Display for DmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DmaError::Mmap {
                len,
                hugepage: true,
                source,
            } => write!(
                f,
                "DMA memory: no {len:#x}-byte hugepage ({source}); reserve some with `echo 4 > /proc/sys/vm/nr_hugepages`"
            ),
            DmaError::Mmap { len, source, .. } => {
                write!(f, "DMA memory: mmap of {len:#x} bytes failed: {source}")
            }
            DmaError::Lock { len, source } => write!(
                f,
                "DMA memory: mlock of {len:#x} bytes failed ({source}); raise RLIMIT_MEMLOCK (`ulimit -l`)"
            ),
            DmaError::TooLarge { len } => write!(
                f,
                "DMA memory: {len:#x} bytes is more than one {HUGE:#x}-byte hugepage, so not physically contiguous"
            ),
            DmaError::Map(e) => write!(f, "DMA memory: {e}"),
            DmaError::Pagemap(e) => write!(f, "DMA memory: {e}"),
            DmaError::IommuTranslating { group, kind } => write!(
                f,
                "--sysfs needs DMA by physical address, but IOMMU group {group} translates ({kind}); boot with iommu=pt (or amd_iommu=off / intel_iommu=off), or use --vfio"
            ),
        }
    }
}

/// A locked region of host memory and its address on the bus.
#[derive(Debug)]
pub struct DmaRegion {
    ptr: NonNull<u8>,
    len: usize,
    /// What was mmapped (the aligned region sits inside it).
    raw: (usize, usize),
    bus: u64,
}

impl DmaRegion {
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    pub fn len(&self) -> usize {
        self.len
    }
    /// Bus address of the first byte.
    pub fn bus(&self) -> u64 {
        self.bus
    }

    /// `len` bytes, 2 MiB aligned, locked, zeroed, mapped at
    /// [`VFIO_IOVA`] in `dev`'s IOMMU domain.
    pub fn for_vfio(dev: &VfioDevice, len: usize) -> Result<Self, DmaError> {
        let mut r = anonymous(len, false)?;
        // SAFETY: the region is locked and owned by the returned value; the
        // caller (`Device`) unmaps it from the IOMMU in its Drop, before
        // this value's Drop munmaps the memory.
        unsafe { dev.map_dma(r.as_ptr(), len as u64, VFIO_IOVA) }.map_err(DmaError::Map)?;
        r.bus = VFIO_IOVA;
        Ok(r)
    }

    /// One locked hugepage of `len <= 2 MiB` bytes at its physical address.
    pub fn physical(len: usize) -> Result<Self, DmaError> {
        if len > HUGE {
            return Err(DmaError::TooLarge { len });
        }
        let mut r = anonymous(HUGE, true)?;
        r.len = len;
        r.bus = pagemap::physical(r.as_ptr() as usize).map_err(DmaError::Pagemap)?;
        Ok(r)
    }
}

impl Drop for DmaRegion {
    fn drop(&mut self) {
        // SAFETY: exactly what mmap returned; no reference into the region
        // outlives self (the device's mapping was removed by the owner).
        unsafe {
            libc::munmap(self.raw.0 as *mut libc::c_void, self.raw.1);
        }
    }
}

/// Anonymous, zeroed, locked memory aligned to 2 MiB: a hugepage when
/// asked (contiguous), else over-allocated and aligned by hand.
fn anonymous(len: usize, hugepage: bool) -> Result<DmaRegion, DmaError> {
    let (map_len, flags) = if hugepage {
        (HUGE, libc::MAP_HUGETLB | libc::MAP_HUGE_2MB)
    } else {
        (len + HUGE, 0)
    };
    // SAFETY: a fresh private anonymous mapping; nothing aliases it.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE | flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(DmaError::Mmap {
            len: map_len,
            hugepage,
            source: std::io::Error::last_os_error(),
        });
    }
    let raw = (p as usize, map_len);
    let start = (p as usize).next_multiple_of(HUGE);
    let region = DmaRegion {
        ptr: NonNull::new(start as *mut u8).ok_or(DmaError::Mmap {
            len: map_len,
            hugepage,
            source: std::io::Error::from(std::io::ErrorKind::InvalidData),
        })?,
        len,
        raw,
        bus: 0,
    };
    // SAFETY: [start, start + len) lies inside the mapping just made.
    if unsafe { libc::mlock(start as *const libc::c_void, len) } != 0 {
        return Err(DmaError::Lock {
            len,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(region)
}

/// `--sysfs` refuses when the IOMMU translates for the device: no group
/// (IOMMU off) or a group of type `identity` (passthrough) is fine.
pub fn check_no_translation(sys: &SysfsDevice) -> Result<(), DmaError> {
    let Some(group) = sys.iommu_group() else {
        return Ok(());
    };
    let path = format!("/sys/kernel/iommu_groups/{group}/type");
    let kind = std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    if kind == "identity" {
        Ok(())
    } else {
        Err(DmaError::IommuTranslating { group, kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As root, a locked page's pagemap address is stable and offsets
    /// within it carry through. (Hugepages are usually not reserved on a
    /// development machine, so this uses the non-huge path.)
    #[test]
    fn locked_memory_resolves_to_a_physical_address_as_root() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: not root");
            return;
        }
        let r = anonymous(4096, false).unwrap();
        let base = r.as_ptr() as usize;
        let a = pagemap::physical(base).unwrap();
        let b = pagemap::physical(base + 0x123).unwrap();
        assert_eq!(a % 4096, 0);
        assert_eq!(b, a + 0x123);
        assert_eq!(pagemap::physical(base).unwrap(), a, "locked: must not move");
    }

    #[test]
    fn more_than_one_hugepage_is_refused() {
        assert!(matches!(
            DmaRegion::physical(HUGE + 1),
            Err(DmaError::TooLarge { .. })
        ));
    }
}
