//! The conformance check: every Rust fact against the public header it
//! claims to come from.
//!
//! For each header key the library tables mention, this writes one C
//! program that includes the real header and prints, for each fact, the
//! header's own value of the probe expression (`sizeof`, `offsetof`, a
//! macro or enumerator). The program is compiled with the system `cc` and
//! run; its output is diffed against the Rust values.
//!
//! A probe that does not compile (a misspelt field, a register the header
//! does not define) is not allowed to sink the whole header: the compiler's
//! error lines are mapped back to the facts that produced them, those facts
//! are reported as having no C counterpart, and the rest is recompiled.

use crate::headers::{self, LinuxHeaders};
use crate::util::output;
use anyhow::{Context, Result, bail};
use barebell_facts::Fact;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fact together with the crate that declared it.
#[derive(Debug, Clone, Copy)]
pub struct Tagged {
    pub krate: &'static str,
    pub fact: Fact,
}

/// How one fact fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Match,
    Mismatch {
        header_value: u64,
    },
    /// The header has no such name (or the probe does not compile); the
    /// string is the compiler's first error for it, or the reason the
    /// header could not be found.
    NoCounterpart(String),
}

#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<(Tagged, String, Verdict)>,
}

impl Report {
    pub fn failures(&self) -> impl Iterator<Item = &(Tagged, String, Verdict)> {
        self.rows.iter().filter(|r| r.2 != Verdict::Match)
    }

    pub fn ok(&self) -> bool {
        self.failures().next().is_none()
    }

    /// One line per failing fact, naming the fact, the crate, the header
    /// (key and resolved path) and both values.
    pub fn render_failures(&self) -> String {
        let mut s = String::new();
        for (t, path, v) in self.failures() {
            let f = &t.fact;
            match v {
                Verdict::Mismatch { header_value } => {
                    let _ = writeln!(
                        s,
                        "MISMATCH {} [{}] in {} ({}): rust = {} ({:#x}), header = {} ({:#x})",
                        f.probe,
                        t.krate,
                        f.header,
                        path,
                        f.value,
                        f.value,
                        header_value,
                        header_value
                    );
                }
                Verdict::NoCounterpart(why) => {
                    let _ = writeln!(
                        s,
                        "NO C COUNTERPART {} [{}] in {} ({}): rust = {} ({:#x}); {}",
                        f.probe, t.krate, f.header, path, f.value, f.value, why
                    );
                }
                Verdict::Match => {}
            }
        }
        s
    }
}

/// Every fact the three library crates export.
pub fn library_facts() -> Vec<Tagged> {
    barebell_catalog::all_facts()
        .map(|(krate, fact)| Tagged { krate, fact: *fact })
        .collect()
}

/// The `conformance` stage: all library facts must match.
pub fn run_all(root: &Path) -> Result<String> {
    let linux = headers::ensure(root)?;
    let facts = library_facts();
    let report = check(root, &linux, &facts)?;
    if !report.ok() {
        bail!(
            "{} of {} facts disagree with the public headers:\n{}",
            report.failures().count(),
            report.rows.len(),
            report.render_failures()
        );
    }
    let headers: std::collections::BTreeSet<_> = facts.iter().map(|t| t.fact.header).collect();
    // `barebell regs`'s name tables, generated from the same headers.
    let tables = crate::reg_tables::run(root, true)?;
    Ok(format!(
        "{} facts match across {} headers; {tables}",
        report.rows.len(),
        headers.len()
    ))
}

/// The harness's own test: a deliberately wrong fact and a fact with no C
/// counterpart must both be reported, naming fact, header and values.
pub fn self_test(root: &Path) -> Result<String> {
    let linux = headers::ensure(root)?;
    let good = library_facts()
        .into_iter()
        .find(|t| t.fact.probe == barebell_facts::Probe::Size("struct common_firmware_header"))
        .context("the firmware-if table lost its common_firmware_header size fact")?;
    let mut wrong = good;
    wrong.fact.value = good.fact.value + 1;
    wrong.krate = "self-test";
    let ghost = Tagged {
        krate: "self-test",
        fact: Fact::constant("gc_11_0_0_offset.h", "regBAREBELL_NO_SUCH_REGISTER", 7),
    };
    let report = check(root, &linux, &[wrong, ghost, good])?;
    let text = report.render_failures();
    let expect_mismatch = format!(
        "MISMATCH {} [self-test] in {} (",
        wrong.fact.probe, wrong.fact.header
    );
    let expect_values = format!(
        "rust = {} ({:#x}), header = {} ({:#x})",
        wrong.fact.value, wrong.fact.value, good.fact.value, good.fact.value
    );
    let expect_ghost =
        "NO C COUNTERPART regBAREBELL_NO_SUCH_REGISTER [self-test] in gc_11_0_0_offset.h (";
    for needle in [
        expect_mismatch.as_str(),
        expect_values.as_str(),
        expect_ghost,
    ] {
        if !text.contains(needle) {
            bail!("harness self-test: report lacks {needle:?}; it said:\n{text}");
        }
    }
    if report.failures().count() != 2 {
        bail!("harness self-test: expected exactly 2 failures, got:\n{text}");
    }
    Ok(format!(
        "a wrong fact and a missing name were both caught:\n{}",
        text.trim_end()
    ))
}

