//! GC 9.4.3: the KIQ of each XCC and the device buffers a multi-XCC user
//! queue needs.
//!
//! The KIQ per XCC follows `gfx_v9_4_3_xcc_kiq_resume()` →
//! `gfx_v9_4_3_xcc_kiq_init_queue()` (on GC 9.4.2's one GC,
//! `gfx_v9_0_kiq_resume()` → `gfx_v9_0_kiq_init_queue()`, the same steps
//! on the same registers, with vega20's doorbell plan):
//! - [`kiq_setting`] is `gfx_v9_4_3_xcc_kiq_setting()`: tell the RLC
//!   which slot is the KIQ (`RLC_CP_SCHEDULERS.scheduler0 = me << 5 |
//!   pipe << 3 | queue`, then again with bit 7);
//! - [`kiq_mqd`] is `gfx_v9_4_3_xcc_mqd_init()` for the KIQ ring: a
//!   privileged kernel PM4 queue in VMID 0, built from the selected slot's
//!   current register values as Linux reads them;
//! - [`kiq_init_register`] is `gfx_v9_4_3_xcc_kiq_init_register()`: the
//!   HQD loaded register by register in Linux's order, with this XCC's
//!   `CP_MEC_DOORBELL_RANGE_LOWER/UPPER`, then `CP_PQ_STATUS.DOORBELL_ENABLE`;
//! - [`kiq_resume`] runs the three with the slot selected
//!   (`soc15_grbm_select()`), every wait bounded.
//!
//! The slot is the one `amdgpu_gfx_kiq_acquire()` picks on GC 9.4.3
//! (2 MECs × 4 pipes × 8 queues, `gfx_v9_4_3_sw_init()`): the highest
//! queue bit amdgpu's compute rings leave free whose queue is 0 and that
//! is not MEC 2 pipe 2 or 3, i.e. MEC 2 pipe 1 queue 0 ([`KIQ_SLOT`]).
//!
//! Packets on the KIQ: [`set_resources`] is `gfx_v9_4_3_kiq_set_resources()`
//! (`vmid_mask` 0, `queue_type` 0, the queue mask, the cleaner-shader
//! address, which barebell does not have: 0); MAP_QUEUES and UNMAP_QUEUES
//! are [`barebell_firmware_if::pm4`]'s, whose field positions
//! [`crate::gfx::kiq::v9::FACTS`] checks against `soc15d.h`.

use crate::bus::{Block, BlockError, RegisterBus};
use crate::gfx::hqd_v9::HqdSlot;
use crate::gfx::kiq::KiqMemory;
use crate::gfx::mqd::{DoorbellControl, EOP_BYTES, EopBuffer, MqdPage, PersistentState};
use crate::gfx::mqd_v9::{
    HQD_FIRST_DWORD, HqdWindowV9, MAX_XCCS, MQD_BYTES, MecDoorbellRange, MqdQueue, MqdV9Error,
    V9Mqd, XccDoorbell, XccMqds, init_mqd_v9_4_3,
};
use crate::mem::Dev;
use crate::regs::gc_9_4_3 as r;
use crate::time::Clock;
use barebell_facts::Fact;
use barebell_firmware_if::pm4;
use core::cell::UnsafeCell;

/// The KIQ's slot: MEC 2 (ME 2) pipe 1 queue 0, KFD numbering pipe 5.
pub const KIQ_SLOT: HqdSlot = HqdSlot {
    pipe_id: 5,
    queue_id: 0,
};
/// `GFX9_MEC_HPD_SIZE` (`gfx_v9_4_3.c`, a `.c` define: cited only): the
/// KIQ's EOP buffer.
pub const MEC_HPD_BYTES: u64 = 4096;
const _: () = assert!(EOP_BYTES >= MEC_HPD_BYTES);
/// `AMDGPU_GPU_PAGE_SIZE`.
pub const GPU_PAGE: u64 = 4096;
/// `RLC_CP_SCHEDULERS.scheduler0` and the enable bit
/// `gfx_v9_4_3_xcc_kiq_setting()` ORs in.
pub const SCHEDULER0_MASK: u32 = 0xFF;
pub const SCHEDULER_ENABLE: u32 = 0x80;
/// `CP_PQ_WPTR_POLL_CNTL.EN`.
pub const WPTR_POLL_EN_MASK: u32 = 0x8000_0000;
/// `CP_PQ_STATUS.DOORBELL_ENABLE`.
pub const PQ_STATUS_DOORBELL_ENABLE_MASK: u32 = 0x2;
/// `CP_MQD_CONTROL.VMID`.
pub const MQD_CONTROL_VMID_MASK: u32 = 0xF;
/// Bound on the dequeue of a KIQ slot left active (Linux waits
/// `usec_timeout`, 100 ms by default; barebell gives every dequeue 2.1 s).
pub const KIQ_DEQUEUE_TIMEOUT_NS: u64 = crate::gfx::hqd_v9::DEQUEUE_TIMEOUT_NS;

