//! MES scheduler API frames as the model reads them, from
//! `mes_v11_api_def.h` (`#pragma pack(push, 4)`) and `mes_v12_api_def.h`
//! (`#pragma pack(push, 8)`).
//!
//! Every frame is 64 dwords (`API_FRAME_SIZE_IN_DWORDS`) starting with
//! `union MES_API_HEADER`. The two versions differ where a 64-bit field
//! follows an odd number of dwords: v11 packs it at a 4-byte offset, v12
//! pads it to 8 (ADD_QUEUE's `mqd_addr` is at byte 76 in v11 and 80 in
//! v12, and everything after it moves). The offsets below were worked out
//! by hand from the two headers' member lists and packing; each one is a
//! conformance fact (`offsetof(union MESAPI__…, field)`), and each flag
//! bit is checked by setting the C bitfield in a zeroed frame and finding
//! the dword and mask it lands in.

use super::{Bits, le32, le64};
use barebell_facts::Fact;

/// `API_FRAME_SIZE_IN_DWORDS`.
pub const FRAME_DWORDS: usize = 64;
pub const FRAME_BYTES: usize = FRAME_DWORDS * 4;

/// `MES_API_TYPE_SCHEDULER`.
pub const API_TYPE_SCHEDULER: u32 = 1;

/// `union MES_API_HEADER`: type, opcode, dwsize (same in both versions).
pub const HEADER_TYPE: Bits = Bits::new(0, 4);
pub const HEADER_OPCODE: Bits = Bits::new(4, 8);
pub const HEADER_DWSIZE: Bits = Bits::new(12, 8);

/// `enum MES_SCH_API_OPCODE` values the model answers.
pub mod opcode {
    pub const SET_HW_RSRC: u32 = 0;
    pub const ADD_QUEUE: u32 = 2;
    pub const REMOVE_QUEUE: u32 = 3;
    pub const SUSPEND: u32 = 6;
    pub const RESUME: u32 = 7;
    pub const RESET: u32 = 8;
    pub const QUERY_SCHEDULER_STATUS: u32 = 11;
    pub const MISC: u32 = 14;
    pub const SET_HW_RSRC_1: u32 = 19;
}

/// `enum MES_QUEUE_TYPE` (`MES_QUEUE_TYPE_SCHQ` exists in v12 only).
pub mod queue_type {
    pub const GFX: u32 = 0;
    pub const COMPUTE: u32 = 1;
    pub const SDMA: u32 = 2;
    pub const SCHQ: u32 = 3;
}

/// `enum MES_AMD_PRIORITY_LEVEL`: `AMD_PRIORITY_NUM_LEVELS`.
pub const PRIORITY_LEVELS: usize = 5;
/// `MAX_COMPUTE_PIPES`, `MAX_GFX_PIPES`, `MAX_SDMA_PIPES`.
pub const COMPUTE_PIPES: usize = 8;
pub const GFX_PIPES: usize = 2;
pub const SDMA_PIPES: usize = 2;
/// `MES_MAX_HWIP_SEGMENT`.
pub const HWIP_SEGMENTS: usize = 8;

/// v12's failure encoding in the high half of the status
/// (`MES_ERR_CODE`, `MES_SCH_ERROR_CODE_HEADER_SHIFT_12`, …).
pub mod v12_error {
    pub const HEADER_SHIFT: u32 = 8;
    pub const MISC_OP_SHIFT: u32 = 16;
    pub const CATEGORY_SHIFT: u32 = 24;
    pub const STATUS_ERROR_SHIFT: u32 = 31;
    /// `MES_ERROR_API`.
    pub const CATEGORY_API: u32 = 1;
}

