//! What the SOC block models share: a register store with reset values
//! and names, and the refusal log the [`crate::VirtualGpu`] reports from.
//!
//! The blocks ([`crate::smu`], [`crate::ih`], [`crate::sdma`],
//! [`crate::power`], [`crate::s2a`]) are the parts of the GPU that
//! tinygrad's AM driver drives and barebell's bring-up does not
//! (`docs/am-boot.md` §2). Each answers only the registers of its own
//! table ([`crate::socregs`]); each register reads its reset value until
//! written: the `*_default.h` value where Linux 6.12 ships one (GC
//! 11.0.0), else a **model value** said at the register (Linux 6.12 has
//! no default header for GC 12, OSSSYS, HDP, MMHUB or NBIO).
//!
//! A refusal is an access the model will not take: a sequence the public
//! sources say the hardware does not accept, or a register no block
//! model knows. Refusals are logged with the register's name and the
//! reason; in strict mode ([`RefusalLog::set_strict`]) the bridge turns
//! the first one into an error the driver sees.

use crate::RegisterFile;
use crate::SimClock;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::regs::{IpBases, Reg};
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;

/// One refused access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The block that refused (`"SMU"`, `"IH"`, `"BAR5"`, ...).
    pub block: &'static str,
    /// What was refused and why, naming the register and the source.
    pub why: String,
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.block, self.why)
    }
}

/// The refusals of every SOC block and of the register router, in order,
/// shared by them.
#[derive(Debug, Default)]
pub struct RefusalLog {
    entries: Mutex<Vec<Refusal>>,
    strict: AtomicBool,
}

impl RefusalLog {
    pub fn new() -> Self {
        RefusalLog::default()
    }

    pub fn push(&self, block: &'static str, why: String) {
        self.entries.lock().push(Refusal { block, why });
    }

    /// Strict mode: refused accesses are not carried out (the bridge
    /// reports them to the driver as errors). Outside strict mode they
    /// are logged and carried out as plain storage.
    pub fn set_strict(&self, on: bool) {
        self.strict.store(on, Ordering::Relaxed);
    }

    pub fn strict(&self) -> bool {
        self.strict.load(Ordering::Relaxed)
    }

    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Refusals from the `from`-th on.
    pub fn since(&self, from: usize) -> Vec<Refusal> {
        self.entries
            .lock()
            .get(from..)
            .map(<[Refusal]>::to_vec)
            .unwrap_or_default()
    }

    pub fn all(&self) -> Vec<Refusal> {
        self.since(0)
    }
}

/// A register of a block: its name and reset value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub reg: Reg,
    pub reset: u32,
}

/// Registers by byte offset, each with its reset value, over a
/// [`RegisterFile`] (so accesses cost simulated time as everywhere else).
#[derive(Debug)]
pub struct RegStore {
    slots: BTreeMap<usize, Slot>,
    file: RegisterFile,
}

impl RegStore {
    /// The registers `regs` (with their reset values) placed on `bases`;
    /// a register whose segment has no base is left out and named in the
    /// returned list.
    pub fn new(
        clock: &SimClock,
        bases: &IpBases,
        regs: &[(Reg, u32)],
    ) -> (Self, Vec<&'static str>) {
        let file = RegisterFile::new(clock);
        let mut slots = BTreeMap::new();
        let mut missing = Vec::new();
        for (reg, reset) in regs {
            match reg.byte_offset(bases) {
                Some(o) => {
                    file.device_set(o, *reset);
                    slots.insert(
                        o,
                        Slot {
                            reg: *reg,
                            reset: *reset,
                        },
                    );
                }
                None => missing.push(reg.name),
            }
        }
        (RegStore { slots, file }, missing)
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        self.slots.keys().copied().collect()
    }

    pub fn slot(&self, byte_offset: usize) -> Option<Slot> {
        self.slots.get(&byte_offset).copied()
    }

    /// The byte offset of the register named `name`.
    pub fn at(&self, name: &str) -> Option<usize> {
        self.slots
            .iter()
            .find(|(_, s)| s.reg.name == name)
            .map(|(o, _)| *o)
    }

