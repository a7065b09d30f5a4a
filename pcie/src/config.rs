//! The configuration space header and its accessor trait.
//!
//! Every backend (ECAM, port I/O, sysfs, VFIO, a byte dump) is reached
//! through [`ConfigSpace`], so the decoders in [`crate::bar`] and
//! [`crate::caps`] are written once and tested against synthetic spaces.

/// Byte-addressed access to one function's configuration space.
///
/// Accesses are naturally aligned; an implementation returns all-ones for
/// offsets it cannot reach, as a master abort does, and drops writes it
/// cannot perform. The trait is object-safe so that the enumerator and the
/// CLI can hold any backend as `&mut dyn ConfigSpace`.
///
/// The 8- and 16-bit accessors have defaults built from 32-bit accesses.
/// The default narrow *writes* are read-modify-write of the containing
/// dword, which is wrong next to write-1-to-clear bits (writing COMMAND
/// that way would also write STATUS back and clear its error bits), so every
/// backend in this crate overrides them with true narrow writes.
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

    fn write16(&mut self, offset: u16, value: u16) {
        let shift = u32::from(offset & 2) * 8;
        let old = self.read32(offset & !3) & !(0xffff << shift);
        self.write32(offset & !3, old | u32::from(value) << shift);
    }

    fn write8(&mut self, offset: u16, value: u8) {
        let shift = u32::from(offset & 3) * 8;
        let old = self.read32(offset & !3) & !(0xff << shift);
        self.write32(offset & !3, old | u32::from(value) << shift);
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

    fn revision(&self) -> u8 {
        self.read8(REVISION_ID)
    }

    fn command(&self) -> u16 {
        self.read16(COMMAND)
    }

    fn status(&self) -> u16 {
        self.read16(STATUS)
    }

    /// The header layout, without the multi-function bit.
    fn header_type(&self) -> HeaderType {
        HeaderType::from_raw(self.read8(HEADER_TYPE))
    }

    /// Bit 7 of the header type: other functions of this device may exist.
    fn is_multifunction(&self) -> bool {
        self.read8(HEADER_TYPE) & HEADER_TYPE_MFD != 0
    }

    /// Nothing answered: a vendor id of all-ones means no function here
    /// (or a device that has fallen off the bus).
    fn is_present(&self) -> bool {
        let v = self.vendor_id();
        v != 0xffff && v != 0
    }
}

impl<T: ConfigSpace + ?Sized> ConfigSpace for &mut T {
    fn size(&self) -> usize {
        (**self).size()
    }
    fn read32(&self, offset: u16) -> u32 {
        (**self).read32(offset)
    }
    fn write32(&mut self, offset: u16, value: u32) {
        (**self).write32(offset, value)
    }
    fn read16(&self, offset: u16) -> u16 {
        (**self).read16(offset)
    }
    fn read8(&self, offset: u16) -> u8 {
        (**self).read8(offset)
    }
    fn write16(&mut self, offset: u16, value: u16) {
        (**self).write16(offset, value)
    }
    fn write8(&mut self, offset: u16, value: u8) {
        (**self).write8(offset, value)
    }
}

/// Layout of the header's device-specific half (`PCI_HEADER_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderType {
    /// Type 0: an endpoint, six BARs.
    Normal,
    /// Type 1: a PCI-to-PCI bridge, two BARs and bus numbers.
    Bridge,
    /// Type 2: a CardBus bridge.
    CardBus,
    /// Anything else; the raw 7-bit value.
    Unknown(u8),
}

impl HeaderType {
    pub const fn from_raw(raw: u8) -> Self {
        match raw & HEADER_TYPE_MASK {
            HEADER_TYPE_NORMAL => HeaderType::Normal,
            HEADER_TYPE_BRIDGE => HeaderType::Bridge,
            HEADER_TYPE_CARDBUS => HeaderType::CardBus,
            other => HeaderType::Unknown(other),
        }
    }

