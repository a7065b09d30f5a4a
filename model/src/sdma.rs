//! SDMA engine 0 as far as its drivers bring it up: SDMA 6.0 (Navi31,
//! `sdma_v6_0.c`) and 7.0 (Navi48, `sdma_v7_0.c`), and tinygrad's
//! `AM_SDMA` (`init_hw`, `setup_ring`).
//!
//! The registers live in the GC header on the GC bases
//! (`sdma_v6_0_get_reg_offset()`). The engine comes out of reset halted:
//! `regSDMA0_F32_CNTL_DEFAULT` = 0x08084001 (`HALT` set,
//! `gc_11_0_0_default.h`); SDMA 7's `SDMA0_MCU_CNTL` has no public default,
//! so the model starts it halted too (*model value*: `HALT` = 1). Other
//! registers read their `gc_11_0_0_default.h` value on Navi31 and 0 on
//! Navi48 (*model value*).
//!
//! The engine runs when `HALT` and its thread reset (`TH1_RESET` on 6.0,
//! `RESET` on 7.0) are clear (`sdma_v6_0_enable()`, tinygrad's
//! `F32_CNTL/MCU_CNTL.update(halt=0, ...reset=0)`) and the RLC autoload put
//! SDMA code in place ([`SdmaHooks::code_loaded`]); queue 0 runs when its
//! `RB_ENABLE` is set on a running engine. A queue enabled on a halted
//! engine is recorded ([`SdmaEvent::QueueOnHaltedEngine`]): both drivers
//! unhalt first (`sdma_v6_0_start()`), the engine would fetch nothing.
//! The model decodes the queue (ring, size, write-back and poll
//! addresses, doorbell) for inspection; it executes no SDMA packets.

use crate::SimClock;
use crate::soc::{RefusalLog, RegStore, field};
use crate::socregs::{self, Reg};
use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::ip::Generation;
use barebell::regs::IpBases;
use barebell_facts::Fact;
use spin::Mutex;

/// `SDMA0_F32_CNTL` (6.0) and `SDMA0_MCU_CNTL` (7.0) fields.
pub mod cntl {
    pub const HALT: u32 = 0x0000_0001;
    /// 6.0: `TH1_RESET`.
    pub const F32_TH1_RESET: u32 = 0x0000_2000;
    /// 7.0: `RESET`.
    pub const MCU_RESET: u32 = 0x0000_0002;
}

/// `SDMA0_QUEUE0_RB_CNTL`, `_DOORBELL`, `_DOORBELL_OFFSET` fields
/// (equal in 6.0 and 7.0).
pub mod queue {
    pub const RB_ENABLE: u32 = 0x0000_0001;
    pub const RB_SIZE: u32 = 0x0000_003E;
    pub const RB_VMID: u32 = 0x0F00_0000;
    pub const DOORBELL_ENABLE: u32 = 0x1000_0000;
    pub const DOORBELL_OFFSET: u32 = 0x0FFF_FFFC;
}

/// `regSDMA0_F32_CNTL_DEFAULT` (`gc_11_0_0_default.h`).
pub const F32_CNTL_DEFAULT: u32 = 0x0808_4001;

const G11: &str = "gc_11_0_0_sh_mask.h";
const G12: &str = "gc_12_0_0_sh_mask.h";

pub const FACTS: &[Fact] = &[
    Fact::constant(G11, "SDMA0_F32_CNTL__HALT_MASK", cntl::HALT as u64),
    Fact::constant(
        G11,
        "SDMA0_F32_CNTL__TH1_RESET_MASK",
        cntl::F32_TH1_RESET as u64,
    ),
    Fact::constant(G12, "SDMA0_MCU_CNTL__HALT_MASK", cntl::HALT as u64),
    Fact::constant(G12, "SDMA0_MCU_CNTL__RESET_MASK", cntl::MCU_RESET as u64),
    Fact::constant(
        "gc_11_0_0_default.h",
        "regSDMA0_F32_CNTL_DEFAULT",
        F32_CNTL_DEFAULT as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK",
        queue::RB_ENABLE as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK",
        queue::RB_SIZE as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_RB_CNTL__RB_VMID_MASK",
        queue::RB_VMID as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_DOORBELL__ENABLE_MASK",
        queue::DOORBELL_ENABLE as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK",
        queue::DOORBELL_OFFSET as u64,
    ),
    Fact::constant(
        G12,
        "SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK",
        queue::RB_ENABLE as u64,
    ),
    Fact::constant(
        G12,
        "SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK",
        queue::RB_SIZE as u64,
    ),
    Fact::constant(
        G12,
        "SDMA0_QUEUE0_DOORBELL__ENABLE_MASK",
        queue::DOORBELL_ENABLE as u64,
    ),
    Fact::constant(
        G12,
        "SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK",
        queue::DOORBELL_OFFSET as u64,
    ),
];

