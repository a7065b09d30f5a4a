//! GC 9.4.2 (Aldebaran) before its queues: `gfx_v9_0_hw_init()` with
//! `AMDGPU_FW_LOAD_PSP` on bare metal, the one GC of the part.
//!
//! 1. [`golden`]: `gfx_v9_4_2_init_golden_registers()` (the common gfx9
//!    list is skipped for 9.4.2): `GB_ADDR_CONFIG`, `TA_CNTL_AUX`,
//!    `TCP_UTCL1_CNTL1`, `TCI_CNTL_3`, then `TCP_CHAN_STEER_0..5` by the
//!    die `SMUIO_MCM_CONFIG.DIE_ID` names (`smuio_v13_0_get_die_id()`), as
//!    `soc15_program_register_sequence()` applies them (a full mask is a
//!    plain write, otherwise read, clear the mask, or in the value).
//! 2. [`constants`]: `gfx_v9_0_constants_init()`: `GRBM_CNTL.READ_TIMEOUT`
//!    = 0xff; `SH_MEM_CONFIG` (unaligned, `RETRY_DISABLE` as
//!    `adev->gmc.noretry`, 1 on 9.4.2) and `SH_MEM_BASES` (0 on VMID 0,
//!    the private/shared apertures on the others) on the amdgpu VMIDs
//!    (0 .. `first_kfd_vmid` = 3); `gfx_v9_0_init_compute_vmid()` on the
//!    KFD VMIDs 3..15 (64-bit, unaligned, bases 0x6000/0x6000, their GDS,
//!    GWS and OA cleared); `gfx_v9_0_init_gds_vmid()` clears VMIDs 1..15's.
//! 3. [`rlc_resume`]: `gfx_v9_0_rlc_resume()`: the RLC PSP loaded is
//!    stopped (`RLC_CNTL.RLC_ENABLE_F32` = 0, the GUI-idle interrupts off),
//!    clock gating off, the save/restore machine on for RLC v2.1 firmware
//!    (`gfx_v9_0_init_pg()`), `RLC_SPM_MC_CNTL.RLC_SPM_VMID` = 0xf, and the
//!    RLC started again (`gfx_v9_0_rlc_start()`: `RLC_ENABLE_F32`, 50 µs,
//!    the GUI-idle interrupts on, 50 µs).
//! 4. [`cp_resume`]: `gfx_v9_0_cp_resume()` with the KIQ and queues as
//!    the caller's hooks, or [`mec_start`], the part of it that runs no
//!    queue: the GUI-idle interrupts off, then `CP_MEC_CNTL` = 0 (the top
//!    of `gfx_v9_0_kcq_resume()`, `gfx_v9_0_cp_compute_enable(true)`), 50
//!    µs, the interrupts on. Unlike GC 9.4.3 Linux writes no halt first:
//!    the MEC is still halted from reset when the KIQ is loaded.
//!
//! Not done, each a difference from Linux: the clear-state buffer
//! (`gfx_v9_0_init_csb()`: `RLC_CSIB_*` for `gfx9_cs_data`, graphics
//! state a compute-only part does not use); the RLC serdes idle waits of
//! `gfx_v9_0_rlc_stop()` (Linux gives up silently after `usec_timeout`);
//! `gfx_v9_0_init_tcp_config()` (the DF's address hashing, which
//! `df_v3_6_query_hashes()` reads from `DF_CS_UMC_AON0_DfGlobalCtrl`:
//! barebell reads no DF register); the power-brake sequence
//! (`gfx_v9_4_2_set_power_brake_sequence()`), the late-init ECC GPR
//! workarounds and the debug-trap setup.
//!
//! No step here has run on hardware.

