//! `barebell run JOB.json`: load a code object, check the job against the
//! kernel's metadata, launch it HIP-style and print every buffer.
//!
//! By default, on the model, the queue is bound straight to the CP model
//! (no bring-up, as `barebell latency` does by default) and the CP runs
//! the kernel's machine code on its shader engines
//! (`barebell_model::wave`). The CP model runs on this thread: after the
//! submit, it is stepped until idle.
//!
//! On a GC 9.4.3 part (mi300x, mi308x) the kernel is gfx942 and the CP
//! model runs each dispatch on every XCC the part declares, each XCC its
//! round-robin share of the workgroups (`barebell_model::wave::Shader`);
//! the output says how many workgroups each XCC ran.
//!
//! With `--mapping mes|direct|kiq|hws` (and always on `--vfio`/`--sysfs`,
//! where the mapping defaults to mes) the device goes through the one
//! bring-up and the job runs on the user queue it mapped, its memory in
//! the bring-up's user memory ([`crate::device_launch`]): on the model the
//! CP reads code, kernargs and buffers through the queue's VMID. On a GPU
//! this is UNVERIFIED ON HARDWARE: it has never run on one.

use crate::device_launch;
use crate::dma_view::ViewToVec;
use crate::model_launch::{self, Session};
use crate::target::MappingArg;
use crate::target::{PartArg, TargetArgs};
use barebell::time::StdClock;
use barebell_bringup::{FirmwareDir, Mapping};
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
    /// Bring the device up and launch on the user queue mapped this way
    /// (MES ADD_QUEUE, direct HQD load, KIQ MAP_QUEUES, or on GC 9.4.3
    /// parts the HWS runlist), with the job's
    /// memory mapped in the queue's page tables. Default on the model:
    /// the queue bound straight to the CP model, no bring-up; on a GPU:
    /// mes. The model's bring-up needs the firmware files.
    #[arg(long, value_enum)]
    mapping: Option<MappingArg>,
    /// Where the amdgpu firmware blobs are (the bring-up needs them on the
    /// model as on a GPU).
    #[arg(long, default_value = FirmwareDir::SYSTEM)]
    firmware_dir: PathBuf,
    /// Also write the launch as a Chrome/Perfetto trace-event JSON file
    /// (open it at ui.perfetto.dev): the load (code object in memory to
    /// the submit) and the dispatch (submit to completion) as slices, the
    /// kernel's figures in their arguments.
    #[arg(long, value_name = "FILE")]
    perfetto: Option<PathBuf>,
    /// Wall-clock bound on the kernel, in seconds (1 to 3600; default 60,
    /// Linux's bare-metal compute job timeout, `amdgpu_device_get_job_timeout_settings()`).
    /// A kernel still running then is stopped and reported, and a
    /// brought-up device torn down.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout_s: u64,
    /// Print a wave's registers from the model's interpreter (SGPRs,
    /// VGPRs, PC, EXEC, VCC, M0): `fault` for the wave that faults or
    /// hangs the kernel, or `X[,Y[,Z]]/W` for wave W of workgroup
    /// (X, Y, Z) when it ends (`3/0`), and the faulting wave as well.
    /// The model only.
    #[arg(long, value_name = "WHICH", value_parser = crate::wave_dump::parse)]
    wave_dump: Option<crate::wave_dump::Which>,
    /// No progress line on stderr (shown otherwise when stderr is a
    /// terminal and the run has lasted 2 s).
    #[arg(long)]
    quiet: bool,
    /// The device: the model (default, with --part) or a GPU through the
    /// same bring-up and launch code (UNVERIFIED ON HARDWARE: never run on
    /// a GPU).
    #[command(flatten)]
    target: TargetArgs,
}

/// Bound on the model's CP steps for one dispatch (the kernel itself runs
/// inside one step, bounded by the shader's instruction limit).
const MAX_STEPS: u64 = 1_000_000;
/// Bound on the submit's wait for ring space.
const SUBMIT_BOUND_NS: u64 = 1_000_000_000;

