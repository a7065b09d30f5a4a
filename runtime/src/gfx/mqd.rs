//! Compute MQDs (memory queue descriptors) for AQL queues, gfx11 and gfx12.
//!
//! An MQD is the CP's saved image of one hardware queue (HQD). Whoever maps
//! the queue hands the CP (or MES, or the KIQ) the MQD's address, and dwords
//! 128..=183 are, register for register, the HQD window `CP_MQD_BASE_ADDR ..=
//! CP_HQD_PQ_WPTR_HI`; direct HQD programming copies exactly that slice.
//!
//! The values follow `kfd_mqd_manager_v11.c` / `kfd_mqd_manager_v12.c`
//! (`init_mqd()` then `update_mqd()`, for `KFD_QUEUE_FORMAT_AQL`). What we
//! deliberately do differently, and why:
//! - **CWSR is off.** KFD sets QSWITCH_MODE and the context-save area only
//!   when `cwsr_enabled`; barebell has no trap handler and no save area yet,
//!   so a preempted queue cannot save waves. Dequeues therefore drain.
//! - **No PCIe-atomics bit** (`cp_hqd_hq_status0` bit 29, which KFD sets
//!   when the platform supports atomics): unknown here, so left clear.
//! - **Priority 0** (KFD's `set_priority()` with `q->priority == 0`, the
//!   lowest pipe priority).
//!
//! Both generations' compute MQDs are 512 dwords with the same HQD window
//! (v12 only renames dword 178 to `reserved_178`), but they are distinct
//! types, each checked against its own header, so that a future divergence
//! shows up as a conformance mismatch rather than as a silent mix-up.

use crate::gfx::error::MqdError;
use crate::ip::Generation;
use bitfield_struct::bitfield;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `regCP_HQD_PQ_CONTROL_DEFAULT` and friends (`gc_11_0_0_default.h`), the
/// kernel-queue values the KIQ and the MES pipes start from; checked as
/// facts in [`crate::gfx::kiq::hqd`].
pub const PQ_CONTROL_DEFAULT: u32 = 0x0030_8509;
pub const PERSISTENT_STATE_DEFAULT: u32 = 0x0be0_5501;
pub const IB_CONTROL_DEFAULT: u32 = 0x0030_0000;
pub const MQD_CONTROL_DEFAULT: u32 = 0x0000_0100;
pub const EOP_CONTROL_DEFAULT: u32 = 0x0000_0006;

/// The HQD register image: MQD dwords 128..=183, one field per register
/// from `CP_MQD_BASE_ADDR` to `CP_HQD_PQ_WPTR_HI`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub struct HqdRegisters {
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
    /// `cp_hqd_gds_resource_state` in v11, `reserved_178` in v12.
    pub dword_178: u32,
    pub cp_hqd_error: u32,
    pub cp_hqd_eop_wptr_mem: u32,
    pub cp_hqd_aql_control: u32,
    pub cp_hqd_pq_wptr_lo: u32,
    pub cp_hqd_pq_wptr_hi: u32,
}

/// Registers in the HQD window.
pub const HQD_DWORDS: usize = 56;
/// MQD dword holding `cp_mqd_base_addr_lo`.
pub const HQD_FIRST_DWORD: usize = 128;
const _: () = assert!(core::mem::size_of::<HqdRegisters>() == HQD_DWORDS * 4);

impl HqdRegisters {
    /// The window as dwords, in register order.
    pub fn dwords(&self) -> [u32; HQD_DWORDS] {
        let mut out = [0u32; HQD_DWORDS];
        out.as_mut_bytes().copy_from_slice(self.as_bytes());
        out
    }

    /// Rebuilds the image from register values read in window order.
    pub fn from_dwords(d: &[u32; HQD_DWORDS]) -> Self {
        let mut out = HqdRegisters::default();
        out.as_mut_bytes().copy_from_slice(d.as_bytes());
        out
    }

    /// Ring base in bytes (`CP_HQD_PQ_BASE` holds it in 256-byte units).
    pub fn ring_address(&self) -> u64 {
        join(self.cp_hqd_pq_base_lo, self.cp_hqd_pq_base_hi) << 8
    }

    pub fn rptr_report_address(&self) -> u64 {
        join(
            self.cp_hqd_pq_rptr_report_addr_lo,
            self.cp_hqd_pq_rptr_report_addr_hi,
        )
    }

