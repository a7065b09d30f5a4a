//! Linux sysfs backend: `/sys/bus/pci/devices/<bdf>/`.
//!
//! The kernel driver may still own the device, so this backend only
//! reads and writes what the kernel exposes for user space: `config`
//! (reads past 64 bytes need root), `resource` (the kernel's view of the
//! BARs, including sizes, which it measured at boot so nobody has to
//! re-size a live BAR), `resourceN` mmaps, `resourceN_resize`, and
//! `enable`. It never unbinds a driver unless asked to by
//! [`SysfsDevice::unbind_driver`].

use crate::bdf::Bdf;
use crate::config::ConfigSpace;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;

/// Where Linux lists PCI functions.
pub const DEVICES: &str = "/sys/bus/pci/devices";

/// A sysfs operation that failed, naming the file and what to do.
#[derive(Debug)]
pub enum SysfsError {
    /// No such function in sysfs.
    NoDevice { bdf: Bdf },
    /// A file operation failed.
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// A line of `resource` did not parse.
    BadResource { path: PathBuf, line: String },
    /// `index` is not a memory BAR the kernel assigned.
    NotMappable { bdf: Bdf, index: u8 },
    /// The kernel offers no `resourceN` file to map.
    NoResourceFile { path: PathBuf },
}

impl fmt::Display for SysfsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SysfsError::NoDevice { bdf } => write!(
                f,
                "no PCI function {bdf} in {DEVICES} (check the address with `barebell pci list`)"
            ),
            SysfsError::Io { op, path, source } => {
                write!(f, "{op} {}: {source}", path.display())?;
                if source.kind() == io::ErrorKind::PermissionDenied {
                    f.write_str(" (run as root)")?;
                }
                Ok(())
            }
            SysfsError::BadResource { path, line } => {
                write!(f, "unparseable line {line:?} in {}", path.display())
            }
            SysfsError::NotMappable { bdf, index } => write!(
                f,
                "BAR {index} of {bdf} is not an assigned memory BAR, so it cannot be mapped"
            ),
            SysfsError::NoResourceFile { path } => write!(
                f,
                "{} does not exist: this kernel does not expose BARs for mmap through sysfs; \
                 use the VFIO backend instead",
                path.display()
            ),
        }
    }
}

impl std::error::Error for SysfsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SysfsError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> SysfsError + 'a {
    move |source| SysfsError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// One line of sysfs `resource`: the kernel's assignment of a BAR.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resource {
    pub start: u64,
    pub end: u64,
    /// `IORESOURCE_*` flags.
    pub flags: u64,
}

impl Resource {
    /// Bytes, or 0 for an unused line.
    pub fn size(&self) -> u64 {
        if self.start == 0 && self.end == 0 {
            0
        } else {
            self.end.wrapping_sub(self.start).wrapping_add(1)
        }
    }
}

/// Parses the text of a sysfs `resource` file: one line per resource,
/// three hex numbers (start, end, flags), as the kernel's
/// `resource_show()` prints them. `Err` is the first line that is not.
pub fn parse_resources(text: &str) -> Result<Vec<Resource>, &str> {
    text.lines()
        .map(|line| {
            let mut it = line
                .split_whitespace()
                .map(|t| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok());
            match (it.next(), it.next(), it.next()) {
                (Some(Some(start)), Some(Some(end)), Some(Some(flags))) => {
                    Ok(Resource { start, end, flags })
                }
                _ => Err(line),
            }
        })
        .collect()
}

/// Parses the text of a sysfs `resourceN_resize` file (a hex bitmap of
/// supported sizes, bit n: 1 MiB << n).
pub fn parse_resize_sizes(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok()
}

/// Every function sysfs lists, sorted by address.
pub fn list() -> Result<Vec<Bdf>, SysfsError> {
    let dir = Path::new(DEVICES);
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io_err("listing", dir))? {
        let e = e.map_err(io_err("listing", dir))?;
        if let Some(bdf) = e.file_name().to_str().and_then(|n| Bdf::parse(n).ok()) {
            out.push(bdf);
        }
    }
    out.sort();
    Ok(out)
}

/// One function, opened through sysfs.
#[derive(Debug)]
pub struct SysfsDevice {
    pub bdf: Bdf,
    dir: PathBuf,
    config: File,
    size: usize,
}

impl SysfsDevice {
    /// The descriptor of the `config` file (config space from byte 0),
    /// for [`crate::emergency::arm`].
    pub fn config_fd(&self) -> (i32, u64) {
        use std::os::fd::AsRawFd;
        (self.config.as_raw_fd(), 0)
    }

