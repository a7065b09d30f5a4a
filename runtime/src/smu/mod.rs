//! The SMU (MP1) driver mailbox and the mode-1 reset through it.
//!
//! The mailbox protocol is `smu_cmn.c`'s: [`send`] clears the response
//! register (`C2PMSG_90`), writes the argument (`C2PMSG_82`) and the
//! message id (`C2PMSG_66`), then polls the response for up to
//! `adev->usec_timeout * 20` µs (`__smu_cmn_send_msg()`,
//! `__smu_cmn_poll_stat()`); the debug mailbox ([`send_debug`]) takes the
//! argument in `C2PMSG_53`, the id in `C2PMSG_75`, then clears `C2PMSG_54`
//! and is not waited on (`__smu_cmn_send_debug_msg()`).
//!
//! [`is_alive`] is tinygrad's `AM_SMU.is_smu_alive()`: a `GetSmuVersion`
//! with a 100 ms bound, then "anything in the response register". Linux
//! has no such check at init (it trusts `C2PMSG_81` alone), but a mode-1
//! reset sent to a PMFW that does not run is lost, so barebell checks.
//!
//! [`mode1_reset`] is `amdgpu_device_mode1_reset()`'s SMU part with the
//! message each MP1 version takes ([`Mp1::mode1`]: [`smu_v13_0_0`],
//! [`smu_v14_0_2`]) and the fixed wait that follows it, during which
//! Linux forbids MMIO (`adev->no_hw_access`). The caller owns the rest
//! of `amdgpu_device_mode1_reset()`: bus mastering off before and on
//! after, the bootloader wait ([`crate::psp::wait_for_bootloader`]) and
//! the memsize wait.
//!
//! No step here has run on hardware.

pub mod smu_v13_0_0;
pub mod smu_v13_0_2;
pub mod smu_v13_0_6;
pub mod smu_v14_0_2;

use crate::bus::{ALL_ONES, Block, BlockError, RegCondition, RegisterBus, WaitError, poll};
use crate::regs::{IpBases, Reg};
use crate::time::{Clock, delay};
use barebell_facts::Fact;
use core::fmt;

/// `PPSMC_Result_OK` (equal in `smu_v13_0_0_ppsmc.h` and
/// `smu_v14_0_2_ppsmc.h`).
pub const RESULT_OK: u32 = 0x1;
/// `PPSMC_MSG_GetSmuVersion` (equal in both headers).
pub const MSG_GET_SMU_VERSION: u32 = 0x2;
/// `PPSMC_MSG_EnableAllSmuFeatures` (equal in `smu_v13_0_0_ppsmc.h` and
/// `smu_v14_0_2_ppsmc.h`; MP1 13.0.6 numbers it 0x5).
pub const MSG_ENABLE_ALL_SMU_FEATURES: u32 = 0x6;
/// `__smu_cmn_poll_stat()`: `adev->usec_timeout * 20` polls 1 µs apart.
pub const RESPONSE_TIMEOUT_NS: u64 = 2_000_000_000;
/// tinygrad's `is_smu_alive()`: `GetSmuVersion` with `timeout=100` ms.
pub const ALIVE_TIMEOUT_NS: u64 = 100_000_000;

/// The conformance facts for the ids above.
pub const FACTS: &[Fact] = &[
    Fact::constant("smu_v13_0_0_ppsmc.h", "PPSMC_Result_OK", RESULT_OK as u64),
    Fact::constant("smu_v14_0_2_ppsmc.h", "PPSMC_Result_OK", RESULT_OK as u64),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_GetSmuVersion",
        MSG_GET_SMU_VERSION as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_GetSmuVersion",
        MSG_GET_SMU_VERSION as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_EnableAllSmuFeatures",
        MSG_ENABLE_ALL_SMU_FEATURES as u64,
    ),
    Fact::constant(
        "smu_v14_0_2_ppsmc.h",
        "PPSMC_MSG_EnableAllSmuFeatures",
        MSG_ENABLE_ALL_SMU_FEATURES as u64,
    ),
    Fact::constant(
        "smu_v13_0_0_ppsmc.h",
        "PPSMC_MSG_Mode1Reset",
        smu_v13_0_0::MSG_MODE1_RESET as u64,
    ),
];

