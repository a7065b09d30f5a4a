//! GFXHUB init against the hub model: no translation through VMID0 until
//! `gfxhub_gart_enable` has run, then the model walks the runtime's own
//! tables from the root the registers name.
//!
//! Register values expected below are composed by hand from the masks in
//! Linux 6.12 `gc_11_0_0_sh_mask.h` (e.g. `GCMC_VM_MX_L1_TLB_CNTL`:
//! ENABLE_L1_TLB 0x1, SYSTEM_ACCESS_MODE 0x18, ENABLE_ADVANCED_DRIVER_MODEL
//! 0x40, MTYPE 0x3800), at the GC segment-0 base of the model's Navi31
//! discovery table.

use barebell::bus::RegisterBus;
use barebell::discovery::{Discovery, hw_id};
use barebell::gmc::hub::{HubConfig, HubError, gfxhub_gart_enable};
use barebell::gmc::pagetable::{Flags, Table, TableArena};
use barebell::ip::Generation;
use barebell::regs::IpBases;
use barebell_model::SimClock;
use barebell_model::discovery::{self as sim, NAVI31};
use barebell_model::dma::Dma;
use barebell_model::gmc::{Access, FaultReason};
use barebell_model::hub::{HubModel, HubRefusal};

const RW: Flags = Flags {
    readable: true,
    writeable: true,
    executable: false,
    system: false,
    snooped: false,
};

fn gc_bases() -> IpBases {
    let (bin, _) = sim::build(&NAVI31);
    let d = Discovery::parse(&bin).unwrap();
    let ip = d.ip(hw_id::GC, 0).unwrap();
    assert_eq!(ip.version.triple(), (11, 0, 0));
    ip.bases
}

/// Tables in leaked host memory (host address = MC address in the
/// model) mapping VA 0x40_0000..+64 KiB to PA 0x1234_0000, and a 2 MiB
/// page at VA 0x80_0000.
fn tables() -> (u64, Dma) {
    let n = 8;
    let t: &'static mut [Table] = Box::leak(vec![Table::EMPTY; n].into_boxed_slice());
    let base = t.as_ptr() as u64;
    let mut dma = Dma::default();
    // SAFETY: leaked, outlives `dma`; tables are written before walks.
    unsafe { dma.map(base, (n * 4096) as u64) };
    let mut a = TableArena::new(t, base, Generation::Gfx11);
    a.map(0x40_0000, 0x1234_0000, 0x1_0000, RW, false).unwrap();
    a.map(0x80_0000, 0x4000_0000, 0x20_0000, RW, true).unwrap();
    (a.root(), dma)
}

fn config(root: u64) -> HubConfig {
    HubConfig {
        pt_base: root,
        start: 0,
        end: 0xFF_FFFF,
        fb_start: 0x80_0000_0000,
        fb_end: 0x85_FFFF_FFFF,
        agp_start: 0xFFFF_FFFF_FFFF,
        agp_end: 0,
        default_page: 0x1000_0000,
        dummy_page: 0x7000_0000,
    }
}

#[test]
fn no_translation_before_init_then_the_walk_uses_the_programmed_root() {
    let clock = SimClock::new();
    let gc = gc_bases();
    let hub = HubModel::new(&clock, gc);
    let (root, dma) = tables();
    assert_eq!(
        hub.translate(&dma, 0x40_0000, Access::Read),
        Err(HubRefusal::L1TlbDisabled)
    );
    gfxhub_gart_enable(&hub, &gc, &config(root)).unwrap();
    let t = hub.translate(&dma, 0x40_1008, Access::Read).unwrap();
    assert_eq!(t.pa, 0x1234_1008);
    // The large page: one 2 MiB TLB entry.
    let t = hub
        .translate(&dma, 0x80_0000 + 0x12_3456, Access::Write)
        .unwrap();
    assert_eq!((t.pa, t.tlb_bytes), (0x4000_0000 + 0x12_3456, 0x20_0000));
    // Beyond context 0's end.
    assert_eq!(
        hub.translate(&dma, 0x100_0000, Access::Read),
        Err(HubRefusal::OutOfRange {
            va: 0x100_0000,
            start: 0,
            end: 0xFF_FFFF
        })
    );
    // Inside the range but unmapped: the walk faults.
    assert!(matches!(
        hub.translate(&dma, 0x50_0000, Access::Read),
        Err(HubRefusal::Fault(f)) if matches!(f.reason, FaultReason::Invalid { .. })
    ));
}

#[test]
fn context_disabled_after_init_refuses_again() {
    let clock = SimClock::new();
    let gc = gc_bases();
    let hub = HubModel::new(&clock, gc);
    let (root, dma) = tables();
    gfxhub_gart_enable(&hub, &gc, &config(root)).unwrap();
    // GCVM_CONTEXT0_CNTL at dword 0x1688 of GC segment 0: clear ENABLE.
    let at = ((gc.0[0] + 0x1688) * 4) as usize;
    hub.write32(at, hub.read32(at) & !1);
    assert_eq!(
        hub.translate(&dma, 0x40_0000, Access::Read),
        Err(HubRefusal::ContextDisabled { vmid: 0 })
    );
}

