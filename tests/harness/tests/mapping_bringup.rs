//! The gfx11 bring-up chain with nothing handed to the models: MES started
//! through CP_MES_CNTL, the KIQ brought up by register programming, the MES
//! scheduler ring mapped by KIQ MAP_QUEUES, then SET_HW_RSRC, a user queue
//! by ADD_QUEUE, a dispatch, REMOVE_QUEUE. Each model learns where its ring
//! is only from what the runtime programmed.

use barebell::aql::packet::Dispatch;
use barebell::aql::queue::QueueConfig;
use barebell::aql::signal::Condition;
use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::error::MapError;
use barebell::gfx::kiq::hqd::{KiqSlot, bring_up};
use barebell::gfx::kiq::{Kiq, KiqRing};
use barebell::gfx::mapper::{HqdRegs, QueueMapper};
use barebell::gfx::mes::rings::MesRingParts;
use barebell::gfx::mes::rings::map_scheduler_ring;
use barebell::gfx::mes::start::{MesStart, start};
use barebell::gfx::mes::{HwBases, Mes, MesRing, Process, V11};
use barebell::ip::Generation;
use barebell_model::host::signals;
use barebell_model::kiq::{KiqEvent, KiqHalt, KiqModel};
use barebell_model::mec_host::{GC_BASES, ModelGpu};
use barebell_model::mes::{MesApiVersion, MesModel};
use barebell_model::{Seed, TickingClock};

const KERNEL: u64 = 0x7000;
const BOUND_NS: u64 = 1_000_000;
const KIQ_RING: usize = 256;
const MES_RING: usize = 1024;
const PTB: u64 = 0x7_0000_3000;

fn clock() -> TickingClock {
    TickingClock::new(1_000)
}

type KiqMapper = Kiq<'static, TickingClock, Box<dyn FnMut()>, KIQ_RING>;

fn kiq_up(gpu: &ModelGpu) -> (KiqMapper, &'static KiqModel<'static, 'static>) {
    Doorbells::linux_default()
        .program(
            gpu.mec,
            &HqdRegs::for_generation(Generation::Gfx11),
            &GC_BASES,
        )
        .unwrap();
    let (mem, mqd, eop) = gpu.kiq_parts::<KIQ_RING>();
    let slot = KiqSlot {
        pipe: 1,
        queue: 0,
        doorbell: doorbell_index::KIQ,
    };
    // SAFETY: leaked, device-mapped memory; the MQD page is fresh.
    unsafe { bring_up(gpu.mec, &GC_BASES, Generation::Gfx11, slot, mem, mqd, eop) }.unwrap();
    let model: &'static KiqModel<'static, 'static> =
        Box::leak(Box::new(KiqModel::from_mec(gpu.mec).unwrap()));
    let pause: Box<dyn FnMut()> = Box::new(move || {
        model.service();
    });
    let ring = KiqRing {
        memory: mem,
        doorbell: gpu.doorbell(doorbell_index::KIQ).unwrap(),
    };
    let mut kiq = Kiq::new(
        ring,
        clock(),
        pause,
        Generation::Gfx11,
        Doorbells::linux_default(),
    );
    kiq.set_allowed_slots([0xFF, 0xFE, 0xFF, 0xFF]);
    (kiq, model)
}

