//! `barebell bringup --report FILE`: a JSON account of one bring-up that a
//! user with a card can send back. The same code runs for every target
//! (the model, `--vfio`, `--sysfs`): it records what the one bring-up
//! reported through its [`Sink`] (each step, every register access by
//! name, latched VM faults, the interrupts decoded from the IH ring, the
//! teardown stages), then adds what the
//! device said about itself (the discovery table's IP list, the firmware
//! files it needed with their header versions) and the teardown's result.
//! The format is documented in `docs/hardware.md` ("The bring-up
//! report") and checked by `cli/tests/report_cli.rs`.

use barebell::bus::trace::Access;
use barebell::gmc::hub::VmFault;
use barebell_bringup::discovery::Ips;
use barebell_bringup::{
    BringupError, FirmwareSet, FirmwareSource, Outcome, Sink, Step, TeardownReport,
};
use serde::Serialize;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::path::Path;

/// The report's `format` value; a reader checks it before anything else.
pub const FORMAT: &str = "barebell-bringup-report/1";

/// A sink that forwards to the CLI's text sink and keeps everything for
/// the report. It always asks for the register trace, and forwards each
/// access only when the text sink asks for it (`--trace`).
pub struct Recorder<'a> {
    text: &'a dyn Sink,
    steps: RefCell<Vec<StepRecord>>,
    trace: RefCell<Vec<String>>,
    faults: RefCell<Vec<FaultRecord>>,
    interrupts: RefCell<Vec<InterruptRecord>>,
    last_ns: Cell<u64>,
}

impl<'a> Recorder<'a> {
    pub fn new(text: &'a dyn Sink) -> Self {
        Recorder {
            text,
            steps: RefCell::default(),
            trace: RefCell::default(),
            faults: RefCell::default(),
            interrupts: RefCell::default(),
            last_ns: Cell::new(0),
        }
    }
}

impl Sink for Recorder<'_> {
    fn step(&self, step: Step, detail: fmt::Arguments<'_>) {
        let detail = detail.to_string();
        self.text.step(step, format_args!("{detail}"));
        let at_ns = self.text.wall_ns().unwrap_or(0);
        let since = at_ns.saturating_sub(self.last_ns.replace(at_ns));
        self.steps.borrow_mut().push(StepRecord {
            step: step.name(),
            detail,
            at_ns,
            since_previous_ns: since,
        });
    }
    fn tracing(&self) -> bool {
        true
    }
    fn access(&self, a: Access) {
        if self.text.tracing() {
            self.text.access(a);
        }
        self.trace.borrow_mut().push(a.to_string());
    }
    fn wall_ns(&self) -> Option<u64> {
        self.text.wall_ns()
    }
    fn cancelled(&self) -> bool {
        self.text.cancelled()
    }
    fn fault(&self, f: &VmFault) {
        self.text.fault(f);
        self.faults.borrow_mut().push(FaultRecord::from(f));
    }
    fn interrupt(&self, i: &barebell::ih::Interrupt) {
        self.text.interrupt(i);
        self.interrupts.borrow_mut().push(InterruptRecord::from(i));
    }
}

/// An interrupt decoded from the IH ring (`barebell::ih::Interrupt`):
/// a VM fault with its address, VMID, hub and direction, or an SQ
/// interrupt with its kind, VMID and queue (ME/pipe/queue), and the line
/// that says it.
#[derive(Debug, Serialize)]
pub struct InterruptRecord {
    /// `vm_fault`, `sq` or `other`.
    pub kind: &'static str,
    pub vmid: u8,
    pub pasid: u16,
    /// VM faults: `GFXHUB` or `MMHUB`, the page address, write, retry.
    pub hub: Option<&'static str>,
    pub address: Option<String>,
    pub write: Option<bool>,
    pub retry: Option<bool>,
    /// SQ interrupts: `illegal_instruction`, `memory_violation`, `error`,
    /// `wave` or `auto`, and the queue.
    pub sq: Option<&'static str>,
    pub me: Option<u8>,
    pub pipe: Option<u8>,
    pub queue: Option<u8>,
    pub text: String,
}

