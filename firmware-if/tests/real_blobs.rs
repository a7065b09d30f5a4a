//! Every blob in Debian's firmware-amd-graphics, through the parser.
//!
//! Expected values come from the files themselves and from Linux's rules
//! (`amdgpu_ucode_validate()` requires `size_bytes` to equal the file
//! size), never from this parser's output.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use barebell_firmware_if::{Body, Kind, parse};
use std::path::{Path, PathBuf};

const DIR: &str = "/lib/firmware/amdgpu";

fn blobs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(DIR)
        .unwrap_or_else(|e| panic!("{DIR}: {e} (install firmware-amd-graphics: cargo xtask deps)"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    v.sort();
    v
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_blob_has_a_valid_common_header_and_parses_or_is_typed_unsupported() {
    let files = blobs();
    assert!(files.len() >= 638, "only {} blobs in {DIR}", files.len());
    let (mut full, mut unsupported) = (0, 0);
    let mut failures = Vec::new();
    for p in &files {
        let blob = std::fs::read(p).unwrap();
        let n = name(p);
        // Linux's own acceptance rule.
        let size = u32::from_le_bytes(blob[0..4].try_into().unwrap()) as usize;
        assert_eq!(size, blob.len(), "{n}: size_bytes vs file size");
        let kind = Kind::from_file_name(&n);
        match parse(kind, &blob) {
            Ok(fw) => {
                let h = fw.container.header();
                assert_eq!(h.size_bytes.get() as usize, blob.len());
                if let Body::Unsupported(_) = fw.body {
                    unsupported += 1;
                } else {
                    full += 1;
                    assert!(!fw.sections().is_empty(), "{n}: decoded but no sections");
                    for s in fw.sections() {
                        assert!(s.offset + s.size <= blob.len(), "{n}: {s:?}");
                    }
                }
            }
            Err(e) => failures.push(format!("{n}: {e}")),
        }
    }
    eprintln!(
        "{} blobs: {full} decoded fully, {unsupported} typed-unsupported, {} failed",
        files.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(full + unsupported, files.len());
}
