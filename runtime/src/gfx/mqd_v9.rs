//! The v9 compute MQD (`struct v9_mqd`, `v9_structs.h`) for GC 9.4.3, one
//! per XCC, as `kfd_mqd_manager_v9.c` builds it for an AQL queue.
//!
//! - [`init_mqd`] is `init_mqd()` followed by `update_mqd()` (what KFD does
//!   for one MQD; the pre-9.4.3 path and the per-XCC body of the 9.4.3 one).
//! - [`init_mqd_v9_4_3`] is `init_mqd_v9_4_3()`: one MQD per XCC at
//!   [`mqd_stride`] apart (`mqd_stride_v9()`), each with
//!   `cp_mqd_stride_size`, `compute_tg_chunk_size = 1`,
//!   `compute_current_logic_xcc_id = (logical_xcc_start + xcc) % xccs`,
//!   `NO_UPDATE_RPTR` cleared on XCC 0 only (the master), and its own slice
//!   of the context-save area when CWSR is on.
//!
//! Every XCC's MQD names the same ring, read/write pointers and EOP buffer:
//! `update_mqd()` copies them from the one `queue_properties` into each
//! MQD, and tinygrad's `setup_ring()` does the same for MI300.
//!
//! Doorbells ([`XccDoorbell`]): a KFD user queue has one doorbell that
//! every XCC's MQD names (`update_mqd()` writes `q->doorbell_off` into
//! each); amdgpu's own compute rings get one per XCC,
//! `(mec_ring0 + xcc * xcc_doorbell_range + ring_id) << 1`
//! (`gfx_v9_4_3_compute_ring_init()`). Each XCC's MEC only takes doorbells
//! inside its `CP_MEC_DOORBELL_RANGE_LOWER/UPPER`, which Linux programs to
//! `[(kiq + xcc * range) * 2 << 2, (userqueue_end + xcc * range) * 2 << 2]`
//! bytes (`gfx_v9_4_3_xcc_kiq_init_register()`, [`linux_mec_range`]).
//! Which XCC's range must hold a doorbell that all XCCs share is not
//! public: barebell checks it against XCC 0's (the master's) range, as
//! tinygrad's MI300 queue (doorbell dword 6, in XCC 0's range only)
//! implies. That choice is barebell's convention.

use crate::gfx::mqd::{DoorbellControl, PersistentState, Quantum};
use crate::regs::gc_9_4_3::{IbControl, PqControl};
use barebell_facts::Fact;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `sizeof(struct v9_mqd)`.
pub const MQD_BYTES: usize = 2048;
/// MQD dword of `cp_mqd_base_addr_lo`, the first register of the window.
pub const HQD_FIRST_DWORD: usize = 128;
/// `PAGE_SIZE` in `mqd_stride_v9()`.
pub const PAGE: u64 = 4096;
/// The most XCCs a GC 9.4.3 part has (MI300X: 8).
pub const MAX_XCCS: usize = 8;
/// The MQD header dword `init_mqd()` writes.
pub const MQD_HEADER: u32 = 0xC031_0800;
/// `init_mqd()`'s `PRELOAD_SIZE` for v9 (0x53; gfx11 uses 0x55).
pub const PRELOAD_SIZE: u16 = 0x53;
/// `cp_hqd_hq_status0` bit 14 (the CP sets up DISPATCH_PTR).
pub const HQ_STATUS0_DISPATCH_PTR: u32 = 1 << 14;
/// `CP_MQD_CONTROL.PRIV_STATE`.
pub const MQD_CONTROL_PRIV_STATE: u32 = crate::regs::gc_9_4_3::MQD_CONTROL_PRIV_STATE_MASK;

/// Doorbell layout 1 (`enum AMDGPU_DOORBELL_ASSIGNMENT_LAYOUT1` in
/// `amdgpu_doorbell.h`, set by `aqua_vanjaram_doorbell_index_init()`), in
/// 64-bit doorbell indices.
pub mod layout1 {
    pub const KIQ_START: u32 = 0x000;
    pub const HIQ: u32 = 0x001;
    pub const MEC_RING_START: u32 = 0x008;
    pub const USERQUEUE_START: u32 = 0x010;
    pub const USERQUEUE_END: u32 = 0x01F;
    pub const XCC_RANGE: u32 = 0x020;
}

/// Doorbell assignment of `enum AMDGPU_VEGA20_DOORBELL_ASSIGNMENT`
/// (`amdgpu_doorbell.h`, set by `vega20_doorbell_index_init()` for
/// Vega20, Arcturus and Aldebaran: GC 9.4.2), in 64-bit doorbell indices.
pub mod vega20 {
    pub const KIQ: u32 = 0x000;
    pub const HIQ: u32 = 0x001;
    pub const MEC_RING0: u32 = 0x003;
    pub const USERQUEUE_START: u32 = 0x00B;
    pub const USERQUEUE_END: u32 = 0x08A;
    pub const SDMA_ENGINE0: u32 = 0x100;
}

/// A GC 9 part's doorbell plan: where Linux puts the KIQ, the HIQ and the
/// user queues, in 64-bit doorbell indices, and the MEC doorbell range it
/// programs per XCC. One value per `*_doorbell_index_init()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoorbellPlan {
    /// The `*_doorbell_index_init()` the plan follows, for messages.
    pub name: &'static str,
    pub kiq: u32,
    pub hiq: u32,
    pub userqueue_start: u32,
    pub userqueue_end: u32,
    /// `adev->doorbell_index.xcc_doorbell_range`: 0 on a one-GC part.
    pub xcc_range: u32,
}

impl DoorbellPlan {
    /// Layout 1 (`aqua_vanjaram_doorbell_index_init()`, GC 9.4.3).
    pub const LAYOUT1: Self = DoorbellPlan {
        name: "aqua_vanjaram_doorbell_index_init()",
        kiq: layout1::KIQ_START,
        hiq: layout1::HIQ,
        userqueue_start: layout1::USERQUEUE_START,
        userqueue_end: layout1::USERQUEUE_END,
        xcc_range: layout1::XCC_RANGE,
    };

