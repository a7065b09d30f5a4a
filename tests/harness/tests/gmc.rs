//! The runtime's gfx11 page tables, walked by the model's GMC.
//!
//! Expected physical addresses come from the mappings the test asks for,
//! computed here by hand; the PTE bit positions are checked against the
//! text of Linux 6.12 `amdgpu_vm.h` (which cannot be compiled outside the
//! kernel, so the conformance harness cannot probe it).

use barebell::gmc::pagetable::{
    FIELD_POSITIONS, FIELD_POSITIONS_GFX12, Flags, LARGE_PAGE, MapError, PAGE, Pte, Table,
    TableArena, header_masks, header_masks_gfx12,
};
use barebell::ip::Generation;
use barebell_model::dma::Dma;
use barebell_model::gmc::{self as walk, Access, Context, FaultReason, Format, Gmc};

const RW: Flags = Flags {
    readable: true,
    writeable: true,
    executable: false,
    system: false,
    snooped: false,
};

/// A leaked arena of `n` tables and a DMA view that maps it.
fn arena(n: usize) -> (&'static mut [Table], u64, Dma) {
    let tables: &'static mut [Table] = Box::leak(vec![Table::EMPTY; n].into_boxed_slice());
    let base = tables.as_ptr() as u64;
    let mut dma = Dma::default();
    // SAFETY: leaked, so it outlives `dma`; the runtime is done writing
    // before the model reads (each test maps first, then walks).
    unsafe { dma.map(base, (n * 4096) as u64) };
    (tables, base, dma)
}

#[test]
fn small_pages_translate_and_unmapped_faults() {
    let (tables, base, dma) = arena(8);
    let root = {
        let mut a = TableArena::new(tables, base, Generation::Gfx11);
        a.map(0x1_0000_3000, 0x8000_4000, 3 * PAGE, RW, true)
            .unwrap();
        assert_eq!(a.tables_used(), 4); // PDB2, PDB1, PDB0, PTB
        a.root()
    };
    let mut g = Gmc::new(&dma, root, false);
    for i in 0..3 {
        let t = g
            .translate(0x1_0000_3000 + i * PAGE + 0x10, Access::Read)
            .unwrap();
        assert_eq!(t.pa, 0x8000_4000 + i * PAGE + 0x10);
        // VA 0x..3000 and PA 0x..4000 differ in bit 12: no block of two
        // or more pages lines up, so every PTE is its own fragment.
        assert_eq!(t.tlb_bytes, PAGE);
    }
    let f = g.translate(0x1_0000_6000, Access::Read).unwrap_err();
    assert_eq!(f.reason, FaultReason::Invalid { level: 3 });
    assert_eq!(
        g.translate(0x2_0000_0000, Access::Read).unwrap_err().reason,
        FaultReason::Invalid { level: 1 }
    );
    // The first fault stays latched.
    assert_eq!(g.fault().unwrap().va, 0x1_0000_6000);
}

#[test]
fn permissions_are_enforced() {
    let (tables, base, dma) = arena(8);
    let ro = Flags {
        writeable: false,
        ..RW
    };
    let root = {
        let mut a = TableArena::new(tables, base, Generation::Gfx11);
        a.map(0x4000_0000, 0x10_0000, PAGE, ro, false).unwrap();
        a.root()
    };
    let mut g = Gmc::new(&dma, root, false);
    assert!(g.translate(0x4000_0000, Access::Read).is_ok());
    assert_eq!(
        g.translate(0x4000_0008, Access::Write).unwrap_err().reason,
        FaultReason::Permission
    );
    assert_eq!(
        g.translate(0x4000_0008, Access::Execute)
            .unwrap_err()
            .reason,
        FaultReason::Permission
    );
}

