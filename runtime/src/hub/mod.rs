//! GFXHUB 3.0 (GC 11.0.0) init: the system aperture, the L1 TLB and L2
//! cache set-up, VMID0's page-table context and the user contexts, in the
//! order of `gfxhub_v3_0_gart_enable()`.
//!
//! Until this runs, the GFX engines' VM L2 translates nothing: every
//! CP/RLC/MES fetch through VMID0 goes through the context programmed
//! here. Two deliberate differences from Linux:
//! - Linux's VMID0 is a flat GART (`PAGE_TABLE_DEPTH` 0, one level of
//!   PTEs). barebell maps VMID0 with the same four-level tables as user
//!   VMIDs ([`crate::gmc::TableArena`]), so VMID0 gets depth 3 and block
//!   size 9 like the user contexts (`amdgpu_vm_adjust_size(adev, 256 * 1024,
//!   9, 3, 48)` in `gmc_v11_0_sw_init()`).
//! - MMHUB 3.0 (`mmhub_v3_0_gart_enable()`, the same sequence on the
//!   MMHUB register block) is not built: it needs the `mmhub_3_0_0`
//!   register module, which does not exist yet.

use crate::bus::RegisterBus;
use crate::regs::gc_11_0_0 as gc;
use crate::regs::{IpBases, Reg};

/// What the hub is told about the address map, all as the GPU's MC
/// addresses unless noted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubConfig {
    /// Address of VMID0's root table (PDB2), 4 KiB aligned: what the L2
    /// fetches the walk from (Linux converts VRAM tables with
    /// `amdgpu_gmc_vram_mc2pa()` in `gmc_v11_0_get_vm_pde()`).
    pub pt_base: u64,
    /// VMID0's VA range, first and last byte (`gmc.gart_start/_end`).
    pub start: u64,
    pub end: u64,
    /// VRAM in the MC map (`gmc.fb_start/_end`, `_end` inclusive).
    pub fb_start: u64,
    pub fb_end: u64,
    /// The AGP aperture (`gmc.agp_start/_end`); empty is start > end.
    pub agp_start: u64,
    pub agp_end: u64,
    /// Physical address of the page the system aperture returns for
    /// unmapped accesses (`mem_scratch`, as `amdgpu_gmc_vram_mc2pa()`
    /// gives it).
    pub default_page: u64,
    /// Bus address of the page faulting accesses are redirected to
    /// (`adev->dummy_page_addr`).
    pub dummy_page: u64,
}

/// Why hub init could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubError {
    /// The register is not in the discovered GC bases.
    NoRegister { name: &'static str },
    /// A field of the configuration is misaligned or out of order.
    BadConfig { field: &'static str, value: u64 },
    /// A read-modify-write register read as all-ones.
    DeviceGone { name: &'static str },
}

impl core::fmt::Display for HubError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            HubError::NoRegister { name } => write!(f, "{name} is not in the GC bases"),
            HubError::BadConfig { field, value } => {
                write!(f, "hub config {field} = {value:#x} is invalid")
            }
            HubError::DeviceGone { name } => write!(f, "{name} read as all-ones"),
        }
    }
}

/// `PAGE_TABLE_DEPTH` for four levels (PDB2, PDB1, PDB0, PTB).
pub const PAGE_TABLE_DEPTH: u8 = 3;
/// `vm_manager.max_pfn` for a 48-bit VA: user contexts end at
/// `max_pfn - 1`.
pub const MAX_PFN: u64 = 1 << 36;
/// `MTYPE_UC` (`soc21_enum.h`): uncached, what the L1 TLB control gets.
pub const MTYPE_UC: u8 = 3;

struct Regs<'a, B: RegisterBus + ?Sized> {
    bus: &'a B,
    bases: &'a IpBases,
}

impl<B: RegisterBus + ?Sized> Regs<'_, B> {
    fn at(&self, r: Reg, dwords: u32) -> Result<usize, HubError> {
        let r2 = Reg {
            offset: r
                .offset
                .checked_add(dwords)
                .ok_or(HubError::NoRegister { name: r.name })?,
            ..r
        };
        r2.byte_offset(self.bases)
            .ok_or(HubError::NoRegister { name: r.name })
    }
    fn write(&self, r: Reg, v: u32) -> Result<(), HubError> {
        self.write_at(r, 0, v)
    }
    fn write_at(&self, r: Reg, dwords: u32, v: u32) -> Result<(), HubError> {
        let at = self.at(r, dwords)?;
        self.bus.write32(at, v);
        Ok(())
    }
    fn read(&self, r: Reg, dwords: u32) -> Result<u32, HubError> {
        let v = self.bus.read32(self.at(r, dwords)?);
        if v == crate::bus::ALL_ONES {
            return Err(HubError::DeviceGone { name: r.name });
        }
        Ok(v)
    }
}

