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
use crate::model_launch::{self, DeviceMemory};
use crate::target::{Device, PartArg};
use barebell::aql::signal::SignalMemory;
use barebell::platform::Platform;
use barebell_bringup::{
    FirmwareDir, Gpu, Mapping, Options, Sink, Step, TeardownReport, UserMemory, UserQueue,
};
use barebell_kernel::job::Job;
use barebell_kernel::launch::{launch, private_segment_size};
use barebell_kernel::scratch::ScratchPlan;
use barebell_kernel::{KernargBuffer, LaunchContext, Part};
use std::collections::BTreeMap;
use std::time::Instant;

/// Bound on the wait for one dispatch's completion, platform time.
pub const DISPATCH_BOUND_NS: u64 = 2_000_000_000;
/// Bound on the submit's wait for ring space.
const SUBMIT_BOUND_NS: u64 = 1_000_000_000;

/// The code-object part of a brought-up device, from the GC version
/// discovery read: the same answer on the model (whose discovery table
/// says 11.0.0, 12.0.1 or 9.4.3) as on a GPU. GC 9.4.3 is mi300x with 8
/// live XCCs and mi308x with 4 (the XCC count discovery's `xcc_mask`
/// gives; the mi308x layout is the model's, see `parts.rs`). Other GC
/// versions and XCC counts are refused: no other part is described to
/// the loader.
pub fn code_part(gpu: &Gpu<'_>) -> Result<(Part, PartArg), String> {
    match gpu.ips.gc.version.triple() {
        (11, 0, 0) => Ok((Part::NAVI31, PartArg::Navi31)),
        (12, 0, 1) => Ok((Part::NAVI48, PartArg::Navi48)),
        (9, 4, 3) => match gpu.ips.topology.num_xcc() {
            8 => Ok((Part::MI300X, PartArg::Mi300x)),
            4 => Ok((Part::MI308X, PartArg::Mi308x)),
            n => Err(format!(
                "GC 9.4.3 with {n} XCCs: the loader knows the 8-XCC (mi300x) and 4-XCC (mi308x) parts only"
            )),
        },
        (a, b, c) => Err(format!(
            "GC {a}.{b}.{c}: the loader knows the parts of GC 11.0.0 (gfx1100), 12.0.1 (gfx1201) and 9.4.3 (gfx942) only"
        )),
    }
}

/// What a kernel run needs from the bring-up: the mapped queue, the user
/// memory, the code-object part, and the device itself, which
/// [`Brought::shutdown`] tears down after the run.
pub struct Brought<'p> {
    pub queue: UserQueue<'p>,
    pub user: UserMemory<'p>,
    pub part: Part,
    pub part_arg: PartArg,
    /// The brought-up device, its queue and user memory lent out above.
    gpu: Gpu<'p>,
}

impl<'p> Brought<'p> {
    /// Gives the queue and the user memory back to the device and tears
    /// it down in reverse (`Gpu::shutdown`: the queue unmapped, MES and the
    /// MEC halted, the PSP ring destroyed, the IH ring disabled, the
    /// doorbell apertures closed, bus mastering off, the memory released).
    pub fn shutdown(self) -> TeardownReport {
        let Brought {
            queue,
            user,
            mut gpu,
            ..
        } = self;
        gpu.queue = Some(queue);
        gpu.user = Some(user);
        gpu.shutdown()
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
/// here is torn down before the error is returned.
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
    let mut gpu =
        barebell_bringup::run(device.platform(), fw, &opts, sink).map_err(|e| fail(&e))?;
    let parts = code_part(&gpu);
    let (queue, user) = (gpu.queue.take(), gpu.user.take());
    let ((part, part_arg), queue, user) = match (parts, queue, user) {
        (Ok(p), Some(q), Some(u)) => (p, q, u),
        (parts, queue, user) => {
            let why = match (&parts, &queue) {
                (Err(e), _) => e.clone(),
                (_, None) => "the bring-up stopped before the queue".to_string(),
                _ => "the bring-up handed out no user memory".to_string(),
            };
            gpu.queue = queue;
            gpu.user = user;
            let report = gpu.shutdown();
            return Err(fail(&format!("{why}; teardown: {report}")));
        }
    };
    Ok(Brought {
        queue,
        user,
        part,
        part_arg,
        gpu,
    })
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
        Device::Model(m) if m.part().xcc.is_some() => {
            let cp = m.cp();
            Some((cp.shader.xcc_workgroups, cp.shader.xccs))
        }
        Device::Model(_) | Device::Hw(_) => None,
    }
}

