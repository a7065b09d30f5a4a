//! A GPU opened through VFIO or sysfs, as a [`Platform`] the one bring-up
//! sequence runs on.
//!
//! **Never run on a GPU.** The same bring-up runs on the device model in
//! every test; what differs here is only where the BARs and the DMA
//! region come from (`crate::device`, `crate::dma`).

use crate::Target;
use crate::device::{self, Device, OpenError};
use barebell::bus::RegisterBus;
use barebell::platform::{Aperture, DmaRegion, Platform};
use barebell::time::{Clock, StdClock};
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};

/// An opened GPU.
#[derive(Debug)]
pub struct HwPlatform {
    /// Dropped by hand in [`HwPlatform`]'s `Drop`, or leaked there when
    /// the device may still reach its DMA memory.
    parts: ManuallyDrop<Parts>,
    name: String,
    clock: StdClock,
    claimed: AtomicBool,
    /// Whether the last `set_bus_master` turned bus mastering on: the
    /// device may then still read and write the DMA region.
    master_on: AtomicBool,
}

/// Where the BARs come from: an opened device, or (in tests) the device
/// model standing in for one, with the DMA region still allocated by this
/// module's hardware code.
#[derive(Debug)]
enum Parts {
    Device(Device),
    #[cfg(any(test, feature = "model-stand-in"))]
    Model {
        gpu: Box<barebell_model::VirtualGpu>,
        dma: crate::dma::DmaRegion,
    },
}

impl HwPlatform {
    /// Opens `target` with every refusal check of `device::open`: the
    /// function exists, is bound as the target needs, is an AMD display
    /// controller with a large enough BAR5; only then are the BARs mapped
    /// and the DMA region set up.
    pub fn open(target: Target) -> Result<Self, OpenError> {
        Self::open_with_dma(target, barebell::platform::DMA_BYTES)
    }

    /// [`HwPlatform::open`] with a DMA region of `dma_bytes` (at least
    /// the bring-up's own [`barebell::platform::DMA_BYTES`]): room for
    /// a user's memory beside the bring-up's (`Options::user_memory`).
    pub fn open_with_dma(target: Target, dma_bytes: usize) -> Result<Self, OpenError> {
        let dev = device::open(target, dma_bytes)?;
        Ok(HwPlatform {
            name: format!("{target}"),
            parts: ManuallyDrop::new(Parts::Device(dev)),
            clock: StdClock::default(),
            claimed: AtomicBool::new(false),
            master_on: AtomicBool::new(false),
        })
    }

    /// Reads the DMA region's physical addresses again (`--sysfs`; a no-op
    /// through VFIO), failing if a chunk moved (`DmaRegion::recheck`).
    pub fn recheck_dma(&self) -> Result<(), String> {
        let dma = match &*self.parts {
            Parts::Device(d) => &d.dma,
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { dma, .. } => dma,
        };
        dma.recheck().map_err(|e| e.to_string())
    }

    /// Maps `len` bytes of the caller's memory at `host` (page aligned) at
    /// `iova` in the device's IOMMU domain (`VFIO_IOMMU_MAP_DMA`, which
    /// pins the pages), for memory a user hands the device after the
    /// bring-up (ROCR's registered memory). A `--sysfs` target has no
    /// IOMMU to give scattered pages one bus range: refused, saying so.
    ///
    /// # Safety
    /// `[host, host + len)` stays mapped and owned by the caller until
    /// [`HwPlatform::unmap_user_dma`] of the same `iova`.
    pub unsafe fn map_user_dma(&self, host: *mut u8, len: u64, iova: u64) -> Result<(), String> {
        match &*self.parts {
            Parts::Device(d) => match &*d.backend.lock().unwrap_or_else(|e| e.into_inner()) {
                // SAFETY: the caller keeps the range valid until the unmap
                // (this function's contract).
                device::Backend::Vfio(v) => unsafe { v.map_dma(host, len, iova) }
                    .map_err(|e| format!("VFIO_IOMMU_MAP_DMA at {iova:#x}: {e}")),
                device::Backend::Sysfs { .. } => Err(format!(
                    "{}: a card opened through sysfs has no IOMMU mapping for memory handed over later; open it through vfio",
                    self.name
                )),
            },
            #[cfg(any(test, feature = "model-stand-in"))]
            // SAFETY: as above; the model reads the range only while mapped.
            Parts::Model { gpu, .. } => unsafe { gpu.map_host_dma(iova, host, len) }
                .then_some(())
                .ok_or_else(|| format!("the model refused a window at {iova:#x}")),
        }
    }

