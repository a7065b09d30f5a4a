//! GC 9.4.3 (MI300X / MI308X) v9 MQDs per XCC: built by the runtime
//! (`barebell::gfx::mqd_v9`, after `kfd_mqd_manager_v9.c`), loaded into a
//! register-recording bus (`barebell::gfx::hqd_v9`, after
//! `kgd_gfx_v9_4_3_hqd_load()`), and decoded by the model's own decoder
//! (`barebell_decode::mqd_v9`). Every expected value is written here
//! by hand from the Linux sources and headers, never taken from the code
//! under test.

use barebell::bus::{Block, RegisterBus};
use barebell::gfx::hqd_v9::{self, HqdSlot, HqdV9Error};
use barebell::gfx::mqd_v9::{
    CtxSaveArea, MecDoorbellRange, MqdQueue, MqdV9Error, XccDoorbell, init_mqd_v9_4_3,
    linux_mec_range,
};
use barebell::regs::IpBases;
use barebell::time::Clock;
use barebell_decode::mqd_v9::{self as model, HqdStateV9, MqdV9, MqdV9Fault, XccView};
use std::cell::{Cell, RefCell};

const MQD_AT: u64 = 0x8000_0000;

fn queue() -> MqdQueue {
    MqdQueue {
        ring_address: 0x1_0000_0000,
        // 64 KiB = 2^14 dwords: QUEUE_SIZE = 14 - 1 = 13.
        ring_bytes: 0x1_0000,
        read_index_address: 0x2000_0080,
        write_index_address: 0x2000_0038,
        eop_address: 0x3000_0000,
        // order_base_2(4096 / 8) = 9.
        eop_bytes: 4096,
        vmid: 0,
        ctx_save: None,
    }
}

/// `CP_HQD_PQ_CONTROL` `init_mqd()` + `update_mqd()` leave for an AQL queue
/// (gc_9_4_3_sh_mask.h positions): QUEUE_SIZE 13, RPTR_BLOCK_SIZE 5 << 8,
/// QUEUE_FULL_EN 1 << 14, WPP_CLAMP_EN 1 << 16, SLOT_BASED_WPTR 2 << 25,
/// NO_UPDATE_RPTR 1 << 27, UNORD_DISPATCH 1 << 28.
const PQ_CONTROL_WORKER: u32 = 13 | 5 << 8 | 1 << 14 | 1 << 16 | 2 << 25 | 1 << 27 | 1 << 28;
/// `init_mqd_v9_4_3()` clears NO_UPDATE_RPTR on the master XCC.
const PQ_CONTROL_MASTER: u32 = PQ_CONTROL_WORKER & !(1 << 27);

fn build(xccs: usize, start: u32, q: &MqdQueue) -> Vec<u8> {
    let mut buf = vec![0u8; 8 * 0x4000];
    let ranges = [linux_mec_range(0); 8];
    let layout = init_mqd_v9_4_3(
        MQD_AT,
        &mut buf,
        q,
        xccs,
        start,
        XccDoorbell::Shared { dword: 0x10 },
        &ranges,
    )
    .unwrap();
    assert_eq!(layout.xccs, xccs);
    buf
}

