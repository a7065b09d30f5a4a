//! The PSP's driver interface as the model reads it, written for the
//! model from Linux 6.12's `psp_gfx_if.h` (GPCOM ring frames, command
//! buffers, command ids, firmware types) and `amdgpu_psp.h` (bootloader
//! commands). Nothing here comes from the runtime or from
//! barebell-firmware-if: a layout or numbering slip on either side shows
//! as a disagreement, and [`FACTS`] ties every value to the header
//! (`cargo xtask conformance`; the bootloader codes, whose header does
//! not compile in user space, by `cargo xtask fwcheck`).

use barebell_facts::Fact;

const H: &str = "psp_gfx_if.h";

/// C2PMSG_64 (`enum psp_gfx_crtl_cmd_id` and the response-word masks).
pub mod ctrl {
    /// `GFX_CTRL_CMD_ID_INIT_GPCOM_RING` (`PSP_RING_TYPE__KM << 16`).
    pub const INIT_GPCOM_RING: u32 = 0x0002_0000;
    /// `GFX_CTRL_CMD_ID_DESTROY_RINGS`.
    pub const DESTROY_RINGS: u32 = 0x0003_0000;
    /// `GFX_CMD_STATUS_MASK`.
    pub const STATUS_MASK: u32 = 0x0000_FFFF;
    /// `GFX_FLAG_RESPONSE`: the PSP has answered (also bit 31 of
    /// C2PMSG_35 for the bootloader).
    pub const RESPONSE: u32 = 0x8000_0000;
}

/// `enum psp_gfx_cmd_id`: the GPCOM commands the model serves.
pub mod cmd {
    pub const SETUP_TMR: u32 = 0x05;
    pub const LOAD_IP_FW: u32 = 0x06;
    pub const LOAD_TOC: u32 = 0x20;
    pub const AUTOLOAD_RLC: u32 = 0x21;
    /// `GFX_CMD_ID_SRIOV_SPATIAL_PART`: `cmd_spatial_part.mode` is the
    /// number of partitions (`psp_spatial_partition()`, sent by
    /// `gfx_v9_4_3_switch_compute_partition()` with the XCC count over
    /// the XCCs per partition; tinygrad's `AM_GFX.init_hw` sends 1).
    pub const SPATIAL_PART: u32 = 0x27;
}

/// `PSP_ERR_UNKNOWN_COMMAND`, the one public status value.
pub const ERR_UNKNOWN_COMMAND: u32 = 0x100;

/// `struct psp_gfx_rb_frame`, by byte offset.
pub mod frame {
    pub const BYTES: usize = 64;
    pub const CMD_BUF_ADDR_LO: usize = 0;
    pub const CMD_BUF_ADDR_HI: usize = 4;
    pub const CMD_BUF_SIZE: usize = 8;
    pub const FENCE_ADDR_LO: usize = 12;
    pub const FENCE_ADDR_HI: usize = 16;
    pub const FENCE_VALUE: usize = 20;
    pub const FRAME_TYPE: usize = 33;
}

