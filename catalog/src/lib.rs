//! What barebell knows, as data: every crate's fact table and the register
//! tables read from the Linux 6.12 headers.
//!
//! A crate of its own below the CLI so that `cargo xtask` (conformance,
//! `reg-tables`) builds without the CLI crate, its build script and the
//! tools that build script needs.

use barebell_facts::Fact;

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
