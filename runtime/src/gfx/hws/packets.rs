//! The PM4 packets KFD's packet manager sends to the hardware scheduler
//! (HWS) on GC 9.x, encoded from `kfd_pm4_headers_ai.h`,
//! `kfd_pm4_headers_aldebaran.h` and `kfd_pm4_opcodes.h`, filled as
//! `kfd_packet_manager_v9.c` fills them.
//!
//! # Which MAP_PROCESS GC 9.4.3 uses
//!
//! `pm_init()` (`kfd_packet_manager.c`) picks `kfd_aldebaran_pm_funcs`
//! for GC 9.4.2, 9.4.3 and 9.4.4 and `kfd_v9_pm_funcs` for every other
//! GC ≥ 9.0.1. The two tables differ only in MAP_PROCESS:
//! `pm_map_process_aldebaran()` sends `struct
//! pm4_mes_map_process_aldebaran` (21 dwords: the v9 body plus
//! `spi_gdbg_per_vmid_cntl` and four `tcp_watch_cntl` words before the
//! completion signal), `pm_map_process_v9()` the 16-dword `struct
//! pm4_mes_map_process`. So MI300X/MI308X (GC 9.4.3) get
//! [`MapProcessForm::Aldebaran`]; [`MapProcessForm::for_gc`] encodes
//! that choice.
//!
//! Dword indices count from the header (dword 0), as the C structs'
//! `ordinalN` do (ordinal1 is the header).

use barebell_facts::Fact;

/// A bit field of one packet dword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub shift: u32,
    pub width: u32,
}

impl Field {
    pub const fn new(shift: u32, width: u32) -> Self {
        Field { shift, width }
    }

    /// The field's bits in place.
    pub const fn mask(self) -> u32 {
        (((1u64 << self.width) - 1) as u32) << self.shift
    }

    /// `value` placed in the field. Callers check [`Field::fits`] first
    /// where a value could be too wide; extra bits are dropped here.
    pub const fn put(self, value: u32) -> u32 {
        (value << self.shift) & self.mask()
    }

    /// Whether `value` fits in the field's width.
    pub const fn fits(self, value: u64) -> bool {
        value < (1u64 << self.width)
    }
}

/// `enum it_opcode_type` (`kfd_pm4_opcodes.h`).
pub mod opcode {
    pub const NOP: u32 = 0x10;
    pub const SET_RESOURCES: u32 = 0xA0;
    pub const MAP_PROCESS: u32 = 0xA1;
    pub const MAP_QUEUES: u32 = 0xA2;
    pub const UNMAP_QUEUES: u32 = 0xA3;
    pub const QUERY_STATUS: u32 = 0xA4;
    pub const RUN_LIST: u32 = 0xA5;
}

/// `union PM4_MES_TYPE_3_HEADER`.
pub mod header {
    use super::Field;
    pub const OPCODE: Field = Field::new(8, 8);
    pub const COUNT: Field = Field::new(16, 14);
    pub const TYPE: Field = Field::new(30, 2);
    /// `PM4_TYPE_3` (`kfd_pm4_opcodes.h`).
    pub const TYPE3: u32 = 3;
}

/// `pm_build_pm4_header()`: `count` is the packet size in dwords minus 2.
pub const fn header(opcode: u32, dwords: usize) -> u32 {
    header::TYPE.put(header::TYPE3)
        | header::COUNT.put(dwords as u32 - 2)
        | header::OPCODE.put(opcode)
}

/// `struct pm4_mes_set_resources`.
pub mod set_resources {
    use super::Field;
    pub const DWORDS: usize = 8;
    pub const VMID_MASK: Field = Field::new(0, 16);
    pub const UNMAP_LATENCY: Field = Field::new(16, 8);
    pub const QUEUE_TYPE: Field = Field::new(29, 3);
    pub const DW_QUEUE_MASK_LO: usize = 2;
    pub const DW_GWS_MASK_LO: usize = 4;
    pub const DW_OAC: usize = 6;
    pub const DW_GDS: usize = 7;
    pub const OAC_MASK: Field = Field::new(0, 16);
    pub const GDS_HEAP_BASE: Field = Field::new(0, 10);
    pub const GDS_HEAP_SIZE: Field = Field::new(11, 10);
    /// `queue_type__mes_set_resources__hsa_interface_queue_hiq`.
    pub const QUEUE_TYPE_HIQ: u32 = 1;
}

/// `struct pm4_mes_runlist`.
pub mod run_list {
    use super::Field;
    pub const DWORDS: usize = 4;
    /// `bitfields2.ib_base_lo`: bits 31:2 of the IB address (bits 1:0
    /// reserved, so the IB is dword-aligned).
    pub const IB_BASE_LO: Field = Field::new(2, 30);
    pub const DW_IB_BASE_HI: usize = 2;
    pub const DW_CONTROL: usize = 3;
    pub const IB_SIZE: Field = Field::new(0, 20);
    pub const CHAIN: Field = Field::new(20, 1);
    pub const OFFLOAD_POLLING: Field = Field::new(21, 1);
    pub const CHAINED_RUNLIST_IDLE_DISABLE: Field = Field::new(22, 1);
    pub const VALID: Field = Field::new(23, 1);
    pub const PROCESS_CNT: Field = Field::new(24, 4);
}

