//! Issue 20, item 4: a hang injected in the CP (a compute queue), in MES
//! and in the KIQ is detected within its bound, recovered at the lowest
//! rung that works, and every packet in flight is accounted for, by
//! packet index, as completed or lost. A device that falls off the bus is
//! reported as gone, not hung.
//!
//! Bounds: the queue watchdog is `recover::WATCHDOG_NS` (500 ms); a
//! scheduler's is its API bound (MES and the KIQ: 2.1 s,
//! `mes/mod.rs::API_TIMEOUT_NS`, `kiq/mod.rs::KIQ_TIMEOUT_NS`). Time is
//! the model's simulated clock, which the runtime's waits read.

use barebell::aql::watchdog::{Fate, Ledger, PacketFate};
use barebell::aql::{BarrierKind, BarrierPacket, Fences, SignalMemory};
use barebell::platform::Platform;
use barebell_bringup::recover::{self, Detected, Reinit, Rung, RungOutcome};
use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::mec::{MecEvent, MecFaults};
use barebell_model::mes::MesEvent as MesLog;
use barebell_model::{VirtualGpu, parts};
use barebell_tests::{FirmwareDir, virtual_gpu};

/// What one pause of the model may add past a bound.
const SLACK_NS: u64 = 50_000_000;
const SCHEDULER_BOUND_NS: u64 = 2_100_000_000;

fn up<'g>(gpu: &'g VirtualGpu, mapping: Mapping) -> barebell_bringup::Gpu<'g> {
    let fw = FirmwareDir::system();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        ..Default::default()
    };
    match barebell_bringup::run(gpu, &fw, &opts, &Quiet) {
        Ok(g) => g,
        Err(e) => panic!("{e}\n{}", gpu.firmware_logs()),
    }
}

/// Completion signals in the ring area (device-visible in VMID0 and the
/// process tables).
fn signals<'p>(g: &mut barebell_bringup::Gpu<'p>, n: usize) -> Vec<&'p SignalMemory> {
    // Completion signals are the user's: in the ring area's user part,
    // which the queue's page tables map (the driver part is VMID0 only,
    // and the CP writes a user queue's signal through the queue's VMID).
    let area = g.user_rings.as_mut().unwrap();
    (0..n)
        .map(|_| area.put(SignalMemory::new(1)).unwrap().get())
        .collect()
}

/// Tracks then submits one barrier completing `s`; returns its id.
fn submit<'p, const N: usize>(
    g: &barebell_bringup::Gpu<'p>,
    ledger: &mut Ledger<'p, N>,
    s: &'p SignalMemory,
) -> u64 {
    let q = g.queue.as_ref().unwrap();
    let id = q.queue.write_index();
    ledger.track(id, s, 0).unwrap();
    let p = BarrierPacket::new(BarrierKind::And, &[], s.handle(), Fences::SYSTEM).unwrap();
    let got = q
        .queue
        .submit(&p, g.platform.clock(), 1_000_000_000)
        .unwrap();
    assert_eq!(got, id);
    id
}

fn recovered_at(r: &recover::RecoveryReport, rung: Rung) {
    assert_eq!(r.recovered_at, Some(rung), "{r}");
    let last = r.rungs.last().unwrap();
    assert_eq!(last.0, rung, "{r}");
    assert!(matches!(last.1, RungOutcome::Recovered(_)), "{r}");
}

