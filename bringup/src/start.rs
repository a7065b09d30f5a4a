//! Start-of-day state: what an earlier driver left on the device.

/// barebell's signature in `SCRATCH_REG7` after a successful bring-up
/// (`BB` and the format version 1; tinygrad's AM writes its own
/// `AMDev.Version`, `0xA000_0008` in 0.14.0, so neither takes the other's
/// device for its own).
pub const SIGNATURE: u32 = 0xBB00_0001;
