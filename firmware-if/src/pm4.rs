//! PM4 type-3 packets in their gfx11 encodings (`nvd.h`).
//!
//! The KIQ takes MAP_QUEUES/UNMAP_QUEUES/SET_RESOURCES/QUERY_STATUS to
//! manage hardware queues when MES is not used; compute and gfx rings
//! use RELEASE_MEM (end-of-pipe fence), WRITE_DATA, INDIRECT_BUFFER and
//! ACQUIRE_MEM (cache invalidation). Each encoder returns the packet as
//! dwords, header first, in the order and with the defaults of the
//! `gfx_v11_0.c` function it names.
//!
//! `nvd.h` gives each field's *position* (`X(v) ((v) << n)`) and every
//! one is a fact below. Widths run up to the next field's position; where
//! KFD's PM4 structs (`kfd_pm4_headers_ai.h`, the same KIQ packets as C
//! bitfields) declare a field, its full mask is checked against them too.
//! The few fields only `nvd.h` knows (VMID/QUEUE/PIPE/ME of MAP_QUEUES,
//! the gfx11 QUERY_STATUS engine select at bit 25) have unconfirmed widths.

use barebell_facts::Fact;
use bitfield_struct::bitfield;

/// Type-3 opcodes.
pub mod opcode {
    pub const WRITE_DATA: u8 = 0x37;
    pub const INDIRECT_BUFFER: u8 = 0x3F;
    pub const RELEASE_MEM: u8 = 0x49;
    pub const ACQUIRE_MEM: u8 = 0x58;
    pub const SET_RESOURCES: u8 = 0xA0;
    pub const MAP_QUEUES: u8 = 0xA2;
    pub const UNMAP_QUEUES: u8 = 0xA3;
    pub const QUERY_STATUS: u8 = 0xA4;
}

pub const PACKET_TYPE3: u32 = 3;

/// The type-3 header dword.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct Type3Header {
    #[bits(8)]
    __: u8,
    pub opcode: u8,
    /// Body length in dwords minus one.
    #[bits(14)]
    pub count: u16,
    #[bits(2)]
    pub packet_type: u8,
}

/// `PACKET3(op, n)`: `n` is the body length in dwords minus one.
pub const fn header(op: u8, body_dwords: usize) -> u32 {
    Type3Header::new()
        .with_packet_type(PACKET_TYPE3 as u8)
        .with_opcode(op)
        .with_count((body_dwords.wrapping_sub(1) & 0x3FFF) as u16)
        .into_bits()
}

/// `CACHE_FLUSH_AND_INV_TS_EVENT` (`navi10_enum.h`): the event the gfx11
/// fence waits for.
pub const CACHE_FLUSH_AND_INV_TS_EVENT: u8 = 0x14;

fn lo(x: u64) -> u32 {
    x as u32
}
fn hi(x: u64) -> u32 {
    (x >> 32) as u32
}

/// SET_RESOURCES dword 1.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct SetResourcesCntl {
    pub vmid_mask: u16,
    pub unmap_latency: u8,
    #[bits(5)]
    __: u8,
    #[bits(3)]
    pub queue_type: u8,
}

/// SET_RESOURCES: hand the KIQ the queues it may map (follows
/// `gfx11_kiq_set_resources()`: no VMIDs, unmap latency 0xa ≈ 1 s,
/// queue type 0 = KIQ, no GWS/OAC/GDS).
pub fn set_resources(queue_mask: u64) -> [u32; 8] {
    let cntl = SetResourcesCntl::new().with_unmap_latency(0xa);
    [
        header(opcode::SET_RESOURCES, 7),
        cntl.into_bits(),
        lo(queue_mask),
        hi(queue_mask),
        0,
        0,
        0,
        0,
    ]
}

