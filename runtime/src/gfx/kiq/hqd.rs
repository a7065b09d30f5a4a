//! Bringing up the KIQ itself: on GC 11 the KIQ is MES pipe 1, as Linux
//! 6.12 runs it on every GC 11/12 part (`enable_mes_kiq`, set by
//! `amdgpu_discovery_set_mes_ip_blocks()`): [`bring_up_on_mes`] follows
//! `mes_v11_0_kiq_setting()` (tell the RLC which slot is the KIQ:
//! `RLC_CP_SCHEDULERS.scheduler0 = me << 5 | pipe << 3 | queue`, then the
//! same with bit 7, the enable), `mes_v11_0_mqd_init()` for the MQD (a
//! privileged kernel PM4 queue in VMID 0, doorbell enabled) and
//! `mes_v11_0_queue_init_register()` to load it on ME 3 pipe 1.
//!
//! The older topology, a KIQ on a MEC1 slot (`gfx_v11_0_kiq_init_register()`,
//! Linux's `!enable_mes_kiq` path), is gone: no shipping driver runs it
//! beside MES on GC 11/12, and the model halts a MEC KIQ while MES pipe 1
//! runs.
//!
//! Register defaults the MQD starts from are `gc_11_0_0_default.h`'s
//! (facts below); GC 12 has no default header in Linux 6.12 and
//! `gfx_v12_0.c` defines the same values locally, so on gfx12 they rest on
//! that file, not on a conformance fact.

use crate::bus::{Block, RegisterBus};
use crate::gfx::error::MapError;
use crate::gfx::kiq::KiqMemory;
use crate::gfx::mqd::{DoorbellControl, EopBuffer, MqdPage};
use crate::ip::Generation;
use crate::mem::Dev;
use crate::regs::IpBases;
use barebell_facts::Fact;

pub use crate::gfx::mqd::{
    EOP_CONTROL_DEFAULT, IB_CONTROL_DEFAULT, MQD_CONTROL_DEFAULT, PERSISTENT_STATE_DEFAULT,
    PQ_CONTROL_DEFAULT,
};

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

/// Tells the RLC which queue is the KIQ: `RLC_CP_SCHEDULERS.scheduler0 =
/// me << 5 | pipe << 3 | queue`, then the same with the enable bit
/// (`gfx_v11_0_kiq_setting()`, `mes_v11_0_kiq_setting()`).
pub fn name_kiq<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
    me: u8,
    pipe: u8,
    queue: u8,
) -> Result<(), MapError> {
    let gc = Block::new(bus, *bases);
    let sched = match generation {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(
                crate::ip::Unsupported::new("RLC_CP_SCHEDULERS (KIQ naming)", generation).into(),
            );
        }
        Generation::Gfx11 => crate::regs::gc_11_0_0::RLC_CP_SCHEDULERS,
        Generation::Gfx12 => crate::regs::gc_12_0_0::RLC_CP_SCHEDULERS,
    };
    let v = gc.read(sched)? & !SCHEDULER0_MASK | scheduler0(me, pipe, queue);
    gc.write(sched, v)?;
    gc.write(sched, v | SCHEDULER_ENABLE)?;
    Ok(())
}

/// Makes MES pipe 1 the KIQ and starts it on `ring`: the gfx11 topology
/// of Linux 6.12 (`enable_mes_kiq`, set for every GC 11 part by
/// `amdgpu_discovery_set_mes_ip_blocks()`). Follows
/// `mes_v11_0_kiq_hw_init()` after MES is unhalted with both pipes
/// active ([`crate::gfx::mes::start::start`] with `kiq_pipe`):
/// `mes_v11_0_kiq_setting()` names ME 3 pipe 1 queue 0 in
/// `RLC_CP_SCHEDULERS`, `mes_v11_0_mqd_init()` builds the ring's MQD (the
/// same image as the scheduler ring's: privileged kernel queue, VMID 0,
/// `MES_EOP_SIZE`), and `mes_v11_0_queue_init_register()` loads it on ME 3
/// pipe 1. `doorbell` is the 64-bit index (Linux: `mes_ring1`).
/// `mqd` must not be mapped already (see [`MqdPage`]).
pub fn bring_up_on_mes<B: RegisterBus + ?Sized, const N: usize>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
    ring: Dev<'_, KiqMemory<N>>,
    mqd: Dev<'_, MqdPage>,
    eop: Dev<'_, EopBuffer>,
    doorbell: u32,
) -> Result<(), MapError> {
    use crate::gfx::mes::rings::{MesPipeRing, load_on_mes_pipe, mes_pipe_ring_hqd};
    use crate::gfx::mes::start::{KIQ_PIPE, MES_ME};
    let hqd = mes_pipe_ring_hqd(
        MesPipeRing {
            ring: ring.ring_address(),
            ring_dwords: N,
            rptr: ring.rptr_address(),
            wptr: ring.wptr_address(),
        },
        &mqd,
        &eop,
        doorbell,
    )?;
    name_kiq(bus, bases, generation, MES_ME, KIQ_PIPE, 0)?;
    load_on_mes_pipe(bus, bases, generation, KIQ_PIPE, hqd, mqd)
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
