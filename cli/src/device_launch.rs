//! Kernels on a device the one bring-up brought up: the model GPU
//! (`VirtualGpu`) or, UNVERIFIED ON HARDWARE, a GPU through VFIO or sysfs.
//! The code is the same for both; only the platform differs.
//!
//! The code object, kernargs, buffers and queue scratch go into the
//! bring-up's user memory ([`barebell_bringup::usermem`]): DMA-region
//! pages mapped at GPU VA = host address in the process page tables the
//! user queue's VMID walks (USER_VMID for direct and KIQ queues, the VMID
//! MES picks for MES queues), readable, writeable and executable. The
//! dispatch goes onto the user queue the bring-up mapped, and the wait
//! for its completion signal pauses on the platform between looks (on the
//! model, the pause is where the CP runs). On the model the CP reads all
//! of it through that VMID's page tables: a kernel touching memory the
//! tables do not map stops with the VM fault.

use crate::dma_view::ViewToVec;
use crate::latency_kernel::{KernelSpec, Placed};
use crate::target::{Device, PartArg};
use barebell_bringup::{FirmwareDir, Mapping, Options, Sink, Step, TeardownReport};
use barebell_kernel::Part;
use barebell_kernel::job::Job;
use barebell_launch::{Launcher, Watch};
use std::collections::BTreeMap;
use std::time::Instant;

pub use barebell_launch::DISPATCH_BOUND_NS;

/// The model part (the `--part` name) of a code-object part.
pub fn part_arg(part: Part) -> PartArg {
    match part {
        Part::NAVI48 => PartArg::Navi48,
        Part::MI300X => PartArg::Mi300x,
        Part::MI308X => PartArg::Mi308x,
        Part::MI210 => PartArg::Mi210,
        _ => PartArg::Navi31,
    }
}

/// What a kernel run needs from the bring-up: the device ready for
/// kernels ([`Launcher`]: its mapped queue, user memory and code-object
/// part) and the part's `--part` name, which [`Brought::shutdown`] tears
/// down after the run.
pub struct Brought<'p> {
    pub launcher: Launcher<'p>,
    pub part_arg: PartArg,
}

impl Brought<'_> {
    /// Tears the device down in reverse ([`Launcher::shutdown`]).
    pub fn shutdown(self) -> TeardownReport {
        self.launcher.shutdown()
    }
}

/// The teardown's verdict for a caller's error path: `Ok` when every
/// stage was done or not needed (and, on the model, the model is
/// quiescent), else the report.
pub fn teardown_verdict(device: &Device, report: &TeardownReport) -> Result<(), String> {
    if !report.complete() {
        return Err(format!("the teardown was incomplete:\n{report}"));
    }
    if let Some(q) = device.quiescence() {
        q.map_err(|e| format!("the model is not quiescent after the teardown: {e}"))?;
    }
    Ok(())
}

/// Runs the one bring-up on `device` to a user queue mapped by `mapping`
/// and takes what kernel runs need from it. A bring-up that fails tears
/// itself down before it returns; one that succeeds but cannot be used
/// here is torn down before the error is returned. On the model, queue
/// scratch is sized from the model part's counts
/// ([`crate::model_launch::scratch_part`], **model values**); on a GPU
/// those are not read yet, so a kernel that needs scratch is refused there.
pub fn bring_up<'p>(
    device: &'p Device,
    fw: &FirmwareDir,
    mapping: Mapping,
    sink: &'p dyn Sink,
) -> Result<Brought<'p>, String> {
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        ..Default::default()
    };
    let fail = |e: &dyn std::fmt::Display| {
        format!(
            "{}: {} mapping: {e}{}",
            device.name(),
            mapping.name(),
            device.diagnostics()
        )
    };
    let gpu = barebell_bringup::run(device.platform(), fw, &opts, sink).map_err(|e| fail(&e))?;
    let launcher =
        Launcher::new(gpu).map_err(|(why, report)| fail(&format!("{why}; teardown: {report}")))?;
    let part_arg = part_arg(launcher.part());
    let launcher = match device {
        Device::Model(_) => match crate::model_launch::scratch_part(part_arg) {
            Ok(s) => launcher.with_scratch(s),
            Err(e) => {
                let report = launcher.shutdown();
                return Err(fail(&format!("{e}; teardown: {report}")));
            }
        },
        Device::Hw(_) => launcher,
    };
    Ok(Brought { launcher, part_arg })
}

