//! `struct v9_sdma_mqd` (`v9_structs.h`) decoded with the model's own
//! offsets and `sdma0_4_0_sh_mask.h` bit positions (conformance facts
//! below), for the SDMA 4.4.2 engines of GC 9.4.3 parts: the model's one
//! v9 SDMA MQD (the HWS model reads it for MAP_QUEUES on an SDMA engine).

use super::{Bits, le32};
use barebell_facts::Fact;

/// `sizeof(struct v9_sdma_mqd)`.
pub const SDMA_MQD_BYTES: usize = 512;

/// Dword indices.
pub mod dw {
    pub const RB_CNTL: usize = 0;
    pub const RB_BASE: usize = 1;
    pub const RB_BASE_HI: usize = 2;
    pub const RB_RPTR_ADDR_HI: usize = 8;
    pub const RB_RPTR_ADDR_LO: usize = 9;
    pub const DOORBELL_OFFSET: usize = 22;
    pub const DUMMY_REG: usize = 27;
    pub const RB_WPTR_POLL_ADDR_HI: usize = 28;
    pub const RB_WPTR_POLL_ADDR_LO: usize = 29;
    pub const ENGINE_ID: usize = 126;
    pub const QUEUE_ID: usize = 127;
}

/// `SDMA0_RLC0_RB_CNTL` fields.
pub const RB_SIZE: Bits = Bits::new(1, 6);
pub const RPTR_WRITEBACK_ENABLE: Bits = Bits::new(12, 1);
pub const RPTR_WRITEBACK_TIMER: Bits = Bits::new(16, 5);
pub const RB_VMID: Bits = Bits::new(24, 4);
/// `SDMA0_RLC0_DOORBELL_OFFSET.OFFSET`.
pub const DOORBELL_OFFSET: Bits = Bits::new(2, 26);

/// One decoded v9 SDMA MQD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaMqdV9 {
    pub ring_address: u64,
    /// `2^RB_SIZE` dwords.
    pub ring_bytes: u64,
    pub vmid: u32,
    pub rptr_writeback: bool,
    pub rptr_writeback_timer: u32,
    pub rptr_address: u64,
    pub doorbell_dword: u32,
    /// KFD's v9 `update_mqd_sdma()` leaves it 0.
    pub wptr_poll_address: u64,
    pub dummy_reg: u32,
    pub engine: u32,
    pub queue: u32,
}

/// Why a v9 SDMA MQD is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaMqdV9Fault {
    Short {
        len: usize,
    },
    /// A ring under 256 bytes (`RB_SIZE` below 6).
    RingSize {
        field: u32,
    },
}

impl core::fmt::Display for SdmaMqdV9Fault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SdmaMqdV9Fault::Short { len } => {
                write!(f, "v9 SDMA MQD of {len} bytes, expected 512")
            }
            SdmaMqdV9Fault::RingSize { field } => {
                write!(f, "v9 SDMA MQD RB_SIZE {field} is a ring under 256 bytes")
            }
        }
    }
}

impl SdmaMqdV9 {
    pub fn decode(b: &[u8]) -> Result<Self, SdmaMqdV9Fault> {
        if b.len() < SDMA_MQD_BYTES {
            return Err(SdmaMqdV9Fault::Short { len: b.len() });
        }
        let d = |i: usize| le32(b, i * 4);
        let cntl = d(dw::RB_CNTL);
        let size = RB_SIZE.get(cntl);
        if size < 6 {
            return Err(SdmaMqdV9Fault::RingSize { field: size });
        }
        Ok(SdmaMqdV9 {
            ring_address: (u64::from(d(dw::RB_BASE)) | u64::from(d(dw::RB_BASE_HI)) << 32) << 8,
            ring_bytes: 4u64 << size,
            vmid: RB_VMID.get(cntl),
            rptr_writeback: RPTR_WRITEBACK_ENABLE.is_set(cntl),
            rptr_writeback_timer: RPTR_WRITEBACK_TIMER.get(cntl),
            rptr_address: u64::from(d(dw::RB_RPTR_ADDR_LO))
                | u64::from(d(dw::RB_RPTR_ADDR_HI)) << 32,
            doorbell_dword: DOORBELL_OFFSET.get(d(dw::DOORBELL_OFFSET)),
            wptr_poll_address: u64::from(d(dw::RB_WPTR_POLL_ADDR_LO))
                | u64::from(d(dw::RB_WPTR_POLL_ADDR_HI)) << 32,
            dummy_reg: d(dw::DUMMY_REG),
            engine: d(dw::ENGINE_ID),
            queue: d(dw::QUEUE_ID),
        })
    }
}

const H: &str = "v9_structs.h";
const T: &str = "struct v9_sdma_mqd";
const SH: &str = "sdma0_4_0_sh_mask.h";

const fn o(field: &'static str, dword: usize) -> Fact {
    Fact::offset(H, T, field, dword * 4)
}
const fn m(expr: &'static str, b: Bits) -> Fact {
    Fact::constant(SH, expr, b.mask() as u64)
}

/// The model's own v9 SDMA MQD offsets and masks.
pub const FACTS: &[Fact] = &[
    Fact::size(H, T, SDMA_MQD_BYTES),
    o("sdmax_rlcx_rb_cntl", dw::RB_CNTL),
    o("sdmax_rlcx_rb_base", dw::RB_BASE),
    o("sdmax_rlcx_rb_base_hi", dw::RB_BASE_HI),
    o("sdmax_rlcx_rb_rptr_addr_hi", dw::RB_RPTR_ADDR_HI),
    o("sdmax_rlcx_rb_rptr_addr_lo", dw::RB_RPTR_ADDR_LO),
    o("sdmax_rlcx_doorbell_offset", dw::DOORBELL_OFFSET),
    o("sdmax_rlcx_dummy_reg", dw::DUMMY_REG),
    o("sdmax_rlcx_rb_wptr_poll_addr_hi", dw::RB_WPTR_POLL_ADDR_HI),
    o("sdmax_rlcx_rb_wptr_poll_addr_lo", dw::RB_WPTR_POLL_ADDR_LO),
    o("sdma_engine_id", dw::ENGINE_ID),
    o("sdma_queue_id", dw::QUEUE_ID),
    m("SDMA0_RLC0_RB_CNTL__RB_SIZE_MASK", RB_SIZE),
    m(
        "SDMA0_RLC0_RB_CNTL__RPTR_WRITEBACK_ENABLE_MASK",
        RPTR_WRITEBACK_ENABLE,
    ),
    m(
        "SDMA0_RLC0_RB_CNTL__RPTR_WRITEBACK_TIMER_MASK",
        RPTR_WRITEBACK_TIMER,
    ),
    m("SDMA0_RLC0_RB_CNTL__RB_VMID_MASK", RB_VMID),
    m("SDMA0_RLC0_DOORBELL_OFFSET__OFFSET_MASK", DOORBELL_OFFSET),
];