/// `struct psp_gfx_cmd_resp` and what it holds, by byte offset.
pub mod buf {
    /// `sizeof(struct psp_gfx_cmd_resp)`.
    pub const BYTES: usize = 1024;
    pub const CMD_ID: usize = 8;
    /// `union psp_gfx_commands cmd`.
    pub const CMD: usize = 28;
    /// `struct psp_gfx_resp resp`.
    pub const RESP: usize = 864;
    /// `sizeof(struct psp_gfx_resp)`.
    pub const RESP_BYTES: usize = 96;
    /// `psp_gfx_resp.status` and `.tmr_size`.
    pub const RESP_STATUS: usize = 0;
    pub const RESP_TMR_SIZE: usize = 16;
    /// `struct psp_gfx_cmd_load_toc`.
    pub const TOC_ADDR_LO: usize = 0;
    pub const TOC_ADDR_HI: usize = 4;
    pub const TOC_SIZE: usize = 8;
    /// `struct psp_gfx_cmd_load_ip_fw`.
    pub const FW_ADDR_LO: usize = 0;
    pub const FW_ADDR_HI: usize = 4;
    pub const FW_SIZE: usize = 8;
    pub const FW_TYPE: usize = 12;
    /// `struct psp_gfx_cmd_setup_tmr`.
    pub const TMR_ADDR_LO: usize = 0;
    pub const TMR_ADDR_HI: usize = 4;
    pub const TMR_SIZE: usize = 8;
    pub const TMR_FLAGS: usize = 12;
    pub const TMR_SYSTEM_LO: usize = 16;
    pub const TMR_SYSTEM_HI: usize = 20;
    /// `tmr_flags.virt_phy_addr`: `system_phy_addr` is given.
    pub const TMR_VIRT_PHY_ADDR: u32 = 1 << 1;
}

/// `enum psp_gfx_fw_type`: the LOAD_IP_FW types the model knows.
pub mod fw {
    pub const RLC_V: u32 = 7;
    pub const RLC_G: u32 = 8;
    pub const SMU: u32 = 18;
    pub const RLC_RESTORE_LIST_GPM_MEM: u32 = 20;
    pub const RLC_RESTORE_LIST_SRM_MEM: u32 = 21;
    pub const RLC_RESTORE_LIST_SRM_CNTL: u32 = 22;
    pub const RLC_P: u32 = 25;
    pub const RLC_IRAM: u32 = 26;
    pub const GLOBAL_TAP_DELAYS: u32 = 27;
    pub const SE0_TAP_DELAYS: u32 = 28;
    pub const SE1_TAP_DELAYS: u32 = 29;
    pub const CP_MES: u32 = 33;
    pub const MES_STACK: u32 = 34;
    pub const RLC_DRAM_BOOT: u32 = 48;
    pub const SE2_TAP_DELAYS: u32 = 65;
    pub const SE3_TAP_DELAYS: u32 = 66;
    pub const IMU_I: u32 = 68;
    pub const IMU_D: u32 = 69;
    pub const SDMA_UCODE_TH0: u32 = 71;
    pub const SDMA_UCODE_TH1: u32 = 72;
    pub const CP_MES_KIQ: u32 = 81;
    pub const MES_KIQ_STACK: u32 = 82;
    pub const RS64_PFP: u32 = 87;
    pub const RS64_ME: u32 = 88;
    pub const RS64_MEC: u32 = 89;
    pub const RS64_PFP_P0_STACK: u32 = 90;
    pub const RS64_PFP_P1_STACK: u32 = 91;
    pub const RS64_ME_P0_STACK: u32 = 92;
    pub const RS64_ME_P1_STACK: u32 = 93;
    pub const RS64_MEC_P0_STACK: u32 = 94;
    pub const RS64_MEC_P1_STACK: u32 = 95;
    pub const RS64_MEC_P2_STACK: u32 = 96;
    pub const RS64_MEC_P3_STACK: u32 = 97;
    // GC 9.4.3 / SDMA 4.4.2 on MP0 13.0.6 (`psp_get_fw_type()`).
    pub const CP_MEC: u32 = 4;
    pub const CP_MEC_ME1: u32 = 5;
    pub const SDMA0: u32 = 9;
    pub const SDMA1: u32 = 10;
    pub const SDMA2: u32 = 52;
    pub const SDMA3: u32 = 53;
    /// Aldebaran's fifth SDMA (GC 9.4.2 / SDMA 4.4.0 on MP0 13.0.2).
    pub const SDMA4: u32 = 54;
    /// `psp_rl_load()`.
    pub const REG_LIST: u32 = 67;
    /// `psp_load_p2s_table()` (MP0 13.0.6, from the SMU blob).
    pub const P2S_TABLE: u32 = 129;

