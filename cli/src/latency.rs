//! `barebell latency`: doorbell-submission latency by phase.
//!
//! The target is the built-in device model: a CP model running on its own
//! thread (pinned to another CPU when there is one) that polls the doorbell
//! memory, consumes AQL packets and signals completion. The measured
//! thread publishes, rings and waits exactly as it would against a GPU;
//! only the consumer differs. Numbers therefore describe barebell's CPU
//! side plus a software CP's reaction time, not a GPU's.

use crate::cpu::{allowed_cpus, pin_current_thread, unpin_current_thread};
use crate::latency_kernel::KernelSpec;
use crate::latency_target::{self as target, Work};
use crate::target::MappingArg;
use crate::target::{Hardware, PartArg};
use barebell::aql::packet::{Dispatch, Fences, Packet};
use barebell::aql::{BarrierKind, BarrierPacket};
use barebell::latency::run::{PHASES, Params, Sample, measure};
use barebell::latency::tsc::{self, Correlation, TscScale};
use barebell::latency::{Histogram, Outliers, Summary};
use barebell_bringup::{FirmwareDir, Mapping};
use barebell_model::thread::Idle;
use clap::Args;
use serde::Serialize;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Phases derived from the CP's own timestamps.
const CP_PHASES: [&str; 2] = ["cp_launch", "cp_exec"];

/// The most iterations (and warm-up iterations) one run takes: the
/// samples are kept in memory (56 bytes each) and sorted for percentiles.
const MAX_ITERATIONS: u64 = 10_000_000;

/// A count option's parser: a whole number in `LO..=HI`.
fn count_in<const LO: u64, const HI: u64>(s: &str) -> Result<usize, String> {
    let n: u64 = s
        .parse()
        .map_err(|_| format!("{s} is not a whole number"))?;
    if !(LO..=HI).contains(&n) {
        return Err(format!("{n} is outside {LO}..={HI}"));
    }
    usize::try_from(n).map_err(|_| format!("{n} does not fit this machine's usize"))
}

#[derive(Args, Debug, Clone)]
pub struct LatencyArgs {
    /// Measured iterations. 200 000 (about 80 ms on the model) so that
    /// back-to-back default runs repeat: at 10 000 (4 ms) a run's p50
    /// moved 6-8 % between runs at an unchanged CPU round trip, at
    /// 200 000 by 0-3 % (docs/latency.md, "Getting numbers that repeat";
    /// a moved round trip still moves the p50).
    /// Range 1 to 10 000 000 (each iteration keeps a 56-byte sample).
    #[arg(long, default_value_t = 200_000, value_parser = count_in::<1, MAX_ITERATIONS>)]
    iterations: usize,
    /// Unmeasured iterations first (caches, branch predictors, the model
    /// thread's first touches of the ring).
    /// Range 0 to 10 000 000.
    #[arg(long, default_value_t = 20_000, value_parser = count_in::<0, MAX_ITERATIONS>)]
    warmup: usize,
    /// Packets per doorbell.
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Start iterations at least this many microseconds apart (0: back to
    /// back). Range 0 to 1 000 000 (one second).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pace_us: u64,
    /// Before each iteration, wait a pseudo-random 0 to this many ns, so
    /// that doorbells do not lock onto the model's polling loop (0: never;
    /// then the p50 depends on where they lock, and moves between runs).
    /// Range 0 to 1 000 000 (one millisecond).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    jitter_ns: u64,
    /// CPU for the measuring thread (default: the highest-numbered CPU this
    /// process may use).
    #[arg(long)]
    cpu: Option<usize>,
    /// CPU for the model's CP thread (default: another allowed CPU).
    #[arg(long)]
    model_cpu: Option<usize>,
    /// How long the model's placeholder kernel "runs", in ns, 0 to
    /// 1,000,000,000 (the placeholder is a host function standing in for a
    /// kernel, a model convention; without --kernel it is what is
    /// dispatched).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000_000))]
    kernel_ns: u64,
    /// Dispatch a real kernel, run by the model's shader engines: `empty`
    /// (one workgroup of 64), `vadd` (c = a + b over 1024 f32, 4 x 256;
    /// both built from gpu-kernels/kernels/latency.cl) or `FILE.co:NAME` (one
    /// workgroup of 64; buffer arguments get zeroed 64 KiB, values 0).
    /// With --mapping (or on a GPU) the kernel goes into the bring-up's
    /// user memory, mapped in the page tables the queue's VMID walks. On
    /// a GPU the default is `empty` (UNVERIFIED ON HARDWARE).
    #[arg(
        long,
        value_name = "empty|vadd|FILE.co:NAME",
        conflicts_with = "packet"
    )]
    kernel: Option<String>,
    /// What is measured without --kernel: `dispatch` (default: the model's
    /// placeholder host function on the model; the built-in empty kernel
    /// on a GPU, UNVERIFIED ON HARDWARE) or `barrier` (an AQL BARRIER_AND
    /// with no dependencies: no kernel code involved).
    #[arg(long, value_enum)]
    packet: Option<PacketArg>,
    /// Seed for the model.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Bound on each wait, in milliseconds.
    #[arg(long, default_value_t = 2_000)]
    bound_ms: u64,
    /// Write summary statistics as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// No progress line on stderr (shown otherwise when stderr is a
    /// terminal and the run has lasted 2 s).
    #[arg(long)]
    quiet: bool,
    /// Write every iteration's phase durations as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write a histogram and CDF plot as SVG.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Write a sample of the submissions (up to 2,000, evenly spaced) as a
    /// Chrome/Perfetto trace-event JSON file, each one's phases (publish,
    /// doorbell, pickup, completion) as back-to-back slices at the time it
    /// ran (open it at ui.perfetto.dev).
    #[arg(long, value_name = "FILE")]
    perfetto: Option<PathBuf>,
    /// Bring the device up and map the queue this way (default on the
    /// model: bind the queue to the CP model directly, no bring-up; on a
    /// GPU: mes). The model's bring-up needs the firmware files.
    #[arg(long, value_enum)]
    mapping: Option<MappingArg>,
    /// Run all three mapping modes one after another and compare them.
    #[arg(long, conflicts_with = "mapping")]
    compare: bool,
    /// How many of the slowest iterations to list.
    #[arg(long, default_value_t = 5)]
    outliers: usize,
    /// The device: the model (default, with --part for --mapping and
    /// --compare) or a GPU (unverified on hardware).
    #[command(flatten)]
    target: crate::target::TargetArgs,
    /// Where the amdgpu firmware blobs are (the bring-up needs them on the
    /// model as on a GPU).
    #[arg(long, default_value = FirmwareDir::SYSTEM)]
    firmware_dir: PathBuf,
}

