//! A model of the PSP (MP0) as the graphics driver sees it: the bootloader
//! mailbox (C2PMSG_35/36), the sign-of-life register (C2PMSG_81), the
//! GPCOM ring (C2PMSG_64/67/69/70/71) and the command set that loads the
//! graphics firmware, plus the two GC registers that report the RLC
//! autoload.
//!
//! Everything it reads from the driver (bootloader commands, ring
//! frames, command buffers, firmware types, the blobs it compares
//! against) it decodes with its own code written from `psp_gfx_if.h`,
//! `amdgpu_psp.h` and `amdgpu_ucode.h` ([`iface`], [`crate::ucode`]),
//! each value a conformance fact: never with the runtime's or
//! barebell-firmware-if's types, so a layout or numbering slip on the
//! runtime side is refused here rather than mirrored.
//!
//! It enforces what the public sources say the PSP expects
//! (`psp_v13_0.c`, `psp_v14_0.c`, `amdgpu_psp.c`, `psp_gfx_if.h`, and
//! what tinygrad's AM showed silicon accepts), and refuses the rest:
//! - bootloader stages in `psp_hw_start()` order, each byte-for-byte the
//!   component of the real SOS bundle (on MP0 13.0.0 the SPL stage
//!   carries the KDB, `psp_v13_0_bootloader_load_spl()`), read from
//!   `C2PMSG_36 << 20` (so a buffer that is not 1 MiB aligned is read from
//!   the wrong place and refused as a wrong payload; IPKEYMGR may be left
//!   out, as AM does); none once sOS runs;
//! - the ring only once sOS is ready (C2PMSG_64 bit 31), with a sane size
//!   and memory it can reach, and not over a live ring (DESTROY_RINGS
//!   first);
//! - ring frames with a write pointer on a frame boundary inside the
//!   ring, a reachable command buffer and a reachable, aligned fence;
//! - LOAD_TOC with the real TOC, answered with the part's TMR size
//!   (0x1300000 on Navi31, as a real RX 7900 XTX asks); SETUP_TMR only
//!   after it, before any GFX image, 1 MiB aligned, in VRAM at its
//!   `system_phy_addr`, and carrying exactly the size LOAD_TOC answered;
//!   SMU firmware after LOAD_TOC; GFX LOAD_IP_FW only after SETUP_TMR (or
//!   LOAD_TOC with a boot-time TMR), any image of the part in any order,
//!   each the exact image of the real blob (size and FNV-1a hash);
//!   AUTOLOAD_RLC once the RLC's own code is in ([`RLC_CODE`]);
//! - engines run only what the autoload put in place: the record is
//!   [`LoadedFirmware`], which the MEC model's MES pipes consult.
//!
//! Time ([`PspTiming`]): every register access costs
//! [`crate::regfile::ACCESS_NS`]; the bootloader, the sign of life, sOS
//! readiness for the ring, each ring command and the RLC autoload take
//! simulated time, so a driver that waits less than its answer takes
//! fails here as it would on a card.
//!
//! Memory: the model never reads host memory by address. Every access
//! (the bootloader's `fw_pri` read, the ring, each frame, the command
//! buffer, LOAD_TOC/LOAD_IP_FW payloads, the response and the fence) is
//! an MC address decoded by [`crate::mc::Mc`]: the system aperture, or a
//! walk of the runtime's VMID0 tables through the MMHUB model, which
//! latches a VM fault when the walk fails. What sOS does when its own DMA
//! faults is not public. Linux detects a GPCOM failure only by the fence
//! wait in `psp_cmd_submit_buf()` timing out, so the model makes that the
//! outcome: a frame whose command buffer, response or fence it cannot
//! reach is logged as a refusal and gets no fence (model choice). A
//! bootloader or ring-create command whose buffer does not translate
//! answers [`status::DMA`] in its mailbox (model choice). A translation
//! that lands in the wrong place (a PTE without SYSTEM sends the read to
//! VRAM) is no fault: the PSP sees other bytes and refuses the payload.
//!
//! What the real PSP answers to a refusal is not public beyond
//! `PSP_ERR_UNKNOWN_COMMAND` (0x100): the other status values in
//! [`status`] are the model's own, chosen to be distinct and non-zero,
//! which is all the runtime relies on. Each refusal is also logged
//! ([`PspModel::refusals`]) so tests can check the model refused for the
//! reason they meant.
//!
//! What a real PSP does with a ring command written before sOS is ready,
//! a second INIT_GPCOM_RING, a bootloader command to a running sOS or a
//! SETUP_TMR of another size is not public: the model refuses each
//! (model rules, labelled where they are enforced).

use crate::SimClock;
use crate::gmc::Access;
use crate::log::Keep;
use crate::mc::{Mc, Target};
use crate::regfile::ACCESS_NS;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::{ALL_ONES, RegisterBus};
use barebell::ip::Generation;
use barebell::regs::mp::PspRegs;
use barebell::regs::{IpBases, Reg};
use barebell::time::Clock;
use barebell_facts::Fact;
use core::sync::atomic::Ordering;
use iface::{bl, buf, cmd, ctrl, dword, frame, fw, qword};
use spin::Mutex;

pub mod iface;
pub mod loaded;
pub mod mp13_0_2;
pub mod mp13_0_6;

pub use loaded::LoadedFirmware;

