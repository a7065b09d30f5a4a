//! SDMA 4.4.2 (GC 9.4.3, MI300): the GFX queue's registers of one SDMA
//! instance and the fields `sdma_v4_4_2_gfx_resume()` sets. The KFD MQD
//! (`struct v9_sdma_mqd`, `kfd_mqd_manager_v9.c`) is
//! [`super::mqd_v9::V9SdmaMqd`].
//!
//! Unlike 6.0 and 7.0, whose queue registers sit in the GC header on the
//! GC bases, 4.4.2's live in the SDMA IP's own header and every instance
//! has its own bases: `sdma_v4_4_2_get_reg_offset()` adds
//! `adev->reg_offset[SDMA0_HWIP][dev_inst][0]`, so a caller passes the
//! bases discovery gives that SDMA instance. The queue is `SDMA_GFX`
//! (tinygrad's `AM_SDMA.setup_ring` binds `regSDMA_GFX` of instance
//! `pipe + queue * 4` on SDMA 4.4).
//!
//! Three things differ from 6.0 and are facts below: `SDMA_F32_CNTL` has
//! no thread-reset bit, `SDMA_GFX_RB_CNTL` has no write-pointer-poll
//! enable (polling is `SDMA_GFX_RB_WPTR_POLL_CNTL.F32_POLL_ENABLE`, which
//! Linux leaves 0 outside SR-IOV), and the v9 MQD has no
//! `sdmax_rlcx_sched_cntl`.

use super::EngineRegs;
use crate::regs::Reg;
use barebell_facts::Fact;

const OFF: &str = "sdma_4_4_2_offset.h";
const MASK: &str = "sdma_4_4_2_sh_mask.h";

sdma_regs! {
    SDMA_F32_CNTL = 0x0002, 0;
    SDMA_GFX_RB_CNTL = 0x0080, 0;
    SDMA_GFX_RB_BASE = 0x0081, 0;
    SDMA_GFX_RB_BASE_HI = 0x0082, 0;
    SDMA_GFX_RB_RPTR = 0x0083, 0;
    SDMA_GFX_RB_RPTR_HI = 0x0084, 0;
    SDMA_GFX_RB_WPTR = 0x0085, 0;
    SDMA_GFX_RB_WPTR_HI = 0x0086, 0;
    SDMA_GFX_RB_WPTR_POLL_CNTL = 0x0087, 0;
    SDMA_GFX_RB_RPTR_ADDR_HI = 0x0088, 0;
    SDMA_GFX_RB_RPTR_ADDR_LO = 0x0089, 0;
    SDMA_GFX_IB_CNTL = 0x008a, 0;
    SDMA_GFX_DOORBELL = 0x0092, 0;
    SDMA_GFX_DOORBELL_OFFSET = 0x00ab, 0;
    SDMA_GFX_RB_WPTR_POLL_ADDR_HI = 0x00b2, 0;
    SDMA_GFX_RB_WPTR_POLL_ADDR_LO = 0x00b3, 0;
    SDMA_GFX_MINOR_PTR_UPDATE = 0x00b5, 0;
}

/// `SDMA_F32_CNTL.HALT` (`sdma_v4_4_2_inst_enable()`).
pub const F32_HALT: u32 = 0x0000_0001;
/// `SDMA_GFX_RB_WPTR_POLL_CNTL.F32_POLL_ENABLE`.
pub const F32_POLL_ENABLE: u32 = 0x0000_0004;

/// The GFX queue of one SDMA 4.4.2 instance. `reset` is 0: the 4.4.2
/// `SDMA_F32_CNTL` has no `TH1_RESET` field, and `sdma_v4_4_2_inst_enable()`
/// toggles `HALT` alone.
pub const ENGINE: EngineRegs = EngineRegs {
    cntl: SDMA_F32_CNTL,
    halt: F32_HALT,
    reset: 0,
    rb_cntl: SDMA_GFX_RB_CNTL,
    rb_base: SDMA_GFX_RB_BASE,
    rb_base_hi: SDMA_GFX_RB_BASE_HI,
    rb_rptr: SDMA_GFX_RB_RPTR,
    rb_rptr_hi: SDMA_GFX_RB_RPTR_HI,
    rb_wptr: SDMA_GFX_RB_WPTR,
    rb_wptr_hi: SDMA_GFX_RB_WPTR_HI,
    rptr_addr_lo: SDMA_GFX_RB_RPTR_ADDR_LO,
    rptr_addr_hi: SDMA_GFX_RB_RPTR_ADDR_HI,
    ib_cntl: SDMA_GFX_IB_CNTL,
    doorbell: SDMA_GFX_DOORBELL,
    doorbell_offset: SDMA_GFX_DOORBELL_OFFSET,
    wptr_poll_lo: SDMA_GFX_RB_WPTR_POLL_ADDR_LO,
    wptr_poll_hi: SDMA_GFX_RB_WPTR_POLL_ADDR_HI,
    minor_ptr_update: SDMA_GFX_MINOR_PTR_UPDATE,
};

/// The fields (`_MASK`, and the shifts `update_mqd_sdma()` uses) the queue
/// bring-up uses, against the header.
pub const FIELD_FACTS: &[Fact] = &[
    Fact::constant(MASK, "SDMA_F32_CNTL__HALT_MASK", F32_HALT as u64),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_WPTR_POLL_CNTL__F32_POLL_ENABLE_MASK",
        F32_POLL_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RB_ENABLE_MASK",
        super::rb_cntl::RB_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RB_SIZE_MASK",
        super::rb_cntl::RB_SIZE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RB_SIZE__SHIFT",
        super::rb_cntl::RB_SIZE_SHIFT as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RPTR_WRITEBACK_ENABLE_MASK",
        super::rb_cntl::RPTR_WRITEBACK_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RPTR_WRITEBACK_TIMER_MASK",
        super::rb_cntl::RPTR_WRITEBACK_TIMER as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RPTR_WRITEBACK_TIMER__SHIFT",
        super::rb_cntl::RPTR_WRITEBACK_TIMER_SHIFT as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RB_PRIV_MASK",
        super::rb_cntl::RB_PRIV as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RB_VMID_MASK",
        super::rb_cntl::RB_VMID as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_RB_CNTL__RB_VMID__SHIFT",
        super::rb_cntl::RB_VMID_SHIFT as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_IB_CNTL__IB_ENABLE_MASK",
        super::IB_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_DOORBELL__ENABLE_MASK",
        super::DOORBELL_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_DOORBELL_OFFSET__OFFSET_MASK",
        super::DOORBELL_OFFSET_MASK as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA_GFX_DOORBELL_OFFSET__OFFSET__SHIFT",
        super::DOORBELL_OFFSET_SHIFT as u64,
    ),
];
