//! Direct HQD load and dequeue on GC 9.4.3, one XCC at a time.
//!
//! [`hqd_load`] is `kgd_gfx_v9_4_3_hqd_load()`: select the slot through
//! `GRBM_GFX_CNTL` (`kgd_gfx_v9_acquire_queue()` → `soc15_grbm_select()`),
//! copy MQD dwords 128..=186 into `CP_MQD_BASE_ADDR ..=
//! CP_HQD_AQL_DISPATCH_ID_HI`, enable the doorbell, prime the write pointer
//! and its one-shot poll, start the EOP fetcher, set `CP_HQD_ACTIVE`, and
//! select ME 0 pipe 0 queue 0 again. [`load_mqd_v9_4_3`] runs it for each
//! XCC with that XCC's MQD (`load_mqd_v9_4_3()`), and [`destroy_mqd_v9_4_3`]
//! dequeues each (`kgd_gfx_v9_hqd_destroy()`), every wait bounded.
//!
//! Each XCC is a [`Block`] with that XCC's GC segment bases from discovery
//! (`GET_INST(GC, xcc)`); the caller owns `GRBM_GFX_CNTL` of those XCCs
//! while a call runs (Linux holds `srbm_mutex`).
//!
//! One addition to Linux: before loading, barebell reads `CP_HQD_ACTIVE`
//! and refuses a slot that is already active ([`HqdV9Error::Busy`]) rather
//! than loading over a live queue.

use crate::bus::{Block, BlockError, RegisterBus, WaitError};
use crate::gfx::mqd::DoorbellControl;
use crate::gfx::mqd_v9::{HQD_FIRST_DWORD, MQD_BYTES, V9Mqd, XccMqds};
use crate::regs::gc_9_4_3 as r;
use crate::time::Clock;
use barebell_facts::Fact;

/// `num_pipe_per_mec` and `num_queue_per_pipe` (`gfx_v9_4_3_sw_init()`).
pub const PIPES_PER_MEC: u8 = 4;
pub const QUEUES_PER_PIPE: u8 = 8;
/// MECs per XCC KFD addresses (`pipe_id / num_pipe_per_mec + 1` is ME 1
/// or 2).
pub const MECS: u8 = 2;
/// `DRAIN_PIPE` of `enum hqd_dequeue_request_type`
/// (`amdgpu_amdkfd_gfx_v9.h`... declared in a `.c`/private header, so no
/// fact checks it; it is 1 in every generation's copy).
pub const DEQUEUE_DRAIN_PIPE: u32 = 1;
const _: () = assert!(DEQUEUE_DRAIN_PIPE & !r::DEQUEUE_REQ_MASK == 0);
/// Dequeue bound: the 2.1 s barebell gives every HQD dequeue.
pub const DEQUEUE_TIMEOUT_NS: u64 = 2_100_000_000;

/// A queue slot as KFD names it: `pipe_id` across the MECs (ME =
/// `pipe_id / 4 + 1`), `queue_id` inside the pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HqdSlot {
    pub pipe_id: u8,
    pub queue_id: u8,
}

impl HqdSlot {
    /// `GRBM_GFX_CNTL` selecting the slot (`kgd_gfx_v9_acquire_queue()`).
    pub fn select(self) -> Result<r::GrbmGfxCntl, HqdV9Error> {
        if self.pipe_id >= PIPES_PER_MEC * MECS || self.queue_id >= QUEUES_PER_PIPE {
            return Err(HqdV9Error::Slot {
                pipe_id: self.pipe_id,
                queue_id: self.queue_id,
            });
        }
        Ok(r::GrbmGfxCntl::new()
            .with_meid(self.pipe_id / PIPES_PER_MEC + 1)
            .with_pipeid(self.pipe_id % PIPES_PER_MEC)
            .with_queueid(self.queue_id))
    }

