//! The graphics ring as Linux 6.12 brings it up on gfx11 with MES: the
//! queue MES maps from the `struct v11_gfx_mqd` (`gfx_v11_0_gfx_mqd_init()`,
//! `mes_v11_0_map_legacy_queue()` → the MEC block's `map_gfx`), then what
//! the driver puts on it, in order:
//! - `gfx_v11_0_cp_gfx_start()`: `PREAMBLE_CNTL` begin, `CONTEXT_CONTROL`,
//!   the clear-state `SET_CONTEXT_REG`s, `PA_SC_TILE_STEERING_OVERRIDE`,
//!   `PREAMBLE_CNTL` end, `CLEAR_STATE`;
//! - `gfx_v11_0_ring_test_ring()`: `SET_UCONFIG_REG` of `SCRATCH_REG0`;
//! - `gfx_v11_0_ring_test_ib()` through `amdgpu_ib_schedule()`: `COND_EXEC`
//!   (`gfx_v11_0_ring_emit_init_cond_exec()`), the HDP flush
//!   `WAIT_REG_MEM` (`gfx_v11_0_ring_emit_hdp_flush()`), `INDIRECT_BUFFER`
//!   (`gfx_v11_0_ring_emit_ib_gfx()`: size and VMID, no VALID bit) whose IB
//!   writes 0xDEADBEEF, and the fence `RELEASE_MEM` with `INT_SEL` 2
//!   (`gfx_v11_0_ring_emit_fence()` for `amdgpu_fence_emit()`).
//!
//! Found by the Linux peer: MES refused the graphics queue
//! (`amdgpu_gfx_enable_kgq()`: "failed to map gfx queue"), and the CP
//! stopped on the first graphics packet, `INDIRECT_BUFFER` and on a
//! `RELEASE_MEM` asking for an interrupt.
//!
//! Encodings are written here from `nvd.h` and `gc_11_0_0_offset.h`, not
//! taken from the code under test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell::bus::Block;
use barebell::gfx::pfp_me::{self, GfxPcs};
use barebell::ip::Generation;
use barebell::regs::gc_11_0_0 as r;
use barebell_model::Seed;
use barebell_model::cp::{CpError, Pm4Error, Pm4Registers};
use barebell_model::decode::gfx_mqd_v11::GfxMqdV11;
use barebell_model::mec::{MecError, MecEvent};
use barebell_model_host::mec::{GC_BASES, ModelGpu};
use barebell_tests::Page4k;
use std::sync::{Arc, Mutex};

/// `PACKET3(op, count)`.
const fn p3(op: u32, count: u32) -> u32 {
    3 << 30 | count << 16 | op << 8
}
const NOP_FILLER: u32 = p3(0x10, 0x3FFF);
/// `SCRATCH_REG0` (GC segment 1 + 0x2040), as an offset from
/// `PACKET3_SET_UCONFIG_REG_START` (0xC000).
const SCRATCH_REG0: u32 = 0xA000 + 0x2040;
/// `CP_ME_CNTL.PFP_HALT`, `ME_HALT` (`gc_11_0_0_sh_mask.h`).
const PFP_HALT: u32 = 0x0400_0000;
const ME_HALT: u32 = 0x1000_0000;
/// The rig's HDP flush pair (dwords): any pair the CP is told of.
const HDP: (u32, u32) = (0x1_4106, 0x1_4107);

/// The rig's MEC with its graphics pipe 0 started as
/// `gfx_v11_0_config_gfx_rs64()` and `gfx_v11_0_cp_gfx_enable()` leave it.
fn gpu_with_gfx_pipes(halted: bool) -> ModelGpu {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(11)).unwrap();
    pfp_me::config_rs64(
        gpu.mec,
        &GC_BASES,
        Generation::Gfx11,
        GfxPcs {
            pfp: 0x40,
            me: 0x80,
        },
    )
    .unwrap();
    if !halted {
        let gc = Block::new(gpu.mec, GC_BASES);
        let v = gc.read(r::CP_ME_CNTL).unwrap();
        gc.write(r::CP_ME_CNTL, v & !(PFP_HALT | ME_HALT)).unwrap();
    }
    gpu.mec.cp().set_pm4_registers(Pm4Registers {
        gc_seg0: GC_BASES.0[0],
        hdp_flush: Some(HDP),
    });
    gpu
}

