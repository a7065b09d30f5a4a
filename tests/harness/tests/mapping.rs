//! Direct HQD mapping against the MEC model, on a gfx11 and a gfx12 part:
//! MQDs, several queues in two VMIDs running AQL dispatches, teardown,
//! doorbell collisions, and a dequeue that never completes.

use barebell::aql::packet::Dispatch;
use barebell::aql::queue::QueueConfig;
use barebell::aql::signal::Condition;
use barebell::bus::WaitError;
use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::error::DoorbellAllocError;
use barebell::gfx::error::MapError;
use barebell::gfx::hqd::DirectHqd;
use barebell::gfx::mapper::QueueMapper;
use barebell::gfx::mqd::{ComputeMqdV11, HQD_FIRST_DWORD, aql_hqd};
use barebell::ip::Generation;
use barebell_model::mec::{MecEvent, MecFaults};
use barebell_model::{Seed, TickingClock};
use barebell_model_host::mec::{GC_BASES, ModelGpu};
use barebell_model_host::queue::signals;
use std::sync::{Arc, Mutex};
use zerocopy::IntoBytes;

const KERNEL: u64 = 0x4000;
const BOUND_NS: u64 = 1_000_000;

fn clock() -> TickingClock {
    TickingClock::new(1_000)
}

/// The MQD of a 16-slot queue, checked against values worked out by hand
/// from `kfd_mqd_manager_v11.c` and `gc_11_0_0_sh_mask.h`, not from the
/// code under test.
#[test]
fn aql_mqd_matches_kfd_for_a_16_slot_ring() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(1)).unwrap();
    let q = gpu.queue::<16>(0x20, QueueConfig::default()).unwrap();
    let p = q.resources(3).mqd_params();
    let m = ComputeMqdV11::aql(&p).unwrap();
    let b = m.as_bytes();
    let dw = |i: usize| u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
    assert_eq!(b.len(), 2048);
    assert_eq!(dw(0), 0xC031_0800, "header");
    assert_eq!(dw(11), 1, "compute_pipelinestat_enable");
    for se in [23, 24, 26, 27, 44, 45, 46, 47] {
        assert_eq!(dw(se), 0xFFFF_FFFF, "static_thread_mgmt dword {se}");
    }
    // 16 packets = 1024 bytes = 256 dwords: ffs(256) - 1 - 1 = 7.
    // RPTR_BLOCK_SIZE 5 << 8, UNORD_DISPATCH bit 28, NO_UPDATE_RPTR bit
    // 27, SLOT_BASED_WPTR 2 << 18, QUEUE_FULL_EN bit 14.
    let pq = 7 | 5 << 8 | 1 << 28 | 1 << 27 | 2 << 18 | 1 << 14;
    assert_eq!(dw(145), pq, "cp_hqd_pq_control");
    assert_eq!(dw(181), 1, "cp_hqd_aql_control");
    // doorbell 0x20 (64-bit) = dword 0x40, << 2, plus BIF_DROP (bit 1).
    assert_eq!(dw(143), 0x40 << 2 | 1 << 1, "cp_hqd_pq_doorbell_control");
    let mem = q.mem;
    assert_eq!(
        u64::from(dw(139)) | u64::from(dw(140)) << 32,
        mem.read_index_address()
    );
    assert_eq!(
        u64::from(dw(141)) | u64::from(dw(142)) << 32,
        mem.write_index_address()
    );
    assert_eq!(
        u64::from(dw(136)) | u64::from(dw(137)) << 32,
        mem.ring_address() >> 8
    );
    assert_eq!(
        u64::from(dw(128)) | u64::from(dw(129)) << 32,
        q.mqd.address()
    );
    // EOP: 4096 bytes -> min(0xA, ffs(4096 / 4 / 4)) = ffs(256) = 9.
    assert_eq!(dw(167), 9, "cp_hqd_eop_control");
    assert_eq!(
        u64::from(dw(165)) | u64::from(dw(166)) << 32,
        q.eop.address() >> 8
    );
    assert_eq!(dw(131), 3, "cp_hqd_vmid");
    // PRELOAD_REQ | 0x55 << PRELOAD_SIZE(8); no QSWITCH_MODE (CWSR off).
    assert_eq!(dw(132), 1 | 0x55 << 8, "cp_hqd_persistent_state");
    assert_eq!(dw(162), 1 << 8, "cp_mqd_control PRIV_STATE");
    assert_eq!(dw(135), 1 | 1 << 4 | 1 << 8, "cp_hqd_quantum");
    assert_eq!(dw(149), 3 << 20, "cp_hqd_ib_control");
    assert_eq!(dw(160), 1 << 14, "cp_hqd_hq_status0");
    // CWSR off: no context-save area.
    for i in [171, 172, 173, 174, 175, 176, 177] {
        assert_eq!(dw(i), 0, "ctx save dword {i}");
    }
    assert_eq!(HQD_FIRST_DWORD, 128);
}

