//! A model of the hardware scheduler (HWS) KFD drives in CPSCH mode on
//! GC 9.x: the firmware on the MEC that reads the HIQ, maps processes and
//! queues from the runlist IB that RUN_LIST names, and answers
//! QUERY_STATUS with a fence.
//!
//! Packets are decoded with the model's own table
//! ([`crate::decode::pm4_hws`], written from `kfd_pm4_headers_ai.h`,
//! `kfd_pm4_headers_aldebaran.h`, `kfd_pm4_opcodes.h`); nothing here reads
//! the runtime's types. The block runs over model memory ([`Dma`]) and is
//! driven by a rig calling [`HwsModel::service`]; it is not wired into the
//! MEC model.
//!
//! # What is public and what is the model's convention
//!
//! The HWS firmware is not public. What is:
//! - the packet layouts (the headers above) and what KFD puts in them
//!   (`kfd_packet_manager_v9.c`), and the runlist IB layout
//!   (`pm_create_runlist_ib()`): MAP_PROCESS, then that process's
//!   MAP_QUEUES, for each process; an over-subscribed list ends in a
//!   RUN_LIST chaining back to the IB's start;
//! - that SET_RESOURCES' `vmid_mask` is the set of VMIDs the scheduler may
//!   hand to processes, and that the processes mapped at once cannot
//!   exceed it (`pm_runlist_v9()`'s comment on `process_cnt`);
//! - that the scheduler writes the VMID→PASID mapping KFD reads back
//!   through `ATC_VMID<n>_PASID_MAPPING` (`PASID`, `VALID`;
//!   `kgd_gfx_v9_get_atc_vmid_pasid_mapping_info()`, scanned over
//!   KFD's VMIDs by `dbgdev_wave_reset_wavefronts()` to find a process's
//!   VMID, so KFD itself does not know the VMID beforehand);
//! - that a packet the scheduler does not complete shows up at KFD only as
//!   a QUERY_STATUS fence that never comes: `amdkfd_fence_wait_timeout()`
//!   times out after `queue_preemption_timeout_ms`, `unmap_queues_cpsch()`
//!   logs "The cp might be in an unrecoverable state" and calls
//!   `kfd_hws_hang()` (a GPU reset). There is no error status;
//! - UNMAP_QUEUES' two actions (`pm_unmap_queues_v9()`: `reset` picks
//!   `action__mes_unmap_queues__reset_queues`, else preempt). A PREEMPT of
//!   a compute queue that does not answer is *abandoned*: the comment in
//!   `unmap_queues_cpsch()` says the MEC firmware completes the packet
//!   with no error and logs the unresponding queue's doorbell in the HIQ
//!   MQD's `queue_doorbell_id0`, which KFD reads per XCC after the fence
//!   (`check_preemption_failed_v9_4_3()` → `kfd_check_hiq_mqd_doorbell_id()`,
//!   "Queue preemption failed for queue with doorbell_id") and then
//!   clears. RESET (`reset_queues_cpsch()`) takes the queues off without
//!   waiting for them. The block reports both to its MEC through
//!   [`HwsCp`]; *model conventions*: a queue "does not answer" when its
//!   waves are hung (the CP's view), the whole request is abandoned (no
//!   queue of it leaves, the runlist stays), and the doorbell logged is the
//!   dword offset MAP_QUEUES named.
//!
//! Model conventions (labelled so, not documented behaviour):
//! - **VMIDs**: processes get VMIDs in runlist order, the lowest free VMID
//!   of `vmid_mask` first, for the first `process_cnt` processes; the
//!   others (an over-subscribed list) wait without a VMID: the model does
//!   not time-slice (`process_quantum`).
//! - **Refusal**: a packet the model refuses halts the HIQ: nothing after
//!   it runs, so its QUERY_STATUS fence is never written (what KFD sees as
//!   the HWS hang), and the reason is kept in [`HwsModel::refusal`] and
//!   the log. What the real firmware checks is unknown; the model checks
//!   the formats the headers and KFD's fill functions fix (reserved bits
//!   zero, the page-table base a valid PDE as `amdgpu_gmc_pd_addr()` makes
//!   it, `num_queues` equal to the MAP_QUEUES that follow, a MAP_QUEUES
//!   only after a MAP_PROCESS, the IB in readable memory, compute
//!   doorbells inside `CP_MEC_DOORBELL_RANGE`).
//! - **Doorbell range**: the model takes the range from its
//!   configuration (the rig passes what it programmed in
//!   `CP_MEC_DOORBELL_RANGE_LOWER/UPPER`). Linux itself puts KFD's process
//!   doorbells past `_UPPER` on GC 9.4.3 (`gfx_v9_4_3_xcc_kiq_init_register()`
//!   covers amdgpu's own user-queue block), so this check is the model's.
//! - **SDMA queues** (MAP_QUEUES with an SDMA `engine_sel`,
//!   `pm_map_queues_v9()`): the rig gives the part's SDMA engines and
//!   doorbell plan ([`HwsModel::set_sdma`], [`SdmaEngines`]); without it
//!   an SDMA queue is refused. The engine must be one of the part's
//!   (`kfd_get_num_sdma_engines()` + the XGMI ones: every instance on a
//!   one-partition part, engine = instance, *model convention* for SPX);
//!   the MQD must decode as a `struct v9_sdma_mqd`
//!   ([`crate::decode::sdma_mqd_v9`]) naming the same engine and doorbell;
//!   the doorbell must lie in that engine's range as KFD assigns it
//!   (`allocate_doorbell()`: `sdma_doorbell_idx[engine]` =
//!   `AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_START + engine *
//!   sdma_doorbell_range / 2` from `aqua_vanjaram_doorbell_index_init()`,
//!   plus `KFD_QUEUE_DOORBELL_MIRROR_OFFSET` (512) for odd queues), taken
//!   within the process's 1024-doorbell slice. The model keeps the queue
//!   ([`HwsModel::sdma_queues`]); a device starts the engine on it
//!   ([`HwsSdmaQueue::engine_queue`], [`crate::sdma::SdmaModel::map_scheduled`]).
//! - A second RUN_LIST replaces the first (KFD always unmaps everything
//!   first: `map_queues_cpsch()` returns while a runlist is active);
//!   SET_RESOURCES while a runlist is mapped, MAP_PROCESS/MAP_QUEUES
//!   directly on the HIQ, debug processes (`diq_enable`, debug-interface
//!   queues) and interrupt-only QUERY_STATUS are refused as not modelled.

