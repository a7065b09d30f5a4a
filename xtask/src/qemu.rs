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
//! The image runs the one bring-up (`barebell_bringup::run`) over the
//! device model for Navi31 and Navi48 with each queue mapping (MES,
//! direct, KIQ), with the firmware from the same archive. Each of the six
//! runs must report every step in order with what that step must say
//! (the ring area at the host's VA, the PSP's AUTOLOAD_RLC, the RLC
//! autoload, the generation's scheduler ring, `queue ready`), and send
//! its register trace from the psp step to the teardown as defmt frames with
//! the PSP mailbox registers named and none dropped. The host CLI's
//! `barebell bringup --part <part> --mapping <mapping> --trace` runs the
//! same six bring-ups over the same model on the host: the image's step
//! lines must equal the host's line for line and its trace the host's
//! access for access, which holds only if the memory layout in the VM
//! (the model's DMA region at `DMA_HOST_VA`) is the host's.
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
/// The other blobs the bring-up in the image needs for Navi31 and Navi48
/// (`barebell_bringup::FirmwareSet::for_versions` for their IP versions;
/// the model's PSP expects the same files, `barebell_model::parts`).
/// [`FIRMWARE`] is Navi31's MES scheduler blob.
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
    "sdma_7_0_1.bin",
];

/// A "newc" cpio archive of `files` (name, bytes) in order, with the
/// trailer: the format the unikernel's `cpio::entries` reads.
pub fn newc(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
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
    for (name, data) in files {
        entry(name, data)?;
    }
    entry("TRAILER!!!", &[])?;
    Ok(out)
}

/// Several blobs go in through the one PVH module QEMU's `-initrd` makes,
/// as a "newc" cpio archive (the Linux initramfs format, written here by
/// hand: not checked with a cpio tool, none is installed):
/// [`FIRMWARE`] first, then [`BRINGUP_BLOBS`], each under its file name.
fn firmware_archive(root: &Path) -> Result<PathBuf> {
    let dir = Path::new(FIRMWARE).parent().context("firmware directory")?;
    let first = Path::new(FIRMWARE);
    let names = std::iter::once(first.file_name().and_then(|n| n.to_str()).context("name")?)
        .chain(BRINGUP_BLOBS.iter().copied());
    let mut files = Vec::new();
    for name in names {
        let path = dir.join(name);
        let data = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        files.push((name.to_string(), data));
    }
    let out = newc(&files)?;
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

/// The model parts the image brings up, with the step line that says how
/// the scheduler ring came up on that generation and the prefix of the
/// PSP mailbox registers in that part's MP0 header (`MP0_SMN_*` in MP0
/// 13.0.0's, `MPASP_SMN_*` in 14.0.2's).
const PARTS: &[(&str, &str, &str)] = &[
    (
        "navi31",
        "MES scheduler ring mapped by KIQ MAP_QUEUES",
        "MP0_SMN",
    ),
    (
        "navi48",
        "scheduler ring mapped by map_legacy_kq ADD_QUEUE",
        "MPASP_SMN",
    ),
];
const MAPPINGS: &[&str] = &["mes", "direct", "kiq"];
/// What the mes and rings steps of a direct run say.
const DIRECT_SKIP: &str = "skipped: the direct mapping needs neither MES nor the KIQ";
/// Where every platform puts the ring area: the DMA region sits at 32 TiB
/// (`barebell::platform::DMA_HOST_VA`) and its first 2 MiB chunk is GTT,
/// so the ring area starts 2 MiB above. The image must report this
/// address: an identity-mapped region would sit elsewhere.
const RING_AREA: &str = "ring area at VA = host 0x200000200000, ";

/// The steps of one run in the order they must report, each with what its
/// line must say (`{m}` is the mapping).
/// `--mapping direct` starts neither MES nor the KIQ (issue 14 item 6),
/// so its mes and rings steps say they were skipped.
fn step_phrases(ring: &'static str, m: &str) -> [(&'static str, &'static str); 19] {
    let (mes, ring, halt_mes) = if m == "direct" {
        (DIRECT_SKIP, DIRECT_SKIP, "halt MES: not needed")
    } else {
        ("MES pipes unhalted", ring, "halt MES: done")
    };
    [
        ("discovery", "IP instances"),
        ("nbio", "through the RSMU index/data pair"),
        ("gmc", RING_AREA),
        ("ih", "enabled and polled"),
        ("psp", "AUTOLOAD_RLC sent"),
        ("rlc", "BOOTLOAD_COMPLETE"),
        ("rlc", "CP_MEC_RS64_CNTL"),
        ("mes", mes),
        ("rings", ring),
        ("queue", "queue ready: {m} mapping, "),
        // `Gpu::shutdown`, one line a stage (bringup/src/teardown.rs).
        ("teardown", "unmap queue: done: {m} unmap answered"),
        (
            "teardown",
            "halt SDMA: not needed: no SDMA engine was started",
        ),
        ("teardown", halt_mes),
        ("teardown", "halt MEC: done"),
        ("teardown", "destroy PSP ring: done"),
        ("teardown", "disable IH ring: done"),
        ("teardown", "close doorbell aperture: done"),
        ("teardown", "clear bus mastering: done"),
        ("teardown", "release memory: done"),
    ]
}

/// One run's console lines: from `UK BRINGUP <part> run <mapping>:` to
/// `UK BRINGUP <part> <mapping> done`.
fn run_segment<'a>(log: &'a str, part: &str, m: &str) -> Result<Vec<&'a str>> {
    let head = format!("UK BRINGUP {part} run {m}: ");
    let done = format!("UK BRINGUP {part} {m} done in ");
    let mut lines = log.lines().skip_while(|l| !l.starts_with(&head));
    let first = lines
        .next()
        .with_context(|| format!("{part} {m}: no `{head}...` line"))?;
    let mut seg = vec![first];
    for l in lines {
        seg.push(l);
        if l.starts_with(&done) {
            return Ok(seg);
        }
    }
    bail!("{part} {m}: no `{done}...` line after `{head}...`")
}