#[test]
fn mqd_builder_rejects_bad_inputs() {
    let gpu = ModelGpu::new(Generation::Gfx12, Seed(1)).unwrap();
    let q = gpu.queue::<16>(0x20, QueueConfig::default()).unwrap();
    let good = q.resources(0).mqd_params();
    let mut p = good;
    p.ring_bytes = 1000;
    assert!(matches!(
        aql_hqd(&p),
        Err(barebell::gfx::error::MqdError::RingSize { bytes: 1000 })
    ));
    let mut p = good;
    p.ring_address += 64;
    assert!(matches!(
        aql_hqd(&p),
        Err(barebell::gfx::error::MqdError::Misaligned {
            field: "ring address",
            ..
        })
    ));
    let mut p = good;
    p.eop_address = 0;
    assert!(matches!(
        aql_hqd(&p),
        Err(barebell::gfx::error::MqdError::Missing {
            field: "EOP address"
        })
    ));
    let mut p = good;
    p.doorbell_dword = 1 << 26;
    assert!(matches!(
        aql_hqd(&p),
        Err(barebell::gfx::error::MqdError::DoorbellOffset { .. })
    ));
}

fn direct(gpu: &ModelGpu) -> DirectHqd<&'static barebell_model::mec::Mec, TickingClock> {
    DirectHqd::new(
        gpu.mec,
        clock(),
        GC_BASES,
        gpu.generation,
        Doorbells::linux_default(),
    )
    .unwrap()
}

/// Four queues, two in VMID 1 and two in VMID 2, each runs dispatches to
/// completion; then all are dequeued.
fn end_to_end(generation: Generation, seed: u64) {
    let gpu = ModelGpu::new(generation, Seed(seed)).unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let r2 = ran.clone();
    gpu.mec.cp().register_kernel(
        KERNEL,
        Box::new(move |info| r2.lock().unwrap().push(info.queue)),
    );
    let mut mapper = direct(&gpu);
    // The range registers hold byte offsets (index * 8).
    let (lo, hi) = gpu.mec.doorbell_range();
    assert_eq!((lo, hi), (0, doorbell_index::USERQUEUE_END * 8));

    let mut queues = Vec::new();
    let mut mappings = Vec::new();
    for (i, vmid) in [1u8, 1, 2, 2].into_iter().enumerate() {
        let db = doorbell_index::USERQUEUE_START + i as u32;
        let q = gpu.queue::<16>(db, QueueConfig::default()).unwrap();
        let m = mapper.map(&q.resources(vmid)).unwrap();
        assert_eq!(m.vmid, vmid);
        queues.push(q);
        mappings.push(m);
    }
    let activated = gpu
        .mec
        .events()
        .iter()
        .filter(|e| matches!(e, MecEvent::Activated { me: 1, .. }))
        .count();
    assert_eq!(activated, 4, "{:?}", gpu.mec.events());

    let sig = signals(&mut gpu.mec.cp(), queues.len(), 3);
    for _round in 0..3 {
        for (q, s) in queues.iter().zip(sig) {
            let pkt = Dispatch::linear(64, 64, KERNEL, 0)
                .signal(s.handle())
                .packet()
                .unwrap();
            q.queue.submit(&pkt, &clock(), BOUND_NS).unwrap();
        }
        gpu.mec.run_until_idle(100_000).unwrap();
    }
    for s in sig {
        assert_eq!(s.wait(Condition::Eq, 0, &clock(), BOUND_NS), Ok(0));
    }
    assert_eq!(ran.lock().unwrap().len(), 12);
    assert!(
        gpu.mec.cp().errors().is_empty(),
        "{:?}",
        gpu.mec.cp().errors()
    );

    for m in &mappings {
        mapper.unmap(m).unwrap();
    }
    assert!(gpu.mec.mapped_doorbells().is_empty());
    // A dispatch after teardown is not run.
    let pkt = Dispatch::linear(64, 64, KERNEL, 0).packet().unwrap();
    queues[0].queue.submit(&pkt, &clock(), BOUND_NS).unwrap();
    gpu.mec.run_until_idle(10_000).unwrap();
    assert_eq!(ran.lock().unwrap().len(), 12);
    // The doorbells are free again.
    for m in &mappings {
        assert!(!mapper.doorbells().is_used(m.doorbell));
    }
}