#[test]
fn registers_hold_the_linux_values() {
    let clock = SimClock::new();
    let gc = gc_bases();
    let hub = HubModel::new(&clock, gc);
    let (root, _dma) = tables();
    gfxhub_gart_enable(&hub, &gc, &config(root)).unwrap();
    let reg = |dw: u32| hub.read32(((gc.0[0] + dw) * 4) as usize);
    // GCMC_VM_MX_L1_TLB_CNTL: 0x1 | 3 << 3 | 0x40 | 3 << 11.
    assert_eq!(reg(0x167f), 0x1 | 0x18 | 0x40 | 0x1800);
    // GCVM_CONTEXT0_CNTL: ENABLE_CONTEXT, PAGE_TABLE_DEPTH 3 (mask 0x6).
    assert_eq!(reg(0x1688), 0x7);
    // GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32/HI32: root | VALID.
    assert_eq!(reg(0x16f3), (root as u32) | 1);
    assert_eq!(reg(0x16f4), (root >> 32) as u32);
    // System aperture low/high in 256 KiB units: min(fb_start, agp_start)
    // and max(fb_end, agp_end); the AGP aperture here is empty.
    assert_eq!(reg(0x167d), (0x80_0000_0000u64 >> 18) as u32);
    assert_eq!(reg(0x167e), (0x85_FFFF_FFFFu64 >> 18) as u32);
    // Every user context: the CNTL value composed from the sh_mask masks,
    // end at max_pfn - 1 = 2^36 - 1.
    let user_cntl = 0x7 | 0x400 | 0x1000 | 0x4000 | 0x1_0000 | 0x4_0000 | 0x10_0000 | 0x40_0000;
    for vmid in 1..=15u8 {
        let (en, depth, bs, end) = hub.user_context(vmid);
        assert_eq!(
            (en, depth, bs, end),
            (true, 3, 0, (1 << 36) - 1),
            "vmid {vmid}"
        );
        assert_eq!(reg(0x1689 + u32::from(vmid) - 1), user_cntl, "vmid {vmid}");
    }
    // GCVM_CONTEXT15_CNTL is 0x1697 in the header.
    assert_eq!(reg(0x1697), user_cntl);
    // Invalidation engine 17's range, HI32 at 0x16d0 + 2 * 17.
    assert_eq!(reg(0x16d0 + 34), 0x1F);
    // GCVM_L2_CNTL3: the header default 0x80120007 with BANK_SELECT
    // (mask 0x3F) = 9 and L2_CACHE_BIGK_FRAGMENT_SIZE (mask 0xF8000) = 6:
    // (0x80120007 & !0xF803F) | 9 | 6 << 15.
    assert_eq!(reg(0x15be), 0x8013_0009);
}

#[test]
fn bad_config_is_typed() {
    let clock = SimClock::new();
    let gc = gc_bases();
    let hub = HubModel::new(&clock, gc);
    let mut c = config(0x1000);
    c.pt_base = 0x1010;
    assert_eq!(
        gfxhub_gart_enable(&hub, &gc, &c),
        Err(HubError::BadConfig {
            field: "pt_base",
            value: 0x1010
        })
    );
    let mut c = config(0x1000);
    c.end = 0;
    c.start = 0x1000;
    assert_eq!(
        gfxhub_gart_enable(&hub, &gc, &c),
        Err(HubError::BadConfig {
            field: "end",
            value: 0
        })
    );
    // Nothing was written: still no translation.
    assert_eq!(hub.read32(((gc.0[0] + 0x1688) * 4) as usize), 0);
}

/// An unmapped VA inside context 0's range latches the fault registers;
/// `hub::read_fault` decodes them, a second fault only sets MORE_FAULTS,
/// and `hub::clear_fault` (bit 0 of `GCVM_L2_PROTECTION_FAULT_CNTL`)
/// clears them.
#[test]
fn unmapped_access_latches_the_fault_registers() {
    use barebell::gmc::hub::{GFXHUB_3_0, clear_fault, read_fault};
    let clock = SimClock::new();
    let gc = gc_bases();
    let hub = HubModel::new(&clock, gc);
    let (root, dma) = tables();
    gfxhub_gart_enable(&hub, &gc, &config(root)).unwrap();
    assert_eq!(read_fault(&hub, &gc, &GFXHUB_3_0), Ok(None));
    assert!(matches!(
        hub.translate_as(&dma, 0x50_0008, Access::Write, 6),
        Err(HubRefusal::Fault(_))
    ));
    // gc_11_0_0_offset.h: STATUS 0x15c8, ADDR_LO32 0x15c9, ADDR_HI32
    // 0x15ca. gc_11_0_0_sh_mask.h: PERMISSION_FAULTS 0xF0, CID 0x3FE00,
    // RW 0x40000. The model reports an invalid PTE as PERMISSION_FAULTS
    // bit 0 (its convention).
    let reg = |dw: u32| hub.read32(((gc.0[0] + dw) * 4) as usize);
    assert_eq!(reg(0x15c8), 0x10 | (6 << 9) | 0x4_0000);
    assert_eq!((reg(0x15c9), reg(0x15ca)), (0x500, 0));
    let f = read_fault(&hub, &gc, &GFXHUB_3_0).unwrap().unwrap();
    assert_eq!(
        (
            f.addr,
            f.vmid,
            f.cid,
            f.write,
            f.permission_faults,
            f.more_faults
        ),
        (0x50_0000, 0, 6, true, 1, false)
    );
    assert!(f.to_string().contains("CID 0x6"), "{f}");
    // A second fault keeps the first address and sets MORE_FAULTS (0x1).
    let _ = hub.translate(&dma, 0x60_0000, Access::Read);
    assert_eq!(reg(0x15c8), 0x10 | (6 << 9) | 0x4_0000 | 0x1);
    assert_eq!(reg(0x15c9), 0x500);
    clear_fault(&hub, &gc, &GFXHUB_3_0).unwrap();
    assert_eq!((reg(0x15c8), reg(0x15c9)), (0, 0));
    assert_eq!(read_fault(&hub, &gc, &GFXHUB_3_0), Ok(None));
    // Beyond the context's end: latched too, as a MAPPING_ERROR (0x100).
    let _ = hub.translate(&dma, 0x100_0000, Access::Read);
    assert_eq!((reg(0x15c8), reg(0x15c9)), (0x100, 0x1000));
}

// ---- All four hubs through the one `gart_enable` sequence ----------------
//
// Offsets below are hand-copied from each hub's Linux 6.12 `_offset.h`, and
// register values composed by hand from its `_sh_mask.h` masks, not from
// the runtime's tables or bitfield structs.

use barebell::gmc::hub::{
    GFXHUB_3_0, GFXHUB_12_0, HubRegs, MMHUB_3_0_0, MMHUB_4_1_0, clear_fault, gart_enable,
    read_fault,
};
use barebell_model::discovery::NAVI48;
use barebell_model::hub::OrderViolation;

