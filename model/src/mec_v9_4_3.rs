//! GC 9.4.3 (MI300) compute after the RLC/MEC start, every XCC: the HQD
//! registers, the KIQ of each XCC, the HIQ and its HWS, and the AQL queue
//! the XCCs run together, decoded with the model's own offsets and masks
//! ([`FACTS`], from `gc_9_4_3_offset.h` / `gc_9_4_3_sh_mask.h`), its own
//! v9 MQD decoder ([`crate::decode::mqd_v9`]) and PM4 tables
//! ([`crate::decode::pm4`]); never the runtime's types.
//!
//! # Registers ([`MecV943::offsets`])
//! Per XCC (its segment bases, as [`RlcMecV943::new`] takes them):
//! `GRBM_GFX_CNTL` (ME/pipe/queue select, `soc15_grbm_select()`), the HQD
//! window `CP_MQD_BASE_ADDR ..= CP_HQD_AQL_DISPATCH_ID_HI` banked per
//! selected slot, `CP_MEC_DOORBELL_RANGE_LOWER/UPPER`,
//! `CP_PQ_WPTR_POLL_CNTL(1)`, `CP_PQ_STATUS`, `SH_MEM_CONFIG/BASES` (banked
//! per selected VMID) and `RLC_CP_SCHEDULERS` (which slot is the KIQ,
//! `gfx_v9_4_3_xcc_kiq_setting()`). Nothing [`RlcMecV943`] owns.
//!
//! # What runs, and why not
//! - Nothing runs on an XCC whose MEC does not ([`RlcMecV943::mec_run`]):
//!   an activation there is refused and logged, and a queue spanning that
//!   XCC never reaches the CP.
//! - The KIQ: `CP_HQD_ACTIVE` set on the slot `RLC_CP_SCHEDULERS.scheduler0`
//!   names (with its enable bit), holding a privileged kernel PM4 ring in
//!   VMID 0 with its doorbell enabled inside that XCC's range (what
//!   `gfx_v9_4_3_xcc_mqd_init()` builds), activated while its MEC is
//!   halted (`gfx_v9_4_3_xcc_cp_resume()`'s order; a KIQ activated in a
//!   running MEC is refused, a *model convention*), running once the MEC
//!   is released. Its ring is then serviced up to
//!   the write pointer its doorbell announces (dwords): SET_RESOURCES,
//!   MAP_QUEUES (compute, or the HIQ: `engine_sel` 1), UNMAP_QUEUES
//!   (`RESET_QUEUES` kills the waves, dropping work in flight;
//!   `PREEMPT_QUEUES` drains, and never completes on a hung queue),
//!   WRITE_DATA to memory. A packet it
//!   refuses halts that KIQ: the driver sees a fence that never comes.
//!   Model rules, from `amdgpu_gfx_enable_kcq()`'s order: a compute
//!   MAP_QUEUES needs SET_RESOURCES first and a slot inside its queue
//!   mask (`mec * 32 + pipe * 8 + queue`).
//! - The HIQ: one per XCC, each mapped by that XCC's KIQ with a
//!   MAP_QUEUES of `engine_sel` 1 (`hiq_load_mqd_kiq_v9_4_3()` →
//!   `kgd_gfx_v9_hiq_mqd_load()` per XCC), all naming one ring and
//!   doorbell (`init_mqd_hiq_v9_4_3()`), and unmapped per XCC by its
//!   doorbell (`destroy_hiq_mqd_v9_4_3()`). The ring goes to a
//!   [`HwsModel`], whose [`HwsModel::mec_queues`] each XCC whose HIQ runs
//!   maps on itself, from its own MQD: a queue reaches only the XCCs
//!   whose HIQ took the runlist. Nothing is consumed without the master
//!   XCC's (0) HIQ, the one that reports the read pointer. *Model
//!   convention*: the XCCs' schedulers read the same packets, so the
//!   model decodes the ring once and applies it per XCC (the firmware's
//!   cross-XCC protocol is not public).
//! - An AQL queue: one HQD per XCC, reached by a direct HQD activation
//!   (`kgd_gfx_v9_4_3_hqd_load()`), a KIQ MAP_QUEUES, or the HWS runlist.
//!   It reaches the CP once every XCC of the partition holds it and its
//!   MQDs pass [`check_queue`] (the `init_mqd_v9_4_3()` invariants), as
//!   one queue whose dispatches the [`CpModel`]'s shader splits over the
//!   XCCs (`Shader::xccs`, `tg_chunk` from the MQD), completing once.
//!   *Model convention*: SPX, all XCCs of the block are one partition;
//!   a queue loaded by registers has its shared doorbell gated by XCC 0's
//!   range (see [`crate::decode::mqd_v9`]); one mapped by a KIQ's
//!   MAP_QUEUES or the HWS is not (the range decides what wakes a
//!   power-gated GC, `gfx_v9_0_kiq_init_register()`, and KFD's doorbells
//!   lie past it).
//! - Apertures: a queue in a VMID other than 0 binds only if its VMID's
//!   `SH_MEM_CONFIG` and `SH_MEM_BASES` on every XCC are 64-bit, unaligned, with both
//!   apertures away from 0 ([`sh_mem::apertures_set`], *model
//!   convention*); the HWS programs them from MAP_PROCESS on the XCCs it
//!   maps the queue on.
//! - Memory: kernel structures (KIQ rings, MQDs, fences) are read in
//!   VMID 0 through the XCC's translation, a direct/KIQ queue in its VMID
//!   through XCC 0's, an HWS queue through its process's page-table base
//!   from MAP_PROCESS: [`XccTranslate`], supplied by the device (the
//!   GFXHUB per XCC, the IOMMU). The HWS model reads its ring and IB
//!   through the [`Dma`] as device addresses (it has no translation hook).
//! - Doorbells: the block owns the BAR2 page ([`MecV943::doorbell_page`]);
//!   [`MecV943::service`] looks at it and hands each changed slot to the
//!   KIQ or queue listening there. A dequeue (`CP_HQD_DEQUEUE_REQUEST`)
//!   completes at once (model value).

use crate::SimClock;
use crate::cp::{CpModel, MecBinding, Translate};
use crate::decode::Bits;
use crate::decode::mqd_v9::{
    self as m9, HqdStateV9, HqdV9, MQD_BYTES, MqdV9, MqdV9Fault, WINDOW_DWORDS, check_queue,
};
use crate::decode::pm4::{
    self, map_queues as mq, opcode, set_resources as sr, unmap_queues as uq, write_data as wd,
};
use crate::dma::Dma;
use crate::gmc::{Access, AddressSpace, VmRefusal};
use crate::hsa::queue as amdq;
use crate::hws::{HwsConfig, HwsCp, HwsModel};
use crate::log::Keep;
use crate::regfile::ACCESS_NS;
use crate::rlc_mec_v9_4_3::{MecRefusal, RlcMecV943};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell_facts::Fact;
use core::sync::atomic::Ordering;
use spin::Mutex;

/// GC 9.4.3 register dword offsets the block owns, `(offset, BASE_IDX)`.
pub mod reg {
    pub const GRBM_GFX_CNTL: (u32, usize) = (0x0022, 0);
    pub const SH_MEM_BASES: (u32, usize) = (0x030a, 0);
    pub const SH_MEM_CONFIG: (u32, usize) = (0x030d, 0);
    pub const CP_MEC_DOORBELL_RANGE_LOWER: (u32, usize) = (0x105c, 0);
    pub const CP_MEC_DOORBELL_RANGE_UPPER: (u32, usize) = (0x105d, 0);
    pub const CP_PQ_WPTR_POLL_CNTL: (u32, usize) = (0x1083, 0);
    pub const CP_PQ_WPTR_POLL_CNTL1: (u32, usize) = (0x1084, 0);
    pub const CP_PQ_STATUS: (u32, usize) = (0x10b8, 0);
    pub const CP_MQD_BASE_ADDR: (u32, usize) = (0x1245, 0);
    pub const CP_HQD_ACTIVE: (u32, usize) = (0x1247, 0);
    pub const CP_HQD_DEQUEUE_REQUEST: (u32, usize) = (0x125d, 0);
    pub const CP_HQD_AQL_DISPATCH_ID_HI: (u32, usize) = (0x127f, 0);
    /// The last register of GC 9.4.2's HQD window (`gc_9_4_2_offset.h`):
    /// `kgd_gfx_v9_hqd_load()` copies `CP_MQD_BASE_ADDR ..=
    /// CP_HQD_PQ_WPTR_HI`. GC 9.4.2 has no register at the three dwords
    /// after it, where GC 9.4.3 has `CP_HQD_AQL_CONTROL_1`,
    /// `CP_HQD_AQL_DISPATCH_ID` and `_HI`.
    pub const CP_HQD_PQ_WPTR_HI_9_4_2: (u32, usize) = (0x127c, 0);
    pub const RLC_CP_SCHEDULERS: (u32, usize) = (0x4caa, 1);
    pub const CP_HQD_PERSISTENT_STATE: (u32, usize) = (0x1249, 0);
    pub const CP_HQD_PQ_CONTROL: (u32, usize) = (0x1256, 0);
    pub const CP_HQD_IB_CONTROL: (u32, usize) = (0x125a, 0);
    pub const CP_HQD_HQ_STATUS0: (u32, usize) = (0x1265, 0);
    pub const CP_MQD_CONTROL: (u32, usize) = (0x1267, 0);
    pub const CP_HQD_EOP_CONTROL: (u32, usize) = (0x126c, 0);
    pub const CP_HQD_EOP_RPTR: (u32, usize) = (0x126d, 0);
    pub const CP_HQD_EOP_WPTR: (u32, usize) = (0x126e, 0);
}

/// The HQD registers whose reset value is not 0, with that value
/// (`gc_9_0_default.h`'s `mm<REG>_DEFAULT`, checked by [`FACTS`]). A queue
/// slot reads these until a queue is loaded into it, so a driver that
/// read-modify-writes one field of them, as `gfx_v9_4_3_xcc_mqd_init()`
/// does (`RREG32_SOC15(... regCP_HQD_EOP_CONTROL)`, then `REG_SET_FIELD`
/// of `EOP_SIZE`), keeps the other fields' reset values.
/// *Model convention*: Linux 6.12 has no default header for GC 9.4.2 or
/// 9.4.3; the model resets their HQDs with GC 9.0's values, at the same
/// offsets in all three.
pub const HQD_RESET: [((u32, usize), u32); 8] = [
    (reg::CP_HQD_PERSISTENT_STATE, 0x0be0_5301),
    (reg::CP_HQD_PQ_CONTROL, 0x0030_8509),
    (reg::CP_HQD_IB_CONTROL, 0x0030_0000),
    (reg::CP_HQD_HQ_STATUS0, 0x4000_0000),
    (reg::CP_MQD_CONTROL, 0x0000_0100),
    (reg::CP_HQD_EOP_CONTROL, 0x0000_0006),
    (reg::CP_HQD_EOP_RPTR, 0x4000_0000),
    (reg::CP_HQD_EOP_WPTR, 0x007f_8000),
];

/// Fields (`gc_9_4_3_sh_mask.h`).
pub const SCHEDULER0: Bits = Bits::new(0, 8);
/// The bit `gfx_v9_4_3_xcc_kiq_setting()` ORs into scheduler0 (the
/// field's top bit; the slot is `me << 5 | pipe << 3 | queue`).
pub const SCHEDULER0_ENABLE: u32 = 0x80;
pub const DEQUEUE_REQ: Bits = Bits::new(0, 3);
pub const PQ_STATUS_DOORBELL_ENABLE: Bits = Bits::new(1, 1);

/// Doorbell slots of the BAR2 page the block owns: the model's
/// doorbells ([`crate::bar::DOORBELL_SLOTS`], 64 KiB): the kernel's (XCC
/// 7's KIQ, index 0xE0, is the highest Linux's kernel rings use) and
/// KFD's, which start past them (the Linux peer's HIQ rings BAR2 byte
/// 0x3000).
pub const DOORBELL_SLOTS: usize = crate::bar::DOORBELL_SLOTS;

/// Where a translation is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// The GFXHUB context of this VMID on the XCC.
    Vmid(u8),
    /// A process's page tables, as MAP_PROCESS names them (HWS queues).
    Process { page_table_base: u64 },
}

/// How the block turns a device address into a host address the [`Dma`]
/// covers: supplied by the device (each XCC's GFXHUB, the IOMMU).
pub trait XccTranslate: Send + Sync {
    fn translate(
        &self,
        xcc: usize,
        space: Space,
        va: u64,
        access: Access,
    ) -> Result<u64, VmRefusal>;
    /// Changes whenever a TLB invalidation completes.
    fn generation(&self) -> u64 {
        0
    }
    /// The scheduler bound a process to `vmid`: the CP firmware writes
    /// MAP_PROCESS's `vm_context_page_table_base_addr` (as KFD sends it,
    /// `pm_map_process_v9()`, valid bit included) into the VMID's
    /// `VM_CONTEXTn_PAGE_TABLE_BASE_ADDR_LO32/HI32` on every XCC's GFXHUB;
    /// KFD under the HWS never writes them itself (only
    /// `*_setup_vmid_config()`'s CNTL, START and END at init).
    fn bind_process(&self, _vmid: u8, _page_table_base: u64) {}
}

