//! GPU page tables in the gfx9–gfx11 format (`amdgpu_vm.h`), four levels
//! for a 48-bit virtual address.
//!
//! The walk the VM L2 does, with `block_size` 9 and 4 KiB pages (Linux's
//! default for gfx11, see `amdgpu_vm_pt_level_shift()`): PDB2 indexes VA
//! bits 47:39, PDB1 38:30, PDB0 29:21 and the PTB 20:12, 512 eight-byte
//! entries per 4 KiB table. An entry's bits 47:12 hold the next table's
//! (or the page's) address. A PDB0 entry with `pde_pte` set is itself the
//! PTE of a 2 MiB page. A PTE's `fragment` field promises that the aligned
//! `4 KiB << fragment` block around it is mapped contiguously with the
//! same flags, which lets the TLB cache the whole block as one entry
//! (`amdgpu_vm_pte_fragment()` picks it).
//!
//! gfx12 keeps bits 47:0 and moves the rest (`AMDGPU_PDE_PTE_GFX12` is
//! bit 63, PRT 56, MTYPE 55:54, DCC 58, the PDE block fragment size
//! 62:58): [`PteGfx12`]. GC 9.4.3 keeps gfx11's bits but runs the same
//! four tables with translate-further ([`crate::gmc::pte_v9`]). The
//! arena's [`PteFormat`] picks the large-page marking and the directory
//! flags when building; everything the builder writes below bit 48 is
//! common.
//!
//! Tables live in caller-provided memory ([`TableArena`]) so that nothing
//! allocates; the device model walks the very same bytes.

use crate::ip::Generation;
use bitfield_struct::bitfield;

/// Entries per table and the VA shift of each level, PDB2 first.
pub const ENTRIES: usize = 512;
pub const LEVEL_SHIFTS: [u32; 4] = [39, 30, 21, 12];
/// A 2 MiB page: one PDB0 entry with `pde_pte`.
pub const LARGE_PAGE: u64 = 1 << 21;
pub const PAGE: u64 = 1 << 12;

/// A gfx9–gfx11 page-table entry; PDEs use the same word with
/// `pde_pte`/`bfs` meaningful and the permission bits ignored.
#[bitfield(u64)]
#[derive(PartialEq, Eq)]
pub struct Pte {
    pub valid: bool,
    pub system: bool,
    pub snooped: bool,
    pub tmz: bool,
    pub executable: bool,
    pub readable: bool,
    pub writeable: bool,
    /// log2(block / 4 KiB) of the contiguous block this PTE belongs to.
    #[bits(5)]
    pub fragment: u8,
    /// Address bits 47:12.
    #[bits(36)]
    pub pfn: u64,
    /// `AMDGPU_PTE_MTYPE_NV10`.
    #[bits(3)]
    pub mtype: u8,
    pub prt: bool,
    #[bits(2)]
    __: u8,
    /// `AMDGPU_PDE_PTE`: this PDB0 entry maps a 2 MiB page.
    pub pde_pte: bool,
    pub log: bool,
    pub tf: bool,
    #[bits(1)]
    __: u8,
    pub noalloc: bool,
    /// `AMDGPU_PDE_BFS`: block fragment size of the table below.
    #[bits(5)]
    pub bfs: u8,
}

impl Pte {
    pub fn address(&self) -> u64 {
        self.pfn() << 12
    }
}

/// A gfx12 page-table entry (`amdgpu_vm.h`, the `_GFX12` macros). Bits
/// 47:0 are as in [`Pte`].
#[bitfield(u64)]
#[derive(PartialEq, Eq)]
pub struct PteGfx12 {
    pub valid: bool,
    pub system: bool,
    pub snooped: bool,
    pub tmz: bool,
    pub executable: bool,
    pub readable: bool,
    pub writeable: bool,
    #[bits(5)]
    pub fragment: u8,
    #[bits(36)]
    pub pfn: u64,
    #[bits(6)]
    __: u8,
    /// `AMDGPU_PTE_MTYPE_GFX12`.
    #[bits(2)]
    pub mtype: u8,
    /// `AMDGPU_PTE_PRT_GFX12`.
    pub prt: bool,
    #[bits(1)]
    __: u8,
    /// `AMDGPU_PTE_DCC` in a PTE; bit 0 of `AMDGPU_PDE_BFS_GFX12` in a PDE.
    pub dcc: bool,
    #[bits(4)]
    __: u8,
    /// `AMDGPU_PTE_IS_PTE` / `AMDGPU_PDE_PTE_GFX12`.
    pub is_pte: bool,
}