#[test]
fn gfx11_bring_up_chain_from_registers_to_a_dispatch() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(50)).unwrap();
    let versions = start(
        gpu.mec,
        &TickingClock::new(10_000),
        &GC_BASES,
        Generation::Gfx11,
        &MesStart {
            uc_start: [0x10_0000, 0],
            kiq_pipe: false,
        },
    )
    .unwrap();
    let (mut kiq, kiq_model) = kiq_up(&gpu);
    let (mes_mem, mes_mqd, mes_eop) = gpu.mes_parts::<MES_RING>();
    // SAFETY: leaked, device-mapped memory; the MQD page is fresh.
    unsafe {
        map_scheduler_ring(
            &mut kiq,
            MesRingParts {
                ring: mes_mem,
                mqd: mes_mqd,
                eop: mes_eop,
                doorbell: doorbell_index::MES_RING0,
            },
        )
    }
    .unwrap();
    let r = gpu.mec.mes_ring().unwrap();
    assert_eq!(
        (r.ring, r.ring_dwords, r.doorbell_dword),
        (
            mes_mem.ring_address(),
            MES_RING as u64,
            doorbell_index::MES_RING0 * 2
        )
    );
    assert!(!kiq_model.is_halted());

    let model: &'static MesModel<'static, 'static> = Box::leak(Box::new(
        MesModel::from_mec(gpu.mec, MesApiVersion::V11).unwrap(),
    ));
    let pause: Box<dyn FnMut()> = Box::new(move || {
        model.service();
    });
    let ring = MesRing {
        memory: mes_mem,
        doorbell: gpu.doorbell(doorbell_index::MES_RING0).unwrap(),
    };
    let mut mes: Mes<'_, _, _, MES_RING, V11> =
        Mes::new(ring, clock(), pause, Doorbells::linux_default());
    mes.set_versions(versions);
    mes.set_hw_resources(&HwBases::default()).unwrap();
    mes.query_status().unwrap();
    mes.register_process(
        1,
        Process {
            pasid: 0x8001,
            page_table_base: PTB,
            va_start: 0,
            va_end: (1 << 47) - 1,
            context: gpu.process_context(),
        },
    )
    .unwrap();
    let q = gpu
        .queue::<16>(doorbell_index::USERQUEUE_START, QueueConfig::default())
        .unwrap();
    for (b, l) in q.ranges() {
        model.map_process_memory(PTB, b, l);
    }
    // SAFETY: leaked, device-mapped queue memory.
    let m = unsafe { mes.map(&q.resources(1)) }.unwrap();
    gpu.mec.cp().register_kernel(KERNEL, Box::new(|_| {}));
    let sig = signals(&mut gpu.mec.cp(), 1, 1);
    let p = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(sig[0].handle())
        .packet()
        .unwrap();
    q.queue.submit(&p, &clock(), BOUND_NS).unwrap();
    gpu.mec.run_until_idle(100_000).unwrap();
    assert_eq!(sig[0].wait(Condition::Eq, 0, &clock(), BOUND_NS), Ok(0));
    mes.unmap(&m).unwrap();
    assert!(gpu.mec.mapped_doorbells().is_empty());
}

#[test]
fn mapping_the_scheduler_ring_before_mes_runs_stalls_the_kiq() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(51)).unwrap();
    let (mut kiq, kiq_model) = kiq_up(&gpu);
    kiq.timeout_ns = 50_000;
    let (mes_mem, mes_mqd, mes_eop) = gpu.mes_parts::<MES_RING>();
    // SAFETY: as above.
    let err = unsafe {
        map_scheduler_ring(
            &mut kiq,
            MesRingParts {
                ring: mes_mem,
                mqd: mes_mqd,
                eop: mes_eop,
                doorbell: doorbell_index::MES_RING0,
            },
        )
    }
    .unwrap_err();
    assert!(matches!(
        err,
        MapError::Kiq(barebell::gfx::error::KiqTimeout {
            packet: "MAP_QUEUES (MES scheduler ring)",
            ..
        })
    ));
    assert!(matches!(
        kiq_model.log().last(),
        Some(KiqEvent::Halted {
            why: KiqHalt::BadMap { .. },
            ..
        })
    ));
    assert!(gpu.mec.mes_ring().is_none());
}