/// A queue hang: two packets complete, then the queue hangs and three
/// more are submitted. The watchdog fires within its bound; the queue
/// rung alone recovers; 2 completed and 3 lost (never fetched), by id.
fn cp_hang(part: barebell_model::Part, mapping: Mapping) {
    let name = part.name;
    let gpu = virtual_gpu(part, 21);
    let mut g = up(&gpu, mapping);
    let sig = signals(&mut g, 5);
    let mut ledger: Ledger<'_, 8> = Ledger::new();
    let mut ids = Vec::new();
    for s in &sig[..2] {
        ids.push(submit(&g, &mut ledger, s));
    }
    recover::watch(&g, &mut ledger, recover::WATCHDOG_NS).unwrap();
    let doorbell = g.queue.as_ref().unwrap().doorbell;
    assert!(gpu.hang_queue(doorbell), "{name} {mapping:?}");
    for s in &sig[2..] {
        ids.push(submit(&g, &mut ledger, s));
    }
    let t = gpu.clock().now_ns();
    let d = recover::watch(&g, &mut ledger, recover::WATCHDOG_NS).unwrap_err();
    let took = gpu.clock().now_ns() - t;
    match d {
        Detected::Queue(s) => {
            assert_eq!(s.read_index, ids[2], "{name} {mapping:?}");
            assert_eq!(s.write_index, ids[4] + 1, "{name} {mapping:?}");
        }
        other => panic!("{name} {mapping:?}: {other}"),
    }
    assert!(
        (recover::WATCHDOG_NS..=recover::WATCHDOG_NS + SLACK_NS).contains(&took),
        "{name} {mapping:?}: detected after {took} ns"
    );
    let r = recover::recover(&mut g, &mut ledger, d);
    recovered_at(&r, Rung::Queue);
    assert_eq!(r.reinit, Reinit::Queue, "{r}");
    let want: Vec<PacketFate> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| PacketFate {
            id,
            fate: if i < 2 {
                Fate::Completed
            } else {
                Fate::Lost { fetched: false }
            },
        })
        .collect();
    assert_eq!(r.packets, want, "{name} {mapping:?}: {r}");
    assert!(ledger.is_empty());
    // The model: no HQD active, no CP reset needed.
    assert!(
        gpu.gfx11()
            .unwrap()
            .mec()
            .active_hqds()
            .iter()
            .all(|h| h.slot.0 != 1),
        "{name} {mapping:?}: {:?}",
        gpu.gfx11().unwrap().mec().active_hqds()
    );
    assert_eq!(gpu.gfx11().unwrap().mec().cp_resets(), 0);
    if mapping == Mapping::Mes {
        // RESET (opcode 8) answered before REMOVE_QUEUE (3).
        let log = gpu.gfx11().unwrap().mes_log();
        let reset = log.iter().position(|e| *e == MesLog::Done { opcode: 8 });
        let remove = log.iter().rposition(|e| *e == MesLog::Done { opcode: 3 });
        assert!(reset.is_some() && remove > reset, "{name}: {log:?}\n{r}");
    }
    if mapping == Mapping::Direct {
        assert!(
            gpu.gfx11()
                .unwrap()
                .mec()
                .events()
                .iter()
                .any(|e| matches!(e, MecEvent::WavesKilled { .. })),
            "{name}: SPI_COMPUTE_QUEUE_RESET never reached the model"
        );
    }
    // The rest of the device still tears down cleanly.
    let t = g.shutdown();
    assert!(t.complete(), "{name} {mapping:?}: {t}");
    gpu.quiescent().unwrap();
}

#[test]
fn navi31_cp_hang_recovers_at_the_queue_every_mapping() {
    for m in Mapping::ALL {
        cp_hang(parts::navi31(), m);
    }
}

#[test]
fn navi48_cp_hang_recovers_at_the_queue_every_mapping() {
    for m in Mapping::ALL {
        cp_hang(parts::navi48(), m);
    }
}

