//! Bringing up the KIQ itself: a PM4 ring on a MEC1 queue slot, loaded by
//! direct register programming.
//!
//! Follows `gfx_v11_0_kiq_setting()` (tell the RLC which slot is the KIQ:
//! `RLC_CP_SCHEDULERS.scheduler0 = me << 5 | pipe << 3 | queue`, then the
//! same with bit 7, the enable) and `gfx_v11_0_compute_mqd_init()` for the
//! MQD (a privileged kernel PM4 queue: `PRIV_STATE`, `KMD_QUEUE`, no AQL,
//! `RPTR_BLOCK_SIZE` of a GPU page, doorbell enabled, VMID 0). The MQD is
//! then loaded the way [`crate::gfx::hqd`] loads any queue (GRBM select, the
//! HQD window, `CP_HQD_ACTIVE`); Linux's `gfx_v11_0_kiq_init_register()`
//! writes the same registers one by one, which the window copy covers.
//!
//! Register defaults the MQD starts from are `gc_11_0_0_default.h`'s
//! (facts below); GC 12 has no default header in Linux 6.12 and
//! `gfx_v12_0.c` defines the same values locally, so on gfx12 they rest on
//! that file, not on a conformance fact.

use crate::bus::{Block, RegisterBus};
use crate::gfx::error::MapError;
use crate::gfx::error::MqdError;
use crate::gfx::hqd::MEC1;
use crate::gfx::kiq::KiqMemory;
use crate::gfx::mapper::HqdRegs;
use crate::gfx::mqd::{
    DoorbellControl, EopBuffer, HQD_ACTIVE_MASK, HqdRegisters, IB_CONTROL_MIN_IB_AVAIL_SIZE_SHIFT,
    MqdPage, PersistentState, PqControl,
};
use crate::ip::Generation;
use crate::mem::Dev;
use crate::regs::IpBases;
use barebell_facts::Fact;

/// `regCP_HQD_PQ_CONTROL_DEFAULT` and friends (`gc_11_0_0_default.h`).
pub const PQ_CONTROL_DEFAULT: u32 = 0x0030_8509;
pub const PERSISTENT_STATE_DEFAULT: u32 = 0x0be0_5501;
pub const IB_CONTROL_DEFAULT: u32 = 0x0030_0000;
pub const MQD_CONTROL_DEFAULT: u32 = 0x0000_0100;
pub const EOP_CONTROL_DEFAULT: u32 = 0x0000_0006;

/// `GFX11_MEC_HPD_SIZE`: the EOP buffer Linux gives each kernel compute
/// ring (`gfx_v11_0.c`, a `.c` define, so cited only).
pub const MEC_HPD_BYTES: u64 = 2048;

/// `RLC_CP_SCHEDULERS.scheduler0` mask and its enable bit.
pub const SCHEDULER0_MASK: u32 = 0xFF;
pub const SCHEDULER_ENABLE: u32 = 0x80;

/// The `RLC_CP_SCHEDULERS.scheduler0` value naming a slot.
pub const fn scheduler0(me: u8, pipe: u8, queue: u8) -> u32 {
    (me as u32) << 5 | (pipe as u32) << 3 | queue as u32
}

/// Where the KIQ runs and what it uses.
#[derive(Debug, Clone, Copy)]
pub struct KiqSlot {
    pub pipe: u8,
    pub queue: u8,
    /// The KIQ's 64-bit doorbell index (`AMDGPU_NAVI10_DOORBELL_KIQ`).
    pub doorbell: u32,
}