/// What the SDMA needs from the rest of the GPU.
pub struct SdmaHooks {
    /// Whether the RLC autoload put SDMA code in place.
    pub code_loaded: Box<dyn Fn() -> bool + Send + Sync>,
}

impl core::fmt::Debug for SdmaHooks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SdmaHooks").finish_non_exhaustive()
    }
}

/// Queue 0 as the engine took it when `RB_ENABLE` rose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaQueue {
    /// GPU virtual address of the ring (`RB_BASE(_HI)` << 8).
    pub ring: u64,
    pub bytes: u64,
    pub vmid: u32,
    pub rptr_report: u64,
    pub wptr_poll: u64,
    /// Doorbell dword offset, if enabled.
    pub doorbell: Option<u32>,
}

/// What happened, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaEvent {
    Unhalted,
    Halted,
    /// Unhalted with no SDMA code in place: nothing runs.
    UnhaltedWithoutCode,
    QueueEnabled(SdmaQueue),
    QueueOnHaltedEngine(SdmaQueue),
    QueueDisabled,
}

#[derive(Debug, Default)]
struct State {
    running: bool,
    queue: Option<SdmaQueue>,
    events: Vec<SdmaEvent>,
}

struct At {
    cntl: usize,
    reset_mask: u32,
    rb_cntl: usize,
    rb_base: usize,
    rb_base_hi: usize,
    rptr_lo: usize,
    rptr_hi: usize,
    wpoll_lo: usize,
    wpoll_hi: usize,
    doorbell: usize,
    doorbell_offset: usize,
}

/// SDMA engine 0.
pub struct SdmaModel {
    regs: RegStore,
    at: At,
    hooks: SdmaHooks,
    #[allow(dead_code)]
    log: Arc<RefusalLog>,
    state: Mutex<State>,
}

impl core::fmt::Debug for SdmaModel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SdmaModel")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// The registers of `generation` with their reset values.
fn registers(generation: Generation) -> Vec<(Reg, u32)> {
    match generation {
        Generation::Gfx11 => {
            use socregs::gc_11_0_0 as r;
            alloc::vec![
                // gc_11_0_0_default.h values.
                (r::SDMA0_F32_CNTL, F32_CNTL_DEFAULT),
                (r::SDMA0_WATCHDOG_CNTL, 0),
                (r::SDMA0_UTCL1_CNTL, 0x2c00_0288),
                (r::SDMA0_UTCL1_PAGE, 0x010c_ec00),
                (r::SDMA0_CNTL, 0x0000_2440),
                (r::SDMA0_QUEUE0_RB_CNTL, 0x0004_0800),
                (r::SDMA0_QUEUE0_RB_BASE, 0),
                (r::SDMA0_QUEUE0_RB_BASE_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_HI, 0),
                (r::SDMA0_QUEUE0_RB_WPTR, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_ADDR_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_ADDR_LO, 0),
                (r::SDMA0_QUEUE0_IB_CNTL, 0x0000_0100),
                (r::SDMA0_QUEUE0_DOORBELL, 0),
                (r::SDMA0_QUEUE0_DOORBELL_OFFSET, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO, 0),
                (r::SDMA0_QUEUE0_MINOR_PTR_UPDATE, 0),
                (r::SDMA0_RLC_CGCG_CTRL, 0x0040_0000),
                (r::SDMA1_RLC_CGCG_CTRL, 0x0040_0000),
            ]
        }
        Generation::Gfx12 => {
            use socregs::gc_12_0_0 as r;
            // No GC 12 default header: HALT set (as SDMA 6), the rest 0.
            alloc::vec![
                (r::SDMA0_MCU_CNTL, cntl::HALT),
                (r::SDMA0_WATCHDOG_CNTL, 0),
                (r::SDMA0_UTCL1_CNTL, 0),
                (r::SDMA0_UTCL1_PAGE, 0),
                (r::SDMA0_CNTL, 0),
                (r::SDMA0_QUEUE0_RB_CNTL, 0),
                (r::SDMA0_QUEUE0_RB_BASE, 0),
                (r::SDMA0_QUEUE0_RB_BASE_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_HI, 0),
                (r::SDMA0_QUEUE0_RB_WPTR, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_ADDR_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_ADDR_LO, 0),
                (r::SDMA0_QUEUE0_IB_CNTL, 0),
                (r::SDMA0_QUEUE0_DOORBELL, 0),
                (r::SDMA0_QUEUE0_DOORBELL_OFFSET, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO, 0),
                (r::SDMA0_QUEUE0_MINOR_PTR_UPDATE, 0),
                (r::SDMA0_RLC_CGCG_CTRL, 0),
                (r::SDMA1_RLC_CGCG_CTRL, 0),
            ]
        }
    }
}