use crate::decode::pm4_hws::{self as p, mp, mq, qs, sr, uq};
use crate::decode::sdma_mqd_v9::{SDMA_MQD_BYTES, SdmaMqdV9, SdmaMqdV9Fault};
use crate::dma::Dma;
use crate::log::Keep;
use alloc::vec;
use alloc::vec::Vec;
use barebell_facts::Fact;
use core::sync::atomic::Ordering;
use spin::Mutex;

/// `ATC_VMID0_PASID_MAPPING` fields (`athub_1_8_0_sh_mask.h`).
pub const ATC_PASID_MASK: u32 = 0x0000_FFFF;
pub const ATC_VALID_MASK: u32 = 0x8000_0000;

/// Page-directory base: address bits 47:12 and the flags
/// `amdgpu_ttm_tt_pde_flags()` sets (`AMDGPU_PTE_VALID`, `_SYSTEM`,
/// `_SNOOPED`, bits 0..2 of `amdgpu_vm.h`, which does not compile outside
/// the kernel and so rests on its citation).
pub const PDE_ADDRESS: u64 = 0x0000_FFFF_FFFF_F000;
pub const PDE_VALID: u64 = 1;
pub const PDE_FLAGS: u64 = 0b111;

/// How deep chained runlist IBs may nest before the model refuses (model
/// value: KFD chains at most once, back to the same IB).
pub const MAX_CHAIN: usize = 8;

/// Where the HIQ is and what the rig programmed around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwsConfig {
    /// Ring base (device address) and size in dwords.
    pub ring: u64,
    pub ring_dwords: u64,
    /// The 64-bit doorbell slot the driver stores the write pointer
    /// (dwords) to.
    pub doorbell: u64,
    /// MAP_PROCESS size: 21 (aldebaran form, GC 9.4.2–9.4.4) or 16 (v9).
    pub map_process_dwords: usize,
}

/// The part's SDMA engines and their doorbells, for MAP_QUEUES on an
/// SDMA engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaEngines {
    /// Engines KFD's node may map (`get_num_all_sdma_engines()`): the
    /// SDMA instances discovery lists on a one-partition part.
    pub engines: u8,
    /// Engine 0's first 64-bit doorbell index
    /// (`AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_START`).
    pub doorbell_start: u32,
    /// Doorbell dwords per engine (`sdma_doorbell_range`).
    pub range_dwords: u32,
}

/// `AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_START` (`amdgpu_doorbell.h`).
pub const LAYOUT1_SDMA_ENGINE_START: u32 = 0x100;
/// `adev->doorbell_index.sdma_doorbell_range` in
/// `aqua_vanjaram_doorbell_index_init()` (a `.c` value: no header fact).
pub const AQUA_VANJARAM_SDMA_DOORBELL_RANGE: u32 = 20;
/// `AMDGPU_VEGA20_DOORBELL_sDMA_ENGINE0` (an enum value of
/// `amdgpu_doorbell.h`, which does not compile outside the kernel: rests
/// on its citation).
pub const VEGA20_SDMA_ENGINE0: u32 = 0x100;
/// `adev->doorbell_index.sdma_doorbell_range` in
/// `vega20_doorbell_index_init()` (a `.c` value).
pub const VEGA20_SDMA_DOORBELL_RANGE: u32 = 20;
/// `KFD_QUEUE_DOORBELL_MIRROR_OFFSET` (`kfd_priv.h`, not compilable
/// outside the kernel: rests on its citation).
pub const DOORBELL_MIRROR_OFFSET: u32 = 512;
/// 64-bit doorbells in one KFD process slice
/// (`kfd_doorbell_process_slice()`: 8 bytes × 1024 queues).
pub const PROCESS_SLICE_DOORBELLS: u32 = 1024;

impl SdmaEngines {
    /// GC 9.4.3's plan (`aqua_vanjaram_doorbell_index_init()`) for
    /// `engines` SDMA instances.
    pub const fn aqua_vanjaram(engines: u8) -> Self {
        SdmaEngines {
            engines,
            doorbell_start: LAYOUT1_SDMA_ENGINE_START,
            range_dwords: AQUA_VANJARAM_SDMA_DOORBELL_RANGE,
        }
    }

    /// Aldebaran's plan (`vega20_doorbell_index_init()`:
    /// `AMDGPU_VEGA20_DOORBELL_sDMA_ENGINE0` = 0x100, engines 0xA apart,
    /// `sdma_doorbell_range = 20`; KFD takes `sdma_doorbell_idx` from
    /// `doorbell_index.sdma_engine`, `amdgpu_amdkfd_device_init()`) for
    /// `engines` SDMA instances. The same numbers as GC 9.4.3's; KFD does
    /// not align them on GC 9.4.2 (`allocate_doorbell()`), which
    /// [`SdmaEngines::contains`] allows either way.
    pub const fn vega20(engines: u8) -> Self {
        SdmaEngines {
            engines,
            doorbell_start: VEGA20_SDMA_ENGINE0,
            range_dwords: VEGA20_SDMA_DOORBELL_RANGE,
        }
    }

    /// Engine `engine`'s 64-bit doorbell indices within a slice (and
    /// their mirror at +512): `[first, first + range / 2)`.
    pub const fn range(&self, engine: u8) -> (u32, u32) {
        let first = self.doorbell_start + engine as u32 * (self.range_dwords / 2);
        (first, first + self.range_dwords / 2)
    }

    /// Whether doorbell dword `doorbell_offset` (MAP_QUEUES' unit) is one
    /// of `engine`'s: an even dword whose 64-bit index within its process
    /// slice, less the mirror offset, lies in [`SdmaEngines::range`].
    pub const fn contains(&self, engine: u8, doorbell_offset: u32) -> bool {
        if !doorbell_offset.is_multiple_of(2) {
            return false;
        }
        let index = (doorbell_offset / 2) % PROCESS_SLICE_DOORBELLS % DOORBELL_MIRROR_OFFSET;
        let (lo, hi) = self.range(engine);
        index >= lo && index < hi
    }
}

