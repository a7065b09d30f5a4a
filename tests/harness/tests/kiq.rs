//! KIQ MAP_QUEUES / UNMAP_QUEUES against the KIQ and MEC models, on a
//! gfx11 and a gfx12 part.

use barebell::aql::packet::Dispatch;
use barebell::aql::queue::QueueConfig;
use barebell::aql::signal::Condition;
use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::error::DoorbellAllocError;
use barebell::gfx::error::KiqTimeout;
use barebell::gfx::error::MapError;
use barebell::gfx::kiq::{Kiq, KiqRing};
use barebell::gfx::mapper::{HqdRegs, QueueMapper};
use barebell::ip::Generation;
use barebell_firmware_if::pm4::opcode;
use barebell_model::kiq::{KiqEvent, KiqHalt, KiqModel};
use barebell_model::mec::{MecError, MecEvent};
use barebell_model::{Seed, TickingClock};
use barebell_model_host::mec::{GC_BASES, ModelGpu};
use barebell_model_host::queue::signals;
use std::sync::{Arc, Mutex};

const KERNEL: u64 = 0x6000;
const BOUND_NS: u64 = 1_000_000;
const RING: usize = 256;

fn clock() -> TickingClock {
    TickingClock::new(1_000)
}

type Mapper = Kiq<'static, TickingClock, Box<dyn FnMut()>, RING>;

