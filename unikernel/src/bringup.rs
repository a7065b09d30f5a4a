//! Bring-up inside the VM: the one bring-up sequence
//! (`barebell_bringup::run`, the code `barebell bringup` runs on the host,
//! over the model or a GPU) over the device model's `VirtualGpu`, for each
//! model part (Navi31, gfx11; Navi48, gfx12) and each way of mapping the
//! user queue (MES, direct HQD load, KIQ), from discovery to a mapped
//! queue whose first packet completed, then torn down (`Gpu::shutdown`)
//! and checked quiescent.
//!
//! Only the platform's pieces are the image's own: the firmware comes
//! from the `-initrd` archive ([`Archive`], a `FirmwareSource`), the
//! model's memory from [`crate::devmem`] (its DMA region at the host's
//! `DMA_HOST_VA`, so the layout equals the host's), and the reports go to
//! [`Console`], a `Sink`. One CPU and no threads: the model's firmware
//! stand-ins run when the bring-up pauses between looks at a fence.
//!
//! Reports, which `cargo xtask qemu` checks (and compares with the host
//! CLI's `barebell bringup --part <part> --mapping <mapping> --trace`):
//! - on COM1, a `UK BRINGUP <part> run <mapping>: ...` header, each step
//!   as `UK BRINGUP <part> step <name>: <detail>`, then `queue ready`,
//!   each teardown stage as `step teardown: ...`, `teardown complete`,
//!   the model's quiescence check, and `UK BRINGUP <part> <mapping> done`;
//! - on COM2, defmt frames: the register trace from the psp step to the
//!   teardown (each access as `TRACE W MP0.<reg> @<offset> = <value>`,
//!   names resolved by the bring-up's bus, nothing formatted in the
//!   image), between `TRACE <part> <mapping> begin` and `end` frames,
//!   with a `TRACE <part> <mapping> step <name> reported` frame where
//!   each step reports; and one `BRINGUP <part> queue ready` frame per
//!   run. 1,090 to 1,134 accesses per run today (teardown included); the sink stops sending after
//!   [`TRACE_CAP`] (so a polling loop that spins cannot flood the port)
//!   and the `end` frame says how many it left out. Discovery's table
//!   read (over 5,000 `MM_INDEX`/`MM_DATA` accesses) and the nbio and gmc
//!   steps are not traced.

use crate::firmware::Blobs;
use crate::{devmem, println};
use alloc::vec::Vec;
use barebell::bus::trace::{self, Access};
use barebell::latency::tsc::{self, TscScale};
use barebell_bringup::{FirmwareError, FirmwareSource, Mapping, Options, Sink, Step};
use barebell_model::{Part, QUIESCENT, Seed, VirtualGpu, parts};
use core::cell::Cell;
use core::fmt;

/// The model's seed: the one `barebell bringup` opens its model with.
const SEED: u64 = 1;
/// Accesses traced per run; the rest are counted.
const TRACE_CAP: u32 = 2048;

/// Firmware files looked up by name in the `-initrd` archive.
struct Archive<'a>(&'a Blobs);

impl FirmwareSource for Archive<'_> {
    fn load(&self, name: &str) -> Result<Vec<u8>, FirmwareError> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.to_vec())
            .ok_or_else(|| FirmwareError::NotFound {
                name: name.into(),
                place: "the -initrd archive".into(),
            })
    }
}

/// The same archive as the model reads it, with the model's own file
/// interface.
impl barebell_model::FirmwareFiles for Archive<'_> {
    fn read(&self, name: &str) -> Result<Vec<u8>, barebell_model::FileError> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.to_vec())
            .ok_or_else(|| barebell_model::FileError {
                name: name.into(),
                detail: "is not in the -initrd archive".into(),
            })
    }
}

/// Steps as console lines; from the psp step on, every register access
/// as a defmt frame.
struct Console {
    part: &'static str,
    mapping: &'static str,
    scale: TscScale,
    /// Open once the gmc step has reported, until the run ends.
    tracing: Cell<bool>,
    accesses: Cell<u32>,
}

impl Console {
    /// Closes the trace window with its `end` frame; returns the
    /// accesses seen.
    fn end(&self) -> u32 {
        let n = self.accesses.get();
        if self.tracing.replace(false) {
            defmt::info!(
                "TRACE {=str} {=str} end: {=u32} accesses, {=u32} not traced",
                self.part,
                self.mapping,
                n,
                n.saturating_sub(TRACE_CAP)
            );
        }
        n
    }

    fn marker(&self, step: Step) {
        if self.tracing.get() {
            defmt::info!(
                "TRACE {=str} {=str} step {=str} reported",
                self.part,
                self.mapping,
                step.name()
            );
        }
    }
}

impl Sink for Console {
    fn step(&self, step: Step, detail: fmt::Arguments<'_>) {
        println!("UK BRINGUP {} step {step}: {detail}", self.part);
        self.marker(step);
        if step == Step::Gmc && !self.tracing.get() {
            self.tracing.set(true);
            defmt::info!(
                "TRACE {=str} {=str} begin: psp, rlc, mes, rings, queue and teardown steps",
                self.part,
                self.mapping
            );
        }
    }

