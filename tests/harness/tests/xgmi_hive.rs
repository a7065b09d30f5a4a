//! An MI300 part as one node of an XGMI hive (`Part::in_hive`): what its
//! hubs report, where its VRAM lies in the hive's physical space, and the
//! bring-up that must follow `gmc_v9_0_vram_gtt_location()` to use it.
//!
//! Expected values are worked by hand from Linux 6.12:
//! - `gfxhub_v1_2_get_xgmi_info()` reads `MC_VM_XGMI_LFB_CNTL` (0x957 in
//!   `gc_9_4_3_offset.h`; `PF_LFB_REGION` bits 3:0, `PF_MAX_REGION` bits
//!   7:4) and `MC_VM_XGMI_LFB_SIZE` (0x958, `PF_LFB_SIZE` bits 16:0, 16 MiB
//!   units) on XCC 0;
//! - `gmc_v9_0_vram_gtt_location()` adds `physical_node_id *
//!   node_segment_size` to the FB base (`vram_start`) and to
//!   `vram_base_offset`;
//! - the model's hive: 8 nodes, 256 GiB segments (model values,
//!   `parts::HIVE_NODES`, `parts::HIVE_SEGMENT`), FB at MC 0x80_0000_0000
//!   (`FB_START`, model value). Node 3's VRAM: MC 0x80_0000_0000 + 3 *
//!   0x40_0000_0000 = 0x140_0000_0000, physical 0xC0_0000_0000.

use barebell::platform::Platform;
use barebell_bringup::error::StartError;
use barebell_bringup::{ErrorKind, Mapping, Options, Quiet, Step};
use barebell_model::hub_v9::HubV9Refusal;
use barebell_model::parts;
use barebell_model::smu::SmuEvent;
use barebell_tests::{FirmwareDir, virtual_gpu};

/// 256 GiB, by hand.
const SEGMENT: u64 = 0x40_0000_0000;
/// Node 3's VRAM: physical (FB_OFFSET 0 + 3 segments) and MC.
const NODE3_PA: u64 = 0xC0_0000_0000;
const NODE3_MC: u64 = 0x140_0000_0000;

fn node3(part: parts::Part) -> parts::Part {
    part.in_hive(3).unwrap()
}

/// Reads XCC `x`'s GC register at dword `reg` through BAR5, as a driver
/// does.
fn gc_reg(m: &barebell_model::VirtualGpu, x: usize, reg: u32) -> u32 {
    let h = &m.gc_9_4_3().unwrap().gfxhubs()[x];
    Platform::regs(m).read32(((h.base + reg) * 4) as usize)
}

/// Model: the hubs report the hive position as the IFWI leaves it, in
/// the registers Linux and tinygrad read; a GPU on its own reads 0 there
/// ("PF_MAX_REGION=0 means xgmi is disabled"); a driver's write does not
/// move the GPU in the hive; FB_LOCATION_TOP spans all 8 segments.
#[test]
fn a_hive_member_reports_its_node_in_mc_vm_xgmi_lfb_cntl() {
    let m = virtual_gpu(node3(parts::mi300x()), 1);
    // XCC 0 through BAR5, as `RREG32_SOC15(GC, GET_INST(GC, 0), ...)`:
    // PF_MAX_REGION = 7, PF_LFB_REGION = 3; 256 GiB >> 24.
    assert_eq!(gc_reg(&m, 0, 0x957), 0x73, "LFB_CNTL");
    assert_eq!(gc_reg(&m, 0, 0x958), 0x4000, "LFB_SIZE");
    // Every XCC's GFXHUB holds the same (past BAR5 for XCC 1 and up).
    for (x, h) in m.gc_9_4_3().unwrap().gfxhubs().iter().enumerate() {
        assert_eq!(h.reg(0x957), 0x73, "XCC {x} LFB_CNTL");
        assert_eq!(h.reg(0x958), 0x4000, "XCC {x} LFB_SIZE");
    }
    // MMHUB 1.8 of every AID: 0xc97 / 0xc98 of `mmhub_1_8_0_offset.h`.
    for (a, h) in m.gc_9_4_3().unwrap().mmhubs().iter().enumerate() {
        assert_eq!(h.reg(0xc97), 0x73, "AID {a}");
        assert_eq!(h.reg(0xc98), 0x4000, "AID {a}");
        // FB_LOCATION_TOP (0xc9d): 0x80_0000_0000 + 8 * 256 GiB - 1, >> 24.
        assert_eq!(h.reg(0xc9d), 0x2_7FFF, "AID {a} FB top");
    }
    let h = &m.gc_9_4_3().unwrap().gfxhubs()[0];
    Platform::regs(&m).write32(((h.base + 0x957) * 4) as usize, 0);
    assert_eq!(gc_reg(&m, 0, 0x957), 0x73, "the write moved the node");

    let alone = virtual_gpu(parts::mi300x(), 1);
    assert_eq!(gc_reg(&alone, 0, 0x957), 0);
    assert_eq!(gc_reg(&alone, 0, 0x958), 0);
    // 192 GiB from 0x80_0000_0000: top 0xAF_FF00_0000 >> 24.
    assert_eq!(alone.gc_9_4_3().unwrap().mmhubs()[0].reg(0xc9d), 0xAFFF);
}

