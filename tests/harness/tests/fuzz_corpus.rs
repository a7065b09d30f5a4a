//! The discovery fuzz target's seeds (`runtime/fuzz/corpus/discovery`)
//! are the model's NAVI31 and NAVI48 tables (built from the IP versions
//! and bases the model cites, not dumped from hardware: no board here),
//! prefixed with the target's mode byte (1: fix checksums after
//! mutation). This test keeps them in step with the model; run with
//! `BAREBELL_WRITE_CORPUS=1` to rewrite them.

use barebell::discovery::Discovery;
use barebell_model::discovery::{NAVI31, NAVI48, build};
use std::path::Path;

#[test]
fn discovery_seeds_are_the_model_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../runtime/fuzz/corpus/discovery");
    for (name, part) in [("navi31", &NAVI31), ("navi48", &NAVI48)] {
        let (table, _) = build(part);
        // The seed parses: the fuzzer starts from a valid table.
        assert!(Discovery::parse(&table).is_ok(), "{name}");
        let mut seed = vec![1u8];
        seed.extend_from_slice(&table);
        let path = dir.join(name);
        if std::env::var_os("BAREBELL_WRITE_CORPUS").is_some() {
            std::fs::write(&path, &seed).unwrap();
        }
        assert_eq!(std::fs::read(&path).unwrap(), seed, "{name} seed is stale");
    }
}
