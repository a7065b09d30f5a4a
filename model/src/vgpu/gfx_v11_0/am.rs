//! What a second driver needs of a [`VirtualGpu`] (issue 15: tinygrad's
//! AM driver through the `barebell-model-ffi` bridge): the SOC blocks
//! barebell's bring-up does not drive, one refusal log, the discovery
//! table where the IFWI leaves it, and doorbell stores through the NBIO
//! aperture.

use super::{Files, Gfx11};
use crate::discovery::PartIps;
use crate::error::ModelError;
use crate::parts::Part;
use crate::psp::PspModel;
use crate::soc::RefusalLog;
use crate::socblocks::{SocBlocks, SocError, SocHooks};
use crate::{SimClock, smu};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::ip::Generation;
use barebell_facts::Fact;
use core::sync::atomic::Ordering;

/// `offsetof(struct common_firmware_header, ucode_version)`: where every
/// amdgpu blob says its version (for the SMU blob, the PMFW version
/// `GetSmuVersion` reports).
pub const UCODE_VERSION_AT: usize = 16;

pub const FACTS: &[Fact] = &[Fact::offset(
    "amdgpu_ucode.h",
    "struct common_firmware_header",
    "ucode_version",
    UCODE_VERSION_AT,
)];

/// The SOC blocks of `part`, on the PSP's state.
pub(super) fn soc_blocks(
    clock: &SimClock,
    d: &PartIps<'_>,
    generation: Generation,
    part: &Part,
    files: Files<'_>,
    psp: &Arc<PspModel>,
    gpu_reset: Box<dyn Fn() + Send + Sync>,
) -> Result<SocBlocks, ModelError> {
    let smu_file = part.firmware.smu;
    let blob = files.read(smu_file)?;
    let version = blob
        .get(UCODE_VERSION_AT..UCODE_VERSION_AT + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| ModelError::BlobLacks {
            name: smu_file.into(),
            what: "common_firmware_header (ucode_version)",
        })?;
    let dpm = match generation {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(ModelError::NotImplemented(barebell::ip::Unsupported::new(
                "the SMU 13.0.6 DPM tables",
                generation,
            )));
        }
        Generation::Gfx11 => smu::DpmTables::navi31(),
        Generation::Gfx12 => smu::DpmTables::navi48(),
    };
    let (p1, p2, p3) = (psp.clone(), psp.clone(), psp.clone());
    let hooks = SocHooks {
        smu_loaded: Box::new(move || p1.smu_loaded()),
        autoload_complete: Arc::new(move || p2.autoload_complete()),
        psp_reset: Box::new(move || p3.mode1_reset()),
        gpu_reset,
    };
    SocBlocks::new(clock, d, generation, version, dpm, hooks).map_err(|e| match e {
        SocError::MissingIp(ip) => ModelError::MissingIp { ip },
        SocError::Unplaceable { block, version } => ModelError::Unsupported {
            what: block,
            version,
        },
    })
}

impl Gfx11 {
    /// The SOC blocks: SMU, IH, SDMA, clock gating and scratch, S2A.
    pub fn soc(&self) -> &SocBlocks {
        &self.soc
    }

    /// The refusal log the SOC blocks and the register router share.
    pub fn refusal_log(&self) -> &Arc<RefusalLog> {
        &self.soc.log
    }

    /// Strict mode: an access no block model knows is refused rather
    /// than kept as plain storage.
    pub fn set_strict(&self, on: bool) {
        self.soc.log.set_strict(on);
    }

    /// Every refusal so far, as text, from every block model: the SOC
    /// blocks and the router, the PSP, the MEC, the NBIO's dropped
    /// doorbells. Counted from the start; a caller keeps its own cursor.
    pub fn refusals(&self) -> Vec<String> {
        use alloc::format;
        let mut out: Vec<String> = self.soc.log.all().iter().map(|r| format!("{r}")).collect();
        out.extend(self.psp.refusals().iter().map(|r| format!("PSP: {r}")));
        out.extend(self.mec.events().iter().filter_map(|e| match e {
            crate::mec::MecEvent::Refused {
                me,
                pipe,
                queue,
                why,
            } => Some(format!(
                "MEC: HQD me {me} pipe {pipe} queue {queue} refused: {why:?}"
            )),
            _ => None,
        }));
        out
    }

    /// A host store of `value` to the doorbell at `byte_offset` of BAR2.
    /// It rings only while the NBIO's doorbell aperture is open
    /// (`RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN`); otherwise it is dropped and
    /// the reason returned.
    pub fn doorbell_write(&self, byte_offset: u64, value: u64) -> Result<(), String> {
        use alloc::format;
        let slots = self.doorbells.0.len() as u64;
        if !byte_offset.is_multiple_of(8) || byte_offset / 8 >= slots {
            return Err(format!(
                "doorbell store at BAR2 byte {byte_offset:#x}: outside the model's {:#x}-byte \
                 doorbell page or not 64-bit aligned",
                slots * 8
            ));
        }
        let index = (byte_offset / 8) as u32;
        match self.nbio.doorbell_write(index, value) {
            crate::nbio::DoorbellOutcome::Rang => {
                if let Some(slot) = self.doorbells.0.get(index as usize) {
                    slot.store(value, Ordering::Release);
                }
                Ok(())
            }
            crate::nbio::DoorbellOutcome::Dropped => Err(format!(
                "doorbell store at BAR2 byte {byte_offset:#x} dropped: the NBIO doorbell \
                 aperture is closed (RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN)"
            )),
        }
    }

