//! MP1 13.0.0 (Navi31): `smu_v13_0_0_ppt.c`.
//!
//! `smu_v13_0_0_mode1_reset()` sends `SMU_MSG_Mode1Reset`
//! (`PPSMC_MSG_Mode1Reset`, 0x2F) on the main mailbox for MP1 13.0.0 with
//! parameter 0 (bit 16, the RAS fatal-error flag, only when RAS reported
//! a fatal error: `smu_v13_0_0_set_mode1_reset_param()`), then sleeps
//! `SMU13_MODE1_RESET_WAIT_TIME_IN_MS` (500 ms, `smu_v13_0.h`). tinygrad's
//! `AM_SMU.mode1_reset()` sends `DEBUGSMC_MSG_Mode1Reset` on the debug
//! mailbox for 13.0.0 instead and sleeps 500 ms; barebell follows Linux.

use super::{Mode1Message, Mp1, SmuRegs};
use crate::regs::mp1_13_0_0 as r;

/// `PPSMC_MSG_Mode1Reset` (`smu_v13_0_0_ppsmc.h`).
pub const MSG_MODE1_RESET: u32 = 0x2F;
/// `SMU13_MODE1_RESET_WAIT_TIME_IN_MS` (`smu_v13_0.h`, a `.h` outside the
/// headers `cargo xtask headers` extracts: not a conformance fact).
pub const MODE1_RESET_WAIT_NS: u64 = 500_000_000;

pub const MP1: Mp1 = Mp1 {
    name: "MP1 13.0.0",
    regs: SmuRegs {
        msg: r::MP1_SMN_C2PMSG_66,
        arg: r::MP1_SMN_C2PMSG_82,
        resp: r::MP1_SMN_C2PMSG_90,
        debug_msg: r::MP1_SMN_C2PMSG_75,
        debug_arg: r::MP1_SMN_C2PMSG_53,
        debug_resp: r::MP1_SMN_C2PMSG_54,
    },
    mode1: Mode1Message::Main {
        msg: MSG_MODE1_RESET,
        param: 0,
    },
    mode1_wait_ns: MODE1_RESET_WAIT_NS,
    enable_all_features: super::MSG_ENABLE_ALL_SMU_FEATURES,
    unload: Err(super::PMFW_HANDLES_UNLOAD),
    unload_name: "",
};
