//! PSP (MP0) firmware loading: the bootloader mailbox, the GPCOM ring and
//! the commands that put the graphics firmware in place and start the RLC
//! autoload.
//!
//! The sequence is Linux 6.12's for MP0 13.0.0, where `psp_load_fw()`
//! runs:
//! 1. `psp_hw_start()`: bootloader component loads in the order KDB, SPL,
//!    SYS_DRV, SOC_DRV, INTF_DRV, DBG_DRV, RAS_DRV, SOS, each through
//!    `psp_v13_0_bootloader_load_component()` ([`Psp::bootloader_load`]);
//!    then `psp_v13_0_ring_create()` ([`Psp::ring_create`]); then
//!    `psp_tmr_init()` (LOAD_TOC, which answers with the TMR size); then,
//!    because 13.0.0 has `pmfw_centralized_cstate_management`,
//!    `psp_load_smu_fw()`; then `psp_tmr_load()` (SETUP_TMR).
//! 2. `psp_load_non_psp_fw()`: LOAD_IP_FW for every registered ucode in
//!    `AMDGPU_UCODE_ID` order, and AUTOLOAD_RLC right after RLC_G
//!    ([`gfx_load_order`]).
//! 3. `gfx_v11_0_wait_for_rlc_autoload_complete()`: `CP_STAT == 0` and
//!    `RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE`
//!    ([`Psp::wait_rlc_autoload`]).
//!
//! MP0 14.x (`psp_v14_0.c`) runs the same mailbox protocol at the same
//! offsets under the `MPASP_` names ([`PspRegs::MP0_14_0_2`]); its
//! bundles add SOC/INTF/DBG/RAS/IPKEYMGR drivers, and it loads IPKEYMGR
//! too (`psp_v14_0_bootloader_load_ipkeymgr_drv()`; [`Plan::ipkeymgr_drv`]).
//! Its bootloader wait checks bit 31 only, as this module does for both.
//!
//! The SPL stage runs when the bundle has an SPL component, and on 13.0.0
//! carries the KDB: `psp_v13_0_bootloader_load_spl()` passes `&psp->kdb`
//! with `PSP_BL__LOAD_TOS_SPL_TABLE`, and tinygrad's AM does the same
//! (`spl_key`), which sOS accepted on a gfx1100; `psp_v14_0.c` passes
//! `&psp->spl` ([`Plan::spl_from_kdb`]).
//!
//! Waits follow Linux's timing: the bootloader 10 × 100 ms
//! ([`BOOTLOADER_TIMEOUT_NS`]), `mdelay(20)` ([`HANDSHAKE_DELAY_NS`])
//! before the sign-of-life wait and after each ring command, sOS ready
//! (`C2PMSG_64` bit 31) before the ring is created, and a live ring
//! stopped before another is created ([`Psp::ring_stop`]).
//!
//! Where this deviates from Linux, and why:
//! - After the SOS load, Linux waits for `C2PMSG_81` to change from what
//!   it reads after the 20 ms delay; this waits for it to be non-zero
//!   (the sign of life, as tinygrad tests it), which also accepts an sOS
//!   that came up within the delay.
//! - After a bootloader command, Linux 13.0.0 waits for `C2PMSG_35` to
//!   equal exactly `0x8000_0000`; a status in bits 15:0 would only show as
//!   a timeout. This waits for bit 31 and then reports a non-zero status
//!   as [`PspError::BootloaderStatus`], which says what went wrong.
//! - The fence wait reads `C2PMSG_64` once per iteration, where Linux
//!   invalidates HDP: it catches a vanished device (all-ones) and keeps a
//!   simulated clock moving.
//! - When the fence wait times out, Linux only logs the timeout
//!   (`psp_cmd_submit_buf()`); the VM fault that usually explains it is
//!   reported separately by the GMC interrupt handler. Given the hub the
//!   PSP's DMA goes through ([`Psp::with_fault_hub`]), this reads the
//!   hub's latched fault ([`crate::gmc::hub::read_fault`]) and puts it in the
//!   [`PspError::FenceTimeout`], so the error says which address the PSP
//!   could not reach.
//!
//! No step here has run on hardware.

use crate::bus::{ALL_ONES, Block, BlockError, RegCondition, RegisterBus, WaitError, poll};
use crate::regs::{IpBases, Reg};
use crate::time::{Clock, Deadline, delay};
use barebell_firmware_if::psp_gfx::{
    self, CMD_RESP_BYTES, CmdResp, GFX_CMD_STATUS_MASK, RESP_OFFSET, RbFrame, Resp, TmrFlags,
    bootloader, ctrl_cmd, fw_type,
};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};
use zerocopy::{FromBytes, IntoBytes};

/// `PSP_1_MEG`: bootloader buffers are passed as `addr >> 20`.
pub const BOOTLOADER_ALIGN: u64 = 0x10_0000;
/// `PSP_TMR_ALIGNMENT`.
pub const TMR_ALIGN: u64 = 0x10_0000;
/// `psp_ring_init()`'s ring size.
pub const RING_BYTES: usize = 0x1000;
/// `PSP_RING_TYPE__KM`, shifted into C2PMSG_64 by `psp_v13_0_ring_create()`.
pub const RING_TYPE_KM: u32 = 2;
/// Bit 31 of C2PMSG_35 / C2PMSG_64: the PSP has answered.
pub const READY: u32 = 0x8000_0000;
/// `psp_wait_for()` polls `usec_timeout` (100 000) times with 1 µs delays.
pub const REG_TIMEOUT_NS: u64 = 100_000_000;
/// `psp_v13_0_wait_for_bootloader()` retries that wait 10 times on 13.0.0.
pub const BOOTLOADER_TIMEOUT_NS: u64 = 10 * REG_TIMEOUT_NS;
/// The `mdelay(20)` Linux puts after writing a command whose answer it
/// then polls for, in `psp_v13_0_bootloader_load_sos()`,
/// `psp_v13_0_ring_create()` and `psp_v13_0_ring_stop()` (and their
/// `psp_v14_0.c` twins): "there might be handshake issue with hardware
/// which needs delay". tinygrad's AM sleeps the same 20 ms in
/// `_ring_create`.
pub const HANDSHAKE_DELAY_NS: u64 = 20_000_000;
/// `psp_cmd_submit_buf()`: `psp_timeout` (20 000) sleeps of 60-100 µs.
pub const FENCE_TIMEOUT_NS: u64 = 2_000_000_000;

pub use crate::regs::mp::PspRegs;

pub mod mp13_0_2;
pub mod mp13_0_6;

