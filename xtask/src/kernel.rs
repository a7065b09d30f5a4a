//! The kernel crate's fuzzing: the seed corpus, and libFuzzer runs.
//!
//! `kernel-corpus` builds the test kernels (kernel/tests/kernels) with
//! clang-19/ld.lld-19 for every target the tests use and writes them, and
//! their metadata notes, to kernel/fuzz/corpus (checked in).
//!
//! `kernel-fuzz` builds a target of kernel/fuzz with sanitizer coverage
//! the way cargo-fuzz does, on the stable toolchain (so no extra
//! install: libfuzzer-sys compiles libFuzzer itself), optionally with
//! AddressSanitizer through nightly, and runs it for a time or a number of
//! executions. The CI stage is a short run of both targets.

use crate::util::{cargo, output, with_ci_env};
use anyhow::{Context, Result, bail};
use object::read::elf::{FileHeader, ProgramHeader};
use std::path::{Path, PathBuf};
use std::process::Command;

/// (processor, code object version) pairs, as the tests build them.
const TARGETS: &[(&str, u8)] = &[
    ("gfx1100", 4),
    ("gfx1100", 5),
    ("gfx1100", 6),
    ("gfx1201", 4),
    ("gfx1201", 5),
    ("gfx1201", 6),
    ("gfx11-generic", 6),
    ("gfx12-generic", 6),
];

fn corpus_dir(root: &Path, target: &str) -> PathBuf {
    root.join("kernel/fuzz/corpus").join(target)
}

/// The fuzz crates (each its own workspace) and their targets with the
/// seconds each runs in the `fuzz smoke` CI stage. Seeds are checked in
/// under `<crate>/corpus/<target>`.
pub const FUZZ_TARGETS: &[(&str, &str, u64)] = &[
    ("pcie/fuzz", "caps", 15),
    ("pcie/fuzz", "pci_decode", 8),
    ("pcie/fuzz", "sysfs", 5),
    ("pcie/fuzz", "pagemap", 5),
    ("firmware-if/fuzz", "container", 15),
    ("runtime/fuzz", "discovery", 15),
    ("runtime/fuzz", "mes_status", 10),
    ("runtime/fuzz", "hub_fault", 10),
    ("runtime/fuzz", "psp", 10),
    ("runtime/fuzz", "ih", 8),
    ("runtime/fuzz", "vgpu_regs", 10),
    ("kernel/fuzz", "job", 8),
    ("runtime/fuzz", "ring_decode", 8),
    ("runtime/fuzz", "pm4_hws", 5),
    ("runtime/fuzz", "mqd", 5),
    ("runtime/fuzz", "sdma_packet", 5),
    ("runtime/fuzz", "pte_v9", 5),
    ("runtime/fuzz", "mes_frame", 3),
    ("runtime/fuzz", "fw_rings", 8),
    ("isa/fuzz", "disasm", 8),
    ("isa/fuzz", "interp", 10),
    ("unikernel/fuzz", "cpio", 5),
    ("unikernel/fuzz", "acpi", 8),
];

fn clang(src: &Path, lang: &str, mcpu: &str, cov: u8, extra: &[&str], out: &Path) -> Result<()> {
    output(
        Command::new("clang-19")
            .args(["-target", "amdgcn-amd-amdhsa", "-nogpulib"])
            .arg(format!("-mcpu={mcpu}"))
            .arg(format!("-mcode-object-version={cov}"))
            .args(extra)
            .arg("-x")
            .arg(lang)
            .arg(src)
            .arg("-o")
            .arg(out),
    )
    .map(|_| ())
}

/// The `NT_AMDGPU_METADATA` descriptor of a code object.
fn metadata_note(bytes: &[u8]) -> Result<Vec<u8>> {
    let hdr = object::elf::FileHeader64::<object::LittleEndian>::parse(bytes)?;
    let e = object::LittleEndian;
    for ph in hdr.program_headers(e, bytes)? {
        if let Some(mut notes) = ph.notes(e, bytes)? {
            while let Some(n) = notes.next()? {
                if n.n_type(e) == 32 && n.name() == b"AMDGPU" {
                    return Ok(n.desc().to_vec());
                }
            }
        }
    }
    bail!("no AMDGPU metadata note")
}

/// `cargo xtask kernel-corpus`.
pub fn corpus(root: &Path) -> Result<String> {
    let kernels = root.join("kernel/tests/kernels");
    let co_dir = corpus_dir(root, "code_object");
    let md_dir = corpus_dir(root, "metadata");
    for d in [&co_dir, &md_dir] {
        if d.exists() {
            std::fs::remove_dir_all(d)?;
        }
        std::fs::create_dir_all(d)?;
    }
    let mut n = 0;
    let mut write = |name: String, path: &Path| -> Result<()> {
        let bytes = std::fs::read(path)?;
        std::fs::write(co_dir.join(format!("{name}.co")), &bytes)?;
        std::fs::write(
            md_dir.join(format!("{name}.msgpack")),
            metadata_note(&bytes)?,
        )?;
        n += 1;
        Ok(())
    };
    let tmp = root.join("target/kernel-corpus");
    std::fs::create_dir_all(&tmp)?;
    for &(mcpu, cov) in TARGETS {
        for opt in ["-O2", "-O0"] {
            let out = tmp.join("k.co");
            clang(&kernels.join("kernels.cl"), "cl", mcpu, cov, &[opt], &out)?;
            write(format!("kernels-{mcpu}-v{cov}{opt}"), &out)?;
        }
    }
    let out = tmp.join("r.co");
    clang(
        &kernels.join("reloc.cl"),
        "cl",
        "gfx1100",
        5,
        &["-O2", "-cl-std=CL2.0"],
        &out,
    )?;
    write("reloc-gfx1100-v5".into(), &out)?;
    let out = tmp.join("p.co");
    clang(
        &kernels.join("printf.cl"),
        "cl",
        "gfx1201",
        6,
        &["-O0"],
        &out,
    )?;
    write("printf-gfx1201-v6".into(), &out)?;
    Ok(format!(
        "{n} code objects in {} and their notes in {}",
        co_dir.display(),
        md_dir.display()
    ))
}