fn rig(generation: Generation, seed: u64) -> (ModelGpu, &'static KiqModel, Mapper) {
    let gpu = ModelGpu::new(generation, Seed(seed)).unwrap();
    Doorbells::linux_default()
        .program(
            gpu.mec,
            &HqdRegs::for_generation(generation).unwrap(),
            &GC_BASES,
        )
        .unwrap();
    let (ring, model): (KiqRing<'static, RING>, _) = gpu.kiq::<RING>().unwrap();
    let model: &'static KiqModel = Box::leak(Box::new(model));
    let pause: Box<dyn FnMut()> = Box::new(move || {
        model.service();
    });
    let kiq = Kiq::new(ring, clock(), pause, generation, Doorbells::linux_default()).unwrap();
    (gpu, model, kiq)
}

fn end_to_end(generation: Generation, seed: u64) {
    let (gpu, model, mut kiq) = rig(generation, seed);
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    assert_eq!(model.queue_mask(), 0xFFFF_FFFF);
    let ran = Arc::new(Mutex::new(0usize));
    let r2 = ran.clone();
    gpu.mec
        .cp()
        .register_kernel(KERNEL, Box::new(move |_| *r2.lock().unwrap() += 1));
    let mut queues = Vec::new();
    let mut maps = Vec::new();
    for (i, vmid) in [1u8, 2, 1, 2].into_iter().enumerate() {
        let q = gpu
            .queue::<16>(
                doorbell_index::USERQUEUE_START + i as u32,
                QueueConfig::default(),
            )
            .unwrap();
        maps.push(kiq.map(&q.resources(vmid)).unwrap());
        queues.push(q);
    }
    // MAP_QUEUES named the slots the mapper chose.
    let slots: Vec<(u8, u8)> = gpu
        .mec
        .events()
        .iter()
        .filter_map(|e| match *e {
            MecEvent::Activated {
                me: 1, pipe, queue, ..
            } => Some((pipe, queue)),
            _ => None,
        })
        .collect();
    let chosen: Vec<(u8, u8)> = maps.iter().map(|m| (m.pipe, m.queue)).collect();
    assert_eq!(slots, chosen);
    let sig = signals(&mut gpu.mec.cp(), 4, 2);
    for _ in 0..2 {
        for (q, s) in queues.iter().zip(sig) {
            let p = Dispatch::linear(64, 64, KERNEL, 0)
                .signal(s.handle())
                .packet()
                .unwrap();
            q.queue.submit(&p, &clock(), BOUND_NS).unwrap();
        }
        gpu.mec.run_until_idle(100_000).unwrap();
    }
    for s in sig {
        assert_eq!(s.wait(Condition::Eq, 0, &clock(), BOUND_NS), Ok(0));
    }
    assert_eq!(*ran.lock().unwrap(), 8);
    for m in &maps {
        kiq.unmap(m).unwrap();
    }
    assert!(gpu.mec.mapped_doorbells().is_empty());
    assert!(!model.is_halted());
    assert!(gpu.mec.cp().errors().is_empty());
    let maps_done = model
        .log()
        .iter()
        .filter(|e| matches!(e, KiqEvent::Done { opcode: o } if *o == opcode::MAP_QUEUES))
        .count();
    assert_eq!(maps_done, 4);
}

#[test]
fn kiq_runs_dispatches_on_gfx11() {
    for seed in 0..4 {
        end_to_end(Generation::Gfx11, seed);
    }
}

#[test]
fn kiq_runs_dispatches_on_gfx12() {
    for seed in 0..4 {
        end_to_end(Generation::Gfx12, seed);
    }
}

#[test]
fn doorbell_collision_is_refused_before_any_packet() {
    let (gpu, model, mut kiq) = rig(Generation::Gfx11, 1);
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    let a = gpu.queue::<16>(0x30, QueueConfig::default()).unwrap();
    let b = gpu.queue::<16>(0x30, QueueConfig::default()).unwrap();
    kiq.map(&a.resources(1)).unwrap();
    let before = model.log().len();
    let err = kiq.map(&b.resources(1)).unwrap_err();
    assert_eq!(
        err,
        MapError::Doorbell(DoorbellAllocError::InUse { index: 0x30 })
    );
    assert_eq!(model.log().len(), before);
}

/// A mapping unmapped once is not mapped any more: a second unmap is
/// refused before any packet reaches the KIQ (the queue's slot and its
/// doorbell were given back by the first).
#[test]
fn unmapping_twice_is_refused_before_any_packet() {
    let (gpu, model, mut kiq) = rig(Generation::Gfx11, 1);
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    let a = gpu.queue::<16>(0x30, QueueConfig::default()).unwrap();
    let m = kiq.map(&a.resources(1)).unwrap();
    kiq.unmap(&m).unwrap();
    let before = model.log().len();
    assert_eq!(kiq.unmap(&m), Err(MapError::NotMapped { doorbell: 0x30 }));
    assert_eq!(model.log().len(), before);
}

#[test]
fn silent_kiq_is_a_typed_timeout_naming_the_packet() {
    let (gpu, model, mut kiq) = rig(Generation::Gfx12, 2);
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    model.set_silent(true);
    kiq.timeout_ns = 50_000;
    let q = gpu.queue::<16>(0x31, QueueConfig::default()).unwrap();
    let err = kiq.map(&q.resources(1)).unwrap_err();
    match err {
        MapError::Kiq(KiqTimeout {
            packet, seq, fence, ..
        }) => {
            assert_eq!(packet, "MAP_QUEUES");
            // SET_RESOURCES was fence 1.
            assert_eq!((seq, fence), (2, 1));
        }
        other => panic!("expected a KIQ timeout, got {other:?}"),
    }
}

/// Issue 21 finding 3: a MAP_QUEUES that timed out may still run; its
/// HQD slot must stay reserved, so a later map takes another slot instead
/// of colliding with the late one on the MEC.
#[test]
fn timed_out_map_keeps_its_slot_when_the_kiq_runs_it_late() {
    let (gpu, model, mut kiq) = rig(Generation::Gfx11, 21);
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    kiq.timeout_ns = 50_000;
    let a = gpu.queue::<16>(0x34, QueueConfig::default()).unwrap();
    let b = gpu.queue::<16>(0x35, QueueConfig::default()).unwrap();
    model.set_silent(true);
    assert!(matches!(
        kiq.map(&a.resources(1)),
        Err(MapError::Kiq(KiqTimeout {
            packet: "MAP_QUEUES",
            ..
        }))
    ));
    // The KIQ wakes up and runs a's MAP_QUEUES before b's.
    model.set_silent(false);
    let m = kiq
        .map(&b.resources(1))
        .expect("b maps on a free slot after a's late MAP_QUEUES");
    assert_ne!((m.pipe, m.queue), (0, 0), "b took the timed-out map's slot");
    assert!(!model.is_halted());
}

#[test]
fn a_map_the_mec_refuses_halts_the_kiq() {
    // Two queues forced onto the same slot: the second MAP_QUEUES names a
    // busy HQD, the MEC refuses, the KIQ halts, the fence never comes.
    let (gpu, model, mut kiq) = rig(Generation::Gfx11, 3);
    kiq.timeout_ns = 50_000;
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    let a = gpu.queue::<16>(0x32, QueueConfig::default()).unwrap();
    let b = gpu.queue::<16>(0x33, QueueConfig::default()).unwrap();
    kiq.set_allowed_slots([1, 0, 0, 0]);
    let m = kiq.map(&a.resources(1)).unwrap();
    assert_eq!((m.pipe, m.queue), (0, 0));
    // The mapper itself knows the slot is taken.
    assert_eq!(kiq.map(&b.resources(1)), Err(MapError::NoFreeSlot));
    // A raw MAP_QUEUES onto the busy slot, sent anyway.
    let mut p = b.resources(1).mqd_params();
    p.vmid = 1;
    // b's MQD page is not mapped.
    barebell::gfx::mqd::build_aql(Generation::Gfx11, &b.mqd, &p).unwrap();
    let pkt = barebell_firmware_if::pm4::map_queues(
        barebell_firmware_if::pm4::QueueEngine::Compute,
        0,
        0,
        p.doorbell_dword,
        p.mqd_address,
        p.write_index_address,
    );
    let err = kiq.submit("MAP_QUEUES", &pkt).unwrap_err();
    assert_eq!(err.packet, "MAP_QUEUES");
    assert!(model.is_halted());
    assert_eq!(
        model.log().last(),
        Some(&KiqEvent::Halted {
            opcode: opcode::MAP_QUEUES,
            why: KiqHalt::Mec(MecError::SlotBusy)
        })
    );
}

/// The whole KIQ path with nothing handed to the model, in the topology
/// Linux 6.12 runs on GC 11: MES starts with both pipes, the KIQ ring is
/// loaded on MES pipe 1 by register programming (`mes_v11_0_kiq_setting()`
/// names it in RLC_CP_SCHEDULERS, `mes_v11_0_queue_init_register()` loads
/// it), the KIQ model takes its ring from those registers, and MAP_QUEUES
/// on it runs a user queue.
fn kiq_from_registers(generation: Generation) {
    use barebell::gfx::kiq::hqd::bring_up_on_mes;
    use barebell::gfx::mes::start::{MesStart, start};
    let gpu = ModelGpu::new(generation, Seed(40)).unwrap();
    Doorbells::linux_default()
        .program(
            gpu.mec,
            &HqdRegs::for_generation(generation).unwrap(),
            &GC_BASES,
        )
        .unwrap();
    gpu.mec.set_mes_versions([0x51, 0x52]);
    start(
        gpu.mec,
        &TickingClock::new(10_000),
        &GC_BASES,
        generation,
        &MesStart {
            uc_start: [0x1_0000_0000, 0x1_0010_0000],
            kiq_pipe: true,
        },
    )
    .unwrap();
    let (mem, mqd, eop) = gpu.kiq_parts::<RING>();
    bring_up_on_mes(
        gpu.mec,
        &GC_BASES,
        generation,
        mem,
        mqd,
        eop,
        doorbell_index::MES_RING1,
    )
    .unwrap();
    let model: &'static KiqModel = Box::leak(Box::new(
        KiqModel::from_mes_pipe(gpu.mec_arc.clone(), Default::default()).unwrap(),
    ));
    let pause: Box<dyn FnMut()> = Box::new(move || {
        model.service();
    });
    let ring = KiqRing {
        memory: mem,
        doorbell: gpu.doorbell(doorbell_index::MES_RING1).unwrap(),
    };
    let mut kiq: Mapper =
        Kiq::new(ring, clock(), pause, generation, Doorbells::linux_default()).unwrap();
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    let ran = Arc::new(Mutex::new(0usize));
    let r2 = ran.clone();
    gpu.mec
        .cp()
        .register_kernel(KERNEL, Box::new(move |_| *r2.lock().unwrap() += 1));
    let q = gpu
        .queue::<16>(doorbell_index::USERQUEUE_START, QueueConfig::default())
        .unwrap();
    let m = kiq.map(&q.resources(1)).unwrap();
    let sig = signals(&mut gpu.mec.cp(), 1, 1);
    let p = Dispatch::linear(64, 64, KERNEL, 0)
        .signal(sig[0].handle())
        .packet()
        .unwrap();
    q.queue.submit(&p, &clock(), BOUND_NS).unwrap();
    gpu.mec.run_until_idle(100_000).unwrap();
    assert_eq!(sig[0].wait(Condition::Eq, 0, &clock(), BOUND_NS), Ok(0));
    kiq.unmap(&m).unwrap();
    assert_eq!(*ran.lock().unwrap(), 1);
    // The KIQ reported its read pointer where its MQD said: SET_RESOURCES
    // (8) + MAP_QUEUES (7) + UNMAP_QUEUES (6) + three fences (5 each).
    // SAFETY: the KIQ memory is leaked; the model wrote the slot and has
    // stopped (the last fence completed).
    let rptr = unsafe { (mem.rptr_address() as *const u32).read_volatile() };
    assert_eq!(rptr, 8 + 7 + 6 + 3 * 5);
}

