//! Host memory the GPU can reach, and the bus addresses it reaches it
//! at.
//!
//! The region sits at a fixed host address, [`DMA_VA`], so that the GPU
//! can use the same number: the `gmc` step maps it into VMID0 and into
//! the user process's page tables at VA = host address (the layout KFD
//! gives user queues, whose rings sit at their CPU address in the
//! process's GPU VM), and the runtime's ring, queue, MQD and signal
//! types, which hand the device their host addresses, work unchanged.
//! Why fixed rather than wherever mmap puts it: the GPU's MC space also
//! holds the FB (the system aperture) and the GART, and the region must
//! miss both; at 32 TiB it is far above any FB the VBIOS places (tens of
//! GiB at most above 0) and below gfx11's high GART (just under
//! 2^47), inside the 47-bit user space. `MAP_FIXED_NOREPLACE` turns a
//! clash with an existing mapping into an error, and `chain::gmc` checks
//! the final layout anyway.
//!
//! Bus side: through VFIO the region is mapped at a fixed IOVA
//! ([`VFIO_IOVA`]), one contiguous range. Without an IOMMU (`--sysfs`)
//! each 2 MiB chunk is a locked hugepage (physically contiguous inside,
//! not across chunks) whose physical address comes from
//! `/proc/self/pagemap`, and the IOMMU must be off or in passthrough for
//! the device to see that address (tinygrad's AM driver does the same for
//! its sysfs path). The page tables map chunk by chunk.
//!
//! **Never run with a GPU.** The VFIO map ran on QEMU's `edu` only (the
//! `pcie` crate's own test); the pagemap path runs in this crate's tests.

use super::pagemap::{self, PagemapError};
use barebell_pcie::sysfs::SysfsDevice;
use barebell_pcie::vfio::{VfioDevice, VfioError};
use core::ptr::NonNull;
use std::fmt;

/// 2 MiB: the hugepage size and the region's alignment.
pub const HUGE: usize = barebell::platform::DMA_CHUNK;
/// Where the VFIO path maps the region: 4 GiB, above x86's MSI window
/// and inside even a 39-bit IOMMU aperture (barebell's choice).
pub const VFIO_IOVA: u64 = 1 << 32;
/// Where the region sits in the host's (and so the GPU's) address space:
/// the layout's one address for it (see the module docs).
pub const DMA_VA: usize = barebell::platform::DMA_HOST_VA;

