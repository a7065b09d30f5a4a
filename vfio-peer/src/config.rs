//! The PCI configuration space the peer's function shows a guest.
//!
//! Layout (PCI Local Bus 3.0 type-0 header, PCI Express Base 4.0
//! capability, MSI-X; field names as `include/uapi/linux/pci_regs.h`
//! spells them):
//! - vendor 0x1002 (AMD), the part's device id, class 0x030000 (VGA
//!   controller: `amdgpu_pci_probe()` binds IP-discovery parts by class,
//!   `amdgpu_drv.c`'s `PCI_CLASS_DISPLAY_VGA` entry);
//! - BAR0 64-bit prefetchable (VRAM), BAR2 64-bit prefetchable
//!   (doorbells), BAR4 32-bit memory (the MSI-X table and PBA), BAR5
//!   32-bit memory (registers: `amdgpu_device_init()` maps BAR5 on
//!   every ASIC from Bonaire on);
//! - capabilities PM (0x50) → PCI Express endpoint (0x64) → MSI-X (0xA0).
//!
//! **Model values** (no public config dump of these boards is used):
//! the revision, the subsystem ids, the link's speed and width, the
//! MSI-X vector count, and the MSI-X table's place in a BAR of its own
//! (a real board keeps it in BAR5; a separate BAR keeps QEMU's emulated
//! table from ever covering a register). QEMU's `vfio-pci` emulates the
//! BAR address registers, the ROM register and the MSI-X table and
//! control itself (it reads only the BARs' type bits from here and
//! sizes them from the region table), so this space answers the rest:
//! ids, COMMAND, the capability chain and the PCIe control registers.

/// `PCI_COMMAND`.
pub const COMMAND: usize = 0x04;
/// `PCI_COMMAND_MEMORY`.
pub const COMMAND_MEMORY: u16 = 1 << 1;
/// `PCI_COMMAND_MASTER`.
pub const COMMAND_MASTER: u16 = 1 << 2;
/// `PCI_COMMAND_INTX_DISABLE`.
pub const COMMAND_INTX_DISABLE: u16 = 1 << 10;
/// Where the PM capability sits.
pub const PM_CAP: usize = 0x50;
/// Where the PCI Express capability sits.
pub const EXP_CAP: usize = 0x64;
/// Where the MSI-X capability sits.
pub const MSIX_CAP: usize = 0xA0;
/// `PCI_EXP_LNKCTL` inside the PCIe capability.
pub const EXP_LNKCTL: usize = 0x10;
/// `PCI_EXP_LNKCTL_ASPMC`.
pub const LNKCTL_ASPMC: u16 = 0x0003;
/// MSI-X vectors offered (model value; amdgpu asks for one,
/// `amdgpu_irq_init()` → `pci_alloc_irq_vectors(adev->pdev, 1, 1, ...)`).
pub const MSIX_VECTORS: u16 = 8;
/// The BAR holding the MSI-X table (at 0) and PBA (at [`MSIX_PBA`]).
pub const MSIX_BAR: u8 = 4;
/// The PBA's offset in [`MSIX_BAR`].
pub const MSIX_PBA: u32 = 0x1000;
/// [`MSIX_BAR`]'s length.
pub const MSIX_BAR_BYTES: u64 = 0x2000;
/// Config space length (PCI Express extended space).
pub const BYTES: usize = 4096;

/// What a config write changed that the device behind it must see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing the device models.
    None,
    /// `PCI_COMMAND`'s bus-master bit became this.
    BusMaster(bool),
    /// Link Control's ASPM Control became this (0: off).
    Aspm(u16),
}

/// A type-0 configuration space with a write mask per byte.
#[derive(Debug, Clone)]
pub struct ConfigSpace {
    bytes: [u8; BYTES],
    /// Bits a write may change (the rest read back as they were).
    wmask: [u8; BYTES],
}

