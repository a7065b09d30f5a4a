//! MES v12 (gfx12) scheduler frames, `#pragma pack(8)`.
//!
//! Laid out from Linux 6.12 `mes_v12_api_def.h`. Compared with v11 the
//! 64-bit fields are 8-aligned (see the `_pad` fields), several frames
//! gained trailing fields, the MISC sub-opcodes were renumbered
//! (`QUERY_HUNG_ENGINE_ID` was inserted) and a failed API reports an
//! error code in the fence value, decoded by [`decode_status`].

use super::{ApiStatus, FRAME_BYTES, Frame, Le32, Le64};
use barebell_facts::Fact;
use bitfield_struct::bitfield;
use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

/// `enum MES_SCH_API_OPCODE`.
pub mod opcode {
    pub const SET_HW_RSRC: u8 = 0;
    pub const SET_SCHEDULING_CONFIG: u8 = 1;
    pub const ADD_QUEUE: u8 = 2;
    pub const REMOVE_QUEUE: u8 = 3;
    pub const PERFORM_YIELD: u8 = 4;
    pub const SET_GANG_PRIORITY_LEVEL: u8 = 5;
    pub const SUSPEND: u8 = 6;
    pub const RESUME: u8 = 7;
    pub const RESET: u8 = 8;
    pub const SET_LOG_BUFFER: u8 = 9;
    pub const CHANGE_GANG_PRORITY: u8 = 10;
    pub const QUERY_SCHEDULER_STATUS: u8 = 11;
    pub const SET_DEBUG_VMID: u8 = 13;
    pub const MISC: u8 = 14;
    pub const UPDATE_ROOT_PAGE_TABLE: u8 = 15;
    pub const AMD_LOG: u8 = 16;
    pub const SET_SE_MODE: u8 = 17;
    pub const SET_GANG_SUBMIT: u8 = 18;
    pub const SET_HW_RSRC_1: u8 = 19;
}

/// `enum MESAPI_MISC_OPCODE`: the sub-operation of a [`Misc`] frame.
pub mod misc_opcode {
    pub const WRITE_REG: u32 = 0;
    pub const INV_GART: u32 = 1;
    pub const QUERY_STATUS: u32 = 2;
    pub const READ_REG: u32 = 3;
    pub const WAIT_REG_MEM: u32 = 4;
    pub const SET_SHADER_DEBUGGER: u32 = 5;
    pub const NOTIFY_WORK_ON_UNMAPPED_QUEUE: u32 = 6;
    pub const NOTIFY_TO_UNMAP_PROCESSES: u32 = 7;
    pub const QUERY_HUNG_ENGINE_ID: u32 = 8;
    pub const CHANGE_CONFIG: u32 = 9;
    pub const LAUNCH_CLEANER_SHADER: u32 = 10;
    pub const SETUP_MES_DBGEXT: u32 = 11;
}

/// `enum MES_QUEUE_TYPE`.
pub mod queue_type {
    pub const GFX: u32 = 0;
    pub const COMPUTE: u32 = 1;
    pub const SDMA: u32 = 2;
}

/// `enum MES_AMD_PRIORITY_LEVEL`.
pub mod priority {
    pub const LOW: u32 = 0;
    pub const NORMAL: u32 = 1;
    pub const MEDIUM: u32 = 2;
    pub const HIGH: u32 = 3;
    pub const REALTIME: u32 = 4;
}

/// Bit positions in the upper 32 bits of a failed v12 fence value
/// (`MES_SCH_ERROR_CODE_HEADER_SHIFT_12` and friends).
pub const ERROR_CODE_HEADER_SHIFT: u32 = 8;
pub const ERROR_CODE_MISC_OP_SHIFT: u32 = 16;
pub const ERROR_CATEGORY_SHIFT: u32 = 24;
pub const STATUS_ERROR_SHIFT: u32 = 31;

/// `enum MES_ERROR_CATEGORY_CODE_12`.
pub mod error_category {
    pub const API: u8 = 1;
    pub const SCHEDULING: u8 = 2;
    pub const UNKNOWN: u8 = 3;
}

/// What MES v12 wrote to a frame's completion fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The API succeeded: the value is the fence value the driver asked for.
    Done(u64),
    /// The API failed: lower 32 bits zero, upper 32 bits as `MES_ERR_CODE`.
    Failed {
        api_error: u8,
        opcode: u8,
        misc_opcode: u8,
        category: u8,
    },
}

/// Decodes a v12 completion-fence value (see the comment above
/// `MES_ERR_CODE` in `mes_v12_api_def.h`).
pub const fn decode_status(value: u64) -> Status {
    let hi = (value >> 32) as u32;
    if hi >> STATUS_ERROR_SHIFT & 1 == 0 {
        return Status::Done(value);
    }
    Status::Failed {
        api_error: hi as u8,
        opcode: (hi >> ERROR_CODE_HEADER_SHIFT) as u8,
        misc_opcode: (hi >> ERROR_CODE_MISC_OP_SHIFT) as u8,
        category: ((hi >> ERROR_CATEGORY_SHIFT) & 0x7f) as u8,
    }
}

/// A flags word of the frames below (C bitfields, LSB first).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct SetHwResourcesFlags {
    pub disable_reset: bool,
    pub use_different_vmid_compute: bool,
    pub disable_mes_log: bool,
    pub apply_mmhub_pgvm_invalidate_ack_loss_wa: bool,
    pub apply_grbm_remote_register_dummy_read_wa: bool,
    pub second_gfx_pipe_enabled: bool,
    pub enable_level_process_quantum_check: bool,
    pub legacy_sch_mode: bool,
    pub disable_add_queue_wptr_mc_addr: bool,
    pub enable_mes_event_int_logging: bool,
    pub enable_reg_active_poll: bool,
    pub use_disable_queue_in_legacy_uq_preemption: bool,
    pub send_write_data: bool,
    pub os_tdr_timeout_override: bool,
    pub use_rs64mem_for_proc_gang_ctx: bool,
    pub halt_on_misaligned_access: bool,
    pub use_add_queue_unmap_flag_addr: bool,
    pub enable_mes_sch_stb_log: bool,
    pub limit_single_process: bool,
    #[bits(2)]
    pub unmapped_doorbell_handling: u8,
    pub enable_mes_fence_int: bool,
    pub enable_lr_compute_wa: bool,
    #[bits(9)]
    __: u32,
}

/// A flags word of the frames below (C bitfields, LSB first).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct SetHwResources1Flags {
    pub enable_mes_debug_ctx: bool,
    #[bits(31)]
    __: u32,
}

/// A flags word of the frames below (C bitfields, LSB first).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct AddQueueFlags {
    pub paging: bool,
    #[bits(4)]
    pub debug_vmid: u8,
    pub program_gds: bool,
    pub is_gang_suspended: bool,
    pub is_tmz_queue: bool,
    pub map_kiq_utility_queue: bool,
    pub is_kfd_process: bool,
    pub trap_en: bool,
    pub is_aql_queue: bool,
    pub skip_process_ctx_clear: bool,
    pub map_legacy_kq: bool,
    pub exclusively_scheduled: bool,
    pub is_long_running: bool,
    pub is_dwm_queue: bool,
    #[bits(15)]
    __: u32,
}

