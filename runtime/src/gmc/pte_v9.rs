//! The gfx9 page-table entry as GC 9.4.3 (MI300X/MI308X) uses it, and
//! the VM geometry Linux 6.12 configures for it.
//!
//! Bits (`amdgpu_vm.h`): bits 6:0 and the fragment (11:7) and address
//! (47:12) are gfx11's ([`crate::gmc::pagetable::Pte`]); what differs is
//! above bit 48: `AMDGPU_PTE_MTYPE_VG10` is bits 58:57 (2 bits, values
//! from `vega10_enum.h`), `AMDGPU_PTE_TF` (bit 56, translate further) is
//! live, and `AMDGPU_PDE_BFS` (63:59) is set on PDB1 entries.
//!
//! Geometry (`gmc_v9_0_sw_init()`, 9.4.3 case): `amdgpu_vm_adjust_size(adev,
//! 256 * 1024, 9, 3, 48)` gives `vm_size` 256 TiB (= `max_size` for 48
//! bits), `max_pfn` 2^36, `num_level` 3 (root PDB2), `block_size` 9; and
//! `gmc.translate_further = num_level > 1`, true. With translate-further
//! the hub is told one level less and a 9-bit block
//! (`gfxhub_v1_2_xcc_setup_vmid_config()`: `PAGE_TABLE_DEPTH =
//! num_level - 1` = 2, `PAGE_TABLE_BLOCK_SIZE = block_size` = 9): the
//! hub's leaf level is Linux's PDB0, whose entries map 2 MiB (2^9 pages)
//! each, unless `AMDGPU_PTE_TF` sends the walk on to a 512-entry PTB of
//! 4 KiB pages. `gmc_v9_0_get_vm_pde()` does the marking: a PDB1 entry
//! gets `AMDGPU_PDE_BFS(9)`, a PDB0 entry pointing to a PTB gets
//! `AMDGPU_PTE_TF`, a PDB0 entry mapping 2 MiB loses `AMDGPU_PDE_PTE`.
//! Software tables are therefore the same PDB2 → PDB1 → PDB0 → PTB as
//! gfx11's, which is why [`crate::gmc::pagetable::TableArena`] builds them
//! with [`crate::gmc::pagetable::PteFormat::Gfx9TranslateFurther`].
//!
//! MTYPE (`gmc_v9_0_get_coherence_flags()`, 9.4.3 case, dGPU): local VRAM
//! `MTYPE_RW` (the `amdgpu_mtype_local` default), remote VRAM `MTYPE_NC`,
//! system memory `MTYPE_UC`, `AMDGPU_GEM_CREATE_UNCACHED` `MTYPE_UC`;
//! SNOOPED is always set. The GART (`gmc_v9_0_gart_init()`) is
//! `MTYPE_UC | EXECUTABLE`.

use bitfield_struct::bitfield;

/// A gfx9 page-table entry (PDEs use the same word).
#[bitfield(u64)]
#[derive(PartialEq, Eq)]
pub struct PteV9 {
    pub valid: bool,
    pub system: bool,
    pub snooped: bool,
    pub tmz: bool,
    pub executable: bool,
    pub readable: bool,
    pub writeable: bool,
    /// `AMDGPU_PTE_FRAG(x)`.
    #[bits(5)]
    pub fragment: u8,
    /// Address bits 47:12.
    #[bits(36)]
    pub pfn: u64,
    #[bits(3)]
    __: u8,
    /// `AMDGPU_PTE_PRT`.
    pub prt: bool,
    #[bits(2)]
    __: u8,
    /// `AMDGPU_PDE_PTE`.
    pub pde_pte: bool,
    /// `AMDGPU_PTE_LOG`.
    pub log: bool,
    /// `AMDGPU_PTE_TF`: this leaf-level entry points to a further table.
    pub tf: bool,
    /// `AMDGPU_PTE_MTYPE_VG10`.
    #[bits(2)]
    pub mtype: u8,
    /// `AMDGPU_PDE_BFS(a)`.
    #[bits(5)]
    pub bfs: u8,
}

impl PteV9 {
    pub fn address(&self) -> u64 {
        self.pfn() << 12
    }
}

/// `vega10_enum.h` `enum MTYPE` (`MTYPE_WC` and `MTYPE_RW` share 1).
pub const MTYPE_NC: u8 = 0;
pub const MTYPE_RW: u8 = 1;
pub const MTYPE_CC: u8 = 2;
pub const MTYPE_UC: u8 = 3;

/// `amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48)` for 9.4.3.
pub const VM_SIZE_GB: u64 = 256 * 1024;
/// `vm_manager.max_pfn = vm_size << 18`.
pub const MAX_PFN: u64 = VM_SIZE_GB << 18;
/// `vm_manager.num_level` (root PDB2).
pub const NUM_LEVEL: u8 = 3;
/// `vm_manager.block_size`.
pub const BLOCK_SIZE: u8 = 9;
/// `gmc.translate_further = num_level > 1`.
pub const TRANSLATE_FURTHER: bool = NUM_LEVEL > 1;
/// What `*_setup_vmid_config()` writes with translate-further:
/// `PAGE_TABLE_DEPTH = num_level - 1`, `PAGE_TABLE_BLOCK_SIZE = block_size`.
pub const CONTEXT_DEPTH: u8 = NUM_LEVEL - 1;
pub const CONTEXT_BLOCK_SIZE: u8 = BLOCK_SIZE;
/// `AMDGPU_PDE_BFS(0x9)` on PDB1 entries (`gmc_v9_0_get_vm_pde()`).
pub const PDB1_BFS: u8 = 9;