    fn tracing(&self) -> bool {
        self.tracing.get()
    }

    fn access(&self, a: Access) {
        let n = self.accesses.get();
        self.accesses.set(n.saturating_add(1));
        if n < TRACE_CAP {
            trace::defmt_sink(a);
        }
    }

    fn wall_ns(&self) -> Option<u64> {
        Some(self.scale.to_ns(tsc::start()))
    }
}

/// Every part, every mapping.
pub fn run_all(blobs: &Blobs, scale: TscScale) -> Result<(), &'static str> {
    for part in [parts::navi31(), parts::navi48()] {
        for mapping in Mapping::ALL {
            run(part.clone(), mapping, blobs, scale)?;
        }
    }
    Ok(())
}

/// One model of `part`, brought up with the queue mapped by `mapping`.
fn run(part: Part, mapping: Mapping, blobs: &Blobs, scale: TscScale) -> Result<(), &'static str> {
    let t0 = tsc::start();
    let name = part.name;
    let m = mapping.name();
    let fw = Archive(blobs);
    let memory = devmem::take().ok_or("the model's memory is not free")?;
    let gpu = VirtualGpu::new(part, &fw, memory, Seed(SEED)).map_err(|e| {
        println!("UK ERROR bring-up {name} {m}: building the model: {e}");
        "building the model"
    })?;
    let dma = barebell::platform::Platform::dma(&gpu).host.as_ptr() as usize;
    println!(
        "UK BRINGUP {name} run {m}: {}, BAR0 backed for {} MiB, DMA region at host {dma:#x}, seed {SEED}",
        barebell::platform::Platform::name(&gpu),
        devmem::VRAM_BYTES >> 20
    );
    let sink = Console {
        part: name,
        mapping: m,
        scale,
        tracing: Cell::new(false),
        accesses: Cell::new(0),
    };
    let opts = Options {
        until: Step::Queue,
        mapping: Some(mapping),
        ..Default::default()
    };
    let fail = |what: &dyn fmt::Display| {
        println!("UK ERROR bring-up {name} {m}: {what}");
        for l in gpu.firmware_logs().lines() {
            println!("UK ERROR   {l}");
        }
        let refused = gpu.psp().refusals();
        if !refused.is_empty() {
            println!("UK ERROR   the PSP model refused: {refused:?}");
        }
        "bring-up"
    };
    let up = barebell_bringup::run(&gpu, &fw, &opts, &sink).map_err(|e| {
        sink.end();
        fail(&e)
    })?;
    let q = up
        .queue
        .as_ref()
        .ok_or_else(|| fail(&"no user queue after the queue step"))?;
    // What the integration test (tests/harness/tests/bringup.rs) asks of
    // the model after a bring-up.
    let refused = gpu.psp().refusals();
    if !refused.is_empty() {
        return Err(fail(&format_args!("the PSP model refused {refused:?}")));
    }
    let lost = gpu.bar5_counts().beyond;
    if lost != 0 {
        return Err(fail(&format_args!("{lost} accesses past BAR5 were lost")));
    }
    let cp_errors = gpu.cp().errors().len();
    if cp_errors != 0 {
        return Err(fail(&format_args!("{cp_errors} CP model errors")));
    }
    let signal = q.signal.value();
    if q.mode != mapping || signal != 0 {
        return Err(fail(&format_args!(
            "mapped {:?}, completion signal {signal} (want {mapping:?}, 0)",
            q.mode
        )));
    }
    println!(
        "UK BRINGUP {name} queue ready: {m} mapping, doorbell {:#x}, barrier packet {} completed (signal 1 -> 0)",
        q.doorbell, q.packet_id
    );
    defmt::info!("BRINGUP {=str} queue ready: {=str} mapping", name, m);
    // The teardown the host CLI runs on every exit (`Gpu::shutdown`):
    // each stage reports through the sink as `step teardown: ...`.
    let report = up.shutdown();
    if !report.complete() {
        sink.end();
        return Err(fail(&format_args!("the teardown was incomplete: {report}")));
    }
    println!("UK BRINGUP {name} teardown complete");
    if let Err(why) = gpu.quiescent() {
        sink.end();
        return Err(fail(&format_args!("model check: NOT quiescent: {why}")));
    }
    println!("UK BRINGUP {name} model check: {QUIESCENT}");
    let traced = sink.end();
    println!(
        "UK BRINGUP {name} trace: {traced} register accesses from psp to teardown sent as defmt frames"
    );
    let us = scale.to_ns(tsc::end().wrapping_sub(t0)) / 1000;
    println!(
        "UK BRINGUP {name} {m} done in {us}us (model built; discovery, nbio, gmc, ih, psp, rlc, mes, rings, queue; barrier completed; torn down, model quiescent)"
    );
    Ok(())
}
