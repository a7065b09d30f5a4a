//! The configuration space header and its accessor trait.

use barebell_facts::Fact;

/// Byte-addressed access to one function's configuration space.
///
/// Implementations exist for ECAM, port I/O, sysfs `config` files and the
/// VFIO config region. Accesses are naturally aligned; an implementation
/// returns all-ones for offsets it cannot reach, as a master abort does.
pub trait ConfigSpace {
    /// 256 for conventional PCI, 4096 with extended config space.
    fn size(&self) -> usize;
    fn read32(&self, offset: u16) -> u32;
    fn write32(&mut self, offset: u16, value: u32);

    fn read16(&self, offset: u16) -> u16 {
        let shift = u32::from(offset & 2) * 8;
        (self.read32(offset & !3) >> shift) as u16
    }

    fn read8(&self, offset: u16) -> u8 {
        let shift = u32::from(offset & 3) * 8;
        (self.read32(offset & !3) >> shift) as u8
    }

    fn vendor_id(&self) -> u16 {
        self.read16(VENDOR_ID)
    }

    fn device_id(&self) -> u16 {
        self.read16(DEVICE_ID)
    }

    /// `(base class, sub class, prog-if)`.
    fn class(&self) -> (u8, u8, u8) {
        let v = self.read32(CLASS_REVISION);
        ((v >> 24) as u8, (v >> 16) as u8, (v >> 8) as u8)
    }
}

pub const VENDOR_ID: u16 = 0x00;
pub const DEVICE_ID: u16 = 0x02;
pub const COMMAND: u16 = 0x04;
pub const STATUS: u16 = 0x06;
/// Revision in bits [7:0], class code in [31:8] (`PCI_CLASS_REVISION`).
pub const CLASS_REVISION: u16 = 0x08;
pub const HEADER_TYPE: u16 = 0x0e;
pub const BAR0: u16 = 0x10;
pub const CAPABILITY_LIST: u16 = 0x34;

pub const COMMAND_MEMORY: u16 = 0x2;
pub const COMMAND_MASTER: u16 = 0x4;
pub const STATUS_CAP_LIST: u16 = 0x10;

/// AMD/ATI's PCI vendor id.
pub const VENDOR_AMD_ATI: u16 = 0x1002;

const H: &str = "linux/pci_regs.h";

/// Offsets and bits checked against Linux 6.12 `include/uapi/linux/pci_regs.h`.
pub const FACTS: &[Fact] = &[
    Fact::constant(H, "PCI_VENDOR_ID", VENDOR_ID as u64),
    Fact::constant(H, "PCI_DEVICE_ID", DEVICE_ID as u64),
    Fact::constant(H, "PCI_COMMAND", COMMAND as u64),
    Fact::constant(H, "PCI_STATUS", STATUS as u64),
    Fact::constant(H, "PCI_CLASS_REVISION", CLASS_REVISION as u64),
    Fact::constant(H, "PCI_HEADER_TYPE", HEADER_TYPE as u64),
    Fact::constant(H, "PCI_BASE_ADDRESS_0", BAR0 as u64),
    Fact::constant(H, "PCI_CAPABILITY_LIST", CAPABILITY_LIST as u64),
    Fact::constant(H, "PCI_COMMAND_MEMORY", COMMAND_MEMORY as u64),
    Fact::constant(H, "PCI_COMMAND_MASTER", COMMAND_MASTER as u64),
    Fact::constant(H, "PCI_STATUS_CAP_LIST", STATUS_CAP_LIST as u64),
];

#[cfg(test)]
mod tests {
    use super::*;

    struct Raw([u8; 256]);
    impl ConfigSpace for Raw {
        fn size(&self) -> usize {
            256
        }
        fn read32(&self, o: u16) -> u32 {
            let o = usize::from(o);
            u32::from_le_bytes([self.0[o], self.0[o + 1], self.0[o + 2], self.0[o + 3]])
        }
        fn write32(&mut self, o: u16, v: u32) {
            let o = usize::from(o);
            self.0[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
    }

    #[test]
    fn narrow_reads_pick_the_right_lanes() {
        let mut c = Raw([0; 256]);
        c.write32(0, 0x744c_1002); // Navi31 (device 0x744c), vendor AMD
        c.write32(8, 0x0300_00c8); // VGA controller, revision 0xc8
        assert_eq!(c.vendor_id(), VENDOR_AMD_ATI);
        assert_eq!(c.device_id(), 0x744c);
        assert_eq!(c.class(), (0x03, 0x00, 0x00));
        assert_eq!(c.read8(8), 0xc8);
        assert_eq!(c.read16(2), 0x744c);
    }
}
