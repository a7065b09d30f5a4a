//! `cargo xtask am-peer` (issue 15): tinygrad's AM driver boots the
//! model's navi31, navi48 and mi300x through the model's C ABI (on
//! mi308x it stops where the model refuses it, see docs/am-peer.md), and
//! each run's register trace is compared with barebell's own bring-up
//! trace.
//!
//! 1. `am-peer/install.sh`: tinygrad 0.14.0 from PyPI into
//!    `target/am-peer/site`, the wheel checked by pip `--require-hashes`
//!    against the sha256 in `am-peer/requirements.txt`; nothing of
//!    tinygrad is copied into the repository.
//! 2. `cargo build --release -p barebell-model-ffi -p barebell-cli`.
//! 3. Per part: `am-peer/run.sh --part P --strict --backend
//!    target/release/libbarebell_model_ffi.so --out target/am-peer/P-am.txt`
//!    (AM's `AMDev(...)` to its boot done, then its compute and SDMA
//!    queues), `barebell bringup --part P --mapping direct --trace`
//!    into `target/am-peer/P-barebell.txt`, and `barebell trace diff`
//!    of the two into `target/am-peer/am-diff-P.txt`. With `--write`
//!    the diffs go to `docs/am-diff-P.txt` instead (how they are
//!    regenerated).
//!
//! 4. tinygrad itself on navi31 and navi48 (`am-peer/tiny.sh`,
//!    [`tinygrad`]): its `AMDDevice` computes `a + b` and `a.sum()` on
//!    the model, checked against NumPy; printed as `tinygrad on P: ...
//!    matches numpy`.
//!
//! Fails when either boot does not reach AM's boot done, when the
//! model does not show AM's PM4 compute queue active on a started MEC
//! pipe having executed the harness's probe packets, or (without
//! `--write`) when a regenerated diff differs from the committed
//! `docs/am-diff-P.txt`, so the documented diff cannot go stale. Ends with
//! `am peer: navi31 boot done (N register writes), navi48 boot done (N
//! register writes), mi300x boot done (N register writes), mi308x stopped
//! at its harvested XCC 1 (N register writes)`.

use crate::util::{self, cargo, run as run_cmd};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

const PARTS: [&str; 4] = ["navi31", "navi48", "mi300x", "mi308x"];