/// `--packet`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketArg {
    Dispatch,
    Barrier,
}

#[derive(Serialize, Debug)]
struct PhaseJson {
    count: u64,
    min: u64,
    mean: f64,
    p50: u64,
    p90: u64,
    p99: u64,
    p99_9: u64,
    max: u64,
}

impl From<Summary> for PhaseJson {
    fn from(s: Summary) -> Self {
        PhaseJson {
            count: s.count,
            min: s.min,
            mean: s.mean,
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
            p99_9: s.p99_9,
            max: s.max,
        }
    }
}

#[derive(Serialize, Debug)]
struct TimerJson {
    tsc_hz: u64,
    calibrated_against: &'static str,
    cpuid_hz: Option<u64>,
    invariant_tsc: bool,
    hypervisor: bool,
    overhead_min_ns: u64,
    overhead_p50_ns: u64,
}

#[derive(Serialize, Debug)]
struct ParamsJson {
    target: &'static str,
    mapping: &'static str,
    part: &'static str,
    iterations: usize,
    warmup: usize,
    batch: usize,
    pace_us: u64,
    jitter_ns: u64,
    cpu: Option<usize>,
    model_cpu: Option<usize>,
    kernel_ns: u64,
    /// What each iteration submits: "dispatch" or "barrier".
    packet: &'static str,
    /// The dispatched kernel (`--kernel`, or `empty` by default on a GPU);
    /// null: the model's placeholder host function, or a barrier.
    kernel: Option<String>,
    /// Where the kernel's code object came from and its launch shape.
    kernel_detail: Option<String>,
    /// Code-object bytes in memory to the first dispatch's completion, on
    /// a fresh model queue stepped on the measuring thread.
    first_launch_ns: Option<u64>,
    /// Of `first_launch_ns`, the code object's parse, target check, copy
    /// and relocation (`hipModuleLoad`'s share).
    load_ns: Option<u64>,
    /// Of `first_launch_ns`, after the load: buffers, prepared launch and
    /// submit (`hipModuleLaunchKernel`'s share); the rest is the CP
    /// model's run of the dispatch.
    launch_ns: Option<u64>,
    seed: u64,
    ring_slots: usize,
}

/// [`cpu_round_trip_ns`] taken before the target is created and after it
/// is shut down; null where there is no model thread on a CPU of its own.
#[derive(Serialize, Debug, Clone, Copy, Default)]
struct RoundTripJson {
    before: Option<u64>,
    after: Option<u64>,
}

#[derive(Serialize, Debug)]
struct Report {
    params: ParamsJson,
    timer: TimerJson,
    /// Wall time of the mapping call, if the queue was mapped.
    create_ns: Option<u64>,
    /// Per phase, in nanoseconds: publish, doorbell, pickup, completion, total.
    phases: std::collections::BTreeMap<&'static str, PhaseJson>,
    /// The slowest iterations by total time: `[total_ns, iteration]`.
    outliers: Vec<(u64, u64)>,
    /// How far a CP stamp mapped onto the TSC can be off (the wider of the
    /// two anchors' half brackets); `null` without a correlation.
    cp_correlation_uncertainty_ns: Option<u64>,
    /// Cache-line round trip between the measuring and the model CPU, in
    /// ns, before and after the run: pickup and completion scale with it.
    cpu_round_trip_ns: RoundTripJson,
    warnings: Vec<String>,
}

#[derive(Serialize, Debug)]
struct RunJson {
    create_ns: Option<u64>,
    phases: std::collections::BTreeMap<&'static str, PhaseJson>,
    outliers: Vec<(u64, u64)>,
    cp_correlation_uncertainty_ns: Option<u64>,
    cpu_round_trip_ns: RoundTripJson,
}

#[derive(Serialize, Debug)]
struct CompareReport {
    params: ParamsJson,
    timer: TimerJson,
    /// Keyed by mapping mode.
    runs: std::collections::BTreeMap<&'static str, RunJson>,
    warnings: Vec<String>,
}

fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the kernel to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// A TSC frequency measured against CLOCK_MONOTONIC_RAW: two narrow-
/// bracket anchors ~100 ms apart (see [`tsc::anchor`]).
fn calibrate() -> Option<TscScale> {
    let first = tsc::anchor(monotonic_raw_ns, ANCHOR_TRIES)?;
    std::thread::sleep(std::time::Duration::from_millis(100));
    let last = tsc::anchor(monotonic_raw_ns, ANCHOR_TRIES)?;
    let dn = last.other.checked_sub(first.other)?;
    let dt = last.tsc.checked_sub(first.tsc)?;
    TscScale::from_hz((u128::from(dt) * 1_000_000_000 / u128::from(dn.max(1))) as u64)
}

/// Bracketed reads per anchor: enough that one lands between interrupts
/// with both TSC reads close together (a few µs in all).
const ANCHOR_TRIES: u32 = 200;

/// Signed ticks to signed nanoseconds.
fn signed_ns(scale: TscScale, ticks: i128) -> i64 {
    (ticks * 1_000_000_000 / i128::from(scale.hz)) as i64
}