/// One hub under test and the header facts the assertions use.
struct Case {
    hub: &'static HubRegs,
    part: &'static sim::PartDesc,
    hw: u16,
    gfx12: bool,
    /// `*_CONTEXT0_CNTL`, `*_CONTEXT15_CNTL`, `*MC_VM_MX_L1_TLB_CNTL`,
    /// `*_L2_CNTL3`, `*_L2_PROTECTION_FAULT_CNTL`,
    /// `*_L2_PROTECTION_FAULT_STATUS(_LO32)`, `_ADDR_LO32`, `_ADDR_HI32`,
    /// `*_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32`, `*MC_VM_SYSTEM_APERTURE_LOW_ADDR`.
    ctx0_cntl: u32,
    ctx15_cntl: u32,
    l1_tlb: u32,
    l2_cntl3: u32,
    fault_cntl: u32,
    status: u32,
    addr_lo: u32,
    addr_hi: u32,
    base_lo: u32,
    aperture_low: u32,
    /// The user-context CNTL value from the header masks.
    user_cntl: u32,
}

/// gfx11 generation (`gc_11_0_0_sh_mask.h`, `mmhub_3_0_0_sh_mask.h`):
/// ENABLE_CONTEXT 0x1, PAGE_TABLE_DEPTH 0x6, RANGE 0x400, DUMMY_PAGE
/// 0x1000, PDE0 0x4000, VALID 0x10000, READ 0x40000, WRITE 0x100000,
/// EXECUTE 0x400000 (`_ENABLE_DEFAULT` masks).
const USER_GFX11: u32 = 0x7 | 0x400 | 0x1000 | 0x4000 | 0x1_0000 | 0x4_0000 | 0x10_0000 | 0x40_0000;
/// gfx12 generation (`gc_12_0_0_sh_mask.h`, `mmhub_4_1_0_sh_mask.h`): the
/// same fields at 0x800, 0x2000, 0x8000, 0x20000, 0x80000, 0x200000,
/// 0x800000.
const USER_GFX12: u32 = 0x7 | 0x800 | 0x2000 | 0x8000 | 0x2_0000 | 0x8_0000 | 0x20_0000 | 0x80_0000;

const CASES: [Case; 4] = [
    Case {
        hub: &GFXHUB_3_0,
        part: &NAVI31,
        hw: hw_id::GC,
        gfx12: false,
        ctx0_cntl: 0x1688,
        ctx15_cntl: 0x1697,
        l1_tlb: 0x167f,
        l2_cntl3: 0x15be,
        fault_cntl: 0x15c4,
        status: 0x15c8,
        addr_lo: 0x15c9,
        addr_hi: 0x15ca,
        base_lo: 0x16f3,
        aperture_low: 0x167d,
        user_cntl: USER_GFX11,
    },
    Case {
        hub: &MMHUB_3_0_0,
        part: &NAVI31,
        hw: hw_id::MMHUB,
        gfx12: false,
        ctx0_cntl: 0x0740,
        ctx15_cntl: 0x074f,
        l1_tlb: 0x08f3,
        l2_cntl3: 0x0702,
        fault_cntl: 0x0708,
        status: 0x070c,
        addr_lo: 0x070d,
        addr_hi: 0x070e,
        base_lo: 0x07ab,
        aperture_low: 0x08f1,
        user_cntl: USER_GFX11,
    },
    Case {
        hub: &GFXHUB_12_0,
        part: &NAVI48,
        hw: hw_id::GC,
        gfx12: true,
        ctx0_cntl: 0x1624,
        ctx15_cntl: 0x1633,
        l1_tlb: 0x161b,
        l2_cntl3: 0x15c6,
        fault_cntl: 0x15cc,
        status: 0x15d0,
        addr_lo: 0x15d2,
        addr_hi: 0x15d3,
        base_lo: 0x168f,
        aperture_low: 0x1619,
        user_cntl: USER_GFX12,
    },
    Case {
        hub: &MMHUB_4_1_0,
        part: &NAVI48,
        hw: hw_id::MMHUB,
        gfx12: true,
        ctx0_cntl: 0x0564,
        ctx15_cntl: 0x0573,
        l1_tlb: 0x055b,
        l2_cntl3: 0x04e6,
        fault_cntl: 0x04ec,
        status: 0x04f0,
        addr_lo: 0x04f2,
        addr_hi: 0x04f3,
        base_lo: 0x05cf,
        aperture_low: 0x0559,
        user_cntl: USER_GFX12,
    },
];

impl Case {
    fn bases(&self) -> IpBases {
        let (bin, _) = sim::build(self.part);
        let d = Discovery::parse(&bin).unwrap();
        let ip = d.ip(self.hw, 0).unwrap();
        assert!(
            self.hub.versions.contains(&ip.version.triple()),
            "{}",
            self.hub.name
        );
        ip.bases
    }

    /// The same mappings as `tables()`, in this hub's PTE format, plus a
    /// 64 KiB block that gets a fragment.
    fn tables(&self) -> (u64, Dma) {
        let n = 8;
        let t: &'static mut [Table] = Box::leak(vec![Table::EMPTY; n].into_boxed_slice());
        let base = t.as_ptr() as u64;
        let mut dma = Dma::default();
        // SAFETY: leaked, outlives `dma`; tables are written before walks.
        unsafe { dma.map(base, (n * 4096) as u64) };
        let format = if self.gfx12 {
            Generation::Gfx12
        } else {
            Generation::Gfx11
        };
        let mut a = TableArena::new(t, base, format);
        a.map(0x40_0000, 0x1234_0000, 0x1_0000, RW, false).unwrap();
        a.map(0x80_0000, 0x4000_0000, 0x20_0000, RW, true).unwrap();
        (a.root(), dma)
    }
}

fn reg_of(hub: &HubModel, bases: IpBases, dw: u32) -> u32 {
    hub.read32(((bases.0[0] + dw) * 4) as usize)
}

