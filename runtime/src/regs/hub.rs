//! The register tables of the four VM hubs barebell initialises.
//!
//! Linux has one `*_gart_enable()` per hub (`gfxhub_v3_0.c`,
//! `mmhub_v3_0.c`, `gfxhub_v12_0.c`, `mmhub_v4_1_0.c`), but the four
//! sequences are the same register for register; only the block (GC or
//! MMHUB), the names (`GCVM_`/`MMVM_`), the offsets, two field layouts
//! and the L2 control defaults differ. So barebell has one sequence
//! ([`crate::gmc::hub::gart_enable`]) and one table per hub. The tables
//! are register offsets and field layouts only, so they live with the
//! other register tables, where the device model may use them too.

use crate::ip::Generation;
use crate::ip::hw_id;
use crate::regs::Reg;
use crate::regs::{gc_11_0_0 as gc11, gc_12_0_0 as gc12, mmhub_3_0_0 as mm3, mmhub_4_1_0 as mm41};

/// One VM hub: where its registers are and how its fields are laid out.
/// Register names are the hub's own (`GCVM_…` or `MMVM_…`), so traces
/// and errors name what Linux names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubRegs {
    /// The hub as Linux's source file calls it, e.g. `"MMHUB 3.0.0"`.
    pub name: &'static str,
    /// Discovery hardware id of the block holding the registers
    /// (`hw_id::GC` or `hw_id::MMHUB`) and the IP versions Linux drives
    /// with this hub's file.
    pub hw_id: u16,
    pub versions: &'static [(u8, u8, u8)],
    pub generation: Generation,
    /// `*_L2_CNTL3/4/5` reset values the cache set-up starts from.
    pub l2_cntl3_default: u32,
    pub l2_cntl4_default: u32,
    pub l2_cntl5_default: u32,
    pub ctx0_base_lo: Reg,
    pub ctx0_base_hi: Reg,
    pub ctx0_start_lo: Reg,
    pub ctx0_start_hi: Reg,
    pub ctx0_end_lo: Reg,
    pub ctx0_end_hi: Reg,
    pub ctx1_base_lo: Reg,
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
    /// `*_L2_PROTECTION_FAULT_STATUS` (gfx11) or `…_STATUS_LO32` (gfx12).
    pub fault_status: Reg,
    pub fault_addr_lo: Reg,
    pub fault_addr_hi: Reg,
    pub l1_tlb_cntl: Reg,
    pub l2_cntl: Reg,
    pub l2_cntl2: Reg,
    pub l2_cntl3: Reg,
    pub l2_cntl4: Reg,
    pub l2_cntl5: Reg,
    pub ctx0_cntl: Reg,
    pub ctx1_cntl: Reg,
    pub ctx1_start_lo: Reg,
    pub ctx1_start_hi: Reg,
    pub ctx1_end_lo: Reg,
    pub ctx1_end_hi: Reg,
    pub identity_low_lo: Reg,
    pub identity_low_hi: Reg,
    pub identity_high_lo: Reg,
    pub identity_high_hi: Reg,
    pub identity_offset_lo: Reg,
    pub identity_offset_hi: Reg,
    pub inv_eng0_range_lo: Reg,
    pub inv_eng0_range_hi: Reg,
    pub inv_eng1_range_lo: Reg,
    /// Invalidation engine 0's semaphore, request and acknowledge
    /// registers, and engine 1's request (for the engine distance).
    pub inv_eng0_sem: Reg,
    pub inv_eng0_req: Reg,
    pub inv_eng1_req: Reg,
    pub inv_eng0_ack: Reg,
    /// Whether a direct invalidation takes the engine's semaphore
    /// (`gmc_v11_0_use_invalidate_semaphore()` / v12: the MMHUB, bare
    /// metal).
    pub use_semaphore: bool,
    /// Whether the hub's `*_get_invalidate_req()` ignores the caller's
    /// flush type and asks for 0 (`mmhub_v4_1_0.c`: legacy only).
    pub legacy_flush_only: bool,
    /// `*_L2_BANK_SELECT_RESERVED_CID2`, where the hub's `*_init()` sets
    /// `vm_l2_bank_select_reserved_cid2` (both MMHUBs): the register the
    /// private invalidation after the ACK goes through.
    pub l2_bank_select_reserved_cid2: Option<Reg>,
    /// Every register of the hub's block module, for symbolic tracing.
    pub all: &'static [Reg],
}