#[test]
fn large_page_is_one_pdb0_entry() {
    let (tables, base, dma) = arena(8);
    let root = {
        let mut a = TableArena::new(tables, base, Generation::Gfx11);
        // 4 MiB at 2 MiB alignment: two 2 MiB pages, no PTB.
        a.map(0x20_0000_0000, 0x1_0040_0000, 2 * LARGE_PAGE, RW, true)
            .unwrap();
        assert_eq!(a.tables_used(), 3);
        a.root()
    };
    let mut g = Gmc::new(&dma, root, false);
    let t = g
        .translate(0x20_0000_0000 + LARGE_PAGE + 0x1234, Access::Write)
        .unwrap();
    assert_eq!(t.pa, 0x1_0040_0000 + LARGE_PAGE + 0x1234);
    assert_eq!(t.tlb_bytes, LARGE_PAGE);
    // A 4 KiB mapping inside a large page is a conflict, not a silent split.
    let (tables, base, _) = arena(8);
    let mut a = TableArena::new(tables, base, Generation::Gfx11);
    a.map(0, 0, LARGE_PAGE, RW, true).unwrap();
    assert_eq!(
        a.map(PAGE, 0x5000, PAGE, RW, true),
        Err(MapError::Conflict { va: PAGE })
    );
}

#[test]
fn fragments_cover_aligned_contiguous_blocks_and_lies_fault() {
    let (tables, base, dma) = arena(8);
    // 64 KiB at 64 KiB-aligned VA and PA, not using large pages: every PTE
    // may claim fragment 4 (64 KiB = 4 KiB << 4).
    let (va, pa) = (0x7000_0000u64, 0x3_0001_0000u64);
    let root = {
        let mut a = TableArena::new(tables, base, Generation::Gfx11);
        a.map(va, pa, 16 * PAGE, RW, false).unwrap();
        a.root()
    };
    let mut g = Gmc::new(&dma, root, false);
    for i in 0..16 {
        let t = g.translate(va + i * PAGE + 8, Access::Read).unwrap();
        assert_eq!(t.pa, pa + i * PAGE + 8);
        assert_eq!(t.tlb_bytes, 16 * PAGE);
    }
    // Break the promise: point one page of the block elsewhere. Find the
    // PTE through the tables (root -> PDB1 -> PDB0 -> PTB).
    let entry = |table: u64, idx: u64| unsafe {
        // SAFETY: inside the leaked arena, 8-byte aligned.
        &mut *((table + idx * 8) as *mut u64)
    };
    let pdb1 = Pte::from_bits(*entry(root, (va >> 39) & 511)).address();
    let pdb0 = Pte::from_bits(*entry(pdb1, (va >> 30) & 511)).address();
    let ptb = Pte::from_bits(*entry(pdb0, (va >> 21) & 511)).address();
    let pte = entry(ptb, ((va >> 12) & 511) + 5);
    *pte = Pte::from_bits(*pte).with_pfn(0x9_9999).into_bits();
    let f = g.translate(va, Access::Read).unwrap_err();
    assert_eq!(f.reason, FaultReason::FragmentMismatch { fragment: 4 });
}

#[test]
fn unaligned_mappings_get_smaller_fragments() {
    let (tables, base, dma) = arena(8);
    // 12 KiB starting 4 KiB into a 16 KiB block: the first page can only
    // be a fragment of itself; the next two form an aligned 8 KiB block.
    let root = {
        let mut a = TableArena::new(tables, base, Generation::Gfx11);
        a.map(0x1000, 0x41000, 3 * PAGE, RW, false).unwrap();
        a.root()
    };
    let mut g = Gmc::new(&dma, root, false);
    assert_eq!(g.translate(0x1000, Access::Read).unwrap().tlb_bytes, PAGE);
    assert_eq!(
        g.translate(0x2000, Access::Read).unwrap().tlb_bytes,
        2 * PAGE
    );
    assert_eq!(
        g.translate(0x3000, Access::Read).unwrap().tlb_bytes,
        2 * PAGE
    );
    assert_eq!(g.translate(0x3fff, Access::Read).unwrap().pa, 0x43fff);
}

