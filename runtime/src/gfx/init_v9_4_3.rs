//! What GC 9.4.3 (MI300) sets per XCC before the RLC and MEC start, and
//! the per-process aperture registers KFD hands the HWS:
//!
//! - [`golden`], `gfx_v9_4_3_init_golden_registers()`:
//!   `GB_ADDR_CONFIG = GOLDEN_GB_ADDR_CONFIG` (0x2a114042), then by the
//!   ASIC revision (`adev->rev_id`, [`crate::nbio::rev_id_v7_9`]): on
//!   revision 0 `TCP_UTCL1_CNTL1.REDUCE_FIFO_DEPTH_BY_2` = 2, otherwise
//!   `TCP_UTCL1_CNTL2.SPARE` = 1.
//! - [`constants`], `gfx_v9_4_3_xcc_constants_init()`: for every VMID
//!   (`soc15_grbm_select()` on it), `SH_MEM_CONFIG` with unaligned access
//!   and `RETRY_DISABLE` (`adev->gmc.noretry`, 1 on GC 9.4.3 by
//!   `amdgpu_gmc_noretry_set()`), and `SH_MEM_BASES` 0 on VMID 0, the
//!   private and shared apertures `gmc_v9_0_sw_init()` places
//!   (0x1000… and 0x2000…, bits 63:48) on the others; then
//!   `gfx_v9_4_3_xcc_init_compute_vmid()`'s apertures on the KFD VMIDs
//!   (`first_kfd_vmid`..15: 64-bit, unaligned, both bases
//!   `DEFAULT_SH_MEM_BASES` 0x6000); VMID 0 selected again at the end.
//! - [`qpd_sh_mem_config`] / [`qpd_sh_mem_bases`]: what `update_qpd_v9()`
//!   puts in a process's MAP_PROCESS on GC 9.4.3 (unaligned, retry off as
//!   `noretry` and XNACK off make it, `F8_MODE`; the LDS and scratch
//!   apertures `kfd_init_apertures_v9()` gives, 1 << 48 and 2 << 48).
//!
//! Not done: the trap enable per KFD VMID (`SPI_GDBG_PER_VMID_CNTL`) and
//! the GDS/GWS/OA zeroing of `init_compute_vmid()` (barebell runs no trap
//! handler and no GDS).
//!
//! No step here has run on hardware.

use crate::bus::{Block, RegisterBus};
use crate::gfx::start_v9_4_3::StartError;
use crate::regs::gc_9_4_3::{self as r, GrbmGfxCntl, ShMemBases, ShMemConfig};

/// `AMDGPU_NUM_VMID`.
pub const NUM_VMIDS: u8 = 16;
/// `GOLDEN_GB_ADDR_CONFIG` (`gfx_v9_4_3.c`).
pub const GOLDEN_GB_ADDR_CONFIG: u32 = 0x2a11_4042;
/// `SH_MEM_ALIGNMENT_MODE_UNALIGNED` (`vega10_enum.h`).
pub const SH_MEM_ALIGNMENT_MODE_UNALIGNED: u8 = 3;
/// `adev->gmc.private_aperture_start` (`gmc_v9_0_sw_init()`).
pub const PRIVATE_APERTURE_START: u64 = 0x1000_0000_0000_0000;
/// `adev->gmc.shared_aperture_start` (`gmc_v9_0_sw_init()`).
pub const SHARED_APERTURE_START: u64 = 0x2000_0000_0000_0000;
/// `DEFAULT_SH_MEM_BASES` (`gfx_v9_4_3.c`).
pub const DEFAULT_SH_MEM_BASES: u16 = 0x6000;
/// `MAKE_LDS_APP_BASE_V9()` and `MAKE_SCRATCH_APP_BASE_V9()`
/// (`kfd_flat_memory.c`): a KFD process's LDS and scratch apertures.
pub const KFD_LDS_BASE: u64 = 1 << 48;
pub const KFD_SCRATCH_BASE: u64 = 2 << 48;

/// `SH_MEM_CONFIG` of every VMID in `constants_init()`.
pub const fn vmid_sh_mem_config() -> ShMemConfig {
    ShMemConfig::new()
        .with_alignment_mode(SH_MEM_ALIGNMENT_MODE_UNALIGNED)
        .with_retry_disable(true)
}

/// `SH_MEM_BASES` of VMIDs 1..15 in `constants_init()`.
pub const fn vmid_sh_mem_bases() -> ShMemBases {
    ShMemBases::new()
        .with_private_base((PRIVATE_APERTURE_START >> 48) as u16)
        .with_shared_base((SHARED_APERTURE_START >> 48) as u16)
}

/// `SH_MEM_CONFIG` of the KFD VMIDs (`init_compute_vmid()`:
/// `SH_MEM_ADDRESS_MODE_64`, which is 0, and unaligned).
pub const fn compute_sh_mem_config() -> ShMemConfig {
    ShMemConfig::new().with_alignment_mode(SH_MEM_ALIGNMENT_MODE_UNALIGNED)
}

