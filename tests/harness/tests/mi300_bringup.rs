//! The one bring-up on the GC 9.4.3 model device (`VirtualGpu`: MI300X,
//! MI308X) as far as the rlc step, with the real firmware from
//! `firmware-amd-graphics`.
//!
//! Expected values are written by hand from Linux 6.12:
//! - every XCC's GFXHUB v1.2 and every AID's MMHUB 1.8 get the same VMID0
//!   context (`gfxhub_v1_2_xcc_gart_enable()` over `xcc_mask`,
//!   `mmhub_v1_8_gart_enable()` over `aid_mask`, both from
//!   `gmc_v9_0_gart_enable()`), with the shape barebell gives VMID0, a
//!   user context's (`gfxhub_v1_2_xcc_setup_vmid_config()` with
//!   translate-further: `PAGE_TABLE_DEPTH = num_level - 1` = 2 and
//!   `PAGE_TABLE_BLOCK_SIZE = block_size` = 9, from
//!   `amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48)` in
//!   `gmc_v9_0_sw_init()`);
//! - the PSP gets the ten GFX ucodes `psp_load_non_psp_fw()` sends for GC
//!   9.4.3 and SDMA 4.4.2 (psp_gfx_if.h fw types: SDMA0..3 = 9, 10, 52,
//!   53; CP_MEC = 4, CP_MEC_ME1 = 5; RLC_G = 8), after the P2S table
//!   (129) of `smu_13_0_6.bin`;
//! - after `gfx_v9_4_3_hw_init()` every XCC's MEC runs (CP_MEC_CNTL 0)
//!   and holds `GOLDEN_GB_ADDR_CONFIG` (0x2a114042);
//! - the teardown leaves the device as `amdgpu_device_fini_hw()` does.

use barebell_bringup::{FirmwareDir, Options, Quiet, Step};
use barebell_model::VirtualGpu;
use barebell_model::parts;
use barebell_model::vgpu::HostMemory;

fn device(part: parts::Part) -> VirtualGpu {
    let mem = HostMemory::allocate(64 << 20).unwrap();
    VirtualGpu::new(
        part,
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(7),
    )
    .unwrap()
}

fn until_rlc() -> Options {
    Options {
        until: Step::Rlc,
        ..Options::default()
    }
}

fn check_part(part: parts::Part, xccs: usize, aids: usize) {
    let name = part.name;
    let m = device(part);
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until_rlc(), &Quiet)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(gpu.reached, Step::Rlc, "{name}");
    let layout = gpu.memory.unwrap();
    assert_eq!(m.gc_9_4_3().unwrap().gfxhubs().len(), xccs, "{name}");
    assert_eq!(m.gc_9_4_3().unwrap().mmhubs().len(), aids, "{name}");
    for (kind, hubs) in [
        ("GFXHUB", m.gc_9_4_3().unwrap().gfxhubs()),
        ("MMHUB", m.gc_9_4_3().unwrap().mmhubs()),
    ] {
        for (i, h) in hubs.iter().enumerate() {
            let c = h
                .context(0)
                .unwrap_or_else(|e| panic!("{name} {kind} {i}: {e:?}"));
            assert_eq!(c.root, layout.vmid0_root, "{name} {kind} {i} root");
            assert_eq!(
                (c.start, c.end),
                (layout.vmid0.0, layout.vmid0.1),
                "{name} {kind} {i} range"
            );
            assert_eq!((c.depth, c.block_size), (2, 9), "{name} {kind} {i} shape");
        }
    }
    let loaded = m.psp().loaded();
    // GFX_FW_TYPE_P2S_TABLE = 129: psp_load_p2s_table() sends it, Debian's
    // sOS being past 0x0036003C.
    for t in [9, 10, 52, 53, 4, 5, 8, 129] {
        assert!(loaded.has(t), "{name}: fw type {t} not loaded");
    }
    assert_eq!(m.psp().refusals(), vec![], "{name}");
    for x in 0..xccs {
        let rlc = m.gc_9_4_3().unwrap().rlc_mec();
        rlc.mec_run(x).unwrap_or_else(|e| panic!("{name}: {e}"));
        // GOLDEN_GB_ADDR_CONFIG (gfx_v9_4_3.c).
        assert_eq!(rlc.gb_addr_config(x), Some(0x2a11_4042), "{name} XCC {x}");
    }
    let report = gpu.shutdown();
    assert!(report.complete(), "{name}: {report}");
    m.quiescent().unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[test]
