//! Starting MES once PSP has loaded its firmware, and reading its versions.
//!
//! Follows `mes_v11_0_enable(adev, true)` (v12's is the same sequence on
//! the same registers): put the pipes in reset, point each pipe's program
//! counter at its ucode start (`CP_MES_PRGRM_CNTR_START(_HI)` = start
//! address >> 2, selected per pipe with `GRBM_GFX_CNTL` ME 3), unhalt with
//! `MES_PIPE0_ACTIVE` (and `MES_PIPE1_ACTIVE` when MES also runs the KIQ),
//! and give it 500 µs. Then `mes_v11_0_get_fw_version()`: each pipe's
//! `CP_MES_GP3_LO`, which the firmware fills once running, holds
//! `feature << 24 | api << 12 | firmware` (`AMDGPU_MES_*_VERSION_MASK` in
//! `amdgpu_mes.h`; that header does not compile as user-space C, so those
//! masks are cited, not conformance facts).
//!
//! A zero version after the wait means the pipe did not start (wrong
//! start address, firmware not loaded); all-ones means the device is gone.
//!
//! Then the scheduler ring is mapped. v11 ([`map_scheduler_ring`]): KIQ
//! MAP_QUEUES of the MQD `mes_v11_0_mqd_init()` builds, ME 2 / engine 5,
//! as `mes_v11_0_kiq_enable_queue()` does. v12 uni-MES: MES pipe 1's own
//! ring is loaded by register programming ([`load_pipe_ring`],
//! `mes_v12_0_queue_init_register()`), and pipe 0's scheduler ring is
//! mapped by an ADD_QUEUE with `map_legacy_kq` sent on pipe 1
//! ([`map_legacy_scheduler_ring`], `mes_v12_0_map_legacy_queue()`).

use crate::bus::{ALL_ONES, Block, BlockError, RegisterBus};
use crate::gfx::grbm::GrbmSelect;
use crate::ip::Generation;
use crate::regs::{IpBases, Reg};
use crate::time::{Clock, Deadline};
use barebell_facts::Fact;
use bitfield_struct::bitfield;

/// `CP_MES_CNTL` (the fields `mes_v11_0_enable()` touches).
#[bitfield(u32)]
#[derive(PartialEq, Eq)]
pub struct MesCntl {
    #[bits(4)]
    __: u8,
    pub mes_invalidate_icache: bool,
    #[bits(11)]
    __: u16,
    pub mes_pipe0_reset: bool,
    pub mes_pipe1_reset: bool,
    #[bits(8)]
    __: u8,
    pub mes_pipe0_active: bool,
    pub mes_pipe1_active: bool,
    #[bits(2)]
    __: u8,
    pub mes_halt: bool,
    __: bool,
}

/// `GRBM_GFX_CNTL.MEID` of MES.
pub const MES_ME: u8 = 3;
/// `AMDGPU_MES_SCHED_PIPE` / `AMDGPU_MES_KIQ_PIPE`.
pub const SCHED_PIPE: u8 = 0;
pub const KIQ_PIPE: u8 = 1;
/// `mes_v11_0_enable()`'s `udelay(500)` after unhalting.
pub const START_DELAY_NS: u64 = 500_000;

/// What PSP's firmware load tells us: where each pipe's ucode starts
/// (`adev->mes.uc_start_addr[pipe]`, from the firmware header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MesStart {
    pub uc_start: [u64; 2],
    /// Also start pipe 1 as the KIQ (`adev->enable_mes_kiq`).
    pub kiq_pipe: bool,
}

/// The versions MES reports in `CP_MES_GP3_LO`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MesVersions {
    pub sched: u32,
    pub kiq: Option<u32>,
}

/// `AMDGPU_MES_VERSION_MASK`, `AMDGPU_MES_API_VERSION_MASK` and shift.
pub const VERSION_MASK: u32 = 0x0000_0FFF;
pub const API_VERSION_MASK: u32 = 0x00FF_F000;
pub const API_VERSION_SHIFT: u32 = 12;

impl MesVersions {
    /// Scheduler firmware revision (`sched_version & AMDGPU_MES_VERSION_MASK`).
    pub fn firmware(&self) -> u32 {
        self.sched & VERSION_MASK
    }