use crate::bus::{Block, BlockError, RegisterBus};
use crate::gfx::init_v9_4_3::{
    DEFAULT_SH_MEM_BASES, NUM_VMIDS, SH_MEM_ALIGNMENT_MODE_UNALIGNED, vmid_sh_mem_bases,
};
use crate::gfx::start_v9_4_3::{CpResumeHooks, StartError};
use crate::regs::gc_9_4_2 as r;
use crate::regs::gc_9_4_3::{GrbmGfxCntl, ShMemBases, ShMemConfig};
use crate::regs::gc_9_4_3_rlc::{CpIntCntlRing0, RlcCntl, RlcSrmCntl};
use crate::time::{Clock, delay};

/// `adev->vm_manager.first_kfd_vmid` on GC 9.4.2 (`gmc_v9_0_sw_init()`:
/// 3 on the compute-only GC 9.4.1, 9.4.2, 9.4.3 and 9.4.4, 8 elsewhere).
pub const FIRST_KFD_VMID: u8 = 3;

/// `udelay(50)` in `gfx_v9_0_rlc_start()` and after `CP_MEC_CNTL`.
pub const DELAY_NS: u64 = 50_000;

/// One golden setting: register, `and_mask`, value
/// (`soc15_reg_golden`, `SOC15_REG_GOLDEN_VALUE()`).
pub type Golden = (crate::regs::Reg, u32, u32);

/// `golden_settings_gc_9_4_2_alde` (`gfx_v9_4_2.c`).
pub const GOLDEN: [Golden; 4] = [
    (r::GB_ADDR_CONFIG, 0xffff_77ff, 0x2a11_4042),
    (r::TA_CNTL_AUX, 0xffff_feef, 0x010b_0000),
    (r::TCP_UTCL1_CNTL1, 0xffff_ffff, 0x3080_0400),
    (r::TCI_CNTL_3, 0xff, 0x20),
];

/// `golden_settings_gc_9_4_2_alde_die_0` / `_die_1`: the TCP channel
/// steering of each die.
pub const CHAN_STEER: [[u32; 6]; 2] = [
    [
        0x141d_c920,
        0x3b45_8b93,
        0x1a4f_5583,
        0x3177_17f6,
        0x107c_c1e6,
        0x351,
    ],
    [
        0x2591_aa38,
        0x0ac9_e88b,
        0x2bc3_369b,
        0x00fb_74ee,
        0x21f0_a2fe,
        0x49,
    ],
];

const STEER_REGS: [crate::regs::Reg; 6] = [
    r::TCP_CHAN_STEER_0,
    r::TCP_CHAN_STEER_1,
    r::TCP_CHAN_STEER_2,
    r::TCP_CHAN_STEER_3,
    r::TCP_CHAN_STEER_4,
    r::TCP_CHAN_STEER_5,
];

/// The and-masks of the steering lists: 0x3fffffff, 0x3ff for STEER_5.
const STEER_MASKS: [u32; 6] = [
    0x3fff_ffff,
    0x3fff_ffff,
    0x3fff_ffff,
    0x3fff_ffff,
    0x3fff_ffff,
    0x3ff,
];

/// `soc15_program_register_sequence()` for one entry.
fn program<B: RegisterBus + ?Sized>(gc: &Block<'_, B>, g: Golden) -> Result<(), BlockError> {
    let (reg, and_mask, value) = g;
    if and_mask == 0xffff_ffff {
        return gc.write(reg, value);
    }
    gc.update(reg, and_mask, value & and_mask).map(|_| ())
}

/// `gfx_v9_4_2_init_golden_registers()` for die `die`
/// (`SMUIO_MCM_CONFIG.DIE_ID`, read by the caller from SMUIO).
pub fn golden<B: RegisterBus + ?Sized>(gc: &Block<'_, B>, die: u32) -> Result<(), BlockError> {
    for g in GOLDEN {
        program(gc, g)?;
    }
    let steer = CHAN_STEER[(die & r::DIE_ID_MASK) as usize];
    for ((reg, mask), value) in STEER_REGS.iter().zip(STEER_MASKS).zip(steer) {
        program(gc, (*reg, mask, value))?;
    }
    Ok(())
}

