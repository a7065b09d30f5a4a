//! Launches a kernel on a brought-up device through `barebell-launch`.
//!
//! The model GPU (a navi31) goes through the one bring-up to a user queue
//! mapped directly; then the `vadd` kernel (built by clang-19 into
//! `barebell-gpu-kernels`) adds two vectors held in the bring-up's user
//! memory, and the host checks every sum. The same code runs on a GPU: only
//! the platform passed to `barebell_bringup::run` differs.
//!
//! `cargo run -p barebell-examples --example run_kernel`

use barebell_bringup::{FirmwareDir, Mapping, Options, Quiet};
use barebell_examples::Failed;
use barebell_kernel::{Arg, Geometry, Scalar};
use barebell_launch::{DISPATCH_BOUND_NS, Launcher, NoWatch};
use barebell_model::{FilesDir, Seed, VirtualGpu, parts, vgpu::HostMemory};

const N: u32 = 1024;

fn main() -> Result<(), Failed> {
    // The device: the model of a navi31 with 64 MiB of VRAM.
    let fw = FirmwareDir::system();
    let model = VirtualGpu::new(
        parts::navi31(),
        &FilesDir::system(),
        HostMemory::allocate(64 << 20)?,
        Seed(1),
    )?;

    // The one bring-up, to a user queue the driver maps by registers.
    let opts = Options {
        mapping: Some(Mapping::Direct),
        ..Options::default()
    };
    let gpu = barebell_bringup::run(&model, &fw, &opts, &Quiet)?;
    let mut gpu = Launcher::new(gpu).map_err(|(e, _teardown)| e)?;

    // Three buffers in user memory: the device reaches them at their host
    // address. a[i] = i, b[i] = 2i.
    let bytes = N as usize * 4;
    let a = gpu.alloc(bytes, 256, "buffer a")?;
    let b = gpu.alloc(bytes, 256, "buffer b")?;
    let c = gpu.alloc(bytes, 256, "buffer c")?;
    let floats = |k: f32| (0..N).flat_map(move |i| (k * i as f32).to_le_bytes());
    a.write(0, &floats(1.0).collect::<Vec<u8>>());
    b.write(0, &floats(2.0).collect::<Vec<u8>>());

    // Load the code object, launch vadd over N work-items, wait.
    let code = gpu.load(barebell_gpu_kernels::GFX1100)?;
    let args = [
        Arg::Buffer(a.address()),
        Arg::Buffer(b.address()),
        Arg::Buffer(c.address()),
        Arg::Scalar(Scalar::U32(N)),
    ];
    let geometry = Geometry {
        grid: [N / 64, 1, 1],
        block: [64, 1, 1],
        dims: 1,
        dynamic_lds: 0,
    };
    gpu.launch(&code, "vadd", &args, &geometry)?;
    gpu.wait(DISPATCH_BOUND_NS, &NoWatch)?;

    // c[i] must be 3i.
    let mut out = vec![0u8; bytes];
    c.read(0, &mut out);
    let wrong = out
        .chunks_exact(4)
        .enumerate()
        .filter(|(i, v)| f32::from_le_bytes([v[0], v[1], v[2], v[3]]) != 3.0 * *i as f32)
        .count();
    let teardown = gpu.shutdown();
    println!(
        "vadd of {N} floats on navi31: {wrong} wrong; teardown complete: {}",
        teardown.complete()
    );
    if wrong != 0 || !teardown.complete() {
        return Err(Failed(
            "the kernel's sums or the teardown were wrong".into(),
        ));
    }
    Ok(())
}
