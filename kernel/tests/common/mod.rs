//! Test support: kernels built at test time with clang-19 / ld.lld-19, and
//! the expected values read from LLVM's own tools (llvm-readelf-19,
//! llvm-objdump-19, clang's assembly output), never from the crate.
// Test-only helpers: a failed tool run is a failed test.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const CLANG: &str = "clang-19";
pub const READELF: &str = "llvm-readelf-19";
pub const OBJDUMP: &str = "llvm-objdump-19";

/// OpenCL C test kernels, written with clang builtins only (`-nogpulib`
/// means no device library and no OpenCL work-item functions).
pub const KERNELS_CL: &str = include_str!("../kernels/kernels.cl");

/// Program-scope pointers: ld.lld emits R_AMDGPU_RELATIVE64 for them.
pub const RELOC_CL: &str = include_str!("../kernels/reloc.cl");

/// Default-visibility data in a shared object is preemptible, so ld.lld
/// emits R_AMDGPU_ABS64 against the symbol.
pub const ABS64_S: &str = include_str!("../kernels/abs64.s");

fn work_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernels");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?} ({e}); `cargo xtask deps` installs LLVM 19")
    });
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stem(parts: &[&str]) -> String {
    // A readable, collision-free file stem from the build inputs.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        h = (h ^ 0xff).wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A source compiled and linked to a code object.
#[derive(Debug, Clone)]
pub struct Built {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub mcpu: String,
    pub cov: u8,
    pub args: Vec<String>,
    pub src: PathBuf,
}

/// Builds `src` (language `lang`: "cl" or "assembler") for `mcpu` and code
/// object version `cov`, with `extra` flags.
pub fn build(src: &str, lang: &str, mcpu: &str, cov: u8, extra: &[&str]) -> Built {
    let cov_flag = format!("-mcode-object-version={cov}");
    let mut args: Vec<String> = vec![
        "-target".into(),
        "amdgcn-amd-amdhsa".into(),
        format!("-mcpu={mcpu}"),
        "-nogpulib".into(),
        cov_flag,
    ];
    if lang == "cl" {
        args.push("-O2".into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut key: Vec<&str> = vec![src, lang];
    key.extend(args.iter().map(String::as_str));
    let name = stem(&key);
    let dir = work_dir();
    let ext = if lang == "cl" { "cl" } else { "s" };
    let src_path = dir.join(format!("{name}.{ext}"));
    let out = dir.join(format!("{name}.co"));
    if !out.exists() {
        // Unique per call: two test threads of this process may build the
        // same kernel at once, and each renames its own output into place.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!("{name}.{}.{n}.tmp", std::process::id()));
        let src_tmp = dir.join(format!("{name}.{}.{n}.{ext}", std::process::id()));
        std::fs::write(&src_tmp, src).unwrap();
        std::fs::rename(&src_tmp, &src_path).unwrap();
        run(Command::new(CLANG)
            .args(&args)
            .arg("-x")
            .arg(lang)
            .arg(&src_path)
            .arg("-o")
            .arg(&tmp));
        std::fs::rename(&tmp, &out).unwrap();
    }
    Built {
        bytes: std::fs::read(&out).unwrap(),
        path: out,
        mcpu: mcpu.into(),
        cov,
        args,
        src: src_path,
    }
}

pub fn build_cl(src: &str, mcpu: &str, cov: u8, extra: &[&str]) -> Built {
    build(src, "cl", mcpu, cov, extra)
}

/// Every (processor, code object version) the test suite builds for.
pub const TARGETS: &[(&str, u8)] = &[
    ("gfx1100", 4),
    ("gfx1100", 5),
    ("gfx1100", 6),
    ("gfx1201", 4),
    ("gfx1201", 5),
    ("gfx1201", 6),
    ("gfx11-generic", 6),
    ("gfx12-generic", 6),
];

/// `llvm-readelf -h`: (ABI version, e_flags).
pub fn elf_header(b: &Built) -> (u8, u32) {
    let text = run(Command::new(READELF).arg("-h").arg(&b.path));
    let mut abi = None;
    let mut flags = None;
    for l in text.lines() {
        let l = l.trim();
        if let Some(v) = l.strip_prefix("ABI Version:") {
            abi = Some(v.trim().parse().unwrap());
        }
        if let Some(v) = l.strip_prefix("Flags:") {
            let hex = v.trim().split(',').next().unwrap().trim();
            flags = Some(u32::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap());
        }
    }
    (abi.unwrap(), flags.unwrap())
}

/// `llvm-readelf --dyn-syms`: name -> value.
pub fn dyn_syms(b: &Built) -> BTreeMap<String, u64> {
    let text = run(Command::new(READELF).arg("--dyn-syms").arg(&b.path));
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let value = (f.len() == 8 && f[0].ends_with(':'))
            .then(|| u64::from_str_radix(f[1], 16).ok())
            .flatten();
        if let Some(v) = value {
            m.insert(f[7].to_string(), v);
        }
    }
    m
}

/// `llvm-readelf -l`: PT_LOAD (offset, vaddr, filesz, memsz).
pub fn load_segments(b: &Built) -> Vec<(u64, u64, u64, u64)> {
    let text = run(Command::new(READELF).arg("-l").arg(&b.path));
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.first() == Some(&"LOAD")).then(|| (hex(f[1]), hex(f[2]), hex(f[4]), hex(f[5])))
        })
        .collect()
}

