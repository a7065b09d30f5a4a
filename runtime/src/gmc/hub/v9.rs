//! The gfx9 hubs of GC 9.4.3 parts: what GFXHUB v1.2 (one per XCC,
//! [`super::gfxhub_v1_2`]) and MMHUB 1.8 (one per AID,
//! [`super::mmhub_v1_8`]) share: the register table type, the
//! configuration, the init steps both files run with the same values,
//! and the TLB flush of `gmc_v9_0_flush_gpu_tlb()`.
//!
//! Linux's `gfxhub_v1_2_xcc_*()` and `mmhub_v1_8_*()` helpers each loop
//! over all instances (`for_each_inst(i, xcc_mask)` / `aid_mask`), and
//! `*_gart_enable()` calls the helpers one after the other, so the
//! registers are written step by step across instances: every
//! instance's aperture, then every instance's TLB control, and so on.
//! The steps here take the slice of per-instance [`Block`]s and keep that
//! order.
//!
//! Bare metal, dGPU (MI300X/MI308X): the SR-IOV branches are skipped,
//! `adev->gmc.pdb0_bo` is null (only `xgmi.connected_to_cpu` parts
//! allocate it, `gmc_v9_0_gart_init()`), so the FB/AGP-disable writes of
//! the pdb0 case are not made, and `VMC_TAP_P[DT]E_REQUEST_PHYSICAL` stay
//! 0 (not `connected_to_cpu`, not `is_app_apu`).

use crate::bus::{ALL_ONES, Block, RegCondition, RegisterBus, WaitError, poll};
use crate::gmc::hub::invalidate::{GART_ENGINE, INVALIDATE_TIMEOUT_NS, InvalidateError};
use crate::gmc::hub::{HubConfig, HubError};
use crate::gmc::pte_v9;
use crate::regs::Reg;
use crate::regs::gc_9_4_3_vm::{
    McVmMxL1TlbCntl, VmContextCntl, VmInvalidateReq, VmL2Cntl, VmL2Cntl2, VmL2Cntl3, VmL2Cntl4,
    VmL2ProtectionFaultCntl, VmL2ProtectionFaultCntl2,
};
use crate::regs::{gc_9_4_2_vm as gc2, gc_9_4_3_vm as gc, mmhub_1_7_0 as mm7, mmhub_1_8_0 as mm};
use crate::time::Clock;

/// `regVM_L2_CNTL3_DEFAULT` and `regVM_L2_CNTL4_DEFAULT` as
/// `gfxhub_v1_2.c` and `mmhub_v1_8.c` both define them (no GC 9.4.3
/// `_default.h` exists in Linux 6.12; cited from the `.c` files).
pub const L2_CNTL3_DEFAULT: u32 = 0x8010_0007;
pub const L2_CNTL4_DEFAULT: u32 = 0x0000_00c1;
/// `MTYPE_UC` (`vega10_enum.h`), what the L1 TLB control gets.
pub const MTYPE_UC: u8 = pte_v9::MTYPE_UC;

/// One gfx9 hub's registers (GFXHUB v1.2 and MMHUB 1.8 name them alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubV9Regs {
    pub name: &'static str,
    pub ctx0_base_lo: Reg,
    pub ctx0_base_hi: Reg,
    pub ctx0_start_lo: Reg,
    pub ctx0_start_hi: Reg,
    pub ctx0_end_lo: Reg,
    pub ctx0_end_hi: Reg,
    pub ctx1_base_lo: Reg,
    pub ctx1_start_lo: Reg,
    pub ctx1_start_hi: Reg,
    pub ctx1_end_lo: Reg,
    pub ctx1_end_hi: Reg,
    pub agp_base: Reg,
    pub agp_bot: Reg,
    pub agp_top: Reg,
    pub aperture_low: Reg,
    pub aperture_high: Reg,
    pub default_addr_lsb: Reg,
    pub default_addr_msb: Reg,
    pub fault_default_lo: Reg,
    pub fault_default_hi: Reg,
    pub fault_cntl: Reg,
    pub fault_cntl2: Reg,
    pub fault_status: Reg,
    pub fault_addr_lo: Reg,
    pub fault_addr_hi: Reg,
    pub l1_tlb_cntl: Reg,
    pub l2_cntl: Reg,
    pub l2_cntl2: Reg,
    pub l2_cntl3: Reg,
    pub l2_cntl4: Reg,
    pub ctx0_cntl: Reg,
    pub ctx1_cntl: Reg,
    pub identity_low_lo: Reg,
    pub identity_low_hi: Reg,
    pub identity_high_lo: Reg,
    pub identity_high_hi: Reg,
    pub identity_offset_lo: Reg,
    pub identity_offset_hi: Reg,
    pub inv_eng0_range_lo: Reg,
    pub inv_eng0_range_hi: Reg,
    pub inv_eng1_range_lo: Reg,
    pub inv_eng0_sem: Reg,
    pub inv_eng0_req: Reg,
    pub inv_eng1_req: Reg,
    pub inv_eng0_ack: Reg,
}

