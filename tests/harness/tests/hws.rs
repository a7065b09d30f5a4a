//! The HWS (CPSCH) path: runlists the runtime builds, sent on a HIQ ring
//! to the model's HWS (`barebell_model::hws`), which decodes them with its
//! own code. Expected VMIDs, masks and queues are written by hand from
//! KFD's semantics (`kfd_device_queue_manager.c`, `kfd_packet_manager*.c`,
//! `gmc_v9_0_sw_init()`), not taken from either side.

use barebell::aql::doorbell::Doorbell;
use barebell::gfx::hws::packets::{self, ProcessDesc, QueueDesc, SchedulingResources, UnmapFilter};
use barebell::gfx::hws::runlist::{self, ProcessQueues, RunlistConfig};
use barebell::gfx::hws::{HiqMemory, HiqRing, Hws, HwsError};
use barebell::mem::Dev;
use barebell_model::TickingClock;
use barebell_model::dma::Dma;
use barebell_model::hws::{
    HwsConfig, HwsEvent, HwsModel, HwsRefusal, MappedQueue, MecQueue, QueueEngine, SdmaEngines,
};
use std::ptr::NonNull;

const RING: usize = 256;
/// Dwords of scratch device memory: doorbell slot, fences, IBs, MQDs.
const ARENA: usize = 16 * 1024;
/// Where in the arena things go (dword offsets).
const IB_AT: usize = 1024;
const MQD_AT: usize = 8192;
const WPTR_AT: usize = 12288;
/// A root page directory as `amdgpu_gmc_pd_addr()` returns it for VRAM:
/// a page address | AMDGPU_PTE_VALID.
const PD: u64 = 0x0000_0080_0010_0000 | 1;
/// `CP_MEC_DOORBELL_RANGE` as `gfx_v9_4_3_xcc_kiq_init_register()`
/// programs it on XCC 0: `(KIQ_START * 2) << 2` = 0 and
/// `(USERQUEUE_END * 2) << 2` = 0x1F * 8 = 0xF8.
/// KFD's VMIDs on GC 9.4.3: `first_kfd_vmid` 3 (`gmc_v9_0_sw_init()`),
/// so `compute_vmid_bitmap` = 0xFFFF - 0x7.
const VMID_MASK: u16 = 0xFFF8;
/// amdgpu keeps MEC 0 pipe 0 queue 0 for its kernel compute queue; KFD
/// gets the other 31 slots of 4 pipes × 8 queues, at bit pipe * 8 + queue.
const AMDGPU_QUEUES: u64 = 1;
const QUEUE_MASK: u64 = 0xFFFF_FFFE;

type Client = Hws<'static, TickingClock, Box<dyn FnMut()>, RING>;

struct Rig {
    model: &'static HwsModel,
    hws: Client,
    arena: &'static mut [u32],
    base: u64,
}

impl Rig {
    fn addr(&self, dword: usize) -> u64 {
        self.base + dword as u64 * 4
    }
    fn mqd(&self, i: usize) -> u64 {
        self.addr(MQD_AT + i * 256)
    }
    fn wptr(&self, i: usize) -> u64 {
        self.addr(WPTR_AT + i * 2)
    }
    fn ib(&mut self) -> (&mut [u32], u64) {
        let a = self.addr(IB_AT);
        (&mut self.arena[IB_AT..MQD_AT], a)
    }
    fn refused(&self) -> HwsRefusal {
        let r = self.model.refusal().expect("the model refused nothing");
        assert!(matches!(
            self.model.log().last(),
            Some(HwsEvent::Refused { why, .. }) if *why == r
        ));
        r
    }
}