/// `llvm-objdump -s`: the bytes of every section, by address.
pub fn section_bytes(b: &Built) -> BTreeMap<u64, u8> {
    let text = run(Command::new(OBJDUMP).arg("-s").arg(&b.path));
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 2 || !l.starts_with(' ') {
            continue;
        }
        let Ok(addr) = u64::from_str_radix(f[0], 16) else {
            continue;
        };
        let mut a = addr;
        for w in &f[1..] {
            if w.len() % 2 != 0 || w.len() > 8 || !w.chars().all(|c| c.is_ascii_hexdigit()) {
                break;
            }
            for i in (0..w.len()).step_by(2) {
                m.insert(a, u8::from_str_radix(&w[i..i + 2], 16).unwrap());
                a += 1;
            }
            if w.len() < 8 {
                break;
            }
        }
    }
    m
}

/// `llvm-readelf -r`: (offset, type name, symbol value, addend).
pub fn relocations(b: &Built) -> Vec<(u64, String, u64, i64)> {
    let text = run(Command::new(READELF).arg("-r").arg(&b.path));
    let mut out = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 3 || !f[2].starts_with("R_AMDGPU_") {
            continue;
        }
        let off = u64::from_str_radix(f[0], 16).unwrap();
        if f.len() == 4 {
            // No symbol: "OFFSET INFO TYPE ADDEND".
            out.push((
                off,
                f[2].to_string(),
                0,
                i64::from_str_radix(f[3], 16).unwrap(),
            ));
        } else {
            // "OFFSET INFO TYPE VALUE NAME + ADDEND"
            let value = u64::from_str_radix(f[3], 16).unwrap();
            let addend = f.last().unwrap().parse::<i64>().unwrap();
            let sign = if f[f.len() - 2] == "-" { -1 } else { 1 };
            out.push((off, f[2].to_string(), value, sign * addend));
        }
    }
    out
}

/// A kernel as `llvm-readelf --notes` prints its metadata.
#[derive(Debug, Clone, Default)]
pub struct YamlKernel {
    pub keys: BTreeMap<String, String>,
    pub args: Vec<BTreeMap<String, String>>,
}

