//! MES API frames as the model reads them (`barebell_decode::mes_api`):
//! a `FrameView` over fuzzer bytes, read at every field offset of the
//! v11 and v12 layouts and at fuzzer-chosen offsets (reads past the
//! frame are 0, never a panic). Input: `[offset u32][frame bytes]`.
#![no_main]

use barebell_decode::mes_api::{FRAME_BYTES, FrameView, V11, V12};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let at = barebell_decode::le32(data, 0) as usize;
    let mut frame = [0u8; FRAME_BYTES];
    let body = data.get(4..).unwrap_or(&[]);
    let n = body.len().min(FRAME_BYTES);
    frame[..n].copy_from_slice(&body[..n]);
    let f = FrameView::new(&frame);
    let _ = (f.header(), f.u32(at), f.u64(at), f.api_status(at));
    let _ = f.u32s::<8>(at);
    for l in [&V11, &V12] {
        let _ = f.api_status(l.add.api_status);
        let _ = f.u64(l.add.wptr_addr);
        let _ = f.u32(l.remove.doorbell_offset);
        let _ = f.api_status(l.set_hw.api_status);
        let _ = f.u32(l.reset.flags);
    }
    let _ = format!("{f:?}");
});