/// The GC registers the autoload wait reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcRegs {
    pub cp_stat: Reg,
    pub rlc_bootload_status: Reg,
    /// `RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK`.
    pub bootload_complete: u32,
}

impl GcRegs {
    pub const GC_11_0_0: GcRegs = GcRegs {
        cp_stat: crate::regs::gc_11_0_0::CP_STAT,
        rlc_bootload_status: crate::regs::gc_11_0_0::RLC_RLCS_BOOTLOAD_STATUS,
        bootload_complete: crate::regs::gc_11_0_0::RlcBootloadStatus::new()
            .with_bootload_complete(true)
            .into_bits(),
    };
    pub const GC_12_0_0: GcRegs = GcRegs {
        cp_stat: crate::regs::gc_12_0_0::CP_STAT,
        rlc_bootload_status: crate::regs::gc_12_0_0::RLC_RLCS_BOOTLOAD_STATUS,
        bootload_complete: crate::regs::gc_12_0_0::RlcBootloadStatus::new()
            .with_bootload_complete(true)
            .into_bits(),
    };

    pub fn for_version(v: (u8, u8, u8)) -> Option<GcRegs> {
        match v {
            (11, 0, 0) => Some(Self::GC_11_0_0),
            (12, 0, 0) | (12, 0, 1) => Some(Self::GC_12_0_0),
            _ => None,
        }
    }
}

/// A bootloader component, with the command that loads it
/// (`enum psp_bootloader_cmd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    Kdb,
    Spl,
    SysDrv,
    SocDrv,
    IntfDrv,
    DbgDrv,
    RasDrv,
    /// Loaded by `psp_v14_0.c` only; `psp_v13_0_funcs` has no entry.
    IpKeyMgrDrv,
    Sos,
}

impl Component {
    /// `psp_hw_start()`'s order.
    pub const ORDER: [Component; 9] = [
        Component::Kdb,
        Component::Spl,
        Component::SysDrv,
        Component::SocDrv,
        Component::IntfDrv,
        Component::DbgDrv,
        Component::RasDrv,
        Component::IpKeyMgrDrv,
        Component::Sos,
    ];

    pub fn command(self) -> u32 {
        match self {
            Component::Kdb => bootloader::LOAD_KEY_DATABASE,
            Component::Spl => bootloader::LOAD_TOS_SPL_TABLE,
            Component::SysDrv => bootloader::LOAD_SYSDRV,
            Component::SocDrv => bootloader::LOAD_SOCDRV,
            Component::IntfDrv => bootloader::LOAD_INTFDRV,
            Component::DbgDrv => bootloader::LOAD_DBGDRV,
            Component::RasDrv => bootloader::LOAD_RASDRV,
            Component::IpKeyMgrDrv => bootloader::LOAD_IPKEYMGRDRV,
            Component::Sos => bootloader::LOAD_SOSDRV,
        }
    }

    /// The section name barebell-firmware-if gives it in an SOS bundle.
    pub fn section(self) -> &'static str {
        match self {
            Component::Kdb => "kdb",
            Component::Spl => "spl",
            Component::SysDrv => "sys_drv",
            Component::SocDrv => "soc_drv",
            Component::IntfDrv => "intf_drv",
            Component::DbgDrv => "dbg_drv",
            Component::RasDrv => "ras_drv",
            Component::IpKeyMgrDrv => "ipkeymgr_drv",
            Component::Sos => "sos",
        }
    }
}

/// Why a PSP step failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PspError {
    /// A bounded register wait ended (timeout or all-ones).
    Wait(WaitError),
    /// A buffer the PSP is given by `addr >> 20` is not 1 MiB aligned.
    Misaligned {
        what: &'static str,
        mc_addr: u64,
        align: u64,
    },
    /// Data does not fit the buffer meant for it.
    TooLarge {
        what: &'static str,
        len: usize,
        capacity: usize,
    },
    /// The bootloader answered a component load with a non-zero status.
    BootloaderStatus { component: Component, status: u32 },
    /// The ring-create command came back with a non-zero status.
    RingStatus { status: u32 },
    /// A register needed by a step is not in the IP's discovered bases.
    Register(BlockError),
    /// The fence did not reach the submitted value in time. `vm_fault`
    /// is what the PSP's hub latched, if a hub was given and it latched
    /// one (the likely reason: the PSP could not reach a buffer).
    FenceTimeout {
        cmd_id: u32,
        want: u32,
        last: u32,
        waited_ns: u64,
        vm_fault: Option<crate::gmc::hub::VmFault>,
    },
    /// The device vanished during a fence wait.
    DeviceGone { cmd_id: u32 },
    /// The PSP answered a GPCOM command with a non-zero status.
    CommandFailed {
        cmd_id: u32,
        fw_type: u32,
        status: u32,
    },
    /// A step ran before the step it depends on.
    OutOfOrder {
        step: &'static str,
        needs: &'static str,
    },
    /// LOAD_TOC answered a TMR size no TMR can have (0).
    BadTmrSize { size: u32 },
    /// A blob, or a piece of one, that the sequence needs is absent or
    /// of the wrong kind.
    Missing {
        what: &'static str,
        blob: &'static str,
    },
}

impl From<WaitError> for PspError {
    fn from(e: WaitError) -> Self {
        PspError::Wait(e)
    }
}

/// A register that cannot be placed is [`PspError::Register`]; a wait on
/// one that ends is [`PspError::Wait`], as from [`poll`].
impl From<BlockError> for PspError {
    fn from(e: BlockError) -> Self {
        match e {
            BlockError::Wait(w) => PspError::Wait(w),
            e => PspError::Register(e),
        }
    }
}

