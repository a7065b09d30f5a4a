//! Register-level recovery of a hung compute queue and of the compute CP
//! (issue 20, item 4): the two rungs below a mode-1 reset that need no
//! firmware to answer.
//!
//! - [`reset_hqd`]: select the slot, `CP_HQD_DEQUEUE_REQUEST` =
//!   `RESET_WAVES` (2), `SPI_COMPUTE_QUEUE_RESET.RESET`, then a bounded
//!   wait for `CP_HQD_ACTIVE` to clear. This is tinygrad's
//!   `AM_GFX.fini_hw` order (it notes that a wedged wave can survive
//!   `RESET_WAVES` alone); Linux dequeues a KFD queue the same way
//!   (`kgd_gfx_v11_hqd_destroy()` writes the dequeue request and polls
//!   `CP_HQD_ACTIVE`) and resets waves through `SPI_COMPUTE_QUEUE_RESET`
//!   in its per-queue reset paths.
//! - [`cp_soft_reset`]: `GRBM_SOFT_RESET` with `SOFT_RESET_CP` and
//!   `SOFT_RESET_CPC` set, read back, 50 µs, cleared, as
//!   `gfx_v11_0_soft_reset()` pulses the CP bits (tinygrad pulses the
//!   same two bits before it starts the MEC on gfx11). Afterwards no
//!   compute HQD may be active ([`active_compute_hqds`]). Everything the
//!   CP ran (MES, the KIQ, the MEC's queues) must be started again.
//!   gfx12: the bits are the same in `gc_12_0_0_sh_mask.h`; that Linux's
//!   gfx12 code takes this path is not verified here.

use crate::bus::{BlockError, RegisterBus};
use crate::gfx::hqd::{MEC1, PIPES, QUEUES_PER_PIPE};
use crate::gfx::mapper::HqdRegs;
use crate::gfx::mqd::HQD_ACTIVE_MASK;
use crate::ip::Generation;
use crate::regs::{IpBases, Reg};
use crate::time::Clock;
use barebell_facts::Fact;

/// `CP_HQD_DEQUEUE_REQUEST` value `RESET_WAVES` (`enum
/// hqd_dequeue_request_type`, `amdgpu_amdkfd_gfx_v11.c`: a `.c` file, so
/// no header fact; tinygrad writes 2 with the same meaning).
pub const DEQUEUE_RESET_WAVES: u32 = 2;
/// `SPI_COMPUTE_QUEUE_RESET__RESET_MASK`.
pub const SPI_QUEUE_RESET: u32 = 0x1;
/// `GRBM_SOFT_RESET__SOFT_RESET_CP_MASK`.
pub const SOFT_RESET_CP: u32 = 0x1;
/// `GRBM_SOFT_RESET__SOFT_RESET_CPC_MASK`.
pub const SOFT_RESET_CPC: u32 = 0x0004_0000;
/// How long the soft-reset bits stay set (`gfx_v11_0_soft_reset()`:
/// `udelay(50)`).
pub const SOFT_RESET_HOLD_NS: u64 = 50_000;

pub const FACTS: &[Fact] = &[
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "SPI_COMPUTE_QUEUE_RESET__RESET_MASK",
        SPI_QUEUE_RESET as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GRBM_SOFT_RESET__SOFT_RESET_CP_MASK",
        SOFT_RESET_CP as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GRBM_SOFT_RESET__SOFT_RESET_CPC_MASK",
        SOFT_RESET_CPC as u64,
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "SPI_COMPUTE_QUEUE_RESET__RESET_MASK",
        SPI_QUEUE_RESET as u64,
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "GRBM_SOFT_RESET__SOFT_RESET_CP_MASK",
        SOFT_RESET_CP as u64,
    ),
    Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "GRBM_SOFT_RESET__SOFT_RESET_CPC_MASK",
        SOFT_RESET_CPC as u64,
    ),
];

/// The reset registers of a generation.
#[derive(Debug, Clone, Copy)]
pub struct ResetRegs {
    pub grbm_soft_reset: Reg,
    pub spi_compute_queue_reset: Reg,
}

