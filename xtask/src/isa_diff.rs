//! `cargo xtask isa-diff`: barebell-isa's decoder and printer against LLVM 19.
//!
//! Two checks, both string compares after collapsing whitespace:
//! 1. Random words: per target, N samples of 16 bytes (a first dword drawn
//!    either uniformly or with a random encoding prefix, then three uniform
//!    dwords, each zero one time in eight) are given to `llvm-mc-19 --disassemble`, each in its own atomic
//!    block `[..]` followed by a two-instruction marker block. Every
//!    instruction LLVM prints for the block, in order, and where it reports
//!    "invalid instruction encoding" (it stops there), is compared with
//!    `barebell_isa::decode` run over the same bytes as a stream, so each
//!    instruction's length is checked by where the next one starts. Valid and
//!    invalid words alike count, in every encoding family (nothing is
//!    redrawn); 0 mismatches is the only pass.
//! 2. Code objects: every kernel the semantic test suite builds (OpenCL C with
//!    clang-19, linked with ld.lld-19) is disassembled by `barebell disasm`'s
//!    library path and by `llvm-objdump-19 -d`, instruction by instruction.

use anyhow::{Context, Result, bail};
use barebell_isa::{Syntax, Target, decode};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

const DELIM: &str = "[0x2a,0x00,0x80,0xbf][0x39,0x05,0x80,0xbf]";

/// splitmix64: a seeded, reproducible word source.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
}

/// A family of first dwords the sampler draws on purpose: name, prefix
/// value and width in bits, and which source field (if any) is forced to a
/// DPP selector (so the rare DPP forms are well covered).
#[derive(Clone, Copy)]
struct Family {
    name: &'static str,
    prefix: u32,
    bits: u32,
    dpp: Dpp,
}

#[derive(Clone, Copy, PartialEq)]
enum Dpp {
    None,
    /// src0 of a 32-bit VOP word (bits 8:0).
    Vop,
    /// src0 of a VOP3/VOP3P word (bits 40:32, in the second dword).
    Vop3,
}

/// Every encoding family of the target, as the RDNA3/RDNA4 ISA references
/// lay out the first dword.
fn families(t: Target) -> Vec<Family> {
    let f = |name, prefix, bits, dpp| Family {
        name,
        prefix,
        bits,
        dpp,
    };
    if t.is_gfx9() {
        // gfx90a and gfx942 (GFX9 prefixes); DPP and SDWA are not modelled
        return vec![
            f("sop2/sopk", 0b10, 2, Dpp::None),
            f("sop1", 0x17d, 9, Dpp::None),
            f("sopc", 0x17e, 9, Dpp::None),
            f("sopp", 0x17f, 9, Dpp::None),
            f("vop2", 0b0, 1, Dpp::None),
            f("vop1", 0x3f, 7, Dpp::None),
            f("vopc", 0x3e, 7, Dpp::None),
            f("vop3", 0b110100, 6, Dpp::None),
            f("vop3p", 0x1a7, 9, Dpp::None),
            f("smem", 0b110000, 6, Dpp::None),
            f("ds", 0b110110, 6, Dpp::None),
            f("flat", 0b110111, 6, Dpp::None),
            f("mubuf", 0b111000, 6, Dpp::None),
        ];
    }
    let mut v = vec![
        f("sop2/sopk", 0b10, 2, Dpp::None),
        f("sop1", 0x17d, 9, Dpp::None),
        f("sopc", 0x17e, 9, Dpp::None),
        f("sopp", 0x17f, 9, Dpp::None),
        f("vop2", 0b0, 1, Dpp::None),
        f("vop1", 0x3f, 7, Dpp::None),
        f("vopc", 0x3e, 7, Dpp::None),
        f("vop2-dpp", 0b0, 1, Dpp::Vop),
        f("vop1-dpp", 0x3f, 7, Dpp::Vop),
        f("vopc-dpp", 0x3e, 7, Dpp::Vop),
        f("vop3", 0b110101, 6, Dpp::None),
        f("vop3-dpp", 0b110101, 6, Dpp::Vop3),
        f("vop3p", 0xcc, 8, Dpp::None),
        f("vop3p-dpp", 0xcc, 8, Dpp::Vop3),
        f("vopd", 0b110010, 6, Dpp::None),
        f("vinterp", 0xcd, 8, Dpp::None),
        f("ldsdir", 0xce, 8, Dpp::None),
        f("smem", 0b111101, 6, Dpp::None),
        f("ds", 0b110110, 6, Dpp::None),
        f("exp", 0b111110, 6, Dpp::None),
    ];
    if t.is_gfx12() {
        v.extend([
            f("vflat", 0b111011, 6, Dpp::None),
            f("vbuffer", 0b110001, 6, Dpp::None),
            f("vimage", 0b110100, 6, Dpp::None),
            f("vsample", 0b111001, 6, Dpp::None),
        ]);
    } else {
        v.extend([
            f("flat", 0b110111, 6, Dpp::None),
            f("mubuf", 0b111000, 6, Dpp::None),
            f("mtbuf", 0b111010, 6, Dpp::None),
            f("mimg", 0b111100, 6, Dpp::None),
        ]);
    }
    v
}

