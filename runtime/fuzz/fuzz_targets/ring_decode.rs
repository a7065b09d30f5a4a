//! The model decoders behind `barebell ring decode` and `queue dump` on
//! arbitrary bytes: PM4, AQL, SDMA (v6, v7, v4.4.2) and MES API frames
//! (v11, v12), and the MQD/HQD window readers (gfx11/12 `Hqd`, GC 9.4.3
//! `HqdV9`). Input: `[format][buffer]`. No decoder panics, packets come
//! in ascending offset order starting inside the buffer, and the size
//! accessors return values or typed `SizeBeyondAddressSpace` errors.
#![no_main]

use barebell_decode::mes_api;
use barebell_decode::mqd::Hqd;
use barebell_decode::mqd_v9::{self, HqdV9};
use barebell_decode::ring::{self, Packet};
use barebell_decode::sdma::SdmaGen;
use libfuzzer_sys::fuzz_target;

fn check(bytes: &[u8], packets: &[Packet]) {
    let mut last = 0usize;
    for p in packets {
        assert!(p.offset >= last, "{} at {} after {last}", p.kind, p.offset);
        assert!(
            p.offset < bytes.len().max(1),
            "{} at {} of {}",
            p.kind,
            p.offset,
            bytes.len()
        );
        last = p.offset;
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&f, b)) = data.split_first() else {
        return;
    };
    match f % 8 {
        0 => check(b, &ring::pm4(b)),
        1 => check(b, &ring::aql(b)),
        2 => check(b, &ring::sdma(b, SdmaGen::V6)),
        3 => check(b, &ring::sdma(b, SdmaGen::V7)),
        4 => check(b, &ring::sdma(b, SdmaGen::V4_4_2)),
        5 => check(b, &ring::mes(b, &mes_api::V11)),
        6 => check(b, &ring::mes(b, &mes_api::V12)),
        _ => {
            let h = Hqd::from_mqd(b);
            let _ = (h.ring_bytes(), h.eop_bytes(), h.mes_ring_refusal());
            let _ = (
                h.ring_address(),
                h.rptr_report_address(),
                h.wptr_poll_address(),
            );
            let _ = (h.eop_address(), h.doorbell_dword(), h.pq_wptr(), h.vmid());
            let mut w = [0u32; mqd_v9::WINDOW_DWORDS];
            for (i, d) in w.iter_mut().enumerate() {
                *d = barebell_decode::le32(b, (mqd_v9::WINDOW_FIRST + i) * 4);
            }
            let v9 = HqdV9(w);
            let _ = (
                v9.ring_bytes(),
                v9.eop_bytes(),
                v9.ring_address(),
                v9.vmid(),
            );
            let _ = (
                v9.rptr_report_address(),
                v9.wptr_poll_address(),
                v9.eop_address(),
            );
        }
    }
});
