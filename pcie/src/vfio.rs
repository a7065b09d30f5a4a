//! Linux VFIO backend: the GPU handed to user space by `vfio-pci`.
//!
//! Two ways in, both supported because distributions differ in what they
//! enable:
//!
//! * **group/container (type1v2)**: `/dev/vfio/vfio` is the container,
//!   `/dev/vfio/<group>` the IOMMU group; the device fd comes from the
//!   group. Every device of the group must be bound to `vfio-pci`.
//! * **iommufd/cdev**: `/dev/iommu` plus the per-device character device
//!   `/dev/vfio/devices/vfioN` (kernel 6.6+, `CONFIG_VFIO_DEVICE_CDEV`).
//!   The device is bound to an iommufd and attached to an IO address
//!   space (IOAS) allocated for it.
//!
//! Either way the result is a device fd with regions (BARs, config)
//! reached by `pread`/`pwrite`/`mmap` at offsets from
//! `VFIO_DEVICE_GET_REGION_INFO`, and a DMA mapper that maps caller
//! buffers at caller-chosen IOVAs.
//!
//! **Not run on hardware.** No machine this was written on has a GPU or
//! an IOMMU group to hand out. What has run: the ioctl numbers and structs
//! are checked against Linux 6.12's headers ([`crate::vfio_uapi`]), and
//! `cargo xtask qemu-pci` drives the group/container path end to end
//! (bind, container, group, device fd, config region, BAR mmap, DMA map of
//! a buffer at a chosen IOVA with the device copying through it, unmap,
//! reset) against QEMU's emulated `edu` device behind an emulated Intel
//! IOMMU, in a guest running Debian's 6.12 kernel. The iommufd/cdev path
//! has not run anywhere: Debian's 6.12 kernels are built without IOMMUFD.

use crate::bdf::Bdf;
use crate::config::ConfigSpace;
use crate::sysfs::BarMapping;
use crate::vfio_uapi as u;
use std::ffi::CString;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};

/// What went wrong, with what to do about it.
#[derive(Debug)]
pub enum VfioError {
    /// `/dev/vfio` (or `/dev/vfio/vfio`) does not exist.
    NoVfio { path: PathBuf },
    /// sysfs has no `iommu_group` link for the device.
    NoIommuGroup { bdf: Bdf },
    /// The group's device node does not exist.
    NoGroupNode { bdf: Bdf, group: u32, path: PathBuf },
    /// The group has devices not bound to vfio-pci.
    GroupNotViable { group: u32 },
    /// The device has no VFIO cdev (`vfio-dev/vfioN` in sysfs).
    NoCdev { bdf: Bdf },
    /// The container speaks another API version.
    ApiVersion { got: i32 },
    /// The container lacks the type1v2 IOMMU backend.
    NoType1v2,
    /// Opening a file failed.
    Open { path: PathBuf, source: io::Error },
    /// An ioctl failed.
    Ioctl {
        name: &'static str,
        source: io::Error,
    },
    /// The device does not advertise reset.
    ResetUnsupported { bdf: Bdf },
    /// Region `index` cannot be mmapped (or has size 0).
    NotMappable { index: u32 },
}

fn how_to_bind(bdf: &Bdf) -> String {
    std::format!(
        "load vfio-pci (`modprobe vfio-pci`), bind the device \
         (`echo vfio-pci > /sys/bus/pci/devices/{bdf}/driver_override; \
         echo {bdf} > /sys/bus/pci/drivers_probe`), and check IOMMU groups \
         (`ls /sys/kernel/iommu_groups/*/devices`; the IOMMU must be on, e.g. \
         amd_iommu=on or intel_iommu=on)"
    )
}

