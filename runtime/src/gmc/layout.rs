//! Where things go in the GPU's memory-controller (MC) address space:
//! the FB (VRAM) where the VBIOS put it, the GART as
//! `amdgpu_gmc_gart_location()` places it, and what VRAM keeps back at
//! its bottom for the VBIOS framebuffer.
//!
//! This is policy, not mechanism: Linux decides it in
//! `gmc_v11_0_vram_gtt_location()` / `gmc_v12_0_vram_gtt_location()` and
//! `amdgpu_gmc.c`; barebell follows the same rules so that a GPU sees the
//! layout amdgpu would have given it.

use crate::regs::dcn_3_2_0 as dcn;

/// Linux's GART size (`amdgpu_gart_size` -1 → 512 MiB,
/// `gmc_v11_0_mc_init()` / `gmc_v12_0_mc_init()`).
pub const GART_BYTES: u64 = 512 << 20;
/// `AMDGPU_GMC_HOLE_START` (amdgpu_gmc.h): MC addresses stop below it.
pub const GMC_HOLE_START: u64 = 0x0000_8000_0000_0000;
/// `AMDGPU_VBIOS_VGA_ALLOCATION` (`amdgpu.h`: "8MB for vga emulator and
/// 1 MB for FB"; that header needs the whole driver to compile, so it is
/// cited, not a fact).
pub const VGA_ALLOCATION: u64 = 9 << 20;

/// The VBIOS framebuffer's size as `gmc_v11_0_get_vbios_fb_size()`
/// computes it from the DCN 3.2.0 registers: VGA mode
/// (`D1VGA_CONTROL.D1VGA_MODE_ENABLE`) needs [`VGA_ALLOCATION`]; otherwise
/// the primary surface's viewport height times its pitch (pixels) times
/// 4 bytes. (`gmc_v12_0_get_vbios_fb_size()` returns 0 on gfx12.)
pub fn vbios_fb_size_gfx11(d1vga_control: u32, viewport: u32, pitch: u32) -> u64 {
    if dcn::field(d1vga_control, dcn::D1VGA_MODE_ENABLE) != 0 {
        return VGA_ALLOCATION;
    }
    let height = u64::from(dcn::field(viewport, dcn::PRI_VIEWPORT_HEIGHT));
    let pitch = u64::from(dcn::field(pitch, dcn::PITCH));
    height * pitch * 4
}

/// What `amdgpu_gmc_get_vbios_allocations()` keeps back at VRAM 0 for a
/// VBIOS framebuffer of `fb_size` bytes (0 without display hardware):
/// nothing if that would leave less than 8 MiB of VRAM, else the
/// framebuffer (split by Linux into `stolen_vga_memory` and
/// `stolen_extended_memory`, contiguous from 0; `keep_stolen_vga_memory`
/// is false for these parts), rounded up to whole 4 KiB pages as
/// `amdgpu_bo_create_kernel_at()` allocates them.
pub fn vbios_reservation(fb_size: u64, vram_bytes: u64) -> u64 {
    if vram_bytes.saturating_sub(fb_size) < 8 << 20 {
        return 0;
    }
    fb_size.next_multiple_of(4096)
}
/// `MMMC_VM_FB_LOCATION_BASE__FB_BASE_MASK` (mmhub_3_0_0 and 4_1_0
/// sh_mask headers); the field holds MC address bits 24 and up.
pub const FB_BASE_MASK: u32 = 0x00FF_FFFF;

/// Which end of the MC space the GART goes to
/// (`enum amdgpu_gart_placement`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GartPlacement {
    /// `AMDGPU_GART_PLACEMENT_HIGH`: gfx11 (`gmc_v11_0_vram_gtt_location()`).
    High,
    /// `AMDGPU_GART_PLACEMENT_LOW`: gfx12 (`gmc_v12_0_vram_gtt_location()`).
    Low,
    /// `AMDGPU_GART_PLACEMENT_BEST_FIT`: GC 9.x
    /// (`gmc_v9_0_vram_gtt_location()`): at 0 if it fits below the FB and
    /// that gap is the smaller one, or if it does not fit above; else
    /// high.
    BestFit,
}

