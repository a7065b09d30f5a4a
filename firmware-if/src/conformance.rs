//! Every hardware fact this crate relies on, for `cargo xtask conformance`.

use barebell_facts::Fact;

pub const FACTS: &[&[Fact]] = &[crate::ucode::FACTS];
