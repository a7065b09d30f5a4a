//! Start-of-day state: what an earlier driver left on the device, and
//! what to do about it, before anything is written (issue 20, scope 1).
//!
//! Detection reads, in this order:
//! - `SCRATCH_REG7` and `SCRATCH_REG6` (GC): barebell's [`SIGNATURE`] and
//!   whether its last run was torn down (0) or not (1), as tinygrad's
//!   `AMDev.__init__` reads its own version and "finalized" flag there;
//! - the GFXHUB's latched VM fault (`GCVM_L2_PROTECTION_FAULT_STATUS`,
//!   tinygrad's `pf_status_reg("GC")` in the same test);
//! - sOS's sign of life, `C2PMSG_81` (`psp_v13_0_is_sos_alive()`; what
//!   `soc21_need_reset_on_init()` / `soc24_need_reset_on_init()` read).
//!
//! | found | [`StartState`] | [`Action`] |
//! |---|---|---|
//! | no sign of life | `Clean` | full bring-up |
//! | signature, `SCRATCH_REG6 == 0`, no fault, sOS alive | `LeftByBarebell` | partial re-init: no PSP step |
//! | signature with `SCRATCH_REG6 != 0` or a latched fault, sOS alive | `Malformed` | mode-1 reset, full bring-up |
//! | sOS alive, no signature | `LeftByOther` (amdgpu, tinygrad's AM, ...) | mode-1 reset, full bring-up |
//! | any reset case with PMFW silent | | refused: [`StartError::SmuDead`] |
//! | any reset case on an XGMI hive member (`MC_VM_XGMI_LFB_CNTL.PF_MAX_REGION` set) | | refused: [`StartError::HiveMember`] |
//!
//! The mode-1 reset is `amdgpu_device_mode1_reset()`: the PCI state
//! cached (`amdgpu_device_cache_pci_state()`; a platform that cannot is
//! refused, [`StartError::NoPciState`], since the reset clears the BARs
//! and the command register), bus mastering off (`pci_clear_master()`),
//! the SMU's reset message for the MP1 version and the sleep after it
//! ([`barebell::smu::mode1_reset`]), the PCI state put back
//! (`amdgpu_device_load_pci_state()`) before any register is read, the
//! bootloader wait (`amdgpu_psp_wait_for_bootloader()`), the memsize
//! wait (`RCC_CONFIG_MEMSIZE` no longer all-ones, `usec_timeout`), then
//! bus mastering back on. tinygrad resets
//! only when both sOS and PMFW answer (`is_sos_alive() and
//! is_smu_alive()`); barebell checks PMFW the same way and refuses when it
//! is silent rather than bringing firmware up over a live sOS. After the
//! reset sOS must be gone (`C2PMSG_81 == 0`): otherwise
//! [`StartError::ResetTookNoEffect`].
//!
//! The partial re-init is tinygrad's `partial_boot`: the firmware the
//! earlier run loaded (sOS, PMFW, the RLC autoload's images in the TMR)
//! is still in place, so the psp step is skipped; discovery, NBIO, the
//! hubs (on this run's memory), the MEC, MES and the rings are set up
//! again (tinygrad skips its GMC too: its boot memory sits at fixed VRAM
//! addresses, where barebell's GTT is this process's host memory).
//!
//! The signature: a successful bring-up that got the firmware in place
//! (reached rlc) writes `SCRATCH_REG7 = SIGNATURE`, `SCRATCH_REG6 = 1`
//! (tinygrad's end of boot); the teardown writes `SCRATCH_REG6 = 0` when
//! it completed, 1 otherwise (tinygrad's `fini`). A partial re-init
//! writes `SCRATCH_REG6 = 1` before it touches anything, so a run killed
//! half-way through it is found `Malformed` next time (tinygrad does not:
//! its partial boot writes nothing until its end).