fn host_triple() -> Result<String> {
    let v = output(Command::new("rustc").arg("-vV"))?;
    v.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .context("rustc -vV printed no host triple")
}

/// cargo-fuzz's instrumentation flags (sanitizer coverage for libFuzzer).
const SANCOV: &[&str] = &[
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "--cfg",
    "fuzzing",
    "-Cdebug-assertions",
    "-Coverflow-checks",
];

/// Builds a fuzz target; returns the binary.
fn build(root: &Path, dir: &str, target: &str, asan: bool) -> Result<PathBuf> {
    let triple = host_triple()?;
    let mut flags: Vec<&str> = SANCOV.to_vec();
    let mut cmd = if asan {
        flags.push("-Zsanitizer=address");
        let mut c = with_ci_env(Command::new("cargo"));
        c.arg("+nightly");
        c
    } else {
        cargo()
    };
    let tag = dir.trim_end_matches("/fuzz").replace('/', "-");
    let target_dir = root.join(if asan {
        format!("target/{tag}-fuzz-asan")
    } else {
        format!("target/{tag}-fuzz")
    });
    let status = cmd
        .current_dir(root.join(dir))
        .env("RUSTFLAGS", flags.join(" "))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .args(["build", "--release", "--quiet", "--bin", target, "--target"])
        .arg(&triple)
        .arg("--target-dir")
        .arg(&target_dir)
        .status()
        .context("building the fuzz target")?;
    if !status.success() {
        bail!("building fuzz target {target} failed");
    }
    Ok(target_dir.join(triple).join("release").join(target))
}

/// What one libFuzzer run did.
#[derive(Debug)]
pub struct FuzzRun {
    pub target: String,
    pub runs: u64,
    pub seconds: f64,
}

/// Runs `target` for `seconds` or `runs` executions, whichever ends first
/// (0 = unbounded), with the checked-in corpus as read-only seeds.
pub fn fuzz(root: &Path, target: &str, seconds: u64, runs: u64, asan: bool) -> Result<FuzzRun> {
    let dir = FUZZ_TARGETS
        .iter()
        .find(|t| t.1 == target)
        .map_or("kernel/fuzz", |t| t.0);
    fuzz_in(root, dir, target, seconds, runs, asan)
}

/// [`fuzz`] for a target of the fuzz crate at `dir`.
pub fn fuzz_in(
    root: &Path,
    dir: &str,
    target: &str,
    seconds: u64,
    runs: u64,
    asan: bool,
) -> Result<FuzzRun> {
    let bin = build(root, dir, target, asan)?;
    let work = root.join("target/kernel-fuzz-corpus").join(target);
    std::fs::create_dir_all(&work)?;
    let artifacts = root.join("target/kernel-fuzz-artifacts").join(target);
    std::fs::create_dir_all(&artifacts)?;
    let seeds = if dir == "kernel/fuzz" {
        corpus_dir(root, target)
    } else {
        root.join(dir).join("corpus").join(target)
    };
    // The seeds are checked in (xtask/fuzz-seeds.sh rebuilds them); a
    // missing or empty corpus would let the fuzzer start from nothing.
    let n = std::fs::read_dir(&seeds)
        .map(|d| d.filter_map(|e| e.ok()).count())
        .unwrap_or(0);
    anyhow::ensure!(
        n > 0,
        "no seeds in {} (run xtask/fuzz-seeds.sh and commit them)",
        seeds.display()
    );
    let mut cmd = Command::new(&bin);
    cmd.arg(&work)
        .arg(&seeds)
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg("-print_final_stats=1")
        .arg("-rss_limit_mb=2048")
        .arg("-max_len=65536");
    if seconds > 0 {
        cmd.arg(format!("-max_total_time={seconds}"));
    }
    if runs > 0 {
        cmd.arg(format!("-runs={runs}"));
    }
    let started = std::time::Instant::now();
    let out = cmd.output().context("running the fuzz target")?;
    let elapsed = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!(
            "fuzz target {target} failed ({}); artifacts in {}:\n{}",
            out.status,
            artifacts.display(),
            stderr
                .lines()
                .rev()
                .take(40)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    let stat = |name: &str| -> Option<u64> {
        stderr
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    Ok(FuzzRun {
        target: target.to_string(),
        runs: stat("stat::number_of_executed_units:")
            .context("libFuzzer printed no final stats")?,
        seconds: elapsed,
    })
}

/// The CI stage: a short run of each target.
pub fn smoke(root: &Path) -> Result<String> {
    let mut parts = Vec::new();
    for (target, secs) in [("code_object", 20), ("metadata", 10)] {
        let r = fuzz(root, target, secs, 0, false)?;
        parts.push(format!(
            "{}: {} runs in {:.0} s, 0 crashes",
            r.target, r.runs, r.seconds
        ));
    }
    Ok(parts.join("; "))
}

/// The `fuzz smoke` CI stage: every parser target of the pcie,
/// firmware-if, runtime and unikernel fuzz crates for its fixed budget.
pub fn smoke_all(root: &Path) -> Result<String> {
    let mut parts = Vec::new();
    for &(dir, target, secs) in FUZZ_TARGETS {
        let r = fuzz_in(root, dir, target, secs, 0, false)?;
        parts.push(format!("{}: {} runs, 0 crashes", r.target, r.runs));
    }
    Ok(parts.join("; "))
}
