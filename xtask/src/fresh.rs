//! `cargo xtask fresh`: the README's two commands on a clean Debian 12 root,
//! as a new user would run them.
//!
//! A warm machine hides missing install steps (a package installed by hand,
//! a build script that ran before its tool existed). This check builds a
//! Debian 12 (bookworm) root with `debootstrap --variant=minbase`, cached
//! under `target/fresh/`, gives every run a fresh copy of it, clones `HEAD`
//! into it and runs, as root inside it:
//!
//! 1. `cargo xtask ci`,
//! 2. `cargo run --release --bin barebell -- latency`,
//! 3. `cargo xtask ci` again (a user's second run must pass too).
//!
//! The root holds debootstrap's minimal set plus `ca-certificates` and
//! `git`, and `gcc` with `libc6-dev`: the C linker that rustup's Rust
//! toolchain needs to link anything on Linux (rustup's installer says so),
//! counted here as part of "the Rust toolchain". It gets no clang, no qemu,
//! no firmware and no Linux headers. The host's rustup home and cargo
//! `bin/` are bind-mounted read-only; the crate download cache
//! (`registry/`, `git/`) is shared read-write, and the host's own CA
//! certificates are trusted (see [`trust_host_local_cas`]). Each command
//! runs in a private mount and PID namespace, so its mounts and processes
//! end with it, and with this process.
//!
//! Not a CI stage: it takes about as long as three CI runs. Run it before
//! resolving anything that touches build scripts, dependencies, `xtask` or
//! CI (`docs/contributing.md`).

use crate::util::{output, run};
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const SUITE: &str = "bookworm";
/// debootstrap `--include`: see the module doc for why gcc is here.
const INCLUDE: &str = "ca-certificates,git,gcc,libc6-dev";
/// Marks a pristine root whose debootstrap finished.
const STAMP: &str = ".barebell-fresh-complete";
/// Where Debian keeps a machine's own CA certificates.
const LOCAL_CAS: &str = "/usr/local/share/ca-certificates";
const PATH_IN_ROOT: &str =
    "/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The three commands, each with the label its result line carries.
const COMMANDS: [(&str, &str); 3] = [
    ("cargo xtask ci", "cargo xtask ci"),
    (
        "cargo run --release --bin barebell -- latency",
        "cargo run --release --bin barebell -- latency",
    ),
    ("cargo xtask ci (second run)", "cargo xtask ci"),
];

/// Sets up the mounts inside the command's private namespace, then runs
/// the command in the root with a clean environment. Arguments: root,
/// rustup home, cargo home, command.
const INNER: &str = r#"set -eu
R=$1 RUSTUP=$2 CARGOH=$3 CMD=$4
ro() { mount --bind "$1" "$2"; mount -o remount,bind,ro "$2"; }
ro "$RUSTUP" "$R/root/.rustup"
ro "$CARGOH/bin" "$R/root/.cargo/bin"
for d in registry git; do
  if [ -d "$CARGOH/$d" ]; then mount --bind "$CARGOH/$d" "$R/root/.cargo/$d"; fi
done
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
exec chroot "$R" env -i HOME=/root PATH="$PATH_IN_ROOT" LANG=C.UTF-8 TERM=dumb \
  bash -c "cd /root/barebell && $CMD" </dev/null
"#;