/// `union MESAPI_SET_HW_RESOURCES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetHw {
    pub vmid_mask_mmhub: usize,
    pub vmid_mask_gfxhub: usize,
    pub gds_size: usize,
    pub paging_vmid: usize,
    pub compute_hqd_mask: usize,
    pub gfx_hqd_mask: usize,
    pub sdma_hqd_mask: usize,
    pub aggregated_doorbells: usize,
    pub g_sch_ctx_gpu_mc_ptr: usize,
    pub query_status_fence_gpu_mc_ptr: usize,
    pub gc_base: usize,
    pub mmhub_base: usize,
    pub osssys_base: usize,
    pub api_status: usize,
    /// The dword of the flag bitfields (`uint32_t_all` / `uint32_all`).
    pub flags: usize,
    pub oversubscription_timer: usize,
    /// `unmapped_doorbell_handling` (v12 only).
    pub unmapped_doorbell_handling: Option<Bits>,
    pub disable_add_queue_wptr_mc_addr: Bits,
}

/// `union MESAPI__ADD_QUEUE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Add {
    pub process_id: usize,
    pub page_table_base_addr: usize,
    pub process_va_start: usize,
    pub process_va_end: usize,
    pub process_quantum: usize,
    pub process_context_addr: usize,
    pub gang_quantum: usize,
    pub gang_context_addr: usize,
    pub inprocess_gang_priority: usize,
    pub gang_global_priority_level: usize,
    pub doorbell_offset: usize,
    pub mqd_addr: usize,
    pub wptr_addr: usize,
    pub queue_type: usize,
    pub gds_size: usize,
    pub vm_context_cntl: usize,
    /// The dword of the flag bitfields.
    pub flags: usize,
    pub api_status: usize,
    pub pipe_id: usize,
    pub queue_id: usize,
}

/// ADD_QUEUE flag bits (same positions in both versions).
pub mod add_flags {
    use super::Bits;
    pub const PAGING: Bits = Bits::new(0, 1);
    pub const PROGRAM_GDS: Bits = Bits::new(5, 1);
    pub const IS_GANG_SUSPENDED: Bits = Bits::new(6, 1);
    pub const IS_TMZ_QUEUE: Bits = Bits::new(7, 1);
    pub const MAP_KIQ_UTILITY_QUEUE: Bits = Bits::new(8, 1);
    pub const IS_KFD_PROCESS: Bits = Bits::new(9, 1);
    pub const IS_AQL_QUEUE: Bits = Bits::new(11, 1);
    pub const MAP_LEGACY_KQ: Bits = Bits::new(13, 1);
}

/// `union MESAPI__REMOVE_QUEUE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remove {
    pub doorbell_offset: usize,
    pub gang_context_addr: usize,
    pub flags: usize,
    pub api_status: usize,
    pub pipe_id: usize,
    pub queue_id: usize,
    pub queue_type: usize,
}

/// REMOVE_QUEUE flag bits.
pub mod remove_flags {
    use super::Bits;
    pub const UNMAP_KIQ_UTILITY_QUEUE: Bits = Bits::new(1, 1);
    pub const PREEMPT_LEGACY_GFX_QUEUE: Bits = Bits::new(2, 1);
    pub const UNMAP_LEGACY_QUEUE: Bits = Bits::new(3, 1);
}

/// `union MESAPI__RESET` (the fields the model reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reset {
    pub flags: usize,
    pub gang_context_addr: usize,
    pub doorbell_offset: usize,
    pub api_status: usize,
}

/// RESET flag bits.
pub mod reset_flags {
    use super::Bits;
    pub const RESET_QUEUE_ONLY: Bits = Bits::new(0, 1);
    pub const HANG_DETECT_THEN_RESET: Bits = Bits::new(1, 1);
    pub const HANG_DETECT_ONLY: Bits = Bits::new(2, 1);
    pub const RESET_LEGACY_GFX: Bits = Bits::new(3, 1);
}

/// `union MESAPI__SUSPEND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suspend {
    pub flags: usize,
    pub gang_context_addr: usize,
    pub suspend_fence_addr: usize,
    pub suspend_fence_value: usize,
    pub api_status: usize,
}

/// `union MESAPI__RESUME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resume {
    pub flags: usize,
    pub gang_context_addr: usize,
    pub api_status: usize,
}

/// `suspend_all_gangs` / `resume_all_gangs`: bit 0 of the dword after
/// the header.
pub const ALL_GANGS: Bits = Bits::new(0, 1);

