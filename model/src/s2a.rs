//! The NBIO registers tinygrad's AM programs that barebell's NBIO model
//! ([`crate::nbio`]) does not: the function-2 strap it clears
//! (`AM_SOC.init_hw`: `RCC_DEV0_EPF2_STRAP2.STRAP_NO_SOFT_RESET_DEV0_F2 =
//! 0`) and the S2A doorbell entries that route doorbell writes to the GFX,
//! MEC and SDMA engines (`nbio_v4_3_gc_doorbell_init()`,
//! `nbio_v4_3_sdma_doorbell_range()`, their `nbif_v6_3_1` twins; AM's
//! `AM_SOC.doorbell_enable()`).
//!
//! NBIO 4.3.0 puts the entries in segment 3, past a 1 MiB BAR5 (reached
//! through the RSMU index/data pair); NBIF 6.3.1 has them in the GDC
//! block, segment 2. The strap is in segment 5 on both.
//!
//! Each entry is decoded ([`S2aPort`]); the model does not (yet) gate
//! doorbell delivery on them: barebell's own bring-up does not program
//! them (issue 14), and the MEC model takes doorbells from its BAR2 page
//! directly. Recorded in `docs/fidelity.md`.
//!
//! Reset values (*model values*): the entries read 0 (disabled); the
//! strap reads NBIO 2.3's default `smnRCC_DEV0_EPF2_STRAP2_DEFAULT`
//! 0x03002000 (`nbio_2_3_default.h`, the latest public NBIO default; the
//! fields it sets have the same places in `nbio_4_3_0_sh_mask.h`).

use crate::SimClock;
use crate::soc::{RegStore, field};
use crate::socregs::{self, Reg};
use alloc::collections::BTreeSet;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::regs::IpBases;
use barebell_facts::Fact;

/// `S2A_DOORBELL_ENTRY_n_CTRL` fields (port 0's names; equal for every
/// port and in NBIF 6.3.1's GDC copy).
pub mod entry {
    pub const ENABLE: u32 = 0x0000_0001;
    pub const AWID: u32 = 0x0000_003E;
    pub const RANGE_OFFSET: u32 = 0x0001_FF80;
    pub const RANGE_SIZE: u32 = 0x01FE_0000;
    pub const AWADDR_31_28: u32 = 0xF000_0000;
}

/// `RCC_DEV0_EPF2_STRAP2.STRAP_NO_SOFT_RESET_DEV0_F2`.
pub const STRAP_NO_SOFT_RESET_F2: u32 = 0x0000_0080;
/// See the module docs.
pub const STRAP2_RESET: u32 = 0x0300_2000;

const N: &str = "nbio_4_3_0_sh_mask.h";
const F: &str = "nbif_6_3_1_sh_mask.h";

pub const FACTS: &[Fact] = &[
    Fact::constant(
        N,
        "S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_ENABLE_MASK",
        entry::ENABLE as u64,
    ),
    Fact::constant(
        N,
        "S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_AWID_MASK",
        entry::AWID as u64,
    ),
    Fact::constant(
        N,
        "S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_RANGE_OFFSET_MASK",
        entry::RANGE_OFFSET as u64,
    ),
    Fact::constant(
        N,
        "S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_RANGE_SIZE_MASK",
        entry::RANGE_SIZE as u64,
    ),
    Fact::constant(
        N,
        "S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_AWADDR_31_28_VALUE_MASK",
        entry::AWADDR_31_28 as u64,
    ),
    Fact::constant(
        N,
        "RCC_DEV0_EPF2_STRAP2__STRAP_NO_SOFT_RESET_DEV0_F2_MASK",
        STRAP_NO_SOFT_RESET_F2 as u64,
    ),
    Fact::constant(
        "nbio_2_3_default.h",
        "smnRCC_DEV0_EPF2_STRAP2_DEFAULT",
        STRAP2_RESET as u64,
    ),
    Fact::constant(
        F,
        "GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_ENABLE_MASK",
        entry::ENABLE as u64,
    ),
    Fact::constant(
        F,
        "GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_AWID_MASK",
        entry::AWID as u64,
    ),
    Fact::constant(
        F,
        "GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_RANGE_OFFSET_MASK",
        entry::RANGE_OFFSET as u64,
    ),
    Fact::constant(
        F,
        "GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_RANGE_SIZE_MASK",
        entry::RANGE_SIZE as u64,
    ),
    Fact::constant(
        F,
        "RCC_DEV0_EPF2_STRAP2__STRAP_NO_SOFT_RESET_DEV0_F2_MASK",
        STRAP_NO_SOFT_RESET_F2 as u64,
    ),
];

