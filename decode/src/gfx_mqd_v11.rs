//! `struct v11_gfx_mqd` (`v11_structs.h`), the graphics queue's MQD as
//! `gfx_v11_0_gfx_mqd_init()` fills it, decoded with the model's own
//! offsets and `gc_11_0_0_sh_mask.h` bit positions (conformance facts
//! below). The MES model reads it when Linux maps its kernel graphics
//! ring (`amdgpu_gfx_enable_kgq()` → `mes_v11_0_map_legacy_queue()`).

use super::{Bits, le32};
use barebell_facts::Fact;

/// `sizeof(struct v11_gfx_mqd)`.
pub const GFX_MQD_BYTES: usize = 2048;

/// Dword indices.
pub mod dw {
    pub const MQD_BASE_ADDR: usize = 0x80;
    pub const MQD_BASE_ADDR_HI: usize = 0x81;
    pub const HQD_ACTIVE: usize = 0x82;
    pub const HQD_VMID: usize = 0x83;
    pub const HQD_BASE: usize = 0x88;
    pub const HQD_BASE_HI: usize = 0x89;
    pub const HQD_RPTR: usize = 0x8A;
    pub const HQD_RPTR_ADDR: usize = 0x8B;
    pub const HQD_RPTR_ADDR_HI: usize = 0x8C;
    pub const WPTR_POLL_ADDR_LO: usize = 0x8D;
    pub const WPTR_POLL_ADDR_HI: usize = 0x8E;
    pub const DOORBELL_CONTROL: usize = 0x8F;
    pub const HQD_CNTL: usize = 0x91;
    pub const HQD_WPTR: usize = 0x95;
    pub const HQD_WPTR_HI: usize = 0x96;
    pub const MQD_CONTROL: usize = 0xA2;
}

/// `CP_GFX_HQD_CNTL.RB_BUFSZ`: the ring holds `2^(RB_BUFSZ+1)` dwords
/// (`gfx_v11_0_gfx_mqd_init()`: `order_base_2(queue_size / 4) - 1`).
pub const RB_BUFSZ: Bits = Bits::new(0, 6);
/// `CP_RB_DOORBELL_CONTROL.DOORBELL_OFFSET` (dwords) and `DOORBELL_EN`.
pub const DOORBELL_OFFSET: Bits = Bits::new(2, 26);
pub const DOORBELL_EN: Bits = Bits::new(30, 1);
/// `CP_GFX_HQD_VMID.VMID`.
pub const VMID: Bits = Bits::new(0, 4);
/// `CP_GFX_MQD_CONTROL.PRIV_STATE`.
pub const PRIV_STATE: Bits = Bits::new(8, 1);

/// One decoded v11 graphics MQD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GfxMqdV11 {
    /// `CP_GFX_HQD_BASE(_HI)` << 8.
    pub ring_address: u64,
    pub ring_dwords: u64,
    pub vmid: u32,
    pub active: bool,
    pub privileged: bool,
    pub rptr: u32,
    /// Where the CP reports its read pointer (dwords).
    pub rptr_address: u64,
    pub wptr_poll_address: u64,
    /// The doorbell dword, if `DOORBELL_EN`.
    pub doorbell: Option<u32>,
    pub wptr: u64,
    pub mqd_address: u64,
}

/// Why a v11 graphics MQD is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GfxMqdV11Fault {
    Short {
        len: usize,
    },
    /// `RB_BUFSZ` past what a ring's 32-bit byte size holds.
    RingSize {
        field: u32,
    },
}

impl core::fmt::Display for GfxMqdV11Fault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            GfxMqdV11Fault::Short { len } => {
                write!(f, "v11 graphics MQD of {len} bytes, expected 2048")
            }
            GfxMqdV11Fault::RingSize { field } => {
                write!(
                    f,
                    "v11 graphics MQD RB_BUFSZ {field} is larger than a ring can be"
                )
            }
        }
    }
}

