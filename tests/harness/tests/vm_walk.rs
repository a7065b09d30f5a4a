//! `barebell::gmc::walk` (what `barebell vm walk` prints) against the
//! model's own hub walk (`VirtualGpu::translate`, written from
//! `amdgpu_vm.h` with its own bit definitions): over the process tables a
//! bring-up built, every VA either translates in both to the same host
//! byte, or is refused by both.

use barebell::gmc::pagetable::PteFormat;
use barebell::gmc::walk::{self, Context};
use barebell::platform::{DMA_CHUNK, Platform};
use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::gmc::Access;
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

fn check(part: barebell_model::Part) {
    let name = part.name;
    let gpu = virtual_gpu(part, 3);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Direct),
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let layout = up.memory.expect("the gmc step's layout");
    let q = up.queue.as_ref().expect("the user queue");
    let ring = q.queue.memory().ring_address();
    let mqd = q.mapping.mqd_address;
    let (user, user_len) = layout.user_memory;
    let vram = gpu.vram();
    let dma = gpu.dma();
    let base = layout.vram_base_offset;
    // The bring-up keeps every table in VRAM.
    let mut read = |pa: u64| -> Option<u64> {
        let off = pa.checked_sub(base)?;
        vram.at(off, 8)?;
        Some(u64::from(vram.read32(off)) | u64::from(vram.read32(off + 4)) << 32)
    };
    // The process context as the bring-up programs user VMIDs: the whole
    // 48-bit range, four levels (`PAGE_TABLE_DEPTH` 3, block size 0).
    let ctx = Context {
        root: layout.process_root,
        start: 0,
        end: (1 << 48) - 1,
        depth: 3,
        block_size: 0,
    };
    let format = PteFormat::from(up.ips.generation);
    let host_of = |pa: u64, system: bool| -> Option<u64> {
        if !system {
            return Some(vram.host.as_ptr() as u64 + pa.checked_sub(base)?);
        }
        let i = dma
            .chunk_bus
            .iter()
            .position(|&b| pa >= b && pa - b < DMA_CHUNK as u64)?;
        Some(dma.host.as_ptr() as u64 + (i * DMA_CHUNK) as u64 + (pa - dma.chunk_bus[i]))
    };
    let mut agreed = 0;
    for va in [
        ring,
        ring + 0x123,
        user,
        user + user_len - 8,
        user + user_len,
        mqd,
        0x1000,
        (1 << 47) + 0x5000,
    ] {
        let w = walk::walk(format, &ctx, va, &mut read);
        let ours = w.outcome.ok().and_then(|p| host_of(p.pa, p.system));
        let model = gpu
            .gfx11()
            .unwrap()
            .translate(layout.process_root, va, Access::Read)
            .ok();
        assert_eq!(
            ours,
            model,
            "{name}: VA {va:#x}: walk {:?} (entries {:x?}), model {model:x?}",
            w.outcome,
            w.entries()
        );
        agreed += usize::from(ours.is_some());
    }
    // The ring and user memory translate; the MQD and stray VAs do not.
    assert_eq!(agreed, 4, "{name}");
    let report = up.shutdown();
    assert!(report.complete(), "{name}: {report}");
}

#[test]
fn navi31_walk_agrees_with_the_model() {
    check(parts::navi31());
}

#[test]
fn navi48_walk_agrees_with_the_model() {
    check(parts::navi48());
}
