//! The launch API on the model: a launch that runs, and each refusal and
//! early end of a wait as its typed error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use barebell_bringup::{FirmwareDir, Mapping, Options, Quiet};
use barebell_kernel::launch::LaunchError as Refused;
use barebell_kernel::{Arg, Geometry, Scalar};
use barebell_launch::{DISPATCH_BOUND_NS, LaunchError, Launcher, NoWatch, Watch};
use barebell_model::{Seed, VirtualGpu, parts, vgpu::HostMemory};

fn model() -> VirtualGpu {
    let fw = barebell_model::FilesDir::system();
    let mem = HostMemory::allocate(64 << 20).unwrap();
    VirtualGpu::new(parts::navi31(), &fw, mem, Seed(3)).unwrap()
}

fn brought_up(model: &VirtualGpu) -> Launcher<'_> {
    let opts = Options {
        mapping: Some(Mapping::Direct),
        ..Options::default()
    };
    let gpu = barebell_bringup::run(model, &FirmwareDir::system(), &opts, &Quiet).unwrap();
    Launcher::new(gpu).map_err(|(e, _)| e).unwrap()
}

fn one_block(block: u32) -> Geometry {
    Geometry {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        dims: 1,
        dynamic_lds: 0,
    }
}

/// Stops every wait at once, as a stop signal would.
struct StopAtOnce;

impl Watch for StopAtOnce {
    fn stop(&self) -> Option<&'static str> {
        Some("SIGINT")
    }
}

#[test]
fn vadd_runs_and_each_refusal_is_typed() {
    let model = model();
    let mut gpu = brought_up(&model);
    assert_eq!(gpu.part(), barebell_kernel::Part::NAVI31);
    let code = gpu.load(barebell_gpu_kernels::GFX1100).unwrap();
    let c = gpu.alloc(64 * 4, 256, "c").unwrap();
    let args = [
        Arg::Buffer(c.address()),
        Arg::Buffer(c.address()),
        Arg::Buffer(c.address()),
        Arg::Scalar(Scalar::U32(64)),
    ];

    let e = gpu
        .launch(&code, "nope", &args, &one_block(64))
        .unwrap_err();
    assert!(matches!(e, LaunchError::Kernel { .. }), "{e}");
    assert!(e.to_string().starts_with("kernel nope: "), "{e}");

    let e = gpu.launch(&code, "vadd", &args, &one_block(0)).unwrap_err();
    assert!(
        matches!(e, LaunchError::Launch(Refused::Zero { .. })),
        "{e}"
    );

    // A stop request ends the wait with the dispatch pending.
    gpu.launch(&code, "vadd", &args, &one_block(64)).unwrap();
    let e = gpu.wait(DISPATCH_BOUND_NS, &StopAtOnce).unwrap_err();
    assert_eq!(
        e,
        LaunchError::Interrupted {
            by: "SIGINT",
            signal: 1
        }
    );
    // The same dispatch then completes: 0 + 0 stays 0.
    gpu.wait(DISPATCH_BOUND_NS, &NoWatch).unwrap();
    let mut out = [0xffu8; 256];
    c.read(0, &mut out);
    assert_eq!(out, [0u8; 256]);
    assert!(gpu.shutdown().complete());
}

#[test]
fn a_device_error_ends_the_wait() {
    struct Faulted;
    impl Watch for Faulted {
        fn device_error(&self) -> Option<String> {
            Some("VM fault at 0x1000".into())
        }
    }
    let model = model();
    let mut gpu = brought_up(&model);
    let code = gpu.load(barebell_gpu_kernels::GFX1100).unwrap();
    gpu.launch(&code, "empty", &[], &one_block(32)).unwrap();
    let e = gpu.wait(DISPATCH_BOUND_NS, &Faulted).unwrap_err();
    assert_eq!(e.to_string(), "the device reported: VM fault at 0x1000");
    gpu.wait(DISPATCH_BOUND_NS, &NoWatch).unwrap();
    assert!(gpu.shutdown().complete());
}
