//! `barebell run JOB.json`: load a code object, check the job against the
//! kernel's metadata, launch it HIP-style and print every buffer.
//!
//! On the model the queue is bound straight to the CP model (no bring-up,
//! as `barebell latency` does by default) and the CP runs the kernel's
//! machine code on its shader engines (`barebell_model::wave`). The CP
//! model runs on this thread: after the submit, it is stepped until idle.

use crate::model_launch::{self, Session};
use crate::target::{PartArg, TargetArgs};
use barebell::time::StdClock;
use barebell_kernel::job::Job;
use barebell_kernel::launch::{launch, private_segment_size};
use barebell_kernel::{KernargBuffer, LoadedCode};
use clap::Args;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The job file (see docs/kernel.md, "barebell run job files").
    job: PathBuf,
    /// Print `{"kernel", "buffers", "dispatch_ns"}` as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Seed for the model (wave and workgroup order, CP timing).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The device: the model (default, with --part) or a GPU (not built:
    /// UNVERIFIED ON HARDWARE, refused).
    #[command(flatten)]
    target: TargetArgs,
}

/// Bound on the model's CP steps for one dispatch (the kernel itself runs
/// inside one step, bounded by the shader's instruction limit).
const MAX_STEPS: u64 = 1_000_000;
/// Bound on the submit's wait for ring space.
const SUBMIT_BOUND_NS: u64 = 1_000_000_000;

pub fn run(a: RunArgs) -> ExitCode {
    match run_inner(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barebell run: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What one launch on the model gives back.
pub struct Outcome {
    /// Submit to completion signal, host wall time.
    pub dispatch_ns: u64,
    /// Code-object bytes in memory to completion signal.
    pub first_launch_ns: u64,
    pub buffers: BTreeMap<String, Vec<u8>>,
    pub stats: barebell_isa::launch::Stats,
}

/// Loads, checks, launches and waits. `bytes` are the code object's.
pub fn launch_job(
    job: &Job,
    bytes: &[u8],
    part: PartArg,
    seed: u64,
) -> Result<(Outcome, LoadedCode), String> {
    let mut s = Session::new(part, seed)?;
    // First launch: from here (code-object bytes in memory, queue made) to
    // the completion signal.
    let start = Instant::now();
    let code = model_launch::load(&mut s.model, &s.part, bytes)?;
    let kernel = code
        .kernel(&job.kernel)
        .map_err(|e| format!("kernel {}: {e}", job.kernel))?;
    job.check(&kernel.meta).map_err(|e| e.to_string())?;
    let mut ctx = s.context();
    let private = private_segment_size(kernel, ctx.stack_bytes);
    if private > 0 {
        ctx = s.with_scratch(private)?;
    }
    let mut bufs: BTreeMap<String, &'static mut [u8]> = BTreeMap::new();
    let mut addresses = BTreeMap::new();
    for name in job.buffers.keys() {
        let init = job
            .buffer_bytes(name)
            .ok_or_else(|| format!("buffer {name}: bad contents"))?;
        let mem = model_launch::alloc(&mut s.model, init.len(), 256);
        mem.copy_from_slice(&init);
        addresses.insert(name.clone(), mem.as_ptr() as u64);
        bufs.insert(name.clone(), mem);
    }
    let args = job
        .launch_args(&addresses)
        .ok_or("an argument names a buffer the job does not define")?;
    let ka_len = kernel.meta.kernarg_segment_size.max(16) as usize;
    let ka_align = kernel.meta.kernarg_segment_align.max(16) as usize;
    let host = model_launch::alloc(&mut s.model, ka_len, ka_align);
    let device_address = host.as_ptr() as u64;
    let mut kernargs = KernargBuffer {
        host,
        device_address,
    };
    let clock = StdClock::default();
    let launched = Instant::now();
    let done = launch(
        &s.queue.queue,
        &ctx,
        kernel,
        &job.geometry,
        &args,
        &mut kernargs,
        s.signal,
        &clock,
        SUBMIT_BOUND_NS,
    )
    .map_err(|e| format!("launch: {e}"))?;
    let steps = s.model.run_until_idle(MAX_STEPS);
    let end = Instant::now();
    if let Some(e) = s.model.errors().first() {
        return Err(format!("the device reported: {e}"));
    }
    if steps.is_none() || !done.is_done() {
        return Err(format!(
            "the dispatch did not complete within {MAX_STEPS} CP steps"
        ));
    }
    let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let stats = s.model.shader.last;
    let buffers = bufs.into_iter().map(|(k, v)| (k, v.to_vec())).collect();
    Ok((
        Outcome {
            dispatch_ns: ns(end - launched),
            first_launch_ns: ns(end - start),
            buffers,
            stats,
        },
        code,
    ))
}

fn read_job(path: &Path) -> Result<(Job, Vec<u8>, PathBuf), String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let job = Job::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    // A relative code-object path is relative to the job file.
    let co = Path::new(&job.code_object);
    let co = if co.is_relative() {
        path.parent().unwrap_or(Path::new(".")).join(co)
    } else {
        co.to_path_buf()
    };
    let bytes = std::fs::read(&co).map_err(|e| format!("reading {}: {e}", co.display()))?;
    Ok((job, bytes, co))
}

fn run_inner(a: &RunArgs) -> Result<(), String> {
    if let Some(hw) = a.target.hardware() {
        return Err(format!(
            "{hw}: UNVERIFIED ON HARDWARE and not built: launching on a GPU needs device memory for the code object, kernargs and buffers, which the bring-up does not hand out yet; run on the model (the default)"
        ));
    }
    let (job, bytes, co_path) = read_job(&a.job)?;
    let (out, _code) = launch_job(&job, &bytes, a.target.part, a.seed)?;
    if a.json {
        let mut buffers = Map::new();
        for (name, b) in &out.buffers {
            let ty = job.buffers.get(name).map_or("u8", |s| s.ty.name());
            let values = job.decode_buffer(name, b).unwrap_or_default();
            buffers.insert(name.clone(), json!({"type": ty, "values": values}));
        }
        // Keys in the order: kernel, buffers, dispatch_ns (a
        // serde_json map would sort them).
        println!(
            "{{\"kernel\": {}, \"buffers\": {}, \"dispatch_ns\": {}}}",
            Value::from(job.kernel.clone()),
            Value::Object(buffers),
            out.dispatch_ns
        );
        return Ok(());
    }
    let g = &job.geometry;
    let dims = usize::from(g.dims);
    println!(
        "barebell run: kernel {} from {} on the model {} (CP model, queue bound directly)",
        job.kernel,
        co_path.display(),
        a.target.part.name()
    );
    println!(
        "grid {:?} x block {:?}: {} workgroups, {} waves, {} instructions ({} lane-instructions)",
        &g.grid[..dims],
        &g.block[..dims],
        out.stats.workgroups,
        out.stats.waves,
        out.stats.instructions,
        out.stats.lane_instructions
    );
    println!(
        "dispatch {} ns (submit to completion signal); first launch {} ns (code object bytes in memory to completion)",
        out.dispatch_ns, out.first_launch_ns
    );
    const SHOWN: usize = 16;
    for (name, b) in &out.buffers {
        let spec = &job.buffers[name];
        let values = job.decode_buffer(name, b).unwrap_or_default();
        let shown: Vec<String> = values.iter().take(SHOWN).map(|v| v.to_string()).collect();
        println!(
            "{name}: {} x {}: [{}{}]",
            values.len(),
            spec.ty.name(),
            shown.join(", "),
            if values.len() > SHOWN { ", ..." } else { "" }
        );
    }
    Ok(())
}