/// The mailbox registers of one MP1 version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmuRegs {
    /// `C2PMSG_66`: the message id.
    pub msg: Reg,
    /// `C2PMSG_82`: the argument, and the output read back.
    pub arg: Reg,
    /// `C2PMSG_90`: the response.
    pub resp: Reg,
    /// `C2PMSG_75`: the debug message id.
    pub debug_msg: Reg,
    /// `C2PMSG_53`: the debug argument.
    pub debug_arg: Reg,
    /// `C2PMSG_54`: the debug response.
    pub debug_resp: Reg,
}

/// How a mode-1 reset is asked of one MP1 version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode1Message {
    /// A `PPSMC_MSG_*` on the main mailbox, answered before the reset.
    Main { msg: u32, param: u32 },
    /// A `DEBUGSMC_MSG_*` on the debug mailbox, not answered.
    Debug { msg: u32, param: u32 },
}

impl fmt::Display for Mode1Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mode1Message::Main { msg, param } => write!(
                f,
                "message {msg:#x} (argument {param:#x}) on the main mailbox (C2PMSG_66)"
            ),
            Mode1Message::Debug { msg, param } => write!(
                f,
                "debug message {msg:#x} (argument {param:#x}) on the debug mailbox (C2PMSG_75)"
            ),
        }
    }
}

/// Why nothing is sent at unload on MP1 13.0.0 and 14.0.2/14.0.3:
/// `smu_disable_dpms()` returns early for them.
pub const PMFW_HANDLES_UNLOAD: &str = "PMFW disables its own features at unload \
     (smu_disable_dpms() sends nothing for MP1 13.0.0, 14.0.2 and 14.0.3)";

/// One MP1 version: its mailbox, its mode-1 reset message and the wait
/// after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mp1 {
    pub name: &'static str,
    pub regs: SmuRegs,
    pub mode1: Mode1Message,
    /// The sleep after the reset message, MMIO forbidden
    /// (`no_hw_access`).
    pub mode1_wait_ns: u64,
    /// This MP1's `PPSMC_MSG_EnableAllSmuFeatures` id (the message maps
    /// differ: 0x6 on 13.0.0 and 14.0.2, 0x5 on 13.0.6).
    pub enable_all_features: u32,
    /// What the driver tells PMFW when it lets the device go
    /// (`smu_disable_dpms()`): `Ok(msg)` a message to send, `Err(why)`
    /// nothing, with Linux's reason.
    pub unload: Result<u32, &'static str>,
    /// The `PPSMC_MSG_` name of [`Mp1::unload`]'s message, for reports.
    pub unload_name: &'static str,
}

impl Mp1 {
    /// The MP1 discovery reports, if barebell drives it.
    pub fn for_version(v: (u8, u8, u8)) -> Option<&'static Mp1> {
        match v {
            (13, 0, 0) => Some(&smu_v13_0_0::MP1),
            (13, 0, 2) => Some(&smu_v13_0_2::MP1),
            (13, 0, 6) => Some(&smu_v13_0_6::MP1),
            (14, 0, 2) | (14, 0, 3) => Some(&smu_v14_0_2::MP1),
            _ => None,
        }
    }
}

/// What went wrong talking to the SMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmuError {
    /// A mailbox register has no base in the discovery table.
    Register(BlockError),
    /// The response did not come in time, or the device is gone.
    Wait(WaitError),
    /// PMFW answered something other than `PPSMC_Result_OK`.
    Response { msg: u32, param: u32, resp: u32 },
}

impl fmt::Display for SmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SmuError::Register(e) => write!(f, "SMU mailbox: {e}"),
            SmuError::Wait(e) => write!(f, "SMU mailbox: {e}"),
            SmuError::Response { msg, param, resp } => write!(
                f,
                "SMU message {msg:#x} (argument {param:#x}) answered {resp:#x}, not PPSMC_Result_OK"
            ),
        }
    }
}

