//! MI300's IH (OSSSYS 4.4.2, `vega20_ih.c`): the runtime's ring-0 setup
//! against the model's IH at the OSSSYS bases of the model's MI300X
//! discovery table, and a gfx9 VM fault the model writes, read back and
//! decoded by the runtime.
//!
//! Expected values by hand: `vega20_ih_rb_cntl()` for a 64 KiB ring at
//! an MC address: `MC_SPACE` 4 (bits 30:28), `WPTR_OVERFLOW_ENABLE` (16),
//! `RB_SIZE` log2(16384 dwords) = 14 (bits 5:1), `WPTR_WRITEBACK_ENABLE`
//! (8), `MC_SNOOP` (20), plus `RB_GPU_TS_ENABLE` (7) and `RB_ENABLE` (0)
//! from `vega20_ih_toggle_ring_interrupts(true)`, `WPTR_OVERFLOW_CLEAR`
//! (31) left clear after its pulse: 0x4011_019D. `IH_CHICKEN` is 0x18D
//! (`mmIH_CHICKEN_ALDEBARAN` in `vega20_ih.c`). A GFXHUB fault on gfx9 is
//! client `SOC15_IH_CLIENTID_UTCL2` 0x1B (`gmc_v9_0_process_interrupt()`).

use barebell::discovery::{Discovery, hw_id};
use barebell::ih::{FaultHub, IhMemory, IhRegs, IhRing, Interrupt, IvEntry as RtEntry, ih_v4_4_2};
use barebell::regs::IpBases;
use barebell_model::SimClock;
use barebell_model::discovery::{self as sim, MI300X};
use barebell_model::hub::HubModel;
use barebell_model::ih::{IhModel, IvEntry, Raised};
use barebell_model::mc::Mc;
use barebell_model::soc::RefusalLog;
use std::ptr::NonNull;
use std::sync::Arc;

const RING: usize = 64 << 10;
/// The MC address the ring sits at: the start of the model hub's system
/// aperture (a rig value).
const MC: u64 = 0x4_0000;

fn osssys() -> IpBases {
    let (bin, _) = sim::build(&MI300X);
    let d = Discovery::parse(&bin).unwrap();
    let ip = d.ip(hw_id::OSSSYS, 0).unwrap();
    assert_eq!(ip.version.triple(), (4, 4, 2));
    ip.bases
}

/// The IH model with a path to `mem` at [`MC`]: a hub whose VMID0 system
/// aperture covers it (the memory path is rig, not under test; the MI300
/// device wires its own MMHUB 1.8).
fn model(clock: &SimClock, bases: &IpBases, mem: &mut [u64]) -> (IhModel, Arc<RefusalLog>) {
    let log = Arc::new(RefusalLog::new());
    let ih = IhModel::new(clock, (4, 4, 2), bases, log.clone()).expect("OSSSYS 4.4.2 model");
    let hub_regs = &barebell::regs::hub::MMHUB_3_0_0;
    let hub_bases = IpBases::new(&[0x1A000, 0x2408800, 0, 0, 0, 0, 0, 0]);
    let hub = Arc::new(HubModel::for_hub(clock, hub_bases, hub_regs));
    use barebell::bus::RegisterBus;
    let at = |r: barebell::regs::Reg| r.byte_offset(&hub_bases).unwrap();
    hub.write32(at(hub_regs.ctx0_cntl), 1);
    hub.write32(at(hub_regs.aperture_low), (MC >> 18) as u32);
    hub.write32(at(hub_regs.aperture_high), (MC >> 18) as u32 + 1);
    let mut mc = Mc::new(hub, barebell_model::ih::CID_OSSSYS);
    // SAFETY: `mem` outlives the model in each test (both dropped at its
    // end), and nothing else writes it while the model runs.
    unsafe { mc.back_vram(0, mem.as_mut_ptr().cast(), (mem.len() * 8) as u64) };
    ih.connect(mc);
    (ih, log)
}