/// The first error the device recorded, if it can tell (the model's CP
/// log; a GPU's faults arrive as interrupts, which barebell does not
/// handle yet).
pub fn device_error(device: &Device) -> Option<String> {
    match device {
        Device::Model(m) => m.cp().errors().first().map(|e| e.to_string()),
        Device::Hw(_) => None,
    }
}

/// The model's running per-XCC workgroup totals (`Shader::xcc_workgroups`)
/// and how many XCCs run a dispatch, on a GC 9.4.3 model; `None` elsewhere.
pub fn xcc_totals(device: &Device) -> Option<([u64; barebell_model::wave::MAX_XCCS], u32)> {
    match device {
        // GC 9.4.3 only: GC 9.4.2 (MI210) is one GC, no XCC deal.
        Device::Model(m) if m.part().generation == barebell::ip::Generation::Gfx94 => {
            let cp = m.cp();
            Some((cp.shader.xcc_workgroups, cp.shader.xccs))
        }
        Device::Model(_) | Device::Hw(_) => None,
    }
}

/// A wait's watcher in the CLI: the device's first error and a stop
/// signal end it.
struct DeviceWatch<'d>(&'d Device);

impl Watch for DeviceWatch<'_> {
    fn device_error(&self) -> Option<String> {
        device_error(self.0)
    }

    fn stop(&self) -> Option<&'static str> {
        crate::stop::requested()
    }
}

/// Waits for the last dispatch's completion signal ([`Launcher::wait`]),
/// failing early with the device's error, a stop signal, or a hang when
/// the queue's read index stands still with packets unfetched for
/// [`barebell_bringup::recover::WATCHDOG_NS`] (the message names the
/// stuck read index and every packet not fetched, as lost).
pub fn wait_done(device: &Device, b: &Brought<'_>, bound_ns: u64) -> Result<(), String> {
    b.launcher
        .wait(bound_ns, &DeviceWatch(device))
        .map_err(|e| e.to_string())
}

/// Loads `k` (a built-in kernel rebuilt for the part discovery found)
/// into the user memory, with its buffers, kernargs and, if it needs
/// them, queue scratch, and returns the packet to submit on the brought-up
/// queue: what `barebell latency` measures on a mapped queue, and on a GPU
/// by default (the empty kernel).
pub fn place_kernel<'p>(b: &mut Brought<'p>, k: &KernelSpec) -> Result<Placed<'p>, String> {
    let k = k.for_part(b.part_arg)?;
    let l = &mut b.launcher;
    let code = l.load(&k.bytes).map_err(|e| e.to_string())?;
    let kernel = code
        .kernel(&k.name)
        .map_err(|e| format!("kernel {}: {e}", k.name))?;
    let ctx = l.context(kernel).map_err(|e| e.to_string())?;
    let signal = l.queue().map_err(|e| e.to_string())?.signal.handle();
    k.place_loaded(l, &code, &ctx, signal)
}

/// What one run of a job gives back.
pub struct JobOutcome {
    /// Submit to completion signal, host wall time.
    pub dispatch_ns: u64,
    /// Code-object bytes in memory to completion signal.
    pub first_launch_ns: u64,
    pub buffers: BTreeMap<String, Vec<u8>>,
    /// The model's shader counts (none on a GPU).
    pub stats: Option<barebell_isa::launch::Stats>,
    /// Workgroups each XCC ran, on a GC 9.4.3 model.
    pub xcc_workgroups: Option<Vec<u64>>,
}

