//! `--perfetto FILE`: a run as a Chrome trace-event JSON file, which the
//! Perfetto UI (ui.perfetto.dev, "Open trace file") and `chrome://tracing`
//! load.
//!
//! The format is the JSON object form of Google's "Trace Event Format"
//! document: `{"traceEvents": [...], "displayTimeUnit": "ns"}`, each event
//! with `name`, `cat`, `ph`, `ts` (microseconds, fractional), `pid`, `tid`
//! and `args`. barebell writes three kinds: complete events (`"ph": "X"`,
//! with `dur`) for steps and phases, instant events (`"ph": "i"`, scope
//! `"t"`) for register accesses and other points, and metadata events
//! (`"ph": "M"`) naming the process and its tracks.

use barebell::bus::trace::Access;
use barebell_bringup::{Sink, Step};
use serde_json::{Value, json};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::path::Path;

/// Track (thread id) of step and phase slices.
pub const STEPS: u32 = 1;
/// Track of register accesses.
pub const REGISTERS: u32 = 2;
/// Track of samples (one slice per submission, `latency`).
pub const SAMPLES: u32 = 3;

/// Events collected in memory, written once at the end.
#[derive(Debug, Default)]
pub struct Trace {
    events: Vec<Value>,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl Trace {
    /// A trace whose process is called `process`, with named tracks.
    pub fn new(process: &str) -> Self {
        let mut t = Trace::default();
        t.events.push(json!({
            "name": "process_name", "ph": "M", "pid": 1, "tid": 0,
            "args": {"name": process},
        }));
        for (tid, name) in [
            (STEPS, "steps"),
            (REGISTERS, "registers"),
            (SAMPLES, "samples"),
        ] {
            t.events.push(json!({
                "name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                "args": {"name": name},
            }));
        }
        t
    }

    /// A slice from `start_ns` lasting `dur_ns` on track `tid`.
    pub fn slice(
        &mut self,
        tid: u32,
        name: &str,
        cat: &str,
        start_ns: u64,
        dur_ns: u64,
        args: Value,
    ) {
        self.events.push(json!({
            "name": name, "cat": cat, "ph": "X", "pid": 1, "tid": tid,
            "ts": us(start_ns), "dur": us(dur_ns), "args": args,
        }));
    }

    /// A point at `at_ns` on track `tid`.
    pub fn instant(&mut self, tid: u32, name: &str, cat: &str, at_ns: u64, args: Value) {
        self.events.push(json!({
            "name": name, "cat": cat, "ph": "i", "s": "t", "pid": 1, "tid": tid,
            "ts": us(at_ns), "args": args,
        }));
    }

    /// Writes the file (whole, through a temporary file renamed over it,
    /// so a reader never sees half a trace).
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let doc = json!({"traceEvents": self.events, "displayTimeUnit": "ns"});
        let text = serde_json::to_string(&doc).map_err(|e| format!("--perfetto: {e}"))?;
        let tmp = path.with_extension("tmp-perfetto");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| format!("--perfetto {}: {e}", path.display()))
    }
}

/// A bring-up sink that forwards everything to `inner` and records each
/// step as a slice (from the previous step's last line to its own last
/// line: a step reports once its work is done), each step line as an
/// instant, and every register access as an instant on the registers
/// track. It asks for the register trace, and forwards accesses to
/// `inner` only when `inner` asks for them.
pub struct PerfettoSink<'a> {
    inner: &'a dyn Sink,
    trace: RefCell<Trace>,
    start: std::time::Instant,
    /// The open step: its name and when it began.
    open: Cell<Option<(Step, u64)>>,
    /// When the last step line was reported.
    last_ns: Cell<u64>,
    accesses: Cell<u64>,
}

impl<'a> PerfettoSink<'a> {
    pub fn new(inner: &'a dyn Sink, process: &str) -> Self {
        PerfettoSink {
            inner,
            trace: RefCell::new(Trace::new(process)),
            start: std::time::Instant::now(),
            open: Cell::new(None),
            last_ns: Cell::new(0),
            accesses: Cell::new(0),
        }
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn close(&self, end_ns: u64) {
        if let Some((step, begin)) = self.open.take() {
            self.trace.borrow_mut().slice(
                STEPS,
                step.name(),
                "step",
                begin,
                end_ns.saturating_sub(begin),
                json!({}),
            );
        }
    }

    /// Closes the last step and writes the file; returns the number of
    /// register accesses recorded.
    pub fn finish(&self, path: &Path) -> Result<u64, String> {
        self.close(self.last_ns.get());
        self.trace.borrow().write(path)?;
        Ok(self.accesses.get())
    }
}

impl Sink for PerfettoSink<'_> {
    fn step(&self, step: Step, detail: fmt::Arguments<'_>) {
        let detail = detail.to_string();
        self.inner.step(step, format_args!("{detail}"));
        let now = self.now_ns();
        match self.open.get() {
            Some((open, _)) if open == step => {}
            _ => {
                let begin = self.last_ns.get();
                self.close(begin);
                self.open.set(Some((step, begin)));
            }
        }
        self.last_ns.set(now);
        self.trace.borrow_mut().instant(
            STEPS,
            step.name(),
            "step line",
            now,
            json!({"detail": detail}),
        );
    }
    fn tracing(&self) -> bool {
        true
    }
    fn access(&self, a: Access) {
        if self.inner.tracing() {
            self.inner.access(a);
        }
        self.accesses.set(self.accesses.get() + 1);
        let at = self.now_ns();
        let name = match (a.block, a.name) {
            (Some(b), Some(n)) => format!("{} {b}.{n}", if a.write { "W" } else { "R" }),
            (None, Some(n)) => format!("{} {n}", if a.write { "W" } else { "R" }),
            (_, None) => format!("{} [{:#x}]", if a.write { "W" } else { "R" }, a.byte_offset),
        };
        self.trace.borrow_mut().instant(
            REGISTERS,
            &name,
            if a.write { "write" } else { "read" },
            at,
            json!({"offset": format!("{:#x}", a.byte_offset), "value": format!("{:#010x}", a.value)}),
        );
    }
    fn wall_ns(&self) -> Option<u64> {
        self.inner.wall_ns()
    }
    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
    fn fault(&self, f: &barebell::gmc::hub::VmFault) {
        self.inner.fault(f);
        let at = self.now_ns();
        self.trace.borrow_mut().instant(
            STEPS,
            "VM fault",
            "fault",
            at,
            json!({"fault": f.to_string()}),
        );
    }
    fn interrupt(&self, i: &barebell::ih::Interrupt) {
        self.inner.interrupt(i);
        let at = self.now_ns();
        self.trace.borrow_mut().instant(
            STEPS,
            "interrupt",
            "interrupt",
            at,
            json!({"interrupt": i.to_string()}),
        );
    }
}
