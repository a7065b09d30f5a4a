//! barebell-decode: what a driver hands the GPU, decoded from the public
//! headers: PM4 and the HWS packets, AQL packets ([`hsa`]), SDMA packets,
//! MES frames and registers, the gfx11/gfx12 and gfx9 MQD and HQD
//! windows, gfx9 page-table entries and walks.
//!
//! The device model's firmware stand-ins read through these, and so do
//! the introspection tools (`barebell ring decode`, `queue dump`,
//! `vm walk`): one decoder for both, in a crate that depends on no driver
//! crate, so the model stays independent of the runtime.
//!
//! The MES and KIQ models must not decode the runtime's frames, packets
//! and MQDs with the runtime's (or firmware-if's) structs: a wrong offset,
//! opcode or bit position there would be mirrored here and never caught.
//! Everything in this module is written from the public headers directly
//! (`mes_v11_api_def.h`, `mes_v12_api_def.h`, `nvd.h`,
//! `kfd_pm4_headers_ai.h`, `v11_structs.h`, `v12_structs.h`, the GC
//! `sh_mask` headers), as plain byte offsets and bit positions, and each
//! value is a conformance fact of its own (gathered in the crate's
//! `FACTS`, registered in the CLI's `all_facts`), checked by `cargo xtask conformance` against those
//! headers independently of the runtime's tables.

#![no_std]

extern crate alloc;

pub mod gfx_mqd_v11;
pub mod hsa;
pub mod mes_api;
pub mod mes_regs;
pub mod mqd;
pub mod mqd_v9;
pub mod pm4;
pub mod pm4_hws;
pub mod pte_v9;
pub mod ring;
pub mod sdma;
pub mod sdma_mqd_v9;

/// A bit field of a 32-bit word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bits {
    pub shift: u32,
    pub width: u32,
}

impl Bits {
    pub const fn new(shift: u32, width: u32) -> Self {
        Bits { shift, width }
    }

    /// The field's mask in place.
    pub const fn mask(self) -> u32 {
        (((1u64 << self.width) - 1) as u32) << self.shift
    }

    /// The field's value in `word`.
    pub const fn get(self, word: u32) -> u32 {
        (word & self.mask()) >> self.shift
    }

    /// Whether a one-bit field is set.
    pub const fn is_set(self, word: u32) -> bool {
        self.get(word) != 0
    }
}

/// Little-endian dword at byte `at` of `b` (0 past the end).
pub fn le32(b: &[u8], at: usize) -> u32 {
    b.get(at..at.saturating_add(4))
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, u32::from_le_bytes)
}

/// Little-endian qword at byte `at` of `b` (0 past the end).
pub fn le64(b: &[u8], at: usize) -> u64 {
    u64::from(le32(b, at)) | u64::from(le32(b, at.saturating_add(4))) << 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_mask_and_get() {
        let f = Bits::new(2, 26);
        assert_eq!(f.mask(), 0x0FFF_FFFC);
        assert_eq!(f.get(0x40 << 2 | 1 << 30), 0x40);
        assert!(Bits::new(30, 1).is_set(1 << 30));
        assert_eq!(Bits::new(0, 32).mask(), u32::MAX);
    }

    #[test]
    fn le_reads_past_the_end_are_zero() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(le32(&b, 0), 0x0403_0201);
        assert_eq!(le64(&b, 0), 0x0807_0605_0403_0201);
        assert_eq!(le32(&b, 6), 0);
    }
}