fn check_xccs(xccs: usize, start: u32, expected_ids: &[u32]) {
    let buf = build(xccs, start, &queue());
    // XCC 0's range (bytes 0..=0xF8, gfx_v9_4_3_xcc_kiq_init_register())
    // gates the shared doorbell: the model's convention.
    let ranges = vec![(0u32, 0xF8u32); xccs];
    let mqds = model::check_queue(&buf, MQD_AT, xccs, &ranges, true).unwrap();
    assert_eq!(mqds.len(), xccs);
    for (xcc, m) in mqds.iter().enumerate() {
        assert_eq!(m.header, 0xC031_0800);
        assert_eq!(m.pipelinestat_enable, 1);
        assert_eq!(m.se_masks, [0xFFFF_FFFF; 4]);
        // mqd_stride_v9() without CWSR: sizeof(struct v9_mqd).
        assert_eq!(m.mqd_stride_size, 2048);
        assert_eq!(m.hqd.mqd_address(), MQD_AT + 2048 * xcc as u64);
        assert_eq!(m.current_logic_xcc_id, expected_ids[xcc], "xcc {xcc}");
        assert_eq!(m.tg_chunk_size, 1);
        // Dwords 40 and 42 keep init_mqd()'s se5/se7 all-ones.
        assert_eq!(m.restart_cg_tg_id, 0xFFFF_FFFF);
        assert_eq!(m.restore_tg_chunk_size, 0xFFFF_FFFF);
        assert_eq!(m.pm4_target_xcc_in_xcp, 0);
        let pq = if xcc == 0 {
            PQ_CONTROL_MASTER
        } else {
            PQ_CONTROL_WORKER
        };
        assert_eq!(m.hqd.pq_control(), pq, "xcc {xcc}");
        assert_eq!(m.hqd.ring_address(), 0x1_0000_0000);
        assert_eq!(m.hqd.ring_bytes(), Ok(0x1_0000));
        assert_eq!(m.hqd.rptr_report_address(), 0x2000_0080);
        assert_eq!(m.hqd.wptr_poll_address(), 0x2000_0038);
        // One doorbell for every XCC (update_mqd() copies q->doorbell_off).
        assert_eq!(m.hqd.doorbell_dword(), 0x10);
        assert!(!m.hqd.doorbell_enabled());
        assert_eq!(m.hqd.eop_address(), 0x3000_0000);
        assert_eq!(m.hqd.eop_size_field(), 9);
        assert_eq!(m.hqd.eop_bytes(), Ok(4096));
        assert!(m.hqd.aql());
        assert!(!m.hqd.cwsr());
        assert!(!m.hqd.active());
        let d = |i: usize| m.hqd.0[i - 128];
        // 0x53 << 8 | PRELOAD_REQ; QUANTUM_EN | SCALE << 4 | 1 << 8;
        // MIN_IB_AVAIL_SIZE 3 << 20 | IB_EXE_DISABLE 1 << 23; PRIV_STATE
        // 1 << 8; hq_status0 bit 14; doorbell offset << 2 | BIF_DROP.
        assert_eq!(d(132), 0x5301);
        assert_eq!(d(135), 0x111);
        assert_eq!(d(149), 0x00B0_0000);
        assert_eq!(d(162), 0x100);
        assert_eq!(d(160), 0x4000);
        assert_eq!(d(143), 0x10 << 2 | 2);
    }
}

#[test]
fn one_xcc_mqd_decodes_to_kfd_values() {
    // (start + xcc) % 1 = 0.
    check_xccs(1, 5, &[0]);
}

#[test]
fn four_xcc_mqds_rotate_the_logical_xcc_id() {
    // current_logical_xcc_start 5: (5 + xcc) % 4.
    check_xccs(4, 5, &[1, 2, 3, 0]);
}

#[test]
fn eight_xcc_mqds_rotate_the_logical_xcc_id() {
    check_xccs(8, 5, &[5, 6, 7, 0, 1, 2, 3, 4]);
}

#[test]
fn cwsr_gives_each_xcc_its_slice_of_the_save_area_and_a_page_stride() {
    let mut q = queue();
    q.ctx_save = Some(CtxSaveArea {
        address: 0x4000_0000,
        bytes_per_xcc: 0x10_0000,
        ctl_stack_bytes: 0x2100,
    });
    let buf = build(4, 0, &q);
    // ALIGN(0x2100, PAGE) + ALIGN(2048, PAGE) = 0x4000.
    let mqds = model::check_queue(&buf, MQD_AT, 4, &[(0, 0xF8); 4], true).unwrap();
    for (xcc, m) in mqds.iter().enumerate() {
        assert_eq!(m.mqd_stride_size, 0x4000);
        assert_eq!(m.hqd.mqd_address(), MQD_AT + 0x4000 * xcc as u64);
        assert_eq!(
            m.hqd.ctx_save_address(),
            0x4000_0000 + 0x10_0000 * xcc as u64
        );
        assert_eq!(m.hqd.ctx_save_size(), 0x10_0000);
        assert!(m.hqd.cwsr());
        // cntl_stack_size = cntl_stack_offset = wg_state_offset = ctl_stack_size.
        assert_eq!(m.hqd.0[175 - 128], 0x2100);
        assert_eq!(m.hqd.0[174 - 128], 0x2100);
        assert_eq!(m.hqd.0[176 - 128], 0x2100);
    }
}

