//! A model of the MES scheduler firmware (API v11 for gfx11, v12 for gfx12
//! uni-MES; [`MesApiVersion`]).
//!
//! It consumes 64-dword frames from its ring up to the write pointer the
//! driver stored to the ring's doorbell, and for each frame:
//! - validates the header: scheduler type, `dwsize` 64, a known opcode;
//! - requires SET_HW_RSRC to have succeeded before ADD_QUEUE;
//! - for ADD_QUEUE, reads the MQD and checks that `cp_hqd_aql_control` is
//!   set (for an AQL queue), that `QUEUE_SIZE` agrees with the ring size
//!   the frame gives (`gds_size`, in dwords, as KFD passes it), that the
//!   doorbell is the MQD's and unused (wherever it lies: the MEC doorbell
//!   range only decides what wakes a power-gated GC), that
//!   an EOP buffer is given, and that the ring, rptr, wptr and EOP lie in
//!   memory mapped in the frame's page table;
//! - on success writes the frame's `api_status` fence; on refusal, v11
//!   leaves it unwritten, which is the only failure signal v11 has
//!   (Linux's `!*status_ptr`; `mes_v11_api_def.h` defines no error code),
//!   and v12 writes `MES_ERR_CODE` (category API, opcode, and a model
//!   rule number from [`Refusal::code`] as the API error, since the
//!   firmware's own codes are not public); either way the reason is in
//!   [`MesModel::log`];
//! - answers QUERY_SCHEDULER_STATUS by writing its fence (the ring fence
//!   the driver polls).
//!
//! Page tables: the frame's `page_table_base_addr` is walked by the GMC
//! model ([`crate::gmc`]) over the tables the runtime built, page by page,
//! with the access the CP needs (read for ring and wptr, write for rptr
//! and EOP), and each page must map to its own address (the runtime's
//! device addresses are host addresses; a model rule). A test may instead
//! register a root with [`MesModel::map_process_memory`], whose window
//! list then stands in for the table. Memory must also be in the CP
//! model's DMA windows for the device to touch it.
//!
//! VMIDs: as the firmware does, the model gives each process (ADD_QUEUE's
//! `process_id`, the PASID KFD's `add_queue_mes()` sends) one VMID from
//! the `vmid_mask_gfxhub` SET_HW_RSRC gave it (`amdgpu_mes_init()`:
//! 0xffffff00, so VMIDs 8..=15 of the 16 `MAX_VMID_GCHUB` has), the
//! lowest free one (which one the firmware picks is not public: a model
//! convention); every queue of the process shares it. With a hub
//! ([`MesModel::with_hub`]) it programs that VMID's GFXHUB context from
//! the frame (`page_table_base_addr`, `process_va_start/end` as page
//! numbers, `vm_context_cntl`), and it loads the HQD with `CP_HQD_VMID` =
//! that VMID, so the CP reads the queue through the hub's ordinary
//! per-VMID walk. The VMID is freed when REMOVE_QUEUE takes the
//! process's last queue. With none free, ADD_QUEUE is refused
//! ([`Refusal::NoFreeVmid`]): real MES oversubscribes, swapping processes
//! in and out of VMIDs, which the model does not (a model rule; neither
//! API header names an error for it).
//!
//! SUSPEND (all gangs) stops the CP model (`stop_consuming`) and writes
//! the suspend fence; RESUME restarts it. Per-gang suspension and HQD
//! oversubscription are not modelled.
//!
//! Faults: `silent` (consumes nothing, answers nothing) and `error_status`
//! (refuses every frame but QUERY_SCHEDULER_STATUS).

use crate::decode::mes_api::{
    self, API_TYPE_SCHEDULER, FRAME_BYTES, FRAME_DWORDS, FrameView, HEADER_DWSIZE, HEADER_OPCODE,
    HEADER_TYPE, Layout, add_flags, opcode, queue_type, v12_error,
};
use crate::decode::mes_regs;
use crate::decode::mqd::{Hqd, MQD_BYTES};
use crate::gmc::{Access, Gmc, VmFault};
use crate::hub::HubModel;
use crate::kernel_view::{self, KernelView};
use crate::log::Keep;
use crate::mec::{Mec, MecError};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;
use spin::Mutex;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MesFaults {
    pub silent: bool,
    pub error_status: bool,
}

/// Why the model refused a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    BadHeader {
        header: u32,
    },
    UnknownOpcode {
        opcode: u8,
    },
    NoHwResources,
    BadHwResources {
        what: &'static str,
    },
    /// SET_HW_RSRC's register segment bases of `block` (`gc`, `mmhub`,
    /// `osssys`) are not the part's discovered ones.
    SegmentBases {
        block: &'static str,
        frame: [u32; 5],
        part: [Option<u32>; 5],
    },
    MqdUnreadable {
        address: u64,
    },
    NotAql,
    QueueSizeMismatch {
        mqd_dwords: u64,
        frame_dwords: u64,
    },
    DoorbellMismatch {
        frame: u32,
        mqd: u32,
    },
    DoorbellInUse {
        dword: u32,
    },
    NoEop,
    NotMapped {
        what: &'static str,
        address: u64,
    },
    /// The GMC model's walk of the frame's page table faulted.
    VmFault {
        what: &'static str,
        fault: VmFault,
    },
    /// A `map_legacy_kq` ADD_QUEUE this pipe does not serve, or for
    /// something other than the scheduler ring on a running pipe 0 or a
    /// compute queue on a MEC1 slot.
    UnsupportedLegacyQueue {
        queue_type: u32,
        pipe: u32,
    },
    /// Mapped, but not at its own address (see `mapped`).
    NotIdentity {
        what: &'static str,
        va: u64,
        pa: u64,
    },
    NoFreeHqd,
    /// Every VMID of SET_HW_RSRC's `vmid_mask_gfxhub` belongs to another
    /// process (model rule: the firmware would oversubscribe).
    NoFreeVmid {
        mask: u32,
    },
    /// `process_va_start/end` are not a page-number range a context's
    /// START/END registers hold (KFD sends `0` and `max_pfn - 1`).
    ProcessVaRange {
        start: u64,
        end: u64,
    },
    /// The frame's `wptr_addr` is not the MQD's write-pointer address.
    WptrMismatch {
        frame: u64,
        mqd: u64,
    },
    /// ADD_QUEUE's `page_table_base_addr` is not a valid PDE (no
    /// `AMDGPU_PTE_VALID`, as `amdgpu_gmc_pd_addr()` gives it).
    PageTableNotValid {
        ptb: u64,
    },
    /// ADD_QUEUE's `vm_context_cntl` is not the hub's context control.
    VmContextCntl {
        frame: u32,
        hub: u32,
    },
    /// A process or gang context the firmware would write is missing,
    /// misaligned, shared or outside device-visible memory.
    BadContext {
        what: &'static str,
        address: u64,
    },
    /// ADD_QUEUE's flags or queue type do not describe the MQD.
    BadAddQueue {
        what: &'static str,
    },
    /// A SUSPEND the model does not take (per-gang, or with no fence).
    BadSuspend {
        what: &'static str,
    },
    /// The scheduler ring a `map_legacy_kq` ADD_QUEUE gives pipe 0 could
    /// never run ([`crate::decode::mqd::Hqd::mes_ring_refusal`]).
    BadMesRing {
        what: &'static str,
    },
    /// gfx12 doorbell registers MES relies on are not programmed.
    DoorbellRegisters {
        what: &'static str,
    },
    UnknownQueue {
        doorbell: u32,
    },
    Mec(MecError),
    Injected,
    /// REMOVE_QUEUE of a hung queue: it cannot be preempted (its waves
    /// never drain; *model convention*, as the MEC's dequeue rule).
    QueueHung {
        doorbell: u32,
    },
    /// A RESET the model does not serve (only `reset_queue_only`).
    BadReset {
        flags: u32,
    },
    /// A ring or EOP size field no memory can back (model rule,
    /// `crate::decode::mqd::MAX_QUEUE_BYTES_LOG2`).
    Size(crate::decode::mqd::SizeBeyondAddressSpace),
    /// A MISC operation the model does not run (another sub-opcode or
    /// `WRM_OPERATION`, or register access with no register bus).
    Misc {
        what: &'static str,
        value: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MesEvent {
    Done { opcode: u8 },
    Refused { opcode: u8, why: Refusal },
}

/// Which frame layout (and failure reporting) the model speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MesApiVersion {
    /// `mes_v11_api_def.h`: a refused frame's fence stays unwritten.
    V11,
    /// `mes_v12_api_def.h`: a refused frame's fence gets `MES_ERR_CODE`.
    V12,
}