impl GfxMqdV11 {
    pub fn decode(b: &[u8]) -> Result<Self, GfxMqdV11Fault> {
        if b.len() < GFX_MQD_BYTES {
            return Err(GfxMqdV11Fault::Short { len: b.len() });
        }
        let d = |i: usize| le32(b, i * 4);
        let q = |lo: usize, hi: usize| u64::from(d(lo)) | u64::from(d(hi)) << 32;
        let bufsz = RB_BUFSZ.get(d(dw::HQD_CNTL));
        if bufsz > 28 {
            return Err(GfxMqdV11Fault::RingSize { field: bufsz });
        }
        let db = d(dw::DOORBELL_CONTROL);
        Ok(GfxMqdV11 {
            ring_address: q(dw::HQD_BASE, dw::HQD_BASE_HI) << 8,
            ring_dwords: 2u64 << bufsz,
            vmid: VMID.get(d(dw::HQD_VMID)),
            active: d(dw::HQD_ACTIVE) & 1 != 0,
            privileged: PRIV_STATE.is_set(d(dw::MQD_CONTROL)),
            rptr: d(dw::HQD_RPTR),
            rptr_address: q(dw::HQD_RPTR_ADDR, dw::HQD_RPTR_ADDR_HI),
            wptr_poll_address: q(dw::WPTR_POLL_ADDR_LO, dw::WPTR_POLL_ADDR_HI),
            doorbell: DOORBELL_EN.is_set(db).then(|| DOORBELL_OFFSET.get(db)),
            wptr: q(dw::HQD_WPTR, dw::HQD_WPTR_HI),
            mqd_address: q(dw::MQD_BASE_ADDR, dw::MQD_BASE_ADDR_HI),
        })
    }
}

const H: &str = "v11_structs.h";
const T: &str = "struct v11_gfx_mqd";
const SH: &str = "gc_11_0_0_sh_mask.h";

const fn o(field: &'static str, dword: usize) -> Fact {
    Fact::offset(H, T, field, dword * 4)
}
const fn m(expr: &'static str, b: Bits) -> Fact {
    Fact::constant(SH, expr, b.mask() as u64)
}

/// The model's own v11 graphics MQD offsets and masks.
pub const FACTS: &[Fact] = &[
    Fact::size(H, T, GFX_MQD_BYTES),
    o("cp_mqd_base_addr", dw::MQD_BASE_ADDR),
    o("cp_mqd_base_addr_hi", dw::MQD_BASE_ADDR_HI),
    o("cp_gfx_hqd_active", dw::HQD_ACTIVE),
    o("cp_gfx_hqd_vmid", dw::HQD_VMID),
    o("cp_gfx_hqd_base", dw::HQD_BASE),
    o("cp_gfx_hqd_base_hi", dw::HQD_BASE_HI),
    o("cp_gfx_hqd_rptr", dw::HQD_RPTR),
    o("cp_gfx_hqd_rptr_addr", dw::HQD_RPTR_ADDR),
    o("cp_gfx_hqd_rptr_addr_hi", dw::HQD_RPTR_ADDR_HI),
    o("cp_rb_wptr_poll_addr_lo", dw::WPTR_POLL_ADDR_LO),
    o("cp_rb_wptr_poll_addr_hi", dw::WPTR_POLL_ADDR_HI),
    o("cp_rb_doorbell_control", dw::DOORBELL_CONTROL),
    o("cp_gfx_hqd_cntl", dw::HQD_CNTL),
    o("cp_gfx_hqd_wptr", dw::HQD_WPTR),
    o("cp_gfx_hqd_wptr_hi", dw::HQD_WPTR_HI),
    o("cp_gfx_mqd_control", dw::MQD_CONTROL),
    m("CP_GFX_HQD_CNTL__RB_BUFSZ_MASK", RB_BUFSZ),
    m(
        "CP_RB_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK",
        DOORBELL_OFFSET,
    ),
    m("CP_RB_DOORBELL_CONTROL__DOORBELL_EN_MASK", DOORBELL_EN),
    m("CP_GFX_HQD_VMID__VMID_MASK", VMID),
    m("CP_GFX_MQD_CONTROL__PRIV_STATE_MASK", PRIV_STATE),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The MQD `gfx_v11_0_gfx_mqd_init()` builds for a 256 KiB ring
    /// (`RB_BUFSZ` = order_base_2(65536) - 1 = 15) on doorbell dword 0x8.
    #[test]
    fn decodes_what_linux_builds() {
        let mut b = [0u8; GFX_MQD_BYTES];
        let mut put = |i: usize, v: u32| b[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        put(0x82, 1);
        put(0x88, 0x0080_0123);
        put(0x89, 0);
        put(0x8B, 0x1000);
        put(0x8C, 0x1);
        put(0x8D, 0x1008);
        put(0x8E, 0x1);
        put(0x8F, 0x8 << 2 | 1 << 30);
        put(0x91, 15 | 13 << 8);
        put(0xA2, 1 << 8);
        let m = GfxMqdV11::decode(&b).unwrap();
        assert_eq!(m.ring_address, 0x8001_2300);
        assert_eq!(m.ring_dwords, 65536);
        assert_eq!(m.rptr_address, 0x1_0000_1000);
        assert_eq!(m.wptr_poll_address, 0x1_0000_1008);
        assert_eq!(m.doorbell, Some(0x8));
        assert!(m.active && m.privileged);
        assert_eq!(m.vmid, 0);
        assert_eq!(
            GfxMqdV11::decode(&b[..100]),
            Err(GfxMqdV11Fault::Short { len: 100 })
        );
    }
}
