//! Issue 32 item 2: the page tables a user queue runs in must hold only
//! the user's memory, as a KFD process VM does. KFD allocates every MQD
//! with `kfd_gtt_sa_allocate()` (`allocate_mqd()` in
//! `kfd_mqd_manager_v11.c`/`_v12.c`) and the MES/KIQ/HIQ rings in the
//! kernel's GTT; none of them is mapped in a process's GPU VM, so a user
//! kernel cannot reach them. The user's AQL ring, its read/write
//! pointers and its EOP buffer come from user memory
//! (`set_queue_properties_from_user()` in `kfd_chardev.c`).
//!
//! Expected results follow from that rule alone: the MQD address is the
//! one the mapper handed the device, the root is the one the bring-up
//! reports; neither the verdict nor an expected address comes from
//! barebell's own layout code.

use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::gmc::Access;
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

fn check(part: barebell_model::Part) {
    for mapping in Mapping::ALL {
        let name = part.name;
        let gpu = virtual_gpu(part.clone(), 5);
        let opts = Options {
            until: Step::Queue,
            mapping: Some(mapping),
            ..Default::default()
        };
        let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
            .unwrap_or_else(|e| panic!("{name} {mapping:?}: {e}"));
        let root = up.memory.expect("the gmc step's layout").process_root;
        let q = up.queue.as_ref().expect("the user queue");
        // Control: the user's own ring is reachable through the process
        // tables (the CP fetches it through the queue's VMID).
        let ring = q.queue.memory().ring_address();
        gpu.gfx11()
            .unwrap()
            .translate(root, ring, Access::Read)
            .unwrap_or_else(|e| panic!("{name} {mapping:?}: user ring {ring:#x}: {e:?}"));
        // The driver's MQD must not be.
        let mqd = q.mapping.mqd_address;
        let r = gpu.gfx11().unwrap().translate(root, mqd, Access::Write);
        assert!(
            r.is_err(),
            "{name} {mapping:?}: MQD {mqd:#x} is writable through the process tables: {r:?}"
        );
        let report = up.shutdown();
        assert!(report.complete(), "{name} {mapping:?}: {report}");
        gpu.quiescent()
            .unwrap_or_else(|e| panic!("{name} {mapping:?}: {e}"));
    }
}

#[test]
fn navi31_mqd_is_not_in_the_process_tables() {
    check(parts::navi31());
}

#[test]
fn navi48_mqd_is_not_in_the_process_tables() {
    check(parts::navi48());
}