/// Nanoseconds from the doorbell store (TSC) to the CP's start stamp
/// (the model's CLOCK_MONOTONIC_RAW), through the run's correlation.
fn cp_launch_ns(scale: TscScale, corr: &Correlation, s: &Sample) -> i64 {
    signed_ns(
        scale,
        corr.tsc_at(s.cp_start_ts) - i128::from(s.doorbell_at),
    )
}

/// Cost of one start()/end() pair, min and median, in ticks.
fn timer_overhead() -> (u64, u64) {
    let mut v: Vec<u64> = (0..10_001)
        .map(|_| {
            let a = tsc::start();
            let b = tsc::end();
            b.wrapping_sub(a)
        })
        .collect();
    v.sort_unstable();
    (v[0], v[v.len() / 2])
}

/// Median time for one cache line to go from `cpu` to `other` and back, in
/// ns: this thread (pinned to `cpu` for the probe) stores, a thread pinned to
/// `other` answers. Pickup and completion are such round trips between the
/// measuring and the model CPU, so they move with it; under a hypervisor
/// the host may place the two vCPUs differently from one run to the next.
/// On the 2-vCPU EPYC VM this was written on, the round trip was 60-70,
/// 110-120 or 450-490 ns from run to run, and the default run's total p50
/// followed it: 230, 310-340 and 760-850 ns. `None` if a thread could not
/// be placed or an answer took over 100 ms.
fn cpu_round_trip_ns(cpu: usize, other: usize, scale: TscScale) -> Option<u64> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    /// One value per cache line (128 bytes also keeps the adjacent-line
    /// prefetcher from pairing them).
    #[repr(align(128))]
    struct Line(AtomicU64);
    const WARMUP: u64 = 200;
    const TRIPS: u64 = 2_000;
    // Waits until `line` holds `v`, looking 64 times between clock reads.
    fn wait_for(line: &Line, v: u64, deadline: u64) -> bool {
        loop {
            for _ in 0..64 {
                if line.0.load(Ordering::Acquire) == v {
                    return true;
                }
            }
            if tsc::start() > deadline {
                return false;
            }
        }
    }
    let bound = scale.hz / 10;
    let lines = Arc::new([Line(AtomicU64::new(0)), Line(AtomicU64::new(0))]);
    let theirs = lines.clone();
    // The answering thread inherits this thread's mask: spawn it while this
    // thread is confined to `other`, so that it never starts on `cpu`,
    // where a SCHED_FIFO caller spinning below would starve it.
    let mask = allowed_cpus();
    pin_current_thread(other).ok()?;
    let answer = std::thread::Builder::new()
        .name("barebell-rtt".into())
        .spawn(move || {
            for i in 1..=WARMUP + TRIPS {
                if !wait_for(&theirs[0], i, tsc::start() + bound) {
                    return None;
                }
                theirs[1].0.store(i, Ordering::Release);
            }
            Some(())
        });
    let mut trips = Vec::with_capacity(TRIPS as usize);
    if answer.is_ok() && pin_current_thread(cpu).is_ok() {
        for i in 1..=WARMUP + TRIPS {
            let t = tsc::start();
            lines[0].0.store(i, Ordering::Release);
            if !wait_for(&lines[1], i, t + bound) {
                break;
            }
            if i > WARMUP {
                trips.push(tsc::end().wrapping_sub(t));
            }
        }
    }
    // The answering thread gives up by itself within 100 ms of a missing
    // store, so this join is bounded.
    let answered = answer.ok().and_then(|h| h.join().ok()).flatten().is_some();
    // Back to the mask the caller had: a thread it spawns next inherits it.
    unpin_current_thread(&mask);
    if !answered || trips.len() as u64 != TRIPS {
        return None;
    }
    trips.sort_unstable();
    Some(scale.to_ns(trips[trips.len() / 2]))
}

