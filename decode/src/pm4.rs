//! PM4 type-3 packets as the KIQ model parses them, from `nvd.h` (the
//! gfx10+ encodings `gfx_v11_0.c` and `gfx_v12_0.c` emit) and, for field
//! widths `nvd.h` does not state, KFD's bitfield structs in
//! `kfd_pm4_headers_ai.h`.
//!
//! `nvd.h` gives each field's position as a macro `X(v) ((v) << n)`; a
//! field's width runs to the next field's position unless KFD's struct
//! declares it. Dword indices count from the header (dword 0).
//!
//! One place the two headers disagree: QUERY_STATUS's engine select sits
//! at bit 25 in `nvd.h` (`PACKET3_QUERY_STATUS_ENG_SEL`) and at bit 28 in
//! `kfd_pm4_headers_ai.h` (`bitfields3b.engine_sel`, after a 26-bit
//! doorbell offset). The model follows `nvd.h`: it is the header of the
//! gfx11/gfx12 KIQ packets (`gfx11_kiq_query_status()` builds the packet
//! with it and is what runs against these parts), while
//! `kfd_pm4_headers_ai.h` is KFD's gfx9 ("AI") HWS header. For a compute
//! queue (engine 0) both encode the same dword. [`QUERY_ENG_SEL_KFD`]
//! keeps KFD's position as a fact so the disagreement stays on record.

use super::Bits;
use barebell_facts::Fact;

/// `PACKET_TYPE3`.
pub const PACKET_TYPE3: u32 = 3;
/// Type-3 header: `CP_PACKET_GET_TYPE`, `CP_PACKET_GET_COUNT`,
/// `CP_PACKET3_GET_OPCODE`. `count` is the body length in dwords minus 1.
pub const HEADER_TYPE: Bits = Bits::new(30, 2);
pub const HEADER_COUNT: Bits = Bits::new(16, 14);
pub const HEADER_OPCODE: Bits = Bits::new(8, 8);

/// Opcodes the KIQ model executes, and those a compute queue's CP model
/// knows by name (`nvd.h`): the packets tinygrad's `AMDComputeQueue`
/// and Linux's compute rings emit.
pub mod opcode {
    pub const NOP: u32 = 0x10;
    pub const CLEAR_STATE: u32 = 0x12;
    pub const COND_EXEC: u32 = 0x22;
    pub const CONTEXT_CONTROL: u32 = 0x28;
    pub const PREAMBLE_CNTL: u32 = 0x4A;
    pub const SET_CONTEXT_REG: u32 = 0x69;
    pub const DISPATCH_DIRECT: u32 = 0x15;
    pub const DISPATCH_INDIRECT: u32 = 0x16;
    pub const ATOMIC_MEM: u32 = 0x1E;
    pub const PRED_EXEC: u32 = 0x23;
    pub const WAIT_REG_MEM: u32 = 0x3C;
    pub const INDIRECT_BUFFER: u32 = 0x3F;
    pub const COPY_DATA: u32 = 0x40;
    pub const EVENT_WRITE: u32 = 0x46;
    pub const RELEASE_MEM: u32 = 0x49;
    pub const ACQUIRE_MEM: u32 = 0x58;
    pub const SET_SH_REG: u32 = 0x76;
    pub const SET_UCONFIG_REG: u32 = 0x79;
    pub const WRITE_DATA: u32 = 0x37;
    pub const SET_RESOURCES: u32 = 0xA0;
    pub const MAP_QUEUES: u32 = 0xA2;
    pub const UNMAP_QUEUES: u32 = 0xA3;
    pub const QUERY_STATUS: u32 = 0xA4;
    pub const INVALIDATE_TLBS: u32 = 0x98;
}

/// `PACKET3_INVALIDATE_TLBS`'s one body dword (`nvd.h`, `soc15d.h`:
/// `DST_SEL` bits 3:0, `ALL_HUB` bit 4, `PASID` bits 20:5, `FLUSH_TYPE`
/// bits 31:29), as `gfx_v9_4_3_kiq_invalidate_tlbs()` writes it.
pub mod invalidate_tlbs {
    use crate::Bits;
    pub const DST_SEL: Bits = Bits::new(0, 4);
    pub const ALL_HUB: Bits = Bits::new(4, 1);
    pub const PASID: Bits = Bits::new(5, 16);
    pub const FLUSH_TYPE: Bits = Bits::new(29, 3);
    /// `PACKET3_INVALIDATE_TLBS_DST_SEL(1)`, the only one Linux sends.
    pub const DST_SEL_LINUX: u32 = 1;
}

/// What a graphics ring carries beyond the compute packets
/// (`gfx_v11_0_cp_gfx_start()`, `gfx_v11_0_ring_emit_init_cond_exec()`,
/// `gfx_v11_0_ring_emit_ib_gfx()`).
pub mod graphics {
    use super::Bits;
    /// `SET_CONTEXT_REG` offsets are from this dword; the window ends
    /// before `_END`.
    pub const SET_CONTEXT_REG_START: u32 = 0xa000;
    pub const SET_CONTEXT_REG_END: u32 = 0xa400;
    /// `PREAMBLE_CNTL`'s one body dword.
    pub const PREAMBLE_BEGIN_CLEAR_STATE: u32 = 2 << 28;
    pub const PREAMBLE_END_CLEAR_STATE: u32 = 3 << 28;
    /// `INDIRECT_BUFFER` dword 3: the VMID the IB runs in, bits 27:24
    /// (`control |= ib->length_dw | (vmid << 24)` in
    /// `gfx_v11_0_ring_emit_ib_gfx()` and `_compute()`; no header names
    /// the field).
    pub const IB_VMID: Bits = Bits::new(24, 4);
    /// `COND_EXEC`: dwords 1/2 the address of the condition, 3 zero,
    /// 4 the dwords after the packet it discards when the condition is 0
    /// ("discard following DWs if *cond_exec_gpu_addr==0").
    pub const COND_EXEC_DWORDS: usize = 5;
}