fn new_rig() -> Rig {
    let hiq: &'static HiqMemory<RING> = Box::leak(Box::new(HiqMemory::new()));
    let arena: &'static mut [u32] = Box::leak(vec![0u32; ARENA].into_boxed_slice());
    // 8-byte alignment for the doorbell slot and fences: start at an even dword.
    let base = arena.as_ptr() as u64;
    assert_eq!(base % 8, 0);
    let mut dma = Dma::default();
    // SAFETY: both ranges are leaked, so live for the rest of the test
    // process; the model and the client touch them with atomics or after
    // the doorbell's release store.
    unsafe {
        dma.map(
            hiq.ring_address(),
            std::mem::size_of::<HiqMemory<RING>>() as u64,
        );
        dma.map(base, (ARENA * 4) as u64);
    }
    let dma: &'static Dma = Box::leak(Box::new(dma));
    let model: &'static HwsModel = Box::leak(Box::new(HwsModel::new(HwsConfig {
        ring: hiq.ring_address(),
        ring_dwords: RING as u64,
        doorbell: base,
        map_process_dwords: 21,
    })));
    // SAFETY: `base` is the first 8 bytes of the leaked arena, 8-aligned,
    // read by the model only atomically.
    let doorbell = unsafe { Doorbell::from_ptr(NonNull::new(base as *mut u64).unwrap()) }.unwrap();
    // SAFETY: `hiq` is leaked and mapped into the model's memory at its
    // host address.
    let memory = unsafe { Dev::assume(hiq) };
    let pause: Box<dyn FnMut()> = Box::new(move || {
        model.service(dma);
    });
    let mut hws = Hws::new(
        HiqRing { memory, doorbell },
        TickingClock::new(1_000),
        pause,
    )
    .unwrap();
    hws.timeout_ns = 2_000_000;
    Rig {
        model,
        hws,
        arena,
        base,
    }
}

fn cfg() -> RunlistConfig {
    RunlistConfig::gc_9_4_3(0, AMDGPU_QUEUES)
}

fn resources(rig: &mut Rig) {
    let vmids = runlist::compute_vmid_bitmap(runlist::FIRST_KFD_VMID_GC_9_4_3);
    let mask = runlist::queue_mask(4, 8, AMDGPU_QUEUES);
    rig.hws
        .set_resources(&SchedulingResources::kfd(vmids, mask))
        .unwrap();
    let r = rig.model.resources().unwrap();
    assert_eq!(r.vmid_mask, VMID_MASK);
    assert_eq!(r.queue_mask, QUEUE_MASK);
    assert_eq!(r.gws_mask, !0);
    // KFD_UNMAP_LATENCY_MS = (9000 - 900) >> 1 = 4050 ms, sent / 100.
    assert_eq!(r.unmap_latency, 40);
}

/// Doorbell dword offsets of 8-byte doorbells 0x10.. (AMDGPU_DOORBELL_LAYOUT1_USERQUEUE_START).
fn db(i: u32) -> u32 {
    (0x10 + i) * 2
}

#[test]
fn one_process_one_queue_maps_with_the_first_kfd_vmid() {
    let mut rig = new_rig();
    resources(&mut rig);
    let q = [QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0))];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(0x8001, PD),
        queues: &q,
    }];
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    rig.hws.run_list(&rl).unwrap();
    let st = rig.model.runlist().unwrap();
    // One aldebaran MAP_PROCESS (21) + one MAP_QUEUES (7).
    assert_eq!(
        (st.ib, st.ib_dwords, st.process_cnt, st.loops),
        (at, 28, 1, false)
    );
    assert_eq!(
        rig.model.mec_queues(),
        vec![MecQueue {
            mqd: rig.mqd(0),
            doorbell_offset: 0x20,
            vmid: 3,
            pasid: 0x8001,
            wptr: rig.wptr(0),
        }]
    );
    assert_eq!(rig.model.atc_vmid_pasid_mapping(3), 0x8000_0000 | 0x8001);
    assert_eq!(rig.model.atc_vmid_pasid_mapping(4), 0);
    assert!(!rig.model.is_halted());
}