/// One S2A doorbell port as programmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S2aPort {
    pub port: u8,
    pub awid: u32,
    pub range_offset: u32,
    pub range_size: u32,
    pub awaddr_31_28: u32,
}

/// The strap and the S2A entries 0-3.
#[derive(Debug)]
pub struct S2aModel {
    regs: RegStore,
    entries: [usize; 4],
    strap: usize,
}

impl S2aModel {
    /// NBIO 4.3.0 or NBIF 6.3.1 (by `version`) on the NBIO `bases`.
    pub fn new(clock: &SimClock, version: (u8, u8, u8), bases: &IpBases) -> Option<Self> {
        let regs: Vec<(Reg, u32)> = match version {
            (4, 3, 0) => {
                use socregs::nbio_4_3_0 as r;
                alloc::vec![
                    (r::RCC_DEV0_EPF2_STRAP2, STRAP2_RESET),
                    (r::S2A_DOORBELL_ENTRY_0_CTRL, 0),
                    (r::S2A_DOORBELL_ENTRY_1_CTRL, 0),
                    (r::S2A_DOORBELL_ENTRY_2_CTRL, 0),
                    (r::S2A_DOORBELL_ENTRY_3_CTRL, 0),
                ]
            }
            (6, 3, 1) => {
                use socregs::nbif_6_3_1 as r;
                alloc::vec![
                    (r::RCC_DEV0_EPF2_STRAP2, STRAP2_RESET),
                    (r::GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL, 0),
                    (r::GDC_S2A0_S2A_DOORBELL_ENTRY_1_CTRL, 0),
                    (r::GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL, 0),
                    (r::GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL, 0),
                ]
            }
            _ => return None,
        };
        let offsets: Vec<usize> = regs
            .iter()
            .map(|(r, _)| r.byte_offset(bases))
            .collect::<Option<Vec<_>>>()?;
        let (store, missing) = RegStore::new(clock, bases, &regs);
        if !missing.is_empty() {
            return None;
        }
        Some(S2aModel {
            regs: store,
            strap: offsets[0],
            entries: [offsets[1], offsets[2], offsets[3], offsets[4]],
        })
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        self.regs.offsets()
    }

    /// The enabled ports.
    pub fn ports(&self) -> Vec<S2aPort> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, at)| {
                let v = self.regs.get(*at);
                (v & entry::ENABLE != 0).then(|| S2aPort {
                    port: i as u8,
                    awid: field(v, entry::AWID),
                    range_offset: field(v, entry::RANGE_OFFSET),
                    range_size: field(v, entry::RANGE_SIZE),
                    awaddr_31_28: field(v, entry::AWADDR_31_28),
                })
            })
            .collect()
    }

    /// `STRAP_NO_SOFT_RESET_DEV0_F2` as set.
    pub fn no_soft_reset_f2(&self) -> bool {
        self.regs.get(self.strap) & STRAP_NO_SOFT_RESET_F2 != 0
    }

    /// Back to the power-on state (mode-1 reset).
    pub fn reset(&self) {
        self.regs.reset();
    }
}

impl RegisterBus for S2aModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.regs.host_read(byte_offset)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.host_write(byte_offset, value);
    }
}
