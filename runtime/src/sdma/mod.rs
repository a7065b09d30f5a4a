//! SDMA user queues: the copy engine behind `hipMemcpy`.
//!
//! By IP version: [`sdma_v6_0`] (GC 11, Navi3x) and [`sdma_v7_0`] (GC 12,
//! Navi4x) give engine 0 queue 0's registers and the KFD MQD layout;
//! [`pkt`] encodes the packets (`sdma_v6_0_0_pkt_open.h`, which the 7.0
//! driver also includes); [`queue`] is the ring: packets in, the write
//! pointer published by doorbell, completion by FENCE, bounded waits.
//! SDMA 4.4.2 (GC 9.4.3) would be a third [`SdmaVersion`] with its own
//! register table and `v9_sdma_mqd` layout; it is not built.
//!
//! Pointers: the ring's read and write pointers are 64-bit **byte**
//! offsets that only grow (`sdma_v6_0_ring_set_wptr()` writes
//! `ring->wptr << 2`, the dword count, to the poll address and the
//! doorbell; `sdma_v6_0_ring_get_rptr()` reads the write-back `>> 2`); the
//! engine takes them modulo the ring size.

pub mod mqd_v9;
pub mod pkt;
pub mod queue;
pub mod sdma_v6_0;
pub mod sdma_v7_0;

pub use queue::{CopyDirection, SdmaError, SdmaMemory, SdmaQueue};

use crate::bus::{Block, BlockError, RegisterBus};
use crate::ip::Generation;
use crate::regs::{IpBases, Reg};

/// Which SDMA engine generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaVersion {
    /// SDMA 6.0: GC 11.0.x.
    V6_0,
    /// SDMA 7.0: GC 12.0.x.
    V7_0,
}

impl SdmaVersion {
    /// The engine that goes with a GC generation.
    pub fn for_generation(g: Generation) -> Self {
        match g {
            Generation::Gfx11 => SdmaVersion::V6_0,
            Generation::Gfx12 => SdmaVersion::V7_0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SdmaVersion::V6_0 => "SDMA 6.0",
            SdmaVersion::V7_0 => "SDMA 7.0",
        }
    }

    pub fn engine(self) -> &'static EngineRegs {
        match self {
            SdmaVersion::V6_0 => &sdma_v6_0::ENGINE,
            SdmaVersion::V7_0 => &sdma_v7_0::ENGINE,
        }
    }

    pub fn mqd_layout(self) -> &'static MqdLayout {
        match self {
            SdmaVersion::V6_0 => &sdma_v6_0::MQD_LAYOUT,
            SdmaVersion::V7_0 => &sdma_v7_0::MQD_LAYOUT,
        }
    }
}

/// Engine 0 queue 0's registers for one version, and the engine control
/// register's halt and reset bits (`SDMA0_F32_CNTL.HALT`/`TH1_RESET` on
/// 6.0, `SDMA0_MCU_CNTL.HALT`/`RESET` on 7.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineRegs {
    pub cntl: Reg,
    pub halt: u32,
    pub reset: u32,
    pub rb_cntl: Reg,
    pub rb_base: Reg,
    pub rb_base_hi: Reg,
    pub rb_rptr: Reg,
    pub rb_rptr_hi: Reg,
    pub rb_wptr: Reg,
    pub rb_wptr_hi: Reg,
    pub rptr_addr_lo: Reg,
    pub rptr_addr_hi: Reg,
    pub ib_cntl: Reg,
    pub doorbell: Reg,
    pub doorbell_offset: Reg,
    pub wptr_poll_lo: Reg,
    pub wptr_poll_hi: Reg,
    pub minor_ptr_update: Reg,
}

/// `SDMA0_QUEUE0_RB_CNTL` fields (equal in GC 11 and 12; bit 11 is
/// `F32_WPTR_POLL_ENABLE` on 6.0, `MCU_WPTR_POLL_ENABLE` on 7.0).
pub mod rb_cntl {
    pub const RB_ENABLE: u32 = 0x0000_0001;
    pub const RB_SIZE: u32 = 0x0000_003E;
    pub const RB_SIZE_SHIFT: u32 = 1;
    pub const WPTR_POLL_ENABLE_FW: u32 = 0x0000_0800;
    pub const RPTR_WRITEBACK_ENABLE: u32 = 0x0000_1000;
    pub const RPTR_WRITEBACK_TIMER: u32 = 0x001F_0000;
    pub const RPTR_WRITEBACK_TIMER_SHIFT: u32 = 16;
    pub const RB_PRIV: u32 = 0x0080_0000;
    pub const RB_VMID: u32 = 0x0F00_0000;
    pub const RB_VMID_SHIFT: u32 = 24;
}

