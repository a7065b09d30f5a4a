//! NBIO 4.3.0 (Navi31) and NBIF 6.3.1 (Navi48) as the runtime's `nbio`
//! step sees them: the HDP flush remap, the doorbell aperture and the
//! self-ring aperture.
//!
//! The two IPs are one model over a per-IP register layout ([`NbioIp`]):
//! Linux 6.12 drives both the same way (`nbio_v4_3.c` / `soc21.c` and
//! `nbif_v6_3_1.c` / `soc24.c`), and each layout names its registers from
//! its own header module. What the model enforces, for either:
//! - a store to the register-BAR hole flushes HDP only once
//!   `BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL` points there; before that the
//!   store lands on nothing and is counted as stray;
//! - a store to `BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL`, the flush
//!   register itself, always flushes; the remap register's reset value
//!   points at it (a **model value** after NBIO 2.3's public default:
//!   `nbio_2_3_default.h` `mmREMAP_HDP_MEM_FLUSH_CNTL_DEFAULT` 0x385c is
//!   the byte offset of NBIO 2.3's `BIF_BX_PF_HDP_MEM_COHERENCY_FLUSH_CNTL`;
//!   NBIO 4.3.0 and NBIF 6.3.1 have no default header). A driver that
//!   never remaps (tinygrad's AM: `AM_GMC.flush_hdp()` writes wherever the
//!   remap register points) then flushes through the register itself;
//! - a doorbell store through BAR2 rings only while
//!   `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN.BIF_DOORBELL_APER_EN` is set;
//!   otherwise it is dropped and a read of the slot returns all-ones
//!   (a closed BAR window answering like an unclaimed PCIe read is the
//!   model's choice, unconfirmed on hardware);
//! - a GPU-side store to the doorbell BAR's bus address (MES, CP) rings
//!   only inside an enabled self-ring aperture;
//! - a doorbell store reaches the GC (the MEC's queues) only through the
//!   S2A routing `nbio_v4_3_gc_doorbell_init()` /
//!   `nbif_v6_3_1_gc_doorbell_init()` program after the RLC autoload:
//!   entry 0 enabled with AWID 3 and entry 3 enabled with AWID 6, both
//!   with `AWADDR_31_28_VALUE` 3, and (NBIF 6.3.1) `DROP_EN` clear. The
//!   S2A fields' meaning is not documented beyond their names; the model
//!   does not know which of the two ports carries the compute queues'
//!   doorbells, so it requires both entries as Linux writes them (a model
//!   convention), and drops the store otherwise
//!   ([`NbioModel::route_gc_doorbell`]).
//!
//! Field masks below are written by hand from `nbio_4_3_0_sh_mask.h` and
//! `nbif_6_3_1_sh_mask.h` (which agree on them), not taken from the
//! runtime's bitfield structs, so a wrong struct shows up here as a
//! refusal.

use crate::RegisterFile;
use crate::log::Keep;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::regs::{IpBases, Reg, nbif_6_3_1, nbio_4_3_0};
use spin::Mutex;

/// Which NBIO/NBIF the model is, by the register names it answers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NbioIp {
    /// NBIO 4.3.0 (`nbio_4_3_0_offset.h`), Navi31.
    Nbio4_3_0,
    /// NBIF 6.3.1 (`nbif_6_3_1_offset.h`), Navi48.
    Nbif6_3_1,
    /// NBIO 7.9.0 (`nbio_7_9_0_offset.h`), MI300 (GC 9.4.3): the same
    /// remap/aperture/self-ring behaviour from the model's own table
    /// ([`crate::socregs::nbio_7_9_0`]), the HDP hole at 0x1A000
    /// (`nbio_v7_9.c`'s `MMIO_REG_HOLE_OFFSET`), registers past BAR5
    /// through `BIF_BX0_PCIE_INDEX2`/`_DATA2`, no S2A GC routing (NBIO 7.9
    /// has no `gc_doorbell_init`: doorbells outside the SDMA/IH/MM ranges go
    /// to the CP, `soc15_common_hw_init()`), and the XCC doorbell fence
    /// `nbio_v7_9_init_registers()` writes.
    Nbio7_9_0,
    /// NBIO 7.4.4 (`nbio_7_4_offset.h`, Aldebaran: `nbio_v7_4.c`): the
    /// same behaviour from the model's own table
    /// ([`crate::socregs::nbio_7_4`]), the hole at `0x80000 - 4096`
    /// (`nbio_v7_4.c`'s `MMIO_REG_HOLE_OFFSET`), registers past BAR5
    /// through `PCIE_INDEX2`/`_DATA2`, no S2A routing and no segment-8
    /// doorbell gate.
    Nbio7_4_4,
}