/// MAP_QUEUES dword 1.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct MapQueuesCntl {
    #[bits(4)]
    __: u8,
    #[bits(2)]
    pub queue_sel: u8,
    #[bits(2)]
    __: u8,
    #[bits(4)]
    pub vmid: u8,
    #[bits(1)]
    __: u8,
    #[bits(3)]
    pub queue: u8,
    #[bits(2)]
    pub pipe: u8,
    #[bits(3)]
    pub me: u8,
    #[bits(3)]
    pub queue_type: u8,
    #[bits(2)]
    pub alloc_format: u8,
    #[bits(3)]
    pub engine_sel: u8,
    #[bits(3)]
    pub num_queues: u8,
}

/// MAP_QUEUES dword 2 (and the doorbell dwords of UNMAP/QUERY).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct DoorbellCntl {
    #[bits(1)]
    __: u8,
    pub check_disable: bool,
    #[bits(26)]
    pub doorbell_offset: u32,
    #[bits(4)]
    __: u8,
}

/// Which engine a queue belongs to, as `gfx11_kiq_map_queues()` picks
/// `me` and `engine_sel` for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueEngine {
    Compute,
    Gfx,
    Mes,
}

impl QueueEngine {
    /// `(me, engine_sel)`.
    pub const fn me_and_engine(self) -> (u8, u8) {
        match self {
            QueueEngine::Compute => (1, 0),
            QueueEngine::Gfx => (0, 4),
            QueueEngine::Mes => (2, 5),
        }
    }
}

/// MAP_QUEUES: map one queue whose MQD is at `mqd_addr` onto
/// pipe/queue slot (`gfx11_kiq_map_queues()`).
pub fn map_queues(
    engine: QueueEngine,
    pipe: u8,
    queue: u8,
    doorbell_offset: u32,
    mqd_addr: u64,
    wptr_addr: u64,
) -> [u32; 7] {
    let (me, eng) = engine.me_and_engine();
    let cntl = MapQueuesCntl::new()
        .with_queue(queue)
        .with_pipe(pipe)
        .with_me(me)
        .with_engine_sel(eng)
        .with_num_queues(1);
    [
        header(opcode::MAP_QUEUES, 6),
        cntl.into_bits(),
        DoorbellCntl::new()
            .with_doorbell_offset(doorbell_offset)
            .into_bits(),
        lo(mqd_addr),
        hi(mqd_addr),
        lo(wptr_addr),
        hi(wptr_addr),
    ]
}

/// UNMAP_QUEUES dword 1.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct UnmapQueuesCntl {
    #[bits(2)]
    pub action: u8,
    #[bits(2)]
    __: u8,
    #[bits(2)]
    pub queue_sel: u8,
    #[bits(20)]
    __: u32,
    #[bits(3)]
    pub engine_sel: u8,
    #[bits(3)]
    pub num_queues: u8,
}

/// `enum amdgpu_unmap_queues_action` (the packet's ACTION field).
pub mod unmap_action {
    pub const PREEMPT_QUEUES: u8 = 0;
    pub const RESET_QUEUES: u8 = 1;
    pub const DISABLE_PROCESS_QUEUES: u8 = 2;
    pub const PREEMPT_QUEUES_NO_UNMAP: u8 = 3;
}

/// UNMAP_QUEUES for the queue at `doorbell_offset`
/// (`gfx11_kiq_unmap_queues()`); only PREEMPT_QUEUES_NO_UNMAP carries a
/// fence address and value.
pub fn unmap_queues(action: u8, gfx: bool, doorbell_offset: u32, fence: (u64, u32)) -> [u32; 6] {
    let cntl = UnmapQueuesCntl::new()
        .with_action(action)
        .with_engine_sel(if gfx { 4 } else { 0 })
        .with_num_queues(1);
    let (a, s) = if action == unmap_action::PREEMPT_QUEUES_NO_UNMAP {
        fence
    } else {
        (0, 0)
    };
    [
        header(opcode::UNMAP_QUEUES, 5),
        cntl.into_bits(),
        DoorbellCntl::new()
            .with_doorbell_offset(doorbell_offset)
            .into_bits(),
        lo(a),
        hi(a),
        s,
    ]
}