/// Why a GC 9.4.3 KIQ operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KiqV9Error {
    /// A register of XCC `xcc` has no base in the discovered bases, or a
    /// bounded wait on it ran out.
    Register { xcc: usize, error: BlockError },
    /// The KIQ ring is not a power of two of at least 256 bytes.
    RingSize { bytes: u64 },
    /// The KIQ doorbell dword lies outside XCC `xcc`'s MEC doorbell range.
    DoorbellOutsideRange {
        xcc: usize,
        dword: u32,
        range: MecDoorbellRange,
    },
    /// XCC index outside 0..8.
    Xcc { xcc: usize },
}

impl core::fmt::Display for KiqV9Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            KiqV9Error::Register { xcc, error } => write!(f, "XCC {xcc} KIQ: {error}"),
            KiqV9Error::RingSize { bytes } => write!(
                f,
                "KIQ ring of {bytes} bytes: the CP needs a power of two of at least 256 bytes"
            ),
            KiqV9Error::DoorbellOutsideRange { xcc, dword, range } => write!(
                f,
                "XCC {xcc} KIQ doorbell dword {dword:#x} is outside the MEC doorbell range {:#x}..={:#x}",
                range.lower_bytes, range.upper_bytes
            ),
            KiqV9Error::Xcc { xcc } => write!(f, "no XCC {xcc} on GC 9.4.3 (0..8)"),
        }
    }
}

/// The KIQ doorbell of XCC `xcc` as a 64-bit doorbell index
/// (`gfx_v9_4_3_kiq_ring_init()`... `amdgpu_gfx_kiq_init_ring()`:
/// `(doorbell_index.kiq + xcc * xcc_doorbell_range) << 1` dwords).
pub const fn kiq_doorbell_index(xcc: u32) -> u32 {
    crate::gfx::mqd_v9::layout1::KIQ_START + xcc * crate::gfx::mqd_v9::layout1::XCC_RANGE
}

/// `set_resource_bit` of `amdgpu_queue_mask_bit_to_set_resource_bit()`:
/// `mec * 32 + pipe * 8 + queue` (MEC counted from 0).
pub const fn set_resource_bit(mec: u32, pipe: u32, queue: u32) -> u32 {
    mec * 4 * 8 + pipe * 8 + queue
}

/// `gfx_v9_4_3_kiq_set_resources()`: `PACKET3(SET_RESOURCES, 6)`,
/// `vmid_mask` 0 and `queue_type` 0 (KIQ), the queue mask, the cleaner
/// shader address >> 8 (none: 0), OAC mask 0, GDS heap 0.
pub fn set_resources(queue_mask: u64) -> [u32; 8] {
    [
        pm4::header(pm4::opcode::SET_RESOURCES, 7),
        0,
        queue_mask as u32,
        (queue_mask >> 32) as u32,
        0,
        0,
        0,
        0,
    ]
}

fn reg_err(xcc: usize) -> impl Fn(BlockError) -> KiqV9Error {
    move |error| KiqV9Error::Register { xcc, error }
}

/// The register of the HQD window holding `struct v9_mqd` byte `field`
/// of [`HqdWindowV9`] (register = `CP_MQD_BASE_ADDR` + dword).
fn window_write<B: RegisterBus + ?Sized>(
    gc: Block<'_, B>,
    xcc: usize,
    field_offset: usize,
    value: u32,
) -> Result<(), KiqV9Error> {
    let at = gc
        .offset_nth(r::CP_MQD_BASE_ADDR, (field_offset / 4) as u32, 1)
        .map_err(reg_err(xcc))?;
    gc.bus.write32(at, value);
    Ok(())
}

fn window_read<B: RegisterBus + ?Sized>(
    gc: Block<'_, B>,
    xcc: usize,
    field_offset: usize,
) -> Result<u32, KiqV9Error> {
    let at = gc
        .offset_nth(r::CP_MQD_BASE_ADDR, (field_offset / 4) as u32, 1)
        .map_err(reg_err(xcc))?;
    Ok(gc.bus.read32(at))
}

macro_rules! off {
    ($f:ident) => {
        core::mem::offset_of!(HqdWindowV9, $f)
    };
}

/// `gfx_v9_4_3_xcc_kiq_setting()` on XCC `xcc`.
pub fn kiq_setting<B: RegisterBus + ?Sized>(
    gc: Block<'_, B>,
    xcc: usize,
    slot: HqdSlot,
) -> Result<(), KiqV9Error> {
    let e = reg_err(xcc);
    let sel = slot.select().map_err(|_| KiqV9Error::Xcc { xcc })?;
    let v = gc.read(r::RLC_CP_SCHEDULERS).map_err(&e)? & !SCHEDULER0_MASK
        | u32::from(sel.meid()) << 5
        | u32::from(sel.pipeid()) << 3
        | u32::from(sel.queueid());
    gc.write(r::RLC_CP_SCHEDULERS, v).map_err(&e)?;
    gc.write(r::RLC_CP_SCHEDULERS, v | SCHEDULER_ENABLE)
        .map_err(&e)?;
    Ok(())
}