/// A flags word of the frames below (C bitfields, LSB first).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct RemoveQueueFlags {
    #[bits(1)]
    __r0: u8,
    pub unmap_kiq_utility_queue: bool,
    pub preempt_legacy_gfx_queue: bool,
    pub unmap_legacy_queue: bool,
    #[bits(28)]
    __: u32,
}

/// A flags word of the frames below (C bitfields, LSB first).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct SuspendFlags {
    pub suspend_all_gangs: bool,
    #[bits(31)]
    __: u32,
}

/// A flags word of the frames below (C bitfields, LSB first).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct ResumeFlags {
    pub resume_all_gangs: bool,
    #[bits(31)]
    __: u32,
}

/// `struct WRITE_REG` (a [`Misc`] payload).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct WriteReg {
    pub reg_offset: Le32,
    pub reg_value: Le32,
}
const _: () = assert!(core::mem::size_of::<WriteReg>() == 8);

const _: () = assert!(core::mem::offset_of!(WriteReg, reg_offset) == 0);
const _: () = assert!(core::mem::offset_of!(WriteReg, reg_value) == 4);

/// `struct READ_REG` (a [`Misc`] payload).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ReadReg {
    pub reg_offset: Le32,
    _pad0: [u8; 4],
    pub buffer_addr: Le64,
    pub option: Le32,
    _pad1: [u8; 4],
}
const _: () = assert!(core::mem::size_of::<ReadReg>() == 24);

const _: () = assert!(core::mem::offset_of!(ReadReg, reg_offset) == 0);
const _: () = assert!(core::mem::offset_of!(ReadReg, buffer_addr) == 8);
const _: () = assert!(core::mem::offset_of!(ReadReg, option) == 16);

/// `struct INV_GART` (a [`Misc`] payload).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct InvGart {
    pub inv_range_va_start: Le64,
    pub inv_range_size: Le64,
}
const _: () = assert!(core::mem::size_of::<InvGart>() == 16);

const _: () = assert!(core::mem::offset_of!(InvGart, inv_range_va_start) == 0);
const _: () = assert!(core::mem::offset_of!(InvGart, inv_range_size) == 8);

/// `struct QUERY_STATUS` (a [`Misc`] payload).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct QueryStatus {
    pub context_id: Le32,
}
const _: () = assert!(core::mem::size_of::<QueryStatus>() == 4);

const _: () = assert!(core::mem::offset_of!(QueryStatus, context_id) == 0);

/// `struct WAIT_REG_MEM` (a [`Misc`] payload).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct WaitRegMem {
    pub op: Le32,
    pub reference: Le32,
    pub mask: Le32,
    pub reg_offset1: Le32,
    pub reg_offset2: Le32,
}
const _: () = assert!(core::mem::size_of::<WaitRegMem>() == 20);

const _: () = assert!(core::mem::offset_of!(WaitRegMem, op) == 0);
const _: () = assert!(core::mem::offset_of!(WaitRegMem, reference) == 4);
const _: () = assert!(core::mem::offset_of!(WaitRegMem, mask) == 8);
const _: () = assert!(core::mem::offset_of!(WaitRegMem, reg_offset1) == 12);
const _: () = assert!(core::mem::offset_of!(WaitRegMem, reg_offset2) == 16);