/// Where the GART goes, as `amdgpu_gmc_gart_location()` decides it: `size`
/// bytes, 4 GiB aligned, high (below the MC hole) or low (at 0 if it fits
/// below the FB, else after it).
///
/// `None` when neither the space below the FB nor the space between the
/// FB and the hole holds `size` bytes (or `size` is 0). Linux shrinks the
/// GART to the larger gap there ("limiting GART") and, with both gaps
/// empty, computes `gart_end = gart_start + 0 - 1`; a memory size the
/// device reports can make that happen, so here it is an error instead.
pub fn gart_location(
    place: GartPlacement,
    fb_start: u64,
    fb_end: u64,
    size: u64,
) -> Option<(u64, u64)> {
    const FOUR_GB: u64 = 1 << 32;
    if size == 0 || fb_end < fb_start || fb_end >= GMC_HOLE_START {
        return None;
    }
    let below = fb_start;
    // First 4 GiB boundary after the FB; `fb_end < GMC_HOLE_START`, so
    // neither step overflows.
    let after_fb = (fb_end + 1).next_multiple_of(FOUR_GB);
    let above = GMC_HOLE_START.saturating_sub(after_fb);
    if size > below.max(above) {
        return None;
    }
    let start = match place {
        // `size <= above < GMC_HOLE_START` or `size <= below`: no underflow.
        GartPlacement::High => (GMC_HOLE_START - size) & !(FOUR_GB - 1),
        GartPlacement::Low if below >= size => 0,
        GartPlacement::Low => after_fb,
        GartPlacement::BestFit if (below >= size && below < above) || above < size => 0,
        GartPlacement::BestFit => (GMC_HOLE_START - size) & !(FOUR_GB - 1),
    };
    let end = start.checked_add(size - 1)?;
    // HIGH rounds down: it must still clear the FB; LOW after the FB
    // must still end below the hole.
    let clear = end < fb_start || start > fb_end;
    (clear && end < GMC_HOLE_START).then_some((start, end))
}

/// The FB's MC address from `MMMC_VM_FB_LOCATION_BASE`
/// (`mmhub_v3_0_get_fb_location()`, `mmhub_v4_1_0_get_fb_location()`).
pub fn fb_start(fb_location_base: u32) -> u64 {
    u64::from(fb_location_base & FB_BASE_MASK) << 24
}

/// The MC layout of one part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McLayout {
    /// VRAM size in bytes (`RCC_CONFIG_MEMSIZE` MiB).
    pub vram_bytes: u64,
    /// The FB in the MC map (`gmc.fb_start/_end`): this GPU's VRAM, or on
    /// an XGMI hive member every node's (`FB_LOCATION_BASE/TOP`).
    pub fb_start: u64,
    pub fb_end: u64,
    /// This GPU's VRAM offset 0 in the MC map (`gmc.vram_start`): the FB
    /// start, plus the node's segment on a hive member.
    pub vram_start: u64,
    pub gart_start: u64,
    pub gart_end: u64,
}

impl McLayout {
    /// The layout Linux computes for VRAM of `vram_bytes` at the FB base
    /// the VBIOS left, with a GART of [`GART_BYTES`]. `None` if the FB
    /// would run into the MC hole or leaves no room for the GART (the
    /// memory size is `RCC_CONFIG_MEMSIZE`, a device-reported number).
    pub fn new(place: GartPlacement, fb_location_base: u32, vram_bytes: u64) -> Option<Self> {
        let fb_start = fb_start(fb_location_base);
        let fb_end = fb_start.checked_add(vram_bytes)?.checked_sub(1)?;
        if vram_bytes == 0 || fb_end >= GMC_HOLE_START {
            return None;
        }
        let (gart_start, gart_end) = gart_location(place, fb_start, fb_end, GART_BYTES)?;
        Some(McLayout {
            vram_bytes,
            fb_start,
            fb_end,
            vram_start: fb_start,
            gart_start,
            gart_end,
        })
    }