/// `struct pm4_mes_map_process` (v9) and `struct
/// pm4_mes_map_process_aldebaran`: the same first 14 dwords.
pub mod map_process {
    use super::Field;
    pub const DWORDS_V9: usize = 16;
    pub const DWORDS_ALDEBARAN: usize = 21;
    pub const PASID: Field = Field::new(0, 16);
    /// Aldebaran only (reserved1 in v9).
    pub const SINGLE_MEMOPS: Field = Field::new(16, 1);
    pub const EXEC_CLEANER_SHADER: Field = Field::new(17, 1);
    pub const DEBUG_VMID: Field = Field::new(18, 4);
    pub const NEW_DEBUG: Field = Field::new(22, 1);
    /// Aldebaran only (reserved2 in v9).
    pub const TMZ: Field = Field::new(23, 1);
    pub const DIQ_ENABLE: Field = Field::new(24, 1);
    pub const PROCESS_QUANTUM: Field = Field::new(25, 7);
    pub const DW_PAGE_TABLE_BASE_LO: usize = 2;
    pub const DW_SH_MEM_BASES: usize = 4;
    pub const DW_SH_MEM_CONFIG: usize = 5;
    pub const DW_TBA_LO: usize = 6;
    pub const DW_TMA_LO: usize = 8;
    pub const DW_GDS_ADDR_LO: usize = 11;
    pub const DW_QUEUES: usize = 13;
    pub const NUM_GWS: Field = Field::new(0, 7);
    pub const SDMA_ENABLE: Field = Field::new(7, 1);
    pub const NUM_OAC: Field = Field::new(8, 4);
    pub const GDS_SIZE_HI: Field = Field::new(12, 4);
    pub const GDS_SIZE: Field = Field::new(16, 6);
    pub const NUM_QUEUES: Field = Field::new(22, 10);
    /// Aldebaran: `spi_gdbg_per_vmid_cntl`, then `tcp_watch_cntl[4]`.
    pub const DW_SPI_GDBG_ALDEBARAN: usize = 14;
    /// `process_quantum` as KFD sends it (`pm_map_process_v9()`,
    /// `pm_map_process_aldebaran()`: 10).
    pub const KFD_QUANTUM: u32 = 10;
}

/// `struct pm4_mes_map_queues`.
pub mod map_queues {
    use super::Field;
    pub const DWORDS: usize = 7;
    pub const EXTENDED_ENGINE_SEL: Field = Field::new(2, 2);
    pub const QUEUE_SEL: Field = Field::new(4, 2);
    pub const GWS_CONTROL_QUEUE: Field = Field::new(12, 1);
    pub const QUEUE_TYPE: Field = Field::new(21, 3);
    pub const ENGINE_SEL: Field = Field::new(26, 3);
    pub const NUM_QUEUES: Field = Field::new(29, 3);
    pub const CHECK_DISABLE: Field = Field::new(1, 1);
    pub const DOORBELL_OFFSET: Field = Field::new(2, 26);
    pub const DW_MQD_LO: usize = 3;
    pub const DW_WPTR_LO: usize = 5;
    /// `queue_sel__mes_map_queues__map_to_hws_determined_queue_slots_vi`.
    pub const QUEUE_SEL_HWS: u32 = 1;
    pub const QUEUE_TYPE_NORMAL_COMPUTE: u32 = 0;
    pub const QUEUE_TYPE_DEBUG_INTERFACE: u32 = 1;
    pub const QUEUE_TYPE_NORMAL_LATENCY_STATIC: u32 = 2;
    pub const ENGINE_COMPUTE: u32 = 0;
    pub const ENGINE_SDMA0: u32 = 2;
    pub const ENGINE_SDMA1: u32 = 3;
    pub const EXT_LEGACY: u32 = 0;
    pub const EXT_SDMA0_TO_7: u32 = 1;
    pub const EXT_SDMA8_TO_15: u32 = 2;
}

/// `struct pm4_mes_query_status`.
pub mod query_status {
    use super::Field;
    pub const DWORDS: usize = 7;
    pub const CONTEXT_ID: Field = Field::new(0, 28);
    pub const INTERRUPT_SEL: Field = Field::new(28, 2);
    pub const COMMAND: Field = Field::new(30, 2);
    pub const DW_ADDR_LO: usize = 3;
    pub const DW_DATA_LO: usize = 5;
    /// `interrupt_sel__mes_query_status__completion_status`.
    pub const INTERRUPT_COMPLETION_STATUS: u32 = 0;
    /// `command__mes_query_status__fence_only_after_write_ack`.
    pub const FENCE_ONLY_AFTER_WRITE_ACK: u32 = 2;
}

/// `struct pm4_mes_unmap_queues`.
pub mod unmap_queues {
    use super::Field;
    pub const DWORDS: usize = 6;
    pub const ACTION: Field = Field::new(0, 2);
    pub const EXTENDED_ENGINE_SEL: Field = Field::new(2, 2);
    pub const QUEUE_SEL: Field = Field::new(4, 2);
    pub const ENGINE_SEL: Field = Field::new(26, 3);
    pub const NUM_QUEUES: Field = Field::new(29, 3);
    pub const PASID: Field = Field::new(0, 16);
    pub const DOORBELL_OFFSET: Field = Field::new(2, 26);
    pub const ACTION_PREEMPT: u32 = 0;
    pub const ACTION_RESET: u32 = 1;
    pub const SEL_SPECIFIED: u32 = 0;
    pub const SEL_PASID: u32 = 1;
    pub const SEL_ALL: u32 = 2;
    pub const SEL_NON_STATIC: u32 = 3;
    pub const EXT_LEGACY: u32 = 0;
    pub const EXT_SDMA0_TO_7: u32 = 1;
}

fn lo(v: u64) -> u32 {
    v as u32
}
fn hi(v: u64) -> u32 {
    (v >> 32) as u32
}

/// Which MAP_PROCESS layout a part's KFD sends (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapProcessForm {
    /// `pm_map_process_v9()`, 16 dwords.
    V9,
    /// `pm_map_process_aldebaran()`, 21 dwords: GC 9.4.2, 9.4.3, 9.4.4.
    Aldebaran,
}

impl MapProcessForm {
    /// `pm_init()`'s choice for GC `major.minor.rev` (GC 9.x only;
    /// `None` for anything else, which has no v9 packet manager).
    pub fn for_gc(major: u8, minor: u8, rev: u8) -> Option<Self> {
        match (major, minor, rev) {
            (9, 4, 2..=4) => Some(MapProcessForm::Aldebaran),
            (9, _, _) => Some(MapProcessForm::V9),
            _ => None,
        }
    }

    pub const fn dwords(self) -> usize {
        match self {
            MapProcessForm::V9 => map_process::DWORDS_V9,
            MapProcessForm::Aldebaran => map_process::DWORDS_ALDEBARAN,
        }
    }
}

/// `struct scheduling_resources` as `set_sched_resources()` fills it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedulingResources {
    /// The VMIDs HWS may hand to processes (`compute_vmid_bitmap`).
    pub vmid_mask: u16,
    /// MEC queue slots HWS may use (`mec * 32 + pipe * 8 + queue`).
    pub queue_mask: u64,
    pub gws_mask: u64,
    pub oac_mask: u16,
    pub gds_heap_base: u16,
    pub gds_heap_size: u16,
    /// `KFD_UNMAP_LATENCY_MS / 100`.
    pub unmap_latency: u8,
}