/// How one run ended after its steps: `teardown complete` and the model's
/// `model check: quiescent (...)` line.
fn run_closing<'a>(seg: &[&'a str], part: &str) -> Vec<&'a str> {
    let prefix = format!("UK BRINGUP {part} ");
    seg.iter()
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter(|l| l.starts_with("teardown ") || l.starts_with("model check: "))
        .collect()
}

/// What one run reported: its `step <name>: <detail>` lines.
fn run_steps<'a>(seg: &[&'a str], part: &str) -> Vec<&'a str> {
    let prefix = format!("UK BRINGUP {part} ");
    seg.iter()
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter(|l| l.starts_with("step "))
        .collect()
}

/// Every part reached a ready queue with every mapping, through every
/// step in order, on the console and in the defmt frames; returns a
/// short description.
fn bringup_ready(log: &str, defmt: &[String]) -> Result<String> {
    // `UK BRINGUP <part> queue ready: ...`, not the queue step's line.
    let ready = log
        .lines()
        .filter_map(|l| l.strip_prefix("UK BRINGUP ")?.split_once(' '))
        .filter(|(_, rest)| rest.starts_with("queue ready: "))
        .count();
    let want = PARTS.len() * MAPPINGS.len();
    ensure!(
        ready == want,
        "{ready} `UK BRINGUP <part> queue ready` lines, want {want}"
    );
    for (part, ring, _) in PARTS {
        for m in MAPPINGS {
            let seg = run_segment(log, part, m)?;
            ensure!(
                seg[0].contains("DMA region at host 0x200000000000,"),
                "{part} {m}: the model's DMA region is not at DMA_HOST_VA: {}",
                seg[0]
            );
            let steps = run_steps(&seg, part);
            let mut at = 0;
            for (step, says) in step_phrases(ring, m) {
                let says = says.replace("{m}", m);
                let want = format!("step {step}: ");
                let found = steps
                    .get(at..)
                    .unwrap_or_default()
                    .iter()
                    .position(|l| l.starts_with(&want) && l.contains(&says));
                let Some(i) = found else {
                    bail!("{part} {m}: no `{want}...{says}...` line after the steps before it")
                };
                at += i + 1;
            }
            let want = format!("UK BRINGUP {part} queue ready: {m} mapping, ");
            ensure!(
                seg.iter()
                    .any(|l| l.starts_with(&want) && l.ends_with("completed (signal 1 -> 0)")),
                "{part} {m}: no `{want}... completed (signal 1 -> 0)` line"
            );
            let closing = run_closing(&seg, part);
            ensure!(
                closing.first() == Some(&"teardown complete")
                    && closing
                        .get(1)
                        .is_some_and(|l| l.starts_with("model check: quiescent")),
                "{part} {m}: the run did not end with `teardown complete` and `model check: quiescent ...`: {closing:?}"
            );
            let frame = format!("BRINGUP {part} queue ready: {m} mapping");
            let n = defmt.iter().filter(|l| **l == frame).count();
            ensure!(n == 1, "{part} {m}: {n} `{frame}` defmt frames, want 1");
        }
    }
    Ok(format!(
        "bring-up reached a ready queue {want}x ({} x {}), every step in order, torn down to a quiescent model",
        PARTS.iter().map(|p| p.0).collect::<Vec<_>>().join("+"),
        MAPPINGS.join("/")
    ))
}

