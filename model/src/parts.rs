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
use crate::discovery;
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
    /// The part's place in an XGMI hive ([`Xgmi`]); `None`: a GPU on its
    /// own (`MC_VM_XGMI_LFB_CNTL` reads 0, XGMI off), as every model part
    /// is unless [`Part::in_hive`] puts it in one.
    pub xgmi: Option<Xgmi>,
}

/// A GPU's place in an XGMI hive, as the IFWI leaves it in the hubs'
/// `MC_VM_XGMI_LFB_CNTL` (`PF_LFB_REGION`: this node, `PF_MAX_REGION`:
/// the last node) and `MC_VM_XGMI_LFB_SIZE` (`PF_LFB_SIZE`: each node's
/// segment of the hive's physical address space, 16 MiB units), which
/// `gfxhub_v1_2_get_xgmi_info()` reads. Node `n`'s VRAM sits at
/// `MC_VM_FB_OFFSET + n * segment` in the hive's physical space and at
/// `FB_LOCATION_BASE + n * segment` in every member's MC space
/// (`gmc_v9_0_vram_gtt_location()`; tinygrad's `AM_GMC.paddr_base`,
/// `mc_base`); `FB_LOCATION_BASE/TOP` span every node's segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Xgmi {
    /// This GPU's physical node id (`physical_node_id`).
    pub node: u8,
    /// Nodes in the hive (`num_physical_nodes = PF_MAX_REGION + 1`).
    pub nodes: u8,
    /// Each node's segment in bytes (`node_segment_size`), a multiple of
    /// 16 MiB.
    pub segment: u64,
}

impl Xgmi {
    /// The physical (and MC) offset of this node's VRAM from node 0's.
    pub const fn node_offset(&self) -> u64 {
        self.node as u64 * self.segment
    }
}

/// Nodes in the hive [`Part::in_hive`] builds: an 8-GPU MI300X platform
/// (AMD's "Instinct MI300X Platform" is eight OAM GPUs on one XGMI
/// fabric). Linux accepts at most 8 (`max_num_physical_nodes` in
/// `gfxhub_v1_2_get_xgmi_info()`).
pub const HIVE_NODES: u8 = 8;

/// Each node's segment of the hive's physical address space
/// (`PF_LFB_SIZE`): 256 GiB, the smallest power of two that holds the
/// MI300X's 192 GiB. A **model value**: the IFWI sets it, and no public
/// source gives an MI300X's.
pub const HIVE_SEGMENT: u64 = 256 << 30;

/// Why a part cannot be given a place in a hive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiveError {
    /// The part's GC has no XGMI hubs in the model (only GC 9.4.3 has).
    NoXgmi { part: &'static str },
    /// `node` is past the hive's last node.
    NoSuchNode { node: u8, nodes: u8 },
}

impl core::fmt::Display for HiveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            HiveError::NoXgmi { part } => write!(
                f,
                "{part} is not an XGMI part: only the MI300 parts (mi300x, mi308x) can be a node of a hive"
            ),
            HiveError::NoSuchNode { node, nodes } => write!(
                f,
                "node {node} does not exist: a hive of {nodes} GPUs has nodes 0 to {}",
                nodes.saturating_sub(1)
            ),
        }
    }
}

impl Part {
    /// This part as node `node` of a hive of [`HIVE_NODES`] GPUs with
    /// [`HIVE_SEGMENT`]-byte segments (GC 9.4.3 parts only).
    pub fn in_hive(self, node: u8) -> Result<Part, HiveError> {
        if self.generation != Generation::Gfx94 {
            return Err(HiveError::NoXgmi { part: self.name });
        }
        if node >= HIVE_NODES {
            return Err(HiveError::NoSuchNode {
                node,
                nodes: HIVE_NODES,
            });
        }
        Ok(Part {
            xgmi: Some(Xgmi {
                node,
                nodes: HIVE_NODES,
                segment: HIVE_SEGMENT,
            }),
            ..self
        })
    }
}

/// The XCC layout a multi-XCC part declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XccCount {
    /// XCCs left after harvesting (`NUM_XCC(xcc_mask)`).
    pub xccs: u32,
    /// Active CUs per XCC (what each XCC's `CC_GC_SHADER_ARRAY_CONFIG` /
    /// `GC_USER_SHADER_ARRAY_CONFIG` leave on; not in the discovery table).
    pub cus_per_xcc: u32,
    /// Each XCC's shader arrays, whose harvest registers leave
    /// `cus_per_xcc` on.
    pub arrays: ArrayLayout,
}

