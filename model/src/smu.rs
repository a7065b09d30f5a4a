//! The SMU (MP1) as its driver mailbox shows it: MP1 13.0.0 (Navi31) and
//! 14.0.3 (Navi48, Linux's 14.0.2 tables).
//!
//! The protocol is `smu_cmn.c`'s: the driver clears the response register
//! (`C2PMSG_90`), puts the argument in `C2PMSG_82` and the message id in
//! `C2PMSG_66` (`__smu_cmn_send_msg()`); the firmware answers with a
//! `PPSMC_Result_*` in `C2PMSG_90` and, for messages with an output, the
//! output in `C2PMSG_82` (`smu_cmn_send_smc_msg_with_param()` reads it
//! back). The debug mailbox (`C2PMSG_75` message, `_53` argument, `_54`
//! response, `smu_v13_0_0_set_smu_mailbox_registers()` and
//! `smu_v14_0_2_set_smu_mailbox_registers()`) carries DEBUGSMC messages.
//!
//! What the model enforces:
//! - nothing answers until the PSP has loaded the SMU firmware
//!   (`GFX_FW_TYPE_SMU`, `psp_load_smu_fw()`): before that a message is
//!   left unanswered, as on a board whose PMFW is not running (tinygrad's
//!   `is_smu_alive()` relies on exactly that);
//! - a message written while the response register still holds the last
//!   answer is refused: both drivers clear it first, and a driver that
//!   does not cannot tell the new answer from the old;
//! - the message ids are `smu_v13_0_0_ppsmc.h` / `smu_v14_0_2_ppsmc.h`'s
//!   (equal for every message modelled); an id outside them is answered
//!   `PPSMC_Result_UnknownCmd`, a known id the model does not serve is
//!   refused (and answered `PPSMC_Result_Failed`) so it cannot pass
//!   silently;
//! - DPM queries and soft limits need the features enabled
//!   (`EnableAllSmuFeatures`): Linux sends them only for clocks whose DPM
//!   feature is on (`smu_cmn_clk_dpm_is_enabled()`); before that the model
//!   answers `PPSMC_Result_CmdRejectedPrereq` (*model rule*: what PMFW
//!   answers is not public). A clock id past `PPCLK_COUNT` or a level
//!   past the table is answered `PPSMC_Result_Failed` (*model rule*);
//! - mode-1 reset: `PPSMC_MSG_Mode1Reset` on the main mailbox (MP1
//!   13.0.0, `smu_v13_0_0_mode1_reset()`) or `DEBUGSMC_MSG_Mode1Reset` (2)
//!   on the debug mailbox (Linux for 13.0.10 and 14.0.2; tinygrad's
//!   `mode1_reset()` also for 13.0.0) answers OK and then returns the PSP
//!   and the SMU to their bootloader state ([`SmuHooks::mode1_reset`]).
//!   The response register keeps its `1` across the reset: tinygrad waits
//!   for it after the reset started, and has booted boards that way.
//!   A reset sent with PCI bus mastering on is logged as a refusal
//!   (*model rule*: Linux and tinygrad clear it first) and carried out.
//!   The reset returns every block to its power-on state: PSP (sOS gone,
//!   autoload record cleared), SMU, MEC/MES/HQDs, both hubs, NBIO
//!   doorbell apertures, IH, SDMA, clock gating and scratch, S2A
//!   ([`crate::VirtualGpu`] wires the hook).
//!
//! **Model values**: every answer comes inside the write that sends the
//! message (Linux polls up to `adev->usec_timeout * 20`, 2 s); the DPM
//! tables ([`DpmTables`]); `GetSmuVersion` answers the SMU blob's
//! `ucode_version`, the number Linux itself reports as the PMFW version
//! (`amdgpu_ucode.c`), when the model was given the blob.

use crate::SimClock;
use crate::log::Keep;
use crate::soc::{RefusalLog, RegStore};
use crate::socregs::{self, Reg};
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::regs::IpBases;
use barebell_facts::Fact;
use spin::Mutex;

/// `PPSMC_Result_*` (equal in `smu_v13_0_0_ppsmc.h` and
/// `smu_v14_0_2_ppsmc.h`).
pub mod result {
    pub const OK: u32 = 0x1;
    pub const FAILED: u32 = 0xFF;
    pub const UNKNOWN_CMD: u32 = 0xFE;
    pub const REJECTED_PREREQ: u32 = 0xFD;
}

/// The driver-interface versions PMFW answers `GetDriverIfVersion` with:
/// the ones Linux 6.12 expects (`smu_v13_0_check_fw_version()` compares;
/// a mismatch is only a warning).
pub mod if_version {
    /// `SMU13_0_0_DRIVER_IF_VERSION` (`smu13_driver_if_v13_0_0.h`).
    pub const V13_0_0: u32 = 0x3D;
    /// `SMU14_DRIVER_IF_VERSION_SMU_V14_0_2` (`smu_v14_0.h`).
    pub const V14_0_2: u32 = 0x2E;
    /// `SMU13_0_6_DRIVER_IF_VERSION` (`smu13_driver_if_v13_0_6.h`, set by
    /// `smu_v13_0_6_set_ppt_funcs()`).
    pub const V13_0_6: u32 = 0x0804_2024;
    /// `SMU13_DRIVER_IF_VERSION_ALDE` (`smu13_driver_if_aldebaran.h`,
    /// set by `aldebaran_set_ppt_funcs()`'s caller).
    pub const V13_0_2: u32 = 0x08;
}

