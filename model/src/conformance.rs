//! The model's own conformance facts: what its decoders rest on, checked
//! against the public headers by `cargo xtask conformance` (gathered with
//! the other crates' tables by the CLI's `all_facts`).

use barebell_facts::Fact;

/// Every table the model declares.
pub const FACTS: &[&[Fact]] = crate::decode::FACTS;