/// SET_RESOURCES (8 dwords): dword 1 control, 2/3 queue mask, 4/5 GWS
/// mask, 6 OAC mask, 7 GDS heap.
pub mod set_resources {
    use super::Bits;
    pub const VMID_MASK: Bits = Bits::new(0, 16);
    pub const UNMAP_LATENCY: Bits = Bits::new(16, 8);
    pub const QUEUE_TYPE: Bits = Bits::new(29, 3);
    pub const DW_QUEUE_MASK_LO: usize = 2;
    pub const DW_QUEUE_MASK_HI: usize = 3;
    pub const DWORDS: usize = 8;
}

/// MAP_QUEUES (7 dwords): dword 1 control, 2 doorbell, 3/4 MQD, 5/6 wptr.
pub mod map_queues {
    use super::Bits;
    pub const QUEUE_SEL: Bits = Bits::new(4, 2);
    /// VMIDs are four bits (`CP_HQD_VMID__VMID_MASK`); `nvd.h` leaves
    /// bits 12 free before `QUEUE`.
    pub const VMID: Bits = Bits::new(8, 4);
    pub const QUEUE: Bits = Bits::new(13, 3);
    pub const PIPE: Bits = Bits::new(16, 2);
    pub const ME: Bits = Bits::new(18, 3);
    pub const QUEUE_TYPE: Bits = Bits::new(21, 3);
    pub const ALLOC_FORMAT: Bits = Bits::new(24, 2);
    pub const ENGINE_SEL: Bits = Bits::new(26, 3);
    pub const NUM_QUEUES: Bits = Bits::new(29, 3);
    pub const CHECK_DISABLE: Bits = Bits::new(1, 1);
    pub const DOORBELL_OFFSET: Bits = Bits::new(2, 26);
    pub const DW_MQD_LO: usize = 3;
    pub const DW_WPTR_LO: usize = 5;
    pub const DWORDS: usize = 7;
    /// `engine_sel` values `gfx11_kiq_map_queues()` uses: compute 0, gfx
    /// 4, MES 5.
    pub const ENGINE_COMPUTE: u32 = 0;
    pub const ENGINE_MES: u32 = 5;
}

/// UNMAP_QUEUES (6 dwords): dword 1 control, 2..5 doorbells (or, for
/// PREEMPT_QUEUES_NO_UNMAP, dword 3/4 the trailing fence address and 5
/// its value).
pub mod unmap_queues {
    use super::Bits;
    pub const ACTION: Bits = Bits::new(0, 2);
    pub const QUEUE_SEL: Bits = Bits::new(4, 2);
    pub const ENGINE_SEL: Bits = Bits::new(26, 3);
    pub const NUM_QUEUES: Bits = Bits::new(29, 3);
    pub const DOORBELL_OFFSET0: Bits = Bits::new(2, 26);
    pub const DWORDS: usize = 6;
    /// `enum amdgpu_unmap_queues_action` (the `nvd.h` comment lists the
    /// same four).
    pub const PREEMPT_QUEUES: u32 = 0;
    pub const RESET_QUEUES: u32 = 1;
    pub const DISABLE_PROCESS_QUEUES: u32 = 2;
    pub const PREEMPT_QUEUES_NO_UNMAP: u32 = 3;
}

/// QUERY_STATUS (7 dwords): dword 1 control, 2 target, 3/4 address, 5/6
/// data.
pub mod query_status {
    use super::Bits;
    pub const CONTEXT_ID: Bits = Bits::new(0, 28);
    pub const INTERRUPT_SEL: Bits = Bits::new(28, 2);
    pub const COMMAND: Bits = Bits::new(30, 2);
    /// `nvd.h`: offset from bit 2 up to ENG_SEL at bit 25.
    pub const DOORBELL_OFFSET: Bits = Bits::new(2, 23);
    pub const ENG_SEL: Bits = Bits::new(25, 3);
    pub const DWORDS: usize = 7;
    /// `command__mes_query_status__fence_only_immediate` and
    /// `…_fence_only_after_write_ack`.
    pub const FENCE_ONLY_IMMEDIATE: u32 = 1;
    pub const FENCE_ONLY_AFTER_WRITE_ACK: u32 = 2;
}

/// The one-dword filler Linux's compute rings pad with: `.nop =
/// PACKET3(PACKET3_NOP, 0x3FFF)` (`gfx_v11_0_ring_funcs_compute`,
/// `gfx_v12_0_ring_funcs_compute`), written once per padding dword by
/// `amdgpu_ring_insert_nop()`. Its count field (0x3FFF) does not give a
/// body length: the CP consumes it as one dword.
pub const NOP_FILLER: u32 = 0xFFFF_1000;

