//! PM4 indirect buffers behind AQL vendor packets (the format ROCR's
//! `AqlQueue::ExecutePM4()` builds and tinygrad's
//! `AMDComputeAQLQueue._pm4_pkt` sends for its waits and signals): the CP
//! model runs the IB's packets in the queue's address space, keeps its
//! place across a wait, honours `PRED_EXEC` as XCC 0, and refuses a
//! malformed jump.
//!
//! The PM4 dwords are written here by hand from `nvd.h`
//! (`PACKET3(op, n)`, `PACKET3_RELEASE_MEM_*`, `WAIT_REG_MEM_*`), never
//! from the model's decoders.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use barebell::aql::packet::{Fences, Pm4IbPacket};
use barebell::aql::queue::QueueConfig;
use barebell::aql::signal::SignalMemory;
use barebell_model::cp::{CpError, CpModel};
use barebell_model::{Seed, TickingClock};
use barebell_model_host::queue::ModelQueue;
use barebell_tests::{rig, signals};
use std::sync::atomic::{AtomicU32, Ordering};

const BOUND_NS: u64 = 1_000_000;
const MAX_STEPS: u64 = 10_000;

/// `PACKET3(op, n)` (`nvd.h`): type 3, `n` = body dwords - 1.
const fn packet3(op: u32, n: u32) -> u32 {
    3 << 30 | (n & 0x3fff) << 16 | (op & 0xff) << 8
}
const RELEASE_MEM: u32 = 0x49;
const WAIT_REG_MEM: u32 = 0x3C;
const PRED_EXEC: u32 = 0x23;

/// RELEASE_MEM at end of pipe (`CACHE_FLUSH_AND_INV_TS_EVENT` 0x14,
/// index 5) writing the low 32 bits of `value` (`DATA_SEL` 1 at bit 29)
/// to memory (`DST_SEL` 0), no interrupt.
fn release_32(addr: u64, value: u32) -> [u32; 8] {
    [
        packet3(RELEASE_MEM, 6),
        0x14 | 5 << 8,
        1 << 29,
        addr as u32,
        (addr >> 32) as u32,
        value,
        0,
        0,
    ]
}

/// WAIT_REG_MEM on memory (`MEM_SPACE` 1 at bit 4), function 3 (==).
fn wait_eq(addr: u64, value: u32) -> [u32; 7] {
    [
        packet3(WAIT_REG_MEM, 5),
        3 | 1 << 4,
        addr as u32,
        (addr >> 32) as u32,
        value,
        0xffff_ffff,
        4,
    ]
}

#[repr(C, align(4096))]
struct Page([u32; 1024]);

/// A leaked page the model maps, holding `dwords` from dword 0; returns
/// its address.
fn page(m: &mut CpModel, dwords: &[u32]) -> u64 {
    let p: &'static mut Page = Box::leak(Box::new(Page([0; 1024])));
    p.0[..dwords.len()].copy_from_slice(dwords);
    let addr = p.0.as_ptr() as u64;
    // SAFETY: leaked, so it outlives the model; the model accesses it per
    // the device protocol (atomics).
    unsafe { m.dma_mut().map(addr, 4096) };
    addr
}

fn word(addr: u64) -> &'static AtomicU32 {
    // SAFETY: a dword of a leaked, mapped page.
    unsafe { AtomicU32::from_ptr(addr as *mut u32) }
}

/// Places `ib` in a mapped page and submits a PM4-IB vendor packet for it
/// (bent by `bend`) on a fresh queue, its completion signal at 1.
fn submit_ib(
    m: &mut CpModel,
    ib: &[u32],
    bend: impl Fn(&mut Pm4IbPacket),
) -> (ModelQueue<8>, &'static [SignalMemory]) {
    let ib_addr = page(m, ib);
    let r = rig::<8>(m, QueueConfig::default());
    let s = signals(m, 1, 1);
    let mut p = Pm4IbPacket::new(ib_addr, ib.len() as u32, s[0].handle(), Fences::SYSTEM).unwrap();
    bend(&mut p);
    r.queue
        .submit(&p, &TickingClock::new(1_000), BOUND_NS)
        .unwrap();
    (r, s)
}