#[test]
fn direct_hqd_runs_dispatches_on_gfx11() {
    for seed in 0..8 {
        end_to_end(Generation::Gfx11, seed);
    }
}

#[test]
fn direct_hqd_runs_dispatches_on_gfx12() {
    for seed in 0..8 {
        end_to_end(Generation::Gfx12, seed);
    }
}

#[test]
fn doorbell_collision_is_refused_before_any_register_write() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(3)).unwrap();
    let mut mapper = direct(&gpu);
    let a = gpu.queue::<16>(0x30, QueueConfig::default()).unwrap();
    let b = gpu.queue::<16>(0x30, QueueConfig::default()).unwrap();
    mapper.map(&a.resources(1)).unwrap();
    let before = gpu.mec.access_counts();
    let err = mapper.map(&b.resources(1)).unwrap_err();
    assert_eq!(
        err,
        MapError::Doorbell(DoorbellAllocError::InUse { index: 0x30 })
    );
    assert_eq!(
        gpu.mec.access_counts(),
        before,
        "nothing reached the device"
    );
    // Outside the MEC range: also refused up front.
    let c = gpu
        .queue::<16>(doorbell_index::USERQUEUE_END + 1, QueueConfig::default())
        .unwrap();
    let err = mapper.map(&c.resources(1)).unwrap_err();
    assert!(matches!(
        err,
        MapError::Doorbell(DoorbellAllocError::OutOfRange { .. })
    ));
    assert_eq!(gpu.mec.access_counts(), before);
}

#[test]
fn dequeue_that_never_completes_is_a_typed_timeout() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(4)).unwrap();
    let mut mapper = direct(&gpu);
    let q = gpu.queue::<16>(0x40, QueueConfig::default()).unwrap();
    let m = mapper.map(&q.resources(1)).unwrap();
    gpu.mec.set_faults(MecFaults {
        dequeue_never_completes: true,
    });
    let err = mapper.unmap(&m).unwrap_err();
    match err {
        MapError::Dequeue(WaitError::Timeout { what, last, .. }) => {
            assert_eq!(what, "CP_HQD_ACTIVE clear after dequeue");
            assert_eq!(last & 1, 1);
        }
        other => panic!("expected a dequeue timeout, got {other:?}"),
    }
    // The slot and doorbell stay owned: the hardware still has the queue.
    assert!(mapper.doorbells().is_used(0x40));
    gpu.mec.set_faults(MecFaults::default());
    mapper.unmap(&m).unwrap();
    assert!(!mapper.doorbells().is_used(0x40));
}