/// Status values the model reports (bits 15:0 of C2PMSG_35/64, or
/// `resp.status`). Model-defined except `UNKNOWN_COMMAND`.
pub mod status {
    /// `PSP_ERR_UNKNOWN_COMMAND` (`psp_gfx_if.h`).
    pub const UNKNOWN_COMMAND: u32 = super::iface::ERR_UNKNOWN_COMMAND;
    pub const BUSY: u32 = 0x01;
    pub const ORDER: u32 = 0x02;
    pub const PAYLOAD: u32 = 0x03;
    pub const DMA: u32 = 0x04;
    pub const RING: u32 = 0x05;
    pub const TMR: u32 = 0x06;
}

const READY: u32 = ctrl::RESPONSE;

/// How long the model's PSP takes, in simulated time. A real PSP's
/// times are not public: [`PspTiming::MODEL`] holds model values inside
/// every budget Linux 6.12 grants, and [`PspTiming::SLOWEST_LINUX_ACCEPTS`]
/// the slowest PSP whose answers Linux's waits still see, to catch a
/// driver that waits less than Linux does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PspTiming {
    /// C2PMSG_35 reads busy (bit 31 clear) this long after a bootloader
    /// command.
    pub bootloader_ns: u64,
    /// From LOAD_SOSDRV to the sign of life in C2PMSG_81.
    pub sos_boot_ns: u64,
    /// From the sign of life to C2PMSG_64 bit 31: sOS ready for ring
    /// commands (`psp_v13_0_ring_create()` waits for it, "Wait for sOS
    /// ready for ring creation", apart from the sign of life).
    pub sos_ring_ready_ns: u64,
    /// From a ring command in C2PMSG_64 to its answer.
    pub ring_cmd_ns: u64,
    /// From AUTOLOAD_RLC to BOOTLOAD_COMPLETE.
    pub autoload_ns: u64,
}

impl PspTiming {
    /// The model's PSP (model values, short so that register traces
    /// stay short). `sos_boot_ns` is past 20 ms:
    /// `psp_v13_0_bootloader_load_sos()` reads C2PMSG_81 after
    /// `mdelay(20)` and waits for it to change from that value, so on
    /// the silicon Linux runs on it changes after those 20 ms; the model's
    /// sOS signs life once, at 20.5 ms.
    pub const MODEL: PspTiming = PspTiming {
        bootloader_ns: 3_000,
        sos_boot_ns: 20_500_000,
        sos_ring_ready_ns: 100_000,
        ring_cmd_ns: 1_000_000,
        autoload_ns: 50_000,
    };

    /// Each answer 1 ms inside what Linux 6.12 waits for it
    /// (`psp_v13_0.c`, `psp_v14_0.c`; `psp_wait_for()` is
    /// `usec_timeout` = 100 000 polls of `udelay(1)`, at least 100 ms):
    /// the bootloader 10 × `psp_wait_for()`; the sign of life `mdelay(20)`
    /// then `psp_wait_for()`; sOS ready `psp_wait_for()`; a ring command
    /// `mdelay(20)` then `psp_wait_for()`; the RLC autoload
    /// `usec_timeout` × `udelay(1)`
    /// (`gfx_v11_0_wait_for_rlc_autoload_complete()`).
    pub const SLOWEST_LINUX_ACCEPTS: PspTiming = PspTiming {
        bootloader_ns: 999_000_000,
        sos_boot_ns: 119_000_000,
        sos_ring_ready_ns: 99_000_000,
        ring_cmd_ns: 119_000_000,
        autoload_ns: 99_000_000,
    };
}

impl Default for PspTiming {
    fn default() -> Self {
        PspTiming::MODEL
    }
}

/// The RLC's own code: AUTOLOAD_RLC is refused until these are in. A
/// model rule: both public drivers that ran on silicon load them (Linux
/// `psp_load_non_psp_fw()`, tinygrad's `AMFirmware`); which of them the
/// autoload truly needs is not public.
pub const RLC_CODE: [u32; 5] = [
    fw::IMU_I,
    fw::IMU_D,
    fw::RLC_IRAM,
    fw::RLC_DRAM_BOOT,
    fw::RLC_G,
];
/// The sign-of-life value sOS leaves in C2PMSG_81 (any non-zero value).
pub const SOS_ALIVE: u32 = 0x0000_0001;

/// FNV-1a, 64-bit: the model's fingerprint of an expected image.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The name of a bootloader command, for messages.
pub fn stage_name(command: u32) -> &'static str {
    bl::ALL
        .iter()
        .find(|(_, c)| *c == command)
        .map_or("an unknown bootloader command", |(n, _)| n)
}

/// What the model expects, taken from real blobs by the caller (with the
/// model's own reader, [`crate::ucode`]).
#[derive(Debug, Clone, Default)]
pub struct PspExpect {
    /// Bootloader stages in the order they must arrive: the
    /// `psp_bootloader_cmd` written to C2PMSG_35 and the bytes it must
    /// find at `C2PMSG_36 << 20`.
    pub stages: Vec<(u32, Vec<u8>)>,
    /// The TOC LOAD_TOC must carry; empty for a bundle without one (MP0
    /// 13.0.2), whose driver sends no LOAD_TOC.
    pub toc: Vec<u8>,
    /// The TMR size LOAD_TOC answers with, or, without a TOC, the
    /// `PSP_TMR_SIZE()` SETUP_TMR must carry.
    pub tmr_size: u32,
    /// The SMU image, if the part loads one before SETUP_TMR.
    pub smu: Option<Vec<u8>>,
    /// GFX images `(fw_type, bytes)` in the order they must arrive;
    /// AUTOLOAD_RLC must follow the last.
    pub gfx: Vec<(u32, Vec<u8>)>,
    /// The firmware set the TMR up at boot (MP0 14.x): GFX loads need no
    /// SETUP_TMR, only LOAD_TOC.
    pub boot_time_tmr: bool,
    /// No RLC autoload: each LOAD_IP_FW puts its image in place at once;
    /// AUTOLOAD_RLC is refused. MP0 13.0.6 ([`mp13_0_6`]) with a
    /// boot-time TMR that Linux still names with an empty SETUP_TMR
    /// (address, size and physical address 0, `psp_tmr_load()` with no
    /// `tmr_bo`), sent with no LOAD_TOC before it; MP0 13.0.2
    /// ([`mp13_0_2`]) with the driver's TMR.
    pub direct_load: bool,
    /// The register list (`GFX_FW_TYPE_REG_LIST`, `psp_rl_load()`) the
    /// part's bundle carries, if any.
    pub reg_list: Option<Vec<u8>>,
}