/// One API version's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub set_hw: SetHw,
    /// `api_status` of `union MESAPI_SET_HW_RESOURCES_1`.
    pub set_hw_1_api_status: usize,
    /// `mes_kiq_unmap_timeout` of SET_HW_RSRC_1 (v12 only).
    pub set_hw_1_kiq_unmap_timeout: Option<usize>,
    pub add: Add,
    pub remove: Remove,
    pub reset: Reset,
    pub suspend: Suspend,
    pub resume: Resume,
    /// `api_status` of `union MESAPI__QUERY_MES_STATUS`.
    pub query_api_status: usize,
}

/// The SET_HW_RSRC offsets, identical in v11 and v12 (every 64-bit field
/// there already falls on an 8-byte boundary).
const SET_HW: SetHw = SetHw {
    vmid_mask_mmhub: 4,
    vmid_mask_gfxhub: 8,
    gds_size: 12,
    paging_vmid: 16,
    compute_hqd_mask: 20,
    gfx_hqd_mask: 52,
    sdma_hqd_mask: 60,
    aggregated_doorbells: 68,
    g_sch_ctx_gpu_mc_ptr: 88,
    query_status_fence_gpu_mc_ptr: 96,
    gc_base: 104,
    mmhub_base: 136,
    osssys_base: 168,
    api_status: 200,
    flags: 216,
    oversubscription_timer: 220,
    unmapped_doorbell_handling: None,
    disable_add_queue_wptr_mc_addr: Bits::new(8, 1),
};

/// `mes_v11_api_def.h`, packed to 4 bytes.
pub const V11: Layout = Layout {
    set_hw: SET_HW,
    set_hw_1_api_status: 4,
    set_hw_1_kiq_unmap_timeout: None,
    add: Add {
        process_id: 4,
        page_table_base_addr: 8,
        process_va_start: 16,
        process_va_end: 24,
        process_quantum: 32,
        process_context_addr: 40,
        gang_quantum: 48,
        gang_context_addr: 56,
        inprocess_gang_priority: 64,
        gang_global_priority_level: 68,
        doorbell_offset: 72,
        mqd_addr: 76,
        wptr_addr: 84,
        queue_type: 108,
        gds_size: 116,
        vm_context_cntl: 140,
        flags: 144,
        api_status: 148,
        pipe_id: 192,
        queue_id: 196,
    },
    remove: Remove {
        doorbell_offset: 4,
        gang_context_addr: 8,
        flags: 16,
        api_status: 20,
        pipe_id: 36,
        queue_id: 40,
        queue_type: 56,
    },
    reset: Reset {
        flags: 4,
        gang_context_addr: 8,
        doorbell_offset: 16,
        api_status: 96,
    },
    suspend: Suspend {
        flags: 4,
        gang_context_addr: 8,
        suspend_fence_addr: 16,
        suspend_fence_value: 24,
        api_status: 28,
    },
    resume: Resume {
        flags: 4,
        gang_context_addr: 8,
        api_status: 16,
    },
    query_api_status: 8,
};

/// `mes_v12_api_def.h`, packed to 8 bytes.
pub const V12: Layout = Layout {
    set_hw: SetHw {
        unmapped_doorbell_handling: Some(Bits::new(19, 2)),
        ..SET_HW
    },
    set_hw_1_api_status: 8,
    set_hw_1_kiq_unmap_timeout: Some(52),
    add: Add {
        process_id: 4,
        page_table_base_addr: 8,
        process_va_start: 16,
        process_va_end: 24,
        process_quantum: 32,
        process_context_addr: 40,
        gang_quantum: 48,
        gang_context_addr: 56,
        inprocess_gang_priority: 64,
        gang_global_priority_level: 68,
        doorbell_offset: 72,
        mqd_addr: 80,
        wptr_addr: 88,
        queue_type: 112,
        gds_size: 120,
        vm_context_cntl: 144,
        flags: 148,
        api_status: 152,
        pipe_id: 200,
        queue_id: 204,
    },
    remove: Remove {
        doorbell_offset: 4,
        gang_context_addr: 8,
        flags: 16,
        api_status: 24,
        pipe_id: 40,
        queue_id: 44,
        queue_type: 60,
    },
    reset: Reset {
        flags: 4,
        gang_context_addr: 8,
        doorbell_offset: 16,
        api_status: 112,
    },
    suspend: Suspend {
        flags: 4,
        gang_context_addr: 8,
        suspend_fence_addr: 16,
        suspend_fence_value: 24,
        api_status: 32,
    },
    resume: Resume {
        flags: 4,
        gang_context_addr: 8,
        api_status: 16,
    },
    query_api_status: 8,
};