#[test]
fn unplugged_device_during_dequeue_is_device_gone() {
    let gpu = ModelGpu::new(Generation::Gfx12, Seed(5)).unwrap();
    let mut mapper = direct(&gpu);
    let q = gpu.queue::<16>(0x41, QueueConfig::default()).unwrap();
    let m = mapper.map(&q.resources(2)).unwrap();
    gpu.mec.unplug();
    assert!(matches!(
        mapper.unmap(&m),
        Err(MapError::Dequeue(WaitError::DeviceGone { .. }))
    ));
}

#[test]
fn model_runs_a_non_aql_hqd_load_as_a_pm4_queue() {
    // Direct programming of a window whose AQL control is clear is a PM4
    // queue (Linux's kernel compute queues never set
    // `CP_HQD_AQL_CONTROL`, `gfx_v11_0_compute_mqd_init()`): the MEC
    // activates it and the CP runs it as PM4 (tests/pm4_queue.rs).
    use barebell::bus::RegisterBus;
    use barebell::gfx::grbm::GrbmGfxCntl;
    use barebell::regs::gc_11_0_0 as r;
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(6)).unwrap();
    let _mapper = direct(&gpu);
    let q = gpu.queue::<16>(0x22, QueueConfig::default()).unwrap();
    let mut hqd = aql_hqd(&q.resources(1).mqd_params()).unwrap();
    hqd.cp_hqd_aql_control = 0;
    // A direct load enables its doorbell itself
    // (`CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK`, 0x40000000).
    hqd.cp_hqd_pq_doorbell_control |= 0x4000_0000;
    let bus = gpu.mec;
    let sel = GrbmGfxCntl::new()
        .with_meid(1)
        .with_pipeid(1)
        .with_queueid(2);
    bus.write32(
        r::GRBM_GFX_CNTL.byte_offset(&GC_BASES).unwrap(),
        sel.into_bits(),
    );
    let base = r::CP_MQD_BASE_ADDR.byte_offset(&GC_BASES).unwrap();
    for (i, v) in hqd.dwords().iter().enumerate() {
        bus.write32(base + 4 * i, *v);
    }
    bus.write32(r::CP_HQD_ACTIVE.byte_offset(&GC_BASES).unwrap(), 1);
    // The rig started the MEC pipes first (`MecPipeRunning`).
    let slot_events: Vec<MecEvent> = gpu
        .mec
        .events()
        .into_iter()
        .filter(|e| !matches!(e, MecEvent::MecPipeRunning { .. }))
        .collect();
    assert_eq!(
        slot_events,
        vec![MecEvent::Activated {
            me: 1,
            pipe: 1,
            queue: 2,
            cp_queue: 0
        }]
    );
    assert_eq!(
        bus.read32(r::CP_HQD_ACTIVE.byte_offset(&GC_BASES).unwrap()) & 1,
        1
    );
    let hqds = gpu.mec.active_hqds();
    assert_eq!(hqds.len(), 1);
    assert!(!hqds[0].aql);
}

/// `MqdPage::hqd()` and the `HqdRegisters` readers give what the model's
/// own MQD decoder (`model::decode::mqd::Hqd`, offsets from
/// `v11_structs.h`) reads from the same bytes.
#[test]
fn mqd_page_hqd_window_reads_as_the_model_decodes_it() {
    use barebell::gfx::mqd::MqdPage;
    use barebell_decode::mqd::Hqd;
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(2)).unwrap();
    let q = gpu.queue::<16>(0x20, QueueConfig::default()).unwrap();
    let m = ComputeMqdV11::aql(&q.resources(3).mqd_params()).unwrap();
    let page = MqdPage::new();
    page.write(&m);
    let h = page.hqd();
    let model = Hqd::from_mqd(m.as_bytes());
    assert_eq!(h.ring_bytes(), model.ring_bytes().ok());
    assert_eq!(h.ring_address(), model.ring_address());
    assert_eq!(h.rptr_report_address(), model.rptr_report_address());
    assert_eq!(h.wptr_poll_address(), model.wptr_poll_address());
    assert_eq!(h.mqd_address(), model.mqd_address());
}

