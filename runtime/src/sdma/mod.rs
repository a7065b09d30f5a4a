//! SDMA user queues: the copy engine behind `hipMemcpy`.
//!
//! By IP version: [`sdma_v6_0`] (GC 11, Navi3x) and [`sdma_v7_0`] (GC 12,
//! Navi4x) give engine 0 queue 0's registers and the KFD MQD layout;
//! [`pkt`] encodes the packets (`sdma_v6_0_0_pkt_open.h`, which the 7.0
//! driver also includes); [`queue`] is the ring: packets in, the write
//! pointer published by doorbell, completion by FENCE, bounded waits.
//! [`sdma_v4_4_2`] (GC 9.4.3, MI300) is the third: its queue registers
//! sit on each SDMA instance's own bases, and its packets come from
//! `vega10_sdma_pkt_open.h` (22-bit counts, no fence MTYPE);
//! [`map_v4_4_2`] maps its queues directly or through the HWS.
//!
//! Pointers: the ring's read and write pointers are 64-bit **byte**
//! offsets that only grow (`sdma_v6_0_ring_set_wptr()` writes
//! `ring->wptr << 2`, the dword count, to the poll address and the
//! doorbell; `sdma_v6_0_ring_get_rptr()` reads the write-back `>> 2`); the
//! engine takes them modulo the ring size.

/// One version file's registers: each a [`Reg`], and `REG_FACTS`, their
/// offsets and `BASE_IDX`es against the calling module's `OFF` header.
macro_rules! sdma_regs {
    ($($name:ident = $off:literal, $idx:literal;)*) => {
        $(
            pub const $name: Reg = Reg { name: stringify!($name), offset: $off, base_idx: $idx };
        )*
        /// Offsets and `BASE_IDX`es against the version's header.
        pub const REG_FACTS: &[Fact] = &[
            $(
                Fact::constant(OFF, concat!("reg", stringify!($name)), $off),
                Fact::constant(OFF, concat!("reg", stringify!($name), "_BASE_IDX"), $idx),
            )*
        ];
    };
}

pub mod map_v4_4_2;
pub mod mqd_v9;
pub mod pkt;
pub mod queue;
pub mod sdma_v4_4_0;
pub mod sdma_v4_4_2;
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
    /// SDMA 4.4.2: GC 9.4.3 (MI300X, MI308X).
    V4_4_2,
    /// SDMA 4.4.0: GC 9.4.2 (MI210), Linux's `sdma_v4_0.c`; SDMA 4's
    /// packets, as 4.4.2's ([`sdma_v4_4_0`]).
    V4_4_0,
}

impl SdmaVersion {
    /// The engine that goes with a GC generation.
    pub fn for_generation(g: Generation) -> Result<Self, crate::ip::Unsupported> {
        Ok(match g {
            // GC 9.4.3's instances are SDMA 4.4.2 (`amdgpu_discovery.c`
            // sets `sdma_v4_4_2_ip_block` for SDMA 4.4.2); each instance has
            // its own bases (see [`map_v4_4_2`]).
            Generation::Gfx94 => SdmaVersion::V4_4_2,
            // GC 9.4.2 (Aldebaran) has five SDMA 4.4.0 engines, which Linux
            // drives with `sdma_v4_0.c`.
            Generation::Gfx90a => SdmaVersion::V4_4_0,
            Generation::Gfx11 => SdmaVersion::V6_0,
            Generation::Gfx12 => SdmaVersion::V7_0,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SdmaVersion::V6_0 => "SDMA 6.0",
            SdmaVersion::V7_0 => "SDMA 7.0",
            SdmaVersion::V4_4_2 => "SDMA 4.4.2",
            SdmaVersion::V4_4_0 => "SDMA 4.4.0",
        }
    }

    pub fn engine(self) -> &'static EngineRegs {
        match self {
            SdmaVersion::V6_0 => &sdma_v6_0::ENGINE,
            SdmaVersion::V7_0 => &sdma_v7_0::ENGINE,
            SdmaVersion::V4_4_2 => &sdma_v4_4_2::ENGINE,
            SdmaVersion::V4_4_0 => &sdma_v4_4_0::ENGINE,
        }
    }