    /// Vega20's (`vega20_doorbell_index_init()`, GC 9.4.2): one GC, no
    /// XCC range.
    pub const VEGA20: Self = DoorbellPlan {
        name: "vega20_doorbell_index_init()",
        kiq: vega20::KIQ,
        hiq: vega20::HIQ,
        userqueue_start: vega20::USERQUEUE_START,
        userqueue_end: vega20::USERQUEUE_END,
        xcc_range: 0,
    };

    /// XCC `xcc`'s KIQ doorbell (`amdgpu_gfx_kiq_init_ring()`:
    /// `doorbell_index.kiq + xcc * xcc_doorbell_range`), 64-bit index.
    pub const fn kiq_doorbell(&self, xcc: u32) -> u32 {
        self.kiq + xcc * self.xcc_range
    }

    /// The range Linux programs for logical XCC `xcc`
    /// (`gfx_v9_4_3_xcc_kiq_init_register()`, and for one GC
    /// `gfx_v9_0_kiq_init_register()`): `((kiq + xcc * range) * 2) << 2`
    /// to `((userqueue_end + xcc * range) * 2) << 2` bytes.
    pub const fn mec_range(&self, xcc: u32) -> MecDoorbellRange {
        MecDoorbellRange {
            lower_bytes: ((self.kiq + xcc * self.xcc_range) * 2) << 2,
            upper_bytes: ((self.userqueue_end + xcc * self.xcc_range) * 2) << 2,
        }
    }
}

/// One XCC's MEC doorbell range, in bytes of the doorbell BAR, as the
/// `CP_MEC_DOORBELL_RANGE_LOWER/UPPER` registers hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MecDoorbellRange {
    pub lower_bytes: u32,
    pub upper_bytes: u32,
}

impl MecDoorbellRange {
    /// Whether the doorbell at dword `dword` of the BAR lies in the range.
    pub fn contains_dword(&self, dword: u32) -> bool {
        let Some(byte) = dword.checked_mul(4) else {
            return false;
        };
        byte >= self.lower_bytes && byte <= self.upper_bytes
    }
}

/// The range Linux programs for logical XCC `xcc`
/// (`gfx_v9_4_3_xcc_kiq_init_register()`): `((kiq + xcc * range) * 2) << 2`
/// to `((userqueue_end + xcc * range) * 2) << 2`.
pub const fn linux_mec_range(xcc: u32) -> MecDoorbellRange {
    DoorbellPlan::LAYOUT1.mec_range(xcc)
}

/// The doorbell dword amdgpu gives compute ring `ring_id` of XCC `xcc`
/// (`gfx_v9_4_3_compute_ring_init()`).
pub const fn kernel_ring_doorbell_dword(xcc: u32, ring_id: u32) -> u32 {
    (layout1::MEC_RING_START + xcc * layout1::XCC_RANGE + ring_id) << 1
}

/// Which doorbell each XCC's MQD names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XccDoorbell {
    /// One doorbell dword for every XCC (a KFD user queue, tinygrad's AQL
    /// queue); checked against XCC 0's range (see the module docs).
    Shared { dword: u32 },
    /// amdgpu's per-XCC compute ring `ring_id`, each XCC its own doorbell
    /// ([`kernel_ring_doorbell_dword`]), checked against its own range.
    KernelRing { ring_id: u32 },
}

/// The context-save (CWSR) area KFD hands `init_mqd()` when
/// `cwsr_enabled`: `bytes_per_xcc` per XCC (`ctx_save_restore_area_size`),
/// XCC `n`'s at `address + n * bytes_per_xcc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtxSaveArea {
    pub address: u64,
    pub bytes_per_xcc: u32,
    /// `ctl_stack_size`: the control stack at the start of each XCC's area.
    pub ctl_stack_bytes: u32,
}

/// What `init_mqd()`/`update_mqd()` take from `struct queue_properties` for
/// an AQL queue, in GPU addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqdQueue {
    pub ring_address: u64,
    pub ring_bytes: u64,
    /// `&amd_queue_t::read_dispatch_id` (`q->read_ptr`).
    pub read_index_address: u64,
    /// `&amd_queue_t::write_dispatch_id` (`q->write_ptr`).
    pub write_index_address: u64,
    pub eop_address: u64,
    pub eop_bytes: u64,
    /// The VMID written into `cp_hqd_vmid` (direct mapping; HWS sets its
    /// own).
    pub vmid: u8,
    /// `None` when CWSR is off (barebell has no trap handler yet).
    pub ctx_save: Option<CtxSaveArea>,
}

/// Why a v9 MQD was not built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MqdV9Error {
    /// The ring is not a power of two of at least 256 bytes, or its
    /// `QUEUE_SIZE` does not fit the field.
    RingSize { bytes: u64 },
    /// The EOP buffer is not a power of two of at least 8 bytes.
    EopSize { bytes: u64 },
    /// An address is zero.
    Missing { field: &'static str },
    /// An address is not aligned as the register holding it requires.
    Misaligned {
        field: &'static str,
        address: u64,
        align: u64,
    },
    /// The VMID does not fit `CP_HQD_VMID.VMID`.
    Vmid { vmid: u8 },
    /// XCC count outside 1..=8.
    XccCount { xccs: usize },
    /// A doorbell outside the MEC doorbell range of the XCC that must take it.
    DoorbellOutsideRange {
        xcc: usize,
        dword: u32,
        range: MecDoorbellRange,
    },
    /// Fewer MEC doorbell ranges than XCCs.
    MissingRange { xcc: usize },
    /// The doorbell dword does not fit `DOORBELL_OFFSET`.
    DoorbellOffset { dword: u32 },
    /// The output buffer cannot hold `xccs` MQDs at the stride.
    Buffer { needed: u64, len: usize },
    /// A context-save area too small for its control stack, or sizes that
    /// overflow.
    CtxSave {
        bytes_per_xcc: u32,
        ctl_stack_bytes: u32,
    },
}