impl HubRegs {
    /// Dwords between context `n` and `n + 1` control registers.
    pub const fn ctx_distance(&self) -> u32 {
        self.ctx1_cntl.offset - self.ctx0_cntl.offset
    }
    /// Dwords between context `n` and `n + 1` address pairs.
    pub const fn ctx_addr_distance(&self) -> u32 {
        self.ctx1_base_lo.offset - self.ctx0_base_lo.offset
    }
    /// Dwords between invalidation engine `n` and `n + 1` range pairs.
    pub const fn eng_addr_distance(&self) -> u32 {
        self.inv_eng1_range_lo.offset - self.inv_eng0_range_lo.offset
    }
    /// Dwords between invalidation engine `n` and `n + 1` semaphore,
    /// request and acknowledge registers (`hub->eng_distance`).
    pub const fn eng_distance(&self) -> u32 {
        self.inv_eng1_req.offset - self.inv_eng0_req.offset
    }
}

/// `*_L2_CNTL3` reset value `mmhub_v3_0.c` and `mmhub_v4_1_0.c` define
/// for themselves (`regMMVM_L2_CNTL3_DEFAULT`; no MMHUB `_default.h`
/// exists in Linux 6.12). Checked against the `.c` text by a harness test.
pub const MMVM_L2_CNTL3_DEFAULT: u32 = 0x8010_0007;
/// `regGCVM_L2_CNTL3_DEFAULT` as `gfxhub_v12_0.c` defines it (no GC 12
/// `_default.h` in Linux 6.12); equal to GC 11.0.0's header value.
pub const GCVM_L2_CNTL3_DEFAULT_V12: u32 = 0x8012_0007;
/// `*_L2_CNTL4_DEFAULT` and `*_L2_CNTL5_DEFAULT` in all three `.c`
/// files, equal to `gc_11_0_0_default.h`'s.
pub const L2_CNTL4_DEFAULT: u32 = 0x0000_00c1;
pub const L2_CNTL5_DEFAULT: u32 = 0x0000_3fe0;

