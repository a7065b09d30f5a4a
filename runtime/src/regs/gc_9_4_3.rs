//! GC 9.4.3 (MI300X / MI308X, gfx942) CP, HQD, MQD, GRBM and SH_MEM
//! registers used by barebell.
//!
//! Checked against `asic_reg/gc/gc_9_4_3_offset.h` and `gc_9_4_3_sh_mask.h`
//! from Linux 6.12. Every XCC is a GC instance with its own segment bases
//! (`adev->reg_offset[GC_HWIP][GET_INST(GC, xcc)]`), so these offsets are
//! reached through a per-XCC [`crate::bus::Block`].
//!
//! The HQD window that `kgd_gfx_v9_4_3_hqd_load()` copies runs from
//! `CP_MQD_BASE_ADDR` to `CP_HQD_AQL_DISPATCH_ID_HI` (59 registers, three
//! more than gfx9's `CP_HQD_PQ_WPTR_HI` end), the register image of
//! `struct v9_mqd` dwords 128..=186.

use barebell_facts::Fact;
use bitfield_struct::bitfield;

super::registers! {
    "gc_9_4_3_offset.h";
    GRBM_CNTL = 0x0000, 0;
    GRBM_GFX_CNTL = 0x0022, 0;
    GRBM_SOFT_RESET = 0x0008, 0;
    GB_ADDR_CONFIG = 0x063e, 0;
    SH_MEM_BASES = 0x030a, 0;
    SH_MEM_CONFIG = 0x030d, 0;
    COMPUTE_TG_CHUNK_SIZE = 0x0e27, 0;
    CP_MEC_DOORBELL_RANGE_LOWER = 0x105c, 0;
    CP_MEC_DOORBELL_RANGE_UPPER = 0x105d, 0;
    CP_PQ_WPTR_POLL_CNTL = 0x1083, 0;
    CP_PQ_WPTR_POLL_CNTL1 = 0x1084, 0;
    CP_PQ_STATUS = 0x10b8, 0;
    TCP_UTCL1_CNTL1 = 0x12b5, 0;
    TCP_UTCL1_CNTL2 = 0x12b6, 0;
    CP_MQD_BASE_ADDR = 0x1245, 0;
    CP_MQD_BASE_ADDR_HI = 0x1246, 0;
    CP_HQD_ACTIVE = 0x1247, 0;
    CP_HQD_VMID = 0x1248, 0;
    CP_HQD_PERSISTENT_STATE = 0x1249, 0;
    CP_HQD_PQ_BASE = 0x124d, 0;
    CP_HQD_PQ_RPTR = 0x124f, 0;
    CP_HQD_PQ_RPTR_REPORT_ADDR = 0x1250, 0;
    CP_HQD_PQ_WPTR_POLL_ADDR = 0x1252, 0;
    CP_HQD_PQ_WPTR_POLL_ADDR_HI = 0x1253, 0;
    CP_HQD_PQ_DOORBELL_CONTROL = 0x1254, 0;
    CP_HQD_PQ_CONTROL = 0x1256, 0;
    CP_HQD_IB_CONTROL = 0x125a, 0;
    CP_HQD_DEQUEUE_REQUEST = 0x125d, 0;
    CP_MQD_CONTROL = 0x1267, 0;
    CP_HQD_EOP_BASE_ADDR = 0x126a, 0;
    CP_HQD_EOP_CONTROL = 0x126c, 0;
    CP_HQD_EOP_RPTR = 0x126d, 0;
    CP_HQD_CTX_SAVE_BASE_ADDR_LO = 0x1270, 0;
    CP_HQD_AQL_CONTROL = 0x127a, 0;
    CP_HQD_PQ_WPTR_LO = 0x127b, 0;
    CP_HQD_PQ_WPTR_HI = 0x127c, 0;
    CP_HQD_AQL_DISPATCH_ID_HI = 0x127f, 0;
    RLC_CP_SCHEDULERS = 0x4caa, 1;
}

/// Registers in the 9.4.3 HQD window `CP_MQD_BASE_ADDR ..=
/// CP_HQD_AQL_DISPATCH_ID_HI` (`kgd_gfx_v9_4_3_hqd_load()`).
pub const HQD_WINDOW_DWORDS: usize =
    (CP_HQD_AQL_DISPATCH_ID_HI.offset - CP_MQD_BASE_ADDR.offset + 1) as usize;
const _: () = assert!(HQD_WINDOW_DWORDS == 59);

