//! `barebell fw info FILE...` and `barebell fw scan DIR`: what the firmware
//! parser makes of blobs on disk.
//!
//! Both print a table or a JSON array with one object per file. Section
//! offsets are absolute byte offsets in the file, so a section can be cut
//! out with `dd` and compared with what Linux would load. A file whose
//! kind or header version is not decoded is reported with its common
//! header and `"status": "unsupported"`; only a container the parser
//! rejects counts as a failure.

use barebell_firmware_if::{Body, Kind, parse};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Subcommand, Debug)]
pub enum FwCommand {
    /// Parse the given firmware files; exits non-zero if any fails.
    Info {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Parse every file in a directory (e.g. /lib/firmware/amdgpu).
    Scan {
        dir: PathBuf,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Serialize, Debug)]
pub struct SectionOut {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
}

/// One file's result; the JSON object `fw info/scan --json` prints.
#[derive(Serialize, Debug)]
pub struct Report {
    pub file: String,
    pub kind: &'static str,
    /// `"parsed"`, `"unsupported"` or `"error"`.
    pub status: &'static str,
    pub header_version: Option<String>,
    pub ip_version: Option<String>,
    pub ucode_version: Option<u32>,
    pub sections: Vec<SectionOut>,
    /// RS64 CP and MES images: the value for `*_PRGRM_CNTR_START`.
    pub pc_start: Option<u64>,
    pub error: Option<String>,
}

/// Reads and parses one file; never panics, whatever the bytes.
pub fn report(path: &Path) -> Report {
    let file = path.display().to_string();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kind = Kind::from_file_name(&name);
    let mut r = Report {
        file,
        kind: kind.name(),
        status: "error",
        header_version: None,
        ip_version: None,
        ucode_version: None,
        sections: Vec::new(),
        pc_start: None,
        error: None,
    };
    let blob = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            r.error = Some(format!("read: {e}"));
            return r;
        }
    };
    match parse(kind, &blob) {
        Ok(fw) => {
            let h = fw.container.header();
            r.header_version = Some(format!(
                "{}.{}",
                h.header_version_major.get(),
                h.header_version_minor.get()
            ));
            r.ip_version = Some(format!(
                "{}.{}",
                h.ip_version_major.get(),
                h.ip_version_minor.get()
            ));
            r.ucode_version = Some(h.ucode_version.get());
            r.sections = fw
                .sections()
                .iter()
                .map(|s| SectionOut {
                    name: s.name,
                    offset: s.offset,
                    size: s.size,
                })
                .collect();
            r.pc_start = match fw.body {
                Body::Gfx(g) => g.pc_start(),
                Body::Mes(m) => Some(m.pc_start()),
                _ => None,
            };
            r.status = if fw.unsupported().is_some() {
                "unsupported"
            } else {
                "parsed"
            };
        }
        Err(e) => r.error = Some(e.to_string()),
    }
    r
}

fn print(reports: &[Report], json: bool) -> Result<(), String> {
    if json {
        let s = serde_json::to_string_pretty(reports).map_err(|e| e.to_string())?;
        println!("{s}");
        return Ok(());
    }
    println!(
        "{:<40} {:<12} {:<11} {:>4} {:>5} {:>10} {:>4}  detail",
        "file", "kind", "status", "hdr", "ip", "ucode_ver", "secs"
    );
    for r in reports {
        let base = Path::new(&r.file)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| r.file.clone());
        let detail = match (&r.error, r.pc_start) {
            (Some(e), _) => e.clone(),
            (None, Some(pc)) => format!("pc_start={pc:#x}"),
            (None, None) => String::new(),
        };
        println!(
            "{:<40} {:<12} {:<11} {:>4} {:>5} {:>10} {:>4}  {}",
            base,
            r.kind,
            r.status,
            r.header_version.as_deref().unwrap_or("-"),
            r.ip_version.as_deref().unwrap_or("-"),
            r.ucode_version
                .map(|v| format!("{v:#x}"))
                .unwrap_or_default(),
            r.sections.len(),
            detail
        );
    }
    Ok(())
}

fn summary(reports: &[Report]) -> String {
    let count = |s: &str| reports.iter().filter(|r| r.status == s).count();
    format!(
        "{} files: {} parsed, {} unsupported (common header only), {} failed",
        reports.len(),
        count("parsed"),
        count("unsupported"),
        count("error")
    )
}

pub fn run(cmd: FwCommand) -> ExitCode {
    let (reports, json, strict) = match cmd {
        FwCommand::Info { files, json } => (
            files.iter().map(|p| report(p)).collect::<Vec<_>>(),
            json,
            true,
        ),
        FwCommand::Scan { dir, json } => {
            let mut paths: Vec<PathBuf> = match std::fs::read_dir(&dir) {
                Ok(rd) => rd
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_file())
                    .collect(),
                Err(e) => {
                    eprintln!("barebell fw scan: {}: {e}", dir.display());
                    return ExitCode::FAILURE;
                }
            };
            paths.sort();
            (paths.iter().map(|p| report(p)).collect(), json, false)
        }
    };
    if let Err(e) = print(&reports, json) {
        eprintln!("barebell fw: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!("{}", summary(&reports));
    let failed = reports.iter().any(|r| r.status == "error");
    if strict && failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
