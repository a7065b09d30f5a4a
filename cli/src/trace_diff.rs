//! `barebell trace diff A B`: two register traces compared register by
//! register (issue 15).
//!
//! Both inputs are text traces in the form `barebell bringup --trace`
//! prints and `am-peer` records for tinygrad's AM driver: one access a
//! line, `  W BLOCK.NAME @0xOFFSET = 0xVALUE` (or `R`; an unnamed
//! register is `[0xOFFSET]`), with step markers (`step <name>: ...`
//! from barebell, `## <AM function>` from am-peer). Other lines (memory
//! stores, notes) are ignored.
//!
//! The report, per IP block (the block name a trace gives the
//! register; registers are matched by BAR5 byte offset, which is the
//! same on both sides when both ran on the same model part):
//! - registers one side writes and the other never does;
//! - registers both write whose final values differ. Registers that
//!   hold addresses (names with ADDR, BASE, LO/HI halves, START/END,
//!   TOP/BOT, LSB/MSB, PRGRM_CNTR, RPTR/WPTR) are compared only for
//!   presence: their values depend on where each driver put its memory;
//! - the order of the bring-up steps on each side, in the step names of
//!   `docs/fidelity.md` (discovery, nbio, gmc, ih, psp, smu, gfx, sdma,
//!   mes, rings, queue);
//! - write order: of the registers both sides write before their
//!   teardowns, the ones whose first write comes in another order
//!   relative to the others (those outside a longest common subsequence
//!   of the two first-write orders), and, per register, the ones whose
//!   sequence of written values differs though the final values agree
//!   (address registers left out, as above).
//!
//! Banked registers are kept apart per bank: one BAR5 offset of
//! `CP_HQD_*`, `CP_MQD_*`, `CP_HPD_*` or `SH_MEM_*` reaches the copy of
//! the queue, pipe or VMID `GRBM_GFX_CNTL` selects (`soc21_grbm_select()`,
//! `soc15_grbm_select()`: PIPEID bits 1:0, MEID 3:2, VMID 7:4, QUEUEID
//! 10:8 in `gc_11_0_0_sh_mask.h`, `gc_9_4_3_sh_mask.h` and
//! `gc_12_0_0_sh_mask.h` alike), so each is keyed by the selection the
//! trace last wrote to a `GRBM_GFX_CNTL` and labelled `[me M pipe P
//! queue Q vmid V]`. Other instances of a block (the XCCs of a GC 9.4.3
//! part) sit at other offsets and are apart already.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One register access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub write: bool,
    pub block: String,
    pub name: String,
    pub offset: u64,
    pub value: u32,
    /// The `GRBM_GFX_CNTL` selection a banked register was accessed
    /// under (`None` for registers that are not banked).
    pub bank: Option<u32>,
    /// Made by the teardown (barebell's `step teardown` reports, AM's
    /// `AMDev.fini`), compared on its own.
    pub teardown: bool,
}

/// Register families `GRBM_GFX_CNTL` banks (per queue, pipe or VMID).
const BANKED: &[&str] = &["CP_HQD_", "CP_MQD_", "CP_HPD_", "SH_MEM_"];

/// Whether a register name is one of a banked family's.
pub fn is_banked(name: &str) -> bool {
    let bare = name.strip_prefix("reg").unwrap_or(name);
    BANKED.iter().any(|p| bare.starts_with(p))
}

/// `[me 1 pipe 0 queue 2 vmid 0]` for a `GRBM_GFX_CNTL` value.
fn bank_label(sel: u32) -> String {
    format!(
        "[me {} pipe {} queue {} vmid {}]",
        (sel >> 2) & 3,
        sel & 3,
        (sel >> 8) & 7,
        (sel >> 4) & 0xf
    )
}

/// A parsed trace: accesses and the step order.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    pub accesses: Vec<Access>,
    /// Step names (fidelity.md's), in first-seen order.
    pub steps: Vec<&'static str>,
}