    /// Every type above with its `psp_gfx_if.h` enumerator.
    pub const ALL: &[(&str, u32)] = &[
        ("GFX_FW_TYPE_RLC_V", RLC_V),
        ("GFX_FW_TYPE_CP_MEC", CP_MEC),
        ("GFX_FW_TYPE_P2S_TABLE", P2S_TABLE),
        ("GFX_FW_TYPE_CP_MEC_ME1", CP_MEC_ME1),
        ("GFX_FW_TYPE_SDMA0", SDMA0),
        ("GFX_FW_TYPE_SDMA1", SDMA1),
        ("GFX_FW_TYPE_SDMA2", SDMA2),
        ("GFX_FW_TYPE_SDMA3", SDMA3),
        ("GFX_FW_TYPE_SDMA4", SDMA4),
        ("GFX_FW_TYPE_REG_LIST", REG_LIST),
        ("GFX_FW_TYPE_RLC_G", RLC_G),
        ("GFX_FW_TYPE_SMU", SMU),
        (
            "GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM",
            RLC_RESTORE_LIST_GPM_MEM,
        ),
        (
            "GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM",
            RLC_RESTORE_LIST_SRM_MEM,
        ),
        (
            "GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_CNTL",
            RLC_RESTORE_LIST_SRM_CNTL,
        ),
        ("GFX_FW_TYPE_RLC_P", RLC_P),
        ("GFX_FW_TYPE_RLC_IRAM", RLC_IRAM),
        ("GFX_FW_TYPE_GLOBAL_TAP_DELAYS", GLOBAL_TAP_DELAYS),
        ("GFX_FW_TYPE_SE0_TAP_DELAYS", SE0_TAP_DELAYS),
        ("GFX_FW_TYPE_SE1_TAP_DELAYS", SE1_TAP_DELAYS),
        ("GFX_FW_TYPE_CP_MES", CP_MES),
        ("GFX_FW_TYPE_MES_STACK", MES_STACK),
        ("GFX_FW_TYPE_RLC_DRAM_BOOT", RLC_DRAM_BOOT),
        ("GFX_FW_TYPE_SE2_TAP_DELAYS", SE2_TAP_DELAYS),
        ("GFX_FW_TYPE_SE3_TAP_DELAYS", SE3_TAP_DELAYS),
        ("GFX_FW_TYPE_IMU_I", IMU_I),
        ("GFX_FW_TYPE_IMU_D", IMU_D),
        ("GFX_FW_TYPE_SDMA_UCODE_TH0", SDMA_UCODE_TH0),
        ("GFX_FW_TYPE_SDMA_UCODE_TH1", SDMA_UCODE_TH1),
        ("GFX_FW_TYPE_CP_MES_KIQ", CP_MES_KIQ),
        ("GFX_FW_TYPE_MES_KIQ_STACK", MES_KIQ_STACK),
        ("GFX_FW_TYPE_RS64_PFP", RS64_PFP),
        ("GFX_FW_TYPE_RS64_ME", RS64_ME),
        ("GFX_FW_TYPE_RS64_MEC", RS64_MEC),
        ("GFX_FW_TYPE_RS64_PFP_P0_STACK", RS64_PFP_P0_STACK),
        ("GFX_FW_TYPE_RS64_PFP_P1_STACK", RS64_PFP_P1_STACK),
        ("GFX_FW_TYPE_RS64_ME_P0_STACK", RS64_ME_P0_STACK),
        ("GFX_FW_TYPE_RS64_ME_P1_STACK", RS64_ME_P1_STACK),
        ("GFX_FW_TYPE_RS64_MEC_P0_STACK", RS64_MEC_P0_STACK),
        ("GFX_FW_TYPE_RS64_MEC_P1_STACK", RS64_MEC_P1_STACK),
        ("GFX_FW_TYPE_RS64_MEC_P2_STACK", RS64_MEC_P2_STACK),
        ("GFX_FW_TYPE_RS64_MEC_P3_STACK", RS64_MEC_P3_STACK),
    ];
}

