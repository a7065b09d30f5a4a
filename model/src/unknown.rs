//! Registers no block model knows.
//!
//! The BAR5 router hands every register to the block model that owns it
//! and, for historical reasons, the rest to the MEC model's flat storage.
//! That storage would take anything: a driver writing a register the
//! model has never heard of would see it "work". So every access that no
//! block claims is logged here, named as precisely as the model can (the
//! discovery table tells which IP segment the offset falls in, so the
//! line names the IP, the segment and the dword offset to look up in that
//! IP's `*_offset.h`), and in strict mode it is refused: not stored, read
//! as 0, and reported by the bridge as an error.

use crate::discovery::PartIps;
use crate::soc::RefusalLog;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::ip::hw_id;
use spin::Mutex;

/// One IP segment: name, instance, segment index, base (dwords).
#[derive(Debug, Clone, Copy)]
struct Segment {
    ip: &'static str,
    instance: u8,
    seg: usize,
    base: u32,
}

/// `soc15_hw_ip.h` names of the ids the model's tables use.
fn ip_name(id: u16) -> &'static str {
    match id {
        hw_id::MP1 => "MP1",
        hw_id::GC => "GC",
        hw_id::MMHUB => "MMHUB",
        hw_id::ATHUB => "ATHUB",
        hw_id::OSSSYS => "OSSSYS",
        hw_id::HDP => "HDP",
        hw_id::SDMA0 => "SDMA",
        hw_id::NBIF => "NBIO",
        hw_id::UMC => "UMC",
        hw_id::MP0 => "MP0",
        12 => "VCN",
        271 => "DMU",
        _ => "IP",
    }
}

/// The log of unclaimed accesses.
#[derive(Debug)]
pub struct UnknownRegisters {
    log: Arc<RefusalLog>,
    segments: Vec<Segment>,
    seen: Mutex<BTreeSet<usize>>,
}

impl UnknownRegisters {
    pub fn new(d: &PartIps<'_>, log: Arc<RefusalLog>) -> Self {
        let mut segments = Vec::new();
        d.for_each_ip(|ip| {
            let n = usize::from(ip.num_bases).min(ip.bases.0.len());
            for (seg, base) in ip.bases.0.iter().take(n).enumerate() {
                segments.push(Segment {
                    ip: ip_name(ip.hw_id),
                    instance: ip.instance,
                    seg,
                    base: *base,
                });
            }
        });
        UnknownRegisters {
            log,
            segments,
            seen: Mutex::new(BTreeSet::new()),
        }
    }

    /// Where `byte_offset` falls: the segment with the highest base at or
    /// below it (the reading of a register offset `SOC15_REG_OFFSET`
    /// makes), e.g. `GC segment 1 + 0x4c00`.
    pub fn describe(&self, byte_offset: usize) -> String {
        let dword = (byte_offset / 4) as u64;
        let best = self
            .segments
            .iter()
            .filter(|s| u64::from(s.base) <= dword)
            .max_by_key(|s| s.base);
        match best {
            Some(s) => format!(
                "BAR5 byte {byte_offset:#x} ({}{} segment {} + dword {:#x})",
                s.ip,
                if s.instance > 0 {
                    format!(" instance {}", s.instance)
                } else {
                    String::new()
                },
                s.seg,
                dword - u64::from(s.base)
            ),
            None => format!("BAR5 byte {byte_offset:#x}"),
        }
    }

    /// Logs an access to `byte_offset` (a write of `value`, or a read)
    /// that no block claimed; true when it must be refused (strict mode).
    /// Outside strict mode each offset is logged once.
    pub fn refuse(&self, byte_offset: usize, value: Option<u32>) -> bool {
        let strict = self.log.strict();
        let first = {
            let mut seen = self.seen.lock();
            // The set of offsets seen is capped as every log is
            // (`crate::log::LOG_CAP`): past it, nothing new is logged.
            seen.len() < crate::log::LOG_CAP && seen.insert(byte_offset)
        };
        if strict || first {
            let what = match value {
                Some(v) => format!("write of {v:#x} to"),
                None => String::from("read of"),
            };
            self.log.push(
                "BAR5",
                format!(
                    "{what} {}: no block model knows this register{}",
                    self.describe(byte_offset),
                    if strict {
                        " (refused: strict mode)"
                    } else {
                        " (kept as plain storage)"
                    }
                ),
            );
        }
        strict
    }

    /// Every offset logged so far.
    pub fn offsets(&self) -> BTreeSet<usize> {
        self.seen.lock().clone()
    }
}