impl From<BlockError> for SmuError {
    fn from(e: BlockError) -> Self {
        SmuError::Register(e)
    }
}

impl From<WaitError> for SmuError {
    fn from(e: WaitError) -> Self {
        SmuError::Wait(e)
    }
}

/// Sends `msg` with `param` on the main mailbox and waits up to
/// `timeout_ns` for the response (`smu_cmn_send_smc_msg_with_param()`);
/// returns the output register (`C2PMSG_82`) read back.
pub fn send<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    mp1: &Mp1,
    bases: &IpBases,
    msg: u32,
    param: u32,
    timeout_ns: u64,
) -> Result<u32, SmuError> {
    let b = Block::new(bus, *bases);
    let resp_at = b.offset(mp1.regs.resp)?;
    b.write(mp1.regs.resp, 0)?;
    b.write(mp1.regs.arg, param)?;
    b.write(mp1.regs.msg, msg)?;
    // `__smu_cmn_poll_stat()`: any non-zero response ends the wait.
    let mut deadline = crate::time::Deadline::after(clock, timeout_ns);
    let resp = loop {
        let v = bus.read32(resp_at);
        if v == ALL_ONES {
            return Err(WaitError::DeviceGone {
                what: mp1.regs.resp.name,
                byte_offset: resp_at,
            }
            .into());
        }
        if v != 0 {
            break v;
        }
        if deadline.expired(clock) {
            return Err(WaitError::Timeout {
                what: mp1.regs.resp.name,
                byte_offset: resp_at,
                waited_ns: deadline.elapsed_ns(clock),
                last: v,
            }
            .into());
        }
        core::hint::spin_loop();
    };
    if resp != RESULT_OK {
        return Err(SmuError::Response { msg, param, resp });
    }
    Ok(b.read(mp1.regs.arg)?)
}

/// Turns PMFW's features on: `smu_v13_0_system_features_control(smu,
/// true)` (`smu_v13_0.c`; `smu_v14_0_system_features_control()` in
/// `smu_v14_0.c` for 14.0.2, which `smu_smc_hw_setup()` reaches through
/// `smu_system_features_control(smu, true)`) sends
/// `SMU_MSG_EnableAllSmuFeatures` with argument 0 and waits for its
/// answer; tinygrad's `AM_SMU.init_hw()` sends the same message. MP1
/// 13.0.6 takes it too on a discrete part
/// (`smu_v13_0_6_system_features_control()` skips it only on an APU or a
/// VF), under its own id ([`Mp1::enable_all_features`]).
pub fn enable_all_features<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    mp1: &Mp1,
    bases: &IpBases,
) -> Result<(), SmuError> {
    send(
        bus,
        clock,
        mp1,
        bases,
        mp1.enable_all_features,
        0,
        RESPONSE_TIMEOUT_NS,
    )
    .map(|_| ())
}

/// The SMU's part of a driver unload, `smu_disable_dpms()` as
/// `smu_hw_fini()` reaches it: on MP1 13.0.6,
/// `smu_v13_0_6_system_features_control(smu, false)` sends
/// `PPSMC_MSG_PrepareForDriverUnload` (`smu_v13_0_6_notify_unload()`: "the
/// device is no longer driver managed"), and Linux ignores its answer; on
/// 13.0.0 and 14.0.2/14.0.3 `smu_disable_dpms()` returns before sending
/// anything, since "PMFW will handle the DPM features ... properly on
/// suspend/reset/unload". `Ok(Some(msg))` once sent, `Ok(None)` when this
/// MP1 takes nothing; an answer other than OK is reported, not an error
/// the teardown stops at.
pub fn notify_unload<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    mp1: &Mp1,
    bases: &IpBases,
) -> Result<Option<u32>, SmuError> {
    let Ok(msg) = mp1.unload else {
        return Ok(None);
    };
    send(bus, clock, mp1, bases, msg, 0, RESPONSE_TIMEOUT_NS).map(|_| Some(msg))
}