/// `gfx_v11_0_compute_mqd_init()` for the KIQ ring in `ring`.
pub fn kiq_hqd<const N: usize>(
    ring: &KiqMemory<N>,
    mqd: &MqdPage,
    eop: &EopBuffer,
    doorbell: u32,
) -> Result<HqdRegisters, MqdError> {
    let ring_addr = ring.ring_address();
    if !ring_addr.is_multiple_of(256) {
        return Err(MqdError::Misaligned {
            field: "KIQ ring",
            address: ring_addr,
            align: 256,
        });
    }
    let dword = doorbell.saturating_mul(2);
    if dword >= 1 << 26 {
        return Err(MqdError::DoorbellOffset { dword });
    }
    // order_base_2(bytes / 4) - 1; N is a power of two (KiqMemory checks).
    let queue_size = (N.trailing_zeros() - 1) as u8;
    // order_base_2(AMDGPU_GPU_PAGE_SIZE / 4) - 1 = 9.
    let pq = PqControl::from_bits(PQ_CONTROL_DEFAULT)
        .with_queue_size(queue_size)
        .with_rptr_block_size(9)
        .with_unord_dispatch(true)
        .with_priv_state(true)
        .with_kmd_queue(true);
    let db = DoorbellControl::from_bits(0)
        .with_doorbell_offset(dword)
        .with_doorbell_en(true);
    // EOP_SIZE = order_base_2(GFX11_MEC_HPD_SIZE / 4) - 1 = 8; our EOP
    // buffer is larger than Linux's, which is fine: the field caps what is
    // used.
    let eop_size = (MEC_HPD_BYTES / 4).trailing_zeros() - 1;
    if eop.address() == 0 {
        return Err(MqdError::Missing {
            field: "EOP address",
        });
    }
    let lo = |x: u64| x as u32;
    let hi = |x: u64| (x >> 32) as u32;
    Ok(HqdRegisters {
        cp_mqd_base_addr_lo: lo(mqd.address()) & !3,
        cp_mqd_base_addr_hi: hi(mqd.address()),
        cp_hqd_vmid: 0,
        cp_hqd_persistent_state: PersistentState::from_bits(PERSISTENT_STATE_DEFAULT)
            .with_preload_size(0x55)
            .into_bits(),
        cp_hqd_pq_base_lo: lo(ring_addr >> 8),
        cp_hqd_pq_base_hi: hi(ring_addr >> 8),
        cp_hqd_pq_rptr_report_addr_lo: lo(ring.rptr_address()) & !3,
        cp_hqd_pq_rptr_report_addr_hi: hi(ring.rptr_address()) & 0xFFFF,
        cp_hqd_pq_wptr_poll_addr_lo: lo(ring.wptr_address()) & !3,
        cp_hqd_pq_wptr_poll_addr_hi: hi(ring.wptr_address()) & 0xFFFF,
        cp_hqd_pq_doorbell_control: db.into_bits(),
        cp_hqd_pq_control: pq.into_bits(),
        cp_hqd_ib_control: IB_CONTROL_DEFAULT & !(3 << IB_CONTROL_MIN_IB_AVAIL_SIZE_SHIFT)
            | 3 << IB_CONTROL_MIN_IB_AVAIL_SIZE_SHIFT,
        cp_mqd_control: MQD_CONTROL_DEFAULT,
        cp_hqd_eop_base_addr_lo: lo(eop.address() >> 8),
        cp_hqd_eop_base_addr_hi: hi(eop.address() >> 8),
        cp_hqd_eop_control: EOP_CONTROL_DEFAULT & !0x3F | eop_size,
        ..HqdRegisters::default()
    })
}

/// Makes `slot` the KIQ and starts it on the ring in `ring`; `mqd` must
/// not be mapped already (see [`MqdPage`]).
pub fn bring_up<B: RegisterBus + ?Sized, const N: usize>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
    slot: KiqSlot,
    ring: Dev<'_, KiqMemory<N>>,
    mqd: Dev<'_, MqdPage>,
    eop: Dev<'_, EopBuffer>,
) -> Result<(), MapError> {
    let hqd = kiq_hqd(&ring, &mqd, &eop, slot.doorbell)?;
    let regs = HqdRegs::for_generation(generation);
    let gc = Block::new(bus, *bases);
    let sched = match generation {
        Generation::Gfx11 => crate::regs::gc_11_0_0::RLC_CP_SCHEDULERS,
        Generation::Gfx12 => crate::regs::gc_12_0_0::RLC_CP_SCHEDULERS,
    };
    // gfx_v11_0_kiq_setting().
    let v = gc.read(sched)? & !SCHEDULER0_MASK | scheduler0(MEC1, slot.pipe, slot.queue);
    gc.write(sched, v)?;
    gc.write(sched, v | SCHEDULER_ENABLE)?;
    // The MQD page holds the image too, as Linux keeps it for resume.
    match generation {
        Generation::Gfx11 => mqd.write(&crate::gfx::mqd::ComputeMqdV11::kernel_queue(hqd)),
        Generation::Gfx12 => mqd.write(&crate::gfx::mqd::ComputeMqdV12::kernel_queue(hqd)),
    }
    // The slot stays selected only while `sel` lives: every exit, errors
    // included, selects ME 0 pipe 0 queue 0 again.
    let sel = regs.select(gc, MEC1, slot.pipe, slot.queue)?;
    if gc.read(regs.hqd_active)? & HQD_ACTIVE_MASK != 0 {
        return Err(MapError::HqdBusy {
            pipe: slot.pipe,
            queue: slot.queue,
        });
    }
    regs.load_window(&sel, &hqd)?;
    gc.write(regs.hqd_active, HQD_ACTIVE_MASK)?;
    Ok(())
}

macro_rules! kiq_facts {
    ($h:literal) => {
        [
            Fact::constant(
                $h,
                "RLC_CP_SCHEDULERS__scheduler0_MASK",
                SCHEDULER0_MASK as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK",
                DoorbellControl::new().with_doorbell_en(true).into_bits() as u64,
            ),
        ]
    };
}

/// Register defaults and the scheduler field.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    [
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_HQD_PQ_CONTROL_DEFAULT",
            PQ_CONTROL_DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_HQD_PERSISTENT_STATE_DEFAULT",
            PERSISTENT_STATE_DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_HQD_IB_CONTROL_DEFAULT",
            IB_CONTROL_DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_MQD_CONTROL_DEFAULT",
            MQD_CONTROL_DEFAULT as u64
        ),
        Fact::constant(
            "gc_11_0_0_default.h",
            "regCP_HQD_EOP_CONTROL_DEFAULT",
            EOP_CONTROL_DEFAULT as u64
        ),
    ],
    kiq_facts!("gc_11_0_0_sh_mask.h"),
    kiq_facts!("gc_12_0_0_sh_mask.h"),
);