/// Why the model halted the HIQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwsRefusal {
    NotType3 {
        header: u32,
        in_ib: bool,
    },
    UnknownOpcode {
        opcode: u32,
    },
    /// A packet that does not belong where it was found (MAP_PROCESS on
    /// the HIQ, SET_RESOURCES in an IB, ...).
    Misplaced {
        opcode: u32,
        in_ib: bool,
    },
    /// A packet whose length is not its struct's.
    BadSize {
        opcode: u32,
        dwords: usize,
        expected: usize,
    },
    /// A packet running past the end of the IB.
    Truncated {
        opcode: u32,
        ib: u64,
    },
    ReservedBits {
        opcode: u32,
        bits: u32,
    },
    NoResources,
    BadResources {
        what: &'static str,
    },
    BadRunList {
        what: &'static str,
    },
    /// The IB is not (all) in memory the scheduler may read.
    IbOutOfRange {
        address: u64,
        bytes: u64,
    },
    BadProcess {
        pasid: u16,
        what: &'static str,
    },
    PageTableBase {
        pasid: u16,
        value: u64,
    },
    QueueCountMismatch {
        pasid: u16,
        declared: u16,
        found: u16,
    },
    QueueWithoutProcess {
        doorbell_offset: u32,
    },
    DuplicateDoorbell {
        doorbell_offset: u32,
    },
    DuplicatePasid {
        pasid: u16,
    },
    /// `process_cnt` is 0 or more than the VMIDs SET_RESOURCES gave.
    ProcessCount {
        process_cnt: u32,
        vmids: u32,
    },
    BadQueue {
        doorbell_offset: u32,
        what: &'static str,
    },
    MqdUnreadable {
        address: u64,
    },
    /// MAP_QUEUES names an SDMA engine the part does not have (or the rig
    /// gave no SDMA engines: `engines` 0).
    SdmaEngineOutOfRange {
        doorbell_offset: u32,
        engine: u8,
        engines: u8,
    },
    /// The MQD of an SDMA queue is not a valid `struct v9_sdma_mqd`.
    SdmaMqd {
        doorbell_offset: u32,
        address: u64,
        fault: SdmaMqdV9Fault,
    },
    /// An SDMA queue's doorbell is outside its engine's doorbells.
    SdmaDoorbellOutOfRange {
        doorbell_offset: u32,
        engine: u8,
        /// The engine's 64-bit doorbell indices, `[first, end)`.
        first: u32,
        end: u32,
    },
    WptrUnreadable {
        address: u64,
    },
    BadUnmap {
        what: &'static str,
    },
    UnknownQueue {
        doorbell_offset: u32,
    },
    BadQuery {
        what: &'static str,
    },
    FenceUnmapped {
        address: u64,
    },
}

impl core::fmt::Display for HwsRefusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use HwsRefusal::*;
        let n = p::name;
        match *self {
            NotType3 { header, in_ib } => write!(
                f,
                "{} dword {header:#x} is not a type-3 packet header",
                if in_ib { "runlist IB" } else { "HIQ" }
            ),
            UnknownOpcode { opcode } => write!(f, "opcode {opcode:#x} is not an HWS packet"),
            Misplaced { opcode, in_ib } => write!(
                f,
                "{} does not belong {}",
                n(opcode),
                if in_ib {
                    "in a runlist IB"
                } else {
                    "on the HIQ"
                }
            ),
            BadSize {
                opcode,
                dwords,
                expected,
            } => write!(f, "{} of {dwords} dwords, expected {expected}", n(opcode)),
            Truncated { opcode, ib } => {
                write!(
                    f,
                    "{} runs past the end of the runlist IB at {ib:#x}",
                    n(opcode)
                )
            }
            ReservedBits { opcode, bits } => {
                write!(f, "{} sets reserved bits {bits:#x}", n(opcode))
            }
            NoResources => write!(f, "RUN_LIST before SET_RESOURCES"),
            BadResources { what } => write!(f, "SET_RESOURCES: {what}"),
            BadRunList { what } => write!(f, "RUN_LIST: {what}"),
            IbOutOfRange { address, bytes } => write!(
                f,
                "runlist IB of {bytes:#x} bytes at {address:#x} is not in memory the HWS may read"
            ),
            BadProcess { pasid, what } => write!(f, "MAP_PROCESS for PASID {pasid}: {what}"),
            PageTableBase { pasid, value } => write!(
                f,
                "MAP_PROCESS for PASID {pasid}: page-table base {value:#x} is not a valid PDE"
            ),
            QueueCountMismatch {
                pasid,
                declared,
                found,
            } => write!(
                f,
                "MAP_PROCESS for PASID {pasid} declares {declared} queues, {found} MAP_QUEUES follow"
            ),
            QueueWithoutProcess { doorbell_offset } => write!(
                f,
                "MAP_QUEUES (doorbell {doorbell_offset:#x}) with no MAP_PROCESS before it"
            ),
            DuplicateDoorbell { doorbell_offset } => {
                write!(f, "two queues on doorbell {doorbell_offset:#x}")
            }
            DuplicatePasid { pasid } => write!(f, "PASID {pasid} mapped twice"),
            ProcessCount { process_cnt, vmids } => write!(
                f,
                "process_cnt {process_cnt} with {vmids} VMIDs from SET_RESOURCES"
            ),
            BadQueue {
                doorbell_offset,
                what,
            } => write!(f, "MAP_QUEUES (doorbell {doorbell_offset:#x}): {what}"),
            MqdUnreadable { address } => write!(f, "MQD at {address:#x} is not in device memory"),
            SdmaEngineOutOfRange {
                doorbell_offset,
                engine,
                engines,
            } => write!(
                f,
                "MAP_QUEUES (doorbell {doorbell_offset:#x}) names SDMA engine {engine}; the part has {engines}"
            ),
            SdmaMqd {
                doorbell_offset,
                address,
                fault,
            } => write!(
                f,
                "MAP_QUEUES (doorbell {doorbell_offset:#x}): the MQD at {address:#x} is not a v9 SDMA MQD: {fault}"
            ),
            SdmaDoorbellOutOfRange {
                doorbell_offset,
                engine,
                first,
                end,
            } => write!(
                f,
                "SDMA engine {engine} queue on doorbell dword {doorbell_offset:#x}: outside the engine's doorbells {first:#x}..{end:#x} (and their mirror at +512)"
            ),
            WptrUnreadable { address } => {
                write!(f, "write pointer at {address:#x} is not in device memory")
            }
            BadUnmap { what } => write!(f, "UNMAP_QUEUES: {what}"),
            UnknownQueue { doorbell_offset } => {
                write!(
                    f,
                    "UNMAP_QUEUES names unmapped doorbell {doorbell_offset:#x}"
                )
            }
            BadQuery { what } => write!(f, "QUERY_STATUS: {what}"),
            FenceUnmapped { address } => {
                write!(
                    f,
                    "QUERY_STATUS fence at {address:#x} is not in device memory"
                )
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwsEvent {
    Done { opcode: u32 },
    Refused { opcode: u32, why: HwsRefusal },
}

/// A process from the runlist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappedProcess {
    pub pasid: u16,
    /// `None`: waiting for a quantum (model convention, see module docs).
    pub vmid: Option<u8>,
    pub page_table_base: u64,
    pub sh_mem_config: u32,
    pub sh_mem_bases: u32,
    pub num_queues: u16,
}

/// The engine a mapped queue runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueEngine {
    Compute,
    Sdma(u8),
}