    pub fn name(&self, byte_offset: usize) -> &'static str {
        self.slot(byte_offset).map_or("?", |s| s.reg.name)
    }

    /// The value the device holds (no bus access).
    pub fn get(&self, byte_offset: usize) -> u32 {
        self.file.device_get(byte_offset)
    }

    /// The device changes a register (no bus access).
    pub fn set(&self, byte_offset: usize, value: u32) {
        self.file.device_set(byte_offset, value);
    }

    /// Every register back to its reset value.
    pub fn reset(&self) {
        for (o, s) in &self.slots {
            self.file.device_set(*o, s.reset);
        }
    }

    /// A host read (costs simulated time).
    pub fn host_read(&self, byte_offset: usize) -> u32 {
        self.file.read32(byte_offset)
    }

    /// A host write (costs simulated time).
    pub fn host_write(&self, byte_offset: usize, value: u32) {
        self.file.write32(byte_offset, value)
    }

    pub fn unplug(&self) {
        self.file.unplug();
    }
}

/// `value`'s field `mask`, shifted down.
pub fn field(value: u32, mask: u32) -> u32 {
    if mask == 0 {
        return 0;
    }
    (value & mask) >> mask.trailing_zeros()
}

/// Every SOC block of one GPU, built from its discovery table, with the
/// refusal log they share.
#[derive(Debug)]
pub struct SocBlocks {
    pub smu: alloc::sync::Arc<crate::smu::SmuModel>,
    pub ih: alloc::sync::Arc<crate::ih::IhModel>,
    pub sdma: alloc::sync::Arc<crate::sdma::SdmaModel>,
    pub power: alloc::sync::Arc<crate::power::PowerModel>,
    pub s2a: alloc::sync::Arc<crate::s2a::S2aModel>,
    pub log: alloc::sync::Arc<RefusalLog>,
    /// `PCI_COMMAND` bus master as the host last set it (recorded, not
    /// yet enforced on DMA: the model's DMA users do not consult it; the
    /// SMU checks it when a mode-1 reset arrives).
    pub bus_master: alloc::sync::Arc<AtomicBool>,
}

/// What the SOC blocks need from the PSP side of the GPU.
pub struct SocHooks {
    /// The PSP has loaded the SMU firmware.
    pub smu_loaded: alloc::boxed::Box<dyn Fn() -> bool + Send + Sync>,
    /// The RLC autoload has completed (RLC, CP and SDMA code in place).
    pub autoload_complete: alloc::sync::Arc<dyn Fn() -> bool + Send + Sync>,
    /// Return the PSP to its bootloader state (mode-1 reset).
    pub psp_reset: alloc::boxed::Box<dyn Fn() + Send + Sync>,
    /// The rest of the GPU a mode-1 reset returns to power-on (the
    /// engines and blocks outside the SOC blocks: MEC, hubs, NBIO).
    pub gpu_reset: alloc::boxed::Box<dyn Fn() + Send + Sync>,
}

impl core::fmt::Debug for SocHooks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SocHooks").finish_non_exhaustive()
    }
}

/// Why the SOC blocks could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocError {
    /// The discovery table lacks this IP.
    MissingIp(&'static str),
    /// A block has no table for this IP version, or a register of it has
    /// no base in the discovery table.
    Unplaceable {
        block: &'static str,
        version: (u8, u8, u8),
    },
}

impl core::fmt::Display for SocError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SocError::MissingIp(ip) => write!(f, "the discovery table has no {ip}"),
            SocError::Unplaceable { block, version } => write!(
                f,
                "the {block} model has no registers for {}.{}.{} on this table's bases",
                version.0, version.1, version.2
            ),
        }
    }
}

