//! NBIO/NBIF hardware init for the parts barebell drives: the HDP flush
//! remap and the doorbell apertures.
//!
//! One sequence serves both generations, run over a register table
//! ([`NbioRegs`]): NBIO 4.3.0 (Navi3x, `nbio_v4_3.c` called from
//! `soc21.c`) and NBIF 6.3.1 (Navi4x, `nbif_v6_3_1.c` called from
//! `soc24.c`). In Linux 6.12 the two IP files implement these steps the
//! same way, and `soc21_common_hw_init()` / `soc24_common_hw_init()` call
//! them in the same order: remap the HDP flush registers, then open the
//! doorbell aperture; the self-ring aperture comes later
//! (`soc2x_common_late_init()`) because resizing the doorbell BAR can
//! move it. What differs is only which header names the registers, so
//! each IP has its own table checked against its own header.
//!
//! Why the remap matters: the CPU writes page tables, rings and MQDs in
//! VRAM through the BAR, and those writes sit in HDP (the host data path
//! cache) until it is flushed. The flush register lives in the HDP block
//! at an address a process cannot map on its own page; NBIO can mirror it
//! at a fixed byte offset of the register BAR (the "MMIO register hole",
//! the last 4 KiB page below 512 KiB), so one store there flushes HDP.
//!
//! Left alone on both: the NBIO side of ASPM (`soc2x_program_aspm()`; the
//! endpoint's Link Control ASPM field is cleared through the platform's
//! config space instead, `Platform::disable_aspm`), the `EPF2_STRAP2`
//! soft-reset strap (`init_registers`, a segment-5 register), and NBIF
//! 6.3.1's `gc_doorbell_init` (S2A doorbell entries, called from
//! `gfx_v12_0_hw_init()`, not from the SoC init). None of them changes
//! what the model checks; whether hardware needs them for barebell's
//! path is unconfirmed.

use crate::bus::{Block, BlockError, RegisterBus};
use crate::regs::nbio_4_3_0::init::{DoorbellAperEn, RemapHdpFlushCntl, SelfringAperCntl};
use crate::regs::{IpBases, Reg, nbif_6_3_1, nbio_4_3_0, nbio_7_4, nbio_7_9_0};

/// Byte offset in the register BAR where Linux puts the remapped HDP
/// flush page on hosts with 4 KiB pages: `MMIO_REG_HOLE_OFFSET`, defined
/// as `0x80000 - PAGE_SIZE` in both `nbio_v4_3.c` and `nbif_v6_3_1.c`
/// (each IP file's `set_reg_remap`). It is a `#define` in a `.c` file, so
/// the conformance harness cannot compile a probe for it; a harness test
/// (`hole_offset_matches_the_linux_c_files`) reads the two files' text
/// instead. Unconfirmed on hardware.
pub const MMIO_REG_HOLE_OFFSET: u32 = 0x8_0000 - 4096;
/// NBIO 7.9's hole: `nbio_v7_9.c` defines `MMIO_REG_HOLE_OFFSET` as
/// `0x1A000` (its `nbio_v7_9_set_reg_remap()`, 4 KiB pages, no SR-IOV).
/// A `#define` in a `.c` file, read as text by the harness test
/// `nbio_v7_9_hole_is_the_linux_define`. Unconfirmed on hardware.
pub const MMIO_REG_HOLE_OFFSET_V7_9: u32 = 0x1_A000;
/// `KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL`: offset of the memory-flush
/// register inside the remapped page.
pub const REMAP_HDP_MEM_FLUSH: u32 = 0;
/// `KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL`.
pub const REMAP_HDP_REG_FLUSH: u32 = 4;

/// The registers the sequence touches, as one IP's header names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NbioRegs {
    /// The IP as discovery reports it, for messages.
    pub ip: &'static str,
    pub version: (u8, u8, u8),
    pub remap_hdp_mem_flush_cntl: Reg,
    pub remap_hdp_reg_flush_cntl: Reg,
    pub doorbell_aper_en: Reg,
    /// Read back after the flush store to post it (what
    /// `hdp_v6_0_flush_hdp()` / `hdp_v7_0_flush_hdp()` do through
    /// `get_memsize`).
    pub config_memsize: Reg,
    pub selfring_base_high: Reg,
    pub selfring_base_low: Reg,
    pub selfring_cntl: Reg,
    /// The index/data pair for registers beyond the BAR
    /// (`get_pcie_index_offset()` / `get_pcie_data_offset()`), used by
    /// [`crate::bus::indirect::IndirectBus`].
    pub rsmu_index: Reg,
    pub rsmu_data: Reg,
    /// The register lists to name accesses by, for tracing.
    pub symbols: &'static [&'static [Reg]],
    /// S2A doorbell entries 0 and 3, which route doorbells to the GC
    /// ([`gc_doorbell_init`]); `None` on NBIO 7.9, which has no
    /// `gc_doorbell_init` (doorbells outside the SDMA/IH/MM ranges go to
    /// the CP, `soc15_common_hw_init()`'s comment).
    pub s2a_entries: Option<[Reg; 2]>,
    /// S2A doorbell entry 2, which routes a doorbell range to SDMA
    /// ([`sdma_doorbell_range`]); `None` on NBIO 7.9, whose SDMA ranges
    /// are per AID and engine ([`sdma_doorbell_range_v7_9`]).
    pub s2a_sdma_entry: Option<Reg>,
    /// The byte offset of the register BAR Linux remaps the HDP flush
    /// page to (each IP file's `MMIO_REG_HOLE_OFFSET`).
    pub hole: u32,
    /// `get_pcie_index_hi_offset()`, where the IP has it (NBIO 7.9:
    /// `BIF_BX0_PCIE_INDEX2_HI`, for `amdgpu_device_indirect_rreg_ext()`).
    pub index_hi: Option<Reg>,
}