/// A scheduler hang (MES with the MES mapping, the KIQ with the KIQ
/// mapping): the user queue still runs, so its packet completes; the
/// probe times out within the scheduler's bound; the queue rung is
/// skipped (it would ask the hung scheduler), the CP soft reset recovers.
fn scheduler_hang(part: barebell_model::Part, mapping: Mapping) {
    let name = part.name;
    let gpu = virtual_gpu(part, 22);
    let mut g = up(&gpu, mapping);
    let sig = signals(&mut g, 1);
    let mut ledger: Ledger<'_, 4> = Ledger::new();
    recover::probe_scheduler(&mut g).unwrap();
    match mapping {
        Mapping::Mes => gpu.gfx11().unwrap().hang_mes(),
        _ => gpu.gfx11().unwrap().hang_kiq(),
    }
    let id = submit(&g, &mut ledger, sig[0]);
    recover::watch(&g, &mut ledger, recover::WATCHDOG_NS).unwrap();
    let t = gpu.clock().now_ns();
    let d = recover::probe_scheduler(&mut g).unwrap_err();
    let took = gpu.clock().now_ns() - t;
    assert!(
        matches!(d, Detected::Scheduler(_)),
        "{name} {mapping:?}: {d}"
    );
    assert!(
        (SCHEDULER_BOUND_NS..=SCHEDULER_BOUND_NS + SLACK_NS).contains(&took),
        "{name} {mapping:?}: detected after {took} ns"
    );
    let r = recover::recover(&mut g, &mut ledger, d);
    assert!(
        matches!(r.rungs[0], (Rung::Queue, RungOutcome::Skipped(_))),
        "{r}"
    );
    recovered_at(&r, Rung::CpSoftReset);
    assert_eq!(r.reinit, Reinit::Gfx, "{r}");
    assert_eq!(
        r.packets,
        vec![PacketFate {
            id,
            fate: Fate::Completed
        }],
        "{r}"
    );
    assert_eq!(gpu.gfx11().unwrap().mec().cp_resets(), 1);
    assert!(
        gpu.gfx11().unwrap().mec().active_hqds().is_empty(),
        "{name} {mapping:?}"
    );
    for pipe in 0..2 {
        assert!(
            !gpu.gfx11().unwrap().mec().mes_pipe_running(pipe),
            "{name} {mapping:?}"
        );
    }
    let t = g.shutdown();
    gpu.quiescent()
        .unwrap_or_else(|e| panic!("{name} {mapping:?}: {e}\n{t}"));
}

#[test]
fn navi31_mes_hang_recovers_by_cp_soft_reset() {
    scheduler_hang(parts::navi31(), Mapping::Mes);
}

#[test]
fn navi48_mes_hang_recovers_by_cp_soft_reset() {
    scheduler_hang(parts::navi48(), Mapping::Mes);
}

#[test]
fn navi31_kiq_hang_recovers_by_cp_soft_reset() {
    scheduler_hang(parts::navi31(), Mapping::Kiq);
}

#[test]
fn navi48_kiq_hang_recovers_by_cp_soft_reset() {
    scheduler_hang(parts::navi48(), Mapping::Kiq);
}