/// `queue_preemption_timeout_ms`'s default (`amdgpu_drv.c`: 9000).
pub const QUEUE_PREEMPTION_TIMEOUT_MS: u32 = 9000;

/// `KFD_UNMAP_LATENCY_MS` (`kfd_priv.h`) for a preemption timeout.
pub const fn kfd_unmap_latency_ms(preemption_timeout_ms: u32) -> u32 {
    (preemption_timeout_ms - preemption_timeout_ms / 10) >> 1
}

impl SchedulingResources {
    /// What `set_sched_resources()` sends: all GWS, no OAC or GDS heap,
    /// the unmap latency for the default preemption timeout.
    pub fn kfd(vmid_mask: u16, queue_mask: u64) -> Self {
        SchedulingResources {
            vmid_mask,
            queue_mask,
            gws_mask: !0,
            oac_mask: 0,
            gds_heap_base: 0,
            gds_heap_size: 0,
            unmap_latency: (kfd_unmap_latency_ms(QUEUE_PREEMPTION_TIMEOUT_MS) / 100) as u8,
        }
    }
}

/// `pm_set_resources_v9()`.
pub fn set_resources(r: &SchedulingResources) -> [u32; set_resources::DWORDS] {
    use set_resources as s;
    let mut p = [0u32; s::DWORDS];
    p[0] = header(opcode::SET_RESOURCES, s::DWORDS);
    p[1] = s::QUEUE_TYPE.put(s::QUEUE_TYPE_HIQ)
        | s::VMID_MASK.put(u32::from(r.vmid_mask))
        | s::UNMAP_LATENCY.put(u32::from(r.unmap_latency));
    p[s::DW_QUEUE_MASK_LO] = lo(r.queue_mask);
    p[s::DW_QUEUE_MASK_LO + 1] = hi(r.queue_mask);
    p[s::DW_GWS_MASK_LO] = lo(r.gws_mask);
    p[s::DW_GWS_MASK_LO + 1] = hi(r.gws_mask);
    p[s::DW_OAC] = s::OAC_MASK.put(u32::from(r.oac_mask));
    p[s::DW_GDS] = s::GDS_HEAP_BASE.put(u32::from(r.gds_heap_base))
        | s::GDS_HEAP_SIZE.put(u32::from(r.gds_heap_size));
    p
}

/// `pm_runlist_v9()`: `ib` dword-aligned, `ib_dwords` within 20 bits,
/// `process_cnt` within 4 bits (the runlist builder checks all three).
pub fn run_list(ib: u64, ib_dwords: u32, chain: bool, process_cnt: u8) -> [u32; run_list::DWORDS] {
    use run_list as r;
    let mut p = [0u32; r::DWORDS];
    p[0] = header(opcode::RUN_LIST, r::DWORDS);
    p[1] = lo(ib);
    p[r::DW_IB_BASE_HI] = hi(ib);
    p[r::DW_CONTROL] = r::IB_SIZE.put(ib_dwords)
        | r::CHAIN.put(chain.into())
        | r::CHAINED_RUNLIST_IDLE_DISABLE.put(chain.into())
        | r::VALID.put(1)
        | r::PROCESS_CNT.put(process_cnt.into());
    p
}

/// A process as `pm_map_process_v9()` / `pm_map_process_aldebaran()`
/// read it from `struct qcm_process_device` (not debugged: no debug
/// VMID, no DIQ, no watch points).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessDesc {
    pub pasid: u16,
    /// The root page directory as a PDE (`amdgpu_gmc_pd_addr()`):
    /// address bits 47:12 | `AMDGPU_PTE_VALID` (| `SYSTEM`, `SNOOPED`).
    pub page_table_base: u64,
    pub sh_mem_config: u32,
    pub sh_mem_bases: u32,
    /// Trap handler base and memory (`qpd->tba_addr`, `tma_addr`), byte
    /// addresses; sent shifted right by 8.
    pub trap: Option<(u64, u64)>,
    pub gds_context_area: u64,
    pub gds_size: u16,
    pub num_gws: u8,
    pub num_oac: u8,
    /// `adev->enforce_isolation`: sets `exec_cleaner_shader`.
    pub enforce_isolation: bool,
}

impl ProcessDesc {
    /// A process with nothing but a PASID and page tables.
    pub fn new(pasid: u16, page_table_base: u64) -> Self {
        ProcessDesc {
            pasid,
            page_table_base,
            sh_mem_config: 0,
            sh_mem_bases: 0,
            trap: None,
            gds_context_area: 0,
            gds_size: 0,
            num_gws: 0,
            num_oac: 0,
            enforce_isolation: false,
        }
    }
}

/// `SQ_SHADER_TBA_HI.TRAP_EN` (bit 0 on GFX10; `pm_map_process_v9()`
/// sets it, noting GFX9 leaves it undefined; the aldebaran form does not).
pub const TBA_HI_TRAP_EN: u32 = 1;

/// Writes MAP_PROCESS for `p` with `num_queues` queues into `out`
/// (at least `form.dwords()` long). Returns the dwords written.
pub fn map_process(
    form: MapProcessForm,
    p: &ProcessDesc,
    num_queues: u16,
    out: &mut [u32],
) -> Option<usize> {
    use map_process as m;
    let n = form.dwords();
    let out = out.get_mut(..n)?;
    out.fill(0);
    out[0] = header(opcode::MAP_PROCESS, n);
    out[1] = m::EXEC_CLEANER_SHADER.put(p.enforce_isolation.into())
        | m::PROCESS_QUANTUM.put(m::KFD_QUANTUM)
        | m::PASID.put(p.pasid.into());
    out[m::DW_PAGE_TABLE_BASE_LO] = lo(p.page_table_base);
    out[m::DW_PAGE_TABLE_BASE_LO + 1] = hi(p.page_table_base);
    out[m::DW_SH_MEM_BASES] = p.sh_mem_bases;
    out[m::DW_SH_MEM_CONFIG] = p.sh_mem_config;
    if let Some((tba, tma)) = p.trap {
        out[m::DW_TBA_LO] = lo(tba >> 8);
        out[m::DW_TBA_LO + 1] = hi(tba >> 8)
            | match form {
                MapProcessForm::V9 => TBA_HI_TRAP_EN,
                MapProcessForm::Aldebaran => 0,
            };
        out[m::DW_TMA_LO] = lo(tma >> 8);
        out[m::DW_TMA_LO + 1] = hi(tma >> 8);
    }
    out[m::DW_GDS_ADDR_LO] = lo(p.gds_context_area);
    out[m::DW_GDS_ADDR_LO + 1] = hi(p.gds_context_area);
    out[m::DW_QUEUES] = m::GDS_SIZE.put(u32::from(p.gds_size) & 0x3F)
        | m::GDS_SIZE_HI.put((u32::from(p.gds_size) >> 6) & 0xF)
        | m::NUM_GWS.put(p.num_gws.into())
        | m::NUM_OAC.put(p.num_oac.into())
        | m::SDMA_ENABLE.put(1)
        | m::NUM_QUEUES.put(num_queues.into());
    Some(n)
}