/// PM4 opcodes named but not decoded (`nvd.h`).
pub const NAMED_ONLY: &[(u32, &str)] = &[
    (0x10, "NOP"),
    (0x33, "INDIRECT_BUFFER_CNST"),
    (0x3C, "WAIT_REG_MEM"),
    (0x3F, "INDIRECT_BUFFER"),
    (0x40, "COPY_DATA"),
    (0x46, "EVENT_WRITE"),
    (0x49, "RELEASE_MEM"),
    (0x50, "DMA_DATA"),
    (0x58, "ACQUIRE_MEM"),
    (0x76, "SET_SH_REG"),
    (0x79, "SET_UCONFIG_REG"),
    (0xA5, "RUN_LIST"),
];

/// The `nvd.h` values of [`NAMED_ONLY`].
pub const NAMED_ONLY_FACTS: &[Fact] = &[
    Fact::constant("nvd.h", "PACKET3_NOP", 0x10),
    Fact::constant("nvd.h", "PACKET3_INDIRECT_BUFFER_CNST", 0x33),
    Fact::constant("nvd.h", "PACKET3_WAIT_REG_MEM", 0x3C),
    Fact::constant("nvd.h", "PACKET3_INDIRECT_BUFFER", 0x3F),
    Fact::constant("nvd.h", "PACKET3_COPY_DATA", 0x40),
    Fact::constant("nvd.h", "PACKET3_EVENT_WRITE", 0x46),
    Fact::constant("nvd.h", "PACKET3_RELEASE_MEM", 0x49),
    Fact::constant("nvd.h", "PACKET3_DMA_DATA", 0x50),
    Fact::constant("nvd.h", "PACKET3_ACQUIRE_MEM", 0x58),
    Fact::constant("nvd.h", "PACKET3_SET_SH_REG", 0x76),
    Fact::constant("nvd.h", "PACKET3_SET_UCONFIG_REG", 0x79),
    Fact::constant("nvd.h", "PACKET3_RUN_LIST", 0xA5),
];

/// The name `nvd.h` gives a type-3 opcode the model knows (for errors).
pub fn opcode_name(op: u32) -> &'static str {
    use opcode::*;
    match op {
        NOP => "NOP",
        DISPATCH_DIRECT => "DISPATCH_DIRECT",
        DISPATCH_INDIRECT => "DISPATCH_INDIRECT",
        ATOMIC_MEM => "ATOMIC_MEM",
        PRED_EXEC => "PRED_EXEC",
        WAIT_REG_MEM => "WAIT_REG_MEM",
        INDIRECT_BUFFER => "INDIRECT_BUFFER",
        COPY_DATA => "COPY_DATA",
        EVENT_WRITE => "EVENT_WRITE",
        RELEASE_MEM => "RELEASE_MEM",
        ACQUIRE_MEM => "ACQUIRE_MEM",
        SET_SH_REG => "SET_SH_REG",
        SET_UCONFIG_REG => "SET_UCONFIG_REG",
        WRITE_DATA => "WRITE_DATA",
        SET_RESOURCES => "SET_RESOURCES",
        MAP_QUEUES => "MAP_QUEUES",
        UNMAP_QUEUES => "UNMAP_QUEUES",
        QUERY_STATUS => "QUERY_STATUS",
        CLEAR_STATE => "CLEAR_STATE",
        COND_EXEC => "COND_EXEC",
        CONTEXT_CONTROL => "CONTEXT_CONTROL",
        PREAMBLE_CNTL => "PREAMBLE_CNTL",
        SET_CONTEXT_REG => "SET_CONTEXT_REG",
        _ => NAMED_ONLY
            .iter()
            .find(|(o, _)| *o == op)
            .map_or("an opcode the model has no name for", |(_, n)| *n),
    }
}

/// KFD's position of QUERY_STATUS's engine select (not used to decode;
/// see the module docs).
pub const QUERY_ENG_SEL_KFD: Bits = Bits::new(28, 3);

/// WRITE_DATA: dword 1 control, 2/3 address, 4.. data.
pub mod write_data {
    use super::Bits;
    pub const DST_SEL: Bits = Bits::new(8, 4);
    pub const WR_CONFIRM: Bits = Bits::new(20, 1);
    /// `WR_ONE_ADDR`: every data dword goes to the same address.
    pub const WR_ONE_ADDR: Bits = Bits::new(16, 1);
    /// `dst_sel` 5: memory (async, direct).
    pub const DST_MEMORY: u32 = 5;
    /// `dst_sel` 0: a memory-mapped register, the address a dword offset
    /// (`nvd.h`'s `WRITE_DATA_DST_SEL` comment: "0 - register"; the KIQ
    /// ring test in `gfx_v11_0_ring_test_ring()` writes `SCRATCH_REG0`
    /// so).
    pub const DST_REGISTER: u32 = 0;
}

const N: &str = "nvd.h";
const K: &str = "kfd_pm4_headers_ai.h";

/// `nvd.h` gives positions: `X(1)` is the field's lowest bit.
const fn at(expr: &'static str, b: Bits) -> Fact {
    Fact::constant(N, expr, 1u64 << b.shift)
}

/// `kfd_pm4_headers_ai.h` gives widths: a field set to all ones.
const fn kfd(expr: &'static str, b: Bits) -> Fact {
    Fact::constant(K, expr, b.mask() as u64)
}