#[test]
fn kiq_on_mes_pipe_1_brought_up_by_registers_runs_a_queue_on_gfx11() {
    kiq_from_registers(Generation::Gfx11);
}

/// `amdgpu_gfx_enable_kcq()` sends SET_RESOURCES before any MAP_QUEUES;
/// the KIQ model halts on a compute MAP_QUEUES that comes first. The
/// mapper must not send one: the map fails and nothing reaches the KIQ.
#[test]
fn map_before_set_resources_is_refused_before_any_packet() {
    let (gpu, model, mut kiq) = rig(Generation::Gfx11, 5);
    kiq.timeout_ns = 50_000;
    let q = gpu.queue::<16>(0x34, QueueConfig::default()).unwrap();
    assert_eq!(kiq.map(&q.resources(1)), Err(MapError::KiqNoResources));
    assert_eq!(model.log(), [], "the KIQ saw a packet");
}

/// The queue mask `amdgpu_gfx_enable_kcq()` sends names exactly the slots
/// it maps (`mec * 32 + pipe * 8 + queue`); a MAP_QUEUES outside it
/// halts the KIQ.
#[test]
fn map_outside_the_queue_mask_halts_the_kiq() {
    let (gpu, model, mut kiq) = rig(Generation::Gfx11, 6);
    kiq.timeout_ns = 50_000;
    // Pipe 0 queue 0 only (bit 0).
    kiq.set_resources(1).unwrap();
    kiq.set_allowed_slots([0, 1, 0, 0]);
    let q = gpu.queue::<16>(0x35, QueueConfig::default()).unwrap();
    assert!(kiq.map(&q.resources(1)).is_err());
    assert_eq!(
        model.log().last(),
        Some(&KiqEvent::Halted {
            opcode: opcode::MAP_QUEUES,
            why: KiqHalt::NotInQueueMask {
                me: 1,
                pipe: 1,
                queue: 0
            }
        })
    );
}