/// How far AM is expected to get on a part.
enum Expect {
    /// AM's boot done, then its compute queue active (a PM4 HQD running
    /// the harness's probe on Navi, an AQL HQD on every XCC on MI300X).
    Boot,
    /// AM stops at the model's refusal of a register no block model
    /// knows at this BAR5 byte offset (MI308X: AM programs GC instance 1,
    /// which the part's harvest table lists, docs/am-peer.md).
    Refused(&'static str),
}

fn expect(part: &str) -> Expect {
    match part {
        // XCC 1's GFXHUB `MC_VM_AGP_BASE` (GC instance 1's segment 0 at
        // dword 0x801260 in the model's table, + 0x960 of
        // `gc_9_4_3_offset.h`): the first register of a harvested XCC
        // AM writes (`AM_GMC.init_hub("GC", insts=range(4))`).
        "mi308x" => Expect::Refused("a write at byte 0x2006f00 reached no block model"),
        _ => Expect::Boot,
    }
}

/// What the model shows for AM's compute queue: a started MEC pipe
/// running the PM4 HQD on ME 1 pipe 0 queue 0 (`AM_GFX.setup_ring(...,
/// idx=0, aql=False)`), as `vgpu_status` reports it.
const HQD_LINE: &str = "  model: MEC: HQD me 1 pipe 0 queue 0 active (PM4, VMID 0,";

/// What the model shows for AM's AQL queue on MI300X: one queue on
/// every XCC (`AM_GFX.setup_ring(..., aql=True)` loops over the XCCs).
const MI300X_QUEUE: &str = "  before teardown, model: CP: queue Direct on doorbell dword 0x6 (VMID 0, XCCs [0, 1, 2, 3, 4, 5, 6, 7])";
/// The same queue after AM's teardown (`AM_GFX._dequeue_hqds` on every
/// XCC): unmapped everywhere.
const MI300X_QUEUE_AFTER: &str =
    "  model: CP: queue Direct on doorbell dword 0x6 (VMID 0, XCCs []), retired";

/// What one AM run showed.
struct AmRun {
    /// Register writes to boot done (or to the refusal).
    writes: u64,
    /// What the compute queue did, for the summary.
    queue: String,
}

/// Runs one AM boot (strict) and checks it against [`expect`].
fn am_boot(root: &Path, part: &str, out: &Path) -> Result<AmRun> {
    let lib = root.join("target/release/libbarebell_model_ffi.so");
    // AM's own teardown (`AMDev.fini`) where the stage checks it
    // (MI300X; on Navi it reads `BIF_BX0_BIF_DOORBELL_INT_CNTL`, which
    // navi48's NBIF model does not know; navi31's stores it, for
    // tinygrad's IH handler, but its teardown is not in the diffs).
    let teardown: &[&str] = if part == "mi300x" {
        &["--teardown"]
    } else {
        &[]
    };
    let o = Command::new(root.join("am-peer/run.sh"))
        .current_dir(root)
        .args(["--part", part, "--strict", "--backend"])
        .arg(&lib)
        .args(teardown)
        .arg("--out")
        .arg(out)
        .output()
        .context("could not start am-peer/run.sh")?;
    let stdout = String::from_utf8_lossy(&o.stdout);
    if let Expect::Refused(why) = expect(part) {
        let stopped = format!("am peer: {part} FAILED (");
        let Some(line) = stdout.lines().find(|l| l.starts_with(&stopped)) else {
            bail!("AM was expected to stop on the model's {part}, and did not:\n{stdout}");
        };
        if !stdout
            .lines()
            .any(|l| l.starts_with("  refused: ") && l.contains(why))
        {
            bail!("AM stopped on the model's {part}, but not at `{why}`:\n{stdout}");
        }
        eprintln!("{line}");
        let writes: u64 = line[stopped.len()..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .with_context(|| format!("no write count in {line:?}"))?;
        return Ok(AmRun {
            writes,
            queue: format!("{part} (none: AM stopped at the harvested XCC 1)"),
        });
    }
    // Strict mode: a register no block model knows, or any other
    // refusal, fails the access and so AM's boot (run.py exits 1); the
    // boot itself is judged by its summary line.
    let want = format!("am peer: {part} boot done (");
    let Some(line) = stdout.lines().find(|l| l.starts_with(&want)) else {
        bail!(
            "AM did not boot the model's {part}:\n{}\n{}",
            stdout
                .lines()
                .filter(|l| !l.contains("refused: BAR5"))
                .collect::<Vec<_>>()
                .join("\n"),
            String::from_utf8_lossy(&o.stderr)
        );
    };
    eprintln!("{line}");
    for l in stdout.lines().filter(|l| {
        l.contains("refused:") && !l.contains("refused: BAR5") || l.starts_with("  model:")
    }) {
        eprintln!("{l}");
    }
    let writes: u64 = line[want.len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no write count in {line:?}"))?;
    if part.starts_with("mi3") {
        // MI300X: the AQL queue on all eight XCCs, each XCC's MEC running.
        let mecs = (0..8)
            .all(|x| stdout.contains(&format!("  before teardown, model: XCC {x}: MEC running")));
        if !mecs || !stdout.lines().any(|l| l == MI300X_QUEUE) {
            bail!("the model shows no AQL queue on every XCC's running MEC for {part}:\n{stdout}");
        }
        if !stdout.lines().any(|l| l == MI300X_QUEUE_AFTER) {
            bail!("AM's teardown did not unmap its queue on every XCC of {part}:\n{stdout}");
        }
        return Ok(AmRun {
            writes,
            queue: format!(
                "{part} (AQL HQD me 1 pipe 0 queue 0 on XCCs 0-7, dequeued by AM's teardown)"
            ),
        });
    }
    // The compute queue: the HQD active on a started MEC pipe, and the
    // harness's probe packets executed (run.py fails the run otherwise).
    let Some(hqd) = stdout
        .lines()
        .find(|l| l.starts_with(HQD_LINE) && l.contains(") on a started MEC pipe"))
    else {
        bail!("the model shows no PM4 HQD active on a started MEC pipe for {part}:\n{stdout}");
    };
    let packets: u64 = hqd
        .split(", ")
        .find_map(|f| f.strip_suffix(" packets executed"))
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no packet count in {hqd:?}"))?;
    Ok(AmRun {
        writes,
        queue: format!(
            "{part} (PM4 HQD me 1 pipe 0 queue 0, VMID 0: {packets} PM4 packets executed)"
        ),
    })
}

pub fn run(root: &Path, write: bool) -> Result<String> {
    run_cmd(Command::new(root.join("am-peer/install.sh")).current_dir(root))?;
    run_cmd(cargo().current_dir(root).args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "barebell-model-ffi",
        "-p",
        "barebell-cli",
    ]))?;
    let work = root.join("target/am-peer");
    std::fs::create_dir_all(&work)?;
    let barebell = root.join("target/release/barebell");
    let mut done = Vec::new();
    let mut queues = Vec::new();
    for part in PARTS {
        let am = Path::new("target/am-peer").join(format!("{part}-am.txt"));
        let run = am_boot(root, part, &root.join(&am))?;
        let bb = Path::new("target/am-peer").join(format!("{part}-barebell.txt"));
        let trace = Command::new(&barebell)
            .current_dir(root)
            .args(["bringup", "--part", part, "--mapping", "direct", "--trace"])
            .output()
            .context("could not start barebell bringup")?;
        if !trace.status.success() {
            bail!(
                "barebell bringup --part {part} failed:\n{}",
                String::from_utf8_lossy(&trace.stderr)
            );
        }
        std::fs::write(root.join(&bb), &trace.stdout)?;
        // Relative paths: the diff's header names them, and the checked-in
        // diff must not depend on where the repository lives.
        let diff = Command::new(&barebell)
            .current_dir(root)
            .args(["trace", "diff"])
            .arg(&bb)
            .arg(&am)
            .output()
            .context("could not start barebell trace diff")?;
        if !diff.status.success() {
            bail!(
                "barebell trace diff failed:\n{}",
                String::from_utf8_lossy(&diff.stderr)
            );
        }
        let to = if write {
            root.join(format!("docs/am-diff-{part}.txt"))
        } else {
            work.join(format!("am-diff-{part}.txt"))
        };
        std::fs::write(&to, &diff.stdout)?;
        eprintln!("{part}: diff in {}", to.display());
        if !write {
            let doc = format!("docs/am-diff-{part}.txt");
            util::check_committed(
                root,
                &doc,
                &String::from_utf8_lossy(&diff.stdout),
                "run `cargo xtask am-peer --write` and commit it with the change that moved it",
            )?;
        }
        done.push(match expect(part) {
            Expect::Boot => format!("{part} boot done ({} register writes)", run.writes),
            Expect::Refused(_) => format!(
                "{part} stopped at its harvested XCC 1 ({} register writes)",
                run.writes
            ),
        });
        queues.push(run.queue);
    }
    let dir = if write {
        root.join("docs")
    } else {
        work.clone()
    };
    let tiny = tinygrad(root)?;
    let claims = check_fidelity_rows(root, &dir)?;
    eprintln!("docs/fidelity.md: {claims} value claims of the AM diff rows match the diffs");
    println!(
        "am peer: compute queue active on a started MEC: {}",
        queues.join(", ")
    );
    for l in &tiny {
        println!("{l}");
    }
    let line = format!("am peer: {}", done.join(", "));
    println!("{line}");
    Ok(line)
}

/// Elements of the tinygrad computation (1 Mi: the stage's part of CI
/// takes a few seconds on the model's interpreter).
const TINY_N: &str = "1048576";

/// What the unmodified tinygrad run stops at (docs/am-peer.md,
/// "tinygrad on the model"): its first kernel reads its arguments from
/// the 16 MiB kernel-argument buffer AM maps with 2 MiB pages at a VRAM
/// address that is not 2 MiB aligned, gets zeros, and faults loading
/// through a null pointer.
const TINY_STOP: &str = "kernel: wave 0 of workgroup (0, 0, 0): memory fault at";
const TINY_STOP_AT: &str = "read of 16 bytes at 0x0 hits unmapped memory";
/// The same stop on MI300X, where the eight XCCs share the grid: the
/// first wave to fault is the first of another XCC's share, and the
/// pointer it loads from the misplaced arguments is not always null.
const TINY_STOP_MI300: &str = "kernel: wave 0 of workgroup (";
const TINY_STOP_AT_MI300: &str = "read of 16 bytes at 0x";

/// The parts tinygrad computes on (gfx1100, gfx1201, gfx942), with the
/// two strings the unmodified run's stop must hold.
const TINY_PARTS: [(&str, &str, &str); 3] = [
    ("navi31", TINY_STOP, TINY_STOP_AT),
    ("navi48", TINY_STOP, TINY_STOP_AT),
    ("mi300x", TINY_STOP_MI300, TINY_STOP_AT_MI300),
];

/// tinygrad 0.14.0 itself on the model's Navi parts and MI300X
/// (`am-peer/tiny.sh`; on MI300X an AQL queue on all eight XCCs whose
/// waits and signals are PM4 indirect buffers):
/// its `AMDDevice` through the AM interface, `a + b` and `a.sum()` of
/// [`TINY_N`] float32 compiled by its `AMDLLVMCompiler` with Debian's
/// libLLVM-19 and run by the model's CP and ISA interpreter, checked
/// against NumPy. Unmodified it must stop exactly at [`TINY_STOP`]; with
/// the harness's one change (a 1 MiB kernel-argument buffer) it must
/// print the acceptance line.
fn tinygrad(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (part, stop, at) in TINY_PARTS {
        out.extend(tinygrad_on(root, part, (stop, at))?);
    }
    Ok(out)
}

fn tinygrad_on(root: &Path, part: &str, expect: (&str, &str)) -> Result<Vec<String>> {
    let lib = root.join("target/release/libbarebell_model_ffi.so");
    let tiny = |extra: &[&str]| -> Result<(bool, String)> {
        let o = Command::new(root.join("am-peer/tiny.sh"))
            .current_dir(root)
            .args(["--part", part, "--backend"])
            .arg(&lib)
            .args(["--n", TINY_N])
            .args(extra)
            .output()
            .context("could not start am-peer/tiny.sh")?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        Ok((o.status.success(), text))
    };
    let (ok, text) = tiny(&[])?;
    let Some(stop) = text.lines().find(|l| {
        l.contains(expect.0) && l.contains(expect.1) && l.contains("hits unmapped memory")
    }) else {
        bail!(
            "unmodified tinygrad on {part} was expected to stop at its first kernel's null kernel-argument load, and {}:\n{text}",
            if ok { "ran" } else { "stopped elsewhere" }
        );
    };
    let at = stop.find("wave 0").unwrap_or(0);
    let stop = format!(
        "tinygrad on {part}: unmodified, its first kernel stops: {}",
        stop.get(at..).unwrap_or(stop)
    );
    let (ok, text) = tiny(&["--kernargs-mib", "1"])?;
    let want = format!("tinygrad on {part}: a + b and a.sum() of ");
    let Some(line) = text
        .lines()
        .find(|l| l.starts_with(&want) && l.ends_with(" matches numpy"))
        .filter(|_| ok)
    else {
        bail!("tinygrad on {part} did not compute what NumPy does:\n{text}");
    };
    for l in text.lines().filter(|l| l.starts_with("  ")) {
        eprintln!("{l}");
    }
    Ok(vec![stop, line.to_string()])
}

/// One value claim of a `docs/fidelity.md` diff row: register `name`,
/// barebell's final value `a`, AM's `b`.
#[derive(Debug, PartialEq, Eq)]
struct Claim {
    name: String,
    a: u64,
    b: u64,
}

fn number(t: &str) -> Option<u64> {
    let t = t.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// The claims of one row's first cell: each `` `NAME` A vs B `` (hex or
/// decimal; names with `*` or `/` name several registers and are not
/// claims of one value).
fn claims(cell: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let parts: Vec<&str> = cell.split('`').collect();
    // Odd indices are inside backticks.
    for i in (1..parts.len()).step_by(2) {
        let name = parts[i];
        if name.contains('*') || name.contains('/') || name.contains(' ') {
            continue;
        }
        let Some(rest) = parts.get(i + 1) else {
            continue;
        };
        let w: Vec<&str> = rest.split_whitespace().collect();
        if let [a, vs, b, ..] = w.as_slice()
            && *vs == "vs"
            && let (Some(a), Some(b)) = (number(a), number(b))
        {
            out.push(Claim {
                name: name.to_string(),
                a,
                b,
            });
        }
    }
    out
}

/// Whether `diff` (a `barebell trace diff` text) shows `c.name` with
/// final values `c.a` vs `c.b`.
fn diff_shows(diff: &str, c: &Claim) -> bool {
    diff.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with(&format!("{} @", c.name)) && l.rsplit_once(": ").is_some_and(|(_, v)| {
            let w: Vec<&str> = v.split_whitespace().collect();
            matches!(w.as_slice(), [a, "vs", b] if number(a) == Some(c.a) && number(b) == Some(c.b))
        })
    })
}

