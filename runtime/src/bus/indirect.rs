//! Registers beyond the end of the register BAR, through the NBIO's
//! index/data pair.
//!
//! BAR5 on a Navi3x/Navi4x board is 1 MiB, but the discovered segment
//! bases reach far past it (the upper segments of most IPs sit around
//! dword 0x240_0000, byte 0x900_0000). Linux sends any register at or
//! beyond `rmmio_size` through `adev->pcie_rreg/pcie_wreg`
//! (`amdgpu_device_rreg()`), which on soc21 and soc24 are
//! `amdgpu_device_indirect_rreg()`/`_wreg()` over
//! `BIF_BX_PF0_RSMU_INDEX`/`_DATA` (`nbio_v4_3_get_pcie_index_offset()`,
//! `nbif_v6_3_1_get_pcie_index_offset()`). The order this module follows
//! is theirs: store the byte address to INDEX, read INDEX back so the
//! store has landed, then read or write DATA (and read DATA back after a
//! write). The pair is one shared cursor on the device, so the whole
//! sequence holds a lock (`adev->pcie_idx_lock`): two threads interleaving
//! INDEX stores would read or write each other's registers.
//!
//! The soc21/soc24 accessors take a 32-bit address (the `_ext` variants
//! with `PCIE_INDEX_HI` are not what those SoCs install), so an offset
//! that does not fit 32 bits reads as all-ones and its writes are dropped,
//! as an unclaimed PCIe access would be.

use crate::bus::{ALL_ONES, Block, BlockError, RegisterBus};
use crate::regs::{IpBases, Reg};

/// Why the index/data pair cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndirectError {
    /// A register of the pair is not in the discovered NBIO bases.
    Register(BlockError),
    /// The pair itself lies beyond the directly mapped range, so it could
    /// never be reached.
    PairOutsideBar {
        name: &'static str,
        byte_offset: usize,
        bar_len: usize,
    },
}

impl core::fmt::Display for IndirectError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            IndirectError::Register(e) => write!(f, "{e}"),
            IndirectError::PairOutsideBar {
                name,
                byte_offset,
                bar_len,
            } => write!(
                f,
                "{name} at byte {byte_offset:#x} lies beyond the {bar_len:#x}-byte register BAR"
            ),
        }
    }
}

/// A [`RegisterBus`] that reaches the whole register space: offsets
/// inside the BAR go straight to `inner`, the rest through the NBIO's
/// index/data pair.
#[derive(Debug)]
pub struct IndirectBus<B> {
    inner: B,
    bar_len: usize,
    index: usize,
    data: usize,
    lock: spin::Mutex<()>,
}

impl<B: RegisterBus> IndirectBus<B> {
    /// `bar_len` is how many bytes of the register space `inner` maps
    /// directly (`rmmio_size`: BAR5's length); `pair` is the NBIO's
    /// `(RSMU_INDEX, RSMU_DATA)` (`crate::nbio::NbioRegs`), resolved
    /// against the NBIO's bases.
    pub fn new(
        inner: B,
        bar_len: usize,
        pair: (Reg, Reg),
        nbio_bases: &IpBases,
    ) -> Result<Self, IndirectError> {
        let nbio = Block::new(&inner, *nbio_bases);
        let at = |r: Reg| {
            let off = nbio.offset(r).map_err(IndirectError::Register)?;
            if off.checked_add(4).is_none_or(|end| end > bar_len) {
                return Err(IndirectError::PairOutsideBar {
                    name: r.name,
                    byte_offset: off,
                    bar_len,
                });
            }
            Ok(off)
        };
        Ok(IndirectBus {
            index: at(pair.0)?,
            data: at(pair.1)?,
            inner,
            bar_len,
            lock: spin::Mutex::new(()),
        })
    }

    /// Whether `byte_offset` is served directly by the BAR.
    pub fn is_direct(&self, byte_offset: usize) -> bool {
        byte_offset
            .checked_add(4)
            .is_some_and(|end| end <= self.bar_len)
    }

    /// The wrapped bus.
    pub fn inner(&self) -> &B {
        &self.inner
    }
}

impl<B: RegisterBus> RegisterBus for IndirectBus<B> {
    fn read32(&self, byte_offset: usize) -> u32 {
        if self.is_direct(byte_offset) {
            return self.inner.read32(byte_offset);
        }
        let Ok(address) = u32::try_from(byte_offset) else {
            return ALL_ONES;
        };
        // follows amdgpu_device_indirect_rreg()
        let _held = self.lock.lock();
        self.inner.write32(self.index, address);
        self.inner.read32(self.index);
        self.inner.read32(self.data)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        if self.is_direct(byte_offset) {
            return self.inner.write32(byte_offset, value);
        }
        let Ok(address) = u32::try_from(byte_offset) else {
            return;
        };
        // follows amdgpu_device_indirect_wreg()
        let _held = self.lock.lock();
        self.inner.write32(self.index, address);
        self.inner.read32(self.index);
        self.inner.write32(self.data, value);
        self.inner.read32(self.data);
    }
}