/// How to compile one header key in user space.
#[derive(Debug)]
struct Spec {
    include_dirs: Vec<PathBuf>,
    prelude: &'static str,
    include: String,
    /// Resolved path, for messages.
    path: String,
    /// Compile the probe as C++17 (LLVM's headers) instead of C.
    cxx: bool,
}

/// Just enough of the kernel's types and annotations for the amdgpu
/// headers to parse as user-space C. Structs that only appear as members
/// of driver-private structs (`struct mutex`) get opaque stand-ins; they
/// never occur inside the firmware/hardware layouts we measure.
pub(crate) const KERNEL_SHIM: &str = r#"#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
typedef uint8_t u8; typedef uint16_t u16; typedef uint32_t u32; typedef uint64_t u64;
typedef int8_t s8; typedef int16_t s16; typedef int32_t s32; typedef int64_t s64;
typedef uint16_t __le16; typedef uint32_t __le32; typedef uint64_t __le64;
struct mutex { int opaque_; };
struct amdgpu_device;
/* amdgpu_doorbell.h's struct amdgpu_doorbell */
typedef uint64_t resource_size_t;
#define __printf(a, b)
#define __packed __attribute__((packed))
/* aldebaran_ip_offset.h's struct IP_BASE */
#define __maybe_unused __attribute__((unused))
/* soc15_int.h's IV entry macros; the probes run little-endian */
#define le32_to_cpu(x) (x)
/* as include/uapi/linux/stddef.h defines __DECLARE_FLEX_ARRAY */
#define DECLARE_FLEX_ARRAY(TYPE, NAME) struct { struct { } __empty_##NAME; TYPE NAME[]; }
"#;

const HSA_PRELUDE: &str = "#include <stdint.h>\n#include <stdbool.h>\n#include <stddef.h>\n";

/// The uapi tree is used as extracted, before `make headers_install`
/// would strip the sparse annotation `__user` (vfio.h has one).
const UAPI_PRELUDE: &str =
    "#include <stdint.h>\n#include <stdbool.h>\n#include <stddef.h>\n#define __user\n";

/// LLVM 19's installed headers (Debian `llvm-19-dev`).
const LLVM_INCLUDE: &str = "/usr/lib/llvm-19/include";

/// Keys `llvm/...` name LLVM 19 C++ headers (`llvm/BinaryFormat/ELF.h`,
/// `llvm/Support/AMDHSAKernelDescriptor.h`); probes use C++ names such as
/// `llvm::ELF::EM_AMDGPU`.
fn llvm_spec(key: &str) -> Result<Spec, String> {
    let root = Path::new(LLVM_INCLUDE);
    let path = root.join(key);
    if !path.exists() {
        return Err(format!("{} not found (llvm-19-dev)", path.display()));
    }
    Ok(Spec {
        include_dirs: vec![root.to_path_buf()],
        prelude: "#include <cstddef>\n#include <cstdint>\n",
        include: format!("#include <{key}>"),
        path: path.display().to_string(),
        cxx: true,
    })
}