impl NbioIp {
    /// The model for a version as discovery reports it.
    pub fn from_version(v: (u8, u8, u8)) -> Option<Self> {
        match v {
            (4, 3, 0) => Some(NbioIp::Nbio4_3_0),
            (6, 3, 1) => Some(NbioIp::Nbif6_3_1),
            (7, 9, 0) => Some(NbioIp::Nbio7_9_0),
            (7, 4, 4) => Some(NbioIp::Nbio7_4_4),
            _ => None,
        }
    }

    /// The register-BAR byte offset Linux remaps HDP to for this IP
    /// (`MMIO_REG_HOLE_OFFSET` of each IP file: `0x80000 - PAGE_SIZE` in
    /// `nbio_v4_3.c` and `nbif_v6_3_1.c`, `0x1A000` in `nbio_v7_9.c`; 4 KiB
    /// pages), written here by hand for the model.
    pub fn hole(self) -> usize {
        match self {
            NbioIp::Nbio4_3_0 | NbioIp::Nbif6_3_1 | NbioIp::Nbio7_4_4 => 0x8_0000 - 4096,
            NbioIp::Nbio7_9_0 => 0x1_A000,
        }
    }

    fn layout(self) -> Layout {
        match self {
            NbioIp::Nbio4_3_0 => {
                use nbio_4_3_0::init as r;
                Layout {
                    remap_mem: r::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL,
                    remap_reg: r::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL,
                    aper_en: r::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN,
                    selfring_cntl: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL,
                    selfring_lo: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW,
                    selfring_hi: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
                }
            }
            NbioIp::Nbif6_3_1 => {
                use nbif_6_3_1 as r;
                Layout {
                    remap_mem: r::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL,
                    remap_reg: r::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL,
                    aper_en: r::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN,
                    selfring_cntl: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL,
                    selfring_lo: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW,
                    selfring_hi: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
                }
            }
            NbioIp::Nbio7_4_4 => {
                use crate::socregs::nbio_7_4 as r;
                Layout {
                    remap_mem: r::REMAP_HDP_MEM_FLUSH_CNTL,
                    remap_reg: r::REMAP_HDP_REG_FLUSH_CNTL,
                    aper_en: r::RCC_DOORBELL_APER_EN,
                    selfring_cntl: r::DOORBELL_SELFRING_GPA_APER_CNTL,
                    selfring_lo: r::DOORBELL_SELFRING_GPA_APER_BASE_LOW,
                    selfring_hi: r::DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
                }
            }
            NbioIp::Nbio7_9_0 => {
                use crate::socregs::nbio_7_9_0 as r;
                Layout {
                    remap_mem: r::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL,
                    remap_reg: r::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL,
                    aper_en: r::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN,
                    selfring_cntl: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL,
                    selfring_lo: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW,
                    selfring_hi: r::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
                }
            }
        }
    }

    /// The registers of the model's table for the IP that a device routes
    /// to the NBIO model (NBIO 7.9 and 7.4.4; the 4.3.0/6.3.1 parts route
    /// theirs through their own soc blocks).
    pub fn registers(self) -> &'static [Reg] {
        match self {
            NbioIp::Nbio7_9_0 => crate::socregs::nbio_7_9_0::ALL,
            NbioIp::Nbio7_4_4 => crate::socregs::nbio_7_4::ALL,
            NbioIp::Nbio4_3_0 => crate::socregs::nbio_4_3_0::ALL,
            NbioIp::Nbif6_3_1 => crate::socregs::nbif_6_3_1::ALL,
        }
    }

    /// The index/data pair the IP answers registers past BAR5 through,
    /// from the model's own tables: `BIF_BX_PF0_RSMU_INDEX`/`_DATA`
    /// (segment 1, dwords 0 and 1, on 4.3.0 and 6.3.1) or
    /// `BIF_BX0_PCIE_INDEX2`/`_DATA2` (7.9.0; `nbio_v7_9_get_pcie_index_offset()`).
    pub fn index_pair(self) -> (Reg, Reg) {
        match self {
            NbioIp::Nbio4_3_0 | NbioIp::Nbif6_3_1 => (
                Reg {
                    name: "BIF_BX_PF0_RSMU_INDEX",
                    offset: 0,
                    base_idx: 1,
                },
                Reg {
                    name: "BIF_BX_PF0_RSMU_DATA",
                    offset: 1,
                    base_idx: 1,
                },
            ),
            NbioIp::Nbio7_9_0 => (
                crate::socregs::nbio_7_9_0::BIF_BX0_PCIE_INDEX2,
                crate::socregs::nbio_7_9_0::BIF_BX0_PCIE_DATA2,
            ),
            NbioIp::Nbio7_4_4 => (
                crate::socregs::nbio_7_4::PCIE_INDEX2,
                crate::socregs::nbio_7_4::PCIE_DATA2,
            ),
        }
    }
}