/// NBIO 4.3.0 (Navi31), from `nbio_4_3_0_offset.h`.
impl NbioRegs {
    /// `(RSMU_INDEX, RSMU_DATA)`: the index/data pair
    /// [`crate::bus::IndirectBus`] reaches registers past BAR5 through.
    pub const fn rsmu_pair(&self) -> (Reg, Reg) {
        (self.rsmu_index, self.rsmu_data)
    }
}

pub const NBIO_4_3_0: NbioRegs = NbioRegs {
    ip: "NBIO 4.3.0",
    version: (4, 3, 0),
    remap_hdp_mem_flush_cntl: nbio_4_3_0::init::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL,
    remap_hdp_reg_flush_cntl: nbio_4_3_0::init::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL,
    doorbell_aper_en: nbio_4_3_0::init::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN,
    config_memsize: nbio_4_3_0::RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE,
    selfring_base_high: nbio_4_3_0::init::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
    selfring_base_low: nbio_4_3_0::init::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW,
    selfring_cntl: nbio_4_3_0::init::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL,
    s2a_entries: Some([
        nbio_4_3_0::init::S2A_DOORBELL_ENTRY_0_CTRL,
        nbio_4_3_0::init::S2A_DOORBELL_ENTRY_3_CTRL,
    ]),
    s2a_sdma_entry: Some(nbio_4_3_0::init::S2A_DOORBELL_ENTRY_2_CTRL),
    hole: MMIO_REG_HOLE_OFFSET,
    index_hi: None,
    rsmu_index: nbio_4_3_0::BIF_BX_PF0_RSMU_INDEX,
    rsmu_data: nbio_4_3_0::BIF_BX_PF0_RSMU_DATA,
    symbols: &[nbio_4_3_0::init::ALL, nbio_4_3_0::ALL],
};

/// NBIF 6.3.1 (Navi48), from `nbif_6_3_1_offset.h`.
pub const NBIF_6_3_1: NbioRegs = NbioRegs {
    ip: "NBIF 6.3.1",
    version: (6, 3, 1),
    remap_hdp_mem_flush_cntl: nbif_6_3_1::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL,
    remap_hdp_reg_flush_cntl: nbif_6_3_1::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL,
    doorbell_aper_en: nbif_6_3_1::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN,
    config_memsize: nbif_6_3_1::RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE,
    selfring_base_high: nbif_6_3_1::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
    selfring_base_low: nbif_6_3_1::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW,
    selfring_cntl: nbif_6_3_1::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL,
    rsmu_index: nbif_6_3_1::BIF_BX_PF0_RSMU_INDEX,
    rsmu_data: nbif_6_3_1::BIF_BX_PF0_RSMU_DATA,
    s2a_entries: Some([
        nbif_6_3_1::GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL,
        nbif_6_3_1::GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL,
    ]),
    s2a_sdma_entry: Some(nbif_6_3_1::GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL),
    hole: MMIO_REG_HOLE_OFFSET,
    index_hi: None,
    symbols: &[nbif_6_3_1::ALL],
};

/// NBIO 7.9.0 (MI300, GC 9.4.3), from `nbio_7_9_0_offset.h`: the same
/// remap/aperture/self-ring registers as 4.3.0; registers past the BAR go
/// through `BIF_BX0_PCIE_INDEX2`/`_DATA2` (`nbio_v7_9_get_pcie_index_offset()`
/// / `_data_offset()`, installed as `pcie_rreg` by `soc15.c`); the hole is
/// at 0x1A000.
pub const NBIO_7_9_0: NbioRegs = NbioRegs {
    ip: "NBIO 7.9.0",
    version: (7, 9, 0),
    remap_hdp_mem_flush_cntl: nbio_7_9_0::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL,
    remap_hdp_reg_flush_cntl: nbio_7_9_0::BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL,
    doorbell_aper_en: nbio_7_9_0::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN,
    config_memsize: nbio_7_9_0::RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE,
    selfring_base_high: nbio_7_9_0::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
    selfring_base_low: nbio_7_9_0::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_BASE_LOW,
    selfring_cntl: nbio_7_9_0::BIF_BX_PF0_DOORBELL_SELFRING_GPA_APER_CNTL,
    rsmu_index: nbio_7_9_0::BIF_BX0_PCIE_INDEX2,
    rsmu_data: nbio_7_9_0::BIF_BX0_PCIE_DATA2,
    s2a_entries: None,
    s2a_sdma_entry: None,
    hole: MMIO_REG_HOLE_OFFSET_V7_9,
    index_hi: Some(nbio_7_9_0::BIF_BX0_PCIE_INDEX2_HI),
    symbols: &[nbio_7_9_0::ALL],
};

