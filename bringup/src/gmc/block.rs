//! The GMC block (the MC, the MMHUB and, on GC 9.4.3, the GFXHUBs that
//! the gmc step programs), chosen once after discovery by the GC version,
//! as Linux's `amdgpu_discovery_set_gmc_ip_blocks()` picks
//! `gmc_v9_0_ip_block`, `gmc_v11_0_ip_block` or `gmc_v12_0_ip_block`
//! from `GC_HWIP`.
//!
//! [`GmcBlock`] holds what differs between those versions; the layout
//! itself ([`super::run`]) is one for every part. One file per version:
//! [`super::gmc_v11_0`], [`super::gmc_v12_0`], [`super::gmc_v9_0`].

use super::{Gfx11Hubs, Memory};
use crate::Gpu;
use crate::discovery::Ips;
use crate::error::{BringupError, Outcome};
use alloc::string::String;
use alloc::vec::Vec;
use barebell::gmc::hub::{HubError, VmFault};
use barebell::gmc::layout::GartPlacement;
use barebell::nbio::Nbio;
use barebell::regs::{IpBases, Reg};

/// Where the FB's place is read (`*_get_fb_location()`,
/// `*_get_mc_fb_offset()`) and where the GART goes.
#[derive(Debug, Clone, Copy)]
pub struct FbRegs {
    /// The FB location register, read on MMHUB instance 0.
    pub location: Reg,
    /// The FB offset register and the bases it is read at.
    pub offset: Reg,
    pub offset_bases: IpBases,
    /// `amdgpu_gmc_gart_location()`'s placement for this version.
    pub gart: GartPlacement,
}

/// What the bring-up asks of a GMC version.
pub trait GmcBlock: Sync + core::fmt::Debug {
    /// `gmc_v11_0`, as Linux names the block.
    fn name(&self) -> &'static str;

    /// The FB registers and the GART placement.
    fn fb_regs(&self, ips: &Ips) -> FbRegs;

    /// `gmc_v*_get_vbios_fb_size()`: bytes the display may still scan
    /// out at VRAM 0 (asked only with display hardware present).
    fn vbios_fb_size(&self, gpu: &Gpu<'_>) -> Result<u64, BringupError>;

    /// The gfx11/gfx12 hub register tables, or `None` where the version
    /// programs its hubs with tables of its own.
    fn hub_tables(&self, ips: &Ips) -> Result<Option<Gfx11Hubs>, BringupError>;

    /// The hubs on over the VMID0 layout in `m`; what was enabled, for
    /// the step's report.
    fn enable_hubs(
        &self,
        gpu: &Gpu<'_>,
        nbio: &Nbio,
        m: &Memory<'_>,
    ) -> Result<String, BringupError>;

    /// The VM faults every hub has latched, or none before the hubs
    /// were set up.
    fn latched_faults(&self, gpu: &Gpu<'_>) -> Result<Vec<VmFault>, HubError>;

    /// Teardown: the MMHUB's translation off (the GART), after the PSP
    /// and the IH ring.
    fn mmhub_off(&self, gpu: &Gpu<'_>) -> Outcome;

    /// The GPU's place in an XGMI hive (`gmc.xgmi.funcs` /
    /// `gfxhub.funcs->get_xgmi_info()`), with the FB top register its
    /// layout then needs; `None` for a GPU on its own, as every version
    /// without XGMI is.
    fn hive(&self, _gpu: &Gpu<'_>) -> Result<Option<Hive>, BringupError> {
        Ok(None)
    }
}

/// A hive member's XGMI place and FB top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hive {
    pub xgmi: barebell::gmc::hub::gfxhub_v1_2::XgmiInfo,
    /// `MC_VM_FB_LOCATION_TOP` of MMHUB instance 0, raw.
    pub fb_location_top: u32,
}