    /// The MQD layout [`build_mqd`] fills: `struct v11_sdma_mqd` and
    /// `v12_sdma_mqd`. `None` on 4.4.2, whose `struct v9_sdma_mqd` is
    /// [`mqd_v9::V9SdmaMqd`] (built with its own refusals).
    pub fn mqd_layout(self) -> Option<&'static MqdLayout> {
        match self {
            SdmaVersion::V6_0 => Some(&sdma_v6_0::MQD_LAYOUT),
            SdmaVersion::V7_0 => Some(&sdma_v7_0::MQD_LAYOUT),
            SdmaVersion::V4_4_2 | SdmaVersion::V4_4_0 => None,
        }
    }

    /// Whether `RB_CNTL` has the firmware's write-pointer poll enable
    /// (bit 11: `F32_WPTR_POLL_ENABLE` on 6.0, `MCU_WPTR_POLL_ENABLE` on
    /// 7.0). 4.4.2's `SDMA_GFX_RB_CNTL` has no such field
    /// (`sdma_4_4_2_sh_mask.h`), and KFD's v9 `update_mqd_sdma()` sets
    /// none.
    pub fn rb_cntl_polls(self) -> bool {
        !self.is_v4()
    }

    /// SDMA 4.4.x: packets from `vega10_sdma_pkt_open.h`, registers on
    /// each instance's own bases, KFD's v9 MQD.
    pub fn is_v4(self) -> bool {
        matches!(self, SdmaVersion::V4_4_2 | SdmaVersion::V4_4_0)
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

/// `SDMA0_QUEUE0_RB_CNTL` fields (equal in GC 11 and 12, and in 4.4.2's
/// `SDMA_GFX_RB_CNTL` but for bit 11, which is `F32_WPTR_POLL_ENABLE` on
/// 6.0, `MCU_WPTR_POLL_ENABLE` on 7.0 and absent on 4.4.2).
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
/// `update_mqd_sdma()` (v9/v11/v12) builds `sdmax_rlcx_rb_cntl`: size as
/// log2 of dwords, the VMID, read-pointer write-back on with timer 6, and
/// on 6.0/7.0 the firmware's write-pointer polling on; `RB_ENABLE` clear.
pub fn rb_cntl_value(v: SdmaVersion, ring_bytes: usize, vmid: u8) -> u32 {
    let dwords = (ring_bytes / 4).max(1);
    let order = dwords.trailing_zeros();
    let poll = if v.rb_cntl_polls() {
        rb_cntl::WPTR_POLL_ENABLE_FW
    } else {
        0
    };
    ((order << rb_cntl::RB_SIZE_SHIFT) & rb_cntl::RB_SIZE)
        | ((u32::from(vmid) << rb_cntl::RB_VMID_SHIFT) & rb_cntl::RB_VMID)
        | rb_cntl::RPTR_WRITEBACK_ENABLE
        | ((6 << rb_cntl::RPTR_WRITEBACK_TIMER_SHIFT) & rb_cntl::RPTR_WRITEBACK_TIMER)
        | poll
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

/// Size of `struct v9_sdma_mqd`, `v11_sdma_mqd` and `v12_sdma_mqd`: 128
/// dwords.
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
/// doorbell, quantum and ids. `None` for 4.4.2: its v9 MQD is
/// [`mqd_v9::V9SdmaMqd::build`], which refuses what does not fit.
pub fn build_mqd(
    v: SdmaVersion,
    q: &QueueSetup,
    engine: u32,
    queue: u32,
) -> Option<[u32; MQD_DWORDS]> {
    let l = v.mqd_layout()?;
    let mut m = [0u32; MQD_DWORDS];
    let mut set = |i: usize, x: u32| {
        if let Some(d) = m.get_mut(i) {
            *d = x;
        }
    };
    set(l.rb_cntl, rb_cntl_value(v, q.ring_bytes, q.vmid));
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
    Some(m)
}

/// Unhalts engine 0 (`sdma_v6_0_enable()`/`sdma_v7_0_enable()`: `HALT`
/// and the thread reset cleared; `sdma_v4_4_2_inst_enable()`: `HALT`
/// alone; tinygrad's `AM_SDMA.init_hw`). `bases` as for [`load_queue`].
pub fn unhalt<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: IpBases,
    v: SdmaVersion,
) -> Result<(), BlockError> {
    let e = v.engine();
    let b = Block::new(bus, bases);
    let c = b.read(e.cntl)?;
    b.write(e.cntl, c & !(e.halt | e.reset))
}

/// Loads queue 0 of engine 0 by registers, in `sdma_v6_0_gfx_resume()`'s
/// order (tinygrad's `AM_SDMA.setup_ring` writes the same set): ring
/// disabled, pointers zeroed under `MINOR_PTR_UPDATE`, ring base,
/// write-back and poll addresses, doorbell, then `RB_ENABLE` and
/// `IB_ENABLE` (`RB_PRIV` set, as tinygrad sets it). `bases` are those of
/// the IP whose header holds the queue
/// registers: GC on 6.0 and 7.0, the SDMA instance itself on 4.4.2
/// ([`sdma_v4_4_2`]), which goes in [`load_queue_v4_4_2`]'s order.
pub fn load_queue<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: IpBases,
    v: SdmaVersion,
    q: &QueueSetup,
) -> Result<(), BlockError> {
    if v.is_v4() {
        return load_queue_v4_4(bus, bases, v, q);
    }
    let e = v.engine();
    let b = Block::new(bus, bases);
    let cntl = rb_cntl_value(v, q.ring_bytes, q.vmid) | rb_cntl::RB_PRIV;
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

/// Loads the GFX queue of one SDMA 4.4.2 instance (`bases`: that
/// instance's), in `sdma_v4_4_2_gfx_resume()`'s order: `RB_CNTL` (size,
/// VMID, write-back), the write-back address, the ring base, the pointers
/// zeroed under `MINOR_PTR_UPDATE`, doorbell enable and offset, the
/// write pointer (0), `MINOR_PTR_UPDATE` cleared, the poll address with
/// `F32_POLL_ENABLE` off (Linux turns it on only under SR-IOV; the
/// doorbell carries the write pointer), then `RB_ENABLE` and `IB_ENABLE`.
/// `RB_PRIV` is set as tinygrad's `setup_ring` sets it on every SDMA
/// version (Linux's kernel ring leaves it 0).
pub fn load_queue_v4_4_2<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: IpBases,
    q: &QueueSetup,
) -> Result<(), BlockError> {
    load_queue_v4_4(bus, bases, SdmaVersion::V4_4_2, q)
}

