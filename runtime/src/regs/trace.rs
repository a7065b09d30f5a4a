//! A symbolic trace of register accesses.
//!
//! Bring-up is a long conversation in mailbox registers; a raw list of
//! byte offsets is unreadable, and the names are already here in the
//! register modules. [`TraceBus`] wraps any [`RegisterBus`], resolves each
//! access to a register name through a [`Symbols`] table built from the
//! modules' `ALL` lists and the discovered bases, and hands the access to
//! a callback. It adds no state to the device path: the wrapped bus sees
//! exactly the accesses it would have seen.

use super::{IpBases, Reg};
use crate::bus::RegisterBus;
use core::cell::RefCell;

/// Register lists with the bases of the IP instance they belong to.
#[derive(Debug, Clone, Copy)]
pub struct Symbols<'a> {
    pub blocks: &'a [(&'static [Reg], IpBases)],
}

impl Symbols<'_> {
    /// The register at `byte_offset`, if any listed one is there.
    pub fn name(&self, byte_offset: usize) -> Option<&'static str> {
        self.blocks.iter().find_map(|(regs, bases)| {
            regs.iter()
                .find(|r| r.byte_offset(bases) == Some(byte_offset))
                .map(|r| r.name)
        })
    }
}

/// One traced access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub write: bool,
    pub byte_offset: usize,
    pub value: u32,
    pub name: Option<&'static str>,
}

impl core::fmt::Display for Access {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let dir = if self.write { "W" } else { "R" };
        match self.name {
            Some(n) => write!(f, "{dir} {n} = {:#010x}", self.value),
            None => write!(f, "{dir} [{:#x}] = {:#010x}", self.byte_offset, self.value),
        }
    }
}

/// A [`RegisterBus`] that reports every access to `sink`.
pub struct TraceBus<'a, B: RegisterBus + ?Sized, F: FnMut(Access)> {
    inner: &'a B,
    symbols: Symbols<'a>,
    sink: RefCell<F>,
}

impl<B: RegisterBus + ?Sized, F: FnMut(Access)> core::fmt::Debug for TraceBus<'_, B, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TraceBus").finish_non_exhaustive()
    }
}

impl<'a, B: RegisterBus + ?Sized, F: FnMut(Access)> TraceBus<'a, B, F> {
    pub fn new(inner: &'a B, symbols: Symbols<'a>, sink: F) -> Self {
        TraceBus {
            inner,
            symbols,
            sink: RefCell::new(sink),
        }
    }

    fn emit(&self, write: bool, byte_offset: usize, value: u32) {
        let a = Access {
            write,
            byte_offset,
            value,
            name: self.symbols.name(byte_offset),
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
        let bases = IpBases([0x16000, 0, 0, 0, 0, 0, 0, 0]);
        let blocks = [(super::super::mp_13_0_0::ALL, bases)];
        let sym = Symbols { blocks: &blocks };
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
        assert!(w.write);
        assert_eq!(w.value, 0x8_0000);
        assert_eq!(seen[1].unwrap().name, None);
    }
}
