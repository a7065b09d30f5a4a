//! Teardown on every exit (issue 20, scope 2): after a successful
//! bring-up (`Gpu::shutdown`), after an error at a step (the bring-up
//! tears down before it returns the error), and after a cancel between
//! steps, the model must end quiescent (`VirtualGpu::quiescent`): no HQD
//! active, MES and the MEC halted, the PSP ring destroyed, the doorbell
//! apertures closed, bus mastering off.

use barebell_bringup::{
    ErrorKind, FirmwareError, FirmwareSource, Mapping, Options, Outcome, Quiet, Sink, Stage, Step,
};
use barebell_model::mec::MecFaults;
use barebell_model::{VirtualGpu, parts};
use barebell_tests::{FirmwareDir, virtual_gpu};
use std::cell::Cell;
use std::fmt;

fn opts(mapping: Option<Mapping>) -> Options {
    Options {
        until: Step::Queue,
        mapping,
        ..Default::default()
    }
}

/// Without a teardown the bring-up leaves the device running: the model
/// sees every engine and aperture the issue names. This is what every
/// exit left before `Gpu::shutdown` and the error-path teardown existed.
#[test]
fn bring_up_alone_leaves_the_model_not_quiescent() {
    let gpu = virtual_gpu(parts::navi31(), 1);
    let fw = FirmwareDir::system();
    let up = barebell_bringup::run(&gpu, &fw, &opts(Some(Mapping::Mes)), &Quiet).unwrap();
    let why = gpu.quiescent().unwrap_err().0;
    let has = |s: &str| why.iter().any(|w| w.contains(s));
    assert!(has("HQD ME"), "{why:?}");
    assert!(has("MES pipe 0 running"), "{why:?}");
    assert!(has("MEC not halted"), "{why:?}");
    assert!(has("PSP GPCOM ring live"), "{why:?}");
    assert!(has("doorbell aperture open"), "{why:?}");
    assert!(has("PCI bus mastering on"), "{why:?}");
    drop(up);
}

fn shutdown_after_success(part: barebell_model::Part, mapping: Option<Mapping>) {
    let name = part.name;
    let gpu = virtual_gpu(part, 3);
    let fw = FirmwareDir::system();
    let up = match barebell_bringup::run(&gpu, &fw, &opts(mapping), &Quiet) {
        Ok(up) => up,
        Err(e) => panic!("{name} {mapping:?}: {e}\n{}", gpu.firmware_logs()),
    };
    assert!(
        gpu.quiescent().is_err(),
        "{name} {mapping:?} quiescent before teardown"
    );
    let report = up.shutdown();
    assert!(report.complete(), "{name} {mapping:?}: {report}");
    let unmapped = report.outcome(Stage::UnmapQueue);
    match mapping {
        Some(_) => assert!(matches!(unmapped, Some(Outcome::Done(_))), "{report}"),
        None => assert!(matches!(unmapped, Some(Outcome::NotNeeded(_))), "{report}"),
    }
    let mes = report.outcome(Stage::HaltMes);
    match mapping {
        Some(Mapping::Mes | Mapping::Kiq) => {
            assert!(matches!(mes, Some(Outcome::Done(_))), "{report}")
        }
        _ => assert!(matches!(mes, Some(Outcome::NotNeeded(_))), "{report}"),
    }
    if let Err(e) = gpu.quiescent() {
        panic!("{name} {mapping:?}: {e}\n{report}");
    }
    assert!(
        gpu.psp().refusals().is_empty(),
        "{name} {mapping:?}: {:?}",
        gpu.psp().refusals()
    );
}

#[test]
fn navi31_teardown_after_success_every_mapping() {
    shutdown_after_success(parts::navi31(), None);
    for m in Mapping::ALL {
        shutdown_after_success(parts::navi31(), Some(m));
    }
}

#[test]
fn navi48_teardown_after_success_every_mapping() {
    shutdown_after_success(parts::navi48(), None);
    for m in Mapping::ALL {
        shutdown_after_success(parts::navi48(), Some(m));
    }
}

/// A sink that asks the bring-up to stop once `after` has reported.
struct CancelAfter {
    after: Step,
    seen: Cell<bool>,
}

impl Sink for CancelAfter {
    fn step(&self, step: Step, _: fmt::Arguments<'_>) {
        if step == self.after {
            self.seen.set(true);
        }
    }
    fn cancelled(&self) -> bool {
        self.seen.get()
    }
}

fn failed_and_torn_down(
    gpu: &VirtualGpu,
    r: Result<barebell_bringup::Gpu<'_>, barebell_bringup::BringupError>,
    what: &str,
) -> barebell_bringup::BringupError {
    let e = match r {
        Ok(_) => panic!("{what}: the bring-up succeeded"),
        Err(e) => e,
    };
    let report = e
        .teardown
        .as_deref()
        .unwrap_or_else(|| panic!("{what}: no teardown: {e}"));
    assert!(report.complete(), "{what}: {e}");
    if let Err(q) = gpu.quiescent() {
        panic!("{what}: {q}\n{e}");
    }
    e
}