pub fn run(a: LatencyArgs) -> ExitCode {
    // With a bring-up (`--mapping`, `--compare`, a GPU), a stop signal is
    // held until the measurement ends, and the device is torn down before
    // the exit (the measuring loop itself does not look at it).
    let brings_up = a.mapping.is_some() || a.compare || a.target.hardware().is_some();
    if brings_up {
        crate::stop::handle();
    }
    let result = run_inner(&a);
    if brings_up && let Some(sig) = crate::stop::requested() {
        eprintln!("barebell latency: interrupted by {sig}; the device was torn down");
        if let Err(e) = result {
            eprintln!("barebell latency: {e}");
        }
        return ExitCode::from(crate::stop::status());
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barebell latency: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One measured run against one target.
struct RunResult {
    label: &'static str,
    create_ns: Option<u64>,
    samples: Vec<Sample>,
    hists: Vec<Box<Histogram>>,
    summaries: Vec<Summary>,
    cp_summaries: Vec<Summary>,
    /// CP stamps onto the TSC; `None` if an anchor could not be taken.
    cp_corr: Option<Correlation>,
    top: Vec<(u64, u64)>,
    /// Cross-CPU round trip before and after the run (model targets with
    /// two CPUs only).
    round_trip: RoundTripJson,
}

impl RunResult {
    fn cp_uncertainty_ns(&self, scale: TscScale) -> Option<u64> {
        self.cp_corr.map(|c| scale.to_ns(c.uncertainty()))
    }
}

/// Measures `work` on `t`: the warm-up loop, then the measured one
/// ([`measure_twice`]), cut in chunks that suit the work.
fn measure_work(
    t: &target::Target<'_>,
    work: Work,
    scale: TscScale,
    params: Params,
    (warm, samples): (&mut [Sample], &mut [Sample]),
    quiet: bool,
) -> Result<(), String> {
    let chunking = |len| Chunking { len, quiet };
    match work {
        Work::Barrier => {
            let p = BarrierPacket::new(BarrierKind::And, &[], t.signal.handle(), Fences::SYSTEM)
                .map_err(|e| e.to_string())?;
            measure_twice(t, &p, scale, params, warm, samples, chunking(CHUNK))
        }
        Work::Kernel(p) => {
            measure_twice(t, &p, scale, params, warm, samples, chunking(KERNEL_CHUNK))
        }
        Work::ModelKernel => {
            let p = Dispatch::linear(64, 64, target::KERNEL_OBJECT, 0)
                .signal(t.signal.handle())
                .fences(Fences::SYSTEM)
                .packet()
                .map_err(|e| e.to_string())?;
            measure_twice(t, &p, scale, params, warm, samples, chunking(CHUNK))
        }
    }
}

/// The histograms, percentiles, CP phases and outliers of one run's
/// samples; a warning when CP stamps precede their doorbell.
fn summarize(
    a: &LatencyArgs,
    scale: TscScale,
    label: &'static str,
    samples: Vec<Sample>,
    cp_corr: Option<Correlation>,
    warnings: &mut Vec<String>,
) -> RunResult {
    let mut hists: Vec<Box<Histogram>> = (0..PHASES.len())
        .map(|_| Box::new(Histogram::new()))
        .collect();
    let mut outliers = Outliers::<32>::new();
    for (i, s) in samples.iter().enumerate() {
        let ns = [s.publish, s.doorbell, s.pickup, s.completion, s.total()].map(|t| scale.to_ns(t));
        for (h, v) in hists.iter_mut().zip(ns) {
            h.record(v);
        }
        outliers.offer(ns[4], (a.warmup + i) as u64);
    }
    // CP timestamps: the model stamps with CLOCK_MONOTONIC_RAW, mapped onto
    // the TSC through the calibration anchor. `cp_launch` is doorbell store
    // to the CP's start stamp, `cp_exec` start to end stamp.
    let mut cp_hists = [Box::new(Histogram::new()), Box::new(Histogram::new())];
    let mut before_doorbell = 0usize;
    if let Some(corr) = &cp_corr {
        for s in samples.iter().filter(|s| s.cp_start_ts != 0) {
            let launch = cp_launch_ns(scale, corr, s);
            if launch < 0 {
                before_doorbell += 1;
            }
            cp_hists[0].record(launch.max(0) as u64);
            cp_hists[1].record(s.cp_end_ts.saturating_sub(s.cp_start_ts));
        }
    }
    if before_doorbell > 0 {
        warnings.push(format!(
            "{label}: {before_doorbell} CP start stamps precede the end of the doorbell store (counted as 0): a CP that polls the write index can start before the doorbell lands, and the TSC/monotonic mapping is good to about the correlation uncertainty in the JSON"
        ));
    }
    let cp_summaries: Vec<Summary> = cp_hists.iter().filter_map(|h| h.summary()).collect();
    let summaries: Vec<Summary> = hists.iter().filter_map(|h| h.summary()).collect();
    let top: Vec<(u64, u64)> = outliers
        .sorted()
        .into_iter()
        .take(a.outliers.min(outliers.len()))
        .collect();
    // The caller fills in what the run itself knows.
    RunResult {
        label,
        create_ns: None,
        samples,
        hists,
        summaries,
        cp_summaries,
        cp_corr,
        top,
        round_trip: RoundTripJson {
            before: None,
            after: None,
        },
    }
}

fn run_target(
    a: &LatencyArgs,
    mapping: Option<Mapping>,
    scale: TscScale,
    (idle, cpus, cpu, model_cpu): (Idle, &[usize], Option<usize>, Option<usize>),
    kernel: Option<&KernelSpec>,
    barrier: bool,
    warnings: &mut Vec<String>,
) -> Result<RunResult, String> {
    // The model thread is spawned from this one; it must not start out
    // confined to the measuring CPU (measured: pickup p50 510 ns instead of
    // 170 ns when it did), so unpin before creating the target. `cpus` is
    // the set the process started with: after a first run (`--compare`)
    // this thread's own mask is the measuring CPU alone, and a model thread
    // started there never ran under SCHED_FIFO (`chrt -f 10 barebell
    // latency --compare` timed out at iteration 0).
    unpin_current_thread(cpus);
    let hardware = a.target.hardware();
    let probe_cpus = match (hardware, cpu, model_cpu) {
        (None, Some(c), Some(m)) if c != m => Some((c, m)),
        _ => None,
    };
    let probe = || probe_cpus.and_then(|(c, m)| cpu_round_trip_ns(c, m, scale));
    let rtt_before = probe();
    let mut pin_err = None;
    let mut pin_me = || {
        if let Some(c) = cpu {
            pin_err = pin_current_thread(c).err();
        }
    };
    let params = Params {
        batch: a.batch,
        pace_ns: a.pace_us.saturating_mul(1_000),
        jitter_ns: a.jitter_ns,
        bound_ns: a.bound_ms.saturating_mul(1_000_000),
    };
    // Everything the measured loop touches is allocated here, before it.
    let mut warm = vec![Sample::default(); a.warmup];
    let mut samples = vec![Sample::default(); a.iterations];
    // CP stamps are put on the TSC axis by a line through two anchors that
    // bracket the measured loops.
    let mut anchors = (None, None);
    let mut measured = |t: &target::Target<'_>, work: Work| -> Result<Option<u64>, String> {
        anchors.0 = tsc::anchor(monotonic_raw_ns, ANCHOR_TRIES);
        let r = measure_work(t, work, scale, params, (&mut warm, &mut samples), a.quiet);
        anchors.1 = tsc::anchor(monotonic_raw_ns, ANCHOR_TRIES);
        r?;
        Ok(t.create_ns)
    };
    let fw = FirmwareDir(a.firmware_dir.clone());
    let (create_ns, errors) = match (hardware, mapping) {
        (None, None) => {
            let (r, errors) = target::with_unmapped(
                a.seed,
                a.kernel_ns,
                kernel.map(|k| (k, a.target.part)),
                barrier,
                monotonic_raw_ns,
                idle,
                model_cpu,
                &mut pin_me,
                |t, w| measured(t, w),
            )?;
            (r?, errors)
        }
        (_, m) => {
            let device = crate::target::open(&a.target, &fw, a.seed)?;
            let r = target::with_device(
                &device,
                &fw,
                m.unwrap_or(Mapping::Mes),
                a.kernel_ns,
                kernel.map(|k| (k, a.target.part)),
                barrier,
                monotonic_raw_ns,
                idle,
                model_cpu,
                &mut pin_me,
                |t, w| measured(t, w),
            );
            device.finish(false);
            let (r, errors) = r?;
            (r?, errors)
        }
    };
    if let Some(e) = pin_err {
        warnings.push(format!("could not pin the measuring thread: {e}"));
    }
    // A GPU stamps signals in its own clock's ticks, not
    // CLOCK_MONOTONIC_RAW nanoseconds; mapping those onto the TSC is not
    // built, so hardware runs report no CP phases.
    let cp_corr = match hardware {
        Some(_) => {
            warnings.push(
                "CP timestamps on a GPU are GPU clock ticks; correlating them with the TSC is not built, so cp_launch/cp_exec are omitted".to_string(),
            );
            None
        }
        None => anchors
            .0
            .zip(anchors.1)
            .and_then(|(f, l)| Correlation::new(f, l)),
    };
    let round_trip = RoundTripJson {
        before: rtt_before,
        after: probe(),
    };
    if let (Some(b), Some(f)) = (round_trip.before, round_trip.after)
        && b.max(f) * 4 > b.min(f) * 5
    {
        warnings.push(format!(
            "{}: the cross-CPU round trip moved from {b} to {f} ns during the run (under a hypervisor, the host placed a vCPU elsewhere); pickup and completion move with it, so compare runs only at equal round trips",
            mapping.map_or("unmapped", Mapping::name)
        ));
    }
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(format!("the CP model recorded errors: {}", list.join("; ")));
    }

    let label = mapping.map_or("unmapped", Mapping::name);
    let r = summarize(a, scale, label, samples, cp_corr, warnings);
    Ok(RunResult {
        create_ns,
        round_trip,
        ..r
    })
}

