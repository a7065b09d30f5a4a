//! Hang detection and recovery for the user queue (issue 20, item 4).
//!
//! Detection ([`watch`], [`probe_scheduler`]): the queue's read index
//! must move while packets are pending ([`Watchdog`], bound
//! [`WATCHDOG_NS`]); the scheduler behind the mapping (MES, the KIQ) must
//! answer a status request within its own API bound; and every bound
//! interval a register is read, so a device that fell off the bus (reads
//! all ones) is reported as gone instead of hung.
//!
//! Recovery ([`recover`]) climbs a ladder and stops at the first rung
//! that works, each rung saying what it did:
//! 1. [`Rung::Queue`]: the queue alone. Direct mapping: HQD dequeue with
//!    `RESET_WAVES` and `SPI_COMPUTE_QUEUE_RESET` (tinygrad's
//!    `AM_GFX.fini_hw`; [`barebell::gfx::reset::reset_hqd`]). MES mapping:
//!    `RESET` with `reset_queue_only` (`mes_v11_0_reset_hw_queue()`), then
//!    `REMOVE_QUEUE` (`mes_v11_0_remove_hw_queue()`). KIQ mapping:
//!    `UNMAP_QUEUES` with `RESET_QUEUES` (`gfx_v11_0_reset_kcq()` unmaps
//!    through the KIQ that way; on gfx12 uni-MES the KIQ pipe's
//!    `REMOVE_QUEUE` with `unmap_legacy_queue`). HWS mapping (GC 9.4.3):
//!    `UNMAP_QUEUES` for the process with `RESET_QUEUES`
//!    (`reset_queues_cpsch()`), then the unmap; a preemption alone is
//!    abandoned on a hung queue. Skipped when the scheduler itself is what
//!    hung: it would only time out again.
//! 2. [`Rung::CpSoftReset`]: `GRBM_SOFT_RESET` CP and CPC
//!    (`gfx_v11_0_soft_reset()`), then no compute HQD may be active.
//!    MES, the KIQ and every queue are gone: the GFX steps must run again.
//!    Skipped on GC 9.4.3: Linux resets a discrete MI300 with mode-1
//!    (`soc15_asic_reset_method()`, MP1 13.0.6), never with a CP soft
//!    reset, whose GC 9.4.3 version (`gfx_v9_4_3_soft_reset()`) acts on
//!    XCC 0 alone.
//! 3. [`Rung::Mode1`]: the start step's mode-1 reset
//!    (`amdgpu_device_mode1_reset()`): bus mastering off, the SMU's message
//!    for the MP1 version ([`barebell::smu`]) and the wait after it,
//!    bounded waits for the PSP bootloader and the memsize register, bus
//!    mastering restored. The whole device is back at power-on state: a
//!    new bring-up is needed.
//!
//! Every packet the [`Ledger`] tracked is then given its fate, completed
//! or lost (fetched or not), by packet index; none is dropped silently.

use crate::Gpu;
use crate::bus::Pauser;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use barebell::aql::watchdog::{Ledger, PacketFate, Stall, Watch, Watchdog};
use barebell::bus::{BlockError, Presence};
use barebell::gfx::error::MapError;
use barebell::gfx::reset::{ResetRegs, active_compute_hqds, cp_soft_reset, reset_hqd};
use barebell::time::Pause;

/// How long a queue's read index may stand still with packets pending
/// before it is called hung. Linux's compute job timeout is 10 s
/// (`amdgpu_device_get_job_timeout_settings()`); barebell's first packet
/// bound is 2 s ([`crate::queue::BOUND_NS`]); the watchdog uses 500 ms so
/// a hang is reported well before either (a *barebell choice*).
pub const WATCHDOG_NS: u64 = 500_000_000;
/// Bound on a rung's own waits (an HQD going inactive, the device coming
/// back after mode-1): Linux's `adev->usec_timeout` is 100 ms for register
/// waits; barebell uses the dequeue bound ([`barebell::gfx::hqd`]).
pub const RUNG_NS: u64 = barebell::gfx::hqd::DEQUEUE_TIMEOUT_NS;

/// What noticed the hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    /// The queue's read index stood still with packets pending.
    Queue(Stall),
    /// The scheduler (MES or the KIQ) did not answer within its bound.
    Scheduler(MapError),
    /// A register read all ones: the device is gone. Nothing to recover.
    DeviceGone,
}

impl core::fmt::Display for Detected {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Detected::Queue(s) => write!(f, "user queue hung: {s}"),
            Detected::Scheduler(e) => write!(f, "scheduler hung: {e}"),
            Detected::DeviceGone => write!(
                f,
                "the device is gone (a register reads all ones): unplugged, powered off or fallen off the bus"
            ),
        }
    }
}