    /// BAR2's length in bytes (the model's doorbell page).
    pub fn doorbell_bytes(&self) -> usize {
        core::mem::size_of_val(&self.doorbells.0)
    }
}

/// Where each refusal list stood: the SOC log, the PSP's, the MEC's.
pub type RefusalMark = [usize; 3];

impl Gfx11 {
    fn mec_refusals(&self) -> Vec<String> {
        use alloc::format;
        self.mec
            .events()
            .iter()
            .filter_map(|e| match e {
                crate::mec::MecEvent::Refused {
                    me,
                    pipe,
                    queue,
                    why,
                } => Some(format!(
                    "MEC: HQD me {me} pipe {pipe} queue {queue} refused: {why:?}"
                )),
                _ => None,
            })
            .collect()
    }

    /// How long each refusal list is now (cheap: for a caller that
    /// checks after every access).
    pub fn refusal_mark(&self) -> RefusalMark {
        [
            self.soc.log.len(),
            self.psp.refusals().len(),
            self.mec_refusals().len(),
        ]
    }

    /// The refusals logged after `mark`.
    pub fn refusals_since(&self, mark: RefusalMark) -> Vec<String> {
        use alloc::format;
        let mut out: Vec<String> = self
            .soc
            .log
            .since(mark[0])
            .iter()
            .map(|r| format!("{r}"))
            .collect();
        out.extend(
            self.psp
                .refusals()
                .iter()
                .skip(mark[1])
                .map(|r| format!("PSP: {r}")),
        );
        out.extend(self.mec_refusals().into_iter().skip(mark[2]));
        out
    }

    /// What a second driver's boot left in the model, one fact a line:
    /// MEC HQDs activated, SMU messages answered, SDMA, IH rings, S2A.
    pub fn am_status(&self) -> String {
        use alloc::format;
        use core::fmt::Write;
        let mut s = String::new();
        let running = self.mec.running_pipes();
        let _ = writeln!(
            s,
            "MEC: pipes running {:#06b} (CP_MEC_RS64_CNTL {:#010x})",
            running,
            self.mec.mec_cntl()
        );
        for h in self.mec.active_hqds() {
            let (me, pipe, queue) = h.slot;
            let cp = self.mec.cp();
            let packets = cp
                .pm4_stats(h.cp_queue)
                .map(|p| {
                    format!(
                        ", {} packets executed, rptr {:#x}{}",
                        p.packets,
                        p.rptr,
                        if p.halted { ", halted" } else { "" }
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "MEC: HQD me {me} pipe {pipe} queue {queue} active ({}, VMID {}, doorbell dword {:#x}) on a {} MEC pipe{packets}",
                if h.aql { "AQL" } else { "PM4" },
                h.vmid,
                h.doorbell_dword,
                if h.pipe_running { "started" } else { "stopped" },
            );
        }
        for e in self.mec.cp().errors() {
            let _ = writeln!(s, "CP: {e}");
        }
        {
            let cp = self.mec.cp();
            let t = cp.shader.totals;
            if cp.shader.dispatches > 0 {
                let _ = writeln!(
                    s,
                    "CP: shader engines ran {} dispatches ({} workgroups, {} waves, {} instructions)",
                    cp.shader.dispatches, t.workgroups, t.waves, t.instructions
                );
            }
        }
        let answered = self
            .soc
            .smu
            .events()
            .iter()
            .filter(|e| matches!(e, smu::SmuEvent::Answered { .. }))
            .count();
        let _ = writeln!(
            s,
            "SMU: {answered} messages answered, features {}",
            if self.soc.smu.features_enabled() {
                "enabled"
            } else {
                "off"
            }
        );
        let _ = writeln!(
            s,
            "SDMA0: {}{}",
            if self.soc.sdma.running() {
                "running"
            } else {
                "halted"
            },
            self.soc
                .sdma
                .queue()
                .map(|q| format!(", queue 0 ring {:#x} ({:#x} bytes)", q.ring, q.bytes))
                .unwrap_or_default()
        );
        let st = self.soc.sdma.stats();
        if st.doorbells > 0 || self.soc.sdma.stopped().is_some() {
            let _ = writeln!(
                s,
                "SDMA0: {} doorbells, {} packets, {} fences{}",
                st.doorbells,
                st.packets,
                st.fences,
                self.soc
                    .sdma
                    .stopped()
                    .map(|x| format!(", stopped: {x:?}"))
                    .unwrap_or_default()
            );
        }
        for r in self.soc.ih.rings() {
            let _ = writeln!(
                s,
                "IH: ring {} at {:#x} ({:#x} bytes)",
                r.ring, r.base, r.bytes
            );
        }
        let _ = writeln!(s, "S2A: {} doorbell ports", self.soc.s2a.ports().len());
        let _ = writeln!(
            s,
            "PSP: sOS {}, SMU firmware {}, RLC autoload {}",
            if self.psp.sos_running() {
                "running"
            } else {
                "not running"
            },
            if self.psp.smu_loaded() {
                "loaded"
            } else {
                "not loaded"
            },
            if self.psp.autoload_complete() {
                "complete"
            } else {
                "not complete"
            }
        );
        s
    }
}
