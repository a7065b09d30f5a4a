//! MSI-X capability: table size and where the table and PBA live (a BAR
//! and an offset), so a BAR mapping can avoid or find them.

use super::CAP_ID_MSIX;
use crate::config::ConfigSpace;
use bitfield_struct::bitfield;

/// Message Control (`PCI_MSIX_FLAGS`).
#[bitfield(u16)]
#[derive(PartialEq, Eq)]
pub struct MsixControl {
    /// Table size minus one.
    #[bits(11)]
    pub table_size_minus_one: u16,
    #[bits(3)]
    __: u8,
    pub mask_all: bool,
    pub enable: bool,
}

/// A BAR index and an offset into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarOffset {
    pub bar: u8,
    pub offset: u32,
}

impl BarOffset {
    const fn from_raw(v: u32) -> Self {
        BarOffset {
            bar: (v & MSIX_TABLE_BIR) as u8,
            offset: v & MSIX_TABLE_OFFSET,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msix {
    pub offset: u16,
}

impl Msix {
    pub fn find(cfg: &dyn ConfigSpace) -> Option<Self> {
        super::find(cfg, CAP_ID_MSIX).map(|offset| Msix { offset })
    }

    pub fn control(&self, cfg: &dyn ConfigSpace) -> MsixControl {
        MsixControl::from_bits(cfg.read16(self.offset + MSIX_FLAGS))
    }

    /// Number of table entries (1..=2048).
    pub fn table_size(&self, cfg: &dyn ConfigSpace) -> u16 {
        self.control(cfg).table_size_minus_one() + 1
    }

    pub fn table(&self, cfg: &dyn ConfigSpace) -> BarOffset {
        BarOffset::from_raw(cfg.read32(self.offset + MSIX_TABLE))
    }

    pub fn pba(&self, cfg: &dyn ConfigSpace) -> BarOffset {
        BarOffset::from_raw(cfg.read32(self.offset + MSIX_PBA))
    }
}

const fn mask(offset: usize, bits: usize) -> u64 {
    ((1u64 << bits) - 1) << offset
}

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    MSIX_FLAGS: u16 = 2 => "PCI_MSIX_FLAGS";
    MSIX_TABLE: u16 = 4 => "PCI_MSIX_TABLE";
    MSIX_PBA: u16 = 8 => "PCI_MSIX_PBA";
    MSIX_TABLE_BIR: u32 = 0x7 => "PCI_MSIX_TABLE_BIR";
    MSIX_TABLE_OFFSET: u32 = 0xffff_fff8 => "PCI_MSIX_TABLE_OFFSET";
    MSIX_PBA_BIR: u32 = 0x7 => "PCI_MSIX_PBA_BIR";
    MSIX_PBA_OFFSET: u32 = 0xffff_fff8 => "PCI_MSIX_PBA_OFFSET";
    MSIX_ENTRY_SIZE: u32 = 16 => "PCI_MSIX_ENTRY_SIZE";
    MSIX_FLAGS_QSIZE: u64 = mask(MsixControl::TABLE_SIZE_MINUS_ONE_OFFSET, MsixControl::TABLE_SIZE_MINUS_ONE_BITS) => "PCI_MSIX_FLAGS_QSIZE";
    MSIX_FLAGS_MASKALL: u64 = mask(MsixControl::MASK_ALL_OFFSET, MsixControl::MASK_ALL_BITS) => "PCI_MSIX_FLAGS_MASKALL";
    MSIX_FLAGS_ENABLE: u64 = mask(MsixControl::ENABLE_OFFSET, MsixControl::ENABLE_BITS) => "PCI_MSIX_FLAGS_ENABLE";
}