/// `SDMA0_QUEUE0_IB_CNTL.IB_ENABLE`.
pub const IB_ENABLE: u32 = 0x1;
/// `SDMA0_QUEUE0_DOORBELL.ENABLE`.
pub const DOORBELL_ENABLE: u32 = 0x1000_0000;
/// `SDMA0_QUEUE0_DOORBELL_OFFSET.OFFSET` (shift 2: the field holds the
/// doorbell's dword index).
pub const DOORBELL_OFFSET_MASK: u32 = 0x0FFF_FFFC;
pub const DOORBELL_OFFSET_SHIFT: u32 = 2;

/// `RB_CNTL` for a ring of `ring_bytes` (a power of two) in `vmid`, as
/// `update_mqd_sdma()` (v11/v12) builds `sdmax_rlcx_rb_cntl`: size as log2
/// of dwords, the VMID, read-pointer write-back on with timer 6, the
/// firmware's write-pointer polling on; `RB_ENABLE` clear.
pub fn rb_cntl_value(ring_bytes: usize, vmid: u8) -> u32 {
    let dwords = (ring_bytes / 4).max(1);
    let order = dwords.trailing_zeros();
    ((order << rb_cntl::RB_SIZE_SHIFT) & rb_cntl::RB_SIZE)
        | ((u32::from(vmid) << rb_cntl::RB_VMID_SHIFT) & rb_cntl::RB_VMID)
        | rb_cntl::RPTR_WRITEBACK_ENABLE
        | ((6 << rb_cntl::RPTR_WRITEBACK_TIMER_SHIFT) & rb_cntl::RPTR_WRITEBACK_TIMER)
        | rb_cntl::WPTR_POLL_ENABLE_FW
}

/// Dword indices, in the version's `vNN_sdma_mqd`, of the fields
/// `update_mqd_sdma()` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqdLayout {
    pub rb_cntl: usize,
    pub rb_base: usize,
    pub rb_base_hi: usize,
    pub rptr_addr_lo: usize,
    pub rptr_addr_hi: usize,
    pub doorbell_offset: usize,
    pub sched_cntl: usize,
    pub dummy_reg: usize,
    pub wptr_poll_hi: usize,
    pub wptr_poll_lo: usize,
    pub engine_id: usize,
    pub queue_id: usize,
}

/// Size of `struct v11_sdma_mqd` and `struct v12_sdma_mqd`: 128 dwords.
pub const MQD_DWORDS: usize = 128;

/// The size fact and one offset fact per field of a [`MqdLayout`].
macro_rules! mqd_facts {
    ($h:expr, $ty:literal, $l:expr) => {
        [
            Fact::size($h, $ty, super::MQD_DWORDS * 4),
            Fact::offset($h, $ty, "sdmax_rlcx_rb_cntl", $l.rb_cntl * 4),
            Fact::offset($h, $ty, "sdmax_rlcx_rb_base", $l.rb_base * 4),
            Fact::offset($h, $ty, "sdmax_rlcx_rb_base_hi", $l.rb_base_hi * 4),
            Fact::offset($h, $ty, "sdmax_rlcx_rb_rptr_addr_lo", $l.rptr_addr_lo * 4),
            Fact::offset($h, $ty, "sdmax_rlcx_rb_rptr_addr_hi", $l.rptr_addr_hi * 4),
            Fact::offset(
                $h,
                $ty,
                "sdmax_rlcx_doorbell_offset",
                $l.doorbell_offset * 4,
            ),
            Fact::offset($h, $ty, "sdmax_rlcx_sched_cntl", $l.sched_cntl * 4),
            Fact::offset($h, $ty, "sdmax_rlcx_dummy_reg", $l.dummy_reg * 4),
            Fact::offset(
                $h,
                $ty,
                "sdmax_rlcx_rb_wptr_poll_addr_hi",
                $l.wptr_poll_hi * 4,
            ),
            Fact::offset(
                $h,
                $ty,
                "sdmax_rlcx_rb_wptr_poll_addr_lo",
                $l.wptr_poll_lo * 4,
            ),
            Fact::offset($h, $ty, "sdma_engine_id", $l.engine_id * 4),
            Fact::offset($h, $ty, "sdma_queue_id", $l.queue_id * 4),
        ]
    };
}
pub(crate) use mqd_facts;

