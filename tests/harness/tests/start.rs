//! Start-of-day states (issue 20, scope 1): the bring-up meets a device
//! an earlier driver left clean, running (amdgpu-like), finished by
//! barebell, or malformed, on Navi31 (MP1 13.0.0) and Navi48 (MP1
//! 14.0.3). Each state is made by running a driver on the model and
//! letting go (`barebell_model_host::start`). For each: the model sees
//! the action the sources prescribe (a mode-1 reset through the SMU for a
//! device someone else left running, none for a clean one, no firmware
//! reload for barebell's own finished run), the bring-up reaches its
//! queue, and the model ends quiescent after the shutdown.

use barebell_bringup::error::StartError;
use barebell_bringup::start::{Action, Malformation, StartState as Found};
use barebell_bringup::{ErrorKind, Mapping, Options, Quiet, Stage, Step};
use barebell_model::smu::SmuEvent;
use barebell_model::{VirtualGpu, parts};
use barebell_model_host::start::{self, Malformed, StartState};
use barebell_tests::{FirmwareDir, virtual_gpu};

fn opts(mapping: Mapping) -> Options {
    Options {
        until: Step::Queue,
        mapping: Some(mapping),
        ..Default::default()
    }
}

fn resets(gpu: &VirtualGpu) -> usize {
    gpu.gfx11()
        .unwrap()
        .soc()
        .smu
        .events()
        .iter()
        .filter(|e| matches!(e, SmuEvent::Mode1Reset))
        .count()
}

/// What the model saw of one bring-up from `state`.
struct Seen {
    start: barebell_bringup::start::StartReport,
    resets: usize,
    psp_commands: usize,
    refusals: Vec<String>,
}

fn bring_up_from(
    part: barebell_model::Part,
    state: StartState,
    mapping: Mapping,
) -> (Seen, VirtualGpu) {
    let name = part.name;
    let gpu = virtual_gpu(part, 7);
    let fw = FirmwareDir::system();
    let left = start::prepare(&gpu, &fw, state).unwrap_or_else(|e| panic!("{name}: {e}"));
    let resets_before = resets(&gpu);
    let commands_before = gpu.psp().commands().len();
    let mark = gpu.gfx11().unwrap().refusal_mark();
    let up = match barebell_bringup::run(&gpu, &fw, &opts(mapping), &Quiet) {
        Ok(up) => up,
        Err(e) => panic!(
            "{name} from {left}: {e}\nrefusals: {:?}\n{}",
            gpu.gfx11().unwrap().refusals_since(mark),
            gpu.firmware_logs()
        ),
    };
    assert_eq!(up.reached, Step::Queue, "{name} from {left}");
    let found = up
        .start
        .unwrap_or_else(|| panic!("{name}: no start report"));
    let report = up.shutdown();
    assert!(report.complete(), "{name} from {left}: {report}");
    if let Err(e) = gpu.quiescent() {
        panic!("{name} from {left}: {e}\n{report}");
    }
    // The teardown finalized the signature the bring-up wrote.
    assert_eq!(
        gpu.gfx11().unwrap().soc().power.get("SCRATCH_REG7"),
        Some(barebell_bringup::start::SIGNATURE)
    );
    assert_eq!(
        gpu.gfx11().unwrap().soc().power.get("SCRATCH_REG6"),
        Some(0)
    );
    let seen = Seen {
        start: found,
        resets: resets(&gpu) - resets_before,
        psp_commands: gpu.psp().commands().len() - commands_before,
        refusals: gpu.gfx11().unwrap().refusals_since(mark),
    };
    (seen, gpu)
}

fn each_part(f: impl Fn(barebell_model::Part)) {
    f(parts::navi31());
    f(parts::navi48());
}

#[test]
fn clean_device_is_brought_up_without_a_reset() {
    each_part(|part| {
        let name = part.name;
        let (seen, _gpu) = bring_up_from(part, StartState::Clean, Mapping::Mes);
        assert_eq!(seen.start.state, Found::Clean, "{name}");
        assert_eq!(seen.start.action, Action::FullBringup, "{name}");
        assert!(!seen.start.sos_alive, "{name}");
        assert_eq!(seen.resets, 0, "{name}");
        assert!(seen.refusals.is_empty(), "{name}: {:?}", seen.refusals);
    });
}