/// Each rung failing in turn: a hung queue whose dequeue never completes
/// (the queue rung times out) on a CP a soft reset does not bring back
/// (the CP rung finds HQDs still active): the mode-1 reset, with the
/// SMU message of the part's MP1 version, recovers.
fn escalates_to_mode1(part: barebell_model::Part, debug_mailbox: bool) {
    let name = part.name;
    let gpu = virtual_gpu(part, 23);
    let mut g = up(&gpu, Mapping::Direct);
    let sig = signals(&mut g, 1);
    let mut ledger: Ledger<'_, 4> = Ledger::new();
    let doorbell = g.queue.as_ref().unwrap().doorbell;
    assert!(gpu.hang_queue(doorbell));
    gpu.gfx11().unwrap().mec().set_faults(MecFaults {
        dequeue_never_completes: true,
    });
    gpu.gfx11().unwrap().mec().set_wedged(true);
    let id = submit(&g, &mut ledger, sig[0]);
    let mark = gpu.gfx11().unwrap().refusal_mark();
    let d = recover::watch(&g, &mut ledger, recover::WATCHDOG_NS).unwrap_err();
    let r = recover::recover(&mut g, &mut ledger, d);
    assert!(
        matches!(r.rungs[0], (Rung::Queue, RungOutcome::Failed(_))),
        "{name}: {r}"
    );
    assert!(
        matches!(r.rungs[1], (Rung::CpSoftReset, RungOutcome::Failed(_))),
        "{name}: {r}"
    );
    recovered_at(&r, Rung::Mode1);
    assert_eq!(r.reinit, Reinit::Device, "{r}");
    assert_eq!(
        r.packets,
        vec![PacketFate {
            id,
            fate: Fate::Lost { fetched: false }
        }],
        "{r}"
    );
    let msg = barebell_model::smu::SmuEvent::Answered {
        msg: if debug_mailbox { 2 } else { 0x2F },
        arg: 0,
        resp: 1,
        out: None,
        debug: debug_mailbox,
    };
    let events = gpu.gfx11().unwrap().soc().smu.events();
    assert!(events.contains(&msg), "{name}: {events:?}");
    assert!(
        events.contains(&barebell_model::smu::SmuEvent::Mode1Reset),
        "{name}: {events:?}"
    );
    assert!(
        gpu.gfx11().unwrap().mec().active_hqds().is_empty(),
        "{name}"
    );
    // Bus mastering was off across the reset (the SMU model logs a reset
    // sent with it on) and is back on after it, as
    // `amdgpu_device_mode1_reset()` leaves it (`amdgpu_device_load_pci_state()`).
    let refused: Vec<String> = gpu
        .gfx11()
        .unwrap()
        .refusals_since(mark)
        .into_iter()
        .filter(|r| r.contains("bus mastering"))
        .collect();
    assert!(refused.is_empty(), "{name}: {refused:?}");
    assert!(gpu.bus_master(), "{name}: bus mastering not restored");
    assert!(gpu.psp().ring().is_none(), "{name}: PSP ring survived");
}

#[test]
fn navi31_escalates_to_mode1_with_ppsmc_mode1reset() {
    // MP1 13.0.0: `smu_v13_0_0_mode1_reset()` sends PPSMC_MSG_Mode1Reset.
    escalates_to_mode1(parts::navi31(), false);
}

#[test]
fn navi48_escalates_to_mode1_with_debugsmc_mode1reset() {
    // MP1 14.0.3: `smu_v14_0_2_mode1_reset()` sends DEBUGSMC_MSG_Mode1Reset.
    escalates_to_mode1(parts::navi48(), true);
}

/// A device that falls off the bus mid-wait: the watchdog's register
/// check reports it gone within one bound, no rung is tried, the packet
/// is reported lost.
#[test]
fn a_vanished_device_is_device_gone_not_a_hang() {
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let gpu = virtual_gpu(part, 24);
        let mut g = up(&gpu, Mapping::Direct);
        let sig = signals(&mut g, 1);
        let mut ledger: Ledger<'_, 4> = Ledger::new();
        gpu.fall_off_bus();
        let id = submit(&g, &mut ledger, sig[0]);
        let t = gpu.clock().now_ns();
        let d = recover::watch(&g, &mut ledger, recover::WATCHDOG_NS).unwrap_err();
        let took = gpu.clock().now_ns() - t;
        assert_eq!(d, Detected::DeviceGone, "{name}");
        assert!(took <= recover::WATCHDOG_NS + SLACK_NS, "{name}: {took} ns");
        let r = recover::recover(&mut g, &mut ledger, d);
        assert_eq!(r.recovered_at, None, "{r}");
        assert_eq!(r.reinit, Reinit::Unrecovered, "{r}");
        assert!(
            r.rungs
                .iter()
                .all(|(_, o)| matches!(o, RungOutcome::Skipped(_))),
            "{r}"
        );
        assert_eq!(
            r.packets,
            vec![PacketFate {
                id,
                fate: Fate::Lost { fetched: false }
            }],
            "{r}"
        );
        assert!(r.to_string().contains("device is gone"), "{r}");
    }
}

