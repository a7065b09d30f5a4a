//! IH decode: `IhRing::init` then `poll` on a ring whose contents, write
//! pointers (the writeback copy and `IH_RB_WPTR`, overflow bit included)
//! and register reads all come from the fuzzer, for each IH barebell
//! drives (OSSSYS 4.4.2, 6.0, 7.0). Input: `[version][8 register words]
//! [3 write pointers][ring bytes]`. Nothing panics, a poll hands back at
//! most one ring's worth of entries, and each entry decodes.
#![no_main]

use barebell::bus::RegisterBus;
use barebell::ih::{IhMemory, IhRegs, IhRing, WPTR_PAGE};
use barebell::regs::IpBases;
use core::ptr::NonNull;
use libfuzzer_sys::fuzz_target;
use std::cell::Cell;

const RING: usize = 4096;

struct Bus {
    words: [u32; 8],
    at: Cell<usize>,
}

impl RegisterBus for Bus {
    fn read32(&self, _byte_offset: usize) -> u32 {
        let i = self.at.get();
        self.at.set(i.wrapping_add(1));
        self.words[i % 8]
    }
    fn write32(&self, _byte_offset: usize, _value: u32) {}
}

fn word(b: &[u8], i: usize) -> u32 {
    let mut w = [0u8; 4];
    for (k, x) in w.iter_mut().enumerate() {
        *x = b.get(4 * i + k).copied().unwrap_or(0);
    }
    u32::from_le_bytes(w)
}

fuzz_target!(|data: &[u8]| {
    let Some((&v, rest)) = data.split_first() else {
        return;
    };
    let version = [(4, 4, 2), (6, 0, 0), (7, 0, 0)][usize::from(v % 3)];
    let Some(regs) = IhRegs::for_version(version) else {
        panic!("IH {version:?} has no registers");
    };
    let mut words = [0u32; 8];
    for (i, w) in words.iter_mut().enumerate() {
        *w = word(rest, i);
    }
    let wptrs = [word(rest, 8), word(rest, 9), word(rest, 10)];
    let ring_in = rest.get(44..).unwrap_or(&[]);
    let mut mem = vec![0u32; (RING + WPTR_PAGE) / 4];
    let bus = Bus {
        words,
        at: Cell::new(0),
    };
    let bases = IpBases::new(&[0x4260, 0, 0, 0, 0, 0, 0, 0]);
    let host = NonNull::from(&mut mem[..]).cast::<u8>();
    // SAFETY: `mem` is RING + WPTR_PAGE bytes of 4-aligned host memory
    // that nothing else touches while `ring` (and so `IhMemory`) lives;
    // the "device" is this function, which writes through `host` only
    // between polls.
    let Ok(m) = (unsafe { IhMemory::new(host, RING + WPTR_PAGE, 0x10_0000) }) else {
        panic!("a 4 KiB ring was refused");
    };
    let Ok(mut ring) = IhRing::init(&bus, &bases, regs, m) else {
        return;
    };
    let put = |off: usize, w: u32| {
        // SAFETY: `off` is a 4-aligned offset below RING + WPTR_PAGE
        // inside `mem`, which outlives `ring`; the write is volatile as
        // the ring's own reads are.
        unsafe { core::ptr::write_volatile(host.as_ptr().add(off).cast::<u32>(), w) }
    };
    for (i, c) in ring_in.chunks(4).take(RING / 4).enumerate() {
        put(4 * i, word(c, 0));
    }
    for w in wptrs {
        put(RING, w);
        let mut n = 0u32;
        match ring.poll(&bus, |irq| {
            n += 1;
            let _ = format!("{irq:?}");
        }) {
            Ok(p) => {
                assert_eq!(p.entries, n);
                assert!(p.entries as usize <= RING / 32);
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