fn mi300x_comes_up_to_the_rlc_step_on_eight_xccs() {
    check_part(parts::mi300x(), 8, 4);
}

#[test]
fn mi308x_comes_up_to_the_rlc_step_on_four_xccs() {
    check_part(parts::mi308x(), 4, 4);
}

/// Model first: the device's MMHUB of AID 0 walks VMID0 for the PSP. A
/// bring-up stopped after the gmc step leaves the MEC halted and the
/// hubs' contexts enabled, which the device reports until the teardown.
#[test]
fn a_bring_up_stopped_after_gmc_tears_the_hubs_down() {
    let m = device(parts::mi300x());
    let opts = Options {
        until: Step::Gmc,
        ..Options::default()
    };
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet).unwrap();
    let busy = m.quiescent().unwrap_err().to_string();
    assert!(busy.contains("GFXHUB of XCC 7: VM contexts"), "{busy}");
    assert!(busy.contains("MMHUB of AID 3: VM contexts"), "{busy}");
    for x in 0..8 {
        assert!(
            m.gc_9_4_3().unwrap().rlc_mec().mec_run(x).is_err(),
            "XCC {x} runs before PSP"
        );
    }
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
    m.quiescent().unwrap();
}

/// What no block model claims on the way to the rlc step: the device
/// keeps them in a plain register file and records them. Exactly the HDP
/// registers `hdp_v4_0_init_registers()` writes (the model has no HDP
/// block; HDP 4.4.2 at the model's base 0xF20 + `regHDP_NONSURFACE_BASE`
/// 0x40, `_HI` 0x42, `regHDP_MISC_CNTL` 0xd3 of `hdp_4_4_2_offset.h`).
/// XCC 0's `SCRATCH_REG6/7` (the start step's signature) are the model's
/// stored registers now (`socregs::gc_9_4_3_stored`).
#[test]
fn registers_no_block_claims_are_the_hdp() {
    let m = device(parts::mi300x());
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until_rlc(), &Quiet).unwrap();
    let _ = gpu.shutdown();
    let mut offs: Vec<usize> = m
        .gc_9_4_3()
        .unwrap()
        .unclaimed()
        .iter()
        .map(|(_, o)| *o)
        .collect();
    offs.sort_unstable();
    offs.dedup();
    let want: Vec<usize> = [0xF20 + 0x40, 0xF20 + 0x42, 0xF20 + 0xd3]
        .iter()
        .map(|dw| dw * 4)
        .collect();
    assert_eq!(offs, want);
    // Nothing was lost past BAR5: every far register went through the
    // NBIO 7.9 index/data pair.
    assert_eq!(m.bar5_counts().beyond, 0);
    assert!(m.bar5_counts().indirect > 0);
}

/// The HWS path as KFD's CPSCH drives it, seen from the model's HWS:
/// SET_RESOURCES with KFD's VMIDs on GC 9.4.3 (3..15, mask 0xFFF8:
/// `gmc_v9_0_sw_init()` sets `first_kfd_vmid` 3 for GC 9.4.1-9.4.4, KFD's
/// `compute_vmid_bitmap` covers it to 15), one process (PASID 0x8001, the bring-up's) whose
/// page-table base is the process tables' root, one compute queue on
/// doorbell dword 0x20 (64-bit doorbell 0x10, layout 1's first user
/// queue), the VMID the scheduler gave it the lowest of the mask, and
/// the queue active on every XCC.
#[test]
fn the_hws_maps_the_process_and_its_queue_on_every_xcc() {
    use barebell_bringup::Mapping;
    for (part, xccs) in [(parts::mi300x(), 8usize), (parts::mi308x(), 4)] {
        let name = part.name;
        let m = device(part);
        let opts = Options {
            until: Step::Queue,
            mapping: Some(Mapping::Hws),
            ..Options::default()
        };
        let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let root = gpu.memory.unwrap().process_root;
        let hws = m
            .gc_9_4_3()
            .unwrap()
            .mec()
            .hws()
            .expect("the HIQ was mapped");
        assert_eq!(hws.refusal(), None, "{name}");
        let r = hws.resources().unwrap();
        assert_eq!(r.vmid_mask, 0xFFF8, "{name}");
        let procs = hws.processes();
        assert_eq!(procs.len(), 1, "{name}");
        assert_eq!(procs[0].pasid, 0x8001, "{name}");
        assert_eq!(procs[0].page_table_base & !0xFFF, root, "{name}");
        assert_eq!(procs[0].vmid, Some(3), "{name}");
        let queues = hws.queues();
        assert_eq!(queues.len(), 1, "{name}");
        assert_eq!(queues[0].doorbell_offset, 0x20, "{name}");
        let q = m
            .gc_9_4_3()
            .unwrap()
            .mec()
            .queues()
            .into_iter()
            .find(|q| !q.retired)
            .expect("a live queue");
        assert_eq!(q.members.len(), xccs, "{name}: {q:?}");
        assert_eq!(gpu.queue.as_ref().unwrap().mode, Mapping::Hws);
        let report = gpu.shutdown();
        assert!(report.complete(), "{name}: {report}");
        m.quiescent().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            m.gc_9_4_3()
                .unwrap()
                .mec()
                .hws()
                .is_none_or(|h| h.queues().is_empty()),
            "{name}"
        );
    }
}