impl core::fmt::Display for PspError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            PspError::Wait(e) => write!(f, "{e}"),
            PspError::Misaligned {
                what,
                mc_addr,
                align,
            } => write!(f, "{what} at {mc_addr:#x} is not aligned to {align:#x}"),
            PspError::TooLarge {
                what,
                len,
                capacity,
            } => write!(f, "{what}: {len} bytes do not fit {capacity}"),
            PspError::BootloaderStatus { component, status } => write!(
                f,
                "PSP bootloader refused {component:?}: C2PMSG_35 status {status:#x}"
            ),
            PspError::RingStatus { status } => {
                write!(f, "PSP ring create: C2PMSG_64 status {status:#x}")
            }
            PspError::Register(e) => write!(f, "{e}"),
            PspError::FenceTimeout {
                cmd_id,
                want,
                last,
                waited_ns,
                vm_fault,
            } => {
                write!(
                    f,
                    "GPCOM command {cmd_id:#x}: fence still {last} after {waited_ns} ns, want {want}"
                )?;
                match vm_fault {
                    Some(fault) => write!(f, "; VM fault latched: {fault}"),
                    None => Ok(()),
                }
            }
            PspError::DeviceGone { cmd_id } => {
                write!(f, "device gone while waiting for GPCOM command {cmd_id:#x}")
            }
            PspError::CommandFailed {
                cmd_id,
                fw_type,
                status,
            } => write!(
                f,
                "GPCOM command {cmd_id:#x} (fw_type {fw_type}) failed with status {status:#x}"
            ),
            PspError::OutOfOrder { step, needs } => write!(f, "{step} needs {needs} first"),
            PspError::BadTmrSize { size } => {
                write!(f, "LOAD_TOC asked for a TMR of {size:#x} bytes")
            }
            PspError::Missing { what, blob } => write!(f, "{blob} lacks {what}"),
        }
    }
}

/// A buffer both the CPU and the PSP reach: a CPU mapping and the MC
/// (GPU) address the PSP uses for the same bytes.
#[derive(Debug)]
pub struct DmaBuf {
    cpu: NonNull<u8>,
    len: usize,
    mc_addr: u64,
}

impl DmaBuf {
    /// # Safety
    /// `cpu` must point to `len` bytes, 4-byte aligned, that stay valid
    /// for reads and writes while the value lives, that the device sees
    /// at `mc_addr`, and that the host touches only through this value.
    pub unsafe fn new(cpu: NonNull<u8>, len: usize, mc_addr: u64) -> Self {
        DmaBuf { cpu, len, mc_addr }
    }

    pub fn mc_addr(&self) -> u64 {
        self.mc_addr
    }

    /// The CPU pointer, length and MC address, giving the buffer to
    /// another user (the IH ring, issue 20): the promises of [`DmaBuf::new`]
    /// pass to it.
    pub fn into_parts(self) -> (NonNull<u8>, usize, u64) {
        (self.cpu, self.len, self.mc_addr)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `bytes` to `offset`, after zeroing `zero_len` bytes there
    /// (Linux zeroes the firmware buffer and the command buffer first).
    fn write(
        &self,
        what: &'static str,
        offset: usize,
        bytes: &[u8],
        zero_len: usize,
    ) -> Result<(), PspError> {
        let span = bytes.len().max(zero_len);
        let end = offset.checked_add(span).ok_or(PspError::TooLarge {
            what,
            len: span,
            capacity: self.len,
        })?;
        if end > self.len {
            return Err(PspError::TooLarge {
                what,
                len: span,
                capacity: self.len.saturating_sub(offset),
            });
        }
        // SAFETY: `offset + span <= len`, inside the region `new` was
        // promised; the device does not write these bytes while the host
        // prepares them (it is only told about them afterwards).
        unsafe {
            let dst = self.cpu.as_ptr().add(offset);
            core::ptr::write_bytes(dst, 0, zero_len);
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
        }
        Ok(())
    }

    /// Copies bytes out, for data the device has published (after the
    /// fence says so).
    fn read(&self, offset: usize, out: &mut [u8]) -> bool {
        match offset.checked_add(out.len()) {
            Some(end) if end <= self.len => {
                // SAFETY: in range; the device finished writing before
                // the fence that the caller waited for.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        self.cpu.as_ptr().add(offset),
                        out.as_mut_ptr(),
                        out.len(),
                    )
                };
                true
            }
            _ => false,
        }
    }

    /// The dword at `offset`, loaded atomically: the device writes fences
    /// while the host polls them.
    fn load_u32(&self, offset: usize) -> Option<u32> {
        let end = offset.checked_add(4)?;
        if end > self.len || !offset.is_multiple_of(4) {
            return None;
        }
        // SAFETY: in range and 4-byte aligned (`new`'s contract makes the
        // base 4-byte aligned); the device writes it as one dword.
        let a = unsafe { AtomicU32::from_ptr(self.cpu.as_ptr().add(offset).cast()) };
        Some(a.load(Ordering::Acquire))
    }
}

/// The buffers PSP firmware loading needs (`psp_sw_init()` and
/// `psp_load_fw()` allocate the same set).
#[derive(Debug)]
pub struct PspBuffers {
    /// `fw_pri_buf`: 1 MiB aligned, large enough for the biggest
    /// component or ucode image.
    pub fw_pri: DmaBuf,
    /// The GPCOM ring ([`RING_BYTES`]).
    pub ring: DmaBuf,
    /// The 1 KiB command buffer.
    pub cmd: DmaBuf,
    /// The fence dword.
    pub fence: DmaBuf,
}

/// The VM hub the PSP's memory accesses go through (MMHUB in Linux), so
/// that a command that never completes can be explained by the fault the
/// hub latched.
#[derive(Clone, Copy)]
pub struct FaultHub<'a> {
    pub bus: &'a dyn RegisterBus,
    pub bases: IpBases,
    pub regs: &'static crate::gmc::hub::HubRegs,
}

impl core::fmt::Debug for FaultHub<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FaultHub")
            .field("hub", &self.regs.name)
            .finish_non_exhaustive()
    }
}

/// Registers resolved to byte offsets for one device.
#[derive(Debug, Clone, Copy)]
struct Resolved {
    c35: usize,
    c36: usize,
    c64: usize,
    c67: usize,
    c69: usize,
    c70: usize,
    c71: usize,
    c81: usize,
}

/// Outcome of one bootloader load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loaded {
    Loaded,
    /// C2PMSG_81 was already non-zero: sOS runs, nothing to do
    /// (`psp_v13_0_is_sos_alive()`).
    SosAlreadyAlive,
}

/// Stops the PSP's GPCOM ring at teardown without the buffers a [`Psp`]
/// holds (follows `psp_ring_stop()` → `psp_v13_0_ring_stop()`, bare-metal
/// branch, as `psp_hw_fini()` calls it): when C2PMSG_71 still holds a ring
/// size, DESTROY_RINGS in C2PMSG_64, `mdelay(20)`, then the response flag.
/// Returns whether a ring was live.
pub fn destroy_rings<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    regs: PspRegs,
    mp0_bases: &IpBases,
) -> Result<bool, PspError> {
    let mp0 = Block::new(bus, *mp0_bases);
    let c64 = mp0.offset(regs.c2pmsg_64)?;
    let c71 = mp0.offset(regs.c2pmsg_71)?;
    let live = bus.read32(c71);
    if live == ALL_ONES {
        return Err(PspError::Wait(WaitError::DeviceGone {
            what: regs.c2pmsg_71.name,
            byte_offset: c71,
        }));
    }
    if live == 0 {
        return Ok(false);
    }
    bus.write32(c64, ctrl_cmd::DESTROY_RINGS);
    delay(clock, HANDSHAKE_DELAY_NS);
    let c = RegCondition {
        what: regs.c2pmsg_64.name,
        byte_offset: c64,
        mask: READY,
        want: READY,
    };
    poll(bus, clock, c, REG_TIMEOUT_NS)?;
    Ok(true)
}

