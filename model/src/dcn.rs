//! The display controller as a booted VBIOS leaves it, and the
//! framebuffer it scans out of VRAM.
//!
//! A VBIOS (legacy VGA or UEFI GOP) lights the display before any driver
//! runs and scans out of VRAM from offset 0; Linux keeps that memory
//! (`stolen_vga_memory` and `stolen_extended_memory`, created at VRAM 0
//! by `amdgpu_ttm_init()`) for as long as the VBIOS image may still be on
//! screen, sized by `amdgpu_gmc_get_vbios_allocations()` from the
//! generation's `get_vbios_fb_size()`. On gfx11 that is
//! `gmc_v11_0_get_vbios_fb_size()`, which reads three DCN 3.2.0
//! registers:
//! - `D1VGA_CONTROL.D1VGA_MODE_ENABLE` set: VGA mode, size
//!   `AMDGPU_VBIOS_VGA_ALLOCATION` (9 MiB, `amdgpu.h`: "8MB for vga
//!   emulator and 1 MB for FB");
//! - otherwise a surface: `HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION.PRI_VIEWPORT_HEIGHT`
//!   × `HUBPREQ0_DCSURF_SURFACE_PITCH.PITCH` (pixels) × 4 bytes.
//!
//! `gmc_v12_0_get_vbios_fb_size()` returns 0 and reads nothing, so the
//! model has no VBIOS display on gfx12 (where a gfx12 VBIOS puts its
//! framebuffer is not in the sources).
//!
//! The model serves those registers (at the DMU's discovered bases) with
//! the values of its [`Display`], and fills the scanout memory with a
//! picture at start. Hardware does not fault when a driver overwrites
//! the framebuffer on screen; it shows the garbage. The model makes that
//! observable instead: [`DcnModel::clobbered`] names the first byte of
//! the picture that changed. Which mode a real board's VBIOS leaves
//! (resolution, VGA or GOP) depends on the board and the monitor: the
//! parts' values are **model values**.
//!
//! Offsets and field masks here are this module's own, written from
//! `dcn_3_2_0_offset.h`/`_sh_mask.h` and checked by
//! [`crate::conformance::FACTS`].

use crate::RegisterFile;
use barebell::bus::RegisterBus;
use barebell::regs::IpBases;

/// `regD1VGA_CONTROL` (dword offset, `BASE_IDX`).
pub const D1VGA_CONTROL: (u32, u8) = (0x000c, 1);
/// `regHUBP0_DCSURF_PRI_VIEWPORT_DIMENSION`.
pub const HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION: (u32, u8) = (0x05ea, 2);
/// `regHUBPREQ0_DCSURF_SURFACE_PITCH`.
pub const HUBPREQ0_DCSURF_SURFACE_PITCH: (u32, u8) = (0x0607, 2);
/// `D1VGA_CONTROL__D1VGA_MODE_ENABLE_MASK`.
pub const D1VGA_MODE_ENABLE_MASK: u32 = 0x1;
/// `HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION__PRI_VIEWPORT_WIDTH` and `_HEIGHT`.
pub const PRI_VIEWPORT_WIDTH: (u32, u32) = (0, 0x3FFF);
pub const PRI_VIEWPORT_HEIGHT: (u32, u32) = (16, 0x3FFF_0000);
/// `HUBPREQ0_DCSURF_SURFACE_PITCH__PITCH`.
pub const PITCH: (u32, u32) = (0, 0x3FFF);
/// `AMDGPU_VBIOS_VGA_ALLOCATION` (`amdgpu.h`, which needs the whole
/// driver to compile: cited, not a fact).
pub const VGA_ALLOCATION: u64 = 9 << 20;

/// What the VBIOS left on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// VGA mode (`D1VGA_MODE_ENABLE` 1): the emulator and its framebuffer
    /// use the first [`VGA_ALLOCATION`] bytes.
    Vga,
    /// A 32-bit surface at VRAM 0 (a GOP mode): viewport `width` ×
    /// `height`, `pitch` pixels per line.
    Surface { width: u32, height: u32, pitch: u32 },
}

impl Display {
    /// UEFI GOP at 1920×1080, pitch 1920: the model parts' value.
    pub const GOP_1080P: Display = Display::Surface {
        width: 1920,
        height: 1080,
        pitch: 1920,
    };
    /// UEFI GOP at 3840×2160 (a 4K monitor), 31.6 MiB.
    pub const GOP_2160P: Display = Display::Surface {
        width: 3840,
        height: 2160,
        pitch: 3840,
    };

