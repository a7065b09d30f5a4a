//! Every hardware fact this crate relies on, for `cargo xtask conformance`.

use barebell_facts::Fact;

pub const FACTS: &[&[Fact]] = &[
    crate::ucode::FACTS,
    crate::ucode::gfx::FACTS,
    crate::ucode::rlc::FACTS,
    crate::ucode::mes::FACTS,
    crate::ucode::imu::FACTS,
    crate::ucode::sdma::FACTS,
    crate::ucode::psp::FACTS,
    crate::ucode::smc::FACTS,
    crate::ucode::mc::FACTS,
    crate::ucode::display::FACTS,
    crate::ucode::multimedia::FACTS,
    crate::ucode::gpu_info::FACTS,
    crate::mes_api::v11::FACTS,
    crate::mes_api::v12::FACTS,
    crate::psp_gfx::FACTS,
    crate::pm4::FACTS,
    crate::pm4::KFD_FACTS,
];
