//! Register constants, one module per IP version, named after the Linux
//! `asic_reg/<ip>/<ip>_<ver>_offset.h` header they are checked against.
//!
//! A register is a dword offset inside one of its IP's base segments,
//! selected by `BASE_IDX`. The discovery table supplies the segment bases
//! per IP instance; the byte offset into BAR5 is
//! `(base[BASE_IDX] + offset) * 4` (see `amdgpu_discovery.c`, which fills
//! `adev->reg_offset[ip][inst][seg]`, and the `SOC15_REG_OFFSET` macro).

pub mod dcn_3_2_0;
pub mod gc_11_0_0;
pub mod gc_12_0_0;
pub mod gc_9_4_2;
pub mod gc_9_4_2_scratch;
pub mod gc_9_4_2_vm;
pub mod gc_9_4_3;
pub mod gc_9_4_3_rlc;
pub mod gc_9_4_3_scratch;
pub mod gc_9_4_3_vm;
pub mod hdp_4_4_2;
pub mod hub;
pub mod mmhub_1_7_0;
pub mod mmhub_1_8_0;
pub mod mmhub_3_0_0;
pub mod mmhub_4_1_0;
pub mod mp;
pub mod mp1_13_0_0;
pub mod mp1_13_0_2;
pub mod mp1_13_0_6;
pub mod mp1_14_0_2;
pub mod mp_13_0_0;
pub mod mp_13_0_2;
pub mod mp_13_0_6;
pub mod mp_14_0_2;
pub mod nbif_6_3_1;
pub mod nbio_4_3_0;
pub mod nbio_7_4;
pub mod nbio_7_9_0;
pub mod osssys_4_4_2;
pub mod osssys_6_0_0;
pub mod osssys_7_0_0;
pub(crate) mod vm_fields;

/// Which Linux 6.12 header a register module is checked against, and
/// which IP (discovery `hw_id`) and versions it serves. The offset header
/// is the module's own `HEADER`, the key its conformance facts are checked
/// under, so this table and the checks cannot name different files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderFor {
    /// `hw_id` as discovery reports it (`crate::ip::hw_id`).
    pub hw_id: u16,
    pub module: &'static str,
    pub offset_header: &'static str,
    pub sh_mask_header: &'static str,
    pub versions: &'static [(u8, u8, u8)],
    /// The module's register tables, for resolving names in a trace.
    pub registers: &'static [&'static [Reg]],
}

