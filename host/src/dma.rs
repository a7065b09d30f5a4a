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

use barebell_pcie::pagemap::{self, PagemapError};
use barebell_pcie::sysfs::SysfsDevice;
use barebell_pcie::vfio::{VfioDevice, VfioError};
use core::ptr::NonNull;
use std::fmt;

/// 2 MiB: the hugepage size and the region's alignment.
pub(crate) const HUGE: usize = barebell::platform::DMA_CHUNK;
/// Where the VFIO path maps the region: 4 GiB, above x86's MSI window
/// and inside even a 39-bit IOMMU aperture (barebell's choice).
pub(crate) const VFIO_IOVA: u64 = 1 << 32;
/// Where the region sits in the host's (and so the GPU's) address space:
/// the layout's one address for it (see the module docs).
pub(crate) const DMA_VA: usize = barebell::platform::DMA_HOST_VA;

/// Why the DMA region could not be set up, or failed its recheck.
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
    Placed { wanted: usize, got: usize },
    /// mlock failed (RLIMIT_MEMLOCK).
    Lock { len: usize, source: std::io::Error },
    /// madvise(MADV_DONTFORK) failed.
    Advise { at: usize, source: std::io::Error },
    /// A chunk's physical address changed after the device was given it
    /// (`--sysfs`): the kernel moved the page, and the device may have
    /// written where the old address now belongs to someone else.
    Moved { chunk: usize, was: u64, now: u64 },
    /// VFIO refused the IOMMU mapping.
    Map(VfioError),
    /// `/proc/self/pagemap` gave no physical address for a chunk.
    Pagemap(PagemapError),
    /// `--sysfs` while the IOMMU translates for the device: physical
    /// addresses would be wrong on the bus.
    IommuTranslating { group: u32, kind: String },
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
            DmaError::Advise { at, source } => write!(
                f,
                "DMA memory: madvise(MADV_DONTFORK) at {at:#x} failed: {source}"
            ),
            DmaError::Moved { chunk, was, now } => write!(
                f,
                "DMA memory MOVED: chunk {chunk} was at physical {was:#x} and is now at {now:#x}; the GPU was given the old address and may have written to memory the kernel has reused (use --vfio, where the IOMMU pins the pages)"
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
pub(crate) struct DmaRegion {
    ptr: NonNull<u8>,
    len: usize,
    /// What was mmapped, one entry per mapping.
    raw: Vec<(usize, usize)>,
    /// Bus address of each 2 MiB chunk.
    chunks: Vec<u64>,
    /// The chunks' bus addresses are physical addresses from pagemap
    /// (`--sysfs`), which [`DmaRegion::recheck`] reads again.
    by_pagemap: bool,
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
        r.by_pagemap = true;
        r.chunks = r.read_chunks()?;
        Ok(r)
    }

    fn read_chunks(&self) -> Result<Vec<u64>, DmaError> {
        (0..self.len / HUGE)
            .map(|i| {
                pagemap::physical(self.as_ptr() as usize + i * HUGE).map_err(DmaError::Pagemap)
            })
            .collect()
    }

    /// For a region the device reaches by physical address (`--sysfs`):
    /// reads each chunk's address from pagemap again and fails if one
    /// moved. The pages are locked hugetlb pages, which reclaim and
    /// compaction leave in place, but the kernel may still migrate
    /// hugetlb pages (memory offlining, `move_pages`); nothing in user
    /// space can forbid that, so the CLI checks before the bring-up hands
    /// the region to the device and again when the run ends. Through
    /// VFIO the IOMMU pins the pages and the bus address is the IOVA:
    /// nothing to check.
    pub fn recheck(&self) -> Result<(), DmaError> {
        if !self.by_pagemap {
            return Ok(());
        }
        let now = self.read_chunks()?;
        match self
            .chunks
            .iter()
            .zip(&now)
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            Some((chunk, (&was, &now))) => Err(DmaError::Moved { chunk, was, now }),
            None => Ok(()),
        }
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

#[cfg(any(test, feature = "model-stand-in"))]
impl DmaRegion {
    /// What `for_vfio` maps, without a VFIO device: `len` bytes at
    /// [`DMA_VA`], chunks at [`VFIO_IOVA`] onwards (the bus addresses the
    /// VFIO path gives them). For the model standing in for a card
    /// ([`crate::model_standing_in`]) and this crate's tests.
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
///
/// Hugepages (the `--sysfs` path, DMA by physical address) are a shared
/// mapping: a private one would be copied on write after a fork, and the
/// copy would no longer be the page the device writes. Every region is
/// `MADV_DONTFORK`, so a child process never inherits it (as DPDK and
/// SPDK do for DMA memory).
fn anonymous(len: usize, hugepage: bool, at: usize) -> Result<DmaRegion, DmaError> {
    let flags = if hugepage {
        libc::MAP_HUGETLB | libc::MAP_HUGE_2MB | libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    };
    // SAFETY: a fresh private anonymous mapping at an address nothing in
    // this process uses (NOREPLACE fails instead of replacing a mapping).
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANONYMOUS | libc::MAP_POPULATE | libc::MAP_FIXED_NOREPLACE | flags,
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
        by_pagemap: false,
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
    // SAFETY: [at, at + len) is the mapping just made; the advice only
    // changes what fork() does with it.
    if unsafe { libc::madvise(p, len, libc::MADV_DONTFORK) } != 0 {
        return Err(DmaError::Advise {
            at,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(region)
}

/// `--sysfs` refuses when the IOMMU translates for the device: no group
/// (IOMMU off) or a group of type `identity` (passthrough) is fine.
pub(crate) fn check_no_translation(sys: &SysfsDevice) -> Result<(), DmaError> {
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

    /// `recheck` reads pagemap again and names the chunk whose physical
    /// address is not the one the device was given.
    #[test]
    fn recheck_names_a_chunk_whose_physical_address_changed() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: not root");
            return;
        }
        let mut r = anonymous(2 * HUGE, false, DMA_VA + 192 * HUGE).unwrap();
        r.by_pagemap = true;
        r.chunks = r.read_chunks().unwrap();
        assert_eq!(r.chunks.len(), 2);
        r.recheck().unwrap();
        // What the device was told for chunk 1, if the kernel had since
        // moved the page one hugepage down.
        let now = r.chunks[1];
        r.chunks[1] = now + HUGE as u64;
        match r.recheck() {
            Err(DmaError::Moved {
                chunk: 1,
                was,
                now: n,
            }) => {
                assert_eq!((was, n), (now + HUGE as u64, now))
            }
            other => panic!("expected chunk 1 moved, got {other:?}"),
        }
    }

    /// A child made by fork() does not get the region (MADV_DONTFORK):
    /// `mincore` in the child finds nothing mapped there.
    #[test]
    fn a_forked_child_does_not_inherit_dma_memory() {
        let at = DMA_VA + 256 * HUGE;
        let r = anonymous(HUGE, false, at).unwrap();
        // SAFETY: the child only makes two system calls (mincore, _exit),
        // both async-signal-safe, so forking a threaded test process is
        // sound.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let mut vec = [0u8; 1];
            // SAFETY: mincore only reads the page tables for [at, at+4K)
            // and writes one byte into `vec`.
            let rc = unsafe { libc::mincore(at as *mut libc::c_void, 4096, vec.as_mut_ptr()) };
            let unmapped =
                rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOMEM);
            // SAFETY: ends the child without running the parent's atexit
            // handlers or destructors.
            unsafe { libc::_exit(if unmapped { 0 } else { 1 }) };
        }
        assert!(pid > 0, "fork failed");
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status));
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "the child inherited the region"
        );
        // The parent still has it.
        // SAFETY: `r` is a live writable mapping of HUGE bytes.
        unsafe { r.as_ptr().write(1) };
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