/// `enum psp_bootloader_cmd` (`amdgpu_psp.h`): what C2PMSG_35 takes.
pub mod bl {
    pub const LOAD_SYSDRV: u32 = 0x1_0000;
    pub const LOAD_SOSDRV: u32 = 0x2_0000;
    pub const LOAD_KEY_DATABASE: u32 = 0x8_0000;
    pub const LOAD_SOCDRV: u32 = 0xB_0000;
    pub const LOAD_DBGDRV: u32 = 0xC_0000;
    pub const LOAD_INTFDRV: u32 = 0xD_0000;
    pub const LOAD_RASDRV: u32 = 0xE_0000;
    pub const LOAD_IPKEYMGRDRV: u32 = 0xF_0000;
    pub const LOAD_TOS_SPL_TABLE: u32 = 0x1000_0000;

    /// Every code above with its enumerator, for `cargo xtask fwcheck`
    /// (`amdgpu_psp.h` includes the whole driver, so the enum is cut
    /// out of the header and compiled alone).
    pub const ALL: &[(&str, u32)] = &[
        ("PSP_BL__LOAD_SYSDRV", LOAD_SYSDRV),
        ("PSP_BL__LOAD_SOSDRV", LOAD_SOSDRV),
        ("PSP_BL__LOAD_KEY_DATABASE", LOAD_KEY_DATABASE),
        ("PSP_BL__LOAD_SOCDRV", LOAD_SOCDRV),
        ("PSP_BL__LOAD_DBGDRV", LOAD_DBGDRV),
        ("PSP_BL__LOAD_INTFDRV", LOAD_INTFDRV),
        ("PSP_BL__LOAD_RASDRV", LOAD_RASDRV),
        ("PSP_BL__LOAD_IPKEYMGRDRV", LOAD_IPKEYMGRDRV),
        ("PSP_BL__LOAD_TOS_SPL_TABLE", LOAD_TOS_SPL_TABLE),
    ];
}

/// The little-endian dword at byte `at` of `b` (0 past the end: the
/// callers read fixed-size buffers they sized themselves).
pub fn dword(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(&[a, b1, c, d]) => u32::from_le_bytes([a, b1, c, d]),
        _ => 0,
    }
}

/// `hi:lo` from two dwords at `lo` and `hi`.
pub fn qword(b: &[u8], lo: usize, hi: usize) -> u64 {
    u64::from(dword(b, hi)) << 32 | u64::from(dword(b, lo))
}

const FRAME: &str = "struct psp_gfx_rb_frame";
const CMD: &str = "struct psp_gfx_cmd_resp";
const RESP: &str = "struct psp_gfx_resp";
const TOC: &str = "struct psp_gfx_cmd_load_toc";
const IPFW: &str = "struct psp_gfx_cmd_load_ip_fw";
const TMR: &str = "struct psp_gfx_cmd_setup_tmr";