use crate::Gpu;
use crate::error::{At, BringupError, ErrorKind, ResultAt, StartError};
use crate::sink::{Sink, Step};
use barebell::bus::{ALL_ONES, Block, RegisterBus, WaitError};
use barebell::gmc::hub::{VmFault, read_fault};
use barebell::ip::{Generation, hw_id};
use barebell::psp::{self, PspRegs};
use barebell::regs::{IpBases, Reg, hub::hub_for};
use barebell::smu::{self, Mp1};
use barebell::time::Deadline;
use core::fmt;

/// barebell's signature in `SCRATCH_REG7` after a successful bring-up
/// (`BB` and the format version 1; tinygrad's AM writes its own
/// `AMDev.Version`, `0xA000_0008` in 0.14.0, so neither takes the other's
/// device for its own).
pub const SIGNATURE: u32 = 0xBB00_0001;

/// `amdgpu_device_mode1_reset()`'s memsize wait: `adev->usec_timeout`
/// polls 1 µs apart.
pub const MEMSIZE_TIMEOUT_NS: u64 = 100_000_000;

/// Who left the device how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartState {
    /// No sign of life: power-on, or a reset already done.
    Clean,
    /// sOS alive and no barebell signature: amdgpu, tinygrad's AM or any
    /// other driver set it up (and may still be running it).
    LeftByOther,
    /// barebell's signature, its run torn down, no fault latched.
    LeftByBarebell,
    /// Something the table above does not allow to trust.
    Malformed(Malformation),
}

/// What is wrong with a malformed start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformation {
    /// barebell's signature but `SCRATCH_REG6` says its run never reached
    /// the end of its teardown (killed, crashed, or still running).
    Unfinalized { scratch6: u32 },
    /// barebell's signature with a VM fault latched in the GFXHUB.
    FaultLatched(VmFault),
    /// barebell's signature with no sOS running: nothing can be left of
    /// that run (a reset without power loss clears scratch too).
    StaleSignature,
}

/// What the start step did about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing: the whole bring-up follows.
    FullBringup,
    /// A mode-1 reset, then the whole bring-up.
    Mode1Reset,
    /// No reset, no PSP step: the firmware in place is used.
    PartialReinit,
}

impl StartState {
    pub fn name(&self) -> &'static str {
        match self {
            StartState::Clean => "clean",
            StartState::LeftByOther => "left by another driver",
            StartState::LeftByBarebell => "left by barebell",
            StartState::Malformed(_) => "malformed",
        }
    }
}

impl fmt::Display for StartState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartState::Malformed(Malformation::Unfinalized { scratch6 }) => write!(
                f,
                "malformed (barebell's signature, SCRATCH_REG6 = {scratch6:#x}: its run was not torn down)"
            ),
            StartState::Malformed(Malformation::FaultLatched(v)) => {
                write!(
                    f,
                    "malformed (barebell's signature, a VM fault latched: {v})"
                )
            }
            StartState::Malformed(Malformation::StaleSignature) => {
                f.write_str("malformed (barebell's signature with no sOS running)")
            }
            s => f.write_str(s.name()),
        }
    }
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::FullBringup => "full bring-up",
            Action::Mode1Reset => "mode-1 reset, then full bring-up",
            Action::PartialReinit => "partial re-init (firmware in place, no PSP step)",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the start step read and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartReport {
    pub state: StartState,
    pub action: Action,
    /// `C2PMSG_81` was non-zero.
    pub sos_alive: bool,
    /// PMFW's answer to `GetSmuVersion` when it was asked (only before a
    /// reset): `Some(version)` alive, `None` not asked or silent.
    pub smu_version: Option<u32>,
    /// `SCRATCH_REG7`, `SCRATCH_REG6` as found.
    pub scratch7: u32,
    pub scratch6: u32,
    /// Simulated or wall time the reset took, from the platform clock.
    pub reset_ns: Option<u64>,
    /// The TMR barebell's earlier run gave sOS (VRAM offset, bytes), as
    /// it recorded it ([`write_tmr_record`]); a partial re-init leaves sOS
    /// running on it, so the gmc step keeps it clear.
    pub live_tmr: Option<(u64, u64)>,
}

