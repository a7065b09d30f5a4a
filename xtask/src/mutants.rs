//! `cargo xtask mutants`: one shard of the mutation run that
//! docs/mutants.md reports, and the tally of every shard recorded so far.
//!
//! cargo-mutants does the work; `.cargo/mutants.toml` holds the scope and
//! the oracle, so a plain `cargo mutants` runs the same thing. This command
//! adds what a run spread over many sessions needs:
//! - it mutates a clean worktree of `HEAD` (`target/mutants/tree`), never
//!   the checkout being edited, and builds it in `target/mutants/build`,
//!   kept warm from one shard to the next;
//! - it runs the oracle unmutated first (cargo-mutants' own baseline runs
//!   only the mutated packages' tests, not the harness's);
//! - it re-runs the fast tier's survivors with the slow tests as well;
//! - it records each mutant's outcome, with the commit, in
//!   `docs/mutants/shard-K-of-N.txt`, the ledger the tally reads.

use crate::{apt, headers, util::output};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cargo-mutants release the ledger was made with; a different one
/// generates a different list of mutants, so the shards would not add up.
pub const VERSION: &str = "27.1.0";

/// How long one mutant's tests may run: the fast tier takes about 25 s
/// unmutated in the `mutants` profile on two cores, the slow tests about 70 s.
const TEST_TIMEOUT_S: &str = "240";
/// How long one mutant's build may take (incremental, so usually 10–30 s).
const BUILD_TIMEOUT_S: &str = "900";

/// Where the ledger lives, relative to the workspace root.
pub const LEDGER_DIR: &str = "docs/mutants";

/// A shard: `index` of `count`, cargo-mutants' `--shard K/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("a shard is K/N, such as 3/32; got {s:?}"))?;
        let index: u32 = k.parse().map_err(|_| format!("{k:?} is not a number"))?;
        let count: u32 = n.parse().map_err(|_| format!("{n:?} is not a number"))?;
        if count == 0 || index >= count {
            return Err(format!(
                "shard {index} of {count} does not exist (0 <= K < N)"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    fn file_name(self) -> String {
        format!("shard-{:02}-of-{:02}.txt", self.index, self.count)
    }
}

/// What happened to one mutant. `CaughtSlow` is a survivor of the fast
/// tier that the slow tests caught.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Caught,
    CaughtSlow,
    Missed,
    Timeout,
    Unviable,
}

impl Outcome {
    const ALL: [Outcome; 5] = [
        Outcome::Caught,
        Outcome::CaughtSlow,
        Outcome::Missed,
        Outcome::Timeout,
        Outcome::Unviable,
    ];
    fn word(self) -> &'static str {
        match self {
            Outcome::Caught => "caught",
            Outcome::CaughtSlow => "caught-slow",
            Outcome::Missed => "missed",
            Outcome::Timeout => "timeout",
            Outcome::Unviable => "unviable",
        }
    }
    fn parse(w: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.word() == w)
    }
}

/// Runs one shard's fast tier and records it; returns the shard's tally.
/// A finished run of the shard already in `target/mutants` (one whose
/// tree was at `HEAD`, or any finished run when `HEAD` has moved on) is
/// recorded without running again.
pub fn run(root: &Path, shard: Shard) -> Result<String> {
    let out = out_dir(root, shard);
    let stamp = out.join("commit");
    let recorded = std::fs::read_to_string(&stamp).ok();
    let commit = match recorded {
        Some(c) if finished(&out.join("mutants.out")) => c.trim().to_owned(),
        _ => {
            ensure_tool()?;
            apt::ensure()?;
            headers::ensure(root)?;
            let tree = prepare_tree(root, "HEAD")?;
            let build = root.join("target/mutants/build");
            let oracle = Oracle::read(&tree)?;
            oracle.check_unmutated(&tree, &build)?;
            let commit = head_of(&tree)?;
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(&out)?;
            std::fs::write(&stamp, &commit)?;
            let shard_arg = format!("{}/{}", shard.index, shard.count);
            mutate(&tree, &build, &out, &["--shard", &shard_arg])?;
            commit
        }
    };
    let outcomes = read_outcomes(&out.join("mutants.out"))?;
    let path = write_shard(root, shard, &commit, false, &outcomes)?;
    Ok(format!(
        "mutants: shard {}/{} at {commit} recorded in {}\n{}",
        shard.index,
        shard.count,
        path.display(),
        render_table(&tally(&outcomes))
    ))
}