impl Refusal {
    /// The model's own API error code for v12's `MES_ERR_CODE` (bits
    /// 0..7). Real firmware's codes are not public; these number the
    /// model's rules so a test can tell them apart in the decoded status.
    pub fn code(&self) -> u8 {
        match self {
            Refusal::BadHeader { .. } => 1,
            Refusal::UnknownOpcode { .. } => 2,
            Refusal::NoHwResources => 3,
            Refusal::BadHwResources { .. } | Refusal::SegmentBases { .. } => 4,
            Refusal::MqdUnreadable { .. } => 5,
            Refusal::NotAql => 6,
            Refusal::QueueSizeMismatch { .. } => 7,
            Refusal::DoorbellMismatch { .. } => 8,
            Refusal::DoorbellInUse { .. } => 10,
            Refusal::NoEop => 11,
            Refusal::NotMapped { .. } => 12,
            Refusal::NoFreeHqd => 13,
            Refusal::UnknownQueue { .. } => 14,
            Refusal::Mec(_) => 15,
            Refusal::Injected => 16,
            Refusal::VmFault { .. } => 17,
            Refusal::NotIdentity { .. } => 18,
            Refusal::UnsupportedLegacyQueue { .. } => 19,
            Refusal::WptrMismatch { .. } => 20,
            Refusal::PageTableNotValid { .. } => 21,
            Refusal::VmContextCntl { .. } => 22,
            Refusal::BadContext { .. } => 23,
            Refusal::BadAddQueue { .. } => 24,
            Refusal::BadSuspend { .. } => 25,
            Refusal::DoorbellRegisters { .. } => 26,
            Refusal::NoFreeVmid { .. } => 27,
            Refusal::ProcessVaRange { .. } => 28,
            Refusal::BadMesRing { .. } => 29,
            Refusal::QueueHung { .. } => 30,
            Refusal::BadReset { .. } => 31,
            Refusal::Size(_) => 32,
            Refusal::Misc { .. } => 33,
        }
    }
}

/// `MES_ERR_CODE(api_err, opcode, 0, MES_ERROR_API)`.
fn err_code(api_err: u8, opcode: u8) -> u64 {
    let hi = u32::from(api_err)
        | u32::from(opcode) << v12_error::HEADER_SHIFT
        | v12_error::CATEGORY_API << v12_error::CATEGORY_SHIFT
        | 1 << v12_error::STATUS_ERROR_SHIFT;
    u64::from(hi) << 32
}

struct HwArgs {
    vmid_mask_mmhub: u32,
    vmid_mask_gfxhub: u32,
    gds_size: u32,
    compute_hqd_mask: [u32; 8],
    sdma_hqd_mask: [u32; mes_api::SDMA_PIPES],
    aggregated_doorbells: [u32; mes_api::PRIORITY_LEVELS],
    sch_ctx: u64,
    query_fence: u64,
    gc_base: [u32; 5],
    mmhub_base: [u32; 5],
    osssys_base: [u32; 5],
    unmapped_doorbell_handling: Option<u32>,
}

impl HwArgs {
    fn decode(f: &FrameView<'_>, l: &Layout) -> Self {
        let h = &l.set_hw;
        HwArgs {
            vmid_mask_mmhub: f.u32(h.vmid_mask_mmhub),
            vmid_mask_gfxhub: f.u32(h.vmid_mask_gfxhub),
            gds_size: f.u32(h.gds_size),
            compute_hqd_mask: f.u32s::<8>(h.compute_hqd_mask),
            sdma_hqd_mask: f.u32s(h.sdma_hqd_mask),
            aggregated_doorbells: f.u32s(h.aggregated_doorbells),
            sch_ctx: f.u64(h.g_sch_ctx_gpu_mc_ptr),
            query_fence: f.u64(h.query_status_fence_gpu_mc_ptr),
            gc_base: f.u32s(h.gc_base),
            mmhub_base: f.u32s(h.mmhub_base),
            osssys_base: f.u32s(h.osssys_base),
            unmapped_doorbell_handling: h.unmapped_doorbell_handling.map(|b| b.get(f.u32(h.flags))),
        }
    }
}

/// What the MES model knows of the part it runs on, to check SET_HW_RSRC
/// and ADD_QUEUE against (see [`MesModel::with_part`]).
pub struct MesPart {
    /// GC, MMHUB and OSSSYS segment bases (first five), as the discovery
    /// table lists them (`adev->reg_offset[...][0][0..5]`); `None` past
    /// the block's `num_base_address`, where Linux sends whatever the
    /// table holds next.
    pub gc_base: [Option<u32>; 5],
    pub mmhub_base: [Option<u32>; 5],
    pub osssys_base: [Option<u32>; 5],
    /// SDMA engines present.
    pub sdma_instances: usize,
    /// Reads the GFXHUB's `GCVM_CONTEXT1_CNTL` (what `*_setup_vmid_config()`
    /// programmed for VMIDs 1..15; Linux keeps it as `hub->vm_cntx_cntl`).
    pub context_cntl: alloc::boxed::Box<dyn Fn() -> u32 + Send + Sync>,
    /// SDMA engine 0, which ADD_QUEUE with `MES_QUEUE_TYPE_SDMA` maps
    /// onto (issue 19).
    pub sdma: Option<alloc::sync::Arc<crate::sdma::SdmaModel>>,
}

impl core::fmt::Debug for MesPart {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MesPart")
            .field("gc_base", &self.gc_base)
            .field("sdma_instances", &self.sdma_instances)
            .finish_non_exhaustive()
    }
}

/// GDS bytes MES is given: `gfx_v11_0_set_gds_init()` sets 0x1000 on
/// every GC 11 part; GC 12 has no GDS (`gfx_v12_0.c` sets none, so
/// `adev->gds.gds_size` stays 0).
fn gds_bytes(api: MesApiVersion) -> u32 {
    match api {
        MesApiVersion::V11 => 0x1000,
        MesApiVersion::V12 => 0,
    }
}

/// `amdgpu_mes_init()` for SDMA 6 and later: queues 2..7 of each present
/// engine go to MES (0 and 1 stay kernel queues), none of an absent one.
const SDMA_MES_QUEUES: u32 = 0xfc;

struct AddArgs {
    process_id: u32,
    va_start: u64,
    va_end: u64,
    map_legacy_kq: bool,
    is_kfd_process: bool,
    process_context: u64,
    gang_context: u64,
    vm_context_cntl: u32,
    pipe_id: u32,
    queue_id: u32,
    queue_type: u32,
    mqd_addr: u64,
    is_aql: bool,
    gds_size: u32,
    doorbell: u32,
    ptb: u64,
    wptr: u64,
}

impl AddArgs {
    fn decode(f: &FrameView<'_>, l: &Layout) -> Self {
        let a = &l.add;
        let flags = f.u32(a.flags);
        AddArgs {
            process_id: f.u32(a.process_id),
            va_start: f.u64(a.process_va_start),
            va_end: f.u64(a.process_va_end),
            map_legacy_kq: add_flags::MAP_LEGACY_KQ.is_set(flags),
            is_kfd_process: add_flags::IS_KFD_PROCESS.is_set(flags),
            process_context: f.u64(a.process_context_addr),
            gang_context: f.u64(a.gang_context_addr),
            vm_context_cntl: f.u32(a.vm_context_cntl),
            pipe_id: f.u32(a.pipe_id),
            queue_id: f.u32(a.queue_id),
            queue_type: f.u32(a.queue_type),
            mqd_addr: f.u64(a.mqd_addr),
            is_aql: add_flags::IS_AQL_QUEUE.is_set(flags),
            gds_size: f.u32(a.gds_size),
            doorbell: f.u32(a.doorbell_offset),
            ptb: f.u64(a.page_table_base_addr),
            wptr: f.u64(a.wptr_addr),
        }
    }
}

/// A process MES has queues of: the VMID it holds and what it was
/// programmed with.
#[derive(Debug, Clone, Default)]
struct ProcessVm {
    vmid: u8,
    ptb: u64,
    process_context: u64,
    /// Doorbells of its queues.
    queues: BTreeSet<u32>,
}

#[derive(Debug, Default)]
struct State {
    rptr: u64,
    hw_rsrc: bool,
    /// SET_HW_RSRC's `vmid_mask_gfxhub`, VMIDs 0..15 only.
    vmid_mask_gfxhub: u16,
    /// `process_id` → its VMID and queues.
    processes: BTreeMap<u32, ProcessVm>,
    compute_hqd_mask: [u32; 8],
    aggregated_doorbells: [u32; mes_api::PRIORITY_LEVELS],
    /// Gang context address → doorbells of its queues.
    gangs: BTreeMap<u64, BTreeSet<u32>>,
    suspended: bool,
    page_tables: BTreeMap<u64, Vec<(u64, u64)>>,
    /// Doorbell dword → HQD slot.
    queues: BTreeMap<u32, (u8, u8, u8)>,
    faults: MesFaults,
    log: Vec<MesEvent>,
    /// A MISC register wait or read not done yet ([`MesModel::register_waits`]).
    misc: Option<MiscWait>,
}

/// A MISC `WAIT_REG_MEM` or `READ_REG` in progress: the register (BAR
/// byte offset), the masked value it waits for (none for a read), where a
/// read goes, and the value the device last read there.
#[derive(Debug, Clone, Copy)]
struct MiscWait {
    reg: u32,
    wait: Option<(u32, u32)>,
    read_to: Option<u64>,
    seen: Option<u32>,
}

/// How a platform walks a process's page tables for the MES model: the
/// host address `va` reaches through the tables rooted at `ptb`.
pub type Translator =
    alloc::boxed::Box<dyn Fn(u64, u64, Access) -> Result<u64, VmFault> + Send + Sync>;

/// The MES scheduler pipe.
pub struct MesModel {
    translator: Option<Translator>,
    /// VMID 0's decode of the addresses a driver gives the firmware
    /// ([`KernelView`]); `None` on a rig (host addresses).
    view: Option<KernelView>,
    /// How the CPU maps the system memory ([`MesModel::with_cpu_caching`]).
    cpu: crate::gmc::CpuCaching,
    /// Where MISC register writes go ([`MesModel::with_register_stores`]).
    registers: Option<crate::kiq::RegisterStores>,
    hub: Option<Arc<HubModel>>,
    part: Option<MesPart>,
    mec: Arc<Mec>,
    api: MesApiVersion,
    /// The MES pipe this firmware runs on (0 scheduler, 1 KIQ).
    pipe: u8,
    ring: u64,
    ring_dwords: u64,
    doorbell: u64,
    state: Mutex<State>,
}