pub const FACTS: &[Fact] = &[
    Fact::constant(N, "PACKET_TYPE3", PACKET_TYPE3 as u64),
    Fact::constant(
        N,
        "(unsigned)PACKET3(0, 0)",
        (PACKET_TYPE3 << HEADER_TYPE.shift) as u64,
    ),
    Fact::constant(
        N,
        "(unsigned)PACKET3(0xFF, 0)",
        HEADER_OPCODE.mask() as u64 | 3 << 30,
    ),
    Fact::constant(
        N,
        "(unsigned)PACKET3(0, 0x3FFF)",
        HEADER_COUNT.mask() as u64 | 3 << 30,
    ),
    Fact::constant(N, "PACKET3_WRITE_DATA", opcode::WRITE_DATA as u64),
    Fact::constant(N, "PACKET3_NOP", opcode::NOP as u64),
    Fact::constant(N, "PACKET3_INVALIDATE_TLBS", opcode::INVALIDATE_TLBS as u64),
    Fact::constant(
        N,
        "PACKET3_INVALIDATE_TLBS_ALL_HUB(1)",
        invalidate_tlbs::ALL_HUB.mask() as u64,
    ),
    Fact::constant(
        N,
        "PACKET3_INVALIDATE_TLBS_PASID(0xFFFF)",
        invalidate_tlbs::PASID.mask() as u64,
    ),
    // The flush type is gfx9's field (`gfx_v9_0_kiq_invalidate_tlbs()`):
    // `soc15d.h` defines it, `nvd.h` does not.
    Fact::constant(
        "soc15d.h",
        "PACKET3_INVALIDATE_TLBS_FLUSH_TYPE(7u)",
        invalidate_tlbs::FLUSH_TYPE.mask() as u64,
    ),
    Fact::constant(N, "PACKET3_DISPATCH_DIRECT", opcode::DISPATCH_DIRECT as u64),
    Fact::constant(
        N,
        "PACKET3_DISPATCH_INDIRECT",
        opcode::DISPATCH_INDIRECT as u64,
    ),
    Fact::constant(N, "PACKET3_ATOMIC_MEM", opcode::ATOMIC_MEM as u64),
    Fact::constant(N, "PACKET3_PRED_EXEC", opcode::PRED_EXEC as u64),
    Fact::constant(N, "PACKET3_CLEAR_STATE", opcode::CLEAR_STATE as u64),
    Fact::constant(N, "PACKET3_COND_EXEC", opcode::COND_EXEC as u64),
    Fact::constant(N, "PACKET3_CONTEXT_CONTROL", opcode::CONTEXT_CONTROL as u64),
    Fact::constant(N, "PACKET3_PREAMBLE_CNTL", opcode::PREAMBLE_CNTL as u64),
    Fact::constant(N, "PACKET3_SET_CONTEXT_REG", opcode::SET_CONTEXT_REG as u64),
    Fact::constant(
        N,
        "PACKET3_SET_CONTEXT_REG_START",
        graphics::SET_CONTEXT_REG_START as u64,
    ),
    Fact::constant(
        N,
        "PACKET3_SET_CONTEXT_REG_END",
        graphics::SET_CONTEXT_REG_END as u64,
    ),
    Fact::constant(
        N,
        "PACKET3_PREAMBLE_BEGIN_CLEAR_STATE",
        graphics::PREAMBLE_BEGIN_CLEAR_STATE as u64,
    ),
    Fact::constant(
        N,
        "PACKET3_PREAMBLE_END_CLEAR_STATE",
        graphics::PREAMBLE_END_CLEAR_STATE as u64,
    ),
    Fact::constant(N, "PACKET3_WAIT_REG_MEM", opcode::WAIT_REG_MEM as u64),
    Fact::constant(N, "PACKET3_INDIRECT_BUFFER", opcode::INDIRECT_BUFFER as u64),
    Fact::constant(N, "PACKET3_COPY_DATA", opcode::COPY_DATA as u64),
    Fact::constant(N, "PACKET3_EVENT_WRITE", opcode::EVENT_WRITE as u64),
    Fact::constant(N, "PACKET3_RELEASE_MEM", opcode::RELEASE_MEM as u64),
    Fact::constant(N, "PACKET3_ACQUIRE_MEM", opcode::ACQUIRE_MEM as u64),
    Fact::constant(N, "PACKET3_SET_SH_REG", opcode::SET_SH_REG as u64),
    Fact::constant(N, "PACKET3_SET_UCONFIG_REG", opcode::SET_UCONFIG_REG as u64),
    Fact::constant(
        N,
        "(unsigned)PACKET3(PACKET3_NOP, 0x3FFF)",
        NOP_FILLER as u64,
    ),
    Fact::constant(N, "PACKET3_SET_RESOURCES", opcode::SET_RESOURCES as u64),
    Fact::constant(N, "PACKET3_MAP_QUEUES", opcode::MAP_QUEUES as u64),
    Fact::constant(N, "PACKET3_UNMAP_QUEUES", opcode::UNMAP_QUEUES as u64),
    Fact::constant(N, "PACKET3_QUERY_STATUS", opcode::QUERY_STATUS as u64),
    at(
        "PACKET3_SET_RESOURCES_VMID_MASK(1)",
        set_resources::VMID_MASK,
    ),
    at(
        "PACKET3_SET_RESOURCES_UNMAP_LATENTY(1)",
        set_resources::UNMAP_LATENCY,
    ),
    at(
        "PACKET3_SET_RESOURCES_QUEUE_TYPE(1)",
        set_resources::QUEUE_TYPE,
    ),
    at("PACKET3_MAP_QUEUES_QUEUE_SEL(1)", map_queues::QUEUE_SEL),
    at("PACKET3_MAP_QUEUES_VMID(1)", map_queues::VMID),
    at("PACKET3_MAP_QUEUES_QUEUE(1)", map_queues::QUEUE),
    at("PACKET3_MAP_QUEUES_PIPE(1)", map_queues::PIPE),
    at("PACKET3_MAP_QUEUES_ME(1)", map_queues::ME),
    at("PACKET3_MAP_QUEUES_QUEUE_TYPE(1)", map_queues::QUEUE_TYPE),
    at(
        "PACKET3_MAP_QUEUES_ALLOC_FORMAT(1)",
        map_queues::ALLOC_FORMAT,
    ),
    at("PACKET3_MAP_QUEUES_ENGINE_SEL(1)", map_queues::ENGINE_SEL),
    at("PACKET3_MAP_QUEUES_NUM_QUEUES(1)", map_queues::NUM_QUEUES),
    at(
        "PACKET3_MAP_QUEUES_CHECK_DISABLE(1)",
        map_queues::CHECK_DISABLE,
    ),
    at(
        "PACKET3_MAP_QUEUES_DOORBELL_OFFSET(1)",
        map_queues::DOORBELL_OFFSET,
    ),
    at("PACKET3_UNMAP_QUEUES_ACTION(1)", unmap_queues::ACTION),
    at("PACKET3_UNMAP_QUEUES_QUEUE_SEL(1)", unmap_queues::QUEUE_SEL),
    at(
        "PACKET3_UNMAP_QUEUES_ENGINE_SEL(1)",
        unmap_queues::ENGINE_SEL,
    ),
    at(
        "PACKET3_UNMAP_QUEUES_NUM_QUEUES(1)",
        unmap_queues::NUM_QUEUES,
    ),
    at(
        "PACKET3_UNMAP_QUEUES_DOORBELL_OFFSET0(1)",
        unmap_queues::DOORBELL_OFFSET0,
    ),
    at(
        "PACKET3_QUERY_STATUS_CONTEXT_ID(1)",
        query_status::CONTEXT_ID,
    ),
    at(
        "PACKET3_QUERY_STATUS_INTERRUPT_SEL(1)",
        query_status::INTERRUPT_SEL,
    ),
    at("PACKET3_QUERY_STATUS_COMMAND(1)", query_status::COMMAND),
    at(
        "PACKET3_QUERY_STATUS_DOORBELL_OFFSET(1)",
        query_status::DOORBELL_OFFSET,
    ),
    at("PACKET3_QUERY_STATUS_ENG_SEL(1)", query_status::ENG_SEL),
    at("WRITE_DATA_DST_SEL(1)", write_data::DST_SEL),
    Fact::constant(N, "WR_CONFIRM", write_data::WR_CONFIRM.mask() as u64),
    Fact::constant(N, "WR_ONE_ADDR", write_data::WR_ONE_ADDR.mask() as u64),
    // Widths and enumerators from KFD's structs.
    kfd(
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.type = ~0u; h_.u32All; })",
        HEADER_TYPE,
    ),
    kfd(
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.count = ~0u; h_.u32All; })",
        HEADER_COUNT,
    ),
    kfd(
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.opcode = ~0u; h_.u32All; })",
        HEADER_OPCODE,
    ),
    kfd(
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.vmid_mask = ~0u; p_.ordinal2; })",
        set_resources::VMID_MASK,
    ),
    kfd(
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.unmap_latency = ~0u; p_.ordinal2; })",
        set_resources::UNMAP_LATENCY,
    ),
    kfd(
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.queue_type = ~0u; p_.ordinal2; })",
        set_resources::QUEUE_TYPE,
    ),
    Fact::constant(
        K,
        "offsetof(struct pm4_mes_set_resources, queue_mask_lo) / 4",
        set_resources::DW_QUEUE_MASK_LO as u64,
    ),
    Fact::constant(
        K,
        "offsetof(struct pm4_mes_set_resources, queue_mask_hi) / 4",
        set_resources::DW_QUEUE_MASK_HI as u64,
    ),
    Fact::constant(
        K,
        "sizeof(struct pm4_mes_set_resources) / 4",
        set_resources::DWORDS as u64,
    ),
    kfd(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.queue_sel = ~0u; p_.ordinal2; })",
        map_queues::QUEUE_SEL,
    ),
    kfd(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.queue_type = ~0u; p_.ordinal2; })",
        map_queues::QUEUE_TYPE,
    ),
    kfd(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.engine_sel = ~0u; p_.ordinal2; })",
        map_queues::ENGINE_SEL,
    ),
    kfd(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.num_queues = ~0u; p_.ordinal2; })",
        map_queues::NUM_QUEUES,
    ),
    kfd(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields3.check_disable = ~0u; p_.ordinal3; })",
        map_queues::CHECK_DISABLE,
    ),
    kfd(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields3.doorbell_offset = ~0u; p_.ordinal3; })",
        map_queues::DOORBELL_OFFSET,
    ),
    Fact::constant(
        K,
        "offsetof(struct pm4_mes_map_queues, mqd_addr_lo) / 4",
        map_queues::DW_MQD_LO as u64,
    ),
    Fact::constant(
        K,
        "offsetof(struct pm4_mes_map_queues, wptr_addr_lo) / 4",
        map_queues::DW_WPTR_LO as u64,
    ),
    Fact::constant(
        K,
        "sizeof(struct pm4_mes_map_queues) / 4",
        map_queues::DWORDS as u64,
    ),
    Fact::constant(
        K,
        "engine_sel__mes_map_queues__compute_vi",
        map_queues::ENGINE_COMPUTE as u64,
    ),
    kfd(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.action = ~0u; p_.ordinal2; })",
        unmap_queues::ACTION,
    ),
    kfd(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.queue_sel = ~0u; p_.ordinal2; })",
        unmap_queues::QUEUE_SEL,
    ),
    kfd(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.engine_sel = ~0u; p_.ordinal2; })",
        unmap_queues::ENGINE_SEL,
    ),
    kfd(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.num_queues = ~0u; p_.ordinal2; })",
        unmap_queues::NUM_QUEUES,
    ),
    kfd(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields3b.doorbell_offset0 = ~0u; p_.ordinal3; })",
        unmap_queues::DOORBELL_OFFSET0,
    ),
    Fact::constant(
        K,
        "sizeof(struct pm4_mes_unmap_queues) / 4",
        unmap_queues::DWORDS as u64,
    ),
    Fact::constant(
        K,
        "action__mes_unmap_queues__preempt_queues",
        unmap_queues::PREEMPT_QUEUES as u64,
    ),
    Fact::constant(
        K,
        "action__mes_unmap_queues__reset_queues",
        unmap_queues::RESET_QUEUES as u64,
    ),
    Fact::constant(
        K,
        "action__mes_unmap_queues__disable_process_queues",
        unmap_queues::DISABLE_PROCESS_QUEUES as u64,
    ),
    kfd(
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.context_id = ~0u; p_.ordinal2; })",
        query_status::CONTEXT_ID,
    ),
    kfd(
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.interrupt_sel = ~0u; p_.ordinal2; })",
        query_status::INTERRUPT_SEL,
    ),
    kfd(
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.command = ~0u; p_.ordinal2; })",
        query_status::COMMAND,
    ),
    kfd(
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields3b.engine_sel = ~0u; p_.ordinal3; })",
        QUERY_ENG_SEL_KFD,
    ),
    Fact::constant(
        K,
        "sizeof(struct pm4_mes_query_status) / 4",
        query_status::DWORDS as u64,
    ),
    Fact::constant(
        K,
        "command__mes_query_status__fence_only_immediate",
        query_status::FENCE_ONLY_IMMEDIATE as u64,
    ),
    Fact::constant(
        K,
        "command__mes_query_status__fence_only_after_write_ack",
        query_status::FENCE_ONLY_AFTER_WRITE_ACK as u64,
    ),
    Fact::constant(
        K,
        "dst_sel___write_data__memory",
        write_data::DST_MEMORY as u64,
    ),
    kfd(
        "({ struct pm4_mec_write_data_mmio p_ = {0}; p_.bitfields2.dst_sel = ~0u; p_.ordinal2; })",
        write_data::DST_SEL,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A MAP_QUEUES control dword assembled by hand from the `nvd.h`
    /// shifts: queue 2, pipe 1, ME 1, one queue.
    #[test]
    fn map_queues_fields() {
        let w = 2 << 13 | 1 << 16 | 1 << 18 | 1 << 29;
        assert_eq!(map_queues::QUEUE.get(w), 2);
        assert_eq!(map_queues::PIPE.get(w), 1);
        assert_eq!(map_queues::ME.get(w), 1);
        assert_eq!(map_queues::NUM_QUEUES.get(w), 1);
        assert_eq!(map_queues::ENGINE_SEL.get(w), 0);
        let h = 0xC005_A200u32;
        assert_eq!(HEADER_TYPE.get(h), 3);
        assert_eq!(HEADER_OPCODE.get(h), 0xA2);
        assert_eq!(HEADER_COUNT.get(h), 5);
    }
}