/// The fidelity step an AM function or barebell step belongs to.
fn step_of(marker: &str) -> Option<&'static str> {
    const MAP: &[(&str, &str)] = &[
        ("discovery", "discovery"),
        ("AMDev._run_discovery", "discovery"),
        ("nbio", "nbio"),
        ("AM_SOC.set_clockgating_state", "power"),
        ("AM_GFX.set_clockgating_state", "power"),
        ("AM_SOC", "nbio"),
        ("gmc", "gmc"),
        ("AM_GMC.init_hw", "gmc"),
        ("AM_GMC.init_hub", "gmc"),
        ("AM_IH", "ih"),
        ("ih:", "ih"),
        ("psp", "psp"),
        ("AM_PSP", "psp"),
        ("AM_SMU", "smu"),
        ("rlc", "gfx"),
        ("AM_GFX", "gfx"),
        ("AM_SDMA", "sdma"),
        ("mes", "mes"),
        ("rings", "rings"),
        ("queue", "queue"),
        ("harness: compute queue", "queue"),
        ("harness: SDMA queue", "queue"),
    ];
    MAP.iter()
        .find(|(k, _)| marker.starts_with(k))
        .map(|(_, s)| *s)
}

/// Parses `0x…` hex.
fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

/// Parses one access line; `None` for any other line.
fn access(line: &str) -> Option<Access> {
    let mut it = line.split_whitespace();
    let write = match it.next()? {
        "W" => true,
        "R" => false,
        _ => return None,
    };
    let reg = it.next()?;
    let (block, name, offset) = if let Some(o) = reg.strip_prefix('[') {
        (String::new(), String::new(), hex(o.strip_suffix(']')?)?)
    } else {
        let (b, n) = reg.split_once('.')?;
        let at = it.next()?.strip_prefix('@')?;
        (b.to_string(), n.to_string(), hex(at)?)
    };
    if it.next()? != "=" {
        return None;
    }
    let value = u32::try_from(hex(it.next()?)?).ok()?;
    Some(Access {
        write,
        block,
        name,
        offset,
        value,
        bank: None,
        teardown: false,
    })
}

/// Parses a trace's text.
pub fn parse(text: &str) -> Trace {
    let mut t = Trace::default();
    let mut current: Option<&'static str> = None;
    // Since the last marker: any access, any write.
    let (mut any, mut wrote) = (false, false);
    // The last GRBM_GFX_CNTL value written (0 selects me 0 pipe 0 queue 0).
    let mut selected = 0u32;
    // AM: after `## AMDev.fini` (or the harness's teardown marker) every
    // access is the teardown's. barebell: the accesses before a `step
    // teardown` report, back to the previous report, are.
    let mut in_teardown = false;
    let mut since_report = 0usize;
    let push = |t: &mut Trace, s: &'static str| {
        if !t.steps.contains(&s) {
            t.steps.push(s);
        }
    };
    for line in text.lines() {
        // am-peer: `## <AM function>` opens a step; the accesses after it
        // belong to it. A marker no step claims (a helper such as AM's
        // flush_hdp) leaves the current step as it is.
        if let Some(m) = line.strip_prefix("## ") {
            if m.starts_with("AMDev.fini") || m.starts_with("harness: teardown") {
                in_teardown = true;
            }
            if let Some(s) = step_of(m) {
                current = Some(s);
            }
            (any, wrote) = (false, false);
            continue;
        }
        // barebell: `step <name>: ...` reports a step done; the accesses
        // before it belong to it.
        if let Some(m) = line.strip_prefix("step ") {
            if m.starts_with("teardown") {
                for a in t.accesses.iter_mut().skip(since_report) {
                    a.teardown = true;
                }
            }
            since_report = t.accesses.len();
            if let Some(s) = step_of(m)
                && (wrote || (any && s == "discovery"))
            {
                push(&mut t, s);
            }
            (any, wrote) = (false, false);
            continue;
        }
        if let Some(mut a) = access(line.trim_start()) {
            if a.write && a.name.ends_with("GRBM_GFX_CNTL") {
                selected = a.value;
            }
            if is_banked(&a.name) {
                a.bank = Some(selected);
            }
            (any, wrote) = (true, wrote || a.write);
            // A step counts from its first write (discovery, which only
            // reads, from its first read): AM reads registers in its
            // init_sw functions long before it programs them.
            if let Some(s) = current
                && (a.write || s == "discovery")
                && !in_teardown
            {
                push(&mut t, s);
            }
            a.teardown = in_teardown;
            t.accesses.push(a);
        }
    }
    t
}