/// Waits for `signal` to reach 0, pausing on the platform between looks,
/// failing early with the device's error, or with a hang when the queue's
/// read index stands still with packets unfetched for
/// [`barebell_bringup::recover::WATCHDOG_NS`] (the message names the
/// stuck read index and every packet not fetched, as lost).
pub fn wait_done(
    device: &Device,
    queue: &UserQueue<'_>,
    signal: &SignalMemory,
    bound_ns: u64,
) -> Result<(), String> {
    use barebell::aql::watchdog::{Watch, Watchdog};
    let p: &dyn Platform = device.platform();
    let clock = p.clock();
    let start = clock.now_ns();
    let mut dog = Watchdog::new(
        barebell_bringup::recover::WATCHDOG_NS.min(bound_ns),
        queue.queue.read_index(),
        start,
    );
    loop {
        if signal.value() == 0 {
            return Ok(());
        }
        if let Some(e) = device_error(device) {
            return Err(format!("the device reported: {e}"));
        }
        if let Some(sig) = crate::stop::requested() {
            return Err(format!(
                "interrupted by {sig} with the dispatch pending (signal value {})",
                signal.value()
            ));
        }
        let now = clock.now_ns();
        let (read, write) = (queue.queue.read_index(), queue.queue.write_index());
        if let Watch::Hung(s) = dog.observe(read, write, now) {
            let lost: Vec<String> = (s.read_index..s.write_index)
                .map(|id| format!("packet {id}: lost (never fetched)"))
                .collect();
            return Err(format!(
                "the queue hung: {s}; {}; the queue must be reset or the device brought up again",
                lost.join(", ")
            ));
        }
        if now.saturating_sub(start) > bound_ns {
            return Err(format!(
                "the dispatch did not complete within {} ms (signal value {})",
                bound_ns / 1_000_000,
                signal.value()
            ));
        }
        p.pause();
    }
}

/// The launch context of a mapped queue; with queue scratch from `user`
/// when the kernel needs private memory. Scratch is sized as ROCR sizes
/// it (`AqlQueue` for gfx11/gfx12) from the model part's CU and SE counts
/// (**model values**); on a GPU those are not read yet, so a kernel that
/// needs scratch is refused there.
pub fn context<'m>(
    device: &Device,
    queue: &UserQueue<'_>,
    part: Part,
    part_arg: PartArg,
    private: u32,
    mem: &mut dyn DeviceMemory<'m>,
) -> Result<LaunchContext, String> {
    let descriptor = queue.queue.memory().descriptor_address();
    let mut ctx = LaunchContext::new(part, descriptor);
    if private == 0 {
        return Ok(ctx);
    }
    if let Device::Hw(_) = device {
        return Err(format!(
            "the kernel needs {private} private bytes per work-item: queue scratch on a GPU needs its CU and shader-engine counts, which barebell does not read yet"
        ));
    }
    let plan = ScratchPlan::new(&model_launch::scratch_part(part_arg)?, private)
        .map_err(|e| format!("queue scratch: {e}"))?;
    let len = usize::try_from(plan.bytes).map_err(|_| "scratch too large")?;
    let backing = mem
        .alloc(len, 256)
        .map_err(|e| format!("queue scratch of {len} bytes: {e}"))?
        .address();
    // SAFETY: the `amd_queue_t` of the mapped user queue, in the ring
    // area, which stays mapped while the device lives; its last packet
    // completed, so no dispatch reads these fields now.
    unsafe { model_launch::write_queue_scratch(descriptor, &plan, backing) };
    ctx.scratch = Some(plan.grant());
    Ok(ctx)
}

