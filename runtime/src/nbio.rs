//! NBIO 4.3.0 (Navi3x) hardware init: the HDP flush remap and the
//! doorbell apertures.
//!
//! Order follows `soc21_common_hw_init()`: remap the HDP flush registers
//! (`nbio_v4_3_remap_hdp_registers()`), then open the doorbell aperture
//! (`nbio_v4_3_enable_doorbell_aperture()`); the self-ring aperture comes
//! later (`soc21_common_late_init()` calls
//! `nbio_v4_3_enable_doorbell_selfring_aperture()`) because resizing the
//! doorbell BAR can move it.
//!
//! Why the remap matters: the CPU writes page tables, rings and MQDs in
//! VRAM through the BAR, and those writes sit in HDP (the host data path
//! cache) until it is flushed. The flush register lives in the HDP block
//! at an address a process cannot map on its own page; NBIO can mirror it
//! at a fixed byte offset of the register BAR (the "MMIO register hole",
//! the last 4 KiB page below 512 KiB), so one store there flushes HDP.
//!
//! Only NBIO 4.3.0 is covered. Navi48's NBIF 6.3.1 (`nbif_v6_3_1.c`) uses
//! other registers and is not built here.

use crate::bus::RegisterBus;
use crate::regs::IpBases;
use crate::regs::nbio_4_3_0::init::{
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW, BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL,
    BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL, BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL, DoorbellAperEn,
    RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN, RemapHdpFlushCntl, SelfringAperCntl,
};

/// Byte offset in the register BAR where Linux puts the remapped HDP
/// flush page on hosts with 4 KiB pages: `MMIO_REG_HOLE_OFFSET`, defined
/// in `nbio_v4_3.c` as `0x80000 - PAGE_SIZE`. It is in a `.c` file, so
/// the conformance harness cannot probe it; the value is read from the
/// Linux 6.12 source by hand. Unconfirmed on hardware.
pub const MMIO_REG_HOLE_OFFSET: u32 = 0x8_0000 - 4096;
/// `KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL`: offset of the memory-flush
/// register inside the remapped page.
pub const REMAP_HDP_MEM_FLUSH: u32 = 0;
/// `KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL`.
pub const REMAP_HDP_REG_FLUSH: u32 = 4;

/// Why an NBIO step could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NbioError {
    /// The register is not in the discovered NBIO bases.
    NoRegister { name: &'static str },
    /// The remap offset does not fit the 17-bit dword address field.
    BadRemapOffset { offset: u32 },
    /// A register read as all-ones: the device is gone.
    DeviceGone { name: &'static str },
}

impl core::fmt::Display for NbioError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            NbioError::NoRegister { name } => write!(f, "{name} is not in the NBIO bases"),
            NbioError::BadRemapOffset { offset } => {
                write!(
                    f,
                    "HDP remap offset {offset:#x} does not fit the ADDRESS field"
                )
            }
            NbioError::DeviceGone { name } => write!(f, "{name} read as all-ones"),
        }
    }
}

fn at(r: crate::regs::Reg, bases: &IpBases) -> Result<usize, NbioError> {
    r.byte_offset(bases)
        .ok_or(NbioError::NoRegister { name: r.name })
}

fn remap_value(offset: u32) -> Result<u32, NbioError> {
    let dword = offset >> 2;
    let max = RemapHdpFlushCntl::from_bits(u32::MAX).address();
    if !offset.is_multiple_of(4) || dword > max {
        return Err(NbioError::BadRemapOffset { offset });
    }
    Ok(RemapHdpFlushCntl::new().with_address(dword).into_bits())
}

/// Mirrors the HDP flush registers at `reg_offset` (normally
/// [`MMIO_REG_HOLE_OFFSET`]) of the register BAR (follows
/// `nbio_v4_3_remap_hdp_registers()`).
pub fn remap_hdp<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &IpBases,
    reg_offset: u32,
) -> Result<(), NbioError> {
    let mem = reg_offset
        .checked_add(REMAP_HDP_MEM_FLUSH)
        .ok_or(NbioError::BadRemapOffset { offset: reg_offset })?;
    let reg = reg_offset
        .checked_add(REMAP_HDP_REG_FLUSH)
        .ok_or(NbioError::BadRemapOffset { offset: reg_offset })?;
    let (mem_v, reg_v) = (remap_value(mem)?, remap_value(reg)?);
    bus.write32(at(BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL, nbio)?, mem_v);
    bus.write32(at(BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL, nbio)?, reg_v);
    Ok(())
}