/// Whether a register's value is an address (compared for presence only).
pub fn is_address(name: &str) -> bool {
    const PARTS: &[&str] = &[
        "ADDR",
        "BASE",
        "_LO",
        "_HI",
        "LO32",
        "HI32",
        "START",
        "END",
        "_TOP",
        "_BOT",
        "LSB",
        "MSB",
        "PRGRM_CNTR",
        "RPTR",
        "WPTR",
    ];
    PARTS.iter().any(|p| name.contains(p))
}

/// Block and name of every offset either trace names (reads included).
fn names(ts: [&Trace; 2]) -> BTreeMap<u64, (String, String)> {
    let mut m = BTreeMap::new();
    for t in ts {
        for a in &t.accesses {
            if !a.name.is_empty() {
                m.entry(a.offset)
                    .or_insert_with(|| (a.block.clone(), a.name.clone()));
            }
        }
    }
    m
}

/// Per register offset: block, name and final written value; an offset
/// a trace leaves unnamed takes the name the other trace gives it.
/// A register copy: its BAR5 offset and, when banked, its bank.
type Key = (u64, Option<u32>);

fn finals(
    t: &Trace,
    named: &BTreeMap<u64, (String, String)>,
    teardown: bool,
) -> BTreeMap<Key, (String, String, u32)> {
    let mut m: BTreeMap<Key, (String, String, u32)> = BTreeMap::new();
    for a in t
        .accesses
        .iter()
        .filter(|a| a.write && a.teardown == teardown)
    {
        let e = m
            .entry((a.offset, a.bank))
            .or_insert_with(|| (a.block.clone(), a.name.clone(), a.value));
        if e.1.is_empty()
            && let Some((b, n)) = named.get(&a.offset)
        {
            (e.0, e.1) = (b.clone(), n.clone());
        }
        e.2 = a.value;
    }
    m
}

