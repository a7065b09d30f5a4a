//! Every hardware fact this crate relies on, for `cargo xtask conformance`.

use barebell_facts::Fact;

pub const FACTS: &[&[Fact]] = &[
    crate::config::FACTS,
    crate::bar::FACTS,
    crate::caps::FACTS,
    crate::caps::EXT_HEADER_FACTS,
    crate::caps::pm::FACTS,
    crate::caps::msi::FACTS,
    crate::caps::msix::FACTS,
    crate::caps::express::FACTS,
    crate::caps::rebar::FACTS,
    crate::caps::aer::FACTS,
    crate::caps::vendor::FACTS,
    crate::caps::dsn::FACTS,
    crate::vfio_uapi::FACTS,
    crate::vfio_uapi::LAYOUT_FACTS,
    crate::vfio_uapi::IOMMUFD_FACTS,
];
