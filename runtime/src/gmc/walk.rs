//! A read-only walk of one VM context's page tables, for introspection
//! (`barebell vm walk`): every entry read on the way from the root to the
//! page, and where the walk stopped.
//!
//! The walk follows what the context's registers say, not what barebell
//! built, so it shows what the VM L2 would do with the tables in memory:
//! - the root is `*_CONTEXTn_PAGE_TABLE_BASE_ADDR` (bit 0, the valid bit
//!   Linux sets for a PDB0-less root, dropped), the walk indexes `VA -
//!   PAGE_TABLE_START_ADDR`, and a VA past `PAGE_TABLE_END_ADDR` is out
//!   of range;
//! - `PAGE_TABLE_DEPTH` directory levels sit above the leaf level; the
//!   leaf level's entries each map `2^PAGE_TABLE_BLOCK_SIZE` 4 KiB pages
//!   and each level above spans 9 bits more (`amdgpu_vm_pt_level_shift()`;
//!   the root's index is not masked, the range bounds it);
//! - a directory entry with the format's PDE-is-PTE bit (`AMDGPU_PDE_PTE`,
//!   `AMDGPU_PDE_PTE_GFX12`) is a page as large as its level's span;
//! - in the GC 9.4.3 format, a leaf-level entry with `AMDGPU_PTE_TF`
//!   points to a table of `2^block_size` 4 KiB PTEs
//!   (`gmc_v9_0_get_vm_pde()` under `gmc.translate_further`).
//!
//! Entry addresses are bits 47:12 (`gmc_v9_0_get_vm_pde()` refuses any of
//! `0xFFFF00000000003F`). Reading memory is the caller's: it is given
//! physical addresses and answers `None` where it cannot read.

use super::pagetable::PteFormat;
use crate::ip::Generation;

/// Address bits of an entry.
pub const ADDRESS: u64 = 0x0000_FFFF_FFFF_F000;
/// `AMDGPU_PTE_VALID`.
const VALID: u64 = 1;
/// `AMDGPU_PTE_SYSTEM`.
const SYSTEM: u64 = 1 << 1;
/// `AMDGPU_PTE_TF` (GC 9.4.3's translate-further).
const TF: u64 = 1 << 56;
/// Tables the longest walk reads: four directory levels, the leaf level
/// and a translate-further table.
pub const MAX_TABLES: usize = 6;

/// A context as its registers describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// The root table's physical address.
    pub root: u64,
    /// First and last VA the context translates.
    pub start: u64,
    pub end: u64,
    /// `PAGE_TABLE_DEPTH` and `PAGE_TABLE_BLOCK_SIZE`.
    pub depth: u8,
    pub block_size: u8,
}

impl Context {
    /// The context from its registers: the base pair (root, valid bit
    /// dropped), the start and end pairs (4 KiB page numbers) and the
    /// CNTL register's two fields.
    pub fn from_registers(
        base: (u32, u32),
        start: (u32, u32),
        end: (u32, u32),
        depth: u8,
        block_size: u8,
    ) -> Context {
        let pair = |(lo, hi): (u32, u32)| u64::from(lo) | u64::from(hi) << 32;
        Context {
            root: pair(base) & !1,
            start: (pair(start) << 12) & ((1 << 48) - 1),
            end: ((pair(end) << 12) | 0xFFF) & ((1 << 48) - 1),
            depth,
            block_size,
        }
    }
}

/// One entry the walk read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Entry {
    /// Tables read before this one (0: the root).
    pub level: u8,
    /// The table's physical address and the entry's index in it.
    pub table: u64,
    pub index: u64,
    pub raw: u64,
}

/// Where a walk that found no page stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The VA lies outside the context's start..=end.
    OutOfRange,
    /// The last entry read is not valid.
    Invalid,
    /// The table at this physical address could not be read.
    Unreadable { table: u64 },
    /// The context's depth or block size is outside what the hardware
    /// defines (depth 0 to 3, block size 0 to 15).
    BadShape,
}

/// The page a walk found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// The VA's physical address (the page's plus the offset in it).
    pub pa: u64,
    /// Bytes the entry maps.
    pub bytes: u64,
    /// The entry that maps it (the last in [`Walk::entries`]).
    pub raw: u64,
    /// `AMDGPU_PTE_SYSTEM`: `pa` is a bus address, not VRAM.
    pub system: bool,
}

/// Every entry read, and the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walk {
    entries: [Entry; MAX_TABLES],
    len: usize,
    pub outcome: Result<Page, Stop>,
}

impl Walk {
    /// The entries in the order they were read, root first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries[..self.len]
    }

    fn push(&mut self, e: Entry) {
        if let Some(slot) = self.entries.get_mut(self.len) {
            *slot = e;
            self.len += 1;
        }
    }
}