impl core::fmt::Display for MqdV9Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MqdV9Error::RingSize { bytes } => write!(
                f,
                "AQL ring of {bytes} bytes: the CP needs a power of two of at least 256 bytes"
            ),
            MqdV9Error::EopSize { bytes } => write!(
                f,
                "EOP buffer of {bytes} bytes: the CP needs a power of two of at least 8 bytes"
            ),
            MqdV9Error::Missing { field } => write!(f, "the queue's {field} is zero"),
            MqdV9Error::Misaligned {
                field,
                address,
                align,
            } => write!(
                f,
                "the queue's {field} {address:#x} is not {align}-byte aligned"
            ),
            MqdV9Error::Vmid { vmid } => write!(f, "VMID {vmid} does not fit CP_HQD_VMID (0..=15)"),
            MqdV9Error::XccCount { xccs } => {
                write!(f, "{xccs} XCCs: GC 9.4.3 has between 1 and 8")
            }
            MqdV9Error::DoorbellOutsideRange { xcc, dword, range } => write!(
                f,
                "doorbell dword {dword:#x} (byte {:#x}) is outside XCC {xcc}'s MEC doorbell range {:#x}..={:#x}",
                u64::from(*dword) * 4,
                range.lower_bytes,
                range.upper_bytes
            ),
            MqdV9Error::MissingRange { xcc } => {
                write!(f, "no MEC doorbell range given for XCC {xcc}")
            }
            MqdV9Error::DoorbellOffset { dword } => write!(
                f,
                "doorbell dword {dword:#x} does not fit CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_OFFSET"
            ),
            MqdV9Error::Buffer { needed, len } => write!(
                f,
                "MQD buffer of {len} bytes cannot hold the {needed} bytes the XCCs' MQDs need"
            ),
            MqdV9Error::CtxSave {
                bytes_per_xcc,
                ctl_stack_bytes,
            } => write!(
                f,
                "context-save area of {bytes_per_xcc} bytes per XCC cannot hold a {ctl_stack_bytes}-byte control stack"
            ),
        }
    }
}

/// MQD dwords 128..=186: the GC 9.4.3 HQD register window
/// `CP_MQD_BASE_ADDR ..= CP_HQD_AQL_DISPATCH_ID_HI`, one field per
/// register, named as `struct v9_mqd` names the dword.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable)]
#[repr(C)]
pub struct HqdWindowV9 {
    pub cp_mqd_base_addr_lo: u32,
    pub cp_mqd_base_addr_hi: u32,
    pub cp_hqd_active: u32,
    pub cp_hqd_vmid: u32,
    pub cp_hqd_persistent_state: u32,
    pub cp_hqd_pipe_priority: u32,
    pub cp_hqd_queue_priority: u32,
    pub cp_hqd_quantum: u32,
    pub cp_hqd_pq_base_lo: u32,
    pub cp_hqd_pq_base_hi: u32,
    pub cp_hqd_pq_rptr: u32,
    pub cp_hqd_pq_rptr_report_addr_lo: u32,
    pub cp_hqd_pq_rptr_report_addr_hi: u32,
    pub cp_hqd_pq_wptr_poll_addr_lo: u32,
    pub cp_hqd_pq_wptr_poll_addr_hi: u32,
    pub cp_hqd_pq_doorbell_control: u32,
    pub reserved_144: u32,
    pub cp_hqd_pq_control: u32,
    pub cp_hqd_ib_base_addr_lo: u32,
    pub cp_hqd_ib_base_addr_hi: u32,
    pub cp_hqd_ib_rptr: u32,
    pub cp_hqd_ib_control: u32,
    pub cp_hqd_iq_timer: u32,
    pub cp_hqd_iq_rptr: u32,
    pub cp_hqd_dequeue_request: u32,
    pub cp_hqd_dma_offload: u32,
    pub cp_hqd_sema_cmd: u32,
    pub cp_hqd_msg_type: u32,
    pub cp_hqd_atomic0_preop_lo: u32,
    pub cp_hqd_atomic0_preop_hi: u32,
    pub cp_hqd_atomic1_preop_lo: u32,
    pub cp_hqd_atomic1_preop_hi: u32,
    pub cp_hqd_hq_status0: u32,
    pub cp_hqd_hq_control0: u32,
    pub cp_mqd_control: u32,
    pub cp_hqd_hq_status1: u32,
    pub cp_hqd_hq_control1: u32,
    pub cp_hqd_eop_base_addr_lo: u32,
    pub cp_hqd_eop_base_addr_hi: u32,
    pub cp_hqd_eop_control: u32,
    pub cp_hqd_eop_rptr: u32,
    pub cp_hqd_eop_wptr: u32,
    pub cp_hqd_eop_done_events: u32,
    pub cp_hqd_ctx_save_base_addr_lo: u32,
    pub cp_hqd_ctx_save_base_addr_hi: u32,
    pub cp_hqd_ctx_save_control: u32,
    pub cp_hqd_cntl_stack_offset: u32,
    pub cp_hqd_cntl_stack_size: u32,
    pub cp_hqd_wg_state_offset: u32,
    pub cp_hqd_ctx_save_size: u32,
    pub cp_hqd_gds_resource_state: u32,
    pub cp_hqd_error: u32,
    pub cp_hqd_eop_wptr_mem: u32,
    pub cp_hqd_aql_control: u32,
    pub cp_hqd_pq_wptr_lo: u32,
    pub cp_hqd_pq_wptr_hi: u32,
    pub reserved_184: u32,
    pub reserved_185: u32,
    pub reserved_186: u32,
}

