//! The one bring-up sequence over the model GPU: every part, every
//! mapping, to a completed first packet.

use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

fn bring_up(part: barebell_model::Part, mapping: Option<Mapping>) {
    let name = part.name;
    let gpu = virtual_gpu(part, 1);
    let opts = Options {
        until: Step::Queue,
        mapping,
    };
    let fw = FirmwareDir::system();
    let r = barebell_bringup::run(&gpu, &fw, &opts, &Quiet);
    let up = match r {
        Ok(up) => up,
        Err(e) => panic!("{name} {mapping:?}: {e}\n{}", gpu.firmware_logs()),
    };
    assert!(
        gpu.psp().refusals().is_empty(),
        "{:?}",
        gpu.psp().refusals()
    );
    assert_eq!(gpu.bar5_counts().beyond, 0, "an access past BAR5 was lost");
    // The VBIOS's picture (navi31's model display) is still on screen.
    assert_eq!(
        gpu.scanout_clobbered(),
        None,
        "{name}: framebuffer overwritten"
    );
    assert!(gpu.psp().sos_running());
    assert!(gpu.mmhub().vmid0().is_some(), "MMHUB VMID0 not enabled");
    assert!(gpu.gfxhub().vmid0().is_some(), "GFXHUB VMID0 not enabled");
    match mapping {
        None => assert_eq!(up.reached, Step::Rlc),
        Some(m) => {
            let q = up.queue.as_ref().expect("a mapped queue");
            assert_eq!(q.mode, m);
            assert_eq!(q.signal.value(), 0, "first packet's completion signal");
            assert!(
                gpu.mec().cp().errors().is_empty(),
                "{:?}",
                gpu.mec().cp().errors()
            );
            let q = up.queue.unwrap();
            q.unmap().unwrap();
        }
    }
}

#[test]
fn navi31_to_rlc() {
    bring_up(parts::navi31(), None);
}

#[test]
fn navi48_to_rlc() {
    bring_up(parts::navi48(), None);
}

#[test]
fn navi31_every_mapping() {
    for m in Mapping::ALL {
        bring_up(parts::navi31(), Some(m));
    }
}

#[test]
fn navi48_every_mapping() {
    for m in Mapping::ALL {
        bring_up(parts::navi48(), Some(m));
    }
}
