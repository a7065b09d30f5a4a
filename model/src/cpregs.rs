//! The MEC model's own reading of the CP registers (the HQD window an
//! MQD carries is decoded by `crate::decode::mqd::Hqd`, with the indices
//! in [`w`]): written from `v11_structs.h` / `v12_structs.h` and
//! `gc_11_0_0_sh_mask.h` / `gc_12_0_0_sh_mask.h` (and the few defaults
//! and enums the model starts from), not from the runtime's
//! `barebell::gfx` types, so a layout or bit-position bug in the runtime
//! is refused here instead of mirrored. Every index, mask and value is a
//! conformance fact ([`FACTS`]). The register *offsets* come from the
//! conformance-checked tables in `barebell::regs`.

use barebell_facts::Fact;

/// Registers in the HQD window `CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI`.
pub const WINDOW_DWORDS: usize = 56;
/// The MQD dword that the window's first register mirrors.
pub const WINDOW_FIRST_MQD_DWORD: usize = 128;

/// Indexes into the window (MQD dword - 128), from the `// offset:`
/// column of `struct v11_compute_mqd` (identical in `v12_compute_mqd`).
pub mod w {
    pub const MQD_BASE_ADDR_LO: usize = 0;
    pub const MQD_BASE_ADDR_HI: usize = 1;
    pub const ACTIVE: usize = 2;
    pub const VMID: usize = 3;
    pub const PQ_BASE_LO: usize = 8;
    pub const PQ_BASE_HI: usize = 9;
    pub const PQ_RPTR: usize = 10;
    pub const PQ_RPTR_REPORT_ADDR_LO: usize = 11;
    pub const PQ_RPTR_REPORT_ADDR_HI: usize = 12;
    pub const PQ_WPTR_POLL_ADDR_LO: usize = 13;
    pub const PQ_WPTR_POLL_ADDR_HI: usize = 14;
    pub const PQ_DOORBELL_CONTROL: usize = 15;
    /// `reserved_144`: no register is defined at this dword, yet KFD's
    /// `hqd_load_v11()` and tinygrad's `setup_ring` write the whole
    /// window in one sweep, this dword included.
    pub const RESERVED_144: usize = 16;
    pub const PQ_CONTROL: usize = 17;
    pub const DEQUEUE_REQUEST: usize = 24;
    pub const EOP_BASE_ADDR_LO: usize = 37;
    pub const EOP_BASE_ADDR_HI: usize = 38;
    pub const EOP_CONTROL: usize = 39;
    pub const EOP_RPTR: usize = 40;
    pub const AQL_CONTROL: usize = 53;
    pub const PQ_WPTR_LO: usize = 54;
    pub const PQ_WPTR_HI: usize = 55;
}

// The window's decoder is `crate::decode::mqd::Hqd`, the model's one
// reading of it (window indices `w` above, MQD dwords `dw` there).

/// `CP_HQD_ACTIVE.ACTIVE`.
pub const HQD_ACTIVE_MASK: u32 = 0x1;
/// `CP_HQD_VMID.VMID`.
pub const HQD_VMID_MASK: u32 = 0xF;
/// `CP_HQD_PQ_CONTROL.QUEUE_SIZE`.
pub const PQ_CONTROL_QUEUE_SIZE_MASK: u32 = 0x3F;
/// `CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_OFFSET` and `.DOORBELL_EN`.
pub const DOORBELL_OFFSET_MASK: u32 = 0x0FFF_FFFC;
pub const DOORBELL_OFFSET_SHIFT: u32 = 2;
pub const DOORBELL_EN_MASK: u32 = 0x4000_0000;
/// `CP_HQD_EOP_CONTROL.EOP_SIZE`.
pub const EOP_CONTROL_EOP_SIZE_MASK: u32 = 0x3F;
/// `CP_HQD_AQL_CONTROL.CONTROL0`.
pub const AQL_CONTROL_CONTROL0_MASK: u32 = 0x7FFF;
/// `CP_HQD_DEQUEUE_REQUEST.DEQUEUE_REQ`.
pub const DEQUEUE_REQ_MASK: u32 = 0xF;