/// `PPSMC_MSG_*` the model serves (equal ids in both headers).
pub mod msg {
    pub const TEST_MESSAGE: u32 = 0x1;
    pub const GET_SMU_VERSION: u32 = 0x2;
    /// `PPSMC_MSG_GetDriverIfVersion` (`smu_v13_0_0_ppsmc.h`,
    /// `smu_v14_0_2_ppsmc.h`).
    pub const GET_DRIVER_IF_VERSION: u32 = 0x3;
    pub const ENABLE_ALL_SMU_FEATURES: u32 = 0x6;
    pub const SET_DRIVER_DRAM_ADDR_HIGH: u32 = 0xE;
    pub const SET_DRIVER_DRAM_ADDR_LOW: u32 = 0xF;
    pub const SET_SOFT_MIN_BY_FREQ: u32 = 0x19;
    pub const SET_SOFT_MAX_BY_FREQ: u32 = 0x1A;
    pub const GET_DPM_FREQ_BY_INDEX: u32 = 0x1F;
    /// MP1 13.0.0 only (`smu_v14_0_2_ppsmc.h` has no such message).
    pub const MODE1_RESET: u32 = 0x2F;
    /// `DEBUGSMC_MSG_Mode1Reset` (`smu_v13_0_0_ppt.c`, `smu_v14_0_2_ppt.c`,
    /// defined there, not in a header).
    pub const DEBUG_MODE1_RESET: u32 = 2;
    /// MP1 13.0.6 only: `PPSMC_MSG_GfxDriverReset` (`smu_v13_0_6_ppsmc.h`),
    /// what `smu_v13_0_6_mode1_reset()` sends (`SMU_MSG_GfxDeviceDriverReset`
    /// in its message map) with the reset mode in bits 15:0.
    pub const V13_0_6_GFX_DRIVER_RESET: u32 = 0x3;
    /// Aldebaran's map (`aldebaran_ppsmc.h`): `GfxDriverReset` is 0x3 as
    /// on 13.0.6, the rest of these ids differ.
    pub const V13_0_2_GFX_DRIVER_RESET: u32 = 0x3;
    pub const V13_0_2_GET_DRIVER_IF_VERSION: u32 = 0x4;
    pub const V13_0_2_ENABLE_ALL_SMU_FEATURES: u32 = 0x7;
    pub const V13_0_2_DISABLE_ALL_SMU_FEATURES: u32 = 0x8;
    pub const V13_0_2_SET_DRIVER_DRAM_ADDR_HIGH: u32 = 0xF;
    pub const V13_0_2_SET_DRIVER_DRAM_ADDR_LOW: u32 = 0x10;
    pub const V13_0_2_PREPARE_MP1_FOR_UNLOAD: u32 = 0x24;
    /// MP1 13.0.6's `PPSMC_MSG_GetDriverIfVersion` (0x4 there, 0x3 in
    /// 13.0.0/14.0.2).
    pub const V13_0_6_GET_DRIVER_IF_VERSION: u32 = 0x4;
    /// MP1 13.0.6's `PPSMC_MSG_EnableAllSmuFeatures` (0x5 there, 0x6 in
    /// 13.0.0/14.0.2).
    pub const V13_0_6_ENABLE_ALL_SMU_FEATURES: u32 = 0x5;
    /// MP1 13.0.6's `PPSMC_MSG_PrepareForDriverUnload`, which
    /// `smu_v13_0_6_notify_unload()` sends when the driver lets go.
    pub const V13_0_6_PREPARE_FOR_DRIVER_UNLOAD: u32 = 0x34;
    /// MP1 13.0.6's ids for the driver-table address, the soft clock
    /// limits and the DPM level query (`smu_v13_0_6_ppsmc.h`; they differ
    /// from 13.0.0's), which `smu_v13_0_set_driver_table_location()`,
    /// `smu_v13_0_set_soft_freq_limited_range()` and
    /// `smu_v13_0_6_get_dpm_level_count()` send, and tinygrad's
    /// `AM_SMU.init_hw` / `set_clocks` too.
    pub const V13_0_6_SET_DRIVER_DRAM_ADDR_HIGH: u32 = 0xD;
    pub const V13_0_6_SET_DRIVER_DRAM_ADDR_LOW: u32 = 0xE;
    pub const V13_0_6_SET_SOFT_MIN_BY_FREQ: u32 = 0x13;
    pub const V13_0_6_SET_SOFT_MAX_BY_FREQ: u32 = 0x14;
    pub const V13_0_6_GET_DPM_FREQ_BY_INDEX: u32 = 0x17;
}

/// `enum smu_reset_mode` (`amdgpu_smu.h`): the modes
/// `PPSMC_MSG_GfxDriverReset` takes on 13.0.6 (`SMU_RESET_MODE_1` for a
/// mode-1 reset, `smu_v13_0_6_mode1_reset()`; mode 2 is
/// `smu_v13_0_6_mode2_reset()`'s), and bit 16, the RAS fatal-error flag.
pub mod reset_mode {
    pub const MODE_1: u32 = 1;
    pub const MODE_2: u32 = 2;
    pub const MODE_MASK: u32 = 0xFFFF;
    pub const FATAL_ERROR: u32 = 1 << 16;
}

/// `PPCLK_e` (`smu13_driver_if_v13_0_0.h`, `smu14_driver_if_v14_0.h`):
/// the first four are equal in both.
pub mod clk {
    pub const GFXCLK: u32 = 0;
    pub const SOCCLK: u32 = 1;
    pub const UCLK: u32 = 2;
    pub const FCLK: u32 = 3;
    /// MP1 13.0.6's `PPCLK_e` (`smu_v13_0_6_pmfw.h`): VCLK 0, DCLK 1,
    /// SOCCLK 2, UCLK 3, FCLK 4, LCLK 5 (no GFXCLK: its limits have their
    /// own messages).
    pub const V13_0_6_VCLK: u32 = 0;
    pub const V13_0_6_DCLK: u32 = 1;
    pub const V13_0_6_SOCCLK: u32 = 2;
    pub const V13_0_6_UCLK: u32 = 3;
    pub const V13_0_6_FCLK: u32 = 4;
    pub const V13_0_6_COUNT: u32 = 6;
}

