//! MES scheduler API frames (`mes_v11_api_def.h`, `mes_v12_api_def.h`).
//!
//! The driver talks to the MES scheduler pipe by writing fixed 64-dword
//! frames into its ring; each frame starts with a [`MesApiHeader`] and
//! carries an [`ApiStatus`] fence that MES writes when it has processed
//! the frame. The two generations differ in packing: v11 is
//! `#pragma pack(4)`, so 64-bit fields may sit at 4-byte offsets; v12 is
//! `pack(8)`, which inserts padding and moves later fields. They are
//! therefore distinct types in [`v11`] and [`v12`], with explicit `_pad`
//! fields where v12's compiler would pad. Every frame is exactly
//! [`FRAME_BYTES`] long, like the C unions (their `max_dwords_in_api`
//! member).

use barebell_facts::Fact;
use bitfield_struct::bitfield;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, LittleEndian, U32, U64};

pub mod v11;
pub mod v12;

pub type Le32 = U32<LittleEndian>;
pub type Le64 = U64<LittleEndian>;

/// `API_FRAME_SIZE_IN_DWORDS`.
pub const FRAME_DWORDS: usize = 64;
pub const FRAME_BYTES: usize = FRAME_DWORDS * 4;

/// `MES_API_TYPE_SCHEDULER`.
pub const API_TYPE_SCHEDULER: u8 = 1;

/// `union MES_API_HEADER` (same in v11 and v12).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct MesApiHeader {
    #[bits(4)]
    pub api_type: u8,
    #[bits(8)]
    pub opcode: u8,
    /// Frame length in dwords, header included.
    #[bits(8)]
    pub dwsize: u8,
    #[bits(12)]
    __: u16,
}

impl MesApiHeader {
    /// The header Linux puts on every scheduler frame
    /// (`mes_v11_0_add_hw_queue()` and siblings): scheduler type, the
    /// opcode, and the full frame size.
    pub const fn scheduler(opcode: u8) -> Self {
        MesApiHeader::new()
            .with_api_type(API_TYPE_SCHEDULER)
            .with_opcode(opcode)
            .with_dwsize(FRAME_DWORDS as u8)
    }
}

/// `struct MES_API_STATUS`: where and what MES writes on completion.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub struct ApiStatus {
    pub api_completion_fence_addr: Le64,
    pub api_completion_fence_value: Le64,
}
const _: () = assert!(core::mem::size_of::<ApiStatus>() == 16);

/// What every frame type shares.
pub trait Frame: FromBytes + IntoBytes + Immutable + KnownLayout + Sized {
    /// `MES_SCH_API_*` for this frame.
    const OPCODE: u8;
    fn header_mut(&mut self) -> &mut Le32;
    fn api_status_mut(&mut self) -> &mut ApiStatus;

    /// A zeroed frame with its header filled in.
    fn new() -> Self {
        let mut f = Self::new_zeroed();
        *f.header_mut() = Le32::new(MesApiHeader::scheduler(Self::OPCODE).into_bits());
        f
    }

    /// Asks MES to write `value` to GPU address `addr` once done.
    fn set_fence(&mut self, addr: u64, value: u64) {
        let s = self.api_status_mut();
        s.api_completion_fence_addr = Le64::new(addr);
        s.api_completion_fence_value = Le64::new(value);
    }
}

pub(crate) const fn header_facts(h: &'static str) -> [Fact; 7] {
    [
        Fact::size(h, "union MES_API_HEADER", 4),
        Fact::constant(
            h,
            "({ union MES_API_HEADER h_ = {0}; h_.type = ~0u; h_.u32All; })",
            MesApiHeader::new().with_api_type(0xf).into_bits() as u64,
        ),
        Fact::constant(
            h,
            "({ union MES_API_HEADER h_ = {0}; h_.opcode = ~0u; h_.u32All; })",
            MesApiHeader::new().with_opcode(0xff).into_bits() as u64,
        ),
        Fact::constant(
            h,
            "({ union MES_API_HEADER h_ = {0}; h_.dwsize = ~0u; h_.u32All; })",
            MesApiHeader::new().with_dwsize(0xff).into_bits() as u64,
        ),
        Fact::size(
            h,
            "struct MES_API_STATUS",
            core::mem::size_of::<ApiStatus>(),
        ),
        Fact::offset(
            h,
            "struct MES_API_STATUS",
            "api_completion_fence_value",
            core::mem::offset_of!(ApiStatus, api_completion_fence_value),
        ),
        Fact::constant(h, "API_FRAME_SIZE_IN_DWORDS", FRAME_DWORDS as u64),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Header words worked out by hand from `union MES_API_HEADER`
    /// (type:4, opcode:8, dwsize:8): ADD_QUEUE = 1 | 2 << 4 | 64 << 12.
    #[test]
    fn frames_start_with_the_scheduler_header() {
        let f = v11::AddQueue::new();
        assert_eq!(&f.as_bytes()[..4], &0x0004_0021u32.to_le_bytes());
        assert_eq!(f.as_bytes().len(), 256);
        let mut g = v12::Misc::new();
        g.set_fence(0x1234_5678_9000, 7);
        assert_eq!(
            &g.as_bytes()[..4],
            &(1u32 | 14 << 4 | 64 << 12).to_le_bytes()
        );
        // v12 MISC: api_status follows header+opcode at 8 (16-byte struct).
        assert_eq!(&g.as_bytes()[8..16], &0x1234_5678_9000u64.to_le_bytes());
        assert_eq!(&g.as_bytes()[16..24], &7u64.to_le_bytes());
    }

    /// v11 MISC is pack(4): header, opcode, 16-byte api_status, then the
    /// payload union at byte 24; v12 pads the union to 8 (also 24 here,
    /// since api_status already ends 8-aligned).
    #[test]
    fn misc_write_reg_payload_follows_the_status_fence() {
        let f = v11::Misc::write_reg(0x1234, 0xdead_beef);
        let b = f.as_bytes();
        assert_eq!(&b[4..8], &0u32.to_le_bytes());
        assert_eq!(&b[24..32], &[0x34, 0x12, 0, 0, 0xef, 0xbe, 0xad, 0xde]);
        let g = v12::Misc::read_reg(0x40, 0x1_0000_0000);
        let b = g.as_bytes();
        assert_eq!(&b[4..8], &3u32.to_le_bytes());
        assert_eq!(&b[24..28], &0x40u32.to_le_bytes());
        // v12 READ_REG: buffer_addr 8-aligned inside the payload.
        assert_eq!(&b[32..40], &0x1_0000_0000u64.to_le_bytes());
    }

    /// `MES_ERR_CODE(api_err=5, opcode=2, misc_op=0, category=1)` from
    /// `mes_v12_api_def.h`, expanded by hand: (5 | 2<<8 | 1<<24 | 1<<31) << 32.
    #[test]
    fn v12_status_decodes_mes_err_code() {
        let v = (5u64 | 2 << 8 | 1 << 24 | 1 << 31) << 32;
        assert_eq!(
            v12::decode_status(v),
            v12::Status::Failed {
                api_error: 5,
                opcode: 2,
                misc_opcode: 0,
                category: 1
            }
        );
        assert_eq!(v12::decode_status(42), v12::Status::Done(42));
    }
}