/// What a PM4 compute queue carries for a dispatch, as tinygrad's
/// `AMDComputeQueue` (`ops_amd.py`) and Linux's `gfx_v11_0.c` emit it:
/// positions from `nvd.h`, widths from KFD's `pm4_mec_release_mem`
/// (`kfd_pm4_headers_ai.h`) where `nvd.h` gives none, register fields from
/// `gc_11_0_0_sh_mask.h`. Dword indices count from the header.
pub mod compute {
    use super::Bits;

    /// WAIT_REG_MEM: 1 control, 2/3 poll address (memory) or the
    /// register pair (written, polled), 4 reference, 5 mask, 6 poll
    /// interval.
    pub mod wait_reg_mem {
        use super::Bits;
        /// 0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 > (the `nvd.h` comment).
        pub const FUNCTION: Bits = Bits::new(0, 3);
        /// 0 register, 1 memory.
        pub const MEM_SPACE: Bits = Bits::new(4, 2);
        /// 0 wait, 1 write the first register, then wait on the second
        /// (`wr_wait_wr_reg`).
        pub const OPERATION: Bits = Bits::new(6, 2);
        /// 0 ME, 1 PFP.
        pub const ENGINE: Bits = Bits::new(8, 2);
        pub const DWORDS: usize = 7;
    }

