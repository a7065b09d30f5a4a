//! `barebell vector-add`: the seeds' HIP program end to end on the device
//! model (issue 19 item 5), every step timed beside the figure the seeds'
//! ROCm trace gives for its HIP counterpart.
//!
//! The traced program adds two vectors of 1,048,576 `float` in 4,096
//! blocks of 256: it creates a queue, allocates three 4 MiB device
//! buffers, copies two in (`hipMemcpy`, which ROCR does with SDMA), launches
//! the kernel, waits, copies the result out and checks it. Here:
//!
//! | step | barebell | HIP |
//! |---|---|---|
//! | `device` | host memory checked, the model device built (firmware files read) | runtime init, the device opened |
//! | `queue` | the one bring-up to a mapped user queue | `hsa_queue_create` (and runtime init) |
//! | `malloc` | three buffers from the user VRAM mapped at `USER_VRAM_VA` | `hipMalloc` × 3 |
//! | `inputs` | the two input vectors generated and written to host staging | the program's own loop |
//! | `memcpy_h2d` | SDMA engine 0 queue 0 opened, two `COPY_LINEAR` copies, each waited for | `hipMemcpy` host→device × 2 |
//! | `launch` | code object loaded, kernargs written, AQL packet submitted | `hipLaunchKernel` (first) |
//! | `synchronize` | completion signal waited for | `hipDeviceSynchronize` |
//! | `memcpy_d2h` | one SDMA copy back, waited for | `hipMemcpy` device→host |
//! | `check` | every element compared with the host's sum | the program's check |
//! | `teardown` | SDMA queue stopped, then `Gpu::shutdown` | process exit |
//!
//! The rows are back to back (each starts where the previous ended), so
//! they add up to `total`.
//!
//! Times are host wall time on the model: they measure this machine
//! running the model (the ISA interpreter runs every wave), not a GPU.
//! The seeds' figures are from an MI308X; the two columns are printed
//! side by side for scale, not as a comparison of like with like.

use crate::dma_view::ViewToVec;
use crate::latency_kernel::KernelSpec;
use crate::target::{MODEL_BAR0_BYTES, PartArg};
use barebell::platform::Platform;
use barebell_bringup::{FirmwareDir, Mapping, Options, Quiet, Step};
use barebell_kernel::{Arg, Geometry, Scalar};
use barebell_launch::{LaunchError, Launcher, Watch};
use barebell_model::vgpu::HostMemory;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Bound on each SDMA copy and on the dispatch, in platform time.
const BOUND_NS: u64 = 60_000_000_000;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum VaddMappingArg {
    /// Compute and SDMA queues loaded by registers (tinygrad's AM path).
    Direct,
    /// Compute and SDMA queues mapped by MES ADD_QUEUE (KFD's path on
    /// gfx11 and gfx12).
    Mes,
    /// Compute queue by MAP_QUEUES on each XCC's KIQ, SDMA by registers
    /// (GC 9.4.3).
    Kiq,
    /// Compute and SDMA queues in one runlist of the hardware scheduler
    /// (KFD's CPSCH on GC 9.4.3: the seeds' MI308X path).
    Hws,
}

/// The model device a part runs on, whichever generation.
struct Model(Box<barebell_model::VirtualGpu>);

impl Model {
    fn platform(&self) -> &dyn Platform {
        &*self.0
    }

    /// What the firmware stand-ins logged, for a failed bring-up.
    fn logs(&self) -> String {
        self.0.firmware_logs()
    }

    fn cp_error(&self) -> Option<String> {
        self.0.cp().errors().first().map(|e| e.to_string())
    }

    fn quiescent(&self) -> Result<(), barebell_model::vgpu::NotQuiescent> {
        self.0.quiescent()
    }
}

/// The largest `--elements`: 2^26.
const MAX_ELEMENTS: i64 = 1 << 26;