#[test]
fn several_processes_and_queues_get_vmids_in_runlist_order() {
    let mut rig = new_rig();
    resources(&mut rig);
    let a = [
        QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0)),
        QueueDesc::compute(db(1), rig.mqd(1), rig.wptr(1)),
    ];
    let b: [QueueDesc; 0] = [];
    let c = [
        QueueDesc::compute(db(2), rig.mqd(2), rig.wptr(2)),
        // SDMA engine 1 queue 0: KFD's doorbell index 0x10A aligned up
        // to 0x10C (allocate_doorbell() on GC 9.4.3 in the Debian 6.12
        // source; upstream leaves 0x10A, also engine 1's), dword 0x218.
        QueueDesc {
            engine: packets::Engine::Sdma { id: 1 },
            ..QueueDesc::compute(0x218, rig.mqd(3), rig.wptr(3))
        },
    ];
    // Its v9 SDMA MQD as update_mqd_sdma() fills it (4 KiB ring: RB_SIZE
    // 10; doorbell at dword 22, engine id at 126).
    let m = MQD_AT + 3 * 256;
    rig.arena[m] = 10 << 1 | 1 << 12 | 6 << 16;
    rig.arena[m + 1] = 0x100;
    rig.arena[m + 22] = 0x218 << 2;
    rig.arena[m + 126] = 1;
    rig.model.set_sdma(SdmaEngines::aqua_vanjaram(16));
    let procs = [
        ProcessQueues {
            process: ProcessDesc::new(11, PD),
            queues: &a,
        },
        ProcessQueues {
            process: ProcessDesc::new(12, PD + 0x1000),
            queues: &b,
        },
        ProcessQueues {
            process: ProcessDesc::new(13, PD + 0x2000),
            queues: &c,
        },
    ];
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg().with_sdma_engines(16), &procs, ib, at).unwrap();
    assert_eq!(rl.ib_dwords, 3 * 21 + 4 * 7);
    rig.hws.run_list(&rl).unwrap();
    let p = rig.model.processes();
    let got: Vec<(u16, Option<u8>, u16)> =
        p.iter().map(|p| (p.pasid, p.vmid, p.num_queues)).collect();
    assert_eq!(
        got,
        vec![(11, Some(3), 2), (12, Some(4), 0), (13, Some(5), 2)]
    );
    assert_eq!(p[1].page_table_base, PD + 0x1000);
    let mec: Vec<(u32, u8, u16)> = rig
        .model
        .mec_queues()
        .iter()
        .map(|q| (q.doorbell_offset, q.vmid, q.pasid))
        .collect();
    assert_eq!(mec, vec![(0x20, 3, 11), (0x22, 3, 11), (0x24, 5, 13)]);
    // The SDMA queue is mapped but is not the MEC's: SDMA1 through the
    // legacy engine select (engine_sel 3) on GC 9.4.3's SDMA 4.4.2.
    let sdma: Vec<MappedQueue> = rig
        .model
        .queues()
        .into_iter()
        .filter(|q| q.engine != QueueEngine::Compute)
        .collect();
    assert_eq!(sdma.len(), 1);
    assert_eq!(
        (sdma[0].engine, sdma[0].doorbell_offset),
        (QueueEngine::Sdma(1), 0x218)
    );
    assert_eq!(rig.model.atc_vmid_pasid_mapping(5), 0x8000_0000 | 13);
}

#[test]
fn over_subscribed_runlist_chains_back_and_the_rest_wait() {
    let mut rig = new_rig();
    resources(&mut rig);
    let q: Vec<[QueueDesc; 1]> = (0..3)
        .map(|i| {
            [QueueDesc::compute(
                db(i),
                rig.mqd(i as usize),
                rig.wptr(i as usize),
            )]
        })
        .collect();
    let procs: Vec<ProcessQueues<'_>> = (0..3)
        .map(|i| ProcessQueues {
            process: ProcessDesc::new(20 + i as u16, PD),
            queues: &q[i],
        })
        .collect();
    // hws_max_conc_proc = 2: two processes per quantum.
    let c = RunlistConfig {
        max_proc_per_quantum: 2,
        ..cfg()
    };
    let (ib, at) = rig.ib();
    let rl = runlist::build(&c, &procs, ib, at).unwrap();
    assert!(rl.over_subscribed);
    // 3 × 21 + 3 × 7 + the chained RUN_LIST (4).
    assert_eq!(rl.ib_dwords, 88);
    rig.hws.run_list(&rl).unwrap();
    let st = rig.model.runlist().unwrap();
    assert!(st.loops);
    assert_eq!((st.process_cnt, st.ibs), (2, 1));
    let vmids: Vec<Option<u8>> = rig.model.processes().iter().map(|p| p.vmid).collect();
    assert_eq!(vmids, vec![Some(3), Some(4), None]);
    assert_eq!(rig.model.mec_queues().len(), 2);
}