/// NBIO 7.4.4 (Aldebaran, GC 9.4.2), from `nbio_7_4_offset.h`: the
/// remap/aperture/self-ring registers at the same places; registers past
/// the BAR through `PCIE_INDEX2`/`PCIE_DATA2`; the hole at `0x80000 -
/// PAGE_SIZE` (`nbio_v7_4.c`'s `MMIO_REG_HOLE_OFFSET`); no S2A (doorbells
/// outside the SDMA/IH/MM ranges go to the CP, as on NBIO 7.9).
pub const NBIO_7_4_4: NbioRegs = NbioRegs {
    ip: "NBIO 7.4.4",
    version: (7, 4, 4),
    remap_hdp_mem_flush_cntl: nbio_7_4::REMAP_HDP_MEM_FLUSH_CNTL,
    remap_hdp_reg_flush_cntl: nbio_7_4::REMAP_HDP_REG_FLUSH_CNTL,
    doorbell_aper_en: nbio_7_4::RCC_DOORBELL_APER_EN,
    config_memsize: nbio_7_4::RCC_CONFIG_MEMSIZE,
    selfring_base_high: nbio_7_4::DOORBELL_SELFRING_GPA_APER_BASE_HIGH,
    selfring_base_low: nbio_7_4::DOORBELL_SELFRING_GPA_APER_BASE_LOW,
    selfring_cntl: nbio_7_4::DOORBELL_SELFRING_GPA_APER_CNTL,
    rsmu_index: nbio_7_4::PCIE_INDEX2,
    rsmu_data: nbio_7_4::PCIE_DATA2,
    s2a_entries: None,
    s2a_sdma_entry: None,
    hole: MMIO_REG_HOLE_OFFSET,
    index_hi: None,
    symbols: &[nbio_7_4::ALL],
};

/// Every table, for lookup by discovered version.
pub const TABLES: &[&NbioRegs] = &[&NBIO_4_3_0, &NBIF_6_3_1, &NBIO_7_9_0, &NBIO_7_4_4];

/// Why an NBIO step could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NbioError {
    /// Discovery reported an NBIO/NBIF version with no register table.
    UnsupportedVersion { version: (u8, u8, u8) },
    /// A register is not in the discovered NBIO bases.
    Register(BlockError),
    /// The remap offset does not fit the 17-bit dword address field.
    BadRemapOffset { offset: u32 },
    /// A register read as all-ones: the device is gone.
    DeviceGone { name: &'static str },
    /// The step does not exist on this NBIO (e.g. NBIO 7.9 has no
    /// `gc_doorbell_init`).
    NotOnThisNbio {
        what: &'static str,
        ip: &'static str,
    },
    /// An MI300 split into compute partitions (`PARTITION_MODE` other than
    /// SPX): barebell drives the whole device as one partition only.
    ComputePartition { mode: u32 },
}

/// The ASIC revision `adev->rev_id` on NBIO 7.9 (`soc15_get_rev_id()` →
/// `nbio_v7_9_get_rev_id()`): discovery's NBIO sub-revision when it is
/// not 0, otherwise `RCC_STRAP0_RCC_DEV0_EPF0_STRAP0.STRAP_ATI_REV_ID_DEV0_F0`
/// of NBIO instance 0 (`bases`).
pub fn rev_id_v7_9<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: IpBases,
    discovery_sub_revision: u8,
) -> Result<u32, NbioError> {
    use nbio_7_9_0 as r;
    if discovery_sub_revision != 0 {
        return Ok(u32::from(discovery_sub_revision));
    }
    let v = Block::new(bus, bases).read(r::RCC_STRAP0_RCC_DEV0_EPF0_STRAP0)?;
    if v == crate::bus::ALL_ONES {
        return Err(NbioError::DeviceGone {
            name: r::RCC_STRAP0_RCC_DEV0_EPF0_STRAP0.name,
        });
    }
    Ok((v & r::STRAP_ATI_REV_ID) >> r::STRAP_ATI_REV_ID_SHIFT)
}

/// The name Linux gives a compute partition mode (`enum
/// amdgpu_gfx_partition`, `amdgpu_gfx.h`), with what it means.
pub fn partition_name(mode: u32) -> &'static str {
    match mode {
        0 => "SPX (one partition over every XCC)",
        1 => "DPX (two partitions)",
        2 => "TPX (three partitions)",
        3 => "QPX (four partitions)",
        4 => "CPX (one partition per XCC)",
        _ => "an unknown mode",
    }
}

