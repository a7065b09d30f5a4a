//! The `pci in qemu` stage: the ECAM, port-I/O and VFIO backends run for
//! real inside a QEMU q35 guest booted with Debian's own 6.12 kernel.
//!
//! ECAM (at the window ACPI's MCFG names, mapped through `/dev/mem`) and
//! port I/O each enumerate the guest's hierarchy (a root port with a
//! device behind it, the multi-function ICH9) and must agree with the
//! guest kernel's sysfs; the sysfs backend enables and maps a BAR (the
//! development VM's kernel has no `resourceN` files). Then the VFIO group/container backend drives
//! QEMU's emulated `edu` PCI device behind an emulated Intel IOMMU.
//!
//! No machine here has a GPU or an IOMMU group to hand out, so this is the
//! closest the VFIO code gets to running: the same ioctls, the same
//! vfio-pci driver, a device that does real DMA through the IOVA mapping.
//! It is not a GPU and not hardware; the docs keep saying "not run on
//! hardware".
//!
//! Debian's 6.12 kernels are built without IOMMUFD, so the iommufd/cdev
//! path cannot be exercised this way; it stays checked by conformance only.
//!
//! Steps: fetch the `linux-image-<ver>-cloud-amd64-unsigned` package that
//! matches the installed `linux-source-6.12` (with `apt-get download`,
//! unpacked into target/artifacts, never installed), build
//! `pcie/examples/qemu_guest.rs` as a static binary, pack it as `/init`
//! with the five vfio modules into an initramfs, boot, and read the
//! guest's verdict from the serial console.

use crate::util::{cargo, output, run};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

const MODULES: &[&str] = &[
    "virt/lib/irqbypass.ko.xz",
    "drivers/vfio/vfio.ko.xz",
    "drivers/vfio/vfio_iommu_type1.ko.xz",
    "drivers/vfio/pci/vfio-pci-core.ko.xz",
    "drivers/vfio/pci/vfio-pci.ko.xz",
];

/// The guest kernel: (vmlinuz, modules/kernel dir).
fn kernel(root: &Path) -> Result<(PathBuf, PathBuf)> {
    let ver =
        output(Command::new("dpkg-query").args(["-W", "-f", "${Version}", "linux-source-6.12"]))
            .context("linux-source-6.12 is not installed (cargo xtask deps)")?;
    // "6.12.117-1~deb12u1" -> "6.12.117+deb12"
    let upstream = ver.split('-').next().unwrap_or("").to_string();
    let abi = format!("{upstream}+deb12-cloud-amd64");
    let dir = root.join("target/artifacts/qemu-pci").join(&abi);
    let vmlinuz = dir.join(format!("boot/vmlinuz-{abi}"));
    let mods = dir.join(format!("lib/modules/{abi}/kernel"));
    if vmlinuz.exists() && mods.exists() {
        return Ok((vmlinuz, mods));
    }
    std::fs::create_dir_all(&dir)?;
    let pkg = format!("linux-image-{abi}-unsigned");
    run(Command::new("apt-get")
        .args(["download", "-q", &pkg])
        .current_dir(&dir))
    .with_context(|| format!("apt-get download {pkg}"))?;
    let deb = std::fs::read_dir(&dir)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .context("apt-get download left no .deb")?;
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&dir))?;
    std::fs::remove_file(&deb)?;
    if !vmlinuz.exists() {
        bail!("{} not in {pkg}", vmlinuz.display());
    }
    Ok((vmlinuz, mods))
}

fn build_guest(root: &Path) -> Result<PathBuf> {
    let target_dir = root.join("target/qemu-pci-build");
    run(cargo()
        .current_dir(root)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "barebell-pcie",
            "--features",
            "std",
            "--example",
            "qemu_guest",
            "--target",
            "x86_64-unknown-linux-gnu",
        ]))?;
    Ok(target_dir.join("x86_64-unknown-linux-gnu/release/examples/qemu_guest"))
}

/// The `barebell` CLI, static, for the guest to run its `--vfio` target
/// against edu (same target dir and flags as the guest, so the shared
/// crates build once).
fn build_barebell(root: &Path) -> Result<PathBuf> {
    let target_dir = root.join("target/qemu-pci-build");
    run(cargo()
        .current_dir(root)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "barebell-cli",
            "--bin",
            "barebell",
            "--target",
            "x86_64-unknown-linux-gnu",
        ]))?;
    Ok(target_dir.join("x86_64-unknown-linux-gnu/release/barebell"))
}