/// The GC registers that report the RLC autoload, and the
/// `BOOTLOAD_COMPLETE` bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RlcStatus {
    pub cp_stat: Reg,
    pub bootload_status: Reg,
    /// `RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK`.
    pub complete: u32,
}

/// `RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK` in both GC 11.0.0
/// and GC 12.0.0's `sh_mask.h`.
const BOOTLOAD_COMPLETE: u32 = 0x8000_0000;

impl RlcStatus {
    /// The registers (from the conformance-checked offset tables) of a
    /// generation; `None` for GC 9.4.3, whose RLC the model does not have.
    pub fn for_generation(g: Generation) -> Option<Self> {
        let (cp_stat, bootload_status) = match g {
            Generation::Gfx90a | Generation::Gfx94 => return None,
            Generation::Gfx11 => (
                barebell::regs::gc_11_0_0::CP_STAT,
                barebell::regs::gc_11_0_0::RLC_RLCS_BOOTLOAD_STATUS,
            ),
            Generation::Gfx12 => (
                barebell::regs::gc_12_0_0::CP_STAT,
                barebell::regs::gc_12_0_0::RLC_RLCS_BOOTLOAD_STATUS,
            ),
        };
        Some(RlcStatus {
            cp_stat,
            bootload_status,
            complete: BOOTLOAD_COMPLETE,
        })
    }
}

/// Where the model's registers are.
#[derive(Debug, Clone, Copy)]
pub struct PspPlacement {
    pub regs: PspRegs,
    pub mp0_bases: IpBases,
    /// The RLC autoload's status registers the PSP answers, where the part
    /// autoloads (none on MP0 13.0.6, which loads the RLC directly).
    pub gc: Option<RlcStatus>,
    pub gc_bases: IpBases,
}

/// One refused request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub status: u32,
    pub why: &'static str,
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (status {:#x})", self.why, self.status)
    }
}

#[derive(Debug, Clone, Copy)]
struct At {
    c35: usize,
    c36: usize,
    c64: usize,
    c67: usize,
    c69: usize,
    c70: usize,
    c71: usize,
    c81: usize,
    rlc: usize,
    cp_stat: usize,
}

#[derive(Debug, Default)]
struct State {
    other: BTreeMap<usize, u32>,
    c35: u32,
    /// C2PMSG_35 reads busy until then.
    bootloader_busy_until: u64,
    c36: u32,
    next_stage: usize,
    /// When LOAD_SOSDRV was accepted.
    sos_loaded_at: Option<u64>,
    c64: u32,
    /// A ring command in C2PMSG_64 and when sOS answers it.
    c64_cmd: Option<(u64, u32)>,
    /// A ring command came before sOS was ready: nobody answers it.
    c64_unanswered: bool,
    ring: Option<(u64, u32)>,
    rptr_dw: u32,
    wptr_dw: u32,
    toc_loaded: bool,
    tmr_set: bool,
    /// The live TMR (VRAM offset, bytes) SETUP_TMR gave sOS: it keeps the
    /// firmware there for as long as it runs ([`PspModel::tmr_intact`]).
    tmr: Option<(u64, u32)>,
    smu_loaded: bool,
    /// GFX images in the TMR, by type.
    pending: BTreeSet<u32>,
    timing: PspTiming,
    unplugged: bool,
    refusals: Vec<Refusal>,
    commands: Vec<(u32, u32)>,
}

/// The PSP and the RLC autoload status, on the register bus.
#[derive(Debug)]
pub struct PspModel {
    clock: SimClock,
    at: At,
    expect: PspExpect,
    mc: Arc<Mc>,
    place: PspPlacement,
    gc: Option<RlcStatus>,
    loaded: Arc<LoadedFirmware>,
    state: Mutex<State>,
}

fn off(r: Reg, b: &IpBases) -> usize {
    r.byte_offset(b).unwrap_or(usize::MAX)
}

impl PspModel {
    /// A PSP whose every memory access goes through `mc`.
    pub fn new(clock: &SimClock, place: PspPlacement, expect: PspExpect, mc: Arc<Mc>) -> Self {
        let (r, b) = (place.regs, &place.mp0_bases);
        let at = At {
            c35: off(r.c2pmsg_35, b),
            c36: off(r.c2pmsg_36, b),
            c64: off(r.c2pmsg_64, b),
            c67: off(r.c2pmsg_67, b),
            c69: off(r.c2pmsg_69, b),
            c70: off(r.c2pmsg_70, b),
            c71: off(r.c2pmsg_71, b),
            c81: off(r.c2pmsg_81, b),
            rlc: place
                .gc
                .map_or(usize::MAX, |g| off(g.bootload_status, &place.gc_bases)),
            cp_stat: place
                .gc
                .map_or(usize::MAX, |g| off(g.cp_stat, &place.gc_bases)),
        };
        PspModel {
            clock: clock.clone(),
            at,
            expect,
            mc,
            place,
            gc: place.gc,
            loaded: Arc::new(LoadedFirmware::new(clock)),
            state: Mutex::new(State {
                c35: READY,
                timing: PspTiming::MODEL,
                ..State::default()
            }),
        }
    }