/// `GRBM_GFX_CNTL`: which ME/pipe/queue (and VMID) banked registers
/// address (`soc21_grbm_select()`).
pub mod grbm {
    pub const PIPEID_MASK: u32 = 0x3;
    pub const PIPEID_SHIFT: u32 = 0;
    pub const MEID_MASK: u32 = 0xC;
    pub const MEID_SHIFT: u32 = 2;
    pub const VMID_MASK: u32 = 0xF0;
    pub const VMID_SHIFT: u32 = 4;
    pub const QUEUEID_MASK: u32 = 0x700;
    pub const QUEUEID_SHIFT: u32 = 8;

    /// `(me, pipe, queue)` a `GRBM_GFX_CNTL` value selects.
    pub fn slot(v: u32) -> (u8, u8, u8) {
        (
            ((v & MEID_MASK) >> MEID_SHIFT) as u8,
            ((v & PIPEID_MASK) >> PIPEID_SHIFT) as u8,
            ((v & QUEUEID_MASK) >> QUEUEID_SHIFT) as u8,
        )
    }

    pub fn vmid(v: u32) -> u8 {
        ((v & VMID_MASK) >> VMID_SHIFT) as u8
    }
}

/// `CP_MEC_RS64_CNTL` (`gc_11_0_0_sh_mask.h`, same in GC 12).
pub mod mec_cntl {
    pub const INVALIDATE_ICACHE: u32 = 1 << 4;
    /// `MEC_PIPEn_RESET`: bit 16 + n.
    pub const PIPE0_RESET_SHIFT: u32 = 16;
    /// `MEC_PIPEn_ACTIVE`: bit 26 + n.
    pub const PIPE0_ACTIVE_SHIFT: u32 = 26;
    pub const HALT: u32 = 1 << 30;
    /// `regCP_MEC_RS64_CNTL_DEFAULT` (`gc_11_0_0_default.h`): halted.
    /// GC 12 has no default header in Linux 6.12; the model uses the
    /// GC 11 value for both (a model convention).
    pub const DEFAULT: u32 = 0x4000_0000;

    pub fn reset(v: u32, pipe: u8) -> bool {
        v >> (PIPE0_RESET_SHIFT + u32::from(pipe)) & 1 != 0
    }
    pub fn active(v: u32, pipe: u8) -> bool {
        v >> (PIPE0_ACTIVE_SHIFT + u32::from(pipe)) & 1 != 0
    }
}

/// `CP_MEC_RS64_PRGRM_CNTR_START(_HI)` reset values
/// (`gc_11_0_0_default.h`).
pub const MEC_PC_START_DEFAULT: u32 = 0x800;
pub const MEC_PC_START_HI_DEFAULT: u32 = 0;

/// `CP_MES_CNTL` (`gc_11_0_0_sh_mask.h`, same in GC 12).
/// `SPI_COMPUTE_QUEUE_RESET__RESET_MASK` (`gc_11_0_0_sh_mask.h`, same in
/// GC 12).
pub const SPI_QUEUE_RESET_MASK: u32 = 0x1;
/// `GRBM_SOFT_RESET__SOFT_RESET_CP_MASK` and `__SOFT_RESET_CPC_MASK`
/// (`gc_11_0_0_sh_mask.h`, same in GC 12).
pub const SOFT_RESET_CP: u32 = 0x1;
pub const SOFT_RESET_CPC: u32 = 0x0004_0000;

pub mod mes_cntl {
    pub const PIPE0_ACTIVE: u32 = 1 << 26;
    pub const PIPE1_ACTIVE: u32 = 1 << 27;
    pub const HALT: u32 = 1 << 30;
}

/// `CP_PQ_WPTR_POLL_CNTL.EN`: the CP polls each queue's
/// `CP_HQD_PQ_WPTR_POLL_ADDR` ("only used if
/// CP_PQ_WPTR_POLL_CNTL.CP_PQ_WPTR_POLL_CNTL__EN_MASK=1",
/// `gfx_v11_0_compute_mqd_init()`); `regCP_PQ_WPTR_POLL_CNTL_DEFAULT` is
/// 0x1 (`gc_11_0_0_default.h`): polling off.
pub const WPTR_POLL_EN_MASK: u32 = 0x8000_0000;
pub const WPTR_POLL_CNTL_DEFAULT: u32 = 0x1;

/// `RLC_CP_SCHEDULERS.scheduler0`: `me << 5 | pipe << 3 | queue`, bit 7
/// enables (`gfx_v11_0_kiq_setting()`).
pub const SCHEDULER0_MASK: u32 = 0xFF;

