//! Device Serial Number: a 64-bit id that survives re-enumeration, so a
//! GPU can be recognised across reboots and slot moves.

use super::EXT_CAP_ID_DSN;
use crate::config::ConfigSpace;

/// The serial number, or `None` without a DSN capability. Follows
/// pci_get_dsn(): lower dword at +4, upper at +8.
pub fn serial_number(cfg: &dyn ConfigSpace) -> Option<u64> {
    let at = super::find_ext(cfg, EXT_CAP_ID_DSN)?;
    let lo = u64::from(cfg.read32(at + DSN_LOW));
    let hi = u64::from(cfg.read32(at + DSN_HIGH));
    Some(hi << 32 | lo)
}

/// `pci_regs.h` names no DSN registers (the kernel uses 4 and 8 inline
/// in pci_get_dsn()); these follow the PCIe spec's layout and are not
/// checked by the harness.
pub const DSN_LOW: u16 = 4;
pub const DSN_HIGH: u16 = 8;

crate::checked_consts! { "linux/pci_regs.h", FACTS;
    /// The capability ends right after the upper dword.
    DSN_SIZEOF: u16 = DSN_HIGH + 4 => "PCI_EXT_CAP_DSN_SIZEOF";
}
