//! `AqlQueue`'s own publish, watched by a concurrent consumer as the CP
//! watches it: a thread spins on a slot's header with acquire loads and,
//! once the header leaves INVALID, reads the 60 body bytes with plain
//! loads (the CP reads the packet as memory).
//!
//! Under `cargo test` this checks that the consumer sees the whole body
//! once it sees the header. Under Miri (`cargo xtask miri`) it checks the
//! release ordering itself: if `publish` stored the header with a relaxed
//! store, nothing would order the body stores before the consumer's body
//! loads, and Miri's data-race detector reports the body read as a race
//! with the body write. On x86-64 a relaxed and a release store are the
//! same instruction, so no other test can tell them apart; the loom
//! models (`tests/loom.rs`) check the protocol over their own memory,
//! not `AqlQueue`'s.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use barebell::aql::doorbell::Doorbell;
use barebell::aql::packet::KernelDispatchPacket;
use barebell::aql::queue::{AqlQueue, QueueConfig, QueueMem, QueueMemory};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use zerocopy::FromBytes;

/// `HSA_PACKET_TYPE_INVALID` in the header's type field (bits 0..8).
const INVALID: u32 = 1;

fn packet(tag: u8) -> KernelDispatchPacket {
    let mut b = [tag; 64];
    b[0] = 2; // HSA_PACKET_TYPE_KERNEL_DISPATCH
    b[1] = 0;
    b[2] = 0;
    b[3] = 0;
    KernelDispatchPacket::read_from_bytes(&b).unwrap()
}

/// The slot's address, carried to the consumer thread.
struct Slot(*mut u8);
// SAFETY: the slot is in a leaked ring; the consumer only loads from it
// (the header atomically, the body after the header's acquire load).
unsafe impl Send for Slot {}

/// What the consumer read once the header was published.
fn consume(slot: Slot) -> (u32, Vec<u8>) {
    let p = slot.0;
    // SAFETY: slot 0 of a leaked ring that outlives the thread; word 0
    // is accessed atomically by both sides.
    let header = unsafe { AtomicU32::from_ptr(p.cast::<u32>()) };
    loop {
        let h = header.load(Ordering::Acquire);
        if h & 0xff != INVALID {
            // SAFETY: bytes 4..64 of the slot; the producer stored them
            // before its release store of the header, which this thread's
            // acquire load read.
            let body = unsafe { std::slice::from_raw_parts(p.add(4), 60) }.to_vec();
            return (h, body);
        }
        std::thread::yield_now();
    }
}

#[test]
fn a_consumer_that_sees_the_header_sees_the_body() {
    let mem: &'static QueueMemory<16> = Box::leak(Box::new(QueueMemory::new()));
    let bell: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
    // SAFETY: a leaked u64, accessed only atomically.
    let d = unsafe { Doorbell::from_ptr(NonNull::from(bell).cast()) }.unwrap();
    let q = AqlQueue::new(mem, d, QueueConfig::default()).unwrap();
    let p = packet(0x5a);
    let bytes: [u8; 64] = zerocopy::IntoBytes::as_bytes(&p).try_into().unwrap();
    let slot = Slot(mem.ring_address() as *mut u8);
    let cp = std::thread::spawn(move || consume(slot));
    QueueMem::write_body(&q, 0, &bytes);
    QueueMem::publish(&q, 0, u32::from_le_bytes(bytes[..4].try_into().unwrap()));
    let (header, body) = cp.join().unwrap();
    assert_eq!(header, u32::from_le_bytes(bytes[..4].try_into().unwrap()));
    assert_eq!(body, &bytes[4..]);
}
