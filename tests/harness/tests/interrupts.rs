//! Issue 20 item 5: interrupts through the IH ring. On navi31 and navi48,
//! after the one bring-up, a kernel with an illegal instruction and a
//! dispatch whose kernel descriptor sits at an unmapped VA each raise an
//! interrupt the IH model writes into ring 0 (`barebell_model::ih`), and
//! the runtime decodes it from the ring with the faulting VMID and the
//! queue it came from.

use barebell::aql::packet::Dispatch;
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
    b[16..24].copy_from_slice(&256i64.to_le_bytes());
    b[48..52].copy_from_slice(&(0xf_u32 << 16).to_le_bytes());
    b[56..58].copy_from_slice(&(1u16 << 10).to_le_bytes());
    b[256..256 + code.len()].copy_from_slice(code);
    b.as_ptr() as u64
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
    let hqds = gpu.mec().active_hqds();
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
        |gpu, _up| {
            let (slot, vmid) = user_hqd(gpu);
            let e = written(gpu, barebell_model::ih::src::SQ_INTERRUPT_MSG);
            assert_eq!(e.vmid, vmid, "{name}");
            assert_eq!(
                (e.ring_id >> 2 & 3, e.ring_id & 3, e.ring_id >> 4 & 7),
                slot,
                "{name}"
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
        |gpu, _up| {
            let (_, vmid) = user_hqd(gpu);
            let e = written(gpu, barebell_model::ih::src::UTCL2_FAULT);
            assert_eq!(e.client_id, barebell_model::ih::client::GFX, "{name}");
            assert_eq!(e.vmid, vmid, "{name}");
            assert_eq!(u64::from(e.src_data[0]) << 12, UNMAPPED & 0xFFF_FFFF_F000);
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
