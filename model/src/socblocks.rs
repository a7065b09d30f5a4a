//! Every SOC block model of one GPU ([`crate::smu`], [`crate::ih`],
//! [`crate::sdma`], [`crate::power`], [`crate::s2a`]) built from its
//! discovery table, with the refusal log they share ([`crate::soc`]), and
//! the routes the BAR5 register router sends their registers along.

use crate::SimClock;
use crate::soc::RefusalLog;
use alloc::collections::BTreeSet;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use core::sync::atomic::{AtomicBool, Ordering};

/// Every SOC block of one GPU, built from its discovery table, with the
/// refusal log they share.
#[derive(Debug)]
pub struct SocBlocks {
    pub smu: alloc::sync::Arc<crate::smu::SmuModel>,
    pub ih: alloc::sync::Arc<crate::ih::IhModel>,
    pub sdma: alloc::sync::Arc<crate::sdma::SdmaModel>,
    /// SDMA 1, on GC 11 (`sdma_v6_0`'s second instance; see
    /// [`crate::sdma::SdmaModel::new_instance1`]).
    pub sdma1: Option<alloc::sync::Arc<crate::sdma::SdmaModel>>,
    pub power: alloc::sync::Arc<crate::power::PowerModel>,
    pub s2a: alloc::sync::Arc<crate::s2a::S2aModel>,
    pub log: alloc::sync::Arc<RefusalLog>,
    /// `PCI_COMMAND` bus master as the host last set it (recorded, not
    /// yet enforced on DMA: the model's DMA users do not consult it; the
    /// SMU checks it when a mode-1 reset arrives).
    pub bus_master: alloc::sync::Arc<AtomicBool>,
    /// The function's PCI decode state (bus master is `bus_master`); a
    /// mode-1 reset clears it ([`crate::pci_config`]).
    pub pci: alloc::sync::Arc<crate::pci_config::PciConfig>,
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
        d: &crate::discovery::PartIps<'_>,
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
        // Each engine runs once the RLC autoload put SDMA code in place.
        let sdma_hooks = || crate::sdma::SdmaHooks {
            code_loaded: {
                let a = hooks.autoload_complete.clone();
                alloc::boxed::Box::new(move || a())
            },
        };
        let sdma = Arc::new(
            crate::sdma::SdmaModel::new(clock, generation, &gc.bases, sdma_hooks(), log.clone())
                .ok_or(un("SDMA", gc.version.triple()))?,
        );
        let sdma1 = crate::sdma::SdmaModel::new_instance1(
            clock,
            generation,
            &gc.bases,
            sdma_hooks(),
            log.clone(),
        )
        .map(Arc::new);
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
        let sdma1_2 = sdma1.clone();
        let psp_reset = hooks.psp_reset;
        let gpu_reset = hooks.gpu_reset;
        let bus_master = alloc::sync::Arc::new(AtomicBool::new(false));
        let bm = bus_master.clone();
        let pci =
            alloc::sync::Arc::new(crate::pci_config::PciConfig::new(bus_master.clone(), clock));
        let pci2 = pci.clone();
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
                        if let Some(s) = &sdma1_2 {
                            s.reset();
                        }
                        power2.reset();
                        s2a2.reset();
                        gpu_reset();
                        pci2.reset();
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
            sdma1,
            power,
            s2a,
            log,
            bus_master,
            pci,
        })
    }

    /// Each block's registers with the block, for the BAR5 router.
    pub fn routes(
        &self,
    ) -> Vec<(
        BTreeSet<usize>,
        alloc::sync::Arc<dyn RegisterBus + Send + Sync>,
    )> {
        let mut out: Vec<(
            BTreeSet<usize>,
            alloc::sync::Arc<dyn RegisterBus + Send + Sync>,
        )> = alloc::vec![
            (self.smu.offsets(), self.smu.clone() as _),
            (self.ih.offsets(), self.ih.clone() as _),
            (self.sdma.offsets(), self.sdma.clone() as _),
            (self.power.offsets(), self.power.clone() as _),
            (self.s2a.offsets(), self.s2a.clone() as _),
        ];
        if let Some(s) = &self.sdma1 {
            out.push((s.offsets(), s.clone() as _));
        }
        out
    }

    /// The SDMA engines, instance 0 first.
    pub fn sdma_engines(&self) -> Vec<alloc::sync::Arc<crate::sdma::SdmaModel>> {
        core::iter::once(self.sdma.clone())
            .chain(self.sdma1.clone())
            .collect()
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
