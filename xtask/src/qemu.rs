//! `cargo xtask qemu`: build the unikernel, boot it under QEMU (q35, TCG)
//! and check what it reports against what QEMU itself reports.
//!
//! Three machine configurations boot with `hold` on the command line, which
//! makes the image wait for one byte on COM1 before it exits; while it
//! waits, QMP's `query-pci` is asked for the PCI tree, and HMP's `info
//! pci` (through QMP's `human-monitor-command`) for the same tree as
//! text. The functions the image enumerated over ECAM must equal both;
//! every BAR it sized (index, kind, address, size, prefetchable) must
//! equal `query-pci`'s regions exactly. The log must also carry the MMIO latency
//! summary for `edu`, the AQL-on-the-model summary with no model errors,
//! and the run must end with the image's success code through
//! isa-debug-exit. `bridges` adds PCIe root ports with devices behind
//! them, a conventional PCI bridge with a device behind it, and a 64-bit
//! prefetchable BAR that firmware places above 4 GiB (which the image
//! must map write-combining and read through). `fallback` tells the image
//! to ignore ACPI, so it must announce and use q35's fixed ECAM base.
//!
//! Every boot also gets a real firmware container as a PVH module; the
//! header fields the image reads from it with barebell-firmware-if must
//! equal the blob's own bytes.
//!
//! Two boots with `test-panic` and `test-exception` on the command line
//! check the failure paths: the panic handler and the #UD handler must
//! print and exit with their own isa-debug-exit codes.
//!
//! One more boot of the first configuration without `hold` is timed from
//! process start to exit: that is the boot-to-exit time reported.
//!
//! TCG only: nested KVM on the development VM is not reliable (see
//! `qemu_pci.rs`). `-cpu max` because barebell's TSC end read is RDTSCP,
//! which QEMU's default `qemu64` model lacks.

use crate::util::cargo;
use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Flags for this build only (host binaries keep PIE); the linker script
/// places the image at 1 MiB with its PVH note in a PT_NOTE segment.
fn rustflags(root: &Path) -> String {
    format!(
        "-C relocation-model=static -C no-redzone=yes -C link-arg=-nostartfiles \
         -C link-arg=-nostdlib -C link-arg=-static -C target-feature=+crt-static \
         -C link-arg=-Wl,--build-id=none -C link-arg=-T{}",
        root.join("unikernel/link.ld").display()
    )
}

/// QEMU exits with `(code << 1) | 1` for a value written to
/// isa-debug-exit; the image writes 0x10 on success (unikernel/src/rt.rs).
const SUCCESS_STATUS: i32 = (0x10 << 1) | 1;
const BOOT_BOUND: Duration = Duration::from_secs(120);
/// A real firmware container (firmware-amd-graphics, installed by the apt
/// stage), handed to the image as a PVH module through `-initrd`.
const FIRMWARE: &str = "/lib/firmware/amdgpu/gc_11_0_0_mes_2.bin";
/// The blobs the PSP/RLC bring-up in the image needs for Navi31 and
/// Navi48 (the sets in `barebell_model::psp::rig::navi31`/`navi48`).
const BRINGUP_BLOBS: &[&str] = &[
    "psp_13_0_0_sos.bin",
    "smu_13_0_0.bin",
    "gc_11_0_0_pfp.bin",
    "gc_11_0_0_me.bin",
    "gc_11_0_0_mec.bin",
    "gc_11_0_0_mes1.bin",
    "gc_11_0_0_imu.bin",
    "gc_11_0_0_rlc.bin",
    "sdma_6_0_0.bin",
    "psp_14_0_3_sos.bin",
    "smu_14_0_3.bin",
    "gc_12_0_1_pfp.bin",
    "gc_12_0_1_me.bin",
    "gc_12_0_1_mec.bin",
    "gc_12_0_1_uni_mes.bin",
    "gc_12_0_1_imu.bin",
    "gc_12_0_1_rlc.bin",
];