    /// How many BAR registers this layout has.
    pub const fn bar_count(self) -> u8 {
        match self {
            HeaderType::Normal => 6,
            HeaderType::Bridge => 2,
            // CardBus has a single socket/ExCa BAR; unknown layouts are
            // not decoded at all.
            HeaderType::CardBus => 1,
            HeaderType::Unknown(_) => 0,
        }
    }

    /// Where the capability pointer lives, if this layout has one.
    pub const fn capability_pointer(self) -> Option<u16> {
        match self {
            HeaderType::Normal | HeaderType::Bridge => Some(CAPABILITY_LIST),
            HeaderType::CardBus => Some(CB_CAPABILITY_LIST),
            HeaderType::Unknown(_) => None,
        }
    }
}

/// Bus numbers of a type 1 header, as firmware (or we) programmed them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BridgeBuses {
    pub primary: u8,
    pub secondary: u8,
    pub subordinate: u8,
}

/// The bus numbers of a bridge, or `None` for any other header layout.
pub fn bridge_buses(cfg: &dyn ConfigSpace) -> Option<BridgeBuses> {
    if cfg.header_type() != HeaderType::Bridge {
        return None;
    }
    Some(BridgeBuses {
        primary: cfg.read8(PRIMARY_BUS),
        secondary: cfg.read8(SECONDARY_BUS),
        subordinate: cfg.read8(SUBORDINATE_BUS),
    })
}

/// Sets or clears `bits` in COMMAND with a 16-bit write (so STATUS is left
/// alone) and returns the previous value.
pub fn update_command(cfg: &mut dyn ConfigSpace, set: u16, clear: u16) -> u16 {
    let old = cfg.read16(COMMAND);
    cfg.write16(COMMAND, (old & !clear) | set);
    old
}

/// A type-0 header's 16 dwords, as `pci_save_state()` keeps them
/// (`pci_save_state()` → `pci_read_config_dword()` of dwords 0..16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedHeader(pub [u32; 16]);

/// Saves the header (before a reset that clears it).
pub fn save_header(cfg: &dyn ConfigSpace) -> SavedHeader {
    let mut d = [0u32; 16];
    for (i, w) in d.iter_mut().enumerate() {
        *w = cfg.read32((i * 4) as u16);
    }
    SavedHeader(d)
}

/// Puts a saved header back as `pci_restore_config_space()` does for a
/// type-0 function: dwords 15 down to 2 (the BARs among them) written
/// where they differ, COMMAND last. COMMAND goes back with a 16-bit write
/// so STATUS's write-1-to-clear bits are left alone (Linux writes the
/// whole dword). Returns how many dwords were written.
pub fn restore_header(cfg: &mut dyn ConfigSpace, saved: &SavedHeader) -> usize {
    let mut written = 0;
    for i in (2..16).rev() {
        let at = (i * 4) as u16;
        if cfg.read32(at) != saved.0[i] {
            cfg.write32(at, saved.0[i]);
            written += 1;
        }
    }
    let command = saved.0[1] as u16;
    if cfg.read16(COMMAND) != command {
        cfg.write16(COMMAND, command);
        written += 1;
    }
    written
}

/// AMD/ATI's PCI vendor id.
pub const VENDOR_AMD_ATI: u16 = 0x1002;

