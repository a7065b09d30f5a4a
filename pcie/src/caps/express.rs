//! PCI Express capability: port type, device and link capabilities, the
//! negotiated link, and Function Level Reset.
//!
//! The link fields matter because a GPU that trained at x1 Gen1 behind a
//! bad riser works, slowly; the CLI shows capability against status.

use super::CAP_ID_EXP;
use crate::config::ConfigSpace;
use bitfield_struct::bitfield;

/// PCI Express Capabilities register (`PCI_EXP_FLAGS`).
#[bitfield(u16)]
#[derive(PartialEq, Eq)]
pub struct ExpFlags {
    #[bits(4)]
    pub version: u8,
    /// `PCI_EXP_TYPE_*`.
    #[bits(4)]
    pub port_type: u8,
    pub slot: bool,
    #[bits(5)]
    pub irq: u8,
    #[bits(2)]
    __: u8,
}

/// Device Capabilities (`PCI_EXP_DEVCAP`).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct DevCap {
    /// Max_Payload_Size supported: 128 << n bytes.
    #[bits(3)]
    pub max_payload: u8,
    #[bits(2)]
    pub phantom: u8,
    pub ext_tag: bool,
    #[bits(3)]
    pub l0s_latency: u8,
    #[bits(3)]
    pub l1_latency: u8,
    #[bits(4)]
    __: u8,
    #[bits(2)]
    __: u8,
    #[bits(8)]
    pub slot_power_value: u8,
    #[bits(2)]
    pub slot_power_scale: u8,
    /// Function Level Reset capable.
    pub flr: bool,
    #[bits(3)]
    __: u8,
}

/// Link Capabilities (`PCI_EXP_LNKCAP`).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct LinkCap {
    /// Max link speed: 1 = 2.5, 2 = 5, 3 = 8, 4 = 16, 5 = 32, 6 = 64 GT/s.
    #[bits(4)]
    pub max_speed: u8,
    #[bits(6)]
    pub max_width: u8,
    #[bits(2)]
    pub aspm: u8,
    #[bits(3)]
    pub l0s_exit: u8,
    #[bits(3)]
    pub l1_exit: u8,
    pub clock_pm: bool,
    pub surprise_down: bool,
    pub dll_active_reporting: bool,
    pub bw_notification: bool,
    #[bits(2)]
    __: u8,
    pub port_number: u8,
}

/// Link Status (`PCI_EXP_LNKSTA`).
#[bitfield(u16)]
#[derive(PartialEq, Eq)]
pub struct LinkStatus {
    #[bits(4)]
    pub speed: u8,
    #[bits(6)]
    pub width: u8,
    __: bool,
    pub training: bool,
    pub slot_clock: bool,
    pub dll_active: bool,
    pub bw_mgmt: bool,
    pub autonomous_bw: bool,
}