/// `psp_v13_0_is_sos_alive()` / `psp_v14_0_is_sos_alive()` without the
/// buffers a [`Psp`] holds: whether `C2PMSG_81` holds sOS's sign of life
/// (what `soc21_need_reset_on_init()` and `soc24_need_reset_on_init()`
/// read to decide on a reset at init).
pub fn sos_alive<B: RegisterBus + ?Sized>(
    bus: &B,
    regs: PspRegs,
    mp0_bases: &IpBases,
) -> Result<bool, PspError> {
    let c81 = Block::new(bus, *mp0_bases).offset(regs.c2pmsg_81)?;
    let v = bus.read32(c81);
    if v == ALL_ONES {
        return Err(PspError::Wait(WaitError::DeviceGone {
            what: regs.c2pmsg_81.name,
            byte_offset: c81,
        }));
    }
    Ok(v != 0)
}

/// `psp_v13_0_wait_for_bootloader()` / `psp_v14_0_wait_for_bootloader()`:
/// `C2PMSG_35` bit 31, 10 × 100 ms ([`BOOTLOADER_TIMEOUT_NS`]); what
/// `amdgpu_device_mode1_reset()` waits on after the reset
/// (`amdgpu_psp_wait_for_bootloader()`).
pub fn wait_for_bootloader<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    regs: PspRegs,
    mp0_bases: &IpBases,
) -> Result<u32, PspError> {
    let c35 = Block::new(bus, *mp0_bases).offset(regs.c2pmsg_35)?;
    let c = RegCondition {
        what: regs.c2pmsg_35.name,
        byte_offset: c35,
        mask: READY,
        want: READY,
    };
    Ok(poll(bus, clock, c, BOOTLOADER_TIMEOUT_NS)?)
}

/// One PSP instance: its registers, its buffers, and the ring state.
#[derive(Debug)]
pub struct Psp<'a, B: RegisterBus + ?Sized, C: Clock + ?Sized> {
    bus: &'a B,
    clock: &'a C,
    regs: PspRegs,
    at: Resolved,
    buf: PspBuffers,
    fence_value: u32,
    ring_up: bool,
    fault_hub: Option<FaultHub<'a>>,
    bootloader_timeout_ns: u64,
}

impl<'a, B: RegisterBus + ?Sized, C: Clock + ?Sized> Psp<'a, B, C> {
    /// Binds the MP0 registers at the discovered `mp0_bases`.
    pub fn new(
        bus: &'a B,
        clock: &'a C,
        regs: PspRegs,
        mp0_bases: &IpBases,
        buf: PspBuffers,
    ) -> Result<Self, PspError> {
        let mp0 = Block::new(bus, *mp0_bases);
        let at = Resolved {
            c35: mp0.offset(regs.c2pmsg_35)?,
            c36: mp0.offset(regs.c2pmsg_36)?,
            c64: mp0.offset(regs.c2pmsg_64)?,
            c67: mp0.offset(regs.c2pmsg_67)?,
            c69: mp0.offset(regs.c2pmsg_69)?,
            c70: mp0.offset(regs.c2pmsg_70)?,
            c71: mp0.offset(regs.c2pmsg_71)?,
            c81: mp0.offset(regs.c2pmsg_81)?,
        };
        if !buf.fw_pri.mc_addr().is_multiple_of(BOOTLOADER_ALIGN) {
            return Err(PspError::Misaligned {
                what: "fw_pri buffer",
                mc_addr: buf.fw_pri.mc_addr(),
                align: BOOTLOADER_ALIGN,
            });
        }
        Ok(Psp {
            bus,
            clock,
            regs,
            at,
            buf,
            fence_value: 0,
            ring_up: false,
            fault_hub: None,
            bootloader_timeout_ns: BOOTLOADER_TIMEOUT_NS,
        })
    }

    /// Waits up to `ns` for the bootloader (C2PMSG_35 bit 31) instead of
    /// [`BOOTLOADER_TIMEOUT_NS`]: MP0 13.0.6 retries
    /// `PSP_VMBX_POLLING_LIMIT` times ([`mp13_0_6::BOOTLOADER_TIMEOUT_NS`]).
    pub fn with_bootloader_timeout(mut self, ns: u64) -> Self {
        self.bootloader_timeout_ns = ns;
        self
    }

    /// The driver-side MP0 registers this PSP was bound with.
    pub fn regs(&self) -> PspRegs {
        self.regs
    }

    /// Reads `hub`'s latched VM fault when a command's fence times out.
    pub fn with_fault_hub(mut self, hub: FaultHub<'a>) -> Self {
        self.fault_hub = Some(hub);
        self
    }

    /// The fault the PSP's hub holds, if a hub was given and one is
    /// latched (a hub register that cannot be read counts as none: the
    /// caller is already reporting a failure).
    pub fn vm_fault(&self) -> Option<crate::gmc::hub::VmFault> {
        let h = self.fault_hub?;
        crate::gmc::hub::read_fault(h.bus, &h.bases, h.regs)
            .ok()
            .flatten()
    }

    fn cond(&self, reg: Reg, byte_offset: usize, mask: u32, want: u32) -> RegCondition {
        RegCondition {
            what: reg.name,
            byte_offset,
            mask,
            want,
        }
    }

    /// `psp_v13_0_is_sos_alive()`.
    pub fn sos_alive(&self) -> Result<bool, PspError> {
        let v = self.bus.read32(self.at.c81);
        if v == ALL_ONES {
            return Err(PspError::Wait(WaitError::DeviceGone {
                what: self.regs.c2pmsg_81.name,
                byte_offset: self.at.c81,
            }));
        }
        Ok(v != 0)
    }

    fn wait_bootloader(&self) -> Result<u32, PspError> {
        let c = self.cond(self.regs.c2pmsg_35, self.at.c35, READY, READY);
        Ok(poll(self.bus, self.clock, c, self.bootloader_timeout_ns)?)
    }

