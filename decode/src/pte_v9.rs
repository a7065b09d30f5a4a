//! The gfx9 page-table walk of a GC 9.4.3 hub's VM L2 (GFXHUB v1.2,
//! MMHUB 1.8), with the model's own bit definitions written from
//! `amdgpu_vm.h`, never the runtime's types.
//!
//! What the walk follows, and where it comes from:
//! - A context is its registers: root (`VM_CONTEXTn_PAGE_TABLE_BASE_ADDR`,
//!   VALID stripped), `PAGE_TABLE_START/END_ADDR` (the walk indexes
//!   `VA - START`), `PAGE_TABLE_DEPTH` (directory levels above the leaf
//!   level) and `PAGE_TABLE_BLOCK_SIZE` (`bs`).
//! - Leaf-level tables hold 512 entries, each mapping `2^bs` 4 KiB pages;
//!   each directory above holds 512 entries spanning 9 bits more; the
//!   root's index is not masked (the range check bounds it). This is the
//!   model's reading of `amdgpu_vm_pt_level_shift()` (PDB0 shift =
//!   `block_size`, each level above 9 more) and of
//!   `amdgpu_gmc_init_pdb0()` ("each PDE0 (used as PTE) covers
//!   (2^vmid0_page_table_block_size)*2M"); for `bs` 0 it is the plain
//!   four-level walk.
//! - A leaf-level entry with `AMDGPU_PTE_TF` (bit 56) is not a page: it
//!   points to a table of `2^bs` 4 KiB PTEs (`AMDGPU_VM_PTE_COUNT()`), as
//!   `gmc_v9_0_get_vm_pde()` marks a PDB0 entry pointing to a PTB when
//!   `gmc.translate_further` is set (9.4.3: depth 2, `bs` 9). That TF
//!   sends the hardware one level further is the reading of the name and
//!   of that function; unconfirmed on silicon (model convention).
//! - A directory entry with `AMDGPU_PDE_PTE` (bit 54) is a page as large
//!   as its level's span. `AMDGPU_PDE_BFS` (63:59) is ignored: the model
//!   caches nothing, so the fragment hint has nothing to size.
//! - Tables in system memory (a directory entry with `AMDGPU_PTE_SYSTEM`)
//!   are not modelled: the walk faults.
//!
//! Levels in faults count tables read: 0 is the root.

/// `amdgpu_vm.h` bits, the model's own copy (checked against the header
/// text by `tests/harness/tests/gmc_v9.rs`).
pub mod bits {
    pub const VALID: u64 = 1 << 0;
    pub const SYSTEM: u64 = 1 << 1;
    pub const SNOOPED: u64 = 1 << 2;
    pub const EXECUTABLE: u64 = 1 << 4;
    pub const READABLE: u64 = 1 << 5;
    pub const WRITEABLE: u64 = 1 << 6;
    /// `AMDGPU_PDE_PTE`.
    pub const PDE_PTE: u64 = 1 << 54;
    /// `AMDGPU_PTE_TF`.
    pub const TF: u64 = 1 << 56;
    /// `AMDGPU_PTE_MTYPE_VG10_SHIFT(mtype)`: `mtype << 57`, 2 bits.
    pub const MTYPE_VG10_SHIFT: u32 = 57;
    pub const MTYPE_VG10_MASK: u64 = 3;
    /// Address bits 47:12 (`gmc_v9_0_get_vm_pde()` refuses any bit of
    /// `0xFFFF00000000003F`; entries hold 4 KiB-aligned addresses).
    pub const ADDRESS: u64 = 0x0000_FFFF_FFFF_F000;
}

/// Single-bit constants with their `amdgpu_vm.h` names.
pub const HEADER_BITS: [(&str, u64); 8] = [
    ("AMDGPU_PTE_VALID", bits::VALID),
    ("AMDGPU_PTE_SYSTEM", bits::SYSTEM),
    ("AMDGPU_PTE_SNOOPED", bits::SNOOPED),
    ("AMDGPU_PTE_EXECUTABLE", bits::EXECUTABLE),
    ("AMDGPU_PTE_READABLE", bits::READABLE),
    ("AMDGPU_PTE_WRITEABLE", bits::WRITEABLE),
    ("AMDGPU_PDE_PTE", bits::PDE_PTE),
    ("AMDGPU_PTE_TF", bits::TF),
];

/// One context as a gfx9 hub's registers describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextV9 {
    pub root: u64,
    pub start: u64,
    pub end: u64,
    pub depth: u8,
    pub block_size: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessV9 {
    Read,
    Write,
    Execute,
}

