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
use barebell::gmc::{Flags, Format, Table, TableArena};
use barebell::hub::{HubConfig, HubError, gfxhub_gart_enable};
use barebell::regs::IpBases;
use barebell_sim::SimClock;
use barebell_sim::discovery::{self as sim, NAVI31};
use barebell_sim::dma::Dma;
use barebell_sim::gmc::{Access, FaultReason};
use barebell_sim::hub::{HubModel, HubRefusal};

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
    let mut a = TableArena::new(t, base, Format::Gfx11);
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
    use barebell::hub::{GFXHUB_3_0, clear_fault, read_fault};
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
