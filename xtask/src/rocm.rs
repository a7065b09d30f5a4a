//! `cargo xtask rocm`: ROCm 5.2.3's own user space (Debian's `rocminfo`
//! over `libhsa-runtime64-1`) on barebell's `libhsakmt.so.1`
//! (`hsakmt/`), which brings the MI210 model up in place of KFD.
//!
//! How the run is set up:
//! - the library is built and installed as `target/rocm/lib/libhsakmt.so.1`,
//!   first on `LD_LIBRARY_PATH`, so ROCR's `hsaKmt*@HSAKMT_1` imports bind
//!   to it; the dynamic linker's own log (`LD_DEBUG=libs`) shows which file
//!   it initialised, the run's proof;
//! - rocminfo's two pre-checks are met inside a mount namespace the
//!   command creates (`unshare --mount`): `lsmod | grep amdgpu` finds a
//!   `lsmod` script first on `PATH` that prints an amdgpu line, and the
//!   `/dev/kfd` it opens read-write is `/dev/null` bind-mounted on a tmpfs
//!   `/dev` that carries the host's null, zero, random, urandom, tty, shm
//!   and pts; nothing outside the namespace changes.
//!
//! Then the HSA program (`hsakmt/rocm/hsa-vadd.c`, built with `cc`
//! against Debian's `libhsa-runtime-dev`) runs in the same namespace: ROCR's
//! loader places `hsakmt/rocm/vadd.cl` (clang-19, gfx90a, code object v4:
//! ROCR 5.2.3 does not fill v5's hidden arguments) in the agent's VRAM
//! with its blit kernels, its own queue (`hsaKmtCreateQueue` puts it on
//! the model's HWS) runs one dispatch over [`HSA_ELEMENTS`] floats, and
//! the program checks every sum; its linker log must show the same library.
//!
//! Last, the seeds' HIP vectorAdd (`hsakmt/rocm/vectoradd.hip`, built by
//! Debian's `hipcc --offload-arch=gfx90a`) runs the same way: HIP's own
//! device init, `hipMalloc`, `hipMemcpy` both ways (HIP pins host pages:
//! `hsaKmtRegisterMemoryWithFlags`), one `hipLaunchKernelGGL`,
//! `hipDeviceSynchronize`, every sum checked.

use crate::util::cargo;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// The namespace's setup, then the command (`$@`).
const NS_SCRIPT: &str = r#"#!/bin/sh
set -e
R="$BAREBELL_ROCM/realdev"
mkdir -p "$R"
mount --bind /dev "$R"
mount -t tmpfs -o mode=755 barebell-dev /dev
for n in null zero full random urandom tty; do
  [ -e "$R/$n" ] || continue
  touch "/dev/$n"; mount --bind "$R/$n" "/dev/$n"
done
for d in shm pts; do
  [ -d "$R/$d" ] || continue
  mkdir -p "/dev/$d"; mount --bind "$R/$d" "/dev/$d"
done
touch /dev/kfd
mount --bind "$R/null" /dev/kfd
exec "$@"
"#;

/// Floats the HSA program adds: the seeds' vectorAdd size.
pub const HSA_ELEMENTS: u32 = 1 << 20;

/// What rocminfo's `lsmod | grep amdgpu` finds.
const LSMOD: &str =
    "#!/bin/sh\necho 'amdgpu 0 0 - Live 0x0 (barebell libhsakmt.so.1 over the MI210 model)'\n";

/// Builds the library and installs it with the namespace script: what
/// every ROCm run here needs.
pub(crate) fn setup(root: &Path) -> Result<Env> {
    let work = root.join("target/rocm");
    let lib = work.join("lib");
    let bin = work.join("bin");
    std::fs::create_dir_all(&lib)?;
    std::fs::create_dir_all(&bin)?;
    crate::util::run(cargo().args(["build", "--release", "-q", "-p", "barebell-hsakmt"]))?;
    let so = lib.join("libhsakmt.so.1");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), std::path::PathBuf::from);
    std::fs::copy(target.join("release/libhsakmt.so"), &so)
        .context("copying the built libhsakmt.so")?;
    write_exec(&bin.join("lsmod"), LSMOD)?;
    write_exec(&work.join("ns.sh"), NS_SCRIPT)?;
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Ok(Env {
        work,
        lib,
        bin,
        so,
        path,
        propagation: crate::linux_peer::propagation()?,
    })
}

