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
//!   doorbell is the MQD's, inside the MEC doorbell range and unused, that
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
//! and EOP); because the CP model has no per-VMID translation yet, each
//! page must map to its own address. A test may instead register a root
//! with [`MesModel::map_process_memory`], whose window list then stands in
//! for the table. Memory must also be in the CP model's DMA windows for
//! the device to touch it.
//!
//! SUSPEND (all gangs) stops the CP model (`stop_consuming`) and writes
//! the suspend fence; RESUME restarts it. Per-gang suspension and HQD
//! oversubscription are not modelled.
//!
//! Faults: `silent` (consumes nothing, answers nothing) and `error_status`
//! (refuses every frame but QUERY_SCHEDULER_STATUS).

use crate::gmc::{Access, Gmc, VmFault};
use crate::mec::{Mec, MecError};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::gfx::mqd::{HQD_DWORDS, HQD_FIRST_DWORD, HqdRegisters};
use barebell_firmware_if::mes_api::v12;
use barebell_firmware_if::mes_api::{API_TYPE_SCHEDULER, FRAME_BYTES, FRAME_DWORDS, MesApiHeader};
use core::sync::atomic::Ordering;
use spin::Mutex;
use zerocopy::FromBytes;

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
    DoorbellOutOfRange {
        dword: u32,
        lower: u32,
        upper: u32,
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
    /// A `map_legacy_kq` ADD_QUEUE for something other than the scheduler
    /// ring on a running pipe 0.
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
    UnknownQueue {
        doorbell: u32,
    },
    Mec(MecError),
    Injected,
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
            Refusal::BadHwResources { .. } => 4,
            Refusal::MqdUnreadable { .. } => 5,
            Refusal::NotAql => 6,
            Refusal::QueueSizeMismatch { .. } => 7,
            Refusal::DoorbellMismatch { .. } => 8,
            Refusal::DoorbellOutOfRange { .. } => 9,
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
        }
    }
}

/// `MES_ERR_CODE(api_err, opcode, 0, MES_ERROR_API)`.
fn err_code(api_err: u8, opcode: u8) -> u64 {
    let hi = u32::from(api_err)
        | u32::from(opcode) << v12::ERROR_CODE_HEADER_SHIFT
        | u32::from(v12::error_category::API) << v12::ERROR_CATEGORY_SHIFT
        | 1 << v12::STATUS_ERROR_SHIFT;
    u64::from(hi) << 32
}

struct HwArgs {
    vmid_mask_gfxhub: u32,
    compute_hqd_mask: [u32; 8],
    sch_ctx: u64,
}

struct AddArgs {
    map_legacy_kq: bool,
    pipe_id: u32,
    queue_type: u32,
    mqd_addr: u64,
    is_aql: bool,
    gds_size: u32,
    doorbell: u32,
    ptb: u64,
    wptr: u64,
}

