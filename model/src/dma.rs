//! The model's view of host memory.
//!
//! A real CP reaches system memory through the GPU's page tables and the
//! IOMMU; anything else faults. The model keeps a list of windows the test
//! harness has mapped and refuses every access outside them, so a wrong
//! address in an MQD, packet or signal handle shows up as a recorded fault
//! rather than as a wild pointer in the test process.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicI64, AtomicU16, AtomicU32, AtomicU64};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaFault {
    pub address: u64,
    pub len: u64,
    pub what: &'static str,
}

impl core::fmt::Display for DmaFault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{}: {:#x} bytes at device address {:#x} are not mapped for the device",
            self.what, self.len, self.address
        )
    }
}

#[derive(Debug, Default)]
pub struct Dma {
    /// `(device address, length, host address)`.
    windows: Vec<(u64, u64, u64)>,
}

impl Dma {
    /// Lets the device touch `len` bytes at `base`.
    ///
    /// # Safety
    /// The range must be valid, writable memory for as long as this model
    /// (or the thread running it) lives, and the host must access any part
    /// the device writes only with atomics or after synchronising through
    /// one (the AQL protocol does this).
    pub unsafe fn map(&mut self, base: u64, len: u64) {
        self.windows.push((base, len, base));
    }

    /// Lets the device reach `len` host bytes at `host` under the device
    /// address `device`: an IOMMU mapping (bus address → host page) or a
    /// piece of modelled VRAM (VRAM offset → its host backing).
    ///
    /// # Safety
    /// As [`Dma::map`], for the host range.
    pub unsafe fn map_at(&mut self, device: u64, host: *mut u8, len: u64) {
        self.windows.push((device, len, host as u64));
    }

    /// Whether any window overlaps `[device, device + len)`.
    pub fn overlaps(&self, device: u64, len: u64) -> bool {
        let end = device.saturating_add(len);
        self.windows
            .iter()
            .any(|&(b, l, _)| device < b.saturating_add(l) && b < end)
    }

    /// Takes away the window that starts at device address `device`: the
    /// device can no longer reach it (an IOMMU unmap). Whether one did.
    pub fn unmap(&mut self, device: u64) -> bool {
        let before = self.windows.len();
        self.windows.retain(|&(b, _, _)| b != device);
        self.windows.len() != before
    }

    /// The host address of device address `address`, if `len` bytes from
    /// it lie in one window.
    pub fn host_of(&self, address: u64, len: u64) -> Option<u64> {
        self.check(address, len, 1, "host_of")
            .ok()
            .map(|h| h as u64)
    }

    /// Bytes from device address `address` to the end of the window
    /// holding it (0 when none does).
    pub fn run_from(&self, address: u64) -> u64 {
        self.windows
            .iter()
            .find(|(base, len, _)| address >= *base && address - base < *len)
            .map_or(0, |(base, len, _)| base + len - address)
    }

    /// Whether every byte of `address..address + len` is in one window.
    pub fn covers(&self, address: u64, len: u64) -> bool {
        self.check(address, len, 1, "covers").is_ok()
    }

    fn check(
        &self,
        address: u64,
        len: u64,
        align: u64,
        what: &'static str,
    ) -> Result<usize, DmaFault> {
        let fault = DmaFault { address, len, what };
        if !address.is_multiple_of(align) {
            return Err(fault);
        }
        let end = address.checked_add(len).ok_or(fault)?;
        let host = self
            .windows
            .iter()
            .find(|&&(b, l, _)| address >= b && b.checked_add(l).is_some_and(|e| end <= e))
            .map(|&(b, _, h)| h + (address - b))
            .ok_or(fault)?;
        // The host side keeps the device address's alignment only if the
        // window does; check the host address too.
        if !host.is_multiple_of(align) {
            return Err(fault);
        }
        usize::try_from(host).map_err(|_| fault)
    }

    pub fn u16(&self, address: u64, what: &'static str) -> Result<&AtomicU16, DmaFault> {
        let a = self.check(address, 2, 2, what)?;
        // SAFETY: `check` found the aligned range inside a window that
        // `map`'s caller promised is live memory accessed atomically.
        Ok(unsafe { AtomicU16::from_ptr(a as *mut u16) })
    }

    pub fn u32(&self, address: u64, what: &'static str) -> Result<&AtomicU32, DmaFault> {
        let a = self.check(address, 4, 4, what)?;
        // SAFETY: as in `u16`.
        Ok(unsafe { AtomicU32::from_ptr(a as *mut u32) })
    }

    pub fn u64(&self, address: u64, what: &'static str) -> Result<&AtomicU64, DmaFault> {
        let a = self.check(address, 8, 8, what)?;
        // SAFETY: as in `u16`.
        Ok(unsafe { AtomicU64::from_ptr(a as *mut u64) })
    }

    pub fn i64(&self, address: u64, what: &'static str) -> Result<&AtomicI64, DmaFault> {
        let a = self.check(address, 8, 8, what)?;
        // SAFETY: as in `u16`.
        Ok(unsafe { AtomicI64::from_ptr(a as *mut i64) })
    }

    /// Copies `out.len()` bytes from device-visible memory. Only for data
    /// the protocol has already published (e.g. a packet body after an
    /// acquire load of its header).
    pub fn read(&self, address: u64, out: &mut [u8], what: &'static str) -> Result<(), DmaFault> {
        let a = self.check(address, out.len() as u64, 1, what)?;
        // SAFETY: the range is inside a mapped window; the caller has
        // synchronised with the writer per the doc comment.
        unsafe { core::ptr::copy_nonoverlapping(a as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }
}

/// The gfx9 page-table walk ([`crate::decode::pte_v9::walk`]) reads its
/// entries through the device's DMA windows.
impl crate::decode::pte_v9::TableMemory for Dma {
    fn entry(&self, address: u64) -> Option<u64> {
        self.u64(address, "gfx9 page table entry")
            .ok()
            .map(|e| e.load(core::sync::atomic::Ordering::Acquire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_outside_misaligned_and_overflowing() {
        let mut mem = [0u64; 4];
        let base = mem.as_mut_ptr() as u64;
        let mut d = Dma::default();
        // SAFETY: `mem` outlives `d`.
        unsafe { d.map(base, 32) };
        d.u64(base + 24, "x")
            .unwrap()
            .store(5, core::sync::atomic::Ordering::Relaxed);
        assert!(d.u64(base + 32, "x").is_err());
        assert!(d.u64(base + 4, "x").is_err());
        assert!(d.u64(u64::MAX - 3, "x").is_err());
        let mut buf = [0u8; 8];
        d.read(base + 24, &mut buf, "x").unwrap();
        assert_eq!(u64::from_le_bytes(buf), 5);
        assert!(d.read(base + 25, &mut buf, "x").is_err());
    }

    #[test]
    fn translated_window_reaches_the_host_bytes_at_the_device_address() {
        let mut mem = [0u64; 4];
        let host = mem.as_mut_ptr().cast::<u8>();
        let mut d = Dma::default();
        // SAFETY: `mem` outlives `d`.
        unsafe { d.map_at(0x1_0000_0000, host, 32) };
        d.u64(0x1_0000_0008, "x")
            .unwrap()
            .store(7, core::sync::atomic::Ordering::Relaxed);
        assert_eq!(mem[1], 7);
        assert!(d.covers(0x1_0000_0000, 32));
        assert!(!d.covers(0x1_0000_0000, 33));
        // The host address is not a device address here.
        assert!(d.u64(host as u64, "x").is_err());
    }
}