impl SocBlocks {
    /// The blocks of the GPU `d` describes. `smu_version` is what
    /// `GetSmuVersion` answers; `dpm` the PMFW's DPM tables.
    pub fn new(
        clock: &SimClock,
        d: &barebell::discovery::Discovery<'_>,
        generation: barebell::ip::Generation,
        smu_version: u32,
        dpm: crate::smu::DpmTables,
        hooks: SocHooks,
    ) -> Result<Self, SocError> {
        use alloc::sync::Arc;
        use barebell::ip::hw_id;
        let ip = |id: u16, name: &'static str| d.ip(id, 0).ok_or(SocError::MissingIp(name));
        let (mp1, gc, oss, hdp, mmhub, nbif) = (
            ip(hw_id::MP1, "MP1")?,
            ip(hw_id::GC, "GC")?,
            ip(hw_id::OSSSYS, "OSSSYS")?,
            ip(hw_id::HDP, "HDP")?,
            ip(hw_id::MMHUB, "MMHUB")?,
            ip(hw_id::NBIF, "NBIF")?,
        );
        let log = Arc::new(RefusalLog::new());
        let un = |block: &'static str, v: (u8, u8, u8)| SocError::Unplaceable { block, version: v };
        let power = Arc::new(
            crate::power::PowerModel::new(
                clock,
                crate::power::PowerPlacement {
                    generation,
                    gc: gc.bases,
                    hdp: (hdp.bases, hdp.version.triple()),
                    mmhub: (mmhub.bases, mmhub.version.triple()),
                },
                crate::power::PowerHooks {
                    rlc_running: {
                        let a = hooks.autoload_complete.clone();
                        alloc::boxed::Box::new(move || a())
                    },
                },
                log.clone(),
            )
            .ok_or(un("clock-gating/scratch", gc.version.triple()))?,
        );
        let sdma = Arc::new(
            crate::sdma::SdmaModel::new(
                clock,
                generation,
                &gc.bases,
                crate::sdma::SdmaHooks {
                    code_loaded: {
                        let a = hooks.autoload_complete.clone();
                        alloc::boxed::Box::new(move || a())
                    },
                },
                log.clone(),
            )
            .ok_or(un("SDMA", gc.version.triple()))?,
        );
        let ih = Arc::new(
            crate::ih::IhModel::new(clock, oss.version.triple(), &oss.bases, log.clone())
                .ok_or(un("IH", oss.version.triple()))?,
        );
        let s2a = Arc::new(
            crate::s2a::S2aModel::new(clock, nbif.version.triple(), &nbif.bases)
                .ok_or(un("S2A", nbif.version.triple()))?,
        );
        let mp1_v = mp1.version.triple();
        let kind = crate::smu::Mp1::from_version(mp1_v).ok_or(un("SMU", mp1_v))?;
        let (ih2, sdma2, power2, s2a2) = (ih.clone(), sdma.clone(), power.clone(), s2a.clone());
        let psp_reset = hooks.psp_reset;
        let gpu_reset = hooks.gpu_reset;
        let bus_master = alloc::sync::Arc::new(AtomicBool::new(false));
        let bm = bus_master.clone();
        let smu = Arc::new(
            crate::smu::SmuModel::new(
                clock,
                kind,
                &mp1.bases,
                smu_version,
                dpm,
                crate::smu::SmuHooks {
                    firmware_loaded: hooks.smu_loaded,
                    mode1_reset: alloc::boxed::Box::new(move || {
                        psp_reset();
                        ih2.reset();
                        sdma2.reset();
                        power2.reset();
                        s2a2.reset();
                        gpu_reset();
                    }),
                    bus_master: alloc::boxed::Box::new(move || bm.load(Ordering::Relaxed)),
                },
                log.clone(),
            )
            .ok_or(un("SMU", mp1_v))?,
        );
        Ok(SocBlocks {
            smu,
            ih,
            sdma,
            power,
            s2a,
            log,
            bus_master,
        })
    }

    /// Each block's registers with the block, for the BAR5 router.
    pub fn routes(
        &self,
    ) -> Vec<(
        BTreeSet<usize>,
        alloc::sync::Arc<dyn RegisterBus + Send + Sync>,
    )> {
        alloc::vec![
            (self.smu.offsets(), self.smu.clone() as _),
            (self.ih.offsets(), self.ih.clone() as _),
            (self.sdma.offsets(), self.sdma.clone() as _),
            (self.power.offsets(), self.power.clone() as _),
            (self.s2a.offsets(), self.s2a.clone() as _),
        ]
    }
}

/// The SOC blocks' conformance facts.
pub const FACTS: &[&[barebell_facts::Fact]] = &[
    crate::smu::FACTS,
    crate::ih::FACTS,
    crate::sdma::FACTS,
    crate::power::FACTS,
    crate::s2a::FACTS,
];