pub fn run_fresh(root: &Path, keep: bool) -> Result<bool> {
    if output(Command::new("id").arg("-u"))?.trim() != "0" {
        bail!("`cargo xtask fresh` builds a chroot and mounts into it: run it as root");
    }
    let dir = root.join("target/fresh");
    let pristine = ensure_pristine(&dir)?;
    let run_root = dir.join("root");
    let started = Instant::now();
    fresh_copy(&pristine, &run_root)?;
    let head = output(
        Command::new("git")
            .current_dir(root)
            .args(["rev-parse", "HEAD"]),
    )?;
    let head = head.trim();
    clone_head(root, head, &run_root)?;
    println!(
        "fresh: Debian 12 root ready at {} in {:.1} s; HEAD {head}",
        run_root.display(),
        started.elapsed().as_secs_f64()
    );
    let (rustup, cargo_home) = toolchain_homes()?;
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs)?;
    let mut lines = Vec::new();
    let mut all_ok = true;
    for (i, (label, cmd)) in COMMANDS.iter().enumerate() {
        let log = logs.join(format!("{}.log", i + 1));
        println!("fresh: running `{label}` (log: {})", log.display());
        let t = Instant::now();
        let rc = in_root(&run_root, &rustup, &cargo_home, cmd, &log)?;
        let line = format!(
            "fresh: {label} rc={rc} ({:.0} s)",
            t.elapsed().as_secs_f64()
        );
        println!("{line}");
        if rc != 0 {
            all_ok = false;
            print_tail(&log, 30);
        }
        lines.push(line);
    }
    if !keep {
        std::fs::remove_dir_all(&run_root)
            .with_context(|| format!("removing {}", run_root.display()))?;
    }
    println!();
    for l in &lines {
        println!("{l}");
    }
    Ok(all_ok)
}

/// The cached minimal root, built once with debootstrap.
fn ensure_pristine(dir: &Path) -> Result<PathBuf> {
    let pristine = dir.join(format!("{SUITE}-pristine"));
    if pristine.join(STAMP).exists() {
        return Ok(pristine);
    }
    let tmp = dir.join(format!("{SUITE}-pristine.partial"));
    let mirror = crate::apt::host_bookworm_mirror()
        .unwrap_or_else(|| "http://deb.debian.org/debian".to_string());
    let t = Instant::now();
    debootstrap(
        "fresh",
        SUITE,
        &[&format!("--include={INCLUDE}")],
        &tmp,
        &mirror,
    )?;
    // A fresh install's sources: the release, its updates and security.
    let security = mirror.replace("/debian", "/debian-security");
    std::fs::write(
        tmp.join("etc/apt/sources.list"),
        format!(
            "deb {mirror} {SUITE} main\ndeb {mirror} {SUITE}-updates main\ndeb {security} {SUITE}-security main\n"
        ),
    )?;
    for d in [".rustup", ".cargo/bin", ".cargo/registry", ".cargo/git"] {
        std::fs::create_dir_all(tmp.join("root").join(d))?;
    }
    std::fs::write(tmp.join(STAMP), "")?;
    std::fs::rename(&tmp, &pristine)?;
    println!(
        "fresh: {SUITE} root cached at {} ({:.0} s)",
        pristine.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(pristine)
}

/// Installs debootstrap with apt when it is missing.
pub(crate) fn ensure_debootstrap(label: &str) -> Result<()> {
    if Command::new("debootstrap")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
    {
        return Ok(());
    }
    println!("{label}: installing debootstrap");
    run(Command::new("apt-get").args(["install", "-y", "-q", "debootstrap"]))
        .context("installing debootstrap (run `apt-get update` first if apt has no lists)")
}

/// A `--variant=minbase` root of `suite` at `dest` (replacing a partial
/// one a killed run left), with `extra` debootstrap arguments.
pub(crate) fn debootstrap(
    label: &str,
    suite: &str,
    extra: &[&str],
    dest: &Path,
    mirror: &str,
) -> Result<()> {
    ensure_debootstrap(label)?;
    if dest.exists() {
        refuse_if_mounted(dest)?;
        std::fs::remove_dir_all(dest)?;
    }
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)?;
    }
    println!("{label}: building a {suite} root with debootstrap from {mirror}");
    run(Command::new("debootstrap")
        .arg("--variant=minbase")
        .args(extra)
        .arg(suite)
        .arg(dest)
        .arg(mirror)
        .stdout(Stdio::null()))
    .with_context(|| format!("debootstrap {suite} failed"))
}

/// Replaces `run_root` with a copy of the pristine root.
fn fresh_copy(pristine: &Path, run_root: &Path) -> Result<()> {
    if run_root.exists() {
        refuse_if_mounted(run_root)?;
        std::fs::remove_dir_all(run_root)
            .with_context(|| format!("removing the last run's {}", run_root.display()))?;
    }
    run(Command::new("cp").arg("-a").arg(pristine).arg(run_root))?;
    std::fs::copy("/etc/resolv.conf", run_root.join("etc/resolv.conf"))
        .context("copying /etc/resolv.conf into the root")?;
    trust_host_local_cas(run_root)
}

