//! `hub::read_fault` against a register bus whose reads are the fuzzer's
//! bytes (what a faulting or vanished device returns): the decode never
//! panics, on all four hub register sets; an all-ones status is the
//! typed "device gone" error, not a fault.
#![no_main]

use barebell::bus::RegisterBus;
use barebell::gmc::hub::read_fault;
use barebell::regs::IpBases;
use barebell::regs::hub::{GFXHUB_3_0, GFXHUB_12_0, MMHUB_3_0_0, MMHUB_4_1_0};
use libfuzzer_sys::fuzz_target;
use std::cell::Cell;

struct Bytes<'a> {
    data: &'a [u8],
    at: Cell<usize>,
}

impl RegisterBus for Bytes<'_> {
    fn read32(&self, _byte_offset: usize) -> u32 {
        let i = self.at.get();
        self.at.set(i + 4);
        let mut b = [0u8; 4];
        for (k, x) in b.iter_mut().enumerate() {
            *x = self.data.get(i + k).copied().unwrap_or(0);
        }
        u32::from_le_bytes(b)
    }
    fn write32(&self, _byte_offset: usize, _value: u32) {}
}

fuzz_target!(|data: &[u8]| {
    let bases = IpBases::new(&[0x1260, 0xA000, 0x1C000, 0x2402C00, 0, 0, 0, 0]);
    for hub in [&GFXHUB_3_0, &MMHUB_3_0_0, &GFXHUB_12_0, &MMHUB_4_1_0] {
        let bus = Bytes {
            data,
            at: Cell::new(0),
        };
        if let Ok(Some(f)) = read_fault(&bus, &bases, hub) {
            let _ = format!("{f}");
            assert_ne!(f.status, 0);
        }
    }
});