/// Flushes HDP through the remapped register: one store of 0 (what
/// `hdp_v6_0_flush_hdp()` does without a ring), then a read of the same
/// register so the posted write has reached the device before the caller
/// tells the GPU to look at what it wrote.
pub fn flush_hdp<B: RegisterBus + ?Sized>(bus: &B, reg_offset: u32) -> Result<(), NbioError> {
    let at = reg_offset as usize + REMAP_HDP_MEM_FLUSH as usize;
    bus.write32(at, 0);
    if bus.read32(at) == crate::bus::ALL_ONES {
        return Err(NbioError::DeviceGone {
            name: "REMAP_HDP_MEM_FLUSH_CNTL",
        });
    }
    Ok(())
}

/// Opens (or closes) the doorbell BAR: until this bit is set, stores to
/// BAR2 ring nothing (follows `nbio_v4_3_enable_doorbell_aperture()`, a
/// read-modify-write of one field).
pub fn enable_doorbell_aperture<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &IpBases,
    enable: bool,
) -> Result<(), NbioError> {
    let r = at(RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN, nbio)?;
    let cur = bus.read32(r);
    if cur == crate::bus::ALL_ONES {
        return Err(NbioError::DeviceGone {
            name: RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN.name,
        });
    }
    let v = DoorbellAperEn::from_bits(cur).with_bif_doorbell_aper_en(enable);
    bus.write32(r, v.into_bits());
    Ok(())
}

/// Lets the GPU ring its own doorbells by writing to the doorbell BAR's
/// bus address `doorbell_bus` (MES and the CP do this), or turns that off
/// with `None` (follows `nbio_v4_3_enable_doorbell_selfring_aperture()`:
/// base first, control last).
pub fn enable_doorbell_selfring<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &IpBases,
    doorbell_bus: Option<u64>,
) -> Result<(), NbioError> {
    let cntl_at = at(BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL, nbio)?;
    let mut cntl = SelfringAperCntl::new();
    if let Some(base) = doorbell_bus {
        let lo = at(BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW, nbio)?;
        let hi = at(BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH, nbio)?;
        cntl = cntl
            .with_doorbell_selfring_gpa_aper_en(true)
            .with_doorbell_selfring_gpa_aper_mode(true)
            .with_doorbell_selfring_gpa_aper_size(0);
        bus.write32(lo, base as u32);
        bus.write32(hi, (base >> 32) as u32);
    }
    bus.write32(cntl_at, cntl.into_bits());
    Ok(())
}

/// The `nbio` bring-up step: what `soc21_common_hw_init()` and
/// `soc21_common_late_init()` do to NBIO, in their order, with the remap
/// at [`MMIO_REG_HOLE_OFFSET`]. ASPM and the `EPF2_STRAP2` soft-reset
/// strap are left alone (neither affects what barebell drives).
pub fn init<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &IpBases,
    doorbell_bus: u64,
) -> Result<(), NbioError> {
    remap_hdp(bus, nbio, MMIO_REG_HOLE_OFFSET)?;
    enable_doorbell_aperture(bus, nbio, true)?;
    enable_doorbell_selfring(bus, nbio, Some(doorbell_bus))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remap_offsets_outside_the_field_are_refused() {
        assert_eq!(
            remap_value(0x8_0000),
            Err(NbioError::BadRemapOffset { offset: 0x8_0000 })
        );
        assert_eq!(remap_value(2), Err(NbioError::BadRemapOffset { offset: 2 }));
        // The header's mask 0x7FFFC covers the largest value.
        assert_eq!(remap_value(0x7_FFFC), Ok(0x7_FFFC));
    }
}