/// gfx12 uni-MES: both MES pipes started, pipe 1's ring loaded by register
/// programming, pipe 0's scheduler ring mapped by a `map_legacy_kq`
/// ADD_QUEUE on pipe 1, then SET_HW_RSRC/_1, a user queue, a dispatch.
#[test]
fn gfx12_uni_mes_chain_from_registers_to_a_dispatch() {
    use barebell::gfx::mes::V12;
    use barebell::gfx::mes::rings::load_pipe_ring;
    use barebell::gfx::mes::rings::map_legacy_scheduler_ring;
    let gpu = ModelGpu::new(Generation::Gfx12, Seed(52)).unwrap();
    Doorbells::linux_default()
        .program(
            gpu.mec,
            &HqdRegs::for_generation(Generation::Gfx12),
            &GC_BASES,
        )
        .unwrap();
    // Model firmware revision 0x8c on both pipes (>= 0x8b: timer 50).
    gpu.mec.set_mes_versions([1 << 12 | 0x8c, 1 << 12 | 0x8c]);
    let versions = start(
        gpu.mec,
        &TickingClock::new(10_000),
        &GC_BASES,
        Generation::Gfx12,
        &MesStart {
            uc_start: [0x10_0000, 0x20_0000],
            kiq_pipe: true,
        },
    )
    .unwrap();
    assert_eq!(versions.kiq, Some(1 << 12 | 0x8c));

    // Pipe 1 (uni-MES's KIQ): its ring by register programming.
    let (m1, q1, e1) = gpu.mes_parts::<MES_RING>();
    // SAFETY: leaked, device-mapped memory; the MQD page is fresh.
    unsafe {
        load_pipe_ring(
            gpu.mec,
            &GC_BASES,
            Generation::Gfx12,
            1,
            MesRingParts {
                ring: m1,
                mqd: q1,
                eop: e1,
                doorbell: doorbell_index::MES_RING1,
            },
        )
    }
    .unwrap();
    let pipe1: &'static MesModel<'static, 'static> = Box::leak(Box::new(
        MesModel::from_mec_pipe(gpu.mec, 1, MesApiVersion::V12).unwrap(),
    ));
    let pause1: Box<dyn FnMut()> = Box::new(move || {
        pipe1.service();
    });
    let mut kiq_pipe: Mes<'_, _, _, MES_RING, V12> = Mes::new(
        MesRing {
            memory: m1,
            doorbell: gpu.doorbell(doorbell_index::MES_RING1).unwrap(),
        },
        clock(),
        pause1,
        Doorbells::linux_default(),
    );
    kiq_pipe.set_versions(versions);
    kiq_pipe.set_hw_resources(&HwBases::default()).unwrap();
    kiq_pipe.set_hw_resources_1().unwrap();

    // Pipe 0's scheduler ring, mapped through pipe 1.
    let (m0, q0, e0) = gpu.mes_parts::<MES_RING>();
    // SAFETY: as above.
    unsafe {
        map_legacy_scheduler_ring(
            &mut kiq_pipe,
            MesRingParts {
                ring: m0,
                mqd: q0,
                eop: e0,
                doorbell: doorbell_index::MES_RING0,
            },
        )
    }
    .unwrap();
    let r = gpu.mec.mes_ring().unwrap();
    assert_eq!(r.ring, m0.ring_address());

    let sched: &'static MesModel<'static, 'static> = Box::leak(Box::new(
        MesModel::from_mec(gpu.mec, MesApiVersion::V12).unwrap(),
    ));
    let pause0: Box<dyn FnMut()> = Box::new(move || {
        sched.service();
    });
    let mut mes: Mes<'_, _, _, MES_RING, V12> = Mes::new(
        MesRing {
            memory: m0,
            doorbell: gpu.doorbell(doorbell_index::MES_RING0).unwrap(),
        },
        clock(),
        pause0,
        Doorbells::linux_default(),
    );
    mes.set_versions(versions);
    mes.set_hw_resources(&HwBases::default()).unwrap();
    mes.set_hw_resources_1().unwrap();
    mes.register_process(
        1,
        Process {
            pasid: 0x8001,
            page_table_base: PTB,
            va_start: 0,
            va_end: (1 << 47) - 1,
            context: gpu.process_context(),
        },
    )
    .unwrap();
    let q = gpu
        .queue::<16>(doorbell_index::USERQUEUE_START, QueueConfig::default())
        .unwrap();
    for (b, l) in q.ranges() {
        sched.map_process_memory(PTB, b, l);
    }
    // SAFETY: leaked, device-mapped queue memory.
    let m = unsafe { mes.map(&q.resources(1)) }.unwrap();
    gpu.mec.cp().register_kernel(KERNEL, Box::new(|_| {}));
    let sig = signals(&mut gpu.mec.cp(), 1, 1);
    let p = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(sig[0].handle())
        .packet()
        .unwrap();
    q.queue.submit(&p, &clock(), BOUND_NS).unwrap();
    gpu.mec.run_until_idle(100_000).unwrap();
    assert_eq!(sig[0].wait(Condition::Eq, 0, &clock(), BOUND_NS), Ok(0));
    mes.unmap(&m).unwrap();
}
