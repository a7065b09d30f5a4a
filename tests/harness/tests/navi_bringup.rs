//! The last Navi (navi31, navi48) bring-up steps Linux 6.12 takes and the
//! model checks: the gfx12 KIQ named to the RLC, the PFP/ME program
//! counters, the SMU features, and the MEC's start delay.

use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::gfx_pipes::Engine;
use barebell_model::mec::MecEvent;
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

/// The bring-up as far as `until` (`mapping`'s first packet for
/// `Step::Queue`), kept running; a panic with the firmware logs on error.
fn up(part: barebell_model::Part, mapping: Mapping, until: Step) -> barebell_model::VirtualGpu {
    let name = part.name;
    let gpu = virtual_gpu(part, 3);
    let opts = Options {
        until,
        mapping: Some(mapping),
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    match barebell_bringup::run(&gpu, &fw, &opts, &Quiet) {
        Ok(up) => up.abandon(),
        Err(e) => panic!("{name} {mapping:?}: {e}\n{}", gpu.firmware_logs()),
    }
    gpu
}

/// `mes_v12_0_kiq_hw_init()` calls `mes_v12_0_kiq_setting()` on
/// `adev->mes.ring[AMDGPU_MES_KIQ_PIPE]` (ME 3, pipe 1, queue 0) under
/// uni-MES: `RLC_CP_SCHEDULERS.scheduler0` = 3 << 5 | 1 << 3 | 0 with the
/// enable bit 0x80, i.e. 0xE8 (hand-computed), as on gfx11. The model
/// serves MES pipe 1's ring only once it is named, so the kiq and mes
/// mappings reach their first packet only if the bring-up names it.
#[test]
fn navi48_names_mes_pipe_1_as_the_kiq() {
    for m in [Mapping::Mes, Mapping::Kiq] {
        let gpu = up(parts::navi48(), m, Step::Queue);
        let g = gpu.gfx11().unwrap();
        assert_eq!(g.mec().rlc_cp_schedulers() & 0xFF, 0xE8, "{m:?}");
    }
}

/// `gfx_v11_0_config_gfx_rs64()` / `gfx_v12_0_config_gfx_rs64()` point
/// PFP and ME pipes 0 and 1 at their blobs' start and pulse their resets.
/// The expected value is read here from the blob with this test's own
/// reading of `gfx_firmware_header_v2_0` (`amdgpu_ucode.h`: 32-bit
/// `ucode_start_addr_lo` at byte 52, `_hi` at 56), in dwords.
#[test]
fn every_pfp_and_me_pipe_starts_at_its_code() {
    for (part, stem) in [
        (parts::navi31(), "gc_11_0_0"),
        (parts::navi48(), "gc_12_0_1"),
    ] {
        let gpu = up(part, Mapping::Direct, Step::Rlc);
        let g = gpu.gfx11().unwrap();
        for (engine, file) in [(Engine::Pfp, "pfp"), (Engine::Me, "me")] {
            let path = format!("/lib/firmware/amdgpu/{stem}_{file}.bin");
            let blob = std::fs::read(&path).unwrap();
            let word = |at: usize| u32::from_le_bytes(blob[at..at + 4].try_into().unwrap());
            let start = u64::from(word(56)) << 32 | u64::from(word(52));
            for pipe in 0..2 {
                assert_eq!(
                    g.mec().gfx_pipe_program(engine, pipe),
                    Some(start >> 2),
                    "{stem} {engine:?} pipe {pipe}"
                );
            }
        }
        let wrong: Vec<_> = g
            .mec()
            .events()
            .into_iter()
            .filter(|e| {
                matches!(
                    e,
                    MecEvent::GfxPipe(barebell_model::gfx_pipes::GfxPipeEvent::WrongPc { .. })
                )
            })
            .collect();
        assert!(wrong.is_empty(), "{stem}: {wrong:?}");
    }
}

/// `smu_smc_hw_setup()` → `smu_system_features_control(smu, true)`
/// (`smu_v13_0_system_features_control()` / `smu_v14_0_…`) sends
/// `EnableAllSmuFeatures`; tinygrad's `AM_SMU.init_hw()` does too. The
/// model's PMFW keeps its features off until then and rejects DPM queries.
#[test]
fn the_smu_features_are_enabled_after_the_psp_step() {
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let gpu = up(part, Mapping::Direct, Step::Psp);
        let smu = &gpu.gfx11().unwrap().soc().smu;
        assert!(smu.features_enabled(), "{name}: {:?}", smu.events());
    }
}