macro_rules! window_facts {
    ($($field:ident),* $(,)?) => {
        [$(Fact::offset(STRUCTS_H, "struct v9_mqd", stringify!($field),
            HQD_FIRST_DWORD * 4 + core::mem::offset_of!(HqdWindowV9, $field)),)*]
    };
}

const WINDOW_FACTS: &[Fact] = &window_facts!(
    cp_mqd_base_addr_lo,
    cp_mqd_base_addr_hi,
    cp_hqd_active,
    cp_hqd_vmid,
    cp_hqd_persistent_state,
    cp_hqd_pipe_priority,
    cp_hqd_queue_priority,
    cp_hqd_quantum,
    cp_hqd_pq_base_lo,
    cp_hqd_pq_base_hi,
    cp_hqd_pq_rptr,
    cp_hqd_pq_rptr_report_addr_lo,
    cp_hqd_pq_rptr_report_addr_hi,
    cp_hqd_pq_wptr_poll_addr_lo,
    cp_hqd_pq_wptr_poll_addr_hi,
    cp_hqd_pq_doorbell_control,
    reserved_144,
    cp_hqd_pq_control,
    cp_hqd_ib_base_addr_lo,
    cp_hqd_ib_base_addr_hi,
    cp_hqd_ib_rptr,
    cp_hqd_ib_control,
    cp_hqd_iq_timer,
    cp_hqd_iq_rptr,
    cp_hqd_dequeue_request,
    cp_hqd_dma_offload,
    cp_hqd_sema_cmd,
    cp_hqd_msg_type,
    cp_hqd_atomic0_preop_lo,
    cp_hqd_atomic0_preop_hi,
    cp_hqd_atomic1_preop_lo,
    cp_hqd_atomic1_preop_hi,
    cp_hqd_hq_status0,
    cp_hqd_hq_control0,
    cp_mqd_control,
    cp_hqd_hq_status1,
    cp_hqd_hq_control1,
    cp_hqd_eop_base_addr_lo,
    cp_hqd_eop_base_addr_hi,
    cp_hqd_eop_control,
    cp_hqd_eop_rptr,
    cp_hqd_eop_wptr,
    cp_hqd_eop_done_events,
    cp_hqd_ctx_save_base_addr_lo,
    cp_hqd_ctx_save_base_addr_hi,
    cp_hqd_ctx_save_control,
    cp_hqd_cntl_stack_offset,
    cp_hqd_cntl_stack_size,
    cp_hqd_wg_state_offset,
    cp_hqd_ctx_save_size,
    cp_hqd_gds_resource_state,
    cp_hqd_error,
    cp_hqd_eop_wptr_mem,
    cp_hqd_aql_control,
    cp_hqd_pq_wptr_lo,
    cp_hqd_pq_wptr_hi,
    reserved_184,
    reserved_185,
    reserved_186,
);

/// Window length in dwords.
pub const HQD_WINDOW_DWORDS: usize = core::mem::size_of::<HqdWindowV9>() / 4;
const _: () = assert!(HQD_WINDOW_DWORDS == crate::regs::gc_9_4_3::HQD_WINDOW_DWORDS);

impl HqdWindowV9 {
    /// The window as dwords, in register order.
    pub fn dwords(&self) -> [u32; HQD_WINDOW_DWORDS] {
        let mut out = [0u32; HQD_WINDOW_DWORDS];
        out.as_mut_bytes().copy_from_slice(self.as_bytes());
        out
    }

    pub fn pq_control(&self) -> PqControl {
        PqControl::from_bits(self.cp_hqd_pq_control)
    }
}

const STRUCTS_H: &str = "v9_structs.h";

/// `struct v9_mqd`: the fields barebell sets are named; the rest is
/// reserved padding of the right size. Dwords 39..=42 are a union in the
/// header: `compute_static_thread_mgmt_se4..7` before GC 9.4.3,
/// `compute_current_logic_xcc_id`, `compute_restart_cg_tg_id`,
/// `compute_tg_chunk_size`, `compute_restore_tg_chunk_size` on it; dwords
/// 225..=226 likewise (`reserved_225/226` or `pm4_target_xcc_in_xcp`,
/// `cp_mqd_stride_size`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct V9Mqd {
    pub header: u32,
    _r1: [u32; 10],
    pub compute_pipelinestat_enable: u32,
    _r12: [u32; 11],
    pub compute_static_thread_mgmt_se0: u32,
    pub compute_static_thread_mgmt_se1: u32,
    _r25: u32,
    pub compute_static_thread_mgmt_se2: u32,
    pub compute_static_thread_mgmt_se3: u32,
    _r28: [u32; 11],
    /// `compute_static_thread_mgmt_se4` before 9.4.3.
    pub compute_current_logic_xcc_id: u32,
    /// `compute_static_thread_mgmt_se5` before 9.4.3.
    pub compute_restart_cg_tg_id: u32,
    /// `compute_static_thread_mgmt_se6` before 9.4.3.
    pub compute_tg_chunk_size: u32,
    /// `compute_static_thread_mgmt_se7` before 9.4.3.
    pub compute_restore_tg_chunk_size: u32,
    _r43: [u32; 85],
    /// Dwords 128..=186.
    pub hqd: HqdWindowV9,
    _r187: [u32; 38],
    pub pm4_target_xcc_in_xcp: u32,
    pub cp_mqd_stride_size: u32,
    _r227: [u32; 13],
    pub queue_doorbell_id0: u32,
    _r241: [u32; 271],
}

const _: () = assert!(core::mem::size_of::<V9Mqd>() == MQD_BYTES);

impl V9Mqd {
    /// An all-zero MQD (`memset(m, 0, sizeof(struct v9_mqd))`).
    pub fn zeroed() -> Self {
        <V9Mqd as zerocopy::FromZeros>::new_zeroed()
    }

    /// The MQD stored in `bytes` (at least [`MQD_BYTES`] long).
    pub fn read_from(bytes: &[u8]) -> Option<Self> {
        V9Mqd::read_from_prefix(bytes).ok().map(|(m, _)| m)
    }
}