/// Where a KIQ's ring, MQD and EOP buffer are (GPU VA = host address).
#[derive(Debug, Clone, Copy)]
pub struct KiqV9Parts<'a, const N: usize> {
    pub ring: Dev<'a, KiqMemory<N>>,
    pub mqd: Dev<'a, MqdPage>,
    pub eop: Dev<'a, EopBuffer>,
    /// 64-bit doorbell index ([`kiq_doorbell_index`], or the part's
    /// [`crate::gfx::mqd_v9::DoorbellPlan::kiq_doorbell`]).
    pub doorbell_index: u32,
    /// The MEC doorbell range the KIQ's init programs
    /// ([`crate::gfx::mqd_v9::DoorbellPlan::mec_range`]).
    pub mec_range: MecDoorbellRange,
}

/// `gfx_v9_4_3_xcc_mqd_init()` for the KIQ ring, with the KIQ slot
/// selected on `gc` (its register reads are the slot's).
pub fn kiq_mqd<B: RegisterBus + ?Sized, const N: usize>(
    gc: Block<'_, B>,
    xcc: usize,
    parts: &KiqV9Parts<'_, N>,
) -> Result<V9Mqd, KiqV9Error> {
    let e = reg_err(xcc);
    let ring_bytes = (N * 4) as u64;
    let queue_size = crate::gfx::mqd_v9::queue_size_field(ring_bytes)
        .map_err(|_| KiqV9Error::RingSize { bytes: ring_bytes })?;
    let mut m = V9Mqd::zeroed();
    m.header = crate::gfx::mqd_v9::MQD_HEADER;
    m.compute_pipelinestat_enable = 1;
    m.compute_static_thread_mgmt_se0 = u32::MAX;
    m.compute_static_thread_mgmt_se1 = u32::MAX;
    m.compute_static_thread_mgmt_se2 = u32::MAX;
    m.compute_static_thread_mgmt_se3 = u32::MAX;
    // `compute_misc_reserved = 3` and the dynamic CU mask address are
    // left 0: `V9Mqd` does not name those dwords and no register of the
    // window holds them.
    let h = &mut m.hqd;
    let eop = parts.eop.address() >> 8;
    h.cp_hqd_eop_base_addr_lo = eop as u32;
    h.cp_hqd_eop_base_addr_hi = (eop >> 32) as u32;
    // EOP_SIZE = order_base_2(GFX9_MEC_HPD_SIZE / 4) - 1.
    let eop_size = (MEC_HPD_BYTES / 4).trailing_zeros() - 1;
    h.cp_hqd_eop_control =
        gc.read(r::CP_HQD_EOP_CONTROL).map_err(&e)? & !r::EOP_CONTROL_EOP_SIZE_MASK | eop_size;
    let dword = parts.doorbell_index.saturating_mul(2);
    h.cp_hqd_pq_doorbell_control =
        DoorbellControl::from_bits(gc.read(r::CP_HQD_PQ_DOORBELL_CONTROL).map_err(&e)?)
            .with_doorbell_offset(dword)
            .with_doorbell_en(true)
            .with_doorbell_source(false)
            .with_doorbell_hit(false)
            .into_bits();
    h.cp_hqd_dequeue_request = 0;
    h.cp_hqd_pq_rptr = 0;
    h.cp_hqd_pq_wptr_lo = 0;
    h.cp_hqd_pq_wptr_hi = 0;
    let mqd = parts.mqd.address();
    h.cp_mqd_base_addr_lo = mqd as u32 & 0xFFFF_FFFC;
    h.cp_mqd_base_addr_hi = (mqd >> 32) as u32;
    h.cp_mqd_control = gc.read(r::CP_MQD_CONTROL).map_err(&e)? & !MQD_CONTROL_VMID_MASK;
    let ring = parts.ring.ring_address() >> 8;
    h.cp_hqd_pq_base_lo = ring as u32;
    h.cp_hqd_pq_base_hi = (ring >> 32) as u32;
    // RPTR_BLOCK_SIZE: Linux passes `(order_base_2(PAGE / 4) - 1) << 8`
    // to REG_SET_FIELD, which shifts it by the field's own 8 again and
    // masks it to nothing: the field ends up 0, and so it is here.
    h.cp_hqd_pq_control = r::PqControl::from_bits(gc.read(r::CP_HQD_PQ_CONTROL).map_err(&e)?)
        .with_queue_size(queue_size)
        .with_rptr_block_size(0)
        .with_unord_dispatch(false)
        .with_roq_pq_ib_flip(false)
        .with_priv_state(true)
        .with_kmd_queue(true)
        .into_bits();
    let rptr = parts.ring.rptr_address();
    h.cp_hqd_pq_rptr_report_addr_lo = rptr as u32 & 0xFFFF_FFFC;
    h.cp_hqd_pq_rptr_report_addr_hi = (rptr >> 32) as u32 & 0xFFFF;
    let wptr = parts.ring.wptr_address();
    h.cp_hqd_pq_wptr_poll_addr_lo = wptr as u32 & 0xFFFF_FFFC;
    h.cp_hqd_pq_wptr_poll_addr_hi = (wptr >> 32) as u32 & 0xFFFF;
    h.cp_hqd_pq_rptr = gc.read(r::CP_HQD_PQ_RPTR).map_err(&e)?;
    h.cp_hqd_vmid = 0;
    h.cp_hqd_persistent_state =
        PersistentState::from_bits(gc.read(r::CP_HQD_PERSISTENT_STATE).map_err(&e)?)
            .with_preload_size(crate::gfx::mqd_v9::PRELOAD_SIZE)
            .into_bits();
    h.cp_hqd_ib_control = r::IbControl::from_bits(gc.read(r::CP_HQD_IB_CONTROL).map_err(&e)?)
        .with_min_ib_avail_size(3)
        .into_bits();
    // gfx_v9_4_3_mqd_set_priority() changes only high-priority compute
    // rings; the KIQ keeps the slot's values.
    h.cp_hqd_quantum = window_read(gc, xcc, off!(cp_hqd_quantum))?;
    // "map_queues packet doesn't need activate the queue, so only kiq
    // need set this field."
    h.cp_hqd_active = 1;
    Ok(m)
}