/// `gfx_v11_0_cp_compute_enable()` / `gfx_v12_0_cp_compute_enable()` end
/// with `udelay(50)` right after the `CP_MEC_RS64_CNTL` write that starts
/// the pipes: the model measures the time from that start to the next CP
/// register access, and refuses a queue on a pipe that started less than
/// 50 µs before (*model convention*, `MecError::PipeStarting`). Each
/// mapping's next step is the first thing after the rlc step.
#[test]
fn the_mec_gets_50_us_after_it_starts() {
    for part in [parts::navi31(), parts::navi48()] {
        for m in [Mapping::Direct, Mapping::Mes] {
            let name = part.name;
            let gpu = up(part.clone(), m, Step::Queue);
            let g = gpu.gfx11().unwrap();
            let quiet = g.mec().start_quiet_ns().expect("the MEC started");
            assert!(quiet >= 50_000, "{name} {m:?}: only {quiet} ns");
            let refused: Vec<_> = g
                .mec()
                .events()
                .into_iter()
                .filter(|e| matches!(e, MecEvent::Refused { .. }))
                .collect();
            assert!(refused.is_empty(), "{name} {m:?}: {refused:?}");
        }
    }
}

/// `gfx_v11_0_rlc_resume()` / `gfx_v12_0_rlc_resume()` with PSP loading
/// enable the RLC's save/restore machine (`gfx_v11_0_rlc_enable_srm()`:
/// `RLC_SRM_CNTL |= AUTO_INCR_ADDR | SRM_ENABLE`). The value is read at
/// the register's place in the model's power block: `regRLC_SRM_CNTL`
/// 0x4c80, base index 1 (`gc_11_0_0_offset.h`, `gc_12_0_0_offset.h`),
/// and must hold `SRM_ENABLE` (0x1) and `AUTO_INCR_ADDR` (0x2,
/// `gc_1x_0_0_sh_mask.h`): 0x3.
#[test]
fn the_rlc_save_restore_machine_is_on_after_the_rlc_step() {
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let gpu = up(part, Mapping::Direct, Step::Rlc);
        let power = &gpu.gfx11().unwrap().soc().power;
        assert!(power.srm_enabled(), "{name}");
        assert_eq!(power.get("RLC_SRM_CNTL"), Some(0x3), "{name}");
    }
}

/// tinygrad's `AMDev._disable_aspm()` clears the GPU endpoint's Link
/// Control ASPM Control (bits 1:0, `PCI_EXP_LNKCTL_ASPMC` in
/// `pci_regs.h`) before anything else: "L1 across retimers makes reads
/// oscillate to 0xffffffff; power on defaults it enabled." The model's
/// function powers on with L1 enabled (0x2, *model value*), so the field
/// must be 0 after a bring-up. (A mode-1 reset turns it back on: the
/// reset path is checked in `start.rs`,
/// `device_left_running_by_another_driver_is_mode1_reset_first`.)
#[test]
fn aspm_is_off_after_the_bring_up() {
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let gpu = up(part, Mapping::Direct, Step::Rlc);
        assert_eq!(gpu.pci().aspm(), 0, "{name}");
    }
}

/// The model convention itself: a queue activated on a MEC pipe within
/// 50 µs of the pipe's start is refused with `MecError::PipeStarting`.
/// After a bring-up to the rlc step the MEC is halted and started again
/// by raw `CP_MEC_RS64_CNTL` writes (the value the bring-up left, read
/// back, then with `MEC_HALT`, bit 30, `gc_11_0_0_sh_mask.h`), and
/// `CP_HQD_ACTIVE` of ME 1 pipe 0 queue 0 is set at once
/// (`GRBM_GFX_CNTL`: MEID bits 3:2 = 1, i.e. 0x4).
#[test]
fn a_queue_loaded_right_after_the_mec_start_is_refused() {
    use barebell::bus::{Block, RegisterBus};
    use barebell::regs::gc_11_0_0 as r;
    use barebell_model::mec::MecError;
    let part = parts::navi31();
    let gpu = virtual_gpu(part, 5);
    let opts = Options {
        until: Step::Rlc,
        mapping: Some(Mapping::Direct),
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    let up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet).unwrap();
    let bases = up.ips.gc.bases;
    up.abandon();
    let bus: &dyn RegisterBus = barebell::platform::Platform::regs(&gpu);
    let gc = Block::new(bus, bases);
    let running = gc.read(r::CP_MEC_RS64_CNTL).unwrap();
    gc.write(r::CP_MEC_RS64_CNTL, running | 1 << 30).unwrap();
    gc.write(r::CP_MEC_RS64_CNTL, running).unwrap();
    gc.write(r::GRBM_GFX_CNTL, 0x4).unwrap();
    gc.write(r::CP_HQD_ACTIVE, 1).unwrap();
    let refused: Vec<_> = gpu
        .gfx11()
        .unwrap()
        .mec()
        .events()
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                MecEvent::Refused {
                    me: 1,
                    pipe: 0,
                    queue: 0,
                    why: MecError::PipeStarting { pipe: 0, .. }
                }
            )
        })
        .collect();
    assert_eq!(
        refused.len(),
        1,
        "{:?}",
        gpu.gfx11().unwrap().mec().events()
    );
}

/// navi48 brought up to a ready queue mapped `mapping`, kept as a
/// bring-up handle so a test can map more queues.
fn queue_up(m: &barebell_model::VirtualGpu, mapping: Mapping) -> barebell_bringup::Gpu<'_> {
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        ..Default::default()
    };
    barebell_bringup::run(m, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{}", m.firmware_logs()))
}

