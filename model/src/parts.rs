//! The parts the model can be, declared once.
//!
//! A part is a discovery table (which IP versions, at which register
//! bases), a board VRAM size, where the VBIOS leaves the FB in the MC
//! map, and the firmware Linux loads for those versions. The discovery
//! tables' IP bases are **model values**: no public Navi31 or Navi48
//! discovery binary is installable here, so the segment bases are Navi21's
//! (see [`crate::discovery`]). The firmware lists are written by hand from
//! `amdgpu_ucode.h` and `psp_get_fw_type()` (see
//! [`crate::psp::firmware::PartFirmware`]).

use crate::dcn::Display;
use crate::nbio::NbioIp;
use crate::psp::firmware::{self, PartFirmware};
use barebell::ip::Generation;

/// One model part.
#[derive(Debug, Clone)]
pub struct Part {
    /// The name `--part` takes.
    pub name: &'static str,
    pub generation: Generation,
    pub nbio: NbioIp,
    /// What the VBIOS leaves in `MMMC_VM_FB_LOCATION_BASE`: the FB's MC
    /// address (a model value; a card's VBIOS sets it).
    pub fb_start: u64,
    /// What the VBIOS leaves in `*MC_VM_FB_OFFSET` (bytes; the register
    /// holds bits 24 and up): the physical address of VRAM offset 0,
    /// which Linux reads as `vm_manager.vram_base_offset`
    /// (`mmhub_v3_0_get_mc_fb_offset()`) and adds to every VRAM address
    /// it puts in a PDE or PTE (`amdgpu_gmc_vram_mc2pa()`). 0 on both
    /// parts (a model value: a dGPU's own VRAM starts at physical 0; the
    /// register matters for APUs, whose VRAM is carved out of system
    /// memory); tests set other values to show the runtime reads it.
    pub fb_offset: u64,
    /// What the VBIOS left on screen ([`crate::dcn`]), `None` where the
    /// model has no display (gfx12). A model value: it depends on the
    /// board and monitor.
    pub display: Option<Display>,
    /// Discovery table, VRAM size and firmware.
    pub firmware: PartFirmware,
    /// The MES blobs whose headers give each pipe's start address
    /// (scheduler pipe, KIQ pipe).
    pub mes_files: [&'static str; 2],
}

/// The names `--part` accepts.
pub const NAMES: [&str; 2] = ["navi31", "navi48"];

/// A Navi31-class part: GC 11.0.0, MP0 13.0.0, NBIO 4.3.0, MMHUB 3.0.0,
/// 24 GiB (RX 7900 XTX).
pub fn navi31() -> Part {
    Part {
        name: "navi31",
        generation: Generation::Gfx11,
        nbio: NbioIp::Nbio4_3_0,
        fb_start: firmware::FB_START,
        fb_offset: 0,
        // A UEFI GOP at 1080p (model value).
        display: Some(Display::GOP_1080P),
        firmware: firmware::navi31(),
        mes_files: ["gc_11_0_0_mes_2.bin", "gc_11_0_0_mes1.bin"],
    }
}

/// A Navi48-class part: GC 12.0.1, MP0 14.0.3, NBIF 6.3.1, MMHUB 4.1.0,
/// 16 GiB (RX 9070 XT).
pub fn navi48() -> Part {
    Part {
        name: "navi48",
        generation: Generation::Gfx12,
        nbio: NbioIp::Nbif6_3_1,
        fb_start: firmware::FB_START,
        fb_offset: 0,
        display: None,
        firmware: firmware::navi48(),
        mes_files: ["gc_12_0_1_uni_mes.bin", "gc_12_0_1_uni_mes.bin"],
    }
}

/// The part named `name`.
pub fn by_name(name: &str) -> Option<Part> {
    match name {
        "navi31" => Some(navi31()),
        "navi48" => Some(navi48()),
        _ => None,
    }
}