/// A frame as bytes, read through a layout.
#[derive(Clone, Copy)]
pub struct FrameView<'a> {
    pub bytes: &'a [u8; FRAME_BYTES],
}

impl core::fmt::Debug for FrameView<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FrameView")
            .field("header", &self.header())
            .finish_non_exhaustive()
    }
}

impl<'a> FrameView<'a> {
    pub fn new(bytes: &'a [u8; FRAME_BYTES]) -> Self {
        FrameView { bytes }
    }
    pub fn header(&self) -> u32 {
        le32(self.bytes, 0)
    }
    pub fn u32(&self, at: usize) -> u32 {
        le32(self.bytes, at)
    }
    pub fn u64(&self, at: usize) -> u64 {
        le64(self.bytes, at)
    }
    /// `n` consecutive dwords from byte `at`.
    pub fn u32s<const N: usize>(&self, at: usize) -> [u32; N] {
        let mut out = [0u32; N];
        for (i, o) in out.iter_mut().enumerate() {
            *o = le32(self.bytes, at + 4 * i);
        }
        out
    }
    /// The frame's `api_status` (fence address, value) at byte `at`.
    pub fn api_status(&self, at: usize) -> (u64, u64) {
        (self.u64(at), self.u64(at + 8))
    }
}

const H11: &str = "mes_v11_api_def.h";
const H12: &str = "mes_v12_api_def.h";

/// A C expression that sets `field` of a zeroed `union ty` to all ones
/// and yields `byte offset of the dword it lands in << 32 | that dword`.
macro_rules! bit_probe {
    ($ty:literal, $field:literal) => {
        concat!(
            "({ union ",
            $ty,
            " f_ = {0}; unsigned i_ = 0; f_.",
            $field,
            " = ~0u; while (i_ < 63 && !f_.max_dwords_in_api[i_]) i_++; ",
            "((unsigned long long)i_ * 4) << 32 | f_.max_dwords_in_api[i_]; })"
        )
    };
}

const fn flag(h: &'static str, probe: &'static str, dword: usize, bits: Bits) -> Fact {
    Fact::constant(h, probe, (dword as u64) << 32 | bits.mask() as u64)
}