    pub fn wptr_poll_address(&self) -> u64 {
        join(
            self.cp_hqd_pq_wptr_poll_addr_lo,
            self.cp_hqd_pq_wptr_poll_addr_hi,
        )
    }

    pub fn eop_address(&self) -> u64 {
        join(self.cp_hqd_eop_base_addr_lo, self.cp_hqd_eop_base_addr_hi) << 8
    }

    pub fn mqd_address(&self) -> u64 {
        join(self.cp_mqd_base_addr_lo, self.cp_mqd_base_addr_hi)
    }

    pub fn pq_control(&self) -> PqControl {
        PqControl::from_bits(self.cp_hqd_pq_control)
    }

    pub fn doorbell_control(&self) -> DoorbellControl {
        DoorbellControl::from_bits(self.cp_hqd_pq_doorbell_control)
    }

    /// Ring size in bytes that `QUEUE_SIZE` encodes: `2^(QUEUE_SIZE+1)`
    /// dwords (the inverse of `update_mqd()`'s `ffs(dwords) - 1 - 1`).
    pub fn ring_bytes(&self) -> Option<u64> {
        let q = u32::from(self.pq_control().queue_size());
        1u64.checked_shl(q + 1)?.checked_mul(4)
    }
}

fn join(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}
fn lo(x: u64) -> u32 {
    x as u32
}
fn hi(x: u64) -> u32 {
    (x >> 32) as u32
}

/// `CP_HQD_PQ_CONTROL` (`gc_11_0_0_sh_mask.h`, identical in gc 12.0.0).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct PqControl {
    /// log2(ring dwords) - 1.
    #[bits(6)]
    pub queue_size: u8,
    pub wptr_carry: bool,
    pub rptr_carry: bool,
    #[bits(6)]
    pub rptr_block_size: u8,
    pub queue_full_en: bool,
    pub pq_empty: bool,
    #[bits(2)]
    __: u8,
    /// 2 for AQL: the write pointer counts 64-byte slots.
    #[bits(2)]
    pub slot_based_wptr: u8,
    #[bits(2)]
    pub min_avail_size: u8,
    pub tmz: bool,
    pub exe_disable: bool,
    #[bits(2)]
    pub cache_policy: u8,
    /// `PQ_VOLATILE` in gc 11; reserved in gc 12.
    pub bit26: bool,
    pub no_update_rptr: bool,
    pub unord_dispatch: bool,
    pub tunnel_dispatch: bool,
    pub priv_state: bool,
    pub kmd_queue: bool,
}

/// `CP_HQD_PQ_DOORBELL_CONTROL`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct DoorbellControl {
    pub doorbell_mode: bool,
    pub doorbell_bif_drop: bool,
    /// Dword offset of the doorbell in the doorbell BAR.
    #[bits(26)]
    pub doorbell_offset: u32,
    pub doorbell_source: bool,
    pub doorbell_schd_hit: bool,
    pub doorbell_en: bool,
    pub doorbell_hit: bool,
}

/// `CP_HQD_PERSISTENT_STATE` (the fields KFD sets).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct PersistentState {
    pub preload_req: bool,
    #[bits(7)]
    __: u8,
    #[bits(10)]
    pub preload_size: u16,
    #[bits(12)]
    __: u16,
    pub qswitch_mode: bool,
    __: bool,
}

/// `CP_HQD_QUANTUM`.
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct Quantum {
    pub quantum_en: bool,
    #[bits(3)]
    __: u8,
    pub quantum_scale: bool,
    #[bits(3)]
    __: u8,
    #[bits(6)]
    pub quantum_duration: u8,
    #[bits(17)]
    __: u32,
    pub quantum_active: bool,
}

