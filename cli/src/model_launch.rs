//! Launching compiler-built kernels on the device model: a CP model with
//! one AQL queue bound straight to it (the unmapped path `barebell
//! latency` uses by default), code objects loaded by `barebell-kernel`
//! into memory the model can reach, kernargs, buffers and queue scratch.
//!
//! Memory here is leaked host memory mapped into the CP model's DMA
//! windows (device address = host address), as `barebell_model_host::queue`
//! places queues and signals: the model may touch it for as long as the
//! process lives.

use crate::dma_view::DmaView;
use crate::target::PartArg;
use barebell::aql::queue::QueueConfig;
use barebell::aql::signal::SignalMemory;
use barebell_bringup::UserMemory;
use barebell_isa::Target;
use barebell_kernel::job::Job;
use barebell_kernel::scratch::{ScratchPart, ScratchPlan};
use barebell_kernel::{Arg, LaunchContext, LoadedCode, Part};
use barebell_launch::Launcher;
use barebell_launch::scratch::write_queue_scratch;
use barebell_model::Seed;
use barebell_model::cp::CpModel;
use barebell_model_host::queue::ModelQueue;
use std::collections::BTreeMap;

pub const SLOTS: usize = 64;

/// The loader's part and the interpreter's target for a model part.
pub fn part(p: PartArg) -> Result<(Part, Target), String> {
    match p {
        PartArg::Navi31 => Ok((Part::NAVI31, Target::Gfx1100)),
        PartArg::Navi48 => Ok((Part::NAVI48, Target::Gfx1201)),
        PartArg::Mi300x => Ok((Part::MI300X, Target::Gfx942)),
        PartArg::Mi308x => Ok((Part::MI308X, Target::Gfx942)),
        PartArg::Mi210 => Ok((Part::MI210, Target::Gfx90a)),
    }
}

/// XCCs that run each dispatch on a model part: the part's declared XCC
/// count (GC 9.4.3 in SPX mode: every XCC's CP reads the one AQL queue),
/// 1 on the single-XCC parts.
pub fn xccs(p: PartArg) -> u32 {
    p.part().xcc.map_or(1, |x| x.xccs.max(1))
}

/// Workgroups per XCC between two snapshots of the shader's running
/// totals (`Shader::xcc_workgroups`), for the first `xccs` XCCs.
pub fn xcc_delta(before: &[u64], after: &[u64], xccs: u32) -> Vec<u64> {
    after
        .iter()
        .zip(before)
        .take(xccs as usize)
        .map(|(a, b)| a.saturating_sub(*b))
        .collect()
}

/// Scratch slots of a model part, for sizing queue scratch as ROCR does.
/// **Model values**: CU and shader-engine counts of the full Navi31 (96
/// CUs, 6 SEs) and Navi48 (64 CUs, 4 SEs) configurations and 32 scratch
/// slots per CU; for GC 9.4.3 the CUs the model part declares
/// (`parts.rs`: mi300x 8 XCCs × 38 CUs = 304, mi308x 4 × 20 = 80), 4
/// shader engines per XCC (rocminfo-style reports of MI300X give 32; not
/// read from a device) and 32 slots per CU; for mi210 its 104 CUs and 8
/// SEs. No device was read. On gfx9 the SE count does not enter ROCR's
/// arithmetic (WAVES is per XCC).
pub fn scratch_part(p: PartArg) -> Result<ScratchPart, String> {
    Ok(match p {
        PartArg::Mi210 => ScratchPart {
            gfx_major: 9,
            xccs: 1,
            compute_units: p.part().xcc.map_or(104, |x| x.cus_per_xcc),
            // The 8 shader engines of the model's VBIOS gfx_info
            // (`vfio-peer/src/vbios.rs`, model values).
            shader_engines: 8,
            max_slots_per_cu: 32,
        },
        PartArg::Mi300x | PartArg::Mi308x => {
            let x = p
                .part()
                .xcc
                .ok_or_else(|| format!("{}: the part declares no XCCs", p.name()))?;
            ScratchPart {
                gfx_major: 9,
                xccs: x.xccs,
                compute_units: x.xccs * x.cus_per_xcc,
                shader_engines: 4 * x.xccs,
                max_slots_per_cu: 32,
            }
        }
        PartArg::Navi31 => ScratchPart {
            gfx_major: 11,
            xccs: 1,
            compute_units: 96,
            shader_engines: 6,
            max_slots_per_cu: 32,
        },
        PartArg::Navi48 => ScratchPart {
            gfx_major: 12,
            xccs: 1,
            compute_units: 64,
            shader_engines: 4,
            max_slots_per_cu: 32,
        },
    })
}

/// Memory a launch places code, kernargs, buffers and scratch in: bytes
/// whose host address is the address the device reaches them at.
/// [`CpModel`]: leaked host memory in the CP model's DMA windows (the
/// unmapped path); [`UserMemory`]: the bring-up's user memory, mapped in
/// the page tables the user queue's VMID walks (the mapped path, model
/// and GPU alike).
pub trait DeviceMemory<'m> {
    /// `len` zeroed bytes aligned to `align`, as a volatile view (the
    /// device may write them).
    fn alloc(&mut self, len: usize, align: usize) -> Result<DmaView<'m>, String>;
}

impl DeviceMemory<'static> for CpModel {
    fn alloc(&mut self, len: usize, align: usize) -> Result<DmaView<'static>, String> {
        Ok(DmaView::new(alloc(self, len, align)))
    }
}