macro_rules! layout_facts {
    ($h:expr, $l:expr) => {
        [
            Fact::constant($h, "API_FRAME_SIZE_IN_DWORDS", FRAME_DWORDS as u64),
            Fact::constant($h, "MES_API_TYPE_SCHEDULER", API_TYPE_SCHEDULER as u64),
            Fact::constant(
                $h,
                "({ union MES_API_HEADER h_ = {0}; h_.type = ~0u; h_.u32All; })",
                HEADER_TYPE.mask() as u64,
            ),
            Fact::constant(
                $h,
                "({ union MES_API_HEADER h_ = {0}; h_.opcode = ~0u; h_.u32All; })",
                HEADER_OPCODE.mask() as u64,
            ),
            Fact::constant(
                $h,
                "({ union MES_API_HEADER h_ = {0}; h_.dwsize = ~0u; h_.u32All; })",
                HEADER_DWSIZE.mask() as u64,
            ),
            Fact::constant($h, "MES_SCH_API_SET_HW_RSRC", opcode::SET_HW_RSRC as u64),
            Fact::constant($h, "MES_SCH_API_ADD_QUEUE", opcode::ADD_QUEUE as u64),
            Fact::constant($h, "MES_SCH_API_REMOVE_QUEUE", opcode::REMOVE_QUEUE as u64),
            Fact::constant($h, "MES_SCH_API_SUSPEND", opcode::SUSPEND as u64),
            Fact::constant($h, "MES_SCH_API_RESUME", opcode::RESUME as u64),
            Fact::constant(
                $h,
                "MES_SCH_API_QUERY_SCHEDULER_STATUS",
                opcode::QUERY_SCHEDULER_STATUS as u64,
            ),
            Fact::constant(
                $h,
                "MES_SCH_API_SET_HW_RSRC_1",
                opcode::SET_HW_RSRC_1 as u64,
            ),
            Fact::constant($h, "MES_QUEUE_TYPE_GFX", queue_type::GFX as u64),
            Fact::constant($h, "MES_QUEUE_TYPE_COMPUTE", queue_type::COMPUTE as u64),
            Fact::constant($h, "MES_QUEUE_TYPE_SDMA", queue_type::SDMA as u64),
            Fact::constant($h, "AMD_PRIORITY_NUM_LEVELS", PRIORITY_LEVELS as u64),
            Fact::constant($h, "MAX_COMPUTE_PIPES", COMPUTE_PIPES as u64),
            Fact::constant($h, "MAX_GFX_PIPES", GFX_PIPES as u64),
            Fact::constant($h, "MAX_SDMA_PIPES", SDMA_PIPES as u64),
            Fact::constant($h, "MES_MAX_HWIP_SEGMENT", HWIP_SEGMENTS as u64),
            Fact::offset($h, "struct MES_API_STATUS", "api_completion_fence_value", 8),
            // SET_HW_RSRC
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "vmid_mask_mmhub",
                $l.set_hw.vmid_mask_mmhub,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "vmid_mask_gfxhub",
                $l.set_hw.vmid_mask_gfxhub,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "gds_size",
                $l.set_hw.gds_size,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "paging_vmid",
                $l.set_hw.paging_vmid,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "compute_hqd_mask",
                $l.set_hw.compute_hqd_mask,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "gfx_hqd_mask",
                $l.set_hw.gfx_hqd_mask,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "sdma_hqd_mask",
                $l.set_hw.sdma_hqd_mask,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "aggregated_doorbells",
                $l.set_hw.aggregated_doorbells,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "g_sch_ctx_gpu_mc_ptr",
                $l.set_hw.g_sch_ctx_gpu_mc_ptr,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "query_status_fence_gpu_mc_ptr",
                $l.set_hw.query_status_fence_gpu_mc_ptr,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "gc_base",
                $l.set_hw.gc_base,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "mmhub_base",
                $l.set_hw.mmhub_base,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "osssys_base",
                $l.set_hw.osssys_base,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "api_status",
                $l.set_hw.api_status,
            ),
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES",
                "oversubscription_timer",
                $l.set_hw.oversubscription_timer,
            ),
            flag(
                $h,
                bit_probe!("MESAPI_SET_HW_RESOURCES", "disable_add_queue_wptr_mc_addr"),
                $l.set_hw.flags,
                $l.set_hw.disable_add_queue_wptr_mc_addr,
            ),
            // SET_HW_RSRC_1
            Fact::offset(
                $h,
                "union MESAPI_SET_HW_RESOURCES_1",
                "api_status",
                $l.set_hw_1_api_status,
            ),
            // ADD_QUEUE
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "process_id",
                $l.add.process_id,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "page_table_base_addr",
                $l.add.page_table_base_addr,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "process_va_start",
                $l.add.process_va_start,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "process_va_end",
                $l.add.process_va_end,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "process_quantum",
                $l.add.process_quantum,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "process_context_addr",
                $l.add.process_context_addr,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "gang_quantum",
                $l.add.gang_quantum,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "gang_context_addr",
                $l.add.gang_context_addr,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "inprocess_gang_priority",
                $l.add.inprocess_gang_priority,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "gang_global_priority_level",
                $l.add.gang_global_priority_level,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "doorbell_offset",
                $l.add.doorbell_offset,
            ),
            Fact::offset($h, "union MESAPI__ADD_QUEUE", "mqd_addr", $l.add.mqd_addr),
            Fact::offset($h, "union MESAPI__ADD_QUEUE", "wptr_addr", $l.add.wptr_addr),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "queue_type",
                $l.add.queue_type,
            ),
            Fact::offset($h, "union MESAPI__ADD_QUEUE", "gds_size", $l.add.gds_size),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "vm_context_cntl",
                $l.add.vm_context_cntl,
            ),
            Fact::offset(
                $h,
                "union MESAPI__ADD_QUEUE",
                "api_status",
                $l.add.api_status,
            ),
            Fact::offset($h, "union MESAPI__ADD_QUEUE", "pipe_id", $l.add.pipe_id),
            Fact::offset($h, "union MESAPI__ADD_QUEUE", "queue_id", $l.add.queue_id),
            flag(
                $h,
                bit_probe!("MESAPI__ADD_QUEUE", "paging"),
                $l.add.flags,
                add_flags::PAGING,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__ADD_QUEUE", "program_gds"),
                $l.add.flags,
                add_flags::PROGRAM_GDS,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__ADD_QUEUE", "is_gang_suspended"),
                $l.add.flags,
                add_flags::IS_GANG_SUSPENDED,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__ADD_QUEUE", "is_tmz_queue"),
                $l.add.flags,
                add_flags::IS_TMZ_QUEUE,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__ADD_QUEUE", "map_kiq_utility_queue"),
                $l.add.flags,
                add_flags::MAP_KIQ_UTILITY_QUEUE,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__ADD_QUEUE", "is_kfd_process"),
                $l.add.flags,
                add_flags::IS_KFD_PROCESS,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__ADD_QUEUE", "is_aql_queue"),
                $l.add.flags,
                add_flags::IS_AQL_QUEUE,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__ADD_QUEUE", "map_legacy_kq"),
                $l.add.flags,
                add_flags::MAP_LEGACY_KQ,
            ),
            // REMOVE_QUEUE
            Fact::offset(
                $h,
                "union MESAPI__REMOVE_QUEUE",
                "doorbell_offset",
                $l.remove.doorbell_offset,
            ),
            Fact::offset(
                $h,
                "union MESAPI__REMOVE_QUEUE",
                "gang_context_addr",
                $l.remove.gang_context_addr,
            ),
            Fact::offset(
                $h,
                "union MESAPI__REMOVE_QUEUE",
                "api_status",
                $l.remove.api_status,
            ),
            Fact::offset(
                $h,
                "union MESAPI__REMOVE_QUEUE",
                "pipe_id",
                $l.remove.pipe_id,
            ),
            Fact::offset(
                $h,
                "union MESAPI__REMOVE_QUEUE",
                "queue_id",
                $l.remove.queue_id,
            ),
            Fact::offset(
                $h,
                "union MESAPI__REMOVE_QUEUE",
                "queue_type",
                $l.remove.queue_type,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__REMOVE_QUEUE", "unmap_kiq_utility_queue"),
                $l.remove.flags,
                remove_flags::UNMAP_KIQ_UTILITY_QUEUE,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__REMOVE_QUEUE", "preempt_legacy_gfx_queue"),
                $l.remove.flags,
                remove_flags::PREEMPT_LEGACY_GFX_QUEUE,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__REMOVE_QUEUE", "unmap_legacy_queue"),
                $l.remove.flags,
                remove_flags::UNMAP_LEGACY_QUEUE,
            ),
            // RESET
            Fact::constant($h, "MES_SCH_API_RESET", opcode::RESET as u64),
            Fact::offset(
                $h,
                "union MESAPI__RESET",
                "gang_context_addr",
                $l.reset.gang_context_addr,
            ),
            Fact::offset(
                $h,
                "union MESAPI__RESET",
                "doorbell_offset",
                $l.reset.doorbell_offset,
            ),
            Fact::offset($h, "union MESAPI__RESET", "api_status", $l.reset.api_status),
            flag(
                $h,
                bit_probe!("MESAPI__RESET", "reset_queue_only"),
                $l.reset.flags,
                reset_flags::RESET_QUEUE_ONLY,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__RESET", "hang_detect_then_reset"),
                $l.reset.flags,
                reset_flags::HANG_DETECT_THEN_RESET,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__RESET", "hang_detect_only"),
                $l.reset.flags,
                reset_flags::HANG_DETECT_ONLY,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__RESET", "reset_legacy_gfx"),
                $l.reset.flags,
                reset_flags::RESET_LEGACY_GFX,
            ),
            // SUSPEND / RESUME
            Fact::offset(
                $h,
                "union MESAPI__SUSPEND",
                "gang_context_addr",
                $l.suspend.gang_context_addr,
            ),
            Fact::offset(
                $h,
                "union MESAPI__SUSPEND",
                "suspend_fence_addr",
                $l.suspend.suspend_fence_addr,
            ),
            Fact::offset(
                $h,
                "union MESAPI__SUSPEND",
                "suspend_fence_value",
                $l.suspend.suspend_fence_value,
            ),
            Fact::offset(
                $h,
                "union MESAPI__SUSPEND",
                "api_status",
                $l.suspend.api_status,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__SUSPEND", "suspend_all_gangs"),
                $l.suspend.flags,
                ALL_GANGS,
            ),
            Fact::offset(
                $h,
                "union MESAPI__RESUME",
                "gang_context_addr",
                $l.resume.gang_context_addr,
            ),
            Fact::offset(
                $h,
                "union MESAPI__RESUME",
                "api_status",
                $l.resume.api_status,
            ),
            flag(
                $h,
                bit_probe!("MESAPI__RESUME", "resume_all_gangs"),
                $l.resume.flags,
                ALL_GANGS,
            ),
            // QUERY_SCHEDULER_STATUS
            Fact::offset(
                $h,
                "union MESAPI__QUERY_MES_STATUS",
                "api_status",
                $l.query_api_status,
            ),
        ]
    };
}