#[test]
fn ring_zero_is_programmed_as_vega20_ih_does_and_a_gfx9_fault_round_trips() {
    let clock = SimClock::new();
    let bases = osssys();
    let mut mem = vec![0u64; (RING + 4096) / 8];
    let host = NonNull::new(mem.as_mut_ptr().cast::<u8>()).unwrap();
    let len = mem.len() * 8;
    let (ih, log) = model(&clock, &bases, &mut mem);

    // Before: the old runtime had no table for OSSSYS 4.4.2.
    let regs = IhRegs::for_version((4, 4, 2)).unwrap();
    assert_eq!(regs.name, "OSSSYS 4.4.2 (vega20_ih)");
    // vega20_ih.c drives Aldebaran's OSSSYS 4.4.0 with the same table.
    assert_eq!(IhRegs::for_version((4, 4, 0)), Some(regs));
    assert!(IhRegs::for_version((4, 2, 0)).is_none());

    // SAFETY: `mem` is this test's, the model writes it only through the
    // ring it was told about, and it outlives the ring.
    let memory = unsafe { IhMemory::new(host, len, MC) }.unwrap();
    let mut ring = IhRing::init(&ih, &bases, regs, memory).unwrap();
    assert!(log.is_empty(), "{:?}", log.since(0));
    use barebell::bus::RegisterBus;
    // IH_RB_CNTL at OSSSYS segment 0 (0x10A0) + 0x80, by hand.
    assert_eq!(ih.read32((0x10A0 + 0x80) * 4), 0x4011_019D);
    // IH_RB_BASE (0x81) = MC >> 8, IH_DOORBELL_RPTR (0x87) = 0.
    assert_eq!(ih.read32((0x10A0 + 0x81) * 4), (MC >> 8) as u32);
    assert_eq!(ih.read32((0x10A0 + 0x87) * 4), 0);
    let rings = ih.rings();
    assert_eq!(rings.len(), 1);
    assert_eq!(
        (rings[0].base, rings[0].bytes, rings[0].mc_space),
        (MC, RING as u64, 4)
    );

    // A GFXHUB fault of XCC node 5 (AID 1, XCD 0), VMID 3, write, at
    // 0x7_0000_1000.
    let e = IvEntry::vm_fault_v9(false, 3, 0x7_0000_1000, true, 5);
    assert_eq!(e.client_id, 0x1B);
    assert_eq!(ih.raise(e), Raised::Written { offset: 0 });
    let mut got = Vec::new();
    let p = ring.poll(&ih, |i| got.push(i)).unwrap();
    assert_eq!(p.entries, 1);
    match got.as_slice() {
        [Interrupt::VmFault(v)] => {
            assert_eq!(v.hub, FaultHub::Gfx);
            assert_eq!(v.addr, 0x7_0000_1000);
            assert_eq!(v.vmid, 3);
            assert!(v.write && !v.retry);
            assert_eq!(v.client_id, 0x1B);
        }
        other => panic!("{other:?}"),
    }
    // The soc21 decoder (the old path) does not know client 0x1B as a fault.
    let raw = {
        let w: Vec<u32> = mem[..4]
            .iter()
            .flat_map(|q| [*q as u32, (*q >> 32) as u32])
            .collect();
        RtEntry::decode(&w.try_into().unwrap())
    };
    assert_eq!(raw.node_id, 5);
    assert!(matches!(Interrupt::from_entry(&raw), Interrupt::Other(_)));
    assert!(matches!(ih_v4_4_2::decode(&raw), Interrupt::VmFault(_)));
    // An MMHUB fault (client VMC) decodes as the MMHUB's.
    assert_eq!(
        ih.raise(IvEntry::vm_fault_v9(true, 0, 0x1000, false, 0)),
        Raised::Written { offset: 32 }
    );
    got.clear();
    ring.poll(&ih, |i| got.push(i)).unwrap();
    assert!(
        matches!(got.as_slice(), [Interrupt::VmFault(v)] if v.hub == FaultHub::Mm && v.addr == 0x1000)
    );
    ring.disable(&ih).unwrap();
    assert!(ih.rings().is_empty());
    drop(ih);
    drop(mem);
}

/// `vega20_ih_rb_cntl()` writes `MC_SPACE` 1 for a ring at a bus address,
/// soc21's IH 2: the 4.4.2 model refuses 2 (logged), takes 1 and 4.
#[test]
fn the_4_4_2_model_refuses_soc21s_bus_address_space() {
    let clock = SimClock::new();
    let bases = osssys();
    let log = Arc::new(RefusalLog::new());
    let ih = IhModel::new(&clock, (4, 4, 2), &bases, log.clone()).unwrap();
    use barebell::bus::RegisterBus;
    let cntl = (0x10A0 + 0x80) * 4;
    // RB_ENABLE, RB_SIZE 14, MC_SPACE 2.
    ih.write32(cntl, 1 | 14 << 1 | 2 << 28);
    assert_eq!(log.len(), 1, "{:?}", log.since(0));
    assert!(log.since(0)[0].why.contains("MC_SPACE 2"));
    ih.write32(cntl, 0);
    ih.write32(cntl, 1 | 14 << 1 | 1 << 28);
    assert_eq!(log.len(), 1);
}

