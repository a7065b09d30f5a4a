//! `barebell copy`: SDMA copies (issue 19) on the device model, verified
//! byte for byte, with submit-to-fence latency and bandwidth over a range
//! of sizes.
//!
//! The bring-up runs to its queue step (direct compute queue), then SDMA
//! engine 0 queue 0 is mapped ([`barebell_bringup::sdma`]). Host buffers
//! are user memory (system memory, GPU VA = host address); device buffers
//! are user VRAM ([`barebell_bringup::gmc::USER_VRAM_VA`]), reached by the
//! host through BAR0. Each size is copied `--reps` times per direction;
//! after each copy the destination is compared with the source. Time is
//! host wall time from the submission call (HDP flush, packets, doorbell)
//! to the host seeing the fence: on the model this is the model's
//! execution speed on this machine, not a GPU's.

use crate::dma_view::DmaView;
use crate::dma_view::ViewToVec;
use crate::target::Device;
use crate::target::{MODEL_BAR0_BYTES, PartArg};
use barebell::sdma::{CopyDirection, pkt::COPY_MAX_BYTES};
use barebell_bringup::{FirmwareDir, Mapping, Options, Quiet, Step};
use barebell_model::vgpu::HostMemory;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectionArg {
    H2d,
    D2h,
    D2d,
}