/// GFXHUB 3.0 (gfxhub_v3_0.c; GC 11.0.0 (Navi31)).
pub const GFXHUB_3_0: HubRegs = HubRegs {
    name: "GFXHUB 3.0",
    hw_id: hw_id::GC,
    versions: &[(11, 0, 0)],
    generation: Generation::Gfx11,
    l2_cntl3_default: gc11::GCVM_L2_CNTL3_DEFAULT,
    l2_cntl4_default: gc11::GCVM_L2_CNTL4_DEFAULT,
    l2_cntl5_default: gc11::GCVM_L2_CNTL5_DEFAULT,
    ctx0_base_lo: gc11::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
    ctx0_base_hi: gc11::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
    ctx0_start_lo: gc11::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
    ctx0_start_hi: gc11::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
    ctx0_end_lo: gc11::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
    ctx0_end_hi: gc11::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
    ctx1_base_lo: gc11::GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32,
    agp_base: gc11::GCMC_VM_AGP_BASE,
    agp_bot: gc11::GCMC_VM_AGP_BOT,
    agp_top: gc11::GCMC_VM_AGP_TOP,
    aperture_low: gc11::GCMC_VM_SYSTEM_APERTURE_LOW_ADDR,
    aperture_high: gc11::GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR,
    default_addr_lsb: gc11::GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB,
    default_addr_msb: gc11::GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB,
    fault_default_lo: gc11::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32,
    fault_default_hi: gc11::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32,
    fault_cntl: gc11::GCVM_L2_PROTECTION_FAULT_CNTL,
    fault_cntl2: gc11::GCVM_L2_PROTECTION_FAULT_CNTL2,
    fault_status: gc11::GCVM_L2_PROTECTION_FAULT_STATUS,
    fault_addr_lo: gc11::GCVM_L2_PROTECTION_FAULT_ADDR_LO32,
    fault_addr_hi: gc11::GCVM_L2_PROTECTION_FAULT_ADDR_HI32,
    l1_tlb_cntl: gc11::GCMC_VM_MX_L1_TLB_CNTL,
    l2_cntl: gc11::GCVM_L2_CNTL,
    l2_cntl2: gc11::GCVM_L2_CNTL2,
    l2_cntl3: gc11::GCVM_L2_CNTL3,
    l2_cntl4: gc11::GCVM_L2_CNTL4,
    l2_cntl5: gc11::GCVM_L2_CNTL5,
    ctx0_cntl: gc11::GCVM_CONTEXT0_CNTL,
    ctx1_cntl: gc11::GCVM_CONTEXT1_CNTL,
    ctx1_start_lo: gc11::GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32,
    ctx1_start_hi: gc11::GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32,
    ctx1_end_lo: gc11::GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32,
    ctx1_end_hi: gc11::GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32,
    identity_low_lo: gc11::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32,
    identity_low_hi: gc11::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32,
    identity_high_lo: gc11::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32,
    identity_high_hi: gc11::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32,
    identity_offset_lo: gc11::GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32,
    identity_offset_hi: gc11::GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32,
    inv_eng0_range_lo: gc11::GCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32,
    inv_eng0_range_hi: gc11::GCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32,
    inv_eng1_range_lo: gc11::GCVM_INVALIDATE_ENG1_ADDR_RANGE_LO32,
    inv_eng0_sem: gc11::GCVM_INVALIDATE_ENG0_SEM,
    inv_eng0_req: gc11::GCVM_INVALIDATE_ENG0_REQ,
    inv_eng1_req: gc11::GCVM_INVALIDATE_ENG1_REQ,
    inv_eng0_ack: gc11::GCVM_INVALIDATE_ENG0_ACK,
    use_semaphore: false,
    legacy_flush_only: false,
    l2_bank_select_reserved_cid2: None,
    all: gc11::ALL,
};

/// MMHUB 3.0.0 (mmhub_v3_0.c (Navi31)).
pub const MMHUB_3_0_0: HubRegs = HubRegs {
    name: "MMHUB 3.0.0",
    hw_id: hw_id::MMHUB,
    versions: &[(3, 0, 0)],
    generation: Generation::Gfx11,
    l2_cntl3_default: MMVM_L2_CNTL3_DEFAULT,
    l2_cntl4_default: L2_CNTL4_DEFAULT,
    l2_cntl5_default: L2_CNTL5_DEFAULT,
    ctx0_base_lo: mm3::MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
    ctx0_base_hi: mm3::MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
    ctx0_start_lo: mm3::MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
    ctx0_start_hi: mm3::MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
    ctx0_end_lo: mm3::MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
    ctx0_end_hi: mm3::MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
    ctx1_base_lo: mm3::MMVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32,
    agp_base: mm3::MMMC_VM_AGP_BASE,
    agp_bot: mm3::MMMC_VM_AGP_BOT,
    agp_top: mm3::MMMC_VM_AGP_TOP,
    aperture_low: mm3::MMMC_VM_SYSTEM_APERTURE_LOW_ADDR,
    aperture_high: mm3::MMMC_VM_SYSTEM_APERTURE_HIGH_ADDR,
    default_addr_lsb: mm3::MMMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB,
    default_addr_msb: mm3::MMMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB,
    fault_default_lo: mm3::MMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32,
    fault_default_hi: mm3::MMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32,
    fault_cntl: mm3::MMVM_L2_PROTECTION_FAULT_CNTL,
    fault_cntl2: mm3::MMVM_L2_PROTECTION_FAULT_CNTL2,
    fault_status: mm3::MMVM_L2_PROTECTION_FAULT_STATUS,
    fault_addr_lo: mm3::MMVM_L2_PROTECTION_FAULT_ADDR_LO32,
    fault_addr_hi: mm3::MMVM_L2_PROTECTION_FAULT_ADDR_HI32,
    l1_tlb_cntl: mm3::MMMC_VM_MX_L1_TLB_CNTL,
    l2_cntl: mm3::MMVM_L2_CNTL,
    l2_cntl2: mm3::MMVM_L2_CNTL2,
    l2_cntl3: mm3::MMVM_L2_CNTL3,
    l2_cntl4: mm3::MMVM_L2_CNTL4,
    l2_cntl5: mm3::MMVM_L2_CNTL5,
    ctx0_cntl: mm3::MMVM_CONTEXT0_CNTL,
    ctx1_cntl: mm3::MMVM_CONTEXT1_CNTL,
    ctx1_start_lo: mm3::MMVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32,
    ctx1_start_hi: mm3::MMVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32,
    ctx1_end_lo: mm3::MMVM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32,
    ctx1_end_hi: mm3::MMVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32,
    identity_low_lo: mm3::MMVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32,
    identity_low_hi: mm3::MMVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32,
    identity_high_lo: mm3::MMVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32,
    identity_high_hi: mm3::MMVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32,
    identity_offset_lo: mm3::MMVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32,
    identity_offset_hi: mm3::MMVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32,
    inv_eng0_range_lo: mm3::MMVM_INVALIDATE_ENG0_ADDR_RANGE_LO32,
    inv_eng0_range_hi: mm3::MMVM_INVALIDATE_ENG0_ADDR_RANGE_HI32,
    inv_eng1_range_lo: mm3::MMVM_INVALIDATE_ENG1_ADDR_RANGE_LO32,
    inv_eng0_sem: mm3::MMVM_INVALIDATE_ENG0_SEM,
    inv_eng0_req: mm3::MMVM_INVALIDATE_ENG0_REQ,
    inv_eng1_req: mm3::MMVM_INVALIDATE_ENG1_REQ,
    inv_eng0_ack: mm3::MMVM_INVALIDATE_ENG0_ACK,
    use_semaphore: true,
    legacy_flush_only: false,
    l2_bank_select_reserved_cid2: Some(mm3::MMVM_L2_BANK_SELECT_RESERVED_CID2),
    all: mm3::ALL,
};