impl fmt::Display for VfioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VfioError::NoVfio { path } => write!(
                f,
                "{} does not exist: VFIO is not loaded. Load vfio-pci (`modprobe vfio-pci`), \
                 bind the device to it, and check that the IOMMU is enabled and the device \
                 has an IOMMU group (`ls /sys/kernel/iommu_groups`)",
                path.display()
            ),
            VfioError::NoIommuGroup { bdf } => write!(
                f,
                "{bdf} has no IOMMU group: enable the IOMMU (amd_iommu=on / intel_iommu=on on \
                 the kernel command line, VT-d/AMD-Vi in firmware), then {}",
                how_to_bind(bdf)
            ),
            VfioError::NoGroupNode { bdf, group, path } => write!(
                f,
                "{bdf} is in IOMMU group {group} but {} does not exist: the device is not \
                 bound to vfio-pci. {}",
                path.display(),
                how_to_bind(bdf)
            ),
            VfioError::GroupNotViable { group } => write!(
                f,
                "IOMMU group {group} is not viable: every device in \
                 /sys/kernel/iommu_groups/{group}/devices must be bound to vfio-pci (or no driver)"
            ),
            VfioError::NoCdev { bdf } => write!(
                f,
                "{bdf} has no VFIO device node (/sys/bus/pci/devices/{bdf}/vfio-dev): the kernel \
                 lacks CONFIG_VFIO_DEVICE_CDEV or the device is not bound; {}",
                how_to_bind(bdf)
            ),
            VfioError::ApiVersion { got } => write!(
                f,
                "VFIO API version {got}, expected {}",
                u::VFIO_API_VERSION
            ),
            VfioError::NoType1v2 => f.write_str(
                "the VFIO container has no type1v2 IOMMU backend (load vfio_iommu_type1)",
            ),
            VfioError::Open { path, source } => {
                write!(f, "opening {}: {source}", path.display())?;
                if source.kind() == io::ErrorKind::PermissionDenied {
                    f.write_str(" (run as root or give your user the device node)")?;
                }
                Ok(())
            }
            VfioError::Ioctl { name, source } => write!(f, "{name} failed: {source}"),
            VfioError::ResetUnsupported { bdf } => write!(
                f,
                "{bdf} does not support reset through VFIO (no FLR, PM or bus reset available)"
            ),
            VfioError::NotMappable { index } => {
                write!(f, "VFIO region {index} cannot be mmapped")
            }
        }
    }
}

impl std::error::Error for VfioError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            VfioError::Open { source, .. } | VfioError::Ioctl { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn open_rw(path: &Path) -> Result<File, VfioError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|source| VfioError::Open {
            path: path.to_path_buf(),
            source,
        })
}

/// `ioctl(fd, req, arg)`, returning the non-negative result.
///
/// # Safety
/// `arg` must be what `req` expects: a pointer to a correctly sized and
/// initialised struct (with `argsz` set), or an integer.
unsafe fn ioctl(
    fd: &impl AsRawFd,
    name: &'static str,
    req: u64,
    arg: usize,
) -> Result<i32, VfioError> {
    // SAFETY: forwarded from the caller; the fd is open.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) };
    if r < 0 {
        Err(VfioError::Ioctl {
            name,
            source: io::Error::last_os_error(),
        })
    } else {
        Ok(r)
    }
}

fn argsz<T>() -> u32 {
    core::mem::size_of::<T>() as u32
}

/// The IOMMU side of an open device.
#[derive(Debug)]
enum Iommu {
    Container { container: File, _group: File },
    Iommufd { iommufd: File, ioas: u32 },
}

/// A device opened through VFIO.
#[derive(Debug)]
pub struct VfioDevice {
    pub bdf: Bdf,
    device: File,
    iommu: Iommu,
    info: u::DeviceInfo,
    config: u::RegionInfo,
}

const VFIO_DIR: &str = "/dev/vfio";

impl VfioDevice {
    /// The descriptor and byte offset of the config region, for
    /// [`crate::emergency::arm`].
    pub fn config_fd(&self) -> (i32, u64) {
        (self.device.as_raw_fd(), self.config.offset)
    }

