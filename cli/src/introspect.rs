//! Introspection for bring-up engineers, umr-style: `barebell regs
//! read|write`, `barebell queue dump`, `barebell ring decode`, and the
//! shell `barebell bringup --shell` runs them in.
//!
//! Registers are named as Linux spells them (`GC.CP_HQD_ACTIVE`) through
//! the generated tables of [`barebell_catalog::regdb`], placed with the bases
//! discovery read, and reached through the bring-up's register bus (BAR5,
//! and past it the RSMU index/data pair). Rings, IBs and MQDs are decoded
//! with the shared decoders (`barebell_decode`, which the model reads through too), never with the
//! runtime's encoders, so a decode is an independent reading of what the
//! runtime wrote.
//!
//! On the model every command first brings the model up (default mapping
//! `mes`), so there is a device state to look at; the shell keeps that
//! one model alive across commands. On a GPU (`--vfio`, `--sysfs`;
//! UNVERIFIED ON HARDWARE) `regs` runs discovery only (to place the
//! registers) and a write needs `--force`; `queue dump` and `ring decode
//! --queue` are refused there.

use crate::target::MappingArg;
use crate::target::{self, Hardware, TargetArgs};
use barebell::bus::RegisterBus;
use barebell::discovery::IpInfo;
use barebell::ip::Generation;
use barebell::regs::IpBases;
use barebell_bringup::{FirmwareDir, Gpu, Options, Quiet, Step};
use barebell_catalog::regdb::{self, RegDef};
use barebell_decode::mes_api;
use barebell_decode::mqd::{self, Hqd, MQD_BYTES, WINDOW_DWORDS, WINDOW_FIRST};
use barebell_decode::ring::{self, Packet};
use barebell_decode::sdma::SdmaGen;
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// What an introspection command can fail with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntroError {
    /// `BLOCK.REG[.FIELD]` did not parse.
    BadName {
        name: String,
    },
    UnknownBlock {
        block: String,
        known: String,
    },
    NoInstance {
        block: String,
        instance: u8,
        count: usize,
    },
    NoTable {
        block: String,
        version: (u8, u8, u8),
    },
    UnknownRegister {
        block: String,
        register: String,
    },
    UnknownField {
        register: String,
        field: String,
        known: String,
    },
    NoMatch {
        pattern: String,
    },
    /// These parts have one XCC.
    Xcc {
        xcc: u8,
        /// XCCs the device has.
        count: u32,
    },
    /// `--xcc` names a block that is not per XCC.
    XccBlock {
        block: String,
    },
    BadValue {
        text: String,
    },
    TooWide {
        what: String,
        value: u64,
        width: u32,
    },
    /// A write to a GPU without `--force`.
    NeedsForce {
        hw: Hardware,
    },
    /// Not built or not verified for a GPU.
    Unverified {
        what: &'static str,
        hw: Hardware,
    },
    /// The register cannot be placed (segment missing, offset overflow).
    Unplaceable {
        register: String,
    },
    /// Memory the command must read is outside the host-visible DMA region.
    Unreachable {
        what: &'static str,
        address: u64,
    },
    NoQueue {
        what: String,
    },
    Io {
        what: String,
    },
    Device {
        what: String,
    },
    /// A shell line that is not a command.
    Usage {
        text: String,
    },
}

impl std::fmt::Display for IntroError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use IntroError as E;
        match self {
            E::BadName { name } => write!(
                f,
                "`{name}`: expected BLOCK.REGISTER[.FIELD] (e.g. GC.CP_HQD_ACTIVE, MP0.MP0_SMN_C2PMSG_35)"
            ),
            E::UnknownBlock { block, known } => {
                write!(f, "no block {block} on this device (blocks: {known})")
            }
            E::NoInstance {
                block,
                instance,
                count,
            } => write!(
                f,
                "{block} has {count} instance(s) on this device; there is no instance {instance}"
            ),
            E::NoTable { block, version } => write!(
                f,
                "{block} {}.{}.{}: barebell has no register table for this version",
                version.0, version.1, version.2
            ),
            E::UnknownRegister { block, register } => {
                write!(f, "{block} has no register {register}")
            }
            E::UnknownField {
                register,
                field,
                known,
            } => write!(f, "{register} has no field {field} (fields: {known})"),
            E::NoMatch { pattern } => write!(f, "no register matches {pattern}"),
            E::Xcc { xcc, count: 1 } => write!(
                f,
                "XCC {xcc}: this part has one graphics complex (XCC 0 only)"
            ),
            E::Xcc { xcc, count } => write!(
                f,
                "XCC {xcc}: this part has {count} XCCs (--xcc 0 to {})",
                count - 1
            ),
            E::XccBlock { block } => write!(
                f,
                "--xcc selects a GC instance; {block} is not per XCC (use --instance)"
            ),
            E::BadValue { text } => write!(f, "`{text}` is not a number (decimal or 0x hex)"),
            E::TooWide { what, value, width } => {
                write!(f, "{value:#x} does not fit {what}'s {width} bit(s)")
            }
            E::NeedsForce { hw } => write!(
                f,
                "{hw}: writing a register of a real GPU needs --force (UNVERIFIED ON HARDWARE)"
            ),
            E::Unverified { what, hw } => write!(
                f,
                "{hw}: {what} is UNVERIFIED ON HARDWARE and not built for a GPU; run it on the model (the default)"
            ),
            E::Unplaceable { register } => write!(
                f,
                "{register}: its segment is not among the block's discovered bases"
            ),
            E::Unreachable { what, address } => write!(
                f,
                "{what} at {address:#x} is outside the host-visible DMA region; cannot read it"
            ),
            E::NoQueue { what } => write!(f, "{what}"),
            E::Io { what } | E::Device { what } | E::Usage { text: what } => write!(f, "{what}"),
        }
    }
}

impl std::error::Error for IntroError {}

type R<T> = Result<T, IntroError>;

/// GRBM / instance selection of a register access.
#[derive(Args, Debug, Clone, Default)]
pub struct Select {
    /// Which discovery instance of the block (e.g. SDMA0 instance 1).
    #[arg(long, default_value_t = 0)]
    pub instance: u8,
    /// Which XCC's GC (logical, `GET_INST(GC, xcc)`): 0 to 7 on mi300x,
    /// 0 to 3 on mi308x, 0 on the single-XCC parts.
    #[arg(long, default_value_t = 0)]
    pub xcc: u8,
    /// GRBM_GFX_CNTL.MEID of a banked GC register (1 = MEC, 3 = MES).
    #[arg(long)]
    pub me: Option<u8>,
    /// GRBM_GFX_CNTL.PIPEID.
    #[arg(long)]
    pub pipe: Option<u8>,
    /// GRBM_GFX_CNTL.QUEUEID.
    #[arg(long)]
    pub queue: Option<u8>,
    /// GRBM_GFX_CNTL.VMID (SH_MEM_* are banked per VMID).
    #[arg(long)]
    pub vmid: Option<u8>,
    /// GRBM_GFX_INDEX.SE_INDEX: one shader engine's copy of an SE-banked
    /// register (default: broadcast).
    #[arg(long)]
    pub se: Option<u8>,
    /// GRBM_GFX_INDEX.SH_INDEX (SA_INDEX from gfx11): one shader array's
    /// copy (default: broadcast).
    #[arg(long)]
    pub sh: Option<u8>,
}

