//! The model decodes what a driver sends with its own code, written from
//! the headers: if it used the runtime's decoders, a layout bug would be
//! mirrored instead of caught. This test reads the model's sources and
//! holds them to that rule: of the runtime (`barebell`), only the
//! interfaces (`bus`, `platform`, `time`, `ip`) and the register offset
//! tables in `barebell::regs` (checked against Linux's headers by the
//! conformance facts); nothing of `barebell-firmware-if`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

/// Runtime modules the model may name.
const ALLOWED: &[&str] = &["bus", "platform", "time", "ip", "regs"];

/// Named exceptions: a test that reads the model's own output back with
/// the runtime's parser, as a second, independent reading.
const EXCEPTIONS: &[(&str, &str)] = &[("discovery.rs", "barebell::discovery::Discovery::parse")];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `barebell::<module>` and `barebell_firmware_if` named in `text`,
/// outside comments, with the rest of its line.
fn runtime_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for needle in ["barebell::", "barebell_firmware_if"] {
            let mut rest = code;
            while let Some(i) = rest.find(needle) {
                // `barebell_model::`, `barebell_decode::` are other crates.
                let before = rest[..i].chars().last();
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    found.push((n + 1, rest[i..].trim_end().to_string()));
                }
                rest = &rest[i + needle.len()..];
            }
        }
    }
    found
}

#[test]
fn the_model_names_only_the_runtime_s_interfaces_and_register_tables() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "read {} files under {src:?}", files.len());
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        for (line, path) in runtime_paths(&text) {
            let module = path.strip_prefix("barebell::").map(|r| {
                r.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")
            });
            let ok = match module {
                Some(m) => ALLOWED.contains(&m),
                None => false,
            } || EXCEPTIONS
                .iter()
                .any(|(file, p)| *file == name && path.starts_with(p));
            if !ok {
                bad.push(format!("{}:{line}: {path}", f.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "runtime code the model must not use:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scan_sees_what_it_must_refuse() {
    let text = "use barebell::mqd::Mqd;\nuse barebell_firmware_if::source::X;\n// barebell::kiq in a comment\nlet x = barebell_model::Part;\nuse barebell::regs::Reg;\n";
    let found = runtime_paths(text);
    let lines: Vec<usize> = found.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [1, 2, 5]);
    assert!(found[0].1.starts_with("barebell::mqd"));
}
