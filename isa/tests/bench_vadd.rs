//! The seeds' workload through the interpreter: vectorAdd of 1,048,576 f32
//! in 4,096 workgroups of 256, against a native Rust loop doing the same
//! additions in the same run. Run with
//! `cargo test --release -p barebell-isa --test bench_vadd -- --ignored --nocapture`.

mod common;
use common::*;
use std::time::Instant;

#[test]
#[ignore = "benchmark: run explicitly in release mode"]
fn bench_vadd_1m() {
    let n = 1 << 20;
    let mut r = Rng(42);
    let a: Vec<f32> = (0..n).map(|_| (r.u32() as f32) / 7.0).collect();
    let b: Vec<f32> = (0..n).map(|_| (r.u32() as f32) / 3.0).collect();
    for (t, w64) in TARGETS {
        // build outside the timed region
        let _ = build(t, w64);
        let t0 = Instant::now();
        let res = run(
            t,
            w64,
            "vadd",
            &[buf(&a), buf(&b), buf(&vec![0f32; n]), val(n as i32)],
            [n as u32, 1, 1],
            [256, 1, 1],
            1,
        )
        .unwrap_or_else(|e| panic!("vadd: {e}"));
        let model = t0.elapsed();
        let c: Vec<f32> = from_bytes(&res.bufs[2]);
        let t1 = Instant::now();
        let native: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let native_t = t1.elapsed();
        assert_eq!(c, std::hint::black_box(native), "vadd result");
        println!(
            "vectorAdd 1M {} wave{}: model {:.3} s ({} waves, {} instructions, {} lane-instructions, {:.1} M lane-instr/s); native loop {:.6} s; ratio {:.0}x",
            t.mcpu(),
            if w64 { 64 } else { 32 },
            model.as_secs_f64(),
            res.stats.waves,
            res.stats.instructions,
            res.stats.lane_instructions,
            res.stats.lane_instructions as f64 / model.as_secs_f64() / 1e6,
            native_t.as_secs_f64(),
            model.as_secs_f64() / native_t.as_secs_f64()
        );
    }
}