/// Runs the slow tests on the survivors of a recorded shard, at the
/// commit the shard was taken at, and records which they catch.
pub fn run_slow(root: &Path, shard: Shard) -> Result<String> {
    let path = root.join(LEDGER_DIR).join(shard.file_name());
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("no recorded shard {}: run it first", path.display()))?;
    let commit = commit_of(&text).context("the shard file names no commit")?;
    let mut outcomes = BTreeMap::new();
    parse_shard(&text, &mut outcomes)?;
    let survivors: Vec<&String> = outcomes
        .iter()
        .filter(|(_, o)| **o == Outcome::Missed)
        .map(|(m, _)| m)
        .collect();
    if !survivors.is_empty() {
        ensure_tool()?;
        apt::ensure()?;
        headers::ensure(root)?;
        let tree = prepare_tree(root, &commit)?;
        let build = root.join("target/mutants/build");
        let config = slow_config(&tree, &root.join("target/mutants/slow.toml"))?;
        let out = out_dir(root, shard).join("slow");
        let mut args: Vec<String> = vec!["--config".into(), config.display().to_string()];
        for m in &survivors {
            args.push("--re".into());
            args.push(format!("^{}$", regex::escape(m)));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        mutate(&tree, &build, &out, &args)?;
        for (m, o) in read_outcomes(&out.join("mutants.out"))? {
            if o == Outcome::Caught && outcomes.get(&m) == Some(&Outcome::Missed) {
                outcomes.insert(m, Outcome::CaughtSlow);
            }
        }
    }
    let path = write_shard(root, shard, &commit, true, &outcomes)?;
    Ok(format!(
        "mutants: slow tier of shard {}/{} at {commit} recorded in {}\n{}",
        shard.index,
        shard.count,
        path.display(),
        render_table(&tally(&outcomes))
    ))
}

fn out_dir(root: &Path, shard: Shard) -> PathBuf {
    root.join(format!("target/mutants/{}-of-{}", shard.index, shard.count))
}

fn head_of(tree: &Path) -> Result<String> {
    Ok(output(
        Command::new("git")
            .current_dir(tree)
            .args(["rev-parse", "HEAD"]),
    )?
    .trim()
    .to_owned())
}