    /// Opens `config` for reading and writing, or read-only when writing
    /// is not permitted (so listing works without root).
    pub fn open(bdf: Bdf) -> Result<Self, SysfsError> {
        let dir = Path::new(DEVICES).join(bdf.to_string());
        if !dir.exists() {
            return Err(SysfsError::NoDevice { bdf });
        }
        let path = dir.join("config");
        let config = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .or_else(|_| File::open(&path))
            .map_err(io_err("opening", &path))?;
        let len = config.metadata().map_err(io_err("stat", &path))?.len();
        let size = if len >= 4096 { 4096 } else { 256 };
        Ok(SysfsDevice {
            bdf,
            dir,
            config,
            size,
        })
    }

    /// The function's sysfs directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many bytes of config the kernel lets this process read:
    /// unprivileged readers get only the first 64.
    pub fn readable_len(&self) -> usize {
        let mut buf = [0u8; 4096];
        let want = buf.get_mut(..self.size).unwrap_or(&mut []);
        self.config.read_at(want, 0).unwrap_or(0)
    }

    /// The kernel's BAR assignments (`resource`), one per line: BARs 0..=5,
    /// then the ROM, then bridge windows.
    pub fn resources(&self) -> Result<Vec<Resource>, SysfsError> {
        let path = self.dir.join("resource");
        let text = std::fs::read_to_string(&path).map_err(io_err("reading", &path))?;
        parse_resources(&text).map_err(|line| SysfsError::BadResource {
            path: path.clone(),
            line: line.to_string(),
        })
    }

    /// The bound driver's name, if any.
    pub fn driver(&self) -> Option<String> {
        let link = std::fs::read_link(self.dir.join("driver")).ok()?;
        link.file_name()?.to_str().map(str::to_string)
    }

    /// The IOMMU group number, if the kernel put the device in one.
    pub fn iommu_group(&self) -> Option<u32> {
        let link = std::fs::read_link(self.dir.join("iommu_group")).ok()?;
        link.file_name()?.to_str()?.parse().ok()
    }

    /// Maps BAR `index` through `resourceN`. Only memory BARs can be
    /// mapped; the mapping is uncached device memory.
    pub fn map_bar(&self, index: u8) -> Result<BarMapping, SysfsError> {
        let res = self.resources()?;
        let r = res.get(usize::from(index)).copied().unwrap_or_default();
        if index > 5 || r.size() == 0 || r.flags & IORESOURCE_MEM == 0 {
            return Err(SysfsError::NotMappable {
                bdf: self.bdf,
                index,
            });
        }
        let path = self.dir.join(std::format!("resource{index}"));
        if !path.exists() {
            return Err(SysfsError::NoResourceFile { path });
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io_err("opening", &path))?;
        let len = usize::try_from(r.size()).map_err(|_| SysfsError::NotMappable {
            bdf: self.bdf,
            index,
        })?;
        BarMapping::new(&file, 0, len).map_err(io_err("mmap", &path))
    }

    /// Resizes BAR `index` to `1 MiB << code` through `resourceN_resize`
    /// (the kernel disables decode, writes the Resizable BAR control and
    /// reassigns the BAR). The kernel refuses while a driver is bound.
    pub fn resize_bar(&self, index: u8, code: u8) -> Result<(), SysfsError> {
        let path = self.dir.join(std::format!("resource{index}_resize"));
        std::fs::write(&path, std::format!("{code}")).map_err(io_err("writing", &path))
    }

    /// Supported sizes of BAR `index` as the kernel reports them (bit n:
    /// 1 MiB << n), or `None` without Resizable BAR support.
    pub fn resize_sizes(&self, index: u8) -> Option<u64> {
        let path = self.dir.join(std::format!("resource{index}_resize"));
        let text = std::fs::read_to_string(path).ok()?;
        parse_resize_sizes(&text)
    }

    /// Enables the device (`enable`): the kernel powers it up and turns
    /// on decode, as pci_enable_device() does for a driver.
    pub fn enable(&self) -> Result<(), SysfsError> {
        let path = self.dir.join("enable");
        std::fs::write(&path, "1").map_err(io_err("writing", &path))
    }

    /// Detaches the bound driver. Only on explicit request: the device
    /// disappears from whatever was using it.
    pub fn unbind_driver(&self) -> Result<(), SysfsError> {
        let path = self.dir.join("driver/unbind");
        if !path.exists() {
            return Ok(());
        }
        std::fs::write(&path, self.bdf.to_string()).map_err(io_err("writing", &path))
    }
}

