//! docs/tutorial.md stays true, and the README and the tutorial name every
//! command the CLI has.
//!
//! The tutorial is run as a user would type it: fenced blocks whose info
//! string carries `file=NAME` are written into a scratch directory, and
//! every `$ ` line of a ```console block runs there through `sh -c` (so
//! `clang-19` and `sh` are real), with `barebell` on `PATH` being this
//! build's binary. Each command must succeed, and the lines under it must
//! appear in its output (stdout and stderr together), in order; `...`
//! inside a line stands for any text.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::path::{Path, PathBuf};
use std::process::Command;

const TUTORIAL: &str = "../docs/tutorial.md";

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// Whether `line` matches `pattern`, where `...` stands for any text.
fn matches(pattern: &str, line: &str) -> bool {
    let pieces: Vec<&str> = pattern.split("...").collect();
    let (first, rest) = pieces.split_first().unwrap();
    let Some(mut tail) = line.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return tail.is_empty();
    };
    for piece in middle {
        match tail.find(piece) {
            Some(at) => tail = &tail[at + piece.len()..],
            None => return false,
        }
    }
    tail.ends_with(last)
}

/// The first output line at or after `from` that `pattern` matches.
fn find(pattern: &str, out: &[&str], from: usize) -> Option<usize> {
    (from..out.len()).find(|&i| matches(pattern, out[i]))
}

struct Step {
    command: String,
    expect: Vec<String>,
}

/// The files and the commands of a tutorial page, in page order.
fn parse(text: &str) -> (Vec<(String, String)>, Vec<Step>) {
    let mut files = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        let Some(info) = l.strip_prefix("```") else {
            continue;
        };
        let body: Vec<&str> = lines.by_ref().take_while(|b| *b != "```").collect();
        if let Some(name) = info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("file="))
        {
            files.push((name.to_string(), body.join("\n") + "\n"));
        } else if info == "console" {
            for b in body {
                if let Some(c) = b.strip_prefix("$ ") {
                    steps.push(Step {
                        command: c.to_string(),
                        expect: Vec::new(),
                    });
                } else {
                    let step = steps.last_mut().expect("a console block starts with `$ `");
                    step.expect.push(b.to_string());
                }
            }
        }
    }
    (files, steps)
}

fn scratch() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tutorial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_tutorial_command_runs_and_prints_what_the_page_shows() {
    let (files, steps) = parse(&read(TUTORIAL));
    assert!(
        files.len() >= 2,
        "the tutorial writes its kernel and job: {files:?}"
    );
    assert!(steps.len() >= 15, "{} commands", steps.len());
    let dir = scratch();
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_barebell")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for step in &steps {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("exec 2>&1; {}", step.command))
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "docs/tutorial.md: `{}` failed ({}):\n{text}",
            step.command,
            out.status
        );
        let got: Vec<&str> = text.lines().collect();
        let mut at = 0;
        for want in &step.expect {
            match find(want, &got, at) {
                Some(i) => at = i + 1,
                None => panic!(
                    "docs/tutorial.md: `{}` printed no line matching `{want}` after line {at}:\n{text}",
                    step.command
                ),
            }
        }
    }
}

/// The subcommands `barebell --help` lists (clap's `help` aside).
fn subcommands() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let list = text
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap();
    let names: Vec<String> = list
        .lines()
        .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 12, "{names:?}");
    names
}

#[test]
fn the_readme_the_status_ledger_and_the_tutorial_name_every_command() {
    let readme = read("../README.md");
    let status = read("../docs/STATUS.md");
    let (_, steps) = parse(&read(TUTORIAL));
    for name in subcommands() {
        assert!(
            readme.contains(&format!("barebell {name}")),
            "README.md never names `barebell {name}`"
        );
        assert!(
            status.contains(&format!("barebell {name}")),
            "docs/STATUS.md never names `barebell {name}`"
        );
        let run = format!("barebell {name} ");
        assert!(
            steps
                .iter()
                .any(|s| format!("{} ", s.command).contains(&run)),
            "docs/tutorial.md runs no `barebell {name}`"
        );
    }
}

#[test]
fn the_pattern_matcher_keeps_its_promises() {
    assert!(matches("a ... c", "a b c"));
    assert!(matches("a...", "abc"));
    assert!(matches("...c", "abc"));
    assert!(matches("...", ""));
    assert!(!matches("a ... c", "a b d"));
    assert!(!matches("abc", "abcd"));
    assert!(!matches("...b...b...", "ab"));
    assert!(matches("x...x", "xx"));
    assert!(!matches("x...x", "x"));
}
