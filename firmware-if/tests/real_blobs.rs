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

fn read(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(DIR).join(name)).unwrap()
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// MES: pipe from the file name as `amdgpu_mes_init_microcode()` builds
/// it; PC start is the header's start address (bytes 56..64 of
/// `mes_firmware_header_v1_0`) shifted right by two.
#[test]
fn mes_pipes_and_program_counter() {
    use barebell_firmware_if::MesPipe;
    for (file, pipe) in [
        ("gc_11_0_0_mes_2.bin", MesPipe::Scheduler),
        ("gc_11_0_0_mes1.bin", MesPipe::Kiq),
        ("gc_12_0_0_uni_mes.bin", MesPipe::Unified),
        ("gc_12_0_0_mes.bin", MesPipe::Scheduler),
    ] {
        let b = read(file);
        let kind = Kind::from_file_name(file);
        assert_eq!(kind, Kind::Mes(pipe), "{file}");
        let fw = parse(kind, &b).unwrap();
        let Body::Mes(m) = fw.body else {
            panic!("{file}: {:?}", fw.body)
        };
        let start = u64::from(le32(&b, 56)) | (u64::from(le32(&b, 60)) << 32);
        assert_eq!(m.pc_start(), start >> 2, "{file}");
        let ucode = fw.section("ucode").unwrap();
        assert_eq!(ucode.offset as u32, le32(&b, 40), "{file}");
        assert_eq!(ucode.size as u32, le32(&b, 36), "{file}");
    }
}

/// RS64 vs legacy: gfx11 CP images carry the v2.0 header, gfx10 the v1.0.
#[test]
fn rs64_versus_legacy_cp() {
    let b = read("gc_11_0_0_pfp.bin");
    let fw = parse(Kind::from_file_name("gc_11_0_0_pfp.bin"), &b).unwrap();
    let Body::Gfx(g) = fw.body else { panic!() };
    assert!(g.is_rs64());
    let start = u64::from(le32(&b, 52)) | (u64::from(le32(&b, 56)) << 32);
    assert_eq!(g.pc_start(), Some(start >> 2));
    let data = fw.section("data").unwrap();
    assert_eq!(
        (data.offset as u32, data.size as u32),
        (le32(&b, 48), le32(&b, 44))
    );

    let b = read("gc_10_3_6_pfp.bin");
    let fw = parse(Kind::from_file_name("gc_10_3_6_pfp.bin"), &b).unwrap();
    let Body::Gfx(g) = fw.body else { panic!() };
    assert!(!g.is_rs64());
    assert_eq!(g.pc_start(), None);
}

/// The gfx9 MEC jump table: `jt_offset`/`jt_size` are dwords from the
/// payload start (bytes 36..44 of `gfx_firmware_header_v1_0`).
#[test]
fn gfx9_mec_jump_table() {
    let b = read("vega10_mec.bin");
    let fw = parse(Kind::from_file_name("vega10_mec.bin"), &b).unwrap();
    let (off, jt_off, jt_size) = (le32(&b, 24), le32(&b, 36), le32(&b, 40));
    assert!(jt_size > 0);
    let jt = fw.section("jt").unwrap();
    assert_eq!(jt.offset as u32, off + jt_off * 4);
    assert_eq!(jt.size as u32, jt_size * 4);
    assert_eq!(
        fw.section("ucode").unwrap().size as u32,
        le32(&b, 20) - jt_size * 4
    );
}

/// A kind this crate cannot place, or a header version it does not know,
/// is a typed `Unsupported` that still carries the validated common header.
#[test]
fn unknown_kinds_and_versions_are_typed_unsupported() {
    let b = read("gc_11_0_0_rlc.bin");
    let fw = parse(Kind::Unknown, &b).unwrap();
    let u = fw.unsupported().unwrap();
    assert_eq!(u.kind, Kind::Unknown);
    assert_eq!(u.header_version, (2, 3));
    assert_eq!(fw.container.header().ip_version_major.get(), 11);
    assert!(fw.sections().is_empty());

    // Same blob with its header version bumped to an RLC v3.0 nobody
    // defines (bytes 8..12 of common_firmware_header).
    let mut b = b;
    b[8..10].copy_from_slice(&3u16.to_le_bytes());
    b[10..12].copy_from_slice(&0u16.to_le_bytes());
    let fw = parse(Kind::Rlc, &b).unwrap();
    assert_eq!(
        fw.unsupported(),
        Some(barebell_firmware_if::Unsupported {
            kind: Kind::Rlc,
            header_version: (3, 0)
        })
    );
}
