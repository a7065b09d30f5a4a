//! OSSSYS 6.0.0 (`ih_v6_0.c`, Navi31): the IH registers barebell
//! programs, against `osssys_6_0_0_offset.h`, and the `IH_*` fields
//! against `osssys_6_0_0_sh_mask.h` ([`super::fields`]).

use super::{IhInit, IhRegs};

pub use crate::regs::osssys_6_0_0::*;

/// The registers by role.
pub const REGS: IhRegs = IhRegs {
    name: "OSSSYS 6.0.0 (ih_v6_0)",
    rb_cntl: IH_RB_CNTL,
    rb_base: IH_RB_BASE,
    rb_base_hi: IH_RB_BASE_HI,
    rb_rptr: IH_RB_RPTR,
    rb_wptr: IH_RB_WPTR,
    wptr_addr_lo: IH_RB_WPTR_ADDR_LO,
    wptr_addr_hi: IH_RB_WPTR_ADDR_HI,
    doorbell_rptr: IH_DOORBELL_RPTR,
    rb_cntl_ring1: IH_RB_CNTL_RING1,
    rb_rptr_ring1: IH_RB_RPTR_RING1,
    rb_wptr_ring1: IH_RB_WPTR_RING1,
    init: IhInit::Soc21 {
        storm_client_list: IH_STORM_CLIENT_LIST_CNTL,
        int_flood: IH_INT_FLOOD_CNTL,
        msi_storm: IH_MSI_STORM_CTRL,
    },
};

/// The fields, against this version's mask header.
pub const FIELD_FACTS: [barebell_facts::Fact; super::fields::COUNT] =
    super::fields::facts("osssys_6_0_0_sh_mask.h");