/// `SH_MEM_CONFIG` of the amdgpu VMIDs: unaligned, `RETRY_DISABLE`
/// (`noretry` is 1 on 9.4.2: `amdgpu_gmc_noretry_set()`).
pub const fn vmid_sh_mem_config() -> ShMemConfig {
    ShMemConfig::new()
        .with_alignment_mode(SH_MEM_ALIGNMENT_MODE_UNALIGNED)
        .with_retry_disable(true)
}

/// `SH_MEM_CONFIG` of the KFD VMIDs (`gfx_v9_0_init_compute_vmid()`:
/// `SH_MEM_ADDRESS_MODE_64`, unaligned).
pub const fn compute_sh_mem_config() -> ShMemConfig {
    ShMemConfig::new().with_alignment_mode(SH_MEM_ALIGNMENT_MODE_UNALIGNED)
}

/// `SH_MEM_BASES` of the KFD VMIDs.
pub const fn compute_sh_mem_bases() -> ShMemBases {
    ShMemBases::new()
        .with_private_base(DEFAULT_SH_MEM_BASES)
        .with_shared_base(DEFAULT_SH_MEM_BASES)
}

fn select<B: RegisterBus + ?Sized>(gc: &Block<'_, B>, vmid: u8) -> Result<(), BlockError> {
    gc.write(
        r::GRBM_GFX_CNTL,
        GrbmGfxCntl::new().with_vmid(vmid).into_bits(),
    )
}

/// Clears VMID `vmid`'s GDS window, GWS and OA (registers one apart per
/// VMID, the window's base/size pair two apart).
fn clear_gds<B: RegisterBus + ?Sized>(gc: &Block<'_, B>, vmid: u8) -> Result<(), BlockError> {
    let v = u32::from(vmid);
    for (reg, stride) in [
        (r::GDS_VMID0_BASE, 2),
        (r::GDS_VMID0_SIZE, 2),
        (r::GDS_GWS_VMID0, 1),
        (r::GDS_OA_VMID0, 1),
    ] {
        let at = gc.offset_nth(reg, v, stride)?;
        gc.bus.write32(at, 0);
    }
    Ok(())
}

/// `gfx_v9_0_constants_init()` (as far as a compute-only part goes: no
/// tiling table or render backends, no CU mask override).
pub fn constants<B: RegisterBus + ?Sized>(gc: &Block<'_, B>) -> Result<(), BlockError> {
    gc.update(r::GRBM_CNTL, r::READ_TIMEOUT_MASK, r::READ_TIMEOUT_MASK)?;
    for vmid in 0..FIRST_KFD_VMID {
        select(gc, vmid)?;
        gc.write(r::SH_MEM_CONFIG, vmid_sh_mem_config().into_bits())?;
        let bases = if vmid == 0 {
            ShMemBases::new()
        } else {
            vmid_sh_mem_bases()
        };
        gc.write(r::SH_MEM_BASES, bases.into_bits())?;
    }
    select(gc, 0)?;
    // gfx_v9_0_init_compute_vmid().
    for vmid in FIRST_KFD_VMID..NUM_VMIDS {
        select(gc, vmid)?;
        gc.write(r::SH_MEM_CONFIG, compute_sh_mem_config().into_bits())?;
        gc.write(r::SH_MEM_BASES, compute_sh_mem_bases().into_bits())?;
    }
    select(gc, 0)?;
    for vmid in FIRST_KFD_VMID..NUM_VMIDS {
        clear_gds(gc, vmid)?;
    }
    // gfx_v9_0_init_gds_vmid(): VMIDs 1..15.
    for vmid in 1..NUM_VMIDS {
        clear_gds(gc, vmid)?;
    }
    Ok(())
}

fn gui_idle<B: RegisterBus + ?Sized>(gc: &Block<'_, B>, on: bool) -> Result<(), BlockError> {
    let mask = CpIntCntlRing0::GUI_IDLE.into_bits();
    gc.update(r::CP_INT_CNTL_RING0, mask, if on { mask } else { 0 })
        .map(|_| ())
}

