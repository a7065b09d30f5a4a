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

/// MI210 (GC 9.4.2): the built-in gfx90a `vadd` runs on the queue KFD's
/// way maps (the HWS runlist) and adds; gfx942 code is refused by the
/// loader before anything is placed (`EF_AMDGPU_MACH` 0x3f vs 0x4c).
#[test]
fn mi210_runs_gfx90a_code_and_refuses_gfx942() {
    let fw = barebell_model::FilesDir::system();
    let mem = HostMemory::allocate(64 << 20).unwrap();
    let model = VirtualGpu::new(parts::mi210(), &fw, mem, Seed(3)).unwrap();
    let opts = Options {
        mapping: Some(Mapping::Hws),
        ..Options::default()
    };
    let gpu = barebell_bringup::run(&model, &FirmwareDir::system(), &opts, &Quiet).unwrap();
    let mut gpu = Launcher::new(gpu).map_err(|(e, _)| e).unwrap();
    assert_eq!(gpu.part(), barebell_kernel::Part::MI210);
    assert!(matches!(
        gpu.load(barebell_gpu_kernels::GFX942),
        Err(LaunchError::CodeObject(_))
    ));
    let code = gpu.load(barebell_gpu_kernels::GFX90A).unwrap();
    let n = 64usize;
    let a = gpu.alloc(n * 4, 256, "a").unwrap();
    let b = gpu.alloc(n * 4, 256, "b").unwrap();
    let c = gpu.alloc(n * 4, 256, "c").unwrap();
    let bytes =
        |f: &dyn Fn(usize) -> f32| -> Vec<u8> { (0..n).flat_map(|i| f(i).to_le_bytes()).collect() };
    a.write(0, &bytes(&|i| i as f32));
    b.write(0, &bytes(&|i| 0.5 * i as f32));
    let args = [
        Arg::Buffer(a.address()),
        Arg::Buffer(b.address()),
        Arg::Buffer(c.address()),
        Arg::Scalar(Scalar::U32(n as u32)),
    ];
    gpu.launch(&code, "vadd", &args, &one_block(64)).unwrap();
    gpu.wait(DISPATCH_BOUND_NS, &NoWatch).unwrap();
    let mut out = vec![0u8; n * 4];
    c.read(0, &mut out);
    // c[i] = i + i / 2, computed here in f32 as the kernel's `a + b`.
    assert_eq!(out, bytes(&|i| i as f32 + 0.5 * i as f32));
    assert!(gpu.shutdown().complete());
    model.quiescent().unwrap();
}