/// A cancel before each step after the first (the CLI's signal handler
/// sets the flag this sink stands for), every mapping, both parts: the
/// error names the step that did not start, and the model ends
/// quiescent.
#[test]
fn interrupted_before_every_step_ends_quiescent() {
    for part in [parts::navi31(), parts::navi48()] {
        for mapping in Mapping::ALL {
            for after in [
                Step::Discovery,
                Step::Nbio,
                Step::Gmc,
                Step::Psp,
                Step::Rlc,
                Step::Mes,
                Step::Rings,
            ] {
                if mapping == Mapping::Direct && matches!(after, Step::Mes | Step::Rings) {
                    continue;
                }
                let what = format!("{} {mapping:?} cancelled after {after}", part.name);
                let gpu = virtual_gpu(part.clone(), 5);
                let fw = FirmwareDir::system();
                let sink = CancelAfter {
                    after,
                    seen: Cell::new(false),
                };
                let r = barebell_bringup::run(&gpu, &fw, &opts(Some(mapping)), &sink);
                let e = failed_and_torn_down(&gpu, r, &what);
                assert_eq!(e.kind, ErrorKind::Interrupted, "{what}: {e}");
                assert!(e.step > after, "{what}: {e}");
            }
        }
    }
}

/// A firmware source whose one file has its last byte flipped: the
/// bring-up parses it, sends it, and the PSP model refuses the image
/// (its bytes differ from the firmware it checks against), so the PSP
/// step fails after sOS and the GPCOM ring exist.
struct Corrupt(FirmwareDir, &'static str);

impl FirmwareSource for Corrupt {
    fn load(&self, name: &str) -> Result<Vec<u8>, FirmwareError> {
        let mut b = self.0.load(name)?;
        if name.contains(self.1)
            && let Some(last) = b.last_mut()
        {
            *last ^= 0xff;
        }
        Ok(b)
    }
}

/// An error at the gmc step (a user-memory request larger than the DMA
/// region), at the psp step (a corrupted MEC image), at the rings step
/// (MES and the KIQ never answer): each is torn down before the error
/// is returned.
#[test]
fn injected_errors_are_torn_down() {
    let fw = FirmwareDir::system();
    // gmc
    let gpu = virtual_gpu(parts::navi31(), 9);
    let o = Options {
        user_memory: 1 << 40,
        ..opts(Some(Mapping::Mes))
    };
    let e = failed_and_torn_down(&gpu, barebell_bringup::run(&gpu, &fw, &o, &Quiet), "gmc");
    assert_eq!(e.step, Step::Gmc, "{e}");
    // psp: the MEC image is sent after sOS and the ring exist.
    for part in [parts::navi31(), parts::navi48()] {
        let gpu = virtual_gpu(part, 9);
        let corrupt = Corrupt(FirmwareDir::system(), "_mec");
        let r = barebell_bringup::run(&gpu, &corrupt, &opts(Some(Mapping::Mes)), &Quiet);
        let e = failed_and_torn_down(&gpu, r, "psp");
        assert_eq!(e.step, Step::Psp, "{e}");
        assert!(!gpu.psp().refusals().is_empty(), "{e}");
        // The ring was live when the step failed: the teardown destroyed it.
        let t = e.teardown.as_deref().unwrap();
        assert_eq!(
            t.outcome(Stage::PspRing),
            Some(&Outcome::Done("DESTROY_RINGS answered".into())),
            "{t}"
        );
    }
    // rings: schedulers silent.
    for part in [parts::navi31(), parts::navi48()] {
        let gpu = virtual_gpu(part, 9);
        gpu.gfx11().unwrap().silence_schedulers(true);
        let r = barebell_bringup::run(&gpu, &fw, &opts(Some(Mapping::Mes)), &Quiet);
        let e = failed_and_torn_down(&gpu, r, "rings");
        assert_eq!(e.step, Step::Rings, "{e}");
        let t = e.teardown.as_deref().unwrap();
        assert!(
            matches!(t.outcome(Stage::HaltMes), Some(Outcome::Done(_))),
            "{t}"
        );
    }
}

/// A direct HQD whose dequeue never completes (a wave that never
/// drains): the teardown says the unmap FAILED, still runs every later
/// stage, and the model is left with exactly that HQD active.
#[test]
fn a_failed_dequeue_is_reported_and_the_rest_still_runs() {
    let gpu = virtual_gpu(parts::navi31(), 11);
    let fw = FirmwareDir::system();
    let up = barebell_bringup::run(&gpu, &fw, &opts(Some(Mapping::Direct)), &Quiet).unwrap();
    gpu.gfx11().unwrap().mec().set_faults(MecFaults {
        dequeue_never_completes: true,
    });
    let report = up.shutdown();
    assert!(!report.complete(), "{report}");
    assert!(
        matches!(report.outcome(Stage::UnmapQueue), Some(Outcome::Failed(_))),
        "{report}"
    );
    for s in [
        Stage::HaltMec,
        Stage::PspRing,
        Stage::Doorbells,
        Stage::BusMaster,
    ] {
        assert!(
            matches!(report.outcome(s), Some(Outcome::Done(_))),
            "{s:?}: {report}"
        );
    }
    let why = gpu.quiescent().unwrap_err().0;
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(
        why[0].starts_with("HQD ME 1 pipe 0 queue 0 active"),
        "{why:?}"
    );
}

/// Records every step line.
#[derive(Default)]
struct Lines(std::sync::Mutex<Vec<String>>);

impl barebell_bringup::Sink for Lines {
    fn step(&self, step: Step, detail: std::fmt::Arguments<'_>) {
        if let Ok(mut v) = self.0.lock() {
            v.push(format!("step {}: {detail}", step.name()));
        }
    }
}

/// A panic while the device is up (in the caller's code, after the
/// bring-up) unwinds through the `Gpu`, whose drop guard tears the device
/// down before anything its owner holds goes back: every stage runs, and
/// the model ends quiescent. Before the guard a panic skipped the
/// teardown and left MES, the MEC, the rings and bus mastering live.
#[test]
fn a_panic_after_bring_up_still_tears_the_device_down() {
    for mapping in [Mapping::Mes, Mapping::Direct] {
        let gpu = virtual_gpu(parts::navi31(), 3);
        let fw = FirmwareDir::system();
        let lines = Lines::default();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let up = barebell_bringup::run(&gpu, &fw, &opts(Some(mapping)), &lines).unwrap();
            assert!(gpu.quiescent().is_err());
            if up.reached == Step::Queue {
                panic!("the caller's code panics with the device up");
            }
        }));
        assert!(r.is_err(), "{mapping:?}: the closure did not panic");
        let lines = lines.0.into_inner().unwrap();
        let teardown: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("step teardown: "))
            .collect();
        assert!(
            teardown[0].contains("let go without a shutdown"),
            "{mapping:?}: {teardown:?}"
        );
        // The guard line, then one line per stage.
        assert_eq!(
            teardown.len(),
            1 + Stage::ALL.len(),
            "{mapping:?}: {teardown:?}"
        );
        assert!(
            teardown
                .iter()
                .any(|l| l.contains("clear bus mastering: done")),
            "{teardown:?}"
        );
        gpu.quiescent()
            .unwrap_or_else(|e| panic!("{mapping:?}: {e}\n{teardown:?}"));
    }
}