/// `SCRATCH_REG5` and `SCRATCH_REG4`, where barebell records the TMR it
/// gave sOS (*barebell's convention*: Linux keeps `psp->tmr_bo` in the
/// driver and frees it at `psp_hw_fini()`; tinygrad reserves its TMR at
/// a fixed place). The scratch registers are storage the GPU never
/// writes and only a mode-1 reset clears. `None` on GC 9.4.3, whose TMR
/// is the boot-time one.
fn tmr_regs(g: Generation) -> Option<(Reg, Reg)> {
    match g {
        Generation::Gfx94 => None,
        // PSP 13.0.2 has no boot-time TMR (`psp_early_init()` sets
        // `boot_time_tmr` false): the TMR is the driver's, recorded as on
        // gfx11.
        Generation::Gfx90a => Some((
            barebell::regs::gc_9_4_2_scratch::SCRATCH_REG5,
            barebell::regs::gc_9_4_2_scratch::SCRATCH_REG4,
        )),
        Generation::Gfx11 => Some((
            barebell::regs::gc_11_0_0::SCRATCH_REG5,
            barebell::regs::gc_11_0_0::SCRATCH_REG4,
        )),
        Generation::Gfx12 => Some((
            barebell::regs::gc_12_0_0::SCRATCH_REG5,
            barebell::regs::gc_12_0_0::SCRATCH_REG4,
        )),
    }
}

/// Records the TMR (`offset` 1 MiB aligned, as `PSP_TMR_ALIGNMENT`
/// makes it; `size` bytes) for the next run: `SCRATCH_REG5` = offset in
/// MiB, `SCRATCH_REG4` = size in 4 KiB pages.
pub(crate) fn write_tmr_record<B: RegisterBus + ?Sized>(
    bus: &B,
    gc: &IpBases,
    g: Generation,
    offset: u64,
    size: u64,
) -> Result<(), barebell::bus::BlockError> {
    let Some((at, len)) = tmr_regs(g) else {
        return Ok(());
    };
    let b = Block::new(bus, *gc);
    b.write(at, u32::try_from(offset >> 20).unwrap_or(u32::MAX))?;
    b.write(len, u32::try_from(size.div_ceil(4096)).unwrap_or(u32::MAX))
}

/// The TMR record [`write_tmr_record`] left, if any.
fn read_tmr_record<B: RegisterBus + ?Sized>(
    bus: &B,
    gc: &IpBases,
    g: Generation,
) -> Result<Option<(u64, u64)>, ErrorKind> {
    let Some((at, len)) = tmr_regs(g) else {
        return Ok(None);
    };
    let b = Block::new(bus, *gc);
    let (mib, pages) = (read_checked(&b, at)?, read_checked(&b, len)?);
    Ok((pages != 0).then(|| (u64::from(mib) << 20, u64::from(pages) * 4096)))
}

/// `SCRATCH_REG6`, `SCRATCH_REG7` of the GC generation.
pub fn scratch_regs(g: Generation) -> Result<(Reg, Reg), barebell::ip::Unsupported> {
    Ok(match g {
        // Per XCC; the caller passes logical XCC 0's bases ([`gc_bases`]).
        Generation::Gfx90a => (
            barebell::regs::gc_9_4_2_scratch::SCRATCH_REG6,
            barebell::regs::gc_9_4_2_scratch::SCRATCH_REG7,
        ),
        Generation::Gfx94 => (
            barebell::regs::gc_9_4_3_scratch::SCRATCH_REG6,
            barebell::regs::gc_9_4_3_scratch::SCRATCH_REG7,
        ),
        Generation::Gfx11 => (
            barebell::regs::gc_11_0_0::SCRATCH_REG6,
            barebell::regs::gc_11_0_0::SCRATCH_REG7,
        ),
        Generation::Gfx12 => (
            barebell::regs::gc_12_0_0::SCRATCH_REG6,
            barebell::regs::gc_12_0_0::SCRATCH_REG7,
        ),
    })
}