    /// Bytes of VRAM from offset 0 the display uses, as the hardware
    /// reads it: the surface's lines (pitch × height × 4), or the VGA
    /// allocation.
    pub fn bytes(&self) -> u64 {
        match *self {
            Display::Vga => VGA_ALLOCATION,
            Display::Surface { height, pitch, .. } => u64::from(height) * u64::from(pitch) * 4,
        }
    }

    /// `(D1VGA_CONTROL, HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION,
    /// HUBPREQ0_DCSURF_SURFACE_PITCH)` as the VBIOS leaves them.
    pub fn registers(&self) -> (u32, u32, u32) {
        match *self {
            // The surface registers of VGA mode are not in the sources:
            // 0 (model value).
            Display::Vga => (D1VGA_MODE_ENABLE_MASK, 0, 0),
            Display::Surface {
                width,
                height,
                pitch,
            } => (
                0,
                ((height << PRI_VIEWPORT_HEIGHT.0) & PRI_VIEWPORT_HEIGHT.1)
                    | ((width << PRI_VIEWPORT_WIDTH.0) & PRI_VIEWPORT_WIDTH.1),
                (pitch << PITCH.0) & PITCH.1,
            ),
        }
    }
}

/// The picture's 64-bit word at byte `offset` (any pattern no driver
/// writes by chance).
fn pixel(offset: u64) -> u64 {
    (offset ^ 0xB10C_F00D_0000_0000).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
}

/// The DMU's registers Linux reads, and the scanout memory.
#[derive(Debug)]
pub struct DcnModel {
    regs: RegisterFile,
    bases: IpBases,
    display: Display,
    /// Host address and length of the scanout memory (VRAM 0..).
    screen: (u64, u64),
}

impl DcnModel {
    /// The display `display` at the DMU's `bases`, scanning out of the
    /// `screen_len` host bytes at `screen` (VRAM offset 0), which it
    /// paints now, as the VBIOS did.
    ///
    /// # Safety
    /// `screen` must be `screen_len` writable bytes, 8-byte aligned, that
    /// stay valid for this model's life; the host may write them (that is
    /// what [`DcnModel::clobbered`] reports).
    pub unsafe fn new(
        clock: &crate::SimClock,
        bases: IpBases,
        display: Display,
        screen: *mut u8,
        screen_len: u64,
    ) -> Self {
        let regs = RegisterFile::new(clock);
        let (vga, viewport, pitch) = display.registers();
        let m = DcnModel {
            regs,
            bases,
            display,
            screen: (screen as u64, screen_len),
        };
        for (r, v) in [
            (D1VGA_CONTROL, vga),
            (HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION, viewport),
            (HUBPREQ0_DCSURF_SURFACE_PITCH, pitch),
        ] {
            if let Some(o) = m.offset(r) {
                m.regs.device_set(o, v);
            }
        }
        let words = (screen_len.min(display.bytes()) / 8) as usize;
        // SAFETY: the caller's promise: `screen_len` bytes, 8-aligned.
        let s = unsafe { core::slice::from_raw_parts_mut(screen.cast::<u64>(), words) };
        for (i, w) in s.iter_mut().enumerate() {
            *w = pixel(i as u64 * 8);
        }
        m
    }

    fn offset(&self, (dw, idx): (u32, u8)) -> Option<usize> {
        let base = *self.bases.0.get(usize::from(idx))?;
        usize::try_from(base.checked_add(dw)?).ok()?.checked_mul(4)
    }

    /// BAR5 byte offsets of the three registers.
    pub fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        [
            D1VGA_CONTROL,
            HUBP0_DCSURF_PRI_VIEWPORT_DIMENSION,
            HUBPREQ0_DCSURF_SURFACE_PITCH,
        ]
        .into_iter()
        .filter_map(|r| self.offset(r))
    }

    pub fn display(&self) -> Display {
        self.display
    }

    /// The first VRAM offset of the picture on screen that no longer holds
    /// what the VBIOS drew, or `None` if the screen is intact.
    pub fn clobbered(&self) -> Option<u64> {
        let words = self.screen.1.min(self.display.bytes()) / 8;
        (0..words).map(|i| i * 8).find(|&off| {
            // SAFETY: inside the screen (`new`'s contract), 8-aligned; a
            // volatile read, since the host writes the same memory.
            let v = unsafe { core::ptr::read_volatile((self.screen.0 + off) as *const u64) };
            v != pixel(off)
        })
    }
}

impl RegisterBus for DcnModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.regs.read32(byte_offset)
    }
    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.write32(byte_offset, value)
    }
}