const SH: &str = "gc_9_4_3_sh_mask.h";

/// `GRBM_GFX_CNTL` on GC 9.4.3: no `CTXID` field, unlike gfx11
/// (`soc15_grbm_select()` sets PIPEID, MEID, VMID, QUEUEID).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GrbmGfxCntl {
    #[bits(2)]
    pub pipeid: u8,
    #[bits(2)]
    pub meid: u8,
    #[bits(4)]
    pub vmid: u8,
    #[bits(3)]
    pub queueid: u8,
    #[bits(21)]
    __: u32,
}

/// `GRBM_CNTL` (`gfx_v9_4_3_constants_init()` sets READ_TIMEOUT 0xff).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct GrbmCntl {
    #[bits(8)]
    pub read_timeout: u8,
    #[bits(23)]
    __: u32,
    pub report_last_rderr: bool,
}

/// `SH_MEM_CONFIG` on GC 9.4.3.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct ShMemConfig {
    pub address_mode: bool,
    #[bits(2)]
    __: u8,
    #[bits(2)]
    pub alignment_mode: u8,
    #[bits(3)]
    __: u8,
    pub f8_mode: bool,
    #[bits(3)]
    __: u8,
    pub retry_disable: bool,
    pub private_nv: bool,
    #[bits(18)]
    __: u32,
}

/// `SH_MEM_BASES`: the private and shared aperture bases (bits 63:48).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct ShMemBases {
    pub private_base: u16,
    pub shared_base: u16,
}

/// `CP_MEC_DOORBELL_RANGE_LOWER` / `_UPPER`: a byte offset in the
/// doorbell BAR, dword-aligned (bits 27:2).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct MecDoorbellRange {
    #[bits(2)]
    __: u8,
    #[bits(26)]
    pub dword: u32,
    #[bits(4)]
    __: u8,
}

/// `CP_PQ_WPTR_POLL_CNTL`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct PqWptrPollCntl {
    pub period: u8,
    #[bits(21)]
    __: u32,
    pub disable_pend_req_one_shot: bool,
    pub poll_active: bool,
    pub en: bool,
}

/// `RLC_CP_SCHEDULERS` (`kgd_gfx_v9_hqd_destroy()` clears `scheduler1`
/// before dequeuing a VMID-0 queue).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RlcCpSchedulers {
    pub scheduler0: u8,
    pub scheduler1: u8,
    pub scheduler2: u8,
    pub scheduler3: u8,
}

/// `CP_HQD_PQ_CONTROL` on GC 9.x: `WPP_CLAMP_EN` at bit 16, a one-bit
/// `CACHE_POLICY` at 24 and `SLOT_BASED_WPTR` at 26:25, which is not the
/// gfx11 layout.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct PqControl {
    /// log2(ring dwords) - 1.
    #[bits(6)]
    pub queue_size: u8,
    pub wptr_carry: bool,
    pub rptr_carry: bool,
    #[bits(6)]
    pub rptr_block_size: u8,
    pub queue_full_en: bool,
    pub pq_empty: bool,
    pub wpp_clamp_en: bool,
    #[bits(2)]
    pub endian_swap: u8,
    #[bits(1)]
    __: u8,
    #[bits(2)]
    pub min_avail_size: u8,
    pub tmz: bool,
    pub exe_disable: bool,
    pub cache_policy: bool,
    /// 2 for AQL: the write pointer counts 64-byte slots.
    #[bits(2)]
    pub slot_based_wptr: u8,
    pub no_update_rptr: bool,
    pub unord_dispatch: bool,
    pub roq_pq_ib_flip: bool,
    pub priv_state: bool,
    pub kmd_queue: bool,
}

/// `CP_HQD_IB_CONTROL`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct IbControl {
    #[bits(20)]
    pub ib_size: u32,
    #[bits(2)]
    pub min_ib_avail_size: u8,
    #[bits(1)]
    __: u8,
    pub ib_exe_disable: bool,
    pub ib_cache_policy: bool,
    #[bits(5)]
    __: u8,
    pub ib_priv_state: bool,
    pub processing_ib: bool,
}