/// The root reaches the registries through the host's network, so it
/// trusts what the host trusts beyond Debian's set: the certificates in
/// the host's `/usr/local/share/ca-certificates` (a network that inspects
/// TLS has its CA there; a new machine on that network would be given it
/// too). Without them, cargo's and pip's downloads fail inside the root.
fn trust_host_local_cas(run_root: &Path) -> Result<()> {
    let Ok(dir) = std::fs::read_dir(LOCAL_CAS) else {
        return Ok(());
    };
    let dest = run_root.join(LOCAL_CAS.trim_start_matches('/'));
    std::fs::create_dir_all(&dest)?;
    let mut any = false;
    for e in dir.flatten() {
        if e.path().extension().is_some_and(|x| x == "crt") {
            std::fs::copy(e.path(), dest.join(e.file_name()))?;
            any = true;
        }
    }
    if any {
        run(Command::new("chroot")
            .arg(run_root)
            .arg("update-ca-certificates")
            .stdout(Stdio::null()))
        .context("update-ca-certificates in the root")?;
    }
    Ok(())
}

/// Never delete through a mount into the host (a `/dev` or `/sys` bind
/// left by a killed run would take the host's files with it).
pub(crate) fn refuse_if_mounted(path: &Path) -> Result<()> {
    let canon = std::fs::canonicalize(path)?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in info.lines() {
        if let Some(mp) = line.split(' ').nth(4)
            && Path::new(mp).starts_with(&canon)
        {
            bail!(
                "{mp} is still mounted inside {}; unmount it (umount -R) before running again",
                canon.display()
            );
        }
    }
    Ok(())
}

fn clone_head(root: &Path, head: &str, run_root: &Path) -> Result<()> {
    let dest = run_root.join("root/barebell");
    run(Command::new("git")
        .args(["clone", "--quiet", "--no-hardlinks", "--no-checkout"])
        .arg(root)
        .arg(&dest))?;
    run(Command::new("git")
        .arg("-C")
        .arg(&dest)
        .args(["checkout", "--quiet", "--detach", head]))
}

/// The host's rustup and cargo homes, as rustup resolves them.
fn toolchain_homes() -> Result<(PathBuf, PathBuf)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let pick = |var: &str, dflt: &str| -> Result<PathBuf> {
        let p = std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(dflt)))
            .with_context(|| format!("neither {var} nor HOME is set"))?;
        if !p.is_dir() {
            bail!(
                "{} ({var}) is not a directory: the host's Rust toolchain is needed",
                p.display()
            );
        }
        Ok(p)
    };
    Ok((
        pick("RUSTUP_HOME", ".rustup")?,
        pick("CARGO_HOME", ".cargo")?,
    ))
}

/// Runs `cmd` in the root, output to `log`; returns the exit code (-1 when
/// killed by a signal).
fn in_root(
    run_root: &Path,
    rustup: &Path,
    cargo_home: &Path,
    cmd: &str,
    log: &Path,
) -> Result<i32> {
    let out = File::create(log)?;
    let err = out.try_clone()?;
    // A private mount and PID namespace: the mounts go with the command,
    // and when this process dies (even by SIGKILL, through the parent
    // death signal), unshare's child, PID 1 of the namespace, gets SIGKILL
    // and the kernel ends every process of the run with it.
    let status = Command::new("setpriv")
        .args([
            "--pdeathsig",
            "KILL",
            "unshare",
            "--mount",
            "--propagation",
            "private",
        ])
        .args([
            "--pid",
            "--fork",
            "--kill-child",
            "--",
            "bash",
            "-c",
            INNER,
            "inner",
        ])
        .arg(run_root)
        .arg(rustup)
        .arg(cargo_home)
        .arg(cmd)
        .env("PATH_IN_ROOT", PATH_IN_ROOT)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .context("could not start setpriv/unshare (util-linux)")?;
    Ok(status.code().unwrap_or(-1))
}

fn print_tail(log: &Path, n: usize) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    println!("fresh: last {n} lines of {}:", log.display());
    for l in &lines[lines.len().saturating_sub(n)..] {
        println!("  {l}");
    }
}
