//! Starting MES (program counters, unhalt, versions from `CP_MES_GP3_LO`)
//! against the MEC model's MES pipes, and the version-gated SET_HW_RSRC
//! field.

use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::mapper::HqdRegs;
use barebell::gfx::mes::start::{MesStart, MesStartError, MesVersions, start};
use barebell::gfx::mes::{HwBases, Mes, MesApi, V11, V12};
use barebell::ip::Generation;
use barebell_firmware_if::mes_api::v12;
use barebell_model::{Seed, TickingClock};
use barebell_model_host::mec::{GC_BASES, ModelGpu};

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

const UC: [u64; 2] = [0x1_2345_6780, 0x2_0000_0100];

fn started(generation: Generation) {
    let gpu = ModelGpu::new(generation, Seed(1)).unwrap();
    // Model firmware words: feature 0, API 3, firmware 0x51 / 0x52.
    gpu.mec.set_mes_versions([3 << 12 | 0x51, 3 << 12 | 0x52]);
    let clock = TickingClock::new(10_000);
    let v = start(
        gpu.mec,
        &clock,
        &GC_BASES,
        generation,
        &MesStart {
            uc_start: UC,
            kiq_pipe: true,
        },
    )
    .unwrap();
    assert_eq!(
        v,
        MesVersions {
            sched: 0x3051,
            kiq: Some(0x3052)
        }
    );
    assert_eq!((v.firmware(), v.api()), (0x51, 3));
    assert!(v.legacy_queue_map());
    // The program counters hold the ucode start in dwords.
    assert_eq!(
        gpu.mec.mes_pipes(),
        [(0x1_2345_6780 >> 2, true), (0x2_0000_0100 >> 2, true)]
    );
}

#[test]
fn mes_starts_and_reports_versions_on_gfx11() {
    started(Generation::Gfx11);
}

#[test]
fn mes_starts_and_reports_versions_on_gfx12() {
    started(Generation::Gfx12);
}

#[test]
fn a_pipe_without_a_start_address_does_not_run() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(2)).unwrap();
    let err = start(
        gpu.mec,
        &TickingClock::new(10_000),
        &GC_BASES,
        Generation::Gfx11,
        &MesStart {
            uc_start: [0, 0],
            kiq_pipe: false,
        },
    )
    .unwrap_err();
    assert_eq!(err, MesStartError::NotRunning { pipe: 0 });
    let err = start(
        gpu.mec,
        &TickingClock::new(10_000),
        &GC_BASES,
        Generation::Gfx11,
        &MesStart {
            uc_start: [0x1002, 0],
            kiq_pipe: false,
        },
    )
    .unwrap_err();
    assert_eq!(
        err,
        MesStartError::Misaligned {
            pipe: 0,
            address: 0x1002
        }
    );
}

#[test]
fn unplugged_device_is_device_gone() {
    let gpu = ModelGpu::new(Generation::Gfx12, Seed(3)).unwrap();
    gpu.mec.unplug();
    let err = start(
        gpu.mec,
        &TickingClock::new(10_000),
        &GC_BASES,
        Generation::Gfx12,
        &MesStart {
            uc_start: UC,
            kiq_pipe: false,
        },
    )
    .unwrap_err();
    assert_eq!(err, MesStartError::DeviceGone { pipe: 0 });
}