impl core::fmt::Display for NbioError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            NbioError::UnsupportedVersion { version: (a, b, c) } => {
                write!(f, "NBIO/NBIF {a}.{b}.{c} has no register table")
            }
            NbioError::Register(e) => write!(f, "{e}"),
            NbioError::BadRemapOffset { offset } => {
                write!(
                    f,
                    "HDP remap offset {offset:#x} does not fit the ADDRESS field"
                )
            }
            NbioError::DeviceGone { name } => write!(f, "{name} read as all-ones"),
            NbioError::NotOnThisNbio { what, ip } => {
                write!(f, "{ip} has no {what} (Linux's IP file does not do it)")
            }
            NbioError::ComputePartition { mode } => write!(
                f,
                "the GPU is in compute partition mode {mode}, {}; barebell drives SPX only (one partition over every XCC): switch the GPU to SPX (amdgpu's current_compute_partition, or amd-smi) and run again",
                partition_name(mode)
            ),
        }
    }
}

impl From<BlockError> for NbioError {
    fn from(e: BlockError) -> Self {
        NbioError::Register(e)
    }
}

/// One NBIO/NBIF instance: its register table at its discovered bases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nbio {
    pub regs: &'static NbioRegs,
    pub bases: IpBases,
}

impl Nbio {
    /// The table for a discovered NBIO/NBIF `version`.
    pub fn for_version(version: (u8, u8, u8), bases: IpBases) -> Result<Self, NbioError> {
        TABLES
            .iter()
            .find(|t| t.version == version)
            .map(|regs| Nbio { regs, bases })
            .ok_or(NbioError::UnsupportedVersion { version })
    }

    /// This instance's registers on `bus`.
    pub fn block<'b, B: RegisterBus + ?Sized>(&self, bus: &'b B) -> Block<'b, B> {
        Block::new(bus, self.bases)
    }

    /// The byte offset of the remapped HDP flush page ([`NbioRegs::hole`]).
    pub fn hole(&self) -> u32 {
        self.regs.hole
    }
}

fn remap_value(offset: u32) -> Result<u32, NbioError> {
    let dword = offset >> 2;
    let max = RemapHdpFlushCntl::from_bits(u32::MAX).address();
    if !offset.is_multiple_of(4) || dword > max {
        return Err(NbioError::BadRemapOffset { offset });
    }
    Ok(RemapHdpFlushCntl::new().with_address(dword).into_bits())
}

/// Mirrors the HDP flush registers at `reg_offset` (normally
/// [`MMIO_REG_HOLE_OFFSET`]) of the register BAR (follows
/// `nbio_v4_3_remap_hdp_registers()` / `nbif_v6_3_1_remap_hdp_registers()`).
pub fn remap_hdp<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &Nbio,
    reg_offset: u32,
) -> Result<(), NbioError> {
    let mem = reg_offset
        .checked_add(REMAP_HDP_MEM_FLUSH)
        .ok_or(NbioError::BadRemapOffset { offset: reg_offset })?;
    let reg = reg_offset
        .checked_add(REMAP_HDP_REG_FLUSH)
        .ok_or(NbioError::BadRemapOffset { offset: reg_offset })?;
    let (mem_v, reg_v) = (remap_value(mem)?, remap_value(reg)?);
    let b = nbio.block(bus);
    let (mem_at, reg_at) = (
        b.offset(nbio.regs.remap_hdp_mem_flush_cntl)?,
        b.offset(nbio.regs.remap_hdp_reg_flush_cntl)?,
    );
    bus.write32(mem_at, mem_v);
    bus.write32(reg_at, reg_v);
    Ok(())
}

/// Flushes HDP through the remapped register: one store of 0, then a read
/// of `RCC_CONFIG_MEMSIZE` so the posted write has reached the device
/// before the caller tells the GPU to look at what it wrote (follows
/// `hdp_v6_0_flush_hdp()` / `hdp_v7_0_flush_hdp()` without a ring, which
/// read that register rather than the remapped one because reading the
/// remapped one "causes problems on some platforms").
pub fn flush_hdp<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &Nbio,
    reg_offset: u32,
) -> Result<(), NbioError> {
    let memsize = nbio.block(bus).offset(nbio.regs.config_memsize)?;
    let at = reg_offset as usize + REMAP_HDP_MEM_FLUSH as usize;
    bus.write32(at, 0);
    if bus.read32(memsize) == crate::bus::ALL_ONES {
        return Err(NbioError::DeviceGone {
            name: nbio.regs.config_memsize.name,
        });
    }
    Ok(())
}

