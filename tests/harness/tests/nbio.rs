//! The runtime's `nbio` step against the NBIO model, at the NBIO/NBIF
//! bases of the model's Navi31 (NBIO 4.3.0) and Navi48 (NBIF 6.3.1)
//! discovery tables (parsed by the runtime).
//!
//! Expected byte offsets are the header offsets plus the part's segment-2
//! base 0xD20, worked out by hand: `nbio_4_3_0_offset.h` and
//! `nbif_6_3_1_offset.h` both put `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN` at
//! 0xC0, `RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE` at 0xC3, the self-ring
//! registers at 0xF3..0xF5 and the HDP remap registers at 0x12D/0x12E,
//! all `BASE_IDX` 2. `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN` at 0x3780 also
//! matches the low bits of the 4.3.0 header's own
//! `cfgRCC_DEV0_EPF0_RCC_DOORBELL_APER_EN` (0x30203780). The hole offset
//! is `0x80000 - 4096` from `nbio_v4_3.c` and `nbif_v6_3_1.c`.

use barebell::bus::trace::{Access, Symbols, TraceBus};
use barebell::bus::{BlockError, RegisterBus};
use barebell::discovery::{Discovery, hw_id};
use barebell::nbio::{self, MMIO_REG_HOLE_OFFSET, Nbio, NbioError};
use barebell::regs::IpBases;
use barebell_model::SimClock;
use barebell_model::discovery::{self as sim, NAVI31, NAVI48, PartDesc};
use barebell_model::nbio::{DoorbellOutcome, NbioIp, NbioModel};
use std::cell::RefCell;

const HOLE: usize = 0x7F000;
const DOORBELL_BUS: u64 = 0x00FC_0000_0000;

/// Each part with the NBIO/NBIF version its discovery table must report
/// (see `barebell_model::discovery`) and the model of that IP.
const PARTS: &[(&PartDesc, (u8, u8, u8), NbioIp)] = &[
    (&NAVI31, (4, 3, 0), NbioIp::Nbio4_3_0),
    (&NAVI48, (6, 3, 1), NbioIp::Nbif6_3_1),
];

fn discovered(part: &PartDesc, want: (u8, u8, u8)) -> Nbio {
    let (bin, _) = sim::build(part);
    let d = Discovery::parse(&bin).unwrap();
    let ip = d.ip(hw_id::NBIF, 0).unwrap();
    assert_eq!(ip.version.triple(), want, "{}", part.name);
    Nbio::for_version(ip.version.triple(), ip.bases).unwrap()
}

#[test]
fn hole_offset_is_linux_value() {
    assert_eq!(MMIO_REG_HOLE_OFFSET as usize, HOLE);
}

/// `MMIO_REG_HOLE_OFFSET` is a `#define` in each IP's `.c` file, not in a
/// compilable header, so conformance cannot probe it: read it from the
/// text of Linux 6.12 `nbio_v4_3.c` and `nbif_v6_3_1.c` (extracted by
/// `cargo xtask headers`), evaluate `(BASE - PAGE_SIZE)` for 4 KiB pages,
/// and check that `set_reg_remap` uses it as the remap offset.
#[test]
fn hole_offset_matches_the_linux_c_files() {
    for file in ["nbio_v4_3.c", "nbif_v6_3_1.c"] {
        let path = format!(
            "{}/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/amdgpu/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"));
        let line = text
            .lines()
            .find(|l| {
                l.starts_with("#define")
                    && l.split_whitespace().nth(1) == Some("MMIO_REG_HOLE_OFFSET")
            })
            .unwrap_or_else(|| panic!("MMIO_REG_HOLE_OFFSET not in {file}"));
        let expr: String = line
            .split_whitespace()
            .skip(2)
            .collect::<Vec<_>>()
            .join(" ");
        let base = expr
            .strip_prefix('(')
            .and_then(|e| e.strip_suffix(" - PAGE_SIZE)"))
            .unwrap_or_else(|| panic!("{file}: unexpected form {expr:?}"));
        let base = u32::from_str_radix(base.trim_start_matches("0x"), 16).unwrap();
        assert_eq!(MMIO_REG_HOLE_OFFSET, base - 4096, "{file}");
        assert!(
            text.contains("adev->rmmio_remap.reg_offset = MMIO_REG_HOLE_OFFSET;"),
            "{file}: the hole is not the remap offset"
        );
    }
}

#[test]
fn each_part_gets_its_own_header_table() {
    let n31 = discovered(&NAVI31, (4, 3, 0));
    let n48 = discovered(&NAVI48, (6, 3, 1));
    assert_eq!(n31.regs.ip, "NBIO 4.3.0");
    assert_eq!(n48.regs.ip, "NBIF 6.3.1");
    assert_eq!(
        NbioIp::from_version((6, 3, 1)),
        Some(NbioIp::Nbif6_3_1),
        "the model must know NBIF 6.3.1"
    );
    assert_eq!(NbioIp::from_version((6, 1, 0)), None);
}

