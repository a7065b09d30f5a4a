//! `cargo xtask linux-peer --part navi31`: the stock Linux amdgpu driver in
//! a QEMU guest, the first layer (see `docs/linux-peer.md`).
//!
//! The goal is a guest whose unmodified amdgpu binds to barebell's device
//! model over vfio-user. That needs QEMU ≥ 10.1 (its first release with
//! the `vfio-user-pci` client); bookworm's QEMU 10.0 has none, and
//! trixie-backports' QEMU needs trixie's glibc, so QEMU runs from a Debian
//! 13 (trixie) root built here with debootstrap and cached under
//! `target/linux-peer/` (the same helpers as `cargo xtask fresh`).
//!
//! It builds barebell's vfio-user server (`barebell-vfio-user`, crate
//! `vfio-peer`), starts it on a socket in the run directory, and attaches
//! it to the guest as a `vfio-user-pci` function behind a PCIe root
//! port. It builds or reuses the root, builds an initramfs (busybox from `busybox-static`, `amdgpu.ko` and the
//! modules it depends on, in the order the root's `modprobe
//! --show-depends` gives, and the part's blobs from
//! `firmware-amd-graphics`), boots Debian's generic
//! `linux-image-6.12.*-amd64-unsigned` kernel (the cloud flavour has no
//! amdgpu) under the root's QEMU, and reads the guest's report from the
//! serial console: the module loaded, and its `dmesg` lines, from which
//! it reads the milestone reached ([`milestone`]).
//!
//! The CI stage `linux peer` ([`stage`]) runs it for navi31 and mi300x:
//! about 35 and 50 s a part once the root is cached (a fresh clone builds
//! the root first, a few minutes more), well under the ten minutes that
//! make it a stage rather than a step run by hand.

use crate::fresh::{debootstrap, refuse_if_mounted};
use crate::qemu_pci::cpio_entry;
use crate::util::{self, output};
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const SUITE: &str = "trixie";
/// Marks a root whose every step below finished.
const STAMP: &str = ".barebell-linux-peer-complete";
/// Holds the kernel ABI (`6.12.118+deb13-amd64`) unpacked into the root.
const KERNEL_ABI_FILE: &str = ".barebell-linux-peer-kernel";
/// From trixie itself: kmod for `depmod`/`modprobe --show-depends`, xz to
/// unpack the modules (busybox's insmod takes plain `.ko` files), the
/// static busybox the guest runs, and the firmware (20250410, the same
/// upstream release as the host's bookworm-backports package the model
/// reads).
const ROOT_PACKAGES: &[&str] = &[
    "kmod",
    "xz-utils",
    "busybox-static",
    "firmware-amd-graphics",
];
/// The first QEMU with the `vfio-user-pci` client.
const QEMU_MIN: (u32, u32) = (10, 1);
/// Where the run directory appears inside the root while QEMU runs.
const MNT: &str = "/mnt/linux-peer";
/// Every boot ends by this many seconds, or is killed.
const BOOT_BOUND_SECS: u64 = 300;
/// The guest kernel's command line.
const CMDLINE: &str = "console=ttyS0 panic=-1 loglevel=4 log_buf_len=8M";
/// The server's socket, in the run directory (inside the root at [`MNT`]).
const SOCKET: &str = "vfio-user.sock";
/// How long the server may take to build the model and listen.
const SERVER_START_SECS: u64 = 120;
/// How long the guest's `/init` waits for one `insmod` before it reports.
const AMDGPU_WAIT_SECS: u32 = 60;
/// How long the guest's `/init` lets the debugfs IB tests run (each ring
/// waits up to 0.5 s for the fence fallback timer when no interrupt
/// arrives: 64 rings on MI300X).
const IB_TEST_SECS: u32 = 90;
/// The byte the guest's `/init` writes to the cache line size register
/// (config byte 0x0c) before it powers off: where the trace's teardown
/// begins (`barebell trace name`'s `TEARDOWN_MARK`).
const TEARDOWN_MARK: u8 = 0x5a;
/// How long the guest's `/init` lets the KFD test client run (it bounds
/// its own wait for the dispatch to 20 s).
const DISPATCH_SECS: u32 = 40;
/// What every line the guest's `/init` reports starts with.
const TAG: &str = "LINUX-PEER: ";

/// A part this command knows: its name and the firmware file-name
/// prefixes (`amdgpu/<prefix>*`) its IP versions load.
struct PartSpec {
    name: &'static str,
    firmware: &'static [&'static str],
    /// amdgpu's module parameters for the part.
    params: &'static str,
    /// The KFD node's `gfx_target_version` for the part's GC
    /// (`kgd2kfd_probe()`: 110000 for GC 11.0.0, 90402 for GC 9.4.3).
    gfx_target: u32,
    /// The processor the guest's client's kernel is built for
    /// (`gpu-kernels/kernels/latency.cl`'s `empty`).
    mcpu: &'static str,
    /// What the guest's CPU model adds or removes (QEMU `-cpu` flags).
    cpu_flags: &'static str,
    /// The active CUs Linux must count on the model (`active_cu_number`,
    /// `amdgpu_device_init()`), the part's published figure, where the
    /// model answers the shader-array registers it counts through.
    active_cus: Option<u32>,
}

