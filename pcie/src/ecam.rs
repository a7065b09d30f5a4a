//! ECAM (the PCIe "enhanced configuration access mechanism"): each
//! function's 4 KiB of config space is memory at
//! `base + (bus - first_bus) << 20 | device << 15 | function << 12`.
//!
//! This is how the unikernel reaches config space: firmware reports the
//! window in ACPI's MCFG table (base, segment, bus range), which is what
//! [`Ecam::new`] takes.

use crate::bdf::Bdf;
use crate::config::ConfigSpace;

/// Config access to many functions, addressed by BDF. Implemented by
/// [`Ecam`] and, on x86, [`crate::portio::PortIo`]; [`crate::enumerate`]
/// walks buses through it. Methods take `&self` because the hardware, not
/// Rust, owns the state; implementations must not be shared across threads
/// unless their accesses are atomic (ECAM's are; port I/O's are not).
pub trait ConfigAccess {
    /// Buses this access method reaches, inclusive.
    fn bus_range(&self) -> (u8, u8);
    /// 4096 for ECAM, 256 for port I/O.
    fn space_size(&self) -> usize;
    /// All-ones for an address it cannot reach.
    fn read32(&self, bdf: Bdf, offset: u16) -> u32;
    fn write32(&self, bdf: Bdf, offset: u16, value: u32);
    fn read16(&self, bdf: Bdf, offset: u16) -> u16 {
        (self.read32(bdf, offset & !3) >> (u32::from(offset & 2) * 8)) as u16
    }
    fn read8(&self, bdf: Bdf, offset: u16) -> u8 {
        (self.read32(bdf, offset & !3) >> (u32::from(offset & 3) * 8)) as u8
    }
    fn write16(&self, bdf: Bdf, offset: u16, value: u16);
    fn write8(&self, bdf: Bdf, offset: u16, value: u8);
}

/// One function seen through a [`ConfigAccess`].
#[derive(Debug, Clone, Copy)]
pub struct Function<'a, A: ?Sized> {
    access: &'a A,
    pub bdf: Bdf,
}

impl<'a, A: ConfigAccess + ?Sized> Function<'a, A> {
    pub fn new(access: &'a A, bdf: Bdf) -> Self {
        Function { access, bdf }
    }
}

impl<A: ConfigAccess + ?Sized> ConfigSpace for Function<'_, A> {
    fn size(&self) -> usize {
        self.access.space_size()
    }
    fn read32(&self, offset: u16) -> u32 {
        self.access.read32(self.bdf, offset)
    }
    fn write32(&mut self, offset: u16, value: u32) {
        self.access.write32(self.bdf, offset, value)
    }
    fn read16(&self, offset: u16) -> u16 {
        self.access.read16(self.bdf, offset)
    }
    fn read8(&self, offset: u16) -> u8 {
        self.access.read8(self.bdf, offset)
    }
    fn write16(&mut self, offset: u16, value: u16) {
        self.access.write16(self.bdf, offset, value)
    }
    fn write8(&mut self, offset: u16, value: u8) {
        self.access.write8(self.bdf, offset, value)
    }
}

/// Why an ECAM window was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcamError {
    /// `first_bus` is above `last_bus`.
    BusRange { first_bus: u8, last_bus: u8 },
    /// The base is not 1 MiB aligned (each bus occupies 1 MiB).
    Misaligned { base: usize },
}

impl core::fmt::Display for EcamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EcamError::BusRange {
                first_bus,
                last_bus,
            } => write!(f, "ECAM bus range {first_bus:#x}..={last_bus:#x} is empty"),
            EcamError::Misaligned { base } => {
                write!(f, "ECAM base {base:#x} is not 1 MiB aligned")
            }
        }
    }
}

/// A mapped ECAM window for one segment and bus range.
#[derive(Debug)]
pub struct Ecam {
    base: *mut u8,
    segment: u16,
    first_bus: u8,
    last_bus: u8,
}

impl Ecam {
    /// Bytes of window per bus.
    pub const BUS_STRIDE: usize = 1 << 20;

    /// # Safety
    /// `base` must point to `(last_bus - first_bus + 1)` MiB that are the
    /// ECAM window of `segment` (or memory standing in for it), mapped
    /// uncached for device memory, valid for volatile 8/16/32-bit reads and
    /// writes for as long as the returned value lives.
    pub unsafe fn new(
        base: *mut u8,
        segment: u16,
        first_bus: u8,
        last_bus: u8,
    ) -> Result<Self, EcamError> {
        if first_bus > last_bus {
            return Err(EcamError::BusRange {
                first_bus,
                last_bus,
            });
        }
        if !(base as usize).is_multiple_of(Self::BUS_STRIDE) {
            return Err(EcamError::Misaligned {
                base: base as usize,
            });
        }
        Ok(Ecam {
            base,
            segment,
            first_bus,
            last_bus,
        })
    }