/// Sets dword `i` of a byte image.
fn put(b: &mut [u8], i: usize, v: u32) {
    b[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn hand_assembled_mqd_decodes() {
    // Offsets from v9_structs.h, values as init_mqd_v9_4_3() writes for
    // XCC 1 of 2 with logical start 0.
    let mut b = vec![0u8; 2048];
    put(&mut b, 0, 0xC031_0800); // header
    put(&mut b, 39, 1); // compute_current_logic_xcc_id
    put(&mut b, 41, 1); // compute_tg_chunk_size
    put(&mut b, 128, 0x9000_0800); // cp_mqd_base_addr_lo
    put(&mut b, 136, 0x0012_3400); // cp_hqd_pq_base_lo (ring 0x12_3400_00)
    put(&mut b, 143, 0x20 << 2 | 2); // doorbell dword 0x20, BIF_DROP
    put(&mut b, 145, PQ_CONTROL_WORKER);
    put(&mut b, 167, 9); // cp_hqd_eop_control
    put(&mut b, 181, 1); // cp_hqd_aql_control
    put(&mut b, 226, 2048); // cp_mqd_stride_size
    let m = MqdV9::decode(&b).unwrap();
    assert_eq!(m.current_logic_xcc_id, 1);
    assert_eq!(m.tg_chunk_size, 1);
    assert_eq!(m.mqd_stride_size, 2048);
    assert_eq!(m.hqd.mqd_address(), 0x9000_0800);
    assert_eq!(m.hqd.ring_address(), 0x1234_0000);
    assert_eq!(m.hqd.doorbell_dword(), 0x20);
    let view = XccView {
        xcc: 1,
        xccs: 2,
        mqd_address: 0x9000_0800,
        doorbell_range: (0, 0xF8),
        xcc_fields: true,
    };
    assert_eq!(m.check(&view), Ok(()));
    // The same MQD as XCC 0 must update the read pointer.
    let master = XccView { xcc: 0, ..view };
    assert_eq!(
        m.check(&master),
        Err(MqdV9Fault::NoUpdateRptr {
            xcc: 0,
            found: true
        })
    );
    // Doorbell dword 0x20 is byte 0x80: outside XCC 1's Linux range
    // 0x100..=0x1F8.
    let xcc1_range = XccView {
        doorbell_range: (0x100, 0x1F8),
        ..view
    };
    let e = m.check(&xcc1_range).unwrap_err();
    assert_eq!(
        e,
        MqdV9Fault::DoorbellOutsideRange {
            xcc: 1,
            dword: 0x20,
            lower_bytes: 0x100,
            upper_bytes: 0x1F8
        }
    );
    assert_eq!(
        e.to_string(),
        "XCC 1: doorbell dword 0x20 is outside the MEC doorbell range 0x100..=0x1f8"
    );
    // Logical XCC id 2 of a 2-XCC queue; EOP size 0xB past KFD's clamp.
    put(&mut b, 39, 2);
    assert_eq!(
        MqdV9::decode(&b).unwrap().check(&view),
        Err(MqdV9Fault::LogicXccId {
            xcc: 1,
            found: 2,
            xccs: 2
        })
    );
    put(&mut b, 39, 1);
    put(&mut b, 167, 0xB);
    assert_eq!(
        MqdV9::decode(&b).unwrap().check(&view),
        Err(MqdV9Fault::EopSize { xcc: 1, field: 0xB })
    );
    assert_eq!(
        MqdV9::decode(&b[..100]),
        Err(MqdV9Fault::Short { len: 100 })
    );
}

#[test]
fn model_refuses_mqds_that_diverge_across_xccs() {
    let mut buf = build(4, 0, &queue());
    // XCC 2's ring base moved (dword 136 of the MQD at 2 * 2048).
    put(&mut buf[2 * 2048..], 136, 0x0200_0000);
    assert_eq!(
        model::check_queue(&buf, MQD_AT, 4, &[(0, 0xF8); 4], true),
        Err(MqdV9Fault::Diverges {
            xcc: 2,
            what: "ring"
        })
    );
    let mut buf = build(4, 0, &queue());
    put(&mut buf[3 * 2048..], 39, 1);
    assert_eq!(
        model::check_queue(&buf, MQD_AT, 4, &[(0, 0xF8); 4], true),
        Err(MqdV9Fault::LogicXccOrder {
            xcc: 3,
            found: 1,
            expected: 3
        })
    );
    assert_eq!(
        model::check_queue(&buf, MQD_AT, 9, &[(0, 0xF8); 9], true),
        Err(MqdV9Fault::XccCount { xccs: 9 })
    );
}

#[test]
fn runtime_refusals_reach_the_caller_typed() {
    let mut buf = vec![0u8; 4 * 2048];
    let ranges = [linux_mec_range(0); 4];
    let e = init_mqd_v9_4_3(
        MQD_AT,
        &mut buf,
        &queue(),
        4,
        0,
        XccDoorbell::Shared { dword: 0x40 },
        &ranges,
    )
    .unwrap_err();
    assert_eq!(
        e,
        MqdV9Error::DoorbellOutsideRange {
            xcc: 0,
            dword: 0x40,
            range: MecDoorbellRange {
                lower_bytes: 0,
                upper_bytes: 0xF8
            }
        }
    );
    assert_eq!(
        e.to_string(),
        "doorbell dword 0x40 (byte 0x100) is outside XCC 0's MEC doorbell range 0x0..=0xf8"
    );
    let mut q = queue();
    q.ring_bytes = 128;
    let e = init_mqd_v9_4_3(
        MQD_AT,
        &mut buf,
        &q,
        4,
        0,
        XccDoorbell::Shared { dword: 0x10 },
        &ranges,
    )
    .unwrap_err();
    assert_eq!(e, MqdV9Error::RingSize { bytes: 128 });
    assert!(e.to_string().contains("at least 256 bytes"));
}

/// A register file that records every write (byte offset, value) and
/// reads back what was written, with `CP_HQD_ACTIVE` optionally stuck.
struct Recorder {
    writes: RefCell<Vec<(usize, u32)>>,
    regs: RefCell<std::collections::HashMap<usize, u32>>,
    stuck_active: Option<usize>,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            writes: RefCell::new(Vec::new()),
            regs: RefCell::new(Default::default()),
            stuck_active: None,
        }
    }
}

