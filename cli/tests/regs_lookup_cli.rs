//! `regs name ADDR` and `regs list PATTERN`, checked against Linux's
//! headers read here, not against the CLI's own tables.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::path::Path;

mod common;
use common::barebell_ok as barebell;

fn header(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/artifacts/linux-6.12/drivers/gpu/drm/amd/include/asic_reg/gc")
        .join(name);
    std::fs::read_to_string(&p).expect("`cargo xtask headers` extracts Linux 6.12's headers")
}

/// `regNAME` defines of a header (not their `_BASE_IDX` companions).
fn registers(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define")).then_some(())?;
            let name = w.next()?.strip_prefix("reg")?;
            if name.ends_with("_BASE_IDX") {
                return None;
            }
            let v = u32::from_str_radix(w.next()?.strip_prefix("0x")?, 16).ok()?;
            Some((name.to_string(), v))
        })
        .collect()
}

#[test]
fn regs_name_finds_the_register_the_header_places_there() {
    // `regs read` gives the byte offset of a register; `regs name` of that
    // byte must give the register back, with the header's dword offset.
    let read = barebell(&["regs", "read", "GC.CP_MQD_BASE_ADDR_HI"]);
    let byte = read
        .split("byte ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap();
    let named = barebell(&["regs", "name", byte]);
    let dword = registers(&header("gc_11_0_0_offset.h"))
        .into_iter()
        .find(|(n, _)| n == "CP_MQD_BASE_ADDR_HI")
        .unwrap()
        .1;
    assert_eq!(
        named,
        format!("{byte} = GC.CP_MQD_BASE_ADDR_HI  (GC 11.0.0 instance 0, seg 0 + {dword:#x})\n")
    );
    // The HDP flush hole holds no register.
    let none = barebell(&["regs", "name", "0x7f000"]);
    assert!(none.contains("no register table"), "{none}");
}

#[test]
fn regs_list_lists_what_the_header_declares() {
    for (part, file) in [
        ("navi31", "gc_11_0_0_offset.h"),
        ("mi300x", "gc_9_4_3_offset.h"),
    ] {
        let want: Vec<String> = registers(&header(file))
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| n.starts_with("CP_HQD_PQ_"))
            .collect();
        let out = barebell(&[
            "regs",
            "list",
            "GC.CP_HQD_PQ_*".trim_start_matches("GC."),
            "--part",
            part,
        ]);
        let got: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix("GC."))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert!(want.len() >= 10, "{part}: {want:?}");
        let mut w = want.clone();
        w.sort();
        let mut g: Vec<String> = got.iter().map(|s| s.to_string()).collect();
        g.sort();
        assert_eq!(g, w, "{part}");
        assert!(
            out.ends_with(&format!("{} register(s) match `CP_HQD_PQ_*`\n", want.len())),
            "{out}"
        );
    }
}
