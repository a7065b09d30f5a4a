//! Bring-up after RLC autoload on the model GPU, inside the VM: the chain
//! `barebell bringup --mapping` runs on the host (`barebell_model::chain`:
//! MES start, the rings each mapping needs by register programming, one
//! user queue, a dispatch through barebell's `AqlQueue`, its completion
//! signal, `queue ready`), with the same `no_std` runtime code against the
//! same `no_std + alloc` model. There is one CPU and no threads, which the
//! chain is built for: the firmware models are serviced inline from the
//! runtime's pause closures and the CP model is stepped to idle.
//!
//! This module only reports: each line goes to COM1 with the `UK BRINGUP
//! <gen>` prefix `cargo xtask qemu` looks for, and each ready queue also as
//! a defmt frame.

use crate::println;
use barebell::latency::tsc::{self, TscClock, TscScale};
use barebell::ip::Generation;
use barebell_model::chain::{self, Report};

pub use barebell_model::chain::Mapping;

fn gen_name(g: Generation) -> &'static str {
    match g {
        Generation::Gfx11 => "gfx11",
        Generation::Gfx12 => "gfx12",
    }
}

struct Console {
    part: &'static str,
}

impl Report for Console {
    fn step(&mut self, line: core::fmt::Arguments<'_>) {
        println!("UK BRINGUP {} {line}", self.part);
    }

    fn queue_ready(&mut self, mapping: Mapping, doorbell: u32, packet_id: u64) {
        println!(
            "UK BRINGUP {} queue ready: {} mapping, doorbell {doorbell:#x}, dispatch {packet_id} completed (signal 1 -> 0)",
            self.part,
            mapping.name()
        );
        defmt::info!(
            "BRINGUP {=str} queue ready: {=str} mapping",
            self.part,
            mapping.name()
        );
    }
}

/// Runs the chain for `generation`, mapping the user queue by `mode`.
pub fn run(
    generation: Generation,
    mode: Mapping,
    scale: TscScale,
    seed: u64,
) -> Result<(), &'static str> {
    let t0 = tsc::start();
    let part = gen_name(generation);
    chain::run(
        generation,
        mode,
        seed,
        TscClock(scale),
        &mut Console { part },
    )
    .map_err(|e| {
        println!("UK ERROR bring-up {part} {}: {e}", mode.name());
        "bring-up"
    })?;
    let us = scale.to_ns(tsc::end().wrapping_sub(t0)) / 1000;
    println!(
        "UK BRINGUP {part} {} done in {us}us (model GPU built, MES started, rings up, queue mapped, dispatch completed, unmapped)",
        mode.name()
    );
    Ok(())
}