fn check(cfg: &HubConfig) -> Result<(), HubError> {
    let bad = |field, value| Err(HubError::BadConfig { field, value });
    if !cfg.pt_base.is_multiple_of(4096) || cfg.pt_base >> 48 != 0 {
        return bad("pt_base", cfg.pt_base);
    }
    if !cfg.start.is_multiple_of(4096) {
        return bad("start", cfg.start);
    }
    if cfg.end < cfg.start || cfg.end >> 48 != 0 {
        return bad("end", cfg.end);
    }
    if cfg.fb_end < cfg.fb_start {
        return bad("fb_end", cfg.fb_end);
    }
    Ok(())
}

/// Programs GFXHUB as `gfxhub_v3_0_gart_enable()` does (bare metal, so
/// the SR-IOV branch that writes the FB location is skipped; the VBIOS
/// has programmed `GCMC_VM_FB_LOCATION_*`).
pub fn gfxhub_gart_enable<B: RegisterBus + ?Sized>(
    bus: &B,
    gc_bases: &IpBases,
    cfg: &HubConfig,
) -> Result<(), HubError> {
    check(cfg)?;
    let r = Regs {
        bus,
        bases: gc_bases,
    };
    // gfxhub_v3_0_init_gart_aperture_regs(): VMID0's base, start, end.
    // The base carries the PDE's VALID bit, as amdgpu_gmc_pd_addr() adds.
    let base = cfg.pt_base | 1;
    r.write(gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32, base as u32)?;
    r.write(
        gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
        (base >> 32) as u32,
    )?;
    r.write(
        gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
        (cfg.start >> 12) as u32,
    )?;
    r.write(
        gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
        (cfg.start >> 44) as u32,
    )?;
    r.write(
        gc::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
        (cfg.end >> 12) as u32,
    )?;
    r.write(
        gc::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
        (cfg.end >> 44) as u32,
    )?;

    // gfxhub_v3_0_init_system_aperture_regs().
    r.write(gc::GCMC_VM_AGP_BASE, 0)?;
    r.write(gc::GCMC_VM_AGP_BOT, (cfg.agp_start >> 24) as u32)?;
    r.write(gc::GCMC_VM_AGP_TOP, (cfg.agp_end >> 24) as u32)?;
    let low = cfg.fb_start.min(cfg.agp_start);
    let high = cfg.fb_end.max(cfg.agp_end);
    r.write(gc::GCMC_VM_SYSTEM_APERTURE_LOW_ADDR, (low >> 18) as u32)?;
    r.write(gc::GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR, (high >> 18) as u32)?;
    r.write(
        gc::GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB,
        (cfg.default_page >> 12) as u32,
    )?;
    r.write(
        gc::GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB,
        (cfg.default_page >> 44) as u32,
    )?;
    r.write(
        gc::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32,
        (cfg.dummy_page >> 12) as u32,
    )?;
    r.write(
        gc::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32,
        (cfg.dummy_page >> 44) as u32,
    )?;
    let v =
        gc::GcvmL2ProtectionFaultCntl2::from_bits(r.read(gc::GCVM_L2_PROTECTION_FAULT_CNTL2, 0)?)
            .with_active_page_migration_pte_read_retry(true);
    r.write(gc::GCVM_L2_PROTECTION_FAULT_CNTL2, v.into_bits())?;

    // gfxhub_v3_0_init_tlb_regs().
    let v = gc::GcmcVmMxL1TlbCntl::from_bits(r.read(gc::GCMC_VM_MX_L1_TLB_CNTL, 0)?)
        .with_enable_l1_tlb(true)
        .with_system_access_mode(3)
        .with_enable_advanced_driver_model(true)
        .with_system_aperture_unmapped_access(false)
        .with_eco_bits(0)
        .with_mtype(MTYPE_UC);
    r.write(gc::GCMC_VM_MX_L1_TLB_CNTL, v.into_bits())?;

    // gfxhub_v3_0_init_cache_regs(); translate_further is false on gfx11
    // (gmc_v11_0 never sets it), hence bank select 9 and big-K 6.
    let v = gc::GcvmL2Cntl::from_bits(r.read(gc::GCVM_L2_CNTL, 0)?)
        .with_enable_l2_cache(true)
        .with_enable_l2_fragment_processing(false)
        .with_enable_default_page_out_to_system_memory(true)
        .with_l2_pde0_cache_tag_generation_mode(false)
        .with_pde_fault_classification(false)
        .with_context1_identity_access_mode(1)
        .with_identity_mode_fragment_size(0);
    r.write(gc::GCVM_L2_CNTL, v.into_bits())?;
    let v = gc::GcvmL2Cntl2::from_bits(r.read(gc::GCVM_L2_CNTL2, 0)?)
        .with_invalidate_all_l1_tlbs(true)
        .with_invalidate_l2_cache(true);
    r.write(gc::GCVM_L2_CNTL2, v.into_bits())?;
    let v = gc::GcvmL2Cntl3::from_bits(gc::GCVM_L2_CNTL3_DEFAULT)
        .with_bank_select(9)
        .with_l2_cache_bigk_fragment_size(6);
    r.write(gc::GCVM_L2_CNTL3, v.into_bits())?;
    let v = gc::GcvmL2Cntl4::from_bits(gc::GCVM_L2_CNTL4_DEFAULT)
        .with_vmc_tap_pde_request_physical(false)
        .with_vmc_tap_pte_request_physical(false);
    r.write(gc::GCVM_L2_CNTL4, v.into_bits())?;
    let v =
        gc::GcvmL2Cntl5::from_bits(gc::GCVM_L2_CNTL5_DEFAULT).with_l2_cache_smallk_fragment_size(0);
    r.write(gc::GCVM_L2_CNTL5, v.into_bits())?;

    // gfxhub_v3_0_enable_system_domain(), with barebell's depth (see the
    // module docs).
    let v = gc::GcvmContextCntl::from_bits(r.read(gc::GCVM_CONTEXT0_CNTL, 0)?)
        .with_enable_context(true)
        .with_page_table_depth(PAGE_TABLE_DEPTH)
        .with_page_table_block_size(0)
        .with_retry_permission_or_invalid_page_fault(false);
    r.write(gc::GCVM_CONTEXT0_CNTL, v.into_bits())?;

    // gfxhub_v3_0_disable_identity_aperture().
    r.write(
        gc::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32,
        0xFFFF_FFFF,
    )?;
    r.write(
        gc::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32,
        0x0000_000F,
    )?;
    r.write(gc::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32, 0)?;
    r.write(gc::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32, 0)?;
    r.write(gc::GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32, 0)?;
    r.write(gc::GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32, 0)?;

    // gfxhub_v3_0_setup_vmid_config(): VMIDs 1..=15.
    let ctx = gc::GCVM_CONTEXT1_CNTL.offset - gc::GCVM_CONTEXT0_CNTL.offset;
    let addr = gc::GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32.offset
        - gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32.offset;
    let last = MAX_PFN - 1;
    for i in 0..15u32 {
        let v = gc::GcvmContextCntl::from_bits(r.read(gc::GCVM_CONTEXT1_CNTL, i * ctx)?)
            .with_enable_context(true)
            .with_page_table_depth(PAGE_TABLE_DEPTH)
            .with_range_protection_fault_enable_default(true)
            .with_dummy_page_protection_fault_enable_default(true)
            .with_pde0_protection_fault_enable_default(true)
            .with_valid_protection_fault_enable_default(true)
            .with_read_protection_fault_enable_default(true)
            .with_write_protection_fault_enable_default(true)
            .with_execute_protection_fault_enable_default(true)
            .with_page_table_block_size(0)
            // `!amdgpu_noretry` with the parameter at its default of -1.
            .with_retry_permission_or_invalid_page_fault(false);
        r.write_at(gc::GCVM_CONTEXT1_CNTL, i * ctx, v.into_bits())?;
        r.write_at(gc::GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32, i * addr, 0)?;
        r.write_at(gc::GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32, i * addr, 0)?;
        r.write_at(
            gc::GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32,
            i * addr,
            last as u32,
        )?;
        r.write_at(
            gc::GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32,
            i * addr,
            (last >> 32) as u32,
        )?;
    }

    // gfxhub_v3_0_program_invalidation(): every engine covers all VAs.
    let eng = gc::GCVM_INVALIDATE_ENG1_ADDR_RANGE_LO32.offset
        - gc::GCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32.offset;
    for i in 0..18u32 {
        r.write_at(
            gc::GCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32,
            i * eng,
            0xFFFF_FFFF,
        )?;
        r.write_at(gc::GCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32, i * eng, 0x1F)?;
    }
    Ok(())
}