/// Opens (or closes) the doorbell BAR: until this bit is set, stores to
/// BAR2 ring nothing (follows `nbio_v4_3_enable_doorbell_aperture()` /
/// `nbif_v6_3_1_enable_doorbell_aperture()`, a read-modify-write of one
/// field).
pub fn enable_doorbell_aperture<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &Nbio,
    enable: bool,
) -> Result<(), NbioError> {
    let reg = nbio.regs.doorbell_aper_en;
    let b = nbio.block(bus);
    let cur = b.read(reg)?;
    if cur == crate::bus::ALL_ONES {
        return Err(NbioError::DeviceGone { name: reg.name });
    }
    let v = DoorbellAperEn::from_bits(cur).with_bif_doorbell_aper_en(enable);
    b.write(reg, v.into_bits())?;
    Ok(())
}

/// Lets the GPU ring its own doorbells by writing to the doorbell BAR's
/// bus address `doorbell_bus` (MES and the CP do this), or turns that off
/// with `None` (follows `nbio_v4_3_enable_doorbell_selfring_aperture()` /
/// `nbif_v6_3_1_enable_doorbell_selfring_aperture()`: base first, control
/// last).
pub fn enable_doorbell_selfring<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &Nbio,
    doorbell_bus: Option<u64>,
) -> Result<(), NbioError> {
    let b = nbio.block(bus);
    let cntl_at = b.offset(nbio.regs.selfring_cntl)?;
    let mut cntl = SelfringAperCntl::new();
    if let Some(base) = doorbell_bus {
        let lo = b.offset(nbio.regs.selfring_base_low)?;
        let hi = b.offset(nbio.regs.selfring_base_high)?;
        cntl = cntl
            .with_doorbell_selfring_gpa_aper_en(true)
            .with_doorbell_selfring_gpa_aper_mode(true)
            .with_doorbell_selfring_gpa_aper_size(0);
        bus.write32(lo, base as u32);
        bus.write32(hi, (base >> 32) as u32);
    }
    bus.write32(cntl_at, cntl.into_bits());
    Ok(())
}

/// The `nbio` bring-up step: what `soc21_common_hw_init()` /
/// `soc24_common_hw_init()` and the matching `late_init` do to NBIO, in
/// their order, with the remap at the table's hole
/// ([`MMIO_REG_HOLE_OFFSET`] on both); NBIO 7.9 has its own sequence
/// ([`init_v7_9`]).
pub fn init<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &Nbio,
    doorbell_bus: u64,
) -> Result<(), NbioError> {
    if nbio.regs.version == (7, 9, 0) {
        return Err(NbioError::NotOnThisNbio {
            what: "the soc21/soc24 NBIO init (use init_v7_9)",
            ip: nbio.regs.ip,
        });
    }
    remap_hdp(bus, nbio, nbio.regs.hole)?;
    enable_doorbell_aperture(bus, nbio, true)?;
    enable_doorbell_selfring(bus, nbio, Some(doorbell_bus))
}

/// `S2A_DOORBELL_ENTRY_n_CTRL` (NBIO 4.3.0; NBIF 6.3.1's
/// `GDC_S2A0_S2A_DOORBELL_ENTRY_n_CTRL` adds `DROP_EN`, which barebell
/// leaves clear).
#[bitfield_struct::bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct S2aDoorbellEntryCtrl {
    pub enable: bool,
    #[bits(5)]
    pub awid: u8,
    pub fence_enable: bool,
    #[bits(10)]
    pub range_offset: u16,
    #[bits(8)]
    pub range_size: u8,
    pub bit64_support_dis: bool,
    pub need_deduct_range_offset: bool,
    pub drop_en: bool,
    #[bits(4)]
    pub awaddr_31_28_value: u8,
}

/// Entries 0 and 3 as `nbio_v4_3_gc_doorbell_init()` /
/// `nbif_v6_3_1_gc_doorbell_init()` write them (0x30000007, 0x3000000d):
/// enabled, AWID 3 and 6, `AWADDR_31_28_VALUE` 3, no range.
pub const GC_S2A_ENTRIES: [S2aDoorbellEntryCtrl; 2] = [
    S2aDoorbellEntryCtrl::new()
        .with_enable(true)
        .with_awid(3)
        .with_awaddr_31_28_value(3),
    S2aDoorbellEntryCtrl::new()
        .with_enable(true)
        .with_awid(6)
        .with_awaddr_31_28_value(3),
];

/// Routes doorbells to the GC through the S2A entries, as
/// `gfx_v11_0_hw_init()` does after the RLC autoload
/// (`adev->nbio.funcs->gc_doorbell_init`). Until then a queue's doorbell
/// reaches no queue.
pub fn gc_doorbell_init<B: RegisterBus + ?Sized>(bus: &B, nbio: &Nbio) -> Result<(), NbioError> {
    let b = nbio.block(bus);
    let entries = nbio.regs.s2a_entries.ok_or(NbioError::NotOnThisNbio {
        what: "gc_doorbell_init (S2A entries 0 and 3)",
        ip: nbio.regs.ip,
    })?;
    for reg in entries {
        b.offset(reg)?;
    }
    for (reg, v) in entries.into_iter().zip(GC_S2A_ENTRIES) {
        b.write(reg, v.into_bits())?;
    }
    Ok(())
}

