//! GC 9.4.3's memory half: the gfx9 (translate-further) page tables the
//! runtime builds, walked by the model's own gfx9 walk; a chain
//! assembled by hand from `amdgpu_vm.h`; GFXHUB v1.2 / MMHUB 1.8 init in
//! Linux's register order; the hub model gating and latching faults; and
//! the TLB flush's bounded ACK wait.
//!
//! Expected values are written here by hand from `amdgpu_vm.h`,
//! `vega10_enum.h`, `gmc_v9_0.c`, `gfxhub_v1_2.c`, `mmhub_v1_8.c` and the
//! GC 9.4.3 / MMHUB 1.8 offset headers, never taken from the code under
//! test.

use barebell::bus::{Block, RegisterBus};
use barebell::gmc::hub::invalidate::InvalidateError;
use barebell::gmc::hub::v9::{GFXHUB_1_2 as RT_GFXHUB, HubV9Config, flush_gpu_tlb};
use barebell::gmc::hub::{HubConfig, gfxhub_v1_2, mmhub_v1_8};
use barebell::gmc::pagetable::{Flags, PteFormat, Table, TableArena};
use barebell::gmc::pte_v9;
use barebell::regs::IpBases;
use barebell::time::Clock;
use barebell_decode::pte_v9::{AccessV9, ContextV9, WalkFaultV9, walk};
use barebell_model::dma::Dma;
use barebell_model::hub_v9::{self, HubV9Model, HubV9Refusal};
use std::cell::{Cell, RefCell};

const RW: Flags = Flags {
    readable: true,
    writeable: true,
    executable: false,
    system: false,
    snooped: true,
};

/// `amdgpu_vm.h`, by hand.
const VALID: u64 = 1 << 0;
const READABLE: u64 = 1 << 5;
const WRITEABLE: u64 = 1 << 6;
const SNOOPED: u64 = 1 << 2;
const TF: u64 = 1 << 56;
const PDE_PTE: u64 = 1 << 54;
const fn bfs(a: u64) -> u64 {
    a << 59
}
const fn mtype_vg10(m: u64) -> u64 {
    m << 57
}
/// `vega10_enum.h`.
const MTYPE_RW: u64 = 1;
const MTYPE_UC: u64 = 3;

/// The 9.4.3 user context: `PAGE_TABLE_DEPTH` = num_level − 1 = 2 and
/// `PAGE_TABLE_BLOCK_SIZE` = 9 (`gfxhub_v1_2_xcc_setup_vmid_config()`
/// with translate_further), 48 bits from 0.
fn ctx(root: u64) -> ContextV9 {
    ContextV9 {
        root,
        start: 0,
        end: (1 << 48) - 1,
        depth: 2,
        block_size: 9,
    }
}

fn arena(n: usize) -> (&'static mut [Table], u64, Dma) {
    let tables: &'static mut [Table] = Box::leak(vec![Table::EMPTY; n].into_boxed_slice());
    let base = tables.as_ptr() as u64;
    let mut dma = Dma::default();
    // SAFETY: leaked, so it outlives `dma`; the runtime finishes writing
    // before the model reads.
    unsafe { dma.map(base, (n * 4096) as u64) };
    (tables, base, dma)
}

