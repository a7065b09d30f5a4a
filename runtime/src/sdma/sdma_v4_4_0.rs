//! SDMA 4.4.0 (GC 9.4.2, Aldebaran / MI210): the GFX queue's registers of
//! one of the five instances, from `sdma_4_4_0_offset.h` and
//! `_sh_mask.h`, which name them `SDMA0_*` (instance 0's).
//!
//! Linux drives 4.4.0 with `sdma_v4_0.c`. Its `sdma_v4_0_get_reg_offset()`
//! adds an offset to segment 0 of `SDMA0_HWIP`/`SDMA1_HWIP` for instances
//! 0 and 1 and to segment 1 of `SDMA2_HWIP`.. for the others; a caller
//! passes that base as segment 0 of the instance's bases
//! ([`instance_bases`]). The queue registers sit where 4.4.2's do;
//! `SDMA0_F32_CNTL` is at 0x2a (4.4.2's `SDMA_F32_CNTL` is at 0x02), and
//! unlike 4.4.2, Linux writes its `HALT` whoever loaded the firmware
//! (`sdma_v4_0_enable()`, from `sdma_v4_0_start()` and
//! `sdma_v4_0_hw_fini()`).
//!
//! User queues run on the engine's RLC queues, which the HWS loads from
//! KFD's `struct v9_sdma_mqd` ([`super::mqd_v9::V9SdmaMqd`], the same MQD
//! as 4.4.2's: `kfd_mqd_manager_v9.c`).

use super::EngineRegs;
use crate::regs::{IpBases, Reg};
use barebell_facts::Fact;

const OFF: &str = "sdma_4_4_0_offset.h";
const MASK: &str = "sdma_4_4_0_sh_mask.h";

sdma_regs! {
    SDMA0_F32_CNTL = 0x002a, 0;
    SDMA0_GFX_RB_CNTL = 0x0080, 0;
    SDMA0_GFX_RB_BASE = 0x0081, 0;
    SDMA0_GFX_RB_BASE_HI = 0x0082, 0;
    SDMA0_GFX_RB_RPTR = 0x0083, 0;
    SDMA0_GFX_RB_RPTR_HI = 0x0084, 0;
    SDMA0_GFX_RB_WPTR = 0x0085, 0;
    SDMA0_GFX_RB_WPTR_HI = 0x0086, 0;
    SDMA0_GFX_RB_WPTR_POLL_CNTL = 0x0087, 0;
    SDMA0_GFX_RB_RPTR_ADDR_HI = 0x0088, 0;
    SDMA0_GFX_RB_RPTR_ADDR_LO = 0x0089, 0;
    SDMA0_GFX_IB_CNTL = 0x008a, 0;
    SDMA0_GFX_DOORBELL = 0x0092, 0;
    SDMA0_GFX_DOORBELL_OFFSET = 0x00ab, 0;
    SDMA0_GFX_RB_WPTR_POLL_ADDR_HI = 0x00b2, 0;
    SDMA0_GFX_RB_WPTR_POLL_ADDR_LO = 0x00b3, 0;
    SDMA0_GFX_MINOR_PTR_UPDATE = 0x00b5, 0;
}

/// `SDMA0_F32_CNTL.HALT` (`sdma_v4_0_enable()`).
pub const F32_HALT: u32 = 0x0000_0001;
/// `SDMA0_GFX_RB_WPTR_POLL_CNTL.F32_POLL_ENABLE`.
pub const F32_POLL_ENABLE: u32 = 0x0000_0004;

/// The GFX queue of one SDMA 4.4.0 instance. `reset` is 0:
/// `sdma_v4_0_enable()` toggles `HALT` alone.
pub const ENGINE: EngineRegs = EngineRegs {
    cntl: SDMA0_F32_CNTL,
    halt: F32_HALT,
    reset: 0,
    rb_cntl: SDMA0_GFX_RB_CNTL,
    rb_base: SDMA0_GFX_RB_BASE,
    rb_base_hi: SDMA0_GFX_RB_BASE_HI,
    rb_rptr: SDMA0_GFX_RB_RPTR,
    rb_rptr_hi: SDMA0_GFX_RB_RPTR_HI,
    rb_wptr: SDMA0_GFX_RB_WPTR,
    rb_wptr_hi: SDMA0_GFX_RB_WPTR_HI,
    rptr_addr_lo: SDMA0_GFX_RB_RPTR_ADDR_LO,
    rptr_addr_hi: SDMA0_GFX_RB_RPTR_ADDR_HI,
    ib_cntl: SDMA0_GFX_IB_CNTL,
    doorbell: SDMA0_GFX_DOORBELL,
    doorbell_offset: SDMA0_GFX_DOORBELL_OFFSET,
    wptr_poll_lo: SDMA0_GFX_RB_WPTR_POLL_ADDR_LO,
    wptr_poll_hi: SDMA0_GFX_RB_WPTR_POLL_ADDR_HI,
    minor_ptr_update: SDMA0_GFX_MINOR_PTR_UPDATE,
};

/// Instance `instance`'s register base as segment 0, from the bases
/// discovery lists for it (`sdma_v4_0_get_reg_offset()`: segment 0 for
/// instances 0 and 1, segment 1 for 2..7).
pub fn instance_bases(instance: u8, discovered: &IpBases) -> IpBases {
    let seg = if instance < 2 { 0 } else { 1 };
    IpBases::new(&[discovered.0[seg]])
}

/// The fields the bring-up writes, against the header.
pub const FIELD_FACTS: &[Fact] = &[
    Fact::constant(MASK, "SDMA0_F32_CNTL__HALT_MASK", F32_HALT as u64),
    Fact::constant(
        MASK,
        "SDMA0_GFX_RB_WPTR_POLL_CNTL__F32_POLL_ENABLE_MASK",
        F32_POLL_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_GFX_RB_CNTL__RB_ENABLE_MASK",
        super::rb_cntl::RB_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_GFX_RB_CNTL__RB_SIZE_MASK",
        super::rb_cntl::RB_SIZE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_GFX_RB_CNTL__RB_VMID_MASK",
        super::rb_cntl::RB_VMID as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_GFX_IB_CNTL__IB_ENABLE_MASK",
        super::IB_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_GFX_DOORBELL__ENABLE_MASK",
        super::DOORBELL_ENABLE as u64,
    ),
    Fact::constant(
        MASK,
        "SDMA0_GFX_DOORBELL_OFFSET__OFFSET_MASK",
        super::DOORBELL_OFFSET_MASK as u64,
    ),
];