impl From<&barebell::ih::Interrupt> for InterruptRecord {
    fn from(i: &barebell::ih::Interrupt) -> Self {
        use barebell::ih::{FaultHub, Interrupt, SqKind};
        let mut r = InterruptRecord {
            kind: "other",
            vmid: 0,
            pasid: 0,
            hub: None,
            address: None,
            write: None,
            retry: None,
            sq: None,
            me: None,
            pipe: None,
            queue: None,
            text: i.to_string(),
        };
        match i {
            Interrupt::VmFault(f) => {
                r.kind = "vm_fault";
                r.vmid = f.vmid;
                r.pasid = f.pasid;
                r.hub = Some(match f.hub {
                    FaultHub::Gfx => "GFXHUB",
                    FaultHub::Mm => "MMHUB",
                });
                r.address = Some(format!("{:#x}", f.addr));
                r.write = Some(f.write);
                r.retry = Some(f.retry);
            }
            Interrupt::Sq(s) => {
                r.kind = "sq";
                r.vmid = s.vmid;
                r.pasid = s.pasid;
                r.sq = Some(match s.kind {
                    SqKind::IllegalInstruction => "illegal_instruction",
                    SqKind::MemoryViolation => "memory_violation",
                    SqKind::Error { .. } => "error",
                    SqKind::Wave => "wave",
                    SqKind::Auto => "auto",
                });
                r.me = Some(s.me);
                r.pipe = Some(s.pipe);
                r.queue = Some(s.queue);
            }
            Interrupt::Other(e) => {
                r.vmid = e.vmid;
                r.pasid = e.pasid;
            }
        }
        r
    }
}

/// One `Sink::step` report: the line the CLI prints, and when.
#[derive(Debug, Serialize)]
pub struct StepRecord {
    pub step: &'static str,
    pub detail: String,
    /// Host wall time since the bring-up started, when the step reported.
    pub at_ns: u64,
    /// Wall time since the previous report (for the first, since start):
    /// the step's duration when it reports once, at its end.
    pub since_previous_ns: u64,
}

/// A latched VM fault, decoded (`VmFault`), and the line that says it.
#[derive(Debug, Serialize)]
pub struct FaultRecord {
    pub hub: &'static str,
    pub address: String,
    pub vmid: u8,
    pub client_id: u16,
    pub write: bool,
    pub atomic: bool,
    pub permission_faults: u8,
    pub walker_error: u8,
    pub mapping_error: bool,
    pub status: String,
    pub text: String,
}