impl Generation {
    /// The bit that makes a PDB0 entry a 2 MiB page
    /// (`AMDGPU_PDE_PTE_FLAG()`).
    pub fn pde_pte(self) -> u64 {
        match self {
            // `AMDGPU_PDE_PTE_FLAG()`: `AMDGPU_PDE_PTE` on every part
            // before gfx12, GC 9.4.3 included.
            Generation::Gfx90a | Generation::Gfx94 | Generation::Gfx11 => {
                Pte::new().with_pde_pte(true).into_bits()
            }
            Generation::Gfx12 => PteGfx12::new().with_is_pte(true).into_bits(),
        }
    }
}

/// `enum amdgpu_vm_level` (`amdgpu_vm.h`): the level of the table an
/// entry sits in.
pub const PDB2: u8 = 0;
pub const PDB1: u8 = 1;
pub const PDB0: u8 = 2;
pub const PTB: u8 = 3;

/// The entry format a [`TableArena`] writes: where the large-page and
/// memory-type bits sit and what a directory entry carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PteFormat {
    /// gfx10/gfx11 (`AMDGPU_PDE_PTE`, `AMDGPU_PTE_MTYPE_NV10`).
    Gfx11,
    /// gfx12 (`AMDGPU_PDE_PTE_GFX12`, `AMDGPU_PTE_MTYPE_GFX12`).
    Gfx12,
    /// GC 9.4.3 as Linux runs it: `gmc.translate_further` set, so a PDB1
    /// entry carries `AMDGPU_PDE_BFS(9)`, a PDB0 entry that points to a
    /// PTB carries `AMDGPU_PTE_TF`, and a PDB0 entry that maps 2 MiB is
    /// a plain PTE without `AMDGPU_PDE_PTE` (`gmc_v9_0_get_vm_pde()`);
    /// MTYPE is `AMDGPU_PTE_MTYPE_VG10` ([`crate::gmc::pte_v9`]).
    Gfx9TranslateFurther,
}

impl From<Generation> for PteFormat {
    fn from(g: Generation) -> Self {
        match g {
            // Linux runs GC 9.4.2 and 9.4.3 with `gmc.translate_further`
            // set (`gmc_v9_0_sw_init()`).
            Generation::Gfx90a | Generation::Gfx94 => PteFormat::Gfx9TranslateFurther,
            Generation::Gfx11 => PteFormat::Gfx11,
            Generation::Gfx12 => PteFormat::Gfx12,
        }
    }
}

impl PteFormat {
    /// The bits a PDB0 entry that maps a 2 MiB page gets on top of the
    /// leaf's (`AMDGPU_PDE_PTE_FLAG()`, cleared again by
    /// `gmc_v9_0_get_vm_pde()` under translate-further).
    pub fn large_page_bits(self) -> u64 {
        match self {
            PteFormat::Gfx11 => Generation::Gfx11.pde_pte(),
            PteFormat::Gfx12 => Generation::Gfx12.pde_pte(),
            PteFormat::Gfx9TranslateFurther => 0,
        }
    }

    /// The flags of a directory entry in a table of `level` that points
    /// to the table below (`amdgpu_gmc_get_pde_for_bo()` then
    /// `gmc_v9_0_get_vm_pde()` with the holding table's level).
    pub fn directory_bits(self, level: u8) -> u64 {
        match (self, level) {
            (PteFormat::Gfx9TranslateFurther, PDB1) => crate::gmc::pte_v9::PteV9::new()
                .with_bfs(crate::gmc::pte_v9::PDB1_BFS)
                .into_bits(),
            (PteFormat::Gfx9TranslateFurther, PDB0) => {
                crate::gmc::pte_v9::PteV9::new().with_tf(true).into_bits()
            }
            _ => 0,
        }
    }

    /// Whether a valid entry `raw` of a `level` directory maps memory
    /// itself (a large page) rather than pointing to a table.
    pub fn is_leaf(self, raw: u64, level: u8) -> bool {
        match self {
            PteFormat::Gfx9TranslateFurther => {
                let e = crate::gmc::pte_v9::PteV9::from_bits(raw);
                e.pde_pte() || (level == PDB0 && !e.tf())
            }
            f => raw & f.large_page_bits() != 0,
        }
    }

