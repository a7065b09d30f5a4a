//! MI210 (Aldebaran, GC 9.4.2) queues: the KIQ on the one GC, then one AQL
//! queue mapped `hws` (KFD's CPSCH: the HIQ, SET_RESOURCES, a runlist),
//! `kiq` or `direct`, through GC 9.4.3's machinery with GC 9.4.2's
//! description (`barebell_bringup::gfx::gfx_v9_4_3::xcc::GC_9_4_2`).
//! Expected values are written by hand from Linux 6.12's headers and
//! sources (see each test).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell_bringup::{FirmwareDir, Mapping, Options, Quiet, Step};
use barebell_model::VirtualGpu;
use barebell_model::mec_v9_4_3::{MecV943Refusal, Source};
use barebell_model::parts;
use barebell_model::vgpu::HostMemory;

fn device() -> VirtualGpu {
    let mem = HostMemory::allocate(64 << 20).unwrap();
    VirtualGpu::new(
        parts::mi210(),
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(7),
    )
    .unwrap()
}

fn header(rel: &str) -> String {
    let path = format!(
        "{}/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/include/asic_reg/gc/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"))
}

/// `#define regNAME value` of a Linux offset header.
fn define(text: &str, name: &str) -> Option<u32> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some("#define") && w.next() == Some(name))
            .then(|| w.next())
            .flatten()
            .and_then(|v| u32::from_str_radix(v.trim_start_matches("0x"), 16).ok())
    })
}

/// The KIQ, HQD and MEC registers barebell's v9 queue code drives (the GC
/// 9.4.3 tables) sit at the same offsets and segments in GC 9.4.2's
/// header, which is what lets one machinery serve both; the two registers
/// of those tables GC 9.4.2 lacks are named, and the queue code for GC
/// 9.4.2 writes neither (`HqdWindow::Gfx9` stops at `CP_HQD_PQ_WPTR_HI`,
/// and the TG chunk register belongs to the 9.4.3 golden settings).
#[test]
fn gc_9_4_2_has_gc_9_4_3s_queue_registers() {
    let h = header("gc_9_4_2_offset.h");
    let mut missing = Vec::new();
    let tables = [
        barebell::regs::gc_9_4_3::ALL,
        barebell::regs::gc_9_4_3_rlc::ALL,
    ];
    for r in tables.iter().flat_map(|t| t.iter()) {
        let name = format!("reg{}", r.name);
        match define(&h, &name) {
            Some(off) => {
                assert_eq!(off, r.offset, "{name}");
                let idx = define(&h, &format!("{name}_BASE_IDX")).unwrap();
                assert_eq!(idx as usize, r.base_idx as usize, "{name}_BASE_IDX");
            }
            None => missing.push(r.name),
        }
    }
    missing.sort_unstable();
    assert_eq!(
        missing,
        ["COMPUTE_TG_CHUNK_SIZE", "CP_HQD_AQL_DISPATCH_ID_HI"]
    );
    // kgd_gfx_v9_hqd_load()'s window end: 56 registers from 0x1245.
    assert_eq!(define(&h, "regCP_HQD_PQ_WPTR_HI"), Some(0x127c));
    assert_eq!(barebell::gfx::hqd_v9::HqdWindow::Gfx9.dwords(), 56);
    assert_eq!(barebell::gfx::hqd_v9::HqdWindow::Gc9_4_3.dwords(), 59);
}