/// XCC `xcc`'s MEC doorbell range and `CP_PQ_STATUS.DOORBELL_ENABLE`, as
/// the tail of `gfx_v9_4_3_xcc_kiq_init_register()` writes them (and as
/// tinygrad's `AM_GFX` init writes the range on MI300 before it loads a
/// queue directly, with no KIQ): what the direct mapping needs.
pub fn mec_doorbell_range<B: RegisterBus + ?Sized>(
    gc: Block<'_, B>,
    xcc: usize,
    range: MecDoorbellRange,
) -> Result<(), KiqV9Error> {
    let e = reg_err(xcc);
    gc.write(r::CP_MEC_DOORBELL_RANGE_LOWER, range.lower_bytes)
        .map_err(&e)?;
    gc.write(r::CP_MEC_DOORBELL_RANGE_UPPER, range.upper_bytes)
        .map_err(&e)?;
    gc.update(
        r::CP_PQ_STATUS,
        PQ_STATUS_DOORBELL_ENABLE_MASK,
        PQ_STATUS_DOORBELL_ENABLE_MASK,
    )
    .map_err(&e)?;
    Ok(())
}

/// `gfx_v9_4_3_xcc_kiq_init_register()` with the KIQ slot selected on
/// `gc`: loads `mqd` into the HQD and programs XCC `xcc`'s MEC doorbell
/// range `range` (Linux: [`crate::gfx::mqd_v9::linux_mec_range`]).
pub fn kiq_init_register<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    gc: Block<'_, B>,
    clock: &C,
    xcc: usize,
    mqd: &V9Mqd,
    range: MecDoorbellRange,
) -> Result<(), KiqV9Error> {
    let e = reg_err(xcc);
    let h = &mqd.hqd;
    let dword = DoorbellControl::from_bits(h.cp_hqd_pq_doorbell_control).doorbell_offset();
    if !range.contains_dword(dword) {
        return Err(KiqV9Error::DoorbellOutsideRange { xcc, dword, range });
    }
    // Disable write-pointer polling.
    gc.update(r::CP_PQ_WPTR_POLL_CNTL, WPTR_POLL_EN_MASK, 0)
        .map_err(&e)?;
    let w = |field: usize, v: u32| window_write(gc, xcc, field, v);
    w(off!(cp_hqd_eop_base_addr_lo), h.cp_hqd_eop_base_addr_lo)?;
    w(off!(cp_hqd_eop_base_addr_hi), h.cp_hqd_eop_base_addr_hi)?;
    w(off!(cp_hqd_eop_control), h.cp_hqd_eop_control)?;
    w(
        off!(cp_hqd_pq_doorbell_control),
        h.cp_hqd_pq_doorbell_control,
    )?;
    if gc.read(r::CP_HQD_ACTIVE).map_err(&e)? & r::HQD_ACTIVE_MASK != 0 {
        gc.write(r::CP_HQD_DEQUEUE_REQUEST, 1).map_err(&e)?;
        gc.poll(
            clock,
            r::CP_HQD_ACTIVE,
            r::HQD_ACTIVE_MASK,
            0,
            "KIQ slot inactive after its dequeue",
            KIQ_DEQUEUE_TIMEOUT_NS,
        )
        .map_err(&e)?;
        w(off!(cp_hqd_dequeue_request), h.cp_hqd_dequeue_request)?;
        w(off!(cp_hqd_pq_rptr), h.cp_hqd_pq_rptr)?;
        w(off!(cp_hqd_pq_wptr_lo), h.cp_hqd_pq_wptr_lo)?;
        w(off!(cp_hqd_pq_wptr_hi), h.cp_hqd_pq_wptr_hi)?;
    }
    w(off!(cp_mqd_base_addr_lo), h.cp_mqd_base_addr_lo)?;
    w(off!(cp_mqd_base_addr_hi), h.cp_mqd_base_addr_hi)?;
    w(off!(cp_mqd_control), h.cp_mqd_control)?;
    w(off!(cp_hqd_pq_base_lo), h.cp_hqd_pq_base_lo)?;
    w(off!(cp_hqd_pq_base_hi), h.cp_hqd_pq_base_hi)?;
    w(off!(cp_hqd_pq_control), h.cp_hqd_pq_control)?;
    w(
        off!(cp_hqd_pq_rptr_report_addr_lo),
        h.cp_hqd_pq_rptr_report_addr_lo,
    )?;
    w(
        off!(cp_hqd_pq_rptr_report_addr_hi),
        h.cp_hqd_pq_rptr_report_addr_hi,
    )?;
    w(
        off!(cp_hqd_pq_wptr_poll_addr_lo),
        h.cp_hqd_pq_wptr_poll_addr_lo,
    )?;
    w(
        off!(cp_hqd_pq_wptr_poll_addr_hi),
        h.cp_hqd_pq_wptr_poll_addr_hi,
    )?;
    gc.write(r::CP_MEC_DOORBELL_RANGE_LOWER, range.lower_bytes)
        .map_err(&e)?;
    gc.write(r::CP_MEC_DOORBELL_RANGE_UPPER, range.upper_bytes)
        .map_err(&e)?;
    w(
        off!(cp_hqd_pq_doorbell_control),
        h.cp_hqd_pq_doorbell_control,
    )?;
    w(off!(cp_hqd_pq_wptr_lo), h.cp_hqd_pq_wptr_lo)?;
    w(off!(cp_hqd_pq_wptr_hi), h.cp_hqd_pq_wptr_hi)?;
    w(off!(cp_hqd_vmid), h.cp_hqd_vmid)?;
    w(off!(cp_hqd_persistent_state), h.cp_hqd_persistent_state)?;
    w(off!(cp_hqd_active), h.cp_hqd_active)?;
    gc.update(
        r::CP_PQ_STATUS,
        PQ_STATUS_DOORBELL_ENABLE_MASK,
        PQ_STATUS_DOORBELL_ENABLE_MASK,
    )
    .map_err(&e)?;
    Ok(())
}

