//! PID 1 of the QEMU guest that `cargo xtask qemu-pci` boots.
//!
//! First it enumerates the guest's PCI hierarchy (a q35 chipset: a root
//! port with a device behind it, the multi-function ICH9 at 00:1f) twice,
//! through the real ECAM window that ACPI's MCFG table names and through
//! x86 port I/O, and compares both with the kernel's sysfs view. It
//! enables and maps QEMU's `edu` device (1234:11e8, an emulated PCI device
//! with an ID register, a liveness register and a DMA engine) through
//! sysfs. Then it opens `edu` through VFIO behind an emulated Intel
//! IOMMU and exercises the whole group/container path: container and
//! group ioctls, device fd, config region, BAR mmap, DMA map of a guest
//! buffer at a chosen IOVA (checked by making the device DMA through it),
//! unmap, and reset.
//!
//! It prints `QEMU-PCI: ok <what>` per check and `QEMU-PCI: FAIL <why>`
//! on the first failure, then powers the guest off. The edu register
//! layout is QEMU's docs/specs/edu.rst.

#[cfg(not(target_os = "linux"))]
fn main() {}

#[cfg(target_os = "linux")]
fn main() {
    let r = guest::run();
    if let Err(e) = &r {
        println!("QEMU-PCI: FAIL {e}");
    } else {
        println!("QEMU-PCI: DONE");
    }
    guest::power_off();
}

#[cfg(target_os = "linux")]
mod guest {
    use barebell_pcie::Bdf;
    use barebell_pcie::caps;
    use barebell_pcie::config::{self, ConfigSpace};
    use barebell_pcie::ecam::{self, ConfigAccess, Ecam, Function};
    use barebell_pcie::enumerate;
    use barebell_pcie::portio::PortIo;
    use barebell_pcie::sysfs::{self, SysfsDevice};
    use barebell_pcie::vfio::{VfioDevice, VfioError};
    use barebell_pcie::vfio_uapi as u;
    use std::ffi::CString;
    use std::time::{Duration, Instant};

    type R<T> = Result<T, String>;

    fn ok(what: &str) {
        println!("QEMU-PCI: ok {what}");
    }

    fn check(cond: bool, what: &str) -> R<()> {
        if cond {
            ok(what);
            Ok(())
        } else {
            Err(what.to_string())
        }
    }

    fn mount(src: &str, dst: &str, fs: &str) {
        let _ = std::fs::create_dir_all(dst);
        let (s, d, f) = (
            CString::new(src).unwrap_or_default(),
            CString::new(dst).unwrap_or_default(),
            CString::new(fs).unwrap_or_default(),
        );
        // SAFETY: valid NUL-terminated strings; no data argument.
        unsafe { libc::mount(s.as_ptr(), d.as_ptr(), f.as_ptr(), 0, std::ptr::null()) };
    }