/// An SDMA MQD in device memory (`struct v11_sdma_mqd` / `v12_sdma_mqd`,
/// 512 bytes; a page of its own as KFD gives one under MES).
#[repr(C, align(4096))]
pub struct SdmaMqd(pub [core::sync::atomic::AtomicU32; MQD_DWORDS]);

impl SdmaMqd {
    pub fn new() -> Self {
        SdmaMqd([const { core::sync::atomic::AtomicU32::new(0) }; MQD_DWORDS])
    }

    /// Stores `m` (before the device is given the MQD's address).
    pub fn write(&self, m: &[u32; MQD_DWORDS]) {
        for (d, v) in self.0.iter().zip(m) {
            d.store(*v, core::sync::atomic::Ordering::Relaxed);
        }
        core::sync::atomic::fence(core::sync::atomic::Ordering::Release);
    }
}

impl Default for SdmaMqd {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for SdmaMqd {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SdmaMqd").finish_non_exhaustive()
    }
}

/// What a queue needs from its placement: the ring's GPU VA (256-byte
/// aligned) and size, the read-pointer write-back and write-pointer poll
/// addresses, the doorbell's 64-bit slot index, the VMID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSetup {
    pub ring: u64,
    pub ring_bytes: usize,
    pub rptr_addr: u64,
    pub wptr_addr: u64,
    pub doorbell_index: u32,
    pub vmid: u8,
}

impl QueueSetup {
    /// The doorbell's dword index (`doorbell_index << 1`).
    pub fn doorbell_dword(&self) -> u32 {
        self.doorbell_index << 1
    }
}

/// `amdgpu_sdma_phase_quantum`'s default (32) in
/// `SDMA0_QUEUE0_SCHEDULE_CNTL.CONTEXT_QUANTUM` (bits 15:8).
const SCHED_CNTL_QUANTUM: u32 = 32 << 8;
/// `SDMA_RLC_DUMMY_DEFAULT` (`kfd_mqd_manager_v11.c`).
const RLC_DUMMY_DEFAULT: u32 = 0xf;

/// The SDMA MQD as `init_mqd_sdma()` + `update_mqd_sdma()` fill it
/// (`kfd_mqd_manager_v11.c`, `_v12.c`): zeroed, then the ring, pointers,
/// doorbell, quantum and ids.
pub fn build_mqd(v: SdmaVersion, q: &QueueSetup, engine: u32, queue: u32) -> [u32; MQD_DWORDS] {
    let l = v.mqd_layout();
    let mut m = [0u32; MQD_DWORDS];
    let mut set = |i: usize, x: u32| {
        if let Some(d) = m.get_mut(i) {
            *d = x;
        }
    };
    set(l.rb_cntl, rb_cntl_value(q.ring_bytes, q.vmid));
    set(l.rb_base, (q.ring >> 8) as u32);
    set(l.rb_base_hi, (q.ring >> 40) as u32);
    set(l.rptr_addr_lo, q.rptr_addr as u32);
    set(l.rptr_addr_hi, (q.rptr_addr >> 32) as u32);
    set(l.wptr_poll_lo, q.wptr_addr as u32);
    set(l.wptr_poll_hi, (q.wptr_addr >> 32) as u32);
    set(
        l.doorbell_offset,
        (q.doorbell_dword() << DOORBELL_OFFSET_SHIFT) & DOORBELL_OFFSET_MASK,
    );
    set(l.sched_cntl, SCHED_CNTL_QUANTUM);
    set(l.engine_id, engine);
    set(l.queue_id, queue);
    set(l.dummy_reg, RLC_DUMMY_DEFAULT);
    m
}

/// Unhalts engine 0 (`sdma_v6_0_enable()`/`sdma_v7_0_enable()`: `HALT`
/// and the thread reset cleared; tinygrad's `AM_SDMA.init_hw`).
pub fn unhalt<B: RegisterBus + ?Sized>(
    bus: &B,
    gc: IpBases,
    v: SdmaVersion,
) -> Result<(), BlockError> {
    let e = v.engine();
    let b = Block::new(bus, gc);
    let c = b.read(e.cntl)?;
    b.write(e.cntl, c & !(e.halt | e.reset))
}

