//! GMC 12.0 (GC 12.x, Navi 4x): MMHUB 4.1, the GART placed low, and no
//! VBIOS framebuffer to keep (`gmc_v12_0.c`).

use super::Memory;
use super::block::{FbRegs, GmcBlock};
use crate::Gpu;
use crate::discovery::Ips;
use crate::error::{BringupError, Outcome};
use alloc::string::String;
use alloc::vec::Vec;
use barebell::gmc::hub::{HubError, VmFault};
use barebell::gmc::layout::GartPlacement;
use barebell::nbio::Nbio;
use barebell::regs::mmhub_4_1_0;

/// GMC 12.0's block.
#[derive(Debug)]
pub struct GmcV12_0;

impl GmcBlock for GmcV12_0 {
    fn name(&self) -> &'static str {
        "gmc_v12_0"
    }

    /// `mmhub_v4_1_0_get_fb_location()`, `mmhub_v4_1_0_get_mc_fb_offset()`;
    /// `gmc_v12_0_vram_gtt_location()` places the GART low.
    fn fb_regs(&self, ips: &Ips) -> FbRegs {
        FbRegs {
            location: mmhub_4_1_0::MMMC_VM_FB_LOCATION_BASE,
            offset: mmhub_4_1_0::MMMC_VM_FB_OFFSET,
            offset_bases: ips.mmhub.bases,
            gart: GartPlacement::Low,
        }
    }

    /// `gmc_v12_0_get_vbios_fb_size()` returns 0.
    fn vbios_fb_size(&self, _: &Gpu<'_>) -> Result<u64, BringupError> {
        Ok(0)
    }

    fn hub_tables(&self, ips: &Ips) -> Result<Option<super::Gfx11Hubs>, BringupError> {
        super::gfx11_12_hub_tables(ips).map(Some)
    }

    fn enable_hubs(
        &self,
        gpu: &Gpu<'_>,
        nbio: &Nbio,
        m: &Memory<'_>,
    ) -> Result<String, BringupError> {
        super::gfx11_12_enable_mmhub(gpu, nbio, m)
    }

    fn latched_faults(&self, gpu: &Gpu<'_>) -> Result<Vec<VmFault>, HubError> {
        super::gfx11_12_latched_faults(gpu)
    }

    fn mmhub_off(&self, gpu: &Gpu<'_>) -> Outcome {
        super::gfx11_12_mmhub_off(gpu)
    }
}
