//! The KIQ ring as Linux 6.12 fills it on gfx11 (`gfx_v11_0_ring_funcs_kiq`:
//! `align_mask` 0xff, `nop` = `PACKET3(PACKET3_NOP, 0x3FFF)`), and the
//! register store its ring test makes (`gfx_v11_0_ring_test_ring()`:
//! `WRITE_DATA` with `DST_SEL(0)` to `SCRATCH_REG0`). Found by the Linux
//! peer: the KIQ model stalled on the first pad dword (read as a
//! 0x4001-dword packet) and refused register stores.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell::ip::Generation;
use barebell_model::Seed;
use barebell_model::kiq::{KiqModel, RegisterStores};
use barebell_model_host::mec::ModelGpu;
use barebell_tests::Page4k;

/// `PACKET3(PACKET3_WRITE_DATA, 3)` with `DST_SEL(dst_sel)`, one dword.
fn write_data(dst_sel: u32, addr: u64, v: u32) -> [u32; 5] {
    [
        3 << 30 | 3 << 16 | 0x37 << 8,
        dst_sel << 8,
        addr as u32,
        (addr >> 32) as u32,
        v,
    ]
}

/// `PACKET3(PACKET3_NOP, 0x3FFF)` (`nvd.h`).
const NOP_FILLER: u32 = 3 << 30 | 0x3FFF << 16 | 0x10 << 8;
/// `SCRATCH_REG0`: GC segment 1 (0xA000) + 0x2040 (`gc_11_0_0_offset.h`),
/// in dwords; BAR byte offset 0x30100.
const SCRATCH_REG0: u32 = 0xA000 + 0x2040;

#[test]
fn a_padded_kiq_ring_runs_and_its_register_stores_reach_the_bus() {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(41)).unwrap();
    let (ring, bell, mem) = (Page4k::leak(&gpu), Page4k::leak(&gpu), Page4k::leak(&gpu));
    let stores = RegisterStores::default();
    let model = KiqModel::new(gpu.mec_arc.clone(), ring.addr(), 1024, bell.addr())
        .with_register_stores(stores.clone());
    // Submission 1: the ring test, padded to 256 dwords.
    let mut w = 0usize;
    for d in write_data(0, u64::from(SCRATCH_REG0), 0xDEAD_BEEF) {
        ring.poke(w, d);
        w += 1;
    }
    while !w.is_multiple_of(256) {
        ring.poke(w, NOP_FILLER);
        w += 1;
    }
    // Submission 2: a fence to memory, padded likewise.
    for d in write_data(5, mem.addr() + 16, 7) {
        ring.poke(w, d);
        w += 1;
    }
    while !w.is_multiple_of(256) {
        ring.poke(w, NOP_FILLER);
        w += 1;
    }
    bell.poke(0, w as u32);
    let ran = model.service();
    assert!(!model.is_halted(), "{:?}", model.log());
    assert_eq!(ran, 2, "two packets, the pads skipped: {:?}", model.log());
    assert_eq!(*stores.lock(), vec![(SCRATCH_REG0 * 4, 0xDEAD_BEEF)]);
    assert_eq!(mem.peek(4), 7);
    assert_eq!(model.service(), 0, "nothing past the write pointer");
}
