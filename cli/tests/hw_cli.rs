//! The hardware targets as a user meets them on a machine without an AMD
//! GPU: argument handling, and the refusals a non-AMD function triggers.
//! Expected vendor/device ids and drivers come from sysfs (`vendor`,
//! `device`, the `driver` link), not from the code under test, and the
//! function's config space must read the same before and after (nothing
//! was written to it).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::path::{Path, PathBuf};
use std::process::Command;

const DEVICES: &str = "/sys/bus/pci/devices";

fn barebell(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn hex_file(p: PathBuf) -> u16 {
    let t = std::fs::read_to_string(&p).unwrap();
    u16::from_str_radix(t.trim().trim_start_matches("0x"), 16).unwrap()
}

/// Every function of this machine whose vendor is not AMD/ATI, with its
/// ids and driver, as sysfs reports them.
fn non_amd() -> Vec<(String, u16, u16, Option<String>)> {
    let Ok(dir) = std::fs::read_dir(DEVICES) else {
        return Vec::new();
    };
    let mut out: Vec<_> = dir
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let vendor = hex_file(p.join("vendor"));
            let device = hex_file(p.join("device"));
            let driver = std::fs::read_link(p.join("driver"))
                .ok()
                .and_then(|l| l.file_name()?.to_str().map(str::to_string));
            (vendor != 0x1002).then(|| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    vendor,
                    device,
                    driver,
                )
            })
        })
        .collect();
    out.sort();
    out
}

fn config(bdf: &str) -> Vec<u8> {
    std::fs::read(Path::new(DEVICES).join(bdf).join("config")).unwrap()
}

#[test]
fn the_three_targets_are_mutually_exclusive() {
    for cmd in ["bringup", "latency"] {
        for pair in [
            ["--model", "--vfio", "0000:03:00.0"].as_slice(),
            &["--model", "--sysfs", "0000:03:00.0"],
            &["--vfio", "0000:03:00.0", "--sysfs", "0000:03:00.0"],
        ] {
            let mut args = vec![cmd];
            args.extend_from_slice(pair);
            let (code, _, err) = barebell(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(err.contains("cannot be used with"), "{args:?}: {err}");
        }
    }
}

#[test]
fn a_malformed_address_is_refused_by_the_parser() {
    let (code, _, err) = barebell(&["bringup", "--vfio", "03:00"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected a PCI address"), "{err}");
}

#[test]
fn help_says_the_hardware_targets_are_unverified() {
    // The two target flags, plus: latency's --kernel and --packet (a GPU's
    // default packet), run's summary line.
    for (cmd, n) in [("bringup", 2), ("latency", 4), ("run", 3)] {
        let (code, out, _) = barebell(&[cmd, "--help"]);
        assert_eq!(code, 0);
        for flag in ["--model", "--vfio <BDF>", "--sysfs <BDF>"] {
            assert!(out.contains(flag), "{cmd} --help lacks {flag}:\n{out}");
        }
        assert_eq!(
            out.matches("UNVERIFIED ON HARDWARE").count(),
            n,
            "{cmd}:\n{out}"
        );
    }
}

#[test]
fn explicit_model_runs_the_model() {
    let (code, out, err) = barebell(&["bringup", "--model", "--until", "discovery"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("the device model"), "{out}");
}

#[test]
fn explicit_model_runs_the_latency_model() {
    let json = std::env::temp_dir().join(format!("barebell-hw-cli-{}.json", std::process::id()));
    let (code, _, err) = barebell(&[
        "latency",
        "--model",
        "--iterations",
        "200",
        "--warmup",
        "20",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&json).unwrap();
    std::fs::remove_file(&json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["params"]["target"], "model", "{text}");
    assert_eq!(v["params"]["iterations"], 200, "{text}");
}

#[test]
fn sysfs_refuses_a_non_amd_function_without_writing_to_it() {
    let devs = non_amd();
    if devs.is_empty() {
        eprintln!("skipped: no PCI functions in sysfs");
        return;
    }
    for (bdf, vendor, device, _) in devs {
        let before = config(&bdf);
        for cmd in [
            [
                "bringup",
                "--sysfs",
                bdf.as_str(),
                "--unsafe-physical-dma",
                "--until",
                "discovery",
            ]
            .as_slice(),
            &["latency", "--sysfs", bdf.as_str(), "--unsafe-physical-dma"],
        ] {
            let (code, out, err) = barebell(cmd);
            assert_eq!(code, 1, "{cmd:?}: {out}{err}");
            let want = format!("is not an AMD GPU (vendor {vendor:04x} device {device:04x}");
            assert!(err.contains(&want), "{cmd:?}: {err}");
            assert!(!out.contains("step "), "{cmd:?} ran a step: {out}");
        }
        assert_eq!(config(&bdf), before, "{bdf}'s config space changed");
    }
}

#[test]
fn vfio_refuses_a_function_not_bound_to_vfio_pci() {
    let devs = non_amd();
    let Some((bdf, _, _, driver)) = devs
        .into_iter()
        .find(|d| d.3.as_deref() != Some("vfio-pci"))
    else {
        eprintln!("skipped: every function is bound to vfio-pci");
        return;
    };
    let before = config(&bdf);
    let (code, _, err) = barebell(&["bringup", "--vfio", &bdf]);
    assert_eq!(code, 1, "{err}");
    let want = format!(
        "{bdf} is not bound to vfio-pci (driver: {})",
        driver.as_deref().unwrap_or("none")
    );
    assert!(err.contains(&want), "{err}");
    assert_eq!(config(&bdf), before);
}

#[test]
fn a_missing_function_is_named() {
    // Domain ffff is not used by Linux for real PCI segments here.
    let (code, _, err) = barebell(&[
        "bringup",
        "--sysfs",
        "ffff:1f:1f.7",
        "--unsafe-physical-dma",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("ffff:1f:1f.7"), "{err}");
    assert!(!err.contains("refusing DMA by physical address"), "{err}");
}

/// Issue 20 item 3: with no IOMMU a safe teardown cannot be guaranteed
/// (a SIGKILL skips it), so `--sysfs` needs an explicit flag, refused
/// before the device is opened: the function's config space is left as
/// it was, and the message names the flag and the alternative.
#[test]
fn sysfs_without_the_unsafe_flag_is_refused_before_opening() {
    let devs = non_amd();
    let bdf = devs
        .first()
        .map(|d| d.0.clone())
        .unwrap_or("ffff:1f:1f.7".into());
    let before = std::fs::read(Path::new(DEVICES).join(&bdf).join("config")).ok();
    for cmd in ["bringup", "latency"] {
        let (code, out, err) = barebell(&[cmd, "--sysfs", bdf.as_str()]);
        assert_eq!(code, 1, "{cmd}: {out}{err}");
        assert!(
            err.contains("refusing DMA by physical address without --unsafe-physical-dma"),
            "{err}"
        );
        assert!(err.contains("use --vfio"), "{err}");
        // Refused before the identity check, which would name the vendor.
        assert!(!err.contains("not an AMD GPU"), "{err}");
    }
    let after = std::fs::read(Path::new(DEVICES).join(&bdf).join("config")).ok();
    assert_eq!(before, after);
    // The flag means nothing without --sysfs.
    let (code, _, err) = barebell(&["bringup", "--unsafe-physical-dma"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--sysfs <BDF>"), "{err}");
    let (_, help, _) = barebell(&["bringup", "--help"]);
    assert!(help.contains("cannot guarantee a safe teardown"), "{help}");
}
