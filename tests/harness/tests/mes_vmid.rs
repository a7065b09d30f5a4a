//! `--mapping mes` on the model GPU: the user queue runs in a VMID the
//! MES model took from SET_HW_RSRC's `vmid_mask_gfxhub`, whose GFXHUB
//! context it programmed from ADD_QUEUE, and the CP reads the queue
//! through that context's ordinary walk.

use barebell::gmc::hub::{GART_ENGINE, MAX_PFN, invalidate};
use barebell::platform::Platform;
use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_decode::mqd::Hqd;
use barebell_model::cp::CpError;
use barebell_model::gmc::{AddressSpace, VmRefusal};
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

/// `amdgpu_mes_init()`: `vmid_mask_gfxhub = 0xffffff00`, VMIDs 8..=15 of
/// the 16 a hub has (`MAX_VMID_GCHUB`, `mes_v11_api_def.h`).
const LINUX_GFXHUB_VMIDS: u32 = 0xffff_ff00;

fn mes_queue_in_its_vmid(part: barebell_model::Part) {
    let name = part.name;
    let gpu = virtual_gpu(part, 3);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Mes),
        ..Default::default()
    };
    let fw = FirmwareDir::system();
    let up = match barebell_bringup::run(&gpu, &fw, &opts, &Quiet) {
        Ok(up) => up,
        Err(e) => panic!("{name}: {e}\n{}", gpu.firmware_logs()),
    };
    let q = up.queue.as_ref().expect("the user queue");
    assert_eq!(q.signal.value(), 0, "{name}: the first barrier completed");
    // The HQD MES loaded for the queue's doorbell, and its VMID.
    let hqd = (0..4u8)
        .flat_map(|p| (0..8u8).map(move |k| (1u8, p, k)))
        .filter_map(|slot| gpu.gfx11().unwrap().mec().bank(slot))
        .map(Hqd)
        .find(|h| h.active() && h.doorbell_dword() == q.doorbell * 2)
        .expect("an active HQD on the queue's doorbell");
    let vmid = hqd.vmid();
    assert!(
        vmid != 0 && vmid < 16 && LINUX_GFXHUB_VMIDS >> vmid & 1 == 1,
        "{name}: CP_HQD_VMID {vmid}"
    );
    // Its GFXHUB context as MES programmed it: enabled, a valid PDE, the
    // process's whole VA range (page 0 to `max_pfn - 1`).
    let c = gpu.gfx11().unwrap().gfxhub().context_regs(vmid);
    assert!(c.enabled, "{name}: VMID {vmid} context disabled");
    assert_eq!(c.base & 1, 1, "{name}: base {:#x} lacks VALID", c.base);
    assert_eq!((c.start, c.end), (0, (MAX_PFN << 12) - 1), "{name}");
    // The ring is read through that context: point it at a base without
    // VALID, flush the VMID as a driver would, and the next packet stops
    // on a VM refusal naming the VMID.
    let hub = gpu.gfx11().unwrap().gfxhub();
    let cntl = hub.context_regs(vmid);
    assert!(hub.program_context(vmid, 1, cntl.base & !1, 0, MAX_PFN - 1));
    invalidate(
        &up.bus,
        gpu.clock(),
        &up.ips.gc.bases,
        hub.hub(),
        GART_ENGINE,
        u32::from(vmid),
        0,
    )
    .unwrap();
    let packet = q.barrier().unwrap();
    q.queue.submit(&packet, gpu.clock(), 1_000_000_000).unwrap();
    gpu.gfx11().unwrap().mec().run_until_idle(10_000);
    let errors = gpu.gfx11().unwrap().mec().cp().errors().to_vec();
    assert!(
        errors.iter().any(|e| matches!(
            e,
            CpError::Vm {
                space: AddressSpace::Vmid(v),
                why: VmRefusal::InvalidBase { .. },
                ..
            } if *v == vmid
        )),
        "{name}: {errors:?}"
    );
}

#[test]
fn navi31_mes_queue_runs_in_the_vmid_mes_assigned() {
    mes_queue_in_its_vmid(parts::navi31());
}

#[test]
fn navi48_mes_queue_runs_in_the_vmid_mes_assigned() {
    mes_queue_in_its_vmid(parts::navi48());
}
