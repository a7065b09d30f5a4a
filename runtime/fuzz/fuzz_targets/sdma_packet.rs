//! The SDMA decoders the model's engines run by: one packet at a time
//! (`SdmaPacket::decode`, SDMA 6.0/7.0/4.4.2), the v11/v12 SDMA MQD
//! layouts and GC 9.4.3's `v9_sdma_mqd` (`SdmaMqdV9::decode`). Input:
//! `[generation][bytes]`. A decoded packet's length is at least one
//! dword and, but for the payloads decoding leaves unread (a NOP's, and
//! WRITE_LINEAR's data, which the engine reads as it writes), never past
//! the words it was given.
#![no_main]

use barebell_decode::sdma::{SdmaGen, SdmaPacket, mqd};
use barebell_decode::sdma_mqd_v9::SdmaMqdV9;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&g, b)) = data.split_first() else {
        return;
    };
    let engine = match g % 3 {
        0 => SdmaGen::V6,
        1 => SdmaGen::V7,
        _ => SdmaGen::V4_4_2,
    };
    let words: Vec<u32> = (0..b.len() / 4)
        .map(|i| barebell_decode::le32(b, i * 4))
        .collect();
    let mut at = 0usize;
    while at < words.len() {
        let _ = SdmaPacket::len(engine, words[at]);
        match SdmaPacket::decode(engine, &words[at..]) {
            Ok((p, n)) => {
                // A NOP's payload and WRITE_LINEAR's data are not decoded
                // (they may run past the words given, as on a ring that
                // wraps); every other packet was decoded from words it
                // was given, and WRITE_LINEAR's fixed part too.
                let left = words.len() - at;
                let unread = match p {
                    SdmaPacket::Nop { .. } => n,
                    SdmaPacket::WriteLinear { dwords, .. } => {
                        assert_eq!(n, 4 + dwords as usize, "{p:?}");
                        n - 4
                    }
                    _ => 0,
                };
                assert!(n >= 1 && n - unread <= left, "{p:?}: {n} of {left}");
                at += n.min(left);
            }
            Err(_) => at += 1,
        }
    }
    let _ = mqd::decode(&mqd::V11, b);
    let _ = mqd::decode(&mqd::V12, b);
    if let Ok(m) = SdmaMqdV9::decode(b) {
        let _ = (m.ring_bytes, m.ring_address, m.doorbell_dword);
    }
});