#[test]
fn runtime_gfx9_tables_walk_to_the_right_pages_and_flags() {
    let (tables, base, dma) = arena(8);
    let root = {
        let mut a = TableArena::new(tables, base, PteFormat::Gfx9TranslateFurther);
        // Three 4 KiB pages, local VRAM: MTYPE_RW (gmc_v9_0_get_coherence_flags).
        a.map_typed(0x1_0020_3000, 0x8000_4000, 3 * 4096, RW, true, 1)
            .unwrap();
        // One 2 MiB page, system memory: MTYPE_UC.
        a.map_typed(0x1_0040_0000, 0x4060_0000, 2 << 20, RW, true, 3)
            .unwrap();
        a.root()
    };
    // SAFETY: the arena is done; read its bytes as the hub would.
    let t = |i: u64, e: u64| unsafe { *((base + i * 4096 + e * 8) as *const u64) };
    // VA 0x1_0020_3000: PDB2 index 0, PDB1 index 4, PDB0 index 1, PTB 3.
    let pdb1 = t(0, 0) & 0x0000_FFFF_FFFF_F000;
    assert_eq!(
        t(0, 0) & !0x0000_FFFF_FFFF_F000,
        VALID,
        "PDB2 entry: VALID only"
    );
    let pdb1_entry = t((pdb1 - base) / 4096, 4);
    assert_eq!(
        pdb1_entry & !0x0000_FFFF_FFFF_F000,
        VALID | bfs(9),
        "PDB1 entry carries AMDGPU_PDE_BFS(9)"
    );
    let pdb0_idx = ((pdb1_entry & 0x0000_FFFF_FFFF_F000) - base) / 4096;
    assert_eq!(
        t(pdb0_idx, 1) & !0x0000_FFFF_FFFF_F000,
        VALID | TF,
        "PDB0 → PTB: TF"
    );
    // The 2 MiB page: PDB0 index 2, no PDE_PTE under translate-further.
    assert_eq!(
        t(pdb0_idx, 2),
        0x4060_0000 | VALID | SNOOPED | READABLE | WRITEABLE | mtype_vg10(MTYPE_UC)
    );
    assert_eq!(t(pdb0_idx, 2) & PDE_PTE, 0);

    let c = ctx(root);
    for i in 0..3u64 {
        let r = walk(
            &dma,
            0,
            &c,
            0x1_0020_3000 + i * 4096 + 0x18,
            AccessV9::Write,
        )
        .unwrap();
        assert_eq!(r.pa, 0x8000_4000 + i * 4096 + 0x18);
        assert_eq!(r.page_bytes, 4096);
        assert_eq!(r.mtype, MTYPE_RW as u8);
        assert!(r.snooped && !r.system);
        assert_eq!(r.tables_read, 4, "PDB2, PDB1, PDB0, then the TF table");
    }
    let r = walk(&dma, 0, &c, 0x1_0040_0000 + 0x1_2345, AccessV9::Read).unwrap();
    assert_eq!(r.pa, 0x4060_0000 + 0x1_2345);
    assert_eq!(r.page_bytes, 2 << 20);
    assert_eq!(r.mtype, MTYPE_UC as u8);
    assert_eq!(r.tables_read, 3);
    // Not executable.
    assert_eq!(
        walk(&dma, 0, &c, 0x1_0020_3000, AccessV9::Execute).unwrap_err(),
        WalkFaultV9::Permission
    );
    // Next page after the three: its PTE is empty (the TF table's entry).
    assert_eq!(
        walk(&dma, 0, &c, 0x1_0020_6000, AccessV9::Read).unwrap_err(),
        WalkFaultV9::Invalid { level: 3 }
    );
}

#[test]
fn hand_assembled_gfx9_chain_is_walked() {
    // Four tables laid out by hand, entries set from amdgpu_vm.h's bits.
    #[repr(C, align(4096))]
    struct Page([u64; 512]);
    let pages: &'static mut [Page] = Box::leak((0..4).map(|_| Page([0; 512])).collect());
    let base = pages.as_ptr() as u64;
    // SAFETY: four contiguous 4 KiB pages, leaked, viewed as u64s.
    let mem = unsafe { std::slice::from_raw_parts_mut(base as *mut u64, 4 * 512) };
    let (pdb2, pdb1, pdb0, ptb) = (base, base + 4096, base + 8192, base + 12288);
    mem[0] = pdb1 | VALID;
    mem[512] = pdb0 | VALID | bfs(9);
    mem[1024 + 1] = ptb | VALID | TF;
    mem[1024 + 2] = 0x4000_0000 | VALID | READABLE;
    mem[1536 + 3] = 0xABCD_0000 | VALID | READABLE | WRITEABLE | mtype_vg10(MTYPE_UC);
    let mut dma = Dma::default();
    // SAFETY: leaked, outlives `dma`.
    unsafe { dma.map(base, 4 * 4096) };
    let c = ctx(pdb2);
    let r = walk(&dma, 0, &c, (1 << 21) + 3 * 4096 + 0x10, AccessV9::Write).unwrap();
    assert_eq!(r.pa, 0xABCD_0010);
    assert_eq!(r.mtype, 3);
    let r = walk(&dma, 0, &c, (2 << 21) + 0x1234, AccessV9::Read).unwrap();
    assert_eq!((r.pa, r.page_bytes), (0x4000_1234, 2 << 20));
    assert_eq!(
        walk(&dma, 0, &c, (2 << 21) + 0x1234, AccessV9::Write).unwrap_err(),
        WalkFaultV9::Permission
    );
    assert_eq!(
        walk(&dma, 0, &c, 3 << 21, AccessV9::Read).unwrap_err(),
        WalkFaultV9::Invalid { level: 2 }
    );
    // PDB1 index 1 (VA 1 GiB) is empty.
    assert_eq!(
        walk(&dma, 0, &c, 1 << 30, AccessV9::Read).unwrap_err(),
        WalkFaultV9::Invalid { level: 1 }
    );
}