/// `SH_MEM_BASES` of the KFD VMIDs (`init_compute_vmid()`).
pub const fn compute_sh_mem_bases() -> ShMemBases {
    ShMemBases::new()
        .with_private_base(DEFAULT_SH_MEM_BASES)
        .with_shared_base(DEFAULT_SH_MEM_BASES)
}

/// `qpd->sh_mem_config` as `update_qpd_v9()` sets it on GC 9.4.3.
pub const fn qpd_sh_mem_config() -> ShMemConfig {
    ShMemConfig::new()
        .with_alignment_mode(SH_MEM_ALIGNMENT_MODE_UNALIGNED)
        .with_retry_disable(true)
        .with_f8_mode(true)
}

/// `compute_sh_mem_bases_64bit()` of a KFD process on GC 9.4.3.
pub const fn qpd_sh_mem_bases() -> ShMemBases {
    ShMemBases::new()
        .with_shared_base((KFD_LDS_BASE >> 48) as u16)
        .with_private_base((KFD_SCRATCH_BASE >> 48) as u16)
}

fn reg(xcc: usize) -> impl Fn(crate::bus::BlockError) -> StartError {
    move |error| StartError::Register { xcc, error }
}

/// `gfx_v9_4_3_init_golden_registers()` (bare metal) on XCC `xcc` of a
/// device of revision `rev_id` ("Golden settings applied by driver for
/// ASIC with rev_id 0").
pub fn golden<B: RegisterBus + ?Sized>(
    gc: &Block<'_, B>,
    xcc: usize,
    rev_id: u32,
) -> Result<(), StartError> {
    gc.write(r::GB_ADDR_CONFIG, GOLDEN_GB_ADDR_CONFIG)
        .map_err(reg(xcc))?;
    if rev_id == 0 {
        gc.update(
            r::TCP_UTCL1_CNTL1,
            r::REDUCE_FIFO_DEPTH_BY_2,
            2 << r::REDUCE_FIFO_DEPTH_BY_2_SHIFT,
        )
    } else {
        gc.update(r::TCP_UTCL1_CNTL2, r::TCP_UTCL1_SPARE, 1)
    }
    .map(|_| ())
    .map_err(reg(xcc))
}

fn select<B: RegisterBus + ?Sized>(
    gc: &Block<'_, B>,
    xcc: usize,
    vmid: u8,
) -> Result<(), StartError> {
    gc.write(
        r::GRBM_GFX_CNTL,
        GrbmGfxCntl::new().with_vmid(vmid).into_bits(),
    )
    .map_err(reg(xcc))
}

/// `gfx_v9_4_3_xcc_constants_init()` then
/// `gfx_v9_4_3_xcc_init_compute_vmid()`'s apertures on XCC `xcc`, for
/// KFD VMIDs `first_kfd_vmid`..15.
pub fn constants<B: RegisterBus + ?Sized>(
    gc: &Block<'_, B>,
    xcc: usize,
    first_kfd_vmid: u8,
) -> Result<(), StartError> {
    let set = |vmid: u8, config: ShMemConfig, bases: ShMemBases| -> Result<(), StartError> {
        select(gc, xcc, vmid)?;
        gc.write(r::SH_MEM_CONFIG, config.into_bits())
            .map_err(reg(xcc))?;
        gc.write(r::SH_MEM_BASES, bases.into_bits())
            .map_err(reg(xcc))
    };
    for vmid in 0..NUM_VMIDS {
        let bases = if vmid == 0 {
            ShMemBases::new()
        } else {
            vmid_sh_mem_bases()
        };
        set(vmid, vmid_sh_mem_config(), bases)?;
    }
    for vmid in first_kfd_vmid..NUM_VMIDS {
        set(vmid, compute_sh_mem_config(), compute_sh_mem_bases())?;
    }
    select(gc, xcc, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values worked out by hand from the masks in
    /// `gc_9_4_3_sh_mask.h` (`ALIGNMENT_MODE` bits 4:3, `F8_MODE` bit 8,
    /// `RETRY_DISABLE` bit 12; `SHARED_BASE` 31:16, `PRIVATE_BASE` 15:0).
    #[test]
    fn sh_mem_values_are_linuxs() {
        assert_eq!(vmid_sh_mem_config().into_bits(), 0x1018);
        assert_eq!(vmid_sh_mem_bases().into_bits(), 0x2000_1000);
        assert_eq!(compute_sh_mem_config().into_bits(), 0x18);
        assert_eq!(compute_sh_mem_bases().into_bits(), 0x6000_6000);
        assert_eq!(qpd_sh_mem_config().into_bits(), 0x1118);
        assert_eq!(qpd_sh_mem_bases().into_bits(), 0x0001_0002);
    }
}