/// Vega20's doorbell plan (`enum AMDGPU_VEGA20_DOORBELL_ASSIGNMENT`,
/// `vega20_doorbell_index_init()`): KIQ 0, HIQ 1, user queues from 0xB to
/// 0x8A, so `gfx_v9_0_kiq_init_register()` programs
/// `CP_MEC_DOORBELL_RANGE` 0 to (0x8A * 2) << 2 = 0x450 bytes.
#[test]
fn vega20_doorbell_plan() {
    use barebell::gfx::mqd_v9::DoorbellPlan;
    let p = DoorbellPlan::VEGA20;
    assert_eq!(
        (p.kiq, p.hiq, p.userqueue_start, p.userqueue_end),
        (0, 1, 0xB, 0x8A)
    );
    let r = p.mec_range(0);
    assert_eq!((r.lower_bytes, r.upper_bytes), (0, 0x450));
    assert_eq!(p.kiq_doorbell(0), 0);
    // Layout 1's XCC 0 range for contrast: 0 to (0x1F * 2) << 2 = 0xF8.
    let l = DoorbellPlan::LAYOUT1.mec_range(0);
    assert_eq!((l.lower_bytes, l.upper_bytes), (0, 0xF8));
}

/// Each mapping reaches a ready queue (a barrier through it completed),
/// with nothing refused by the model, and tears down to quiescence.
#[test]
fn mi210_maps_a_queue_each_way() {
    for mapping in [Mapping::Hws, Mapping::Kiq, Mapping::Direct] {
        let m = device();
        let opts = Options {
            mapping: Some(mapping),
            ..Options::default()
        };
        let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet)
            .unwrap_or_else(|e| panic!("{}: {e}", mapping.name()));
        assert_eq!(gpu.reached, Step::Queue, "{}", mapping.name());
        let mec = m.gc_9_4_3().unwrap().mec();
        assert!(
            mec.refusals().is_empty(),
            "{}: {:?}",
            mapping.name(),
            mec.refusals()
        );
        let q = mec.queues();
        let user: Vec<_> = q.iter().filter(|r| r.doorbell_dword == 0x16).collect();
        // The user queue rings vega20's first user-queue doorbell,
        // 0xB << 1 = dword 0x16, with one MQD.
        assert_eq!(user.len(), 1, "{}: {q:?}", mapping.name());
        let want = match mapping {
            Mapping::Hws => Source::Hws,
            Mapping::Kiq => Source::Kiq,
            _ => Source::Direct,
        };
        assert_eq!(user[0].source, want);
        assert_eq!(user[0].members.len(), 1);
        if mapping == Mapping::Hws {
            // kfd_hiq_load_mqd_kiq(): the HIQ on ME 2 pipe 0 queue 0,
            // doorbell HIQ 1 << 1 = dword 2.
            let hiq = mec.hiq_status();
            assert_eq!(hiq.len(), 1, "{hiq:?}");
            assert!(
                hiq[0].starts_with("XCC 0 HIQ on ME 2 pipe 0 queue 0, doorbell dword 0x2"),
                "{hiq:?}"
            );
            assert!(user[0].page_table_base.is_some());
        }
        let report = gpu.shutdown();
        assert!(report.complete(), "{}: {report}", mapping.name());
        m.quiescent()
            .unwrap_or_else(|e| panic!("{}: {e}", mapping.name()));
    }
}

