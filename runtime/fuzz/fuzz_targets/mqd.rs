//! The MQD decoders the model maps queues by: the gfx11/12 HQD window
//! (`barebell_decode::mqd::Hqd`, every accessor and the MES ring rule)
//! and GC 9.4.3's per-XCC MQD check (`mqd_v9::check_queue`, with the
//! XCC count and doorbell ranges from the input). Input:
//! `[xccs][range lo u32][range hi u32][mqd bytes]`. Size fields decode to
//! values or typed `SizeBeyondAddressSpace` errors, never an overflow.
#![no_main]

use barebell_decode::mqd::Hqd;
use barebell_decode::mqd_v9::{self, HqdV9, MqdV9};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let xccs = usize::from(data[0] % 10);
    let lo = barebell_decode::le32(data, 1);
    let hi = barebell_decode::le32(data, 5);
    let b = &data[9..];

    let h = Hqd::from_mqd(b);
    if let Ok(n) = h.ring_bytes() {
        assert!(n <= 1 << 48, "ring of {n} bytes");
    }
    if let Ok(n) = h.eop_bytes() {
        assert!(n <= 1 << 48, "EOP of {n} bytes");
    }
    let _ = (
        h.mes_ring_refusal(),
        h.queue_size_field(),
        h.eop_size_field(),
    );
    let _ = (h.mqd_address(), h.active(), h.vmid(), h.ring_address());
    let _ = (h.rptr_report_address(), h.wptr_poll_address(), h.pq_rptr());
    let _ = (h.pq_wptr(), h.doorbell_dword(), h.doorbell_enabled());
    let _ = (h.eop_address(), h.aql(), h.privileged(), h.kmd_queue());
    let _ = h.with_doorbell_enabled();

    if let Ok(m) = MqdV9::decode(b) {
        let v: HqdV9 = m.hqd;
        let _ = (v.ring_bytes(), v.eop_bytes(), v.ctx_save_address());
        let _ = (v.ctx_save_size(), v.cwsr(), v.aql(), v.wptr());
        let _ = v.loaded_for(data[0] & 0xF);
    }
    let ranges = [(lo, hi); mqd_v9::MAX_XCCS];
    // Both checks: GC 9.4.3's XCC fields, and GC 9.4.2's one MQD.
    let xcc_fields = data[0] & 0x10 == 0;
    if let Ok(ms) = mqd_v9::check_queue(b, 0x1000, xccs, &ranges, xcc_fields) {
        assert_eq!(ms.len(), xccs);
    }
});