impl HubV9Regs {
    /// `hub->ctx_distance`.
    pub const fn ctx_distance(&self) -> u32 {
        self.ctx1_cntl.offset - self.ctx0_cntl.offset
    }
    /// `hub->ctx_addr_distance`.
    pub const fn ctx_addr_distance(&self) -> u32 {
        self.ctx1_base_lo.offset - self.ctx0_base_lo.offset
    }
    /// `hub->eng_distance`.
    pub const fn eng_distance(&self) -> u32 {
        self.inv_eng1_req.offset - self.inv_eng0_req.offset
    }
    /// `hub->eng_addr_distance`.
    pub const fn eng_addr_distance(&self) -> u32 {
        self.inv_eng1_range_lo.offset - self.inv_eng0_range_lo.offset
    }
}

macro_rules! hub_v9 {
    ($name:literal, $m:ident) => {
        HubV9Regs {
            name: $name,
            ctx0_base_lo: $m::VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
            ctx0_base_hi: $m::VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
            ctx0_start_lo: $m::VM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
            ctx0_start_hi: $m::VM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
            ctx0_end_lo: $m::VM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
            ctx0_end_hi: $m::VM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
            ctx1_base_lo: $m::VM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32,
            ctx1_start_lo: $m::VM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32,
            ctx1_start_hi: $m::VM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32,
            ctx1_end_lo: $m::VM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32,
            ctx1_end_hi: $m::VM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32,
            agp_base: $m::MC_VM_AGP_BASE,
            agp_bot: $m::MC_VM_AGP_BOT,
            agp_top: $m::MC_VM_AGP_TOP,
            aperture_low: $m::MC_VM_SYSTEM_APERTURE_LOW_ADDR,
            aperture_high: $m::MC_VM_SYSTEM_APERTURE_HIGH_ADDR,
            default_addr_lsb: $m::MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB,
            default_addr_msb: $m::MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB,
            fault_default_lo: $m::VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32,
            fault_default_hi: $m::VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32,
            fault_cntl: $m::VM_L2_PROTECTION_FAULT_CNTL,
            fault_cntl2: $m::VM_L2_PROTECTION_FAULT_CNTL2,
            fault_status: $m::VM_L2_PROTECTION_FAULT_STATUS,
            fault_addr_lo: $m::VM_L2_PROTECTION_FAULT_ADDR_LO32,
            fault_addr_hi: $m::VM_L2_PROTECTION_FAULT_ADDR_HI32,
            l1_tlb_cntl: $m::MC_VM_MX_L1_TLB_CNTL,
            l2_cntl: $m::VM_L2_CNTL,
            l2_cntl2: $m::VM_L2_CNTL2,
            l2_cntl3: $m::VM_L2_CNTL3,
            l2_cntl4: $m::VM_L2_CNTL4,
            ctx0_cntl: $m::VM_CONTEXT0_CNTL,
            ctx1_cntl: $m::VM_CONTEXT1_CNTL,
            identity_low_lo: $m::VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32,
            identity_low_hi: $m::VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32,
            identity_high_lo: $m::VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32,
            identity_high_hi: $m::VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32,
            identity_offset_lo: $m::VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32,
            identity_offset_hi: $m::VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32,
            inv_eng0_range_lo: $m::VM_INVALIDATE_ENG0_ADDR_RANGE_LO32,
            inv_eng0_range_hi: $m::VM_INVALIDATE_ENG0_ADDR_RANGE_HI32,
            inv_eng1_range_lo: $m::VM_INVALIDATE_ENG1_ADDR_RANGE_LO32,
            inv_eng0_sem: $m::VM_INVALIDATE_ENG0_SEM,
            inv_eng0_req: $m::VM_INVALIDATE_ENG0_REQ,
            inv_eng1_req: $m::VM_INVALIDATE_ENG1_REQ,
            inv_eng0_ack: $m::VM_INVALIDATE_ENG0_ACK,
        }
    };
}