    /// Undoes [`HwPlatform::map_user_dma`].
    pub fn unmap_user_dma(&self, iova: u64, len: u64) -> Result<(), String> {
        match &*self.parts {
            Parts::Device(d) => match &*d.backend.lock().unwrap_or_else(|e| e.into_inner()) {
                device::Backend::Vfio(v) => v
                    .unmap_dma(iova, len)
                    .map(|_| ())
                    .map_err(|e| format!("VFIO_IOMMU_UNMAP_DMA at {iova:#x}: {e}")),
                device::Backend::Sysfs { .. } => Ok(()),
            },
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => {
                let _ = len;
                gpu.unmap_host_dma(iova)
                    .then_some(())
                    .ok_or_else(|| format!("no window at {iova:#x}"))
            }
        }
    }

    /// One look by the model standing in for the card (feature
    /// `model-stand-in`): whether it was idle. `None` for a card, which
    /// runs on its own.
    pub fn step_stand_in(&self) -> Option<bool> {
        match &*self.parts {
            Parts::Device(_) => None,
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => Some(gpu.run_until_idle(1)),
        }
    }

    /// One line saying what was opened.
    // One arm without the model stand-in (outside tests and the
    // `model-stand-in` feature).
    #[allow(clippy::infallible_destructuring_match)]
    pub fn describe(&self) -> String {
        let d = match &*self.parts {
            Parts::Device(d) => d,
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => return format!("{} standing in for a GPU", gpu.name()),
        };
        format!(
            "opened {} through {}: AMD device {:04x}; BAR5 {:#x} bytes, BAR0 {:#x} bytes, doorbell BAR2 {:#x} bytes at bus {:#x}; DMA region {:#x} bytes at bus {:#x} (unverified on hardware)",
            d.bdf,
            d.how(),
            d.device_id,
            d.register_bar_len(),
            d.vram.len(),
            d.doorbells.len(),
            d.doorbell_bus,
            d.dma.len(),
            d.dma.bus()
        )
    }

    /// Keeps the device's memory for the rest of the process: once the
    /// rings exist, MES and the CP keep addresses in the DMA region and may
    /// read them until a reset, which barebell does not do yet; returning
    /// that memory to the OS (or unmapping it from the IOMMU) while the
    /// device can still reach it would hand the device someone else's
    /// memory (without an IOMMU) or fault it. The process exit closes the
    /// VFIO fds, which tears the IOMMU mapping down.
    pub fn retire(self) {
        std::mem::forget(self);
    }
}

/// A platform let go while the device may still reach its memory (bus
/// mastering left on: a panic that skipped the teardown, a teardown that
/// failed before that stage) must not hand that memory back: the device
/// could write into whatever the OS gives it next (`--sysfs`, no IOMMU)
/// or fault on it. Bus mastering is cleared, and the BAR mappings and the
/// DMA region are kept until the process exits, with a message.
impl Drop for HwPlatform {
    fn drop(&mut self) {
        if self.master_on.load(Ordering::Acquire) {
            Platform::set_bus_master(self, false);
            eprintln!(
                "barebell: {}: let go with bus mastering on (no complete teardown): bus mastering cleared, the DMA memory kept mapped until the process exits",
                self.name
            );
            return;
        }
        // SAFETY: `parts` is dropped exactly once, here, and nothing
        // reads it after: this is the platform's last use.
        unsafe { ManuallyDrop::drop(&mut self.parts) }
    }
}

fn aperture(ptr: *mut u8, len: usize) -> Aperture {
    Aperture {
        host: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
        len: if ptr.is_null() { 0 } else { len },
    }
}

