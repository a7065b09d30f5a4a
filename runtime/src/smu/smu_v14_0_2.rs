//! MP1 14.0.2/14.0.3 (Navi48): `smu_v14_0_2_ppt.c`.
//!
//! `smu_v14_0_2_mode1_reset()` sends `DEBUGSMC_MSG_Mode1Reset` (2, defined
//! in `smu_v14_0_2_ppt.c` itself) on the debug mailbox with no parameter
//! (`smu_cmn_send_debug_smc_msg()`), then sleeps 1000 ms with MMIO
//! forbidden. `smu_v14_0_2_ppsmc.h` has no `PPSMC_MSG_Mode1Reset`.
//! tinygrad's `AM_SMU.mode1_reset()` sends the same debug message for MP0
//! 14.x and sleeps 500 ms.

use super::{Mode1Message, Mp1, SmuRegs};
use crate::regs::mp1_14_0_2 as r;

/// `DEBUGSMC_MSG_Mode1Reset` (`smu_v14_0_2_ppt.c`; not in a header, so
/// not a conformance fact).
pub const DEBUG_MSG_MODE1_RESET: u32 = 2;
/// The `msleep(1000)` after it.
pub const MODE1_RESET_WAIT_NS: u64 = 1_000_000_000;

pub const MP1: Mp1 = Mp1 {
    name: "MP1 14.0.2",
    regs: SmuRegs {
        msg: r::MP1_SMN_C2PMSG_66,
        arg: r::MP1_SMN_C2PMSG_82,
        resp: r::MP1_SMN_C2PMSG_90,
        debug_msg: r::MP1_SMN_C2PMSG_75,
        debug_arg: r::MP1_SMN_C2PMSG_53,
        debug_resp: r::MP1_SMN_C2PMSG_54,
    },
    mode1: Mode1Message::Debug {
        msg: DEBUG_MSG_MODE1_RESET,
        param: 0,
    },
    mode1_wait_ns: MODE1_RESET_WAIT_NS,
    enable_all_features: super::MSG_ENABLE_ALL_SMU_FEATURES,
    unload: Err(super::PMFW_HANDLES_UNLOAD),
    unload_name: "",
};