/// GFXHUB v1.2 (`gfxhub_v1_2.c`, GC 9.4.3), one per XCC.
pub const GFXHUB_1_2: HubV9Regs = hub_v9!("GFXHUB v1.2", gc);
/// MMHUB 1.8 (`mmhub_v1_8.c`), one per AID.
pub const MMHUB_1_8: HubV9Regs = hub_v9!("MMHUB 1.8", mm);
/// GFXHUB v1.0 (`gfxhub_v1_0.c`, GC 9.4.2: `gmc_v9_0_set_gfxhub_funcs()`
/// gives it every GC but 9.4.3/9.4.4).
pub const GFXHUB_1_0: HubV9Regs = hub_v9!("GFXHUB v1.0", gc2);
/// MMHUB 1.7 (`mmhub_v1_7.c`, Aldebaran's MMHUB 9.4.2:
/// `gmc_v9_0_set_mmhub_funcs()`).
pub const MMHUB_1_7: HubV9Regs = hub_v9!("MMHUB 1.7", mm7);

/// What a gfx9 hub is told: the address map ([`HubConfig`], its
/// `pt_base` the VMID0 root) and VMID0's walk shape.
///
/// Linux's dGPU VMID0 is a flat GART (`vmid0_page_table_depth` 0,
/// `_block_size` 0, `gmc_v9_0_gart_init()`); barebell maps VMID0 with the
/// same tables as user VMIDs (see [`crate::gmc::hub`]'s module docs), so
/// [`HubV9Config::new`] gives VMID0 the user contexts' translate-further
/// shape ([`pte_v9::CONTEXT_DEPTH`], [`pte_v9::CONTEXT_BLOCK_SIZE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubV9Config {
    pub map: HubConfig,
    pub vmid0_depth: u8,
    pub vmid0_block_size: u8,
}

impl HubV9Config {
    pub fn new(map: HubConfig) -> Self {
        HubV9Config {
            map,
            vmid0_depth: pte_v9::CONTEXT_DEPTH,
            vmid0_block_size: pte_v9::CONTEXT_BLOCK_SIZE,
        }
    }

    pub(crate) fn check(&self) -> Result<(), HubError> {
        let bad = |field, value| Err(HubError::BadConfig { field, value });
        let c = &self.map;
        if !c.pt_base.is_multiple_of(4096) || c.pt_base >> 48 != 0 {
            return bad("pt_base", c.pt_base);
        }
        if !c.start.is_multiple_of(4096) {
            return bad("start", c.start);
        }
        if c.end < c.start || c.end >> 48 != 0 {
            return bad("end", c.end);
        }
        if c.fb_end < c.fb_start {
            return bad("fb_end", c.fb_end);
        }
        if self.vmid0_depth > 3 {
            return bad("vmid0_depth", u64::from(self.vmid0_depth));
        }
        if self.vmid0_block_size > 15 {
            return bad("vmid0_block_size", u64::from(self.vmid0_block_size));
        }
        Ok(())
    }
}

/// Reads the `index`-th of the registers at `r` (stride in dwords),
/// refusing all-ones (a read-modify-write must not write a dead device's
/// value back).
fn read_live<B: RegisterBus + ?Sized>(
    b: &Block<'_, B>,
    r: Reg,
    index: u32,
    stride: u32,
) -> Result<u32, HubError> {
    let v = b.bus.read32(b.offset_nth(r, index, stride)?);
    if v == ALL_ONES {
        return Err(HubError::DeviceGone { name: r.name });
    }
    Ok(v)
}

fn write_nth<B: RegisterBus + ?Sized>(
    b: &Block<'_, B>,
    r: Reg,
    index: u32,
    stride: u32,
    v: u32,
) -> Result<(), HubError> {
    b.bus.write32(b.offset_nth(r, index, stride)?, v);
    Ok(())
}