    /// Loads one component through the bootloader (follows
    /// `psp_v13_0_bootloader_load_component()` and, for SOS,
    /// `psp_v13_0_bootloader_load_sos()`).
    pub fn bootloader_load(
        &mut self,
        component: Component,
        image: &[u8],
    ) -> Result<Loaded, PspError> {
        if self.sos_alive()? {
            return Ok(Loaded::SosAlreadyAlive);
        }
        self.wait_bootloader()?;
        // psp_copy_fw(): zero the whole private buffer, then copy.
        let len = self.buf.fw_pri.len();
        self.buf
            .fw_pri
            .write("bootloader component", 0, image, len)?;
        let mc = self.buf.fw_pri.mc_addr();
        self.bus.write32(self.at.c36, (mc >> 20) as u32);
        self.bus.write32(self.at.c35, component.command());
        if component == Component::Sos {
            // psp_v13_0_bootloader_load_sos(): mdelay(20), then up to
            // 100 ms for the sign of life. Linux waits for C2PMSG_81 to
            // change from what it reads after the delay; this waits for
            // it to leave zero, which also takes an sOS that signed life
            // within the 20 ms (tinygrad's `is_sos_alive()` test).
            delay(self.clock, HANDSHAKE_DELAY_NS);
            let c = RegCondition {
                what: self.regs.c2pmsg_81.name,
                byte_offset: self.at.c81,
                mask: 0xFFFF_FFFF,
                want: 0,
            };
            return self.wait_changed(c, REG_TIMEOUT_NS).map(|_| Loaded::Loaded);
        }
        let v = self.wait_bootloader()?;
        let status = v & GFX_CMD_STATUS_MASK;
        if status != 0 {
            return Err(PspError::BootloaderStatus { component, status });
        }
        Ok(Loaded::Loaded)
    }

    /// Waits for `cond.byte_offset` to differ from `cond.want`
    /// (`psp_wait_for(..., check_changed = true)`).
    fn wait_changed(&self, cond: RegCondition, timeout_ns: u64) -> Result<u32, PspError> {
        let mut deadline = Deadline::after(self.clock, timeout_ns);
        loop {
            let v = self.bus.read32(cond.byte_offset);
            if v == ALL_ONES {
                return Err(WaitError::DeviceGone {
                    what: cond.what,
                    byte_offset: cond.byte_offset,
                }
                .into());
            }
            if v & cond.mask != cond.want {
                return Ok(v);
            }
            if deadline.expired(self.clock) {
                return Err(WaitError::Timeout {
                    what: cond.what,
                    byte_offset: cond.byte_offset,
                    waited_ns: deadline.elapsed_ns(self.clock),
                    last: v,
                }
                .into());
            }
            core::hint::spin_loop();
        }
    }

    /// Stops the PSP's rings (follows `psp_v13_0_ring_stop()`, bare-metal
    /// branch): DESTROY_RINGS in C2PMSG_64, `mdelay(20)`, then the
    /// response flag.
    pub fn ring_stop(&mut self) -> Result<(), PspError> {
        self.bus.write32(self.at.c64, ctrl_cmd::DESTROY_RINGS);
        delay(self.clock, HANDSHAKE_DELAY_NS);
        let c = self.cond(self.regs.c2pmsg_64, self.at.c64, READY, READY);
        poll(self.bus, self.clock, c, REG_TIMEOUT_NS)?;
        self.ring_up = false;
        Ok(())
    }

    /// Creates the GPCOM (KM) ring (follows `psp_v13_0_ring_create()`,
    /// bare-metal branch). A ring someone left live (C2PMSG_71 holds its
    /// size) is stopped first, as tinygrad's `_ring_create` does (Linux
    /// stops its own in `psp_ring_destroy()` before it lets go of the
    /// PSP, so it never meets one).
    pub fn ring_create(&mut self) -> Result<(), PspError> {
        let live = self.bus.read32(self.at.c71);
        if live == ALL_ONES {
            return Err(PspError::Wait(WaitError::DeviceGone {
                what: self.regs.c2pmsg_71.name,
                byte_offset: self.at.c71,
            }));
        }
        if live != 0 {
            self.ring_stop()?;
        }
        // "Wait for sOS ready for ring creation".
        let c = self.cond(self.regs.c2pmsg_64, self.at.c64, READY, READY);
        poll(self.bus, self.clock, c, REG_TIMEOUT_NS)?;
        let len = self.buf.ring.len();
        self.buf.ring.write("ring", 0, &[], len)?;
        let mc = self.buf.ring.mc_addr();
        self.bus.write32(self.at.c69, mc as u32);
        self.bus.write32(self.at.c70, (mc >> 32) as u32);
        self.bus.write32(self.at.c71, len as u32);
        self.bus.write32(self.at.c64, RING_TYPE_KM << 16);
        delay(self.clock, HANDSHAKE_DELAY_NS);
        let c = self.cond(self.regs.c2pmsg_64, self.at.c64, READY, READY);
        let v = poll(self.bus, self.clock, c, REG_TIMEOUT_NS)?;
        let status = v & GFX_CMD_STATUS_MASK;
        if status != 0 {
            return Err(PspError::RingStatus { status });
        }
        self.ring_up = true;
        Ok(())
    }