pub fn run(a: RunArgs) -> ExitCode {
    // With a bring-up, a stop signal tears the device down before exit.
    let brings_up = a.mapping.is_some() || a.target.hardware().is_some();
    if brings_up {
        crate::stop::handle();
    }
    let r = run_inner(&a);
    if brings_up && let Some(sig) = crate::stop::requested() {
        eprintln!("barebell run: interrupted by {sig}; the device was torn down");
        if let Err(e) = r {
            eprintln!("barebell run: {e}");
        }
        return ExitCode::from(crate::stop::status());
    }
    match r {
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
    /// Workgroups each XCC ran in this dispatch, on a GC 9.4.3 part (the
    /// model's counts; none on a GPU or a single-XCC part).
    pub xcc_workgroups: Option<Vec<u64>>,
    /// The watched wave's state at its end (`--wave-dump X/W`).
    pub wave: Option<barebell_isa::dump::WaveDump>,
}

/// Loads, checks, launches and waits. `bytes` are the code object's.
/// With `dump`, a failure's text ends with the stopped wave's registers
/// and the outcome carries the watched wave's.
pub fn launch_job(
    job: &Job,
    bytes: &[u8],
    part: PartArg,
    seed: u64,
    dump: Option<crate::wave_dump::Which>,
) -> Result<(Outcome, LoadedCode), String> {
    // The buffers' initial bytes and their device copies.
    crate::hostmem::ensure_available(job.total_bytes().saturating_mul(2), "this job's buffers")?;
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
    // The kernel writes these: held as views, never as references.
    let (bufs, args) = model_launch::place_job(job, &mut s.model)?;
    let ka_len = kernel.meta.kernarg_segment_size.max(16) as usize;
    let ka_align = kernel.meta.kernarg_segment_align.max(16) as usize;
    let host = model_launch::alloc(&mut s.model, ka_len, ka_align);
    let device_address = host.as_ptr() as u64;
    let mut kernargs = KernargBuffer {
        host,
        device_address,
    };
    let clock = StdClock::default();
    let xcc_before = s.model.shader.xcc_workgroups;
    s.model.shader.watch = dump.and_then(crate::wave_dump::Which::watch);
    let with_dump = |e: String, d: &barebell_isa::launch::Dumps| match dump {
        Some(w) => e + &crate::wave_dump::after_error(w, d),
        None => e,
    };
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
        return Err(with_dump(
            format!("the device reported: {e}"),
            &s.model.shader.dumps,
        ));
    }
    if steps.is_none() || !done.is_done() {
        return Err(with_dump(
            format!("the dispatch did not complete within {MAX_STEPS} CP steps"),
            &s.model.shader.dumps,
        ));
    }
    let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let stats = s.model.shader.last;
    // GC 9.4.3 only: GC 9.4.2 (MI210) is one GC, no XCC deal.
    let xcc_workgroups = (part.part().generation == barebell::ip::Generation::Gfx94).then(|| {
        model_launch::xcc_delta(
            &xcc_before,
            &s.model.shader.xcc_workgroups,
            s.model.shader.xccs,
        )
    });
    let buffers = bufs.into_iter().map(|(k, v)| (k, v.to_vec())).collect();
    Ok((
        Outcome {
            dispatch_ns: ns(end - launched),
            first_launch_ns: ns(end - start),
            buffers,
            stats,
            xcc_workgroups,
            wave: s.model.shader.dumps.watched.take(),
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

/// Brings the device up with `mapping` and runs the job on its queue.
fn run_on_device(
    a: &RunArgs,
    mapping: Mapping,
    job: &Job,
    bytes: &[u8],
) -> Result<(Outcome, String), String> {
    let fw = FirmwareDir(a.firmware_dir.clone());
    let device = crate::target::open(&a.target, &fw, a.seed)?;
    let r = (|| {
        let mut b = device_launch::bring_up(&device, &fw, mapping, &crate::stop::Cancellable)?;
        crate::wave_dump::set_watch(
            &device,
            a.wave_dump.and_then(crate::wave_dump::Which::watch),
        );
        let out = device_launch::run_job(&device, &mut b, job, bytes);
        let dumps = crate::wave_dump::dumps(&device).unwrap_or_default();
        let out = match (out, a.wave_dump) {
            (Err(e), Some(w)) => Err(e + &crate::wave_dump::after_error(w, &dumps)),
            (out, _) => out,
        };
        let wave = dumps.watched;
        let vmid = b.launcher.queue().map_or(0, |q| q.mapping.vmid);
        // The device torn down whether the job ran or not (issue 20:
        // every exit).
        let torn = b.shutdown();
        let verdict = device_launch::teardown_verdict(&device, &torn);
        let out = match (out, verdict) {
            (Ok(out), Ok(())) => out,
            (Err(e), Ok(())) => return Err(e),
            (Ok(_), Err(t)) => return Err(t),
            (Err(e), Err(t)) => return Err(format!("{e}\n{t}")),
        };
        Ok::<_, String>((out, vmid, wave))
    })();
    let what = format!(
        "{} ({} mapping{})",
        match a.target.hardware() {
            Some(hw) => format!("{hw}, UNVERIFIED ON HARDWARE"),
            None => format!("the model GPU {}", a.target.part.name()),
        },
        mapping.name(),
        r.as_ref()
            .map(|(_, v, _)| match mapping {
                // MES picks the VMID and does not say which; the mapping's
                // number is the process key the runtime gave it.
                Mapping::Mes => ", VMID picked by MES".to_string(),
                // The HWS picks the VMID from SET_RESOURCES' mask when it
                // maps the process; the queue's mapping does not carry it.
                Mapping::Hws => ", VMID picked by the HWS".to_string(),
                _ => format!(", VMID {v}"),
            })
            .unwrap_or_default()
    );
    device.finish(false);
    let (o, _, wave) = r?;
    Ok((
        Outcome {
            dispatch_ns: o.dispatch_ns,
            first_launch_ns: o.first_launch_ns,
            buffers: o.buffers,
            stats: o.stats.unwrap_or_default(),
            xcc_workgroups: o.xcc_workgroups,
            wave,
        },
        format!("{what}: user queue brought up and mapped, memory in its page tables"),
    ))
}

/// `--perfetto`: the first launch's two phases, back to back.
fn write_perfetto(
    path: &std::path::Path,
    job: &Job,
    target: &str,
    out: &Outcome,
) -> Result<(), String> {
    let mut t =
        crate::perfetto::Trace::new(&format!("barebell run: kernel {} on {target}", job.kernel));
    let load = out.first_launch_ns.saturating_sub(out.dispatch_ns);
    t.slice(
        crate::perfetto::STEPS,
        "load",
        "phase",
        0,
        load,
        json!({"what": "code object in memory, kernel checked, buffers and kernargs placed, packet built"}),
    );
    t.slice(
        crate::perfetto::STEPS,
        "dispatch",
        "phase",
        load,
        out.dispatch_ns,
        json!({
            "what": "submit to completion signal",
            "workgroups": out.stats.workgroups,
            "waves": out.stats.waves,
            "instructions": out.stats.instructions,
        }),
    );
    t.write(path)
}

fn run_inner(a: &RunArgs) -> Result<(), String> {
    let mapping = match (a.mapping, a.target.hardware()) {
        // A mapping the model part lacks is refused before it is touched.
        (Some(m), None) => Some(a.target.part.check_mapping(m.into())?),
        (Some(m), _) => Some(Mapping::from(m)),
        (None, Some(_)) => Some(Mapping::Mes),
        (None, None) => None,
    };
    let (job, bytes, co_path) = read_job(&a.job)?;
    if let Some(hint) = job.grid_hint() {
        eprintln!("warning: {hint}");
    }
    if let Some(w) = a.wave_dump {
        // Refused before any device is opened.
        if a.target.hardware().is_some() {
            return Err(crate::wave_dump::ON_GPU.to_string());
        }
        let co = barebell_kernel::loader::CodeObject::parse(&bytes)
            .map_err(|e| format!("code object: {e}"))?;
        let k = co
            .kernel(&job.kernel)
            .map_err(|e| format!("kernel {}: {e}", job.kernel))?;
        crate::wave_dump::check(w, &job, k.meta.wavefront_size)?;
    }
    crate::stop::set_kernel_bound(std::time::Duration::from_secs(a.timeout_s));
    let bounded = |e: String| {
        if crate::stop::kernel_bound_ran_out() {
            format!(
                "the kernel did not finish within {} s (--timeout-s): {e}",
                a.timeout_s
            )
        } else {
            e
        }
    };
    let spinner = crate::progress::Background::start("run", a.quiet);
    spinner.message(&format!("kernel {}", job.kernel));
    let (out, target) = match mapping {
        Some(m) => run_on_device(a, m, &job, &bytes).map_err(bounded)?,
        None => {
            let (out, _code) =
                launch_job(&job, &bytes, a.target.part, a.seed, a.wave_dump).map_err(bounded)?;
            let t = format!(
                "the model {} (CP model, queue bound directly)",
                a.target.part.name()
            );
            (out, t)
        }
    };
    drop(spinner);
    if let Some(path) = &a.perfetto {
        write_perfetto(path, &job, &target, &out)?;
    }
    if a.json {
        let mut buffers = Map::new();
        for (name, b) in &out.buffers {
            let ty = job.buffers.get(name).map_or("u8", |s| s.ty.name());
            let values = job.decode_buffer(name, b).unwrap_or_default();
            buffers.insert(name.clone(), json!({"type": ty, "values": values}));
        }
        // Keys in the order: kernel, buffers, dispatch_ns (a
        // serde_json map would sort them); then, on a GC 9.4.3 part, the
        // workgroups each XCC ran.
        let xccs = out
            .xcc_workgroups
            .as_ref()
            .map(|v| format!(", \"xcc_workgroups\": {}", Value::from(v.clone())))
            .unwrap_or_default();
        let wave = out
            .wave
            .as_ref()
            .map(|w| format!(", \"wave_dump\": {}", crate::wave_dump::to_json(w)))
            .unwrap_or_default();
        println!(
            "{{\"kernel\": {}, \"buffers\": {}, \"dispatch_ns\": {}{xccs}{wave}}}",
            Value::from(job.kernel.clone()),
            Value::Object(buffers),
            out.dispatch_ns
        );
        return Ok(());
    }
    let g = &job.geometry;
    let dims = usize::from(g.dims);
    println!(
        "barebell run: kernel {} from {} on {target}",
        job.kernel,
        co_path.display(),
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
    if let Some(v) = &out.xcc_workgroups {
        let list: Vec<String> = v.iter().map(u64::to_string).collect();
        println!(
            "workgroups per XCC ({} XCCs; the model deals them round-robin by flat workgroup id in chunks of the MQD's compute_tg_chunk_size, 1): [{}]",
            v.len(),
            list.join(", ")
        );
    }
    println!(
        "dispatch {} ns (submit to completion signal); first launch {} ns (code object bytes in memory to completion)",
        out.dispatch_ns, out.first_launch_ns
    );
    const SHOWN: usize = 16;
    for (name, b) in &out.buffers {
        let spec = &job.buffers[name];
        // Decode only the elements printed: a buffer may hold 2^28.
        let count = b.len() / spec.ty.size();
        let head = &b[..SHOWN.min(count) * spec.ty.size()];
        let values = job.decode_buffer(name, head).unwrap_or_default();
        let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        println!(
            "{name}: {count} x {}: [{}{}]",
            spec.ty.name(),
            shown.join(", "),
            if count > SHOWN { ", ..." } else { "" }
        );
    }
    if let Some(w) = &out.wave {
        print!("{w}");
    }
    Ok(())
}