/// Iterations per call of the measured loop: between calls (outside every
/// measured window) the command looks for a stop signal, so SIGINT and
/// SIGTERM end a long run within a few milliseconds, not at its end.
const CHUNK: usize = 4096;
/// The same for kernel dispatches, each of which can take milliseconds in
/// the model's interpreter (`--kernel vadd`: about 1.5 ms).
const KERNEL_CHUNK: usize = 64;

/// How the measured loops are cut: iterations per chunk, and whether the
/// progress line is off.
#[derive(Clone, Copy)]
struct Chunking {
    len: usize,
    quiet: bool,
}

/// The warm-up loop, then the measured one, each in chunks of
/// [`CHUNK`] (or [`KERNEL_CHUNK`]); a stop signal between chunks ends the
/// run with `interrupted by SIG`, and the progress line moves there.
fn measure_twice<P: Packet>(
    target: &target::Target<'_>,
    packet: &P,
    scale: TscScale,
    params: Params,
    warm: &mut [Sample],
    samples: &mut [Sample],
    chunking: Chunking,
) -> Result<(), String> {
    let Chunking {
        len: chunk_len,
        quiet,
    } = chunking;
    let mut first = 0u64;
    let total = (warm.len() + samples.len()) as u64;
    // Drawn between chunks only, outside every measured window.
    let mut progress = crate::progress::Progress::passive("latency", Some(total), quiet);
    for (name, part) in [("warm-up", warm), ("measured", samples)] {
        progress.message(name);
        for chunk in part.chunks_mut(chunk_len) {
            if let Some(sig) = crate::stop::requested() {
                return Err(format!("interrupted by {sig}"));
            }
            measure(
                target.queue,
                packet,
                target.signal,
                scale,
                params,
                first,
                chunk,
            )
            .map_err(|e| e.to_string())?;
            first += chunk.len() as u64;
            progress.inc_by(chunk.len() as u64);
        }
    }
    Ok(())
}

fn phases_json(r: &RunResult) -> std::collections::BTreeMap<&'static str, PhaseJson> {
    PHASES
        .iter()
        .copied()
        .zip(r.summaries.iter().map(|s| PhaseJson::from(*s)))
        .chain(
            CP_PHASES
                .iter()
                .copied()
                .zip(r.cp_summaries.iter().map(|s| PhaseJson::from(*s))),
        )
        .collect()
}

/// Where the measuring thread and the model's thread run, and how the
/// model's CP waits.
struct Placement {
    /// The CPUs the process may use.
    cpus: Vec<usize>,
    cpu: Option<usize>,
    model_cpu: Option<usize>,
    idle: Idle,
}

/// The measuring thread on one CPU, the model thread on another, with a
/// warning when they must share.
fn place_threads(a: &LatencyArgs, warnings: &mut Vec<String>) -> Placement {
    // CPUs: measuring thread on one, model thread on another.
    let cpus = allowed_cpus();
    let cpu = a.cpu.or_else(|| cpus.last().copied());
    let model_cpu = a
        .model_cpu
        .or_else(|| cpus.iter().rev().copied().find(|c| Some(*c) != cpu));
    // On a GPU there is no model thread to place.
    let hardware = a.target.hardware();
    if hardware.is_none() && cpu.is_some() && cpu == model_cpu {
        warnings.push(format!(
            "measuring thread and model thread share CPU {}: expect inflated pickup and completion times",
            cpu.unwrap_or(0)
        ));
    }
    if hardware.is_none() && model_cpu.is_none() {
        warnings.push(
            "only one CPU is available: the model thread competes with the measuring thread"
                .to_string(),
        );
    }
    // A CP of its own spins like hardware; one that shares a CPU must
    // yield or it starves the thread being measured.
    let shared = model_cpu.is_none() || model_cpu == cpu;
    let idle = if shared {
        Idle::YieldAfter(64)
    } else {
        Idle::Spin
    };
    Placement {
        cpus,
        cpu,
        model_cpu,
        idle,
    }
}

