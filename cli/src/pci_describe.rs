//! What `barebell pci decode` and `pci show` make of one config space:
//! the decoder behind them, in the library so that `pcie/fuzz`'s
//! `pci_decode` target (which includes this file by path) reaches it. It
//! uses only barebell-pcie and serde.

use barebell_pcie::bar::{self, BarKind};
use barebell_pcie::caps::{self, express::Express, msix::Msix, pm::PowerManagement};
use barebell_pcie::config::{ConfigSpace, HeaderType};
use barebell_pcie::mem::ConfigBytes;
use barebell_pcie::{Bdf, caps::rebar::ResizableBar};
use serde::Serialize;

/// Decodes a raw config space dump as `pci decode` does: `None` unless
/// it is 256 or 4096 bytes (a whole conventional or extended space).
pub fn decode_dump(bytes: &[u8]) -> Option<DeviceOut> {
    if bytes.len() != 256 && bytes.len() != 4096 {
        return None;
    }
    Some(describe(&ConfigBytes::new(bytes), None, None))
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

/// The 24-bit class code (base << 16 | sub << 8 | prog-if), as sysfs
/// `class` prints it.
pub fn class_code(cfg: &dyn ConfigSpace) -> u32 {
    let (b, s, p) = cfg.class();
    u32::from(b) << 16 | u32::from(s) << 8 | u32::from(p)
}

/// The header layout's name in the JSON.
pub fn header_name(t: HeaderType) -> &'static str {
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