impl RegisterBus for Recorder {
    fn read32(&self, at: usize) -> u32 {
        if Some(at) == self.stuck_active {
            return 1;
        }
        self.regs.borrow().get(&at).copied().unwrap_or(0)
    }
    fn write32(&self, at: usize, v: u32) {
        self.writes.borrow_mut().push((at, v));
        self.regs.borrow_mut().insert(at, v);
    }
}

/// Model values for two XCCs' GC segment-0 bases (no public MI300X
/// discovery table is installable here).
const XCC_BASE: [u32; 2] = [0x2000, 0x1_2000];

fn bases(xcc: usize) -> IpBases {
    IpBases::new(&[XCC_BASE[xcc], 0xA000 + XCC_BASE[xcc], 0, 0, 0, 0, 0, 0])
}

/// `xccs` MQDs 2048 bytes apart at [`MQD_AT`], loaded into MEC 1 pipe 1
/// queue 2.
fn layout_and_slot(xccs: usize) -> (barebell::gfx::mqd_v9::XccMqds, HqdSlot) {
    let layout = barebell::gfx::mqd_v9::XccMqds {
        address: MQD_AT,
        stride: 2048,
        xccs,
    };
    (
        layout,
        HqdSlot {
            pipe_id: 1,
            queue_id: 2,
        },
    )
}

