//! Library half of the `barebell` CLI: pieces shared with `xtask`.

use barebell_facts::Fact;

pub mod pci_describe;
pub mod regdb;

/// Every fact table of the library crates, tagged with the crate.
/// `barebell facts` prints it; `cargo xtask conformance` checks it.
pub fn all_facts() -> impl Iterator<Item = (&'static str, &'static Fact)> {
    let tables: [(&'static str, &'static [&'static [Fact]]); 7] = [
        ("runtime", barebell::conformance::FACTS),
        ("pcie", barebell_pcie::conformance::FACTS),
        ("firmware-if", barebell_firmware_if::conformance::FACTS),
        ("kernel", barebell_kernel::conformance::FACTS),
        ("isa", barebell_isa::kd::FACTS),
        ("model", barebell_model::FACTS),
        ("model", barebell_model::conformance::FACTS),
    ];
    tables.into_iter().flat_map(|(k, t)| {
        t.iter()
            .flat_map(move |part| part.iter().map(move |f| (k, f)))
    })
}