#[derive(Args, Debug, Clone)]
pub struct VectorAddArgs {
    /// The model part.
    #[arg(long, value_enum, default_value = "navi31")]
    pub part: PartArg,
    /// Elements per vector (the seeds: 1,048,576). Range 1 to 67,108,864
    /// (2^26: three vectors of 256 MiB, each held by the host and the
    /// model).
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u32).range(1..=MAX_ELEMENTS))]
    pub elements: u32,
    /// Work-items per workgroup (the seeds: 256). Range 1 to 1024.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub block: u32,
    /// How the compute and SDMA queues are mapped.
    #[arg(long, value_enum, default_value = "direct")]
    pub mapping: VaddMappingArg,
    /// Seed for the model (wave order, CP timing).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Where the amdgpu firmware blobs are.
    #[arg(long, default_value = FirmwareDir::SYSTEM)]
    pub firmware_dir: PathBuf,
    /// Also write the steps as a Chrome/Perfetto trace-event JSON file
    /// (one slice per step, back to back; open it at ui.perfetto.dev).
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,
    /// No progress line on stderr (it shows only on a terminal, once a
    /// run has lasted 2 s).
    #[arg(long)]
    pub quiet: bool,
}

/// The steps as back-to-back slices, each with its HIP call and the seeds'
/// figure.
fn write_perfetto(r: &Report, path: &std::path::Path) -> Result<(), String> {
    let mut t = crate::perfetto::Trace::new(&format!(
        "barebell vector-add: {} {} elements, {} mapping",
        r.part, r.elements, r.mapping
    ));
    let mut at = 0u64;
    for s in &r.steps {
        t.slice(
            crate::perfetto::STEPS,
            s.step,
            "step",
            at,
            s.ns,
            serde_json::json!({"hip": s.hip, "seeds_ns": s.seeds_ns}),
        );
        at = at.saturating_add(s.ns);
    }
    t.write(path)
}

/// One step of the program: its time and the seeds' figure for the HIP
/// call it stands for (`None` where the seeds' trace gives none).
#[derive(Serialize, Debug)]
struct StepTime {
    step: &'static str,
    hip: &'static str,
    ns: u64,
    seeds_ns: Option<u64>,
}

#[derive(Serialize, Debug)]
struct Report {
    part: &'static str,
    mapping: &'static str,
    elements: u32,
    workgroups: u32,
    block: u32,
    buffer_bytes: u64,
    verified: bool,
    /// Elements whose result differs from the host's `a[i] + b[i]`.
    mismatches: u64,
    teardown_complete: bool,
    /// Each teardown stage and what it did (`sdma` first: the SDMA queue
    /// stopped before `Gpu::shutdown`).
    teardown: Vec<String>,
    clock: &'static str,
    steps: Vec<StepTime>,
    total_ns: u64,
}