/// Loads queue 0 of engine 0 by registers, in `sdma_v6_0_gfx_resume()`'s
/// order (tinygrad's `AM_SDMA.setup_ring` writes the same set): ring
/// disabled, pointers zeroed under `MINOR_PTR_UPDATE`, ring base,
/// write-back and poll addresses, doorbell, then `RB_ENABLE` and
/// `IB_ENABLE`.
pub fn load_queue<B: RegisterBus + ?Sized>(
    bus: &B,
    gc: IpBases,
    v: SdmaVersion,
    q: &QueueSetup,
) -> Result<(), BlockError> {
    let e = v.engine();
    let b = Block::new(bus, gc);
    let cntl = rb_cntl_value(q.ring_bytes, q.vmid) | rb_cntl::RB_PRIV;
    b.write(e.rb_cntl, cntl)?;
    b.write(e.minor_ptr_update, 1)?;
    for r in [e.rb_rptr, e.rb_rptr_hi, e.rb_wptr, e.rb_wptr_hi] {
        b.write(r, 0)?;
    }
    b.write(e.wptr_poll_lo, q.wptr_addr as u32)?;
    b.write(e.wptr_poll_hi, (q.wptr_addr >> 32) as u32)?;
    b.write(e.rptr_addr_hi, (q.rptr_addr >> 32) as u32)?;
    b.write(e.rptr_addr_lo, q.rptr_addr as u32 & 0xFFFF_FFFC)?;
    b.write(e.rb_base, (q.ring >> 8) as u32)?;
    b.write(e.rb_base_hi, (q.ring >> 40) as u32)?;
    b.write(
        e.doorbell_offset,
        (q.doorbell_dword() << DOORBELL_OFFSET_SHIFT) & DOORBELL_OFFSET_MASK,
    )?;
    b.write(e.doorbell, DOORBELL_ENABLE)?;
    b.write(e.minor_ptr_update, 0)?;
    b.write(e.rb_cntl, cntl | rb_cntl::RB_ENABLE)?;
    b.write(e.ib_cntl, IB_ENABLE)
}

/// Stops queue 0 (`sdma_v6_0_gfx_stop()`: `RB_ENABLE` and `IB_ENABLE`
/// cleared).
pub fn stop_queue<B: RegisterBus + ?Sized>(
    bus: &B,
    gc: IpBases,
    v: SdmaVersion,
) -> Result<(), BlockError> {
    let e = v.engine();
    let b = Block::new(bus, gc);
    let c = b.read(e.rb_cntl)?;
    b.write(e.rb_cntl, c & !rb_cntl::RB_ENABLE)?;
    let i = b.read(e.ib_cntl)?;
    b.write(e.ib_cntl, i & !IB_ENABLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rb_cntl_for_a_64k_ring_in_vmid_8() {
        // 16384 dwords = 2^14: RB_SIZE 14 at bit 1 (0x1c); VMID 8 at bit
        // 24; write-back (bit 12), timer 6 at bit 16, poll (bit 11).
        assert_eq!(
            rb_cntl_value(64 << 10, 8),
            0x1c | 0x0800_0000 | 0x1000 | 0x6_0000 | 0x800
        );
    }

    #[test]
    fn mqd_v11_and_v12_put_the_rptr_address_in_their_own_order() {
        let q = QueueSetup {
            ring: 0x123_4567_8900,
            ring_bytes: 4096,
            rptr_addr: 0xAAAA_0000_1000,
            wptr_addr: 0xBBBB_0000_2000,
            doorbell_index: 0x100,
            vmid: 8,
        };
        let a = build_mqd(SdmaVersion::V6_0, &q, 0, 0);
        let b = build_mqd(SdmaVersion::V7_0, &q, 0, 0);
        assert_eq!((a[7], a[8]), (0xAAAA, 0x1000));
        assert_eq!((b[7], b[8]), (0x1000, 0xAAAA));
        assert_eq!(a[19], 0x200 << 2);
        assert_eq!(b[17], 0x200 << 2);
        assert_eq!((a[1], a[2]), (0x2345_6789, 0x1));
    }
}
