//! `struct v9_sdma_mqd` (`v9_structs.h`) as `kfd_mqd_manager_v9.c` builds
//! it (`init_mqd_sdma()`: zero, then `update_mqd_sdma()`), for the SDMA
//! 4.4.2 engines of GC 9.4.3 parts: the runtime's one v9 SDMA MQD (HWS
//! MAP_QUEUES names it). Field positions are `sdma0_4_0_sh_mask.h`'s, the
//! header KFD's v9 manager includes.

use barebell_facts::Fact;
use bitfield_struct::bitfield;
use zerocopy::{FromBytes, Immutable, IntoBytes};

/// `sizeof(struct v9_sdma_mqd)`.
pub const SDMA_MQD_BYTES: usize = 512;
/// `SDMA_RLC_DUMMY_DEFAULT`, which `update_mqd_sdma()` writes into
/// `sdmax_rlcx_dummy_reg` (a `.c` constant: no header fact checks it).
pub const RLC_DUMMY_DEFAULT: u32 = 0xf;
/// `RPTR_WRITEBACK_TIMER` KFD uses (6).
pub const RPTR_WRITEBACK_TIMER: u8 = 6;

/// `SDMA0_RLC0_RB_CNTL` (`sdma0_4_0_sh_mask.h`).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RlcRbCntl {
    pub rb_enable: bool,
    /// log2(ring dwords).
    #[bits(6)]
    pub rb_size: u8,
    #[bits(2)]
    __: u8,
    pub rb_swap_enable: bool,
    #[bits(2)]
    __: u8,
    pub rptr_writeback_enable: bool,
    pub rptr_writeback_swap_enable: bool,
    #[bits(2)]
    __: u8,
    #[bits(5)]
    pub rptr_writeback_timer: u8,
    #[bits(2)]
    __: u8,
    pub rb_priv: bool,
    #[bits(4)]
    pub rb_vmid: u8,
    #[bits(4)]
    __: u8,
}

/// `SDMA0_RLC0_DOORBELL_OFFSET.OFFSET` (bits 27:2).
pub const DOORBELL_OFFSET_SHIFT: u32 = 2;
pub const DOORBELL_OFFSET_MASK: u32 = 0x0FFF_FFFC;

/// `struct v9_sdma_mqd`: the fields `update_mqd_sdma()` sets are named.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable)]
#[repr(C)]
pub struct V9SdmaMqd {
    pub sdmax_rlcx_rb_cntl: u32,
    pub sdmax_rlcx_rb_base: u32,
    pub sdmax_rlcx_rb_base_hi: u32,
    _r3: [u32; 5],
    pub sdmax_rlcx_rb_rptr_addr_hi: u32,
    pub sdmax_rlcx_rb_rptr_addr_lo: u32,
    _r10: [u32; 12],
    pub sdmax_rlcx_doorbell_offset: u32,
    _r23: [u32; 4],
    pub sdmax_rlcx_dummy_reg: u32,
    /// Left 0 by KFD's v9 `update_mqd_sdma()` (the doorbell carries the
    /// write pointer).
    pub sdmax_rlcx_rb_wptr_poll_addr_hi: u32,
    pub sdmax_rlcx_rb_wptr_poll_addr_lo: u32,
    _r30: [u32; 96],
    pub sdma_engine_id: u32,
    pub sdma_queue_id: u32,
}

const _: () = assert!(core::mem::size_of::<V9SdmaMqd>() == SDMA_MQD_BYTES);

/// What `update_mqd_sdma()` takes from `struct queue_properties`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaMqdQueue {
    pub ring_address: u64,
    pub ring_bytes: u64,
    /// `q->read_ptr`: where the engine writes the read pointer back.
    pub rptr_address: u64,
    /// Doorbell dword in the doorbell BAR (`q->doorbell_off`).
    pub doorbell_dword: u32,
    pub vmid: u8,
    pub engine: u32,
    pub queue: u32,
}

/// Why a v9 SDMA MQD was not built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaMqdV9Error {
    /// Not a power of two of at least 256 bytes, or beyond `RB_SIZE`.
    RingSize {
        bytes: u64,
    },
    /// The ring is not 256-byte aligned or the rptr not 4-byte aligned
    /// (or either is zero).
    Misaligned {
        field: &'static str,
        address: u64,
    },
    Vmid {
        vmid: u8,
    },
    DoorbellOffset {
        dword: u32,
    },
}

impl core::fmt::Display for SdmaMqdV9Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SdmaMqdV9Error::RingSize { bytes } => write!(
                f,
                "SDMA ring of {bytes} bytes: the engine needs a power of two of at least 256 bytes"
            ),
            SdmaMqdV9Error::Misaligned { field, address } => {
                write!(
                    f,
                    "the SDMA queue's {field} {address:#x} is zero or misaligned"
                )
            }
            SdmaMqdV9Error::Vmid { vmid } => {
                write!(f, "VMID {vmid} does not fit SDMA RB_CNTL.RB_VMID (0..=15)")
            }
            SdmaMqdV9Error::DoorbellOffset { dword } => {
                write!(
                    f,
                    "doorbell dword {dword:#x} does not fit SDMA DOORBELL_OFFSET"
                )
            }
        }
    }
}