/// Bases for XCC/AID `i` (model values: any distinct segment-0 bases).
fn bases(i: u32) -> IpBases {
    IpBases::new(&[0x1_0000 * (i + 1), 0, 0, 0, 0, 0, 0, 0])
}

fn map_cfg(root: u64) -> HubV9Config {
    HubV9Config::new(HubConfig {
        pt_base: root,
        start: 0,
        end: (1 << 48) - 1,
        fb_start: 0x80_0000_0000,
        fb_end: 0x80_0000_0000 + (192 << 30) - 1,
        agp_start: 0xFFFF_FFFF_FFFF,
        agp_end: 0,
        default_page: 0x1000,
        dummy_page: 0x2000,
    })
}

#[test]
fn hub_model_refuses_before_init_then_walks_and_latches_faults() {
    let (tables, base, dma) = arena(8);
    let root = {
        let mut a = TableArena::new(tables, base, PteFormat::Gfx9TranslateFurther);
        a.map(0x20_0000, 0x9000_0000, 4096, RW, false).unwrap();
        a.root()
    };
    let hub = HubV9Model::new(hub_v9::GFXHUB_1_2, 0x1_0000);
    assert_eq!(
        hub.translate(&dma, 0, 0, 0x20_0000, AccessV9::Read),
        Err(HubV9Refusal::L1TlbDisabled)
    );
    let xccs = [Block::new(&hub, bases(0))];
    gfxhub_v1_2::gart_enable(&xccs, &map_cfg(root)).unwrap();
    // VMID 1 not pointed at tables yet: its base lacks VALID.
    assert!(matches!(
        hub.translate(&dma, 0, 1, 0x20_0000, AccessV9::Read),
        Err(HubV9Refusal::InvalidBase { .. })
    ));
    gfxhub_v1_2::setup_vm_pt_regs(&xccs, 1, root | 1).unwrap();
    // The last of the hub's 16 contexts (VM_CONTEXT0..15 in
    // gc_9_4_3_offset.h; KFD's compute VMIDs end at 15) takes tables
    // too; there is no VMID 16.
    gfxhub_v1_2::setup_vm_pt_regs(&xccs, 15, root | 1).unwrap();
    assert!(gfxhub_v1_2::setup_vm_pt_regs(&xccs, 16, root | 1).is_err());
    for vmid in [0, 1, 15] {
        let t = hub
            .translate(&dma, 0, vmid, 0x20_0010, AccessV9::Read)
            .unwrap();
        assert_eq!(t.pa, 0x9000_0010);
    }
    // The context the init wrote is the translate-further shape.
    let c = hub.context(1).unwrap();
    assert_eq!(
        (c.depth, c.block_size, c.start, c.end),
        (2, 9, 0, (1 << 48) - 1)
    );
    // Unmapped: PDB2 index 0x1234_5678_9000 >> 39 = 36 is empty (only
    // entry 0 is used), latched with the VMID and the page address.
    let va = 0x1234_5678_9000;
    assert_eq!(
        hub.translate(&dma, 0, 1, va, AccessV9::Write),
        Err(HubV9Refusal::Fault(WalkFaultV9::Invalid { level: 0 }))
    );
    assert!(hub.fault_latched());
    let o = hub_v9::GFXHUB_1_2;
    // VM_L2_PROTECTION_FAULT_STATUS: MAPPING_ERROR (0x100, model's code),
    // RW (0x40000), VMID 1 at bit 20.
    assert_eq!(hub.reg(0x082b), 0x100 | 0x4_0000 | (1 << 20));
    assert_eq!(hub.reg(0x082c), (va >> 12) as u32);
    assert_eq!(hub.reg(0x082d), (va >> 44) as u32 & 0xF);
    assert_eq!(o.fault_status, 0x082b);
    // The runtime reads the same fault back as `gmc_v9_0_process_interrupt()`
    // assembles it: ADDR_HI4:ADDR_LO32, a page number.
    let f = barebell::gmc::hub::v9::read_fault(&hub, &bases(0), &RT_GFXHUB)
        .unwrap()
        .unwrap();
    assert_eq!((f.addr, f.vmid, f.write, f.atomic), (va, 1, true, false));
    // A second fault only sets MORE_FAULTS.
    let _ = hub.translate(&dma, 0, 1, va + 4096, AccessV9::Read);
    assert_eq!(hub.reg(0x082b) & 1, 1);
    assert_eq!(hub.reg(0x082c), (va >> 12) as u32);
    // CLEAR_PROTECTION_FAULT_STATUS_ADDR clears the latch.
    Block::new(&hub, bases(0))
        .write(barebell::regs::gc_9_4_3_vm::VM_L2_PROTECTION_FAULT_CNTL, 1)
        .unwrap();
    assert!(!hub.fault_latched());
    assert_eq!(hub.reg(0x082b), 0);
    // A read fault latches with RW clear and reads back as a read.
    let _ = hub.translate(&dma, 0, 1, va, AccessV9::Read);
    let f = barebell::gmc::hub::v9::read_fault(&hub, &bases(0), &RT_GFXHUB)
        .unwrap()
        .unwrap();
    assert_eq!((f.addr, f.write, f.atomic), (va, false, false));
}