#[test]
fn arena_exhaustion_and_bad_ranges_are_typed() {
    let (tables, base, _) = arena(3);
    let mut a = TableArena::new(tables, base, Generation::Gfx11);
    assert_eq!(
        a.map(0, 0, PAGE, RW, false),
        Err(MapError::OutOfTables { capacity: 3 })
    );
    assert!(matches!(
        a.map(1, 0, PAGE, RW, false),
        Err(MapError::BadRange { .. })
    ));
    assert!(matches!(
        a.map(1 << 48, 0, PAGE, RW, false),
        Err(MapError::BadRange { .. })
    ));
}

/// `#define NAME (1ULL << N)` lines of `amdgpu_vm.h`, and the FRAG and
/// BFS shifts, against the runtime's bitfield.
#[test]
fn pte_bits_match_amdgpu_vm_h() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h"
    );
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"));
    let shift_of = |name: &str| -> u32 {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name) && l.starts_with("#define"))
            .unwrap_or_else(|| panic!("{name} not in amdgpu_vm.h"));
        let expr: String = line.split_whitespace().skip(2).collect();
        let n = expr
            .strip_prefix("(1ULL<<")
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{name}: unexpected form {expr}"));
        n.parse().unwrap()
    };
    for (name, mask) in header_masks() {
        assert_eq!(mask, 1u64 << shift_of(name), "{name}");
    }
    let frag = text
        .lines()
        .find(|l| l.contains("#define AMDGPU_PTE_FRAG(x)"))
        .unwrap();
    assert!(
        frag.replace(' ', "").ends_with("((x&0x1fULL)<<7)"),
        "{frag}"
    );
    assert_eq!(FIELD_POSITIONS[0], ("fragment", 7, 5));
    let bfs = text
        .lines()
        .find(|l| l.contains("#define AMDGPU_PDE_BFS(a)"))
        .unwrap();
    assert!(bfs.replace(' ', "").ends_with("((uint64_t)a<<59)"), "{bfs}");
    assert_eq!((FIELD_POSITIONS[1].0, FIELD_POSITIONS[1].1), ("bfs", 59));
    let mtype = text
        .lines()
        .find(|l| l.contains("#define AMDGPU_PTE_MTYPE_NV10_SHIFT(mtype)"))
        .unwrap();
    assert!(
        mtype.replace(' ', "").ends_with("((uint64_t)(mtype)<<48)"),
        "{mtype}"
    );
    // AMDGPU_PTE_MTYPE_NV10_MASK is SHIFT(7ULL): three bits.
    assert_eq!(FIELD_POSITIONS[2], ("mtype", 48, 3));
}

/// The same large-page and fragment layout in the gfx12 format: the
/// large-page bit is bit 63 there, and a gfx11 walker must not take it.
#[test]
fn gfx12_large_page_and_fragment() {
    let (tables, base, dma) = arena(8);
    let root = {
        let mut a = TableArena::new(tables, base, Generation::Gfx12);
        a.map(0x20_0000_0000, 0x1_0040_0000, LARGE_PAGE, RW, true)
            .unwrap();
        a.map(0x7000_0000, 0x3_0001_0000, 16 * PAGE, RW, false)
            .unwrap();
        a.root()
    };
    let mut g = Gmc::new(&dma, root, true);
    let t = g.translate(0x20_0000_0000 + 0x4321, Access::Read).unwrap();
    assert_eq!((t.pa, t.tlb_bytes), (0x1_0040_4321, LARGE_PAGE));
    let t = g.translate(0x7000_3008, Access::Write).unwrap();
    assert_eq!((t.pa, t.tlb_bytes), (0x3_0001_3008, 16 * PAGE));
    // Read as gfx11 tables, the 2 MiB entry is a PDE pointing at a
    // "table" that is really data: not a silent correct translation.
    let mut wrong = Gmc::new(&dma, root, false);
    assert!(
        wrong
            .translate(0x20_0000_0000 + 0x4321, Access::Read)
            .map_or(true, |t| t.pa != 0x1_0040_4321)
    );
}