/// A rung of the ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rung {
    Queue,
    CpSoftReset,
    Mode1,
}

impl Rung {
    pub fn name(self) -> &'static str {
        match self {
            Rung::Queue => "queue reset",
            Rung::CpSoftReset => "CP soft reset (GRBM_SOFT_RESET CP, CPC)",
            Rung::Mode1 => "mode-1 reset (SMU)",
        }
    }
}

/// What one rung did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RungOutcome {
    Recovered(String),
    Failed(String),
    Skipped(String),
}

/// What must run again before the device takes work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reinit {
    /// Only the user queue is gone: map a new one.
    Queue,
    /// The CP was reset: MES, the KIQ and the queues must be started again
    /// (bring-up steps mes, rings, queue).
    Gfx,
    /// The device is back at power-on state: a new bring-up (a new
    /// process: a platform is brought up once).
    Device,
    /// Nothing worked; the device is in an unknown state.
    Unrecovered,
}

/// The typed result of a recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryReport {
    pub cause: Detected,
    pub rungs: Vec<(Rung, RungOutcome)>,
    /// The rung that worked.
    pub recovered_at: Option<Rung>,
    pub reinit: Reinit,
    /// Every packet tracked when the hang was noticed, oldest first.
    pub packets: Vec<PacketFate>,
}

impl RecoveryReport {
    pub fn lost(&self) -> usize {
        self.packets
            .iter()
            .filter(|p| !matches!(p.fate, barebell::aql::watchdog::Fate::Completed))
            .count()
    }
}

impl core::fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        writeln!(f, "hang: {}", self.cause)?;
        for (r, o) in &self.rungs {
            match o {
                RungOutcome::Recovered(w) => writeln!(f, "  {}: recovered: {w}", r.name())?,
                RungOutcome::Failed(w) => writeln!(f, "  {}: FAILED: {w}", r.name())?,
                RungOutcome::Skipped(w) => writeln!(f, "  {}: skipped: {w}", r.name())?,
            }
        }
        match self.reinit {
            Reinit::Queue => writeln!(f, "  next: map a new queue")?,
            Reinit::Gfx => writeln!(f, "  next: start MES/KIQ and map the queues again")?,
            Reinit::Device => writeln!(f, "  next: bring the device up again")?,
            Reinit::Unrecovered => writeln!(f, "  next: power-cycle the machine")?,
        }
        write!(
            f,
            "  packets: {} tracked, {} lost",
            self.packets.len(),
            self.lost()
        )?;
        for p in &self.packets {
            write!(f, "\n    {p}")?;
        }
        Ok(())
    }
}

/// The presence check memory waits make ([`barebell::bus::Presence`]):
/// `GRBM_SOFT_RESET`, which cannot read all ones on a live part (it has
/// reserved bits), read straight from the platform's BAR every
/// [`WATCHDOG_NS`]. `None` if the register has no base.
pub fn presence<'p>(gpu: &Gpu<'p>) -> Option<Presence<'p>> {
    // GC 9.4.3's GRBM_SOFT_RESET has reserved bits too (1, 3-15, 24-31 in
    // `gc_9_4_3_sh_mask.h`); XCC 0's copy answers for the device.
    let reg = match gpu.ips.generation {
        barebell::ip::Generation::Gfx94 => barebell::regs::gc_9_4_3::GRBM_SOFT_RESET,
        g => ResetRegs::for_generation(g).ok()?.grbm_soft_reset,
    };
    let byte_offset = reg.byte_offset(&gpu.ips.gc.bases)?;
    Some(Presence {
        bus: gpu.platform.regs(),
        byte_offset,
        every_ns: WATCHDOG_NS,
    })
}

/// Whether the device still answers (one [`presence`] read).
pub fn device_present(gpu: &Gpu<'_>) -> bool {
    presence(gpu).is_some_and(|p| p.present())
}

