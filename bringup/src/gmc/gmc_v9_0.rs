//! The gmc step's hub programming on GC 9.4.3 (MI300), in
//! `gmc_v9_0_hw_init()`'s order: the HDP's registers
//! (`hdp_v4_0_init_registers()`), an HDP flush, the fault defaults on the
//! GFXHUB of every XCC and the MMHUB of every AID
//! (`gfxhub_v1_2_set_fault_enable_default()`,
//! `mmhub_v1_8_set_fault_enable_default()`), VMID0's TLB flush on every
//! hub (`gmc_v9_0_flush_gpu_tlb()` over `vmhubs_mask`), then
//! `gmc_v9_0_gart_enable()`: the GFXHUB first (`gfxhub_v1_2_gart_enable()`,
//! each step across the XCCs), then the MMHUB (`mmhub_v1_8_gart_enable()`,
//! across the AIDs).
//!
//! The layout itself (FB, GART, VMID0 and process tables, GTT buffers) is
//! the one [`crate::gmc::run`] builds for every part, with the gfx9 PTE
//! format ([`barebell::gmc::pagetable::PteFormat::Gfx9TranslateFurther`])
//! and the GART placed `AMDGPU_GART_PLACEMENT_BEST_FIT`.
//!
//! GC 9.4.2 (Aldebaran) runs the same order with one GFXHUB v1.0
//! (`gfxhub_v1_0.c`) and one MMHUB 1.7 (`mmhub_v1_7.c`), as
//! `gmc_v9_0_set_gfxhub_funcs()` and `_set_mmhub_funcs()` choose them
//! ([`Hubs::of`]).
//!
//! Not done: the UMC's `init_registers` (RAS), `gmc_v9_0_init_golden_registers()`
//! (nothing for GC 9.4.2 or 9.4.3 in 6.12).

use crate::Gpu;
use crate::error::{BringupError, ErrorKind, ResultAt};
use crate::nbio::flush_hdp;
use crate::sink::Step;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use barebell::gmc::hub::v9::{
    self, GFXHUB_1_0, GFXHUB_1_2, HubV9Config, HubV9Regs, MMHUB_1_7, MMHUB_1_8,
};
use barebell::gmc::hub::{HubConfig, gfxhub_v1_0, gfxhub_v1_2, mmhub_v1_7, mmhub_v1_8};
use barebell::regs::Reg;

/// The hub files a gfx9 GC selects: GFXHUB v1.2 per XCC and MMHUB 1.8 per
/// AID on GC 9.4.3, GFXHUB v1.0 and MMHUB 1.7 on GC 9.4.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hubs {
    V9_4_2,
    V9_4_3,
}

impl Hubs {
    pub fn of(gc: (u8, u8, u8)) -> Option<Hubs> {
        match gc {
            (9, 4, 2) => Some(Hubs::V9_4_2),
            (9, 4, 3) => Some(Hubs::V9_4_3),
            _ => None,
        }
    }

    fn regs(self) -> (&'static HubV9Regs, &'static HubV9Regs) {
        match self {
            Hubs::V9_4_2 => (&GFXHUB_1_0, &MMHUB_1_7),
            Hubs::V9_4_3 => (&GFXHUB_1_2, &MMHUB_1_8),
        }
    }

    /// `MC_VM_FB_LOCATION_BASE` of the MMHUB (`*_get_fb_location()`),
    /// `MC_VM_FB_OFFSET` of the GFXHUB (`*_get_mc_fb_offset()`), and
    /// `_FB_LOCATION_TOP` of the MMHUB.
    fn fb(self) -> (Reg, Reg, Reg) {
        use barebell::regs::{gc_9_4_2_vm, gc_9_4_3_vm, mmhub_1_7_0, mmhub_1_8_0};
        match self {
            Hubs::V9_4_2 => (
                mmhub_1_7_0::MC_VM_FB_LOCATION_BASE,
                gc_9_4_2_vm::MC_VM_FB_OFFSET,
                mmhub_1_7_0::MC_VM_FB_LOCATION_TOP,
            ),
            Hubs::V9_4_3 => (
                mmhub_1_8_0::MC_VM_FB_LOCATION_BASE,
                gc_9_4_3_vm::MC_VM_FB_OFFSET,
                mmhub_1_8_0::MC_VM_FB_LOCATION_TOP,
            ),
        }
    }

    fn of_gpu(gpu: &Gpu<'_>) -> Result<Hubs, BringupError> {
        let gc = gpu.ips.gc.version.triple();
        Hubs::of(gc)
            .ok_or(ErrorKind::Unsupported {
                what: "gfx9 hubs of GC",
                version: gc,
            })
            .at(Step::Gmc)
    }
}
use barebell::ip::hw_id;
use barebell::nbio::Nbio;
use barebell::regs::hdp_4_4_2;

