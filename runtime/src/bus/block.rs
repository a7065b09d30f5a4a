//! A register block: one IP instance's registers bound to a bus.
//!
//! A [`Reg`] names a dword offset inside one of its IP's segments; the
//! discovery table gives each IP instance its segment bases. A [`Block`]
//! holds the bus and those bases together, so code that programs a block
//! names registers and nothing else (the role of Linux's `RREG32_SOC15()`
//! / `WREG32_SOC15()` over `adev->reg_offset[ip][inst]`, and of
//! tinygrad's `AMRegister.read/write/update`).

use crate::bus::{RegCondition, RegisterBus, WaitError, poll};
use crate::regs::{IpBases, Reg};
use crate::time::Clock;

/// Why a register of a block could not be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockError {
    /// The register's segment (`BASE_IDX`) has no base in the discovered
    /// bases, or the sum overflows.
    OutsideBases { register: &'static str },
    /// A bounded wait on the register ended without its condition.
    Wait(WaitError),
    /// The generation has no register table for this block yet.
    Unsupported(crate::ip::Unsupported),
}

impl core::fmt::Display for BlockError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            BlockError::OutsideBases { register } => {
                write!(f, "register {register} has no base in the discovery table")
            }
            BlockError::Wait(e) => write!(f, "{e}"),
            BlockError::Unsupported(e) => write!(f, "{e}"),
        }
    }
}

impl From<crate::ip::Unsupported> for BlockError {
    fn from(e: crate::ip::Unsupported) -> Self {
        BlockError::Unsupported(e)
    }
}

impl From<WaitError> for BlockError {
    fn from(e: WaitError) -> Self {
        BlockError::Wait(e)
    }
}

/// One IP instance's registers on `bus`.
#[derive(Debug)]
pub struct Block<'b, B: ?Sized> {
    pub bus: &'b B,
    pub bases: IpBases,
}

impl<B: ?Sized> Clone for Block<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: ?Sized> Copy for Block<'_, B> {}

impl<'b, B: RegisterBus + ?Sized> Block<'b, B> {
    pub fn new(bus: &'b B, bases: IpBases) -> Self {
        Block { bus, bases }
    }

    /// The register's byte offset in the register aperture.
    pub fn offset(&self, reg: Reg) -> Result<usize, BlockError> {
        reg.byte_offset(&self.bases)
            .ok_or(BlockError::OutsideBases { register: reg.name })
    }

    /// The byte offset of the `index`-th register of an array that starts
    /// at `reg` and repeats every `stride` dwords (per-VMID contexts,
    /// invalidation engines).
    pub fn offset_nth(&self, reg: Reg, index: u32, stride: u32) -> Result<usize, BlockError> {
        let base = self.offset(reg)?;
        index
            .checked_mul(stride)
            .and_then(|d| usize::try_from(d).ok())
            .and_then(|d| d.checked_mul(4))
            .and_then(|d| base.checked_add(d))
            .ok_or(BlockError::OutsideBases { register: reg.name })
    }

    pub fn read(&self, reg: Reg) -> Result<u32, BlockError> {
        Ok(self.bus.read32(self.offset(reg)?))
    }

    pub fn write(&self, reg: Reg, value: u32) -> Result<(), BlockError> {
        self.bus.write32(self.offset(reg)?, value);
        Ok(())
    }

    /// Read-modify-write: the bits of `mask` take `value`'s, the rest keep
    /// the register's. Returns what was written.
    pub fn update(&self, reg: Reg, mask: u32, value: u32) -> Result<u32, BlockError> {
        let at = self.offset(reg)?;
        let new = self.bus.read32(at) & !mask | value & mask;
        self.bus.write32(at, new);
        Ok(new)
    }

    /// Writes a 64-bit value to a `_LO32`/`_HI32` (or `_LO`/`_HI`) pair,
    /// low half first.
    pub fn write64(&self, lo: Reg, hi: Reg, value: u64) -> Result<(), BlockError> {
        let (lo_at, hi_at) = (self.offset(lo)?, self.offset(hi)?);
        self.bus.write32(lo_at, value as u32);
        self.bus.write32(hi_at, (value >> 32) as u32);
        Ok(())
    }

    /// Waits until `(reg & mask) == want`, for at most `timeout_ns` on
    /// `clock`; `what` names the condition in the error.
    pub fn poll<C: Clock + ?Sized>(
        &self,
        clock: &C,
        reg: Reg,
        mask: u32,
        want: u32,
        what: &'static str,
        timeout_ns: u64,
    ) -> Result<u32, BlockError> {
        let cond = RegCondition {
            what,
            byte_offset: self.offset(reg)?,
            mask,
            want,
        };
        Ok(poll(self.bus, clock, cond, timeout_ns)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::RefCell;

    struct Regs(RefCell<[u32; 64]>);
    impl RegisterBus for Regs {
        fn read32(&self, at: usize) -> u32 {
            self.0.borrow()[at / 4]
        }
        fn write32(&self, at: usize, v: u32) {
            self.0.borrow_mut()[at / 4] = v;
        }
    }

    const R: Reg = Reg {
        name: "R",
        offset: 2,
        base_idx: 1,
    };
    /// Past the 16 segment bases an `IpBases` holds.
    const FAR: Reg = Reg {
        name: "FAR",
        offset: 0,
        base_idx: 16,
    };

    #[test]
    fn block_resolves_through_the_segment_base_and_updates_only_the_mask() {
        let regs = Regs(RefCell::new([0; 64]));
        let b = Block::new(&regs, IpBases::new(&[0, 10, 0, 0, 0, 0, 0, 0]));
        assert_eq!(b.offset(R), Ok(48));
        b.write(R, 0xF0F0).unwrap();
        assert_eq!(regs.0.borrow()[12], 0xF0F0);
        assert_eq!(b.update(R, 0x00FF, 0x1234).unwrap(), 0xF034);
        assert_eq!(b.read(R), Ok(0xF034));
        assert_eq!(b.offset_nth(R, 3, 2), Ok(48 + 24));
        assert_eq!(
            b.read(FAR),
            Err(BlockError::OutsideBases { register: "FAR" })
        );
    }
}