/// `CP_HQD_ACTIVE`.
pub const HQD_ACTIVE_MASK: u32 = 1;
/// `CP_MQD_CONTROL.PRIV_STATE`.
pub const MQD_CONTROL_PRIV_STATE_SHIFT: u32 = 8;
/// `CP_HQD_IB_CONTROL.MIN_IB_AVAIL_SIZE`.
pub const IB_CONTROL_MIN_IB_AVAIL_SIZE_SHIFT: u32 = 20;
/// `CP_HQD_AQL_CONTROL.CONTROL0`.
pub const AQL_CONTROL_CONTROL0_SHIFT: u32 = 0;
pub const AQL_CONTROL_CONTROL0_MASK: u32 = 0x7FFF;
/// `CP_HQD_EOP_CONTROL.EOP_SIZE` mask.
pub const EOP_CONTROL_EOP_SIZE_MASK: u32 = 0x3F;
/// `CP_HQD_EOP_RPTR.INIT_FETCHER`.
pub const EOP_RPTR_INIT_FETCHER_SHIFT: u32 = 31;

/// The MQD header dword KFD writes (`init_mqd()`): a PM4 type-3 header
/// the CP recognises the MQD by.
pub const MQD_HEADER: u32 = 0xC031_0800;

/// `cp_hqd_hq_status0` bit 14: the CP sets up DISPATCH_PTR (KFD sets it
/// for the debugger; we keep KFD's value).
pub const HQ_STATUS0_DISPATCH_PTR: u32 = 1 << 14;

/// Bytes of the EOP buffer barebell gives each queue: one page, which the
/// `EOP_SIZE` clamp in `update_mqd()` encodes as 9 (2^(9+1) dwords).
pub const EOP_BYTES: u64 = 4096;

/// One MQD in its own 4 KiB page, as `allocate_mqd()` does when MES owns
/// the MQD ("MES writes to areas beyond MQD size"). Page alignment also
/// satisfies every address alignment the CP wants of an MQD.
///
/// Like a `Cell`, the page is written through `&self` and never lends a
/// reference into its bytes (reads copy out), and it is not `Sync`, so
/// the CPU's writes cannot race each other. The device's accesses are
/// not the CPU's: writing the MQD of a queue the device is running hands
/// it a changed MQD mid-flight, a device-level error the mappers leave to
/// their caller (map a page again only after unmapping it), not a host
/// memory-safety matter.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct MqdPage(core::cell::UnsafeCell<[u8; 4096]>);

impl MqdPage {
    pub const fn new() -> Self {
        MqdPage(core::cell::UnsafeCell::new([0; 4096]))
    }

    /// The page's address, which is the MQD's address.
    pub fn address(&self) -> u64 {
        self.0.get() as u64
    }

    /// Copies of the first 2 KiB as the HQD register window.
    pub fn hqd(&self) -> HqdRegisters {
        let mut h = HqdRegisters::default();
        // SAFETY: the page is 4096 bytes; the window lies at 512..736; no
        // reference into the page exists (the type lends none) and it is
        // not `Sync`, so no CPU write runs meanwhile. The device may write
        // these bytes concurrently only after mapping, when a torn copy is
        // what a register read would also give.
        unsafe {
            core::ptr::copy_nonoverlapping(
                self.0.get().cast::<u8>().add(HQD_FIRST_DWORD * 4),
                h.as_mut_bytes().as_mut_ptr(),
                HQD_DWORDS * 4,
            )
        };
        h
    }

    /// Zeroes the page and writes `mqd` at its start. The page must not
    /// be mapped to the device (see the type's docs).
    pub fn write<M: IntoBytes + Immutable>(&self, mqd: &M) {
        let src = mqd.as_bytes();
        let len = src.len().min(4096);
        // SAFETY: both ranges lie inside the 4096-byte page; the type lends
        // no reference into its bytes and is not `Sync`, so nothing else
        // on the CPU reads or writes them during the copy (`src` is a
        // separate value, so the ranges do not overlap).
        unsafe {
            let dst = self.0.get().cast::<u8>();
            core::ptr::write_bytes(dst, 0, 4096);
            core::ptr::copy_nonoverlapping(src.as_ptr(), dst, len);
        }
    }

    /// Raw bytes, for a model that validates a submitted MQD.
    pub fn bytes(&self) -> [u8; 4096] {
        // SAFETY: a copy of plain bytes inside the page; no CPU write runs
        // meanwhile (not `Sync`, no reference lent).
        unsafe { *self.0.get() }
    }
}

impl Default for MqdPage {
    fn default() -> Self {
        Self::new()
    }
}

/// An EOP buffer ([`EOP_BYTES`]), 256-byte aligned as `CP_HQD_EOP_BASE_ADDR`
/// (bits 8 and up) requires; page-aligned for mapping.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct EopBuffer(core::cell::UnsafeCell<[u8; EOP_BYTES as usize]>);