    /// The MC address space the model's DMA goes through.
    pub fn mc(&self) -> &Mc {
        &self.mc
    }

    /// Where its registers are.
    pub fn placement(&self) -> PspPlacement {
        self.place
    }

    /// What the RLC autoload put in place, for the engine models.
    pub fn loaded(&self) -> Arc<LoadedFirmware> {
        self.loaded.clone()
    }

    // --- issue 15 (tinygrad's AM on the model): what the SMU, SDMA and
    // clock-gating models ask of the PSP.

    /// Whether LOAD_IP_FW has put the SMU firmware in place.
    pub fn smu_loaded(&self) -> bool {
        self.state.lock().smu_loaded
    }

    /// Whether the RLC autoload has completed (its images are in place).
    pub fn autoload_complete(&self) -> bool {
        self.loaded.complete()
    }

    /// A mode-1 reset (the SMU's `Mode1Reset`): the PSP restarts from its
    /// bootloader, as after power-on (C2PMSG_81 reads 0 until sOS is
    /// loaded again: `soc21_need_reset_on_init()` no longer sees a sign of
    /// life); logs and timing are kept. The RLC autoload record is
    /// cleared: the engines have no code until the next AUTOLOAD_RLC.
    pub fn mode1_reset(&self) {
        self.loaded.clear();
        let mut s = self.state.lock();
        let refusals = core::mem::take(&mut s.refusals);
        let commands = core::mem::take(&mut s.commands);
        let timing = s.timing;
        *s = State {
            c35: READY,
            refusals,
            commands,
            timing,
            ..State::default()
        };
    }
    // --- end issue 15

    /// What the model expects to see.
    pub fn expect(&self) -> &PspExpect {
        &self.expect
    }

    /// The device leaves the bus: reads return all-ones, writes vanish.
    pub fn unplug(&self) {
        self.state.lock().unplugged = true;
    }

    pub fn refusals(&self) -> Vec<Refusal> {
        self.state.lock().refusals.clone()
    }

    /// `(cmd_id, status)` of every GPCOM command processed, in order.
    pub fn commands(&self) -> Vec<(u32, u32)> {
        self.state.lock().commands.clone()
    }

    /// The GPCOM ring sOS holds (address, bytes), until DESTROY_RINGS.
    pub fn ring(&self) -> Option<(u64, u32)> {
        self.state.lock().ring
    }

    /// Whether sOS has signed life.
    pub fn sos_running(&self) -> bool {
        let s = self.state.lock();
        self.sos_alive(&s)
    }

    /// How long the model's PSP takes from here on.
    pub fn set_timing(&self, t: PspTiming) {
        self.state.lock().timing = t;
    }

    fn sos_alive(&self, s: &State) -> bool {
        let boot = s.timing.sos_boot_ns;
        s.sos_loaded_at
            .is_some_and(|t| self.clock.now_ns() >= t.saturating_add(boot))
    }

    fn sos_ready(&self, s: &State) -> bool {
        let after = s
            .timing
            .sos_boot_ns
            .saturating_add(s.timing.sos_ring_ready_ns);
        s.sos_loaded_at
            .is_some_and(|t| self.clock.now_ns() >= t.saturating_add(after))
    }

    /// Answers a ring command whose time has come.
    fn settle(&self, s: &mut State) {
        if let Some((at, v)) = s.c64_cmd
            && self.clock.now_ns() >= at
        {
            s.c64_cmd = None;
            let st = self.ring_command(s, v);
            s.c64 = READY | (st & ctrl::STATUS_MASK);
        }
    }

    fn refuse(s: &mut State, status: u32, why: &'static str) -> u32 {
        s.refusals.keep(Refusal { status, why });
        status
    }

    fn bootloader_command(&self, s: &mut State, command: u32) -> u32 {
        if self.clock.now_ns() < s.bootloader_busy_until {
            return Self::refuse(s, status::BUSY, "bootloader command while busy");
        }
        // Once sOS runs, the bootloader is gone: a second load is
        // refused (model rule; what a real PSP answers is not public,
        // and both drivers check the sign of life first,
        // `psp_v13_0_is_sos_alive()`, tinygrad `is_sos_alive()`).
        if self.sos_alive(s) {
            return Self::refuse(s, status::ORDER, "bootloader command while sOS runs");
        }
        if !bl::ALL.iter().any(|(_, c)| *c == command) {
            return Self::refuse(s, status::UNKNOWN_COMMAND, "unknown bootloader command");
        }
        // The IPKEYMGR stage may be left out: tinygrad's AM never loads it
        // (its list has no such stage) and sOS came up on a gfx1201.
        if self
            .expect
            .stages
            .get(s.next_stage)
            .is_some_and(|(w, _)| *w == bl::LOAD_IPKEYMGRDRV && command != bl::LOAD_IPKEYMGRDRV)
        {
            s.next_stage += 1;
        }
        if self.kdb_again_as_spl(s, command) {
            return 0;
        }
        let Some((want, image)) = self.expect.stages.get(s.next_stage) else {
            return Self::refuse(s, status::ORDER, "component after sOS");
        };
        if *want != command {
            return Self::refuse(s, status::ORDER, "component out of order");
        }
        let addr = u64::from(s.c36) << 20;
        let mut got = alloc::vec![0u8; image.len()];
        if self
            .mc
            .read(addr, &mut got, "bootloader component")
            .is_err()
        {
            return Self::refuse(s, status::DMA, "component buffer not mapped");
        }
        if got != *image {
            return Self::refuse(s, status::PAYLOAD, "component bytes differ from the bundle");
        }
        s.next_stage += 1;
        if command == bl::LOAD_SOSDRV {
            s.sos_loaded_at = Some(self.clock.now_ns());
        }
        0
    }

