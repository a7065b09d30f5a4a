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
//!   `docs/mutants/shard-K-of-N.txt`, the ledger the tally reads;
//! - it takes every shard of a run at one commit (round-robin shards of
//!   two different mutant lists overlap and leave gaps), and counts tests
//!   written later only by re-running the survivors whose code is
//!   unchanged at `HEAD` (`--recheck`).

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
/// How long one mutant's tests may run in `--recheck`, which runs both
/// tiers: about 100 s unmutated on two cores, 230 s while a shard runs
/// beside it.
const ALL_TESTS_TIMEOUT_S: &str = "600";
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
/// tier that the slow tests caught; `CaughtLater` a survivor that the
/// tests of a later commit caught, its code being unchanged there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Caught,
    CaughtSlow,
    CaughtLater,
    Missed,
    Timeout,
    Unviable,
}

impl Outcome {
    const ALL: [Outcome; 6] = [
        Outcome::Caught,
        Outcome::CaughtSlow,
        Outcome::CaughtLater,
        Outcome::Missed,
        Outcome::Timeout,
        Outcome::Unviable,
    ];
    fn word(self) -> &'static str {
        match self {
            Outcome::Caught => "caught",
            Outcome::CaughtSlow => "caught-slow",
            Outcome::CaughtLater => "caught-later",
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
/// The shard is taken at the commit the ledger's shards were taken at
/// ([`pinned`]), or at `HEAD` when none is recorded. A finished run of
/// the shard already in `target/mutants` at that commit is recorded
/// without running again.
pub fn run(root: &Path, shard: Shard) -> Result<String> {
    let pin = pinned(&root.join(LEDGER_DIR))?;
    let out = out_dir(root, shard);
    let stamp = out.join("commit");
    let recorded = std::fs::read_to_string(&stamp).ok();
    // A finished report is reused only if it was taken where this run
    // would be: at the pin, or at `HEAD` when no shard is recorded yet.
    let want = match &pin {
        Some(p) => p.clone(),
        None => head_of(root)?,
    };
    let commit = match recorded {
        Some(c) if finished(&out.join("mutants.out")) && c.trim() == want => c.trim().to_owned(),
        _ => {
            ensure_tool()?;
            apt::ensure()?;
            headers::ensure(root)?;
            let tree = prepare_tree(root, pin.as_deref().unwrap_or("HEAD"), TREE)?;
            let build = root.join("target/mutants/build");
            let oracle = Oracle::read(&tree)?;
            oracle.check_unmutated(&tree, &build)?;
            let commit = head_of(&tree)?;
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(&out)?;
            std::fs::write(&stamp, &commit)?;
            let shard_arg = format!("{}/{}", shard.index, shard.count);
            mutate(
                &tree,
                &build,
                &out,
                TEST_TIMEOUT_S,
                &["--shard", &shard_arg],
            )?;
            commit
        }
    };
    let outcomes = read_outcomes(&out.join("mutants.out"))?;
    let header = Header {
        commit: &commit,
        slow: false,
        rechecked: None,
    };
    let path = write_shard(root, shard, &header, &outcomes)?;
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
    let rechecked = rechecked_at(&text);
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
        let tree = prepare_tree(root, &commit, TREE)?;
        let build = root.join("target/mutants/build");
        let config = slow_config(
            &tree,
            &root.join("target/mutants/slow.toml"),
            &files_of(&survivors),
        )?;
        let out = out_dir(root, shard).join("slow");
        let mut args: Vec<String> = vec!["--config".into(), config.display().to_string()];
        for m in &survivors {
            args.push("--re".into());
            args.push(format!("^{}$", regex::escape(m)));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        mutate(&tree, &build, &out, TEST_TIMEOUT_S, &args)?;
        for (m, o) in read_outcomes(&out.join("mutants.out"))? {
            if o == Outcome::Caught && outcomes.get(&m) == Some(&Outcome::Missed) {
                outcomes.insert(m, Outcome::CaughtSlow);
            }
        }
    }
    let header = Header {
        commit: &commit,
        slow: true,
        rechecked: rechecked.as_deref(),
    };
    let path = write_shard(root, shard, &header, &outcomes)?;
    Ok(format!(
        "mutants: slow tier of shard {}/{} at {commit} recorded in {}\n{}",
        shard.index,
        shard.count,
        path.display(),
        render_table(&tally(&outcomes))
    ))
}

/// Re-runs a recorded shard's survivors (`missed`, `timeout`) with every
/// test of `HEAD`, fast and slow tiers both, and marks the ones caught
/// `caught-later`. Only a survivor whose code is unchanged at `HEAD` is
/// re-run: cargo-mutants lists it under the same name there, and its
/// file reads the same up to the file's test module ([`same_code`]).
/// The others are listed as not rechecked. `only`, a regular expression,
/// narrows the survivors re-run to the names it matches.
pub fn recheck(root: &Path, shard: Shard, only: Option<&str>) -> Result<String> {
    let only = only
        .map(regex::Regex::new)
        .transpose()
        .context("--only is not a regular expression")?;
    let path = root.join(LEDGER_DIR).join(shard.file_name());
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("no recorded shard {}: run it first", path.display()))?;
    let commit = commit_of(&text).context("the shard file names no commit")?;
    let slow = text
        .lines()
        .next()
        .is_some_and(|l| l.contains("slow tier: run"));
    let mut outcomes = BTreeMap::new();
    parse_shard(&text, &mut outcomes)?;
    let survivors: Vec<String> = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Missed | Outcome::Timeout))
        .map(|(m, _)| m.clone())
        .filter(|m| only.as_ref().is_none_or(|r| r.is_match(m)))
        .collect();
    if survivors.is_empty() {
        bail!(
            "no survivor of shard {}/{} to recheck",
            shard.index,
            shard.count
        );
    }
    ensure_tool()?;
    apt::ensure()?;
    headers::ensure(root)?;
    let tree = prepare_tree(root, "HEAD", RECHECK_TREE)?;
    let head = head_of(&tree)?;
    let listed = list_mutants(&tree)?;
    let mut run_again = Vec::new();
    let mut changed = Vec::new();
    for m in survivors {
        let file = m.split(':').next().unwrap_or(&m);
        let unchanged = listed.contains(&m)
            && same_code(&file_at(root, &commit, file)?, &file_at(root, &head, file)?);
        if unchanged {
            run_again.push(m);
        } else {
            changed.push(m);
        }
    }
    let mut caught = 0;
    if !run_again.is_empty() {
        let build = root.join("target/mutants/build-recheck");
        let config = all_tests_config(
            &tree,
            &root.join("target/mutants/all-tests.toml"),
            &files_of(&run_again),
        )?;
        Oracle::read_from(&config)?.check_unmutated(&tree, &build)?;
        let out = root.join(format!(
            "target/mutants/recheck-{}-of-{}",
            shard.index, shard.count
        ));
        let _ = std::fs::remove_dir_all(&out);
        let mut args: Vec<String> = vec!["--config".into(), config.display().to_string()];
        for m in &run_again {
            args.push("--re".into());
            args.push(format!("^{}$", regex::escape(m)));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        mutate(&tree, &build, &out, ALL_TESTS_TIMEOUT_S, &args)?;
        for (m, o) in read_outcomes(&out.join("mutants.out"))? {
            if o == Outcome::Caught && run_again.contains(&m) {
                outcomes.insert(m, Outcome::CaughtLater);
                caught += 1;
            }
        }
    }
    let header = Header {
        commit: &commit,
        slow,
        rechecked: Some(&head),
    };
    let path = write_shard(root, shard, &header, &outcomes)?;
    let mut s = format!(
        "mutants: survivors of shard {}/{} (taken at {commit}) rechecked with the tests of {head}: \
         {} re-run, {caught} caught; recorded in {}\n",
        shard.index,
        shard.count,
        run_again.len(),
        path.display()
    );
    if !changed.is_empty() {
        let _ = writeln!(s, "not rechecked (their code changed since):");
        for m in &changed {
            let _ = writeln!(s, "  {m}");
        }
    }
    s.push_str(&render_table(&tally(&outcomes)));
    Ok(s)
}

