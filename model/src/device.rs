//! One face for every model part (issue 30): what a host program asks of
//! a model GPU, whichever generation's blocks back it. The CLI holds any
//! part as a `Box<dyn ModelDevice>` and never asks which.
//!
//! The parts themselves are still two types ([`crate::vgpu::VirtualGpu`]
//! for gfx11/gfx12, [`crate::vgpu9::VirtualGpu9`] for GC 9.4.3); this
//! trait is the seam they are being merged behind.

use crate::cp::CpModel;
use crate::parts::Part;
use crate::vgpu::{NotQuiescent, VirtualGpu};
use crate::vgpu9::VirtualGpu9;
use alloc::string::String;
use alloc::vec::Vec;
use barebell::platform::Platform;

/// A model GPU.
pub trait ModelDevice: Platform + Send + Sync + core::fmt::Debug {
    /// The part description the model was built from.
    fn part(&self) -> &Part;
    /// The CP model behind every compute queue (on GC 9.4.3, the one
    /// every XCC's CP shares): its shader engines, its error log.
    fn cp(&self) -> spin::MutexGuard<'_, CpModel>;
    /// One round of the CP side's work (doorbells, schedulers, queues);
    /// whether anything moved.
    fn service_cp(&self) -> bool;
    /// The model's own check that nothing can still reach memory.
    fn quiescent(&self) -> Result<(), NotQuiescent>;
    /// What the device side refused or faulted on (firmware stand-ins'
    /// logs, stray register accesses), one line each.
    fn diagnostics(&self) -> Vec<String>;
    /// Everything the firmware stand-ins logged (MES, KIQ, PSP), for a
    /// failure's report; the diagnostics where a part keeps no log.
    fn firmware_logs(&self) -> String {
        self.diagnostics().join("\n")
    }
    /// Fault switch: the device falls off the bus (reads all ones,
    /// writes dropped, nothing on it runs any more).
    fn fall_off_bus(&self);
    /// Fault switch: the compute queue on 64-bit doorbell `index` hangs
    /// (stops consuming its ring). False if no queue is mapped there.
    fn hang_queue(&self, index: u32) -> bool;
    /// The gfx11/gfx12 part, for what only it supports yet (prepared
    /// start states).
    fn gfx11_12(&self) -> Option<&VirtualGpu> {
        None
    }
}

/// Runs `f` while the CP side of `m` runs on a thread of its own, as a
/// GPU's CP runs beside the host (the runtime's waits then see real
/// time); see [`crate::thread::with_service_thread`].
#[cfg(feature = "std")]
pub fn with_cp_thread<R>(
    m: &dyn ModelDevice,
    idle: crate::thread::Idle,
    setup: impl FnOnce() + Send,
    f: impl FnOnce() -> R,
) -> std::io::Result<R> {
    crate::thread::with_service_thread(&|| m.service_cp(), idle, setup, f)
}

impl ModelDevice for VirtualGpu {
    fn part(&self) -> &Part {
        VirtualGpu::part(self)
    }
    fn cp(&self) -> spin::MutexGuard<'_, crate::cp::CpModel> {
        self.mec().cp()
    }
    fn service_cp(&self) -> bool {
        self.mec().step().progressed()
    }
    fn quiescent(&self) -> Result<(), NotQuiescent> {
        VirtualGpu::quiescent(self)
    }
    fn diagnostics(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in self.psp().refusals() {
            out.push(alloc::format!("the PSP model refused: {r}"));
        }
        for x in self.psp().mc().faults() {
            out.push(alloc::format!("the PSP's memory access faulted: {x}"));
        }
        // As on GC 9.4.3 below: what the CP side refused or stopped on.
        for e in self.mec().events() {
            if let crate::mec::MecEvent::Refused {
                me,
                pipe,
                queue,
                why,
            } = e
            {
                out.push(alloc::format!(
                    "the MEC model refused HQD me {me} pipe {pipe} queue {queue}: {why:?}"
                ));
            }
        }
        for e in self.mec().cp().errors() {
            out.push(alloc::format!("the CP model: {e}"));
        }
        if let Some(stop) = self.sdma().stopped() {
            out.push(alloc::format!("the SDMA model stopped its queue: {stop:?}"));
        }
        out
    }
    fn firmware_logs(&self) -> String {
        VirtualGpu::firmware_logs(self)
    }
    fn gfx11_12(&self) -> Option<&VirtualGpu> {
        Some(self)
    }
    fn fall_off_bus(&self) {
        VirtualGpu::fall_off_bus(self)
    }
    fn hang_queue(&self, index: u32) -> bool {
        VirtualGpu::hang_queue(self, index)
    }
}

impl ModelDevice for VirtualGpu9 {
    fn part(&self) -> &Part {
        VirtualGpu9::part(self)
    }
    fn cp(&self) -> spin::MutexGuard<'_, crate::cp::CpModel> {
        self.mec().cp()
    }
    fn service_cp(&self) -> bool {
        self.mec().service() > 0
    }
    fn quiescent(&self) -> Result<(), crate::vgpu::NotQuiescent> {
        VirtualGpu9::quiescent(self)
    }
    fn fall_off_bus(&self) {
        VirtualGpu9::fall_off_bus(self)
    }
    fn hang_queue(&self, index: u32) -> bool {
        self.mec().hang_doorbell(index.saturating_mul(2))
    }
    fn diagnostics(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in self.psp().refusals() {
            out.push(alloc::format!("the PSP model refused: {r}"));
        }
        for x in self.psp().mc().faults() {
            out.push(alloc::format!("the PSP's memory access faulted: {x}"));
        }
        for r in self.mec().refusals() {
            out.push(alloc::format!("the GC 9.4.3 CP model refused: {r}"));
        }
        for e in self.mec().cp().errors() {
            out.push(alloc::format!("the CP model: {e}"));
        }
        for r in self.sdma_refusals() {
            out.push(alloc::format!("the SDMA 4.4.2 model refused: {r}"));
        }
        if let Some(n) = self.nbios().first() {
            for (i, v) in n.dropped() {
                out.push(alloc::format!(
                    "the NBIO dropped doorbell {i:#x} = {v:#x} (aperture closed)"
                ));
            }
        }
        let stray = self.unclaimed();
        if let Some((w, at)) = stray.first() {
            out.push(alloc::format!(
                "{} register accesses reached no block model (first: {} at byte {at:#x})",
                stray.len(),
                if *w { "a write" } else { "a read" }
            ));
        }
        out
    }
}