/// `gfx_v9_4_3_xcc_kiq_init_queue()` (one GC: `gfx_v9_0_kiq_init_queue()`)
/// on a fresh device (not in reset): [`kiq_setting`], then with
/// [`KIQ_SLOT`] selected [`kiq_mqd`] (written to `parts.mqd`) and
/// [`kiq_init_register`] with `parts.mec_range`, then ME 0 pipe 0 queue 0
/// selected again on every exit.
pub fn kiq_resume<B: RegisterBus + ?Sized, C: Clock + ?Sized, const N: usize>(
    gc: Block<'_, B>,
    clock: &C,
    xcc: usize,
    parts: &KiqV9Parts<'_, N>,
) -> Result<V9Mqd, KiqV9Error> {
    if xcc >= MAX_XCCS {
        return Err(KiqV9Error::Xcc { xcc });
    }
    let e = reg_err(xcc);
    kiq_setting(gc, xcc, KIQ_SLOT)?;
    let sel = KIQ_SLOT.select().map_err(|_| KiqV9Error::Xcc { xcc })?;
    gc.write(r::GRBM_GFX_CNTL, sel.into_bits()).map_err(&e)?;
    let done = (|| {
        let m = kiq_mqd(gc, xcc, parts)?;
        parts.mqd.write(&m);
        kiq_init_register(gc, clock, xcc, &m, parts.mec_range)?;
        Ok(m)
    })();
    let released = gc.write(r::GRBM_GFX_CNTL, 0).map_err(&e);
    let m = done?;
    released?;
    Ok(m)
}

/// `CP_HQD_PERSISTENT_STATE_DEFAULT` as `gfx_v9_4_3.c` defines it
/// (`#define CP_HQD_PERSISTENT_STATE_DEFAULT 0x0be05501`, a `.c` define:
/// cited only; the same value as `gc_11_0_0_default.h`'s).
pub const PERSISTENT_STATE_DEFAULT: u32 = 0x0be0_5501;