#[test]
fn unmap_queues_by_pasid_then_all() {
    let mut rig = new_rig();
    resources(&mut rig);
    let a = [QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0))];
    let b = [QueueDesc::compute(db(1), rig.mqd(1), rig.wptr(1))];
    let procs = [
        ProcessQueues {
            process: ProcessDesc::new(5, PD),
            queues: &a,
        },
        ProcessQueues {
            process: ProcessDesc::new(6, PD),
            queues: &b,
        },
    ];
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    rig.hws.run_list(&rl).unwrap();
    assert_eq!(rig.model.mec_queues().len(), 2);
    rig.hws.unmap_queues(UnmapFilter::Pasid(5), false).unwrap();
    let left: Vec<(u16, u8)> = rig
        .model
        .mec_queues()
        .iter()
        .map(|q| (q.pasid, q.vmid))
        .collect();
    assert_eq!(left, vec![(6, 4)]);
    assert_eq!(rig.model.atc_vmid_pasid_mapping(3), 0);
    rig.hws.unmap_queues(UnmapFilter::All, true).unwrap();
    assert!(rig.model.mec_queues().is_empty());
    assert!(rig.model.processes().is_empty());
    assert_eq!(rig.model.runlist(), None);
    assert_eq!(rig.model.atc_vmid_pasid_mapping(4), 0);
    // A fresh runlist after the unmap maps again from VMID 3.
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg(), &procs[1..], ib, at).unwrap();
    rig.hws.run_list(&rl).unwrap();
    assert_eq!(rig.model.mec_queues()[0].vmid, 3);
}

fn expect_timeout(e: HwsError, packet: &str) {
    match e {
        HwsError::FenceTimeout {
            packet: p,
            fence,
            seq,
            ..
        } => {
            assert_eq!(p, packet);
            assert!(fence < seq, "fence {fence} caught up with {seq}");
        }
        other => panic!("expected a fence timeout after {packet}, got {other}"),
    }
    assert!(e.to_string().contains(packet));
}

/// Builds a good one-process runlist and lets `patch` spoil its IB.
fn spoiled(rig: &mut Rig, patch: impl FnOnce(&mut [u32])) -> HwsError {
    resources(rig);
    let q = [
        QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0)),
        QueueDesc::compute(db(1), rig.mqd(1), rig.wptr(1)),
    ];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &q,
    }];
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    patch(ib);
    rig.hws.run_list(&rl).unwrap_err()
}

#[test]
fn wrong_process_fields_are_refused_on_both_sides() {
    // The runtime refuses a page-table base without VALID before sending.
    let mut rig = new_rig();
    let q = [QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0))];
    let bad = [ProcessQueues {
        process: ProcessDesc::new(9, PD & !1),
        queues: &q,
    }];
    let (ib, at) = rig.ib();
    assert_eq!(
        runlist::build(&cfg(), &bad, ib, at),
        Err(HwsError::PageTableBase {
            pasid: 9,
            value: PD & !1
        })
    );
    // Sent anyway (dword 2 of MAP_PROCESS is the base's low half), the
    // model refuses it and the fence never comes.
    let e = spoiled(&mut rig, |ib| ib[2] &= !1);
    expect_timeout(e, "RUN_LIST");
    assert_eq!(
        rig.refused(),
        HwsRefusal::PageTableBase {
            pasid: 9,
            value: PD & !1
        }
    );
    assert!(rig.model.mec_queues().is_empty());

    // num_queues (bits 31:22 of dword 13) says 3, two MAP_QUEUES follow.
    let mut rig2 = new_rig();
    let e = spoiled(&mut rig2, |ib| ib[13] = (ib[13] & 0x003F_FFFF) | 3 << 22);
    expect_timeout(e, "RUN_LIST");
    assert_eq!(
        rig2.refused(),
        HwsRefusal::QueueCountMismatch {
            pasid: 9,
            declared: 3,
            found: 2
        }
    );

    // reserved6 (dword 10) set.
    let mut rig3 = new_rig();
    let e = spoiled(&mut rig3, |ib| ib[10] = 0x40);
    expect_timeout(e, "RUN_LIST");
    assert_eq!(
        rig3.refused(),
        HwsRefusal::ReservedBits {
            opcode: 0xA1,
            bits: 0x40
        }
    );
}