    /// MES API version.
    pub fn api(&self) -> u32 {
        (self.sched & API_VERSION_MASK) >> API_VERSION_SHIFT
    }

    /// v11 firmware 0x47+ maps legacy (kernel) queues itself
    /// (`enable_legacy_queue_map` in `mes_v11_0_kiq_hw_init()`).
    pub fn legacy_queue_map(&self) -> bool {
        self.firmware() >= 0x47
    }

    /// v12 SET_HW_RSRC's oversubscription timer: 0 before scheduler
    /// firmware 0x8b, 50 from it (`mes_v12_0_set_hw_resources()`).
    pub fn v12_oversubscription_timer(&self) -> u32 {
        if self.firmware() < 0x8b { 0 } else { 50 }
    }
}

/// Why MES did not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MesStartError {
    /// A register has no base in the discovery table.
    Register(BlockError),
    /// The start address does not fit `CP_MES_PRGRM_CNTR_START(_HI)`
    /// (address >> 2 must fit 64 bits: always; must be 4-aligned).
    Misaligned { pipe: u8, address: u64 },
    /// `CP_MES_GP3_LO` still reads 0 after the start delay.
    NotRunning { pipe: u8 },
    /// All-ones from `CP_MES_GP3_LO`: the device is gone.
    DeviceGone { pipe: u8 },
    /// The generation has no MES (GC 9.4.3 maps queues through the KIQ
    /// and the HWS on the MEC).
    Unsupported(crate::ip::Unsupported),
}

impl core::fmt::Display for MesStartError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MesStartError::Register(e) => write!(f, "{e}"),
            MesStartError::Misaligned { pipe, address } => write!(
                f,
                "MES pipe {pipe} ucode start {address:#x} is not 4-byte aligned"
            ),
            MesStartError::NotRunning { pipe } => write!(
                f,
                "MES pipe {pipe} reports no firmware version after unhalt: it did not start"
            ),
            MesStartError::DeviceGone { pipe } => {
                write!(f, "device gone while reading MES pipe {pipe}'s version")
            }
            MesStartError::Unsupported(e) => write!(f, "{e}"),
        }
    }
}

struct Regs {
    grbm: Reg,
    cntl: Reg,
    pc: Reg,
    pc_hi: Reg,
    gp3: Reg,
}

const fn regs(g: Generation) -> Result<Regs, crate::ip::Unsupported> {
    match g {
        Generation::Gfx90a | Generation::Gfx94 => {
            Err(crate::ip::Unsupported::new("MES (GC 9.4.3 has none)", g))
        }
        Generation::Gfx11 => {
            use crate::regs::gc_11_0_0 as r;
            Ok(Regs {
                grbm: r::GRBM_GFX_CNTL,
                cntl: r::CP_MES_CNTL,
                pc: r::CP_MES_PRGRM_CNTR_START,
                pc_hi: r::CP_MES_PRGRM_CNTR_START_HI,
                gp3: r::CP_MES_GP3_LO,
            })
        }
        Generation::Gfx12 => {
            use crate::regs::gc_12_0_0 as r;
            Ok(Regs {
                grbm: r::GRBM_GFX_CNTL,
                cntl: r::CP_MES_CNTL,
                pc: r::CP_MES_PRGRM_CNTR_START,
                pc_hi: r::CP_MES_PRGRM_CNTR_START_HI,
                gp3: r::CP_MES_GP3_LO,
            })
        }
    }
}

impl From<crate::ip::Unsupported> for MesStartError {
    fn from(e: crate::ip::Unsupported) -> Self {
        MesStartError::Unsupported(e)
    }
}

impl From<BlockError> for MesStartError {
    fn from(e: BlockError) -> Self {
        MesStartError::Register(e)
    }
}