/// Whether cargo-mutants finished the run whose report is in `dir`: its
/// `outcomes.json` has an end time only then.
fn finished(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("outcomes.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("end_time").is_some_and(|e| !e.is_null()))
}

/// `.cargo/mutants.toml` with the fast tier's test filter turned round:
/// the slow tier runs only the tests the fast tier leaves out.
fn slow_config(tree: &Path, to: &Path) -> Result<PathBuf> {
    let from = tree.join(".cargo/mutants.toml");
    let text = std::fs::read_to_string(&from)?;
    let mut t: toml::Table = text.parse()?;
    let args = t
        .get_mut("additional_cargo_test_args")
        .and_then(|v| v.as_array_mut())
        .context("no additional_cargo_test_args")?;
    let at = args
        .iter()
        .position(|a| a.as_str() == Some("-E"))
        .context("the fast tier has no -E filter")?;
    let filter = args
        .get(at + 1)
        .and_then(|v| v.as_str())
        .context("-E without a filter")?
        .to_owned();
    args[at + 1] = toml::Value::String(format!("not ({filter})"));
    std::fs::write(to, toml::to_string(&t)?)?;
    Ok(to.to_path_buf())
}

fn write_shard(
    root: &Path,
    shard: Shard,
    commit: &str,
    slow: bool,
    outcomes: &BTreeMap<String, Outcome>,
) -> Result<PathBuf> {
    let dir = root.join(LEDGER_DIR);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(shard.file_name());
    std::fs::write(&path, render_shard(shard, commit, slow, outcomes))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The commit a shard file's first line names.
fn commit_of(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    let rest = first.split(", at ").nth(1)?;
    Some(rest.split(';').next()?.trim().to_owned())
}

/// The tally of every shard in the ledger, as docs/mutants.md shows it.
pub fn tally_ledger(root: &Path) -> Result<String> {
    let (shards, outcomes) = read_ledger(&root.join(LEDGER_DIR))?;
    Ok(format!(
        "{shards} shards recorded, {} mutants\n\n{}",
        outcomes.len(),
        render_table(&tally(&outcomes))
    ))
}

/// Installs the pinned cargo-mutants when `cargo mutants` is missing or
/// another release.
fn ensure_tool() -> Result<()> {
    let have = Command::new("cargo")
        .args(["mutants", "--version"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    if have.as_deref().is_some_and(|v| v.contains(VERSION)) {
        return Ok(());
    }
    eprintln!("installing cargo-mutants {VERSION} (cargo install --locked)");
    crate::util::run(Command::new("cargo").args([
        "install",
        "cargo-mutants",
        "--locked",
        "--version",
        VERSION,
    ]))
    .context("installing cargo-mutants")
}

/// A clean detached worktree of `rev` at target/mutants/tree, with the
/// checkout's `target/artifacts` (the Linux headers the tests read) linked
/// in.
fn prepare_tree(root: &Path, rev: &str) -> Result<PathBuf> {
    let tree = root.join("target/mutants/tree");
    let head = output(
        Command::new("git")
            .current_dir(root)
            .args(["rev-parse", rev]),
    )?;
    let head = head.trim();
    if tree.join(".git").exists() {
        crate::util::run(
            Command::new("git")
                .current_dir(&tree)
                .args(["checkout", "--quiet", "--detach", "--force", head]),
        )?;
        crate::util::run(
            Command::new("git")
                .current_dir(&tree)
                .args(["clean", "--quiet", "-fdx", "-e", "/target"]),
        )?;
    } else {
        let _ = std::fs::remove_dir_all(&tree);
        crate::util::run(
            Command::new("git")
                .current_dir(root)
                .args(["worktree", "prune"]),
        )?;
        crate::util::run(
            Command::new("git")
                .current_dir(root)
                .args(["worktree", "add", "--quiet", "--detach"])
                .arg(&tree)
                .arg(head),
        )?;
    }
    let link = tree.join("target/artifacts");
    if std::fs::symlink_metadata(&link).is_err() {
        std::fs::create_dir_all(tree.join("target"))?;
        std::os::unix::fs::symlink(root.join("target/artifacts"), &link)
            .with_context(|| format!("linking {}", link.display()))?;
    }
    Ok(tree)
}

/// The oracle as `.cargo/mutants.toml` gives it.
#[derive(Debug)]
struct Oracle {
    packages: Vec<String>,
    cargo_args: Vec<String>,
    test_args: Vec<String>,
    profile: String,
}

impl Oracle {
    fn read(tree: &Path) -> Result<Oracle> {
        let path = tree.join(".cargo/mutants.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        Oracle::parse(&text).with_context(|| format!("in {}", path.display()))
    }

    fn parse(text: &str) -> Result<Oracle> {
        let t: toml::Table = text.parse()?;
        let list = |key: &str| -> Result<Vec<String>> {
            t.get(key)
                .and_then(|v| v.as_array())
                .with_context(|| format!("no list `{key}`"))?
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .with_context(|| format!("`{key}` holds a non-string"))
                })
                .collect()
        };
        if t.get("test_tool").and_then(|v| v.as_str()) != Some("nextest") {
            bail!("the oracle is written for nextest (`test_tool = \"nextest\"`)");
        }
        Ok(Oracle {
            packages: list("test_package")?,
            cargo_args: list("additional_cargo_args")?,
            test_args: list("additional_cargo_test_args")?,
            profile: t
                .get("profile")
                .and_then(|v| v.as_str())
                .context("no `profile`")?
                .to_owned(),
        })
    }

    /// Runs the fast tier unmutated: a shard means nothing if its oracle
    /// fails without a mutant.
    fn check_unmutated(&self, tree: &Path, build: &Path) -> Result<()> {
        let mut cmd = Command::new("cargo");
        cmd.current_dir(tree).env("CARGO_TARGET_DIR", build).args([
            "nextest",
            "run",
            "--cargo-profile",
            &self.profile,
        ]);
        for p in &self.packages {
            cmd.args(["--package", p]);
        }
        cmd.args(&self.cargo_args).args(&self.test_args);
        crate::util::run(&mut cmd).context(
            "the oracle fails with no mutant applied; fix the tests before measuring mutants",
        )
    }
}

/// Runs cargo-mutants in place in `tree` with `extra` arguments, writing
/// its report under `out`. Exit codes 2 (missed mutants) and 3 (timeouts)
/// are results, not failures.
fn mutate(tree: &Path, build: &Path, out: &Path, extra: &[&str]) -> Result<()> {
    let status = Command::new("cargo")
        .current_dir(tree)
        .env("CARGO_TARGET_DIR", build)
        .args(["mutants", "--in-place", "--baseline=skip"])
        .args([
            "--timeout",
            TEST_TIMEOUT_S,
            "--build-timeout",
            BUILD_TIMEOUT_S,
        ])
        .arg("--output")
        .arg(out)
        .args(extra)
        .status()
        .context("starting cargo mutants")?;
    match status.code() {
        Some(0 | 2 | 3) => Ok(()),
        _ => bail!(
            "cargo mutants failed with {status}; its log is under {}",
            out.display()
        ),
    }
}

/// Each mutant's outcome, from cargo-mutants' per-outcome lists.
fn read_outcomes(dir: &Path) -> Result<BTreeMap<String, Outcome>> {
    let mut all = BTreeMap::new();
    for (file, outcome) in [
        ("caught.txt", Outcome::Caught),
        ("missed.txt", Outcome::Missed),
        ("timeout.txt", Outcome::Timeout),
        ("unviable.txt", Outcome::Unviable),
    ] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            all.insert(line.to_owned(), outcome);
        }
    }
    if all.is_empty() {
        bail!("cargo mutants reported no mutants under {}", dir.display());
    }
    Ok(all)
}

fn render_shard(
    shard: Shard,
    commit: &str,
    slow: bool,
    outcomes: &BTreeMap<String, Outcome>,
) -> String {
    let tier = if slow { "run" } else { "not run yet" };
    let mut s = format!(
        "# cargo-mutants {VERSION}, shard {} of {}, at {commit}; scope and oracle: .cargo/mutants.toml; slow tier: {tier}\n",
        shard.index, shard.count
    );
    for (m, o) in outcomes {
        let _ = writeln!(s, "{}\t{m}", o.word());
    }
    s
}

/// Every mutant of every shard file under `dir`; a mutant in two shards
/// (the list shifts with the code) counts once, with its later outcome.
fn read_ledger(dir: &Path) -> Result<(usize, BTreeMap<String, Outcome>)> {
    if !dir.exists() {
        return Ok((0, BTreeMap::new()));
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    let mut all = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f)?;
        parse_shard(&text, &mut all).with_context(|| format!("in {}", f.display()))?;
    }
    Ok((files.len(), all))
}