    /// Submits one command and waits for its fence (follows
    /// `psp_cmd_submit_buf()` and `psp_ring_cmd_submit()`); returns the
    /// PSP's response.
    pub fn submit(&mut self, cmd: &CmdResp) -> Result<Resp, PspError> {
        let cmd_id = cmd.cmd_id.get();
        if !self.ring_up {
            return Err(PspError::OutOfOrder {
                step: "GPCOM submit",
                needs: "ring_create",
            });
        }
        self.buf
            .cmd
            .write("command buffer", 0, cmd.as_bytes(), CMD_RESP_BYTES)?;
        let frame_dw = (core::mem::size_of::<RbFrame>() / 4) as u32;
        let ring_dw = (self.buf.ring.len() / 4) as u32;
        let wptr = self.bus.read32(self.at.c67);
        if wptr == ALL_ONES {
            return Err(PspError::DeviceGone { cmd_id });
        }
        let slot = if ring_dw == 0 || wptr.is_multiple_of(ring_dw) {
            0
        } else {
            wptr / frame_dw
        };
        let value = self.fence_value.wrapping_add(1);
        let frame = RbFrame::gpcom(self.buf.cmd.mc_addr(), self.buf.fence.mc_addr(), value);
        let at = (slot as usize).saturating_mul(core::mem::size_of::<RbFrame>());
        self.buf.ring.write("ring frame", at, frame.as_bytes(), 0)?;
        self.fence_value = value;
        let next = if ring_dw == 0 {
            0
        } else {
            (wptr % ring_dw + frame_dw) % ring_dw
        };
        self.bus.write32(self.at.c67, next);

        let mut deadline = Deadline::after(self.clock, FENCE_TIMEOUT_NS);
        let mut last = 0;
        loop {
            if let Some(v) = self.buf.fence.load_u32(0) {
                last = v;
                if v == value {
                    break;
                }
            }
            if self.bus.read32(self.at.c64) == ALL_ONES {
                return Err(PspError::DeviceGone { cmd_id });
            }
            if deadline.expired(self.clock) {
                return Err(PspError::FenceTimeout {
                    cmd_id,
                    want: value,
                    last,
                    waited_ns: deadline.elapsed_ns(self.clock),
                    vm_fault: self.vm_fault(),
                });
            }
            core::hint::spin_loop();
        }
        let mut raw = [0u8; core::mem::size_of::<Resp>()];
        let resp = if self.buf.cmd.read(RESP_OFFSET, &mut raw) {
            Resp::read_from_bytes(&raw).ok()
        } else {
            None
        };
        let Some(resp) = resp else {
            return Err(PspError::TooLarge {
                what: "command buffer response",
                len: RESP_OFFSET + raw.len(),
                capacity: self.buf.cmd.len(),
            });
        };
        let status = resp.status.get();
        if status != 0 {
            let fw = if cmd_id == psp_gfx::cmd_id::LOAD_IP_FW {
                cmd.cmd
                    .get(12..16)
                    .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            } else {
                0
            };
            return Err(PspError::CommandFailed {
                cmd_id,
                fw_type: fw,
                status,
            });
        }
        Ok(resp)
    }

    /// LOAD_TOC: copies the TOC into the private buffer and returns the
    /// TMR size the PSP asks for (follows `psp_load_toc()`).
    pub fn load_toc(&mut self, toc: &[u8]) -> Result<u32, PspError> {
        let len = self.buf.fw_pri.len();
        self.buf.fw_pri.write("toc", 0, toc, len)?;
        let cmd = CmdResp::load_toc(self.buf.fw_pri.mc_addr(), toc.len() as u32);
        // A device-reported size: range-checked here, where it enters.
        // Too large for the VRAM left is the TMR source's typed error.
        match self.submit(&cmd)?.tmr_size.get() {
            0 => Err(PspError::BadTmrSize { size: 0 }),
            size => Ok(size),
        }
    }

    /// SETUP_TMR with the TMR at `tmr_mc` (follows `psp_tmr_load()` and
    /// `psp_prep_tmr_cmd_buf()`, which always sets `virt_phy_addr`).
    pub fn setup_tmr(&mut self, tmr_mc: u64, size: u32, tmr_phys: u64) -> Result<(), PspError> {
        if !tmr_mc.is_multiple_of(TMR_ALIGN) {
            return Err(PspError::Misaligned {
                what: "TMR",
                mc_addr: tmr_mc,
                align: TMR_ALIGN,
            });
        }
        let flags = TmrFlags::new().with_virt_phy_addr(true);
        self.submit(&CmdResp::setup_tmr(tmr_mc, size, flags, tmr_phys))?;
        Ok(())
    }

    /// LOAD_IP_FW of one image (follows `psp_execute_ip_fw_load()`).
    pub fn load_ip_fw(&mut self, fw_type: u32, image: &[u8]) -> Result<(), PspError> {
        let len = self.buf.fw_pri.len();
        self.buf.fw_pri.write("ucode image", 0, image, len)?;
        let cmd = CmdResp::load_ip_fw(self.buf.fw_pri.mc_addr(), image.len() as u32, fw_type);
        self.submit(&cmd)?;
        Ok(())
    }

    /// AUTOLOAD_RLC (follows `psp_rlc_autoload_start()`).
    pub fn autoload_rlc(&mut self) -> Result<(), PspError> {
        self.submit(&CmdResp::autoload_rlc())?;
        Ok(())
    }

    /// [`wait_rlc_autoload`] on this PSP's bus and clock.
    pub fn wait_rlc_autoload(&self, gc: GcRegs, gc_bases: &IpBases) -> Result<(), PspError> {
        wait_rlc_autoload(self.bus, self.clock, gc, gc_bases)
    }

    /// Gives the buffers back.
    pub fn into_buffers(self) -> PspBuffers {
        self.buf
    }
}

/// Bounded wait for the RLC autoload (follows
/// `gfx_v11_0_wait_for_rlc_autoload_complete()`): BOOTLOAD_COMPLETE first,
/// then `CP_STAT == 0`, each named in its error.
pub fn wait_rlc_autoload<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    gc: GcRegs,
    gc_bases: &IpBases,
) -> Result<(), PspError> {
    let b = Block::new(bus, *gc_bases);
    let st = gc.rlc_bootload_status;
    // Both resolve before either wait, so a missing base fails first.
    for r in [st, gc.cp_stat] {
        b.offset(r)?;
    }
    let complete = gc.bootload_complete;
    b.poll(clock, st, complete, complete, st.name, REG_TIMEOUT_NS)?;
    b.poll(
        clock,
        gc.cp_stat,
        0xFFFF_FFFF,
        0,
        gc.cp_stat.name,
        REG_TIMEOUT_NS,
    )?;
    Ok(())
}

/// `AMDGPU_UCODE_ID` order of the PSP-loaded graphics ucode types, with
/// each id mapped to its `psp_gfx_fw_type` as `psp_get_fw_type()` does.
/// `psp_load_non_psp_fw()` walks the ucode ids in this order, and
/// AUTOLOAD_RLC follows RLC_G. RS64 stacks are one blob section loaded
/// once per pipe (`amdgpu_gfx_cp_init_microcode()` registers P0/P1 for
/// PFP and ME, P0..P3 for MEC).
pub fn gfx_load_order() -> &'static [u32] {
    &[
        fw_type::SDMA_UCODE_TH0,
        fw_type::SDMA_UCODE_TH1,
        fw_type::RS64_PFP,
        fw_type::RS64_ME,
        fw_type::RS64_MEC,
        fw_type::RS64_PFP_P0_STACK,
        fw_type::RS64_PFP_P1_STACK,
        fw_type::RS64_ME_P0_STACK,
        fw_type::RS64_ME_P1_STACK,
        fw_type::RS64_MEC_P0_STACK,
        fw_type::RS64_MEC_P1_STACK,
        fw_type::RS64_MEC_P2_STACK,
        fw_type::RS64_MEC_P3_STACK,
        fw_type::CP_MES,
        fw_type::MES_STACK,
        fw_type::CP_MES_KIQ,
        fw_type::MES_KIQ_STACK,
        fw_type::IMU_I,
        fw_type::IMU_D,
        fw_type::GLOBAL_TAP_DELAYS,
        fw_type::SE0_TAP_DELAYS,
        fw_type::SE1_TAP_DELAYS,
        fw_type::SE2_TAP_DELAYS,
        fw_type::SE3_TAP_DELAYS,
        fw_type::RLC_RESTORE_LIST_SRM_CNTL,
        fw_type::RLC_RESTORE_LIST_GPM_MEM,
        fw_type::RLC_RESTORE_LIST_SRM_MEM,
        fw_type::RLC_IRAM,
        fw_type::RLC_DRAM_BOOT,
        fw_type::RLC_P,
        fw_type::RLC_V,
        fw_type::RLC_G,
    ]
}