    /// `mtype` placed in this format's MTYPE field
    /// (`AMDGPU_PTE_MTYPE_NV10`, `_GFX12` or `_VG10`), out-of-range
    /// bits dropped.
    pub fn mtype_bits(self, mtype: u8) -> u64 {
        match self {
            PteFormat::Gfx11 => Pte::new().with_mtype(mtype & 7).into_bits(),
            PteFormat::Gfx12 => PteGfx12::new().with_mtype(mtype & 3).into_bits(),
            PteFormat::Gfx9TranslateFurther => crate::gmc::pte_v9::PteV9::new()
                .with_mtype(mtype & 3)
                .into_bits(),
        }
    }
}

/// Access rights and caching of one mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    pub readable: bool,
    pub writeable: bool,
    pub executable: bool,
    /// System memory (through the IOMMU) rather than VRAM.
    pub system: bool,
    pub snooped: bool,
}

/// One 4 KiB table.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(4096))]
pub struct Table(pub [u64; ENTRIES]);

impl Table {
    pub const EMPTY: Table = Table([0; ENTRIES]);
}

/// Why a mapping could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    /// VA, PA or size not 4 KiB aligned, VA below the tables' start, or
    /// VA − start or PA beyond 48 bits.
    BadRange { va: u64, pa: u64, size: u64 },
    /// The arena has no free table left.
    OutOfTables { capacity: usize },
    /// The range overlaps a 2 MiB page, or a 2 MiB page would replace a
    /// table already in use.
    Conflict { va: u64 },
}

impl core::fmt::Display for MapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MapError::BadRange { va, pa, size } => write!(
                f,
                "{size:#x} bytes from VA {va:#x} to PA {pa:#x}: not 4 KiB aligned, below the tables' start or beyond 48 bits"
            ),
            MapError::OutOfTables { capacity } => {
                write!(f, "all {capacity} page tables of the arena are in use")
            }
            MapError::Conflict { va } => {
                write!(f, "{va:#x} overlaps a 2 MiB page or a table already in use")
            }
        }
    }
}

/// Tables in one contiguous, device-visible arena: table `i` sits at MC
/// address `mc_base + i * 4096`. Table 0 is the root (PDB2).
///
/// The tables translate VAs from `va_base` on: the hub walks `VA -
/// PAGE_TABLE_START_ADDR`, so entry indices come from the VA relative to
/// the context's start, as `amdgpu_gart_map()` indexes the GART by the
/// offset into the aperture and tinygrad's AM walks `vaddr - va_base`
/// (`PageTableTraverseContext`). User contexts start at 0
/// (`*_setup_vmid_config()`), VMID0 at the GART's start
/// (`*_init_gart_aperture_regs()`).
#[derive(Debug)]
pub struct TableArena<'a> {
    tables: &'a mut [Table],
    mc_base: u64,
    va_base: u64,
    used: usize,
    format: PteFormat,
}

impl<'a> TableArena<'a> {
    /// `tables` must be what the device sees at `mc_base`.
    pub fn new(tables: &'a mut [Table], mc_base: u64, format: impl Into<PteFormat>) -> Self {
        let format = format.into();
        if let Some(root) = tables.first_mut() {
            *root = Table::EMPTY;
        }
        let used = usize::from(!tables.is_empty());
        TableArena {
            tables,
            mc_base,
            va_base: 0,
            used,
            format,
        }
    }

    /// The same tables for a context whose `PAGE_TABLE_START_ADDR` is
    /// `va_base` (4 KiB aligned): [`TableArena::map`] then indexes `va -
    /// va_base` and refuses VAs below it.
    pub fn with_va_base(mut self, va_base: u64) -> Self {
        self.va_base = va_base;
        self
    }

    /// The first VA the tables translate (the context's start).
    pub fn va_base(&self) -> u64 {
        self.va_base
    }

    /// MC address of the root table (what the context's page-table base
    /// register gets).
    pub fn root(&self) -> u64 {
        self.mc_base
    }

    pub fn tables_used(&self) -> usize {
        self.used
    }

    fn index_of(&self, mc: u64) -> Option<usize> {
        let off = mc.checked_sub(self.mc_base)?;
        let i = usize::try_from(off / PAGE).ok()?;
        (i < self.used && off % PAGE == 0).then_some(i)
    }

