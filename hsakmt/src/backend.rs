//! What the library drives, named by `BAREBELL_HSAKMT_DEVICE`:
//!
//! - unset or `model`: the MI210 device model, built in this process;
//! - `vfio:DDDD:BB:DD.F`: a card bound to `vfio-pci`, opened through
//!   barebell's host platform (`barebell-host`), its DMA memory and the
//!   memory ROCR registers mapped through the IOMMU;
//! - `sysfs:DDDD:BB:DD.F`: a card with no driver, opened as root, its DMA
//!   memory locked hugepages the card reaches by physical address. Only
//!   with `BAREBELL_HSAKMT_UNSAFE_PHYSICAL_DMA=1` (the CLI's
//!   `--unsafe-physical-dma`): with no IOMMU, a process that dies without
//!   its teardown leaves the card writing to pages the kernel reuses. It
//!   has no IOMMU to give memory ROCR registers later one bus range
//!   either, so registration is refused there.
//!
//! Either way the one bring-up runs on the chosen platform, and the rest
//! of the library does not ask which it has, but for three things the
//! model has and a card does not: the model only moves when something
//! steps it ([`Backend::step`]), it can say what it refused
//! ([`Backend::device_errors`]), and it can be asked whether it is idle
//! at the end ([`Backend::quiescent`]).
//!
//! **A card has never been driven by this library**: no machine it was
//! written on has an AMD GPU. The card path's code up to the bring-up
//! runs in the tests with the model standing in behind the host
//! platform (`tests/card_stand_in.rs`).

use barebell::platform::Platform;
use barebell_host::{HwPlatform, Target};
use barebell_model::VirtualGpu;
use barebell_pcie::Bdf;

/// The environment variable that names the device.
pub const DEVICE_VAR: &str = "BAREBELL_HSAKMT_DEVICE";
/// The one that accepts DMA by physical address (`sysfs:`), set to `1`.
pub const UNSAFE_PHYSICAL_DMA_VAR: &str = "BAREBELL_HSAKMT_UNSAFE_PHYSICAL_DMA";

/// What `BAREBELL_HSAKMT_DEVICE` chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Model,
    Card(Target),
}

/// Reads `value`, the variable's value (`None`: unset); `physical_dma`:
/// whether [`UNSAFE_PHYSICAL_DMA_VAR`] is `1`.
pub fn choice(value: Option<&str>, physical_dma: bool) -> Result<Choice, String> {
    let v = match value.map(str::trim) {
        None | Some("") | Some("model") => return Ok(Choice::Model),
        Some(v) => v,
    };
    let bad = || {
        format!(
            "{DEVICE_VAR}={v}: expected `model`, `vfio:DDDD:BB:DD.F` or `sysfs:DDDD:BB:DD.F` (a PCI address as lspci -D prints it)"
        )
    };
    let (how, bdf) = v.split_once(':').ok_or_else(bad)?;
    let bdf = Bdf::parse(bdf).map_err(|e| format!("{}: {e}", bad()))?;
    match how {
        "vfio" => Ok(Choice::Card(Target::Vfio(bdf))),
        "sysfs" if physical_dma => Ok(Choice::Card(Target::Sysfs(bdf))),
        "sysfs" => Err(format!(
            "{DEVICE_VAR}={v}: refusing DMA by physical address without {UNSAFE_PHYSICAL_DMA_VAR}=1: with no IOMMU a process that dies without its teardown (SIGKILL, a crash) leaves the GPU writing to pages the kernel reuses; use vfio:{bdf}, or set the variable to accept that"
        )),
        _ => Err(bad()),
    }
}

/// What [`Backend::device_errors`] found, oldest first.
#[derive(Debug, Default)]
pub struct DeviceErrors {
    /// The CP's errors, in words.
    pub cp: Vec<String>,
    /// For each CP error, the GPU page fault it is (address and
    /// `HsaAccessAttributeFailure` bits), if it is one.
    pub faults: Vec<Option<(u64, u32)>>,
    /// The MEC's refusals, in words.
    pub mec: Vec<String>,
}