/// `union MESAPI_SET_HW_RESOURCES`: the `MES_SCH_API_SET_HW_RSRC` frame.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SetHwResources {
    pub header: Le32,
    pub vmid_mask_mmhub: Le32,
    pub vmid_mask_gfxhub: Le32,
    pub gds_size: Le32,
    pub paging_vmid: Le32,
    pub compute_hqd_mask: [Le32; 8],
    pub gfx_hqd_mask: [Le32; 2],
    pub sdma_hqd_mask: [Le32; 2],
    pub aggregated_doorbells: [Le32; 5],
    pub g_sch_ctx_gpu_mc_ptr: Le64,
    pub query_status_fence_gpu_mc_ptr: Le64,
    pub gc_base: [Le32; 8],
    pub mmhub_base: [Le32; 8],
    pub osssys_base: [Le32; 8],
    pub api_status: ApiStatus,
    pub flags: Le32,
    pub oversubscription_timer: Le32,
    pub doorbell_info: Le64,
    pub event_intr_history_gpu_mc_ptr: Le64,
    pub timestamp: Le64,
    pub os_tdr_timeout_in_sec: Le32,
    _tail: [u8; 4],
}
const _: () = assert!(core::mem::size_of::<SetHwResources>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(SetHwResources, header) == 0);
const _: () = assert!(core::mem::offset_of!(SetHwResources, vmid_mask_mmhub) == 4);
const _: () = assert!(core::mem::offset_of!(SetHwResources, vmid_mask_gfxhub) == 8);
const _: () = assert!(core::mem::offset_of!(SetHwResources, gds_size) == 12);
const _: () = assert!(core::mem::offset_of!(SetHwResources, paging_vmid) == 16);
const _: () = assert!(core::mem::offset_of!(SetHwResources, compute_hqd_mask) == 20);
const _: () = assert!(core::mem::offset_of!(SetHwResources, gfx_hqd_mask) == 52);
const _: () = assert!(core::mem::offset_of!(SetHwResources, sdma_hqd_mask) == 60);
const _: () = assert!(core::mem::offset_of!(SetHwResources, aggregated_doorbells) == 68);
const _: () = assert!(core::mem::offset_of!(SetHwResources, g_sch_ctx_gpu_mc_ptr) == 88);
const _: () = assert!(core::mem::offset_of!(SetHwResources, query_status_fence_gpu_mc_ptr) == 96);
const _: () = assert!(core::mem::offset_of!(SetHwResources, gc_base) == 104);
const _: () = assert!(core::mem::offset_of!(SetHwResources, mmhub_base) == 136);
const _: () = assert!(core::mem::offset_of!(SetHwResources, osssys_base) == 168);
const _: () = assert!(core::mem::offset_of!(SetHwResources, api_status) == 200);
const _: () = assert!(core::mem::offset_of!(SetHwResources, flags) == 216);
const _: () = assert!(core::mem::offset_of!(SetHwResources, oversubscription_timer) == 220);
const _: () = assert!(core::mem::offset_of!(SetHwResources, doorbell_info) == 224);
const _: () = assert!(core::mem::offset_of!(SetHwResources, event_intr_history_gpu_mc_ptr) == 232);
const _: () = assert!(core::mem::offset_of!(SetHwResources, timestamp) == 240);
const _: () = assert!(core::mem::offset_of!(SetHwResources, os_tdr_timeout_in_sec) == 248);
impl Frame for SetHwResources {
    const OPCODE: u8 = opcode::SET_HW_RSRC;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

/// `union MESAPI_SET_HW_RESOURCES_1`: the `MES_SCH_API_SET_HW_RSRC_1` frame.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SetHwResources1 {
    pub header: Le32,
    _pad0: [u8; 4],
    pub api_status: ApiStatus,
    pub timestamp: Le64,
    pub flags: Le32,
    _pad1: [u8; 4],
    pub mes_debug_ctx_mc_addr: Le64,
    pub mes_debug_ctx_size: Le32,
    pub mes_kiq_unmap_timeout: Le32,
    pub reserved1: Le64,
    pub cleaner_shader_fence_mc_addr: Le64,
    _tail: [u8; 184],
}
const _: () = assert!(core::mem::size_of::<SetHwResources1>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, header) == 0);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, api_status) == 8);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, timestamp) == 24);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, flags) == 32);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, mes_debug_ctx_mc_addr) == 40);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, mes_debug_ctx_size) == 48);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, mes_kiq_unmap_timeout) == 52);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, reserved1) == 56);
const _: () = assert!(core::mem::offset_of!(SetHwResources1, cleaner_shader_fence_mc_addr) == 64);
impl Frame for SetHwResources1 {
    const OPCODE: u8 = opcode::SET_HW_RSRC_1;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

/// `union MESAPI__ADD_QUEUE`: the `MES_SCH_API_ADD_QUEUE` frame.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct AddQueue {
    pub header: Le32,
    pub process_id: Le32,
    pub page_table_base_addr: Le64,
    pub process_va_start: Le64,
    pub process_va_end: Le64,
    pub process_quantum: Le64,
    pub process_context_addr: Le64,
    pub gang_quantum: Le64,
    pub gang_context_addr: Le64,
    pub inprocess_gang_priority: Le32,
    pub gang_global_priority_level: Le32,
    pub doorbell_offset: Le32,
    _pad0: [u8; 4],
    pub mqd_addr: Le64,
    pub wptr_addr: Le64,
    pub h_context: Le64,
    pub h_queue: Le64,
    pub queue_type: Le32,
    pub gds_base: Le32,
    pub gds_size: Le32,
    pub gws_base: Le32,
    pub gws_size: Le32,
    pub oa_mask: Le32,
    pub trap_handler_addr: Le64,
    pub vm_context_cntl: Le32,
    pub flags: Le32,
    pub api_status: ApiStatus,
    pub tma_addr: Le64,
    pub sch_id: Le32,
    _pad1: [u8; 4],
    pub timestamp: Le64,
    pub process_context_array_index: Le32,
    pub gang_context_array_index: Le32,
    pub pipe_id: Le32,
    pub queue_id: Le32,
    pub alignment_mode_setting: Le32,
    _tail: [u8; 44],
}
const _: () = assert!(core::mem::size_of::<AddQueue>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(AddQueue, header) == 0);
const _: () = assert!(core::mem::offset_of!(AddQueue, process_id) == 4);
const _: () = assert!(core::mem::offset_of!(AddQueue, page_table_base_addr) == 8);
const _: () = assert!(core::mem::offset_of!(AddQueue, process_va_start) == 16);
const _: () = assert!(core::mem::offset_of!(AddQueue, process_va_end) == 24);
const _: () = assert!(core::mem::offset_of!(AddQueue, process_quantum) == 32);
const _: () = assert!(core::mem::offset_of!(AddQueue, process_context_addr) == 40);
const _: () = assert!(core::mem::offset_of!(AddQueue, gang_quantum) == 48);
const _: () = assert!(core::mem::offset_of!(AddQueue, gang_context_addr) == 56);
const _: () = assert!(core::mem::offset_of!(AddQueue, inprocess_gang_priority) == 64);
const _: () = assert!(core::mem::offset_of!(AddQueue, gang_global_priority_level) == 68);
const _: () = assert!(core::mem::offset_of!(AddQueue, doorbell_offset) == 72);
const _: () = assert!(core::mem::offset_of!(AddQueue, mqd_addr) == 80);
const _: () = assert!(core::mem::offset_of!(AddQueue, wptr_addr) == 88);
const _: () = assert!(core::mem::offset_of!(AddQueue, h_context) == 96);
const _: () = assert!(core::mem::offset_of!(AddQueue, h_queue) == 104);
const _: () = assert!(core::mem::offset_of!(AddQueue, queue_type) == 112);
const _: () = assert!(core::mem::offset_of!(AddQueue, gds_base) == 116);
const _: () = assert!(core::mem::offset_of!(AddQueue, gds_size) == 120);
const _: () = assert!(core::mem::offset_of!(AddQueue, gws_base) == 124);
const _: () = assert!(core::mem::offset_of!(AddQueue, gws_size) == 128);
const _: () = assert!(core::mem::offset_of!(AddQueue, oa_mask) == 132);
const _: () = assert!(core::mem::offset_of!(AddQueue, trap_handler_addr) == 136);
const _: () = assert!(core::mem::offset_of!(AddQueue, vm_context_cntl) == 144);
const _: () = assert!(core::mem::offset_of!(AddQueue, flags) == 148);
const _: () = assert!(core::mem::offset_of!(AddQueue, api_status) == 152);
const _: () = assert!(core::mem::offset_of!(AddQueue, tma_addr) == 168);
const _: () = assert!(core::mem::offset_of!(AddQueue, sch_id) == 176);
const _: () = assert!(core::mem::offset_of!(AddQueue, timestamp) == 184);
const _: () = assert!(core::mem::offset_of!(AddQueue, process_context_array_index) == 192);
const _: () = assert!(core::mem::offset_of!(AddQueue, gang_context_array_index) == 196);
const _: () = assert!(core::mem::offset_of!(AddQueue, pipe_id) == 200);
const _: () = assert!(core::mem::offset_of!(AddQueue, queue_id) == 204);
const _: () = assert!(core::mem::offset_of!(AddQueue, alignment_mode_setting) == 208);
impl Frame for AddQueue {
    const OPCODE: u8 = opcode::ADD_QUEUE;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

/// `union MESAPI__REMOVE_QUEUE`: the `MES_SCH_API_REMOVE_QUEUE` frame.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RemoveQueue {
    pub header: Le32,
    pub doorbell_offset: Le32,
    pub gang_context_addr: Le64,
    pub flags: Le32,
    _pad0: [u8; 4],
    pub api_status: ApiStatus,
    pub pipe_id: Le32,
    pub queue_id: Le32,
    pub tf_addr: Le64,
    pub tf_data: Le32,
    pub queue_type: Le32,
    pub timestamp: Le64,
    pub gang_context_array_index: Le32,
    _tail: [u8; 180],
}
const _: () = assert!(core::mem::size_of::<RemoveQueue>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, header) == 0);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, doorbell_offset) == 4);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, gang_context_addr) == 8);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, flags) == 16);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, api_status) == 24);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, pipe_id) == 40);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, queue_id) == 44);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, tf_addr) == 48);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, tf_data) == 56);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, queue_type) == 60);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, timestamp) == 64);
const _: () = assert!(core::mem::offset_of!(RemoveQueue, gang_context_array_index) == 72);
impl Frame for RemoveQueue {
    const OPCODE: u8 = opcode::REMOVE_QUEUE;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

/// `union MESAPI__RESET` flags (C bitfields, LSB first).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct ResetFlags {
    pub reset_queue_only: bool,
    pub hang_detect_then_reset: bool,
    pub hang_detect_only: bool,
    pub reset_legacy_gfx: bool,
    #[bits(28)]
    __: u32,
}

