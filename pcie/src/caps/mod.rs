//! Capability lists: the walk, and typed views of the ones barebell uses.
//!
//! Config space is device-controlled input (and, through `barebell pci
//! decode`, file input), so the walk trusts nothing: every pointer is
//! range-checked, every visited offset is remembered in a bitmap so a cycle
//! ends the walk the moment it closes, and all-ones (a missing device) ends
//! it too. A Null capability (id 0) is reported and its next pointer
//! followed, which is what lspci does; the bitmap bounds the walk to at
//! most 48 standard and 960 extended entries whatever the pointers say.

pub mod aer;
pub mod dsn;
pub mod express;
pub mod msi;
pub mod msix;
pub mod pm;
pub mod rebar;
pub mod vendor;

use crate::config::{self, ConfigSpace};

/// One entry of either list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    /// Offset of the capability header in config space.
    pub offset: u16,
    /// 8-bit id for standard, 16-bit id for extended capabilities.
    pub id: u16,
    /// Version nibble of an extended capability header; 0 for standard.
    pub version: u8,
    pub extended: bool,
}

impl Capability {
    pub fn name(&self) -> &'static str {
        if self.extended {
            ext_name(self.id)
        } else {
            std_name(self.id as u8)
        }
    }
}

/// A set of 4-byte-aligned offsets below 4096.
#[derive(Debug, Clone, Copy, Default)]
struct Visited([u64; 16]);

impl Visited {
    /// Marks `offset`; false if it was already marked.
    fn insert(&mut self, offset: u16) -> bool {
        let slot = usize::from(offset >> 2);
        let (word, bit) = (slot / 64, slot % 64);
        match self.0.get_mut(word) {
            Some(w) if *w & (1 << bit) == 0 => {
                *w |= 1 << bit;
                true
            }
            _ => false,
        }
    }
}

/// Walks the standard list (offsets 0x40..=0xfc).
#[derive(Clone)]
pub struct StandardCaps<'a> {
    cfg: &'a dyn ConfigSpace,
    next: u16,
    seen: Visited,
}

impl core::fmt::Debug for StandardCaps<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StandardCaps")
            .field("next", &self.next)
            .finish()
    }
}

impl Iterator for StandardCaps<'_> {
    type Item = Capability;
    fn next(&mut self) -> Option<Capability> {
        let pos = self.next;
        // Linux's __pci_find_next_cap_ttl() stops below 0x40 too: the
        // header itself is not a capability.
        if !(STD_FIRST..=STD_LAST).contains(&pos) || !self.seen.insert(pos) {
            return None;
        }
        let id = self.cfg.read8(pos + CAP_LIST_ID);
        if id == 0xff {
            return None;
        }
        self.next = u16::from(self.cfg.read8(pos + CAP_LIST_NEXT) & !3);
        Some(Capability {
            offset: pos,
            id: u16::from(id),
            version: 0,
            extended: false,
        })
    }
}

/// Walks the extended list (offsets 0x100..=0xffc), if the space has one.
#[derive(Clone)]
pub struct ExtendedCaps<'a> {
    cfg: &'a dyn ConfigSpace,
    next: u16,
    seen: Visited,
}

impl core::fmt::Debug for ExtendedCaps<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ExtendedCaps")
            .field("next", &self.next)
            .finish()
    }
}

impl Iterator for ExtendedCaps<'_> {
    type Item = Capability;
    fn next(&mut self) -> Option<Capability> {
        let pos = self.next;
        if !(EXT_FIRST..=EXT_LAST).contains(&pos) || !self.seen.insert(pos) {
            return None;
        }
        let header = self.cfg.read32(pos);
        // An all-zero header means "no extended capabilities" (PCIe spec,
        // and pci_find_next_ext_capability()); all-ones means nothing
        // answered.
        if header == 0 || header == u32::MAX {
            return None;
        }
        self.next = ((header >> 20) & EXT_NEXT_MASK) as u16;
        Some(Capability {
            offset: pos,
            id: (header & 0xffff) as u16,
            version: ((header >> 16) & 0xf) as u8,
            extended: true,
        })
    }
}

/// The standard capabilities, in list order. Empty when STATUS says there
/// is no list or the header layout has no pointer.
pub fn standard(cfg: &dyn ConfigSpace) -> StandardCaps<'_> {
    let start = match cfg.header_type().capability_pointer() {
        Some(reg) if cfg.status() & config::STATUS_CAP_LIST != 0 && cfg.status() != 0xffff => {
            u16::from(cfg.read8(reg) & !3)
        }
        _ => 0,
    };
    StandardCaps {
        cfg,
        next: start,
        seen: Visited::default(),
    }
}

/// The extended capabilities, in list order. Empty for a 256-byte space.
pub fn extended(cfg: &dyn ConfigSpace) -> ExtendedCaps<'_> {
    let start = if cfg.size() > config::CFG_SPACE_SIZE {
        EXT_FIRST
    } else {
        0
    };
    ExtendedCaps {
        cfg,
        next: start,
        seen: Visited::default(),
    }
}

