//! `barebell pci list|show BDF|decode FILE`: what barebell-pcie makes of
//! the machine's PCI functions, or of a saved config dump.
//!
//! The JSON is the interface `cargo xtask lspci` checks against `lspci
//! -vvv -nn`: ids are integers, `class` is the 24-bit class code
//! (base << 16 | sub << 8 | prog-if, as sysfs `class` prints it), and BAR
//! sizes come from the kernel's `resource` file (never from re-sizing a
//! BAR a driver is using).

use barebell_pcie::bar::{self, BarKind};
use barebell_pcie::caps::{self, express::Express, msix::Msix, pm::PowerManagement};
use barebell_pcie::config::{ConfigSpace, HeaderType};
use barebell_pcie::mem::ConfigBytes;
use barebell_pcie::sysfs::{self, SysfsDevice};
use barebell_pcie::{Bdf, caps::rebar::ResizableBar};
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

#[derive(Serialize, Debug)]
pub struct BarOut {
    pub index: u8,
    pub address: u64,
    pub bits: u8,
    pub prefetchable: bool,
    /// `"memory"` or `"io"`.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

#[derive(Serialize, Debug)]
pub struct CapOut {
    pub offset: u16,
    pub id: u16,
    pub extended: bool,
    pub name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u8>,
}

#[derive(Serialize, Debug)]
pub struct LinkOut {
    pub max_speed_gts: Option<f32>,
    pub max_width: u8,
    pub speed_gts: Option<f32>,
    pub width: u8,
    pub flr: bool,
}

#[derive(Serialize, Debug)]
pub struct RebarOut {
    pub bar: u8,
    pub current_bytes: u64,
    /// Supported sizes in bytes.
    pub supported_bytes: Vec<u64>,
}

/// The object `pci show --json` and `pci decode --json` print.
#[derive(Serialize, Debug)]
pub struct DeviceOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bdf: Option<String>,
    pub vendor: u16,
    pub device: u16,
    pub class: u32,
    pub revision: u8,
    pub header_type: &'static str,
    pub config_size: usize,
    pub bars: Vec<BarOut>,
    pub capabilities: Vec<CapOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_state: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msix_vectors: Option<u16>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resizable_bars: Vec<RebarOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
}

fn class_code(cfg: &dyn ConfigSpace) -> u32 {
    let (b, s, p) = cfg.class();
    u32::from(b) << 16 | u32::from(s) << 8 | u32::from(p)
}

fn header_name(t: HeaderType) -> &'static str {
    match t {
        HeaderType::Normal => "normal",
        HeaderType::Bridge => "bridge",
        HeaderType::CardBus => "cardbus",
        HeaderType::Unknown(_) => "unknown",
    }
}

fn gts(code: u8) -> Option<f32> {
    caps::express::speed_gts_x10(code).map(|v| f32::from(v) / 10.0)
}

/// Decodes one config space. `sizes[i]` is BAR i's size when known.
pub fn describe(cfg: &dyn ConfigSpace, bdf: Option<Bdf>, sizes: Option<&[u64]>) -> DeviceOut {
    let bars = bar::decode(cfg)
        .iter()
        .map(|b| BarOut {
            index: b.index,
            address: b.address,
            bits: b.bits(),
            prefetchable: b.prefetchable,
            kind: if b.kind == BarKind::Io {
                "io"
            } else {
                "memory"
            },
            size: sizes
                .and_then(|s| s.get(usize::from(b.index)).copied())
                .filter(|&s| s != 0),
        })
        .collect();
    let capabilities = caps::all(cfg)
        .map(|c| CapOut {
            offset: c.offset,
            id: c.id,
            extended: c.extended,
            name: c.name(),
            version: c.extended.then_some(c.version),
        })
        .collect();
    let link = Express::find(cfg).map(|e| {
        let cap = e.link_capabilities(cfg);
        let sta = e.link_status(cfg);
        LinkOut {
            max_speed_gts: gts(cap.max_speed()),
            max_width: cap.max_width(),
            speed_gts: gts(sta.speed()),
            width: sta.width(),
            flr: e.device_capabilities(cfg).flr(),
        }
    });
    let resizable_bars = ResizableBar::find(cfg)
        .map(|r| {
            r.entries(cfg)
                .map(|e| RebarOut {
                    bar: e.bar_index,
                    current_bytes: e.current_bytes(),
                    supported_bytes: (0..20u8)
                        .filter(|&c| e.supports(c))
                        .map(caps::rebar::size_bytes)
                        .collect(),
                })
                .collect()
        })
        .unwrap_or_default();
    DeviceOut {
        bdf: bdf.map(|b| b.to_string()),
        vendor: cfg.vendor_id(),
        device: cfg.device_id(),
        class: class_code(cfg),
        revision: cfg.revision(),
        header_type: header_name(cfg.header_type()),
        config_size: cfg.size(),
        bars,
        capabilities,
        power_state: PowerManagement::find(cfg).map(|p| match p.state(cfg) {
            caps::pm::PowerState::D0 => "D0",
            caps::pm::PowerState::D1 => "D1",
            caps::pm::PowerState::D2 => "D2",
            caps::pm::PowerState::D3Hot => "D3hot",
        }),
        link,
        msix_vectors: Msix::find(cfg).map(|m| m.table_size(cfg)),
        resizable_bars,
        serial_number: caps::dsn::serial_number(cfg).map(|s| format!("{s:016x}")),
    }
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
    if bytes.len() != 256 && bytes.len() != 4096 {
        eprintln!(
            "barebell: {} is {} bytes; expected a raw 256- or 4096-byte config space dump",
            file.display(),
            bytes.len()
        );
        return ExitCode::FAILURE;
    }
    let d = describe(&ConfigBytes::new(&bytes), None, None);
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