/// Device address = host address in every space: a rig convention (the
/// runtime's `Dev` contract with page tables that map VA = host address),
/// not a hub.
#[derive(Debug, Clone, Copy, Default)]
pub struct IdentityTranslate;

impl XccTranslate for IdentityTranslate {
    fn translate(&self, _: usize, _: Space, va: u64, _: Access) -> Result<u64, VmRefusal> {
        Ok(va)
    }
}

/// How a queue reached the HQDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Direct,
    Kiq,
    Hws,
}

/// Why the block refused something (each also logged, in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MecV943Refusal {
    /// An activation or mapping on an XCC whose MEC does not run.
    Mec(MecRefusal),
    /// An HQD window or a queue's MQDs fail the v9 checks.
    Mqd { xcc: usize, fault: MqdV9Fault },
    /// The KIQ slot's HQD is not a ring the KIQ can run.
    KiqHqd { xcc: usize, what: &'static str },
    /// A PM4 queue activated on a slot `RLC_CP_SCHEDULERS` does not name.
    NotTheKiq { xcc: usize, slot: (u32, u32, u32) },
    /// The KIQ's HQD activated while its MEC already runs.
    KiqWhileRunning { xcc: usize, slot: (u32, u32, u32) },
    /// A write to a GC dword past GC 9.4.2's HQD window, where that GC
    /// has no register ([`reg::CP_HQD_PQ_WPTR_HI_9_4_2`]).
    NoSuchRegister { xcc: usize, offset: u32 },
    /// A queue's VMID has no compute apertures on an XCC
    /// ([`sh_mem::apertures_set`]).
    AperturesUnset {
        xcc: usize,
        vmid: u8,
        config: u32,
        bases: u32,
    },
    /// A KIQ packet the model does not execute (the KIQ halts).
    KiqPacket {
        xcc: usize,
        opcode: u32,
        what: &'static str,
    },
    /// The KIQ could not read its ring at `address` (VMID 0's decode).
    KiqRingUnreachable { xcc: usize, address: u64 },
    /// KIQ MAP_QUEUES onto a slot outside SET_RESOURCES' queue mask.
    NotInQueueMask { xcc: usize, bit: u32, mask: u64 },
    /// A device address the block could not reach, and why, when the
    /// translation said (`None`: no memory backs the address).
    Memory {
        xcc: usize,
        va: u64,
        why: Option<VmRefusal>,
    },
}