/// GC 9.4.3's HQD load copies 59 registers; on GC 9.4.2 the last three
/// dwords hold no register, and the model refuses the write there
/// (`kgd_gfx_v9_hqd_load()` stops at `CP_HQD_PQ_WPTR_HI`). The window
/// the GC 9.4.2 bring-up uses writes none of them.
#[test]
fn gc_9_4_3s_hqd_window_is_refused_on_gc_9_4_2() {
    use barebell::gfx::hqd_v9::{self, HqdSlot, HqdWindow};
    use barebell::gfx::mqd_v9::{MqdQueue, init_mqd};
    let q = MqdQueue {
        ring_address: 0x1_0000_0000,
        ring_bytes: 0x1_0000,
        read_index_address: 0x2000_0080,
        write_index_address: 0x2000_0038,
        eop_address: 0x3000_0000,
        eop_bytes: 4096,
        vmid: 8,
        ctx_save: None,
    };
    let mqd = init_mqd(0x4000_0000, 0x16, &q).unwrap();
    // Queues 2 and 3 of MEC 1 pipe 2: neither runs a queue here.
    for (window, queue) in [(HqdWindow::Gfx9, 2u8), (HqdWindow::Gc9_4_3, 3)] {
        let m = device();
        let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &Options::default(), &Quiet)
            .unwrap_or_else(|e| panic!("{e}"));
        let gc = gpu.bus.block(gpu.ips.gc.bases);
        let slot = HqdSlot {
            pipe_id: 2,
            queue_id: queue,
        };
        // The load's own result is not the point (the queue's memory is
        // not mapped); what the register writes did is.
        let _ = hqd_v9::hqd_load_window(gc, 0, slot, &mqd, None, window);
        let refused: Vec<_> = m
            .gc_9_4_3()
            .unwrap()
            .mec()
            .refusals()
            .into_iter()
            .filter_map(|r| match r {
                MecV943Refusal::NoSuchRegister { offset, .. } => Some(offset),
                _ => None,
            })
            .collect();
        match window {
            HqdWindow::Gfx9 => assert!(refused.is_empty(), "{refused:x?}"),
            HqdWindow::Gc9_4_3 => assert_eq!(refused, [0x127d, 0x127e, 0x127f]),
        }
        drop(gpu);
    }
}

/// GC 9.4.2's MQD (`init_mqd()`: `compute_static_thread_mgmt_se4..7` =
/// 0xFFFFFFFF in the union GC 9.4.3 reads as its XCC fields) passes the
/// model's one-GC check and fails GC 9.4.3's, whose
/// `compute_current_logic_xcc_id` must be below the queue's XCC count.
#[test]
fn a_gc_9_4_2_mqd_is_checked_as_one_gc() {
    use barebell::gfx::mqd_v9::{MqdQueue, init_mqd};
    use barebell_decode::mqd_v9::{MqdV9Fault, check_queue};
    use zerocopy::IntoBytes;
    let q = MqdQueue {
        ring_address: 0x1_0000_0000,
        ring_bytes: 0x1_0000,
        read_index_address: 0x2000_0080,
        write_index_address: 0x2000_0038,
        eop_address: 0x3000_0000,
        eop_bytes: 4096,
        vmid: 8,
        ctx_save: None,
    };
    let m = init_mqd(0x4000_0000, 0x16, &q).unwrap();
    let bytes = m.as_bytes();
    // Dword 39, the first of the union (v9_structs.h: offset 0x27).
    assert_eq!(&bytes[39 * 4..40 * 4], &[0xFF; 4]);
    let range = [(0, 0x450)];
    assert_eq!(
        check_queue(bytes, 0x4000_0000, 1, &range, false)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        check_queue(bytes, 0x4000_0000, 1, &range, true),
        Err(MqdV9Fault::LogicXccId {
            xcc: 0,
            found: 0xFFFF_FFFF,
            xccs: 1
        })
    );
    // Its doorbell outside vega20's MEC range is refused like any other.
    let m = init_mqd(0x4000_0000, 0x450 / 4 + 2, &q).unwrap();
    assert!(matches!(
        check_queue(m.as_bytes(), 0x4000_0000, 1, &range, false),
        Err(MqdV9Fault::DoorbellOutsideRange { .. })
    ));
    // One GC: a queue of two is refused.
    assert_eq!(
        check_queue(bytes, 0x4000_0000, 2, &[(0, 0x450); 2], false),
        Err(MqdV9Fault::XccCount { xccs: 2 })
    );
}

/// MI210 brought up to a ready queue mapped `mapping`.
fn queue_up(m: &VirtualGpu, mapping: Mapping) -> barebell_bringup::Gpu<'_> {
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        ..Options::default()
    };
    barebell_bringup::run(m, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", m.diagnostics()))
}

