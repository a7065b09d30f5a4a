//! VM hub init: the system aperture, the L1 TLB and L2 cache set-up,
//! VMID0's page-table context and the user contexts, in the order of
//! `gfxhub_v3_0_gart_enable()`, for all four hubs barebell drives:
//! GFXHUB 3.0 and MMHUB 3.0.0 (Navi31), GFXHUB 12.0 and MMHUB 4.1.0
//! (Navi48). Plus reading and clearing the L2 protection-fault registers
//! ([`read_fault`], [`clear_fault`]), and TLB invalidation through the
//! hub's invalidation engines ([`invalidate`]), which callers run after
//! `gart_enable` as Linux's `gmc_v1x_0_gart_enable()` does.
//!
//! Until this runs, the hub's VM L2 translates nothing: every CP/RLC/MES
//! fetch through the GFXHUB's VMID0, and every PSP/SDMA/VCN access
//! through the MMHUB's, goes through the context programmed here.
//!
//! One sequence, four register tables ([`crate::regs::hub`]): Linux's
//! `gfxhub_v3_0_gart_enable()`, `mmhub_v3_0_gart_enable()`,
//! `gfxhub_v12_0_gart_enable()` and `mmhub_v4_1_0_gart_enable()` call the
//! same helpers in the same order with the same values, on different
//! register blocks. The differences that matter on bare metal:
//! - gfx12 generation (GC 12, MMHUB 4.1): `*_CONTEXT*_CNTL` fields from
//!   the block size up sit one bit higher and the L1 TLB MTYPE is 2 bits
//!   (`MTYPE_UC` is still 3, `soc24_enum.h`); the fault status register
//!   is `_STATUS_LO32` (5-bit VFID, PRT at bit 30, UCE) with a `_HI32`.
//! - The L2 control defaults: GFXHUB 3.0 takes them from
//!   `gc_11_0_0_default.h`; the other three define them in their `.c`
//!   file (MMHUB's `L2_CNTL3` is 0x80100007, GC's 0x80120007).
//! - The default page: gfx12 files compute `gpu_addr - vram_start +
//!   vram_base_offset` inline where gfx11 calls `amdgpu_gmc_vram_mc2pa()`,
//!   which is the same expression; [`HubConfig::default_page`] is that
//!   result either way.
//! - Not init: MMHUB 4.1 invalidates with `FLUSH_TYPE` 0 only; the MMHUB
//!   files skip aperture and cache set-up under SR-IOV (never here); the
//!   gfx12 files read `CONTEXT1_CNTL + i` instead of `+ i * ctx_distance`
//!   (equal, the distance is 1, checked below).
//!
//! One deliberate difference from Linux: Linux's VMID0 is a flat GART
//! (`PAGE_TABLE_DEPTH` 0, one level of PTEs over the 512 MiB aperture).
//! barebell maps VMID0 with the same four-level tables as user VMIDs
//! ([`crate::gmc::pagetable::TableArena`]), so VMID0 gets depth 3 and
//! block size 9 like the user contexts (`amdgpu_vm_adjust_size(adev,
//! 256 * 1024, 9, 3, 48)` in `gmc_v11_0_sw_init()` and
//! `gmc_v12_0_sw_init()`), as tinygrad's AM runs VMID0 on gfx1100 and
//! gfx1201 silicon (`AM_GMC.enable_vm_addressing()`, depth 3 from
//! `va_base`). The reason: VMID0 also maps the ring area at VA = host
//! address, which may sit terabytes away from the GART; a flat table
//! over that span would need 8 bytes per 4 KiB of it. Either way the
//! tables are indexed from `PAGE_TABLE_START_ADDR`
//! ([`crate::gmc::pagetable::TableArena::with_va_base`]), as the hub
//! walks `VA - START`.

mod fault;
pub mod gfxhub_v1_0;
pub mod gfxhub_v1_2;
pub mod invalidate;
pub mod mmhub_v1_7;
pub mod mmhub_v1_8;
pub mod v9;

pub use crate::regs::hub::{
    GFXHUB_3_0, GFXHUB_12_0, HUBS, HubRegs, MMHUB_3_0_0, MMHUB_4_1_0, hub_for,
};
pub use fault::{VmFault, clear_fault, read_fault};
pub use invalidate::{GART_ENGINE, InvalidateError, invalidate};

