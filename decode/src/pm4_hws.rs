//! The HWS packets (KFD's CPSCH runlist path on GC 9.x) as the model's
//! scheduler reads them, decoded from `kfd_pm4_headers_ai.h`,
//! `kfd_pm4_headers_aldebaran.h` and `kfd_pm4_opcodes.h` with the model's
//! own field table. Each position and width is a conformance fact of its
//! own (the "field set to all ones" probe against KFD's bitfield structs);
//! nothing here uses the runtime's encoder.
//!
//! Dword indices count from the header (dword 0, `ordinal1`).

use super::Bits;
use barebell_facts::Fact;

/// Type-3 header (`union PM4_MES_TYPE_3_HEADER`).
pub const HDR_OPCODE: Bits = Bits::new(8, 8);
pub const HDR_COUNT: Bits = Bits::new(16, 14);
pub const HDR_TYPE: Bits = Bits::new(30, 2);

/// `enum it_opcode_type`.
pub mod op {
    pub const NOP: u32 = 0x10;
    pub const SET_RESOURCES: u32 = 0xA0;
    pub const MAP_PROCESS: u32 = 0xA1;
    pub const MAP_QUEUES: u32 = 0xA2;
    pub const UNMAP_QUEUES: u32 = 0xA3;
    pub const QUERY_STATUS: u32 = 0xA4;
    pub const RUN_LIST: u32 = 0xA5;
}

/// The packet's name (for refusals).
pub fn name(opcode: u32) -> &'static str {
    match opcode {
        op::NOP => "NOP",
        op::SET_RESOURCES => "SET_RESOURCES",
        op::MAP_PROCESS => "MAP_PROCESS",
        op::MAP_QUEUES => "MAP_QUEUES",
        op::UNMAP_QUEUES => "UNMAP_QUEUES",
        op::QUERY_STATUS => "QUERY_STATUS",
        op::RUN_LIST => "RUN_LIST",
        _ => "an opcode the HWS does not take",
    }
}

/// Packet sizes in dwords, header included.
pub const SET_RESOURCES_DWORDS: usize = 8;
pub const RUN_LIST_DWORDS: usize = 4;
pub const MAP_PROCESS_V9_DWORDS: usize = 16;
pub const MAP_PROCESS_ALDEBARAN_DWORDS: usize = 21;
pub const MAP_QUEUES_DWORDS: usize = 7;
pub const QUERY_STATUS_DWORDS: usize = 7;
pub const UNMAP_QUEUES_DWORDS: usize = 6;

/// SET_RESOURCES dword 1 and 6/7.
pub mod sr {
    use super::Bits;
    pub const VMID_MASK: Bits = Bits::new(0, 16);
    pub const UNMAP_LATENCY: Bits = Bits::new(16, 8);
    pub const RESERVED1: Bits = Bits::new(24, 5);
    pub const QUEUE_TYPE: Bits = Bits::new(29, 3);
    pub const OAC_MASK: Bits = Bits::new(0, 16);
    pub const GDS_HEAP_BASE: Bits = Bits::new(0, 10);
    pub const GDS_HEAP_SIZE: Bits = Bits::new(11, 10);
    pub const HIQ: u32 = 1;
}

/// RUN_LIST dword 1 and 3.
pub mod rl {
    use super::Bits;
    pub const IB_BASE_LO: Bits = Bits::new(2, 30);
    pub const IB_SIZE: Bits = Bits::new(0, 20);
    pub const CHAIN: Bits = Bits::new(20, 1);
    pub const OFFLOAD_POLLING: Bits = Bits::new(21, 1);
    pub const IDLE_DISABLE: Bits = Bits::new(22, 1);
    pub const VALID: Bits = Bits::new(23, 1);
    pub const PROCESS_CNT: Bits = Bits::new(24, 4);
    pub const RESERVED3: Bits = Bits::new(28, 4);
}