/// GFXHUB 12.0 (gfxhub_v12_0.c; GC 12.0.1 (Navi48)).
pub const GFXHUB_12_0: HubRegs = HubRegs {
    name: "GFXHUB 12.0",
    hw_id: hw_id::GC,
    versions: &[(12, 0, 0), (12, 0, 1)],
    generation: Generation::Gfx12,
    l2_cntl3_default: GCVM_L2_CNTL3_DEFAULT_V12,
    l2_cntl4_default: L2_CNTL4_DEFAULT,
    l2_cntl5_default: L2_CNTL5_DEFAULT,
    ctx0_base_lo: gc12::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
    ctx0_base_hi: gc12::GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
    ctx0_start_lo: gc12::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
    ctx0_start_hi: gc12::GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
    ctx0_end_lo: gc12::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
    ctx0_end_hi: gc12::GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
    ctx1_base_lo: gc12::GCVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32,
    agp_base: gc12::GCMC_VM_AGP_BASE,
    agp_bot: gc12::GCMC_VM_AGP_BOT,
    agp_top: gc12::GCMC_VM_AGP_TOP,
    aperture_low: gc12::GCMC_VM_SYSTEM_APERTURE_LOW_ADDR,
    aperture_high: gc12::GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR,
    default_addr_lsb: gc12::GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB,
    default_addr_msb: gc12::GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB,
    fault_default_lo: gc12::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32,
    fault_default_hi: gc12::GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32,
    fault_cntl: gc12::GCVM_L2_PROTECTION_FAULT_CNTL,
    fault_cntl2: gc12::GCVM_L2_PROTECTION_FAULT_CNTL2,
    fault_status: gc12::GCVM_L2_PROTECTION_FAULT_STATUS_LO32,
    fault_addr_lo: gc12::GCVM_L2_PROTECTION_FAULT_ADDR_LO32,
    fault_addr_hi: gc12::GCVM_L2_PROTECTION_FAULT_ADDR_HI32,
    l1_tlb_cntl: gc12::GCMC_VM_MX_L1_TLB_CNTL,
    l2_cntl: gc12::GCVM_L2_CNTL,
    l2_cntl2: gc12::GCVM_L2_CNTL2,
    l2_cntl3: gc12::GCVM_L2_CNTL3,
    l2_cntl4: gc12::GCVM_L2_CNTL4,
    l2_cntl5: gc12::GCVM_L2_CNTL5,
    ctx0_cntl: gc12::GCVM_CONTEXT0_CNTL,
    ctx1_cntl: gc12::GCVM_CONTEXT1_CNTL,
    ctx1_start_lo: gc12::GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32,
    ctx1_start_hi: gc12::GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32,
    ctx1_end_lo: gc12::GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32,
    ctx1_end_hi: gc12::GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32,
    identity_low_lo: gc12::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32,
    identity_low_hi: gc12::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32,
    identity_high_lo: gc12::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32,
    identity_high_hi: gc12::GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32,
    identity_offset_lo: gc12::GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32,
    identity_offset_hi: gc12::GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32,
    inv_eng0_range_lo: gc12::GCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32,
    inv_eng0_range_hi: gc12::GCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32,
    inv_eng1_range_lo: gc12::GCVM_INVALIDATE_ENG1_ADDR_RANGE_LO32,
    inv_eng0_sem: gc12::GCVM_INVALIDATE_ENG0_SEM,
    inv_eng0_req: gc12::GCVM_INVALIDATE_ENG0_REQ,
    inv_eng1_req: gc12::GCVM_INVALIDATE_ENG1_REQ,
    inv_eng0_ack: gc12::GCVM_INVALIDATE_ENG0_ACK,
    use_semaphore: false,
    legacy_flush_only: false,
    l2_bank_select_reserved_cid2: None,
    all: gc12::ALL,
};