/// `*_init_gart_aperture_regs()`: first every instance's VMID0 base
/// (`*_setup_vm_pt_regs(adev, 0, pt_base)`, its own loop), then every
/// instance's start and end (no pdb0: the GART range). The base carries
/// the PDE's VALID bit, as `amdgpu_gmc_pd_addr()` adds it.
pub(crate) fn init_gart_aperture_regs<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
    cfg: &HubV9Config,
) -> Result<(), HubError> {
    let base = cfg.map.pt_base | 1;
    for r in blocks {
        r.write(hub.ctx0_base_lo, base as u32)?;
        r.write(hub.ctx0_base_hi, (base >> 32) as u32)?;
    }
    for r in blocks {
        r.write(hub.ctx0_start_lo, (cfg.map.start >> 12) as u32)?;
        r.write(hub.ctx0_start_hi, (cfg.map.start >> 44) as u32)?;
        r.write(hub.ctx0_end_lo, (cfg.map.end >> 12) as u32)?;
        r.write(hub.ctx0_end_hi, (cfg.map.end >> 44) as u32)?;
    }
    Ok(())
}

/// `*_init_system_aperture_regs()` (bare metal, no pdb0; the same writes
/// in the same order in both files).
pub(crate) fn init_system_aperture_regs<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
    cfg: &HubV9Config,
) -> Result<(), HubError> {
    let c = &cfg.map;
    for r in blocks {
        r.write(hub.agp_base, 0)?;
        r.write(hub.agp_bot, (c.agp_start >> 24) as u32)?;
        r.write(hub.agp_top, (c.agp_end >> 24) as u32)?;
        r.write(hub.aperture_low, (c.fb_start.min(c.agp_start) >> 18) as u32)?;
        r.write(hub.aperture_high, (c.fb_end.max(c.agp_end) >> 18) as u32)?;
        r.write(hub.default_addr_lsb, (c.default_page >> 12) as u32)?;
        r.write(hub.default_addr_msb, (c.default_page >> 44) as u32)?;
        r.write(hub.fault_default_lo, (c.dummy_page >> 12) as u32)?;
        r.write(hub.fault_default_hi, (c.dummy_page >> 44) as u32)?;
        let v = VmL2ProtectionFaultCntl2::from_bits(read_live(r, hub.fault_cntl2, 0, 0)?)
            .with_active_page_migration_pte_read_retry(true);
        r.write(hub.fault_cntl2, v.into_bits())?;
    }
    Ok(())
}

/// `gfxhub_v1_2_xcc_gart_disable()` / `mmhub_v1_8_gart_disable()` on
/// bare metal: all 16 contexts' CNTL written 0, the L1 TLB and the
/// advanced driver model off, the L2 cache off and `VM_L2_CNTL3` = 0, on
/// every instance. Returns how many contexts were enabled before.
pub fn gart_disable<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
) -> Result<u32, HubError> {
    let mut was_on = 0;
    for r in blocks {
        for i in 0..16u32 {
            if read_live(r, hub.ctx0_cntl, i, hub.ctx_distance())? & 1 != 0 {
                was_on += 1;
            }
            write_nth(r, hub.ctx0_cntl, i, hub.ctx_distance(), 0)?;
        }
        let v = McVmMxL1TlbCntl::from_bits(read_live(r, hub.l1_tlb_cntl, 0, 0)?)
            .with_enable_l1_tlb(false)
            .with_enable_advanced_driver_model(false);
        r.write(hub.l1_tlb_cntl, v.into_bits())?;
        let v = VmL2Cntl::from_bits(read_live(r, hub.l2_cntl, 0, 0)?).with_enable_l2_cache(false);
        r.write(hub.l2_cntl, v.into_bits())?;
        r.write(hub.l2_cntl3, 0)?;
    }
    Ok(was_on)
}

/// `*_init_tlb_regs()`.
pub(crate) fn init_tlb_regs<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
) -> Result<(), HubError> {
    for r in blocks {
        let v = McVmMxL1TlbCntl::from_bits(read_live(r, hub.l1_tlb_cntl, 0, 0)?)
            .with_enable_l1_tlb(true)
            .with_system_access_mode(3)
            .with_enable_advanced_driver_model(true)
            .with_system_aperture_unmapped_access(false)
            .with_mtype(MTYPE_UC)
            .with_atc_en(true);
        r.write(hub.l1_tlb_cntl, v.into_bits())?;
    }
    Ok(())
}

