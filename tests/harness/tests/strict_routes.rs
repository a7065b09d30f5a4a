//! Strict mode (issue 15): registers the model keeps must have a named
//! route, so that a strict run refuses only registers no block model
//! knows. These are the ones tinygrad's AM boot writes that used to fall
//! to the MEC's catch-all storage: every dword of the HQD window
//! (`CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI`, the 56 dwords 128..=183 of
//! `struct v11_compute_mqd` / `v12_compute_mqd`, which AM's
//! `setup_ring` writes in one sweep) and the 18 invalidation engines'
//! `*VM_INVALIDATE_ENGn_ADDR_RANGE_LO32/HI32` of both hubs
//! (`mmhub_v3_0_program_invalidation()`: `for (i = 0; i < 18; ++i)`, LO32
//! 0xffffffff and HI32 0x1f; engine stride 2 dwords: ENG0 LO32 at 0x0787,
//! ENG1 LO32 at 0x0789 in `mmhub_v3_0_0_offset.h`).

use barebell::discovery::{Discovery, hw_id};
use barebell::platform::Platform;
use barebell::regs::IpBases;
use barebell::regs::hub::HubRegs;
use barebell_model::discovery::{self as sim, PartDesc};
use barebell_model::parts;
use barebell_tests::virtual_gpu;

/// HQD window length in dwords (MQD dwords 128..=183).
const WINDOW_DWORDS: usize = 56;
const ENGINES: u32 = 18;
const ENGINE_STRIDE_DWORDS: u32 = 2;

fn bases(desc: &PartDesc, id: u16) -> IpBases {
    let (bin, _) = sim::build(desc);
    let d = Discovery::parse(&bin).unwrap();
    d.ip(id, 0).unwrap().bases
}

fn check(
    part: barebell_model::Part,
    desc: &PartDesc,
    window: barebell::regs::Reg,
    grbm: barebell::regs::Reg,
    hubs: [(&HubRegs, u16); 2],
) {
    let gpu = virtual_gpu(part, 3);
    gpu.gfx11().unwrap().set_strict(true);
    let mark = gpu.gfx11().unwrap().refusal_mark();
    let gc = bases(desc, hw_id::GC);
    let regs = gpu.regs();
    // GRBM_GFX_CNTL: MEID 1 (bits 2-3), pipe 1, queue 2 (bits 8-10).
    regs.write32(grbm.byte_offset(&gc).unwrap(), 1 << 2 | 1 | 2 << 8);
    let base = window.byte_offset(&gc).unwrap();
    // Window index 2 is CP_HQD_ACTIVE: left 0 so nothing activates.
    for i in (0..WINDOW_DWORDS).filter(|i| *i != 2) {
        regs.write32(base + 4 * i, 0x100 + i as u32);
    }
    for i in (0..WINDOW_DWORDS).filter(|i| *i != 2) {
        assert_eq!(regs.read32(base + 4 * i), 0x100 + i as u32, "window {i}");
    }
    for (h, id) in hubs {
        let b = bases(desc, id);
        let lo = h.inv_eng0_range_lo.byte_offset(&b).unwrap();
        for e in 0..ENGINES {
            let at = lo + 4 * (e * ENGINE_STRIDE_DWORDS) as usize;
            regs.write32(at, 0xFFFF_FFFF);
            regs.write32(at + 4, 0x1F);
            assert_eq!(regs.read32(at + 4), 0x1F, "{} engine {e}", h.name);
        }
    }
    assert!(
        gpu.gfx11().unwrap().refusals_since(mark).is_empty(),
        "{:?}",
        gpu.gfx11().unwrap().refusals_since(mark)
    );
}

#[test]
fn strict_mode_routes_the_hqd_window_and_invalidation_ranges_navi31() {
    use barebell::regs::gc_11_0_0 as r;
    use barebell::regs::hub::{GFXHUB_3_0, MMHUB_3_0_0};
    check(
        parts::navi31(),
        &sim::NAVI31,
        r::CP_MQD_BASE_ADDR,
        r::GRBM_GFX_CNTL,
        [(&GFXHUB_3_0, hw_id::GC), (&MMHUB_3_0_0, hw_id::MMHUB)],
    );
}

#[test]
fn strict_mode_routes_the_hqd_window_and_invalidation_ranges_navi48() {
    use barebell::regs::gc_12_0_0 as r;
    use barebell::regs::hub::{GFXHUB_12_0, MMHUB_4_1_0};
    check(
        parts::navi48(),
        &sim::NAVI48,
        r::CP_MQD_BASE_ADDR,
        r::GRBM_GFX_CNTL,
        [(&GFXHUB_12_0, hw_id::GC), (&MMHUB_4_1_0, hw_id::MMHUB)],
    );
}