    /// Opens through the cdev/iommufd API when the device has a cdev,
    /// otherwise through the group/container API.
    pub fn open(bdf: Bdf) -> Result<Self, VfioError> {
        if !Path::new(VFIO_DIR).exists() {
            return Err(VfioError::NoVfio {
                path: VFIO_DIR.into(),
            });
        }
        if cdev_name(bdf).is_some() && Path::new("/dev/iommu").exists() {
            Self::open_cdev(bdf)
        } else {
            Self::open_group(bdf)
        }
    }

    /// The group/container (type1v2) path, following the sequence in
    /// Documentation/driver-api/vfio.rst.
    pub fn open_group(bdf: Bdf) -> Result<Self, VfioError> {
        let container_path = Path::new(VFIO_DIR).join("vfio");
        if !container_path.exists() {
            return Err(VfioError::NoVfio {
                path: container_path,
            });
        }
        let sys = Path::new(crate::sysfs::DEVICES).join(bdf.to_string());
        let group = std::fs::read_link(sys.join("iommu_group"))
            .ok()
            .and_then(|l| l.file_name()?.to_str()?.parse::<u32>().ok())
            .ok_or(VfioError::NoIommuGroup { bdf })?;
        let group_path = Path::new(VFIO_DIR).join(group.to_string());
        if !group_path.exists() {
            return Err(VfioError::NoGroupNode {
                bdf,
                group,
                path: group_path,
            });
        }
        let container = open_rw(&container_path)?;
        // SAFETY: VFIO_GET_API_VERSION takes no argument.
        let v = unsafe {
            ioctl(
                &container,
                "VFIO_GET_API_VERSION",
                u::VFIO_GET_API_VERSION,
                0,
            )?
        };
        if v != u::VFIO_API_VERSION {
            return Err(VfioError::ApiVersion { got: v });
        }
        // SAFETY: VFIO_CHECK_EXTENSION takes the extension id by value.
        let has = unsafe {
            ioctl(
                &container,
                "VFIO_CHECK_EXTENSION",
                u::VFIO_CHECK_EXTENSION,
                u::VFIO_TYPE1V2_IOMMU as usize,
            )?
        };
        if has == 0 {
            return Err(VfioError::NoType1v2);
        }
        let group_file = open_rw(&group_path)?;
        let mut status = u::GroupStatus {
            argsz: argsz::<u::GroupStatus>(),
            flags: 0,
        };
        // SAFETY: points at a vfio_group_status with argsz set.
        unsafe {
            ioctl(
                &group_file,
                "VFIO_GROUP_GET_STATUS",
                u::VFIO_GROUP_GET_STATUS,
                &mut status as *mut _ as usize,
            )?
        };
        if status.flags & u::VFIO_GROUP_FLAGS_VIABLE == 0 {
            return Err(VfioError::GroupNotViable { group });
        }
        let cfd: i32 = container.as_raw_fd();
        // SAFETY: VFIO_GROUP_SET_CONTAINER takes a pointer to the
        // container fd (an __s32).
        unsafe {
            ioctl(
                &group_file,
                "VFIO_GROUP_SET_CONTAINER",
                u::VFIO_GROUP_SET_CONTAINER,
                &cfd as *const i32 as usize,
            )?
        };
        // SAFETY: VFIO_SET_IOMMU takes the IOMMU type by value.
        unsafe {
            ioctl(
                &container,
                "VFIO_SET_IOMMU",
                u::VFIO_SET_IOMMU,
                u::VFIO_TYPE1V2_IOMMU as usize,
            )?
        };
        let name = CString::new(bdf.to_string()).map_err(|_| VfioError::NoIommuGroup { bdf })?;
        // SAFETY: VFIO_GROUP_GET_DEVICE_FD takes a NUL-terminated name.
        let fd = unsafe {
            ioctl(
                &group_file,
                "VFIO_GROUP_GET_DEVICE_FD",
                u::VFIO_GROUP_GET_DEVICE_FD,
                name.as_ptr() as usize,
            )?
        };
        // SAFETY: the ioctl returned a new fd that nothing else owns.
        let device = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        Self::finish(
            bdf,
            device,
            Iommu::Container {
                container,
                _group: group_file,
            },
        )
    }

