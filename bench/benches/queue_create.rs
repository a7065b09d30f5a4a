//! CPU-side cost of creating a compute queue on the model: building the
//! AQL MQD plus the MES ADD_QUEUE round trip (frame + trailing
//! QUERY_SCHEDULER_STATUS written, wptr and doorbell stored, the MES model
//! run inline from the fence poll, fence seen). REMOVE_QUEUE runs between
//! iterations, untimed. For comparison: the MQD build alone, and a direct
//! HQD load (MQD build + 56-register window + activation, on the MEC
//! model's register file).
//!
//! The MES model's own work (frame decode, MQD checks, binding the queue to
//! the CP model) is inside the measured time: it stands in for firmware,
//! which on hardware runs on the GPU while the CPU spins on the fence.

use barebell::aql::queue::QueueConfig;
use barebell::gfx::doorbells::Doorbells;
use barebell::gfx::hqd::DirectHqd;
use barebell::gfx::mapper::{HqdRegs, QueueMapper};
use barebell::gfx::mes::{HwBases, Mes, Process, V11};
use barebell::gfx::mqd::ComputeMqdV11;
use barebell::ip::Generation;
use barebell_model::{Seed, TickingClock};
use barebell_model_host::mec::{GC_BASES, ModelGpu};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// SET_HW_RSRC inputs for a rig with no discovery: no register bases
/// (the rig's MES model has no part to compare them with) and the two
/// SDMA engines every gfx11/gfx12 part here has.
const HW: HwBases = HwBases {
    gc: [0; 5],
    mmhub: [0; 5],
    osssys: [0; 5],
    sdma_engines: 2,
};
/// The rig has no GFXHUB: a context control that only enables its
/// context (`GCVM_CONTEXT1_CNTL.ENABLE_CONTEXT`), all a part-less MES
/// model checks.
#[allow(dead_code)]
const VM_CONTEXT_CNTL: u32 = 1;

const RING: usize = 1024;
const PTB: u64 = 0x7_0000_1000;

fn bench(c: &mut Criterion) {
    let Some(gpu) = ModelGpu::new(Generation::Gfx11, Seed(1)) else {
        return;
    };
    let Ok(hqd_regs) = HqdRegs::for_generation(Generation::Gfx11) else {
        return;
    };
    if Doorbells::linux_default()
        .program(gpu.mec, &hqd_regs, &GC_BASES)
        .is_err()
    {
        return;
    }
    let Some((ring, model)) = gpu.mes::<RING>() else {
        return;
    };
    let model: &'static _ = Box::leak(Box::new(model));
    let pause = move || {
        model.service();
    };
    let Ok(mut mes) = Mes::<'_, _, _, RING, V11>::new(
        ring,
        TickingClock::new(1),
        pause,
        Doorbells::linux_default(),
    ) else {
        return;
    };
    let process = Process {
        pasid: 0x8001,
        page_table_base: PTB,
        vm_context_cntl: VM_CONTEXT_CNTL,
        va_start: 0,
        va_end: barebell::gmc::hub::MAX_PFN - 1,
        context: gpu.process_context(),
    };
    let Some(q) = gpu.queue::<256>(0x20, QueueConfig::default()) else {
        return;
    };
    for (b, l) in q.ranges() {
        model.map_process_memory(PTB, b, l);
    }
    if mes.register_process(1, process).is_err() || mes.set_hw_resources(&HW).is_err() {
        return;
    }
    let res = q.resources(1);

    let mut g = c.benchmark_group("queue_create");
    g.bench_function("mqd_build", |b| {
        let p = res.mqd_params();
        b.iter(|| black_box(ComputeMqdV11::aql(black_box(&p))))
    });
    g.bench_function("mes_add_queue", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                // The previous iteration removed the queue.
                let m = mes.map(black_box(&res));
                total += t.elapsed();
                // A failed mapping would time an error path: stop.
                match m.map(|m| mes.unmap(&m)) {
                    Ok(Ok(())) => {}
                    other => {
                        eprintln!("queue_create: MES map/unmap failed: {other:?}");
                        std::process::exit(1);
                    }
                }
                model.clear_log();
            }
            total
        })
    });

    let Some(gpu2) = ModelGpu::new(Generation::Gfx11, Seed(2)) else {
        return;
    };
    let Ok(mut direct) = DirectHqd::new(
        gpu2.mec,
        TickingClock::new(1),
        GC_BASES,
        Generation::Gfx11,
        Doorbells::linux_default(),
    ) else {
        return;
    };
    let Some(q2) = gpu2.queue::<256>(0x20, QueueConfig::default()) else {
        return;
    };
    let res2 = q2.resources(1);
    g.bench_function("direct_hqd_map", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                let m = direct.map(black_box(&res2));
                total += t.elapsed();
                match m.map(|m| direct.unmap(&m)) {
                    Ok(Ok(())) => {}
                    other => {
                        eprintln!("queue_create: direct map/unmap failed: {other:?}");
                        std::process::exit(1);
                    }
                }
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