/// Loads `k` (a built-in kernel rebuilt for the part discovery found)
/// into the user memory, with its buffers, kernargs and, if it needs
/// them, queue scratch, and returns the packet to submit on the brought-up
/// queue: what `barebell latency` measures on a mapped queue, and on a GPU
/// by default (the empty kernel).
pub fn place_kernel<'p>(
    device: &Device,
    b: &mut Brought<'p>,
    k: &KernelSpec,
) -> Result<Placed<'p>, String> {
    let k = k.for_part(b.part_arg)?;
    let stack = LaunchContext::new(b.part, 0).stack_bytes;
    let code = model_launch::load(&mut b.user, &b.part, &k.bytes)?;
    let private = code
        .kernel(&k.name)
        .map(|kn| private_segment_size(kn, stack))
        .map_err(|e| format!("kernel {}: {e}", k.name))?;
    let ctx = context(device, &b.queue, b.part, b.part_arg, private, &mut b.user)?;
    k.place_loaded(&mut b.user, &code, &ctx, b.queue.signal.handle())
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
/// on the brought-up queue and waits; memory from the user memory.
pub fn run_job(
    device: &Device,
    b: &mut Brought<'_>,
    job: &Job,
    bytes: &[u8],
) -> Result<JobOutcome, String> {
    let start = Instant::now();
    let code = model_launch::load(&mut b.user, &b.part, bytes)?;
    let kernel = code
        .kernel(&job.kernel)
        .map_err(|e| format!("kernel {}: {e}", job.kernel))?;
    job.check(&kernel.meta).map_err(|e| e.to_string())?;
    let stack = LaunchContext::new(b.part, 0).stack_bytes;
    let private = private_segment_size(kernel, stack);
    let ctx = context(device, &b.queue, b.part, b.part_arg, private, &mut b.user)?;
    // The kernel writes these: held as views, never as references.
    let mut bufs: BTreeMap<String, crate::dma_view::DmaView<'_>> = BTreeMap::new();
    let mut addresses = BTreeMap::new();
    for name in job.buffers.keys() {
        let init = job
            .buffer_bytes(name)
            .ok_or_else(|| format!("buffer {name}: bad contents"))?;
        let mem = b
            .user
            .alloc(init.len(), 256)
            .map_err(|e| format!("buffer {name}: {e}"))?;
        mem.write(0, &init);
        addresses.insert(name.clone(), mem.address());
        bufs.insert(name.clone(), mem);
    }
    let args = job
        .launch_args(&addresses)
        .ok_or("an argument names a buffer the job does not define")?;
    let ka_len = kernel.meta.kernarg_segment_size.max(16) as usize;
    let ka_align = kernel.meta.kernarg_segment_align.max(16) as usize;
    let host = b
        .user
        .alloc(ka_len, ka_align)
        .map_err(|e| format!("kernargs: {e}"))?;
    let device_address = host.address();
    // SAFETY: fresh bytes the launch fills before the dispatch that reads
    // them; the device only reads kernargs.
    let host = unsafe { host.into_host_bytes() };
    let mut kernargs = KernargBuffer {
        host,
        device_address,
    };
    let xcc_before = xcc_totals(device);
    let launched = Instant::now();
    let done = launch(
        &b.queue.queue,
        &ctx,
        kernel,
        &job.geometry,
        &args,
        &mut kernargs,
        b.queue.signal,
        device.platform().clock(),
        SUBMIT_BOUND_NS,
    )
    .map_err(|e| format!("launch: {e}"))?;
    wait_done(device, &b.queue, done.signal, DISPATCH_BOUND_NS)?;
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
            let hw =
                barebell_host::model_standing_in(&fw, crate::target::MODEL_BAR0_BYTES).unwrap();
            let device = Device::Hw(Box::new(hw));
            let mut b = bring_up(&device, &fw, mapping, &Quiet).unwrap();
            assert_eq!(b.part_arg, PartArg::Navi31);
            for name in ["empty", "vadd"] {
                // Resolved for the other part: rebuilt for the one found.
                let k = KernelSpec::resolve(name, PartArg::Navi48).unwrap();
                let placed = place_kernel(&device, &mut b, &k).unwrap();
                b.queue.signal.reset(1);
                b.queue
                    .queue
                    .submit(&placed.packet, device.platform().clock(), SUBMIT_BOUND_NS)
                    .unwrap();
                wait_done(&device, &b.queue, b.queue.signal, DISPATCH_BOUND_NS).unwrap();
                placed.check().unwrap();
                assert!(device_error(&device).is_none());
            }
            b.queue.unmap().unwrap();
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
        assert!(m.hang_queue(b.queue.doorbell), "{part:?}");
        let k = KernelSpec::resolve("empty", part).unwrap();
        let mut b = b;
        let placed = place_kernel(&device, &mut b, &k).unwrap();
        b.queue.signal.reset(1);
        let id = b
            .queue
            .queue
            .submit(&placed.packet, device.platform().clock(), SUBMIT_BOUND_NS)
            .unwrap();
        let t = device.platform().clock().now_ns();
        let e = wait_done(&device, &b.queue, b.queue.signal, DISPATCH_BOUND_NS).unwrap_err();
        let took = device.platform().clock().now_ns() - t;
        assert!(e.contains(&format!("read index stuck at {id}")), "{e}");
        assert!(
            e.contains(&format!("packet {id}: lost (never fetched)")),
            "{e}"
        );
        assert!(took < DISPATCH_BOUND_NS, "{took} ns: {e}");
    }
}
