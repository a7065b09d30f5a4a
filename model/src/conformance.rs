//! The model's own hardware facts: every register offset and field mask
//! its hub and display models decode with, written by hand in those
//! modules and checked here against the Linux 6.12 headers by `cargo
//! xtask conformance` (gathered by `barebell_catalog::all_facts`). The PTE
//! bits of [`crate::gmc::bits`] live in `amdgpu_vm.h`, which does not
//! compile outside the kernel; `tests/harness/tests/gmc.rs` checks those
//! against the header's text instead.

use crate::dcn;
use crate::hub;
use barebell_facts::Fact;

/// The hub model's masks, in each of the four hub headers: `$sh` the
/// `_sh_mask.h`, `$vm`/`$mc` the register prefixes, `$status` the fault
/// status register's name, `$bs` the block-size mask of that generation.
macro_rules! hub_facts {
    ($sh:literal, $vm:literal, $mc:literal, $status:literal, $bs:expr) => {
        [
            Fact::constant(
                $sh,
                concat!($mc, "_VM_MX_L1_TLB_CNTL__ENABLE_L1_TLB_MASK"),
                hub::ENABLE_L1_TLB as u64,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_L2_CNTL__ENABLE_L2_CACHE_MASK"),
                hub::ENABLE_L2_CACHE as u64,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_CONTEXT0_CNTL__ENABLE_CONTEXT_MASK"),
                hub::ENABLE_CONTEXT as u64,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_CONTEXT0_CNTL__PAGE_TABLE_DEPTH_MASK"),
                hub::DEPTH_MASK as u64,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_CONTEXT0_CNTL__PAGE_TABLE_DEPTH__SHIFT"),
                hub::DEPTH_SHIFT as u64,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_CONTEXT0_CNTL__PAGE_TABLE_BLOCK_SIZE_MASK"),
                $bs.0 as u64,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_CONTEXT0_CNTL__PAGE_TABLE_BLOCK_SIZE__SHIFT"),
                $bs.1 as u64,
            ),
            // Contexts 1-15 are decoded with the same masks.
            Fact::constant(
                $sh,
                concat!($vm, "_CONTEXT1_CNTL__ENABLE_CONTEXT_MASK"),
                hub::ENABLE_CONTEXT as u64,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_CONTEXT1_CNTL__PAGE_TABLE_DEPTH_MASK"),
                hub::DEPTH_MASK as u64,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_CONTEXT1_CNTL__PAGE_TABLE_BLOCK_SIZE_MASK"),
                $bs.0 as u64,
            ),
            Fact::constant(
                $sh,
                concat!($status, "__MORE_FAULTS_MASK"),
                hub::MORE_FAULTS as u64,
            ),
            Fact::constant(
                $sh,
                concat!($status, "__WALKER_ERROR__SHIFT"),
                hub::WALKER_ERROR_SHIFT as u64,
            ),
            Fact::constant(
                $sh,
                concat!($status, "__PERMISSION_FAULTS__SHIFT"),
                hub::PERMISSION_FAULTS_SHIFT as u64,
            ),
            Fact::constant(
                $sh,
                concat!($status, "__MAPPING_ERROR_MASK"),
                hub::MAPPING_ERROR as u64,
            ),
            Fact::constant($sh, concat!($status, "__CID__SHIFT"), hub::CID_SHIFT as u64),
            Fact::constant($sh, concat!($status, "__CID_MASK"), hub::CID_MASK as u64),
            Fact::constant($sh, concat!($status, "__RW_MASK"), hub::RW as u64),
            Fact::constant(
                $sh,
                concat!($status, "__VMID__SHIFT"),
                hub::VMID_SHIFT as u64,
            ),
            Fact::constant($sh, concat!($status, "__VMID_MASK"), hub::VMID_MASK as u64),
            Fact::constant(
                $sh,
                concat!(
                    $vm,
                    "_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK"
                ),
                hub::CLEAR_FAULT as u64,
            ),
            Fact::constant(
                $sh,
                concat!(
                    $vm,
                    "_L2_PROTECTION_FAULT_ADDR_HI32__LOGICAL_PAGE_ADDR_HI4_MASK"
                ),
                hub::ADDR_HI4,
            ),
            Fact::constant(
                $sh,
                concat!($vm, "_INVALIDATE_ENG0_REQ__PER_VMID_INVALIDATE_REQ_MASK"),
                hub::PER_VMID as u64,
            ),
            // The last field of the request; bits above it are reserved.
            Fact::constant(
                $sh,
                concat!($vm, "_INVALIDATE_ENG0_REQ__INVALIDATE_4K_PAGES_ONLY_MASK"),
                1 << (hub::REQ_RESERVED_SHIFT - 1),
            ),
            Fact::constant(
                $sh,
                concat!(
                    $vm,
                    "_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK"
                ),
                hub::PRIVATE_INVALIDATION as u64,
            ),
        ]
    };
}

const DCN_OFF: &str = "dcn_3_2_0_offset.h";
const DCN_SH: &str = "dcn_3_2_0_sh_mask.h";