/// Every value claim in the rows of `docs/fidelity.md`'s AM diff table
/// against the diffs in `dir` (`am-diff-<part>.txt`): a row's part
/// column names the part (`both`: navi31 and navi48). Returns how many
/// claims were checked.
fn check_fidelity_rows(root: &Path, dir: &Path) -> Result<usize> {
    let doc = std::fs::read_to_string(root.join("docs/fidelity.md"))?;
    let Some(table) = doc.split("### The AM ↔ barebell diff").nth(1) else {
        bail!("docs/fidelity.md has no \"The AM ↔ barebell diff\" section");
    };
    let mut checked = 0;
    let mut wrong = Vec::new();
    for row in table.lines().take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(first), Some(part)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let parts: Vec<&str> = match part.split_whitespace().next() {
            Some("both") => vec!["navi31", "navi48"],
            Some(p) if PARTS.contains(&p) => vec![p],
            _ => continue,
        };
        for c in claims(first) {
            for p in &parts {
                let diff = std::fs::read_to_string(dir.join(format!("am-diff-{p}.txt")))?;
                checked += 1;
                if !diff_shows(&diff, &c) {
                    wrong.push(format!("{} {:#x} vs {:#x} ({p})", c.name, c.a, c.b));
                }
            }
        }
    }
    if !wrong.is_empty() {
        bail!(
            "docs/fidelity.md's AM diff rows name values the diff does not show: {}",
            wrong.join("; ")
        );
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_claim_is_checked_against_the_diff_line() {
        let c = claims(
            "GC `CP_MEC_RS64_CNTL` 0x3c000000 vs 0x04000000, `CP_HQD_VMID` 8 vs 0, GC/MMHUB `*VM_CONTEXT0_CNTL` 0x7 vs 0x1",
        );
        assert_eq!(
            c,
            [
                Claim {
                    name: "CP_MEC_RS64_CNTL".into(),
                    a: 0x3c00_0000,
                    b: 0x0400_0000
                },
                Claim {
                    name: "CP_HQD_VMID".into(),
                    a: 8,
                    b: 0
                },
            ]
        );
        let diff = "    CP_MEC_RS64_CNTL @0x32410: 0x400f0010 vs 0x04000000\n    CP_HQD_VMID @0xc830 [me 1 pipe 0 queue 0 vmid 0]: 0x00000008 vs 0x00000000\n";
        assert!(!diff_shows(diff, &c[0]), "a stale row is caught");
        assert!(diff_shows(diff, &c[1]));
    }
}