#[test]
fn doorbells_are_dropped_until_the_aperture_opens() {
    for &(part, version, ip) in PARTS {
        let clock = SimClock::new();
        let n = discovered(part, version);
        let m = NbioModel::new(&clock, ip, n.bases, HOLE);
        assert_eq!(m.doorbell_write(0x10, 7), DoorbellOutcome::Dropped);
        assert_eq!(m.doorbell_read(0x10), u64::MAX);
        assert_eq!(
            m.gpu_doorbell_write(DOORBELL_BUS, 1),
            DoorbellOutcome::Dropped
        );

        nbio::init(&m, &n, DOORBELL_BUS).unwrap();
        assert!(m.doorbell_aperture_open(), "{}", part.name);
        assert_eq!(m.doorbell_write(0x10, 8), DoorbellOutcome::Rang);
        assert_eq!(m.doorbell_read(0x10), 8);
        // The GPU can now ring slot 2 through the self-ring aperture, and
        // not outside it.
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
        assert_eq!(m.read32((0xD20 + 0xC0) * 4), 1); // DOORBELL_APER_EN
        assert_eq!(m.read32((0xD20 + 0x12D) * 4), 0x7F000); // REMAP_HDP_MEM
        assert_eq!(m.read32((0xD20 + 0x12E) * 4), 0x7F004); // REMAP_HDP_REG
        assert_eq!(m.read32((0xD20 + 0xF5) * 4), 0b11); // SELFRING EN | MODE
        assert_eq!(m.read32((0xD20 + 0xF4) * 4), 0); // base low
        assert_eq!(m.read32((0xD20 + 0xF3) * 4), 0xFC); // base high

        // Closing it again drops stores.
        nbio::enable_doorbell_aperture(&m, &n, false).unwrap();
        assert_eq!(m.doorbell_write(0x10, 9), DoorbellOutcome::Dropped);
        nbio::enable_doorbell_selfring(&m, &n, None).unwrap();
        assert_eq!(m.selfring_base(), None);
    }
}

#[test]
fn hdp_flush_counts_only_after_the_remap() {
    for &(part, version, ip) in PARTS {
        let clock = SimClock::new();
        let n = discovered(part, version);
        let m = NbioModel::new(&clock, ip, n.bases, HOLE);
        nbio::flush_hdp(&m, &n, MMIO_REG_HOLE_OFFSET).unwrap();
        assert_eq!((m.hdp_flushes(), m.stray_hole_writes()), (0, 1));
        nbio::remap_hdp(&m, &n, MMIO_REG_HOLE_OFFSET).unwrap();
        assert_eq!(m.remapped_mem_flush(), Some(HOLE));
        assert_eq!(m.remapped_reg_flush(), Some(HOLE + 4));
        nbio::flush_hdp(&m, &n, MMIO_REG_HOLE_OFFSET).unwrap();
        nbio::flush_hdp(&m, &n, MMIO_REG_HOLE_OFFSET).unwrap();
        assert_eq!(
            (m.hdp_flushes(), m.stray_hole_writes()),
            (2, 1),
            "{}",
            part.name
        );
    }
}

/// The flush is posted by reading `RCC_CONFIG_MEMSIZE` (0xC3, segment 2),
/// as `hdp_v6_0_flush_hdp()` / `hdp_v7_0_flush_hdp()` do, never the
/// remapped register.
#[test]
fn flush_is_posted_through_config_memsize() {
    for &(part, version, ip) in PARTS {
        let clock = SimClock::new();
        let n = discovered(part, version);
        let m = NbioModel::new(&clock, ip, n.bases, HOLE);
        nbio::remap_hdp(&m, &n, MMIO_REG_HOLE_OFFSET).unwrap();
        let seen = RefCell::new(Vec::new());
        let blocks: Vec<_> = n.regs.symbols.iter().map(|r| (*r, n.bases)).collect();
        {
            let bus = TraceBus::new(&m, Symbols { blocks: &blocks }, |a: Access| {
                seen.borrow_mut().push(a)
            });
            nbio::flush_hdp(&bus, &n, MMIO_REG_HOLE_OFFSET).unwrap();
        }
        let seen = seen.into_inner();
        assert_eq!(seen.len(), 2, "{}: {seen:?}", part.name);
        assert!(seen[0].write && seen[0].byte_offset == HOLE && seen[0].value == 0);
        assert!(!seen[1].write);
        assert_eq!(seen[1].byte_offset, (0xD20 + 0xC3) * 4);
        assert_eq!(seen[1].name, Some("RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE"));
        assert_eq!(m.hdp_flushes(), 1);
        assert_eq!(m.hole_reads(), 0, "{}", part.name);
        // The model does see a read of the hole when one happens.
        m.read32(HOLE);
        assert_eq!(m.hole_reads(), 1);
    }
}

#[test]
fn errors_are_typed() {
    for &(part, version, ip) in PARTS {
        let clock = SimClock::new();
        let n = discovered(part, version);
        let m = NbioModel::new(&clock, ip, n.bases, HOLE);
        // The ADDRESS field ends at bit 18: 512 KiB is out of reach.
        assert_eq!(
            nbio::remap_hdp(&m, &n, 0x8_0000),
            Err(NbioError::BadRemapOffset { offset: 0x8_0000 })
        );
        // No segment 2 in the bases: the register cannot be placed.
        let short = Nbio {
            bases: IpBases::new(&[0, 0x14, u32::MAX, 0, 0, 0, 0, 0]),
            ..n
        };
        assert_eq!(
            nbio::enable_doorbell_aperture(&m, &short, true),
            Err(NbioError::Register(BlockError::OutsideBases {
                register: "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN"
            }))
        );
        m.unplug();
        assert_eq!(
            nbio::enable_doorbell_aperture(&m, &n, true),
            Err(NbioError::DeviceGone {
                name: "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN"
            }),
            "{}",
            part.name
        );
        assert_eq!(
            nbio::flush_hdp(&m, &n, MMIO_REG_HOLE_OFFSET),
            Err(NbioError::DeviceGone {
                name: "RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE"
            })
        );
    }
}