/// Sends `msg` with `param` on the debug mailbox
/// (`__smu_cmn_send_debug_msg()`: argument, message, response cleared;
/// nothing waited on).
pub fn send_debug<B: RegisterBus + ?Sized>(
    bus: &B,
    mp1: &Mp1,
    bases: &IpBases,
    msg: u32,
    param: u32,
) -> Result<(), SmuError> {
    let b = Block::new(bus, *bases);
    b.write(mp1.regs.debug_arg, param)?;
    b.write(mp1.regs.debug_msg, msg)?;
    b.write(mp1.regs.debug_resp, 0)?;
    Ok(())
}

/// Whether PMFW runs and answers (tinygrad's `is_smu_alive()`): a
/// `GetSmuVersion` bounded at [`ALIVE_TIMEOUT_NS`], then whether the
/// response register holds anything. Returns the version when it
/// answered OK.
pub fn is_alive<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    mp1: &Mp1,
    bases: &IpBases,
) -> Result<Option<u32>, SmuError> {
    match send(
        bus,
        clock,
        mp1,
        bases,
        MSG_GET_SMU_VERSION,
        0,
        ALIVE_TIMEOUT_NS,
    ) {
        Ok(v) => Ok(Some(v)),
        // A timeout or an error answer: alive only if something answered.
        Err(SmuError::Wait(WaitError::Timeout { .. })) => Ok(None),
        Err(SmuError::Response { .. }) => Ok(Some(0)),
        Err(e) => Err(e),
    }
}

/// Sends the mode-1 reset `mp1` takes and sleeps the time Linux sleeps
/// after it without touching the device (`smu_v13_0_0_mode1_reset()`,
/// `smu_v14_0_2_mode1_reset()`).
pub fn mode1_reset<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    mp1: &Mp1,
    bases: &IpBases,
) -> Result<(), SmuError> {
    match mp1.mode1 {
        Mode1Message::Main { msg, param } => {
            send(bus, clock, mp1, bases, msg, param, RESPONSE_TIMEOUT_NS)?;
        }
        Mode1Message::Debug { msg, param } => send_debug(bus, mp1, bases, msg, param)?,
    }
    delay(clock, mp1.mode1_wait_ns);
    Ok(())
}

