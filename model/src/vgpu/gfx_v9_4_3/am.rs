//! What a second driver needs of a GC 9.4.3 [`super::Gc943`] (tinygrad's
//! AM driver through the `barebell-model-ffi` bridge, as
//! `super::super::gfx_v11_0::am` gives it for the Navi parts): the
//! discovery table where the IFWI leaves it, one refusal list over every
//! block model, a strict mode, doorbell stores into BAR2, and a summary
//! of what a boot left in the blocks.

use super::Gc943;
use crate::vgpu::HostMemory;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

/// `DISCOVERY_TMR_OFFSET` (`amdgpu_discovery.c`: 64 KiB): the table lies
/// at VRAM size − 64 KiB, where `amdgpu_discovery_read_binary_from_mem()`
/// reads it (VRAM size from `RCC_CONFIG_MEMSIZE`) and where tinygrad's
/// `AMDev._run_discovery` reads it through BAR0. The same on GC 9.4.3:
/// `amdgpu_discovery_init()` takes this path on every bare-metal part.
const DISCOVERY_TMR_OFFSET: u64 = 64 << 10;

/// Copies the discovery `table` to VRAM size − 64 KiB of `memory`, as the
/// IFWI leaves it (see [`DISCOVERY_TMR_OFFSET`]); nothing when the
/// backing is smaller than the part's VRAM (a test's small backing:
/// then only the `MM_INDEX`/`MM_DATA` window serves the table).
pub(super) fn place_discovery(vram_mib: u32, memory: &HostMemory, table: &[u8]) {
    let vram = u64::from(vram_mib) << 20;
    let Some(at) = vram.checked_sub(DISCOVERY_TMR_OFFSET) else {
        return;
    };
    let Some(end) = at.checked_add(table.len() as u64) else {
        return;
    };
    if end > memory.vram_len as u64 {
        return;
    }
    // SAFETY: `at..end` lies inside the VRAM backing (checked above),
    // which the device owns; no block model runs yet (called while the
    // device is built).
    unsafe {
        core::ptr::copy_nonoverlapping(
            table.as_ptr(),
            memory.vram.as_ptr().add(at as usize),
            table.len(),
        );
    }
}

/// Where each refusal list stood: the SOC log (IH, SDMA, SMU), the PSP's,
/// the CP block's, the RLC/MEC start block's, the unclaimed accesses,
/// the NBIO's dropped doorbells, the HWS-to-SDMA step's.
pub type RefusalMark943 = [usize; 7];

impl Gc943 {
    /// Strict mode: an access no block model claims is a refusal (outside
    /// it, it is kept as plain storage and only recorded, as before).
    pub fn set_strict(&self, on: bool) {
        self.strict.store(on, Ordering::Relaxed);
        self.log.set_strict(on);
    }