/// `*_init_cache_regs()` with `gmc.translate_further` set (9.4.3): bank
/// select 12 and big-K fragment size 9.
pub(crate) fn init_cache_regs<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
) -> Result<(), HubError> {
    for r in blocks {
        let v = VmL2Cntl::from_bits(read_live(r, hub.l2_cntl, 0, 0)?)
            .with_enable_l2_cache(true)
            .with_enable_l2_fragment_processing(true)
            .with_l2_pde0_cache_tag_generation_mode(false)
            .with_pde_fault_classification(false)
            .with_context1_identity_access_mode(1)
            .with_identity_mode_fragment_size(0);
        r.write(hub.l2_cntl, v.into_bits())?;
        let v = VmL2Cntl2::from_bits(read_live(r, hub.l2_cntl2, 0, 0)?)
            .with_invalidate_all_l1_tlbs(true)
            .with_invalidate_l2_cache(true);
        r.write(hub.l2_cntl2, v.into_bits())?;
        let (bank, bigk) = if pte_v9::TRANSLATE_FURTHER {
            (12, 9)
        } else {
            (9, 6)
        };
        let v = VmL2Cntl3::from_bits(L2_CNTL3_DEFAULT)
            .with_bank_select(bank)
            .with_l2_cache_bigk_fragment_size(bigk);
        r.write(hub.l2_cntl3, v.into_bits())?;
        let v = VmL2Cntl4::from_bits(L2_CNTL4_DEFAULT)
            .with_vmc_tap_pde_request_physical(false)
            .with_vmc_tap_pte_request_physical(false);
        r.write(hub.l2_cntl4, v.into_bits())?;
    }
    Ok(())
}

/// `*_enable_system_domain()`.
pub(crate) fn enable_system_domain<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
    cfg: &HubV9Config,
) -> Result<(), HubError> {
    for r in blocks {
        let v = VmContextCntl::from_bits(read_live(r, hub.ctx0_cntl, 0, 0)?)
            .with_enable_context(true)
            .with_page_table_depth(cfg.vmid0_depth)
            .with_page_table_block_size(cfg.vmid0_block_size)
            .with_retry_permission_or_invalid_page_fault(false);
        r.write(hub.ctx0_cntl, v.into_bits())?;
    }
    Ok(())
}

/// `*_disable_identity_aperture()`.
pub(crate) fn disable_identity_aperture<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
) -> Result<(), HubError> {
    for r in blocks {
        r.write(hub.identity_low_lo, 0xFFFF_FFFF)?;
        r.write(hub.identity_low_hi, 0x0000_000F)?;
        r.write(hub.identity_high_lo, 0)?;
        r.write(hub.identity_high_hi, 0)?;
        r.write(hub.identity_offset_lo, 0)?;
        r.write(hub.identity_offset_hi, 0)?;
    }
    Ok(())
}

/// `*_CONTEXT1..15_CNTL` as `*_setup_vmid_config()` sets it on 9.4.3:
/// translate-further, so depth `num_level - 1` and block size
/// `block_size`; retry on (both files force it for 9.4.3: "XNACK can be
/// enabled in the SQ per-process").
pub fn user_context_cntl(old: u32) -> u32 {
    VmContextCntl::from_bits(old)
        .with_enable_context(true)
        .with_page_table_depth(pte_v9::CONTEXT_DEPTH)
        .with_range_protection_fault_enable_default(true)
        .with_dummy_page_protection_fault_enable_default(true)
        .with_pde0_protection_fault_enable_default(true)
        .with_valid_protection_fault_enable_default(true)
        .with_read_protection_fault_enable_default(true)
        .with_write_protection_fault_enable_default(true)
        .with_execute_protection_fault_enable_default(true)
        .with_page_table_block_size(pte_v9::CONTEXT_BLOCK_SIZE)
        .with_retry_permission_or_invalid_page_fault(true)
        .into_bits()
}