/// The family a first dword belongs to (for the report), `other` if none.
fn family_of(t: Target, w0: u32) -> &'static str {
    let mut best: Option<&Family> = None;
    let fams = families(t);
    for f in fams.iter().filter(|f| f.dpp == Dpp::None) {
        if w0 >> (32 - f.bits) == f.prefix && best.is_none_or(|b| f.bits > b.bits) {
            best = Some(f);
        }
    }
    best.map_or("other", |f| f.name)
}

/// Draws one 16-byte sample: a first dword uniform or from a family, then
/// three uniform dwords.
fn draw(rng: &mut Rng, fams: &[Family], only: Option<&str>) -> [u8; 16] {
    let mut w = [rng.u32(), rng.u32(), rng.u32(), rng.u32()];
    let zero: [bool; 3] = core::array::from_fn(|_| rng.next().is_multiple_of(8));
    let fam = match only {
        Some(name) => fams.iter().find(|f| f.name == name),
        None if rng.next() & 1 == 0 => None,
        None => fams.get((rng.next() % fams.len() as u64) as usize),
    };
    if let Some(f) = fam {
        let keep = if f.bits == 32 { 0 } else { u32::MAX >> f.bits };
        w[0] = f.prefix << (32 - f.bits) | (w[0] & keep);
        let sel = [250u32, 233, 234][(rng.next() % 3) as usize];
        match f.dpp {
            Dpp::None => {}
            Dpp::Vop => w[0] = (w[0] & !0x1ff) | sel,
            Dpp::Vop3 => w[1] = (w[1] & !0x1ff) | sel,
        }
    }
    // One in eight later dwords is zero (zero offsets, registers and
    // literals are common in real code; the all-zero dword is v_illegal).
    // Not in a sample with a gfx12 VIMAGE/VSAMPLE prefix in any of its first
    // three dwords: LLVM 19 leaves those unconverted when vaddr1..3 are all
    // v0 (printing its base operand sizes), a quirk barebell-isa does not
    // model (see docs/isa.md).
    let image12 = fams.iter().any(|f| {
        matches!(f.name, "vimage" | "vsample")
            && w[..3].iter().any(|x| x >> (32 - f.bits) == f.prefix)
    });
    if !image12 {
        for (x, z) in w[1..].iter_mut().zip(zero) {
            if z {
                *x = 0;
            }
        }
    }
    let mut b = [0u8; 16];
    for (k, x) in w.iter().enumerate() {
        b[k * 4..k * 4 + 4].copy_from_slice(&x.to_le_bytes());
    }
    b
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// LLVM's disassembly of each block as a stream: the text of every
/// instruction in order, ending with `<invalid at byte N>` where LLVM reports
/// "invalid instruction encoding" (it stops there inside an atomic block).
/// Comparing whole blocks checks each instruction's length too: the next
/// instruction starts where the previous one ended.
fn llvm_blocks(t: Target, wave64: bool, blocks: &[[u8; 16]]) -> Result<Vec<Vec<String>>> {
    match llvm_blocks_once(t, wave64, blocks)? {
        Some(r) => Ok(r),
        // llvm-mc-19 crashes on a few gfx942 words: split until the
        // crashing block is alone; it is reported as CRASHED, not compared
        None if blocks.len() == 1 => Ok(vec![vec![CRASHED.to_string()]]),
        None => {
            let (a, b) = blocks.split_at(blocks.len() / 2);
            let mut r = llvm_blocks(t, wave64, a)?;
            r.extend(llvm_blocks(t, wave64, b)?);
            Ok(r)
        }
    }
}

const CRASHED: &str = "<llvm-mc crashed>";

/// One llvm-mc-19 run over `blocks`; `None` if llvm-mc crashed.
fn llvm_blocks_once(
    t: Target,
    wave64: bool,
    blocks: &[[u8; 16]],
) -> Result<Option<Vec<Vec<String>>>> {
    let mut input = String::with_capacity(blocks.len() * 120);
    for b in blocks {
        input.push('[');
        for (i, x) in b.iter().enumerate() {
            if i > 0 {
                input.push(',');
            }
            let _ = write!(input, "{x:#04x}");
        }
        input.push_str("]\n");
        input.push_str(DELIM);
        input.push('\n');
    }
    let mut cmd = Command::new("llvm-mc-19");
    cmd.args([
        "-arch=amdgcn",
        &format!("-mcpu={}", t.mcpu()),
        "-disassemble",
    ]);
    if wave64 {
        cmd.arg("-mattr=+wavefrontsize64");
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running llvm-mc-19 (apt: llvm-19)")?;
    let mut stdin = child.stdin.take().context("llvm-mc stdin")?;
    let feeder = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output()?;
    feeder
        .join()
        .map_err(|_| anyhow::anyhow!("stdin writer panicked"))??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("Stack dump") {
        return Ok(None);
    }
    // "<stdin>:LINE:COL: warning: invalid instruction encoding"; block k is on
    // line 2k+1, its byte j at column 2 + 5j ("0xNN," each).
    let mut invalid_at: Vec<Option<usize>> = vec![None; blocks.len()];
    for l in stderr.lines() {
        let Some(rest) = l.strip_prefix("<stdin>:") else {
            continue;
        };
        let mut p = rest.splitn(3, ':');
        let (Some(line), Some(col)) = (p.next(), p.next()) else {
            continue;
        };
        let (Ok(line), Ok(col)) = (line.parse::<usize>(), col.parse::<usize>()) else {
            continue;
        };
        if col < 2 || (col - 2) % 5 != 0 {
            bail!("llvm-mc warning at an unexpected column: {l}");
        }
        if line % 2 == 1
            && let Some(slot) = invalid_at.get_mut(line / 2)
        {
            *slot = Some((col - 2) / 5);
        }
    }
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with('\t') && !l.starts_with("\t.text"))
        .map(str::trim)
        .collect();
    let mut res = Vec::with_capacity(blocks.len());
    let mut i = 0;
    for inv in invalid_at {
        let mut cur = Vec::new();
        while i + 1 < lines.len() && !(lines[i] == "s_nop 42" && lines[i + 1] == "s_nop 0x539") {
            cur.push(norm(lines[i]));
            i += 1;
        }
        if i + 1 >= lines.len() {
            bail!("llvm-mc output lost its block markers");
        }
        if let Some(at) = inv {
            cur.push(format!("<invalid at byte {at}>"));
        }
        res.push(cur);
        i += 2;
    }
    Ok(Some(res))
}

/// barebell-isa's disassembly of a block as a stream, in the form of
/// [`llvm_blocks`].
fn ours_block(syntax: Syntax, b: &[u8]) -> Vec<String> {
    let mut v = Vec::new();
    let mut off = 0;
    while off < b.len() {
        match decode(syntax, &b[off..]) {
            Ok(i) => {
                v.push(norm(&i.display(syntax).to_string()));
                off += usize::from(i.len);
            }
            Err(_) => {
                v.push(format!("<invalid at byte {off}>"));
                break;
            }
        }
    }
    v
}

#[derive(Default)]
struct Tally {
    words: u64,
    /// Blocks llvm-mc-19 crashed on (not compared; gfx942 only so far).
    crashed: u64,
    llvm_valid: u64,
    llvm_invalid: u64,
    /// Instructions and invalid verdicts compared (all in each block).
    instructions: u64,
    mismatches: u64,
    examples: BTreeMap<String, Vec<String>>,
    per_key: BTreeMap<String, u64>,
    /// Words drawn per family of the first dword (`other`: none).
    per_family: BTreeMap<&'static str, u64>,
}

fn hex_words(b: &[u8]) -> String {
    let hex: Vec<String> = b
        .chunks(4)
        .map(|c| format!("{:08x}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    hex.join(" ")
}

/// One configuration's random-word differential.
fn random_words(t: Target, wave64: bool, n: usize, seed: u64, tally: &mut Tally) -> Result<()> {
    let mut rng = Rng(seed ^ (t as u64) << 32 ^ u64::from(wave64));
    let fams = families(t);
    let only = std::env::var("BAREBELL_ISA_FAMILY").ok();
    let syntax = Syntax { target: t, wave64 };
    // Development aid: BAREBELL_ISA_SWEEP="W0 W1 W2 W3 LO WIDTH" (hex words,
    // then a bit field of the 128) compares every value of the field.
    let sweep: Option<(u128, u32, u32)> = std::env::var("BAREBELL_ISA_SWEEP").ok().map(|s| {
        let v: Vec<&str> = s.split_whitespace().collect();
        let w = |i: usize| {
            u128::from(u32::from_str_radix(v.get(i).copied().unwrap_or("0"), 16).unwrap_or(0))
        };
        let base = w(0) | w(1) << 32 | w(2) << 64 | w(3) << 96;
        let num = |i: usize| v.get(i).and_then(|x| x.parse().ok()).unwrap_or(0u32);
        (base, num(4), num(5).min(20))
    });
    let n = match sweep {
        Some((_, _, width)) => 1usize << width,
        None => n,
    };
    const CHUNK: usize = 100_000;
    let mut done = 0;
    while done < n {
        let m = CHUNK.min(n - done);
        let blocks: Vec<[u8; 16]> = (0..m)
            .map(|i| match sweep {
                Some((base, lo, width)) => {
                    let mask = ((1u128 << width) - 1) << lo;
                    let x = (base & !mask) | ((done + i) as u128) << lo;
                    x.to_le_bytes()
                }
                None => draw(&mut rng, &fams, only.as_deref()),
            })
            .collect();
        let llvm = llvm_blocks(t, wave64, &blocks)?;
        for (b, l) in blocks.iter().zip(llvm) {
            if l.first().is_some_and(|x| x == CRASHED) {
                tally.crashed += 1;
                continue;
            }
            tally.words += 1;
            let w0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let fam = family_of(t, w0);
            *tally.per_family.entry(fam).or_default() += 1;
            let first_valid = l.first().is_some_and(|x| !x.starts_with("<invalid"));
            if first_valid {
                tally.llvm_valid += 1;
            } else {
                tally.llvm_invalid += 1;
            }
            tally.instructions += l.len() as u64;
            let ours = ours_block(syntax, b);
            if ours != l {
                tally.mismatches += 1;
                // the first instruction that differs names the mismatch
                let k = ours.iter().zip(&l).take_while(|(a, b)| a == b).count();
                let head = l.get(k).map_or("<end>", String::as_str);
                let key = if head.starts_with("<invalid") {
                    format!("{fam} #{k} <invalid>")
                } else {
                    format!("{fam} #{k} {}", head.split(' ').next().unwrap_or(""))
                };
                *tally.per_key.entry(key.clone()).or_default() += 1;
                let ex = tally.examples.entry(key).or_default();
                if ex.len() < 4 {
                    ex.push(format!(
                        "[{}] llvm: {}\n      ours: {}",
                        hex_words(b),
                        l.join(" | "),
                        ours.join(" | ")
                    ));
                }
            }
        }
        done += m;
    }
    Ok(())
}

/// Builds the semantic suite's kernels (isa/tests/kernels/suite.cl) for one
/// target and wave size, as the tests do.
fn build_suite(root: &Path, t: Target, wave64: bool) -> Result<std::path::PathBuf> {
    let dir = root.join("target").join("isa-diff");
    std::fs::create_dir_all(&dir)?;
    let stem = format!("suite_{}_w{}", t.mcpu(), if wave64 { 64 } else { 32 });
    let obj = dir.join(format!("{stem}.o"));
    let so = dir.join(format!("{stem}.so"));
    let src = root.join("isa").join("tests").join("kernels");
    let mut cc = Command::new("clang-19");
    cc.args([
        "-target",
        "amdgcn-amd-amdhsa",
        &format!("-mcpu={}", t.mcpu()),
        "-nogpulib",
        "-O2",
        "-cl-std=CL2.0",
        "-x",
        "cl",
        "-c",
    ]);
    if wave64 {
        cc.arg("-mwavefrontsize64");
    }
    cc.arg("-I")
        .arg(&src)
        .arg(src.join("suite.cl"))
        .arg("-o")
        .arg(&obj);
    crate::util::run(&mut cc).context("clang-19 (apt: clang-19)")?;
    crate::util::run(
        Command::new("ld.lld-19")
            .arg("-shared")
            .arg(&obj)
            .arg("-o")
            .arg(&so),
    )
    .context("ld.lld-19 (apt: lld-19)")?;
    Ok(so)
}

/// `llvm-objdump-19 -d` per function: instruction texts.
fn objdump_functions(so: &Path, t: Target, wave64: bool) -> Result<BTreeMap<String, Vec<String>>> {
    let mut cmd = Command::new("llvm-objdump-19");
    cmd.args(["-d", &format!("--mcpu={}", t.mcpu())]);
    if wave64 {
        cmd.arg("--mattr=+wavefrontsize64");
    }
    cmd.arg(so);
    let out = crate::util::output(&mut cmd)?;
    let mut funcs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cur: Option<String> = None;
    for l in out.lines() {
        if let Some(rest) = l.strip_suffix(">:")
            && let Some((_, name)) = rest.split_once(" <")
        {
            cur = Some(name.to_string());
            funcs.entry(name.to_string()).or_default();
            continue;
        }
        if let (Some(c), Some(body)) = (&cur, l.strip_prefix('\t')) {
            let text = body.split("//").next().unwrap_or("");
            funcs.entry(c.clone()).or_default().push(norm(text));
        }
    }
    Ok(funcs)
}

/// Code-object differential: (functions, instructions, mismatches, report).
fn code_objects(root: &Path) -> Result<(usize, usize, usize, String)> {
    let mut nf = 0;
    let mut ni = 0;
    let mut bad = 0;
    let mut report = String::new();
    for (t, w64) in [
        (Target::Gfx1100, false),
        (Target::Gfx1100, true),
        (Target::Gfx1201, false),
        (Target::Gfx1201, true),
        // CDNA2 and CDNA3 are wave64 only
        (Target::Gfx90a, true),
        (Target::Gfx942, true),
    ] {
        let so = build_suite(root, t, w64)?;
        let llvm = objdump_functions(&so, t, w64)?;
        let elf = std::fs::read(&so)?;
        let (_, ours) =
            barebell_isa::objdump::disassemble(&elf, None).map_err(|e| anyhow::anyhow!(e))?;
        for f in ours {
            nf += 1;
            let Some(l) = llvm.get(&f.name) else {
                bad += 1;
                let _ = writeln!(
                    report,
                    "  {} {}: not in llvm-objdump output",
                    t.mcpu(),
                    f.name
                );
                continue;
            };
            let mine: Vec<String> = f.lines.iter().map(|x| norm(&x.text)).collect();
            ni += mine.len().max(l.len());
            for i in 0..mine.len().max(l.len()) {
                let (a, b) = (mine.get(i), l.get(i));
                if a != b {
                    bad += 1;
                    if bad <= 40 {
                        let _ = writeln!(
                            report,
                            "  {} w{} {}[{i}]: llvm: {} | ours: {}",
                            t.mcpu(),
                            if w64 { 64 } else { 32 },
                            f.name,
                            b.map(String::as_str).unwrap_or("-"),
                            a.map(String::as_str).unwrap_or("-")
                        );
                    }
                }
            }
        }
    }
    Ok((nf, ni, bad, report))
}

/// `cargo xtask isa-tables [--check]`: runs isa/tools/gen_tables.py, which
/// asks llvm-mc-19 for every opcode's name and operand shapes and writes
/// isa/data/<cpu>.txt (the decoder's only source of opcodes); with `check`
/// it fails if the committed files differ from what LLVM gives now.
pub fn tables(root: &Path, check: bool) -> Result<String> {
    let start = std::time::Instant::now();
    let mut cmd = Command::new("python3");
    cmd.current_dir(root).arg("isa/tools/gen_tables.py");
    if check {
        cmd.arg("--check");
    }
    crate::util::run(&mut cmd).context("isa/tools/gen_tables.py (apt: python3, llvm-19)")?;
    let rows: usize = ["gfx1100", "gfx1201", "gfx90a", "gfx942"]
        .iter()
        .map(|c| {
            std::fs::read_to_string(root.join("isa").join("data").join(format!("{c}.txt")))
                .map(|s| s.lines().filter(|l| !l.starts_with('#')).count())
                .unwrap_or(0)
        })
        .sum();
    Ok(format!(
        "{rows} table lines (gfx1100, gfx1201, gfx90a, gfx942) {} llvm-mc-19; {:.0} s",
        if check {
            "identical to"
        } else {
            "written from"
        },
        start.elapsed().as_secs_f64()
    ))
}

/// Words per configuration (environment `BAREBELL_ISA_WORDS`, default
/// 1,000,000).
fn words_per_config() -> usize {
    std::env::var("BAREBELL_ISA_WORDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000)
}

/// The four configurations, or those named in `BAREBELL_ISA_CONFIGS`
/// (e.g. `gfx1100w32,gfx1201w64`; a development aid). `gfx90aw64` and
/// `gfx942w64` run only when named: their random-word differentials are
/// not yet clean (see docs/isa.md).
fn configs() -> Vec<(Target, bool)> {
    let all = [
        (Target::Gfx1100, false),
        (Target::Gfx1201, false),
        (Target::Gfx1100, true),
        (Target::Gfx1201, true),
        (Target::Gfx90a, true),
        (Target::Gfx942, true),
    ];
    let only = std::env::var("BAREBELL_ISA_CONFIGS").unwrap_or_default();
    all.into_iter()
        .filter(|(t, w64)| {
            (only.is_empty() && !t.is_gfx9())
                || only
                    .split(',')
                    .any(|c| c == format!("{}w{}", t.mcpu(), if *w64 { 64 } else { 32 }))
        })
        .collect()
}

pub fn run(root: &Path) -> Result<String> {
    let start = std::time::Instant::now();
    let mut co = String::new();
    if std::env::var_os("BAREBELL_ISA_SKIP_CODE_OBJECTS").is_none() {
        let (nf, ni, bad, rep) = code_objects(root)?;
        co = format!(
            "code objects: {nf} functions, {ni} instructions vs llvm-objdump-19, {bad} mismatches"
        );
        eprintln!("{co}");
        if bad != 0 {
            bail!("{co}\n{rep}");
        }
    }
    let n = words_per_config();
    // a fixed seed in CI (reproducible); BAREBELL_ISA_SEED (hex) draws others
    let seed = std::env::var("BAREBELL_ISA_SEED")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        .unwrap_or(0x00ba_5eba_11ed);
    let configs = configs();
    let results: Vec<(Target, bool, Result<Tally>)> = std::thread::scope(|s| {
        let hs: Vec<_> = configs
            .iter()
            .map(|&(t, w64)| {
                s.spawn(move || {
                    let mut tally = Tally::default();
                    let r = random_words(t, w64, n, seed, &mut tally).map(|()| tally);
                    (t, w64, r)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| (Target::Gfx1100, false, Err(anyhow::anyhow!("panicked"))))
            })
            .collect()
    });
    let mut summary = String::new();
    let mut report = String::new();
    let mut total_mismatch = 0;
    for (t, w64, r) in results {
        let tally = r?;
        total_mismatch += tally.mismatches;
        let mut line = format!(
            "{} wave{}: {} random words ({} valid, {} invalid first for LLVM; {} decodes in \
             their 16-byte blocks): {} mismatches",
            t.mcpu(),
            if w64 { 64 } else { 32 },
            tally.words,
            tally.llvm_valid,
            tally.llvm_invalid,
            tally.instructions,
            tally.mismatches
        );
        if tally.crashed != 0 {
            let _ = write!(
                line,
                " ({} blocks llvm-mc-19 crashed on, not compared)",
                tally.crashed
            );
        }
        eprintln!("{line}");
        let _ = writeln!(summary, "{line}");
        let fams: Vec<String> = tally
            .per_family
            .iter()
            .map(|(f, c)| format!("{f} {c}"))
            .collect();
        let _ = writeln!(
            report,
            "{} wave{} words per family: {}",
            t.mcpu(),
            if w64 { 64 } else { 32 },
            fams.join(", ")
        );
        let mut keys: Vec<_> = tally.per_key.iter().collect();
        keys.sort_by(|a, b| b.1.cmp(a.1));
        for (k, count) in keys {
            let ex = &tally.examples[k];
            let _ = writeln!(
                report,
                "  {} w{} {k} ({count}):",
                t.mcpu(),
                if w64 { 64 } else { 32 }
            );
            for e in ex {
                let _ = writeln!(report, "    {e}");
            }
        }
    }
    let dir = root.join("target").join("isa-diff");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("random-mismatches.txt"), &report)?;
    let secs = start.elapsed().as_secs_f64();
    if total_mismatch != 0 {
        let keep: String = report.lines().take(400).collect::<Vec<_>>().join("\n");
        bail!("{total_mismatch} random-word mismatches against LLVM 19\n{summary}{keep}");
    }
    Ok(format!(
        "{co}; seed {seed:#x}; {}; 0 random mismatches; {secs:.0} s",
        summary.trim_end().replace('\n', "; ")
    ))
}