/// The conformance facts for the ids above.
pub const FACTS: &[Fact] = &[
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_TestMessage",
        msg::TEST_MESSAGE as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_GetSmuVersion",
        msg::GET_SMU_VERSION as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_GfxDriverReset",
        msg::V13_0_2_GFX_DRIVER_RESET as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_GetDriverIfVersion",
        msg::V13_0_2_GET_DRIVER_IF_VERSION as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_EnableAllSmuFeatures",
        msg::V13_0_2_ENABLE_ALL_SMU_FEATURES as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_DisableAllSmuFeatures",
        msg::V13_0_2_DISABLE_ALL_SMU_FEATURES as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_SetDriverDramAddrHigh",
        msg::V13_0_2_SET_DRIVER_DRAM_ADDR_HIGH as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_SetDriverDramAddrLow",
        msg::V13_0_2_SET_DRIVER_DRAM_ADDR_LOW as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_MSG_PrepareMp1ForUnload",
        msg::V13_0_2_PREPARE_MP1_FOR_UNLOAD as u64,
    ),
    Fact::constant(
        "aldebaran_ppsmc.h",
        "PPSMC_Message_Count",
        V13_0_2_MESSAGES as u64,
    ),
    Fact::constant("aldebaran_ppsmc.h", "PPSMC_Result_OK", result::OK as u64),
    Fact::constant(
        "smu13_driver_if_aldebaran.h",
        "SMU13_DRIVER_IF_VERSION_ALDE",
        if_version::V13_0_2 as u64,
    ),
    Fact::constant(
        "smu13_driver_if_aldebaran.h",
        "PPCLK_COUNT",
        V13_0_2_CLOCKS as u64,
    ),
    Fact::constant("smu_v13_0_0_ppsmc.h", "PPSMC_Result_OK", result::OK as u64),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_Result_Failed",
        result::FAILED as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_Result_UnknownCmd",
        result::UNKNOWN_CMD as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_Result_CmdRejectedPrereq",
        result::REJECTED_PREREQ as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_TestMessage",
        msg::TEST_MESSAGE as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_GetSmuVersion",
        msg::GET_SMU_VERSION as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_EnableAllSmuFeatures",
        msg::ENABLE_ALL_SMU_FEATURES as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_SetDriverDramAddrHigh",
        msg::SET_DRIVER_DRAM_ADDR_HIGH as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_SetDriverDramAddrLow",
        msg::SET_DRIVER_DRAM_ADDR_LOW as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_SetSoftMinByFreq",
        msg::SET_SOFT_MIN_BY_FREQ as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_SetSoftMaxByFreq",
        msg::SET_SOFT_MAX_BY_FREQ as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_GetDpmFreqByIndex",
        msg::GET_DPM_FREQ_BY_INDEX as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_Mode1Reset",
        msg::MODE1_RESET as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_Message_Count",
        V13_MESSAGES as u64,
    ),
    Fact::constant("smu_v13_0_6_ppsmc.h", "PPSMC_Result_OK", result::OK as u64),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_Result_Failed",
        result::FAILED as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_Result_UnknownCmd",
        result::UNKNOWN_CMD as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_TestMessage",
        msg::TEST_MESSAGE as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_GetSmuVersion",
        msg::GET_SMU_VERSION as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_GfxDriverReset",
        msg::V13_0_6_GFX_DRIVER_RESET as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_EnableAllSmuFeatures",
        msg::V13_0_6_ENABLE_ALL_SMU_FEATURES as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_GetDriverIfVersion",
        msg::V13_0_6_GET_DRIVER_IF_VERSION as u64,
    ),
    Fact::constant(
        "smu13_driver_if_v13_0_6.h",
        "SMU13_0_6_DRIVER_IF_VERSION",
        if_version::V13_0_6 as u64,
    ),
    Fact::constant(
        "smu13_driver_if_v13_0_0.h",
        "SMU13_0_0_DRIVER_IF_VERSION",
        if_version::V13_0_0 as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_SetDriverDramAddrHigh",
        msg::V13_0_6_SET_DRIVER_DRAM_ADDR_HIGH as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_SetDriverDramAddrLow",
        msg::V13_0_6_SET_DRIVER_DRAM_ADDR_LOW as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_SetSoftMinByFreq",
        msg::V13_0_6_SET_SOFT_MIN_BY_FREQ as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_SetSoftMaxByFreq",
        msg::V13_0_6_SET_SOFT_MAX_BY_FREQ as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_GetDpmFreqByIndex",
        msg::V13_0_6_GET_DPM_FREQ_BY_INDEX as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_MSG_PrepareForDriverUnload",
        msg::V13_0_6_PREPARE_FOR_DRIVER_UNLOAD as u64,
    ),
    Fact::constant(
        "smu_v13_0_6_ppsmc.h",
        "PPSMC_Message_Count",
        V13_0_6_MESSAGES as u64,
    ),
    Fact::constant("smu_v14_0_2_ppsmc.h", "PPSMC_Result_OK", result::OK as u64),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_Result_UnknownCmd",
        result::UNKNOWN_CMD as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_GetSmuVersion",
        msg::GET_SMU_VERSION as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_EnableAllSmuFeatures",
        msg::ENABLE_ALL_SMU_FEATURES as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_SetDriverDramAddrHigh",
        msg::SET_DRIVER_DRAM_ADDR_HIGH as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_SetDriverDramAddrLow",
        msg::SET_DRIVER_DRAM_ADDR_LOW as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_SetSoftMinByFreq",
        msg::SET_SOFT_MIN_BY_FREQ as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_SetSoftMaxByFreq",
        msg::SET_SOFT_MAX_BY_FREQ as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_GetDpmFreqByIndex",
        msg::GET_DPM_FREQ_BY_INDEX as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_Message_Count",
        V14_MESSAGES as u64,
    ),
    Fact::constant(
        "smu13_driver_if_v13_0_0.h",
        "PPCLK_GFXCLK",
        clk::GFXCLK as u64,
    ),
    Fact::constant(
        "smu13_driver_if_v13_0_0.h",
        "PPCLK_SOCCLK",
        clk::SOCCLK as u64,
    ),
    Fact::constant("smu13_driver_if_v13_0_0.h", "PPCLK_UCLK", clk::UCLK as u64),
    Fact::constant("smu13_driver_if_v13_0_0.h", "PPCLK_FCLK", clk::FCLK as u64),
    Fact::constant(
        "smu13_driver_if_v13_0_0.h",
        "PPCLK_COUNT",
        V13_CLOCKS as u64,
    ),
    Fact::constant("smu13_driver_if_v13_0_0.h", "NUM_GFXCLK_DPM_LEVELS", 16),
    Fact::constant("smu13_driver_if_v13_0_0.h", "NUM_SOCCLK_DPM_LEVELS", 8),
    Fact::constant("smu13_driver_if_v13_0_0.h", "NUM_UCLK_DPM_LEVELS", 4),
    Fact::constant("smu13_driver_if_v13_0_0.h", "NUM_FCLK_DPM_LEVELS", 8),
    Fact::constant(
        "smu14_driver_if_v14_0.h",
        "PPCLK_GFXCLK",
        clk::GFXCLK as u64,
    ),
    Fact::constant("smu14_driver_if_v14_0.h", "PPCLK_UCLK", clk::UCLK as u64),
    Fact::constant("smu14_driver_if_v14_0.h", "PPCLK_FCLK", clk::FCLK as u64),
    Fact::constant("smu14_driver_if_v14_0.h", "PPCLK_COUNT", V14_CLOCKS as u64),
    Fact::constant("smu14_driver_if_v14_0.h", "NUM_GFXCLK_DPM_LEVELS", 16),
    Fact::constant("smu14_driver_if_v14_0.h", "NUM_SOCCLK_DPM_LEVELS", 8),
    Fact::constant("smu14_driver_if_v14_0.h", "NUM_UCLK_DPM_LEVELS", 6),
    Fact::constant("smu14_driver_if_v14_0.h", "NUM_FCLK_DPM_LEVELS", 8),
];