/// Distances Linux derives in `gfxhub_v3_0_init()`, and `MTYPE_UC`,
/// checked against the headers.
pub const FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant("soc21_enum.h", "MTYPE_UC", MTYPE_UC as u64),
    barebell_facts::Fact::constant(
        "gc_11_0_0_offset.h",
        "regGCVM_CONTEXT1_CNTL - regGCVM_CONTEXT0_CNTL",
        (gc::GCVM_CONTEXT1_CNTL.offset - gc::GCVM_CONTEXT0_CNTL.offset) as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_11_0_0_offset.h",
        "regGCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32 - regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32",
        (gc::GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32.offset
            - gc::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32.offset) as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_11_0_0_offset.h",
        "regGCVM_CONTEXT15_CNTL - regGCVM_CONTEXT1_CNTL",
        (14 * (gc::GCVM_CONTEXT1_CNTL.offset - gc::GCVM_CONTEXT0_CNTL.offset)) as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_11_0_0_offset.h",
        "regGCVM_CONTEXT15_PAGE_TABLE_END_ADDR_HI32 - regGCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32",
        (14 * (gc::GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32.offset
            - gc::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32.offset)) as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_11_0_0_offset.h",
        "regGCVM_INVALIDATE_ENG17_ADDR_RANGE_HI32 - regGCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32",
        (17 * (gc::GCVM_INVALIDATE_ENG1_ADDR_RANGE_LO32.offset
            - gc::GCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32.offset)) as u64,
    ),
];
