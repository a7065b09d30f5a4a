//! The bring-up against what the model enforces from the public sources
//! (issue 14): the MEC started before any queue, `direct` standing alone,
//! the GFX init Linux does after the RLC autoload, and doorbells that
//! must arrive through the NBIO.

use barebell::bus::trace::Access;
use barebell_bringup::{Mapping, Options, Sink, Step};
use barebell_model::mec::MecEvent;
use barebell_model::{Part, VirtualGpu, parts};
use barebell_tests::{FirmwareDir, virtual_gpu};
use std::cell::RefCell;
use std::fmt;

/// Keeps every register access and step line.
#[derive(Default)]
struct Trace {
    accesses: RefCell<Vec<Access>>,
    lines: RefCell<Vec<(Step, String)>>,
}

impl Sink for Trace {
    fn step(&self, step: Step, detail: fmt::Arguments<'_>) {
        self.lines.borrow_mut().push((step, detail.to_string()));
    }
    fn tracing(&self) -> bool {
        true
    }
    fn access(&self, a: Access) {
        self.accesses.borrow_mut().push(a);
    }
}

impl Trace {
    /// Indexes of the writes to register `name`.
    fn writes(&self, name: &str) -> Vec<(usize, u32)> {
        self.accesses
            .borrow()
            .iter()
            .enumerate()
            .filter(|(_, a)| a.write && a.name == Some(name))
            .map(|(i, a)| (i, a.value))
            .collect()
    }
}