/// One more AQL queue in the bring-up's memory (ring and pointers in the
/// process part, MQD and EOP buffer the driver's), mapped by the bring-up's
/// mapper at `doorbell`, for the user VMID.
struct Extra<'p> {
    qmem: barebell::mem::Dev<'p, barebell::aql::QueueMemory<64>>,
    mapping: barebell::gfx::mapper::Mapping,
}

fn map_extra<'p>(
    gpu: &mut barebell_bringup::Gpu<'p>,
    doorbell: u32,
) -> Result<Extra<'p>, barebell::gfx::error::MapError> {
    let user = gpu.user_rings.as_mut().unwrap();
    let qmem = user.put(barebell::aql::QueueMemory::<64>::new()).unwrap();
    let eop = user.put(barebell::gfx::mqd::EopBuffer::new()).unwrap();
    let mqd = gpu
        .ring_area
        .as_mut()
        .unwrap()
        .put(barebell::gfx::mqd::MqdPage::new())
        .unwrap();
    let res = barebell::gfx::mapper::QueueResources::process_aql(
        mqd,
        eop,
        qmem.ring_address(),
        64 * 64,
        qmem.read_index_address(),
        qmem.write_index_address(),
        doorbell,
        barebell_bringup::queue::USER_VMID,
    )
    .unwrap();
    let mapping = gpu.queue.as_mut().unwrap().mapper_mut().map(&res)?;
    Ok(Extra { qmem, mapping })
}

/// A barrier on the queue over `qmem` at `doorbell`, run to its signal.
fn barrier_runs(
    m: &barebell_model::VirtualGpu,
    gpu: &mut barebell_bringup::Gpu<'_>,
    qmem: &barebell::mem::Dev<'_, barebell::aql::QueueMemory<64>>,
    doorbell: u32,
) -> bool {
    use barebell::aql::packet::{BarrierKind, BarrierPacket, Fences};
    use barebell::aql::{AqlQueue, QueueConfig, SignalMemory};
    use barebell::platform::Platform;
    let signal = gpu
        .user_rings
        .as_mut()
        .unwrap()
        .put(SignalMemory::new(1))
        .unwrap();
    let db = gpu.doorbells.doorbell(doorbell).unwrap();
    let q = AqlQueue::new(qmem.get(), db, QueueConfig::default()).unwrap();
    let barrier =
        BarrierPacket::new(BarrierKind::And, &[], signal.handle(), Fences::SYSTEM).unwrap();
    q.submit(&barrier, Platform::clock(m), 1_000_000_000)
        .unwrap();
    for _ in 0..10_000 {
        if signal.value() == 0 {
            return true;
        }
        m.run_until_idle(1);
    }
    signal.value() == 0
}

/// gfx12's `--mapping kiq` maps kernel compute queues with `map_legacy_kq`
/// ADD_QUEUEs on MES pipe 1 (`amdgpu_mes_map_legacy_queue()`), each on an
/// HQD of its own among the kernel's: MEC1 pipes 0 and 1, queues 0 and 1
/// (`gfx_v12_0_sw_init()`: two pipes of four queues; `amdgpu_mes_init()`:
/// `compute_hqd_mask = 0xc`, MES's queues 2 and 3). So the bring-up's
/// queue and three more take the four slots, each different, and every
/// one of them runs a barrier; a fifth is refused before anything is sent.
#[test]
fn navi48_legacy_queues_take_the_four_kernel_slots() {
    use barebell::gfx::error::MapError;
    let m = virtual_gpu(parts::navi48(), 3);
    let mut gpu = queue_up(&m, Mapping::Kiq);
    let first = gpu.queue.as_ref().unwrap().doorbell;
    let mut extras = Vec::new();
    for k in 1..=3 {
        let e = map_extra(&mut gpu, first + k)
            .unwrap_or_else(|e| panic!("queue {k}: {e}\n{}", m.firmware_logs()));
        extras.push(e);
    }
    let mut slots: Vec<(u8, u8)> = extras
        .iter()
        .map(|e| (e.mapping.pipe, e.mapping.queue))
        .collect();
    slots.sort();
    // The bring-up's own queue holds the fourth slot.
    let kernel = [(0, 0), (0, 1), (1, 0), (1, 1)];
    let held: Vec<_> = kernel.iter().filter(|s| !slots.contains(s)).collect();
    assert_eq!(held.len(), 1, "{slots:?}");
    slots.dedup();
    assert_eq!(slots.len(), 3, "two queues share an HQD: {slots:?}");
    assert!(matches!(
        map_extra(&mut gpu, first + 4),
        Err(MapError::NoFreeSlot)
    ));
    for e in &extras {
        assert!(
            barrier_runs(&m, &mut gpu, &e.qmem, e.mapping.doorbell),
            "the queue at doorbell {} never ran its barrier\n{}",
            e.mapping.doorbell,
            m.firmware_logs()
        );
    }
    for e in &extras {
        gpu.queue
            .as_mut()
            .unwrap()
            .mapper_mut()
            .unmap(&e.mapping)
            .unwrap();
    }
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
}