/// The queue `gfx_v11_0_gfx_mqd_init()` describes: a 1024-dword ring
/// (`RB_BUFSZ` 9), VMID 0, read and write pointers in `wb`, doorbell
/// dword 8.
fn mqd(ring: &Page4k, wb: &Page4k) -> GfxMqdV11 {
    GfxMqdV11 {
        ring_address: ring.addr(),
        ring_dwords: 1024,
        vmid: 0,
        active: true,
        privileged: true,
        rptr: 0,
        rptr_address: wb.addr(),
        wptr_poll_address: wb.addr() + 8,
        doorbell: Some(8),
        wptr: 0,
        mqd_address: 0,
    }
}

struct Ring {
    page: &'static Page4k,
    w: usize,
}

impl Ring {
    fn push(&mut self, dwords: &[u32]) {
        for d in dwords {
            self.page.poke(self.w % 1024, *d);
            self.w += 1;
        }
    }
    /// `amdgpu_ring_commit()`: pad to 256 dwords (`align_mask` 0xff).
    fn commit(&mut self, gpu: &ModelGpu) {
        while !self.w.is_multiple_of(256) {
            self.push(&[NOP_FILLER]);
        }
        // `gfx_v11_0_ring_set_wptr_gfx()`: the doorbell carries the
        // write pointer in dwords.
        gpu.doorbells.0[4].store(self.w as u64, std::sync::atomic::Ordering::Release);
        for _ in 0..16 {
            gpu.mec.step();
        }
    }
}

#[test]
fn linux_gfx_ring_start_ring_test_and_ib_test_run() {
    let gpu = gpu_with_gfx_pipes(false);
    let (page, wb, ib) = (Page4k::leak(&gpu), Page4k::leak(&gpu), Page4k::leak(&gpu));
    let eops = Arc::new(Mutex::new(Vec::new()));
    let seen = eops.clone();
    gpu.mec.set_eop_line(Box::new(move |slot, ctx| {
        seen.lock().unwrap().push((slot, ctx));
    }));
    let q = gpu.mec.map_gfx(0, 0, &mqd(page, wb)).unwrap();
    let mut ring = Ring { page, w: 0 };

    // gfx_v11_0_cp_gfx_start().
    ring.push(&[p3(0x4A, 0), 2 << 28]);
    ring.push(&[p3(0x28, 1), 0x8000_0000, 0x8000_0000]);
    ring.push(&[p3(0x69, 2), 0x0000, 0x1, 0x2]);
    ring.push(&[p3(0x69, 1), 0x0308, 0x7]);
    ring.push(&[p3(0x4A, 0), 3 << 28]);
    ring.push(&[p3(0x12, 0), 0]);
    ring.commit(&gpu);
    // gfx_v11_0_ring_test_ring().
    ring.push(&[p3(0x79, 1), SCRATCH_REG0 - 0xC000, 0xDEAD_BEEF]);
    ring.commit(&gpu);
    assert_eq!(
        gpu.mec.cp().take_register_stores(),
        vec![(SCRATCH_REG0 * 4, 0xDEAD_BEEF)]
    );

    // gfx_v11_0_ring_test_ib(): the IB writes 0xDEADBEEF at wb[16].
    let dst = wb.addr() + 64;
    for (i, d) in [
        p3(0x37, 3),
        5 << 8 | 1 << 20,
        dst as u32,
        (dst >> 32) as u32,
        0xDEAD_BEEF,
    ]
    .iter()
    .enumerate()
    {
        ib.poke(i, *d);
    }
    // *cond_exe_cpu_addr = 1 (amdgpu_ring_init()).
    let cond = wb.addr() + 32;
    wb.poke(8, 1);
    let fence = wb.addr() + 128;
    let frame_start = ring.w;
    ring.push(&[p3(0x22, 3), cond as u32, (cond >> 32) as u32, 0, 0]);
    let patch = ring.w - 1;
    ring.push(&[p3(0x3C, 5), 1 << 8 | 1 << 6 | 3, HDP.0, HDP.1, 1, 1, 0x20]);
    ring.push(&[p3(0x3F, 2), ib.addr() as u32, (ib.addr() >> 32) as u32, 5]);
    // gfx_v11_0_patch_cond_exec(): the dwords after the COND_EXEC.
    page.poke(patch, (ring.w - patch - 1) as u32);
    ring.push(&[
        p3(0x49, 6),
        0x14 | 5 << 8,
        1 << 29 | 2 << 24,
        fence as u32,
        (fence >> 32) as u32,
        9,
        0,
        0,
    ]);
    ring.commit(&gpu);
    assert!(ring.w > frame_start);
    assert_eq!(wb.peek(16), 0xDEAD_BEEF, "the IB ran");
    assert_eq!(wb.peek(32), 9, "the fence was written");
    assert_eq!(*eops.lock().unwrap(), vec![(Some((0, 0, 0)), 0)]);
    // The read pointer is reported in dwords.
    assert_eq!(wb.peek(0) as usize, ring.w % 1024);
    assert_eq!(gpu.mec.cp().errors(), &[] as &[CpError]);
    assert!(gpu.mec.cp().pm4_stats(q).is_some_and(|s| !s.halted));
}