impl ConfigSpace {
    /// The space of `device_id`, revision `revision`, with an expansion
    /// ROM of `rom_bytes` (a power of two of at least 2 KiB; 0: none).
    pub fn new(device_id: u16, revision: u8, rom_bytes: u32) -> Self {
        let mut c = ConfigSpace {
            bytes: [0; BYTES],
            wmask: [0; BYTES],
        };
        c.put16(0x00, 0x1002); // PCI_VENDOR_ID
        c.put16(0x02, device_id); // PCI_DEVICE_ID
        c.put16(0x06, 0x0010); // PCI_STATUS: PCI_STATUS_CAP_LIST
        c.bytes[0x08] = revision; // PCI_REVISION_ID
        c.bytes[0x0B] = 0x03; // PCI_CLASS_DISPLAY
        c.bytes[0x0A] = 0x00; // PCI_CLASS_DISPLAY_VGA's subclass
        // BAR type bits (PCI_BASE_ADDRESS_MEM_TYPE_64 | _PREFETCH = 0xC).
        c.put32(0x10, 0x0000_000C); // BAR0: VRAM
        c.put32(0x18, 0x0000_000C); // BAR2: doorbells
        c.put32(0x20, 0x0000_0000); // BAR4: MSI-X table and PBA
        c.put32(0x24, 0x0000_0000); // BAR5: registers
        c.put16(0x2C, 0x1002); // PCI_SUBSYSTEM_VENDOR_ID (model value)
        c.put16(0x2E, device_id); // PCI_SUBSYSTEM_ID (model value)
        c.bytes[0x34] = PM_CAP as u8; // PCI_CAPABILITY_LIST
        c.bytes[0x3C] = 0xFF; // PCI_INTERRUPT_LINE
        c.bytes[0x3D] = 0x01; // PCI_INTERRUPT_PIN: INTA
        // PM: version 3, D0 only.
        c.bytes[PM_CAP] = 0x01; // PCI_CAP_ID_PM
        c.bytes[PM_CAP + 1] = EXP_CAP as u8;
        c.put16(PM_CAP + 2, 0x0003); // PCI_PM_PMC: version 3
        // PCI Express: version 2, endpoint.
        c.bytes[EXP_CAP] = 0x10; // PCI_CAP_ID_EXP
        c.bytes[EXP_CAP + 1] = MSIX_CAP as u8;
        c.put16(EXP_CAP + 0x02, 0x0002); // PCI_EXP_FLAGS: v2, PCI_EXP_TYPE_ENDPOINT
        // PCI_EXP_DEVCAP: 256-byte payload, Role-Based Error Reporting
        // (bit 15, mandatory from PCIe 1.1 on: without it Linux's
        // `pcie_aspm_sanity_check()` calls the function "pre-1.1" and
        // turns ASPM off itself).
        c.put32(EXP_CAP + 0x04, 0x0000_0001 | (1 << 15));
        // PCI_EXP_LNKCAP: 16 GT/s (4), x16, ASPM L1 supported (bit 11).
        c.put32(EXP_CAP + 0x0C, 0x0000_0004 | (16 << 4) | (1 << 11));
        // PCI_EXP_LNKCTL: ASPM L1 on at power-up (as the model's
        // `pci_config::LNKCTL_ASPM_L1`, which tinygrad's AM clears).
        c.put16(EXP_CAP + EXP_LNKCTL, 0x0002);
        c.put16(EXP_CAP + 0x12, 0x0004 | (16 << 4)); // PCI_EXP_LNKSTA
        // PCI_EXP_DEVCAP2: 32- and 64-bit AtomicOp completion (bits 7, 8).
        c.put32(EXP_CAP + 0x24, (1 << 7) | (1 << 8));
        c.put32(EXP_CAP + 0x2C, 0x0000_001E); // PCI_EXP_LNKCAP2: 2.5-16 GT/s
        // MSI-X: table at BAR4 + 0, PBA at BAR4 + MSIX_PBA.
        c.bytes[MSIX_CAP] = 0x11; // PCI_CAP_ID_MSIX
        c.bytes[MSIX_CAP + 1] = 0;
        c.put16(MSIX_CAP + 2, MSIX_VECTORS - 1); // PCI_MSIX_FLAGS: table size
        c.put32(MSIX_CAP + 4, u32::from(MSIX_BAR)); // PCI_MSIX_TABLE
        c.put32(MSIX_CAP + 8, MSIX_PBA | u32::from(MSIX_BAR)); // PCI_MSIX_PBA
        // What software may change.
        c.mask16(COMMAND, 0x0407); // I/O, memory, master, INTx disable
        c.mask16(0x3C, 0x00FF); // PCI_INTERRUPT_LINE
        c.mask16(PM_CAP + 4, 0x0003); // PCI_PM_CTRL: power state
        c.mask16(EXP_CAP + 0x08, 0x7CFF); // PCI_EXP_DEVCTL
        c.mask16(EXP_CAP + EXP_LNKCTL, 0x0FC3); // PCI_EXP_LNKCTL
        c.mask16(EXP_CAP + 0x28, 0x07FF); // PCI_EXP_DEVCTL2 (AtomicOp requester: bit 6)
        c.mask16(EXP_CAP + 0x30, 0xFFFF); // PCI_EXP_LNKCTL2
        c.mask16(MSIX_CAP + 2, 0xC000); // PCI_MSIX_FLAGS: enable, mask all
        // PCI_ROM_ADDRESS: the address bits above the ROM's size and the
        // enable bit are writable, so writing all ones and reading back
        // sizes the ROM, as QEMU's `vfio_pci_size_rom()` does it.
        if rom_bytes.is_power_of_two() && rom_bytes >= 2048 {
            let m = !(rom_bytes - 1) | 1;
            c.wmask[0x30..0x34].copy_from_slice(&m.to_le_bytes());
        }
        c
    }