/// One run's trace frames: every `TRACE ` frame between `TRACE <part>
/// <mapping> begin` and `end`, and the `end` frame's two counts.
fn run_trace<'a>(defmt: &'a [String], part: &str, m: &str) -> Result<(Vec<&'a str>, u64, u64)> {
    let begin = format!("TRACE {part} {m} begin");
    let end = format!("TRACE {part} {m} end: ");
    let start = defmt
        .iter()
        .position(|l| l.starts_with(&begin))
        .with_context(|| format!("{part} {m}: no `{begin}` defmt frame"))?;
    let rest = defmt.get(start + 1..).unwrap_or_default();
    let len = rest
        .iter()
        .position(|l| l.starts_with(&end))
        .with_context(|| format!("{part} {m}: no `{end}...` defmt frame after `{begin}`"))?;
    // `<n> accesses, <m> not traced`
    let counts: Vec<u64> = rest[len][end.len()..]
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let [seen, dropped] = counts[..] else {
        bail!("{part} {m}: malformed end frame `{}`", rest[len]);
    };
    let frames = rest[..len]
        .iter()
        .map(String::as_str)
        .filter(|l| l.starts_with("TRACE "))
        .collect();
    Ok((frames, seen, dropped))
}

/// Each run's register trace (psp step to teardown) came through defmt with
/// register names: every access frame is there (the `end` frame's count
/// equals the frames, none dropped), and the psp step's frames name the
/// written bootloader mailbox (C2PMSG_35) and the GPCOM ring's write
/// pointer (C2PMSG_64); returns a short description.
fn traced(defmt: &[String]) -> Result<String> {
    let mut counts = Vec::new();
    for (part, _, pre) in PARTS {
        for m in MAPPINGS {
            let (frames, seen, dropped) = run_trace(defmt, part, m)?;
            let accesses = frames
                .iter()
                .filter(|l| l.starts_with("TRACE R ") || l.starts_with("TRACE W "))
                .count() as u64;
            ensure!(
                dropped == 0 && seen == accesses,
                "{part} {m}: the end frame counts {seen} accesses, {dropped} not traced; {accesses} access frames arrived"
            );
            let psp_end = format!("TRACE {part} {m} step psp reported");
            let psp = frames
                .iter()
                .position(|l| *l == psp_end)
                .with_context(|| format!("{part} {m}: no `{psp_end}` frame"))?;
            for w in [
                format!("TRACE W MP0.{pre}_C2PMSG_35 @"),
                format!("MP0.{pre}_C2PMSG_64 @"),
            ] {
                ensure!(
                    frames[..psp].iter().any(|l| l.contains(&w)),
                    "{part} {m}: no traced access `{w}...` among the psp step's {psp} frames"
                );
            }
            counts.push(accesses);
        }
    }
    Ok(format!(
        "psp-to-teardown register traces through defmt with register names ({} accesses per run)",
        counts
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("/")
    ))
}

/// The host's `barebell bringup` over the model, for comparison: the
/// device line, the step lines, and the trace after the gmc step in the
/// image's frame form (`TRACE <access>`, and `TRACE <part> <mapping> step
/// <name> reported` where a step reports).
#[derive(Debug, Clone, Default)]
struct HostRun {
    device: String,
    steps: Vec<String>,
    /// `teardown complete` and `model check: quiescent (...)`.
    closing: Vec<String>,
    trace: Vec<String>,
}

/// A trace line without its register name (`TRACE W @0xc864 = 0x0`), and
/// the name if it has one; other lines as they are.
fn canonical_access(l: &str) -> (String, Option<String>) {
    let Some(a) = l.strip_prefix("TRACE ") else {
        return (l.to_string(), None);
    };
    let mut w = a.splitn(2, ' ');
    let (Some(dir), Some(rest)) = (w.next(), w.next()) else {
        return (l.to_string(), None);
    };
    if !matches!(dir, "W" | "R") {
        return (l.to_string(), None);
    }
    if let Some(r) = rest.strip_prefix('[') {
        // `[0xOFF] = 0xVAL`
        let (off, val) = r.split_once("] = ").unwrap_or((r, ""));
        return (format!("TRACE {dir} @{off} = {val}"), None);
    }
    match rest.split_once(" @") {
        Some((name, tail)) => (format!("TRACE {dir} @{tail}"), Some(name.to_string())),
        None => (l.to_string(), None),
    }
}

/// Parses `barebell bringup --part <part> --mapping <m> --trace` output.
fn parse_host_run(text: &str, part: &str, m: &str) -> Result<HostRun> {
    let mut lines = text.lines();
    let mut run = HostRun {
        device: lines.next().context("empty output")?.to_string(),
        ..HostRun::default()
    };
    let mut tracing = false;
    for l in lines {
        if let Some(a) = l.strip_prefix("  ") {
            if tracing {
                run.trace.push(format!("TRACE {a}"));
            }
        } else if let Some(rest) = l.strip_prefix("step ") {
            let name = rest.split(':').next().unwrap_or_default();
            if tracing {
                run.trace
                    .push(format!("TRACE {part} {m} step {name} reported"));
            }
            tracing |= name == "gmc";
            run.steps.push(l.to_string());
        } else if l == "teardown complete" || l.starts_with("model check: quiescent") {
            run.closing.push(l.to_string());
        } else if l.starts_with("trace: ") && l.contains(" register accesses, ") {
            // The CLI's count of the accesses it traced, and how many no
            // table names: a host summary the image does not print.
        } else {
            bail!("unexpected line {l:?}");
        }
    }
    Ok(run)
}

