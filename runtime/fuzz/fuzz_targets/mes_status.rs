//! The MES status word on arbitrary values: the v11 and v12 decoders
//! never panic, and agree with the rule they implement (v11: any non-zero
//! word is success; v12: success iff the low 32 bits are non-zero, and a
//! failure decodes as `MES_ERR_CODE` fields or "not completed").
#![no_main]

use barebell::gfx::mes::{MesApi, V11, V12};
use barebell_firmware_if::mes_api::v12;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for w in data.chunks(8) {
        let mut b = [0u8; 8];
        b[..w.len()].copy_from_slice(w);
        let v = u64::from_le_bytes(b);
        assert_eq!(V11::status(v).is_ok(), v != 0);
        assert_eq!(V12::status(v).is_ok(), v as u32 != 0);
        let _ = v12::decode_status(v);
        if let Err(e) = V12::status(v) {
            let _ = format!("{e}");
        }
    }
});