#[test]
fn direct_load_writes_each_xcc_in_linux_order() {
    let buf = build(2, 0, &queue());
    let bus = Recorder::new();
    let xccs = [Block::new(&bus, bases(0)), Block::new(&bus, bases(1))];
    let (layout, slot) = layout_and_slot(2);
    let wptr = 0x2000_0038u64;
    hqd_v9::load_mqd_v9_4_3(&xccs, &buf, &layout, slot, Some(wptr)).unwrap();

    // kgd_gfx_v9_4_3_hqd_load(), offsets from gc_9_4_3_offset.h.
    let mut expected = Vec::new();
    for (xcc, base) in XCC_BASE.iter().enumerate() {
        let at = |reg: u32| ((base + reg) * 4) as usize;
        let mqd = &buf[xcc * 2048..];
        let dword = |i: usize| u32::from_le_bytes(mqd[i * 4..i * 4 + 4].try_into().unwrap());
        // GRBM_GFX_CNTL: MEID 1 << 2, PIPEID 1, QUEUEID 2 << 8.
        expected.push((at(0x22), 1 | 1 << 2 | 2 << 8));
        for reg in 0x1245..=0x127f_u32 {
            expected.push((at(reg), dword(128 + (reg - 0x1245) as usize)));
        }
        // CP_HQD_PQ_DOORBELL_CONTROL with DOORBELL_EN (bit 30).
        expected.push((at(0x1254), (0x10 << 2 | 2) | 1 << 30));
        // Guessed wptr from rptr = wptr = 0: 0.
        expected.push((at(0x127b), 0));
        expected.push((at(0x127c), 0));
        expected.push((at(0x1252), 0x2000_0038));
        expected.push((at(0x1253), 0));
        // CP_PQ_WPTR_POLL_CNTL1: bit pipe_id * 8 + queue_id = 10.
        expected.push((at(0x1084), 1 << 10));
        // CP_HQD_EOP_RPTR with INIT_FETCHER (bit 31), then ACTIVE.
        expected.push((at(0x126d), 1 << 31));
        expected.push((at(0x1247), 1));
        expected.push((at(0x22), 0));
    }
    assert_eq!(*bus.writes.borrow(), expected);

    // The model's HQD state, fed the writes of XCC 1 after Linux's range
    // for XCC 0 (the shared doorbell's gate), activates.
    let mut state = HqdStateV9::default();
    assert!(state.write(0x105c, 0));
    assert!(state.write(0x105d, 0xF8));
    for (at, v) in bus.writes.borrow().iter() {
        let dw = (*at / 4) as u32;
        if dw >= XCC_BASE[1] && dw < XCC_BASE[1] + 0xA000 {
            state.write(dw - XCC_BASE[1], *v);
        }
    }
    assert_eq!(model::grbm_select(state.grbm_gfx_cntl), (0, 0, 0, 0));
    assert!(state.window.active());
    assert!(state.window.doorbell_enabled());
    assert_eq!(state.window.mqd_address(), MQD_AT + 2048);
    assert_eq!(state.check_activation(1, 2), Ok(()));
    // XCC 1's own Linux range does not hold doorbell byte 0x40.
    state.write(0x105c, 0x100);
    state.write(0x105d, 0x1F8);
    assert!(matches!(
        state.check_activation(1, 2),
        Err(MqdV9Fault::DoorbellOutsideRange { dword: 0x10, .. })
    ));

    // A second load on the now-active slot is refused before any window
    // write (barebell's check, not Linux's).
    let before = bus.writes.borrow().len();
    assert_eq!(
        hqd_v9::load_mqd_v9_4_3(&xccs, &buf, &layout, slot, Some(wptr)),
        Err(HqdV9Error::Busy { xcc: 0, slot })
    );
    // Only the select and the release were written.
    assert_eq!(bus.writes.borrow().len(), before + 2);
}