/// The sOS set follows the PMFW version `MP1_PUB_SCRATCH0` reports
/// (`psp_v13_0_is_aux_sos_load_required()`: "load 4e version of sos if
/// pmfw version less than 85.115.0", `0x557300`). On a part whose PMFW is
/// 85.100.0 (a model value) the model's PSP takes only the auxiliary
/// descriptors of `psp_13_0_6_sos.bin`; a bring-up that sends the primary
/// set whatever the PMFW (barebell before) is refused at the psp step.
#[test]
fn an_older_pmfw_gets_the_auxiliary_sos_set() {
    let mut part = parts::mi300x();
    part.firmware.pmfw = Some(0x0055_6400);
    let m = device(part);
    let sink = PspLine::default();
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until_rlc(), &sink)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(gpu.reached, Step::Rlc);
    let psp_line = sink.0.lock().unwrap().clone();
    assert!(
        psp_line.contains("auxiliary sOS set: PMFW 85.100.0"),
        "{psp_line}"
    );
    assert_eq!(m.psp().refusals(), vec![]);
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
}

/// `smu_hw_init()` → `smu_system_features_control(smu, true)`: on a
/// discrete MI300 `smu_v13_0_6_system_features_control()` sends
/// `EnableAllSmuFeatures` (0x5 in `smu_v13_0_6_ppsmc.h`) after the PSP
/// loaded the firmware. The model's PMFW keeps its features off until
/// then and rejects DPM queries.
#[test]
fn the_smu_features_are_enabled_after_the_psp_step() {
    for part in [parts::mi300x(), parts::mi308x()] {
        let name = part.name;
        let m = device(part);
        let sink = PspLine::default();
        let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until_rlc(), &sink)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let smu = m.gc_9_4_3().unwrap().smu();
        assert!(smu.features_enabled(), "{name}");
        let lines = sink.0.lock().unwrap().clone();
        assert!(
            lines.contains("MP1 13.0.6: EnableAllSmuFeatures answered"),
            "{name}: {lines}"
        );
        let report = gpu.shutdown();
        assert!(report.complete(), "{name}: {report}");
    }
}

/// Keeps the psp step's lines.
#[derive(Default)]
struct PspLine(std::sync::Mutex<String>);

impl barebell_bringup::Sink for PspLine {
    fn step(&self, step: Step, detail: std::fmt::Arguments<'_>) {
        if step == Step::Psp
            && let Ok(mut l) = self.0.lock()
        {
            l.push_str(&detail.to_string());
            l.push('\n');
        }
    }
}