impl Select {
    fn banked(&self) -> bool {
        self.me.is_some() || self.pipe.is_some() || self.queue.is_some() || self.vmid.is_some()
    }
    fn indexed(&self) -> bool {
        self.se.is_some() || self.sh.is_some()
    }
}

/// The device a command runs on (ignored in the shell, which has one).
#[derive(Args, Debug, Clone)]
pub struct DeviceArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// How the model's bring-up maps its user queue before the command
    /// runs (the model only). Default: the part's own scheduler, mes on
    /// navi31/navi48, hws on mi300x/mi308x.
    #[arg(long, value_enum)]
    pub mapping: Option<MappingArg>,
    #[arg(long, default_value = FirmwareDir::SYSTEM)]
    pub firmware_dir: PathBuf,
}

#[derive(Subcommand, Debug, Clone)]
pub enum RegsCmd {
    /// Read a register (fields decoded), one field, or every register a
    /// glob matches (`GC.CP_HQD_*`).
    Read {
        /// BLOCK.REGISTER[.FIELD], names as Linux spells them.
        name: String,
        #[command(flatten)]
        select: Select,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Write a register, or one field of it (read-modify-write).
    Write {
        name: String,
        /// Decimal or 0x hex.
        value: String,
        #[command(flatten)]
        select: Select,
        #[arg(long)]
        json: bool,
        /// Required to write a real GPU's registers.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// The register at a BAR5 byte offset, by the tables of the IP
    /// versions discovery reports (`regs name 0xc828`).
    Name {
        /// Byte offset, decimal or 0x hex (what `--trace` prints after @).
        address: String,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Every register whose name contains PATTERN, or matches it as a
    /// `*`/`?` glob (`regs list CP_HQD`), with its block and offsets.
    List {
        pattern: String,
        #[command(flatten)]
        device: DeviceArgs,
    },
}

#[derive(Subcommand, Debug, Clone)]
pub enum QueueCmd {
    /// Print every active compute HQD (MEC pipes and queues, selected
    /// through GRBM_GFX_CNTL), its MQD field by field beside the HQD
    /// registers, the ring pointers and doorbell, and whether MQD and HQD
    /// agree.
    Dump {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Shell only: take the bring-up's user queue off the device (KIQ
    /// UNMAP_QUEUES, MES REMOVE_QUEUE or a direct dequeue), so its
    /// packets can be decoded from the rings afterwards.
    Unmap {
        #[command(flatten)]
        device: DeviceArgs,
    },
}

/// What a ring or IB holds.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// From the queue (AQL_CONTROL, MES pipe) or the file's first packet.
    Auto,
    Aql,
    Pm4,
    Mes,
    /// SDMA packets (6.0 with `--gen gfx11`, 7.0 with `--gen gfx12`).
    Sdma,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenArg {
    Gfx11,
    Gfx12,
}

#[derive(Subcommand, Debug, Clone)]
pub enum RingCmd {
    /// Decode a ring or IB into named packets: from a file of raw bytes,
    /// or from a queue's ring (`--queue ME.PIPE.QUEUE`, or `user`).
    Decode {
        /// Raw little-endian bytes.
        file: Option<PathBuf>,
        /// ME.PIPE.QUEUE of an HQD (e.g. 1.0.2; 3.1.0 is the KIQ on gfx11),
        /// `mqd@ADDR` for the queue an MQD in memory describes (the MES
        /// ring, which the KIQ maps), or `user` for the bring-up's user
        /// queue.
        #[arg(long, conflicts_with = "file")]
        queue: Option<String>,
        #[arg(long, value_enum, default_value = "auto")]
        format: Format,
        /// MES API version (or SDMA engine: gfx11 = 6.0, gfx12 = 7.0) of a
        /// file's packets (a device knows its own).
        #[arg(long = "gen", value_enum, default_value = "gfx11")]
        generation: GenArg,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
}

#[derive(Subcommand, Debug, Clone)]
pub enum VmCmd {
    /// Walk a VA through a VMID's page tables as the hub's context
    /// registers and the tables in memory give it: every entry read, and
    /// the physical address or where the walk stopped.
    Walk {
        /// The virtual address, decimal or 0x hex.
        va: String,
        /// The VM context (0: the driver's; the bring-up's user queue runs
        /// in the process VMID `queue dump` shows).
        #[arg(long, default_value_t = 0)]
        vmid: u8,
        /// gfx: the GFXHUB (CP, shaders, MES); mm: the MMHUB (SDMA).
        #[arg(long, value_enum, default_value = "gfx")]
        hub: crate::vm_walk::Hub,
        /// The XCC whose GFXHUB, or the AID whose MMHUB (GC 9.4.3 parts).
        #[arg(long, default_value_t = 0)]
        instance: u8,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
}

/// One introspection command.
#[derive(Subcommand, Debug, Clone)]
pub enum Intro {
    /// Read or write registers by name.
    Regs {
        #[command(subcommand)]
        cmd: RegsCmd,
    },
    /// Dump the mapped compute queues.
    Queue {
        #[command(subcommand)]
        cmd: QueueCmd,
    },
    /// Decode rings and IBs.
    Ring {
        #[command(subcommand)]
        cmd: RingCmd,
    },
    /// Look at GPU virtual memory: page-table walks.
    Vm {
        #[command(subcommand)]
        cmd: VmCmd,
    },
}

impl Intro {
    fn device(&self) -> &DeviceArgs {
        match self {
            Intro::Regs {
                cmd:
                    RegsCmd::Read { device, .. }
                    | RegsCmd::Write { device, .. }
                    | RegsCmd::Name { device, .. }
                    | RegsCmd::List { device, .. },
            }
            | Intro::Queue {
                cmd: QueueCmd::Dump { device, .. } | QueueCmd::Unmap { device },
            }
            | Intro::Ring {
                cmd: RingCmd::Decode { device, .. },
            }
            | Intro::Vm {
                cmd: VmCmd::Walk { device, .. },
            } => device,
        }
    }
}

/// A brought-up device the commands look at.
pub struct Ctx<'a, 'p> {
    pub gpu: &'a Gpu<'p>,
    pub hw: Option<Hardware>,
}

/// Runs `cmd` as its own process: opens the device, brings it up as far
/// as the command needs, runs it, prints its output.
pub fn run(cmd: Intro) -> ExitCode {
    match run_inner(&cmd) {
        Ok(s) => {
            print!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("barebell: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(cmd: &Intro) -> R<String> {
    // A file decode needs no device.
    if let Intro::Ring {
        cmd:
            RingCmd::Decode {
                file: Some(path),
                format,
                generation,
                json,
                ..
            },
    } = cmd
    {
        let bytes = std::fs::read(path).map_err(|e| IntroError::Io {
            what: format!("reading {}: {e}", path.display()),
        })?;
        let g = match generation {
            GenArg::Gfx11 => Generation::Gfx11,
            GenArg::Gfx12 => Generation::Gfx12,
        };
        let f = if *format == Format::Auto {
            guess(&bytes)
        } else {
            *format
        };
        return Ok(render_packets(&decode(&bytes, f, g), f, *json));
    }
    let dev = cmd.device();
    let hw = dev.target.hardware();
    if let Some(hw) = hw {
        match cmd {
            Intro::Queue { .. } => {
                return Err(IntroError::Unverified {
                    what: "queue dump",
                    hw,
                });
            }
            Intro::Ring { .. } => {
                return Err(IntroError::Unverified {
                    what: "ring decode --queue",
                    hw,
                });
            }
            Intro::Vm { .. } => {
                return Err(IntroError::Unverified {
                    what: "vm walk",
                    hw,
                });
            }
            Intro::Regs {
                cmd: RegsCmd::Write { force: false, .. },
            } => return Err(IntroError::NeedsForce { hw }),
            Intro::Regs { .. } => {}
        }
    }
    // Refused before the device is touched.
    let part = dev.target.part;
    if hw.is_none()
        && let Intro::Regs {
            cmd: RegsCmd::Read { select, .. } | RegsCmd::Write { select, .. },
        } = cmd
    {
        let count = part.part().xcc.map_or(1, |x| x.xccs);
        if u32::from(select.xcc) >= count {
            return Err(IntroError::Xcc {
                xcc: select.xcc,
                count,
            });
        }
    }
    let mapping = part
        .check_mapping(
            dev.mapping
                .map_or_else(|| part.default_mapping(), Into::into),
        )
        .map_err(|text| IntroError::Usage { text })?;
    let fw = FirmwareDir(dev.firmware_dir.clone());
    let device = target::open(&dev.target, &fw, 1).map_err(|what| IntroError::Device { what })?;
    // On a GPU: discovery only (the bases), nothing programmed. On the
    // model: the whole bring-up, so there is state to look at.
    let opts = if hw.is_some() {
        Options {
            until: Step::Discovery,
            mapping: None,
            ..Options::default()
        }
    } else {
        Options {
            until: Step::Queue,
            mapping: Some(mapping),
            ..Options::default()
        }
    };
    let (out, report) = {
        let gpu = barebell_bringup::run(device.platform(), &fw, &opts, &Quiet).map_err(|e| {
            IntroError::Device {
                what: format!("{}: bring-up: {e}{}", device.name(), device.diagnostics()),
            }
        })?;
        let out = exec(cmd, &Ctx { gpu: &gpu, hw });
        // Every exit tears down (on a GPU, at least bus mastering off),
        // quietly: stdout is the command's answer; the teardown's outcome
        // and the model's check go to stderr.
        (out, gpu.shutdown())
    };
    let complete = report.complete();
    if complete {
        eprintln!("teardown complete");
    } else {
        eprintln!("teardown incomplete:\n{report}");
    }
    if let Some(q) = device.quiescence() {
        match q {
            Ok(()) => eprintln!("model check: {}", barebell_model::QUIESCENT),
            Err(why) => eprintln!("model check: NOT quiescent: {why}"),
        }
    }
    device.finish(complete);
    out
}

/// `regs name ADDR`: the register every discovered IP instance's table
/// places at that byte offset.
fn regs_name(ctx: &Ctx<'_, '_>, address: &str) -> R<String> {
    let at = usize::try_from(parse_value(address)?).map_err(|_| IntroError::BadValue {
        text: address.to_string(),
    })?;
    let mut hits = Vec::new();
    for ip in &ctx.gpu.ips.all {
        let Some(table) =
            regdb::table_for(ip.hw_id, ip.version.triple()).and_then(|t| regdb::load(t).ok())
        else {
            continue;
        };
        for r in &table.regs {
            if byte_offset(&ip.bases, r).ok() == Some(at) {
                let (a, b, c) = ip.version.triple();
                hits.push(format!(
                    "{at:#x} = {}.{}  ({} {a}.{b}.{c} instance {}, seg {} + {:#x})\n",
                    block_name(ip),
                    r.name,
                    block_name(ip),
                    ip.instance,
                    r.base_idx,
                    r.offset
                ));
            }
        }
    }
    hits.dedup();
    if hits.is_empty() {
        return Ok(format!(
            "{at:#x}: no register table of the device's IP versions names a register there\n"
        ));
    }
    Ok(hits.concat())
}

/// `regs list PATTERN`: registers of every discovered block whose name
/// contains PATTERN (case-insensitive) or matches it as a glob; each
/// block and version once (instance 0's offsets).
fn regs_list(ctx: &Ctx<'_, '_>, pattern: &str) -> R<String> {
    let upper = pattern.to_ascii_uppercase();
    let glob = pattern.contains(['*', '?']);
    let mut seen = Vec::new();
    let mut out = String::new();
    let mut n = 0usize;
    for ip in &ctx.gpu.ips.all {
        let key = (ip.hw_id, ip.version.triple());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let Some(table) =
            regdb::table_for(ip.hw_id, ip.version.triple()).and_then(|t| regdb::load(t).ok())
        else {
            continue;
        };
        for r in &table.regs {
            let hit = if glob {
                regdb::glob(pattern, &r.name)
            } else {
                r.name.contains(&upper)
            };
            if hit {
                n += 1;
                let at = byte_offset(&ip.bases, r)
                    .map_or_else(|_| "unplaced".to_string(), |b| format!("byte {b:#x}"));
                out.push_str(&format!(
                    "{}.{:<44} seg {} + {:#06x}  {at}\n",
                    block_name(ip),
                    r.name,
                    r.base_idx,
                    r.offset
                ));
            }
        }
    }
    out.push_str(&format!("{n} register(s) match `{pattern}`\n"));
    Ok(out)
}

/// Runs one command against a brought-up device.
pub fn exec(cmd: &Intro, ctx: &Ctx<'_, '_>) -> R<String> {
    match cmd {
        Intro::Regs {
            cmd: RegsCmd::Read {
                name, select, json, ..
            },
        } => regs_read(ctx, name, select, *json),
        Intro::Regs {
            cmd:
                RegsCmd::Write {
                    name,
                    value,
                    select,
                    json,
                    force,
                    ..
                },
        } => {
            if let (Some(hw), false) = (ctx.hw, force) {
                return Err(IntroError::NeedsForce { hw });
            }
            regs_write(ctx, name, value, select, *json)
        }
        Intro::Regs {
            cmd: RegsCmd::Name { address, .. },
        } => regs_name(ctx, address),
        Intro::Regs {
            cmd: RegsCmd::List { pattern, .. },
        } => regs_list(ctx, pattern),
        Intro::Queue {
            cmd: QueueCmd::Dump { json, .. },
        } => {
            if let Some(hw) = ctx.hw {
                return Err(IntroError::Unverified {
                    what: "queue dump",
                    hw,
                });
            }
            queue_dump(ctx, *json)
        }
        Intro::Queue {
            cmd: QueueCmd::Unmap { .. },
        } => Err(IntroError::Usage {
            text: "queue unmap runs in the shell (`barebell bringup --shell`), where the queue stays mapped".into(),
        }),
        Intro::Ring {
            cmd:
                RingCmd::Decode {
                    file,
                    queue,
                    format,
                    generation,
                    json,
                    ..
                },
        } => {
            if let Some(path) = file {
                let bytes = std::fs::read(path).map_err(|e| IntroError::Io {
                    what: format!("reading {}: {e}", path.display()),
                })?;
                let g = match generation {
                    GenArg::Gfx11 => Generation::Gfx11,
                    GenArg::Gfx12 => Generation::Gfx12,
                };
                let f = if *format == Format::Auto {
                    guess(&bytes)
                } else {
                    *format
                };
                return Ok(render_packets(&decode(&bytes, f, g), f, *json));
            }
            if let Some(hw) = ctx.hw {
                return Err(IntroError::Unverified {
                    what: "ring decode --queue",
                    hw,
                });
            }
            ring_from_queue(ctx, queue.as_deref().unwrap_or("user"), *format, *json)
        }
        Intro::Vm {
            cmd:
                VmCmd::Walk {
                    va,
                    vmid,
                    hub,
                    instance,
                    json,
                    ..
                },
        } => {
            if let Some(hw) = ctx.hw {
                return Err(IntroError::Unverified {
                    what: "vm walk",
                    hw,
                });
            }
            let r = crate::vm_walk::Request {
                hub: *hub,
                vmid: *vmid,
                va: parse_value(va)?,
                instance: *instance,
            };
            crate::vm_walk::run(ctx.gpu, &r, *json).map_err(|text| IntroError::Usage { text })
        }
    }
}

// ---------------------------------------------------------------- names

/// The IP name of a block, as traces print it.
fn block_name(ip: &IpInfo) -> &'static str {
    barebell_bringup::nbio::ip_name(ip.hw_id)
}

struct Resolved {
    ip: IpInfo,
    block: &'static str,
    table: &'static regdb::Parsed,
}

/// Logical XCC `xcc`'s GC instance (`GET_INST(GC, xcc)`), refused past
/// the device's XCCs.
fn xcc_gc(ctx: &Ctx<'_, '_>, xcc: u8) -> R<IpInfo> {
    let ips = &ctx.gpu.ips;
    let count = ips.topology.num_xcc().max(1);
    if u32::from(xcc) >= count {
        return Err(IntroError::Xcc { xcc, count });
    }
    if count == 1 {
        Some(ips.gc)
    } else {
        ips.xcc(usize::from(xcc))
    }
    .ok_or(IntroError::Xcc { xcc, count })
}

fn resolve_block(ctx: &Ctx<'_, '_>, block: &str, sel: &Select) -> R<Resolved> {
    if sel.xcc != 0 {
        if !block.eq_ignore_ascii_case("GC") {
            return Err(IntroError::XccBlock {
                block: block.to_uppercase(),
            });
        }
        let ip = xcc_gc(ctx, sel.xcc)?;
        let t = regdb::table_for(ip.hw_id, ip.version.triple()).ok_or(IntroError::NoTable {
            block: "GC".into(),
            version: ip.version.triple(),
        })?;
        let table = regdb::load(t).map_err(|e| IntroError::Device {
            what: e.to_string(),
        })?;
        return Ok(Resolved {
            ip,
            block: "GC",
            table,
        });
    }
    let all = &ctx.gpu.ips.all;
    let named: Vec<&IpInfo> = all
        .iter()
        .filter(|i| block_name(i).eq_ignore_ascii_case(block))
        .collect();
    if named.is_empty() {
        let mut known: Vec<&str> = all
            .iter()
            .filter(|i| regdb::table_for(i.hw_id, i.version.triple()).is_some())
            .map(block_name)
            .collect();
        known.dedup();
        return Err(IntroError::UnknownBlock {
            block: block.to_string(),
            known: known.join(", "),
        });
    }
    let ip = named
        .iter()
        .find(|i| i.instance == sel.instance)
        .copied()
        .ok_or(IntroError::NoInstance {
            block: block.to_uppercase(),
            instance: sel.instance,
            count: named.len(),
        })?;
    let t = regdb::table_for(ip.hw_id, ip.version.triple()).ok_or(IntroError::NoTable {
        block: block.to_uppercase(),
        version: ip.version.triple(),
    })?;
    let table = regdb::load(t).map_err(|e| IntroError::Device {
        what: e.to_string(),
    })?;
    Ok(Resolved {
        ip: *ip,
        block: block_name(ip),
        table,
    })
}

fn byte_offset(bases: &IpBases, r: &RegDef) -> R<usize> {
    barebell::regs::Reg {
        name: "",
        offset: r.offset,
        base_idx: r.base_idx,
    }
    .byte_offset(bases)
    .ok_or(IntroError::Unplaceable {
        register: r.name.clone(),
    })
}

fn parse_value(s: &str) -> R<u64> {
    let t = s.replace('_', "");
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    v.map_err(|_| IntroError::BadValue {
        text: s.to_string(),
    })
}

/// `GRBM_GFX_CNTL` and `GRBM_GFX_INDEX` of this GC, with the selection's
/// fields set; each register goes back to its default when dropped.
struct Grbm<'c, 'a, 'p> {
    ctx: &'c Ctx<'a, 'p>,
    restore: Vec<(usize, u32)>,
}

/// `value` placed in `reg`'s `field`, refused if it does not fit.
fn put_field(reg: &RegDef, field: &str, value: u32) -> R<u32> {
    let f = reg.field(field).ok_or(IntroError::UnknownField {
        register: reg.name.clone(),
        field: field.into(),
        known: String::new(),
    })?;
    if value >> f.width != 0 {
        return Err(IntroError::TooWide {
            what: format!("{}.{field}", reg.name),
            value: value.into(),
            width: f.width,
        });
    }
    Ok(value << f.shift)
}

/// `GRBM_GFX_INDEX` with one SE and SH/SA selected, broadcast to the
/// rest (`gfx_v11_0_select_se_sh()`, `gfx_v9_4_3_xcc_select_se_sh()`).
fn gfx_index(ctx: &Ctx<'_, '_>, reg: &RegDef, sel: &Select) -> R<u32> {
    // The SH field is SA_INDEX from gfx11, SH_INDEX on gfx9.
    let sh_name = if reg.field("SA_INDEX").is_some() {
        "SA"
    } else {
        "SH"
    };
    if let Some(info) = ctx.gpu.ips.gc_info {
        for (what, v, count) in [
            ("--se", sel.se, info.num_se),
            ("--sh", sel.sh, info.max_sh_per_se),
        ] {
            if let Some(v) = v
                && u32::from(v) >= count
            {
                return Err(IntroError::Usage {
                    text: format!(
                        "{what} {v}: discovery's GC table gives {count} (0 to {})",
                        count.saturating_sub(1)
                    ),
                });
            }
        }
    }
    let mut v = put_field(reg, "INSTANCE_BROADCAST_WRITES", 1)?;
    v |= match sel.se {
        Some(se) => put_field(reg, "SE_INDEX", se.into())?,
        None => put_field(reg, "SE_BROADCAST_WRITES", 1)?,
    };
    v |= match sel.sh {
        Some(sh) => put_field(reg, &format!("{sh_name}_INDEX"), sh.into())?,
        None => put_field(reg, &format!("{sh_name}_BROADCAST_WRITES"), 1)?,
    };
    Ok(v)
}

fn grbm_select<'c, 'a, 'p>(ctx: &'c Ctx<'a, 'p>, sel: &Select) -> R<Option<Grbm<'c, 'a, 'p>>> {
    if !sel.banked() && !sel.indexed() {
        return Ok(None);
    }
    // `soc15_grbm_select(adev, me, pipe, q, vmid, GET_INST(GC, xcc))`:
    // the selected XCC's own GRBM_GFX_CNTL.
    let gc = xcc_gc(ctx, sel.xcc)?;
    let t = regdb::table_for(gc.hw_id, gc.version.triple()).ok_or(IntroError::NoTable {
        block: "GC".into(),
        version: gc.version.triple(),
    })?;
    let table = regdb::load(t).map_err(|e| IntroError::Device {
        what: e.to_string(),
    })?;
    let reg = |name: &str| {
        table.get(name).ok_or(IntroError::UnknownRegister {
            block: "GC".into(),
            register: name.into(),
        })
    };
    let mut writes = Vec::new();
    if sel.banked() {
        let cntl = reg("GRBM_GFX_CNTL")?;
        let mut v = 0u32;
        for (field, val) in [
            ("MEID", sel.me),
            ("PIPEID", sel.pipe),
            ("QUEUEID", sel.queue),
            ("VMID", sel.vmid),
        ] {
            if let Some(val) = val {
                v |= put_field(cntl, field, val.into())?;
            }
        }
        // Back to ME 0 pipe 0 queue 0 VMID 0, as `soc21_grbm_select(adev,
        // 0, 0, 0, 0)` leaves it.
        writes.push((byte_offset(&gc.bases, cntl)?, v, 0));
    }
    if sel.indexed() {
        let index = reg("GRBM_GFX_INDEX")?;
        // Back to broadcast everywhere, as `*_select_se_sh(adev,
        // 0xffffffff, 0xffffffff, 0xffffffff)` leaves it.
        let broadcast = gfx_index(ctx, index, &Select::default())?;
        writes.push((
            byte_offset(&gc.bases, index)?,
            gfx_index(ctx, index, sel)?,
            broadcast,
        ));
    }
    let mut restore = Vec::new();
    for (at, v, back) in writes {
        ctx.gpu.bus.write32(at, v);
        restore.push((at, back));
    }
    Ok(Some(Grbm { ctx, restore }))
}

impl Drop for Grbm<'_, '_, '_> {
    fn drop(&mut self) {
        for &(at, v) in self.restore.iter().rev() {
            self.ctx.gpu.bus.write32(at, v);
        }
    }
}

fn sel_text(sel: &Select) -> String {
    let mut s = String::new();
    for (k, v) in [
        ("ME", sel.me),
        ("PIPE", sel.pipe),
        ("QUEUE", sel.queue),
        ("VMID", sel.vmid),
        ("SE", sel.se),
        ("SH", sel.sh),
    ] {
        if let Some(v) = v {
            let _ = write!(s, " {k} {v}");
        }
    }
    s
}

fn bits(f: &regdb::Field) -> String {
    if f.width == 1 {
        format!("[{}]", f.shift)
    } else {
        format!("[{}:{}]", f.shift + f.width - 1, f.shift)
    }
}

fn fields_json(r: &RegDef, v: u32) -> Value {
    Value::Object(
        r.fields
            .iter()
            .map(|f| (f.name.clone(), json!(f.get(v))))
            .collect(),
    )
}

// ---------------------------------------------------------------- regs

fn split_name(name: &str) -> R<(&str, &str, Option<&str>)> {
    let mut p = name.splitn(3, '.');
    match (p.next(), p.next(), p.next()) {
        (Some(b), Some(r), f) if !b.is_empty() && !r.is_empty() => Ok((b, r, f)),
        _ => Err(IntroError::BadName {
            name: name.to_string(),
        }),
    }
}

fn regs_read(ctx: &Ctx<'_, '_>, name: &str, sel: &Select, json_out: bool) -> R<String> {
    let (block, reg, field) = split_name(name)?;
    let b = resolve_block(ctx, block, sel)?;
    let where_ = format!(
        "{} {}.{}.{} instance {}",
        b.block, b.ip.version.major, b.ip.version.minor, b.ip.version.revision, b.ip.instance
    );
    if reg.contains(['*', '?']) {
        let matched: Vec<&RegDef> = b
            .table
            .regs
            .iter()
            .filter(|r| regdb::glob(reg, &r.name))
            .collect();
        if matched.is_empty() {
            return Err(IntroError::NoMatch {
                pattern: name.to_string(),
            });
        }
        let _g = grbm_select(ctx, sel)?;
        let mut rows = Vec::new();
        for r in matched {
            let at = byte_offset(&b.ip.bases, r)?;
            rows.push((r, at, ctx.gpu.bus.read32(at)));
        }
        if json_out {
            let v: Vec<Value> = rows
                .iter()
                .map(|(r, at, v)| {
                    json!({"register": format!("{}.{}", b.block, r.name), "byte_offset": at, "value": v})
                })
                .collect();
            return Ok(format!("{}\n", Value::Array(v)));
        }
        let w = rows.iter().map(|r| r.0.name.len()).max().unwrap_or(0);
        let mut s = format!(
            "{} registers of {where_} match {reg}{}\n",
            rows.len(),
            sel_text(sel)
        );
        for (r, at, v) in rows {
            let _ = writeln!(
                s,
                "{}.{:<w$} = {v:#010x}  (seg {} + {:#x}, byte {at:#x})",
                b.block, r.name, r.base_idx, r.offset
            );
        }
        return Ok(s);
    }
    let r = b.table.get(reg).ok_or(IntroError::UnknownRegister {
        block: b.block.into(),
        register: reg.to_uppercase(),
    })?;
    let at = byte_offset(&b.ip.bases, r)?;
    let v = {
        let _g = grbm_select(ctx, sel)?;
        ctx.gpu.bus.read32(at)
    };
    if let Some(fname) = field {
        let f = r.field(fname).ok_or_else(|| unknown_field(r, fname))?;
        if json_out {
            return Ok(format!(
                "{}\n",
                json!({"register": format!("{}.{}", b.block, r.name), "field": f.name, "value": f.get(v), "register_value": v})
            ));
        }
        return Ok(format!(
            "{}.{}.{} = {:#x}  (bits {} of {v:#010x})\n",
            b.block,
            r.name,
            f.name,
            f.get(v),
            bits(f)
        ));
    }
    if json_out {
        return Ok(format!(
            "{}\n",
            json!({
                "register": format!("{}.{}", b.block, r.name),
                "block": b.block, "instance": b.ip.instance,
                "offset": r.offset, "base_idx": r.base_idx, "byte_offset": at,
                "value": v, "fields": fields_json(r, v),
            })
        ));
    }
    let mut s = format!(
        "{}.{} = {v:#010x}  ({where_}{}, seg {} + {:#x}, byte {at:#x})\n",
        b.block,
        r.name,
        sel_text(sel),
        r.base_idx,
        r.offset
    );
    let w = r.fields.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for f in &r.fields {
        let _ = writeln!(s, "  {:<w$} {:<7} = {:#x}", f.name, bits(f), f.get(v));
    }
    Ok(s)
}

fn unknown_field(r: &RegDef, f: &str) -> IntroError {
    IntroError::UnknownField {
        register: r.name.clone(),
        field: f.to_uppercase(),
        known: r
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn regs_write(
    ctx: &Ctx<'_, '_>,
    name: &str,
    value: &str,
    sel: &Select,
    json_out: bool,
) -> R<String> {
    let (block, reg, field) = split_name(name)?;
    if reg.contains(['*', '?']) {
        return Err(IntroError::BadName {
            name: name.to_string(),
        });
    }
    let b = resolve_block(ctx, block, sel)?;
    let r = b.table.get(reg).ok_or(IntroError::UnknownRegister {
        block: b.block.into(),
        register: reg.to_uppercase(),
    })?;
    let at = byte_offset(&b.ip.bases, r)?;
    let val = parse_value(value)?;
    let _g = grbm_select(ctx, sel)?;
    let before = ctx.gpu.bus.read32(at);
    let (new, what) = match field {
        Some(fname) => {
            let f = r.field(fname).ok_or_else(|| unknown_field(r, fname))?;
            if val >> f.width != 0 {
                return Err(IntroError::TooWide {
                    what: format!("{}.{}", r.name, f.name),
                    value: val,
                    width: f.width,
                });
            }
            (
                before & !f.mask() | ((val as u32) << f.shift),
                format!("{}.{}.{}", b.block, r.name, f.name),
            )
        }
        None => {
            let v = u32::try_from(val).map_err(|_| IntroError::TooWide {
                what: r.name.clone(),
                value: val,
                width: 32,
            })?;
            (v, format!("{}.{}", b.block, r.name))
        }
    };
    ctx.gpu.bus.write32(at, new);
    let after = ctx.gpu.bus.read32(at);
    if json_out {
        return Ok(format!(
            "{}\n",
            json!({"register": format!("{}.{}", b.block, r.name), "byte_offset": at,
                   "before": before, "written": new, "after": after,
                   "fields": fields_json(r, after)})
        ));
    }
    let mut s = format!(
        "{what} <- {val:#x}{}: {}.{} {before:#010x} -> wrote {new:#010x}, reads back {after:#010x}\n",
        sel_text(sel),
        b.block,
        r.name
    );
    for f in &r.fields {
        if f.get(before) != f.get(after) {
            let _ = writeln!(
                s,
                "  {} {}: {:#x} -> {:#x}",
                f.name,
                bits(f),
                f.get(before),
                f.get(after)
            );
        }
    }
    Ok(s)
}

// ---------------------------------------------------------------- memory

/// `len` bytes at device address `addr`, if they lie in the platform's
/// DMA region (where the bring-up puts rings, MQDs and queues, at GPU VA
/// = host address).
fn read_dma(ctx: &Ctx<'_, '_>, what: &'static str, addr: u64, len: usize) -> R<Vec<u8>> {
    let dma = ctx.gpu.platform.dma();
    let start = dma.host.as_ptr() as u64;
    let inside = addr >= start
        && addr
            .checked_add(len as u64)
            .is_some_and(|end| end <= start + dma.len as u64);
    if !inside {
        return Err(IntroError::Unreachable {
            what,
            address: addr,
        });
    }
    let off = (addr - start) as usize;
    let mut out = vec![0u8; len];
    for (i, b) in out.iter_mut().enumerate() {
        // SAFETY: `off + i < dma.len` (checked above); the platform
        // promises the region is mapped, readable host memory for as long
        // as it lives (its `unsafe impl Platform`), and `ctx` borrows it.
        // The device may write it concurrently, hence a volatile read of
        // one byte, which has no alignment requirement.
        *b = unsafe { core::ptr::read_volatile(dma.host.as_ptr().add(off + i)) };
    }
    Ok(out)
}

fn read_u64(ctx: &Ctx<'_, '_>, what: &'static str, addr: u64) -> R<u64> {
    let b = read_dma(ctx, what, addr, 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(&b);
    Ok(u64::from_le_bytes(a))
}

// ---------------------------------------------------------------- queues

/// GC's table and the HQD window's first register.
fn gc_window(ctx: &Ctx<'_, '_>) -> R<(&'static regdb::Parsed, &'static RegDef)> {
    let gc = ctx.gpu.ips.gc;
    let t = regdb::table_for(gc.hw_id, gc.version.triple()).ok_or(IntroError::NoTable {
        block: "GC".into(),
        version: gc.version.triple(),
    })?;
    let table = regdb::load(t).map_err(|e| IntroError::Device {
        what: e.to_string(),
    })?;
    let first = table
        .get("CP_MQD_BASE_ADDR")
        .ok_or(IntroError::UnknownRegister {
            block: "GC".into(),
            register: "CP_MQD_BASE_ADDR".into(),
        })?;
    Ok((table, first))
}

/// The HQD window registers of slot `(me, pipe, queue)`.
fn read_window(ctx: &Ctx<'_, '_>, me: u8, pipe: u8, queue: u8) -> R<[u32; WINDOW_DWORDS]> {
    let (_, first) = gc_window(ctx)?;
    let at = byte_offset(&ctx.gpu.ips.gc.bases, first)?;
    let sel = Select {
        me: Some(me),
        pipe: Some(pipe),
        queue: Some(queue),
        ..Select::default()
    };
    let _g = grbm_select(ctx, &sel)?;
    let mut w = [0u32; WINDOW_DWORDS];
    for (i, d) in w.iter_mut().enumerate() {
        *d = ctx.gpu.bus.read32(at + 4 * i);
    }
    Ok(w)
}

/// MEC slots scanned: ME 1 (MEC1), its four pipes and eight queues each.
const MEC_PIPES: u8 = 4;
const MEC_QUEUES: u8 = 8;

/// MQD dwords whose HQD register is static configuration: the registers
/// the model's decoder (`decode::mqd`) reads. A difference there is a
/// disagreement; elsewhere (pointers, ACTIVE, dequeue state, doorbell
/// hit/enable bits) the HQD is live state and a difference is expected.
/// `CP_HQD_VMID` against an MQD VMID of 0 is not compared: that MQD
/// leaves the VMID to MES.
const CONFIG: &[usize] = &[
    mqd::dw::MQD_BASE_ADDR_LO,
    mqd::dw::MQD_BASE_ADDR_HI,
    mqd::dw::HQD_VMID,
    mqd::dw::PQ_BASE_LO,
    mqd::dw::PQ_BASE_HI,
    mqd::dw::PQ_RPTR_REPORT_ADDR_LO,
    mqd::dw::PQ_RPTR_REPORT_ADDR_HI,
    mqd::dw::PQ_WPTR_POLL_ADDR_LO,
    mqd::dw::PQ_WPTR_POLL_ADDR_HI,
    mqd::dw::PQ_CONTROL,
    mqd::dw::EOP_BASE_ADDR_LO,
    mqd::dw::EOP_BASE_ADDR_HI,
    mqd::dw::EOP_CONTROL,
    mqd::dw::AQL_CONTROL,
];

/// An HQD slot `(me, pipe, queue)` and its window registers.
type Slot = ((u8, u8, u8), [u32; WINDOW_DWORDS]);

fn active_slots(ctx: &Ctx<'_, '_>) -> R<Vec<Slot>> {
    let mut out = Vec::new();
    for pipe in 0..MEC_PIPES {
        for queue in 0..MEC_QUEUES {
            let w = read_window(ctx, 1, pipe, queue)?;
            if Hqd(w).active() {
                out.push(((1, pipe, queue), w));
            }
        }
    }
    Ok(out)
}

fn queue_dump(ctx: &Ctx<'_, '_>, json_out: bool) -> R<String> {
    let (table, first) = gc_window(ctx)?;
    let slots = active_slots(ctx)?;
    let mut s = format!(
        "{} active compute HQD(s) (MEC1: {MEC_PIPES} pipes x {MEC_QUEUES} queues scanned through GRBM_GFX_CNTL)\n",
        slots.len()
    );
    let mut js = Vec::new();
    for ((me, pipe, queue), w) in slots {
        let hqd = Hqd(w);
        let mqd_addr = hqd.mqd_address();
        let mqd_bytes = read_dma(ctx, "the MQD", mqd_addr, MQD_BYTES)?;
        let m = Hqd::from_mqd(&mqd_bytes);
        let rptr_mem = read_u64(ctx, "the rptr report", hqd.rptr_report_address()).ok();
        let wptr_mem = read_u64(ctx, "the wptr poll", hqd.wptr_poll_address()).ok();
        let name_of = |i: usize| {
            table
                .at(first.base_idx, first.offset + i as u32)
                .map_or("(no register)", |r| r.name.as_str())
        };
        let reg = |n: &str| {
            table
                .get(n)
                .and_then(|r| r.offset.checked_sub(first.offset))
                .map(|k| w.get(k as usize).copied().unwrap_or(0))
                .unwrap_or(0)
        };
        let mut rows = Vec::new();
        let mut disagree = Vec::new();
        for i in 0..WINDOW_DWORDS {
            let d = WINDOW_FIRST + i;
            let (mv, hv) = (m.dword(d), hqd.dword(d));
            // An MQD with VMID 0 leaves the VMID to MES, which loads the
            // HQD with the one it picked (KFD's MQDs carry 0 under MES).
            let picked = d == mqd::dw::HQD_VMID && mv == 0;
            let config = CONFIG.contains(&d) && !picked;
            let mark = if mv == hv {
                "="
            } else if config {
                disagree.push(name_of(i));
                "!"
            } else {
                "~"
            };
            rows.push((d, name_of(i), mv, hv, mark));
        }
        // The doorbell offset is configuration; its EN/HIT bits are not.
        let db_agree = m.doorbell_dword() == hqd.doorbell_dword();
        if !db_agree {
            disagree.push("CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_OFFSET");
        }
        let verdict = if disagree.is_empty() {
            "MQD and HQD agree on every configuration register".to_string()
        } else {
            format!("MQD and HQD DISAGREE on {}", disagree.join(", "))
        };
        if json_out {
            js.push(json!({
                "me": me, "pipe": pipe, "queue": queue,
                "mqd_address": mqd_addr, "vmid": hqd.vmid(), "aql": hqd.aql(),
                "ring": hqd.ring_address(), "ring_bytes": hqd.ring_bytes().ok(),
                "rptr": reg("CP_HQD_PQ_RPTR"),
                "wptr": u64::from(reg("CP_HQD_PQ_WPTR_LO")) | u64::from(reg("CP_HQD_PQ_WPTR_HI")) << 32,
                "rptr_report": {"address": hqd.rptr_report_address(), "value": rptr_mem},
                "wptr_poll": {"address": hqd.wptr_poll_address(), "value": wptr_mem},
                "doorbell_slot": hqd.doorbell_dword() / 2, "doorbell_enabled": hqd.doorbell_enabled(),
                "eop": hqd.eop_address(), "eop_bytes": hqd.eop_bytes().ok(),
                "agree": disagree.is_empty(), "disagree": disagree,
                "window": rows.iter().map(|(d, n, mv, hv, _)| json!({"dword": d, "register": n, "mqd": mv, "hqd": hv})).collect::<Vec<_>>(),
            }));
            continue;
        }
        let opt = |v: Option<u64>| v.map_or("unreadable".to_string(), |v| v.to_string());
        // A size field no memory backs is shown as the model's refusal.
        let size = |r: Result<u64, mqd::SizeBeyondAddressSpace>| {
            r.map_or_else(|e| e.to_string(), |b| format!("{b} bytes"))
        };
        let _ = writeln!(
            s,
            "queue ME {me} PIPE {pipe} QUEUE {queue}: MQD at {mqd_addr:#x}, VMID {}, {}",
            hqd.vmid(),
            if hqd.aql() { "AQL" } else { "PM4" }
        );
        let _ = writeln!(
            s,
            "  ring {:#x} ({}); HQD rptr {} wptr {}; rptr report {:#x} = {}, wptr poll {:#x} = {}",
            hqd.ring_address(),
            size(hqd.ring_bytes()),
            reg("CP_HQD_PQ_RPTR"),
            u64::from(reg("CP_HQD_PQ_WPTR_LO")) | u64::from(reg("CP_HQD_PQ_WPTR_HI")) << 32,
            hqd.rptr_report_address(),
            opt(rptr_mem),
            hqd.wptr_poll_address(),
            opt(wptr_mem)
        );
        let _ = writeln!(
            s,
            "  {} ({}); EOP {:#x} ({})",
            barebell::aql::doorbell::Slot::from_dword(hqd.doorbell_dword()),
            if hqd.doorbell_enabled() {
                "enabled"
            } else {
                "disabled"
            },
            hqd.eop_address(),
            size(hqd.eop_bytes())
        );
        let _ = writeln!(
            s,
            "  MQD dw  register                          MQD         HQD         (= same, ! config differs, ~ live state differs)"
        );
        for (d, n, mv, hv, mark) in &rows {
            let _ = writeln!(s, "  {d:<6}  {n:<32}  {mv:#010x}  {hv:#010x}  {mark}");
        }
        let _ = writeln!(s, "  {verdict}");
    }
    if json_out {
        return Ok(format!("{}\n", Value::Array(js)));
    }
    Ok(s)
}

// ---------------------------------------------------------------- rings

fn guess(bytes: &[u8]) -> Format {
    let h = u32::from_le_bytes([
        bytes.first().copied().unwrap_or(0),
        bytes.get(1).copied().unwrap_or(0),
        bytes.get(2).copied().unwrap_or(0),
        bytes.get(3).copied().unwrap_or(0),
    ]);
    if h >> 30 == 3 {
        Format::Pm4
    } else if mes_api::HEADER_TYPE.get(h) == mes_api::API_TYPE_SCHEDULER
        && mes_api::HEADER_DWSIZE.get(h) as usize == mes_api::FRAME_DWORDS
    {
        Format::Mes
    } else {
        Format::Aql
    }
}

fn decode(bytes: &[u8], f: Format, g: Generation) -> Vec<Packet> {
    // GC 9.4.x has no MES, and its SDMA 4.4 packets are not decoded
    // here: one packet says so over the whole buffer.
    if matches!(g, Generation::Gfx90a | Generation::Gfx94)
        && matches!(f, Format::Mes | Format::Sdma)
    {
        return vec![Packet {
            offset: 0,
            bytes: bytes.len(),
            kind: "UNDECODED (no GC 9.4.x MES/SDMA decoder)",
            fields: Vec::new(),
        }];
    }
    match f {
        Format::Pm4 => ring::pm4(bytes),
        Format::Mes => ring::mes(
            bytes,
            match g {
                Generation::Gfx11 | Generation::Gfx90a | Generation::Gfx94 => &mes_api::V11,
                Generation::Gfx12 => &mes_api::V12,
            },
        ),
        Format::Sdma => ring::sdma(
            bytes,
            match g {
                Generation::Gfx11 | Generation::Gfx90a | Generation::Gfx94 => SdmaGen::V6,
                Generation::Gfx12 => SdmaGen::V7,
            },
        ),
        Format::Aql | Format::Auto => ring::aql(bytes),
    }
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Aql | Format::Auto => "AQL",
        Format::Pm4 => "PM4",
        Format::Mes => "MES API",
        Format::Sdma => "SDMA",
    }
}

/// Text or JSON of decoded packets.
pub fn render_packets(p: &[Packet], f: Format, json_out: bool) -> String {
    if json_out {
        let v: Vec<Value> = p
            .iter()
            .map(|p| {
                json!({"offset": p.offset, "bytes": p.bytes, "kind": p.kind,
                       "fields": p.fields.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>()})
            })
            .collect();
        return format!("{}\n", Value::Array(v));
    }
    let mut s = format!("{} {} packet(s)\n", p.len(), format_name(f));
    for p in p {
        let _ = write!(s, "{:#06x} {} ({} bytes):", p.offset, p.kind, p.bytes);
        for (n, v) in &p.fields {
            if *v > 9 {
                let _ = write!(s, " {n}={v:#x}");
            } else {
                let _ = write!(s, " {n}={v}");
            }
        }
        s.push('\n');
    }
    s
}

fn ring_from_queue(ctx: &Ctx<'_, '_>, which: &str, format: Format, json_out: bool) -> R<String> {
    let (me, pipe, queue, w) = if let Some(a) = which.strip_prefix("mqd@") {
        // A queue by its MQD (e.g. the MES ring, which the KIQ maps and
        // no register bank shows): the ring as the MQD describes it.
        let addr = parse_value(a)?;
        let m = Hqd::from_mqd(&read_dma(ctx, "the MQD", addr, MQD_BYTES)?);
        (0, 0, 0, m.0)
    } else if which == "user" {
        let q = ctx.gpu.queue.as_ref().ok_or(IntroError::NoQueue {
            what: "the bring-up mapped no user queue".into(),
        })?;
        let found = active_slots(ctx)?
            .into_iter()
            .find(|(_, w)| Hqd(*w).mqd_address() == q.mapping.mqd_address)
            .ok_or(IntroError::NoQueue {
                what: format!(
                    "no active HQD has the user queue's MQD {:#x}",
                    q.mapping.mqd_address
                ),
            })?;
        let ((me, pipe, queue), w) = found;
        (me, pipe, queue, w)
    } else {
        let parts: Vec<&str> = which.split('.').collect();
        let n = |i: usize| {
            parts
                .get(i)
                .and_then(|s| s.parse::<u8>().ok())
                .ok_or(IntroError::BadName {
                    name: which.to_string(),
                })
        };
        if parts.len() != 3 {
            return Err(IntroError::BadName {
                name: which.to_string(),
            });
        }
        let (me, pipe, queue) = (n(0)?, n(1)?, n(2)?);
        (me, pipe, queue, read_window(ctx, me, pipe, queue)?)
    };
    let hqd = Hqd(w);
    if hqd.ring_address() == 0 {
        return Err(IntroError::NoQueue {
            what: format!("{which} has no ring (CP_HQD_PQ_BASE is 0)"),
        });
    }
    let g = ctx.gpu.ips.generation;
    let what = if let Some(a) = which.strip_prefix("mqd@") {
        format!("the queue of MQD {a}")
    } else {
        format!("ME {me} PIPE {pipe} QUEUE {queue}")
    };
    let f = match format {
        Format::Auto if me == 3 && (pipe == 0 || g == Generation::Gfx12) => Format::Mes,
        Format::Auto if hqd.aql() => Format::Aql,
        Format::Auto => Format::Pm4,
        f => f,
    };
    let ring_bytes = hqd.ring_bytes().map_err(|e| IntroError::Device {
        what: format!("the queue's ring: {e}"),
    })?;
    // An MQD alone does not say what its ring carries: look at the ring.
    let f = if format == Format::Auto && which.starts_with("mqd@") {
        guess(&read_dma(ctx, "the ring", hqd.ring_address(), 4)?)
    } else {
        f
    };
    // The write pointer the queue's producer published: amd_queue_t's
    // write_dispatch_id (packets) for AQL, the ring's wptr (dwords)
    // otherwise.
    let wptr = read_u64(ctx, "the wptr poll", hqd.wptr_poll_address())?;
    let used = match f {
        Format::Aql | Format::Auto => wptr.saturating_mul(64),
        _ => wptr.saturating_mul(4),
    }
    .min(ring_bytes);
    let bytes = read_dma(ctx, "the ring", hqd.ring_address(), used as usize)?;
    let packets = decode(&bytes, f, g);
    if json_out {
        return Ok(render_packets(&packets, f, true));
    }
    Ok(format!(
        "ring of {what} at {:#x} ({ring_bytes} bytes), wptr {wptr}: ",
        hqd.ring_address()
    ) + &render_packets(&packets, f, false))
}

// ---------------------------------------------------------------- shell

/// A shell line.
#[derive(Parser, Debug)]
#[command(name = "", no_binary_name = true, disable_help_flag = true)]
struct ShellLine {
    #[command(subcommand)]
    cmd: Intro,
}

/// `help`: every command with its one-line description; `help regs read`:
/// that command's full help (clap's, as `barebell regs read --help`).
fn shell_help(words: Vec<&str>) -> String {
    use clap::CommandFactory;
    let mut cmd = ShellLine::command();
    if !words.is_empty() {
        let mut sub = &mut cmd;
        for w in &words {
            match sub.find_subcommand_mut(w) {
                Some(s) => sub = s,
                None => {
                    return format!(
                        "error: no shell command `{}`; `help` lists them\n",
                        words.join(" ")
                    );
                }
            }
        }
        return format!("{}\n", sub.render_long_help());
    }
    let mut text = String::from("commands (`help COMMAND` for one's options):\n");
    for top in cmd.get_subcommands() {
        let subs: Vec<_> = top.get_subcommands().collect();
        if subs.is_empty() {
            let about = top.get_about().map(|a| a.to_string()).unwrap_or_default();
            text.push_str(&format!("  {:<16} {about}\n", top.get_name()));
        }
        for sub in subs {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let name = format!("{} {}", top.get_name(), sub.get_name());
            text.push_str(&format!("  {name:<16} {about}\n"));
        }
    }
    text.push_str(
        "  quit             tear the device down and leave (also `exit`, end of input, Ctrl-D)\n",
    );
    text
}

/// Reads commands from `input` until it ends or a line says `quit`,
/// running each against `gpu`, printing to `out`. With `echo`, each
/// command is printed before its answer (`> regs read ...`), so a
/// transcript of piped input reads like a session; an interactive
/// terminal has shown the line already.
pub fn shell(
    gpu: &mut Gpu<'_>,
    hw: Option<Hardware>,
    input: impl Iterator<Item = String>,
    echo: bool,
    mut out: impl std::io::Write,
) {
    for line in input {
        // A stop signal ends the shell; the caller tears down.
        if crate::stop::requested().is_some() {
            break;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if matches!(line, "quit" | "exit") {
            break;
        }
        if echo {
            let _ = writeln!(out, "> {line}");
        }
        if line == "help" || line.starts_with("help ") {
            let _ = write!(
                out,
                "{}",
                shell_help(line.split_whitespace().skip(1).collect())
            );
            let _ = out.flush();
            continue;
        }
        let text = match ShellLine::try_parse_from(line.split_whitespace()) {
            Ok(l) if l.cmd.device().target.hardware().is_some() => Err(IntroError::Usage {
                text: "the shell runs against the device it brought up; drop --vfio/--sysfs".into(),
            }),
            Ok(ShellLine {
                cmd:
                    Intro::Queue {
                        cmd: QueueCmd::Unmap { .. },
                    },
            }) => match gpu.queue.take() {
                Some(q) => q
                    .unmap()
                    .map(|()| "the user queue is off the device\n".to_string())
                    .map_err(|e| IntroError::Device {
                        what: format!("unmap: {e}"),
                    }),
                None => Err(IntroError::NoQueue {
                    what: "no user queue is mapped".into(),
                }),
            },
            Ok(l) => exec(&l.cmd, &Ctx { gpu: &*gpu, hw }),
            Err(e) => Err(IntroError::Usage {
                text: e
                    .to_string()
                    .trim_start_matches("error: ")
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string(),
            }),
        };
        let _ = match text {
            Ok(t) => write!(out, "{t}"),
            Err(e) => writeln!(out, "error: {e}"),
        };
        let _ = out.flush();
    }
}