/// Navi31's blobs by IP version: GC 11.0.0 (its MES firmware is
/// `gc_11_0_0_mes*.bin`: `amdgpu_mes_init_microcode()` names it after the
/// GC version), PSP 13.0.0, SMU 13.0.0, SDMA 6.0.0, DCN 3.2.0, VCN 4.0.0.
/// MI300X's: GC 9.4.3, PSP 13.0.6, SMU 13.0.6, SDMA 4.4.2, VCN 4.0.3.
const PARTS: &[PartSpec] = &[
    PartSpec {
        name: "navi31",
        firmware: &[
            "gc_11_0_0_",
            "psp_13_0_0_",
            "smu_13_0_0",
            "sdma_6_0_0",
            "dcn_3_2_0_",
            "vcn_4_0_0",
        ],
        // Masked IP blocks (amdgpu's order: 0 soc21_common, 1 gmc_v11_0,
        // 2 ih_v6_0, 3 psp, 4 smu, 5 dm, 6 gfx_v11_0, 7 sdma_v6_0,
        // 8 vcn_v4_0, 9 jpeg_v4_0, 10 mes_v11_0):
        // - 5 `dm` (the display): Display Core needs VBIOS tables the
        //   model's ROM does not carry (the display-object table, DCE
        //   info, GPIO pins: `bios_parser2_construct()`) and runs command
        //   tables the ROM has none of;
        // - 4 `smu`: `smu_smc_hw_setup()` sends SMU 13.0.0 driver messages
        //   the model's PMFW does not answer yet (SetToolsDramAddr first,
        //   then the PPTable transfers and DPM queries);
        // - 8 `vcn`, 9 `jpeg`: the PSP model does not load VCN firmware
        //   and the model has no VCN rings for their ring tests.
        params: "ip_block_mask=0xfffffccf",
        gfx_target: 110000,
        mcpu: "gfx1100",
        cpu_flags: "",
        // The GC 11 model does not answer the shader-array registers yet:
        // every one reads 0 and Linux counts all 192 CU slots (the RX
        // 7900 XTX has 96 CUs).
        active_cus: None,
    },
    PartSpec {
        name: "mi300x",
        firmware: &[
            "gc_9_4_3_",
            "psp_13_0_6_",
            "smu_13_0_6",
            "sdma_4_4_2",
            "vcn_4_0_3",
        ],
        // Masked IP blocks (amdgpu's order: 0 soc15_common, 1 gmc_v9_0,
        // 2 vega20_ih, 3 psp, 4 smu, 5 gfx_v9_4_3, 6 sdma_v4_4_2,
        // 7 vcn_v4_0_3, 8 jpeg_v4_0_3):
        // - 4 `smu`: `smu_smc_hw_setup()` sends SMU 13.0.6 driver
        //   messages the model's PMFW does not answer yet
        //   (SetToolsDramAddr first, then the metrics table);
        // - 7 `vcn`, 8 `jpeg`: as on navi31, no VCN firmware in the PSP
        //   model and no VCN or JPEG rings.
        params: "ip_block_mask=0xfffffe6f",
        gfx_target: 90402,
        mcpu: "gfx942",
        cpu_flags: "",
        // MI300X: 304 CUs, 38 per XCD (AMD's CDNA3 white paper).
        active_cus: Some(304),
    },
    PartSpec {
        name: "mi210",
        // Aldebaran's blobs are named by chip (`amdgpu_ucode_legacy_naming()`).
        firmware: &["aldebaran_"],
        // Masked IP blocks (amdgpu's order for CHIP_ALDEBARAN: 0
        // soc15_common, 1 gmc_v9_0, 2 vega20_ih, 3 psp, 4 smu, 5 gfx_v9_0,
        // 6 sdma_v4_0, 7 vcn_v2_5, 8 jpeg_v2_5):
        // - 4 `smu`: the model's MP1 13.0.2 answers barebell's messages
        //   only (no SetToolsDramAddr, tables or DPM);
        // - 7 `vcn`, 8 `jpeg`: no VCN in the model.
        // `sdma_v4_0` runs: its five kernel rings on the model's SDMA
        // 4.4.0 engines (amdgpu's VM updates need them).
        params: "ip_block_mask=0xfffffe6f",
        gfx_target: 90010,
        mcpu: "gfx90a",
        // No hypervisor bit: the guest is the bare-metal host an MI210
        // sits in. With it, `amdgpu_detect_virtualization()` sets
        // passthrough mode, and `amdgpu_device_ip_late_init()` takes
        // Aldebaran's passthrough SBR path
        // (`amdgpu_dpm_handle_passthrough_sbr()`), which calls into the
        // masked SMU and oopses.
        cpu_flags: ",-hypervisor",
        // MI210: 104 CUs (AMD's MI210 product specification).
        active_cus: Some(104),
    },
];

/// The cached root: its directory and the kernel ABI unpacked into it.
struct Root {
    dir: PathBuf,
    abi: String,
}

/// The command: boots the guest, prints the report, writes the trace
/// diff; returns the milestone reached.
pub fn run(root: &Path, part: &str, accel: &str, params: Option<&str>, write: bool) -> Result<u32> {
    let spec = PARTS.iter().find(|p| p.name == part).with_context(|| {
        let known: Vec<&str> = PARTS.iter().map(|p| p.name).collect();
        format!(
            "linux-peer knows only {} so far (the model's other parts need their firmware list here first)",
            known.join(", ")
        )
    })?;
    cpu_model(accel)?;
    if output(Command::new("id").arg("-u"))?.trim() != "0" {
        bail!("`cargo xtask linux-peer` builds a chroot and mounts into it: run it as root");
    }
    let base = root.join("target/linux-peer");
    let t = Instant::now();
    let r = ensure_root(&base)?;
    let qemu = check_qemu(&r.dir)?;
    println!(
        "linux peer: {SUITE} root {} ready in {:.1} s; {qemu}; kernel {}",
        r.dir.display(),
        t.elapsed().as_secs_f64(),
        r.abi
    );
    let work = base.join(format!("run-{}", spec.name));
    std::fs::create_dir_all(&work)?;
    let t = Instant::now();
    let params = params.unwrap_or(spec.params);
    let (cpio, summary) = initramfs(root, &r, spec, params)?;
    std::fs::write(work.join("initramfs.cpio"), &cpio)?;
    println!(
        "linux peer: initramfs {} ({summary}, {:.1} MiB) in {:.1} s",
        work.join("initramfs.cpio").display(),
        cpio.len() as f64 / (1024.0 * 1024.0),
        t.elapsed().as_secs_f64()
    );
    let server_bin = build_server(root)?;
    let server = Server::start(&server_bin, spec.name, &work)?;
    let boot = boot(&r, &work, accel, spec.cpu_flags);
    let served = server.finish();
    if boot.is_err()
        && let Ok(s) = &served
    {
        // What the model saw is often why the guest never reported back.
        for l in &s.lines {
            println!("server: {l}");
        }
    }
    let boot = boot?;
    let reached = report(spec, params, &work, &boot, &served?)?;
    let diff = trace_diff(root, spec, write)?;
    println!("linux peer: trace diff {}", diff.display());
    println!(
        "linux peer: {} milestone {} of 5 ({})",
        spec.name, reached.0, reached.1
    );
    Ok(reached.0)
}

/// The milestone each part reaches today (`docs/linux-peer.md`): the CI
/// stage fails when a change leaves a part short of it.
const CI_FLOOR: &[(&str, u32)] = &[("navi31", 5), ("mi300x", 4), ("mi210", 4)];

/// The CI stage: both parts boot (TCG), each reaches at least its
/// [`CI_FLOOR`], and each regenerated trace diff equals the committed
/// `docs/linux-diff-<part>.txt` (so the documented diff cannot go stale:
/// a change that moves it regenerates it with `--write`).
pub fn stage(root: &Path) -> Result<String> {
    let mut done = Vec::new();
    for &(part, floor) in CI_FLOOR {
        let reached = run(root, part, "tcg", None, false)?;
        if reached < floor {
            bail!(
                "{part} reached milestone {reached} of 5, short of the {floor} it reached before; see target/linux-peer/run-{part}/dmesg.txt"
            );
        }
        let spec = PARTS.iter().find(|p| p.name == part);
        let dmesg =
            std::fs::read_to_string(root.join(format!("target/linux-peer/run-{part}/dmesg.txt")))?;
        if let Some(want) = spec.and_then(|s| s.active_cus)
            && active_cus(&dmesg) != Some(want)
        {
            bail!(
                "Linux counted {} active CUs on the {part} model, not the part's {want}; see target/linux-peer/run-{part}/dmesg.txt",
                active_cus(&dmesg).map_or("no".into(), |n| n.to_string())
            );
        }
        let doc = format!("docs/linux-diff-{part}.txt");
        let fresh = std::fs::read_to_string(root.join(format!(
            "target/linux-peer/run-{part}/linux-diff-{part}.txt"
        )))?;
        util::check_committed(
            root,
            &doc,
            &fresh,
            &format!(
                "run `cargo xtask linux-peer --part {part} --write`, explain the change in docs/fidelity.md and commit both"
            ),
        )?;
        done.push(match active_cus(&dmesg) {
            Some(n) => format!("{part} milestone {reached} of 5 ({n} CUs)"),
            None => format!("{part} milestone {reached} of 5"),
        });
    }
    Ok(format!(
        "{}; the trace diffs match docs/linux-diff-*.txt",
        done.join(", ")
    ))
}