/// The GC bases the signature lives at: GC instance 0 on single-GC
/// parts, logical XCC 0's instance (`GET_INST(GC, 0)`) on multi-XCC ones.
pub fn gc_bases(ips: &crate::discovery::Ips) -> IpBases {
    match ips.generation {
        Generation::Gfx94 => ips.xcc(0).map_or(ips.gc.bases, |i| i.bases),
        Generation::Gfx90a | Generation::Gfx11 | Generation::Gfx12 => ips.gc.bases,
    }
}

/// Writes `SCRATCH_REG6` (and `SCRATCH_REG7` when given).
pub(crate) fn write_signature<B: RegisterBus + ?Sized>(
    bus: &B,
    gc: &IpBases,
    g: Generation,
    reg7: Option<u32>,
    reg6: u32,
) -> Result<(), barebell::bus::BlockError> {
    let (r6, r7) = scratch_regs(g)?;
    let b = Block::new(bus, *gc);
    if let Some(v) = reg7 {
        b.write(r7, v)?;
    }
    b.write(r6, reg6)
}

fn read_checked<B: RegisterBus + ?Sized>(b: &Block<'_, B>, r: Reg) -> Result<u32, ErrorKind> {
    let v = b.read(r).map_err(ErrorKind::Register)?;
    if v == ALL_ONES {
        return Err(ErrorKind::DeviceGone { register: r.name });
    }
    Ok(v)
}

/// Reads the start-of-day state (no write).
pub fn detect(gpu: &Gpu<'_>) -> Result<(StartState, bool, u32, u32), BringupError> {
    let s = Step::Start;
    let ips = &gpu.ips;
    let bus: &dyn RegisterBus = &gpu.bus;
    let gcb = Block::new(bus, gc_bases(ips));
    let (r6, r7) = scratch_regs(ips.generation).at(s)?;
    let scratch7 = read_checked(&gcb, r7).at(s)?;
    let scratch6 = read_checked(&gcb, r6).at(s)?;
    let mp0 = ips.mp0.version.triple();
    let regs = PspRegs::for_version(mp0)
        .ok_or(ErrorKind::Unsupported {
            what: "PSP registers of MP0",
            version: mp0,
        })
        .at(s)?;
    let sos = psp::sos_alive(bus, regs, &ips.mp0.bases).at(s)?;
    let fault = match hub_for(hw_id::GC, ips.gc.version.triple()) {
        Some(h) => read_fault(bus, &ips.gc.bases, h).at(s)?,
        None => None,
    };
    let ours = scratch7 == SIGNATURE;
    let state = match (ours, sos) {
        (true, false) => StartState::Malformed(Malformation::StaleSignature),
        (true, true) if scratch6 != 0 => {
            StartState::Malformed(Malformation::Unfinalized { scratch6 })
        }
        (true, true) => match fault {
            Some(v) => StartState::Malformed(Malformation::FaultLatched(v)),
            None => StartState::LeftByBarebell,
        },
        (false, true) => StartState::LeftByOther,
        (false, false) => StartState::Clean,
    };
    Ok((state, sos, scratch7, scratch6))
}