/// Runs the host CLI's bring-up over the model for every part and
/// mapping (the debug build `cargo test` makes, as the lspci stage uses).
fn host_runs(root: &Path) -> Result<Vec<((&'static str, &'static str), HostRun)>> {
    let mut out = Vec::new();
    for (part, _, _) in PARTS {
        for m in MAPPINGS {
            let text = crate::util::output(cargo().current_dir(root).args([
                "run",
                "--quiet",
                "-p",
                "barebell-cli",
                "--bin",
                "barebell",
                "--",
                "bringup",
                "--part",
                part,
                "--mapping",
                m,
                "--trace",
            ]))?;
            let run = parse_host_run(&text, part, m)
                .with_context(|| format!("host `barebell bringup --part {part} --mapping {m}`"))?;
            out.push(((*part, *m), run));
        }
    }
    Ok(out)
}

/// First difference between two line lists, for an error message.
fn first_difference(a: &[impl AsRef<str>], b: &[impl AsRef<str>]) -> String {
    let n = a.len().min(b.len());
    match (0..n).find(|&i| a[i].as_ref() != b[i].as_ref()) {
        Some(i) => format!(
            "line {i}: image `{}`, host `{}`",
            a[i].as_ref(),
            b[i].as_ref()
        ),
        None => format!("image {} lines, host {}", a.len(), b.len()),
    }
}

/// The image ran the host's bring-up: for every part and mapping its step
/// lines equal the host CLI's line for line (so the same memory layout,
/// firmware loads and queue), and its register trace from the psp step on
/// equals the host's access for access (names, offsets, values, and where
/// each step reported); the model's DMA region is where the host's is.
fn same_as_host(
    log: &str,
    defmt: &[String],
    host: &[((&'static str, &'static str), HostRun)],
) -> Result<String> {
    let mut accesses = 0;
    for ((part, m), h) in host {
        let seg = run_segment(log, part, m)?;
        let steps = run_steps(&seg, part);
        ensure!(
            steps.len() == h.steps.len() && steps.iter().zip(&h.steps).all(|(a, b)| a == b),
            "{part} {m}: step lines differ from the host's: {}",
            first_difference(&steps, &h.steps)
        );
        let closing = run_closing(&seg, part);
        ensure!(
            closing.len() == h.closing.len() && closing.iter().zip(&h.closing).all(|(a, b)| a == b),
            "{part} {m}: teardown lines differ from the host's: {}",
            first_difference(&closing, &h.closing)
        );
        let dma = |l: &str| {
            l.split("DMA region at host ").nth(1).map(|r| {
                r.trim_end_matches(')')
                    .split(',')
                    .next()
                    .unwrap_or(r)
                    .to_string()
            })
        };
        ensure!(
            dma(seg[0]).is_some() && dma(seg[0]) == dma(&h.device),
            "{part} {m}: DMA region differs: image `{}`, host `{}`",
            seg[0],
            h.device
        );
        let (frames, _, _) = run_trace(defmt, part, m)?;
        // The host CLI also names what only `barebell regs`'s tables know
        // (`cli/src/naming.rs`); the image names from the runtime's own
        // lists. Accesses are compared by direction, offset and value,
        // and a name where both sides give one.
        let same = |a: &str, b: &str| {
            let (ca, cb) = (canonical_access(a), canonical_access(b));
            ca.0 == cb.0 && (ca.1.is_none() || cb.1.is_none() || ca.1 == cb.1)
        };
        ensure!(
            frames.len() == h.trace.len()
                && frames
                    .iter()
                    .zip(&h.trace)
                    .all(|(a, b)| same(a, b.as_str())),
            "{part} {m}: trace differs from the host's: {}",
            first_difference(&frames, &h.trace)
        );
        accesses += h.trace.iter().filter(|l| !l.contains(" reported")).count();
    }
    Ok(format!(
        "step lines and {accesses} traced accesses equal the host CLI's `barebell bringup --trace` for all {} runs",
        host.len()
    ))
}