/// Model: a hive member's hub walks tables in its own segment only. A
/// VMID0 root at physical 0x1000 (node 0's memory, where a bring-up
/// without the node offset puts it) is refused naming node 0; the same
/// table at node 3's physical address is walked.
#[test]
fn a_hive_members_hub_refuses_a_root_table_in_another_nodes_memory() {
    let m = virtual_gpu(node3(parts::mi300x()), 1);
    let h = &m.gc_9_4_3().unwrap().gfxhubs()[0];
    let o = h.offsets;
    h.set_device_reg(o.l1_tlb_cntl, 1);
    h.set_device_reg(o.l2_cntl, 1);
    // Context 0 on, depth 2, block size 9.
    h.set_device_reg(o.ctx0_cntl, 1 | (2 << 1) | (9 << 3));
    h.set_device_reg(o.ctx0_end_lo, 0xF_FFFF);
    let vram = barebell_model::dma::Dma::default();
    let base = barebell_model::mc::McHub::vram_pa_base(&**h);
    assert_eq!(base, NODE3_PA);
    for (root, want) in [
        (
            0x1000u64,
            Err(HubV9Refusal::PeerMemory {
                pa: 0x1000,
                node: Some(0),
            }),
        ),
        (
            NODE3_PA + SEGMENT + 0x1000,
            Err(HubV9Refusal::PeerMemory {
                pa: NODE3_PA + SEGMENT + 0x1000,
                node: Some(4),
            }),
        ),
    ] {
        h.set_device_reg(o.ctx0_base_lo, (root | 1) as u32);
        h.set_device_reg(o.ctx0_base_lo + 1, (root >> 32) as u32);
        let got = h
            .translate(
                &vram,
                base,
                0,
                0x1000,
                barebell_model::decode::pte_v9::AccessV9::Read,
            )
            .map(|_| ());
        assert_eq!(got, want, "root {root:#x}");
    }
    // In its own segment the walk reaches the (empty) backing: a table
    // fault, not a peer refusal.
    let root = NODE3_PA + 0x1000;
    h.set_device_reg(o.ctx0_base_lo, (root | 1) as u32);
    h.set_device_reg(o.ctx0_base_lo + 1, (root >> 32) as u32);
    let got = h.translate(
        &vram,
        base,
        0,
        0x1000,
        barebell_model::decode::pte_v9::AccessV9::Read,
    );
    assert!(
        matches!(got, Err(HubV9Refusal::Fault(_))),
        "{got:?}: a root in the node's own segment is walked"
    );
}