/// `--compare`: the table of every mapping's run, and its JSON.
fn finish_compare(
    a: &LatencyArgs,
    scale: TscScale,
    params: ParamsJson,
    timer: TimerJson,
    runs: &[RunResult],
    warnings: Vec<String>,
) -> Result<(), String> {
    print_compare(a, scale, runs, &warnings);
    let report = CompareReport {
        params,
        timer,
        runs: runs
            .iter()
            .map(|r| {
                (
                    r.label,
                    RunJson {
                        create_ns: r.create_ns,
                        phases: phases_json(r),
                        outliers: r.top.clone(),
                        cp_correlation_uncertainty_ns: r.cp_uncertainty_ns(scale),
                        cpu_round_trip_ns: r.round_trip,
                    },
                )
            })
            .collect(),
        warnings,
    };
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(p, text + "\n").map_err(|e| format!("writing {}: {e}", p.display()))?;
    }
    if a.csv.is_some() || a.svg.is_some() || a.perfetto.is_some() {
        return Err(
            "--csv, --svg and --perfetto take one run; use them with --mapping instead of --compare".into(),
        );
    }
    Ok(())
}

/// `--json`, `--csv`, `--svg` and `--perfetto` of one run.
fn write_outputs(
    a: &LatencyArgs,
    scale: TscScale,
    r: &RunResult,
    report: &Report,
) -> Result<(), String> {
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
        std::fs::write(p, text + "\n").map_err(|e| format!("writing {}: {e}", p.display()))?;
    }
    if let Some(p) = &a.csv {
        write_csv(p, &r.samples, scale, r.cp_corr.as_ref(), a.warmup)
            .map_err(|e| format!("writing {}: {e}", p.display()))?;
    }
    if let Some(p) = &a.svg {
        crate::latency_plot::write_svg(p, &r.hists, &r.summaries)
            .map_err(|e| format!("writing {}: {e}", p.display()))?;
    }
    if let Some(p) = &a.perfetto {
        write_perfetto(p, &r.samples, scale, a.warmup)?;
    }
    Ok(())
}

/// The time-stamp counter the measurement reads: refused without
/// RDTSCP, calibrated against CLOCK_MONOTONIC_RAW, with its own
/// overhead (min, p50 ticks).
fn timer(warnings: &mut Vec<String>) -> Result<(tsc::TscFeatures, TscScale, (u64, u64)), String> {
    let feats = tsc::features();
    if !cfg!(target_arch = "x86_64") {
        return Err("the latency timer needs an x86-64 time-stamp counter".into());
    }
    if !feats.rdtscp {
        return Err("this CPU has no RDTSCP; the fenced end-of-interval read needs it".into());
    }
    if !feats.invariant {
        warnings.push("CPUID does not report an invariant TSC: ticks may not be time (frequency changes, or a hypervisor hiding the bit)".to_string());
    }
    let scale = calibrate().ok_or("TSC calibration against CLOCK_MONOTONIC_RAW failed")?;
    Ok((feats, scale, timer_overhead()))
}

