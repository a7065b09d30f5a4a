//! The MES mapper against the MES firmware model, API v11 on a gfx11 part
//! and v12 on a gfx12 part: queues in two processes running AQL
//! dispatches, REMOVE_QUEUE, SUSPEND/RESUME, one test per rejection rule
//! (v11), the decoded v12 failure status, and the silent / error-status
//! faults.

use barebell::aql::packet::Dispatch;
use barebell::aql::queue::QueueConfig;
use barebell::aql::signal::Condition;
use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::error::DoorbellAllocError;
use barebell::gfx::error::MapError;
use barebell::gfx::error::MesError;
use barebell::gfx::error::MesStatus;
use barebell::gfx::mapper::{HqdRegs, QueueMapper};
use barebell::gfx::mes::{HwBases, Mes, MesApi, MesRing, Process, V11, V12};
use barebell::gfx::mqd::ComputeMqdV11;
use barebell::ip::Generation;
use barebell_firmware_if::mes_api::Frame;
use barebell_firmware_if::mes_api::v11::{self, opcode};
use barebell_model::mes::{MesEvent, MesFaults, MesModel, Refusal};
use barebell_model::{Seed, TickingClock};
use barebell_model_host::mec::{GC_BASES, ModelGpu, PlacedQueue};
use barebell_model_host::queue::signals;
use std::sync::{Arc, Mutex};

/// SET_HW_RSRC inputs for a rig with no discovery: no register bases
/// (the rig's MES model has no part to compare them with) and the two
/// SDMA engines every gfx11/gfx12 part here has.
const HW: HwBases = HwBases {
    gc: [0; 5],
    mmhub: [0; 5],
    osssys: [0; 5],
    sdma_engines: 2,
};
/// The rig has no GFXHUB: a context control that only enables its
/// context (`GCVM_CONTEXT1_CNTL.ENABLE_CONTEXT`), all a part-less MES
/// model checks.
#[allow(dead_code)]
const VM_CONTEXT_CNTL: u32 = 1;

const KERNEL: u64 = 0x5000;
const BOUND_NS: u64 = 1_000_000;
const RING: usize = 1024;
/// Two fake page-directory roots: the model keys its page tables on them.
const PTB: [u64; 2] = [0x7_0000_1000, 0x7_0000_2000];

fn clock() -> TickingClock {
    TickingClock::new(1_000)
}

type Mapper<A = V11> = Mes<'static, TickingClock, Box<dyn FnMut()>, RING, A>;

struct Rig<A: MesApi = V11> {
    gpu: ModelGpu,
    model: &'static MesModel,
    mes: Mapper<A>,
}

fn rig(seed: u64) -> Rig {
    rig_for::<V11>(seed)
}