/// QUERY_STATUS dword 1.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct QueryStatusCntl {
    #[bits(28)]
    pub context_id: u32,
    #[bits(2)]
    pub interrupt_sel: u8,
    #[bits(2)]
    pub command: u8,
}

/// QUERY_STATUS dword 2: doorbell and engine.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct QueryStatusTarget {
    #[bits(2)]
    __: u8,
    #[bits(23)]
    pub doorbell_offset: u32,
    #[bits(3)]
    pub eng_sel: u8,
    #[bits(4)]
    __: u8,
}

/// QUERY_STATUS: have the KIQ write `seq` to `addr` once the queue at
/// `doorbell_offset` is idle (`gfx11_kiq_query_status()`, command 2).
pub fn query_status(gfx: bool, doorbell_offset: u32, addr: u64, seq: u64) -> [u32; 7] {
    [
        header(opcode::QUERY_STATUS, 6),
        QueryStatusCntl::new().with_command(2).into_bits(),
        QueryStatusTarget::new()
            .with_doorbell_offset(doorbell_offset)
            .with_eng_sel(if gfx { 4 } else { 0 })
            .into_bits(),
        lo(addr),
        hi(addr),
        lo(seq),
        hi(seq),
    ]
}

/// RELEASE_MEM dword 1: the event and the cache actions on it.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct ReleaseMemEvent {
    #[bits(6)]
    pub event_type: u8,
    #[bits(2)]
    __: u8,
    #[bits(4)]
    pub event_index: u8,
    pub gcr_glm_wb: bool,
    pub gcr_glm_inv: bool,
    pub gcr_glv_inv: bool,
    pub gcr_gl1_inv: bool,
    pub gcr_gl2_us: bool,
    #[bits(2)]
    pub gcr_gl2_range: u8,
    pub gcr_gl2_discard: bool,
    pub gcr_gl2_inv: bool,
    pub gcr_gl2_wb: bool,
    pub gcr_seq: bool,
    #[bits(2)]
    __: u8,
    #[bits(2)]
    pub cache_policy: u8,
    #[bits(1)]
    __: u8,
    pub execute: bool,
    #[bits(3)]
    __: u8,
}

/// RELEASE_MEM dword 2: what to write, and whether to interrupt.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct ReleaseMemData {
    #[bits(16)]
    __: u16,
    #[bits(2)]
    pub dst_sel: u8,
    #[bits(6)]
    __: u8,
    #[bits(3)]
    pub int_sel: u8,
    #[bits(2)]
    __: u8,
    #[bits(3)]
    pub data_sel: u8,
}

/// RELEASE_MEM as the gfx11 end-of-pipe fence: flush/invalidate caches
/// after all prior work, then write `seq` (32 or 64 bits) to `addr` and
/// optionally raise an interrupt (`gfx_v11_0_ring_emit_fence()`;
/// `int_ctxid` is the last dword, 0 on kernel rings).
pub fn release_mem_fence(
    addr: u64,
    seq: u64,
    write64: bool,
    interrupt: bool,
    int_ctxid: u32,
) -> [u32; 8] {
    let event = ReleaseMemEvent::new()
        .with_gcr_seq(true)
        .with_gcr_gl2_wb(true)
        .with_gcr_glm_inv(true)
        .with_gcr_glm_wb(true)
        .with_cache_policy(3)
        .with_event_type(CACHE_FLUSH_AND_INV_TS_EVENT)
        .with_event_index(5);
    let data = ReleaseMemData::new()
        .with_data_sel(if write64 { 2 } else { 1 })
        .with_int_sel(if interrupt { 2 } else { 0 });
    [
        header(opcode::RELEASE_MEM, 7),
        event.into_bits(),
        data.into_bits(),
        lo(addr),
        hi(addr),
        lo(seq),
        hi(seq),
        int_ctxid,
    ]
}

/// WRITE_DATA dword 1.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct WriteDataCntl {
    #[bits(8)]
    __: u8,
    #[bits(4)]
    pub dst_sel: u8,
    #[bits(4)]
    __: u8,
    /// Write every data dword to the same address.
    pub wr_one_addr: bool,
    #[bits(3)]
    __: u8,
    pub wr_confirm: bool,
    #[bits(4)]
    __: u8,
    #[bits(2)]
    pub cache_policy: u8,
    #[bits(3)]
    __: u8,
    #[bits(2)]
    pub engine_sel: u8,
}