/// One entry of a `newc` cpio archive (the initramfs format,
/// Documentation/driver-api/early-userspace/buffer-format.rst).
pub(crate) fn cpio_entry(out: &mut Vec<u8>, ino: u32, name: &str, mode: u32, data: &[u8]) {
    let namesize = name.len() + 1;
    let header = format!(
        "070701{ino:08x}{mode:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{namesize:08x}{:08x}",
        0,
        0,
        1,
        0,
        data.len(),
        0,
        0,
        0,
        0,
        0
    );
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    out.extend_from_slice(data);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

fn initramfs(guest: &Path, barebell: &Path, mods: &Path, dst: &Path) -> Result<()> {
    let mut out = Vec::new();
    let mut ino = 1;
    let mut dirs: Vec<String> = vec!["modules".into()];
    for m in MODULES {
        let mut p = Path::new(m).parent();
        let mut chain = Vec::new();
        while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
            chain.push(format!("modules/{}", d.display()));
            p = d.parent();
        }
        chain.reverse();
        for d in chain {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    for d in &dirs {
        cpio_entry(&mut out, ino, d, 0o040755, &[]);
        ino += 1;
    }
    let init = std::fs::read(guest).with_context(|| format!("reading {}", guest.display()))?;
    cpio_entry(&mut out, ino, "init", 0o100755, &init);
    ino += 1;
    let cli = std::fs::read(barebell).with_context(|| format!("reading {}", barebell.display()))?;
    cpio_entry(&mut out, ino, "barebell", 0o100755, &cli);
    ino += 1;
    for m in MODULES {
        let data = std::fs::read(mods.join(m)).with_context(|| format!("module {m}"))?;
        cpio_entry(&mut out, ino, &format!("modules/{m}"), 0o100644, &data);
        ino += 1;
    }
    cpio_entry(&mut out, 0, "TRAILER!!!", 0, &[]);
    std::fs::write(dst, out)?;
    Ok(())
}

/// The stage.
pub fn run_stage(root: &Path) -> Result<String> {
    let (vmlinuz, mods) = kernel(root)?;
    let guest = build_guest(root)?;
    let barebell = build_barebell(root)?;
    let work = root.join("target/qemu-pci-build");
    let initrd = work.join("initramfs.cpio");
    initramfs(&guest, &barebell, &mods, &initrd)?;
    // TCG, not KVM: nested KVM on the development VM fails on the guest
    // kernel's first BMI2 instruction, and TCG boots this guest in seconds.
    let mut cmd = Command::new("timeout");
    cmd.args(["300", "qemu-system-x86_64", "-accel", "tcg", "-cpu", "max"]);
    cmd.args([
        "-machine",
        "q35,kernel-irqchip=split",
        "-m",
        "512",
        "-smp",
        "1",
        "-device",
        "intel-iommu,intremap=on",
        "-device",
        "pcie-root-port,id=rp0,chassis=1",
        "-device",
        "edu,bus=rp0",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-monitor",
        "none",
        "-no-reboot",
        "-kernel",
    ])
    .arg(&vmlinuz)
    .arg("-initrd")
    .arg(&initrd)
    .args([
        "-append",
        "console=ttyS0 intel_iommu=on iomem=relaxed panic=-1 loglevel=3",
    ]);
    let out = cmd.output().context("running qemu-system-x86_64")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let log = work.join("guest.log");
    std::fs::write(&log, text.as_bytes())?;
    let oks: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_end().strip_prefix("QEMU-PCI: ok "))
        .collect();
    if let Some(fail) = text
        .lines()
        .find_map(|l| l.trim_end().strip_prefix("QEMU-PCI: FAIL "))
    {
        bail!(
            "guest reported: {fail} (after {} checks passed; log {})",
            oks.len(),
            log.display()
        );
    }
    if !text.contains("QEMU-PCI: DONE") {
        bail!(
            "the guest never finished (qemu exit {}: {}); log {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            log.display()
        );
    }
    Ok(format!(
        "{} checks passed in a QEMU q35 guest (ECAM and port-I/O enumeration equal sysfs; VFIO group/container on edu with DMA through the vIOMMU; barebell bringup --vfio opens edu and refuses it by vendor)",
        oks.len()
    ))
}
