//! GMC 11.0 (GC 11.x, Navi 3x): MMHUB 3.0, the GART placed high, and
//! the VBIOS framebuffer sized from DCN 3.2.0's registers
//! (`gmc_v11_0.c`).

use super::Memory;
use super::block::{FbRegs, GmcBlock};
use crate::Gpu;
use crate::discovery::Ips;
use crate::error::{BringupError, ErrorKind, Outcome, ResultAt};
use crate::sink::Step;
use alloc::string::String;
use alloc::vec::Vec;
use barebell::gmc::hub::{HubError, VmFault};
use barebell::gmc::layout::GartPlacement;
use barebell::nbio::Nbio;
use barebell::regs::{dcn_3_2_0, mmhub_3_0_0};

/// GMC 11.0's block.
#[derive(Debug)]
pub struct GmcV11_0;

impl GmcBlock for GmcV11_0 {
    fn name(&self) -> &'static str {
        "gmc_v11_0"
    }

    /// `mmhub_v3_0_get_fb_location()`, `mmhub_v3_0_get_mc_fb_offset()`;
    /// `gmc_v11_0_vram_gtt_location()` places the GART high.
    fn fb_regs(&self, ips: &Ips) -> FbRegs {
        FbRegs {
            location: mmhub_3_0_0::MMMC_VM_FB_LOCATION_BASE,
            offset: mmhub_3_0_0::MMMC_VM_FB_OFFSET,
            offset_bases: ips.mmhub.bases,
            gart: GartPlacement::High,
        }
    }

    /// `gmc_v11_0_get_vbios_fb_size()`: the DCN 3.2.0 registers.
    fn vbios_fb_size(&self, gpu: &Gpu<'_>) -> Result<u64, BringupError> {
        let s = Step::Gmc;
        let Some(dmu) = gpu.ips.dmu else {
            return Ok(0);
        };
        let b = gpu.bus.block(dmu.bases);
        let mut v = [0u32; 3];
        for (out, r) in v.iter_mut().zip([
            dcn_3_2_0::D1VGA_CONTROL,
            dcn_3_2_0::HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION,
            dcn_3_2_0::HUBPREQ0_DCSURF_SURFACE_PITCH,
        ]) {
            *out = b.read(r).at(s)?;
            if *out == barebell::bus::ALL_ONES {
                return Err(ErrorKind::DeviceGone { register: r.name }).at(s);
            }
        }
        Ok(super::vbios_fb_size_gfx11(v[0], v[1], v[2]))
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