/// The start step: detect, report, act.
pub fn run(gpu: &Gpu<'_>, sink: &dyn Sink) -> Result<StartReport, BringupError> {
    let s = Step::Start;
    let (state, sos_alive, scratch7, scratch6) = detect(gpu)?;
    sink.step(
        s,
        format_args!(
            "found {state}: C2PMSG_81 {}, SCRATCH_REG7 = {scratch7:#010x}, SCRATCH_REG6 = {scratch6:#x}",
            if sos_alive { "set (sOS alive)" } else { "0" }
        ),
    );
    let mut report = StartReport {
        state,
        action: Action::FullBringup,
        sos_alive,
        smu_version: None,
        scratch7,
        scratch6,
        reset_ns: None,
        live_tmr: None,
    };
    let needs_reset = sos_alive
        && matches!(
            state,
            StartState::LeftByOther
                | StartState::Malformed(
                    Malformation::Unfinalized { .. } | Malformation::FaultLatched(_)
                )
        );
    if state == StartState::LeftByBarebell {
        report.action = Action::PartialReinit;
        report.live_tmr =
            read_tmr_record(&gpu.bus, &gc_bases(&gpu.ips), gpu.ips.generation).at(s)?;
        // In progress from here: a run killed before its teardown is
        // found unfinalized next time.
        write_signature(&gpu.bus, &gc_bases(&gpu.ips), gpu.ips.generation, None, 1).at(s)?;
    } else if needs_reset {
        let (version, took) = mode1_reset(gpu, sink, Step::Start)?;
        report.smu_version = Some(version);
        report.action = Action::Mode1Reset;
        report.reset_ns = Some(took);
    }
    sink.step(s, format_args!("{}", report.action));
    Ok(report)
}

/// `amdgpu_device_mode1_reset()` through the SMU; returns the PMFW
/// version that answered before it and how long the reset took. The one
/// mode-1 reset: the start step's, and the last rung of hang recovery
/// ([`crate::recover`]), which reports as step `s`.
pub(crate) fn mode1_reset(
    gpu: &Gpu<'_>,
    sink: &dyn Sink,
    s: Step,
) -> Result<(u32, u64), BringupError> {
    let ips = &gpu.ips;
    let bus: &dyn RegisterBus = &gpu.bus;
    let clock = gpu.platform.clock();
    refuse_hive_member(gpu, s)?;
    let v1 = ips.mp1.version.triple();
    let mp1 = Mp1::for_version(v1)
        .ok_or(ErrorKind::Start(StartError::NoReset { mp1: v1 }))
        .at(s)?;
    // tinygrad resets only when `is_smu_alive()`.
    let version = match smu::is_alive(bus, clock, mp1, &ips.mp1.bases) {
        Ok(Some(v)) => v,
        Ok(None) => return Err(ErrorKind::Start(StartError::SmuDead).at(s)),
        Err(e) => return Err(ErrorKind::Start(StartError::Smu(e)).at(s)),
    };
    let began = clock.now_ns();
    // `amdgpu_device_mode1_reset()`: the PCI state cached first
    // (`amdgpu_device_cache_pci_state()`), since the reset clears the
    // function's BARs and command register; without it the device would
    // decode nothing afterwards, so a platform that cannot is refused here.
    if !gpu.platform.save_pci_state() {
        return Err(ErrorKind::Start(StartError::NoPciState).at(s));
    }
    // Then "disable BM".
    let bm = gpu.platform.set_bus_master(false);
    sink.step(
        s,
        format_args!(
            "{}: PMFW {version:#010x} answers; bus mastering {}; sending the mode-1 reset, {}, then {} ms without MMIO",
            mp1.name,
            if bm { "cleared" } else { "left as the platform has it (no config-space access)" },
            mp1.mode1,
            mp1.mode1_wait_ns / 1_000_000
        ),
    );
    smu::mode1_reset(bus, clock, mp1, &ips.mp1.bases)
        .map_err(|e| ErrorKind::Start(StartError::Smu(e)))
        .at(s)?;
    // `amdgpu_device_load_pci_state()` before any register is read: the
    // BARs and the command register as cached, bus mastering cleared
    // again (barebell turns it back on only once the device is ready).
    if !gpu.platform.restore_pci_state() {
        return Err(ErrorKind::Start(StartError::PciRestoreFailed).at(s));
    }
    // The reset put the link's ASPM back to its power-on setting (see
    // `crate::run`); cleared again before the waits read registers.
    gpu.platform.disable_aspm();
    gpu.platform.set_bus_master(false);
    let regs = PspRegs::for_version(ips.mp0.version.triple())
        .ok_or(ErrorKind::Unsupported {
            what: "PSP registers of MP0",
            version: ips.mp0.version.triple(),
        })
        .at(s)?;
    psp::wait_for_bootloader(bus, clock, regs, &ips.mp0.bases).at(s)?;
    wait_memsize(bus, clock).at(s)?;
    let c81 = Block::new(bus, ips.mp0.bases).read(regs.c2pmsg_81).at(s)?;
    if c81 != 0 {
        return Err(ErrorKind::Start(StartError::ResetTookNoEffect { c2pmsg_81: c81 }).at(s));
    }
    // Bus mastering as it was before the reset (Linux's restored command
    // register has it on; barebell waits for the device first).
    if bm {
        gpu.platform.set_bus_master(true);
    }
    let took = clock.now_ns().saturating_sub(began);
    sink.step(
        s,
        format_args!(
            "mode-1 reset done in {} ms: PCI state restored, bootloader ready, RCC_CONFIG_MEMSIZE readable, C2PMSG_81 = 0; bus mastering restored",
            took / 1_000_000
        ),
    );
    Ok((version, took))
}

