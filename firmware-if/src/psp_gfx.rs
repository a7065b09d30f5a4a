//! The PSP (AMD Secure Processor) driver interface (`psp_gfx_if.h`).
//!
//! Two channels exist. Before the secure OS (SOS) runs, the bootloader
//! takes one command at a time through C2PMSG registers: the driver
//! copies a component (SYS_DRV, SOS, KDB, ...) into a 1 MiB-aligned
//! buffer, writes its address and one of the [`bootloader`] codes, and
//! polls for completion (`psp_v13_0_bootloader_load_component()`). Once
//! SOS runs, commands are 1 KiB [`CmdResp`] buffers submitted through the
//! GPCOM ring as 64-byte [`RbFrame`]s; PSP writes the frame's fence and
//! fills in the response at +864 of the same buffer.

use barebell_facts::{Fact, layout_facts};
use bitfield_struct::bitfield;
use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout, LittleEndian, U32};

pub type Le32 = U32<LittleEndian>;

/// Bootloader commands (`enum psp_bootloader_cmd`, in `amdgpu_psp.h`).
/// That header drags in the whole driver and cannot be compiled in user
/// space, so these are checked by `cargo xtask fwcheck`, which extracts
/// the enum from it, rather than by the fact tables.
pub mod bootloader {
    pub const LOAD_SYSDRV: u32 = 0x10000;
    pub const LOAD_SOSDRV: u32 = 0x20000;
    pub const LOAD_KEY_DATABASE: u32 = 0x80000;
    pub const LOAD_SOCDRV: u32 = 0xB0000;
    pub const LOAD_DBGDRV: u32 = 0xC0000;
    pub const LOAD_HADDRV: u32 = LOAD_DBGDRV;
    pub const LOAD_INTFDRV: u32 = 0xD0000;
    pub const LOAD_RASDRV: u32 = 0xE0000;
    pub const LOAD_IPKEYMGRDRV: u32 = 0xF0000;
    pub const DRAM_LONG_TRAIN: u32 = 0x100000;
    pub const DRAM_SHORT_TRAIN: u32 = 0x200000;
    pub const LOAD_TOS_SPL_TABLE: u32 = 0x10000000;

    /// Every code with its Linux enumerator name, for the cross-check.
    pub const ALL: &[(&str, u32)] = &[
        ("PSP_BL__LOAD_SYSDRV", LOAD_SYSDRV),
        ("PSP_BL__LOAD_SOSDRV", LOAD_SOSDRV),
        ("PSP_BL__LOAD_KEY_DATABASE", LOAD_KEY_DATABASE),
        ("PSP_BL__LOAD_SOCDRV", LOAD_SOCDRV),
        ("PSP_BL__LOAD_DBGDRV", LOAD_DBGDRV),
        ("PSP_BL__LOAD_HADDRV", LOAD_HADDRV),
        ("PSP_BL__LOAD_INTFDRV", LOAD_INTFDRV),
        ("PSP_BL__LOAD_RASDRV", LOAD_RASDRV),
        ("PSP_BL__LOAD_IPKEYMGRDRV", LOAD_IPKEYMGRDRV),
        ("PSP_BL__DRAM_LONG_TRAIN", DRAM_LONG_TRAIN),
        ("PSP_BL__DRAM_SHORT_TRAIN", DRAM_SHORT_TRAIN),
        ("PSP_BL__LOAD_TOS_SPL_TABLE", LOAD_TOS_SPL_TABLE),
    ];
}

/// Ring-control commands written to C2PMSG_64 (`enum psp_gfx_crtl_cmd_id`).
pub mod ctrl_cmd {
    pub const INIT_RBI_RING: u32 = 0x0001_0000;
    pub const INIT_GPCOM_RING: u32 = 0x0002_0000;
    pub const DESTROY_RINGS: u32 = 0x0003_0000;
    pub const CAN_INIT_RINGS: u32 = 0x0004_0000;
    pub const ENABLE_INT: u32 = 0x0005_0000;
    pub const DISABLE_INT: u32 = 0x0006_0000;
    pub const MODE1_RST: u32 = 0x0007_0000;
    pub const GBR_IH_SET: u32 = 0x0008_0000;
    pub const CONSUME_CMD: u32 = 0x0009_0000;
    pub const DESTROY_GPCOM_RING: u32 = 0x000C_0000;
    pub const MAX: u32 = 0x000F_0000;
}

/// Fields of the C2PMSG command/response word.
pub const GFX_CMD_STATUS_MASK: u32 = 0x0000_FFFF;
pub const GFX_CMD_ID_MASK: u32 = 0x000F_0000;
pub const GFX_CMD_RESERVED_MASK: u32 = 0x7FF0_0000;
pub const GFX_CMD_RESPONSE_MASK: u32 = 0x8000_0000;
pub const GFX_FLAG_RESPONSE: u32 = 0x8000_0000;
pub const PSP_GFX_CMD_BUF_VERSION: u32 = 1;
/// `PSP_ERR_UNKNOWN_COMMAND`, in [`Resp::status`].
pub const PSP_ERR_UNKNOWN_COMMAND: u32 = 0x100;