#[test]
fn gfx12_pte_bits_match_amdgpu_vm_h() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h"
    );
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"));
    let def = |name: &str| -> String {
        text.lines()
            .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("{name} not in amdgpu_vm.h"))
            .split_whitespace()
            .skip(2)
            .collect()
    };
    for (name, mask) in header_masks_gfx12() {
        assert_eq!(
            def(name),
            format!("(1ULL<<{})", mask.trailing_zeros()),
            "{name}"
        );
        assert_eq!(mask.count_ones(), 1, "{name}");
    }
    assert_eq!(
        def("AMDGPU_PTE_MTYPE_GFX12_SHIFT(mtype)"),
        "((uint64_t)(mtype)<<54)"
    );
    assert_eq!(
        def("AMDGPU_PTE_MTYPE_GFX12_MASK"),
        "AMDGPU_PTE_MTYPE_GFX12_SHIFT(3ULL)"
    );
    assert_eq!(FIELD_POSITIONS_GFX12[0], ("mtype", 54, 2));
    assert_eq!(FIELD_POSITIONS_GFX12[1], ("fragment", 7, 5));
}

/// `amdgpu_vm.h` as text (the header cannot be compiled outside the
/// kernel).
fn amdgpu_vm_h() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h"
    );
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"))
}

/// The body of `#define NAME ...` (continuation lines joined),
/// whitespace removed.
fn define(text: &str, name: &str) -> String {
    let joined = text.replace("\\\n", " ");
    joined
        .lines()
        .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("{name} not in amdgpu_vm.h"))
        .split_whitespace()
        .skip(2)
        .collect()
}

/// The model's own PTE constants (`barebell_model::gmc::bits`), which
/// its walker decodes with, against the header text: each single bit as
/// `(1ULL << n)`, each field macro's shift and mask.
#[test]
fn model_pte_bits_match_amdgpu_vm_h() {
    let text = amdgpu_vm_h();
    for (name, mask) in walk::HEADER_BITS {
        assert_eq!(mask.count_ones(), 1, "{name}");
        assert_eq!(
            define(&text, name),
            format!("(1ULL<<{})", mask.trailing_zeros()),
            "{name}"
        );
    }
    // AMDGPU_PTE_FRAG(x) ((x & 0x1fULL) << 7)
    let (name, shift, mask) = walk::HEADER_FIELDS[0];
    assert_eq!(define(&text, name), format!("((x&{mask:#x}ULL)<<{shift})"));
    // AMDGPU_PDE_BFS(a) ((uint64_t)a << 59): no mask, all bits above.
    let (name, shift, mask) = walk::HEADER_FIELDS[1];
    assert_eq!(define(&text, name), format!("((uint64_t)a<<{shift})"));
    assert_eq!(mask, u64::MAX >> shift);
    // The MTYPE shifts, and their masks as SHIFT(n) of the field.
    for (field, mask_name) in [
        (walk::HEADER_FIELDS[2], "AMDGPU_PTE_MTYPE_NV10_MASK"),
        (walk::HEADER_FIELDS[3], "AMDGPU_PTE_MTYPE_GFX12_MASK"),
    ] {
        let (name, shift, mask) = field;
        assert_eq!(
            define(&text, name),
            format!("((uint64_t)(mtype)<<{shift})"),
            "{name}"
        );
        let shift_macro = name.trim_end_matches("(mtype)");
        assert_eq!(
            define(&text, mask_name),
            format!("{shift_macro}({mask}ULL)"),
            "{mask_name}"
        );
    }
    // AMDGPU_PDE_BFS_GFX12(a) ((uint64_t)((a) & 0x1fULL) << 58)
    let (name, shift, mask) = walk::HEADER_FIELDS[4];
    assert_eq!(
        define(&text, name),
        format!("((uint64_t)((a)&{mask:#x}ULL)<<{shift})")
    );
    // The "PDE is PTE" bit each format's walk takes, by generation
    // (AMDGPU_PDE_PTE_FLAG()).
    assert!(
        define(&text, "AMDGPU_PDE_PTE_FLAG(adev)")
            .contains("?AMDGPU_PDE_PTE_GFX12:AMDGPU_PDE_PTE)")
    );
    assert_eq!(Format::Gfx11.pde_pte(), walk::bits::PDE_PTE);
    assert_eq!(Format::Gfx12.pde_pte(), walk::bits::PDE_PTE_GFX12);
}

