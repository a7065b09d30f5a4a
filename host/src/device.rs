//! Opening the GPU for `--vfio` and `--sysfs`: every check that can
//! refuse happens here, before anything is written to the device.
//!
//! Order (each refusal is an [`OpenError`] naming the values it saw):
//! the function exists; VFIO: it is bound to `vfio-pci` and has an IOMMU
//! group, then the device fd is opened; sysfs: it has no driver and we are
//! root. Then, through the config space of whichever backend opened it,
//! vendor 0x1002 and a display class, then BAR5 large enough for every
//! register barebell touches. Only then is anything written: memory
//! decode and bus mastering in the command register (sysfs `enable` plus
//! a config write, or a write through the VFIO config region), and BAR0,
//! BAR2 and BAR5 are mapped. No GPU register is written here.
//!
//! **Never run on a GPU.**

use crate::Target;
use crate::dma::{DmaError, DmaRegion};
use barebell::bus::Mmio;
use barebell_pcie::config::{
    BASE_CLASS_DISPLAY, COMMAND_MASTER, COMMAND_MEMORY, VENDOR_AMD_ATI, update_command,
};
use barebell_pcie::sysfs::{BarMapping, SysfsDevice, SysfsError};
use barebell_pcie::vfio::{VfioDevice, VfioError};
use barebell_pcie::{Bdf, ConfigSpace};
use core::ptr::NonNull;
use std::fmt;

/// BAR indices on AMD dGPUs (both VRAM and doorbells are 64-bit BARs, so
/// they take two slots each; registers are the 32-bit BAR5), as
/// `amdgpu_device_init()` and `amdgpu_doorbell_init()` use them.
pub(crate) const VRAM_BAR: u8 = 0;
pub(crate) const DOORBELL_BAR: u8 = 2;
pub(crate) const REGISTER_BAR: u8 = 5;

/// The smallest register BAR barebell accepts: the HDP flush page that
/// the `nbio` step remaps sits at BAR5 + `MMIO_REG_HOLE_OFFSET` (one page
/// below 512 KiB), so BAR5 must reach past it.
pub(crate) const MIN_REGISTER_BAR: u64 = barebell::nbio::MMIO_REG_HOLE_OFFSET as u64 + 4096;

/// Bytes of host DMA memory set up at open: two 2 MiB chunks (hugepages
/// on the sysfs path). The first is GTT for the PSP (its 1 MiB `fw_pri`
/// must be contiguous on the bus), the second holds the rings, MQDs,
/// the user queue and its signal at VA = host address.
pub(crate) const DMA_BYTES: usize = barebell::platform::DMA_BYTES;