#[test]
fn a_queue_without_map_process_is_refused() {
    let mut rig = new_rig();
    // The builder always puts MAP_PROCESS first; drop it by starting the
    // IB at the first MAP_QUEUES (dword 21) and shortening it.
    resources(&mut rig);
    let q = [QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0))];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &q,
    }];
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    let headless = runlist::Runlist {
        ib_address: at + 21 * 4,
        ib_dwords: 7,
        ..rl
    };
    expect_timeout(rig.hws.run_list(&headless).unwrap_err(), "RUN_LIST");
    assert_eq!(
        rig.refused(),
        HwsRefusal::QueueWithoutProcess {
            doorbell_offset: 0x20
        }
    );
}

#[test]
fn a_runlist_ib_out_of_range_is_refused() {
    let mut rig = new_rig();
    resources(&mut rig);
    let q = [QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0))];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &q,
    }];
    // The runtime refuses an IB buffer too short for the runlist.
    let (ib, at) = rig.ib();
    assert_eq!(
        runlist::build(&cfg(), &procs, &mut ib[..27], at),
        Err(HwsError::IbTooSmall {
            needed: 28,
            have: 27
        })
    );
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    // An IB size running past the device memory the HWS may read.
    let end = rig.base + (ARENA * 4) as u64;
    let too_long = runlist::Runlist {
        ib_dwords: ((end - at) / 4 + 1) as u32,
        ..rl
    };
    expect_timeout(rig.hws.run_list(&too_long).unwrap_err(), "RUN_LIST");
    assert_eq!(
        rig.refused(),
        HwsRefusal::IbOutOfRange {
            address: at,
            bytes: end - at + 4
        }
    );
    // An IB address nobody mapped.
    let mut rig2 = new_rig();
    resources(&mut rig2);
    let elsewhere = runlist::Runlist {
        ib_address: 0x7000_0000_0000,
        ..rl
    };
    expect_timeout(rig2.hws.run_list(&elsewhere).unwrap_err(), "RUN_LIST");
    assert_eq!(
        rig2.refused(),
        HwsRefusal::IbOutOfRange {
            address: 0x7000_0000_0000,
            bytes: 28 * 4
        }
    );
}

/// barebell's runlist builder keeps its queues' doorbells inside
/// `CP_MEC_DOORBELL_RANGE` (what wakes a power-gated GC), but the HWS
/// model maps a queue outside it: KFD's doorbells lie past the kernel's
/// range (`kfd_doorbell_init()`), and the range only decides what wakes a
/// power-gated GC (`gfx_v9_0_kiq_init_register()`). The model refused it
/// before.
#[test]
fn a_doorbell_outside_the_range_is_the_builders_refusal_not_the_models() {
    // Doorbell index 0x20 (dword 0x40, byte 0x100) lies past
    // CP_MEC_DOORBELL_RANGE_UPPER 0xF8.
    let mut rig = new_rig();
    resources(&mut rig);
    let q = [QueueDesc::compute(0x40, rig.mqd(0), rig.wptr(0))];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &q,
    }];
    let (ib, at) = rig.ib();
    assert!(matches!(
        runlist::build(&cfg(), &procs, ib, at),
        Err(HwsError::DoorbellOutOfRange {
            pasid: 9,
            doorbell_offset: 0x40,
            ..
        })
    ));
    // A runtime configured with a wider range: the model runs the list.
    let wide = RunlistConfig {
        doorbells: runlist::DoorbellRange {
            lower: 0,
            upper: 0x1000,
        },
        ..cfg()
    };
    let rl = runlist::build(&wide, &procs, ib, at).unwrap();
    assert_eq!(rig.hws.run_list(&rl), Ok(()));
}

