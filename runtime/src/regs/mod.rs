//! Register constants, one module per IP version, named after the Linux
//! `asic_reg/<ip>/<ip>_<ver>_offset.h` header they are checked against.
//!
//! A register is a dword offset inside one of its IP's base segments,
//! selected by `BASE_IDX`. The discovery table supplies the segment bases
//! per IP instance; the byte offset into BAR5 is
//! `(base[BASE_IDX] + offset) * 4` (see `amdgpu_discovery.c`, which fills
//! `adev->reg_offset[ip][inst][seg]`, and the `SOC15_REG_OFFSET` macro).

pub mod gc_11_0_0;

/// A register: its name as Linux spells it (without the `reg` prefix), its
/// dword offset in its segment, and which segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reg {
    pub name: &'static str,
    pub offset: u32,
    pub base_idx: u8,
}

/// Segment bases of one IP instance, in dwords, as the discovery table
/// reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IpBases(pub [u32; 8]);

impl Reg {
    /// Byte offset of this register in the register aperture, or `None` if
    /// the segment index is out of range or the sum overflows.
    pub fn byte_offset(&self, bases: &IpBases) -> Option<usize> {
        let base = *bases.0.get(usize::from(self.base_idx))?;
        let dword = base.checked_add(self.offset)?;
        usize::try_from(dword).ok()?.checked_mul(4)
    }
}

/// Declares a register module: the constants and a `FACTS` table that
/// checks each one's offset and `BASE_IDX` against the named header.
macro_rules! registers {
    ($header:literal; $($name:ident = $off:literal, $idx:literal;)*) => {
        $(
            pub const $name: $crate::regs::Reg = $crate::regs::Reg {
                name: stringify!($name),
                offset: $off,
                base_idx: $idx,
            };
        )*

        /// Each register's offset and `BASE_IDX`, as conformance facts.
        pub const FACTS: &[barebell_facts::Fact] = &[
            $(
                barebell_facts::Fact::constant($header, concat!("reg", stringify!($name)), $name.offset as u64),
                barebell_facts::Fact::constant($header, concat!("reg", stringify!($name), "_BASE_IDX"), $name.base_idx as u64),
            )*
        ];

        /// Every register of this module, for symbolic tracing.
        pub const ALL: &[$crate::regs::Reg] = &[$($name),*];
    };
}
pub(crate) use registers;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_offset_uses_selected_segment() {
        let bases = IpBases([0x1260, 0xA000, 0, 0, 0, 0, 0, 0]);
        // GC segment 1 base on Navi31 is 0xA000 dwords (discovery value
        // used here only as an example input).
        assert_eq!(
            gc_11_0_0::GRBM_GFX_CNTL.byte_offset(&bases),
            Some((0xA000 + 0x0900) * 4)
        );
        let bad = Reg {
            name: "X",
            offset: 1,
            base_idx: 9,
        };
        assert_eq!(bad.byte_offset(&bases), None);
        let overflow = Reg {
            name: "Y",
            offset: u32::MAX,
            base_idx: 1,
        };
        assert_eq!(overflow.byte_offset(&bases), None);
    }
}