    /// `PSP_BL__LOAD_TOS_SPL_TABLE` carrying the KDB just loaded, where
    /// the bundle has no SPL (MP0 13.0.6): taken, changing nothing.
    /// tinygrad's AM (`AM_PSP.init_hw`) sends `spl_key` = the KDB as the
    /// SPL stage on every MP0 below 14, with or without an SPL in the
    /// bundle, and boots GC 9.4.3 parts with it (its MI300X hive path,
    /// `AMDev.__init__`); Linux skips the stage when the bundle has no
    /// SPL (`psp_hw_start()`: `is_psp_fw_valid(psp->spl)`). Any other
    /// component out of order is still refused.
    fn kdb_again_as_spl(&self, s: &State, command: u32) -> bool {
        if command != bl::LOAD_TOS_SPL_TABLE
            || self
                .expect
                .stages
                .iter()
                .any(|(c, _)| *c == bl::LOAD_TOS_SPL_TABLE)
        {
            return false;
        }
        let Some(prev) = s.next_stage.checked_sub(1) else {
            return false;
        };
        let Some((bl::LOAD_KEY_DATABASE, kdb)) = self.expect.stages.get(prev) else {
            return false;
        };
        let mut got = alloc::vec![0u8; kdb.len()];
        let addr = u64::from(s.c36) << 20;
        self.mc.read(addr, &mut got, "bootloader component").is_ok() && got == *kdb
    }

    /// A ring command, when sOS answers it: INIT_GPCOM_RING
    /// (`psp_v13_0_ring_create()`) or DESTROY_RINGS
    /// (`psp_v13_0_ring_stop()`).
    fn ring_command(&self, s: &mut State, v: u32) -> u32 {
        if v == ctrl::DESTROY_RINGS {
            s.ring = None;
            s.rptr_dw = 0;
            s.wptr_dw = 0;
            return 0;
        }
        if v != ctrl::INIT_GPCOM_RING {
            return Self::refuse(s, status::UNKNOWN_COMMAND, "ring control command");
        }
        // A live ring is destroyed before another is created: tinygrad's
        // `_ring_create` sends DESTROY_RINGS when C2PMSG_71 is non-zero,
        // and Linux stops its ring (`psp_v13_0_ring_stop()`) before it
        // lets go of the PSP. What sOS answers to a second create is not
        // public; the model refuses it (model rule).
        if s.ring.is_some() {
            return Self::refuse(s, status::RING, "ring create while a ring exists");
        }
        let lo = s.other.get(&self.at.c69).copied().unwrap_or(0);
        let hi = s.other.get(&self.at.c70).copied().unwrap_or(0);
        let size = s.other.get(&self.at.c71).copied().unwrap_or(0);
        let addr = u64::from(hi) << 32 | u64::from(lo);
        if size == 0 || !size.is_multiple_of(64) || size > 0x1_0000 {
            return Self::refuse(s, status::RING, "ring size");
        }
        if self
            .mc
            .probe(addr, u64::from(size), Access::Read, "ring")
            .is_err()
        {
            return Self::refuse(s, status::DMA, "ring not mapped");
        }
        s.ring = Some((addr, size));
        s.rptr_dw = 0;
        s.wptr_dw = 0;
        0
    }

