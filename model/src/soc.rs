//! What the SOC block models share: a register store with reset values
//! and names, and the refusal log the [`crate::VirtualGpu`] reports from.
//!
//! The blocks ([`crate::smu`], [`crate::ih`], [`crate::sdma`],
//! [`crate::power`], [`crate::s2a`]) are the parts of the GPU that
//! tinygrad's AM driver drives and barebell's bring-up does not
//! (`docs/am-boot.md` §2). Each answers only the registers of its own
//! table ([`crate::socregs`]); each register reads its reset value until
//! written: the `*_default.h` value where Linux 6.12 ships one (GC
//! 11.0.0), else a **model value** said at the register (Linux 6.12 has
//! no default header for GC 12, OSSSYS, HDP, MMHUB or NBIO).
//! [`crate::socblocks`] builds the blocks of one GPU.
//!
//! A refusal is an access the model will not take: a sequence the public
//! sources say the hardware does not accept, or a register no block
//! model knows. Refusals are logged with the register's name and the
//! reason; in strict mode ([`RefusalLog::set_strict`]) the bridge turns
//! the first one into an error the driver sees.

use crate::RegisterFile;
use crate::SimClock;
use crate::log::Keep;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::regs::{IpBases, Reg};
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;

/// One refused access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The block that refused (`"SMU"`, `"IH"`, `"BAR5"`, ...).
    pub block: &'static str,
    /// What was refused and why, naming the register and the source.
    pub why: String,
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.block, self.why)
    }
}

/// The refusals of every SOC block and of the register router, in order,
/// shared by them.
#[derive(Debug, Default)]
pub struct RefusalLog {
    entries: Mutex<Vec<Refusal>>,
    strict: AtomicBool,
}

impl RefusalLog {
    pub fn new() -> Self {
        RefusalLog::default()
    }

    pub fn push(&self, block: &'static str, why: String) {
        self.entries.lock().keep(Refusal { block, why });
    }

    /// Strict mode: refused accesses are not carried out (the bridge
    /// reports them to the driver as errors). Outside strict mode they
    /// are logged and carried out as plain storage.
    pub fn set_strict(&self, on: bool) {
        self.strict.store(on, Ordering::Relaxed);
    }

    pub fn strict(&self) -> bool {
        self.strict.load(Ordering::Relaxed)
    }

    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Refusals from the `from`-th on.
    pub fn since(&self, from: usize) -> Vec<Refusal> {
        self.entries
            .lock()
            .get(from..)
            .map(<[Refusal]>::to_vec)
            .unwrap_or_default()
    }

    pub fn all(&self) -> Vec<Refusal> {
        self.since(0)
    }
}

/// A register of a block: its name and reset value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub reg: Reg,
    pub reset: u32,
}

/// Registers by byte offset, each with its reset value, over a
/// [`RegisterFile`] (so accesses cost simulated time as everywhere else).
#[derive(Debug)]
pub struct RegStore {
    slots: BTreeMap<usize, Slot>,
    file: RegisterFile,
}

impl RegStore {
    /// The registers `regs` (with their reset values) placed on `bases`;
    /// a register whose segment has no base is left out and named in the
    /// returned list.
    pub fn new(
        clock: &SimClock,
        bases: &IpBases,
        regs: &[(Reg, u32)],
    ) -> (Self, Vec<&'static str>) {
        let file = RegisterFile::new(clock);
        let mut slots = BTreeMap::new();
        let mut missing = Vec::new();
        for (reg, reset) in regs {
            match reg.byte_offset(bases) {
                Some(o) => {
                    file.device_set(o, *reset);
                    slots.insert(
                        o,
                        Slot {
                            reg: *reg,
                            reset: *reset,
                        },
                    );
                }
                None => missing.push(reg.name),
            }
        }
        (RegStore { slots, file }, missing)
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        self.slots.keys().copied().collect()
    }

    pub fn slot(&self, byte_offset: usize) -> Option<Slot> {
        self.slots.get(&byte_offset).copied()
    }

    /// The byte offset of the register named `name`.
    pub fn at(&self, name: &str) -> Option<usize> {
        self.slots
            .iter()
            .find(|(_, s)| s.reg.name == name)
            .map(|(o, _)| *o)
    }

    pub fn name(&self, byte_offset: usize) -> &'static str {
        self.slot(byte_offset).map_or("?", |s| s.reg.name)
    }

    /// The value the device holds (no bus access).
    pub fn get(&self, byte_offset: usize) -> u32 {
        self.file.device_get(byte_offset)
    }

    /// The device changes a register (no bus access).
    pub fn set(&self, byte_offset: usize, value: u32) {
        self.file.device_set(byte_offset, value);
    }

    /// Every register back to its reset value.
    pub fn reset(&self) {
        for (o, s) in &self.slots {
            self.file.device_set(*o, s.reset);
        }
    }

    /// A host read (costs simulated time).
    pub fn host_read(&self, byte_offset: usize) -> u32 {
        self.file.read32(byte_offset)
    }

    /// A host write (costs simulated time).
    pub fn host_write(&self, byte_offset: usize, value: u32) {
        self.file.write32(byte_offset, value)
    }

    pub fn unplug(&self) {
        self.file.unplug();
    }
}

/// `value`'s field `mask`, shifted down.
pub fn field(value: u32, mask: u32) -> u32 {
    if mask == 0 {
        return 0;
    }
    (value & mask) >> mask.trailing_zeros()
}