#[test]
fn run_list_before_set_resources_is_refused_on_both_sides() {
    let mut rig = new_rig();
    let q = [QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0))];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &q,
    }];
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    assert_eq!(rig.hws.run_list(&rl), Err(HwsError::NoResources));
    let raw = packets::run_list(rl.ib_address, rl.ib_dwords, false, rl.process_cnt);
    expect_timeout(rig.hws.submit("RUN_LIST", &raw).unwrap_err(), "RUN_LIST");
    assert_eq!(rig.refused(), HwsRefusal::NoResources);
}

#[test]
fn an_unknown_opcode_halts_the_hiq() {
    let mut rig = new_rig();
    resources(&mut rig);
    // A type-3 header of opcode 0x99 with a one-dword body.
    expect_timeout(
        rig.hws.submit("0x99", &[0xC000_9900, 0]).unwrap_err(),
        "0x99",
    );
    assert_eq!(rig.refused(), HwsRefusal::UnknownOpcode { opcode: 0x99 });
    // Halted: the 0x99 packet's fence never comes, so a plain fence is
    // not even written over it: the old packet's timeout comes back.
    assert!(rig.hws.has_pending_packet());
    expect_timeout(rig.hws.fence().unwrap_err(), "0x99");
}

/// Packets assembled by hand from `kfd_pm4_headers_ai.h`'s bit layout,
/// not by the runtime's encoder: the model's decoder reads them the same.
#[test]
fn hand_assembled_packets_are_accepted() {
    let mut rig = new_rig();
    // SET_RESOURCES: header 3<<30 | (8-2)<<16 | 0xA0<<8; vmid_mask 0xFFF8,
    // queue_type HIQ (1) at bit 29; queue mask 0xFFFF_FFFE.
    let set = [0xC006_A000, 0xFFF8 | 1 << 29, 0xFFFF_FFFE, 0, 0, 0, 0, 0];
    rig.hws.submit("SET_RESOURCES", &set).unwrap();
    assert_eq!(rig.model.resources().unwrap().queue_mask, 0xFFFF_FFFE);
    let (mqd, wptr) = (rig.mqd(0), rig.wptr(0));
    let (ib, at) = rig.ib();
    // MAP_PROCESS (aldebaran, 21 dwords): PASID 0x42, quantum 10 at bit
    // 25; page table base; num_queues 1 at bit 22 of dword 13.
    ib[..21].fill(0);
    ib[0] = 3 << 30 | 19 << 16 | 0xA1 << 8;
    ib[1] = 0x42 | 10 << 25;
    ib[2] = PD as u32;
    ib[3] = (PD >> 32) as u32;
    ib[13] = 1 << 22;
    // MAP_QUEUES: num_queues 1 (bit 29), queue_sel 1 (bit 4), doorbell
    // dword 0x26 at bit 2, MQD and wptr addresses.
    ib[21..28].copy_from_slice(&[
        3 << 30 | 5 << 16 | 0xA2 << 8,
        1 << 29 | 1 << 4,
        0x26 << 2,
        mqd as u32,
        (mqd >> 32) as u32,
        wptr as u32,
        (wptr >> 32) as u32,
    ]);
    // RUN_LIST: IB address, ib_size 28, valid (bit 23), process_cnt 1 (bit 24).
    let run = [
        3 << 30 | 2 << 16 | 0xA5 << 8,
        at as u32,
        (at >> 32) as u32,
        28 | 1 << 23 | 1 << 24,
    ];
    rig.hws.submit("RUN_LIST", &run).unwrap();
    assert_eq!(
        rig.model.mec_queues(),
        vec![MecQueue {
            mqd,
            doorbell_offset: 0x26,
            vmid: 3,
            pasid: 0x42,
            wptr,
        }]
    );
    // The runtime's encoder agrees with the hand-assembled dwords.
    assert_eq!(packets::run_list(at, 28, false, 1), run);
    assert_eq!(
        packets::set_resources(&SchedulingResources {
            gws_mask: 0,
            unmap_latency: 0,
            ..SchedulingResources::kfd(0xFFF8, 0xFFFF_FFFE)
        }),
        set
    );
}