/// `soc21_need_reset_on_init()`: sOS's sign of life in `C2PMSG_81` means
/// a mode-1 reset before anything else (`amdgpu_device_mode1_reset()`),
/// with bus mastering off across it; the bring-up then starts from the
/// bootloader as on a clean device.
#[test]
fn device_left_running_by_another_driver_is_mode1_reset_first() {
    each_part(|part| {
        let name = part.name;
        let (seen, gpu) = bring_up_from(part, StartState::Amdgpu, Mapping::Mes);
        assert_eq!(seen.start.state, Found::LeftByOther, "{name}");
        // The reset turned ASPM L1 back on (model); the bring-up clears
        // it again after restoring the PCI state (tinygrad's
        // `_disable_aspm()`).
        assert_eq!(gpu.pci().aspm(), 0, "{name}: ASPM after the reset");
        assert_eq!(seen.start.action, Action::Mode1Reset, "{name}");
        assert!(seen.start.sos_alive, "{name}");
        assert!(seen.start.smu_version.is_some(), "{name}: PMFW asked first");
        // Linux sleeps 500 ms (MP1 13.0.0) or 1000 ms (14.0.2) after it.
        let want = if name == "navi31" {
            500_000_000
        } else {
            1_000_000_000
        };
        assert!(
            seen.start.reset_ns.is_some_and(|t| t >= want),
            "{name}: {:?}",
            seen.start.reset_ns
        );
        assert_eq!(seen.resets, 1, "{name}: one mode-1 reset");
        assert!(seen.refusals.is_empty(), "{name}: {:?}", seen.refusals);
    });
}

/// tinygrad's partial boot: its own signature in `SCRATCH_REG7` and a
/// finalized `SCRATCH_REG6` mean the firmware it loaded is still in place:
/// no reset, no PSP command at all, the GFX engines started again.
#[test]
fn barebells_own_finished_run_is_partially_reinitialised() {
    each_part(|part| {
        let name = part.name;
        for mapping in [Mapping::Mes, Mapping::Direct] {
            let (seen, _gpu) = bring_up_from(part.clone(), StartState::Barebell, mapping);
            assert_eq!(
                seen.start.state,
                Found::LeftByBarebell,
                "{name} {mapping:?}"
            );
            assert_eq!(
                seen.start.action,
                Action::PartialReinit,
                "{name} {mapping:?}"
            );
            assert_eq!(seen.resets, 0, "{name} {mapping:?}");
            assert_eq!(
                seen.psp_commands, 0,
                "{name} {mapping:?}: PSP commands sent"
            );
            assert!(
                seen.refusals.is_empty(),
                "{name} {mapping:?}: {:?}",
                seen.refusals
            );
        }
    });
}

/// tinygrad's "Malformed state. Issuing a full reset.": the signature is
/// there but the run never finalized, or a VM fault is latched.
#[test]
fn malformed_signature_or_latched_fault_gets_a_full_reset() {
    each_part(|part| {
        let name = part.name;
        for m in [Malformed::Unfinalized, Malformed::FaultLatched] {
            let (seen, _gpu) = bring_up_from(part.clone(), StartState::Malformed(m), Mapping::Mes);
            let found = match seen.start.state {
                Found::Malformed(Malformation::Unfinalized { scratch6: 1 }) => {
                    Malformed::Unfinalized
                }
                Found::Malformed(Malformation::FaultLatched(_)) => Malformed::FaultLatched,
                other => panic!("{name} {m:?}: found {other}"),
            };
            assert_eq!(found, m, "{name}");
            assert_eq!(seen.start.action, Action::Mode1Reset, "{name} {m:?}");
            assert_eq!(seen.resets, 1, "{name} {m:?}: one mode-1 reset");
            assert!(
                seen.refusals.is_empty(),
                "{name} {m:?}: {:?}",
                seen.refusals
            );
        }
    });
}

/// A device left running whose PMFW answers nothing cannot be reset
/// through the SMU: the bring-up refuses with a typed error before it
/// writes anything, and clears bus mastering on the way out, so the
/// engines the earlier driver left cannot reach memory. They keep their
/// state (no HQD is dequeued: the model is not quiescent, and says why).
#[test]
fn device_left_running_with_pmfw_silent_is_refused() {
    each_part(|part| {
        let name = part.name;
        let gpu = virtual_gpu(part, 9);
        let fw = FirmwareDir::system();
        start::prepare(&gpu, &fw, StartState::Malformed(Malformed::SmuDead)).unwrap();
        let e = match barebell_bringup::run(&gpu, &fw, &opts(Mapping::Mes), &Quiet) {
            Ok(_) => panic!("{name}: brought up over a live sOS with PMFW silent"),
            Err(e) => e,
        };
        assert_eq!(e.step, Step::Start, "{name}: {e}");
        assert_eq!(e.kind, ErrorKind::Start(StartError::SmuDead), "{name}: {e}");
        assert_eq!(resets(&gpu), 0, "{name}");
        let t = e.teardown.as_deref().unwrap();
        assert!(
            matches!(
                t.outcome(Stage::BusMaster),
                Some(barebell_bringup::Outcome::Done(_))
            ),
            "{t}"
        );
        assert!(!gpu.bus_master(), "{name}");
        let why = gpu.quiescent().unwrap_err().0;
        assert!(!why.iter().any(|w| w.contains("bus mastering")), "{why:?}");
        assert!(
            why.iter().any(|w| w.contains("MES pipe 0 running")),
            "{why:?}"
        );
    });
}