    fn put16(&mut self, at: usize, v: u16) {
        self.bytes[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }

    fn put32(&mut self, at: usize, v: u32) {
        self.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn mask16(&mut self, at: usize, m: u16) {
        self.wmask[at..at + 2].copy_from_slice(&m.to_le_bytes());
    }

    /// The 16-bit register at `at`.
    pub fn read16(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]])
    }

    /// Copies `out.len()` bytes from `offset`; `None` past the space.
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Option<()> {
        let at = usize::try_from(offset).ok()?;
        let end = at.checked_add(out.len())?;
        out.copy_from_slice(self.bytes.get(at..end)?);
        Some(())
    }

    /// Writes `data` at `offset` through the write mask; what the device
    /// must see of it. `None` past the space.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Option<Effect> {
        let at = usize::try_from(offset).ok()?;
        let end = at.checked_add(data.len())?;
        if end > BYTES {
            return None;
        }
        let command = self.read16(COMMAND);
        let lnkctl = self.read16(EXP_CAP + EXP_LNKCTL);
        for (i, &b) in data.iter().enumerate() {
            let m = self.wmask[at + i];
            self.bytes[at + i] = (self.bytes[at + i] & !m) | (b & m);
        }
        let new_command = self.read16(COMMAND);
        let new_lnkctl = self.read16(EXP_CAP + EXP_LNKCTL);
        Some(if (new_command ^ command) & COMMAND_MASTER != 0 {
            Effect::BusMaster(new_command & COMMAND_MASTER != 0)
        } else if (new_lnkctl ^ lnkctl) & LNKCTL_ASPMC != 0 {
            Effect::Aspm(new_lnkctl & LNKCTL_ASPMC)
        } else {
            Effect::None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(c: &ConfigSpace, at: u64) -> u32 {
        let mut b = [0u8; 4];
        c.read(at, &mut b).unwrap();
        u32::from_le_bytes(b)
    }

    /// The capability chain, walked as Linux's `pci_find_capability()`
    /// does, finds PM, PCIe and MSI-X and ends.
    #[test]
    fn the_capability_chain_lists_pm_pcie_and_msix() {
        let c = ConfigSpace::new(0x744C, 0xC8, 4096);
        assert_eq!(u32_at(&c, 0), 0x744C_1002);
        assert_eq!(u32_at(&c, 8) >> 8, 0x03_00_00, "class: VGA controller");
        let mut at = c.bytes[0x34] as usize;
        let mut ids = Vec::new();
        while at != 0 && ids.len() < 48 {
            ids.push(c.bytes[at]);
            at = c.bytes[at + 1] as usize;
        }
        assert_eq!(ids, [0x01, 0x10, 0x11]);
        let table = u32_at(&c, MSIX_CAP as u64 + 4);
        assert_eq!(table & 7, 4, "MSI-X table BIR");
        assert_eq!(c.read16(MSIX_CAP + 2) & 0x7FF, 7, "8 vectors, N-1 encoded");
    }

    /// Read-only fields keep their value; COMMAND's master bit and
    /// LNKCTL's ASPM field report what changed.
    #[test]
    fn writes_go_through_the_mask_and_report_effects() {
        let mut c = ConfigSpace::new(0x744C, 0, 4096);
        assert_eq!(c.write(0, &[0xFF, 0xFF]), Some(Effect::None));
        // ROM BAR sizing: all ones in, the size's mask out.
        c.write(0x30, &0xFFFF_F800u32.to_le_bytes()).unwrap();
        assert_eq!(u32_at(&c, 0x30), 0xFFFF_F000, "a 4 KiB ROM");
        assert_eq!(c.read16(0), 0x1002, "vendor id is read-only");
        let on = (COMMAND_MEMORY | COMMAND_MASTER).to_le_bytes();
        assert_eq!(c.write(4, &on), Some(Effect::BusMaster(true)));
        assert_eq!(c.write(4, &on), Some(Effect::None), "no change, no effect");
        assert_eq!(
            c.write((EXP_CAP + EXP_LNKCTL) as u64, &[0, 0]),
            Some(Effect::Aspm(0))
        );
        assert_eq!(c.write(4095, &[0, 0]), None, "past the space");
        let mut b = [0u8; 2];
        assert_eq!(c.read(4095, &mut b), None);
    }
}
