//! The MEC: its pipes, its hardware queue slots (HQDs) and the GC
//! registers around them.
//!
//! Pipes (`gfx_v11_0_config_gfx_rs64()`, `gfx_v11_0_cp_compute_enable()`,
//! their gfx12 twins; tinygrad's `_config_mec()` / `_enable_mec()`): the
//! MEC comes out of reset halted (`regCP_MEC_RS64_CNTL_DEFAULT` =
//! `MEC_HALT`, `gc_11_0_0_default.h`). A pipe runs its firmware once
//! - its `CP_MEC_RS64_PRGRM_CNTR_START(_HI)` (banked per pipe by
//!   `GRBM_GFX_CNTL` ME 1) was written and then taken by a
//!   `MEC_PIPEn_RESET` pulse: both drivers write the start address and
//!   then pulse reset, so the model takes the address when the pipe
//!   leaves reset (a model reading of that order; a pipe left without a
//!   pulse has no program);
//! - that address is the MEC ucode's start from the `gc_*_mec.bin`
//!   header, when the model knows the blob ([`Mec::expect_pc`]);
//! - `MEC_PIPEn_ACTIVE` is set, `MEC_PIPEn_RESET` and `MEC_HALT` clear;
//! - and, when the model knows what the RLC autoload put in place, the
//!   MEC code for that pipe is there ([`Mec::set_code_check`]).
//!
//! No HQD on a pipe that does not run does anything: direct loads, KIQ
//! and MES maps are accepted as register or firmware writes, but the CP
//! launches nothing from them, and the KIQ firmware stand-in is not
//! found until its pipe runs.
//!
//! HQDs: the window `CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI` exists once
//! per ME/pipe/queue, and an access goes to the bank the last
//! `GRBM_GFX_CNTL` write selected (`soc21_grbm_select()`); `SH_MEM_CONFIG`
//! and `SH_MEM_BASES` are banked per VMID the same way. Everything else
//! is one flat register file. A slot comes alive when
//! `CP_HQD_ACTIVE.ACTIVE` is written to 1 (direct HQD programming), or
//! when MES or the KIQ model maps an MQD through [`Mec::map_mqd`]. Either
//! way the model checks what the CP needs to run the queue and then
//! hands it to the [`CpModel`]. `CP_HQD_AQL_CONTROL.CONTROL0` set makes
//! it an AQL queue, clear a PM4 queue (Linux's kernel compute queues,
//! `gfx_v11_0_compute_mqd_init()`, which never sets the AQL control;
//! tinygrad's default `AMD_AQL=0` queues) that the CP's PM4 front end
//! runs. Checked for both unless said:
//! - (AQL) `QUEUE_SIZE` encodes a ring of at least four packets;
//! - the doorbell is enabled (direct loads); it may lie outside
//!   `CP_MEC_DOORBELL_RANGE_LOWER..=UPPER`, which decides only what wakes
//!   a power-gated GC (`gfx_v9_0_kiq_init_register()`);
//! - an EOP buffer is given;
//! - (AQL) the rptr report address is `amd_queue_t::read_dispatch_id`
//!   and the wptr poll address `write_dispatch_id` of one descriptor.
//!
//! Doorbells: the queue is woken only by doorbell stores that reach the
//! MEC ([`Mec::doorbell`]): the model watches its BAR2 page
//! ([`Mec::scan_doorbells`]) and hands each changed slot to the bridge
//! in front of it (the NBIO model's aperture and S2A routing in the
//! `VirtualGpu`), or by the write-pointer polls `CP_PQ_WPTR_POLL_CNTL`
//! and `CP_PQ_WPTR_POLL_CNTL1` ask for (see [`crate::cp`]).
//!
//! `CP_HQD_DEQUEUE_REQUEST` on an active slot unmaps the queue from the CP
//! model (in-flight work drains) and clears ACTIVE, unless the
//! `dequeue_never_completes` fault is set.
//!
//! Hang recovery (issue 20, item 4):
//! - a dequeue request on a hung queue ([`CpModel::hang`]) stays pending
//!   with ACTIVE set: its waves never drain (*model convention*; tinygrad's
//!   `AM_GFX.fini_hw` notes "a wedged wave can survive RESET_WAVES");
//! - `SPI_COMPUTE_QUEUE_RESET.RESET` kills the waves of the slot
//!   `GRBM_GFX_CNTL` selects, after which a pending dequeue completes and
//!   ACTIVE drops (tinygrad's `AM_GFX.fini_hw` writes DEQUEUE_REQUEST 2
//!   then SPI_COMPUTE_QUEUE_RESET 1 and waits for ACTIVE to clear);
//! - `GRBM_SOFT_RESET` with `SOFT_RESET_CP` or `SOFT_RESET_CPC` returns
//!   the compute CP to its reset state: every HQD inactive and its
//!   registers at their defaults, the MEC halted (`CP_MEC_RS64_CNTL`
//!   default), both MES pipes halted, the KIQ and MES rings forgotten
//!   (`gfx_v11_0_soft_reset()`; tinygrad pulses the same two bits before
//!   it starts the MEC on gfx11). Firmware state is gone: MES and the KIQ
//!   must be started and given their rings again.
//!
//! Everything is decoded with [`crate::cpregs`], the model's own reading
//! of the headers; register offsets come from `barebell::regs`.

use crate::SimClock;
use crate::cp::{CpError, CpModel, MecBinding, Pm4Binding, Step};
use crate::cpregs::{self, WINDOW_DWORDS, grbm, mec_cntl, mes_cntl, w};
use crate::decode::mqd::Hqd;
use crate::gfx_pipes::{Engine, GfxPipeEvent, GfxPipes, GfxReg};
use crate::gmc::AddressSpace;
use crate::hsa::queue as amdq;
use crate::log::Keep;
use crate::psp::LoadedFirmware;
use crate::regfile::ACCESS_NS;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::{ALL_ONES, RegisterBus};
use barebell::ip::Generation;
use barebell::regs::{IpBases, Reg};
use barebell::time::Clock as _;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use spin::{Mutex, MutexGuard};

/// Fault switches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MecFaults {
    /// A dequeue request is accepted but the slot never goes inactive (a
    /// wave that never drains).
    pub dequeue_never_completes: bool,
}

/// What a preemption ([`Mec::preempt_doorbell`]) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preempt {
    /// Drained, state saved into the MQD, taken off its slot.
    Done,
    /// No queue listens on that doorbell.
    NotMapped,
    /// The queue's waves do not drain: it stays mapped.
    Hung,
    /// The MQD the state is saved into is not memory the CP reaches.
    MqdUnwritable { address: u64 },
}

/// Why the model refused to run a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MecError {
    QueueSize {
        field: u8,
    },
    DoorbellDisabled,
    DoorbellInUse {
        dword: u32,
    },
    NoEop,
    /// `rptr_report` and `wptr_poll` are not `read_dispatch_id` and
    /// `write_dispatch_id` of one `amd_queue_t`.
    NotAnAqlDescriptor {
        rptr: u64,
        wptr: u64,
    },
    Bind(CpError),
    /// The slot already runs a queue.
    SlotBusy,
    /// The MEC pipe started less than [`MEC_START_NS`] ago: a queue
    /// loaded or mapped onto it now is refused (*model convention*, from
    /// the `udelay(50)` `gfx_v11_0_cp_compute_enable()` and
    /// `gfx_v12_0_cp_compute_enable()` end with before any queue is set
    /// up; what the hardware does with a queue loaded sooner is not
    /// public).
    PipeStarting {
        pipe: u8,
        since_ns: u64,
    },
    /// Not a compute slot of this part's one MEC: ME 1, pipe 0..=3,
    /// queue 0..=7. GC 11 and GC 12 have one MEC (`mec.num_mec = 1` in
    /// `gfx_v11_0_sw_init()` / `gfx_v12_0_sw_init()`), so an HQD loaded on
    /// ME 2 by registers is no compute queue (the KIQ refuses the same
    /// slot in MAP_QUEUES).
    NotAMecSlot,
    /// The queue's VMID has no compute apertures: `SH_MEM_CONFIG` not in
    /// 64-bit, unaligned mode or `SH_MEM_BASES` zero (see
    /// [`Mec::apertures_set`]).
    AperturesUnset {
        vmid: u8,
        config: u32,
        bases: u32,
    },
    /// The HQD stops its own fetcher or execution
    /// ([`Hqd::fetch_refusal`]): it would never run a packet.
    FetcherStopped {
        why: &'static str,
    },
    /// The EOP buffer's declared size (`EOP_SIZE`) runs past the memory
    /// the CP can write in the queue's address space.
    EopUnbacked {
        address: u64,
        bytes: u64,
    },
    /// Not a graphics slot the model runs: ME 0, pipe 0 or 1, queue 0
    /// (*model convention*: Linux 6.12 maps one graphics ring per pipe,
    /// `gfx_v11_0_sw_init()`'s `num_queue_per_pipe = 1`).
    NotAGfxSlot,
    /// The graphics pipe does not run (halted, in reset, or on another
    /// start address than its blob's: [`crate::gfx_pipes::GfxPipes::runs`]).
    GfxPipeNotRunning {
        pipe: u8,
    },
}