/// Memory waits tell a vanished device from a hang: the user queue's
/// signal wait and an SDMA fence wait each end with a device-gone error
/// within one presence interval (`recover::WATCHDOG_NS`), not at their
/// bound.
#[test]
fn memory_waits_end_device_gone_when_the_device_vanishes() {
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let gpu = virtual_gpu(part, 25);
        let mut g = up(&gpu, Mapping::Direct);
        let mut copy = barebell_bringup::sdma::open(&mut g, Mapping::Direct, &Quiet)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // The device falls off the bus; the fill (to an unmapped VA) and
        // its fence never complete: without the presence check this is a
        // 4 s fence timeout.
        gpu.fall_off_bus();
        let seq = copy.submit_fill(0x1000, 0, 4).unwrap_or(1);
        let t = gpu.clock().now_ns();
        let e = copy.wait(seq, 4_000_000_000).unwrap_err();
        let took = gpu.clock().now_ns() - t;
        assert!(
            matches!(
                e,
                barebell_bringup::sdma::CopyError::Sdma(
                    barebell::sdma::SdmaError::DeviceGone { .. }
                )
            ),
            "{name}: {e}"
        );
        assert!(took <= recover::WATCHDOG_NS + SLACK_NS, "{name}: {took} ns");
        drop(copy);
        let q = g.queue.as_ref().unwrap();
        q.signal.reset(1);
        let t = gpu.clock().now_ns();
        let e = q.wait_signal(0, 4_000_000_000).unwrap_err();
        let took = gpu.clock().now_ns() - t;
        assert!(
            matches!(
                e.kind,
                barebell_bringup::ErrorKind::Queue(
                    barebell_bringup::error::QueueError::DeviceGone { .. }
                )
            ),
            "{name}: {e}"
        );
        assert!(took <= recover::WATCHDOG_NS + SLACK_NS, "{name}: {took} ns");
    }
}

/// Why the MES rung sends RESET first: REMOVE_QUEUE alone cannot take a
/// hung queue off (it cannot be preempted; the model refuses it), so the
/// unmap fails (v11: no status, the 2.1 s bound; v12: an error status).
#[test]
fn remove_queue_alone_does_not_take_a_hung_queue_off() {
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let gpu = virtual_gpu(part, 26);
        let mut g = up(&gpu, Mapping::Mes);
        let q = g.queue.as_mut().unwrap();
        assert!(gpu.hang_queue(q.doorbell));
        let m = q.mapping;
        let e = q.mapper_mut().unmap(&m).unwrap_err();
        assert!(
            gpu.gfx11().unwrap().mes_log().iter().any(|e| matches!(
                e,
                MesLog::Refused {
                    opcode: 3,
                    why: barebell_model::mes::Refusal::QueueHung { .. }
                }
            )),
            "{name}: {e}: {:?}",
            gpu.gfx11().unwrap().mes_log()
        );
    }
}

/// Scheduler fence waits tell a vanished device from a hang too: with the
/// device off the bus, the unmap's MES REMOVE_QUEUE (or KIQ UNMAP_QUEUES)
/// ends "device gone" within one presence interval, not at the 2.1 s API
/// bound. GC 9.4.3's KIQ and HWS waits read the same kind of presence
/// register (XCC 0's GRBM_SOFT_RESET): see the next test.
#[test]
fn scheduler_fence_waits_end_device_gone_when_the_device_vanishes() {
    for part in [parts::navi31(), parts::navi48()] {
        for mapping in [Mapping::Mes, Mapping::Kiq] {
            let name = part.name;
            let gpu = virtual_gpu(part.clone(), 27);
            let mut g = up(&gpu, mapping);
            let q = g.queue.as_mut().unwrap();
            let m = q.mapping;
            gpu.fall_off_bus();
            let t = gpu.clock().now_ns();
            let e = q.mapper_mut().unmap(&m).unwrap_err();
            let took = gpu.clock().now_ns() - t;
            let text = e.to_string();
            assert!(
                text.contains("the device is gone"),
                "{name} {mapping:?}: {text}"
            );
            assert!(
                took <= recover::WATCHDOG_NS + SLACK_NS,
                "{name} {mapping:?}: {took} ns: {text}"
            );
        }
    }
}

