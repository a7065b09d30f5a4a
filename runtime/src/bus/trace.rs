//! A symbolic trace of register accesses.
//!
//! Bring-up is a long conversation in mailbox registers; a raw list of
//! byte offsets is unreadable, and the names are already here in the
//! register modules. [`TraceBus`] wraps any [`RegisterBus`], resolves each
//! access to a register name through a [`Symbols`] table built from the
//! modules' `ALL` lists and the discovered bases, and hands the access to
//! a callback. It adds no state to the device path: the wrapped bus sees
//! exactly the accesses it would have seen.
//!
//! Two sinks exist: the CLI prints each [`Access`] with its `Display`
//! form, and with the `defmt` feature [`defmt_sink`] sends each one as a
//! defmt frame, which is how the unikernel traces with no formatter in
//! the image (the host decodes the frames against the ELF's string
//! table). Blocks can carry an IP name ([`Symbols::named`]), so a frame
//! says which block a register belongs to, not only its name.

use crate::bus::RegisterBus;
use crate::regs::{IpBases, Reg};
use core::cell::RefCell;

/// Register lists with the bases of the IP instance they belong to.
#[derive(Debug, Clone, Copy)]
pub struct Symbols<'a> {
    pub blocks: &'a [(&'static [Reg], IpBases)],
}

impl Symbols<'_> {
    /// The register at `byte_offset`, if any listed one is there.
    pub fn name(&self, byte_offset: usize) -> Option<&'static str> {
        find(self.blocks.iter().map(|(r, b)| (*r, b)), byte_offset).map(|r| r.name)
    }
}

/// Like [`Symbols`], with each block's IP name (e.g. `"MP0"`), so a trace
/// says which block a register belongs to.
#[derive(Debug, Clone, Copy)]
pub struct NamedSymbols<'a> {
    pub blocks: &'a [(&'static str, &'static [Reg], IpBases)],
}

impl NamedSymbols<'_> {
    /// The block name and register at `byte_offset`.
    pub fn lookup(&self, byte_offset: usize) -> Option<(&'static str, Reg)> {
        self.blocks.iter().find_map(|(name, regs, bases)| {
            find(core::iter::once((*regs, bases)), byte_offset).map(|r| (*name, r))
        })
    }
}

fn find<'b>(
    mut blocks: impl Iterator<Item = (&'static [Reg], &'b IpBases)>,
    byte_offset: usize,
) -> Option<Reg> {
    blocks.find_map(|(regs, bases)| {
        regs.iter()
            .find(|r| r.byte_offset(bases) == Some(byte_offset))
            .copied()
    })
}

/// Either kind of symbol table, as [`TraceBus::new`] takes it.
#[derive(Debug, Clone, Copy)]
pub enum SymbolTable<'a> {
    Plain(Symbols<'a>),
    Named(NamedSymbols<'a>),
}

impl SymbolTable<'_> {
    /// Block name (if the table has names) and register name.
    fn lookup(&self, byte_offset: usize) -> (Option<&'static str>, Option<&'static str>) {
        match self {
            SymbolTable::Plain(s) => (None, s.name(byte_offset)),
            SymbolTable::Named(s) => match s.lookup(byte_offset) {
                Some((b, r)) => (Some(b), Some(r.name)),
                None => (None, None),
            },
        }
    }
}

impl<'a> From<Symbols<'a>> for SymbolTable<'a> {
    fn from(s: Symbols<'a>) -> Self {
        SymbolTable::Plain(s)
    }
}

impl<'a> From<NamedSymbols<'a>> for SymbolTable<'a> {
    fn from(s: NamedSymbols<'a>) -> Self {
        SymbolTable::Named(s)
    }
}

/// One traced access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub write: bool,
    pub byte_offset: usize,
    pub value: u32,
    pub name: Option<&'static str>,
    /// The IP block the register was found in, if the symbols name it.
    pub block: Option<&'static str>,
}

/// `W GC.CP_HQD_ACTIVE @0xc82c = 0x00000001`: direction, block and
/// register where known, BAR5 byte offset, value (the same text the defmt
/// frames decode to).
impl core::fmt::Display for Access {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let dir = if self.write { "W" } else { "R" };
        let (at, v) = (self.byte_offset, self.value);
        match (self.block, self.name) {
            (Some(b), Some(n)) => write!(f, "{dir} {b}.{n} @{at:#x} = {v:#010x}"),
            (None, Some(n)) => write!(f, "{dir} {n} @{at:#x} = {v:#010x}"),
            (_, None) => write!(f, "{dir} [{at:#x}] = {v:#010x}"),
        }
    }
}