/// `CP_HQD_ACTIVE.ACTIVE`.
pub const HQD_ACTIVE_MASK: u32 = 1;
/// `CP_HQD_DEQUEUE_REQUEST.DEQUEUE_REQ` (3 bits on GC 9.4.3).
pub const DEQUEUE_REQ_MASK: u32 = 0x7;
/// `CP_HQD_EOP_RPTR.INIT_FETCHER`.
pub const EOP_RPTR_INIT_FETCHER_MASK: u32 = 1 << 31;
/// `CP_HQD_EOP_CONTROL.EOP_SIZE`.
pub const EOP_CONTROL_EOP_SIZE_MASK: u32 = 0x3F;
/// `CP_MQD_CONTROL.PRIV_STATE`.
pub const MQD_CONTROL_PRIV_STATE_MASK: u32 = 1 << 8;
/// `TCP_UTCL1_CNTL1.REDUCE_FIFO_DEPTH_BY_2` (bits 29:28).
pub const REDUCE_FIFO_DEPTH_BY_2: u32 = 0x3000_0000;
pub const REDUCE_FIFO_DEPTH_BY_2_SHIFT: u32 = 28;
/// `TCP_UTCL1_CNTL2.SPARE` (bits 7:0).
pub const TCP_UTCL1_SPARE: u32 = 0x0000_00FF;

/// `CP_HQD_AQL_CONTROL.CONTROL0`.
pub const AQL_CONTROL_CONTROL0_MASK: u32 = 0x7FFF;
/// `CP_HQD_VMID.VMID`.
pub const HQD_VMID_MASK: u32 = 0xF;
/// `COMPUTE_TG_CHUNK_SIZE.TG_CHUNK_SIZE`.
pub const TG_CHUNK_SIZE_MASK: u32 = 0xFFFF;

const fn m(expr: &'static str, value: u32) -> Fact {
    Fact::constant(SH, expr, value as u64)
}

