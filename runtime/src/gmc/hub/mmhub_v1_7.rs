//! MMHUB 1.7 (Aldebaran's MMHUB, which Linux reports as 9.4.2 and drives
//! with `mmhub_v1_7_funcs`), programmed as `mmhub_v1_7_gart_enable()` does:
//! `mmhub_v1_8.c`'s steps for one instance, with the same DAGB snoop
//! override for the SDMA client ([`super::mmhub_v1_8::init_snoop_override_regs`]).

use super::HubError;
use super::mmhub_v1_8::{SnoopRegs, init_snoop_override_regs};
use super::v9::{self, HubV9Config, MMHUB_1_7};
use crate::bus::{Block, RegisterBus};
use crate::regs::mmhub_1_7_0 as mm;

/// MMHUB 1.7's DAGB snoop-override registers.
pub const SNOOP_1_7: SnoopRegs = SnoopRegs {
    dagb0: mm::DAGB0_WRCLI_GPU_SNOOP_OVERRIDE,
    dagb0_value: mm::DAGB0_WRCLI_GPU_SNOOP_OVERRIDE_VALUE,
    dagb1: mm::DAGB1_WRCLI_GPU_SNOOP_OVERRIDE,
};

/// `mmhub_v1_7_gart_enable()`.
pub fn gart_enable<B: RegisterBus + ?Sized>(
    mmhub: &[Block<'_, B>],
    cfg: &HubV9Config,
) -> Result<(), HubError> {
    cfg.check()?;
    let hub = &MMHUB_1_7;
    v9::init_gart_aperture_regs(mmhub, hub, cfg)?;
    v9::init_system_aperture_regs(mmhub, hub, cfg)?;
    v9::init_tlb_regs(mmhub, hub)?;
    v9::init_cache_regs(mmhub, hub)?;
    init_snoop_override_regs(mmhub, &SNOOP_1_7)?;
    v9::enable_system_domain(mmhub, hub, cfg)?;
    v9::disable_identity_aperture(mmhub, hub)?;
    v9::setup_vmid_config(mmhub, hub)?;
    v9::program_invalidation(mmhub, hub)
}

/// `mmhub_v1_7_set_fault_enable_default()`.
pub fn set_fault_enable_default<B: RegisterBus + ?Sized>(
    mmhub: &[Block<'_, B>],
    value: bool,
) -> Result<(), HubError> {
    v9::set_fault_enable_default(mmhub, &MMHUB_1_7, value)
}

/// The DAGB array's distance, against `mmhub_1_7_offset.h`.
pub const FACTS: &[barebell_facts::Fact] = &[barebell_facts::Fact::constant(
    "mmhub_1_7_offset.h",
    "regDAGB4_WRCLI_GPU_SNOOP_OVERRIDE - regDAGB0_WRCLI_GPU_SNOOP_OVERRIDE",
    (4 * (mm::DAGB1_WRCLI_GPU_SNOOP_OVERRIDE.offset - mm::DAGB0_WRCLI_GPU_SNOOP_OVERRIDE.offset))
        as u64,
)];