/// `gfx_v9_0_rlc_stop()`: `RLC_ENABLE_F32` clear and the GUI-idle
/// interrupts off (the serdes idle waits are not done; see the module
/// documentation). Also what `smu_disable_dpms()` ends with at unload.
pub fn rlc_stop<B: RegisterBus + ?Sized>(gc: &Block<'_, B>) -> Result<(), BlockError> {
    let f32 = RlcCntl::new().with_rlc_enable_f32(true).into_bits();
    gc.update(r::RLC_CNTL, f32, 0)?;
    gui_idle(gc, false)
}

/// `gfx_v9_0_rlc_resume()` with PSP loading; `rlc_v2_1` is
/// `adev->gfx.rlc.is_rlc_v2_1`.
pub fn rlc_resume<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    gc: &Block<'_, B>,
    clock: &C,
    rlc_v2_1: bool,
) -> Result<(), BlockError> {
    let f32 = RlcCntl::new().with_rlc_enable_f32(true).into_bits();
    rlc_stop(gc)?;
    // "disable CG".
    gc.write(r::RLC_CGCG_CGLS_CTRL, 0)?;
    // gfx_v9_0_init_pg() → gfx_v9_0_enable_save_restore_machine().
    if rlc_v2_1 {
        let srm = RlcSrmCntl::new().with_srm_enable(true).into_bits();
        gc.update(r::RLC_SRM_CNTL, srm, srm)?;
    }
    // gfx_v9_0_update_spm_vmid_internal(adev, 0xf).
    gc.update(
        r::RLC_SPM_MC_CNTL,
        r::RLC_SPM_VMID_MASK << r::RLC_SPM_VMID_SHIFT,
        0xf << r::RLC_SPM_VMID_SHIFT,
    )?;
    // gfx_v9_0_rlc_start().
    gc.update(r::RLC_CNTL, f32, f32)?;
    delay(clock, DELAY_NS);
    gui_idle(gc, true)?;
    delay(clock, DELAY_NS);
    Ok(())
}

/// `gfx_v9_0_cp_resume()` with no queue: the MEC released
/// (`gfx_v9_0_cp_compute_enable(true)`), framed by the GUI-idle
/// interrupts as Linux frames its queues.
pub fn mec_start<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    gc: &Block<'_, B>,
    clock: &C,
) -> Result<(), BlockError> {
    gui_idle(gc, false)?;
    gc.write(r::CP_MEC_CNTL, 0)?;
    delay(clock, DELAY_NS);
    gui_idle(gc, true)
}

/// `gfx_v9_0_cp_resume()` with PSP loading on the one GC: the GUI-idle
/// interrupts off, the KIQ loaded (`hooks.kiq(0)`,
/// `gfx_v9_0_kiq_resume()`) into the MEC still halted from reset (no
/// halt is written first, unlike GC 9.4.3's `gfx_v9_4_3_xcc_cp_resume()`),
/// the MEC released (`CP_MEC_CNTL` = 0, the top of
/// `gfx_v9_0_kcq_resume()`), 50 µs, the compute queues
/// (`hooks.queues(0)`: SET_RESOURCES and MAP_QUEUES on the KIQ,
/// `amdgpu_gfx_enable_kcq()`), the interrupts on.
pub fn cp_resume<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    gc: &Block<'_, B>,
    clock: &C,
    hooks: &mut dyn CpResumeHooks,
) -> Result<(), StartError> {
    let reg = |error| StartError::Register { xcc: 0, error };
    gui_idle(gc, false).map_err(reg)?;
    hooks.kiq(0)?;
    gc.write(r::CP_MEC_CNTL, 0).map_err(reg)?;
    delay(clock, DELAY_NS);
    hooks.queues(0)?;
    gui_idle(gc, true).map_err(reg)
}