impl core::fmt::Debug for MesModel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MesModel")
            .field("api", &self.api)
            .field("ring", &self.ring)
            .field("ring_dwords", &self.ring_dwords)
            .field("doorbell", &self.doorbell)
            .field("translator", &self.translator.is_some())
            .finish_non_exhaustive()
    }
}

impl MesModel {
    /// MES whose ring of `ring_dwords` is at `ring`, woken by the 64-bit
    /// doorbell slot at `doorbell` (its value is the ring wptr in dwords).
    /// The ring's own mapping (KIQ MAP_QUEUES on v11) is taken as done.
    pub fn new(mec: Arc<Mec>, ring: u64, ring_dwords: u64, doorbell: u64) -> Self {
        MesModel {
            translator: None,
            view: None,
            cpu: crate::gmc::CpuCaching::WriteBack,
            registers: None,
            hub: None,
            part: None,
            mec,
            api: MesApiVersion::V11,
            pipe: 0,
            ring,
            ring_dwords,
            doorbell,
            state: Mutex::new(State::default()),
        }
    }

    /// MES on the scheduler ring the KIQ mapped ([`Mec::mes_ring`]).
    pub fn from_mec(mec: Arc<Mec>, api: MesApiVersion) -> Option<Self> {
        Self::from_mec_pipe(mec, 0, api)
    }

    /// MES on pipe `pipe`'s ring as the MEC model saw it loaded or mapped
    /// ([`Mec::mes_pipe_ring`]); uni-MES runs pipe 1 as its KIQ.
    pub fn from_mec_pipe(mec: Arc<Mec>, pipe: u8, api: MesApiVersion) -> Option<Self> {
        let r = mec.mes_pipe_ring(pipe)?;
        if r.ring_dwords == 0 {
            return None;
        }
        let doorbell = mec.doorbell_bar() + u64::from(r.doorbell_dword) * 4;
        let mut m = MesModel::new(mec, r.ring, r.ring_dwords, doorbell).with_api(api);
        m.pipe = pipe;
        Some(m)
    }

    /// Walks process page tables with `t` (the platform's GMC and IOMMU)
    /// instead of through the CP model's DMA windows: each page of queue
    /// memory must reach the host byte the CP model reads at that VA.
    pub fn with_translator(mut self, t: Translator) -> Self {
        self.translator = Some(t);
        self
    }

    /// Decodes the addresses a driver gives the firmware (its ring,
    /// fences, MQDs, contexts) through `v`, as VMID 0 does.
    pub fn with_kernel_view(mut self, v: KernelView) -> Self {
        self.view = Some(v);
        self
    }

    /// Sends MISC register writes to `r`, for the device to apply through
    /// its register bus (and reads the registers MISC waits on through
    /// [`MesModel::register_waits`]).
    pub fn with_register_stores(mut self, r: crate::kiq::RegisterStores) -> Self {
        self.registers = Some(r);
        self
    }

    /// Why frames announced on the ring are not done, if any are: the
    /// read and announced positions, and a MISC register wait or read in
    /// progress.
    pub fn stalled(&self) -> Option<alloc::string::String> {
        let wptr = self
            .mec
            .cp()
            .dma_mut()
            .u64(self.doorbell, "MES doorbell")
            .ok()?
            .load(Ordering::Acquire);
        let s = self.state.lock();
        if wptr == s.rptr {
            return None;
        }
        Some(alloc::format!(
            "ring read at dword {:#x}, {:#x} announced{}",
            s.rptr,
            wptr,
            match s.misc {
                Some(w) => alloc::format!(
                    "; MISC on register byte {:#x} (waiting for {:?}, last read {:?})",
                    w.reg,
                    w.wait,
                    w.seen
                ),
                None => alloc::string::String::new(),
            }
        ))
    }

    /// The register a MISC wait or read is on (BAR byte offset), if any:
    /// the device reads it after its look and hands the value back.
    pub fn register_waits(&self) -> Vec<u32> {
        self.state.lock().misc.map(|w| w.reg).into_iter().collect()
    }

    /// The values the device read at [`MesModel::register_waits`]'
    /// registers.
    pub fn register_values(&self, values: &[(u32, u32)]) {
        let mut s = self.state.lock();
        if let Some(w) = s.misc.as_mut()
            && let Some((_, v)) = values.iter().find(|(r, _)| *r == w.reg)
        {
            w.seen = Some(*v);
        }
    }

    /// How the CPU maps the system memory (default write-back: see
    /// [`crate::gmc::Translation::coherent`]).
    pub fn with_cpu_caching(mut self, cpu: crate::gmc::CpuCaching) -> Self {
        self.cpu = cpu;
        self
    }

    /// Reads `out.len()` bytes at the kernel address `addr`.
    fn kernel_read(&self, addr: u64, out: &mut [u8], what: &'static str) -> Option<()> {
        kernel_view::read(self.view.as_ref(), self.mec.cp().dma_mut(), addr, out, what)
    }

    /// Whether `len` bytes at the kernel address `addr` are backed.
    fn kernel_covers(&self, addr: u64, len: u64, access: Access) -> bool {
        let view = self.view.as_ref();
        kernel_view::covers(view, self.mec.cp().dma_mut(), addr, len, access)
    }

    /// Programs the GFXHUB context of the VMID it assigns a process in
    /// `hub` (without one, the VMID is only written into the HQD: a rig
    /// whose CP reads device addresses as host addresses).
    pub fn with_hub(mut self, hub: Arc<HubModel>) -> Self {
        self.hub = Some(hub);
        self
    }

    /// Checks SET_HW_RSRC's register bases and SDMA masks and ADD_QUEUE's
    /// `vm_context_cntl` against `part` (without it: two SDMA engines,
    /// and `vm_context_cntl` must only enable its context).
    pub fn with_part(mut self, part: MesPart) -> Self {
        self.part = Some(part);
        self
    }

    /// Speaks API v12 (gfx12 uni-MES) instead of v11.
    pub fn with_api(mut self, api: MesApiVersion) -> Self {
        self.api = api;
        self
    }

    pub fn api(&self) -> MesApiVersion {
        self.api
    }

    pub fn set_faults(&self, f: MesFaults) {
        self.state.lock().faults = f;
    }

    /// Stand-in for a GPU page table: `len` bytes at `base` are mapped in
    /// the address space whose root is `page_table_base`.
    pub fn map_process_memory(&self, page_table_base: u64, base: u64, len: u64) {
        self.state
            .lock()
            .page_tables
            .entry(page_table_base)
            .or_default()
            .push((base, len));
    }

    pub fn log(&self) -> Vec<MesEvent> {
        self.state.lock().log.clone()
    }

    /// Forgets the event log (long benchmark runs).
    pub fn clear_log(&self) {
        self.state.lock().log.clear();
    }

    /// The VMID the model gave process `process_id`, while it has queues.
    pub fn process_vmid(&self, process_id: u32) -> Option<u8> {
        self.state.lock().processes.get(&process_id).map(|p| p.vmid)
    }

    pub fn queue_count(&self) -> usize {
        self.state.lock().queues.len()
    }

    pub fn is_suspended(&self) -> bool {
        self.state.lock().suspended
    }

    /// Consumes every frame announced on the doorbell. Returns how many.
    pub fn service(&self) -> usize {
        if self.state.lock().faults.silent {
            return 0;
        }
        let wptr = match self.mec.cp().dma_mut().u64(self.doorbell, "MES doorbell") {
            Ok(a) => a.load(Ordering::Acquire),
            Err(_) => return 0,
        };
        let mut n = 0;
        loop {
            let rptr = self.state.lock().rptr;
            if wptr.wrapping_sub(rptr) < FRAME_DWORDS as u64
                || wptr.wrapping_sub(rptr) > u64::MAX / 2
            {
                break;
            }
            let at = self.ring + (rptr % self.ring_dwords) * 4;
            let mut frame = [0u8; FRAME_BYTES];
            if self.kernel_read(at, &mut frame, "MES frame").is_none() {
                break;
            }
            if !self.frame(&frame) {
                // A MISC wait not met yet: the frame stays.
                break;
            }
            self.state.lock().rptr = rptr.wrapping_add(FRAME_DWORDS as u64);
            n += 1;
        }
        n
    }

    fn write_fence(&self, addr: u64, value: u64) {
        let Some(h) = kernel_view::host(self.view.as_ref(), addr, 8, Access::Write) else {
            return;
        };
        if let Ok(a) = self.mec.cp().dma_mut().u64(h, "MES fence") {
            a.store(value, Ordering::Release);
        }
    }