/// `PPSMC_Message_Count` of each header: ids at or past it are unknown.
const V13_MESSAGES: u32 = 0x52;
const V14_MESSAGES: u32 = 0x59;
const V13_0_6_MESSAGES: u32 = 0x45;
/// The first Aldebaran PMFW that takes `GfxDriverReset` for mode 1
/// (68.07: `aldebaran_mode1_reset()` compares `smc_fw_version` with
/// 0x00440700; earlier ones used a message Linux 6.12's map lacks).
const ALDEBARAN_GFX_DRIVER_RESET_MIN: u32 = 0x0044_0700;
/// `PPSMC_Message_Count` of `aldebaran_ppsmc.h`.
const V13_0_2_MESSAGES: u32 = 0x47;
/// `PPCLK_COUNT` of `smu13_driver_if_aldebaran.h`.
const V13_0_2_CLOCKS: u32 = 7;
/// `PPCLK_COUNT` of each driver interface.
const V13_CLOCKS: u32 = 13;
const V14_CLOCKS: u32 = 11;

/// Which MP1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mp1 {
    /// MP1 13.0.0 (`mp_13_0_0_offset.h`, `smu_v13_0_0_ppsmc.h`).
    V13_0_0,
    /// MP1 14.0.2/14.0.3 (`mp_14_0_2_offset.h`, `smu_v14_0_2_ppsmc.h`).
    V14_0_2,
    /// MP1 13.0.6 (MI300; `mp_13_0_6_offset.h`, `smu_v13_0_6_ppsmc.h`):
    /// a different message map. The model serves `TestMessage`,
    /// `GetSmuVersion`, `EnableAllSmuFeatures` (0x5 here) and
    /// `GfxDriverReset` with `SMU_RESET_MODE_1` (the mode-1 reset); mode 2
    /// and every other id are refused (not modelled); the debug mailbox is
    /// refused (Linux installs none for 13.0.6). PMFW on these parts is
    /// started by the boot firmware, not by the driver's PSP
    /// (`psp_13_0_6` loads no SMU image): whoever builds the model says so
    /// through [`SmuHooks::firmware_loaded`].
    V13_0_6,
    /// MP1 13.0.2 (Aldebaran; `mp_13_0_2_offset.h`, `aldebaran_ppsmc.h`):
    /// the model serves `TestMessage`, `GetSmuVersion`,
    /// `GetDriverIfVersion`, `Enable`/`DisableAllSmuFeatures`,
    /// `SetDriverDramAddr*`, `PrepareMp1ForUnload` and `GfxDriverReset`
    /// with `SMU_RESET_MODE_1` (`aldebaran_mode1_reset()` on PMFW 68.07 or
    /// later); every other id and the debug mailbox are refused (not
    /// modelled). Whether the PMFW runs is the builder's to say
    /// ([`SmuHooks::firmware_loaded`]).
    V13_0_2,
}

impl Mp1 {
    pub fn from_version(v: (u8, u8, u8)) -> Option<Self> {
        match v {
            (13, 0, 0) => Some(Mp1::V13_0_0),
            (13, 0, 6) => Some(Mp1::V13_0_6),
            (13, 0, 2) => Some(Mp1::V13_0_2),
            (14, 0, 2) | (14, 0, 3) => Some(Mp1::V14_0_2),
            _ => None,
        }
    }