    fn alloc(&mut self) -> Result<usize, MapError> {
        let capacity = self.tables.len();
        let t = self
            .tables
            .get_mut(self.used)
            .ok_or(MapError::OutOfTables { capacity })?;
        *t = Table::EMPTY;
        self.used += 1;
        Ok(self.used - 1)
    }

    fn entry(&mut self, table: usize, index: usize) -> Option<&mut u64> {
        self.tables.get_mut(table)?.0.get_mut(index)
    }

    /// The format the arena writes.
    pub fn format(&self) -> PteFormat {
        self.format
    }

    /// The table below entry `index` of `table` (a table of `level`),
    /// creating it if needed.
    fn descend(
        &mut self,
        table: usize,
        index: usize,
        va: u64,
        level: u8,
    ) -> Result<usize, MapError> {
        let raw = self.entry(table, index).map_or(0, |e| *e);
        let cur = Pte::from_bits(raw);
        if cur.valid() {
            if self.format.is_leaf(raw, level) {
                return Err(MapError::Conflict { va });
            }
            return self
                .index_of(cur.address())
                .ok_or(MapError::Conflict { va });
        }
        let next = self.alloc()?;
        let addr = self.mc_base + next as u64 * PAGE;
        let pde = Pte::new().with_valid(true).with_pfn(addr >> 12).into_bits()
            | self.format.directory_bits(level);
        if let Some(e) = self.entry(table, index) {
            *e = pde;
        }
        Ok(next)
    }

    fn leaf(flags: Flags, pa: u64) -> Pte {
        Pte::new()
            .with_valid(true)
            .with_system(flags.system)
            .with_snooped(flags.snooped)
            .with_readable(flags.readable)
            .with_writeable(flags.writeable)
            .with_executable(flags.executable)
            .with_pfn(pa >> 12)
    }

    /// Maps `size` bytes at `va` to `pa`. 2 MiB-aligned stretches become
    /// 2 MiB pages when `large_pages`; the rest become 4 KiB PTEs whose
    /// fragment field is the largest aligned block (up to 2 MiB) that lies
    /// wholly inside this mapping at matching alignment of VA and PA
    /// (follows `amdgpu_vm_pte_fragment()`). Indices, 2 MiB alignment and
    /// fragments are taken on `va - va_base`, the address the hub walks.
    pub fn map(
        &mut self,
        va: u64,
        pa: u64,
        size: u64,
        flags: Flags,
        large_pages: bool,
    ) -> Result<(), MapError> {
        self.map_typed(va, pa, size, flags, large_pages, 0)
    }

    /// [`TableArena::map`] with the leaves' MTYPE field set to `mtype`
    /// (the format's encoding, [`PteFormat::mtype_bits`]); `map` writes
    /// 0 (`MTYPE_NC` on gfx9).
    pub fn map_typed(
        &mut self,
        va: u64,
        pa: u64,
        size: u64,
        flags: Flags,
        large_pages: bool,
        mtype: u8,
    ) -> Result<(), MapError> {
        let mtype = self.format.mtype_bits(mtype);
        let bad = MapError::BadRange { va, pa, size };
        if !va.is_multiple_of(PAGE)
            || !pa.is_multiple_of(PAGE)
            || !size.is_multiple_of(PAGE)
            || !self.va_base.is_multiple_of(PAGE)
        {
            return Err(bad);
        }
        let rel = va.checked_sub(self.va_base).ok_or(bad)?;
        let end = rel.checked_add(size).ok_or(bad)?;
        if end > 1 << 48 || pa.checked_add(size).is_none_or(|e| e > 1 << 48) {
            return Err(bad);
        }
        let mut off = 0;
        while off < size {
            let (r, p) = (rel + off, pa + off);
            let v = va + off;
            let idx = |shift: u32| ((r >> shift) & (ENTRIES as u64 - 1)) as usize;
            let pdb1 = self.descend(0, idx(39), v, PDB2)?;
            let pdb0 = self.descend(pdb1, idx(30), v, PDB1)?;
            if large_pages && r % LARGE_PAGE == 0 && p % LARGE_PAGE == 0 && size - off >= LARGE_PAGE
            {
                let raw = self.entry(pdb0, idx(21)).map_or(0, |e| *e);
                if raw & 1 != 0 && !self.format.is_leaf(raw, PDB0) {
                    return Err(MapError::Conflict { va: v });
                }
                let e = Self::leaf(flags, p).into_bits() | self.format.large_page_bits() | mtype;
                if let Some(slot) = self.entry(pdb0, idx(21)) {
                    *slot = e;
                }
                off += LARGE_PAGE;
                continue;
            }
            let ptb = self.descend(pdb0, idx(21), v, PDB0)?;
            // Largest fragment: the aligned block around r must sit inside
            // [rel, end) and the walked address and PA must share that
            // alignment.
            let mut frag = 0u8;
            while frag < 9 {
                let block = PAGE << (frag + 1);
                let start = r & !(block - 1);
                if (r ^ p) & (block - 1) != 0 || start < rel || start + block > end {
                    break;
                }
                frag += 1;
            }
            let e = Self::leaf(flags, p).with_fragment(frag).into_bits() | mtype;
            if let Some(slot) = self.entry(ptb, idx(12)) {
                *slot = e;
            }
            off += PAGE;
        }
        Ok(())
    }