/// `union MESAPI__RESET`: the `MES_SCH_API_RESET` frame
/// (`mes_v12_0_reset_hw_queue()`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Reset {
    pub header: Le32,
    pub flags: Le32,
    pub gang_context_addr: Le64,
    pub doorbell_offset: Le32,
    _pad0: [u8; 4],
    pub doorbell_offset_addr: Le64,
    pub queue_type: Le32,
    pub pipe_id_lp: Le32,
    pub queue_id_lp: Le32,
    pub vmid_id_lp: Le32,
    pub mqd_mc_addr_lp: Le64,
    pub doorbell_offset_lp: Le32,
    _pad1: [u8; 4],
    pub wptr_addr_lp: Le64,
    pub pipe_id_hp: Le32,
    pub queue_id_hp: Le32,
    pub vmid_id_hp: Le32,
    _pad2: [u8; 4],
    pub mqd_mc_addr_hp: Le64,
    pub doorbell_offset_hp: Le32,
    _pad3: [u8; 4],
    pub wptr_addr_hp: Le64,
    pub api_status: ApiStatus,
    pub active_vmids: Le32,
    _pad4: [u8; 4],
    pub timestamp: Le64,
    pub gang_context_array_index: Le32,
    pub connected_queue_index: Le32,
    pub connected_queue_index_p1: Le32,
    _tail: [u8; 100],
}
const _: () = assert!(core::mem::size_of::<Reset>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(Reset, doorbell_offset) == 16);
const _: () = assert!(core::mem::offset_of!(Reset, api_status) == 112);
impl Frame for Reset {
    const OPCODE: u8 = opcode::RESET;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

/// `union MESAPI__SUSPEND`: the `MES_SCH_API_SUSPEND` frame.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Suspend {
    pub header: Le32,
    pub flags: Le32,
    pub gang_context_addr: Le64,
    pub suspend_fence_addr: Le64,
    pub suspend_fence_value: Le32,
    _pad0: [u8; 4],
    pub api_status: ApiStatus,
    pub sch_id: Le32,
    pub doorbell_offset: Le32,
    pub timestamp: Le64,
    pub legacy_uq_type: Le32,
    pub legacy_uq_priority_level: Le32,
    pub gang_context_array_index: Le32,
    _tail: [u8; 180],
}
const _: () = assert!(core::mem::size_of::<Suspend>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(Suspend, header) == 0);
const _: () = assert!(core::mem::offset_of!(Suspend, flags) == 4);
const _: () = assert!(core::mem::offset_of!(Suspend, gang_context_addr) == 8);
const _: () = assert!(core::mem::offset_of!(Suspend, suspend_fence_addr) == 16);
const _: () = assert!(core::mem::offset_of!(Suspend, suspend_fence_value) == 24);
const _: () = assert!(core::mem::offset_of!(Suspend, api_status) == 32);
const _: () = assert!(core::mem::offset_of!(Suspend, sch_id) == 48);
const _: () = assert!(core::mem::offset_of!(Suspend, doorbell_offset) == 52);
const _: () = assert!(core::mem::offset_of!(Suspend, timestamp) == 56);
const _: () = assert!(core::mem::offset_of!(Suspend, legacy_uq_type) == 64);
const _: () = assert!(core::mem::offset_of!(Suspend, legacy_uq_priority_level) == 68);
const _: () = assert!(core::mem::offset_of!(Suspend, gang_context_array_index) == 72);
impl Frame for Suspend {
    const OPCODE: u8 = opcode::SUSPEND;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

/// `union MESAPI__RESUME`: the `MES_SCH_API_RESUME` frame.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Resume {
    pub header: Le32,
    pub flags: Le32,
    pub gang_context_addr: Le64,
    pub api_status: ApiStatus,
    pub doorbell_offset: Le32,
    _pad0: [u8; 4],
    pub timestamp: Le64,
    pub gang_context_array_index: Le32,
    _tail: [u8; 204],
}
const _: () = assert!(core::mem::size_of::<Resume>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(Resume, header) == 0);
const _: () = assert!(core::mem::offset_of!(Resume, flags) == 4);
const _: () = assert!(core::mem::offset_of!(Resume, gang_context_addr) == 8);
const _: () = assert!(core::mem::offset_of!(Resume, api_status) == 16);
const _: () = assert!(core::mem::offset_of!(Resume, doorbell_offset) == 32);
const _: () = assert!(core::mem::offset_of!(Resume, timestamp) == 40);
const _: () = assert!(core::mem::offset_of!(Resume, gang_context_array_index) == 48);
impl Frame for Resume {
    const OPCODE: u8 = opcode::RESUME;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

/// `union MESAPI__QUERY_MES_STATUS`: the `MES_SCH_API_QUERY_SCHEDULER_STATUS` frame.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct QueryMesStatus {
    pub header: Le32,
    pub subopcode: Le32,
    pub api_status: ApiStatus,
    pub timestamp: Le64,
    pub data: [Le32; 20],
    _tail: [u8; 144],
}
const _: () = assert!(core::mem::size_of::<QueryMesStatus>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(QueryMesStatus, header) == 0);
const _: () = assert!(core::mem::offset_of!(QueryMesStatus, subopcode) == 4);
const _: () = assert!(core::mem::offset_of!(QueryMesStatus, api_status) == 8);
const _: () = assert!(core::mem::offset_of!(QueryMesStatus, timestamp) == 24);
const _: () = assert!(core::mem::offset_of!(QueryMesStatus, data) == 32);
impl Frame for QueryMesStatus {
    const OPCODE: u8 = opcode::QUERY_SCHEDULER_STATUS;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

/// `union MESAPI__MISC`: the `MES_SCH_API_MISC` frame.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Misc {
    pub header: Le32,
    pub opcode: Le32,
    pub api_status: ApiStatus,
    pub data: [Le32; 20],
    pub timestamp: Le64,
    pub doorbell_offset: Le32,
    pub os_fence: Le32,
    _tail: [u8; 136],
}
const _: () = assert!(core::mem::size_of::<Misc>() == FRAME_BYTES);
const _: () = assert!(core::mem::offset_of!(Misc, header) == 0);
const _: () = assert!(core::mem::offset_of!(Misc, opcode) == 4);
const _: () = assert!(core::mem::offset_of!(Misc, api_status) == 8);
const _: () = assert!(core::mem::offset_of!(Misc, data) == 24);
const _: () = assert!(core::mem::offset_of!(Misc, timestamp) == 104);
const _: () = assert!(core::mem::offset_of!(Misc, doorbell_offset) == 112);
const _: () = assert!(core::mem::offset_of!(Misc, os_fence) == 116);
impl Frame for Misc {
    const OPCODE: u8 = opcode::MISC;
    fn header_mut(&mut self) -> &mut Le32 {
        &mut self.header
    }
    fn api_status_mut(&mut self) -> &mut ApiStatus {
        &mut self.api_status
    }
}