/// The engine a queue runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Compute,
    /// SDMA engine `id` (KFD's `sdma_engine_id`).
    Sdma {
        id: u8,
    },
}

/// A queue as `pm_map_queues_v9()` reads `struct queue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueDesc {
    pub engine: Engine,
    /// `q->properties.doorbell_off`: the doorbell's dword offset in the
    /// doorbell BAR.
    pub doorbell_offset: u32,
    /// `q->gart_mqd_addr`.
    pub mqd_address: u64,
    /// `q->properties.write_ptr`.
    pub wptr_address: u64,
    /// `q->properties.is_gws`.
    pub gws: bool,
}

impl QueueDesc {
    pub fn compute(doorbell_offset: u32, mqd_address: u64, wptr_address: u64) -> Self {
        QueueDesc {
            engine: Engine::Compute,
            doorbell_offset,
            mqd_address,
            wptr_address,
            gws: false,
        }
    }
}

/// `pm_map_queues_v9()`. `is_static` is KFD's `qpd->is_debug`;
/// `ext_eng` is `pm_use_ext_eng()` (SDMA IP ≥ 5.2; GC 9.4.3's SDMA 4.4.2
/// is below it).
pub fn map_queues(q: &QueueDesc, is_static: bool, ext_eng: bool) -> [u32; map_queues::DWORDS] {
    use map_queues as m;
    let mut p = [0u32; m::DWORDS];
    p[0] = header(opcode::MAP_QUEUES, m::DWORDS);
    let (engine, ext, queue_type) = match q.engine {
        Engine::Compute => (
            m::ENGINE_COMPUTE,
            m::EXT_LEGACY,
            if is_static {
                m::QUEUE_TYPE_NORMAL_LATENCY_STATIC
            } else {
                m::QUEUE_TYPE_NORMAL_COMPUTE
            },
        ),
        Engine::Sdma { id } if id < 2 && !ext_eng => (
            m::ENGINE_SDMA0 + u32::from(id),
            m::EXT_LEGACY,
            m::QUEUE_TYPE_NORMAL_COMPUTE,
        ),
        Engine::Sdma { id } => (
            u32::from(id % 8),
            if id >= 8 {
                m::EXT_SDMA8_TO_15
            } else {
                m::EXT_SDMA0_TO_7
            },
            m::QUEUE_TYPE_NORMAL_COMPUTE,
        ),
    };
    p[1] = m::NUM_QUEUES.put(1)
        | m::QUEUE_SEL.put(m::QUEUE_SEL_HWS)
        | m::ENGINE_SEL.put(engine)
        | m::GWS_CONTROL_QUEUE.put(q.gws.into())
        | m::EXTENDED_ENGINE_SEL.put(ext)
        | m::QUEUE_TYPE.put(queue_type);
    p[2] = m::DOORBELL_OFFSET.put(q.doorbell_offset);
    p[m::DW_MQD_LO] = lo(q.mqd_address);
    p[m::DW_MQD_LO + 1] = hi(q.mqd_address);
    p[m::DW_WPTR_LO] = lo(q.wptr_address);
    p[m::DW_WPTR_LO + 1] = hi(q.wptr_address);
    p
}

/// `pm_query_status_v9()`: a fence written after write-ack.
pub fn query_status(fence_address: u64, fence_value: u64) -> [u32; query_status::DWORDS] {
    use query_status as q;
    let mut p = [0u32; q::DWORDS];
    p[0] = header(opcode::QUERY_STATUS, q::DWORDS);
    p[1] = q::CONTEXT_ID.put(0)
        | q::INTERRUPT_SEL.put(q::INTERRUPT_COMPLETION_STATUS)
        | q::COMMAND.put(q::FENCE_ONLY_AFTER_WRITE_ACK);
    p[q::DW_ADDR_LO] = lo(fence_address);
    p[q::DW_ADDR_LO + 1] = hi(fence_address);
    p[q::DW_DATA_LO] = lo(fence_value);
    p[q::DW_DATA_LO + 1] = hi(fence_value);
    p
}

/// `enum kfd_unmap_queues_filter` as `pm_unmap_queues_v9()` encodes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnmapFilter {
    /// The queues of one process.
    Pasid(u16),
    All,
    /// All but static queues.
    Dynamic,
}

/// `pm_unmap_queues_v9()`.
pub fn unmap_queues(
    filter: UnmapFilter,
    reset: bool,
    ext_eng: bool,
) -> [u32; unmap_queues::DWORDS] {
    use unmap_queues as u;
    let mut p = [0u32; u::DWORDS];
    p[0] = header(opcode::UNMAP_QUEUES, u::DWORDS);
    let sel = match filter {
        UnmapFilter::Pasid(pasid) => {
            p[2] = u::PASID.put(pasid.into());
            u::SEL_PASID
        }
        UnmapFilter::All => u::SEL_ALL,
        UnmapFilter::Dynamic => u::SEL_NON_STATIC,
    };
    p[1] = u::EXTENDED_ENGINE_SEL.put(if ext_eng {
        u::EXT_SDMA0_TO_7
    } else {
        u::EXT_LEGACY
    }) | u::ENGINE_SEL.put(0)
        | u::ACTION.put(if reset {
            u::ACTION_RESET
        } else {
            u::ACTION_PREEMPT
        })
        | u::QUEUE_SEL.put(sel);
    p
}

