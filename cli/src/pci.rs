//! `barebell pci list|show BDF|decode FILE`: what barebell-pcie makes of
//! the machine's PCI functions, or of a saved config dump.
//!
//! The JSON is the interface `cargo xtask lspci` checks against `lspci
//! -vvv -nn`: ids are integers, `class` is the 24-bit class code
//! (base << 16 | sub << 8 | prog-if, as sysfs `class` prints it), and BAR
//! sizes come from the kernel's `resource` file (never from re-sizing a
//! BAR a driver is using).

use barebell_cli::pci_describe::{DeviceOut, class_code, decode_dump, describe, header_name};
use barebell_pcie::Bdf;
use barebell_pcie::config::ConfigSpace;
use barebell_pcie::sysfs::{self, SysfsDevice};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand, Debug)]
pub enum PciCommand {
    /// List every PCI function Linux knows (from /sys/bus/pci/devices).
    List {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Decode one function's config space, BARs and capabilities (run as
    /// root: without it Linux exposes only the first 64 bytes).
    Show {
        /// PCI address, e.g. 0000:03:00.0 or 03:00.0.
        bdf: String,
        #[arg(long)]
        json: bool,
    },
    /// Decode a raw 256- or 4096-byte config space dump (e.g. a copy of
    /// /sys/bus/pci/devices/BDF/config).
    Decode {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

/// One row of `pci list --json`.
#[derive(Serialize, Debug)]
pub struct ListEntry {
    pub bdf: String,
    pub vendor: u16,
    pub device: u16,
    pub class: u32,
    pub revision: u8,
    pub subsystem_vendor: u16,
    pub subsystem_device: u16,
    pub header_type: &'static str,
    pub driver: Option<String>,
}

fn print_device(d: &DeviceOut) {
    if let Some(b) = &d.bdf {
        print!("{b} ");
    }
    println!(
        "{:04x}:{:04x} class {:06x} rev {:02x} ({} header, {} bytes of config)",
        d.vendor, d.device, d.class, d.revision, d.header_type, d.config_size
    );
    for b in &d.bars {
        let size = b.size.map(|s| format!(" size {s:#x}")).unwrap_or_default();
        let pf = if b.prefetchable { ", prefetchable" } else { "" };
        println!(
            "  BAR{} {} at {:#x} ({}-bit{pf}){size}",
            b.index, b.kind, b.address, b.bits
        );
    }
    for c in &d.capabilities {
        if c.extended {
            println!(
                "  cap [{:03x}] ext {:#06x} v{} {}",
                c.offset,
                c.id,
                c.version.unwrap_or(0),
                c.name
            );
        } else {
            println!("  cap [{:02x}] {:#04x} {}", c.offset, c.id, c.name);
        }
    }
    if let Some(p) = d.power_state {
        println!("  power state {p}");
    }
    if let Some(l) = &d.link {
        println!(
            "  link {:?} GT/s x{} (capable {:?} GT/s x{}), FLR {}",
            l.speed_gts, l.width, l.max_speed_gts, l.max_width, l.flr
        );
    }
    if let Some(n) = d.msix_vectors {
        println!("  MSI-X {n} vectors");
    }
    for r in &d.resizable_bars {
        println!(
            "  resizable BAR{}: {} MiB now, supports {:?} MiB",
            r.bar,
            r.current_bytes >> 20,
            r.supported_bytes
                .iter()
                .map(|b| b >> 20)
                .collect::<Vec<_>>()
        );
    }
    if let Some(s) = &d.serial_number {
        println!("  serial number {s}");
    }
}

fn json<T: Serialize>(v: &T) -> ExitCode {
    match serde_json::to_string_pretty(v) {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("barebell: {e}");
            ExitCode::FAILURE
        }
    }
}

fn list(as_json: bool) -> ExitCode {
    let bdfs = match sysfs::list() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("barebell: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = Vec::new();
    for bdf in bdfs {
        let dev = match SysfsDevice::open(bdf) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("barebell: {e}");
                return ExitCode::FAILURE;
            }
        };
        out.push(ListEntry {
            bdf: bdf.to_string(),
            vendor: dev.vendor_id(),
            device: dev.device_id(),
            class: class_code(&dev),
            revision: dev.revision(),
            subsystem_vendor: dev.read16(barebell_pcie::config::SUBSYSTEM_VENDOR_ID),
            subsystem_device: dev.read16(barebell_pcie::config::SUBSYSTEM_ID),
            header_type: header_name(dev.header_type()),
            driver: dev.driver(),
        });
    }
    if as_json {
        return json(&out);
    }
    for e in &out {
        println!(
            "{} {:04x}:{:04x} class {:06x} rev {:02x} {}",
            e.bdf,
            e.vendor,
            e.device,
            e.class,
            e.revision,
            e.driver.as_deref().unwrap_or("-")
        );
    }
    ExitCode::SUCCESS
}

fn show(bdf: &str, as_json: bool) -> ExitCode {
    let bdf = match Bdf::parse(bdf) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("barebell: {bdf:?}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let dev = match SysfsDevice::open(bdf) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("barebell: {e}");
            return ExitCode::FAILURE;
        }
    };
    let readable = dev.readable_len();
    if readable < dev.size() {
        eprintln!(
            "barebell: only {readable} of {} config bytes of {bdf} are readable; \
             run as root to see capabilities",
            dev.size()
        );
    }
    let sizes: Option<Vec<u64>> = dev
        .resources()
        .ok()
        .map(|r| r.iter().map(|r| r.size()).collect());
    let d = describe(&dev, Some(bdf), sizes.as_deref());
    if as_json {
        return json(&d);
    }
    print_device(&d);
    ExitCode::SUCCESS
}