fn spec_for(key: &str, linux: &LinuxHeaders) -> Result<Spec, String> {
    if key.starts_with("llvm/") {
        return llvm_spec(key);
    }
    if key.starts_with("hsa/") {
        let path = Path::new("/usr/include").join(key);
        if !path.exists() {
            return Err(format!("{} not found (libhsa-runtime-dev)", path.display()));
        }
        return Ok(Spec {
            include_dirs: vec![],
            prelude: HSA_PRELUDE,
            include: format!("#include <{key}>"),
            path: path.display().to_string(),
            cxx: false,
        });
    }
    if key.starts_with("linux/") {
        let path = linux.uapi().join(key);
        if !path.exists() {
            return Err(format!("{} not extracted", path.display()));
        }
        return Ok(Spec {
            include_dirs: vec![linux.uapi()],
            prelude: UAPI_PRELUDE,
            include: format!("#include <{key}>"),
            path: path.display().to_string(),
            cxx: false,
        });
    }
    let amd = linux.amd();
    // `a.h+b.h`: a header that needs another included first
    // (`kfd_pm4_headers_aldebaran.h` uses `kfd_pm4_headers_ai.h`'s header union).
    if let Some((first, rest)) = key.split_once('+') {
        let mut spec = spec_for(first, linux)?;
        let next = spec_for(rest, linux)?;
        spec.include_dirs.extend(next.include_dirs);
        spec.include = format!("{}\n{}", spec.include, next.include);
        spec.path = format!("{} + {}", spec.path, next.path);
        return Ok(spec);
    }
    let found = find_file(&amd, key).ok_or_else(|| {
        format!(
            "no header named {key} under {} (is it in headers::WANTED?)",
            amd.display()
        )
    })?;
    let dir = found.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(Spec {
        include_dirs: vec![amd.join("include"), amd.join("amdgpu"), dir],
        prelude: KERNEL_SHIM,
        include: format!("#include \"{key}\""),
        path: found.display().to_string(),
        cxx: false,
    })
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut hits = Vec::new();
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|f| f == name) {
                hits.push(p);
            }
        }
    }
    hits.sort();
    hits.into_iter().next()
}

/// Checks `facts`, one compiled program per header key.
pub fn check(root: &Path, linux: &LinuxHeaders, facts: &[Tagged]) -> Result<Report> {
    let work = root.join("target/conformance");
    std::fs::create_dir_all(&work)?;
    let mut by_header: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, t) in facts.iter().enumerate() {
        by_header.entry(t.fact.header).or_default().push(i);
    }
    let mut verdicts: Vec<Option<(String, Verdict)>> = vec![None; facts.len()];
    for (key, idx) in by_header {
        let spec = match spec_for(key, linux) {
            Ok(s) => s,
            Err(why) => {
                for i in idx {
                    verdicts[i] = Some(("unresolved".into(), Verdict::NoCounterpart(why.clone())));
                }
                continue;
            }
        };
        let values = probe_header(&work, key, &spec, &idx, facts)?;
        for (i, v) in values {
            let verdict = match v {
                Ok(hv) if hv == facts[i].fact.value => Verdict::Match,
                Ok(hv) => Verdict::Mismatch { header_value: hv },
                Err(why) => Verdict::NoCounterpart(why),
            };
            verdicts[i] = Some((spec.path.clone(), verdict));
        }
    }
    let mut report = Report::default();
    for (t, v) in facts.iter().zip(verdicts) {
        let (path, verdict) = v.context("internal: a fact was never probed")?;
        report.rows.push((*t, path, verdict));
    }
    Ok(report)
}

/// The generated program: line numbers of probe lines are recorded so
/// that compiler errors can be attributed to facts.
fn generate(spec: &Spec, idx: &[usize], facts: &[Tagged]) -> (String, BTreeMap<usize, usize>) {
    let mut src = String::new();
    src.push_str("#include <stdio.h>\n");
    src.push_str(spec.prelude);
    src.push_str(&spec.include);
    src.push_str("\nint main(void) {\n");
    let mut line_of = BTreeMap::new();
    for &i in idx {
        let line = src.lines().count() + 1;
        line_of.insert(line, i);
        let _ = writeln!(
            src,
            "  printf(\"%d %llu\\n\", {i}, (unsigned long long)({}));",
            facts[i].fact.probe
        );
    }
    src.push_str("  return 0;\n}\n");
    (src, line_of)
}

/// Error lines (`file:LINE:COL: error: msg`) for `file`.
fn error_lines(stderr: &str, file: &str) -> Vec<(usize, String)> {
    let prefix = format!("{file}:");
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(&prefix)?;
            let mut parts = rest.splitn(3, ':');
            let line: usize = parts.next()?.parse().ok()?;
            let _col = parts.next()?;
            let msg = parts.next()?.trim();
            let msg = msg.strip_prefix("error:")?.trim();
            Some((line, msg.to_string()))
        })
        .collect()
}

type Probed = Vec<(usize, Result<u64, String>)>;

