//! MMHUB 1.8: one VM hub per AID on GC 9.4.3 parts, programmed as
//! `mmhub_v1_8_gart_enable()` does for the AIDs of `adev->aid_mask`.
//!
//! `aids` are the MMHUB blocks of the AIDs, in instance order (Linux:
//! `adev->reg_offset[MMHUB_HWIP][i]`); the caller derives their bases
//! from discovery. The one step GFXHUB v1.2 lacks is the DAGB snoop
//! override for the SDMA client ([`init_snoop_override_regs`]).

use super::HubError;
use super::v9::{self, HubV9Config, MMHUB_1_8};
use crate::bus::{ALL_ONES, Block, RegisterBus};
use crate::regs::mmhub_1_8_0 as mm;

/// DAGB instances `mmhub_v1_8_init_snoop_override_regs()` walks.
pub const DAGB_INSTANCES: u32 = 5;
/// "SDMA client is BIT15".
pub const SDMA_CLIENT: u32 = 1 << 15;

/// The DAGB snoop-override registers of one MMHUB header: instance 0's
/// pair and instance 1's first register (for the distance).
#[derive(Debug, Clone, Copy)]
pub struct SnoopRegs {
    pub dagb0: crate::regs::Reg,
    pub dagb0_value: crate::regs::Reg,
    pub dagb1: crate::regs::Reg,
}

/// MMHUB 1.8's.
pub const SNOOP_1_8: SnoopRegs = SnoopRegs {
    dagb0: mm::DAGB0_WRCLI_GPU_SNOOP_OVERRIDE,
    dagb0_value: mm::DAGB0_WRCLI_GPU_SNOOP_OVERRIDE_VALUE,
    dagb1: mm::DAGB1_WRCLI_GPU_SNOOP_OVERRIDE,
};

/// `mmhub_v1_8_init_snoop_override_regs()` (and `mmhub_v1_7_`'s, the
/// same loop on MMHUB 1.7's offsets): "Set snoop bit for SDMA so that
/// SDMA writes probe-invalidates RW lines", on every instance's five
/// DAGBs.
pub fn init_snoop_override_regs<B: RegisterBus + ?Sized>(
    aids: &[Block<'_, B>],
    regs: &SnoopRegs,
) -> Result<(), HubError> {
    let distance = regs.dagb1.offset - regs.dagb0.offset;
    for r in aids {
        for j in 0..DAGB_INSTANCES {
            for reg in [regs.dagb0, regs.dagb0_value] {
                let at = r.offset_nth(reg, j, distance)?;
                let v = r.bus.read32(at);
                if v == ALL_ONES {
                    return Err(HubError::DeviceGone { name: reg.name });
                }
                r.bus.write32(at, v | SDMA_CLIENT);
            }
        }
    }
    Ok(())
}

/// `mmhub_v1_8_gart_enable()` on bare metal: each step across every AID
/// before the next step.
pub fn gart_enable<B: RegisterBus + ?Sized>(
    aids: &[Block<'_, B>],
    cfg: &HubV9Config,
) -> Result<(), HubError> {
    cfg.check()?;
    let hub = &MMHUB_1_8;
    v9::init_gart_aperture_regs(aids, hub, cfg)?;
    v9::init_system_aperture_regs(aids, hub, cfg)?;
    v9::init_tlb_regs(aids, hub)?;
    v9::init_cache_regs(aids, hub)?;
    init_snoop_override_regs(aids, &SNOOP_1_8)?;
    v9::enable_system_domain(aids, hub, cfg)?;
    v9::disable_identity_aperture(aids, hub)?;
    v9::setup_vmid_config(aids, hub)?;
    v9::program_invalidation(aids, hub)
}

/// `mmhub_v1_8_set_fault_enable_default()`.
pub fn set_fault_enable_default<B: RegisterBus + ?Sized>(
    aids: &[Block<'_, B>],
    value: bool,
) -> Result<(), HubError> {
    v9::set_fault_enable_default(aids, &MMHUB_1_8, value)
}

/// `mmhub_v1_8_setup_vm_pt_regs()`: `vmid`'s page-table base on every
/// AID's MMHUB (what KFD's `set_vm_context_page_table_base` reaches,
/// `kgd_gfx_v9_set_vm_context_page_table_base()`, for both hubs).
pub fn setup_vm_pt_regs<B: RegisterBus + ?Sized>(
    aids: &[Block<'_, B>],
    vmid: u32,
    page_table_base: u64,
) -> Result<(), HubError> {
    super::v9::setup_vm_pt_regs(aids, &MMHUB_1_8, vmid, page_table_base)
}

/// Register distance facts for the DAGB array and the snoop bit.
pub const FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        "mmhub_1_8_0_offset.h",
        "regDAGB4_WRCLI_GPU_SNOOP_OVERRIDE - regDAGB0_WRCLI_GPU_SNOOP_OVERRIDE",
        (4 * (mm::DAGB1_WRCLI_GPU_SNOOP_OVERRIDE.offset
            - mm::DAGB0_WRCLI_GPU_SNOOP_OVERRIDE.offset)) as u64,
    ),
    barebell_facts::Fact::constant(
        "mmhub_1_8_0_offset.h",
        "regDAGB4_WRCLI_GPU_SNOOP_OVERRIDE_VALUE - regDAGB0_WRCLI_GPU_SNOOP_OVERRIDE_VALUE",
        (4 * (mm::DAGB1_WRCLI_GPU_SNOOP_OVERRIDE.offset
            - mm::DAGB0_WRCLI_GPU_SNOOP_OVERRIDE.offset)) as u64,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::RefCell;

    /// A register file of 0x4000 dwords.
    struct Regs(RefCell<[u32; 0x4000]>);
    impl RegisterBus for Regs {
        fn read32(&self, at: usize) -> u32 {
            self.0.borrow()[at / 4 % 0x4000]
        }
        fn write32(&self, at: usize, v: u32) {
            self.0.borrow_mut()[at / 4 % 0x4000] = v;
        }
    }

    /// `mmhub_v1_8_init_snoop_override_regs()` ORs the SDMA client bit
    /// into what the registers hold: a second init (a re-init without a
    /// reset) leaves it set, and other bits stay.
    #[test]
    fn the_sdma_snoop_bit_is_set_and_stays_set() {
        let regs = Regs(RefCell::new([0; 0x4000]));
        let bases = crate::regs::IpBases([0; crate::regs::MAX_SEGMENTS]);
        let aids = [Block::new(&regs, bases)];
        let distance = SNOOP_1_8.dagb1.offset - SNOOP_1_8.dagb0.offset;
        let at = |reg: crate::regs::Reg, j: u32| ((reg.offset + j * distance) * 4) as usize;
        regs.write32(at(SNOOP_1_8.dagb0, 2), 0x8000_0000);
        for _ in 0..2 {
            init_snoop_override_regs(&aids, &SNOOP_1_8).unwrap();
            for j in 0..DAGB_INSTANCES {
                for reg in [SNOOP_1_8.dagb0, SNOOP_1_8.dagb0_value] {
                    assert_eq!(
                        regs.read32(at(reg, j)) & SDMA_CLIENT,
                        SDMA_CLIENT,
                        "{} {j}",
                        reg.name
                    );
                }
            }
        }
        assert_eq!(
            regs.read32(at(SNOOP_1_8.dagb0, 2)) & 0x8000_0000,
            0x8000_0000
        );
    }
}