    fn regs(self) -> [Reg; 6] {
        match self {
            Mp1::V13_0_0 => {
                use socregs::mp1_13_0_0 as r;
                [
                    r::MP1_SMN_C2PMSG_66,
                    r::MP1_SMN_C2PMSG_82,
                    r::MP1_SMN_C2PMSG_90,
                    r::MP1_SMN_C2PMSG_75,
                    r::MP1_SMN_C2PMSG_53,
                    r::MP1_SMN_C2PMSG_54,
                ]
            }
            Mp1::V13_0_2 => {
                use socregs::mp1_13_0_2 as r;
                [
                    r::MP1_SMN_C2PMSG_66,
                    r::MP1_SMN_C2PMSG_82,
                    r::MP1_SMN_C2PMSG_90,
                    r::MP1_SMN_C2PMSG_75,
                    r::MP1_SMN_C2PMSG_53,
                    r::MP1_SMN_C2PMSG_54,
                ]
            }
            Mp1::V13_0_6 => {
                use socregs::mp1_13_0_6 as r;
                [
                    r::MP1_SMN_C2PMSG_66,
                    r::MP1_SMN_C2PMSG_82,
                    r::MP1_SMN_C2PMSG_90,
                    r::MP1_SMN_C2PMSG_75,
                    r::MP1_SMN_C2PMSG_53,
                    r::MP1_SMN_C2PMSG_54,
                ]
            }
            Mp1::V14_0_2 => {
                use socregs::mp1_14_0_2 as r;
                [
                    r::MP1_SMN_C2PMSG_66,
                    r::MP1_SMN_C2PMSG_82,
                    r::MP1_SMN_C2PMSG_90,
                    r::MP1_SMN_C2PMSG_75,
                    r::MP1_SMN_C2PMSG_53,
                    r::MP1_SMN_C2PMSG_54,
                ]
            }
        }
    }

    fn messages(self) -> u32 {
        match self {
            Mp1::V13_0_0 => V13_MESSAGES,
            Mp1::V13_0_6 => V13_0_6_MESSAGES,
            Mp1::V13_0_2 => V13_0_2_MESSAGES,
            Mp1::V14_0_2 => V14_MESSAGES,
        }
    }

    fn clocks(self) -> u32 {
        match self {
            Mp1::V13_0_6 => clk::V13_0_6_COUNT,
            Mp1::V13_0_2 => V13_0_2_CLOCKS,
            Mp1::V13_0_0 => V13_CLOCKS,
            Mp1::V14_0_2 => V14_CLOCKS,
        }
    }
}

/// One clock's DPM levels, in MHz, and whether it is fine-grained (bit
/// 31 of the level count, `smu_v13_0_get_fine_grained_status()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpmTable {
    pub clock: u32,
    pub levels: Vec<u32>,
    pub fine_grained: bool,
}

/// The DPM tables the model's PMFW reports (**model values**, not a real
/// board's; level counts within `NUM_*_DPM_LEVELS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpmTables(pub Vec<DpmTable>);

impl DpmTables {
    /// Navi31-shaped: GFXCLK fine-grained 500..2500, SOCCLK 2 levels,
    /// UCLK 4 levels, FCLK 4 levels.
    pub fn navi31() -> Self {
        DpmTables(alloc::vec![
            DpmTable {
                clock: clk::GFXCLK,
                levels: alloc::vec![500, 2500],
                fine_grained: true,
            },
            DpmTable {
                clock: clk::SOCCLK,
                levels: alloc::vec![500, 1200],
                fine_grained: false,
            },
            DpmTable {
                clock: clk::UCLK,
                levels: alloc::vec![97, 456, 772, 1249],
                fine_grained: false,
            },
            DpmTable {
                clock: clk::FCLK,
                levels: alloc::vec![400, 800, 1200, 1900],
                fine_grained: false,
            },
        ])
    }

    /// Navi48-shaped: as Navi31 with UCLK at 5 levels (≤ 6 in v14.0).
    pub fn navi48() -> Self {
        let mut t = DpmTables::navi31();
        if let Some(u) = t.0.iter_mut().find(|t| t.clock == clk::UCLK) {
            u.levels = alloc::vec![97, 456, 772, 1000, 1258];
        }
        t
    }

    /// MI300-shaped (MP1 13.0.6): VCLK, DCLK, SOCCLK, UCLK and FCLK at
    /// 4 levels each (`NUM_*_DPM_LEVELS` 4 in `smu_v13_0_6_pmfw.h`),
    /// none fine-grained; the frequencies are model values.
    pub fn mi300() -> Self {
        let t = |clock, levels: [u32; 4]| DpmTable {
            clock,
            levels: levels.to_vec(),
            fine_grained: false,
        };
        DpmTables(alloc::vec![
            t(clk::V13_0_6_VCLK, [914, 1143, 1257, 1400]),
            t(clk::V13_0_6_DCLK, [711, 889, 978, 1100]),
            t(clk::V13_0_6_SOCCLK, [914, 1143, 1257, 1400]),
            t(clk::V13_0_6_UCLK, [900, 1100, 1200, 1300]),
            t(clk::V13_0_6_FCLK, [1200, 1600, 1800, 2000]),
        ])
    }

    fn table(&self, clock: u32) -> Option<&DpmTable> {
        self.0.iter().find(|t| t.clock == clock)
    }
}

/// What the SMU needs from the rest of the GPU.
pub struct SmuHooks {
    /// Whether the PSP has loaded the SMU firmware (PMFW runs).
    pub firmware_loaded: alloc::boxed::Box<dyn Fn() -> bool + Send + Sync>,
    /// A mode-1 reset: the PSP and the SOC blocks back to their state at
    /// power-on (the SMU resets itself).
    pub mode1_reset: alloc::boxed::Box<dyn Fn() + Send + Sync>,
    /// Whether `PCI_COMMAND` bus mastering is on as the host last set it.
    pub bus_master: alloc::boxed::Box<dyn Fn() -> bool + Send + Sync>,
}

impl core::fmt::Debug for SmuHooks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SmuHooks").finish_non_exhaustive()
    }
}

/// What the model's PMFW did, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmuEvent {
    /// A message nobody answered (PMFW not running).
    Unanswered { msg: u32, debug: bool },
    /// A message answered with `resp`.
    Answered {
        msg: u32,
        arg: u32,
        resp: u32,
        out: Option<u32>,
        debug: bool,
    },
    /// The GPU went through a mode-1 reset.
    Mode1Reset,
}

#[derive(Debug, Default)]
struct State {
    /// Fault switch: PMFW hung (loaded, but answers nothing).
    hung: bool,
    dram_addr: (Option<u32>, Option<u32>),
    features: bool,
    soft: BTreeSet<(u32, bool)>,
    events: Vec<SmuEvent>,
}