/// [`load_queue_v4_4_2`]'s order on either SDMA 4.4 version (4.4.0's
/// `sdma_v4_0_gfx_resume()` writes the same registers in the same order).
fn load_queue_v4_4<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: IpBases,
    v: SdmaVersion,
    q: &QueueSetup,
) -> Result<(), BlockError> {
    let (e, poll_cntl, poll_enable) = match v {
        SdmaVersion::V4_4_0 => (
            &sdma_v4_4_0::ENGINE,
            sdma_v4_4_0::SDMA0_GFX_RB_WPTR_POLL_CNTL,
            sdma_v4_4_0::F32_POLL_ENABLE,
        ),
        _ => (
            &sdma_v4_4_2::ENGINE,
            sdma_v4_4_2::SDMA_GFX_RB_WPTR_POLL_CNTL,
            sdma_v4_4_2::F32_POLL_ENABLE,
        ),
    };
    let b = Block::new(bus, bases);
    let cntl = rb_cntl_value(v, q.ring_bytes, q.vmid) | rb_cntl::RB_PRIV;
    b.write(e.rb_cntl, cntl)?;
    b.write(e.rptr_addr_hi, (q.rptr_addr >> 32) as u32)?;
    b.write(e.rptr_addr_lo, q.rptr_addr as u32 & 0xFFFF_FFFC)?;
    b.write(e.rb_base, (q.ring >> 8) as u32)?;
    b.write(e.rb_base_hi, (q.ring >> 40) as u32)?;
    b.write(e.minor_ptr_update, 1)?;
    for reg in [e.rb_rptr, e.rb_rptr_hi, e.rb_wptr, e.rb_wptr_hi] {
        b.write(reg, 0)?;
    }
    b.write(e.doorbell, DOORBELL_ENABLE)?;
    b.write(
        e.doorbell_offset,
        (q.doorbell_dword() << DOORBELL_OFFSET_SHIFT) & DOORBELL_OFFSET_MASK,
    )?;
    b.write(e.minor_ptr_update, 0)?;
    b.write(e.wptr_poll_lo, q.wptr_addr as u32)?;
    b.write(e.wptr_poll_hi, (q.wptr_addr >> 32) as u32)?;
    let poll = b.read(poll_cntl)?;
    b.write(poll_cntl, poll & !poll_enable)?;
    b.write(e.rb_cntl, cntl | rb_cntl::RB_ENABLE)?;
    b.write(e.ib_cntl, IB_ENABLE)
}