    fn lists(&self) -> [Vec<String>; 7] {
        let strict = self.strict.load(Ordering::Relaxed);
        let dropped = self
            .nbios
            .first()
            .map(|n| {
                n.dropped()
                    .iter()
                    .map(|(i, v)| {
                        format!(
                            "NBIO: doorbell {i:#x} = {v:#x} dropped (the doorbell aperture is closed)"
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        [
            self.log.all().iter().map(|r| format!("{r}")).collect(),
            self.psp
                .refusals()
                .iter()
                .map(|r| format!("PSP: {r}"))
                .collect(),
            self.mec
                .refusals()
                .iter()
                .map(|r| format!("CP: {r}"))
                .collect(),
            self.rlc_mec
                .refusals()
                .iter()
                .map(|(x, why)| format!("RLC/MEC of XCC {x}: {why}"))
                .collect(),
            if strict {
                self.unclaimed()
                    .iter()
                    .map(|(w, at)| {
                        format!(
                            "BAR5: {} at byte {at:#x} reached no block model of the GC 9.4.3 part",
                            if *w { "a write" } else { "a read" }
                        )
                    })
                    .collect()
            } else {
                Vec::new()
            },
            dropped,
            self.sdma_refusals()
                .iter()
                .map(|r| format!("SDMA: {r}"))
                .collect(),
        ]
    }

    /// How long each refusal list is now.
    pub fn refusal_mark(&self) -> RefusalMark943 {
        self.lists().map(|l| l.len())
    }

    /// The refusals logged after `mark`.
    pub fn refusals_since(&self, mark: RefusalMark943) -> Vec<String> {
        self.lists()
            .into_iter()
            .zip(mark)
            .flat_map(|(l, m)| l.into_iter().skip(m))
            .collect()
    }

    /// Every refusal so far, from every block model.
    pub fn refusals(&self) -> Vec<String> {
        self.refusals_since([0; 7])
    }

    /// A host store of `value` to the doorbell at `byte_offset` of BAR2:
    /// it lands on the CP block's doorbell page; it reaches a KIQ or queue
    /// only through AID 0's NBIO 7.9 aperture, when the device next
    /// services its queues ([`super::super::VirtualGpu`]'s BAR2).
    pub fn doorbell_write(&self, byte_offset: u64, value: u64) -> Result<(), String> {
        let (host, len) = self.mec.doorbell_page();
        if !byte_offset.is_multiple_of(8) || byte_offset >= len as u64 {
            return Err(format!(
                "doorbell store at BAR2 byte {byte_offset:#x}: outside the model's {len:#x}-byte \
                 doorbell page or not 64-bit aligned"
            ));
        }
        // SAFETY: the page is boxed inside the CP block and never moves;
        // the offset is inside it and 8-aligned; the page is only ever
        // accessed atomically.
        let slot = unsafe { &*((host + byte_offset) as *const core::sync::atomic::AtomicU64) };
        slot.store(value, Ordering::Release);
        Ok(())
    }

    /// What a second driver's boot left in the model, one fact a line.
    pub fn am_status(&self) -> String {
        use core::fmt::Write;
        let mut s = String::new();
        for x in 0..self.gfxhubs.len() {
            let _ = writeln!(
                s,
                "XCC {x}: MEC {}, KIQ {}",
                match self.rlc_mec.mec_run(x) {
                    Ok(_) => "running",
                    Err(_) => "halted",
                },
                if self.mec.kiq_running(x) {
                    "running"
                } else {
                    "not running"
                }
            );
        }
        for q in self.mec.queues() {
            let stats =
                q.cp.and_then(|c| self.mec.cp().pm4_stats(c))
                    .map(|p| format!(", {} packets executed, rptr {:#x}", p.packets, p.rptr))
                    .unwrap_or_default();
            let _ = writeln!(
                s,
                "CP: queue {:?} on doorbell dword {:#x} (VMID {}, XCCs {:?}){}{stats}",
                q.source,
                q.doorbell_dword,
                q.vmid,
                q.members.iter().map(|m| m.0).collect::<Vec<_>>(),
                if q.retired { ", retired" } else { "" },
            );
        }
        for e in self.mec.cp().errors() {
            let _ = writeln!(s, "CP: {e}");
        }
        let answered = self
            .smu
            .events()
            .iter()
            .filter(|e| matches!(e, crate::smu::SmuEvent::Answered { .. }))
            .count();
        let _ = writeln!(s, "SMU: {answered} messages answered");
        for (i, e) in self.sdma.iter().enumerate() {
            if let Some(q) = e.queue() {
                let st = e.stats();
                let _ = writeln!(
                    s,
                    "SDMA {i}: queue ring {:#x} (VMID {}), {} doorbells, {} packets, {} fences{}",
                    q.ring,
                    q.vmid,
                    st.doorbells,
                    st.packets,
                    st.fences,
                    e.stopped()
                        .map(|x| alloc::format!(", stopped: {x:?}"))
                        .unwrap_or_default()
                );
            }
        }
        for r in self.ih.rings() {
            let _ = writeln!(
                s,
                "IH: ring {} at {:#x} ({:#x} bytes)",
                r.ring, r.base, r.bytes
            );
        }
        let mut stray: Vec<usize> = self.unclaimed().iter().map(|(_, at)| *at).collect();
        stray.sort_unstable();
        stray.dedup();
        if !stray.is_empty() {
            let _ = writeln!(
                s,
                "BAR5: {} registers reached no block model: {}",
                stray.len(),
                stray
                    .iter()
                    .map(|a| format!("{a:#x}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        let _ = writeln!(
            s,
            "PSP: sOS {}",
            if self.psp.sos_running() {
                "running"
            } else {
                "not running"
            }
        );
        s
    }
}