/// A queue from the runlist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappedQueue {
    pub pasid: u16,
    pub engine: QueueEngine,
    pub doorbell_offset: u32,
    pub mqd: u64,
    pub wptr: u64,
    /// `normal_latency_static` (KFD: queues of a debugged process).
    pub is_static: bool,
}

/// What the MEC needs to run a mapped compute queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MecQueue {
    pub mqd: u64,
    pub doorbell_offset: u32,
    pub vmid: u8,
    pub pasid: u16,
    pub wptr: u64,
}

/// An SDMA queue the runlist mapped, with its MQD as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwsSdmaQueue {
    pub pasid: u16,
    /// The process's VMID (`None` while it waits for a quantum).
    pub vmid: Option<u8>,
    /// The SDMA engine: the instance on a one-partition part.
    pub engine: u8,
    /// `sdma_queue_id` from the MQD.
    pub queue: u32,
    pub doorbell_offset: u32,
    pub mqd_address: u64,
    pub mqd: SdmaMqdV9,
}

impl HwsSdmaQueue {
    /// The queue as the engine runs it once the scheduler loaded the MQD:
    /// ring, size, read-pointer write-back and doorbell from the MQD, and
    /// the VMID the scheduler gave the process (KFD's HWS-mode MQD
    /// carries `q->vmid` 0: the firmware supplies it; *model convention*
    /// for how). `None` while the process has no VMID.
    pub fn engine_queue(&self) -> Option<crate::sdma::SdmaQueue> {
        Some(crate::sdma::SdmaQueue {
            ring: self.mqd.ring_address,
            bytes: self.mqd.ring_bytes,
            vmid: u32::from(self.vmid?),
            rptr_report: self.mqd.rptr_address,
            wptr_poll: self.mqd.wptr_poll_address,
            doorbell: Some(self.mqd.doorbell_dword),
        })
    }
}

/// The runlist as last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunlistState {
    pub ib: u64,
    pub ib_dwords: u32,
    pub process_cnt: u32,
    /// The IB chained back to one already read (KFD's over-subscription).
    pub loops: bool,
    /// IBs read (1 + chained ones).
    pub ibs: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resources {
    pub vmid_mask: u16,
    pub queue_mask: u64,
    pub gws_mask: u64,
    pub unmap_latency: u8,
}

#[derive(Debug, Default)]
struct State {
    rptr: u64,
    halted: Option<HwsRefusal>,
    log: Vec<HwsEvent>,
    resources: Option<Resources>,
    processes: Vec<MappedProcess>,
    queues: Vec<MappedQueue>,
    /// The SDMA queues among `queues`, with their MQDs.
    sdma: Vec<(u32, u8, SdmaMqdV9)>,
    runlist: Option<RunlistState>,
}

/// What the scheduler needs from the MEC it runs on while it unmaps: the
/// CP's view of a queue's waves, and the two things an UNMAP_QUEUES does
/// to them (see the module docs).
pub trait HwsCp {
    /// Whether the compute queue with this doorbell (dword offset) has
    /// waves that never drain, so a preemption of it never completes.
    fn hung(&self, doorbell_offset: u32) -> bool;
    /// A PREEMPT_QUEUES abandoned on this queue: the firmware logs its
    /// doorbell in the HIQ MQD (`queue_doorbell_id0`).
    fn preemption_failed(&self, doorbell_offset: u32);
    /// A RESET_QUEUES of this queue: its waves are killed.
    fn reset(&self, doorbell_offset: u32);
}

/// A scheduler with no CP behind it (a rig serving only the HIQ): no
/// queue ever hangs.
#[derive(Debug)]
pub struct NoCp;

impl HwsCp for NoCp {
    fn hung(&self, _: u32) -> bool {
        false
    }
    fn preemption_failed(&self, _: u32) {}
    fn reset(&self, _: u32) {}
}

/// The HWS firmware on the HIQ.
#[derive(Debug)]
pub struct HwsModel {
    cfg: HwsConfig,
    sdma: Mutex<Option<SdmaEngines>>,
    state: Mutex<State>,
}

/// A runlist being read.
struct Parse {
    processes: Vec<MappedProcess>,
    queues: Vec<MappedQueue>,
    sdma: Vec<(u32, u8, SdmaMqdV9)>,
    /// Queues seen for the last process.
    current: Option<(usize, u16)>,
    visited: Vec<u64>,
    loops: bool,
}

fn word(mem: &Dma, at: u64, what: &'static str) -> Option<u32> {
    mem.u32(at, what).ok().map(|a| a.load(Ordering::Acquire))
}

impl HwsModel {
    pub fn new(cfg: HwsConfig) -> Self {
        HwsModel {
            cfg,
            sdma: Mutex::new(None),
            state: Mutex::new(State::default()),
        }
    }

