//! Wall time of the CPU side of a submission, into model memory with no
//! consumer (the ring is drained in bulk so it never fills). The drain
//! runs as per-iteration set-up, outside the timed routine; each routine
//! submits 256 packets into the 1024-slot ring, so it can never fill (a
//! full ring would spin: the benchmark clock never expires).

use barebell_bench::{NoClock, drain, packet, queue};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let (Some(q), Some(p)) = (queue(), packet()) else {
        return;
    };
    let mut g = c.benchmark_group("submit");
    // Every iteration submits 256 packets, singly or in batches.
    g.throughput(Throughput::Elements(256));
    g.bench_function("single", |b| {
        b.iter_batched(
            || drain(&q),
            |()| {
                for _ in 0..256 {
                    let _ = black_box(q.submit(black_box(&p), &NoClock, 1_000));
                }
            },
            BatchSize::PerIteration,
        )
    });
    for n in [8usize, 64] {
        let batch = vec![p; n];
        g.bench_function(format!("batch{n}"), |b| {
            b.iter_batched(
                || drain(&q),
                |()| {
                    for _ in 0..(256 / n) {
                        let _ = black_box(q.submit_batch(black_box(&batch), &NoClock, 1_000));
                    }
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
