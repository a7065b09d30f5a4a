//! The SMU (MP1) message that mode-1 resets the ASIC, per MP1 version
//! (issue 20, item 4: the last rung of hang recovery). One small module
//! so that the start-of-day reset can share it.
//!
//! - MP1 13.0.0 (Navi31): `smu_v13_0_0_mode1_reset()` sends
//!   `SMU_MSG_Mode1Reset` (`PPSMC_MSG_Mode1Reset`, 0x2F in
//!   `smu_v13_0_0_ppsmc.h`) on the main mailbox: clear `C2PMSG_90`,
//!   argument 0 in `C2PMSG_82`, message in `C2PMSG_66`, poll `C2PMSG_90`
//!   for `PPSMC_Result_OK` (`__smu_cmn_send_msg()`,
//!   `smu_cmn_send_smc_msg_with_param()`).
//! - MP1 14.0.2 / 14.0.3 (Navi48): `smu_v14_0_2_mode1_reset()` sends
//!   `DEBUGSMC_MSG_Mode1Reset` (2, defined in `smu_v14_0_2_ppt.c`) on the
//!   debug mailbox (`smu_cmn_send_debug_smc_msg()`: argument in
//!   `C2PMSG_53`, message in `C2PMSG_75`, `C2PMSG_54` cleared; Linux does
//!   not wait for an answer there).
//!
//! tinygrad's `AM_SMU.mode1_reset()` uses the debug message for 13.0.0
//! too; barebell follows Linux's per-version choice.
//!
//! Both drivers then sleep 500 ms (`SMU13_MODE1_RESET_WAIT_TIME_IN_MS`,
//! `SMU14_MODE1_RESET_WAIT_TIME_IN_MS`; tinygrad `time.sleep(0.5)`)
//! before touching the device; the caller does that and waits for the
//! device to come back ([`crate::psp`]'s bootloader-ready bit).

use crate::bus::{Block, BlockError, RegisterBus};
use crate::regs::{IpBases, Reg};
use crate::time::Clock;
use barebell_facts::Fact;

/// `PPSMC_MSG_Mode1Reset` (`smu_v13_0_0_ppsmc.h`).
pub const PPSMC_MSG_MODE1_RESET: u32 = 0x2F;
/// `DEBUGSMC_MSG_Mode1Reset` (`smu_v13_0_0_ppt.c`, `smu_v14_0_2_ppt.c`:
/// a `.c` define, so no header fact).
pub const DEBUGSMC_MSG_MODE1_RESET: u32 = 2;
/// `PPSMC_Result_OK`.
pub const PPSMC_RESULT_OK: u32 = 0x1;
/// How long the SMU may take to answer a message: Linux polls
/// `adev->usec_timeout * 20` µs (2 s).
pub const MESSAGE_TIMEOUT_NS: u64 = 2_000_000_000;
/// The sleep after the message (`SMU13_MODE1_RESET_WAIT_TIME_IN_MS`,
/// `SMU14_MODE1_RESET_WAIT_TIME_IN_MS`, both 500).
pub const RESET_WAIT_NS: u64 = 500_000_000;

pub const FACTS: &[Fact] = &[
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_Mode1Reset",
        PPSMC_MSG_MODE1_RESET as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_Result_OK",
        PPSMC_RESULT_OK as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_Result_OK",
        PPSMC_RESULT_OK as u64,
    ),
];

/// Which mailbox and message an MP1 version takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode1Message {
    /// Main mailbox (`C2PMSG_66/82/90`), answered.
    Main {
        msg: u32,
        id: Reg,
        arg: Reg,
        resp: Reg,
    },
    /// Debug mailbox (`C2PMSG_75/53/54`), not waited on.
    Debug {
        msg: u32,
        id: Reg,
        arg: Reg,
        resp: Reg,
    },
}

