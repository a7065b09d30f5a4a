//! The one bring-up on the MI210 model (Aldebaran, GC 9.4.2): the same
//! `VirtualGpu` builder as MI300's, with the block versions Aldebaran's IPs
//! select. Expected values are written by hand from Linux 6.12 (see each
//! test).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell_bringup::{FirmwareDir, Options, Quiet, Step};
use barebell_model::VirtualGpu;
use barebell_model::parts;
use barebell_model::vgpu::HostMemory;

fn device() -> VirtualGpu {
    let mem = HostMemory::allocate(64 << 20).unwrap();
    VirtualGpu::new(
        parts::mi210(),
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(7),
    )
    .unwrap()
}

fn until(step: Step) -> Options {
    Options {
        until: step,
        ..Options::default()
    }
}

/// Discovery to the PSP: the fixed IP list, the SMU 13.0.2 mode-1 reset,
/// NBIO 7.4.4, GFXHUB v1.0 and MMHUB 1.7, the IH on OSSSYS 4.4.0 and the
/// PSP 13.0.2 load with the auxiliary sOS pair and an 8 MiB TMR
/// (`PSP_TMR_SIZE()` on Aldebaran).
#[test]
fn mi210_reaches_the_psp() {
    let m = device();
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until(Step::Psp), &Quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(gpu.reached, Step::Psp);
    assert_eq!(gpu.ips.generation, barebell::ip::Generation::Gfx90a);
    let (_, size) = m.psp().tmr().expect("SETUP_TMR reached the PSP model");
    assert_eq!(size, 0x80_0000);
    let refusals = m.psp().refusals();
    assert!(refusals.is_empty(), "{refusals:?}");
}
