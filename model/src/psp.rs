//! A model of the PSP (MP0) as the graphics driver sees it: the bootloader
//! mailbox (C2PMSG_35/36), the sign-of-life register (C2PMSG_81), the
//! GPCOM ring (C2PMSG_64/67/69/70/71) and the command set that loads the
//! graphics firmware, plus the two GC registers that report the RLC
//! autoload.
//!
//! It enforces what the public sources say the PSP expects
//! (`psp_v13_0.c`, `amdgpu_psp.c`, `psp_gfx_if.h`), and refuses the rest:
//! - bootloader components in `psp_hw_start()` order, each byte-for-byte
//!   the component of the real SOS bundle, read from `C2PMSG_36 << 20`
//!   (so a buffer that is not 1 MiB aligned is read from the wrong place
//!   and refused as a wrong payload);
//! - the ring only after sOS runs, with a sane size and memory it can
//!   reach;
//! - ring frames with a write pointer on a frame boundary inside the
//!   ring, a reachable command buffer and a reachable, aligned fence;
//! - a TMR in VRAM whose `system_phy_addr` is its VRAM physical address;
//! - LOAD_TOC with the real TOC, SETUP_TMR only after it and with a
//!   1 MiB aligned TMR of at least the size LOAD_TOC answered, SMU
//!   firmware after LOAD_TOC, every GFX LOAD_IP_FW only after SETUP_TMR,
//!   in any order (issue 15: Linux's and tinygrad's orders both boot
//!   silicon), each the exact section of the real blob (size and FNV-1a
//!   hash) of an image the part has, and AUTOLOAD_RLC only once every
//!   image but the [`AUTOLOAD_OPTIONAL`] ones is in.
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
//! Time: every register access costs [`crate::regfile::ACCESS_NS`]; a
//! bootloader command keeps C2PMSG_35 busy (bit 31 clear) for a few
//! reads, sOS shows its sign of life a few reads after SOS is loaded, and
//! the RLC reports BOOTLOAD_COMPLETE a few GC reads after AUTOLOAD_RLC.

use crate::SimClock;
use crate::gmc::Access;
use crate::mc::{Mc, Target};
use crate::regfile::ACCESS_NS;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::{ALL_ONES, RegisterBus};
use barebell::psp::{Component, GcRegs, PspRegs};
use barebell::regs::IpBases;
use core::sync::atomic::Ordering;
use spin::Mutex;

/// Status values the model reports (bits 15:0 of C2PMSG_35/64, or
/// `resp.status`). Model-defined except `UNKNOWN_COMMAND`.
pub mod status {
    /// `PSP_ERR_UNKNOWN_COMMAND` (`psp_gfx_if.h`).
    pub const UNKNOWN_COMMAND: u32 = 0x100;
    pub const BUSY: u32 = 0x01;
    pub const ORDER: u32 = 0x02;
    pub const PAYLOAD: u32 = 0x03;
    pub const DMA: u32 = 0x04;
    pub const RING: u32 = 0x05;
    pub const TMR: u32 = 0x06;
}

const READY: u32 = 0x8000_0000;
const BUSY_READS: u32 = 3;
const SOL_READS: u32 = 3;
const AUTOLOAD_READS: u32 = 4;
/// Simulated time the RLC autoload takes when nobody polls it (a
/// **model value**: the time is not public; Linux allows
/// `adev->usec_timeout`, `gfx_v11_0_wait_for_rlc_autoload_complete()`).
pub const AUTOLOAD_NS: u64 = 100 * ACCESS_NS;
/// The sign-of-life value sOS leaves in C2PMSG_81 (any non-zero value).
pub const SOS_ALIVE: u32 = 0x0000_0001;

/// FNV-1a, 64-bit: the model's fingerprint of an expected image.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// GPCOM command ids (`enum psp_gfx_cmd_id`), as the model knows them.
mod cmd {
    pub const SETUP_TMR: u32 = 0x05;
    pub const LOAD_IP_FW: u32 = 0x06;
    pub const LOAD_TOC: u32 = 0x20;
    pub const AUTOLOAD_RLC: u32 = 0x21;
}
/// `GFX_FW_TYPE_SMU`.
const FW_TYPE_SMU: u32 = 18;
/// `GFX_CTRL_CMD_ID_INIT_GPCOM_RING`.
const INIT_GPCOM_RING: u32 = 0x0002_0000;

/// What the model expects, taken from real blobs by the caller.
#[derive(Debug, Clone, Default)]
pub struct PspExpect {
    /// Bootloader components in the order they must arrive.
    pub components: Vec<(Component, Vec<u8>)>,
    pub toc: Vec<u8>,
    /// The TMR size LOAD_TOC answers with.
    pub tmr_size: u32,
    /// The SMU image, if the part loads one before SETUP_TMR.
    pub smu: Option<Vec<u8>>,
    /// GFX images `(fw_type, bytes)` in the order they must arrive;
    /// AUTOLOAD_RLC must follow the last.
    pub gfx: Vec<(u32, Vec<u8>)>,
    /// The firmware set the TMR up at boot (MP0 14.x): GFX loads need no
    /// SETUP_TMR, only LOAD_TOC.
    pub boot_time_tmr: bool,
}

/// Where the model's registers are.
#[derive(Debug, Clone, Copy)]
pub struct PspPlacement {
    pub regs: PspRegs,
    pub mp0_bases: IpBases,
    pub gc: GcRegs,
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
    busy_reads: u32,
    c36: u32,
    next_component: usize,
    sos_loaded: bool,
    sol_reads: u32,
    c64: u32,
    ring: Option<(u64, u32)>,
    rptr_dw: u32,
    wptr_dw: u32,
    toc_loaded: bool,
    tmr_set: bool,
    smu_loaded: bool,
    /// GFX images loaded so far (fw types), in arrival order.
    gfx_loaded: Vec<u32>,
    autoload_reads: Option<u32>,
    /// Simulated time AUTOLOAD_RLC arrived (issue 15).
    autoload_since: Option<u64>,
    unplugged: bool,
    refusals: Vec<Refusal>,
    commands: Vec<(u32, u32)>,
}

/// `psp_gfx_if.h` `GFX_FW_TYPE_*` the RLC autoload completes without
/// (issue 15): tinygrad's AM loads none of them on GC 11.0.0 (no PFP,
/// no ME, no MES, one MEC stack, no RLC restore lists: `AMFirmware`) and
/// has booted Navi31 boards; on GC 12 it loads PFP and ME with their P0
/// stacks, which the model then also does not demand (looser than the
/// evidence: nothing public says gfx12's autoload needs them). Every
/// other image of the part must be loaded before `AUTOLOAD_RLC`.
pub const AUTOLOAD_OPTIONAL: [u32; 17] = [
    20, // RLC_RESTORE_LIST_GPM_MEM
    21, // RLC_RESTORE_LIST_SRM_MEM
    33, // CP_MES
    34, // MES_STACK
    77, // RS64_MES_STACK
    79, // RS64_KIQ_STACK
    81, // CP_MES_KIQ
    82, // MES_KIQ_STACK
    87, // RS64_PFP
    88, // RS64_ME
    90, // RS64_PFP_P0_STACK
    91, // RS64_PFP_P1_STACK
    92, // RS64_ME_P0_STACK
    93, // RS64_ME_P1_STACK
    95, // RS64_MEC_P1_STACK
    96, // RS64_MEC_P2_STACK
    97, // RS64_MEC_P3_STACK
];