/// The header table. An IP version missing here has no register module.
/// Keyed by `hw_id` and version: versions alone collide across IPs (HDP
/// and OSSSYS are both 6.0.0 on Navi31).
pub const HEADERS: &[HeaderFor] = &[
    HeaderFor {
        hw_id: crate::ip::hw_id::GC,
        module: "gc_11_0_0",
        offset_header: gc_11_0_0::HEADER,
        sh_mask_header: "gc_11_0_0_sh_mask.h",
        versions: &[(11, 0, 0)],
        registers: &[gc_11_0_0::ALL],
    },
    // Linux 6.12 has one GC 12 header; gfx_v12_0.c uses it for 12.0.0 and 12.0.1.
    HeaderFor {
        hw_id: crate::ip::hw_id::GC,
        module: "gc_12_0_0",
        offset_header: gc_12_0_0::HEADER,
        sh_mask_header: "gc_12_0_0_sh_mask.h",
        versions: &[(12, 0, 0), (12, 0, 1)],
        registers: &[gc_12_0_0::ALL],
    },
    // gfx_v9_4_3.c and the 9.4.3 KFD paths include gc_9_4_3_offset.h.
    HeaderFor {
        hw_id: crate::ip::hw_id::GC,
        module: "gc_9_4_3",
        offset_header: gc_9_4_3::HEADER,
        sh_mask_header: "gc_9_4_3_sh_mask.h",
        versions: &[(9, 4, 3)],
        // The GFXHUB v1.2 (`gc_9_4_3_vm`) and RLC/MEC-start (`gc_9_4_3_rlc`)
        // registers live in the same header.
        registers: &[
            gc_9_4_3::ALL,
            gc_9_4_3_vm::ALL,
            gc_9_4_3_rlc::ALL,
            gc_9_4_3_scratch::ALL,
        ],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::MP0,
        module: "mp_13_0_0",
        offset_header: mp_13_0_0::HEADER,
        sh_mask_header: "mp_13_0_0_sh_mask.h",
        versions: &[(13, 0, 0)],
        registers: &[mp_13_0_0::ALL],
    },
    // MI300 (issue 18): psp_v13_0.c drives 13.0.6 with the 13.0.2 header;
    // mp_13_0_6_offset.h places the same mailboxes.
    HeaderFor {
        hw_id: crate::ip::hw_id::MP0,
        module: "mp_13_0_6",
        offset_header: mp_13_0_6::HEADER,
        sh_mask_header: "mp_13_0_6_sh_mask.h",
        versions: &[(13, 0, 6)],
        registers: &[mp_13_0_6::ALL],
    },
    // psp_v14_0.c includes mp_14_0_2_offset.h for every 14.0.x it drives.
    HeaderFor {
        hw_id: crate::ip::hw_id::MP0,
        module: "mp_14_0_2",
        offset_header: mp_14_0_2::HEADER,
        sh_mask_header: "mp_14_0_2_sh_mask.h",
        versions: &[(14, 0, 2), (14, 0, 3)],
        registers: &[mp_14_0_2::ALL],
    },
    // The SMU's mailboxes are declared in the same headers as MP0's.
    HeaderFor {
        hw_id: crate::ip::hw_id::MP1,
        module: "mp1_13_0_0",
        offset_header: mp1_13_0_0::HEADER,
        sh_mask_header: "mp_13_0_0_sh_mask.h",
        versions: &[(13, 0, 0)],
        registers: &[mp1_13_0_0::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::MP1,
        module: "mp1_14_0_2",
        offset_header: mp1_14_0_2::HEADER,
        sh_mask_header: "mp_14_0_2_sh_mask.h",
        versions: &[(14, 0, 2), (14, 0, 3)],
        registers: &[mp1_14_0_2::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::MMHUB,
        module: "mmhub_3_0_0",
        offset_header: mmhub_3_0_0::HEADER,
        sh_mask_header: "mmhub_3_0_0_sh_mask.h",
        versions: &[(3, 0, 0)],
        registers: &[mmhub_3_0_0::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::MMHUB,
        module: "mmhub_4_1_0",
        offset_header: mmhub_4_1_0::HEADER,
        sh_mask_header: "mmhub_4_1_0_sh_mask.h",
        versions: &[(4, 1, 0)],
        registers: &[mmhub_4_1_0::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::NBIF,
        module: "nbio_4_3_0",
        offset_header: nbio_4_3_0::HEADER,
        sh_mask_header: "nbio_4_3_0_sh_mask.h",
        versions: &[(4, 3, 0)],
        registers: &[nbio_4_3_0::init::ALL, nbio_4_3_0::ALL],
    },
    // gmc_v11_0.c reads the DCN 3.2.0 header for every GC 11 display.
    HeaderFor {
        hw_id: crate::ip::hw_id::DMU,
        module: "dcn_3_2_0",
        offset_header: dcn_3_2_0::HEADER,
        sh_mask_header: "dcn_3_2_0_sh_mask.h",
        versions: &[(3, 2, 0)],
        registers: &[dcn_3_2_0::ALL],
    },
    // ih_v6_0.c / ih_v7_0.c (issue 20): the IH registers barebell
    // programs, named in traces.
    HeaderFor {
        hw_id: crate::ip::hw_id::OSSSYS,
        module: "osssys_6_0_0",
        offset_header: osssys_6_0_0::HEADER,
        sh_mask_header: "osssys_6_0_0_sh_mask.h",
        versions: &[(6, 0, 0)],
        registers: &[osssys_6_0_0::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::OSSSYS,
        module: "osssys_7_0_0",
        offset_header: osssys_7_0_0::HEADER,
        sh_mask_header: "osssys_7_0_0_sh_mask.h",
        versions: &[(7, 0, 0)],
        registers: &[osssys_7_0_0::ALL],
    },
    // GC 9.4.3's GFXHUB v1.2 registers; GC 9.4.3's other register tables
    // (CP/HQD, RLC) join this row's `registers` when they land.
    HeaderFor {
        hw_id: crate::ip::hw_id::MMHUB,
        module: "mmhub_1_8_0",
        offset_header: mmhub_1_8_0::HEADER,
        sh_mask_header: "mmhub_1_8_0_sh_mask.h",
        versions: &[(1, 8, 0)],
        registers: &[mmhub_1_8_0::ALL],
    },
    // MI300 (issue 18): nbio_v7_9.c, vega20_ih.c for OSSSYS 4.4.2 (which
    // includes the 4.2.0 header; the 4.4.2 header places the same
    // registers), smu_v13_0_6_ppt.c's mailbox.
    HeaderFor {
        hw_id: crate::ip::hw_id::NBIF,
        module: "nbio_7_9_0",
        offset_header: nbio_7_9_0::HEADER,
        sh_mask_header: "nbio_7_9_0_sh_mask.h",
        versions: &[(7, 9, 0)],
        registers: &[nbio_7_9_0::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::HDP,
        module: "hdp_4_4_2",
        offset_header: hdp_4_4_2::HEADER,
        sh_mask_header: "hdp_4_4_2_sh_mask.h",
        // hdp_v4_0.c drives Aldebaran's HDP 4.4.0 with the same registers.
        versions: &[(4, 4, 2), (4, 4, 0)],
        registers: &[hdp_4_4_2::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::OSSSYS,
        module: "osssys_4_4_2",
        offset_header: osssys_4_4_2::HEADER,
        sh_mask_header: "osssys_4_4_2_sh_mask.h",
        // vega20_ih.c drives OSSSYS 4.4.0 (Aldebaran) at the same offsets.
        versions: &[(4, 4, 2), (4, 4, 0)],
        registers: &[osssys_4_4_2::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::MP1,
        module: "mp1_13_0_6",
        offset_header: mp1_13_0_6::HEADER,
        sh_mask_header: "mp_13_0_6_sh_mask.h",
        versions: &[(13, 0, 6)],
        registers: &[mp1_13_0_6::ALL],
    },
    // Aldebaran (GC 9.4.2, issue 34): gfx_v9_0.c's start registers and
    // GFXHUB v1.0, mmhub_v1_7.c, nbio_v7_4.c, psp_v13_0.c and
    // aldebaran_ppt.c's mailboxes.
    HeaderFor {
        hw_id: crate::ip::hw_id::GC,
        module: "gc_9_4_2",
        offset_header: gc_9_4_2::HEADER,
        sh_mask_header: "gc_9_4_2_sh_mask.h",
        versions: &[(9, 4, 2)],
        registers: &[gc_9_4_2::ALL, gc_9_4_2_vm::ALL, gc_9_4_2_scratch::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::MMHUB,
        module: "mmhub_1_7_0",
        offset_header: mmhub_1_7_0::HEADER,
        sh_mask_header: "mmhub_1_7_sh_mask.h",
        versions: &[(9, 4, 2)],
        registers: &[mmhub_1_7_0::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::NBIF,
        module: "nbio_7_4",
        offset_header: nbio_7_4::HEADER,
        sh_mask_header: "nbio_7_4_sh_mask.h",
        versions: &[(7, 4, 4)],
        registers: &[nbio_7_4::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::MP0,
        module: "mp_13_0_2",
        offset_header: mp_13_0_2::HEADER,
        sh_mask_header: "mp_13_0_2_sh_mask.h",
        versions: &[(13, 0, 2)],
        registers: &[mp_13_0_2::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::MP1,
        module: "mp1_13_0_2",
        offset_header: mp1_13_0_2::HEADER,
        sh_mask_header: "mp_13_0_2_sh_mask.h",
        versions: &[(13, 0, 2)],
        registers: &[mp1_13_0_2::ALL],
    },
    HeaderFor {
        hw_id: crate::ip::hw_id::NBIF,
        module: "nbif_6_3_1",
        offset_header: nbif_6_3_1::HEADER,
        sh_mask_header: "nbif_6_3_1_sh_mask.h",
        versions: &[(6, 3, 1)],
        registers: &[nbif_6_3_1::ALL],
    },
];

/// The register module serving an IP version, if any.
pub fn header_for(hw_id: u16, version: (u8, u8, u8)) -> Option<&'static HeaderFor> {
    HEADERS
        .iter()
        .find(|h| h.hw_id == hw_id && h.versions.contains(&version))
}

/// The register tables for an IP version (empty if none is built), for
/// [`trace::Symbols`].
pub fn registers_for(hw_id: u16, version: (u8, u8, u8)) -> &'static [&'static [Reg]] {
    header_for(hw_id, version).map_or(&[], |h| h.registers)
}

/// A register: its name as Linux spells it (without the `reg` prefix), its
/// dword offset in its segment, and which segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reg {
    pub name: &'static str,
    pub offset: u32,
    pub base_idx: u8,
}

/// How many segment bases an [`IpBases`] holds.
///
/// The discovery table gives each IP instance `num_base_address` bases (a
/// byte), and Linux keeps a pointer into the table rather than a copy
/// (`amdgpu_discovery_reg_base_init()`), so it reaches every one. The
/// highest `BASE_IDX` any Linux 6.12 register header names is 8 (NBIO
/// 7.9's `BIFC_DOORBELL_ACCESS_EN_PF`, `BIFC_GFX_INT_MONITOR_MASK` and
/// `DOORBELL0_CTRL_ENTRY_n`), which the old eight-segment copy could not
/// hold; sixteen leaves room for a later header without a heap.
pub const MAX_SEGMENTS: usize = 16;

/// Segment bases of one IP instance, in dwords, as the discovery table
/// reports them (segments past the table's count are 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IpBases(pub [u32; MAX_SEGMENTS]);

impl IpBases {
    /// The bases `first` gives, in segment order; segments past it are 0,
    /// and bases past [`MAX_SEGMENTS`] are dropped.
    pub const fn new(first: &[u32]) -> Self {
        let mut b = [0u32; MAX_SEGMENTS];
        let mut i = 0;
        while i < first.len() && i < MAX_SEGMENTS {
            b[i] = first[i];
            i += 1;
        }
        IpBases(b)
    }
}

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
        $crate::regs::registers! { $header, "reg"; $($name = $off, $idx;)* }
    };
    // Older headers (`nbio_7_4_offset.h`) name registers `mmNAME`.
    ($header:literal, $prefix:literal; $($name:ident = $off:literal, $idx:literal;)*) => {
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
                barebell_facts::Fact::constant($header, concat!($prefix, stringify!($name)), $name.offset as u64),
                barebell_facts::Fact::constant($header, concat!($prefix, stringify!($name), "_BASE_IDX"), $name.base_idx as u64),
            )*
        ];

        /// The header this module's facts are checked against.
        pub const HEADER: &str = $header;

        /// Every register of this module, for symbolic tracing.
        pub const ALL: &[$crate::regs::Reg] = &[$($name),*];
    };
}
pub(crate) use registers;

/// Facts for one bitfield-struct field: `REG__FIELD__SHIFT` and
/// `REG__FIELD_MASK` in the named `*_sh_mask.h`, with the values taken
/// from the struct's generated `*_OFFSET` / `*_BITS` constants.
macro_rules! field_facts {
    ($header:expr, $reg:literal, $field:literal, $offset:expr, $bits:expr) => {
        [
            barebell_facts::Fact::constant(
                $header,
                concat!($reg, "__", $field, "__SHIFT"),
                $offset as u64,
            ),
            barebell_facts::Fact::constant(
                $header,
                concat!($reg, "__", $field, "_MASK"),
                ((1u64 << $bits) - 1) << $offset,
            ),
        ]
    };
}
pub(crate) use field_facts;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_table_is_unambiguous_and_names_the_sh_mask_beside_the_offset_header() {
        for (i, a) in HEADERS.iter().enumerate() {
            assert_eq!(
                a.offset_header.strip_suffix("_offset.h"),
                a.sh_mask_header.strip_suffix("_sh_mask.h"),
                "{}",
                a.module
            );
            assert!(a.registers.iter().all(|t| !t.is_empty()), "{}", a.module);
            for b in &HEADERS[i + 1..] {
                let shared = a.versions.iter().any(|v| b.versions.contains(v));
                assert!(
                    !(a.hw_id == b.hw_id && shared),
                    "{} and {} serve the same IP version",
                    a.module,
                    b.module
                );
            }
        }
        // HDP and OSSSYS share version 6.0.0 with nothing built: not GC's.
        assert!(header_for(crate::ip::hw_id::GC, (6, 0, 0)).is_none());
        assert_eq!(
            header_for(crate::ip::hw_id::MMHUB, (3, 0, 0)).map(|h| h.module),
            Some("mmhub_3_0_0")
        );
    }

    #[test]
    fn byte_offset_uses_selected_segment() {
        let bases = IpBases::new(&[0x1260, 0xA000, 0, 0, 0, 0, 0, 0]);
        // GC segment 1 base on Navi31 is 0xA000 dwords (discovery value
        // used here only as an example input).
        assert_eq!(
            gc_11_0_0::GRBM_GFX_CNTL.byte_offset(&bases),
            Some((0xA000 + 0x0900) * 4)
        );
        // Past the MAX_SEGMENTS (16) bases an IpBases holds.
        let bad = Reg {
            name: "X",
            offset: 1,
            base_idx: 16,
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