/// The same on GC 9.4.3 (MI300X, MI308X): with the device off the bus,
/// the unmap's HWS UNMAP_QUEUES (or the KIQ's) ends "device gone" within
/// one presence interval, not at the scheduler's bound.
#[test]
fn gc_9_4_3_scheduler_waits_end_device_gone_when_the_device_vanishes() {
    use barebell_model::vgpu::HostMemory;
    for part in [parts::mi300x(), parts::mi308x()] {
        for mapping in [Mapping::Hws, Mapping::Kiq] {
            let name = part.name;
            let mem = HostMemory::allocate(64 << 20).unwrap();
            let gpu = barebell_model::VirtualGpu::new(
                part.clone(),
                &barebell_model::FilesDir::system(),
                mem,
                barebell_model::Seed(28),
            )
            .unwrap();
            let opts = Options {
                until: Step::Queue,
                mapping: Some(mapping),
                ..Default::default()
            };
            let mut g = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
                .unwrap_or_else(|e| panic!("{name} {mapping:?}: {e}"));
            let q = g.queue.as_mut().unwrap();
            let m = q.mapping;
            gpu.fall_off_bus();
            let t = gpu.clock().now_ns();
            let e = q.mapper_mut().unmap(&m).unwrap_err();
            let took = gpu.clock().now_ns() - t;
            let text = e.to_string();
            assert!(
                text.contains("the device is gone"),
                "{name} {mapping:?}: {text}"
            );
            assert!(
                took <= recover::WATCHDOG_NS + SLACK_NS,
                "{name} {mapping:?}: {took} ns: {text}"
            );
            // The teardown finds nothing answering and says so; it must
            // not hang.
            let t = gpu.clock().now_ns();
            let report = g.shutdown();
            let took = gpu.clock().now_ns() - t;
            let text = report.to_string();
            assert!(
                took < 30 * SCHEDULER_BOUND_NS,
                "{name} {mapping:?}: teardown took {took} ns"
            );
            // No stage that writes registers claims success on a device
            // that drops every write.
            assert!(text.contains("INCOMPLETE"), "{name} {mapping:?}: {text}");
            for stage in ["halt MEC", "finalize signature", "disable GFXHUB"] {
                assert!(
                    text.contains(&format!("{stage}: FAILED")),
                    "{name} {mapping:?}: {text}"
                );
            }
        }
    }
}

/// A queue hang on MI300X under the HWS (the seeds' CPSCH path): the
/// queue rung resets it through the scheduler (`reset_queues_cpsch()`,
/// UNMAP_QUEUES with RESET_QUEUES), because a preemption of a hung queue
/// is abandoned (`check_preemption_failed_v9_4_3()`); the queue leaves
/// every XCC and the rest of the device tears down cleanly.
#[test]
fn mi300x_hws_hang_recovers_at_the_queue_by_reset() {
    let gpu = virtual_gpu(parts::mi300x(), 27);
    let mut g = up(&gpu, Mapping::Hws);
    let sig = signals(&mut g, 3);
    let mut ledger: Ledger<'_, 8> = Ledger::new();
    let first = submit(&g, &mut ledger, sig[0]);
    recover::watch(&g, &mut ledger, recover::WATCHDOG_NS).unwrap();
    let doorbell = g.queue.as_ref().unwrap().doorbell;
    assert!(gpu.hang_queue(doorbell));
    let ids: Vec<u64> = sig[1..]
        .iter()
        .map(|s| submit(&g, &mut ledger, s))
        .collect();
    let d = recover::watch(&g, &mut ledger, recover::WATCHDOG_NS).unwrap_err();
    assert!(matches!(d, Detected::Queue(_)), "{d}");
    let r = recover::recover(&mut g, &mut ledger, d);
    recovered_at(&r, Rung::Queue);
    let (_, outcome) = r.rungs.last().unwrap();
    assert!(
        matches!(outcome, RungOutcome::Recovered(s) if s.contains("RESET_QUEUES")),
        "{r}"
    );
    let fates: Vec<u64> = r.packets.iter().map(|p| p.id).collect();
    assert_eq!(fates[0], first);
    assert_eq!(&fates[1..], &ids[..], "{r}");
    let mec = gpu.gc_9_4_3().unwrap().mec();
    assert!(mec.queues().iter().all(|q| q.cp.is_none()), "{r}");
    assert!(mec.refusals().is_empty(), "{:?}", mec.refusals());
    let t = g.shutdown();
    assert!(t.complete(), "{t}");
    gpu.quiescent().unwrap();
}