/// On MP0 14 (Navi48) also `GFX_FW_TYPE_SDMA_UCODE_TH0`: barebell does
/// not load SDMA 7's image yet, and whether the gfx12 autoload needs it
/// is not public (a **model leniency**, named so it is not forgotten;
/// Linux and tinygrad's AM both load it).
pub const AUTOLOAD_OPTIONAL_MP0_14: [u32; 1] = [71];

/// The `GFX_FW_TYPE_*` values above, checked against `psp_gfx_if.h`.
pub const FACTS: &[barebell_facts::Fact] = &{
    use barebell_facts::Fact;
    const H: &str = "psp_gfx_if.h";
    [
        Fact::constant(H, "GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM", 20),
        Fact::constant(H, "GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM", 21),
        Fact::constant(H, "GFX_FW_TYPE_CP_MES", 33),
        Fact::constant(H, "GFX_FW_TYPE_MES_STACK", 34),
        Fact::constant(H, "GFX_FW_TYPE_RS64_MES_STACK", 77),
        Fact::constant(H, "GFX_FW_TYPE_RS64_KIQ_STACK", 79),
        Fact::constant(H, "GFX_FW_TYPE_CP_MES_KIQ", 81),
        Fact::constant(H, "GFX_FW_TYPE_MES_KIQ_STACK", 82),
        Fact::constant(H, "GFX_FW_TYPE_RS64_PFP", 87),
        Fact::constant(H, "GFX_FW_TYPE_RS64_ME", 88),
        Fact::constant(H, "GFX_FW_TYPE_RS64_PFP_P0_STACK", 90),
        Fact::constant(H, "GFX_FW_TYPE_RS64_PFP_P1_STACK", 91),
        Fact::constant(H, "GFX_FW_TYPE_RS64_ME_P0_STACK", 92),
        Fact::constant(H, "GFX_FW_TYPE_RS64_ME_P1_STACK", 93),
        Fact::constant(H, "GFX_FW_TYPE_RS64_MEC_P1_STACK", 95),
        Fact::constant(H, "GFX_FW_TYPE_RS64_MEC_P2_STACK", 96),
        Fact::constant(H, "GFX_FW_TYPE_RS64_MEC_P3_STACK", 97),
        Fact::constant(H, "GFX_FW_TYPE_SDMA_UCODE_TH0", 71),
    ]
};

/// The PSP and the RLC autoload status, on the register bus.
#[derive(Debug)]
pub struct PspModel {
    clock: SimClock,
    at: At,
    expect: PspExpect,
    mc: Arc<Mc>,
    gc: GcRegs,
    /// Issue 15: the MP0 13.x bootloader (see `spl_stage_takes_kdb`).
    spl_takes_kdb: bool,
    state: Mutex<State>,
}