/// Hand-built tables, in leaked, 4 KiB-aligned host memory the walk
/// reads as physical memory.
fn raw_tables(bytes: usize) -> (&'static mut [u64], u64, Dma) {
    let layout = std::alloc::Layout::from_size_align(bytes, 4096).unwrap();
    // SAFETY: non-zero size; the memory is leaked (never freed).
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
    assert!(!p.is_null());
    // SAFETY: `bytes` zeroed bytes, 4 KiB aligned, owned by nobody else.
    let t: &'static mut [u64] = unsafe { std::slice::from_raw_parts_mut(p, bytes / 8) };
    let base = t.as_ptr() as u64;
    let mut dma = Dma::default();
    // SAFETY: leaked, outlives `dma`; written before any walk.
    unsafe { dma.map(base, bytes as u64) };
    (t, base, dma)
}

const V: u64 = walk::bits::VALID;
const R: u64 = walk::bits::READABLE;
const W: u64 = walk::bits::WRITEABLE;
const SYS: u64 = walk::bits::SYSTEM;

/// Depth 0, the flat GART Linux gives VMID0 (`*_enable_system_domain()`
/// with `PAGE_TABLE_DEPTH` 0; `amdgpu_gart_map()` writes PTE `n` for GART
/// offset `n * 4 KiB`): one table of 4 KiB PTEs indexed by `(VA - START)
/// >> 12`, longer than 512 entries, from a START that is not 0.
#[test]
fn depth_0_is_a_flat_table_indexed_from_start() {
    // A 4 MiB GART: 1024 PTEs (8 KiB of table).
    let start = 0x7FFF_0000_0000u64;
    let (t, base, dma) = raw_tables(8192);
    t[0] = V | R | W | SYS | 0x1_0000_0000;
    t[600] = V | R | 0x2_0000_3000; // offset 600 * 4 KiB, read-only
    let ctx = Context {
        root: base,
        start,
        end: start + (4 << 20) - 1,
        depth: 0,
        block_size: 0,
        format: Format::Gfx11,
    };
    let mut g = Gmc::with_context(&dma, ctx);
    let tr = g.translate(start + 0x10, Access::Write).unwrap();
    assert_eq!(
        (tr.pa, tr.system, tr.tlb_bytes),
        (0x1_0000_0010, true, PAGE)
    );
    let tr = g
        .translate(start + 600 * PAGE + 0xABC, Access::Read)
        .unwrap();
    assert_eq!((tr.pa, tr.system), (0x2_0000_3ABC, false));
    assert_eq!(
        g.translate(start + 600 * PAGE, Access::Write)
            .unwrap_err()
            .reason,
        FaultReason::Permission
    );
    // The absolute VA's index (its low bits) is not what is walked: entry
    // 1 is empty.
    assert_eq!(
        g.translate(start + PAGE, Access::Read).unwrap_err().reason,
        FaultReason::Invalid { level: walk::PTB }
    );
    // Below START and past END: outside the context.
    assert_eq!(
        g.translate(start - PAGE, Access::Read).unwrap_err().reason,
        FaultReason::OutOfRange
    );
    assert_eq!(
        g.translate(start + (4 << 20), Access::Read)
            .unwrap_err()
            .reason,
        FaultReason::OutOfRange
    );
}