/// Base class of a display controller (`PCI_BASE_CLASS_DISPLAY`) and of
/// a bridge (`PCI_BASE_CLASS_BRIDGE`). These live in the kernel-internal
/// `linux/pci_ids.h`, which is not in the uapi tree the harness compiles
/// against, so they are unchecked.
pub const BASE_CLASS_DISPLAY: u8 = 0x03;
pub const BASE_CLASS_BRIDGE: u8 = 0x06;

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    /// Conventional config space size.
    CFG_SPACE_SIZE: usize = 256 => "PCI_CFG_SPACE_SIZE";
    /// PCI Express (and PCI-X 2.0) extended config space size.
    CFG_SPACE_EXP_SIZE: usize = 4096 => "PCI_CFG_SPACE_EXP_SIZE";
    VENDOR_ID: u16 = 0x00 => "PCI_VENDOR_ID";
    DEVICE_ID: u16 = 0x02 => "PCI_DEVICE_ID";
    COMMAND: u16 = 0x04 => "PCI_COMMAND";
    STATUS: u16 = 0x06 => "PCI_STATUS";
    /// Revision in bits [7:0], class code in [31:8] (`PCI_CLASS_REVISION`).
    CLASS_REVISION: u16 = 0x08 => "PCI_CLASS_REVISION";
    REVISION_ID: u16 = 0x08 => "PCI_REVISION_ID";
    CLASS_PROG: u16 = 0x09 => "PCI_CLASS_PROG";
    CLASS_DEVICE: u16 = 0x0a => "PCI_CLASS_DEVICE";
    HEADER_TYPE: u16 = 0x0e => "PCI_HEADER_TYPE";
    HEADER_TYPE_MASK: u8 = 0x7f => "PCI_HEADER_TYPE_MASK";
    HEADER_TYPE_NORMAL: u8 = 0 => "PCI_HEADER_TYPE_NORMAL";
    HEADER_TYPE_BRIDGE: u8 = 1 => "PCI_HEADER_TYPE_BRIDGE";
    HEADER_TYPE_CARDBUS: u8 = 2 => "PCI_HEADER_TYPE_CARDBUS";
    HEADER_TYPE_MFD: u8 = 0x80 => "PCI_HEADER_TYPE_MFD";
    BAR0: u16 = 0x10 => "PCI_BASE_ADDRESS_0";
    BAR5: u16 = 0x24 => "PCI_BASE_ADDRESS_5";
    SUBSYSTEM_VENDOR_ID: u16 = 0x2c => "PCI_SUBSYSTEM_VENDOR_ID";
    SUBSYSTEM_ID: u16 = 0x2e => "PCI_SUBSYSTEM_ID";
    ROM_ADDRESS: u16 = 0x30 => "PCI_ROM_ADDRESS";
    CAPABILITY_LIST: u16 = 0x34 => "PCI_CAPABILITY_LIST";
    INTERRUPT_LINE: u16 = 0x3c => "PCI_INTERRUPT_LINE";
    INTERRUPT_PIN: u16 = 0x3d => "PCI_INTERRUPT_PIN";
    PRIMARY_BUS: u16 = 0x18 => "PCI_PRIMARY_BUS";
    SECONDARY_BUS: u16 = 0x19 => "PCI_SECONDARY_BUS";
    SUBORDINATE_BUS: u16 = 0x1a => "PCI_SUBORDINATE_BUS";
    ROM_ADDRESS1: u16 = 0x38 => "PCI_ROM_ADDRESS1";
    CB_CAPABILITY_LIST: u16 = 0x14 => "PCI_CB_CAPABILITY_LIST";

    COMMAND_IO: u16 = 0x1 => "PCI_COMMAND_IO";
    COMMAND_MEMORY: u16 = 0x2 => "PCI_COMMAND_MEMORY";
    COMMAND_MASTER: u16 = 0x4 => "PCI_COMMAND_MASTER";
    COMMAND_SERR: u16 = 0x100 => "PCI_COMMAND_SERR";
    COMMAND_INTX_DISABLE: u16 = 0x400 => "PCI_COMMAND_INTX_DISABLE";

    STATUS_INTERRUPT: u16 = 0x08 => "PCI_STATUS_INTERRUPT";
    STATUS_CAP_LIST: u16 = 0x10 => "PCI_STATUS_CAP_LIST";
    STATUS_66MHZ: u16 = 0x20 => "PCI_STATUS_66MHZ";
    STATUS_DEVSEL_MASK: u16 = 0x600 => "PCI_STATUS_DEVSEL_MASK";
    STATUS_SIG_TARGET_ABORT: u16 = 0x800 => "PCI_STATUS_SIG_TARGET_ABORT";
    STATUS_REC_TARGET_ABORT: u16 = 0x1000 => "PCI_STATUS_REC_TARGET_ABORT";
    STATUS_REC_MASTER_ABORT: u16 = 0x2000 => "PCI_STATUS_REC_MASTER_ABORT";
    STATUS_SIG_SYSTEM_ERROR: u16 = 0x4000 => "PCI_STATUS_SIG_SYSTEM_ERROR";
    STATUS_DETECTED_PARITY: u16 = 0x8000 => "PCI_STATUS_DETECTED_PARITY";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::ConfigArray;

    /// A reset clears COMMAND and the BARs; the saved header brings them
    /// back, COMMAND last, and leaves STATUS's error bits alone.
    #[test]
    fn a_saved_header_restores_bars_and_command() {
        let mut c = ConfigArray::new(256);
        c.write32(0, 0x744c_1002);
        c.write32(4, 0x0010_0006); // STATUS capabilities list, MEM | MASTER
        c.write32(0x10, 0xd000_000c); // BAR0, 64-bit prefetchable
        c.write32(0x14, 0x0000_0000);
        c.write32(0x18, 0xe000_000c); // BAR2
        c.write32(0x24, 0xfc90_0000); // BAR5
        c.write32(0x3c, 0x0000_01ff);
        let saved = save_header(&c);
        // What a reset leaves: COMMAND and the BARs cleared, an error
        // latched in STATUS (bit 29: received master abort).
        c.write32(4, 0x2010_0000);
        for at in [0x10, 0x18, 0x24] {
            c.write32(at, 0);
        }
        c.write8(0x3c, 0);
        let n = restore_header(&mut c, &saved);
        assert_eq!(n, 5, "three BARs, the interrupt line, COMMAND");
        assert_eq!(c.read32(0x10), 0xd000_000c);
        assert_eq!(c.read32(0x18), 0xe000_000c);
        assert_eq!(c.read32(0x24), 0xfc90_0000);
        assert_eq!(c.read16(COMMAND), 0x0006);
        assert_eq!(c.read16(COMMAND + 2), 0x2010, "STATUS untouched");
        assert_eq!(restore_header(&mut c, &saved), 0, "nothing left to write");
    }

    #[test]
    fn narrow_reads_pick_the_right_lanes() {
        let mut c = ConfigArray::new(256);
        c.write32(0, 0x744c_1002); // Navi31 (device 0x744c), vendor AMD
        c.write32(8, 0x0300_00c8); // VGA controller, revision 0xc8
        assert_eq!(c.vendor_id(), VENDOR_AMD_ATI);
        assert_eq!(c.device_id(), 0x744c);
        assert_eq!(c.class(), (0x03, 0x00, 0x00));
        assert_eq!(c.read8(8), 0xc8);
        assert_eq!(c.read16(2), 0x744c);
    }

    /// A dword store that records what was written, to show the default
    /// narrow write keeps the neighbouring lanes.
    struct Dword(u32);
    impl ConfigSpace for Dword {
        fn size(&self) -> usize {
            256
        }
        fn read32(&self, _: u16) -> u32 {
            self.0
        }
        fn write32(&mut self, _: u16, v: u32) {
            self.0 = v;
        }
    }

    #[test]
    fn default_narrow_writes_preserve_other_lanes() {
        let mut d = Dword(0xaabb_ccdd);
        d.write8(5, 0x11);
        assert_eq!(d.0, 0xaabb_11dd);
        d.write16(6, 0x2233);
        assert_eq!(d.0, 0x2233_11dd);
    }

    #[test]
    fn header_type_strips_the_multifunction_bit() {
        let mut c = ConfigArray::new(256);
        c.write8(HEADER_TYPE, 0x81);
        assert_eq!(c.header_type(), HeaderType::Bridge);
        assert!(c.is_multifunction());
        c.write8(PRIMARY_BUS, 0);
        c.write8(SECONDARY_BUS, 3);
        c.write8(SUBORDINATE_BUS, 5);
        assert_eq!(
            bridge_buses(&c),
            Some(BridgeBuses {
                primary: 0,
                secondary: 3,
                subordinate: 5
            })
        );
    }
}