/// WRITE_DATA destinations used here (`dst_sel`).
pub mod write_dst {
    /// A register (dword offset in the address dword).
    pub const REGISTER: u8 = 0;
    /// Memory through the L2 (`gfx_v11_0_ring_emit_fence_kiq()` and
    /// friends use 5).
    pub const MEMORY: u8 = 5;
}

/// WRITE_DATA of one dword to `dst` (register offset or GPU address).
/// `gfx_v11_0_write_data_to_reg()` is `write_data(0, REGISTER, wc, reg, val)`.
pub fn write_data(engine_sel: u8, dst_sel: u8, confirm: bool, dst: u64, value: u32) -> [u32; 5] {
    let cntl = WriteDataCntl::new()
        .with_engine_sel(engine_sel)
        .with_dst_sel(dst_sel)
        .with_wr_confirm(confirm);
    [
        header(opcode::WRITE_DATA, 4),
        cntl.into_bits(),
        lo(dst),
        hi(dst),
        value,
    ]
}

/// INDIRECT_BUFFER dword 3.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct IbControl {
    #[bits(20)]
    pub ib_size: u32,
    #[bits(1)]
    __: u8,
    pub pre_enb: bool,
    #[bits(1)]
    __: u8,
    pub valid: bool,
    #[bits(4)]
    pub vmid: u8,
    #[bits(2)]
    pub cache_policy: u8,
    /// `INDIRECT_BUFFER_PRE_RESUME`; `gfx_v11_0_ring_emit_ib_compute()`
    /// sets this bit on MES queues so the IB inherits the MQD's VMID.
    pub pre_resume: bool,
    #[bits(1)]
    __: u8,
}

/// INDIRECT_BUFFER: run `length_dw` dwords at dword-aligned `addr` under
/// `vmid` (`gfx_v11_0_ring_emit_ib_compute()`, little-endian form).
pub fn indirect_buffer(addr: u64, length_dw: u32, vmid: u8, mes_queue: bool) -> [u32; 4] {
    let ctl = IbControl::new()
        .with_valid(true)
        .with_ib_size(length_dw)
        .with_vmid(vmid)
        .with_pre_resume(mes_queue);
    [
        header(opcode::INDIRECT_BUFFER, 3),
        lo(addr) & !3,
        hi(addr),
        ctl.into_bits(),
    ]
}

/// ACQUIRE_MEM's GCR_CNTL dword.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GcrCntl {
    #[bits(2)]
    pub gli_inv: u8,
    #[bits(2)]
    pub gl1_range: u8,
    pub glm_wb: bool,
    pub glm_inv: bool,
    pub glk_wb: bool,
    pub glk_inv: bool,
    pub glv_inv: bool,
    pub gl1_inv: bool,
    pub gl2_us: bool,
    #[bits(2)]
    pub gl2_range: u8,
    pub gl2_discard: bool,
    pub gl2_inv: bool,
    pub gl2_wb: bool,
    #[bits(2)]
    pub seq: u8,
    pub range_is_pa: bool,
    #[bits(13)]
    __: u16,
}

/// ACQUIRE_MEM over all memory with the cache actions in `gcr`
/// (`gfx_v11_0_emit_mem_sync()`).
pub fn acquire_mem(gcr: GcrCntl) -> [u32; 8] {
    [
        header(opcode::ACQUIRE_MEM, 7),
        0,
        0xffff_ffff,
        0x00ff_ffff,
        0,
        0,
        0x0000_000A,
        gcr.into_bits(),
    ]
}

/// The full invalidate/write-back `gfx_v11_0_emit_mem_sync()` uses.
pub const fn mem_sync_gcr() -> GcrCntl {
    GcrCntl::new()
        .with_gl2_inv(true)
        .with_gl2_wb(true)
        .with_glm_inv(true)
        .with_glm_wb(true)
        .with_gl1_inv(true)
        .with_glv_inv(true)
        .with_glk_inv(true)
        .with_gli_inv(1)
}

