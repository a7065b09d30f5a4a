//! The producer half of the AQL publish protocol, checked without loom:
//! a slot's header is stored last (HSA Platform System Architecture spec,
//! packet processor: a packet is the CP's once its header type leaves
//! INVALID; ROCR's `AqlQueue` writes the body, then the header with a
//! release store, then the doorbell).
//!
//! What this can see: the order of `QueueMem` calls the submit algorithm
//! makes, and that `AqlQueue`'s own `write_body` leaves the header word
//! alone (a body copy that also wrote the header would publish it before
//! or torn with the body). What it cannot see: whether `publish` is a
//! release store; on x86-64 a relaxed and a release store are the same
//! instruction, so only the loom models (`tests/loom.rs`) check that.

// Helpers outside #[test] functions unwrap and panic as tests do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use barebell::aql::doorbell::Doorbell;
use barebell::aql::packet::KernelDispatchPacket;
use barebell::aql::queue::{
    AqlQueue, QueueConfig, QueueMem, QueueMemory, submit_batch_with, submit_with,
};
use barebell::time::Clock;
use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use zerocopy::FromBytes;

/// `HSA_PACKET_TYPE_INVALID` in the header's type field (bits 0..8).
const INVALID: u32 = 1;

struct Stalled;
impl Clock for Stalled {
    fn now_ns(&self) -> u64 {
        0
    }
}

fn packet(tag: u8) -> KernelDispatchPacket {
    let mut b = [tag; 64];
    b[0] = 2; // HSA_PACKET_TYPE_KERNEL_DISPATCH
    b[1] = 0;
    b[2] = 0;
    b[3] = 0;
    KernelDispatchPacket::read_from_bytes(&b).unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Body(u64),
    Header(u64),
    Ring(u64),
}

/// Queue memory that records each store the algorithm makes.
struct Recorder {
    write: AtomicU64,
    ops: RefCell<Vec<Op>>,
}

impl QueueMem for Recorder {
    fn slots(&self) -> u64 {
        16
    }
    fn reserve(&self, n: u64) -> u64 {
        self.write.fetch_add(n, Ordering::Relaxed)
    }
    fn read_index(&self) -> u64 {
        // The CP consumed nothing; the test stays within the 16 slots.
        0
    }
    fn write_body(&self, id: u64, _packet: &[u8; 64]) {
        self.ops.borrow_mut().push(Op::Body(id));
    }
    fn publish(&self, id: u64, _header_word: u32) {
        self.ops.borrow_mut().push(Op::Header(id));
    }
    fn ring(&self, last_id: u64) {
        self.ops.borrow_mut().push(Op::Ring(last_id));
    }
}

/// The rule, over a record: every slot's body precedes its header, every
/// header precedes the doorbell that covers it.
fn check_order(ops: &[Op]) -> Result<(), String> {
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Header(id) if !ops[..i].contains(&Op::Body(id)) => {
                return Err(format!("slot {id}: header stored before its body: {ops:?}"));
            }
            Op::Ring(last) => {
                for id in 0..=last {
                    if ops[i..].contains(&Op::Header(id)) {
                        return Err(format!("slot {id}: doorbell before its header: {ops:?}"));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[test]
fn the_check_refuses_a_header_first_record() {
    // Control: the rule itself, on hand-written records.
    assert!(check_order(&[Op::Body(0), Op::Header(0), Op::Ring(0)]).is_ok());
    assert!(check_order(&[Op::Header(0), Op::Body(0), Op::Ring(0)]).is_err());
    assert!(check_order(&[Op::Body(0), Op::Ring(0), Op::Header(0)]).is_err());
}

#[test]
fn submit_stores_the_body_then_the_header_then_rings() {
    let r = Recorder {
        write: AtomicU64::new(0),
        ops: RefCell::new(Vec::new()),
    };
    submit_with(&r, &packet(7), &Stalled, 1).unwrap();
    check_order(&r.ops.borrow()).unwrap();
    r.ops.borrow_mut().clear();
    let batch = [packet(1), packet(2), packet(3)];
    submit_batch_with(&r, &batch, &Stalled, 1).unwrap();
    let ops = r.ops.borrow();
    check_order(&ops).unwrap();
    assert_eq!(ops.iter().filter(|o| matches!(o, Op::Ring(_))).count(), 1);
}

/// `AqlQueue`'s own stores: `write_body` writes bytes 4..64 and leaves
/// the header INVALID; only `publish` writes the header.
#[test]
fn aql_queue_writes_the_header_only_when_it_publishes() {
    let mem: &'static QueueMemory<16> = Box::leak(Box::new(QueueMemory::new()));
    let bell: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
    // SAFETY: a leaked u64, accessed only atomically.
    let d = unsafe { Doorbell::from_ptr(NonNull::from(bell).cast()) }.unwrap();
    let q = AqlQueue::new(mem, d, QueueConfig::default()).unwrap();
    let p = packet(0x5a);
    let bytes: [u8; 64] = zerocopy::IntoBytes::as_bytes(&p).try_into().unwrap();
    let slot = mem.ring_address() as *const u8;
    // SAFETY: slot 0 of the leaked ring; word 0 is read atomically, the
    // body only after the stores below, on this thread.
    let header = || unsafe { AtomicU32::from_ptr(slot as *mut u32) }.load(Ordering::Acquire);
    assert_eq!(header() & 0xff, INVALID);
    QueueMem::write_body(&q, 0, &bytes);
    assert_eq!(
        header() & 0xff,
        INVALID,
        "write_body stored the header with the body"
    );
    // SAFETY: as above.
    let body = unsafe { std::slice::from_raw_parts(slot.add(4), 60) };
    assert_eq!(body, &bytes[4..]);
    QueueMem::publish(&q, 0, u32::from_le_bytes(bytes[..4].try_into().unwrap()));
    assert_eq!(header(), u32::from_le_bytes(bytes[..4].try_into().unwrap()));
}
