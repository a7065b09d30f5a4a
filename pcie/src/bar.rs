//! Base address registers: decoding what firmware programmed, and sizing.
//!
//! Sizing is the all-ones protocol of the PCI spec, done the way Linux's
//! `__pci_read_base()` does it: decode is switched off in COMMAND first (so
//! the transiently bogus address cannot claim someone else's cycles), each
//! dword is saved, written with all-ones, read back and restored, and
//! COMMAND is restored last.

use crate::config::{self, ConfigSpace, HeaderType};

/// What kind of space a BAR decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    Io,
    /// 32-bit memory (including the obsolete "below 1M" type).
    Mem32,
    /// 64-bit memory; it occupies this BAR and the next.
    Mem64,
}

/// One decoded BAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    /// BAR register number (0..=5); a 64-bit BAR has the lower index.
    pub index: u8,
    pub kind: BarKind,
    pub prefetchable: bool,
    /// The programmed bus address, flag bits removed.
    pub address: u64,
}

impl Bar {
    /// Address width: 64 for a 64-bit memory BAR, otherwise 32.
    pub const fn bits(&self) -> u8 {
        match self.kind {
            BarKind::Mem64 => 64,
            BarKind::Io | BarKind::Mem32 => 32,
        }
    }
}

/// Why a BAR could not be sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarError {
    /// `index` is not a BAR of this header layout, which has `count`.
    IndexOutOfRange { index: u8, count: u8 },
    /// `index` holds the upper dword of the 64-bit BAR at `index - 1`.
    UpperHalf { index: u8 },
    /// A 64-bit BAR in the last slot has no register for its upper half.
    Mem64InLastSlot { index: u8 },
    /// The function read all-ones at VENDOR_ID: it is gone.
    DeviceGone,
}

impl core::fmt::Display for BarError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            BarError::IndexOutOfRange { index, count } => {
                write!(
                    f,
                    "BAR {index} does not exist: this header has {count} BARs"
                )
            }
            BarError::UpperHalf { index } => write!(
                f,
                "BAR {index} is the upper half of the 64-bit BAR {}",
                index.saturating_sub(1)
            ),
            BarError::Mem64InLastSlot { index } => {
                write!(f, "BAR {index} claims 64 bits but is the last BAR register")
            }
            BarError::DeviceGone => f.write_str("the function reads all-ones (device gone)"),
        }
    }
}

/// The BARs of one function, in register order; at most six.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bars {
    slots: [Option<Bar>; 6],
}

impl Bars {
    pub fn iter(&self) -> impl Iterator<Item = &Bar> {
        self.slots.iter().flatten()
    }

    pub fn get(&self, index: u8) -> Option<&Bar> {
        self.slots.get(usize::from(index)).and_then(Option::as_ref)
    }
}

fn bar_reg(index: u8) -> u16 {
    config::BAR0 + 4 * u16::from(index)
}

fn kind_of(raw: u32) -> BarKind {
    if raw & BASE_ADDRESS_SPACE == BASE_ADDRESS_SPACE_IO {
        BarKind::Io
    } else if raw & BASE_ADDRESS_MEM_TYPE_MASK == BASE_ADDRESS_MEM_TYPE_64 {
        BarKind::Mem64
    } else {
        BarKind::Mem32
    }
}

/// Decodes the programmed BARs without touching the device. A register
/// that reads zero (or all-ones) is unimplemented or unassigned and is
/// left out, as lspci leaves out a region with no address and no size.
pub fn decode(cfg: &dyn ConfigSpace) -> Bars {
    let count = cfg.header_type().bar_count();
    let mut out = Bars::default();
    let mut i = 0u8;
    while i < count {
        let raw = cfg.read32(bar_reg(i));
        let kind = kind_of(raw);
        let next = if kind == BarKind::Mem64 { i + 2 } else { i + 1 };
        let (address, prefetchable) = match kind {
            BarKind::Io => (u64::from(raw & BASE_ADDRESS_IO_MASK), false),
            BarKind::Mem32 => (
                u64::from(raw & BASE_ADDRESS_MEM_MASK),
                raw & BASE_ADDRESS_MEM_PREFETCH != 0,
            ),
            BarKind::Mem64 => {
                let hi = if i + 1 < count {
                    cfg.read32(bar_reg(i + 1))
                } else {
                    0
                };
                (
                    u64::from(hi) << 32 | u64::from(raw & BASE_ADDRESS_MEM_MASK),
                    raw & BASE_ADDRESS_MEM_PREFETCH != 0,
                )
            }
        };
        let implemented = raw != 0 && raw != u32::MAX;
        if let Some(slot) = out.slots.get_mut(usize::from(i)).filter(|_| implemented) {
            *slot = Some(Bar {
                index: i,
                kind,
                prefetchable,
                address,
            });
        }
        i = next;
    }
    out
}