/// A sink that stops the bring-up before its first step.
struct CancelAtOnce;

impl Sink for CancelAtOnce {
    fn step(&self, _: Step, _: fmt::Arguments<'_>) {}
    fn cancelled(&self) -> bool {
        true
    }
}

/// Stopped before discovery finished: the teardown clears bus mastering
/// (`PCI_COMMAND`, what `amdgpu_pci_remove()`'s `pci_disable_device()`
/// leaves) and has nothing else to undo.
#[test]
fn interrupted_before_discovery_clears_bus_mastering_only() {
    let gpu = virtual_gpu(parts::navi31(), 5);
    gpu.set_bus_master(true);
    let r = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts(None), &CancelAtOnce);
    let e = failed_and_torn_down(&gpu, r, "cancelled before discovery");
    assert_eq!(
        (e.kind.clone(), e.step),
        (ErrorKind::Interrupted, Step::Discovery),
        "{e}"
    );
    assert!(!gpu.bus_master(), "bus mastering left on");
    let report = e.teardown.as_deref().unwrap();
    for (stage, outcome) in &report.stages {
        match stage {
            Stage::BusMaster => assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}"),
            _ => assert!(
                matches!(outcome, Outcome::NotNeeded(_)),
                "{stage:?}: {outcome:?}"
            ),
        }
    }
}

/// A bring-up stopped right after the start step (`until: Step::Start`)
/// has written to the device (the start step may reset it), so its
/// teardown still signs: SCRATCH_REG6 = 0, every stage before done.
#[test]
fn a_bringup_stopped_after_the_start_step_still_signs() {
    let gpu = virtual_gpu(parts::navi31(), 9);
    let o = Options {
        until: Step::Start,
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &o, &Quiet).unwrap();
    let t = up.shutdown();
    assert_eq!(
        t.outcome(Stage::Signature),
        Some(&Outcome::Done("SCRATCH_REG6 = 0 (finalized)".into())),
        "{t}"
    );
}
