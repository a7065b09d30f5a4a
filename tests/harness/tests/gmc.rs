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
use barebell_model::gmc::{Access, FaultReason, Gmc};

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
    const GC: IpBases = IpBases([0x1260, 0xA000, 0x1C000, 0x2402C00, 0, 0, 0, 0]);

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