/// What happened to a slot or pipe, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MecEvent {
    /// A mode-1 reset returned the CP to its power-on state
    /// ([`Mec::reset`]).
    Mode1Reset,
    Activated {
        me: u8,
        pipe: u8,
        queue: u8,
        cp_queue: usize,
    },
    Refused {
        me: u8,
        pipe: u8,
        queue: u8,
        why: MecError,
    },
    Dequeued {
        me: u8,
        pipe: u8,
        queue: u8,
    },
    /// A dequeue request on a hung queue: it waits for waves that never
    /// drain.
    DequeueStalled {
        me: u8,
        pipe: u8,
        queue: u8,
    },
    /// `SPI_COMPUTE_QUEUE_RESET` killed a slot's waves.
    WavesKilled {
        me: u8,
        pipe: u8,
        queue: u8,
        dropped: usize,
    },
    /// `GRBM_SOFT_RESET` reset the compute CP.
    CpSoftReset {
        value: u32,
    },
    /// A MES pipe was unhalted whose code the RLC autoload never put in
    /// place ([`crate::psp::LoadedFirmware::mes_pipe`]): it does not run.
    MesPipeWithoutCode {
        pipe: u8,
    },
    /// A MES pipe's ring was loaded by register programming (ME 3).
    MesRingLoaded {
        pipe: u8,
    },
    /// A MES pipe's ring was activated with an HQD it could never run
    /// ([`crate::decode::mqd::Hqd::mes_ring_refusal`]); the pipe gets no
    /// ring, so its MES never answers.
    MesRingRefused {
        pipe: u8,
        why: &'static str,
    },
    /// A PM4 queue on the slot `RLC_CP_SCHEDULERS` names as the KIQ came
    /// up; the KIQ model runs it once its pipe runs (see
    /// [`Mec::kiq_hqd`]).
    KiqActivated {
        me: u8,
        pipe: u8,
        queue: u8,
    },
    /// A queue was loaded on a MEC pipe that does not run: it does
    /// nothing until the pipe runs.
    QueueOnStoppedPipe {
        me: u8,
        pipe: u8,
        queue: u8,
    },
    /// A MEC pipe started running its firmware at `pc` (dwords).
    MecPipeRunning {
        pipe: u8,
        pc: u64,
    },
    /// A MEC pipe stopped (halt, reset or inactive).
    MecPipeStopped {
        pipe: u8,
    },
    /// A MEC pipe was let run with no start address taken from a reset
    /// pulse after `CP_MEC_RS64_PRGRM_CNTR_START` was written.
    MecPipeNoProgram {
        pipe: u8,
    },
    /// A MEC pipe was let run from an address that is not the MEC
    /// ucode's start.
    MecPipeWrongPc {
        pipe: u8,
        pc: u64,
        expected: u64,
    },
    /// A MEC pipe was let run whose code the RLC autoload never put in
    /// place.
    MecPipeWithoutCode {
        pipe: u8,
    },
    /// A graphics PFP/ME pipe left reset ([`crate::gfx_pipes`]).
    GfxPipe(GfxPipeEvent),
}

/// The MES scheduler ring as the MQD the KIQ mapped describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MesRingHqd {
    pub ring: u64,
    pub ring_dwords: u64,
    pub doorbell_dword: u32,
}

/// The KIQ's ring as its HQD registers describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KiqHqd {
    pub slot: (u8, u8, u8),
    pub ring: u64,
    pub ring_dwords: u64,
    pub doorbell_dword: u32,
    pub rptr_report: u64,
}

/// ME, pipe, queue.
pub type SlotKey = (u8, u8, u8);

/// A slot that runs a queue ([`Mec::active_hqds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveHqd {
    pub slot: SlotKey,
    /// AQL (`CP_HQD_AQL_CONTROL.CONTROL0` set) or PM4.
    pub aql: bool,
    pub vmid: u8,
    pub doorbell_dword: u32,
    /// The CP model's queue.
    pub cp_queue: usize,
    /// Whether the MEC pipe the slot sits on runs its firmware.
    pub pipe_running: bool,
}

/// Pipes per MEC (`gfx_v11_0_sw_init()`: `num_pipe_per_mec = 4`).
pub const MEC_PIPES: u8 = 4;

/// How long a MEC pipe needs after it was started before a queue may be
/// loaded on it: the `udelay(50)` at the end of
/// `gfx_v11_0_cp_compute_enable()` / `gfx_v12_0_cp_compute_enable()`
/// (*model convention*: the drivers wait that long; the hardware's own
/// need is not public).
pub const MEC_START_NS: u64 = 50_000;

/// Whether a MEC pipe has its code (the RLC autoload's record).
pub type CodeCheck = Arc<dyn Fn(u8) -> bool + Send + Sync>;

/// The bridge in front of the MEC's doorbells: given a doorbell dword
/// offset and the value stored there, whether the store reaches the GC.
pub type DoorbellBridge = Box<dyn Fn(u32, u64) -> bool + Send + Sync>;

struct State {
    flat: BTreeMap<usize, u32>,
    grbm: u32,
    banks: BTreeMap<SlotKey, Hqd>,
    /// Active slot → CP model queue.
    active: BTreeMap<SlotKey, usize>,
    /// Doorbell dword offset → CP model queue, for every mapped queue.
    doorbells: BTreeMap<u32, usize>,
    events: Vec<MecEvent>,
    faults: MecFaults,
    /// `CP_MEC_RS64_CNTL`.
    mec_cntl: u32,
    /// Per MEC pipe: `CP_MEC_RS64_PRGRM_CNTR_START(_HI)` and whether it
    /// was written since power-on.
    mec_pc: [(u32, u32, bool); MEC_PIPES as usize],
    /// Per MEC pipe: the start address taken at the last reset release.
    mec_program: [Option<(u32, u32, bool)>; MEC_PIPES as usize],
    mec_expected: Option<(u32, u32)>,
    mec_code: Option<CodeCheck>,
    /// MEC pipes that run, bit per pipe.
    running: u8,
    /// Per MEC pipe: when it last started running (simulated ns).
    mec_started: [Option<u64>; MEC_PIPES as usize],
    /// When MEC pipes last started, until the next CP register access.
    quiet_since: Option<u64>,
    /// Model time from the last MEC pipe start to the next CP register
    /// access.
    start_quiet: Option<u64>,
    /// The graphics PFP/ME pipes' start addresses.
    gfx: GfxPipes,
    /// `CP_PQ_WPTR_POLL_CNTL1` bits not yet served (queue not active).
    poll_pending: u32,
    /// Per VMID: `SH_MEM_CONFIG`, `SH_MEM_BASES`.
    sh_mem: [(u32, u32); 16],
    /// MES pipes: program counter start (in dwords, as written), running,
    /// and the version each reports in `CP_MES_GP3_LO` once running.
    mes_pc: [u64; 2],
    mes_running: [bool; 2],
    mes_versions: [u32; 2],
    kiq: Option<KiqHqd>,
    /// Per MES pipe: its ring, once loaded or mapped.
    mes_rings: [Option<MesRingHqd>; 2],
    /// The MEC1 HQDs the scheduler pipe's SET_HW_RSRC gave MES (bit `q`
    /// of `[pipe]`), shared by both MES pipes: on gfx12 the legacy
    /// queues arrive on pipe 1 while the mask came with pipe 0's frame.
    mes_compute_hqds: [u32; 8],
    /// Doorbell stores that reached the MEC on a dword no queue uses.
    unclaimed_doorbells: u64,
    /// What the PSP's RLC autoload put in place; `None` for a MEC built
    /// without a PSP model, which takes every code as loaded.
    firmware: Option<Arc<LoadedFirmware>>,
    unplugged: bool,
    /// Slots whose dequeue request waits for waves that never drain.
    pending_dequeue: alloc::collections::BTreeSet<SlotKey>,
    /// CP soft resets so far (the firmware stand-ins restart after one).
    cp_resets: u64,
    /// Fault switch: `GRBM_SOFT_RESET` does not bring the CP back.
    wedged: bool,
    reads: u64,
    writes: u64,
    /// Bumped whenever the firmware behind the rings stops: a MES halt
    /// or MEC pipes stopping, or a mode-1 reset ([`Mec::epoch`]).
    epoch: u64,
}

impl core::fmt::Debug for State {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("State")
            .field("mec_cntl", &self.mec_cntl)
            .field("running", &self.running)
            .field("active", &self.active)
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

/// The BAR2 page as the MEC model watches it: the last value seen in
/// each 64-bit slot, and which slots a queue listens on.
struct Watch {
    shadow: Vec<u64>,
    hot: Vec<usize>,
}

/// Byte offsets of the registers the model acts on.
#[derive(Debug, Clone, Copy)]
struct Regs {
    grbm_gfx_cntl: Option<usize>,
    doorbell_range_lower: Option<usize>,
    doorbell_range_upper: Option<usize>,
    wptr_poll_cntl: Option<usize>,
    wptr_poll_cntl1: Option<usize>,
    mec_cntl: Option<usize>,
    mec_pc: Option<usize>,
    mec_pc_hi: Option<usize>,
    me_cntl: Option<usize>,
    pfp_pc: Option<usize>,
    pfp_pc_hi: Option<usize>,
    me_pc: Option<usize>,
    me_pc_hi: Option<usize>,
    sh_mem_config: Option<usize>,
    sh_mem_bases: Option<usize>,
    rlc_sched: Option<usize>,
    mes_cntl: Option<usize>,
    mes_pc: Option<usize>,
    mes_pc_hi: Option<usize>,
    mes_gp3: Option<usize>,
}

impl Regs {
    /// `None` for a generation the MEC model does not model (GC 9.4.3).
    fn new(g: Generation, b: &IpBases) -> Option<(Self, Reg)> {
        macro_rules! table {
            ($m:path) => {{
                use $m as r;
                let o = |x: Reg| x.byte_offset(b);
                (
                    Regs {
                        grbm_gfx_cntl: o(r::GRBM_GFX_CNTL),
                        doorbell_range_lower: o(r::CP_MEC_DOORBELL_RANGE_LOWER),
                        doorbell_range_upper: o(r::CP_MEC_DOORBELL_RANGE_UPPER),
                        wptr_poll_cntl: o(r::CP_PQ_WPTR_POLL_CNTL),
                        wptr_poll_cntl1: o(r::CP_PQ_WPTR_POLL_CNTL1),
                        mec_cntl: o(r::CP_MEC_RS64_CNTL),
                        mec_pc: o(r::CP_MEC_RS64_PRGRM_CNTR_START),
                        mec_pc_hi: o(r::CP_MEC_RS64_PRGRM_CNTR_START_HI),
                        me_cntl: o(r::CP_ME_CNTL),
                        pfp_pc: o(r::CP_PFP_PRGRM_CNTR_START),
                        pfp_pc_hi: o(r::CP_PFP_PRGRM_CNTR_START_HI),
                        me_pc: o(r::CP_ME_PRGRM_CNTR_START),
                        me_pc_hi: o(r::CP_ME_PRGRM_CNTR_START_HI),
                        sh_mem_config: o(r::SH_MEM_CONFIG),
                        sh_mem_bases: o(r::SH_MEM_BASES),
                        rlc_sched: o(r::RLC_CP_SCHEDULERS),
                        mes_cntl: o(r::CP_MES_CNTL),
                        mes_pc: o(r::CP_MES_PRGRM_CNTR_START),
                        mes_pc_hi: o(r::CP_MES_PRGRM_CNTR_START_HI),
                        mes_gp3: o(r::CP_MES_GP3_LO),
                    },
                    r::CP_MQD_BASE_ADDR,
                )
            }};
        }
        match g {
            Generation::Gfx90a | Generation::Gfx94 => None,
            Generation::Gfx11 => Some(table!(barebell::regs::gc_11_0_0)),
            Generation::Gfx12 => Some(table!(barebell::regs::gc_12_0_0)),
        }
    }
}

/// The MEC model: pipes, banked HQD registers, and the CP they feed.
pub struct Mec {
    clock: SimClock,
    bases: IpBases,
    regs: Regs,
    window: usize,
    doorbell_bar: u64,
    doorbell_slots: usize,
    bridge: Mutex<Option<DoorbellBridge>>,
    watch: Mutex<Watch>,
    steps: AtomicU32,
    state: Mutex<State>,
    cp: Mutex<CpModel>,
    sq_line: Mutex<Option<SqLine>>,
    eop_line: Mutex<Option<EopLine>>,
}

/// Where the SQ's error interrupts go, with the HQD slot (ME, pipe,
/// queue) of the queue that dispatched the wave (`None` for a rig queue
/// on no slot). The VirtualGpu wires it to the IH model.
pub type SqLine = Box<dyn Fn(Option<SlotKey>, crate::wave::SqEvent) + Send + Sync>;

/// Where the CP's end-of-pipe interrupts go: the slot the queue is active
/// on and the `RELEASE_MEM` context id.
pub type EopLine = Box<dyn Fn(Option<SlotKey>, u32) + Send + Sync>;

impl core::fmt::Debug for Mec {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Mec")
            .field("bases", &self.bases)
            .field("doorbell_bar", &self.doorbell_bar)
            .field("state", &*self.state.lock())
            .finish_non_exhaustive()
    }
}