/// The registers the model watches, from the IP's header module.
#[derive(Debug, Clone, Copy)]
struct Layout {
    remap_mem: Reg,
    remap_reg: Reg,
    aper_en: Reg,
    selfring_cntl: Reg,
    selfring_lo: Reg,
    selfring_hi: Reg,
}

/// `S2A_DOORBELL_ENTRY_n_CTRL` fields (`nbio_4_3_0_sh_mask.h`,
/// `nbif_6_3_1_sh_mask.h`; `DROP_EN` only in the latter), by hand.
pub mod s2a {
    pub const ENABLE_MASK: u32 = 0x0000_0001;
    pub const AWID_MASK: u32 = 0x0000_003E;
    pub const AWID_SHIFT: u32 = 1;
    pub const DROP_EN_MASK: u32 = 0x0800_0000;
    pub const AWADDR_31_28_MASK: u32 = 0xF000_0000;
    pub const AWADDR_31_28_SHIFT: u32 = 28;
    /// `(AWID, AWADDR_31_28_VALUE)` of entries 0 and 3 as
    /// `nbio_v4_3_gc_doorbell_init()` programs them (0x30000007,
    /// 0x3000000d).
    pub const GC_PORTS: [(u32, u32); 2] = [(3, 3), (6, 3)];

    /// Whether `v` is an enabled, non-dropping entry with `port`.
    pub fn routes(v: u32, port: (u32, u32)) -> bool {
        v & ENABLE_MASK != 0
            && v & DROP_EN_MASK == 0
            && (v & AWID_MASK) >> AWID_SHIFT == port.0
            && (v & AWADDR_31_28_MASK) >> AWADDR_31_28_SHIFT == port.1
    }

    /// Whether entries 0 and 3 (`entries`, as the device holds them)
    /// send doorbells to the GC (see the `nbio` module documentation).
    pub fn routes_gc(entries: [u32; 2]) -> bool {
        entries
            .iter()
            .zip(GC_PORTS)
            .all(|(v, port)| routes(*v, port))
    }
}

/// `BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL__ADDRESS_MASK`.
const REMAP_ADDRESS_MASK: u32 = 0x0007_FFFC;
/// `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN__BIF_DOORBELL_APER_EN_MASK`.
const APER_EN_MASK: u32 = 0x1;
/// `BIFC_DOORBELL_ACCESS_EN_PF__BIFC_DOORBELL_ACCESS_EN_PF_MASK`
/// (`nbio_7_9_0_sh_mask.h`).
const BIFC_DOORBELL_ACCESS_EN_PF_MASK: u32 = 0x000F_FFFF;
/// `..._SELFRING_GPA_APER_CNTL__DOORBELL_SELFRING_GPA_APER_EN_MASK` and
/// `..._MODE_MASK`.
const SELFRING_EN_MASK: u32 = 0x1;
const SELFRING_MODE_MASK: u32 = 0x2;

/// The field masks above, against the headers they were written from.
pub const FACTS: &[barebell_facts::Fact] = {
    use barebell_facts::Fact;
    const M43: &str = "nbio_4_3_0_sh_mask.h";
    const M79: &str = "nbio_7_9_0_sh_mask.h";
    &[
        Fact::constant(
            M43,
            "BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL__ADDRESS_MASK",
            REMAP_ADDRESS_MASK as u64,
        ),
        Fact::constant(
            M43,
            "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN__BIF_DOORBELL_APER_EN_MASK",
            APER_EN_MASK as u64,
        ),
        Fact::constant(
            M43,
            "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL__DOORBELL_SELFRING_GPA_APER_EN_MASK",
            SELFRING_EN_MASK as u64,
        ),
        Fact::constant(
            M43,
            "BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL__DOORBELL_SELFRING_GPA_APER_MODE_MASK",
            SELFRING_MODE_MASK as u64,
        ),
        Fact::constant(
            M79,
            "BIFC_DOORBELL_ACCESS_EN_PF__BIFC_DOORBELL_ACCESS_EN_PF_MASK",
            BIFC_DOORBELL_ACCESS_EN_PF_MASK as u64,
        ),
    ]
};