/// The checks one held boot must pass; returns a one-line description.
fn check(
    cfg: &Config,
    b: &Boot,
    host: &[((&'static str, &'static str), HostRun)],
) -> Result<String> {
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
        log.lines().any(|l| l.starts_with("UK MEM ")),
        "{}: the memory functions were not checked",
        cfg.name
    );
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
    let traced = traced(&b.defmt).with_context(|| format!("{}: register trace", cfg.name))?;
    let same = same_as_host(log, &b.defmt, host)
        .with_context(|| format!("{}: bring-up vs the host CLI", cfg.name))?;
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
        "{}: {} functions ({} behind bridges), {} BARs ({} above 4 GiB) equal QEMU's query-pci (functions also equal `info pci`); {} defmt frames decoded; mmio-store p50={}ns; {ready}; {traced}; {same}",
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
        "image {file} bytes on disk ({loaded} loaded bytes, {mem} bytes in memory with .bss: heap, the model's VRAM backing and DMA region, 1 MiB stack)"
    )];
    let host = host_runs(root)?;
    for cfg in CONFIGS {
        let b = boot(root, &kernel, cfg, true)?;
        out.push(check(cfg, &b, &host)?);
    }
    let timed = boot(root, &kernel, &CONFIGS[0], false)?;
    ensure!(
        timed.status == Some(SUCCESS_STATUS) && timed.log.contains("UK DONE ok"),
        "timed boot failed: status {:?}",
        timed.status
    );
    bringup_ready(&timed.log, &timed.defmt).context("timed boot: bring-up")?;
    let heap_line = |prefix: &str, key: &str| {
        timed
            .log
            .lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| kv(l, key))
            .map(|v| v.trim_end_matches(';').to_string())
            .with_context(|| format!("timed boot: no `{prefix}... {key}=` line"))
    };
    let peak: u64 = heap_line("UK heap used=", "peak")?.parse()?;
    let heap = hex(&heap_line("UK heap at=", "len")?)?;
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
        "boot-to-exit {:.3} s wall (qemu start to exit, TCG), {inside} from kmain to exit; heap peak {:.1} of {} MiB",
        timed.wall.as_secs_f64(),
        peak as f64 / f64::from(1 << 20),
        heap >> 20
    ));
    let lines: Vec<&str> = timed
        .log
        .lines()
        .filter(|l| l.starts_with("UK LAT "))
        .collect();
    out.extend(lines.iter().map(|l| l.to_string()));
    // The CI summary shows the first line only.
    let headline = format!(
        "{} configurations: PCI listings equal QEMU's query-pci and info pci, the one bring-up (barebell-bringup on the model, real blobs) reaches a ready queue (navi31/navi48 x MES/direct/KIQ) with step lines and psp-to-teardown traces, torn down to a quiescent model, equal to the host CLI's, defmt decoded; {file} B image; boot-to-exit {:.2} s; edu store p50 {} ns",
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

    /// The step lines of one run, in the CLI's form (`step <name>:
    /// <detail>`), written by hand in the bring-up's wording.
    fn steps(part: &str, m: &str) -> Vec<String> {
        let ring = if part == "navi31" {
            "MES scheduler ring mapped by KIQ MAP_QUEUES; SET_HW_RSRC and QUERY_SCHEDULER_STATUS answered"
        } else {
            "MES pipe 1 ring loaded by registers; scheduler ring mapped by map_legacy_kq ADD_QUEUE; SET_HW_RSRC and SET_HW_RSRC_1 answered on both pipes"
        };
        [
            "step discovery: table read at VRAM 0x5ffff0000 through MM_INDEX/MM_DATA (24576 MiB of VRAM); 11 IP instances".to_string(),
            "step nbio: NBIO 4.3.0 init; registers past BAR5 (0x100000 bytes) through the RSMU index/data pair".into(),
            "step gmc: FB at MC 0x8000000000..=0x85ffffffff; ring area at VA = host 0x200000200000, 0x200000 bytes".into(),
            "step ih: OSSSYS 6.0.0 (ih_v6_0): ring 0 at MC 0x7fff00180000 (0x40000 bytes, GTT), enabled and polled (no MSI)".into(),
            "step psp: 4 bootloader components, 27 LOAD_IP_FW, AUTOLOAD_RLC sent".into(),
            "step rlc: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle".into(),
            "step rlc: GFXHUB 3.0 enabled with the same VMID0 tables, VMID0 flushed".into(),
            "step rlc: MEC pipes 0-3 at 0x1c00000000c00 (CP_MEC_RS64_PRGRM_CNTR_START), reset pulsed; CP_MEC_RS64_CNTL 0x3c000000: active, unhalted".into(),
            if m == "direct" {
                format!("step mes: {DIRECT_SKIP}")
            } else {
                "step mes: MES pipes unhalted at 0x1400 and 0x1400".into()
            },
            if m == "direct" {
                format!("step rings: {DIRECT_SKIP}")
            } else {
                format!("step rings: {ring}")
            },
            if m == "mes" {
                format!("step queue: queue ready: {m} mapping, doorbell 0xd, PASID 0x8001, VMID picked by MES, barrier 0 completed")
            } else {
                format!("step queue: queue ready: {m} mapping, doorbell 0xd, VMID 8, barrier 0 completed")
            },
        ]
        .into_iter()
        .chain(teardown(m))
        .collect()
    }

    /// The teardown's lines as `Gpu::shutdown` reports them.
    fn teardown(m: &str) -> Vec<String> {
        let mes = if m == "direct" {
            "halt MES: not needed: MES was never started"
        } else {
            "halt MES: done: CP_MES_CNTL = 0x40030010 (pipes reset, MES_HALT)"
        };
        [
            format!("unmap queue: done: {m} unmap answered"),
            "halt SDMA: not needed: no SDMA engine was started".into(),
            mes.into(),
            "halt MEC: done: CP_MEC_RS64_CNTL = 0x400f0010 (pipes reset and inactive, MEC_HALT)"
                .into(),
            "destroy PSP ring: done: DESTROY_RINGS answered".into(),
            "disable IH ring: done: IH_RB_CNTL = 0x40110120 (RB_ENABLE clear), pointers 0".into(),
            "close doorbell aperture: done: self-ring aperture and doorbell BAR closed".into(),
            "clear bus mastering: done: PCI_COMMAND bus master cleared".into(),
            "release memory: done: user memory handed back".into(),
        ]
        .into_iter()
        .map(|l| format!("step teardown: {l}"))
        .collect()
    }

    /// How a clean run ends after its steps.
    const CLOSING: [&str; 2] = [
        "teardown complete",
        "model check: quiescent (no HQD active, SDMA, MES and MEC halted, PSP ring destroyed, IH rings disabled, doorbell apertures closed, bus mastering off)",
    ];

    /// One run's trace after the gmc step, in the image's frame form:
    /// each step's accesses, then its report; offsets and values
    /// arbitrary.
    fn trace(part: &str, m: &str) -> Vec<String> {
        let pre = if part == "navi31" {
            "MP0_SMN"
        } else {
            "MPASP_SMN"
        };
        let mark = |s: &str| format!("TRACE {part} {m} step {s} reported");
        vec![
            mark("ih"),
            format!("TRACE R MP0.{pre}_C2PMSG_35 @0x5818c = 0x80000000"),
            format!("TRACE W MP0.{pre}_C2PMSG_35 @0x5818c = 0x00080000"),
            format!("TRACE W MP0.{pre}_C2PMSG_64 @0x58200 = 0x00000008"),
            mark("psp"),
            "TRACE R GC.RLC_RLCS_BOOTLOAD_STATUS @0x3ba08 = 0x80000000".into(),
            mark("rlc"),
            mark("rlc"),
            mark("rlc"),
            mark("mes"),
            mark("rings"),
            mark("queue"),
            mark("teardown"),
            mark("teardown"),
            mark("teardown"),
            mark("teardown"),
            mark("teardown"),
            mark("teardown"),
            mark("teardown"),
            mark("teardown"),
            mark("teardown"),
        ]
    }

    /// A console log and defmt frames of every run, as the image prints
    /// them.
    fn ready_log() -> (String, Vec<String>) {
        let mut log = String::new();
        let mut defmt = Vec::new();
        for part in ["navi31", "navi48"] {
            for m in ["mes", "direct", "kiq"] {
                log.push_str(&format!(
                    "UK BRINGUP {part} run {m}: model {part}, BAR0 backed for 32 MiB, DMA region at host 0x200000000000, seed 1\n"
                ));
                for s in steps(part, m) {
                    log.push_str(&format!("UK BRINGUP {part} {s}\n"));
                    if s.starts_with("step queue") {
                        log.push_str(&format!(
                            "UK BRINGUP {part} queue ready: {m} mapping, doorbell 0xd, barrier packet 0 completed (signal 1 -> 0)\n"
                        ));
                    }
                }
                for c in CLOSING {
                    log.push_str(&format!("UK BRINGUP {part} {c}\n"));
                }
                log.push_str(&format!("UK BRINGUP {part} {m} done in 1us\n"));
                defmt.push(format!("TRACE {part} {m} begin: psp, ..."));
                defmt.extend(trace(part, m));
                defmt.push(format!("BRINGUP {part} queue ready: {m} mapping"));
                defmt.push(format!("TRACE {part} {m} end: 4 accesses, 0 not traced"));
            }
        }
        (log, defmt)
    }

    /// The host CLI's output for one run, as `barebell bringup --trace`
    /// prints it: each step's accesses, then its line.
    fn host_text(part: &str, m: &str) -> String {
        let mut t = format!(
            "model {part}: the device model (24576 MiB of VRAM, BAR0 backed for the first 64 MiB; DMA region at host 0x200000000000)\n"
        );
        let mut frames = trace(part, m).into_iter();
        let mut after_gmc = false;
        for s in steps(part, m) {
            if after_gmc {
                for f in frames.by_ref() {
                    if f.ends_with(" reported") {
                        break;
                    }
                    t.push_str(&format!("  {}\n", &f["TRACE ".len()..]));
                }
            } else {
                t.push_str("  R BOOT.MM_INDEX @0x0 = 0x00000000\n");
            }
            t.push_str(&format!("{s}\n"));
            after_gmc |= s.starts_with("step gmc");
        }
        for c in CLOSING {
            t.push_str(&format!("{c}\n"));
        }
        t
    }

    fn host() -> Vec<((&'static str, &'static str), HostRun)> {
        let mut v = Vec::new();
        for part in ["navi31", "navi48"] {
            for m in ["mes", "direct", "kiq"] {
                v.push((
                    (part, m),
                    parse_host_run(&host_text(part, m), part, m).unwrap(),
                ));
            }
        }
        v
    }

    #[test]
    fn bringup_needs_every_run_ready_through_every_step() {
        let (log, defmt) = ready_log();
        let ok = bringup_ready(&log, &defmt).unwrap();
        assert!(ok.contains("6x"), "{ok}");
        let missing = log.replace("navi48 queue ready: kiq", "navi48 queue failed: kiq");
        assert!(bringup_ready(&missing, &defmt).is_err());
        let no_frame: Vec<String> = defmt
            .iter()
            .filter(|l| *l != "BRINGUP navi31 queue ready: mes mapping")
            .cloned()
            .collect();
        let e = bringup_ready(&log, &no_frame).unwrap_err().to_string();
        assert!(e.contains("navi31 mes"), "{e}");
        let no_ring = log.replace("map_legacy_kq", "registers");
        assert!(bringup_ready(&no_ring, &defmt).is_err());
        let no_rlc = log.replace("navi48 step rlc", "navi48 step rlx");
        let e = bringup_ready(&no_rlc, &defmt).unwrap_err().to_string();
        assert!(e.contains("navi48"), "{e}");
        // The layout must be the host's: the ring area at 32 TiB + 2 MiB.
        let identity = log.replace("VA = host 0x200000200000", "VA = host 0x2600000");
        assert!(bringup_ready(&identity, &defmt).is_err());
        // Steps out of order do not count.
        let swapped = log.replacen(
            "UK BRINGUP navi31 step psp: 4 bootloader components, 27 LOAD_IP_FW, AUTOLOAD_RLC sent\nUK BRINGUP navi31 step rlc: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle\n",
            "UK BRINGUP navi31 step rlc: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle\nUK BRINGUP navi31 step psp: 4 bootloader components, 27 LOAD_IP_FW, AUTOLOAD_RLC sent\n",
            1,
        );
        assert_ne!(swapped, log);
        assert!(bringup_ready(&swapped, &defmt).is_err());
        // A seventh queue is one too many.
        let extra = format!("{log}UK BRINGUP navi31 queue ready: mes mapping, again\n");
        assert!(bringup_ready(&extra, &defmt).is_err());
    }

    #[test]
    fn trace_needs_named_mailbox_frames_for_every_run() {
        let (_, f) = ready_log();
        let ok = traced(&f).unwrap();
        assert!(ok.contains("(4/4/4/4/4/4 accesses"), "{ok}");
        // A read of C2PMSG_35 alone is not the bootloader write.
        let no_write: Vec<String> = f
            .iter()
            .filter(|l| !l.contains("W MP0.MPASP_SMN_C2PMSG_35"))
            .map(|l| {
                if l.starts_with("TRACE navi48") {
                    l.replace("4 accesses", "3 accesses")
                } else {
                    l.clone()
                }
            })
            .collect();
        let e = traced(&no_write).unwrap_err().to_string();
        assert!(e.contains("navi48 mes"), "{e}");
        // Unresolved names (raw offsets) do not count.
        let raw: Vec<String> = f
            .iter()
            .map(|l| l.replace("MP0.MP0_SMN_C2PMSG_64", "[0x58200]"))
            .collect();
        assert!(traced(&raw).is_err());
        // The mailbox must be in the psp step, before its report.
        let late: Vec<String> = f
            .iter()
            .map(|l| {
                l.replace(
                    "navi31 kiq step psp reported",
                    "navi31 kiq step nbio reported",
                )
            })
            .collect();
        assert!(traced(&late).is_err());
        // A frame that did not arrive, or one left out, fails.
        let lost: Vec<String> = f
            .iter()
            .filter(|l| !l.starts_with("TRACE R GC.RLC"))
            .cloned()
            .collect();
        assert!(traced(&lost).is_err());
        let capped: Vec<String> = f
            .iter()
            .map(|l| l.replace("0 not traced", "1 not traced"))
            .collect();
        assert!(traced(&capped).is_err());
        let no_end: Vec<String> = f.iter().filter(|l| !l.contains("end:")).cloned().collect();
        assert!(traced(&no_end).is_err());
    }

    #[test]
    fn the_image_must_match_the_host_line_for_line() {
        let (log, defmt) = ready_log();
        let host = host();
        // Accesses before the gmc report are not traced.
        assert!(!host[0].1.trace.iter().any(|l| l.contains("MM_INDEX")));
        assert_eq!(host[0].1.trace, trace("navi31", "mes"));
        let ok = same_as_host(&log, &defmt, &host).unwrap();
        assert!(ok.contains("24 traced accesses"), "{ok}");
        let detail = log.replace("27 LOAD_IP_FW", "26 LOAD_IP_FW");
        let e = same_as_host(&detail, &defmt, &host)
            .unwrap_err()
            .to_string();
        assert!(e.contains("27 LOAD_IP_FW"), "{e}");
        let value: Vec<String> = defmt
            .iter()
            .map(|l| l.replace("= 0x00000008", "= 0x00000009"))
            .collect();
        assert!(same_as_host(&log, &value, &host).is_err());
        let moved = log.replace(
            "DMA region at host 0x200000000000",
            "DMA region at host 0x2400000",
        );
        assert!(same_as_host(&moved, &defmt, &host).is_err());
        let mut fewer = host.clone();
        fewer[5].1.steps.pop();
        assert!(same_as_host(&log, &defmt, &fewer).is_err());
        // The teardown is compared too: a stage that did less, or an image
        // that never said it was quiescent, differs from the host.
        let halted_less = log.replacen("0x400f0010", "0x000f0010", 1);
        let e = same_as_host(&halted_less, &defmt, &host)
            .unwrap_err()
            .to_string();
        assert!(e.contains("halt MEC"), "{e}");
        let unchecked = log.replacen("UK BRINGUP navi48 model check: quiescent", "UK X", 1);
        let e = same_as_host(&unchecked, &defmt, &host)
            .unwrap_err()
            .to_string();
        assert!(e.contains("teardown lines differ"), "{e}");
    }

    #[test]
    fn a_host_run_that_did_not_tear_down_cleanly_is_refused() {
        let t = host_text("navi31", "kiq");
        assert_eq!(
            parse_host_run(&t, "navi31", "kiq").unwrap().closing,
            CLOSING.map(String::from).to_vec()
        );
        for bad in [
            t.replace("teardown complete", "teardown INCOMPLETE"),
            t.replace(
                "model check: quiescent",
                "model check: NOT quiescent: MES pipe 0 running",
            ),
        ] {
            let e = parse_host_run(&bad, "navi31", "kiq")
                .unwrap_err()
                .to_string();
            assert!(e.contains("unexpected line"), "{e}");
        }
    }

    #[test]
    fn a_run_that_ends_without_a_quiescent_model_is_not_ready() {
        let (log, defmt) = ready_log();
        let stuck = log.replacen(
            "UK BRINGUP navi31 model check: quiescent",
            "UK BRINGUP navi31 model check: NOT quiescent",
            1,
        );
        let e = bringup_ready(&stuck, &defmt).unwrap_err().to_string();
        assert!(e.contains("navi31 mes") && e.contains("quiescent"), "{e}");
        let no_mec_halt = log.replacen(
            "step teardown: halt MEC: done",
            "step teardown: halt MEC: failed",
            1,
        );
        assert!(bringup_ready(&no_mec_halt, &defmt).is_err());
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

#[cfg(test)]
mod newc_tests {
    use super::newc;
    use crate::uk_cpio::{CpioError, entries};

    /// The unikernel's reader gives back what the writer `cargo xtask
    /// qemu` uses put in, in order.
    #[test]
    fn the_unikernel_reads_back_what_the_writer_wrote() {
        let files = vec![
            ("gc_11_0_0_mes_2.bin".to_string(), vec![1u8, 2, 3]),
            ("empty".to_string(), vec![]),
            ("four".to_string(), vec![9u8; 4]),
        ];
        let a = newc(&files).unwrap();
        let got = entries(&a).unwrap();
        let got: Vec<(String, Vec<u8>)> = got.into_iter().map(|(n, d)| (n, d.to_vec())).collect();
        assert_eq!(got, files);
    }

    /// Fuzzing finding (issue 21, `cpio` target): an archive cut after an
    /// entry whose data is not a multiple of 4 bytes (no padding, no
    /// trailer) was refused naming an offset past its end.
    #[test]
    fn an_archive_cut_after_unpadded_data_names_an_offset_inside_it() {
        let mut a = newc(&[("a".to_string(), vec![1u8, 2, 3])]).unwrap();
        // Header (110) + "a\0" (2) + 3 data bytes; drop the padding and
        // the trailer.
        a.truncate(115);
        assert_eq!(entries(&a), Err(CpioError::NoTrailer { len: 115 }));
        // A cut inside an entry names that entry.
        a.truncate(114);
        assert_eq!(entries(&a), Err(CpioError::BadEntry { at: 0 }));
    }
}