impl ResetRegs {
    pub const fn for_generation(g: Generation) -> Result<Self, crate::ip::Unsupported> {
        Ok(match g {
            Generation::Gfx90a | Generation::Gfx94 => {
                return Err(crate::ip::Unsupported::new(
                    "GRBM/SPI reset register table",
                    g,
                ));
            }
            Generation::Gfx11 => ResetRegs {
                grbm_soft_reset: crate::regs::gc_11_0_0::GRBM_SOFT_RESET,
                spi_compute_queue_reset: crate::regs::gc_11_0_0::SPI_COMPUTE_QUEUE_RESET,
            },
            Generation::Gfx12 => ResetRegs {
                grbm_soft_reset: crate::regs::gc_12_0_0::GRBM_SOFT_RESET,
                spi_compute_queue_reset: crate::regs::gc_12_0_0::SPI_COMPUTE_QUEUE_RESET,
            },
        })
    }
}

/// Dequeues MEC 1 `pipe`/`queue` with its waves reset and waits up to
/// `bound_ns` for the slot to go inactive.
pub fn reset_hqd<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    gc: &IpBases,
    generation: Generation,
    pipe: u8,
    queue: u8,
    bound_ns: u64,
) -> Result<(), BlockError> {
    let regs = HqdRegs::for_generation(generation)?;
    let reset = ResetRegs::for_generation(generation)?;
    let block = crate::bus::Block::new(bus, *gc);
    let slot = regs.select(block, MEC1, pipe, queue)?;
    let b = slot.block();
    b.write(regs.dequeue_request, DEQUEUE_RESET_WAVES)?;
    b.write(reset.spi_compute_queue_reset, SPI_QUEUE_RESET)?;
    b.poll(
        clock,
        regs.hqd_active,
        HQD_ACTIVE_MASK,
        0,
        "CP_HQD_ACTIVE clear after RESET_WAVES and SPI_COMPUTE_QUEUE_RESET",
        bound_ns,
    )?;
    Ok(())
}

/// Pulses `GRBM_SOFT_RESET` CP and CPC.
pub fn cp_soft_reset<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    gc: &IpBases,
    generation: Generation,
) -> Result<(), BlockError> {
    let reset = ResetRegs::for_generation(generation)?;
    let block = crate::bus::Block::new(bus, *gc);
    block.write(reset.grbm_soft_reset, SOFT_RESET_CP | SOFT_RESET_CPC)?;
    // Posting read, as `gfx_v11_0_soft_reset()` reads the register back.
    block.read(reset.grbm_soft_reset)?;
    let t = clock.now_ns();
    while clock.now_ns().saturating_sub(t) < SOFT_RESET_HOLD_NS {
        core::hint::spin_loop();
    }
    block.write(reset.grbm_soft_reset, 0)?;
    block.read(reset.grbm_soft_reset)?;
    Ok(())
}

/// How many MEC 1 slots have `CP_HQD_ACTIVE` set (all pipes and queues);
/// the first one found, as (pipe, queue).
pub fn active_compute_hqds<B: RegisterBus + ?Sized>(
    bus: &B,
    gc: &IpBases,
    generation: Generation,
) -> Result<(u32, Option<(u8, u8)>), BlockError> {
    let regs = HqdRegs::for_generation(generation)?;
    let block = crate::bus::Block::new(bus, *gc);
    let sel = regs.select(block, MEC1, 0, 0)?;
    let mut n = 0;
    let mut first = None;
    for pipe in 0..PIPES {
        for queue in 0..QUEUES_PER_PIPE {
            sel.switch(MEC1, pipe, queue)?;
            let v = sel.block().read(regs.hqd_active)?;
            if v == crate::bus::ALL_ONES {
                return Err(BlockError::Wait(crate::bus::WaitError::DeviceGone {
                    what: "CP_HQD_ACTIVE",
                    byte_offset: 0,
                }));
            }
            if v & HQD_ACTIVE_MASK != 0 {
                n += 1;
                first.get_or_insert((pipe, queue));
            }
        }
    }
    Ok((n, first))
}
