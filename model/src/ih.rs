//! The interrupt handler (IH) of OSSSYS 6.0.0 (Navi31) and 7.0.0
//! (Navi48), as `ih_v6_0.c` / `ih_v7_0.c` and tinygrad's `AM_IH` program
//! it: ring 0 and ring 1, each a ring buffer in memory the IH writes
//! entries into and a write pointer the driver reads
//! (`ih_v6_0_get_wptr()`, `AM_IH.interrupt_handler()`).
//!
//! The model keeps the registers (reset values: no OSSSYS default header
//! exists, so 0, a *model value*) and decodes a ring when `RB_ENABLE`
//! rises: base (`IH_RB_BASE(_HI)`, MC address >> 8), size (`RB_SIZE` =
//! log2 of the dwords, `ih_v6_0_enable_ring()`: `order_base_2(ring_size
//! / 4)`), address space (`MC_SPACE`). What it enforces:
//! - `MC_SPACE` is one of the two values Linux writes
//!   (`ih_v6_0_rb_cntl()`: 2 for a bus address, 4 otherwise); another is
//!   refused (*model rule*: their meaning is not public);
//! - the ring is at least one entry (32 bytes) and whole (`RB_SIZE` ≤
//!   17, the `IH_RB_WPTR.OFFSET` field's reach);
//! - the model raises no interrupt, so `IH_RB_WPTR` reads where the
//!   driver left it (0 after init): a driver's `interrupt_handler()` finds
//!   its ring empty. That is the model's scope, not a hardware fact.

use crate::SimClock;
use crate::soc::{RefusalLog, RegStore, field};
use crate::socregs::{self, Reg};
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::regs::IpBases;
use barebell_facts::Fact;
use spin::Mutex;

/// `IH_RB_CNTL` fields (`osssys_6_0_0_sh_mask.h`, equal in 7.0.0).
pub mod rb_cntl {
    pub const RB_ENABLE: u32 = 0x0000_0001;
    pub const RB_SIZE: u32 = 0x0000_003E;
    pub const MC_SPACE: u32 = 0x7000_0000;
}

/// `IH_RB_WPTR.OFFSET`.
pub const WPTR_OFFSET: u32 = 0x0003_FFFC;

pub const FACTS: &[Fact] = &[
    Fact::constant(
        "osssys_6_0_0_sh_mask.h",
        "IH_RB_CNTL__RB_ENABLE_MASK",
        rb_cntl::RB_ENABLE as u64,
    ),
    Fact::constant(
        "osssys_6_0_0_sh_mask.h",
        "IH_RB_CNTL__RB_SIZE_MASK",
        rb_cntl::RB_SIZE as u64,
    ),
    Fact::constant(
        "osssys_6_0_0_sh_mask.h",
        "IH_RB_CNTL__MC_SPACE_MASK",
        rb_cntl::MC_SPACE as u64,
    ),
    Fact::constant(
        "osssys_6_0_0_sh_mask.h",
        "IH_RB_WPTR__OFFSET_MASK",
        WPTR_OFFSET as u64,
    ),
    Fact::constant(
        "osssys_7_0_0_sh_mask.h",
        "IH_RB_CNTL__RB_ENABLE_MASK",
        rb_cntl::RB_ENABLE as u64,
    ),
    Fact::constant(
        "osssys_7_0_0_sh_mask.h",
        "IH_RB_CNTL__RB_SIZE_MASK",
        rb_cntl::RB_SIZE as u64,
    ),
    Fact::constant(
        "osssys_7_0_0_sh_mask.h",
        "IH_RB_CNTL__MC_SPACE_MASK",
        rb_cntl::MC_SPACE as u64,
    ),
    Fact::constant(
        "osssys_7_0_0_sh_mask.h",
        "IH_RB_WPTR__OFFSET_MASK",
        WPTR_OFFSET as u64,
    ),
];

/// A ring as the IH took it when `RB_ENABLE` rose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IhRing {
    pub ring: u8,
    /// MC (or bus) address of the ring.
    pub base: u64,
    pub bytes: u64,
    pub mc_space: u32,
}