/// Programs the GFXHUB of every XCC and the MMHUB of every AID for the
/// VMID0 layout `map`; returns what the step reports as enabled.
pub fn hw_init(
    gpu: &Gpu<'_>,
    nbio: &Nbio,
    map: &HubConfig,
    vram_start: u64,
) -> Result<String, BringupError> {
    let s = Step::Gmc;
    let bus = &gpu.bus;
    let clock = gpu.platform.clock();
    let xcc_ips = gpu.ips.xccs();
    let aid_ips = gpu.ips.aids(hw_id::MMHUB);
    let xccs: Vec<_> = xcc_ips.iter().map(|x| bus.block(x.bases)).collect();
    let aids: Vec<_> = aid_ips.iter().map(|a| bus.block(a.bases)).collect();
    let cfg = HubV9Config::new(*map);
    let hubs = Hubs::of_gpu(gpu)?;
    let (gfxhub, mmhub) = hubs.regs();
    // hdp_v4_0_init_registers() on HDP 4.4.2 (bare metal): the flush
    // invalidates the cache, and the non-surface base is this GPU's VRAM
    // start (`adev->gmc.vram_start`, past the FB start by the node's
    // segment on an XGMI hive member).
    let hdp = gpu
        .ips
        .all
        .iter()
        .find(|i| i.hw_id == hw_id::HDP && i.instance == 0)
        .ok_or(ErrorKind::MissingIp { ip: "HDP" })
        .at(s)?;
    let h = bus.block(hdp.bases);
    h.update(
        hdp_4_4_2::HDP_MISC_CNTL,
        hdp_4_4_2::FLUSH_INVALIDATE_CACHE,
        hdp_4_4_2::FLUSH_INVALIDATE_CACHE,
    )
    .at(s)?;
    h.write(hdp_4_4_2::HDP_NONSURFACE_BASE, (vram_start >> 8) as u32)
        .at(s)?;
    h.write(hdp_4_4_2::HDP_NONSURFACE_BASE_HI, (vram_start >> 40) as u32)
        .at(s)?;
    flush_hdp(bus, nbio).at(s)?;
    // amdgpu_vm_fault_stop's default: faults go to the default page.
    match hubs {
        Hubs::V9_4_2 => {
            gfxhub_v1_0::set_fault_enable_default(&xccs, true).at(s)?;
            mmhub_v1_7::set_fault_enable_default(&aids, true).at(s)?;
        }
        Hubs::V9_4_3 => {
            gfxhub_v1_2::set_fault_enable_default(&xccs, true).at(s)?;
            mmhub_v1_8::set_fault_enable_default(&aids, true).at(s)?;
        }
    }
    for x in &xccs {
        v9::flush_gpu_tlb(x, clock, gfxhub, 0, 0).at(s)?;
    }
    for a in &aids {
        v9::flush_gpu_tlb(a, clock, mmhub, 0, 0).at(s)?;
    }
    match hubs {
        Hubs::V9_4_2 => {
            gfxhub_v1_0::gart_enable(&xccs, &cfg).at(s)?;
            mmhub_v1_7::gart_enable(&aids, &cfg).at(s)?;
        }
        Hubs::V9_4_3 => {
            gfxhub_v1_2::gart_enable(&xccs, &cfg).at(s)?;
            mmhub_v1_8::gart_enable(&aids, &cfg).at(s)?;
        }
    }
    Ok(match hubs {
        Hubs::V9_4_2 => format!("{} and {}", gfxhub.name, mmhub.name),
        Hubs::V9_4_3 => format!(
            "{} on {} XCCs and {} on {} AIDs",
            gfxhub.name,
            xccs.len(),
            mmhub.name,
            aids.len()
        ),
    })
}

/// GMC 9.0's block as GC 9.4.3 uses it.
#[derive(Debug)]
pub struct GmcV9_0;

