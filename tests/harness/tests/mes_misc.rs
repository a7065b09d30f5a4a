//! MES MISC register operations as amdgpu sends them on gfx11
//! (`mes_v11_0_misc_op()`): the TLB flush `gmc_v11_0_flush_gpu_tlb()` puts
//! through MES (`amdgpu_mes_reg_write_reg_wait()`: `WAIT_REG_MEM` with
//! `WRM_OPERATION__WR_WAIT_WR_REG`), a plain register wait and a register
//! read (`amdgpu_mes_rreg()`: `READ_REG` into a buffer). Found by the Linux
//! peer: "MES failed to respond to msg=MISC (WAIT_REG_MEM)".
//!
//! Frames are written here from `mes_v11_api_def.h` (`union MESAPI__MISC`,
//! packed to 4 bytes: opcode at byte 4, `api_status` at 8, the operation's
//! arguments from 24), not taken from the code under test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell::ip::Generation;
use barebell_model::Seed;
use barebell_model::kiq::RegisterStores;
use barebell_model::mes::{MesEvent, MesModel, Refusal};
use barebell_model_host::mec::ModelGpu;
use barebell_tests::Page4k;
use std::sync::atomic::{AtomicU64, Ordering};

/// `MES_API_HEADER`: type 4 bits (`MES_API_TYPE_SCHEDULER` 1), opcode 8
/// (`MES_SCH_API_MISC` 14), dwsize 8 (`API_FRAME_SIZE_IN_DWORDS` 64).
const MISC_HEADER: u32 = 1 | 14 << 4 | 64 << 12;

struct Rig {
    model: MesModel,
    ring: &'static Page4k,
    bell: &'static AtomicU64,
    fence: &'static Page4k,
    stores: RegisterStores,
    frames: usize,
}

impl Rig {
    fn new() -> Self {
        let gpu = ModelGpu::new(Generation::Gfx11, Seed(21)).unwrap();
        let ring = Page4k::leak(&gpu);
        let fence = Page4k::leak(&gpu);
        let bell: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
        // SAFETY: leaked, 8-aligned, accessed atomically.
        unsafe { gpu.map(bell as *const AtomicU64 as u64, 8) };
        let stores = RegisterStores::default();
        let model = MesModel::new(
            gpu.mec_arc.clone(),
            ring.addr(),
            1024,
            bell as *const _ as u64,
        )
        .with_register_stores(stores.clone());
        Rig {
            model,
            ring,
            bell,
            fence,
            stores,
            frames: 0,
        }
    }

    /// A MISC frame with `sub` and its argument dwords from byte 24; its
    /// fence (value `n + 1`) in dword `2 n` of the fence page.
    fn submit(&mut self, sub: u32, args: &[u32]) {
        let base = self.frames * 64;
        for i in 0..64 {
            self.ring.poke(base + i, 0);
        }
        self.ring.poke(base, MISC_HEADER);
        self.ring.poke(base + 1, sub);
        let f = self.fence.addr() + 8 * self.frames as u64;
        self.ring.poke(base + 2, f as u32);
        self.ring.poke(base + 3, (f >> 32) as u32);
        self.ring.poke(base + 4, self.frames as u32 + 1);
        for (i, a) in args.iter().enumerate() {
            self.ring.poke(base + 6 + i, *a);
        }
        self.frames += 1;
        self.bell.store(self.frames as u64 * 64, Ordering::Release);
    }

    fn fence(&self, n: usize) -> u32 {
        self.fence.peek(2 * n)
    }
}

#[test]
fn a_tlb_flush_writes_the_request_and_waits_for_the_ack() {
    let mut r = Rig::new();
    let (req, ack, inv, bit) = (0x1a2bu32, 0x1a3cu32, 0x00f8_0001u32, 1u32 << 5);
    // WAIT_REG_MEM, WR_WAIT_WR_REG: op, reference, mask, reg1, reg2.
    r.submit(4, &[1, inv, bit, req, ack]);
    assert_eq!(r.model.service(), 0, "waits for the acknowledge");
    assert_eq!(*r.stores.lock(), vec![(req * 4, inv)]);
    assert_eq!(r.model.register_waits(), vec![ack * 4]);
    r.model.register_values(&[(ack * 4, 1)]);
    assert_eq!(r.model.service(), 0, "the VMID's bit is not set yet");
    assert_eq!(r.fence(0), 0);
    r.model.register_values(&[(ack * 4, bit | 1)]);
    assert_eq!(r.model.service(), 1);
    assert_eq!(r.fence(0), 1, "the fence is written once the wait is met");
    assert_eq!(r.stores.lock().len(), 1, "the request was written once");
    assert!(r.model.register_waits().is_empty());
}

#[test]
fn a_register_wait_and_a_register_read() {
    let mut r = Rig::new();
    // WAIT_REG_MEM, plain wait: (reg1 & 0xff) == 0x42.
    r.submit(4, &[0, 0x42, 0xff, 0x2000, 0]);
    r.model.register_values(&[]);
    assert_eq!(r.model.service(), 0);
    r.model.register_values(&[(0x2000 * 4, 0x1142)]);
    assert_eq!(r.model.service(), 1);
    // READ_REG: reg_offset, then the buffer (u64) at byte 28.
    let buf = r.fence.addr() + 0x800;
    r.submit(3, &[0x3000, buf as u32, (buf >> 32) as u32]);
    assert_eq!(r.model.service(), 0);
    assert_eq!(r.model.register_waits(), vec![0x3000 * 4]);
    r.model.register_values(&[(0x3000 * 4, 0xabcd)]);
    assert_eq!(r.model.service(), 1);
    assert_eq!(r.fence.peek(0x200), 0xabcd);
    assert_eq!(r.fence(1), 2);
    // WRITE_REG: at once.
    r.submit(0, &[0x4000, 7]);
    assert_eq!(r.model.service(), 1);
    assert_eq!(r.stores.lock().last(), Some(&(0x4000 * 4, 7)));
}

#[test]
fn a_misc_operation_the_model_does_not_run_is_refused() {
    let mut r = Rig::new();
    // MESAPI_MISC__CHANGE_CONFIG (8).
    r.submit(8, &[]);
    assert_eq!(r.model.service(), 1);
    assert!(r.model.log().iter().any(|e| matches!(
        e,
        MesEvent::Refused {
            opcode: 14,
            why: Refusal::Misc { value: 8, .. }
        }
    )));
    assert_eq!(r.fence(0), 0, "v11 leaves a refused frame's fence");
}