impl Misc {
    /// A MISC frame carrying sub-operation `op` (a [`misc_opcode`]) with
    /// payload `p` at the start of its union (follows
    /// `mes_v12_0_misc_op()`).
    pub fn with_payload<T: IntoBytes + Immutable>(op: u32, p: &T) -> Self {
        let mut f = <Self as Frame>::new();
        f.opcode = Le32::new(op);
        let src = p.as_bytes();
        if let Some(dst) = f.data.as_mut_bytes().get_mut(..src.len()) {
            dst.copy_from_slice(src);
        }
        f
    }

    /// MISC/WRITE_REG: MES writes `value` to register dword `reg_offset`.
    pub fn write_reg(reg_offset: u32, value: u32) -> Self {
        let mut w = WriteReg::new_zeroed();
        w.reg_offset = Le32::new(reg_offset);
        w.reg_value = Le32::new(value);
        Self::with_payload(misc_opcode::WRITE_REG, &w)
    }

    /// MISC/READ_REG: MES copies register `reg_offset` to `buffer_addr`.
    pub fn read_reg(reg_offset: u32, buffer_addr: u64) -> Self {
        let mut r = ReadReg::new_zeroed();
        r.reg_offset = Le32::new(reg_offset);
        r.buffer_addr = Le64::new(buffer_addr);
        Self::with_payload(misc_opcode::READ_REG, &r)
    }
}