/// Reads a frame of API module `$m` into the common handler arguments and
/// runs the handler; `None` for an opcode the model does not take.
macro_rules! decode {
    ($m:ident, $self:ident, $bytes:ident, $op:ident) => {{
        use barebell_firmware_if::mes_api::$m;
        match $op {
            $m::opcode::QUERY_SCHEDULER_STATUS => $m::QueryMesStatus::read_from_bytes($bytes)
                .ok()
                .map(|f| (f.api_status, Ok(()))),
            $m::opcode::SET_HW_RSRC => $m::SetHwResources::read_from_bytes($bytes).ok().map(|f| {
                let mut mask = [0u32; 8];
                for (d, m) in mask.iter_mut().zip(f.compute_hqd_mask.iter()) {
                    *d = m.get();
                }
                let a = HwArgs {
                    vmid_mask_gfxhub: f.vmid_mask_gfxhub.get(),
                    compute_hqd_mask: mask,
                    sch_ctx: f.g_sch_ctx_gpu_mc_ptr.get(),
                };
                (f.api_status, $self.guard(|| $self.set_hw_rsrc(&a)))
            }),
            $m::opcode::ADD_QUEUE => $m::AddQueue::read_from_bytes($bytes).ok().map(|f| {
                let a = AddArgs {
                    map_legacy_kq: $m::AddQueueFlags::from_bits(f.flags.get()).map_legacy_kq(),
                    pipe_id: f.pipe_id.get(),
                    queue_type: f.queue_type.get(),
                    mqd_addr: f.mqd_addr.get(),
                    is_aql: $m::AddQueueFlags::from_bits(f.flags.get()).is_aql_queue(),
                    gds_size: f.gds_size.get(),
                    doorbell: f.doorbell_offset.get(),
                    ptb: f.page_table_base_addr.get(),
                    wptr: f.wptr_addr.get(),
                };
                (f.api_status, $self.guard(|| $self.add_queue(&a)))
            }),
            $m::opcode::REMOVE_QUEUE => $m::RemoveQueue::read_from_bytes($bytes).ok().map(|f| {
                (
                    f.api_status,
                    $self.guard(|| $self.remove_queue(f.doorbell_offset.get())),
                )
            }),
            $m::opcode::SUSPEND => $m::Suspend::read_from_bytes($bytes).ok().map(|f| {
                (
                    f.api_status,
                    $self.guard(|| {
                        $self.suspend(f.suspend_fence_addr.get(), f.suspend_fence_value.get())
                    }),
                )
            }),
            $m::opcode::SET_HW_RSRC_1 => $m::SetHwResources1::read_from_bytes($bytes)
                .ok()
                .map(|f| (f.api_status, $self.guard(|| $self.set_hw_rsrc_1()))),
            $m::opcode::RESUME => $m::Resume::read_from_bytes($bytes)
                .ok()
                .map(|f| (f.api_status, $self.guard(|| $self.resume()))),
            _ => None,
        }
    }};
}

#[derive(Debug, Default)]
struct State {
    rptr: u64,
    hw_rsrc: bool,
    compute_hqd_mask: [u32; 8],
    suspended: bool,
    page_tables: BTreeMap<u64, Vec<(u64, u64)>>,
    /// Doorbell dword → HQD slot.
    queues: BTreeMap<u32, (u8, u8, u8)>,
    faults: MesFaults,
    log: Vec<MesEvent>,
}

/// How a platform walks a process's page tables for the MES model: the
/// host address `va` reaches through the tables rooted at `ptb`.
pub type Translator =
    alloc::boxed::Box<dyn Fn(u64, u64, Access) -> Result<u64, VmFault> + Send + Sync>;

