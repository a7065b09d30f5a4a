//! The runtime's `nbio` step against the NBIO model, at the NBIO bases of
//! the model's Navi31 discovery table (parsed by the runtime).
//!
//! Expected byte offsets are the header offsets (`nbio_4_3_0_offset.h`,
//! segment 2) plus the part's segment-2 base 0xD20, worked out by hand;
//! `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN` at 0x3780 also matches the low
//! bits of the header's own `cfgRCC_DEV0_EPF0_RCC_DOORBELL_APER_EN`
//! (0x30203780). The hole offset is `0x80000 - 4096` from `nbio_v4_3.c`.

use barebell::discovery::{Discovery, hw_id};
use barebell::nbio::{self, MMIO_REG_HOLE_OFFSET, NbioError};
use barebell::regs::IpBases;
use barebell_sim::SimClock;
use barebell_sim::discovery::{self as sim, NAVI31};
use barebell_sim::nbio::{DoorbellOutcome, NbioModel};

const HOLE: usize = 0x7F000;
const DOORBELL_BUS: u64 = 0x00FC_0000_0000;

fn nbio_bases() -> IpBases {
    let (bin, _) = sim::build(&NAVI31);
    let d = Discovery::parse(&bin).unwrap();
    let ip = d.ip(hw_id::NBIF, 0).unwrap();
    assert_eq!(ip.version.triple(), (4, 3, 0));
    ip.bases
}

#[test]
fn hole_offset_is_linux_value() {
    assert_eq!(MMIO_REG_HOLE_OFFSET as usize, HOLE);
}

#[test]
fn doorbells_are_dropped_until_the_aperture_opens() {
    let clock = SimClock::new();
    let bases = nbio_bases();
    let m = NbioModel::new(&clock, bases, HOLE);
    assert_eq!(m.doorbell_write(0x10, 7), DoorbellOutcome::Dropped);
    assert_eq!(m.doorbell_read(0x10), u64::MAX);
    assert_eq!(
        m.gpu_doorbell_write(DOORBELL_BUS, 1),
        DoorbellOutcome::Dropped
    );

    nbio::init(&m, &bases, DOORBELL_BUS).unwrap();
    assert!(m.doorbell_aperture_open());
    assert_eq!(m.doorbell_write(0x10, 8), DoorbellOutcome::Rang);
    assert_eq!(m.doorbell_read(0x10), 8);
    // The GPU can now ring slot 2 through the self-ring aperture, and not
    // outside it.
    assert_eq!(m.selfring_base(), Some(DOORBELL_BUS));
    assert_eq!(
        m.gpu_doorbell_write(DOORBELL_BUS + 16, 5),
        DoorbellOutcome::Rang
    );
    assert_eq!(m.doorbell_read(2), 5);
    assert_eq!(
        m.gpu_doorbell_write(DOORBELL_BUS - 8, 5),
        DoorbellOutcome::Dropped
    );
    assert_eq!(m.dropped(), vec![(0x10, 7), (u32::MAX, 1), (u32::MAX, 5)]);

    // Registers at the hand-computed offsets hold what Linux writes.
    use barebell::bus::RegisterBus;
    assert_eq!(m.read32((0xD20 + 0xC0) * 4), 1); // DOORBELL_APER_EN
    assert_eq!(m.read32((0xD20 + 0x12D) * 4), 0x7F000); // REMAP_HDP_MEM
    assert_eq!(m.read32((0xD20 + 0x12E) * 4), 0x7F004); // REMAP_HDP_REG
    assert_eq!(m.read32((0xD20 + 0xF5) * 4), 0b11); // SELFRING EN | MODE
    assert_eq!(m.read32((0xD20 + 0xF4) * 4), 0); // base low
    assert_eq!(m.read32((0xD20 + 0xF3) * 4), 0xFC); // base high

    // Closing it again drops stores.
    nbio::enable_doorbell_aperture(&m, &bases, false).unwrap();
    assert_eq!(m.doorbell_write(0x10, 9), DoorbellOutcome::Dropped);
    nbio::enable_doorbell_selfring(&m, &bases, None).unwrap();
    assert_eq!(m.selfring_base(), None);
}

#[test]
fn hdp_flush_counts_only_after_the_remap() {
    let clock = SimClock::new();
    let bases = nbio_bases();
    let m = NbioModel::new(&clock, bases, HOLE);
    nbio::flush_hdp(&m, MMIO_REG_HOLE_OFFSET).unwrap();
    assert_eq!((m.hdp_flushes(), m.stray_hole_writes()), (0, 1));
    nbio::remap_hdp(&m, &bases, MMIO_REG_HOLE_OFFSET).unwrap();
    assert_eq!(m.remapped_mem_flush(), Some(HOLE));
    assert_eq!(m.remapped_reg_flush(), Some(HOLE + 4));
    nbio::flush_hdp(&m, MMIO_REG_HOLE_OFFSET).unwrap();
    nbio::flush_hdp(&m, MMIO_REG_HOLE_OFFSET).unwrap();
    assert_eq!((m.hdp_flushes(), m.stray_hole_writes()), (2, 1));
}

#[test]
fn errors_are_typed() {
    let clock = SimClock::new();
    let bases = nbio_bases();
    let m = NbioModel::new(&clock, bases, HOLE);
    // The ADDRESS field ends at bit 18: 512 KiB is out of reach.
    assert_eq!(
        nbio::remap_hdp(&m, &bases, 0x8_0000),
        Err(NbioError::BadRemapOffset { offset: 0x8_0000 })
    );
    // No segment 2 in the bases: the register cannot be placed.
    let short = IpBases([0, 0x14, u32::MAX, 0, 0, 0, 0, 0]);
    assert_eq!(
        nbio::enable_doorbell_aperture(&m, &short, true),
        Err(NbioError::NoRegister {
            name: "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN"
        })
    );
    m.unplug();
    assert_eq!(
        nbio::enable_doorbell_aperture(&m, &bases, true),
        Err(NbioError::DeviceGone {
            name: "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN"
        })
    );
    assert_eq!(
        nbio::flush_hdp(&m, MMIO_REG_HOLE_OFFSET),
        Err(NbioError::DeviceGone {
            name: "REMAP_HDP_MEM_FLUSH_CNTL"
        })
    );
}