/// Per ring: `IH_RB_CNTL`, `IH_RB_BASE`, `IH_RB_BASE_HI`.
struct RingRegs {
    cntl: usize,
    base: usize,
    base_hi: usize,
}

#[derive(Debug, Default)]
struct State {
    enabled: [Option<IhRing>; 2],
}

/// The IH model.
#[derive(Debug)]
pub struct IhModel {
    regs: RegStore,
    rings: [(usize, usize, usize); 2],
    log: Arc<RefusalLog>,
    state: Mutex<State>,
}

fn table(v: (u8, u8, u8)) -> Option<&'static [Reg]> {
    match v {
        (6, 0, 0) => Some(socregs::osssys_6_0_0::ALL),
        (7, 0, 0) => Some(socregs::osssys_7_0_0::ALL),
        _ => None,
    }
}

impl IhModel {
    /// The IH of OSSSYS `version` on its `bases`.
    pub fn new(
        clock: &SimClock,
        version: (u8, u8, u8),
        bases: &IpBases,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        let all = table(version)?;
        let init: Vec<(Reg, u32)> = all.iter().map(|r| (*r, 0)).collect();
        let (regs, missing) = RegStore::new(clock, bases, &init);
        if !missing.is_empty() {
            return None;
        }
        let ring = |c: &str, b: &str, h: &str| -> Option<(usize, usize, usize)> {
            Some((regs.at(c)?, regs.at(b)?, regs.at(h)?))
        };
        let rings = [
            ring("IH_RB_CNTL", "IH_RB_BASE", "IH_RB_BASE_HI")?,
            ring(
                "IH_RB_CNTL_RING1",
                "IH_RB_BASE_RING1",
                "IH_RB_BASE_HI_RING1",
            )?,
        ];
        Some(IhModel {
            regs,
            rings,
            log,
            state: Mutex::new(State::default()),
        })
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        self.regs.offsets()
    }

    /// The rings the IH runs.
    pub fn rings(&self) -> Vec<IhRing> {
        self.state
            .lock()
            .enabled
            .iter()
            .flatten()
            .copied()
            .collect()
    }

    /// Back to the power-on state (mode-1 reset).
    pub fn reset(&self) {
        self.regs.reset();
        *self.state.lock() = State::default();
    }

    fn ring_regs(&self, i: usize) -> RingRegs {
        let (cntl, base, base_hi) = self.rings[i];
        RingRegs {
            cntl,
            base,
            base_hi,
        }
    }

    fn on_cntl(&self, i: usize, value: u32) {
        let r = self.ring_regs(i);
        let on = value & rb_cntl::RB_ENABLE != 0;
        let was = self.state.lock().enabled[i].is_some();
        if !on {
            self.state.lock().enabled[i] = None;
            return;
        }
        if was {
            return;
        }
        let size = field(value, rb_cntl::RB_SIZE);
        let space = field(value, rb_cntl::MC_SPACE);
        let name = self.regs.name(r.cntl);
        if !matches!(space, 2 | 4) {
            self.log.push(
                "IH",
                format!(
                    "{name} = {value:#x}: MC_SPACE {space} is neither 2 (bus address) nor 4, \
                     the two values ih_v6_0_rb_cntl() writes"
                ),
            );
        }
        if !(3..=17).contains(&size) {
            self.log.push(
                "IH",
                format!(
                    "{name} = {value:#x}: RB_SIZE {size} is not a ring of 8 to 2^17 dwords \
                     (ih_v6_0_enable_ring(): order_base_2(ring_size / 4))"
                ),
            );
        }
        let base =
            (u64::from(self.regs.get(r.base_hi)) << 32 | u64::from(self.regs.get(r.base))) << 8;
        self.state.lock().enabled[i] = Some(IhRing {
            ring: i as u8,
            base,
            bytes: 4u64 << size,
            mc_space: space,
        });
    }
}

impl RegisterBus for IhModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.regs.host_read(byte_offset)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.host_write(byte_offset, value);
        if let Some(i) = self.rings.iter().position(|r| r.0 == byte_offset) {
            self.on_cntl(i, value);
        }
    }
}