#[test]
fn mec2_pipes_select_me2_and_arm_no_poll_bit() {
    let buf = build(1, 0, &queue());
    let bus = Recorder::new();
    let gc = Block::new(&bus, bases(0));
    let m = hqd_v9::xcc_mqd(
        &buf,
        &barebell::gfx::mqd_v9::XccMqds {
            address: MQD_AT,
            stride: 2048,
            xccs: 1,
        },
        0,
    )
    .unwrap();
    let slot = HqdSlot {
        pipe_id: 4,
        queue_id: 0,
    };
    hqd_v9::hqd_load(gc, 0, slot, &m, Some(0x2000_0038)).unwrap();
    let w = bus.writes.borrow();
    // pipe_id 4: MEID 4 / 4 + 1 = 2, PIPEID 0.
    assert_eq!(w[0], (((0x2000 + 0x22) * 4) as usize, 2 << 2));
    // (uint32_t)(1ull << 32) = 0.
    assert!(w.contains(&(((0x2000 + 0x1084) * 4) as usize, 0)));
    assert_eq!(
        HqdSlot {
            pipe_id: 8,
            queue_id: 0
        }
        .select(),
        Err(HqdV9Error::Slot {
            pipe_id: 8,
            queue_id: 0
        })
    );
}

/// Moves 1 ms per read.
struct Ticking(Cell<u64>);
impl Clock for Ticking {
    fn now_ns(&self) -> u64 {
        self.0.set(self.0.get() + 1_000_000);
        self.0.get()
    }
}

#[test]
fn dequeue_is_bounded_and_follows_hqd_destroy() {
    let buf = build(1, 0, &queue());
    let layout = barebell::gfx::mqd_v9::XccMqds {
        address: MQD_AT,
        stride: 2048,
        xccs: 1,
    };
    let slot = HqdSlot {
        pipe_id: 0,
        queue_id: 3,
    };
    let at = |reg: u32| ((0x2000 + reg) * 4) as usize;
    // A queue that drains: RLC_CP_SCHEDULERS (segment 1, 0xA000 + 0x2000
    // + 0x4caa) scheduler1 cleared for VMID 0, DRAIN_PIPE, release.
    let bus = Recorder::new();
    let rlc = ((0xA000 + 0x2000 + 0x4caa) * 4) as usize;
    bus.regs.borrow_mut().insert(rlc, 0x1234_5678);
    let gc = [Block::new(&bus, bases(0))];
    let clock = Ticking(Cell::new(0));
    hqd_v9::destroy_mqd_v9_4_3(&gc, &clock, &buf, &layout, slot, 50_000_000).unwrap();
    assert_eq!(
        *bus.writes.borrow(),
        vec![
            (at(0x22), 1 << 2 | 3 << 8),
            (rlc, 0x1234_0078),
            (at(0x125d), 1),
            (at(0x22), 0),
        ]
    );
    // A queue that never goes inactive: a typed timeout, slot released.
    let mut stuck = Recorder::new();
    stuck.stuck_active = Some(at(0x1247));
    let gc = [Block::new(&stuck, bases(0))];
    let e = hqd_v9::destroy_mqd_v9_4_3(&gc, &clock, &buf, &layout, slot, 50_000_000).unwrap_err();
    assert!(matches!(e, HqdV9Error::Dequeue { xcc: 0, .. }), "{e}");
    assert_eq!(stuck.writes.borrow().last(), Some(&(at(0x22), 0)));
}