/// A bus that records every write as `(instance, dword offset, value)`;
/// reads return what was written last (0 before).
#[derive(Default)]
struct Recorder {
    writes: RefCell<Vec<(u32, u32, u32)>>,
    regs: RefCell<std::collections::HashMap<usize, u32>>,
}

impl RegisterBus for Recorder {
    fn read32(&self, at: usize) -> u32 {
        self.regs.borrow().get(&at).copied().unwrap_or(0)
    }
    fn write32(&self, at: usize, v: u32) {
        let dw = (at / 4) as u32;
        let inst = dw / 0x1_0000 - 1;
        self.writes.borrow_mut().push((inst, dw % 0x1_0000, v));
        self.regs.borrow_mut().insert(at, v);
    }
}

/// Linux's write order for `gart_enable` over `n` instances, from the
/// `.c` files: `(instance, offset, Some(value) or None for values this
/// list does not pin)`. Offsets are the header's (`GC` first, `MM`
/// second column), written by hand.
fn expected(n: u32, mm: bool, root: u64) -> Vec<(u32, u32, Option<u32>)> {
    let o = |gc: u32, mmv: u32| if mm { mmv } else { gc };
    let mut e = Vec::new();
    let base = root | 1;
    // *_init_gart_aperture_regs: setup_vm_pt_regs loop, then start/end loop.
    for i in 0..n {
        e.push((i, o(0x08cb, 0x0c0b), Some(base as u32)));
        e.push((i, o(0x08cc, 0x0c0c), Some((base >> 32) as u32)));
    }
    for i in 0..n {
        e.push((i, o(0x08eb, 0x0c2b), Some(0)));
        e.push((i, o(0x08ec, 0x0c2c), Some(0)));
        e.push((i, o(0x090b, 0x0c4b), Some(0xF_FFFF_FFFF_u64 as u32)));
        e.push((i, o(0x090c, 0x0c4c), Some(0xF)));
    }
    // *_init_system_aperture_regs.
    let fb_start: u64 = 0x80_0000_0000;
    let fb_end: u64 = fb_start + (192 << 30) - 1;
    for i in 0..n {
        e.push((i, o(0x0960, 0x0ca0), Some(0))); // AGP_BASE
        e.push((
            i,
            o(0x095f, 0x0c9f),
            Some((0xFFFF_FFFF_FFFFu64 >> 24) as u32),
        )); // AGP_BOT
        e.push((i, o(0x095e, 0x0c9e), Some(0))); // AGP_TOP
        e.push((i, o(0x0961, 0x0ca1), Some((fb_start >> 18) as u32))); // LOW
        e.push((i, o(0x0962, 0x0ca2), Some((fb_end >> 18) as u32))); // HIGH
        e.push((i, o(0x0948, 0x0c88), Some(1))); // DEFAULT_ADDR_LSB 0x1000 >> 12
        e.push((i, o(0x0949, 0x0c89), Some(0)));
        e.push((i, o(0x082e, 0x0b6e), Some(2))); // fault default 0x2000 >> 12
        e.push((i, o(0x082f, 0x0b6f), Some(0)));
        e.push((i, o(0x0828, 0x0b68), Some(1 << 18))); // CNTL2 retry bit
    }
    // *_init_tlb_regs: ENABLE_L1_TLB | SYSTEM_ACCESS_MODE 3 | ADM |
    // MTYPE_UC << 11 | ATC_EN.
    for i in 0..n {
        e.push((
            i,
            o(0x0963, 0x0ca3),
            Some(0x1 | 0x18 | 0x40 | 0x1800 | 0x2000),
        ));
    }
    // *_init_cache_regs (translate_further: bank 12, big-K 9).
    for i in 0..n {
        e.push((i, o(0x0820, 0x0b60), Some(0x1 | 0x2 | (1 << 19))));
        e.push((i, o(0x0821, 0x0b61), Some(0x3)));
        e.push((i, o(0x0822, 0x0b62), Some(0x8010_0000 | (9 << 15) | 12)));
        e.push((i, o(0x0837, 0x0b77), Some(0x01)));
    }
    if mm {
        // mmhub_v1_8_init_snoop_override_regs: five DAGBs, 0x80 apart.
        for i in 0..n {
            for j in 0..5 {
                e.push((i, 0x0060 + j * 0x80, Some(1 << 15)));
                e.push((i, 0x0061 + j * 0x80, Some(1 << 15)));
            }
        }
    }
    // *_enable_system_domain: barebell's VMID0 shape (depth 2, bs 9).
    for i in 0..n {
        e.push((i, o(0x0860, 0x0ba0), Some(0x1 | (2 << 1) | (9 << 3))));
    }
    // *_disable_identity_aperture.
    for i in 0..n {
        for (k, v) in [0xFFFF_FFFF, 0xF, 0, 0, 0, 0].into_iter().enumerate() {
            e.push((i, o(0x0831, 0x0b71) + k as u32, Some(v)));
        }
    }
    // *_setup_vmid_config: CONTEXT1..15_CNTL (1 apart), start/end pairs
    // (2 apart), end = max_pfn - 1 = 2^36 - 1.
    let cntl = 0x1 | (2 << 1) | (9 << 3) | 0x80 | 0x0055_5400;
    for i in 0..n {
        for v in 0..15u32 {
            e.push((i, o(0x0861, 0x0ba1) + v, Some(cntl)));
            e.push((i, o(0x08ed, 0x0c2d) + 2 * v, Some(0)));
            e.push((i, o(0x08ee, 0x0c2e) + 2 * v, Some(0)));
            e.push((i, o(0x090d, 0x0c4d) + 2 * v, Some(0xFFFF_FFFF)));
            e.push((i, o(0x090e, 0x0c4e) + 2 * v, Some(0xF)));
        }
    }
    // *_program_invalidation: 18 engines, pairs 2 apart.
    for i in 0..n {
        for k in 0..18u32 {
            e.push((i, o(0x08a7, 0x0be7) + 2 * k, Some(0xFFFF_FFFF)));
            e.push((i, o(0x08a8, 0x0be8) + 2 * k, Some(0x1F)));
        }
    }
    e
}