/// The PDE-is-PTE bit of `format`.
pub fn pde_pte_bit(format: PteFormat) -> u64 {
    match format {
        PteFormat::Gfx12 => Generation::Gfx12.pde_pte(),
        PteFormat::Gfx11 | PteFormat::Gfx9TranslateFurther => Generation::Gfx11.pde_pte(),
    }
}

/// Walks `va` through `ctx`; `read` answers the 8-byte entry at a
/// physical address.
pub fn walk(
    format: PteFormat,
    ctx: &Context,
    va: u64,
    read: &mut dyn FnMut(u64) -> Option<u64>,
) -> Walk {
    let mut w = Walk {
        entries: [Entry::default(); MAX_TABLES],
        len: 0,
        outcome: Err(Stop::OutOfRange),
    };
    w.outcome = walk_into(format, ctx, va, read, &mut w);
    w
}

fn walk_into(
    format: PteFormat,
    ctx: &Context,
    va: u64,
    read: &mut dyn FnMut(u64) -> Option<u64>,
    w: &mut Walk,
) -> Result<Page, Stop> {
    if ctx.depth > 3 || ctx.block_size > 15 {
        return Err(Stop::BadShape);
    }
    if va < ctx.start || va > ctx.end {
        return Err(Stop::OutOfRange);
    }
    let rel = va - ctx.start;
    let bs = u32::from(ctx.block_size);
    let depth = u32::from(ctx.depth);
    let mut entry_at = |w: &mut Walk, level: u8, table: u64, index: u64| {
        let at = table
            .checked_add(index * 8)
            .ok_or(Stop::Unreadable { table })?;
        let raw = read(at).ok_or(Stop::Unreadable { table })?;
        w.push(Entry {
            level,
            table,
            index,
            raw,
        });
        if raw & VALID == 0 {
            return Err(Stop::Invalid);
        }
        Ok(raw)
    };
    let page = |raw: u64, bytes: u64| Page {
        pa: (raw & ADDRESS & !(bytes - 1)) | (rel & (bytes - 1)),
        bytes,
        raw,
        system: raw & SYSTEM != 0,
    };
    let mut table = ctx.root;
    for level in 0..=depth {
        let above_leaf = depth - level;
        let shift = 12 + bs + 9 * above_leaf;
        let mut index = rel >> shift;
        if level != 0 {
            index &= 511;
        }
        let raw = entry_at(w, level as u8, table, index)?;
        if above_leaf == 0 {
            if format == PteFormat::Gfx9TranslateFurther && raw & TF != 0 {
                let index = (rel >> 12) & ((1 << bs) - 1);
                let pte = entry_at(w, level as u8 + 1, raw & ADDRESS, index)?;
                return Ok(page(pte, 1 << 12));
            }
            return Ok(page(raw, 1 << shift));
        }
        if raw & pde_pte_bit(format) != 0 {
            return Ok(page(raw, 1 << shift));
        }
        table = raw & ADDRESS;
    }
    // The loop returns at the leaf level.
    Err(Stop::BadShape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmc::pagetable::{Flags, Table, TableArena};

    const RW: Flags = Flags {
        readable: true,
        writeable: true,
        executable: false,
        system: true,
        snooped: true,
    };

    /// Reads the arena's tables, placed at `base`.
    fn reader(tables: &[Table], base: u64) -> impl FnMut(u64) -> Option<u64> + '_ {
        move |pa| {
            let off = pa.checked_sub(base)?;
            let t = tables.get((off / 4096) as usize)?;
            t.0.get(((off % 4096) / 8) as usize).copied()
        }
    }

    /// The context of GC 9.4.x's process tables over the whole 48-bit
    /// range: depth 2, block size 9 (`gmc_v9_0_sw_init()`).
    fn translate_further(root: u64) -> Context {
        Context {
            root,
            start: 0,
            end: (1 << 48) - 1,
            depth: 2,
            block_size: 9,
        }
    }

    /// GC 9.4.x's process tables as Linux runs them (`gmc_v9_0_sw_init()`
    /// sets `translate_further`: depth 2, block size 9): the PDB0 entry of
    /// a 2 MiB range carries `AMDGPU_PTE_TF` and points to a PTB whose
    /// 512 entries map its 4 KiB pages, indexed by VA bits 20:12.
    #[test]
    fn a_4k_page_through_a_translate_further_pdb0() {
        let mut tables = [Table::EMPTY; 8];
        let base = 0x80_0000_0000;
        let mut a = TableArena::new(&mut tables, base, Generation::Gfx94);
        let ro = Flags {
            writeable: false,
            ..RW
        };
        // Two pages of one 2 MiB range, PTB entries 1 and 3.
        a.map(0x7f00_0020_1000, 0x5555_1000, 4096, ro, false)
            .unwrap();
        a.map(0x7f00_0020_3000, 0x1234_5000, 4096, RW, false)
            .unwrap();
        let ctx = translate_further(base);
        let w = walk(
            PteFormat::Gfx9TranslateFurther,
            &ctx,
            0x7f00_0020_3010,
            &mut reader(&tables, base),
        );
        let p = w.outcome.unwrap();
        assert_eq!((p.pa, p.bytes, p.system), (0x1234_5010, 4096, true));
        // PDB2, PDB1, PDB0 (the TF entry), then the PTB's entry 3.
        let e = w.entries();
        assert_eq!(e.len(), 4);
        assert_eq!(e[2].raw & TF, TF);
        assert_eq!((e[3].level, e[3].index), (3, 3));
        assert_eq!(e[3].table, e[2].raw & ADDRESS);
        let other = walk(
            PteFormat::Gfx9TranslateFurther,
            &ctx,
            0x7f00_0020_1ffc,
            &mut reader(&tables, base),
        );
        assert_eq!(other.outcome.unwrap().pa, 0x5555_1ffc);
    }

    /// In the same translate-further tables a 2 MiB mapping is a PDB0
    /// entry without `AMDGPU_PTE_TF` (a PDE-as-PTE, `AMDGPU_PDE_PTE`): the
    /// walk stops there with a 2 MiB page instead of reading a PTB.
    #[test]
    fn a_2m_page_in_translate_further_tables_is_not_walked_further() {
        let mut tables = [Table::EMPTY; 8];
        let base = 0x80_0000_0000;
        let mut a = TableArena::new(&mut tables, base, Generation::Gfx94);
        a.map(0x7f00_0040_0000, 0x4000_0000, 2 << 20, RW, true)
            .unwrap();
        let ctx = translate_further(base);
        let w = walk(
            PteFormat::Gfx9TranslateFurther,
            &ctx,
            0x7f00_0045_6780,
            &mut reader(&tables, base),
        );
        assert_eq!(w.entries()[2].raw & TF, 0);
        let p = w.outcome.unwrap();
        assert_eq!((p.pa, p.bytes), (0x4005_6780, 2 << 20));
        assert_eq!(w.entries().len(), 3);
    }

    #[test]
    fn a_4k_page_through_four_levels() {
        let mut tables = [Table::EMPTY; 8];
        let base = 0x80_0000_0000;
        let mut a = TableArena::new(&mut tables, base, Generation::Gfx11);
        a.map(0x7f00_0000_1000, 0x1234_5000, 4096, RW, false)
            .unwrap();
        let ctx = Context {
            root: base,
            start: 0,
            end: (1 << 48) - 1,
            depth: 3,
            block_size: 0,
        };
        let w = walk(
            PteFormat::Gfx11,
            &ctx,
            0x7f00_0000_1abc,
            &mut reader(&tables, base),
        );
        let p = w.outcome.unwrap();
        assert_eq!(p.pa, 0x1234_5abc);
        assert_eq!(p.bytes, 4096);
        assert!(p.system);
        assert_eq!(w.entries().len(), 4);
        // VA bits 47:39 index the root.
        assert_eq!(w.entries()[0].index, 0x7f00_0000_1000 >> 39);
        // The next page is not mapped: the PTB's entry is invalid.
        let w = walk(
            PteFormat::Gfx11,
            &ctx,
            0x7f00_0000_2000,
            &mut reader(&tables, base),
        );
        assert_eq!(w.outcome, Err(Stop::Invalid));
        assert_eq!(w.entries().len(), 4);
    }

    /// `TableArena::unmap` clears the range's PTEs and nothing else; the
    /// walk then stops at the invalid PTE, and the pages map again into
    /// the same tables. A range inside a 2 MiB page is refused.
    #[test]
    fn unmapped_pages_stop_the_walk_and_map_again() {
        let mut tables = [Table::EMPTY; 8];
        let base = 0x80_0000_0000;
        let ctx = Context {
            root: base,
            start: 0,
            end: (1 << 48) - 1,
            depth: 3,
            block_size: 0,
        };
        let used = {
            let mut a = TableArena::new(&mut tables, base, Generation::Gfx11);
            a.map(0x7f00_0000_0000, 0x1234_0000, 3 * 4096, RW, false)
                .unwrap();
            a.unmap(0x7f00_0000_1000, 4096).unwrap();
            // Never mapped: skipped.
            a.unmap(0x1000_0000_0000, 4096).unwrap();
            a.tables_used()
        };
        let at = |tables: &[Table], va| {
            walk(PteFormat::Gfx11, &ctx, va, &mut reader(tables, base)).outcome
        };
        assert_eq!(at(&tables, 0x7f00_0000_0000).unwrap().pa, 0x1234_0000);
        assert_eq!(at(&tables, 0x7f00_0000_1000), Err(Stop::Invalid));
        assert_eq!(at(&tables, 0x7f00_0000_2000).unwrap().pa, 0x1234_2000);
        // Root, PDB1, PDB0, PTB: the unmaps allocated nothing.
        assert_eq!(used, 4);
        let mut big = [Table::EMPTY; 8];
        let mut a = TableArena::new(&mut big, 0x10_0000, Generation::Gfx11);
        a.map(0x4000_0000, 0x8000_0000, 2 << 20, RW, true).unwrap();
        assert_eq!(
            a.unmap(0x4000_1000, 4096),
            Err(crate::gmc::pagetable::MapError::Conflict { va: 0x4000_1000 })
        );
    }

    #[test]
    fn a_2m_page_and_the_range() {
        let mut tables = [Table::EMPTY; 8];
        let base = 0x10_0000;
        let mut a = TableArena::new(&mut tables, base, Generation::Gfx12).with_va_base(0x4000_0000);
        assert_eq!((a.va_base(), a.format()), (0x4000_0000, PteFormat::Gfx12));
        a.map(0x4020_0000, 0x8000_0000, 2 << 20, RW, true).unwrap();
        let ctx = Context {
            root: base,
            start: 0x4000_0000,
            end: 0x7fff_ffff,
            depth: 3,
            block_size: 0,
        };
        let mut r = reader(&tables, base);
        let p = walk(PteFormat::Gfx12, &ctx, 0x4030_0008, &mut r)
            .outcome
            .unwrap();
        assert_eq!((p.pa, p.bytes), (0x8010_0008, 2 << 20));
        assert_eq!(
            walk(PteFormat::Gfx12, &ctx, 0x3fff_f000, &mut r).outcome,
            Err(Stop::OutOfRange)
        );
        assert_eq!(
            walk(PteFormat::Gfx12, &ctx, 0x8000_0000, &mut r).outcome,
            Err(Stop::OutOfRange)
        );
    }

    /// A large-page map (`large_pages`) whose length is not a multiple of
    /// 2 MiB ends in 4 KiB pages: the 2 MiB block goes in as one PDE-as-PTE,
    /// the tail page as a PTE, and nothing past the length is mapped.
    #[test]
    fn a_large_page_map_ends_in_small_pages_at_its_length() {
        let mut tables = [Table::EMPTY; 8];
        let base = 0x10_0000;
        let mut a = TableArena::new(&mut tables, base, Generation::Gfx12).with_va_base(0x4000_0000);
        a.map(0x4020_0000, 0x8000_0000, (2 << 20) + 4096, RW, true)
            .unwrap();
        let ctx = Context {
            root: base,
            start: 0x4000_0000,
            end: 0x7fff_ffff,
            depth: 3,
            block_size: 0,
        };
        let mut r = reader(&tables, base);
        let head = walk(PteFormat::Gfx12, &ctx, 0x4020_0010, &mut r);
        assert_eq!(
            head.outcome.map(|p| (p.pa, p.bytes)),
            Ok((0x8000_0010, 2 << 20))
        );
        let tail = walk(PteFormat::Gfx12, &ctx, 0x4040_0010, &mut r);
        assert_eq!(
            tail.outcome.map(|p| (p.pa, p.bytes)),
            Ok((0x8020_0010, 4096))
        );
        let past = walk(PteFormat::Gfx12, &ctx, 0x4040_1000, &mut r);
        assert_eq!(past.outcome, Err(Stop::Invalid));
    }

    #[test]
    fn an_unreadable_table_is_named() {
        let ctx = Context {
            root: 0x5000,
            start: 0,
            end: u64::MAX,
            depth: 3,
            block_size: 0,
        };
        let w = walk(PteFormat::Gfx11, &ctx, 0x1000, &mut |_| None);
        assert_eq!(w.outcome, Err(Stop::Unreadable { table: 0x5000 }));
        let bad = Context { depth: 4, ..ctx };
        assert_eq!(
            walk(PteFormat::Gfx11, &bad, 0, &mut |_| Some(0)).outcome,
            Err(Stop::BadShape)
        );
    }

    #[test]
    fn context_registers() {
        let c = Context::from_registers((0x8000_0001, 0x1), (0x10, 0), (0xf_ffff, 0), 3, 0);
        assert_eq!(c.root, 0x1_8000_0000);
        assert_eq!(c.start, 0x10_000);
        assert_eq!(c.end, 0xffff_ffff);
    }
}
