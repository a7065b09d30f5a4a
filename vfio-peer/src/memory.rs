//! The memory the function stands on: VRAM in a memfd both the model
//! and QEMU map (QEMU maps BAR0's window of it into the guest), and the
//! guest RAM QEMU hands over in `DMA_MAP` messages.

use barebell_model::vgpu::HostMemory;
use core::ffi::c_void;
use core::ptr::NonNull;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A shared mapping, unmapped on drop.
#[derive(Debug)]
struct Mapping {
    at: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; the owner hands out only
// its address.
unsafe impl Send for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `at`/`len` are a mapping this value made and owns.
        unsafe { libc::munmap(self.at.as_ptr().cast::<c_void>(), self.len) };
    }
}

/// Maps `len` bytes of `fd` from `offset`, shared, readable and (if
/// `write`) writable.
fn map_shared(fd: i32, offset: u64, len: usize, write: bool) -> std::io::Result<Mapping> {
    let prot = libc::PROT_READ | if write { libc::PROT_WRITE } else { 0 };
    let off = libc::off_t::try_from(offset)
        .map_err(|_| std::io::Error::other(format!("mapping offset {offset:#x} too large")))?;
    // SAFETY: a fresh mapping of a file the caller keeps open; nothing
    // else refers to the returned range yet.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            prot,
            libc::MAP_SHARED | libc::MAP_NORESERVE,
            fd,
            off,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    NonNull::new(p.cast::<u8>())
        .map(|at| Mapping { at, len })
        .ok_or_else(|| std::io::Error::other("mmap returned null"))
}

