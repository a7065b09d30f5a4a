//! Issue 20 item 5: interrupts through the IH ring. On navi31 and navi48,
//! after the one bring-up, a kernel with an illegal instruction and a
//! dispatch whose kernel descriptor sits at an unmapped VA each raise an
//! interrupt the IH model writes into ring 0 (`barebell_model::ih`), and
//! the runtime decodes it from the ring with the faulting VMID and the
//! queue it came from.

use barebell::aql::packet::Dispatch;
use barebell::ih::{FaultHub, Interrupt, SqKind};
use barebell::platform::Platform;
use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::ih::Raised;
use barebell_model::{VirtualGpu, parts};
use barebell_tests::{FirmwareDir, virtual_gpu_sized};

const MIB: usize = 1 << 20;
const BOUND_NS: u64 = 1_000_000_000;
/// Nothing is mapped here in the process tables.
const UNMAPPED: u64 = 0x4000_0000_0000;

/// Places a wave32 kernel descriptor with `code` at +256 in user memory
/// (LLVM 19 `AMDHSAKernelDescriptor.h`: kernel_code_entry_byte_offset at
/// 16, compute_pgm_rsrc1 at 48 with both FLOAT_DENORM_MODE fields 3,
/// kernel_code_properties at 56 with ENABLE_WAVEFRONT_SIZE32, bit 10);
/// returns its GPU VA (= host address).
fn kernel(up: &mut barebell_bringup::Gpu<'_>, code: &[u8]) -> u64 {
    let b = up.user_memory().unwrap().alloc(4096, 4096).unwrap();
    assert!(b.write(16, &256i64.to_le_bytes()));
    assert!(b.write(48, &(0xf_u32 << 16).to_le_bytes()));
    assert!(b.write(56, &(1u16 << 10).to_le_bytes()));
    assert!(b.write(256, code));
    b.address()
}

