//! The host memory a model GPU stands on.

use crate::error::ModelError;
use alloc::boxed::Box;
use barebell::platform::DMA_CHUNK;
use core::ptr::NonNull;

/// The host memory a [`super::VirtualGpu`] stands on: BAR0's backing (the
/// modelled VRAM from offset 0) and the DMA region.
pub struct HostMemory {
    pub(super) vram: NonNull<u8>,
    pub(super) vram_len: usize,
    pub(super) dma: NonNull<u8>,
    pub(super) dma_len: usize,
    /// The DMA region's bus address ([`super::DMA_BUS`] unless
    /// [`super::VirtualGpu::new_at`] places it elsewhere).
    pub(super) dma_bus: u64,
    /// How the CPU maps the DMA region ([`crate::gmc::CpuCaching`]).
    pub(super) cpu: crate::gmc::CpuCaching,
    /// Host ranges the device reaches after construction, each at its own
    /// bus address (pinned user memory behind the model's IOMMU,
    /// [`super::VirtualGpu::map_host_dma`]), shared with every translator.
    pub(super) pinned: super::backing::Pinned,
    release: Option<Box<dyn FnOnce() + Send>>,
}

impl core::fmt::Debug for HostMemory {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HostMemory")
            .field("vram", &self.vram)
            .field("vram_len", &self.vram_len)
            .field("dma", &self.dma)
            .field("dma_len", &self.dma_len)
            .finish_non_exhaustive()
    }
}

// SAFETY: the pointers name memory this value owns (the contract of
// `new`); moving the owner between threads moves nothing.
unsafe impl Send for HostMemory {}
// SAFETY: `&HostMemory` only hands out the pointers.
unsafe impl Sync for HostMemory {}

impl HostMemory {
    /// `(vram, vram_len, dma, dma_len)`, for platforms of this crate
    /// other than [`super::VirtualGpu`] ([`crate::shell`]).
    pub(crate) fn regions(&self) -> (NonNull<u8>, usize, NonNull<u8>, usize) {
        (self.vram, self.vram_len, self.dma, self.dma_len)
    }

    /// # Safety
    /// `vram` and `dma` must point to `vram_len` and `dma_len` bytes of
    /// zeroed, writable memory that stay valid until `release` runs (or
    /// forever, without one), that nothing else uses, and that do not
    /// overlap; `dma` must be 2 MiB aligned and `dma_len` a multiple of
    /// 2 MiB. `release` runs once, when the value is dropped.
    pub unsafe fn new(
        vram: NonNull<u8>,
        vram_len: usize,
        dma: NonNull<u8>,
        dma_len: usize,
        release: Option<Box<dyn FnOnce() + Send>>,
    ) -> Self {
        HostMemory {
            vram,
            vram_len,
            dma,
            dma_len,
            dma_bus: super::DMA_BUS,
            cpu: crate::gmc::CpuCaching::WriteBack,
            pinned: super::backing::Pinned::default(),
            release,
        }
    }

    /// The DMA region is a guest's RAM, whose OS chooses each page's CPU
    /// caching ([`crate::gmc::CpuCaching::OwnerChooses`]).
    pub fn owned_by_a_guest_os(mut self) -> Self {
        self.cpu = crate::gmc::CpuCaching::OwnerChooses;
        self
    }

    /// `vram_len` bytes of VRAM backing from the heap and
    /// [`barebell::platform::DMA_BYTES`] of DMA region mapped at
    /// [`barebell::platform::DMA_HOST_VA`] (the next free slot above it
    /// when several models share a process), as the hardware targets
    /// place theirs.
    #[cfg(feature = "std")]
    pub fn allocate(vram_len: usize) -> Result<Self, ModelError> {
        Self::allocate_sized(vram_len, barebell::platform::DMA_BYTES)
    }

    /// [`HostMemory::allocate`] with a DMA region of `dma_bytes` (rounded
    /// up to whole 2 MiB chunks): room for big user buffers (the SDMA
    /// copy tests).
    #[cfg(feature = "std")]
    pub fn allocate_sized(vram_len: usize, dma_bytes: usize) -> Result<Self, ModelError> {
        use barebell::platform::DMA_HOST_VA;
        #[allow(non_snake_case)]
        let DMA_BYTES = dma_bytes.max(DMA_CHUNK).next_multiple_of(DMA_CHUNK);
        let no_vram = ModelError::VramBacking { bytes: vram_len };
        let layout = std::alloc::Layout::from_size_align(vram_len.max(4096), 4096)
            .map_err(|_| no_vram.clone())?;
        // SAFETY: non-zero size.
        let vram = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }).ok_or(no_vram)?;
        // The first free slot from DMA_HOST_VA up: a lone model (the CLI)
        // sits exactly where a GPU's region would.
        let mut tried = 0;
        let dma = loop {
            let at = DMA_HOST_VA + tried * 2 * DMA_BYTES;
            // SAFETY: a fresh anonymous mapping at an address nothing in
            // this process uses (MAP_FIXED_NOREPLACE refuses a clash).
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    DMA_BYTES,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if p as usize == at {
                break at;
            }
            if p != libc::MAP_FAILED {
                // An old kernel ignored NOREPLACE and put it elsewhere.
                // SAFETY: the mapping just made, unmapped at once.
                unsafe { libc::munmap(p, DMA_BYTES) };
            }
            tried += 1;
            if tried > 64 {
                // SAFETY: `vram` came from `alloc_zeroed(layout)`.
                unsafe { std::alloc::dealloc(vram.as_ptr(), layout) };
                return Err(ModelError::DmaRegion {
                    bytes: DMA_BYTES,
                    above: DMA_HOST_VA,
                    errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
                });
            }
        };
        let vram_addr = vram.as_ptr() as usize;
        let release = Box::new(move || {
            // SAFETY: the two allocations made above, released once.
            unsafe {
                libc::munmap(dma as *mut libc::c_void, DMA_BYTES);
                std::alloc::dealloc(vram_addr as *mut u8, layout);
            }
        });
        let dma = NonNull::new(dma as *mut u8).ok_or(ModelError::DmaRegion {
            bytes: DMA_BYTES,
            above: DMA_HOST_VA,
            errno: 0,
        })?;
        // SAFETY: both regions were just allocated, zeroed, disjoint,
        // owned by this value until `release`; the DMA region is at a
        // multiple of 2 MiB (DMA_HOST_VA and the stride are) and
        // DMA_BYTES is whole chunks.
        Ok(unsafe { HostMemory::new(vram, vram_len, dma, DMA_BYTES, Some(release)) })
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        if let Some(r) = self.release.take() {
            r();
        }
    }
}