fn lo(x: u64) -> u32 {
    x as u32
}
fn hi(x: u64) -> u32 {
    (x >> 32) as u32
}

fn aligned(field: &'static str, address: u64, align: u64) -> Result<(), MqdV9Error> {
    if address == 0 {
        return Err(MqdV9Error::Missing { field });
    }
    if !address.is_multiple_of(align) {
        return Err(MqdV9Error::Misaligned {
            field,
            address,
            align,
        });
    }
    Ok(())
}

/// `order_base_2(bytes / 4) - 1` for a power-of-two ring.
pub fn queue_size_field(bytes: u64) -> Result<u8, MqdV9Error> {
    if !bytes.is_power_of_two() || bytes < 256 {
        return Err(MqdV9Error::RingSize { bytes });
    }
    let field = (bytes / 4).trailing_zeros() - 1;
    u8::try_from(field)
        .ok()
        .filter(|f| *f <= 0x3F)
        .ok_or(MqdV9Error::RingSize { bytes })
}

/// `min(0xA, order_base_2(bytes / 8))` (`update_mqd()`; the CP does not
/// clamp the field itself).
pub fn eop_size_field(bytes: u64) -> Result<u32, MqdV9Error> {
    if !bytes.is_power_of_two() || bytes < 8 {
        return Err(MqdV9Error::EopSize { bytes });
    }
    Ok((bytes / 8).trailing_zeros().min(0xA))
}

fn align_up(x: u64, a: u64) -> Option<u64> {
    x.checked_add(a - 1).map(|v| v & !(a - 1))
}

/// `mqd_stride_v9()`: with CWSR, the MQD page plus the page-aligned
/// control stack behind it (the v9 hardware bug `allocate_mqd()`
/// describes); without, `sizeof(struct v9_mqd)`.
pub fn mqd_stride(q: &MqdQueue) -> Result<u64, MqdV9Error> {
    match q.ctx_save {
        None => Ok(MQD_BYTES as u64),
        Some(c) => align_up(u64::from(c.ctl_stack_bytes), PAGE)
            .and_then(|s| s.checked_add(align_up(MQD_BYTES as u64, PAGE)?))
            .ok_or(MqdV9Error::CtxSave {
                bytes_per_xcc: c.bytes_per_xcc,
                ctl_stack_bytes: c.ctl_stack_bytes,
            }),
    }
}

fn check_queue(q: &MqdQueue) -> Result<(), MqdV9Error> {
    queue_size_field(q.ring_bytes)?;
    eop_size_field(q.eop_bytes)?;
    aligned("ring address", q.ring_address, 256)?;
    aligned("read index address", q.read_index_address, 8)?;
    aligned("write index address", q.write_index_address, 8)?;
    aligned("EOP address", q.eop_address, 256)?;
    if q.vmid > 15 {
        return Err(MqdV9Error::Vmid { vmid: q.vmid });
    }
    if let Some(c) = q.ctx_save {
        aligned("context-save address", c.address, 4096)?;
        if c.ctl_stack_bytes == 0 || c.ctl_stack_bytes >= c.bytes_per_xcc {
            return Err(MqdV9Error::CtxSave {
                bytes_per_xcc: c.bytes_per_xcc,
                ctl_stack_bytes: c.ctl_stack_bytes,
            });
        }
    }
    Ok(())
}

/// `init_mqd()` then `update_mqd()` for an AQL queue: the MQD at
/// `mqd_address` with the doorbell at BAR dword `doorbell_dword`.
pub fn init_mqd(mqd_address: u64, doorbell_dword: u32, q: &MqdQueue) -> Result<V9Mqd, MqdV9Error> {
    check_queue(q)?;
    aligned("MQD address", mqd_address, 256)?;
    if doorbell_dword >= 1 << 26 {
        return Err(MqdV9Error::DoorbellOffset {
            dword: doorbell_dword,
        });
    }
    let mut m = V9Mqd::zeroed();
    // init_mqd()
    m.header = MQD_HEADER;
    m.compute_pipelinestat_enable = 1;
    m.compute_static_thread_mgmt_se0 = u32::MAX;
    m.compute_static_thread_mgmt_se1 = u32::MAX;
    m.compute_static_thread_mgmt_se2 = u32::MAX;
    m.compute_static_thread_mgmt_se3 = u32::MAX;
    // se4..se7: the same dwords as the 9.4.3 XCC fields.
    m.compute_current_logic_xcc_id = u32::MAX;
    m.compute_restart_cg_tg_id = u32::MAX;
    m.compute_tg_chunk_size = u32::MAX;
    m.compute_restore_tg_chunk_size = u32::MAX;
    let mut persistent = PersistentState::new()
        .with_preload_req(true)
        .with_preload_size(PRELOAD_SIZE);
    let h = &mut m.hqd;
    let mut pq = PqControl::new()
        .with_rptr_block_size(5)
        .with_unord_dispatch(true);
    h.cp_mqd_control = MQD_CONTROL_PRIV_STATE;
    h.cp_mqd_base_addr_lo = lo(mqd_address);
    h.cp_mqd_base_addr_hi = hi(mqd_address);
    h.cp_hqd_quantum = Quantum::new()
        .with_quantum_en(true)
        .with_quantum_scale(true)
        .with_quantum_duration(1)
        .into_bits();
    h.cp_hqd_hq_status0 = HQ_STATUS0_DISPATCH_PTR;
    h.cp_hqd_aql_control = 1;
    if let Some(c) = q.ctx_save {
        persistent = persistent.with_qswitch_mode(true);
        h.cp_hqd_ctx_save_base_addr_lo = lo(c.address);
        h.cp_hqd_ctx_save_base_addr_hi = hi(c.address);
        h.cp_hqd_ctx_save_size = c.bytes_per_xcc;
        h.cp_hqd_cntl_stack_size = c.ctl_stack_bytes;
        h.cp_hqd_cntl_stack_offset = c.ctl_stack_bytes;
        h.cp_hqd_wg_state_offset = c.ctl_stack_bytes;
    }
    h.cp_hqd_persistent_state = persistent.into_bits();
    // update_mqd()
    pq = pq.with_queue_size(queue_size_field(q.ring_bytes)?);
    h.cp_hqd_pq_base_lo = lo(q.ring_address >> 8);
    h.cp_hqd_pq_base_hi = hi(q.ring_address >> 8);
    h.cp_hqd_pq_rptr_report_addr_lo = lo(q.read_index_address);
    h.cp_hqd_pq_rptr_report_addr_hi = hi(q.read_index_address);
    h.cp_hqd_pq_wptr_poll_addr_lo = lo(q.write_index_address);
    h.cp_hqd_pq_wptr_poll_addr_hi = hi(q.write_index_address);
    h.cp_hqd_ib_control = IbControl::new()
        .with_min_ib_avail_size(3)
        .with_ib_exe_disable(true)
        .into_bits();
    h.cp_hqd_eop_control = eop_size_field(q.eop_bytes)?;
    h.cp_hqd_eop_base_addr_lo = lo(q.eop_address >> 8);
    h.cp_hqd_eop_base_addr_hi = hi(q.eop_address >> 8);
    h.cp_hqd_iq_timer = 0;
    h.cp_hqd_vmid = u32::from(q.vmid);
    // AQL: no rptr updates, 64-byte slot write pointer, queue-full and
    // write-pointer-poll clamp, and the BIF drops doorbells it cannot route.
    pq = pq
        .with_no_update_rptr(true)
        .with_slot_based_wptr(2)
        .with_queue_full_en(true)
        .with_wpp_clamp_en(true);
    h.cp_hqd_pq_control = pq.into_bits();
    h.cp_hqd_pq_doorbell_control = DoorbellControl::new()
        .with_doorbell_offset(doorbell_dword)
        .with_doorbell_bif_drop(true)
        .into_bits();
    if q.ctx_save.is_some() {
        h.cp_hqd_ctx_save_control = 0;
    }
    // set_priority() with priority 0: pipe priority CS_LOW (0), queue 0.
    h.cp_hqd_pipe_priority = 0;
    h.cp_hqd_queue_priority = 0;
    Ok(m)
}