// SAFETY: written only by the device; the CPU never touches its contents.
unsafe impl Sync for EopBuffer {}

impl EopBuffer {
    pub const fn new() -> Self {
        EopBuffer(core::cell::UnsafeCell::new([0; EOP_BYTES as usize]))
    }
    pub fn address(&self) -> u64 {
        self.0.get() as u64
    }
}

impl Default for EopBuffer {
    fn default() -> Self {
        Self::new()
    }
}

/// Everything `update_mqd()` takes from `struct queue_properties` for an
/// AQL queue, in GPU addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AqlMqdParams {
    pub mqd_address: u64,
    pub ring_address: u64,
    pub ring_bytes: u64,
    /// `&amd_queue_t::read_dispatch_id`.
    pub read_index_address: u64,
    /// `&amd_queue_t::write_dispatch_id`.
    pub write_index_address: u64,
    /// Doorbell offset in dwords of the doorbell BAR (a 64-bit doorbell
    /// index times two).
    pub doorbell_dword: u32,
    pub eop_address: u64,
    pub eop_bytes: u64,
    pub vmid: u8,
}

fn aligned(field: &'static str, address: u64, align: u64) -> Result<(), MqdError> {
    if address == 0 {
        return Err(MqdError::Missing { field });
    }
    if !address.is_multiple_of(align) {
        return Err(MqdError::Misaligned {
            field,
            address,
            align,
        });
    }
    Ok(())
}

/// `QUEUE_SIZE` for a ring of `bytes`: `ffs(bytes / 4) - 1 - 1`.
pub fn queue_size_field(bytes: u64) -> Result<u8, MqdError> {
    let err = MqdError::RingSize { bytes };
    if !bytes.is_power_of_two() || bytes < 256 {
        return Err(err);
    }
    let log2_dwords = (bytes / 4).trailing_zeros();
    let field = log2_dwords - 1;
    if field > 0x3F {
        return Err(err);
    }
    Ok(field as u8)
}

/// `EOP_SIZE` for an EOP buffer of `bytes`:
/// `min(0xA, ffs(bytes / 4 / 4))`.
pub fn eop_size_field(bytes: u64) -> Result<u32, MqdError> {
    if !bytes.is_power_of_two() || bytes < 16 {
        return Err(MqdError::EopSize { bytes });
    }
    let ffs = (bytes / 16).trailing_zeros() + 1;
    Ok(ffs.min(0xA))
}

/// The HQD image `init_mqd()` + `update_mqd()` produce for an AQL queue.
/// Identical in v11 and v12 for every field KFD sets.
pub fn aql_hqd(p: &AqlMqdParams) -> Result<HqdRegisters, MqdError> {
    let queue_size = queue_size_field(p.ring_bytes)?;
    aligned("MQD address", p.mqd_address, 256)?;
    aligned("ring address", p.ring_address, 256)?;
    aligned("read index address", p.read_index_address, 8)?;
    aligned("write index address", p.write_index_address, 8)?;
    aligned("EOP address", p.eop_address, 256)?;
    let eop_size = eop_size_field(p.eop_bytes)?;
    if p.doorbell_dword >= 1 << 26 {
        return Err(MqdError::DoorbellOffset {
            dword: p.doorbell_dword,
        });
    }
    if p.vmid > 15 {
        return Err(MqdError::Vmid { vmid: p.vmid });
    }
    let pq = PqControl::new()
        .with_rptr_block_size(5)
        .with_unord_dispatch(true)
        .with_queue_size(queue_size)
        .with_no_update_rptr(true)
        .with_slot_based_wptr(2)
        .with_queue_full_en(true);
    let doorbell = DoorbellControl::new()
        .with_doorbell_offset(p.doorbell_dword)
        .with_doorbell_bif_drop(true);
    Ok(HqdRegisters {
        cp_mqd_base_addr_lo: lo(p.mqd_address),
        cp_mqd_base_addr_hi: hi(p.mqd_address),
        cp_hqd_vmid: u32::from(p.vmid),
        cp_hqd_persistent_state: PersistentState::new()
            .with_preload_req(true)
            .with_preload_size(0x55)
            .into_bits(),
        cp_hqd_quantum: Quantum::new()
            .with_quantum_en(true)
            .with_quantum_scale(true)
            .with_quantum_duration(1)
            .into_bits(),
        cp_hqd_pq_base_lo: lo(p.ring_address >> 8),
        cp_hqd_pq_base_hi: hi(p.ring_address >> 8),
        cp_hqd_pq_rptr_report_addr_lo: lo(p.read_index_address),
        cp_hqd_pq_rptr_report_addr_hi: hi(p.read_index_address),
        cp_hqd_pq_wptr_poll_addr_lo: lo(p.write_index_address),
        cp_hqd_pq_wptr_poll_addr_hi: hi(p.write_index_address),
        cp_hqd_pq_doorbell_control: doorbell.into_bits(),
        cp_hqd_pq_control: pq.into_bits(),
        cp_hqd_ib_control: 3 << IB_CONTROL_MIN_IB_AVAIL_SIZE_SHIFT,
        cp_hqd_hq_status0: HQ_STATUS0_DISPATCH_PTR,
        cp_mqd_control: 1 << MQD_CONTROL_PRIV_STATE_SHIFT,
        cp_hqd_eop_base_addr_lo: lo(p.eop_address >> 8),
        cp_hqd_eop_base_addr_hi: hi(p.eop_address >> 8),
        cp_hqd_eop_control: eop_size,
        cp_hqd_aql_control: 1 << AQL_CONTROL_CONTROL0_SHIFT,
        ..HqdRegisters::default()
    })
}