/// Waits until every packet in `ledger` completed, watching the user
/// queue's read index with a [`Watchdog`] of `bound_ns`, and checking the
/// device is present once per bound interval. Completed packets stay in
/// the ledger (so a later recovery reports them as completed) until
/// [`Ledger::retire_completed`] or [`Ledger::track`] drops them.
pub fn watch<const N: usize>(
    gpu: &Gpu<'_>,
    ledger: &mut Ledger<'_, N>,
    bound_ns: u64,
) -> Result<(), Detected> {
    let Some(q) = gpu.queue.as_ref() else {
        return Ok(());
    };
    let clock = gpu.platform.clock();
    let mut dog = Watchdog::new(bound_ns, q.queue.read_index(), clock.now_ns());
    let mut pause = Pauser(gpu.platform);
    let mut checked = clock.now_ns();
    loop {
        if ledger.pending() == 0 {
            return Ok(());
        }
        let now = clock.now_ns();
        if now.saturating_sub(checked) >= bound_ns {
            checked = now;
            if !device_present(gpu) {
                return Err(Detected::DeviceGone);
            }
        }
        // A queue with nothing unfetched but packets unfinished is still
        // "pending": count the write index as one past the oldest
        // unfinished packet the read index has passed.
        let (read, write) = (q.queue.read_index(), q.queue.write_index());
        match dog.observe(read, write.max(read + 1), now) {
            Watch::Hung(s) => {
                if !device_present(gpu) {
                    return Err(Detected::DeviceGone);
                }
                return Err(Detected::Queue(s));
            }
            Watch::Idle | Watch::Progressing => pause.pause(),
        }
    }
}

/// Asks the user queue's scheduler for a sign of life (see
/// [`barebell::gfx::mapper::QueueMapper::probe`]).
pub fn probe_scheduler(gpu: &mut Gpu<'_>) -> Result<(), Detected> {
    let present = device_present(gpu);
    let Some(q) = gpu.queue.as_mut() else {
        return Ok(());
    };
    match q.mapper_mut().probe() {
        Ok(()) => Ok(()),
        Err(_) if !present => Err(Detected::DeviceGone),
        Err(e) => Err(Detected::Scheduler(e)),
    }
}

fn block_err(e: BlockError) -> String {
    format!("{e}")
}

/// Climbs the ladder for `cause`, then accounts every packet in `ledger`.
pub fn recover<const N: usize>(
    gpu: &mut Gpu<'_>,
    ledger: &mut Ledger<'_, N>,
    cause: Detected,
) -> RecoveryReport {
    let mut rungs = Vec::new();
    let mut recovered_at = None;
    let read_index = gpu.queue.as_ref().map_or(0, |q| q.queue.read_index());
    if cause == Detected::DeviceGone {
        for r in [Rung::Queue, Rung::CpSoftReset, Rung::Mode1] {
            rungs.push((r, RungOutcome::Skipped("the device does not answer".into())));
        }
    } else {
        // 1. the queue alone.
        let q = match cause {
            Detected::Scheduler(e) => RungOutcome::Skipped(format!(
                "the scheduler is what hung ({e}); asking it again would only time out"
            )),
            _ => queue_rung(gpu),
        };
        let ok = matches!(q, RungOutcome::Recovered(_));
        rungs.push((Rung::Queue, q));
        if ok {
            recovered_at = Some(Rung::Queue);
        } else {
            // 2. the compute CP.
            let c = cp_rung(gpu);
            let ok = matches!(c, RungOutcome::Recovered(_));
            rungs.push((Rung::CpSoftReset, c));
            if ok {
                recovered_at = Some(Rung::CpSoftReset);
            } else {
                // 3. the device.
                let m = match mode1_reset(gpu) {
                    Ok(what) => {
                        recovered_at = Some(Rung::Mode1);
                        RungOutcome::Recovered(what)
                    }
                    Err(why) => RungOutcome::Failed(why),
                };
                rungs.push((Rung::Mode1, m));
            }
        }
    }
    // The queue is off the device (or the device was reset): the
    // teardown must not try to unmap it again.
    if recovered_at.is_some() {
        gpu.queue = None;
    }
    let mut packets = Vec::new();
    ledger.account(read_index, |p| packets.push(p));
    let reinit = match recovered_at {
        Some(Rung::Queue) => Reinit::Queue,
        Some(Rung::CpSoftReset) => Reinit::Gfx,
        Some(Rung::Mode1) => Reinit::Device,
        None => Reinit::Unrecovered,
    };
    RecoveryReport {
        cause,
        rungs,
        recovered_at,
        reinit,
        packets,
    }
}