/// Issue 21 finding 1 (`KiqMemory`): one writer per KIQ ring.
#[test]
fn a_second_mapper_over_one_kiq_ring_is_refused() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(5)).unwrap();
    let (ring, _model): (KiqRing<'static, RING>, _) = gpu.kiq::<RING>().unwrap();
    let mk = || -> Result<Mapper, _> {
        Kiq::new(
            ring,
            clock(),
            nop(),
            Generation::Gfx11,
            Doorbells::linux_default(),
        )
    };
    let first = mk().unwrap();
    assert_eq!(
        mk().map(|_| ()).unwrap_err(),
        barebell::gfx::error::RingInUse {
            ring: ring.memory.ring_address(),
            table_full: false,
        }
    );
    drop(first);
    assert!(mk().is_ok());
}

fn nop() -> Box<dyn FnMut()> {
    Box::new(|| {})
}

/// After a timeout the KIQ may still be reading the timed-out packet:
/// the next submit writes nothing over it while its fence has not come,
/// naming the old packet again, and the ring is usable once the KIQ
/// catches up.
#[test]
fn a_timed_out_packet_is_never_written_over() {
    let (gpu, model, mut kiq) = rig(Generation::Gfx11, 22);
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    kiq.timeout_ns = 50_000;
    let a = gpu.queue::<16>(0x36, QueueConfig::default()).unwrap();
    let b = gpu.queue::<16>(0x37, QueueConfig::default()).unwrap();
    model.set_silent(true);
    assert!(matches!(
        kiq.map(&a.resources(1)),
        Err(MapError::Kiq(KiqTimeout {
            packet: "MAP_QUEUES",
            seq: 2,
            ..
        }))
    ));
    assert!(kiq.has_pending_packet());
    let logged = model.log().len();
    // Still silent: b's MAP_QUEUES is not written; the old packet's
    // timeout comes back.
    assert!(matches!(
        kiq.map(&b.resources(1)),
        Err(MapError::Kiq(KiqTimeout {
            packet: "MAP_QUEUES",
            seq: 2,
            ..
        }))
    ));
    model.set_silent(false);
    let m = kiq
        .map(&b.resources(1))
        .expect("b maps once the KIQ caught up");
    assert!(!kiq.has_pending_packet());
    assert!(model.log().len() > logged);
    assert_ne!((m.pipe, m.queue), (0, 0));
    assert!(!model.is_halted());
}