/// The version word the model's MES reports per pipe unless told
/// otherwise: firmware revision 0x4A, API 2 (model values, not any real
/// firmware's).
pub const MODEL_MES_VERSION: u32 = 2 << 12 | 0x4A;

/// How many steps of [`Mec::step`] between two scans of
/// every doorbell slot; the slots a queue listens on are scanned every
/// step. A store to another slot reaches nothing either way; the full
/// scan only accounts for it.
pub const FULL_SCAN_EVERY: u32 = 256;

impl Mec {
    /// A MEC for `generation` with register segment bases `bases`, whose
    /// doorbell BAR is the `slots` 64-bit slots at host address
    /// `doorbell_bar` (which the CP model's DMA view must map).
    ///
    /// # Safety
    /// `doorbell_bar` must point to `slots` aligned `u64`s that stay valid
    /// for as long as the MEC lives and are accessed only atomically.
    pub unsafe fn new(
        clock: &SimClock,
        bases: IpBases,
        generation: Generation,
        doorbell_bar: u64,
        slots: usize,
        cp: CpModel,
    ) -> Option<Self> {
        let (regs, window) = Regs::new(generation, &bases)?;
        let window = window.byte_offset(&bases)?;
        let state = State {
            flat: BTreeMap::new(),
            grbm: 0,
            banks: BTreeMap::new(),
            active: BTreeMap::new(),
            doorbells: BTreeMap::new(),
            events: Vec::new(),
            faults: MecFaults::default(),
            mec_cntl: mec_cntl::DEFAULT,
            mec_pc: [(
                cpregs::MEC_PC_START_DEFAULT,
                cpregs::MEC_PC_START_HI_DEFAULT,
                false,
            ); MEC_PIPES as usize],
            mec_program: [None; MEC_PIPES as usize],
            mec_expected: None,
            mec_code: None,
            running: 0,
            mec_started: [None; MEC_PIPES as usize],
            quiet_since: None,
            start_quiet: None,
            gfx: GfxPipes::default(),
            poll_pending: 0,
            sh_mem: [(
                cpregs::sh_mem::CONFIG_DEFAULT,
                cpregs::sh_mem::BASES_DEFAULT,
            ); 16],
            mes_pc: [0; 2],
            mes_running: [false; 2],
            mes_versions: [MODEL_MES_VERSION; 2],
            kiq: None,
            mes_rings: [None; 2],
            mes_compute_hqds: [0; 8],
            unclaimed_doorbells: 0,
            firmware: None,
            unplugged: false,
            pending_dequeue: alloc::collections::BTreeSet::new(),
            cp_resets: 0,
            wedged: false,
            reads: 0,
            writes: 0,
            epoch: 0,
        };
        let mut flat = BTreeMap::new();
        if let Some(o) = regs.wptr_poll_cntl {
            flat.insert(o, cpregs::WPTR_POLL_CNTL_DEFAULT);
        }
        Some(Mec {
            clock: clock.clone(),
            bases,
            regs,
            window,
            doorbell_bar,
            doorbell_slots: slots,
            bridge: Mutex::new(None),
            watch: Mutex::new(Watch {
                shadow: alloc::vec![0; slots],
                hot: Vec::new(),
            }),
            steps: AtomicU32::new(0),
            state: Mutex::new(State { flat, ..state }),
            cp: Mutex::new(cp),
            sq_line: Mutex::new(None),
            eop_line: Mutex::new(None),
        })
    }

    pub fn bases(&self) -> IpBases {
        self.bases
    }

    /// How many times the firmware behind the rings has stopped (a MES
    /// halt, MEC pipes stopping, a mode-1 reset): a firmware stand-in
    /// found before the current epoch serves rings that no longer run.
    pub fn epoch(&self) -> u64 {
        self.state.lock().epoch
    }

    /// A mode-1 reset: the CP back to its power-on state. Every HQD is
    /// inactive and its registers read their defaults, the MEC is halted
    /// with its pipes in reset (`CP_MEC_RS64_CNTL` default), both MES
    /// pipes are halted, the KIQ and MES rings are forgotten, the doorbell
    /// range and `SH_MEM_*` read their defaults. The CP model's queues are
    /// unbound. Kept: the event log, the fault switches, the start address
    /// the MEC ucode expects, the MES versions the model reports, and the
    /// access counters.
    pub fn reset(&self) {
        let mut s = self.state.lock();
        let queues: Vec<usize> = s.active.values().copied().collect();
        let dwords: Vec<u32> = s.doorbells.keys().copied().collect();
        s.flat.clear();
        if let Some(o) = self.regs.wptr_poll_cntl {
            s.flat.insert(o, cpregs::WPTR_POLL_CNTL_DEFAULT);
        }
        s.grbm = 0;
        s.banks.clear();
        s.active.clear();
        s.doorbells.clear();
        s.mec_cntl = mec_cntl::DEFAULT;
        s.mec_pc = [(
            cpregs::MEC_PC_START_DEFAULT,
            cpregs::MEC_PC_START_HI_DEFAULT,
            false,
        ); MEC_PIPES as usize];
        s.mec_program = [None; MEC_PIPES as usize];
        s.running = 0;
        s.mec_started = [None; MEC_PIPES as usize];
        s.gfx.reset();
        s.poll_pending = 0;
        s.sh_mem = [(
            cpregs::sh_mem::CONFIG_DEFAULT,
            cpregs::sh_mem::BASES_DEFAULT,
        ); 16];
        s.mes_pc = [0; 2];
        s.mes_running = [false; 2];
        s.kiq = None;
        s.mes_rings = [None; 2];
        s.epoch += 1;
        s.events.keep(MecEvent::Mode1Reset);
        drop(s);
        for d in dwords {
            self.disarm_doorbell(d);
        }
        let mut cp = self.cp.lock();
        for q in queues {
            cp.unbind(q);
        }
        cp.set_running_pipes(0);
    }

    pub fn doorbell_bar(&self) -> u64 {
        self.doorbell_bar
    }

    /// The start address (`CP_MEC_RS64_PRGRM_CNTR_START` and `_HI`
    /// values) the MEC ucode needs, from its blob's header
    /// ([`cpregs::gfx_v2::pc_start`]).
    pub fn expect_pc(&self, pc: (u32, u32)) {
        self.state.lock().mec_expected = Some(pc);
    }

    /// The start address (`CP_PFP/ME_PRGRM_CNTR_START` and `_HI` values)
    /// the PFP or ME ucode needs, from its blob's header.
    pub fn expect_gfx_pc(&self, engine: Engine, pc: (u32, u32)) {
        self.state.lock().gfx.expect(engine, pc);
    }

    /// Model time between the last start of MEC pipes and the next CP
    /// register access the driver made: Linux lets 50 µs pass there
    /// (`gfx_v11_0_cp_compute_enable()`'s `udelay(50)`).
    pub fn start_quiet_ns(&self) -> Option<u64> {
        self.state.lock().start_quiet
    }

    /// The start address (dwords) the PFP or ME `pipe` took at its last
    /// reset release; `None` if it never left a reset since power-on.
    pub fn gfx_pipe_program(&self, engine: Engine, pipe: usize) -> Option<u64> {
        self.state.lock().gfx.program(engine, pipe)
    }

    /// What the RLC autoload put in place: a pipe runs only if `f(pipe)`.
    pub fn set_code_check(&self, f: CodeCheck) {
        self.state.lock().mec_code = Some(f);
    }

    /// Doorbell stores reach the MEC only through `bridge` from now on.
    pub fn set_doorbell_bridge(&self, bridge: DoorbellBridge) {
        *self.bridge.lock() = Some(bridge);
    }

    /// MEC pipes that run, bit per pipe.
    pub fn running_pipes(&self) -> u8 {
        self.state.lock().running
    }

    /// `CP_MEC_RS64_CNTL` as the device holds it.
    pub fn mec_cntl(&self) -> u32 {
        self.state.lock().mec_cntl
    }

    /// `SH_MEM_CONFIG` and `SH_MEM_BASES` of `vmid`.
    pub fn sh_mem(&self, vmid: u8) -> (u32, u32) {
        self.state
            .lock()
            .sh_mem
            .get(usize::from(vmid))
            .copied()
            .unwrap_or((0, 0))
    }