    /// `(uint32_t)kgd_gfx_v9_get_queue_mask()`: bit
    /// `pipe_id * queues_per_pipe + queue_id` of a 64-bit mask, truncated
    /// to the register's 32 bits (0 for MEC 2's pipes, as in Linux).
    pub fn poll_mask(self) -> u32 {
        let bit = u32::from(self.pipe_id) * u32::from(QUEUES_PER_PIPE) + u32::from(self.queue_id);
        1u64.checked_shl(bit).unwrap_or(0) as u32
    }
}

/// Why a direct HQD operation on GC 9.4.3 failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HqdV9Error {
    /// A register of the XCC has no base in the discovered bases.
    Register { xcc: usize, error: BlockError },
    /// No such slot on a GC 9.4.3 XCC.
    Slot { pipe_id: u8, queue_id: u8 },
    /// The slot already runs a queue.
    Busy { xcc: usize, slot: HqdSlot },
    /// `CP_HQD_ACTIVE` did not clear within the bound after a dequeue.
    Dequeue { xcc: usize, error: WaitError },
    /// The MQD buffer does not hold XCC `xcc`'s MQD.
    MissingMqd { xcc: usize },
    /// Fewer register blocks than MQDs.
    MissingXcc { xcc: usize },
}

impl core::fmt::Display for HqdV9Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            HqdV9Error::Register { xcc, error } => write!(f, "XCC {xcc}: {error}"),
            HqdV9Error::Slot { pipe_id, queue_id } => write!(
                f,
                "no HQD slot pipe {pipe_id} queue {queue_id} on GC 9.4.3 (pipes 0..8, queues 0..8)"
            ),
            HqdV9Error::Busy { xcc, slot } => write!(
                f,
                "XCC {xcc}: HQD pipe {} queue {} is already active",
                slot.pipe_id, slot.queue_id
            ),
            HqdV9Error::Dequeue { xcc, error } => write!(f, "XCC {xcc}: dequeue failed: {error}"),
            HqdV9Error::MissingMqd { xcc } => {
                write!(f, "the MQD buffer ends before XCC {xcc}'s MQD")
            }
            HqdV9Error::MissingXcc { xcc } => write!(f, "no register block for XCC {xcc}"),
        }
    }
}

/// How far the HQD load copies the MQD into registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HqdWindow {
    /// `kgd_gfx_v9_4_3_hqd_load()`: `CP_MQD_BASE_ADDR ..=
    /// CP_HQD_AQL_DISPATCH_ID_HI`, 59 registers.
    Gc9_4_3,
    /// `kgd_gfx_v9_hqd_load()` (GC 9.4.2 and older gfx9): `CP_MQD_BASE_ADDR
    /// ..= CP_HQD_PQ_WPTR_HI`, 56 registers; the GC has none at the three
    /// dwords after.
    Gfx9,
}

impl HqdWindow {
    /// Registers copied, from `CP_MQD_BASE_ADDR`.
    pub const fn dwords(self) -> usize {
        match self {
            HqdWindow::Gc9_4_3 => r::HQD_WINDOW_DWORDS,
            HqdWindow::Gfx9 => {
                (r::CP_HQD_PQ_WPTR_HI.offset - r::CP_MQD_BASE_ADDR.offset + 1) as usize
            }
        }
    }
}

/// `kgd_gfx_v9_4_3_hqd_load()` on one XCC. `wptr_poll` is the queue's
/// write-pointer address (`p->write_ptr`), `None` for a queue without one
/// (no poll is armed then, as in Linux).
pub fn hqd_load<B: RegisterBus + ?Sized>(
    gc: Block<'_, B>,
    xcc: usize,
    slot: HqdSlot,
    mqd: &V9Mqd,
    wptr_poll: Option<u64>,
) -> Result<(), HqdV9Error> {
    hqd_load_window(gc, xcc, slot, mqd, wptr_poll, HqdWindow::Gc9_4_3)
}