/// The CU count amdgpu logs (`"SE %d, SH per SE %d, CU per SH %d,
/// active_cu_number %d"`, `amdgpu_device_init()`), if it did.
fn active_cus(dmesg: &str) -> Option<u32> {
    dmesg
        .lines()
        .find_map(|l| l.split_once("active_cu_number ")?.1.trim().parse().ok())
}

/// The mapping barebell's side of the diff uses: Linux's own on the part
/// (MES on gfx11, the HWS runlist on GC 9.4.3 with `sched_policy` 0).
fn mapping(spec: &PartSpec) -> Option<&'static str> {
    match spec.gfx_target {
        // GC 9.4.2: Linux does not finish its probe on the model yet
        // (docs/linux-peer.md), so there is no diff to keep.
        90010 => None,
        t if t / 10000 == 9 => Some("hws"),
        _ => Some("mes"),
    }
}

/// The reference trace diff: the server's raw trace named with the
/// part's tables (`barebell trace name`), barebell's own bring-up traced
/// on the same part (`barebell bringup --trace`, Linux's mapping), and
/// `barebell trace diff` of the two. It goes to the run directory, or with
/// `write` to `docs/linux-diff-<part>.txt`. Paths are relative to the
/// repository so that the diff's header does not depend on where it is.
fn trace_diff(root: &Path, spec: &PartSpec, write: bool) -> Result<PathBuf> {
    let barebell = root.join("target/release/barebell");
    let work = PathBuf::from(format!("target/linux-peer/run-{}", spec.name));
    let asic_reg = crate::headers::ensure(root)?.amd().join("include/asic_reg");
    let capture = |args: &[&std::ffi::OsStr], to: &Path| -> Result<()> {
        let o = Command::new(&barebell)
            .current_dir(root)
            .args(args)
            .output()
            .with_context(|| format!("could not start {}", barebell.display()))?;
        if !o.status.success() {
            bail!(
                "barebell {:?} failed:\n{}",
                args,
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::fs::write(root.join(to), &o.stdout)?;
        Ok(())
    };
    let linux = work.join("linux-named.txt");
    let ours = work.join("barebell.txt");
    let os = |s: &str| std::ffi::OsString::from(s);
    capture(
        &[
            os("trace").as_os_str(),
            os("name").as_os_str(),
            os("--part").as_os_str(),
            os(spec.name).as_os_str(),
            os("--headers").as_os_str(),
            asic_reg.as_os_str(),
            work.join("trace.txt").as_os_str(),
        ],
        &linux,
    )?;
    let mut ours_args = vec![os("bringup"), os("--part"), os(spec.name)];
    if let Some(m) = mapping(spec) {
        ours_args.extend([os("--mapping"), os(m)]);
    }
    ours_args.push(os("--trace"));
    let ours_args: Vec<&std::ffi::OsStr> = ours_args.iter().map(|a| a.as_os_str()).collect();
    capture(&ours_args, &ours)?;
    let to = if write {
        PathBuf::from(format!("docs/linux-diff-{}.txt", spec.name))
    } else {
        work.join(format!("linux-diff-{}.txt", spec.name))
    };
    capture(
        &[
            os("trace").as_os_str(),
            os("diff").as_os_str(),
            ours.as_os_str(),
            linux.as_os_str(),
        ],
        &to,
    )?;
    Ok(root.join(to))
}

/// The guest's KFD test client (`vfio-peer/guest/kfd_dispatch.c`), built
/// static with the host's C compiler against Linux 6.12's uapi
/// `kfd_ioctl.h` (raw uapi headers: `__user` is defined empty, as
/// `headers_install` would strip it).
fn kfd_client(root: &Path) -> Result<Vec<u8>> {
    let uapi = crate::headers::ensure(root)?.uapi();
    let out = root.join("target/linux-peer/kfd_dispatch");
    util::run(
        Command::new("gcc")
            .args(["-static", "-O2", "-Wall", "-Wextra", "-Werror", "-D__user="])
            .arg("-I")
            .arg(&uapi)
            .arg("-o")
            .arg(&out)
            .arg(root.join("vfio-peer/guest/kfd_dispatch.c")),
    )
    .context("building the guest's KFD test client")?;
    Ok(std::fs::read(&out)?)
}

/// `gpu-kernels/kernels/latency.cl` built for `mcpu` with the flags
/// `gpu-kernels/build.rs` uses (clang-19, code object v5). Built here,
/// not taken from that crate: xtask must build before `cargo xtask ci`
/// installs clang-19 on a fresh machine.
fn code_object(root: &Path, mcpu: &str) -> Result<Vec<u8>> {
    let out = root.join(format!("target/linux-peer/latency-{mcpu}.co"));
    util::run(
        Command::new("clang-19")
            .args(["-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O2"])
            .arg(format!("-mcpu={mcpu}"))
            .arg("-mcode-object-version=5")
            .args(["-x", "cl"])
            .arg(root.join("gpu-kernels/kernels/latency.cl"))
            .arg("-o")
            .arg(&out),
    )
    .context("building the guest's kernel with clang-19")?;
    Ok(std::fs::read(&out)?)
}

/// A code object's loadable segments laid out at their virtual addresses
/// (the layout a loader gives them, so the kernel descriptor's
/// `kernel_code_entry_byte_offset` still reaches the code), after an
/// 8-byte little-endian header: the offset of `symbol` (the kernel
/// descriptor) in the image.
fn kernel_image(elf: &[u8], symbol: &str) -> Result<Vec<u8>> {
    use object::{Object, ObjectSegment, ObjectSymbol};
    let file = object::File::parse(elf).context("parsing the kernel's code object")?;
    let kd = file
        .symbols()
        .find(|s| s.name() == Ok(symbol))
        .with_context(|| format!("the code object has no symbol {symbol}"))?
        .address();
    let mut image = Vec::new();
    for seg in file.segments() {
        let data = seg.data().context("reading a segment")?;
        let (at, len) = (
            usize::try_from(seg.address())?,
            usize::try_from(seg.size())?,
        );
        if image.len() < at + len {
            image.resize(at + len, 0);
        }
        image[at..at + data.len()].copy_from_slice(data);
    }
    if usize::try_from(kd)? + 64 > image.len() {
        bail!("{symbol} lies outside the code object's segments");
    }
    let mut out = kd.to_le_bytes().to_vec();
    out.extend_from_slice(&image);
    Ok(out)
}

/// Builds `barebell-vfio-user` (release: every guest register access is
/// one model call).
fn build_server(root: &Path) -> Result<PathBuf> {
    let t = Instant::now();
    util::run(util::cargo().current_dir(root).args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "barebell-vfio-peer",
        "-p",
        "barebell-cli",
    ]))?;
    println!(
        "linux peer: barebell-vfio-user and barebell built in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    Ok(root.join("target/release/barebell-vfio-user"))
}

/// The running server and where its output goes.
struct Server {
    child: std::process::Child,
    log: PathBuf,
    trace: PathBuf,
}

impl Server {
    /// Starts the server for `part` on the run directory's socket and
    /// waits (bounded) until it listens.
    fn start(bin: &Path, part: &str, work: &Path) -> Result<Server> {
        let socket = work.join(SOCKET);
        if socket.exists() {
            std::fs::remove_file(&socket)?;
        }
        let log = work.join("server.log");
        let trace = work.join("trace.txt");
        let mut child = Command::new(bin)
            .args(["--part", part, "--socket"])
            .arg(&socket)
            .arg("--trace")
            .arg(&trace)
            .arg("--firmware-log")
            .arg(work.join("firmware.txt"))
            .stdin(Stdio::null())
            .stdout(File::create(&log)?)
            .stderr(std::process::Stdio::from(File::create(
                work.join("server-stderr.log"),
            )?))
            .spawn()
            .with_context(|| format!("could not start {}", bin.display()))?;
        let t = Instant::now();
        while !socket.exists() {
            if let Some(status) = child.try_wait()? {
                let err =
                    std::fs::read_to_string(work.join("server-stderr.log")).unwrap_or_default();
                bail!(
                    "the vfio-user server exited ({status}) before listening: {}",
                    err.trim()
                );
            }
            if t.elapsed().as_secs() > SERVER_START_SECS {
                let _ = child.kill();
                bail!("the vfio-user server did not listen within {SERVER_START_SECS} s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        println!(
            "linux peer: model {part} served on {} after {:.1} s (trace {})",
            socket.display(),
            t.elapsed().as_secs_f64(),
            trace.display()
        );
        Ok(Server { child, log, trace })
    }

    /// Waits (bounded) for the server to end once QEMU has gone; its
    /// summary lines.
    fn finish(mut self) -> Result<Served> {
        let t = Instant::now();
        while self.child.try_wait()?.is_none() {
            if t.elapsed().as_secs() > 30 {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        Ok(Served {
            lines: text.lines().map(str::to_string).collect(),
            trace: self.trace,
        })
    }
}

/// What the server reported.
struct Served {
    lines: Vec<String>,
    trace: PathBuf,
}

/// What one boot left.
struct Boot {
    serial: PathBuf,
    text: String,
    secs: f64,
    status: String,
}

/// Builds the root unless a finished one is cached.
fn ensure_root(base: &Path) -> Result<Root> {
    let dir = base.join(SUITE);
    if dir.join(STAMP).exists() {
        let abi = std::fs::read_to_string(dir.join(KERNEL_ABI_FILE))
            .with_context(|| format!("{} has no kernel record", dir.display()))?;
        return Ok(Root {
            dir,
            abi: abi.trim().to_string(),
        });
    }
    let tmp = base.join(format!("{SUITE}.partial"));
    let mirror = crate::apt::host_bookworm_mirror()
        .unwrap_or_else(|| "http://deb.debian.org/debian".to_string());
    let t = Instant::now();
    debootstrap("linux peer", SUITE, &[], &tmp, &mirror)?;
    println!(
        "linux peer: debootstrap {SUITE} done in {:.0} s",
        t.elapsed().as_secs_f64()
    );
    let security = mirror.replace("/debian", "/debian-security");
    let comps = "main non-free-firmware";
    std::fs::write(
        tmp.join("etc/apt/sources.list"),
        format!(
            "deb {mirror} {SUITE} {comps}\ndeb {mirror} {SUITE}-updates {comps}\n\
             deb {security} {SUITE}-security {comps}\ndeb {mirror} {SUITE}-backports {comps}\n"
        ),
    )?;
    std::fs::copy("/etc/resolv.conf", tmp.join("etc/resolv.conf"))
        .context("copying /etc/resolv.conf into the root")?;
    let t = Instant::now();
    apt(&tmp, &["update", "-q"])?;
    let mut install = vec!["install", "-y", "-q", "--no-install-recommends"];
    install.extend_from_slice(ROOT_PACKAGES);
    apt(&tmp, &install)?;
    // QEMU from trixie-backports: trixie's own is 10.0, before vfio-user.
    apt(
        &tmp,
        &[
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
            "-t",
            &format!("{SUITE}-backports"),
            "qemu-system-x86",
        ],
    )?;
    println!(
        "linux peer: packages installed in {:.0} s",
        t.elapsed().as_secs_f64()
    );
    check_qemu(&tmp)?;
    let abi = install_kernel(&tmp)?;
    std::fs::create_dir_all(tmp.join(MNT.trim_start_matches('/')))?;
    std::fs::write(tmp.join(KERNEL_ABI_FILE), &abi)?;
    std::fs::write(tmp.join(STAMP), "")?;
    if dir.exists() {
        refuse_if_mounted(&dir)?;
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::rename(&tmp, &dir)?;
    Ok(Root { dir, abi })
}

/// `chroot <root> <args>`, for commands that need no mounts.
fn chroot(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("chroot");
    c.arg(root)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive");
    c
}

fn apt(root: &Path, args: &[&str]) -> Result<()> {
    // No pty in the chroot: dpkg's log would complain on every install.
    let mut full = vec!["apt-get", "-o", "Dpkg::Use-Pty=0"];
    full.extend_from_slice(args);
    util::run(chroot(root, &full).stdout(Stdio::null()))
        .with_context(|| format!("apt-get {} in the {SUITE} root", args.join(" ")))
}

/// The root's QEMU, checked: at least [`QEMU_MIN`], with `vfio-user-pci`.
fn check_qemu(root: &Path) -> Result<String> {
    let v = output(&mut chroot(root, &["qemu-system-x86_64", "--version"]))?;
    let first = v.lines().next().unwrap_or("").trim().to_string();
    let have = qemu_version(&first).with_context(|| format!("no version in {first:?}"))?;
    if have < QEMU_MIN {
        bail!(
            "the root's QEMU is {}.{}; vfio-user-pci needs {}.{} or newer ({SUITE}-backports)",
            have.0,
            have.1,
            QEMU_MIN.0,
            QEMU_MIN.1
        );
    }
    let num = format!("{}.{}", have.0, have.1);
    let devices = output(&mut chroot(
        root,
        &["qemu-system-x86_64", "-device", "help"],
    ))?;
    if !devices.contains("name \"vfio-user-pci\"") {
        bail!("the root's QEMU {num} lists no vfio-user-pci device");
    }
    Ok(format!("{first} (has vfio-user-pci)"))
}

/// (major, minor) from `qemu-system-x86_64 --version`'s first line.
fn qemu_version(first_line: &str) -> Option<(u32, u32)> {
    let num = first_line
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?;
    let mut parts = num.split('.').map(|x| x.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

/// Unpacks the generic flavour of the kernel `linux-image-amd64` points
/// at (a 6.12) into the root, without running its maintainer scripts (no
/// initramfs-tools), and builds its modules.dep. Returns the ABI.
fn install_kernel(root: &Path) -> Result<String> {
    let deps = output(&mut chroot(
        root,
        &["apt-cache", "depends", "--important", "linux-image-amd64"],
    ))?;
    let signed = deps
        .lines()
        .find_map(|l| l.trim().strip_prefix("Depends: linux-image-"))
        .context("linux-image-amd64 depends on no linux-image package")?
        .trim()
        .to_string();
    if !signed.starts_with("6.12.") {
        bail!("the root's linux-image-amd64 is {signed}, not a 6.12 kernel");
    }
    let pkg = format!("linux-image-{signed}-unsigned");
    let debs = root.join("var/cache/barebell-debs");
    std::fs::create_dir_all(&debs)?;
    util::run(chroot(
        root,
        &[
            "sh",
            "-c",
            &format!("cd /var/cache/barebell-debs && apt-get download -q -o APT::Sandbox::User=root {pkg}"),
        ],
    )
    .stdout(Stdio::null()))
    .with_context(|| format!("apt-get download {pkg}"))?;
    let deb = std::fs::read_dir(&debs)?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&pkg) && n.ends_with(".deb"))
        })
        .with_context(|| format!("apt-get download left no {pkg} .deb"))?;
    util::run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(root))?;
    std::fs::remove_file(&deb)?;
    util::run(&mut chroot(root, &["depmod", &signed])).context("depmod in the root")?;
    println!("linux peer: kernel {pkg} unpacked into the root");
    Ok(signed)
}

/// The modules `amdgpu` needs, amdgpu last, as paths inside the root.
fn module_chain(r: &Root) -> Result<Vec<String>> {
    let text = output(&mut chroot(
        &r.dir,
        &["modprobe", "--show-depends", "-S", &r.abi, "amdgpu"],
    ))
    .context("modprobe --show-depends amdgpu in the root")?;
    let mods: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("insmod "))
        .map(|p| p.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    if !mods.last().is_some_and(|m| m.contains("/amdgpu.ko")) {
        bail!("modprobe --show-depends did not end with amdgpu.ko:\n{text}");
    }
    Ok(mods)
}

/// One module's bytes, unpacked by the root's xz when compressed.
fn module_bytes(r: &Root, path: &str) -> Result<Vec<u8>> {
    if path.ends_with(".xz") {
        let out = chroot(&r.dir, &["xz", "-dc", path])
            .output()
            .with_context(|| format!("xz -dc {path}"))?;
        if !out.status.success() {
            bail!(
                "xz -dc {path} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        return Ok(out.stdout);
    }
    let rel = path.trim_start_matches('/');
    std::fs::read(r.dir.join(rel)).with_context(|| format!("reading {path} in the root"))
}

/// The part's blobs from the root's firmware-amd-graphics, by name.
fn firmware(r: &Root, spec: &PartSpec) -> Result<Vec<(String, Vec<u8>)>> {
    let dir = r.dir.join("usr/lib/firmware/amdgpu");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("{} (firmware-amd-graphics)", dir.display()))?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| spec.firmware.iter().any(|p| n.starts_with(p)))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for prefix in spec.firmware {
        if !names.iter().any(|n| n.starts_with(prefix)) {
            bail!("firmware-amd-graphics in the root has no amdgpu/{prefix}* blob");
        }
    }
    for n in names {
        let mut p = dir.join(&n);
        // An absolute link names a path inside the root, not the host's.
        if let Ok(target) = std::fs::read_link(&p) {
            p = if target.is_absolute() {
                r.dir.join(target.strip_prefix("/").unwrap_or(&target))
            } else {
                dir.join(target)
            };
        }
        let data = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        out.push((n, data));
    }
    Ok(out)
}

/// The guest's `/init`: load the modules in order, report, power off.
fn init_script(amdgpu_file: &str, params: &str) -> String {
    format!(
        r#"#!/bin/busybox sh
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox --install -s /bin
up() {{ cut -d' ' -f1 /proc/uptime; }}
echo "{TAG}userspace up: kernel $(uname -r), $(up) s after boot"
for m in /mods/*.ko; do
  args=""
  [ "$m" = "/mods/{amdgpu_file}" ] && args="{params}"
  # amdgpu's error path can wait out device timeouts for minutes (16 s
  # per register it cannot flush): report after {AMDGPU_WAIT_SECS} s whatever it does.
  insmod "$m" $args &
  pid=$!
  n=0
  while kill -0 $pid 2>/dev/null && [ $n -lt {AMDGPU_WAIT_SECS} ]; do sleep 1; n=$((n+1)); done
  if kill -0 $pid 2>/dev/null; then echo "{TAG}insmod ${{m#/mods/}} still running after {AMDGPU_WAIT_SECS} s; reporting now"
  elif wait $pid; then echo "{TAG}insmod ${{m#/mods/}} ok"
  else echo "{TAG}insmod ${{m#/mods/}} FAILED"; fi
done
if grep -q '^amdgpu ' /proc/modules; then
  echo "{TAG}amdgpu loaded, $(up) s after boot"
  # amdgpu_debugfs_test_ib_show(): amdgpu_ib_ring_tests() on every ring,
  # "ib ring tests passed." or "ib ring tests failed (r)."; bounded.
  mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
  for t in /sys/kernel/debug/dri/*/amdgpu_test_ib; do
    [ -e "$t" ] || continue
    timeout {IB_TEST_SECS} cat "$t" | while read -r l; do echo "{TAG}ib test: $l"; done
    break
  done
  # The KFD topology (kfd_topology.c's sysfs properties).
  for n in /sys/class/kfd/kfd/topology/nodes/*; do
    [ -e "$n/properties" ] || continue
    echo "{TAG}kfd node ${{n##*/}} $(grep '^gfx_target_version ' $n/properties)"
  done
  # Milestone 5: a KFD AQL queue and one dispatch (kfd_dispatch.c),
  # bounded, on the first GPU node (node 0 is the CPU).
  if [ -e /sys/class/kfd/kfd/topology/nodes/1/gpu_id ]; then
    timeout {DISPATCH_SECS} /bin/kfd_dispatch 1 /kernel.bin 2>&1 | while read -r l; do echo "{TAG}$l"; done
  fi
else
  echo "{TAG}amdgpu NOT loaded"
fi
if [ -d /sys/bus/pci/drivers/amdgpu ]; then
  echo "{TAG}pci driver amdgpu registered, bound to: $(ls /sys/bus/pci/drivers/amdgpu | grep -c '^0000:') devices"
fi
for d in /sys/bus/pci/devices/*; do
  drv=none
  [ -e $d/driver ] && drv=$(basename $(readlink $d/driver))
  echo "{TAG}pci ${{d##*/}} $(cat $d/vendor):$(cat $d/device) class $(cat $d/class) driver $drv"
done
echo "{TAG}display-class pci functions: $(cat /sys/bus/pci/devices/*/class | grep -c '^0x03')"
echo "{TAG}dmesg amdgpu begin"
dmesg | grep -i amdgpu
echo "{TAG}dmesg amdgpu end"
echo "{TAG}dmesg begin"
dmesg
echo "{TAG}dmesg end"
echo "{TAG}done"
# Mark where the driver's shutdown begins in the server's trace: one
# config write of {TEARDOWN_MARK:#04x} to the cache line size register of
# each display function (`barebell trace name` turns it into the
# teardown marker `trace diff` keeps apart).
for d in /sys/bus/pci/devices/*; do
  case "$(cat $d/class)" in 0x03*) printf '\{TEARDOWN_MARK:03o}' | dd of=$d/config bs=1 seek=12 count=1 conv=notrunc 2>/dev/null;; esac
done
# An oops in amdgpu's probe can leave the device lock held, and power-off
# then waits on it in device_shutdown(): after 5 s, reboot with no device
# shutdown (sysrq b), which QEMU's -no-reboot turns into an exit.
(sleep 5; echo b > /proc/sysrq-trigger) &
poweroff -f
"#
    )
}

/// The initramfs: busybox, `/init`, the modules (`/mods/NN-name.ko`, in
/// load order) and the part's firmware. Returns it and a summary.
fn initramfs(root: &Path, r: &Root, spec: &PartSpec, params: &str) -> Result<(Vec<u8>, String)> {
    let mods = module_chain(r)?;
    let fw = firmware(r, spec)?;
    let client = kfd_client(root)?;
    let kernel = kernel_image(&code_object(root, spec.mcpu)?, "empty.kd")?;
    let mut out = Vec::new();
    let mut ino = 1u32;
    for d in [
        "bin",
        "dev",
        "proc",
        "sys",
        "mods",
        "lib",
        "lib/firmware",
        "lib/firmware/amdgpu",
    ] {
        cpio_entry(&mut out, ino, d, 0o040_755, &[]);
        ino += 1;
    }
    let busybox = r.dir.join("usr/bin/busybox");
    let bb = std::fs::read(&busybox)
        .with_context(|| format!("reading {} (busybox-static)", busybox.display()))?;
    cpio_entry(&mut out, ino, "bin/busybox", 0o100_755, &bb);
    ino += 1;
    cpio_entry(&mut out, ino, "bin/kfd_dispatch", 0o100_755, &client);
    ino += 1;
    cpio_entry(&mut out, ino, "kernel.bin", 0o100_644, &kernel);
    ino += 1;
    let mut amdgpu_file = String::new();
    for (i, m) in mods.iter().enumerate() {
        let base = Path::new(m)
            .file_name()
            .and_then(|n| n.to_str())
            .context("module path has no file name")?;
        let name = format!("{i:02}-{}", base.trim_end_matches(".xz"));
        if base.starts_with("amdgpu.ko") {
            amdgpu_file.clone_from(&name);
        }
        let data = module_bytes(r, m)?;
        cpio_entry(&mut out, ino, &format!("mods/{name}"), 0o100_644, &data);
        ino += 1;
    }
    cpio_entry(
        &mut out,
        ino,
        "init",
        0o100_755,
        init_script(&amdgpu_file, params).as_bytes(),
    );
    ino += 1;
    for (n, data) in &fw {
        cpio_entry(
            &mut out,
            ino,
            &format!("lib/firmware/amdgpu/{n}"),
            0o100_644,
            data,
        );
        ino += 1;
    }
    cpio_entry(&mut out, 0, "TRAILER!!!", 0, &[]);
    let summary = format!(
        "busybox, the KFD test client, {} modules ending in amdgpu, {} {} blobs",
        mods.len(),
        fw.len(),
        spec.name
    );
    Ok((out, summary))
}

/// Mounts `/dev` and `/proc` and the run directory (at [`MNT`]) into the
/// root inside the command's private mount namespace, then runs the
/// command in the root. Arguments: root, run directory, command...
const INNER: &str = r#"set -eu
R=$1 W=$2
shift 2
mount --rbind /dev "$R/dev"
mount -t proc proc "$R/proc"
mount --bind "$W" "$R$MNT"
exec chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
"#;

/// The CPU model for `accel`: `max` under TCG, the host's under KVM.
fn cpu_model(accel: &str) -> Result<&'static str> {
    match accel {
        "tcg" => Ok("max"),
        "kvm" => Ok("host"),
        other => bail!("--accel is tcg or kvm, not {other}"),
    }
}

/// The mount propagation the run's namespace gets. "private" where `/`
/// is a mount point (a machine's own root). Inside a chroot whose root is
/// not one (the fresh-machine check runs CI so), unshare cannot change
/// `/`'s propagation (EINVAL), so the namespace keeps what it inherits,
/// which is safe only when no mount it can see is shared with another
/// namespace (the fresh check's own namespace is private): checked here
/// from `/proc/self/mountinfo`'s optional fields.
pub(crate) fn propagation() -> Result<&'static str> {
    let info =
        std::fs::read_to_string("/proc/self/mountinfo").context("reading /proc/self/mountinfo")?;
    let fields = |l: &str| -> Option<(String, bool)> {
        let (head, _) = l.split_once(" - ")?;
        let mut it = head.split_whitespace();
        let target = it.nth(4)?.to_string();
        let shared = it.skip(1).any(|f| f.starts_with("shared:"));
        Some((target, shared))
    };
    let mounts: Vec<(String, bool)> = info.lines().filter_map(fields).collect();
    if mounts.iter().any(|(t, _)| t == "/") {
        return Ok("private");
    }
    if let Some((t, _)) = mounts.iter().find(|(_, shared)| *shared) {
        bail!(
            "running in a chroot whose root is not a mount point, and {t} is a shared mount:              the run's mounts could reach another namespace; run it from a private mount              namespace (as `cargo xtask fresh` does) or on the machine's own root"
        );
    }
    Ok("unchanged")
}

/// Boots the guest under the root's QEMU with the model attached; the
/// serial console goes to `serial.log` in `work`.
fn boot(r: &Root, work: &Path, accel: &str, cpu_flags: &str) -> Result<Boot> {
    let cpu = format!("{}{cpu_flags}", cpu_model(accel)?);
    let serial = work.join("serial.log");
    let stderr_log = work.join("qemu-stderr.log");
    let vmlinuz = format!("/boot/vmlinuz-{}", r.abi);
    let device = format!(
        r#"{{"driver":"vfio-user-pci","bus":"rp0","socket":{{"path":"{MNT}/{SOCKET}","type":"unix"}}}}"#
    );
    let qemu: Vec<String> = [
        "qemu-system-x86_64",
        "-accel",
        accel,
        "-cpu",
        &cpu,
        // Guest RAM in a shareable memfd: a vfio-user server receives it
        // as fds in DMA_MAP (the rust-vmm server has no DMA_READ/WRITE).
        "-object",
        "memory-backend-memfd,id=mem,size=2G,share=on",
        "-machine",
        "q35,memory-backend=mem",
        "-m",
        "2G",
        "-smp",
        "1",
        "-nic",
        "none",
        // No emulated VGA: the only display function will be the model's.
        "-vga",
        "none",
        "-display",
        "none",
        "-monitor",
        "none",
        "-serial",
        "stdio",
        "-no-reboot",
        // The model behind a PCIe root port, as a discrete GPU sits.
        "-device",
        "pcie-root-port,id=rp0,bus=pcie.0,chassis=1,slot=1",
        "-device",
        &device,
        "-kernel",
        &vmlinuz,
        "-initrd",
        &format!("{MNT}/initramfs.cpio"),
        "-append",
        CMDLINE,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    println!(
        "linux peer: booting (accel {accel}, bounded to {BOOT_BOUND_SECS} s): {}",
        qemu.join(" ")
    );
    let propagation = propagation()?;
    let t = Instant::now();
    // timeout ends setpriv/unshare; unshare's --kill-child then ends QEMU
    // and the namespace's mounts go with it.
    let status = Command::new("timeout")
        .args(["--kill-after=10", &BOOT_BOUND_SECS.to_string()])
        .args(["setpriv", "--pdeathsig", "KILL", "unshare", "--mount"])
        .args([
            "--propagation",
            propagation,
            "--pid",
            "--fork",
            "--kill-child",
        ])
        .args(["--", "bash", "-c", INNER, "inner"])
        .arg(&r.dir)
        .arg(work)
        .args(&qemu)
        .env("MNT", MNT)
        .stdin(Stdio::null())
        .stdout(File::create(&serial)?)
        .stderr(File::create(&stderr_log)?)
        .status()
        .context("could not start timeout/setpriv/unshare (coreutils, util-linux)")?;
    let secs = t.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&std::fs::read(&serial)?).into_owned();
    let status = match status.code() {
        Some(124) => format!("killed after the {BOOT_BOUND_SECS} s bound"),
        Some(c) => format!("exit {c}"),
        None => "killed by a signal".to_string(),
    };
    if !text.contains(&format!("{TAG}done")) {
        let err = std::fs::read_to_string(&stderr_log).unwrap_or_default();
        bail!(
            "the guest never reported back (QEMU {status} after {secs:.0} s; {}); serial log {}",
            err.trim(),
            serial.display()
        );
    }
    Ok(Boot {
        serial,
        text,
        secs,
        status,
    })
}

/// The lines between `<TAG><what> begin` and `<TAG><what> end`.
fn section<'a>(text: &'a str, what: &str) -> Vec<&'a str> {
    let begin = format!("{TAG}{what} begin");
    let end = format!("{TAG}{what} end");
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .skip_while(|l| *l != begin)
        .skip(1)
        .take_while(|l| *l != end)
        .collect()
}

/// What a run shows: the guest's `dmesg` (Linux 6.12's own prints), the
/// lines its `/init` reported (tag stripped), and the part's expected KFD
/// `gfx_target_version`.
struct Evidence<'a> {
    dmesg: &'a str,
    guest: &'a str,
    gfx_target: u32,
}

/// A milestone the issue sets: its number, its name, and whether a run
/// shows it reached.
type Milestone = (u32, &'static str, fn(&Evidence<'_>) -> bool);

/// The milestones this command can recognise yet, in order; a run past
/// them says so.
const MILESTONES: &[Milestone] = &[
    (
        1,
        "amdgpu probes and parses the model's discovery table",
        |e| discovery_parsed(e.dmesg),
    ),
    (2, "GMC, IH and PSP are up", |e| gmc_ih_psp_up(e.dmesg)),
    (
        3,
        "the ring and IB tests pass for the compute rings, the KIQ/MES and SDMA",
        ring_and_ib_tests_pass,
    ),
    (
        4,
        "the KFD topology node appears with the right gfx target",
        kfd_node_up,
    ),
    (
        5,
        "a KFD compute queue is created and an AQL dispatch completes",
        |e| {
            e.guest
                .lines()
                .any(|l| l.starts_with("kfd dispatch: completed"))
        },
    ),
];

/// amdgpu_pci_probe() registered the DRM device ("[drm] Initialized
/// amdgpu"), which it does only after every block's hw_init returned 0,
/// their ring tests included (amdgpu_ring_test_helper()), and the guest's
/// run of amdgpu_ib_ring_tests() through debugfs printed "ib ring tests
/// passed." with no ring or IB test failing in dmesg.
fn ring_and_ib_tests_pass(e: &Evidence<'_>) -> bool {
    e.dmesg.contains("[drm] Initialized amdgpu")
        && e.guest
            .lines()
            .any(|l| l.trim_end() == "ib test: ib ring tests passed.")
        && !["test failed", "IB test failed on"]
            .iter()
            .any(|f| e.dmesg.contains(f))
}

/// kfd_topology_add_device() printed its node ("Topology: Add dGPU
/// node") and the node's sysfs properties give the part's
/// `gfx_target_version`.
fn kfd_node_up(e: &Evidence<'_>) -> bool {
    let want = format!("gfx_target_version {}", e.gfx_target);
    e.dmesg.contains("Topology: Add dGPU node")
        && e.guest
            .lines()
            .any(|l| l.starts_with("kfd node ") && l.trim_end().ends_with(&want))
}

/// amdgpu_device_ip_block_add() printed the first block that
/// amdgpu_discovery_set_ip_blocks() chose from the table, and no
/// discovery error says the table was refused as a whole (an IP version
/// it needs missing or unknown, amdgpu_discovery_set_*_ip_blocks(); bad
/// signatures, amdgpu_discovery_init()).
fn discovery_parsed(dmesg: &str) -> bool {
    dmesg.contains("add ip block number 0 <")
        && ![
            "ip block(",
            "invalid ip discovery",
            "get invalid ip discovery binary signature",
        ]
        .iter()
        .any(|f| dmesg.contains(f))
}

/// amdgpu_device_ip_init() runs GMC's hw_init with the software init
/// (its "PCIE GART of ... enabled" line, gmc_v11_0_gart_enable() and
/// gmc_v9_0_gart_enable()), then phase 1 (COMMON, IH), then
/// amdgpu_device_fw_loading() (the PSP's hw_init), then phase 2: any
/// phase-2 block's hw_init line shows the three before it returned 0.
fn gmc_ih_psp_up(dmesg: &str) -> bool {
    const PHASE1_AND_PSP: &[&str] = &["common>", "<ih", "<vega20_ih>", "<psp>", "<gmc"];
    let failed = dmesg.lines().any(|l| {
        l.contains("hw_init of IP block <") && PHASE1_AND_PSP.iter().any(|b| l.contains(b))
    }) || dmesg.contains("PSP firmware loading failed");
    // A phase-2 block's failure names it; a probe that finished
    // (amdgpu_pci_probe()'s "[drm] Initialized amdgpu") ran them all.
    let phase2 = dmesg.lines().any(|l| {
        l.contains("hw_init of IP block <") && !PHASE1_AND_PSP.iter().any(|b| l.contains(b))
    }) || dmesg.contains("SMU is initialized successfully")
        || dmesg.contains("[drm] Initialized amdgpu");
    dmesg.contains("PCIE GART of ") && !failed && phase2
}

/// The last milestone a run shows reached, in order.
fn milestone(e: &Evidence<'_>) -> (u32, &'static str) {
    let mut reached = (0, "guest boots and loads amdgpu");
    for &(n, name, shown) in MILESTONES {
        if !shown(e) {
            break;
        }
        reached = (n, name);
    }
    reached
}

/// amdgpu's error lines in `dmesg`, first first: where the probe stopped.
fn amdgpu_errors(dmesg: &[&str]) -> Vec<String> {
    dmesg
        .iter()
        .filter(|l| l.contains("amdgpu"))
        .filter(|l| {
            let low = l.to_lowercase();
            ["error", "failed", "unable", "fatal", "invalid"]
                .iter()
                .any(|w| low.contains(w))
        })
        .map(|l| l.to_string())
        .collect()
}

/// Saves the guest's dmesg and prints the result and the milestone line.
fn report(
    spec: &PartSpec,
    params: &str,
    work: &Path,
    boot: &Boot,
    served: &Served,
) -> Result<(u32, &'static str)> {
    let dmesg = section(&boot.text, "dmesg");
    let dmesg_path = work.join("dmesg.txt");
    std::fs::write(&dmesg_path, dmesg.join("\n") + "\n")?;
    for l in boot.text.lines().map(|l| l.trim_end_matches('\r')) {
        if let Some(rest) = l.strip_prefix(TAG)
            && !rest.starts_with("dmesg")
            && !rest.starts_with("done")
        {
            println!("guest: {rest}");
        }
    }
    for l in section(&boot.text, "dmesg amdgpu") {
        println!("guest dmesg: {l}");
    }
    for l in &served.lines {
        println!("server: {l}");
    }
    println!("linux peer: kernel parameters: {CMDLINE}");
    println!("linux peer: amdgpu parameters: {params:?}");
    println!("linux peer: serial log {}", boot.serial.display());
    println!("linux peer: guest dmesg {}", dmesg_path.display());
    println!("linux peer: server trace {}", served.trace.display());
    println!("linux peer: QEMU {} after {:.1} s", boot.status, boot.secs);
    for want in ["amdgpu loaded", "pci driver amdgpu registered"] {
        if !boot.text.contains(&format!("{TAG}{want}")) {
            bail!(
                "the guest did not report \"{want}\"; see {}",
                boot.serial.display()
            );
        }
    }
    let all = dmesg.join("\n");
    let guest: String = boot
        .text
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix(TAG))
        .collect::<Vec<_>>()
        .join("\n");
    let (n, name) = milestone(&Evidence {
        dmesg: &all,
        guest: &guest,
        gfx_target: spec.gfx_target,
    });
    if let Some(n) = active_cus(&all) {
        println!("linux peer: Linux counts {n} active CUs");
    }
    for e in amdgpu_errors(&dmesg).iter().take(12) {
        println!("linux peer: amdgpu error: {e}");
    }
    Ok((n, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cu_count_is_read_from_amdgpus_line() {
        let line = "[   26.5] amdgpu 0000:01:00.0: amdgpu: SE 8, SH per SE 1, CU per SH 16, active_cu_number 104";
        assert_eq!(active_cus(line), Some(104));
        assert_eq!(active_cus("[ 1.0] amdgpu: Topology: Add CPU node"), None);
    }

    #[test]
    fn qemu_versions_compare_against_the_vfio_user_minimum() {
        // The first lines of bookworm-backports' and trixie-backports'
        // `qemu-system-x86_64 --version`, as measured.
        let bookworm = "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)";
        let trixie_bpo = "QEMU emulator version 11.1.3 (Debian 1:11.1.3+ds-2~bpo13+1)";
        assert_eq!(qemu_version(bookworm), Some((10, 0)));
        assert_eq!(qemu_version(trixie_bpo), Some((11, 1)));
        assert!(qemu_version(bookworm).is_some_and(|v| v < QEMU_MIN));
        assert!(qemu_version(trixie_bpo).is_some_and(|v| v >= QEMU_MIN));
        assert_eq!(qemu_version("QEMU emulator version x"), None);
    }

    #[test]
    fn a_section_is_the_lines_between_its_markers() {
        let text = "boot noise\r\nLINUX-PEER: dmesg begin\r\n[ 1.0] a\r\n[ 2.0] b\r\n\
                    LINUX-PEER: dmesg end\r\nLINUX-PEER: done\r\n";
        assert_eq!(section(text, "dmesg"), ["[ 1.0] a", "[ 2.0] b"]);
        assert!(section(text, "dmesg amdgpu").is_empty());
    }

    #[test]
    fn init_passes_amdgpu_its_parameters_and_powers_off() {
        let init = init_script("16-amdgpu.ko", "ip_block_mask=0xffffffdf");
        assert!(init.starts_with("#!/bin/busybox sh\n"));
        assert!(
            init.contains(
                "[ \"$m\" = \"/mods/16-amdgpu.ko\" ] && args=\"ip_block_mask=0xffffffdf\""
            )
        );
        assert!(init.trim_end().ends_with("poweroff -f"));
        assert!(init.contains("still running after 60 s; reporting now"));
    }

    #[test]
    fn the_milestone_is_the_last_line_found_in_order() {
        let milestone = |dmesg: &str| {
            milestone(&Evidence {
                dmesg,
                guest: "",
                gfx_target: 110000,
            })
        };
        assert_eq!(milestone("[ 1.0] amdgpu: Topology: Add CPU node").0, 0);
        let probed = "[ 15.1] [drm] add ip block number 0 <soc21_common>\n\
                      [ 15.2] amdgpu 0000:01:00.0: amdgpu: Unable to locate a BIOS ROM";
        assert_eq!(
            milestone(probed),
            (1, "amdgpu probes and parses the model's discovery table")
        );
        let refused = "[ 10.5] [drm] add ip block number 0 <soc15_common>\n\
                       [ 10.6] amdgpu 0000:01:00.0: amdgpu: Failed to add vcn/jpeg ip \
                       block(UVD_HWIP:0x0)";
        assert_eq!(milestone(refused).0, 0, "the table was refused as a whole");
        let up = "[ 10.9] [drm] add ip block number 0 <soc21_common>\n\
                  [ 11.0] [drm] PCIE GART of 512M enabled (table at 0x0000008000800000).\n\
                  [ 11.2] [drm:amdgpu_device_init.cold [amdgpu]] *ERROR* hw_init of IP block \
                  <smu> failed -5";
        assert_eq!(milestone(up), (2, "GMC, IH and PSP are up"));
        let psp_failed = up.replace("<smu>", "<psp>");
        assert_eq!(milestone(&psp_failed).0, 1);
        let lines: Vec<&str> = probed.lines().collect();
        assert_eq!(
            amdgpu_errors(&lines),
            ["[ 15.2] amdgpu 0000:01:00.0: amdgpu: Unable to locate a BIOS ROM"]
        );
    }

    /// Milestones 3 and 4 from Linux's own prints and the guest's report
    /// (as a MI300X run printed them, shortened).
    #[test]
    fn ib_tests_and_the_kfd_node_are_milestones_3_and_4() {
        let dmesg = "[ 26.9] [drm] add ip block number 0 <soc15_common>\n\
                     [ 27.4] [drm] PCIE GART of 512M enabled.\n\
                     [ 31.7] [drm] kiq ring mec 2 pipe 1 q 0\n\
                     [ 31.9] [drm] hw_init of IP block <gfx_v9_4_3> done\n\
                     [ 32.2] amdgpu: Topology: Add dGPU node [0x74a1:0x1002]\n\
                     [ 32.4] [drm] Initialized amdgpu 3.61.0 for 0000:01:00.0 on minor 0";
        let guest = "amdgpu loaded, 80 s after boot\nib test: run ib test:\n\
                     ib test: ib ring tests passed.\nkfd node 0 gfx_target_version 0\n\
                     kfd node 1 gfx_target_version 90402";
        let e = |guest, gfx_target| Evidence {
            dmesg,
            guest,
            gfx_target,
        };
        assert_eq!(milestone(&e(guest, 90402)).0, 4);
        // The node of another target is not this part's.
        assert_eq!(milestone(&e(guest, 110000)).0, 3);
        let failed = guest.replace("passed.", "failed (-110).");
        assert_eq!(milestone(&e(&failed, 90402)).0, 2);
    }
}