/// `*_setup_vmid_config()`: VMIDs 1..=15 of each instance in turn.
pub(crate) fn setup_vmid_config<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
) -> Result<(), HubError> {
    let (ctx, addr) = (hub.ctx_distance(), hub.ctx_addr_distance());
    let last = pte_v9::MAX_PFN - 1;
    for r in blocks {
        for i in 0..15u32 {
            let v = user_context_cntl(read_live(r, hub.ctx1_cntl, i, ctx)?);
            write_nth(r, hub.ctx1_cntl, i, ctx, v)?;
            write_nth(r, hub.ctx1_start_lo, i, addr, 0)?;
            write_nth(r, hub.ctx1_start_hi, i, addr, 0)?;
            write_nth(r, hub.ctx1_end_lo, i, addr, last as u32)?;
            write_nth(r, hub.ctx1_end_hi, i, addr, (last >> 32) as u32)?;
        }
    }
    Ok(())
}

/// `*_program_invalidation()`: all 18 engines cover every VA.
pub(crate) fn program_invalidation<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
) -> Result<(), HubError> {
    let eng = hub.eng_addr_distance();
    for r in blocks {
        for i in 0..18u32 {
            write_nth(r, hub.inv_eng0_range_lo, i, eng, 0xFFFF_FFFF)?;
            write_nth(r, hub.inv_eng0_range_hi, i, eng, 0x1F)?;
        }
    }
    Ok(())
}

