//! MP1 13.0.2 (Aldebaran): `aldebaran_ppt.c`.
//!
//! `aldebaran_mode1_reset()` sends `SMU_MSG_GfxDeviceDriverReset`, which
//! Aldebaran's message map sends as `PPSMC_MSG_GfxDriverReset` (0x3,
//! `aldebaran_ppsmc.h`), with `SMU_RESET_MODE_1`, when the PMFW is 68.07
//! or later (`smc_fw_version >= 0x00440700`; earlier ones took
//! `SMU_MSG_Mode1Reset`, which Aldebaran's map no longer has). The
//! `aldebaran_smc.bin` Debian ships is 68.64.0 (0x444000), so this is the
//! message. Bit 16 (fatal error) only when RAS reported one. Then the
//! same `SMU13_MODE1_RESET_WAIT_TIME_IN_MS` sleep as the other MP1 13.
//!
//! At unload `smu_disable_dpms()` does not return early for 13.0.2 (only
//! for 13.0.0/13.0.7/13.0.10/14.0.2/14.0.3) and sends
//! `smu_system_features_control(smu, false)`: `PPSMC_MSG_DisableAllSmuFeatures`
//! (0x8) unless SCPM is on (not on a dGPU Aldebaran as barebell drives it).

use super::{Mode1Message, Mp1, SmuRegs};
use crate::regs::mp1_13_0_2 as r;
use barebell_facts::Fact;

/// `PPSMC_MSG_GfxDriverReset` (`aldebaran_ppsmc.h`).
pub const MSG_GFX_DRIVER_RESET: u32 = 0x3;
/// `PPSMC_MSG_EnableAllSmuFeatures`.
pub const MSG_ENABLE_ALL_SMU_FEATURES: u32 = 0x7;
/// `PPSMC_MSG_DisableAllSmuFeatures`.
pub const MSG_DISABLE_ALL_SMU_FEATURES: u32 = 0x8;
/// The first PMFW that takes `GfxDriverReset` for mode 1 (68.07,
/// `aldebaran_mode1_reset()`).
pub const GFX_DRIVER_RESET_MIN_PMFW: u32 = 0x0044_0700;

pub const MP1: Mp1 = Mp1 {
    name: "MP1 13.0.2",
    regs: SmuRegs {
        msg: r::MP1_SMN_C2PMSG_66,
        arg: r::MP1_SMN_C2PMSG_82,
        resp: r::MP1_SMN_C2PMSG_90,
        debug_msg: r::MP1_SMN_C2PMSG_75,
        debug_arg: r::MP1_SMN_C2PMSG_53,
        debug_resp: r::MP1_SMN_C2PMSG_54,
    },
    mode1: Mode1Message::Main {
        msg: MSG_GFX_DRIVER_RESET,
        param: super::smu_v13_0_6::RESET_MODE_1,
    },
    mode1_wait_ns: super::smu_v13_0_0::MODE1_RESET_WAIT_NS,
    enable_all_features: MSG_ENABLE_ALL_SMU_FEATURES,
    unload: Ok(MSG_DISABLE_ALL_SMU_FEATURES),
    unload_name: "DisableAllSmuFeatures",
};

const H: &str = "aldebaran_ppsmc.h";

/// The ids, against `aldebaran_ppsmc.h`.
pub const FACTS: &[Fact] = &[
    Fact::constant(H, "PPSMC_Result_OK", super::RESULT_OK as u64),
    Fact::constant(
        H,
        "PPSMC_MSG_GetSmuVersion",
        super::MSG_GET_SMU_VERSION as u64,
    ),
    Fact::constant(H, "PPSMC_MSG_GfxDriverReset", MSG_GFX_DRIVER_RESET as u64),
    Fact::constant(
        H,
        "PPSMC_MSG_EnableAllSmuFeatures",
        MSG_ENABLE_ALL_SMU_FEATURES as u64,
    ),
    Fact::constant(
        H,
        "PPSMC_MSG_DisableAllSmuFeatures",
        MSG_DISABLE_ALL_SMU_FEATURES as u64,
    ),
];