/// The MES pipe ring's HQD as `mes_pipe_ring_hqd()` builds it, read by
/// the model's own decoder (`model::decode::mqd::Hqd`): the ring size
/// `CP_HQD_PQ_CONTROL.QUEUE_SIZE` encodes (`2^(QUEUE_SIZE+1)` dwords) for
/// the smallest ring the builder takes (4 dwords) and a 1024-dword one,
/// the 2 KiB EOP buffer Linux gives a MES pipe (`MES_EOP_SIZE` in
/// `mes_v11_0.c`), and nothing the model's MES-ring check refuses. A ring
/// of 2 dwords is below the builder's minimum and is refused.
#[test]
fn mes_pipe_ring_hqd_reads_as_the_model_decodes_it() {
    use barebell::gfx::mes::rings::{MesPipeRing, mes_pipe_ring_hqd};
    use barebell::gfx::mqd::{EopBuffer, MqdPage};
    use barebell_decode::mqd::Hqd;
    let (mqd, eop) = (MqdPage::new(), EopBuffer::new());
    // The pages are host memory: above 4 GiB, so both address halves count.
    assert!(mqd.address() >> 32 != 0 && eop.address() >> 32 != 0);
    let ring = |ring_dwords| MesPipeRing {
        ring: 0x10_0000,
        ring_dwords,
        rptr: 0x2000,
        wptr: 0x3000,
    };
    for dwords in [4usize, 1024] {
        let h = mes_pipe_ring_hqd(ring(dwords), &mqd, &eop, 0x40).unwrap();
        let m = Hqd(h.dwords());
        assert_eq!(m.ring_bytes(), Ok(dwords as u64 * 4), "{dwords}-dword ring");
        assert_eq!(m.ring_address(), 0x10_0000);
        assert_eq!(m.mqd_address(), mqd.address());
        assert_eq!(m.eop_address(), eop.address());
        assert_eq!(m.eop_bytes(), Ok(2048));
        assert_eq!(m.mes_ring_refusal(), None);
    }
    // Refused with the ring's size in bytes: too small, or not a power
    // of two.
    use barebell::gfx::error::MqdError::RingSize;
    for (dwords, bytes) in [(2usize, 8u64), (6, 24)] {
        let e = mes_pipe_ring_hqd(ring(dwords), &mqd, &eop, 0x40).err();
        assert!(
            matches!(e, Some(RingSize { bytes: b }) if b == bytes),
            "{e:?}"
        );
    }
}

/// Every `QUEUE_SIZE` a driver can write into the 6-bit field is decoded
/// without overflow by the MEC: a ring past the GPU's 48-bit address
/// space (QUEUE_SIZE 46..=63) is a `MecError::QueueSize` refusal.
/// `QUEUE_SIZE = 63` used to panic the model (`4 << 64` in its second
/// HQD decoder, now merged into `decode::mqd::Hqd`).
#[test]
fn an_oversized_queue_size_is_refused_not_a_model_panic() {
    use barebell_model::mec::MecError;
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(1)).unwrap();
    let q = gpu.queue::<16>(0x20, QueueConfig::default()).unwrap();
    let m = ComputeMqdV11::aql(&q.resources(3).mqd_params()).unwrap();
    let window = hqd_window(m.as_bytes());
    // CP_HQD_PQ_CONTROL is MQD dword 145 (v11_structs.h), window 17;
    // QUEUE_SIZE its low 6 bits (gc_11_0_0_sh_mask.h).
    for field in [46u32, 62, 63] {
        let mut w = window;
        w[17] = w[17] & !0x3f | field;
        assert_eq!(
            gpu.mec.map_window((1, 0, 0), &w),
            Err(MecError::QueueSize { field: field as u8 }),
            "QUEUE_SIZE {field}"
        );
    }
}

