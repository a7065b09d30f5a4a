//! Installs the Debian packages whose files the tests read.
//!
//! Idempotent: packages already installed (at a backports version where
//! backports is required) are left alone and apt is not touched at all, so
//! a warm machine pays only a few `dpkg-query` calls.

use crate::util::{output, run};
use anyhow::{Context, Result, bail};
use std::process::Command;

/// From bookworm (main).
const MAIN: &[&str] = &[
    "linux-source-6.12",
    "libhsa-runtime-dev",
    // hsakmt/tests/layout.rs compiles the thunk's hsakmttypes.h; `cargo
    // xtask rocm` runs Debian's rocminfo over barebell's libhsakmt.so.1.
    "libhsakmt-dev",
    "rocminfo",
    // `cargo xtask rocm` builds the seeds' HIP vectorAdd for gfx90a.
    "hipcc",
    "clang-19",
    "lld-19",
    "llvm-19",
    // LLVM's C++ headers (ELF.h, AMDHSAKernelDescriptor.h) for the
    // kernel crate's conformance facts.
    "llvm-19-dev",
    "g++",
    "pciutils",
    "valgrind",
    "xz-utils",
    "gcc",
    // C++: the llvm/ conformance probes, and libFuzzer (built by
    // libfuzzer-sys) for the kernel fuzz smoke.
    "g++",
    "libc6-dev",
    // barebell-isa's table generator (isa/tools/gen_tables.py).
    "python3",
    // am-peer: pip installs the pinned tinygrad wheel (--require-hashes).
    "python3-pip",
    // am-peer: tinygrad's results are checked against NumPy (am_peer/tiny.py).
    "python3-numpy",
];

/// From bookworm-backports: the 2025 firmware set and QEMU 10.
const BACKPORTS: &[&str] = &["firmware-amd-graphics", "qemu-system-x86"];

const OUR_SOURCE: &str = "/etc/apt/sources.list.d/barebell-backports.sources";

pub fn ensure() -> Result<String> {
    let missing_main: Vec<&str> = MAIN
        .iter()
        .copied()
        .filter(|p| !installed(p, false))
        .collect();
    let missing_bpo: Vec<&str> = BACKPORTS
        .iter()
        .copied()
        .filter(|p| !installed(p, true))
        .collect();
    if missing_main.is_empty() && missing_bpo.is_empty() {
        return Ok(format!(
            "all {} packages present",
            MAIN.len() + BACKPORTS.len()
        ));
    }
    if !is_root() {
        bail!(
            "packages missing ({}) and not running as root; run `cargo xtask deps` as root, or install them yourself (backports ones with -t bookworm-backports)",
            missing_main
                .iter()
                .chain(missing_bpo.iter())
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let added = ensure_backports_source()?;
    run(Command::new("apt-get").args(["update", "-q"]))?;
    if !missing_main.is_empty() {
        apt_install(&missing_main, None)?;
    }
    if !missing_bpo.is_empty() {
        apt_install(&missing_bpo, Some("bookworm-backports"))?;
    }
    for p in MAIN {
        if !installed(p, false) {
            bail!("{p} still not installed after apt-get install");
        }
    }
    for p in BACKPORTS {
        if !installed(p, true) {
            bail!("{p} is not at a bookworm-backports version after apt-get install");
        }
    }
    Ok(format!(
        "installed {}{}",
        missing_main
            .iter()
            .chain(missing_bpo.iter())
            .copied()
            .collect::<Vec<_>>()
            .join(" "),
        if added {
            format!(" (added {OUR_SOURCE})")
        } else {
            String::new()
        }
    ))
}

fn apt_install(pkgs: &[&str], release: Option<&str>) -> Result<()> {
    let mut cmd = Command::new("apt-get");
    cmd.env("DEBIAN_FRONTEND", "noninteractive").args([
        "install",
        "-y",
        "-q",
        "--no-install-recommends",
    ]);
    if let Some(r) = release {
        cmd.args(["-t", r]);
    }
    cmd.args(pkgs);
    run(&mut cmd)
}

fn is_root() -> bool {
    output(Command::new("id").arg("-u")).is_ok_and(|s| s.trim() == "0")
}

fn installed(pkg: &str, want_backports: bool) -> bool {
    let Ok(out) = output(
        Command::new("dpkg-query")
            .args(["-W", "-f=${db:Status-Status} ${Version}"])
            .arg(pkg)
            .stderr(std::process::Stdio::null()),
    ) else {
        return false;
    };
    let mut it = out.split_whitespace();
    let ok = it.next() == Some("installed");
    let version = it.next().unwrap_or("");
    ok && (!want_backports || version.contains("bpo"))
}

/// Adds bookworm-backports with `main non-free-firmware` unless some source
/// already provides it. The mirror is taken from the machine's existing
/// bookworm entry so that a local or snapshot mirror keeps being used.
/// Returns whether a file was written.
fn ensure_backports_source() -> Result<bool> {
    let sources = read_sources();
    if has_backports(&sources) {
        return Ok(false);
    }
    let (uri, signed_by) = bookworm_mirror(&sources).context(
        "no bookworm entry in /etc/apt/sources.list{,.d}: cannot tell which mirror to use for bookworm-backports",
    )?;
    let mut text = format!(
        "# Added by `cargo xtask deps` (barebell): firmware-amd-graphics and qemu come from here.\nTypes: deb\nURIs: {uri}\nSuites: bookworm-backports\nComponents: main non-free-firmware\n"
    );
    if let Some(s) = signed_by {
        text.push_str(&format!("Signed-By: {s}\n"));
    }
    std::fs::write(OUR_SOURCE, text).with_context(|| format!("writing {OUR_SOURCE}"))?;
    Ok(true)
}

/// The host's bookworm mirror (for `cargo xtask fresh`'s debootstrap).
pub fn host_bookworm_mirror() -> Option<String> {
    bookworm_mirror(&read_sources()).map(|(uri, _)| uri)
}

/// Every apt source file's text.
fn read_sources() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(s) = std::fs::read_to_string("/etc/apt/sources.list") {
        out.push(s);
    }
    if let Ok(dir) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut paths: Vec<_> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let ext = p.extension().and_then(|e| e.to_str());
            if matches!(ext, Some("list" | "sources"))
                && let Ok(s) = std::fs::read_to_string(&p)
            {
                out.push(s);
            }
        }
    }
    out
}