/// GC 9.4.3 takes the aldebaran MAP_PROCESS (`pm_init()` picks
/// `kfd_aldebaran_pm_funcs`); the 16-dword v9 form is refused by size.
#[test]
fn the_v9_map_process_is_not_the_gc_9_4_3_form() {
    let mut rig = new_rig();
    resources(&mut rig);
    let q = [QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0))];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &q,
    }];
    let v9 = RunlistConfig {
        form: packets::MapProcessForm::V9,
        ..cfg()
    };
    let (ib, at) = rig.ib();
    let rl = runlist::build(&v9, &procs, ib, at).unwrap();
    assert_eq!(rl.ib_dwords, 16 + 7);
    expect_timeout(rig.hws.run_list(&rl).unwrap_err(), "RUN_LIST");
    assert_eq!(
        rig.refused(),
        HwsRefusal::BadSize {
            opcode: 0xA1,
            dwords: 16,
            expected: 21
        }
    );
}

/// `process_cnt` may not exceed the 13 VMIDs (3..15) SET_RESOURCES gave.
#[test]
fn more_concurrent_processes_than_vmids_is_refused() {
    let mut rig = new_rig();
    resources(&mut rig);
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &[],
    }];
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    let raw = packets::run_list(rl.ib_address, rl.ib_dwords, false, 14);
    expect_timeout(rig.hws.submit("RUN_LIST", &raw).unwrap_err(), "RUN_LIST");
    assert_eq!(
        rig.refused(),
        HwsRefusal::ProcessCount {
            process_cnt: 14,
            vmids: 13
        }
    );
}

#[test]
fn unmap_by_doorbell_and_dynamic_queues() {
    let mut rig = new_rig();
    resources(&mut rig);
    let q = [
        QueueDesc::compute(db(0), rig.mqd(0), rig.wptr(0)),
        QueueDesc::compute(db(1), rig.mqd(1), rig.wptr(1)),
    ];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &q,
    }];
    let (ib, at) = rig.ib();
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    rig.hws.run_list(&rl).unwrap();
    // Hand-assembled UNMAP_QUEUES on specified queues (queue_sel 0 at bit
    // 4), one queue (num_queues at bit 29), doorbell_offset0 0x22 at bit 2
    // of dword 2. pm_unmap_queues_v9 never sends this form; the header does.
    let unmap = [3 << 30 | 4 << 16 | 0xA3 << 8, 1 << 29, 0x22 << 2, 0, 0, 0];
    rig.hws.submit("UNMAP_QUEUES", &unmap).unwrap();
    let left: Vec<u32> = rig
        .model
        .mec_queues()
        .iter()
        .map(|q| q.doorbell_offset)
        .collect();
    assert_eq!(left, vec![0x20]);
    // A second rig (its own memory, so its own queue addresses): unmapping
    // the dynamic queues removes both, after which doorbell 0x22 names a
    // queue that is gone.
    let mut rig2 = new_rig();
    resources(&mut rig2);
    let q = [
        QueueDesc::compute(db(0), rig2.mqd(0), rig2.wptr(0)),
        QueueDesc::compute(db(1), rig2.mqd(1), rig2.wptr(1)),
    ];
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, PD),
        queues: &q,
    }];
    let (ib, at) = rig2.ib();
    let rl = runlist::build(&cfg(), &procs, ib, at).unwrap();
    rig2.hws.run_list(&rl).unwrap();
    rig2.hws.unmap_queues(UnmapFilter::Dynamic, false).unwrap();
    assert!(rig2.model.mec_queues().is_empty());
    assert_eq!(rig2.model.runlist(), None);
    expect_timeout(
        rig2.hws.submit("UNMAP_QUEUES", &unmap).unwrap_err(),
        "UNMAP_QUEUES",
    );
    assert_eq!(
        rig2.refused(),
        HwsRefusal::UnknownQueue {
            doorbell_offset: 0x22
        }
    );
}