fn run_inner(a: &LatencyArgs) -> Result<(), String> {
    if a.iterations == 0 {
        return Err("--iterations must be at least 1".into());
    }
    if a.target.hardware().is_some() && a.compare {
        return Err(
            "--compare brings up the model three times; on a GPU pick one --mapping".into(),
        );
    }
    let mut warnings = Vec::new();
    let (feats, scale, (ov_min, ov_p50)) = timer(&mut warnings)?;

    let hardware = a.target.hardware();
    let Placement {
        cpus,
        cpu,
        model_cpu,
        idle,
    } = place_threads(a, &mut warnings);
    // A mapping the model part lacks is refused before it is touched.
    let mapping: Option<Mapping> = match a.mapping {
        Some(m) if a.target.hardware().is_none() => Some(a.target.part.check_mapping(m.into())?),
        m => m.map(Into::into),
    };
    let modes: Vec<Option<Mapping>> = if hardware.is_some() {
        vec![Some(mapping.unwrap_or(Mapping::Mes))]
    } else if a.compare {
        // GC 9.4.3 and 9.4.2 have no MES: KFD's CPSCH (the HWS runlist)
        // is the scheduled path there, beside the direct and KIQ mappings.
        let gfx9 = matches!(
            a.target.part.part().generation,
            barebell::ip::Generation::Gfx94 | barebell::ip::Generation::Gfx90a
        );
        let all = if gfx9 {
            [Mapping::Direct, Mapping::Kiq, Mapping::Hws]
        } else {
            Mapping::ALL
        };
        all.into_iter().map(Some).collect()
    } else {
        vec![mapping]
    };
    let barrier = a.packet == Some(PacketArg::Barrier);
    // On a GPU the default measured packet is a dispatch of the built-in
    // empty kernel (rebuilt for the part discovery finds).
    let kernel = match (&a.kernel, hardware, barrier) {
        (Some(k), _, _) => Some(KernelSpec::resolve(k, a.target.part)?),
        (None, Some(_), false) => Some(KernelSpec::resolve("empty", a.target.part)?),
        (None, _, _) => None,
    };
    // Measured before the run, on this thread, while nothing else runs.
    let first = match (&kernel, hardware) {
        (Some(k), None) => Some(k.first_launch(a.target.part, a.seed)?),
        _ => None,
    };
    let mut runs = Vec::new();
    for &m in &modes {
        let placed = (idle, &cpus[..], cpu, model_cpu);
        runs.push(run_target(
            a,
            m,
            scale,
            placed,
            kernel.as_ref(),
            barrier,
            &mut warnings,
        )?);
    }

    let timer = TimerJson {
        tsc_hz: scale.hz,
        calibrated_against: "CLOCK_MONOTONIC_RAW",
        cpuid_hz: feats.cpuid_hz,
        invariant_tsc: feats.invariant,
        hypervisor: feats.hypervisor,
        overhead_min_ns: scale.to_ns(ov_min),
        overhead_p50_ns: scale.to_ns(ov_p50),
    };
    let params = ParamsJson {
        target: match hardware {
            Some(Hardware::Vfio(_)) => "vfio",
            Some(Hardware::Sysfs(_)) => "sysfs",
            None => "model",
        },
        mapping: if a.compare {
            "compare"
        } else if hardware.is_some() {
            mapping.unwrap_or(Mapping::Mes).name()
        } else {
            mapping.map_or("unmapped", Mapping::name)
        },
        part: match hardware {
            Some(_) => "discovered",
            None => a.target.part.name(),
        },
        iterations: a.iterations,
        warmup: a.warmup,
        batch: a.batch,
        pace_us: a.pace_us,
        jitter_ns: a.jitter_ns,
        cpu,
        model_cpu,
        kernel_ns: a.kernel_ns,
        packet: if barrier { "barrier" } else { "dispatch" },
        kernel: kernel.as_ref().map(|k| k.label.clone()),
        kernel_detail: kernel.as_ref().map(KernelSpec::describe),
        first_launch_ns: first.map(|f| f.first_launch_ns),
        load_ns: first.map(|f| f.load_ns),
        launch_ns: first.map(|f| f.launch_ns),
        seed: a.seed,
        ring_slots: target::SLOTS,
    };

    if a.compare {
        return finish_compare(a, scale, params, timer, &runs, warnings);
    }

    let r = runs.pop().ok_or("no run")?;
    if let Some(k) = &kernel {
        println!(
            "kernel: {}{}",
            k.describe(),
            first.map_or(String::new(), |f| format!(
                "; first launch {} ns (code object bytes in memory to the first completion; load {} ns, launch {} ns, the rest the model's run)",
                f.first_launch_ns, f.load_ns, f.launch_ns
            ))
        );
    }
    print_table(
        a,
        scale,
        feats.invariant,
        ov_min,
        ov_p50,
        &r,
        &warnings,
        cpu,
        model_cpu,
    );
    let report = Report {
        params,
        timer,
        create_ns: r.create_ns,
        phases: phases_json(&r),
        outliers: r.top.clone(),
        cp_correlation_uncertainty_ns: r.cp_uncertainty_ns(scale),
        cpu_round_trip_ns: r.round_trip,
        warnings,
    };
    write_outputs(a, scale, &r, &report)
}

/// Submissions the Perfetto file shows at most.
const PERFETTO_SAMPLES: usize = 2_000;

/// A sample of the submissions, each at the time it ran (the TSC read
/// right after its doorbell store, less its publish and doorbell phases),
/// its four phases back to back on the samples track.
fn write_perfetto(
    p: &Path,
    samples: &[Sample],
    scale: TscScale,
    first: usize,
) -> Result<(), String> {
    use crate::perfetto::{SAMPLES, Trace};
    let mut t = Trace::new("barebell latency");
    let every = samples.len().div_ceil(PERFETTO_SAMPLES).max(1);
    let start_of = |s: &Sample| {
        s.doorbell_at
            .saturating_sub(s.doorbell)
            .saturating_sub(s.publish)
    };
    let origin = samples.first().map_or(0, start_of);
    for (i, s) in samples.iter().enumerate().step_by(every) {
        let mut at = scale.to_ns(start_of(s).saturating_sub(origin));
        let it = serde_json::json!({"iteration": first + i});
        for (name, ticks) in [
            ("publish", s.publish),
            ("doorbell", s.doorbell),
            ("pickup", s.pickup),
            ("completion", s.completion),
        ] {
            let ns = scale.to_ns(ticks);
            t.slice(SAMPLES, name, "phase", at, ns, it.clone());
            at = at.saturating_add(ns);
        }
    }
    t.write(p)
}

/// The round-trip line of the report, if the probe ran.
fn round_trip_text(rt: RoundTripJson) -> Option<String> {
    let ns = |v: Option<u64>| v.map_or("-".to_string(), |n| format!("{n} ns"));
    (rt.before.is_some() || rt.after.is_some()).then(|| {
        format!(
            "cross-CPU cache-line round trip (measuring CPU <-> model CPU, median): {} before the run, {} after; pickup and completion move with it",
            ns(rt.before),
            ns(rt.after)
        )
    })
}