#[test]
fn an_ib_runs_once_across_a_wait_and_then_completes_the_packet() {
    let mut m = CpModel::new(Seed(31));
    let words = page(&mut m, &[0; 4]);
    let (out, gate) = (words, words + 4);
    let mut ib = Vec::new();
    ib.extend(release_32(out, 0x5a));
    ib.extend(wait_eq(gate, 7));
    ib.extend(release_32(out + 8, 0x77));
    let (r, s) = submit_ib(&mut m, &ib, |_| {});
    let _ = m.run_until_idle(MAX_STEPS);
    // The first RELEASE_MEM ran, the wait holds the packet.
    assert_eq!(word(out).load(Ordering::Acquire), 0x5a);
    assert_eq!(word(out + 8).load(Ordering::Acquire), 0);
    assert_eq!(s[0].value(), 1);
    assert_eq!(r.queue.read_index(), 0);
    // Cleared by the host: a re-run of the IB from its start would write
    // it again.
    word(out).store(0, Ordering::Release);
    word(gate).store(7, Ordering::Release);
    m.run_until_idle(MAX_STEPS).unwrap();
    assert!(m.errors().is_empty(), "{:?}", m.errors());
    assert_eq!(
        word(out).load(Ordering::Acquire),
        0,
        "the IB ran again from its start"
    );
    assert_eq!(word(out + 8).load(Ordering::Acquire), 0x77);
    assert_eq!(s[0].value(), 0);
    assert_eq!(r.queue.read_index(), 1);
}

#[test]
fn pred_exec_runs_what_it_covers_only_for_xcc_0() {
    let mut m = CpModel::new(Seed(32));
    let out = page(&mut m, &[0; 4]);
    let mut ib = Vec::new();
    // XCC 1 only: skipped.
    ib.extend([packet3(PRED_EXEC, 0), 0b10 << 24 | 8]);
    ib.extend(release_32(out, 0x11));
    // XCCs 0 and 2: run.
    ib.extend([packet3(PRED_EXEC, 0), 0b101 << 24 | 8]);
    ib.extend(release_32(out + 4, 0x22));
    let (_r, s) = submit_ib(&mut m, &ib, |_| {});
    m.run_until_idle(MAX_STEPS).unwrap();
    assert!(m.errors().is_empty(), "{:?}", m.errors());
    assert_eq!(word(out).load(Ordering::Acquire), 0);
    assert_eq!(word(out + 4).load(Ordering::Acquire), 0x22);
    assert_eq!(s[0].value(), 0);
}

/// Each malformed jump stops the queue with a named PM4 error; the
/// signal stays.
#[test]
fn a_malformed_jump_is_refused() {
    type Bend = fn(&mut Pm4IbPacket);
    let cases: [(&str, Bend); 4] = [
        ("dw_cnt_remain not 10", |p| p.dw_cnt_remain = 9),
        ("INDIRECT_BUFFER_VALID clear", |p| {
            p.ib_jump_cmd[3] &= !(1 << 23)
        }),
        ("not INDIRECT_BUFFER", |p| {
            p.ib_jump_cmd[0] = packet3(0x10, 2)
        }),
        ("past the IB's end", |p| p.ib_jump_cmd[3] = 1 << 23 | 5),
    ];
    for (what, bend) in cases {
        let mut m = CpModel::new(Seed(33));
        let out = page(&mut m, &[0; 4]);
        let ib = release_32(out, 1);
        let (_r, s) = submit_ib(&mut m, &ib, bend);
        let _ = m.run_until_idle(MAX_STEPS);
        let errors = m.errors();
        assert!(
            matches!(errors, [CpError::Pm4 { .. }]),
            "{what}: {errors:?}"
        );
        let text = errors[0].to_string();
        let key = what.split(' ').next_back().unwrap();
        assert!(text.contains(key), "{what}: {text}");
        assert_eq!(s[0].value(), 1, "{what}");
    }
}