/// MMHUB 4.1.0 (mmhub_v4_1_0.c (Navi48)).
pub const MMHUB_4_1_0: HubRegs = HubRegs {
    name: "MMHUB 4.1.0",
    hw_id: hw_id::MMHUB,
    versions: &[(4, 1, 0)],
    generation: Generation::Gfx12,
    l2_cntl3_default: MMVM_L2_CNTL3_DEFAULT,
    l2_cntl4_default: L2_CNTL4_DEFAULT,
    l2_cntl5_default: L2_CNTL5_DEFAULT,
    ctx0_base_lo: mm41::MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
    ctx0_base_hi: mm41::MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
    ctx0_start_lo: mm41::MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
    ctx0_start_hi: mm41::MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
    ctx0_end_lo: mm41::MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
    ctx0_end_hi: mm41::MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
    ctx1_base_lo: mm41::MMVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32,
    agp_base: mm41::MMMC_VM_AGP_BASE,
    agp_bot: mm41::MMMC_VM_AGP_BOT,
    agp_top: mm41::MMMC_VM_AGP_TOP,
    aperture_low: mm41::MMMC_VM_SYSTEM_APERTURE_LOW_ADDR,
    aperture_high: mm41::MMMC_VM_SYSTEM_APERTURE_HIGH_ADDR,
    default_addr_lsb: mm41::MMMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB,
    default_addr_msb: mm41::MMMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB,
    fault_default_lo: mm41::MMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32,
    fault_default_hi: mm41::MMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32,
    fault_cntl: mm41::MMVM_L2_PROTECTION_FAULT_CNTL,
    fault_cntl2: mm41::MMVM_L2_PROTECTION_FAULT_CNTL2,
    fault_status: mm41::MMVM_L2_PROTECTION_FAULT_STATUS_LO32,
    fault_addr_lo: mm41::MMVM_L2_PROTECTION_FAULT_ADDR_LO32,
    fault_addr_hi: mm41::MMVM_L2_PROTECTION_FAULT_ADDR_HI32,
    l1_tlb_cntl: mm41::MMMC_VM_MX_L1_TLB_CNTL,
    l2_cntl: mm41::MMVM_L2_CNTL,
    l2_cntl2: mm41::MMVM_L2_CNTL2,
    l2_cntl3: mm41::MMVM_L2_CNTL3,
    l2_cntl4: mm41::MMVM_L2_CNTL4,
    l2_cntl5: mm41::MMVM_L2_CNTL5,
    ctx0_cntl: mm41::MMVM_CONTEXT0_CNTL,
    ctx1_cntl: mm41::MMVM_CONTEXT1_CNTL,
    ctx1_start_lo: mm41::MMVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32,
    ctx1_start_hi: mm41::MMVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32,
    ctx1_end_lo: mm41::MMVM_CONTEXT1_PAGE_TABLE_END_ADDR_LO32,
    ctx1_end_hi: mm41::MMVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32,
    identity_low_lo: mm41::MMVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32,
    identity_low_hi: mm41::MMVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32,
    identity_high_lo: mm41::MMVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32,
    identity_high_hi: mm41::MMVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32,
    identity_offset_lo: mm41::MMVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32,
    identity_offset_hi: mm41::MMVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32,
    inv_eng0_range_lo: mm41::MMVM_INVALIDATE_ENG0_ADDR_RANGE_LO32,
    inv_eng0_range_hi: mm41::MMVM_INVALIDATE_ENG0_ADDR_RANGE_HI32,
    inv_eng1_range_lo: mm41::MMVM_INVALIDATE_ENG1_ADDR_RANGE_LO32,
    inv_eng0_sem: mm41::MMVM_INVALIDATE_ENG0_SEM,
    inv_eng0_req: mm41::MMVM_INVALIDATE_ENG0_REQ,
    inv_eng1_req: mm41::MMVM_INVALIDATE_ENG1_REQ,
    inv_eng0_ack: mm41::MMVM_INVALIDATE_ENG0_ACK,
    use_semaphore: true,
    legacy_flush_only: true,
    l2_bank_select_reserved_cid2: Some(mm41::MMVM_L2_BANK_SELECT_RESERVED_CID2),
    all: mm41::ALL,
};