#[test]
fn every_hub_enables_and_translates_through_the_runtime_tables() {
    for c in &CASES {
        let clock = SimClock::new();
        let b = c.bases();
        let hub = HubModel::for_hub(&clock, b, c.hub);
        let (root, dma) = c.tables();
        assert_eq!(
            hub.translate(&dma, 0x40_0000, Access::Read),
            Err(HubRefusal::L1TlbDisabled),
            "{}",
            c.hub.name
        );
        gart_enable(&hub, &b, c.hub, &config(root)).unwrap();
        let reg = |dw| reg_of(&hub, b, dw);
        // Context 0: ENABLE_CONTEXT | PAGE_TABLE_DEPTH 3, block size 0.
        assert_eq!(reg(c.ctx0_cntl), 0x7, "{}", c.hub.name);
        assert_eq!(reg(c.ctx15_cntl), c.user_cntl, "{}", c.hub.name);
        // L1 TLB: ENABLE 0x1, SYSTEM_ACCESS_MODE 3 (0x18), ADVANCED_DRIVER
        // 0x40, MTYPE_UC 3 at bit 11 (mask 0x3800 gfx11, 0x1800 gfx12).
        assert_eq!(reg(c.l1_tlb), 0x1 | 0x18 | 0x40 | 0x1800, "{}", c.hub.name);
        // L2_CNTL3: the .c/_default.h value (0x80120007 GC, 0x80100007
        // MMHUB) with BANK_SELECT (0x3F) 9 and BIGK (0xF8000) 6: bit 17 of
        // GC's default falls inside the BIGK mask, so both end equal.
        assert_eq!(reg(c.l2_cntl3), 0x8013_0009, "{}", c.hub.name);
        assert_eq!(reg(c.base_lo), (root as u32) | 1, "{}", c.hub.name);
        assert_eq!(reg(c.aperture_low), (0x80_0000_0000u64 >> 18) as u32);
        let t = hub.translate(&dma, 0x40_1008, Access::Read).unwrap();
        assert_eq!(
            (t.pa, t.tlb_bytes),
            (0x1234_1008, 0x1_0000),
            "{}",
            c.hub.name
        );
        let t = hub
            .translate(&dma, 0x80_0000 + 0x12_3456, Access::Write)
            .unwrap();
        assert_eq!(
            (t.pa, t.tlb_bytes),
            (0x4000_0000 + 0x12_3456, 0x20_0000),
            "{}",
            c.hub.name
        );
        let v = hub.vmid0().unwrap();
        assert_eq!(
            (v.root, v.start, v.end, v.fb_start, v.default_page),
            (root, 0, 0xFF_FFFF, 0x80_0000_0000, 0x1000_0000),
            "{}",
            c.hub.name
        );
        assert_eq!(read_fault(&hub, &b, c.hub), Ok(None), "{}", c.hub.name);
    }
}

#[test]
fn every_hub_refuses_a_context_enabled_before_its_base() {
    for c in &CASES {
        let clock = SimClock::new();
        let b = c.bases();
        let hub = HubModel::for_hub(&clock, b, c.hub);
        let (root, dma) = c.tables();
        // ENABLE_CONTEXT before anything else: Linux writes the base first.
        hub.write32(((b.0[0] + c.ctx0_cntl) * 4) as usize, 0x7);
        assert_eq!(
            hub.order_violation(),
            Some(OrderViolation::ContextBeforeBase)
        );
        gart_enable(&hub, &b, c.hub, &config(root)).unwrap();
        assert_eq!(
            hub.translate(&dma, 0x40_0000, Access::Read),
            Err(HubRefusal::Order(OrderViolation::ContextBeforeBase)),
            "{}",
            c.hub.name
        );
    }
    // Base written, L1 TLB still off.
    let c = &CASES[3];
    let clock = SimClock::new();
    let b = c.bases();
    let hub = HubModel::for_hub(&clock, b, c.hub);
    hub.write32(((b.0[0] + c.base_lo) * 4) as usize, 0x1001);
    hub.write32(((b.0[0] + c.ctx0_cntl) * 4) as usize, 0x7);
    assert_eq!(
        hub.order_violation(),
        Some(OrderViolation::ContextBeforeL1Tlb)
    );
}

#[test]
fn every_hub_refuses_an_inverted_system_aperture() {
    for c in &CASES {
        let clock = SimClock::new();
        let b = c.bases();
        let hub = HubModel::for_hub(&clock, b, c.hub);
        let (root, dma) = c.tables();
        gart_enable(&hub, &b, c.hub, &config(root)).unwrap();
        // *MC_VM_SYSTEM_APERTURE_LOW_ADDR above _HIGH_ADDR (the next dword).
        let low = (b.0[0] + c.aperture_low) * 4;
        hub.write32(low as usize, 0x30_0000);
        hub.write32((low + 4) as usize, 0x20_0000);
        assert_eq!(
            hub.translate(&dma, 0x40_0000, Access::Read),
            Err(HubRefusal::ApertureInverted {
                low: 0x30_0000,
                high: 0x20_0000
            }),
            "{}",
            c.hub.name
        );
    }
}

