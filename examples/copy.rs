//! SDMA copies on a brought-up device: host to VRAM, VRAM to VRAM, VRAM
//! to host, each checked byte for byte.
//!
//! `cargo run -p barebell-examples --example copy`

use barebell_bringup::{FirmwareDir, Mapping, Options, Quiet, sdma};
use barebell_examples::Failed;
use barebell_model::{FilesDir, Seed, VirtualGpu, parts, vgpu::HostMemory};

const BYTES: usize = 64 << 10;

fn main() -> Result<(), Failed> {
    // A navi31 model with 2 MiB of VRAM for user buffers, brought up.
    let fw = FirmwareDir::system();
    let memory = HostMemory::allocate((64 << 20) + (2 << 20))?;
    let model = VirtualGpu::new(parts::navi31(), &FilesDir::system(), memory, Seed(1))?;
    let opts = Options {
        mapping: Some(Mapping::Direct),
        user_vram: 2 << 20,
        ..Options::default()
    };
    let mut gpu = barebell_bringup::run(&model, &fw, &opts, &Quiet)?;

    // Two host buffers (GPU VA = host address), two in VRAM.
    let host = gpu.user.as_mut().ok_or("no user memory")?;
    let (h_src, h_dst) = (host.alloc(BYTES, 4096)?, host.alloc(BYTES, 4096)?);
    let vram = gpu.user_vram.as_mut().ok_or("no user VRAM")?;
    let (d_a, d_b) = (vram.alloc(BYTES, 4096)?.va, vram.alloc(BYTES, 4096)?.va);

    // SDMA engine 0, queue 0, loaded by registers: h2d, d2d, d2h.
    let mut q = sdma::open(&mut gpu, Mapping::Direct, &Quiet)?;
    let pattern: Vec<u8> = (0..BYTES).map(|i| (i * 7 % 251) as u8).collect();
    h_src.write(0, &pattern);
    for (dst, src) in [(d_a, h_src.address()), (d_b, d_a), (h_dst.address(), d_b)] {
        let seq = q.submit_copy(dst, src, BYTES as u64)?;
        q.wait(seq, sdma::BOUND_NS)?;
    }
    let mut back = vec![0u8; BYTES];
    h_dst.read(0, &mut back);

    q.stop(&mut gpu)?;
    let teardown = gpu.shutdown();
    let same = back == pattern;
    println!(
        "copied {BYTES} bytes h2d, d2d, d2h on navi31: identical {same}; teardown complete: {}",
        teardown.complete()
    );
    if !same || !teardown.complete() {
        return Err(Failed("the copies or the teardown were wrong".into()));
    }
    Ok(())
}