/// The MES scheduler pipe.
pub struct MesModel {
    translator: Option<Translator>,
    mec: Arc<Mec>,
    api: MesApiVersion,
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
            mec,
            api: MesApiVersion::V11,
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
        Some(MesModel::new(mec, r.ring, r.ring_dwords, doorbell).with_api(api))
    }

    /// Walks process page tables with `t` (the platform's GMC and IOMMU)
    /// instead of through the CP model's DMA windows: each page of queue
    /// memory must reach the host byte the CP model reads at that VA.
    pub fn with_translator(mut self, t: Translator) -> Self {
        self.translator = Some(t);
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
            if self
                .mec
                .cp()
                .dma_mut()
                .read(at, &mut frame, "MES frame")
                .is_err()
            {
                break;
            }
            self.frame(&frame);
            self.state.lock().rptr = rptr.wrapping_add(FRAME_DWORDS as u64);
            n += 1;
        }
        n
    }

    fn write_fence(&self, addr: u64, value: u64) {
        if let Ok(a) = self.mec.cp().dma_mut().u64(addr, "MES fence") {
            a.store(value, Ordering::Release);
        }
    }

    fn frame(&self, bytes: &[u8; FRAME_BYTES]) {
        let word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let h = MesApiHeader::from_bits(word);
        let op = h.opcode();
        if h.api_type() != API_TYPE_SCHEDULER || usize::from(h.dwsize()) != FRAME_DWORDS {
            self.refuse(op, Refusal::BadHeader { header: word });
            return;
        }
        // api_status location and value, per frame type.
        let decoded = match self.api {
            MesApiVersion::V11 => decode!(v11, self, bytes, op),
            MesApiVersion::V12 => decode!(v12, self, bytes, op),
        };
        let (fence, result) = match decoded {
            Some(d) => d,
            None => {
                self.refuse(op, Refusal::UnknownOpcode { opcode: op });
                return;
            }
        };
        match result {
            Ok(()) => {
                self.state.lock().log.push(MesEvent::Done { opcode: op });
                self.write_fence(
                    fence.api_completion_fence_addr.get(),
                    fence.api_completion_fence_value.get(),
                );
            }
            Err(why) => {
                self.refuse(op, why);
                // v12 reports why in the status slot (`MES_ERR_CODE`);
                // v11 leaves it unwritten.
                if self.api == MesApiVersion::V12 {
                    self.write_fence(
                        fence.api_completion_fence_addr.get(),
                        err_code(why.code(), op),
                    );
                }
            }
        }
    }

    fn guard(&self, f: impl FnOnce() -> Result<(), Refusal>) -> Result<(), Refusal> {
        if self.state.lock().faults.error_status {
            return Err(Refusal::Injected);
        }
        f()
    }

    fn refuse(&self, opcode: u8, why: Refusal) {
        self.state
            .lock()
            .log
            .push(MesEvent::Refused { opcode, why });
    }

    fn set_hw_rsrc(&self, f: &HwArgs) -> Result<(), Refusal> {
        if f.vmid_mask_gfxhub == 0 {
            return Err(Refusal::BadHwResources {
                what: "vmid_mask_gfxhub is empty",
            });
        }
        if f.compute_hqd_mask.iter().all(|m| *m == 0) {
            return Err(Refusal::BadHwResources {
                what: "compute_hqd_mask is empty",
            });
        }
        if f.sch_ctx == 0 {
            return Err(Refusal::BadHwResources {
                what: "g_sch_ctx_gpu_mc_ptr is zero",
            });
        }
        let mut s = self.state.lock();
        s.compute_hqd_mask = f.compute_hqd_mask;
        s.hw_rsrc = true;
        Ok(())
    }

    /// Is `[address, address + len)` mapped in the address space rooted at
    /// `ptb`? A root registered with [`MesModel::map_process_memory`] is
    /// answered from its window list; any other root is walked as a real
    /// page table by the GMC model, page by page, and must translate to
    /// the same address (the CP model has no per-VMID translation, so
    /// queues must be identity-mapped).
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
        if let Some(t) = &self.translator {
            let mut page = address & !0xFFF;
            while page < end {
                match t(ptb, page, access) {
                    Ok(host) if host == page => {}
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
                Ok(t) if t.pa == page => {}
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

    fn add_queue(&self, f: &AddArgs) -> Result<(), Refusal> {
        if !self.state.lock().hw_rsrc {
            return Err(Refusal::NoHwResources);
        }
        if f.map_legacy_kq {
            return self.map_legacy(f);
        }
        let mqd_addr = f.mqd_addr;
        let mut mqd = [0u8; HQD_DWORDS * 4];
        self.mec
            .cp()
            .dma_mut()
            .read(mqd_addr + (HQD_FIRST_DWORD * 4) as u64, &mut mqd, "MQD")
            .map_err(|_| Refusal::MqdUnreadable { address: mqd_addr })?;
        let hqd = HqdRegisters::read_from_bytes(&mqd)
            .map_err(|_| Refusal::MqdUnreadable { address: mqd_addr })?;
        if f.is_aql && hqd.cp_hqd_aql_control == 0 {
            return Err(Refusal::NotAql);
        }
        let ring_bytes = hqd.ring_bytes().unwrap_or(0);
        let frame_dwords = u64::from(f.gds_size);
        if ring_bytes / 4 != frame_dwords {
            return Err(Refusal::QueueSizeMismatch {
                mqd_dwords: ring_bytes / 4,
                frame_dwords,
            });
        }
        let dword = f.doorbell;
        let mqd_db = hqd.doorbell_control().doorbell_offset();
        if dword != mqd_db {
            return Err(Refusal::DoorbellMismatch {
                frame: dword,
                mqd: mqd_db,
            });
        }
        let (lower, upper) = self.mec.doorbell_range();
        let byte = u64::from(dword) * 4;
        if byte < u64::from(lower) || byte > u64::from(upper) {
            return Err(Refusal::DoorbellOutOfRange {
                dword,
                lower,
                upper,
            });
        }
        if self.state.lock().queues.contains_key(&dword)
            || self.mec.mapped_doorbells().contains(&dword)
        {
            return Err(Refusal::DoorbellInUse { dword });
        }
        if hqd.eop_address() == 0 || hqd.cp_hqd_eop_control == 0 {
            return Err(Refusal::NoEop);
        }
        let ptb = f.ptb;
        self.mapped(ptb, "ring", hqd.ring_address(), ring_bytes, Access::Read)?;
        self.mapped(ptb, "rptr", hqd.rptr_report_address(), 8, Access::Write)?;
        self.mapped(ptb, "wptr", f.wptr, 8, Access::Read)?;
        // EOP_SIZE e encodes 2^(e+1) dwords.
        let eop_bytes = 8u64 << hqd.cp_hqd_eop_control.min(40);
        self.mapped(ptb, "EOP", hqd.eop_address(), eop_bytes, Access::Write)?;
        let slot = self.free_slot().ok_or(Refusal::NoFreeHqd)?;
        // MES enables the doorbell on the slot it picks.
        // The MEC reads the window with its own decoder (`crate::cpregs`);
        // the queue runs in the process's page tables, which MES points
        // the VMID it assigns at.
        let mut image = crate::cpregs::Hqd::from_mqd_window(&mqd);
        let db = crate::cpregs::w::PQ_DOORBELL_CONTROL;
        image.set(db, image.get(db) | crate::cpregs::DOORBELL_EN_MASK);
        self.mec
            .map_mqd_process(slot, &image, ptb)
            .map_err(Refusal::Mec)?;
        self.state.lock().queues.insert(dword, slot);
        Ok(())
    }

    /// `map_legacy_kq`: MES maps a kernel ring; the model takes the one
    /// uni-MES sends, the scheduler ring (queue type SCHQ, pipe 0).
    fn map_legacy(&self, f: &AddArgs) -> Result<(), Refusal> {
        if f.queue_type != barebell::gfx::mes::rings::MES_QUEUE_TYPE_SCHQ || f.pipe_id != 0 {
            return Err(Refusal::UnsupportedLegacyQueue {
                queue_type: f.queue_type,
                pipe: f.pipe_id,
            });
        }
        if !self.mec.mes_pipe_running(0) {
            return Err(Refusal::UnsupportedLegacyQueue {
                queue_type: f.queue_type,
                pipe: f.pipe_id,
            });
        }
        let mut mqd = [0u8; HQD_DWORDS * 4];
        self.mec
            .cp()
            .dma_mut()
            .read(f.mqd_addr + (HQD_FIRST_DWORD * 4) as u64, &mut mqd, "MQD")
            .map_err(|_| Refusal::MqdUnreadable {
                address: f.mqd_addr,
            })?;
        let hqd = HqdRegisters::read_from_bytes(&mqd).map_err(|_| Refusal::MqdUnreadable {
            address: f.mqd_addr,
        })?;
        let mqd_db = hqd.doorbell_control().doorbell_offset();
        if mqd_db != f.doorbell {
            return Err(Refusal::DoorbellMismatch {
                frame: f.doorbell,
                mqd: mqd_db,
            });
        }
        self.mec.set_mes_ring(crate::mec::MesRingHqd {
            ring: hqd.ring_address(),
            ring_dwords: hqd.ring_bytes().unwrap_or(0) / 4,
            doorbell_dword: mqd_db,
        });
        Ok(())
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

    fn remove_queue(&self, dword: u32) -> Result<(), Refusal> {
        if self.state.lock().queues.remove(&dword).is_none() {
            return Err(Refusal::UnknownQueue { doorbell: dword });
        }
        self.mec.unmap_doorbell(dword);
        Ok(())
    }

    fn suspend(&self, addr: u64, value: u32) -> Result<(), Refusal> {
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
