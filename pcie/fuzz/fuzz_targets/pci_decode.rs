//! `barebell pci decode FILE` on arbitrary bytes: the CLI's decoder
//! (`cli/src/pci_describe.rs`, included by path so this crate needs only
//! barebell-pcie and serde) never panics, refuses every length but 256
//! and 4096, and its JSON serialises. The bytes are also padded or cut
//! to the nearest accepted length so that every mutation is decoded.
#![no_main]

#[path = "../../../cli/src/pci_describe.rs"]
#[allow(dead_code)]
mod pci_describe;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let accepted = data.len() == 256 || data.len() == 4096;
    assert_eq!(pci_describe::decode_dump(data).is_some(), accepted);
    let mut b = data.to_vec();
    b.resize(if data.len() <= 256 { 256 } else { 4096 }, 0);
    let Some(d) = pci_describe::decode_dump(&b) else {
        panic!("a {}-byte dump was refused", b.len());
    };
    assert_eq!(d.config_size, b.len());
    assert!(d.bars.iter().all(|bar| bar.index < 6));
    assert!(serde_json::to_string(&d).is_ok());
});
