//! GC 9.4.3 (MI300, gfx942) registers of the RLC and MEC start after PSP
//! loading, per XCC (`gfx_v9_4_3_xcc_rlc_resume()`,
//! `gfx_v9_4_3_xcc_cp_resume()`, `gfx_v9_4_3_xcc_cp_compute_enable()`,
//! `gfx_v9_4_3_xcc_enable_gui_idle_interrupt()`).
//!
//! Checked against `asic_reg/gc/gc_9_4_3_offset.h` / `_sh_mask.h` from
//! Linux 6.12. Each XCC is one GC instance: the same offsets resolve
//! against that instance's bases (`adev->reg_offset[GC_HWIP][GET_INST(GC,
//! xcc)]`), so the start code takes one [`crate::bus::Block`] per XCC.
//! The CP/HQD registers of GC 9.4.3 live in another module
//! (`gc_9_4_3.rs`); `CP_MEC_CNTL` and `CP_INT_CNTL_RING0` are here
//! because the start sequence writes them.

super::registers! {
    "gc_9_4_3_offset.h";
    CP_MEC_CNTL = 0x008d, 0;
    CP_INT_CNTL_RING0 = 0x106a, 0;
    RLC_CNTL = 0x4c00, 1;
    RLC_SAFE_MODE = 0x4c05, 1;
    RLC_CGCG_CGLS_CTRL = 0x4c49, 1;
    RLC_SRM_CNTL = 0x4c80, 1;
}

/// `RLC_CNTL`: `RLC_ENABLE_F32` is what `gfx_v9_4_3_is_rlc_enabled()`
/// reads (on XCC 0) before safe mode is entered.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RlcCntl {
    pub rlc_enable_f32: bool,
    pub force_retry: bool,
    pub read_cache_disable: bool,
    pub rlc_step_f32: bool,
    #[bits(28)]
    pub reserved: u32,
}

/// `RLC_SAFE_MODE`: `gfx_v9_4_3_xcc_set_safe_mode()` writes `CMD` with
/// `MESSAGE` = 1 and waits for the RLC to clear `CMD`;
/// `gfx_v9_4_3_xcc_unset_safe_mode()` writes `CMD` alone (message 0).
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RlcSafeMode {
    pub cmd: bool,
    #[bits(4)]
    pub message: u8,
    #[bits(27)]
    __: u32,
}

/// `RLC_SRM_CNTL`: `gfx_v9_4_3_xcc_enable_save_restore_machine()` sets
/// `SRM_ENABLE` (RLC v2.1 firmware: `is_rlc_v2_1`).
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RlcSrmCntl {
    pub srm_enable: bool,
    pub auto_incr_addr: bool,
    #[bits(30)]
    __: u32,
}

/// `CP_MEC_CNTL`: what `gfx_v9_4_3_xcc_cp_compute_enable()` writes (0 to
/// run; halt + pipe resets + icache invalidate to stop).
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct CpMecCntl {
    #[bits(4)]
    __: u8,
    pub mec_invalidate_icache: bool,
    #[bits(11)]
    __: u16,
    pub mec_me1_pipe0_reset: bool,
    pub mec_me1_pipe1_reset: bool,
    pub mec_me1_pipe2_reset: bool,
    pub mec_me1_pipe3_reset: bool,
    pub mec_me2_pipe0_reset: bool,
    pub mec_me2_pipe1_reset: bool,
    #[bits(6)]
    __: u8,
    pub mec_me2_halt: bool,
    pub mec_me2_step: bool,
    pub mec_me1_halt: bool,
    pub mec_me1_step: bool,
}

impl CpMecCntl {
    /// The value `gfx_v9_4_3_xcc_cp_compute_enable(adev, false, xcc)`
    /// writes: both MEs halted, every pipe in reset, icache invalidated.
    pub const HALT: CpMecCntl = CpMecCntl::new()
        .with_mec_invalidate_icache(true)
        .with_mec_me1_pipe0_reset(true)
        .with_mec_me1_pipe1_reset(true)
        .with_mec_me1_pipe2_reset(true)
        .with_mec_me1_pipe3_reset(true)
        .with_mec_me2_pipe0_reset(true)
        .with_mec_me2_pipe1_reset(true)
        .with_mec_me1_halt(true)
        .with_mec_me2_halt(true);
}

/// `CP_INT_CNTL_RING0`: the three GUI-idle interrupt enables
/// `gfx_v9_4_3_xcc_enable_gui_idle_interrupt()` sets or clears.
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct CpIntCntlRing0 {
    #[bits(18)]
    __: u32,
    pub cmp_busy_int_enable: bool,
    pub cntx_busy_int_enable: bool,
    pub cntx_empty_int_enable: bool,
    #[bits(11)]
    __: u16,
}