/// `SH_MEM_CONFIG` and `SH_MEM_BASES` fields and the values Linux writes.
pub mod sh_mem {
    pub const ADDRESS_MODE_MASK: u32 = 0x1;
    pub const ALIGNMENT_MODE_MASK: u32 = 0xC;
    pub const ALIGNMENT_MODE_SHIFT: u32 = 2;
    /// `SH_MEM_ADDRESS_MODE_64` (`soc21_enum.h`).
    pub const ADDRESS_MODE_64: u32 = 0;
    /// `SH_MEM_ALIGNMENT_MODE_UNALIGNED`.
    pub const ALIGNMENT_MODE_UNALIGNED: u32 = 3;
    pub const PRIVATE_BASE_MASK: u32 = 0xFFFF;
    pub const SHARED_BASE_MASK: u32 = 0xFFFF_0000;
    pub const SHARED_BASE_SHIFT: u32 = 16;
    /// `regSH_MEM_CONFIG_DEFAULT` / `regSH_MEM_BASES_DEFAULT`
    /// (`gc_11_0_0_default.h`; the model uses them for GC 12 too).
    pub const CONFIG_DEFAULT: u32 = 0xC000;
    pub const BASES_DEFAULT: u32 = 0;
}

/// `gfx_firmware_header_v2_0` (`amdgpu_ucode.h`): where the RS64 engines'
/// code starts, which is what `CP_*_PRGRM_CNTR_START(_HI)` must hold.
pub mod gfx_v2 {
    pub const UCODE_START_ADDR_LO: usize = 52;
    pub const UCODE_START_ADDR_HI: usize = 56;
    /// `common_firmware_header.header_version_major`.
    pub const HEADER_VERSION_MAJOR: usize = 8;

    fn u32_at(b: &[u8], at: usize) -> Option<u32> {
        let s = b.get(at..at + 4)?;
        Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// The program-counter value (`(start_lo >> 2) | (start_hi << 30)`
    /// and `start_hi >> 2`, as `gfx_v11_0_config_gfx_rs64()` programs
    /// them) of a v2 gfx blob, or `None` if `blob` is not one.
    pub fn pc_start(blob: &[u8]) -> Option<(u32, u32)> {
        let major = u16::from_le_bytes([
            *blob.get(HEADER_VERSION_MAJOR)?,
            *blob.get(HEADER_VERSION_MAJOR + 1)?,
        ]);
        if major != 2 {
            return None;
        }
        let lo = u32_at(blob, UCODE_START_ADDR_LO)?;
        let hi = u32_at(blob, UCODE_START_ADDR_HI)?;
        Some((lo >> 2 | hi << 30, hi >> 2))
    }
}

const SH11: &str = "gc_11_0_0_sh_mask.h";
const SH12: &str = "gc_12_0_0_sh_mask.h";

macro_rules! window {
    ($h:literal, $t:literal) => {
        [
            Fact::offset(
                $h,
                $t,
                "cp_mqd_base_addr_lo",
                (WINDOW_FIRST_MQD_DWORD + w::MQD_BASE_ADDR_LO) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_mqd_base_addr_hi",
                (WINDOW_FIRST_MQD_DWORD + w::MQD_BASE_ADDR_HI) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_active",
                (WINDOW_FIRST_MQD_DWORD + w::ACTIVE) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_vmid",
                (WINDOW_FIRST_MQD_DWORD + w::VMID) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_base_lo",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_BASE_LO) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_base_hi",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_BASE_HI) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_rptr",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_RPTR) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_rptr_report_addr_lo",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_RPTR_REPORT_ADDR_LO) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_rptr_report_addr_hi",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_RPTR_REPORT_ADDR_HI) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_wptr_poll_addr_lo",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_WPTR_POLL_ADDR_LO) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_wptr_poll_addr_hi",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_WPTR_POLL_ADDR_HI) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_doorbell_control",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_DOORBELL_CONTROL) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "reserved_144",
                (WINDOW_FIRST_MQD_DWORD + w::RESERVED_144) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_control",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_CONTROL) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_dequeue_request",
                (WINDOW_FIRST_MQD_DWORD + w::DEQUEUE_REQUEST) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_eop_base_addr_lo",
                (WINDOW_FIRST_MQD_DWORD + w::EOP_BASE_ADDR_LO) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_eop_base_addr_hi",
                (WINDOW_FIRST_MQD_DWORD + w::EOP_BASE_ADDR_HI) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_eop_control",
                (WINDOW_FIRST_MQD_DWORD + w::EOP_CONTROL) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_eop_rptr",
                (WINDOW_FIRST_MQD_DWORD + w::EOP_RPTR) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_aql_control",
                (WINDOW_FIRST_MQD_DWORD + w::AQL_CONTROL) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_wptr_lo",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_WPTR_LO) * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_wptr_hi",
                (WINDOW_FIRST_MQD_DWORD + w::PQ_WPTR_HI) * 4,
            ),
        ]
    };
}