/// `v11_compute_mqd` dwords (`// offset:` column of `v11_structs.h`) a
/// hand-built PM4 MQD sets; the HQD window starts at dword 128.
mod v11 {
    pub const MQD_BASE_LO: usize = 128;
    pub const MQD_BASE_HI: usize = 129;
    pub const PQ_BASE_LO: usize = 136;
    pub const PQ_BASE_HI: usize = 137;
    pub const PQ_RPTR: usize = 138;
    pub const RPTR_REPORT_LO: usize = 139;
    pub const RPTR_REPORT_HI: usize = 140;
    pub const WPTR_POLL_LO: usize = 141;
    pub const WPTR_POLL_HI: usize = 142;
    pub const DOORBELL_CONTROL: usize = 143;
    pub const PQ_CONTROL: usize = 145;
    pub const EOP_BASE_LO: usize = 165;
    pub const EOP_BASE_HI: usize = 166;
    pub const EOP_CONTROL: usize = 167;
    pub const PQ_WPTR_LO: usize = 182;
    pub const PQ_WPTR_HI: usize = 183;
}

#[repr(C, align(4096))]
struct Page4k([u32; 1024]);

/// A PM4 compute queue (`CP_HQD_AQL_CONTROL` 0, VMID 0) for KIQ
/// MAP_QUEUES, from an MQD built by hand (as `gfx_v11_0_compute_mqd_init()`
/// lays it out: 1024-dword ring, `QUEUE_SIZE` 9, 4 KiB EOP, `EOP_SIZE` 9).
struct KiqPm4 {
    gpu: ModelGpu,
    model: &'static KiqModel,
    kiq: Mapper,
    mqd: &'static Page4k,
    ring: &'static Page4k,
    ptrs: &'static Page4k,
    index: u32,
    dword: u32,
    wptr: u32,
}