/// `--compare`: one row per mapping mode, with ratios against direct HQD.
fn print_compare(a: &LatencyArgs, scale: TscScale, runs: &[RunResult], warnings: &[String]) {
    println!(
        "barebell latency --compare: model {}, {} iterations after {} warm-up per mode, batch {}; TSC {:.3} GHz",
        match a.target.part {
            PartArg::Navi31 => "navi31 (gfx11, MES v11)",
            PartArg::Navi48 => "navi48 (gfx12, uni-MES v12)",
            PartArg::Mi300x => "mi300x (GC 9.4.3)",
            PartArg::Mi308x => "mi308x (GC 9.4.3)",
            PartArg::Mi210 => "mi210 (GC 9.4.2)",
        },
        a.iterations,
        a.warmup,
        a.batch,
        scale.hz as f64 / 1e9
    );
    println!();
    let base = runs
        .iter()
        .find(|r| r.label == "direct")
        .and_then(|r| r.summaries.get(4))
        .map(|s| s.p50.max(1));
    println!(
        "{:<8} {:>11} {:>9} {:>9} {:>9} {:>11} {:>10} {:>10} {:>10}",
        "mapping",
        "create (ns)",
        "publish",
        "doorbell",
        "pickup",
        "completion",
        "total p50",
        "total p99",
        "p50/direct"
    );
    for r in runs {
        let p50 = |i: usize| r.summaries.get(i).map_or(0, |s| s.p50);
        let p99 = r.summaries.get(4).map_or(0, |s| s.p99);
        let ratio = base.map_or(f64::NAN, |b| p50(4) as f64 / b as f64);
        println!(
            "{:<8} {:>11} {:>9} {:>9} {:>9} {:>11} {:>10} {:>10} {:>10.2}",
            r.label,
            r.create_ns.map_or("-".to_string(), |n| n.to_string()),
            p50(0),
            p50(1),
            p50(2),
            p50(3),
            p50(4),
            p99,
            ratio
        );
    }
    println!(
        "(phase columns are p50 in ns; create is one mapping call: MQD build plus the firmware or register round trip, on the model)"
    );
    for r in runs {
        if let Some(t) = round_trip_text(r.round_trip) {
            println!("{}: {t}", r.label);
        }
    }
    for w in warnings {
        println!("warning: {w}");
    }
}

#[allow(clippy::too_many_arguments)]
fn print_table(
    a: &LatencyArgs,
    scale: TscScale,
    invariant: bool,
    ov_min: u64,
    ov_p50: u64,
    r: &RunResult,
    warnings: &[String],
    cpu: Option<usize>,
    model_cpu: Option<usize>,
) {
    let (s, cp, top) = (&r.summaries, &r.cp_summaries, &r.top);
    let cpu_s = |c: Option<usize>| c.map_or("unpinned".to_string(), |c| format!("CPU {c}"));
    println!(
        "barebell latency: target {}, queue {}, {} iterations after {} warm-up, batch {}, {}",
        match a.target.hardware() {
            Some(t) => format!(
                "{t} (UNVERIFIED ON HARDWARE; the packet is {})",
                match &a.kernel {
                    _ if a.packet == Some(PacketArg::Barrier) =>
                        "an AQL BARRIER_AND with no dependencies".to_string(),
                    Some(k) => format!("a dispatch of {k}"),
                    None => "a dispatch of the built-in empty kernel".to_string(),
                }
            ),
            None => "model (software CP on a thread)".to_string(),
        },
        match (
            a.mapping
                .map(Into::into)
                .or(a.target.hardware().map(|_| Mapping::Mes)),
            r.create_ns
        ) {
            (Some(m), Some(ns)) => format!("mapped by {} in {ns} ns", m.name()),
            _ => "bound to the CP directly".to_string(),
        },
        a.iterations,
        a.warmup,
        a.batch,
        match (a.pace_us, a.jitter_ns) {
            (0, 0) => "back to back".to_string(),
            (0, j) => format!("back to back after 0-{j} ns of jitter"),
            (p, 0) => format!("paced every {p} µs"),
            (p, j) => format!("paced every {p} µs plus 0-{j} ns of jitter"),
        }
    );
    println!(
        "timer: TSC {:.3} GHz (calibrated against CLOCK_MONOTONIC_RAW{}), read overhead min {} ns / median {} ns; measuring on {}, model on {}",
        scale.hz as f64 / 1e9,
        if invariant {
            ", invariant"
        } else {
            ", NOT reported invariant"
        },
        scale.to_ns(ov_min),
        scale.to_ns(ov_p50),
        cpu_s(cpu),
        cpu_s(model_cpu)
    );
    if let Some(t) = round_trip_text(r.round_trip) {
        println!("{t}");
    }
    println!();
    println!(
        "{:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "phase (ns)", "min", "mean", "p50", "p90", "p99", "p99.9", "max"
    );
    for (name, x) in PHASES.iter().zip(s).chain(CP_PHASES.iter().zip(cp)) {
        println!(
            "{:<11} {:>9} {:>9.0} {:>9} {:>9} {:>9} {:>9} {:>10}",
            name, x.min, x.mean, x.p50, x.p90, x.p99, x.p99_9, x.max
        );
    }
    if !cp.is_empty() {
        println!(
            "(cp_launch: doorbell store to the CP's start stamp; cp_exec: start to end stamp. The model stamps with CLOCK_MONOTONIC_RAW, put on the TSC axis by a line through two anchors around the run, good to ±{} ns)",
            r.cp_uncertainty_ns(scale).unwrap_or(0)
        );
    }
    if !top.is_empty() {
        let list: Vec<String> = top.iter().map(|(v, i)| format!("{v} ns @ {i}")).collect();
        println!("\nslowest totals: {}", list.join(", "));
    }
    for w in warnings {
        println!("warning: {w}");
    }
    let _ = std::io::stdout().flush();
}

fn write_csv(
    p: &Path,
    samples: &[Sample],
    scale: TscScale,
    corr: Option<&Correlation>,
    first: usize,
) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(p)?);
    writeln!(
        f,
        "iteration,publish_ns,doorbell_ns,pickup_ns,completion_ns,total_ns,cp_launch_ns,cp_exec_ns"
    )?;
    for (i, s) in samples.iter().enumerate() {
        // CP columns stay empty when the CP wrote no timestamps.
        let (launch, exec) = match corr {
            Some(corr) if s.cp_start_ts != 0 => (
                cp_launch_ns(scale, corr, s).to_string(),
                s.cp_end_ts.saturating_sub(s.cp_start_ts).to_string(),
            ),
            _ => (String::new(), String::new()),
        };
        writeln!(
            f,
            "{},{},{},{},{},{},{launch},{exec}",
            first + i,
            scale.to_ns(s.publish),
            scale.to_ns(s.doorbell),
            scale.to_ns(s.pickup),
            scale.to_ns(s.completion),
            scale.to_ns(s.total())
        )?;
    }
    f.flush()
}