/// The four hubs, for lookup by discovery id and version.
pub const HUBS: &[&HubRegs] = &[&GFXHUB_3_0, &MMHUB_3_0_0, &GFXHUB_12_0, &MMHUB_4_1_0];

/// The hub table serving block `hw_id` at `version`, if barebell has one.
pub fn hub_for(hw_id: u16, version: (u8, u8, u8)) -> Option<&'static HubRegs> {
    HUBS.iter()
        .copied()
        .find(|h| h.hw_id == hw_id && h.versions.contains(&version))
}

/// The strides `*_init()` derives for a hub (`ctx_distance`,
/// `ctx_addr_distance`, `eng_addr_distance`) and the last context and
/// engine the loops reach, as facts against the hub's offset header.
macro_rules! stride_facts {
    ($h:literal, $vm:literal, $t:expr) => {
        [
            barebell_facts::Fact::constant(
                $h,
                concat!("reg", $vm, "_CONTEXT1_CNTL - reg", $vm, "_CONTEXT0_CNTL"),
                $t.ctx_distance() as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!("reg", $vm, "_CONTEXT15_CNTL - reg", $vm, "_CONTEXT1_CNTL"),
                (14 * $t.ctx_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!(
                    "reg",
                    $vm,
                    "_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32 - reg",
                    $vm,
                    "_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32"
                ),
                $t.ctx_addr_distance() as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!(
                    "reg",
                    $vm,
                    "_CONTEXT15_PAGE_TABLE_END_ADDR_HI32 - reg",
                    $vm,
                    "_CONTEXT1_PAGE_TABLE_END_ADDR_HI32"
                ),
                (14 * $t.ctx_addr_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!(
                    "reg",
                    $vm,
                    "_INVALIDATE_ENG17_ADDR_RANGE_HI32 - reg",
                    $vm,
                    "_INVALIDATE_ENG0_ADDR_RANGE_HI32"
                ),
                (17 * $t.eng_addr_distance()) as u64,
            ),
        ]
    };
}

/// Strides of MMHUB 3.0.0, GFXHUB 12.0 and MMHUB 4.1.0 (GFXHUB 3.0's are
/// in `gmc::hub::FACTS`, with `MTYPE_UC`).
pub const FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    stride_facts!("mmhub_3_0_0_offset.h", "MMVM", MMHUB_3_0_0),
    stride_facts!("gc_12_0_0_offset.h", "GCVM", GFXHUB_12_0),
    stride_facts!("mmhub_4_1_0_offset.h", "MMVM", MMHUB_4_1_0),
);
