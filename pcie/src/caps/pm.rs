//! Power Management capability: which D-states exist and which one the
//! function is in. A GPU left in D3hot by a previous owner reads all-ones
//! from its BARs, so bring-up checks this first.

use super::CAP_ID_PM;
use crate::config::ConfigSpace;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerState {
    D0,
    D1,
    D2,
    D3Hot,
}

impl PowerState {
    const fn from_bits(v: u16) -> Self {
        match v & PM_CTRL_STATE_MASK {
            0 => PowerState::D0,
            1 => PowerState::D1,
            2 => PowerState::D2,
            _ => PowerState::D3Hot,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowerManagement {
    pub offset: u16,
}

impl PowerManagement {
    pub fn find(cfg: &dyn ConfigSpace) -> Option<Self> {
        super::find(cfg, CAP_ID_PM).map(|offset| PowerManagement { offset })
    }

    /// The PMC register.
    pub fn capabilities(&self, cfg: &dyn ConfigSpace) -> u16 {
        cfg.read16(self.offset + PM_PMC)
    }

    pub fn version(&self, cfg: &dyn ConfigSpace) -> u8 {
        (self.capabilities(cfg) & PM_CAP_VER_MASK) as u8
    }

    pub fn supports_d1(&self, cfg: &dyn ConfigSpace) -> bool {
        self.capabilities(cfg) & PM_CAP_D1 != 0
    }

    pub fn supports_d2(&self, cfg: &dyn ConfigSpace) -> bool {
        self.capabilities(cfg) & PM_CAP_D2 != 0
    }

    pub fn state(&self, cfg: &dyn ConfigSpace) -> PowerState {
        PowerState::from_bits(cfg.read16(self.offset + PM_CTRL))
    }

    /// Requests `state`. PME_Status is write-1-to-clear, so it is written
    /// as zero to leave it alone. The caller owns the transition delay
    /// (10 ms out of D3hot, PCI PM spec).
    pub fn set_state(&self, cfg: &mut dyn ConfigSpace, state: PowerState) {
        let ctrl = cfg.read16(self.offset + PM_CTRL);
        let v = (ctrl & !(PM_CTRL_STATE_MASK | PM_CTRL_PME_STATUS)) | state as u16;
        cfg.write16(self.offset + PM_CTRL, v);
    }
}

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    PM_PMC: u16 = 2 => "PCI_PM_PMC";
    PM_CAP_VER_MASK: u16 = 0x0007 => "PCI_PM_CAP_VER_MASK";
    PM_CAP_D1: u16 = 0x0200 => "PCI_PM_CAP_D1";
    PM_CAP_D2: u16 = 0x0400 => "PCI_PM_CAP_D2";
    PM_CTRL: u16 = 4 => "PCI_PM_CTRL";
    PM_CTRL_STATE_MASK: u16 = 0x0003 => "PCI_PM_CTRL_STATE_MASK";
    PM_CTRL_NO_SOFT_RESET: u16 = 0x0008 => "PCI_PM_CTRL_NO_SOFT_RESET";
    PM_CTRL_PME_STATUS: u16 = 0x8000 => "PCI_PM_CTRL_PME_STATUS";
}