fn page_addr(p: &Page4k) -> u64 {
    p as *const Page4k as u64
}

impl KiqPm4 {
    fn new() -> Self {
        let (gpu, model, mut kiq) = rig(Generation::Gfx11, 31);
        kiq.timeout_ns = 50_000;
        kiq.set_resources(0xFFFF_FFFF).unwrap();
        let leak = || -> &'static Page4k { Box::leak(Box::new(Page4k([0; 1024]))) };
        let (mqd, ring, eop, ptrs) = (leak(), leak(), leak(), leak());
        for p in [mqd, ring, eop, ptrs] {
            // SAFETY: leaked pages, touched by the device with atomics
            // and by the test with volatile accesses only.
            unsafe { gpu.map(page_addr(p), 4096) };
        }
        let index = doorbell_index::USERQUEUE_START + 5;
        let dword = index * 2;
        let (m, r, e, p) = (
            page_addr(mqd),
            page_addr(ring),
            page_addr(eop),
            page_addr(ptrs),
        );
        let words = [
            (v11::MQD_BASE_LO, m as u32),
            (v11::MQD_BASE_HI, (m >> 32) as u32),
            (v11::PQ_BASE_LO, (r >> 8) as u32),
            (v11::PQ_BASE_HI, (r >> 40) as u32),
            (v11::RPTR_REPORT_LO, p as u32),
            (v11::RPTR_REPORT_HI, (p >> 32) as u32),
            (v11::WPTR_POLL_LO, (p + 8) as u32),
            (v11::WPTR_POLL_HI, ((p + 8) >> 32) as u32),
            // DOORBELL_OFFSET at bit 2 (`gc_11_0_0_sh_mask.h`).
            (v11::DOORBELL_CONTROL, dword << 2),
            (v11::PQ_CONTROL, 9),
            (v11::EOP_BASE_LO, (e >> 8) as u32),
            (v11::EOP_BASE_HI, (e >> 40) as u32),
            (v11::EOP_CONTROL, 9),
        ];
        let q = KiqPm4 {
            gpu,
            model,
            kiq,
            mqd,
            ring,
            ptrs,
            index,
            dword,
            wptr: 0,
        };
        for (i, v) in words {
            q.poke(q.mqd, i, v);
        }
        q
    }

    fn poke(&self, p: &Page4k, i: usize, v: u32) {
        let base = p as *const Page4k as *mut u32;
        assert!(i < 1024);
        // SAFETY: inside the leaked page.
        unsafe { core::ptr::write_volatile(base.add(i), v) };
    }

    fn map(&mut self) {
        let pkt = barebell_firmware_if::pm4::map_queues(
            barebell_firmware_if::pm4::QueueEngine::Compute,
            0,
            0,
            self.dword,
            page_addr(self.mqd),
            page_addr(self.ptrs) + 8,
        );
        self.kiq.submit("MAP_QUEUES", &pkt).unwrap();
    }

    fn unmap(&mut self, action: u8) -> Result<(), KiqTimeout> {
        let pkt = barebell_firmware_if::pm4::unmap_queues(action, false, self.dword, (0, 0));
        self.kiq.submit("UNMAP_QUEUES", &pkt)
    }

    /// Appends `dwords`, stores the wptr at the poll address, rings the
    /// doorbell (`gfx_v11_0_ring_set_wptr_compute()`) and runs the MEC.
    fn submit(&mut self, dwords: &[u32]) {
        for d in dwords {
            self.poke(self.ring, self.wptr as usize % 1024, *d);
            self.wptr += 1;
        }
        let w = u64::from(self.wptr);
        let ptrs = self.ptrs as *const Page4k as *mut u32;
        // SAFETY: bytes 8..16 of the leaked pointer page: the poll word.
        unsafe { core::ptr::write_volatile(ptrs.add(2).cast::<u64>(), w) };
        self.gpu.doorbell(self.index).unwrap().ring(w);
        self.gpu.mec.run_until_idle(10_000).unwrap();
    }
}