/// Where the XCCs' MQDs went: XCC `n`'s at `address + n * stride`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XccMqds {
    pub address: u64,
    pub stride: u64,
    pub xccs: usize,
}

impl XccMqds {
    /// XCC `xcc`'s MQD address (`get_xcc_mqd()`).
    pub fn address_of(&self, xcc: usize) -> Option<u64> {
        (xcc < self.xccs)
            .then(|| self.stride.checked_mul(xcc as u64))
            .flatten()
            .and_then(|o| self.address.checked_add(o))
    }
}

/// The doorbell dword XCC `xcc` names, and the range it is checked in.
fn xcc_doorbell(
    doorbell: XccDoorbell,
    xcc: usize,
    ranges: &[MecDoorbellRange],
) -> Result<u32, MqdV9Error> {
    let (dword, check_xcc) = match doorbell {
        XccDoorbell::Shared { dword } => (dword, 0),
        XccDoorbell::KernelRing { ring_id } => {
            let x = xcc as u32;
            let dword = layout1::XCC_RANGE
                .checked_mul(x)
                .and_then(|v| v.checked_add(layout1::MEC_RING_START))
                .and_then(|v| v.checked_add(ring_id))
                .and_then(|v| v.checked_mul(2))
                .ok_or(MqdV9Error::DoorbellOffset { dword: u32::MAX })?;
            (dword, xcc)
        }
    };
    let range = *ranges
        .get(check_xcc)
        .ok_or(MqdV9Error::MissingRange { xcc: check_xcc })?;
    if !range.contains_dword(dword) {
        return Err(MqdV9Error::DoorbellOutsideRange {
            xcc: check_xcc,
            dword,
            range,
        });
    }
    Ok(dword)
}

/// `init_mqd_v9_4_3()` for an AQL queue: writes `xccs` MQDs into `out`
/// (the buffer at GPU address `address`), XCC `n`'s at byte
/// `n * mqd_stride(q)`. `ranges[n]` is XCC `n`'s MEC doorbell range;
/// `logical_xcc_start` is `dqm->current_logical_xcc_start` (KFD bumps it
/// once per queue, so queues start on different XCCs).
/// Bytes of `out` between MQDs (the control stacks) are left as they are.
pub fn init_mqd_v9_4_3(
    address: u64,
    out: &mut [u8],
    q: &MqdQueue,
    xccs: usize,
    logical_xcc_start: u32,
    doorbell: XccDoorbell,
    ranges: &[MecDoorbellRange],
) -> Result<XccMqds, MqdV9Error> {
    if !(1..=MAX_XCCS).contains(&xccs) {
        return Err(MqdV9Error::XccCount { xccs });
    }
    check_queue(q)?;
    let stride = mqd_stride(q)?;
    let needed = stride
        .checked_mul(xccs as u64 - 1)
        .and_then(|v| v.checked_add(MQD_BYTES as u64))
        .ok_or(MqdV9Error::Buffer {
            needed: u64::MAX,
            len: out.len(),
        })?;
    if (out.len() as u64) < needed {
        return Err(MqdV9Error::Buffer {
            needed,
            len: out.len(),
        });
    }
    if let Some(c) = q.ctx_save {
        let span = u64::from(c.bytes_per_xcc).checked_mul(xccs as u64);
        if span.and_then(|s| c.address.checked_add(s)).is_none() {
            return Err(MqdV9Error::CtxSave {
                bytes_per_xcc: c.bytes_per_xcc,
                ctl_stack_bytes: c.ctl_stack_bytes,
            });
        }
    }
    let layout = XccMqds {
        address,
        stride,
        xccs,
    };
    // Check every XCC before writing any, so a refusal leaves `out` as it was.
    let mut dwords = [0u32; MAX_XCCS];
    for (xcc, d) in dwords.iter_mut().enumerate().take(xccs) {
        *d = xcc_doorbell(doorbell, xcc, ranges)?;
    }
    for (xcc, dword) in dwords.iter().copied().enumerate().take(xccs) {
        let mqd_address = layout.address_of(xcc).ok_or(MqdV9Error::Buffer {
            needed,
            len: out.len(),
        })?;
        let mut m = init_mqd(mqd_address, dword, q)?;
        m.cp_mqd_stride_size = stride as u32;
        if let Some(c) = q.ctx_save {
            let a = c.address + u64::from(c.bytes_per_xcc) * xcc as u64;
            m.hqd.cp_hqd_ctx_save_base_addr_lo = lo(a);
            m.hqd.cp_hqd_ctx_save_base_addr_hi = hi(a);
        }
        m.compute_tg_chunk_size = 1;
        m.compute_current_logic_xcc_id =
            ((u64::from(logical_xcc_start) + xcc as u64) % xccs as u64) as u32;
        if xcc == 0 {
            // The master XCC updates the read pointer.
            m.hqd.cp_hqd_pq_control = m.hqd.pq_control().with_no_update_rptr(false).into_bits();
        }
        let at = (stride * xcc as u64) as usize;
        let len = out.len();
        let dst = out
            .get_mut(at..at + MQD_BYTES)
            .ok_or(MqdV9Error::Buffer { needed, len })?;
        dst.copy_from_slice(m.as_bytes());
    }
    Ok(layout)
}