/// GPCOM commands (`enum psp_gfx_cmd_id`), in [`CmdResp::cmd_id`].
pub mod cmd_id {
    pub const LOAD_TA: u32 = 0x01;
    pub const UNLOAD_TA: u32 = 0x02;
    pub const INVOKE_CMD: u32 = 0x03;
    pub const LOAD_ASD: u32 = 0x04;
    pub const SETUP_TMR: u32 = 0x05;
    pub const LOAD_IP_FW: u32 = 0x06;
    pub const DESTROY_TMR: u32 = 0x07;
    pub const SAVE_RESTORE: u32 = 0x08;
    pub const SETUP_VMR: u32 = 0x09;
    pub const DESTROY_VMR: u32 = 0x0A;
    pub const PROG_REG: u32 = 0x0B;
    pub const GET_FW_ATTESTATION: u32 = 0x0F;
    pub const LOAD_TOC: u32 = 0x20;
    pub const AUTOLOAD_RLC: u32 = 0x21;
    pub const BOOT_CFG: u32 = 0x22;
    pub const SRIOV_SPATIAL_PART: u32 = 0x27;
}

/// `enum psp_gfx_fw_type`: what a LOAD_IP_FW command carries.
pub mod fw_type {
    pub const NONE: u32 = 0;
    pub const CP_ME: u32 = 1;
    pub const CP_PFP: u32 = 2;
    pub const CP_CE: u32 = 3;
    pub const CP_MEC: u32 = 4;
    pub const CP_MEC_ME1: u32 = 5;
    pub const CP_MEC_ME2: u32 = 6;
    pub const RLC_V: u32 = 7;
    pub const RLC_G: u32 = 8;
    pub const SDMA0: u32 = 9;
    pub const SDMA1: u32 = 10;
    pub const DMCU_ERAM: u32 = 11;
    pub const DMCU_ISR: u32 = 12;
    pub const VCN: u32 = 13;
    pub const UVD: u32 = 14;
    pub const VCE: u32 = 15;
    pub const ISP: u32 = 16;
    pub const ACP: u32 = 17;
    pub const SMU: u32 = 18;
    pub const MMSCH: u32 = 19;
    pub const RLC_RESTORE_LIST_GPM_MEM: u32 = 20;
    pub const RLC_RESTORE_LIST_SRM_MEM: u32 = 21;
    pub const RLC_RESTORE_LIST_SRM_CNTL: u32 = 22;
    pub const UVD1: u32 = 23;
    pub const TOC: u32 = 24;
    pub const RLC_P: u32 = 25;
    pub const RLC_IRAM: u32 = 26;
    pub const GLOBAL_TAP_DELAYS: u32 = 27;
    pub const SE0_TAP_DELAYS: u32 = 28;
    pub const SE1_TAP_DELAYS: u32 = 29;
    pub const GLOBAL_SE0_SE1_SKEW_DELAYS: u32 = 30;
    pub const SDMA0_JT: u32 = 31;
    pub const SDMA1_JT: u32 = 32;
    pub const CP_MES: u32 = 33;
    pub const MES_STACK: u32 = 34;
    pub const RLC_SRM_DRAM_SR: u32 = 35;
    pub const RLCG_SCRATCH_SR: u32 = 36;
    pub const RLCP_SCRATCH_SR: u32 = 37;
    pub const RLCV_SCRATCH_SR: u32 = 38;
    pub const RLX6_DRAM_SR: u32 = 39;
    pub const SDMA0_PG_CONTEXT: u32 = 40;
    pub const SDMA1_PG_CONTEXT: u32 = 41;
    pub const GLOBAL_MUX_SELECT_RAM: u32 = 42;
    pub const SE0_MUX_SELECT_RAM: u32 = 43;
    pub const SE1_MUX_SELECT_RAM: u32 = 44;
    pub const ACCUM_CTRL_RAM: u32 = 45;
    pub const RLCP_CAM: u32 = 46;
    pub const RLC_SPP_CAM_EXT: u32 = 47;
    pub const RLC_DRAM_BOOT: u32 = 48;
    pub const VCN0_RAM: u32 = 49;
    pub const VCN1_RAM: u32 = 50;
    pub const DMUB: u32 = 51;
    pub const SDMA2: u32 = 52;
    pub const SDMA3: u32 = 53;
    pub const SDMA4: u32 = 54;
    pub const SDMA5: u32 = 55;
    pub const SDMA6: u32 = 56;
    pub const SDMA7: u32 = 57;
    pub const VCN1: u32 = 58;
    pub const CAP: u32 = 62;
    pub const SE2_TAP_DELAYS: u32 = 65;
    pub const SE3_TAP_DELAYS: u32 = 66;
    pub const REG_LIST: u32 = 67;
    pub const IMU_I: u32 = 68;
    pub const IMU_D: u32 = 69;
    pub const LSDMA: u32 = 70;
    pub const SDMA_UCODE_TH0: u32 = 71;
    pub const SDMA_UCODE_TH1: u32 = 72;
    pub const PPTABLE: u32 = 73;
    pub const DISCRETE_USB4: u32 = 74;
    pub const TA: u32 = 75;
    pub const RS64_MES: u32 = 76;
    pub const RS64_MES_STACK: u32 = 77;
    pub const RS64_KIQ: u32 = 78;
    pub const RS64_KIQ_STACK: u32 = 79;
    pub const ISP_DATA: u32 = 80;
    pub const CP_MES_KIQ: u32 = 81;
    pub const MES_KIQ_STACK: u32 = 82;
    pub const UMSCH_DATA: u32 = 83;
    pub const UMSCH_UCODE: u32 = 84;
    pub const UMSCH_CMD_BUFFER: u32 = 85;
    pub const USB_DP_COMBO_PHY: u32 = 86;
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
    pub const VPEC_FW1: u32 = 100;
    pub const VPEC_FW2: u32 = 101;
    pub const VPE: u32 = 102;
    pub const JPEG_RAM: u32 = 128;
    pub const P2S_TABLE: u32 = 129;
}