/// One apt source entry, from either the one-line or the deb822 format.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    uris: Vec<String>,
    suites: Vec<String>,
    components: Vec<String>,
    signed_by: Option<String>,
}

fn entries(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    // One-line format: `deb [opts] URI SUITE COMP...`
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("deb ") else {
            continue;
        };
        let mut rest = rest.trim();
        let mut signed_by = None;
        if let Some(r) = rest.strip_prefix('[') {
            let (opts, after) = r.split_once(']').unwrap_or((r, ""));
            signed_by = opts
                .split_whitespace()
                .find_map(|o| o.strip_prefix("signed-by="))
                .map(str::to_string);
            rest = after.trim();
        }
        let mut w = rest.split_whitespace();
        if let (Some(uri), Some(suite)) = (w.next(), w.next()) {
            out.push(Entry {
                uris: vec![uri.to_string()],
                suites: vec![suite.to_string()],
                components: w.map(str::to_string).collect(),
                signed_by,
            });
        }
    }
    // deb822: blank-line separated stanzas of `Key: value`.
    for stanza in text.split("\n\n") {
        let mut e = Entry {
            uris: vec![],
            suites: vec![],
            components: vec![],
            signed_by: None,
        };
        let mut is_deb = false;
        for line in stanza.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let words = || v.split_whitespace().map(str::to_string).collect::<Vec<_>>();
            match k.trim() {
                "Types" => is_deb = v.split_whitespace().any(|t| t == "deb"),
                "URIs" => e.uris = words(),
                "Suites" => e.suites = words(),
                "Components" => e.components = words(),
                "Signed-By" => e.signed_by = Some(v.trim().to_string()),
                _ => {}
            }
        }
        if is_deb && !e.uris.is_empty() {
            out.push(e);
        }
    }
    out
}

fn has_backports(sources: &[String]) -> bool {
    sources.iter().flat_map(|s| entries(s)).any(|e| {
        e.suites.iter().any(|s| s == "bookworm-backports")
            && e.components.iter().any(|c| c == "non-free-firmware")
            && e.components.iter().any(|c| c == "main")
    })
}

fn bookworm_mirror(sources: &[String]) -> Option<(String, Option<String>)> {
    sources
        .iter()
        .flat_map(|s| entries(s))
        .find(|e| e.suites.iter().any(|s| s == "bookworm"))
        .and_then(|e| Some((e.uris.first()?.clone(), e.signed_by)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEB822: &str = "Types: deb\n# comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n";

    #[test]
    fn finds_mirror_in_deb822() {
        let s = vec![DEB822.to_string()];
        assert!(!has_backports(&s));
        assert_eq!(
            bookworm_mirror(&s),
            Some((
                "http://mirror.example/debian".to_string(),
                Some("/usr/share/keyrings/debian-archive-keyring.gpg".to_string())
            ))
        );
    }

    #[test]
    fn finds_mirror_and_backports_in_one_line_format() {
        let s = vec![
            "deb [arch=amd64 signed-by=/k.gpg] http://m.example/debian bookworm main\n# deb http://x bookworm-backports main non-free-firmware\n".to_string(),
        ];
        assert!(!has_backports(&s));
        assert_eq!(
            bookworm_mirror(&s),
            Some(("http://m.example/debian".into(), Some("/k.gpg".into())))
        );
        let with = vec![
            "deb http://m.example/debian bookworm-backports main contrib non-free-firmware\n"
                .to_string(),
        ];
        assert!(has_backports(&with));
    }

    #[test]
    fn backports_without_firmware_component_does_not_count() {
        let s = vec![
            "Types: deb\nURIs: http://m/debian\nSuites: bookworm-backports\nComponents: main\n"
                .to_string(),
        ];
        assert!(!has_backports(&s));
    }
}
