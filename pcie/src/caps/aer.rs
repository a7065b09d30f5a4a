//! Advanced Error Reporting: the error status a GPU collects when a
//! firmware load or a doorbell goes wrong (completion timeouts,
//! unsupported requests), read after a failed bring-up step.

use super::EXT_CAP_ID_ERR;
use crate::config::ConfigSpace;

/// A snapshot of the AER registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AerStatus {
    pub uncorrectable: u32,
    pub uncorrectable_mask: u32,
    pub uncorrectable_severity: u32,
    pub correctable: u32,
    pub correctable_mask: u32,
    /// Capabilities and Control; bits [4:0] are the First Error Pointer.
    pub control: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aer {
    pub offset: u16,
}

impl Aer {
    pub fn find(cfg: &dyn ConfigSpace) -> Option<Self> {
        super::find_ext(cfg, EXT_CAP_ID_ERR).map(|offset| Aer { offset })
    }

    pub fn status(&self, cfg: &dyn ConfigSpace) -> AerStatus {
        let r = |o: u16| cfg.read32(self.offset + o);
        AerStatus {
            uncorrectable: r(ERR_UNCOR_STATUS),
            uncorrectable_mask: r(ERR_UNCOR_MASK),
            uncorrectable_severity: r(ERR_UNCOR_SEVER),
            correctable: r(ERR_COR_STATUS),
            correctable_mask: r(ERR_COR_MASK),
            control: r(ERR_CAP),
        }
    }

    /// Clears the logged status bits (they are write-1-to-clear) and
    /// returns what was logged.
    pub fn clear(&self, cfg: &mut dyn ConfigSpace) -> AerStatus {
        let s = self.status(cfg);
        cfg.write32(self.offset + ERR_UNCOR_STATUS, s.uncorrectable);
        cfg.write32(self.offset + ERR_COR_STATUS, s.correctable);
        s
    }
}

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    ERR_UNCOR_STATUS: u16 = 0x04 => "PCI_ERR_UNCOR_STATUS";
    ERR_UNCOR_MASK: u16 = 0x08 => "PCI_ERR_UNCOR_MASK";
    ERR_UNCOR_SEVER: u16 = 0x0c => "PCI_ERR_UNCOR_SEVER";
    ERR_COR_STATUS: u16 = 0x10 => "PCI_ERR_COR_STATUS";
    ERR_COR_MASK: u16 = 0x14 => "PCI_ERR_COR_MASK";
    ERR_CAP: u16 = 0x18 => "PCI_ERR_CAP";
    /// First Error Pointer field, as `PCI_ERR_CAP_FEP()` masks it.
    ERR_CAP_FEP_MASK: u32 = 0x1f => "PCI_ERR_CAP_FEP(0xffffffffu)";
}