    fn consume(&self, s: &mut State, wptr: u32) {
        let Some((ring, size)) = s.ring else {
            Self::refuse(s, status::ORDER, "write pointer before ring create");
            return;
        };
        let ring_dw = size / 4;
        if !wptr.is_multiple_of(16) || wptr >= ring_dw {
            Self::refuse(
                s,
                status::RING,
                "write pointer not on a frame inside the ring",
            );
            return;
        }
        s.wptr_dw = wptr;
        while s.rptr_dw != s.wptr_dw {
            let at = ring + u64::from(s.rptr_dw) * 4;
            s.rptr_dw = (s.rptr_dw + 16) % ring_dw;
            let mut f = [0u8; frame::BYTES];
            if self.mc.read(at, &mut f, "ring frame").is_err() {
                Self::refuse(s, status::DMA, "ring frame unreadable");
                continue;
            }
            let cmd_buf = qword(&f, frame::CMD_BUF_ADDR_LO, frame::CMD_BUF_ADDR_HI);
            let cmd_size = dword(&f, frame::CMD_BUF_SIZE);
            let fence = qword(&f, frame::FENCE_ADDR_LO, frame::FENCE_ADDR_HI);
            let fence_value = dword(&f, frame::FENCE_VALUE);
            let frame_type = f[frame::FRAME_TYPE];
            // Linux leaves cmd_buf_size at 0 (psp_ring_cmd_submit());
            // barebell-firmware-if fills in the buffer's size. Accept both.
            if (cmd_size != 0 && cmd_size as usize != buf::BYTES) || frame_type != 0 {
                Self::refuse(s, status::RING, "malformed ring frame");
                continue;
            }
            if !fence.is_multiple_of(4) || self.mc.probe(fence, 4, Access::Write, "fence").is_err()
            {
                Self::refuse(s, status::DMA, "fence not mapped or misaligned");
                continue;
            }
            let mut c = alloc::vec![0u8; buf::BYTES];
            if !cmd_buf.is_multiple_of(4)
                || self.mc.read(cmd_buf, &mut c, "command buffer").is_err()
            {
                Self::refuse(s, status::DMA, "command buffer not mapped");
                continue;
            }
            let cmd_id = dword(&c, buf::CMD_ID);
            let body = c.get(buf::CMD..).unwrap_or(&[]);
            let mut resp = [0u8; buf::RESP_BYTES];
            let st = self.command(s, cmd_id, body, &mut resp);
            resp[buf::RESP_STATUS..buf::RESP_STATUS + 4].copy_from_slice(&st.to_le_bytes());
            s.commands.push((cmd_id, st));
            // A response the PSP cannot write, or a fence it cannot
            // reach, ends the command without a fence (see the module
            // docs).
            let wrote = resp.chunks_exact(4).enumerate().all(|(i, v)| {
                self.mc
                    .write_u32(
                        cmd_buf + (buf::RESP + 4 * i) as u64,
                        dword(v, 0),
                        Ordering::Relaxed,
                        "response",
                    )
                    .is_ok()
            });
            if !wrote {
                Self::refuse(s, status::DMA, "response not writable");
                continue;
            }
            if self
                .mc
                .write_u32(fence, fence_value, Ordering::Release, "fence")
                .is_err()
            {
                Self::refuse(s, status::DMA, "fence not mapped or misaligned");
            }
        }
    }

    fn read_image(&self, addr: u64, size: u32) -> Option<Vec<u8>> {
        let mut v = alloc::vec![0u8; size as usize];
        self.mc.read(addr, &mut v, "image").ok().map(|_| v)
    }

    /// One GPCOM command; `body` is `union psp_gfx_commands`, `resp`
    /// the `struct psp_gfx_resp` to fill (its status is the return).
    fn command(&self, s: &mut State, id: u32, body: &[u8], resp: &mut [u8]) -> u32 {
        match id {
            cmd::LOAD_TOC => self.load_toc(s, body, resp),
            cmd::SETUP_TMR if self.expect.direct_load && self.expect.boot_time_tmr => {
                self.setup_boot_tmr(s, body)
            }
            cmd::SETUP_TMR => self.setup_tmr(s, body),
            cmd::LOAD_IP_FW => self.load_ip_fw(s, body),
            cmd::AUTOLOAD_RLC if self.expect.direct_load => Self::refuse(
                s,
                status::ORDER,
                "AUTOLOAD_RLC on a PSP without RLC autoload (MP0 13.0.2, 13.0.6)",
            ),
            cmd::AUTOLOAD_RLC => self.autoload_rlc(s),
            cmd::SPATIAL_PART if self.expect.direct_load => self.spatial_partition(s, body),
            _ => Self::refuse(s, status::UNKNOWN_COMMAND, "unknown GPCOM command"),
        }
    }

    /// SRIOV_SPATIAL_PART on MP0 13.0.6 (the PSP of the only parts with
    /// XCC partitions): the model's parts run one partition (SPX, the
    /// mode `BIF_BX_PF0_PARTITION_COMPUTE_STATUS` reports), so a request
    /// for one partition is done and nothing changes; any other count is
    /// refused (the model does not partition XCCs).
    fn spatial_partition(&self, s: &mut State, body: &[u8]) -> u32 {
        if dword(body, 0) == 1 {
            return 0;
        }
        Self::refuse(
            s,
            status::PAYLOAD,
            "spatial partition into more than one partition (the model runs SPX only)",
        )
    }

    /// LOAD_TOC: the TOC checked against the bundle's; the response
    /// carries the TMR size.
    fn load_toc(&self, s: &mut State, body: &[u8], resp: &mut [u8]) -> u32 {
        let addr = qword(body, buf::TOC_ADDR_LO, buf::TOC_ADDR_HI);
        let Some(toc) = self.read_image(addr, dword(body, buf::TOC_SIZE)) else {
            return Self::refuse(s, status::DMA, "TOC not mapped");
        };
        if toc != self.expect.toc {
            return Self::refuse(s, status::PAYLOAD, "TOC differs from the bundle");
        }
        s.toc_loaded = true;
        let at = buf::RESP_TMR_SIZE;
        resp[at..at + 4].copy_from_slice(&self.expect.tmr_size.to_le_bytes());
        0
    }

    /// SETUP_TMR on a PSP that loads each image itself: the firmware's
    /// boot-time TMR, no driver-supplied one.
    fn setup_boot_tmr(&self, s: &mut State, body: &[u8]) -> u32 {
        if !s.pending.is_empty() {
            return Self::refuse(s, status::ORDER, "SETUP_TMR after GFX loads");
        }
        // What Linux sends for a boot-time TMR without autoload
        // (`psp_prep_tmr_cmd_buf()` with no `tmr_bo`). What sOS
        // does with a driver-supplied TMR here is not public; the
        // model refuses one (model rule).
        let addr = qword(body, buf::TMR_ADDR_LO, buf::TMR_ADDR_HI);
        let phys = qword(body, buf::TMR_SYSTEM_LO, buf::TMR_SYSTEM_HI);
        if addr != 0 || phys != 0 || dword(body, buf::TMR_SIZE) != 0 {
            return Self::refuse(
                s,
                status::TMR,
                "SETUP_TMR names a TMR where the firmware keeps its boot-time one",
            );
        }
        s.tmr_set = true;
        0
    }