    fn layout(&self) -> &'static Layout {
        match self.api {
            MesApiVersion::V11 => &mes_api::V11,
            MesApiVersion::V12 => &mes_api::V12,
        }
    }

    /// Runs one frame; `false` when it waits (a MISC register wait or
    /// read not done yet) and must be looked at again.
    fn frame(&self, bytes: &[u8; FRAME_BYTES]) -> bool {
        let f = FrameView::new(bytes);
        let word = f.header();
        let op = HEADER_OPCODE.get(word) as u8;
        if HEADER_TYPE.get(word) != API_TYPE_SCHEDULER
            || HEADER_DWSIZE.get(word) as usize != FRAME_DWORDS
        {
            self.refuse(op, Refusal::BadHeader { header: word });
            return true;
        }
        if u32::from(op) == opcode::MISC && self.api == MesApiVersion::V11 {
            let r = match self.guard(|| self.misc(&f)) {
                Ok(false) => return false,
                Ok(true) => Ok(()),
                Err(e) => Err(e),
            };
            self.finish(op, &f, mes_api::misc::API_STATUS, r);
            return true;
        }
        let l = self.layout();
        let (status_at, result) = match u32::from(op) {
            opcode::QUERY_SCHEDULER_STATUS => (l.query_api_status, Ok(())),
            opcode::SET_HW_RSRC => (
                l.set_hw.api_status,
                self.guard(|| self.set_hw_rsrc(&HwArgs::decode(&f, l))),
            ),
            opcode::ADD_QUEUE => (
                l.add.api_status,
                self.guard(|| self.add_queue(&AddArgs::decode(&f, l))),
            ),
            opcode::REMOVE_QUEUE => (
                l.remove.api_status,
                self.guard(|| {
                    let dword = f.u32(l.remove.doorbell_offset);
                    // `unmap_legacy_queue` is how uni-MES unmaps a kernel
                    // queue with `RESET_QUEUES` (`mes_v12_0_unmap_legacy_queue()`):
                    // the queue is reset, so a hung one goes too.
                    let legacy = crate::decode::mes_api::remove_flags::UNMAP_LEGACY_QUEUE
                        .get(f.u32(l.remove.flags))
                        != 0;
                    if legacy {
                        self.mec.reset_doorbell_queue(dword);
                    }
                    self.remove_queue(dword, f.u64(l.remove.gang_context_addr))
                }),
            ),
            opcode::SUSPEND => (
                l.suspend.api_status,
                self.guard(|| {
                    self.suspend(
                        f.u32(l.suspend.flags),
                        f.u64(l.suspend.suspend_fence_addr),
                        f.u32(l.suspend.suspend_fence_value),
                    )
                }),
            ),
            opcode::RESET => (
                l.reset.api_status,
                self.guard(|| {
                    self.reset(
                        f.u32(l.reset.flags),
                        f.u32(l.reset.doorbell_offset),
                        f.u64(l.reset.gang_context_addr),
                    )
                }),
            ),
            opcode::SET_HW_RSRC_1 => (l.set_hw_1_api_status, self.guard(|| self.set_hw_rsrc_1())),
            opcode::RESUME => (l.resume.api_status, self.guard(|| self.resume())),
            _ => {
                self.refuse(op, Refusal::UnknownOpcode { opcode: op });
                return true;
            }
        };
        self.finish(op, &f, status_at, result);
        true
    }

    /// A frame's end: its fence written on success (v12: the error code
    /// on a refusal), the outcome logged.
    fn finish(&self, op: u8, f: &FrameView<'_>, status_at: usize, result: Result<(), Refusal>) {
        let (fence_addr, fence_value) = f.api_status(status_at);
        match result {
            Ok(()) => {
                self.state.lock().log.keep(MesEvent::Done { opcode: op });
                self.write_fence(fence_addr, fence_value);
            }
            Err(why) => {
                self.refuse(op, why);
                // v12 reports why in the status slot (`MES_ERR_CODE`);
                // v11 leaves it unwritten.
                if self.api == MesApiVersion::V12 {
                    self.write_fence(fence_addr, err_code(why.code(), op));
                }
            }
        }
    }

    fn guard<T>(&self, f: impl FnOnce() -> Result<T, Refusal>) -> Result<T, Refusal> {
        if self.state.lock().faults.error_status {
            return Err(Refusal::Injected);
        }
        f()
    }

    /// MISC (`mes_v11_0_misc_op()`): the register operations amdgpu sends
    /// through MES (`amdgpu_mes_wreg()`, `amdgpu_mes_rreg()`,
    /// `amdgpu_mes_reg_wait()`, and the TLB flush
    /// `amdgpu_mes_reg_write_reg_wait()` for `gmc_v11_0_flush_gpu_tlb()`).
    /// Registers are absolute dword offsets. `WR_WAIT_WR_REG` writes
    /// `reference` to `reg_offset1`, then waits until `reg_offset2`'s
    /// value masked by `mask` equals `mask` (what the ring form
    /// `amdgpu_ring_emit_reg_write_reg_wait_helper()` does); the plain wait
    /// compares the masked `reg_offset1` with `reference`. The device
    /// reads a waited-on register after each look (*model convention*:
    /// MES sees it one look late). `Ok(false)`: not done yet.
    fn misc(&self, f: &FrameView<'_>) -> Result<bool, Refusal> {
        use mes_api::misc as m;
        let sub = f.u32(m::OPCODE);
        let Some(stores) = self.registers.as_ref() else {
            return Err(Refusal::Misc {
                what: "register access with no register bus",
                value: sub,
            });
        };
        let byte = |dword: u32| dword.wrapping_mul(4);
        let mut s = self.state.lock();
        if let Some(w) = s.misc {
            let Some(v) = w.seen else {
                return Ok(false);
            };
            if let Some((mask, want)) = w.wait
                && v & mask != want
            {
                return Ok(false);
            }
            s.misc = None;
            drop(s);
            if let Some(to) = w.read_to {
                self.write_u32(to, v);
            }
            return Ok(true);
        }
        let (reg, wait, read_to) = match sub {
            m::WRITE_REG => {
                let (r, v) = (f.u32(m::WRITE_OFFSET), f.u32(m::WRITE_VALUE));
                stores.lock().push((byte(r), v));
                return Ok(true);
            }
            m::READ_REG => (f.u32(m::READ_OFFSET), None, Some(f.u64(m::READ_BUFFER))),
            // KFD sends it for every process it creates queues for on MES
            // (`kfd_dbg_set_mes_debug_mode()` through
            // `mes_v11_0_misc_op()`): the SQ debug flags, watch points and
            // trap enable of one process context. *Model convention*:
            // checked for a real process context, then without effect (the
            // model has no debugger and no single-step).
            m::SET_SHADER_DEBUGGER => {
                drop(s);
                self.context(
                    "SET_SHADER_DEBUGGER process context",
                    f.u64(m::SSD_PROCESS_CONTEXT),
                )?;
                return Ok(true);
            }
            m::WAIT_REG_MEM => {
                let (op, reference, mask) = (
                    f.u32(m::WRM_OP),
                    f.u32(m::WRM_REFERENCE),
                    f.u32(m::WRM_MASK),
                );
                let (r1, r2) = (f.u32(m::WRM_REG1), f.u32(m::WRM_REG2));
                match op {
                    m::WRM_WAIT => (r1, Some((mask, reference & mask)), None),
                    m::WRM_WRITE_WAIT => {
                        stores.lock().push((byte(r1), reference));
                        (r2, Some((mask, mask)), None)
                    }
                    other => {
                        return Err(Refusal::Misc {
                            what: "WRM_OPERATION",
                            value: other,
                        });
                    }
                }
            }
            other => {
                return Err(Refusal::Misc {
                    what: "MISC sub-opcode",
                    value: other,
                });
            }
        };
        s.misc = Some(MiscWait {
            reg: byte(reg),
            wait,
            read_to,
            seen: None,
        });
        Ok(false)
    }

    /// A 32-bit store the firmware makes at a kernel address (READ_REG's
    /// buffer).
    fn write_u32(&self, addr: u64, value: u32) {
        let Some(h) = kernel_view::host(self.view.as_ref(), addr, 4, Access::Write) else {
            return;
        };
        if let Ok(a) = self.mec.cp().dma_mut().u32(h, "MES READ_REG buffer") {
            a.store(value, Ordering::Release);
        }
    }

    fn refuse(&self, opcode: u8, why: Refusal) {
        self.state
            .lock()
            .log
            .push(MesEvent::Refused { opcode, why });
    }

    /// SET_HW_RSRC. What the firmware takes from it, as
    /// `mes_v11_0_set_hw_resources()` / `mes_v12_0_set_hw_resources()`
    /// fill it from `amdgpu_mes_init()`:
    /// - on the scheduler pipe, the resources it schedules: VMID masks of
    ///   both hubs, compute HQD mask, GDS size (`adev->gds.gds_size`),
    ///   the SDMA queues of every present engine (`0xfc`, SDMA 6+), and
    ///   the five aggregated doorbells (`amdgpu_mes_doorbell_init()`:
    ///   one 64-bit doorbell per priority level, in the page after the
    ///   kernel doorbells, so outside the MEC's queue range);
    /// - on every pipe, its scheduler context and query-status fence (the
    ///   firmware writes both: they must be device-visible, 8-byte
    ///   aligned), and the register bases it programs through
    ///   (`adev->reg_offset[...][0][0..5]`);
    /// - v12: `unmapped_doorbell_handling`, which `mes_v12_0_hw_init()`
    ///   enables in `CP_UNMAPPED_DOORBELL` first
    ///   (`mes_v12_0_enable_unmapped_doorbell_handling()`: `ENABLE` and
    ///   `PROC_LSB` 0xd, two doorbell pages per process).
    ///
    /// uni-MES's KIQ pipe (v12 pipe 1) gets no scheduler resources
    /// (`mes_v12_0_set_hw_resources()` fills them only for
    /// `AMDGPU_MES_SCHED_PIPE`), so the masks are not checked there.
    fn set_hw_rsrc(&self, f: &HwArgs) -> Result<(), Refusal> {
        let bad = |what| Err(Refusal::BadHwResources { what });
        let scheduler = !(self.api == MesApiVersion::V12 && self.pipe == 1);
        if scheduler {
            // 16 VMIDs per hub (`MAX_VMID_GCHUB`, `MAX_VMID_MMHUB`);
            // Linux's 0xffffff00 sets bits past them, which name nothing.
            if f.vmid_mask_gfxhub & 0xFFFF == 0 || f.vmid_mask_mmhub & 0xFFFF == 0 {
                return bad("a VMID mask is empty");
            }
            // VMID 0 is the kernel's (GART) context; `amdgpu_mes_init()`
            // never gives it to MES (model rule: what firmware does with
            // it is not public).
            if f.vmid_mask_gfxhub & 1 != 0 || f.vmid_mask_mmhub & 1 != 0 {
                return bad("a VMID mask gives MES VMID 0");
            }
            if f.compute_hqd_mask.iter().all(|m| *m == 0) {
                return bad("compute_hqd_mask is empty");
            }
            if f.gds_size != gds_bytes(self.api) {
                return bad("gds_size is not the part's GDS size");
            }
            let engines = self.part.as_ref().map_or(2, |p| p.sdma_instances);
            for (i, m) in f.sdma_hqd_mask.iter().enumerate() {
                let want = if i < engines { SDMA_MES_QUEUES } else { 0 };
                if *m != want {
                    return bad("sdma_hqd_mask does not give MES queues 2..7 of each SDMA engine");
                }
            }
            let (lower, upper) = self.mec.doorbell_range();
            let rings = [self.doorbell_dword()];
            for (i, d) in f.aggregated_doorbells.iter().enumerate() {
                let in_mec = (u64::from(lower)..=u64::from(upper)).contains(&(u64::from(*d) * 4));
                let again = f.aggregated_doorbells[..i].contains(d);
                if *d == 0 || d % 2 != 0 || in_mec || again || rings.contains(d) {
                    return bad(
                        "aggregated_doorbells are not five distinct 64-bit doorbells outside the MEC range",
                    );
                }
            }
        }
        if f.sch_ctx == 0 || !f.sch_ctx.is_multiple_of(8) || !self.device_visible(f.sch_ctx, 8) {
            return bad("g_sch_ctx_gpu_mc_ptr is not device-visible, aligned memory");
        }
        if f.query_fence == 0
            || !f.query_fence.is_multiple_of(8)
            || !self.device_visible(f.query_fence, 8)
        {
            return bad("query_status_fence_gpu_mc_ptr is not device-visible, aligned memory");
        }
        // Only the segments the discovery table lists are compared: Linux
        // copies five entries of `adev->reg_offset[hw_ip][0]`
        // (`mes_v11_0_set_hw_resources()`), which
        // `amdgpu_discovery_reg_base_init()` points into the table's own
        // `base_address[]`, so past a block's `num_base_address` it sends
        // whatever the table holds next.
        if let Some(p) = &self.part {
            for (block, frame, part) in [
                ("gc", f.gc_base, p.gc_base),
                ("mmhub", f.mmhub_base, p.mmhub_base),
                ("osssys", f.osssys_base, p.osssys_base),
            ] {
                if frame
                    .iter()
                    .zip(part)
                    .any(|(f, p)| p.is_some_and(|p| p != *f))
                {
                    return Err(Refusal::SegmentBases { block, frame, part });
                }
            }
        }
        if scheduler && let Some(h) = f.unmapped_doorbell_handling {
            if h != 1 {
                return bad("unmapped_doorbell_handling is not 1 (mes_v12_0_set_hw_resources())");
            }
            let v = self.gc_reg(mes_regs::CP_UNMAPPED_DOORBELL);
            if !mes_regs::UNMAPPED_ENABLE.is_set(v) || mes_regs::UNMAPPED_PROC_LSB.get(v) != 0xd {
                return Err(Refusal::DoorbellRegisters {
                    what: "CP_UNMAPPED_DOORBELL is not enabled with PROC_LSB 0xd before SET_HW_RSRC",
                });
            }
        }
        if scheduler {
            self.mec.set_mes_compute_hqds(f.compute_hqd_mask);
        }
        let mut s = self.state.lock();
        if scheduler {
            s.vmid_mask_gfxhub = f.vmid_mask_gfxhub as u16;
            s.compute_hqd_mask = f.compute_hqd_mask;
            s.aggregated_doorbells = f.aggregated_doorbells;
        }
        s.hw_rsrc = true;
        Ok(())
    }

    /// This pipe's own ring doorbell, in dwords.
    fn doorbell_dword(&self) -> u32 {
        (self.doorbell.saturating_sub(self.mec.doorbell_bar()) / 4) as u32
    }

    /// Memory the firmware can write at `address` (the CP model's DMA
    /// windows).
    fn device_visible(&self, address: u64, len: u64) -> bool {
        self.kernel_covers(address, len, Access::Write)
    }

    /// A GC register as the MEC model holds it.
    fn gc_reg(&self, r: mes_regs::GcReg) -> u32 {
        use barebell::bus::RegisterBus;
        r.byte_offset(&self.mec.bases().0)
            .map_or(0, |at| self.mec.read32(at))
    }

    /// v12: before MES takes queues, `mes_v12_0_hw_init()` has pointed
    /// `CP_MES_DOORBELL_CONTROL1..5` at the aggregated doorbells SET_HW_RSRC
    /// named, each enabled (`mes_v12_0_init_aggregated_doorbell()`): the
    /// doorbells MES watches for oversubscribed queues.
    fn aggregated_doorbells_programmed(&self) -> Result<(), Refusal> {
        if self.api != MesApiVersion::V12 {
            return Ok(());
        }
        let agg = self.state.lock().aggregated_doorbells;
        for (r, d) in mes_regs::CP_MES_DOORBELL_CONTROL.iter().zip(agg) {
            let v = self.gc_reg(*r);
            if !mes_regs::MES_DB_EN.is_set(v) || mes_regs::MES_DB_OFFSET.get(v) != d {
                return Err(Refusal::DoorbellRegisters {
                    what: "CP_MES_DOORBELL_CONTROL1..5 do not enable the aggregated doorbells",
                });
            }
        }
        Ok(())
    }

    /// ADD_QUEUE's process/gang context: a page MES owns
    /// (`AMDGPU_MES_PROC_CTX_SIZE`, `AMDGPU_MES_GANG_CTX_SIZE`), page
    /// aligned, device-visible.
    fn context(&self, what: &'static str, address: u64) -> Result<(), Refusal> {
        if address == 0 || !address.is_multiple_of(0x1000) || !self.device_visible(address, 0x1000)
        {
            return Err(Refusal::BadContext { what, address });
        }
        Ok(())
    }

    /// Is `[address, address + len)` mapped in the address space rooted at
    /// `ptb`? A root registered with [`MesModel::map_process_memory`] is
    /// answered from its window list; any other root is walked as a real
    /// page table by the GMC model, page by page, and must translate to
    /// the same address (a model rule: the runtime's device addresses
    /// are host addresses, so anything else is a table bug). The CP later
    /// reads the queue through the VMID's context, which walks the same
    /// root.
    fn mapped(
        &self,
        ptb: u64,
        what: &'static str,
        address: u64,
        len: u64,
        access: Access,
    ) -> Result<(), Refusal> {
        let refuse = Refusal::NotMapped { what, address };
        let end = address.checked_add(len).ok_or(refuse)?;
        {
            let s = self.state.lock();
            if let Some(w) = s.page_tables.get(&ptb) {
                let inside = w
                    .iter()
                    .any(|&(b, l)| address >= b && b.checked_add(l).is_some_and(|we| end <= we));
                return if inside { Ok(()) } else { Err(refuse) };
            }
        }
        // Identity is barebell's own convention (its device addresses are
        // host addresses). A guest OS's driver picks its own process VAs
        // (KFD's GPUVM aperture), so there a successful walk is enough.
        let identity = self.cpu == crate::gmc::CpuCaching::WriteBack;
        if let Some(t) = &self.translator {
            let mut page = address & !0xFFF;
            while page < end {
                match t(ptb, page, access) {
                    Ok(host) if host == page || !identity => {}
                    Ok(pa) => {
                        return Err(Refusal::NotIdentity { what, va: page, pa });
                    }
                    Err(fault) => return Err(Refusal::VmFault { what, fault }),
                }
                page += 0x1000;
            }
            return Ok(());
        }
        let gfx12 = self.api == MesApiVersion::V12;
        let mut cp = self.mec.cp();
        let mut gmc = Gmc::new(cp.dma_mut(), ptb, gfx12);
        let mut page = address & !0xFFF;
        while page < end {
            match gmc.translate(page, access) {
                // SNOOPED on a system page (`Translation::coherent`).
                Ok(t) if t.coherent(self.cpu).is_err() => {
                    let fault = crate::gmc::VmFault {
                        va: page,
                        access,
                        reason: crate::gmc::FaultReason::NotSnooped,
                    };
                    return Err(Refusal::VmFault { what, fault });
                }
                Ok(t) if t.pa == page || !identity => {}
                Ok(t) => {
                    return Err(Refusal::NotIdentity {
                        what,
                        va: page,
                        pa: t.pa,
                    });
                }
                Err(fault) => return Err(Refusal::VmFault { what, fault }),
            }
            page += 0x1000;
        }
        Ok(())
    }

    /// Whether the frame's write-pointer address `frame` is the MQD's
    /// `mqd` (a process address under `ptb`), or an MC address (VMID 0's
    /// view) of the same memory.
    fn same_wptr(&self, ptb: u64, frame: u64, mqd: u64) -> Result<(), Refusal> {
        if frame == mqd {
            return Ok(());
        }
        let refuse = Refusal::WptrMismatch { frame, mqd };
        let kernel = kernel_view::host(self.view.as_ref(), frame, 8, Access::Read);
        let process = self
            .translator
            .as_ref()
            .map(|t| t(ptb, mqd & !0xFFF, Access::Read).map(|h| h + (mqd & 0xFFF)));
        match (kernel, process) {
            (Some(k), Some(Ok(p))) if self.view.is_some() && k == p => Ok(()),
            _ => Err(refuse),
        }
    }

    fn add_queue(&self, f: &AddArgs) -> Result<(), Refusal> {
        if !self.state.lock().hw_rsrc {
            return Err(Refusal::NoHwResources);
        }
        if f.map_legacy_kq {
            return self.map_legacy(f);
        }
        if f.queue_type == queue_type::SDMA {
            return self.add_sdma_queue(f);
        }
        let hqd = self.read_mqd(f.mqd_addr)?;
        if f.is_aql && !hqd.aql() {
            return Err(Refusal::NotAql);
        }
        // `is_aql_queue` tells MES that `gds_size` is the ring size
        // (`mes_v11_0_add_hw_queue()`); an AQL MQD without it would get
        // GDS from the ring size. Only compute queues are modelled.
        if hqd.aql() && !f.is_aql {
            return Err(Refusal::BadAddQueue {
                what: "an AQL MQD without is_aql_queue",
            });
        }
        if f.queue_type != queue_type::COMPUTE {
            return Err(Refusal::BadAddQueue {
                what: "queue_type is not COMPUTE",
            });
        }
        if !f.is_kfd_process {
            return Err(Refusal::BadAddQueue {
                what: "a user AQL queue without is_kfd_process",
            });
        }
        // `page_table_base_addr` is a PDE: `amdgpu_gmc_pd_addr()` ORs
        // `AMDGPU_PTE_VALID` into the root's address.
        if f.ptb & mes_regs::PTE_VALID == 0 {
            return Err(Refusal::PageTableNotValid { ptb: f.ptb });
        }
        // `vm_context_cntl` is what MES programs into the VMID it picks:
        // the hub's own context control (`mes_v11_0_add_hw_queue()`:
        // `hub->vm_cntx_cntl`), recorded when `gfxhub_v3_0_setup_vmid_config()`
        // wrote the contexts; Linux then sets the fault-interrupt enables
        // in every context's register (`amdgpu_gmc_set_vm_fault_masks()`)
        // without updating that copy, so those bits are not compared.
        let hub = self.part.as_ref().map(|p| (p.context_cntl)());
        let cntl_ok = match hub {
            Some(h) => same_context_cntl(f.vm_context_cntl, h, self.api == MesApiVersion::V12),
            None => mes_regs::CONTEXT_CNTL_ENABLE.is_set(f.vm_context_cntl),
        };
        if !cntl_ok {
            return Err(Refusal::VmContextCntl {
                frame: f.vm_context_cntl,
                hub: hub.unwrap_or(0),
            });
        }
        self.context("process context", f.process_context)?;
        self.context("gang context", f.gang_context)?;
        if f.process_context == f.gang_context {
            return Err(Refusal::BadContext {
                what: "gang context (the same page as the process context)",
                address: f.gang_context,
            });
        }
        self.aggregated_doorbells_programmed()?;
        let ring_bytes = hqd.ring_bytes().map_err(Refusal::Size)?;
        let frame_dwords = u64::from(f.gds_size);
        if ring_bytes / 4 != frame_dwords {
            return Err(Refusal::QueueSizeMismatch {
                mqd_dwords: ring_bytes / 4,
                frame_dwords,
            });
        }
        // *Model rule*, as for legacy queues: MES and the CP watch one
        // word for the queue's work. KFD gives the MQD's
        // `CP_HQD_PQ_WPTR_POLL_ADDR` as the process's `write_ptr`
        // (`update_mqd()`); the frame's `wptr_addr` is that address, or,
        // from scheduler API version 2 on, the word's MC address
        // (`mes_v11_0_add_hw_queue()`: `input->wptr_mc_addr`, which
        // `add_queue_mes()` sets to the write-pointer BO's GART offset plus
        // the in-page offset). Either must reach the same memory.
        self.same_wptr(
            f.ptb & mes_regs::PDE_ADDRESS,
            f.wptr,
            hqd.wptr_poll_address(),
        )?;
        let dword = f.doorbell;
        let mqd_db = hqd.doorbell_dword();
        if dword != mqd_db {
            return Err(Refusal::DoorbellMismatch {
                frame: dword,
                mqd: mqd_db,
            });
        }
        // No check against `CP_MEC_DOORBELL_RANGE_*`: the range is what
        // wakes a power-gated GC (`gfx_v9_0_kiq_init_register()`: "If GC
        // has entered CGPG, ringing doorbell > first page doesn't wakeup
        // GC", so Linux enlarges it where that matters), not which
        // doorbells a queue may use. KFD's doorbells lie in the process
        // doorbell pages past the kernel's range (`kfd_doorbell_init()`,
        // measured by the Linux peer: dword 0x1000 against a range ending
        // at byte 0x450), and MES maps them. The model does not
        // power-gate GC.
        if self.state.lock().queues.contains_key(&dword)
            || self.mec.mapped_doorbells().contains(&dword)
        {
            return Err(Refusal::DoorbellInUse { dword });
        }
        if hqd.eop_address() == 0 || hqd.dword(crate::decode::mqd::dw::EOP_CONTROL) == 0 {
            return Err(Refusal::NoEop);
        }
        let ptb = f.ptb & mes_regs::PDE_ADDRESS;
        self.mapped(ptb, "ring", hqd.ring_address(), ring_bytes, Access::Read)?;
        self.mapped(ptb, "rptr", hqd.rptr_report_address(), 8, Access::Write)?;
        self.mapped(ptb, "wptr", hqd.wptr_poll_address(), 8, Access::Read)?;
        let eop_bytes = hqd.eop_bytes().map_err(Refusal::Size)?;
        self.mapped(ptb, "EOP", hqd.eop_address(), eop_bytes, Access::Write)?;
        let (vmid, fresh) = self.process_vmid_for(f)?;
        let slot = self.free_slot().ok_or(Refusal::NoFreeHqd)?;
        if fresh && let Some(hub) = &self.hub {
            // What the firmware programs into the VMID it picked: the
            // frame's PDE (VALID kept, as `amdgpu_gmc_pd_addr()` gave it),
            // its VA range in pages, and the hub's context control.
            hub.program_context(vmid, f.vm_context_cntl, f.ptb, f.va_start, f.va_end);
        }
        // MES enables the doorbell on the slot it picks and loads the HQD
        // with the VMID it assigned (the MQD carries 0 under MES: KFD's
        // `qpd->vmid` stays 0). The MEC reads the window with its own
        // decoder (`crate::cpregs`) and runs the queue in that VMID.
        let mut image = crate::decode::mqd::Hqd(hqd.with_doorbell_enabled().0);
        let w = crate::cpregs::w::VMID;
        image.set(
            w,
            (image.get(w) & !crate::cpregs::HQD_VMID_MASK) | u32::from(vmid),
        );
        self.mec.map_mqd(slot, &image).map_err(Refusal::Mec)?;
        let mut s = self.state.lock();
        s.queues.insert(dword, slot);
        s.gangs.entry(f.gang_context).or_default().insert(dword);
        let p = s
            .processes
            .entry(f.process_id)
            .or_insert_with(|| ProcessVm {
                vmid,
                ptb: f.ptb,
                process_context: f.process_context,
                queues: BTreeSet::new(),
            });
        p.queues.insert(dword);
        Ok(())
    }

    /// ADD_QUEUE with `MES_QUEUE_TYPE_SDMA` (`add_queue_mes()` for
    /// `KFD_QUEUE_TYPE_SDMA`): the SDMA MQD (`update_mqd_sdma()`'s, read
    /// with [`crate::decode::sdma::mqd`]) must name the frame's doorbell
    /// and a ring of the frame's size, not AQL; its ring and pointers must
    /// be mapped in the process; the process's VMID is picked (and its
    /// context programmed) as for a compute queue, then the queue is
    /// handed to the SDMA engine in that VMID.
    fn add_sdma_queue(&self, f: &AddArgs) -> Result<(), Refusal> {
        use crate::decode::sdma::mqd;
        if f.is_aql {
            return Err(Refusal::BadAddQueue {
                what: "an SDMA queue with is_aql_queue",
            });
        }
        if !f.is_kfd_process {
            return Err(Refusal::BadAddQueue {
                what: "a user SDMA queue without is_kfd_process",
            });
        }
        if f.ptb & mes_regs::PTE_VALID == 0 {
            return Err(Refusal::PageTableNotValid { ptb: f.ptb });
        }
        let hub = self.part.as_ref().map(|p| (p.context_cntl)());
        if let Some(h) = hub
            && !same_context_cntl(f.vm_context_cntl, h, self.api == MesApiVersion::V12)
        {
            return Err(Refusal::VmContextCntl {
                frame: f.vm_context_cntl,
                hub: h,
            });
        }
        self.context("process context", f.process_context)?;
        self.context("gang context", f.gang_context)?;
        let mut bytes = [0u8; mqd::BYTES];
        self.kernel_read(f.mqd_addr, &mut bytes, "SDMA MQD")
            .ok_or(Refusal::MqdUnreadable {
                address: f.mqd_addr,
            })?;
        let layout = match self.api {
            MesApiVersion::V11 => &mqd::V11,
            MesApiVersion::V12 => &mqd::V12,
        };
        let (ring, rb_cntl, rptr, wptr, db) = mqd::decode(layout, &bytes);
        if db != f.doorbell {
            return Err(Refusal::DoorbellMismatch {
                frame: f.doorbell,
                mqd: db,
            });
        }
        let ring_bytes = 4u64 << ((rb_cntl >> 1) & 0x1f);
        if ring_bytes / 4 != u64::from(f.gds_size) {
            return Err(Refusal::QueueSizeMismatch {
                mqd_dwords: ring_bytes / 4,
                frame_dwords: u64::from(f.gds_size),
            });
        }
        if self.state.lock().queues.contains_key(&db) {
            return Err(Refusal::DoorbellInUse { dword: db });
        }
        let ptb = f.ptb & mes_regs::PDE_ADDRESS;
        self.mapped(ptb, "SDMA ring", ring, ring_bytes, Access::Read)?;
        self.mapped(ptb, "SDMA rptr", rptr, 8, Access::Write)?;
        self.mapped(ptb, "SDMA wptr", wptr, 8, Access::Read)?;
        let sdma = self
            .part
            .as_ref()
            .and_then(|p| p.sdma.clone())
            .ok_or(Refusal::BadAddQueue {
                what: "an SDMA queue on a part with no SDMA engine model",
            })?;
        let (vmid, fresh) = self.process_vmid_for(f)?;
        if fresh && let Some(hub) = &self.hub {
            hub.program_context(vmid, f.vm_context_cntl, f.ptb, f.va_start, f.va_end);
        }
        sdma.map_scheduled(crate::sdma::SdmaQueue {
            ring,
            bytes: ring_bytes,
            vmid: u32::from(vmid),
            rptr_report: rptr,
            wptr_poll: wptr,
            doorbell: Some(db),
        })
        .map_err(|what| Refusal::BadAddQueue { what })?;
        let mut s = self.state.lock();
        // No HQD: the engine's queue (ME 0xff marks an SDMA queue here).
        s.queues.insert(db, (0xff, 0, 0));
        s.gangs.entry(f.gang_context).or_default().insert(db);
        let p = s
            .processes
            .entry(f.process_id)
            .or_insert_with(|| ProcessVm {
                vmid,
                ptb: f.ptb,
                process_context: f.process_context,
                queues: BTreeSet::new(),
            });
        p.queues.insert(db);
        Ok(())
    }

    /// The VMID of ADD_QUEUE's process: the one it holds, or (`true`) the
    /// lowest free VMID of `vmid_mask_gfxhub` for a process new to MES.
    /// A process keeps one page table and one process context (KFD sends
    /// the same `qpd->page_table_base` and `pdd->proc_ctx_gpu_addr` for
    /// each of its queues); its VA range must be what a context's START
    /// and END registers hold: page numbers, start not past end.
    fn process_vmid_for(&self, f: &AddArgs) -> Result<(u8, bool), Refusal> {
        if f.va_start > f.va_end || f.va_end > mes_regs::MAX_PAGE_NUMBER {
            return Err(Refusal::ProcessVaRange {
                start: f.va_start,
                end: f.va_end,
            });
        }
        let s = self.state.lock();
        if let Some(p) = s.processes.get(&f.process_id) {
            if p.ptb != f.ptb {
                return Err(Refusal::BadAddQueue {
                    what: "process_id already has another page_table_base_addr",
                });
            }
            if p.process_context != f.process_context {
                return Err(Refusal::BadContext {
                    what: "process context (not the one of the process's other queues)",
                    address: f.process_context,
                });
            }
            return Ok((p.vmid, false));
        }
        if s.processes
            .values()
            .any(|p| p.process_context == f.process_context)
        {
            return Err(Refusal::BadContext {
                what: "process context (another process's)",
                address: f.process_context,
            });
        }
        let taken: u16 = s.processes.values().fold(0, |m, p| m | 1 << p.vmid);
        let free = s.vmid_mask_gfxhub & !taken;
        if free == 0 {
            return Err(Refusal::NoFreeVmid {
                mask: u32::from(s.vmid_mask_gfxhub),
            });
        }
        Ok((free.trailing_zeros() as u8, true))
    }

    /// `map_legacy_kq`: MES maps a kernel (legacy) queue onto the HQD the
    /// frame names, from the MQD it names. Who takes it: on uni-MES (v12)
    /// the KIQ pipe (`mes_v12_0_map_legacy_queue()` sends it on
    /// `AMDGPU_MES_KIQ_PIPE` when `enable_uni_mes`), on v11 the scheduler
    /// pipe (`mes_v11_0_map_legacy_queue()`). What it maps:
    /// - the scheduler ring (queue type SCHQ, pipe 0, which must be
    ///   running): `mes_v12_0_queue_init()` for `AMDGPU_MES_SCHED_PIPE`;
    /// - a compute queue on ME 1, pipe `pipe_id`, queue `queue_id`
    ///   (`amdgpu_gfx_mes_enable_kcq()` → `amdgpu_mes_map_legacy_queue()`
    ///   for each KCQ): the queue must have the frame's doorbell and write
    ///   pointer in its MQD (both come from one ring in
    ///   `amdgpu_mes_map_legacy_queue()`), and its EOP buffer must be in
    ///   device memory.
    fn map_legacy(&self, f: &AddArgs) -> Result<(), Refusal> {
        let unsupported = Refusal::UnsupportedLegacyQueue {
            queue_type: f.queue_type,
            pipe: f.pipe_id,
        };
        let served_here = match self.api {
            MesApiVersion::V12 => self.pipe == 1,
            MesApiVersion::V11 => self.pipe == 0,
        };
        if !served_here {
            return Err(unsupported);
        }
        let hqd = self.read_mqd(f.mqd_addr)?;
        let mqd_db = hqd.doorbell_dword();
        if mqd_db != f.doorbell {
            return Err(Refusal::DoorbellMismatch {
                frame: f.doorbell,
                mqd: mqd_db,
            });
        }
        if f.queue_type == queue_type::SCHQ && self.api == MesApiVersion::V12 {
            if f.pipe_id != 0 || !self.mec.mes_pipe_running(0) {
                return Err(unsupported);
            }
            if let Some(what) = hqd.mes_ring_refusal() {
                return Err(Refusal::BadMesRing { what });
            }
            self.mec.set_mes_ring(crate::mec::MesRingHqd {
                ring: hqd.ring_address(),
                ring_dwords: hqd.ring_bytes().map_err(Refusal::Size)? / 4,
                doorbell_dword: mqd_db,
            });
            return Ok(());
        }
        if f.queue_type == queue_type::GFX && self.api == MesApiVersion::V11 {
            return self.map_legacy_gfx(f);
        }
        if f.queue_type != queue_type::COMPUTE || f.pipe_id >= 4 || f.queue_id >= 8 {
            return Err(unsupported);
        }
        // MES schedules user queues onto the HQDs SET_HW_RSRC's
        // `compute_hqd_mask` gives it (`amdgpu_mes_init()`: 0xc, queues 2
        // and 3 of each MEC1 pipe; `mes_v12_0_set_hw_resources()`); kernel
        // queues live beside them on the rest (`gfx_v12_0`'s KCQs on queues
        // 0 and 1). A legacy queue on a MES-owned HQD would be overwritten
        // by the next user queue MES places there (model rule). The mask
        // is the scheduler pipe's, kept by the MEC model: on v12 this
        // frame arrives on pipe 1, whose own SET_HW_RSRC carries none.
        if self.mec.mes_owns_hqd(f.pipe_id, f.queue_id) {
            return Err(unsupported);
        }
        if hqd.wptr_poll_address() != f.wptr {
            return Err(Refusal::WptrMismatch {
                frame: f.wptr,
                mqd: hqd.wptr_poll_address(),
            });
        }
        let eop_bytes = hqd.eop_bytes().map_err(Refusal::Size)?;
        if hqd.eop_address() == 0
            || !self.kernel_covers(hqd.eop_address(), eop_bytes, Access::Write)
        {
            return Err(Refusal::NoEop);
        }
        let slot = (1, f.pipe_id as u8, f.queue_id as u8);
        self.mec
            .map_window(slot, &hqd.with_doorbell_enabled().0)
            .map_err(Refusal::Mec)?;
        self.state.lock().queues.insert(f.doorbell, slot);
        Ok(())
    }

    /// A kernel graphics ring (`amdgpu_gfx_enable_kgq()` →
    /// `mes_v11_0_map_legacy_queue()`, `MES_QUEUE_TYPE_GFX`) onto ME 0
    /// from its `struct v11_gfx_mqd`: the frame's doorbell and write
    /// pointer are the MQD's (both from one ring in
    /// `amdgpu_mes_map_legacy_queue()`), the MQD is active and its ring is
    /// memory VMID 0 reaches; the MEC block checks the slot and the pipe
    /// ([`Mec::map_gfx`]).
    fn map_legacy_gfx(&self, f: &AddArgs) -> Result<(), Refusal> {
        use crate::decode::gfx_mqd_v11::{GFX_MQD_BYTES, GfxMqdV11};
        let mut bytes = [0u8; GFX_MQD_BYTES];
        self.kernel_read(f.mqd_addr, &mut bytes, "graphics MQD")
            .ok_or(Refusal::MqdUnreadable {
                address: f.mqd_addr,
            })?;
        let m = GfxMqdV11::decode(&bytes).map_err(|_| Refusal::BadAddQueue {
            what: "graphics MQD ring size (RB_BUFSZ) larger than a ring can be",
        })?;
        let mqd_db = m.doorbell.unwrap_or(0);
        if m.doorbell != Some(f.doorbell) {
            return Err(Refusal::DoorbellMismatch {
                frame: f.doorbell,
                mqd: mqd_db,
            });
        }
        if m.wptr_poll_address != f.wptr {
            return Err(Refusal::WptrMismatch {
                frame: f.wptr,
                mqd: m.wptr_poll_address,
            });
        }
        if !m.active {
            return Err(Refusal::BadAddQueue {
                what: "graphics MQD not active (cp_gfx_hqd_active clear)",
            });
        }
        if m.vmid != 0 || !self.kernel_covers(m.ring_address, m.ring_dwords * 4, Access::Read) {
            return Err(Refusal::NotMapped {
                what: "graphics ring (VMID 0)",
                address: m.ring_address,
            });
        }
        let narrow = |v: u32| u8::try_from(v).unwrap_or(u8::MAX);
        let slot = (0, narrow(f.pipe_id), narrow(f.queue_id));
        self.mec.map_gfx(slot.1, slot.2, &m).map_err(Refusal::Mec)?;
        self.state.lock().queues.insert(f.doorbell, slot);
        Ok(())
    }

    fn read_mqd(&self, address: u64) -> Result<Hqd, Refusal> {
        let mut bytes = [0u8; MQD_BYTES];
        self.kernel_read(address, &mut bytes, "MQD")
            .ok_or(Refusal::MqdUnreadable { address })?;
        Ok(Hqd::from_mqd(&bytes))
    }

    fn free_slot(&self) -> Option<(u8, u8, u8)> {
        let s = self.state.lock();
        let used: BTreeSet<(u8, u8, u8)> = s.queues.values().copied().collect();
        for (pipe, mask) in s.compute_hqd_mask.iter().enumerate().take(4) {
            for q in 0..8u8 {
                let k = (1u8, pipe as u8, q);
                if mask & (1 << q) != 0 && !used.contains(&k) {
                    return Some(k);
                }
            }
        }
        None
    }

    /// REMOVE_QUEUE: the doorbell names the queue; a queue of a gang is
    /// removed from the gang the frame names (`mes_v11_0_remove_hw_queue()`
    /// sends both), which must be its own.
    /// RESET (`mes_v11_0_reset_hw_queue()` / `mes_v12_0_reset_hw_queue()`
    /// send it for one queue): with `reset_queue_only`, the queue on
    /// `doorbell_offset` has its waves killed and stays known to MES (a
    /// REMOVE_QUEUE then takes it off). The gang must be the queue's. The
    /// hang-detection modes and `reset_legacy_gfx` are not modelled and
    /// are refused.
    fn reset(&self, flags: u32, dword: u32, gang: u64) -> Result<(), Refusal> {
        use crate::decode::mes_api::reset_flags as rf;
        if rf::RESET_QUEUE_ONLY.get(flags) == 0
            || rf::HANG_DETECT_THEN_RESET.get(flags) != 0
            || rf::HANG_DETECT_ONLY.get(flags) != 0
            || rf::RESET_LEGACY_GFX.get(flags) != 0
        {
            return Err(Refusal::BadReset { flags });
        }
        {
            let s = self.state.lock();
            if !s.queues.contains_key(&dword) {
                return Err(Refusal::UnknownQueue { doorbell: dword });
            }
            let own = s
                .gangs
                .iter()
                .find(|(_, q)| q.contains(&dword))
                .map(|(g, _)| *g);
            if own.is_some_and(|g| g != gang) {
                return Err(Refusal::BadContext {
                    what: "gang context (not the queue's gang)",
                    address: gang,
                });
            }
        }
        self.mec
            .reset_doorbell_queue(dword)
            .map(|_| ())
            .ok_or(Refusal::UnknownQueue { doorbell: dword })
    }

    fn remove_queue(&self, dword: u32, gang: u64) -> Result<(), Refusal> {
        if self.mec.doorbell_stuck(dword) {
            return Err(Refusal::QueueHung { doorbell: dword });
        }
        let mut s = self.state.lock();
        if !s.queues.contains_key(&dword) {
            return Err(Refusal::UnknownQueue { doorbell: dword });
        }
        let own = s
            .gangs
            .iter()
            .find(|(_, q)| q.contains(&dword))
            .map(|(g, _)| *g);
        if let Some(g) = own {
            if g != gang {
                return Err(Refusal::BadContext {
                    what: "gang context (not the queue's gang)",
                    address: gang,
                });
            }
            if let Some(q) = s.gangs.get_mut(&g) {
                q.remove(&dword);
                if q.is_empty() {
                    s.gangs.remove(&g);
                }
            }
        }
        let was_sdma = s.queues.remove(&dword).is_some_and(|slot| slot.0 == 0xff);
        // The process's last queue gone, its VMID is free for another.
        let owner = s
            .processes
            .iter()
            .find(|(_, p)| p.queues.contains(&dword))
            .map(|(k, _)| *k);
        if let Some(k) = owner
            && let Some(p) = s.processes.get_mut(&k)
        {
            p.queues.remove(&dword);
            if p.queues.is_empty() {
                s.processes.remove(&k);
            }
        }
        drop(s);
        if was_sdma {
            // The SDMA queue comes off the engine.
            if let Some(sdma) = self.part.as_ref().and_then(|p| p.sdma.clone()) {
                sdma.unmap_scheduled();
            }
            return Ok(());
        }
        self.mec.unmap_doorbell(dword);
        Ok(())
    }

    /// SUSPEND: the model takes `suspend_all_gangs` only (per-gang
    /// suspension is not modelled), and the fence the driver waits on
    /// must be given (`mes_v11_0_suspend_gang()` always passes one).
    fn suspend(&self, flags: u32, addr: u64, value: u32) -> Result<(), Refusal> {
        if !mes_api::ALL_GANGS.is_set(flags) {
            return Err(Refusal::BadSuspend {
                what: "not suspend_all_gangs",
            });
        }
        if addr == 0 || !self.device_visible(addr, 8) {
            return Err(Refusal::BadSuspend {
                what: "no device-visible suspend fence",
            });
        }
        self.state.lock().suspended = true;
        self.mec.cp().faults.stop_consuming = true;
        if addr != 0 {
            self.write_fence(addr, u64::from(value));
        }
        Ok(())
    }

    /// SET_HW_RSRC_1 supplements SET_HW_RSRC, so it must come after it.
    fn set_hw_rsrc_1(&self) -> Result<(), Refusal> {
        if self.state.lock().hw_rsrc {
            Ok(())
        } else {
            Err(Refusal::NoHwResources)
        }
    }

    fn resume(&self) -> Result<(), Refusal> {
        self.state.lock().suspended = false;
        self.mec.cp().faults.stop_consuming = false;
        Ok(())
    }
}