/// What happened to one doorbell store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoorbellOutcome {
    Rang,
    /// The aperture was closed; the store went nowhere.
    Dropped,
}

#[derive(Debug, Default)]
struct State {
    hdp_flushes: u64,
    stray_hole_writes: u64,
    hole_reads: u64,
    doorbells: BTreeMap<u32, u64>,
    dropped: Vec<(u32, u64)>,
    /// NBIO 7.9's compute partition mode ([`NbioModel::set_compute_partition`]).
    partition: u32,
}

/// The NBIO block over a register file, at the discovered NBIO bases.
#[derive(Debug)]
pub struct NbioModel {
    regs: RegisterFile,
    ip: NbioIp,
    layout: Layout,
    bases: IpBases,
    /// Byte offset of the MMIO hole the model treats as the HDP flush
    /// page once remapped.
    hole: usize,
    /// Byte offset of `BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL`.
    direct_flush: Option<usize>,
    /// Byte offset of `BIF_BX0_BIF_DOORBELL_INT_CNTL` (NBIO 4.3.0, NBIF
    /// 6.3.1).
    doorbell_int_cntl: Option<usize>,
    state: Mutex<State>,
}

impl NbioModel {
    /// The register-BAR byte offset of the HDP flush hole this model
    /// answers at.
    pub fn hole(&self) -> usize {
        self.hole
    }

    /// `hole`: the register-BAR byte offset Linux remaps HDP to
    /// (`MMIO_REG_HOLE_OFFSET`).
    pub fn new(clock: &crate::SimClock, ip: NbioIp, bases: IpBases, hole: usize) -> Self {
        let regs = RegisterFile::new(clock);
        let layout = ip.layout();
        let direct_flush = match ip {
            NbioIp::Nbio4_3_0 => {
                crate::socregs::nbio_4_3_0::BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL
            }
            NbioIp::Nbif6_3_1 => {
                crate::socregs::nbif_6_3_1::BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL
            }
            NbioIp::Nbio7_9_0 => {
                crate::socregs::nbio_7_9_0::BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL
            }
            NbioIp::Nbio7_4_4 => crate::socregs::nbio_7_4::HDP_MEM_COHERENCY_FLUSH_CNTL,
        }
        .byte_offset(&bases);
        // Read by AM's IH handler for its RAS status bits
        // (`AM_IH.interrupt_handler`: RAS_ATHUB_ERR_EVENT and
        // RAS_CNTLR interrupt status), written by `nbio_v4_3.c`; stored,
        // reset value 0 (`nbio_2_3_default.h`
        // `mmBIF_DOORBELL_INT_CNTL_DEFAULT`, the NBIO 4.3 header has no
        // defaults file): no RAS error is ever raised by the model.
        let doorbell_int_cntl = match ip {
            NbioIp::Nbio4_3_0 => {
                crate::socregs::nbio_4_3_0::BIF_BX0_BIF_DOORBELL_INT_CNTL.byte_offset(&bases)
            }
            NbioIp::Nbif6_3_1 => {
                crate::socregs::nbif_6_3_1::BIF_BX0_BIF_DOORBELL_INT_CNTL.byte_offset(&bases)
            }
            NbioIp::Nbio7_9_0 | NbioIp::Nbio7_4_4 => None,
        };
        if let (Some(d), Some(r)) = (direct_flush, layout.remap_mem.byte_offset(&bases)) {
            regs.device_set(r, d as u32 & REMAP_ADDRESS_MASK);
        }
        NbioModel {
            regs,
            ip,
            layout,
            bases,
            hole,
            direct_flush,
            doorbell_int_cntl,
            state: Mutex::new(State::default()),
        }
    }