/// What a mapping is, for [`mtype_for`]: the 9.4.3 dGPU cases of
/// `gmc_v9_0_get_coherence_flags()` (not an APU, `amdgpu_mtype_local`
/// at its default, not extended-coherent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// VRAM of this device in the VM's memory partition.
    LocalVram,
    /// VRAM of another device or partition.
    RemoteVram,
    /// System memory.
    System,
}

/// The MTYPE Linux picks for `placement` (`uncached`:
/// `AMDGPU_GEM_CREATE_UNCACHED`).
pub fn mtype_for(placement: Placement, uncached: bool) -> u8 {
    if uncached {
        return MTYPE_UC;
    }
    match placement {
        Placement::LocalVram => MTYPE_RW,
        Placement::RemoteVram => MTYPE_NC,
        Placement::System => MTYPE_UC,
    }
}

/// Each single-bit field as `amdgpu_vm.h` names it: `(name, mask)`, for
/// the header-text check in `tests/harness/tests/gmc_v9.rs` (the header
/// does not compile outside the kernel).
pub fn header_masks() -> [(&'static str, u64); 11] {
    let b = |p: PteV9| p.into_bits();
    [
        ("AMDGPU_PTE_VALID", b(PteV9::new().with_valid(true))),
        ("AMDGPU_PTE_SYSTEM", b(PteV9::new().with_system(true))),
        ("AMDGPU_PTE_SNOOPED", b(PteV9::new().with_snooped(true))),
        ("AMDGPU_PTE_TMZ", b(PteV9::new().with_tmz(true))),
        (
            "AMDGPU_PTE_EXECUTABLE",
            b(PteV9::new().with_executable(true)),
        ),
        ("AMDGPU_PTE_READABLE", b(PteV9::new().with_readable(true))),
        ("AMDGPU_PTE_WRITEABLE", b(PteV9::new().with_writeable(true))),
        ("AMDGPU_PTE_PRT", b(PteV9::new().with_prt(true))),
        ("AMDGPU_PDE_PTE", b(PteV9::new().with_pde_pte(true))),
        ("AMDGPU_PTE_LOG", b(PteV9::new().with_log(true))),
        ("AMDGPU_PTE_TF", b(PteV9::new().with_tf(true))),
    ]
}

/// Multi-bit fields: `(field, shift, width)`.
pub const FIELD_POSITIONS: [(&str, usize, usize); 3] = [
    ("fragment", PteV9::FRAGMENT_OFFSET, PteV9::FRAGMENT_BITS),
    ("mtype_vg10", PteV9::MTYPE_OFFSET, PteV9::MTYPE_BITS),
    ("bfs", PteV9::BFS_OFFSET, PteV9::BFS_BITS),
];

/// The MTYPE values, checked against `vega10_enum.h`.
pub const FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant("vega10_enum.h", "MTYPE_NC", MTYPE_NC as u64),
    barebell_facts::Fact::constant("vega10_enum.h", "MTYPE_RW", MTYPE_RW as u64),
    barebell_facts::Fact::constant("vega10_enum.h", "MTYPE_CC", MTYPE_CC as u64),
    barebell_facts::Fact::constant("vega10_enum.h", "MTYPE_UC", MTYPE_UC as u64),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_the_page_frame_times_4k() {
        let e = PteV9::new().with_pfn(0x0C01_2345);
        assert_eq!(e.address(), 0xC0_1234_5000);
        assert_eq!(
            PteV9::from_bits(0x0000_0C01_2345_0001).address(),
            0xC01_2345_0000
        );
    }

    /// `gmc_v9_0_get_coherence_flags()` on a GC 9.4.3 dGPU with the
    /// default `amdgpu_mtype_local` (0, MTYPE_RW): this partition's VRAM
    /// RW, another's VRAM NC, system memory UC (GC below 9.5), and UC
    /// whatever the placement when the BO is `AMDGPU_GEM_CREATE_UNCACHED`.
    #[test]
    fn the_mtype_follows_linuxs_9_4_3_dgpu_table() {
        assert_eq!(mtype_for(Placement::LocalVram, false), MTYPE_RW);
        assert_eq!(mtype_for(Placement::RemoteVram, false), MTYPE_NC);
        assert_eq!(mtype_for(Placement::System, false), MTYPE_UC);
        for p in [
            Placement::LocalVram,
            Placement::RemoteVram,
            Placement::System,
        ] {
            assert_eq!(mtype_for(p, true), MTYPE_UC);
        }
    }
}
