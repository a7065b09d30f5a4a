//! The HWS packet decoders the model's scheduler reads
//! (`barebell_decode::pm4_hws`, `kfd_pm4_headers_ai.h` layouts): a
//! type-3 header, then each packet decoder on the words that follow.
//! Input: little-endian dwords. No decoder panics on any words, short
//! packets included (missing dwords read as 0).
#![no_main]

use barebell_decode::pm4_hws as p;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect();
    let mut at = 0usize;
    while let Some(&h) = words.get(at) {
        let Some((op, len)) = p::header(h) else {
            at += 1;
            continue;
        };
        let _ = p::name(op);
        let end = at.saturating_add(len).min(words.len());
        let pkt = &words[at..end];
        let _ = p::set_resources(pkt);
        let _ = p::run_list(pkt);
        let _ = p::map_process(pkt);
        let _ = p::map_queues(pkt);
        let _ = p::query_status(pkt);
        let _ = p::unmap_queues(pkt);
        // Every packet advances: len counts the header.
        assert!(len >= 2);
        at = at.saturating_add(len);
    }
});