    /// The part's SDMA engines and doorbells (from discovery and the
    /// doorbell plan): what MAP_QUEUES on an SDMA engine is checked
    /// against.
    pub fn set_sdma(&self, engines: SdmaEngines) {
        *self.sdma.lock() = Some(engines);
    }

    /// The SDMA queues mapped now, in runlist order, each with its
    /// process's VMID and its MQD.
    pub fn sdma_queues(&self) -> Vec<HwsSdmaQueue> {
        let s = self.state.lock();
        s.queues
            .iter()
            .filter_map(|q| {
                let (_, engine, mqd) = *s.sdma.iter().find(|e| e.0 == q.doorbell_offset)?;
                Some(HwsSdmaQueue {
                    pasid: q.pasid,
                    vmid: s.processes.iter().find(|p| p.pasid == q.pasid)?.vmid,
                    engine,
                    queue: mqd.queue,
                    doorbell_offset: q.doorbell_offset,
                    mqd_address: q.mqd,
                    mqd,
                })
            })
            .collect()
    }

    pub fn config(&self) -> HwsConfig {
        self.cfg
    }

    pub fn refusal(&self) -> Option<HwsRefusal> {
        self.state.lock().halted
    }

    pub fn is_halted(&self) -> bool {
        self.state.lock().halted.is_some()
    }

    pub fn log(&self) -> Vec<HwsEvent> {
        self.state.lock().log.clone()
    }

    pub fn resources(&self) -> Option<Resources> {
        self.state.lock().resources
    }

    pub fn runlist(&self) -> Option<RunlistState> {
        self.state.lock().runlist
    }

    pub fn processes(&self) -> Vec<MappedProcess> {
        self.state.lock().processes.clone()
    }

    pub fn queues(&self) -> Vec<MappedQueue> {
        self.state.lock().queues.clone()
    }

    /// The compute queues running now (their process has a VMID), in
    /// runlist order: what the MEC needs to run each.
    pub fn mec_queues(&self) -> Vec<MecQueue> {
        let s = self.state.lock();
        s.queues
            .iter()
            .filter(|q| q.engine == QueueEngine::Compute)
            .filter_map(|q| {
                let vmid = s.processes.iter().find(|p| p.pasid == q.pasid)?.vmid?;
                Some(MecQueue {
                    mqd: q.mqd,
                    doorbell_offset: q.doorbell_offset,
                    vmid,
                    pasid: q.pasid,
                    wptr: q.wptr,
                })
            })
            .collect()
    }

    /// `ATC_VMID<vmid>_PASID_MAPPING` as KFD reads it back
    /// (`kgd_gfx_v9_get_atc_vmid_pasid_mapping_info()`): `VALID | PASID`
    /// for a VMID the scheduler gave a process, else 0.
    pub fn atc_vmid_pasid_mapping(&self, vmid: u8) -> u32 {
        self.state
            .lock()
            .processes
            .iter()
            .find(|p| p.vmid == Some(vmid))
            .map_or(0, |p| {
                ATC_VALID_MASK | (u32::from(p.pasid) & ATC_PASID_MASK)
            })
    }

    /// Executes every packet the doorbell announces, with no CP behind
    /// the scheduler ([`NoCp`]). Returns how many.
    pub fn service(&self, mem: &Dma) -> usize {
        self.service_on(mem, &NoCp)
    }

    /// Executes every packet the doorbell announces, on the MEC `cp`
    /// stands for. Returns how many.
    pub fn service_on(&self, mem: &Dma, cp: &dyn HwsCp) -> usize {
        if self.is_halted() {
            return 0;
        }
        let Some(wptr) = mem
            .u64(self.cfg.doorbell, "HIQ doorbell")
            .ok()
            .map(|a| a.load(Ordering::Acquire))
        else {
            return 0;
        };
        let n_ring = self.cfg.ring_dwords.max(1);
        let ring_dword = |i: u64| word(mem, self.cfg.ring + (i % n_ring) * 4, "HIQ ring");
        let mut done = 0;
        loop {
            let rptr = self.state.lock().rptr;
            let avail = wptr.wrapping_sub(rptr);
            if avail == 0 || avail > u64::MAX / 2 {
                break;
            }
            let Some(h) = ring_dword(rptr) else { break };
            let Some((opcode, mut len)) = p::header(h) else {
                self.halt(
                    0,
                    HwsRefusal::NotType3 {
                        header: h,
                        in_ib: false,
                    },
                );
                break;
            };
            // KFD's kernel-queue NOP filler (`PACKET3(NOP, 0x3FFF)`) is one dword.
            if opcode == p::op::NOP && p::HDR_COUNT.get(h) == 0x3FFF {
                len = 1;
            }
            if avail < len as u64 {
                break;
            }
            let pkt: Option<Vec<u32>> = (0..len as u64).map(|i| ring_dword(rptr + i)).collect();
            let Some(pkt) = pkt else { break };
            match self.execute(mem, cp, opcode, &pkt) {
                Ok(()) => {
                    let mut s = self.state.lock();
                    s.rptr = rptr + len as u64;
                    s.log.keep(HwsEvent::Done { opcode });
                    done += 1;
                }
                Err(why) => {
                    self.halt(opcode, why);
                    break;
                }
            }
        }
        done
    }

    fn halt(&self, opcode: u32, why: HwsRefusal) {
        let mut s = self.state.lock();
        s.halted = Some(why);
        s.log.keep(HwsEvent::Refused { opcode, why });
    }

    fn size(opcode: u32, pkt: &[u32], expected: usize) -> Result<(), HwsRefusal> {
        if pkt.len() == expected {
            Ok(())
        } else {
            Err(HwsRefusal::BadSize {
                opcode,
                dwords: pkt.len(),
                expected,
            })
        }
    }