impl From<DirectionArg> for CopyDirection {
    fn from(d: DirectionArg) -> Self {
        match d {
            DirectionArg::H2d => CopyDirection::HostToDevice,
            DirectionArg::D2h => CopyDirection::DeviceToHost,
            DirectionArg::D2d => CopyDirection::DeviceToDevice,
        }
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyMappingArg {
    /// Engine 0 queue 0 loaded by registers (tinygrad's AM, Linux's
    /// `sdma_v6_0_gfx_resume()`).
    Direct,
    /// MES ADD_QUEUE with the SDMA queue type (KFD's `add_queue_mes()`);
    /// the bring-up maps its compute queue by MES too (gfx11, gfx12).
    Mes,
    /// GC 9.4.3: the compute queue mapped by the KIQs, the SDMA queue
    /// loaded by registers as with `direct`.
    Kiq,
    /// GC 9.4.3: HWS MAP_QUEUES with the SDMA engine (KFD's CPSCH), in
    /// the process the bring-up's compute queue runs in.
    Hws,
}

/// The largest `--bytes`: 1 GiB.
const MAX_BYTES: u64 = 1 << 30;

#[derive(Args, Debug, Clone)]
pub struct CopyArgs {
    /// The model part.
    #[arg(long, value_enum, default_value = "navi31")]
    pub part: PartArg,
    /// The largest copy; sizes 1, 4 KiB, 64 KiB, 1 MiB, 4 MiB, 16 MiB, ...
    /// up to it are measured, and it itself. Range 1 to 1 GiB (the model
    /// holds a source and a destination of this size, and the host its
    /// reference copies).
    #[arg(long, default_value_t = 64 << 20, value_parser = clap::value_parser!(u64).range(1..=MAX_BYTES))]
    pub bytes: u64,
    /// Only this direction (default: all three).
    #[arg(long, value_enum)]
    pub direction: Option<DirectionArg>,
    #[arg(long, value_enum, default_value = "direct")]
    pub mapping: CopyMappingArg,
    /// Copies per size and direction, 1 to 1000.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub reps: u32,
    /// Print one JSON document (docs/copy.md) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// No progress bar on stderr (it shows only on a terminal, once a
    /// run has lasted 2 s).
    #[arg(long)]
    pub quiet: bool,
    /// Where the amdgpu firmware blobs are.
    #[arg(long, default_value = FirmwareDir::SYSTEM)]
    pub firmware_dir: PathBuf,
}

#[derive(Serialize, Debug)]
struct Latency {
    min: u64,
    median: u64,
    max: u64,
}

#[derive(Serialize, Debug)]
struct Row {
    direction: &'static str,
    bytes: u64,
    packets: u64,
    reps: u32,
    verified: bool,
    latency_ns: Latency,
    /// Median time of the submission call alone (HDP flush, packets,
    /// poll word, doorbell), ns.
    submit_ns: u64,
    /// bytes / median latency, in GiB/s.
    bandwidth_gib_s: f64,
}

#[derive(Serialize, Debug)]
struct Report {
    part: &'static str,
    engine: &'static str,
    mapping: &'static str,
    /// `null` when MES picked it.
    vmid: Option<u8>,
    doorbell: u32,
    copy_max_bytes: u32,
    clock: &'static str,
    results: Vec<Row>,
    /// Whether the SDMA queue and every teardown stage were done or not
    /// needed.
    teardown_complete: bool,
    /// Each teardown stage and what it did, the SDMA queue first.
    teardown: Vec<String>,
}

pub fn run(args: CopyArgs) -> ExitCode {
    crate::stop::handle();
    let r = copy(&args);
    if let Some(sig) = crate::stop::requested() {
        eprintln!("barebell copy: interrupted by {sig}; the device was torn down");
        if let Err(e) = r {
            eprintln!("barebell copy: {e}");
        }
        return ExitCode::from(crate::stop::status());
    }
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barebell copy: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What the model's firmware stand-ins logged, for an error.
fn logs(d: &Device) -> String {
    match d {
        Device::Model(m) => format!("\n{}", m.firmware_logs()),
        _ => d.diagnostics(),
    }
}

/// 1, 4 KiB, 64 KiB, 1 MiB, ... (×16) below `max`, then `max`.
fn sizes(max: u64) -> Vec<u64> {
    let mut v = vec![];
    let mut s = 1u64;
    while s < max {
        v.push(s);
        s = if s == 1 { 4096 } else { s * 16 };
    }
    v.push(max);
    v
}

fn pattern(len: usize, salt: u64) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let mut x = salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
    buf
}

/// The mapping `args` asks for, refused before anything runs when the
/// part has no such path for SDMA.
fn mapping_for(args: &CopyArgs) -> Result<Mapping, String> {
    let mapping = match args.mapping {
        CopyMappingArg::Direct => Mapping::Direct,
        CopyMappingArg::Mes => Mapping::Mes,
        CopyMappingArg::Kiq => Mapping::Kiq,
        CopyMappingArg::Hws => Mapping::Hws,
    };
    use barebell::ip::Generation as G;
    match (args.part.part().generation, mapping) {
        (G::Gfx94, Mapping::Mes) => Err(format!(
            "--mapping mes: {} (GC 9.4.3) has no MES; use direct, kiq or hws",
            args.part.name()
        )),
        (G::Gfx90a, Mapping::Direct | Mapping::Kiq | Mapping::Mes) => Err(format!(
            "--mapping {}: {} (GC 9.4.2, SDMA 4.4.0) maps SDMA queues through the HWS only; use --mapping hws",
            mapping.name(),
            args.part.name()
        )),
        (G::Gfx11 | G::Gfx12, Mapping::Kiq | Mapping::Hws) => Err(format!(
            "--mapping {}: {} maps SDMA queues directly or by MES",
            mapping.name(),
            args.part.name()
        )),
        _ => Ok(mapping),
    }
}

/// The model device, with `user` bytes of user memory and of user VRAM.
fn build_device(args: &CopyArgs, each: usize, user: usize) -> Result<Device, String> {
    // The model's memory plus the host's source and reference copies.
    crate::hostmem::ensure_available(
        (MODEL_BAR0_BYTES + (4 << 20) + 2 * user + 2 * each) as u64,
        "copy --bytes",
    )?;
    let mem = HostMemory::allocate_sized(MODEL_BAR0_BYTES + user, (4 << 20) + user)
        .map_err(|e| format!("model memory: {e}"))?;
    let fw = FirmwareDir(args.firmware_dir.clone());
    crate::target::model_device(args.part, &fw, mem, 1)
        .map(Device::Model)
        .map_err(|e| format!("building the model {}: {e}", args.part.name()))
}

/// Source and destination buffers: two in host memory, two in VRAM (with
/// their device addresses). The engine writes each of them in some
/// direction, so all are views, never references.
struct Buffers<'p> {
    h_a: DmaView<'p>,
    h_b: DmaView<'p>,
    d_a: (u64, DmaView<'p>),
    d_b: (u64, DmaView<'p>),
}

/// `args.reps` copies of `size` bytes in direction `dir`, each verified
/// byte for byte; `salt` varies the pattern from copy to copy.
fn measure_one(
    q: &mut barebell_bringup::sdma::CopyQueue<'_>,
    b: &mut Buffers<'_>,
    size: u64,
    dir: CopyDirection,
    reps: u32,
    salt: &mut u64,
    progress: &mut crate::progress::Progress,
) -> Result<Row, String> {
    let len = size as usize;
    let mut times = vec![];
    let mut submits = vec![];
    let mut verified = true;
    for _ in 0..reps {
        if let Some(sig) = crate::stop::requested() {
            return Err(format!("interrupted by {sig}"));
        }
        progress.inc();
        *salt += 1;
        // h2d host a -> VRAM a, d2h VRAM a -> host b, d2d VRAM a -> VRAM b.
        let want = pattern(len, *salt);
        // (source view, destination view, their device addresses)
        let (src, dst, src_va, dst_va) = match dir {
            CopyDirection::HostToDevice => (b.h_a, b.d_a.1, b.h_a.address(), b.d_a.0),
            CopyDirection::DeviceToHost => (b.d_a.1, b.h_b, b.d_a.0, b.h_b.address()),
            CopyDirection::DeviceToDevice => (b.d_a.1, b.d_b.1, b.d_a.0, b.d_b.0),
        };
        src.write(0, &want);
        let t = Instant::now();
        let seq = q
            .submit_copy(dst_va, src_va, size)
            .map_err(|e| format!("{} {size} bytes: {e}", dir.name()))?;
        submits.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        q.wait(seq, barebell_bringup::sdma::BOUND_NS)
            .map_err(|e| format!("{} {size} bytes: {e}", dir.name()))?;
        times.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        verified &= src.head(len) == want && dst.head(len) == want;
    }
    times.sort_unstable();
    submits.sort_unstable();
    let median = times[times.len() / 2];
    Ok(Row {
        direction: dir.name(),
        bytes: size,
        packets: size.div_ceil(u64::from(COPY_MAX_BYTES)),
        reps,
        verified,
        latency_ns: Latency {
            min: times[0],
            median,
            max: times[times.len() - 1],
        },
        submit_ns: submits[submits.len() / 2],
        bandwidth_gib_s: size as f64 / median.max(1) as f64 * 1e9 / (1u64 << 30) as f64,
    })
}

/// Every size up to `--bytes` in every direction asked for.
fn measure(
    q: &mut barebell_bringup::sdma::CopyQueue<'_>,
    b: &mut Buffers<'_>,
    args: &CopyArgs,
) -> Result<Vec<Row>, String> {
    let dirs: Vec<CopyDirection> = match args.direction {
        Some(d) => vec![d.into()],
        None => CopyDirection::ALL.to_vec(),
    };
    let all = sizes(args.bytes);
    let mut progress = crate::progress::Progress::new(
        "copy",
        Some((all.len() * dirs.len()) as u64 * u64::from(args.reps)),
        args.quiet,
    );
    let mut rows = vec![];
    let mut salt = 1u64;
    for &size in &all {
        for &dir in &dirs {
            progress.message(&format!("{size} bytes {}", dir.name()));
            rows.push(measure_one(
                q,
                b,
                size,
                dir,
                args.reps,
                &mut salt,
                &mut progress,
            )?);
        }
    }
    Ok(rows)
}

/// The SDMA queue off the engine, then the device torn down
/// (`Gpu::shutdown`) and checked ([`crate::teardown::teardown_lines`]).
fn tear_down<'p>(
    q: barebell_bringup::sdma::CopyQueue<'p>,
    mut up: barebell_bringup::Gpu<'p>,
    device: &Device,
) -> (Vec<String>, bool) {
    let stopped = q.stop(&mut up);
    let torn = up.shutdown();
    let quiet = device
        .quiescence()
        .unwrap_or_else(|| Err("not a model".into()));
    crate::teardown::teardown_lines(Some(stopped), &torn, quiet)
}

fn copy(args: &CopyArgs) -> Result<(), String> {
    if args.bytes == 0 {
        return Err("--bytes must be at least 1".into());
    }
    if args.reps == 0 {
        return Err("--reps must be at least 1".into());
    }
    let mapping = mapping_for(args)?;
    let n = usize::try_from(args.bytes).map_err(|_| "--bytes too large".to_string())?;
    let each = n.next_multiple_of(4096);
    let user = (2 * each + (2 << 20)).next_multiple_of(2 << 20);
    let device = build_device(args, each, user)?;
    let gpu = device.platform();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        user_memory: user,
        user_vram: user,
        ..Options::default()
    };
    let fw = FirmwareDir(args.firmware_dir.clone());
    // A stop signal cancels the bring-up between steps (torn down as on
    // an error) and ends the copies between two copies (torn down below).
    let mut up = barebell_bringup::run(gpu, &fw, &opts, &crate::stop::Cancellable)
        .map_err(|e| format!("{}: {e}{}", gpu.name(), logs(&device)))?;
    let mut q = match barebell_bringup::sdma::open(&mut up, mapping, &Quiet) {
        Ok(q) => q,
        Err(e) => {
            let torn = up.shutdown();
            return Err(format!(
                "{}: {e}\nteardown{}",
                gpu.name(),
                if torn.complete() {
                    " complete"
                } else {
                    " INCOMPLETE"
                }
            ));
        }
    };
    let host = up
        .user
        .as_mut()
        .ok_or("no user memory after the bring-up")?;
    let h_a = host.alloc(each, 4096).map_err(|e| e.to_string())?;
    let h_b = host.alloc(each, 4096).map_err(|e| e.to_string())?;
    let vram = up
        .user_vram
        .as_mut()
        .ok_or("no user VRAM after the bring-up")?;
    let d_a = vram.alloc(each, 4096).map_err(|e| e.to_string())?;
    let d_a = (d_a.va, d_a.host);
    let d_b = vram.alloc(each, 4096).map_err(|e| e.to_string())?;
    let d_b = (d_b.va, d_b.host);
    let mut bufs = Buffers { h_a, h_b, d_a, d_b };
    // The copies; whatever they give, the teardown below runs.
    let measured = measure(&mut q, &mut bufs, args);
    let (engine, vmid, doorbell) = (q.version.name(), q.vmid, q.doorbell);
    let (teardown, teardown_complete) = tear_down(q, up, &device);
    let rows = measured.map_err(|e| {
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
    let report = Report {
        part: args.part.name(),
        engine,
        mapping: mapping.name(),
        vmid,
        doorbell,
        copy_max_bytes: COPY_MAX_BYTES,
        clock: "host wall time, submission call to fence seen, on the device model",
        results: rows,
        teardown_complete,
        teardown,
    };
    let ok = report.results.iter().all(|r| r.verified);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print_table(&report);
    }
    if !ok {
        return Err("a copy's destination differs from its source".into());
    }
    if !report.teardown_complete {
        return Err("the teardown was incomplete".into());
    }
    Ok(())
}

fn print_table(r: &Report) {
    println!(
        "{}: {} engine 0, {} mapping, VMID {}, {}; COPY_LINEAR at most {} bytes",
        r.part,
        r.engine,
        r.mapping,
        r.vmid.map_or_else(
            || format!(
                "picked by {}",
                if r.mapping == "hws" { "the HWS" } else { "MES" }
            ),
            |v| v.to_string()
        ),
        barebell::aql::doorbell::Slot::new(r.doorbell),
        r.copy_max_bytes,
    );
    println!("time: {}", r.clock);
    println!(
        "{:<4} {:>10} {:>7} {:>8} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "dir",
        "bytes",
        "packets",
        "verified",
        "min ns",
        "median ns",
        "max ns",
        "submit ns",
        "GiB/s"
    );
    for x in &r.results {
        println!(
            "{:<4} {:>10} {:>7} {:>8} {:>12} {:>12} {:>12} {:>10} {:>10.3}",
            x.direction,
            x.bytes,
            x.packets,
            if x.verified { "yes" } else { "NO" },
            x.latency_ns.min,
            x.latency_ns.median,
            x.latency_ns.max,
            x.submit_ns,
            x.bandwidth_gib_s
        );
    }
    println!(
        "teardown {}:",
        if r.teardown_complete {
            "complete"
        } else {
            "INCOMPLETE"
        }
    );
    for line in &r.teardown {
        println!("  {line}");
    }
}