    /// RELEASE_MEM: 1 event (type, index, cache actions), 2 data/int/dst
    /// selects, 3/4 address, 5/6 data, 7 context id.
    pub mod release_mem {
        use super::Bits;
        pub const EVENT_TYPE: Bits = Bits::new(0, 6);
        pub const EVENT_INDEX: Bits = Bits::new(8, 4);
        pub const DST_SEL: Bits = Bits::new(16, 2);
        pub const INT_SEL: Bits = Bits::new(24, 3);
        pub const DATA_SEL: Bits = Bits::new(29, 3);
        /// `event_index__mec_release_mem__end_of_pipe`.
        pub const INDEX_END_OF_PIPE: u32 = 5;
        /// `data_sel`: 0 discard, 1 low 32 bits, 2 64 bits, 3 the GPU
        /// clock counter.
        pub const DATA_NONE: u32 = 0;
        pub const DATA_32: u32 = 1;
        pub const DATA_64: u32 = 2;
        pub const DATA_GPU_CLOCK: u32 = 3;
        pub const DWORDS: usize = 8;
    }

    /// EVENT_WRITE: 1 event type and index.
    pub mod event_write {
        use super::Bits;
        pub const EVENT_TYPE: Bits = Bits::new(0, 6);
        pub const EVENT_INDEX: Bits = Bits::new(8, 4);
    }