/// Each field mask barebell encodes or decodes, from the bitfield structs
/// above, checked against `gc_9_4_3_sh_mask.h`.
pub const FIELD_FACTS: &[Fact] = &[
    m(
        "TCP_UTCL1_CNTL1__REDUCE_FIFO_DEPTH_BY_2_MASK",
        REDUCE_FIFO_DEPTH_BY_2,
    ),
    Fact::constant(
        SH,
        "TCP_UTCL1_CNTL1__REDUCE_FIFO_DEPTH_BY_2__SHIFT",
        REDUCE_FIFO_DEPTH_BY_2_SHIFT as u64,
    ),
    m("TCP_UTCL1_CNTL2__SPARE_MASK", TCP_UTCL1_SPARE),
    m(
        "GRBM_GFX_CNTL__PIPEID_MASK",
        GrbmGfxCntl::new().with_pipeid(3).into_bits(),
    ),
    m(
        "GRBM_GFX_CNTL__MEID_MASK",
        GrbmGfxCntl::new().with_meid(3).into_bits(),
    ),
    m(
        "GRBM_GFX_CNTL__VMID_MASK",
        GrbmGfxCntl::new().with_vmid(0xF).into_bits(),
    ),
    m(
        "GRBM_GFX_CNTL__QUEUEID_MASK",
        GrbmGfxCntl::new().with_queueid(7).into_bits(),
    ),
    m(
        "GRBM_CNTL__READ_TIMEOUT_MASK",
        GrbmCntl::new().with_read_timeout(0xFF).into_bits(),
    ),
    m(
        "GRBM_CNTL__REPORT_LAST_RDERR_MASK",
        GrbmCntl::new().with_report_last_rderr(true).into_bits(),
    ),
    m(
        "SH_MEM_CONFIG__ADDRESS_MODE_MASK",
        ShMemConfig::new().with_address_mode(true).into_bits(),
    ),
    m(
        "SH_MEM_CONFIG__ALIGNMENT_MODE_MASK",
        ShMemConfig::new().with_alignment_mode(3).into_bits(),
    ),
    m(
        "SH_MEM_CONFIG__F8_MODE_MASK",
        ShMemConfig::new().with_f8_mode(true).into_bits(),
    ),
    m(
        "SH_MEM_CONFIG__RETRY_DISABLE_MASK",
        ShMemConfig::new().with_retry_disable(true).into_bits(),
    ),
    m(
        "SH_MEM_CONFIG__PRIVATE_NV_MASK",
        ShMemConfig::new().with_private_nv(true).into_bits(),
    ),
    m(
        "SH_MEM_BASES__PRIVATE_BASE_MASK",
        ShMemBases::new().with_private_base(0xFFFF).into_bits(),
    ),
    m(
        "SH_MEM_BASES__SHARED_BASE_MASK",
        ShMemBases::new().with_shared_base(0xFFFF).into_bits(),
    ),
    m(
        "CP_MEC_DOORBELL_RANGE_LOWER__DOORBELL_RANGE_LOWER_MASK",
        MecDoorbellRange::new().with_dword(0x3FF_FFFF).into_bits(),
    ),
    m(
        "CP_MEC_DOORBELL_RANGE_UPPER__DOORBELL_RANGE_UPPER_MASK",
        MecDoorbellRange::new().with_dword(0x3FF_FFFF).into_bits(),
    ),
    m(
        "CP_PQ_WPTR_POLL_CNTL__PERIOD_MASK",
        PqWptrPollCntl::new().with_period(0xFF).into_bits(),
    ),
    m(
        "CP_PQ_WPTR_POLL_CNTL__DISABLE_PEND_REQ_ONE_SHOT_MASK",
        PqWptrPollCntl::new()
            .with_disable_pend_req_one_shot(true)
            .into_bits(),
    ),
    m(
        "CP_PQ_WPTR_POLL_CNTL__POLL_ACTIVE_MASK",
        PqWptrPollCntl::new().with_poll_active(true).into_bits(),
    ),
    m(
        "CP_PQ_WPTR_POLL_CNTL__EN_MASK",
        PqWptrPollCntl::new().with_en(true).into_bits(),
    ),
    m(
        "RLC_CP_SCHEDULERS__scheduler0_MASK",
        RlcCpSchedulers::new().with_scheduler0(0xFF).into_bits(),
    ),
    m(
        "RLC_CP_SCHEDULERS__scheduler1_MASK",
        RlcCpSchedulers::new().with_scheduler1(0xFF).into_bits(),
    ),
    m(
        "RLC_CP_SCHEDULERS__scheduler2_MASK",
        RlcCpSchedulers::new().with_scheduler2(0xFF).into_bits(),
    ),
    m(
        "RLC_CP_SCHEDULERS__scheduler3_MASK",
        RlcCpSchedulers::new().with_scheduler3(0xFF).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK",
        PqControl::new().with_queue_size(0x3F).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__WPTR_CARRY_MASK",
        PqControl::new().with_wptr_carry(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__RPTR_CARRY_MASK",
        PqControl::new().with_rptr_carry(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__RPTR_BLOCK_SIZE_MASK",
        PqControl::new().with_rptr_block_size(0x3F).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__QUEUE_FULL_EN_MASK",
        PqControl::new().with_queue_full_en(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__PQ_EMPTY_MASK",
        PqControl::new().with_pq_empty(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__WPP_CLAMP_EN_MASK",
        PqControl::new().with_wpp_clamp_en(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__ENDIAN_SWAP_MASK",
        PqControl::new().with_endian_swap(3).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__MIN_AVAIL_SIZE_MASK",
        PqControl::new().with_min_avail_size(3).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__TMZ_MASK",
        PqControl::new().with_tmz(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__EXE_DISABLE_MASK",
        PqControl::new().with_exe_disable(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__CACHE_POLICY_MASK",
        PqControl::new().with_cache_policy(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__SLOT_BASED_WPTR_MASK",
        PqControl::new().with_slot_based_wptr(3).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__NO_UPDATE_RPTR_MASK",
        PqControl::new().with_no_update_rptr(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__UNORD_DISPATCH_MASK",
        PqControl::new().with_unord_dispatch(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__ROQ_PQ_IB_FLIP_MASK",
        PqControl::new().with_roq_pq_ib_flip(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__PRIV_STATE_MASK",
        PqControl::new().with_priv_state(true).into_bits(),
    ),
    m(
        "CP_HQD_PQ_CONTROL__KMD_QUEUE_MASK",
        PqControl::new().with_kmd_queue(true).into_bits(),
    ),
    m(
        "CP_HQD_IB_CONTROL__IB_SIZE_MASK",
        IbControl::new().with_ib_size(0xF_FFFF).into_bits(),
    ),
    m(
        "CP_HQD_IB_CONTROL__MIN_IB_AVAIL_SIZE_MASK",
        IbControl::new().with_min_ib_avail_size(3).into_bits(),
    ),
    m(
        "CP_HQD_IB_CONTROL__IB_EXE_DISABLE_MASK",
        IbControl::new().with_ib_exe_disable(true).into_bits(),
    ),
    m(
        "CP_HQD_IB_CONTROL__IB_CACHE_POLICY_MASK",
        IbControl::new().with_ib_cache_policy(true).into_bits(),
    ),
    m(
        "CP_HQD_IB_CONTROL__IB_PRIV_STATE_MASK",
        IbControl::new().with_ib_priv_state(true).into_bits(),
    ),
    m(
        "CP_HQD_IB_CONTROL__PROCESSING_IB_MASK",
        IbControl::new().with_processing_ib(true).into_bits(),
    ),
    m("CP_HQD_ACTIVE__ACTIVE_MASK", HQD_ACTIVE_MASK),
    m("CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ_MASK", DEQUEUE_REQ_MASK),
    m(
        "CP_HQD_EOP_RPTR__INIT_FETCHER_MASK",
        EOP_RPTR_INIT_FETCHER_MASK,
    ),
    m(
        "CP_HQD_EOP_CONTROL__EOP_SIZE_MASK",
        EOP_CONTROL_EOP_SIZE_MASK,
    ),
    m(
        "CP_MQD_CONTROL__PRIV_STATE_MASK",
        MQD_CONTROL_PRIV_STATE_MASK,
    ),
    m(
        "CP_HQD_AQL_CONTROL__CONTROL0_MASK",
        AQL_CONTROL_CONTROL0_MASK,
    ),
    m("CP_HQD_VMID__VMID_MASK", HQD_VMID_MASK),
    m(
        "COMPUTE_TG_CHUNK_SIZE__TG_CHUNK_SIZE_MASK",
        TG_CHUNK_SIZE_MASK,
    ),
    // The gfx11 field structs barebell reuses for these registers have
    // the same layout on GC 9.4.3.
    m(
        "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_MODE_MASK",
        crate::gfx::mqd::DoorbellControl::new()
            .with_doorbell_mode(true)
            .into_bits(),
    ),
    m(
        "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_BIF_DROP_MASK",
        crate::gfx::mqd::DoorbellControl::new()
            .with_doorbell_bif_drop(true)
            .into_bits(),
    ),
    m(
        "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK",
        crate::gfx::mqd::DoorbellControl::new()
            .with_doorbell_offset(0x3FF_FFFF)
            .into_bits(),
    ),
    m(
        "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK",
        crate::gfx::mqd::DoorbellControl::new()
            .with_doorbell_en(true)
            .into_bits(),
    ),
    m(
        "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_HIT_MASK",
        crate::gfx::mqd::DoorbellControl::new()
            .with_doorbell_hit(true)
            .into_bits(),
    ),
    m(
        "CP_HQD_PERSISTENT_STATE__PRELOAD_REQ_MASK",
        crate::gfx::mqd::PersistentState::new()
            .with_preload_req(true)
            .into_bits(),
    ),
    m(
        "CP_HQD_PERSISTENT_STATE__PRELOAD_SIZE_MASK",
        crate::gfx::mqd::PersistentState::new()
            .with_preload_size(0x3FF)
            .into_bits(),
    ),
    m(
        "CP_HQD_PERSISTENT_STATE__QSWITCH_MODE_MASK",
        crate::gfx::mqd::PersistentState::new()
            .with_qswitch_mode(true)
            .into_bits(),
    ),
    m(
        "CP_HQD_QUANTUM__QUANTUM_EN_MASK",
        crate::gfx::mqd::Quantum::new()
            .with_quantum_en(true)
            .into_bits(),
    ),
    m(
        "CP_HQD_QUANTUM__QUANTUM_SCALE_MASK",
        crate::gfx::mqd::Quantum::new()
            .with_quantum_scale(true)
            .into_bits(),
    ),
    m(
        "CP_HQD_QUANTUM__QUANTUM_DURATION_MASK",
        crate::gfx::mqd::Quantum::new()
            .with_quantum_duration(0x3F)
            .into_bits(),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hqd_window_is_the_mqd_register_image_linux_copies() {
        // kgd_gfx_v9_4_3_hqd_load(): CP_MQD_BASE_ADDR (0x1245) through
        // CP_HQD_AQL_DISPATCH_ID_HI (0x127f), values from the header.
        assert_eq!(CP_MQD_BASE_ADDR.offset, 0x1245);
        assert_eq!(CP_HQD_AQL_DISPATCH_ID_HI.offset, 0x127f);
        assert_eq!(HQD_WINDOW_DWORDS, 0x127f - 0x1245 + 1);
        // The select a queue gets: ME 1, pipe 2, queue 5.
        let sel = GrbmGfxCntl::new()
            .with_meid(1)
            .with_pipeid(2)
            .with_queueid(5);
        assert_eq!(sel.into_bits(), 2 | 1 << 2 | 5 << 8);
    }
}
