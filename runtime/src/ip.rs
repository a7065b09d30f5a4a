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
/// (`v11_structs.h` / `v12_structs.h`), the page-table entry format
/// (`amdgpu_vm.h`: gfx12 moved the PTE flag bits), the hub register
/// layouts, the MES API (`mes_v11_api_def.h` / `mes_v12_api_def.h`) and
/// the GC register header (`gc_11_0_0_offset.h` / `gc_12_0_0_offset.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// GC 11.x (RDNA3, gfx1100).
    Gfx11,
    /// GC 12.x (RDNA4, gfx1201).
    Gfx12,
}

impl Generation {
    /// The generation of a GC IP version as discovery reports it, if
    /// barebell knows it.
    pub fn of_gc(version: (u8, u8, u8)) -> Option<Self> {
        match version.0 {
            11 => Some(Generation::Gfx11),
            12 => Some(Generation::Gfx12),
            _ => None,
        }
    }

    /// Lower-case name, as the CLI and traces print it.
    pub fn name(self) -> &'static str {
        match self {
            Generation::Gfx11 => "gfx11",
            Generation::Gfx12 => "gfx12",
        }
    }
}