/// Sizes BAR `index` with the all-ones protocol; `Ok(None)` if the BAR is
/// not implemented (reads back zero). Decode is disabled for the duration
/// and COMMAND and the BAR are restored before returning.
///
/// This briefly takes the function off the bus: do not call it on a
/// device a driver is using.
pub fn size(cfg: &mut dyn ConfigSpace, index: u8) -> Result<Option<(Bar, u64)>, BarError> {
    if !cfg.is_present() {
        return Err(BarError::DeviceGone);
    }
    let count = cfg.header_type().bar_count();
    if index >= count {
        return Err(BarError::IndexOutOfRange { index, count });
    }
    if index > 0 {
        let prev = cfg.read32(bar_reg(index - 1));
        // Only an upper half if the previous one is itself a lower half,
        // which holds when walking from BAR 0; re-decode to be sure.
        if kind_of(prev) == BarKind::Mem64
            && decode(cfg)
                .get(index - 1)
                .is_some_and(|b| b.kind == BarKind::Mem64)
        {
            return Err(BarError::UpperHalf { index });
        }
    }
    let reg = bar_reg(index);
    let orig = cfg.read32(reg);
    let kind = kind_of(orig);
    if kind == BarKind::Mem64 && index + 1 >= count {
        return Err(BarError::Mem64InLastSlot { index });
    }
    let cmd = config::update_command(cfg, 0, config::COMMAND_IO | config::COMMAND_MEMORY);

    cfg.write32(reg, u32::MAX);
    let lo_mask = cfg.read32(reg);
    cfg.write32(reg, orig);
    let (hi_orig, hi_mask) = if kind == BarKind::Mem64 {
        let hreg = bar_reg(index + 1);
        let h = cfg.read32(hreg);
        cfg.write32(hreg, u32::MAX);
        let m = cfg.read32(hreg);
        cfg.write32(hreg, h);
        (h, m)
    } else {
        (0, 0)
    };
    cfg.write16(config::COMMAND, cmd);

    let mask: u64 = match kind {
        BarKind::Io => {
            // A 16-bit I/O decoder reads back zeros in the upper half;
            // Linux's pci_size() then limits the mask to 16 bits.
            let m = lo_mask & BASE_ADDRESS_IO_MASK;
            let m = if m & 0xffff_0000 == 0 { m & 0xffff } else { m };
            u64::from(m)
        }
        BarKind::Mem32 => u64::from(lo_mask & BASE_ADDRESS_MEM_MASK),
        BarKind::Mem64 => u64::from(hi_mask) << 32 | u64::from(lo_mask & BASE_ADDRESS_MEM_MASK),
    };
    if mask == 0 {
        return Ok(None);
    }
    // The size is the lowest writable address bit.
    let size = mask & mask.wrapping_neg();
    let address = match kind {
        BarKind::Io => u64::from(orig & BASE_ADDRESS_IO_MASK),
        BarKind::Mem32 => u64::from(orig & BASE_ADDRESS_MEM_MASK),
        BarKind::Mem64 => u64::from(hi_orig) << 32 | u64::from(orig & BASE_ADDRESS_MEM_MASK),
    };
    let bar = Bar {
        index,
        kind,
        prefetchable: kind != BarKind::Io && orig & BASE_ADDRESS_MEM_PREFETCH != 0,
        address,
    };
    Ok(Some((bar, size)))
}

/// The header layout's BAR count, for callers that loop over indices.
pub fn count(cfg: &dyn ConfigSpace) -> u8 {
    cfg.header_type().bar_count()
}

/// Whether the layout is one this module decodes BARs for.
pub fn has_bars(t: HeaderType) -> bool {
    t.bar_count() > 0
}

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    BASE_ADDRESS_SPACE: u32 = 0x01 => "PCI_BASE_ADDRESS_SPACE";
    BASE_ADDRESS_SPACE_IO: u32 = 0x01 => "PCI_BASE_ADDRESS_SPACE_IO";
    BASE_ADDRESS_SPACE_MEMORY: u32 = 0x00 => "PCI_BASE_ADDRESS_SPACE_MEMORY";
    BASE_ADDRESS_MEM_TYPE_MASK: u32 = 0x06 => "PCI_BASE_ADDRESS_MEM_TYPE_MASK";
    BASE_ADDRESS_MEM_TYPE_32: u32 = 0x00 => "PCI_BASE_ADDRESS_MEM_TYPE_32";
    BASE_ADDRESS_MEM_TYPE_1M: u32 = 0x02 => "PCI_BASE_ADDRESS_MEM_TYPE_1M";
    BASE_ADDRESS_MEM_TYPE_64: u32 = 0x04 => "PCI_BASE_ADDRESS_MEM_TYPE_64";
    BASE_ADDRESS_MEM_PREFETCH: u32 = 0x08 => "PCI_BASE_ADDRESS_MEM_PREFETCH";
    /// The header writes `(~0x0fUL)`; the probe truncates to the register.
    BASE_ADDRESS_MEM_MASK: u32 = 0xffff_fff0 => "(uint32_t)PCI_BASE_ADDRESS_MEM_MASK";
    BASE_ADDRESS_IO_MASK: u32 = 0xffff_fffc => "(uint32_t)PCI_BASE_ADDRESS_IO_MASK";
}