const H: &str = "mes_v12_api_def.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    super::header_facts(H),
    [Fact::size(
        H,
        "union MESAPI__RESET",
        core::mem::size_of::<Reset>()
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "header",
        core::mem::offset_of!(Reset, header)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "gang_context_addr",
        core::mem::offset_of!(Reset, gang_context_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "doorbell_offset",
        core::mem::offset_of!(Reset, doorbell_offset)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "doorbell_offset_addr",
        core::mem::offset_of!(Reset, doorbell_offset_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "queue_type",
        core::mem::offset_of!(Reset, queue_type)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "pipe_id_lp",
        core::mem::offset_of!(Reset, pipe_id_lp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "queue_id_lp",
        core::mem::offset_of!(Reset, queue_id_lp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "vmid_id_lp",
        core::mem::offset_of!(Reset, vmid_id_lp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "mqd_mc_addr_lp",
        core::mem::offset_of!(Reset, mqd_mc_addr_lp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "doorbell_offset_lp",
        core::mem::offset_of!(Reset, doorbell_offset_lp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "wptr_addr_lp",
        core::mem::offset_of!(Reset, wptr_addr_lp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "pipe_id_hp",
        core::mem::offset_of!(Reset, pipe_id_hp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "queue_id_hp",
        core::mem::offset_of!(Reset, queue_id_hp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "vmid_id_hp",
        core::mem::offset_of!(Reset, vmid_id_hp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "mqd_mc_addr_hp",
        core::mem::offset_of!(Reset, mqd_mc_addr_hp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "doorbell_offset_hp",
        core::mem::offset_of!(Reset, doorbell_offset_hp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "wptr_addr_hp",
        core::mem::offset_of!(Reset, wptr_addr_hp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "api_status",
        core::mem::offset_of!(Reset, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "active_vmids",
        core::mem::offset_of!(Reset, active_vmids)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "timestamp",
        core::mem::offset_of!(Reset, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "gang_context_array_index",
        core::mem::offset_of!(Reset, gang_context_array_index)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "connected_queue_index",
        core::mem::offset_of!(Reset, connected_queue_index)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESET",
        "connected_queue_index_p1",
        core::mem::offset_of!(Reset, connected_queue_index_p1)
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__RESET r_ = {0}; r_.reset_queue_only = ~0u; r_.max_dwords_in_api[1]; })",
        ResetFlags::new().with_reset_queue_only(true).into_bits() as u64
    )],
    [Fact::size(
        H,
        "struct WRITE_REG",
        core::mem::size_of::<WriteReg>()
    )],
    [Fact::offset(
        H,
        "struct WRITE_REG",
        "reg_offset",
        core::mem::offset_of!(WriteReg, reg_offset)
    )],
    [Fact::offset(
        H,
        "struct WRITE_REG",
        "reg_value",
        core::mem::offset_of!(WriteReg, reg_value)
    )],
    [Fact::size(
        H,
        "struct READ_REG",
        core::mem::size_of::<ReadReg>()
    )],
    [Fact::offset(
        H,
        "struct READ_REG",
        "reg_offset",
        core::mem::offset_of!(ReadReg, reg_offset)
    )],
    [Fact::offset(
        H,
        "struct READ_REG",
        "buffer_addr",
        core::mem::offset_of!(ReadReg, buffer_addr)
    )],
    [Fact::offset(
        H,
        "struct READ_REG",
        "option.all",
        core::mem::offset_of!(ReadReg, option)
    )],
    [Fact::size(
        H,
        "struct INV_GART",
        core::mem::size_of::<InvGart>()
    )],
    [Fact::offset(
        H,
        "struct INV_GART",
        "inv_range_va_start",
        core::mem::offset_of!(InvGart, inv_range_va_start)
    )],
    [Fact::offset(
        H,
        "struct INV_GART",
        "inv_range_size",
        core::mem::offset_of!(InvGart, inv_range_size)
    )],
    [Fact::size(
        H,
        "struct QUERY_STATUS",
        core::mem::size_of::<QueryStatus>()
    )],
    [Fact::offset(
        H,
        "struct QUERY_STATUS",
        "context_id",
        core::mem::offset_of!(QueryStatus, context_id)
    )],
    [Fact::size(
        H,
        "struct WAIT_REG_MEM",
        core::mem::size_of::<WaitRegMem>()
    )],
    [Fact::offset(
        H,
        "struct WAIT_REG_MEM",
        "op",
        core::mem::offset_of!(WaitRegMem, op)
    )],
    [Fact::offset(
        H,
        "struct WAIT_REG_MEM",
        "reference",
        core::mem::offset_of!(WaitRegMem, reference)
    )],
    [Fact::offset(
        H,
        "struct WAIT_REG_MEM",
        "mask",
        core::mem::offset_of!(WaitRegMem, mask)
    )],
    [Fact::offset(
        H,
        "struct WAIT_REG_MEM",
        "reg_offset1",
        core::mem::offset_of!(WaitRegMem, reg_offset1)
    )],
    [Fact::offset(
        H,
        "struct WAIT_REG_MEM",
        "reg_offset2",
        core::mem::offset_of!(WaitRegMem, reg_offset2)
    )],
    [Fact::size(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        core::mem::size_of::<SetHwResources>()
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "header",
        core::mem::offset_of!(SetHwResources, header)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "vmid_mask_mmhub",
        core::mem::offset_of!(SetHwResources, vmid_mask_mmhub)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "vmid_mask_gfxhub",
        core::mem::offset_of!(SetHwResources, vmid_mask_gfxhub)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "gds_size",
        core::mem::offset_of!(SetHwResources, gds_size)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "paging_vmid",
        core::mem::offset_of!(SetHwResources, paging_vmid)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "compute_hqd_mask",
        core::mem::offset_of!(SetHwResources, compute_hqd_mask)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "gfx_hqd_mask",
        core::mem::offset_of!(SetHwResources, gfx_hqd_mask)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "sdma_hqd_mask",
        core::mem::offset_of!(SetHwResources, sdma_hqd_mask)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "aggregated_doorbells",
        core::mem::offset_of!(SetHwResources, aggregated_doorbells)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "g_sch_ctx_gpu_mc_ptr",
        core::mem::offset_of!(SetHwResources, g_sch_ctx_gpu_mc_ptr)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "query_status_fence_gpu_mc_ptr",
        core::mem::offset_of!(SetHwResources, query_status_fence_gpu_mc_ptr)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "gc_base",
        core::mem::offset_of!(SetHwResources, gc_base)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "mmhub_base",
        core::mem::offset_of!(SetHwResources, mmhub_base)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "osssys_base",
        core::mem::offset_of!(SetHwResources, osssys_base)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "api_status",
        core::mem::offset_of!(SetHwResources, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "uint32_all",
        core::mem::offset_of!(SetHwResources, flags)
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.disable_reset = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_disable_reset(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.use_different_vmid_compute = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_use_different_vmid_compute(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.disable_mes_log = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_disable_mes_log(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.apply_mmhub_pgvm_invalidate_ack_loss_wa = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_apply_mmhub_pgvm_invalidate_ack_loss_wa(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.apply_grbm_remote_register_dummy_read_wa = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_apply_grbm_remote_register_dummy_read_wa(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.second_gfx_pipe_enabled = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_second_gfx_pipe_enabled(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.enable_level_process_quantum_check = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_enable_level_process_quantum_check(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.legacy_sch_mode = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_legacy_sch_mode(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.disable_add_queue_wptr_mc_addr = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_disable_add_queue_wptr_mc_addr(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.enable_mes_event_int_logging = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_enable_mes_event_int_logging(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.enable_reg_active_poll = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_enable_reg_active_poll(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.use_disable_queue_in_legacy_uq_preemption = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_use_disable_queue_in_legacy_uq_preemption(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.send_write_data = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_send_write_data(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.os_tdr_timeout_override = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_os_tdr_timeout_override(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.use_rs64mem_for_proc_gang_ctx = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_use_rs64mem_for_proc_gang_ctx(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.halt_on_misaligned_access = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_halt_on_misaligned_access(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.use_add_queue_unmap_flag_addr = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_use_add_queue_unmap_flag_addr(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.enable_mes_sch_stb_log = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_enable_mes_sch_stb_log(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.limit_single_process = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_limit_single_process(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.unmapped_doorbell_handling = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_unmapped_doorbell_handling(0x3)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.enable_mes_fence_int = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_enable_mes_fence_int(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES q_ = {0}; q_.enable_lr_compute_wa = ~0u; q_.max_dwords_in_api[54]; })",
        SetHwResourcesFlags::new()
            .with_enable_lr_compute_wa(true)
            .into_bits() as u64
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "oversubscription_timer",
        core::mem::offset_of!(SetHwResources, oversubscription_timer)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "doorbell_info",
        core::mem::offset_of!(SetHwResources, doorbell_info)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "event_intr_history_gpu_mc_ptr",
        core::mem::offset_of!(SetHwResources, event_intr_history_gpu_mc_ptr)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "timestamp",
        core::mem::offset_of!(SetHwResources, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES",
        "os_tdr_timeout_in_sec",
        core::mem::offset_of!(SetHwResources, os_tdr_timeout_in_sec)
    )],
    [Fact::size(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        core::mem::size_of::<SetHwResources1>()
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "header",
        core::mem::offset_of!(SetHwResources1, header)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "api_status",
        core::mem::offset_of!(SetHwResources1, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "timestamp",
        core::mem::offset_of!(SetHwResources1, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "uint32_all",
        core::mem::offset_of!(SetHwResources1, flags)
    )],
    [Fact::constant(
        H,
        "({ union MESAPI_SET_HW_RESOURCES_1 q_ = {0}; q_.enable_mes_debug_ctx = ~0u; q_.max_dwords_in_api[8]; })",
        SetHwResources1Flags::new()
            .with_enable_mes_debug_ctx(true)
            .into_bits() as u64
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "mes_debug_ctx_mc_addr",
        core::mem::offset_of!(SetHwResources1, mes_debug_ctx_mc_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "mes_debug_ctx_size",
        core::mem::offset_of!(SetHwResources1, mes_debug_ctx_size)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "mes_kiq_unmap_timeout",
        core::mem::offset_of!(SetHwResources1, mes_kiq_unmap_timeout)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "reserved1",
        core::mem::offset_of!(SetHwResources1, reserved1)
    )],
    [Fact::offset(
        H,
        "union MESAPI_SET_HW_RESOURCES_1",
        "cleaner_shader_fence_mc_addr",
        core::mem::offset_of!(SetHwResources1, cleaner_shader_fence_mc_addr)
    )],
    [Fact::size(
        H,
        "union MESAPI__ADD_QUEUE",
        core::mem::size_of::<AddQueue>()
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "header",
        core::mem::offset_of!(AddQueue, header)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "process_id",
        core::mem::offset_of!(AddQueue, process_id)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "page_table_base_addr",
        core::mem::offset_of!(AddQueue, page_table_base_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "process_va_start",
        core::mem::offset_of!(AddQueue, process_va_start)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "process_va_end",
        core::mem::offset_of!(AddQueue, process_va_end)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "process_quantum",
        core::mem::offset_of!(AddQueue, process_quantum)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "process_context_addr",
        core::mem::offset_of!(AddQueue, process_context_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "gang_quantum",
        core::mem::offset_of!(AddQueue, gang_quantum)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "gang_context_addr",
        core::mem::offset_of!(AddQueue, gang_context_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "inprocess_gang_priority",
        core::mem::offset_of!(AddQueue, inprocess_gang_priority)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "gang_global_priority_level",
        core::mem::offset_of!(AddQueue, gang_global_priority_level)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "doorbell_offset",
        core::mem::offset_of!(AddQueue, doorbell_offset)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "mqd_addr",
        core::mem::offset_of!(AddQueue, mqd_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "wptr_addr",
        core::mem::offset_of!(AddQueue, wptr_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "h_context",
        core::mem::offset_of!(AddQueue, h_context)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "h_queue",
        core::mem::offset_of!(AddQueue, h_queue)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "queue_type",
        core::mem::offset_of!(AddQueue, queue_type)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "gds_base",
        core::mem::offset_of!(AddQueue, gds_base)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "gds_size",
        core::mem::offset_of!(AddQueue, gds_size)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "gws_base",
        core::mem::offset_of!(AddQueue, gws_base)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "gws_size",
        core::mem::offset_of!(AddQueue, gws_size)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "oa_mask",
        core::mem::offset_of!(AddQueue, oa_mask)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "trap_handler_addr",
        core::mem::offset_of!(AddQueue, trap_handler_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "vm_context_cntl",
        core::mem::offset_of!(AddQueue, vm_context_cntl)
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.paging = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_paging(true).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.debug_vmid = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_debug_vmid(0xf).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.program_gds = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_program_gds(true).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.is_gang_suspended = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new()
            .with_is_gang_suspended(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.is_tmz_queue = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_is_tmz_queue(true).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.map_kiq_utility_queue = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new()
            .with_map_kiq_utility_queue(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.is_kfd_process = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_is_kfd_process(true).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.trap_en = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_trap_en(true).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.is_aql_queue = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_is_aql_queue(true).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.skip_process_ctx_clear = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new()
            .with_skip_process_ctx_clear(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.map_legacy_kq = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_map_legacy_kq(true).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.exclusively_scheduled = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new()
            .with_exclusively_scheduled(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.is_long_running = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_is_long_running(true).into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__ADD_QUEUE q_ = {0}; q_.is_dwm_queue = ~0u; q_.max_dwords_in_api[37]; })",
        AddQueueFlags::new().with_is_dwm_queue(true).into_bits() as u64
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "api_status",
        core::mem::offset_of!(AddQueue, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "tma_addr",
        core::mem::offset_of!(AddQueue, tma_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "sch_id",
        core::mem::offset_of!(AddQueue, sch_id)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "timestamp",
        core::mem::offset_of!(AddQueue, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "process_context_array_index",
        core::mem::offset_of!(AddQueue, process_context_array_index)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "gang_context_array_index",
        core::mem::offset_of!(AddQueue, gang_context_array_index)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "pipe_id",
        core::mem::offset_of!(AddQueue, pipe_id)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "queue_id",
        core::mem::offset_of!(AddQueue, queue_id)
    )],
    [Fact::offset(
        H,
        "union MESAPI__ADD_QUEUE",
        "alignment_mode_setting",
        core::mem::offset_of!(AddQueue, alignment_mode_setting)
    )],
    [Fact::size(
        H,
        "union MESAPI__REMOVE_QUEUE",
        core::mem::size_of::<RemoveQueue>()
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "header",
        core::mem::offset_of!(RemoveQueue, header)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "doorbell_offset",
        core::mem::offset_of!(RemoveQueue, doorbell_offset)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "gang_context_addr",
        core::mem::offset_of!(RemoveQueue, gang_context_addr)
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__REMOVE_QUEUE q_ = {0}; q_.unmap_kiq_utility_queue = ~0u; q_.max_dwords_in_api[4]; })",
        RemoveQueueFlags::new()
            .with_unmap_kiq_utility_queue(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__REMOVE_QUEUE q_ = {0}; q_.preempt_legacy_gfx_queue = ~0u; q_.max_dwords_in_api[4]; })",
        RemoveQueueFlags::new()
            .with_preempt_legacy_gfx_queue(true)
            .into_bits() as u64
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__REMOVE_QUEUE q_ = {0}; q_.unmap_legacy_queue = ~0u; q_.max_dwords_in_api[4]; })",
        RemoveQueueFlags::new()
            .with_unmap_legacy_queue(true)
            .into_bits() as u64
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "api_status",
        core::mem::offset_of!(RemoveQueue, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "pipe_id",
        core::mem::offset_of!(RemoveQueue, pipe_id)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "queue_id",
        core::mem::offset_of!(RemoveQueue, queue_id)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "tf_addr",
        core::mem::offset_of!(RemoveQueue, tf_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "tf_data",
        core::mem::offset_of!(RemoveQueue, tf_data)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "queue_type",
        core::mem::offset_of!(RemoveQueue, queue_type)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "timestamp",
        core::mem::offset_of!(RemoveQueue, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__REMOVE_QUEUE",
        "gang_context_array_index",
        core::mem::offset_of!(RemoveQueue, gang_context_array_index)
    )],
    [Fact::size(
        H,
        "union MESAPI__SUSPEND",
        core::mem::size_of::<Suspend>()
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "header",
        core::mem::offset_of!(Suspend, header)
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__SUSPEND q_ = {0}; q_.suspend_all_gangs = ~0u; q_.max_dwords_in_api[1]; })",
        SuspendFlags::new().with_suspend_all_gangs(true).into_bits() as u64
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "gang_context_addr",
        core::mem::offset_of!(Suspend, gang_context_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "suspend_fence_addr",
        core::mem::offset_of!(Suspend, suspend_fence_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "suspend_fence_value",
        core::mem::offset_of!(Suspend, suspend_fence_value)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "api_status",
        core::mem::offset_of!(Suspend, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "sch_id",
        core::mem::offset_of!(Suspend, sch_id)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "doorbell_offset",
        core::mem::offset_of!(Suspend, doorbell_offset)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "timestamp",
        core::mem::offset_of!(Suspend, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "legacy_uq_type",
        core::mem::offset_of!(Suspend, legacy_uq_type)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "legacy_uq_priority_level",
        core::mem::offset_of!(Suspend, legacy_uq_priority_level)
    )],
    [Fact::offset(
        H,
        "union MESAPI__SUSPEND",
        "gang_context_array_index",
        core::mem::offset_of!(Suspend, gang_context_array_index)
    )],
    [Fact::size(
        H,
        "union MESAPI__RESUME",
        core::mem::size_of::<Resume>()
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESUME",
        "header",
        core::mem::offset_of!(Resume, header)
    )],
    [Fact::constant(
        H,
        "({ union MESAPI__RESUME q_ = {0}; q_.resume_all_gangs = ~0u; q_.max_dwords_in_api[1]; })",
        ResumeFlags::new().with_resume_all_gangs(true).into_bits() as u64
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESUME",
        "gang_context_addr",
        core::mem::offset_of!(Resume, gang_context_addr)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESUME",
        "api_status",
        core::mem::offset_of!(Resume, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESUME",
        "doorbell_offset",
        core::mem::offset_of!(Resume, doorbell_offset)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESUME",
        "timestamp",
        core::mem::offset_of!(Resume, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__RESUME",
        "gang_context_array_index",
        core::mem::offset_of!(Resume, gang_context_array_index)
    )],
    [Fact::size(
        H,
        "union MESAPI__QUERY_MES_STATUS",
        core::mem::size_of::<QueryMesStatus>()
    )],
    [Fact::offset(
        H,
        "union MESAPI__QUERY_MES_STATUS",
        "header",
        core::mem::offset_of!(QueryMesStatus, header)
    )],
    [Fact::offset(
        H,
        "union MESAPI__QUERY_MES_STATUS",
        "subopcode",
        core::mem::offset_of!(QueryMesStatus, subopcode)
    )],
    [Fact::offset(
        H,
        "union MESAPI__QUERY_MES_STATUS",
        "api_status",
        core::mem::offset_of!(QueryMesStatus, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI__QUERY_MES_STATUS",
        "timestamp",
        core::mem::offset_of!(QueryMesStatus, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__QUERY_MES_STATUS",
        "data",
        core::mem::offset_of!(QueryMesStatus, data)
    )],
    [Fact::size(
        H,
        "union MESAPI__MISC",
        core::mem::size_of::<Misc>()
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "header",
        core::mem::offset_of!(Misc, header)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "opcode",
        core::mem::offset_of!(Misc, opcode)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "api_status",
        core::mem::offset_of!(Misc, api_status)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "data",
        core::mem::offset_of!(Misc, data)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "timestamp",
        core::mem::offset_of!(Misc, timestamp)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "doorbell_offset",
        core::mem::offset_of!(Misc, doorbell_offset)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "os_fence",
        core::mem::offset_of!(Misc, os_fence)
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_SET_HW_RSRC",
        opcode::SET_HW_RSRC as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_SET_SCHEDULING_CONFIG",
        opcode::SET_SCHEDULING_CONFIG as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_ADD_QUEUE",
        opcode::ADD_QUEUE as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_REMOVE_QUEUE",
        opcode::REMOVE_QUEUE as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_PERFORM_YIELD",
        opcode::PERFORM_YIELD as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_SET_GANG_PRIORITY_LEVEL",
        opcode::SET_GANG_PRIORITY_LEVEL as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_SUSPEND",
        opcode::SUSPEND as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_RESUME",
        opcode::RESUME as u64
    )],
    [Fact::constant(H, "MES_SCH_API_RESET", opcode::RESET as u64)],
    [Fact::constant(
        H,
        "MES_SCH_API_SET_LOG_BUFFER",
        opcode::SET_LOG_BUFFER as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_CHANGE_GANG_PRORITY",
        opcode::CHANGE_GANG_PRORITY as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_QUERY_SCHEDULER_STATUS",
        opcode::QUERY_SCHEDULER_STATUS as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_SET_DEBUG_VMID",
        opcode::SET_DEBUG_VMID as u64
    )],
    [Fact::constant(H, "MES_SCH_API_MISC", opcode::MISC as u64)],
    [Fact::constant(
        H,
        "MES_SCH_API_UPDATE_ROOT_PAGE_TABLE",
        opcode::UPDATE_ROOT_PAGE_TABLE as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_AMD_LOG",
        opcode::AMD_LOG as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_SET_SE_MODE",
        opcode::SET_SE_MODE as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_SET_GANG_SUBMIT",
        opcode::SET_GANG_SUBMIT as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_API_SET_HW_RSRC_1",
        opcode::SET_HW_RSRC_1 as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__WRITE_REG",
        misc_opcode::WRITE_REG as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__INV_GART",
        misc_opcode::INV_GART as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__QUERY_STATUS",
        misc_opcode::QUERY_STATUS as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__READ_REG",
        misc_opcode::READ_REG as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__WAIT_REG_MEM",
        misc_opcode::WAIT_REG_MEM as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__SET_SHADER_DEBUGGER",
        misc_opcode::SET_SHADER_DEBUGGER as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__NOTIFY_WORK_ON_UNMAPPED_QUEUE",
        misc_opcode::NOTIFY_WORK_ON_UNMAPPED_QUEUE as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__NOTIFY_TO_UNMAP_PROCESSES",
        misc_opcode::NOTIFY_TO_UNMAP_PROCESSES as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__QUERY_HUNG_ENGINE_ID",
        misc_opcode::QUERY_HUNG_ENGINE_ID as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__CHANGE_CONFIG",
        misc_opcode::CHANGE_CONFIG as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__LAUNCH_CLEANER_SHADER",
        misc_opcode::LAUNCH_CLEANER_SHADER as u64
    )],
    [Fact::constant(
        H,
        "MESAPI_MISC__SETUP_MES_DBGEXT",
        misc_opcode::SETUP_MES_DBGEXT as u64
    )],
    [Fact::constant(
        H,
        "MES_QUEUE_TYPE_GFX",
        queue_type::GFX as u64
    )],
    [Fact::constant(
        H,
        "MES_QUEUE_TYPE_COMPUTE",
        queue_type::COMPUTE as u64
    )],
    [Fact::constant(
        H,
        "MES_QUEUE_TYPE_SDMA",
        queue_type::SDMA as u64
    )],
    [Fact::constant(
        H,
        "AMD_PRIORITY_LEVEL_LOW",
        priority::LOW as u64
    )],
    [Fact::constant(
        H,
        "AMD_PRIORITY_LEVEL_NORMAL",
        priority::NORMAL as u64
    )],
    [Fact::constant(
        H,
        "AMD_PRIORITY_LEVEL_MEDIUM",
        priority::MEDIUM as u64
    )],
    [Fact::constant(
        H,
        "AMD_PRIORITY_LEVEL_HIGH",
        priority::HIGH as u64
    )],
    [Fact::constant(
        H,
        "AMD_PRIORITY_LEVEL_REALTIME",
        priority::REALTIME as u64
    )],
    [Fact::constant(
        H,
        "MES_API_TYPE_SCHEDULER",
        super::API_TYPE_SCHEDULER as u64
    )],
    [Fact::constant(H, "MISC_DATA_MAX_SIZE_IN_DWORDS", 20)],
    [Fact::constant(
        H,
        "MES_SCH_ERROR_CODE_HEADER_SHIFT_12",
        ERROR_CODE_HEADER_SHIFT as u64
    )],
    [Fact::constant(
        H,
        "MES_SCH_ERROR_CODE_MISC_OP_SHIFT_12",
        ERROR_CODE_MISC_OP_SHIFT as u64
    )],
    [Fact::constant(
        H,
        "MES_ERROR_CATEGORY_SHIFT_12",
        ERROR_CATEGORY_SHIFT as u64
    )],
    [Fact::constant(
        H,
        "MES_API_STATUS_ERROR_SHIFT_12",
        STATUS_ERROR_SHIFT as u64
    )],
    [Fact::constant(
        H,
        "MES_ERROR_API",
        error_category::API as u64
    )],
    [Fact::constant(
        H,
        "MES_ERROR_SCHEDULING",
        error_category::SCHEDULING as u64
    )],
    [Fact::constant(
        H,
        "MES_ERROR_UNKNOWN",
        error_category::UNKNOWN as u64
    )],
    [Fact::constant(
        H,
        "MES_API_QUERY_MES__GET_CTX_ARRAY_SIZE",
        0
    )],
    [Fact::constant(H, "MES_API_QUERY_MES__CHECK_HEALTHY", 1)],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "write_reg",
        core::mem::offset_of!(Misc, data)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "inv_gart",
        core::mem::offset_of!(Misc, data)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "query_status",
        core::mem::offset_of!(Misc, data)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "read_reg",
        core::mem::offset_of!(Misc, data)
    )],
    [Fact::offset(
        H,
        "union MESAPI__MISC",
        "wait_reg_mem",
        core::mem::offset_of!(Misc, data)
    )],
);