/// Every mutant name cargo-mutants makes of `tree`'s scope.
fn list_mutants(tree: &Path) -> Result<std::collections::BTreeSet<String>> {
    let text = output(
        Command::new("cargo")
            .current_dir(tree)
            .args(["mutants", "--list"]),
    )?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect())
}

/// `file`'s text at `rev`; empty where it does not exist.
fn file_at(root: &Path, rev: &str, file: &str) -> Result<String> {
    let out = Command::new("git")
        .current_dir(root)
        .args(["show", &format!("{rev}:{file}")])
        .output()
        .context("running git show")?;
    Ok(if out.status.success() {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        String::new()
    })
}

/// Whether two versions of a source file hold the same code: the same
/// text up to the file's test module (an unindented `#[cfg(test)]` whose
/// next line opens a `mod`), and both non-empty. Tests added there change
/// no mutant; any other edit may.
fn same_code(before: &str, after: &str) -> bool {
    fn code(text: &str) -> Vec<&str> {
        let lines: Vec<&str> = text.lines().collect();
        let end = lines
            .windows(2)
            .position(|w| w[0] == "#[cfg(test)]" && w[1].starts_with("mod "))
            .unwrap_or(lines.len());
        let mut code = lines[..end].to_vec();
        // A test module appended to a file that had none leaves a blank
        // line before it.
        while code.last().is_some_and(|l| l.trim().is_empty()) {
            code.pop();
        }
        code
    }
    !before.is_empty() && code(before) == code(after)
}