/// The v12-only values: SCHQ, SET_HW_RSRC's unmapped-doorbell field,
/// SET_HW_RSRC_1's KIQ unmap timeout, and the `MES_ERR_CODE` encoding.
const V12_ONLY: [Fact; 8] = [
    Fact::constant(H12, "MES_QUEUE_TYPE_SCHQ", queue_type::SCHQ as u64),
    Fact::constant(
        H12,
        bit_probe!("MESAPI_SET_HW_RESOURCES", "unmapped_doorbell_handling"),
        (SET_HW.flags as u64) << 32 | Bits::new(19, 2).mask() as u64,
    ),
    Fact::offset(
        H12,
        "union MESAPI_SET_HW_RESOURCES_1",
        "mes_kiq_unmap_timeout",
        52,
    ),
    Fact::constant(
        H12,
        "MES_SCH_ERROR_CODE_HEADER_SHIFT_12",
        v12_error::HEADER_SHIFT as u64,
    ),
    Fact::constant(
        H12,
        "MES_SCH_ERROR_CODE_MISC_OP_SHIFT_12",
        v12_error::MISC_OP_SHIFT as u64,
    ),
    Fact::constant(
        H12,
        "MES_ERROR_CATEGORY_SHIFT_12",
        v12_error::CATEGORY_SHIFT as u64,
    ),
    Fact::constant(
        H12,
        "MES_API_STATUS_ERROR_SHIFT_12",
        v12_error::STATUS_ERROR_SHIFT as u64,
    ),
    Fact::constant(H12, "MES_ERROR_API", v12_error::CATEGORY_API as u64),
];