/// [`hqd_load`] copying `window` (`kgd_gfx_v9_hqd_load()` on GC 9.4.2).
pub fn hqd_load_window<B: RegisterBus + ?Sized>(
    gc: Block<'_, B>,
    xcc: usize,
    slot: HqdSlot,
    mqd: &V9Mqd,
    wptr_poll: Option<u64>,
    window: HqdWindow,
) -> Result<(), HqdV9Error> {
    let select = slot.select()?;
    let reg = |e| HqdV9Error::Register { xcc, error: e };
    gc.write(r::GRBM_GFX_CNTL, select.into_bits())
        .map_err(reg)?;
    let loaded = load_selected(gc, xcc, slot, mqd, wptr_poll, window);
    // kgd_gfx_v9_release_queue(): ME 0 pipe 0 queue 0 VMID 0 again, on
    // every exit.
    let released = gc.write(r::GRBM_GFX_CNTL, 0).map_err(reg);
    loaded.and(released)
}

fn load_selected<B: RegisterBus + ?Sized>(
    gc: Block<'_, B>,
    xcc: usize,
    slot: HqdSlot,
    mqd: &V9Mqd,
    wptr_poll: Option<u64>,
    window: HqdWindow,
) -> Result<(), HqdV9Error> {
    let reg = |e| HqdV9Error::Register { xcc, error: e };
    if gc.read(r::CP_HQD_ACTIVE).map_err(reg)? & r::HQD_ACTIVE_MASK != 0 {
        return Err(HqdV9Error::Busy { xcc, slot });
    }
    let h = &mqd.hqd;
    // The window registers are consecutive dwords from CP_MQD_BASE_ADDR.
    for (i, d) in (0u32..).zip(h.dwords().into_iter().take(window.dwords())) {
        let at = gc.offset_nth(r::CP_MQD_BASE_ADDR, i, 1).map_err(reg)?;
        gc.bus.write32(at, d);
    }
    let doorbell = DoorbellControl::from_bits(h.cp_hqd_pq_doorbell_control)
        .with_doorbell_en(true)
        .into_bits();
    gc.write(r::CP_HQD_PQ_DOORBELL_CONTROL, doorbell)
        .map_err(reg)?;
    if let Some(wptr) = wptr_poll {
        // The 64-bit write pointer guessed from the 32-bit rptr and the
        // saved wptr, assuming no overflow (the comment in Linux).
        let queue_size = 2u64 << h.pq_control().queue_size();
        let mask = queue_size - 1;
        let mut guessed = u64::from(h.cp_hqd_pq_rptr) & mask;
        if u64::from(h.cp_hqd_pq_wptr_lo) & mask < guessed {
            guessed += queue_size;
        }
        guessed += u64::from(h.cp_hqd_pq_wptr_lo) & !mask & 0xFFFF_FFFF;
        guessed += u64::from(h.cp_hqd_pq_wptr_hi) << 32;
        gc.write(r::CP_HQD_PQ_WPTR_LO, guessed as u32)
            .map_err(reg)?;
        gc.write(r::CP_HQD_PQ_WPTR_HI, (guessed >> 32) as u32)
            .map_err(reg)?;
        gc.write(r::CP_HQD_PQ_WPTR_POLL_ADDR, wptr as u32)
            .map_err(reg)?;
        gc.write(r::CP_HQD_PQ_WPTR_POLL_ADDR_HI, (wptr >> 32) as u32)
            .map_err(reg)?;
        gc.write(r::CP_PQ_WPTR_POLL_CNTL1, slot.poll_mask())
            .map_err(reg)?;
    }
    gc.write(
        r::CP_HQD_EOP_RPTR,
        h.cp_hqd_eop_rptr | r::EOP_RPTR_INIT_FETCHER_MASK,
    )
    .map_err(reg)?;
    gc.write(r::CP_HQD_ACTIVE, h.cp_hqd_active | r::HQD_ACTIVE_MASK)
        .map_err(reg)?;
    Ok(())
}

