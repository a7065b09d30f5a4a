//! The GFX register init Linux does after the RLC autoload, as far as
//! compute needs it (`gfx_v11_0_hw_init()` / `gfx_v12_0_hw_init()`):
//!
//! - [`golden`], from `gfx_v11_0_init_golden_registers()`'s
//!   `golden_settings_gc_11_0` (`TCP_CNTL` bit 29 set under mask
//!   0x20000000). GC 12's golden list touches only `DB_MEM_CONFIG` (the
//!   depth block, graphics only), so nothing is written there.
//! - [`constants`], from `gfx_v11_0_constants_init()`:
//!   `GRBM_CNTL.READ_TIMEOUT` = 0xff, then every VMID's `SH_MEM_CONFIG`
//!   (`DEFAULT_SH_MEM_CONFIG`) and VMIDs 1..=15's `SH_MEM_BASES` from the
//!   GMC's private/shared apertures (`gmc_v11_0_sw_init()`:
//!   0x1000000000000000 and 0x2000000000000000), then
//!   `gfx_v11_0_init_compute_vmid()`: the KFD VMIDs (8..=15) get
//!   `LDS_APP_BASE << 16 | SCRATCH_APP_BASE`. The v12 functions are the
//!   same on the same registers.
//! - [`rlc_resume`], from `gfx_v11_0_rlc_resume()` /
//!   `gfx_v12_0_rlc_resume()` with PSP loading: `gfx_v11_0_rlc_enable_srm()`
//!   (`RLC_SRM_CNTL |= AUTO_INCR_ADDR | SRM_ENABLE`). Its other half,
//!   `gfx_v11_0_init_csb()` (`RLC_CSIB_ADDR_HI/LO`, `RLC_CSIB_LENGTH`
//!   pointing at the clear-state buffer `gfx_v11_0_get_csb_buffer()` builds
//!   from `clearstate_gfx11.h`), is not done: that buffer is the graphics
//!   context's clear state, barebell runs no graphics ring, and tinygrad's
//!   `AM_GFX.init_hw()`, which boots gfx1100 and gfx1201 silicon, never
//!   programs it. `RLC_CNTL` is left alone as Linux leaves it on this path
//!   (the RLC runs once its autoload is done; `rlc.funcs->start` is only
//!   called when the driver loads the RLC itself; tinygrad writes 1, the
//!   register's default).
//!
//! Not done (no compute queue of barebell's needs them): the per-VMID
//! `SPI_GDBG_PER_VMID_CNTL.TRAP_EN` (debugger traps), the GDS/GWS/OA
//! clears (their reset values are already zero), the RB and CU queries.

use crate::bus::{Block, BlockError, RegisterBus};
use crate::gfx::grbm::GrbmSelect;
use crate::ip::Generation;
use crate::regs::{IpBases, Reg};
use barebell_facts::Fact;
use bitfield_struct::bitfield;

/// `SH_MEM_CONFIG` (the fields `DEFAULT_SH_MEM_CONFIG` sets).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct ShMemConfig {
    /// `SH_MEM_ADDRESS_MODE_64` = 0, `_32` = 1 (`soc21_enum.h`).
    pub address_mode: bool,
    __: bool,
    /// `SH_MEM_ALIGNMENT_MODE_*`.
    #[bits(2)]
    pub alignment_mode: u8,
    #[bits(10)]
    __: u16,
    #[bits(2)]
    pub initial_inst_prefetch: u8,
    #[bits(16)]
    __: u16,
}

/// `SH_MEM_BASES`: the top 16 bits of the private (scratch) and shared
/// (LDS) apertures.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct ShMemBases {
    pub private_base: u16,
    pub shared_base: u16,
}

/// `SH_MEM_ALIGNMENT_MODE_UNALIGNED` (`soc21_enum.h`).
pub const ALIGNMENT_MODE_UNALIGNED: u8 = 3;

/// `DEFAULT_SH_MEM_CONFIG` (`gfx_v11_0.c`, `gfx_v12_0.c`).
pub const DEFAULT_SH_MEM_CONFIG: ShMemConfig = ShMemConfig::new()
    .with_address_mode(false)
    .with_alignment_mode(ALIGNMENT_MODE_UNALIGNED)
    .with_initial_inst_prefetch(3);