/// Depth 3 from a non-zero START, tinygrad's VMID0 (`va_base`
/// 0x2000_0000_0000, `enable_vm_addressing()` with depth 3): PDB2 index
/// = bits 47:39 of `VA - START`, and so on down. Also a PDB1 entry used
/// as a 1 GiB page (`AMDGPU_PDE_PTE` on a directory level above PDB0, as
/// tinygrad's `get_pte_flags()` writes it) and a PDB0 entry as a 2 MiB
/// page.
#[test]
fn depth_3_walks_va_minus_start_with_pages_at_any_directory_level() {
    let start = 0x2000_0000_0000u64;
    let (t, base, dma) = raw_tables(5 * 4096);
    let table = |i: u64| base + i * 4096;
    // rel = 0x1_4060_3000: PDB2[0] → PDB1[5] → PDB0[3] → PTB[3].
    let rel = 0x1_4060_3000u64;
    t[0] = V | table(1);
    t[512 + 5] = V | table(2);
    t[1024 + 3] = V | table(3);
    t[1536 + 3] = V | R | W | 0x55_0000_0000;
    // PDB1[7] as a 1 GiB page; PDB0[4] as a 2 MiB page.
    t[512 + 7] = V | R | walk::bits::PDE_PTE | 0x80_0000_0000;
    t[1024 + 4] = V | R | walk::bits::PDE_PTE | 0x60_0020_0000;
    let mut g = Gmc::with_context(
        &dma,
        Context {
            root: base,
            start,
            end: 0x7FFF_FFFF_FFFF,
            depth: 3,
            block_size: 0,
            format: Format::Gfx11,
        },
    );
    let tr = g.translate(start + rel + 0x44, Access::Write).unwrap();
    assert_eq!((tr.pa, tr.tlb_bytes), (0x55_0000_0044, PAGE));
    let tr = g
        .translate(start + (7 << 30) + 0x1234_5678, Access::Read)
        .unwrap();
    assert_eq!((tr.pa, tr.tlb_bytes), (0x80_1234_5678, 1 << 30));
    let tr = g
        .translate(start + (5 << 30) + (4 << 21) + 0x1_2345, Access::Read)
        .unwrap();
    assert_eq!((tr.pa, tr.tlb_bytes), (0x60_0021_2345, LARGE_PAGE));
    // The same offset from 0 instead of from START walks nothing.
    let mut from_zero = Gmc::new(&dma, base, false);
    assert!(from_zero.translate(start + rel, Access::Read).is_err());
    // In the gfx12 format the bit-54 entries are plain PDEs, and bit 63
    // makes the page.
    t[1024 + 4] = V | R | walk::bits::PDE_PTE_GFX12 | 0x60_0020_0000;
    let mut g12 = Gmc::with_context(
        &dma,
        Context {
            format: Format::Gfx12,
            ..g.context()
        },
    );
    let tr = g12
        .translate(start + (5 << 30) + (4 << 21) + 8, Access::Read)
        .unwrap();
    assert_eq!(tr.pa, 0x60_0020_0008);
}

/// Depth 1 with a block size, as `amdgpu_gmc_init_pdb0()` builds VMID0:
/// PDB0 entries used as PTEs each cover `2^block_size * 2 MiB`, and the
/// PDB0 entry after them points at a PTB of more than 512 entries
/// (`2^(9 + block_size)`).
#[test]
fn depth_1_with_block_size_follows_init_pdb0() {
    let bs = 2u8; // PDE0 pages of 8 MiB; PTBs of 2048 entries.
    let (t, base, dma) = raw_tables(4096 + 2048 * 8);
    let ptb = base + 4096;
    // PDB0[0]: VRAM 0 as an 8 MiB page with fragment 9 + bs
    // (AMDGPU_PTE_FRAG(vmid0_page_table_block_size + 9)).
    t[0] = V | R | W | walk::bits::PDE_PTE | ((9 + u64::from(bs)) << 7);
    // PDB0[1]: the huge PTB; its entry 1500 maps a system page.
    t[1] = V | ptb;
    t[512 + 1500] = V | R | SYS | 0xABCD_E000;
    let fb = 0x80_0000_0000u64;
    let mut g = Gmc::with_context(
        &dma,
        Context {
            root: base,
            start: fb,
            end: fb + (16 << 20) - 1,
            depth: 1,
            block_size: bs,
            format: Format::Gfx11,
        },
    );
    let tr = g.translate(fb + 0x7F_FFF8, Access::Write).unwrap();
    assert_eq!((tr.pa, tr.tlb_bytes), (0x7F_FFF8, 8 << 20));
    let tr = g
        .translate(fb + (8 << 20) + 1500 * PAGE + 4, Access::Read)
        .unwrap();
    assert_eq!((tr.pa, tr.system), (0xABCD_E004, true));
}

