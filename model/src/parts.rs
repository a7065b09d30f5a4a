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
    /// The NBIO the model has for the part (NBIO 7.9 on the GC 9.4.3
    /// parts, one [`crate::nbio::NbioModel`] per AID on its discovered
    /// bases).
    pub nbio: Option<NbioIp>,
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
    /// (scheduler pipe, KIQ pipe); `None` on GC 9.4.3, which has no MES.
    pub mes_files: Option<[&'static str; 2]>,
    /// XCCs and active CUs per XCC the part declares (see [`mi300x`] and
    /// [`mi308x`]); `None` for the single-GC parts, whose CU count the
    /// model does not declare.
    pub xcc: Option<XccCount>,
    /// The MEC blob whose `gfx_firmware_header_v2_0` gives the start
    /// address every MEC pipe must run from.
    pub mec_file: &'static str,
}

/// The XCC layout a multi-XCC part declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XccCount {
    /// XCCs left after harvesting (`NUM_XCC(xcc_mask)`).
    pub xccs: u32,
    /// Active CUs per XCC (what each XCC's `CC_GC_SHADER_ARRAY_CONFIG` /
    /// `GC_USER_SHADER_ARRAY_CONFIG` leave on; not in the discovery table).
    pub cus_per_xcc: u32,
}

impl XccCount {
    pub const fn cus(&self) -> u32 {
        self.xccs * self.cus_per_xcc
    }
}

/// The names `--part` accepts.
pub const NAMES: [&str; 4] = ["navi31", "navi48", "mi300x", "mi308x"];

/// A Navi31-class part: GC 11.0.0, MP0 13.0.0, NBIO 4.3.0, MMHUB 3.0.0,
/// 24 GiB (RX 7900 XTX).
pub fn navi31() -> Part {
    Part {
        name: "navi31",
        generation: Generation::Gfx11,
        nbio: Some(NbioIp::Nbio4_3_0),
        fb_start: firmware::FB_START,
        fb_offset: 0,
        // A UEFI GOP at 1080p (model value).
        display: Some(Display::GOP_1080P),
        firmware: firmware::navi31(),
        mes_files: Some(["gc_11_0_0_mes_2.bin", "gc_11_0_0_mes1.bin"]),
        xcc: None,
        mec_file: "gc_11_0_0_mec.bin",
    }
}

/// A Navi48-class part: GC 12.0.1, MP0 14.0.3, NBIF 6.3.1, MMHUB 4.1.0,
/// 16 GiB (RX 9070 XT).
pub fn navi48() -> Part {
    Part {
        name: "navi48",
        generation: Generation::Gfx12,
        nbio: Some(NbioIp::Nbif6_3_1),
        fb_start: firmware::FB_START,
        fb_offset: 0,
        display: None,
        firmware: firmware::navi48(),
        mes_files: Some(["gc_12_0_1_uni_mes.bin", "gc_12_0_1_uni_mes.bin"]),
        xcc: None,
        mec_file: "gc_12_0_1_mec.bin",
    }
}

/// An MI300X (GC 9.4.3, gfx942): 8 XCCs on 4 AIDs, 38 active CUs each,
/// 304 CUs (ROCm's gpu-arch-specs table: "304 (38 per XCD)"), 192 GiB of
/// HBM3 (the same table). The discovery table's layout and bases are model
/// values ([`crate::discovery::MI300X`]). [`crate::VirtualGpu::new`]
/// builds it with the GC 9.4.3 block models
/// ([`crate::vgpu::gfx_v9_4_3`]).
pub fn mi300x() -> Part {
    Part {
        name: "mi300x",
        generation: Generation::Gfx94,
        nbio: Some(NbioIp::Nbio7_9_0),
        fb_start: firmware::FB_START,
        fb_offset: 0,
        display: None,
        firmware: firmware::mi300x(),
        mes_files: None,
        mec_file: "gc_9_4_3_mec.bin",
        xcc: Some(XccCount {
            xccs: 8,
            cus_per_xcc: 38,
        }),
    }
}

/// An MI308X, the seeds' part: GC 9.4.3 with 80 CUs (what the seeds'
/// ROCm trace reports). Modelled as 4 XCCs × 20 CUs, one XCC per AID
/// (the other four in the harvest table): 20 CUs per XCC is public as
/// "MI308 CPX mode has 20 CU only" (ROCm/rocMLIR PR 2197; CPX is one XCC
/// per partition), so 80 CUs are 4 XCCs. Which XCCs are fused off, and
/// the 192 GiB of VRAM, are **model values**.
pub fn mi308x() -> Part {
    Part {
        name: "mi308x",
        firmware: firmware::mi308x(),
        xcc: Some(XccCount {
            xccs: 4,
            cus_per_xcc: 20,
        }),
        ..mi300x()
    }
}

/// The part named `name`.
pub fn by_name(name: &str) -> Option<Part> {
    match name {
        "navi31" => Some(navi31()),
        "navi48" => Some(navi48()),
        "mi300x" => Some(mi300x()),
        "mi308x" => Some(mi308x()),
        _ => None,
    }
}