impl<'p> DeviceMemory<'p> for UserMemory<'p> {
    fn alloc(&mut self, len: usize, align: usize) -> Result<DmaView<'p>, String> {
        UserMemory::alloc(self, len, align.max(1).next_power_of_two()).map_err(|e| e.to_string())
    }
}

impl<'p> DeviceMemory<'p> for Launcher<'p> {
    fn alloc(&mut self, len: usize, align: usize) -> Result<DmaView<'p>, String> {
        let user = self.gpu_mut().user.as_mut();
        let user = user.ok_or("no user memory after the bring-up")?;
        DeviceMemory::alloc(user, len, align)
    }
}

/// A job's buffers in `mem`, each filled with its initial bytes and held
/// as a view (the kernel writes them), and the kernel's arguments naming
/// their device addresses.
#[allow(clippy::type_complexity)]
pub fn place_job<'m>(
    job: &Job,
    mem: &mut dyn DeviceMemory<'m>,
) -> Result<(BTreeMap<String, DmaView<'m>>, Vec<Arg<'static>>), String> {
    let mut bufs = BTreeMap::new();
    let mut addresses = BTreeMap::new();
    for name in job.buffers.keys() {
        let init = job
            .buffer_bytes(name)
            .ok_or_else(|| format!("buffer {name}: bad contents"))?;
        let view = mem
            .alloc(init.len(), 256)
            .map_err(|e| format!("buffer {name}: {e}"))?;
        view.write(0, &init);
        addresses.insert(name.clone(), view.address());
        bufs.insert(name.clone(), view);
    }
    let args = job
        .launch_args(&addresses)
        .ok_or("an argument names a buffer the job does not define")?;
    Ok((bufs, args))
}

/// `len` zeroed bytes aligned to `align` (a power of two), leaked and
/// mapped into `model`; returns the bytes (their address is the device
/// address).
pub fn alloc(model: &mut CpModel, len: usize, align: usize) -> &'static mut [u8] {
    let len = len.max(1);
    let align = align.max(1).next_power_of_two();
    let raw: &'static mut [u8] = Box::leak(vec![0u8; len + align].into_boxed_slice());
    let skew = raw.as_ptr().align_offset(align);
    let out = &mut raw[skew..skew + len];
    // SAFETY: leaked, so it lives as long as the process; the host reads
    // what the device wrote only after the completion signal (an acquire).
    unsafe { model.dma_mut().map(out.as_ptr() as u64, len as u64) };
    out
}

/// Parses `bytes` as a code object and loads it into `mem`
/// ([`barebell_launch::load_with`]).
pub fn load<'m>(
    mem: &mut dyn DeviceMemory<'m>,
    part: &Part,
    bytes: &[u8],
) -> Result<LoadedCode, String> {
    let mut why = None;
    barebell_launch::load_with(part, bytes, |len, align| {
        mem.alloc(len, align).map_err(|e| {
            why = Some(e);
            barebell_launch::LaunchError::NoUserMemory
        })
    })
    .map_err(|e| why.take().unwrap_or_else(|| e.to_string()))
}

/// A CP model with one queue and one signal, before it runs.
pub struct Session {
    pub model: CpModel,
    pub queue: ModelQueue<SLOTS>,
    pub signal: &'static SignalMemory,
    pub part: Part,
    pub part_arg: PartArg,
}

impl Session {
    pub fn new(p: PartArg, seed: u64) -> Result<Session, String> {
        let (part, target) = part(p)?;
        let mut model = CpModel::new(Seed(seed));
        model.shader.target = target;
        // A stop signal or the kernel's wall-clock bound ends a dispatch
        // between scheduling rounds.
        model.shader.stop = barebell_isa::launch::StopHook(Some(crate::stop::kernel_should_stop));
        // GC 9.4.3 in SPX mode: every XCC runs its round-robin share of
        // each dispatch (`Shader::xccs`); `tg_chunk` stays 1, the
        // `compute_tg_chunk_size` `init_mqd_v9_4_3()` writes.
        model.shader.xccs = xccs(p);
        let queue = barebell_model_host::queue::queue::<SLOTS>(
            &mut model,
            QueueConfig {
                profiling: true,
                ..Default::default()
            },
            false,
        )
        .map_err(|e| e.to_string())?;
        let signal = &barebell_model_host::queue::signals(&mut model, 1, 0)[0];
        Ok(Session {
            model,
            queue,
            signal,
            part,
            part_arg: p,
        })
    }

    /// The launch context of this queue (CLR's defaults).
    pub fn context(&self) -> LaunchContext {
        LaunchContext::new(self.part, self.queue.queue.memory().descriptor_address())
    }

    /// Gives the queue scratch for `per_lane` private bytes per work-item,
    /// as ROCR's `AqlQueue::InitScratchSRD()` fills `amd_queue_t`, and
    /// returns the context with it.
    pub fn with_scratch(&mut self, per_lane: u32) -> Result<LaunchContext, String> {
        let plan = ScratchPlan::new(&scratch_part(self.part_arg)?, per_lane)
            .map_err(|e| format!("queue scratch: {e}"))?;
        let len = usize::try_from(plan.bytes).map_err(|_| "scratch too large")?;
        let backing = alloc(&mut self.model, len, 256).as_ptr() as u64;
        // SAFETY: the leaked `amd_queue_t` of this queue; the CP model
        // runs a dispatch only later, on this thread.
        unsafe {
            write_queue_scratch(
                self.queue.queue.memory().descriptor_address(),
                &plan,
                backing,
            )
        };
        let mut ctx = self.context();
        ctx.scratch = Some(plan.grant());
        Ok(ctx)
    }
}