    /// SETUP_TMR: the driver's TMR, after LOAD_TOC and at its answer's
    /// size, in VRAM at its physical address. A part whose bundle has no
    /// TOC (MP0 13.0.2) sends no LOAD_TOC: its TMR is `PSP_TMR_SIZE()`
    /// (`psp_tmr_init()`), the part's [`PspExpect::tmr_size`].
    fn setup_tmr(&self, s: &mut State, body: &[u8]) -> u32 {
        if !s.toc_loaded && !self.expect.toc.is_empty() {
            return Self::refuse(s, status::ORDER, "SETUP_TMR before LOAD_TOC");
        }
        if !s.pending.is_empty() {
            return Self::refuse(s, status::ORDER, "SETUP_TMR after GFX loads");
        }
        let addr = qword(body, buf::TMR_ADDR_LO, buf::TMR_ADDR_HI);
        let size = dword(body, buf::TMR_SIZE);
        // `PSP_TMR_ALIGNMENT` (1 MiB).
        if !addr.is_multiple_of(0x10_0000) {
            return Self::refuse(s, status::TMR, "TMR misaligned");
        }
        // Both public drivers send exactly what LOAD_TOC asked
        // for: Linux `amdgpu_bo_size()` of the TMR
        // `psp_tmr_init()` allocated at that size
        // (`psp_prep_tmr_cmd_buf()`), tinygrad `self.tmr_size`
        // (`_tmr_load_cmd`). What sOS does with another size is
        // not public; the model refuses it (model rule).
        if size != self.expect.tmr_size {
            return Self::refuse(s, status::TMR, "SETUP_TMR size is not LOAD_TOC's answer");
        }
        // The TMR is VRAM (`psp_tmr_init()` allocates it in the
        // VRAM domain on a dGPU) and `system_phy_addr` is its
        // physical address (`amdgpu_gmc_vram_pa()`: the VRAM offset plus
        // `vram_base_offset`, which on an XGMI hive member includes its
        // node's segment).
        let phys = qword(body, buf::TMR_SYSTEM_LO, buf::TMR_SYSTEM_HI);
        let base = self.mc.vram_pa_base();
        let off = match self.mc.translate(addr, Access::Read, "TMR") {
            Ok((Target::Vram(off), run))
                if off.checked_add(base) == Some(phys) && run >= u64::from(size) =>
            {
                off
            }
            Ok(_) => {
                return Self::refuse(s, status::TMR, "TMR not VRAM at its physical address");
            }
            Err(_) => return Self::refuse(s, status::DMA, "TMR not mapped"),
        };
        s.tmr_set = true;
        self.mark_tmr(off, size);
        s.tmr = Some((off, size));
        0
    }

    /// The canary sOS's firmware copies stand for in the TMR page at
    /// `offset` (*model convention*: what sOS keeps there is not public;
    /// the model writes one dword a page and checks it).
    fn canary(offset: u64) -> u32 {
        0x544d_5200 ^ (offset >> 12) as u32
    }

    fn mark_tmr(&self, offset: u64, size: u32) {
        for page in (0..u64::from(size)).step_by(4096) {
            if let Some(c) = self.mc.vram_u32(offset + page) {
                c.store(
                    Self::canary(offset + page),
                    core::sync::atomic::Ordering::Relaxed,
                );
            }
        }
    }

    /// The TMR SETUP_TMR gave sOS: VRAM offset and bytes.
    pub fn tmr(&self) -> Option<(u64, u32)> {
        self.state.lock().tmr
    }

    /// Whether the TMR sOS is using still holds what sOS put there. A
    /// driver must keep it reserved for as long as sOS runs
    /// (`psp_tmr_init()` allocates it and only `psp_hw_fini()` frees it;
    /// a partial re-init that skips the PSP leaves sOS running on it).
    /// `Err` names the first page something else wrote.
    pub fn tmr_intact(&self) -> Result<(), alloc::string::String> {
        let Some((offset, size)) = self.state.lock().tmr else {
            return Ok(());
        };
        for page in (0..u64::from(size)).step_by(4096) {
            if let Some(c) = self.mc.vram_u32(offset + page)
                && c.load(core::sync::atomic::Ordering::Relaxed) != Self::canary(offset + page)
            {
                return Err(alloc::format!(
                    "the live TMR at VRAM {offset:#x} ({size:#x} bytes) was overwritten at VRAM {:#x}: sOS keeps its firmware there while it runs",
                    offset + page
                ));
            }
        }
        Ok(())
    }