/// The line the run ends with.
pub fn run(root: &Path) -> Result<String> {
    let env = setup(root)?;
    let (work, bin, so) = (&env.work, &env.bin, &env.so);
    let out = env.run(&["rocminfo".as_ref()], "ld-debug")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    std::fs::write(work.join("rocminfo.txt"), &text)?;
    if !out.status.success() {
        bail!(
            "rocminfo failed ({}): {}\n{}",
            out.status,
            err.trim(),
            tail(&text, 20)
        );
    }
    let loaded = loaded_from(work, "ld-debug.", so)?;
    let agent = text
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["Name:", "gfx90a"]);
    let isa = text.contains("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
    if !agent || !isa {
        bail!(
            "rocminfo ran but lists no gfx90a agent with ISA gfx90a:sramecc+:xnack- (see {})",
            work.join("rocminfo.txt").display()
        );
    }
    let cus = field(&text, "Compute Unit:", 1).unwrap_or_default();
    let hsa = hsa_program(root, &env, bin, so)?;
    let hip = hip_program(root, &env, bin, so)?;
    let private = hip_private(root, &env, bin, so)?;
    Ok(format!(
        "rocm: rocminfo gfx90a ok ({cus} CUs, ISA amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-; {loaded}), hsa vadd verified ({hsa}), hip vectorAdd verified ({hip}), hip private arrays verified ({private})"
    ))
}

/// How every ROCm program runs: in the mount namespace, the library first
/// on `LD_LIBRARY_PATH`, the linker logging which files it initialised.
pub(crate) struct Env {
    pub work: std::path::PathBuf,
    lib: std::path::PathBuf,
    pub bin: std::path::PathBuf,
    /// The installed library.
    pub so: std::path::PathBuf,
    path: String,
    propagation: &'static str,
}

impl Env {
    /// Runs `command` (program and arguments) in the namespace; the
    /// linker log goes to `<work>/<log>.<pid>`.
    pub(crate) fn run(
        &self,
        command: &[&std::ffi::OsStr],
        log: &str,
    ) -> Result<std::process::Output> {
        self.run_with(command, log, &[])
    }

    /// [`Env::run`] with more environment variables.
    pub(crate) fn run_with(
        &self,
        command: &[&std::ffi::OsStr],
        log: &str,
        vars: &[(&str, &str)],
    ) -> Result<std::process::Output> {
        for e in std::fs::read_dir(&self.work)?.flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{log}."))
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
        Command::new("unshare")
            .args(["--mount", "--propagation", self.propagation])
            .arg(self.work.join("ns.sh"))
            .args(command)
            .env("BAREBELL_ROCM", &self.work)
            .env("PATH", &self.path)
            .env("LD_LIBRARY_PATH", &self.lib)
            .env("LD_DEBUG", "libs")
            .env("LD_DEBUG_OUTPUT", self.work.join(log))
            .envs(vars.iter().copied())
            .output()
            .with_context(|| format!("running {command:?} under unshare"))
    }
}

/// Builds the kernel and the HSA program and runs it; its own summary
/// line, verified.
pub(crate) fn hsa_program(root: &Path, env: &Env, bin: &Path, so: &Path) -> Result<String> {
    let dir = root.join("hsakmt/rocm");
    let co = env.work.join("vadd.co");
    crate::util::run(
        Command::new("clang-19")
            .args([
                "-target",
                "amdgcn-amd-amdhsa",
                "-mcpu=gfx90a",
                "-nogpulib",
                "-O2",
            ])
            .arg("-mcode-object-version=4")
            .args(["-x", "cl"])
            .arg(dir.join("vadd.cl"))
            .arg("-o")
            .arg(&co),
    )
    .context("building the vadd kernel (needs clang-19)")?;
    let exe = bin.join("hsa-vadd");
    crate::util::run(
        Command::new("cc")
            .args(["-O2", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(dir.join("hsa-vadd.c"))
            .arg("-lhsa-runtime64"),
    )
    .context("building the HSA program (needs gcc and libhsa-runtime-dev)")?;
    let out = env.run(
        &[
            exe.as_os_str(),
            co.as_os_str(),
            HSA_ELEMENTS.to_string().as_ref(),
        ],
        "ld-debug-hsa",
    )?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    std::fs::write(env.work.join("hsa-vadd.txt"), format!("{text}{err}"))?;
    if !out.status.success() {
        bail!("the HSA program failed ({}): {}", out.status, err.trim());
    }
    loaded_from(&env.work, "ld-debug-hsa.", so)?;
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("hsa vadd: "))
        .context("the HSA program printed no summary")?;
    Ok(line.trim().to_string())
}

/// Builds the seeds' HIP vectorAdd with Debian's hipcc and runs it; its
/// own summary line, verified.
pub(crate) fn hip_program(root: &Path, env: &Env, bin: &Path, so: &Path) -> Result<String> {
    let exe = bin.join("vectoradd");
    crate::util::run(
        Command::new("hipcc")
            .args(["--offload-arch=gfx90a", "-O2", "-o"])
            .arg(&exe)
            .arg(root.join("hsakmt/rocm/vectoradd.hip")),
    )
    .context("building the HIP vectorAdd (needs Debian's hipcc)")?;
    // The library's device report (`BAREBELL_HSAKMT_DEBUG`) says what the
    // SDMA engines did: ROCR's `hipMemcpy`s go through `BlitSdma`.
    let out = env.run_with(
        &[exe.as_os_str()],
        "ld-debug-hip",
        &[("BAREBELL_HSAKMT_DEBUG", "1")],
    )?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    std::fs::write(env.work.join("vectoradd.txt"), format!("{text}{err}"))?;
    if !out.status.success() {
        let last: Vec<&str> = err.lines().rev().take(20).collect();
        bail!(
            "the HIP vectorAdd failed ({}): {}",
            out.status,
            last.join("\n")
        );
    }
    loaded_from(&env.work, "ld-debug-hip.", so)?;
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("hip vectorAdd: "))
        .context("the HIP vectorAdd printed no summary")?;
    let sdma = sdma_copies(&err);
    if sdma.is_empty() {
        bail!("the HIP vectorAdd copied nothing through SDMA (ROCR fell back to blit kernels?)");
    }
    Ok(format!(
        "{}; copies on SDMA: {}",
        line.trim(),
        sdma.join(", ")
    ))
}

