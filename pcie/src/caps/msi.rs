//! MSI capability. barebell polls rather than taking interrupts, but a
//! previous owner may have left MSI enabled, and the CLI shows it.

use super::CAP_ID_MSI;
use crate::config::ConfigSpace;
use bitfield_struct::bitfield;

/// Message Control (`PCI_MSI_FLAGS`).
#[bitfield(u16)]
#[derive(PartialEq, Eq)]
pub struct MsiControl {
    pub enable: bool,
    /// log2 of the vectors the function can request.
    #[bits(3)]
    pub multiple_capable: u8,
    /// log2 of the vectors software granted.
    #[bits(3)]
    pub multiple_enable: u8,
    pub address_64: bool,
    pub per_vector_mask: bool,
    #[bits(7)]
    __: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msi {
    pub offset: u16,
}

impl Msi {
    pub fn find(cfg: &dyn ConfigSpace) -> Option<Self> {
        super::find(cfg, CAP_ID_MSI).map(|offset| Msi { offset })
    }

    pub fn control(&self, cfg: &dyn ConfigSpace) -> MsiControl {
        MsiControl::from_bits(cfg.read16(self.offset + MSI_FLAGS))
    }

    pub fn address(&self, cfg: &dyn ConfigSpace) -> u64 {
        let lo = u64::from(cfg.read32(self.offset + MSI_ADDRESS_LO));
        if self.control(cfg).address_64() {
            lo | u64::from(cfg.read32(self.offset + MSI_ADDRESS_HI)) << 32
        } else {
            lo
        }
    }

    pub fn data(&self, cfg: &dyn ConfigSpace) -> u16 {
        let at = if self.control(cfg).address_64() {
            MSI_DATA_64
        } else {
            MSI_DATA_32
        };
        cfg.read16(self.offset + at)
    }
}

const fn mask(offset: usize, bits: usize) -> u64 {
    ((1u64 << bits) - 1) << offset
}

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    MSI_FLAGS: u16 = 0x02 => "PCI_MSI_FLAGS";
    MSI_ADDRESS_LO: u16 = 0x04 => "PCI_MSI_ADDRESS_LO";
    MSI_ADDRESS_HI: u16 = 0x08 => "PCI_MSI_ADDRESS_HI";
    MSI_DATA_32: u16 = 0x08 => "PCI_MSI_DATA_32";
    MSI_DATA_64: u16 = 0x0c => "PCI_MSI_DATA_64";
    MSI_FLAGS_ENABLE: u64 = mask(MsiControl::ENABLE_OFFSET, MsiControl::ENABLE_BITS) => "PCI_MSI_FLAGS_ENABLE";
    MSI_FLAGS_QMASK: u64 = mask(MsiControl::MULTIPLE_CAPABLE_OFFSET, MsiControl::MULTIPLE_CAPABLE_BITS) => "PCI_MSI_FLAGS_QMASK";
    MSI_FLAGS_QSIZE: u64 = mask(MsiControl::MULTIPLE_ENABLE_OFFSET, MsiControl::MULTIPLE_ENABLE_BITS) => "PCI_MSI_FLAGS_QSIZE";
    MSI_FLAGS_64BIT: u64 = mask(MsiControl::ADDRESS_64_OFFSET, MsiControl::ADDRESS_64_BITS) => "PCI_MSI_FLAGS_64BIT";
    MSI_FLAGS_MASKBIT: u64 = mask(MsiControl::PER_VECTOR_MASK_OFFSET, MsiControl::PER_VECTOR_MASK_BITS) => "PCI_MSI_FLAGS_MASKBIT";
}
