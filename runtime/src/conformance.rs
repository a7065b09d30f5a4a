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
    crate::regs::gc_11_0_0::FIELD_FACTS,
    crate::regs::gc_11_0_0::VM_FIELD_FACTS,
    crate::regs::gc_11_0_0::HUB_FIELD_FACTS,
    crate::regs::gc_11_0_0::CONTEXT1_CNTL_FACTS,
    crate::regs::gc_11_0_0::DEFAULT_FACTS,
    crate::hub::FACTS,
    crate::regs::gc_12_0_0::FACTS,
    crate::regs::gc_12_0_0::FIELD_FACTS,
    crate::regs::mp_13_0_0::FACTS,
    crate::regs::mp_13_0_0::FIELD_FACTS,
    crate::regs::mp_14_0_2::FACTS,
    crate::regs::nbio_4_3_0::FACTS,
    crate::regs::nbio_4_3_0::init::FACTS,
    crate::regs::nbio_4_3_0::init::FIELD_FACTS,
    crate::regs::nbif_6_3_1::FACTS,
    crate::regs::nbif_6_3_1::FIELD_FACTS,
    crate::mqd::FACTS,
    crate::hqd::FACTS,
    crate::mapper::FACTS,
    crate::mes_start::FACTS,
    crate::kiq_hqd::FACTS,
];