/// Maps `len` bytes of `fd` from `offset`, shared and writable, at a
/// 2 MiB-aligned address (the model's DMA region contract). The returned
/// mapping is the whole reservation; the pointer is the aligned start.
fn map_shared_aligned(fd: i32, offset: u64, len: usize) -> std::io::Result<(Mapping, NonNull<u8>)> {
    const ALIGN: usize = 2 << 20;
    // SAFETY: a fresh inaccessible reservation; nothing refers to it.
    let raw = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len + ALIGN,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let reservation = Mapping {
        at: NonNull::new(raw.cast::<u8>()).ok_or_else(|| std::io::Error::other("null"))?,
        len: len + ALIGN,
    };
    let aligned = (raw as usize).next_multiple_of(ALIGN);
    let off = libc::off_t::try_from(offset)
        .map_err(|_| std::io::Error::other(format!("mapping offset {offset:#x} too large")))?;
    // SAFETY: `[aligned, aligned + len)` lies inside the reservation this
    // function owns; MAP_FIXED replaces that part of it with the file.
    let p = unsafe {
        libc::mmap(
            aligned as *mut c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            off,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let at = NonNull::new(p.cast::<u8>()).ok_or_else(|| std::io::Error::other("null"))?;
    Ok((reservation, at))
}

/// VRAM in a memfd: the model's [`HostMemory`] maps all of it, QEMU maps
/// BAR0's window (the first bytes) through the fd the region table
/// passes.
#[derive(Debug)]
pub struct Vram {
    fd: OwnedFd,
    len: usize,
}

impl Vram {
    /// A memfd of `len` bytes (sparse: pages cost memory once touched).
    pub fn new(len: usize) -> std::io::Result<Self> {
        // SAFETY: a NUL-terminated name; no other arguments.
        let raw = unsafe { libc::memfd_create(c"barebell-vram".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor just created and owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        File::from(fd.try_clone()?).set_len(len as u64)?;
        Ok(Vram { fd, len })
    }

    /// The raw descriptor QEMU receives with BAR0's region info.
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// The model's view: all of VRAM mapped shared, and a DMA region of
    /// `dma_len` bytes in anonymous memory (the runtime's own DMA window;
    /// a Linux guest's system memory arrives through [`GuestRam`]).
    pub fn host_memory(&self, dma_len: usize) -> std::io::Result<HostMemory> {
        const ALIGN: usize = 2 << 20;
        let vram = map_shared(self.fd.as_raw_fd(), 0, self.len, true)?;
        // SAFETY: a fresh anonymous mapping.
        let raw = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                dma_len + ALIGN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let dma_raw = Mapping {
            at: NonNull::new(raw.cast::<u8>()).ok_or_else(|| std::io::Error::other("null"))?,
            len: dma_len + ALIGN,
        };
        let dma_at = (dma_raw.at.as_ptr() as usize).next_multiple_of(ALIGN) as *mut u8;
        let dma = NonNull::new(dma_at).ok_or_else(|| std::io::Error::other("null"))?;
        let v = vram.at;
        let release = Box::new(move || drop((vram, dma_raw)));
        // SAFETY: `v` is this value's shared VRAM mapping of `len` bytes
        // and `dma` a 2 MiB-aligned range of `dma_len` bytes inside a
        // private anonymous mapping; both stay mapped until `release`
        // runs (the closure owns them) and are disjoint.
        Ok(unsafe { HostMemory::new(v, self.len, dma, dma_len, Some(release)) })
    }
}

impl Vram {
    /// The model's view for a guest, and the DMA region's length: all of
    /// VRAM, and as the DMA region
    /// the guest RAM from guest-physical 0 up (whole 2 MiB chunks of
    /// QEMU's file, mapped again at a 2 MiB-aligned address), so the
    /// model's chunk `i` at bus address `i * 2 MiB` is guest-physical
    /// `i * 2 MiB` ([`barebell_model::VirtualGpu::new_at`] with 0). The
    /// low window's other sections (QEMU maps RAM around the legacy VGA
    /// hole and the BIOS from the same file, at offsets equal to their
    /// addresses) come with it.
    pub fn host_memory_over(&self, guest: &GuestRam) -> std::io::Result<(HostMemory, u64)> {
        const CHUNK: usize = 2 << 20;
        let low = guest
            .windows
            .iter()
            .filter(|w| w.iova == 0)
            .max_by_key(|w| w.map.len)
            .ok_or_else(|| std::io::Error::other("no guest RAM at guest-physical 0"))?;
        let same = |f: &File| -> bool {
            use std::os::unix::fs::MetadataExt;
            match (f.metadata(), low.fd.metadata()) {
                (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
                _ => false,
            }
        };
        let span = guest
            .windows
            .iter()
            .filter(|w| w.offset == w.iova && same(&w.fd))
            .map(|w| w.iova + w.map.len as u64)
            .max()
            .unwrap_or(0);
        let len = (span as usize) / CHUNK * CHUNK;
        if len == 0 {
            return Err(std::io::Error::other("less than 2 MiB of guest RAM"));
        }
        let vram = map_shared(self.fd.as_raw_fd(), 0, self.len, true)?;
        let (ram, at) = map_shared_aligned(low.fd.as_raw_fd(), low.offset, len)?;
        let v = vram.at;
        let release = Box::new(move || drop((vram, ram)));
        // The guest kernel picks each page's CPU caching (amdgpu maps its
        // USWC buffers write-combined and leaves SNOOPED off their PTEs).
        // SAFETY: `v` is this value's shared VRAM mapping of `len` bytes;
        // `at` is a 2 MiB-aligned shared mapping of `len` bytes (whole
        // chunks) of the guest's RAM file. Both stay mapped until
        // `release` runs. The guest uses that RAM too, as a host uses the
        // memory a device reaches by DMA: the model only copies to and
        // from it through raw pointers.
        let memory =
            unsafe { HostMemory::new(v, self.len, at, len, Some(release)) }.owned_by_a_guest_os();
        Ok((memory, len as u64))
    }
}

/// One `DMA_MAP` of guest RAM.
#[derive(Debug)]
struct Window {
    iova: u64,
    map: Mapping,
    /// The file and offset it came from, to map it again for the model.
    fd: File,
    offset: u64,
}

/// The guest RAM QEMU has mapped for the function, by I/O virtual
/// address (the guest-physical address on QEMU's default IOMMU-less
/// machine).
#[derive(Debug, Default)]
pub struct GuestRam {
    windows: Vec<Window>,
}

impl GuestRam {
    /// `DMA_MAP`: `size` bytes of `fd` from `offset` appear at `iova`.
    /// A map without an fd (QEMU's BIOS ROMs) is accepted and not
    /// reachable: the rust-vmm server has no `DMA_READ`/`DMA_WRITE`.
    pub fn map(
        &mut self,
        iova: u64,
        size: u64,
        fd: Option<&File>,
        offset: u64,
        write: bool,
    ) -> std::io::Result<()> {
        let Some(fd) = fd else { return Ok(()) };
        let len = usize::try_from(size)
            .map_err(|_| std::io::Error::other(format!("DMA_MAP of {size:#x} bytes")))?;
        if iova.checked_add(size).is_none() || len == 0 {
            return Err(std::io::ErrorKind::InvalidInput.into());
        }
        let map = map_shared(fd.as_raw_fd(), offset, len, write)?;
        self.windows.push(Window {
            iova,
            map,
            fd: fd.try_clone()?,
            offset,
        });
        Ok(())
    }

    /// `DMA_UNMAP`: every window inside `[iova, iova + size)` goes.
    pub fn unmap(&mut self, iova: u64, size: u64) {
        let end = iova.saturating_add(size);
        self.windows
            .retain(|w| !(w.iova >= iova && w.iova + w.map.len as u64 <= end));
    }

    /// Whether a window starts at guest-physical 0 (QEMU maps guest RAM
    /// from address 0 up in one file).
    pub fn has_low_ram(&self) -> bool {
        self.windows.iter().any(|w| w.iova == 0)
    }

    /// Bytes of guest RAM mapped.
    pub fn mapped_bytes(&self) -> u64 {
        self.windows.iter().map(|w| w.map.len as u64).sum()
    }

    /// Copies guest RAM at `iova` into `out`; `None` when any byte is
    /// outside every window.
    pub fn read(&self, iova: u64, out: &mut [u8]) -> Option<()> {
        let w = self
            .windows
            .iter()
            .find(|w| iova >= w.iova && iova - w.iova + out.len() as u64 <= w.map.len as u64)?;
        let at = (iova - w.iova) as usize;
        // SAFETY: `at + out.len()` lies inside the live mapping (checked
        // above); guest RAM is plain bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(w.map.at.as_ptr().add(at), out.as_mut_ptr(), out.len())
        };
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    /// A memfd standing for QEMU's guest RAM: what the guest wrote at a
    /// guest-physical address is what the window reads there.
    #[test]
    fn guest_ram_reads_through_its_dma_windows() {
        let vram = Vram::new(1 << 20).unwrap();
        let mut f = File::from(vram.fd.try_clone().unwrap());
        f.seek(SeekFrom::Start(0x3000)).unwrap();
        f.write_all(b"guest bytes").unwrap();
        let mut ram = GuestRam::default();
        ram.map(0x1_0000_0000, 1 << 20, Some(&f), 0, true).unwrap();
        let mut out = [0u8; 11];
        ram.read(0x1_0000_3000, &mut out).unwrap();
        assert_eq!(&out, b"guest bytes");
        assert_eq!(
            ram.read(0x1_000F_FFFC, &mut out),
            None,
            "runs past the window"
        );
        ram.map(0, 0x1000, None, 0, false).unwrap();
        assert_eq!(
            ram.mapped_bytes(),
            1 << 20,
            "an fd-less map is not reachable"
        );
        ram.unmap(0x1_0000_0000, 1 << 20);
        assert_eq!(ram.read(0x1_0000_3000, &mut out), None);
    }
}
