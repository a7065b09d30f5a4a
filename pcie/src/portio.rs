//! x86 configuration mechanism #1: write an address to port 0xCF8, then
//! move data through 0xCFC..=0xCFF. Reaches only the first 256 bytes of
//! each function and only segment 0; it is the fallback when firmware
//! reports no ECAM window.
//!
//! The address/data pair is two separate accesses, so two agents using it
//! at once corrupt each other. [`PortIo`] is therefore neither `Send` nor
//! `Sync`: one owner, one CPU.
//!
//! The development VM's kernel has no `ioperm`/`iopl`, so this runs in
//! the QEMU guest of `cargo xtask qemu-pci`, where it enumerates a q35
//! chipset and must equal the guest kernel's sysfs.

use crate::bdf::Bdf;
use crate::ecam::ConfigAccess;
use core::arch::asm;
use core::marker::PhantomData;

pub const CONFIG_ADDRESS: u16 = 0xcf8;
pub const CONFIG_DATA: u16 = 0xcfc;

/// The CONFIG_ADDRESS value for a register (bit 31 enable, bus in
/// [23:16], device [15:11], function [10:8], dword offset [7:2]); the
/// layout of `PCI_CONF1_ADDRESS()` in arch/x86/pci/direct.c without its
/// AMD extended-register bits.
pub const fn conf1_address(bdf: Bdf, offset: u16) -> u32 {
    0x8000_0000
        | (bdf.bus as u32) << 16
        | ((bdf.device & 0x1f) as u32) << 11
        | ((bdf.function & 7) as u32) << 8
        | (offset & 0xfc) as u32
}

/// Port-I/O config access.
#[derive(Debug)]
pub struct PortIo {
    _not_send_sync: PhantomData<*const ()>,
}

impl PortIo {
    /// # Safety
    /// The caller must be allowed to execute `in`/`out` on ports
    /// 0xCF8..=0xCFF (ring 0, or IOPL 3 on Linux), must be the only user of
    /// those ports (no kernel driver, no other thread) while this value
    /// lives, and the platform must implement mechanism #1.
    pub unsafe fn new() -> Self {
        PortIo {
            _not_send_sync: PhantomData,
        }
    }

    fn reachable(bdf: Bdf, offset: u16) -> bool {
        bdf.domain == 0 && offset < 256
    }

    fn select(&self, bdf: Bdf, offset: u16) {
        // SAFETY: new()'s contract grants exclusive access to the ports.
        unsafe { outl(CONFIG_ADDRESS, conf1_address(bdf, offset)) }
    }
}

/// # Safety
/// Port access must be permitted and have no side effects beyond the
/// config cycle it starts (guaranteed for 0xCF8/0xCFC by new()).
unsafe fn outl(port: u16, v: u32) {
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("out dx, eax", in("dx") port, in("eax") v, options(nomem, nostack, preserves_flags))
    }
}
/// # Safety
/// As [`outl`].
unsafe fn outw(port: u16, v: u16) {
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("out dx, ax", in("dx") port, in("ax") v, options(nomem, nostack, preserves_flags))
    }
}
/// # Safety
/// As [`outl`].
unsafe fn outb(port: u16, v: u8) {
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("out dx, al", in("dx") port, in("al") v, options(nomem, nostack, preserves_flags))
    }
}
/// # Safety
/// As [`outl`].
unsafe fn inl(port: u16) -> u32 {
    let v: u32;
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("in eax, dx", out("eax") v, in("dx") port, options(nomem, nostack, preserves_flags))
    }
    v
}
/// # Safety
/// As [`outl`].
unsafe fn inw(port: u16) -> u16 {
    let v: u16;
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("in ax, dx", out("ax") v, in("dx") port, options(nomem, nostack, preserves_flags))
    }
    v
}
/// # Safety
/// As [`outl`].
unsafe fn inb(port: u16) -> u8 {
    let v: u8;
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("in al, dx", out("al") v, in("dx") port, options(nomem, nostack, preserves_flags))
    }
    v
}

impl ConfigAccess for PortIo {
    fn bus_range(&self) -> (u8, u8) {
        (0, 255)
    }
    fn space_size(&self) -> usize {
        256
    }
    fn read32(&self, bdf: Bdf, offset: u16) -> u32 {
        if !Self::reachable(bdf, offset) {
            return u32::MAX;
        }
        self.select(bdf, offset);
        // SAFETY: new()'s contract.
        unsafe { inl(CONFIG_DATA) }
    }
    fn read16(&self, bdf: Bdf, offset: u16) -> u16 {
        if !Self::reachable(bdf, offset) {
            return u16::MAX;
        }
        self.select(bdf, offset);
        // SAFETY: new()'s contract.
        unsafe { inw(CONFIG_DATA + (offset & 2)) }
    }
    fn read8(&self, bdf: Bdf, offset: u16) -> u8 {
        if !Self::reachable(bdf, offset) {
            return u8::MAX;
        }
        self.select(bdf, offset);
        // SAFETY: new()'s contract.
        unsafe { inb(CONFIG_DATA + (offset & 3)) }
    }
    fn write32(&self, bdf: Bdf, offset: u16, value: u32) {
        if Self::reachable(bdf, offset) {
            self.select(bdf, offset);
            // SAFETY: new()'s contract.
            unsafe { outl(CONFIG_DATA, value) }
        }
    }
    fn write16(&self, bdf: Bdf, offset: u16, value: u16) {
        if Self::reachable(bdf, offset) {
            self.select(bdf, offset);
            // SAFETY: new()'s contract.
            unsafe { outw(CONFIG_DATA + (offset & 2), value) }
        }
    }
    fn write8(&self, bdf: Bdf, offset: u16, value: u8) {
        if Self::reachable(bdf, offset) {
            self.select(bdf, offset);
            // SAFETY: new()'s contract.
            unsafe { outb(CONFIG_DATA + (offset & 3), value) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_layout_matches_the_conf1_macro() {
        // PCI_CONF1_ADDRESS(bus=3, devfn=PCI_DEVFN(0x1f, 7), reg=0x3e)
        // = 0x80000000 | 3 << 16 | 0xff << 8 | 0x3c, worked by hand.
        assert_eq!(conf1_address(Bdf::new(0, 3, 0x1f, 7), 0x3e), 0x8003_ff3c);
        assert_eq!(conf1_address(Bdf::new(0, 0, 0, 0), 0), 0x8000_0000);
    }
}