/// The device under the library, for the process's life (the bring-up
/// borrows it).
#[derive(Clone, Copy)]
pub enum Backend {
    Model(&'static VirtualGpu),
    Card(&'static HwPlatform),
}

impl core::fmt::Debug for Backend {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl Backend {
    /// The platform the bring-up runs on.
    pub fn platform(&self) -> &'static dyn Platform {
        match *self {
            Backend::Model(m) => m,
            Backend::Card(c) => c,
        }
    }

    /// What was opened, for messages.
    pub fn name(&self) -> &'static str {
        self.platform().name()
    }

    /// Gives the device `len` bytes of host memory at `host` at bus
    /// address `bus`: a window on the model's bus, or an IOMMU mapping on
    /// a card (`VFIO_IOMMU_MAP_DMA`, which pins the pages).
    ///
    /// # Safety
    /// The memory stays valid until [`Backend::unmap_dma`] of `bus`.
    pub unsafe fn map_dma(&self, bus: u64, host: *mut u8, len: u64) -> Result<(), String> {
        match *self {
            // SAFETY: this function's contract.
            Backend::Model(m) => unsafe { m.map_host_dma(bus, host, len) }
                .then_some(())
                .ok_or_else(|| format!("the device refused a window at bus {bus:#x}")),
            // SAFETY: this function's contract.
            Backend::Card(c) => unsafe { c.map_user_dma(host, len, bus) },
        }
    }

    /// Undoes [`Backend::map_dma`].
    pub fn unmap_dma(&self, bus: u64, len: u64) -> Result<(), String> {
        match *self {
            Backend::Model(m) => m
                .unmap_host_dma(bus)
                .then_some(())
                .ok_or_else(|| format!("no window at bus {bus:#x}")),
            Backend::Card(c) => c.unmap_user_dma(bus, len),
        }
    }

    /// Where registered memory goes on the device's bus: far above the
    /// model's DMA region and VRAM on the model; on a card, above the
    /// host platform's DMA region and inside a 39-bit IOMMU domain (the
    /// narrowest an x86 IOMMU gives: `[64 GiB, 320 GiB)`).
    pub fn registration_window(&self) -> (u64, u64) {
        match self {
            Backend::Model(_) => (0x7000_0000_0000, 1 << 40),
            Backend::Card(_) => (1 << 36, 1 << 38),
        }
    }

    /// One look: the model's CP, schedulers and queues take their steps
    /// (a card runs on its own: a yield). Whether it was idle.
    pub fn step(&self) -> bool {
        match *self {
            Backend::Model(m) => m.run_until_idle(1),
            Backend::Card(c) => card_step(c),
        }
    }

    /// What the device refused or faulted on so far: the CP's errors (with
    /// the GPU page fault each is, if any) and the MEC's refusals. A card
    /// reports none here (its faults arrive as interrupts this library
    /// does not read).
    pub fn device_errors(&self) -> DeviceErrors {
        let Backend::Model(m) = *self else {
            return DeviceErrors::default();
        };
        let (cp, faults): (Vec<String>, Vec<_>) = m
            .cp()
            .errors()
            .iter()
            .map(|e| (format!("the CP: {e}"), vm_fault(e)))
            .unzip();
        let mec = m
            .gc_9_4_3()
            .map(|gc| {
                gc.mec()
                    .refusals()
                    .iter()
                    .map(|r| format!("the MEC refused: {r}"))
                    .collect()
            })
            .unwrap_or_default();
        DeviceErrors { cp, faults, mec }
    }

    /// The model's whole state report (`BAREBELL_HSAKMT_DEBUG`).
    pub fn diagnostics(&self) -> Vec<String> {
        match self {
            Backend::Model(m) => m.diagnostics(),
            Backend::Card(_) => Vec::new(),
        }
    }

    /// Whether the model is left idle after the teardown (a card: not
    /// asked).
    pub fn quiescent(&self) -> Result<(), String> {
        match self {
            Backend::Model(m) => m.quiescent().map_err(|e| e.to_string()),
            Backend::Card(_) => Ok(()),
        }
    }
}

/// A card's look: a model standing in for it (tests) steps; real
/// hardware needs nothing, so the thread yields.
fn card_step(c: &'static HwPlatform) -> bool {
    c.step_stand_in().unwrap_or_else(|| {
        c.pause();
        true
    })
}

/// The faulting address and `HsaAccessAttributeFailure` bits of a CP
/// error that is a GPU page fault (the packet processor's or a wave's):
/// a permission fault is a write to a read-only page or an instruction
/// fetch from a non-executable one, anything else a page not present.
fn vm_fault(e: &barebell_model::cp::CpError) -> Option<(u64, u32)> {
    use crate::events::failure;
    use barebell_model::cp::CpError;
    use barebell_model::gmc::{Access, FaultReason, VmRefusal};
    use barebell_model::wave::{KernelFault, WaveFault};
    let (va, access, why) = match e {
        CpError::Vm { va, why, .. } => (*va, None, *why),
        CpError::Kernel {
            fault:
                KernelFault::Wave {
                    fault: WaveFault::Vm { vm, .. },
                    ..
                }
                | KernelFault::DescriptorVm { vm, .. },
            ..
        } => (vm.va, Some(vm.access), vm.why),
        _ => return None,
    };
    let bits = match (why, access) {
        (VmRefusal::Walk(FaultReason::Permission), Some(Access::Write)) => failure::READ_ONLY,
        (VmRefusal::Walk(FaultReason::Permission), Some(Access::Execute)) => failure::NO_EXECUTE,
        _ => failure::NOT_PRESENT,
    };
    Some((va, bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_names_the_model_or_a_card() {
        assert_eq!(choice(None, false), Ok(Choice::Model));
        assert_eq!(choice(Some("model"), false), Ok(Choice::Model));
        assert_eq!(choice(Some(""), false), Ok(Choice::Model));
        let bdf = Bdf::parse("0000:03:00.0").unwrap_or_else(|_| unreachable!());
        assert_eq!(
            choice(Some("vfio:0000:03:00.0"), false),
            Ok(Choice::Card(Target::Vfio(bdf)))
        );
        assert_eq!(
            choice(Some("sysfs:0000:03:00.0"), true),
            Ok(Choice::Card(Target::Sysfs(bdf)))
        );
    }

    #[test]
    fn sysfs_needs_the_physical_dma_opt_in() {
        let e = choice(Some("sysfs:0000:03:00.0"), false)
            .err()
            .unwrap_or_default();
        assert!(
            e.contains(
                "refusing DMA by physical address without BAREBELL_HSAKMT_UNSAFE_PHYSICAL_DMA=1"
            ),
            "{e}"
        );
        assert!(e.contains("use vfio:0000:03:00.0"), "{e}");
    }

    #[test]
    fn anything_else_is_refused_naming_the_accepted_forms() {
        for v in ["gpu0", "vfio:03:00", "pci:0000:03:00.0", "vfio:"] {
            let e = choice(Some(v), true).err().unwrap_or_default();
            assert!(
                e.contains("expected `model`, `vfio:DDDD:BB:DD.F`"),
                "{v}: {e}"
            );
            assert!(e.starts_with(&format!("{DEVICE_VAR}={v}")), "{v}: {e}");
        }
    }
}