/// The pipe-0 stack type a later pipe's stack duplicates, if `t` is one.
pub fn stack_source(t: u32) -> Option<u32> {
    Some(match t {
        fw_type::RS64_PFP_P1_STACK => fw_type::RS64_PFP_P0_STACK,
        fw_type::RS64_ME_P1_STACK => fw_type::RS64_ME_P0_STACK,
        fw_type::RS64_MEC_P1_STACK | fw_type::RS64_MEC_P2_STACK | fw_type::RS64_MEC_P3_STACK => {
            fw_type::RS64_MEC_P0_STACK
        }
        _ => return None,
    })
}

const _: () = assert!(RING_TYPE_KM << 16 == ctrl_cmd::INIT_GPCOM_RING);

/// One image for LOAD_IP_FW.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Image<'a> {
    pub fw_type: u32,
    pub bytes: &'a [u8],
}

/// `psp_get_fw_type()` for one section of a parsed blob:
/// barebell-firmware-if's SOC21 table, plus the gfx12 case it lacks:
/// SDMA 7's v3 header holds one image, `AMDGPU_UCODE_ID_SDMA_RS64`
/// (`amdgpu_sdma_init_microcode()`), which PSP loads as
/// `GFX_FW_TYPE_SDMA_UCODE_TH0`.
fn fw_type_of(fw: &barebell_firmware_if::Firmware<'_>, section: &str) -> Option<u32> {
    use barebell_firmware_if::{Body, ucode::sdma::Sdma};
    match (&fw.body, section) {
        (Body::Sdma(Sdma::V3_0(_)), "ucode") => Some(fw_type::SDMA_UCODE_TH0),
        _ => psp_gfx::soc21_fw_type(fw.kind, section),
    }
}

/// With a unified MES blob (`<gc>_uni_mes.bin`, `adev->enable_uni_mes`),
/// `mes_v12_0_early_init()` runs `amdgpu_mes_init_microcode()` for both
/// pipes on the same file: pipe 1's `CP_MES1`/`CP_MES1_DATA`
/// (`GFX_FW_TYPE_CP_MES_KIQ`/`MES_KIQ_STACK`) are its ucode and data,
/// which the table maps to pipe 0's types.
fn unified_mes_source(t: u32) -> Option<u32> {
    match t {
        fw_type::CP_MES_KIQ => Some(fw_type::CP_MES),
        fw_type::MES_KIQ_STACK => Some(fw_type::MES_STACK),
        _ => None,
    }
}

/// Fills `out` with the GFX images of `blobs`, in [`gfx_load_order`],
/// and returns how many were written. A type no blob provides is left
/// out, as Linux skips ucodes with no firmware (`fw_load_skip_check()`);
/// empty sections are left out for the same reason. Section names map to
/// types as `psp_get_fw_type()` maps them (barebell-firmware-if's SOC21 table;
/// using it for gfx12 blobs assumes their sections keep the same roles,
/// which the PSP model's own reader checks byte for byte).
pub fn gfx_images<'a>(
    blobs: &[barebell_firmware_if::Firmware<'a>],
    out: &mut [Image<'a>],
) -> Result<usize, PspError> {
    use barebell_firmware_if::{Kind, MesPipe};
    let find_in = |t: u32, unified_only: bool| -> Option<&'a [u8]> {
        blobs
            .iter()
            .filter(|fw| !unified_only || fw.kind == Kind::Mes(MesPipe::Unified))
            .find_map(|fw| {
                fw.sections()
                    .iter()
                    .find_map(|s| (fw_type_of(fw, s.name) == Some(t)).then(|| fw.bytes(s)))
            })
    };
    let mut n = 0;
    for &t in gfx_load_order() {
        let direct = find_in(stack_source(t).unwrap_or(t), false);
        let Some(bytes) = direct.or_else(|| find_in(unified_mes_source(t)?, true)) else {
            continue;
        };
        if bytes.is_empty() {
            continue;
        }
        let capacity = out.len();
        let slot = out.get_mut(n).ok_or(PspError::TooLarge {
            what: "gfx image list",
            len: n + 1,
            capacity,
        })?;
        *slot = Image { fw_type: t, bytes };
        n += 1;
    }
    Ok(n)
}

/// How an MP0 version orders the TMR and SMU steps (`psp_early_init()`,
/// `psp_hw_start()`, `psp_load_non_psp_fw()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// 13.0.0 has `pmfw_centralized_cstate_management`: SMU firmware goes
    /// in before SETUP_TMR. Otherwise it goes first in the ucode loop.
    pub smu_before_tmr: bool,
    /// 13.0.0 clears `boot_time_tmr`, so the driver allocates the TMR and
    /// sends SETUP_TMR. 14.0.2/14.0.3 keep the TMR the firmware set up at
    /// boot and send no SETUP_TMR (LOAD_TOC still runs).
    pub setup_tmr: bool,
    /// 14.x loads the IPKEYMGR driver from the bundle; 13.0.0's
    /// `psp_v13_0_funcs` has no `bootloader_load_ipkeymgr_drv`, so Linux
    /// skips it there even if a bundle carries one.
    pub ipkeymgr_drv: bool,
    /// 13.0.0's SPL stage sends the bundle's KDB
    /// (`psp_v13_0_bootloader_load_spl()`); 14.x's sends the SPL.
    pub spl_from_kdb: bool,
}