impl V9SdmaMqd {
    /// `init_mqd_sdma()`: the zeroed MQD `update_mqd_sdma()` fills.
    pub fn build(q: &SdmaMqdQueue) -> Result<Self, SdmaMqdV9Error> {
        let bytes = q.ring_bytes;
        if !bytes.is_power_of_two() || bytes < 256 || (bytes / 4).trailing_zeros() > 0x3F {
            return Err(SdmaMqdV9Error::RingSize { bytes });
        }
        if q.ring_address == 0 || !q.ring_address.is_multiple_of(256) {
            return Err(SdmaMqdV9Error::Misaligned {
                field: "ring address",
                address: q.ring_address,
            });
        }
        if q.rptr_address == 0 || !q.rptr_address.is_multiple_of(4) {
            return Err(SdmaMqdV9Error::Misaligned {
                field: "read pointer address",
                address: q.rptr_address,
            });
        }
        if q.vmid > 15 {
            return Err(SdmaMqdV9Error::Vmid { vmid: q.vmid });
        }
        if q.doorbell_dword > DOORBELL_OFFSET_MASK >> DOORBELL_OFFSET_SHIFT {
            return Err(SdmaMqdV9Error::DoorbellOffset {
                dword: q.doorbell_dword,
            });
        }
        let mut m = <V9SdmaMqd as zerocopy::FromZeros>::new_zeroed();
        m.sdmax_rlcx_rb_cntl = RlcRbCntl::new()
            .with_rb_size((bytes / 4).trailing_zeros() as u8)
            .with_rb_vmid(q.vmid)
            .with_rptr_writeback_enable(true)
            .with_rptr_writeback_timer(RPTR_WRITEBACK_TIMER)
            .into_bits();
        m.sdmax_rlcx_rb_base = (q.ring_address >> 8) as u32;
        m.sdmax_rlcx_rb_base_hi = (q.ring_address >> 40) as u32;
        m.sdmax_rlcx_rb_rptr_addr_lo = q.rptr_address as u32;
        m.sdmax_rlcx_rb_rptr_addr_hi = (q.rptr_address >> 32) as u32;
        m.sdmax_rlcx_doorbell_offset = q.doorbell_dword << DOORBELL_OFFSET_SHIFT;
        m.sdma_engine_id = q.engine;
        m.sdma_queue_id = q.queue;
        m.sdmax_rlcx_dummy_reg = RLC_DUMMY_DEFAULT;
        Ok(m)
    }

    /// The MQD as the 128 dwords the device reads.
    pub fn dwords(&self) -> [u32; super::MQD_DWORDS] {
        zerocopy::transmute!(*self)
    }
}

const H: &str = "v9_structs.h";
const T: &str = "struct v9_sdma_mqd";
const SH: &str = "sdma0_4_0_sh_mask.h";

macro_rules! offsets {
    ($($f:ident),*) => {
        [$(Fact::offset(H, T, stringify!($f), core::mem::offset_of!(V9SdmaMqd, $f)),)*]
    };
}

const fn m(expr: &'static str, v: u32) -> Fact {
    Fact::constant(SH, expr, v as u64)
}

/// The layout and the fields `update_mqd_sdma()` encodes.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    [Fact::size(H, T, SDMA_MQD_BYTES)],
    offsets!(
        sdmax_rlcx_rb_cntl,
        sdmax_rlcx_rb_base,
        sdmax_rlcx_rb_base_hi,
        sdmax_rlcx_rb_rptr_addr_hi,
        sdmax_rlcx_rb_rptr_addr_lo,
        sdmax_rlcx_doorbell_offset,
        sdmax_rlcx_dummy_reg,
        sdmax_rlcx_rb_wptr_poll_addr_hi,
        sdmax_rlcx_rb_wptr_poll_addr_lo,
        sdma_engine_id,
        sdma_queue_id
    ),
    [
        m(
            "SDMA0_RLC0_RB_CNTL__RB_ENABLE_MASK",
            RlcRbCntl::new().with_rb_enable(true).into_bits()
        ),
        m(
            "SDMA0_RLC0_RB_CNTL__RB_SIZE_MASK",
            RlcRbCntl::new().with_rb_size(0x3F).into_bits()
        ),
        m(
            "SDMA0_RLC0_RB_CNTL__RB_SWAP_ENABLE_MASK",
            RlcRbCntl::new().with_rb_swap_enable(true).into_bits()
        ),
        m(
            "SDMA0_RLC0_RB_CNTL__RPTR_WRITEBACK_ENABLE_MASK",
            RlcRbCntl::new()
                .with_rptr_writeback_enable(true)
                .into_bits()
        ),
        m(
            "SDMA0_RLC0_RB_CNTL__RPTR_WRITEBACK_SWAP_ENABLE_MASK",
            RlcRbCntl::new()
                .with_rptr_writeback_swap_enable(true)
                .into_bits()
        ),
        m(
            "SDMA0_RLC0_RB_CNTL__RPTR_WRITEBACK_TIMER_MASK",
            RlcRbCntl::new().with_rptr_writeback_timer(0x1F).into_bits()
        ),
        m(
            "SDMA0_RLC0_RB_CNTL__RB_PRIV_MASK",
            RlcRbCntl::new().with_rb_priv(true).into_bits()
        ),
        m(
            "SDMA0_RLC0_RB_CNTL__RB_VMID_MASK",
            RlcRbCntl::new().with_rb_vmid(0xF).into_bits()
        ),
        m(
            "SDMA0_RLC0_DOORBELL_OFFSET__OFFSET_MASK",
            DOORBELL_OFFSET_MASK
        ),
        m(
            "SDMA0_RLC0_DOORBELL_OFFSET__OFFSET__SHIFT",
            DOORBELL_OFFSET_SHIFT
        ),
    ],
);