/// `.cargo/mutants.toml` narrowed to `files`, with the fast tier's test
/// filter dropped: every test of the oracle, fast and slow.
fn all_tests_config(tree: &Path, to: &Path, files: &[String]) -> Result<PathBuf> {
    let mut t = narrowed(tree, files)?;
    let args = t
        .get_mut("additional_cargo_test_args")
        .and_then(|v| v.as_array_mut())
        .context("no additional_cargo_test_args")?;
    let at = args
        .iter()
        .position(|a| a.as_str() == Some("-E"))
        .context("the fast tier has no -E filter")?;
    args.drain(at..(at + 2).min(args.len()));
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(to, toml::to_string(&t)?)?;
    Ok(to.to_path_buf())
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

/// The files the mutants named are in, each once.
fn files_of<S: AsRef<str>>(mutants: &[S]) -> Vec<String> {
    let files: std::collections::BTreeSet<&str> = mutants
        .iter()
        .map(|m| m.as_ref().split(':').next().unwrap_or(m.as_ref()))
        .collect();
    files.into_iter().map(str::to_owned).collect()
}

/// `.cargo/mutants.toml` with its scope narrowed to `files`. `--re`
/// alone does not narrow a run: cargo-mutants 27.1.0 keeps every "delete
/// field" mutant of the scope whatever the patterns say.
fn narrowed(tree: &Path, files: &[String]) -> Result<toml::Table> {
    let text = std::fs::read_to_string(tree.join(".cargo/mutants.toml"))?;
    let mut t: toml::Table = text.parse()?;
    let globs = files.iter().cloned().map(toml::Value::String).collect();
    t.insert("examine_globs".into(), toml::Value::Array(globs));
    Ok(t)
}

/// `.cargo/mutants.toml` narrowed to `files`, with the fast tier's test
/// filter turned round: the slow tier runs only the tests the fast tier
/// leaves out.
fn slow_config(tree: &Path, to: &Path, files: &[String]) -> Result<PathBuf> {
    let mut t = narrowed(tree, files)?;
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
    header: &Header<'_>,
    outcomes: &BTreeMap<String, Outcome>,
) -> Result<PathBuf> {
    let dir = root.join(LEDGER_DIR);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(shard.file_name());
    std::fs::write(&path, render_shard(shard, header, outcomes))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The commit a shard file's first line names.
fn commit_of(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    let rest = first.split(", at ").nth(1)?;
    Some(rest.split(';').next()?.trim().to_owned())
}

/// The commit whose tests last re-ran a shard file's survivors.
fn rechecked_at(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    let rest = first.split("; caught-later means caught at ").nth(1)?;
    Some(rest.split(';').next()?.trim().to_owned())
}

/// The commit every recorded shard was taken at; `None` with no shard
/// recorded. Shards at two commits are refused: round-robin shards deal
/// the mutant list, and a code change shifts the list, so shards of two
/// commits test some mutants twice and others never.
pub fn pinned(dir: &Path) -> Result<Option<String>> {
    let mut at: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in ledger_files(dir)? {
        let text = std::fs::read_to_string(&f)?;
        let c = commit_of(&text).with_context(|| format!("{} names no commit", f.display()))?;
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        at.entry(c).or_default().extend(name);
    }
    if at.len() > 1 {
        let list: Vec<String> = at
            .iter()
            .map(|(c, files)| format!("{c}: {}", files.join(", ")))
            .collect();
        bail!(
            "the ledger's shards were taken at different commits, so they do not add up \
             (a code change shifts the mutant list): {}; take them again at one commit",
            list.join("; ")
        );
    }
    Ok(at.into_keys().next())
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

/// The worktree shards are taken in, under `target/mutants`.
const TREE: &str = "tree";
/// The worktree `--recheck` runs `HEAD`'s tests in, so that a shard can
/// run at the same time.
const RECHECK_TREE: &str = "recheck-tree";

/// A clean detached worktree of `rev` at target/mutants/`name`, with the
/// checkout's `target/artifacts` (the Linux headers the tests read) linked
/// in.
fn prepare_tree(root: &Path, rev: &str, name: &str) -> Result<PathBuf> {
    let tree = root.join("target/mutants").join(name);
    refuse_if_busy(&tree)?;
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
        Oracle::read_from(&tree.join(".cargo/mutants.toml"))
    }

    fn read_from(path: &Path) -> Result<Oracle> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
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

/// Refuses a worktree that a process is working in: a second
/// `cargo xtask mutants`, or the `cargo mutants` of one that was killed (it
/// goes on mutating the tree in place, and a run beside it measures its
/// mutants, not its own). Processes are found by their working directory.
fn refuse_if_busy(tree: &Path) -> Result<()> {
    let busy = processes_in(tree);
    if busy.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = busy.iter().map(|(p, c)| format!("{p} ({c})")).collect();
    let pids: Vec<String> = busy.iter().map(|(p, _)| p.to_string()).collect();
    bail!(
        "{} is in use by process {}: another `cargo xtask mutants`, or the `cargo mutants` \
         of one that was stopped, is still mutating it. Wait for it to end, or stop it with \
         `kill {}`",
        tree.display(),
        list.join(", "),
        pids.join(" ")
    )
}

/// The processes (pid, command name) whose working directory is `dir` or
/// below it, other than this one.
fn processes_in(dir: &Path) -> Vec<(u32, String)> {
    let me = std::process::id();
    let Ok(dir) = dir.canonicalize() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<(u32, String)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .map(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            (pid, comm.trim().to_owned())
        })
        .collect();
    found.sort();
    found
}

/// Runs cargo-mutants in place in `tree` with `extra` arguments, writing
/// its report under `out`. Exit codes 2 (missed mutants) and 3 (timeouts)
/// are results, not failures.
fn mutate(tree: &Path, build: &Path, out: &Path, timeout_s: &str, extra: &[&str]) -> Result<()> {
    let status = Command::new("cargo")
        .current_dir(tree)
        .env("CARGO_TARGET_DIR", build)
        .args(["mutants", "--in-place", "--baseline=skip"])
        .args(["--timeout", timeout_s, "--build-timeout", BUILD_TIMEOUT_S])
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

/// What a shard file's first line records besides the shard.
struct Header<'a> {
    /// The commit the shard was taken at.
    commit: &'a str,
    /// Whether the slow tier has run on its survivors.
    slow: bool,
    /// The commit whose tests last re-ran its survivors (`--recheck`).
    rechecked: Option<&'a str>,
}

fn render_shard(shard: Shard, h: &Header<'_>, outcomes: &BTreeMap<String, Outcome>) -> String {
    let tier = if h.slow { "run" } else { "not run yet" };
    let mut s = format!(
        "# cargo-mutants {VERSION}, shard {} of {}, at {}; scope and oracle: .cargo/mutants.toml; slow tier: {tier}",
        shard.index, shard.count, h.commit
    );
    if let Some(r) = h.rechecked {
        let _ = write!(s, "; caught-later means caught at {r}");
    }
    s.push('\n');
    for (m, o) in outcomes {
        let _ = writeln!(s, "{}\t{m}", o.word());
    }
    s
}

/// The shard files under `dir`, in name order.
fn ledger_files(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    Ok(files)
}

/// Every mutant of every shard file under `dir`, all taken at one
/// commit ([`pinned`]).
fn read_ledger(dir: &Path) -> Result<(usize, BTreeMap<String, Outcome>)> {
    pinned(dir)?;
    let files = ledger_files(dir)?;
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

type Counts = [usize; 6];

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

/// Caught over viable (everything but unviable): by the shard's own
/// commit's tests (either tier), and with the later tests' catches too.
fn caught_percent(c: &Counts) -> Option<(f64, f64)> {
    let at_commit = c[Outcome::Caught as usize] + c[Outcome::CaughtSlow as usize];
    let later = at_commit + c[Outcome::CaughtLater as usize];
    let viable: usize = c.iter().sum::<usize>() - c[Outcome::Unviable as usize];
    (viable > 0).then(|| {
        let pct = |n: usize| 100.0 * n as f64 / viable as f64;
        (pct(at_commit), pct(later))
    })
}

fn render_table(rows: &[(String, Counts)]) -> String {
    let mut s = String::from(
        "| module | mutants | caught | caught by the slow tests | caught by later tests | missed | timeout | unviable | caught of viable, at the shard's commit | with later tests |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, c) in rows {
        let (at, later) = caught_percent(c).map_or(("-".to_owned(), "-".to_owned()), |(a, l)| {
            (format!("{a:.1} %"), format!("{l:.1} %"))
        });
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {at} | {later} |",
            c.iter().sum::<usize>(),
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            c[5]
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
        let header = Header {
            commit: "abc",
            slow: false,
            rechecked: None,
        };
        let text = render_shard(Shard { index: 0, count: 2 }, &header, &o);
        assert!(text.starts_with("# cargo-mutants 27.1.0, shard 0 of 2, at abc;"));
        assert_eq!(commit_of(&text).as_deref(), Some("abc"));
        assert_eq!(rechecked_at(&text), None);
        let again = Header {
            rechecked: Some("def"),
            ..header
        };
        let text2 = render_shard(Shard { index: 0, count: 2 }, &again, &o);
        assert_eq!(commit_of(&text2).as_deref(), Some("abc"));
        assert_eq!(rechecked_at(&text2).as_deref(), Some("def"));
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
            ("bringup/src/lib.rs:2:1: replace v", Outcome::CaughtLater),
        ] {
            o.insert(m.to_owned(), out);
        }
        let rows = tally(&o);
        let get = |k: &str| rows.iter().find(|r| r.0 == k).unwrap().1;
        assert_eq!(get("`runtime/src/gfx/hws`"), [1, 0, 0, 1, 0, 0]);
        assert_eq!(get("`runtime/src/gfx`"), [0, 0, 0, 0, 0, 1]);
        assert_eq!(get("MI300 path"), [1, 0, 0, 1, 0, 0]);
        assert_eq!(get("**all**"), [1, 1, 1, 1, 0, 1]);
        // Of 4 viable: 2 caught at the shard's commit (one by the slow
        // tests), 3 with the later tests' catch.
        let table = render_table(&rows);
        assert!(
            table.contains("| **all** | 5 | 1 | 1 | 1 | 1 | 0 | 1 | 50.0 % | 75.0 % |"),
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
                .any(|a| a.starts_with("not (test(/^hang::/)"))
        );
    }

    /// The slow tier's config is the committed one with the fast tier's
    /// filter negated, and nothing else changed.
    #[test]
    fn the_slow_tier_runs_what_the_fast_tier_leaves_out() {
        let root = crate::util::workspace_root();
        let dir = root.join("target/mutants-test");
        std::fs::create_dir_all(&dir).unwrap();
        let files = files_of(&[
            "bringup/src/queue.rs:257:24: replace + with - in point_vmid",
            "bringup/src/queue.rs:250:34: replace - with + in point_vmid",
            "runtime/src/gfx/mes/legacy.rs:76:9: replace free_slot",
        ]);
        assert_eq!(
            files,
            ["bringup/src/queue.rs", "runtime/src/gfx/mes/legacy.rs"]
        );
        let path = slow_config(&root, &dir.join("slow.toml"), &files).unwrap();
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
        assert_eq!(
            slow["examine_globs"],
            toml::Value::Array(files.iter().cloned().map(toml::Value::String).collect())
        );
        assert_eq!(slow["test_package"], fast["test_package"]);

        // The recheck runs every test: no filter at all.
        let path = all_tests_config(&root, &dir.join("all.toml"), &files).unwrap();
        let all: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
        let args = all["additional_cargo_test_args"].as_array().unwrap();
        assert!(args.iter().all(|a| a.as_str() != Some("-E")), "{args:?}");
        assert_eq!(
            args.len() + 2,
            fast["additional_cargo_test_args"].as_array().unwrap().len()
        );
        assert_eq!(all["examine_globs"], slow["examine_globs"]);
    }

    /// Shards taken at two commits are refused, by name.
    #[test]
    fn shards_of_two_commits_do_not_add_up() {
        let dir = crate::util::workspace_root().join("target/mutants-test/ledger");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(pinned(&dir).unwrap(), None);
        let o: BTreeMap<String, Outcome> = [(
            "bringup/src/lib.rs:1:1: replace a".to_owned(),
            Outcome::Caught,
        )]
        .into();
        let write = |k: u32, commit: &str| {
            let h = Header {
                commit,
                slow: false,
                rechecked: None,
            };
            let shard = Shard { index: k, count: 4 };
            std::fs::write(dir.join(shard.file_name()), render_shard(shard, &h, &o)).unwrap();
        };
        write(0, "aaa");
        write(1, "aaa");
        assert_eq!(pinned(&dir).unwrap().as_deref(), Some("aaa"));
        write(2, "bbb");
        let e = pinned(&dir).unwrap_err().to_string();
        assert!(
            e.contains("aaa: shard-00-of-04.txt, shard-01-of-04.txt"),
            "{e}"
        );
        assert!(e.contains("bbb: shard-02-of-04.txt"), "{e}");
        assert!(read_ledger(&dir).is_err());
    }

    /// A survivor is rechecked only where its code is the same: edits in
    /// the test module at the end do not count, any other edit does.
    #[test]
    fn only_unchanged_code_is_rechecked() {
        let before = "fn a() {}\nfn b() {}\n\n#[cfg(test)]\nmod tests {}\n";
        let tests_grew = "fn a() {}\nfn b() {}\n\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
        let code_moved = "fn a() {}\n\nfn b() {}\n\n#[cfg(test)]\nmod tests {}\n";
        assert!(same_code(before, before));
        assert!(same_code(before, tests_grew));
        assert!(!same_code(before, code_moved));
        assert!(!same_code(before, "fn a() {}\n"));
        // A test-only item inside the code is code's neighbour, not the
        // test module: what follows it still counts.
        let helper = "#[cfg(test)]\nuse x;\nfn a() {}\n";
        assert!(!same_code(helper, "#[cfg(test)]\nuse x;\nfn a() { b() }\n"));
        assert!(!same_code("", ""));
        // A first test module appended after a blank line.
        let none = "fn a() {}\n";
        assert!(same_code(none, "fn a() {}\n\n#[cfg(test)]\nmod tests {}\n"));
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

    /// A process working in a tree (as an orphaned `cargo mutants` does)
    /// makes the tree busy, named with its pid; once it ends, the tree is
    /// free again.
    #[test]
    fn a_tree_with_a_process_in_it_is_refused_by_pid() {
        let dir = crate::util::workspace_root().join("target/mutants-test/busy-tree");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let mut child = Command::new("sleep")
            .arg("30")
            .current_dir(dir.join("sub"))
            .spawn()
            .unwrap();
        let err = refuse_if_busy(&dir).unwrap_err().to_string();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(err.contains(&format!("{} (sleep)", child.id())), "{err}");
        assert!(err.contains(&format!("kill {}", child.id())), "{err}");
        refuse_if_busy(&dir).unwrap();
    }
}