    /// Whether `vmid`'s compute apertures are set as
    /// `gfx_v11_0_init_compute_vmid()` / `gfx_v12_0_init_compute_vmid()`
    /// set them for the KFD VMIDs (8..=15): `SH_MEM_CONFIG` in
    /// `SH_MEM_ADDRESS_MODE_64` with `SH_MEM_ALIGNMENT_MODE_UNALIGNED`
    /// (its reset value 0xC000, `gc_11_0_0_default.h`, has alignment mode
    /// 0) and both `SH_MEM_BASES` apertures non-zero (reset value 0: the
    /// LDS and scratch apertures would start at flat address 0, over the
    /// queue's own memory).
    /// The hardware does not refuse such a queue; its flat accesses would
    /// go wrong later. The model refuses it at activation (a model
    /// convention, so the mistake shows where it is made).
    pub fn apertures_set(&self, vmid: u8) -> bool {
        use cpregs::sh_mem as m;
        let (config, bases) = self.sh_mem(vmid);
        config & m::ADDRESS_MODE_MASK == m::ADDRESS_MODE_64
            && (config & m::ALIGNMENT_MODE_MASK) >> m::ALIGNMENT_MODE_SHIFT
                == m::ALIGNMENT_MODE_UNALIGNED
            && bases & m::PRIVATE_BASE_MASK != 0
            && bases & m::SHARED_BASE_MASK != 0
    }

    /// Engines run only code the RLC autoload put in place: `firmware`
    /// is the PSP model's record of it.
    pub fn set_loaded_firmware(&self, firmware: Arc<LoadedFirmware>) {
        self.state.lock().firmware = Some(firmware);
    }

    /// Whether MES pipe `pipe` runs (started through `CP_MES_CNTL`).
    pub fn mes_pipe_running(&self, pipe: u8) -> bool {
        self.state
            .lock()
            .mes_running
            .get(usize::from(pipe))
            .copied()
            .unwrap_or(false)
    }

    /// Records the MEC1 HQDs the MES scheduler owns (SET_HW_RSRC's
    /// `compute_hqd_mask`, accepted on the scheduler pipe).
    pub fn set_mes_compute_hqds(&self, mask: [u32; 8]) {
        self.state.lock().mes_compute_hqds = mask;
    }

    /// Whether MEC1 pipe `pipe`, queue `queue` belongs to the MES
    /// scheduler ([`Mec::set_mes_compute_hqds`]).
    pub fn mes_owns_hqd(&self, pipe: u32, queue: u32) -> bool {
        let s = self.state.lock();
        s.mes_compute_hqds
            .get(pipe as usize)
            .is_some_and(|m| queue < 32 && m >> queue & 1 != 0)
    }

    /// Records the MES scheduler ring a KIQ MAP_QUEUES (ME 2) mapped.
    pub fn set_mes_ring(&self, r: MesRingHqd) {
        self.state.lock().mes_rings[0] = Some(r);
    }

    /// The MES scheduler ring, once mapped.
    pub fn mes_ring(&self) -> Option<MesRingHqd> {
        self.state.lock().mes_rings[0]
    }

    /// MES pipe `pipe`'s ring: pipe 0 once mapped (KIQ MAP_QUEUES or
    /// `map_legacy_kq`), pipe 1 once loaded by register programming.
    pub fn mes_pipe_ring(&self, pipe: u8) -> Option<MesRingHqd> {
        self.state
            .lock()
            .mes_rings
            .get(usize::from(pipe))
            .copied()
            .flatten()
    }

    /// The KIQ's ring, once a PM4 queue came up on the slot
    /// `RLC_CP_SCHEDULERS` names and the pipe it sits on runs.
    pub fn kiq_hqd(&self) -> Option<KiqHqd> {
        let s = self.state.lock();
        let k = s.kiq?;
        let on_mec = matches!(k.slot.0, 1 | 2);
        (!on_mec || s.running >> k.slot.1 & 1 == 1).then_some(k)
    }

    /// A slot's HQD registers as last written or loaded (`None` if the
    /// slot was never touched), in window order: for the firmware models,
    /// which decode them with their own code.
    pub fn bank(&self, slot: SlotKey) -> Option<[u32; cpregs::WINDOW_DWORDS]> {
        self.state.lock().banks.get(&slot).map(|h| h.0)
    }

    /// Every slot that runs a queue on the CP: its key, the HQD it was
    /// activated with, the CP queue, and whether its pipe runs.
    pub fn active_hqds(&self) -> Vec<ActiveHqd> {
        let s = self.state.lock();
        s.active
            .iter()
            .map(|(&slot, &cp_queue)| {
                let hqd = s.banks.get(&slot).copied().unwrap_or_default();
                ActiveHqd {
                    slot,
                    aql: hqd.aql(),
                    vmid: hqd.vmid(),
                    doorbell_dword: hqd.doorbell_dword(),
                    cp_queue,
                    pipe_running: matches!(slot.0, 1 | 2) && s.running >> slot.1 & 1 == 1,
                }
            })
            .collect()
    }

    /// Byte offsets of every register of the HQD window.
    pub fn window_offsets(&self) -> alloc::collections::BTreeSet<usize> {
        (0..WINDOW_DWORDS).map(|i| self.window + 4 * i).collect()
    }

    /// `RLC_CP_SCHEDULERS` as programmed (0 if never written).
    pub fn rlc_cp_schedulers(&self) -> u32 {
        let s = self.state.lock();
        self.regs
            .rlc_sched
            .and_then(|o| s.flat.get(&o).copied())
            .unwrap_or(0)
    }

    /// As [`Mec::map_mqd`], for an image the caller decoded as raw window
    /// dwords (MQD dwords 128..=183).
    pub fn map_window(
        &self,
        slot: SlotKey,
        window: &[u32; cpregs::WINDOW_DWORDS],
    ) -> Result<usize, MecError> {
        self.map_mqd(slot, &Hqd(*window))
    }

    /// What each MES pipe reports in `CP_MES_GP3_LO` once running.
    pub fn set_mes_versions(&self, v: [u32; 2]) {
        self.state.lock().mes_versions = v;
    }

    /// Each MES pipe's `CP_MES_PRGRM_CNTR_START(_HI)` as programmed (the
    /// ucode start address >> 2) and whether it runs.
    pub fn mes_pipes(&self) -> [(u64, bool); 2] {
        let s = self.state.lock();
        [
            (s.mes_pc[0], s.mes_running[0]),
            (s.mes_pc[1], s.mes_running[1]),
        ]
    }

    pub fn set_faults(&self, f: MecFaults) {
        self.state.lock().faults = f;
    }