/// `PACKET3(PACKET3_NOP, 0x3FFF)`, the one-dword filler (`nvd.h`).
const NOP_FILLER: u32 = 3 << 30 | 0x3FFF << 16 | 0x10 << 8;

/// `PACKET3(PACKET3_WRITE_DATA, 3)`, `DST_SEL(5)` (memory), one dword.
fn write_data(dst: u64, v: u32) -> [u32; 5] {
    [
        3 << 30 | 3 << 16 | 0x37 << 8,
        5 << 8,
        dst as u32,
        (dst >> 32) as u32,
        v,
    ]
}

fn mqd_dword(p: &Page4k, i: usize) -> u32 {
    // SAFETY: inside the leaked page; the device writes it atomically.
    unsafe { core::ptr::read_volatile(&p.0[i]) }
}

/// UNMAP_QUEUES `PREEMPT_QUEUES` saves a queue's state into its MQD, so
/// the same MQD mapped again resumes where it stopped; `RESET_QUEUES`
/// discards it, so the MQD as the driver wrote it restarts the queue at
/// dword 0 and the old packets run again. The runtime resets
/// (`amdgpu_gfx_disable_kcq()` does too) and never re-maps a reset queue;
/// this drives the KIQ with both actions by hand to show the difference.
#[test]
fn preempt_saves_a_pm4_queues_pointers_into_its_mqd_and_reset_does_not() {
    use barebell_firmware_if::pm4::unmap_action;
    for action in [unmap_action::PREEMPT_QUEUES, unmap_action::RESET_QUEUES] {
        let mut q = KiqPm4::new();
        let (a, b) = (page_addr(q.ptrs) + 0x100, page_addr(q.ptrs) + 0x140);
        q.map();
        // Seven dwords: a WRITE_DATA and two fillers.
        q.submit(&write_data(a, 1));
        q.submit(&[NOP_FILLER; 2]);
        assert_eq!(mqd_dword(q.ptrs, 0x40), 1);
        q.unmap(action).unwrap();
        assert!(!q.model.is_halted());
        assert!(q.gpu.mec.mapped_doorbells().is_empty());
        let preempt = action == unmap_action::PREEMPT_QUEUES;
        // PREEMPT: rptr 7 (dwords into the ring) and wptr 7 saved; RESET:
        // the MQD is as the driver wrote it.
        let want = if preempt { 7 } else { 0 };
        assert_eq!(mqd_dword(q.mqd, v11::PQ_RPTR), want);
        assert_eq!(mqd_dword(q.mqd, v11::PQ_WPTR_LO), want);
        assert_eq!(mqd_dword(q.mqd, v11::PQ_WPTR_HI), 0);
        // The driver clears `a`, maps the same MQD again and submits a
        // new packet at dword 7.
        q.poke(q.ptrs, 0x40, 0);
        q.map();
        q.submit(&write_data(b, 2));
        assert_eq!(mqd_dword(q.ptrs, 0x50), 2);
        let a_again = mqd_dword(q.ptrs, 0x40);
        if preempt {
            assert_eq!(a_again, 0, "the preempted queue ran its old packet again");
        } else {
            assert_eq!(a_again, 1, "the reset queue resumed instead of restarting");
        }
        assert!(q.gpu.mec.cp().errors().is_empty());
    }
}

