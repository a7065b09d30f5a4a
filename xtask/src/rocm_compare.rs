//! `cargo xtask rocm-compare`: ROCm's own user space on barebell's
//! libhsakmt beside barebell's own path and the seeds' MI308X figures.
//!
//! - Phases: the seeds' HIP vectorAdd (`hsakmt/rocm/vectoradd.hip`) and
//!   the HSA program's `hsa_queue_create` on the MI210 model, beside
//!   `barebell vector-add --part mi210 --mapping hws` (barebell's own
//!   re-enactment of the same flow on the same part model: its compute
//!   queue and SDMA 4.4.0 queue through the same HWS) and the seeds' ROCm
//!   figures on an MI308X. Every figure on the model is host wall time with the model
//!   in the same process: a comparison of software paths, not of GPUs.
//! - Instructions (callgrind, `--toggle-collect` on one function, as
//!   `cargo xtask bench-instr` counts barebell's submit): one
//!   `hipLaunchKernelGGL` of an empty kernel after the first
//!   (`hsakmt/rocm/hip-launch.hip`), beside barebell's kernel launch
//!   (`cargo xtask kernel-instr`); one AQL submit through ROCR's HSA API
//!   (`hsakmt/rocm/hsa-submit.c`: write index, packet, header, doorbell
//!   signal), beside barebell's submit of a ready packet.

use crate::rocm::{self, Env};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// hipLaunchKernelGGL calls counted after the first.
const HIP_LAUNCHES: u64 = 300;
/// AQL submits counted.
const HSA_SUBMITS: u64 = 1000;

/// The seeds' ROCm figures on an MI308X (ms): `hsa_queue_create`, the two
/// host-to-device copies, the first `hipLaunchKernel`,
/// `hipDeviceSynchronize`, the copy back.
const SEEDS: [(&str, f64); 5] = [
    ("queue creation", 11.23),
    ("hipMemcpy h2d x2", 90.667),
    ("first hipLaunchKernel", 0.748),
    ("hipDeviceSynchronize", 0.014),
    ("hipMemcpy d2h", 45.333),
];

pub fn run(root: &Path) -> Result<String> {
    let env = rocm::setup(root)?;
    let hip = rocm::hip_program(root, &env, &env.bin, &env.so)?;
    let hsa = rocm::hsa_program(root, &env, &env.bin, &env.so)?;
    let hip_ms = |label: &str| -> Result<f64> {
        number_after(&hip, label).with_context(|| format!("no '{label}' in: {hip}"))
    };
    let queue_ms = number_after(&hsa, "hsa_queue_create")
        .with_context(|| format!("no hsa_queue_create time in: {hsa}"))?;
    let rocm_col = [
        queue_ms,
        hip_ms("H2D")?,
        hip_ms("first hipLaunchKernelGGL")?,
        hip_ms("hipDeviceSynchronize")?,
        hip_ms("D2H")?,
    ];
    let own = own_vector_add(root)?;
    let own_col = [
        own_ms(&own, "queue")?,
        own_ms(&own, "memcpy_h2d")?,
        own_ms(&own, "launch")?,
        own_ms(&own, "synchronize")?,
        own_ms(&own, "memcpy_d2h")?,
    ];
    println!("phases, ms (host wall time; model rows run the model in-process)");
    println!(
        "{:<24} {:>22} {:>22} {:>16}",
        "phase", "ROCm 5.2.3 on barebell", "barebell vector-add", "seeds (MI308X)"
    );
    println!(
        "{:<24} {:>22} {:>22} {:>16}",
        "", "libhsakmt, mi210 model", "mi210 model, hws", "ROCm, silicon"
    );
    for (i, (phase, seeds)) in SEEDS.iter().enumerate() {
        println!(
            "{phase:<24} {:>22.3} {:>22.3} {seeds:>16.3}",
            rocm_col[i], own_col[i]
        );
    }
    let (launch, submit) = instructions(root, &env)?;
    let (own_launch, own_loaded, own_submit) = own_instructions(root)?;
    println!("instructions per call (callgrind)");
    println!(
        "  hipLaunchKernelGGL (HIP -> ROCclr -> ROCR): {launch:.0}; barebell kernel launch: {own_launch:.0} (a loaded kernel, typed: {own_loaded:.0})"
    );
    println!("  AQL submit through ROCR's HSA API: {submit:.1}; barebell submit: {own_submit:.1}");
    Ok(format!(
        "rocm compare: hsa_queue_create {queue_ms:.2} ms (barebell {:.3} ms, seeds 11.23 ms); first hipLaunchKernelGGL {:.3} ms (barebell {:.3} ms, seeds 0.748 ms); instructions per hipLaunchKernelGGL {launch:.0} vs barebell launch {own_launch:.0}; per AQL submit through ROCR {submit:.1} vs barebell {own_submit:.1}",
        own_col[0], rocm_col[2], own_col[2]
    ))
}