/// One XCC's shader engines, arrays (SHs) per engine and CU slots per
/// array: what `gfx.config.max_shader_engines`, `max_sh_per_se` and
/// `max_cu_per_sh` hold in Linux (from the discovery GC table on GC 9.4.3,
/// from the VBIOS `gfx_info` on GC 9.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayLayout {
    pub shader_engines: u32,
    pub sh_per_se: u32,
    pub cu_per_sh: u32,
}

impl ArrayLayout {
    /// The arrays of one XCC.
    pub const fn arrays(&self) -> u32 {
        self.shader_engines * self.sh_per_se
    }
}

impl XccCount {
    pub const fn cus(&self) -> u32 {
        self.xccs * self.cus_per_xcc
    }
}

/// An MI300 XCC's arrays: the discovery GC table's split
/// ([`discovery::MI300_GC`]: 4 SEs × 1 SH × 10 CUs, model values).
pub const MI300_ARRAYS: ArrayLayout = ArrayLayout {
    shader_engines: discovery::MI300_GC.num_se,
    sh_per_se: discovery::MI300_GC.sh_per_se,
    cu_per_sh: discovery::MI300_GC.cu_per_sh,
};

/// MI210's: 8 SEs × 1 SH × 16 CUs, the split the VBIOS `gfx_info` that
/// `vfio-peer` serves Linux carries (**model values**; a test keeps the
/// two equal).
pub const MI210_ARRAYS: ArrayLayout = ArrayLayout {
    shader_engines: 8,
    sh_per_se: 1,
    cu_per_sh: 16,
};

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
        xgmi: None,
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
        xgmi: None,
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
            arrays: MI300_ARRAYS,
        }),
        xgmi: None,
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
            arrays: MI300_ARRAYS,
        }),
        ..mi300x()
    }
}

/// An MI210 (Aldebaran, GC 9.4.2, gfx90a): one XCC of 104 CUs and 64
/// GiB of HBM2e (AMD's MI210 specification), MP0/MP1 13.0.2, NBIO 7.4.4,
/// MMHUB 9.4.2 (driven as MMHUB 1.7), five SDMA 4.4.0, with the IP bases
/// of `aldebaran_ip_offset.h` ([`crate::discovery::ALDEBARAN_DIE`]). The
/// FB location the VBIOS leaves is a **model value** (the other parts').
/// [`crate::VirtualGpu::new`] builds it with the gfx9 block models.
pub fn mi210() -> Part {
    Part {
        name: "mi210",
        generation: Generation::Gfx90a,
        nbio: Some(NbioIp::Nbio7_4_4),
        fb_start: firmware::FB_START,
        fb_offset: 0,
        display: None,
        firmware: firmware::mi210(),
        mes_files: None,
        mec_file: "aldebaran_mec.bin",
        xcc: Some(XccCount {
            xccs: 1,
            cus_per_xcc: 104,
            arrays: MI210_ARRAYS,
        }),
        xgmi: None,
    }
}

/// The part named `name`.
impl Part {
    /// The PCI device id a driver's host shows for the part (model
    /// values: the RX 7900 XTX's 0x744C and the RX 9070 XT's 0x7550, as
    /// Linux's `amdgpu_drv.c` id table lists them; MI300X and MI308X,
    /// which amdgpu binds by class through IP discovery and Debian's
    /// `pci.ids` does not list, 0x74A1 and 0x74A2, unverified).
    pub fn pci_device_id(&self) -> u16 {
        match self.name {
            "navi48" => 0x7550,
            "mi300x" => 0x74A1,
            "mi308x" => 0x74A2,
            // The MI210's id, as `amdgpu_drv.c` and Debian's `pci.ids` list it.
            "mi210" => 0x740F,
            _ => 0x744C,
        }
    }
}

pub fn by_name(name: &str) -> Option<Part> {
    match name {
        "navi31" => Some(navi31()),
        "navi48" => Some(navi48()),
        "mi300x" => Some(mi300x()),
        "mi308x" => Some(mi308x()),
        "mi210" => Some(mi210()),
        _ => None,
    }
}
