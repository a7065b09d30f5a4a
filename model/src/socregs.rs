//! The registers the model's SOC block models answer to ([`crate::smu`],
//! [`crate::ih`], [`crate::sdma`], [`crate::power`], [`crate::s2a`]),
//! per IP version, written for the model from the Linux 6.12
//! `asic_reg/*_offset.h` headers. Each table's `FACTS` tie every offset and
//! `BASE_IDX` to its header (`cargo xtask conformance`), so a slip here
//! is a mismatch, not a silently wrong block.
//!
//! They are the registers tinygrad's AM driver touches that barebell's
//! own bring-up does not (`docs/am-boot.md` §2); the type is the
//! runtime's plain [`Reg`] (a name, a dword offset, a segment index),
//! the values are the model's own.

pub use barebell::regs::Reg;

/// One register table: constants, `ALL`, `FACTS` against `$header`.
macro_rules! table {
    ($(#[$doc:meta])* $module:ident, $header:literal; $($name:ident = $off:literal, $idx:literal;)*) => {
        table! { $(#[$doc])* $module, $header, "reg"; $($name = $off, $idx;)* }
    };
    // Older headers (`nbio_7_4_offset.h`) name registers `mmNAME`.
    ($(#[$doc:meta])* $module:ident, $header:literal, $prefix:literal; $($name:ident = $off:literal, $idx:literal;)*) => {
        $(#[$doc])*
        pub mod $module {
            use super::Reg;
            $(
                pub const $name: Reg = Reg { name: stringify!($name), offset: $off, base_idx: $idx };
            )*
            /// The header the offsets are checked against.
            pub const HEADER: &str = $header;
            /// Every register of the table.
            pub const ALL: &[Reg] = &[$($name),*];
            /// Offset and `BASE_IDX` of each register, as conformance facts.
            pub const FACTS: &[barebell_facts::Fact] = &[
                $(
                    barebell_facts::Fact::constant($header, concat!($prefix, stringify!($name)), $off),
                    barebell_facts::Fact::constant($header, concat!($prefix, stringify!($name), "_BASE_IDX"), $idx),
                )*
            ];
        }
    };
}

table! {
    /// GC 11.0.0: RLC, CP and scratch registers AM writes, and SDMA 6.0's
    /// (in the GC header, on the GC bases).
    gc_11_0_0, "gc_11_0_0_offset.h";
    SCRATCH_REG4 = 0x2044, 1;
    SCRATCH_REG5 = 0x2045, 1;
    SCRATCH_REG6 = 0x2046, 1;
    SCRATCH_REG7 = 0x2047, 1;
    RLC_CNTL = 0x4c00, 1;
    RLC_SRM_CNTL = 0x4c80, 1;
    RLC_SPM_MC_CNTL = 0x0982, 1;
    RLC_SAFE_MODE = 0x0980, 1;
    RLC_CGCG_CGLS_CTRL = 0x4c49, 1;
    RLC_CGTT_MGCG_OVERRIDE = 0x4c48, 1;
    CP_RB_WPTR_POLL_CNTL = 0x0f62, 0;
    CP_INT_CNTL = 0x1de9, 0;
    GRBM_SOFT_RESET = 0x0da8, 0;
    SPI_COMPUTE_QUEUE_RESET = 0x1f73, 0;
    SDMA0_WATCHDOG_CNTL = 0x002e, 0;
    SDMA0_UTCL1_CNTL = 0x003c, 0;
    SDMA0_UTCL1_PAGE = 0x003f, 0;
    SDMA0_CNTL = 0x001c, 0;
    SDMA0_QUEUE0_RB_CNTL = 0x0080, 0;
    SDMA0_QUEUE0_RB_BASE = 0x0081, 0;
    SDMA0_QUEUE0_RB_BASE_HI = 0x0082, 0;
    SDMA0_QUEUE0_RB_RPTR = 0x0083, 0;
    SDMA0_QUEUE0_RB_RPTR_HI = 0x0084, 0;
    SDMA0_QUEUE0_RB_WPTR = 0x0085, 0;
    SDMA0_QUEUE0_RB_WPTR_HI = 0x0086, 0;
    SDMA0_QUEUE0_RB_RPTR_ADDR_HI = 0x0088, 0;
    SDMA0_QUEUE0_RB_RPTR_ADDR_LO = 0x0089, 0;
    SDMA0_QUEUE0_IB_CNTL = 0x008a, 0;
    SDMA0_QUEUE0_DOORBELL = 0x0092, 0;
    SDMA0_QUEUE0_DOORBELL_OFFSET = 0x00ab, 0;
    SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI = 0x00b2, 0;
    SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO = 0x00b3, 0;
    SDMA0_QUEUE0_MINOR_PTR_UPDATE = 0x00b5, 0;
    SDMA0_RLC_CGCG_CTRL = 0x005c, 0;
    SDMA1_RLC_CGCG_CTRL = 0x065c, 0;
    SDMA0_F32_CNTL = 0x589a, 1;
}

table! {
    /// GC 12.0.0 (Linux 6.12's one GC 12 header, used for 12.0.1 by
    /// `gfx_v12_0.c`): as GC 11.0.0, with SDMA 7.0's `SDMA0_MCU_CNTL`.
    gc_12_0_0, "gc_12_0_0_offset.h";
    SCRATCH_REG4 = 0x2044, 1;
    SCRATCH_REG5 = 0x2045, 1;
    SCRATCH_REG6 = 0x2046, 1;
    SCRATCH_REG7 = 0x2047, 1;
    RLC_CNTL = 0x4c00, 1;
    RLC_SRM_CNTL = 0x4c80, 1;
    RLC_SPM_MC_CNTL = 0x0982, 1;
    RLC_SAFE_MODE = 0x0980, 1;
    RLC_CGCG_CGLS_CTRL = 0x4c49, 1;
    RLC_CGTT_MGCG_OVERRIDE = 0x4c48, 1;
    CP_RB_WPTR_POLL_CNTL = 0x0f62, 0;
    CP_INT_CNTL = 0x1de9, 0;
    GRBM_SOFT_RESET = 0x0da8, 0;
    SPI_COMPUTE_QUEUE_RESET = 0x1f73, 0;
    SDMA0_WATCHDOG_CNTL = 0x002b, 0;
    SDMA0_UTCL1_CNTL = 0x0035, 0;
    SDMA0_UTCL1_PAGE = 0x0038, 0;
    SDMA0_CNTL = 0x000d, 0;
    SDMA0_QUEUE0_RB_CNTL = 0x0080, 0;
    SDMA0_QUEUE0_RB_BASE = 0x0081, 0;
    SDMA0_QUEUE0_RB_BASE_HI = 0x0082, 0;
    SDMA0_QUEUE0_RB_RPTR = 0x0083, 0;
    SDMA0_QUEUE0_RB_RPTR_HI = 0x0084, 0;
    SDMA0_QUEUE0_RB_WPTR = 0x0085, 0;
    SDMA0_QUEUE0_RB_WPTR_HI = 0x0086, 0;
    SDMA0_QUEUE0_RB_RPTR_ADDR_HI = 0x0088, 0;
    SDMA0_QUEUE0_RB_RPTR_ADDR_LO = 0x0087, 0;
    SDMA0_QUEUE0_IB_CNTL = 0x0089, 0;
    SDMA0_QUEUE0_DOORBELL = 0x008f, 0;
    SDMA0_QUEUE0_DOORBELL_OFFSET = 0x0091, 0;
    SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI = 0x0099, 0;
    SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO = 0x0098, 0;
    SDMA0_QUEUE0_MINOR_PTR_UPDATE = 0x009b, 0;
    SDMA0_RLC_CGCG_CTRL = 0x0055, 0;
    SDMA1_RLC_CGCG_CTRL = 0x0655, 0;
    SDMA0_MCU_CNTL = 0x588e, 1;
}

table! {
    /// OSSSYS 6.0.0 (Navi31's IH, `ih_v6_0.c`).
    osssys_6_0_0, "osssys_6_0_0_offset.h";
    IH_RB_CNTL = 0x0080, 0;
    IH_RB_BASE = 0x0081, 0;
    IH_RB_BASE_HI = 0x0082, 0;
    IH_RB_RPTR = 0x0083, 0;
    IH_RB_WPTR = 0x0084, 0;
    IH_RB_WPTR_ADDR_HI = 0x0085, 0;
    IH_RB_WPTR_ADDR_LO = 0x0086, 0;
    IH_DOORBELL_RPTR = 0x0087, 0;
    IH_RB_CNTL_RING1 = 0x008c, 0;
    IH_RB_BASE_RING1 = 0x008d, 0;
    IH_RB_BASE_HI_RING1 = 0x008e, 0;
    IH_RB_RPTR_RING1 = 0x008f, 0;
    IH_RB_WPTR_RING1 = 0x0090, 0;
    IH_DOORBELL_RPTR_RING1 = 0x0093, 0;
    IH_STORM_CLIENT_LIST_CNTL = 0x00da, 0;
    IH_INT_FLOOD_CNTL = 0x00d5, 0;
    IH_MSI_STORM_CTRL = 0x00f1, 0;
}

table! {
    /// OSSSYS 7.0.0 (Navi48's IH, `ih_v7_0.c`).
    osssys_7_0_0, "osssys_7_0_0_offset.h";
    IH_RB_CNTL = 0x0080, 0;
    IH_RB_BASE = 0x0083, 0;
    IH_RB_BASE_HI = 0x0084, 0;
    IH_RB_RPTR = 0x0081, 0;
    IH_RB_WPTR = 0x0082, 0;
    IH_RB_WPTR_ADDR_HI = 0x0085, 0;
    IH_RB_WPTR_ADDR_LO = 0x0086, 0;
    IH_DOORBELL_RPTR = 0x0087, 0;
    IH_RB_CNTL_RING1 = 0x008c, 0;
    IH_RB_BASE_RING1 = 0x008f, 0;
    IH_RB_BASE_HI_RING1 = 0x0090, 0;
    IH_RB_RPTR_RING1 = 0x008d, 0;
    IH_RB_WPTR_RING1 = 0x008e, 0;
    IH_DOORBELL_RPTR_RING1 = 0x0093, 0;
    IH_STORM_CLIENT_LIST_CNTL = 0x00aa, 0;
    IH_INT_FLOOD_CNTL = 0x00d5, 0;
    IH_MSI_STORM_CTRL = 0x00f1, 0;
}

table! {
    /// HDP 6.0.0 (`hdp_v6_0.c`).
    hdp_6_0_0, "hdp_6_0_0_offset.h";
    HDP_MEM_POWER_CTRL = 0x00d4, 0;
}

table! {
    /// HDP 7.0.0 (`hdp_v7_0.c`).
    hdp_7_0_0, "hdp_7_0_0_offset.h";
    HDP_MEM_POWER_CTRL = 0x00d4, 0;
}

table! {
    /// MMHUB 3.0.0: the ATC L2 clock-gating register (`mmhub_v3_0.c`
    /// `mmhub_v3_0_update_medium_grain_clock_gating()`); MMHUB 4.1.0 has
    /// no such register (`mmhub_4_1_0_offset.h`).
    mmhub_3_0_0, "mmhub_3_0_0_offset.h";
    MM_ATC_L2_MISC_CG = 0x06cd, 0;
}

table! {
    /// NBIO 4.3.0: the function-2 strap, the GFX/SDMA S2A doorbell entries
    /// (`nbio_v4_3_gc_doorbell_init()`), the unremapped HDP flush, the
    /// doorbell interrupt control whose RAS status bits AM's IH handler
    /// reads (`AM_IH.interrupt_handler`; `nbio_v4_3.c` reads and writes it),
    /// the HDP flush request/done pair a CP `WAIT_REG_MEM` names
    /// (`nbio_v4_3_get_hdp_flush_req_offset()`, tinygrad's `memory_barrier`).
    nbio_4_3_0, "nbio_4_3_0_offset.h";
    RCC_DEV0_EPF2_STRAP2 = 0xd102, 5;
    S2A_DOORBELL_ENTRY_0_CTRL = 0x4f7640, 3;
    S2A_DOORBELL_ENTRY_1_CTRL = 0x4f7641, 3;
    S2A_DOORBELL_ENTRY_2_CTRL = 0x4f7642, 3;
    S2A_DOORBELL_ENTRY_3_CTRL = 0x4f7643, 3;
    BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL = 0x00f7, 2;
    BIF_BX0_BIF_DOORBELL_INT_CNTL = 0x00fe, 2;
    BIF_BX_PF0_GPU_HDP_FLUSH_REQ = 0x0106, 2;
    BIF_BX_PF0_GPU_HDP_FLUSH_DONE = 0x0107, 2;
}

table! {
    /// NBIF 6.3.1: as NBIO 4.3.0, the S2A entries in the GDC block
    /// (`nbif_v6_3_1_gc_doorbell_init()`); the doorbell interrupt control
    /// and HDP flush pair at NBIO 4.3.0's offsets (`nbif_v6_3_1.c`).
    nbif_6_3_1, "nbif_6_3_1_offset.h";
    RCC_DEV0_EPF2_STRAP2 = 0xd102, 5;
    GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL = 0x01cb, 2;
    GDC_S2A0_S2A_DOORBELL_ENTRY_1_CTRL = 0x01cc, 2;
    GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL = 0x01cd, 2;
    GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL = 0x01ce, 2;
    BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL = 0x00f7, 2;
    BIF_BX0_BIF_DOORBELL_INT_CNTL = 0x00fe, 2;
    BIF_BX_PF0_GPU_HDP_FLUSH_REQ = 0x0106, 2;
    BIF_BX_PF0_GPU_HDP_FLUSH_DONE = 0x0107, 2;
}

table! {
    /// MP1 13.0.0: the SMU mailbox (`smu_v13_0_0_set_smu_mailbox_registers()`)
    /// and its debug twin, segment 0.
    mp1_13_0_0, "mp_13_0_0_offset.h";
    MP1_SMN_C2PMSG_53 = 0x0275, 0;
    MP1_SMN_C2PMSG_54 = 0x0276, 0;
    MP1_SMN_C2PMSG_66 = 0x0282, 0;
    MP1_SMN_C2PMSG_75 = 0x028b, 0;
    MP1_SMN_C2PMSG_82 = 0x0292, 0;
    MP1_SMN_C2PMSG_90 = 0x029a, 0;
}

table! {
    /// MP1 14.0.2 (used for 14.0.3): the same mailbox in segment 1
    /// (`smu_v14_0_2_set_smu_mailbox_registers()`).
    mp1_14_0_2, "mp_14_0_2_offset.h";
    MP1_SMN_C2PMSG_53 = 0x0075, 1;
    MP1_SMN_C2PMSG_54 = 0x0076, 1;
    MP1_SMN_C2PMSG_66 = 0x0082, 1;
    MP1_SMN_C2PMSG_75 = 0x008b, 1;
    MP1_SMN_C2PMSG_82 = 0x0092, 1;
    MP1_SMN_C2PMSG_90 = 0x009a, 1;
}

table! {
    /// OSSSYS 4.4.2 (MI300's IH, `vega20_ih.c`; the IH_CHICKEN and retry
    /// CAM control at the offsets `vega20_ih.c` defines for 4.4.x).
    osssys_4_4_2, "osssys_4_4_2_offset.h";
    IH_RB_CNTL = 0x0080, 0;
    IH_RB_BASE = 0x0081, 0;
    IH_RB_BASE_HI = 0x0082, 0;
    IH_RB_RPTR = 0x0083, 0;
    IH_RB_WPTR = 0x0084, 0;
    IH_RB_WPTR_ADDR_HI = 0x0085, 0;
    IH_RB_WPTR_ADDR_LO = 0x0086, 0;
    IH_DOORBELL_RPTR = 0x0087, 0;
    IH_DOORBELL_RETRY_CAM = 0x0088, 0;
    IH_RB_CNTL_RING1 = 0x008c, 0;
    IH_RB_BASE_RING1 = 0x008d, 0;
    IH_RB_BASE_HI_RING1 = 0x008e, 0;
    IH_RB_RPTR_RING1 = 0x008f, 0;
    IH_RB_WPTR_RING1 = 0x0090, 0;
    IH_DOORBELL_RPTR_RING1 = 0x0093, 0;
    IH_RETRY_INT_CAM_CNTL = 0x00ea, 0;
    IH_CHICKEN = 0x018d, 0;
}

table! {
    /// NBIO 7.9.0 (MI300, `nbio_v7_9.c`): the HDP remap, the apertures,
    /// the PCIE index/data pair, the fence and BACO registers
    /// `nbio_v7_9_init_registers()` writes, the direct HDP flush.
    nbio_7_9_0, "nbio_7_9_0_offset.h";
    BIF_BX_PF0_RSMU_INDEX = 0x0000, 1;
    BIF_BX_PF0_RSMU_DATA = 0x0001, 1;
    BIF_BX0_PCIE_INDEX2 = 0x000e, 0;
    BIF_BX0_PCIE_DATA2 = 0x000f, 0;
    BIF_BX0_PCIE_INDEX2_HI = 0x0011, 0;
    RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN = 0x00c0, 2;
    RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE = 0x00c3, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH = 0x00f3, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW = 0x00f4, 2;
    BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL = 0x00f5, 2;
    BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL = 0x00f7, 2;
    BIF_BX_PF0_GPU_HDP_FLUSH_REQ = 0x0106, 2;
    BIF_BX_PF0_GPU_HDP_FLUSH_DONE = 0x0107, 2;
    BIF_BX0_BACO_CNTL = 0x010b, 2;
    BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL = 0x012d, 2;
    BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL = 0x012e, 2;
    BIF_BX_PF0_PARTITION_COMPUTE_STATUS = 0x0163, 2;
    XCC_DOORBELL_FENCE = 0x740c, 5;
    BIFC_DOORBELL_ACCESS_EN_PF = 0xcf6e, 8;
    BIFC_GFX_INT_MONITOR_MASK = 0xe8ad, 8;
}

table! {
    /// NBIO 7.4.4 (Aldebaran, `nbio_v7_4.c`; `nbio_7_4_offset.h` names
    /// them `mm*`): the HDP remap, the apertures, the PCIE index/data
    /// pair, the direct HDP flush and its request/done pair.
    nbio_7_4, "nbio_7_4_offset.h", "mm";
    PCIE_INDEX2 = 0x000e, 0;
    PCIE_DATA2 = 0x000f, 0;
    RCC_DOORBELL_APER_EN = 0x00c0, 2;
    RCC_CONFIG_MEMSIZE = 0x00c3, 2;
    DOORBELL_SELFRING_GPA_APER_BASE_HIGH = 0x00f3, 2;
    DOORBELL_SELFRING_GPA_APER_BASE_LOW = 0x00f4, 2;
    DOORBELL_SELFRING_GPA_APER_CNTL = 0x00f5, 2;
    HDP_MEM_COHERENCY_FLUSH_CNTL = 0x00f7, 2;
    GPU_HDP_FLUSH_REQ = 0x0106, 2;
    GPU_HDP_FLUSH_DONE = 0x0107, 2;
    REMAP_HDP_MEM_FLUSH_CNTL = 0x012d, 2;
    REMAP_HDP_REG_FLUSH_CNTL = 0x012e, 2;
}

table! {
    /// GC 9.4.3 registers Linux (`gfx_v9_4_3_xcc_constants_init()`,
    /// `gfx_v9_4_3_init_golden_registers()`, the clock-gating and CP
    /// interrupt paths) and tinygrad's AM (`AM_GFX.init_hw`,
    /// `set_clockgating_state`, `AMDev.__init__`'s boot flags) write on
    /// every XCC (`SPI_COMPUTE_QUEUE_RESET`: `gfx_v9_4_3.c` and
    /// `amdgpu_amdkfd_gfx_v9.c` queue resets, AM's `_dequeue_hqds`),
    /// whose effect the model does not model: stored as written
    /// ([`crate::vgpu::gfx_v9_4_3`]'s named store). `CP_STAT` reads 0
    /// (the CP idle, *model value*).
    gc_9_4_3_stored, "gc_9_4_3_offset.h";
    GRBM_CNTL = 0x0000, 0;
    CP_STAT = 0x01a0, 0;
    CP_RB_WPTR_POLL_CNTL = 0x01c2, 0;
    GB_ADDR_CONFIG = 0x063e, 0;
    TCP_CNTL = 0x0b02, 0;
    CP_INT_CNTL = 0x1049, 0;
    TCP_UTCL1_CNTL1 = 0x12b5, 0;
    TCP_UTCL1_CNTL2 = 0x12b6, 0;
    SPI_COMPUTE_QUEUE_RESET = 0x11db, 0;
    SCRATCH_REG6 = 0x2046, 1;
    SCRATCH_REG7 = 0x2047, 1;
    RLC_CGTT_MGCG_OVERRIDE = 0x4c48, 1;
    RLC_SPM_MC_CNTL = 0x4c71, 1;
}

table! {
    /// GC 9.4.2 (Aldebaran): the registers of [`gc_9_4_3_stored`] that
    /// `gc_9_4_2_offset.h` defines (at the same offsets; it has no
    /// `TCP_CNTL`), and `SCRATCH_REG4`/`5` (the driver's TMR record),
    /// stored as written.
    gc_9_4_2_stored, "gc_9_4_2_offset.h";
    GRBM_CNTL = 0x0000, 0;
    SCRATCH_REG4 = 0x2044, 1;
    SCRATCH_REG5 = 0x2045, 1;
    CP_STAT = 0x01a0, 0;
    CP_RB_WPTR_POLL_CNTL = 0x01c2, 0;
    GB_ADDR_CONFIG = 0x063e, 0;
    CP_INT_CNTL = 0x1049, 0;
    TCP_UTCL1_CNTL1 = 0x12b5, 0;
    TCP_UTCL1_CNTL2 = 0x12b6, 0;
    SPI_COMPUTE_QUEUE_RESET = 0x11db, 0;
    SCRATCH_REG6 = 0x2046, 1;
    SCRATCH_REG7 = 0x2047, 1;
    RLC_CGTT_MGCG_OVERRIDE = 0x4c48, 1;
    RLC_SPM_MC_CNTL = 0x4c71, 1;
}

table! {
    /// GC 9.4.3's shader-array registers: the GRBM index that selects one
    /// SE/SH for the next access (`gfx_v9_4_3_xcc_select_se_sh()`) and the
    /// fused and user-disabled CU masks read through it
    /// (`gfx_v9_4_3_get_cu_active_bitmap()`), per XCC
    /// ([`crate::vgpu::gfx_v9_4_3`]'s shader arrays).
    gc_9_4_3_arrays, "gc_9_4_3_offset.h";
    CC_GC_SHADER_ARRAY_CONFIG = 0x026f, 0;
    GC_USER_SHADER_ARRAY_CONFIG = 0x0270, 0;
    GRBM_GFX_INDEX = 0x2200, 1;
}

/// The fields of the shader-array registers the model reads and answers
/// (the same in `gc_9_4_2_sh_mask.h` and `gc_9_4_3_sh_mask.h`; [`ARRAY_FIELD_FACTS`]).
pub mod array_fields {
    /// `CC_GC_SHADER_ARRAY_CONFIG__INACTIVE_CUS` and
    /// `GC_USER_SHADER_ARRAY_CONFIG__INACTIVE_CUS`.
    pub const INACTIVE_CUS_SHIFT: u32 = 16;
    pub const INACTIVE_CUS_MASK: u32 = 0xFFFF_0000;
    /// `GRBM_GFX_INDEX` fields.
    pub const SH_INDEX_SHIFT: u32 = 8;
    pub const SE_INDEX_SHIFT: u32 = 16;
    pub const SH_BROADCAST_WRITES_MASK: u32 = 0x2000_0000;
    pub const INSTANCE_BROADCAST_WRITES_MASK: u32 = 0x4000_0000;
    pub const SE_BROADCAST_WRITES_MASK: u32 = 0x8000_0000;
}

/// [`array_fields`] against both headers.
pub const ARRAY_FIELD_FACTS: &[barebell_facts::Fact] = {
    use array_fields::*;
    use barebell_facts::Fact;
    macro_rules! both {
        ($($name:literal = $v:expr;)*) => {
            &[$(
                Fact::constant("gc_9_4_2_sh_mask.h", $name, $v as u64),
                Fact::constant("gc_9_4_3_sh_mask.h", $name, $v as u64),
            )*]
        };
    }
    both! {
        "CC_GC_SHADER_ARRAY_CONFIG__INACTIVE_CUS__SHIFT" = INACTIVE_CUS_SHIFT;
        "CC_GC_SHADER_ARRAY_CONFIG__INACTIVE_CUS_MASK" = INACTIVE_CUS_MASK;
        "GC_USER_SHADER_ARRAY_CONFIG__INACTIVE_CUS__SHIFT" = INACTIVE_CUS_SHIFT;
        "GC_USER_SHADER_ARRAY_CONFIG__INACTIVE_CUS_MASK" = INACTIVE_CUS_MASK;
        "GRBM_GFX_INDEX__SH_INDEX__SHIFT" = SH_INDEX_SHIFT;
        "GRBM_GFX_INDEX__SE_INDEX__SHIFT" = SE_INDEX_SHIFT;
        "GRBM_GFX_INDEX__SH_BROADCAST_WRITES_MASK" = SH_BROADCAST_WRITES_MASK;
        "GRBM_GFX_INDEX__INSTANCE_BROADCAST_WRITES_MASK" = INSTANCE_BROADCAST_WRITES_MASK;
        "GRBM_GFX_INDEX__SE_BROADCAST_WRITES_MASK" = SE_BROADCAST_WRITES_MASK;
    }
};

table! {
    /// GC 9.4.2's (Aldebaran): the same three, at the same offsets
    /// (`gfx_v9_0_select_se_sh()`, `gfx_v9_0_get_cu_active_bitmap()`).
    gc_9_4_2_arrays, "gc_9_4_2_offset.h";
    CC_GC_SHADER_ARRAY_CONFIG = 0x026f, 0;
    GC_USER_SHADER_ARRAY_CONFIG = 0x0270, 0;
    GRBM_GFX_INDEX = 0x2200, 1;
}

table! {
    /// SDMA 4.4.2's `SDMA_CNTL` (trap and context-switch enables,
    /// `sdma_v4_4_2_inst_ctx_switch_enable()`, tinygrad's
    /// `AM_SDMA.init_hw`), per instance: stored as written.
    sdma_4_4_2_stored, "sdma_4_4_2_offset.h";
    SDMA_CNTL = 0x006d, 0;
}

table! {
    /// NBIO 7.9 registers both drivers write whose effect the model does
    /// not model yet, stored as written: the S2A doorbell entries of the
    /// SDMA ports (`nbio_v7_9_sdma_doorbell_range()`, tinygrad's
    /// `AM_SOC.doorbell_enable`), the BIF doorbell range entries, the RAS
    /// interrupt status (the segment-8 enables are the NBIO model's, in
    /// [`nbio_7_9_0`]; the RAS status is
    /// `BIF_BX0_BIF_DOORBELL_INT_CNTL`, `nbio_v7_9.c`, AM's IH handler).
    nbio_7_9_0_stored, "nbio_7_9_0_offset.h";
    RCC_STRAP0_RCC_DEV0_EPF0_STRAP0 = 0x0016, 2;
    BIF_BX0_BIF_DOORBELL_INT_CNTL = 0x00fe, 2;
    S2A_DOORBELL_ENTRY_1_CTRL = 0x7a81, 5;
    S2A_DOORBELL_ENTRY_2_CTRL = 0x7a82, 5;
    S2A_DOORBELL_ENTRY_5_CTRL = 0x7a85, 5;
    S2A_DOORBELL_ENTRY_6_CTRL = 0x7a86, 5;
    DOORBELL0_CTRL_ENTRY_1 = 0xcd01, 8;
    DOORBELL0_CTRL_ENTRY_2 = 0xcd02, 8;
    DOORBELL0_CTRL_ENTRY_3 = 0xcd03, 8;
    DOORBELL0_CTRL_ENTRY_4 = 0xcd04, 8;
    DOORBELL0_CTRL_ENTRY_5 = 0xcd05, 8;
    DOORBELL0_CTRL_ENTRY_6 = 0xcd06, 8;
    DOORBELL0_CTRL_ENTRY_7 = 0xcd07, 8;
    DOORBELL0_CTRL_ENTRY_8 = 0xcd08, 8;
    DOORBELL0_CTRL_ENTRY_9 = 0xcd09, 8;
    DOORBELL0_CTRL_ENTRY_10 = 0xcd0a, 8;
    DOORBELL0_CTRL_ENTRY_11 = 0xcd0b, 8;
    DOORBELL0_CTRL_ENTRY_12 = 0xcd0c, 8;
    DOORBELL0_CTRL_ENTRY_13 = 0xcd0d, 8;
    DOORBELL0_CTRL_ENTRY_14 = 0xcd0e, 8;
    DOORBELL0_CTRL_ENTRY_15 = 0xcd0f, 8;
    DOORBELL0_CTRL_ENTRY_16 = 0xcd10, 8;
}

table! {
    /// MP1 13.0.2 (Aldebaran's SMU): the main mailbox and the debug
    /// registers, segment 0.
    mp1_13_0_2, "mp_13_0_2_offset.h";
    MP1_SMN_C2PMSG_53 = 0x0275, 0;
    MP1_SMN_C2PMSG_54 = 0x0276, 0;
    MP1_SMN_C2PMSG_66 = 0x0282, 0;
    MP1_SMN_C2PMSG_75 = 0x028b, 0;
    MP1_SMN_C2PMSG_82 = 0x0292, 0;
    MP1_SMN_C2PMSG_90 = 0x029a, 0;
}

table! {
    /// MP1 13.0.6 (MI300's SMU): the main mailbox
    /// (`smu_v13_0_set_smu_mailbox_registers()`) and the debug registers,
    /// segment 0.
    mp1_13_0_6, "mp_13_0_6_offset.h";
    MP1_SMN_C2PMSG_53 = 0x0275, 0;
    MP1_SMN_C2PMSG_54 = 0x0276, 0;
    MP1_SMN_C2PMSG_66 = 0x0282, 0;
    MP1_SMN_C2PMSG_75 = 0x028b, 0;
    MP1_SMN_C2PMSG_82 = 0x0292, 0;
    MP1_SMN_C2PMSG_90 = 0x029a, 0;
}

/// Every table's facts.
pub const FACTS: &[&[barebell_facts::Fact]] = &[
    gc_11_0_0::FACTS,
    gc_12_0_0::FACTS,
    osssys_6_0_0::FACTS,
    osssys_7_0_0::FACTS,
    hdp_6_0_0::FACTS,
    hdp_7_0_0::FACTS,
    mmhub_3_0_0::FACTS,
    nbio_4_3_0::FACTS,
    nbif_6_3_1::FACTS,
    mp1_13_0_0::FACTS,
    mp1_14_0_2::FACTS,
    osssys_4_4_2::FACTS,
    nbio_7_9_0::FACTS,
    nbio_7_4::FACTS,
    mp1_13_0_6::FACTS,
    gc_9_4_3_stored::FACTS,
    sdma_4_4_2_stored::FACTS,
    nbio_7_9_0_stored::FACTS,
];