fn check_order(got: &[(u32, u32, u32)], want: &[(u32, u32, Option<u32>)]) {
    assert_eq!(got.len(), want.len(), "number of writes");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!((g.0, g.1), (w.0, w.1), "write {k}: instance/offset");
        if let Some(v) = w.2 {
            assert_eq!(g.2, v, "write {k} to {:#x}: value", g.1);
        }
    }
}

#[test]
fn gfxhub_v1_2_init_writes_linux_registers_in_linux_order_across_xccs() {
    let bus = Recorder::default();
    let root = 0x80_0010_0000;
    let xccs: Vec<_> = (0..3).map(|i| Block::new(&bus, bases(i))).collect();
    gfxhub_v1_2::gart_enable(&xccs, &map_cfg(root)).unwrap();
    check_order(&bus.writes.borrow(), &expected(3, false, root));
}

#[test]
fn mmhub_v1_8_init_writes_linux_registers_in_linux_order_across_aids() {
    let bus = Recorder::default();
    let root = 0x80_0010_0000;
    let aids: Vec<_> = (0..2).map(|i| Block::new(&bus, bases(i))).collect();
    mmhub_v1_8::gart_enable(&aids, &map_cfg(root)).unwrap();
    check_order(&bus.writes.borrow(), &expected(2, true, root));
}

/// A clock that moves 1 µs per reading.
struct Ticking(Cell<u64>);
impl Clock for Ticking {
    fn now_ns(&self) -> u64 {
        let t = self.0.get() + 1000;
        self.0.set(t);
        t
    }
}