/// Why the device was not opened ([`HwPlatform::open`](crate::HwPlatform::open)).
#[derive(Debug)]
pub enum OpenError {
    /// Not an AMD function; `via` names the config access that read the
    /// ids (for VFIO, proof that the device fd was opened).
    NotAmd {
        bdf: Bdf,
        vendor: u16,
        device: u16,
        via: &'static str,
    },
    /// AMD, but not a display controller (e.g. the GPU's HDMI audio
    /// function, or a chipset device).
    NotDisplay {
        bdf: Bdf,
        device: u16,
        class: (u8, u8, u8),
    },
    /// amdgpu owns the function.
    BoundToAmdgpu { bdf: Bdf },
    /// `--sysfs` with some other driver bound.
    DriverBound { bdf: Bdf, driver: String },
    /// `--vfio` on a function not bound to vfio-pci.
    NotBoundToVfio { bdf: Bdf, driver: Option<String> },
    /// `--vfio` on a function the kernel put in no IOMMU group.
    NoIommuGroup { bdf: Bdf },
    /// The sysfs target needs root.
    NotRoot { bdf: Bdf, why: &'static str },
    /// BAR `index` is absent or not memory.
    BarMissing { bdf: Bdf, index: u8 },
    /// BAR5 is smaller than `need` (`MIN_REGISTER_BAR`): the HDP flush
    /// page the `nbio` step remaps would lie past its end.
    RegisterBarTooSmall { bdf: Bdf, size: u64, need: u64 },
    /// A sysfs access (the function's directory, `resource`, a BAR
    /// mapping, `enable`) failed.
    Sysfs(SysfsError),
    /// A VFIO call (the container, the group, the device fd, a region)
    /// failed.
    Vfio(VfioError),
    /// The DMA region could not be set up.
    Dma(DmaError),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::NotAmd {
                bdf,
                vendor,
                device,
                via,
            } => write!(
                f,
                "{bdf} is not an AMD GPU (vendor {vendor:04x} device {device:04x}, read through {via}; expected vendor {VENDOR_AMD_ATI:04x})"
            ),
            OpenError::NotDisplay { bdf, device, class } => write!(
                f,
                "{bdf} (AMD device {device:04x}) is not a display controller (class {:02x}{:02x}{:02x}); pick the GPU function, usually function 0",
                class.0, class.1, class.2
            ),
            OpenError::BoundToAmdgpu { bdf } => write!(
                f,
                "{bdf} is bound to amdgpu; unbind it first (`echo {bdf} > /sys/bus/pci/devices/{bdf}/driver/unbind`), \
                 then for --vfio bind vfio-pci (`echo vfio-pci > /sys/bus/pci/devices/{bdf}/driver_override; echo {bdf} > /sys/bus/pci/drivers_probe`)"
            ),
            OpenError::DriverBound { bdf, driver } => write!(
                f,
                "{bdf} is bound to {driver}; --sysfs needs the function without a driver (`echo {bdf} > /sys/bus/pci/devices/{bdf}/driver/unbind`), or use --vfio if that driver is vfio-pci"
            ),
            OpenError::NotBoundToVfio { bdf, driver } => write!(
                f,
                "{bdf} is not bound to vfio-pci (driver: {}); bind it with `echo vfio-pci > /sys/bus/pci/devices/{bdf}/driver_override; echo {bdf} > /sys/bus/pci/drivers_probe` (unbind any driver first)",
                driver.as_deref().unwrap_or("none")
            ),
            OpenError::NoIommuGroup { bdf } => write!(
                f,
                "{bdf} has no IOMMU group, so VFIO cannot hand it out; turn the IOMMU on (amd_iommu=on / intel_iommu=on) or use --sysfs"
            ),
            OpenError::NotRoot { bdf, why } => {
                write!(f, "--sysfs {bdf} needs root: {why}")
            }
            OpenError::BarMissing { bdf, index } => {
                write!(f, "{bdf}: BAR{index} is absent or not a memory BAR")
            }
            OpenError::RegisterBarTooSmall { bdf, size, need } => write!(
                f,
                "{bdf}: register BAR5 is {size:#x} bytes, barebell needs at least {need:#x}"
            ),
            OpenError::Sysfs(e) => write!(f, "{e}"),
            OpenError::Vfio(e) => write!(f, "{e}"),
            OpenError::Dma(e) => write!(f, "{e}"),
        }
    }
}

impl From<SysfsError> for OpenError {
    fn from(e: SysfsError) -> Self {
        OpenError::Sysfs(e)
    }
}
impl From<VfioError> for OpenError {
    fn from(e: VfioError) -> Self {
        OpenError::Vfio(e)
    }
}
impl From<DmaError> for OpenError {
    fn from(e: DmaError) -> Self {
        OpenError::Dma(e)
    }
}

/// How the device was opened; kept so the fds (and the VFIO container)
/// live as long as the mappings.
#[derive(Debug)]
pub(crate) enum Backend {
    Vfio(VfioDevice),
    /// The config fd; the BAR mappings hold their own.
    Sysfs {
        config: SysfsDevice,
    },
}

/// An opened, checked GPU with its BARs mapped.
#[derive(Debug)]
pub(crate) struct Device {
    pub bdf: Bdf,
    pub device_id: u16,
    /// The register aperture over [`Self::register_bar`]. Declared before
    /// the mapping so it is dropped first.
    pub regs: Mmio,
    register_bar: BarMapping,
    /// VRAM as far as BAR0 reaches (all of it with resizable BAR, else
    /// usually the first 256 MiB).
    pub vram: BarMapping,
    /// The doorbell BAR.
    pub doorbells: BarMapping,
    /// BAR2's bus address (the doorbell self-ring aperture base).
    pub doorbell_bus: u64,
    /// Host memory the device can reach; unmapped from the IOMMU on drop.
    pub dma: DmaRegion,
    /// Behind a lock so that bus mastering can be cleared through a
    /// shared reference (the teardown holds the platform by `&`).
    pub backend: std::sync::Mutex<Backend>,
    /// The header [`Device::save_pci_state`] saved, for the restore.
    pub saved_header: std::sync::Mutex<Option<Box<barebell_pcie::config::SavedHeader>>>,
}