    /// Takes `size` bytes at `va` out of the tables: each 4 KiB PTE of the
    /// range cleared (what `amdgpu_vm_bo_unmap()` and
    /// `amdgpu_vm_clear_freed()` leave: no valid bit). Pages never mapped
    /// are skipped; a range inside a 2 MiB page is refused (it would
    /// unmap more than asked). The tables stay allocated for a later map.
    /// The caller flushes the TLBs of every context that walks them.
    pub fn unmap(&mut self, va: u64, size: u64) -> Result<(), MapError> {
        let bad = MapError::BadRange { va, pa: 0, size };
        if !va.is_multiple_of(PAGE) || !size.is_multiple_of(PAGE) {
            return Err(bad);
        }
        let rel = va.checked_sub(self.va_base).ok_or(bad)?;
        if rel.checked_add(size).is_none_or(|e| e > 1 << 48) {
            return Err(bad);
        }
        if size == 0 {
            return Ok(());
        }
        let mut off = 0;
        while off < size {
            let (r, v) = (rel + off, va + off);
            off += PAGE;
            let Some(table) = self.ptb_of(r, v)? else {
                continue;
            };
            let i = ((r >> 12) & (ENTRIES as u64 - 1)) as usize;
            if let Some(e) = self.entry(table, i) {
                *e = 0;
            }
        }
        // The PTEs left around the range may promise a fragment block that
        // now has a hole; they promise no more than their own page after
        // this (Linux rewrites the remnants of a split mapping,
        // `amdgpu_vm_bo_clear_mappings()`; fragment 0 is always true).
        for edge in [rel, rel + size - 1] {
            self.demote_fragments(edge & !(LARGE_PAGE - 1), va, rel, rel + size)?;
        }
        Ok(())
    }

    /// The page table block holding relative address `r` (`va` names it in
    /// errors), or `None` where a directory on the way is not valid.
    fn ptb_of(&mut self, r: u64, va: u64) -> Result<Option<usize>, MapError> {
        let idx = |shift: u32| ((r >> shift) & (ENTRIES as u64 - 1)) as usize;
        let mut table = 0;
        for (shift, level) in [(39, PDB2), (30, PDB1), (21, PDB0)] {
            let raw = self.entry(table, idx(shift)).map_or(0, |e| *e);
            if raw & 1 == 0 {
                return Ok(None);
            }
            if self.format.is_leaf(raw, level) {
                return Err(MapError::Conflict { va });
            }
            table = self
                .index_of(Pte::from_bits(raw).address())
                .ok_or(MapError::Conflict { va })?;
        }
        Ok(Some(table))
    }

    /// Sets fragment 0 on every valid PTE of the 2 MiB block at relative
    /// address `block` whose fragment block overlaps `[lo, hi)`.
    fn demote_fragments(&mut self, block: u64, va: u64, lo: u64, hi: u64) -> Result<(), MapError> {
        let Some(table) = self.ptb_of(block, va)? else {
            return Ok(());
        };
        for i in 0..ENTRIES {
            let Some(e) = self.entry(table, i) else {
                continue;
            };
            let pte = Pte::from_bits(*e);
            if *e & 1 == 0 || pte.fragment() == 0 {
                continue;
            }
            let bytes = PAGE << pte.fragment();
            let start = (block + i as u64 * PAGE) & !(bytes - 1);
            if start < hi && start + bytes > lo {
                *e = pte.with_fragment(0).into_bits();
            }
        }
        Ok(())
    }
}