    /// `soc21_enum.h` event types.
    pub const CS_PARTIAL_FLUSH: u32 = 0x07;
    pub const CACHE_FLUSH_AND_INV_TS_EVENT: u32 = 0x14;

    /// ACQUIRE_MEM (gfx10+ form): 1 COHER_CNTL, 2/3 size, 4/5 base, 6
    /// poll interval, 7 GCR_CNTL.
    pub const ACQUIRE_MEM_DWORDS: usize = 8;
    /// ACQUIRE_MEM (gfx9 form, no GCR_CNTL): 1 CP_COHER_CNTL, 2/3 size,
    /// 4/5 base, 6 poll interval (`gfx_v9_4_3_emit_mem_sync()`:
    /// `PACKET3(PACKET3_ACQUIRE_MEM, 5)`).
    pub const ACQUIRE_MEM_DWORDS_GFX9: usize = 7;
    /// DISPATCH_DIRECT: 1-3 thread-group counts x/y/z, 4
    /// `COMPUTE_DISPATCH_INITIATOR`.
    pub const DISPATCH_DIRECT_DWORDS: usize = 5;

    /// SET_SH_REG: 1 register offset from `PACKET3_SET_SH_REG_START`,
    /// then the values of consecutive registers.
    pub const SET_SH_REG_START: u32 = 0x2C00;
    pub const SET_SH_REG_END: u32 = 0x3000;
    /// SET_UCONFIG_REG: 1 register offset from
    /// `PACKET3_SET_UCONFIG_REG_START` (an absolute dword offset), then
    /// the values of consecutive registers (`gfx_v11_0_ring_test_ring()`
    /// writes `SCRATCH_REG0` so).
    pub const SET_UCONFIG_REG_START: u32 = 0xC000;

    /// PRED_EXEC: dword 1 holds the XCCs the next dwords are for (bits
    /// 31:24) and how many dwords follow (the low bits). No Linux header
    /// gives its fields; this is how tinygrad's `pred_exec()` builds it
    /// (`xcc_mask << 24`, then the count of the packets inside ORed in),
    /// read here as the low 24 bits (*model reading*).
    pub mod pred_exec {
        use super::Bits;
        pub const COUNT: Bits = Bits::new(0, 24);
        pub const DEVICE_SELECT: Bits = Bits::new(24, 8);
    }

    /// INDIRECT_BUFFER: 1/2 address (dword aligned), 3 size in dwords
    /// and flags.
    pub mod indirect_buffer {
        use super::Bits;
        pub const SIZE: Bits = Bits::new(0, 20);
        pub const VALID: Bits = Bits::new(23, 1);
        pub const DWORDS: usize = 4;
    }

    /// `COMPUTE_DISPATCH_INITIATOR` fields.
    pub mod initiator {
        use super::Bits;
        pub const COMPUTE_SHADER_EN: Bits = Bits::new(0, 1);
        pub const FORCE_START_AT_000: Bits = Bits::new(2, 1);
        pub const USE_THREAD_DIMENSIONS: Bits = Bits::new(5, 1);
        pub const CS_W32_EN: Bits = Bits::new(15, 1);
    }

    /// `COMPUTE_PGM_RSRC2.LDS_SIZE` (units of 128 dwords on gfx11,
    /// tinygrad's `(group_segment_size + 511) // 512`).
    pub const RSRC2_LDS_SIZE: Bits = Bits::new(15, 9);
    /// `COMPUTE_TMPRING_SIZE.WAVESIZE` (256-byte units per wave on gfx11).
    pub const TMPRING_WAVESIZE: Bits = Bits::new(12, 15);
    /// `COMPUTE_NUM_THREAD_X.NUM_THREAD_FULL`.
    pub const NUM_THREAD_FULL: Bits = Bits::new(0, 16);
}

const KH: &str = "kfd_pm4_headers_ai.h";
const GC11: &str = "gc_11_0_0_sh_mask.h";
const S21: &str = "soc21_enum.h";