/// A mode-1 reset clears the function's BARs and command register
/// (`amdgpu_device_mode1_reset()` caches the PCI state before it and
/// loads it back after, `amdgpu_device_load_pci_state()`): on the model
/// BAR5 reads all ones from shortly after the PMFW's answer until the
/// state is restored. The bring-up restores it before its first read, so
/// no access was lost; a bring-up that waited on BAR5 first (the order
/// before this) failed with "device gone while waiting for
/// MP0_SMN_C2PMSG_35".
#[test]
fn the_pci_state_a_mode1_reset_clears_is_restored_before_any_read() {
    use barebell::platform::Platform;
    each_part(|part| {
        let name = part.name;
        let (seen, gpu) = bring_up_from(part, StartState::Amdgpu, Mapping::Direct);
        assert_eq!(seen.resets, 1, "{name}");
        assert_eq!(
            gpu.gfx11().unwrap().soc().pci.undecoded(),
            0,
            "{name}: BAR5 accesses lost"
        );
        // The model's own behaviour, directly: a reset pending, then BAR5
        // silent until the state comes back.
        assert!(Platform::save_pci_state(&gpu), "{name}");
        gpu.gfx11().unwrap().soc().pci.reset();
        let clock = Platform::clock(&gpu);
        let until = clock.now_ns() + barebell_model::pci_config::RESET_AFTER_NS;
        while clock.now_ns() < until {
            Platform::pause(&gpu);
        }
        assert!(!gpu.gfx11().unwrap().soc().pci.decodes(), "{name}");
        let boot = barebell::discovery::boot::RCC_CONFIG_MEMSIZE;
        let at = boot
            .byte_offset(&barebell::regs::IpBases::default())
            .unwrap();
        assert_eq!(
            Platform::regs(&gpu).read32(at),
            barebell::bus::ALL_ONES,
            "{name}"
        );
        assert!(gpu.gfx11().unwrap().soc().pci.undecoded() > 0, "{name}");
        assert!(Platform::restore_pci_state(&gpu), "{name}");
        assert_ne!(
            Platform::regs(&gpu).read32(at),
            barebell::bus::ALL_ONES,
            "{name}"
        );
    });
}

/// A partial re-init skips the PSP step, so sOS keeps running on the TMR
/// barebell's earlier run set up; that VRAM must stay reserved
/// (`psp_tmr_init()` allocates it, only `psp_hw_fini()` frees it). A
/// second run that asks for more user VRAM than the first lays its
/// tables and user VRAM out differently; the model's PSP checks its TMR
/// canaries at the end.
#[test]
fn a_partial_reinit_keeps_the_live_tmr_reserved() {
    each_part(|part| {
        let name = part.name;
        let gpu = virtual_gpu(part, 7);
        let fw = FirmwareDir::system();
        start::prepare(&gpu, &fw, StartState::Barebell).unwrap_or_else(|e| panic!("{name}: {e}"));
        let opts = Options {
            until: Step::Queue,
            mapping: Some(Mapping::Direct),
            user_vram: 32 << 20,
            ..Default::default()
        };
        let mark = gpu.gfx11().unwrap().refusal_mark();
        let mut up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet).unwrap_or_else(|e| {
            panic!(
                "{name}: {e}\n{:?}",
                gpu.gfx11().unwrap().refusals_since(mark)
            )
        });
        let found = up
            .start
            .unwrap_or_else(|| panic!("{name}: no start report"));
        assert_eq!(found.action, Action::PartialReinit, "{name}");
        // The record the earlier run left is the TMR the PSP holds (none
        // on navi48, whose sOS keeps a boot-time TMR: no SETUP_TMR).
        assert_eq!(
            found.live_tmr,
            gpu.psp().tmr().map(|(at, size)| (at, u64::from(size))),
            "{name}"
        );
        if name == "navi31" {
            assert!(found.live_tmr.is_some(), "{name}: a TMR was set up");
        }
        // A program uses all the user VRAM it was given.
        let uv = up.user_vram.as_mut().expect("user VRAM");
        let buf = uv.alloc(32 << 20, 4096).expect("all of it");
        assert!(buf.host.fill(0, buf.host.len(), 0xab));
        let report = up.shutdown();
        assert!(report.complete(), "{name}: {report}");
        gpu.quiescent().unwrap_or_else(|e| panic!("{name}: {e}"));
        gpu.psp()
            .tmr_intact()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    });
}