/// Builds and runs `hsakmt/rocm/private.hip` (a kernel with a private
/// array): its summary line, verified, and that the queue asked ROCR for
/// scratch (the library's device report counts the requests).
pub(crate) fn hip_private(root: &Path, env: &Env, bin: &Path, so: &Path) -> Result<String> {
    let exe = bin.join("private");
    crate::util::run(
        Command::new("hipcc")
            .args(["--offload-arch=gfx90a", "-O2", "-o"])
            .arg(&exe)
            .arg(root.join("hsakmt/rocm/private.hip")),
    )
    .context("building the HIP private-array kernel (needs Debian's hipcc)")?;
    let out = env.run_with(
        &[exe.as_os_str()],
        "ld-debug-private",
        &[("BAREBELL_HSAKMT_DEBUG", "1")],
    )?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    std::fs::write(env.work.join("private.txt"), format!("{text}{err}"))?;
    if !out.status.success() {
        let last: Vec<&str> = err.lines().rev().take(20).collect();
        bail!(
            "the HIP private-array kernel failed ({}): {}",
            out.status,
            last.join("\n")
        );
    }
    loaded_from(&env.work, "ld-debug-private.", so)?;
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("hip private: "))
        .context("the HIP private-array kernel printed no summary")?;
    if !err.contains("scratch requests: ") {
        bail!("the private-array kernel ran without asking ROCR for scratch");
    }
    Ok(format!(
        "{} (scratch from ROCR's dynamic-scratch handler)",
        line.trim()
    ))
}

/// The bytes each SDMA engine copied, from the library's last device
/// report (`SDMA <n>: ... <bytes> bytes copied ...`).
fn sdma_copies(stderr: &str) -> Vec<String> {
    let mut last = std::collections::BTreeMap::new();
    for l in stderr.lines() {
        let Some(rest) = l.split("device state: SDMA ").nth(1) else {
            continue;
        };
        let Some((n, tail)) = rest.split_once(": ") else {
            continue;
        };
        let bytes = tail
            .split(", ")
            .find_map(|f| f.strip_suffix(" bytes copied"))
            .and_then(|b| b.parse::<u64>().ok());
        if let (Ok(n), Some(b)) = (n.parse::<u32>(), bytes) {
            last.insert(n, b);
        }
    }
    last.into_iter()
        .filter(|(_, b)| *b > 0)
        .map(|(n, b)| format!("engine {n} {b} bytes"))
        .collect()
}

fn write_exec(path: &Path, text: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// The dynamic linker's word on which `libhsakmt.so.1` the run
/// initialised: `calling init: <path>` in its `LD_DEBUG=libs` log.
pub(crate) fn loaded_from(work: &Path, log: &str, so: &Path) -> Result<String> {
    let want = format!("calling init: {}", so.display());
    let mut others = Vec::new();
    for e in std::fs::read_dir(work)?.flatten() {
        if !e.file_name().to_string_lossy().starts_with(log) {
            continue;
        }
        let log = std::fs::read_to_string(e.path()).unwrap_or_default();
        if log.contains(&want) {
            return Ok(format!("the dynamic linker initialised {}", so.display()));
        }
        others.extend(
            log.lines()
                .filter(|l| l.contains("calling init:") && l.contains("libhsakmt"))
                .map(|l| l.trim().to_string()),
        );
    }
    bail!(
        "the dynamic linker's log does not show {} initialised{}",
        so.display(),
        if others.is_empty() {
            String::new()
        } else {
            format!(" (it shows: {})", others.join("; "))
        }
    )
}

/// The `n`-th whitespace-separated word after the first `label` line.
fn field(text: &str, label: &str, skip: usize) -> Option<String> {
    let l = text
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with(label))?;
    l.split_whitespace()
        .nth(label.split_whitespace().count() + skip - 1)
        .map(str::to_string)
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn takes_the_last_agents_field() {
        let t = "  Compute Unit:            2\n  Compute Unit:            104\n";
        assert_eq!(field(t, "Compute Unit:", 1).as_deref(), Some("104"));
    }
}