/// `*_set_fault_enable_default()` on every instance (both files, one
/// layout); Linux calls it with `true` after `gart_enable`
/// (`amdgpu_vm_fault_stop` defaults to never).
pub fn set_fault_enable_default<B: RegisterBus + ?Sized>(
    blocks: &[Block<'_, B>],
    hub: &HubV9Regs,
    value: bool,
) -> Result<(), HubError> {
    for r in blocks {
        let mut v = VmL2ProtectionFaultCntl::from_bits(read_live(r, hub.fault_cntl, 0, 0)?)
            .with_range_protection_fault_enable_default(value)
            .with_pde0_protection_fault_enable_default(value)
            .with_pde1_protection_fault_enable_default(value)
            .with_pde2_protection_fault_enable_default(value)
            .with_translate_further_protection_fault_enable_default(value)
            .with_nack_protection_fault_enable_default(value)
            .with_dummy_page_protection_fault_enable_default(value)
            .with_valid_protection_fault_enable_default(value)
            .with_read_protection_fault_enable_default(value)
            .with_write_protection_fault_enable_default(value)
            .with_execute_protection_fault_enable_default(value);
        if !value {
            v = v
                .with_crash_on_no_retry_fault(true)
                .with_crash_on_retry_fault(true);
        }
        r.write(hub.fault_cntl, v.into_bits())?;
    }
    Ok(())
}

/// `gmc_v9_0_get_invalidate_req()`.
pub fn invalidate_request(vmid: u32, flush_type: u8) -> u32 {
    VmInvalidateReq::new()
        .with_per_vmid_invalidate_req(1u16.checked_shl(vmid).unwrap_or(0))
        .with_flush_type(flush_type & 0x3)
        .with_invalidate_l2_ptes(true)
        .with_invalidate_l2_pde0(true)
        .with_invalidate_l2_pde1(true)
        .with_invalidate_l2_pde2(true)
        .with_invalidate_l1_ptes(true)
        .with_clear_protection_fault_status_addr(false)
        .into_bits()
}

/// `vmid`'s page-table base on each GC of `gcs` through `hub` (what KFD's
/// `set_vm_context_page_table_base` reaches:
/// `gfxhub_v1_0_setup_vm_pt_regs()` on GC 9.4.2's one GC,
/// `gfxhub_v1_2_xcc_setup_vm_pt_regs()` on every XCC of GC 9.4.3).
pub fn setup_vm_pt_regs<B: RegisterBus + ?Sized>(
    gcs: &[Block<'_, B>],
    hub: &HubV9Regs,
    vmid: u32,
    page_table_base: u64,
) -> Result<(), HubError> {
    if vmid > 15 {
        return Err(HubError::BadConfig {
            field: "vmid",
            value: u64::from(vmid),
        });
    }
    let d = hub.ctx_addr_distance();
    for r in gcs {
        let lo = r.offset_nth(hub.ctx0_base_lo, vmid, d)?;
        let hi = r.offset_nth(hub.ctx0_base_hi, vmid, d)?;
        r.bus.write32(lo, page_table_base as u32);
        r.bus.write32(hi, (page_table_base >> 32) as u32);
    }
    Ok(())
}

/// The direct path of `gmc_v9_0_flush_gpu_tlb()` on one hub instance
/// (`block`: the XCC's GC block for GFXHUB v1.2, the AID's MMHUB block
/// for MMHUB 1.8): engine 17, no semaphore (9.4.3 is one of the
/// versions `gmc_v9_0_use_invalidate_semaphore()` excludes), no dummy
/// read of the request (only GC < 9.4.2 needs it), then the ACK polled
/// for the VMID's bit, bounded by `adev->usec_timeout`. Where Linux logs
/// "Timeout waiting for VM flush ACK!" this returns
/// [`InvalidateError::AckTimeout`]. Linux takes the KIQ path instead once
/// the KIQ runs; barebell always writes the registers.
pub fn flush_gpu_tlb<B, C>(
    block: &Block<'_, B>,
    clock: &C,
    hub: &HubV9Regs,
    vmid: u32,
    flush_type: u8,
) -> Result<(), InvalidateError>
where
    B: RegisterBus + ?Sized,
    C: Clock + ?Sized,
{
    let engine = GART_ENGINE;
    if vmid > 15 || flush_type > 3 {
        return Err(InvalidateError::BadArgument {
            engine,
            vmid,
            flush_type,
        });
    }
    let no = |error| InvalidateError::Register { error, engine };
    let req_at = block
        .offset_nth(hub.inv_eng0_req, engine, hub.eng_distance())
        .map_err(no)?;
    let ack_at = block
        .offset_nth(hub.inv_eng0_ack, engine, hub.eng_distance())
        .map_err(no)?;
    block
        .bus
        .write32(req_at, invalidate_request(vmid, flush_type));
    let cond = RegCondition {
        what: hub.inv_eng0_ack.name,
        byte_offset: ack_at,
        mask: 1 << vmid,
        want: 1 << vmid,
    };
    poll(block.bus, clock, cond, INVALIDATE_TIMEOUT_NS)
        .map(|_| ())
        .map_err(|e| match e {
            WaitError::Timeout {
                waited_ns, last, ..
            } => InvalidateError::AckTimeout {
                register: hub.inv_eng0_ack.name,
                engine,
                vmid,
                waited_ns,
                last,
            },
            WaitError::DeviceGone { .. } => InvalidateError::DeviceGone {
                register: hub.inv_eng0_ack.name,
                engine,
            },
        })
}

/// The distances `gfxhub_v1_2_xcc_init()` / `mmhub_v1_8_init()` derive,
/// over the whole arrays, checked against each header.
macro_rules! distance_facts {
    ($h:literal, $t:expr) => {
        [
            barebell_facts::Fact::constant(
                $h,
                "regVM_CONTEXT15_CNTL - regVM_CONTEXT1_CNTL",
                (14 * $t.ctx_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "regVM_CONTEXT15_PAGE_TABLE_END_ADDR_HI32 - regVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32",
                (14 * $t.ctx_addr_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "regVM_CONTEXT15_PAGE_TABLE_START_ADDR_LO32 - regVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32",
                (14 * $t.ctx_addr_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "regVM_INVALIDATE_ENG17_ADDR_RANGE_HI32 - regVM_INVALIDATE_ENG0_ADDR_RANGE_HI32",
                (17 * $t.eng_addr_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "regVM_INVALIDATE_ENG17_REQ - regVM_INVALIDATE_ENG0_REQ",
                (17 * $t.eng_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "regVM_INVALIDATE_ENG17_ACK - regVM_INVALIDATE_ENG0_ACK",
                (17 * $t.eng_distance()) as u64,
            ),
        ]
    };
}

/// `VM_L2_PROTECTION_FAULT_STATUS` fields of the gfx9 hubs (equal in
/// `mmhub_1_8_0_sh_mask.h` and `gc_9_4_3_sh_mask.h`). Unlike GC 11's word
/// it has no `PRT` bit.
pub mod fault_status {
    pub const MORE_FAULTS: u32 = 0x0000_0001;
    pub const WALKER_ERROR: u32 = 0x0000_000E;
    pub const WALKER_ERROR_SHIFT: u32 = 1;
    pub const PERMISSION_FAULTS: u32 = 0x0000_00F0;
    pub const PERMISSION_FAULTS_SHIFT: u32 = 4;
    pub const MAPPING_ERROR: u32 = 0x0000_0100;
    pub const CID: u32 = 0x0003_FE00;
    pub const CID_SHIFT: u32 = 9;
    pub const RW: u32 = 0x0004_0000;
    pub const ATOMIC: u32 = 0x0008_0000;
    pub const VMID: u32 = 0x00F0_0000;
    pub const VMID_SHIFT: u32 = 20;
    /// `VM_L2_PROTECTION_FAULT_ADDR_HI32.LOGICAL_PAGE_ADDR_HI4`.
    pub const ADDR_HI4: u32 = 0x0000_000F;
}

/// Reads the fault one gfx9 hub instance latched (`bases`: that
/// instance's; an SDMA 4.4.2 engine's is its AID's MMHUB, `ring->vm_hub =
/// AMDGPU_MMHUB0(aid_id)` in `sdma_v4_4_2_sw_init()`); `None` when the
/// status word is zero. The page address is `ADDR_HI4:ADDR_LO32 << 12`,
/// as `gmc_v9_0_process_interrupt()` reads `VM_L2_PROTECTION_FAULT_STATUS`
/// (the address there comes from the IV).
pub fn read_fault<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &crate::regs::IpBases,
    hub: &HubV9Regs,
) -> Result<Option<crate::gmc::hub::VmFault>, HubError> {
    use fault_status as f;
    let r = Block::new(bus, *bases);
    let read = |reg: Reg| -> Result<u32, HubError> {
        let v = r.read(reg)?;
        if v == ALL_ONES {
            return Err(HubError::DeviceGone { name: reg.name });
        }
        Ok(v)
    };
    let status = read(hub.fault_status)?;
    if status == 0 {
        return Ok(None);
    }
    let lo = read(hub.fault_addr_lo)?;
    let hi = read(hub.fault_addr_hi)? & f::ADDR_HI4;
    Ok(Some(crate::gmc::hub::VmFault {
        hub: hub.name,
        addr: (u64::from(hi) << 32 | u64::from(lo)) << 12,
        vmid: ((status & f::VMID) >> f::VMID_SHIFT) as u8,
        cid: ((status & f::CID) >> f::CID_SHIFT) as u16,
        write: status & f::RW != 0,
        atomic: status & f::ATOMIC != 0,
        permission_faults: ((status & f::PERMISSION_FAULTS) >> f::PERMISSION_FAULTS_SHIFT) as u8,
        walker_error: ((status & f::WALKER_ERROR) >> f::WALKER_ERROR_SHIFT) as u8,
        mapping_error: status & f::MAPPING_ERROR != 0,
        more_faults: status & f::MORE_FAULTS != 0,
        prt: false,
        status,
    }))
}

macro_rules! fault_facts {
    ($h:literal) => {
        [
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS_MASK",
                fault_status::MORE_FAULTS as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__WALKER_ERROR_MASK",
                fault_status::WALKER_ERROR as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__WALKER_ERROR__SHIFT",
                fault_status::WALKER_ERROR_SHIFT as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS_MASK",
                fault_status::PERMISSION_FAULTS as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS__SHIFT",
                fault_status::PERMISSION_FAULTS_SHIFT as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR_MASK",
                fault_status::MAPPING_ERROR as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__CID_MASK",
                fault_status::CID as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__CID__SHIFT",
                fault_status::CID_SHIFT as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__RW_MASK",
                fault_status::RW as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__ATOMIC_MASK",
                fault_status::ATOMIC as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__VMID_MASK",
                fault_status::VMID as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_STATUS__VMID__SHIFT",
                fault_status::VMID_SHIFT as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                "VM_L2_PROTECTION_FAULT_ADDR_HI32__LOGICAL_PAGE_ADDR_HI4_MASK",
                fault_status::ADDR_HI4 as u64,
            ),
        ]
    };
}

/// Array distances of both hubs, the fault status fields, and `MTYPE_UC`.
pub const FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    distance_facts!("gc_9_4_3_offset.h", GFXHUB_1_2),
    distance_facts!("mmhub_1_8_0_offset.h", MMHUB_1_8),
    fault_facts!("mmhub_1_8_0_sh_mask.h"),
    fault_facts!("gc_9_4_3_sh_mask.h"),
    [barebell_facts::Fact::constant(
        "vega10_enum.h",
        "MTYPE_UC",
        MTYPE_UC as u64
    )],
);