fn run(part: Part, mapping: Option<Mapping>) -> (VirtualGpu, Trace, Result<Step, String>) {
    let gpu = virtual_gpu(part, 7);
    let trace = Trace::default();
    let opts = Options {
        until: Step::Queue,
        mapping,
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    let r = barebell_bringup::run(&gpu, &fw, &opts, &trace)
        .map(|mut up| {
            let reached = up.reached;
            if let Some(q) = up.queue.take() {
                q.unmap().map_err(|e| e.to_string())?;
            }
            // The trace ends with the bring-up: no teardown.
            up.abandon();
            Ok(reached)
        })
        .map_err(|e| e.to_string())
        .and_then(|x| x);
    (gpu, trace, r)
}

/// `(CP_MEC_RS64_PRGRM_CNTR_START, _HI)` as `gfx_v11_0_config_gfx_rs64()`
/// computes them from the MEC blob's `gfx_firmware_header_v2_0`
/// (`ucode_start_addr_lo` at byte 52, `_hi` at 56), read here by hand.
fn mec_pc(part: &Part) -> (u32, u32) {
    let name = match part.generation {
        barebell::ip::Generation::Gfx11 => "gc_11_0_0_mec.bin",
        barebell::ip::Generation::Gfx12 => "gc_12_0_1_mec.bin",
        barebell::ip::Generation::Gfx90a | barebell::ip::Generation::Gfx94 => {
            panic!("no RS64 MEC on GC 9.4.x")
        }
    };
    let b = std::fs::read(format!("/lib/firmware/amdgpu/{name}")).expect("the MEC blob");
    let at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let (lo, hi) = (at(52), at(56));
    (lo >> 2 | hi << 30, hi >> 2)
}

/// Item 1: the MEC pipes get their program counter from the MEC blob, a
/// reset pulse and `CP_MEC_RS64_CNTL` unhalted, all before any HQD is
/// activated; the model's MEC ran a pipe before it activated a queue.
fn mec_started_first(part: Part, mapping: Mapping) {
    let name = part.name;
    let pc = mec_pc(&part);
    let (gpu, t, r) = run(part, Some(mapping));
    let logs = gpu.firmware_logs();
    assert_eq!(r, Ok(Step::Queue), "{name} {mapping:?}\n{logs}");
    let pcs = t.writes("CP_MEC_RS64_PRGRM_CNTR_START");
    let his = t.writes("CP_MEC_RS64_PRGRM_CNTR_START_HI");
    let cntl = t.writes("CP_MEC_RS64_CNTL");
    assert!(
        !pcs.is_empty() && pcs.iter().all(|(_, v)| *v == pc.0),
        "{name}: {pcs:x?}, want {:#x}",
        pc.0
    );
    assert!(his.iter().all(|(_, v)| *v == pc.1), "{name}: {his:x?}");
    // The last control write leaves the MEC unhalted (bit 30) with pipe 0
    // out of reset (bit 16) and active (bit 26): gc_11_0_0_sh_mask.h.
    let last = cntl.last().expect("CP_MEC_RS64_CNTL written");
    assert_eq!(last.1 & (1 << 30 | 1 << 16), 0, "{name}: {last:x?}");
    assert_ne!(last.1 & 1 << 26, 0, "{name}: {last:x?}");
    // Some write set a pipe-0 reset before the last one cleared it.
    assert!(
        cntl.iter().any(|(i, v)| *i < last.0 && v & 1 << 16 != 0),
        "{name}: no reset pulse: {cntl:x?}"
    );
    let first_active = t
        .writes("CP_HQD_ACTIVE")
        .into_iter()
        .find(|(_, v)| v & 1 == 1)
        .map(|(i, _)| i);
    if let Some(a) = first_active {
        assert!(
            last.0 < a,
            "{name} {mapping:?}: HQD activated at {a}, MEC unhalted at {}",
            last.0
        );
        assert!(
            pcs.iter().all(|(i, _)| *i < a),
            "{name}: a PC written after an HQD"
        );
    }
    let events = gpu.gfx11().unwrap().mec().events();
    let running = events
        .iter()
        .position(|e| matches!(e, MecEvent::MecPipeRunning { pipe: 0, .. }));
    let activated = events.iter().position(|e| {
        matches!(
            e,
            MecEvent::Activated { me: 1 | 2, .. } | MecEvent::KiqActivated { .. }
        )
    });
    assert!(
        running.is_some(),
        "{name}: MEC pipe 0 never ran: {events:?}"
    );
    assert!(
        running < activated,
        "{name}: a queue was activated before the MEC ran: {events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, MecEvent::QueueOnStoppedPipe { .. })),
        "{name}: {events:?}"
    );
}

#[test]
fn navi31_mec_starts_before_any_queue() {
    for m in Mapping::ALL {
        mec_started_first(parts::navi31(), m);
    }
}

#[test]
fn navi48_mec_starts_before_any_queue() {
    for m in Mapping::ALL {
        mec_started_first(parts::navi48(), m);
    }
}

/// Item 9: after the autoload the bring-up routes GC doorbells through
/// the S2A entries `nbio_v4_3_gc_doorbell_init()` /
/// `nbif_v6_3_1_gc_doorbell_init()` write (0x30000007, 0x3000000d, read
/// from those functions by hand), gives the KFD VMIDs their apertures
/// (`gfx_v11_0_init_compute_vmid()`), and sets `GRBM_CNTL.READ_TIMEOUT`
/// to 0xff and (GC 11) the golden `TCP_CNTL` bit 29; the model dropped no queue
/// doorbell and refused no queue.
fn gfx_init_after_autoload(part: Part, mapping: Mapping) {
    let name = part.name;
    // `golden_settings_gc_11_0` only: GC 12's golden list has no TCP_CNTL.
    let gc11 = part.generation == barebell::ip::Generation::Gfx11;
    let (gpu, t, r) = run(part, Some(mapping));
    let logs = gpu.firmware_logs();
    assert_eq!(r, Ok(Step::Queue), "{name} {mapping:?}\n{logs}");
    assert_eq!(
        gpu.gfx11().unwrap().s2a_entries(),
        [0x3000_0007, 0x3000_000d],
        "{name}"
    );
    assert_eq!(
        gpu.gfx11().unwrap().nbio().dropped(),
        vec![],
        "{name} {mapping:?}"
    );
    for vmid in 8..16 {
        // DEFAULT_SH_MEM_CONFIG: address mode 64 (0), alignment
        // unaligned (3 << 2), INITIAL_INST_PREFETCH 3 (3 << 14);
        // SH_MEM_BASES: LDS_APP_BASE 1 << 16 | SCRATCH_APP_BASE 2.
        assert_eq!(
            gpu.gfx11().unwrap().mec().sh_mem(vmid),
            (0xC00C, 0x0001_0002),
            "{name}"
        );
    }
    let grbm = t.writes("GRBM_CNTL");
    assert!(
        grbm.last().is_some_and(|(_, v)| v & 0xFF == 0xFF),
        "{name}: {grbm:x?}"
    );
    let tcp = t.writes("TCP_CNTL");
    if gc11 {
        assert!(
            tcp.last().is_some_and(|(_, v)| v & 1 << 29 != 0),
            "{name}: {tcp:x?}"
        );
    } else {
        assert_eq!(tcp, vec![], "{name}");
    }
    let events = gpu.gfx11().unwrap().mec().events();
    assert!(
        !events.iter().any(|e| matches!(e, MecEvent::Refused { .. })),
        "{name}: {events:?}"
    );
}

#[test]
fn navi31_gfx_init_after_autoload() {
    for m in Mapping::ALL {
        gfx_init_after_autoload(parts::navi31(), m);
    }
}

#[test]
fn navi48_gfx_init_after_autoload() {
    for m in Mapping::ALL {
        gfx_init_after_autoload(parts::navi48(), m);
    }
}

/// Item 6: `--mapping direct` stands alone, as tinygrad's AM driver runs
/// (one AQL queue loaded by registers into MEC pipe 0 queue 0, no KIQ, no
/// MES): with the MES and KIQ firmware silenced it still reaches `queue
/// ready`, and it never starts a MES pipe or loads a KIQ.
fn direct_alone(part: Part) {
    let name = part.name;
    let gpu = virtual_gpu(part, 7);
    gpu.gfx11().unwrap().silence_schedulers(true);
    let trace = Trace::default();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Direct),
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    let r = barebell_bringup::run(&gpu, &fw, &opts, &trace)
        .map(|up| up.reached)
        .map_err(|e| e.to_string());
    assert_eq!(r, Ok(Step::Queue), "{name}");
    assert_eq!(trace.writes("CP_MES_CNTL"), vec![], "{name}");
    let events = gpu.gfx11().unwrap().mec().events();
    assert!(
        !events.iter().any(|e| matches!(
            e,
            MecEvent::KiqActivated { .. } | MecEvent::MesRingLoaded { .. }
        )),
        "{name}: {events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            MecEvent::Activated {
                me: 1,
                pipe: 0,
                queue: 0,
                ..
            }
        )),
        "{name}: not on MEC 1 pipe 0 queue 0: {events:?}"
    );
}

#[test]
fn navi31_direct_needs_neither_kiq_nor_mes() {
    direct_alone(parts::navi31());
}

#[test]
fn navi48_direct_needs_neither_kiq_nor_mes() {
    direct_alone(parts::navi48());
}

/// `--until psp` stops the bring-up after the PSP step: the register
/// stream the model receives holds no GFX engine start (no
/// `CP_MEC_RS64_CNTL` write, which `gfx_v11_0_cp_compute_enable()` and
/// the bring-up's gfx step send) and the run reports the PSP as reached.
#[test]
fn until_psp_sends_nothing_past_the_psp() {
    for part in [parts::navi31(), parts::navi48()] {
        let gpu = virtual_gpu(part, 7);
        let trace = Trace::default();
        let opts = Options {
            until: Step::Psp,
            mapping: Some(Mapping::Direct),
            ..Default::default()
        };
        let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &trace).unwrap();
        assert_eq!(up.reached, Step::Psp);
        assert!(up.queue.is_none());
        assert!(trace.writes("CP_MEC_RS64_CNTL").is_empty());
    }
}
