//! Step 2, nbio: the NBIO (NBIF on gfx12) as `soc21_common_hw_init()` /
//! `soc24_common_hw_init()` program it: the HDP flush remapped into the
//! register BAR (`nbio_v4_3_remap_hdp_registers()`), the doorbell
//! aperture and the self-ring aperture at BAR2's bus address
//! (`nbio_v4_3_enable_doorbell_aperture()`,
//! `nbio_v4_3_enable_doorbell_selfring_aperture()`), one HDP flush
//! through the remapped page; then every register past BAR5 goes through
//! the RSMU index/data pair, as `amdgpu_device_rreg()` sends them to
//! `pcie_rreg` (`amdgpu_device_indirect_rreg()`).

use crate::Gpu;
use crate::bus::Bus;
use crate::error::{BringupError, ResultAt};
use crate::sink::{Sink, Step};
use alloc::vec::Vec;
use barebell::bus::IndirectBus;
use barebell::ip::hw_id;
use barebell::nbio::{MMIO_REG_HOLE_OFFSET, Nbio, NbioError};
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
        _ => "IP",
    }
}

/// The HDP flush through the remapped page (`hdp_v6_0_flush_hdp()`,
/// `hdp_v7_0_flush_hdp()`).
pub fn flush_hdp(bus: &Bus<'_>, nbio: &Nbio) -> Result<(), NbioError> {
    barebell::nbio::flush_hdp(bus, nbio, MMIO_REG_HOLE_OFFSET)
}

/// Programs the NBIO and switches the bus to reach past BAR5.
pub fn run<'p>(gpu: &mut Gpu<'p>, sink: &'p dyn Sink) -> Result<Nbio, BringupError> {
    let s = Step::Nbio;
    let p = gpu.platform;
    let nbif = gpu.ips.nbif;
    let nbio = Nbio::for_version(nbif.version.triple(), nbif.bases).at(s)?;
    let indirect =
        IndirectBus::new(p.regs(), p.regs_len(), nbio.regs.rsmu_pair(), &nbif.bases).at(s)?;
    let mut symbols: Vec<(&'static str, &'static [Reg], IpBases)> = Vec::new();
    for ip in &gpu.ips.all {
        for table in barebell::regs::registers_for(ip.hw_id, ip.version.triple()) {
            symbols.push((ip_name(ip.hw_id), table, ip.bases));
        }
    }
    // Last: the boot names alias registers the blocks name properly
    // (RCC_CONFIG_MEMSIZE is the NBIO's RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE).
    symbols.push(("BOOT", barebell::discovery::boot::ALL, IpBases::default()));
    gpu.bus = Bus::indirect(indirect, symbols, sink);
    barebell::nbio::init(&gpu.bus, &nbio, p.doorbell_bus()).at(s)?;
    flush_hdp(&gpu.bus, &nbio).at(s)?;
    sink.step(
        s,
        format_args!(
            "{} init; HDP flush remapped to BAR5 + {:#x} and used once; doorbell aperture open; self-ring at {:#x}; registers past BAR5 ({:#x} bytes) through the RSMU index/data pair",
            nbio.regs.ip,
            MMIO_REG_HOLE_OFFSET,
            p.doorbell_bus(),
            p.regs_len()
        ),
    );
    Ok(nbio)
}