/// Several blobs go in through the one PVH module QEMU's `-initrd` makes,
/// as a "newc" cpio archive (the Linux initramfs format, written here by
/// hand: not checked with a cpio tool, none is installed):
/// [`FIRMWARE`] first, then [`BRINGUP_BLOBS`], each under its file name.
fn firmware_archive(root: &Path) -> Result<PathBuf> {
    let dir = Path::new(FIRMWARE).parent().context("firmware directory")?;
    let mut out = Vec::new();
    let mut entry = |name: &str, data: &[u8]| -> Result<()> {
        let name_len = u32::try_from(name.len() + 1)?;
        let size = u32::try_from(data.len())?;
        // magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
        // devminor, rdevmajor, rdevminor, namesize, check.
        let fields = [1, 0o100_644, 0, 0, 1, 0, size, 0, 0, 0, 0, name_len, 0];
        out.extend_from_slice(b"070701");
        for f in fields {
            out.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out.extend_from_slice(data);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        Ok(())
    };
    let first = Path::new(FIRMWARE);
    let names = std::iter::once(first.file_name().and_then(|n| n.to_str()).context("name")?)
        .chain(BRINGUP_BLOBS.iter().copied());
    for name in names {
        let path = dir.join(name);
        let data = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        entry(name, &data)?;
    }
    entry("TRAILER!!!", &[])?;
    let path = root.join("target/unikernel/firmware.cpio");
    std::fs::write(&path, &out).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

fn build(root: &Path) -> Result<PathBuf> {
    let target_dir = root.join("target/unikernel");
    let triple = "x86_64-unknown-linux-gnu";
    let out = cargo()
        .current_dir(root.join("unikernel"))
        // defmt compiles out everything below `error` unless told.
        .env("DEFMT_LOG", "info")
        .args([
            "build",
            "--release",
            "--quiet",
            "--target",
            triple,
            "--target-dir",
        ])
        .arg(&target_dir)
        .env("RUSTFLAGS", rustflags(root))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .context("running cargo for the unikernel")?;
    if !out.status.success() {
        bail!(
            "unikernel build failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(target_dir.join(triple).join("release/barebell-unikernel"))
}

/// File size, loaded bytes (PT_LOAD file sizes) and memory footprint
/// (PT_LOAD memory sizes, .bss included).
fn image_size(elf: &Path) -> Result<(u64, u64, u64)> {
    use object::read::elf::{ElfFile64, ProgramHeader};
    let data = std::fs::read(elf).with_context(|| format!("reading {}", elf.display()))?;
    let f = ElfFile64::<object::Endianness>::parse(&*data)?;
    let e = f.endian();
    let (mut file, mut mem) = (0, 0);
    let mut note = false;
    for ph in f.elf_program_headers() {
        match ph.p_type(e) {
            object::elf::PT_LOAD => {
                file += ph.p_filesz(e);
                mem += ph.p_memsz(e);
            }
            object::elf::PT_NOTE => note = true,
            _ => {}
        }
    }
    ensure!(note, "{} has no PT_NOTE (the PVH note)", elf.display());
    Ok((data.len() as u64, file, mem))
}

/// One machine configuration: a name and the extra `-device` arguments.
struct Config {
    name: &'static str,
    devices: &'static [&'static str],
    /// Extra words for the image's command line.
    cmdline: &'static str,
    /// Where the ECAM base must have come from (`mcfg` or `fallback`).
    ecam_source: &'static str,
}

const CONFIGS: &[Config] = &[
    Config {
        name: "base",
        devices: &["-device", "edu"],
        cmdline: "",
        ecam_source: "mcfg",
    },
    // The same machine with ACPI ignored: the image must fall back to
    // q35's fixed ECAM base, say so, and still list the same tree.
    Config {
        name: "fallback",
        devices: &[
            "-device",
            "edu",
            "-device",
            "pcie-root-port,id=rp1,chassis=1",
            "-device",
            "edu,bus=rp1",
        ],
        cmdline: "no-mcfg",
        ecam_source: "fallback",
    },
    Config {
        name: "bridges",
        devices: &[
            "-device",
            "edu",
            "-device",
            "pcie-root-port,id=rp1,chassis=1",
            "-device",
            "edu,bus=rp1",
            "-device",
            "pcie-root-port,id=rp2,chassis=2",
            // 8 GiB 64-bit prefetchable BAR: too big for the 32-bit hole,
            // so SeaBIOS places it above 4 GiB.
            "-device",
            "pci-testdev,bus=rp2,membar=8G",
            "-device",
            "pci-bridge,id=br1,chassis_nr=3",
            "-device",
            "pci-testdev,bus=br1,addr=5",
            "-device",
            "pci-testdev",
        ],
        cmdline: "",
        ecam_source: "mcfg",
    },
];

struct Boot {
    log: String,
    status: Option<i32>,
    /// QMP `query-pci` and HMP `info pci`, if the boot held.
    qmp: Option<(Value, String)>,
    wall: Duration,
    /// The defmt messages from COM2, decoded against the image's table.
    defmt: Vec<String>,
}

/// Decodes COM2's bytes with `defmt-decoder` against the ELF's `.defmt`
/// table (which also fixes the wire encoding, rzCOBS here).
fn decode_defmt(elf: &Path, bytes: &[u8]) -> Result<Vec<String>> {
    use defmt_decoder::{DecodeError, Table};
    let data = std::fs::read(elf)?;
    let table = Table::parse(&data)?.context("the image has no .defmt table")?;
    let mut dec = table.new_stream_decoder();
    dec.received(bytes);
    let mut out = Vec::new();
    loop {
        match dec.decode() {
            Ok(f) => out.push(f.display_message().to_string()),
            Err(DecodeError::UnexpectedEof) => break,
            Err(DecodeError::Malformed) => bail!(
                "malformed defmt frame on COM2 after {} good ones",
                out.len()
            ),
        }
    }
    Ok(out)
}

fn qemu_cmd(
    kernel: &Path,
    initrd: &Path,
    cfg: &Config,
    hold: bool,
    qmp: &Path,
    com2: &Path,
) -> Command {
    let mut cmd = Command::new("qemu-system-x86_64");
    cmd.args([
        "-machine", "q35", "-accel", "tcg", "-cpu", "max", "-m", "128", "-smp", "1", "-display",
        "none", "-serial", "stdio",
    ])
    // COM2 carries the defmt frames.
    .arg("-serial")
    .arg(format!("file:{}", com2.display()))
    .args([
        "-monitor",
        "none",
        "-no-reboot",
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x04",
    ])
    .args(cfg.devices)
    .arg("-initrd")
    .arg(initrd)
    .arg("-kernel")
    .arg(kernel);
    if hold {
        cmd.arg("-append")
            .arg(format!("hold {}", cfg.cmdline))
            .arg("-qmp")
            .arg(format!("unix:{},server=on,wait=off", qmp.display()));
    } else if !cfg.cmdline.is_empty() {
        cmd.args(["-append", cfg.cmdline]);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `query-pci` over QMP: greeting, capabilities negotiation, the command.
fn query_pci(sock: &Path) -> Result<(Value, String)> {
    let s = UnixStream::connect(sock).with_context(|| format!("connecting {}", sock.display()))?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut w = s.try_clone()?;
    let mut r = BufReader::new(s);
    let reply = |r: &mut BufReader<UnixStream>| -> Result<Value> {
        loop {
            let mut line = String::new();
            ensure!(r.read_line(&mut line)? > 0, "QMP closed the connection");
            let v: Value = serde_json::from_str(&line).context("QMP sent non-JSON")?;
            if v.get("return").is_some() || v.get("error").is_some() || v.get("QMP").is_some() {
                return Ok(v);
            }
        }
    };
    reply(&mut r)?;
    w.write_all(b"{\"execute\":\"qmp_capabilities\"}\n")?;
    reply(&mut r)?;
    w.write_all(b"{\"execute\":\"query-pci\"}\n")?;
    let v = reply(&mut r)?;
    let pci = v
        .get("return")
        .cloned()
        .with_context(|| format!("query-pci failed: {v}"))?;
    // The same tree as HMP's `info pci` prints it, for the second check
    // and for people reading the log.
    w.write_all(
        b"{\"execute\":\"human-monitor-command\",\"arguments\":{\"command-line\":\"info pci\"}}\n",
    )?;
    let h = reply(&mut r)?;
    let info = h
        .get("return")
        .and_then(Value::as_str)
        .map(str::to_string)
        .with_context(|| format!("info pci failed: {h}"))?;
    Ok((pci, info))
}

/// The functions in HMP `info pci` text: a `Bus  B, device  D, function
/// F:` line, then a line ending in `PCI device VVVV:DDDD`.
fn info_pci_functions(text: &str) -> Result<BTreeSet<Fn5>> {
    let mut out = BTreeSet::new();
    let mut at = None;
    for l in text.lines() {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("Bus ") {
            let nums: Vec<u8> = rest
                .trim_end_matches(':')
                .split(',')
                .filter_map(|p| p.split_whitespace().last()?.parse().ok())
                .collect();
            match nums[..] {
                [b, d, f] => at = Some((b, d, f)),
                _ => bail!("unexpected `info pci` line {t:?}"),
            }
        } else if let (Some((b, d, f)), Some((_, id))) = (at, t.split_once("PCI device ")) {
            let (v, dev) = id.split_once(':').context("PCI device id")?;
            out.insert((
                b,
                d,
                f,
                u16::from_str_radix(v, 16)?,
                u16::from_str_radix(dev.trim(), 16)?,
            ));
            at = None;
        }
    }
    Ok(out)
}

fn boot(root: &Path, kernel: &Path, cfg: &Config, hold: bool) -> Result<Boot> {
    let sock = root.join(format!("target/unikernel/qmp-{}.sock", cfg.name));
    let com2 = root.join(format!("target/unikernel/{}-com2.defmt", cfg.name));
    let _ = std::fs::remove_file(&sock);
    let _ = std::fs::remove_file(&com2);
    let started = Instant::now();
    let initrd = root.join("target/unikernel/firmware.cpio");
    let mut child = qemu_cmd(kernel, &initrd, cfg, hold, &sock, &com2)
        .spawn()
        .context("starting qemu-system-x86_64")?;
    let stdout = child.stdout.take().context("qemu stdout")?;
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(l) = line else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let deadline = started + BOOT_BOUND;
    let mut log = String::new();
    let mut qmp = None;
    let mut problem = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.max(Duration::from_millis(1))) {
            Ok(l) => {
                let l = l.trim_end_matches('\r').to_string();
                let held = l.starts_with("UK HOLD waiting");
                log.push_str(&l);
                log.push('\n');
                if held {
                    match query_pci(&sock) {
                        Ok(v) => qmp = Some(v),
                        Err(e) => problem = Some(format!("{e:#}")),
                    }
                    if let Some(stdin) = child.stdin.as_mut() {
                        stdin.write_all(b"\n")?;
                        stdin.flush()?;
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                problem = Some(format!("no exit within {} s", BOOT_BOUND.as_secs()));
                let _ = child.kill();
                break;
            }
        }
    }
    let status = child.wait()?;
    let wall = started.elapsed();
    let _ = reader.join();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    let path = root.join(format!(
        "target/unikernel/{}{}.log",
        cfg.name,
        if hold { "" } else { "-timed" }
    ));
    std::fs::write(&path, format!("{log}\n--- qemu stderr ---\n{err}"))?;
    if let Some((_, info)) = &qmp {
        std::fs::write(
            root.join(format!("target/unikernel/{}-info-pci.txt", cfg.name)),
            info,
        )?;
    }
    if let Some(p) = problem {
        bail!("{} boot: {p}; log {}", cfg.name, path.display());
    }
    let frames = std::fs::read(&com2).with_context(|| format!("reading {}", com2.display()))?;
    let defmt = decode_defmt(kernel, &frames)?;
    Ok(Boot {
        log,
        status: status.code(),
        qmp,
        wall,
        defmt,
    })
}

type Fn5 = (u8, u8, u8, u16, u16);
/// (bdf, index, "io"/"mem", 64-bit, prefetch, address, size).
type BarRow = ((u8, u8, u8), u8, &'static str, bool, bool, u64, u64);

fn kv<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

fn hex(s: &str) -> Result<u64> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).with_context(|| format!("bad hex {s:?}"))
}

fn bdf(s: &str) -> Result<(u8, u8, u8)> {
    let (bus, rest) = s.split_once(':').context("bdf")?;
    let (dev, f) = rest.split_once('.').context("bdf")?;
    Ok((
        u8::from_str_radix(bus, 16)?,
        u8::from_str_radix(dev, 16)?,
        f.parse()?,
    ))
}

/// What the image printed.
fn guest_view(log: &str) -> Result<(BTreeSet<Fn5>, BTreeSet<BarRow>)> {
    let mut fns = BTreeSet::new();
    let mut bars = BTreeSet::new();
    for l in log.lines() {
        if let Some(rest) = l.strip_prefix("UK PCI dev ") {
            let (b, d, f) = bdf(rest.split_whitespace().next().unwrap_or(""))?;
            let vendor = hex(kv(l, "vendor").context("vendor")?)? as u16;
            let device = hex(kv(l, "device").context("device")?)? as u16;
            fns.insert((b, d, f, vendor, device));
        } else if let Some(rest) = l.strip_prefix("UK PCI bar ") {
            let at = bdf(rest.split_whitespace().next().unwrap_or(""))?;
            let kind = kv(l, "kind").context("kind")?;
            bars.insert((
                at,
                kv(l, "index").context("index")?.parse()?,
                if kind == "io" { "io" } else { "mem" },
                kind == "mem64",
                kv(l, "prefetch") == Some("1"),
                hex(kv(l, "address").context("address")?)?,
                hex(kv(l, "size").context("size")?)?,
            ));
        }
    }
    Ok((fns, bars))
}

/// What QEMU reports, walking bridges' `pci_bridge.devices`.
fn qemu_view(v: &Value) -> Result<(BTreeSet<Fn5>, BTreeSet<BarRow>)> {
    fn walk(devs: &[Value], fns: &mut BTreeSet<Fn5>, bars: &mut BTreeSet<BarRow>) -> Result<()> {
        for d in devs {
            let n = |k: &str| {
                d.get(k)
                    .and_then(Value::as_u64)
                    .with_context(|| format!("{k} in {d}"))
            };
            let at = (n("bus")? as u8, n("slot")? as u8, n("function")? as u8);
            let id = d.get("id").context("id")?;
            let idn = |k: &str| {
                id.get(k)
                    .and_then(Value::as_u64)
                    .with_context(|| format!("id.{k}"))
            };
            fns.insert((
                at.0,
                at.1,
                at.2,
                idn("vendor")? as u16,
                idn("device")? as u16,
            ));
            for r in d
                .get("regions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let bar = r.get("bar").and_then(Value::as_u64).context("bar")?;
                if bar > 5 {
                    continue; // the expansion ROM
                }
                let io = r.get("type").and_then(Value::as_str) == Some("io");
                bars.insert((
                    at,
                    bar as u8,
                    if io { "io" } else { "mem" },
                    r.get("mem_type_64").and_then(Value::as_bool) == Some(true),
                    r.get("prefetch").and_then(Value::as_bool) == Some(true),
                    r.get("address")
                        .and_then(Value::as_u64)
                        .context("address")?,
                    r.get("size").and_then(Value::as_u64).context("size")?,
                ));
            }
            if let Some(sub) = d
                .get("pci_bridge")
                .and_then(|b| b.get("devices"))
                .and_then(Value::as_array)
            {
                walk(sub, fns, bars)?;
            }
        }
        Ok(())
    }
    let mut fns = BTreeSet::new();
    let mut bars = BTreeSet::new();
    for bus in v.as_array().context("query-pci is not a list")? {
        let devs = bus
            .get("devices")
            .and_then(Value::as_array)
            .context("devices")?;
        walk(devs, &mut fns, &mut bars)?;
    }
    Ok((fns, bars))
}

fn diff<T: Ord + std::fmt::Debug>(
    what: &str,
    guest: &BTreeSet<T>,
    qemu: &BTreeSet<T>,
) -> Result<()> {
    let only_g: Vec<_> = guest.difference(qemu).collect();
    let only_q: Vec<_> = qemu.difference(guest).collect();
    if !only_g.is_empty() || !only_q.is_empty() {
        bail!(
            "{what} differ: only in the image's listing {only_g:?}; only in QEMU's query-pci {only_q:?}"
        );
    }
    Ok(())
}

/// The `UK FW` line the image must print for [`FIRMWARE`], built from the
/// file's own bytes at the offsets of `struct common_firmware_header`
/// (Linux 6.12 `amdgpu_ucode.h`: size_bytes 0, header_size_bytes 4,
/// header_version_major 8, _minor 10, ip_version_major 12, _minor 14,
/// ucode_version 16, ucode_size_bytes 20, ucode_array_offset_bytes 24),
/// not with barebell's parser.
fn expected_firmware_line() -> Result<String> {
    let b = std::fs::read(FIRMWARE).with_context(|| format!("reading {FIRMWARE}"))?;
    ensure!(b.len() >= 32, "{FIRMWARE} is shorter than a header");
    let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    Ok(format!(
        "UK FW module bytes={} size_bytes={} header_size_bytes={} header_version={}.{} ip_version={}.{} ucode_version={:#x} ucode_size_bytes={} ucode_array_offset_bytes={} payload={}",
        b.len(),
        u32_at(0),
        u32_at(4),
        u16_at(8),
        u16_at(10),
        u16_at(12),
        u16_at(14),
        u32_at(16),
        u32_at(20),
        u32_at(24),
        u32_at(20)
    ))
}

fn latency_line<'a>(log: &'a str, name: &str) -> Result<&'a str> {
    log.lines()
        .find(|l| l.starts_with(&format!("UK LAT {name} ")))
        .with_context(|| format!("no `{name}` latency summary in the log"))
}

/// The bring-up chains the image runs on the model GPU, each of which
/// must end in `queue ready` (a dispatch through the mapped queue whose
/// completion signal reached 0), and the step that brought the scheduler
/// ring up on that generation.
const BRINGUP: &[(&str, &str)] = &[
    ("gfx11", "scheduler ring mapped by KIQ MAP_QUEUES"),
    ("gfx12", "scheduler ring mapped by map_legacy_kq ADD_QUEUE"),
];
/// The parts whose discovery → PSP → RLC steps the image runs with the
/// archive's real blobs, and what each step's line must say.
const PSP_PARTS: &[&str] = &["navi31-model", "navi48-model"];
const PSP_STEPS: &[(&str, &str)] = &[
    ("discovery", "IP instances"),
    ("psp", "AUTOLOAD_RLC sent"),
    ("rlc", "BOOTLOAD_COMPLETE"),
];
const MAPPINGS: &[&str] = &["mes", "direct", "kiq"];

/// Bring-up reached a ready queue for every generation and mapping, on the
/// console and in the defmt frames; returns a short description.
fn bringup_ready(log: &str, defmt: &[String]) -> Result<String> {
    for part in PSP_PARTS {
        for (step, says) in PSP_STEPS {
            let want = format!("UK BRINGUP {part} step {step}: ");
            ensure!(
                log.lines()
                    .any(|l| l.starts_with(&want) && l.contains(says)),
                "{part}: no `{want}...{says}...` line"
            );
        }
    }
    let mut n = 0;
    for (g, ring_step) in BRINGUP {
        ensure!(
            log.lines()
                .any(|l| l.starts_with(&format!("UK BRINGUP {g} step mes: "))
                    && l.contains(ring_step)),
            "{g}: no `{ring_step}` step"
        );
        for m in MAPPINGS {
            let want = format!("UK BRINGUP {g} queue ready: {m} mapping, ");
            ensure!(
                log.lines()
                    .any(|l| l.starts_with(&want) && l.ends_with("completed (signal 1 -> 0)")),
                "{g} {m}: no `{want}... completed (signal 1 -> 0)` line"
            );
            let frame = format!("BRINGUP {g} queue ready: {m} mapping");
            ensure!(defmt.contains(&frame), "{g} {m}: no `{frame}` defmt frame");
            n += 1;
        }
    }
    Ok(format!(
        "discovery/PSP/RLC on {} with real blobs; bring-up reached a ready queue {n}x ({} x {})",
        PSP_PARTS.join("+"),
        BRINGUP.iter().map(|b| b.0).collect::<Vec<_>>().join("+"),
        MAPPINGS.join("/")
    ))
}

/// Registers each part's traced PSP step must show by name, as the
/// image's defmt sink renders them (`W MP0.<reg> @0x.. = 0x..`): the
/// bootloader mailbox (written) and the GPCOM ring's write pointer
/// register. Navi31's MP0 13.0.0 header calls them `MP0_SMN_*`, Navi48's
/// MP0 14.0.2 header `MPASP_SMN_*`.
const TRACED: &[(&str, &[&str])] = &[
    (
        "navi31-model",
        &["W MP0.MP0_SMN_C2PMSG_35 @", "MP0.MP0_SMN_C2PMSG_64 @"],
    ),
    (
        "navi48-model",
        &["W MP0.MPASP_SMN_C2PMSG_35 @", "MP0.MPASP_SMN_C2PMSG_64 @"],
    ),
];

/// The symbolic register trace of the PSP step came through defmt: for
/// each part, frames between `TRACE <part> begin` and `TRACE <part> end`
/// that name the registers in [`TRACED`]; returns a short description.
fn traced_psp(defmt: &[String]) -> Result<String> {
    let mut counts = Vec::new();
    for (part, wanted) in TRACED {
        let begin = format!("TRACE {part} begin");
        let end = format!("TRACE {part} end: ");
        let start = defmt
            .iter()
            .position(|l| l.starts_with(&begin))
            .with_context(|| format!("{part}: no `{begin}` defmt frame"))?;
        let len = defmt
            .get(start + 1..)
            .unwrap_or_default()
            .iter()
            .position(|l| l.starts_with(&end))
            .with_context(|| format!("{part}: no `{end}...` defmt frame after `{begin}`"))?;
        let frames = &defmt[start + 1..start + 1 + len];
        for w in *wanted {
            ensure!(
                frames
                    .iter()
                    .any(|l| l.strip_prefix("TRACE ").is_some_and(|a| a.contains(w))),
                "{part}: no traced access `{w}...` among {} TRACE frames",
                frames.len()
            );
        }
        counts.push(format!("{part} {}", frames.len()));
    }
    Ok(format!(
        "PSP step traced through defmt with register names ({} frames)",
        counts.join(", ")
    ))
}

/// The checks one held boot must pass; returns a one-line description.
fn check(cfg: &Config, b: &Boot) -> Result<String> {
    let log = &b.log;
    if let Some(l) = log.lines().find(|l| {
        l.starts_with("UK PANIC") || l.starts_with("UK EXCEPTION") || l.starts_with("UK ERROR")
    }) {
        bail!("{}: the image reported: {l}", cfg.name);
    }
    ensure!(
        b.status == Some(SUCCESS_STATUS),
        "{}: QEMU exit status {:?}, want {SUCCESS_STATUS} (isa-debug-exit success)",
        cfg.name,
        b.status
    );
    ensure!(log.contains("UK DONE ok"), "{}: no `UK DONE ok`", cfg.name);
    ensure!(
        log.contains(&format!("UK ECAM source={} ", cfg.ecam_source)),
        "{}: the ECAM base did not come from {}",
        cfg.name,
        cfg.ecam_source
    );
    if cfg.ecam_source == "fallback" {
        ensure!(
            log.contains("UK WARNING FALLING BACK"),
            "{}: the fallback was not announced",
            cfg.name
        );
    }
    let fw = expected_firmware_line()?;
    ensure!(
        log.lines().any(|l| l == fw),
        "{}: the image's firmware header line differs from the blob's bytes; want `{fw}`",
        cfg.name
    );
    let (gf, gb) = guest_view(log)?;
    let (qmp, info) = b.qmp.as_ref().context("no query-pci result")?;
    let (qf, qb) = qemu_view(qmp)?;
    ensure!(
        !gf.is_empty(),
        "{}: the image listed no functions",
        cfg.name
    );
    diff(&format!("{}: functions", cfg.name), &gf, &qf)?;
    diff(
        &format!("{}: functions vs `info pci`", cfg.name),
        &gf,
        &info_pci_functions(info)?,
    )?;
    diff(&format!("{}: BARs", cfg.name), &gb, &qb)?;
    let store = latency_line(log, "mmio-store")?;
    latency_line(log, "mmio-store-readback")?;
    latency_line(log, "aql-submit")?;
    ensure!(
        log.contains("UK AQL model dispatches=") && log.contains("errors=0"),
        "{}: the AQL run on the model did not report a clean finish",
        cfg.name
    );
    // The defmt summaries (COM2) must say what the text ones (COM1) say;
    // the mean is left out because the two sides format it differently.
    let fields = |l: &str| -> Vec<String> {
        l.split_whitespace()
            .filter(|w| !w.starts_with("mean=") && *w != "UK")
            .map(str::to_string)
            .collect()
    };
    let text_lat: Vec<_> = log
        .lines()
        .filter(|l| l.starts_with("UK LAT "))
        .map(fields)
        .collect();
    let defmt_lat: Vec<_> = b
        .defmt
        .iter()
        .filter(|l| l.starts_with("LAT "))
        .map(|l| fields(l))
        .collect();
    ensure!(
        !defmt_lat.is_empty() && defmt_lat == text_lat,
        "{}: defmt latency summaries {defmt_lat:?} differ from the console's {text_lat:?}",
        cfg.name
    );
    ensure!(
        b.defmt.iter().any(|l| l == "DONE ok"),
        "{}: no `DONE ok` among the defmt frames",
        cfg.name
    );
    let ready = bringup_ready(log, &b.defmt).with_context(|| format!("{}: bring-up", cfg.name))?;
    let traced = traced_psp(&b.defmt).with_context(|| format!("{}: register trace", cfg.name))?;
    let behind = gf.iter().filter(|f| f.0 > 0).count();
    let high = gb.iter().filter(|b| b.5 >= 1 << 32).count();
    if cfg.name == "bridges" {
        ensure!(
            behind >= 3,
            "bridges: expected >= 3 functions behind bridges, found {behind}"
        );
        ensure!(high >= 1, "bridges: no BAR above 4 GiB");
        ensure!(
            log.contains("UK MAP above-4G"),
            "bridges: the BAR above 4 GiB was not read through its mapping"
        );
    }
    Ok(format!(
        "{}: {} functions ({} behind bridges), {} BARs ({} above 4 GiB) equal QEMU's query-pci (functions also equal `info pci`); {} defmt frames decoded; mmio-store p50={}ns; {ready}; {traced}",
        cfg.name,
        gf.len(),
        behind,
        gb.len(),
        high,
        b.defmt.len(),
        kv(store, "p50").unwrap_or("?")
    ))
}

pub fn run(root: &Path) -> Result<String> {
    let kernel = build(root)?;
    firmware_archive(root)?;
    let (file, loaded, mem) = image_size(&kernel)?;
    let mut out = vec![format!(
        "image {file} bytes on disk ({loaded} loaded bytes, {mem} bytes in memory with .bss: 48 MiB heap, 1 MiB stack)"
    )];
    for cfg in CONFIGS {
        let b = boot(root, &kernel, cfg, true)?;
        out.push(check(cfg, &b)?);
    }
    let timed = boot(root, &kernel, &CONFIGS[0], false)?;
    ensure!(
        timed.status == Some(SUCCESS_STATUS) && timed.log.contains("UK DONE ok"),
        "timed boot failed: status {:?}",
        timed.status
    );
    // The failure paths: a panic and a CPU exception must each print and
    // exit through isa-debug-exit with their own code (unikernel/src/rt.rs).
    for (word, code, want) in [
        ("test-panic", 0x12, "UK PANIC: "),
        ("test-exception", 0x13, "UK EXCEPTION vector=6 "),
    ] {
        let cfg = Config {
            name: word,
            devices: CONFIGS[0].devices,
            cmdline: word,
            ecam_source: "-",
        };
        let b = boot(root, &kernel, &cfg, false)?;
        ensure!(
            b.status == Some((code << 1) | 1) && b.log.lines().any(|l| l.starts_with(want)),
            "{word}: want exit status {} and a line starting {want:?}; got {:?}",
            (code << 1) | 1,
            b.status
        );
    }
    out.push("panic and #UD paths print and exit 37 and 39".into());
    let inside = timed
        .log
        .lines()
        .find_map(|l| l.strip_prefix("UK time kmain-to-exit="))
        .unwrap_or("?");
    out.push(format!(
        "boot-to-exit {:.3} s wall (qemu start to exit, TCG), {inside} from kmain to exit",
        timed.wall.as_secs_f64()
    ));
    let lines: Vec<&str> = timed
        .log
        .lines()
        .filter(|l| l.starts_with("UK LAT "))
        .collect();
    out.extend(lines.iter().map(|l| l.to_string()));
    // The CI summary shows the first line only.
    let headline = format!(
        "{} configurations: PCI listings equal QEMU's query-pci and info pci, bring-up (discovery, PSP, RLC with real blobs; MES, rings) reaches a ready queue (gfx11/gfx12, MES/direct/KIQ), defmt decoded; {file} B image; boot-to-exit {:.2} s; edu store p50 {} ns",
        CONFIGS.len(),
        timed.wall.as_secs_f64(),
        latency_line(&timed.log, "mmio-store")
            .ok()
            .and_then(|l| kv(l, "p50"))
            .unwrap_or("?")
    );
    out.insert(0, headline);
    Ok(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing as the image prints it and the same machine as QMP's
    /// `query-pci` describes it (shape from QEMU's qapi/pci.json:
    /// `PciInfo`, `PciDeviceInfo`, `PciBridgeInfo`, `PciMemoryRegion`),
    /// written by hand: a root port at 00:04.0 with an edu behind it.
    const LOG: &str = "\
UK PCI dev 00:04.0 vendor=1b36 device=000c class=060400 header=Bridge secondary=1
UK PCI bar 00:04.0 index=0 kind=mem32 prefetch=0 address=0xfeb95000 size=0x1000 map=UC pat=3
UK PCI dev 01:00.0 vendor=1234 device=11e8 class=00ff00 header=Normal secondary=-1
UK PCI bar 01:00.0 index=0 kind=mem64 prefetch=1 address=0xfc00000000 size=0x200000000 map=WC pat=1
";

    fn qmp(with_child: bool) -> Value {
        let child = serde_json::json!({
            "bus": 1, "slot": 0, "function": 0,
            "class_info": {"class": 255},
            "id": {"vendor": 0x1234, "device": 0x11e8},
            "regions": [{"bar": 0, "type": "memory", "address": 0xfc_0000_0000u64,
                         "size": 0x2_0000_0000u64, "prefetch": true, "mem_type_64": true},
                        {"bar": 6, "type": "memory", "address": 0, "size": 0x40000}]
        });
        serde_json::json!([{
            "bus": 0,
            "devices": [{
                "bus": 0, "slot": 4, "function": 0,
                "class_info": {"class": 1540},
                "id": {"vendor": 0x1b36, "device": 0x000c},
                "regions": [{"bar": 0, "type": "memory", "address": 0xfeb9_5000u64,
                             "size": 0x1000, "prefetch": false, "mem_type_64": false}],
                "pci_bridge": {"bus": {"number": 0, "secondary": 1, "subordinate": 1},
                               "devices": if with_child { vec![child] } else { vec![] }}
            }]
        }])
    }

    #[test]
    fn listing_equals_query_pci_through_a_bridge() {
        let (gf, gb) = guest_view(LOG).unwrap();
        let (qf, qb) = qemu_view(&qmp(true)).unwrap();
        assert!(gf.contains(&(1, 0, 0, 0x1234, 0x11e8)));
        assert!(gb.contains(&(
            (1, 0, 0),
            0,
            "mem",
            true,
            true,
            0xfc_0000_0000,
            0x2_0000_0000
        )));
        assert_eq!(qb.len(), 2, "the expansion ROM (bar 6) is not a BAR");
        diff("functions", &gf, &qf).unwrap();
        diff("BARs", &gb, &qb).unwrap();
    }

    /// Captured from QEMU 10.0.2's HMP (`-S`, so nothing is mapped yet).
    const INFO_PCI: &str = "  Bus  0, device   3, function 0:
    Class 0255: PCI device 1234:11e8
      PCI subsystem 1af4:1100
      IRQ 0, pin A
      BAR0: 32 bit memory (not mapped)
      id \"\"
  Bus  0, device   4, function 0:
    PCI bridge: PCI device 1b36:000c
      IRQ 0, pin A
      BUS 0.
      secondary bus 1.
  Bus  1, device   0, function 0:
    Class 0255: PCI device 1234:11e8
";

    /// A console log and defmt frames with every chain ready, written by
    /// hand in the image's format.
    fn ready_log() -> (String, Vec<String>) {
        let mut log = String::from(
            "UK BRINGUP gfx11 step mes: scheduler ring mapped by KIQ MAP_QUEUES; SET_HW_RSRC and QUERY_SCHEDULER_STATUS answered\n\
             UK BRINGUP gfx12 step mes: pipe 1 ring loaded by registers; scheduler ring mapped by map_legacy_kq ADD_QUEUE; SET_HW_RSRC/_1 answered\n",
        );
        for part in ["navi31-model", "navi48-model"] {
            log.push_str(&format!(
                "UK BRINGUP {part} step discovery: table read at VRAM 0x5ffff0000 (24576 MiB board); 11 IP instances; GC (11, 0, 0); MP0 (13, 0, 0)\n\
                 UK BRINGUP {part} step psp: 4 bootloader components, TMR 0x1300000 bytes asked by the TOC, 27 LOAD_IP_FW, AUTOLOAD_RLC sent\n\
                 UK BRINGUP {part} step rlc: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle\n"
            ));
        }
        let mut defmt = Vec::new();
        for g in ["gfx11", "gfx12"] {
            for m in ["mes", "direct", "kiq"] {
                log.push_str(&format!(
                    "UK BRINGUP {g} queue ready: {m} mapping, doorbell 0xd, dispatch 0 completed (signal 1 -> 0)\n"
                ));
                defmt.push(format!("BRINGUP {g} queue ready: {m} mapping"));
            }
        }
        (log, defmt)
    }

    #[test]
    fn bringup_needs_every_chain_ready() {
        let (log, defmt) = ready_log();
        assert!(bringup_ready(&log, &defmt).is_ok());
        let missing = log.replace("gfx12 queue ready: kiq", "gfx12 queue failed: kiq");
        let e = bringup_ready(&missing, &defmt).unwrap_err().to_string();
        assert!(e.contains("gfx12 kiq"), "{e}");
        let no_frame: Vec<String> = defmt.iter().skip(1).cloned().collect();
        assert!(bringup_ready(&log, &no_frame).is_err());
        let no_ring = log.replace("map_legacy_kq", "registers");
        assert!(bringup_ready(&no_ring, &defmt).is_err());
        let no_rlc = log.replace("navi48-model step rlc", "navi48-model step rlx");
        let e = bringup_ready(&no_rlc, &defmt).unwrap_err().to_string();
        assert!(e.contains("navi48-model"), "{e}");
    }

    /// Trace frames written by hand in the image's defmt format, offsets
    /// and values arbitrary.
    fn trace_frames() -> Vec<String> {
        let mut f = Vec::new();
        for (part, pre) in [("navi31-model", "MP0_SMN"), ("navi48-model", "MPASP_SMN")] {
            f.push(format!("TRACE {part} begin: psp and rlc steps"));
            f.push(format!("TRACE R MP0.{pre}_C2PMSG_35 @0x5818c = 0x80000000"));
            f.push(format!("TRACE W MP0.{pre}_C2PMSG_35 @0x5818c = 0x00080000"));
            f.push(format!("TRACE W MP0.{pre}_C2PMSG_64 @0x58200 = 0x00000008"));
            f.push(format!("TRACE {part} end: 3 accesses, 0 not traced"));
        }
        f
    }

    #[test]
    fn psp_trace_needs_named_mailbox_frames_for_both_parts() {
        let f = trace_frames();
        let ok = traced_psp(&f).unwrap();
        assert!(ok.contains("navi31-model 3, navi48-model 3"), "{ok}");
        // A read of C2PMSG_35 alone is not the bootloader write.
        let no_write: Vec<String> = f
            .iter()
            .filter(|l| !l.contains("W MP0.MPASP_SMN_C2PMSG_35"))
            .cloned()
            .collect();
        let e = traced_psp(&no_write).unwrap_err().to_string();
        assert!(e.contains("navi48-model"), "{e}");
        // Unresolved names (raw offsets) do not count.
        let raw: Vec<String> = f
            .iter()
            .map(|l| l.replace("MP0.MP0_SMN_C2PMSG_64", "[0x58200]"))
            .collect();
        assert!(traced_psp(&raw).is_err());
        // A frame outside the begin/end pair does not count.
        let mut outside = f.clone();
        let at = outside
            .iter()
            .position(|l| l.starts_with("TRACE navi31-model end"))
            .unwrap();
        let moved = outside.remove(at - 1);
        outside.push(moved);
        assert!(traced_psp(&outside).is_err());
        let no_end: Vec<String> = f.iter().filter(|l| !l.contains("end:")).cloned().collect();
        assert!(traced_psp(&no_end).is_err());
    }

    #[test]
    fn info_pci_text_gives_each_function_once() {
        let f = info_pci_functions(INFO_PCI).unwrap();
        let want: BTreeSet<Fn5> = [
            (0, 3, 0, 0x1234, 0x11e8),
            (0, 4, 0, 0x1b36, 0x000c),
            (1, 0, 0, 0x1234, 0x11e8),
        ]
        .into();
        assert_eq!(f, want);
    }

    #[test]
    fn a_device_qemu_has_and_the_image_missed_fails() {
        let (qf, _) = qemu_view(&qmp(true)).unwrap();
        let only_root: String = LOG.lines().take(2).map(|l| format!("{l}\n")).collect();
        let (gf, _) = guest_view(&only_root).unwrap();
        let e = diff("functions", &gf, &qf).unwrap_err().to_string();
        assert!(
            e.contains("only in QEMU's query-pci [(1, 0, 0, 4660, 4584)]"),
            "{e}"
        );
        let (qf2, _) = qemu_view(&qmp(false)).unwrap();
        let (gf_all, _) = guest_view(LOG).unwrap();
        assert!(diff("functions", &gf_all, &qf2).is_err());
    }
}
