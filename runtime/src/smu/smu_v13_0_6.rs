//! MP1 13.0.6 (MI300): `smu_v13_0_6_ppt.c`.
//!
//! `smu_v13_0_6_mode1_reset()` sends `SMU_MSG_GfxDeviceDriverReset`,
//! which the 13.0.6 message map sends as `PPSMC_MSG_GfxDriverReset` (0x3,
//! `smu_v13_0_6_ppsmc.h`; `MSG_MAP(GfxDeviceDriverReset, ...)`), with
//! parameter `SMU_RESET_MODE_1` (1, `enum smu_reset_mode` in
//! `amdgpu_smu.h`) and bit 16 only when RAS reported a fatal error, on the
//! main mailbox (`smu_cmn_send_smc_msg_with_param()`), then sleeps
//! `SMU13_MODE1_RESET_WAIT_TIME_IN_MS` (500 ms). The message map differs
//! from 13.0.0's (there 0x3 is not a reset, and `PPSMC_MSG_Mode1Reset`
//! does not exist in 13.0.6's header), but the mailbox and the wait are
//! the same, so 13.0.6 is one more table row.

use super::{Mode1Message, Mp1, SmuRegs};
use crate::regs::mp1_13_0_6 as r;
use barebell_facts::Fact;

/// `PPSMC_MSG_GfxDriverReset` (`smu_v13_0_6_ppsmc.h`).
pub const MSG_GFX_DRIVER_RESET: u32 = 0x3;
/// `PPSMC_MSG_EnableAllSmuFeatures` (`smu_v13_0_6_ppsmc.h`).
pub const MSG_ENABLE_ALL_SMU_FEATURES: u32 = 0x5;
/// `PPSMC_MSG_PrepareForDriverUnload` (`smu_v13_0_6_ppsmc.h`), what
/// `smu_v13_0_6_notify_unload()` sends at driver unload.
pub const MSG_PREPARE_FOR_DRIVER_UNLOAD: u32 = 0x34;
/// `SMU_RESET_MODE_1` (`amdgpu_smu.h`, outside the extracted headers: cited).
pub const RESET_MODE_1: u32 = 1;

pub const MP1: Mp1 = Mp1 {
    name: "MP1 13.0.6",
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
        param: RESET_MODE_1,
    },
    mode1_wait_ns: super::smu_v13_0_0::MODE1_RESET_WAIT_NS,
    enable_all_features: MSG_ENABLE_ALL_SMU_FEATURES,
    unload: Ok(MSG_PREPARE_FOR_DRIVER_UNLOAD),
    unload_name: "PrepareForDriverUnload",
};

const H: &str = "smu_v13_0_6_ppsmc.h";

/// The ids, against `smu_v13_0_6_ppsmc.h`.
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
        "PPSMC_MSG_PrepareForDriverUnload",
        MSG_PREPARE_FOR_DRIVER_UNLOAD as u64,
    ),
];
