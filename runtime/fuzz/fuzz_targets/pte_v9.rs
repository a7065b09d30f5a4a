//! The GC 9.4.3 page-table walk the model's hubs translate by
//! (`barebell_decode::pte_v9::walk`), over fuzzer-chosen tables:
//! `[depth][block_size][access][root u64][start u64][end u64][va u64]
//! [vram_base u64][entries...]`, the entries a table memory at byte
//! offset 0 (addresses past them are not memory). A walk translates or
//! faults with a typed `WalkFaultV9`; it never overflows.
#![no_main]

use barebell_decode::pte_v9::{AccessV9, ContextV9, TableMemory, walk};
use libfuzzer_sys::fuzz_target;

struct Tables<'a>(&'a [u8]);

impl TableMemory for Tables<'_> {
    fn entry(&self, address: u64) -> Option<u64> {
        let at = usize::try_from(address).ok()?;
        let b = self.0.get(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 43 {
        return;
    }
    let q = |at: usize| barebell_decode::le64(data, at);
    let ctx = ContextV9 {
        root: q(3),
        start: q(11),
        end: q(19),
        depth: data[0],
        block_size: data[1],
    };
    let access = match data[2] % 3 {
        0 => AccessV9::Read,
        1 => AccessV9::Write,
        _ => AccessV9::Execute,
    };
    let va = q(27);
    let vram_base = q(35);
    if let Ok(t) = walk(&Tables(&data[43..]), vram_base, &ctx, va, access) {
        assert!(t.page_bytes.is_power_of_two(), "{t:?}");
    }
});