/// ADD_QUEUE's `vm_context_cntl` against the hub's context control,
/// ignoring the fault-interrupt enables Linux toggles in the register
/// after recording the value it sends (`amdgpu_gmc_set_vm_fault_masks()`:
/// `hub->vm_cntx_cntl_vm_fault`), GC 12's (`gfx12`, the v12 API) or GC 11's.
fn same_context_cntl(frame: u32, hub: u32, gfx12: bool) -> bool {
    let keep = !mes_regs::context_cntl_fault_interrupt_mask(gfx12);
    frame & keep == hub & keep
}

#[cfg(test)]
mod context_cntl_tests {
    use super::same_context_cntl;

    /// The values the Linux peer measured on navi31: ADD_QUEUE carried
    /// `hub->vm_cntx_cntl` 0x555407 while the registers held 0x7ffe07
    /// after `gmc_v11_0_vm_fault_interrupt_state()` enabled the fault
    /// interrupts; the old rule refused it.
    #[test]
    fn fault_interrupt_enables_are_not_compared() {
        assert!(same_context_cntl(0x0055_5407, 0x007f_fe07, false));
        assert!(same_context_cntl(0x0055_5407, 0x0055_5407, false));
        // GC 12: the same bits one higher (RETRY_OTHER_FAULT at bit 9,
        // `gc_12_0_0_sh_mask.h`): defaults 0xaaa800, interrupts 0x555400.
        assert!(same_context_cntl(0x00aa_a807, 0x00ff_fc07, true));
        assert!(!same_context_cntl(0x0055_5407, 0x007f_fe07, true));
    }

    /// Any other bit still has to match: depth, block size, the fault
    /// defaults, the enable.
    #[test]
    fn the_other_bits_still_have_to_match() {
        assert!(!same_context_cntl(0x0055_5406, 0x007f_fe07, false));
        assert!(!same_context_cntl(0x0055_5403, 0x0055_5407, false));
        assert!(!same_context_cntl(0x0015_5407, 0x0055_5407, false));
        assert!(!same_context_cntl(0, 0x0055_5407, false));
    }
}