/// `COND_EXEC` whose condition is 0 discards the dwords it covers
/// ("discard following DWs if *cond_exec_gpu_addr==0").
#[test]
fn a_cond_exec_on_zero_discards_what_it_covers() {
    let gpu = gpu_with_gfx_pipes(false);
    let (page, wb) = (Page4k::leak(&gpu), Page4k::leak(&gpu));
    gpu.mec.map_gfx(0, 0, &mqd(page, wb)).unwrap();
    let mut ring = Ring { page, w: 0 };
    let cond = wb.addr() + 32;
    let dst = wb.addr() + 64;
    ring.push(&[p3(0x22, 3), cond as u32, (cond >> 32) as u32, 0, 5]);
    ring.push(&[p3(0x37, 3), 5 << 8, dst as u32, (dst >> 32) as u32, 0xBAD]);
    ring.push(&[
        p3(0x37, 3),
        5 << 8,
        dst as u32 + 4,
        (dst >> 32) as u32,
        0x600D,
    ]);
    ring.commit(&gpu);
    assert_eq!((wb.peek(16), wb.peek(17)), (0, 0x600D));
    assert_eq!(gpu.mec.cp().errors(), &[] as &[CpError]);
}

/// The graphics pipe must run: MES mapping a graphics queue while
/// `CP_ME_CNTL` still halts the PFP and ME is refused, named.
#[test]
fn a_graphics_queue_on_a_halted_pipe_is_refused() {
    let gpu = gpu_with_gfx_pipes(true);
    let (page, wb) = (Page4k::leak(&gpu), Page4k::leak(&gpu));
    assert_eq!(
        gpu.mec.map_gfx(0, 0, &mqd(page, wb)),
        Err(MecError::GfxPipeNotRunning { pipe: 0 })
    );
    assert!(gpu.mec.events().iter().any(|e| matches!(
        e,
        MecEvent::Refused {
            me: 0,
            why: MecError::GfxPipeNotRunning { .. },
            ..
        }
    )));
}

/// Graphics-state packets belong to the graphics ring: a compute ring
/// that carries one stops, named (the MEC has no graphics pipeline).
#[test]
fn a_graphics_packet_on_a_compute_ring_stops_it() {
    let gpu = gpu_with_gfx_pipes(false);
    let (page, wb) = (Page4k::leak(&gpu), Page4k::leak(&gpu));
    let q = gpu
        .mec
        .cp()
        .bind_pm4(barebell_model::cp::Pm4Binding {
            ring_base: page.addr(),
            ring_dwords: 1024,
            rptr_report: wb.addr(),
            wptr_poll: 0,
            wptr: 0,
            rptr: 0,
            space: barebell_model::gmc::AddressSpace::Vmid(0),
            pipe: 0,
            gfx: false,
        })
        .unwrap();
    page.poke(0, p3(0x12, 0));
    page.poke(1, 0);
    gpu.mec.cp().ring(q, 2);
    for _ in 0..4 {
        gpu.mec.step();
    }
    assert!(gpu.mec.cp().errors().iter().any(|e| matches!(
        e,
        CpError::Pm4 {
            why: Pm4Error::Unsupported { opcode: 0x12, .. },
            ..
        }
    )));
}