#[test]
fn sdma_mqd_v9_decodes_to_update_mqd_sdma_values() {
    use barebell::sdma::mqd_v9::{SdmaMqdQueue, SdmaMqdV9Error, V9SdmaMqd};
    use barebell_decode::sdma_mqd_v9::{SdmaMqdV9, SdmaMqdV9Fault};
    use zerocopy::IntoBytes;
    let q = SdmaMqdQueue {
        ring_address: 0x12_3456_7800,
        // 4 KiB = 2^10 dwords: RB_SIZE = order_base_2(1024) = 10.
        ring_bytes: 4096,
        rptr_address: 0x5000_1008,
        doorbell_dword: 0x200,
        vmid: 3,
        engine: 1,
        queue: 2,
    };
    let m = V9SdmaMqd::build(&q).unwrap();
    let b = m.as_bytes();
    // RB_CNTL: RB_SIZE 10 << 1, RPTR_WRITEBACK_ENABLE 1 << 12, TIMER
    // 6 << 16, RB_VMID 3 << 24 (sdma0_4_0_sh_mask.h).
    assert_eq!(
        &b[0..4],
        &(10u32 << 1 | 1 << 12 | 6 << 16 | 3 << 24).to_le_bytes()
    );
    let d = SdmaMqdV9::decode(b).unwrap();
    assert_eq!(
        d,
        SdmaMqdV9 {
            ring_address: 0x12_3456_7800,
            ring_bytes: 4096,
            vmid: 3,
            rptr_writeback: true,
            rptr_writeback_timer: 6,
            rptr_address: 0x5000_1008,
            doorbell_dword: 0x200,
            // update_mqd_sdma() (v9) sets no write-pointer poll address.
            wptr_poll_address: 0,
            // SDMA_RLC_DUMMY_DEFAULT.
            dummy_reg: 0xf,
            engine: 1,
            queue: 2,
        }
    );
    assert_eq!(
        V9SdmaMqd::build(&SdmaMqdQueue {
            ring_bytes: 100,
            ..q
        })
        .err(),
        Some(SdmaMqdV9Error::RingSize { bytes: 100 })
    );
    assert_eq!(
        SdmaMqdV9::decode(&[0u8; 512]),
        Err(SdmaMqdV9Fault::RingSize { field: 0 })
    );
}

/// A queue loaded back after a preemption: its saved write pointer has
/// wrapped the ring (below the read pointer within it). The write pointer
/// the load guesses is `kgd_gfx_v9_4_3_hqd_load()`'s, worked out by hand:
/// ring 2 << 13 = 0x4000 dwords (QUEUE_SIZE 13), rptr 0x3000, saved wptr
/// 0x1_0001_4010, so 0x3000 + 0x4000 (the wrap) + 0x14000 (the saved
/// wptr's whole rings) + 1 << 32 (its high half) = 0x1_0001_b000.
#[test]
fn a_wrapped_saved_wptr_is_guessed_as_linux_guesses_it() {
    let mut buf = build(1, 0, &queue());
    // Dword indices in struct v9_mqd: the HQD window starts at dword 128
    // with CP_MQD_BASE_ADDR (0x1245); CP_HQD_PQ_RPTR is 0x124f,
    // CP_HQD_PQ_WPTR_LO/HI 0x127b/0x127c (gc_9_4_3_offset.h).
    let mut put = |reg: u32, v: u32| {
        let i = (128 + reg - 0x1245) as usize * 4;
        buf[i..i + 4].copy_from_slice(&v.to_le_bytes());
    };
    put(0x124f, 0x3000);
    put(0x127b, 0x0001_4010);
    put(0x127c, 1);
    let bus = Recorder::new();
    let xccs = [Block::new(&bus, bases(0))];
    let (layout, slot) = layout_and_slot(1);
    hqd_v9::load_mqd_v9_4_3(&xccs, &buf, &layout, slot, Some(0x2000_0038)).unwrap();
    let at = |reg: u32| ((XCC_BASE[0] + reg) * 4) as usize;
    let last = |reg: u32| {
        bus.writes
            .borrow()
            .iter()
            .rev()
            .find(|w| w.0 == at(reg))
            .map(|w| w.1)
    };
    assert_eq!(last(0x127b), Some(0x0001_b000));
    assert_eq!(last(0x127c), Some(1));
}