const H: &str = "nvd.h";

const fn c(expr: &'static str, v: u32) -> Fact {
    Fact::constant(H, expr, v as u64)
}

pub const FACTS: &[Fact] = &[
    c("PACKET_TYPE3", PACKET_TYPE3),
    c("PACKET3_WRITE_DATA", opcode::WRITE_DATA as u32),
    c("PACKET3_INDIRECT_BUFFER", opcode::INDIRECT_BUFFER as u32),
    c("PACKET3_RELEASE_MEM", opcode::RELEASE_MEM as u32),
    c("PACKET3_ACQUIRE_MEM", opcode::ACQUIRE_MEM as u32),
    c("PACKET3_SET_RESOURCES", opcode::SET_RESOURCES as u32),
    c("PACKET3_MAP_QUEUES", opcode::MAP_QUEUES as u32),
    c("PACKET3_UNMAP_QUEUES", opcode::UNMAP_QUEUES as u32),
    c("PACKET3_QUERY_STATUS", opcode::QUERY_STATUS as u32),
    c(
        "(uint32_t)PACKET3(PACKET3_MAP_QUEUES, 5)",
        header(opcode::MAP_QUEUES, 6),
    ),
    c(
        "(uint32_t)PACKET3(PACKET3_RELEASE_MEM, 6)",
        header(opcode::RELEASE_MEM, 7),
    ),
    c("(uint32_t)PACKET3(0xFF, 0x3FFF)", header(0xFF, 0x4000)),
    c(
        "PACKET3_SET_RESOURCES_VMID_MASK(0xFFFF)",
        SetResourcesCntl::new().with_vmid_mask(0xFFFF).into_bits(),
    ),
    c(
        "PACKET3_SET_RESOURCES_UNMAP_LATENTY(1)",
        SetResourcesCntl::new().with_unmap_latency(1).into_bits(),
    ),
    c(
        "PACKET3_SET_RESOURCES_QUEUE_TYPE(1)",
        SetResourcesCntl::new().with_queue_type(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_QUEUE_SEL(1)",
        MapQueuesCntl::new().with_queue_sel(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_VMID(1)",
        MapQueuesCntl::new().with_vmid(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_QUEUE(1)",
        MapQueuesCntl::new().with_queue(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_PIPE(1)",
        MapQueuesCntl::new().with_pipe(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_ME(1)",
        MapQueuesCntl::new().with_me(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_QUEUE_TYPE(1)",
        MapQueuesCntl::new().with_queue_type(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_ALLOC_FORMAT(1)",
        MapQueuesCntl::new().with_alloc_format(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_ENGINE_SEL(1)",
        MapQueuesCntl::new().with_engine_sel(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_NUM_QUEUES(1)",
        MapQueuesCntl::new().with_num_queues(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_CHECK_DISABLE(1)",
        DoorbellCntl::new().with_check_disable(true).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_DOORBELL_OFFSET(1)",
        DoorbellCntl::new().with_doorbell_offset(1).into_bits(),
    ),
    c(
        "PACKET3_UNMAP_QUEUES_ACTION(1)",
        UnmapQueuesCntl::new().with_action(1).into_bits(),
    ),
    c(
        "PACKET3_UNMAP_QUEUES_QUEUE_SEL(1)",
        UnmapQueuesCntl::new().with_queue_sel(1).into_bits(),
    ),
    c(
        "PACKET3_UNMAP_QUEUES_ENGINE_SEL(1)",
        UnmapQueuesCntl::new().with_engine_sel(1).into_bits(),
    ),
    c(
        "PACKET3_UNMAP_QUEUES_NUM_QUEUES(1)",
        UnmapQueuesCntl::new().with_num_queues(1).into_bits(),
    ),
    c(
        "PACKET3_UNMAP_QUEUES_DOORBELL_OFFSET0(1)",
        DoorbellCntl::new().with_doorbell_offset(1).into_bits(),
    ),
    c(
        "PACKET3_QUERY_STATUS_CONTEXT_ID(1)",
        QueryStatusCntl::new().with_context_id(1).into_bits(),
    ),
    c(
        "PACKET3_QUERY_STATUS_INTERRUPT_SEL(1)",
        QueryStatusCntl::new().with_interrupt_sel(1).into_bits(),
    ),
    c(
        "PACKET3_QUERY_STATUS_COMMAND(1)",
        QueryStatusCntl::new().with_command(1).into_bits(),
    ),
    c(
        "PACKET3_QUERY_STATUS_DOORBELL_OFFSET(1)",
        QueryStatusTarget::new().with_doorbell_offset(1).into_bits(),
    ),
    c(
        "PACKET3_QUERY_STATUS_ENG_SEL(1)",
        QueryStatusTarget::new().with_eng_sel(1).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_EVENT_TYPE(1)",
        ReleaseMemEvent::new().with_event_type(1).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_EVENT_INDEX(1)",
        ReleaseMemEvent::new().with_event_index(1).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GLM_WB",
        ReleaseMemEvent::new().with_gcr_glm_wb(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GLM_INV",
        ReleaseMemEvent::new().with_gcr_glm_inv(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GLV_INV",
        ReleaseMemEvent::new().with_gcr_glv_inv(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GL1_INV",
        ReleaseMemEvent::new().with_gcr_gl1_inv(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GL2_US",
        ReleaseMemEvent::new().with_gcr_gl2_us(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GL2_RANGE",
        ReleaseMemEvent::new().with_gcr_gl2_range(1).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GL2_DISCARD",
        ReleaseMemEvent::new()
            .with_gcr_gl2_discard(true)
            .into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GL2_INV",
        ReleaseMemEvent::new().with_gcr_gl2_inv(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_GL2_WB",
        ReleaseMemEvent::new().with_gcr_gl2_wb(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_GCR_SEQ",
        ReleaseMemEvent::new().with_gcr_seq(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_CACHE_POLICY(1)",
        ReleaseMemEvent::new().with_cache_policy(1).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_EXECUTE",
        ReleaseMemEvent::new().with_execute(true).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_DATA_SEL(1)",
        ReleaseMemData::new().with_data_sel(1).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_INT_SEL(1)",
        ReleaseMemData::new().with_int_sel(1).into_bits(),
    ),
    c(
        "PACKET3_RELEASE_MEM_DST_SEL(1)",
        ReleaseMemData::new().with_dst_sel(1).into_bits(),
    ),
    c(
        "WRITE_DATA_DST_SEL(1)",
        WriteDataCntl::new().with_dst_sel(1).into_bits(),
    ),
    c(
        "WR_ONE_ADDR",
        WriteDataCntl::new().with_wr_one_addr(true).into_bits(),
    ),
    c(
        "WR_CONFIRM",
        WriteDataCntl::new().with_wr_confirm(true).into_bits(),
    ),
    c(
        "WRITE_DATA_CACHE_POLICY(1)",
        WriteDataCntl::new().with_cache_policy(1).into_bits(),
    ),
    c(
        "WRITE_DATA_ENGINE_SEL(1)",
        WriteDataCntl::new().with_engine_sel(1).into_bits(),
    ),
    c(
        "INDIRECT_BUFFER_VALID",
        IbControl::new().with_valid(true).into_bits(),
    ),
    c(
        "INDIRECT_BUFFER_CACHE_POLICY(1)",
        IbControl::new().with_cache_policy(1).into_bits(),
    ),
    c(
        "INDIRECT_BUFFER_PRE_ENB(1)",
        IbControl::new().with_pre_enb(true).into_bits(),
    ),
    c(
        "INDIRECT_BUFFER_PRE_RESUME(1)",
        IbControl::new().with_pre_resume(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1)",
        GcrCntl::new().with_gli_inv(1).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_RANGE(1)",
        GcrCntl::new().with_gl1_range(1).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1)",
        GcrCntl::new().with_glm_wb(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1)",
        GcrCntl::new().with_glm_inv(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_WB(1)",
        GcrCntl::new().with_glk_wb(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1)",
        GcrCntl::new().with_glk_inv(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1)",
        GcrCntl::new().with_glv_inv(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1)",
        GcrCntl::new().with_gl1_inv(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_US(1)",
        GcrCntl::new().with_gl2_us(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_RANGE(1)",
        GcrCntl::new().with_gl2_range(1).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_DISCARD(1)",
        GcrCntl::new().with_gl2_discard(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1)",
        GcrCntl::new().with_gl2_inv(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1)",
        GcrCntl::new().with_gl2_wb(true).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_CNTL_SEQ(1)",
        GcrCntl::new().with_seq(1).into_bits(),
    ),
    c(
        "PACKET3_ACQUIRE_MEM_GCR_RANGE_IS_PA",
        GcrCntl::new().with_range_is_pa(true).into_bits(),
    ),
    Fact::constant(
        "navi10_enum.h",
        "CACHE_FLUSH_AND_INV_TS_EVENT",
        CACHE_FLUSH_AND_INV_TS_EVENT as u64,
    ),
];

const K: &str = "kfd_pm4_headers_ai.h";

const fn k(expr: &'static str, v: u32) -> Fact {
    Fact::constant(K, expr, v as u64)
}

/// Field masks from KFD's bitfield structs, for the fields they share
/// with `nvd.h`.
pub const KFD_FACTS: &[Fact] = &[
    k(
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.opcode = ~0u; h_.u32All; })",
        Type3Header::new().with_opcode(0xFF).into_bits(),
    ),
    k(
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.count = ~0u; h_.u32All; })",
        Type3Header::new().with_count(0x3FFF).into_bits(),
    ),
    k(
        "({ union PM4_MES_TYPE_3_HEADER h_ = {0}; h_.type = ~0u; h_.u32All; })",
        Type3Header::new().with_packet_type(3).into_bits(),
    ),
    k(
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.vmid_mask = ~0u; p_.ordinal2; })",
        SetResourcesCntl::new().with_vmid_mask(0xFFFF).into_bits(),
    ),
    k(
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.unmap_latency = ~0u; p_.ordinal2; })",
        SetResourcesCntl::new().with_unmap_latency(0xFF).into_bits(),
    ),
    k(
        "({ struct pm4_mes_set_resources p_ = {0}; p_.bitfields2.queue_type = ~0u; p_.ordinal2; })",
        SetResourcesCntl::new().with_queue_type(7).into_bits(),
    ),
    k(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.queue_sel = ~0u; p_.ordinal2; })",
        MapQueuesCntl::new().with_queue_sel(3).into_bits(),
    ),
    k(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.queue_type = ~0u; p_.ordinal2; })",
        MapQueuesCntl::new().with_queue_type(7).into_bits(),
    ),
    k(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.engine_sel = ~0u; p_.ordinal2; })",
        MapQueuesCntl::new().with_engine_sel(7).into_bits(),
    ),
    k(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields2.num_queues = ~0u; p_.ordinal2; })",
        MapQueuesCntl::new().with_num_queues(7).into_bits(),
    ),
    k(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields3.check_disable = ~0u; p_.ordinal3; })",
        DoorbellCntl::new().with_check_disable(true).into_bits(),
    ),
    k(
        "({ struct pm4_mes_map_queues p_ = {0}; p_.bitfields3.doorbell_offset = ~0u; p_.ordinal3; })",
        DoorbellCntl::new()
            .with_doorbell_offset(0x3FF_FFFF)
            .into_bits(),
    ),
    k(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.action = ~0u; p_.ordinal2; })",
        UnmapQueuesCntl::new().with_action(3).into_bits(),
    ),
    k(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.queue_sel = ~0u; p_.ordinal2; })",
        UnmapQueuesCntl::new().with_queue_sel(3).into_bits(),
    ),
    k(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.engine_sel = ~0u; p_.ordinal2; })",
        UnmapQueuesCntl::new().with_engine_sel(7).into_bits(),
    ),
    k(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields2.num_queues = ~0u; p_.ordinal2; })",
        UnmapQueuesCntl::new().with_num_queues(7).into_bits(),
    ),
    k(
        "({ struct pm4_mes_unmap_queues p_ = {0}; p_.bitfields3b.doorbell_offset0 = ~0u; p_.ordinal3; })",
        DoorbellCntl::new()
            .with_doorbell_offset(0x3FF_FFFF)
            .into_bits(),
    ),
    k(
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.context_id = ~0u; p_.ordinal2; })",
        QueryStatusCntl::new()
            .with_context_id(0xFFF_FFFF)
            .into_bits(),
    ),
    k(
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.interrupt_sel = ~0u; p_.ordinal2; })",
        QueryStatusCntl::new().with_interrupt_sel(3).into_bits(),
    ),
    k(
        "({ struct pm4_mes_query_status p_ = {0}; p_.bitfields2.command = ~0u; p_.ordinal2; })",
        QueryStatusCntl::new().with_command(3).into_bits(),
    ),
    k("sizeof(struct pm4_mes_map_queues)", 7 * 4),
    k("sizeof(struct pm4_mes_unmap_queues)", 6 * 4),
    k("sizeof(struct pm4_mes_query_status)", 7 * 4),
    k("sizeof(struct pm4_mes_set_resources)", 8 * 4),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected words assembled by hand from the shifts `nvd.h` documents
    /// (opcode << 8, count << 16, type 3 << 30) and from the values
    /// `gfx11_kiq_map_queues()` passes for a compute queue.
    #[test]
    fn map_queues_for_a_compute_queue() {
        let p = map_queues(
            QueueEngine::Compute,
            1,
            2,
            0x40,
            0x1_0000_2000,
            0x3_0000_4000,
        );
        assert_eq!(p[0], 0xC005_A200);
        // queue 2 << 13 | pipe 1 << 16 | me 1 << 18 | num_queues 1 << 29
        assert_eq!(p[1], (2 << 13) | (1 << 16) | (1 << 18) | (1 << 29));
        assert_eq!(p[2], 0x40 << 2);
        assert_eq!(&p[3..], &[0x2000, 1, 0x4000, 3]);
    }

    /// `gfx_v11_0_ring_emit_fence()` for a 64-bit fence with interrupt:
    /// SEQ|GL2_WB|GLM_INV|GLM_WB|CACHE_POLICY(3)|EVENT_TYPE(0x14)|EVENT_INDEX(5).
    #[test]
    fn release_mem_fence_matches_the_kernel_fence() {
        let p = release_mem_fence(0x8000_1000, 0x1_0000_0007, true, true, 0);
        assert_eq!(p[0], 0xC006_4900);
        let want = (1 << 22) | (1 << 21) | (1 << 13) | (1 << 12) | (3 << 25) | 0x14 | (5 << 8);
        assert_eq!(p[1], want);
        assert_eq!(p[2], (2 << 29) | (2 << 24));
        assert_eq!(&p[3..], &[0x8000_1000, 0, 7, 1, 0]);
    }

    #[test]
    fn ib_and_acquire_mem() {
        let p = indirect_buffer(0x1234_5678_9ABC, 16, 3, false);
        assert_eq!(
            p,
            [0xC002_3F00, 0x5678_9ABC, 0x1234, (1 << 23) | 16 | (3 << 24)]
        );
        let a = acquire_mem(mem_sync_gcr());
        // GL2_INV|GL2_WB|GLM_INV|GLM_WB|GL1_INV|GLV_INV|GLK_INV|GLI_INV(1)
        let gcr = (1 << 14) | (1 << 15) | (1 << 5) | (1 << 4) | (1 << 9) | (1 << 8) | (1 << 7) | 1;
        assert_eq!(a, [0xC006_5800, 0, 0xffff_ffff, 0xff_ffff, 0, 0, 0xA, gcr]);
    }
}