use crate::bus::{Block, BlockError, RegisterBus};
use crate::ip::Generation;
use crate::regs::{IpBases, Reg};
use crate::regs::{gc_11_0_0 as gc, gc_12_0_0 as gc12};

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
    /// A register is not in the discovered bases of the hub's block.
    Register(BlockError),
    /// A field of the configuration is misaligned or out of order.
    BadConfig { field: &'static str, value: u64 },
    /// A read-modify-write register read as all-ones.
    DeviceGone { name: &'static str },
    /// The hub's generation has no register layout here yet.
    Unsupported(crate::ip::Unsupported),
}

impl core::fmt::Display for HubError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            HubError::Register(e) => write!(f, "{e}"),
            HubError::BadConfig { field, value } => {
                write!(f, "hub config {field} = {value:#x} is invalid")
            }
            HubError::DeviceGone { name } => write!(f, "{name} read as all-ones"),
            HubError::Unsupported(e) => write!(f, "{e}"),
        }
    }
}

impl From<crate::ip::Unsupported> for HubError {
    fn from(e: crate::ip::Unsupported) -> Self {
        HubError::Unsupported(e)
    }
}

impl From<BlockError> for HubError {
    fn from(e: BlockError) -> Self {
        HubError::Register(e)
    }
}

/// `PAGE_TABLE_DEPTH` for four levels (PDB2, PDB1, PDB0, PTB).
pub const PAGE_TABLE_DEPTH: u8 = 3;
/// `vm_manager.max_pfn` for a 48-bit VA: user contexts end at
/// `max_pfn - 1`.
pub const MAX_PFN: u64 = 1 << 36;
/// `MTYPE_UC` (`soc21_enum.h`): uncached, what the L1 TLB control gets.
pub const MTYPE_UC: u8 = 3;

/// The `index`-th of the registers that start at `r` and repeat every
/// `stride` dwords (`stride` 0: `r` itself), read and refused if it reads
/// all-ones (a read-modify-write must not write a dead device's value
/// back).
fn read_live<B: RegisterBus + ?Sized>(
    b: &Block<'_, B>,
    r: Reg,
    index: u32,
    stride: u32,
) -> Result<u32, HubError> {
    let v = b.bus.read32(b.offset_nth(r, index, stride)?);
    if v == crate::bus::ALL_ONES {
        return Err(HubError::DeviceGone { name: r.name });
    }
    Ok(v)
}

/// Writes the `index`-th register of the array at `r` (stride in dwords).
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

/// Programs GFXHUB 3.0 (`gfxhub_v3_0_gart_enable()`); [`gart_enable`]
/// with [`GFXHUB_3_0`].
pub fn gfxhub_gart_enable<B: RegisterBus + ?Sized>(
    bus: &B,
    gc_bases: &IpBases,
    cfg: &HubConfig,
) -> Result<(), HubError> {
    gart_enable(bus, gc_bases, &GFXHUB_3_0, cfg)
}

/// `*MC_VM_MX_L1_TLB_CNTL` as `*_init_tlb_regs()` sets it.
fn l1_tlb(generation: Generation, old: u32) -> Result<u32, HubError> {
    Ok(match generation {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new(
                "GFXHUB 1.2/MMHUB 1.8 L1 TLB layout",
                generation,
            )
            .into());
        }
        Generation::Gfx11 => gc::GcmcVmMxL1TlbCntl::from_bits(old)
            .with_enable_l1_tlb(true)
            .with_system_access_mode(3)
            .with_enable_advanced_driver_model(true)
            .with_system_aperture_unmapped_access(false)
            .with_eco_bits(0)
            .with_mtype(MTYPE_UC)
            .into_bits(),
        Generation::Gfx12 => gc12::GcmcVmMxL1TlbCntl::from_bits(old)
            .with_enable_l1_tlb(true)
            .with_system_access_mode(3)
            .with_enable_advanced_driver_model(true)
            .with_system_aperture_unmapped_access(false)
            .with_eco_bits(0)
            .with_mtype(MTYPE_UC)
            .into_bits(),
    })
}