/// The runtime's tables for a context starting at `va_base`, walked by
/// the model from that start: what VMID0 needs when the GART is high.
#[test]
fn arena_with_a_va_base_indexes_from_it() {
    let (tables, base, dma) = arena(8);
    let start = 0x7FFF_0000_0000u64;
    let root = {
        let mut a = TableArena::new(tables, base, Generation::Gfx11).with_va_base(start);
        a.map(start + 0x3000, 0x8000_4000, 3 * PAGE, RW, false)
            .unwrap();
        a.map(start + LARGE_PAGE, 0x1_0000_0000, LARGE_PAGE, RW, true)
            .unwrap();
        assert!(matches!(
            a.map(start - PAGE, 0, PAGE, RW, false),
            Err(MapError::BadRange { .. })
        ));
        a.root()
    };
    let ctx = Context {
        start,
        end: start + (512 << 20) - 1,
        ..Context::four_level(root, Format::Gfx11)
    };
    let mut g = Gmc::with_context(&dma, ctx);
    let tr = g.translate(start + 0x4008, Access::Read).unwrap();
    assert_eq!(tr.pa, 0x8000_5008);
    let tr = g
        .translate(start + LARGE_PAGE + 0x10_0000, Access::Read)
        .unwrap();
    assert_eq!((tr.pa, tr.tlb_bytes), (0x1_0010_0000, LARGE_PAGE));
}

mod invalidation {
    use super::*;
    use barebell::bus::RegisterBus;
    use barebell::gmc::pagetable::{INVALIDATE_TIMEOUT_NS, InvalidateError, invalidate_gfxhub};
    use barebell::regs::IpBases;
    use barebell::regs::gc_11_0_0::{
        GCVM_ENG_DISTANCE, GCVM_INVALIDATE_ENG0_ACK, GCVM_INVALIDATE_ENG0_REQ,
        GCVM_INVALIDATE_ENG17_REQ,
    };
    use barebell_model::gmc::InvalidationEngine;
    use barebell_model::{RegisterFile, SimClock};

    /// GC segment bases of the model parts (`sienna_cichlid_ip_offset.h`).
    const GC: IpBases = IpBases::new(&[0x1260, 0xA000, 0x1C000, 0x2402C00, 0, 0, 0, 0]);

    fn engine(clock: &SimClock) -> InvalidationEngine {
        InvalidationEngine::new(
            clock,
            GCVM_INVALIDATE_ENG0_REQ.byte_offset(&GC).unwrap(),
            GCVM_INVALIDATE_ENG0_ACK.byte_offset(&GC).unwrap(),
            GCVM_ENG_DISTANCE as usize * 4,
        )
    }