/// Brings `part` up with a queue mapped by `mapping`, dispatches one
/// packet at kernel object `kd(up)`, lets the CP run, and hands the
/// model and the brought-up device to `f`.
fn dispatch_and(
    part: barebell_model::Part,
    mapping: Mapping,
    kd: impl FnOnce(&mut barebell_bringup::Gpu<'_>) -> u64,
    f: impl FnOnce(&VirtualGpu, &mut barebell_bringup::Gpu<'_>),
) {
    let name = part.name;
    let gpu = virtual_gpu_sized(part, 1, 64 * MIB, 8 * MIB);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        user_memory: 2 * MIB,
        user_vram: 0,
        ..Options::default()
    };
    let fw = FirmwareDir::system();
    let mut up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{}", gpu.firmware_logs()));
    let object = kd(&mut up);
    let q = up.queue.as_ref().unwrap();
    let p = Dispatch::linear(32, 32, object, 0)
        .signal(q.signal.handle())
        .packet()
        .unwrap();
    q.queue.submit(&p, gpu.clock(), BOUND_NS).unwrap();
    for _ in 0..4 {
        gpu.pause();
    }
    f(&gpu, &mut up);
}

/// The slot (ME, pipe, queue) and VMID the model's MEC runs the user
/// queue on: the model's own record, not the runtime's.
fn user_hqd(gpu: &VirtualGpu) -> ((u8, u8, u8), u8) {
    let hqds = gpu.gfx11().unwrap().mec().active_hqds();
    let h = hqds
        .iter()
        .find(|h| h.slot.0 == 1 && h.vmid != 0)
        .unwrap_or_else(|| panic!("no user HQD: {hqds:?}"));
    (h.slot, h.vmid)
}

fn written(gpu: &VirtualGpu, src_id: u8) -> barebell_model::ih::IvEntry {
    let raised = gpu.ih().raised();
    let (e, r) = raised
        .iter()
        .find(|(e, _)| e.src_id == src_id)
        .unwrap_or_else(|| panic!("no interrupt with source {src_id} raised: {raised:?}"));
    assert!(
        matches!(r, Raised::Written { .. }),
        "the IH did not write it into ring 0 ({r:?}): is the IH ring set up? {raised:?}"
    );
    *e
}

/// 0xffffffff is no gfx1100/gfx1201 instruction (llvm-mc-19: invalid
/// encoding).
const ILLEGAL: [u8; 4] = [0xff; 4];

fn illegal_instruction(part: barebell_model::Part, mapping: Mapping) {
    let name = part.name;
    dispatch_and(
        part,
        mapping,
        |up| kernel(up, &ILLEGAL),
        |gpu, up| {
            let (slot, vmid) = user_hqd(gpu);
            let e = written(gpu, barebell_model::ih::src::SQ_INTERRUPT_MSG);
            assert_eq!(e.vmid, vmid, "{name}");
            // The runtime's decode, from the ring in GTT.
            let got = up.poll_interrupts().unwrap();
            let sq: Vec<_> = got
                .iter()
                .filter_map(|i| match i {
                    Interrupt::Sq(s) => Some(*s),
                    _ => None,
                })
                .collect();
            assert_eq!(sq.len(), 1, "{name}: {got:?}");
            let s = sq[0];
            assert_eq!(s.kind, SqKind::IllegalInstruction, "{name}");
            assert_eq!(s.vmid, vmid, "{name}");
            assert_eq!((s.me, s.pipe, s.queue), slot, "{name}");
            let text = Interrupt::Sq(s).to_string();
            assert!(text.contains("SQ illegal instruction (vmid 8"), "{text}");
            // Read once: a second poll finds the ring empty.
            assert_eq!(up.poll_interrupts().unwrap(), vec![], "{name}");
            // The model's one diagnostics face names the stopped queue's
            // error, as it does on GC 9.4.3.
            let d = gpu.diagnostics();
            assert!(
                d.iter().any(|l| l.starts_with("the CP model: ")),
                "{name}: {d:?}"
            );
        },
    );
}

fn vm_fault(part: barebell_model::Part, mapping: Mapping) {
    let name = part.name;
    dispatch_and(
        part,
        mapping,
        |_| UNMAPPED,
        |gpu, up| {
            let (_, vmid) = user_hqd(gpu);
            let e = written(gpu, barebell_model::ih::src::UTCL2_FAULT);
            assert_eq!(e.client_id, barebell_model::ih::client::GFX, "{name}");
            assert_eq!(e.vmid, vmid, "{name}");
            let got = up.poll_interrupts().unwrap();
            assert!(!got.is_empty(), "{name}");
            for i in &got {
                let Interrupt::VmFault(f) = i else {
                    panic!("{name}: not a VM fault: {i}");
                };
                assert_eq!(f.hub, FaultHub::Gfx, "{name}");
                assert_eq!(f.addr, UNMAPPED, "{name}: {i}");
                assert_eq!(f.vmid, vmid, "{name}");
                assert!(!f.write && !f.retry, "{name}: the CP reads the descriptor");
            }
            // The hub's latched status agrees (a second, independent path).
            let latched = up.latched_faults().unwrap();
            assert!(
                latched.iter().any(|l| l.addr == UNMAPPED && l.vmid == vmid),
                "{latched:?}"
            );
        },
    );
}

#[test]
fn an_illegal_instruction_reaches_the_ih_ring_navi31() {
    illegal_instruction(parts::navi31(), Mapping::Direct);
}

#[test]
fn an_illegal_instruction_reaches_the_ih_ring_navi48() {
    illegal_instruction(parts::navi48(), Mapping::Direct);
}

#[test]
fn a_vm_fault_reaches_the_ih_ring_navi31() {
    vm_fault(parts::navi31(), Mapping::Direct);
}

#[test]
fn a_vm_fault_reaches_the_ih_ring_navi48() {
    vm_fault(parts::navi48(), Mapping::Direct);
}

/// Records what the teardown reports.
#[derive(Default)]
struct Seen(std::cell::RefCell<Vec<Interrupt>>);

impl barebell_bringup::Sink for Seen {
    fn step(&self, _: Step, _: std::fmt::Arguments<'_>) {}
    fn interrupt(&self, i: &Interrupt) {
        self.0.borrow_mut().push(*i);
    }
}

/// The teardown reports what the ring holds, then disables the ring
/// before memory goes back: the model ends quiescent, and an IH ring left
/// on is named by the quiescence check.
#[test]
fn the_teardown_reports_interrupts_and_disables_the_ring() {
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let gpu = virtual_gpu_sized(part, 1, 64 * MIB, 8 * MIB);
        let opts = Options {
            until: Step::Queue,
            mapping: Some(Mapping::Direct),
            user_memory: 2 * MIB,
            user_vram: 0,
            ..Options::default()
        };
        let fw = FirmwareDir::system();
        let seen = Seen::default();
        let mut up = barebell_bringup::run(&gpu, &fw, &opts, &seen).unwrap();
        assert_eq!(gpu.ih().rings().len(), 1, "{name}: ring 0 enabled");
        let kd = kernel(&mut up, &ILLEGAL);
        let q = up.queue.as_ref().unwrap();
        let p = Dispatch::linear(32, 32, kd, 0)
            .signal(q.signal.handle())
            .packet()
            .unwrap();
        q.queue.submit(&p, gpu.clock(), BOUND_NS).unwrap();
        gpu.pause();
        let report = up.shutdown();
        assert!(report.complete(), "{name}: {report}");
        assert!(
            report
                .outcome(barebell_bringup::Stage::IhRing)
                .is_some_and(|o| o.to_string().contains("RB_ENABLE clear")),
            "{report}"
        );
        let seen = seen.0.borrow();
        assert!(
            seen.iter()
                .any(|i| matches!(i, Interrupt::Sq(s) if s.kind == SqKind::IllegalInstruction)),
            "{name}: {seen:?}"
        );
        assert!(gpu.ih().rings().is_empty(), "{name}");
        gpu.quiescent().unwrap();
    }
}

/// An enabled IH ring keeps the model from being quiescent.
#[test]
fn an_enabled_ih_ring_is_not_quiescent() {
    let gpu = virtual_gpu_sized(parts::navi31(), 1, 64 * MIB, 8 * MIB);
    let opts = Options {
        until: Step::Ih,
        mapping: None,
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    let up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet).unwrap();
    let why = gpu.quiescent().unwrap_err().0;
    assert!(
        why.iter().any(|w| w.starts_with("IH ring 0 enabled")),
        "{why:?}"
    );
    let _ = up.shutdown();
    gpu.quiescent().unwrap();
}

/// More entries than the ring holds, none read: `RB_OVERFLOW` rises, the
/// runtime restarts at the oldest entry not overwritten
/// (`ih_v6_0_get_wptr()`), and reads a whole ring less one entry.
#[test]
fn an_overflowing_ring_is_recovered_as_ih_v6_0_get_wptr_does() {
    let gpu = virtual_gpu_sized(parts::navi31(), 1, 64 * MIB, 8 * MIB);
    let opts = Options {
        until: Step::Ih,
        mapping: None,
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    let mut up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet).unwrap();
    let (_, bytes) = up.ih.as_ref().unwrap().ring();
    let slots = bytes / 32;
    let entry = |n: u32| barebell_model::ih::IvEntry {
        client_id: 0x0a,
        src_id: 239,
        vmid: 3,
        src_data: [n, 2 << 6, 0, 0],
        ..Default::default()
    };
    let mut overflowed = 0;
    for n in 0..slots as u32 + 5 {
        if matches!(gpu.ih().raise(entry(n)), Raised::Overflowed { .. }) {
            overflowed += 1;
        }
    }
    assert!(overflowed > 0);
    let got = up.poll_interrupts().unwrap();
    assert_eq!(got.len(), slots - 1);
    assert_eq!(up.ih.as_ref().unwrap().overflows(), 1);
    // The newest entry is the last one read.
    match got.last() {
        Some(Interrupt::Sq(s)) => assert_eq!(s.detail, (slots as u32 + 4) & 0x1F_FFFF),
        other => panic!("{other:?}"),
    }
    // Overflow cleared: the next entry is read normally.
    gpu.ih().raise(entry(7));
    assert_eq!(up.poll_interrupts().unwrap().len(), 1);
    let _ = up.shutdown();
}

/// `global_load_b32 v1, v[2:3], off` then `s_endpgm` (llvm-mc-19
/// `-show-encoding`): v[2:3] are 0 at wave start, and nothing is mapped
/// at VA 0 in the process tables.
fn load_from_zero(part: &barebell_model::Part) -> Vec<u8> {
    let load: &[u8] = if part.name == "navi31" {
        &[0x00, 0x00, 0x52, 0xdc, 0x02, 0x00, 0x7c, 0x01]
    } else {
        &[
            0x7c, 0x00, 0x05, 0xee, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
        ]
    };
    [load, &[0x00, 0x00, 0xb0, 0xbf]].concat()
}

/// A wave's load from an unmapped VA: the GFXHUB's UTCL2 fault (the
/// address, read) and the SQ's memory violation (the queue), both from
/// the ring.
#[test]
fn a_wave_load_from_an_unmapped_va_is_a_fault_and_a_memory_violation() {
    for part in [parts::navi31(), parts::navi48()] {
        let name = part.name;
        let code = load_from_zero(&part);
        dispatch_and(
            part,
            Mapping::Direct,
            |up| kernel(up, &code),
            |gpu, up| {
                let (slot, vmid) = user_hqd(gpu);
                let got = up.poll_interrupts().unwrap();
                assert!(
                    got.iter().any(|i| matches!(i,
                        Interrupt::VmFault(f) if f.addr == 0 && !f.write && f.vmid == vmid)),
                    "{name}: {got:?}"
                );
                assert!(
                    got.iter().any(|i| matches!(i,
                        Interrupt::Sq(s) if s.kind == SqKind::MemoryViolation
                            && s.vmid == vmid
                            && (s.me, s.pipe, s.queue) == slot)),
                    "{name}: {got:?}"
                );
            },
        );
    }
}

/// `wait_interrupts` pauses on the platform (where the model's CP runs)
/// until an entry arrives, and ends with a typed timeout when none does.
#[test]
fn waiting_for_an_interrupt_is_bounded() {
    let gpu = virtual_gpu_sized(parts::navi31(), 1, 64 * MIB, 8 * MIB);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Direct),
        user_memory: 2 * MIB,
        user_vram: 0,
        ..Options::default()
    };
    let fw = FirmwareDir::system();
    let mut up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet).unwrap();
    let e = up.wait_interrupts(1_000_000).unwrap_err();
    assert!(
        matches!(
            e.kind,
            barebell_bringup::ErrorKind::Ih(barebell::ih::IhError::Timeout { .. })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("no interrupt within"), "{e}");
    let kd = kernel(&mut up, &ILLEGAL);
    let q = up.queue.as_ref().unwrap();
    let p = Dispatch::linear(32, 32, kd, 0)
        .signal(q.signal.handle())
        .packet()
        .unwrap();
    q.queue.submit(&p, gpu.clock(), BOUND_NS).unwrap();
    let got = up.wait_interrupts(BOUND_NS).unwrap();
    assert!(
        matches!(got.as_slice(), [Interrupt::Sq(s)] if s.kind == SqKind::IllegalInstruction),
        "{got:?}"
    );
    assert!(up.shutdown().complete());
}