/// `*_CONTEXT0_CNTL` as `*_enable_system_domain()` sets it, with
/// barebell's depth (see the module docs).
fn context0(generation: Generation, old: u32) -> Result<u32, HubError> {
    Ok(match generation {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new(
                "GFXHUB 1.2/MMHUB 1.8 context layout",
                generation,
            )
            .into());
        }
        Generation::Gfx11 => gc::GcvmContextCntl::from_bits(old)
            .with_enable_context(true)
            .with_page_table_depth(PAGE_TABLE_DEPTH)
            .with_page_table_block_size(0)
            .with_retry_permission_or_invalid_page_fault(false)
            .into_bits(),
        Generation::Gfx12 => gc12::GcvmContextCntl::from_bits(old)
            .with_enable_context(true)
            .with_page_table_depth(PAGE_TABLE_DEPTH)
            .with_page_table_block_size(0)
            .with_retry_permission_or_invalid_page_fault(false)
            .into_bits(),
    })
}

/// `*_CONTEXT1..15_CNTL` as `*_setup_vmid_config()` sets it; retry is
/// `!amdgpu_noretry` with the parameter at its default of -1.
fn user_context(generation: Generation, old: u32) -> Result<u32, HubError> {
    macro_rules! user {
        ($t:ty) => {
            <$t>::from_bits(old)
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
                .with_retry_permission_or_invalid_page_fault(false)
                .into_bits()
        };
    }
    Ok(match generation {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new(
                "GFXHUB 1.2/MMHUB 1.8 context layout",
                generation,
            )
            .into());
        }
        Generation::Gfx11 => user!(gc::GcvmContextCntl),
        Generation::Gfx12 => user!(gc12::GcvmContextCntl),
    })
}