    /// LOAD_IP_FW: the SMU image, the RLC register list or a GFX image,
    /// each checked against the blob it must equal.
    fn load_ip_fw(&self, s: &mut State, body: &[u8]) -> u32 {
        let t = dword(body, buf::FW_TYPE);
        let addr = qword(body, buf::FW_ADDR_LO, buf::FW_ADDR_HI);
        let Some(img) = self.read_image(addr, dword(body, buf::FW_SIZE)) else {
            return Self::refuse(s, status::DMA, "ucode image not mapped");
        };
        if t == fw::SMU {
            if !s.toc_loaded && !self.expect.toc.is_empty() {
                return Self::refuse(s, status::ORDER, "SMU before LOAD_TOC");
            }
            let ok = self
                .expect
                .smu
                .as_ref()
                .is_some_and(|w| w.len() == img.len() && fnv1a(w) == fnv1a(&img));
            if !ok {
                return Self::refuse(s, status::PAYLOAD, "SMU image differs from the blob");
            }
            s.smu_loaded = true;
            return 0;
        }
        let tmr_ready =
            s.tmr_set || (self.expect.boot_time_tmr && s.toc_loaded && !self.expect.direct_load);
        if !tmr_ready {
            return Self::refuse(s, status::ORDER, "LOAD_IP_FW before SETUP_TMR");
        }
        if t == fw::REG_LIST {
            let ok = self
                .expect
                .reg_list
                .as_ref()
                .is_some_and(|w| w.len() == img.len() && fnv1a(w) == fnv1a(&img));
            if !ok {
                return Self::refuse(s, status::PAYLOAD, "RL differs from the bundle's");
            }
            s.pending.insert(t);
            return 0;
        }
        self.load_gfx(s, t, &img)
    }

    /// LOAD_IP_FW of GFX image type `t`.
    fn load_gfx(&self, s: &mut State, t: u32, img: &[u8]) -> u32 {
        // Any image of the part, in any order: AM loads a subset
        // in its own order (SDMA TH1 before TH0) and silicon took
        // it (`docs/am-boot.md` §1.4); see [`loaded`].
        let Some((_, want)) = self.expect.gfx.iter().find(|(w, _)| *w == t) else {
            return Self::refuse(
                s,
                status::PAYLOAD,
                "GFX type this part's firmware does not provide",
            );
        };
        if want.len() != img.len() || fnv1a(want) != fnv1a(img) {
            return Self::refuse(
                s,
                status::PAYLOAD,
                "GFX image differs from the blob section",
            );
        }
        s.pending.insert(t);
        if self.expect.direct_load {
            // No autoload: the PSP puts each image in place itself
            // (`psp_load_non_psp_fw()` sends no AUTOLOAD_RLC when
            // `autoload_supported` is false).
            self.loaded.autoload(s.pending.clone(), self.clock.now_ns());
        }
        0
    }

    /// AUTOLOAD_RLC: the RLC's code must be in the TMR.
    fn autoload_rlc(&self, s: &mut State) -> u32 {
        if !RLC_CODE.iter().all(|t| s.pending.contains(t)) {
            return Self::refuse(s, status::ORDER, "AUTOLOAD_RLC without the RLC's code");
        }
        // The autoload copies what is in the TMR now.
        let done = self.clock.now_ns() + s.timing.autoload_ns;
        self.loaded.autoload(s.pending.clone(), done);
        0
    }
}

/// The PSP model's own facts: its interface ([`iface::FACTS`]) and the
/// RLC's autoload bit.
pub const FACTS: &[Fact] = barebell_facts::fact_table!([
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK",
        BOOTLOAD_COMPLETE as u64
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK",
        BOOTLOAD_COMPLETE as u64
    ),
],);

impl RegisterBus for PspModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        if s.unplugged || !byte_offset.is_multiple_of(4) {
            return ALL_ONES;
        }
        self.settle(&mut s);
        let a = self.at;
        if byte_offset == a.c35 {
            if self.clock.now_ns() < s.bootloader_busy_until {
                return 0;
            }
            return s.c35;
        }
        if byte_offset == a.c81 {
            return if self.sos_alive(&s) { SOS_ALIVE } else { 0 };
        }
        if byte_offset == a.c64 {
            // The driver's own command (bit 31 clear) until sOS answers
            // it; bit 31 with the last status once sOS is ready.
            if s.c64_cmd.is_some() || s.c64_unanswered || !self.sos_ready(&s) {
                return s.c64;
            }
            return READY | (s.c64 & ctrl::STATUS_MASK);
        }
        if byte_offset == a.c67 {
            return s.wptr_dw;
        }
        if byte_offset == a.rlc || byte_offset == a.cp_stat {
            let done = self.loaded.complete();
            return if byte_offset == a.rlc {
                if done {
                    self.gc.map_or(0, |g| g.complete)
                } else {
                    0
                }
            } else if done {
                0
            } else {
                // Busy bits until the CP firmware runs.
                0x8000_0000
            };
        }
        s.other.get(&byte_offset).copied().unwrap_or(0)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        if s.unplugged || !byte_offset.is_multiple_of(4) {
            return;
        }
        self.settle(&mut s);
        let a = self.at;
        if byte_offset == a.c36 {
            s.c36 = value;
        } else if byte_offset == a.c35 {
            let st = self.bootloader_command(&mut s, value);
            s.c35 = READY | (st & ctrl::STATUS_MASK);
            s.bootloader_busy_until = self.clock.now_ns() + s.timing.bootloader_ns;
        } else if byte_offset == a.c64 {
            s.c64 = value;
            if s.c64_cmd.is_some() {
                Self::refuse(
                    &mut s,
                    status::BUSY,
                    "ring command while the last is unanswered",
                );
            } else if !self.sos_ready(&s) {
                // Nothing runs yet to answer it.
                s.c64_unanswered = true;
                Self::refuse(&mut s, status::ORDER, "ring command before sOS is ready");
            } else {
                let at = self.clock.now_ns() + s.timing.ring_cmd_ns;
                s.c64_cmd = Some((at, value));
            }
        } else if byte_offset == a.c67 {
            self.consume(&mut s, value);
        } else {
            s.other.insert(byte_offset, value);
        }
    }
}

pub mod firmware;