impl Mode1Message {
    /// The message for MP1 `version`; `None` for versions barebell has no
    /// table for.
    pub fn for_version(version: (u8, u8, u8)) -> Option<Self> {
        match version {
            (13, 0, 0) => {
                use crate::regs::mp_13_0_0 as r;
                Some(Mode1Message::Main {
                    msg: PPSMC_MSG_MODE1_RESET,
                    id: r::MP1_SMN_C2PMSG_66,
                    arg: r::MP1_SMN_C2PMSG_82,
                    resp: r::MP1_SMN_C2PMSG_90,
                })
            }
            (14, 0, 2) | (14, 0, 3) => {
                use crate::regs::mp_14_0_2 as r;
                Some(Mode1Message::Debug {
                    msg: DEBUGSMC_MSG_MODE1_RESET,
                    id: r::MP1_SMN_C2PMSG_75,
                    arg: r::MP1_SMN_C2PMSG_53,
                    resp: r::MP1_SMN_C2PMSG_54,
                })
            }
            _ => None,
        }
    }

    /// What the message is called in the driver sources.
    pub fn name(&self) -> &'static str {
        match self {
            Mode1Message::Main { .. } => "PPSMC_MSG_Mode1Reset (main mailbox)",
            Mode1Message::Debug { .. } => "DEBUGSMC_MSG_Mode1Reset (debug mailbox)",
        }
    }
}

/// Why the SMU did not take the reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmuError {
    /// No table for this MP1 version.
    Unsupported {
        version: (u8, u8, u8),
    },
    Register(BlockError),
    /// The SMU answered something other than OK.
    Refused {
        resp: u32,
    },
}

impl core::fmt::Display for SmuError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SmuError::Unsupported { version: (a, b, c) } => {
                write!(f, "no mode-1 reset message known for MP1 {a}.{b}.{c}")
            }
            SmuError::Register(e) => write!(f, "SMU mailbox: {e}"),
            SmuError::Refused { resp } => write!(
                f,
                "the SMU answered {resp:#x} to the mode-1 reset (PPSMC_Result_OK is {PPSMC_RESULT_OK:#x})"
            ),
        }
    }
}

impl From<BlockError> for SmuError {
    fn from(e: BlockError) -> Self {
        SmuError::Register(e)
    }
}

/// Sends the mode-1 reset message for MP1 `version` through `mp1`'s
/// mailbox. Bus mastering and the wait for the device to come back are
/// the caller's (`amdgpu_device_mode1_reset()` order).
pub fn send_mode1<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    mp1: &IpBases,
    version: (u8, u8, u8),
) -> Result<Mode1Message, SmuError> {
    let m = Mode1Message::for_version(version).ok_or(SmuError::Unsupported { version })?;
    let b = Block::new(bus, *mp1);
    match m {
        Mode1Message::Main { msg, id, arg, resp } => {
            b.write(resp, 0)?;
            b.write(arg, 0)?;
            b.write(id, msg)?;
            let t = clock.now_ns();
            let v = loop {
                let v = b.read(resp)?;
                if v == crate::bus::ALL_ONES {
                    return Err(SmuError::Register(BlockError::Wait(
                        crate::bus::WaitError::DeviceGone {
                            what: "SMU answer to PPSMC_MSG_Mode1Reset",
                            byte_offset: b.offset(resp)?,
                        },
                    )));
                }
                if v != 0 {
                    break v;
                }
                let waited_ns = clock.now_ns().saturating_sub(t);
                if waited_ns > MESSAGE_TIMEOUT_NS {
                    return Err(SmuError::Register(BlockError::Wait(
                        crate::bus::WaitError::Timeout {
                            what: "SMU answer to PPSMC_MSG_Mode1Reset",
                            byte_offset: b.offset(resp)?,
                            waited_ns,
                            last: v,
                        },
                    )));
                }
                core::hint::spin_loop();
            };
            if v != PPSMC_RESULT_OK {
                return Err(SmuError::Refused { resp: v });
            }
        }
        Mode1Message::Debug { msg, id, arg, resp } => {
            b.write(arg, 0)?;
            b.write(id, msg)?;
            b.write(resp, 0)?;
        }
    }
    Ok(m)
}