pub fn run(args: VectorAddArgs) -> ExitCode {
    crate::stop::handle();
    let r = vector_add(&args);
    if let Some(sig) = crate::stop::requested() {
        eprintln!("barebell vector-add: interrupted by {sig}; the device was torn down");
        if let Err(e) = r {
            eprintln!("barebell vector-add: {e}");
        }
        return ExitCode::from(crate::stop::status());
    }
    match r {
        Ok(report) => {
            if args.json {
                match serde_json::to_string_pretty(&report) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("barebell vector-add: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            } else {
                print_table(&report);
            }
            if let Some(Err(e)) = args.perfetto.as_ref().map(|p| write_perfetto(&report, p)) {
                eprintln!("barebell vector-add: {e}");
                return ExitCode::FAILURE;
            }
            if report.verified && report.teardown_complete {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "barebell vector-add: {}",
                    if report.verified {
                        "the teardown was incomplete"
                    } else {
                        "the result differs from the host's sums"
                    }
                );
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("barebell vector-add: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Nanoseconds from `from` to `to` (0 if `to` is earlier).
fn ns_between(from: Instant, to: Instant) -> u64 {
    u64::try_from(to.saturating_duration_since(from).as_nanos()).unwrap_or(u64::MAX)
}

/// The inputs: exact in f32 (integers below 2^24 and their halves), so
/// any order of evaluation gives the same sum.
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n).map(|i| (i % 65_536) as f32).collect();
    let b = (0..n).map(|i| ((i * 7) % 4096) as f32 * 0.5).collect();
    (a, b)
}

/// Refuses, before anything is built or touched, a mapping the part's
/// vector-add cannot use: the SDMA queue on GC 11/12 goes by registers or
/// MES; GC 9.4.3 has no MES (its queues go directly, by the KIQ, or by
/// the HWS runlist); GC 9.4.2's SDMA 4.4.0 queue goes through the HWS
/// only.
fn refuse_unsupported_mapping(part: PartArg, mapping: Mapping) -> Result<(), String> {
    use barebell::ip::Generation as G;
    match (part.part().generation, mapping) {
        (G::Gfx11 | G::Gfx12, Mapping::Kiq | Mapping::Hws) => Err(format!(
            "--mapping {}: on {} vector-add maps its compute and SDMA queues directly or by MES; use --mapping direct or mes",
            mapping.name(),
            part.name()
        )),
        (G::Gfx94, Mapping::Mes) => Err(format!(
            "--mapping mes: {} (GC 9.4.3) has no MES; use --mapping direct, kiq or hws",
            part.name()
        )),
        (G::Gfx90a, Mapping::Direct | Mapping::Kiq | Mapping::Mes) => Err(format!(
            "--mapping {}: {} (GC 9.4.2) maps its SDMA 4.4.0 queue through the HWS only; use --mapping hws",
            mapping.name(),
            part.name()
        )),
        _ => Ok(()),
    }
}

/// The step rows, back to back: each ends where the next begins, so they
/// add up to the total; and the progress line that follows them.
struct Timeline {
    started: Instant,
    mark: Instant,
    steps: Vec<StepTime>,
    progress: crate::progress::Progress,
}

impl Timeline {
    fn new(quiet: bool) -> Self {
        let now = Instant::now();
        Timeline {
            started: now,
            mark: now,
            steps: Vec::new(),
            progress: crate::progress::Progress::new("vector-add", Some(10), quiet),
        }
    }

    /// The step that just ended.
    fn step(&mut self, step: &'static str, hip: &'static str, seeds_ns: Option<u64>) {
        self.progress.inc();
        self.progress.message(&format!("{step} done"));
        let now = Instant::now();
        let ns = ns_between(self.mark, now);
        self.mark = now;
        self.steps.push(StepTime {
            step,
            hip,
            ns,
            seeds_ns,
        });
    }

    fn total_ns(&self) -> u64 {
        ns_between(self.started, self.mark)
    }
}

/// What the arguments fix before anything runs.
struct Plan {
    part: PartArg,
    mapping: Mapping,
    elements: u32,
    block: u32,
    workgroups: u32,
    /// Bytes per vector, and per buffer rounded to whole pages.
    bytes: usize,
    each: usize,
}

fn interrupted() -> Result<(), String> {
    match crate::stop::requested() {
        Some(sig) => Err(format!("interrupted by {sig}")),
        None => Ok(()),
    }
}

/// The device buffers and host staging of the program.
struct Buffers<'u> {
    d: [u64; 3],
    h_a: crate::dma_view::DmaView<'u>,
    h_b: crate::dma_view::DmaView<'u>,
    /// SDMA writes the result here: a view, never a reference.
    h_c: crate::dma_view::DmaView<'u>,
}

/// The model device for `args`, with room for the program's buffers.
fn build_model(
    args: &VectorAddArgs,
    plan: &Plan,
    user: usize,
    vram: usize,
) -> Result<Model, String> {
    // The model's memory plus the host's a, b and result vectors.
    crate::hostmem::ensure_available(
        (MODEL_BAR0_BYTES + vram + (4 << 20) + user + 3 * plan.bytes) as u64,
        "vector-add --elements",
    )?;
    let mem = HostMemory::allocate_sized(MODEL_BAR0_BYTES + vram, (4 << 20) + user)
        .map_err(|e| format!("model memory: {e}"))?;
    let fw = FirmwareDir(args.firmware_dir.clone());
    let m = crate::target::model_device(args.part, &fw, mem, args.seed)?;
    m.cp().shader.stop = barebell_isa::launch::StopHook(Some(crate::stop::kernel_should_stop));
    Ok(Model(m))
}

/// `hipLaunchKernel`: the vadd code object loaded into user memory, its
/// kernargs written, the packet submitted on the bring-up's queue
/// ([`Launcher::launch`]).
fn launch_vadd(l: &mut Launcher<'_>, plan: &Plan, d: [u64; 3]) -> Result<(), String> {
    let spec = KernelSpec::resolve("vadd", plan.part)?;
    let code = l.load(&spec.bytes).map_err(|e| e.to_string())?;
    let geometry = Geometry {
        grid: [plan.workgroups, 1, 1],
        block: [plan.block, 1, 1],
        dims: 1,
        dynamic_lds: 0,
    };
    let kargs = [
        Arg::Buffer(d[0]),
        Arg::Buffer(d[1]),
        Arg::Buffer(d[2]),
        Arg::Scalar(Scalar::U32(plan.elements)),
    ];
    match l.launch(&code, &spec.name, &kargs, &geometry) {
        Ok(_) => Ok(()),
        Err(LaunchError::Launch(e)) => Err(format!("hipLaunchKernel: {e}")),
        Err(e) => Err(e.to_string()),
    }
}

/// What `hipDeviceSynchronize` watches while it waits: the model's CP
/// errors, a stop signal, and the progress line it ticks.
struct SyncWatch<'a> {
    model: &'a Model,
    progress: std::cell::RefCell<&'a mut crate::progress::Progress>,
}

impl Watch for SyncWatch<'_> {
    fn device_error(&self) -> Option<String> {
        self.model.cp_error()
    }

    fn stop(&self) -> Option<&'static str> {
        crate::stop::requested()
    }

    fn waiting(&self) {
        let mut p = self.progress.borrow_mut();
        p.message("hipDeviceSynchronize: waiting for the dispatch");
        p.tick();
    }
}