    /// A mode-1 reset: the NBIO's registers back to their power-on
    /// values, so the doorbell and self-ring apertures are closed
    /// (`soc21_common_hw_init()` opens them again on the next init) and
    /// the HDP remap reads its power-on value again; doorbell values
    /// the aperture took are forgotten. The counters are kept.
    pub fn reset(&self) {
        self.regs.clear();
        if let (Some(d), Some(r)) = (
            self.direct_flush,
            self.layout.remap_mem.byte_offset(&self.bases),
        ) {
            self.regs.device_set(r, d as u32 & REMAP_ADDRESS_MASK);
        }
        self.state.lock().doorbells.clear();
        self.apply_partition();
    }

    pub fn ip(&self) -> NbioIp {
        self.ip
    }

    /// The byte offsets of this NBIO's index/data pair at its bases
    /// ([`NbioIp::index_pair`]): what the device's BAR5 window
    /// ([`crate::bar::BarWindow`]) answers registers past the BAR through.
    pub fn index_pair(&self) -> Option<(usize, usize)> {
        let (i, d) = self.ip.index_pair();
        Some((i.byte_offset(&self.bases)?, d.byte_offset(&self.bases)?))
    }

    /// NBIO 7.9's `XCC_DOORBELL_FENCE` as last written on this instance
    /// (`nbio_v7_9_init_registers()`: `0xff & ~xcc_mask` on AID 0,
    /// `SHUB_SLV_MODE` on the others); `None` on the other IPs. Reset
    /// value 0, a *model value*.
    pub fn xcc_doorbell_fence(&self) -> Option<u32> {
        (self.ip == NbioIp::Nbio7_9_0)
            .then(|| self.reg(crate::socregs::nbio_7_9_0::XCC_DOORBELL_FENCE))
    }

    /// Sets NBIO 7.9's `BIF_BX0_BACO_CNTL` as firmware might leave it (a
    /// test hook: whether any board leaves BACO on is not public).
    pub fn set_baco_cntl(&self, v: u32) {
        if let Some(o) = crate::socregs::nbio_7_9_0::BIF_BX0_BACO_CNTL.byte_offset(&self.bases)
            && self.ip == NbioIp::Nbio7_9_0
        {
            self.regs.device_set(o, v);
        }
    }

    /// Puts NBIO 7.9 in compute partition `mode` (`enum
    /// amdgpu_gfx_partition`: SPX 0 .. CPX 4), which
    /// `BIF_BX_PF0_PARTITION_COMPUTE_STATUS.PARTITION_MODE` (bits 7:4)
    /// reports. A test hook: the mode is set through the PSP/SMU on a
    /// card, which the model does not do; it survives a mode-1 reset, as
    /// the partition survives a driver reload. Power-on SPX (*model
    /// value*).
    pub fn set_compute_partition(&self, mode: u32) {
        self.state.lock().partition = mode & 0xf;
        self.apply_partition();
    }

    fn apply_partition(&self) {
        if let Some(o) =
            crate::socregs::nbio_7_9_0::BIF_BX_PF0_PARTITION_COMPUTE_STATUS.byte_offset(&self.bases)
            && self.ip == NbioIp::Nbio7_9_0
        {
            let mode = self.state.lock().partition;
            self.regs.device_set(o, mode << 4);
        }
    }

    /// NBIO 7.9's `BIF_BX0_BACO_CNTL`.
    pub fn baco_cntl(&self) -> Option<u32> {
        (self.ip == NbioIp::Nbio7_9_0)
            .then(|| self.reg(crate::socregs::nbio_7_9_0::BIF_BX0_BACO_CNTL))
    }

    fn reg(&self, reg: Reg) -> u32 {
        reg.byte_offset(&self.bases)
            .map_or(0, |o| self.regs.device_get(o))
    }

    /// Byte offset the MEM flush register is currently remapped to.
    pub fn remapped_mem_flush(&self) -> Option<usize> {
        let v = self.reg(self.layout.remap_mem) & REMAP_ADDRESS_MASK;
        (v != 0 && Some(v as usize) != self.direct_flush).then_some(v as usize)
    }

    /// Byte offset of `BIF_BX_PF0_HDP_MEM_COHERENCY_FLUSH_CNTL` (routed to
    /// this model besides the runtime's NBIO registers).
    pub fn direct_flush(&self) -> Option<usize> {
        self.direct_flush
    }

    /// Byte offset of `BIF_BX0_BIF_DOORBELL_INT_CNTL`, where the model
    /// knows it (NBIO 4.3.0, NBIF 6.3.1).
    pub fn doorbell_int_cntl(&self) -> Option<usize> {
        self.doorbell_int_cntl
    }

