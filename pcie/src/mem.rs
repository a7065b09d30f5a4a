//! Config spaces held in memory: a saved dump, or a synthetic device.
//!
//! `barebell pci decode` reads a raw dump through [`ConfigBytes`]; the
//! tests and the fuzz target build edge cases in [`ConfigArray`].

use crate::config::ConfigSpace;

/// A read-only view of a dump. Writes are dropped, reads past the end
/// return all-ones (what a master abort would return).
#[derive(Debug, Clone, Copy)]
pub struct ConfigBytes<'a> {
    bytes: &'a [u8],
}

impl<'a> ConfigBytes<'a> {
    /// Any length is accepted; [`ConfigSpace::size`] reports 4096 when the
    /// dump covers the extended space and 256 otherwise.
    pub const fn new(bytes: &'a [u8]) -> Self {
        ConfigBytes { bytes }
    }
}

fn dword_at(bytes: &[u8], offset: u16) -> u32 {
    let o = usize::from(offset & !3);
    match bytes.get(o..o + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => u32::MAX,
    }
}

impl ConfigSpace for ConfigBytes<'_> {
    fn size(&self) -> usize {
        if self.bytes.len() >= 4096 { 4096 } else { 256 }
    }
    fn read32(&self, offset: u16) -> u32 {
        dword_at(self.bytes, offset)
    }
    fn write32(&mut self, _offset: u16, _value: u32) {}
}

/// An owned, writable 4 KiB config space whose reported size is 256 or
/// 4096. Writes land verbatim (no read-only or write-1-to-clear bits); the
/// tests that need register semantics wrap it.
#[derive(Clone)]
pub struct ConfigArray {
    bytes: [u8; 4096],
    size: usize,
}

impl core::fmt::Debug for ConfigArray {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ConfigArray")
            .field("size", &self.size)
            .field("vendor", &self.vendor_id())
            .field("device", &self.device_id())
            .finish()
    }
}

impl ConfigArray {
    /// All zeros; `size` above 256 means 4096.
    pub const fn new(size: usize) -> Self {
        ConfigArray {
            bytes: [0; 4096],
            size: if size > 256 { 4096 } else { 256 },
        }
    }

    /// Copies a dump in (truncated to 4096 bytes); the size follows the
    /// dump's length.
    pub fn from_bytes(dump: &[u8]) -> Self {
        let mut a = ConfigArray::new(dump.len());
        let n = dump.len().min(4096);
        if let (Some(dst), Some(src)) = (a.bytes.get_mut(..n), dump.get(..n)) {
            dst.copy_from_slice(src);
        }
        a
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.size).unwrap_or(&self.bytes)
    }

    fn live_mut(&mut self) -> &mut [u8] {
        let n = self.size.min(self.bytes.len());
        self.bytes.get_mut(..n).unwrap_or(&mut [])
    }
}

impl ConfigSpace for ConfigArray {
    fn size(&self) -> usize {
        self.size
    }
    fn read32(&self, offset: u16) -> u32 {
        dword_at(self.as_bytes(), offset)
    }
    fn write32(&mut self, offset: u16, value: u32) {
        let o = usize::from(offset & !3);
        if let Some(d) = self.live_mut().get_mut(o..o + 4) {
            d.copy_from_slice(&value.to_le_bytes());
        }
    }
    fn write16(&mut self, offset: u16, value: u16) {
        let o = usize::from(offset & !1);
        if let Some(d) = self.live_mut().get_mut(o..o + 2) {
            d.copy_from_slice(&value.to_le_bytes());
        }
    }
    fn write8(&mut self, offset: u16, value: u8) {
        if let Some(d) = self.live_mut().get_mut(usize::from(offset)) {
            *d = value;
        }
    }
}