fn probe_header(
    work: &Path,
    key: &str,
    spec: &Spec,
    idx: &[usize],
    facts: &[Tagged],
) -> Result<Probed> {
    let stem: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let c_file = work.join(format!("{stem}.{}", if spec.cxx { "cpp" } else { "c" }));
    let bin = work.join(stem);
    let mut live: Vec<usize> = idx.to_vec();
    let mut out: Probed = Vec::new();
    // Each round removes at least one failing fact, so this terminates.
    loop {
        let (src, line_of) = generate(spec, &live, facts);
        std::fs::write(&c_file, &src)?;
        let mut cmd = if spec.cxx {
            let mut c = Command::new("c++");
            c.args(["-std=c++17", "-w", "-fmax-errors=0"]);
            c
        } else {
            let mut c = Command::new("cc");
            c.args(["-std=gnu11", "-w", "-fmax-errors=0"]);
            c
        };
        for d in &spec.include_dirs {
            cmd.arg("-I").arg(d);
        }
        cmd.arg(&c_file).arg("-o").arg(&bin);
        let res = cmd.output().context("running cc (install gcc)")?;
        if res.status.success() {
            break;
        }
        let stderr = String::from_utf8_lossy(&res.stderr);
        let file = c_file.display().to_string();
        let mut failed: BTreeMap<usize, String> = BTreeMap::new();
        for (line, msg) in error_lines(&stderr, &file) {
            if let Some(&i) = line_of.get(&line) {
                failed.entry(i).or_insert(msg);
            }
        }
        if failed.is_empty() {
            bail!(
                "{key} ({}) does not compile as user-space C, independent of any fact:\n{stderr}",
                spec.path
            );
        }
        live.retain(|i| !failed.contains_key(i));
        for (i, msg) in failed {
            out.push((i, Err(format!("compiler: {msg}"))));
        }
        if live.is_empty() {
            return Ok(out);
        }
    }
    let stdout = output(&mut Command::new(&bin))?;
    let mut seen = std::collections::BTreeSet::new();
    for line in stdout.lines() {
        let (i, v) = line
            .split_once(' ')
            .with_context(|| format!("bad probe output line {line:?}"))?;
        let i: usize = i.parse()?;
        let v: u64 = v.parse()?;
        seen.insert(i);
        out.push((i, Ok(v)));
    }
    for i in live {
        if !seen.contains(&i) {
            bail!("probe program for {key} printed nothing for fact {i}");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_are_attributed_by_line() {
        let stderr = "/w/x.c: In function 'main':\n/w/x.c:12:45: error: 'regNOPE' undeclared (first use in this function)\n/w/x.c:12:45: note: each undeclared identifier is reported only once\n/w/hdr.h:3:1: error: in header\n/w/x.c:14:3: error: 'struct s' has no member named 'q'\n";
        assert_eq!(
            error_lines(stderr, "/w/x.c"),
            vec![
                (
                    12,
                    "'regNOPE' undeclared (first use in this function)".to_string()
                ),
                (14, "'struct s' has no member named 'q'".to_string()),
            ]
        );
    }

    #[test]
    fn generated_lines_map_to_facts() {
        let facts = [
            Tagged {
                krate: "k",
                fact: Fact::constant("h", "A", 1),
            },
            Tagged {
                krate: "k",
                fact: Fact::size("h", "struct b", 2),
            },
        ];
        let spec = Spec {
            include_dirs: vec![],
            prelude: "",
            include: "#include <h>".into(),
            path: "h".into(),
            cxx: false,
        };
        let (src, map) = generate(&spec, &[0, 1], &facts);
        let lines: Vec<&str> = src.lines().collect();
        for (line, i) in map {
            assert!(lines[line - 1].contains(&facts[i].fact.probe.to_string()));
            assert!(lines[line - 1].contains(&format!("\"%d %llu\\n\", {i},")));
        }
    }

    #[test]
    fn report_names_fact_header_and_both_values() {
        let t = Tagged {
            krate: "firmware-if",
            fact: Fact::size("amdgpu_ucode.h", "struct common_firmware_header", 31),
        };
        let r = Report {
            rows: vec![(
                t,
                "/x/amdgpu_ucode.h".into(),
                Verdict::Mismatch { header_value: 32 },
            )],
        };
        assert!(!r.ok());
        assert_eq!(
            r.render_failures(),
            "MISMATCH sizeof(struct common_firmware_header) [firmware-if] in amdgpu_ucode.h (/x/amdgpu_ucode.h): rust = 31 (0x1f), header = 32 (0x20)\n"
        );
    }
}