/// At teardown the SMU hears that the driver lets the device go, after
/// the MEC is halted and before the PSP's ring is destroyed, and the RLCs
/// stop after it, as Linux's
/// `smu_hw_fini()` → `smu_disable_dpms()` →
/// `smu_v13_0_6_system_features_control(smu, false)` →
/// `smu_v13_0_6_notify_unload()` sends `PPSMC_MSG_PrepareForDriverUnload`
/// (0x34 in `smu_v13_0_6_ppsmc.h`) in the reverse of the IP order (SMC
/// after GFX, before PSP).
#[test]
fn the_teardown_tells_the_smu_of_the_unload() {
    let unload = barebell_model::smu::SmuEvent::Answered {
        msg: 0x34,
        arg: 0,
        resp: 1,
        out: None,
        debug: false,
    };
    for part in [parts::mi300x(), parts::mi308x()] {
        let name = part.name;
        let m = device(part);
        let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until_rlc(), &Quiet)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let smu = m.gc_9_4_3().unwrap().smu();
        assert!(
            !smu.events().contains(&unload),
            "{name}: before the teardown"
        );
        let rlc = m.gc_9_4_3().unwrap().rlc_mec();
        let xccs = m.gc_9_4_3().unwrap().gfxhubs().len();
        assert!((0..xccs).all(|x| rlc.rlc_running(x)), "{name}");
        let report = gpu.shutdown();
        assert!(report.complete(), "{name}: {report}");
        let n = smu.events().iter().filter(|e| **e == unload).count();
        assert_eq!(n, 1, "{name}: {:?}", smu.events());
        let text = report.to_string();
        let (mec, smu_line, psp) = (
            text.find("halt MEC").unwrap(),
            text.find("tell the SMU of the unload: done").unwrap(),
            text.find("destroy PSP ring").unwrap(),
        );
        assert!(mec < smu_line && smu_line < psp, "{name}: {text}");
        // `smu_disable_dpms()` ends with `gfx_v9_4_3_rlc_stop()` on GC
        // 9.4.2 and later: every XCC's RLC stopped.
        assert!((0..xccs).all(|x| !rlc.rlc_running(x)), "{name}: {text}");
        assert!(
            text.contains(&format!("RLC stopped on {xccs} XCCs")),
            "{name}: {text}"
        );
    }
}

/// `gfx_v9_4_3_init_golden_registers()` by the ASIC revision
/// (`adev->rev_id`, from `nbio_v7_9_get_rev_id()`: the NBIO strap when
/// discovery's sub-revision is 0): the model's parts report revision 1,
/// so every XCC gets `TCP_UTCL1_CNTL2.SPARE` = 1 (bits 7:0,
/// `gc_9_4_3_sh_mask.h`) and `TCP_UTCL1_CNTL1` is left alone, as on the
/// production parts tinygrad's AM runs on.
#[test]
fn the_golden_tcp_setting_follows_the_asic_revision() {
    use barebell::bus::RegisterBus;
    use barebell_model::socregs::gc_9_4_3_stored as g;
    for part in [parts::mi300x(), parts::mi308x()] {
        let name = part.name;
        let gc = barebell_model::discovery::GC_HWID;
        let harvested = part.firmware.desc.harvested;
        let xccs: Vec<[u64; 16]> = part
            .firmware
            .desc
            .dies
            .iter()
            .flat_map(|d| d.iter())
            .filter(|ip| ip.hw_id == gc && !harvested.contains(&(gc, ip.instance)))
            .map(|ip| {
                let mut b = [0u64; 16];
                for (o, v) in b.iter_mut().zip(ip.bases.iter()) {
                    *o = *v & 0x3FFF_FFFF;
                }
                b
            })
            .collect();
        let m = device(part);
        let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until_rlc(), &Quiet)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // The bring-up's own bus: registers past BAR5 go through the NBIO
        // index/data pair, as the driver reaches them.
        let bus = &gpu.bus;
        let read = |bases: &[u64; 16], r: barebell_model::socregs::Reg| {
            bus.read32(((bases[usize::from(r.base_idx)] + u64::from(r.offset)) * 4) as usize)
        };
        let mut checked = 0;
        for b in &xccs {
            assert_eq!(read(b, g::TCP_UTCL1_CNTL2) & 0xFF, 1, "{name}");
            assert_eq!(read(b, g::TCP_UTCL1_CNTL1), 0, "{name}");
            checked += 1;
        }
        assert_eq!(checked, if name == "mi300x" { 8 } else { 4 }, "{name}");
        assert!(gpu.shutdown().complete(), "{name}");
    }
}