macro_rules! s2a_facts {
    ($h:literal, $reg:literal, $p:literal) => {
        [
            barebell_facts::Fact::constant(
                $h,
                concat!($reg, "__S2A_DOORBELL_PORT", $p, "_ENABLE_MASK"),
                S2aDoorbellEntryCtrl::new().with_enable(true).into_bits() as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!($reg, "__S2A_DOORBELL_PORT", $p, "_AWID_MASK"),
                S2aDoorbellEntryCtrl::new().with_awid(0x1F).into_bits() as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!($reg, "__S2A_DOORBELL_PORT", $p, "_RANGE_OFFSET_MASK"),
                S2aDoorbellEntryCtrl::new()
                    .with_range_offset(0x3FF)
                    .into_bits() as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!($reg, "__S2A_DOORBELL_PORT", $p, "_RANGE_SIZE_MASK"),
                S2aDoorbellEntryCtrl::new()
                    .with_range_size(0xFF)
                    .into_bits() as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!($reg, "__S2A_DOORBELL_PORT", $p, "_AWADDR_31_28_VALUE_MASK"),
                S2aDoorbellEntryCtrl::new()
                    .with_awaddr_31_28_value(0xF)
                    .into_bits() as u64,
            ),
        ]
    };
}

/// The S2A entry fields against both IPs' `sh_mask` headers.
pub const S2A_FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    s2a_facts!("nbio_4_3_0_sh_mask.h", "S2A_DOORBELL_ENTRY_0_CTRL", "0"),
    s2a_facts!("nbio_4_3_0_sh_mask.h", "S2A_DOORBELL_ENTRY_3_CTRL", "3"),
    s2a_facts!(
        "nbif_6_3_1_sh_mask.h",
        "GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL",
        "0"
    ),
    s2a_facts!(
        "nbif_6_3_1_sh_mask.h",
        "GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL",
        "3"
    ),
    s2a_facts!("nbio_7_9_0_sh_mask.h", "S2A_DOORBELL_ENTRY_1_CTRL", "1"),
    [barebell_facts::Fact::constant(
        "nbif_6_3_1_sh_mask.h",
        "GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL__S2A_DOORBELL_PORT0_DROP_EN_MASK",
        S2aDoorbellEntryCtrl::new().with_drop_en(true).into_bits() as u64
    )],
);

/// The remap page's layout, against the uapi header that names it.
pub const FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        "linux/kfd_ioctl.h",
        "KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL",
        REMAP_HDP_MEM_FLUSH as u64,
    ),
    barebell_facts::Fact::constant(
        "linux/kfd_ioctl.h",
        "KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL",
        REMAP_HDP_REG_FLUSH as u64,
    ),
];

/// AWID of the SDMA doorbell port (entry 2), as
/// `nbio_v4_3_sdma_doorbell_range()` / `nbif_v6_3_1_sdma_doorbell_range()`
/// and tinygrad's `AM_SDMA.init_hw` program it.
pub const SDMA_S2A_AWID: u8 = 0xe;

/// Entry 2 as `nbio_v4_3_sdma_doorbell_range()` writes it for SDMA
/// instance 0: enabled, AWID 0xe, `AWADDR_31_28_VALUE` 3, the range
/// starting at doorbell dword `dword` and `size` dwords long.
pub fn sdma_s2a_entry(dword: u32, size: u8) -> S2aDoorbellEntryCtrl {
    S2aDoorbellEntryCtrl::new()
        .with_enable(true)
        .with_awid(SDMA_S2A_AWID)
        .with_range_offset((dword & 0x3ff) as u16)
        .with_range_size(size)
        .with_awaddr_31_28_value(3)
}

/// Routes doorbells `dword..dword + size` to SDMA engine 0 through S2A
/// entry 2 (`sdma_v6_0_gfx_resume()` calls `sdma_doorbell_range` for
/// instance 0 after loading the queue's doorbell; tinygrad's
/// `AM_SDMA.init_hw` programs the same entry with size 4).
pub fn sdma_doorbell_range<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &Nbio,
    dword: u32,
    size: u8,
) -> Result<(), NbioError> {
    let b = nbio.block(bus);
    let entry = nbio.regs.s2a_sdma_entry.ok_or(NbioError::NotOnThisNbio {
        what: "S2A doorbell entry 2 (use sdma_doorbell_range_v7_9)",
        ip: nbio.regs.ip,
    })?;
    b.write(entry, sdma_s2a_entry(dword, size).into_bits())?;
    Ok(())
}