fn parse_shard(text: &str, into: &mut BTreeMap<String, Outcome>) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (word, name) = line
            .split_once('\t')
            .with_context(|| format!("line {}: no tab", i + 1))?;
        let o = Outcome::parse(word)
            .with_context(|| format!("line {}: unknown outcome {word:?}", i + 1))?;
        into.insert(name.to_owned(), o);
    }
    Ok(())
}

/// The module a mutant is in: its file's directory.
fn module(mutant: &str) -> &str {
    let file = mutant.split(':').next().unwrap_or(mutant);
    file.rsplit_once('/').map_or(file, |(dir, _)| dir)
}

/// The files of the MI300 path: GC 9.4.3, MP 13.0.6, the GC 9 queue and
/// MQD files it shares with MI210, the HWS, and the hubs MI300 has.
fn is_mi300(mutant: &str) -> bool {
    let file = mutant.split(':').next().unwrap_or(mutant);
    [
        "gfx_v9_4_3/",
        "_v9_4_3.rs",
        "psp_v13_0_6.rs",
        "mp13_0_6.rs",
        "gfx/hws/",
        "hqd_v9.rs",
        "mqd_v9.rs",
        "queue_v9.rs",
        "kiq/v9.rs",
        "hub/v9.rs",
        "gfxhub_v1_2.rs",
        "mmhub_v1_8.rs",
        "pte_v9.rs",
    ]
    .iter()
    .any(|p| file.contains(p))
}