fn decode(file: &PathBuf, as_json: bool) -> ExitCode {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("barebell: reading {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let Some(d) = decode_dump(&bytes) else {
        eprintln!(
            "barebell: {} is {} bytes; expected a raw 256- or 4096-byte config space dump",
            file.display(),
            bytes.len()
        );
        return ExitCode::FAILURE;
    };
    if as_json {
        return json(&d);
    }
    print_device(&d);
    ExitCode::SUCCESS
}

pub fn run(cmd: PciCommand) -> ExitCode {
    match cmd {
        PciCommand::List { json } => list(json),
        PciCommand::Show { bdf, json } => show(&bdf, json),
        PciCommand::Decode { file, json } => decode(&file, json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use barebell_pcie::mem::ConfigBytes;

    /// A hand-built type 0 dump: AMD 0x744c, VGA, BAR0 64-bit prefetchable
    /// at 0x38_0000_0000, BAR5 32-bit at 0xfcd0_0000, PM at 0x50 -> PCIe
    /// at 0x64, AER at 0x100 -> ReBAR at 0x200.
    fn dump() -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        let mut put = |o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
        put(0x00, 0x744c_1002);
        put(0x04, 0x0010_0006);
        put(0x08, 0x0300_00c8);
        put(0x10, 0x0000_000c);
        put(0x14, 0x0000_0038);
        put(0x24, 0xfcd0_0000);
        put(0x34, 0x50);
        put(0x50, 0x0003_6401);
        put(0x64, 0x0002_0010);
        put(0x100, 0x2001_0001);
        put(0x200, 0x0001_0015);
        put(0x204, 0x0000_3000);
        put(0x208, 0x0000_0820);
        b
    }

    #[test]
    fn decode_json_has_the_issue_schema() {
        let b = dump();
        let d = describe(&ConfigBytes::new(&b), None, None);
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["vendor"], 0x1002);
        assert_eq!(v["device"], 0x744c);
        assert_eq!(v["class"], 0x030000);
        let bars = v["bars"].as_array().unwrap();
        assert_eq!(bars.len(), 2);
        assert_eq!(bars[0]["index"], 0);
        assert_eq!(bars[0]["address"], 0x38_0000_0000u64);
        assert_eq!(bars[0]["bits"], 64);
        assert_eq!(bars[0]["prefetchable"], true);
        assert!(bars[0].get("size").is_none(), "a dump carries no sizes");
        assert_eq!(bars[1]["index"], 5);
        assert_eq!(bars[1]["bits"], 32);
        let caps: Vec<(u64, u64, bool)> = v["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["offset"].as_u64().unwrap(),
                    c["id"].as_u64().unwrap(),
                    c["extended"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            caps,
            vec![
                (0x50, 0x01, false),
                (0x64, 0x10, false),
                (0x100, 0x01, true),
                (0x200, 0x15, true)
            ]
        );
        assert_eq!(v["capabilities"][3]["name"], "Resizable BAR");
        // ReBAR: BAR0 supports 256 MiB and 512 MiB (size bits 8, 9 ->
        // register bits 12, 13), currently code 8.
        assert_eq!(v["resizable_bars"][0]["bar"], 0);
        assert_eq!(v["resizable_bars"][0]["current_bytes"], 256u64 << 20);
        assert_eq!(
            v["resizable_bars"][0]["supported_bytes"],
            serde_json::json!([256u64 << 20, 512u64 << 20])
        );
    }

    #[test]
    fn sizes_attach_to_their_bar() {
        let b = dump();
        let sizes = [16u64 << 30, 0, 0, 0, 0, 512 << 10];
        let d = describe(&ConfigBytes::new(&b), None, Some(&sizes));
        assert_eq!(d.bars[0].size, Some(16 << 30));
        assert_eq!(d.bars[1].size, Some(512 << 10));
    }
}