/// `hipDeviceSynchronize`: the completion signal waited for
/// ([`Launcher::wait`]), bounded, stopping at a device error or a stop
/// signal.
fn synchronize(l: &Launcher<'_>, model: &Model, tl: &mut Timeline) -> Result<(), String> {
    let watch = SyncWatch {
        model,
        progress: std::cell::RefCell::new(&mut tl.progress),
    };
    l.wait(BOUND_NS, &watch).map_err(|e| match e {
        LaunchError::Device(e) => format!("the dispatch failed on the device: {e}"),
        LaunchError::Interrupted { by, .. } => format!("interrupted by {by}"),
        LaunchError::Timeout { bound_ns, signal } => format!(
            "the dispatch did not complete within {} s (signal value {signal})",
            bound_ns / 1_000_000_000
        ),
        e => e.to_string(),
    })
}

/// One SDMA copy of the program, waited for.
fn copy(
    q: &mut barebell_bringup::sdma::CopyQueue<'_>,
    dst: u64,
    src: u64,
    bytes: usize,
    what: &str,
) -> Result<(), String> {
    interrupted()?;
    let seq = q
        .submit_copy(dst, src, bytes as u64)
        .map_err(|e| format!("{what}: {e}"))?;
    q.wait(seq, BOUND_NS).map_err(|e| format!("{what}: {e}"))
}