/// The SMU model.
#[derive(Debug)]
pub struct SmuModel {
    mp1: Mp1,
    regs: RegStore,
    at: [usize; 6],
    version: u32,
    dpm: DpmTables,
    hooks: SmuHooks,
    log: Arc<RefusalLog>,
    state: Mutex<State>,
}

/// `MP1_Public | smnMP1_FIRMWARE_FLAGS` (`smu_v13_0.h`; `smu_v14_0.h`
/// has the same for every MP1 14 but 14.0.0): the SMN address
/// `smu_v13_0_check_fw_status()` and `smu_v14_0_check_fw_status()` read
/// through the NBIO's RSMU index/data pair (`RREG32_PCIE`) before SMU
/// hw_init goes on. Bit 0, `INTERRUPTS_ENABLED` (`mp_13_0_0_sh_mask.h`),
/// says PMFW runs; the model sets it exactly while it answers messages.
pub const FIRMWARE_FLAGS: usize = 0x03B0_0000 | 0x0301_0024;
/// MP1 13.0.6's (MI300): `smu_v13_0_6_ppt.c` redefines
/// `smnMP1_FIRMWARE_FLAGS` as 0x3010028 for `smu_v13_0_6_check_fw_status()`
/// (`MP1_Public` unchanged), one dword past the others'.
pub const FIRMWARE_FLAGS_13_0_6: usize = 0x03B0_0000 | 0x0301_0028;

impl Mp1 {
    /// The SMN address of `MP1_FIRMWARE_FLAGS` Linux reads on this MP1.
    pub fn firmware_flags(self) -> usize {
        match self {
            Mp1::V13_0_0 | Mp1::V14_0_2 | Mp1::V13_0_2 => FIRMWARE_FLAGS,
            Mp1::V13_0_6 => FIRMWARE_FLAGS_13_0_6,
        }
    }
}
/// `MP1_FIRMWARE_FLAGS__INTERRUPTS_ENABLED_MASK`.
pub const INTERRUPTS_ENABLED: u32 = 0x1;

const MSG: usize = 0;
const ARG: usize = 1;
const RESP: usize = 2;
const DBG_MSG: usize = 3;
const DBG_ARG: usize = 4;
const DBG_RESP: usize = 5;

impl SmuModel {
    /// The SMU of `mp1` on MP1's `bases`; `None` when a mailbox register
    /// has no base there. `version` is what `GetSmuVersion` answers.
    pub fn new(
        clock: &SimClock,
        mp1: Mp1,
        bases: &IpBases,
        version: u32,
        dpm: DpmTables,
        hooks: SmuHooks,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        let regs = mp1.regs();
        // MP1 has no public reset values (no mp_13/14 default header):
        // the mailboxes read 0 (*model value*).
        let init: Vec<(Reg, u32)> = regs.iter().map(|r| (*r, 0)).collect();
        let (store, missing) = RegStore::new(clock, bases, &init);
        if !missing.is_empty() {
            return None;
        }
        let mut at = [0; 6];
        for (i, r) in regs.iter().enumerate() {
            at[i] = r.byte_offset(bases)?;
        }
        Some(SmuModel {
            mp1,
            regs: store,
            at,
            version,
            dpm,
            hooks,
            log,
            state: Mutex::new(State::default()),
        })
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        let mut set = self.regs.offsets();
        set.insert(self.mp1.firmware_flags());
        set
    }

    pub fn events(&self) -> Vec<SmuEvent> {
        self.state.lock().events.clone()
    }

    /// The driver table's MC address, once both halves were given.
    pub fn driver_table(&self) -> Option<u64> {
        let s = self.state.lock();
        match s.dram_addr {
            (Some(hi), Some(lo)) => Some(u64::from(hi) << 32 | u64::from(lo)),
            _ => None,
        }
    }

    pub fn features_enabled(&self) -> bool {
        self.state.lock().features
    }

    /// Whether PMFW runs: the PSP has loaded it (a mode-1 reset makes
    /// the PSP forget it, so after one it runs again only once reloaded).
    pub fn running(&self) -> bool {
        (self.hooks.firmware_loaded)()
    }

    /// Fault switch: PMFW hangs (or recovers): loaded but silent, every
    /// message left unanswered, as tinygrad's `is_smu_alive()` finds a
    /// PMFW that died. A mode-1 reset through the SMU is then impossible.
    pub fn set_hung(&self, on: bool) {
        self.state.lock().hung = on;
    }

    /// The mode-1 reset's effect on the SMU itself: PMFW stops, its
    /// state is gone.
    pub fn reset(&self) {
        let mut s = self.state.lock();
        s.hung = false;
        s.dram_addr = (None, None);
        s.features = false;
        s.soft.clear();
    }

    fn refuse(&self, why: alloc::string::String) {
        self.log.push("SMU", why);
    }