/// Both layouts against their headers.
/// MISC (`union MESAPI__MISC`, `mes_v11_0_misc_op()`): its sub-opcode
/// (`enum MESAPI_MISC_OPCODE`), status, and the register operations'
/// arguments (`struct WRITE_REG`, `READ_REG`, `WAIT_REG_MEM`), v11's
/// layout (packed to 4 bytes).
pub mod misc {
    use barebell_facts::Fact;
    pub const WRITE_REG: u32 = 0;
    pub const READ_REG: u32 = 3;
    pub const WAIT_REG_MEM: u32 = 4;
    pub const SET_SHADER_DEBUGGER: u32 = 5;
    /// `enum WRM_OPERATION`: wait on `reg_offset1`; or write `reference`
    /// to `reg_offset1`, then wait on `reg_offset2`.
    pub const WRM_WAIT: u32 = 0;
    pub const WRM_WRITE_WAIT: u32 = 1;
    pub const OPCODE: usize = 4;
    pub const API_STATUS: usize = 8;
    pub const WRM_OP: usize = 24;
    pub const WRM_REFERENCE: usize = 28;
    pub const WRM_MASK: usize = 32;
    pub const WRM_REG1: usize = 36;
    pub const WRM_REG2: usize = 40;
    pub const WRITE_OFFSET: usize = 24;
    pub const WRITE_VALUE: usize = 28;
    pub const READ_OFFSET: usize = 24;
    pub const READ_BUFFER: usize = 28;
    /// `struct SET_SHADER_DEBUGGER`: the process context it applies to.
    pub const SSD_PROCESS_CONTEXT: usize = 24;