    /// The layout of node `node_offset / segment` of an XGMI hive, as
    /// `gmc_v9_0_vram_gtt_location()` computes it: the FB is what
    /// `mmhub_v1_8_get_fb_location()` read (BASE and TOP, every node's
    /// segment; `amdgpu_gmc_vram_location()` keeps them when
    /// `num_physical_nodes` is not 0), this GPU's VRAM starts
    /// `node_offset` above its base, and the GART is placed around the
    /// whole FB. `None` if this GPU's VRAM leaves the FB, or as
    /// [`McLayout::new`].
    pub fn hive(
        place: GartPlacement,
        fb_location_base: u32,
        fb_location_top: u32,
        vram_bytes: u64,
        node_offset: u64,
    ) -> Option<Self> {
        let fb_start = fb_start(fb_location_base);
        // `mmhub_v1_8_get_fb_location()`: `fb_end = TOP << 24`.
        let fb_end = self::fb_start(fb_location_top);
        let vram_start = fb_start.checked_add(node_offset)?;
        let vram_end = vram_start.checked_add(vram_bytes)?.checked_sub(1)?;
        if vram_bytes == 0 || fb_end >= GMC_HOLE_START || vram_end > fb_end {
            return None;
        }
        let (gart_start, gart_end) = gart_location(place, fb_start, fb_end, GART_BYTES)?;
        Some(McLayout {
            vram_bytes,
            fb_start,
            fb_end,
            vram_start,
            gart_start,
            gart_end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `amdgpu_gmc_gart_location()` worked by hand for a 24 GiB board at
    /// MC 0x80_0000_0000: HIGH puts the 512 MiB GART at the top of the
    /// 47-bit MC space rounded down to 4 GiB; LOW puts it at 0 since it
    /// fits below the FB.
    #[test]
    fn gart_lands_where_linux_puts_it() {
        let fb = 0x80_0000_0000u64;
        let end = fb + (24u64 << 30) - 1;
        assert_eq!(
            gart_location(GartPlacement::High, fb, end, GART_BYTES),
            Some((0x7FFF_0000_0000, 0x7FFF_1FFF_FFFF))
        );
        assert_eq!(
            gart_location(GartPlacement::Low, fb, end, GART_BYTES),
            Some((0, 0x1FFF_FFFF))
        );
        // LOW with no room below the FB: after it, 4 GiB aligned.
        assert_eq!(
            gart_location(
                GartPlacement::Low,
                0x1000_0000,
                0x1000_0000 + (1 << 30) - 1,
                GART_BYTES
            ),
            Some((0x1_0000_0000, 0x1_1FFF_FFFF))
        );
    }

    /// `amdgpu_gmc_gart_location()`'s BEST_FIT, worked by hand: at 0 when
    /// the gap below the FB holds the GART and is the smaller gap, or when
    /// the gap above is too small; at the top of the 47-bit MC space
    /// otherwise.
    #[test]
    fn best_fit_takes_the_smaller_gap_that_holds_the_gart() {
        let gb = 1u64 << 30;
        // FB at 512 GiB: 512 GiB below, most of 128 TiB above.
        let fb = 0x80_0000_0000u64;
        assert_eq!(
            gart_location(GartPlacement::BestFit, fb, fb + 24 * gb - 1, GART_BYTES),
            Some((0, GART_BYTES - 1))
        );
        // FB at 0: nothing below.
        assert_eq!(
            gart_location(GartPlacement::BestFit, 0, 24 * gb - 1, GART_BYTES),
            Some((0x7FFF_0000_0000, 0x7FFF_0000_0000 + GART_BYTES - 1))
        );
        // FB ending at the hole: nothing above, so below.
        let top = GMC_HOLE_START - 8 * gb;
        assert_eq!(
            gart_location(GartPlacement::BestFit, top, GMC_HOLE_START - 1, GART_BYTES),
            Some((0, GART_BYTES - 1))
        );
        // Neither gap holds it.
        assert_eq!(
            gart_location(GartPlacement::BestFit, 0, GMC_HOLE_START - 1, GART_BYTES),
            None
        );
    }

    /// HIGH rounds the start down to 4 GiB; an FB just under the hole can
    /// then meet the GART. Linux places it there anyway; barebell refuses
    /// the layout instead of overlapping its own FB.
    #[test]
    fn a_high_gart_that_would_meet_the_fb_is_refused() {
        let fb_start = 0x7FFF_1000_0000u64;
        let fb_end = fb_start + (1 << 30) - 1;
        assert_eq!(
            gart_location(GartPlacement::High, fb_start, fb_end, GART_BYTES),
            None
        );
        // 256 MiB higher, the FB clears it.
        let fb_start = fb_start + 0x1000_0000;
        let fb_end = fb_start + (1 << 30) - 1;
        assert_eq!(
            gart_location(GartPlacement::High, fb_start, fb_end, GART_BYTES),
            Some((0x7FFF_0000_0000, 0x7FFF_0000_0000 + GART_BYTES - 1))
        );
    }

    /// `gmc_v11_0_get_vbios_fb_size()` worked by hand: VGA mode is 9 MiB
    /// whatever the surface says; a 1920x1080 surface with a 1920-pixel
    /// pitch is 1080 * 1920 * 4 bytes; a pitch wider than the viewport
    /// counts (2048 * 4 per line).
    #[test]
    fn vbios_fb_size_follows_gmc_v11() {
        assert_eq!(vbios_fb_size_gfx11(1, 1080 << 16 | 1920, 1920), 9 << 20);
        assert_eq!(vbios_fb_size_gfx11(0, 1080 << 16 | 1920, 1920), 8_294_400);
        assert_eq!(vbios_fb_size_gfx11(0, 768 << 16 | 1366, 2048), 6_291_456);
        // META_PITCH (bits 29:16) is not the pitch.
        assert_eq!(vbios_fb_size_gfx11(0, 2 << 16, 0x5_0001), 8);
        assert_eq!(vbios_fb_size_gfx11(0, 0, 0), 0);
        // amdgpu_gmc_get_vbios_allocations(): nothing if < 8 MiB would be
        // left; pages otherwise.
        assert_eq!(vbios_reservation(8_294_400, 24 << 30), 8_294_400);
        assert_eq!(vbios_reservation(4097, 24 << 30), 8192);
        assert_eq!(vbios_reservation(9 << 20, 16 << 20), 0);
        assert_eq!(vbios_reservation(0, 1 << 30), 0);
    }

    /// Issue 21 finding 4: a device-reported memory size that fills the
    /// MC space below the hole leaves no room for the GART on either side.
    /// gfx12 (LOW) used to place a one-byte GART at the hole itself.
    #[test]
    fn a_memory_size_that_leaves_no_room_for_the_gart_is_refused() {
        // FB at 0, ending 4 GiB below the hole: nothing below, and the
        // first 4 GiB boundary above is the hole.
        let vram = GMC_HOLE_START - (4 << 30) + 1;
        for place in [GartPlacement::Low, GartPlacement::High] {
            let l = McLayout::new(place, 0, vram);
            assert!(
                l.is_none_or(
                    |l| l.gart_end < GMC_HOLE_START && l.gart_end - l.gart_start + 1 == GART_BYTES
                ),
                "{place:?}: {l:x?}"
            );
        }
        // The largest FB that still leaves a whole GART above it works.
        let vram = GMC_HOLE_START - (8 << 30);
        let l = McLayout::new(GartPlacement::Low, 0, vram).unwrap();
        assert_eq!(
            (l.gart_start, l.gart_end),
            (
                GMC_HOLE_START - (8 << 30),
                GMC_HOLE_START - (8 << 30) + GART_BYTES - 1
            )
        );
    }

    /// `gmc_v9_0_vram_gtt_location()` for node 3 of a hive of 8 with
    /// 256 GiB segments, FB BASE 0x8000 and TOP 0x2_7FFF (16 MiB units):
    /// VRAM at 0x80_0000_0000 + 3 * 0x40_0000_0000; the FB is BASE..TOP
    /// << 24 (`mmhub_v1_8_get_fb_location()`); the 512 MiB GART fits below
    /// it and that gap is the smaller one, so BEST_FIT puts it at 0. A
    /// node whose VRAM would end past TOP is refused.
    #[test]
    fn a_hive_members_vram_starts_at_its_node_offset() {
        let l = McLayout::hive(
            GartPlacement::BestFit,
            0x8000,
            0x2_7FFF,
            192 << 30,
            3 * (256 << 30),
        )
        .unwrap();
        assert_eq!(l.vram_start, 0x140_0000_0000);
        assert_eq!((l.fb_start, l.fb_end), (0x80_0000_0000, 0x27F_FF00_0000));
        assert_eq!((l.gart_start, l.gart_end), (0, 0x1FFF_FFFF));
        assert!(
            McLayout::hive(
                GartPlacement::BestFit,
                0x8000,
                0x2_7FFF,
                192 << 30,
                8 * (256 << 30)
            )
            .is_none()
        );
        // A GPU on its own: VRAM at the FB base.
        let one = McLayout::new(GartPlacement::BestFit, 0x8000, 192 << 30).unwrap();
        assert_eq!(one.vram_start, one.fb_start);
    }

    #[test]
    fn a_memory_size_that_would_cross_the_hole_is_refused() {
        assert!(McLayout::new(GartPlacement::High, 0x8000, 1 << 30).is_some());
        assert!(McLayout::new(GartPlacement::High, 0xFF_FFFF, u64::MAX >> 1).is_none());
        assert!(McLayout::new(GartPlacement::Low, 0x8000, 0).is_none());
    }

    /// The GART is clear of the FB only if no byte is shared: a high GART
    /// whose last byte is the FB's first is refused, one ending the byte
    /// before is taken.
    #[test]
    fn a_gart_touching_the_fb_by_one_byte_is_refused() {
        // High: 4 GiB aligned below the hole.
        let start = (GMC_HOLE_START - GART_BYTES) & !((1u64 << 32) - 1);
        let end = start + GART_BYTES - 1;
        let fb_end = GMC_HOLE_START - 1;
        assert_eq!(
            gart_location(GartPlacement::High, end, fb_end, GART_BYTES),
            None
        );
        assert_eq!(
            gart_location(GartPlacement::High, end + 1, fb_end, GART_BYTES),
            Some((start, end))
        );
    }
}