#[test]
fn every_hub_latches_an_unmapped_access_and_read_fault_decodes_it() {
    for c in &CASES {
        let clock = SimClock::new();
        let b = c.bases();
        let hub = HubModel::for_hub(&clock, b, c.hub);
        let (root, dma) = c.tables();
        let reg = |dw| reg_of(&hub, b, dw);
        // A VA above 2^44 so ADDR_HI32 is exercised: context 0 spans the
        // whole 48-bit space here.
        let mut cfg = config(root);
        cfg.end = (1 << 48) - 1;
        gart_enable(&hub, &b, c.hub, &cfg).unwrap();
        let va = 0x1234_5678_9000u64;
        assert!(matches!(
            hub.translate_as(&dma, va + 0x10, Access::Read, 6),
            Err(HubRefusal::Fault(_))
        ));
        // Fields in all four headers: PERMISSION_FAULTS 0xF0, CID 0x3FE00,
        // RW 0x40000 (read: 0). ADDR_LO32 = VA >> 12 low 32 bits,
        // ADDR_HI32.LOGICAL_PAGE_ADDR_HI4 (0xF) = VA >> 44.
        assert_eq!(reg(c.status), 0x10 | (6 << 9), "{}", c.hub.name);
        assert_eq!(reg(c.addr_lo), 0x2345_6789, "{}", c.hub.name);
        assert_eq!(reg(c.addr_hi), 0x1, "{}", c.hub.name);
        let f = read_fault(&hub, &b, c.hub).unwrap().unwrap();
        assert_eq!(
            (f.hub, f.addr, f.cid, f.write, f.permission_faults),
            (c.hub.name, va, 6, false, 1)
        );
        assert!(f.to_string().starts_with(c.hub.name), "{f}");
        // Bit 0 of *_L2_PROTECTION_FAULT_CNTL clears it.
        clear_fault(&hub, &b, c.hub).unwrap();
        assert_eq!(
            (reg(c.status), reg(c.fault_cntl) & 1),
            (0, 0),
            "{}",
            c.hub.name
        );
        assert_eq!(read_fault(&hub, &b, c.hub), Ok(None));
    }
}

/// A flat table of `entries` 4 KiB PTEs in leaked, 4 KiB-aligned memory,
/// PTE `i` mapping page `i` to `pa0 + i * 4 KiB` (read-write), and a DMA
/// view of it.
fn flat_table(entries: usize, pa0: u64) -> (u64, Dma) {
    let bytes = entries * 8;
    let layout = std::alloc::Layout::from_size_align(bytes, 4096).unwrap();
    // SAFETY: non-zero size; leaked.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
    assert!(!p.is_null());
    // SAFETY: `entries` zeroed u64s, owned here only.
    let t = unsafe { std::slice::from_raw_parts_mut(p, entries) };
    for (i, e) in t.iter_mut().enumerate() {
        // AMDGPU_PTE_VALID | READABLE | WRITEABLE (amdgpu_vm.h bits 0, 5, 6).
        *e = (pa0 + i as u64 * 4096) | 0x1 | 0x20 | 0x40;
    }
    let base = p as u64;
    let mut dma = Dma::default();
    // SAFETY: leaked, outlives `dma`; written before any walk.
    unsafe { dma.map(base, bytes as u64) };
    (base, dma)
}

/// Linux's VMID0: a flat GART at depth 0 (`*_enable_system_domain()`
/// writes `PAGE_TABLE_DEPTH` 0 over the register's value) from the GART
/// start, PTE `n` for GART offset `n * 4 KiB` (`amdgpu_gart_map()`). The
/// hub model walks it on every hub, as the hardware does for Linux.
#[test]
fn every_hub_walks_linux_flat_gart_at_depth_0() {
    for c in &CASES {
        let clock = SimClock::new();
        let b = c.bases();
        let hub = HubModel::for_hub(&clock, b, c.hub);
        // A 4 MiB GART high in the MC space, as gfx11 places it.
        let (root, dma) = flat_table(1024, 0x3_0000_0000);
        let start = 0x7FFF_0000_0000u64;
        let mut cfg = config(root);
        cfg.start = start;
        cfg.end = start + (4 << 20) - 1;
        gart_enable(&hub, &b, c.hub, &cfg).unwrap();
        // PAGE_TABLE_DEPTH (mask 0x6 in all four headers) to 0.
        let at = ((b.0[0] + c.ctx0_cntl) * 4) as usize;
        hub.write32(at, hub.read32(at) & !0x6);
        assert_eq!(hub.vmid0().unwrap().depth, 0, "{}", c.hub.name);
        let t = hub
            .translate(&dma, start + 777 * 4096 + 0x18, Access::Write)
            .unwrap_or_else(|e| panic!("{}: {e:?}", c.hub.name));
        assert_eq!(t.pa, 0x3_0000_0000 + 777 * 4096 + 0x18, "{}", c.hub.name);
        // The last PTE, and one past the context's end.
        let t = hub
            .translate(&dma, start + (4 << 20) - 8, Access::Read)
            .unwrap();
        assert_eq!(t.pa, 0x3_0000_0000 + (4 << 20) - 8);
        assert!(matches!(
            hub.translate(&dma, start + (4 << 20), Access::Read),
            Err(HubRefusal::OutOfRange { .. })
        ));
    }
}

/// VMIDs 1–15 are walked from their own registers: `gart_enable` sets
/// them up as `*_setup_vmid_config()` does (depth 3, start 0), a context
/// base written later selects the tables, and a fault latches the VMID
/// (`VMID` field 0xF00000 in all four headers).
#[test]
fn every_hub_walks_user_contexts_from_their_registers() {
    for c in &CASES {
        let clock = SimClock::new();
        let b = c.bases();
        let hub = HubModel::for_hub(&clock, b, c.hub);
        let (root, dma) = c.tables();
        gart_enable(&hub, &b, c.hub, &config(root)).unwrap();
        // No base yet: the VALID bit is missing.
        assert_eq!(
            hub.translate_vmid_as(&dma, 5, 0x40_0000, Access::Read, 0),
            Err(HubRefusal::InvalidBase { raw: 0 }),
            "{}",
            c.hub.name
        );
        // Context n's base LO32 is n pairs past context 0's.
        let base = ((b.0[0] + c.base_lo + 2 * 5) * 4) as usize;
        hub.write32(base, (root as u32) | 1);
        hub.write32(base + 4, (root >> 32) as u32);
        let t = hub
            .translate_vmid_as(&dma, 5, 0x40_1008, Access::Read, 0)
            .unwrap();
        assert_eq!(t.pa, 0x1234_1008, "{}", c.hub.name);
        assert!(matches!(
            hub.translate_vmid_as(&dma, 5, 0x50_0000, Access::Read, 3),
            Err(HubRefusal::Fault(_))
        ));
        assert_eq!(
            reg_of(&hub, b, c.status),
            0x10 | (3 << 9) | (5 << 20),
            "{}",
            c.hub.name
        );
        assert_eq!(
            hub.translate_vmid_as(&dma, 6, 0x40_0000, Access::Read, 0),
            Err(HubRefusal::InvalidBase { raw: 0 })
        );
    }
}

