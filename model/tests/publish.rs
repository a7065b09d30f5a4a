//! The CP's consumer half of the AQL publish protocol, observed as a
//! concurrent reader would observe it: the producer's stores land between
//! the consumer's loads, at every point they can.
//!
//! The HSA packet processor model (HSA Platform System Architecture spec,
//! "packet processor"; ROCR's `AqlQueue` publishes the header last with a
//! release store) lets a producer fill a slot's body while the header
//! still says INVALID, then store the header. A consumer that loads the
//! header first and the body after (`cp::fetch_packet`) then sees either
//! nothing or the whole packet. A producer that stores the header first
//! and the body after is seen torn: a valid header over a stale body.
//!
//! The tests enumerate every interleaving of a producer's stores with
//! the consumer's two loads (header, then body).

use barebell_model::cp::{CpError, RingRead, fetch_packet};
use barebell_model::hsa::header;
use std::cell::RefCell;

/// One producer store into the 64-byte slot.
#[derive(Clone, Copy)]
enum Store {
    Header(u32),
    Body([u8; 60]),
}

/// A slot whose producer stores are applied between the consumer's loads:
/// `before[i]` stores land just before the consumer's load `i`.
struct Interleaved {
    slot: RefCell<[u8; 64]>,
    pending: RefCell<Vec<Store>>,
    before: [usize; 2],
    loads: RefCell<usize>,
}

impl Interleaved {
    fn new(stale: [u8; 64], stores: &[Store], before: [usize; 2]) -> Self {
        Interleaved {
            slot: RefCell::new(stale),
            pending: RefCell::new(stores.iter().rev().copied().collect()),
            before,
            loads: RefCell::new(0),
        }
    }

    /// Lets the producer run its next `n` stores.
    fn produce(&self, n: usize) {
        for _ in 0..n {
            let Some(s) = self.pending.borrow_mut().pop() else {
                return;
            };
            let mut slot = self.slot.borrow_mut();
            match s {
                Store::Header(h) => slot[..4].copy_from_slice(&h.to_le_bytes()),
                Store::Body(b) => slot[4..].copy_from_slice(&b),
            }
        }
    }

    fn load(&self) {
        let i = *self.loads.borrow();
        self.produce(self.before[i.min(1)]);
        *self.loads.borrow_mut() = i + 1;
    }
}

impl RingRead for Interleaved {
    fn header_acquire(&self, _slot: u64) -> Result<u32, CpError> {
        self.load();
        let s = self.slot.borrow();
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn body(&self, _slot: u64, out: &mut [u8; 60]) -> Result<(), CpError> {
        self.load();
        out.copy_from_slice(&self.slot.borrow()[4..]);
        Ok(())
    }
}

/// The packet the producer publishes: a barrier-AND header (type 3 in
/// bits 7:0, `hsa_packet_type_t`) over a recognisable body.
fn packet() -> (u32, [u8; 60]) {
    let mut body = [0u8; 60];
    for (i, b) in body.iter_mut().enumerate() {
        *b = 0xA0 ^ i as u8;
    }
    (3, body)
}

/// A consumed slot: header INVALID (1), the previous packet's body.
fn stale() -> [u8; 64] {
    let mut s = [0x55u8; 64];
    s[..4].copy_from_slice(&1u32.to_le_bytes());
    s
}

/// What the consumer saw for every interleaving of `stores`.
fn observations(stores: &[Store]) -> Result<Vec<Option<[u8; 64]>>, CpError> {
    let n = stores.len();
    let mut seen = Vec::new();
    for a in 0..=n {
        for b in 0..=n - a {
            let r = Interleaved::new(stale(), stores, [a, b]);
            seen.push(fetch_packet(&r, 0)?);
        }
    }
    Ok(seen)
}

fn whole() -> [u8; 64] {
    let (h, body) = packet();
    let mut p = [0u8; 64];
    p[..4].copy_from_slice(&h.to_le_bytes());
    p[4..].copy_from_slice(&body);
    p
}

#[test]
fn header_last_is_never_seen_torn() {
    let (h, body) = packet();
    let seen = observations(&[Store::Body(body), Store::Header(h)]).unwrap();
    assert!(seen.iter().all(|p| p.is_none() || *p == Some(whole())));
    // Both outcomes occur: the consumer did look before and after.
    assert!(seen.contains(&None));
    assert!(seen.contains(&Some(whole())));
}

#[test]
fn body_after_header_is_seen_torn() {
    let (h, body) = packet();
    let seen = observations(&[Store::Header(h), Store::Body(body)]).unwrap();
    let torn: Vec<_> = seen.iter().flatten().filter(|p| **p != whole()).collect();
    assert!(!torn.is_empty(), "{seen:?}");
    // The torn packet is the new header over the old body.
    for p in torn {
        assert_eq!(header::packet_type(u16::from_le_bytes([p[0], p[1]])), 3);
        assert_eq!(p[4..], stale()[4..]);
    }
}