/// `gfx_v9_4_3_xcc_q_fini_register()` with the KIQ slot selected, then
/// ME 0 pipe 0 queue 0 again (`gfx_v9_4_3_xcc_kcq_fini_register()` /
/// the KIQ's `hw_fini` path): dequeue if active (bounded; on timeout the
/// slot is disabled by hand, as Linux does, and the timeout returned),
/// then the slot's registers cleared.
pub fn kiq_fini<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    gc: Block<'_, B>,
    clock: &C,
    xcc: usize,
) -> Result<(), KiqV9Error> {
    let e = reg_err(xcc);
    let sel = KIQ_SLOT.select().map_err(|_| KiqV9Error::Xcc { xcc })?;
    gc.write(r::GRBM_GFX_CNTL, sel.into_bits()).map_err(&e)?;
    let done = (|| {
        let mut timed_out = None;
        if gc.read(r::CP_HQD_ACTIVE).map_err(&e)? & r::HQD_ACTIVE_MASK != 0 {
            gc.write(r::CP_HQD_DEQUEUE_REQUEST, 1).map_err(&e)?;
            if let Err(w) = gc.poll(
                clock,
                r::CP_HQD_ACTIVE,
                r::HQD_ACTIVE_MASK,
                0,
                "KIQ slot inactive after its dequeue",
                KIQ_DEQUEUE_TIMEOUT_NS,
            ) {
                // "Manual disable if dequeue request times out".
                gc.write(r::CP_HQD_ACTIVE, 0).map_err(&e)?;
                timed_out = Some(w);
            }
            gc.write(r::CP_HQD_DEQUEUE_REQUEST, 0).map_err(&e)?;
        }
        let w = |field: usize, v: u32| window_write(gc, xcc, field, v);
        w(off!(cp_hqd_iq_timer), 0)?;
        w(off!(cp_hqd_ib_control), 0)?;
        w(off!(cp_hqd_persistent_state), PERSISTENT_STATE_DEFAULT)?;
        w(off!(cp_hqd_pq_doorbell_control), 0x4000_0000)?;
        w(off!(cp_hqd_pq_doorbell_control), 0)?;
        w(off!(cp_hqd_pq_rptr), 0)?;
        w(off!(cp_hqd_pq_wptr_hi), 0)?;
        w(off!(cp_hqd_pq_wptr_lo), 0)?;
        match timed_out {
            Some(error) => Err(KiqV9Error::Register { xcc, error }),
            None => Ok(()),
        }
    })();
    let released = gc.write(r::GRBM_GFX_CNTL, 0).map_err(&e);
    done.and(released)
}

/// One MQD per XCC, [`MQD_BYTES`] apart (no CWSR: `mqd_stride_v9()` is
/// `sizeof(struct v9_mqd)`), page-aligned, written by the CPU only before
/// the queue is mapped.
///
/// Not `Sync`: the CPU writes it only through [`XccMqdPages::init`] on
/// one thread; the device reads it after mapping.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct XccMqdPages(UnsafeCell<[u8; MAX_XCCS * MQD_BYTES]>);

impl XccMqdPages {
    pub const fn new() -> Self {
        XccMqdPages(UnsafeCell::new([0; MAX_XCCS * MQD_BYTES]))
    }

    /// The first MQD's address (XCC 0's).
    pub fn address(&self) -> u64 {
        self.0.get() as u64
    }

    /// `init_mqd_v9_4_3()` into these pages. Must not run while a queue
    /// named by them is mapped.
    pub fn init(
        &self,
        q: &MqdQueue,
        xccs: usize,
        logical_xcc_start: u32,
        doorbell: XccDoorbell,
        ranges: &[MecDoorbellRange],
    ) -> Result<XccMqds, MqdV9Error> {
        let mut buf = [0u8; MAX_XCCS * MQD_BYTES];
        let layout = init_mqd_v9_4_3(
            self.address(),
            &mut buf,
            q,
            xccs,
            logical_xcc_start,
            doorbell,
            ranges,
        )?;
        // SAFETY: the destination is this value's own buffer, of the same
        // length; it lends no reference into its bytes and is not `Sync`,
        // so no other CPU access runs meanwhile.
        unsafe {
            core::ptr::copy_nonoverlapping(buf.as_ptr(), self.0.get().cast::<u8>(), buf.len())
        };
        Ok(layout)
    }