    /// The CP model, locked.
    pub fn cp(&self) -> MutexGuard<'_, CpModel> {
        self.cp.lock()
    }

    /// One look at the doorbells (every slot a queue listens on; all of
    /// them every [`FULL_SCAN_EVERY`] steps), then one CP step.
    pub fn step(&self) -> Step {
        let n = self.steps.fetch_add(1, Ordering::Relaxed);
        self.scan_doorbells(n.is_multiple_of(FULL_SCAN_EVERY));
        let s = self.cp.lock().step();
        self.deliver_sq();
        self.deliver_eop();
        s
    }

    /// Sends the CP's end-of-pipe interrupts through `line` from now on.
    pub fn set_eop_line(&self, line: EopLine) {
        *self.eop_line.lock() = Some(line);
    }

    /// Hands the CP's end-of-pipe interrupts to the line, each with the
    /// slot its queue is active on (dropped with no line: no interrupt
    /// controller to take them).
    fn deliver_eop(&self) {
        let raised = self.cp.lock().take_eop_interrupts();
        if raised.is_empty() {
            return;
        }
        let line = self.eop_line.lock();
        let Some(line) = line.as_ref() else {
            return;
        };
        for (q, context) in raised {
            let slot = self
                .state
                .lock()
                .active
                .iter()
                .find(|(_, x)| **x == q)
                .map(|(k, _)| *k);
            line(slot, context);
        }
    }

    /// Sends SQ error interrupts through `line` from now on (issue 20).
    pub fn set_sq_line(&self, line: SqLine) {
        *self.sq_line.lock() = Some(line);
    }

    /// Hands the CP's new SQ error interrupts to the line, each with the
    /// slot its queue is active on.
    fn deliver_sq(&self) {
        let events = self.cp.lock().take_sq_events();
        if events.is_empty() {
            return;
        }
        let line = self.sq_line.lock();
        let Some(line) = line.as_ref() else {
            return;
        };
        for e in events {
            let slot = self
                .state
                .lock()
                .active
                .iter()
                .find(|(_, q)| **q == e.queue)
                .map(|(k, _)| *k);
            line(slot, e);
        }
    }

    /// Scans every doorbell, then steps until nothing is announced, in
    /// flight or launchable, or `max_steps` pass: what a MEC does between
    /// two looks of the host. Returns the steps taken, or `None` on the
    /// bound.
    pub fn run_until_idle(&self, max_steps: u64) -> Option<u64> {
        self.scan_doorbells(true);
        let mut idle_for = 0;
        for i in 0..max_steps {
            let rang = self.scan_doorbells(i.is_multiple_of(u64::from(FULL_SCAN_EVERY)));
            let s = self.cp.lock().step();
            self.deliver_sq();
            self.deliver_eop();
            let busy = self.cp.lock().busy();
            if s.progressed() || busy || rang > 0 {
                idle_for = 0;
            } else {
                idle_for += 1;
                if idle_for >= 2 {
                    return Some(i + 1);
                }
            }
        }
        None
    }

    pub fn events(&self) -> Vec<MecEvent> {
        self.state.lock().events.clone()
    }

    /// Queues currently mapped, by doorbell dword offset.
    pub fn mapped_doorbells(&self) -> Vec<u32> {
        self.state.lock().doorbells.keys().copied().collect()
    }

    /// Doorbell stores that reached the MEC on a dword no queue uses.
    pub fn unclaimed_doorbells(&self) -> u64 {
        self.state.lock().unclaimed_doorbells
    }

    pub fn unplug(&self) {
        self.state.lock().unplugged = true;
    }

    /// Fault injection: the queue on doorbell dword `dword` hangs
    /// ([`CpModel::hang`]). Returns false if no queue is mapped there.
    pub fn hang_doorbell(&self, dword: u32) -> bool {
        let q = self.state.lock().doorbells.get(&dword).copied();
        match q {
            Some(q) => self.cp.lock().hang(q),
            None => false,
        }
    }

    /// Fault switch: the CP is wedged so that `GRBM_SOFT_RESET` leaves it
    /// as it is (*model convention* for "a soft reset did not help", the
    /// case where Linux escalates to a full-GPU reset); a mode-1 reset
    /// still resets it ([`Mec::hard_reset`]).
    pub fn set_wedged(&self, on: bool) {
        self.state.lock().wedged = on;
    }

    /// A mode-1 reset of the CP: what a soft reset does, even when
    /// wedged.
    pub fn hard_reset(&self) {
        self.state.lock().wedged = false;
        self.grbm_soft_reset(cpregs::SOFT_RESET_CP | cpregs::SOFT_RESET_CPC);
    }

    /// Whether the queue on doorbell dword `dword` is hung.
    pub fn doorbell_stuck(&self, dword: u32) -> bool {
        let q = self.state.lock().doorbells.get(&dword).copied();
        q.is_some_and(|q| self.cp.lock().is_stuck(q))
    }

    /// Resets the queue on doorbell dword `dword` (MES `RESET` with
    /// `reset_queue_only`, or an unmap with `RESET_QUEUES`): its waves are
    /// killed and it fetches nothing more; it stays on its slot until it
    /// is removed (*model convention*: what firmware does with the
    /// unfetched packets is not public; Linux re-initialises a reset
    /// queue before using it again, `gfx_v11_0_reset_kcq()`). Returns the
    /// launched packets dropped, or `None` if no queue is mapped there.
    pub fn reset_doorbell_queue(&self, dword: u32) -> Option<usize> {
        let q = self.state.lock().doorbells.get(&dword).copied()?;
        let mut cp = self.cp.lock();
        let n = cp.kill_waves(q);
        cp.unbind(q);
        Some(n)
    }

    /// A preemption of the queue on doorbell `dword` (KIQ UNMAP_QUEUES
    /// `PREEMPT_QUEUES`): the CP drains the queue, saves its state into
    /// its MQD and takes it off the slot.
    ///
    /// - A queue whose waves do not drain cannot be preempted: KFD's
    ///   `hqd_destroy_v11()` waits for `CP_HQD_ACTIVE` to clear after a
    ///   `DRAIN_PIPE` dequeue and gives up with "preemption failed"; only
    ///   the reset forms (`RESET_WAVES`, `RESET_QUEUES`) kill waves. The
    ///   queue stays mapped ([`Preempt::Hung`]).
    /// - The saved state is the PM4 read and write pointers, at the MQD's
    ///   `cp_hqd_pq_rptr` and `cp_hqd_pq_wptr_lo/hi` (the MQD at
    ///   `CP_MQD_BASE_ADDR`): KFD reloads a preempted queue from its MQD
    ///   and relies on them ("the remaining bits are taken from the saved
    ///   64-bit WPTR" in `hqd_load_v11()`; `checkpoint_mqd()` copies only
    ///   an inactive queue's MQD). An AQL queue's read index lives in its
    ///   descriptor (`read_dispatch_id`), which the CP writes as it goes;
    ///   nothing more is saved for it. *Model convention*: no other field
    ///   is written back (which others the CP saves is not public).
    /// - The reset form ([`Mec::unmap_doorbell`] after
    ///   [`Mec::reset_doorbell_queue`]) discards the state: the MQD is
    ///   left as the driver wrote it.
    pub fn preempt_doorbell(&self, dword: u32) -> Preempt {
        let (q, slot) = {
            let s = self.state.lock();
            let Some(&q) = s.doorbells.get(&dword) else {
                return Preempt::NotMapped;
            };
            (q, s.active.iter().find(|(_, v)| **v == q).map(|(k, _)| *k))
        };
        let mqd = slot
            .and_then(|k| self.bank(k))
            .map(|b| Hqd(b).mqd_address());
        {
            let mut cp = self.cp.lock();
            if cp.is_stuck(q) {
                return Preempt::Hung;
            }
            if let (Some(p), Some(mqd)) = (cp.pm4_stats(q), mqd) {
                let at = |i: usize| mqd + ((cpregs::WINDOW_FIRST_MQD_DWORD + i) * 4) as u64;
                let ring_mask = p.ring_dwords.saturating_sub(1);
                let words = [
                    (w::PQ_RPTR, (p.rptr & ring_mask) as u32),
                    (w::PQ_WPTR_LO, p.wptr as u32),
                    (w::PQ_WPTR_HI, (p.wptr >> 32) as u32),
                ];
                for (i, v) in words {
                    match cp.dma_mut().u32(at(i), "MQD saved on preemption") {
                        Ok(a) => a.store(v, Ordering::Release),
                        Err(_) => return Preempt::MqdUnwritable { address: at(i) },
                    }
                }
            }
        }
        self.unmap_doorbell(dword);
        Preempt::Done
    }

    /// Slots whose dequeue request is still pending.
    pub fn pending_dequeues(&self) -> Vec<SlotKey> {
        self.state.lock().pending_dequeue.iter().copied().collect()
    }

    /// CP soft resets so far.
    pub fn cp_resets(&self) -> u64 {
        self.state.lock().cp_resets
    }

    /// `SPI_COMPUTE_QUEUE_RESET` written with `RESET` set: kills the waves
    /// of the slot `GRBM_GFX_CNTL` selects; a dequeue pending there then
    /// completes.
    pub fn spi_queue_reset(&self, value: u32) {
        if value & cpregs::SPI_QUEUE_RESET_MASK == 0 {
            return;
        }
        let (slot, q, pending) = {
            let s = self.state.lock();
            let slot = grbm::slot(s.grbm);
            (
                slot,
                s.active.get(&slot).copied(),
                s.pending_dequeue.contains(&slot),
            )
        };
        let dropped = q.map_or(0, |q| self.cp.lock().kill_waves(q));
        self.state.lock().events.keep(MecEvent::WavesKilled {
            me: slot.0,
            pipe: slot.1,
            queue: slot.2,
            dropped,
        });
        if pending {
            self.complete_dequeue(slot);
        }
    }

    /// `GRBM_SOFT_RESET` written: with `SOFT_RESET_CP` or `SOFT_RESET_CPC`
    /// set, the compute CP returns to its reset state (see the module
    /// comment). Other bits (GFX, SDMA) are not modelled here.
    pub fn grbm_soft_reset(&self, value: u32) {
        if value & (cpregs::SOFT_RESET_CP | cpregs::SOFT_RESET_CPC) == 0 {
            return;
        }
        if self.state.lock().wedged {
            self.state
                .lock()
                .events
                .push(MecEvent::CpSoftReset { value });
            return;
        }
        let dwords: Vec<u32> = {
            let mut s = self.state.lock();
            s.active.clear();
            s.banks.clear();
            s.pending_dequeue.clear();
            s.kiq = None;
            s.mes_rings = [None; 2];
            s.mes_running = [false; 2];
            if let Some(o) = self.regs.mes_cntl {
                s.flat.insert(o, mes_cntl::HALT);
            }
            s.mec_cntl = mec_cntl::DEFAULT;
            s.running = 0;
            s.cp_resets += 1;
            s.events.keep(MecEvent::CpSoftReset { value });
            let d = s.doorbells.keys().copied().collect();
            s.doorbells.clear();
            d
        };
        for d in dwords {
            self.disarm_doorbell(d);
        }
        self.cp.lock().soft_reset();
    }

    pub fn access_counts(&self) -> (u64, u64) {
        let s = self.state.lock();
        (s.reads, s.writes)
    }

    /// The device's view of a flat register (no bus access counted).
    pub fn device_get(&self, byte_offset: usize) -> u32 {
        self.state
            .lock()
            .flat
            .get(&byte_offset)
            .copied()
            .unwrap_or(0)
    }

    /// `CP_MEC_DOORBELL_RANGE_LOWER/UPPER` as programmed (byte offsets).
    pub fn doorbell_range(&self) -> (u32, u32) {
        let s = self.state.lock();
        Self::range_in(&self.regs, &s)
    }

    fn range_in(regs: &Regs, s: &State) -> (u32, u32) {
        let get = |o: Option<usize>| o.and_then(|o| s.flat.get(&o).copied()).unwrap_or(0);
        (
            get(regs.doorbell_range_lower),
            get(regs.doorbell_range_upper),
        )
    }

    fn window_index(&self, byte_offset: usize) -> Option<usize> {
        let i = byte_offset.checked_sub(self.window)? / 4;
        (byte_offset.is_multiple_of(4) && i < WINDOW_DWORDS).then_some(i)
    }

    fn slot_atomic(&self, slot: usize) -> Option<&AtomicU64> {
        if slot >= self.doorbell_slots {
            return None;
        }
        // SAFETY: `new`'s contract: `doorbell_slots` aligned u64s at
        // `doorbell_bar`, live as long as `self`, accessed atomically.
        Some(unsafe { AtomicU64::from_ptr((self.doorbell_bar as *mut u64).add(slot)) })
    }

    /// Looks at the doorbell page: every slot whose value changed since
    /// the last look is a doorbell store, handed to the bridge (if any)
    /// and, if it passes, to [`Mec::doorbell`]. `full` scans every slot,
    /// otherwise only those a queue listens on. Returns the stores that
    /// reached a queue.
    pub fn scan_doorbells(&self, full: bool) -> usize {
        let mut changed: [(usize, u64); 16] = [(0, 0); 16];
        let mut n = 0;
        let mut more = true;
        let mut from = 0;
        let mut rang = 0;
        while more {
            more = false;
            {
                let mut w = self.watch.lock();
                let Watch { shadow, hot } = &mut *w;
                let mut look = |i: usize, shadow: &mut Vec<u64>| -> bool {
                    let Some(a) = self.slot_atomic(i) else {
                        return true;
                    };
                    let v = a.load(Ordering::Acquire);
                    if let Some(old) = shadow.get_mut(i)
                        && *old != v
                    {
                        if n == changed.len() {
                            return false;
                        }
                        *old = v;
                        changed[n] = (i, v);
                        n += 1;
                    }
                    true
                };
                if full {
                    for i in from..self.doorbell_slots {
                        if !look(i, shadow) {
                            more = true;
                            from = i;
                            break;
                        }
                    }
                } else {
                    for &i in hot.iter() {
                        if !look(i, shadow) {
                            break;
                        }
                    }
                }
            }
            for &(i, v) in &changed[..n] {
                let dword = (i * 2) as u32;
                let passes = self.bridge.lock().as_ref().is_none_or(|b| b(dword, v));
                if passes && self.doorbell(dword, v) {
                    rang += 1;
                }
            }
            n = 0;
        }
        rang
    }

    /// A doorbell store that reached the GC: the queue listening on
    /// `dword` learns of packets up to `value`. Returns whether a queue
    /// listens there.
    pub fn doorbell(&self, dword: u32, value: u64) -> bool {
        let q = {
            let mut s = self.state.lock();
            let q = s.doorbells.get(&dword).copied();
            if q.is_none() {
                s.unclaimed_doorbells += 1;
            }
            q
        };
        match q {
            Some(q) => {
                self.cp.lock().ring(q, value);
                true
            }
            None => false,
        }
    }

    /// Puts "nothing announced" (`value`) into doorbell `dword`'s slot and
    /// starts watching it: the doorbell is device memory and holds no
    /// stale value for a freshly mapped queue.
    fn arm_doorbell(&self, dword: u32, value: u64) {
        let slot = (dword / 2) as usize;
        let mut w = self.watch.lock();
        if let Some(a) = self.slot_atomic(slot) {
            a.store(value, Ordering::Release);
        }
        if let Some(s) = w.shadow.get_mut(slot) {
            *s = value;
        }
        if !w.hot.contains(&slot) {
            w.hot.push(slot);
        }
    }

    fn disarm_doorbell(&self, dword: u32) {
        let slot = (dword / 2) as usize;
        self.watch.lock().hot.retain(|s| *s != slot);
    }

    /// Checks `hqd` and binds it to the CP model in address space
    /// `space`. `need_doorbell_en` is set for direct loads (the driver
    /// enables the doorbell itself); MES and the KIQ enable it on the
    /// slot they choose.
    /// [`MecError::PipeStarting`] when MEC `pipe` started less than
    /// [`MEC_START_NS`] ago.
    fn pipe_settled(&self, pipe: u8) -> Result<(), MecError> {
        let started = self
            .state
            .lock()
            .mec_started
            .get(usize::from(pipe))
            .copied()
            .flatten();
        if let Some(started) = started {
            let since_ns = self.clock.now_ns().saturating_sub(started);
            if since_ns < MEC_START_NS {
                return Err(MecError::PipeStarting { pipe, since_ns });
            }
        }
        Ok(())
    }

    fn check_and_bind(
        &self,
        slot: SlotKey,
        hqd: &Hqd,
        need_doorbell_en: bool,
        space: AddressSpace,
    ) -> Result<usize, MecError> {
        // One MEC on GC 11/12 (`mec.num_mec = 1`): compute queues live on
        // ME 1 only, whether mapped by MES, the KIQ or registers.
        if slot.0 != 1 || slot.1 >= MEC_PIPES || slot.2 >= 8 {
            return Err(MecError::NotAMecSlot);
        }
        self.pipe_settled(slot.1)?;
        // `CP_HQD_AQL_CONTROL.CONTROL0` clear: a PM4 queue (Linux's
        // kernel compute queues, `gfx_v11_0_compute_mqd_init()`; tinygrad's
        // `setup_ring(..., aql=False)`), run by the CP's PM4 front end
        // (`crate::cp` `pm4`).
        let aql = hqd.aql();
        let too_big = MecError::QueueSize {
            field: hqd.queue_size_field() as u8,
        };
        let ring_bytes = hqd.ring_bytes().map_err(|_| too_big)?;
        let slots = ring_bytes / 64;
        if aql && slots < 4 {
            return Err(MecError::QueueSize {
                field: hqd.queue_size_field() as u8,
            });
        }
        if need_doorbell_en && !hqd.doorbell_enabled() {
            return Err(MecError::DoorbellDisabled);
        }
        // Every queue, MES-mapped too (ADD_QUEUE carries no SH_MEM
        // values), relies on what the driver put in the VMID's bank.
        if let AddressSpace::Vmid(vmid) = space
            && vmid != 0
            && !self.apertures_set(vmid)
        {
            let (config, bases) = self.sh_mem(vmid);
            return Err(MecError::AperturesUnset {
                vmid,
                config,
                bases,
            });
        }
        // No check against `CP_MEC_DOORBELL_RANGE_*`: the range decides
        // which doorbells wake a power-gated GC (`gfx_v9_0_kiq_init_register()`),
        // which the model does not model; KFD's queues ring doorbells
        // past it (see `crate::mes`, ADD_QUEUE).
        let dword = hqd.doorbell_dword();
        if self.state.lock().doorbells.contains_key(&dword) {
            return Err(MecError::DoorbellInUse { dword });
        }
        if hqd.eop_address() == 0 || hqd.eop_size_field() == 0 {
            return Err(MecError::NoEop);
        }
        if let Some(why) = hqd.fetch_refusal() {
            return Err(MecError::FetcherStopped { why });
        }
        // The CP writes the EOP buffer by its declared size
        // (`2^(EOP_SIZE+1)` dwords); one declared past the memory behind
        // it puts the CP's writes where nothing is (the KIQ refuses the
        // same in MAP_QUEUES, `KiqHalt::EopUnmapped`). *Model rule*: the
        // model writes nothing there itself (what the CP keeps in the
        // buffer is not public), so it checks the declared end at load.
        let eop_bytes = hqd.eop_bytes().unwrap_or(u64::MAX);
        if !self.cp.lock().reaches(space, hqd.eop_address(), eop_bytes) {
            return Err(MecError::EopUnbacked {
                address: hqd.eop_address(),
                bytes: eop_bytes,
            });
        }
        let rptr = hqd.rptr_report_address();
        let wptr = hqd.wptr_poll_address();
        let sh_mem_bases = match space {
            AddressSpace::Vmid(vmid) => self.sh_mem(vmid).1,
            _ => 0,
        };
        let mut cp = self.cp.lock();
        let q = if aql {
            let desc = rptr.wrapping_sub(amdq::READ_DISPATCH_ID);
            if desc.wrapping_add(amdq::WRITE_DISPATCH_ID) != wptr {
                return Err(MecError::NotAnAqlDescriptor { rptr, wptr });
            }
            cp.bind_mec(MecBinding {
                ring_base: hqd.ring_address(),
                slots,
                descriptor: desc,
                space,
                pipe: slot.1,
                sh_mem_bases,
            })
        } else {
            cp.bind_pm4(Pm4Binding {
                ring_base: hqd.ring_address(),
                ring_dwords: ring_bytes / 4,
                rptr_report: rptr,
                wptr_poll: wptr,
                wptr: hqd.pq_wptr(),
                rptr: hqd.pq_rptr(),
                space,
                pipe: slot.1,
                gfx: false,
            })
        }
        .map_err(MecError::Bind)?;
        let announced = cp.stats(q).map_or(0, |x| x.announced);
        drop(cp);
        self.arm_doorbell(dword, announced);
        let mut s = self.state.lock();
        s.doorbells.insert(dword, q);
        let bit = 1u32 << ((u32::from(slot.1) * 8 + u32::from(slot.2)) & 31);
        let once = slot.0 == 1 && s.poll_pending & bit != 0;
        s.poll_pending &= !bit;
        if s.running >> slot.1 & 1 == 0 {
            s.events.keep(MecEvent::QueueOnStoppedPipe {
                me: slot.0,
                pipe: slot.1,
                queue: slot.2,
            });
        }
        drop(s);
        if once {
            self.cp.lock().poll_once(q);
        }
        Ok(q)
    }

    /// Maps a graphics queue onto ME 0 `pipe`, `queue` on behalf of MES
    /// (Linux's kernel graphics ring: `amdgpu_gfx_enable_kgq()` →
    /// `mes_v11_0_map_legacy_queue()` with `MES_QUEUE_TYPE_GFX`), from
    /// the `struct v11_gfx_mqd` `gfx_v11_0_gfx_mqd_init()` built. The
    /// pipe must run ([`MecError::GfxPipeNotRunning`]), the MQD name an
    /// enabled doorbell no other queue listens on. The CP runs it as a
    /// PM4 ring ([`crate::cp::Pm4Binding::gfx`]) from the MQD's read and
    /// write pointers.
    pub fn map_gfx(
        &self,
        pipe: u8,
        queue: u8,
        m: &crate::decode::gfx_mqd_v11::GfxMqdV11,
    ) -> Result<usize, MecError> {
        let slot = (0, pipe, queue);
        let r = self.bind_gfx(slot, m);
        let mut s = self.state.lock();
        match r {
            Ok(q) => {
                s.active.insert(slot, q);
                s.events.keep(MecEvent::Activated {
                    me: 0,
                    pipe,
                    queue,
                    cp_queue: q,
                });
            }
            Err(why) => s.events.keep(MecEvent::Refused {
                me: 0,
                pipe,
                queue,
                why,
            }),
        }
        r
    }

    fn bind_gfx(
        &self,
        slot: SlotKey,
        m: &crate::decode::gfx_mqd_v11::GfxMqdV11,
    ) -> Result<usize, MecError> {
        let (_, pipe, queue) = slot;
        if usize::from(pipe) >= crate::gfx_pipes::GFX_PIPES || queue != 0 {
            return Err(MecError::NotAGfxSlot);
        }
        let dword = m.doorbell.ok_or(MecError::DoorbellDisabled)?;
        {
            let s = self.state.lock();
            if !s.gfx.runs(usize::from(pipe)) {
                return Err(MecError::GfxPipeNotRunning { pipe });
            }
            if s.active.contains_key(&slot) {
                return Err(MecError::SlotBusy);
            }
            if s.doorbells.contains_key(&dword) {
                return Err(MecError::DoorbellInUse { dword });
            }
        }
        let mut cp = self.cp.lock();
        let q = cp
            .bind_pm4(Pm4Binding {
                ring_base: m.ring_address,
                ring_dwords: m.ring_dwords,
                rptr_report: m.rptr_address,
                wptr_poll: m.wptr_poll_address,
                wptr: m.wptr,
                rptr: m.rptr,
                space: AddressSpace::Vmid(m.vmid as u8),
                pipe,
                gfx: true,
            })
            .map_err(MecError::Bind)?;
        let announced = cp.stats(q).map_or(0, |x| x.announced);
        drop(cp);
        self.arm_doorbell(dword, announced);
        self.state.lock().doorbells.insert(dword, q);
        Ok(q)
    }

    /// Maps an MQD's HQD image onto a slot on behalf of the KIQ or MES
    /// (the queue runs in the VMID its `CP_HQD_VMID` names).
    pub fn map_mqd(&self, slot: SlotKey, hqd: &Hqd) -> Result<usize, MecError> {
        self.map_in(slot, hqd, AddressSpace::Vmid(hqd.vmid()))
    }

    fn map_in(&self, slot: SlotKey, hqd: &Hqd, space: AddressSpace) -> Result<usize, MecError> {
        let busy = self.state.lock().active.contains_key(&slot);
        let r = if busy {
            Err(MecError::SlotBusy)
        } else {
            self.check_and_bind(slot, hqd, false, space)
        };
        let mut s = self.state.lock();
        match r {
            Ok(q) => {
                let mut bank = *hqd;
                bank.set(w::ACTIVE, bank.get(w::ACTIVE) | cpregs::HQD_ACTIVE_MASK);
                s.banks.insert(slot, bank);
                s.active.insert(slot, q);
                s.events.keep(MecEvent::Activated {
                    me: slot.0,
                    pipe: slot.1,
                    queue: slot.2,
                    cp_queue: q,
                });
            }
            Err(why) => s.events.keep(MecEvent::Refused {
                me: slot.0,
                pipe: slot.1,
                queue: slot.2,
                why,
            }),
        }
        r
    }

    /// Unmaps the queue on doorbell `dword` (MES REMOVE_QUEUE, KIQ
    /// UNMAP_QUEUES). Returns false if none is mapped there.
    pub fn unmap_doorbell(&self, dword: u32) -> bool {
        let mut s = self.state.lock();
        let Some(q) = s.doorbells.remove(&dword) else {
            return false;
        };
        let slot = s.active.iter().find(|(_, v)| **v == q).map(|(k, _)| *k);
        if let Some(k) = slot {
            s.active.remove(&k);
            if let Some(b) = s.banks.get_mut(&k) {
                b.set(w::ACTIVE, b.get(w::ACTIVE) & !cpregs::HQD_ACTIVE_MASK);
            }
            s.events.keep(MecEvent::Dequeued {
                me: k.0,
                pipe: k.1,
                queue: k.2,
            });
        }
        drop(s);
        self.disarm_doorbell(dword);
        self.cp.lock().unbind(q);
        true
    }

    fn on_window_write(&self, slot: SlotKey, i: usize, value: u32) {
        let mut s = self.state.lock();
        let bank = s.banks.entry(slot).or_default();
        let was_active = bank.active();
        bank.set(i, value);
        if i == w::ACTIVE {
            // ACTIVE is set by the activation below, not by the write.
            bank.set(i, value & !cpregs::HQD_ACTIVE_MASK | u32::from(was_active));
            if value & cpregs::HQD_ACTIVE_MASK != 0 && !was_active {
                let image = *bank;
                let set_active = |s: &mut State| {
                    if let Some(b) = s.banks.get_mut(&slot) {
                        b.set(w::ACTIVE, b.get(w::ACTIVE) | cpregs::HQD_ACTIVE_MASK);
                    }
                };
                // `RLC_CP_SCHEDULERS.scheduler0` (enable bit 7) names the
                // KIQ slot (`gfx_v11_0_kiq_setting()`): a PM4 queue there
                // is the KIQ, which the KIQ model runs, not the AQL CP.
                let sched = self
                    .regs
                    .rlc_sched
                    .and_then(|o| s.flat.get(&o).copied())
                    .unwrap_or(0)
                    & cpregs::SCHEDULER0_MASK;
                let named = u32::from(slot.0) << 5 | u32::from(slot.1) << 3 | u32::from(slot.2);
                // A queue loaded on ME 3 is a MES pipe's own ring
                // (`mes_v11_0_queue_init_register()`,
                // `mes_v12_0_queue_init_register()`); MES runs it.
                if slot.0 == 3 {
                    if let Some(why) = image.mes_ring_register_refusal() {
                        s.events
                            .push(MecEvent::MesRingRefused { pipe: slot.1, why });
                        return;
                    }
                    set_active(&mut s);
                    if let Some(r) = s.mes_rings.get_mut(usize::from(slot.1 & 1)) {
                        *r = Some(MesRingHqd {
                            ring: image.ring_address(),
                            // Fits: `mes_ring_register_refusal` checked the size.
                            ring_dwords: image.ring_bytes().map_or(0, |b| b / 4),
                            doorbell_dword: image.doorbell_dword(),
                        });
                    }
                    s.events.keep(MecEvent::MesRingLoaded { pipe: slot.1 });
                    return;
                }
                // Only on ME 1: GC 11/12 have one MEC (`mec.num_mec = 1`),
                // so `amdgpu_gfx_kiq_acquire()` picks an ME 1 slot; a KIQ
                // named on ME 2 falls through to the slot check below and
                // is refused (`NotAMecSlot`), as any HQD there.
                if slot.0 == 1 && !image.aql() && sched & 0x80 != 0 && sched & 0x7F == named {
                    set_active(&mut s);
                    s.kiq = Some(KiqHqd {
                        slot,
                        ring: image.ring_address(),
                        // 0 for a size no memory backs: the KIQ model
                        // halts on that ring (`KiqHalt::Size`).
                        ring_dwords: image.ring_bytes().map_or(0, |b| b / 4),
                        doorbell_dword: image.doorbell_dword(),
                        rptr_report: image.rptr_report_address(),
                    });
                    s.events.keep(MecEvent::KiqActivated {
                        me: slot.0,
                        pipe: slot.1,
                        queue: slot.2,
                    });
                    if s.running >> slot.1 & 1 == 0 {
                        s.events.keep(MecEvent::QueueOnStoppedPipe {
                            me: slot.0,
                            pipe: slot.1,
                            queue: slot.2,
                        });
                    }
                    return;
                }
                drop(s);
                let r = self.check_and_bind(slot, &image, true, AddressSpace::Vmid(image.vmid()));
                let mut s = self.state.lock();
                match r {
                    Ok(q) => {
                        set_active(&mut s);
                        s.active.insert(slot, q);
                        s.events.keep(MecEvent::Activated {
                            me: slot.0,
                            pipe: slot.1,
                            queue: slot.2,
                            cp_queue: q,
                        });
                    }
                    Err(why) => s.events.keep(MecEvent::Refused {
                        me: slot.0,
                        pipe: slot.1,
                        queue: slot.2,
                        why,
                    }),
                }
            }
        } else if i == w::DEQUEUE_REQUEST && value & cpregs::DEQUEUE_REQ_MASK != 0 && was_active {
            if s.faults.dequeue_never_completes {
                return;
            }
            if let Some(&q) = s.active.get(&slot) {
                drop(s);
                let stuck = self.cp.lock().is_stuck(q);
                s = self.state.lock();
                if stuck {
                    s.pending_dequeue.insert(slot);
                    s.events.keep(MecEvent::DequeueStalled {
                        me: slot.0,
                        pipe: slot.1,
                        queue: slot.2,
                    });
                    return;
                }
            }
            drop(s);
            self.complete_dequeue(slot);
        }
    }

    /// Ends a dequeue on `slot`: ACTIVE clears, the doorbell is disarmed,
    /// the CP model queue unbound.
    fn complete_dequeue(&self, slot: SlotKey) {
        let mut s = self.state.lock();
        s.pending_dequeue.remove(&slot);
        {
            let q = s.active.remove(&slot);
            if let Some(b) = s.banks.get_mut(&slot) {
                b.set(w::ACTIVE, b.get(w::ACTIVE) & !cpregs::HQD_ACTIVE_MASK);
            }
            if let Some(q) = q {
                let dword = s.doorbells.iter().find(|(_, v)| **v == q).map(|(k, _)| *k);
                s.doorbells.retain(|_, v| *v != q);
                s.events.keep(MecEvent::Dequeued {
                    me: slot.0,
                    pipe: slot.1,
                    queue: slot.2,
                });
                drop(s);
                if let Some(d) = dword {
                    self.disarm_doorbell(d);
                }
                self.cp.lock().unbind(q);
            }
        }
    }

    /// Re-evaluates which MEC pipes run after a control write.
    fn pipes(&self, s: &mut State) {
        let c = s.mec_cntl;
        let mut running = 0u8;
        for p in 0..MEC_PIPES {
            let i = usize::from(p);
            let on = c & mec_cntl::HALT == 0 && mec_cntl::active(c, p) && !mec_cntl::reset(c, p);
            if !on {
                continue;
            }
            let was = s.running >> p & 1 == 1;
            let program = s.mec_program.get(i).copied().flatten();
            // A start address is taken only if the driver wrote one.
            let Some((lo, hi, _)) = program.filter(|x| x.2) else {
                if !was {
                    s.events.keep(MecEvent::MecPipeNoProgram { pipe: p });
                }
                continue;
            };
            let pc = u64::from(hi) << 32 | u64::from(lo);
            if let Some((elo, ehi)) = s.mec_expected
                && (elo, ehi) != (lo, hi)
            {
                if !was {
                    s.events.keep(MecEvent::MecPipeWrongPc {
                        pipe: p,
                        pc,
                        expected: u64::from(ehi) << 32 | u64::from(elo),
                    });
                }
                continue;
            }
            let loaded = s.firmware.as_ref().is_none_or(|f| f.mec_pipe(p));
            if !loaded || s.mec_code.as_ref().is_some_and(|f| !f(p)) {
                if !was {
                    s.events.keep(MecEvent::MecPipeWithoutCode { pipe: p });
                }
                continue;
            }
            running |= 1 << p;
            if !was {
                s.events.keep(MecEvent::MecPipeRunning { pipe: p, pc });
                let now = self.clock.now_ns();
                if let Some(t) = s.mec_started.get_mut(i) {
                    *t = Some(now);
                }
                s.quiet_since = Some(now);
            }
        }
        for p in 0..MEC_PIPES {
            if s.running >> p & 1 == 1 && running >> p & 1 == 0 {
                s.events.keep(MecEvent::MecPipeStopped { pipe: p });
            }
        }
        if running != s.running {
            let stopped = s.running & !running;
            if stopped != 0 {
                // The firmware on those pipes stops; a KIQ there is
                // forgotten until its HQD is loaded again.
                s.epoch += 1;
                if let Some(k) = s.kiq
                    && matches!(k.slot.0, 1 | 2)
                    && stopped >> k.slot.1 & 1 == 1
                {
                    s.kiq = None;
                    if let Some(b) = s.banks.get_mut(&k.slot) {
                        b.set(w::ACTIVE, b.get(w::ACTIVE) & !cpregs::HQD_ACTIVE_MASK);
                    }
                }
            }
            s.running = running;
            self.cp.lock().set_running_pipes(running);
        }
    }

    /// `gfx_v11_0_config_gfx_rs64()` / `gfx_v11_0_cp_compute_enable()`:
    /// the MEC program counters (banked per pipe, GRBM ME 1) and
    /// `CP_MEC_RS64_CNTL`.
    fn mec_write(&self, s: &mut State, byte_offset: usize, value: u32) {
        let (me, pipe, _) = grbm::slot(s.grbm);
        let p = usize::from(pipe);
        if Some(byte_offset) == self.regs.mec_pc && me == 1 {
            if let Some(pc) = s.mec_pc.get_mut(p) {
                *pc = (value, pc.1, true);
            }
        } else if Some(byte_offset) == self.regs.mec_pc_hi && me == 1 {
            if let Some(pc) = s.mec_pc.get_mut(p) {
                *pc = (pc.0, value, true);
            }
        } else if Some(byte_offset) == self.regs.mec_cntl {
            let old = s.mec_cntl;
            s.mec_cntl = value;
            for q in 0..MEC_PIPES {
                let i = usize::from(q);
                if mec_cntl::reset(value, q) {
                    // In reset: no program until the reset is released.
                    if let Some(x) = s.mec_program.get_mut(i) {
                        *x = None;
                    }
                } else if mec_cntl::reset(old, q)
                    && let (Some(x), Some(pc)) = (s.mec_program.get_mut(i), s.mec_pc.get(i))
                {
                    // Leaving reset: the pipe takes its start address.
                    *x = Some(*pc);
                }
            }
            self.pipes(s);
        } else if let Some(reg) = self.gfx_reg(byte_offset) {
            let grbm = s.grbm;
            for e in s.gfx.write(grbm, reg, value) {
                s.events.keep(MecEvent::GfxPipe(e));
            }
        } else if Some(byte_offset) == self.regs.wptr_poll_cntl {
            self.cp
                .lock()
                .set_wptr_polling(value & cpregs::WPTR_POLL_EN_MASK != 0);
        } else if Some(byte_offset) == self.regs.wptr_poll_cntl1 {
            // `get_queue_mask()`: bit pipe * 8 + queue of MEC 1. Active
            // queues poll once now, the others when they activate.
            let mut now = Vec::new();
            for (&(me, p, q), &cq) in &s.active {
                let bit = u32::from(p) * 8 + u32::from(q);
                if me == 1 && bit < 32 && value >> bit & 1 == 1 {
                    now.push(cq);
                }
            }
            s.poll_pending |= value;
            let mut cp = self.cp.lock();
            for q in now {
                cp.poll_once(q);
            }
        } else if Some(byte_offset) == self.regs.sh_mem_config
            || Some(byte_offset) == self.regs.sh_mem_bases
        {
            let v = usize::from(grbm::vmid(s.grbm));
            let config = Some(byte_offset) == self.regs.sh_mem_config;
            if let Some(e) = s.sh_mem.get_mut(v) {
                if config {
                    e.0 = value;
                } else {
                    e.1 = value;
                }
            }
        }
    }

    /// `mes_v11_0_enable()`'s view of the MES pipes: program counters are
    /// banked per pipe (GRBM ME 3); a pipe runs once `MES_PIPEn_ACTIVE` is
    /// set with its program counter programmed and its code in place
    /// (the PSP's RLC autoload loaded it), and stops on `MES_HALT`.
    fn mes_write(&self, s: &mut State, byte_offset: usize, value: u32) {
        let (me, pipe, _) = grbm::slot(s.grbm);
        let p = usize::from(pipe & 1);
        if Some(byte_offset) == self.regs.mes_pc && me == 3 {
            s.mes_pc[p] = s.mes_pc[p] & !0xFFFF_FFFF | u64::from(value);
        } else if Some(byte_offset) == self.regs.mes_pc_hi && me == 3 {
            s.mes_pc[p] = s.mes_pc[p] & 0xFFFF_FFFF | u64::from(value) << 32;
        } else if Some(byte_offset) == self.regs.mes_cntl {
            if value & mes_cntl::HALT != 0 {
                if s.mes_running.iter().any(|r| *r) {
                    // The MES firmware stops: a restarted one knows only
                    // the rings it is given again (*model rule*: the
                    // scheduler state lives in the firmware).
                    s.epoch += 1;
                    s.mes_rings = [None; 2];
                    if s.kiq.is_some_and(|k| k.slot.0 == 3) {
                        s.kiq = None;
                    }
                    // And its queues (the MES rings, the gfx11 KIQ on
                    // pipe 1) are no longer active: loading them again
                    // starts them again.
                    for (k, b) in s.banks.iter_mut() {
                        if k.0 == 3 {
                            b.set(w::ACTIVE, b.get(w::ACTIVE) & !cpregs::HQD_ACTIVE_MASK);
                        }
                    }
                }
                s.mes_running = [false; 2];
            }
            let active = [
                value & mes_cntl::PIPE0_ACTIVE != 0,
                value & mes_cntl::PIPE1_ACTIVE != 0,
            ];
            for (i, a) in active.into_iter().enumerate() {
                if !a || s.mes_running[i] {
                    continue;
                }
                let code = s.firmware.as_ref().is_none_or(|f| f.mes_pipe(i as u8));
                if !code {
                    s.events
                        .push(MecEvent::MesPipeWithoutCode { pipe: i as u8 });
                } else if s.mes_pc[i] != 0 {
                    s.mes_running[i] = true;
                }
            }
        }
    }

    /// The first CP register access after MEC pipes started ends the
    /// quiet time [`Mec::start_quiet_ns`] reports.
    fn note_quiet(&self) {
        let mut s = self.state.lock();
        if let Some(t) = s.quiet_since.take() {
            s.start_quiet = Some(self.clock.now_ns().saturating_sub(t));
        }
    }

    /// Which PFP/ME register `byte_offset` is, if any.
    fn gfx_reg(&self, byte_offset: usize) -> Option<GfxReg> {
        let r = &self.regs;
        let at = Some(byte_offset);
        [
            (r.me_cntl, GfxReg::Cntl),
            (r.pfp_pc, GfxReg::Pc(Engine::Pfp)),
            (r.pfp_pc_hi, GfxReg::PcHi(Engine::Pfp)),
            (r.me_pc, GfxReg::Pc(Engine::Me)),
            (r.me_pc_hi, GfxReg::PcHi(Engine::Me)),
        ]
        .into_iter()
        .find(|(o, _)| *o == at && o.is_some())
        .map(|(_, g)| g)
    }

    fn banked_read(&self, s: &State, byte_offset: usize) -> Option<u32> {
        if let Some(reg) = self.gfx_reg(byte_offset) {
            return Some(s.gfx.read(s.grbm, reg));
        }
        if Some(byte_offset) == self.regs.sh_mem_config
            || Some(byte_offset) == self.regs.sh_mem_bases
        {
            let e = s.sh_mem.get(usize::from(grbm::vmid(s.grbm)))?;
            return Some(if Some(byte_offset) == self.regs.sh_mem_config {
                e.0
            } else {
                e.1
            });
        }
        let (me, pipe, _) = grbm::slot(s.grbm);
        let pc = s.mec_pc.get(usize::from(pipe))?;
        if me == 1 && Some(byte_offset) == self.regs.mec_pc {
            return Some(pc.0);
        }
        if me == 1 && Some(byte_offset) == self.regs.mec_pc_hi {
            return Some(pc.1);
        }
        if Some(byte_offset) == self.regs.mec_cntl {
            return Some(s.mec_cntl);
        }
        None
    }
}