/// Why a gfx9 walk faulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkFaultV9 {
    /// VA outside `START..=END`.
    OutOfRange,
    /// The entry read from the `level`-th table is not VALID.
    Invalid { level: u8 },
    /// The `level`-th table is not in memory the model reaches (or in
    /// system memory).
    BadTable { level: u8 },
    /// The leaf does not grant the access.
    Permission,
}

/// A successful gfx9 translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TranslationV9 {
    pub pa: u64,
    /// Bytes the leaf maps.
    pub page_bytes: u64,
    pub system: bool,
    pub snooped: bool,
    /// `AMDGPU_PTE_MTYPE_VG10` of the leaf.
    pub mtype: u8,
    /// Tables read (root first), for tests that check the walk's shape.
    pub tables_read: u8,
}

/// Memory a walk reads its tables from: the 64-bit entry at `address`
/// (an 8-byte-aligned address the memory maps), read with acquire
/// ordering, or `None` where nothing is mapped.
pub trait TableMemory {
    fn entry(&self, address: u64) -> Option<u64>;
}

fn read<M: TableMemory + ?Sized>(
    dma: &M,
    vram_base: u64,
    table: u64,
    index: u64,
    level: u8,
) -> Result<u64, WalkFaultV9> {
    let at = index
        .checked_mul(8)
        .and_then(|o| table.checked_add(o))
        .and_then(|a| a.checked_sub(vram_base))
        .ok_or(WalkFaultV9::BadTable { level })?;
    dma.entry(at).ok_or(WalkFaultV9::BadTable { level })
}

/// Walks `va` through `ctx` over `dma` (tables at physical `vram_base +
/// a` for `dma` address `a`).
pub fn walk<M: TableMemory + ?Sized>(
    dma: &M,
    vram_base: u64,
    ctx: &ContextV9,
    va: u64,
    access: AccessV9,
) -> Result<TranslationV9, WalkFaultV9> {
    if va < ctx.start || va > ctx.end {
        return Err(WalkFaultV9::OutOfRange);
    }
    let rel = va - ctx.start;
    let bs = u32::from(ctx.block_size.min(15));
    let depth = u32::from(ctx.depth.min(3));
    let mut table = ctx.root;
    let mut level = 0u8;
    // Directories: `depth` of them, then the leaf level.
    let (entry, span) = loop {
        let above_leaf = depth - u32::from(level);
        let shift = 12 + bs + 9 * above_leaf;
        let mut index = rel >> shift;
        if level != 0 {
            index &= 511;
        }
        let e = read(dma, vram_base, table, index, level)?;
        if e & bits::VALID == 0 {
            return Err(WalkFaultV9::Invalid { level });
        }
        if above_leaf == 0 {
            if e & bits::TF != 0 {
                // Translate further: 2^bs 4 KiB PTEs below.
                let next = level + 1;
                if e & bits::SYSTEM != 0 {
                    return Err(WalkFaultV9::BadTable { level: next });
                }
                let idx = (rel >> 12) & ((1u64 << bs) - 1);
                let pte = read(dma, vram_base, e & bits::ADDRESS, idx, next)?;
                if pte & bits::VALID == 0 {
                    return Err(WalkFaultV9::Invalid { level: next });
                }
                level = next;
                break (pte, 1u64 << 12);
            }
            break (e, 1u64 << shift);
        }
        if e & bits::PDE_PTE != 0 {
            break (e, 1u64 << shift);
        }
        if e & bits::SYSTEM != 0 {
            return Err(WalkFaultV9::BadTable { level: level + 1 });
        }
        table = e & bits::ADDRESS;
        level += 1;
    };
    let allowed = match access {
        AccessV9::Read => entry & bits::READABLE != 0,
        AccessV9::Write => entry & bits::WRITEABLE != 0,
        AccessV9::Execute => entry & bits::EXECUTABLE != 0,
    };
    if !allowed {
        return Err(WalkFaultV9::Permission);
    }
    Ok(TranslationV9 {
        pa: (entry & bits::ADDRESS & !(span - 1)) | (rel & (span - 1)),
        page_bytes: span,
        system: entry & bits::SYSTEM != 0,
        snooped: entry & bits::SNOOPED != 0,
        mtype: ((entry >> bits::MTYPE_VG10_SHIFT) & bits::MTYPE_VG10_MASK) as u8,
        tables_read: level + 1,
    })
}