/// Link speed code to GT/s × 10 (so 2.5 GT/s is 25).
pub const fn speed_gts_x10(code: u8) -> Option<u16> {
    match code {
        1 => Some(25),
        2 => Some(50),
        3 => Some(80),
        4 => Some(160),
        5 => Some(320),
        6 => Some(640),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Express {
    pub offset: u16,
}

impl Express {
    pub fn find(cfg: &dyn ConfigSpace) -> Option<Self> {
        super::find(cfg, CAP_ID_EXP).map(|offset| Express { offset })
    }

    pub fn flags(&self, cfg: &dyn ConfigSpace) -> ExpFlags {
        ExpFlags::from_bits(cfg.read16(self.offset + EXP_FLAGS))
    }

    pub fn device_capabilities(&self, cfg: &dyn ConfigSpace) -> DevCap {
        DevCap::from_bits(cfg.read32(self.offset + EXP_DEVCAP))
    }

    pub fn link_capabilities(&self, cfg: &dyn ConfigSpace) -> LinkCap {
        LinkCap::from_bits(cfg.read32(self.offset + EXP_LNKCAP))
    }

    pub fn link_status(&self, cfg: &dyn ConfigSpace) -> LinkStatus {
        LinkStatus::from_bits(cfg.read16(self.offset + EXP_LNKSTA))
    }

    /// Clears Link Control's ASPM Control field (L0s and L1 entry), as
    /// tinygrad's `AMDev._disable_aspm()` does on the GPU endpoint before
    /// it maps a BAR ("L1 across retimers makes reads oscillate to
    /// 0xffffffff; power on defaults it enabled. Clearing the GPU endpoint
    /// alone suffices: L1 only engages when both ends of the link enable
    /// it."). Returns the value written.
    pub fn disable_aspm(&self, cfg: &mut dyn ConfigSpace) -> u16 {
        let at = self.offset + EXP_LNKCTL;
        let v = cfg.read16(at) & !EXP_LNKCTL_ASPMC;
        cfg.write16(at, v);
        v
    }

    /// Transactions Pending: FLR must wait for this to clear first.
    pub fn transactions_pending(&self, cfg: &dyn ConfigSpace) -> bool {
        cfg.read16(self.offset + EXP_DEVSTA) & EXP_DEVSTA_TRPND != 0
    }

    /// Starts a Function Level Reset if the function supports one
    /// (follows pcie_flr(): set Initiate FLR in Device Control). Returns
    /// false, writing nothing, when DevCap says FLR is unsupported. The
    /// caller must then wait 100 ms before touching the function (PCIe
    /// spec; this crate has no clock) and restore its config.
    pub fn initiate_flr(&self, cfg: &mut dyn ConfigSpace) -> bool {
        if !self.device_capabilities(cfg).flr() {
            return false;
        }
        let ctl = cfg.read16(self.offset + EXP_DEVCTL);
        cfg.write16(self.offset + EXP_DEVCTL, ctl | EXP_DEVCTL_BCR_FLR);
        true
    }
}

const fn mask(offset: usize, bits: usize) -> u64 {
    ((1u64 << bits) - 1) << offset
}

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    EXP_FLAGS: u16 = 0x02 => "PCI_EXP_FLAGS";
    EXP_DEVCAP: u16 = 0x04 => "PCI_EXP_DEVCAP";
    EXP_DEVCTL: u16 = 0x08 => "PCI_EXP_DEVCTL";
    EXP_DEVSTA: u16 = 0x0a => "PCI_EXP_DEVSTA";
    EXP_LNKCAP: u16 = 0x0c => "PCI_EXP_LNKCAP";
    EXP_LNKCTL: u16 = 0x10 => "PCI_EXP_LNKCTL";
    EXP_LNKCTL_ASPMC: u16 = 0x0003 => "PCI_EXP_LNKCTL_ASPMC";
    EXP_LNKSTA: u16 = 0x12 => "PCI_EXP_LNKSTA";
    EXP_DEVCTL_BCR_FLR: u16 = 0x8000 => "PCI_EXP_DEVCTL_BCR_FLR";
    EXP_DEVSTA_TRPND: u16 = 0x0020 => "PCI_EXP_DEVSTA_TRPND";
    EXP_TYPE_ENDPOINT: u8 = 0x0 => "PCI_EXP_TYPE_ENDPOINT";
    EXP_TYPE_ROOT_PORT: u8 = 0x4 => "PCI_EXP_TYPE_ROOT_PORT";
    EXP_TYPE_UPSTREAM: u8 = 0x5 => "PCI_EXP_TYPE_UPSTREAM";
    EXP_TYPE_DOWNSTREAM: u8 = 0x6 => "PCI_EXP_TYPE_DOWNSTREAM";

    EXP_FLAGS_VERS: u64 = mask(ExpFlags::VERSION_OFFSET, ExpFlags::VERSION_BITS) => "PCI_EXP_FLAGS_VERS";
    EXP_FLAGS_TYPE: u64 = mask(ExpFlags::PORT_TYPE_OFFSET, ExpFlags::PORT_TYPE_BITS) => "PCI_EXP_FLAGS_TYPE";
    EXP_FLAGS_SLOT: u64 = mask(ExpFlags::SLOT_OFFSET, ExpFlags::SLOT_BITS) => "PCI_EXP_FLAGS_SLOT";
    EXP_FLAGS_IRQ: u64 = mask(ExpFlags::IRQ_OFFSET, ExpFlags::IRQ_BITS) => "PCI_EXP_FLAGS_IRQ";

    EXP_DEVCAP_PAYLOAD: u64 = mask(DevCap::MAX_PAYLOAD_OFFSET, DevCap::MAX_PAYLOAD_BITS) => "PCI_EXP_DEVCAP_PAYLOAD";
    EXP_DEVCAP_PHANTOM: u64 = mask(DevCap::PHANTOM_OFFSET, DevCap::PHANTOM_BITS) => "PCI_EXP_DEVCAP_PHANTOM";
    EXP_DEVCAP_EXT_TAG: u64 = mask(DevCap::EXT_TAG_OFFSET, DevCap::EXT_TAG_BITS) => "PCI_EXP_DEVCAP_EXT_TAG";
    EXP_DEVCAP_L0S: u64 = mask(DevCap::L0S_LATENCY_OFFSET, DevCap::L0S_LATENCY_BITS) => "PCI_EXP_DEVCAP_L0S";
    EXP_DEVCAP_L1: u64 = mask(DevCap::L1_LATENCY_OFFSET, DevCap::L1_LATENCY_BITS) => "PCI_EXP_DEVCAP_L1";
    EXP_DEVCAP_PWR_VAL: u64 = mask(DevCap::SLOT_POWER_VALUE_OFFSET, DevCap::SLOT_POWER_VALUE_BITS) => "PCI_EXP_DEVCAP_PWR_VAL";
    EXP_DEVCAP_PWR_SCL: u64 = mask(DevCap::SLOT_POWER_SCALE_OFFSET, DevCap::SLOT_POWER_SCALE_BITS) => "PCI_EXP_DEVCAP_PWR_SCL";
    EXP_DEVCAP_FLR: u64 = mask(DevCap::FLR_OFFSET, DevCap::FLR_BITS) => "PCI_EXP_DEVCAP_FLR";

    EXP_LNKCAP_SLS: u64 = mask(LinkCap::MAX_SPEED_OFFSET, LinkCap::MAX_SPEED_BITS) => "PCI_EXP_LNKCAP_SLS";
    EXP_LNKCAP_MLW: u64 = mask(LinkCap::MAX_WIDTH_OFFSET, LinkCap::MAX_WIDTH_BITS) => "PCI_EXP_LNKCAP_MLW";
    EXP_LNKCAP_ASPMS: u64 = mask(LinkCap::ASPM_OFFSET, LinkCap::ASPM_BITS) => "PCI_EXP_LNKCAP_ASPMS";
    EXP_LNKCAP_L0SEL: u64 = mask(LinkCap::L0S_EXIT_OFFSET, LinkCap::L0S_EXIT_BITS) => "PCI_EXP_LNKCAP_L0SEL";
    EXP_LNKCAP_L1EL: u64 = mask(LinkCap::L1_EXIT_OFFSET, LinkCap::L1_EXIT_BITS) => "PCI_EXP_LNKCAP_L1EL";
    EXP_LNKCAP_CLKPM: u64 = mask(LinkCap::CLOCK_PM_OFFSET, LinkCap::CLOCK_PM_BITS) => "PCI_EXP_LNKCAP_CLKPM";
    EXP_LNKCAP_SDERC: u64 = mask(LinkCap::SURPRISE_DOWN_OFFSET, LinkCap::SURPRISE_DOWN_BITS) => "PCI_EXP_LNKCAP_SDERC";
    EXP_LNKCAP_DLLLARC: u64 = mask(LinkCap::DLL_ACTIVE_REPORTING_OFFSET, LinkCap::DLL_ACTIVE_REPORTING_BITS) => "PCI_EXP_LNKCAP_DLLLARC";
    EXP_LNKCAP_LBNC: u64 = mask(LinkCap::BW_NOTIFICATION_OFFSET, LinkCap::BW_NOTIFICATION_BITS) => "PCI_EXP_LNKCAP_LBNC";
    EXP_LNKCAP_PN: u64 = mask(LinkCap::PORT_NUMBER_OFFSET, LinkCap::PORT_NUMBER_BITS) => "PCI_EXP_LNKCAP_PN";

    EXP_LNKSTA_CLS: u64 = mask(LinkStatus::SPEED_OFFSET, LinkStatus::SPEED_BITS) => "PCI_EXP_LNKSTA_CLS";
    EXP_LNKSTA_NLW: u64 = mask(LinkStatus::WIDTH_OFFSET, LinkStatus::WIDTH_BITS) => "PCI_EXP_LNKSTA_NLW";
    EXP_LNKSTA_LT: u64 = mask(LinkStatus::TRAINING_OFFSET, LinkStatus::TRAINING_BITS) => "PCI_EXP_LNKSTA_LT";
    EXP_LNKSTA_SLC: u64 = mask(LinkStatus::SLOT_CLOCK_OFFSET, LinkStatus::SLOT_CLOCK_BITS) => "PCI_EXP_LNKSTA_SLC";
    EXP_LNKSTA_DLLLA: u64 = mask(LinkStatus::DLL_ACTIVE_OFFSET, LinkStatus::DLL_ACTIVE_BITS) => "PCI_EXP_LNKSTA_DLLLA";
    EXP_LNKSTA_LBMS: u64 = mask(LinkStatus::BW_MGMT_OFFSET, LinkStatus::BW_MGMT_BITS) => "PCI_EXP_LNKSTA_LBMS";
    EXP_LNKSTA_LABS: u64 = mask(LinkStatus::AUTONOMOUS_BW_OFFSET, LinkStatus::AUTONOMOUS_BW_BITS) => "PCI_EXP_LNKSTA_LABS";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::ConfigArray;

    /// A type-0 header whose capability list (pointer at 0x34, Status bit
    /// 4 at 0x06, `pci_regs.h`: `PCI_CAPABILITY_LIST`, `PCI_STATUS_CAP_LIST`)
    /// runs 0x50 (Power Management, id 0x01) → 0x60 (PCI Express, id
    /// 0x10), Link Control at 0x60 + 0x10 = 0x70 with ASPM L0s and L1
    /// enabled (0x0003) and Common Clock (0x0040) set. All offsets by hand.
    #[test]
    fn disabling_aspm_clears_only_lnkctl_bits_1_0_of_the_express_capability() {
        let mut c = ConfigArray::new(256);
        c.write16(0x06, 0x0010);
        c.write8(0x34, 0x50);
        c.write16(0x50, 0x6001);
        c.write16(0x60, 0x0010);
        c.write16(0x70, 0x0043);
        c.write16(0x72, 0x1234);
        let e = Express::find(&c).expect("the express capability");
        assert_eq!(e.offset, 0x60);
        assert_eq!(e.disable_aspm(&mut c), 0x0040);
        assert_eq!(c.read16(0x70), 0x0040);
        // Link Status, the next word, untouched.
        assert_eq!(c.read16(0x72), 0x1234);
    }
}
