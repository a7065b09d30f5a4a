//! The HIP vector add, step by step, on a brought-up device: `hipMalloc`
//! (user VRAM), `hipMemcpy` in (SDMA), `hipLaunchKernel` and
//! `hipDeviceSynchronize` (`barebell-launch`), `hipMemcpy` out, the check.
//!
//! `cargo run -p barebell-examples --example vector_add`

use barebell_bringup::{FirmwareDir, Mapping, Options, Quiet, sdma};
use barebell_examples::Failed;
use barebell_kernel::{Arg, Geometry, Scalar};
use barebell_launch::{DISPATCH_BOUND_NS, Launcher, NoWatch};
use barebell_model::{FilesDir, Seed, VirtualGpu, parts, vgpu::HostMemory};

const N: u32 = 4096;

fn main() -> Result<(), Failed> {
    // A navi31 model with 2 MiB of VRAM for user buffers, brought up to a
    // compute queue mapped by registers.
    let fw = FirmwareDir::system();
    let memory = HostMemory::allocate((64 << 20) + (2 << 20))?;
    let model = VirtualGpu::new(parts::navi31(), &FilesDir::system(), memory, Seed(1))?;
    let opts = Options {
        mapping: Some(Mapping::Direct),
        user_vram: 2 << 20,
        ..Options::default()
    };
    let gpu = barebell_bringup::run(&model, &fw, &opts, &Quiet)?;
    let mut gpu = Launcher::new(gpu).map_err(|(e, _teardown)| e)?;
    let bytes = N as usize * 4;

    // hipMalloc x3: device buffers in VRAM (a, b, c).
    let vram = gpu.gpu_mut().user_vram.as_mut().ok_or("no user VRAM")?;
    let d = [
        vram.alloc(bytes, 4096)?,
        vram.alloc(bytes, 4096)?,
        vram.alloc(bytes, 4096)?,
    ];
    let d = d.map(|buf| buf.va);

    // hipMemcpy host to device, by SDMA engine 0: a[i] = i, b[i] = 1.
    let host = gpu.alloc(bytes, 4096, "host staging")?;
    let mut copies = sdma::open(gpu.gpu_mut(), Mapping::Direct, &Quiet)?;
    for (dst, k, one) in [(d[0], 1.0f32, 0.0f32), (d[1], 0.0, 1.0)] {
        let v: Vec<u8> = (0..N)
            .flat_map(|i| (k * i as f32 + one).to_le_bytes())
            .collect();
        host.write(0, &v);
        let seq = copies.submit_copy(dst, host.address(), bytes as u64)?;
        copies.wait(seq, sdma::BOUND_NS)?;
    }

    // hipLaunchKernel + hipDeviceSynchronize: c = a + b.
    let code = gpu.load(barebell_gpu_kernels::GFX1100)?;
    let args = [
        Arg::Buffer(d[0]),
        Arg::Buffer(d[1]),
        Arg::Buffer(d[2]),
        Arg::Scalar(Scalar::U32(N)),
    ];
    let geometry = Geometry {
        grid: [N / 256, 1, 1],
        block: [256, 1, 1],
        dims: 1,
        dynamic_lds: 0,
    };
    gpu.launch(&code, "vadd", &args, &geometry)?;
    gpu.wait(DISPATCH_BOUND_NS, &NoWatch)?;

    // hipMemcpy device to host, then the check: c[i] = i + 1.
    let seq = copies.submit_copy(host.address(), d[2], bytes as u64)?;
    copies.wait(seq, sdma::BOUND_NS)?;
    let mut c = vec![0u8; bytes];
    host.read(0, &mut c);
    let wrong = (0..N as usize)
        .filter(|&i| c[4 * i..4 * i + 4] != (i as f32 + 1.0).to_le_bytes())
        .count();

    // The SDMA queue off the engine, then the device torn down.
    copies.stop(gpu.gpu_mut())?;
    let teardown = gpu.shutdown();
    println!(
        "vectorAdd of {N} floats in VRAM on navi31: {wrong} wrong; teardown complete: {}",
        teardown.complete()
    );
    if wrong != 0 || !teardown.complete() {
        return Err(Failed("the sums or the teardown were wrong".into()));
    }
    Ok(())
}