const LAYOUT: [Fact; 29] = [
    Fact::size(H, FRAME, frame::BYTES),
    Fact::offset(H, FRAME, "cmd_buf_addr_lo", frame::CMD_BUF_ADDR_LO),
    Fact::offset(H, FRAME, "cmd_buf_addr_hi", frame::CMD_BUF_ADDR_HI),
    Fact::offset(H, FRAME, "cmd_buf_size", frame::CMD_BUF_SIZE),
    Fact::offset(H, FRAME, "fence_addr_lo", frame::FENCE_ADDR_LO),
    Fact::offset(H, FRAME, "fence_addr_hi", frame::FENCE_ADDR_HI),
    Fact::offset(H, FRAME, "fence_value", frame::FENCE_VALUE),
    Fact::offset(H, FRAME, "frame_type", frame::FRAME_TYPE),
    Fact::size(H, CMD, buf::BYTES),
    Fact::offset(H, CMD, "cmd_id", buf::CMD_ID),
    Fact::offset(H, CMD, "cmd", buf::CMD),
    Fact::offset(H, CMD, "resp", buf::RESP),
    Fact::size(H, RESP, buf::RESP_BYTES),
    Fact::offset(H, RESP, "status", buf::RESP_STATUS),
    Fact::offset(H, RESP, "tmr_size", buf::RESP_TMR_SIZE),
    Fact::offset(H, TOC, "toc_phy_addr_lo", buf::TOC_ADDR_LO),
    Fact::offset(H, TOC, "toc_phy_addr_hi", buf::TOC_ADDR_HI),
    Fact::offset(H, TOC, "toc_size", buf::TOC_SIZE),
    Fact::offset(H, IPFW, "fw_phy_addr_lo", buf::FW_ADDR_LO),
    Fact::offset(H, IPFW, "fw_phy_addr_hi", buf::FW_ADDR_HI),
    Fact::offset(H, IPFW, "fw_size", buf::FW_SIZE),
    Fact::offset(H, IPFW, "fw_type", buf::FW_TYPE),
    Fact::offset(H, TMR, "buf_phy_addr_lo", buf::TMR_ADDR_LO),
    Fact::offset(H, TMR, "buf_phy_addr_hi", buf::TMR_ADDR_HI),
    Fact::offset(H, TMR, "buf_size", buf::TMR_SIZE),
    Fact::offset(H, TMR, "tmr_flags", buf::TMR_FLAGS),
    Fact::offset(H, TMR, "system_phy_addr_lo", buf::TMR_SYSTEM_LO),
    Fact::offset(H, TMR, "system_phy_addr_hi", buf::TMR_SYSTEM_HI),
    Fact::constant(
        H,
        "({ struct psp_gfx_cmd_setup_tmr t_ = {0}; t_.bitfield.virt_phy_addr = 1; t_.tmr_flags; })",
        buf::TMR_VIRT_PHY_ADDR as u64,
    ),
];

const IDS: [Fact; 10] = [
    Fact::constant(
        H,
        "GFX_CTRL_CMD_ID_INIT_GPCOM_RING",
        ctrl::INIT_GPCOM_RING as u64,
    ),
    Fact::constant(
        H,
        "GFX_CTRL_CMD_ID_DESTROY_RINGS",
        ctrl::DESTROY_RINGS as u64,
    ),
    Fact::constant(H, "GFX_CMD_STATUS_MASK", ctrl::STATUS_MASK as u64),
    Fact::constant(H, "GFX_FLAG_RESPONSE", ctrl::RESPONSE as u64),
    Fact::constant(H, "GFX_CMD_ID_SETUP_TMR", cmd::SETUP_TMR as u64),
    Fact::constant(H, "GFX_CMD_ID_LOAD_IP_FW", cmd::LOAD_IP_FW as u64),
    Fact::constant(H, "GFX_CMD_ID_LOAD_TOC", cmd::LOAD_TOC as u64),
    Fact::constant(H, "GFX_CMD_ID_AUTOLOAD_RLC", cmd::AUTOLOAD_RLC as u64),
    Fact::constant(H, "GFX_CMD_ID_SRIOV_SPATIAL_PART", cmd::SPATIAL_PART as u64),
    Fact::constant(H, "PSP_ERR_UNKNOWN_COMMAND", ERR_UNKNOWN_COMMAND as u64),
];

const fn fw_facts<const N: usize>() -> [Fact; N] {
    let mut out = [Fact::constant(H, "0", 0); N];
    let mut i = 0;
    while i < N {
        out[i] = Fact::constant(H, fw::ALL[i].0, fw::ALL[i].1 as u64);
        i += 1;
    }
    out
}

// Every entry of `fw::ALL` (the count was a literal once, one short of
// the list, which left the last type unchecked).
const FW: [Fact; fw::ALL.len()] = fw_facts::<{ fw::ALL.len() }>();

/// The model's PSP interface facts.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(LAYOUT, IDS, FW);