/// GC 11 and GC 12 have one MEC (`mec.num_mec = 1`,
/// `gfx_v11_0_sw_init()`): an HQD loaded directly on ME 2 is refused as
/// the KIQ refuses a MAP_QUEUES there; on ME 1 the same MQD gets past
/// the slot check.
#[test]
fn a_direct_hqd_on_me_2_of_a_one_mec_part_is_refused() {
    use barebell_model::mec::MecError;
    for g in [Generation::Gfx11, Generation::Gfx12] {
        let gpu = ModelGpu::new(g, Seed(1)).unwrap();
        let q = gpu.queue::<16>(0x20, QueueConfig::default()).unwrap();
        let m = ComputeMqdV11::aql(&q.resources(3).mqd_params()).unwrap();
        let window = hqd_window(m.as_bytes());
        assert_eq!(
            gpu.mec.map_window((2, 0, 0), &window),
            Err(MecError::NotAMecSlot),
            "{g:?}"
        );
        // ME 1 passes the slot check.
        let on_me1 = gpu.mec.map_window((1, 0, 0), &window);
        assert_ne!(on_me1, Err(MecError::NotAMecSlot), "{g:?}");
    }
}

/// MQD dwords 128..=183 (the HQD window, `v11_structs.h`) as the MEC's
/// register slots take them.
fn hqd_window(mqd: &[u8]) -> [u32; 56] {
    let mut window = [0u32; 56];
    for (i, w) in window.iter_mut().enumerate() {
        let at = (128 + i) * 4;
        *w = u32::from_le_bytes(mqd[at..at + 4].try_into().unwrap());
    }
    window
}

/// Forwards to the MEC model and keeps every register write.
struct Tap {
    mec: &'static barebell_model::mec::Mec,
    writes: std::cell::RefCell<Vec<(usize, u32)>>,
}

impl barebell::bus::RegisterBus for Tap {
    fn read32(&self, at: usize) -> u32 {
        self.mec.read32(at)
    }
    fn write32(&self, at: usize, v: u32) {
        self.writes.borrow_mut().push((at, v));
        self.mec.write32(at, v);
    }
}

/// The direct load starts the EOP fetcher as KFD's `hqd_load_v11()`
/// (amdgpu_amdkfd_gfx_v11.c) does: `CP_HQD_EOP_RPTR` gets the MQD's value
/// with `INIT_FETCHER` set (bit 31, gc_11_0_0_sh_mask.h), before
/// `CP_HQD_ACTIVE`. The model runs a queue without it, as silicon runs
/// Linux's KIQ and tinygrad's direct loads (docs/fidelity.md, "HQD fields
/// the fetcher needs"), so only the write itself shows it.
#[test]
fn a_direct_load_starts_the_eop_fetcher_as_kfd_does() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(1)).unwrap();
    let tap: &'static Tap = Box::leak(Box::new(Tap {
        mec: gpu.mec,
        writes: Default::default(),
    }));
    let mut mapper = DirectHqd::new(
        tap,
        clock(),
        GC_BASES,
        gpu.generation,
        Doorbells::linux_default(),
    )
    .unwrap();
    let q = gpu
        .queue::<16>(doorbell_index::USERQUEUE_START, QueueConfig::default())
        .unwrap();
    mapper.map(&q.resources(1)).unwrap();
    // gc_11_0_0_offset.h: regCP_HQD_EOP_RPTR 0x1fd1, regCP_HQD_ACTIVE
    // 0x1fab, both BASE_IDX 0.
    let at = |reg: u32| 4 * (GC_BASES.0[0] + reg) as usize;
    let writes = tap.writes.borrow();
    let eop = writes.iter().rposition(|w| w.0 == at(0x1fd1));
    let active = writes.iter().rposition(|w| w.0 == at(0x1fab));
    let (Some(eop), Some(active)) = (eop, active) else {
        panic!("no CP_HQD_EOP_RPTR or CP_HQD_ACTIVE write: {writes:x?}");
    };
    assert!(
        eop < active,
        "the fetcher is started after the queue is active"
    );
    assert_eq!(writes[eop].1 & 1 << 31, 1 << 31, "INIT_FETCHER clear");
    assert_eq!(writes[active].1 & 1, 1);
}