/// XCC `xcc`'s MQD from the buffer [`crate::gfx::mqd_v9::init_mqd_v9_4_3`]
/// filled.
pub fn xcc_mqd(buf: &[u8], layout: &XccMqds, xcc: usize) -> Result<V9Mqd, HqdV9Error> {
    let at = layout
        .stride
        .checked_mul(xcc as u64)
        .and_then(|v| usize::try_from(v).ok())
        .ok_or(HqdV9Error::MissingMqd { xcc })?;
    buf.get(at..)
        .filter(|_| xcc < layout.xccs)
        .filter(|b| b.len() >= MQD_BYTES)
        .and_then(V9Mqd::read_from)
        .ok_or(HqdV9Error::MissingMqd { xcc })
}

/// `load_mqd_v9_4_3()`: [`hqd_load`] on each XCC with its own MQD, in XCC
/// order, stopping at the first failure. `xccs[n]` is XCC `n`'s GC block.
pub fn load_mqd_v9_4_3<B: RegisterBus + ?Sized>(
    xccs: &[Block<'_, B>],
    buf: &[u8],
    layout: &XccMqds,
    slot: HqdSlot,
    wptr_poll: Option<u64>,
) -> Result<(), HqdV9Error> {
    load_mqds(xccs, buf, layout, slot, wptr_poll, HqdWindow::Gc9_4_3)
}

/// [`load_mqd_v9_4_3`] copying `window`; with one MQD and
/// [`HqdWindow::Gfx9`], GC 9.4.2's `load_mqd()` →
/// `kgd_gfx_v9_hqd_load()`.
pub fn load_mqds<B: RegisterBus + ?Sized>(
    xccs: &[Block<'_, B>],
    buf: &[u8],
    layout: &XccMqds,
    slot: HqdSlot,
    wptr_poll: Option<u64>,
    window: HqdWindow,
) -> Result<(), HqdV9Error> {
    slot.select()?;
    for xcc in 0..layout.xccs {
        let gc = *xccs.get(xcc).ok_or(HqdV9Error::MissingXcc { xcc })?;
        let mqd = xcc_mqd(buf, layout, xcc)?;
        hqd_load_window(gc, xcc, slot, &mqd, wptr_poll, window)?;
    }
    Ok(())
}

/// `kgd_gfx_v9_hqd_destroy()` with `DRAIN_PIPE` on one XCC: for a VMID-0
/// queue clear `RLC_CP_SCHEDULERS.scheduler1`, request the dequeue, and
/// wait at most `timeout_ns` for `CP_HQD_ACTIVE` to clear.
pub fn hqd_destroy<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    gc: Block<'_, B>,
    clock: &C,
    xcc: usize,
    slot: HqdSlot,
    mqd: &V9Mqd,
    timeout_ns: u64,
) -> Result<(), HqdV9Error> {
    let select = slot.select()?;
    let reg = |e| HqdV9Error::Register { xcc, error: e };
    gc.write(r::GRBM_GFX_CNTL, select.into_bits())
        .map_err(reg)?;
    let done = (|| {
        if mqd.hqd.cp_hqd_vmid == 0 {
            let mask = r::RlcCpSchedulers::new().with_scheduler1(0xFF).into_bits();
            gc.update(r::RLC_CP_SCHEDULERS, mask, 0).map_err(reg)?;
        }
        gc.write(r::CP_HQD_DEQUEUE_REQUEST, DEQUEUE_DRAIN_PIPE)
            .map_err(reg)?;
        gc.poll(
            clock,
            r::CP_HQD_ACTIVE,
            r::HQD_ACTIVE_MASK,
            0,
            "CP_HQD_ACTIVE clear after dequeue",
            timeout_ns,
        )
        .map_err(|e| match e {
            BlockError::Wait(w) => HqdV9Error::Dequeue { xcc, error: w },
            e => HqdV9Error::Register { xcc, error: e },
        })?;
        Ok(())
    })();
    let released = gc.write(r::GRBM_GFX_CNTL, 0).map_err(reg);
    done.and(released)
}

/// `destroy_mqd_v9_4_3()`: [`hqd_destroy`] on each XCC in order, stopping
/// at the first failure.
pub fn destroy_mqd_v9_4_3<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    xccs: &[Block<'_, B>],
    clock: &C,
    buf: &[u8],
    layout: &XccMqds,
    slot: HqdSlot,
    timeout_ns: u64,
) -> Result<(), HqdV9Error> {
    for xcc in 0..layout.xccs {
        let gc = *xccs.get(xcc).ok_or(HqdV9Error::MissingXcc { xcc })?;
        let mqd = xcc_mqd(buf, layout, xcc)?;
        hqd_destroy(gc, clock, xcc, slot, &mqd, timeout_ns)?;
    }
    Ok(())
}

/// The registers `hqd_load` writes one by one sit at the MQD dword the
/// window arithmetic assumes (register - `CP_MQD_BASE_ADDR` + 128).
pub const FACTS: &[Fact] = &[
    w(r::CP_HQD_ACTIVE.offset, "cp_hqd_active"),
    w(r::CP_HQD_VMID.offset, "cp_hqd_vmid"),
    w(
        r::CP_HQD_PQ_DOORBELL_CONTROL.offset,
        "cp_hqd_pq_doorbell_control",
    ),
    w(r::CP_HQD_PQ_CONTROL.offset, "cp_hqd_pq_control"),
    w(r::CP_HQD_PQ_RPTR.offset, "cp_hqd_pq_rptr"),
    w(r::CP_HQD_EOP_RPTR.offset, "cp_hqd_eop_rptr"),
    w(r::CP_HQD_EOP_CONTROL.offset, "cp_hqd_eop_control"),
    w(r::CP_HQD_PQ_WPTR_LO.offset, "cp_hqd_pq_wptr_lo"),
    w(r::CP_HQD_PQ_WPTR_HI.offset, "cp_hqd_pq_wptr_hi"),
    w(
        r::CP_HQD_PQ_WPTR_POLL_ADDR.offset,
        "cp_hqd_pq_wptr_poll_addr_lo",
    ),
    w(
        r::CP_HQD_PQ_WPTR_POLL_ADDR_HI.offset,
        "cp_hqd_pq_wptr_poll_addr_hi",
    ),
    w(r::CP_HQD_AQL_CONTROL.offset, "cp_hqd_aql_control"),
    w(
        r::CP_HQD_CTX_SAVE_BASE_ADDR_LO.offset,
        "cp_hqd_ctx_save_base_addr_lo",
    ),
    w(r::CP_MQD_CONTROL.offset, "cp_mqd_control"),
    w(r::CP_HQD_IB_CONTROL.offset, "cp_hqd_ib_control"),
    w(r::CP_HQD_EOP_BASE_ADDR.offset, "cp_hqd_eop_base_addr_lo"),
    w(r::CP_HQD_PQ_BASE.offset, "cp_hqd_pq_base_lo"),
    w(
        r::CP_HQD_PQ_RPTR_REPORT_ADDR.offset,
        "cp_hqd_pq_rptr_report_addr_lo",
    ),
    w(r::CP_HQD_PERSISTENT_STATE.offset, "cp_hqd_persistent_state"),
    w(r::CP_HQD_DEQUEUE_REQUEST.offset, "cp_hqd_dequeue_request"),
];

const fn w(reg: u32, field: &'static str) -> Fact {
    Fact::offset(
        "v9_structs.h",
        "struct v9_mqd",
        field,
        (HQD_FIRST_DWORD + (reg - r::CP_MQD_BASE_ADDR.offset) as usize) * 4,
    )
}