    /// Bytes the window spans.
    pub fn len(&self) -> usize {
        (usize::from(self.last_bus - self.first_bus) + 1) * Self::BUS_STRIDE
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Offset of a register in the window, or `None` outside it.
    pub fn offset_of(&self, bdf: Bdf, offset: u16) -> Option<usize> {
        if bdf.domain != self.segment
            || bdf.bus < self.first_bus
            || bdf.bus > self.last_bus
            || bdf.device > 31
            || bdf.function > 7
            || offset >= 4096
        {
            return None;
        }
        Some(
            usize::from(bdf.bus - self.first_bus) << 20
                | usize::from(bdf.device) << 15
                | usize::from(bdf.function) << 12
                | usize::from(offset),
        )
    }

    fn ptr(&self, bdf: Bdf, offset: u16, align: u16) -> Option<*mut u8> {
        let at = self.offset_of(bdf, offset & !(align - 1))?;
        // SAFETY: `at` < len() (checked by offset_of), and new()'s contract
        // makes the whole window valid.
        Some(unsafe { self.base.add(at) })
    }
}

impl ConfigAccess for Ecam {
    fn bus_range(&self) -> (u8, u8) {
        (self.first_bus, self.last_bus)
    }
    fn space_size(&self) -> usize {
        4096
    }
    fn read32(&self, bdf: Bdf, offset: u16) -> u32 {
        match self.ptr(bdf, offset, 4) {
            // SAFETY: in-window and 4-byte aligned (base is 1 MiB aligned,
            // the offset was rounded down); see new().
            Some(p) => unsafe { p.cast::<u32>().read_volatile() },
            None => u32::MAX,
        }
    }
    fn read16(&self, bdf: Bdf, offset: u16) -> u16 {
        match self.ptr(bdf, offset, 2) {
            // SAFETY: in-window and 2-byte aligned; see new().
            Some(p) => unsafe { p.cast::<u16>().read_volatile() },
            None => u16::MAX,
        }
    }
    fn read8(&self, bdf: Bdf, offset: u16) -> u8 {
        match self.ptr(bdf, offset, 1) {
            // SAFETY: in-window; see new().
            Some(p) => unsafe { p.read_volatile() },
            None => u8::MAX,
        }
    }
    fn write32(&self, bdf: Bdf, offset: u16, value: u32) {
        if let Some(p) = self.ptr(bdf, offset, 4) {
            // SAFETY: in-window and aligned; see new().
            unsafe { p.cast::<u32>().write_volatile(value) }
        }
    }
    fn write16(&self, bdf: Bdf, offset: u16, value: u16) {
        if let Some(p) = self.ptr(bdf, offset, 2) {
            // SAFETY: in-window and aligned; see new().
            unsafe { p.cast::<u16>().write_volatile(value) }
        }
    }
    fn write8(&self, bdf: Bdf, offset: u16, value: u8) {
        if let Some(p) = self.ptr(bdf, offset, 1) {
            // SAFETY: in-window; see new().
            unsafe { p.write_volatile(value) }
        }
    }
}

/// One ECAM window as ACPI's MCFG table describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McfgEntry {
    pub base: u64,
    pub segment: u16,
    pub first_bus: u8,
    pub last_bus: u8,
}

impl McfgEntry {
    /// Bytes the window spans: 1 MiB per bus.
    pub fn len(&self) -> u64 {
        (u64::from(self.last_bus.saturating_sub(self.first_bus)) + 1) << 20
    }

    pub fn is_empty(&self) -> bool {
        self.last_bus < self.first_bus
    }
}

/// Offset of the first allocation entry: the 36-byte ACPI table header
/// plus 8 reserved bytes (ACPI spec, "PCI Express Memory-mapped
/// Configuration Space base address Description Table"; Linux reads it
/// the same way in pci_mmcfg_parse()).
pub const MCFG_ENTRIES_OFFSET: usize = 44;
/// Size of one allocation entry: base (8), segment (2), first and last
/// bus (1 + 1), reserved (4).
pub const MCFG_ENTRY_SIZE: usize = 16;

/// The windows listed in a raw MCFG table (e.g.
/// `/sys/firmware/acpi/tables/MCFG`, or the table firmware hands a
/// unikernel). The table's own length field bounds the walk; a truncated
/// table yields only its complete entries, a table without the `MCFG`
/// signature yields none.
pub fn mcfg_entries(table: &[u8]) -> impl Iterator<Item = McfgEntry> + '_ {
    let ok = table.get(..4) == Some(b"MCFG");
    let declared = table
        .get(4..8)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .map_or(0, |n| n as usize);
    let end = if ok { declared.min(table.len()) } else { 0 };
    let body = table.get(MCFG_ENTRIES_OFFSET..end).unwrap_or(&[]);
    body.chunks_exact(MCFG_ENTRY_SIZE).map(|e| {
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            if let Some(s) = e.get(o..o + 8) {
                b.copy_from_slice(s);
            }
            u64::from_le_bytes(b)
        };
        McfgEntry {
            base: u64_at(0),
            segment: u16::from_le_bytes([
                e.get(8).copied().unwrap_or(0),
                e.get(9).copied().unwrap_or(0),
            ]),
            first_bus: e.get(10).copied().unwrap_or(0),
            last_bus: e.get(11).copied().unwrap_or(0),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcfg_entries_follow_the_acpi_layout() {
        // A hand-assembled table: header (signature, length 60), then one
        // entry: base 0xb000_0000, segment 0, buses 0..=0xff.
        let mut t = [0u8; 60];
        t[..4].copy_from_slice(b"MCFG");
        t[4..8].copy_from_slice(&60u32.to_le_bytes());
        t[44..52].copy_from_slice(&0xb000_0000u64.to_le_bytes());
        t[54] = 0x00;
        t[55] = 0xff;
        let v: [Option<McfgEntry>; 2] = {
            let mut it = mcfg_entries(&t);
            [it.next(), it.next()]
        };
        assert_eq!(
            v,
            [
                Some(McfgEntry {
                    base: 0xb000_0000,
                    segment: 0,
                    first_bus: 0,
                    last_bus: 0xff
                }),
                None
            ]
        );
        assert_eq!(v[0].map(|e| e.len()), Some(256 << 20));
        let mut bad = t;
        bad[0] = b'X';
        assert_eq!(mcfg_entries(&bad).count(), 0);
        assert_eq!(mcfg_entries(&t[..50]).count(), 0, "truncated entry");
    }
}