impl super::block::GmcBlock for GmcV9_0 {
    fn name(&self) -> &'static str {
        "gmc_v9_0"
    }

    /// `mmhub_v1_8_get_fb_location()` on AID 0's MMHUB; the FB offset from
    /// XCC 0's GFXHUB (`gfxhub_v1_2_get_mc_fb_offset()`, which
    /// `gmc_v9_0_vram_gtt_location()` uses); the GART placed
    /// `AMDGPU_GART_PLACEMENT_BEST_FIT`.
    fn fb_regs(&self, ips: &crate::discovery::Ips) -> super::block::FbRegs {
        let (location, offset, _) = Hubs::of(ips.gc.version.triple())
            .unwrap_or(Hubs::V9_4_3)
            .fb();
        super::block::FbRegs {
            location,
            offset,
            offset_bases: ips.gc.bases,
            gart: barebell::gmc::layout::GartPlacement::BestFit,
        }
    }

    fn vbios_fb_size(&self, gpu: &Gpu<'_>) -> Result<u64, BringupError> {
        Err(barebell::ip::Unsupported::new(
            "the VBIOS framebuffer size (gmc_v9_0_get_vbios_fb_size)",
            gpu.ips.generation,
        ))
        .at(Step::Gmc)
    }

    /// GC 9.4.3's hubs (GFXHUB v1.2 per XCC, MMHUB 1.8 per AID) are
    /// programmed by [`hw_init`] with their own tables.
    fn hub_tables(
        &self,
        _: &crate::discovery::Ips,
    ) -> Result<Option<super::Gfx11Hubs>, BringupError> {
        Ok(None)
    }

    fn enable_hubs(
        &self,
        gpu: &Gpu<'_>,
        nbio: &Nbio,
        m: &super::Memory<'_>,
    ) -> Result<String, BringupError> {
        hw_init(gpu, nbio, &m.cfg, m.mc.vram_start)
    }

    /// Every XCC's GFXHUB and every AID's MMHUB, once the gmc step
    /// programmed them.
    fn latched_faults(
        &self,
        gpu: &Gpu<'_>,
    ) -> Result<Vec<barebell::gmc::hub::VmFault>, barebell::gmc::hub::HubError> {
        let mut faults = Vec::new();
        if gpu.memory.is_none() {
            return Ok(faults);
        }
        let (gfxhub, mmhub) = Hubs::of(gpu.ips.gc.version.triple())
            .unwrap_or(Hubs::V9_4_3)
            .regs();
        for x in gpu.ips.xccs() {
            faults.extend(v9::read_fault(&gpu.bus, &x.bases, gfxhub)?);
        }
        for a in gpu.ips.aids(hw_id::MMHUB) {
            faults.extend(v9::read_fault(&gpu.bus, &a.bases, mmhub)?);
        }
        Ok(faults)
    }

    /// `gfxhub_v1_2_get_xgmi_info()` on XCC 0 (`amdgpu_device_init()`
    /// calls it early, "to decide the reset behavior", long before
    /// `gmc_v9_0_mc_init()` uses it), and for a hive member the
    /// FB's top (`mmhub_v1_8_get_fb_location()`), which spans every node.
    fn hive(&self, gpu: &Gpu<'_>) -> Result<Option<super::block::Hive>, BringupError> {
        let s = Step::Gmc;
        let xcc0 = gpu
            .ips
            .xccs()
            .first()
            .map(|x| x.bases)
            .unwrap_or(gpu.ips.gc.bases);
        let hubs = Hubs::of_gpu(gpu)?;
        let xgmi = match hubs {
            Hubs::V9_4_2 => gfxhub_v1_0::get_xgmi_info(&gpu.bus.block(xcc0)),
            Hubs::V9_4_3 => gfxhub_v1_2::get_xgmi_info(&gpu.bus.block(xcc0)),
        }
        .map_err(ErrorKind::Xgmi)
        .at(s)?;
        let Some(xgmi) = xgmi else {
            return Ok(None);
        };
        let top = hubs.fb().2;
        let fb_location_top = gpu.bus.block(gpu.ips.mmhub.bases).read(top).at(s)?;
        if fb_location_top == barebell::bus::ALL_ONES {
            return Err(ErrorKind::DeviceGone { register: top.name }).at(s);
        }
        Ok(Some(super::block::Hive {
            xgmi,
            fb_location_top,
        }))
    }

    /// `mmhub_v1_8_gart_disable()` on every AID (`mmhub_v1_7_` on
    /// Aldebaran's one MMHUB).
    fn mmhub_off(&self, gpu: &Gpu<'_>) -> crate::error::Outcome {
        if gpu.entered >= Step::Gmc {
            let (_, mmhub) = Hubs::of(gpu.ips.gc.version.triple())
                .unwrap_or(Hubs::V9_4_3)
                .regs();
            let what = if mmhub == &MMHUB_1_8 {
                "AIDs"
            } else {
                "MMHUB instance"
            };
            hubs_off_v9(&gpu.bus, &gpu.ips.aids(hw_id::MMHUB), mmhub, what)
        } else {
            crate::error::Outcome::NotNeeded("the MMHUB was never programmed")
        }
    }
}

/// GC 9.4.3's gfx9 hubs off on every instance ([`v9::gart_disable`]).
pub(crate) fn hubs_off_v9(
    bus: &crate::bus::Bus<'_>,
    ips: &[barebell::discovery::IpInfo],
    hub: &v9::HubV9Regs,
    what: &str,
) -> crate::error::Outcome {
    let blocks: Vec<_> = ips.iter().map(|i| bus.block(i.bases)).collect();
    crate::error::outcome(v9::gart_disable(&blocks, hub).map(|n| {
        alloc::format!(
            "{} on {} {what}: 16 contexts each off ({n} were enabled), L1 TLB and L2 cache off",
            hub.name,
            blocks.len()
        )
    }))
}