    fn load_module(path: &str) -> R<()> {
        let f = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
        let params = CString::new("").unwrap_or_default();
        use std::os::fd::AsRawFd;
        // SAFETY: finit_module(fd, params, flags); fd is open, params is a
        // valid string. Flag 4 = MODULE_INIT_COMPRESSED_FILE (the kernel
        // decompresses the .ko.xz).
        let r = unsafe { libc::syscall(libc::SYS_finit_module, f.as_raw_fd(), params.as_ptr(), 4) };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(format!("finit_module {path}: {e}"));
            }
        }
        Ok(())
    }

    pub fn power_off() {
        // SAFETY: reboot(2) with the power-off command; PID 1 may call it.
        unsafe {
            libc::sync();
            libc::reboot(libc::RB_POWER_OFF);
        }
    }

    /// Every function sysfs lists: address, ids, and its config bytes.
    type View = Vec<(Bdf, u16, u16, Vec<u8>)>;

    fn sysfs_view() -> R<View> {
        let mut v = Vec::new();
        for bdf in sysfs::list().map_err(|e| e.to_string())? {
            let d = SysfsDevice::open(bdf).map_err(|e| e.to_string())?;
            let raw = std::fs::read(d.dir().join("config")).map_err(|e| e.to_string())?;
            v.push((bdf, d.vendor_id(), d.device_id(), raw));
        }
        Ok(v)
    }

    /// Enumerates through `access` and compares with sysfs: the same
    /// functions, and the same config bytes (the first `limit` of them;
    /// STATUS is masked, its interrupt bit can change between reads).
    fn compare_enumeration<A: ConfigAccess>(
        name: &str,
        access: &A,
        truth: &View,
        limit: usize,
    ) -> R<()> {
        let mut found = Vec::new();
        let stats = enumerate::scan(access, 0, &mut |f| found.push((f.bdf, f.vendor, f.device)));
        let mut want: Vec<_> = truth.iter().map(|t| (t.0, t.1, t.2)).collect();
        want.sort();
        let mut got = found.clone();
        got.sort();
        if got != want {
            return Err(format!(
                "{name}: enumeration found {got:x?}, sysfs lists {want:x?}"
            ));
        }
        let bridges = stats.buses - 1;
        let multi = found.iter().filter(|f| f.0.function != 0).count();
        ok(&format!(
            "{name}: enumeration equals sysfs ({} functions, {} buses via bridges, {} non-zero functions)",
            found.len(),
            bridges,
            multi
        ));
        if bridges == 0 || multi == 0 {
            return Err(format!(
                "{name}: the guest topology should have a bridge and a multi-function device"
            ));
        }
        for (bdf, _, _, raw) in truth {
            let f = Function::new(access, *bdf);
            let n = raw.len().min(limit);
            for o in (0..n).step_by(4) {
                let want = u32::from_le_bytes([raw[o], raw[o + 1], raw[o + 2], raw[o + 3]]);
                let mask = if o == 4 { 0xffff } else { u32::MAX };
                let got = f.read32(o as u16);
                if got & mask != want & mask {
                    return Err(format!(
                        "{name}: {bdf} dword {o:#x}: {got:#010x}, sysfs {want:#010x}"
                    ));
                }
            }
            let ours: Vec<_> = caps::all(&f).map(|c| c.offset).collect();
            let d = SysfsDevice::open(*bdf).map_err(|e| e.to_string())?;
            let theirs: Vec<_> = caps::all(&d).map(|c| c.offset).collect();
            if ours != theirs && limit >= raw.len() {
                return Err(format!(
                    "{name}: {bdf} capabilities {ours:x?}, via sysfs {theirs:x?}"
                ));
            }
        }
        ok(&format!(
            "{name}: config bytes equal sysfs for every function (up to {limit} bytes)"
        ));
        Ok(())
    }

    fn ecam_check(truth: &View) -> R<()> {
        let table =
            std::fs::read("/sys/firmware/acpi/tables/MCFG").map_err(|e| format!("MCFG: {e}"))?;
        let e = ecam::mcfg_entries(&table)
            .next()
            .ok_or("MCFG lists no ECAM window")?;
        // The kernel's own reading of MCFG, in /proc/iomem.
        let iomem = std::fs::read_to_string("/proc/iomem").map_err(|e| e.to_string())?;
        let want = format!(
            "{:x}-{:x} : PCI ECAM {:04x} [bus {:02x}-{:02x}]",
            e.base,
            e.base + e.len() - 1,
            e.segment,
            e.first_bus,
            e.last_bus
        );
        if !iomem.lines().any(|l| l.trim() == want) {
            return Err(format!(
                "MCFG entry {e:x?} ({want}) not in /proc/iomem:\n{iomem}"
            ));
        }
        ok(&format!("MCFG window {want} matches the kernel's"));
        let mem = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/mem")
            .map_err(|e| format!("/dev/mem: {e}"))?;
        use std::os::fd::AsRawFd;
        let len = e.len() as usize;
        // SAFETY: a fresh shared mapping of the ECAM window via /dev/mem
        // (the guest boots with iomem=relaxed so the claimed region may be
        // mapped); nothing aliases it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                mem.as_raw_fd(),
                e.base as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "mmap /dev/mem: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: p maps the whole window named by MCFG, uncached device
        // memory, for the rest of this process (never unmapped).
        let ecam = unsafe { Ecam::new(p.cast(), e.segment, e.first_bus, e.last_bus) }
            .map_err(|e| e.to_string())?;
        compare_enumeration("ECAM", &ecam, truth, 4096)
    }

    fn portio_check(truth: &View) -> R<()> {
        // SAFETY: ioperm changes this process's I/O permission bitmap only.
        if unsafe { libc::ioperm(0xcf8, 8, 1) } != 0 {
            return Err(format!("ioperm: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: ports granted above; this is the only user-space user,
        // the guest has one CPU and the kernel is idle.
        let io = unsafe { PortIo::new() };
        compare_enumeration("port I/O", &io, truth, 256)
    }

    /// The sysfs backend's host-side operations on edu while no driver
    /// owns it: `enable`, then BAR0 through `resource0`.
    fn sysfs_backend(bdf: Bdf) -> R<()> {
        // The sysfs backend's host-side operations, while no driver owns
        // edu: `enable`, then BAR0 through `resource0`.
        {
            let sys = SysfsDevice::open(bdf).map_err(|e| e.to_string())?;
            sys.enable().map_err(|e| e.to_string())?;
            check(
                sys.command() & config::COMMAND_MEMORY != 0,
                "sysfs enable turned on memory decode",
            )?;
            let bar0 = sys.map_bar(0).map_err(|e| e.to_string())?;
            let sizes = sys.resources().map_err(|e| e.to_string())?;
            check(
                bar0.len() as u64 == sizes[0].size() && bar0.read32(0) & 0xff == 0xed,
                &format!(
                    "sysfs resource0 mapping reads the edu ID {:#010x}",
                    bar0.read32(0)
                ),
            )?;
            // Leave the device disabled again for vfio-pci.
            std::fs::write(sys.dir().join("enable"), "0").map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Before vfio-pci is bound, the VFIO backend's errors name the fix:
    /// no /dev/vfio without the modules, no group node without binding.
    fn vfio_before_binding(bdf: Bdf) -> R<()> {
        // Before vfio-pci is loaded there is no /dev/vfio: the error must
        // say what to do.
        match VfioDevice::open(bdf) {
            Err(e @ VfioError::NoVfio { .. }) => {
                let m = e.to_string();
                check(
                    m.contains("vfio-pci") && m.contains("IOMMU group"),
                    "missing-VFIO error names the fix",
                )?;
            }
            other => {
                return Err(format!(
                    "expected NoVfio before loading vfio, got {other:?}"
                ));
            }
        }

        for m in [
            "virt/lib/irqbypass.ko.xz",
            "drivers/vfio/vfio.ko.xz",
            "drivers/vfio/vfio_iommu_type1.ko.xz",
            "drivers/vfio/pci/vfio-pci-core.ko.xz",
            "drivers/vfio/pci/vfio-pci.ko.xz",
        ] {
            load_module(&format!("/modules/{m}"))?;
        }
        ok("vfio modules loaded");

        // Loaded but not bound: the group node does not exist yet.
        match VfioDevice::open_group(bdf) {
            Err(e @ VfioError::NoGroupNode { .. }) => {
                let m = e.to_string();
                check(
                    m.contains("driver_override") && m.contains("iommu_groups"),
                    "unbound-device error names the fix",
                )?;
            }
            other => {
                return Err(format!(
                    "expected NoGroupNode before binding, got {other:?}"
                ));
            }
        }
        Ok(())
    }

    /// DMA: a page mapped at a chosen IOVA, which the device copies
    /// through both ways.
    fn dma_round_trip(dev: &VfioDevice, bar0: &barebell_pcie::sysfs::BarMapping) -> R<()> {
        // DMA: map a page at a chosen IOVA, let the device copy through it.
        const IOVA: u64 = 0x10_0000;
        const EDU_BUF: u64 = 0x4_0000;
        let len = 4096usize;
        // SAFETY: a fresh anonymous private mapping; nothing aliases it.
        let buf = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if buf == libc::MAP_FAILED {
            return Err("mmap of the DMA buffer failed".into());
        }
        let buf = buf.cast::<u8>();
        // SAFETY: buf is valid for len bytes (just mapped).
        let bytes = unsafe { std::slice::from_raw_parts_mut(buf, len) };
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(31).wrapping_add(7);
        }
        let pattern = bytes.to_vec();
        // SAFETY: the buffer stays mapped until after unmap_dma below.
        unsafe { dev.map_dma(buf, len as u64, IOVA) }.map_err(|e| e.to_string())?;
        ok(&format!("mapped {len} bytes at IOVA {IOVA:#x}"));

        let dma = |src: u64, dst: u64, to_ram: bool| -> R<()> {
            bar0.write32(0x80, src as u32);
            bar0.write32(0x84, (src >> 32) as u32);
            bar0.write32(0x88, dst as u32);
            bar0.write32(0x8c, (dst >> 32) as u32);
            bar0.write32(0x90, len as u32);
            bar0.write32(0x98, 1 | if to_ram { 2 } else { 0 });
            let t = Instant::now();
            while bar0.read32(0x98) & 1 != 0 {
                if t.elapsed() > Duration::from_secs(5) {
                    return Err("edu DMA did not finish in 5 s".into());
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        };
        dma(IOVA, EDU_BUF, false)?;
        bytes.fill(0);
        dma(EDU_BUF, IOVA, true)?;
        check(
            bytes == pattern.as_slice(),
            "device DMA round trip through the IOVA mapping",
        )?;

        let n = dev.unmap_dma(IOVA, len as u64).map_err(|e| e.to_string())?;
        check(n == len as u64, &format!("unmapped {n} bytes"))?;
        Ok(())
    }

    pub fn run() -> R<()> {
        mount("proc", "/proc", "proc");
        mount("sysfs", "/sys", "sysfs");
        mount("devtmpfs", "/dev", "devtmpfs");

        let truth = sysfs_view()?;
        ecam_check(&truth)?;
        portio_check(&truth)?;

        let bdf = sysfs::list()
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|b| {
                SysfsDevice::open(*b)
                    .map(|d| d.vendor_id() == 0x1234 && d.device_id() == 0x11e8)
                    .unwrap_or(false)
            })
            .ok_or("no edu device (1234:11e8) in the guest")?;
        ok(&format!("found edu at {bdf}"));

        sysfs_backend(bdf)?;

        vfio_before_binding(bdf)?;

        let dir = format!("/sys/bus/pci/devices/{bdf}");
        std::fs::write(format!("{dir}/driver_override"), "vfio-pci").map_err(|e| e.to_string())?;
        std::fs::write("/sys/bus/pci/drivers_probe", bdf.to_string()).map_err(|e| e.to_string())?;
        let sys = SysfsDevice::open(bdf).map_err(|e| e.to_string())?;
        check(
            sys.driver().as_deref() == Some("vfio-pci"),
            "edu bound to vfio-pci",
        )?;

        let mut dev = VfioDevice::open_group(bdf).map_err(|e| e.to_string())?;
        let info = dev.info();
        check(
            info.flags & u::VFIO_DEVICE_FLAGS_PCI != 0,
            "device fd is a vfio-pci device",
        )?;
        check(
            info.num_regions >= 8,
            &format!("{} regions", info.num_regions),
        )?;

        // Config region against sysfs.
        check(
            dev.vendor_id() == 0x1234 && dev.device_id() == 0x11e8,
            "config region reads 1234:11e8",
        )?;
        let ours: Vec<_> = caps::all(&dev).map(|c| (c.offset, c.id)).collect();
        let theirs: Vec<_> = caps::all(&sys).map(|c| (c.offset, c.id)).collect();
        check(
            ours == theirs,
            &format!("capabilities via VFIO equal sysfs: {ours:x?}"),
        )?;
        config::update_command(&mut dev, config::COMMAND_MEMORY | config::COMMAND_MASTER, 0);
        check(
            dev.command() & (config::COMMAND_MEMORY | config::COMMAND_MASTER) == 0x6,
            "memory decode and bus mastering enabled through the config region",
        )?;

        // BAR0 through mmap.
        let r0 = dev
            .region_info(u::VFIO_PCI_BAR0_REGION_INDEX)
            .map_err(|e| e.to_string())?;
        check(
            r0.size == 1 << 20,
            &format!("BAR0 region is {} bytes", r0.size),
        )?;
        let bar0 = dev.map_region(0).map_err(|e| e.to_string())?;
        let id = bar0.read32(0x00);
        check(id & 0xff == 0xed, &format!("edu ID register {id:#010x}"))?;
        bar0.write32(0x04, 0x1234_5678);
        check(
            bar0.read32(0x04) == !0x1234_5678,
            "liveness register inverts through the mapping",
        )?;

        dma_round_trip(&dev, &bar0)?;

        if dev.supports_reset() {
            dev.reset().map_err(|e| e.to_string())?;
            check(
                bar0.read32(0x00) == id,
                "VFIO_DEVICE_RESET done, device still answers",
            )?;
        } else {
            match dev.reset() {
                Err(VfioError::ResetUnsupported { .. }) => {
                    ok("reset unsupported, reported as such")
                }
                other => return Err(format!("reset without support gave {other:?}")),
            }
        }
        // The group fd is exclusive: close ours before barebell opens it.
        drop(bar0);
        drop(dev);
        barebell_refuses_edu(bdf)
    }

    /// `barebell bringup --vfio <edu> --until discovery`, the CLI packed as
    /// `/barebell` by xtask: its hardware target must get through the VFIO
    /// open (binding, IOMMU group, container, device fd) and then refuse
    /// edu by the vendor id it read through the VFIO config region,
    /// before touching a BAR.
    fn barebell_refuses_edu(bdf: Bdf) -> R<()> {
        let out = std::process::Command::new("/barebell")
            .args([
                "bringup",
                "--vfio",
                &bdf.to_string(),
                "--until",
                "discovery",
            ])
            .output()
            .map_err(|e| format!("running /barebell: {e}"))?;
        let err = String::from_utf8_lossy(&out.stderr);
        let want =
            "is not an AMD GPU (vendor 1234 device 11e8, read through the VFIO config region";
        check(
            out.status.code() == Some(1) && err.contains(want) && out.stdout.is_empty(),
            &format!(
                "barebell bringup --vfio {bdf} opened edu through VFIO and refused it ({}): {}",
                out.status,
                err.trim()
            ),
        )
    }
}
