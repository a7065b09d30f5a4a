//! Step 2, nbio: the NBIO (NBIF on gfx12) as `soc21_common_hw_init()` /
//! `soc24_common_hw_init()` program it: the HDP flush remapped into the
//! register BAR (`nbio_v4_3_remap_hdp_registers()`), the doorbell
//! aperture and the self-ring aperture at BAR2's bus address
//! (`nbio_v4_3_enable_doorbell_aperture()`,
//! `nbio_v4_3_enable_doorbell_selfring_aperture()`), one HDP flush
//! through the remapped page; then every register past BAR5 goes through
//! the RSMU index/data pair, as `amdgpu_device_rreg()` sends them to
//! `pcie_rreg` (`amdgpu_device_indirect_rreg()`).
//!
//! NBIO 7.9 (GC 9.4.3) follows `soc15_common_hw_init()` /
//! `soc15_common_late_init()` instead ([`barebell::nbio::init_v7_9`]):
//! `nbio_v7_9_init_registers()` over every live AID's NBIO, the remap at
//! 7.9's own hole (0x1A000), the apertures; past BAR5 through
//! `BIF_BX0_PCIE_INDEX2`/`_DATA2`.

use crate::Gpu;
use crate::bus::Bus;
use crate::error::{BringupError, ResultAt};
use crate::sink::{Sink, Step};
use alloc::vec::Vec;
use barebell::bus::IndirectBus;
use barebell::ip::hw_id;
use barebell::nbio::{Nbio, NbioError};
use barebell::regs::{IpBases, Reg};

/// The IP name a trace prints for a discovery `hw_id`.
pub fn ip_name(id: u16) -> &'static str {
    match id {
        hw_id::GC => "GC",
        hw_id::MP0 => "MP0",
        hw_id::MP1 => "MP1",
        hw_id::MMHUB => "MMHUB",
        hw_id::NBIF => "NBIO",
        hw_id::OSSSYS => "OSSSYS",
        hw_id::HDP => "HDP",
        hw_id::SDMA0 => "SDMA0",
        hw_id::ATHUB => "ATHUB",
        hw_id::UMC => "UMC",
        // `SMUIO_HWID`, `THM_HWID`, `UVD_HWID` (= `VCN_HWID`), `DF_HWID`
        // (`soc15_hw_ip.h`).
        4 => "SMUIO",
        3 => "THM",
        12 => "VCN",
        46 => "DF",
        _ => "IP",
    }
}

/// The names a trace gives registers: every discovered IP instance's
/// register tables at its bases (`barebell::regs::registers_for`), then
/// the boot registers. The same table names barebell's own accesses and,
/// in `barebell trace name`, a reference trace recorded elsewhere (the
/// Linux peer's), so the two align register by register.
pub fn register_symbols(
    ips: &crate::discovery::Ips,
) -> Vec<(&'static str, &'static [Reg], IpBases)> {
    let mut symbols: Vec<(&'static str, &'static [Reg], IpBases)> = Vec::new();
    for ip in &ips.all {
        for table in barebell::regs::registers_for(ip.hw_id, ip.version.triple()) {
            symbols.push((ip_name(ip.hw_id), table, ip.bases));
        }
    }
    // Last: the boot names alias registers the blocks name properly
    // (RCC_CONFIG_MEMSIZE is the NBIO's RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE).
    symbols.push(("BOOT", barebell::discovery::boot::ALL, IpBases::default()));
    symbols
}

/// The HDP flush through the remapped page (`hdp_v6_0_flush_hdp()`,
/// `hdp_v7_0_flush_hdp()`, `hdp_v4_0_flush_hdp()`), at the NBIO's hole.
pub fn flush_hdp(bus: &Bus<'_>, nbio: &Nbio) -> Result<(), NbioError> {
    barebell::nbio::flush_hdp(bus, nbio, nbio.hole())
}

/// Programs the NBIO and switches the bus to reach past BAR5.
pub fn run<'p>(gpu: &mut Gpu<'p>, sink: &'p dyn Sink) -> Result<Nbio, BringupError> {
    let s = Step::Nbio;
    let p = gpu.platform;
    let nbif = gpu.ips.nbif;
    let nbio = Nbio::for_version(nbif.version.triple(), nbif.bases).at(s)?;
    let indirect =
        IndirectBus::new(p.regs(), p.regs_len(), nbio.regs.rsmu_pair(), &nbif.bases).at(s)?;
    gpu.bus = Bus::indirect(indirect, register_symbols(&gpu.ips), sink);
    let mut extra = alloc::string::String::new();
    if nbio.regs.version == (7, 9, 0) {
        let topo = &gpu.ips.topology;
        let aids: Vec<IpBases> = (0..32u8)
            .filter(|a| topo.aid_mask & (1 << a) != 0)
            .map(|a| {
                gpu.ips
                    .aid_ip(hw_id::NBIF, a)
                    .map_or(nbif.bases, |i| i.bases)
            })
            .collect();
        let aids = if aids.is_empty() {
            alloc::vec![nbif.bases]
        } else {
            aids
        };
        let r = barebell::nbio::init_v7_9(&gpu.bus, &nbio, &aids, topo.xcc_mask, p.doorbell_bus())
            .at(s)?;
        extra = alloc::format!(
            "; XCC_DOORBELL_FENCE = {:#x} (xcc_mask {:#x}) on AID 0, SHUB_SLV_MODE on {} other AID(s); BACO cleared on AID mask {:#x}; {}",
            barebell::nbio::xcc_doorbell_fence(topo.xcc_mask),
            topo.xcc_mask,
            aids.len().saturating_sub(1),
            r.baco_cleared,
            if r.segment8_written {
                "BIFC_DOORBELL_ACCESS_EN_PF and BIFC_GFX_INT_MONITOR_MASK written"
            } else {
                "segment-8 registers (BIFC_DOORBELL_ACCESS_EN_PF, BIFC_GFX_INT_MONITOR_MASK) not reachable through the discovered bases, not written"
            }
        );
    } else {
        barebell::nbio::init(&gpu.bus, &nbio, p.doorbell_bus()).at(s)?;
    }
    flush_hdp(&gpu.bus, &nbio).at(s)?;
    sink.step(
        s,
        format_args!(
            "{} init; HDP flush remapped to BAR5 + {:#x} and used once; doorbell aperture open; self-ring at {:#x}; registers past BAR5 ({:#x} bytes) through the {} index/data pair{extra}",
            nbio.regs.ip,
            nbio.hole(),
            p.doorbell_bus(),
            p.regs_len(),
            if nbio.regs.rsmu_index.name.ends_with("PCIE_INDEX2") {
                "PCIE_INDEX2/DATA2"
            } else {
                "RSMU"
            },
        ),
    );
    Ok(nbio)
}