/// A further AQL queue's parts, placed as libhsakmt places them: ring and
/// pointers and EOP buffer in the user part (process tables), the MQD in
/// the driver part; and its resources with `doorbell`, for process 1.
struct SecondQueue<'p> {
    qmem: barebell::mem::Dev<'p, barebell::aql::QueueMemory<64>>,
    eop: barebell::mem::Dev<'p, barebell::gfx::mqd::EopBuffer>,
    mqd: barebell::mem::Dev<'p, barebell::gfx::mqd::MqdPage>,
}

impl<'p> SecondQueue<'p> {
    fn place(gpu: &mut barebell_bringup::Gpu<'p>) -> Self {
        let user = gpu.user_rings.as_mut().unwrap();
        let qmem = user.put(barebell::aql::QueueMemory::<64>::new()).unwrap();
        let eop = user.put(barebell::gfx::mqd::EopBuffer::new()).unwrap();
        let mqd = gpu
            .ring_area
            .as_mut()
            .unwrap()
            .put(barebell::gfx::mqd::MqdPage::new())
            .unwrap();
        SecondQueue { qmem, eop, mqd }
    }

    fn resources(&self, doorbell: u32) -> barebell::gfx::mapper::QueueResources<'p> {
        barebell::gfx::mapper::QueueResources::process_aql(
            self.mqd,
            self.eop,
            self.qmem.ring_address(),
            64 * 64,
            self.qmem.read_index_address(),
            self.qmem.write_index_address(),
            doorbell,
            1,
        )
        .unwrap()
    }
}

/// KFD adds a process's second queue on the HWS as
/// `create_queue_cpsch()` then `execute_queues_cpsch()` do: the new MQD,
/// the dynamic queues preempted, a runlist naming both queues. The model's
/// HWS maps it from that runlist and its CP runs a barrier on it, which
/// needs the MQD's ring, pointers, EOP buffer and doorbell all right.
/// A doorbell already taken, or outside the MEC's doorbell range
/// (`DOORBELL_RANGE_LOWER/UPPER`, vega20's user-queue plan), is refused
/// before anything reaches the device; so is a second queue where there
/// is no scheduler to add it to (the direct mapping).
#[test]
fn a_second_queue_joins_the_hws_runlist_and_runs() {
    use barebell::aql::packet::{BarrierKind, BarrierPacket, Fences};
    use barebell::aql::{AqlQueue, QueueConfig, SignalMemory};
    use barebell::gfx::mqd_v9::vega20;
    use barebell::platform::Platform;
    let m = device();
    let mut gpu = queue_up(&m, Mapping::Hws);
    let first = gpu.queue.as_ref().unwrap().doorbell;
    let second = SecondQueue::place(&mut gpu);
    let signal = gpu
        .user_rings
        .as_mut()
        .unwrap()
        .put(SignalMemory::new(1))
        .unwrap();
    let resources = |doorbell| second.resources(doorbell);
    let doorbell = first + 1;
    let mapper = gpu.queue.as_mut().unwrap().mapper_mut();
    // Taken, and past the user-queue range: refused.
    assert!(mapper.map(&resources(first)).is_err());
    assert!(
        mapper
            .map(&resources(vega20::USERQUEUE_END + 0x200))
            .is_err()
    );
    let mapping = mapper
        .map(&resources(doorbell))
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", m.diagnostics()));
    assert_eq!(mapping.doorbell, doorbell);
    assert_eq!(mapping.mqd_address, second.mqd.address());
    // Two compute queues of one process.
    barebell_tests::assert_runlist_not_over_subscribed(&m);
    // Mapped once: the same doorbell again is taken.
    assert!(mapper.map(&resources(doorbell)).is_err());

    let db = gpu.doorbells.doorbell(doorbell).unwrap();
    let q = AqlQueue::new(second.qmem.get(), db, QueueConfig::default()).unwrap();
    let barrier =
        BarrierPacket::new(BarrierKind::And, &[], signal.handle(), Fences::SYSTEM).unwrap();
    let clock = Platform::clock(&m);
    q.submit(&barrier, clock, 1_000_000_000).unwrap();
    let mut looks = 0;
    while signal.value() != 0 && looks < 10_000 {
        m.run_until_idle(1);
        looks += 1;
    }
    assert_eq!(
        signal.value(),
        0,
        "the second queue's barrier never completed\n{:#?}",
        m.diagnostics()
    );

    gpu.queue
        .as_mut()
        .unwrap()
        .mapper_mut()
        .unmap(&mapping)
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", m.diagnostics()));
    drop(q);
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
    m.quiescent().unwrap();

    // The direct mapping has no scheduler to add a queue to.
    let m = device();
    let mut gpu = queue_up(&m, Mapping::Direct);
    let res = SecondQueue::place(&mut gpu).resources(gpu.queue.as_ref().unwrap().doorbell + 1);
    let e = gpu
        .queue
        .as_mut()
        .unwrap()
        .mapper_mut()
        .map(&res)
        .unwrap_err();
    assert!(e.to_string().contains("HWS"), "{e}");
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
}