    fn execute(
        &self,
        mem: &Dma,
        cp: &dyn HwsCp,
        opcode: u32,
        pkt: &[u32],
    ) -> Result<(), HwsRefusal> {
        match opcode {
            p::op::NOP => Ok(()),
            p::op::SET_RESOURCES => {
                Self::size(opcode, pkt, p::SET_RESOURCES_DWORDS)?;
                self.set_resources(pkt)
            }
            p::op::RUN_LIST => {
                Self::size(opcode, pkt, p::RUN_LIST_DWORDS)?;
                self.run_list(mem, pkt)
            }
            p::op::QUERY_STATUS => {
                Self::size(opcode, pkt, p::QUERY_STATUS_DWORDS)?;
                Self::query_status(mem, pkt)
            }
            p::op::UNMAP_QUEUES => {
                Self::size(opcode, pkt, p::UNMAP_QUEUES_DWORDS)?;
                self.unmap_queues(cp, pkt)
            }
            p::op::MAP_PROCESS | p::op::MAP_QUEUES => Err(HwsRefusal::Misplaced {
                opcode,
                in_ib: false,
            }),
            _ => Err(HwsRefusal::UnknownOpcode { opcode }),
        }
    }

    fn set_resources(&self, pkt: &[u32]) -> Result<(), HwsRefusal> {
        let r = p::set_resources(pkt);
        let bad = |what| Err(HwsRefusal::BadResources { what });
        if r.reserved != 0 {
            return Err(HwsRefusal::ReservedBits {
                opcode: p::op::SET_RESOURCES,
                bits: r.reserved,
            });
        }
        if r.queue_type != sr::HIQ {
            return bad("queue_type is not the HIQ (hsa_interface_queue_hiq)");
        }
        if r.vmid_mask == 0 {
            return bad("no VMIDs (vmid_mask 0)");
        }
        if r.vmid_mask & 1 != 0 {
            return bad("vmid_mask gives away VMID 0, the kernel's");
        }
        if r.queue_mask == 0 {
            return bad("no queue slots (queue_mask 0)");
        }
        let mut s = self.state.lock();
        if s.runlist.is_some() {
            return bad(
                "sent while a runlist is mapped (model: KFD sends it once, at start_cpsch)",
            );
        }
        s.resources = Some(Resources {
            vmid_mask: r.vmid_mask,
            queue_mask: r.queue_mask,
            gws_mask: r.gws_mask,
            unmap_latency: r.unmap_latency,
        });
        Ok(())
    }

    fn run_list(&self, mem: &Dma, pkt: &[u32]) -> Result<(), HwsRefusal> {
        let Some(res) = self.state.lock().resources else {
            return Err(HwsRefusal::NoResources);
        };
        let r = p::run_list(pkt);
        if r.reserved != 0 {
            return Err(HwsRefusal::ReservedBits {
                opcode: p::op::RUN_LIST,
                bits: r.reserved,
            });
        }
        if !r.valid {
            return Err(HwsRefusal::BadRunList { what: "valid is 0" });
        }
        if r.ib_dwords == 0 {
            return Err(HwsRefusal::BadRunList {
                what: "ib_size is 0",
            });
        }
        let mut parse = Parse {
            processes: Vec::new(),
            queues: Vec::new(),
            sdma: Vec::new(),
            current: None,
            visited: Vec::new(),
            loops: false,
        };
        self.read_ib(mem, r.ib, r.ib_dwords, &mut parse)?;
        Self::close_process(&mut parse)?;
        let vmids = res.vmid_mask.count_ones();
        if !parse.processes.is_empty() && (r.process_cnt == 0 || r.process_cnt > vmids) {
            return Err(HwsRefusal::ProcessCount {
                process_cnt: r.process_cnt,
                vmids,
            });
        }
        // Model convention: VMIDs in runlist order, lowest first.
        let mut free = res.vmid_mask;
        for proc_ in parse.processes.iter_mut().take(r.process_cnt as usize) {
            let v = free.trailing_zeros() as u8;
            free &= !(1 << v);
            proc_.vmid = Some(v);
        }
        let mut s = self.state.lock();
        s.processes = parse.processes;
        s.queues = parse.queues;
        s.sdma = parse.sdma;
        s.runlist = Some(RunlistState {
            ib: r.ib,
            ib_dwords: r.ib_dwords,
            process_cnt: r.process_cnt,
            loops: parse.loops,
            ibs: parse.visited.len(),
        });
        Ok(())
    }

    fn close_process(parse: &mut Parse) -> Result<(), HwsRefusal> {
        if let Some((i, found)) = parse.current.take()
            && let Some(pr) = parse.processes.get(i)
            && pr.num_queues != found
        {
            return Err(HwsRefusal::QueueCountMismatch {
                pasid: pr.pasid,
                declared: pr.num_queues,
                found,
            });
        }
        Ok(())
    }