impl core::fmt::Display for MecV943Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MecV943Refusal::Mec(r) => write!(f, "{r}"),
            MecV943Refusal::Mqd { xcc, fault } => write!(f, "XCC {xcc}: {fault}"),
            MecV943Refusal::KiqHqd { xcc, what } => write!(f, "XCC {xcc} KIQ HQD: {what}"),
            MecV943Refusal::NotTheKiq { xcc, slot } => write!(
                f,
                "XCC {xcc}: a PM4 queue on ME {} pipe {} queue {}, which RLC_CP_SCHEDULERS does not name the KIQ",
                slot.0, slot.1, slot.2
            ),
            MecV943Refusal::NoSuchRegister { xcc, offset } => write!(
                f,
                "XCC {xcc}: a write to GC dword {offset:#x}, where GC 9.4.2 has no register (its HQD window ends at CP_HQD_PQ_WPTR_HI, 0x127c: kgd_gfx_v9_hqd_load())"
            ),
            MecV943Refusal::KiqWhileRunning { xcc, slot } => write!(
                f,
                "XCC {xcc}: the KIQ (ME {} pipe {} queue {}) was loaded while its MEC runs; load it with the MEC halted (CP_MEC_CNTL), then release the MEC",
                slot.0, slot.1, slot.2
            ),
            MecV943Refusal::AperturesUnset {
                xcc,
                vmid,
                config,
                bases,
            } => write!(
                f,
                "XCC {xcc}: VMID {vmid} has no compute apertures (SH_MEM_CONFIG {config:#x}, SH_MEM_BASES {bases:#x}): program SH_MEM per VMID as gfx_v9_4_3_xcc_init_compute_vmid() does, or pass them in MAP_PROCESS"
            ),
            MecV943Refusal::KiqPacket { xcc, opcode, what } => write!(
                f,
                "XCC {xcc} KIQ halted on {} ({opcode:#x}): {what}",
                pm4::opcode_name(*opcode)
            ),
            MecV943Refusal::KiqRingUnreachable { xcc, address } => write!(
                f,
                "XCC {xcc} KIQ halted: its ring at {address:#x} is not reachable through VMID 0"
            ),
            MecV943Refusal::NotInQueueMask { xcc, bit, mask } => write!(
                f,
                "XCC {xcc} KIQ MAP_QUEUES onto queue bit {bit}, outside SET_RESOURCES' mask {mask:#x}"
            ),
            MecV943Refusal::Memory { xcc, va, why } => {
                write!(f, "XCC {xcc}: device address {va:#x} is not reachable")?;
                match why {
                    Some(w) => write!(f, " ({w:?})"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// One HQD slot: `(ME, pipe, queue)`.
pub type Slot = (u32, u32, u32);

#[derive(Debug, Clone, Copy)]
struct Hqd {
    window: HqdV9,
    active: bool,
}

impl Default for Hqd {
    /// A slot no queue was loaded into: its registers at reset
    /// ([`HQD_RESET`]).
    fn default() -> Self {
        let mut window = [0; WINDOW_DWORDS];
        for ((offset, _), value) in HQD_RESET {
            let i = offset.wrapping_sub(reg::CP_MQD_BASE_ADDR.0) as usize;
            if let Some(d) = window.get_mut(i) {
                *d = value;
            }
        }
        Hqd {
            window: HqdV9(window),
            active: false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct KiqState {
    slot: Slot,
    ring: u64,
    ring_dwords: u64,
    doorbell_dword: u32,
    rptr_report: u64,
    rptr: u64,
    announced: u64,
    resources: Option<u64>,
    halted: bool,
    /// A register `WAIT_REG_MEM` not met yet.
    wait: Option<RegWait>,
}

/// A KIQ `WAIT_REG_MEM` on a register: the register (absolute byte
/// offset), the mask, the reference and function, and the value the
/// device last read there ([`MecV943::register_values`]).
#[derive(Debug, Clone, Copy)]
struct RegWait {
    reg: u32,
    mask: u32,
    reference: u32,
    function: u32,
    value: Option<u32>,
}

#[derive(Debug, Default)]
struct Xcc {
    grbm: u32,
    range: (u32, u32),
    poll_cntl: u32,
    poll_cntl1: u32,
    pq_status: u32,
    schedulers: u32,
    hqds: BTreeMap<Slot, Hqd>,
    sh_mem: BTreeMap<u32, (u32, u32)>,
    kiq: Option<KiqState>,
}

/// A queue as the block tracks it across XCCs.
#[derive(Debug, Clone)]
pub struct XccQueueRecord {
    pub source: Source,
    /// XCC 0's MQD address (the others at its `cp_mqd_stride_size`).
    pub mqd: u64,
    pub doorbell_dword: u32,
    pub vmid: u8,
    /// `(xcc, slot, MQD address)` of each XCC holding it.
    pub members: Vec<(usize, Slot, u64)>,
    /// The CP queue, once every XCC holds it and its MQDs passed.
    pub cp: Option<usize>,
    /// The HWS process's page-table base (HWS queues).
    pub page_table_base: Option<u64>,
    /// Refused, or unmapped after it ran: never bound again (a later
    /// mapping of the same doorbell is a new entry).
    pub retired: bool,
}

#[derive(Default)]
struct State {
    xcc: Vec<Xcc>,
    queues: Vec<XccQueueRecord>,
    refusals: Vec<MecV943Refusal>,
    /// Register stores the KIQs made (`SET_UCONFIG_REG`, `WRITE_DATA`
    /// to a register), as BAR byte offsets and values.
    register_stores: Vec<(u32, u32)>,
    hws: Option<Arc<HwsModel>>,
    /// The HIQ of each XCC that mapped one: its HQD slot, ring and
    /// doorbell (`hiq_load_mqd_kiq_v9_4_3()` maps one per XCC).
    hiqs: BTreeMap<usize, Hiq>,
    shadow: Vec<u64>,
    unclaimed_doorbells: u64,
}

/// One XCC's HIQ, as its KIQ mapped it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hiq {
    slot: Slot,
    ring: u64,
    doorbell_dword: u32,
    /// This XCC's HIQ MQD (VMID 0), where the scheduler logs a queue
    /// whose preemption it abandoned.
    mqd: u64,
}

/// HWS processes' VMIDs and page-table bases, shared with the CP's
/// translator.
type Spaces = Arc<Mutex<Vec<(u8, u64)>>>;

struct CpTranslate {
    mem: Arc<dyn XccTranslate>,
    spaces: Spaces,
}

impl Translate for CpTranslate {
    fn translate(&self, space: AddressSpace, va: u64, access: Access) -> Result<u64, VmRefusal> {
        match space {
            AddressSpace::Identity => Ok(va),
            AddressSpace::Vmid(v) => {
                let ptb = self
                    .spaces
                    .lock()
                    .iter()
                    .find(|(vmid, _)| *vmid == v)
                    .map(|(_, p)| *p);
                // Model convention: the ring every XCC reads is read
                // through XCC 0's hub (all XCCs' hubs hold the same VMID
                // set-up on one partition).
                let s = match ptb {
                    Some(page_table_base) => Space::Process { page_table_base },
                    None => Space::Vmid(v),
                };
                self.mem.translate(0, s, va, access)
            }
        }
    }
    fn generation(&self) -> u64 {
        self.mem.generation()
    }
}

use crate::bar::DoorbellPage;

/// The GC 9.4.3 CP of every XCC.
pub struct MecV943 {
    clock: SimClock,
    bases: Vec<[u32; 8]>,
    rlc: Arc<RlcMecV943>,
    mem: Arc<dyn XccTranslate>,
    dma: Dma,
    doorbells: Box<DoorbellPage>,
    spaces: Spaces,
    state: Mutex<State>,
    cp: Mutex<CpModel>,
    /// What a doorbell store crosses before it reaches the CP (the
    /// device's NBIO doorbell aperture); `None` passes every store.
    gate: Mutex<Option<DoorbellGate>>,
    /// Set when the device fell off the bus: nothing runs any more.
    halted: core::sync::atomic::AtomicBool,
    /// Fault switch: every XCC's KIQ and the HWS stop reading their
    /// rings (their firmware hung), until a reset.
    schedulers_hung: core::sync::atomic::AtomicBool,
    /// Each AID's MMHUB segment-0 base (dwords) and the XCCs per AID
    /// ([`MecV943::xcc_register`]).
    aid_mmhubs: Mutex<(Vec<u32>, usize)>,
    /// Whether packets name registers XCC-locally (GC 9.4.3:
    /// `gfx_v9_4_3_normalize_xcc_reg_offset()`); GC 9.4.2's `gfx_v9_0.c`
    /// emits `SOC15_REG_OFFSET()`s, absolute ([`MecV943::gc_9_4_2`]).
    xcc_local_registers: core::sync::atomic::AtomicBool,
    /// Why the last translation failed ([`MecV943::unreachable`]).
    last_miss: Mutex<Option<VmRefusal>>,
    /// Where the CP's end-of-pipe interrupts go ([`MecV943::set_eop_line`]).
    eop_line: Mutex<Option<EopLineV9>>,
}

/// Where an end-of-pipe interrupt goes: the XCC and slot of the queue
/// that raised it (a queue the CP runs for every XCC reports XCC 0's),
/// and the `RELEASE_MEM` context id.
pub type EopLineV9 = Box<dyn Fn(usize, Slot, u32) + Send + Sync>;

/// A device's doorbell path: whether a store of `value` to doorbell
/// `dword` reaches the GC (it records what it drops).
pub type DoorbellGate = Box<dyn Fn(u32, u64) -> bool + Send + Sync>;

impl core::fmt::Debug for MecV943 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MecV943")
            .field("xccs", &self.bases.len())
            .finish_non_exhaustive()
    }
}

/// The slot the model's HWS puts its queues on, on every XCC: ME 1
/// pipe 0 queue 1, the first of KFD's queue mask after amdgpu's bit 0
/// (which slot the firmware picks is not public: model convention).
pub const HWS_SLOT: Slot = (1, 0, 1);

/// CP steps per [`MecV943::service`] call (model value).
pub const CP_STEPS_PER_SERVICE: usize = 8;

impl MecV943 {
    /// The XCCs at `bases` (XCC `n` = `bases[n]`), gated by `rlc`'s MEC
    /// state, running queues on `cp` (whose DMA windows the device set),
    /// reading kernel structures through `dma` after `mem` translated
    /// them.
    pub fn new(
        clock: &SimClock,
        bases: Vec<[u32; 8]>,
        rlc: Arc<RlcMecV943>,
        mut cp: CpModel,
        dma: Dma,
        mem: Arc<dyn XccTranslate>,
    ) -> Self {
        let n = bases.len();
        let spaces: Spaces = Arc::new(Mutex::new(Vec::new()));
        cp.set_translator(Box::new(CpTranslate {
            mem: mem.clone(),
            spaces: spaces.clone(),
        }));
        // Every pipe may run: the MEC gate is per XCC, at activation.
        cp.set_running_pipes(0xFF);
        cp.shader.xccs = n.max(1) as u32;
        let mut dma = dma;
        let doorbells = DoorbellPage::boxed();
        // SAFETY: the page is boxed in `self` (it does not move) and is
        // dropped with the `Dma` that maps it; it is only accessed
        // atomically.
        unsafe {
            dma.map(
                &*doorbells as *const DoorbellPage as u64,
                (DOORBELL_SLOTS * 8) as u64,
            )
        };
        MecV943 {
            clock: clock.clone(),
            bases,
            rlc,
            mem,
            dma,
            doorbells,
            spaces,
            state: Mutex::new(State {
                xcc: (0..n).map(|_| Xcc::default()).collect(),
                shadow: vec![0; DOORBELL_SLOTS],
                ..State::default()
            }),
            cp: Mutex::new(cp),
            gate: Mutex::new(None),
            halted: core::sync::atomic::AtomicBool::new(false),
            schedulers_hung: core::sync::atomic::AtomicBool::new(false),
            aid_mmhubs: Mutex::new((Vec::new(), 1)),
            xcc_local_registers: core::sync::atomic::AtomicBool::new(true),
            last_miss: Mutex::new(None),
            eop_line: Mutex::new(None),
        }
    }

    /// Sends the CP's end-of-pipe interrupts through `line` from now on.
    pub fn set_eop_line(&self, line: EopLineV9) {
        *self.eop_line.lock() = Some(line);
    }

    /// Hands the CP's end-of-pipe interrupts to the line, each with its
    /// queue's XCC and slot (dropped with no line).
    fn deliver_eop(&self) {
        let raised = self.cp.lock().take_eop_interrupts();
        if raised.is_empty() {
            return;
        }
        let line = self.eop_line.lock();
        let Some(line) = line.as_ref() else {
            return;
        };
        let s = self.state.lock();
        for (q, context) in raised {
            let member = s
                .queues
                .iter()
                .find(|r| r.cp == Some(q))
                .and_then(|r| r.members.first());
            if let Some(&(xcc, slot, _)) = member {
                line(xcc, slot, context);
            }
        }
    }

    /// Each AID's MMHUB segment-0 base (dwords), XCC `x` being on AID
    /// `x / xccs_per_aid`.
    /// GC 9.4.2 (one GC), where two things differ from GC 9.4.3:
    /// - the registers its packets name are absolute dword offsets.
    ///   `gfx_v9_0.c`'s `WRITE_DATA`/`WAIT_REG_MEM`
    ///   (`gfx_v9_0_ring_emit_wreg()`, `gfx_v9_0_wait_reg_mem()`) carry
    ///   `SOC15_REG_OFFSET()` values, so an MMHUB 1.7 invalidation
    ///   register (0x1A000 + 0xbe3 + engine) is itself; only
    ///   `gfx_v9_4_3.c` normalizes offsets to XCC-local ones;
    /// - a queue has one MQD, built by `init_mqd()` (KFD's
    ///   `mqd_manager_init_v9()` takes the `_v9_4_3` variants for 9.4.3
    ///   only), whose unions hold `compute_static_thread_mgmt_se4..7`
    ///   (`0xFFFFFFFF`), not the XCC fields
    ///   ([`crate::decode::mqd_v9::XccView::xcc_fields`]).
    pub fn gc_9_4_2(&self) {
        self.xcc_local_registers
            .store(false, core::sync::atomic::Ordering::Relaxed);
    }

    pub fn set_aid_mmhubs(&self, bases: Vec<u32>, xccs_per_aid: usize) {
        *self.aid_mmhubs.lock() = (bases, xccs_per_aid.max(1));
    }

    /// The BAR2 page (host address, bytes): the device's doorbell
    /// aperture. Stores there reach a KIQ or queue at the next
    /// [`MecV943::service`].
    pub fn doorbell_page(&self) -> (u64, usize) {
        (
            &*self.doorbells as *const DoorbellPage as u64,
            DOORBELL_SLOTS * 8,
        )
    }

    /// Puts the device's doorbell path in front of the CP: a store found
    /// on the page reaches a KIQ or queue only if `gate` passes it.
    pub fn set_doorbell_gate(&self, gate: DoorbellGate) {
        *self.gate.lock() = Some(gate);
    }

    /// Every byte offset the block decodes, for the device's BAR5 routing.
    pub fn offsets(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for b in &self.bases {
            let mut at = |(off, idx): (u32, usize)| {
                if let Some(base) = b.get(idx) {
                    out.push((base + off) as usize * 4);
                }
            };
            for r in [
                reg::GRBM_GFX_CNTL,
                reg::SH_MEM_BASES,
                reg::SH_MEM_CONFIG,
                reg::CP_MEC_DOORBELL_RANGE_LOWER,
                reg::CP_MEC_DOORBELL_RANGE_UPPER,
                reg::CP_PQ_WPTR_POLL_CNTL,
                reg::CP_PQ_WPTR_POLL_CNTL1,
                reg::CP_PQ_STATUS,
                reg::RLC_CP_SCHEDULERS,
            ] {
                at(r);
            }
            for o in reg::CP_MQD_BASE_ADDR.0..=reg::CP_HQD_AQL_DISPATCH_ID_HI.0 {
                at((o, 0));
            }
        }
        out
    }

    /// Everything refused, in order.
    /// Each XCC's HIQ as its KIQ mapped it, and whether its ME and pipe
    /// run now (the scheduler runs only while XCC 0's does).
    pub fn hiq_status(&self) -> Vec<alloc::string::String> {
        let s = self.state.lock();
        s.hiqs
            .iter()
            .map(|(x, h)| {
                let runs = self.rlc.mec_run_on(*x, h.slot.0, h.slot.1).is_ok()
                    && self.rlc.mec_run(*x).is_ok();
                alloc::format!(
                    "XCC {x} HIQ on ME {} pipe {} queue {}, doorbell dword {:#x}, {}",
                    h.slot.0,
                    h.slot.1,
                    h.slot.2,
                    h.doorbell_dword,
                    if runs {
                        "running now"
                    } else {
                        "its ME or pipe halted now"
                    }
                )
            })
            .collect()
    }

    pub fn refusals(&self) -> Vec<MecV943Refusal> {
        self.state.lock().refusals.clone()
    }

    /// The register stores the KIQs and the CP's PM4 queues made since
    /// the last call, KIQs' first, for the device's register bus.
    pub fn take_register_stores(&self) -> Vec<(u32, u32)> {
        let mut s = self.state.lock();
        let mut out = core::mem::take(&mut s.register_stores);
        for (q, at, v) in self.cp.lock().take_queue_register_stores() {
            // The XCC the queue runs on (a PM4 queue lives on one).
            let xcc = s
                .queues
                .iter()
                .find(|r| r.cp == Some(q))
                .and_then(|r| r.members.first())
                .map_or(0, |m| m.0);
            out.push((self.xcc_register(xcc, at / 4).wrapping_mul(4), v));
        }
        out
    }

    /// The BAR dword offset of register `local` as a packet on XCC
    /// `xcc` names it. GC 9.4.3's packets carry XCC-local offsets (XCC
    /// 0's, `SOC15_REG_OFFSET(GC, 0, ...)`: "Use register offset which is
    /// local to XCC in the packet", `gfx_v9_4_3_ring_test_ring()`;
    /// `gfx_v9_4_3_normalize_xcc_reg_offset()` keeps the low 16 bits of a
    /// register in `XCC_REG_RANGE_0` 0x2000..0x3400 or `_1`
    /// 0xA000..0x10000): such an offset lands in XCC `xcc`'s own segment;
    /// any other is absolute.
    ///
    /// One exception, a *model convention*: Linux flushes each AID's
    /// MMHUB TLB through KIQ 0 (`gmc_v9_0_flush_gpu_tlb()`: `inst = 0` for
    /// an MMHUB), and the normalization also cuts MMHUB 1.8's
    /// `VM_INVALIDATE_ENG*_SEM/REQ/ACK` (0x1A000 + 0x0bb1..0x0be7) down
    /// to 0xabb1..0xabe7, where `gc_9_4_3_offset.h` lists no GC register.
    /// How the CP resolves such an offset is not public; Linux relies on
    /// the flush completing, so the model takes those offsets as the
    /// invalidation registers of the MMHUB of the XCC's own AID.
    pub fn xcc_register(&self, xcc: usize, local: u32) -> u32 {
        if !self
            .xcc_local_registers
            .load(core::sync::atomic::Ordering::Relaxed)
        {
            return local;
        }
        let low = local & 0xFFFF;
        let hub = crate::hub_v9::MMHUB_1_8;
        let eng = hub.inv_eng0_sem..hub.inv_eng0_ack + crate::hub_v9::ENGINES;
        if local == low && low >= 0xA000 && eng.contains(&(low - 0xA000)) {
            let (mmhubs, per_aid) = &*self.aid_mmhubs.lock();
            if let Some(base) = mmhubs.get(xcc / per_aid) {
                return base.wrapping_add(low - 0xA000);
            }
        }
        let in_xcc = (0x2000..0x3400).contains(&low) || (0xA000..0x1_0000).contains(&low);
        let (Some(b0), Some(bx)) = (self.bases.first(), self.bases.get(xcc)) else {
            return local;
        };
        if !in_xcc {
            return local;
        }
        // XCC 0's segment holding the offset: the highest base below it.
        let seg = b0
            .iter()
            .enumerate()
            .filter(|(_, b)| **b != 0 && **b <= low)
            .max_by_key(|(_, b)| **b)
            .map(|(k, _)| k);
        match seg.and_then(|k| Some((bx.get(k)?, b0.get(k)?))) {
            Some((x, z)) => x.wrapping_add(low - z),
            None => local,
        }
    }

    /// The queues the block knows, in the order first seen.
    pub fn queues(&self) -> Vec<XccQueueRecord> {
        self.state.lock().queues.clone()
    }

    /// Whether XCC `xcc`'s HQD `slot` is active.
    pub fn hqd_active(&self, xcc: usize, slot: Slot) -> bool {
        self.state
            .lock()
            .xcc
            .get(xcc)
            .and_then(|x| x.hqds.get(&slot))
            .is_some_and(|h| h.active)
    }

    /// Whether XCC `xcc`'s KIQ runs (and has not halted).
    pub fn kiq_running(&self, xcc: usize) -> bool {
        self.state
            .lock()
            .xcc
            .get(xcc)
            .and_then(|x| x.kiq)
            .is_some_and(|k| !k.halted && self.rlc.mec_run_on(xcc, k.slot.0, k.slot.1).is_ok())
    }

    /// The HWS on the HIQ, once mapped.
    pub fn hws(&self) -> Option<Arc<HwsModel>> {
        self.state.lock().hws.clone()
    }

    /// The CP model (stats, shader counters).
    pub fn cp(&self) -> spin::MutexGuard<'_, CpModel> {
        self.cp.lock()
    }

    fn refuse(&self, s: &mut State, r: MecV943Refusal) {
        s.refusals.keep(r);
    }

    fn decode(&self, byte_offset: usize) -> Option<(usize, u32, usize)> {
        if !byte_offset.is_multiple_of(4) {
            return None;
        }
        let dw = (byte_offset / 4) as u64;
        for (i, b) in self.bases.iter().enumerate() {
            for idx in [0usize, 1] {
                let Some(base) = b.get(idx) else { continue };
                let Some(off) = dw.checked_sub(u64::from(*base)) else {
                    continue;
                };
                let off = off as u32;
                let owned = if idx == 0 {
                    [
                        reg::GRBM_GFX_CNTL.0,
                        reg::SH_MEM_BASES.0,
                        reg::SH_MEM_CONFIG.0,
                        reg::CP_MEC_DOORBELL_RANGE_LOWER.0,
                        reg::CP_MEC_DOORBELL_RANGE_UPPER.0,
                        reg::CP_PQ_WPTR_POLL_CNTL.0,
                        reg::CP_PQ_WPTR_POLL_CNTL1.0,
                        reg::CP_PQ_STATUS.0,
                    ]
                    .contains(&off)
                        || (reg::CP_MQD_BASE_ADDR.0..=reg::CP_HQD_AQL_DISPATCH_ID_HI.0)
                            .contains(&off)
                } else {
                    off == reg::RLC_CP_SCHEDULERS.0
                };
                if owned {
                    return Some((i, off, idx));
                }
            }
        }
        None
    }

    // --- memory -----------------------------------------------------

    fn host(&self, xcc: usize, space: Space, va: u64, access: Access) -> Option<u64> {
        let page = va & !0xFFF;
        match self.mem.translate(xcc, space, page, access) {
            Ok(h) => Some(h + (va & 0xFFF)),
            Err(why) => {
                *self.last_miss.lock() = Some(why);
                None
            }
        }
    }

    /// [`MecV943Refusal::Memory`] for `va`, with the last translation's
    /// refusal.
    fn unreachable(&self, xcc: usize, va: u64) -> MecV943Refusal {
        MecV943Refusal::Memory {
            xcc,
            va,
            why: self.last_miss.lock().take(),
        }
    }

    fn read_bytes(&self, xcc: usize, space: Space, va: u64, out: &mut [u8]) -> Result<(), u64> {
        let mut done = 0usize;
        while done < out.len() {
            let a = va + done as u64;
            let chunk = ((0x1000 - (a & 0xFFF)) as usize).min(out.len() - done);
            let h = self.host(xcc, space, a, Access::Read).ok_or(a)?;
            let dst = out.get_mut(done..done + chunk).ok_or(a)?;
            self.dma.read(h, dst, "MEC v9 read").map_err(|_| a)?;
            done += chunk;
        }
        Ok(())
    }

    fn read_u32(&self, xcc: usize, space: Space, va: u64) -> Result<u32, u64> {
        let h = self.host(xcc, space, va, Access::Read).ok_or(va)?;
        self.dma
            .u32(h, "MEC v9 dword")
            .map(|a| a.load(Ordering::Acquire))
            .map_err(|_| va)
    }

    fn write_u32(&self, xcc: usize, space: Space, va: u64, v: u32) -> Result<(), u64> {
        let h = self.host(xcc, space, va, Access::Write).ok_or(va)?;
        self.dma
            .u32(h, "MEC v9 write")
            .map(|a| a.store(v, Ordering::Release))
            .map_err(|_| va)
    }

    fn read_mqd(&self, xcc: usize, space: Space, va: u64) -> Result<MqdV9, MecV943Refusal> {
        let mut b = vec![0u8; MQD_BYTES];
        self.read_bytes(xcc, space, va, &mut b)
            .map_err(|va| self.unreachable(xcc, va))?;
        MqdV9::decode(&b).map_err(|fault| MecV943Refusal::Mqd { xcc, fault })
    }

    // --- HQD activation ------------------------------------------------

    fn selected(x: &Xcc) -> Slot {
        let (me, pipe, queue, _) = m9::grbm_select(x.grbm);
        (me, pipe, queue)
    }

    fn kiq_named(x: &Xcc) -> Option<Slot> {
        let s = SCHEDULER0.get(x.schedulers);
        (s & SCHEDULER0_ENABLE != 0).then_some(((s >> 5) & 0x3, (s >> 3) & 0x3, s & 0x7))
    }

    fn activate(&self, s: &mut State, xcc: usize, slot: Slot) {
        let runs = self.rlc.mec_run_on(xcc, slot.0, slot.1);
        let n = s.xcc.len();
        let Some(x) = s.xcc.get(xcc) else { return };
        let hqd = x.hqds.get(&slot).copied().unwrap_or_default();
        let w = hqd.window;
        if !w.aql() && Self::kiq_named(x) == Some(slot) {
            // The KIQ is loaded while its MEC is halted and runs once the
            // MEC is released: `gfx_v9_4_3_xcc_cp_resume()` halts the MEC
            // (`gfx_v9_4_3_xcc_cp_compute_enable(false)`), loads the KIQ
            // (`gfx_v9_4_3_xcc_kiq_resume()`), then releases it at the top
            // of `gfx_v9_4_3_xcc_kcq_resume()`. *Model convention*: the
            // firmware takes the queue `RLC_CP_SCHEDULERS` names as its
            // KIQ when it leaves halt, so a KIQ activated in a running
            // MEC is refused (what the firmware does then is not public;
            // Linux never does it).
            if runs.is_ok() {
                self.refuse(s, MecV943Refusal::KiqWhileRunning { xcc, slot });
                return;
            }
        } else if let Err(r) = runs {
            self.refuse(s, MecV943Refusal::Mec(r));
            return;
        }
        if !w.aql() {
            // A PM4 queue: only the KIQ runs here.
            if Self::kiq_named(x) != Some(slot) {
                self.refuse(s, MecV943Refusal::NotTheKiq { xcc, slot });
                return;
            }
            let pq = w.pq_control();
            let (lo, up) = x.range;
            let byte = u64::from(w.doorbell_dword()) * 4;
            let what = if !(m9::PQ_PRIV_STATE.is_set(pq) && m9::KMD_QUEUE.is_set(pq)) {
                Some("not a privileged kernel queue (PRIV_STATE, KMD_QUEUE)")
            } else if w.vmid() != 0 {
                Some("not in VMID 0")
            } else if !w.doorbell_enabled() {
                Some("doorbell not enabled")
            } else if byte < u64::from(lo) || byte > u64::from(up) {
                Some("doorbell outside this XCC's MEC doorbell range")
            } else if w.ring_bytes().is_err() {
                Some("QUEUE_SIZE describes more than the GPU's 48-bit address space")
            } else if w.ring_bytes().is_ok_and(|b| b < 256) {
                Some("ring under 256 bytes")
            } else if !(1..=m9::EOP_SIZE_MAX).contains(&w.eop_size_field()) {
                // Linux's KIQ has EOP_SIZE 9 (`order_base_2(GFX9_MEC_HPD_SIZE
                // / 4) - 1`, gfx_v9_4_3_xcc_mqd_init()). *Model convention*:
                // the AQL queues' bound (KFD's clamp) holds here too; a
                // larger field describes an EOP buffer far beyond the one
                // the driver allocated, which the CP would write past.
                Some("EOP_SIZE outside 1..=10")
            } else {
                None
            };
            if let Some(what) = what {
                self.refuse(s, MecV943Refusal::KiqHqd { xcc, what });
                return;
            }
            let kiq = KiqState {
                slot,
                ring: w.ring_address(),
                // Fits: checked above.
                ring_dwords: w.ring_bytes().map_or(0, |b| b / 4),
                doorbell_dword: w.doorbell_dword(),
                rptr_report: w.rptr_report_address(),
                rptr: 0,
                announced: 0,
                resources: None,
                halted: false,
                wait: None,
            };
            // The doorbell is device memory: nothing announced yet.
            self.arm(s, kiq.doorbell_dword, 0);
            if let Some(x) = s.xcc.get_mut(xcc) {
                x.kiq = Some(kiq);
                if let Some(h) = x.hqds.get_mut(&slot) {
                    h.active = true;
                }
            }
            return;
        }
        // An AQL queue: the window's own checks, the shared doorbell
        // against XCC 0's range (model convention).
        let range0 = s.xcc.first().map_or((1, 0), |x0| x0.range);
        let st = HqdStateV9 {
            grbm_gfx_cntl: x.grbm,
            window: w,
            doorbell_range: range0,
        };
        let check = if !w.doorbell_enabled() {
            Err(MqdV9Fault::DoorbellOutsideRange {
                xcc,
                dword: w.doorbell_dword(),
                lower_bytes: range0.0,
                upper_bytes: range0.1,
            })
        } else {
            st.check_activation(xcc, n)
        };
        if let Err(fault) = check {
            self.refuse(s, MecV943Refusal::Mqd { xcc, fault });
            return;
        }
        if let Some(h) = s.xcc.get_mut(xcc).and_then(|x| x.hqds.get_mut(&slot)) {
            h.active = true;
        }
        // Register writes report nothing: the refusal is only logged.
        if let Err(e) = self.join(
            s,
            Source::Direct,
            xcc,
            slot,
            w.mqd_address(),
            w.doorbell_dword(),
            w.vmid() as u8,
            None,
        ) {
            self.refuse(s, e);
        }
    }

    /// Adds XCC `xcc`'s HQD to the queue with the same doorbell (or a new
    /// one), and binds the queue once every XCC holds it.
    #[allow(clippy::too_many_arguments)]
    fn join(
        &self,
        s: &mut State,
        source: Source,
        xcc: usize,
        slot: Slot,
        mqd: u64,
        doorbell_dword: u32,
        vmid: u8,
        page_table_base: Option<u64>,
    ) -> Result<(), MecV943Refusal> {
        let i = match s
            .queues
            .iter()
            .position(|q| q.doorbell_dword == doorbell_dword && q.cp.is_none() && !q.retired)
        {
            Some(i) => i,
            None => {
                s.queues.push(XccQueueRecord {
                    source,
                    mqd,
                    doorbell_dword,
                    vmid,
                    members: Vec::new(),
                    cp: None,
                    page_table_base,
                    retired: false,
                });
                s.queues.len() - 1
            }
        };
        if let Some(q) = s.queues.get_mut(i) {
            q.members.retain(|m| m.0 != xcc);
            q.members.push((xcc, slot, mqd));
            if xcc == 0 {
                q.mqd = mqd;
            }
        }
        self.try_bind(s, i)
    }

    /// Binds queue `i` to the CP once every XCC holds it; a refusal
    /// marks the queue refused and is returned for the caller to log (a
    /// KIQ halts on it: model convention, the MAP_QUEUES that completed
    /// the queue is the one refused).
    fn try_bind(&self, s: &mut State, i: usize) -> Result<(), MecV943Refusal> {
        let n = s.xcc.len();
        let Some(q) = s.queues.get(i).cloned() else {
            return Ok(());
        };
        if q.cp.is_some() || q.retired || !(0..n).all(|x| q.members.iter().any(|m| m.0 == x)) {
            return Ok(());
        }
        // The caller logs the refusal.
        let fail = |s: &mut State, e: MecV943Refusal| {
            if let Some(q) = s.queues.get_mut(i) {
                q.retired = true;
            }
            Err(e)
        };
        // Every XCC's MEC must still run.
        for x in 0..n {
            if let Err(r) = self.rlc.mec_run(x) {
                return fail(s, MecV943Refusal::Mec(r));
            }
        }
        // Every XCC gives the queue's VMID its apertures (the rule the
        // gfx11/gfx12 CP model applies, `crate::mec::Mec::apertures_set`):
        // the hardware would run the queue, and its flat LDS and scratch
        // accesses would land at address 0; the model refuses it where
        // the mistake is made (a *model convention*). VMID 0, the
        // kernel's, keeps its SH_MEM_BASES 0 (`constants_init()`), as on
        // gfx11/gfx12.
        for x in (0..n).filter(|_| q.vmid != 0) {
            let (config, bases) = s
                .xcc
                .get(x)
                .and_then(|e| e.sh_mem.get(&u32::from(q.vmid)).copied())
                .unwrap_or((0, 0));
            if !sh_mem::apertures_set(config, bases) {
                return fail(
                    s,
                    MecV943Refusal::AperturesUnset {
                        xcc: x,
                        vmid: q.vmid,
                        config,
                        bases,
                    },
                );
            }
        }
        let mqds = match self.check_mqds(s, &q, n) {
            Ok(m) => m,
            Err(e) => return fail(s, e),
        };
        let Some(first) = mqds.first() else {
            return Ok(());
        };
        let h = first.hqd;
        let rptr = h.rptr_report_address();
        let binding = MecBinding {
            ring_base: h.ring_address(),
            // Fits: every MQD passed `MqdV9::check`.
            slots: h.ring_bytes().map_or(0, |b| b / 64),
            descriptor: rptr.wrapping_sub(amdq::READ_DISPATCH_ID),
            space: AddressSpace::Vmid(q.vmid),
            pipe: q.members.first().map_or(0, |m| m.1.1 as u8),
            // Every XCC's passed the aperture check above; XCC 0's is
            // the one the shared dispatch uses.
            sh_mem_bases: s
                .xcc
                .first()
                .and_then(|e| e.sh_mem.get(&u32::from(q.vmid)))
                .map_or(0, |v| v.1),
        };
        let bound = {
            let mut cp = self.cp.lock();
            cp.shader.xccs = n as u32;
            cp.shader.tg_chunk = m9::TG_CHUNK.get(first.tg_chunk_size).max(1);
            cp.bind_mec(binding)
                .map(|c| (c, cp.stats(c).map_or(u64::MAX, |st| st.announced)))
        };
        match bound {
            Ok((c, announced)) => {
                if let Some(q) = s.queues.get_mut(i) {
                    q.cp = Some(c);
                }
                // The doorbell is device memory: it holds "nothing
                // announced" (read index - 1) for a freshly bound queue.
                self.arm(s, q.doorbell_dword, announced);
                Ok(())
            }
            Err(_) => fail(s, self.unreachable(0, h.ring_address())),
        }
    }

    /// Reads the queue's MQDs (XCC 0's and the rest at its stride, in
    /// VMID 0 through XCC 0's translation) and checks them against each
    /// other and against where each XCC's HQD said its MQD is.
    fn check_mqds(
        &self,
        s: &State,
        q: &XccQueueRecord,
        n: usize,
    ) -> Result<Vec<MqdV9>, MecV943Refusal> {
        let space = Space::Vmid(0);
        let first = self.read_mqd(0, space, q.mqd)?;
        let stride = (first.mqd_stride_size as usize).max(MQD_BYTES);
        let mut bytes = vec![0u8; stride * (n - 1) + MQD_BYTES];
        for x in 0..n {
            let at = x * stride;
            let dst = bytes
                .get_mut(at..at + MQD_BYTES)
                .ok_or_else(|| self.unreachable(x, q.mqd))?;
            self.read_bytes(x, space, q.mqd + at as u64, dst)
                .map_err(|va| self.unreachable(x, va))?;
            if let Some(m) = q.members.iter().find(|m| m.0 == x)
                && m.2 != q.mqd + at as u64
            {
                return Err(MecV943Refusal::Mqd {
                    xcc: x,
                    fault: MqdV9Fault::MqdAddress {
                        found: m.2,
                        expected: q.mqd + at as u64,
                    },
                });
            }
        }
        // The shared doorbell is gated by XCC 0's range (convention).
        let range0 = s.xcc.first().map_or((1, 0), |x| x.range);
        let ranges = vec![range0; n];
        let xcc_fields = self
            .xcc_local_registers
            .load(core::sync::atomic::Ordering::Relaxed);
        check_queue(&bytes, q.mqd, n, &ranges, xcc_fields).map_err(|fault| {
            let xcc = match fault {
                MqdV9Fault::Diverges { xcc, .. }
                | MqdV9Fault::LogicXccOrder { xcc, .. }
                | MqdV9Fault::NoUpdateRptr { xcc, .. }
                | MqdV9Fault::Stride { xcc, .. } => xcc,
                _ => 0,
            };
            MecV943Refusal::Mqd { xcc, fault }
        })
    }

    fn deactivate(&self, s: &mut State, xcc: usize, slot: Slot) {
        if let Some(h) = s.xcc.get_mut(xcc).and_then(|x| x.hqds.get_mut(&slot)) {
            h.active = false;
        }
        if let Some(x) = s.xcc.get_mut(xcc)
            && x.kiq.is_some_and(|k| k.slot == slot)
        {
            x.kiq = None;
        }
        self.leave(
            s,
            |q| q.members.iter().any(|m| m.0 == xcc && m.1 == slot),
            xcc,
        );
        if s.hiqs.get(&xcc).is_some_and(|h| h.slot == slot) {
            // This XCC's HIQ is gone, and with it the scheduler running
            // there: the queues it mapped leave this XCC. With the last
            // HIQ the scheduler's state (processes, runlist) goes too.
            s.hiqs.remove(&xcc);
            self.leave(s, |q| q.source == Source::Hws, xcc);
            if s.hiqs.is_empty() {
                s.hws = None;
                self.spaces.lock().clear();
            }
        }
    }

    /// Takes XCC `xcc` out of the queues `pick` selects; a queue that was
    /// running leaves the CP (in-flight work completes).
    fn leave(&self, s: &mut State, pick: impl Fn(&XccQueueRecord) -> bool, xcc: usize) {
        let mut cp = self.cp.lock();
        let State {
            queues, xcc: xs, ..
        } = s;
        for q in queues.iter_mut().filter(|q| pick(q)) {
            // A queue the HWS unmaps leaves its slot too (direct and KIQ
            // slots are cleared by their own dequeue).
            if q.source == Source::Hws {
                for m in q.members.iter().filter(|m| m.0 == xcc) {
                    if let Some(h) = xs.get_mut(xcc).and_then(|x| x.hqds.get_mut(&m.1)) {
                        h.active = false;
                    }
                }
            }
            q.members.retain(|m| m.0 != xcc);
            if let Some(c) = q.cp.take() {
                cp.unbind(c);
                q.retired = true;
            }
        }
    }

    /// A mode-1 reset: every XCC's CP back to power-on, as
    /// [`crate::mec::Mec::reset`] does for gfx11/gfx12. Every HQD is
    /// inactive with its registers at 0, `SH_MEM_*`, the doorbell range
    /// and `RLC_CP_SCHEDULERS` read 0, the KIQs, HIQs and the scheduler
    /// with its processes are forgotten, every queue leaves the CP (and is
    /// retired: a later mapping is a new queue), and the doorbell page
    /// reads 0. Kept: the refusal log.
    pub fn reset(&self) {
        self.schedulers_hung.store(false, Ordering::Relaxed);
        let mut s = self.state.lock();
        let n = s.xcc.len();
        let bound: Vec<usize> = s.queues.iter().filter_map(|q| q.cp).collect();
        for q in &mut s.queues {
            q.cp = None;
            q.retired = true;
        }
        s.xcc = (0..n).map(|_| Xcc::default()).collect();
        s.hws = None;
        s.hiqs.clear();
        for (slot, v) in s.shadow.iter_mut().enumerate() {
            *v = 0;
            if let Some(a) = self.doorbells.0.get(slot) {
                a.store(0, Ordering::Release);
            }
        }
        drop(s);
        self.spaces.lock().clear();
        let mut cp = self.cp.lock();
        for q in bound {
            cp.unbind(q);
        }
    }

    // --- doorbells -----------------------------------------------------

    fn arm(&self, s: &mut State, dword: u32, value: u64) {
        let slot = (dword / 2) as usize;
        if let Some(a) = self.doorbells.0.get(slot) {
            a.store(value, Ordering::Release);
        }
        if let Some(v) = s.shadow.get_mut(slot) {
            *v = value;
        }
    }

    /// A doorbell store at BAR2 dword `dword` (for a device that routes
    /// stores itself rather than through [`MecV943::doorbell_page`]).
    /// Returns whether a KIQ or queue listens there.
    pub fn doorbell(&self, dword: u32, value: u64) -> bool {
        let mut s = self.state.lock();
        self.ring(&mut s, dword, value)
    }

    fn ring(&self, s: &mut State, dword: u32, value: u64) -> bool {
        for x in s.xcc.iter_mut() {
            if let Some(k) = x.kiq.as_mut()
                && k.doorbell_dword == dword
            {
                k.announced = value;
                return true;
            }
        }
        if let Some(c) = s
            .queues
            .iter()
            .filter(|q| q.doorbell_dword == dword)
            .find_map(|q| q.cp)
        {
            self.cp.lock().ring(c, value);
            return true;
        }
        // The HIQ's doorbell is read from the page by the HWS model.
        if s.hws.as_ref().is_some_and(|h| {
            h.config().doorbell == self.doorbell_page().0 + u64::from(dword / 2) * 8
        }) {
            return true;
        }
        s.unclaimed_doorbells += 1;
        false
    }

    fn scan(&self, s: &mut State) -> usize {
        let mut rang = 0;
        for i in 0..DOORBELL_SLOTS {
            let Some(v) = self.doorbells.0.get(i).map(|a| a.load(Ordering::Acquire)) else {
                continue;
            };
            let changed = s.shadow.get(i).is_some_and(|old| *old != v);
            if changed {
                if let Some(o) = s.shadow.get_mut(i) {
                    *o = v;
                }
                let dword = (i * 2) as u32;
                let passed = self.gate.lock().as_ref().is_none_or(|g| g(dword, v));
                if passed && self.ring(s, dword, v) {
                    rang += 1;
                }
            }
        }
        rang
    }

    // --- the KIQ -------------------------------------------------------

    fn service_kiq(&self, s: &mut State, xcc: usize) -> usize {
        // The KIQ runs on its own ME and pipe (ME 2 pipe 1 as
        // `amdgpu_gfx_kiq_acquire()` picks it).
        let Some(kslot) = s.xcc.get(xcc).and_then(|x| x.kiq).map(|k| k.slot) else {
            return 0;
        };
        if self.rlc.mec_run_on(xcc, kslot.0, kslot.1).is_err() {
            return 0;
        }
        let mut done = 0;
        let space = Space::Vmid(0);
        loop {
            let Some(k) = s.xcc.get(xcc).and_then(|x| x.kiq) else {
                return done;
            };
            if k.halted || k.rptr >= k.announced {
                return done;
            }
            let at = |i: u64| k.ring + ((k.rptr + i) % k.ring_dwords.max(1)) * 4;
            let Ok(h) = self.read_u32(xcc, space, at(0)) else {
                self.kiq_unreachable(s, xcc, at(0));
                return done;
            };
            if h == pm4::NOP_FILLER {
                // The one-dword pad `amdgpu_ring_insert_nop()` writes
                // (`gfx_v9_4_3_ring_funcs_kiq.nop`, `align_mask` 0xff).
                if let Some(k) = s.xcc.get_mut(xcc).and_then(|x| x.kiq.as_mut()) {
                    k.rptr += 1;
                }
                continue;
            }
            if pm4::HEADER_TYPE.get(h) != pm4::PACKET_TYPE3 {
                self.halt_kiq(s, xcc, 0, "not a type-3 packet");
                return done;
            }
            let op = pm4::HEADER_OPCODE.get(h);
            let len = u64::from(pm4::HEADER_COUNT.get(h)) + 2;
            if k.announced - k.rptr < len {
                return done;
            }
            let mut pkt = vec![0u32; len as usize];
            for (i, d) in pkt.iter_mut().enumerate() {
                match self.read_u32(xcc, space, at(i as u64)) {
                    Ok(v) => *d = v,
                    Err(a) => {
                        self.kiq_unreachable(s, xcc, a);
                        return done;
                    }
                }
            }
            if op == opcode::WAIT_REG_MEM {
                match self.kiq_wait(s, xcc, &pkt) {
                    Ok(true) => {}
                    Ok(false) => return done,
                    Err(r) => {
                        self.refuse(s, r);
                        if let Some(k) = s.xcc.get_mut(xcc).and_then(|x| x.kiq.as_mut()) {
                            k.halted = true;
                        }
                        return done;
                    }
                }
            } else if let Err(r) = self.kiq_packet(s, xcc, op, &pkt) {
                self.refuse(s, r);
                if let Some(k) = s.xcc.get_mut(xcc).and_then(|x| x.kiq.as_mut()) {
                    k.halted = true;
                }
                return done;
            }
            let Some(k) = s.xcc.get_mut(xcc).and_then(|x| x.kiq.as_mut()) else {
                return done;
            };
            k.rptr += len;
            let (report, rptr) = (k.rptr_report, k.rptr);
            let _ = self.write_u32(xcc, space, report, rptr as u32);
            done += 1;
        }
    }

    /// A PM4 queue (`CP_HQD_AQL_CONTROL` 0) the KIQ of XCC `xcc` mapped:
    /// Linux's kernel compute rings, each on the one XCC whose KIQ maps it
    /// (`amdgpu_gfx_enable_kcq(adev, xcc_id)`, a doorbell per ring from
    /// `gfx_v9_4_3_compute_ring_init()`), so it is bound on that XCC
    /// alone, where an AQL queue waits for every XCC. The CP runs it as
    /// [`crate::cp::Pm4Binding`] describes (PM4 packets from the ring,
    /// write pointer from the doorbell, read pointer reported).
    fn map_pm4(
        &self,
        s: &mut State,
        xcc: usize,
        slot: Slot,
        mqd: u64,
        h: &crate::decode::mqd_v9::HqdV9,
    ) -> Result<(), MecV943Refusal> {
        let bad = |what| MecV943Refusal::KiqPacket {
            xcc,
            opcode: opcode::MAP_QUEUES,
            what,
        };
        let ring_bytes = h.ring_bytes().map_err(|_| {
            bad("the queue's QUEUE_SIZE describes more than the GPU's 48-bit address space")
        })?;
        let binding = crate::cp::Pm4Binding {
            ring_base: h.ring_address(),
            ring_dwords: ring_bytes / 4,
            rptr_report: h.rptr_report_address(),
            wptr_poll: h.wptr_poll_address(),
            wptr: 0,
            rptr: 0,
            space: AddressSpace::Vmid(h.vmid() as u8),
            pipe: slot.1 as u8,
            gfx: false,
        };
        let c = self.cp.lock().bind_pm4(binding).map_err(|_| {
            bad("the PM4 ring is not 256-byte aligned or not a power of two in size")
        })?;
        s.queues.push(XccQueueRecord {
            source: Source::Kiq,
            mqd,
            doorbell_dword: h.doorbell_dword(),
            vmid: h.vmid() as u8,
            members: vec![(xcc, slot, mqd)],
            cp: Some(c),
            page_table_base: None,
            retired: false,
        });
        self.arm(s, h.doorbell_dword(), 0);
        Ok(())
    }

    /// `WAIT_REG_MEM` on the KIQ: `Ok(true)` met, `Ok(false)` not yet
    /// (the packet stays). What Linux sends and how the model reads it:
    /// - a register write then a register wait (`OPERATION` 1,
    ///   `gfx_v9_4_3_ring_emit_reg_write_reg_wait()`, the TLB flush
    ///   `amdgpu_gmc_fw_reg_write_reg_wait()` puts on the KIQ): `ref` is
    ///   written to the first register, then the second is polled until
    ///   its masked value equals the mask, as the equivalent
    ///   `amdgpu_ring_emit_reg_write_reg_wait_helper()` does;
    /// - a register wait (`OPERATION` 0, `gfx_v9_4_3_ring_emit_reg_wait()`):
    ///   the masked register against `ref` by `FUNCTION`;
    /// - a memory poll (`MEM_SPACE` 1).
    ///
    /// Registers are XCC-local offsets placed in the XCC's segment; the
    /// device reads a polled register after each look and hands the
    /// value back (*model convention*: the KIQ sees it one look late).
    fn kiq_wait(&self, s: &mut State, xcc: usize, p: &[u32]) -> Result<bool, MecV943Refusal> {
        use pm4::compute::wait_reg_mem as w;
        let bad = |what| MecV943Refusal::KiqPacket {
            xcc,
            opcode: opcode::WAIT_REG_MEM,
            what,
        };
        if p.len() != w::DWORDS {
            return Err(bad("WAIT_REG_MEM is 7 dwords"));
        }
        let d = |i: usize| p.get(i).copied().unwrap_or(0);
        let (control, a0, a1, reference, mask) = (d(1), d(2), d(3), d(4), d(5));
        let function = w::FUNCTION.get(control);
        if crate::cp::compare(function, 0, 0).is_none() {
            return Err(bad("WAIT_REG_MEM function 7 is reserved"));
        }
        let Some(k) = s.xcc.get(xcc).and_then(|x| x.kiq) else {
            return Ok(false);
        };
        let (reg, reference) = match (w::MEM_SPACE.get(control), w::OPERATION.get(control)) {
            (1, 0) => {
                let addr = u64::from(a0) | u64::from(a1) << 32;
                if !addr.is_multiple_of(4) {
                    return Err(bad("WAIT_REG_MEM poll address not dword aligned"));
                }
                let v = self
                    .read_u32(xcc, Space::Vmid(0), addr)
                    .map_err(|va| self.unreachable(xcc, va))?;
                let met = crate::cp::compare(function, v & mask, reference);
                return Ok(met == Some(true));
            }
            (0, 0) => (self.xcc_register(xcc, a0).wrapping_mul(4), reference),
            (0, 1) => {
                if k.wait.is_none() {
                    let to = self.xcc_register(xcc, a0).wrapping_mul(4);
                    s.register_stores.push((to, reference));
                }
                (self.xcc_register(xcc, a1).wrapping_mul(4), mask)
            }
            _ => return Err(bad("WAIT_REG_MEM memory space / operation not modelled")),
        };
        let wait = k.wait.unwrap_or(RegWait {
            reg,
            mask,
            reference,
            function,
            value: None,
        });
        let met = wait
            .value
            .and_then(|v| crate::cp::compare(wait.function, v & wait.mask, wait.reference))
            == Some(true);
        if let Some(k) = s.xcc.get_mut(xcc).and_then(|x| x.kiq.as_mut()) {
            k.wait = (!met).then_some(wait);
        }
        Ok(met)
    }

    /// Registers the KIQs' waits poll (absolute byte offsets), for the
    /// device to read after its look.
    pub fn register_waits(&self) -> Vec<u32> {
        let s = self.state.lock();
        s.xcc
            .iter()
            .filter_map(|x| x.kiq.and_then(|k| k.wait).map(|w| w.reg))
            .collect()
    }

    /// The values the device read at [`MecV943::register_waits`]' registers.
    pub fn register_values(&self, values: &[(u32, u32)]) {
        let mut s = self.state.lock();
        for x in s.xcc.iter_mut() {
            if let Some(w) = x.kiq.as_mut().and_then(|k| k.wait.as_mut())
                && let Some((_, v)) = values.iter().find(|(r, _)| *r == w.reg)
            {
                w.value = Some(*v);
            }
        }
    }

    fn kiq_unreachable(&self, s: &mut State, xcc: usize, address: u64) {
        self.refuse(s, MecV943Refusal::KiqRingUnreachable { xcc, address });
        if let Some(k) = s.xcc.get_mut(xcc).and_then(|x| x.kiq.as_mut()) {
            k.halted = true;
        }
    }

    fn halt_kiq(&self, s: &mut State, xcc: usize, opcode: u32, what: &'static str) {
        self.refuse(s, MecV943Refusal::KiqPacket { xcc, opcode, what });
        if let Some(k) = s.xcc.get_mut(xcc).and_then(|x| x.kiq.as_mut()) {
            k.halted = true;
        }
    }

    fn kiq_packet(
        &self,
        s: &mut State,
        xcc: usize,
        op: u32,
        p: &[u32],
    ) -> Result<(), MecV943Refusal> {
        let bad = |what| MecV943Refusal::KiqPacket {
            xcc,
            opcode: op,
            what,
        };
        let d = |i: usize| p.get(i).copied().unwrap_or(0);
        let q64 = |i: usize| u64::from(d(i)) | u64::from(d(i + 1)) << 32;
        let space = Space::Vmid(0);
        match op {
            opcode::NOP => Ok(()),
            opcode::SET_RESOURCES => {
                if p.len() != sr::DWORDS {
                    return Err(bad("SET_RESOURCES is 8 dwords"));
                }
                if sr::QUEUE_TYPE.get(d(1)) != 0 {
                    return Err(bad("queue_type is not 0 (KIQ)"));
                }
                let mask = q64(sr::DW_QUEUE_MASK_LO);
                if let Some(k) = s.xcc.get_mut(xcc).and_then(|x| x.kiq.as_mut()) {
                    k.resources = Some(mask);
                }
                Ok(())
            }
            // A register store (`gfx_v9_4_3_ring_test_ring()` writes the
            // XCC's `SCRATCH_REG0` so on every ring, the KIQ's too):
            // offsets from `PACKET3_SET_UCONFIG_REG_START` (`soc15d.h`).
            opcode::SET_UCONFIG_REG => {
                let reg = pm4::compute::SET_UCONFIG_REG_START.wrapping_add(d(1));
                for (i, v) in p.iter().skip(2).enumerate() {
                    let r = self.xcc_register(xcc, reg.wrapping_add(i as u32));
                    s.register_stores.push((r.wrapping_mul(4), *v));
                }
                Ok(())
            }
            opcode::WRITE_DATA if wd::DST_SEL.get(d(1)) == wd::DST_REGISTER && p.len() >= 5 => {
                let reg = d(2);
                for (i, v) in p.iter().skip(4).enumerate() {
                    let r = self.xcc_register(xcc, reg.wrapping_add(i as u32));
                    s.register_stores.push((r.wrapping_mul(4), *v));
                }
                Ok(())
            }
            opcode::WRITE_DATA => {
                if wd::DST_SEL.get(d(1)) != wd::DST_MEMORY || p.len() < 5 {
                    return Err(bad("WRITE_DATA other than to memory or a register"));
                }
                let addr = q64(2);
                for (i, v) in p.iter().skip(4).enumerate() {
                    let a = addr + 4 * i as u64;
                    self.write_u32(xcc, space, a, *v)
                        .map_err(|va| self.unreachable(xcc, va))?;
                }
                Ok(())
            }
            // KFD's TLB flush by PASID (`gmc_v9_0_flush_gpu_tlb_pasid()`
            // through `gfx_v9_4_3_kiq_invalidate_tlbs()`): one body dword,
            // `DST_SEL` 1. The model's walkers cache nothing a PASID tags,
            // so it drops every cached translation of the CP.
            opcode::INVALIDATE_TLBS => {
                use crate::decode::pm4::invalidate_tlbs as it;
                if p.len() != 2 || it::DST_SEL.get(d(1)) != it::DST_SEL_LINUX {
                    return Err(bad("INVALIDATE_TLBS other than one dword with DST_SEL 1"));
                }
                self.cp.lock().invalidate_tlbs();
                Ok(())
            }
            opcode::MAP_QUEUES => self.kiq_map(s, xcc, p),
            opcode::UNMAP_QUEUES => {
                if p.len() != uq::DWORDS {
                    return Err(bad("UNMAP_QUEUES is 6 dwords"));
                }
                let c = d(1);
                let action = uq::ACTION.get(c);
                if !matches!(action, uq::PREEMPT_QUEUES | uq::RESET_QUEUES)
                    || uq::QUEUE_SEL.get(c) != 0
                    || uq::ENGINE_SEL.get(c) != 0
                    || uq::NUM_QUEUES.get(c) != 1
                {
                    return Err(bad(
                        "only one compute queue by doorbell, preempted or reset, is modelled",
                    ));
                }
                let dword = uq::DOORBELL_OFFSET0.get(d(2));
                // A user queue's HQD on this XCC, or this XCC's HIQ
                // (`destroy_hiq_mqd_v9_4_3()` → `amdgpu_amdkfd_unmap_hiq()`
                // unmaps it by its doorbell on each XCC's KIQ).
                let hiq = s
                    .hiqs
                    .get(&xcc)
                    .filter(|h| h.doorbell_dword == dword)
                    .map(|h| h.slot);
                let slots: Vec<Slot> = s
                    .queues
                    .iter()
                    .filter(|q| q.doorbell_dword == dword)
                    .flat_map(|q| q.members.iter().filter(|m| m.0 == xcc).map(|m| m.1))
                    .chain(hiq)
                    .collect();
                // The action's meaning (as on gfx11/gfx12, `crate::kiq`):
                // PREEMPT drains the queue, so a hung queue's waves never
                // drain and the packet never completes (`hqd_destroy`'s
                // DRAIN_PIPE dequeue times out the same way); RESET kills
                // the waves, dropping work in flight without touching its
                // completion signal.
                let bound: Vec<usize> = s
                    .queues
                    .iter()
                    .filter(|q| q.doorbell_dword == dword && q.members.iter().any(|m| m.0 == xcc))
                    .filter_map(|q| q.cp)
                    .collect();
                {
                    let mut cp = self.cp.lock();
                    if action == uq::PREEMPT_QUEUES && bound.iter().any(|c| cp.is_stuck(*c)) {
                        return Err(bad(
                            "PREEMPT_QUEUES of a hung queue: its waves never drain, so the preemption never completes",
                        ));
                    }
                    if action == uq::RESET_QUEUES {
                        for c in &bound {
                            cp.kill_waves(*c);
                        }
                    }
                }
                for slot in slots {
                    self.deactivate(s, xcc, slot);
                }
                Ok(())
            }
            _ => Err(bad("not a packet the KIQ model executes")),
        }
    }

    fn kiq_map(&self, s: &mut State, xcc: usize, p: &[u32]) -> Result<(), MecV943Refusal> {
        let op = opcode::MAP_QUEUES;
        let bad = |what| MecV943Refusal::KiqPacket {
            xcc,
            opcode: op,
            what,
        };
        if p.len() != mq::DWORDS {
            return Err(bad("MAP_QUEUES is 7 dwords"));
        }
        let d = |i: usize| p.get(i).copied().unwrap_or(0);
        let q64 = |i: usize| u64::from(d(i)) | u64::from(d(i + 1)) << 32;
        let c = d(1);
        if mq::QUEUE_SEL.get(c) != 0 || mq::NUM_QUEUES.get(c) != 1 {
            return Err(bad(
                "only one queue on a named slot (queue_sel 0) is modelled",
            ));
        }
        let engine = mq::ENGINE_SEL.get(c);
        let (me, pipe, queue) = (mq::ME.get(c) + 1, mq::PIPE.get(c), mq::QUEUE.get(c));
        let dword = mq::DOORBELL_OFFSET.get(d(2));
        let mqd_va = q64(mq::DW_MQD_LO);
        let wptr = q64(mq::DW_WPTR_LO);
        let m = self.read_mqd(xcc, Space::Vmid(0), mqd_va)?;
        // No check against the XCC's `CP_MEC_DOORBELL_RANGE_*`: the range
        // is what wakes a power-gated GC (`gfx_v9_0_kiq_init_register()`:
        // "If GC has entered CGPG, ringing doorbell > first page doesn't
        // wakeup GC"), which the model does not model; KFD maps its HIQ
        // and queues with doorbells past the kernel's range
        // (`kfd_doorbell_init()`; the Linux peer's HIQ: dword 0xc00
        // against a range ending at byte 0xf8).
        if m.hqd.doorbell_dword() != dword {
            return Err(bad("the MQD names another doorbell than the packet"));
        }
        if m.hqd.wptr_poll_address() != wptr {
            return Err(bad("wptr_addr is not the MQD's write-pointer poll address"));
        }
        match engine {
            // kgd_gfx_v9_hiq_mqd_load(): engine_sel 1, the HIQ.
            1 => {
                let ring_bytes = m.hqd.ring_bytes().map_err(|_| {
                    bad("the HIQ's QUEUE_SIZE describes more than the GPU's 48-bit address space")
                })?;
                let hiq = Hiq {
                    slot: (me, pipe, queue),
                    ring: m.hqd.ring_address(),
                    doorbell_dword: dword,
                    mqd: mqd_va,
                };
                // `init_mqd_hiq_v9_4_3()` builds every XCC's HIQ from one
                // queue (one ring, one doorbell); the XCCs' schedulers
                // then read the same runlist packets. A partition whose
                // HIQs name different rings is outside the model.
                if s.hiqs
                    .iter()
                    .any(|(x, h)| *x != xcc && (h.ring, h.doorbell_dword) != (hiq.ring, dword))
                {
                    return Err(bad(
                        "this XCC's HIQ names another ring or doorbell than the other XCCs' (one HIQ queue per partition, init_mqd_hiq_v9_4_3())",
                    ));
                }
                if s.hws.is_none() {
                    let cfg = HwsConfig {
                        ring: hiq.ring,
                        ring_dwords: ring_bytes / 4,
                        doorbell: self.doorbell_page().0 + u64::from(dword / 2) * 8,
                        map_process_dwords: crate::decode::pm4_hws::MAP_PROCESS_ALDEBARAN_DWORDS,
                    };
                    self.arm(s, dword, 0);
                    s.hws = Some(Arc::new(HwsModel::new(cfg)));
                }
                s.hiqs.insert(xcc, hiq);
                if let Some(h) = s
                    .xcc
                    .get_mut(xcc)
                    .map(|x| x.hqds.entry((me, pipe, queue)).or_default())
                {
                    h.window = m.hqd;
                    h.active = true;
                }
                Ok(())
            }
            mq::ENGINE_COMPUTE => {
                let mask = s
                    .xcc
                    .get(xcc)
                    .and_then(|x| x.kiq)
                    .and_then(|k| k.resources)
                    .ok_or(bad("MAP_QUEUES before SET_RESOURCES"))?;
                let bit = (me - 1) * 32 + pipe * 8 + queue;
                if mask & 1u64.checked_shl(bit).unwrap_or(0) == 0 {
                    return Err(MecV943Refusal::NotInQueueMask { xcc, bit, mask });
                }
                let vmid = mq::VMID.get(c);
                if vmid != m.hqd.vmid() {
                    return Err(bad("the packet's VMID is not the MQD's cp_hqd_vmid"));
                }
                if let Some(h) = s
                    .xcc
                    .get_mut(xcc)
                    .map(|x| x.hqds.entry((me, pipe, queue)).or_default())
                {
                    h.window = m.hqd;
                    h.active = true;
                }
                if !m.hqd.aql() {
                    return self.map_pm4(s, xcc, (me, pipe, queue), mqd_va, &m.hqd);
                }
                self.join(
                    s,
                    Source::Kiq,
                    xcc,
                    (me, pipe, queue),
                    mqd_va,
                    dword,
                    vmid as u8,
                    None,
                )
            }
            _ => Err(bad("engine_sel other than compute (0) or HIQ (1)")),
        }
    }

    // --- HWS -------------------------------------------------------------

    /// Logs `doorbell` in XCC `xcc`'s HIQ MQD, as the scheduler does for a
    /// preemption it abandoned (`check_preemption_failed_v9_4_3()` reads
    /// `queue_doorbell_id0` per XCC). Best effort: an MQD the hub cannot
    /// reach is not logged.
    fn log_preemption_failed(&self, xcc: usize, hiq_mqd: u64, doorbell: u32) {
        let at = hiq_mqd + (m9::dw::QUEUE_DOORBELL_ID0 * 4) as u64;
        let _ = self.write_u32(xcc, Space::Vmid(0), at, doorbell);
    }

    fn service_hws(&self, s: &mut State) -> usize {
        let Some(hws) = s.hws.clone() else { return 0 };
        // The XCCs whose HIQ runs: its own ME and pipe (where that XCC's
        // KIQ mapped it; KFD's KFD_CIK_HIQ_PIPE is ME 2 pipe 0) and the
        // compute ME the runlist's queues run on. The master XCC (0)
        // reads the ring and reports its read pointer (only its HIQ MQD
        // has NO_UPDATE_RPTR clear, `init_mqd_hiq_v9_4_3()`): without it
        // nothing is consumed.
        let scheduling: Vec<usize> = s
            .hiqs
            .iter()
            .filter(|(x, h)| {
                self.rlc.mec_run_on(**x, h.slot.0, h.slot.1).is_ok()
                    && self.rlc.mec_run(**x).is_ok()
            })
            .map(|(x, _)| *x)
            .collect();
        if scheduling.first() != Some(&0) {
            return 0;
        }
        let cp = SchedulerCp {
            mec: self,
            queues: s
                .queues
                .iter()
                .filter(|q| q.source == Source::Hws && !q.retired)
                .filter_map(|q| Some((q.doorbell_dword, q.cp?, q.members.clone())))
                .collect(),
            hiq_mqds: s.hiqs.iter().map(|(x, h)| (*x, h.mqd)).collect(),
        };
        let done = hws.service_on(&self.dma, &cp);
        let procs = hws.processes();
        for p in &procs {
            if let Some(v) = p.vmid {
                self.mem.bind_process(v, p.page_table_base);
            }
        }
        *self.spaces.lock() = procs
            .iter()
            .filter_map(|p| Some((p.vmid?, p.page_table_base)))
            .collect();
        let running = hws.mec_queues();
        // Queues the scheduler unmapped leave every XCC.
        let n = s.xcc.len();
        for x in 0..n {
            self.leave(
                s,
                |q| q.source == Source::Hws && !running.iter().any(|r| r.mqd == q.mqd),
                x,
            );
        }
        for r in running {
            let known = s
                .queues
                .iter()
                .any(|q| q.source == Source::Hws && q.mqd == r.mqd && !q.retired);
            if known {
                continue;
            }
            let proc = procs.iter().find(|p| p.pasid == r.pasid);
            let ptb = proc.map(|p| p.page_table_base);
            // The scheduler programs the VMID's SH_MEM from MAP_PROCESS
            // on each XCC it maps the queue on: KFD's no-HWS path writes
            // them itself (`program_sh_mem_settings()`), and with the HWS
            // hands them over in MAP_PROCESS (`pm_map_process_aldebaran()`).
            let sh_mem = proc.map_or((0, 0), |p| (p.sh_mem_config, p.sh_mem_bases));
            let stride = self
                .read_mqd(0, Space::Vmid(0), r.mqd)
                .map(|m| u64::from(m.mqd_stride_size).max(MQD_BYTES as u64))
                .unwrap_or(MQD_BYTES as u64);
            // Each XCC's scheduler maps the queue on its own XCC, on
            // [`HWS_SLOT`], from that XCC's MQD (`mqd + stride * xcc`,
            // `init_mqd_v9_4_3()`): only XCCs whose HIQ runs get it.
            for &x in &scheduling {
                if let Some(e) = s.xcc.get_mut(x) {
                    e.sh_mem.insert(u32::from(r.vmid), sh_mem);
                }
                let at = r.mqd + stride * x as u64;
                if let Ok(m) = self.read_mqd(x, Space::Vmid(0), at)
                    && let Some(h) = s
                        .xcc
                        .get_mut(x)
                        .map(|e| e.hqds.entry(HWS_SLOT).or_default())
                {
                    h.window = m.hqd.loaded_for(r.vmid);
                    h.active = true;
                }
                // Logged; the HWS reports nothing to its driver.
                if let Err(e) = self.join(
                    s,
                    Source::Hws,
                    x,
                    HWS_SLOT,
                    at,
                    r.doorbell_offset,
                    r.vmid,
                    ptb,
                ) {
                    self.refuse(s, e);
                }
            }
        }
        done
    }

    /// A MEC halted after its queues started (`CP_MEC_CNTL` halt or pipe
    /// reset written again) takes every queue spanning its XCC off the
    /// CP: the dispatch needs every XCC's CP (model convention). The
    /// refusal is logged once per queue.
    fn stop_on_halted_mecs(&self, s: &mut State) {
        let n = s.xcc.len();
        for x in 0..n {
            let Err(r) = self.rlc.mec_run(x) else {
                continue;
            };
            let hit = s
                .queues
                .iter()
                .filter(|q| q.cp.is_some() && q.members.iter().any(|m| m.0 == x))
                .count();
            if hit == 0 {
                continue;
            }
            for _ in 0..hit {
                self.refuse(s, MecV943Refusal::Mec(r));
            }
            self.leave(
                s,
                |q| q.cp.is_some() && q.members.iter().any(|m| m.0 == x),
                x,
            );
        }
    }

    /// Fault switch (as [`crate::mec::Mec::hang_doorbell`]): the queue on
    /// doorbell dword `dword` stops consuming its ring on every XCC (its
    /// CP queue hangs). False if no bound queue listens there.
    pub fn hang_doorbell(&self, dword: u32) -> bool {
        let c = self
            .state
            .lock()
            .queues
            .iter()
            .filter(|q| !q.retired && q.doorbell_dword == dword)
            .find_map(|q| q.cp);
        match c {
            Some(c) => self.cp.lock().hang(c),
            None => false,
        }
    }

    /// Fault switch (as `Gfx11::hang_kiq` for gfx11/12): every
    /// XCC's KIQ and the HWS stop reading their rings, as if their
    /// firmware hung; user queues already on the CP keep running. A
    /// mode-1 reset ([`MecV943::reset`]) clears it.
    pub fn hang_schedulers(&self) {
        self.schedulers_hung.store(true, Ordering::Relaxed);
    }

    /// Stops every XCC's CP, KIQ and HWS for good (the device fell off
    /// the bus): [`MecV943::service`] does nothing from now on.
    pub fn halt_all(&self) {
        self.halted.store(true, Ordering::Relaxed);
        self.cp.lock().faults.stop_consuming = true;
    }

    /// One turn of every XCC's CP: doorbells, the KIQs, the HWS, then
    /// [`CP_STEPS_PER_SERVICE`] CP steps. Returns the work done
    /// (doorbells delivered, packets executed, launches, completions).
    /// Deterministic: everything runs in XCC order.
    pub fn service(&self) -> usize {
        if self.halted.load(Ordering::Relaxed) {
            return 0;
        }
        let mut s = self.state.lock();
        let mut work = self.scan(&mut s);
        if !self.schedulers_hung.load(Ordering::Relaxed) {
            for x in 0..s.xcc.len() {
                work += self.service_kiq(&mut s, x);
            }
            // KIQ packets may have armed new doorbells or mapped the HIQ.
            work += self.scan(&mut s);
            work += self.service_hws(&mut s);
            work += self.scan(&mut s);
        }
        self.stop_on_halted_mecs(&mut s);
        drop(s);
        let mut cp = self.cp.lock();
        for _ in 0..CP_STEPS_PER_SERVICE {
            let st = cp.step();
            work += (st.launched + st.completed) as usize;
        }
        drop(cp);
        self.deliver_eop();
        work
    }
}

impl RegisterBus for MecV943 {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.clock.advance(ACCESS_NS);
        let s = self.state.lock();
        let Some((i, off, idx)) = self.decode(byte_offset) else {
            return 0;
        };
        let Some(x) = s.xcc.get(i) else { return 0 };
        if idx == 1 {
            return x.schedulers;
        }
        match off {
            o if o == reg::GRBM_GFX_CNTL.0 => x.grbm,
            o if o == reg::SH_MEM_CONFIG.0 || o == reg::SH_MEM_BASES.0 => {
                let vmid = m9::GRBM_VMID.get(x.grbm);
                let (c, b) = x.sh_mem.get(&vmid).copied().unwrap_or((0, 0));
                if o == reg::SH_MEM_CONFIG.0 { c } else { b }
            }
            o if o == reg::CP_MEC_DOORBELL_RANGE_LOWER.0 => x.range.0,
            o if o == reg::CP_MEC_DOORBELL_RANGE_UPPER.0 => x.range.1,
            o if o == reg::CP_PQ_WPTR_POLL_CNTL.0 => x.poll_cntl,
            o if o == reg::CP_PQ_WPTR_POLL_CNTL1.0 => x.poll_cntl1,
            o if o == reg::CP_PQ_STATUS.0 => x.pq_status,
            o => {
                let slot = Self::selected(x);
                let h = x.hqds.get(&slot).copied().unwrap_or_default();
                if o == reg::CP_HQD_ACTIVE.0 {
                    return u32::from(h.active);
                }
                if o == reg::CP_HQD_DEQUEUE_REQUEST.0 {
                    // The dequeue completes at once (model value).
                    return 0;
                }
                h.window
                    .0
                    .get((o - reg::CP_MQD_BASE_ADDR.0) as usize)
                    .copied()
                    .unwrap_or(0)
            }
        }
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        let Some((i, off, idx)) = self.decode(byte_offset) else {
            return;
        };
        let Some(x) = s.xcc.get_mut(i) else { return };
        if idx == 1 {
            x.schedulers = value;
            return;
        }
        match off {
            o if o == reg::GRBM_GFX_CNTL.0 => x.grbm = value,
            o if o == reg::SH_MEM_CONFIG.0 || o == reg::SH_MEM_BASES.0 => {
                let vmid = m9::GRBM_VMID.get(x.grbm);
                let e = x.sh_mem.entry(vmid).or_default();
                if o == reg::SH_MEM_CONFIG.0 {
                    e.0 = value;
                } else {
                    e.1 = value;
                }
            }
            o if o == reg::CP_MEC_DOORBELL_RANGE_LOWER.0 => {
                x.range.0 = value & m9::DOORBELL_RANGE.mask()
            }
            o if o == reg::CP_MEC_DOORBELL_RANGE_UPPER.0 => {
                x.range.1 = value & m9::DOORBELL_RANGE.mask()
            }
            o if o == reg::CP_PQ_WPTR_POLL_CNTL.0 => x.poll_cntl = value,
            o if o == reg::CP_PQ_WPTR_POLL_CNTL1.0 => x.poll_cntl1 = value,
            o if o == reg::CP_PQ_STATUS.0 => x.pq_status = value,
            o if o > reg::CP_HQD_PQ_WPTR_HI_9_4_2.0
                && !self.xcc_local_registers.load(Ordering::Relaxed) =>
            {
                self.refuse(&mut s, MecV943Refusal::NoSuchRegister { xcc: i, offset: o });
            }
            o => {
                let slot = Self::selected(x);
                let h = x.hqds.entry(slot).or_default();
                if let Some(w) = h.window.0.get_mut((o - reg::CP_MQD_BASE_ADDR.0) as usize) {
                    *w = value;
                }
                let was = h.active;
                if o == reg::CP_HQD_ACTIVE.0 {
                    let on = m9::ACTIVE.is_set(value);
                    if on && !was {
                        self.activate(&mut s, i, slot);
                    } else if !on && was {
                        self.deactivate(&mut s, i, slot);
                    }
                } else if o == reg::CP_HQD_DEQUEUE_REQUEST.0 && DEQUEUE_REQ.get(value) != 0 && was {
                    self.deactivate(&mut s, i, slot);
                }
            }
        }
    }
}

const OFF: &str = "gc_9_4_3_offset.h";
const SH: &str = "gc_9_4_3_sh_mask.h";

const fn r(name: &'static str, idx_name: &'static str, reg: (u32, usize)) -> [Fact; 2] {
    [
        Fact::constant(OFF, name, reg.0 as u64),
        Fact::constant(OFF, idx_name, reg.1 as u64),
    ]
}

/// An HQD register's offset (`gc_9_4_3_offset.h`) and its reset value
/// (`gc_9_0_default.h`, [`HQD_RESET`]).
const fn reset(name: &'static str, default: &'static str, at: usize) -> [Fact; 2] {
    let (reg, value) = HQD_RESET[at];
    [
        Fact::constant(OFF, name, reg.0 as u64),
        Fact::constant("gc_9_0_default.h", default, value as u64),
    ]
}

/// The block's offsets and fields against the 9.4.3 headers (and the end
/// of GC 9.4.2's HQD window against its own).
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    reset(
        "regCP_HQD_PERSISTENT_STATE",
        "mmCP_HQD_PERSISTENT_STATE_DEFAULT",
        0
    ),
    reset("regCP_HQD_PQ_CONTROL", "mmCP_HQD_PQ_CONTROL_DEFAULT", 1),
    reset("regCP_HQD_IB_CONTROL", "mmCP_HQD_IB_CONTROL_DEFAULT", 2),
    reset("regCP_HQD_HQ_STATUS0", "mmCP_HQD_HQ_STATUS0_DEFAULT", 3),
    reset("regCP_MQD_CONTROL", "mmCP_MQD_CONTROL_DEFAULT", 4),
    reset("regCP_HQD_EOP_CONTROL", "mmCP_HQD_EOP_CONTROL_DEFAULT", 5),
    reset("regCP_HQD_EOP_RPTR", "mmCP_HQD_EOP_RPTR_DEFAULT", 6),
    reset("regCP_HQD_EOP_WPTR", "mmCP_HQD_EOP_WPTR_DEFAULT", 7),
    [
        Fact::constant(
            "gc_9_4_2_offset.h",
            "regCP_HQD_PQ_WPTR_HI",
            reg::CP_HQD_PQ_WPTR_HI_9_4_2.0 as u64
        ),
        Fact::constant(
            "gc_9_4_2_offset.h",
            "regCP_HQD_PQ_WPTR_HI_BASE_IDX",
            reg::CP_HQD_PQ_WPTR_HI_9_4_2.1 as u64
        ),
    ],
    r(
        "regSH_MEM_BASES",
        "regSH_MEM_BASES_BASE_IDX",
        reg::SH_MEM_BASES
    ),
    r(
        "regSH_MEM_CONFIG",
        "regSH_MEM_CONFIG_BASE_IDX",
        reg::SH_MEM_CONFIG
    ),
    r(
        "regCP_PQ_WPTR_POLL_CNTL",
        "regCP_PQ_WPTR_POLL_CNTL_BASE_IDX",
        reg::CP_PQ_WPTR_POLL_CNTL
    ),
    r(
        "regCP_PQ_WPTR_POLL_CNTL1",
        "regCP_PQ_WPTR_POLL_CNTL1_BASE_IDX",
        reg::CP_PQ_WPTR_POLL_CNTL1
    ),
    r(
        "regCP_PQ_STATUS",
        "regCP_PQ_STATUS_BASE_IDX",
        reg::CP_PQ_STATUS
    ),
    r(
        "regCP_HQD_DEQUEUE_REQUEST",
        "regCP_HQD_DEQUEUE_REQUEST_BASE_IDX",
        reg::CP_HQD_DEQUEUE_REQUEST
    ),
    r(
        "regRLC_CP_SCHEDULERS",
        "regRLC_CP_SCHEDULERS_BASE_IDX",
        reg::RLC_CP_SCHEDULERS
    ),
    r(
        "regGRBM_GFX_CNTL",
        "regGRBM_GFX_CNTL_BASE_IDX",
        reg::GRBM_GFX_CNTL
    ),
    r(
        "regCP_MQD_BASE_ADDR",
        "regCP_MQD_BASE_ADDR_BASE_IDX",
        reg::CP_MQD_BASE_ADDR
    ),
    r(
        "regCP_HQD_ACTIVE",
        "regCP_HQD_ACTIVE_BASE_IDX",
        reg::CP_HQD_ACTIVE
    ),
    r(
        "regCP_HQD_AQL_DISPATCH_ID_HI",
        "regCP_HQD_AQL_DISPATCH_ID_HI_BASE_IDX",
        reg::CP_HQD_AQL_DISPATCH_ID_HI
    ),
    r(
        "regCP_MEC_DOORBELL_RANGE_LOWER",
        "regCP_MEC_DOORBELL_RANGE_LOWER_BASE_IDX",
        reg::CP_MEC_DOORBELL_RANGE_LOWER
    ),
    r(
        "regCP_MEC_DOORBELL_RANGE_UPPER",
        "regCP_MEC_DOORBELL_RANGE_UPPER_BASE_IDX",
        reg::CP_MEC_DOORBELL_RANGE_UPPER
    ),
    [
        Fact::constant(
            SH,
            "RLC_CP_SCHEDULERS__scheduler0_MASK",
            SCHEDULER0.mask() as u64
        ),
        Fact::constant(
            SH,
            "CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ_MASK",
            DEQUEUE_REQ.mask() as u64
        ),
        Fact::constant(
            SH,
            "CP_PQ_STATUS__DOORBELL_ENABLE_MASK",
            PQ_STATUS_DOORBELL_ENABLE.mask() as u64
        ),
        Fact::constant(
            SH,
            "SH_MEM_CONFIG__ADDRESS_MODE_MASK",
            sh_mem::ADDRESS_MODE_MASK as u64
        ),
        Fact::constant(
            SH,
            "SH_MEM_CONFIG__ALIGNMENT_MODE_MASK",
            sh_mem::ALIGNMENT_MODE_MASK as u64
        ),
        Fact::constant(
            SH,
            "SH_MEM_BASES__PRIVATE_BASE_MASK",
            sh_mem::PRIVATE_BASE_MASK as u64
        ),
        Fact::constant(
            SH,
            "SH_MEM_BASES__SHARED_BASE_MASK",
            sh_mem::SHARED_BASE_MASK as u64
        ),
    ],
);