/// A preemption waits for the queue's waves to drain; a hung queue's
/// never do, so `PREEMPT_QUEUES` blocks the KIQ (its fence never comes)
/// and the queue stays mapped, where `RESET_QUEUES` (what the runtime's
/// recovery and teardown send, as `gfx_v11_0_reset_kcq()` and
/// `amdgpu_gfx_disable_kcq()` do) takes it off.
#[test]
fn preempting_a_hung_queue_never_completes_where_a_reset_does() {
    use barebell_firmware_if::pm4::unmap_action;
    for action in [unmap_action::PREEMPT_QUEUES, unmap_action::RESET_QUEUES] {
        let (gpu, model, mut kiq) = rig(Generation::Gfx11, 32);
        kiq.timeout_ns = 50_000;
        kiq.set_resources(0xFFFF_FFFF).unwrap();
        let q = gpu.queue::<16>(0x30, QueueConfig::default()).unwrap();
        let m = kiq.map(&q.resources(1)).unwrap();
        let cp_queue = gpu
            .mec
            .events()
            .iter()
            .find_map(|e| match *e {
                MecEvent::Activated { cp_queue, .. } => Some(cp_queue),
                _ => None,
            })
            .unwrap();
        assert!(gpu.mec.cp().hang(cp_queue));
        let dword = q.resources(1).mqd_params().doorbell_dword;
        let pkt = barebell_firmware_if::pm4::unmap_queues(action, false, dword, (0, 0));
        let r = kiq.submit("UNMAP_QUEUES", &pkt);
        if action == unmap_action::PREEMPT_QUEUES {
            assert!(r.is_err(), "a preemption of a hung queue completed");
            assert_eq!(
                model.log().last(),
                Some(&KiqEvent::Halted {
                    opcode: opcode::UNMAP_QUEUES,
                    why: KiqHalt::PreemptHung { doorbell: dword }
                })
            );
            assert_eq!(gpu.mec.mapped_doorbells(), vec![dword]);
        } else {
            assert_eq!(r, Ok(()));
            assert!(gpu.mec.mapped_doorbells().is_empty());
            assert!(!model.is_halted());
        }
        let _ = m;
    }
}

/// A compute ring's ring test as `gfx_v11_0_ring_test_ring()` writes it
/// for a non-KIQ ring: `SET_UCONFIG_REG` of `SCRATCH_REG0` (offset 0x40
/// from `PACKET3_SET_UCONFIG_REG_START`, 0xC000: GC segment 1 0xA000 +
/// 0x2040); and a `WRITE_DATA` to a register (`DST_SEL(0)`). Both become
/// register stores for the device's bus, in order (BAR byte offsets);
/// the old CP model stopped the queue on either.
#[test]
fn a_compute_rings_register_stores_reach_the_bus() {
    let mut q = KiqPm4::new();
    q.map();
    q.submit(&[3 << 30 | 1 << 16 | 0x79 << 8, 0x40, 0xDEAD_BEEF]);
    q.submit(&[3 << 30 | 3 << 16 | 0x37 << 8, 0, 0xC041, 0, 7]);
    assert_eq!(
        q.gpu.mec.cp().take_register_stores(),
        vec![(0xC040 * 4, 0xDEAD_BEEF), (0xC041 * 4, 7)]
    );
    assert!(
        q.gpu.mec.cp().errors().is_empty(),
        "{:?}",
        q.gpu.mec.cp().errors()
    );
}

/// Unmapping gives the queue's slot back: the next queue mapped takes
/// that slot again (the lowest free one), not one of the next pipe's.
#[test]
fn an_unmapped_slot_is_taken_again() {
    let (gpu, _model, mut kiq) = rig(Generation::Gfx11, 1);
    kiq.set_resources(0xFFFF_FFFF).unwrap();
    let a = gpu.queue::<16>(0x30, QueueConfig::default()).unwrap();
    let first = kiq.map(&a.resources(1)).unwrap();
    kiq.unmap(&first).unwrap();
    let b = gpu.queue::<16>(0x34, QueueConfig::default()).unwrap();
    let again = kiq.map(&b.resources(1)).unwrap();
    assert_eq!((again.pipe, again.queue), (first.pipe, first.queue));
    kiq.unmap(&again).unwrap();
}