/// A mode-1 reset resets one GPU; an XGMI hive member is refused before
/// anything is sent ([`StartError::HiveMember`]).
///
/// Linux never resets a hive member alone: at init it resets soc15 parts
/// on bare metal not at all (`soc15_need_reset_on_init()` returns false
/// unless passed through) and, where a reset is needed, a hive member
/// only with its hive (`amdgpu_device_init()` logs "Pending hive reset."
/// and sets `xgmi.pending_reset` instead of resetting the node); in
/// recovery `amdgpu_do_asic_reset()`
/// resets "all XGMI hive nodes ASAP" together. tinygrad's `AMDev.__init__`
/// refuses outright: with sOS and PMFW alive on a hive member
/// (`is_hive()`: `MC_VM_XGMI_LFB_SIZE` and `PF_MAX_REGION` both set) it
/// raises "Malformed state. Use extra/amdpci/hive_reset.py to reset the
/// hive" instead of calling `smu.mode1_reset()`. barebell has no
/// hive-wide reset and does the same. Membership is read as Linux reads
/// it, before deciding on a reset (`amdgpu_device_init()`: "Need to get
/// xgmi info early to decide the reset behavior",
/// `gfxhub_v1_2_get_xgmi_info()`; the gmc block's
/// [`crate::gmc::GmcBlock::hive`]); parts without XGMI are never members.
fn refuse_hive_member(gpu: &Gpu<'_>, s: Step) -> Result<(), BringupError> {
    let hive = gpu.blocks.gmc.hive(gpu).map_err(|mut e| {
        e.step = s;
        e
    })?;
    match hive {
        Some(h) if h.xgmi.nodes > 1 => Err(ErrorKind::Start(StartError::HiveMember {
            node: h.xgmi.node,
            nodes: h.xgmi.nodes,
        })
        .at(s)),
        _ => Ok(()),
    }
}

/// `amdgpu_device_mode1_reset()`: "wait for asic to come out of reset",
/// `get_memsize()` until it is no longer all-ones.
fn wait_memsize<C: barebell::time::Clock + ?Sized>(
    bus: &dyn RegisterBus,
    clock: &C,
) -> Result<u32, ErrorKind> {
    use barebell::discovery::boot::RCC_CONFIG_MEMSIZE as R;
    // Absolute offsets: the boot registers with every base 0.
    let b = Block::new(bus, IpBases::default());
    let at = b.offset(R).map_err(ErrorKind::Register)?;
    let mut d = Deadline::after(clock, MEMSIZE_TIMEOUT_NS);
    loop {
        let v = bus.read32(at);
        if v != ALL_ONES {
            return Ok(v);
        }
        if d.expired(clock) {
            return Err(ErrorKind::Wait(WaitError::Timeout {
                what: R.name,
                byte_offset: at,
                waited_ns: d.elapsed_ns(clock),
                last: v,
            }));
        }
        core::hint::spin_loop();
    }
}
