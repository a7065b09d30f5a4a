//! The GFX block (GC: RLC, MEC, the schedulers, the GFXHUB), chosen once
//! at discovery by the GC version the table names, as Linux's
//! `amdgpu_discovery_set_gc_ip_blocks()` picks `gfx_v11_0_ip_block`,
//! `gfx_v12_0_ip_block` or `gfx_v9_4_3_ip_block`.
//!
//! [`GfxBlock`] is the bring-up's counterpart of the GFX half of Linux's
//! `amd_ip_funcs`: the steps that differ between GC versions (the rlc
//! step, the schedulers and the user queue, the MEC halt and the GFXHUB
//! off in the teardown) and the mappings the version's scheduler offers.
//! The bring-up's step list calls them and never asks which version it
//! has.
//!
//! One file (or folder) per GC version:
//! - [`gfx_v11_0`]: GC 11.0 and GC 12.0 (Navi 3x, Navi 4x). Their
//!   differences (RS64 MEC registers, MES API v11 vs v12, golden values)
//!   live in the runtime's version tables, as tinygrad's `AM_GFX` drives
//!   both from one class; Linux has two files.
//! - [`gfx_v9_4_3`]: GC 9.4.3 (MI300X, MI308X): every XCC, no MES, the
//!   HWS on the MEC.
//! - [`gfx_v9_0`]: GC 9.4.2 (Aldebaran: MI210): one GC, no MES; its rings
//!   and queue steps are GC 9.4.3's with GC 9.4.2's description
//!   ([`gfx_v9_4_3::xcc::V9Gc`]).

pub mod gfx_v11_0;
pub mod gfx_v9_0;
pub mod gfx_v9_4_3;

use crate::error::{BringupError, ErrorKind, Outcome};
use crate::firmware::{FirmwareSet, FirmwareSource};
use crate::gmc::Memory;
use crate::queue::Mapping;
use crate::sink::Sink;
use crate::{Gpu, Options};
use barebell::mem::DeviceArena;
use barebell::nbio::Nbio;

/// What the bring-up asks of a GC version.
pub trait GfxBlock: Sync + core::fmt::Debug {
    /// The version family, as messages name it ("GC 9.4.3").
    fn name(&self) -> &'static str;

    /// The mappings its scheduler offers, best-proven first.
    fn mappings(&self) -> &'static [Mapping];

    /// Why `mapping` is not among [`GfxBlock::mappings`], in the user's
    /// words (checked before the device is touched); `gc` is the
    /// discovered GC version.
    fn refuse(&self, mapping: Mapping, gc: (u8, u8, u8)) -> ErrorKind;

    /// Step 7, rlc: from the PSP's autoload to a running MEC (and, where
    /// the GFXHUB is part of it, the GFXHUB). `opts` says which steps
    /// follow: where Linux starts the MEC together with what runs on it
    /// (GC 9.4.3's KIQ), the block may leave that to the rings step.
    #[allow(clippy::too_many_arguments)]
    fn rlc(
        &self,
        gpu: &Gpu<'_>,
        mem: &Memory<'_>,
        nbio: &Nbio,
        set: &FirmwareSet,
        fw: &dyn FirmwareSource,
        opts: &Options,
        sink: &dyn Sink,
    ) -> Result<(), BringupError>;

    /// Steps 8 to 10: the schedulers (MES, or the KIQs and the HWS), the
    /// rings, then the user queue mapped by `mapping` with a first packet
    /// through it; stops where `opts` says. `area` is the ring area's
    /// driver part (VMID0 only), `uarea` its user part.
    #[allow(clippy::too_many_arguments)]
    fn queue_steps<'p>(
        &self,
        gpu: &mut Gpu<'p>,
        mem: &Memory<'p>,
        area: DeviceArena<'p>,
        uarea: DeviceArena<'p>,
        set: &FirmwareSet,
        fw: &dyn FirmwareSource,
        mapping: Mapping,
        opts: &Options,
        sink: &'p dyn Sink,
    ) -> Result<(), BringupError>;

    /// Teardown: the MEC halted (and whatever scheduler state the version
    /// keeps in the [`Gpu`] taken down first).
    fn halt_mec(&self, gpu: &mut Gpu<'_>) -> Outcome;

    /// Teardown: the GFXHUB's translation off.
    fn gfxhub_off(&self, gpu: &Gpu<'_>) -> Outcome;

    /// After the process tables changed ([`Gpu::map_process`]): the TLBs
    /// of every VMID a user queue may run in (KFD's, from the GC's first
    /// KFD VMID to 15) flushed on the GFXHUB of every XCC, as KFD's
    /// `kfd_flush_tlb()` asks amdgpu for the process's VMIDs after each
    /// map and unmap.
    fn flush_process_tlbs(&self, gpu: &Gpu<'_>) -> Result<(), BringupError>;
}

/// The block for GC `version`, or `None` if barebell has none.
pub fn block_for(version: (u8, u8, u8)) -> Option<&'static dyn GfxBlock> {
    match version {
        (11, _, _) | (12, _, _) => Some(&gfx_v11_0::GfxV11),
        // GC 9.4.3 only: 9.4.4 and 9.5.0 differ in firmware and no part
        // here declares them.
        (9, 4, 3) => Some(&gfx_v9_4_3::GfxV9_4_3),
        // GC 9.4.2 (Aldebaran): `gfx_v9_0_ip_block`.
        (9, 4, 2) => Some(&gfx_v9_0::GfxV9_0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::block_for;
    use crate::queue::Mapping;

    #[test]
    fn each_version_offers_its_schedulers_mappings() {
        let navi = block_for((11, 0, 0)).unwrap();
        // One block for GC 11 and GC 12: the name is how a test tells
        // which block discovery chose.
        assert_eq!(navi.name(), "GC 11/12");
        assert_eq!(block_for((12, 0, 1)).unwrap().name(), "GC 11/12");
        assert!(navi.mappings().contains(&Mapping::Mes));
        assert!(!navi.mappings().contains(&Mapping::Hws));
        let mi300 = block_for((9, 4, 3)).unwrap();
        assert!(mi300.mappings().contains(&Mapping::Hws));
        assert!(!mi300.mappings().contains(&Mapping::Mes));
        // GC 9.4.2 (Aldebaran): GC 9.4.3's mappings, no MES.
        let mi210 = block_for((9, 4, 2)).unwrap();
        assert_eq!(mi210.name(), "GC 9.4.2");
        assert_eq!(mi210.mappings(), mi300.mappings());
        assert!(!mi210.mappings().contains(&Mapping::Mes));
        assert!(block_for((9, 4, 1)).is_none());
        assert!(block_for((10, 3, 0)).is_none());
    }
}