/// The positions, widths and values [`compute`] was written from.
pub const COMPUTE_FACTS: &[Fact] = {
    use compute::*;
    &[
        at("WAIT_REG_MEM_FUNCTION(1)", wait_reg_mem::FUNCTION),
        at("WAIT_REG_MEM_MEM_SPACE(1)", wait_reg_mem::MEM_SPACE),
        at("WAIT_REG_MEM_OPERATION(1)", wait_reg_mem::OPERATION),
        at("WAIT_REG_MEM_ENGINE(1)", wait_reg_mem::ENGINE),
        at("PACKET3_RELEASE_MEM_EVENT_TYPE(1)", release_mem::EVENT_TYPE),
        at(
            "PACKET3_RELEASE_MEM_EVENT_INDEX(1)",
            release_mem::EVENT_INDEX,
        ),
        at("PACKET3_RELEASE_MEM_DST_SEL(1)", release_mem::DST_SEL),
        at("PACKET3_RELEASE_MEM_INT_SEL(1)", release_mem::INT_SEL),
        at("PACKET3_RELEASE_MEM_DATA_SEL(1)", release_mem::DATA_SEL),
        Fact::constant(
            KH,
            "({ struct pm4_mec_release_mem p_ = {0}; p_.bitfields2.event_type = ~0u; p_.ordinal2; })",
            release_mem::EVENT_TYPE.mask() as u64,
        ),
        Fact::constant(
            KH,
            "({ struct pm4_mec_release_mem p_ = {0}; p_.bitfields2.event_index = ~0u; p_.ordinal2; })",
            release_mem::EVENT_INDEX.mask() as u64,
        ),
        Fact::constant(
            KH,
            "({ struct pm4_mec_release_mem p_ = {0}; p_.bitfields3.dst_sel = ~0u; p_.ordinal3; })",
            release_mem::DST_SEL.mask() as u64,
        ),
        Fact::constant(
            KH,
            "({ struct pm4_mec_release_mem p_ = {0}; p_.bitfields3.int_sel = ~0u; p_.ordinal3; })",
            release_mem::INT_SEL.mask() as u64,
        ),
        Fact::constant(
            KH,
            "({ struct pm4_mec_release_mem p_ = {0}; p_.bitfields3.data_sel = ~0u; p_.ordinal3; })",
            release_mem::DATA_SEL.mask() as u64,
        ),
        Fact::constant(
            KH,
            "event_index__mec_release_mem__end_of_pipe",
            release_mem::INDEX_END_OF_PIPE as u64,
        ),
        Fact::constant(
            KH,
            "data_sel__mec_release_mem__send_32_bit_low",
            release_mem::DATA_32 as u64,
        ),
        Fact::constant(
            KH,
            "data_sel__mec_release_mem__send_64_bit_data",
            release_mem::DATA_64 as u64,
        ),
        Fact::constant(
            KH,
            "data_sel__mec_release_mem__send_gpu_clock_counter",
            release_mem::DATA_GPU_CLOCK as u64,
        ),
        at("EVENT_TYPE(1)", event_write::EVENT_TYPE),
        at("EVENT_INDEX(1)", event_write::EVENT_INDEX),
        Fact::constant(S21, "CS_PARTIAL_FLUSH", CS_PARTIAL_FLUSH as u64),
        Fact::constant(
            S21,
            "CACHE_FLUSH_AND_INV_TS_EVENT",
            CACHE_FLUSH_AND_INV_TS_EVENT as u64,
        ),
        Fact::constant(N, "PACKET3_SET_SH_REG_START", SET_SH_REG_START as u64),
        Fact::constant(N, "PACKET3_SET_SH_REG_END", SET_SH_REG_END as u64),
        Fact::constant(
            N,
            "PACKET3_SET_UCONFIG_REG_START",
            SET_UCONFIG_REG_START as u64,
        ),
        Fact::constant(
            N,
            "INDIRECT_BUFFER_VALID",
            indirect_buffer::VALID.mask() as u64,
        ),
        Fact::constant(
            GC11,
            "COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN_MASK",
            initiator::COMPUTE_SHADER_EN.mask() as u64,
        ),
        Fact::constant(
            GC11,
            "COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000_MASK",
            initiator::FORCE_START_AT_000.mask() as u64,
        ),
        Fact::constant(
            GC11,
            "COMPUTE_DISPATCH_INITIATOR__USE_THREAD_DIMENSIONS_MASK",
            initiator::USE_THREAD_DIMENSIONS.mask() as u64,
        ),
        Fact::constant(
            GC11,
            "COMPUTE_DISPATCH_INITIATOR__CS_W32_EN_MASK",
            initiator::CS_W32_EN.mask() as u64,
        ),
        Fact::constant(
            GC11,
            "COMPUTE_PGM_RSRC2__LDS_SIZE_MASK",
            RSRC2_LDS_SIZE.mask() as u64,
        ),
        Fact::constant(
            GC11,
            "COMPUTE_TMPRING_SIZE__WAVESIZE_MASK",
            TMPRING_WAVESIZE.mask() as u64,
        ),
        Fact::constant(
            GC11,
            "COMPUTE_NUM_THREAD_X__NUM_THREAD_FULL_MASK",
            NUM_THREAD_FULL.mask() as u64,
        ),
    ]
};