/// What [`init_v7_9`] wrote, for the step's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InitV7_9 {
    /// AIDs whose NBIO had `XCC_DOORBELL_FENCE` written.
    pub fences: u32,
    /// AIDs whose `BIF_BX0_BACO_CNTL` had BACO (dummy) mode set and
    /// cleared.
    pub baco_cleared: u32,
    /// Whether the segment-8 registers (`BIFC_DOORBELL_ACCESS_EN_PF`,
    /// `BIFC_GFX_INT_MONITOR_MASK`) were reachable and written: they are
    /// whenever the discovery table lists NBIO's segment 8.
    pub segment8_written: bool,
}

/// `XCC_DOORBELL_FENCE` of AID 0 as `nbio_v7_9_init_registers()` writes
/// it: `0xff & ~xcc_mask` (a fence bit for every XCC that is not there).
pub const fn xcc_doorbell_fence(xcc_mask: u32) -> u32 {
    0xff & !xcc_mask
}

/// `nbio_v7_9_init_registers()`, then what `soc15_common_hw_init()` and
/// `soc15_common_late_init()` do to NBIO 7.9, in their order: HDP remap to
/// [`MMIO_REG_HOLE_OFFSET_V7_9`], doorbell aperture
/// (`nbio_v7_9_enable_doorbell_aperture()`), self-ring aperture.
///
/// `aid_nbio`: the NBIO instance bases of every live AID, AID 0 first
/// (`adev->aid_mask`; NBIO is addressed per AID, `RREG32_SOC15(NBIO, i,
/// ...)`); `xcc_mask` is `adev->gfx.xcc_mask`. Linux writes the other
/// AIDs' fence with `WREG32_SOC15_EXT(NBIO, i, ..., i, ...)`, whose
/// extended SMN address the discovered per-AID bases already carry on
/// barebell's model (a model convention: the model's AIDs are spaced in
/// the 32-bit register space, see `model/src/discovery.rs`).
///
/// Not done, as barebell's other NBIO paths: ASPM (`soc15_program_aspm()`),
/// `ih_control` (host interrupt setup; barebell polls), and
/// `soc15_sdma_doorbell_range_init()` (left to the SDMA step:
/// [`sdma_doorbell_range_v7_9`]). Segment-8 registers are written only
/// where `nbio.bases` reaches them ([`InitV7_9::segment8_written`]).
pub fn init_v7_9<B: RegisterBus + ?Sized>(
    bus: &B,
    nbio: &Nbio,
    aid_nbio: &[IpBases],
    xcc_mask: u32,
    doorbell_bus: u64,
) -> Result<InitV7_9, NbioError> {
    use nbio_7_9_0 as r;
    if nbio.regs.version != (7, 9, 0) {
        return Err(NbioError::NotOnThisNbio {
            what: "nbio_v7_9_init_registers",
            ip: nbio.regs.ip,
        });
    }
    let mut out = InitV7_9::default();
    let b = nbio.block(bus);
    // `aqua_vanjaram_query_partition_mode()` →
    // `nbio_v7_9_get_compute_partition_mode()`, before anything is
    // written: a partitioned device is refused untouched.
    let status = b.read(r::BIF_BX_PF0_PARTITION_COMPUTE_STATUS)?;
    if status == crate::bus::ALL_ONES {
        return Err(NbioError::DeviceGone {
            name: r::BIF_BX_PF0_PARTITION_COMPUTE_STATUS.name,
        });
    }
    let mode = (status & r::PARTITION_MODE) >> r::PARTITION_MODE_SHIFT;
    if mode != 0 {
        return Err(NbioError::ComputePartition { mode });
    }
    // nbio_v7_9_init_registers()
    b.write(r::XCC_DOORBELL_FENCE, xcc_doorbell_fence(xcc_mask))?;
    out.fences |= 1;
    // Both registers are segment 8 (`BASE_IDX` 8 in nbio_7_9_0_offset.h),
    // and the mask has the higher offset: where it is reachable, so is the
    // enable.
    const _: () = assert!(
        r::BIFC_GFX_INT_MONITOR_MASK.base_idx == r::BIFC_DOORBELL_ACCESS_EN_PF.base_idx
            && r::BIFC_GFX_INT_MONITOR_MASK.offset > r::BIFC_DOORBELL_ACCESS_EN_PF.offset
    );
    let seg8 = b.offset(r::BIFC_GFX_INT_MONITOR_MASK).is_ok();
    if seg8 {
        b.write(r::BIFC_GFX_INT_MONITOR_MASK, 0x7ff)?;
    }
    for (aid, bases) in aid_nbio.iter().enumerate().skip(1) {
        Block::new(bus, *bases)
            .write(r::XCC_DOORBELL_FENCE, r::XCC_DOORBELL_FENCE_SHUB_SLV_MODE)?;
        out.fences |= 1 << aid;
    }
    for (aid, bases) in aid_nbio.iter().enumerate() {
        let ab = Block::new(bus, *bases);
        let v = ab.read(r::BIF_BX0_BACO_CNTL)?;
        if v == crate::bus::ALL_ONES {
            return Err(NbioError::DeviceGone {
                name: r::BIF_BX0_BACO_CNTL.name,
            });
        }
        let both = r::BACO_EN | r::BACO_DUMMY_EN;
        if v & both != 0 {
            ab.write(r::BIF_BX0_BACO_CNTL, v & !both)?;
            out.baco_cleared |= 1 << aid;
        }
    }
    // soc15_common_hw_init(): remap, then the doorbell aperture.
    remap_hdp(bus, nbio, nbio.regs.hole)?;
    // nbio_v7_9_enable_doorbell_aperture(): the pre-silicon pass-through
    // first, then the field.
    if seg8 {
        b.write(r::BIFC_DOORBELL_ACCESS_EN_PF, 0xfffff)?;
    }
    out.segment8_written = seg8;
    enable_doorbell_aperture(bus, nbio, true)?;
    // soc15_common_late_init()
    enable_doorbell_selfring(bus, nbio, Some(doorbell_bus))?;
    Ok(out)
}