/// The bring-up on node 3 of a hive: every VRAM physical address it
/// gives the device (VMID0's root, the process root) lies in
/// node 3's segment, its VRAM in the MC map at the FB base plus 3
/// segments. Without `gmc_v9_0_vram_gtt_location()`'s node offset the
/// PSP, walking VMID0 from a root in node 0's memory, reaches nothing
/// (the model refuses an address in another node's memory) and the
/// bring-up stops at the psp step.
#[test]
fn node_3_of_a_hive_brings_up_in_its_own_segment() {
    for part in [parts::mi300x(), parts::mi308x()] {
        let name = part.name;
        let m = virtual_gpu(node3(part), 7);
        let opts = Options {
            until: Step::Queue,
            mapping: Some(Mapping::Hws),
            ..Default::default()
        };
        let up = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet)
            .unwrap_or_else(|e| panic!("{name} node 3: {e}\ndevice: {:#?}", m.diagnostics()));
        assert_eq!(up.reached, Step::Queue, "{name}");
        let l = up.memory.unwrap();
        assert_eq!(l.vram_base_offset, NODE3_PA, "{name} vram_base_offset");
        assert_eq!(l.mc.vram_start, NODE3_MC, "{name} vram_start");
        // The FB stays the whole hive's; the GART goes below it.
        assert_eq!(
            (l.mc.fb_start, l.mc.fb_end),
            (0x80_0000_0000, 0x2_7FFF << 24),
            "{name} FB"
        );
        for (what, pa) in [
            ("VMID0 root", l.vmid0_root),
            ("process root", l.process_root),
        ] {
            assert!(
                (NODE3_PA..NODE3_PA + SEGMENT).contains(&pa),
                "{name} {what} {pa:#x} outside node 3's segment"
            );
        }
        // `gmc_v9_0_hw_init()` gives the HDP this GPU's VRAM start:
        // `HDP_NONSURFACE_BASE` = `vram_start >> 8`, `_HI` = `>> 40`.
        let hdp = up
            .ips
            .all
            .iter()
            .find(|i| i.hw_id == barebell::ip::hw_id::HDP && i.instance == 0)
            .unwrap();
        let h = up.bus.block(hdp.bases);
        use barebell::regs::hdp_4_4_2 as hdp_regs;
        assert_eq!(
            h.read(hdp_regs::HDP_NONSURFACE_BASE).unwrap(),
            (NODE3_MC >> 8) as u32,
            "{name}"
        );
        assert_eq!(
            h.read(hdp_regs::HDP_NONSURFACE_BASE_HI).unwrap(),
            1,
            "{name}"
        );
        assert_eq!(m.psp().refusals(), vec![], "{name}");
        let report = up.shutdown();
        assert!(report.complete(), "{name}: {report}");
        m.quiescent().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

fn mode1_resets(m: &barebell_model::VirtualGpu) -> usize {
    m.gc_9_4_3()
        .unwrap()
        .smu()
        .events()
        .iter()
        .filter(|e| matches!(e, SmuEvent::Mode1Reset))
        .count()
}

/// Model: a mode-1 reset that reaches a hive member's SMU is a reset of
/// one GPU of the hive alone, which neither driver sends (Linux resets
/// the hive together, tinygrad refuses): the model logs it, naming the
/// node, and still resets (the hardware would). A GPU on its own logs
/// nothing. The message goes through the runtime's
/// `smu_v13_0_6_mode1_reset()` (`barebell::smu::mode1_reset`), with bus
/// mastering off as both drivers leave it.
#[test]
fn a_hive_members_smu_logs_a_mode1_reset_of_it_alone() {
    for (part, logged) in [(node3(parts::mi300x()), true), (parts::mi300x(), false)] {
        let m = virtual_gpu(part, 7);
        let opts = Options {
            until: Step::Discovery,
            ..Default::default()
        };
        let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet).unwrap();
        let mp1 = barebell::smu::Mp1::for_version(gpu.ips.mp1.version.triple()).unwrap();
        barebell::smu::mode1_reset(&gpu.bus, Platform::clock(&m), mp1, &gpu.ips.mp1.bases).unwrap();
        assert_eq!(mode1_resets(&m), 1);
        let refused: Vec<String> = m
            .gc_9_4_3()
            .unwrap()
            .soc_refusals()
            .iter()
            .map(|r| r.to_string())
            .collect();
        let hit = refused
            .iter()
            .any(|r| r.contains("mode-1 reset of XGMI node 3 of 8 alone"));
        assert_eq!(hit, logged, "{refused:?}");
        drop(gpu);
    }
}

/// Leaves `m` running as a killed driver would: a bring-up let go
/// without its teardown (sOS and PMFW alive, `SCRATCH_REG6` = 1).
fn leave_running(m: &barebell_model::VirtualGpu) {
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Hws),
        ..Default::default()
    };
    barebell_bringup::run(m, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap()
        .abandon();
    // The next driver instance may claim the device.
    m.release_claim();
}