impl Drop for Device {
    fn drop(&mut self) {
        // The config descriptor closes with the backend below.
        barebell_pcie::emergency::disarm();
        let backend = self.backend.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Backend::Vfio(v) = backend {
            // Nothing to do on failure: the container goes away with the
            // fd right after, which drops the mapping anyway.
            let _ = v.unmap_dma(self.dma.bus(), self.dma.len() as u64);
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Vendor and class, read through the backend that opened the function.
fn check_identity(bdf: Bdf, cfg: &dyn ConfigSpace, via: &'static str) -> Result<u16, OpenError> {
    let (vendor, device) = (cfg.vendor_id(), cfg.device_id());
    if vendor != VENDOR_AMD_ATI {
        return Err(OpenError::NotAmd {
            bdf,
            vendor,
            device,
            via,
        });
    }
    let class = cfg.class();
    if class.0 != BASE_CLASS_DISPLAY {
        return Err(OpenError::NotDisplay { bdf, device, class });
    }
    Ok(device)
}

/// BAR sizes and BAR2's bus address from sysfs `resource` (present for
/// both backends: vfio-pci leaves the function in sysfs).
fn bar_layout(sys: &SysfsDevice) -> Result<([u64; 6], u64), OpenError> {
    let res = sys.resources()?;
    let mut sizes = [0u64; 6];
    for (s, r) in sizes.iter_mut().zip(res.iter()) {
        *s = r.size();
    }
    let bdf = sys.bdf;
    let size = |i: u8| sizes.get(usize::from(i)).copied().unwrap_or(0);
    for i in [VRAM_BAR, DOORBELL_BAR, REGISTER_BAR] {
        if size(i) == 0 {
            return Err(OpenError::BarMissing { bdf, index: i });
        }
    }
    if size(REGISTER_BAR) < MIN_REGISTER_BAR {
        return Err(OpenError::RegisterBarTooSmall {
            bdf,
            size: size(REGISTER_BAR),
            need: MIN_REGISTER_BAR,
        });
    }
    let doorbell_bus = res
        .get(usize::from(DOORBELL_BAR))
        .map(|r| r.start)
        .unwrap_or(0);
    Ok((sizes, doorbell_bus))
}

fn mmio(bar: &BarMapping, bdf: Bdf) -> Result<Mmio, OpenError> {
    let base = NonNull::new(bar.as_ptr()).ok_or(OpenError::BarMissing {
        bdf,
        index: REGISTER_BAR,
    })?;
    // SAFETY: the mapping is a shared, uncached mmap of BAR5 (sysfs
    // `resource5` or the VFIO region), `len` bytes long; `Device` keeps it
    // alive for as long as the `Mmio` (declared before it, so dropped
    // first).
    Ok(unsafe { Mmio::new(base, bar.len()) })
}

/// Opens `target`, running every check above, with a DMA region of
/// `dma_bytes` (at least [`DMA_BYTES`]).
pub(crate) fn open(target: Target, dma_bytes: usize) -> Result<Device, OpenError> {
    let dma_bytes = dma_bytes.max(DMA_BYTES);
    // A BAR access while the device's memory decode is off raises SIGBUS
    // under VFIO: make it read all ones, which the register waits report
    // as the device gone (issue 20). Failing to install only leaves the
    // default action (the process dies on such an access), so go on.
    if let Err(e) = barebell_pcie::sigbus::install() {
        eprintln!(
            "barebell: warning: no SIGBUS handler ({e}); a BAR access to a vanished device will kill the process"
        );
    }
    match target {
        Target::Vfio(bdf) => open_vfio(bdf, dma_bytes),
        Target::Sysfs(bdf) => open_sysfs(bdf, dma_bytes),
    }
}

fn open_vfio(bdf: Bdf, dma_bytes: usize) -> Result<Device, OpenError> {
    let sys = SysfsDevice::open(bdf)?;
    match sys.driver() {
        Some(d) if d == "vfio-pci" => {}
        Some(d) if d == "amdgpu" => return Err(OpenError::BoundToAmdgpu { bdf }),
        driver => return Err(OpenError::NotBoundToVfio { bdf, driver }),
    }
    if sys.iommu_group().is_none() {
        return Err(OpenError::NoIommuGroup { bdf });
    }
    let mut dev = VfioDevice::open(bdf)?;
    let device_id = check_identity(bdf, &dev, "the VFIO config region")?;
    let (_, doorbell_bus) = bar_layout(&sys)?;
    // Memory decode and bus mastering (the GPU's DMA into the GTT), as
    // amdgpu_device_init() gets them from pci_enable_device() and
    // pci_set_master().
    update_command(&mut dev, COMMAND_MEMORY | COMMAND_MASTER, 0);
    let register_bar = dev.map_region(u32::from(REGISTER_BAR))?;
    let regs = mmio(&register_bar, bdf)?;
    let vram = dev.map_region(u32::from(VRAM_BAR))?;
    let doorbells = dev.map_region(u32::from(DOORBELL_BAR))?;
    let dma = DmaRegion::for_vfio(&dev, dma_bytes)?;
    Ok(Device {
        bdf,
        device_id,
        regs,
        register_bar,
        vram,
        doorbells,
        doorbell_bus,
        dma,
        backend: std::sync::Mutex::new({
            // A second stop signal clears bus mastering through this.
            let (fd, base) = dev.config_fd();
            barebell_pcie::emergency::arm(fd, base);
            Backend::Vfio(dev)
        }),
        saved_header: std::sync::Mutex::new(None),
    })
}

fn open_sysfs(bdf: Bdf, dma_bytes: usize) -> Result<Device, OpenError> {
    let sys = SysfsDevice::open(bdf)?;
    let device_id = check_identity(bdf, &sys, "sysfs config")?;
    match sys.driver() {
        None => {}
        Some(d) if d == "amdgpu" => return Err(OpenError::BoundToAmdgpu { bdf }),
        Some(driver) => return Err(OpenError::DriverBound { bdf, driver }),
    }
    if !is_root() {
        return Err(OpenError::NotRoot {
            bdf,
            why: "resourceN mmaps and /proc/self/pagemap's physical frame numbers are root-only",
        });
    }
    crate::dma::check_no_translation(&sys)?;
    let (_, doorbell_bus) = bar_layout(&sys)?;
    sys.enable()?;
    let mut sys = sys;
    update_command(&mut sys, COMMAND_MEMORY | COMMAND_MASTER, 0);
    let register_bar = sys.map_bar(REGISTER_BAR)?;
    let regs = mmio(&register_bar, bdf)?;
    let vram = sys.map_bar(VRAM_BAR)?;
    let doorbells = sys.map_bar(DOORBELL_BAR)?;
    let dma = DmaRegion::physical(dma_bytes)?;
    Ok(Device {
        bdf,
        device_id,
        regs,
        register_bar,
        vram,
        doorbells,
        doorbell_bus,
        dma,
        backend: std::sync::Mutex::new({
            // A second stop signal clears bus mastering through this.
            let (fd, base) = sys.config_fd();
            barebell_pcie::emergency::arm(fd, base);
            Backend::Sysfs { config: sys }
        }),
        saved_header: std::sync::Mutex::new(None),
    })
}

impl Device {
    /// BAR5's length.
    pub fn register_bar_len(&self) -> usize {
        self.register_bar.len()
    }

    /// Sets or clears `PCI_COMMAND` bus master through the config space
    /// of the backend that opened the function (`pci_set_master()` /
    /// `pci_clear_master()`); memory decode stays on. Unverified on
    /// hardware.
    pub fn set_bus_master(&self, on: bool) {
        let (set, clear) = if on {
            (COMMAND_MASTER, 0)
        } else {
            (0, COMMAND_MASTER)
        };
        let mut b = self.backend.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *b {
            Backend::Vfio(v) => update_command(v, set, clear),
            Backend::Sysfs { config } => update_command(config, set, clear),
        };
    }

    /// Clears ASPM Control in the PCI Express capability's Link Control
    /// (tinygrad's `AMDev._disable_aspm()`); `false` when the function has
    /// no PCI Express capability. Unverified on hardware.
    pub fn disable_aspm(&self) -> bool {
        use barebell_pcie::caps::express::Express;
        let mut b = self.backend.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *b {
            Backend::Vfio(v) => Express::find(v).map(|e| e.disable_aspm(v)),
            Backend::Sysfs { config } => Express::find(config).map(|e| e.disable_aspm(config)),
        }
        .is_some()
    }

    /// `pci_save_state()` of the type-0 header through the backend, before
    /// a mode-1 reset clears it. Unverified on hardware.
    pub fn save_pci_state(&self) {
        let b = self.backend.lock().unwrap_or_else(|e| e.into_inner());
        let saved = match &*b {
            Backend::Vfio(v) => barebell_pcie::config::save_header(v),
            Backend::Sysfs { config } => barebell_pcie::config::save_header(config),
        };
        *self.saved_header.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(saved));
    }

    /// `pci_restore_state()` of what [`Device::save_pci_state`] saved: the
    /// BARs and the rest of the header, COMMAND last. `false` when nothing
    /// was saved. Unverified on hardware.
    pub fn restore_pci_state(&self) -> bool {
        let Some(saved) = self
            .saved_header
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_deref()
            .copied()
        else {
            return false;
        };
        let mut b = self.backend.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *b {
            Backend::Vfio(v) => barebell_pcie::config::restore_header(v, &saved),
            Backend::Sysfs { config } => barebell_pcie::config::restore_header(config, &saved),
        };
        true
    }

    /// How the device was opened, for the report.
    pub fn how(&self) -> &'static str {
        match *self.backend.lock().unwrap_or_else(|e| e.into_inner()) {
            Backend::Vfio(_) => "vfio",
            Backend::Sysfs { .. } => "sysfs",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use barebell_pcie::mem::ConfigArray;

    /// Config header bytes: vendor/device at 0x00, class code (base, sub,
    /// prog-if) at 0x0B/0x0A/0x09, per the PCI header layout.
    fn header(vendor: u16, device: u16, class: [u8; 3]) -> ConfigArray {
        let mut b = [0u8; 256];
        b[0..2].copy_from_slice(&vendor.to_le_bytes());
        b[2..4].copy_from_slice(&device.to_le_bytes());
        b[0x0B] = class[0];
        b[0x0A] = class[1];
        b[0x09] = class[2];
        ConfigArray::from_bytes(&b)
    }

    #[test]
    fn identity_checks_vendor_then_class() {
        let bdf = Bdf::parse("0000:03:00.0").unwrap();
        // A VGA-compatible AMD function (class 03 00 00) passes.
        let gpu = header(0x1002, 0x744c, [0x03, 0x00, 0x00]);
        assert_eq!(check_identity(bdf, &gpu, "test").unwrap(), 0x744c);
        // So does a display controller that is not VGA (03 80 00).
        let other = header(0x1002, 0x7550, [0x03, 0x80, 0x00]);
        assert_eq!(check_identity(bdf, &other, "test").unwrap(), 0x7550);
        // The GPU's HDMI audio function (multimedia audio, 04 03 00).
        let audio = header(0x1002, 0xab30, [0x04, 0x03, 0x00]);
        let e = check_identity(bdf, &audio, "test").unwrap_err();
        assert!(
            matches!(
                e,
                OpenError::NotDisplay {
                    device: 0xab30,
                    class: (4, 3, 0),
                    ..
                }
            ),
            "{e}"
        );
        // Another vendor is refused before its class is looked at.
        let intel = header(0x8086, 0x56a0, [0x03, 0x00, 0x00]);
        let e = check_identity(bdf, &intel, "sysfs config").unwrap_err();
        assert!(
            e.to_string()
                .contains("is not an AMD GPU (vendor 8086 device 56a0, read through sysfs config"),
            "{e}"
        );
    }
}