/// The MSI: an IH entry written while ring 0's `IH_RB_CNTL.ENABLE_INTR`
/// is set is an interrupt the platform delivers (the vfio-user peer
/// signals MSI-X vector 0); the runtime polls with `ENABLE_INTR` clear
/// (`barebell::ih`), so its entries raise none. Linux sets the bit with
/// `RB_ENABLE` (`ih_v6_0_toggle_interrupts()`).
#[test]
fn an_entry_is_an_interrupt_only_with_enable_intr() {
    use barebell::discovery::{Discovery, hw_id};
    let gpu = virtual_gpu_sized(parts::navi31(), 1, 64 * MIB, 8 * MIB);
    let opts = Options {
        until: Step::Ih,
        mapping: None,
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    let up = barebell_bringup::run(&gpu, &fw, &opts, &Quiet).unwrap();
    let entry = barebell_model::ih::IvEntry {
        client_id: 0x14,
        src_id: 181,
        ..Default::default()
    };
    assert!(matches!(gpu.ih().raise(entry), Raised::Written { .. }));
    assert_eq!(gpu.ih().take_interrupts(), 0, "the runtime polls");
    let (bytes, _) = barebell_model::discovery::build(&gpu.part().firmware.desc);
    let d = Discovery::parse(&bytes).unwrap();
    let oss = d.ip(hw_id::OSSSYS, 0).unwrap().bases;
    // IH_RB_CNTL (osssys_6_0_0_offset.h) with ENABLE_INTR (bit 17).
    let cntl = barebell::regs::osssys_6_0_0::IH_RB_CNTL
        .byte_offset(&oss)
        .unwrap();
    let v = gpu.regs().read32(cntl);
    gpu.regs().write32(cntl, v | 1 << 17);
    gpu.ih().raise(entry);
    gpu.ih().raise(entry);
    assert_eq!(gpu.ih().take_interrupts(), 2);
    assert_eq!(gpu.ih().take_interrupts(), 0, "taken once");
    let _ = up.shutdown();
}