/// MAP_PROCESS dword 1 and 13 (`bitfields2`, `bitfields14`).
pub mod mp {
    use super::Bits;
    pub const PASID: Bits = Bits::new(0, 16);
    pub const BIT16: Bits = Bits::new(16, 1);
    pub const EXEC_CLEANER_SHADER: Bits = Bits::new(17, 1);
    pub const DEBUG_VMID: Bits = Bits::new(18, 4);
    pub const NEW_DEBUG: Bits = Bits::new(22, 1);
    pub const BIT23: Bits = Bits::new(23, 1);
    pub const DIQ_ENABLE: Bits = Bits::new(24, 1);
    pub const PROCESS_QUANTUM: Bits = Bits::new(25, 7);
    pub const NUM_GWS: Bits = Bits::new(0, 7);
    pub const SDMA_ENABLE: Bits = Bits::new(7, 1);
    pub const NUM_OAC: Bits = Bits::new(8, 4);
    pub const GDS_SIZE_HI: Bits = Bits::new(12, 4);
    pub const GDS_SIZE: Bits = Bits::new(16, 6);
    pub const NUM_QUEUES: Bits = Bits::new(22, 10);
    pub const DW_PT_LO: usize = 2;
    pub const DW_SH_MEM_BASES: usize = 4;
    pub const DW_SH_MEM_CONFIG: usize = 5;
    pub const DW_TBA_LO: usize = 6;
    pub const DW_TMA_LO: usize = 8;
    pub const DW_RESERVED6: usize = 10;
    pub const DW_GDS_LO: usize = 11;
    pub const DW_QUEUES: usize = 13;
    /// Aldebaran form: `spi_gdbg_per_vmid_cntl`, `tcp_watch_cntl[4]`.
    pub const DW_SPI_GDBG: usize = 14;
    pub const DW_TCP_WATCH: usize = 15;
}

/// MAP_QUEUES dword 1 and 2.
pub mod mq {
    use super::Bits;
    pub const EXT_ENGINE_SEL: Bits = Bits::new(2, 2);
    pub const QUEUE_SEL: Bits = Bits::new(4, 2);
    pub const GWS_CONTROL_QUEUE: Bits = Bits::new(12, 1);
    pub const QUEUE_TYPE: Bits = Bits::new(21, 3);
    pub const ENGINE_SEL: Bits = Bits::new(26, 3);
    pub const NUM_QUEUES: Bits = Bits::new(29, 3);
    /// `reserved1:2`, `reserved5:6`, `reserved2:8`, `reserved3:2` of dword 1.
    pub const RESERVED_DW1: u32 = 0x3 | 0x3F << 6 | 0xFF << 13 | 0x3 << 24;
    pub const CHECK_DISABLE: Bits = Bits::new(1, 1);
    pub const DOORBELL_OFFSET: Bits = Bits::new(2, 26);
    /// `reserved3:1`, `reserved4:4` of dword 2.
    pub const RESERVED_DW2: u32 = 1 | 0xF << 28;
    pub const HWS_DETERMINED: u32 = 1;
    pub const ENGINE_COMPUTE: u32 = 0;
    pub const TYPE_NORMAL_COMPUTE: u32 = 0;
    pub const TYPE_DEBUG_INTERFACE: u32 = 1;
    pub const TYPE_NORMAL_LATENCY_STATIC: u32 = 2;
}

/// QUERY_STATUS dword 1.
pub mod qs {
    use super::Bits;
    pub const CONTEXT_ID: Bits = Bits::new(0, 28);
    pub const INTERRUPT_SEL: Bits = Bits::new(28, 2);
    pub const COMMAND: Bits = Bits::new(30, 2);
    pub const FENCE_ONLY_IMMEDIATE: u32 = 1;
    pub const FENCE_ONLY_AFTER_WRITE_ACK: u32 = 2;
}

/// UNMAP_QUEUES dword 1, 2..5.
pub mod uq {
    use super::Bits;
    pub const ACTION: Bits = Bits::new(0, 2);
    pub const EXT_ENGINE_SEL: Bits = Bits::new(2, 2);
    pub const QUEUE_SEL: Bits = Bits::new(4, 2);
    pub const ENGINE_SEL: Bits = Bits::new(26, 3);
    pub const NUM_QUEUES: Bits = Bits::new(29, 3);
    pub const PASID: Bits = Bits::new(0, 16);
    pub const DOORBELL_OFFSET: Bits = Bits::new(2, 26);
    pub const PREEMPT: u32 = 0;
    pub const RESET: u32 = 1;
    pub const SPECIFIED: u32 = 0;
    pub const BY_PASID: u32 = 1;
    pub const ALL: u32 = 2;
    pub const NON_STATIC: u32 = 3;
}