    fn answer(&self, debug: bool, msg: u32, arg: u32) -> (u32, Option<u32>) {
        use result::*;
        if debug {
            return match msg {
                _ if self.mp1 == Mp1::V13_0_6 => {
                    self.refuse(format!(
                        "debug message {msg:#x} (arg {arg:#x}) on MP1 13.0.6: Linux installs no \
                         debug mailbox for it (smu_v13_0_set_smu_mailbox_registers())"
                    ));
                    (FAILED, None)
                }
                _ if self.mp1 == Mp1::V13_0_2 => {
                    self.refuse(format!(
                        "debug message {msg:#x} (arg {arg:#x}) on MP1 13.0.2: aldebaran_ppt.c \
                         sends none; not modelled"
                    ));
                    (FAILED, None)
                }
                msg::DEBUG_MODE1_RESET => (OK, None),
                _ => {
                    self.refuse(format!(
                        "debug message {msg:#x} (arg {arg:#x}) is not modelled (only DEBUGSMC_MSG_Mode1Reset)"
                    ));
                    (FAILED, None)
                }
            };
        }
        if msg == 0 || msg >= self.mp1.messages() {
            return (UNKNOWN_CMD, None);
        }
        if self.mp1 == Mp1::V13_0_6 {
            return self.answer_13_0_6(msg, arg);
        }
        if self.mp1 == Mp1::V13_0_2 {
            return self.answer_13_0_2(msg, arg);
        }
        let mut s = self.state.lock();
        let clock = arg >> 16;
        match msg {
            msg::TEST_MESSAGE => (OK, None),
            msg::GET_SMU_VERSION => (OK, Some(self.version)),
            // PMFW's driver-interface version, which
            // `smu_cmn_get_smc_version()` reads first and
            // `smu_v13_0_check_fw_version()` / `smu_v14_0_check_fw_version()`
            // compare with their own (a mismatch is only a warning):
            // `SMU13_0_0_DRIVER_IF_VERSION` (0x3D,
            // `smu13_driver_if_v13_0_0.h`) and
            // `SMU14_DRIVER_IF_VERSION_SMU_V14_0_2` (0x2E, `smu_v14_0.h`),
            // the interface the PMFW Linux 6.12 expects implements.
            msg::GET_DRIVER_IF_VERSION => (
                OK,
                Some(match self.mp1 {
                    Mp1::V14_0_2 => if_version::V14_0_2,
                    _ => if_version::V13_0_0,
                }),
            ),
            msg::ENABLE_ALL_SMU_FEATURES => {
                s.features = true;
                (OK, None)
            }
            msg::SET_DRIVER_DRAM_ADDR_HIGH => {
                s.dram_addr.0 = Some(arg);
                (OK, None)
            }
            msg::SET_DRIVER_DRAM_ADDR_LOW => {
                s.dram_addr.1 = Some(arg);
                (OK, None)
            }
            msg::SET_SOFT_MIN_BY_FREQ | msg::SET_SOFT_MAX_BY_FREQ => {
                if !s.features {
                    return (REJECTED_PREREQ, None);
                }
                if clock >= self.mp1.clocks() {
                    return (FAILED, None);
                }
                s.soft.insert((clock, msg == msg::SET_SOFT_MAX_BY_FREQ));
                (OK, None)
            }
            msg::GET_DPM_FREQ_BY_INDEX => {
                if !s.features {
                    return (REJECTED_PREREQ, None);
                }
                let level = arg & 0xFFFF;
                let Some(t) = self.dpm.table(clock) else {
                    return (FAILED, None);
                };
                if level == 0xFF {
                    let n = t.levels.len() as u32 | u32::from(t.fine_grained) << 31;
                    return (OK, Some(n));
                }
                match t.levels.get(level as usize) {
                    Some(f) => (OK, Some(*f)),
                    None => (FAILED, None),
                }
            }
            msg::MODE1_RESET if self.mp1 == Mp1::V13_0_0 => (OK, None),
            _ => {
                drop(s);
                self.refuse(format!(
                    "message {msg:#x} (arg {arg:#x}) is a PPSMC message the model does not serve"
                ));
                (FAILED, None)
            }
        }
    }

    /// MP1 13.0.2's map (see [`Mp1::V13_0_2`]).
    fn answer_13_0_2(&self, m: u32, arg: u32) -> (u32, Option<u32>) {
        use result::*;
        match m {
            msg::TEST_MESSAGE => (OK, None),
            msg::GET_SMU_VERSION => (OK, Some(self.version)),
            msg::V13_0_2_GET_DRIVER_IF_VERSION => (OK, Some(if_version::V13_0_2)),
            msg::V13_0_2_ENABLE_ALL_SMU_FEATURES => {
                self.state.lock().features = true;
                (OK, None)
            }
            msg::V13_0_2_DISABLE_ALL_SMU_FEATURES => {
                self.state.lock().features = false;
                (OK, None)
            }
            msg::V13_0_2_SET_DRIVER_DRAM_ADDR_HIGH => {
                self.state.lock().dram_addr.0 = Some(arg);
                (OK, None)
            }
            msg::V13_0_2_SET_DRIVER_DRAM_ADDR_LOW => {
                self.state.lock().dram_addr.1 = Some(arg);
                (OK, None)
            }
            // `aldebaran_set_mp1_state(PP_MP1_STATE_UNLOAD)`: answered,
            // recorded (what PMFW does then is not public).
            msg::V13_0_2_PREPARE_MP1_FOR_UNLOAD => (OK, None),
            msg::V13_0_2_GFX_DRIVER_RESET
                if arg & reset_mode::MODE_MASK == reset_mode::MODE_1
                    && self.version >= ALDEBARAN_GFX_DRIVER_RESET_MIN =>
            {
                (OK, None)
            }
            msg::V13_0_2_GFX_DRIVER_RESET => {
                self.refuse(format!(
                    "PPSMC_MSG_GfxDriverReset with mode {} (arg {arg:#x}) on PMFW {:#x}: only \
                     SMU_RESET_MODE_1 from PMFW 68.07 (aldebaran_mode1_reset()) is modelled",
                    arg & reset_mode::MODE_MASK,
                    self.version
                ));
                (FAILED, None)
            }
            _ => {
                self.refuse(format!(
                    "MP1 13.0.2 message {m:#x} (arg {arg:#x}) is a PPSMC message the model does not serve"
                ));
                (FAILED, None)
            }
        }
    }