/// The seeds' program on a brought-up device; returns the mismatches.
fn program<'p>(
    l: &mut Launcher<'p>,
    sdma: &mut Option<barebell_bringup::sdma::CopyQueue<'p>>,
    plan: &Plan,
    model: &Model,
    tl: &mut Timeline,
) -> Result<u64, String> {
    let gpu = l.gpu().platform;
    let each = plan.each;
    let dev = l
        .gpu_mut()
        .user_vram
        .as_mut()
        .ok_or("no user VRAM after the bring-up")?;
    let mut d = [0u64; 3];
    for slot in &mut d {
        *slot = dev.alloc(each, 4096).map_err(|e| e.to_string())?.va;
    }
    tl.step("malloc", "hipMalloc x3", None);

    let host = l
        .gpu_mut()
        .user
        .as_mut()
        .ok_or("no user memory after the bring-up")?;
    let h_a = host.alloc(each, 4096).map_err(|e| e.to_string())?;
    let h_b = host.alloc(each, 4096).map_err(|e| e.to_string())?;
    let h_c = host.alloc(each, 4096).map_err(|e| e.to_string())?;
    let b = Buffers { d, h_a, h_b, h_c };
    let (a_in, b_in) = inputs(plan.elements as usize);
    for (dst, src) in [(&b.h_a, &a_in), (&b.h_b, &b_in)] {
        let bytes: Vec<u8> = src.iter().flat_map(|v| v.to_le_bytes()).collect();
        dst.write(0, &bytes);
    }
    tl.step("inputs", "host vectors filled", None);

    let q = sdma.insert(
        barebell_bringup::sdma::open(l.gpu_mut(), plan.mapping, &Quiet)
            .map_err(|e| format!("{}: SDMA: {e}", gpu.name()))?,
    );
    copy(q, b.d[0], b.h_a.address(), plan.bytes, "hipMemcpy h2d")?;
    copy(q, b.d[1], b.h_b.address(), plan.bytes, "hipMemcpy h2d")?;
    // The seeds' three 4 MB copies took 136 ms in all: two of them here.
    tl.step("memcpy_h2d", "hipMemcpy h2d x2", Some(136_000_000 * 2 / 3));

    launch_vadd(l, plan, b.d)?;
    // The seeds' first hipLaunchKernel: 748 µs.
    tl.step("launch", "hipLaunchKernel", Some(748_000));
    synchronize(l, model, tl)?;
    // The seeds' vectorAdd ran 13.52 µs on the GPU.
    tl.step("synchronize", "hipDeviceSynchronize", Some(13_520));

    let q = sdma.as_mut().ok_or("the SDMA queue went away")?;
    copy(q, b.h_c.address(), b.d[2], plan.bytes, "hipMemcpy d2h")?;
    tl.step("memcpy_d2h", "hipMemcpy d2h", Some(136_000_000 / 3));

    let mismatches = b
        .h_c
        .to_vec()
        .chunks_exact(4)
        .zip(a_in.iter().zip(&b_in))
        .filter(|(c, (x, y))| {
            let c = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            c.to_bits() != (*x + *y).to_bits()
        })
        .count() as u64;
    tl.step("check", "result check", None);
    Ok(mismatches)
}

/// The SDMA queue off the engine, then the device torn down and checked
/// ([`crate::teardown::teardown_lines`]).
fn tear_down<'p>(
    mut l: Launcher<'p>,
    sdma: Option<barebell_bringup::sdma::CopyQueue<'p>>,
    model: &Model,
) -> (Vec<String>, bool) {
    let stopped = sdma.map(|q| q.stop(l.gpu_mut()));
    let report = l.shutdown();
    let quiet = model.quiescent().map_err(|e| e.to_string());
    crate::teardown::teardown_lines(stopped, &report, quiet)
}