/// The HWS itself hangs on MI300X (every XCC's KIQ and the scheduler stop
/// reading their rings): the queue rung is skipped (asking the scheduler
/// again would only time out), the CP soft reset is skipped because Linux
/// does not use one to recover a discrete MI300 (`soc15_asic_reset_method()`
/// returns mode-1 for MP1 13.0.6 without `AMD_IS_APU`, and
/// `gfx_v9_4_3_soft_reset()` reaches XCC 0 only), and the mode-1 reset,
/// `GfxDeviceDriverReset` with mode 1 (`smu_v13_0_6_mode1_reset()`),
/// recovers the device.
#[test]
fn mi300x_hws_hang_escalates_to_mode1_past_the_soft_reset() {
    let gpu = virtual_gpu(parts::mi300x(), 29);
    let mut g = up(&gpu, Mapping::Hws);
    let sig = signals(&mut g, 1);
    let mut ledger: Ledger<'_, 4> = Ledger::new();
    recover::probe_scheduler(&mut g).unwrap();
    let doorbell = g.queue.as_ref().unwrap().doorbell;
    assert!(gpu.hang_queue(doorbell));
    gpu.gc_9_4_3().unwrap().mec().hang_schedulers();
    let id = submit(&g, &mut ledger, sig[0]);
    let d = recover::probe_scheduler(&mut g).unwrap_err();
    assert!(matches!(d, Detected::Scheduler(_)), "{d}");
    let r = recover::recover(&mut g, &mut ledger, d);
    assert!(
        matches!(r.rungs[0], (Rung::Queue, RungOutcome::Skipped(_))),
        "{r}"
    );
    assert!(
        matches!(&r.rungs[1], (Rung::CpSoftReset, RungOutcome::Skipped(why))
            if why.contains("soc15_asic_reset_method()")),
        "{r}"
    );
    recovered_at(&r, Rung::Mode1);
    assert_eq!(r.reinit, Reinit::Device, "{r}");
    assert_eq!(
        r.packets,
        vec![PacketFate {
            id,
            fate: Fate::Lost { fetched: false }
        }],
        "{r}"
    );
    let smu = gpu.gc_9_4_3().unwrap().smu();
    assert!(
        smu.events()
            .contains(&barebell_model::smu::SmuEvent::Answered {
                msg: 0x3,
                arg: 1,
                resp: 1,
                out: None,
                debug: false
            }),
        "{:?}",
        smu.events()
    );
    assert!(
        smu.events()
            .contains(&barebell_model::smu::SmuEvent::Mode1Reset)
    );
    let mec = gpu.gc_9_4_3().unwrap().mec();
    assert!(mec.queues().iter().all(|q| q.cp.is_none()), "{r}");
    assert!(gpu.bus_master(), "bus mastering not restored");
    assert!(gpu.psp().ring().is_none(), "PSP ring survived");
}
