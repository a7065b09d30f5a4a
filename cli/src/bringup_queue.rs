//! `barebell bringup --mapping`: the bring-up chain after RLC autoload
//! (`barebell_model::chain`, shared with the unikernel), reported on stdout.

use crate::latency_target::MappingMode;
use barebell::ip::Generation;
use barebell::time::StdClock;
use barebell_model::chain::{self, Mapping, Report};

struct Stdout;

impl Report for Stdout {
    fn step(&mut self, line: core::fmt::Arguments<'_>) {
        println!("{line}");
    }
    fn queue_ready(&mut self, mapping: Mapping, doorbell: u32, packet_id: u64) {
        println!(
            "queue ready: {} mapping, doorbell {doorbell:#x}, dispatch {packet_id} completed (signal 1 -> 0)",
            mapping.name()
        );
    }
}

pub fn run(generation: Generation, mode: MappingMode, seed: u64) -> Result<(), String> {
    let mapping = match mode {
        MappingMode::Mes => Mapping::Mes,
        MappingMode::Direct => Mapping::Direct,
        MappingMode::Kiq => Mapping::Kiq,
    };
    chain::run(generation, mapping, seed, StdClock::default(), &mut Stdout)
}