/// The number after `label` in `text` (a summary line: "label 1.23").
fn number_after(text: &str, label: &str) -> Option<f64> {
    let rest = &text[text.find(label)? + label.len()..];
    rest.trim_start()
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()?
        .parse()
        .ok()
}

/// `barebell vector-add --part mi210 --mapping hws`, its table.
fn own_vector_add(root: &Path) -> Result<String> {
    let out = crate::util::cargo()
        .current_dir(root)
        .args(["run", "--release", "-q", "--bin", "barebell", "--"])
        .args(["vector-add", "--part", "mi210", "--mapping", "hws"])
        .output()
        .context("running barebell vector-add")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || !text.contains("result: verified") {
        bail!(
            "barebell vector-add failed ({}): {}{}",
            out.status,
            text,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(text)
}

/// The barebell column of a step row (`step  HIP name  N ms  seeds`).
fn own_ms(table: &str, step: &str) -> Result<f64> {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(step))
        .and_then(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let at = w.iter().position(|x| *x == "ms")?;
            w.get(at.checked_sub(1)?)?.parse().ok()
        })
        .with_context(|| format!("no '{step}' row in barebell vector-add's table"))
}

/// Per-call instructions of `hipLaunchKernelGGL` and of an AQL submit
/// through ROCR, counted in the namespace with barebell's library.
fn instructions(root: &Path, env: &Env) -> Result<(f64, f64)> {
    let dir = root.join("hsakmt/rocm");
    let hip = env.bin.join("hip-launch");
    crate::util::run(
        Command::new("hipcc")
            .args(["--offload-arch=gfx90a", "-O2", "-o"])
            .arg(&hip)
            .arg(dir.join("hip-launch.hip")),
    )
    .context("building hip-launch (needs Debian's hipcc)")?;
    let hsa = env.bin.join("hsa-submit");
    crate::util::run(
        Command::new("cc")
            .args(["-O2", "-Wall", "-Werror", "-o"])
            .arg(&hsa)
            .arg(dir.join("hsa-submit.c"))
            .arg("-lhsa-runtime64"),
    )
    .context("building hsa-submit (needs gcc and libhsa-runtime-dev)")?;
    let launch = callgrind(env, &hip, "barebell_hip_launch_one", HIP_LAUNCHES)?;
    let submit = callgrind(env, &hsa, "barebell_hsa_submit_one", HSA_SUBMITS)?;
    Ok((launch, submit))
}

/// Instructions per call of `function` while `program n` runs under
/// callgrind on barebell's library.
fn callgrind(env: &Env, program: &Path, function: &str, n: u64) -> Result<f64> {
    let out_file = env.work.join(format!("callgrind.{function}.out"));
    let toggle = format!("--toggle-collect={function}");
    let file = format!("--callgrind-out-file={}", out_file.display());
    let count = n.to_string();
    let args: [&std::ffi::OsStr; 6] = [
        "valgrind".as_ref(),
        "--tool=callgrind".as_ref(),
        file.as_ref(),
        toggle.as_ref(),
        program.as_os_str(),
        count.as_ref(),
    ];
    let out = env.run(&args, "ld-debug-callgrind")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("callgrind run of {} failed:\n{stderr}", program.display());
    }
    Ok(crate::bench::collected(&stderr, function)? as f64 / n as f64)
}

/// barebell's kernel launch, typed launch of a loaded kernel and submit
/// of a ready packet (`cargo xtask kernel-instr`).
fn own_instructions(root: &Path) -> Result<(f64, f64, f64)> {
    let (line, loaded, submit) = crate::bench::kernel_instr(root)?;
    let launch = number_after(&line, "launch").context("no launch count")?;
    Ok((launch, loaded, submit))
}

#[cfg(test)]
mod tests {
    use super::{number_after, own_ms};

    #[test]
    fn reads_the_figures_the_programs_print() {
        let hip = "1048576 floats on gfx90a, every sum correct; host ms: init 161.9, hipMalloc x3 4.54, H2D 417.2, first hipLaunchKernelGGL 26.515, hipDeviceSynchronize 237.0, D2H 51.0";
        assert_eq!(number_after(hip, "H2D"), Some(417.2));
        assert_eq!(number_after(hip, "first hipLaunchKernelGGL"), Some(26.515));
        assert_eq!(number_after(hip, "D2H"), Some(51.0));
        let table = "queue        hsa_queue_create             3.894 ms      11.230 ms\nmemcpy_h2d   hipMemcpy h2d x2             1.346 ms      90.667 ms\n";
        assert_eq!(own_ms(table, "queue").unwrap(), 3.894);
        assert_eq!(own_ms(table, "memcpy_h2d").unwrap(), 1.346);
        assert!(own_ms(table, "launch").is_err());
    }
}