macro_rules! masks {
    ($h:expr) => {
        [
            Fact::constant($h, "CP_HQD_ACTIVE__ACTIVE_MASK", HQD_ACTIVE_MASK as u64),
            Fact::constant(
                $h,
                "SPI_COMPUTE_QUEUE_RESET__RESET_MASK",
                SPI_QUEUE_RESET_MASK as u64,
            ),
            Fact::constant(
                $h,
                "GRBM_SOFT_RESET__SOFT_RESET_CP_MASK",
                SOFT_RESET_CP as u64,
            ),
            Fact::constant(
                $h,
                "GRBM_SOFT_RESET__SOFT_RESET_CPC_MASK",
                SOFT_RESET_CPC as u64,
            ),
            Fact::constant($h, "CP_HQD_VMID__VMID_MASK", HQD_VMID_MASK as u64),
            Fact::constant(
                $h,
                "CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK",
                PQ_CONTROL_QUEUE_SIZE_MASK as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK",
                DOORBELL_OFFSET_MASK as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET__SHIFT",
                DOORBELL_OFFSET_SHIFT as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK",
                DOORBELL_EN_MASK as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_EOP_CONTROL__EOP_SIZE_MASK",
                EOP_CONTROL_EOP_SIZE_MASK as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_AQL_CONTROL__CONTROL0_MASK",
                AQL_CONTROL_CONTROL0_MASK as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ_MASK",
                DEQUEUE_REQ_MASK as u64,
            ),
            Fact::constant($h, "GRBM_GFX_CNTL__PIPEID_MASK", grbm::PIPEID_MASK as u64),
            Fact::constant(
                $h,
                "GRBM_GFX_CNTL__PIPEID__SHIFT",
                grbm::PIPEID_SHIFT as u64,
            ),
            Fact::constant($h, "GRBM_GFX_CNTL__MEID_MASK", grbm::MEID_MASK as u64),
            Fact::constant($h, "GRBM_GFX_CNTL__MEID__SHIFT", grbm::MEID_SHIFT as u64),
            Fact::constant($h, "GRBM_GFX_CNTL__VMID_MASK", grbm::VMID_MASK as u64),
            Fact::constant($h, "GRBM_GFX_CNTL__VMID__SHIFT", grbm::VMID_SHIFT as u64),
            Fact::constant($h, "GRBM_GFX_CNTL__QUEUEID_MASK", grbm::QUEUEID_MASK as u64),
            Fact::constant(
                $h,
                "GRBM_GFX_CNTL__QUEUEID__SHIFT",
                grbm::QUEUEID_SHIFT as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_INVALIDATE_ICACHE_MASK",
                mec_cntl::INVALIDATE_ICACHE as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE0_RESET__SHIFT",
                mec_cntl::PIPE0_RESET_SHIFT as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE1_RESET__SHIFT",
                mec_cntl::PIPE0_RESET_SHIFT as u64 + 1,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE2_RESET__SHIFT",
                mec_cntl::PIPE0_RESET_SHIFT as u64 + 2,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE3_RESET__SHIFT",
                mec_cntl::PIPE0_RESET_SHIFT as u64 + 3,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE0_ACTIVE__SHIFT",
                mec_cntl::PIPE0_ACTIVE_SHIFT as u64,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE1_ACTIVE__SHIFT",
                mec_cntl::PIPE0_ACTIVE_SHIFT as u64 + 1,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE2_ACTIVE__SHIFT",
                mec_cntl::PIPE0_ACTIVE_SHIFT as u64 + 2,
            ),
            Fact::constant(
                $h,
                "CP_MEC_RS64_CNTL__MEC_PIPE3_ACTIVE__SHIFT",
                mec_cntl::PIPE0_ACTIVE_SHIFT as u64 + 3,
            ),
            Fact::constant($h, "CP_MEC_RS64_CNTL__MEC_HALT_MASK", mec_cntl::HALT as u64),
            Fact::constant(
                $h,
                "CP_MES_CNTL__MES_PIPE0_ACTIVE_MASK",
                mes_cntl::PIPE0_ACTIVE as u64,
            ),
            Fact::constant(
                $h,
                "CP_MES_CNTL__MES_PIPE1_ACTIVE_MASK",
                mes_cntl::PIPE1_ACTIVE as u64,
            ),
            Fact::constant($h, "CP_MES_CNTL__MES_HALT_MASK", mes_cntl::HALT as u64),
            Fact::constant(
                $h,
                "CP_PQ_WPTR_POLL_CNTL__EN_MASK",
                WPTR_POLL_EN_MASK as u64,
            ),
            Fact::constant(
                $h,
                "RLC_CP_SCHEDULERS__scheduler0_MASK",
                SCHEDULER0_MASK as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_CONFIG__ADDRESS_MODE_MASK",
                sh_mem::ADDRESS_MODE_MASK as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_CONFIG__ALIGNMENT_MODE_MASK",
                sh_mem::ALIGNMENT_MODE_MASK as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_CONFIG__ALIGNMENT_MODE__SHIFT",
                sh_mem::ALIGNMENT_MODE_SHIFT as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_BASES__PRIVATE_BASE_MASK",
                sh_mem::PRIVATE_BASE_MASK as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_BASES__SHARED_BASE_MASK",
                sh_mem::SHARED_BASE_MASK as u64,
            ),
            Fact::constant(
                $h,
                "SH_MEM_BASES__SHARED_BASE__SHIFT",
                sh_mem::SHARED_BASE_SHIFT as u64,
            ),
        ]
    };
}

