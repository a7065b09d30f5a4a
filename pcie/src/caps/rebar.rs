//! Resizable BAR: which sizes a BAR supports and switching between them.
//!
//! A GPU's VRAM BAR usually comes up at 256 MiB; growing it to cover all
//! of VRAM lets the host see every byte through one mapping. Resizing
//! follows pci_rebar_set_size(): write the size field of the BAR's control
//! register. The BAR's address is lost by a resize, so memory decode is
//! turned off around it and the caller re-assigns the BAR afterwards (on
//! Linux, sysfs `resourceN_resize` does both).

use super::EXT_CAP_ID_REBAR;
use crate::config::{self, ConfigSpace};
use bitfield_struct::bitfield;

/// Resizable BAR Control (`PCI_REBAR_CTRL`).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RebarCtrl {
    /// The BAR register this entry controls.
    #[bits(3)]
    pub bar_index: u8,
    #[bits(2)]
    __: u8,
    /// Number of entries; meaningful in the first entry only.
    #[bits(3)]
    pub nbars: u8,
    /// Current size: 1 MiB << n.
    #[bits(5)]
    pub bar_size: u8,
    #[bits(19)]
    __: u32,
}

/// One resizable BAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RebarEntry {
    pub bar_index: u8,
    /// Bit n set: 1 MiB << n is supported (n = 0 ..= 19, up to 512 GiB).
    pub supported: u32,
    /// Current size code (1 MiB << code).
    pub current: u8,
}

impl RebarEntry {
    pub fn current_bytes(&self) -> u64 {
        size_bytes(self.current)
    }

    pub fn supports(&self, code: u8) -> bool {
        code < 32 && self.supported & (1 << code) != 0
    }
}

/// Bytes for a size code (1 MiB << code).
pub const fn size_bytes(code: u8) -> u64 {
    (1u64 << 20) << (code as u32 & 63)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebarError {
    /// BAR `bar` has no Resizable BAR entry.
    NotResizable { bar: u8 },
    /// The size code is not in the entry's supported bitmap.
    Unsupported { bar: u8, code: u8, supported: u32 },
}

impl core::fmt::Display for RebarError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RebarError::NotResizable { bar } => write!(f, "BAR {bar} is not resizable"),
            RebarError::Unsupported {
                bar,
                code,
                supported,
            } => write!(
                f,
                "BAR {bar} cannot be {} MiB (size code {code}); supported bitmap {supported:#x}",
                size_bytes(*code) >> 20
            ),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizableBar {
    pub offset: u16,
}

impl ResizableBar {
    pub fn find(cfg: &dyn ConfigSpace) -> Option<Self> {
        super::find_ext(cfg, EXT_CAP_ID_REBAR).map(|offset| ResizableBar { offset })
    }

    /// Entries in this capability (1..=6; a corrupt count is clamped).
    pub fn len(&self, cfg: &dyn ConfigSpace) -> u8 {
        let n = RebarCtrl::from_bits(cfg.read32(self.offset + REBAR_CTRL)).nbars();
        n.clamp(1, 6)
    }

    pub fn is_empty(&self, cfg: &dyn ConfigSpace) -> bool {
        self.len(cfg) == 0
    }

    /// Entry `i` (each entry is a CAP/CTRL pair, 8 bytes apart).
    pub fn entry(&self, cfg: &dyn ConfigSpace, i: u8) -> Option<RebarEntry> {
        if i >= self.len(cfg) {
            return None;
        }
        let base = self.offset + 8 * u16::from(i);
        let cap = cfg.read32(base + REBAR_CAP);
        let ctrl = RebarCtrl::from_bits(cfg.read32(base + REBAR_CTRL));
        Some(RebarEntry {
            bar_index: ctrl.bar_index(),
            supported: (cap & REBAR_CAP_SIZES) >> 4,
            current: ctrl.bar_size(),
        })
    }

    pub fn entries<'a>(
        &'a self,
        cfg: &'a dyn ConfigSpace,
    ) -> impl Iterator<Item = RebarEntry> + 'a {
        (0..self.len(cfg)).filter_map(move |i| self.entry(cfg, i))
    }

    fn position(&self, cfg: &dyn ConfigSpace, bar: u8) -> Option<(u8, RebarEntry)> {
        (0..self.len(cfg))
            .filter_map(|i| self.entry(cfg, i).map(|e| (i, e)))
            .find(|(_, e)| e.bar_index == bar)
    }

    /// Sets BAR `bar` to `1 MiB << code`. Memory decode is off during the
    /// write and restored after; the BAR's address must be re-assigned.
    pub fn resize(&self, cfg: &mut dyn ConfigSpace, bar: u8, code: u8) -> Result<(), RebarError> {
        let (i, e) = self
            .position(cfg, bar)
            .ok_or(RebarError::NotResizable { bar })?;
        if !e.supports(code) {
            return Err(RebarError::Unsupported {
                bar,
                code,
                supported: e.supported,
            });
        }
        let reg = self.offset + 8 * u16::from(i) + REBAR_CTRL;
        let cmd = config::update_command(cfg, 0, config::COMMAND_MEMORY);
        let ctrl = RebarCtrl::from_bits(cfg.read32(reg)).with_bar_size(code & 0x1f);
        cfg.write32(reg, ctrl.into_bits());
        cfg.write16(config::COMMAND, cmd);
        Ok(())
    }
}

const fn mask(offset: usize, bits: usize) -> u64 {
    ((1u64 << bits) - 1) << offset
}

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    REBAR_CAP: u16 = 4 => "PCI_REBAR_CAP";
    REBAR_CAP_SIZES: u32 = 0x00ff_fff0 => "PCI_REBAR_CAP_SIZES";
    REBAR_CTRL: u16 = 8 => "PCI_REBAR_CTRL";
    REBAR_CTRL_BAR_IDX: u64 = mask(RebarCtrl::BAR_INDEX_OFFSET, RebarCtrl::BAR_INDEX_BITS) => "PCI_REBAR_CTRL_BAR_IDX";
    REBAR_CTRL_NBAR_MASK: u64 = mask(RebarCtrl::NBARS_OFFSET, RebarCtrl::NBARS_BITS) => "PCI_REBAR_CTRL_NBAR_MASK";
    REBAR_CTRL_NBAR_SHIFT: usize = RebarCtrl::NBARS_OFFSET => "PCI_REBAR_CTRL_NBAR_SHIFT";
    REBAR_CTRL_BAR_SIZE: u64 = mask(RebarCtrl::BAR_SIZE_OFFSET, RebarCtrl::BAR_SIZE_BITS) => "PCI_REBAR_CTRL_BAR_SIZE";
    REBAR_CTRL_BAR_SHIFT: usize = RebarCtrl::BAR_SIZE_OFFSET => "PCI_REBAR_CTRL_BAR_SHIFT";
}