    /// A changed PTE is not seen until the TLB is invalidated, and the
    /// invalidation lands on engine 17's request register.
    #[test]
    fn stale_until_invalidated() {
        let clock = SimClock::new();
        let eng = engine(&clock);
        let (tables, base, dma) = arena(8);
        let va = 0x5000_0000u64;
        let root = {
            let mut a = TableArena::new(tables, base, Generation::Gfx11);
            a.map(va, 0x10_0000, PAGE, RW, false).unwrap();
            a.root()
        };
        let mut g = Gmc::new(&dma, root, false).with_tlb(&eng, 3);
        assert_eq!(g.translate(va + 4, Access::Read).unwrap().pa, 0x10_0004);
        // Repoint the page behind the TLB's back.
        let entry = |table: u64, idx: u64| unsafe {
            // SAFETY: inside the leaked arena, 8-byte aligned.
            &mut *((table + idx * 8) as *mut u64)
        };
        let pdb1 = Pte::from_bits(*entry(root, (va >> 39) & 511)).address();
        let pdb0 = Pte::from_bits(*entry(pdb1, (va >> 30) & 511)).address();
        let ptb = Pte::from_bits(*entry(pdb0, (va >> 21) & 511)).address();
        let pte = entry(ptb, (va >> 12) & 511);
        *pte = Pte::from_bits(*pte).with_pfn(0x20_0000 >> 12).into_bits();
        assert_eq!(g.translate(va + 4, Access::Read).unwrap().pa, 0x10_0004);
        // Another VMID's invalidation leaves VMID 3's TLB alone.
        invalidate_gfxhub(&eng, &clock, &GC, 17, 5, 0).unwrap();
        assert_eq!(g.translate(va + 4, Access::Read).unwrap().pa, 0x10_0004);
        invalidate_gfxhub(&eng, &clock, &GC, 17, 3, 0).unwrap();
        assert_eq!(g.translate(va + 4, Access::Read).unwrap().pa, 0x20_0004);
        assert_eq!(eng.refused(), 0);
        // Engine 17 of the header is where the request went.
        assert_eq!(
            GCVM_INVALIDATE_ENG0_REQ.offset + 17 * GCVM_ENG_DISTANCE,
            GCVM_INVALIDATE_ENG17_REQ.offset
        );
    }

    #[test]
    fn engine_refuses_requests_without_a_vmid_or_with_reserved_bits() {
        let clock = SimClock::new();
        let eng = engine(&clock);
        let req = GCVM_INVALIDATE_ENG17_REQ.byte_offset(&GC).unwrap();
        eng.write32(req, 0x0007_0000);
        eng.write32(req, 0x8000_0001);
        assert_eq!(eng.refused(), 2);
    }

    #[test]
    fn ack_wait_is_bounded_and_typed() {
        // Registers that never acknowledge.
        let clock = SimClock::new();
        let regs = RegisterFile::new(&clock);
        match invalidate_gfxhub(&regs, &clock, &GC, 17, 0, 0) {
            Err(InvalidateError::AckTimeout {
                register,
                engine,
                waited_ns,
                ..
            }) => {
                assert_eq!((register, engine), ("GCVM_INVALIDATE_ENG0_ACK", 17));
                assert!(waited_ns >= INVALIDATE_TIMEOUT_NS);
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        let eng = engine(&clock);
        eng.unplug();
        assert_eq!(
            invalidate_gfxhub(&eng, &clock, &GC, 17, 0, 0),
            Err(InvalidateError::DeviceGone {
                register: "GCVM_INVALIDATE_ENG0_ACK",
                engine: 17
            })
        );
        assert_eq!(
            invalidate_gfxhub(&eng, &clock, &GC, 18, 0, 0),
            Err(InvalidateError::BadArgument {
                engine: 18,
                vmid: 0,
                flush_type: 0
            })
        );
    }
}

/// Unmapping the middle two of four pages leaves the outer two mapped,
/// as the model's walker sees it.
#[test]
fn unmapping_a_middle_range_leaves_its_neighbours() {
    let (tables, base, dma) = arena(8);
    let va = 0x1_0000_4000;
    let root = {
        let mut a = TableArena::new(tables, base, Generation::Gfx11);
        a.map(va, 0x8000_4000, 4 * PAGE, RW, true).unwrap();
        a.unmap(va + PAGE, 2 * PAGE).unwrap();
        a.root()
    };
    let mut g = Gmc::new(&dma, root, false);
    for i in [0, 3] {
        let t = g.translate(va + i * PAGE, Access::Read).unwrap();
        assert_eq!(t.pa, 0x8000_4000 + i * PAGE, "page {i}");
    }
    for i in [1, 2] {
        let f = g.translate(va + i * PAGE, Access::Read).unwrap_err();
        assert_eq!(f.reason, FaultReason::Invalid { level: 3 }, "page {i}");
    }
}
