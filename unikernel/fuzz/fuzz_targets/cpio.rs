//! The unikernel's newc cpio reader (`unikernel/src/cpio.rs`, the
//! firmware module QEMU's `-initrd` hands in) on arbitrary bytes: never a
//! panic or overflow trap; every entry's bytes lie inside the archive, in
//! order and without overlap; a bad entry's offset is inside the
//! archive (a cut archive once named an offset past its end).
#![no_main]

extern crate alloc;

#[path = "../../src/cpio.rs"]
mod cpio;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let base = data.as_ptr() as usize;
    match cpio::entries(data) {
        Ok(files) => {
            let mut end = 0;
            for (name, bytes) in &files {
                let at = bytes.as_ptr() as usize - base;
                assert!(at >= end + 110 + name.len(), "entry overlaps its header");
                assert!(at + bytes.len() <= data.len());
                end = at + bytes.len();
            }
        }
        Err(e) => {
            match e {
                cpio::CpioError::BadEntry { at } => assert!(at < data.len()),
                cpio::CpioError::NoTrailer { len } => assert_eq!(len, data.len()),
            }
            let _ = format!("{e}");
        }
    }
});