fn rig_for<A: MesApi>(seed: u64) -> Rig<A> {
    let gpu = ModelGpu::new(A::GENERATION, Seed(seed)).unwrap();
    // Bring-up programs the MEC doorbell range (gfx_v11_0_kiq_init_register).
    Doorbells::linux_default()
        .program(
            gpu.mec,
            &HqdRegs::for_generation(A::GENERATION).unwrap(),
            &GC_BASES,
        )
        .unwrap();
    let (ring, model): (MesRing<'static, RING>, _) = gpu.mes::<RING>().unwrap();
    let model: &'static MesModel = Box::leak(Box::new(model));
    let pause: Box<dyn FnMut()> = Box::new(move || {
        model.service();
    });
    let mut mes = Mes::new(ring, clock(), pause, Doorbells::linux_default()).unwrap();
    for (key, ptb) in [(1u8, PTB[0]), (2, PTB[1])] {
        mes.register_process(
            key,
            Process {
                pasid: 0x8000 + u32::from(key),
                page_table_base: ptb,
                vm_context_cntl: VM_CONTEXT_CNTL,
                va_start: 0,
                va_end: barebell::gmc::hub::MAX_PFN - 1,
                context: gpu.process_context(),
            },
        )
        .unwrap();
    }
    Rig { gpu, model, mes }
}

/// SET_HW_RSRC as the bring-up sends it; on gfx12 around it the
/// doorbell registers `mes_v12_0_hw_init()` programs.
fn up<A: MesApi>(r: &mut Rig<A>) {
    use barebell::gfx::mes::rings::{enable_unmapped_doorbell_handling, init_aggregated_doorbell};
    let gfx12 = A::GENERATION == Generation::Gfx12;
    if gfx12 {
        enable_unmapped_doorbell_handling(r.gpu.mec, &GC_BASES).unwrap();
    }
    r.mes.set_hw_resources(&HW).unwrap();
    if gfx12 {
        init_aggregated_doorbell(r.gpu.mec, &GC_BASES).unwrap();
    }
}

#[test]
fn v12_set_hw_rsrc_1_follows_set_hw_rsrc() {
    let mut r = rig_for::<V12>(12);
    // Before SET_HW_RSRC: refused, with the decoded v12 status.
    let err = r.mes.set_hw_resources_1().unwrap_err();
    assert!(matches!(
        err,
        MesError::Failed {
            frame: "SET_HW_RSRC_1",
            status: MesStatus::V12(_)
        }
    ));
    up(&mut r);
    r.mes.set_hw_resources_1().unwrap();
    assert!(r.model.log().contains(&MesEvent::Done {
        opcode: opcode::SET_HW_RSRC_1
    }));
}

/// A queue whose memory is mapped in process `key`'s page table.
fn queue<A: MesApi>(r: &Rig<A>, key: u8, doorbell: u32) -> PlacedQueue<16> {
    let q = r.gpu.queue::<16>(doorbell, QueueConfig::default()).unwrap();
    for (b, l) in q.ranges() {
        r.model.map_process_memory(PTB[usize::from(key) - 1], b, l);
    }
    q
}

fn last_refusal(model: &MesModel) -> Option<(u8, Refusal)> {
    model.log().iter().rev().find_map(|e| match *e {
        MesEvent::Refused { opcode, why } => Some((opcode, why)),
        MesEvent::Done { .. } => None,
    })
}

const FAILED_ADD: MesError = MesError::Failed {
    frame: "ADD_QUEUE",
    status: MesStatus::NotCompleted { value: 0 },
};

#[test]
fn mes_v11_maps_queues_of_two_processes_and_runs_dispatches_on_gfx11() {
    for seed in 0..4 {
        end_to_end::<V11>(seed);
    }
}

#[test]
fn mes_v12_maps_queues_of_two_processes_and_runs_dispatches_on_gfx12() {
    for seed in 0..4 {
        end_to_end::<V12>(seed);
    }
}

fn end_to_end<A: MesApi>(seed: u64) {
    {
        let mut r = rig_for::<A>(seed);
        up(&mut r);
        r.mes.query_status().unwrap();
        let ran = Arc::new(Mutex::new(0usize));
        let r2 = ran.clone();
        r.gpu
            .mec
            .cp()
            .register_kernel(KERNEL, Box::new(move |_| *r2.lock().unwrap() += 1));
        let mut queues = Vec::new();
        let mut maps = Vec::new();
        for (i, key) in [1u8, 2, 1, 2].into_iter().enumerate() {
            let q = queue(&r, key, doorbell_index::USERQUEUE_START + i as u32);
            maps.push(r.mes.map(&q.resources(key)).unwrap());
            queues.push(q);
        }
        assert_eq!(r.model.queue_count(), 4);
        let sig = signals(&mut r.gpu.mec.cp(), 4, 2);
        for _ in 0..2 {
            for (q, s) in queues.iter().zip(sig) {
                let p = Dispatch::linear(64, 64, KERNEL, 0)
                    .signal(s.handle())
                    .packet()
                    .unwrap();
                q.queue.submit(&p, &clock(), BOUND_NS).unwrap();
            }
            r.gpu.mec.run_until_idle(100_000).unwrap();
        }
        for s in sig {
            assert_eq!(s.wait(Condition::Eq, 0, &clock(), BOUND_NS), Ok(0));
        }
        assert_eq!(*ran.lock().unwrap(), 8);
        for m in &maps {
            r.mes.unmap(m).unwrap();
        }
        assert_eq!(r.model.queue_count(), 0);
        assert!(r.gpu.mec.mapped_doorbells().is_empty());
        assert!(r.gpu.mec.cp().errors().is_empty());
        // Every frame the runtime sent was accepted: SET_HW_RSRC, one
        // standalone QUERY, 4 ADD + 4 REMOVE, each followed by a QUERY.
        let done = r
            .model
            .log()
            .iter()
            .filter(|e| matches!(e, MesEvent::Done { .. }))
            .count();
        assert_eq!(done, 2 * (1 + 1 + 4 + 4));
        assert!(last_refusal(r.model).is_none());
    }
}

#[test]
fn frame_and_ring_layout_on_the_wire() {
    // The ring holds the frame then the QUERY_SCHEDULER_STATUS trailer;
    // the doorbell carries the wptr in dwords.
    let mut r = rig(1);
    up(&mut r);
    let db = r.gpu.doorbells.0[doorbell_index::MES_RING0 as usize]
        .load(std::sync::atomic::Ordering::Acquire);
    assert_eq!(db, 128, "one frame + one trailer = 128 dwords");
    let log = r.model.log();
    assert_eq!(
        log,
        vec![
            MesEvent::Done {
                opcode: opcode::SET_HW_RSRC
            },
            MesEvent::Done {
                opcode: opcode::QUERY_SCHEDULER_STATUS
            }
        ]
    );
}

#[test]
fn rule_set_hw_rsrc_comes_first() {
    let mut r = rig(2);
    let q = queue(&r, 1, 0x20);
    // The runtime refuses on its own before sending anything...
    let err = r.mes.map(&q.resources(1)).unwrap_err();
    assert_eq!(
        err,
        MapError::Mes(MesError::NotInitialised { frame: "ADD_QUEUE" })
    );
    assert!(r.model.log().is_empty());
    // ...and MES refuses a raw ADD_QUEUE sent anyway.
    let (frame, _) = raw_add(&r, &q, 1, |_| {});
    assert_eq!(r.mes.submit("ADD_QUEUE", frame), Err(FAILED_ADD));
    assert_eq!(
        last_refusal(r.model),
        Some((opcode::ADD_QUEUE, Refusal::NoHwResources))
    );
}

/// Builds the MQD of `q` (process `key`), lets `tweak` spoil it, and
/// returns the ADD_QUEUE frame the mapper would send.
fn raw_add(
    r: &Rig,
    q: &PlacedQueue<16>,
    key: u8,
    tweak: impl FnOnce(&mut ComputeMqdV11),
) -> (v11::AddQueue, barebell::gfx::mqd::AqlMqdParams) {
    let res = q.resources(key);
    let mut params = res.mqd_params();
    params.vmid = 0;
    let mut m = ComputeMqdV11::aql(&params).unwrap();
    tweak(&mut m);
    // The page is not mapped to any HQD.
    q.mqd.write(&m);
    let p = Process {
        pasid: 0x8000 + u32::from(key),
        page_table_base: PTB[usize::from(key) - 1],
        vm_context_cntl: VM_CONTEXT_CNTL,
        va_start: 0,
        va_end: barebell::gmc::hub::MAX_PFN - 1,
        context: r.gpu.process_context(),
    };
    (V11::add_queue(&p, &res, &params), params)
}

fn rejected(
    tweak_mqd: impl FnOnce(&mut ComputeMqdV11),
    tweak_frame: impl FnOnce(&mut v11::AddQueue),
    map_memory: bool,
) -> Refusal {
    let mut r = rig(3);
    up(&mut r);
    let q = if map_memory {
        queue(&r, 1, 0x21)
    } else {
        r.gpu.queue::<16>(0x21, QueueConfig::default()).unwrap()
    };
    let (mut f, _) = raw_add(&r, &q, 1, tweak_mqd);
    tweak_frame(&mut f);
    assert_eq!(r.mes.submit("ADD_QUEUE", f), Err(FAILED_ADD));
    assert_eq!(r.model.queue_count(), 0);
    assert!(r.gpu.mec.mapped_doorbells().is_empty());
    let (op, why) = last_refusal(r.model).unwrap();
    assert_eq!(op, opcode::ADD_QUEUE);
    why
}

#[test]
fn rule_aql_control_must_be_set() {
    assert_eq!(
        rejected(|m| m.hqd.cp_hqd_aql_control = 0, |_| {}, true),
        Refusal::NotAql
    );
}

#[test]
fn rule_queue_size_must_match_the_ring() {
    // QUEUE_SIZE 8 means 512 dwords; the frame says 256 (16 packets).
    let why = rejected(
        |m| m.hqd.cp_hqd_pq_control = m.hqd.cp_hqd_pq_control & !0x3F | 8,
        |_| {},
        true,
    );
    assert_eq!(
        why,
        Refusal::QueueSizeMismatch {
            mqd_dwords: 512,
            frame_dwords: 256
        }
    );
}

/// A queue's doorbell may lie past `CP_MEC_DOORBELL_RANGE_*`: KFD's do
/// (the Linux peer measured dword 0x1000 against a range ending at byte
/// 0x450), and the range only decides which doorbells wake a power-gated
/// GC (`gfx_v9_0_kiq_init_register()`). The model refused it before.
#[test]
fn a_doorbell_past_the_mec_range_is_mapped() {
    // Doorbell 0x8B (64-bit) is one past USERQUEUE_END: dword 0x116.
    let mut r = rig(3);
    up(&mut r);
    let q = queue(&r, 1, 0x21);
    let (mut f, _) = raw_add(&r, &q, 1, |m| {
        m.hqd.cp_hqd_pq_doorbell_control = m
            .hqd
            .doorbell_control()
            .with_doorbell_offset(0x116)
            .into_bits()
    });
    f.doorbell_offset = barebell_firmware_if::mes_api::Le32::new(0x116);
    const { assert!(0x116 * 4 > doorbell_index::USERQUEUE_END * 8) };
    assert!(r.mes.submit("ADD_QUEUE", f).is_ok());
    assert_eq!(r.model.queue_count(), 1);
    assert!(r.gpu.mec.mapped_doorbells().contains(&0x116));
}

#[test]
fn rule_doorbell_unused() {
    let mut r = rig(4);
    up(&mut r);
    let a = queue(&r, 1, 0x22);
    r.mes.map(&a.resources(1)).unwrap();
    // Through the mapper: refused before any frame is written.
    let b = queue(&r, 2, 0x22);
    let frames_before = r.model.log().len();
    let err = r.mes.map(&b.resources(2)).unwrap_err();
    assert_eq!(
        err,
        MapError::Doorbell(DoorbellAllocError::InUse { index: 0x22 })
    );
    assert_eq!(r.model.log().len(), frames_before, "nothing was sent");
    // A raw frame reusing the doorbell: MES refuses it.
    let (f, _) = raw_add(&r, &b, 2, |_| {});
    assert_eq!(r.mes.submit("ADD_QUEUE", f), Err(FAILED_ADD));
    assert_eq!(
        last_refusal(r.model),
        Some((opcode::ADD_QUEUE, Refusal::DoorbellInUse { dword: 0x44 }))
    );
}

#[test]
fn rule_eop_buffer_present() {
    assert_eq!(
        rejected(|m| m.hqd.cp_hqd_eop_control = 0, |_| {}, true),
        Refusal::NoEop
    );
    assert_eq!(
        rejected(
            |m| {
                m.hqd.cp_hqd_eop_base_addr_lo = 0;
                m.hqd.cp_hqd_eop_base_addr_hi = 0
            },
            |_| {},
            true
        ),
        Refusal::NoEop
    );
}

#[test]
fn rule_ring_rptr_wptr_mapped_in_the_page_table() {
    // Memory the device can reach, but the frame's page-table root is not
    // a table at all (nothing registered there, nothing built): the GMC
    // model's walk faults on the ring.
    assert!(matches!(
        rejected(|_| {}, |_| {}, false),
        Refusal::VmFault { what: "ring", .. }
    ));
    // Mapped in process 1's table, but the frame names process 2's.
    assert!(matches!(
        rejected(
            |_| {},
            |f| f.page_table_base_addr = barebell_firmware_if::mes_api::Le64::new(PTB[1] | 1),
            true
        ),
        Refusal::VmFault { what: "ring", .. }
    ));
    // A registered window list (standing in for a table) without the
    // rptr's address.
    assert!(matches!(
        rejected(
            |m| {
                m.hqd.cp_hqd_pq_rptr_report_addr_lo = 0x20;
                m.hqd.cp_hqd_pq_rptr_report_addr_hi = 0;
            },
            |_| {},
            true
        ),
        Refusal::NotMapped {
            what: "rptr",
            address: 0x20
        }
    ));
    // The frame's wptr is not the MQD's: MES and the CP would watch
    // different words (model rule, as for legacy queues).
    assert!(matches!(
        rejected(
            |_| {},
            |f| f.wptr_addr = barebell_firmware_if::mes_api::Le64::new(0x10),
            true
        ),
        Refusal::WptrMismatch { frame: 0x10, .. }
    ));
    // wptr elsewhere, in both.
    assert!(matches!(
        rejected(
            |m| {
                m.hqd.cp_hqd_pq_wptr_poll_addr_lo = 0x10;
                m.hqd.cp_hqd_pq_wptr_poll_addr_hi = 0;
            },
            |f| f.wptr_addr = barebell_firmware_if::mes_api::Le64::new(0x10),
            true
        ),
        Refusal::NotMapped {
            what: "wptr",
            address: 0x10
        }
    ));
}

#[test]
fn rule_header_dwsize_and_opcode() {
    let mut r = rig(5);
    up(&mut r);
    let mut f = v11::QueryMesStatus::new();
    // dwsize 32 instead of 64.
    f.header = barebell_firmware_if::mes_api::Le32::new(
        barebell_firmware_if::mes_api::MesApiHeader::scheduler(opcode::RESUME)
            .with_dwsize(32)
            .into_bits(),
    );
    assert_eq!(
        r.mes.submit("RESUME", f),
        Err(MesError::Failed {
            frame: "RESUME",
            status: MesStatus::NotCompleted { value: 0 }
        })
    );
    assert!(matches!(
        last_refusal(r.model),
        Some((_, Refusal::BadHeader { .. }))
    ));
    let mut g = v11::QueryMesStatus::new();
    g.header = barebell_firmware_if::mes_api::Le32::new(
        barebell_firmware_if::mes_api::MesApiHeader::scheduler(opcode::SET_DEBUG_VMID).into_bits(),
    );
    assert!(r.mes.submit("SET_DEBUG_VMID", g).is_err());
    assert_eq!(
        last_refusal(r.model),
        Some((
            opcode::SET_DEBUG_VMID,
            Refusal::UnknownOpcode {
                opcode: opcode::SET_DEBUG_VMID
            }
        ))
    );
}

#[test]
fn remove_of_an_unknown_queue_is_refused() {
    let mut r = rig(6);
    up(&mut r);
    let mut f = v11::RemoveQueue::new();
    f.doorbell_offset = barebell_firmware_if::mes_api::Le32::new(0x50);
    assert_eq!(
        r.mes.submit("REMOVE_QUEUE", f),
        Err(MesError::Failed {
            frame: "REMOVE_QUEUE",
            status: MesStatus::NotCompleted { value: 0 }
        })
    );
    assert_eq!(
        last_refusal(r.model),
        Some((
            opcode::REMOVE_QUEUE,
            Refusal::UnknownQueue { doorbell: 0x50 }
        ))
    );
}

#[test]
fn silent_mes_is_a_typed_timeout_naming_the_frame() {
    let mut r = rig(7);
    r.model.set_faults(MesFaults {
        silent: true,
        error_status: false,
    });
    r.mes.timeout_ns = 50_000;
    assert!(!r.mes.has_pending_frame());
    match r.mes.set_hw_resources(&HW) {
        Err(MesError::Timeout {
            frame, seq, fence, ..
        }) => {
            assert_eq!(frame, "SET_HW_RSRC");
            assert_eq!((seq, fence), (1, 0));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    // MES may still run the timed-out frame: it stays unaccounted for.
    assert!(r.mes.has_pending_frame());
    // Once MES answers again, the next frame goes through (the ring
    // fence catches up with both sequence numbers).
    r.model.set_faults(MesFaults::default());
    r.mes.set_hw_resources(&HW).unwrap();
    assert!(!r.mes.has_pending_frame());
    let q = queue(&r, 1, 0x23);
    r.model.set_faults(MesFaults {
        silent: true,
        error_status: false,
    });
    let err = r.mes.map(&q.resources(1)).unwrap_err();
    assert!(matches!(
        err,
        MapError::Mes(MesError::Timeout {
            frame: "ADD_QUEUE",
            ..
        })
    ));
    // MES may still run the frame: the doorbell stays reserved.
    assert!(r.mes.doorbells().is_used(0x23));
}

/// Issue 21 finding 3: an ADD_QUEUE times out, MES then wakes up and
/// runs it late, and the next ADD_QUEUE (of a queue whose memory is not
/// in the page table) is refused. The late success of the first frame
/// must not read as success of the second (one status slot reused), and
/// the first frame's doorbell must stay reserved while MES may map it.
#[test]
fn late_completion_of_a_timed_out_add_queue_is_not_the_next_ones() {
    let mut r = rig(21);
    up(&mut r);
    r.mes.timeout_ns = 50_000;
    let q1 = queue(&r, 1, 0x23);
    r.model.set_faults(MesFaults {
        silent: true,
        error_status: false,
    });
    let err = r.mes.map(&q1.resources(1)).unwrap_err();
    assert!(matches!(
        err,
        MapError::Mes(MesError::Timeout {
            frame: "ADD_QUEUE",
            ..
        })
    ));
    assert!(
        r.mes.doorbells().is_used(0x23),
        "the timed-out ADD_QUEUE's doorbell was released while MES may still map it"
    );
    // MES wakes up: the backlog (q1's ADD_QUEUE) runs first, then the
    // next frame, which MES refuses (q2's memory is not mapped).
    r.model.set_faults(MesFaults::default());
    let q2 = r.gpu.queue::<16>(0x24, QueueConfig::default()).unwrap();
    let second = r.mes.map(&q2.resources(1));
    assert_eq!(
        second.map(|m| m.doorbell),
        Err(MapError::Mes(FAILED_ADD)),
        "MES refused the second ADD_QUEUE"
    );
    assert!(matches!(
        last_refusal(r.model),
        Some((opcode::ADD_QUEUE, _))
    ));
    // q1 was mapped late: its doorbell stays reserved; q2's is free.
    assert!(r.mes.doorbells().is_used(0x23));
    assert!(!r.mes.doorbells().is_used(0x24));
}

#[test]
fn error_status_is_a_typed_failure_with_the_decoded_status() {
    let mut r = rig(8);
    up(&mut r);
    r.model.set_faults(MesFaults {
        silent: false,
        error_status: true,
    });
    let q = queue(&r, 1, 0x24);
    let err = r.mes.map(&q.resources(1)).unwrap_err();
    assert_eq!(err, MapError::Mes(FAILED_ADD));
    assert_eq!(
        last_refusal(r.model),
        Some((opcode::ADD_QUEUE, Refusal::Injected))
    );
    assert!(!r.mes.doorbells().is_used(0x24));
}

#[test]
fn suspend_stops_the_queues_and_resume_restarts_them() {
    let mut r = rig(9);
    up(&mut r);
    let ran = Arc::new(Mutex::new(0usize));
    let r2 = ran.clone();
    r.gpu
        .mec
        .cp()
        .register_kernel(KERNEL, Box::new(move |_| *r2.lock().unwrap() += 1));
    let q = queue(&r, 1, 0x25);
    r.mes.map(&q.resources(1)).unwrap();
    let fence = signals(&mut r.gpu.mec.cp(), 1, 0);
    let fence_addr =
        fence[0].handle().0 + std::mem::offset_of!(barebell::aql::signal::AmdSignal, value) as u64;
    r.mes.suspend_all(fence_addr, 0x77).unwrap();
    assert!(r.model.is_suspended());
    assert_eq!(fence[0].value(), 0x77, "MES wrote the suspend fence");
    let sig = signals(&mut r.gpu.mec.cp(), 1, 1);
    let p = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(sig[0].handle())
        .packet()
        .unwrap();
    q.queue.submit(&p, &clock(), BOUND_NS).unwrap();
    r.gpu.mec.run_until_idle(1_000).unwrap();
    assert_eq!(*ran.lock().unwrap(), 0, "suspended: nothing runs");
    r.mes.resume_all().unwrap();
    r.gpu.mec.run_until_idle(100_000).unwrap();
    assert_eq!(sig[0].wait(Condition::Eq, 0, &clock(), BOUND_NS), Ok(0));
    assert_eq!(*ran.lock().unwrap(), 1);
}

#[test]
fn v12_failure_is_a_typed_error_with_the_decoded_mes_err_code() {
    use barebell_firmware_if::mes_api::v12;
    let mut r = rig_for::<V12>(10);
    // ADD_QUEUE before SET_HW_RSRC, sent raw: v12 MES writes MES_ERR_CODE.
    let q = queue(&r, 1, 0x26);
    let res = q.resources(1);
    let mut params = res.mqd_params();
    params.vmid = 0;
    // The page is not mapped to any HQD.
    barebell::gfx::mqd::build_aql(Generation::Gfx12, &q.mqd, &params).unwrap();
    let p = Process {
        pasid: 0x8001,
        page_table_base: PTB[0],
        vm_context_cntl: VM_CONTEXT_CNTL,
        va_start: 0,
        va_end: barebell::gmc::hub::MAX_PFN - 1,
        context: r.gpu.process_context(),
    };
    let f = V12::add_queue(&p, &res, &params);
    let err = r.mes.submit("ADD_QUEUE", f).unwrap_err();
    assert_eq!(
        err,
        MesError::Failed {
            frame: "ADD_QUEUE",
            status: MesStatus::V12(v12::Status::Failed {
                api_error: Refusal::NoHwResources.code(),
                opcode: opcode::ADD_QUEUE,
                misc_opcode: 0,
                category: v12::error_category::API,
            })
        }
    );
    // And through the mapper once initialised, with an injected error.
    up(&mut r);
    r.model.set_faults(MesFaults {
        silent: false,
        error_status: true,
    });
    let err = r.mes.map(&q.resources(1)).unwrap_err();
    assert_eq!(
        err,
        MapError::Mes(MesError::Failed {
            frame: "ADD_QUEUE",
            status: MesStatus::V12(v12::Status::Failed {
                api_error: Refusal::Injected.code(),
                opcode: opcode::ADD_QUEUE,
                misc_opcode: 0,
                category: v12::error_category::API,
            })
        })
    );
}

#[test]
fn v12_silent_mes_times_out_naming_the_frame() {
    let mut r = rig_for::<V12>(11);
    r.model.set_faults(MesFaults {
        silent: true,
        error_status: false,
    });
    r.mes.timeout_ns = 50_000;
    assert!(matches!(
        r.mes.query_status(),
        Err(MesError::Timeout {
            frame: "QUERY_SCHEDULER_STATUS",
            ..
        })
    ));
}

/// Page tables built by the runtime's `TableArena`, in device-visible
/// memory, identity-mapping what is passed in.
fn page_table(gpu: &ModelGpu, format: barebell::ip::Generation, ranges: &[(u64, u64)]) -> u64 {
    use barebell::gmc::pagetable::{Flags, Table, TableArena};
    let n = 64;
    let tables: &'static mut [Table] = Box::leak(vec![Table::EMPTY; n].into_boxed_slice());
    let base = tables.as_ptr() as u64;
    // SAFETY: leaked; the model only reads the tables.
    unsafe { gpu.map(base, (n * 4096) as u64) };
    let mut a = TableArena::new(tables, base, format);
    let flags = Flags {
        readable: true,
        writeable: true,
        executable: false,
        system: true,
        snooped: true,
    };
    for &(b, l) in ranges {
        let start = b & !0xFFF;
        let end = (b + l + 0xFFF) & !0xFFF;
        a.map(start, start, end - start, flags, false).unwrap();
    }
    a.root()
}

fn with_real_page_table<A: MesApi>(format: barebell::ip::Generation) {
    let mut r = rig_for::<A>(20);
    up(&mut r);
    let q = r.gpu.queue::<16>(0x27, QueueConfig::default()).unwrap();
    let root = page_table(&r.gpu, format, &q.ranges());
    r.mes
        .register_process(
            3,
            Process {
                pasid: 0x8003,
                page_table_base: root,
                vm_context_cntl: VM_CONTEXT_CNTL,
                va_start: 0,
                va_end: barebell::gmc::hub::MAX_PFN - 1,
                context: r.gpu.process_context(),
            },
        )
        .unwrap();
    let m = r.mes.map(&q.resources(3)).unwrap();
    let sig = signals(&mut r.gpu.mec.cp(), 1, 1);
    let p = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(sig[0].handle())
        .packet()
        .unwrap();
    r.gpu.mec.cp().register_kernel(KERNEL, Box::new(|_| {}));
    q.queue.submit(&p, &clock(), BOUND_NS).unwrap();
    r.gpu.mec.run_until_idle(100_000).unwrap();
    assert_eq!(sig[0].wait(Condition::Eq, 0, &clock(), BOUND_NS), Ok(0));
    r.mes.unmap(&m).unwrap();

    // A table that maps the EOP buffer but not the queue memory.
    let q2 = r.gpu.queue::<16>(0x28, QueueConfig::default()).unwrap();
    let partial = page_table(&r.gpu, format, &q2.ranges()[1..]);
    r.mes
        .register_process(
            4,
            Process {
                pasid: 0x8004,
                page_table_base: partial,
                vm_context_cntl: VM_CONTEXT_CNTL,
                va_start: 0,
                va_end: barebell::gmc::hub::MAX_PFN - 1,
                context: r.gpu.process_context(),
            },
        )
        .unwrap();
    let err = r.mes.map(&q2.resources(4)).unwrap_err();
    assert!(matches!(
        err,
        MapError::Mes(MesError::Failed {
            frame: "ADD_QUEUE",
            ..
        })
    ));
    match last_refusal(r.model) {
        Some((op, Refusal::VmFault { what, fault })) => {
            assert_eq!(op, opcode::ADD_QUEUE);
            assert_eq!(what, "ring");
            assert_eq!(fault.va, q2.mem.ring_address());
        }
        other => panic!("expected a VM fault on the ring, got {other:?}"),
    }
}

#[test]
fn rule_mapped_in_a_real_page_table_gfx11() {
    with_real_page_table::<V11>(barebell::ip::Generation::Gfx11);
}

#[test]
fn rule_mapped_in_a_real_page_table_gfx12() {
    with_real_page_table::<V12>(barebell::ip::Generation::Gfx12);
}

#[test]
fn mes_and_cp_on_a_thread_with_real_time() {
    use barebell::time::StdClock;
    use barebell_model::thread::MecThread;
    const NS: u64 = 2_000_000_000;
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(30)).unwrap();
    Doorbells::linux_default()
        .program(
            gpu.mec,
            &HqdRegs::for_generation(Generation::Gfx11).unwrap(),
            &GC_BASES,
        )
        .unwrap();
    let ran = Arc::new(Mutex::new(0usize));
    let r2 = ran.clone();
    gpu.mec
        .cp()
        .register_kernel(KERNEL, Box::new(move |_| *r2.lock().unwrap() += 1));
    let (ring, model) = gpu.mes::<RING>().unwrap();
    let model: &'static MesModel = Box::leak(Box::new(model));
    let q = gpu.queue::<16>(0x29, QueueConfig::default()).unwrap();
    for (b, l) in q.ranges() {
        model.map_process_memory(PTB[0], b, l);
    }
    let sig = signals(&mut gpu.mec.cp(), 1, 16);
    let t = MecThread::spawn(gpu.mec, vec![Box::new(move || model.service())]).unwrap();
    let mut mes: Mes<'_, _, _, RING, V11> = Mes::new(
        ring,
        StdClock::default(),
        core::hint::spin_loop,
        Doorbells::linux_default(),
    )
    .unwrap();
    mes.register_process(
        1,
        Process {
            pasid: 0x8001,
            page_table_base: PTB[0],
            vm_context_cntl: VM_CONTEXT_CNTL,
            va_start: 0,
            va_end: barebell::gmc::hub::MAX_PFN - 1,
            context: gpu.process_context(),
        },
    )
    .unwrap();
    mes.set_hw_resources(&HW).unwrap();
    let m = mes.map(&q.resources(1)).unwrap();
    let clock = StdClock::default();
    for _ in 0..16 {
        let p = Dispatch::linear(64, 64, KERNEL, 0)
            .signal(sig[0].handle())
            .packet()
            .unwrap();
        q.queue.submit(&p, &clock, NS).unwrap();
    }
    assert_eq!(sig[0].wait(Condition::Eq, 0, &clock, NS), Ok(0));
    mes.unmap(&m).unwrap();
    t.stop().unwrap();
    assert_eq!(*ran.lock().unwrap(), 16);
}

/// Issue 14, item 7: `page_table_base_addr` is a PDE, so it carries
/// `AMDGPU_PTE_VALID` (`amdgpu_gmc_pd_addr()`); the bare root address the
/// runtime sent before is refused.
#[test]
fn rule_page_table_base_is_a_valid_pde() {
    let why = rejected(
        |_| {},
        |f| f.page_table_base_addr = barebell_firmware_if::mes_api::Le64::new(PTB[0]),
        true,
    );
    assert_eq!(why, Refusal::PageTableNotValid { ptb: PTB[0] });
}

/// Issue 14, item 7: `vm_context_cntl` is the hub's context control; 0
/// (what the runtime sent before) does not even enable the context.
#[test]
fn rule_vm_context_cntl_is_the_hubs() {
    let why = rejected(
        |_| {},
        |f| f.vm_context_cntl = barebell_firmware_if::mes_api::Le32::new(0),
        true,
    );
    assert_eq!(why, Refusal::VmContextCntl { frame: 0, hub: 0 });
}

/// The process and gang contexts MES writes must be separate pages.
#[test]
fn rule_process_and_gang_contexts_are_separate_pages() {
    let why = rejected(
        |_| {},
        |f| f.gang_context_addr = f.process_context_addr,
        true,
    );
    assert!(matches!(why, Refusal::BadContext { .. }), "{why:?}");
    let why = rejected(
        |_| {},
        |f| f.process_context_addr = barebell_firmware_if::mes_api::Le64::new(0),
        true,
    );
    assert!(
        matches!(
            why,
            Refusal::BadContext {
                what: "process context",
                address: 0
            }
        ),
        "{why:?}"
    );
}

/// An AQL MQD must be added with `is_aql_queue` (MES reads `gds_size` as
/// the ring size only then).
#[test]
fn rule_aql_mqd_needs_is_aql_queue() {
    let why = rejected(
        |_| {},
        |f| f.flags = barebell_firmware_if::mes_api::Le32::new(0),
        true,
    );
    assert!(matches!(why, Refusal::BadAddQueue { .. }), "{why:?}");
}

/// SET_HW_RSRC with what the runtime filled before issue 14: no GDS, no
/// SDMA queues, no aggregated doorbells. Each is refused on its own.
#[test]
fn rule_set_hw_rsrc_carries_gds_sdma_and_aggregated_doorbells() {
    fn refused(tweak: impl FnOnce(&mut v11::SetHwResources)) -> Refusal {
        let mut r = rig(21);
        let mut good: Option<v11::SetHwResources> = None;
        // The frame the mapper sends, spoiled by `tweak`.
        let f = {
            use barebell::gfx::mes::MesApi;
            let mut f = V11::set_hw_resources(0x1000, 0x2000, &HW, 50);
            // Scheduler context and fence where the model can write.
            let q = r.gpu.queue::<16>(0x40, QueueConfig::default()).unwrap();
            let at = q.ranges()[0].0;
            f.g_sch_ctx_gpu_mc_ptr = barebell_firmware_if::mes_api::Le64::new(at);
            f.query_status_fence_gpu_mc_ptr = barebell_firmware_if::mes_api::Le64::new(at + 8);
            good.replace(f);
            tweak(&mut f);
            f
        };
        assert!(good.is_some());
        assert!(r.mes.submit("SET_HW_RSRC", f).is_err());
        last_refusal(r.model).unwrap().1
    }
    use barebell_firmware_if::mes_api::Le32;
    let what = |r: Refusal| match r {
        Refusal::BadHwResources { what } => what,
        other => panic!("{other:?}"),
    };
    assert!(what(refused(|f| f.gds_size = Le32::new(0))).starts_with("gds_size"));
    assert!(what(refused(|f| f.sdma_hqd_mask = [Le32::new(0); 2])).starts_with("sdma_hqd_mask"));
    assert!(
        what(refused(|f| f.aggregated_doorbells = [Le32::new(0); 5]))
            .starts_with("aggregated_doorbells")
    );
    // Inside the MEC queue range: a queue's doorbell, not MES's.
    assert!(
        what(refused(|f| f.aggregated_doorbells[0] = Le32::new(0x1A)))
            .starts_with("aggregated_doorbells")
    );
    assert!(
        what(refused(
            |f| f.query_status_fence_gpu_mc_ptr = barebell_firmware_if::mes_api::Le64::new(0)
        ))
        .starts_with("query_status_fence")
    );
}

/// gfx12: SET_HW_RSRC's `unmapped_doorbell_handling` needs
/// `CP_UNMAPPED_DOORBELL` enabled first, and queues need the aggregated
/// doorbells in `CP_MES_DOORBELL_CONTROL1..5`
/// (`mes_v12_0_enable_unmapped_doorbell_handling()`,
/// `mes_v12_0_init_aggregated_doorbell()`).
#[test]
fn rule_v12_doorbell_registers_programmed() {
    let mut r = rig_for::<V12>(22);
    assert!(r.mes.set_hw_resources(&HW).is_err());
    assert!(matches!(
        last_refusal(r.model),
        Some((_, Refusal::DoorbellRegisters { .. }))
    ));
    barebell::gfx::mes::rings::enable_unmapped_doorbell_handling(r.gpu.mec, &GC_BASES).unwrap();
    r.mes.set_hw_resources(&HW).unwrap();
    // Without init_aggregated_doorbell, ADD_QUEUE is refused.
    let q = queue(&r, 1, 0x22);
    let before = r.model.log().len();
    assert!(r.mes.map(&q.resources(1)).is_err());
    assert!(r.model.log().len() > before);
    assert!(matches!(
        last_refusal(r.model),
        Some((_, Refusal::DoorbellRegisters { .. }))
    ));
    barebell::gfx::mes::rings::init_aggregated_doorbell(r.gpu.mec, &GC_BASES).unwrap();
    r.mes.map(&q.resources(1)).unwrap();
}

/// `amdgpu_mes_init()`: `vmid_mask_gfxhub = 0xffffff00`, the VMIDs Linux
/// leaves to MES on the GFXHUB (8..=15 of the 16 `MAX_VMID_GCHUB` of
/// `mes_v11_api_def.h` has).
const LINUX_GFXHUB_VMIDS: u32 = 0xffff_ff00;

/// The VMID of the active HQD the MEC loaded for 64-bit doorbell `db`.
fn hqd_vmid(gpu: &ModelGpu, db: u32) -> Option<u8> {
    (0..4u8)
        .flat_map(|p| (0..8u8).map(move |q| (1u8, p, q)))
        .filter_map(|slot| gpu.mec.bank(slot))
        .map(barebell_decode::mqd::Hqd)
        .find(|h| h.active() && h.doorbell_dword() == db * 2)
        .map(|h| h.vmid())
}

/// A page-table root per extra process key (3..): the rig model keys its
/// window lists on it.
fn ptb_of(key: u8) -> u64 {
    match key {
        1 | 2 => PTB[usize::from(key) - 1],
        k => 0x7_0010_0000 + u64::from(k) * 0x1000,
    }
}

fn register<A: MesApi>(r: &mut Rig<A>, key: u8) {
    r.mes
        .register_process(
            key,
            Process {
                pasid: 0x8000 + u32::from(key),
                page_table_base: ptb_of(key),
                vm_context_cntl: VM_CONTEXT_CNTL,
                va_start: 0,
                va_end: barebell::gmc::hub::MAX_PFN - 1,
                context: r.gpu.process_context(),
            },
        )
        .unwrap();
}

fn queue_of<A: MesApi>(r: &Rig<A>, key: u8, doorbell: u32) -> PlacedQueue<16> {
    let q = r.gpu.queue::<16>(doorbell, QueueConfig::default()).unwrap();
    for (b, l) in q.ranges() {
        r.model.map_process_memory(ptb_of(key), b, l);
    }
    q
}

/// MES gives each process one VMID from the mask SET_HW_RSRC sent, the
/// same for all its queues, and writes it into the HQD it loads (the MQD
/// carries 0); REMOVE_QUEUE of a process's last queue frees the VMID.
#[test]
fn mes_gives_each_process_one_vmid_from_its_mask() {
    let mut r = rig(40);
    up(&mut r);
    register(&mut r, 3);
    let db = doorbell_index::USERQUEUE_START;
    let mut maps = Vec::new();
    for (i, key) in [1u8, 2, 1].into_iter().enumerate() {
        let q = queue_of(&r, key, db + i as u32);
        maps.push(r.mes.map(&q.resources(key)).unwrap());
        // The MQD the runtime wrote says VMID 0 (MES picks).
        use barebell_model::cpregs::{WINDOW_FIRST_MQD_DWORD, w};
        let mqd = q.mqd.address() as *const u32;
        // SAFETY: the leaked, 4 KiB MQD page (host address = device
        // address in the rig), read after the mapping returned.
        let mqd_vmid = unsafe { mqd.add(WINDOW_FIRST_MQD_DWORD + w::VMID).read_volatile() };
        assert_eq!(mqd_vmid, 0);
    }
    let v: Vec<u8> = (0..3).map(|i| hqd_vmid(&r.gpu, db + i).unwrap()).collect();
    for x in &v {
        assert!(LINUX_GFXHUB_VMIDS >> x & 1 == 1 && *x < 16, "VMID {x}");
    }
    assert_eq!(v[0], v[2], "two queues of one process share its VMID");
    assert_ne!(v[0], v[1], "two processes share no VMID");
    assert_eq!(r.model.process_vmid(0x8001), Some(v[0]));
    assert_eq!(r.model.process_vmid(0x8002), Some(v[1]));
    // Process 2's only queue goes: its VMID is free, and the next new
    // process may get it.
    r.mes.unmap(&maps[1]).unwrap();
    assert_eq!(r.model.process_vmid(0x8002), None);
    let q = queue_of(&r, 3, db + 3);
    r.mes.map(&q.resources(3)).unwrap();
    let taken = hqd_vmid(&r.gpu, db + 3).unwrap();
    assert_ne!(taken, v[0]);
    assert!(LINUX_GFXHUB_VMIDS >> taken & 1 == 1);
    // Process 1 keeps its VMID while it has a queue.
    r.mes.unmap(&maps[0]).unwrap();
    assert_eq!(r.model.process_vmid(0x8001), Some(v[0]));
    r.mes.unmap(&maps[2]).unwrap();
    assert_eq!(r.model.process_vmid(0x8001), None);
}

/// Eight processes hold VMIDs 8..=15; a ninth is refused (the model does
/// not oversubscribe VMIDs: a model rule), with the v12 status naming
/// the model's rule number; a further queue of a holding process still
/// gets the process's VMID until the HQDs run out.
#[test]
fn rule_no_free_vmid_for_a_ninth_process() {
    for gfx12 in [false, true] {
        let (refusal, status) = if gfx12 {
            ninth::<V12>()
        } else {
            ninth::<V11>()
        };
        assert_eq!(
            refusal,
            Refusal::NoFreeVmid {
                mask: LINUX_GFXHUB_VMIDS & 0xFFFF
            }
        );
        // v11 leaves the fence unwritten; v12 writes MES_ERR_CODE with
        // the model's rule number (27) as the API error and category API.
        match status {
            MesStatus::V12(barebell_firmware_if::mes_api::v12::Status::Failed {
                api_error: 27,
                opcode: o,
                category: 1,
                ..
            }) if gfx12 && o == opcode::ADD_QUEUE => {}
            MesStatus::NotCompleted { value: 0 } if !gfx12 => {}
            s => panic!("gfx12 {gfx12}: {s:?}"),
        }
    }
}

fn ninth<A: MesApi>() -> (Refusal, MesStatus) {
    let mut r = rig_for::<A>(41);
    up(&mut r);
    let db = doorbell_index::USERQUEUE_START;
    for key in 3..=9 {
        register(&mut r, key);
    }
    let mut vmids = Vec::new();
    for key in 1..=8u8 {
        let q = queue_of(&r, key, db + u32::from(key));
        r.mes.map(&q.resources(key)).unwrap();
        vmids.push(hqd_vmid(&r.gpu, db + u32::from(key)).unwrap());
    }
    vmids.sort_unstable();
    assert_eq!(vmids, (8..16).collect::<Vec<u8>>());
    let q = queue_of(&r, 9, db + 9);
    let err = r.mes.map(&q.resources(9)).unwrap_err();
    let MapError::Mes(MesError::Failed {
        frame: "ADD_QUEUE",
        status,
    }) = err
    else {
        panic!("{err:?}");
    };
    let (op, why) = last_refusal(r.model).unwrap();
    assert_eq!(op, opcode::ADD_QUEUE);
    (why, status)
}

/// `process_va_start/end` are page numbers (KFD's `add_queue_mes()`: `0`
/// and `max_pfn - 1`); a byte address past the 36-bit page number a
/// context's END register holds is refused, as is an inverted range.
#[test]
fn rule_process_va_range_is_in_pages() {
    use barebell_firmware_if::mes_api::Le64;
    let bytes = (1u64 << 47) - 1;
    assert_eq!(
        rejected(|_| {}, |f| f.process_va_end = Le64::new(bytes), true),
        Refusal::ProcessVaRange {
            start: 0,
            end: bytes
        }
    );
    let last = barebell::gmc::hub::MAX_PFN - 1;
    assert_eq!(
        rejected(|_| {}, |f| f.process_va_start = Le64::new(last + 1), true),
        Refusal::ProcessVaRange {
            start: last + 1,
            end: last
        }
    );
}

/// Issue 21 finding 1 (`MesMemory`): the ring has one writer. A second
/// mapper over the same ring is refused while the first lives (the two
/// would race on the plain ring dwords), and allowed once it is dropped.
#[test]
fn a_second_mapper_over_one_ring_is_refused() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(5)).unwrap();
    let (ring, _model): (MesRing<'static, RING>, _) = gpu.mes::<RING>().unwrap();
    let first: Mapper = Mes::new(ring, clock(), nop(), Doorbells::linux_default()).unwrap();
    let second: Result<Mapper, _> = Mes::new(ring, clock(), nop(), Doorbells::linux_default());
    assert_eq!(
        second.map(|_| ()).unwrap_err(),
        barebell::gfx::error::RingInUse {
            ring: ring.memory.ring_address(),
            table_full: false,
        }
    );
    drop(first);
    let again: Result<Mapper, _> = Mes::new(ring, clock(), nop(), Doorbells::linux_default());
    assert!(again.is_ok());
}

fn nop() -> Box<dyn FnMut()> {
    Box::new(|| {})
}
