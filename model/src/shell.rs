//! A device that is only its discovery table: what the model is of a part
//! whose blocks it does not have yet (GC 9.4.3: MI300X, MI308X).
//!
//! [`DiscoveryShell`] answers the boot registers `amdgpu_discovery.c`
//! reads before any IP base is known (the IFWI-done bit, the VRAM size,
//! the `MM_INDEX`/`MM_DATA` window) from a [`VramWindow`] holding the
//! part's table, so the runtime's discovery step runs on it exactly as on
//! a card. Every other register access is recorded as one the shell does
//! not model (reads return 0): a bring-up that goes past discovery on a
//! shell is a bug the record shows, and the bring-up stops before that
//! anyway, at the first step with no implementation for the part's
//! generation.

use crate::SimClock;
use crate::discovery::{self, VramWindow};
use crate::parts::Part;
use crate::vgpu::{DMA_BUS, DOORBELL_BUS, HOST_READ_NS, HostMemory, REGS_BYTES};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::platform::{Aperture, DMA_CHUNK, DmaRegion, Platform};
use barebell::time::Clock;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The boot registers' byte offsets ([`discovery::MM_INDEX`] …).
const BOOT: [usize; 5] = [
    discovery::MM_INDEX,
    discovery::MM_DATA,
    discovery::MM_INDEX_HI,
    discovery::RCC_CONFIG_MEMSIZE,
    discovery::MP0_SMN_C2PMSG_33,
];

/// BAR5 of a shell: the boot registers, and a record of everything else.
#[derive(Debug)]
pub struct ShellBar {
    window: VramWindow,
    unmodelled: spin::Mutex<Vec<(bool, usize)>>,
}

impl RegisterBus for ShellBar {
    fn read32(&self, byte_offset: usize) -> u32 {
        if BOOT.contains(&byte_offset) {
            return self.window.read32(byte_offset);
        }
        self.unmodelled.lock().push((false, byte_offset));
        0
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        if BOOT.contains(&byte_offset) {
            return self.window.write32(byte_offset, value);
        }
        self.unmodelled.lock().push((true, byte_offset));
    }
}

/// A part's discovery table behind the boot registers, and nothing else.
pub struct DiscoveryShell {
    part: Part,
    name: String,
    bar5: ShellBar,
    memory: HostMemory,
    chunk_bus: Vec<u64>,
    doorbells: Box<[AtomicU64; 512]>,
    host_clock: crate::clock::HostClock,
    claimed: AtomicBool,
    /// `PCI_COMMAND` bus master, the one config bit a shell keeps.
    bus_master: AtomicBool,
}

impl core::fmt::Debug for DiscoveryShell {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DiscoveryShell")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl DiscoveryShell {
    /// `part`'s table (built by [`discovery::build`]) 64 KiB below the top
    /// of its VRAM, over `memory` (BAR0 and the DMA region).
    pub fn new(part: Part, memory: HostMemory) -> Self {
        let clock = SimClock::new();
        let (table, _) = discovery::build(&part.firmware.desc);
        let window = VramWindow::new(&clock, part.firmware.vram_mib, table);
        let (_, _, _, dma_len) = memory.regions();
        let chunk_bus = (0..dma_len / DMA_CHUNK)
            .map(|i| DMA_BUS + (i * DMA_CHUNK) as u64)
            .collect();
        DiscoveryShell {
            name: alloc::format!("model {} (discovery only)", part.name),
            part,
            bar5: ShellBar {
                window,
                unmodelled: spin::Mutex::new(Vec::new()),
            },
            memory,
            chunk_bus,
            doorbells: Box::new([const { AtomicU64::new(0) }; 512]),
            host_clock: clock.host_view(HOST_READ_NS),
            claimed: AtomicBool::new(false),
            bus_master: AtomicBool::new(false),
        }
    }

    pub fn part(&self) -> &Part {
        &self.part
    }

    /// Register accesses outside the boot registers, `(write, byte
    /// offset)`, in order: none if the bring-up stopped where it should.
    pub fn unmodelled(&self) -> Vec<(bool, usize)> {
        self.bar5.unmodelled.lock().clone()
    }
}

// SAFETY: `regs` is one access per call (a plain function of the shell's
// state); VRAM and the DMA region are the `HostMemory` the shell owns
// (valid, writable, used by nothing else, kept until the shell drops);
// the doorbell page is boxed (it does not move) and only ever accessed
// through atomics by whoever stores to it.
unsafe impl Platform for DiscoveryShell {
    fn regs(&self) -> &dyn RegisterBus {
        &self.bar5
    }
    fn regs_len(&self) -> usize {
        REGS_BYTES
    }
    fn vram(&self) -> Aperture {
        let (vram, vram_len, _, _) = self.memory.regions();
        Aperture {
            host: vram,
            len: vram_len,
        }
    }
    fn doorbells(&self) -> Aperture {
        Aperture {
            host: NonNull::from(&*self.doorbells).cast(),
            len: core::mem::size_of::<[AtomicU64; 512]>(),
        }
    }
    fn doorbell_bus(&self) -> u64 {
        DOORBELL_BUS
    }
    fn dma(&self) -> DmaRegion<'_> {
        let (_, _, dma, dma_len) = self.memory.regions();
        DmaRegion {
            host: dma,
            len: dma_len,
            chunk_bus: &self.chunk_bus,
        }
    }
    fn clock(&self) -> &dyn Clock {
        &self.host_clock
    }
    fn pause(&self) {}
    fn name(&self) -> &str {
        &self.name
    }
    fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::AcqRel)
    }
    fn set_bus_master(&self, on: bool) -> bool {
        self.bus_master.store(on, Ordering::Release);
        true
    }
}