fn vector_add(args: &VectorAddArgs) -> Result<Report, String> {
    if args.elements == 0 || args.block == 0 || args.block > 1024 {
        return Err("--elements must be at least 1 and --block within 1..=1024".into());
    }
    let bytes = args.elements as usize * 4;
    let plan = Plan {
        part: args.part,
        mapping: match args.mapping {
            VaddMappingArg::Direct => Mapping::Direct,
            VaddMappingArg::Mes => Mapping::Mes,
            VaddMappingArg::Kiq => Mapping::Kiq,
            VaddMappingArg::Hws => Mapping::Hws,
        },
        elements: args.elements,
        block: args.block,
        workgroups: args.elements.div_ceil(args.block),
        bytes,
        each: bytes.next_multiple_of(4096),
    };
    refuse_unsupported_mapping(args.part, plan.mapping)?;
    let mut tl = Timeline::new(args.quiet);
    // Host memory: a, b and c staging, the code object, kernargs; VRAM:
    // three device buffers.
    let user = (3 * plan.each + (4 << 20)).next_multiple_of(2 << 20);
    let vram = (3 * plan.each + (2 << 20)).next_multiple_of(2 << 20);
    let model = build_model(args, &plan, user, vram)?;
    let gpu = model.platform();
    tl.step("device", "hipInit (device opened)", None);

    let opts = Options {
        until: Step::Queue,
        mapping: Some(plan.mapping),
        user_memory: user,
        user_vram: vram,
        ..Options::default()
    };
    let fw = FirmwareDir(args.firmware_dir.clone());
    // A failed or interrupted bring-up tears itself down.
    let up = barebell_bringup::run(gpu, &fw, &opts, &crate::stop::Cancellable)
        .map_err(|e| format!("{}: {e}\n{}", gpu.name(), model.logs()))?;
    let mut l = Launcher::new(up)
        .map_err(|(e, report)| format!("{}: {e}; teardown: {report}", gpu.name()))?;
    // `hsa_queue_create`: 11.23 ms in the seeds' trace.
    tl.step("queue", "hsa_queue_create", Some(11_230_000));

    // Whatever the program gives, the teardown runs.
    let mut sdma = None;
    let outcome = program(&mut l, &mut sdma, &plan, &model, &mut tl);
    let (teardown, teardown_complete) = tear_down(l, sdma, &model);
    tl.step("teardown", "process exit", None);
    let mismatches = outcome.map_err(|e| {
        format!(
            "{e}\nteardown {}:\n  {}",
            if teardown_complete {
                "complete"
            } else {
                "INCOMPLETE"
            },
            teardown.join("\n  ")
        )
    })?;
    let total_ns = tl.total_ns();
    Ok(Report {
        part: args.part.name(),
        mapping: plan.mapping.name(),
        elements: args.elements,
        workgroups: plan.workgroups,
        block: args.block,
        buffer_bytes: bytes as u64,
        verified: mismatches == 0,
        mismatches,
        teardown_complete,
        teardown,
        clock: "host wall time on the device model (the seeds' figures: ROCm on an MI308X)",
        steps: tl.steps,
        total_ns,
    })
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn print_table(r: &Report) {
    println!(
        "{}: vectorAdd of {} f32 ({} workgroups of {}), {} mapping; 3 buffers of {} bytes in VRAM",
        r.part, r.elements, r.workgroups, r.block, r.mapping, r.buffer_bytes
    );
    println!("time: {}", r.clock);
    println!(
        "{:<12} {:<22} {:>14} {:>14}",
        "step", "HIP", "barebell", "seeds (ROCm)"
    );
    for s in &r.steps {
        println!(
            "{:<12} {:<22} {:>14} {:>14}",
            s.step,
            s.hip,
            ms(s.ns),
            s.seeds_ns.map_or_else(|| "-".to_string(), ms)
        );
    }
    println!("{:<12} {:<22} {:>14}", "total", "", ms(r.total_ns));
    for line in &r.teardown {
        println!("  {line}");
    }
    println!(
        "result: {} ({} mismatches); teardown {}",
        if r.verified { "verified" } else { "WRONG" },
        r.mismatches,
        if r.teardown_complete {
            "complete"
        } else {
            "INCOMPLETE"
        }
    );
}