/// What `nbio_v7_9_sdma_doorbell_range()` writes for SDMA engine
/// `engine` (its index inside its AID, `dev_inst % num_inst_per_aid`) of
/// AID `aid`: `(DOORBELL0_CTRL_ENTRY register, its dword offset added
/// (4 * aid), range value, S2A entry register, S2A value)`. The S2A entry
/// per engine and its AWID / `RANGE_OFFSET` / `AWADDR_31_28_VALUE`
/// (0xe/0xe/1, 8/8/2, 9/9/8, 0xa/0xa/9) are the function's switch.
/// `None` for an engine past 3.
pub fn sdma_doorbell_range_v7_9(
    aid: u32,
    engine: u32,
    doorbell_index: u32,
    size: u32,
) -> Option<(Reg, u32, u32, Reg, u32)> {
    use nbio_7_9_0 as r;
    let (entry, s2a, awid, addr) = match engine {
        0 => (
            r::DOORBELL0_CTRL_ENTRY_1,
            r::S2A_DOORBELL_ENTRY_1_CTRL,
            0xe,
            0x1,
        ),
        1 => (
            r::DOORBELL0_CTRL_ENTRY_2,
            r::S2A_DOORBELL_ENTRY_2_CTRL,
            0x8,
            0x2,
        ),
        2 => (
            r::DOORBELL0_CTRL_ENTRY_3,
            r::S2A_DOORBELL_ENTRY_5_CTRL,
            0x9,
            0x8,
        ),
        3 => (
            r::DOORBELL0_CTRL_ENTRY_4,
            r::S2A_DOORBELL_ENTRY_6_CTRL,
            0xa,
            0x9,
        ),
        _ => return None,
    };
    let range = (doorbell_index & r::RANGE_OFFSET_ENTRY)
        | ((size << r::RANGE_SIZE_ENTRY.trailing_zeros()) & r::RANGE_SIZE_ENTRY);
    let ctrl = S2aDoorbellEntryCtrl::new()
        .with_enable(true)
        .with_awid(awid)
        .with_range_offset(u16::from(awid))
        .with_range_size((size & 0xff) as u8)
        .with_awaddr_31_28_value(addr);
    Some((entry, 4 * aid, range, s2a, ctrl.into_bits()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdma_s2a_entry_as_linux_writes_it() {
        // ENABLE (bit 0), AWID 0xe (bits 5:1), RANGE_OFFSET 0x200 (16:7),
        // RANGE_SIZE 20 (24:17), AWADDR_31_28_VALUE 3 (31:28), by hand.
        let want = 1 | 0xe << 1 | 0x200 << 7 | 20 << 17 | 3 << 28;
        assert_eq!(sdma_s2a_entry(0x200, 20).into_bits(), want);
        assert_eq!(want, 0x3029_001D);
    }

    #[test]
    fn remap_offsets_outside_the_field_are_refused() {
        assert_eq!(
            remap_value(0x8_0000),
            Err(NbioError::BadRemapOffset { offset: 0x8_0000 })
        );
        assert_eq!(remap_value(2), Err(NbioError::BadRemapOffset { offset: 2 }));
        // The header's mask 0x7FFFC covers the largest value.
        assert_eq!(remap_value(0x7_FFFC), Ok(0x7_FFFC));
    }

    #[test]
    fn versions_pick_their_own_table() {
        let b = IpBases::default();
        assert_eq!(
            Nbio::for_version((6, 3, 1), b).map(|n| n.regs.ip),
            Ok("NBIF 6.3.1")
        );
        assert_eq!(
            Nbio::for_version((4, 3, 0), b).map(|n| n.regs.ip),
            Ok("NBIO 4.3.0")
        );
        assert_eq!(
            Nbio::for_version((7, 9, 0), b).map(|n| n.regs.ip),
            Ok("NBIO 7.9.0")
        );
        assert_eq!(
            Nbio::for_version((7, 7, 0), b),
            Err(NbioError::UnsupportedVersion { version: (7, 7, 0) })
        );
    }
}