/// `gfx_v11_0_constants_init()`'s bases for VMIDs 1..=15, from
/// `adev->gmc.{private,shared}_aperture_start >> 48`.
pub const GFX_SH_MEM_BASES: ShMemBases = ShMemBases::new()
    .with_private_base(0x1000)
    .with_shared_base(0x2000);

/// `gfx_v11_0_init_compute_vmid()`'s bases for the KFD VMIDs:
/// `LDS_APP_BASE` (1) shared, `SCRATCH_APP_BASE` (2) private.
pub const COMPUTE_SH_MEM_BASES: ShMemBases =
    ShMemBases::new().with_private_base(2).with_shared_base(1);

/// The first VMID Linux leaves to KFD (`gmc_v11_0_sw_init()`:
/// `first_kfd_vmid = 8`) and the number of VMIDs (`AMDGPU_NUM_VMID`).
pub const FIRST_KFD_VMID: u8 = 8;
pub const NUM_VMID: u8 = 16;

/// `GRBM_CNTL.READ_TIMEOUT`: bits 7:0 on GC 11, 11:0 on GC 12.
pub const GRBM_READ_TIMEOUT_MASK_11: u32 = 0xFF;
pub const GRBM_READ_TIMEOUT_MASK_12: u32 = 0xFFF;
/// The value `gfx_v11_0_constants_init()` / `gfx_v12_0_constants_init()`
/// put in the field.
pub const GRBM_READ_TIMEOUT: u32 = 0xFF;
/// `RLC_SRM_CNTL__SRM_ENABLE_MASK | RLC_SRM_CNTL__AUTO_INCR_ADDR_MASK`.
pub const SRM_ENABLE: u32 = 0x1;
pub const SRM_AUTO_INCR_ADDR: u32 = 0x2;

/// `golden_settings_gc_11_0`: `TCP_CNTL`, mask and value 0x20000000.
pub const TCP_CNTL_GOLDEN: u32 = 0x2000_0000;

struct Regs {
    grbm_gfx_cntl: Reg,
    grbm_cntl: Reg,
    sh_mem_config: Reg,
    sh_mem_bases: Reg,
    tcp_cntl: Option<Reg>,
    srm_cntl: Reg,
    read_timeout_mask: u32,
}

const fn regs(g: Generation) -> Result<Regs, crate::ip::Unsupported> {
    Ok(match g {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new("GC init register table", g));
        }
        Generation::Gfx11 => {
            use crate::regs::gc_11_0_0 as r;
            Regs {
                grbm_gfx_cntl: r::GRBM_GFX_CNTL,
                grbm_cntl: r::GRBM_CNTL,
                sh_mem_config: r::SH_MEM_CONFIG,
                sh_mem_bases: r::SH_MEM_BASES,
                tcp_cntl: Some(r::TCP_CNTL),
                srm_cntl: r::RLC_SRM_CNTL,
                read_timeout_mask: GRBM_READ_TIMEOUT_MASK_11,
            }
        }
        Generation::Gfx12 => {
            use crate::regs::gc_12_0_0 as r;
            Regs {
                grbm_gfx_cntl: r::GRBM_GFX_CNTL,
                grbm_cntl: r::GRBM_CNTL,
                sh_mem_config: r::SH_MEM_CONFIG,
                sh_mem_bases: r::SH_MEM_BASES,
                tcp_cntl: None,
                srm_cntl: r::RLC_SRM_CNTL,
                read_timeout_mask: GRBM_READ_TIMEOUT_MASK_12,
            }
        }
    })
}

/// `soc15_program_register_sequence()` over the generation's golden list
/// as far as compute is concerned (see the module documentation).
pub fn golden<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
) -> Result<(), BlockError> {
    let gc = Block::new(bus, *bases);
    if let Some(tcp) = regs(generation)?.tcp_cntl {
        let v = gc.read(tcp)? & !TCP_CNTL_GOLDEN | TCP_CNTL_GOLDEN;
        gc.write(tcp, v)?;
    }
    Ok(())
}