macro_rules! compute_mqd {
    ($(#[$doc:meta])* $name:ident, $header:literal, $ctype:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, IntoBytes, Immutable)]
        #[repr(C)]
        pub struct $name {
            pub header: u32,
            _r1: [u32; 10],
            pub compute_pipelinestat_enable: u32,
            _r12: [u32; 11],
            pub compute_static_thread_mgmt_se0: u32,
            pub compute_static_thread_mgmt_se1: u32,
            _r25: u32,
            pub compute_static_thread_mgmt_se2: u32,
            pub compute_static_thread_mgmt_se3: u32,
            _r28: [u32; 16],
            pub compute_static_thread_mgmt_se4: u32,
            pub compute_static_thread_mgmt_se5: u32,
            pub compute_static_thread_mgmt_se6: u32,
            pub compute_static_thread_mgmt_se7: u32,
            _r48: [u32; 80],
            /// Dwords 128..=183.
            pub hqd: HqdRegisters,
            _r184: [u32; 328],
        }

        const _: () = {
            assert!(core::mem::size_of::<$name>() == 2048);
            assert!(core::mem::offset_of!($name, compute_pipelinestat_enable) == 11 * 4);
            assert!(core::mem::offset_of!($name, compute_static_thread_mgmt_se0) == 23 * 4);
            assert!(core::mem::offset_of!($name, compute_static_thread_mgmt_se2) == 26 * 4);
            assert!(core::mem::offset_of!($name, compute_static_thread_mgmt_se4) == 44 * 4);
            assert!(core::mem::offset_of!($name, compute_static_thread_mgmt_se7) == 47 * 4);
            assert!(core::mem::offset_of!($name, hqd) == HQD_FIRST_DWORD * 4);
        };

        impl $name {
            /// The MQD `init_mqd()`/`update_mqd()` build for an AQL queue.
            pub fn aql(p: &AqlMqdParams) -> Result<Self, MqdError> {
                let hqd = aql_hqd(p)?;
                Ok($name {
                    header: MQD_HEADER,
                    _r1: [0; 10],
                    compute_pipelinestat_enable: 1,
                    _r12: [0; 11],
                    compute_static_thread_mgmt_se0: u32::MAX,
                    compute_static_thread_mgmt_se1: u32::MAX,
                    _r25: 0,
                    compute_static_thread_mgmt_se2: u32::MAX,
                    compute_static_thread_mgmt_se3: u32::MAX,
                    _r28: [0; 16],
                    compute_static_thread_mgmt_se4: u32::MAX,
                    compute_static_thread_mgmt_se5: u32::MAX,
                    compute_static_thread_mgmt_se6: u32::MAX,
                    compute_static_thread_mgmt_se7: u32::MAX,
                    _r48: [0; 80],
                    hqd,
                    _r184: [0; 328],
                })
            }

            /// A kernel queue's MQD around `hqd`, with the non-HQD fields
            /// `gfx_v11_0_compute_mqd_init()` sets that this struct names
            /// (header, pipeline statistics, SE0..3 thread masks; its
            /// `compute_misc_reserved = 7` is in reserved padding here and
            /// stays 0: the HQD load does not read it).
            pub fn kernel_queue(hqd: HqdRegisters) -> Self {
                $name {
                    header: MQD_HEADER,
                    _r1: [0; 10],
                    compute_pipelinestat_enable: 1,
                    _r12: [0; 11],
                    compute_static_thread_mgmt_se0: u32::MAX,
                    compute_static_thread_mgmt_se1: u32::MAX,
                    _r25: 0,
                    compute_static_thread_mgmt_se2: u32::MAX,
                    compute_static_thread_mgmt_se3: u32::MAX,
                    _r28: [0; 16],
                    compute_static_thread_mgmt_se4: 0,
                    compute_static_thread_mgmt_se5: 0,
                    compute_static_thread_mgmt_se6: 0,
                    compute_static_thread_mgmt_se7: 0,
                    _r48: [0; 80],
                    hqd,
                    _r184: [0; 328],
                }
            }

            /// Layout facts: the size and every named field's offset,
            /// including each HQD window register.
            pub const FACTS: &[barebell_facts::Fact] = &hqd_facts!($name, $header, $ctype);
        }
    };
}

macro_rules! hqd_facts {
    ($name:ident, $header:literal, $ctype:literal) => {
        hqd_facts!(@ $name, $header, $ctype;
            [header, compute_pipelinestat_enable,
             compute_static_thread_mgmt_se0, compute_static_thread_mgmt_se1,
             compute_static_thread_mgmt_se2, compute_static_thread_mgmt_se3,
             compute_static_thread_mgmt_se4, compute_static_thread_mgmt_se5,
             compute_static_thread_mgmt_se6, compute_static_thread_mgmt_se7]
            [cp_mqd_base_addr_lo, cp_mqd_base_addr_hi, cp_hqd_active, cp_hqd_vmid,
             cp_hqd_persistent_state, cp_hqd_pipe_priority, cp_hqd_queue_priority,
             cp_hqd_quantum, cp_hqd_pq_base_lo, cp_hqd_pq_base_hi, cp_hqd_pq_rptr,
             cp_hqd_pq_rptr_report_addr_lo, cp_hqd_pq_rptr_report_addr_hi,
             cp_hqd_pq_wptr_poll_addr_lo, cp_hqd_pq_wptr_poll_addr_hi,
             cp_hqd_pq_doorbell_control, reserved_144, cp_hqd_pq_control,
             cp_hqd_ib_base_addr_lo, cp_hqd_ib_base_addr_hi, cp_hqd_ib_rptr,
             cp_hqd_ib_control, cp_hqd_iq_timer, cp_hqd_iq_rptr, cp_hqd_dequeue_request,
             cp_hqd_dma_offload, cp_hqd_sema_cmd, cp_hqd_msg_type,
             cp_hqd_atomic0_preop_lo, cp_hqd_atomic0_preop_hi,
             cp_hqd_atomic1_preop_lo, cp_hqd_atomic1_preop_hi,
             cp_hqd_hq_status0, cp_hqd_hq_control0, cp_mqd_control,
             cp_hqd_hq_status1, cp_hqd_hq_control1,
             cp_hqd_eop_base_addr_lo, cp_hqd_eop_base_addr_hi, cp_hqd_eop_control,
             cp_hqd_eop_rptr, cp_hqd_eop_wptr, cp_hqd_eop_done_events,
             cp_hqd_ctx_save_base_addr_lo, cp_hqd_ctx_save_base_addr_hi,
             cp_hqd_ctx_save_control, cp_hqd_cntl_stack_offset, cp_hqd_cntl_stack_size,
             cp_hqd_wg_state_offset, cp_hqd_ctx_save_size, cp_hqd_error,
             cp_hqd_eop_wptr_mem, cp_hqd_aql_control, cp_hqd_pq_wptr_lo, cp_hqd_pq_wptr_hi])
    };
    (@ $name:ident, $header:literal, $ctype:literal; [$($top:ident),*] [$($reg:ident),*]) => {
        [
            barebell_facts::Fact::size($header, $ctype, core::mem::size_of::<$name>()),
            $(barebell_facts::Fact::offset($header, $ctype, stringify!($top),
                core::mem::offset_of!($name, $top)),)*
            $(barebell_facts::Fact::offset($header, $ctype, stringify!($reg),
                core::mem::offset_of!($name, hqd) + core::mem::offset_of!(HqdRegisters, $reg)),)*
        ]
    };
}

compute_mqd!(
    /// `struct v11_compute_mqd` (`v11_structs.h`): the fields barebell sets
    /// are named, the rest are reserved padding of the right size.
    ComputeMqdV11,
    "v11_structs.h",
    "struct v11_compute_mqd"
);
compute_mqd!(
    /// `struct v12_compute_mqd` (`v12_structs.h`).
    ComputeMqdV12,
    "v12_structs.h",
    "struct v12_compute_mqd"
);

/// Builds the AQL MQD for `generation` into `page`, which must not be
/// mapped to the device (no mapper has handed it out, or it has been
/// unmapped; see [`MqdPage`]).
pub fn build_aql(
    generation: Generation,
    page: &MqdPage,
    p: &AqlMqdParams,
) -> Result<HqdRegisters, MqdError> {
    if p.mqd_address != page.address() {
        return Err(MqdError::Misaligned {
            field: "MQD address (must be the page's)",
            address: p.mqd_address,
            align: 4096,
        });
    }
    match generation {
        Generation::Gfx90a | Generation::Gfx94 => {
            Err(crate::ip::Unsupported::new("v9 AQL MQD", generation).into())
        }
        Generation::Gfx11 => {
            let m = ComputeMqdV11::aql(p)?;
            page.write(&m);
            Ok(m.hqd)
        }
        Generation::Gfx12 => {
            let m = ComputeMqdV12::aql(p)?;
            page.write(&m);
            Ok(m.hqd)
        }
    }
}

macro_rules! field_facts {
    ($h:literal) => {
        [
            c(
                $h,
                "CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK",
                PqControl::new().with_queue_size(0x3F).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_CONTROL__RPTR_BLOCK_SIZE_MASK",
                PqControl::new().with_rptr_block_size(0x3F).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_CONTROL__QUEUE_FULL_EN_MASK",
                PqControl::new().with_queue_full_en(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_CONTROL__SLOT_BASED_WPTR_MASK",
                PqControl::new().with_slot_based_wptr(3).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_CONTROL__NO_UPDATE_RPTR_MASK",
                PqControl::new().with_no_update_rptr(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_CONTROL__UNORD_DISPATCH_MASK",
                PqControl::new().with_unord_dispatch(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_CONTROL__PRIV_STATE_MASK",
                PqControl::new().with_priv_state(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_CONTROL__KMD_QUEUE_MASK",
                PqControl::new().with_kmd_queue(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_BIF_DROP_MASK",
                DoorbellControl::new()
                    .with_doorbell_bif_drop(true)
                    .into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK",
                DoorbellControl::new()
                    .with_doorbell_offset(0x3FF_FFFF)
                    .into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK",
                DoorbellControl::new().with_doorbell_en(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_HIT_MASK",
                DoorbellControl::new().with_doorbell_hit(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PERSISTENT_STATE__PRELOAD_REQ_MASK",
                PersistentState::new().with_preload_req(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PERSISTENT_STATE__PRELOAD_SIZE_MASK",
                PersistentState::new().with_preload_size(0x3FF).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_PERSISTENT_STATE__QSWITCH_MODE_MASK",
                PersistentState::new().with_qswitch_mode(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_QUANTUM__QUANTUM_EN_MASK",
                Quantum::new().with_quantum_en(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_QUANTUM__QUANTUM_SCALE_MASK",
                Quantum::new().with_quantum_scale(true).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_QUANTUM__QUANTUM_DURATION_MASK",
                Quantum::new().with_quantum_duration(0x3F).into_bits(),
            ),
            c(
                $h,
                "CP_HQD_QUANTUM__QUANTUM_ACTIVE_MASK",
                Quantum::new().with_quantum_active(true).into_bits(),
            ),
            c($h, "CP_HQD_ACTIVE__ACTIVE_MASK", HQD_ACTIVE_MASK),
            c(
                $h,
                "CP_MQD_CONTROL__PRIV_STATE__SHIFT",
                MQD_CONTROL_PRIV_STATE_SHIFT,
            ),
            c(
                $h,
                "CP_HQD_IB_CONTROL__MIN_IB_AVAIL_SIZE__SHIFT",
                IB_CONTROL_MIN_IB_AVAIL_SIZE_SHIFT,
            ),
            c(
                $h,
                "CP_HQD_AQL_CONTROL__CONTROL0__SHIFT",
                AQL_CONTROL_CONTROL0_SHIFT,
            ),
            c(
                $h,
                "CP_HQD_AQL_CONTROL__CONTROL0_MASK",
                AQL_CONTROL_CONTROL0_MASK,
            ),
            c(
                $h,
                "CP_HQD_EOP_CONTROL__EOP_SIZE_MASK",
                EOP_CONTROL_EOP_SIZE_MASK,
            ),
            c(
                $h,
                "CP_HQD_EOP_RPTR__INIT_FETCHER__SHIFT",
                EOP_RPTR_INIT_FETCHER_SHIFT,
            ),
        ]
    };
}

const fn c(h: &'static str, e: &'static str, v: u32) -> barebell_facts::Fact {
    barebell_facts::Fact::constant(h, e, v as u64)
}

/// Every MQD fact: both layouts, and each register field barebell encodes,
/// against both generations' `sh_mask` headers.
pub const FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    ComputeMqdV11::FACTS,
    ComputeMqdV12::FACTS,
    field_facts!("gc_11_0_0_sh_mask.h"),
    field_facts!("gc_12_0_0_sh_mask.h"),
    [c(
        "gc_11_0_0_sh_mask.h",
        "CP_HQD_PQ_CONTROL__PQ_VOLATILE_MASK",
        PqControl::new().with_bit26(true).into_bits()
    ),],
);

#[cfg(test)]
mod tests {
    use super::*;

    fn params(vmid: u8) -> AqlMqdParams {
        AqlMqdParams {
            mqd_address: 0x10_0000,
            ring_address: 0x20_0000,
            ring_bytes: 4096,
            read_index_address: 0x30_0080,
            write_index_address: 0x30_0038,
            doorbell_dword: 0x40,
            eop_address: 0x1234_5600,
            eop_bytes: 2048,
            vmid,
        }
    }

    /// `CP_HQD_VMID.VMID` is four bits (`CP_HQD_VMID__VMID_MASK` 0xf in
    /// gc_11_0_0_sh_mask.h): VMID 15 is the last one an HQD can hold.
    #[test]
    fn vmids_up_to_15_fit_and_16_is_refused() {
        assert!(aql_hqd(&params(15)).is_ok());
        assert_eq!(
            aql_hqd(&params(16)).err(),
            Some(MqdError::Vmid { vmid: 16 })
        );
    }

    /// The doorbell control word of an AQL queue is KFD's (`update_mqd()`
    /// in `kfd_mqd_manager_v11.c`): the doorbell's dword offset, and
    /// `DOORBELL_BIF_DROP` for AQL; the enable is not KFD's to set. The raw
    /// word is checked against `gc_11_0_0_sh_mask.h`'s shifts
    /// (`DOORBELL_OFFSET` at bit 2, `DOORBELL_BIF_DROP` at bit 1), and the
    /// accessor reads the same fields back.
    #[test]
    fn the_doorbell_control_reads_back() {
        let h = aql_hqd(&params(1)).unwrap();
        assert_eq!(h.cp_hqd_pq_doorbell_control, 0x40 << 2 | 1 << 1);
        let d = h.doorbell_control();
        assert_eq!(d.doorbell_offset(), 0x40);
        assert!(d.doorbell_bif_drop());
        assert!(!d.doorbell_en());
    }

    /// `CP_HQD_EOP_BASE_ADDR` holds the address >> 8; the accessor gives
    /// back the address the MQD was built with.
    #[test]
    fn the_eop_address_reads_back() {
        let h = aql_hqd(&params(1)).unwrap();
        assert_eq!(h.cp_hqd_eop_base_addr_lo, 0x12_3456);
        assert_eq!(h.eop_address(), 0x1234_5600);
    }
}
