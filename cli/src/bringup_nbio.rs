//! The `nbio` bring-up step: HDP flush remap, doorbell and self-ring
//! apertures (`soc21_common_hw_init()` / `soc24_common_hw_init()` and
//! their `late_init`), on the NBIO model of the part's discovered
//! NBIO/NBIF version (NBIO 4.3.0 on Navi31, NBIF 6.3.1 on Navi48).

use crate::bringup::BringupArgs;
use barebell::bus::trace::{Access, Symbols, TraceBus};
use barebell::discovery::{Discovery, hw_id};

/// The doorbell BAR's bus address: a model value.
pub const DOORBELL_BUS: u64 = 0x00FC_0000_0000;

/// Runs the `nbio` step on its own model.
pub fn step(
    args: &BringupArgs,
    clock: &barebell_model::SimClock,
    d: &Discovery<'_>,
) -> Result<(), String> {
    use barebell::nbio::{self, MMIO_REG_HOLE_OFFSET, Nbio};
    use barebell_model::nbio::{DoorbellOutcome, NbioIp, NbioModel};

    let trace = args.trace;
    let nbif = d.ip(hw_id::NBIF, 0).ok_or("no NBIF")?;
    let version = nbif.version.triple();
    let n = Nbio::for_version(version, nbif.bases).map_err(|e| format!("nbio: {e}"))?;
    let ip = NbioIp::from_version(version)
        .ok_or_else(|| format!("nbio: the model has no NBIO/NBIF {version:?}"))?;
    let model = NbioModel::new(clock, ip, nbif.bases, MMIO_REG_HOLE_OFFSET as usize);
    let blocks: Vec<_> = n.regs.symbols.iter().map(|r| (*r, nbif.bases)).collect();
    let bus = TraceBus::new(&model, Symbols { blocks: &blocks }, move |a: Access| {
        if trace {
            println!("  {a}");
        }
    });
    nbio::init(&bus, &n, DOORBELL_BUS).map_err(|e| format!("nbio: {e}"))?;
    nbio::flush_hdp(&bus, &n, MMIO_REG_HOLE_OFFSET).map_err(|e| format!("nbio: {e}"))?;
    if model.hdp_flushes() != 1 || model.doorbell_write(0, 1) != DoorbellOutcome::Rang {
        return Err("nbio: the model saw no HDP flush or refused a doorbell".into());
    }
    if model.hole_reads() != 0 {
        return Err("nbio: the flush was posted by reading the remapped register".into());
    }
    println!(
        "step nbio: HDP flush at BAR5 + {MMIO_REG_HOLE_OFFSET:#x} (model saw 1 flush), doorbell aperture open, self-ring at {DOORBELL_BUS:#x} (model value); {} registers",
        n.regs.ip
    );
    Ok(())
}