/// Stops queue 0 (`sdma_v6_0_gfx_stop()`: `RB_ENABLE` and `IB_ENABLE`
/// cleared).
pub fn stop_queue<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: IpBases,
    v: SdmaVersion,
) -> Result<(), BlockError> {
    let e = v.engine();
    let b = Block::new(bus, bases);
    let c = b.read(e.rb_cntl)?;
    b.write(e.rb_cntl, c & !rb_cntl::RB_ENABLE)?;
    let i = b.read(e.ib_cntl)?;
    b.write(e.ib_cntl, i & !IB_ENABLE)
}

/// Stops engine 0's queue and halts the engine, as a teardown does:
/// `sdma_v6_0_enable(adev, false)` / `sdma_v7_0_enable(adev, false)` from
/// `sdma_v6_0_hw_fini()` / `sdma_v7_0_hw_fini()` (the queue stopped by
/// `sdma_v6_0_gfx_stop()`, then `F32_CNTL.HALT` (`MCU_CNTL.HALT` on 7.0)
/// set). On 4.4.2 the queue is stopped and the engine left running:
/// `sdma_v4_4_2_hw_fini()` → `sdma_v4_4_2_inst_enable(adev, false, mask)`
/// stops the queues, then returns before `HALT` because the PSP loaded
/// the firmware (`AMDGPU_FW_LOAD_PSP`). On 4.4.0 `HALT` is set:
/// `sdma_v4_0_hw_fini()` → `sdma_v4_0_enable(adev, false)` writes it
/// whoever loaded the firmware. Halting an engine that never ran changes
/// nothing. `bases` as for [`load_queue`].
pub fn halt<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: IpBases,
    v: SdmaVersion,
) -> Result<(), BlockError> {
    stop_queue(bus, bases, v)?;
    if v == SdmaVersion::V4_4_2 {
        return Ok(());
    }
    let e = v.engine();
    let b = Block::new(bus, bases);
    let c = b.read(e.cntl)?;
    b.write(e.cntl, c | e.halt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rb_cntl_for_a_64k_ring_in_vmid_8() {
        // 16384 dwords = 2^14: RB_SIZE 14 at bit 1 (0x1c); VMID 8 at bit
        // 24; write-back (bit 12), timer 6 at bit 16, poll (bit 11).
        assert_eq!(
            rb_cntl_value(SdmaVersion::V6_0, 64 << 10, 8),
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
        let a = build_mqd(SdmaVersion::V6_0, &q, 0, 0).unwrap();
        let b = build_mqd(SdmaVersion::V7_0, &q, 0, 0).unwrap();
        assert_eq!(build_mqd(SdmaVersion::V4_4_2, &q, 0, 0), None);
        assert_eq!((a[7], a[8]), (0xAAAA, 0x1000));
        assert_eq!((b[7], b[8]), (0x1000, 0xAAAA));
        assert_eq!(a[19], 0x200 << 2);
        assert_eq!(b[17], 0x200 << 2);
        assert_eq!((a[1], a[2]), (0x2345_6789, 0x1));
    }

    /// Every write, as (dword offset, value), up to 32; reads return 0.
    struct Writes(core::cell::RefCell<([(usize, u32); 32], usize)>);
    impl RegisterBus for Writes {
        fn read32(&self, _: usize) -> u32 {
            0
        }
        fn write32(&self, at: usize, v: u32) {
            let mut w = self.0.borrow_mut();
            let n = w.1;
            if let Some(slot) = w.0.get_mut(n) {
                *slot = (at / 4, v);
                w.1 = n + 1;
            }
        }
    }

    // The order and values of `sdma_v4_4_2_gfx_resume()`, written by hand
    // from the Linux source (register offsets from `sdma_4_4_2_offset.h`,
    // on an instance whose segment 0 starts at dword 0x1000): RB_CNTL
    // (0x80), RPTR_ADDR_HI/LO (0x88/0x89), RB_BASE/_HI (0x81/0x82),
    // MINOR_PTR_UPDATE (0xb5) = 1, RPTR/_HI/WPTR/_HI (0x83..0x86) = 0,
    // DOORBELL (0x92) enable, DOORBELL_OFFSET (0xab), MINOR_PTR_UPDATE = 0,
    // WPTR_POLL_ADDR_LO/HI (0xb3/0xb2), WPTR_POLL_CNTL (0x87) with
    // F32_POLL_ENABLE off, RB_CNTL | RB_ENABLE, IB_CNTL (0x8a) = 1.
    #[test]
    fn sdma_4_4_2_queue_loads_in_gfx_resume_order() {
        let bus = Writes(core::cell::RefCell::new(([(0, 0); 32], 0)));
        let q = QueueSetup {
            ring: 0x123_4567_8900,
            ring_bytes: 4096,
            rptr_addr: 0x2_0000_1004,
            wptr_addr: 0x2_0000_1008,
            doorbell_index: 0x1e0,
            vmid: 0,
        };
        load_queue(
            &bus,
            IpBases::new(&[0x1000, 0, 0, 0, 0, 0, 0, 0]),
            SdmaVersion::V4_4_2,
            &q,
        )
        .unwrap();
        // RB_SIZE log2(1024) = 10 at bit 1, write-back (bit 12), timer 6
        // (bits 20:16), RB_PRIV (bit 23); no bit 11 on 4.4.2.
        let cntl = 10 << 1 | 1 << 12 | 6 << 16 | 1 << 23;
        let b = 0x1000;
        let want = [
            (b + 0x80, cntl),
            (b + 0x88, 0x2),
            (b + 0x89, 0x1004),
            (b + 0x81, 0x2345_6789),
            (b + 0x82, 0x1),
            (b + 0xb5, 1),
            (b + 0x83, 0),
            (b + 0x84, 0),
            (b + 0x85, 0),
            (b + 0x86, 0),
            (b + 0x92, 0x1000_0000),
            (b + 0xab, 0x3c0 << 2),
            (b + 0xb5, 0),
            (b + 0xb3, 0x1008),
            (b + 0xb2, 0x2),
            (b + 0x87, 0),
            (b + 0x80, cntl | 1),
            (b + 0x8a, 1),
        ];
        let w = bus.0.borrow();
        assert_eq!(&w.0[..w.1], &want);
    }

    // `update_mqd_sdma()` of kfd_mqd_manager_v9.c by hand, through the
    // one v9 SDMA MQD ([`mqd_v9::V9SdmaMqd`]): no poll addresses, no
    // quantum (the struct has no sched_cntl), dummy 0xf at dword 27, ids
    // at 126/127, rptr hi before lo (dwords 8, 9).
    #[test]
    fn mqd_v9_leaves_the_poll_address_and_quantum_out() {
        let q = mqd_v9::SdmaMqdQueue {
            ring_address: 0x123_4567_8900,
            ring_bytes: 4096,
            rptr_address: 0xAAAA_0000_1000,
            doorbell_dword: 0x200,
            vmid: 9,
            engine: 2,
            queue: 1,
        };
        let m = mqd_v9::V9SdmaMqd::build(&q).unwrap().dwords();
        assert_eq!(m[0], 10 << 1 | 9 << 24 | 1 << 12 | 6 << 16);
        assert_eq!((m[1], m[2]), (0x2345_6789, 0x1));
        assert_eq!((m[8], m[9]), (0xAAAA, 0x1000));
        assert_eq!(m[22], 0x200 << 2);
        assert_eq!((m[27], m[126], m[127]), (0xf, 2, 1));
        assert_eq!((m[28], m[29]), (0, 0));
        let set: usize = m.iter().filter(|d| **d != 0).count();
        assert_eq!(set, 9);
    }
}