impl Plan {
    pub fn for_version(v: (u8, u8, u8)) -> Option<Plan> {
        match v {
            (13, 0, 0) => Some(Plan {
                smu_before_tmr: true,
                setup_tmr: true,
                ipkeymgr_drv: false,
                spl_from_kdb: true,
            }),
            (14, 0, 2) | (14, 0, 3) => Some(Plan {
                smu_before_tmr: false,
                setup_tmr: false,
                ipkeymgr_drv: true,
                spl_from_kdb: false,
            }),
            _ => None,
        }
    }
}

/// Where the TMR lives, if the driver provides one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tmr {
    pub mc_addr: u64,
    pub capacity: u32,
    /// The physical address passed alongside (`virt_phy_addr`).
    pub phys_addr: u64,
}

/// `PSP_TMR_SIZE()` for every part but Aldebaran (`amdgpu_psp.h`; that
/// header needs the whole driver to compile, so cited, not a fact): the
/// size `psp_tmr_init()` starts from when there is no TOC to ask.
pub const DEFAULT_TMR_SIZE: u32 = 0x40_0000;

/// Where the TMR comes from. `psp_tmr_init()` asks LOAD_TOC how large it
/// must be and only then allocates it (VRAM, `PSP_TMR_ALIGNMENT`); a
/// caller that reserved one up front (tinygrad reserves its maximum,
/// 0x1300000) hands in that reservation ([`Tmr`] implements this).
pub trait TmrSource {
    /// A TMR of at least `size` bytes (LOAD_TOC's answer).
    fn tmr(&mut self, size: u32) -> Result<Tmr, PspError>;
}

/// A TMR reserved before LOAD_TOC answered serves any size that fits.
impl TmrSource for Tmr {
    fn tmr(&mut self, size: u32) -> Result<Tmr, PspError> {
        if size > self.capacity {
            return Err(PspError::TooLarge {
                what: "TMR",
                len: size as usize,
                capacity: self.capacity as usize,
            });
        }
        Ok(*self)
    }
}

/// What [`load_firmware`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadReport {
    pub components: usize,
    /// The TMR size LOAD_TOC asked for ([`DEFAULT_TMR_SIZE`] without a
    /// TOC).
    pub tmr_size: u32,
    /// The TMR SETUP_TMR handed over (`None` with a boot-time TMR).
    pub tmr: Option<Tmr>,
    pub ip_fw_loads: usize,
}

/// The whole of `psp_load_fw()` up to the RLC autoload: bootloader
/// components from the SOS bundle `sos`, the ring, LOAD_TOC and the TMR
/// it sizes (`psp_tmr_init()`: the TMR is taken from `tmr` once the
/// answer is known), SMU and SETUP_TMR in `plan`'s order (SETUP_TMR
/// carries the TOC's size, `psp_prep_tmr_cmd_buf()`), every image of
/// `gfx` in order, AUTOLOAD_RLC.
pub fn load_firmware<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    psp: &mut Psp<'_, B, C>,
    plan: Plan,
    sos: &barebell_firmware_if::Firmware<'_>,
    smu: Option<&[u8]>,
    gfx: &[Image<'_>],
    tmr: Option<&mut dyn TmrSource>,
) -> Result<LoadReport, PspError> {
    let mut report = LoadReport::default();
    for c in Component::ORDER {
        if c == Component::IpKeyMgrDrv && !plan.ipkeymgr_drv {
            continue;
        }
        // psp_hw_start(): a stage runs if the bundle has its component.
        let Some(s) = sos.section(c.section()) else {
            continue;
        };
        let bytes = if c == Component::Spl && plan.spl_from_kdb {
            let kdb = sos
                .section(Component::Kdb.section())
                .ok_or(PspError::OutOfOrder {
                    step: "the SPL stage (which carries the KDB on MP0 13.0.0)",
                    needs: "a KDB in the SOS bundle",
                })?;
            sos.bytes(kdb)
        } else {
            sos.bytes(s)
        };
        psp.bootloader_load(c, bytes)?;
        report.components += 1;
    }
    psp.ring_create()?;
    // psp_tmr_init(): the TOC's answer, or PSP_TMR_SIZE without a TOC;
    // then the buffer, unless the firmware keeps a boot-time TMR.
    report.tmr_size = DEFAULT_TMR_SIZE;
    if let Some(s) = sos.section("toc") {
        report.tmr_size = psp.load_toc(sos.bytes(s))?;
    }
    if plan.setup_tmr {
        let source = tmr.ok_or(PspError::OutOfOrder {
            step: "SETUP_TMR",
            needs: "a TMR buffer",
        })?;
        report.tmr = Some(source.tmr(report.tmr_size)?);
    }
    let load_smu = |psp: &mut Psp<'_, B, C>, report: &mut LoadReport| {
        if let Some(img) = smu {
            psp.load_ip_fw(fw_type::SMU, img)?;
            report.ip_fw_loads += 1;
        }
        Ok::<(), PspError>(())
    };
    if plan.smu_before_tmr {
        load_smu(psp, &mut report)?;
    }
    // psp_tmr_load(): SETUP_TMR with the buffer's size, which
    // psp_tmr_init() made the TOC's answer.
    if let Some(t) = report.tmr {
        psp.setup_tmr(t.mc_addr, report.tmr_size, t.phys_addr)?;
    }
    if !plan.smu_before_tmr {
        load_smu(psp, &mut report)?;
    }
    for img in gfx {
        psp.load_ip_fw(img.fw_type, img.bytes)?;
        report.ip_fw_loads += 1;
    }
    psp.autoload_rlc()?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::DmaBuf;
    use core::ptr::NonNull;

    /// The fence and response reads stay inside the buffer and on dword
    /// boundaries, since they are atomic loads of device-written memory:
    /// a load past the end, or off a dword boundary, is refused.
    #[test]
    fn a_dword_load_stays_aligned_and_in_the_buffer() {
        #[repr(C, align(4))]
        struct Words([u32; 4]);
        let mut words = Words([0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444]);
        let cpu = NonNull::new(words.0.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: 16 bytes, 4-byte aligned, live for the whole test and
        // touched only through `buf`.
        let buf = unsafe { DmaBuf::new(cpu, 12, 0x1000) };
        assert_eq!(buf.load_u32(0), Some(0x1111_1111));
        assert_eq!(buf.load_u32(8), Some(0x3333_3333));
        // The fourth word lies past the 12 bytes the buffer was given.
        assert_eq!(buf.load_u32(12), None);
        // Off a dword boundary, though inside the buffer.
        assert_eq!(buf.load_u32(2), None);
        assert_eq!(buf.load_u32(usize::MAX - 1), None);
    }
}
