//! Vendor-specific capabilities: the standard one (id 9, a length byte
//! and opaque data) and the extended VSEC (id 0xb, with its own id,
//! revision and length). barebell only reports them; their contents are
//! the vendor's business.

use super::{CAP_ID_VNDR, Capability, EXT_CAP_ID_VNDR};
use crate::config::ConfigSpace;

/// What the vendor-specific header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorSpecific {
    pub offset: u16,
    pub extended: bool,
    /// VSEC id (extended only; 0 for the standard capability).
    pub vsec_id: u16,
    /// VSEC revision (extended only).
    pub vsec_rev: u8,
    /// Length of the capability in bytes, header included.
    pub length: u16,
}

impl VendorSpecific {
    /// Reads the header of `cap`, if it is vendor-specific.
    pub fn read(cfg: &dyn ConfigSpace, cap: &Capability) -> Option<Self> {
        if !cap.extended && cap.id == u16::from(CAP_ID_VNDR) {
            return Some(VendorSpecific {
                offset: cap.offset,
                extended: false,
                vsec_id: 0,
                vsec_rev: 0,
                length: u16::from(cfg.read8(cap.offset + VNDR_LENGTH)),
            });
        }
        if cap.extended && cap.id == EXT_CAP_ID_VNDR {
            let h = cfg.read32(cap.offset + VNDR_HEADER);
            return Some(VendorSpecific {
                offset: cap.offset,
                extended: true,
                vsec_id: (h & 0xffff) as u16,
                vsec_rev: ((h >> 16) & 0xf) as u8,
                length: ((h >> 20) & 0xfff) as u16,
            });
        }
        None
    }
}

/// The standard vendor capability's length byte follows id and next
/// (PCI spec; `pci_regs.h` has no macro for it, lspci reads offset 2).
pub const VNDR_LENGTH: u16 = 2;

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    VNDR_HEADER: u16 = 4 => "PCI_VNDR_HEADER";
    VNDR_HEADER_ID_OF_SAMPLE: u32 = 0x5678 => "PCI_VNDR_HEADER_ID(0x12345678u)";
    VNDR_HEADER_REV_OF_SAMPLE: u32 = 0x4 => "PCI_VNDR_HEADER_REV(0x12345678u)";
    VNDR_HEADER_LEN_OF_SAMPLE: u32 = 0x123 => "PCI_VNDR_HEADER_LEN(0x12345678u)";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::ConfigArray;

    #[test]
    fn vsec_header_fields_match_the_header_macros_on_the_sample() {
        // The sample the FACTS probes use: the decode below must give the
        // values the header's macros give for the same word.
        let mut c = ConfigArray::new(4096);
        c.write32(0x100, 0x0001_000b);
        c.write32(0x104, 0x1234_5678);
        let cap = Capability {
            offset: 0x100,
            id: EXT_CAP_ID_VNDR,
            version: 1,
            extended: true,
        };
        let v = VendorSpecific::read(&c, &cap).unwrap();
        assert_eq!(u32::from(v.vsec_id), VNDR_HEADER_ID_OF_SAMPLE);
        assert_eq!(u32::from(v.vsec_rev), VNDR_HEADER_REV_OF_SAMPLE);
        assert_eq!(u32::from(v.length), VNDR_HEADER_LEN_OF_SAMPLE);
    }
}