macro_rules! mqd_offsets {
    ($($field:ident),* $(,)?) => {
        [$(Fact::offset(STRUCTS_H, "struct v9_mqd", stringify!($field), core::mem::offset_of!(V9Mqd, $field)),)*]
    };
}

/// Each union alias and the fields outside the window barebell sets.
const TOP_FACTS: &[Fact] = barebell_facts::fact_table!(
    [Fact::size(STRUCTS_H, "struct v9_mqd", MQD_BYTES)],
    mqd_offsets!(
        header,
        compute_pipelinestat_enable,
        compute_static_thread_mgmt_se0,
        compute_static_thread_mgmt_se1,
        compute_static_thread_mgmt_se2,
        compute_static_thread_mgmt_se3,
        compute_current_logic_xcc_id,
        compute_restart_cg_tg_id,
        compute_tg_chunk_size,
        compute_restore_tg_chunk_size,
        pm4_target_xcc_in_xcp,
        cp_mqd_stride_size,
        queue_doorbell_id0,
    ),
    [
        Fact::offset(
            STRUCTS_H,
            "struct v9_mqd",
            "compute_static_thread_mgmt_se4",
            core::mem::offset_of!(V9Mqd, compute_current_logic_xcc_id)
        ),
        Fact::offset(
            STRUCTS_H,
            "struct v9_mqd",
            "compute_static_thread_mgmt_se7",
            core::mem::offset_of!(V9Mqd, compute_restore_tg_chunk_size)
        ),
        Fact::offset(
            STRUCTS_H,
            "struct v9_mqd",
            "cp_mqd_base_addr_lo",
            core::mem::offset_of!(V9Mqd, hqd)
        ),
    ],
);

const DOORBELL_FACTS: &[Fact] = &[
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_DOORBELL_LAYOUT1_KIQ_START",
        layout1::KIQ_START as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_DOORBELL_LAYOUT1_HIQ",
        layout1::HIQ as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_DOORBELL_LAYOUT1_MEC_RING_START",
        layout1::MEC_RING_START as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_DOORBELL_LAYOUT1_USERQUEUE_START",
        layout1::USERQUEUE_START as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_DOORBELL_LAYOUT1_USERQUEUE_END",
        layout1::USERQUEUE_END as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_DOORBELL_LAYOUT1_XCC_RANGE",
        layout1::XCC_RANGE as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_VEGA20_DOORBELL_KIQ",
        vega20::KIQ as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_VEGA20_DOORBELL_HIQ",
        vega20::HIQ as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_VEGA20_DOORBELL_MEC_RING0",
        vega20::MEC_RING0 as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_VEGA20_DOORBELL_USERQUEUE_START",
        vega20::USERQUEUE_START as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_VEGA20_DOORBELL_USERQUEUE_END",
        vega20::USERQUEUE_END as u64,
    ),
    Fact::constant(
        "amdgpu_doorbell.h",
        "AMDGPU_VEGA20_DOORBELL_sDMA_ENGINE0",
        vega20::SDMA_ENGINE0 as u64,
    ),
];