/// `gfx_v11_0_rlc_resume()` / `gfx_v12_0_rlc_resume()` with PSP loading,
/// as far as barebell follows it (see the module documentation):
/// `gfx_v11_0_rlc_enable_srm()`. Returns the value written.
pub fn rlc_resume<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
) -> Result<u32, BlockError> {
    let gc = Block::new(bus, *bases);
    let srm = regs(generation)?.srm_cntl;
    let v = gc.read(srm)? | SRM_AUTO_INCR_ADDR | SRM_ENABLE;
    gc.write(srm, v)?;
    Ok(v)
}

/// `gfx_v11_0_constants_init()` and `gfx_v11_0_init_compute_vmid()`, the
/// parts compute needs (see the module documentation).
pub fn constants<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
) -> Result<(), BlockError> {
    let r = regs(generation)?;
    let gc = Block::new(bus, *bases);
    for reg in [
        r.grbm_gfx_cntl,
        r.grbm_cntl,
        r.sh_mem_config,
        r.sh_mem_bases,
    ] {
        gc.offset(reg)?;
    }
    let t = gc.read(r.grbm_cntl)? & !r.read_timeout_mask | GRBM_READ_TIMEOUT;
    gc.write(r.grbm_cntl, t)?;
    {
        let sel = GrbmSelect::new(gc, r.grbm_gfx_cntl, 0, 0, 0)?;
        for vmid in 0..NUM_VMID {
            sel.switch_vmid(vmid)?;
            gc.write(r.sh_mem_config, DEFAULT_SH_MEM_CONFIG.into_bits())?;
            if vmid != 0 {
                gc.write(r.sh_mem_bases, GFX_SH_MEM_BASES.into_bits())?;
            }
        }
        for vmid in FIRST_KFD_VMID..NUM_VMID {
            sel.switch_vmid(vmid)?;
            gc.write(r.sh_mem_config, DEFAULT_SH_MEM_CONFIG.into_bits())?;
            gc.write(r.sh_mem_bases, COMPUTE_SH_MEM_BASES.into_bits())?;
        }
    }
    Ok(())
}

macro_rules! facts {
    ($h:literal, $timeout:expr) => {
        [
            Fact::constant(
                $h,
                "SH_MEM_CONFIG__ADDRESS_MODE_MASK",
                ShMemConfig::new().with_address_mode(true).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_CONFIG__ALIGNMENT_MODE_MASK",
                ShMemConfig::new().with_alignment_mode(3).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_CONFIG__INITIAL_INST_PREFETCH_MASK",
                ShMemConfig::new().with_initial_inst_prefetch(3).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_BASES__PRIVATE_BASE_MASK",
                ShMemBases::new().with_private_base(0xFFFF).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_BASES__SHARED_BASE_MASK",
                ShMemBases::new().with_shared_base(0xFFFF).into_bits() as u64,
            ),
            Fact::constant($h, "GRBM_CNTL__READ_TIMEOUT_MASK", $timeout as u64),
            Fact::constant($h, "RLC_SRM_CNTL__SRM_ENABLE_MASK", SRM_ENABLE as u64),
            Fact::constant(
                $h,
                "RLC_SRM_CNTL__AUTO_INCR_ADDR_MASK",
                SRM_AUTO_INCR_ADDR as u64,
            ),
        ]
    };
}

/// Field masks against both generations' `sh_mask` headers, and the enum
/// value `DEFAULT_SH_MEM_CONFIG` uses.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    facts!("gc_11_0_0_sh_mask.h", GRBM_READ_TIMEOUT_MASK_11),
    facts!("gc_12_0_0_sh_mask.h", GRBM_READ_TIMEOUT_MASK_12),
    [
        Fact::constant(
            "soc21_enum.h",
            "SH_MEM_ALIGNMENT_MODE_UNALIGNED",
            ALIGNMENT_MODE_UNALIGNED as u64,
        ),
        Fact::constant("soc21_enum.h", "SH_MEM_ADDRESS_MODE_64", 0),
    ],
);