/// Every fact of the model.
pub const FACTS: &[&[Fact]] = &[
    &[
        Fact::constant(
            "gc_9_4_3_sh_mask.h",
            "VM_CONTEXT1_CNTL__PAGE_TABLE_BLOCK_SIZE_MASK",
            hub::BLOCK_SIZE_GC_9_4_3.0 as u64,
        ),
        Fact::constant(
            "gc_9_4_3_sh_mask.h",
            "VM_CONTEXT1_CNTL__PAGE_TABLE_BLOCK_SIZE__SHIFT",
            hub::BLOCK_SIZE_GC_9_4_3.1 as u64,
        ),
        // GC 9.4.2 places the field where 9.4.3 does (the model uses the
        // one constant for both).
        Fact::constant(
            "gc_9_4_2_sh_mask.h",
            "VM_CONTEXT1_CNTL__PAGE_TABLE_BLOCK_SIZE_MASK",
            hub::BLOCK_SIZE_GC_9_4_3.0 as u64,
        ),
        Fact::constant(
            "gc_9_4_2_sh_mask.h",
            "VM_CONTEXT1_CNTL__PAGE_TABLE_BLOCK_SIZE__SHIFT",
            hub::BLOCK_SIZE_GC_9_4_3.1 as u64,
        ),
    ],
    crate::hub_v9::FACTS,
    crate::vgpu::gfx_v9_4_3::FACTS,
    crate::discovery::ALDEBARAN_FACTS,
    &hub_facts!(
        "gc_11_0_0_sh_mask.h",
        "GCVM",
        "GCMC",
        "GCVM_L2_PROTECTION_FAULT_STATUS",
        hub::BLOCK_SIZE_GFX11
    ),
    &hub_facts!(
        "mmhub_3_0_0_sh_mask.h",
        "MMVM",
        "MMMC",
        "MMVM_L2_PROTECTION_FAULT_STATUS",
        hub::BLOCK_SIZE_GFX11
    ),
    &hub_facts!(
        "gc_12_0_0_sh_mask.h",
        "GCVM",
        "GCMC",
        "GCVM_L2_PROTECTION_FAULT_STATUS_LO32",
        hub::BLOCK_SIZE_GFX12
    ),
    &hub_facts!(
        "mmhub_4_1_0_sh_mask.h",
        "MMVM",
        "MMMC",
        "MMVM_L2_PROTECTION_FAULT_STATUS_LO32",
        hub::BLOCK_SIZE_GFX12
    ),
    &[
        Fact::constant(DCN_OFF, "regD1VGA_CONTROL", dcn::D1VGA_CONTROL.0 as u64),
        Fact::constant(
            DCN_OFF,
            "regD1VGA_CONTROL_BASE_IDX",
            dcn::D1VGA_CONTROL.1 as u64,
        ),
        Fact::constant(
            DCN_OFF,
            "regHUBP0_DCSURF_PRI_VIEWPORT_DIMENSION",
            dcn::HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION.0 as u64,
        ),
        Fact::constant(
            DCN_OFF,
            "regHUBP0_DCSURF_PRI_VIEWPORT_DIMENSION_BASE_IDX",
            dcn::HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION.1 as u64,
        ),
        Fact::constant(
            DCN_OFF,
            "regHUBPREQ0_DCSURF_SURFACE_PITCH",
            dcn::HUBPREQ0_DCSURF_SURFACE_PITCH.0 as u64,
        ),
        Fact::constant(
            DCN_OFF,
            "regHUBPREQ0_DCSURF_SURFACE_PITCH_BASE_IDX",
            dcn::HUBPREQ0_DCSURF_SURFACE_PITCH.1 as u64,
        ),
        Fact::constant(
            DCN_SH,
            "D1VGA_CONTROL__D1VGA_MODE_ENABLE_MASK",
            dcn::D1VGA_MODE_ENABLE_MASK as u64,
        ),
        Fact::constant(
            DCN_SH,
            "HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION__PRI_VIEWPORT_WIDTH__SHIFT",
            dcn::PRI_VIEWPORT_WIDTH.0 as u64,
        ),
        Fact::constant(
            DCN_SH,
            "HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION__PRI_VIEWPORT_WIDTH_MASK",
            dcn::PRI_VIEWPORT_WIDTH.1 as u64,
        ),
        Fact::constant(
            DCN_SH,
            "HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION__PRI_VIEWPORT_HEIGHT__SHIFT",
            dcn::PRI_VIEWPORT_HEIGHT.0 as u64,
        ),
        Fact::constant(
            DCN_SH,
            "HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION__PRI_VIEWPORT_HEIGHT_MASK",
            dcn::PRI_VIEWPORT_HEIGHT.1 as u64,
        ),
        Fact::constant(
            DCN_SH,
            "HUBPREQ0_DCSURF_SURFACE_PITCH__PITCH__SHIFT",
            dcn::PITCH.0 as u64,
        ),
        Fact::constant(
            DCN_SH,
            "HUBPREQ0_DCSURF_SURFACE_PITCH__PITCH_MASK",
            dcn::PITCH.1 as u64,
        ),
        // soc15_hw_ip.h: the discovery id the model's DMU entry carries.
        Fact::constant(
            "soc15_hw_ip.h",
            "DMU_HWID",
            crate::discovery::DMU_HWID as u64,
        ),
    ],
];
