//! The model's register interface as a driver sees it: a `VirtualGpu`
//! built for Navi31 or Navi48 (with the system's firmware-amd-graphics
//! blobs) fed fuzzer-chosen BAR5 register reads and writes and BAR2
//! doorbell stores. The model must never panic on what a driver sends:
//! it answers, or refuses (a refusal log entry, a dropped doorbell with
//! its reason). Input: `[part][op]*`, each op 9 bytes `[kind][offset
//! u32][value u32]` (little-endian); kind 0 reads, 1 writes, 2 rings a
//! doorbell; at most 2048 ops. One model per part is built once and
//! reused (building one loads the firmware): a crash found late may need
//! its predecessors to reproduce, and the model's refusal logs are what
//! is checked, not state.
#![no_main]

use barebell::platform::Platform;
use barebell_model::vgpu::HostMemory;
use barebell_model::{FilesDir, Seed, VirtualGpu, parts};
use libfuzzer_sys::fuzz_target;

const MAX_OPS: usize = 2048;

fn build(navi48: bool) -> VirtualGpu {
    let part = if navi48 {
        parts::navi48()
    } else {
        parts::navi31()
    };
    let Ok(mem) = HostMemory::allocate(16 << 20) else {
        panic!("no host memory for the model");
    };
    match VirtualGpu::new(part, &FilesDir::system(), mem, Seed(1)) {
        Ok(g) => g,
        Err(e) => panic!("building the model: {e} (firmware-amd-graphics?)"),
    }
}

thread_local! {
    static GPUS: [VirtualGpu; 2] = [build(false), build(true)];
}

fn word(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w[..b.len().min(4)].copy_from_slice(&b[..b.len().min(4)]);
    u32::from_le_bytes(w)
}

fuzz_target!(|data: &[u8]| {
    let Some((&part, ops)) = data.split_first() else {
        return;
    };
    GPUS.with(|gpus| {
        let gpu = &gpus[usize::from(part & 1)];
        let regs = gpu.regs();
        for op in ops.chunks_exact(9).take(MAX_OPS) {
            let off = word(&op[1..5]) as usize;
            let value = word(&op[5..9]);
            match op[0] % 3 {
                0 => {
                    let _ = regs.read32(off);
                }
                1 => regs.write32(off, value),
                _ => {
                    // The parts above are gfx11/gfx12: their doorbell path.
                    if let Some(g) = gpu.gfx11() {
                        let _ = g.doorbell_write(off as u64, u64::from(value));
                    }
                }
            }
        }
    });
});