    /// The iommufd/cdev path, following Documentation/driver-api/vfio.rst
    /// ("VFIO device cdev"): bind to an iommufd, allocate an IOAS, attach.
    pub fn open_cdev(bdf: Bdf) -> Result<Self, VfioError> {
        let node = cdev_name(bdf).ok_or(VfioError::NoCdev { bdf })?;
        let iommufd = open_rw(Path::new("/dev/iommu"))?;
        let device = open_rw(&Path::new(VFIO_DIR).join("devices").join(node))?;
        let mut bind = u::BindIommufd {
            argsz: argsz::<u::BindIommufd>(),
            flags: 0,
            iommufd: iommufd.as_raw_fd(),
            out_devid: 0,
        };
        // SAFETY: points at a vfio_device_bind_iommufd with argsz set.
        unsafe {
            ioctl(
                &device,
                "VFIO_DEVICE_BIND_IOMMUFD",
                u::VFIO_DEVICE_BIND_IOMMUFD,
                &mut bind as *mut _ as usize,
            )?
        };
        let mut alloc = u::IoasAlloc {
            size: argsz::<u::IoasAlloc>(),
            flags: 0,
            out_ioas_id: 0,
        };
        // SAFETY: points at an iommu_ioas_alloc with size set.
        unsafe {
            ioctl(
                &iommufd,
                "IOMMU_IOAS_ALLOC",
                u::IOMMU_IOAS_ALLOC,
                &mut alloc as *mut _ as usize,
            )?
        };
        let mut attach = u::AttachIommufdPt {
            argsz: argsz::<u::AttachIommufdPt>(),
            flags: 0,
            pt_id: alloc.out_ioas_id,
        };
        // SAFETY: points at a vfio_device_attach_iommufd_pt with argsz set.
        unsafe {
            ioctl(
                &device,
                "VFIO_DEVICE_ATTACH_IOMMUFD_PT",
                u::VFIO_DEVICE_ATTACH_IOMMUFD_PT,
                &mut attach as *mut _ as usize,
            )?
        };
        Self::finish(
            bdf,
            device,
            Iommu::Iommufd {
                iommufd,
                ioas: alloc.out_ioas_id,
            },
        )
    }

    fn finish(bdf: Bdf, device: File, iommu: Iommu) -> Result<Self, VfioError> {
        let mut info = u::DeviceInfo {
            argsz: argsz::<u::DeviceInfo>(),
            ..Default::default()
        };
        // SAFETY: points at a vfio_device_info with argsz set.
        unsafe {
            ioctl(
                &device,
                "VFIO_DEVICE_GET_INFO",
                u::VFIO_DEVICE_GET_INFO,
                &mut info as *mut _ as usize,
            )?
        };
        let config = region_info(&device, u::VFIO_PCI_CONFIG_REGION_INDEX)?;
        Ok(VfioDevice {
            bdf,
            device,
            iommu,
            info,
            config,
        })
    }

    pub fn info(&self) -> u::DeviceInfo {
        self.info
    }

    /// True for the iommufd/cdev path.
    pub fn uses_iommufd(&self) -> bool {
        matches!(self.iommu, Iommu::Iommufd { .. })
    }

    pub fn region_info(&self, index: u32) -> Result<u::RegionInfo, VfioError> {
        region_info(&self.device, index)
    }

    /// mmaps region `index` (BAR n is region n).
    pub fn map_region(&self, index: u32) -> Result<BarMapping, VfioError> {
        let r = self.region_info(index)?;
        if r.flags & u::VFIO_REGION_INFO_FLAG_MMAP == 0 || r.size == 0 {
            return Err(VfioError::NotMappable { index });
        }
        let len = usize::try_from(r.size).map_err(|_| VfioError::NotMappable { index })?;
        BarMapping::new(&self.device, r.offset, len).map_err(|source| VfioError::Ioctl {
            name: "mmap",
            source,
        })
    }