impl From<&VmFault> for FaultRecord {
    fn from(f: &VmFault) -> Self {
        FaultRecord {
            hub: f.hub,
            address: format!("{:#x}", f.addr),
            vmid: f.vmid,
            client_id: f.cid,
            write: f.write,
            atomic: f.atomic,
            permission_faults: f.permission_faults,
            walker_error: f.walker_error,
            mapping_error: f.mapping_error,
            status: format!("{:#010x}", f.status),
            text: f.to_string(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub format: &'static str,
    /// barebell's version (the CLI crate's).
    pub barebell: &'static str,
    /// The command line, as given.
    pub command: Vec<String>,
    pub target: TargetRecord,
    pub outcome: OutcomeRecord,
    /// The discovery table as parsed (absent if the bring-up failed
    /// before it or in it).
    pub discovery: Option<DiscoveryRecord>,
    /// The firmware files the discovered IP versions need, with what
    /// each file's common header says.
    pub firmware: Vec<FirmwareRecord>,
    pub steps: Vec<StepRecord>,
    /// Every register access from the start of the bring-up to the end of
    /// the teardown, as `--trace` prints them.
    pub trace: Vec<String>,
    pub faults: Vec<FaultRecord>,
    /// Interrupts decoded from the IH ring when the teardown began.
    pub interrupts: Vec<InterruptRecord>,
    /// What the start step found on the device and did (absent if the
    /// bring-up failed before it or in it).
    pub start: Option<StartRecord>,
    pub teardown: Option<TeardownRecord>,
    /// On the model only: `VirtualGpu::quiescent()` after the teardown.
    pub model_check: Option<String>,
}

/// The start-of-day state (`barebell_bringup::start::StartReport`).
#[derive(Debug, Serialize)]
pub struct StartRecord {
    /// `clean`, `left by another driver`, `left by barebell`, `malformed`.
    pub state: &'static str,
    /// The state with its detail, as the step line says it.
    pub detail: String,
    /// `full bring-up`, `mode-1 reset, ...`, `partial re-init ...`.
    pub action: &'static str,
    pub sos_alive: bool,
    /// PMFW's version as `GetSmuVersion` answered before a reset.
    pub smu_version: Option<String>,
    pub scratch_reg7: String,
    pub scratch_reg6: String,
    /// How long the mode-1 reset took (platform clock).
    pub reset_ns: Option<u64>,
    /// On the model with `--start`: the state the model was left in.
    pub model_prepared: Option<String>,
}

impl StartRecord {
    pub fn new(r: &barebell_bringup::start::StartReport, prepared: Option<String>) -> Self {
        StartRecord {
            state: r.state.name(),
            detail: r.state.to_string(),
            action: r.action.name(),
            sos_alive: r.sos_alive,
            smu_version: r.smu_version.map(|v| format!("{v:#010x}")),
            scratch_reg7: format!("{:#010x}", r.scratch7),
            scratch_reg6: format!("{:#x}", r.scratch6),
            reset_ns: r.reset_ns,
            model_prepared: prepared,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct TargetRecord {
    pub name: String,
    pub description: String,
}

#[derive(Debug, Serialize)]
pub struct OutcomeRecord {
    pub ok: bool,
    /// The step the error names (absent on success).
    pub failed_step: Option<&'static str>,
    pub error: Option<String>,
    /// The signal that stopped the run, if one did.
    pub interrupted_by: Option<&'static str>,
}

#[derive(Debug, Serialize)]
pub struct DiscoveryRecord {
    pub vram_bytes: u64,
    pub table_at: String,
    pub read_through: &'static str,
    pub generation: &'static str,
    pub ips: Vec<IpRecord>,
}

#[derive(Debug, Serialize)]
pub struct IpRecord {
    pub hw_id: u16,
    pub die: u16,
    pub instance: u8,
    pub version: String,
    pub harvest: u8,
    /// Register segment bases in dwords, as the table gives them.
    pub bases: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct FirmwareRecord {
    pub file: String,
    /// Size in bytes, or absent if the file could not be read.
    pub bytes: Option<usize>,
    /// `common_firmware_header.ucode_version` and `header_version`.
    pub ucode_version: Option<String>,
    pub header_version: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct TeardownRecord {
    pub complete: bool,
    pub stages: Vec<StageRecord>,
}

#[derive(Debug, Serialize)]
pub struct StageRecord {
    pub stage: &'static str,
    /// `done`, `not needed`, `not done` or `failed`.
    pub outcome: &'static str,
    pub detail: String,
}

fn discovery(ips: &Ips) -> DiscoveryRecord {
    DiscoveryRecord {
        vram_bytes: ips.vram_bytes,
        table_at: format!("{:#x}", ips.table_at),
        read_through: ips.read_through,
        generation: ips.generation.name(),
        ips: ips
            .all
            .iter()
            .map(|i| {
                let (a, b, c) = i.version.triple();
                IpRecord {
                    hw_id: i.hw_id,
                    die: i.die,
                    instance: i.instance,
                    version: format!("{a}.{b}.{c}"),
                    harvest: i.harvest,
                    bases: i
                        .bases
                        .0
                        .iter()
                        .take(usize::from(i.num_bases))
                        .map(|b| format!("{b:#x}"))
                        .collect(),
                }
            })
            .collect(),
    }
}

pub(crate) fn firmware(ips: &Ips, fw: &dyn FirmwareSource) -> Vec<FirmwareRecord> {
    let set = FirmwareSet::for_versions(
        ips.mp0.version.triple(),
        ips.mp1.version.triple(),
        ips.gc.version.triple(),
        ips.sdma0.map(|s| s.version.triple()),
    );
    let Some(set) = set else {
        return Vec::new();
    };
    let mut files = vec![set.sos, set.smu];
    files.extend(set.gfx);
    files
        .into_iter()
        .map(|file| match fw.load(&file) {
            Ok(bytes) => {
                let c = barebell_firmware_if::ucode::Container::parse(&bytes);
                FirmwareRecord {
                    bytes: Some(bytes.len()),
                    ucode_version: c
                        .as_ref()
                        .ok()
                        .map(|c| format!("{:#x}", c.header().ucode_version.get())),
                    header_version: c.as_ref().ok().map(|c| {
                        let (maj, min) = c.header_version();
                        format!("{maj}.{min}")
                    }),
                    error: c.err().map(|e| e.to_string()),
                    file,
                }
            }
            Err(e) => FirmwareRecord {
                file,
                bytes: None,
                ucode_version: None,
                header_version: None,
                error: Some(e.to_string()),
            },
        })
        .collect()
}

fn teardown(t: &TeardownReport) -> TeardownRecord {
    TeardownRecord {
        complete: t.complete(),
        stages: t
            .stages
            .iter()
            .map(|(s, o)| StageRecord {
                stage: s.name(),
                outcome: match o {
                    Outcome::Done(_) => "done",
                    Outcome::NotNeeded(_) => "not needed",
                    Outcome::Unavailable(_) => "not done",
                    Outcome::Failed(_) => "failed",
                },
                detail: match o {
                    Outcome::Done(d) => d.clone(),
                    Outcome::NotNeeded(w) | Outcome::Unavailable(w) => (*w).to_string(),
                    Outcome::Failed(e) => e.to_string(),
                },
            })
            .collect(),
    }
}

/// What the bring-up left for the report: the discovered IPs (after a
/// successful run) and how it ended.
pub struct Ending<'e> {
    pub ips: Option<&'e Ips>,
    pub start: Option<StartRecord>,
    pub teardown: Option<&'e TeardownReport>,
    pub error: Option<&'e BringupError>,
    pub interrupted_by: Option<&'static str>,
    pub model_check: Option<String>,
}

impl Recorder<'_> {
    /// The report, from what was recorded and how the run ended.
    pub fn report(&self, target: TargetRecord, fw: &dyn FirmwareSource, end: Ending<'_>) -> Report {
        let ok = end.error.is_none() && end.teardown.is_some_and(TeardownReport::complete);
        Report {
            format: FORMAT,
            barebell: env!("CARGO_PKG_VERSION"),
            command: std::env::args().collect(),
            target,
            outcome: OutcomeRecord {
                ok,
                failed_step: end.error.map(|e| e.step.name()),
                error: match end.error {
                    Some(e) => Some(e.to_string()),
                    None if !ok => Some("the teardown was incomplete".into()),
                    None => None,
                },
                interrupted_by: end.interrupted_by,
            },
            discovery: end.ips.map(discovery),
            firmware: end.ips.map(|i| firmware(i, fw)).unwrap_or_default(),
            steps: self.steps.take(),
            trace: self.trace.take(),
            faults: self.faults.take(),
            interrupts: self.interrupts.take(),
            start: end.start,
            teardown: end.teardown.map(teardown),
            model_check: end.model_check,
        }
    }
}

/// The report of a run whose device could not be opened: nothing ran.
pub fn unopened(name: String, error: &str) -> Report {
    Report {
        format: FORMAT,
        barebell: env!("CARGO_PKG_VERSION"),
        command: std::env::args().collect(),
        target: TargetRecord {
            name,
            description: "not opened".into(),
        },
        outcome: OutcomeRecord {
            ok: false,
            failed_step: Some(Step::Open.name()),
            error: Some(error.to_string()),
            interrupted_by: None,
        },
        discovery: None,
        firmware: Vec::new(),
        steps: Vec::new(),
        trace: Vec::new(),
        faults: Vec::new(),
        interrupts: Vec::new(),
        start: None,
        teardown: None,
        model_check: None,
    }
}

/// Writes `report` to `path` as pretty JSON.
pub fn write(path: &Path, report: &Report) -> Result<(), String> {
    let text =
        serde_json::to_string_pretty(report).map_err(|e| format!("serialising the report: {e}"))?;
    std::fs::write(path, text + "\n")
        .map_err(|e| format!("writing the report to {}: {e}", path.display()))
}