/// `struct psp_gfx_ctrl`: the ring-control block.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GfxCtrl {
    pub cmd_resp: Le32,
    pub rbi_wptr: Le32,
    pub rbi_rptr: Le32,
    pub gpcom_wptr: Le32,
    pub gpcom_rptr: Le32,
    pub ring_addr_lo: Le32,
    pub ring_addr_hi: Le32,
    pub ring_buf_size: Le32,
}
const _: () = assert!(core::mem::size_of::<GfxCtrl>() == 32);

/// `struct psp_gfx_rb_frame`: one 64-byte GPCOM ring entry.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RbFrame {
    pub cmd_buf_addr_lo: Le32,
    pub cmd_buf_addr_hi: Le32,
    pub cmd_buf_size: Le32,
    pub fence_addr_lo: Le32,
    pub fence_addr_hi: Le32,
    pub fence_value: Le32,
    pub sid_lo: Le32,
    pub sid_hi: Le32,
    pub vmid: u8,
    pub frame_type: u8,
    pub reserved1: [u8; 2],
    pub reserved2: [Le32; 7],
}
const _: () = assert!(core::mem::size_of::<RbFrame>() == 64);

impl RbFrame {
    /// A GPCOM frame for the command buffer at GPU address `cmd_addr`;
    /// PSP writes `fence_value` to `fence_addr` when done (follows
    /// `psp_ring_cmd_submit()`: everything else zero).
    pub fn gpcom(cmd_addr: u64, fence_addr: u64, fence_value: u32) -> Self {
        let mut f = Self::new_zeroed();
        f.cmd_buf_addr_lo = Le32::new(cmd_addr as u32);
        f.cmd_buf_addr_hi = Le32::new((cmd_addr >> 32) as u32);
        f.cmd_buf_size = Le32::new(CMD_RESP_BYTES as u32);
        f.fence_addr_lo = Le32::new(fence_addr as u32);
        f.fence_addr_hi = Le32::new((fence_addr >> 32) as u32);
        f.fence_value = Le32::new(fence_value);
        f
    }
}

/// `struct psp_gfx_cmd_load_ta`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CmdLoadTa {
    pub app_phy_addr_lo: Le32,
    pub app_phy_addr_hi: Le32,
    pub app_len: Le32,
    pub cmd_buf_phy_addr_lo: Le32,
    pub cmd_buf_phy_addr_hi: Le32,
    pub cmd_buf_len: Le32,
}
const _: () = assert!(core::mem::size_of::<CmdLoadTa>() == 24);

/// The `tmr_flags` word of SETUP_TMR.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct TmrFlags {
    pub sriov_enabled: bool,
    /// The driver passes both the GPU virtual and the system physical
    /// address (APUs and connected-to-CPU parts).
    pub virt_phy_addr: bool,
    #[bits(30)]
    __: u32,
}

/// `struct psp_gfx_cmd_setup_tmr`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CmdSetupTmr {
    pub buf_phy_addr_lo: Le32,
    pub buf_phy_addr_hi: Le32,
    pub buf_size: Le32,
    pub tmr_flags: Le32,
    pub system_phy_addr_lo: Le32,
    pub system_phy_addr_hi: Le32,
}
const _: () = assert!(core::mem::size_of::<CmdSetupTmr>() == 24);

/// `struct psp_gfx_cmd_load_ip_fw`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CmdLoadIpFw {
    pub fw_phy_addr_lo: Le32,
    pub fw_phy_addr_hi: Le32,
    pub fw_size: Le32,
    pub fw_type: Le32,
}
const _: () = assert!(core::mem::size_of::<CmdLoadIpFw>() == 16);

/// `struct psp_gfx_cmd_load_toc`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CmdLoadToc {
    pub toc_phy_addr_lo: Le32,
    pub toc_phy_addr_hi: Le32,
    pub toc_size: Le32,
}
const _: () = assert!(core::mem::size_of::<CmdLoadToc>() == 12);

/// `sizeof(union psp_gfx_commands)`: the largest member is INVOKE_CMD
/// with its 64-entry buffer list.
pub const COMMANDS_BYTES: usize = 784;
/// `sizeof(struct psp_gfx_cmd_resp)`.
pub const CMD_RESP_BYTES: usize = 1024;
/// Offset of the response inside the command buffer.
pub const RESP_OFFSET: usize = 864;

/// `struct psp_gfx_resp`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Resp {
    pub status: Le32,
    pub session_id: Le32,
    pub fw_addr_lo: Le32,
    pub fw_addr_hi: Le32,
    /// TMR size PSP asks for, in response to LOAD_TOC.
    pub tmr_size: Le32,
    pub reserved: [Le32; 11],
    pub uresp: [Le32; 8],
}
const _: () = assert!(core::mem::size_of::<Resp>() == 96);

