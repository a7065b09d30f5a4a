//! Names for every register access the tables can name.
//!
//! The bring-up names an access from the register lists its own steps
//! use; `barebell regs` knows every register of Linux's headers for the
//! IP versions discovery reports (`barebell_catalog::regdb`). This sink
//! sits in front of the others: once discovery has reported the device's
//! IP instances it builds the offset → name map for them, gives each
//! unnamed access its table name, forwards it, and counts what stayed
//! unnamed (no header declares a register at that offset).

use barebell::bus::trace::Access;
use barebell::discovery::IpInfo;
use barebell_bringup::{Sink, Step};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;

pub struct NamingSink<'a> {
    inner: &'a dyn Sink,
    names: RefCell<HashMap<usize, (&'static str, &'static str)>>,
    total: Cell<u64>,
    unnamed: Cell<u64>,
    /// Discovered blocks with no register table (`GC 9.4.3`), once.
    untabled: RefCell<Vec<String>>,
}

impl<'a> NamingSink<'a> {
    pub fn new(inner: &'a dyn Sink) -> Self {
        NamingSink {
            inner,
            names: RefCell::default(),
            total: Cell::new(0),
            unnamed: Cell::new(0),
            untabled: RefCell::default(),
        }
    }

    /// Accesses traced, and how many of them no table names.
    pub fn counts(&self) -> (u64, u64) {
        (self.total.get(), self.unnamed.get())
    }

    /// The discovered blocks barebell has no register table for.
    pub fn untabled(&self) -> Vec<String> {
        self.untabled.borrow().clone()
    }
}

impl Sink for NamingSink<'_> {
    fn step(&self, step: Step, detail: fmt::Arguments<'_>) {
        self.inner.step(step, detail);
    }
    fn tracing(&self) -> bool {
        self.inner.tracing()
    }
    fn access(&self, mut a: Access) {
        if a.name.is_none()
            && let Some(&(block, name)) = self.names.borrow().get(&a.byte_offset)
        {
            a.block = Some(block);
            a.name = Some(name);
        }
        self.total.set(self.total.get() + 1);
        if a.name.is_none() {
            self.unnamed.set(self.unnamed.get() + 1);
        }
        self.inner.access(a);
    }
    fn wall_ns(&self) -> Option<u64> {
        self.inner.wall_ns()
    }
    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
    fn fault(&self, f: &barebell::gmc::hub::VmFault) {
        self.inner.fault(f);
    }
    fn interrupt(&self, i: &barebell::ih::Interrupt) {
        self.inner.interrupt(i);
    }
    fn discovered(&self, ips: &[IpInfo]) {
        if self.inner.tracing() {
            *self.names.borrow_mut() =
                barebell_catalog::regdb::names_by_offset(ips, barebell_bringup::nbio::ip_name);
            let mut missing: Vec<String> = ips
                .iter()
                .filter(|i| {
                    barebell_catalog::regdb::table_for(i.hw_id, i.version.triple()).is_none()
                })
                .map(|i| {
                    let (a, b, c) = i.version.triple();
                    match barebell_bringup::nbio::ip_name(i.hw_id) {
                        "IP" => format!("hw_id {} {a}.{b}.{c}", i.hw_id),
                        name => format!("{name} {a}.{b}.{c}"),
                    }
                })
                .collect();
            missing.sort();
            missing.dedup();
            *self.untabled.borrow_mut() = missing;
        }
        self.inner.discovered(ips);
    }
}