    fn read_ib(
        &self,
        mem: &Dma,
        ib: u64,
        dwords: u32,
        parse: &mut Parse,
    ) -> Result<(), HwsRefusal> {
        let bytes = u64::from(dwords) * 4;
        if parse.visited.len() >= MAX_CHAIN {
            return Err(HwsRefusal::BadRunList {
                what: "chained IBs nest deeper than the model follows",
            });
        }
        let out_of_range = HwsRefusal::IbOutOfRange { address: ib, bytes };
        if !mem.covers(ib, bytes) {
            return Err(out_of_range);
        }
        let mut raw = vec![0u8; bytes as usize];
        if mem.read(ib, &mut raw, "runlist IB").is_err() {
            return Err(HwsRefusal::IbOutOfRange { address: ib, bytes });
        }
        parse.visited.push(ib);
        let w: Vec<u32> = raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut at = 0usize;
        while at < w.len() {
            let h = w[at];
            let Some((opcode, len)) = p::header(h) else {
                return Err(HwsRefusal::NotType3 {
                    header: h,
                    in_ib: true,
                });
            };
            let Some(pkt) = w.get(at..at + len) else {
                return Err(HwsRefusal::Truncated { opcode, ib });
            };
            match opcode {
                p::op::MAP_PROCESS => {
                    Self::size(opcode, pkt, self.cfg.map_process_dwords)?;
                    Self::close_process(parse)?;
                    let pr = self.map_process(pkt, parse)?;
                    parse.current = Some((parse.processes.len(), 0));
                    parse.processes.push(pr);
                }
                p::op::MAP_QUEUES => {
                    Self::size(opcode, pkt, p::MAP_QUEUES_DWORDS)?;
                    let q = p::map_queues(pkt);
                    let Some((i, n)) = parse.current else {
                        return Err(HwsRefusal::QueueWithoutProcess {
                            doorbell_offset: q.doorbell_offset,
                        });
                    };
                    let pasid = parse.processes.get(i).map_or(0, |p| p.pasid);
                    let mq = self.map_queue(mem, pasid, &q)?;
                    if let QueueEngine::Sdma(engine) = mq.engine {
                        let mqd = self.sdma_queue(mem, engine, &mq)?;
                        parse.sdma.push((mq.doorbell_offset, engine, mqd));
                    }
                    if parse
                        .queues
                        .iter()
                        .any(|o| o.doorbell_offset == mq.doorbell_offset)
                    {
                        return Err(HwsRefusal::DuplicateDoorbell {
                            doorbell_offset: mq.doorbell_offset,
                        });
                    }
                    parse.queues.push(mq);
                    parse.current = Some((i, n.saturating_add(1)));
                }
                p::op::RUN_LIST => {
                    Self::size(opcode, pkt, p::RUN_LIST_DWORDS)?;
                    let r = p::run_list(pkt);
                    if !r.chain || !r.valid {
                        return Err(HwsRefusal::BadRunList {
                            what: "a RUN_LIST inside an IB must be a valid chain",
                        });
                    }
                    if at + len != w.len() {
                        return Err(HwsRefusal::BadRunList {
                            what: "a chained RUN_LIST must end its IB",
                        });
                    }
                    if r.reserved != 0 {
                        return Err(HwsRefusal::ReservedBits {
                            opcode,
                            bits: r.reserved,
                        });
                    }
                    if parse.visited.contains(&r.ib) {
                        // The over-subscription loop: the HWS cycles
                        // through what it has read.
                        parse.loops = true;
                    } else {
                        return self.read_ib(mem, r.ib, r.ib_dwords, parse);
                    }
                }
                p::op::SET_RESOURCES | p::op::QUERY_STATUS | p::op::UNMAP_QUEUES | p::op::NOP => {
                    return Err(HwsRefusal::Misplaced {
                        opcode,
                        in_ib: true,
                    });
                }
                _ => return Err(HwsRefusal::UnknownOpcode { opcode }),
            }
            at += len;
        }
        Ok(())
    }

    fn map_process(&self, pkt: &[u32], parse: &Parse) -> Result<MappedProcess, HwsRefusal> {
        let m = p::map_process(pkt);
        let pasid = m.pasid;
        let bad = |what| Err(HwsRefusal::BadProcess { pasid, what });
        let aldebaran = m.dwords == p::MAP_PROCESS_ALDEBARAN_DWORDS;
        let mut reserved = 0;
        if !aldebaran {
            if m.bit16 {
                reserved |= mp::BIT16.mask();
            }
            if m.bit23 {
                reserved |= mp::BIT23.mask();
            }
        }
        if reserved != 0 || m.reserved6 != 0 {
            return Err(HwsRefusal::ReservedBits {
                opcode: p::op::MAP_PROCESS,
                bits: reserved | m.reserved6,
            });
        }
        if pasid == 0 {
            return bad("PASID 0");
        }
        if parse.processes.iter().any(|o| o.pasid == pasid) {
            return Err(HwsRefusal::DuplicatePasid { pasid });
        }
        let pt = m.page_table_base;
        if pt & PDE_VALID == 0 || pt & !(PDE_ADDRESS | PDE_FLAGS) != 0 {
            return Err(HwsRefusal::PageTableBase { pasid, value: pt });
        }
        if m.diq_enable || m.new_debug || m.debug_vmid != 0 {
            return bad("a debugged process (the model runs no DIQ or debug VMID)");
        }
        if m.process_quantum == 0 {
            return bad("process_quantum 0 (model: a process that never runs)");
        }
        Ok(MappedProcess {
            pasid,
            vmid: None,
            page_table_base: pt,
            sh_mem_config: m.sh_mem_config,
            sh_mem_bases: m.sh_mem_bases,
            num_queues: m.num_queues,
        })
    }

    fn map_queue(
        &self,
        mem: &Dma,
        pasid: u16,
        q: &p::MapQueues,
    ) -> Result<MappedQueue, HwsRefusal> {
        let db = q.doorbell_offset;
        let bad = |what| {
            Err(HwsRefusal::BadQueue {
                doorbell_offset: db,
                what,
            })
        };
        if q.reserved != 0 {
            return Err(HwsRefusal::ReservedBits {
                opcode: p::op::MAP_QUEUES,
                bits: q.reserved,
            });
        }
        if q.num_queues != 1 {
            return bad("num_queues is not 1 (pm_map_queues_v9 maps one queue a packet)");
        }
        if q.queue_sel != mq::HWS_DETERMINED {
            return bad(
                "queue_sel is not map_to_hws_determined_queue_slots: in a runlist the HWS picks slots",
            );
        }
        let engine = match (q.ext_engine_sel, q.engine_sel) {
            (0, mq::ENGINE_COMPUTE) => QueueEngine::Compute,
            (0, e @ 2..=3) => QueueEngine::Sdma((e - 2) as u8),
            (1, e) => QueueEngine::Sdma(e as u8),
            (2, e) => QueueEngine::Sdma(e as u8 + 8),
            _ => return bad("no such engine"),
        };
        let is_static = match q.queue_type {
            mq::TYPE_NORMAL_COMPUTE => false,
            mq::TYPE_NORMAL_LATENCY_STATIC => true,
            _ => return bad("a queue type the model does not run (debug interface, low latency)"),
        };
        // A compute queue's doorbell may lie outside
        // `CP_MEC_DOORBELL_RANGE_*`: the range decides what wakes a
        // power-gated GC (`gfx_v9_0_kiq_init_register()`), and KFD's
        // doorbells lie past the kernel's (`kfd_doorbell_init()`).
        if q.mqd == 0 || !mem.covers(q.mqd, 4) {
            return Err(HwsRefusal::MqdUnreadable { address: q.mqd });
        }
        if q.wptr == 0 || !mem.covers(q.wptr, 8) {
            return Err(HwsRefusal::WptrUnreadable { address: q.wptr });
        }
        Ok(MappedQueue {
            pasid,
            engine,
            doorbell_offset: db,
            mqd: q.mqd,
            wptr: q.wptr,
            is_static,
        })
    }