impl SdmaModel {
    /// SDMA 0 of a `generation` part on the GC `bases`.
    pub fn new(
        clock: &SimClock,
        generation: Generation,
        bases: &IpBases,
        hooks: SdmaHooks,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        let (regs, missing) = RegStore::new(clock, bases, &registers(generation));
        if !missing.is_empty() {
            return None;
        }
        let (cntl_name, reset_mask) = match generation {
            Generation::Gfx11 => ("SDMA0_F32_CNTL", cntl::F32_TH1_RESET),
            Generation::Gfx12 => ("SDMA0_MCU_CNTL", cntl::MCU_RESET),
        };
        let at = At {
            cntl: regs.at(cntl_name)?,
            reset_mask,
            rb_cntl: regs.at("SDMA0_QUEUE0_RB_CNTL")?,
            rb_base: regs.at("SDMA0_QUEUE0_RB_BASE")?,
            rb_base_hi: regs.at("SDMA0_QUEUE0_RB_BASE_HI")?,
            rptr_lo: regs.at("SDMA0_QUEUE0_RB_RPTR_ADDR_LO")?,
            rptr_hi: regs.at("SDMA0_QUEUE0_RB_RPTR_ADDR_HI")?,
            wpoll_lo: regs.at("SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO")?,
            wpoll_hi: regs.at("SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI")?,
            doorbell: regs.at("SDMA0_QUEUE0_DOORBELL")?,
            doorbell_offset: regs.at("SDMA0_QUEUE0_DOORBELL_OFFSET")?,
        };
        Some(SdmaModel {
            regs,
            at,
            hooks,
            log,
            state: Mutex::new(State::default()),
        })
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        self.regs.offsets()
    }

    pub fn running(&self) -> bool {
        self.state.lock().running
    }

    /// Queue 0, while enabled.
    pub fn queue(&self) -> Option<SdmaQueue> {
        self.state.lock().queue
    }

    pub fn events(&self) -> Vec<SdmaEvent> {
        self.state.lock().events.clone()
    }

    /// Back to the power-on state (mode-1 reset).
    pub fn reset(&self) {
        self.regs.reset();
        *self.state.lock() = State::default();
    }

    fn pair(&self, lo: usize, hi: usize) -> u64 {
        u64::from(self.regs.get(hi)) << 32 | u64::from(self.regs.get(lo))
    }

    fn decode_queue(&self, rb_cntl: u32) -> SdmaQueue {
        let db = self.regs.get(self.at.doorbell);
        SdmaQueue {
            ring: self.pair(self.at.rb_base, self.at.rb_base_hi) << 8,
            bytes: 4u64 << field(rb_cntl, queue::RB_SIZE),
            vmid: field(rb_cntl, queue::RB_VMID),
            rptr_report: self.pair(self.at.rptr_lo, self.at.rptr_hi),
            wptr_poll: self.pair(self.at.wpoll_lo, self.at.wpoll_hi),
            doorbell: (db & queue::DOORBELL_ENABLE != 0).then(|| {
                field(
                    self.regs.get(self.at.doorbell_offset),
                    queue::DOORBELL_OFFSET,
                )
            }),
        }
    }

    fn on_cntl(&self, value: u32) {
        let run = value & (cntl::HALT | self.at.reset_mask) == 0;
        let mut s = self.state.lock();
        if run == s.running {
            return;
        }
        if run && !(self.hooks.code_loaded)() {
            s.events.push(SdmaEvent::UnhaltedWithoutCode);
            return;
        }
        s.running = run;
        s.events.push(if run {
            SdmaEvent::Unhalted
        } else {
            SdmaEvent::Halted
        });
    }

    fn on_rb_cntl(&self, value: u32) {
        let on = value & queue::RB_ENABLE != 0;
        let q = self.decode_queue(value);
        let mut s = self.state.lock();
        match (on, s.queue.is_some()) {
            (true, false) => {
                s.queue = Some(q);
                let e = if s.running {
                    SdmaEvent::QueueEnabled(q)
                } else {
                    SdmaEvent::QueueOnHaltedEngine(q)
                };
                s.events.push(e);
            }
            (false, true) => {
                s.queue = None;
                s.events.push(SdmaEvent::QueueDisabled);
            }
            _ => {}
        }
    }
}

impl RegisterBus for SdmaModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.regs.host_read(byte_offset)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.host_write(byte_offset, value);
        if byte_offset == self.at.cntl {
            self.on_cntl(value);
        } else if byte_offset == self.at.rb_cntl {
            self.on_rb_cntl(value);
        }
    }
}