    /// Maps `len` bytes at `vaddr` for device access at `iova`, readable
    /// and writable by the device.
    ///
    /// # Safety
    /// The memory must stay allocated (and not be moved or remapped) until
    /// [`Self::unmap_dma`] removes the mapping: the device may read or
    /// write it at any time meanwhile.
    pub unsafe fn map_dma(&self, vaddr: *mut u8, len: u64, iova: u64) -> Result<(), VfioError> {
        match &self.iommu {
            Iommu::Container { container, .. } => {
                let mut m = u::DmaMap {
                    argsz: argsz::<u::DmaMap>(),
                    flags: u::VFIO_DMA_MAP_FLAG_READ | u::VFIO_DMA_MAP_FLAG_WRITE,
                    vaddr: vaddr as u64,
                    iova,
                    size: len,
                };
                // SAFETY: points at a vfio_iommu_type1_dma_map with argsz
                // set; the caller keeps the memory alive.
                unsafe {
                    ioctl(
                        container,
                        "VFIO_IOMMU_MAP_DMA",
                        u::VFIO_IOMMU_MAP_DMA,
                        &mut m as *mut _ as usize,
                    )?
                };
            }
            Iommu::Iommufd { iommufd, ioas } => {
                let mut m = u::IoasMap {
                    size: argsz::<u::IoasMap>(),
                    flags: u::IOMMU_IOAS_MAP_FIXED_IOVA
                        | u::IOMMU_IOAS_MAP_READABLE
                        | u::IOMMU_IOAS_MAP_WRITEABLE,
                    ioas_id: *ioas,
                    reserved: 0,
                    user_va: vaddr as u64,
                    length: len,
                    iova,
                };
                // SAFETY: points at an iommu_ioas_map with size set; the
                // caller keeps the memory alive.
                unsafe {
                    ioctl(
                        iommufd,
                        "IOMMU_IOAS_MAP",
                        u::IOMMU_IOAS_MAP,
                        &mut m as *mut _ as usize,
                    )?
                };
            }
        }
        Ok(())
    }

    /// Removes the mapping at `iova`; returns the bytes unmapped.
    pub fn unmap_dma(&self, iova: u64, len: u64) -> Result<u64, VfioError> {
        match &self.iommu {
            Iommu::Container { container, .. } => {
                let mut m = u::DmaUnmap {
                    argsz: argsz::<u::DmaUnmap>(),
                    flags: 0,
                    iova,
                    size: len,
                };
                // SAFETY: points at a vfio_iommu_type1_dma_unmap (no
                // bitmap flag, so no trailing data) with argsz set.
                unsafe {
                    ioctl(
                        container,
                        "VFIO_IOMMU_UNMAP_DMA",
                        u::VFIO_IOMMU_UNMAP_DMA,
                        &mut m as *mut _ as usize,
                    )?
                };
                Ok(m.size)
            }
            Iommu::Iommufd { iommufd, ioas } => {
                let mut m = u::IoasUnmap {
                    size: argsz::<u::IoasUnmap>(),
                    ioas_id: *ioas,
                    iova,
                    length: len,
                };
                // SAFETY: points at an iommu_ioas_unmap with size set.
                unsafe {
                    ioctl(
                        iommufd,
                        "IOMMU_IOAS_UNMAP",
                        u::IOMMU_IOAS_UNMAP,
                        &mut m as *mut _ as usize,
                    )?
                };
                Ok(m.length)
            }
        }
    }

    pub fn supports_reset(&self) -> bool {
        self.info.flags & u::VFIO_DEVICE_FLAGS_RESET != 0
    }

    /// Resets the function (vfio-pci picks FLR when the device has it).
    pub fn reset(&self) -> Result<(), VfioError> {
        if !self.supports_reset() {
            return Err(VfioError::ResetUnsupported { bdf: self.bdf });
        }
        // SAFETY: VFIO_DEVICE_RESET takes no argument.
        unsafe { ioctl(&self.device, "VFIO_DEVICE_RESET", u::VFIO_DEVICE_RESET, 0)? };
        Ok(())
    }
}