/// `struct psp_gfx_cmd_resp`: the 1 KiB GPCOM command buffer.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CmdResp {
    pub buf_size: Le32,
    pub buf_version: Le32,
    pub cmd_id: Le32,
    pub resp_buf_addr_lo: Le32,
    pub resp_buf_addr_hi: Le32,
    pub resp_offset: Le32,
    pub resp_buf_size: Le32,
    /// `union psp_gfx_commands`.
    pub cmd: [u8; COMMANDS_BYTES],
    pub reserved_1: [u8; RESP_OFFSET - COMMANDS_BYTES - 28],
    pub resp: Resp,
    pub reserved_2: [u8; CMD_RESP_BYTES - RESP_OFFSET - 96],
}
const _: () = assert!(core::mem::size_of::<CmdResp>() == CMD_RESP_BYTES);
const _: () = assert!(core::mem::offset_of!(CmdResp, cmd) == 28);
const _: () = assert!(core::mem::offset_of!(CmdResp, resp) == RESP_OFFSET);

fn lo(x: u64) -> Le32 {
    Le32::new(x as u32)
}
fn hi(x: u64) -> Le32 {
    Le32::new((x >> 32) as u32)
}

impl CmdResp {
    /// A zeroed buffer carrying `cmd_id` and the command body `body`
    /// (Linux zeroes the whole buffer, then fills only these; GPCOM
    /// leaves the header's RBI fields at 0).
    fn with<T: IntoBytes + Immutable>(cmd_id: u32, body: &T) -> Self {
        let mut c = Self::new_zeroed();
        c.cmd_id = Le32::new(cmd_id);
        let src = body.as_bytes();
        if let Some(dst) = c.cmd.get_mut(..src.len()) {
            dst.copy_from_slice(src);
        }
        c
    }

    /// LOAD_TOC: PSP parses the TOC and answers with the TMR size it
    /// needs (follows `psp_prep_load_toc_cmd_buf()`).
    pub fn load_toc(toc_addr: u64, toc_size: u32) -> Self {
        Self::with(
            cmd_id::LOAD_TOC,
            &CmdLoadToc {
                toc_phy_addr_lo: lo(toc_addr),
                toc_phy_addr_hi: hi(toc_addr),
                toc_size: Le32::new(toc_size),
            },
        )
    }

    /// SETUP_TMR (follows `psp_prep_tmr_cmd_buf()`); `system_addr` is
    /// the physical address, passed only with `virt_phy_addr`.
    pub fn setup_tmr(tmr_addr: u64, size: u32, flags: TmrFlags, system_addr: u64) -> Self {
        Self::with(
            cmd_id::SETUP_TMR,
            &CmdSetupTmr {
                buf_phy_addr_lo: lo(tmr_addr),
                buf_phy_addr_hi: hi(tmr_addr),
                buf_size: Le32::new(size),
                tmr_flags: Le32::new(flags.into_bits()),
                system_phy_addr_lo: lo(system_addr),
                system_phy_addr_hi: hi(system_addr),
            },
        )
    }

    /// LOAD_IP_FW of one ucode image of type `fw_type` (a [`fw_type`]
    /// constant; follows `psp_prep_load_ip_fw_cmd_buf()`).
    pub fn load_ip_fw(fw_addr: u64, size: u32, fw_type: u32) -> Self {
        Self::with(
            cmd_id::LOAD_IP_FW,
            &CmdLoadIpFw {
                fw_phy_addr_lo: lo(fw_addr),
                fw_phy_addr_hi: hi(fw_addr),
                fw_size: Le32::new(size),
                fw_type: Le32::new(fw_type),
            },
        )
    }

    /// AUTOLOAD_RLC: all graphics firmware is in place; start the RLC
    /// backdoor autoload (follows `psp_rlc_autoload_start()`).
    pub fn autoload_rlc() -> Self {
        let mut c = Self::new_zeroed();
        c.cmd_id = Le32::new(cmd_id::AUTOLOAD_RLC);
        c
    }
}

/// The LOAD_IP_FW type for one section of a parsed SOC21 (gfx11) blob,
/// following `psp_get_fw_type()` through the ucode ids
/// `amdgpu_ucode_init_single_fw()` assigns. RS64 CP stacks are one
/// section loaded once per pipe, so they map to several types; this
/// returns the pipe-0 one. `None`: not a PSP-loaded image.
pub fn soc21_fw_type(kind: crate::Kind, section: &str) -> Option<u32> {
    use crate::kind::{CpEngine, Kind, MesPipe};
    Some(match (kind, section) {
        (Kind::Cp(CpEngine::Pfp), "ucode") => fw_type::RS64_PFP,
        (Kind::Cp(CpEngine::Pfp), "data") => fw_type::RS64_PFP_P0_STACK,
        (Kind::Cp(CpEngine::Me), "ucode") => fw_type::RS64_ME,
        (Kind::Cp(CpEngine::Me), "data") => fw_type::RS64_ME_P0_STACK,
        (Kind::Cp(CpEngine::Mec), "ucode") => fw_type::RS64_MEC,
        (Kind::Cp(CpEngine::Mec), "data") => fw_type::RS64_MEC_P0_STACK,
        (Kind::Mes(MesPipe::Scheduler | MesPipe::Unified), "ucode") => fw_type::CP_MES,
        (Kind::Mes(MesPipe::Scheduler | MesPipe::Unified), "data") => fw_type::MES_STACK,
        (Kind::Mes(MesPipe::Kiq), "ucode") => fw_type::CP_MES_KIQ,
        (Kind::Mes(MesPipe::Kiq), "data") => fw_type::MES_KIQ_STACK,
        (Kind::Imu, "iram") => fw_type::IMU_I,
        (Kind::Imu, "dram") => fw_type::IMU_D,
        (Kind::Rlc, "ucode") => fw_type::RLC_G,
        (Kind::Rlc, "save_restore_list_cntl") => fw_type::RLC_RESTORE_LIST_SRM_CNTL,
        (Kind::Rlc, "save_restore_list_gpm") => fw_type::RLC_RESTORE_LIST_GPM_MEM,
        (Kind::Rlc, "save_restore_list_srm") => fw_type::RLC_RESTORE_LIST_SRM_MEM,
        (Kind::Rlc, "rlc_iram") => fw_type::RLC_IRAM,
        (Kind::Rlc, "rlc_dram") => fw_type::RLC_DRAM_BOOT,
        (Kind::Rlc, "rlcp") => fw_type::RLC_P,
        (Kind::Rlc, "rlcv") => fw_type::RLC_V,
        (Kind::Rlc, "global_tap_delays") => fw_type::GLOBAL_TAP_DELAYS,
        (Kind::Rlc, "se0_tap_delays") => fw_type::SE0_TAP_DELAYS,
        (Kind::Rlc, "se1_tap_delays") => fw_type::SE1_TAP_DELAYS,
        (Kind::Rlc, "se2_tap_delays") => fw_type::SE2_TAP_DELAYS,
        (Kind::Rlc, "se3_tap_delays") => fw_type::SE3_TAP_DELAYS,
        (Kind::Sdma, "ctx") => fw_type::SDMA_UCODE_TH0,
        (Kind::Sdma, "ctl") => fw_type::SDMA_UCODE_TH1,
        (Kind::Smc, "ucode") => fw_type::SMU,
        _ => return None,
    })
}

