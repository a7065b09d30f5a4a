//! The `nbio` bring-up step: HDP flush remap, doorbell and self-ring
//! apertures (`soc21_common_hw_init()`, `nbio_v4_3_remap_hdp_registers()`,
//! `nbio_v4_3_enable_doorbell_aperture()`), on the NBIO model.

use crate::bringup::BringupArgs;
use barebell::discovery::{Discovery, hw_id};
use barebell::regs::trace::{Access, Symbols, TraceBus};

/// The doorbell BAR's bus address: a model value.
pub const DOORBELL_BUS: u64 = 0x00FC_0000_0000;

/// Runs the `nbio` step on its own model.
pub fn step(
    args: &BringupArgs,
    clock: &barebell_sim::SimClock,
    d: &Discovery<'_>,
) -> Result<(), String> {
    use barebell::nbio::{self, MMIO_REG_HOLE_OFFSET};
    use barebell::regs::nbio_4_3_0;
    use barebell_sim::nbio::{DoorbellOutcome, NbioModel};

    let trace = args.trace;
    let nbif = d.ip(hw_id::NBIF, 0).ok_or("no NBIF")?;
    if nbif.version.triple() != (4, 3, 0) {
        println!(
            "step nbio: skipped: NBIF {:?} has no init module (only NBIO 4.3.0 is built)",
            nbif.version.triple()
        );
    } else {
        let model = NbioModel::new(clock, nbif.bases, MMIO_REG_HOLE_OFFSET as usize);
        let blocks = [(nbio_4_3_0::init::ALL, nbif.bases)];
        let bus = TraceBus::new(&model, Symbols { blocks: &blocks }, move |a: Access| {
            if trace {
                println!("  {a}");
            }
        });
        nbio::init(&bus, &nbif.bases, DOORBELL_BUS).map_err(|e| format!("nbio: {e}"))?;
        nbio::flush_hdp(&bus, MMIO_REG_HOLE_OFFSET).map_err(|e| format!("nbio: {e}"))?;
        if model.hdp_flushes() != 1 || model.doorbell_write(0, 1) != DoorbellOutcome::Rang {
            return Err("nbio: the model saw no HDP flush or refused a doorbell".into());
        }
        println!(
            "step nbio: HDP flush at BAR5 + {MMIO_REG_HOLE_OFFSET:#x} (model saw 1 flush), doorbell aperture open, self-ring at {DOORBELL_BUS:#x} (model value)"
        );
    }
    Ok(())
}