    /// Writes `mqd` as XCC `xcc`'s, `xcc * sizeof(struct v9_mqd)` in (the
    /// stride `init_mqd_hiq_v9_4_3()` and `kfd_hiq_mqd_stride()` use), and
    /// returns its address; `None` past [`MAX_XCCS`]. Must not run while
    /// a queue named by these pages is mapped.
    pub fn write(&self, xcc: usize, mqd: &V9Mqd) -> Option<u64> {
        use zerocopy::IntoBytes;
        if xcc >= MAX_XCCS {
            return None;
        }
        let src = mqd.as_bytes();
        let at = xcc * MQD_BYTES;
        let len = src.len().min(MQD_BYTES);
        // SAFETY: `at + len` is at most `MAX_XCCS * MQD_BYTES`, inside this
        // value's buffer; it lends no reference into its bytes and is not
        // `Sync`, so no other CPU access runs meanwhile; `src` is a
        // separate value, so the ranges do not overlap.
        unsafe {
            let dst = self.0.get().cast::<u8>().add(at);
            core::ptr::copy_nonoverlapping(src.as_ptr(), dst, len);
        }
        Some(self.address() + at as u64)
    }

    /// Reads and clears XCC `xcc`'s `queue_doorbell_id0`, where the HWS
    /// logs a queue whose preemption it abandoned: the comment in
    /// `unmap_queues_cpsch()`, and `check_preemption_failed_v9_4_3()`,
    /// which reads it on every XCC's HIQ MQD and writes 0 back. `None` past
    /// [`MAX_XCCS`].
    pub fn take_queue_doorbell_id0(&self, xcc: usize) -> Option<u32> {
        use core::sync::atomic::{AtomicU32, Ordering};
        if xcc >= MAX_XCCS {
            return None;
        }
        let at = xcc * MQD_BYTES + core::mem::offset_of!(V9Mqd, queue_doorbell_id0);
        // SAFETY: `at + 4` is inside this value's buffer (`xcc` checked,
        // the field inside one MQD); the buffer is 4096-aligned and the
        // field's offset a multiple of 4, so the dword is aligned. The
        // device writes this dword concurrently, so it is only accessed
        // atomically here, and no reference into the buffer is lent.
        let cell = unsafe { AtomicU32::from_ptr(self.0.get().cast::<u8>().add(at).cast::<u32>()) };
        Some(cell.swap(0, Ordering::AcqRel))
    }

    /// A copy of the bytes (what `load_mqd_v9_4_3()` reads).
    pub fn bytes(&self) -> [u8; MAX_XCCS * MQD_BYTES] {
        // SAFETY: a copy of plain bytes; no CPU write runs meanwhile (not
        // `Sync`, no reference lent).
        unsafe { *self.0.get() }
    }
}

/// `check_preemption_failed_v9_4_3()`, after an UNMAP_QUEUES' fence:
/// reads and clears the `queue_doorbell_id0` of the first `xccs` HIQ
/// MQDs in `hiq_mqds` (one per XCC), and reports the first XCC whose
/// scheduler logged a queue it could not preempt.
pub fn check_preemption_failed(
    hiq_mqds: &XccMqdPages,
    xccs: usize,
) -> Result<(), crate::gfx::hws::HwsError> {
    let mut failed = None;
    // Every XCC's field is cleared, as KFD clears them, before reporting.
    for xcc in 0..xccs.min(MAX_XCCS) {
        let doorbell_offset = hiq_mqds.take_queue_doorbell_id0(xcc).unwrap_or(0);
        if doorbell_offset != 0 && failed.is_none() {
            failed = Some(crate::gfx::hws::HwsError::PreemptionFailed {
                xcc,
                doorbell_offset,
            });
        }
    }
    failed.map_or(Ok(()), Err)
}

impl Default for XccMqdPages {
    fn default() -> Self {
        Self::new()
    }
}

/// A runlist IB buffer in device memory (`RUNLIST_DWORDS`), written by
/// the CPU only while no RUN_LIST names it.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct RunlistIb<const DWORDS: usize>(UnsafeCell<[u32; DWORDS]>);

impl<const DWORDS: usize> RunlistIb<DWORDS> {
    pub const fn new() -> Self {
        RunlistIb(UnsafeCell::new([0; DWORDS]))
    }
    pub fn address(&self) -> u64 {
        self.0.get() as u64
    }
    /// Builds into the buffer through `f` (a local copy, then stored), so
    /// no reference into device memory escapes.
    pub fn fill<T>(&self, f: impl FnOnce(&mut [u32], u64) -> T) -> T {
        let mut local = [0u32; DWORDS];
        let out = f(&mut local, self.address());
        // SAFETY: this value's own buffer, same length; not `Sync`, no
        // reference lent, so no other CPU access runs meanwhile.
        unsafe {
            core::ptr::copy_nonoverlapping(local.as_ptr(), self.0.get().cast::<u32>(), DWORDS)
        };
        out
    }
}

impl<const DWORDS: usize> Default for RunlistIb<DWORDS> {
    fn default() -> Self {
        Self::new()
    }
}

const SH: &str = "gc_9_4_3_sh_mask.h";