const U: &str = "amdgpu_ucode.h";
const GFX_V2: &str = "struct gfx_firmware_header_v2_0";

/// Every fact the MEC model decodes by.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    window!("v11_structs.h", "struct v11_compute_mqd"),
    window!("v12_structs.h", "struct v12_compute_mqd"),
    masks!(SH11),
    masks!(SH12),
    [
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_MEC_RS64_CNTL_DEFAULT",
            mec_cntl::DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_MEC_RS64_PRGRM_CNTR_START_DEFAULT",
            MEC_PC_START_DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_MEC_RS64_PRGRM_CNTR_START_HI_DEFAULT",
            MEC_PC_START_HI_DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regSH_MEM_CONFIG_DEFAULT",
            sh_mem::CONFIG_DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regSH_MEM_BASES_DEFAULT",
            sh_mem::BASES_DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_PQ_WPTR_POLL_CNTL_DEFAULT",
            WPTR_POLL_CNTL_DEFAULT as u64
        ),
        Fact::constant(
            "soc21_enum.h",
            "SH_MEM_ADDRESS_MODE_64",
            sh_mem::ADDRESS_MODE_64 as u64
        ),
        Fact::constant(
            "soc21_enum.h",
            "SH_MEM_ALIGNMENT_MODE_UNALIGNED",
            sh_mem::ALIGNMENT_MODE_UNALIGNED as u64
        ),
        Fact::constant(
            "soc24_enum.h",
            "SH_MEM_ADDRESS_MODE_64",
            sh_mem::ADDRESS_MODE_64 as u64
        ),
        Fact::constant(
            "soc24_enum.h",
            "SH_MEM_ALIGNMENT_MODE_UNALIGNED",
            sh_mem::ALIGNMENT_MODE_UNALIGNED as u64
        ),
        Fact::offset(
            U,
            GFX_V2,
            "ucode_start_addr_lo",
            gfx_v2::UCODE_START_ADDR_LO
        ),
        Fact::offset(
            U,
            GFX_V2,
            "ucode_start_addr_hi",
            gfx_v2::UCODE_START_ADDR_HI
        ),
        Fact::offset(
            U,
            "struct common_firmware_header",
            "header_version_major",
            gfx_v2::HEADER_VERSION_MAJOR
        ),
    ],
);