/// The L2 control defaults GFXHUB 12.0 and both MMHUBs start from are
/// `#define`s in their Linux `.c` files, not in a compilable header: read
/// them from the text of Linux 6.12 `gfxhub_v12_0.c`, `mmhub_v3_0.c` and
/// `mmhub_v4_1_0.c`. GFXHUB 3.0's come from `gc_11_0_0_default.h`
/// (conformance facts).
#[test]
fn l2_defaults_match_the_linux_c_files() {
    let define = |file: &str, name: &str| -> u32 {
        let path = format!(
            "{}/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/amdgpu/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"));
        let line = text
            .lines()
            .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("{name} not in {file}"));
        let v = line.split_whitespace().nth(2).unwrap();
        u32::from_str_radix(v.trim_start_matches("0x"), 16).unwrap()
    };
    for (hub, file, vm) in [
        (&GFXHUB_12_0, "gfxhub_v12_0.c", "GCVM"),
        (&MMHUB_3_0_0, "mmhub_v3_0.c", "MMVM"),
        (&MMHUB_4_1_0, "mmhub_v4_1_0.c", "MMVM"),
    ] {
        for (n, ours) in [
            (3, hub.l2_cntl3_default),
            (4, hub.l2_cntl4_default),
            (5, hub.l2_cntl5_default),
        ] {
            let name = format!("reg{vm}_L2_CNTL{n}_DEFAULT");
            assert_eq!(ours, define(file, &name), "{} {name}", hub.name);
        }
    }
}

// ---- TLB invalidation on all four hubs -----------------------------------
//
// Expected offsets and request values are parsed from each hub's Linux
// 6.12 `_offset.h` and `_sh_mask.h` text, not taken from the runtime's
// tables or its request encoder.

mod invalidation {
    use super::*;
    use barebell::gmc::hub::invalidate::{INVALIDATE_TIMEOUT_NS, InvalidateError};
    use barebell::gmc::hub::{GART_ENGINE, invalidate};
    use std::sync::Mutex;