    const H: &str = super::H11;
    const T: &str = "union MESAPI__MISC";
    pub const FACTS: [Fact; 19] = [
        Fact::constant(H, "MES_SCH_API_MISC", super::opcode::MISC as u64),
        Fact::constant(H, "MESAPI_MISC__WRITE_REG", WRITE_REG as u64),
        Fact::constant(H, "MESAPI_MISC__READ_REG", READ_REG as u64),
        Fact::constant(H, "MESAPI_MISC__WAIT_REG_MEM", WAIT_REG_MEM as u64),
        Fact::constant(H, "WRM_OPERATION__WAIT_REG_MEM", WRM_WAIT as u64),
        Fact::constant(H, "WRM_OPERATION__WR_WAIT_WR_REG", WRM_WRITE_WAIT as u64),
        Fact::offset(H, T, "opcode", OPCODE),
        Fact::offset(H, T, "api_status", API_STATUS),
        Fact::offset(H, T, "wait_reg_mem.op", WRM_OP),
        Fact::offset(H, T, "wait_reg_mem.reference", WRM_REFERENCE),
        Fact::offset(H, T, "wait_reg_mem.mask", WRM_MASK),
        Fact::offset(H, T, "wait_reg_mem.reg_offset1", WRM_REG1),
        Fact::offset(H, T, "wait_reg_mem.reg_offset2", WRM_REG2),
        Fact::offset(H, T, "write_reg.reg_offset", WRITE_OFFSET),
        Fact::offset(H, T, "write_reg.reg_value", WRITE_VALUE),
        Fact::offset(H, T, "read_reg.reg_offset", READ_OFFSET),
        Fact::offset(H, T, "read_reg.buffer_addr", READ_BUFFER),
        Fact::constant(
            H,
            "MESAPI_MISC__SET_SHADER_DEBUGGER",
            SET_SHADER_DEBUGGER as u64,
        ),
        Fact::offset(
            H,
            T,
            "set_shader_debugger.process_context_addr",
            SSD_PROCESS_CONTEXT,
        ),
    ];
}

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(H11, V11),
    layout_facts!(H12, V12),
    V12_ONLY,
    misc::FACTS
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The two layouts agree up to ADD_QUEUE's first 64-bit field after
    /// an odd dword count, and differ from there by v12's padding.
    #[test]
    fn v12_pads_after_doorbell_offset() {
        assert_eq!(V11.add.doorbell_offset, V12.add.doorbell_offset);
        assert_eq!(V11.add.mqd_addr, 76);
        assert_eq!(V12.add.mqd_addr, 80);
        assert_eq!(
            V12.set_hw.unmapped_doorbell_handling.map(Bits::mask),
            Some(3 << 19)
        );
        assert!(V11.set_hw.unmapped_doorbell_handling.is_none());
    }
}
