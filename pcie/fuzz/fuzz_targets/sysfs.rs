//! The text of sysfs PCI files as `barebell_pcie::sysfs` parses it, on
//! arbitrary bytes. The first byte picks the file: 0 `resource`
//! (`parse_resources`), 1 `resourceN_resize` (`parse_resize_sizes`),
//! 2 a `/sys/bus/pci/devices` entry name (`Bdf::parse`). Never a panic;
//! a parsed `resource` has one entry per line; a parsed address prints
//! back as text that parses to the same address.
#![no_main]

use barebell_pcie::Bdf;
use barebell_pcie::sysfs::{parse_resize_sizes, parse_resources};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    // read_to_string refuses what is not UTF-8 before any parsing.
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match kind % 3 {
        0 => match parse_resources(text) {
            Ok(res) => {
                assert_eq!(res.len(), text.lines().count());
                for r in res {
                    let _ = r.size();
                }
            }
            Err(line) => assert!(text.lines().any(|l| l == line)),
        },
        1 => {
            let _ = parse_resize_sizes(text);
        }
        _ => {
            if let Ok(b) = Bdf::parse(text) {
                assert_eq!(Bdf::parse(&b.to_string()).ok(), Some(b));
            }
        }
    }
});
