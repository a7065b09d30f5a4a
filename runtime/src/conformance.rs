//! Every hardware fact this crate relies on, for `cargo xtask conformance`.

use barebell_facts::Fact;

/// The runtime's facts: AQL packets, the queue descriptor, signals,
/// registers.
pub const FACTS: &[&[Fact]] = &[
    crate::aql::FACTS,
    crate::queue::FACTS,
    crate::signal::FACTS,
    crate::regs::gc_11_0_0::FACTS,
    crate::regs::gc_11_0_0::MQD_WINDOW_FACTS,
    crate::discovery::FACTS,
];
