//! The model's firmware packet handlers on what a driver writes to their
//! rings: the KIQ model (PM4: SET_RESOURCES, MAP_QUEUES, UNMAP_QUEUES,
//! QUERY_STATUS, WRITE_DATA; `model/src/kiq.rs`) and the MES model (API
//! frames, v11 on gfx11 and v12 on gfx12; `model/src/mes.rs`), over a
//! gfx11 and a gfx12 MEC model (`barebell_model_host::mec::ModelGpu`)
//! built once per process. Input: `[which][dwords]`, which % 3 = 0 KIQ
//! on gfx11, 1 MES v11 on gfx11, 2 MES v12 on gfx12. Each input gets a
//! fresh firmware model over a ring the input fills from dword 0; the
//! MEC behind it keeps its state across inputs (its slots and doorbells
//! are few, so it saturates rather than grows). Every packet is executed
//! or refused (a halt or refusal in the model's log), never a panic.
#![no_main]

use barebell::gfx::doorbells::doorbell_index;
use barebell::ip::Generation;
use barebell_model::Seed;
use barebell_model::kiq::KiqModel;
use barebell_model::mes::{MesApiVersion, MesModel};
use barebell_model_host::mec::ModelGpu;
use libfuzzer_sys::fuzz_target;

const RING_DWORDS: usize = 4096;

#[repr(C, align(4096))]
struct Ring([u32; RING_DWORDS]);

struct Rig {
    gpu: ModelGpu,
    ring: *mut u32,
}

fn rig(g: Generation) -> Rig {
    let Some(gpu) = ModelGpu::new(g, Seed(7)) else {
        panic!("no MEC model for {g:?}");
    };
    let ring: &'static mut Ring = Box::leak(Box::new(Ring([0; RING_DWORDS])));
    let ring = ring.0.as_mut_ptr();
    // SAFETY: leaked for the process; the model reads it with atomics,
    // the target writes it between runs only.
    unsafe { gpu.map(ring as u64, (RING_DWORDS * 4) as u64) };
    Rig { gpu, ring }
}

thread_local! {
    static RIGS: [Rig; 2] = [rig(Generation::Gfx11), rig(Generation::Gfx12)];
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    let n = (body.len() / 4).min(RING_DWORDS);
    RIGS.with(|rigs| {
        let r = &rigs[usize::from(which % 3 == 2)];
        for i in 0..RING_DWORDS {
            let w = if i < n {
                barebell_decode::le32(body, i * 4)
            } else {
                0
            };
            // SAFETY: inside the leaked ring; no model runs meanwhile.
            unsafe { core::ptr::write_volatile(r.ring.add(i), w) };
        }
        let ring = r.ring as u64;
        let slot = |index: u32| r.gpu.doorbells as *const _ as u64 + u64::from(index) * 8;
        if which % 3 == 0 {
            let kiq = KiqModel::new(
                r.gpu.mec_arc.clone(),
                ring,
                RING_DWORDS as u64,
                slot(doorbell_index::KIQ),
            );
            if let Some(d) = r.gpu.doorbell(doorbell_index::KIQ) {
                d.ring(n as u64);
            }
            let _ = kiq.service();
            let _ = kiq.log();
        } else {
            let api = if which % 3 == 1 {
                MesApiVersion::V11
            } else {
                MesApiVersion::V12
            };
            let mes = MesModel::new(
                r.gpu.mec_arc.clone(),
                ring,
                RING_DWORDS as u64,
                slot(doorbell_index::MES_RING0),
            )
            .with_api(api);
            if let Some(d) = r.gpu.doorbell(doorbell_index::MES_RING0) {
                d.ring(n as u64);
            }
            let _ = mes.service();
            let _ = mes.log();
        }
        let _ = r.gpu.mec.run_until_idle(1_000);
    });
});
