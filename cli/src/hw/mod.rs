//! The real-hardware targets of `barebell bringup` and `barebell latency`:
//! `--vfio BDF` and `--sysfs BDF`.
//!
//! **Never run on a GPU.** No machine this was written on has an AMD GPU.
//! What has run: the argument handling and every refusal that a non-AMD
//! device can trigger (tests in `cli/tests/hw_*.rs`), and, in the QEMU
//! guest of `cargo xtask qemu-pci`, the VFIO open path up to the vendor
//! refusal on QEMU's `edu` device. The bring-up steps behind the checks
//! call the same runtime functions the model path calls, over the BAR5
//! mapping instead of a model; [`chain::run`] also runs in `cargo test`
//! over a platform built from the device models (`model_platform`), to a
//! ready queue on both parts by all three mappings, and the latency loop
//! runs over that queue there.
//!
//! - [`device`] opens the function (VFIO or sysfs), refuses anything that
//!   is not a usable AMD GPU, and maps BAR0 (VRAM), BAR2 (doorbells) and
//!   BAR5 (registers);
//! - [`dma`] provides host memory the GPU can reach at a fixed host
//!   address, with each 2 MiB chunk's bus address (an IOMMU mapping
//!   through VFIO, or pinned hugepages resolved through [`pagemap`] when
//!   the IOMMU is off);
//! - [`firmware`] names the blobs the discovered IP versions need;
//! - [`chain`] runs the bring-up steps in Linux's order;
//! - [`rings`] takes it from MES start to a mapped queue whose first
//!   packet (an AQL barrier: there is no code-object loader) completed.

pub mod chain;
pub mod device;
pub mod dma;
pub mod firmware;
#[cfg(test)]
mod model_platform;
pub mod pagemap;
pub mod rings;

use barebell_pcie::Bdf;
use clap::Args;

/// Which device the command drives. One of the three flags at most;
/// none means the model.
#[derive(Args, Debug, Clone, Default)]
#[group(id = "target", multiple = false)]
pub struct TargetArgs {
    /// Run against the built-in device model (the default).
    #[arg(long)]
    pub model: bool,
    /// UNVERIFIED ON HARDWARE. Drive the GPU at BDF (e.g. 0000:03:00.0)
    /// through VFIO: the function must be bound to vfio-pci and sit in an
    /// IOMMU group. Never run on a GPU.
    #[arg(long, value_name = "BDF", value_parser = parse_bdf)]
    pub vfio: Option<Bdf>,
    /// UNVERIFIED ON HARDWARE. Drive the GPU at BDF through sysfs
    /// `resourceN` mmaps: needs root, no driver bound (amdgpu unbound),
    /// and the IOMMU off or in passthrough (DMA uses physical addresses).
    /// Never run on a GPU.
    #[arg(long, value_name = "BDF", value_parser = parse_bdf)]
    pub sysfs: Option<Bdf>,
}

fn parse_bdf(s: &str) -> Result<Bdf, String> {
    Bdf::parse(s).map_err(|e| e.to_string())
}

/// A hardware target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Vfio(Bdf),
    Sysfs(Bdf),
}

impl TargetArgs {
    /// The hardware target, or `None` for the model.
    pub fn hardware(&self) -> Option<Target> {
        match (self.vfio, self.sysfs) {
            (Some(b), _) => Some(Target::Vfio(b)),
            (None, Some(b)) => Some(Target::Sysfs(b)),
            (None, None) => None,
        }
    }
}

impl core::fmt::Display for Target {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Target::Vfio(b) => write!(f, "vfio {b}"),
            Target::Sysfs(b) => write!(f, "sysfs {b}"),
        }
    }
}

/// `barebell bringup --vfio|--sysfs`: the steps up to `until` (and with
/// `mapping`, MES start, the rings and a mapped queue whose barrier
/// completed, then unmapped) on the GPU.
pub fn bringup(
    target: Target,
    until: crate::bringup::Step,
    trace: bool,
    mapping: Option<crate::latency_target::MappingMode>,
    firmware_dir: &std::path::Path,
) -> Result<(), String> {
    let o = chain::Options {
        until,
        trace,
        mapping,
        firmware_dir,
    };
    let fail = |e: chain::HwError| format!("{target}: {e}");
    if let Some(ready) = chain::bring_up(target, &o).map_err(fail)? {
        ready.unmap().map_err(fail)?;
        println!("step unmap: the queue is off the hardware");
    }
    Ok(())
}

/// `barebell latency --vfio|--sysfs`: brings the GPU up to a mapped user
/// queue (the mapping asked for, MES by default) and hands it to the
/// model path's measurement loop and reports. The packet measured is the
/// BARRIER_AND the bring-up ended with, not a dispatch.
pub fn latency_target(
    target: Target,
    mapping: Option<crate::latency_target::MappingMode>,
    firmware_dir: &std::path::Path,
) -> Result<crate::latency_target::Target, String> {
    let mode = mapping.unwrap_or(crate::latency_target::MappingMode::Mes);
    let o = chain::Options {
        until: crate::bringup::Step::Rlc,
        trace: false,
        mapping: Some(mode),
        firmware_dir,
    };
    let fail = |e: chain::HwError| format!("{target}: {e}");
    let ready = chain::bring_up(target, &o)
        .map_err(fail)?
        .ok_or_else(|| format!("{target}: the bring-up stopped before the queue"))?;
    Ok(into_target(ready))
}

/// The latency loop's view of a mapped hardware queue; finishing it
/// unmaps the queue.
pub fn into_target(ready: rings::Ready) -> crate::latency_target::Target {
    let rings::Ready {
        queue,
        signal,
        mapping,
        mut mapper,
        create_ns,
        ..
    } = ready;
    crate::latency_target::Target::new(
        queue,
        signal,
        Some(create_ns),
        Box::new(move || {
            mapper
                .unmap(&mapping)
                .map_err(|e| format!("unmapping the queue: {e:?}"))?;
            Ok(Vec::new())
        }),
    )
}
