//! Registers beyond the register BAR through the NBIO's RSMU index/data
//! pair (`barebell::bus::indirect::IndirectBus`), against a BAR window model
//! (`barebell_model::bar::BarWindow`) that loses direct accesses past its
//! end as an unclaimed PCIe access is lost.
//!
//! The NBIO bases come from the discovery table the model synthesises and
//! the runtime parses; the RSMU offsets are the `nbio_4_3_0_offset.h` /
//! `nbif_6_3_1_offset.h` values the conformance stage checks.

use barebell::bus::indirect::{IndirectBus, IndirectError};
use barebell::bus::{ALL_ONES, RegisterBus};
use barebell::discovery::{Discovery, hw_id};
use barebell::nbio::{NBIF_6_3_1, NBIO_4_3_0, NbioRegs};
use barebell::psp::{self, Image, Psp};
use barebell::regs::IpBases;
use barebell_model::SimClock;
use barebell_model::bar::BarWindow;
use barebell_model::regfile::RegisterFile;
use barebell_model_host::psp_rig::{self as rig, PartFirmware, navi31, navi48};
use std::path::Path;

/// A BAR smaller than the 1 MiB of real boards, so that MP0's mailbox
/// (byte 0x58000 and up with the model's bases) lies beyond it.
const SMALL_BAR: usize = 0x4_0000;

fn nbio_bases(table: &[u8]) -> IpBases {
    Discovery::parse(table)
        .unwrap()
        .ip(hw_id::NBIF, 0)
        .unwrap()
        .bases
}

fn window<B: RegisterBus>(inner: B, nbio: &NbioRegs, bases: &IpBases) -> BarWindow<B> {
    BarWindow::new(
        inner,
        SMALL_BAR,
        nbio.rsmu_index.byte_offset(bases).unwrap(),
        nbio.rsmu_data.byte_offset(bases).unwrap(),
    )
}

fn leak<T>(x: T) -> &'static T {
    Box::leak(Box::new(x))
}

#[test]
fn registers_beyond_the_bar_are_reached_through_the_pair_and_lost_without_it() {
    let r = rig::rig(Path::new("/lib/firmware/amdgpu"), &navi31(), |_| {}).unwrap();
    let bases = nbio_bases(&r.table);
    let clock = leak(SimClock::new());
    let file = leak(RegisterFile::new(clock));
    let w = leak(window(file, &NBIO_4_3_0, &bases));
    let far = 0x9_0000; // beyond the window
    let near = 0x1_0000; // inside it

    // Without the pair, a store past the BAR is lost and a load reads
    // all-ones.
    w.write32(far, 0x1234_5678);
    assert_eq!(file.device_get(far), 0);
    assert_eq!(w.read32(far), ALL_ONES);
    assert_eq!(w.counts().beyond, 2);

    let bus = IndirectBus::new(w, SMALL_BAR, NBIO_4_3_0.rsmu_pair(), &bases).unwrap();
    bus.write32(far, 0xCAFE_F00D);
    assert_eq!(file.device_get(far), 0xCAFE_F00D);
    file.device_set(far + 4, 0x0BAD_BEEF);
    assert_eq!(bus.read32(far + 4), 0x0BAD_BEEF);
    bus.write32(near, 7);
    assert_eq!(file.device_get(near), 7);
    assert_eq!(bus.read32(near), 7);
    let c = w.counts();
    assert_eq!(c.beyond, 2, "nothing more was lost");
    // One DATA access per far register access (the read-back after a
    // write is a second one); the near register never touched DATA.
    assert_eq!(c.indirect, 3);
    // A 64-bit offset cannot be named by the 32-bit INDEX.
    assert_eq!(bus.read32(1 << 33), ALL_ONES);
}

