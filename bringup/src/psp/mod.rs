//! Step 4, psp: firmware into the GPU through the PSP, in the order of
//! `psp_hw_start()` and `psp_load_non_psp_fw()`: the bootloader components
//! of the sOS bundle, the GPCOM ring, LOAD_TOC and the TMR it sizes (VRAM
//! allocated after the answer, as `psp_tmr_init()` does), the SMU
//! firmware and SETUP_TMR in the MP0 version's order, LOAD_IP_FW for
//! every GFX ucode, then AUTOLOAD_RLC. The PSP reaches its buffers through the MMHUB's VMID0
//! (GTT), so a command that never completes is reported with the fault
//! the MMHUB latched.

pub mod psp_v13_0;
pub mod psp_v13_0_2;
pub mod psp_v13_0_6;

use crate::Gpu;
use crate::error::{BringupError, ErrorKind, LayoutError, ResultAt};
use crate::firmware::{self, FirmwareError, FirmwareSet, FirmwareSource};
use crate::gmc::Memory;
use crate::sink::{Sink, Step};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use barebell::mem::VramAllocator;
use barebell::psp::{self, FaultHub, Image, Plan, Psp, PspError, PspRegs, Tmr, TmrSource};

/// `psp_tmr_init()`'s allocation, made once LOAD_TOC has answered: VRAM,
/// `PSP_TMR_ALIGNMENT`, exactly the size asked for. The second field is
/// `MMMC_VM_FB_OFFSET`: the PSP gets the TMR's physical address,
/// `amdgpu_gmc_vram_pa()` in `psp_prep_tmr_cmd_buf()`.
struct VramTmr<'a>(&'a mut VramAllocator, u64);

impl TmrSource for VramTmr<'_> {
    fn tmr(&mut self, size: u32) -> Result<Tmr, PspError> {
        let free = self.0.free();
        let at = self
            .0
            .alloc(u64::from(size), psp::TMR_ALIGN)
            .map_err(|_| PspError::TooLarge {
                what: "TMR in the VRAM left",
                len: size as usize,
                capacity: usize::try_from(free).unwrap_or(usize::MAX),
            })?;
        Ok(Tmr {
            mc_addr: at.mc,
            capacity: size,
            phys_addr: at.offset + self.1,
        })
    }
}

/// The firmware files the discovered versions name.
pub fn firmware_set(gpu: &Gpu<'_>) -> Result<FirmwareSet, BringupError> {
    let ips = &gpu.ips;
    let gc = ips.gc.version.triple();
    FirmwareSet::for_versions(
        ips.mp0.version.triple(),
        ips.mp1.version.triple(),
        gc,
        ips.sdma0.map(|d| d.version.triple()),
    )
    .ok_or(ErrorKind::Unsupported {
        what: "GC",
        version: gc,
    })
    .at(Step::Psp)
}

/// Loads the firmware the discovered versions name by the MP0 version's
/// block; returns the set for the MES start.
pub fn run(
    gpu: &Gpu<'_>,
    mem: &mut Memory<'_>,
    fw: &dyn FirmwareSource,
    sink: &dyn Sink,
) -> Result<FirmwareSet, BringupError> {
    let set = firmware_set(gpu)?;
    gpu.blocks.psp.load(gpu, mem, fw, set, sink)
}

/// What the bring-up asks of a PSP (MP0) version, chosen with the other
/// blocks after discovery, as Linux's `amdgpu_discovery_set_psp_ip_blocks()`
/// picks `psp_v13_0` or `psp_v14_0` by MP0's version.
pub trait PspBlock: Sync + core::fmt::Debug {
    /// The version, as Linux names the block.
    fn name(&self) -> &'static str;
    /// The psp step: `set` into the device; the set back for later steps.
    fn load(
        &self,
        gpu: &Gpu<'_>,
        mem: &mut Memory<'_>,
        fw: &dyn FirmwareSource,
        set: FirmwareSet,
        sink: &dyn Sink,
    ) -> Result<FirmwareSet, BringupError>;
}

/// The block for MP0 `version`, or `None` if barebell has none.
pub fn block_for(version: (u8, u8, u8)) -> Option<&'static dyn PspBlock> {
    match version {
        (13, 0, 2) => Some(&psp_v13_0_2::PspV13_0_2),
        (13, 0, 6) => Some(&psp_v13_0_6::PspV13_0_6),
        v if Plan::for_version(v).is_some() && PspRegs::for_version(v).is_some() => {
            Some(&psp_v13_0::PspV13_0)
        }
        _ => None,
    }
}

/// `smu_hw_init()` (the SMU block comes right after the PSP in Linux's IP
/// order) → `smu_smc_hw_setup()` → `smu_system_features_control(smu,
/// true)`: `EnableAllSmuFeatures` to the PMFW the PSP just loaded
/// (`smu_v13_0_system_features_control()`, `smu_v14_0_…`); tinygrad's
/// `AM_SMU.init_hw()` sends it too. MP1 13.0.6 (MI300) takes it on a
/// discrete part (`smu_v13_0_6_system_features_control()`). The driver-table and allowed-mask
/// messages `smu_smc_hw_setup()` sends before it are left out: barebell
/// reads no SMU table and Linux's allowed mask is every feature.
pub(super) fn enable_smu_features(gpu: &Gpu<'_>, sink: &dyn Sink) -> Result<(), BringupError> {
    let s = Step::Psp;
    let v = gpu.ips.mp1.version.triple();
    let mp1 = barebell::smu::Mp1::for_version(v)
        .ok_or(ErrorKind::Unsupported {
            what: "the SMU mailbox of MP1",
            version: v,
        })
        .at(s)?;
    barebell::smu::enable_all_features(&gpu.bus, gpu.platform.clock(), mp1, &gpu.ips.mp1.bases)
        .map_err(ErrorKind::SmuFeatures)
        .at(s)?;
    sink.step(
        s,
        format_args!("{}: EnableAllSmuFeatures answered", mp1.name),
    );
    Ok(())
}

#[cfg(test)]
mod block_tests {
    use super::block_for;

    #[test]
    fn each_mp0_version_gets_its_block() {
        assert_eq!(block_for((13, 0, 6)).unwrap().name(), "psp_v13_0_6");
        assert_eq!(block_for((13, 0, 0)).unwrap().name(), "psp_v13_0");
        assert_eq!(block_for((14, 0, 2)).unwrap().name(), "psp_v13_0");
        assert_eq!(block_for((13, 0, 2)).unwrap().name(), "psp_v13_0_2");
        assert!(block_for((11, 0, 4)).is_none());
    }
}