const AI: &str = "kfd_pm4_headers_ai.h";
const ALD: &str = "kfd_pm4_headers_ai.h+kfd_pm4_headers_aldebaran.h";
const OPS: &str = "kfd_pm4_opcodes.h";

/// A field as the header's bitfield declares it: the dword with only
/// that field set to all ones (`s` the struct, `b` the bitfield group,
/// `o` the ordinal).
macro_rules! width {
    ($h:expr, $s:literal, $b:literal, $f:literal, $o:literal, $field:expr) => {
        Fact::constant(
            $h,
            concat!(
                "({ struct ",
                $s,
                " p_ = {0}; p_.",
                $b,
                ".",
                $f,
                " = ~0u; p_.",
                $o,
                "; })"
            ),
            $field.mask() as u64,
        )
    };
}

macro_rules! dword {
    ($h:expr, $s:literal, $f:literal, $v:expr) => {
        Fact::constant(
            $h,
            concat!("offsetof(struct ", $s, ", ", $f, ") / 4"),
            $v as u64,
        )
    };
}

macro_rules! dwords {
    ($h:expr, $s:literal, $v:expr) => {
        Fact::constant($h, concat!("sizeof(struct ", $s, ") / 4"), $v as u64)
    };
}

pub const FACTS: &[Fact] = &[
    Fact::constant(OPS, "IT_NOP", opcode::NOP as u64),
    Fact::constant(OPS, "IT_SET_RESOURCES", opcode::SET_RESOURCES as u64),
    Fact::constant(OPS, "IT_MAP_PROCESS", opcode::MAP_PROCESS as u64),
    Fact::constant(OPS, "IT_MAP_QUEUES", opcode::MAP_QUEUES as u64),
    Fact::constant(OPS, "IT_UNMAP_QUEUES", opcode::UNMAP_QUEUES as u64),
    Fact::constant(OPS, "IT_QUERY_STATUS", opcode::QUERY_STATUS as u64),
    Fact::constant(OPS, "IT_RUN_LIST", opcode::RUN_LIST as u64),
    Fact::constant(OPS, "PM4_TYPE_3", header::TYPE3 as u64),
    Fact::constant(
        AI,
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.opcode = ~0u; h_.u32All; })",
        header::OPCODE.mask() as u64,
    ),
    Fact::constant(
        AI,
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.count = ~0u; h_.u32All; })",
        header::COUNT.mask() as u64,
    ),
    Fact::constant(
        AI,
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.type = ~0u; h_.u32All; })",
        header::TYPE.mask() as u64,
    ),
    // SET_RESOURCES
    dwords!(AI, "pm4_mes_set_resources", set_resources::DWORDS),
    width!(
        AI,
        "pm4_mes_set_resources",
        "bitfields2",
        "vmid_mask",
        "ordinal2",
        set_resources::VMID_MASK
    ),
    width!(
        AI,
        "pm4_mes_set_resources",
        "bitfields2",
        "unmap_latency",
        "ordinal2",
        set_resources::UNMAP_LATENCY
    ),
    width!(
        AI,
        "pm4_mes_set_resources",
        "bitfields2",
        "queue_type",
        "ordinal2",
        set_resources::QUEUE_TYPE
    ),
    dword!(
        AI,
        "pm4_mes_set_resources",
        "queue_mask_lo",
        set_resources::DW_QUEUE_MASK_LO
    ),
    dword!(
        AI,
        "pm4_mes_set_resources",
        "gws_mask_lo",
        set_resources::DW_GWS_MASK_LO
    ),
    dword!(
        AI,
        "pm4_mes_set_resources",
        "ordinal7",
        set_resources::DW_OAC
    ),
    dword!(
        AI,
        "pm4_mes_set_resources",
        "ordinal8",
        set_resources::DW_GDS
    ),
    width!(
        AI,
        "pm4_mes_set_resources",
        "bitfields7",
        "oac_mask",
        "ordinal7",
        set_resources::OAC_MASK
    ),
    width!(
        AI,
        "pm4_mes_set_resources",
        "bitfields8",
        "gds_heap_base",
        "ordinal8",
        set_resources::GDS_HEAP_BASE
    ),
    width!(
        AI,
        "pm4_mes_set_resources",
        "bitfields8",
        "gds_heap_size",
        "ordinal8",
        set_resources::GDS_HEAP_SIZE
    ),
    Fact::constant(
        AI,
        "queue_type__mes_set_resources__hsa_interface_queue_hiq",
        set_resources::QUEUE_TYPE_HIQ as u64,
    ),
    // RUN_LIST
    dwords!(AI, "pm4_mes_runlist", run_list::DWORDS),
    width!(
        AI,
        "pm4_mes_runlist",
        "bitfields2",
        "ib_base_lo",
        "ordinal2",
        run_list::IB_BASE_LO
    ),
    dword!(AI, "pm4_mes_runlist", "ib_base_hi", run_list::DW_IB_BASE_HI),
    dword!(AI, "pm4_mes_runlist", "ordinal4", run_list::DW_CONTROL),
    width!(
        AI,
        "pm4_mes_runlist",
        "bitfields4",
        "ib_size",
        "ordinal4",
        run_list::IB_SIZE
    ),
    width!(
        AI,
        "pm4_mes_runlist",
        "bitfields4",
        "chain",
        "ordinal4",
        run_list::CHAIN
    ),
    width!(
        AI,
        "pm4_mes_runlist",
        "bitfields4",
        "offload_polling",
        "ordinal4",
        run_list::OFFLOAD_POLLING
    ),
    width!(
        AI,
        "pm4_mes_runlist",
        "bitfields4",
        "chained_runlist_idle_disable",
        "ordinal4",
        run_list::CHAINED_RUNLIST_IDLE_DISABLE
    ),
    width!(
        AI,
        "pm4_mes_runlist",
        "bitfields4",
        "valid",
        "ordinal4",
        run_list::VALID
    ),
    width!(
        AI,
        "pm4_mes_runlist",
        "bitfields4",
        "process_cnt",
        "ordinal4",
        run_list::PROCESS_CNT
    ),
    // MAP_PROCESS, v9
    dwords!(AI, "pm4_mes_map_process", map_process::DWORDS_V9),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields2",
        "pasid",
        "ordinal2",
        map_process::PASID
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields2",
        "exec_cleaner_shader",
        "ordinal2",
        map_process::EXEC_CLEANER_SHADER
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields2",
        "debug_vmid",
        "ordinal2",
        map_process::DEBUG_VMID
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields2",
        "new_debug",
        "ordinal2",
        map_process::NEW_DEBUG
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields2",
        "diq_enable",
        "ordinal2",
        map_process::DIQ_ENABLE
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields2",
        "process_quantum",
        "ordinal2",
        map_process::PROCESS_QUANTUM
    ),
    dword!(
        AI,
        "pm4_mes_map_process",
        "vm_context_page_table_base_addr_lo32",
        map_process::DW_PAGE_TABLE_BASE_LO
    ),
    dword!(
        AI,
        "pm4_mes_map_process",
        "sh_mem_bases",
        map_process::DW_SH_MEM_BASES
    ),
    dword!(
        AI,
        "pm4_mes_map_process",
        "sh_mem_config",
        map_process::DW_SH_MEM_CONFIG
    ),
    dword!(
        AI,
        "pm4_mes_map_process",
        "sq_shader_tba_lo",
        map_process::DW_TBA_LO
    ),
    dword!(
        AI,
        "pm4_mes_map_process",
        "sq_shader_tma_lo",
        map_process::DW_TMA_LO
    ),
    dword!(
        AI,
        "pm4_mes_map_process",
        "gds_addr_lo",
        map_process::DW_GDS_ADDR_LO
    ),
    dword!(
        AI,
        "pm4_mes_map_process",
        "ordinal14",
        map_process::DW_QUEUES
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields14",
        "num_gws",
        "ordinal14",
        map_process::NUM_GWS
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields14",
        "sdma_enable",
        "ordinal14",
        map_process::SDMA_ENABLE
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields14",
        "num_oac",
        "ordinal14",
        map_process::NUM_OAC
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields14",
        "gds_size_hi",
        "ordinal14",
        map_process::GDS_SIZE_HI
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields14",
        "gds_size",
        "ordinal14",
        map_process::GDS_SIZE
    ),
    width!(
        AI,
        "pm4_mes_map_process",
        "bitfields14",
        "num_queues",
        "ordinal14",
        map_process::NUM_QUEUES
    ),
    // MAP_PROCESS, aldebaran (GC 9.4.3)
    dwords!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        map_process::DWORDS_ALDEBARAN
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields2",
        "pasid",
        "ordinal2",
        map_process::PASID
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields2",
        "single_memops",
        "ordinal2",
        map_process::SINGLE_MEMOPS
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields2",
        "exec_cleaner_shader",
        "ordinal2",
        map_process::EXEC_CLEANER_SHADER
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields2",
        "debug_vmid",
        "ordinal2",
        map_process::DEBUG_VMID
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields2",
        "new_debug",
        "ordinal2",
        map_process::NEW_DEBUG
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields2",
        "tmz",
        "ordinal2",
        map_process::TMZ
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields2",
        "diq_enable",
        "ordinal2",
        map_process::DIQ_ENABLE
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields2",
        "process_quantum",
        "ordinal2",
        map_process::PROCESS_QUANTUM
    ),
    dword!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "vm_context_page_table_base_addr_lo32",
        map_process::DW_PAGE_TABLE_BASE_LO
    ),
    dword!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "sh_mem_bases",
        map_process::DW_SH_MEM_BASES
    ),
    dword!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "sh_mem_config",
        map_process::DW_SH_MEM_CONFIG
    ),
    dword!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "sq_shader_tba_lo",
        map_process::DW_TBA_LO
    ),
    dword!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "sq_shader_tma_lo",
        map_process::DW_TMA_LO
    ),
    dword!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "gds_addr_lo",
        map_process::DW_GDS_ADDR_LO
    ),
    dword!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "ordinal14",
        map_process::DW_QUEUES
    ),
    dword!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "spi_gdbg_per_vmid_cntl",
        map_process::DW_SPI_GDBG_ALDEBARAN
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields14",
        "num_queues",
        "ordinal14",
        map_process::NUM_QUEUES
    ),
    width!(
        ALD,
        "pm4_mes_map_process_aldebaran",
        "bitfields14",
        "sdma_enable",
        "ordinal14",
        map_process::SDMA_ENABLE
    ),
    // MAP_QUEUES
    dwords!(AI, "pm4_mes_map_queues", map_queues::DWORDS),
    width!(
        AI,
        "pm4_mes_map_queues",
        "bitfields2",
        "extended_engine_sel",
        "ordinal2",
        map_queues::EXTENDED_ENGINE_SEL
    ),
    width!(
        AI,
        "pm4_mes_map_queues",
        "bitfields2",
        "queue_sel",
        "ordinal2",
        map_queues::QUEUE_SEL
    ),
    width!(
        AI,
        "pm4_mes_map_queues",
        "bitfields2",
        "gws_control_queue",
        "ordinal2",
        map_queues::GWS_CONTROL_QUEUE
    ),
    width!(
        AI,
        "pm4_mes_map_queues",
        "bitfields2",
        "queue_type",
        "ordinal2",
        map_queues::QUEUE_TYPE
    ),
    width!(
        AI,
        "pm4_mes_map_queues",
        "bitfields2",
        "engine_sel",
        "ordinal2",
        map_queues::ENGINE_SEL
    ),
    width!(
        AI,
        "pm4_mes_map_queues",
        "bitfields2",
        "num_queues",
        "ordinal2",
        map_queues::NUM_QUEUES
    ),
    width!(
        AI,
        "pm4_mes_map_queues",
        "bitfields3",
        "check_disable",
        "ordinal3",
        map_queues::CHECK_DISABLE
    ),
    width!(
        AI,
        "pm4_mes_map_queues",
        "bitfields3",
        "doorbell_offset",
        "ordinal3",
        map_queues::DOORBELL_OFFSET
    ),
    dword!(
        AI,
        "pm4_mes_map_queues",
        "mqd_addr_lo",
        map_queues::DW_MQD_LO
    ),
    dword!(
        AI,
        "pm4_mes_map_queues",
        "wptr_addr_lo",
        map_queues::DW_WPTR_LO
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_map_queues__map_to_hws_determined_queue_slots_vi",
        map_queues::QUEUE_SEL_HWS as u64,
    ),
    Fact::constant(
        AI,
        "queue_type__mes_map_queues__normal_compute_vi",
        map_queues::QUEUE_TYPE_NORMAL_COMPUTE as u64,
    ),
    Fact::constant(
        AI,
        "queue_type__mes_map_queues__debug_interface_queue_vi",
        map_queues::QUEUE_TYPE_DEBUG_INTERFACE as u64,
    ),
    Fact::constant(
        AI,
        "queue_type__mes_map_queues__normal_latency_static_queue_vi",
        map_queues::QUEUE_TYPE_NORMAL_LATENCY_STATIC as u64,
    ),
    Fact::constant(
        AI,
        "engine_sel__mes_map_queues__compute_vi",
        map_queues::ENGINE_COMPUTE as u64,
    ),
    Fact::constant(
        AI,
        "engine_sel__mes_map_queues__sdma0_vi",
        map_queues::ENGINE_SDMA0 as u64,
    ),
    Fact::constant(
        AI,
        "engine_sel__mes_map_queues__sdma1_vi",
        map_queues::ENGINE_SDMA1 as u64,
    ),
    Fact::constant(
        AI,
        "extended_engine_sel__mes_map_queues__legacy_engine_sel",
        map_queues::EXT_LEGACY as u64,
    ),
    Fact::constant(
        AI,
        "extended_engine_sel__mes_map_queues__sdma0_to_7_sel",
        map_queues::EXT_SDMA0_TO_7 as u64,
    ),
    Fact::constant(
        AI,
        "extended_engine_sel__mes_map_queues__sdma8_to_15_sel",
        map_queues::EXT_SDMA8_TO_15 as u64,
    ),
    // QUERY_STATUS
    dwords!(AI, "pm4_mes_query_status", query_status::DWORDS),
    width!(
        AI,
        "pm4_mes_query_status",
        "bitfields2",
        "context_id",
        "ordinal2",
        query_status::CONTEXT_ID
    ),
    width!(
        AI,
        "pm4_mes_query_status",
        "bitfields2",
        "interrupt_sel",
        "ordinal2",
        query_status::INTERRUPT_SEL
    ),
    width!(
        AI,
        "pm4_mes_query_status",
        "bitfields2",
        "command",
        "ordinal2",
        query_status::COMMAND
    ),
    dword!(
        AI,
        "pm4_mes_query_status",
        "addr_lo",
        query_status::DW_ADDR_LO
    ),
    dword!(
        AI,
        "pm4_mes_query_status",
        "data_lo",
        query_status::DW_DATA_LO
    ),
    Fact::constant(
        AI,
        "interrupt_sel__mes_query_status__completion_status",
        query_status::INTERRUPT_COMPLETION_STATUS as u64,
    ),
    Fact::constant(
        AI,
        "command__mes_query_status__fence_only_after_write_ack",
        query_status::FENCE_ONLY_AFTER_WRITE_ACK as u64,
    ),
    // UNMAP_QUEUES
    dwords!(AI, "pm4_mes_unmap_queues", unmap_queues::DWORDS),
    width!(
        AI,
        "pm4_mes_unmap_queues",
        "bitfields2",
        "action",
        "ordinal2",
        unmap_queues::ACTION
    ),
    width!(
        AI,
        "pm4_mes_unmap_queues",
        "bitfields2",
        "extended_engine_sel",
        "ordinal2",
        unmap_queues::EXTENDED_ENGINE_SEL
    ),
    width!(
        AI,
        "pm4_mes_unmap_queues",
        "bitfields2",
        "queue_sel",
        "ordinal2",
        unmap_queues::QUEUE_SEL
    ),
    width!(
        AI,
        "pm4_mes_unmap_queues",
        "bitfields2",
        "engine_sel",
        "ordinal2",
        unmap_queues::ENGINE_SEL
    ),
    width!(
        AI,
        "pm4_mes_unmap_queues",
        "bitfields2",
        "num_queues",
        "ordinal2",
        unmap_queues::NUM_QUEUES
    ),
    width!(
        AI,
        "pm4_mes_unmap_queues",
        "bitfields3a",
        "pasid",
        "ordinal3",
        unmap_queues::PASID
    ),
    width!(
        AI,
        "pm4_mes_unmap_queues",
        "bitfields3b",
        "doorbell_offset0",
        "ordinal3",
        unmap_queues::DOORBELL_OFFSET
    ),
    Fact::constant(
        AI,
        "action__mes_unmap_queues__preempt_queues",
        unmap_queues::ACTION_PREEMPT as u64,
    ),
    Fact::constant(
        AI,
        "action__mes_unmap_queues__reset_queues",
        unmap_queues::ACTION_RESET as u64,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_unmap_queues__perform_request_on_specified_queues",
        unmap_queues::SEL_SPECIFIED as u64,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_unmap_queues__perform_request_on_pasid_queues",
        unmap_queues::SEL_PASID as u64,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_unmap_queues__unmap_all_queues",
        unmap_queues::SEL_ALL as u64,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_unmap_queues__unmap_all_non_static_queues",
        unmap_queues::SEL_NON_STATIC as u64,
    ),
    Fact::constant(
        AI,
        "extended_engine_sel__mes_unmap_queues__sdma0_to_7_sel",
        unmap_queues::EXT_SDMA0_TO_7 as u64,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Headers computed by hand: `3 << 30 | (dwords - 2) << 16 | op << 8`.
    #[test]
    fn headers_count_dwords_minus_two() {
        assert_eq!(header(opcode::SET_RESOURCES, 8), 0xC006_A000);
        assert_eq!(header(opcode::RUN_LIST, 4), 0xC002_A500);
        assert_eq!(header(opcode::MAP_PROCESS, 21), 0xC013_A100);
        assert_eq!(header(opcode::MAP_PROCESS, 16), 0xC00E_A100);
        assert_eq!(header(opcode::MAP_QUEUES, 7), 0xC005_A200);
        assert_eq!(header(opcode::QUERY_STATUS, 7), 0xC005_A400);
        assert_eq!(header(opcode::UNMAP_QUEUES, 6), 0xC004_A300);
    }

    #[test]
    fn gc_9_4_3_uses_the_aldebaran_map_process() {
        assert_eq!(
            MapProcessForm::for_gc(9, 4, 3),
            Some(MapProcessForm::Aldebaran)
        );
        assert_eq!(
            MapProcessForm::for_gc(9, 4, 2),
            Some(MapProcessForm::Aldebaran)
        );
        assert_eq!(MapProcessForm::for_gc(9, 0, 1), Some(MapProcessForm::V9));
        assert_eq!(MapProcessForm::for_gc(11, 0, 0), None);
        assert_eq!(MapProcessForm::Aldebaran.dwords(), 21);
    }

    /// `KFD_UNMAP_LATENCY_MS` with the default 9000 ms: (9000 - 900) >> 1
    /// = 4050, sent as 40 (hundreds of ms).
    #[test]
    fn set_resources_as_kfd_fills_it() {
        let p = set_resources(&SchedulingResources::kfd(0xFFF8, 0xFFFF_FF00));
        assert_eq!(p[1], 0xFFF8 | 40 << 16 | 1 << 29);
        assert_eq!(p[2..8], [0xFFFF_FF00, 0, !0, !0, 0, 0]);
    }

    #[test]
    fn run_list_control_word() {
        let p = run_list(0x1_2345_6780, 0x40, true, 3);
        assert_eq!(
            p[1..4],
            [0x2345_6780, 1, 0x40 | 1 << 20 | 1 << 22 | 1 << 23 | 3 << 24]
        );
        let p = run_list(0x1000, 0x10, false, 1);
        assert_eq!(p[3], 0x10 | 1 << 23 | 1 << 24);
    }

    #[test]
    fn map_queues_compute_and_sdma() {
        let q = QueueDesc::compute(0x24, 0x9_0000_1000, 0x8000);
        let p = map_queues(&q, false, false);
        // num_queues 1 at 29, queue_sel 1 at 4.
        assert_eq!(p[1], 1 << 29 | 1 << 4);
        assert_eq!(p[2], 0x24 << 2);
        assert_eq!(p[3..7], [0x1000, 9, 0x8000, 0]);
        let static_q = map_queues(&q, true, false);
        assert_eq!(static_q[1], 1 << 29 | 1 << 4 | 2 << 21);
        let sdma1 = QueueDesc {
            engine: Engine::Sdma { id: 1 },
            ..q
        };
        assert_eq!(
            map_queues(&sdma1, false, false)[1],
            1 << 29 | 1 << 4 | 3 << 26
        );
        let sdma9 = QueueDesc {
            engine: Engine::Sdma { id: 9 },
            ..q
        };
        assert_eq!(
            map_queues(&sdma9, false, false)[1],
            1 << 29 | 1 << 4 | 1 << 26 | 2 << 2
        );
    }

    /// `pm_map_queues_v9()` for SDMA on GC 9.4.3 (SDMA 4.4.2 is below
    /// 5.2, so `pm_use_ext_eng()` is false), by hand from
    /// `kfd_pm4_headers_ai.h`: engines 0 and 1 take the legacy select
    /// (`engine_sel` 2 = sdma0_vi, 3 = sdma1_vi); 2..7 take
    /// `extended_engine_sel` 1 (sdma0_to_7) with `engine_sel` = id; 8..15
    /// take 2 (sdma8_to_15) with id % 8. Queue type normal compute; the
    /// doorbell dword at bit 2 of ordinal 3, MQD and wptr addresses after.
    #[test]
    fn map_queues_sdma_engine_select_on_gc_9_4_3() {
        let base = 1 << 29 | 1 << 4;
        let cases = [
            (0u8, 2u32 << 26),
            (1, 3 << 26),
            (2, 1 << 2 | 2 << 26),
            (7, 1 << 2 | 7 << 26),
            (8, 2 << 2),
            (13, 2 << 2 | 5 << 26),
            (15, 2 << 2 | 7 << 26),
        ];
        for (id, bits) in cases {
            let q = QueueDesc {
                engine: Engine::Sdma { id },
                ..QueueDesc::compute(0x218, 0x7_0000_2000, 0x7_0000_3008)
            };
            let p = map_queues(&q, false, false);
            assert_eq!(p[0], 0xC005_A200, "engine {id}");
            assert_eq!(p[1], base | bits, "engine {id}");
            assert_eq!(p[2], 0x218 << 2);
            assert_eq!(p[3..7], [0x2000, 7, 0x3008, 7]);
        }
    }

    #[test]
    fn map_process_aldebaran_layout() {
        let mut out = [0xDEAD_BEEFu32; 24];
        let mut p = ProcessDesc::new(0x8001, 0x0000_0012_3456_7001);
        p.trap = Some((0x1_0000_0100, 0x2_0000_0200));
        p.gds_size = 0x41;
        let n = map_process(MapProcessForm::Aldebaran, &p, 3, &mut out).unwrap();
        assert_eq!(n, 21);
        assert_eq!(out[1], 0x8001 | 10 << 25);
        assert_eq!(out[2..4], [0x3456_7001, 0x12]);
        // tba >> 8 = 0x1_0000_01, no TRAP_EN in the aldebaran form.
        assert_eq!(out[6..10], [0x0100_0001, 0, 0x0200_0002, 0]);
        // gds_size 0x41: low 6 bits 1 at 16, high bits 1 at 12.
        assert_eq!(out[13], 3 << 22 | 1 << 16 | 1 << 12 | 1 << 7);
        assert_eq!(out[14..21], [0; 7]);
        assert_eq!(out[21], 0xDEAD_BEEF);
        let n = map_process(MapProcessForm::V9, &p, 3, &mut out).unwrap();
        assert_eq!(n, 16);
        assert_eq!(out[7], 1);
        assert!(map_process(MapProcessForm::Aldebaran, &p, 0, &mut [0; 20]).is_none());
    }

    #[test]
    fn query_and_unmap() {
        let q = query_status(0x1234_5678_9ABC, 100);
        assert_eq!(q[1], 2 << 30);
        assert_eq!(q[3..7], [0x5678_9ABC, 0x1234, 100, 0]);
        let u = unmap_queues(UnmapFilter::Pasid(0x8002), false, false);
        assert_eq!(u[1], 1 << 4);
        assert_eq!(u[2], 0x8002);
        let u = unmap_queues(UnmapFilter::All, true, false);
        assert_eq!(u[1], 2 << 4 | 1);
        assert_eq!(
            unmap_queues(UnmapFilter::Dynamic, false, true)[1],
            3 << 4 | 1 << 2
        );
    }
}