fn off(r: barebell::regs::Reg, b: &IpBases) -> usize {
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
            rlc: off(place.gc.rlc_bootload_status, &place.gc_bases),
            cp_stat: off(place.gc.cp_stat, &place.gc_bases),
        };
        PspModel {
            clock: clock.clone(),
            at,
            expect,
            mc,
            gc: place.gc,
            spl_takes_kdb: r.c2pmsg_35.name.starts_with("MP0_"),
            state: Mutex::new(State {
                c35: READY,
                ..State::default()
            }),
        }
    }

    /// The MC address space the model's DMA goes through.
    pub fn mc(&self) -> &Mc {
        &self.mc
    }

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

    pub fn sos_running(&self) -> bool {
        self.state.lock().sos_loaded
    }

    // --- issue 15 (tinygrad's AM on the model): what the SMU, SDMA and
    // RLC models ask of the PSP.

    /// Whether LOAD_IP_FW has put the SMU firmware in place.
    pub fn smu_loaded(&self) -> bool {
        self.state.lock().smu_loaded
    }

    /// Whether the RLC autoload has completed (its images are in place).
    pub fn autoload_complete(&self) -> bool {
        let mut s = self.state.lock();
        self.autoload_elapsed(&mut s);
        s.autoload_reads == Some(0)
    }

    /// Issue 15: the autoload also completes with time, not only with
    /// status polls: a driver that does not poll (tinygrad's AM's wait is
    /// vacuous, docs/am-boot.md §3) finds it done once
    /// [`AUTOLOAD_NS`] of simulated time has passed, as on silicon,
    /// where the RLC works whether or not anyone looks.
    fn autoload_elapsed(&self, s: &mut State) {
        if let (Some(n), Some(t0)) = (s.autoload_reads, s.autoload_since)
            && n > 0
            && barebell::time::Clock::now_ns(&self.clock) >= t0 + AUTOLOAD_NS
        {
            s.autoload_reads = Some(0);
        }
    }

    /// A mode-1 reset (the SMU's `Mode1Reset`): the PSP restarts from its
    /// bootloader, as after power-on; the logs are kept.
    pub fn mode1_reset(&self) {
        let mut s = self.state.lock();
        let refusals = core::mem::take(&mut s.refusals);
        let commands = core::mem::take(&mut s.commands);
        *s = State {
            c35: READY,
            refusals,
            commands,
            ..State::default()
        };
    }
    // --- end issue 15

    /// Issue 15: on MP0 13.x the SPL stage (`PSP_BL__LOAD_TOS_SPL_TABLE`)
    /// also takes the key database's bytes. Linux sends the bundle's SPL
    /// section (`psp_v13_0_bootloader_load_spl()`); tinygrad's AM sends
    /// the KDB section for MP0 below 14.0.0 (`AM_PSP.init_hw`, `spl_key`)
    /// and has booted Navi31 boards that way, so the 13.x bootloader
    /// accepts both. On 14.x AM sends the SPL section too and the model
    /// stays strict.
    fn spl_stage_takes_kdb(&self, component: Component, addr: u64) -> bool {
        if component != Component::Spl || !self.spl_takes_kdb {
            return false;
        }
        let Some((_, kdb)) = self
            .expect
            .components
            .iter()
            .find(|(c, _)| *c == Component::Kdb)
        else {
            return false;
        };
        let mut got = alloc::vec![0u8; kdb.len()];
        self.mc.read(addr, &mut got, "bootloader component").is_ok() && got == *kdb
    }

    fn refuse(s: &mut State, status: u32, why: &'static str) -> u32 {
        s.refusals.push(Refusal { status, why });
        status
    }

    fn bootloader_command(&self, s: &mut State, command: u32) -> u32 {
        if s.busy_reads > 0 {
            return Self::refuse(s, status::BUSY, "bootloader command while busy");
        }
        let Some(pos) = Component::ORDER.iter().position(|c| c.command() == command) else {
            return Self::refuse(s, status::UNKNOWN_COMMAND, "unknown bootloader command");
        };
        let component = Component::ORDER[pos];
        // Issue 15: the IPKEYMGR stage may be skipped. Linux 6.12 loads it
        // when the bundle has one (`psp_hw_start()`,
        // `psp_v14_0_bootloader_load_ipkeymgr_drv()`); tinygrad's AM has
        // no such stage (`AM_PSP.init_hw`) and boots Navi48 boards, so the
        // bootloader goes on to SOSDRV without it.
        if let (Some((Component::IpKeyMgrDrv, _)), Some((next, _))) = (
            self.expect.components.get(s.next_component),
            self.expect.components.get(s.next_component + 1),
        ) && *next == component
        {
            s.next_component += 1;
        }
        let Some((want, image)) = self.expect.components.get(s.next_component) else {
            return Self::refuse(s, status::ORDER, "component after sOS");
        };
        if *want != component {
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
        if got != *image && !self.spl_stage_takes_kdb(component, addr) {
            return Self::refuse(s, status::PAYLOAD, "component bytes differ from the bundle");
        }
        s.next_component += 1;
        if component == Component::Sos {
            s.sos_loaded = true;
            s.sol_reads = SOL_READS;
        }
        0
    }

    fn ring_command(&self, s: &mut State, v: u32) -> u32 {
        if v != INIT_GPCOM_RING {
            return Self::refuse(s, status::UNKNOWN_COMMAND, "ring control command");
        }
        if !s.sos_loaded || s.sol_reads > 0 {
            return Self::refuse(s, status::ORDER, "ring create before sOS runs");
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
            let mut f = [0u8; 64];
            if self.mc.read(at, &mut f, "ring frame").is_err() {
                Self::refuse(s, status::DMA, "ring frame unreadable");
                continue;
            }
            let w =
                |i: usize| u32::from_le_bytes([f[4 * i], f[4 * i + 1], f[4 * i + 2], f[4 * i + 3]]);
            let cmd_buf = u64::from(w(1)) << 32 | u64::from(w(0));
            let cmd_size = w(2);
            let fence = u64::from(w(4)) << 32 | u64::from(w(3));
            let fence_value = w(5);
            let frame_type = f[33];
            // Linux leaves cmd_buf_size at 0 (psp_ring_cmd_submit());
            // barebell-firmware-if fills in 1024. Accept both.
            if (cmd_size != 0 && cmd_size != 1024) || frame_type != 0 {
                Self::refuse(s, status::RING, "malformed ring frame");
                continue;
            }
            if !fence.is_multiple_of(4) || self.mc.probe(fence, 4, Access::Write, "fence").is_err()
            {
                Self::refuse(s, status::DMA, "fence not mapped or misaligned");
                continue;
            }
            let mut c = alloc::vec![0u8; 1024];
            if !cmd_buf.is_multiple_of(4)
                || self.mc.read(cmd_buf, &mut c, "command buffer").is_err()
            {
                Self::refuse(s, status::DMA, "command buffer not mapped");
                continue;
            }
            let cw =
                |i: usize| u32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]]);
            let cmd_id = cw(2);
            // union psp_gfx_commands starts at byte 28 (dword 7).
            let mut resp = [0u32; 24];
            let st = self.command(s, cmd_id, &|i| cw(7 + i), &mut resp);
            resp[0] = st;
            s.commands.push((cmd_id, st));
            // A response the PSP cannot write, or a fence it cannot
            // reach, ends the command without a fence (see the module
            // docs).
            let wrote = resp.iter().enumerate().all(|(i, v)| {
                self.mc
                    .write_u32(
                        cmd_buf + 864 + 4 * i as u64,
                        *v,
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

    fn read_image(&self, addr_lo: u32, addr_hi: u32, size: u32) -> Option<Vec<u8>> {
        let addr = u64::from(addr_hi) << 32 | u64::from(addr_lo);
        let mut v = alloc::vec![0u8; size as usize];
        self.mc.read(addr, &mut v, "image").ok().map(|_| v)
    }

    fn command(
        &self,
        s: &mut State,
        id: u32,
        body: &dyn Fn(usize) -> u32,
        resp: &mut [u32; 24],
    ) -> u32 {
        match id {
            cmd::LOAD_TOC => {
                let Some(toc) = self.read_image(body(0), body(1), body(2)) else {
                    return Self::refuse(s, status::DMA, "TOC not mapped");
                };
                if toc != self.expect.toc {
                    return Self::refuse(s, status::PAYLOAD, "TOC differs from the bundle");
                }
                s.toc_loaded = true;
                resp[4] = self.expect.tmr_size;
                0
            }
            cmd::SETUP_TMR => {
                if !s.toc_loaded {
                    return Self::refuse(s, status::ORDER, "SETUP_TMR before LOAD_TOC");
                }
                if !s.gfx_loaded.is_empty() {
                    return Self::refuse(s, status::ORDER, "SETUP_TMR after GFX loads");
                }
                let addr = u64::from(body(1)) << 32 | u64::from(body(0));
                if !addr.is_multiple_of(0x10_0000) || body(2) < self.expect.tmr_size {
                    return Self::refuse(s, status::TMR, "TMR misaligned or too small");
                }
                // The TMR is VRAM (`psp_tmr_init()` allocates it in the
                // VRAM domain on a dGPU) and `system_phy_addr` is its
                // physical address (`amdgpu_gmc_vram_pa()`).
                let phys = u64::from(body(5)) << 32 | u64::from(body(4));
                match self.mc.translate(addr, Access::Read, "TMR") {
                    Ok((Target::Vram(off), run)) if off == phys && run >= u64::from(body(2)) => {}
                    Ok(_) => {
                        return Self::refuse(
                            s,
                            status::TMR,
                            "TMR not VRAM at its physical address",
                        );
                    }
                    Err(_) => return Self::refuse(s, status::DMA, "TMR not mapped"),
                }
                s.tmr_set = true;
                0
            }
            cmd::LOAD_IP_FW => {
                let t = body(3);
                let Some(img) = self.read_image(body(0), body(1), body(2)) else {
                    return Self::refuse(s, status::DMA, "ucode image not mapped");
                };
                if t == FW_TYPE_SMU {
                    if !s.toc_loaded {
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
                let tmr_ready = s.tmr_set || (self.expect.boot_time_tmr && s.toc_loaded);
                if !tmr_ready {
                    return Self::refuse(s, status::ORDER, "LOAD_IP_FW before SETUP_TMR");
                }
                // Any order: Linux loads in `AMDGPU_UCODE_ID` order
                // (`psp_load_non_psp_fw()`), tinygrad's AM in its own
                // (`AMFirmware.descs`, e.g. SDMA TH1 before TH0), and
                // both boot silicon (issue 15).
                let Some((_, want)) = self.expect.gfx.iter().find(|(w, _)| *w == t) else {
                    return Self::refuse(s, status::ORDER, "GFX image this part does not load");
                };
                if want.len() != img.len() || fnv1a(want) != fnv1a(&img) {
                    return Self::refuse(
                        s,
                        status::PAYLOAD,
                        "GFX image differs from the blob section",
                    );
                }
                s.gfx_loaded.push(t);
                0
            }
            cmd::AUTOLOAD_RLC => {
                let missing = self.expect.gfx.iter().any(|(w, _)| {
                    !AUTOLOAD_OPTIONAL.contains(w)
                        && !(!self.spl_takes_kdb && AUTOLOAD_OPTIONAL_MP0_14.contains(w))
                        && !s.gfx_loaded.contains(w)
                });
                if missing || self.expect.gfx.is_empty() {
                    return Self::refuse(s, status::ORDER, "AUTOLOAD_RLC before every GFX image");
                }
                s.autoload_reads = Some(AUTOLOAD_READS);
                s.autoload_since = Some(barebell::time::Clock::now_ns(&self.clock));
                0
            }
            _ => Self::refuse(s, status::UNKNOWN_COMMAND, "unknown GPCOM command"),
        }
    }
}

impl RegisterBus for PspModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        if s.unplugged || !byte_offset.is_multiple_of(4) {
            return ALL_ONES;
        }
        let a = self.at;
        if byte_offset == a.c35 {
            if s.busy_reads > 0 {
                s.busy_reads -= 1;
                return 0;
            }
            return s.c35;
        }
        if byte_offset == a.c81 {
            if s.sos_loaded {
                if s.sol_reads > 0 {
                    s.sol_reads -= 1;
                    return 0;
                }
                return SOS_ALIVE;
            }
            return 0;
        }
        if byte_offset == a.c64 {
            // Bit 31 tells the driver sOS can take ring commands.
            return if s.sos_loaded && s.sol_reads == 0 {
                READY | (s.c64 & 0xFFFF)
            } else {
                0
            };
        }
        if byte_offset == a.c67 {
            return s.wptr_dw;
        }
        if byte_offset == a.rlc || byte_offset == a.cp_stat {
            self.autoload_elapsed(&mut s);
            let done = match s.autoload_reads {
                Some(0) => true,
                Some(n) => {
                    s.autoload_reads = Some(n - 1);
                    false
                }
                None => false,
            };
            return if byte_offset == a.rlc {
                if done { self.gc.bootload_complete } else { 0 }
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
        let a = self.at;
        if byte_offset == a.c36 {
            s.c36 = value;
        } else if byte_offset == a.c35 {
            let st = self.bootloader_command(&mut s, value);
            s.c35 = READY | (st & 0xFFFF);
            s.busy_reads = BUSY_READS;
        } else if byte_offset == a.c64 {
            let st = self.ring_command(&mut s, value);
            s.c64 = st;
        } else if byte_offset == a.c67 {
            self.consume(&mut s, value);
        } else {
            s.other.insert(byte_offset, value);
        }
    }
}

/// A ready-to-run PSP bring-up on the model with the real blobs: the
/// discovery table, the model primed with what it must see, and its
/// buffers placed as Linux places them, behind the runtime's own VMID0
/// page tables. Shared by the integration tests, `barebell bringup` and
/// the unikernel.
///
/// The path from an MC address to a byte is the runtime's code end to
/// end: [`barebell::mem::VramAllocator`] places the VMID0 tables and the
/// TMR in VRAM, [`barebell::mem::DmaArena`] hands out the host buffers at
/// bus addresses, [`barebell::gmc::pagetable::TableArena`] maps them into the GART
/// with the SYSTEM and SNOOPED bits, and [`barebell::gmc::hub::gart_enable`]
/// programs the MMHUB model (the hub discovery names) that the PSP's
/// [`crate::mc::Mc`] decodes through.
/// Where Linux puts the buffers (`amdgpu_psp.c`): `fw_pri` in GTT on bare
/// metal; ring, command and fence buffers in `VRAM | GTT` (TTM tries VRAM
/// first), which the rig puts in GTT, so that every GPCOM access walks
/// the GART; the TMR in VRAM at `PSP_TMR_ALIGNMENT`.
///
/// Only reading blobs from a directory needs `std`; the unikernel builds
/// the same rig from blobs handed to it in memory ([`rig::rig_from`]).
pub mod rig {
    use super::{PspExpect, PspModel, PspPlacement};
    use crate::SimClock;
    use crate::discovery::{self, NAVI31, NAVI48, PartDesc};
    use crate::error::ModelError;
    use crate::hub::HubModel;
    use crate::mc::{CID_MP0, Mc};
    use alloc::boxed::Box;
    use alloc::sync::Arc;
    use alloc::vec;
    use alloc::vec::Vec;
    use barebell::discovery::{Discovery, IpInfo, hw_id};
    use barebell::gmc::hub::{HubConfig, HubRegs};
    use barebell::gmc::pagetable::{Flags, Table, TableArena};
    use barebell::ip::Generation;
    use barebell::mem::{DmaArena, PAGE_ALIGN, VramAllocator};
    use barebell::psp::{
        self, Component, DmaBuf, FaultHub, GcRegs, Plan, PspBuffers, PspRegs, Tmr,
    };
    use barebell_bringup::FirmwareError;
    use barebell_firmware_if::psp_gfx::fw_type as t;
    use barebell_firmware_if::{CpEngine, Firmware, Kind, MesPipe, parse};
    use core::ptr::NonNull;
    #[cfg(feature = "std")]
    use std::path::Path;

    /// Where VRAM starts in the MC map (a model value; the VBIOS sets it
    /// on a card).
    pub const FB_START: u64 = 0x0080_0000_0000;
    /// VMID0's range: 512 MiB (`gmc_v11_0_mc_init()`'s default GART size)
    /// at MC 0, where `amdgpu_gmc_gart_location()`'s best fit puts it
    /// when the space below VRAM fits it and is the smaller side.
    pub const GART_START: u64 = 0;
    pub const GART_BYTES: u64 = 512 << 20;
    /// Where the model's IOMMU puts the rig's host buffers on the bus (a
    /// model value; inside the VRAM size, so a PTE that forgets SYSTEM
    /// lands in VRAM rather than off the end).
    pub const GTT_BUS: u64 = 0x1_0000_0000;
    /// GART addresses of the buffers (a model choice: 2 MiB aligned for
    /// `fw_pri`, so its PTEs can carry a 2 MiB fragment).
    pub const FW_PRI_VA: u64 = 0x20_0000;
    pub const RING_VA: u64 = 0x40_0000;
    pub const CMD_VA: u64 = 0x40_1000;
    pub const FENCE_VA: u64 = 0x40_2000;
    pub const FW_PRI_BYTES: u64 = 2 << 20;
    /// VMID0 tables the rig gives the runtime's arena.
    pub const GART_TABLES: usize = 8;

    /// How the rig maps one GTT buffer into VMID0.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum Mapping {
        /// 4 KiB PTEs with SYSTEM and SNOOPED, fragments as the runtime
        /// picks them.
        #[default]
        Gtt,
        /// No PTE at all.
        Missing,
        /// The bus address in a PTE without SYSTEM (so it names VRAM).
        NoSystemBit,
        /// 2 MiB pages (PDB0 entries with `PDE_PTE`) where aligned.
        LargePage,
    }

    /// The mapping of each GTT buffer.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Layout {
        pub fw_pri: Mapping,
        pub ring: Mapping,
        pub cmd: Mapping,
        pub fence: Mapping,
    }

    /// One GTT buffer: its GART address, bus address, size and host
    /// memory (for tests that plant bytes the runtime would not).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct GttBuf {
        pub va: u64,
        pub bus: u64,
        pub len: u64,
        pub host: NonNull<u8>,
    }

    /// The four GTT buffers, as placed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Gtt {
        pub fw_pri: GttBuf,
        pub ring: GttBuf,
        pub cmd: GttBuf,
        pub fence: GttBuf,
    }

    /// The flags of a GTT mapping (`AMDGPU_PTE_SYSTEM | AMDGPU_PTE_SNOOPED`
    /// plus read/write, as `amdgpu_ttm_tt_pte_flags()` gives cached GTT);
    /// `system: false` for the deliberately broken variant.
    pub fn gtt_flags(system: bool) -> Flags {
        Flags {
            readable: true,
            writeable: true,
            executable: false,
            system,
            snooped: system,
        }
    }

    /// `psp_hw_start()`'s component order, by SOS-bundle section name.
    /// IPKEYMGR_DRV is loaded by MP0 14.x only (`psp_v14_0.c`); the 13.0.0
    /// bundle has none, so one list serves both parts.
    pub const BOOT_ORDER: [(&str, Component); 9] = [
        ("kdb", Component::Kdb),
        ("spl", Component::Spl),
        ("sys_drv", Component::SysDrv),
        ("soc_drv", Component::SocDrv),
        ("intf_drv", Component::IntfDrv),
        ("dbg_drv", Component::DbgDrv),
        ("ras_drv", Component::RasDrv),
        ("ipkeymgr_drv", Component::IpKeyMgrDrv),
        ("sos", Component::Sos),
    ];

    /// The TMR size the model answers LOAD_TOC with (the real PSP
    /// computes it from the TOC; this value is the model's).
    pub const MODEL_TMR: u32 = 0x40_0000;

    /// One part's firmware set: `(fw_type, kind, file, section)` in
    /// `AMDGPU_UCODE_ID` order, written out by hand from `amdgpu_ucode.h`
    /// and `psp_get_fw_type()` so that it checks the runtime's own table.
    #[derive(Debug, Clone)]
    pub struct PartFirmware {
        pub desc: PartDesc,
        /// Board VRAM size (RX 7900 XTX / RX 9070 XT).
        pub vram_mib: u32,
        pub sos: &'static str,
        pub smu: (&'static str, &'static str),
        pub gfx: Vec<(u32, Kind, &'static str, &'static str)>,
    }

    pub fn navi31() -> PartFirmware {
        let pfp = Kind::Cp(CpEngine::Pfp);
        let me = Kind::Cp(CpEngine::Me);
        let mec = Kind::Cp(CpEngine::Mec);
        let mes = Kind::Mes(MesPipe::Scheduler);
        let kiq = Kind::Mes(MesPipe::Kiq);
        let rlc = "gc_11_0_0_rlc.bin";
        PartFirmware {
            desc: NAVI31,
            vram_mib: 24 * 1024,
            sos: "psp_13_0_0_sos.bin",
            smu: ("smu_13_0_0.bin", "ucode"),
            gfx: vec![
                (t::SDMA_UCODE_TH0, Kind::Sdma, "sdma_6_0_0.bin", "ctx"),
                (t::SDMA_UCODE_TH1, Kind::Sdma, "sdma_6_0_0.bin", "ctl"),
                (t::RS64_PFP, pfp, "gc_11_0_0_pfp.bin", "ucode"),
                (t::RS64_ME, me, "gc_11_0_0_me.bin", "ucode"),
                (t::RS64_MEC, mec, "gc_11_0_0_mec.bin", "ucode"),
                (t::RS64_PFP_P0_STACK, pfp, "gc_11_0_0_pfp.bin", "data"),
                (t::RS64_PFP_P1_STACK, pfp, "gc_11_0_0_pfp.bin", "data"),
                (t::RS64_ME_P0_STACK, me, "gc_11_0_0_me.bin", "data"),
                (t::RS64_ME_P1_STACK, me, "gc_11_0_0_me.bin", "data"),
                (t::RS64_MEC_P0_STACK, mec, "gc_11_0_0_mec.bin", "data"),
                (t::RS64_MEC_P1_STACK, mec, "gc_11_0_0_mec.bin", "data"),
                (t::RS64_MEC_P2_STACK, mec, "gc_11_0_0_mec.bin", "data"),
                (t::RS64_MEC_P3_STACK, mec, "gc_11_0_0_mec.bin", "data"),
                (t::CP_MES, mes, "gc_11_0_0_mes_2.bin", "ucode"),
                (t::MES_STACK, mes, "gc_11_0_0_mes_2.bin", "data"),
                (t::CP_MES_KIQ, kiq, "gc_11_0_0_mes1.bin", "ucode"),
                (t::MES_KIQ_STACK, kiq, "gc_11_0_0_mes1.bin", "data"),
                (t::IMU_I, Kind::Imu, "gc_11_0_0_imu.bin", "iram"),
                (t::IMU_D, Kind::Imu, "gc_11_0_0_imu.bin", "dram"),
                (
                    t::RLC_RESTORE_LIST_GPM_MEM,
                    Kind::Rlc,
                    rlc,
                    "save_restore_list_gpm",
                ),
                (
                    t::RLC_RESTORE_LIST_SRM_MEM,
                    Kind::Rlc,
                    rlc,
                    "save_restore_list_srm",
                ),
                (t::RLC_IRAM, Kind::Rlc, rlc, "rlc_iram"),
                (t::RLC_DRAM_BOOT, Kind::Rlc, rlc, "rlc_dram"),
                (t::RLC_P, Kind::Rlc, rlc, "rlcp"),
                (t::RLC_V, Kind::Rlc, rlc, "rlcv"),
                (t::RLC_G, Kind::Rlc, rlc, "ucode"),
            ],
        }
    }

    /// The gfx12 set. SDMA 7 ships one `ucode` section that Linux loads
    /// as `SDMA_RS64` (type SDMA_UCODE_TH0), which barebell does not map
    /// yet: the model accepts it and does not demand it; the unified MES blob serves the scheduler pipe only (which
    /// pipes Linux loads it for on 12.0.1 is unconfirmed here).
    pub fn navi48() -> PartFirmware {
        let pfp = Kind::Cp(CpEngine::Pfp);
        let me = Kind::Cp(CpEngine::Me);
        let mec = Kind::Cp(CpEngine::Mec);
        let mes = Kind::Mes(MesPipe::Unified);
        let rlc = "gc_12_0_1_rlc.bin";
        PartFirmware {
            desc: NAVI48,
            vram_mib: 16 * 1024,
            sos: "psp_14_0_3_sos.bin",
            smu: ("smu_14_0_3.bin", "ucode"),
            gfx: vec![
                // Issue 15: SDMA 7's one image, loaded as SDMA_UCODE_TH0
                // by Linux (`psp_get_fw_type()`: AMDGPU_UCODE_ID_SDMA_RS64)
                // and tinygrad's AM (`AMFirmware`); not demanded before
                // AUTOLOAD_RLC on MP0 14 (see `AUTOLOAD_OPTIONAL_MP0_14`).
                (t::SDMA_UCODE_TH0, Kind::Sdma, "sdma_7_0_1.bin", "ucode"),
                (t::RS64_PFP, pfp, "gc_12_0_1_pfp.bin", "ucode"),
                (t::RS64_ME, me, "gc_12_0_1_me.bin", "ucode"),
                (t::RS64_MEC, mec, "gc_12_0_1_mec.bin", "ucode"),
                (t::RS64_PFP_P0_STACK, pfp, "gc_12_0_1_pfp.bin", "data"),
                (t::RS64_PFP_P1_STACK, pfp, "gc_12_0_1_pfp.bin", "data"),
                (t::RS64_ME_P0_STACK, me, "gc_12_0_1_me.bin", "data"),
                (t::RS64_ME_P1_STACK, me, "gc_12_0_1_me.bin", "data"),
                (t::RS64_MEC_P0_STACK, mec, "gc_12_0_1_mec.bin", "data"),
                (t::RS64_MEC_P1_STACK, mec, "gc_12_0_1_mec.bin", "data"),
                (t::RS64_MEC_P2_STACK, mec, "gc_12_0_1_mec.bin", "data"),
                (t::RS64_MEC_P3_STACK, mec, "gc_12_0_1_mec.bin", "data"),
                (t::CP_MES, mes, "gc_12_0_1_uni_mes.bin", "ucode"),
                (t::MES_STACK, mes, "gc_12_0_1_uni_mes.bin", "data"),
                (t::IMU_I, Kind::Imu, "gc_12_0_1_imu.bin", "iram"),
                (t::IMU_D, Kind::Imu, "gc_12_0_1_imu.bin", "dram"),
                (
                    t::RLC_RESTORE_LIST_GPM_MEM,
                    Kind::Rlc,
                    rlc,
                    "save_restore_list_gpm",
                ),
                (
                    t::RLC_RESTORE_LIST_SRM_MEM,
                    Kind::Rlc,
                    rlc,
                    "save_restore_list_srm",
                ),
                (t::RLC_IRAM, Kind::Rlc, rlc, "rlc_iram"),
                (t::RLC_DRAM_BOOT, Kind::Rlc, rlc, "rlc_dram"),
                (t::RLC_G, Kind::Rlc, rlc, "ucode"),
            ],
        }
    }

    /// Everything a run needs; the model and memory are leaked so the
    /// runtime can borrow them for `'static`.
    #[derive(Debug)]
    pub struct Rig {
        pub clock: &'static SimClock,
        pub model: &'static PspModel,
        pub table: Vec<u8>,
        pub mp0: IpInfo,
        pub gc: IpInfo,
        pub regs: PspRegs,
        pub gc_regs: GcRegs,
        pub plan: Plan,
        pub sos: Firmware<'static>,
        pub smu: &'static [u8],
        /// Parsed GFX blobs, one per file.
        pub blobs: Vec<Firmware<'static>>,
        pub tmr: Tmr,
        pub bufs: Option<PspBuffers>,
        /// The MMHUB model the PSP's DMA goes through, programmed by the
        /// runtime.
        pub hub: &'static HubModel,
        /// Its register table (MMHUB 3.0.0 or 4.1.0, from discovery).
        pub hub_regs: &'static HubRegs,
        pub mmhub: IpInfo,
        /// The PSP's view of the MC address space.
        pub mc: &'static Mc,
        /// The same MC, for another PSP model over it.
        pub mc_arc: Arc<Mc>,
        /// The runtime's VMID0 tables (in modelled VRAM): tests remap
        /// through it. Unused after [`behind`].
        pub gart: TableArena<'static>,
        pub gtt: Gtt,
        /// VRAM as the runtime's allocator left it. Unused after
        /// [`behind`].
        pub vram: VramAllocator,
    }

    /// A blob by file name, as `'static` bytes.
    pub trait Blobs {
        fn get(&mut self, name: &str) -> Result<&'static [u8], FirmwareError>;
    }

    /// Blobs read (and leaked) from a directory.
    #[cfg(feature = "std")]
    struct Dir(barebell_bringup::FirmwareDir);

    #[cfg(feature = "std")]
    impl Blobs for Dir {
        fn get(&mut self, name: &str) -> Result<&'static [u8], FirmwareError> {
            use barebell_bringup::FirmwareSource;
            let bytes = self.0.load(name)?;
            Ok(Box::leak(bytes.into_boxed_slice()))
        }
    }

    fn load(
        blobs: &mut dyn Blobs,
        kind: Kind,
        name: &str,
    ) -> Result<Firmware<'static>, FirmwareError> {
        let bytes = blobs.get(name)?;
        parse(kind, bytes).map_err(|error| FirmwareError::Malformed {
            name: name.into(),
            error,
        })
    }

    fn section(
        f: &Firmware<'static>,
        file: &str,
        what: &'static str,
        name: &str,
    ) -> Result<&'static [u8], FirmwareError> {
        let s = f.section(name).ok_or_else(|| FirmwareError::Lacks {
            name: file.into(),
            what,
        })?;
        Ok(f.bytes(s))
    }

    /// Zeroed, leaked host memory.
    fn leaked(len: usize) -> &'static mut [u8] {
        Box::leak(vec![0u8; len].into_boxed_slice())
    }

    /// Builds a rig for `part` from the blobs in `dir`; `tweak` may alter
    /// what the model expects before it is built.
    #[cfg(feature = "std")]
    pub fn rig(
        dir: &Path,
        part: &PartFirmware,
        tweak: impl FnOnce(&mut PspExpect),
    ) -> Result<Rig, ModelError> {
        rig_from(
            &mut Dir(barebell_bringup::FirmwareDir(dir.into())),
            part,
            tweak,
        )
    }

    /// As [`rig`], with each GTT buffer mapped as `layout` says.
    #[cfg(feature = "std")]
    pub fn rig_layout(
        dir: &Path,
        part: &PartFirmware,
        layout: Layout,
        tweak: impl FnOnce(&mut PspExpect),
    ) -> Result<Rig, ModelError> {
        rig_from_layout(
            &mut Dir(barebell_bringup::FirmwareDir(dir.into())),
            part,
            layout,
            tweak,
        )
    }

    /// As [`rig`], with the blobs from `blobs`.
    pub fn rig_from(
        source: &mut dyn Blobs,
        part: &PartFirmware,
        tweak: impl FnOnce(&mut PspExpect),
    ) -> Result<Rig, ModelError> {
        rig_from_layout(source, part, Layout::default(), tweak)
    }

    /// As [`rig_from`], with each GTT buffer mapped as `layout` says.
    pub fn rig_from_layout(
        source: &mut dyn Blobs,
        part: &PartFirmware,
        layout: Layout,
        tweak: impl FnOnce(&mut PspExpect),
    ) -> Result<Rig, ModelError> {
        let clock: &'static SimClock = Box::leak(Box::new(SimClock::new()));
        let (table, _) = discovery::build(&part.desc);
        let d = Discovery::parse(&table).map_err(ModelError::Discovery)?;
        let ip = |id: u16, ip: &'static str| d.ip(id, 0).ok_or(ModelError::MissingIp { ip });
        let mp0 = ip(hw_id::MP0, "MP0")?;
        let gc = ip(hw_id::GC, "GC")?;
        let unsupported =
            |what: &'static str, version: (u8, u8, u8)| ModelError::Unsupported { what, version };
        let v = mp0.version.triple();
        let regs = PspRegs::for_version(v).ok_or(unsupported("PSP registers", v))?;
        let plan = Plan::for_version(v).ok_or(unsupported("PSP plan", v))?;
        let g = gc.version.triple();
        let gc_regs = GcRegs::for_version(g).ok_or(unsupported("RLC registers", g))?;

        let sos = load(source, Kind::PspSos, part.sos)?;
        let smu_fw = load(source, Kind::Smc, part.smu.0)?;
        let smu = section(&smu_fw, part.smu.0, "SMU ucode section", part.smu.1)?;
        let mut blobs: Vec<(&str, Firmware<'static>)> = Vec::new();
        let mut gfx = Vec::new();
        for (ty, kind, file, sec) in &part.gfx {
            if !blobs.iter().any(|(f, _)| f == file) {
                blobs.push((file, load(source, *kind, file)?));
            }
            // Loaded just above if it was not already.
            if let Some((_, f)) = blobs.iter().find(|(f, _)| f == file) {
                gfx.push((
                    *ty,
                    section(f, file, "section the PSP model expects", sec)?.to_vec(),
                ));
            }
        }
        let mut expect = PspExpect {
            components: BOOT_ORDER
                .iter()
                .filter_map(|(name, c)| sos.section(name).map(|s| (*c, sos.bytes(s).to_vec())))
                .collect(),
            toc: section(&sos, part.sos, "toc section", "toc")?.to_vec(),
            tmr_size: MODEL_TMR,
            smu: Some(smu.to_vec()),
            gfx,
            boot_time_tmr: !plan.setup_tmr,
        };
        tweak(&mut expect);
        let place = PspPlacement {
            regs,
            mp0_bases: mp0.bases,
            gc: gc_regs,
            gc_bases: gc.bases,
        };
        let mmhub = ip(hw_id::MMHUB, "MMHUB")?;
        let mv = mmhub.version.triple();
        let hub_regs = barebell::gmc::hub::hub_for(hw_id::MMHUB, mv)
            .ok_or(unsupported("MMHUB hub table", mv))?;
        let (hub, mc, gart, vram, gtt, bufs, tmr) = memory(clock, &mmhub, hub_regs, part, layout)?;
        let mc = Arc::new(mc);
        let model = PspModel::new(clock, place, expect, mc.clone());
        Ok(Rig {
            clock,
            model: Box::leak(Box::new(model)),
            table,
            mp0,
            gc,
            regs,
            gc_regs,
            plan,
            sos,
            smu,
            blobs: blobs.into_iter().map(|(_, f)| f).collect(),
            tmr,
            bufs: Some(bufs),
            hub: leak_arc(hub),
            hub_regs,
            mmhub,
            mc: leak_arc(mc.clone()),
            mc_arc: mc,
            gart,
            gtt,
            vram,
        })
    }

    /// The rig is a test fixture whose parts live for the process: a
    /// shared model leaked as a `'static` reference.
    fn leak_arc<T>(a: Arc<T>) -> &'static T {
        let r: &'static Arc<T> = Box::leak(Box::new(a));
        r
    }

    impl Rig {
        /// The hub the runtime reads a PSP timeout's VM fault from.
        pub fn fault_hub(&self) -> FaultHub<'static> {
            FaultHub {
                bus: self.hub,
                bases: self.hub.bases(),
                regs: self.hub_regs,
            }
        }
    }

    type Memory = (
        Arc<HubModel>,
        Mc,
        TableArena<'static>,
        VramAllocator,
        Gtt,
        PspBuffers,
        Tmr,
    );

    /// VRAM, GTT, the VMID0 tables and the hub, built by the runtime's
    /// code: the memory behind every PSP access.
    fn memory(
        clock: &'static SimClock,
        mmhub: &IpInfo,
        hub_regs: &'static HubRegs,
        part: &PartFirmware,
        layout: Layout,
    ) -> Result<Memory, ModelError> {
        let e = |what: &'static str| move |error| ModelError::Memory { what, error };
        let size = u64::from(part.vram_mib) << 20;
        let mut vram = VramAllocator::with_boot_region(size, FB_START).map_err(e("VRAM"))?;
        let hub = Arc::new(HubModel::for_hub(clock, mmhub.bases, hub_regs));
        let mut mc = Mc::new(hub.clone(), CID_MP0);

        // The VMID0 tables in VRAM, backed by host memory the model reads
        // as that VRAM. PDEs and the context base hold VRAM physical
        // addresses (`gmc_v11_0_get_vm_pde()` applies
        // `amdgpu_gmc_vram_mc2pa()`), which here are VRAM offsets.
        let table_bytes = GART_TABLES as u64 * 4096;
        let tables_at = vram
            .alloc(table_bytes, PAGE_ALIGN)
            .map_err(e("GART tables"))?;
        let tables: &'static mut [Table] =
            Box::leak(vec![Table::EMPTY; GART_TABLES].into_boxed_slice());
        // SAFETY: leaked, so valid for the model's lifetime; the host
        // writes the tables only before the model walks them, or (tests)
        // between commands.
        unsafe { mc.back_vram(tables_at.offset, tables.as_mut_ptr().cast(), table_bytes) };
        let format = match hub_regs.generation {
            barebell::ip::Generation::Gfx11 => Generation::Gfx11,
            barebell::ip::Generation::Gfx12 => Generation::Gfx12,
        };
        let mut gart = TableArena::new(tables, tables_at.offset, format);
        let (gtt, bufs, tmr, dummy_bus) = place_buffers(&mut mc, &mut gart, &mut vram, layout)?;
        // The page the system aperture answers unmapped accesses with.
        let scratch = vram.alloc(4096, PAGE_ALIGN).map_err(e("scratch page"))?;

        // MMHUB init by the runtime, as `gmc_v11_0_gart_enable()` /
        // `gmc_v12_0_gart_enable()` do it (`mmhub_v3_0_gart_enable()`,
        // `mmhub_v4_1_0_gart_enable()`).
        let cfg = HubConfig {
            pt_base: gart.root(),
            start: GART_START,
            end: GART_START + GART_BYTES - 1,
            fb_start: FB_START,
            fb_end: FB_START + size - 1,
            // Empty (start > end): barebell never enables AGP.
            agp_start: u64::MAX >> 16,
            agp_end: 0,
            default_page: scratch.offset,
            dummy_page: dummy_bus,
        };
        barebell::gmc::hub::gart_enable(&*hub, &mmhub.bases, hub_regs, &cfg).map_err(|error| {
            ModelError::Hub {
                hub: hub_regs.name,
                error,
            }
        })?;
        // Then VMID0's TLB flush on engine 17, as both functions do right
        // after (no HDP flush: the host wrote the tables directly).
        barebell::gmc::hub::invalidate(
            &*hub,
            clock,
            &mmhub.bases,
            hub_regs,
            barebell::gmc::hub::GART_ENGINE,
            0,
            0,
        )
        .map_err(|error| ModelError::Invalidate {
            hub: hub_regs.name,
            error,
        })?;
        Ok((hub, mc, gart, vram, gtt, bufs, tmr))
    }

    /// The PSP's buffers: `fw_pri`, ring, command and fence in GTT (host
    /// memory on the bus through `mc`'s IOMMU, mapped into `gart` as
    /// `layout` says), the TMR in VRAM from `vram`. Also returns the bus
    /// address of a dummy page (`adev->dummy_page_addr`).
    fn place_buffers(
        mc: &mut Mc,
        gart: &mut TableArena<'static>,
        vram: &mut VramAllocator,
        layout: Layout,
    ) -> Result<(Gtt, PspBuffers, Tmr, u64), ModelError> {
        let e = |what: &'static str| move |error| ModelError::Memory { what, error };
        // The TMR: VRAM, 1 MiB aligned (`PSP_TMR_ALIGNMENT`); the PSP
        // never hands its bytes back, so the model does not back it.
        let tmr_at = vram
            .alloc(u64::from(MODEL_TMR), psp::TMR_ALIGN)
            .map_err(e("TMR"))?;

        // GTT: host memory on the bus at GTT_BUS through the model's IOMMU.
        let host = leaked(4 << 20);
        let mut arena = DmaArena::new(host, GTT_BUS).map_err(e("GTT"))?;
        let mut place = |va: u64, len: u64, align: u64, map: Mapping| {
            let mut chunk = arena
                .alloc(len as usize, align)
                .map_err(e("a GTT buffer"))?;
            let bus = chunk.bus_addr();
            let p = NonNull::from(chunk.bytes()).cast::<u8>();
            // SAFETY: leaked with the arena's memory.
            unsafe { mc.map_bus(bus, p.as_ptr(), len) };
            let mapped = match map {
                Mapping::Gtt => gart.map(va, bus, len, gtt_flags(true), false),
                Mapping::Missing => Ok(()),
                Mapping::NoSystemBit => gart.map(va, bus, len, gtt_flags(false), false),
                Mapping::LargePage => gart.map(va, bus, len, gtt_flags(true), true),
            };
            mapped.map_err(|error| ModelError::PageTable { va, error })?;
            // SAFETY: the chunk is leaked and exclusive to this DmaBuf on
            // the host; the device sees it at `va` through the GART.
            let buf = unsafe { DmaBuf::new(p, len as usize, va) };
            Ok::<_, ModelError>((
                GttBuf {
                    va,
                    bus,
                    len,
                    host: p,
                },
                buf,
            ))
        };
        let two_mib = 2 << 20;
        let (fw_g, fw_b) = place(FW_PRI_VA, FW_PRI_BYTES, two_mib, layout.fw_pri)?;
        let ring_len = psp::RING_BYTES as u64;
        let (ring_g, ring_b) = place(RING_VA, ring_len, PAGE_ALIGN, layout.ring)?;
        let (cmd_g, cmd_b) = place(CMD_VA, 4096, PAGE_ALIGN, layout.cmd)?;
        let (fence_g, fence_b) = place(FENCE_VA, 4096, PAGE_ALIGN, layout.fence)?;
        // `adev->dummy_page_addr`: one more host page on the bus.
        let mut dummy = arena.alloc(4096, PAGE_ALIGN).map_err(e("dummy page"))?;
        let dummy_bus = dummy.bus_addr();
        // SAFETY: leaked with the arena's memory.
        unsafe { mc.map_bus(dummy_bus, dummy.as_mut_ptr(), 4096) };
        let gtt = Gtt {
            fw_pri: fw_g,
            ring: ring_g,
            cmd: cmd_g,
            fence: fence_g,
        };
        let bufs = PspBuffers {
            fw_pri: fw_b,
            ring: ring_b,
            cmd: cmd_b,
            fence: fence_b,
        };
        let tmr = Tmr {
            mc_addr: tmr_at.mc,
            capacity: MODEL_TMR,
            phys_addr: tmr_at.offset,
        };
        Ok((gtt, bufs, tmr, dummy_bus))
    }

    /// VMID0 tables as a hub model reaches them: the address PDEs and the
    /// context base use for them, and the host memory behind it.
    #[derive(Debug, Clone, Copy)]
    pub struct TableMemory {
        pub device: u64,
        pub host: NonNull<u8>,
        pub len: u64,
    }

    /// Moves the rig's PSP behind a VMID0 someone else built: `hub` (an
    /// MMHUB model the `gmc` bring-up step initialised, walking `tables`),
    /// with the GTT buffers mapped into that step's `gart` and the TMR
    /// taken from its `vram`. The PSP model is rebuilt (same
    /// expectations) over a new [`Mc`]; the rig's own hub, tables
    /// ([`Rig::gart`]) and VRAM allocator are left unused. The hub model
    /// caches no translations, so the new PTEs need no invalidation here
    /// (on hardware they would: unconfirmed whether Linux flushes MMHUB
    /// for PSP buffers mapped after `gart_enable`).
    ///
    /// # Safety
    /// `tables.host` must point to `tables.len` bytes that stay valid
    /// while the model lives (as [`Dma::map`](crate::dma::Dma::map)).
    pub unsafe fn behind(
        r: &mut Rig,
        hub: Arc<HubModel>,
        tables: TableMemory,
        gart: &mut TableArena<'static>,
        vram: &mut VramAllocator,
        layout: Layout,
    ) -> Result<(), ModelError> {
        let mut mc = Mc::new(hub.clone(), CID_MP0);
        // SAFETY: the caller's contract.
        unsafe { mc.back_vram(tables.device, tables.host.as_ptr(), tables.len) };
        let (gtt, bufs, tmr, _) = place_buffers(&mut mc, gart, vram, layout)?;
        let mc = Arc::new(mc);
        let place = PspPlacement {
            regs: r.regs,
            mp0_bases: r.mp0.bases,
            gc: r.gc_regs,
            gc_bases: r.gc.bases,
        };
        let expect = r.model.expect().clone();
        r.model = Box::leak(Box::new(PspModel::new(r.clock, place, expect, mc.clone())));
        r.mc = leak_arc(mc.clone());
        r.mc_arc = mc;
        r.hub_regs = hub.hub();
        r.hub = leak_arc(hub);
        r.gtt = gtt;
        r.bufs = Some(bufs);
        r.tmr = tmr;
        Ok(())
    }
}
