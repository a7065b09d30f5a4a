//! Wall time of loading a small code object: parse (ELF, metadata note,
//! descriptors, relocations) and load (copy, zero, relocate) into host
//! memory standing in for device memory. The code object is vadd & co.
//! for gfx1100, code object v5, from the checked-in fuzz corpus (6
//! kernels, ~13 KB).

use barebell_kernel::{CodeObject, DeviceImage, Part};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

const CO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fuzz/corpus/code_object/kernels-gfx1100-v5-O2.co"
);

fn bench(c: &mut Criterion) {
    let Ok(bytes) = std::fs::read(CO) else {
        eprintln!("load bench: {CO} is missing (cargo xtask kernel-corpus)");
        return;
    };
    let Ok(co) = CodeObject::parse(&bytes) else {
        return;
    };
    let mut mem = vec![0u8; co.image_size as usize];
    let mut g = c.benchmark_group("code_object");
    g.bench_function("parse", |b| {
        b.iter(|| black_box(CodeObject::parse(black_box(&bytes))).is_ok())
    });
    g.bench_function("load", |b| {
        b.iter(|| {
            co.load(
                &Part::NAVI31,
                DeviceImage {
                    host: black_box(&mut mem),
                    device_address: 0x7f00_0000_0000,
                },
            )
            .is_ok()
        })
    });
    g.bench_function("parse+load+lookup", |b| {
        b.iter(|| {
            let Ok(co) = CodeObject::parse(black_box(&bytes)) else {
                return false;
            };
            co.load(
                &Part::NAVI31,
                DeviceImage {
                    host: &mut mem,
                    device_address: 0x7f00_0000_0000,
                },
            )
            .is_ok_and(|code| code.kernel("vadd").is_ok())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