    /// MP1 13.0.6's map (see [`Mp1::V13_0_6`]).
    fn answer_13_0_6(&self, m: u32, arg: u32) -> (u32, Option<u32>) {
        use result::*;
        match m {
            msg::TEST_MESSAGE => (OK, None),
            msg::GET_SMU_VERSION => (OK, Some(self.version)),
            msg::V13_0_6_GET_DRIVER_IF_VERSION => (OK, Some(if_version::V13_0_6)),
            msg::V13_0_6_ENABLE_ALL_SMU_FEATURES => {
                self.state.lock().features = true;
                (OK, None)
            }
            msg::V13_0_6_SET_DRIVER_DRAM_ADDR_HIGH => {
                self.state.lock().dram_addr.0 = Some(arg);
                (OK, None)
            }
            msg::V13_0_6_SET_DRIVER_DRAM_ADDR_LOW => {
                self.state.lock().dram_addr.1 = Some(arg);
                (OK, None)
            }
            // The driver lets the device go (`smu_v13_0_6_notify_unload()`);
            // what PMFW does with that is not public: answered, recorded.
            msg::V13_0_6_PREPARE_FOR_DRIVER_UNLOAD => (OK, None),
            msg::V13_0_6_SET_SOFT_MIN_BY_FREQ
            | msg::V13_0_6_SET_SOFT_MAX_BY_FREQ
            | msg::V13_0_6_GET_DPM_FREQ_BY_INDEX => self.dpm_13_0_6(m, arg),
            msg::V13_0_6_GFX_DRIVER_RESET if arg & reset_mode::MODE_MASK == reset_mode::MODE_1 => {
                (OK, None)
            }
            msg::V13_0_6_GFX_DRIVER_RESET => {
                self.refuse(format!(
                    "PPSMC_MSG_GfxDriverReset with mode {} (arg {arg:#x}): only SMU_RESET_MODE_1 \
                     (smu_v13_0_6_mode1_reset()) is modelled",
                    arg & reset_mode::MODE_MASK
                ));
                (FAILED, None)
            }
            _ => {
                self.refuse(format!(
                    "MP1 13.0.6 message {m:#x} (arg {arg:#x}) is a PPSMC message the model does not serve"
                ));
                (FAILED, None)
            }
        }
    }

    /// MP1 13.0.6's DPM messages: the soft limits of a clock with a DPM
    /// table, and a level's frequency; for level 0xFF the *highest index*
    /// (`smu_v13_0_6_get_dpm_level_count()` adds one to what it gets).
    /// Before EnableAllSmuFeatures: `PPSMC_Result_CmdRejectedPrereq`
    /// (model rule, as on 13.0.0).
    fn dpm_13_0_6(&self, m: u32, arg: u32) -> (u32, Option<u32>) {
        use result::*;
        let mut s = self.state.lock();
        if !s.features {
            return (REJECTED_PREREQ, None);
        }
        let clock = arg >> 16;
        let Some(t) = self.dpm.table(clock) else {
            return (FAILED, None);
        };
        if m == msg::V13_0_6_GET_DPM_FREQ_BY_INDEX {
            let level = arg & 0xFFFF;
            if level == 0xFF {
                let top = (t.levels.len() as u32).saturating_sub(1);
                return (OK, Some(top | u32::from(t.fine_grained) << 31));
            }
            return match t.levels.get(level as usize) {
                Some(f) => (OK, Some(*f)),
                None => (FAILED, None),
            };
        }
        s.soft
            .insert((clock, m == msg::V13_0_6_SET_SOFT_MAX_BY_FREQ));
        (OK, None)
    }

    /// Whether an answered main-mailbox message was this MP1's mode-1
    /// reset.
    fn is_mode1(&self, m: u32, arg: u32) -> bool {
        match self.mp1 {
            Mp1::V13_0_0 => m == msg::MODE1_RESET,
            Mp1::V13_0_6 => {
                m == msg::V13_0_6_GFX_DRIVER_RESET
                    && arg & reset_mode::MODE_MASK == reset_mode::MODE_1
            }
            Mp1::V13_0_2 => {
                m == msg::V13_0_2_GFX_DRIVER_RESET
                    && arg & reset_mode::MODE_MASK == reset_mode::MODE_1
            }
            Mp1::V14_0_2 => false,
        }
    }

    fn message(&self, debug: bool, msg: u32) {
        let (arg_at, resp_at) = if debug {
            (self.at[DBG_ARG], self.at[DBG_RESP])
        } else {
            (self.at[ARG], self.at[RESP])
        };
        let arg = self.regs.get(arg_at);
        if !self.running() || self.state.lock().hung {
            self.state
                .lock()
                .events
                .push(SmuEvent::Unanswered { msg, debug });
            return;
        }
        if !debug && self.regs.get(resp_at) != 0 {
            self.refuse(format!(
                "message {msg:#x} written to MP1_SMN_C2PMSG_66 while C2PMSG_90 still holds {:#x}: \
                 the driver must clear the response first (__smu_cmn_send_msg())",
                self.regs.get(resp_at)
            ));
        }
        let (resp, out) = self.answer(debug, msg, arg);
        if let Some(o) = out {
            self.regs.set(arg_at, o);
        }
        self.regs.set(resp_at, resp);
        self.state.lock().events.keep(SmuEvent::Answered {
            msg,
            arg,
            resp,
            out,
            debug,
        });
        let reset = resp == result::OK
            && ((debug && msg == msg::DEBUG_MODE1_RESET) || (!debug && self.is_mode1(msg, arg)));
        if reset {
            if (self.hooks.bus_master)() {
                // *Model rule*: both drivers clear bus mastering before
                // the reset (`amdgpu_device_mode1_reset()` →
                // `pci_clear_master()`; tinygrad's `AMDev.__init__`), so
                // that no engine DMAs while the ASIC goes down. The
                // hardware does not refuse; the model logs it and resets.
                self.refuse(format!(
                    "mode-1 reset (message {msg:#x}) with PCI bus mastering on: \
                     amdgpu_device_mode1_reset() clears it first (pci_clear_master())"
                ));
            }
            self.state.lock().events.keep(SmuEvent::Mode1Reset);
            self.reset();
            (self.hooks.mode1_reset)();
        }
    }
}

impl RegisterBus for SmuModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        if byte_offset == self.mp1.firmware_flags() {
            let alive = self.running() && !self.state.lock().hung;
            return if alive { INTERRUPTS_ENABLED } else { 0 };
        }
        self.regs.host_read(byte_offset)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        if byte_offset == self.mp1.firmware_flags() {
            // PMFW's own status: a host store does not change it.
            return;
        }
        self.regs.host_write(byte_offset, value);
        if byte_offset == self.at[MSG] {
            self.message(false, value);
        } else if byte_offset == self.at[DBG_MSG] {
            self.message(true, value);
        }
    }
}
