//! The VBIOS framebuffer: what the display scans out of VRAM when no
//! driver has taken it over, and which the bring-up must leave alone
//! (Linux keeps it as `stolen_vga_memory`, sized by
//! `gmc_v11_0_get_vbios_fb_size()`).
//!
//! Register values are composed by hand from `dcn_3_2_0_sh_mask.h`
//! (`PRI_VIEWPORT_HEIGHT` at bit 16, `PRI_VIEWPORT_WIDTH` and `PITCH` at
//! bit 0) at the model's DCN bases (`sienna_cichlid_ip_offset.h`
//! `DCN_BASE`: segment 1 at 0xC0, segment 2 at 0x34C0).

use barebell::platform::Platform;
use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::dcn::Display;
use barebell_model::parts;
use barebell_tests::{FirmwareDir, virtual_gpu};

/// `regD1VGA_CONTROL` (0x000c, segment 1) and the two surface registers
/// (0x05ea and 0x0607, segment 2) as BAR5 byte offsets.
const D1VGA_CONTROL: usize = (0xC0 + 0x000c) * 4;
const VIEWPORT: usize = (0x34C0 + 0x05ea) * 4;
const PITCH: usize = (0x34C0 + 0x0607) * 4;

#[test]
fn the_model_vbios_leaves_its_mode_in_the_dcn_registers() {
    let gpu = virtual_gpu(parts::navi31(), 1);
    let r = gpu.regs();
    // GOP 1920x1080: VGA mode off, viewport 1080 << 16 | 1920, pitch 1920.
    assert_eq!(r.read32(D1VGA_CONTROL), 0);
    assert_eq!(r.read32(VIEWPORT), 1080 << 16 | 1920);
    assert_eq!(r.read32(PITCH), 1920);
    assert_eq!(gpu.gfx11().unwrap().scanout_clobbered(), None);
    let vga = virtual_gpu(
        barebell_model::Part {
            display: Some(Display::Vga),
            ..parts::navi31()
        },
        1,
    );
    assert_eq!(vga.regs().read32(D1VGA_CONTROL), 1);
    // Navi48: Linux reads no display register on gfx12; no display.
    assert!(
        virtual_gpu(parts::navi48(), 1)
            .gfx11()
            .unwrap()
            .dcn()
            .is_none()
    );
}

/// Runs the bring-up on navi31 with `display` on screen and checks the
/// picture survived and the layout kept `kept` bytes at VRAM 0 (worked
/// by hand from `gmc_v11_0_get_vbios_fb_size()`).
fn survives(display: Display, kept: u64, until: Step, mapping: Option<Mapping>) {
    let part = barebell_model::Part {
        display: Some(display),
        ..parts::navi31()
    };
    let gpu = virtual_gpu(part, 1);
    let opts = Options {
        until,
        mapping,
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{display:?}: {e}\n{}", gpu.firmware_logs()));
    assert_eq!(
        gpu.gfx11().unwrap().scanout_clobbered(),
        None,
        "{display:?}: the bring-up wrote into the framebuffer on screen ({} bytes from VRAM 0); layout {:#x?}",
        display.bytes(),
        up.memory
    );
    assert_eq!(up.memory.map(|m| m.vbios_fb), Some(kept), "{display:?}");
}

#[test]
fn a_4k_gop_framebuffer_is_left_alone() {
    // 2160 lines of 3840 pixels: 31.6 MiB, more than a fixed 16 MiB.
    survives(Display::GOP_2160P, 2160 * 3840 * 4, Step::Rlc, None);
}

#[test]
fn a_1080p_gop_framebuffer_and_vga_mode_are_left_alone() {
    survives(
        Display::GOP_1080P,
        1080 * 1920 * 4,
        Step::Queue,
        Some(Mapping::Mes),
    );
    // AMDGPU_VBIOS_VGA_ALLOCATION.
    survives(Display::Vga, 9 << 20, Step::Rlc, None);
}

/// Navi48: `gmc_v12_0_get_vbios_fb_size()` is 0, so nothing is kept.
#[test]
fn gfx12_keeps_nothing() {
    let gpu = virtual_gpu(parts::navi48(), 1);
    let opts = Options {
        until: Step::Gmc,
        mapping: None,
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet).unwrap();
    assert_eq!(up.memory.map(|m| m.vbios_fb), Some(0));
}
