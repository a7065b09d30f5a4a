#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `barebell disasm` against `llvm-objdump-19 -d` on code objects clang-19
//! builds for the GFX9 targets (gfx90a: MI210; gfx942: MI300X/MI308X):
//! every function, every instruction, in order. The kernels are the CLI's
//! own (`kernels/run.cl`) and one that makes the two targets' differences
//! show: a returning atomic (cache-policy bits glc on gfx90a, sc0 on
//! gfx942), a 64-bit move (v_pk_mov_b32 / v_mov_b64) and a private array
//! (MUBUF scratch on gfx90a, scratch_* on gfx942).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const RUN_CL: &str = include_str!("kernels/run.cl");

const EXTRA_CL: &str = "\
kernel void ret_atomic(global uint *p, global uint *old) {\n\
  uint i = __builtin_amdgcn_workitem_id_x();\n\
  old[i] = __atomic_fetch_add(&p[i & 7], 1u, __ATOMIC_RELAXED);\n\
}\n\
kernel void move64(global ulong *o, ulong v) { o[__builtin_amdgcn_workitem_id_x()] = v; }\n\
kernel void private_sum(global uint *o, uint k) {\n\
  uint a[40];\n\
  uint i = __builtin_amdgcn_workitem_id_x();\n\
  for (uint j = 0; j < 40; j++) a[j] = i * j + k;\n\
  o[i] = a[(i + k) % 40] + a[k % 40];\n\
}\n";

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("disasm-cli");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn build(name: &str, src: &str, mcpu: &str) -> PathBuf {
    let cl = dir().join(format!("{name}.cl"));
    std::fs::write(&cl, src).unwrap();
    let co = dir().join(format!("{name}_{mcpu}.co"));
    let st = Command::new("clang-19")
        .args(["-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O2"])
        .arg(format!("-mcpu={mcpu}"))
        .args(["-x", "cl"])
        .arg(&cl)
        .arg("-o")
        .arg(&co)
        .status()
        .expect("clang-19 (`cargo xtask deps` installs it)");
    assert!(st.success(), "clang-19 -mcpu={mcpu} {name}.cl");
    co
}

/// Instruction texts per function of a disassembly in objdump's layout
/// (`ADDR <NAME>:` then tab-indented instructions, `//` comments).
fn functions(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cur = None;
    for l in text.lines() {
        let head = l.split(" ; ").next().unwrap_or(l);
        if let Some(rest) = head.strip_suffix(">:")
            && let Some((_, name)) = rest.split_once(" <")
        {
            cur = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            continue;
        }
        if let (Some(c), Some(body)) = (&cur, l.strip_prefix('\t')) {
            let t = body.split("//").next().unwrap_or("");
            let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
            out.get_mut(c).unwrap().push(t);
        }
    }
    out
}

/// (functions, instructions) compared; panics on the first difference.
fn agree(co: &Path, mcpu: &str) -> (usize, usize) {
    let ours = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .arg("disasm")
        .arg(co)
        .output()
        .unwrap();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let ours = String::from_utf8(ours.stdout).unwrap();
    assert!(
        ours.starts_with(&format!("; {} ({mcpu})", co.display())),
        "{ours}"
    );
    let llvm = Command::new("llvm-objdump-19")
        .args(["-d", &format!("--mcpu={mcpu}")])
        .arg(co)
        .output()
        .expect("llvm-objdump-19 (apt: llvm-19)");
    assert!(llvm.status.success());
    let llvm = functions(&String::from_utf8(llvm.stdout).unwrap());
    let ours = functions(&ours);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        llvm.keys().collect::<Vec<_>>(),
        "{mcpu} functions"
    );
    let mut n = 0;
    for (f, want) in &llvm {
        let got = &ours[f];
        for (i, (a, b)) in got.iter().zip(want).enumerate() {
            assert_eq!(a, b, "{mcpu} {f}[{i}]");
        }
        assert_eq!(got.len(), want.len(), "{mcpu} {f} length");
        n += want.len();
    }
    (llvm.len(), n)
}

fn all_text(co: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .arg("disasm")
        .arg(co)
        .output()
        .unwrap();
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn disasm_agrees_with_llvm_objdump_on_gfx90a_and_gfx942() {
    for mcpu in ["gfx90a", "gfx942"] {
        for (name, src) in [("run", RUN_CL), ("extra", EXTRA_CL)] {
            let co = build(name, src, mcpu);
            let (f, i) = agree(&co, mcpu);
            assert!(
                f >= 3 && i > 50,
                "{mcpu} {name}: {f} functions, {i} instructions"
            );
        }
    }
}

/// The same source on the two targets shows their differences in
/// `barebell disasm` as llvm-objdump-19 shows them (checked above): the
/// returning atomic's cache bit, the 64-bit move and the scratch path.
#[test]
fn gfx90a_and_gfx942_code_objects_differ_where_the_targets_do() {
    let a = all_text(&build("extra", EXTRA_CL, "gfx90a"));
    let b = all_text(&build("extra", EXTRA_CL, "gfx942"));
    let has = |t: &str, s: &str| t.lines().any(|l| l.contains(s));
    // a returning global atomic: glc (gfx90a) / sc0 (gfx942)
    let atomic = |t: &str, bit: &str| {
        t.lines()
            .any(|l| l.contains("global_atomic_add") && l.contains(bit))
    };
    assert!(atomic(&a, " glc") && !atomic(&a, " sc0"), "{a}");
    assert!(atomic(&b, " sc0") && !atomic(&b, " glc"), "{b}");
    // private array: MUBUF scratch on gfx90a, scratch_* on gfx942
    assert!(
        has(&a, "buffer_store_dword") && !has(&a, "scratch_store"),
        "{a}"
    );
    assert!(
        has(&b, "scratch_store") && !has(&b, "buffer_store_dword"),
        "{b}"
    );
    // no gfx940-only v_mov_b64 on gfx90a
    assert!(!has(&a, "v_mov_b64"), "{a}");
}

/// Every model part's ISA, as `barebell info` names it (ROCR's name from
/// KFD's gfx_target_version), is a target `barebell disasm` decodes: the
/// MI210 (GC 9.4.2) is gfx90a.
#[test]
fn every_parts_isa_is_a_disasm_target() {
    for (part, isa) in [
        ("navi31", "gfx1100"),
        ("navi48", "gfx1201"),
        ("mi300x", "gfx942"),
        ("mi308x", "gfx942"),
        ("mi210", "gfx90a"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args(["info", "--part", part, "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{part}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["isa"], isa, "{part}");
        let t = barebell_isa::Target::from_mcpu(isa).expect(isa);
        assert_eq!(t.mcpu(), isa);
    }
}