#[test]
fn the_pair_must_itself_be_inside_the_bar_and_in_the_bases() {
    let bases = IpBases::new(&[0, 0x14, 0xD20, 0x10400, 0, 0, 0, 0]);
    let clock = SimClock::new();
    let file = RegisterFile::new(&clock);
    let err = IndirectBus::new(&file, 0x40, NBIF_6_3_1.rsmu_pair(), &bases).unwrap_err();
    assert!(
        matches!(
            err,
            IndirectError::PairOutsideBar {
                name: "BIF_BX_PF0_RSMU_INDEX",
                byte_offset: 0x50,
                bar_len: 0x40
            }
        ),
        "{err:?}"
    );
    // Segment 1 far up: the pair would itself need the pair.
    let far = IpBases::new(&[0, 0x241B000, 0, 0, 0, 0, 0, 0]);
    assert!(matches!(
        IndirectBus::new(&file, SMALL_BAR, NBIF_6_3_1.rsmu_pair(), &far),
        Err(IndirectError::PairOutsideBar {
            byte_offset: 0x906_C000,
            ..
        })
    ));
}

/// Four threads drive the one INDEX cursor at once; each must only ever
/// see its own register's value (the lock keeps INDEX and DATA paired).
#[test]
fn concurrent_indirect_accesses_stay_paired() {
    let bases = IpBases::new(&[0, 0x14, 0xD20, 0x10400, 0, 0, 0, 0]);
    let clock = leak(SimClock::new());
    let file = leak(RegisterFile::new(clock));
    let w = leak(window(file, &NBIO_4_3_0, &bases));
    let bus = leak(IndirectBus::new(w, SMALL_BAR, NBIO_4_3_0.rsmu_pair(), &bases).unwrap());
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            std::thread::spawn(move || {
                let reg = 0x10_0000 + 4 * t as usize;
                for i in 0..5_000u32 {
                    let v = (t << 24) | i;
                    bus.write32(reg, v);
                    assert_eq!(bus.read32(reg), v, "thread {t} iteration {i}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for t in 0..4u32 {
        assert_eq!(
            file.device_get(0x10_0000 + 4 * t as usize),
            (t << 24) | 4_999
        );
    }
    assert_eq!(w.counts().beyond, 0);
}

/// The whole PSP load, with the mailbox beyond a small BAR: every
/// C2PMSG access goes through the pair, and the model sees the same
/// protocol as with a direct mapping.
fn psp_load_beyond_the_bar(part: PartFirmware, nbio: &NbioRegs) {
    let mut r = rig::rig(Path::new("/lib/firmware/amdgpu"), &part, |_| {}).unwrap();
    let bases = nbio_bases(&r.table);
    let c35 = r.regs.c2pmsg_35.byte_offset(&r.mp0.bases).unwrap();
    assert!(c35 >= SMALL_BAR, "the mailbox must lie beyond the window");
    let w = leak(window(r.model, nbio, &bases));
    let bus = leak(IndirectBus::new(w, SMALL_BAR, nbio.rsmu_pair(), &bases).unwrap());
    let mut p = Psp::new(bus, r.host, r.regs, &r.mp0.bases, r.bufs.take().unwrap()).unwrap();
    let mut images = vec![
        Image {
            fw_type: 0,
            bytes: &[]
        };
        64
    ];
    let n = psp::gfx_images(&r.blobs, &mut images).unwrap();
    let report = psp::load_firmware(
        &mut p,
        r.plan,
        &r.sos,
        Some(r.smu),
        &images[..n],
        Some(&mut r.tmr),
    )
    .unwrap();
    p.wait_rlc_autoload(r.gc_regs, &r.gc.bases).unwrap();
    assert_eq!(r.model.refusals(), vec![]);
    assert_eq!(report.ip_fw_loads, part.gfx.len() + 1);
    let c = w.counts();
    assert_eq!(c.beyond, 0, "no access was lost past the BAR");
    assert!(c.indirect > 50, "the mailbox went through the pair: {c:?}");
}

#[test]
fn navi31_psp_load_with_the_mailbox_beyond_the_bar() {
    psp_load_beyond_the_bar(navi31(), &NBIO_4_3_0);
}

#[test]
fn navi48_psp_load_with_the_mailbox_beyond_the_bar() {
    psp_load_beyond_the_bar(navi48(), &NBIF_6_3_1);
}
