//! docs/introspection.md stays true: every ```console block's `$ barebell
//! …` line is run on the model and its output must equal the block's
//! remaining lines. Lines starting with `> ` are shell commands: the shell
//! echoes each one, so they are both the stdin fed to it and part of the
//! expected output. `BAREBELL_BLESS_DOCS=1` rewrites the blocks instead.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn run(cmd: &str, stdin: &str) -> String {
    let args: Vec<String> = cmd
        .split_whitespace()
        .map(|a| a.trim_matches('\'').to_string())
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "barebell {cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_documented_command_prints_what_the_doc_shows() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/introspection.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let bless = std::env::var_os("BAREBELL_BLESS_DOCS").is_some();
    let mut out = String::new();
    let mut lines = text.lines();
    let mut blocks = 0;
    while let Some(l) = lines.next() {
        out.push_str(l);
        out.push('\n');
        if l != "```console" {
            continue;
        }
        let mut body: Vec<&str> = Vec::new();
        for b in lines.by_ref() {
            if b == "```" {
                break;
            }
            body.push(b);
        }
        let cmd = body
            .first()
            .and_then(|c| c.strip_prefix("$ barebell "))
            .unwrap_or_else(|| panic!("a console block starts with `$ barebell`: {body:?}"));
        let typed: Vec<&str> = body.iter().filter_map(|b| b.strip_prefix("> ")).collect();
        let stdin: String = typed.iter().map(|t| format!("{t}\n")).collect();
        let got = run(cmd, &stdin);
        let want: String = body[1..].iter().map(|b| format!("{b}\n")).collect();
        if !bless {
            assert_eq!(got, want, "docs/introspection.md: `barebell {cmd}`");
        }
        out.push_str(body[0]);
        out.push('\n');
        out.push_str(&got);
        out.push_str("```\n");
        blocks += 1;
    }
    assert!(blocks >= 6, "{blocks} console blocks");
    if bless {
        std::fs::write(&path, out).unwrap();
    }
}
