//! `bringup --trace` names every access a register table can name, and
//! says how many stayed unnamed and why.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::path::Path;

mod common;
use common::barebell_ok as barebell;

/// (accesses, unnamed) from the `trace:` line.
fn counts(out: &str) -> (u64, u64) {
    let line = out
        .lines()
        .find(|l| l.starts_with("trace: "))
        .expect("a `trace:` line");
    let w: Vec<&str> = line.split_whitespace().collect();
    (w[1].parse().unwrap(), w[4].parse().unwrap())
}

#[test]
fn the_count_line_counts_the_printed_accesses_and_few_stay_unnamed() {
    for part in ["navi31", "navi48"] {
        let out = barebell(&["bringup", "--part", part, "--mapping", "mes", "--trace"]);
        let accesses: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix("  "))
            .filter(|l| l.starts_with("W ") || l.starts_with("R "))
            .collect();
        let unnamed = accesses.iter().filter(|l| l[2..].starts_with('[')).count() as u64;
        assert_eq!(counts(&out), (accesses.len() as u64, unnamed), "{part}");
        // Before the tables named the trace, a quarter of the accesses
        // were unnamed; what is left is the HDP flush hole and the holes
        // of the HQD window the MQD sweep writes.
        assert!(unnamed <= 8, "{part}: {unnamed} unnamed");
    }
}

/// The MQD base's high half, unnamed by the bring-up's own lists: the
/// trace now names it, at the offset `regs` places it, which is the
/// Linux header's dword offset in GC segment 0.
#[test]
fn a_register_only_the_tables_know_is_named_where_the_header_puts_it() {
    let out = barebell(&["bringup", "--mapping", "mes", "--trace"]);
    let traced = out
        .lines()
        .find(|l| l.contains("GC.CP_MQD_BASE_ADDR_HI @"))
        .expect("the MQD base written by name");
    let at = traced
        .split('@')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let regs = barebell(&["regs", "read", "GC.CP_MQD_BASE_ADDR_HI"]);
    assert!(regs.contains(&format!("byte {at})")), "{regs} vs {traced}");
    let header = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../target/artifacts/linux-6.12/drivers/gpu/drm/amd/include/asic_reg/gc/gc_11_0_0_offset.h",
    );
    let text = std::fs::read_to_string(&header)
        .expect("`cargo xtask headers` extracts Linux 6.12's headers");
    let dword = text
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some("regCP_MQD_BASE_ADDR_HI"))
                .then(|| w.next().unwrap().to_string())
        })
        .unwrap();
    assert!(
        regs.contains(&format!("seg 0 + {dword},")),
        "{regs}: header says {dword}"
    );
}