impl ConfigSpace for SysfsDevice {
    fn size(&self) -> usize {
        self.size
    }
    fn read32(&self, offset: u16) -> u32 {
        let mut b = [0u8; 4];
        match self.config.read_at(&mut b, u64::from(offset & !3)) {
            Ok(4) => u32::from_le_bytes(b),
            _ => u32::MAX,
        }
    }
    fn read16(&self, offset: u16) -> u16 {
        let mut b = [0u8; 2];
        match self.config.read_at(&mut b, u64::from(offset & !1)) {
            Ok(2) => u16::from_le_bytes(b),
            _ => u16::MAX,
        }
    }
    fn read8(&self, offset: u16) -> u8 {
        let mut b = [0u8; 1];
        match self.config.read_at(&mut b, u64::from(offset)) {
            Ok(1) => b[0],
            _ => u8::MAX,
        }
    }
    // The kernel turns a 1/2/4-byte aligned pwrite into a config write of
    // that width (pci_write_config()), so narrow writes stay narrow.
    fn write32(&mut self, offset: u16, value: u32) {
        let _ = self
            .config
            .write_at(&value.to_le_bytes(), u64::from(offset & !3));
    }
    fn write16(&mut self, offset: u16, value: u16) {
        let _ = self
            .config
            .write_at(&value.to_le_bytes(), u64::from(offset & !1));
    }
    fn write8(&mut self, offset: u16, value: u8) {
        let _ = self.config.write_at(&[value], u64::from(offset));
    }
}

/// `IORESOURCE_MEM` from include/linux/ioport.h (kernel-internal, so not
/// checked by the harness; sysfs prints these flags verbatim).
pub const IORESOURCE_MEM: u64 = 0x0000_0200;
/// `IORESOURCE_IO`.
pub const IORESOURCE_IO: u64 = 0x0000_0100;
/// `IORESOURCE_PREFETCH`.
pub const IORESOURCE_PREFETCH: u64 = 0x0000_2000;
/// `IORESOURCE_MEM_64`.
pub const IORESOURCE_MEM_64: u64 = 0x0010_0000;

/// A shared mapping of device memory (a BAR through sysfs or VFIO).
/// Unmapped on drop.
#[derive(Debug)]
pub struct BarMapping {
    ptr: *mut u8,
    len: usize,
}

impl BarMapping {
    /// Maps `len` bytes of `file` at `offset`, shared, read-write (a BAR's
    /// `resourceN` file or VFIO region; any mappable file), and registers
    /// the range with the SIGBUS handler ([`crate::sigbus::install`]).
    pub fn new(file: &impl std::os::fd::AsRawFd, offset: u64, len: usize) -> io::Result<Self> {
        let off = libc::off_t::try_from(offset)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a fresh mapping at a kernel-chosen address; no existing
        // Rust object is aliased. The fd is valid for the call.
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr: *mut u8 = p.cast();
        // Known to the SIGBUS handler while mapped (a full registry only
        // leaves this mapping with the default action).
        crate::sigbus::register(ptr, len);
        Ok(BarMapping { ptr, len })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A volatile 32-bit read; all-ones outside the mapping or unaligned.
    pub fn read32(&self, offset: usize) -> u32 {
        if !offset.is_multiple_of(4) || offset.checked_add(4).is_none_or(|e| e > self.len) {
            return u32::MAX;
        }
        // SAFETY: in bounds and aligned (mmap returns page-aligned memory),
        // and the mapping lives as long as self.
        unsafe { self.ptr.add(offset).cast::<u32>().read_volatile() }
    }

    /// A volatile 32-bit write; dropped outside the mapping or unaligned.
    pub fn write32(&self, offset: usize, value: u32) {
        if !offset.is_multiple_of(4) || offset.checked_add(4).is_none_or(|e| e > self.len) {
            return;
        }
        // SAFETY: as read32.
        unsafe { self.ptr.add(offset).cast::<u32>().write_volatile(value) }
    }
}

impl Drop for BarMapping {
    fn drop(&mut self) {
        // Unknown to the SIGBUS handler before it is unmapped.
        crate::sigbus::unregister(self.ptr);
        // SAFETY: ptr/len are exactly what mmap returned; nothing borrows
        // the mapping past self.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};

    /// The mapping plumbing (mmap, volatile access, bounds, munmap) on an
    /// ordinary file, since this development VM's kernel has no
    /// resourceN files to map.
    #[test]
    fn mapping_reads_and_writes_through_to_the_file() {
        let path = std::env::temp_dir().join(std::format!("barebell-map-{}", std::process::id()));
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all(&[0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0]).unwrap();
        let m = BarMapping::new(&f, 0, 8).unwrap();
        assert_eq!(m.read32(0), 0x4433_2211);
        m.write32(4, 0xdead_beef);
        assert_eq!(m.read32(8), u32::MAX, "past the end");
        assert_eq!(m.read32(2), u32::MAX, "unaligned");
        m.write32(8, 0);
        drop(m);
        let mut back = [0u8; 8];
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_exact(&mut back).unwrap();
        assert_eq!(back, [0x11, 0x22, 0x33, 0x44, 0xef, 0xbe, 0xad, 0xde]);
        std::fs::remove_file(path).unwrap();
    }
}