/// `SH_MEM_CONFIG` / `SH_MEM_BASES` fields (`gc_9_4_3_sh_mask.h`) and
/// `SH_MEM_ALIGNMENT_MODE_UNALIGNED` (`vega10_enum.h`).
pub mod sh_mem {
    pub const ADDRESS_MODE_MASK: u32 = 0x0000_0001;
    pub const ALIGNMENT_MODE_MASK: u32 = 0x0000_0018;
    pub const ALIGNMENT_MODE_SHIFT: u32 = 3;
    pub const ALIGNMENT_MODE_UNALIGNED: u32 = 3;
    pub const PRIVATE_BASE_MASK: u32 = 0x0000_FFFF;
    pub const SHARED_BASE_MASK: u32 = 0xFFFF_0000;

    /// Whether `(config, bases)` give a compute VMID its apertures the way
    /// `gfx_v9_4_3_xcc_init_compute_vmid()` and `update_qpd_v9()` do:
    /// 64-bit addressing, unaligned access, and both the private
    /// (scratch) and shared (LDS) apertures away from 0. The reset value 0
    /// puts both apertures at flat address 0, over the queue's own memory.
    pub const fn apertures_set(config: u32, bases: u32) -> bool {
        config & ADDRESS_MODE_MASK == 0
            && (config & ALIGNMENT_MODE_MASK) >> ALIGNMENT_MODE_SHIFT == ALIGNMENT_MODE_UNALIGNED
            && bases & PRIVATE_BASE_MASK != 0
            && bases & SHARED_BASE_MASK != 0
    }
}

