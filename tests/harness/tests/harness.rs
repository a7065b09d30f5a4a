//! The model-based integration tests, one module per subject, built as
//! one test binary: 62 binaries each linked barebell, the model and the
//! bring-up again, which was most of the build after any change to them
//! (docs/contributing.md, "One test binary").

// Counts each thread's allocations, for the tests that hold the submit
// path to none (`hot_loop`, `latency`); every other test allocates freely.
#[global_allocator]
static GLOBAL: barebell_tests::CountingAlloc = barebell_tests::CountingAlloc;

mod aldebaran_ips;
mod aql;
mod aql_pm4_ib;
mod bringup;
mod bus;
mod discovery;
mod dispatch;
mod fidelity;
mod fuzz_corpus;
mod gfx_linux_ring;
mod gmc;
mod gmc_v9;
mod hang;
mod hang_detect;
mod hot_loop;
mod hub;
mod hws;
mod ih_v4_4_2;
mod indirect;
mod interrupts;
mod kiq;
mod kiq_linux_ring;
mod latency;
mod mapping;
mod mec_v9_4_3;
mod mem;
mod mes;
mod mes_misc;
mod mes_start;
mod mes_vmid;
mod mi210_bringup;
mod mi210_copy;
mod mi210_queue;
mod mi300_bringup;
mod mi300_c_values;
mod mi300_copy;
mod mi300_discovery;
mod mi300_xcc_registers;
mod mqd_v9;
mod navi_bringup;
mod nbio;
mod nbio_v7_9;
mod pm4_queue;
mod process_vm;
mod psp;
mod psp13;
mod sdma;
mod sdma1_navi31;
mod sdma_v4_4_2;
mod sigbus;
mod smu13_0_6;
mod smu_flags;
mod snoop;
mod start;
mod stress;
mod strict_routes;
mod teardown;
mod uservm;
mod vbios_fb;
mod vm_walk;
mod vmid0;
mod xgmi_hive;

/// Every file of `tests/` is a module here: a file left out would build
/// nothing and run nothing, silently.
#[test]
fn every_file_of_tests_is_a_module_of_the_harness() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let me = std::fs::read_to_string(dir.join("harness.rs")).expect("reading harness.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("reading tests/") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        if let Some(stem) = name.strip_suffix(".rs")
            && stem != "harness"
            && !me.lines().any(|l| l == format!("mod {stem};"))
        {
            missing.push(stem.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "add `mod <name>;` to tests/harness/tests/harness.rs for {missing:?}"
    );
}