    /// The checks of an SDMA MAP_QUEUES (see the module docs) and its MQD.
    fn sdma_queue(&self, mem: &Dma, engine: u8, q: &MappedQueue) -> Result<SdmaMqdV9, HwsRefusal> {
        let db = q.doorbell_offset;
        let cfg = (*self.sdma.lock()).unwrap_or(SdmaEngines::aqua_vanjaram(0));
        if engine >= cfg.engines {
            return Err(HwsRefusal::SdmaEngineOutOfRange {
                doorbell_offset: db,
                engine,
                engines: cfg.engines,
            });
        }
        let mut raw = [0u8; SDMA_MQD_BYTES];
        if !mem.covers(q.mqd, SDMA_MQD_BYTES as u64)
            || mem.read(q.mqd, &mut raw, "SDMA MQD").is_err()
        {
            return Err(HwsRefusal::MqdUnreadable { address: q.mqd });
        }
        let mqd = SdmaMqdV9::decode(&raw).map_err(|fault| HwsRefusal::SdmaMqd {
            doorbell_offset: db,
            address: q.mqd,
            fault,
        })?;
        if !cfg.contains(engine, db) {
            let (first, end) = cfg.range(engine);
            return Err(HwsRefusal::SdmaDoorbellOutOfRange {
                doorbell_offset: db,
                engine,
                first,
                end,
            });
        }
        let bad = |what| HwsRefusal::BadQueue {
            doorbell_offset: db,
            what,
        };
        if mqd.engine != u32::from(engine) {
            return Err(bad(
                "the MQD's sdma_engine_id is not the engine MAP_QUEUES selects",
            ));
        }
        if mqd.doorbell_dword != db {
            return Err(bad("the MQD's doorbell offset is not MAP_QUEUES' doorbell"));
        }
        Ok(mqd)
    }

    fn unmap_queues(&self, cp: &dyn HwsCp, pkt: &[u32]) -> Result<(), HwsRefusal> {
        let u = p::unmap_queues(pkt);
        let bad = |what| Err(HwsRefusal::BadUnmap { what });
        if u.engine_sel != 0 || u.ext_engine_sel > 1 {
            return bad("engine is not compute (pm_unmap_queues_v9 always selects compute)");
        }
        if u.action != uq::PREEMPT && u.action != uq::RESET {
            return bad("action other than preempt or reset (not modelled)");
        }
        let mut s = self.state.lock();
        let leaves: Vec<bool> = match u.queue_sel {
            uq::ALL => s.queues.iter().map(|_| true).collect(),
            uq::NON_STATIC => s.queues.iter().map(|q| !q.is_static).collect(),
            // Model convention: a PASID not in the runlist is a no-op.
            uq::BY_PASID => s.queues.iter().map(|q| q.pasid == u.pasid).collect(),
            _ => {
                let n = u.num_queues as usize;
                if !(1..=4).contains(&n) {
                    return bad("num_queues must be 1..=4 for specified queues");
                }
                let dbs = u.doorbells.get(..n).unwrap_or_default();
                for &d in dbs {
                    if !s.queues.iter().any(|q| q.doorbell_offset == d) {
                        return Err(HwsRefusal::UnknownQueue { doorbell_offset: d });
                    }
                }
                s.queues
                    .iter()
                    .map(|q| dbs.contains(&q.doorbell_offset))
                    .collect()
            }
        };
        let leaving: Vec<MappedQueue> = s
            .queues
            .iter()
            .zip(&leaves)
            .filter(|(_, l)| **l)
            .map(|(q, _)| *q)
            .collect();
        let compute = leaving.iter().filter(|q| q.engine == QueueEngine::Compute);
        if u.action == uq::PREEMPT {
            // The firmware gives up on a queue whose waves never drain,
            // completes the packet and logs the doorbell
            // (`unmap_queues_cpsch()`'s comment): nothing leaves.
            if let Some(q) = compute.clone().find(|q| cp.hung(q.doorbell_offset)) {
                cp.preemption_failed(q.doorbell_offset);
                return Ok(());
            }
        } else {
            for q in compute {
                cp.reset(q.doorbell_offset);
            }
        }
        let mut keep = leaves.iter().map(|l| !l);
        s.queues.retain(|_| keep.next().unwrap_or(true));
        let State {
            processes, queues, ..
        } = &mut *s;
        let specified = match u.queue_sel {
            uq::ALL => {
                processes.clear();
                false
            }
            uq::NON_STATIC => {
                processes.retain(|p| queues.iter().any(|q| q.pasid == p.pasid));
                false
            }
            uq::BY_PASID => {
                processes.retain(|p| p.pasid != u.pasid);
                false
            }
            _ => true,
        };
        if !specified && s.processes.is_empty() {
            s.runlist = None;
        }
        let State { queues, sdma, .. } = &mut *s;
        sdma.retain(|e| queues.iter().any(|q| q.doorbell_offset == e.0));
        Ok(())
    }

    fn query_status(mem: &Dma, pkt: &[u32]) -> Result<(), HwsRefusal> {
        let q = p::query_status(pkt);
        if q.command != qs::FENCE_ONLY_IMMEDIATE && q.command != qs::FENCE_ONLY_AFTER_WRITE_ACK {
            return Err(HwsRefusal::BadQuery {
                what: "not a fence-only command (interrupts are not modelled)",
            });
        }
        if q.interrupt_sel != 0 {
            return Err(HwsRefusal::BadQuery {
                what: "interrupt_sel is not completion_status",
            });
        }
        let slot = mem
            .u64(q.addr, "QUERY_STATUS fence")
            .map_err(|_| HwsRefusal::FenceUnmapped { address: q.addr })?;
        slot.store(q.data, Ordering::Release);
        Ok(())
    }
}

const ATHUB: &str = "athub_1_8_0_sh_mask.h";

pub const FACTS: &[Fact] = &[
    Fact::constant(
        ATHUB,
        "ATC_VMID0_PASID_MAPPING__PASID_MASK",
        ATC_PASID_MASK as u64,
    ),
    Fact::constant(
        ATHUB,
        "ATC_VMID0_PASID_MAPPING__VALID_MASK",
        ATC_VALID_MASK as u64,
    ),
];
