//! GFXHUB v1.0 (GC 9.4.2, Aldebaran's one XCC), programmed as
//! `gfxhub_v1_0_gart_enable()` does on bare metal. `gfxhub_v1_2.c` is this
//! file's multi-XCC form: the same steps with the same values (the
//! `translate_further` L2 settings, the XNACK retry Linux forces for
//! 9.4.2 and 9.4.3 in `setup_vmid_config`), so the steps are
//! [`super::v9`]'s, over [`GFXHUB_1_0`]'s register table.

use super::HubError;
use super::v9::{self, GFXHUB_1_0, HubV9Config};
use crate::bus::{Block, RegisterBus};

/// `gfxhub_v1_0_gart_enable()` (bare metal: cache regs and the identity
/// aperture included).
pub fn gart_enable<B: RegisterBus + ?Sized>(
    gc: &[Block<'_, B>],
    cfg: &HubV9Config,
) -> Result<(), HubError> {
    cfg.check()?;
    let hub = &GFXHUB_1_0;
    v9::init_gart_aperture_regs(gc, hub, cfg)?;
    v9::init_system_aperture_regs(gc, hub, cfg)?;
    v9::init_tlb_regs(gc, hub)?;
    v9::init_cache_regs(gc, hub)?;
    v9::enable_system_domain(gc, hub, cfg)?;
    v9::disable_identity_aperture(gc, hub)?;
    v9::setup_vmid_config(gc, hub)?;
    v9::program_invalidation(gc, hub)
}

/// `max_num_physical_nodes` for `CHIP_ALDEBARAN` in
/// `gfxhub_v1_1_get_xgmi_info()`.
pub const ALDEBARAN_MAX_NODES: u8 = 16;

/// `gfxhub_v1_1_get_xgmi_info()` (what `gfxhub_v1_0_funcs` names) on
/// Aldebaran: `MC_VM_XGMI_LFB_CNTL/SIZE` at `gfxhub_v1_1.c`'s `_ALDE`
/// offsets (0x978/0x979, which `gc_9_4_2_offset.h` gives the plain
/// names), up to 16 nodes.
pub fn get_xgmi_info<B: RegisterBus + ?Sized>(
    gc: &Block<'_, B>,
) -> Result<Option<super::gfxhub_v1_2::XgmiInfo>, super::gfxhub_v1_2::XgmiError> {
    use crate::regs::gc_9_4_2_vm as r;
    super::gfxhub_v1_2::read_xgmi_info(
        gc,
        (r::MC_VM_XGMI_LFB_CNTL, r::MC_VM_XGMI_LFB_SIZE),
        ALDEBARAN_MAX_NODES,
    )
}

/// `gfxhub_v1_0_set_fault_enable_default()`.
pub fn set_fault_enable_default<B: RegisterBus + ?Sized>(
    gc: &[Block<'_, B>],
    value: bool,
) -> Result<(), HubError> {
    v9::set_fault_enable_default(gc, &GFXHUB_1_0, value)
}