/// The same text as `Display` (block prefixed when known, and the byte
/// offset always shown), built by the host decoder from the frame's
/// arguments: the image sends the interned format string's index, the
/// name strings and the two integers, and formats nothing.
#[cfg(feature = "defmt")]
impl defmt::Format for Access {
    fn format(&self, f: defmt::Formatter<'_>) {
        let dir = if self.write { "W" } else { "R" };
        match (self.block, self.name) {
            (Some(b), Some(n)) => defmt::write!(
                f,
                "{=str} {=str}.{=str} @{=usize:#x} = {=u32:#010x}",
                dir,
                b,
                n,
                self.byte_offset,
                self.value
            ),
            (None, Some(n)) => defmt::write!(
                f,
                "{=str} {=str} @{=usize:#x} = {=u32:#010x}",
                dir,
                n,
                self.byte_offset,
                self.value
            ),
            (_, None) => defmt::write!(
                f,
                "{=str} [{=usize:#x}] = {=u32:#010x}",
                dir,
                self.byte_offset,
                self.value
            ),
        }
    }
}

/// A sink for [`TraceBus`] that sends each access as one defmt frame at
/// `info` level (`TRACE <access>`). It needs a `#[defmt::global_logger]`
/// in the final binary, as every defmt user does.
#[cfg(feature = "defmt")]
pub fn defmt_sink(a: Access) {
    defmt::info!("TRACE {}", a);
}

/// A [`RegisterBus`] that reports every access to `sink`.
pub struct TraceBus<'a, B: RegisterBus + ?Sized, F: FnMut(Access)> {
    inner: &'a B,
    symbols: SymbolTable<'a>,
    sink: RefCell<F>,
}

impl<B: RegisterBus + ?Sized, F: FnMut(Access)> core::fmt::Debug for TraceBus<'_, B, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TraceBus").finish_non_exhaustive()
    }
}

impl<'a, B: RegisterBus + ?Sized, F: FnMut(Access)> TraceBus<'a, B, F> {
    /// `symbols`: a [`Symbols`] or a [`NamedSymbols`].
    pub fn new(inner: &'a B, symbols: impl Into<SymbolTable<'a>>, sink: F) -> Self {
        TraceBus {
            inner,
            symbols: symbols.into(),
            sink: RefCell::new(sink),
        }
    }

    fn emit(&self, write: bool, byte_offset: usize, value: u32) {
        let (block, name) = self.symbols.lookup(byte_offset);
        let a = Access {
            write,
            byte_offset,
            value,
            name,
            block,
        };
        // A sink that re-enters the bus would find it borrowed; such an
        // access is simply not traced rather than panicking.
        if let Ok(mut s) = self.sink.try_borrow_mut() {
            (s)(a);
        }
    }
}

impl<B: RegisterBus + ?Sized, F: FnMut(Access)> RegisterBus for TraceBus<'_, B, F> {
    fn read32(&self, byte_offset: usize) -> u32 {
        let v = self.inner.read32(byte_offset);
        self.emit(false, byte_offset, v);
        v
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.inner.write32(byte_offset, value);
        self.emit(true, byte_offset, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    struct Echo(Cell<u32>);
    impl RegisterBus for Echo {
        fn read32(&self, _: usize) -> u32 {
            self.0.get()
        }
        fn write32(&self, _: usize, v: u32) {
            self.0.set(v)
        }
    }

    #[test]
    fn names_resolve_through_bases() {
        let bases = IpBases::new(&[0x16000, 0, 0, 0, 0, 0, 0, 0]);
        let blocks = [("MP0", crate::regs::mp_13_0_0::ALL, bases)];
        let sym = NamedSymbols { blocks: &blocks };
        let bus = Echo(Cell::new(0));
        let mut seen = [None; 2];
        let mut n = 0;
        {
            let t = TraceBus::new(&bus, sym, |a: Access| {
                if n < 2 {
                    seen[n] = Some(a);
                }
                n += 1;
            });
            t.write32((0x16000 + 0x63) * 4, 0x8_0000);
            t.read32(4);
        }
        let w = seen[0].unwrap();
        assert_eq!(w.name, Some("MP0_SMN_C2PMSG_35"));
        assert_eq!(w.block, Some("MP0"));
        assert!(w.write);
        assert_eq!(w.value, 0x8_0000);
        assert_eq!(seen[1].unwrap().name, None);
        assert_eq!(seen[1].unwrap().block, None);
    }

    #[test]
    fn unnamed_blocks_trace_without_a_block() {
        let bases = IpBases::new(&[0x16000, 0, 0, 0, 0, 0, 0, 0]);
        let blocks = [(crate::regs::mp_13_0_0::ALL, bases)];
        let sym = SymbolTable::from(Symbols { blocks: &blocks });
        assert_eq!(
            sym.lookup((0x16000 + 0x80) * 4),
            (None, Some("MP0_SMN_C2PMSG_64"))
        );
    }
}