fn region_info(device: &File, index: u32) -> Result<u::RegionInfo, VfioError> {
    let mut r = u::RegionInfo {
        argsz: argsz::<u::RegionInfo>(),
        index,
        ..Default::default()
    };
    // SAFETY: points at a vfio_region_info with argsz and index set.
    unsafe {
        ioctl(
            device,
            "VFIO_DEVICE_GET_REGION_INFO",
            u::VFIO_DEVICE_GET_REGION_INFO,
            &mut r as *mut _ as usize,
        )?
    };
    Ok(r)
}

/// `vfioN` under `/sys/bus/pci/devices/<bdf>/vfio-dev/`, if present.
fn cdev_name(bdf: Bdf) -> Option<String> {
    let dir = Path::new(crate::sysfs::DEVICES)
        .join(bdf.to_string())
        .join("vfio-dev");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .find(|n| n.starts_with("vfio"))
}

/// Config space through the VFIO config region (vfio-pci virtualises
/// parts of it, e.g. the BARs read back as the kernel assigned them).
impl ConfigSpace for VfioDevice {
    fn size(&self) -> usize {
        if self.config.size >= 4096 { 4096 } else { 256 }
    }
    fn read32(&self, offset: u16) -> u32 {
        let mut b = [0u8; 4];
        match self
            .device
            .read_at(&mut b, self.config.offset + u64::from(offset & !3))
        {
            Ok(4) => u32::from_le_bytes(b),
            _ => u32::MAX,
        }
    }
    fn read16(&self, offset: u16) -> u16 {
        let mut b = [0u8; 2];
        match self
            .device
            .read_at(&mut b, self.config.offset + u64::from(offset & !1))
        {
            Ok(2) => u16::from_le_bytes(b),
            _ => u16::MAX,
        }
    }
    fn read8(&self, offset: u16) -> u8 {
        let mut b = [0u8; 1];
        match self
            .device
            .read_at(&mut b, self.config.offset + u64::from(offset))
        {
            Ok(1) => b[0],
            _ => u8::MAX,
        }
    }
    fn write32(&mut self, offset: u16, value: u32) {
        let _ = self.device.write_at(
            &value.to_le_bytes(),
            self.config.offset + u64::from(offset & !3),
        );
    }
    fn write16(&mut self, offset: u16, value: u16) {
        let _ = self.device.write_at(
            &value.to_le_bytes(),
            self.config.offset + u64::from(offset & !1),
        );
    }
    fn write8(&mut self, offset: u16, value: u8) {
        let _ = self
            .device
            .write_at(&[value], self.config.offset + u64::from(offset));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine has no /dev/vfio: opening must fail with a message
    /// that says what to do, not with a bare ENOENT.
    #[test]
    fn missing_vfio_names_the_fix() {
        if Path::new(VFIO_DIR).exists() {
            return;
        }
        let e = VfioDevice::open(Bdf::new(0, 0, 1, 0)).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, VfioError::NoVfio { .. }), "{msg}");
        assert!(msg.contains("vfio-pci"), "{msg}");
        assert!(msg.contains("bind"), "{msg}");
        assert!(msg.contains("IOMMU group"), "{msg}");
    }

    #[test]
    fn group_errors_name_the_fix() {
        let bdf = Bdf::new(0, 3, 0, 0);
        let e = VfioError::NoGroupNode {
            bdf,
            group: 17,
            path: "/dev/vfio/17".into(),
        };
        let msg = e.to_string();
        assert!(msg.contains("modprobe vfio-pci"), "{msg}");
        assert!(msg.contains("0000:03:00.0"), "{msg}");
        assert!(msg.contains("iommu_groups"), "{msg}");
        let e = VfioError::NoIommuGroup { bdf };
        assert!(e.to_string().contains("amd_iommu=on"));
    }
}