fn queue_rung(gpu: &mut Gpu<'_>) -> RungOutcome {
    let Some(q) = gpu.queue.as_mut() else {
        return RungOutcome::Skipped("no user queue".into());
    };
    let m = q.mapping;
    match q.mode {
        crate::Mapping::Direct => {
            let p = gpu.platform;
            match reset_hqd(
                &gpu.bus,
                p.clock(),
                &gpu.ips.gc.bases,
                gpu.ips.generation,
                m.pipe,
                m.queue,
                RUNG_NS,
            ) {
                Ok(()) => RungOutcome::Recovered(format!(
                    "MEC 1 pipe {} queue {}: CP_HQD_DEQUEUE_REQUEST RESET_WAVES, SPI_COMPUTE_QUEUE_RESET, CP_HQD_ACTIVE clear",
                    m.pipe, m.queue
                )),
                Err(e) => RungOutcome::Failed(block_err(e)),
            }
        }
        crate::Mapping::Mes => {
            // MES RESET of the one queue first (`amdgpu_mes_reset_hw_queue()`
            // → `mes_v11_0_reset_hw_queue()`), then REMOVE_QUEUE: a hung
            // queue cannot be preempted, so REMOVE_QUEUE alone fails.
            let reset = match q.mapper_mut().reset_queue(&m) {
                Ok(true) => "RESET (reset_queue_only) answered, ",
                Ok(false) => "",
                Err(e) => return RungOutcome::Failed(format!("MES RESET: {e}")),
            };
            match q.mapper_mut().unmap(&m) {
                Ok(()) => RungOutcome::Recovered(format!(
                    "MES {reset}REMOVE_QUEUE answered for {}",
                    barebell::aql::doorbell::Slot::new(m.doorbell)
                )),
                Err(e) => RungOutcome::Failed(format!("MES {reset}REMOVE_QUEUE: {e}")),
            }
        }
        crate::Mapping::Kiq => match q.mapper_mut().unmap(&m) {
            Ok(()) => RungOutcome::Recovered(format!(
                "the KIQ answered UNMAP_QUEUES (RESET_QUEUES) for {}",
                barebell::aql::doorbell::Slot::new(m.doorbell)
            )),
            Err(e) => RungOutcome::Failed(format!("{e}")),
        },
        // The HWS cannot preempt a hung queue (it gives up and logs the
        // doorbell, `check_preemption_failed_v9_4_3()`), so the queue is
        // reset first, as `reset_queues_cpsch()` does, then unmapped.
        crate::Mapping::Hws => {
            let reset = match q.mapper_mut().reset_queue(&m) {
                Ok(true) => "UNMAP_QUEUES (RESET_QUEUES) and ",
                Ok(false) => "",
                Err(e) => return RungOutcome::Failed(format!("HWS RESET_QUEUES: {e}")),
            };
            match q.mapper_mut().unmap(&m) {
                Ok(()) => RungOutcome::Recovered(format!(
                    "the HWS answered {reset}UNMAP_QUEUES and its QUERY_STATUS fence for {}",
                    barebell::aql::doorbell::Slot::new(m.doorbell)
                )),
                Err(e) => RungOutcome::Failed(format!("{reset}{e}")),
            }
        }
    }
}

fn cp_rung(gpu: &mut Gpu<'_>) -> RungOutcome {
    let p = gpu.platform;
    let (gc, g) = (gpu.ips.gc.bases, gpu.ips.generation);
    if g == barebell::ip::Generation::Gfx94 {
        return RungOutcome::Skipped(
            "GC 9.4.3: Linux recovers a discrete MI300 with a mode-1 reset \
             (soc15_asic_reset_method() for MP1 13.0.6 without AMD_IS_APU), and its soft \
             reset, gfx_v9_4_3_soft_reset(), reaches XCC 0 only"
                .into(),
        );
    }
    if let Err(e) = cp_soft_reset(&gpu.bus, p.clock(), &gc, g) {
        return RungOutcome::Failed(block_err(e));
    }
    match active_compute_hqds(&gpu.bus, &gc, g) {
        Ok((0, _)) => RungOutcome::Recovered(
            "GRBM_SOFT_RESET CP|CPC pulsed; no compute HQD active; MES and the KIQ are stopped"
                .into(),
        ),
        Ok((n, first)) => RungOutcome::Failed(format!(
            "{n} compute HQDs still active after the soft reset (first: {first:?})"
        )),
        Err(e) => RungOutcome::Failed(block_err(e)),
    }
}

/// Mode-1 reset, the bring-up's one ([`crate::start`]'s, as
/// `amdgpu_device_mode1_reset()` orders it): the PMFW must answer, bus
/// mastering off (`pci_clear_master()`), the SMU message for the MP1
/// version and the wait after it, bounded waits for the PSP bootloader
/// and `RCC_CONFIG_MEMSIZE`, sOS gone, bus mastering restored. The device
/// then needs a new bring-up.
pub fn mode1_reset(gpu: &Gpu<'_>) -> Result<String, String> {
    let (pmfw, took) = crate::start::mode1_reset(gpu, &crate::Quiet, crate::Step::Unmap)
        .map_err(|e| alloc::format!("{e}"))?;
    let v = gpu.ips.mp1.version.triple();
    Ok(format!(
        "MP1 {}.{}.{} (PMFW {pmfw:#010x}): mode-1 reset done in {} ms; PSP bootloader ready, sOS gone",
        v.0,
        v.1,
        v.2,
        took / 1_000_000
    ))
}