/// A hive member left running is not mode-1 reset alone: the start step
/// refuses, naming the hive, and sends nothing to the SMU (Linux marks
/// a "Pending hive reset." and resets the hive together; tinygrad raises
/// "Malformed state. Use extra/amdpci/hive_reset.py to reset the hive").
/// The same part on its own is reset, its PCI state restored before any
/// register read (`amdgpu_device_mode1_reset()`), and brought up.
#[test]
fn a_hive_member_left_running_is_not_mode1_reset_alone() {
    let m = virtual_gpu(node3(parts::mi300x()), 7);
    leave_running(&m);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Hws),
        ..Default::default()
    };
    let e = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet).unwrap_err();
    assert_eq!(e.step, Step::Start, "{e}");
    assert_eq!(
        e.kind,
        ErrorKind::Start(StartError::HiveMember { node: 3, nodes: 8 }),
        "{e}"
    );
    let text = e.to_string();
    assert!(text.contains("node 3 of an XGMI hive of 8"), "{text}");
    assert!(text.contains("reset the whole hive"), "{text}");
    assert_eq!(mode1_resets(&m), 0, "a reset reached the SMU");
    assert_eq!(m.gc_9_4_3().unwrap().soc_refusals(), vec![]);
    // Nothing of the reset's preparation happened either.
    assert!(m.pci().decodes());

    let alone = virtual_gpu(parts::mi300x(), 7);
    leave_running(&alone);
    let up = barebell_bringup::run(&alone, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("mi300x alone: {e}"));
    assert_eq!(mode1_resets(&alone), 1);
    assert_eq!(alone.pci().undecoded(), 0, "BAR5 accesses lost");
    assert_eq!(up.reached, Step::Queue);
    let report = up.shutdown();
    assert!(report.complete(), "{report}");
}

/// The node's VRAM used through its own page tables: on node 3 an SDMA
/// queue the HWS maps copies host memory into user VRAM and back. The
/// VRAM PTEs hold `offset + vram_base_offset` (node 3's segment,
/// `amdgpu_gmc_vram_pa()`), which the engine's MMHUB must resolve to this
/// GPU's own VRAM: the bytes land where the host sees user VRAM (BAR0).
#[test]
fn node_3_copies_through_vram_ptes_in_its_own_segment() {
    use barebell::sdma::CopyDirection;
    let n = 4096 + 3;
    let user = 4 << 20;
    let mem = barebell_model::vgpu::HostMemory::allocate_sized((64 << 20) + user, (4 << 20) + user)
        .unwrap();
    let m = barebell_model::VirtualGpu::new(
        node3(parts::mi300x()),
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(7),
    )
    .unwrap();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Hws),
        user_memory: user,
        user_vram: user,
        ..Options::default()
    };
    let mut gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", m.diagnostics()));
    let mut q = barebell_bringup::sdma::open(&mut gpu, Mapping::Hws, &Quiet)
        .unwrap_or_else(|e| panic!("{e}\n{:#?}", m.diagnostics()));
    let host = gpu.user.as_mut().unwrap();
    let (h_a, h_b) = (
        host.alloc(8192, 4096).unwrap(),
        host.alloc(8192, 4096).unwrap(),
    );
    let d = gpu.user_vram.as_mut().unwrap().alloc(8192, 4096).unwrap();
    let src: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
    assert!(h_a.write(0, &src));
    assert!(d.host.fill(0, n, 0xEE));
    assert!(h_b.fill(0, n, 0xEE));
    q.copy(d.va, h_a.address(), n as u64, CopyDirection::HostToDevice)
        .unwrap_or_else(|e| panic!("h2d: {e}\n{:#?}", m.diagnostics()));
    q.copy(h_b.address(), d.va, n as u64, CopyDirection::DeviceToHost)
        .unwrap_or_else(|e| panic!("d2h: {e}\n{:#?}", m.diagnostics()));
    let mut in_vram = vec![0u8; n];
    let mut back = vec![0u8; n];
    assert!(d.host.read(0, &mut in_vram) && h_b.read(0, &mut back));
    assert!(in_vram == src, "the copy did not land in this GPU's VRAM");
    assert!(back == src, "the copy back differs");
    q.stop(&mut gpu).unwrap();
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
    m.quiescent().unwrap();
}

/// The refusal comes before the device is touched, and the teardown
/// after it keeps it that way: the start step wrote nothing, so the
/// teardown does not sign either (`SCRATCH_REG6` is the killed run's, for
/// whoever resets the hive), and the report says why.
#[test]
fn a_refused_hive_member_is_not_signed_by_the_teardown() {
    use barebell_bringup::{Outcome, Stage};
    let m = virtual_gpu(node3(parts::mi300x()), 8);
    leave_running(&m);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Hws),
        ..Default::default()
    };
    let e = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet).unwrap_err();
    assert_eq!(e.step, Step::Start, "{e}");
    let t = e.teardown.as_deref().expect("a teardown report");
    assert!(
        matches!(t.outcome(Stage::Signature), Some(Outcome::NotNeeded(_))),
        "{t}"
    );
}