/// Both lists, standard first.
pub fn all(cfg: &dyn ConfigSpace) -> impl Iterator<Item = Capability> + '_ {
    standard(cfg).chain(extended(cfg))
}

/// Offset of the first standard capability with `id`.
pub fn find(cfg: &dyn ConfigSpace, id: u8) -> Option<u16> {
    standard(cfg)
        .find(|c| c.id == u16::from(id))
        .map(|c| c.offset)
}

/// Offset of the first extended capability with `id`.
pub fn find_ext(cfg: &dyn ConfigSpace, id: u16) -> Option<u16> {
    extended(cfg).find(|c| c.id == id).map(|c| c.offset)
}

const STD_FIRST: u16 = 0x40;
const STD_LAST: u16 = 0xfc;
const EXT_FIRST: u16 = EXT_FIRST_OFFSET;
const EXT_LAST: u16 = 0xffc;

/// A short name for a standard capability id (our wording, not lspci's).
pub fn std_name(id: u8) -> &'static str {
    match id {
        CAP_ID_NULL => "Null",
        CAP_ID_PM => "Power Management",
        CAP_ID_AGP => "AGP",
        CAP_ID_VPD => "Vital Product Data",
        CAP_ID_SLOTID => "Slot Identification",
        CAP_ID_MSI => "MSI",
        CAP_ID_CHSWP => "CompactPCI Hot Swap",
        CAP_ID_PCIX => "PCI-X",
        CAP_ID_HT => "HyperTransport",
        CAP_ID_VNDR => "Vendor Specific",
        CAP_ID_DBG => "Debug Port",
        CAP_ID_CCRC => "CompactPCI Central Resource Control",
        CAP_ID_SHPC => "Standard Hot-Plug Controller",
        CAP_ID_SSVID => "Bridge Subsystem Vendor ID",
        CAP_ID_AGP3 => "AGP 3.0 Bridge",
        CAP_ID_SECDEV => "Secure Device",
        CAP_ID_EXP => "PCI Express",
        CAP_ID_MSIX => "MSI-X",
        CAP_ID_SATA => "SATA",
        CAP_ID_AF => "Advanced Features",
        CAP_ID_EA => "Enhanced Allocation",
        _ => "Unknown",
    }
}

/// A short name for an extended capability id.
pub fn ext_name(id: u16) -> &'static str {
    match id {
        EXT_CAP_ID_NULL => "Null",
        EXT_CAP_ID_ERR => "Advanced Error Reporting",
        EXT_CAP_ID_VC | EXT_CAP_ID_VC9 => "Virtual Channel",
        EXT_CAP_ID_DSN => "Device Serial Number",
        EXT_CAP_ID_PWR => "Power Budgeting",
        EXT_CAP_ID_VNDR => "Vendor Specific",
        EXT_CAP_ID_ACS => "Access Control Services",
        EXT_CAP_ID_ARI => "Alternative Routing-ID",
        EXT_CAP_ID_ATS => "Address Translation Services",
        EXT_CAP_ID_SRIOV => "SR-IOV",
        EXT_CAP_ID_PRI => "Page Request Interface",
        EXT_CAP_ID_REBAR => "Resizable BAR",
        EXT_CAP_ID_LTR => "Latency Tolerance Reporting",
        EXT_CAP_ID_SECPCI => "Secondary PCI Express",
        EXT_CAP_ID_PASID => "PASID",
        EXT_CAP_ID_DPC => "Downstream Port Containment",
        EXT_CAP_ID_L1SS => "L1 PM Substates",
        EXT_CAP_ID_PTM => "Precision Time Measurement",
        EXT_CAP_ID_DVSEC => "Designated Vendor Specific",
        EXT_CAP_ID_DLF => "Data Link Feature",
        EXT_CAP_ID_PL_16GT => "Physical Layer 16.0 GT/s",
        EXT_CAP_ID_PL_32GT => "Physical Layer 32.0 GT/s",
        EXT_CAP_ID_DOE => "Data Object Exchange",
        _ => "Unknown",
    }
}