/// Every v9 MQD fact: the layout, every HQD window dword, the doorbell
/// layout.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(TOP_FACTS, WINDOW_FACTS, DOORBELL_FACTS);

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> MqdQueue {
        MqdQueue {
            ring_address: 0x1_0000_0000,
            ring_bytes: 0x1_0000,
            read_index_address: 0x2000_0080,
            write_index_address: 0x2000_0038,
            eop_address: 0x3000_0000,
            eop_bytes: 4096,
            vmid: 0,
            ctx_save: None,
        }
    }

    #[test]
    fn linux_ranges_and_kernel_ring_doorbells_per_xcc() {
        // gfx_v9_4_3_xcc_kiq_init_register() with kiq 0, userqueue_end
        // 0x1f, xcc range 0x20: ((0 + 0x20x) * 2) << 2 ..= ((0x1f + 0x20x) * 2) << 2.
        assert_eq!(
            linux_mec_range(0),
            MecDoorbellRange {
                lower_bytes: 0,
                upper_bytes: 0xF8
            }
        );
        assert_eq!(
            linux_mec_range(3),
            MecDoorbellRange {
                lower_bytes: 0x300,
                upper_bytes: 0x3F8
            }
        );
        // (mec_ring0 0x8 + 0x20 * xcc + ring) << 1.
        assert_eq!(kernel_ring_doorbell_dword(0, 0), 0x10);
        assert_eq!(kernel_ring_doorbell_dword(2, 1), 0x92);
    }

    #[test]
    fn stride_follows_mqd_stride_v9() {
        assert_eq!(mqd_stride(&queue()), Ok(2048));
        let mut q = queue();
        q.ctx_save = Some(CtxSaveArea {
            address: 0x4000_0000,
            bytes_per_xcc: 0x10_0000,
            ctl_stack_bytes: 0x2100,
        });
        // ALIGN(0x2100, 4096) + ALIGN(2048, 4096) = 0x3000 + 0x1000.
        assert_eq!(mqd_stride(&q), Ok(0x4000));
    }

    #[test]
    fn refusals_are_typed_and_leave_the_buffer_alone() {
        let ranges = [linux_mec_range(0); 4];
        let mut buf = [0xAAu8; 4 * 2048];
        let shared = XccDoorbell::Shared { dword: 0x10 };
        let mut q = queue();
        q.ring_bytes = 0x3000;
        assert_eq!(
            init_mqd_v9_4_3(0x8000_0000, &mut buf, &q, 4, 0, shared, &ranges),
            Err(MqdV9Error::RingSize { bytes: 0x3000 })
        );
        let mut q = queue();
        q.eop_bytes = 0;
        assert_eq!(
            init_mqd_v9_4_3(0x8000_0000, &mut buf, &q, 4, 0, shared, &ranges),
            Err(MqdV9Error::EopSize { bytes: 0 })
        );
        // Byte 0x100 is past XCC 0's range end 0xF8.
        assert_eq!(
            init_mqd_v9_4_3(
                0x8000_0000,
                &mut buf,
                &queue(),
                4,
                0,
                XccDoorbell::Shared { dword: 0x40 },
                &ranges
            ),
            Err(MqdV9Error::DoorbellOutsideRange {
                xcc: 0,
                dword: 0x40,
                range: linux_mec_range(0)
            })
        );
        // Kernel rings: XCC 1's doorbell 0x50 checked in XCC 1's range,
        // here wrongly given as XCC 0's.
        assert_eq!(
            init_mqd_v9_4_3(
                0x8000_0000,
                &mut buf,
                &queue(),
                4,
                0,
                XccDoorbell::KernelRing { ring_id: 0 },
                &ranges
            ),
            Err(MqdV9Error::DoorbellOutsideRange {
                xcc: 1,
                dword: 0x50,
                range: linux_mec_range(0)
            })
        );
        assert_eq!(
            init_mqd_v9_4_3(0x8000_0000, &mut buf, &queue(), 9, 0, shared, &ranges),
            Err(MqdV9Error::XccCount { xccs: 9 })
        );
        assert_eq!(
            init_mqd_v9_4_3(
                0x8000_0000,
                &mut buf[..4000],
                &queue(),
                4,
                0,
                shared,
                &ranges
            ),
            Err(MqdV9Error::Buffer {
                needed: 3 * 2048 + 2048,
                len: 4000
            })
        );
        assert_eq!(
            init_mqd_v9_4_3(0x8000_0000, &mut buf, &queue(), 4, 0, shared, &ranges[..1]),
            Ok(XccMqds {
                address: 0x8000_0000,
                stride: 2048,
                xccs: 4
            })
        );
        let mut fresh = [0xAAu8; 4 * 2048];
        assert_eq!(
            init_mqd_v9_4_3(
                0x8000_0000,
                &mut fresh,
                &queue(),
                4,
                0,
                XccDoorbell::KernelRing { ring_id: 0 },
                &ranges[..1]
            ),
            Err(MqdV9Error::MissingRange { xcc: 1 })
        );
        assert!(fresh.iter().all(|b| *b == 0xAA));
        let mut q = queue();
        q.vmid = 16;
        assert_eq!(
            init_mqd(0x8000_0000, 0x10, &q).err(),
            Some(MqdV9Error::Vmid { vmid: 16 })
        );
        assert_eq!(
            init_mqd(0x8000_0010, 0x10, &queue()).err(),
            Some(MqdV9Error::Misaligned {
                field: "MQD address",
                address: 0x8000_0010,
                align: 256
            })
        );
    }

    #[test]
    fn single_mqd_keeps_the_se4_to_se7_masks_init_mqd_writes() {
        let m = init_mqd(0x8000_0000, 0x10, &queue()).unwrap();
        // init_mqd() sets compute_static_thread_mgmt_se0..7 to all ones;
        // se4..7 share dwords 39..42 with the 9.4.3 XCC fields.
        assert_eq!(m.compute_current_logic_xcc_id, 0xFFFF_FFFF);
        assert_eq!(m.compute_restore_tg_chunk_size, 0xFFFF_FFFF);
        // update_mqd(): NO_UPDATE_RPTR stays set outside init_mqd_v9_4_3.
        assert_eq!(m.hqd.cp_hqd_pq_control, 0x1C01_450D);
    }

    /// `update_mqd()` encodes the EOP size as `min(0xA, order_base_2(bytes
    /// / 4) - 1)`. A size that is not a power of two would be encoded as
    /// less than the buffer (12 bytes as 8, 3 KiB as 2 KiB) and one below
    /// 8 bytes has no encoding: both are refused.
    #[test]
    fn eop_sizes_without_an_exact_encoding_are_refused() {
        assert_eq!(eop_size_field(4096), Ok(9));
        assert_eq!(eop_size_field(8), Ok(0));
        assert_eq!(eop_size_field(1 << 20), Ok(0xA));
        for bytes in [12, 4, 3 << 10] {
            assert_eq!(eop_size_field(bytes), Err(MqdV9Error::EopSize { bytes }));
        }
    }
}
