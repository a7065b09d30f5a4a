//! Seeded corruption of every real blob: truncations, bit flips and
//! extreme header values. The parser must answer each with a typed error
//! or a view whose every section lies inside the (corrupted) blob; it
//! must never panic or take long. Deterministic: a fixed-seed xorshift
//! drives all choices, so a failure reproduces exactly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use barebell_firmware_if::{Error, Kind, parse};
use std::time::{Duration, Instant};

const DIR: &str = "/lib/firmware/amdgpu";

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Parses and checks the result's invariants; returns whether it parsed.
fn check(kind: Kind, blob: &[u8], what: &str, slowest: &mut Duration) -> bool {
    let t = Instant::now();
    let r = parse(kind, blob);
    *slowest = (*slowest).max(t.elapsed());
    match r {
        Ok(fw) => {
            for s in fw.sections() {
                let end = s.offset.checked_add(s.size).unwrap();
                assert!(
                    end <= blob.len(),
                    "{what}: section {s:?} past {}",
                    blob.len()
                );
                assert_eq!(fw.bytes(s).len(), s.size, "{what}");
            }
            true
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "{what}");
            false
        }
    }
}

#[test]
fn truncations_flips_and_extreme_fields_give_typed_errors() {
    let mut files: Vec<_> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 638);
    let mut rng = XorShift(0x0bad_f00d_5eed_1234);
    let mut slowest = Duration::ZERO;
    let (mut ok, mut err, mut cases) = (0usize, 0usize, 0usize);
    for p in &files {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let kind = Kind::from_file_name(&name);
        let mut blob = std::fs::read(p).unwrap();
        let len = blob.len();

        // Truncations: Linux requires size_bytes == file size, so every
        // cut must be refused, and by the right rule.
        let mut cuts: Vec<usize> = (0..40).collect();
        cuts.extend((0..20).map(|_| rng.below(len)));
        for cut in cuts {
            let e = parse(kind, &blob[..cut]).expect_err(&format!("{name} cut at {cut}"));
            cases += 1;
            err += 1;
            if cut < 32 {
                assert_eq!(
                    e,
                    Error::Truncated {
                        what: "common_firmware_header",
                        need: 32,
                        have: cut
                    },
                    "{name}"
                );
            } else {
                assert!(
                    matches!(
                        e,
                        Error::BadSize {
                            field: "size_bytes",
                            ..
                        }
                    ),
                    "{name} cut at {cut}: {e}"
                );
            }
        }

        // Single and multiple bit flips, mostly in the header area where
        // every offset and size lives, some anywhere.
        for i in 0..120 {
            let span = if i % 4 == 0 { len } else { len.min(512) };
            let flips: Vec<usize> = (0..1 + rng.below(4)).map(|_| rng.below(span * 8)).collect();
            for &b in &flips {
                blob[b / 8] ^= 1 << (b % 8);
            }
            let what = format!("{name} flips {flips:?}");
            if check(kind, &blob, &what, &mut slowest) {
                ok += 1
            } else {
                err += 1
            }
            cases += 1;
            for &b in flips.iter().rev() {
                blob[b / 8] ^= 1 << (b % 8);
            }
        }

        // Extreme values in each header dword (offsets and sizes that
        // overflow when added, point past the end, or are zero).
        let header_dwords = len.min(256) / 4;
        for d in 0..header_dwords {
            if d == 0 {
                continue; // size_bytes: covered by the truncations
            }
            let at = d * 4;
            let saved: [u8; 4] = blob[at..at + 4].try_into().unwrap();
            for v in [
                0u32,
                1,
                0x7fff_ffff,
                0x8000_0000,
                0xffff_fffc,
                u32::MAX,
                len as u32,
            ] {
                blob[at..at + 4].copy_from_slice(&v.to_le_bytes());
                let what = format!("{name} dword {d} = {v:#x}");
                if check(kind, &blob, &what, &mut slowest) {
                    ok += 1
                } else {
                    err += 1
                }
                cases += 1;
            }
            blob[at..at + 4].copy_from_slice(&saved);
        }
    }
    eprintln!(
        "{cases} corrupted blobs: {ok} still parsed (sections in bounds), {err} typed errors; slowest parse {slowest:?}"
    );
    assert!(ok > 0 && err > 0);
    assert!(
        slowest < Duration::from_secs(1),
        "slowest parse took {slowest:?}"
    );
}