impl CpIntCntlRing0 {
    /// The bits the GUI-idle interrupt toggles.
    pub const GUI_IDLE: CpIntCntlRing0 = CpIntCntlRing0::new()
        .with_cmp_busy_int_enable(true)
        .with_cntx_busy_int_enable(true)
        .with_cntx_empty_int_enable(true);
}

const SH: &str = "gc_9_4_3_sh_mask.h";

/// Field positions, checked against `gc_9_4_3_sh_mask.h`.
pub const FIELD_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    super::field_facts!(
        SH,
        "RLC_CNTL",
        "RLC_ENABLE_F32",
        RlcCntl::RLC_ENABLE_F32_OFFSET,
        RlcCntl::RLC_ENABLE_F32_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_CNTL",
        "RLC_STEP_F32",
        RlcCntl::RLC_STEP_F32_OFFSET,
        RlcCntl::RLC_STEP_F32_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_SAFE_MODE",
        "CMD",
        RlcSafeMode::CMD_OFFSET,
        RlcSafeMode::CMD_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_SAFE_MODE",
        "MESSAGE",
        RlcSafeMode::MESSAGE_OFFSET,
        RlcSafeMode::MESSAGE_BITS
    ),
    super::field_facts!(
        SH,
        "RLC_SRM_CNTL",
        "SRM_ENABLE",
        RlcSrmCntl::SRM_ENABLE_OFFSET,
        RlcSrmCntl::SRM_ENABLE_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_INVALIDATE_ICACHE",
        CpMecCntl::MEC_INVALIDATE_ICACHE_OFFSET,
        CpMecCntl::MEC_INVALIDATE_ICACHE_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME1_PIPE0_RESET",
        CpMecCntl::MEC_ME1_PIPE0_RESET_OFFSET,
        CpMecCntl::MEC_ME1_PIPE0_RESET_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME1_PIPE1_RESET",
        CpMecCntl::MEC_ME1_PIPE1_RESET_OFFSET,
        CpMecCntl::MEC_ME1_PIPE1_RESET_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME1_PIPE2_RESET",
        CpMecCntl::MEC_ME1_PIPE2_RESET_OFFSET,
        CpMecCntl::MEC_ME1_PIPE2_RESET_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME1_PIPE3_RESET",
        CpMecCntl::MEC_ME1_PIPE3_RESET_OFFSET,
        CpMecCntl::MEC_ME1_PIPE3_RESET_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME2_PIPE0_RESET",
        CpMecCntl::MEC_ME2_PIPE0_RESET_OFFSET,
        CpMecCntl::MEC_ME2_PIPE0_RESET_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME2_PIPE1_RESET",
        CpMecCntl::MEC_ME2_PIPE1_RESET_OFFSET,
        CpMecCntl::MEC_ME2_PIPE1_RESET_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME2_HALT",
        CpMecCntl::MEC_ME2_HALT_OFFSET,
        CpMecCntl::MEC_ME2_HALT_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME2_STEP",
        CpMecCntl::MEC_ME2_STEP_OFFSET,
        CpMecCntl::MEC_ME2_STEP_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME1_HALT",
        CpMecCntl::MEC_ME1_HALT_OFFSET,
        CpMecCntl::MEC_ME1_HALT_BITS
    ),
    super::field_facts!(
        SH,
        "CP_MEC_CNTL",
        "MEC_ME1_STEP",
        CpMecCntl::MEC_ME1_STEP_OFFSET,
        CpMecCntl::MEC_ME1_STEP_BITS
    ),
    super::field_facts!(
        SH,
        "CP_INT_CNTL_RING0",
        "CMP_BUSY_INT_ENABLE",
        CpIntCntlRing0::CMP_BUSY_INT_ENABLE_OFFSET,
        CpIntCntlRing0::CMP_BUSY_INT_ENABLE_BITS
    ),
    super::field_facts!(
        SH,
        "CP_INT_CNTL_RING0",
        "CNTX_BUSY_INT_ENABLE",
        CpIntCntlRing0::CNTX_BUSY_INT_ENABLE_OFFSET,
        CpIntCntlRing0::CNTX_BUSY_INT_ENABLE_BITS
    ),
    super::field_facts!(
        SH,
        "CP_INT_CNTL_RING0",
        "CNTX_EMPTY_INT_ENABLE",
        CpIntCntlRing0::CNTX_EMPTY_INT_ENABLE_OFFSET,
        CpIntCntlRing0::CNTX_EMPTY_INT_ENABLE_BITS
    ),
);