    /// A `#define` of a `_offset.h`/`_sh_mask.h` in the extracted tree.
    fn header(file: &str, name: &str) -> u32 {
        let dir = if file.starts_with("gc_") {
            "gc"
        } else {
            "mmhub"
        };
        let path = format!(
            "{}/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/include/asic_reg/{dir}/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"));
        let line = text
            .lines()
            .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("{name} not in {file}"));
        let v = line.split_whitespace().nth(2).unwrap();
        u32::from_str_radix(v.trim_start_matches("0x").trim_end_matches('L'), 16).unwrap()
    }

    /// What the header text says about one hub's engine 17.
    struct Expect {
        vm: &'static str,
        sem: usize,
        req: usize,
        ack: usize,
        cid2: usize,
        private_bit: u32,
        /// The request for `vmid` and `flush_type` as
        /// `*_get_invalidate_req()` composes it, from the masks.
        req_value: Box<dyn Fn(u32, u32) -> u32>,
    }

    fn expect(c: &Case) -> Expect {
        let (base, vm) = match c.hub.hw_id {
            hw_id::GC => ("gc", "GCVM"),
            _ => ("mmhub", "MMVM"),
        };
        let file = match (base, c.gfx12) {
            ("gc", false) => "gc_11_0_0",
            ("gc", true) => "gc_12_0_0",
            (_, false) => "mmhub_3_0_0",
            (_, true) => "mmhub_4_1_0",
        };
        let off = format!("{file}_offset.h");
        let sh = format!("{file}_sh_mask.h");
        let b = c.bases();
        let at = |name: String| ((b.0[0] + header(&off, &name)) * 4) as usize;
        let m = |field: &str| header(&sh, &format!("{vm}_INVALIDATE_ENG0_REQ__{field}_MASK"));
        let s = |field: &str| header(&sh, &format!("{vm}_INVALIDATE_ENG0_REQ__{field}__SHIFT"));
        let fixed = m("INVALIDATE_L2_PTES")
            | m("INVALIDATE_L2_PDE0")
            | m("INVALIDATE_L2_PDE1")
            | m("INVALIDATE_L2_PDE2")
            | m("INVALIDATE_L1_PTES");
        let (vm_mask, vm_shift) = (m("PER_VMID_INVALIDATE_REQ"), s("PER_VMID_INVALIDATE_REQ"));
        let (ft_mask, ft_shift) = (m("FLUSH_TYPE"), s("FLUSH_TYPE"));
        Expect {
            vm,
            sem: at(format!("reg{vm}_INVALIDATE_ENG17_SEM")),
            req: at(format!("reg{vm}_INVALIDATE_ENG17_REQ")),
            ack: at(format!("reg{vm}_INVALIDATE_ENG17_ACK")),
            cid2: at(format!("reg{vm}_L2_BANK_SELECT_RESERVED_CID2")),
            private_bit: header(
                &sh,
                &format!(
                    "{vm}_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK"
                ),
            ),
            req_value: Box::new(move |vmid, flush| {
                ((1 << vmid) << vm_shift) & vm_mask | (flush << ft_shift) & ft_mask | fixed
            }),
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Op {
        R(usize, u32),
        W(usize, u32),
    }

    /// The hub model with every access logged.
    struct Recorder<'a> {
        hub: &'a HubModel,
        log: Mutex<Vec<Op>>,
    }

    impl RegisterBus for Recorder<'_> {
        fn read32(&self, o: usize) -> u32 {
            let v = self.hub.read32(o);
            self.log.lock().unwrap().push(Op::R(o, v));
            v
        }
        fn write32(&self, o: usize, v: u32) {
            self.log.lock().unwrap().push(Op::W(o, v));
            self.hub.write32(o, v)
        }
    }

    fn enabled(c: &Case, clock: &'static SimClock) -> (&'static HubModel, IpBases, Dma) {
        let b = c.bases();
        let hub: &'static HubModel = Box::leak(Box::new(HubModel::for_hub(clock, b, c.hub)));
        let (root, dma) = c.tables();
        gart_enable(hub, &b, c.hub, &config(root)).unwrap();
        (hub, b, dma)
    }

    fn clock() -> &'static SimClock {
        Box::leak(Box::new(SimClock::new()))
    }

    fn mmhub(c: &Case) -> bool {
        c.hub.hw_id == hw_id::MMHUB
    }

    #[test]
    fn every_hub_flushes_vmid0_on_engine_17_as_linux_does() {
        for c in &CASES {
            let clock = clock();
            let (hub, b, dma) = enabled(c, clock);
            let e = expect(c);
            let name = c.hub.name;
            // gart_enable wrote VMID0's base: a walk now could hit a
            // stale TLB, and the model counts it.
            assert!(hub.stale(0), "{name}");
            hub.translate(&dma, 0x40_0000, Access::Read).unwrap();
            assert_eq!(hub.stale_walks(), 1, "{name}");

            let rec = Recorder {
                hub,
                log: Mutex::new(Vec::new()),
            };
            invalidate(&rec, clock, &b, c.hub, GART_ENGINE, 0, 0).unwrap();
            let log = rec.log.into_inner().unwrap();
            let req = Op::W(e.req, (e.req_value)(0, 0));
            let req_at = log.iter().position(|o| *o == req);
            assert!(req_at.is_some(), "{name}: no {req:x?} in {log:x?}");
            let req_at = req_at.unwrap();
            // The ACK read that saw bit 0 comes after the request.
            let acked = log
                .iter()
                .position(|o| matches!(o, Op::R(a, v) if *a == e.ack && v & 1 != 0))
                .unwrap_or_else(|| panic!("{name}: ACK never seen: {log:x?}"));
            assert!(acked > req_at, "{name}");
            let sem_reads: Vec<_> = log
                .iter()
                .enumerate()
                .filter(|(_, o)| matches!(o, Op::R(a, _) if *a == e.sem))
                .collect();
            let sem_release = log.iter().position(|o| *o == Op::W(e.sem, 0));
            let cid2 = log
                .iter()
                .position(|o| matches!(o, Op::W(a, v) if *a == e.cid2 && v & e.private_bit != 0));
            let s = hub.invalidations();
            if mmhub(c) {
                // Acquired (read 1) before the request, released after the ACK.
                assert_eq!(sem_reads.len(), 1, "{name}: {log:x?}");
                assert_eq!(*sem_reads[0].1, Op::R(e.sem, 1), "{name}");
                assert!(sem_reads[0].0 < req_at, "{name}");
                assert!(sem_release.unwrap() > acked, "{name}");
                // Private invalidation after the release, then a read back.
                let cid2 = cid2.unwrap_or_else(|| panic!("{name}: no CID2 write: {log:x?}"));
                assert!(cid2 > sem_release.unwrap(), "{name}");
                assert!(
                    matches!(log.last(), Some(Op::R(a, _)) if *a == e.cid2),
                    "{name}"
                );
                assert_eq!((s.acquires, s.releases, s.private_invalidations), (1, 1, 1));
            } else {
                assert!(sem_reads.is_empty() && sem_release.is_none(), "{name}");
                assert!(cid2.is_none(), "{name}");
                assert_eq!((s.acquires, s.releases, s.private_invalidations), (0, 0, 0));
            }
            assert!(!hub.semaphore_held(17), "{name}");
            assert_eq!((s.accepted, s.refused, s.completed[0]), (1, 0, 1), "{name}");
            assert!(!hub.stale(0), "{name}");
            hub.translate(&dma, 0x40_0000, Access::Read).unwrap();
            assert_eq!(
                hub.stale_walks(),
                1,
                "{name}: flushed, so no new stale walk"
            );
            assert!(e.vm.ends_with("VM"));
        }
    }

    #[test]
    fn flush_type_lands_in_its_field_except_on_mmhub_4_1() {
        for c in &CASES {
            let clock = clock();
            let (hub, b, _) = enabled(c, clock);
            let e = expect(c);
            invalidate(hub, clock, &b, c.hub, GART_ENGINE, 5, 2).unwrap();
            // mmhub_v4_1_0_get_invalidate_req(): "Only use legacy inv on
            // mmhub side" -- FLUSH_TYPE 0 whatever the caller asks.
            let flush = if std::ptr::eq(c.hub, &MMHUB_4_1_0) {
                0
            } else {
                2
            };
            assert_eq!(
                hub.invalidations().last_request[17],
                (e.req_value)(5, flush),
                "{}",
                c.hub.name
            );
            assert_eq!(hub.invalidations().completed[5], 1, "{}", c.hub.name);
        }
    }

    #[test]
    fn an_ack_that_never_comes_is_a_typed_timeout_naming_the_ack() {
        for c in &CASES {
            let clock = clock();
            let (hub, b, _) = enabled(c, clock);
            let e = expect(c);
            hub.never_ack();
            match invalidate(hub, clock, &b, c.hub, GART_ENGINE, 3, 0) {
                Err(InvalidateError::AckTimeout {
                    register,
                    engine,
                    vmid,
                    waited_ns,
                    ..
                }) => {
                    assert_eq!(register, format!("{}_INVALIDATE_ENG0_ACK", e.vm));
                    assert_eq!((engine, vmid), (17, 3));
                    assert!(waited_ns >= INVALIDATE_TIMEOUT_NS);
                }
                other => panic!("{}: {other:?}", c.hub.name),
            }
            // Linux releases the semaphore even then.
            assert!(!hub.semaphore_held(17), "{}", c.hub.name);
            let s = hub.invalidations();
            assert_eq!(s.releases, s.acquires, "{}", c.hub.name);
            assert_eq!(s.private_invalidations, 0, "{}", c.hub.name);
        }
    }

    #[test]
    fn a_semaphore_never_granted_is_a_typed_timeout_and_no_request() {
        for c in CASES.iter().filter(|c| mmhub(c)) {
            let clock = clock();
            let (hub, b, _) = enabled(c, clock);
            hub.never_grant_semaphore();
            match invalidate(hub, clock, &b, c.hub, GART_ENGINE, 0, 0) {
                Err(InvalidateError::SemaphoreTimeout {
                    register,
                    engine,
                    waited_ns,
                }) => {
                    assert_eq!(register, "MMVM_INVALIDATE_ENG0_SEM");
                    assert_eq!(engine, 17);
                    assert!(waited_ns >= INVALIDATE_TIMEOUT_NS);
                }
                other => panic!("{}: {other:?}", c.hub.name),
            }
            let s = hub.invalidations();
            assert_eq!((s.accepted, s.refused, s.last_request[17]), (0, 0, 0));
        }
    }

    #[test]
    fn the_model_refuses_requests_without_vmid_and_counts_those_without_semaphore() {
        for c in &CASES {
            let clock = clock();
            let (hub, _, _) = enabled(c, clock);
            let e = expect(c);
            // A request with no VMID bit: refused on every hub.
            hub.write32(e.req, (e.req_value)(0, 0) & !1);
            // A well-formed request written straight to the register,
            // without taking the semaphore.
            hub.write32(e.req, (e.req_value)(0, 0));
            for _ in 0..10 {
                hub.read32(e.ack);
            }
            let s = hub.invalidations();
            // Served either way (Linux's MES and KIQ flushes take no
            // semaphore, gmc_v11_0_flush_gpu_tlb()); on the MMHUB, counted.
            assert_eq!((s.refused, s.accepted), (1, 1), "{}", c.hub.name);
            assert_eq!(s.without_semaphore, u32::from(mmhub(c)), "{}", c.hub.name);
            assert_eq!(hub.read32(e.ack) & 1, 1, "{}", c.hub.name);
        }
    }

    #[test]
    fn a_user_context_base_write_is_stale_until_that_vmid_is_flushed() {
        for c in &CASES {
            let clock = clock();
            let (hub, b, _) = enabled(c, clock);
            let name = c.hub.name;
            invalidate(hub, clock, &b, c.hub, GART_ENGINE, 0, 0).unwrap();
            // VMID 8's base: CONTEXT1's pair plus 7 pairs (the header's
            // CONTEXT8 - CONTEXT1 distance).
            let file = match (c.hub.hw_id, c.gfx12) {
                (hw_id::GC, false) => "gc_11_0_0",
                (hw_id::GC, true) => "gc_12_0_0",
                (_, false) => "mmhub_3_0_0",
                (_, true) => "mmhub_4_1_0",
            };
            let vm = expect(c).vm;
            let ctx8 = header(
                &format!("{file}_offset.h"),
                &format!("reg{vm}_CONTEXT8_PAGE_TABLE_BASE_ADDR_LO32"),
            );
            hub.write32(((b.0[0] + ctx8) * 4) as usize, 0x1000 | 1);
            assert!(hub.stale(8) && !hub.stale(0), "{name}");
            invalidate(hub, clock, &b, c.hub, GART_ENGINE, 7, 0).unwrap();
            assert!(hub.stale(8), "{name}: another VMID's flush leaves it stale");
            invalidate(hub, clock, &b, c.hub, GART_ENGINE, 8, 0).unwrap();
            assert!(!hub.stale(8), "{name}");
        }
    }

    /// The PSP rig (what the PSP tests and the unikernel boot) flushes
    /// its MMHUB's VMID0 after `gart_enable`, semaphore and all.
    #[test]
    fn the_psp_rig_flushes_its_mmhub() {
        use barebell_model_host::psp_rig as rig;
        for part in [rig::navi31(), rig::navi48()] {
            let r = rig::rig(std::path::Path::new("/lib/firmware/amdgpu"), &part, |_| {})
                .unwrap_or_else(|e| panic!("{e} (firmware-amd-graphics)"));
            let s = r.hub.invalidations();
            let name = r.hub_regs.name;
            assert_eq!(s.completed[0], 1, "{name}");
            assert_eq!((s.acquires, s.releases, s.refused), (1, 1, 0), "{name}");
            assert_eq!(s.private_invalidations, 1, "{name}");
            assert!(!r.hub.stale(0), "{name}");
        }
    }

    #[test]
    fn device_gone_bad_arguments_and_missing_bases_are_typed() {
        for c in &CASES {
            let clock = clock();
            let (hub, b, _) = enabled(c, clock);
            let e = expect(c);
            for (engine, vmid, flush_type) in [(18, 0, 0), (17, 16, 0), (17, 0, 8)] {
                assert_eq!(
                    invalidate(hub, clock, &b, c.hub, engine, vmid, flush_type),
                    Err(InvalidateError::BadArgument {
                        engine,
                        vmid,
                        flush_type
                    })
                );
            }
            assert!(matches!(
                // A base whose offsets overflow: nothing resolves.
                invalidate(hub, clock, &IpBases::new(&[u32::MAX; 8]), c.hub, 17, 0, 0),
                Err(InvalidateError::Register { engine: 17, .. })
            ));
            hub.unplug();
            // The first register read: the semaphore on the MMHUB, the
            // ACK on the GFXHUB.
            let first = if mmhub(c) { "SEM" } else { "ACK" };
            match invalidate(hub, clock, &b, c.hub, GART_ENGINE, 0, 0) {
                Err(InvalidateError::DeviceGone { register, engine }) => {
                    assert_eq!(register, format!("{}_INVALIDATE_ENG0_{first}", e.vm));
                    assert_eq!(engine, 17);
                }
                other => panic!("{}: {other:?}", c.hub.name),
            }
        }
    }
}