impl RegisterBus for Mec {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.note_quiet();
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        s.reads += 1;
        if s.unplugged || !byte_offset.is_multiple_of(4) {
            return ALL_ONES;
        }
        if let Some(i) = self.window_index(byte_offset) {
            let k = grbm::slot(s.grbm);
            return s.banks.get(&k).map_or(0, |b| b.get(i));
        }
        if Some(byte_offset) == self.regs.grbm_gfx_cntl {
            return s.grbm;
        }
        if Some(byte_offset) == self.regs.mes_gp3 {
            let (me, pipe, _) = grbm::slot(s.grbm);
            let p = usize::from(pipe & 1);
            return if me == 3 && s.mes_running[p] {
                s.mes_versions[p]
            } else {
                0
            };
        }
        if let Some(v) = self.banked_read(&s, byte_offset) {
            return v;
        }
        s.flat.get(&byte_offset).copied().unwrap_or(0)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.note_quiet();
        self.clock.advance(ACCESS_NS);
        let slot = {
            let mut s = self.state.lock();
            s.writes += 1;
            if s.unplugged || !byte_offset.is_multiple_of(4) {
                return;
            }
            if Some(byte_offset) == self.regs.grbm_gfx_cntl {
                s.grbm = value;
                return;
            }
            if self.window_index(byte_offset).is_none() {
                self.mes_write(&mut s, byte_offset, value);
                self.mec_write(&mut s, byte_offset, value);
                s.flat.insert(byte_offset, value);
                return;
            }
            grbm::slot(s.grbm)
        };
        if let Some(i) = self.window_index(byte_offset) {
            self.on_window_write(slot, i, value);
        }
    }
}