/// `qpd->sh_mem_config` as `update_qpd_v9()` sets it on GC 9.4.2:
/// unaligned, `RETRY_DISABLE` (`dev->kfd->noretry`, which
/// `amdgpu_gmc_noretry_set()` defaults on for 9.4.2; the process has
/// XNACK off, `KFD_SUPPORT_XNACK_PER_PROCESS`), and no `F8_MODE`, which
/// `update_qpd_v9()` sets only on 9.4.3 and 9.4.4.
pub const fn qpd_sh_mem_config() -> ShMemConfig {
    ShMemConfig::new()
        .with_alignment_mode(SH_MEM_ALIGNMENT_MODE_UNALIGNED)
        .with_retry_disable(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regs::IpBases;
    use core::cell::RefCell;

    /// A few registers by dword (GC segment 1 at 0x1_0000 here): 128
    /// `(dword, value)` slots, unused ones dword `usize::MAX`.
    struct Bus(RefCell<[(usize, u32); 128]>);
    impl Bus {
        fn new() -> Bus {
            Bus(RefCell::new([(usize::MAX, 0); 128]))
        }
        fn get(&self, dword: usize) -> u32 {
            self.0
                .borrow()
                .iter()
                .find(|(d, _)| *d == dword)
                .map_or(0, |(_, v)| *v)
        }
        fn set(&self, dword: usize, v: u32) {
            let mut m = self.0.borrow_mut();
            let slot = m.iter().position(|(d, _)| *d == dword);
            let i = slot.or_else(|| m.iter().position(|(d, _)| *d == usize::MAX));
            if let Some(i) = i {
                m[i] = (dword, v);
            }
        }
    }
    impl RegisterBus for Bus {
        fn read32(&self, at: usize) -> u32 {
            self.get(at / 4)
        }
        fn write32(&self, at: usize, v: u32) {
            self.set(at / 4, v);
        }
    }

    fn block(bus: &Bus) -> Block<'_, Bus> {
        Block::new(bus, IpBases::new(&[0, 0x1_0000]))
    }

    /// `soc15_program_register_sequence()` by hand: GB_ADDR_CONFIG keeps
    /// bits 11 and 15 (outside 0xffff77ff) of what it held and takes
    /// 0x2a114042's others; TCP_UTCL1_CNTL1's full mask is a plain write.
    #[test]
    fn golden_settings_keep_the_bits_outside_their_masks() {
        let bus = Bus::new();
        bus.set(0x063e, 0xffff_ffff);
        bus.set(0x12b5, 0x1234_5678);
        golden(&block(&bus), 1).unwrap();
        assert_eq!(bus.get(0x063e), 0x2a11_4042 | 0x8800);
        assert_eq!(bus.get(0x12b5), 0x3080_0400);
        // Die 1's STEER_5 under mask 0x3ff.
        assert_eq!(bus.get(0x0b0c), 0x49);
        assert_eq!(bus.get(0x0b03), 0x2591_aa38);
    }

    /// VMIDs 3..15 get 0x18 / 0x60006000 and the amdgpu VMIDs 0x1018,
    /// worked by hand from `gc_9_4_2_sh_mask.h` (ALIGNMENT_MODE bits 4:3
    /// = 3, RETRY_DISABLE bit 12; SHARED_BASE bits 31:16 and PRIVATE_BASE
    /// 15:0 = 0x6000); VMID 0 ends selected.
    #[test]
    fn kfd_vmids_get_the_compute_apertures() {
        assert_eq!(compute_sh_mem_config().into_bits(), 0x18);
        assert_eq!(compute_sh_mem_bases().into_bits(), 0x6000_6000);
        assert_eq!(vmid_sh_mem_config().into_bits(), 0x1018);
        let bus = Bus::new();
        constants(&block(&bus)).unwrap();
        assert_eq!(bus.get(0x0022), 0);
        assert_eq!(bus.get(0x0000) & 0xff, 0xff);
        // The last KFD VMID's SH_MEM writes are the last ones made.
        assert_eq!(bus.get(0x030d), 0x18);
        assert_eq!(bus.get(0x030a), 0x6000_6000);
    }
}