/// SET_HW_RSRC as written to the ring: v12 firmware before 0x8b gets an
/// oversubscription timer of 0, from 0x8b on 50
/// (`mes_v12_0_set_hw_resources()`); v11 always 50.
fn timer_sent<A: MesApi>(firmware: u32) -> u32 {
    let gpu = ModelGpu::new(A::GENERATION, Seed(4)).unwrap();
    Doorbells::linux_default()
        .program(
            gpu.mec,
            &HqdRegs::for_generation(A::GENERATION).unwrap(),
            &GC_BASES,
        )
        .unwrap();
    gpu.mec.set_mes_versions([2 << 12 | firmware, 0]);
    let v = start(
        gpu.mec,
        &TickingClock::new(10_000),
        &GC_BASES,
        A::GENERATION,
        &MesStart {
            uc_start: UC,
            kiq_pipe: false,
        },
    )
    .unwrap();
    let (ring, model) = gpu.mes::<1024>().unwrap();
    let model: &'static _ = Box::leak(Box::new(model));
    let pause: Box<dyn FnMut()> = Box::new(move || {
        model.service();
    });
    let mut mes: Mes<'_, _, _, 1024, A> = Mes::new(
        ring,
        TickingClock::new(1_000),
        pause,
        Doorbells::linux_default(),
    )
    .unwrap();
    mes.set_versions(v);
    if A::GENERATION == barebell::ip::Generation::Gfx12 {
        barebell::gfx::mes::rings::enable_unmapped_doorbell_handling(gpu.mec, &GC_BASES).unwrap();
    }
    mes.set_hw_resources(&HW).unwrap();
    // Both layouts put oversubscription_timer at the same offset.
    let off = std::mem::offset_of!(v12::SetHwResources, oversubscription_timer);
    assert_eq!(
        off,
        std::mem::offset_of!(
            barebell_firmware_if::mes_api::v11::SetHwResources,
            oversubscription_timer
        )
    );
    // SAFETY: the ring is leaked memory; MES has consumed the frame.
    unsafe { ((ring.memory.ring_address() + off as u64) as *const u32).read_volatile() }
}

#[test]
fn v12_oversubscription_timer_is_gated_on_the_firmware_revision() {
    assert_eq!(timer_sent::<V12>(0x8a), 0);
    assert_eq!(timer_sent::<V12>(0x8b), 50);
    assert_eq!(timer_sent::<V11>(0x10), 50);
}

/// A MES pipe runs only code the PSP's RLC autoload put in place
/// (`barebell_model::psp::LoadedFirmware`): with pipe 0's `CP_MES` and
/// `MES_STACK` loaded but not pipe 1's `CP_MES_KIQ`/`MES_KIQ_STACK` (what
/// barebell loaded on gfx12 before it followed `mes_v12_0_early_init()`),
/// pipe 0 starts and pipe 1 stays silent, which the runtime reports as
/// not running.
#[test]
fn a_pipe_whose_code_was_never_loaded_does_not_run() {
    use barebell_model::mec::MecEvent;
    use barebell_model::psp::LoadedFirmware;
    use barebell_model::psp::iface::fw;
    for generation in [Generation::Gfx11, Generation::Gfx12] {
        let gpu = ModelGpu::new(generation, Seed(3)).unwrap();
        let loaded = LoadedFirmware::autoloaded(gpu.clock, [fw::CP_MES, fw::MES_STACK]);
        gpu.mec.set_loaded_firmware(std::sync::Arc::new(loaded));
        let err = start(
            gpu.mec,
            &TickingClock::new(10_000),
            &GC_BASES,
            generation,
            &MesStart {
                uc_start: UC,
                kiq_pipe: true,
            },
        )
        .unwrap_err();
        assert_eq!(err, MesStartError::NotRunning { pipe: 1 });
        assert!(gpu.mec.mes_pipe_running(0));
        assert!(!gpu.mec.mes_pipe_running(1));
        assert!(
            gpu.mec
                .events()
                .contains(&MecEvent::MesPipeWithoutCode { pipe: 1 })
        );
        // Nothing loaded at all: not even pipe 0 runs.
        let gpu = ModelGpu::new(generation, Seed(4)).unwrap();
        let none = LoadedFirmware::autoloaded(gpu.clock, []);
        gpu.mec.set_loaded_firmware(std::sync::Arc::new(none));
        let err = start(
            gpu.mec,
            &TickingClock::new(10_000),
            &GC_BASES,
            generation,
            &MesStart {
                uc_start: UC,
                kiq_pipe: false,
            },
        )
        .unwrap_err();
        assert_eq!(err, MesStartError::NotRunning { pipe: 0 });
    }
}