/// Unhalts MES and reads its versions.
pub fn start<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    bases: &IpBases,
    generation: Generation,
    s: &MesStart,
) -> Result<MesVersions, MesStartError> {
    let r = regs(generation)?;
    let gc = Block::new(bus, *bases);
    // Every register resolves before the first access.
    for reg in [r.grbm, r.cntl, r.pc, r.pc_hi, r.gp3] {
        gc.offset(reg)?;
    }
    let pipes: &[u8] = if s.kiq_pipe {
        &[SCHED_PIPE, KIQ_PIPE]
    } else {
        &[SCHED_PIPE]
    };
    for &pipe in pipes {
        let address = s.uc_start.get(usize::from(pipe)).copied().unwrap_or(0);
        if !address.is_multiple_of(4) {
            return Err(MesStartError::Misaligned { pipe, address });
        }
    }
    let reset = MesCntl::from_bits(gc.read(r.cntl)?)
        .with_mes_pipe0_reset(true)
        .with_mes_pipe1_reset(s.kiq_pipe);
    gc.write(r.cntl, reset.into_bits())?;
    {
        // One selection for both program counters, as
        // `mes_v11_0_enable()` deselects once after its loop.
        let mut sel: Option<GrbmSelect<'_, B>> = None;
        for &pipe in pipes {
            match &sel {
                Some(g) => g.switch(MES_ME, pipe, 0)?,
                None => sel = Some(GrbmSelect::new(gc, r.grbm, MES_ME, pipe, 0)?),
            }
            let word = s.uc_start.get(usize::from(pipe)).copied().unwrap_or(0) >> 2;
            gc.write(r.pc, word as u32)?;
            gc.write(r.pc_hi, (word >> 32) as u32)?;
        }
    }
    let run = MesCntl::new()
        .with_mes_pipe0_active(true)
        .with_mes_pipe1_active(s.kiq_pipe);
    gc.write(r.cntl, run.into_bits())?;
    let mut delay = Deadline::after(clock, START_DELAY_NS);
    while !delay.expired(clock) {
        core::hint::spin_loop();
    }
    let mut versions = [0u32; 2];
    for &pipe in pipes {
        let v = {
            let _sel = GrbmSelect::new(gc, r.grbm, MES_ME, pipe, 0)?;
            gc.read(r.gp3)?
        };
        if v == ALL_ONES {
            return Err(MesStartError::DeviceGone { pipe });
        }
        if v == 0 {
            return Err(MesStartError::NotRunning { pipe });
        }
        if let Some(slot) = versions.get_mut(usize::from(pipe)) {
            *slot = v;
        }
    }
    Ok(MesVersions {
        sched: versions[0],
        kiq: s.kiq_pipe.then_some(versions[1]),
    })
}

/// Halts MES at teardown (follows `mes_v11_0_enable(adev, false)` /
/// `mes_v12_0_enable(adev, false)`, as `mes_v11_0_hw_fini()` reaches it
/// through `mes_v11_0_kiq_hw_fini()`): both pipes held in reset, the
/// instruction cache invalidated, MES halted. Returns the value written.
pub fn halt<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
) -> Result<u32, MesStartError> {
    let r = regs(generation)?;
    let gc = Block::new(bus, *bases);
    let v = MesCntl::from_bits(gc.read(r.cntl)?)
        .with_mes_invalidate_icache(true)
        .with_mes_pipe0_reset(true)
        .with_mes_pipe1_reset(true)
        .with_mes_pipe0_active(false)
        .with_mes_pipe1_active(false)
        .with_mes_halt(true)
        .into_bits();
    gc.write(r.cntl, v)?;
    Ok(v)
}

macro_rules! cntl_facts {
    ($h:literal) => {
        [
            Fact::constant(
                $h,
                "CP_MES_CNTL__MES_INVALIDATE_ICACHE_MASK",
                MesCntl::new().with_mes_invalidate_icache(true).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MES_CNTL__MES_PIPE0_RESET_MASK",
                MesCntl::new().with_mes_pipe0_reset(true).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MES_CNTL__MES_PIPE1_RESET_MASK",
                MesCntl::new().with_mes_pipe1_reset(true).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MES_CNTL__MES_PIPE0_ACTIVE_MASK",
                MesCntl::new().with_mes_pipe0_active(true).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MES_CNTL__MES_PIPE1_ACTIVE_MASK",
                MesCntl::new().with_mes_pipe1_active(true).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MES_CNTL__MES_HALT_MASK",
                MesCntl::new().with_mes_halt(true).into_bits() as u64,
            ),
        ]
    };
}

/// `CP_MES_CNTL` fields against both generations' `sh_mask` headers.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    cntl_facts!("gc_11_0_0_sh_mask.h"),
    cntl_facts!("gc_12_0_0_sh_mask.h"),
);