/// `sdma_v4_0_start()` unhalts every SDMA 4.4.0 instance at amdgpu's
/// init, so the HWS can later map a process's SDMA queue on any engine
/// (`sdma_v4_0_ctx_switch_enable()`, `sdma_v4_0_enable()`); barebell's
/// libhsakmt does it before the first SDMA queue. The teardown halts them
/// again.
#[test]
fn starting_the_sdma_engines_unhalts_every_instance_until_the_teardown() {
    let m = device();
    let mut gpu = queue_up(&m, Mapping::Hws);
    let engines = m.gc_9_4_3().unwrap().sdma();
    assert_eq!(engines.len(), 5, "MI210 has five SDMA instances");
    assert!(
        engines.iter().all(|e| !e.running()),
        "running before the start"
    );
    barebell_bringup::sdma::start(&mut gpu).unwrap();
    for (i, e) in engines.iter().enumerate() {
        assert!(e.running(), "SDMA {i} still halted");
    }
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
    for (i, e) in engines.iter().enumerate() {
        assert!(!e.running(), "SDMA {i} left running by the teardown");
    }
    m.quiescent().unwrap();
}

/// KFD hands the HWS a process's `SH_MEM_CONFIG` in MAP_PROCESS as
/// `update_qpd_v9()` fills `qpd->sh_mem_config` on GC 9.4.2: unaligned
/// (`SH_MEM_ALIGNMENT_MODE_UNALIGNED`, `cik_regs.h`) and `RETRY_DISABLE`
/// (`dev->kfd->noretry`, which `amdgpu_gmc_noretry_set()` turns on for
/// 9.4.2), without `F8_MODE` (9.4.3 and 9.4.4 only). The fields sit where
/// `gc_9_4_2_sh_mask.h` puts them; the model's HWS keeps what MAP_PROCESS
/// carried.
#[test]
fn map_process_carries_update_qpd_v9s_sh_mem_config() {
    let sh = header("gc_9_4_2_sh_mask.h");
    let field = |n: &str| define(&sh, n).unwrap_or_else(|| panic!("{n}"));
    let unaligned = define(
        &barebell_tests::linux_amd_source("amdkfd/cik_regs.h"),
        "SH_MEM_ALIGNMENT_MODE_UNALIGNED",
    )
    .unwrap();
    let want = unaligned << field("SH_MEM_CONFIG__ALIGNMENT_MODE__SHIFT")
        | 1 << field("SH_MEM_CONFIG__RETRY_DISABLE__SHIFT");
    let m = device();
    let gpu = queue_up(&m, Mapping::Hws);
    let procs = m
        .gc_9_4_3()
        .unwrap()
        .mec()
        .hws()
        .expect("the HIQ was mapped")
        .processes();
    assert_eq!(procs.len(), 1);
    assert_eq!(
        procs[0].sh_mem_config, want,
        "{:#x}",
        procs[0].sh_mem_config
    );
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
}