/// Loads `bytes`, checks `job` against the kernel's metadata, launches it
/// on the brought-up queue ([`Launcher::launch_in`]) and waits; memory
/// from the user memory.
pub fn run_job(
    device: &Device,
    b: &mut Brought<'_>,
    job: &Job,
    bytes: &[u8],
) -> Result<JobOutcome, String> {
    let start = Instant::now();
    let l = &mut b.launcher;
    let code = l.load(bytes).map_err(|e| e.to_string())?;
    let kernel = code
        .kernel(&job.kernel)
        .map_err(|e| format!("kernel {}: {e}", job.kernel))?;
    job.check(&kernel.meta).map_err(|e| e.to_string())?;
    let ctx = l.context(kernel).map_err(|e| e.to_string())?;
    // The kernel writes these: held as views, never as references.
    let (bufs, args) = crate::model_launch::place_job(job, l)?;
    let xcc_before = xcc_totals(device);
    let launched = Instant::now();
    l.launch_in(&ctx, kernel, &args, &job.geometry)
        .map_err(|e| e.to_string())?;
    wait_done(device, b, DISPATCH_BOUND_NS)?;
    let end = Instant::now();
    let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let stats = match device {
        Device::Model(m) => Some(m.cp().shader.last),
        Device::Hw(_) => None,
    };
    let xcc_workgroups = match (xcc_before, xcc_totals(device)) {
        (Some((before, _)), Some((after, xccs))) => {
            Some(crate::model_launch::xcc_delta(&before, &after, xccs))
        }
        _ => None,
    };
    Ok(JobOutcome {
        dispatch_ns: ns(end - launched),
        first_launch_ns: ns(end - start),
        buffers: bufs.into_iter().map(|(k, v)| (k, v.to_vec())).collect(),
        stats,
        xcc_workgroups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use barebell_bringup::Quiet;
    use barebell_launch::SUBMIT_BOUND_NS;
    use barebell_model::FilesDir;

    /// The hardware target's launch path, run over the model's BARs: the
    /// GPU platform (`HwPlatform`, its own DMA region) with the model
    /// standing in for the card, so every `Device::Hw` branch here is the
    /// one a GPU would take: the empty kernel (latency's GPU default) and
    /// vadd placed in the user memory, dispatched on the mapped queue,
    /// waited for with the platform's pause, vadd's output checked.
    #[test]
    fn the_gpu_launch_path_runs_kernels_with_the_model_standing_in() {
        let _fixed = barebell_host::FIXED_DMA
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for mapping in [Mapping::Mes, Mapping::Direct] {
            let fw = FirmwareDir::system();
            let hw = barebell_host::model_standing_in(
                &FilesDir::system(),
                crate::target::MODEL_BAR0_BYTES,
            )
            .unwrap();
            let device = Device::Hw(Box::new(hw));
            let mut b = bring_up(&device, &fw, mapping, &Quiet).unwrap();
            assert_eq!(b.part_arg, PartArg::Navi31);
            for name in ["empty", "vadd"] {
                // Resolved for the other part: rebuilt for the one found.
                let k = KernelSpec::resolve(name, PartArg::Navi48).unwrap();
                let placed = place_kernel(&mut b, &k).unwrap();
                let q = b.launcher.queue().unwrap();
                q.signal.reset(1);
                q.queue
                    .submit(&placed.packet, device.platform().clock(), SUBMIT_BOUND_NS)
                    .unwrap();
                wait_done(&device, &b, DISPATCH_BOUND_NS).unwrap();
                placed.check().unwrap();
                assert!(device_error(&device).is_none());
            }
            let q = b.launcher.gpu_mut().queue.take().unwrap();
            q.unmap().unwrap();
        }
    }

    /// A hung user queue is reported as a hang naming the stuck read
    /// index and the packet lost, within the watchdog's bound, not as the
    /// 2 s dispatch timeout.
    #[test]
    fn a_hung_queue_is_reported_as_a_hang_with_its_lost_packet() {
        for (part, mapping) in [
            (PartArg::Navi31, Mapping::Direct),
            (PartArg::Mi300x, Mapping::Hws),
        ] {
            hung_queue_reported(part, mapping);
        }
    }

    fn hung_queue_reported(part: PartArg, mapping: Mapping) {
        let fw = FirmwareDir::system();
        let mem =
            barebell_model::vgpu::HostMemory::allocate(crate::target::MODEL_BAR0_BYTES).unwrap();
        let device = Device::Model(crate::target::model_device(part, &fw, mem, 3).unwrap());
        let b = bring_up(&device, &fw, mapping, &Quiet).unwrap();
        let Device::Model(m) = &device else {
            unreachable!()
        };
        assert!(
            m.hang_queue(b.launcher.queue().unwrap().doorbell),
            "{part:?}"
        );
        let k = KernelSpec::resolve("empty", part).unwrap();
        let mut b = b;
        let placed = place_kernel(&mut b, &k).unwrap();
        let q = b.launcher.queue().unwrap();
        q.signal.reset(1);
        let id = q
            .queue
            .submit(&placed.packet, device.platform().clock(), SUBMIT_BOUND_NS)
            .unwrap();
        let t = device.platform().clock().now_ns();
        let e = wait_done(&device, &b, DISPATCH_BOUND_NS).unwrap_err();
        let took = device.platform().clock().now_ns() - t;
        assert!(e.contains(&format!("read index stuck at {id}")), "{e}");
        assert!(
            e.contains(&format!("packet {id}: lost (never fetched)")),
            "{e}"
        );
        assert!(took < DISPATCH_BOUND_NS, "{took} ns: {e}");
    }
}