/// Polls `reg` until `(value & mask) == want` (a helper for the callers'
/// waits after the reset).
pub fn wait_reg<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    bases: &IpBases,
    reg: Reg,
    mask: u32,
    want: u32,
    timeout_ns: u64,
) -> Result<u32, SmuError> {
    let at = Block::new(bus, *bases).offset(reg)?;
    let c = RegCondition {
        what: reg.name,
        byte_offset: at,
        mask,
        want,
    };
    Ok(poll(bus, clock, c, timeout_ns)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::{Cell, RefCell};

    /// A PMFW stand-in on a flat register file: `answer` is what it puts
    /// in the response register when a message arrives (`None`: silent);
    /// every read costs 10 ns.
    struct Pmfw {
        regs: RefCell<[u32; 0x400]>,
        now: Cell<u64>,
        answer: Option<u32>,
        gone: bool,
        writes: RefCell<alloc::vec::Vec<(usize, u32)>>,
    }
    extern crate alloc;

    impl Clock for Pmfw {
        fn now_ns(&self) -> u64 {
            self.now.get()
        }
        fn sleep_ns(&self, ns: u64) {
            self.now.set(self.now.get() + ns);
        }
    }
    impl RegisterBus for Pmfw {
        fn read32(&self, at: usize) -> u32 {
            self.now.set(self.now.get() + 10);
            if self.gone {
                return ALL_ONES;
            }
            self.regs.borrow().get(at / 4).copied().unwrap_or(0)
        }
        fn write32(&self, at: usize, v: u32) {
            self.writes.borrow_mut().push((at, v));
            if let Some(r) = self.regs.borrow_mut().get_mut(at / 4) {
                *r = v;
            }
            let msg = smu_v13_0_0::MP1.regs.msg.byte_offset(&BASES);
            let resp = smu_v13_0_0::MP1.regs.resp.byte_offset(&BASES);
            if Some(at) == msg
                && let (Some(a), Some(r)) = (self.answer, resp)
                && let Some(slot) = self.regs.borrow_mut().get_mut(r / 4)
            {
                *slot = a;
            }
        }
    }

    const BASES: IpBases = IpBases::new(&[0, 0, 0, 0, 0, 0, 0, 0]);

    fn pmfw(answer: Option<u32>, gone: bool) -> Pmfw {
        Pmfw {
            regs: RefCell::new([0; 0x400]),
            now: Cell::new(0),
            answer,
            gone,
            writes: RefCell::default(),
        }
    }

    #[test]
    fn a_silent_pmfw_is_not_alive_after_the_bound() {
        let p = pmfw(None, false);
        let mp1 = &smu_v13_0_0::MP1;
        assert_eq!(is_alive(&p, &p, mp1, &BASES), Ok(None));
        assert!(p.now_ns() >= ALIVE_TIMEOUT_NS);
        assert!(p.now_ns() < ALIVE_TIMEOUT_NS + 1_000);
    }

    #[test]
    fn a_gone_device_is_an_error_not_a_silent_pmfw() {
        let p = pmfw(None, true);
        let r = is_alive(&p, &p, &smu_v13_0_0::MP1, &BASES);
        assert!(
            matches!(r, Err(SmuError::Wait(WaitError::DeviceGone { .. }))),
            "{r:?}"
        );
    }

    /// `__smu_cmn_send_msg()`'s order: response cleared, argument, then
    /// the message id.
    #[test]
    fn the_main_mailbox_clears_the_response_first_and_reports_a_failure() {
        let p = pmfw(Some(0xFF), false);
        let mp1 = &smu_v13_0_0::MP1;
        let r = send(&p, &p, mp1, &BASES, 0x2F, 7, RESPONSE_TIMEOUT_NS);
        assert_eq!(
            r,
            Err(SmuError::Response {
                msg: 0x2F,
                param: 7,
                resp: 0xFF
            })
        );
        let at = |r: Reg| r.byte_offset(&BASES).unwrap();
        assert_eq!(
            *p.writes.borrow(),
            [
                (at(mp1.regs.resp), 0),
                (at(mp1.regs.arg), 7),
                (at(mp1.regs.msg), 0x2F)
            ]
        );
    }

    /// MP1 13.0.0 resets with `PPSMC_MSG_Mode1Reset` on the main mailbox
    /// and then sleeps 500 ms; 14.0.2 sends `DEBUGSMC_MSG_Mode1Reset` on
    /// the debug mailbox (argument, message, response cleared) and 1 s.
    #[test]
    fn each_mp1_resets_with_its_own_message_and_wait() {
        let p = pmfw(Some(RESULT_OK), false);
        mode1_reset(&p, &p, &smu_v13_0_0::MP1, &BASES).unwrap();
        assert!(
            p.writes
                .borrow()
                .contains(&(smu_v13_0_0::MP1.regs.msg.byte_offset(&BASES).unwrap(), 0x2F))
        );
        assert!(p.now_ns() >= 500_000_000);
        let mp1 = &smu_v14_0_2::MP1;
        // 14.0.2's registers sit in segment 1: give it a base there.
        let bases = IpBases::new(&[0, 0x40, 0, 0, 0, 0, 0, 0]);
        let q = pmfw(None, false);
        mode1_reset(&q, &q, mp1, &bases).unwrap();
        let at = |r: Reg| r.byte_offset(&bases).unwrap();
        assert_eq!(
            *q.writes.borrow(),
            [
                (at(mp1.regs.debug_arg), 0),
                (at(mp1.regs.debug_msg), 2),
                (at(mp1.regs.debug_resp), 0)
            ]
        );
        assert!(q.now_ns() >= 1_000_000_000);
    }
}