/// A decoded type-3 header: opcode and packet length (header included).
pub fn header(word: u32) -> Option<(u32, usize)> {
    if HDR_TYPE.get(word) != 3 {
        return None;
    }
    Some((HDR_OPCODE.get(word), HDR_COUNT.get(word) as usize + 2))
}

fn d(p: &[u32], i: usize) -> u32 {
    p.get(i).copied().unwrap_or(0)
}

fn q(p: &[u32], i: usize) -> u64 {
    u64::from(d(p, i)) | u64::from(d(p, i + 1)) << 32
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetResources {
    pub vmid_mask: u16,
    pub unmap_latency: u8,
    pub queue_type: u32,
    pub queue_mask: u64,
    pub gws_mask: u64,
    pub oac_mask: u16,
    pub gds_heap_base: u16,
    pub gds_heap_size: u16,
    /// Set bits of reserved fields (dwords 1, 6, 7).
    pub reserved: u32,
}

/// `p` is the whole packet, header included.
pub fn set_resources(p: &[u32]) -> SetResources {
    let c = d(p, 1);
    SetResources {
        vmid_mask: sr::VMID_MASK.get(c) as u16,
        unmap_latency: sr::UNMAP_LATENCY.get(c) as u8,
        queue_type: sr::QUEUE_TYPE.get(c),
        queue_mask: q(p, 2),
        gws_mask: q(p, 4),
        oac_mask: sr::OAC_MASK.get(d(p, 6)) as u16,
        gds_heap_base: sr::GDS_HEAP_BASE.get(d(p, 7)) as u16,
        gds_heap_size: sr::GDS_HEAP_SIZE.get(d(p, 7)) as u16,
        reserved: (c & sr::RESERVED1.mask())
            | (d(p, 6) & !sr::OAC_MASK.mask())
            | (d(p, 7) & !(sr::GDS_HEAP_BASE.mask() | sr::GDS_HEAP_SIZE.mask())),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunList {
    /// IB address with bits 1:0 as sent (they are reserved).
    pub ib: u64,
    pub ib_dwords: u32,
    pub chain: bool,
    pub offload_polling: bool,
    pub idle_disable: bool,
    pub valid: bool,
    pub process_cnt: u32,
    pub reserved: u32,
}

pub fn run_list(p: &[u32]) -> RunList {
    let c = d(p, 3);
    RunList {
        ib: q(p, 1),
        ib_dwords: rl::IB_SIZE.get(c),
        chain: rl::CHAIN.is_set(c),
        offload_polling: rl::OFFLOAD_POLLING.is_set(c),
        idle_disable: rl::IDLE_DISABLE.is_set(c),
        valid: rl::VALID.is_set(c),
        process_cnt: rl::PROCESS_CNT.get(c),
        reserved: (d(p, 1) & 3) | (c & rl::RESERVED3.mask()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapProcess {
    /// 21 for the aldebaran form, 16 for v9.
    pub dwords: usize,
    pub pasid: u16,
    /// Aldebaran `single_memops` (reserved in v9).
    pub bit16: bool,
    pub exec_cleaner_shader: bool,
    pub debug_vmid: u8,
    pub new_debug: bool,
    /// Aldebaran `tmz` (reserved in v9).
    pub bit23: bool,
    pub diq_enable: bool,
    pub process_quantum: u8,
    pub page_table_base: u64,
    pub sh_mem_bases: u32,
    pub sh_mem_config: u32,
    pub tba: u64,
    pub tma: u64,
    pub reserved6: u32,
    pub gds_addr: u64,
    pub num_gws: u8,
    pub sdma_enable: bool,
    pub num_oac: u8,
    /// `gds_size_hi << 6 | gds_size`.
    pub gds_size: u16,
    pub num_queues: u16,
    pub completion_signal: u64,
}

pub fn map_process(p: &[u32]) -> MapProcess {
    let c = d(p, 1);
    let w = d(p, mp::DW_QUEUES);
    let dwords = p.len();
    let completion_at = dwords.saturating_sub(2);
    MapProcess {
        dwords,
        pasid: mp::PASID.get(c) as u16,
        bit16: mp::BIT16.is_set(c),
        exec_cleaner_shader: mp::EXEC_CLEANER_SHADER.is_set(c),
        debug_vmid: mp::DEBUG_VMID.get(c) as u8,
        new_debug: mp::NEW_DEBUG.is_set(c),
        bit23: mp::BIT23.is_set(c),
        diq_enable: mp::DIQ_ENABLE.is_set(c),
        process_quantum: mp::PROCESS_QUANTUM.get(c) as u8,
        page_table_base: q(p, mp::DW_PT_LO),
        sh_mem_bases: d(p, mp::DW_SH_MEM_BASES),
        sh_mem_config: d(p, mp::DW_SH_MEM_CONFIG),
        tba: q(p, mp::DW_TBA_LO),
        tma: q(p, mp::DW_TMA_LO),
        reserved6: d(p, mp::DW_RESERVED6),
        gds_addr: q(p, mp::DW_GDS_LO),
        num_gws: mp::NUM_GWS.get(w) as u8,
        sdma_enable: mp::SDMA_ENABLE.is_set(w),
        num_oac: mp::NUM_OAC.get(w) as u8,
        gds_size: (mp::GDS_SIZE_HI.get(w) << 6 | mp::GDS_SIZE.get(w)) as u16,
        num_queues: mp::NUM_QUEUES.get(w) as u16,
        completion_signal: q(p, completion_at),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapQueues {
    pub ext_engine_sel: u32,
    pub queue_sel: u32,
    pub gws_control_queue: bool,
    pub queue_type: u32,
    pub engine_sel: u32,
    pub num_queues: u32,
    pub check_disable: bool,
    pub doorbell_offset: u32,
    pub mqd: u64,
    pub wptr: u64,
    pub reserved: u32,
}

pub fn map_queues(p: &[u32]) -> MapQueues {
    let c = d(p, 1);
    let e = d(p, 2);
    MapQueues {
        ext_engine_sel: mq::EXT_ENGINE_SEL.get(c),
        queue_sel: mq::QUEUE_SEL.get(c),
        gws_control_queue: mq::GWS_CONTROL_QUEUE.is_set(c),
        queue_type: mq::QUEUE_TYPE.get(c),
        engine_sel: mq::ENGINE_SEL.get(c),
        num_queues: mq::NUM_QUEUES.get(c),
        check_disable: mq::CHECK_DISABLE.is_set(e),
        doorbell_offset: mq::DOORBELL_OFFSET.get(e),
        mqd: q(p, 3),
        wptr: q(p, 5),
        reserved: (c & mq::RESERVED_DW1) | (e & mq::RESERVED_DW2),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryStatus {
    pub context_id: u32,
    pub interrupt_sel: u32,
    pub command: u32,
    pub dword3: u32,
    pub addr: u64,
    pub data: u64,
}

pub fn query_status(p: &[u32]) -> QueryStatus {
    let c = d(p, 1);
    QueryStatus {
        context_id: qs::CONTEXT_ID.get(c),
        interrupt_sel: qs::INTERRUPT_SEL.get(c),
        command: qs::COMMAND.get(c),
        dword3: d(p, 2),
        addr: q(p, 3),
        data: q(p, 5),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnmapQueues {
    pub action: u32,
    pub ext_engine_sel: u32,
    pub queue_sel: u32,
    pub engine_sel: u32,
    pub num_queues: u32,
    pub pasid: u16,
    /// Doorbell offsets of dwords 2..5 (for `queue_sel` 0).
    pub doorbells: [u32; 4],
}

pub fn unmap_queues(p: &[u32]) -> UnmapQueues {
    let c = d(p, 1);
    UnmapQueues {
        action: uq::ACTION.get(c),
        ext_engine_sel: uq::EXT_ENGINE_SEL.get(c),
        queue_sel: uq::QUEUE_SEL.get(c),
        engine_sel: uq::ENGINE_SEL.get(c),
        num_queues: uq::NUM_QUEUES.get(c),
        pasid: uq::PASID.get(d(p, 2)) as u16,
        doorbells: [2, 3, 4, 5].map(|i| uq::DOORBELL_OFFSET.get(d(p, i))),
    }
}

const AI: &str = "kfd_pm4_headers_ai.h";
const ALD: &str = "kfd_pm4_headers_ai.h+kfd_pm4_headers_aldebaran.h";
const OPS: &str = "kfd_pm4_opcodes.h";

/// The field's mask as the header declares it: `ordinal` with only the
/// bitfield set to all ones.
const fn f(h: &'static str, expr: &'static str, b: Bits) -> Fact {
    Fact::constant(h, expr, b.mask() as u64)
}

pub const FACTS: &[Fact] = &[
    Fact::constant(OPS, "IT_NOP", op::NOP as u64),
    Fact::constant(OPS, "IT_SET_RESOURCES", op::SET_RESOURCES as u64),
    Fact::constant(OPS, "IT_MAP_PROCESS", op::MAP_PROCESS as u64),
    Fact::constant(OPS, "IT_MAP_QUEUES", op::MAP_QUEUES as u64),
    Fact::constant(OPS, "IT_UNMAP_QUEUES", op::UNMAP_QUEUES as u64),
    Fact::constant(OPS, "IT_QUERY_STATUS", op::QUERY_STATUS as u64),
    Fact::constant(OPS, "IT_RUN_LIST", op::RUN_LIST as u64),
    f(
        AI,
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.opcode = ~0u; h_.u32All; })",
        HDR_OPCODE,
    ),
    f(
        AI,
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.count = ~0u; h_.u32All; })",
        HDR_COUNT,
    ),
    f(
        AI,
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.type = ~0u; h_.u32All; })",
        HDR_TYPE,
    ),
    Fact::constant(
        AI,
        "sizeof(struct pm4_mes_set_resources) / 4",
        SET_RESOURCES_DWORDS as u64,
    ),
    Fact::constant(
        AI,
        "sizeof(struct pm4_mes_runlist) / 4",
        RUN_LIST_DWORDS as u64,
    ),
    Fact::constant(
        AI,
        "sizeof(struct pm4_mes_map_process) / 4",
        MAP_PROCESS_V9_DWORDS as u64,
    ),
    Fact::constant(
        ALD,
        "sizeof(struct pm4_mes_map_process_aldebaran) / 4",
        MAP_PROCESS_ALDEBARAN_DWORDS as u64,
    ),
    Fact::constant(
        AI,
        "sizeof(struct pm4_mes_map_queues) / 4",
        MAP_QUEUES_DWORDS as u64,
    ),
    Fact::constant(
        AI,
        "sizeof(struct pm4_mes_query_status) / 4",
        QUERY_STATUS_DWORDS as u64,
    ),
    Fact::constant(
        AI,
        "sizeof(struct pm4_mes_unmap_queues) / 4",
        UNMAP_QUEUES_DWORDS as u64,
    ),
    f(
        AI,
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.vmid_mask = ~0u; p_.ordinal2; })",
        sr::VMID_MASK,
    ),
    f(
        AI,
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.unmap_latency = ~0u; p_.ordinal2; })",
        sr::UNMAP_LATENCY,
    ),
    f(
        AI,
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.reserved1 = ~0u; p_.ordinal2; })",
        sr::RESERVED1,
    ),
    f(
        AI,
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.queue_type = ~0u; p_.ordinal2; })",
        sr::QUEUE_TYPE,
    ),
    f(
        AI,
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields7.oac_mask = ~0u; p_.ordinal7; })",
        sr::OAC_MASK,
    ),
    f(
        AI,
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields8.gds_heap_base = ~0u; p_.ordinal8; })",
        sr::GDS_HEAP_BASE,
    ),
    f(
        AI,
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields8.gds_heap_size = ~0u; p_.ordinal8; })",
        sr::GDS_HEAP_SIZE,
    ),
    Fact::constant(
        AI,
        "offsetof(struct pm4_mes_set_resources, queue_mask_lo) / 4",
        2,
    ),
    Fact::constant(
        AI,
        "offsetof(struct pm4_mes_set_resources, gws_mask_lo) / 4",
        4,
    ),
    Fact::constant(
        AI,
        "queue_type__mes_set_resources__hsa_interface_queue_hiq",
        sr::HIQ as u64,
    ),
    f(
        AI,
        "({ struct pm4_mes_runlist p_ = {0}; p_.bitfields2.ib_base_lo = ~0u; p_.ordinal2; })",
        rl::IB_BASE_LO,
    ),
    Fact::constant(AI, "offsetof(struct pm4_mes_runlist, ib_base_hi) / 4", 2),
    f(
        AI,
        "({ struct pm4_mes_runlist p_ = {0}; p_.bitfields4.ib_size = ~0u; p_.ordinal4; })",
        rl::IB_SIZE,
    ),
    f(
        AI,
        "({ struct pm4_mes_runlist p_ = {0}; p_.bitfields4.chain = ~0u; p_.ordinal4; })",
        rl::CHAIN,
    ),
    f(
        AI,
        "({ struct pm4_mes_runlist p_ = {0}; p_.bitfields4.offload_polling = ~0u; p_.ordinal4; })",
        rl::OFFLOAD_POLLING,
    ),
    f(
        AI,
        "({ struct pm4_mes_runlist p_ = {0}; p_.bitfields4.chained_runlist_idle_disable = ~0u; p_.ordinal4; })",
        rl::IDLE_DISABLE,
    ),
    f(
        AI,
        "({ struct pm4_mes_runlist p_ = {0}; p_.bitfields4.valid = ~0u; p_.ordinal4; })",
        rl::VALID,
    ),
    f(
        AI,
        "({ struct pm4_mes_runlist p_ = {0}; p_.bitfields4.process_cnt = ~0u; p_.ordinal4; })",
        rl::PROCESS_CNT,
    ),
    f(
        AI,
        "({ struct pm4_mes_runlist p_ = {0}; p_.bitfields4.reserved3 = ~0u; p_.ordinal4; })",
        rl::RESERVED3,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields2.pasid = ~0u; p_.ordinal2; })",
        mp::PASID,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields2.single_memops = ~0u; p_.ordinal2; })",
        mp::BIT16,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_process p_ = {0}; p_.bitfields2.reserved1 = ~0u; p_.ordinal2; })",
        mp::BIT16,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields2.exec_cleaner_shader = ~0u; p_.ordinal2; })",
        mp::EXEC_CLEANER_SHADER,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields2.debug_vmid = ~0u; p_.ordinal2; })",
        mp::DEBUG_VMID,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields2.new_debug = ~0u; p_.ordinal2; })",
        mp::NEW_DEBUG,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields2.tmz = ~0u; p_.ordinal2; })",
        mp::BIT23,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_process p_ = {0}; p_.bitfields2.reserved2 = ~0u; p_.ordinal2; })",
        mp::BIT23,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields2.diq_enable = ~0u; p_.ordinal2; })",
        mp::DIQ_ENABLE,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields2.process_quantum = ~0u; p_.ordinal2; })",
        mp::PROCESS_QUANTUM,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields14.num_gws = ~0u; p_.ordinal14; })",
        mp::NUM_GWS,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields14.sdma_enable = ~0u; p_.ordinal14; })",
        mp::SDMA_ENABLE,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields14.num_oac = ~0u; p_.ordinal14; })",
        mp::NUM_OAC,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields14.gds_size_hi = ~0u; p_.ordinal14; })",
        mp::GDS_SIZE_HI,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields14.gds_size = ~0u; p_.ordinal14; })",
        mp::GDS_SIZE,
    ),
    f(
        ALD,
        "({ struct pm4_mes_map_process_aldebaran p_ = {0}; p_.bitfields14.num_queues = ~0u; p_.ordinal14; })",
        mp::NUM_QUEUES,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, vm_context_page_table_base_addr_lo32) / 4",
        mp::DW_PT_LO as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, sh_mem_bases) / 4",
        mp::DW_SH_MEM_BASES as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, sh_mem_config) / 4",
        mp::DW_SH_MEM_CONFIG as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, sq_shader_tba_lo) / 4",
        mp::DW_TBA_LO as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, sq_shader_tma_lo) / 4",
        mp::DW_TMA_LO as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, reserved6) / 4",
        mp::DW_RESERVED6 as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, gds_addr_lo) / 4",
        mp::DW_GDS_LO as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, ordinal14) / 4",
        mp::DW_QUEUES as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, spi_gdbg_per_vmid_cntl) / 4",
        mp::DW_SPI_GDBG as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, tcp_watch_cntl) / 4",
        mp::DW_TCP_WATCH as u64,
    ),
    Fact::constant(
        ALD,
        "offsetof(struct pm4_mes_map_process_aldebaran, completion_signal_lo) / 4",
        (MAP_PROCESS_ALDEBARAN_DWORDS - 2) as u64,
    ),
    Fact::constant(
        AI,
        "offsetof(struct pm4_mes_map_process, completion_signal_lo) / 4",
        (MAP_PROCESS_V9_DWORDS - 2) as u64,
    ),
    Fact::constant(
        AI,
        "offsetof(struct pm4_mes_map_process, ordinal14) / 4",
        mp::DW_QUEUES as u64,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.extended_engine_sel = ~0u; p_.ordinal2; })",
        mq::EXT_ENGINE_SEL,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.queue_sel = ~0u; p_.ordinal2; })",
        mq::QUEUE_SEL,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.gws_control_queue = ~0u; p_.ordinal2; })",
        mq::GWS_CONTROL_QUEUE,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.queue_type = ~0u; p_.ordinal2; })",
        mq::QUEUE_TYPE,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.engine_sel = ~0u; p_.ordinal2; })",
        mq::ENGINE_SEL,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.num_queues = ~0u; p_.ordinal2; })",
        mq::NUM_QUEUES,
    ),
    Fact::constant(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.reserved1 = ~0u; p_.bitfields2.reserved5 = ~0u; p_.bitfields2.reserved2 = ~0u; p_.bitfields2.reserved3 = ~0u; p_.ordinal2; })",
        mq::RESERVED_DW1 as u64,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields3.check_disable = ~0u; p_.ordinal3; })",
        mq::CHECK_DISABLE,
    ),
    f(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields3.doorbell_offset = ~0u; p_.ordinal3; })",
        mq::DOORBELL_OFFSET,
    ),
    Fact::constant(
        AI,
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields3.reserved3 = ~0u; p_.bitfields3.reserved4 = ~0u; p_.ordinal3; })",
        mq::RESERVED_DW2 as u64,
    ),
    Fact::constant(
        AI,
        "offsetof(struct pm4_mes_map_queues, mqd_addr_lo) / 4",
        3,
    ),
    Fact::constant(
        AI,
        "offsetof(struct pm4_mes_map_queues, wptr_addr_lo) / 4",
        5,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_map_queues__map_to_hws_determined_queue_slots_vi",
        mq::HWS_DETERMINED as u64,
    ),
    Fact::constant(
        AI,
        "engine_sel__mes_map_queues__compute_vi",
        mq::ENGINE_COMPUTE as u64,
    ),
    Fact::constant(
        AI,
        "queue_type__mes_map_queues__normal_compute_vi",
        mq::TYPE_NORMAL_COMPUTE as u64,
    ),
    Fact::constant(
        AI,
        "queue_type__mes_map_queues__debug_interface_queue_vi",
        mq::TYPE_DEBUG_INTERFACE as u64,
    ),
    Fact::constant(
        AI,
        "queue_type__mes_map_queues__normal_latency_static_queue_vi",
        mq::TYPE_NORMAL_LATENCY_STATIC as u64,
    ),
    f(
        AI,
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.context_id = ~0u; p_.ordinal2; })",
        qs::CONTEXT_ID,
    ),
    f(
        AI,
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.interrupt_sel = ~0u; p_.ordinal2; })",
        qs::INTERRUPT_SEL,
    ),
    f(
        AI,
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.command = ~0u; p_.ordinal2; })",
        qs::COMMAND,
    ),
    Fact::constant(AI, "offsetof(struct pm4_mes_query_status, addr_lo) / 4", 3),
    Fact::constant(AI, "offsetof(struct pm4_mes_query_status, data_lo) / 4", 5),
    Fact::constant(
        AI,
        "command__mes_query_status__fence_only_immediate",
        qs::FENCE_ONLY_IMMEDIATE as u64,
    ),
    Fact::constant(
        AI,
        "command__mes_query_status__fence_only_after_write_ack",
        qs::FENCE_ONLY_AFTER_WRITE_ACK as u64,
    ),
    f(
        AI,
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.action = ~0u; p_.ordinal2; })",
        uq::ACTION,
    ),
    f(
        AI,
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.extended_engine_sel = ~0u; p_.ordinal2; })",
        uq::EXT_ENGINE_SEL,
    ),
    f(
        AI,
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.queue_sel = ~0u; p_.ordinal2; })",
        uq::QUEUE_SEL,
    ),
    f(
        AI,
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.engine_sel = ~0u; p_.ordinal2; })",
        uq::ENGINE_SEL,
    ),
    f(
        AI,
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.num_queues = ~0u; p_.ordinal2; })",
        uq::NUM_QUEUES,
    ),
    f(
        AI,
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields3a.pasid = ~0u; p_.ordinal3; })",
        uq::PASID,
    ),
    f(
        AI,
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields4.doorbell_offset1 = ~0u; p_.ordinal4; })",
        uq::DOORBELL_OFFSET,
    ),
    Fact::constant(
        AI,
        "action__mes_unmap_queues__preempt_queues",
        uq::PREEMPT as u64,
    ),
    Fact::constant(
        AI,
        "action__mes_unmap_queues__reset_queues",
        uq::RESET as u64,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_unmap_queues__perform_request_on_specified_queues",
        uq::SPECIFIED as u64,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_unmap_queues__perform_request_on_pasid_queues",
        uq::BY_PASID as u64,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_unmap_queues__unmap_all_queues",
        uq::ALL as u64,
    ),
    Fact::constant(
        AI,
        "queue_sel__mes_unmap_queues__unmap_all_non_static_queues",
        uq::NON_STATIC as u64,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A MAP_PROCESS (aldebaran form) assembled by hand from the
    /// header's bit layout: `type:2` at 30, `count:14` at 16 (21 − 2),
    /// `opcode:8` at 8; `pasid:16`, `process_quantum:7` at 25; the page
    /// table base in ordinals 3/4; `num_queues:10` at 22 and
    /// `sdma_enable` at 7 of ordinal 14.
    #[test]
    fn hand_assembled_map_process_decodes() {
        let mut p = [0u32; 21];
        p[0] = 3 << 30 | 19 << 16 | 0xA1 << 8;
        p[1] = 0x1234 | 10 << 25;
        p[2] = 0x0020_0001;
        p[3] = 0x7;
        p[13] = 2 << 22 | 1 << 7 | 0x2 << 16 | 0x1 << 12;
        p[19] = 0xCAFE;
        assert_eq!(header(p[0]), Some((op::MAP_PROCESS, 21)));
        let m = map_process(&p);
        assert_eq!(m.dwords, 21);
        assert_eq!(m.pasid, 0x1234);
        assert_eq!(m.process_quantum, 10);
        assert_eq!(m.page_table_base, 0x7_0020_0001);
        assert_eq!(m.num_queues, 2);
        assert!(m.sdma_enable);
        assert_eq!(m.gds_size, 1 << 6 | 2);
        assert_eq!(m.completion_signal, 0xCAFE);
        assert!(!m.bit16 && !m.bit23 && !m.diq_enable);
    }

    #[test]
    fn hand_assembled_map_queues_and_run_list() {
        // num_queues 1, queue_sel 1, compute; doorbell 0x22 at bit 2.
        let p = [
            0xC005_A200,
            1 << 29 | 1 << 4,
            0x22 << 2,
            0x1000,
            0x9,
            0x2000,
            0,
        ];
        let m = map_queues(&p);
        assert_eq!((m.num_queues, m.queue_sel, m.engine_sel), (1, 1, 0));
        assert_eq!(m.doorbell_offset, 0x22);
        assert_eq!(m.mqd, 0x9_0000_1000);
        assert_eq!(m.wptr, 0x2000);
        assert_eq!(m.reserved, 0);
        let r = run_list(&[0xC002_A500, 0x8000, 0, 0x4B | 1 << 20 | 1 << 23 | 2 << 24]);
        assert_eq!(r.ib, 0x8000);
        assert_eq!(r.ib_dwords, 0x4B);
        assert!(r.chain && r.valid && !r.idle_disable);
        assert_eq!(r.process_cnt, 2);
        assert_eq!(header(0x0000_0000), None);
    }
}