    pub fn remapped_reg_flush(&self) -> Option<usize> {
        let v = self.reg(self.layout.remap_reg) & REMAP_ADDRESS_MASK;
        (v != 0).then_some(v as usize)
    }

    pub fn doorbell_aperture_open(&self) -> bool {
        self.reg(self.layout.aper_en) & APER_EN_MASK != 0 && self.doorbell_access_enabled()
    }

    /// NBIO 7.9's `BIFC_DOORBELL_ACCESS_EN_PF` (segment 8): doorbells pass
    /// only while its field (bits 19:0, `nbio_7_9_0_sh_mask.h`) is not 0.
    /// `nbio_v7_9_enable_doorbell_aperture()` writes 0xfffff "to allow
    /// doorbell pass thru on pre-silicon bare-metal", and tinygrad's AM
    /// writes it too. Which bit gates which client is not public, so the
    /// model takes any set bit as open and a power-on value of 0 as closed
    /// (the pre-silicon behaviour the comment names): a *model convention*.
    /// Always true on the other IPs, which have no such register.
    pub fn doorbell_access_enabled(&self) -> bool {
        self.ip != NbioIp::Nbio7_9_0
            || self.reg(crate::socregs::nbio_7_9_0::BIFC_DOORBELL_ACCESS_EN_PF)
                & BIFC_DOORBELL_ACCESS_EN_PF_MASK
                != 0
    }

    /// The self-ring aperture's base, if enabled in the mode Linux uses.
    pub fn selfring_base(&self) -> Option<u64> {
        let c = self.reg(self.layout.selfring_cntl);
        if c & SELFRING_EN_MASK == 0 || c & SELFRING_MODE_MASK == 0 {
            return None;
        }
        let lo = u64::from(self.reg(self.layout.selfring_lo));
        let hi = u64::from(self.reg(self.layout.selfring_hi));
        Some(hi << 32 | lo)
    }

    pub fn hdp_flushes(&self) -> u64 {
        self.state.lock().hdp_flushes
    }

    /// Stores to the hole before (or without) the remap.
    pub fn stray_hole_writes(&self) -> u64 {
        self.state.lock().stray_hole_writes
    }

    /// CPU reads of the hole page. Linux posts the flush by reading
    /// `RCC_CONFIG_MEMSIZE` instead, because reading the remapped register
    /// "causes problems on some platforms" (`hdp_v6_0_flush_hdp()`,
    /// `hdp_v7_0_flush_hdp()`); the model answers such reads from its
    /// register file but counts them so a test can require none.
    pub fn hole_reads(&self) -> u64 {
        self.state.lock().hole_reads
    }

    /// A CPU store to doorbell `index` through BAR2.
    pub fn doorbell_write(&self, index: u32, value: u64) -> DoorbellOutcome {
        let mut s = self.state.lock();
        if self.doorbell_aperture_open() {
            s.doorbells.insert(index, value);
            DoorbellOutcome::Rang
        } else {
            s.dropped.keep((index, value));
            DoorbellOutcome::Dropped
        }
    }

    /// A doorbell store through BAR2 on its way to the GC's queues:
    /// dropped (and recorded) unless the aperture is open and the S2A
    /// entries 0 and 3 (`s2a`, held by the [`crate::s2a`] model) route it.
    pub fn route_gc_doorbell(&self, dword: u32, value: u64, s2a: [u32; 2]) -> DoorbellOutcome {
        if self.doorbell_aperture_open() && s2a::routes_gc(s2a) {
            DoorbellOutcome::Rang
        } else {
            self.state.lock().dropped.keep((dword / 2, value));
            DoorbellOutcome::Dropped
        }
    }

    /// A CPU read of doorbell `index` through BAR2.
    pub fn doorbell_read(&self, index: u32) -> u64 {
        if !self.doorbell_aperture_open() {
            return u64::MAX;
        }
        self.state
            .lock()
            .doorbells
            .get(&index)
            .copied()
            .unwrap_or(0)
    }