type Counts = [usize; 5];

/// Counts per module, then the MI300 path, then everything.
fn tally(outcomes: &BTreeMap<String, Outcome>) -> Vec<(String, Counts)> {
    let mut by: BTreeMap<String, Counts> = BTreeMap::new();
    let mut mi300 = Counts::default();
    let mut total = Counts::default();
    for (m, o) in outcomes {
        let i = *o as usize;
        by.entry(module(m).to_owned()).or_default()[i] += 1;
        if is_mi300(m) {
            mi300[i] += 1;
        }
        total[i] += 1;
    }
    let mut rows: Vec<(String, Counts)> =
        by.into_iter().map(|(k, v)| (format!("`{k}`"), v)).collect();
    rows.push(("MI300 path".into(), mi300));
    rows.push(("**all**".into(), total));
    rows
}

/// Caught (either tier) over viable (everything but unviable).
fn caught_percent(c: &Counts) -> Option<f64> {
    let caught = c[Outcome::Caught as usize] + c[Outcome::CaughtSlow as usize];
    let viable: usize = c.iter().sum::<usize>() - c[Outcome::Unviable as usize];
    (viable > 0).then(|| 100.0 * caught as f64 / viable as f64)
}

fn render_table(rows: &[(String, Counts)]) -> String {
    let mut s = String::from(
        "| module | mutants | caught | caught by the slow tests | missed | timeout | unviable | caught of viable |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for (name, c) in rows {
        let pct = caught_percent(c).map_or("-".to_owned(), |p| format!("{p:.1} %"));
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} | {pct} |",
            c.iter().sum::<usize>(),
            c[0],
            c[1],
            c[2],
            c[3],
            c[4]
        );
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_does_not_exist() {
        assert_eq!(
            "3/32".parse(),
            Ok(Shard {
                index: 3,
                count: 32
            })
        );
        assert!("32/32".parse::<Shard>().is_err());
        assert!("1/0".parse::<Shard>().is_err());
        assert!("3".parse::<Shard>().is_err());
        assert_eq!(
            Shard {
                index: 3,
                count: 32
            }
            .file_name(),
            "shard-03-of-32.txt"
        );
    }

    #[test]
    fn a_shard_file_round_trips_and_the_later_outcome_wins() {
        let mut o = BTreeMap::new();
        o.insert(
            "runtime/src/aql/queue.rs:1:1: replace a".to_owned(),
            Outcome::Caught,
        );
        o.insert(
            "bringup/src/lib.rs:2:2: replace b".to_owned(),
            Outcome::Missed,
        );
        let text = render_shard(Shard { index: 0, count: 2 }, "abc", false, &o);
        assert!(text.starts_with("# cargo-mutants 27.1.0, shard 0 of 2, at abc;"));
        assert_eq!(commit_of(&text).as_deref(), Some("abc"));
        let mut back = BTreeMap::new();
        parse_shard(&text, &mut back).unwrap();
        assert_eq!(back, o);
        parse_shard(
            "caught-slow\tbringup/src/lib.rs:2:2: replace b\n",
            &mut back,
        )
        .unwrap();
        assert_eq!(
            back["bringup/src/lib.rs:2:2: replace b"],
            Outcome::CaughtSlow
        );
        assert!(parse_shard("kaught\tx\n", &mut back).is_err());
    }

    #[test]
    fn the_tally_groups_by_directory_and_counts_the_mi300_path() {
        let mut o = BTreeMap::new();
        for (m, out) in [
            (
                "runtime/src/gfx/hws/runlist.rs:5:9: replace x",
                Outcome::Caught,
            ),
            ("runtime/src/gfx/hws/hiq.rs:5:9: replace y", Outcome::Missed),
            ("runtime/src/gfx/mqd.rs:5:9: replace z", Outcome::Unviable),
            ("bringup/src/lib.rs:1:1: replace w", Outcome::CaughtSlow),
        ] {
            o.insert(m.to_owned(), out);
        }
        let rows = tally(&o);
        let get = |k: &str| rows.iter().find(|r| r.0 == k).unwrap().1;
        assert_eq!(get("`runtime/src/gfx/hws`"), [1, 0, 1, 0, 0]);
        assert_eq!(get("`runtime/src/gfx`"), [0, 0, 0, 0, 1]);
        assert_eq!(get("MI300 path"), [1, 0, 1, 0, 0]);
        assert_eq!(get("**all**"), [1, 1, 1, 0, 1]);
        // 2 caught (one by the slow tests) of 3 viable.
        let table = render_table(&rows);
        assert!(
            table.contains("| **all** | 4 | 1 | 1 | 1 | 0 | 1 | 66.7 % |"),
            "{table}"
        );
    }

    #[test]
    fn the_committed_oracle_parses() {
        let root = crate::util::workspace_root();
        let o = Oracle::read(&root).unwrap();
        assert_eq!(
            o.packages,
            ["barebell", "barebell-bringup", "barebell-tests"]
        );
        assert_eq!(o.profile, "mutants");
        assert!(
            o.test_args
                .iter()
                .any(|a| a.starts_with("not (binary(hang)"))
        );
    }

    /// The slow tier's config is the committed one with the fast tier's
    /// filter negated, and nothing else changed.
    #[test]
    fn the_slow_tier_runs_what_the_fast_tier_leaves_out() {
        let root = crate::util::workspace_root();
        let dir = root.join("target/mutants-test");
        std::fs::create_dir_all(&dir).unwrap();
        let path = slow_config(&root, &dir.join("slow.toml")).unwrap();
        let slow: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
        let fast: toml::Table = std::fs::read_to_string(root.join(".cargo/mutants.toml"))
            .unwrap()
            .parse()
            .unwrap();
        let filter = |t: &toml::Table| -> String {
            let a = t["additional_cargo_test_args"].as_array().unwrap();
            let at = a.iter().position(|v| v.as_str() == Some("-E")).unwrap();
            a[at + 1].as_str().unwrap().to_owned()
        };
        assert_eq!(filter(&slow), format!("not ({})", filter(&fast)));
        assert_eq!(slow["examine_globs"], fast["examine_globs"]);
        assert_eq!(slow["test_package"], fast["test_package"]);
    }

    /// docs/mutants.md shows the ledger's tally as it is.
    #[test]
    fn the_docs_table_is_the_ledgers_tally() {
        let root = crate::util::workspace_root();
        let fresh = tally_ledger(&root).unwrap();
        let doc = std::fs::read_to_string(root.join("docs/mutants.md")).unwrap();
        assert!(
            doc.contains(&fresh),
            "docs/mutants.md does not hold the ledger's tally; paste `cargo xtask mutants --tally`:\n{fresh}"
        );
    }
}
