//! GFXHUB v1.2 (GC 9.4.3): one VM hub per XCC, programmed as
//! `gfxhub_v1_2_xcc_gart_enable()` does for the XCCs of `xcc_mask`.
//!
//! `xccs` are the GC blocks of the XCCs, in the order of their logical
//! index (Linux: `adev->reg_offset[GC_HWIP][GET_INST(GC, i)]`); the caller
//! derives their bases from discovery.

use super::HubError;
use super::v9::{self, GFXHUB_1_2, HubV9Config};
use crate::bus::{Block, RegisterBus};

/// `gfxhub_v1_2_xcc_gart_enable()` on bare metal: each step across every
/// XCC before the next step.
pub fn gart_enable<B: RegisterBus + ?Sized>(
    xccs: &[Block<'_, B>],
    cfg: &HubV9Config,
) -> Result<(), HubError> {
    cfg.check()?;
    let hub = &GFXHUB_1_2;
    v9::init_gart_aperture_regs(xccs, hub, cfg)?;
    v9::init_system_aperture_regs(xccs, hub, cfg)?;
    v9::init_tlb_regs(xccs, hub)?;
    v9::init_cache_regs(xccs, hub)?;
    v9::enable_system_domain(xccs, hub, cfg)?;
    v9::disable_identity_aperture(xccs, hub)?;
    v9::setup_vmid_config(xccs, hub)?;
    v9::program_invalidation(xccs, hub)
}

/// `gfxhub_v1_2_xcc_set_fault_enable_default()`.
pub fn set_fault_enable_default<B: RegisterBus + ?Sized>(
    xccs: &[Block<'_, B>],
    value: bool,
) -> Result<(), HubError> {
    v9::set_fault_enable_default(xccs, &GFXHUB_1_2, value)
}

/// `gfxhub_v1_2_xcc_setup_vm_pt_regs()`: `vmid`'s page-table base on
/// every XCC (what KFD's `set_vm_context_page_table_base` reaches).
pub fn setup_vm_pt_regs<B: RegisterBus + ?Sized>(
    xccs: &[Block<'_, B>],
    vmid: u32,
    page_table_base: u64,
) -> Result<(), HubError> {
    let hub = &GFXHUB_1_2;
    if vmid > 15 {
        return Err(HubError::BadConfig {
            field: "vmid",
            value: u64::from(vmid),
        });
    }
    let d = hub.ctx_addr_distance();
    for r in xccs {
        let lo = r.offset_nth(hub.ctx0_base_lo, vmid, d)?;
        let hi = r.offset_nth(hub.ctx0_base_hi, vmid, d)?;
        r.bus.write32(lo, page_table_base as u32);
        r.bus.write32(hi, (page_table_base >> 32) as u32);
    }
    Ok(())
}