/// Programs one hub as its Linux `*_gart_enable()` does (bare metal, so
/// the SR-IOV branches are skipped; the VBIOS has programmed
/// `*MC_VM_FB_LOCATION_*`). `bases` are the discovered segment bases of
/// the hub's block (`hub.hw_id`).
pub fn gart_enable<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    hub: &HubRegs,
    cfg: &HubConfig,
) -> Result<(), HubError> {
    check(cfg)?;
    let r = Block::new(bus, *bases);
    // *_init_gart_aperture_regs(): VMID0's base, start, end. The base
    // carries the PDE's VALID bit, as amdgpu_gmc_pd_addr() adds.
    let base = cfg.pt_base | 1;
    r.write(hub.ctx0_base_lo, base as u32)?;
    r.write(hub.ctx0_base_hi, (base >> 32) as u32)?;
    r.write(hub.ctx0_start_lo, (cfg.start >> 12) as u32)?;
    r.write(hub.ctx0_start_hi, (cfg.start >> 44) as u32)?;
    r.write(hub.ctx0_end_lo, (cfg.end >> 12) as u32)?;
    r.write(hub.ctx0_end_hi, (cfg.end >> 44) as u32)?;

    // *_init_system_aperture_regs().
    r.write(hub.agp_base, 0)?;
    r.write(hub.agp_bot, (cfg.agp_start >> 24) as u32)?;
    r.write(hub.agp_top, (cfg.agp_end >> 24) as u32)?;
    let low = cfg.fb_start.min(cfg.agp_start);
    let high = cfg.fb_end.max(cfg.agp_end);
    r.write(hub.aperture_low, (low >> 18) as u32)?;
    r.write(hub.aperture_high, (high >> 18) as u32)?;
    r.write(hub.default_addr_lsb, (cfg.default_page >> 12) as u32)?;
    r.write(hub.default_addr_msb, (cfg.default_page >> 44) as u32)?;
    r.write(hub.fault_default_lo, (cfg.dummy_page >> 12) as u32)?;
    r.write(hub.fault_default_hi, (cfg.dummy_page >> 44) as u32)?;
    let v = gc::GcvmL2ProtectionFaultCntl2::from_bits(read_live(&r, hub.fault_cntl2, 0, 0)?)
        .with_active_page_migration_pte_read_retry(true);
    r.write(hub.fault_cntl2, v.into_bits())?;

    // *_init_tlb_regs().
    let v = l1_tlb(hub.generation, read_live(&r, hub.l1_tlb_cntl, 0, 0)?)?;
    r.write(hub.l1_tlb_cntl, v)?;

    // *_init_cache_regs(); translate_further is false on gfx11 and gfx12
    // (neither gmc_v11_0 nor gmc_v12_0 sets it), hence bank select 9 and
    // big-K 6. The L2 control layouts are the same in every generation
    // (checked per header by the `HUB_FIELD_FACTS` tables).
    let v = gc::GcvmL2Cntl::from_bits(read_live(&r, hub.l2_cntl, 0, 0)?)
        .with_enable_l2_cache(true)
        .with_enable_l2_fragment_processing(false)
        .with_enable_default_page_out_to_system_memory(true)
        .with_l2_pde0_cache_tag_generation_mode(false)
        .with_pde_fault_classification(false)
        .with_context1_identity_access_mode(1)
        .with_identity_mode_fragment_size(0);
    r.write(hub.l2_cntl, v.into_bits())?;
    let v = gc::GcvmL2Cntl2::from_bits(read_live(&r, hub.l2_cntl2, 0, 0)?)
        .with_invalidate_all_l1_tlbs(true)
        .with_invalidate_l2_cache(true);
    r.write(hub.l2_cntl2, v.into_bits())?;
    let v = gc::GcvmL2Cntl3::from_bits(hub.l2_cntl3_default)
        .with_bank_select(9)
        .with_l2_cache_bigk_fragment_size(6);
    r.write(hub.l2_cntl3, v.into_bits())?;
    let v = gc::GcvmL2Cntl4::from_bits(hub.l2_cntl4_default)
        .with_vmc_tap_pde_request_physical(false)
        .with_vmc_tap_pte_request_physical(false);
    r.write(hub.l2_cntl4, v.into_bits())?;
    let v = gc::GcvmL2Cntl5::from_bits(hub.l2_cntl5_default).with_l2_cache_smallk_fragment_size(0);
    r.write(hub.l2_cntl5, v.into_bits())?;

    // *_enable_system_domain().
    let v = context0(hub.generation, read_live(&r, hub.ctx0_cntl, 0, 0)?)?;
    r.write(hub.ctx0_cntl, v)?;

    // *_disable_identity_aperture().
    r.write(hub.identity_low_lo, 0xFFFF_FFFF)?;
    r.write(hub.identity_low_hi, 0x0000_000F)?;
    r.write(hub.identity_high_lo, 0)?;
    r.write(hub.identity_high_hi, 0)?;
    r.write(hub.identity_offset_lo, 0)?;
    r.write(hub.identity_offset_hi, 0)?;

    // *_setup_vmid_config(): VMIDs 1..=15.
    let ctx = hub.ctx_distance();
    let addr = hub.ctx_addr_distance();
    let last = MAX_PFN - 1;
    for i in 0..15u32 {
        let v = user_context(hub.generation, read_live(&r, hub.ctx1_cntl, i, ctx)?)?;
        write_nth(&r, hub.ctx1_cntl, i, ctx, v)?;
        write_nth(&r, hub.ctx1_start_lo, i, addr, 0)?;
        write_nth(&r, hub.ctx1_start_hi, i, addr, 0)?;
        write_nth(&r, hub.ctx1_end_lo, i, addr, last as u32)?;
        write_nth(&r, hub.ctx1_end_hi, i, addr, (last >> 32) as u32)?;
    }

    // *_program_invalidation(): every engine covers all VAs.
    let eng = hub.eng_addr_distance();
    for i in 0..18u32 {
        write_nth(&r, hub.inv_eng0_range_lo, i, eng, 0xFFFF_FFFF)?;
        write_nth(&r, hub.inv_eng0_range_hi, i, eng, 0x1F)?;
    }
    Ok(())
}