/// Field masks this module writes, and the window registers it reaches by
/// MQD dword (register = `CP_MQD_BASE_ADDR` + dword - 128).
pub const FACTS: &[Fact] = &[
    Fact::constant(
        SH,
        "RLC_CP_SCHEDULERS__scheduler0_MASK",
        SCHEDULER0_MASK as u64,
    ),
    Fact::constant(
        SH,
        "CP_PQ_WPTR_POLL_CNTL__EN_MASK",
        WPTR_POLL_EN_MASK as u64,
    ),
    Fact::constant(
        SH,
        "CP_PQ_STATUS__DOORBELL_ENABLE_MASK",
        PQ_STATUS_DOORBELL_ENABLE_MASK as u64,
    ),
    Fact::constant(
        SH,
        "CP_MQD_CONTROL__VMID_MASK",
        MQD_CONTROL_VMID_MASK as u64,
    ),
    Fact::constant(
        "gc_9_4_3_offset.h",
        "regCP_HQD_QUANTUM",
        (r::CP_MQD_BASE_ADDR.offset as usize + off!(cp_hqd_quantum) / 4) as u64,
    ),
    Fact::constant(
        "gc_9_4_3_offset.h",
        "regCP_HQD_EOP_BASE_ADDR_HI",
        (r::CP_MQD_BASE_ADDR.offset as usize + off!(cp_hqd_eop_base_addr_hi) / 4) as u64,
    ),
    Fact::constant(
        "gc_9_4_3_offset.h",
        "regCP_HQD_PQ_BASE_HI",
        (r::CP_MQD_BASE_ADDR.offset as usize + off!(cp_hqd_pq_base_hi) / 4) as u64,
    ),
    Fact::constant(
        "gc_9_4_3_offset.h",
        "regCP_HQD_PQ_RPTR_REPORT_ADDR_HI",
        (r::CP_MQD_BASE_ADDR.offset as usize + off!(cp_hqd_pq_rptr_report_addr_hi) / 4) as u64,
    ),
    Fact::constant("soc15d.h", "PACKET3_SET_RESOURCES", 0xA0),
    Fact::constant("soc15d.h", "PACKET3_SET_RESOURCES_QUEUE_TYPE(1)", 1 << 29),
];

const _: () = assert!(HQD_FIRST_DWORD == 128);

#[cfg(test)]
mod tests {
    use super::*;

    /// `amdgpu_gfx_kiq_acquire()` on 2 MECs × 4 pipes × 8 queues: walking
    /// down from bit 63, the first queue-0 slot not on MEC 2 pipe 2/3 is
    /// bit 40 = MEC 2 (index 1) pipe 1 queue 0.
    #[test]
    fn kiq_slot_is_mec2_pipe1_queue0() {
        let sel = KIQ_SLOT.select().unwrap_or_else(|_| unreachable!());
        assert_eq!((sel.meid(), sel.pipeid(), sel.queueid()), (2, 1, 0));
        assert_eq!(set_resource_bit(1, 1, 0), 40);
    }

    /// `gfx_v9_4_3_xcc_kiq_fini_register()` asks for a dequeue only if
    /// `CP_HQD_ACTIVE` says the slot is active; an inactive slot gets its
    /// registers cleared and nothing else.
    #[test]
    fn kiq_fini_dequeues_only_an_active_slot() {
        use core::cell::RefCell;
        extern crate alloc;
        struct Bus {
            active: u32,
            writes: RefCell<alloc::vec::Vec<usize>>,
        }
        impl RegisterBus for Bus {
            fn read32(&self, _: usize) -> u32 {
                self.active
            }
            fn write32(&self, at: usize, _: u32) {
                self.writes.borrow_mut().push(at);
            }
        }
        struct Now;
        impl Clock for Now {
            fn now_ns(&self) -> u64 {
                0
            }
        }
        let bases = crate::regs::IpBases([0x1000; crate::regs::MAX_SEGMENTS]);
        let dequeue = r::CP_HQD_DEQUEUE_REQUEST.byte_offset(&bases).unwrap();
        let idle = Bus {
            active: 0,
            writes: RefCell::new(alloc::vec::Vec::new()),
        };
        kiq_fini(Block::new(&idle, bases), &Now, 0).unwrap();
        assert!(!idle.writes.borrow().contains(&dequeue));
        assert!(
            idle.writes.borrow().len() > 2,
            "the slot's registers are cleared"
        );
    }

    /// `PACKET3(PACKET3_SET_RESOURCES, 6)` = 3 << 30 | 6 << 16 | 0xA0 << 8.
    #[test]
    fn set_resources_header() {
        let p = set_resources(0x0303_0303);
        assert_eq!(p[0], 0xC006_A000);
        assert_eq!(p[1..4], [0, 0x0303_0303, 0]);
        // `lower_32_bits(queue_mask)` then `upper_32_bits(queue_mask)`
        // (`gfx_v9_4_3_kiq_set_resources()`).
        let p = set_resources(0x0000_0100_0000_0001);
        assert_eq!(p[2..4], [1, 0x100]);
    }
}