    /// A GPU-side store to bus address `addr` (the doorbell BAR as the
    /// GPU's own agents address it).
    pub fn gpu_doorbell_write(&self, addr: u64, value: u64) -> DoorbellOutcome {
        // APER_SIZE 0 is what Linux writes; the model takes it as the
        // BAR's doorbell page range it tests with (64 KiB of slots).
        let Some(base) = self.selfring_base() else {
            self.state.lock().dropped.keep((u32::MAX, value));
            return DoorbellOutcome::Dropped;
        };
        let Some(off) = addr
            .checked_sub(base)
            .filter(|o| *o < 1 << 16 && o % 8 == 0)
        else {
            self.state.lock().dropped.keep((u32::MAX, value));
            return DoorbellOutcome::Dropped;
        };
        self.state.lock().doorbells.insert((off / 8) as u32, value);
        DoorbellOutcome::Rang
    }

    /// Stores the model dropped: `(index, value)`, index `u32::MAX` for a
    /// GPU-side store outside the self-ring aperture.
    pub fn dropped(&self) -> Vec<(u32, u64)> {
        self.state.lock().dropped.clone()
    }

    /// Removes the device from the bus.
    pub fn unplug(&self) {
        self.regs.unplug();
    }
}

impl RegisterBus for NbioModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        if byte_offset >= self.hole && byte_offset < self.hole + 4096 {
            self.state.lock().hole_reads += 1;
        }
        self.regs.read32(byte_offset)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        if Some(byte_offset) == self.direct_flush {
            self.state.lock().hdp_flushes += 1;
        }
        let in_hole = byte_offset >= self.hole && byte_offset < self.hole + 4096;
        if in_hole {
            let mut s = self.state.lock();
            if self.remapped_mem_flush() == Some(byte_offset) {
                s.hdp_flushes += 1;
            } else if self.remapped_reg_flush() != Some(byte_offset) {
                s.stray_hole_writes += 1;
            }
        }
        self.regs.write32(byte_offset, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_aperture_drops_and_reads_all_ones() {
        let c = crate::SimClock::new();
        for ip in [NbioIp::Nbio4_3_0, NbioIp::Nbif6_3_1] {
            let m = NbioModel::new(
                &c,
                ip,
                IpBases::new(&[0, 0x14, 0xD20, 0, 0, 0, 0, 0]),
                0x7F000,
            );
            assert_eq!(m.doorbell_write(3, 9), DoorbellOutcome::Dropped);
            assert_eq!(m.doorbell_read(3), u64::MAX);
            // BIF_DOORBELL_APER_EN at (0xD20 + 0xC0) * 4, written by hand
            // (0xC0 in both nbio_4_3_0_offset.h and nbif_6_3_1_offset.h).
            m.write32(0x3780, 1);
            assert_eq!(m.doorbell_write(3, 9), DoorbellOutcome::Rang);
            assert_eq!(m.doorbell_read(3), 9);
            assert_eq!(m.dropped(), alloc::vec![(3, 9)]);
        }
    }

    #[test]
    fn gc_doorbells_need_both_s2a_entries_as_linux_writes_them() {
        let c = crate::SimClock::new();
        // The values `nbio_v4_3_gc_doorbell_init()` writes, by hand.
        let linux = [0x3000_0007, 0x3000_000d];
        for ip in [NbioIp::Nbio4_3_0, NbioIp::Nbif6_3_1] {
            let m = NbioModel::new(
                &c,
                ip,
                IpBases::new(&[0, 0x14, 0xD20, 0, 0, 0, 0, 0]),
                0x7F000,
            );
            m.write32(0x3780, 1);
            assert_eq!(m.route_gc_doorbell(26, 1, [0, 0]), DoorbellOutcome::Dropped);
            let only0 = [linux[0], 0];
            assert_eq!(m.route_gc_doorbell(26, 2, only0), DoorbellOutcome::Dropped);
            assert_eq!(m.route_gc_doorbell(26, 3, linux), DoorbellOutcome::Rang);
            // A wrong AWID routes nowhere, nor does DROP_EN (bit 27).
            let awid5 = [0x3000_0005, linux[1]];
            assert_eq!(m.route_gc_doorbell(26, 4, awid5), DoorbellOutcome::Dropped);
            let drop = [linux[0] | 1 << 27, linux[1]];
            assert_eq!(m.route_gc_doorbell(26, 6, drop), DoorbellOutcome::Dropped);
            // The aperture closed stops it too.
            m.write32(0x3780, 0);
            assert_eq!(m.route_gc_doorbell(26, 5, linux), DoorbellOutcome::Dropped);
            assert_eq!(
                m.dropped(),
                alloc::vec![(13, 1), (13, 2), (13, 4), (13, 6), (13, 5)]
            );
        }
    }
}