/// The HIQ's MQD as KFD builds it (`init_mqd_hiq()` → `init_mqd()`): a PM4
/// queue, so none of what `init_mqd()` sets only `if (q->format ==
/// KFD_QUEUE_FORMAT_AQL)`: no `DOORBELL_BIF_DROP` (mask 0x2 of
/// `CP_HQD_PQ_DOORBELL_CONTROL`, `gc_9_4_3_sh_mask.h`), no slot-based
/// write pointer (0x0600_0000) or queue-full (0x4000) bits; PRIV_STATE
/// (0x4000_0000) and KMD_QUEUE (0x8000_0000) on. One per XCC
/// (`init_mqd_hiq_v9_4_3()`): 2048 bytes apart (`sizeof(struct v9_mqd)`,
/// `cp_mqd_stride_size`), NO_UPDATE_RPTR (0x0800_0000) set on every XCC
/// but the master, XCC 0; the same ring and doorbell on all.
#[test]
fn the_hiq_mqd_is_a_pm4_queues() {
    use barebell::gfx::mqd::EopBuffer;
    use barebell::gfx::queue_v9::{RunlistIb, XccMqdPages};
    use barebell_bringup::gfx::gfx_v9_4_3::xcc::{HIQ_RING, HiqParts, RUNLIST_DWORDS, hiq_mqd};
    use std::sync::atomic::AtomicU64;
    fn leak<T>(v: T) -> Dev<'static, T> {
        // SAFETY: leaked, so valid for the rest of the process; no device
        // touches it in this test.
        unsafe { Dev::assume(Box::leak(Box::new(v))) }
    }
    let parts = HiqParts {
        ring: leak(HiqMemory::<HIQ_RING>::new()),
        mqds: leak(XccMqdPages::new()),
        eop: leak(EopBuffer::new()),
        rptr: leak(AtomicU64::new(0)),
        ib: leak(RunlistIb::<RUNLIST_DWORDS>::new()),
    };
    let base = parts.mqds.address();
    for xcc in 0..4usize {
        let m = hiq_mqd(&parts, xcc, 0x10).unwrap();
        let db = m.hqd.cp_hqd_pq_doorbell_control;
        assert_eq!(db & 0x2, 0, "DOORBELL_BIF_DROP: {db:#x}");
        assert_eq!(db & 0x0fff_fffc, 0x10 << 2, "DOORBELL_OFFSET: {db:#x}");
        let pq = m.hqd.cp_hqd_pq_control;
        assert_eq!(pq & (0x0600_0000 | 0x4000), 0, "{pq:#x}");
        assert_eq!(pq & 0xc000_0000, 0xc000_0000, "{pq:#x}");
        assert_eq!(
            pq & 0x0800_0000 != 0,
            xcc != 0,
            "NO_UPDATE_RPTR on XCC {xcc}"
        );
        assert_eq!(m.hqd.cp_hqd_aql_control, 0);
        assert_eq!(m.cp_mqd_stride_size, 2048);
        let mqd = u64::from(m.hqd.cp_mqd_base_addr_lo) | u64::from(m.hqd.cp_mqd_base_addr_hi) << 32;
        assert_eq!(mqd, base + 2048 * xcc as u64, "XCC {xcc}");
        let ring = u64::from(m.hqd.cp_hqd_pq_base_lo) | u64::from(m.hqd.cp_hqd_pq_base_hi) << 32;
        assert_eq!(ring << 8, parts.ring.ring_address(), "XCC {xcc}");
    }
}