/// Each PTE bit as `amdgpu_vm.h` defines it: `(name, mask)`. The header
/// cannot be compiled outside the kernel (it pulls in the scheduler and
/// TTM), so `tests/harness/tests/gmc.rs` checks these against its text.
pub fn header_masks() -> [(&'static str, u64); 11] {
    let b = |p: Pte| p.into_bits();
    [
        ("AMDGPU_PTE_VALID", b(Pte::new().with_valid(true))),
        ("AMDGPU_PTE_SYSTEM", b(Pte::new().with_system(true))),
        ("AMDGPU_PTE_SNOOPED", b(Pte::new().with_snooped(true))),
        ("AMDGPU_PTE_TMZ", b(Pte::new().with_tmz(true))),
        ("AMDGPU_PTE_EXECUTABLE", b(Pte::new().with_executable(true))),
        ("AMDGPU_PTE_READABLE", b(Pte::new().with_readable(true))),
        ("AMDGPU_PTE_WRITEABLE", b(Pte::new().with_writeable(true))),
        ("AMDGPU_PTE_PRT", b(Pte::new().with_prt(true))),
        ("AMDGPU_PDE_PTE", b(Pte::new().with_pde_pte(true))),
        ("AMDGPU_PTE_LOG", b(Pte::new().with_log(true))),
        ("AMDGPU_PTE_NOALLOC", b(Pte::new().with_noalloc(true))),
    ]
}

/// Positions of the multi-bit fields, for the same header check:
/// `(field, shift, width)`.
pub const FIELD_POSITIONS: [(&str, usize, usize); 3] = [
    ("fragment", Pte::FRAGMENT_OFFSET, Pte::FRAGMENT_BITS),
    ("bfs", Pte::BFS_OFFSET, Pte::BFS_BITS),
    ("mtype", Pte::MTYPE_OFFSET, Pte::MTYPE_BITS),
];

/// The gfx12 bits, for the same header check: `(name, mask)`.
pub fn header_masks_gfx12() -> [(&'static str, u64); 4] {
    let b = |p: PteGfx12| p.into_bits();
    [
        ("AMDGPU_PTE_PRT_GFX12", b(PteGfx12::new().with_prt(true))),
        ("AMDGPU_PTE_DCC", b(PteGfx12::new().with_dcc(true))),
        ("AMDGPU_PTE_IS_PTE", b(PteGfx12::new().with_is_pte(true))),
        ("AMDGPU_PDE_PTE_GFX12", Generation::Gfx12.pde_pte()),
    ]
}

/// gfx12 multi-bit fields: `(field, shift, width)`.
pub const FIELD_POSITIONS_GFX12: [(&str, usize, usize); 2] = [
    ("mtype", PteGfx12::MTYPE_OFFSET, PteGfx12::MTYPE_BITS),
    (
        "fragment",
        PteGfx12::FRAGMENT_OFFSET,
        PteGfx12::FRAGMENT_BITS,
    ),
];

pub use crate::gmc::hub::invalidate::{INVALIDATE_TIMEOUT_NS, InvalidateError};

/// Invalidates `vmid`'s GFXHUB 3.0 (GC 11.0.0) translations through
/// invalidation engine `engine` and waits, bounded, for its ACK:
/// [`crate::gmc::hub::invalidate`] with [`crate::gmc::hub::GFXHUB_3_0`], kept for
/// callers that predate the hub tables. No semaphore, as in Linux for the
/// GFXHUB. Callers whose tables were written through the BAR call
/// [`crate::nbio::flush_hdp`] first.
pub fn invalidate_gfxhub<B, C>(
    bus: &B,
    clock: &C,
    gc_bases: &crate::regs::IpBases,
    engine: u32,
    vmid: u32,
    flush_type: u8,
) -> Result<(), InvalidateError>
where
    B: crate::bus::RegisterBus + ?Sized,
    C: crate::time::Clock + ?Sized,
{
    crate::gmc::hub::invalidate(
        bus,
        clock,
        gc_bases,
        &crate::gmc::hub::GFXHUB_3_0,
        engine,
        vmid,
        flush_type,
    )
}