// SAFETY: `Device` maps BAR5 as an uncached shared mapping wrapped in an
// `Mmio` (one volatile access per call); BAR0 and BAR2 as shared BAR
// mappings of their full length; the DMA region is locked, zeroed host
// memory at `DMA_HOST_VA`, reached by the device at each chunk's bus
// address (an IOVA mapping through VFIO, or the chunk's physical address
// from pagemap with the IOMMU off). All of it lives as long as the
// `Device`, which this value owns, and nothing else in the process uses
// it.
unsafe impl Platform for HwPlatform {
    fn regs(&self) -> &dyn RegisterBus {
        match &*self.parts {
            Parts::Device(d) => &d.regs,
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => gpu.regs(),
        }
    }
    fn regs_len(&self) -> usize {
        match &*self.parts {
            Parts::Device(d) => d.register_bar_len(),
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => gpu.regs_len(),
        }
    }
    fn vram(&self) -> Aperture {
        match &*self.parts {
            Parts::Device(d) => aperture(d.vram.as_ptr(), d.vram.len()),
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => gpu.vram(),
        }
    }
    fn doorbells(&self) -> Aperture {
        match &*self.parts {
            Parts::Device(d) => aperture(d.doorbells.as_ptr(), d.doorbells.len()),
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => gpu.doorbells(),
        }
    }
    fn doorbell_bus(&self) -> u64 {
        match &*self.parts {
            Parts::Device(d) => d.doorbell_bus,
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => gpu.doorbell_bus(),
        }
    }
    fn dma(&self) -> DmaRegion<'_> {
        let r = match &*self.parts {
            Parts::Device(d) => &d.dma,
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { dma, .. } => dma,
        };
        DmaRegion {
            host: NonNull::new(r.as_ptr()).unwrap_or(NonNull::dangling()),
            len: r.len(),
            chunk_bus: r.chunks(),
        }
    }
    fn clock(&self) -> &dyn Clock {
        match &*self.parts {
            Parts::Device(_) => &self.clock,
            // A model standing in for a card keeps the model's simulated
            // time (its PSP answers after so much of it), so the bring-up
            // waits on that time here as on the model target.
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => gpu.clock(),
        }
    }
    fn pause(&self) {
        match &*self.parts {
            Parts::Device(_) => std::thread::yield_now(),
            // The model's firmware stand-ins run in its pause.
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => gpu.pause(),
        }
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::AcqRel)
    }
    fn set_bus_master(&self, on: bool) -> bool {
        self.master_on.store(on, Ordering::Release);
        match &*self.parts {
            Parts::Device(d) => {
                d.set_bus_master(on);
                true
            }
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => Platform::set_bus_master(&**gpu, on),
        }
    }
    fn save_pci_state(&self) -> bool {
        match &*self.parts {
            Parts::Device(d) => {
                d.save_pci_state();
                true
            }
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => Platform::save_pci_state(&**gpu),
        }
    }
    fn restore_pci_state(&self) -> bool {
        match &*self.parts {
            Parts::Device(d) => d.restore_pci_state(),
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => Platform::restore_pci_state(&**gpu),
        }
    }
    fn disable_aspm(&self) -> bool {
        match &*self.parts {
            Parts::Device(d) => d.disable_aspm(),
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => Platform::disable_aspm(&**gpu),
        }
    }
    fn pci_device_id(&self) -> Option<u16> {
        match &*self.parts {
            Parts::Device(d) => Some(d.device_id),
            #[cfg(any(test, feature = "model-stand-in"))]
            Parts::Model { gpu, .. } => Platform::pci_device_id(&**gpu),
        }
    }
}

