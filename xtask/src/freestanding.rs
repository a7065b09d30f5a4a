//! The freestanding check: the `no_std` crates must link into an ELF with
//! no libc, no startup files and no `std`.
//!
//! Three builds: the real one must link and pass the ELF checks below, and
//! so must the same with the runtime's `defmt` feature (the register
//! trace's defmt sink, which the unikernel turns on); a third one with
//! `inject-std` (a library's `std` feature, which declares `extern crate
//! std`) must *fail*, proving the check can see the thing it guards
//! against.

use crate::util::cargo;
use anyhow::{Context, Result, bail};
use object::{Object, ObjectSymbol};
use std::path::{Path, PathBuf};

/// Flags for this build only; host binaries keep the default PIE/PIC model.
const RUSTFLAGS: &str = "-C relocation-model=static -C link-arg=-nostartfiles -C link-arg=-nostdlib -C link-arg=-static -C target-feature=+crt-static";

fn build(root: &Path, inject_std: bool, features: &[&str]) -> Result<(bool, String, PathBuf)> {
    let target_dir = root.join("target/freestanding");
    let triple = host_triple()?;
    let mut cmd = cargo();
    // An explicit --target keeps RUSTFLAGS off build scripts and proc
    // macros, which must stay ordinary host programs.
    cmd.current_dir(root.join("freestanding"))
        .args([
            "build",
            "--release",
            "--quiet",
            "--target",
            &triple,
            "--target-dir",
        ])
        .arg(&target_dir)
        .env("RUSTFLAGS", RUSTFLAGS)
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    if inject_std {
        cmd.args(["--features", "inject-std"]);
    }
    for f in features {
        cmd.args(["--features", f]);
    }
    let out = cmd
        .output()
        .context("running cargo for the freestanding build")?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    Ok((
        out.status.success(),
        log,
        target_dir
            .join(&triple)
            .join("release/barebell-freestanding"),
    ))
}

fn host_triple() -> Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let vv = crate::util::output(std::process::Command::new(rustc).arg("-vV"))?;
    vv.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .context("rustc -vV printed no host triple")
}

/// What the linked ELF must look like.
fn inspect(elf: &Path) -> Result<String> {
    let data = std::fs::read(elf).with_context(|| format!("reading {}", elf.display()))?;
    let file = object::File::parse(&*data)?;
    if file.kind() != object::ObjectKind::Executable {
        bail!(
            "{} is {:?}, not a static executable",
            elf.display(),
            file.kind()
        );
    }
    if file.section_by_name(".interp").is_some() || file.section_by_name(".dynamic").is_some() {
        bail!("{} wants a dynamic loader", elf.display());
    }
    let mut std_syms = Vec::new();
    let mut undefined = Vec::new();
    let mut count = 0usize;
    for s in file.symbols() {
        count += 1;
        let name = s.name().unwrap_or("");
        if s.is_undefined() && !name.is_empty() {
            undefined.push(name.to_string());
        }
        // Legacy (`_ZN3std`) and v0 (`3std`) mangling of paths in std.
        if name.starts_with("_ZN3std")
            || name.contains("_ZN3std")
            || name.starts_with("_RNvNtCs") && name.contains("3std")
        {
            std_syms.push(name.to_string());
        }
    }
    if !undefined.is_empty() {
        bail!("undefined symbols: {}", undefined.join(", "));
    }
    if !std_syms.is_empty() {
        bail!("std symbols linked in: {}", std_syms.join(", "));
    }
    Ok(format!(
        "{} bytes, static ELF, {} symbols, none from std, none undefined",
        data.len(),
        count
    ))
}

pub fn run(root: &Path) -> Result<String> {
    let (ok, log, elf) = build(root, false, &[])?;
    if !ok {
        bail!("freestanding build failed:\n{log}");
    }
    let facts = inspect(&elf)?;
    let (ok, log, elf) = build(root, false, &["barebell/defmt"])?;
    if !ok {
        bail!("freestanding build with barebell/defmt failed:\n{log}");
    }
    inspect(&elf).context("with barebell/defmt")?;
    let (bad_ok, bad_log, _) = build(root, true, &[])?;
    if bad_ok {
        bail!(
            "the build with `extern crate std` injected into barebell-pcie linked anyway: the check is blind"
        );
    }
    let why = bad_log
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or("failed")
        .trim()
        .to_string();
    Ok(format!(
        "{facts}; also links with barebell/defmt; with std injected it fails as it must ({why})"
    ))
}