/// The diff report (`a_name` and `b_name` label the sides).
pub fn diff(a_name: &str, a: &Trace, b_name: &str, b: &Trace) -> String {
    let named = names([a, b]);
    // Boot-time values: what each side leaves before its teardown.
    let (fa, fb) = (finals(a, &named, false), finals(b, &named, false));
    // Per block: (only A, only B, differing, same, masked)
    #[derive(Default)]
    struct Block {
        only_a: Vec<String>,
        only_b: Vec<String>,
        differ: Vec<String>,
        same: usize,
        masked: usize,
    }
    let label = |name: &str, (off, bank): Key| {
        let bank = bank.map_or(String::new(), |b| format!(" {}", bank_label(b)));
        if name.is_empty() {
            format!("[{off:#x}]{bank}")
        } else {
            format!("{name} @{off:#x}{bank}")
        }
    };
    let mut blocks: BTreeMap<String, Block> = BTreeMap::new();
    let block_of = |x: &(String, String, u32)| {
        if x.0.is_empty() {
            "(unnamed)".to_string()
        } else {
            x.0.clone()
        }
    };
    for (off, named) in &fa {
        let x = named;
        let blk = blocks.entry(block_of(named)).or_default();
        let l = label(&named.1, *off);
        match fb.get(off) {
            None => blk.only_a.push(l),
            Some(_) if is_address(&named.1) => blk.masked += 1,
            Some(y) if y.2 == x.2 => blk.same += 1,
            Some(y) => blk
                .differ
                .push(format!("{l}: {:#010x} vs {:#010x}", x.2, y.2)),
        }
    }
    for (off, y) in &fb {
        if !fa.contains_key(off) {
            let blk = blocks.entry(block_of(y)).or_default();
            blk.only_b.push(label(&y.1, *off));
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "trace diff: A = {a_name}, B = {b_name}");
    let _ = writeln!(
        out,
        "A: {} accesses ({} writes) to {} written registers; B: {} accesses ({} writes) to {} written registers",
        a.accesses.len(),
        a.accesses.iter().filter(|x| x.write).count(),
        fa.len(),
        b.accesses.len(),
        b.accesses.iter().filter(|x| x.write).count(),
        fb.len()
    );
    let _ = writeln!(out, "step order A: {}", a.steps.join(", "));
    let _ = writeln!(out, "step order B: {}", b.steps.join(", "));
    let _ = writeln!(
        out,
        "\nboot-time values (the last write before each side's teardown)"
    );
    let _ = writeln!(
        out,
        "per block: written by A only / by B only / both, final values differ / both, equal / both, address (masked)"
    );
    for (name, b) in &blocks {
        let _ = writeln!(
            out,
            "  {name}: {} / {} / {} / {} / {}",
            b.only_a.len(),
            b.only_b.len(),
            b.differ.len(),
            b.same,
            b.masked
        );
    }
    for (name, b) in &blocks {
        let _ = writeln!(out, "\n== {name}");
        for (what, list) in [
            ("written by A only", &b.only_a),
            ("written by B only", &b.only_b),
            ("final values differ (A vs B)", &b.differ),
        ] {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(out, "  {what}:");
            for l in list {
                let _ = writeln!(out, "    {l}");
            }
        }
    }
    order_section(&mut out, a, b, &named, &label);
    teardown_section(&mut out, a, b, &named, label);
    out
}

/// Per register copy, the values written before the teardown, in order;
/// and the copies in order of their first write.
fn sequences(t: &Trace) -> (BTreeMap<Key, Vec<u32>>, Vec<Key>) {
    let mut seq: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
    let mut first = Vec::new();
    for a in t.accesses.iter().filter(|a| a.write && !a.teardown) {
        let k = (a.offset, a.bank);
        let v = seq.entry(k).or_default();
        if v.is_empty() {
            first.push(k);
        }
        v.push(a.value);
    }
    (seq, first)
}

/// The elements of `a` outside one longest common subsequence of `a`
/// and `b` (both free of repeats): what is written in another order.
fn out_of_order(a: &[Key], b: &[Key]) -> Vec<Key> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the LCS length of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n && j < m {
        if a[i] == b[j] {
            (i, j) = (i + 1, j + 1);
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            out.push(a[i]);
            i += 1;
        } else {
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out
}

/// `0x1, 0x0` (at most 6 values, then how many more).
fn values(v: &[u32]) -> String {
    let mut s: Vec<String> = v.iter().take(6).map(|x| format!("{x:#x}")).collect();
    if v.len() > 6 {
        s.push(format!("... ({} writes)", v.len()));
    }
    s.join(", ")
}

/// Write order before the teardowns: registers both sides write whose
/// first write comes in another relative order, and registers whose
/// written values come in another sequence though they end equal.
fn order_section(
    out: &mut String,
    a: &Trace,
    b: &Trace,
    named: &BTreeMap<u64, (String, String)>,
    label: &impl Fn(&str, Key) -> String,
) {
    let ((sa, fa), (sb, fb)) = (sequences(a), sequences(b));
    let both: Vec<Key> = fa.iter().copied().filter(|k| sb.contains_key(k)).collect();
    let both_b: Vec<Key> = fb.iter().copied().filter(|k| sa.contains_key(k)).collect();
    let moved = out_of_order(&both, &both_b);
    let name = |k: &Key| named.get(&k.0).map_or("", |x| x.1.as_str());
    let pos = |f: &[Key], k: &Key| f.iter().position(|x| x == k).map_or(0, |p| p + 1);
    let _ = writeln!(
        out,
        "
== write order (before the teardowns): {} registers written by both; {} first written in another order",
        both.len(),
        moved.len()
    );
    for k in &moved {
        let _ = writeln!(
            out,
            "    {}: first write {} of {} in A, {} of {} in B",
            label(name(k), *k),
            pos(&both, k),
            both.len(),
            pos(&both_b, k),
            both_b.len()
        );
    }
    let seq: Vec<String> = both
        .iter()
        .filter(|k| !is_address(name(k)))
        .filter_map(|k| {
            let (x, y) = (sa.get(k)?, sb.get(k)?);
            (x.last() == y.last() && x != y).then(|| {
                format!(
                    "    {}: A {} | B {}",
                    label(name(k), *k),
                    values(x),
                    values(y)
                )
            })
        })
        .collect();
    let _ = writeln!(
        out,
        "  equal final values, other sequences of writes: {}",
        seq.len()
    );
    for l in seq {
        let _ = writeln!(out, "{l}");
    }
}

/// The teardowns compared on their own: per register either side writes
/// there, the value its teardown leaves (`-`: that side's teardown does
/// not write it).
fn teardown_section(
    out: &mut String,
    a: &Trace,
    b: &Trace,
    named: &BTreeMap<u64, (String, String)>,
    label: impl Fn(&str, Key) -> String,
) {
    let (ta, tb) = (finals(a, named, true), finals(b, named, true));
    let count = |t: &Trace| t.accesses.iter().filter(|x| x.write && x.teardown).count();
    let _ = writeln!(
        out,
        "\n== teardown (A: {} writes to {} registers; B: {} writes to {} registers)",
        count(a),
        ta.len(),
        count(b),
        tb.len()
    );
    let keys: std::collections::BTreeSet<&Key> = ta.keys().chain(tb.keys()).collect();
    let show =
        |v: Option<&(String, String, u32)>| v.map_or("-".to_string(), |x| format!("{:#010x}", x.2));
    for k in keys {
        let x = ta.get(k).or_else(|| tb.get(k));
        let name = x.map(|x| x.1.as_str()).unwrap_or("");
        let block = x.map(|x| x.0.as_str()).unwrap_or("");
        let _ = writeln!(
            out,
            "  {}{}: {} vs {}",
            if block.is_empty() {
                String::new()
            } else {
                format!("{block} ")
            },
            label(name, *k),
            show(ta.get(k)),
            show(tb.get(k))
        );
    }
}

/// `barebell trace diff A B`.
pub fn run(a: &std::path::Path, b: &std::path::Path) -> std::process::ExitCode {
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    match (read(a), read(b)) {
        (Ok(ta), Ok(tb)) => {
            print!(
                "{}",
                diff(
                    &a.display().to_string(),
                    &parse(&ta),
                    &b.display().to_string(),
                    &parse(&tb)
                )
            );
            std::process::ExitCode::SUCCESS
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("barebell trace diff: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "  W NBIO.FOO @0x10 = 0x00000001\n  W GC.CP_MQD_BASE_ADDR @0x20 = 0x00001000\n  W GC.BAR @0x30 = 0x00000005\n  R GC.BAR @0x30 = 0x00000005\nstep nbio: x\n";
    const B: &str = "## AM_GMC.init_hw\n  W MMHUB.X @0x50 = 0x1\n## AM_SOC.init_hw\n  W GC.CP_MQD_BASE_ADDR @0x20 = 0x00002000\n  W GC.BAR @0x30 = 0x00000007\n  W [0x40] = 0x00000000\n  M VRAM @0x0 = 0x1\n";

    /// Boot-time values are the last before the teardown; the teardown's
    /// writes are listed on their own (barebell: the accesses before a
    /// `step teardown` report; AM: after `## AMDev.fini`).
    #[test]
    fn the_teardown_is_compared_on_its_own() {
        let a = "  W GC.CP_MEC_RS64_CNTL @0x10 = 0x3c000000\nstep rlc: x\n  W GC.CP_MEC_RS64_CNTL @0x10 = 0x400f0010\nstep teardown: halt MEC\n";
        let b = "## AM_GFX.init_hw\n  W GC.CP_MEC_RS64_CNTL @0x10 = 0x04000000\n## AMDev.fini\n  W GC.SCRATCH_REG6 @0x20 = 0x0\n";
        let r = diff("A", &parse(a), "B", &parse(b));
        assert!(
            r.contains("CP_MEC_RS64_CNTL @0x10: 0x3c000000 vs 0x04000000"),
            "{r}"
        );
        assert!(
            r.contains("== teardown (A: 1 writes to 1 registers; B: 1 writes to 1 registers)"),
            "{r}"
        );
        assert!(
            r.contains("GC CP_MEC_RS64_CNTL @0x10: 0x400f0010 vs -"),
            "{r}"
        );
        assert!(r.contains("GC SCRATCH_REG6 @0x20: - vs 0x00000000"), "{r}");
    }

    /// Write order: B writes Y before X, A the other way round; Z ends
    /// at 0 on both sides, but A wrote 1 first.
    #[test]
    fn write_order_and_sequences_are_compared() {
        let a = "  W GC.X @0x10 = 0x1\n  W GC.Y @0x20 = 0x2\n  W GC.Z @0x30 = 0x1\n  W GC.Z @0x30 = 0x0\n";
        let b = "  W GC.Y @0x20 = 0x2\n  W GC.X @0x10 = 0x1\n  W GC.Z @0x30 = 0x0\n";
        let r = diff("a", &parse(a), "b", &parse(b));
        assert!(
            r.contains("3 registers written by both; 1 first written in another order"),
            "{r}"
        );
        assert!(
            r.contains("X @0x10: first write 1 of 3 in A, 2 of 3 in B"),
            "{r}"
        );
        assert!(r.contains("Z @0x30: A 0x1, 0x0 | B 0x0"), "{r}");
        assert!(!r.contains("Y @0x20: first write"), "{r}");
    }

    #[test]
    fn parses_both_trace_forms() {
        let a = parse(A);
        assert_eq!(a.accesses.len(), 4);
        assert_eq!(a.steps, ["nbio"]);
        let b = parse(B);
        assert_eq!(b.accesses.len(), 4);
        assert_eq!(b.accesses[3].offset, 0x40);
        assert_eq!(b.steps, ["gmc", "nbio"]);
    }

    /// Two queues' HQD copies at one offset, selected through
    /// GRBM_GFX_CNTL (me 1 pipe 0 queue 0, then queue 1): A activates
    /// both, B only queue 0. Folded by offset the two would compare equal
    /// (final value 1 on both sides); kept apart, queue 1 differs.
    #[test]
    fn banked_copies_are_compared_per_queue() {
        let a = "  W GC.GRBM_GFX_CNTL @0x100 = 0x00000004\n  W GC.CP_HQD_ACTIVE @0x200 = 0x00000001\n  W GC.GRBM_GFX_CNTL @0x100 = 0x00000104\n  W GC.CP_HQD_ACTIVE @0x200 = 0x00000001\n  W GC.GRBM_GFX_CNTL @0x100 = 0x00000000\n";
        let b = "  W GC.GRBM_GFX_CNTL @0x100 = 0x00000104\n  W GC.CP_HQD_ACTIVE @0x200 = 0x00000000\n  W GC.GRBM_GFX_CNTL @0x100 = 0x00000004\n  W GC.CP_HQD_ACTIVE @0x200 = 0x00000001\n  W GC.GRBM_GFX_CNTL @0x100 = 0x00000000\n";
        let (ta, tb) = (parse(a), parse(b));
        assert_eq!(ta.accesses[1].bank, Some(0x4));
        assert_eq!(ta.accesses[3].bank, Some(0x104));
        assert_eq!(ta.accesses[0].bank, None);
        let r = diff("a", &ta, "b", &tb);
        assert!(
            r.contains(
                "CP_HQD_ACTIVE @0x200 [me 1 pipe 0 queue 1 vmid 0]: 0x00000001 vs 0x00000000"
            ),
            "{r}"
        );
        // GRBM_GFX_CNTL itself and queue 0's copy are equal.
        assert!(r.contains("  GC: 0 / 0 / 1 / 2 / 0"), "{r}");
    }

    #[test]
    fn reports_one_sided_differing_and_masked_registers() {
        let r = diff("a", &parse(A), "b", &parse(B));
        assert!(r.contains("  NBIO: 1 / 0 / 0 / 0 / 0"), "{r}");
        assert!(r.contains("  GC: 0 / 0 / 1 / 0 / 1"), "{r}");
        assert!(r.contains("  (unnamed): 0 / 1 / 0 / 0 / 0"), "{r}");
        assert!(r.contains("BAR @0x30: 0x00000005 vs 0x00000007"), "{r}");
        assert!(r.contains("step order B: gmc, nbio"), "{r}");
    }
}