#[derive(Debug)]
pub enum DmaError {
    /// mmap failed; for hugepages, usually none reserved.
    Mmap {
        len: usize,
        hugepage: bool,
        at: usize,
        source: std::io::Error,
    },
    /// The kernel mapped the region somewhere else than asked.
    Placed {
        wanted: usize,
        got: usize,
    },
    /// mlock failed (RLIMIT_MEMLOCK).
    Lock {
        len: usize,
        source: std::io::Error,
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
                ..
            } => write!(
                f,
                "DMA memory: no {len:#x}-byte hugepage ({source}); reserve some with `echo 4 > /proc/sys/vm/nr_hugepages`"
            ),
            DmaError::Mmap {
                len, at, source, ..
            } => {
                write!(
                    f,
                    "DMA memory: mmap of {len:#x} bytes at {at:#x} failed: {source}"
                )
            }
            DmaError::Placed { wanted, got } => write!(
                f,
                "DMA memory: asked for {wanted:#x}, the kernel mapped {got:#x} (MAP_FIXED_NOREPLACE needs Linux 4.17)"
            ),
            DmaError::Lock { len, source } => write!(
                f,
                "DMA memory: mlock of {len:#x} bytes failed ({source}); raise RLIMIT_MEMLOCK (`ulimit -l`)"
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

/// A locked region of host memory at [`DMA_VA`], in 2 MiB chunks, and
/// each chunk's address on the bus.
#[derive(Debug)]
pub struct DmaRegion {
    ptr: NonNull<u8>,
    len: usize,
    /// What was mmapped, one entry per mapping.
    raw: Vec<(usize, usize)>,
    /// Bus address of each 2 MiB chunk.
    chunks: Vec<u64>,
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
        self.chunks.first().copied().unwrap_or(0)
    }
    /// Bus address of each 2 MiB chunk, in order.
    pub fn chunks(&self) -> &[u64] {
        &self.chunks
    }

    /// `len` bytes (rounded up to 2 MiB) at [`DMA_VA`], locked, zeroed,
    /// mapped at [`VFIO_IOVA`] in `dev`'s IOMMU domain (one contiguous
    /// IOVA range, so the chunks' bus addresses follow each other).
    pub fn for_vfio(dev: &VfioDevice, len: usize) -> Result<Self, DmaError> {
        let len = len.next_multiple_of(HUGE);
        let mut r = anonymous(len, false, DMA_VA)?;
        // SAFETY: the region is locked and owned by the returned value; the
        // caller (`Device`) unmaps it from the IOMMU in its Drop, before
        // this value's Drop munmaps the memory.
        unsafe { dev.map_dma(r.as_ptr(), len as u64, VFIO_IOVA) }.map_err(DmaError::Map)?;
        r.chunks = (0..len / HUGE)
            .map(|i| VFIO_IOVA + (i * HUGE) as u64)
            .collect();
        Ok(r)
    }

    /// `len` bytes (rounded up to 2 MiB) as locked hugepages back to back
    /// at [`DMA_VA`], each at the physical address pagemap reports for it
    /// (contiguous within a chunk, not across chunks).
    pub fn physical(len: usize) -> Result<Self, DmaError> {
        let n = len.div_ceil(HUGE).max(1);
        let mut r = anonymous(HUGE, true, DMA_VA)?;
        for i in 1..n {
            let next = anonymous(HUGE, true, DMA_VA + i * HUGE)?;
            r.raw.extend(next.raw.iter().copied());
            // `r` owns the mapping from here on.
            core::mem::forget(next);
        }
        r.len = n * HUGE;
        r.chunks = (0..n)
            .map(|i| pagemap::physical(DMA_VA + i * HUGE).map_err(DmaError::Pagemap))
            .collect::<Result<_, _>>()?;
        Ok(r)
    }
}

impl Drop for DmaRegion {
    fn drop(&mut self) {
        for &(at, len) in &self.raw {
            // SAFETY: exactly what mmap returned; no reference into the
            // region outlives self (the device's mapping was removed by
            // the owner).
            unsafe {
                libc::munmap(at as *mut libc::c_void, len);
            }
        }
    }
}

#[cfg(test)]
impl DmaRegion {
    /// What `for_vfio` maps, without a VFIO device: `len` bytes at
    /// [`DMA_VA`], chunks at [`VFIO_IOVA`] onwards (the bus addresses the
    /// VFIO path gives them).
    pub fn anonymous_for_test(len: usize) -> Result<Self, DmaError> {
        let len = len.next_multiple_of(HUGE);
        let mut r = anonymous(len, false, DMA_VA)?;
        r.chunks = (0..len / HUGE)
            .map(|i| VFIO_IOVA + (i * HUGE) as u64)
            .collect();
        Ok(r)
    }
}

/// Anonymous, zeroed, locked memory at host address `at` (2 MiB
/// aligned): a hugepage when asked (contiguous). `MAP_FIXED_NOREPLACE`,
/// so an address already in use is an error rather than a clobbered
/// mapping.
fn anonymous(len: usize, hugepage: bool, at: usize) -> Result<DmaRegion, DmaError> {
    let flags = if hugepage {
        libc::MAP_HUGETLB | libc::MAP_HUGE_2MB
    } else {
        0
    };
    // SAFETY: a fresh private anonymous mapping at an address nothing in
    // this process uses (NOREPLACE fails instead of replacing a mapping).
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | libc::MAP_POPULATE
                | libc::MAP_FIXED_NOREPLACE
                | flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(DmaError::Mmap {
            len,
            hugepage,
            at,
            source: std::io::Error::last_os_error(),
        });
    }
    let region = DmaRegion {
        ptr: NonNull::new(p.cast::<u8>()).ok_or(DmaError::Mmap {
            len,
            hugepage,
            at,
            source: std::io::Error::from(std::io::ErrorKind::InvalidData),
        })?,
        len,
        raw: vec![(p as usize, len)],
        chunks: Vec::new(),
    };
    // Kernels before 4.17 take NOREPLACE as a hint and may map elsewhere.
    if p as usize != at {
        return Err(DmaError::Placed {
            wanted: at,
            got: p as usize,
        });
    }
    // SAFETY: [at, at + len) is the mapping just made.
    if unsafe { libc::mlock(p, len) } != 0 {
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
        let r = anonymous(HUGE, false, DMA_VA + 64 * HUGE).unwrap();
        let base = r.as_ptr() as usize;
        let a = pagemap::physical(base).unwrap();
        let b = pagemap::physical(base + 0x123).unwrap();
        assert_eq!(a % 4096, 0);
        assert_eq!(b, a + 0x123);
        assert_eq!(pagemap::physical(base).unwrap(), a, "locked: must not move");
    }

    /// The region lands at the address asked for, and a second region
    /// asked for at the same place is refused rather than mapped over it.
    #[test]
    fn fixed_address_is_kept_and_not_replaced() {
        let at = DMA_VA + 128 * HUGE;
        let r = anonymous(HUGE, false, at).unwrap();
        assert_eq!(r.as_ptr() as usize, at);
        match anonymous(HUGE, false, at) {
            Err(DmaError::Mmap { source, .. }) => {
                assert_eq!(source.raw_os_error(), Some(libc::EEXIST))
            }
            other => panic!("expected EEXIST, got {other:?}"),
        }
        // SAFETY: `r` is a live writable mapping of HUGE bytes.
        unsafe { r.as_ptr().add(HUGE - 1).write(7) };
    }
}