/// Held by every test that maps the hardware DMA region, which sits at one
/// fixed address (`DMA_HOST_VA`): tests run on parallel threads. Feature
/// `model-stand-in` (tests only).
#[cfg(any(test, feature = "model-stand-in"))]
pub static FIXED_DMA: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The hardware platform with the device model standing in for the card,
/// for tests of code that drives an [`HwPlatform`] (feature
/// `model-stand-in`; hold [`FIXED_DMA`] while it lives): this module's
/// `Platform` impl and the hardware DMA region at `DMA_HOST_VA`, over the
/// BARs of a navi31 model (seed 1) whose BAR0 backs `bar0_bytes` of VRAM
/// and whose PSP expects the firmware `files` holds.
///
/// The VRAM backing is never freed: the model keeps pointers into it for
/// the rest of the process.
#[cfg(any(test, feature = "model-stand-in"))]
pub fn model_standing_in(
    files: barebell_model::vgpu::Files<'_>,
    bar0_bytes: usize,
) -> Result<HwPlatform, String> {
    model_of_part_standing_in(
        barebell_model::parts::navi31(),
        files,
        bar0_bytes,
        barebell::platform::DMA_BYTES,
    )
}

/// [`model_standing_in`] with a model of `part` (seed 1) behind the BARs
/// and a DMA region of `dma_bytes` (as [`HwPlatform::open_with_dma`]).
#[cfg(any(test, feature = "model-stand-in"))]
pub fn model_of_part_standing_in(
    part: barebell_model::parts::Part,
    files: barebell_model::vgpu::Files<'_>,
    bar0_bytes: usize,
    dma_bytes: usize,
) -> Result<HwPlatform, String> {
    use barebell_model::vgpu::HostMemory;
    use barebell_model::{Seed, VirtualGpu};
    let dma =
        crate::dma::DmaRegion::anonymous_for_test(dma_bytes.max(barebell::platform::DMA_BYTES))
            .map_err(|e| e.to_string())?;
    let layout = std::alloc::Layout::from_size_align(bar0_bytes.max(4096), 4096)
        .map_err(|e| format!("the model's VRAM backing: {e}"))?;
    // SAFETY: a non-zero size; never freed (the model keeps pointers into
    // it for the rest of the process).
    let vram = unsafe { std::alloc::alloc_zeroed(layout) };
    let vram = NonNull::new(vram).ok_or("out of memory for the model's VRAM backing")?;
    let dma_host = NonNull::new(dma.as_ptr()).ok_or("null DMA region")?;
    // SAFETY: `vram` is never freed, zeroed and 4 KiB aligned; the DMA
    // region is owned by the platform below, which drops the model
    // (`Parts::Model` declares `gpu` first) before it unmaps.
    let mem = unsafe { HostMemory::new(vram, layout.size(), dma_host, dma.len(), None) };
    let gpu = VirtualGpu::new(part, files, mem, Seed(1)).map_err(|e| e.to_string())?;
    Ok(HwPlatform {
        parts: ManuallyDrop::new(Parts::Model {
            gpu: Box::new(gpu),
            dma,
        }),
        name: "model standing in for vfio".into(),
        clock: StdClock::default(),
        claimed: AtomicBool::new(false),
        master_on: AtomicBool::new(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use barebell::bus::trace::Access;
    use barebell_bringup::{FirmwareDir, Mapping, Options, Sink, Step};
    use barebell_model::vgpu::HostMemory;
    use barebell_model::{Seed, VirtualGpu, parts};
    use std::cell::RefCell;

    /// Keeps every step line and every traced access.
    #[derive(Default)]
    struct Record(RefCell<Vec<String>>);
    impl Sink for Record {
        fn step(&self, step: Step, detail: std::fmt::Arguments<'_>) {
            self.0.borrow_mut().push(format!("step {step}: {detail}"));
        }
        fn tracing(&self) -> bool {
            true
        }
        fn access(&self, a: Access) {
            self.0.borrow_mut().push(format!("  {a}"));
        }
    }

    fn run(p: &dyn Platform) -> (Vec<String>, barebell_bringup::gmc::LayoutReport) {
        let fw = FirmwareDir::system();
        let sink = Record::default();
        let opts = Options {
            until: Step::Queue,
            mapping: Some(Mapping::Mes),
            ..Default::default()
        };
        let layout = {
            let mut gpu = barebell_bringup::run(p, &fw, &opts, &sink).unwrap();
            let layout = gpu.memory.unwrap();
            if let Some(q) = gpu.queue.take() {
                q.unmap().unwrap();
            }
            layout
        };
        (sink.0.into_inner(), layout)
    }

    /// Bytes of VRAM the model's BAR0 backs, as the CLI's model target
    /// has them (`barebell-cli`'s `target::MODEL_BAR0_BYTES`).
    const MODEL_BAR0_BYTES: usize = 64 << 20;

    /// [`model_standing_in`] with the system's firmware directory.
    fn stand_in() -> HwPlatform {
        model_standing_in(&barebell_model::FilesDir::system(), MODEL_BAR0_BYTES).unwrap()
    }

    /// `barebell bringup --model --part navi31 --mapping mes --trace` and
    /// the hardware target's platform (this file's `Platform` impl and
    /// `crate::dma`'s DMA region at `DMA_VA`, over the same model BARs in
    /// place of a card's) run the same steps with the same layout: the same
    /// GART placement, VMID0 range and process-table root, and register
    /// traces equal line for line (the hardware platform's own accesses,
    /// config space and the IOMMU, are not register accesses).
    #[test]
    fn the_model_and_hardware_paths_trace_the_same_bring_up() {
        let _fixed = FIXED_DMA.lock().unwrap_or_else(|e| e.into_inner());
        let fw = FirmwareDir::system();
        // The model target, as `barebell bringup --model --part navi31`
        // builds it (`barebell-cli`'s `target::model`, seed 1).
        let mem = HostMemory::allocate(MODEL_BAR0_BYTES).unwrap();
        let model = VirtualGpu::new(
            parts::navi31(),
            &barebell_model::FilesDir(fw.0.clone()),
            mem,
            Seed(1),
        )
        .unwrap();
        let (model_trace, model_layout) = run(&model);
        drop(model);
        // The hardware path's DMA region, at the same fixed address.
        let hw = stand_in();
        let (hw_trace, hw_layout) = run(&hw);
        assert_eq!(model_layout, hw_layout);
        assert_eq!(
            model_layout.ring_area.0,
            barebell::platform::DMA_HOST_VA as u64 + 2 * 1024 * 1024
        );
        let first_diff = model_trace.iter().zip(&hw_trace).position(|(a, b)| a != b);
        assert_eq!(
            first_diff,
            None,
            "{:?}",
            first_diff.map(|i| (&model_trace[i], &hw_trace[i]))
        );
        assert_eq!(model_trace.len(), hw_trace.len());
        let gmc = model_trace
            .iter()
            .find(|l| l.starts_with("step gmc:"))
            .unwrap();
        assert!(
            gmc.contains("GART 0x7fff00000000..=0x7fff1fffffff"),
            "{gmc}"
        );
    }

    /// Let go with bus mastering on, the platform clears it and keeps the
    /// DMA region mapped (the device could still write it); let go with
    /// it off, the region is unmapped as usual.
    #[test]
    fn dropped_with_bus_mastering_on_the_dma_region_is_kept() {
        let _fixed = FIXED_DMA.lock().unwrap_or_else(|e| e.into_inner());
        let va = barebell::platform::DMA_HOST_VA;
        let mapped = || {
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
            maps.lines().any(|l| {
                l.split('-')
                    .next()
                    .and_then(|a| usize::from_str_radix(a, 16).ok())
                    == Some(va)
            })
        };
        let hw = stand_in();
        assert!(mapped());
        Platform::set_bus_master(&hw, true);
        Platform::set_bus_master(&hw, false);
        drop(hw);
        assert!(!mapped(), "unmapped after a clean stop");

        let hw = stand_in();
        Platform::set_bus_master(&hw, true);
        let len = match &*hw.parts {
            Parts::Model { dma, .. } => dma.len(),
            Parts::Device(_) => unreachable!(),
        };
        drop(hw);
        assert!(
            mapped(),
            "the DMA region was unmapped with bus mastering on"
        );
        // Put the fixed address back for the other tests.
        // SAFETY: the leaked region is exactly `len` bytes at `va`, and
        // nothing refers to it any more (its platform was dropped).
        unsafe {
            libc::munmap(va as *mut libc::c_void, len);
        }
        assert!(!mapped());
    }
}