/// The scheduler's view of its MEC while it unmaps ([`HwsCp`]): the HWS
/// queues bound to the CP and each XCC's HIQ MQD.
struct SchedulerCp<'a> {
    mec: &'a MecV943,
    /// Each HWS queue on the CP.
    queues: Vec<BoundQueue>,
    /// `(xcc, HIQ MQD address)`.
    hiq_mqds: Vec<(usize, u64)>,
}

/// `(doorbell dword, CP queue, members)` of an HWS queue on the CP.
type BoundQueue = (u32, usize, Vec<(usize, Slot, u64)>);

impl SchedulerCp<'_> {
    fn bound(&self, doorbell: u32) -> impl Iterator<Item = &BoundQueue> {
        self.queues.iter().filter(move |q| q.0 == doorbell)
    }
}

impl HwsCp for SchedulerCp<'_> {
    fn hung(&self, doorbell: u32) -> bool {
        let cp = self.mec.cp.lock();
        self.bound(doorbell).any(|q| cp.is_stuck(q.1))
    }

    /// *Model convention*: every XCC holding the queue failed to preempt
    /// it, so each XCC's HIQ MQD names it.
    fn preemption_failed(&self, doorbell: u32) {
        for q in self.bound(doorbell) {
            for (x, _, _) in &q.2 {
                if let Some((_, mqd)) = self.hiq_mqds.iter().find(|h| h.0 == *x) {
                    self.mec.log_preemption_failed(*x, *mqd, doorbell);
                }
            }
        }
    }

    fn reset(&self, doorbell: u32) {
        let mut cp = self.mec.cp.lock();
        for q in self.bound(doorbell) {
            cp.kill_waves(q.1);
        }
    }
}
