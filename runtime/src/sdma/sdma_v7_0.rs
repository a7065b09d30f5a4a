//! SDMA 7.0 (GC 12.0.x, Navi4x): engine 0 queue 0's registers (in the GC
//! header, on the GC bases: `sdma_v7_0_get_reg_offset()`), the
//! `RB_CNTL` fields `sdma_v7_0_gfx_resume()` sets, and the KFD MQD
//! (`struct v12_sdma_mqd`, `kfd_mqd_manager_v12.c`).

use super::{EngineRegs, MqdLayout};
use crate::regs::Reg;
use barebell_facts::Fact;

const OFF: &str = "gc_12_0_0_offset.h";
const MASK: &str = "gc_12_0_0_sh_mask.h";
const MQD: &str = "v12_structs.h";

sdma_regs! {
    SDMA0_MCU_CNTL = 0x588e, 1;
    SDMA0_QUEUE0_RB_CNTL = 0x0080, 0;
    SDMA0_QUEUE0_RB_BASE = 0x0081, 0;
    SDMA0_QUEUE0_RB_BASE_HI = 0x0082, 0;
    SDMA0_QUEUE0_RB_RPTR = 0x0083, 0;
    SDMA0_QUEUE0_RB_RPTR_HI = 0x0084, 0;
    SDMA0_QUEUE0_RB_WPTR = 0x0085, 0;
    SDMA0_QUEUE0_RB_WPTR_HI = 0x0086, 0;
    SDMA0_QUEUE0_RB_RPTR_ADDR_LO = 0x0087, 0;
    SDMA0_QUEUE0_RB_RPTR_ADDR_HI = 0x0088, 0;
    SDMA0_QUEUE0_IB_CNTL = 0x0089, 0;
    SDMA0_QUEUE0_DOORBELL = 0x008f, 0;
    SDMA0_QUEUE0_DOORBELL_OFFSET = 0x0091, 0;
    SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO = 0x0098, 0;
    SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI = 0x0099, 0;
    SDMA0_QUEUE0_MINOR_PTR_UPDATE = 0x009b, 0;
}

/// Engine 0 queue 0 of SDMA 7.0.
pub const ENGINE: EngineRegs = EngineRegs {
    cntl: SDMA0_MCU_CNTL,
    halt: 0x0000_0001,
    reset: 0x0000_0002,
    rb_cntl: SDMA0_QUEUE0_RB_CNTL,
    rb_base: SDMA0_QUEUE0_RB_BASE,
    rb_base_hi: SDMA0_QUEUE0_RB_BASE_HI,
    rb_rptr: SDMA0_QUEUE0_RB_RPTR,
    rb_rptr_hi: SDMA0_QUEUE0_RB_RPTR_HI,
    rb_wptr: SDMA0_QUEUE0_RB_WPTR,
    rb_wptr_hi: SDMA0_QUEUE0_RB_WPTR_HI,
    rptr_addr_lo: SDMA0_QUEUE0_RB_RPTR_ADDR_LO,
    rptr_addr_hi: SDMA0_QUEUE0_RB_RPTR_ADDR_HI,
    ib_cntl: SDMA0_QUEUE0_IB_CNTL,
    doorbell: SDMA0_QUEUE0_DOORBELL,
    doorbell_offset: SDMA0_QUEUE0_DOORBELL_OFFSET,
    wptr_poll_lo: SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO,
    wptr_poll_hi: SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI,
    minor_ptr_update: SDMA0_QUEUE0_MINOR_PTR_UPDATE,
};

/// The fields (`_MASK`) the queue bring-up uses, against the header.
pub const FIELD_FACTS: &[Fact] = &[
    Fact::constant(MASK, "SDMA0_MCU_CNTL__HALT_MASK", ENGINE.halt as u64),
    Fact::constant(MASK, "SDMA0_MCU_CNTL__RESET_MASK", ENGINE.reset as u64),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK",
        super::rb_cntl::RB_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK",
        super::rb_cntl::RB_SIZE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_RB_CNTL__MCU_WPTR_POLL_ENABLE_MASK",
        super::rb_cntl::WPTR_POLL_ENABLE_FW as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_RB_CNTL__RPTR_WRITEBACK_ENABLE_MASK",
        super::rb_cntl::RPTR_WRITEBACK_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_RB_CNTL__RPTR_WRITEBACK_TIMER_MASK",
        super::rb_cntl::RPTR_WRITEBACK_TIMER as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_RB_CNTL__RB_PRIV_MASK",
        super::rb_cntl::RB_PRIV as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_RB_CNTL__RB_VMID_MASK",
        super::rb_cntl::RB_VMID as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_IB_CNTL__IB_ENABLE_MASK",
        super::IB_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_DOORBELL__ENABLE_MASK",
        super::DOORBELL_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK",
        super::DOORBELL_OFFSET_MASK as u64,
    ),
];

/// `struct v12_sdma_mqd`: dword indices of the fields
/// `update_mqd_sdma()` fills (`rptr_addr_lo` before `_hi`, as the
/// registers).
pub const MQD_LAYOUT: MqdLayout = MqdLayout {
    rb_cntl: 0,
    rb_base: 1,
    rb_base_hi: 2,
    rptr_addr_lo: 7,
    rptr_addr_hi: 8,
    doorbell_offset: 17,
    sched_cntl: 20,
    dummy_reg: 23,
    wptr_poll_hi: 25,
    wptr_poll_lo: 24,
    engine_id: 126,
    queue_id: 127,
};

pub const MQD_FACTS: [Fact; 13] = super::mqd_facts!(MQD, "struct v12_sdma_mqd", MQD_LAYOUT);