/// The top-level keys and kernels of `llvm-readelf --notes`. List values
/// (`amdhsa.version`, `.language_version`) are joined with commas.
pub fn notes(b: &Built) -> (BTreeMap<String, String>, Vec<YamlKernel>) {
    let text = run(Command::new(READELF).arg("--notes").arg(&b.path));
    let start = text.find("---").expect("no YAML metadata");
    let mut top: BTreeMap<String, String> = BTreeMap::new();
    let mut kernels: Vec<YamlKernel> = Vec::new();
    let mut top_key = String::new();
    let mut kernel_key = String::new();
    let split = |t: &str| -> (String, String) {
        let (k, v) = t.split_once(':').unwrap_or((t, ""));
        // `!str` is YAML's explicit string tag (LLVM writes `!str n` so
        // that `n` does not read as a boolean).
        let v = v.trim();
        let v = v.strip_prefix("!str ").unwrap_or(v);
        (k.trim().to_string(), v.trim_matches('\'').to_string())
    };
    let append = |map: &mut BTreeMap<String, String>, k: &str, v: &str| {
        let e = map.entry(k.to_string()).or_default();
        if !e.is_empty() {
            e.push(',');
        }
        e.push_str(v.trim());
    };
    for line in text[start..].lines().skip(1) {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        match indent {
            0 if t == "..." => break,
            0 => {
                let (k, v) = split(t);
                top.insert(k.clone(), v);
                top_key = k;
            }
            2 if t.starts_with("- .") => {
                kernels.push(YamlKernel::default());
                let (k, v) = split(&t[2..]);
                kernels.last_mut().unwrap().keys.insert(k.clone(), v);
                kernel_key = k;
            }
            2 if t.starts_with("- ") => append(&mut top, &top_key, &t[2..]),
            4 => {
                let (k, v) = split(t);
                kernels.last_mut().unwrap().keys.insert(k.clone(), v);
                kernel_key = k;
            }
            6 if t.starts_with("- .") => {
                let (k, v) = split(&t[2..]);
                let mut arg = BTreeMap::new();
                arg.insert(k, v);
                kernels.last_mut().unwrap().args.push(arg);
            }
            6 if t.starts_with("- ") => {
                let kern = kernels.last_mut().unwrap();
                append(&mut kern.keys, &kernel_key, &t[2..]);
            }
            8 => {
                let (k, v) = split(t);
                let kern = kernels.last_mut().unwrap();
                kern.args.last_mut().unwrap().insert(k, v);
            }
            _ => {}
        }
    }
    for k in &mut kernels {
        if k.keys
            .get(".args")
            .is_some_and(|v| v.is_empty() || v == "[]")
        {
            k.keys.remove(".args");
        }
    }
    (top, kernels)
}

/// `clang -S`: every `.amdhsa_*` directive of every kernel.
pub fn directives(b: &Built) -> BTreeMap<String, BTreeMap<String, i64>> {
    let asm = b.path.with_extension("s.out");
    if !asm.exists() {
        let lang = if b.src.extension().is_some_and(|e| e == "cl") {
            "cl"
        } else {
            "assembler"
        };
        run(Command::new(CLANG)
            .args(&b.args)
            .arg("-S")
            .arg("-x")
            .arg(lang)
            .arg(&b.src)
            .arg("-o")
            .arg(&asm));
    }
    let text = std::fs::read_to_string(&asm).unwrap();
    let mut out = BTreeMap::new();
    let mut cur: Option<(String, BTreeMap<String, i64>)> = None;
    for l in text.lines() {
        let t = l.trim();
        if let Some(name) = t.strip_prefix(".amdhsa_kernel ") {
            cur = Some((name.trim().to_string(), BTreeMap::new()));
        } else if t == ".end_amdhsa_kernel" {
            if let Some((n, m)) = cur.take() {
                out.insert(n, m);
            }
        } else if let Some((_, m)) = cur.as_mut() {
            let mut f = t.split_whitespace();
            if let (Some(k), Some(Ok(v))) = (f.next(), f.next().map(str::parse::<i64>)) {
                m.insert(k.to_string(), v);
            }
        }
    }
    out
}

/// A kernel with `printf`, whose metadata then carries
/// `hidden_printf_buffer`; `__printf_alloc` (normally from the device
/// library) is defined here so the link succeeds with `-nogpulib`.
/// Built at -O0, where every hidden argument is kept.
pub const PRINTF_CL: &str = include_str!("../kernels/printf.cl");

/// Offsets by value kind for one kernel, from `llvm-readelf --notes`.
pub fn arg_offsets(b: &Built, kernel: &str) -> Vec<(String, u32, u32)> {
    let (_, yaml) = notes(b);
    let k = yaml
        .iter()
        .find(|k| k.keys[".name"] == kernel)
        .unwrap_or_else(|| panic!("no kernel {kernel}"));
    k.args
        .iter()
        .map(|a| {
            (
                a[".value_kind"].clone(),
                a[".offset"].parse().unwrap(),
                a[".size"].parse().unwrap(),
            )
        })
        .collect()
}
