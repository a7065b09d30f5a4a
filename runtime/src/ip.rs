//! IP identities: the discovery `hw_id`s barebell reads, and the one
//! generation type every block keys its layouts on.

/// `hw_id` values of the IP blocks barebell reads (`soc15_hw_ip.h`,
/// `include/soc15_hw_ip.h` in Linux: `MP1_HWID` … `MP0_HWID`).
pub mod hw_id {
    pub const MP1: u16 = 1;
    pub const GC: u16 = 11;
    pub const MMHUB: u16 = 34;
    pub const ATHUB: u16 = 35;
    pub const OSSSYS: u16 = 40;
    pub const HDP: u16 = 41;
    pub const SDMA0: u16 = 42;
    pub const NBIF: u16 = 108;
    pub const UMC: u16 = 150;
    pub const MP0: u16 = 255;
    /// The display (Linux's `DCE_HWIP`).
    pub const DMU: u16 = 271;
}

/// The GFX generation of a part, which selects the MQD layout
/// (`v9_structs.h` / `v11_structs.h` / `v12_structs.h`), the page-table
/// entry format (`amdgpu_vm.h`: gfx12 moved the PTE flag bits; gfx9 has
/// its own), the hub register layouts, the MES API (`mes_v11_api_def.h`
/// / `mes_v12_api_def.h`; GC 9.4.3 has no MES, its queues are mapped by
/// the KIQ or the HWS on the MEC) and the GC register header
/// (`gc_9_4_3_offset.h` / `gc_11_0_0_offset.h` / `gc_12_0_0_offset.h`).
///
/// Most blocks have no GC 9.4.3 implementation yet: they answer
/// [`Generation::Gfx94`] with their layer's typed `Unsupported` error
/// rather than a layout of another generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// GC 9.4.2 (CDNA2, gfx90a: Aldebaran, the MI210 and MI250). One XCC;
    /// Linux brings it up from a fixed IP list (`aldebaran_reg_base_init()`
    /// and the `CHIP_ALDEBARAN` case of `amdgpu_discovery_set_ip_blocks()`'s
    /// caller), not from the discovery table.
    Gfx90a,
    /// GC 9.4.3 (CDNA3, gfx942: MI300X, MI308X). Several XCCs (one GC
    /// instance each) on several dies (AIDs), see
    /// [`crate::discovery::Topology`].
    Gfx94,
    /// GC 11.x (RDNA3, gfx1100).
    Gfx11,
    /// GC 12.x (RDNA4, gfx1201).
    Gfx12,
}

impl Generation {
    /// The generation of a GC IP version as discovery reports it, if
    /// barebell knows it.
    pub fn of_gc(version: (u8, u8, u8)) -> Option<Self> {
        match version {
            // GC 9.4.3 only: 9.4.4 and 9.5.0 (also aqua_vanjaram.c /
            // gfx_v9_4_3.c in Linux 6.12) differ in firmware and are not
            // declared by any part here.
            (9, 4, 2) => Some(Generation::Gfx90a),
            (9, 4, 3) => Some(Generation::Gfx94),
            (11, _, _) => Some(Generation::Gfx11),
            (12, _, _) => Some(Generation::Gfx12),
            _ => None,
        }
    }

    /// Lower-case name, as the CLI and traces print it.
    pub fn name(self) -> &'static str {
        match self {
            Generation::Gfx90a => "gfx9.4.2",
            Generation::Gfx94 => "gfx9.4.3",
            Generation::Gfx11 => "gfx11",
            Generation::Gfx12 => "gfx12",
        }
    }
}

impl Generation {
    /// The GC version family, as error messages name it.
    pub fn gc_label(self) -> &'static str {
        match self {
            Generation::Gfx90a => "GC 9.4.2",
            Generation::Gfx94 => "GC 9.4.3",
            Generation::Gfx11 => "GC 11",
            Generation::Gfx12 => "GC 12",
        }
    }
}

/// A block has no implementation for a generation yet: what every layer's
/// `Unsupported` error variant carries, so that a part whose GC
/// generation barebell only partly drives (GC 9.4.3 today) stops with a
/// message naming the block, never with a panic or another generation's
/// layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported {
    /// What has no implementation (a register table, a layout, a step).
    pub block: &'static str,
    pub generation: Generation,
}

impl Unsupported {
    pub const fn new(block: &'static str, generation: Generation) -> Self {
        Unsupported { block, generation }
    }
}

impl core::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} has no {} implementation yet",
            self.block,
            self.generation.gc_label()
        )
    }
}