/// MI300X's Linux 6.12 programs ring 0 at a bus address (`MC_SPACE` 1,
/// `vega20_ih_rb_cntl()` with `use_bus_addr`): the entry and the
/// write-pointer write-back go to those bus addresses through the IOMMU,
/// past the VM. Before: every entry was refused ("MC_SPACE is 1"), so no
/// interrupt reached the Linux peer's guest.
#[test]
fn a_ring_at_a_bus_address_is_written_through_the_iommu() {
    use barebell::bus::RegisterBus;
    let clock = SimClock::new();
    let bases = osssys();
    let mut mem = vec![0u64; 4096 / 8];
    let mut sys = vec![0u64; 8192 / 8];
    let (ih, _) = model(&clock, &bases, &mut mem);
    let bus = 0x1_2340_0000u64;
    let mut mc = Mc::new(
        Arc::new(HubModel::for_hub(
            &clock,
            IpBases::new(&[0x1A000, 0x2408800, 0, 0, 0, 0, 0, 0]),
            &barebell::regs::hub::MMHUB_3_0_0,
        )),
        barebell_model::ih::CID_OSSSYS,
    );
    // SAFETY: `sys` outlives the model (both dropped at the test's end).
    unsafe { mc.map_bus(bus, sys.as_mut_ptr().cast(), 8192) };
    ih.connect(mc);
    let r = |i: usize| (0x10A0 + i) * 4;
    // IH_RB_BASE (0x81) = bus >> 8, the write-back (`IH_RB_WPTR_ADDR_LO`
    // 0x86, `_HI` 0x85, osssys_4_4_2_offset.h) 4 KiB on,
    // then IH_RB_CNTL: RB_ENABLE, RB_SIZE 7 (128 dwords), write-back,
    // ENABLE_INTR, MC_SPACE 1.
    ih.write32(r(0x81), (bus >> 8) as u32);
    ih.write32(r(0x82), (bus >> 40) as u32);
    let wb = bus + 4096;
    ih.write32(r(0x86), wb as u32);
    ih.write32(r(0x85), (wb >> 32) as u32);
    ih.write32(r(0x80), 1 | 7 << 1 | 1 << 8 | 1 << 17 | 1 << 28);
    let e = IvEntry::cp_eop_v9(1, (1, 0, 0), 0);
    assert_eq!(
        ih.raise(e),
        Raised::Written { offset: 0 },
        "{:?}",
        ih.summary()
    );
    let first = sys[0] as u32;
    assert_eq!(
        first & 0xFF,
        0x14,
        "client GRBM_CP in the entry's first byte"
    );
    assert_eq!(sys[512] as u32, 32, "the write pointer, written back");
    assert_eq!(ih.take_interrupts(), 1);
}

/// SDMA 4.4.2's trap as `sdma_v4_4_2_process_trap_irq()` reads it back:
/// the client gives the instance within its AID
/// (`sdma_v4_4_2_irq_id_to_seq()`: SDMA0..3 = 0x08, 0x09, 0x01, 0x04 in
/// `soc15_ih_clientid.h`), the node its AID (`node_id_to_phys_map`:
/// `AID0_NODEID` 0, `AID1_NODEID` 4, `AID2_NODEID` 8, `AID3_NODEID` 12 in
/// `amdgpu_irq.h`), ring 0 the GFX queue; the source is
/// `SDMA0_4_0__SRCID__SDMA_TRAP` (224). And GC 9.4.3's end-of-pipe entry
/// carries its XCC's node (`XCD0_NODEID` 1 .. `XCD7_NODEID` 14), which
/// `gfx_v9_4_3_ih_to_xcc_inst()` maps back.
#[test]
fn sdma_traps_and_eop_entries_name_their_instance_as_linux_reads_it() {
    let seq = |client: u8| [0x08u8, 0x09, 0x01, 0x04].iter().position(|c| *c == client);
    let aid = |node: u8| [0u8, 4, 8, 12].iter().position(|n| *n == node);
    for instance in 0..16usize {
        let e = IvEntry::sdma_trap_v4_4_2(instance, 7);
        assert_eq!((e.src_id, e.ring_id, e.src_data[0]), (224, 0, 7));
        let back = seq(e.client_id).unwrap() + 4 * aid(e.node_id).unwrap();
        assert_eq!(back, instance);
    }
    for xcc in 0..8usize {
        let e = IvEntry::cp_eop_v9(xcc, (1, 2, 3), 0);
        // hweight8(0xFF & GENMASK(node / 2, 0)) - 1.
        let back = (0xFFu32 & ((2u32 << (e.node_id / 2)) - 1)).count_ones() - 1;
        assert_eq!(back as usize, xcc);
        assert_eq!(e.ring_id, 2 | 1 << 2 | 3 << 4);
    }
}