/// Turns one hub's translation off as its Linux `*_gart_disable()` does
/// (`gfxhub_v3_0.c`, `mmhub_v3_0.c`, `gfxhub_v12_0.c`, `mmhub_v4_1_0.c`:
/// one sequence): all 16 contexts' `*_CONTEXT*_CNTL` written 0, the L1
/// TLB and the advanced driver model off, the L2 cache off and
/// `*_L2_CNTL3` 0. After it the hub walks no page table, so the memory
/// the tables live in can go back. Returns how many contexts were
/// enabled before.
pub fn gart_disable<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    hub: &HubRegs,
) -> Result<u32, HubError> {
    let r = Block::new(bus, *bases);
    let ctx = hub.ctx_distance();
    let mut were_on = 0;
    for i in 0..16u32 {
        let c = read_live(&r, hub.ctx0_cntl, i, ctx)?;
        were_on += u32::from(gc::GcvmContextCntl::from_bits(c).enable_context());
        write_nth(&r, hub.ctx0_cntl, i, ctx, 0)?;
    }
    let old = read_live(&r, hub.l1_tlb_cntl, 0, 0)?;
    let v = match hub.generation {
        // GFXHUB 1.2 / MMHUB 1.8 have their own sequences (`v9`).
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new(
                "GFXHUB 1.2/MMHUB 1.8 gart_disable",
                hub.generation,
            )
            .into());
        }
        Generation::Gfx11 => gc::GcmcVmMxL1TlbCntl::from_bits(old)
            .with_enable_l1_tlb(false)
            .with_enable_advanced_driver_model(false)
            .into_bits(),
        Generation::Gfx12 => gc12::GcmcVmMxL1TlbCntl::from_bits(old)
            .with_enable_l1_tlb(false)
            .with_enable_advanced_driver_model(false)
            .into_bits(),
    };
    r.write(hub.l1_tlb_cntl, v)?;
    let v =
        gc::GcvmL2Cntl::from_bits(read_live(&r, hub.l2_cntl, 0, 0)?).with_enable_l2_cache(false);
    r.write(hub.l2_cntl, v.into_bits())?;
    r.write(hub.l2_cntl3, 0)?;
    Ok(were_on)
}

/// `*_set_fault_enable_default()` (`gfxhub_v3_0.c`, `mmhub_v3_0.c`,
/// `gfxhub_v12_0.c`, `mmhub_v4_1_0.c`, one layout): every
/// `*_PROTECTION_FAULT_ENABLE_DEFAULT` bit of `*_L2_PROTECTION_FAULT_CNTL`
/// set to `value` ("true redirects VM faults to the default page"), and
/// with `value` false the two `CRASH_ON_*` bits set. Linux calls it right
/// after `gart_enable` and an HDP flush with `value` true
/// (`amdgpu_vm_fault_stop` defaults to `AMDGPU_VM_FAULT_STOP_NEVER`):
/// `gmc_v11_0_gart_enable()`, `gfx_v11_0_gfxhub_enable()` and their
/// gfx12 twins.
pub fn set_fault_enable_default<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    hub: &HubRegs,
    value: bool,
) -> Result<(), HubError> {
    let r = Block::new(bus, *bases);
    let mut v = gc::GcvmL2ProtectionFaultCntl::from_bits(read_live(&r, hub.fault_cntl, 0, 0)?)
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
    Ok(r.write(hub.fault_cntl, v.into_bits())?)
}

/// Distances Linux derives in `gfxhub_v3_0_init()`, and `MTYPE_UC`,
/// checked against the headers.
pub const FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant("soc21_enum.h", "MTYPE_UC", MTYPE_UC as u64),
    barebell_facts::Fact::constant("soc24_enum.h", "MTYPE_UC", MTYPE_UC as u64),
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

#[cfg(test)]
mod tests {
    use super::{HubConfig, HubError, check};

    fn config() -> HubConfig {
        HubConfig {
            pt_base: 0x8000_0000,
            start: 0x7f_0000_0000,
            end: 0x7f_1fff_ffff,
            fb_start: 0x80_0000_0000,
            fb_end: 0x80_ffff_ffff,
            agp_start: 0xffff_ffff_ffff,
            agp_end: 0,
            default_page: 0x8010_0000,
            dummy_page: 0x1000,
        }
    }

    /// `start`/`end` are VMID0's first and last byte, and the hub takes
    /// them as page numbers (`gfxhub_v3_0_init_gart_aperture_regs()`:
    /// `gart_start >> 12`, `gart_end >> 12`): a range whose last byte lies
    /// in its first page is one page, not an empty one, and is taken; a
    /// last byte before the first is refused, naming the field.
    #[test]
    fn a_one_page_range_is_taken_and_a_reversed_one_refused() {
        assert_eq!(check(&config()), Ok(()));
        let one = HubConfig {
            end: 0x7f_0000_0000,
            ..config()
        };
        assert_eq!(check(&one), Ok(()));
        let reversed = HubConfig {
            end: 0x7e_ffff_ffff,
            ..config()
        };
        assert_eq!(
            check(&reversed),
            Err(HubError::BadConfig {
                field: "end",
                value: 0x7e_ffff_ffff
            })
        );
        let fb = HubConfig {
            fb_end: 0x7f_ffff_ffff,
            ..config()
        };
        assert!(matches!(
            check(&fb),
            Err(HubError::BadConfig {
                field: "fb_end",
                ..
            })
        ));
    }
}