/// `gmc_v9_0_gart_enable()` calls both hubs' `set_fault_enable_default()`
/// with `true` (`amdgpu_vm_fault_stop` is not `AMDGPU_VM_FAULT_STOP_ALWAYS`
/// by default): on every AID's MMHUB (`mmhub_v1_8`) and every XCC's
/// GFXHUB (`gfxhub_v1_2`), the eleven `*_PROTECTION_FAULT_ENABLE_DEFAULT`
/// bits of `VM_L2_PROTECTION_FAULT_CNTL` are set and neither `CRASH_ON_*`
/// bit is.
#[test]
fn both_hubs_enable_the_fault_defaults_on_every_instance() {
    let sh = |h: &str, f: &str| {
        barebell_tests::linux_define(
            h,
            &format!("VM_L2_PROTECTION_FAULT_CNTL__{f}_PROTECTION_FAULT_ENABLE_DEFAULT__SHIFT"),
        )
    };
    let hubs = [
        (
            "MMHUB",
            "include/asic_reg/mmhub/mmhub_1_8_0_offset.h",
            "include/asic_reg/mmhub/mmhub_1_8_0_sh_mask.h",
        ),
        (
            "GFXHUB",
            "include/asic_reg/gc/gc_9_4_3_offset.h",
            "include/asic_reg/gc/gc_9_4_3_sh_mask.h",
        ),
    ];
    let m = device(parts::mi300x());
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until_rlc(), &Quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    let gc = m.gc_9_4_3().unwrap();
    for (kind, offsets, masks) in hubs {
        let cntl = barebell_tests::linux_define(offsets, "regVM_L2_PROTECTION_FAULT_CNTL") as u32;
        let defaults = [
            "RANGE",
            "PDE0",
            "PDE1",
            "PDE2",
            "TRANSLATE_FURTHER",
            "NACK",
            "DUMMY_PAGE",
            "VALID",
            "READ",
            "WRITE",
            "EXECUTE",
        ]
        .into_iter()
        .fold(0u32, |m, f| m | 1 << sh(masks, f));
        let crash = ["CRASH_ON_NO_RETRY_FAULT", "CRASH_ON_RETRY_FAULT"]
            .into_iter()
            .fold(0u32, |m, f| {
                m | 1
                    << barebell_tests::linux_define(
                        masks,
                        &format!("VM_L2_PROTECTION_FAULT_CNTL__{f}__SHIFT"),
                    )
            });
        let instances = if kind == "MMHUB" {
            gc.mmhubs()
        } else {
            gc.gfxhubs()
        };
        assert!(!instances.is_empty(), "{kind}");
        for (i, h) in instances.iter().enumerate() {
            let v = h.reg(cntl);
            assert_eq!(v & defaults, defaults, "{kind} {i}: {v:#x}");
            assert_eq!(v & crash, 0, "{kind} {i}: {v:#x}");
        }
    }
    assert!(gpu.shutdown().complete());
}

/// The queue the bring-up hands over names, in `UserQueue::mapping`, the
/// VMID it runs in where barebell chose it (direct and KIQ: the VMID
/// whose GFXHUB context it programmed), and none (0) where the HWS picks
/// it: KFD is not told which VMID the scheduler gives a process either.
#[test]
fn the_reported_vmid_is_the_queues_own_where_barebell_chose_it() {
    use barebell_bringup::Mapping;
    for mapping in [Mapping::Direct, Mapping::Kiq, Mapping::Hws] {
        let m = device(parts::mi300x());
        let opts = Options {
            until: Step::Queue,
            mapping: Some(mapping),
            ..Options::default()
        };
        let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet)
            .unwrap_or_else(|e| panic!("{mapping:?}: {e}"));
        let reported = gpu.queue.as_ref().expect("a mapped queue").mapping.vmid;
        let live = m
            .gc_9_4_3()
            .unwrap()
            .mec()
            .queues()
            .into_iter()
            .find(|q| !q.retired)
            .expect("a live queue");
        if mapping == Mapping::Hws {
            assert_eq!(reported, 0, "{mapping:?}");
            assert_ne!(
                live.vmid, 0,
                "{mapping:?}: the HWS gave the process no VMID"
            );
        } else {
            assert_eq!(reported, live.vmid, "{mapping:?}");
        }
        assert!(gpu.shutdown().complete(), "{mapping:?}");
    }
}