#[test]
fn tlb_flush_acks_and_a_missing_ack_is_a_typed_timeout() {
    let hub = HubV9Model::new(hub_v9::GFXHUB_1_2, 0x1_0000);
    let b = Block::new(&hub, bases(0));
    let clock = Ticking(Cell::new(0));
    flush_gpu_tlb(&b, &clock, &RT_GFXHUB, 3, 0).unwrap();
    assert_eq!(hub.requests(), 1);
    // gmc_v9_0_get_invalidate_req(3, 0): VMID bit 3, L2 PTEs/PDE0-2,
    // L1 PTEs (bits 18..22); engine 17 = REQ + 17.
    assert_eq!(hub.reg(0x0883 + 17), (1 << 3) | (0x1F << 18));

    hub.never_ack();
    let e = flush_gpu_tlb(&b, &clock, &RT_GFXHUB, 5, 0).unwrap_err();
    match e {
        InvalidateError::AckTimeout {
            register,
            engine,
            vmid,
            waited_ns,
            ..
        } => {
            assert_eq!((register, engine, vmid), ("VM_INVALIDATE_ENG0_ACK", 17, 5));
            assert!(waited_ns >= 100_000_000, "adev->usec_timeout: 100 ms");
        }
        other => panic!("expected AckTimeout, got {other:?}"),
    }
    assert!(e.to_string().contains("not set after"));
    // 9.4.3's flush type field is 2 bits.
    assert!(matches!(
        flush_gpu_tlb(&b, &clock, &RT_GFXHUB, 1, 4),
        Err(InvalidateError::BadArgument { .. })
    ));
}

#[test]
fn gfx9_pte_bits_match_amdgpu_vm_h() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h"
    ))
    .expect("run `cargo xtask headers` first");
    let shift_of = |name: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("{name} not in amdgpu_vm.h"));
        let n: u64 = line
            .split("<<")
            .nth(1)
            .and_then(|r| r.trim().trim_end_matches(')').trim().parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        1 << n
    };
    for (name, mask) in pte_v9::header_masks() {
        assert_eq!(mask, shift_of(name), "runtime {name}");
    }
    for (name, mask) in barebell_decode::pte_v9::HEADER_BITS {
        assert_eq!(mask, shift_of(name), "model {name}");
    }
    // The multi-bit macros, by their bodies.
    assert!(text.contains("#define AMDGPU_PTE_MTYPE_VG10_SHIFT(mtype)\t((uint64_t)(mtype) << 57)"));
    assert!(text.contains("#define AMDGPU_PTE_MTYPE_VG10_MASK\tAMDGPU_PTE_MTYPE_VG10_SHIFT(3ULL)"));
    assert!(text.contains("#define AMDGPU_PDE_BFS(a)\t((uint64_t)a << 59)"));
    assert!(text.contains("#define AMDGPU_PTE_FRAG(x)\t((x & 0x1fULL) << 7)"));
    assert_eq!(pte_v9::FIELD_POSITIONS[0], ("fragment", 7, 5));
    assert_eq!(pte_v9::FIELD_POSITIONS[1], ("mtype_vg10", 57, 2));
    assert_eq!(pte_v9::FIELD_POSITIONS[2], ("bfs", 59, 5));
    assert_eq!(barebell_decode::pte_v9::bits::MTYPE_VG10_SHIFT, 57);
    // The geometry amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48) gives.
    assert_eq!(pte_v9::MAX_PFN, 1 << 36);
    assert_eq!((pte_v9::NUM_LEVEL, pte_v9::BLOCK_SIZE), (3, 9));
    assert_eq!((pte_v9::CONTEXT_DEPTH, pte_v9::CONTEXT_BLOCK_SIZE), (2, 9));
}

/// A GC 9.4.x hub refuses, before it writes a register, a VMID0 range
/// that ends below its start or past the 48-bit address space: the hub
/// would take `start..=end` as given (`*_init_system_aperture_regs()`
/// writes the pair), and neither range can be walked.
#[test]
fn a_reversed_or_oversized_vmid0_range_is_refused_before_any_write() {
    use barebell::gmc::hub::HubError;
    let root = 0x10_0000;
    for (start, end) in [(0x20_0000, 0x1F_F000), (0, 1 << 48)] {
        let hub = HubV9Model::new(hub_v9::GFXHUB_1_2, 0x1_0000);
        let xccs = [Block::new(&hub, bases(0))];
        let mut cfg = map_cfg(root);
        cfg.map.start = start;
        cfg.map.end = end;
        assert_eq!(
            gfxhub_v1_2::gart_enable(&xccs, &cfg),
            Err(HubError::BadConfig {
                field: "end",
                value: end
            }),
            "{start:#x}..{end:#x}"
        );
        assert_eq!(hub.written(), vec![], "{start:#x}..{end:#x}");
    }
}