/// Null has no macro in `pci_regs.h`; the PCI Code and ID Assignment
/// spec reserves id 0 for it. lspci's own `PCI_CAP_ID_NULL` agrees.
pub const CAP_ID_NULL: u8 = 0x00;
pub const EXT_CAP_ID_NULL: u16 = 0x0000;

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    CAP_LIST_ID: u16 = 0 => "PCI_CAP_LIST_ID";
    CAP_LIST_NEXT: u16 = 1 => "PCI_CAP_LIST_NEXT";
    CAP_FLAGS: u16 = 2 => "PCI_CAP_FLAGS";
    CAP_ID_PM: u8 = 0x01 => "PCI_CAP_ID_PM";
    CAP_ID_AGP: u8 = 0x02 => "PCI_CAP_ID_AGP";
    CAP_ID_VPD: u8 = 0x03 => "PCI_CAP_ID_VPD";
    CAP_ID_SLOTID: u8 = 0x04 => "PCI_CAP_ID_SLOTID";
    CAP_ID_MSI: u8 = 0x05 => "PCI_CAP_ID_MSI";
    CAP_ID_CHSWP: u8 = 0x06 => "PCI_CAP_ID_CHSWP";
    CAP_ID_PCIX: u8 = 0x07 => "PCI_CAP_ID_PCIX";
    CAP_ID_HT: u8 = 0x08 => "PCI_CAP_ID_HT";
    CAP_ID_VNDR: u8 = 0x09 => "PCI_CAP_ID_VNDR";
    CAP_ID_DBG: u8 = 0x0a => "PCI_CAP_ID_DBG";
    CAP_ID_CCRC: u8 = 0x0b => "PCI_CAP_ID_CCRC";
    CAP_ID_SHPC: u8 = 0x0c => "PCI_CAP_ID_SHPC";
    CAP_ID_SSVID: u8 = 0x0d => "PCI_CAP_ID_SSVID";
    CAP_ID_AGP3: u8 = 0x0e => "PCI_CAP_ID_AGP3";
    CAP_ID_SECDEV: u8 = 0x0f => "PCI_CAP_ID_SECDEV";
    CAP_ID_EXP: u8 = 0x10 => "PCI_CAP_ID_EXP";
    CAP_ID_MSIX: u8 = 0x11 => "PCI_CAP_ID_MSIX";
    CAP_ID_SATA: u8 = 0x12 => "PCI_CAP_ID_SATA";
    CAP_ID_AF: u8 = 0x13 => "PCI_CAP_ID_AF";
    CAP_ID_EA: u8 = 0x14 => "PCI_CAP_ID_EA";

    EXT_CAP_ID_ERR: u16 = 0x01 => "PCI_EXT_CAP_ID_ERR";
    EXT_CAP_ID_VC: u16 = 0x02 => "PCI_EXT_CAP_ID_VC";
    EXT_CAP_ID_DSN: u16 = 0x03 => "PCI_EXT_CAP_ID_DSN";
    EXT_CAP_ID_PWR: u16 = 0x04 => "PCI_EXT_CAP_ID_PWR";
    EXT_CAP_ID_VC9: u16 = 0x09 => "PCI_EXT_CAP_ID_VC9";
    EXT_CAP_ID_VNDR: u16 = 0x0b => "PCI_EXT_CAP_ID_VNDR";
    EXT_CAP_ID_ACS: u16 = 0x0d => "PCI_EXT_CAP_ID_ACS";
    EXT_CAP_ID_ARI: u16 = 0x0e => "PCI_EXT_CAP_ID_ARI";
    EXT_CAP_ID_ATS: u16 = 0x0f => "PCI_EXT_CAP_ID_ATS";
    EXT_CAP_ID_SRIOV: u16 = 0x10 => "PCI_EXT_CAP_ID_SRIOV";
    EXT_CAP_ID_PRI: u16 = 0x13 => "PCI_EXT_CAP_ID_PRI";
    EXT_CAP_ID_REBAR: u16 = 0x15 => "PCI_EXT_CAP_ID_REBAR";
    EXT_CAP_ID_LTR: u16 = 0x18 => "PCI_EXT_CAP_ID_LTR";
    EXT_CAP_ID_SECPCI: u16 = 0x19 => "PCI_EXT_CAP_ID_SECPCI";
    EXT_CAP_ID_PASID: u16 = 0x1b => "PCI_EXT_CAP_ID_PASID";
    EXT_CAP_ID_DPC: u16 = 0x1d => "PCI_EXT_CAP_ID_DPC";
    EXT_CAP_ID_L1SS: u16 = 0x1e => "PCI_EXT_CAP_ID_L1SS";
    EXT_CAP_ID_PTM: u16 = 0x1f => "PCI_EXT_CAP_ID_PTM";
    EXT_CAP_ID_DVSEC: u16 = 0x23 => "PCI_EXT_CAP_ID_DVSEC";
    EXT_CAP_ID_DLF: u16 = 0x25 => "PCI_EXT_CAP_ID_DLF";
    EXT_CAP_ID_PL_16GT: u16 = 0x26 => "PCI_EXT_CAP_ID_PL_16GT";
    EXT_CAP_ID_PL_32GT: u16 = 0x2a => "PCI_EXT_CAP_ID_PL_32GT";
    EXT_CAP_ID_DOE: u16 = 0x2e => "PCI_EXT_CAP_ID_DOE";
    /// `PCI_EXT_CAP_NEXT()` masks the shifted header with this.
    EXT_NEXT_MASK: u32 = 0xffc => "PCI_EXT_CAP_NEXT(0xffffffffu)";
    /// The first extended capability sits right after conventional space.
    EXT_FIRST_OFFSET: u16 = 0x100 => "PCI_CFG_SPACE_SIZE";
}

/// `PCI_EXT_CAP_ID()`/`PCI_EXT_CAP_VER()` applied to a sample header,
/// checked so the shifts above are tied to the header's macros.
pub const EXT_HEADER_FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant("linux/pci_regs.h", "PCI_EXT_CAP_ID(0x12345678u)", 0x5678),
    barebell_facts::Fact::constant("linux/pci_regs.h", "PCI_EXT_CAP_VER(0x12345678u)", 0x4),
];