const H: &str = "psp_gfx_if.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H, GfxCtrl = "struct psp_gfx_ctrl" {
        cmd_resp = "cmd_resp",
        rbi_wptr = "rbi_wptr",
        rbi_rptr = "rbi_rptr",
        gpcom_wptr = "gpcom_wptr",
        gpcom_rptr = "gpcom_rptr",
        ring_addr_lo = "ring_addr_lo",
        ring_addr_hi = "ring_addr_hi",
        ring_buf_size = "ring_buf_size",
    }),
    layout_facts!(H, RbFrame = "struct psp_gfx_rb_frame" {
        cmd_buf_addr_lo = "cmd_buf_addr_lo",
        cmd_buf_addr_hi = "cmd_buf_addr_hi",
        cmd_buf_size = "cmd_buf_size",
        fence_addr_lo = "fence_addr_lo",
        fence_addr_hi = "fence_addr_hi",
        fence_value = "fence_value",
        sid_lo = "sid_lo",
        sid_hi = "sid_hi",
        vmid = "vmid",
        frame_type = "frame_type",
        reserved1 = "reserved1",
        reserved2 = "reserved2",
    }),
    layout_facts!(H, CmdLoadTa = "struct psp_gfx_cmd_load_ta" {
        app_phy_addr_lo = "app_phy_addr_lo",
        app_phy_addr_hi = "app_phy_addr_hi",
        app_len = "app_len",
        cmd_buf_phy_addr_lo = "cmd_buf_phy_addr_lo",
        cmd_buf_phy_addr_hi = "cmd_buf_phy_addr_hi",
        cmd_buf_len = "cmd_buf_len",
    }),
    layout_facts!(H, CmdSetupTmr = "struct psp_gfx_cmd_setup_tmr" {
        buf_phy_addr_lo = "buf_phy_addr_lo",
        buf_phy_addr_hi = "buf_phy_addr_hi",
        buf_size = "buf_size",
        tmr_flags = "tmr_flags",
        system_phy_addr_lo = "system_phy_addr_lo",
        system_phy_addr_hi = "system_phy_addr_hi",
    }),
    [
        Fact::constant(
            H,
            "({ struct psp_gfx_cmd_setup_tmr t_ = {0}; t_.bitfield.sriov_enabled = 1; t_.tmr_flags; })",
            TmrFlags::new().with_sriov_enabled(true).into_bits() as u64
        ),
        Fact::constant(
            H,
            "({ struct psp_gfx_cmd_setup_tmr t_ = {0}; t_.bitfield.virt_phy_addr = 1; t_.tmr_flags; })",
            TmrFlags::new().with_virt_phy_addr(true).into_bits() as u64
        ),
    ],
    layout_facts!(H, CmdLoadIpFw = "struct psp_gfx_cmd_load_ip_fw" {
        fw_phy_addr_lo = "fw_phy_addr_lo",
        fw_phy_addr_hi = "fw_phy_addr_hi",
        fw_size = "fw_size",
        fw_type = "fw_type",
    }),
    layout_facts!(H, CmdLoadToc = "struct psp_gfx_cmd_load_toc" {
        toc_phy_addr_lo = "toc_phy_addr_lo",
        toc_phy_addr_hi = "toc_phy_addr_hi",
        toc_size = "toc_size",
    }),
    layout_facts!(H, Resp = "struct psp_gfx_resp" {
        status = "status",
        session_id = "session_id",
        fw_addr_lo = "fw_addr_lo",
        fw_addr_hi = "fw_addr_hi",
        tmr_size = "tmr_size",
        reserved = "reserved",
        uresp = "uresp",
    }),
    layout_facts!(H, CmdResp = "struct psp_gfx_cmd_resp" {
        buf_size = "buf_size",
        buf_version = "buf_version",
        cmd_id = "cmd_id",
        resp_buf_addr_lo = "resp_buf_addr_lo",
        resp_buf_addr_hi = "resp_buf_addr_hi",
        resp_offset = "resp_offset",
        resp_buf_size = "resp_buf_size",
        cmd = "cmd",
        reserved_1 = "reserved_1",
        resp = "resp",
        reserved_2 = "reserved_2",
    }),
    [
        Fact::size(H, "union psp_gfx_commands", COMMANDS_BYTES),
        Fact::size(H, "union psp_gfx_uresp", 32),
        Fact::offset(H, "struct psp_gfx_cmd_resp", "cmd.cmd_load_toc", 28),
        Fact::offset(H, "struct psp_gfx_cmd_resp", "cmd.cmd_load_ip_fw", 28),
        Fact::offset(H, "struct psp_gfx_cmd_resp", "cmd.cmd_setup_tmr", 28),
        Fact::constant(H, "PSP_GFX_CMD_BUF_VERSION", PSP_GFX_CMD_BUF_VERSION as u64),
        Fact::constant(H, "GFX_CMD_STATUS_MASK", GFX_CMD_STATUS_MASK as u64),
        Fact::constant(H, "GFX_CMD_ID_MASK", GFX_CMD_ID_MASK as u64),
        Fact::constant(H, "GFX_CMD_RESERVED_MASK", GFX_CMD_RESERVED_MASK as u64),
        Fact::constant(H, "GFX_CMD_RESPONSE_MASK", GFX_CMD_RESPONSE_MASK as u64),
        Fact::constant(H, "GFX_FLAG_RESPONSE", GFX_FLAG_RESPONSE as u64),
        Fact::constant(H, "PSP_ERR_UNKNOWN_COMMAND", PSP_ERR_UNKNOWN_COMMAND as u64),
        Fact::constant(
            H,
            "GFX_CTRL_CMD_ID_INIT_RBI_RING",
            ctrl_cmd::INIT_RBI_RING as u64
        ),
        Fact::constant(
            H,
            "GFX_CTRL_CMD_ID_INIT_GPCOM_RING",
            ctrl_cmd::INIT_GPCOM_RING as u64
        ),
        Fact::constant(
            H,
            "GFX_CTRL_CMD_ID_DESTROY_RINGS",
            ctrl_cmd::DESTROY_RINGS as u64
        ),
        Fact::constant(
            H,
            "GFX_CTRL_CMD_ID_CAN_INIT_RINGS",
            ctrl_cmd::CAN_INIT_RINGS as u64
        ),
        Fact::constant(H, "GFX_CTRL_CMD_ID_ENABLE_INT", ctrl_cmd::ENABLE_INT as u64),
        Fact::constant(
            H,
            "GFX_CTRL_CMD_ID_DISABLE_INT",
            ctrl_cmd::DISABLE_INT as u64
        ),
        Fact::constant(H, "GFX_CTRL_CMD_ID_MODE1_RST", ctrl_cmd::MODE1_RST as u64),
        Fact::constant(H, "GFX_CTRL_CMD_ID_GBR_IH_SET", ctrl_cmd::GBR_IH_SET as u64),
        Fact::constant(
            H,
            "GFX_CTRL_CMD_ID_CONSUME_CMD",
            ctrl_cmd::CONSUME_CMD as u64
        ),
        Fact::constant(
            H,
            "GFX_CTRL_CMD_ID_DESTROY_GPCOM_RING",
            ctrl_cmd::DESTROY_GPCOM_RING as u64
        ),
        Fact::constant(H, "GFX_CTRL_CMD_ID_MAX", ctrl_cmd::MAX as u64),
        Fact::constant(H, "GFX_CMD_ID_LOAD_TA", cmd_id::LOAD_TA as u64),
        Fact::constant(H, "GFX_CMD_ID_UNLOAD_TA", cmd_id::UNLOAD_TA as u64),
        Fact::constant(H, "GFX_CMD_ID_INVOKE_CMD", cmd_id::INVOKE_CMD as u64),
        Fact::constant(H, "GFX_CMD_ID_LOAD_ASD", cmd_id::LOAD_ASD as u64),
        Fact::constant(H, "GFX_CMD_ID_SETUP_TMR", cmd_id::SETUP_TMR as u64),
        Fact::constant(H, "GFX_CMD_ID_LOAD_IP_FW", cmd_id::LOAD_IP_FW as u64),
        Fact::constant(H, "GFX_CMD_ID_DESTROY_TMR", cmd_id::DESTROY_TMR as u64),
        Fact::constant(H, "GFX_CMD_ID_SAVE_RESTORE", cmd_id::SAVE_RESTORE as u64),
        Fact::constant(H, "GFX_CMD_ID_SETUP_VMR", cmd_id::SETUP_VMR as u64),
        Fact::constant(H, "GFX_CMD_ID_DESTROY_VMR", cmd_id::DESTROY_VMR as u64),
        Fact::constant(H, "GFX_CMD_ID_PROG_REG", cmd_id::PROG_REG as u64),
        Fact::constant(
            H,
            "GFX_CMD_ID_GET_FW_ATTESTATION",
            cmd_id::GET_FW_ATTESTATION as u64
        ),
        Fact::constant(H, "GFX_CMD_ID_LOAD_TOC", cmd_id::LOAD_TOC as u64),
        Fact::constant(H, "GFX_CMD_ID_AUTOLOAD_RLC", cmd_id::AUTOLOAD_RLC as u64),
        Fact::constant(H, "GFX_CMD_ID_BOOT_CFG", cmd_id::BOOT_CFG as u64),
        Fact::constant(
            H,
            "GFX_CMD_ID_SRIOV_SPATIAL_PART",
            cmd_id::SRIOV_SPATIAL_PART as u64
        ),
    ],
    [
        Fact::constant(H, "GFX_FW_TYPE_NONE", fw_type::NONE as u64),
        Fact::constant(H, "GFX_FW_TYPE_CP_ME", fw_type::CP_ME as u64),
        Fact::constant(H, "GFX_FW_TYPE_CP_PFP", fw_type::CP_PFP as u64),
        Fact::constant(H, "GFX_FW_TYPE_CP_CE", fw_type::CP_CE as u64),
        Fact::constant(H, "GFX_FW_TYPE_CP_MEC", fw_type::CP_MEC as u64),
        Fact::constant(H, "GFX_FW_TYPE_CP_MEC_ME1", fw_type::CP_MEC_ME1 as u64),
        Fact::constant(H, "GFX_FW_TYPE_CP_MEC_ME2", fw_type::CP_MEC_ME2 as u64),
        Fact::constant(H, "GFX_FW_TYPE_RLC_V", fw_type::RLC_V as u64),
        Fact::constant(H, "GFX_FW_TYPE_RLC_G", fw_type::RLC_G as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA0", fw_type::SDMA0 as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA1", fw_type::SDMA1 as u64),
        Fact::constant(H, "GFX_FW_TYPE_DMCU_ERAM", fw_type::DMCU_ERAM as u64),
        Fact::constant(H, "GFX_FW_TYPE_DMCU_ISR", fw_type::DMCU_ISR as u64),
        Fact::constant(H, "GFX_FW_TYPE_VCN", fw_type::VCN as u64),
        Fact::constant(H, "GFX_FW_TYPE_UVD", fw_type::UVD as u64),
        Fact::constant(H, "GFX_FW_TYPE_VCE", fw_type::VCE as u64),
        Fact::constant(H, "GFX_FW_TYPE_ISP", fw_type::ISP as u64),
        Fact::constant(H, "GFX_FW_TYPE_ACP", fw_type::ACP as u64),
        Fact::constant(H, "GFX_FW_TYPE_SMU", fw_type::SMU as u64),
        Fact::constant(H, "GFX_FW_TYPE_MMSCH", fw_type::MMSCH as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM",
            fw_type::RLC_RESTORE_LIST_GPM_MEM as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM",
            fw_type::RLC_RESTORE_LIST_SRM_MEM as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_CNTL",
            fw_type::RLC_RESTORE_LIST_SRM_CNTL as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_UVD1", fw_type::UVD1 as u64),
        Fact::constant(H, "GFX_FW_TYPE_TOC", fw_type::TOC as u64),
        Fact::constant(H, "GFX_FW_TYPE_RLC_P", fw_type::RLC_P as u64),
        Fact::constant(H, "GFX_FW_TYPE_RLC_IRAM", fw_type::RLC_IRAM as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_GLOBAL_TAP_DELAYS",
            fw_type::GLOBAL_TAP_DELAYS as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SE0_TAP_DELAYS",
            fw_type::SE0_TAP_DELAYS as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SE1_TAP_DELAYS",
            fw_type::SE1_TAP_DELAYS as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_GLOBAL_SE0_SE1_SKEW_DELAYS",
            fw_type::GLOBAL_SE0_SE1_SKEW_DELAYS as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_SDMA0_JT", fw_type::SDMA0_JT as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA1_JT", fw_type::SDMA1_JT as u64),
        Fact::constant(H, "GFX_FW_TYPE_CP_MES", fw_type::CP_MES as u64),
        Fact::constant(H, "GFX_FW_TYPE_MES_STACK", fw_type::MES_STACK as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLC_SRM_DRAM_SR",
            fw_type::RLC_SRM_DRAM_SR as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLCG_SCRATCH_SR",
            fw_type::RLCG_SCRATCH_SR as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLCP_SCRATCH_SR",
            fw_type::RLCP_SCRATCH_SR as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLCV_SCRATCH_SR",
            fw_type::RLCV_SCRATCH_SR as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_RLX6_DRAM_SR", fw_type::RLX6_DRAM_SR as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SDMA0_PG_CONTEXT",
            fw_type::SDMA0_PG_CONTEXT as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SDMA1_PG_CONTEXT",
            fw_type::SDMA1_PG_CONTEXT as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_GLOBAL_MUX_SELECT_RAM",
            fw_type::GLOBAL_MUX_SELECT_RAM as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SE0_MUX_SELECT_RAM",
            fw_type::SE0_MUX_SELECT_RAM as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SE1_MUX_SELECT_RAM",
            fw_type::SE1_MUX_SELECT_RAM as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_ACCUM_CTRL_RAM",
            fw_type::ACCUM_CTRL_RAM as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_RLCP_CAM", fw_type::RLCP_CAM as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLC_SPP_CAM_EXT",
            fw_type::RLC_SPP_CAM_EXT as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RLC_DRAM_BOOT",
            fw_type::RLC_DRAM_BOOT as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_VCN0_RAM", fw_type::VCN0_RAM as u64),
        Fact::constant(H, "GFX_FW_TYPE_VCN1_RAM", fw_type::VCN1_RAM as u64),
        Fact::constant(H, "GFX_FW_TYPE_DMUB", fw_type::DMUB as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA2", fw_type::SDMA2 as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA3", fw_type::SDMA3 as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA4", fw_type::SDMA4 as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA5", fw_type::SDMA5 as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA6", fw_type::SDMA6 as u64),
        Fact::constant(H, "GFX_FW_TYPE_SDMA7", fw_type::SDMA7 as u64),
        Fact::constant(H, "GFX_FW_TYPE_VCN1", fw_type::VCN1 as u64),
        Fact::constant(H, "GFX_FW_TYPE_CAP", fw_type::CAP as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SE2_TAP_DELAYS",
            fw_type::SE2_TAP_DELAYS as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SE3_TAP_DELAYS",
            fw_type::SE3_TAP_DELAYS as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_REG_LIST", fw_type::REG_LIST as u64),
        Fact::constant(H, "GFX_FW_TYPE_IMU_I", fw_type::IMU_I as u64),
        Fact::constant(H, "GFX_FW_TYPE_IMU_D", fw_type::IMU_D as u64),
        Fact::constant(H, "GFX_FW_TYPE_LSDMA", fw_type::LSDMA as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SDMA_UCODE_TH0",
            fw_type::SDMA_UCODE_TH0 as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_SDMA_UCODE_TH1",
            fw_type::SDMA_UCODE_TH1 as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_PPTABLE", fw_type::PPTABLE as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_DISCRETE_USB4",
            fw_type::DISCRETE_USB4 as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_TA", fw_type::TA as u64),
        Fact::constant(H, "GFX_FW_TYPE_RS64_MES", fw_type::RS64_MES as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_MES_STACK",
            fw_type::RS64_MES_STACK as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_RS64_KIQ", fw_type::RS64_KIQ as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_KIQ_STACK",
            fw_type::RS64_KIQ_STACK as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_ISP_DATA", fw_type::ISP_DATA as u64),
        Fact::constant(H, "GFX_FW_TYPE_CP_MES_KIQ", fw_type::CP_MES_KIQ as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_MES_KIQ_STACK",
            fw_type::MES_KIQ_STACK as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_UMSCH_DATA", fw_type::UMSCH_DATA as u64),
        Fact::constant(H, "GFX_FW_TYPE_UMSCH_UCODE", fw_type::UMSCH_UCODE as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_UMSCH_CMD_BUFFER",
            fw_type::UMSCH_CMD_BUFFER as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_USB_DP_COMBO_PHY",
            fw_type::USB_DP_COMBO_PHY as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_RS64_PFP", fw_type::RS64_PFP as u64),
        Fact::constant(H, "GFX_FW_TYPE_RS64_ME", fw_type::RS64_ME as u64),
        Fact::constant(H, "GFX_FW_TYPE_RS64_MEC", fw_type::RS64_MEC as u64),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_PFP_P0_STACK",
            fw_type::RS64_PFP_P0_STACK as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_PFP_P1_STACK",
            fw_type::RS64_PFP_P1_STACK as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_ME_P0_STACK",
            fw_type::RS64_ME_P0_STACK as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_ME_P1_STACK",
            fw_type::RS64_ME_P1_STACK as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_MEC_P0_STACK",
            fw_type::RS64_MEC_P0_STACK as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_MEC_P1_STACK",
            fw_type::RS64_MEC_P1_STACK as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_MEC_P2_STACK",
            fw_type::RS64_MEC_P2_STACK as u64
        ),
        Fact::constant(
            H,
            "GFX_FW_TYPE_RS64_MEC_P3_STACK",
            fw_type::RS64_MEC_P3_STACK as u64
        ),
        Fact::constant(H, "GFX_FW_TYPE_VPEC_FW1", fw_type::VPEC_FW1 as u64),
        Fact::constant(H, "GFX_FW_TYPE_VPEC_FW2", fw_type::VPEC_FW2 as u64),
        Fact::constant(H, "GFX_FW_TYPE_VPE", fw_type::VPE as u64),
        Fact::constant(H, "GFX_FW_TYPE_JPEG_RAM", fw_type::JPEG_RAM as u64),
        Fact::constant(H, "GFX_FW_TYPE_P2S_TABLE", fw_type::P2S_TABLE as u64),
    ],
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte positions from the offsets `psp_gfx_if.h` writes in its
    /// comments (+8 cmd_id, +28 command body, +864 response).
    #[test]
    fn load_ip_fw_lands_where_the_header_says() {
        let c = CmdResp::load_ip_fw(0x1_2345_6000, 0x4000, fw_type::RS64_MEC);
        let b = c.as_bytes();
        assert_eq!(b.len(), 1024);
        assert_eq!(&b[8..12], &6u32.to_le_bytes());
        assert_eq!(&b[28..32], &0x2345_6000u32.to_le_bytes());
        assert_eq!(&b[32..36], &1u32.to_le_bytes());
        assert_eq!(&b[36..40], &0x4000u32.to_le_bytes());
        assert_eq!(&b[40..44], &89u32.to_le_bytes());
        assert!(b[44..].iter().all(|&x| x == 0));
    }

    #[test]
    fn gpcom_frame_points_at_a_whole_command_buffer() {
        let f = RbFrame::gpcom(0xAB_0000_1000, 0xCD_0000_2000, 9);
        let b = f.as_bytes();
        assert_eq!(b.len(), 64);
        assert_eq!(&b[0..12], &[0x00, 0x10, 0, 0, 0xAB, 0, 0, 0, 0, 4, 0, 0]);
        assert_eq!(&b[12..24], &[0x00, 0x20, 0, 0, 0xCD, 0, 0, 0, 9, 0, 0, 0]);
    }
}
