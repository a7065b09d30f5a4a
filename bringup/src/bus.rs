//! The register bus the steps share: the platform's BAR5, the NBIO's
//! RSMU index/data pair for registers past it (once the NBIO is known),
//! and the symbolic trace for the sink.

use crate::sink::Sink;
use alloc::rc::Rc;
use alloc::vec::Vec;
use barebell::bus::trace::{Access, NamedSymbols};
use barebell::bus::{Block, IndirectBus, RegisterBus};
use barebell::platform::Platform;
use barebell::regs::{IpBases, Reg};

enum Path<'p> {
    Direct(&'p dyn RegisterBus),
    Indirect(IndirectBus<&'p dyn RegisterBus>),
}

struct Inner<'p> {
    path: Path<'p>,
    symbols: Vec<(&'static str, &'static [Reg], IpBases)>,
    sink: &'p dyn Sink,
}

/// A cheap, shareable handle on the device's registers (every clone goes
/// through the same index/data lock). One thread: the bring-up and what
/// it hands back run on the caller's.
#[derive(Clone)]
pub struct Bus<'p>(Rc<Inner<'p>>);

impl core::fmt::Debug for Bus<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let how = match self.0.path {
            Path::Direct(_) => "direct",
            Path::Indirect(_) => "direct + RSMU index/data",
        };
        f.debug_struct("Bus").field("path", &how).finish()
    }
}

impl<'p> Bus<'p> {
    /// BAR5 only, naming the boot registers discovery reads.
    pub fn direct(p: &'p dyn Platform, sink: &'p dyn Sink) -> Self {
        let symbols = alloc::vec![("BOOT", barebell::discovery::boot::ALL, IpBases::default())];
        Bus(Rc::new(Inner {
            path: Path::Direct(p.regs()),
            symbols,
            sink,
        }))
    }

    /// BAR5 and, past its end, the index/data pair; `symbols` name the
    /// registers of every discovered block for the trace.
    pub fn indirect(
        bus: IndirectBus<&'p dyn RegisterBus>,
        symbols: Vec<(&'static str, &'static [Reg], IpBases)>,
        sink: &'p dyn Sink,
    ) -> Self {
        Bus(Rc::new(Inner {
            path: Path::Indirect(bus),
            symbols,
            sink,
        }))
    }

    /// One IP instance's registers on this bus.
    pub fn block(&self, bases: IpBases) -> Block<'_, Self> {
        Block::new(self, bases)
    }

    fn trace(&self, write: bool, byte_offset: usize, value: u32) {
        let i = &self.0;
        if !i.sink.tracing() {
            return;
        }
        let found = NamedSymbols { blocks: &i.symbols }.lookup(byte_offset);
        i.sink.access(Access {
            write,
            byte_offset,
            value,
            name: found.map(|(_, r)| r.name),
            block: found.map(|(b, _)| b),
        });
    }
}

impl RegisterBus for Bus<'_> {
    fn read32(&self, byte_offset: usize) -> u32 {
        let v = match &self.0.path {
            Path::Direct(b) => b.read32(byte_offset),
            Path::Indirect(b) => b.read32(byte_offset),
        };
        self.trace(false, byte_offset, v);
        v
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.trace(true, byte_offset, value);
        match &self.0.path {
            Path::Direct(b) => b.write32(byte_offset, value),
            Path::Indirect(b) => b.write32(byte_offset, value),
        }
    }
}

/// What the runtime's firmware waits call between looks at a fence: the
/// platform's pause (a spin on hardware; the firmware models' turn on the
/// model).
#[derive(Clone, Copy)]
pub struct Pauser<'p>(pub &'p dyn Platform);

impl barebell::time::Pause for Pauser<'_> {
    fn pause(&mut self) {
        self.0.pause()
    }
}

impl core::fmt::Debug for Pauser<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Pauser").field(&self.0.name()).finish()
    }
}

/// The platform's clock as the runtime's firmware clients take it.
pub type ClockRef<'p> = &'p dyn barebell::time::Clock;
