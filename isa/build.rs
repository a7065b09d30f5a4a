// A malformed data file is a build error: aborting the build with the offending
// line is the right behaviour here, so the no-panic lints do not apply.
#![allow(clippy::expect_used, clippy::panic, clippy::unwrap_used)]

//! Turns the opcode data files (`data/<cpu>.txt`) into Rust tables.
//!
//! Each data line is `ENC OPCODE NAME FIXMASK FIXVAL OPERAND...`; see
//! `tools/gen_tables.py` for how the lines were obtained and `src/table.rs` for
//! what the generated items mean.

use std::fmt::Write as _;
use std::path::Path;

/// `FIELD:TYPE` operand type: (Ty expression, wave64 width, hi note, SGPR
/// note, special verdicts, note classes).
fn ty(spec: &str) -> (String, u8, String, String, String, String) {
    // TYPE[/W64][@HI|^HI][%SGPR][~W32[/W64][:CLASS[/CLASS64]]]
    let mut rest = spec;
    let mut specs = String::from("[\"\", \"\"]");
    let mut classes = String::from("[\"\", \"\"]");
    if let Some((a, b)) = rest.split_once('~') {
        rest = a;
        let (v, c) = b.split_once(':').unwrap_or((b, ""));
        let (v32, v64) = v.split_once('/').unwrap_or((v, v));
        let (c32, c64) = c.split_once('/').unwrap_or((c, c));
        specs = format!("[{v32:?}, {v64:?}]");
        classes = format!("[{c32:?}, {c64:?}]");
    }
    let mut sgpr = "Note::Ok".to_string();
    let mut hi = "Note::Ok".to_string();
    let note = |c: &str, all: bool| -> String {
        if c == "x" {
            "Note::Invalid".into()
        } else if all {
            format!("Note::All({c:?})")
        } else {
            format!("Note::Class({c:?})")
        }
    };
    if let Some((a, b)) = rest.split_once('%') {
        sgpr = note(b, false);
        rest = a;
    }
    if let Some((a, b)) = rest.split_once('@') {
        hi = note(b, false);
        rest = a;
    } else if let Some((a, b)) = rest.split_once('^') {
        hi = note(b, true);
        rest = a;
    }
    let mut w64 = 0u8;
    if let Some((a, b)) = rest.split_once('/') {
        w64 = b.parse().expect("wave64 width");
        rest = a;
    }
    (base_ty(rest), w64, hi, sgpr, specs, classes)
}

fn base_ty(spec: &str) -> String {
    //   s<w> / v<w>            register of <w> dwords
    //   src<w>.<imm>           9-bit source, register of <w> dwords or constant
    //   s<w>.<imm>             8-bit scalar source
    //   imm.<style>            16-bit immediate
    //   mask                   lane mask
    let (kind, rest) = match spec.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (spec, None),
    };
    let imm = |s: &str| -> String {
        let v = match s {
            "b32" => "B32",
            "b64" => "B64",
            "f16" => "F16",
            "f64" => "F64",
            "i16" => "I16",
            "v2f16" => "V2F16",
            "v2i16" => "V2I16",
            "bf16" => "BF16",
            "v2bf16" => "V2BF16",
            "reg" => "Reg",
            "msg" => "Msg",
            other => panic!("unknown immediate class {other}"),
        };
        format!("Imm::{v}")
    };
    if kind == "imm" {
        let st = match rest.unwrap_or("") {
            "hex" => "Hex",
            "u16" => "U16",
            "udec" => "UDec",
            "special" => "Special",
            other => panic!("unknown imm style {other}"),
        };
        return format!("Ty::Simm(Simm::{st})");
    }
    if kind == "mask" {
        return "Ty::Mask".into();
    }
    if kind == "off" {
        return "Ty::Off".into();
    }
    if kind == "mdata" {
        return "Ty::Mdata".into();
    }
    if kind == "maddr" {
        return "Ty::Maddr".into();
    }
    if let Some(w) = kind.strip_prefix("src") {
        let w: u8 = w.parse().expect("width");
        return format!("Ty::Src({w}, {})", imm(rest.expect("imm class")));
    }
    let (rk, w) = kind.split_at(1);
    let w: u8 = w.parse().unwrap_or_else(|_| panic!("bad type {spec}"));
    match (rk, rest) {
        ("s", Some(r)) => format!("Ty::SSrc({w}, {})", imm(r)),
        ("s", None) => format!("Ty::SReg({w})"),
        ("v", None) => format!("Ty::VReg({w})"),
        _ => panic!("bad type {spec}"),
    }
}

fn field(name: &str) -> &'static str {
    match name {
        "sdst" => "Fld::Sdst",
        "ssrc0" => "Fld::Ssrc0",
        "ssrc1" => "Fld::Ssrc1",
        "simm16" => "Fld::Simm16",
        "vdst" => "Fld::Vdst",
        "vsrc1" => "Fld::Vsrc1",
        "src0" => "Fld::Src0",
        "src1" => "Fld::Src1",
        "src2" => "Fld::Src2",
        "kimm" => "Fld::Kimm",
        "sdst3" => "Fld::Sdst3",
        "dsrc0" => "Fld::Dsrc0",
        "srcx0" => "Fld::SrcX0",
        "vsrcx1" => "Fld::VsrcX1",
        "vdstx" => "Fld::VdstX",
        "srcy0" => "Fld::SrcY0",
        "vsrcy1" => "Fld::VsrcY1",
        "vdsty" => "Fld::VdstY",
        "sdata" => "Fld::Sdata",
        "sbase" => "Fld::Sbase",
        "soffset" => "Fld::Soffset",
        "soffsetlo" => "Fld::SoffsetLo",
        "offset" => "Fld::SmemOff",
        "offset24" => "Fld::SmemOff24",
        "addr" => "Fld::Addr",
        "data0" => "Fld::Data0",
        "data1" => "Fld::Data1",
        "saddr" => "Fld::Saddr",
        "vdst12" => "Fld::Vdst12",
        "vaddr" => "Fld::Vaddr",
        "vdata" => "Fld::Vdata",
        "saddr12" => "Fld::Saddr12",
        "vdata11" => "Fld::Vdata11",
        "vaddr11" => "Fld::Vaddr11",
        "srsrc" => "Fld::Srsrc",
        "soffset8" => "Fld::Soffset8",
        "vdata12" => "Fld::Vdata12",
        "rsrc" => "Fld::Rsrc",
        "soffset7" => "Fld::Soffset7",
        "ssamp" => "Fld::Ssamp",
        "rsrc9" => "Fld::Rsrc9",
        "samp9" => "Fld::Samp9",
        other => panic!("unknown field {other}"),
    }
}

/// Encoding name in the data files: (Enc, Form).
fn enc(name: &str) -> (&'static str, String) {
    let (base, form) = match name.split_once('_') {
        Some((b, "dpp16")) => (b, "Form::Dpp16".to_string()),
        Some((b, "dpp8")) => (b, "Form::Dpp8".to_string()),
        _ => match name.split_once(':') {
            Some((b, v)) => (b, format!("Form::Var({v})")),
            None if name == "vimage" => (name, "Form::Var(0)".to_string()),
            None if name == "vsample" => (name, "Form::Var(1)".to_string()),
            None => (name, "Form::Plain".to_string()),
        },
    };
    let e = match base {
        "sop1" => "Enc::Sop1",
        "sop2" => "Enc::Sop2",
        "sopk" => "Enc::Sopk",
        "sopc" => "Enc::Sopc",
        "sopp" => "Enc::Sopp",
        "vop1" => "Enc::Vop1",
        "vop2" => "Enc::Vop2",
        "vopc" => "Enc::Vopc",
        "vop3" => "Enc::Vop3",
        "vop3p" => "Enc::Vop3p",
        "vopdx" => "Enc::Vopd",
        "vopdy" => "Enc::VopdY",
        "smem" => "Enc::Smem",
        "ds" => "Enc::Ds",
        "mubuf" | "vbuffer" => "Enc::Mubuf",
        "mtbuf" => "Enc::Mtbuf",
        "vinterp" => "Enc::Vinterp",
        "ldsdir" => "Enc::Ldsdir",
        "mimg" | "vimage" | "vsample" => "Enc::Mimg",
        "flat0" | "vflat0" => "Enc::Flat",
        "flat1" | "vflat1" => "Enc::Scratch",
        "flat2" | "vflat2" => "Enc::Global",
        other => panic!("unknown encoding {other}"),
    };
    (e, form)
}

/// The gfx11 mnemonic with the same semantics as a gfx90a/gfx942 (GFX9) one: the
/// interpreter dispatches on that name (`OpInfo::sem`). Renames follow the
/// two ISA references' instruction lists (dword/byte/short memory names,
/// andn2/orn2, read/write DS names, carry names); where no rule applies
/// the name is its own.
fn gfx9_sem(name: &str) -> String {
    let (base, suffix) = match name.strip_suffix("_e32") {
        Some(b) => (b, "_e32"),
        None => match name.strip_suffix("_e64") {
            Some(b) => (b, "_e64"),
            None => (name, ""),
        },
    };
    let exact = match base {
        "s_ff1_i32_b32" => Some("s_ctz_i32_b32"),
        "s_ff1_i32_b64" => Some("s_ctz_i32_b64"),
        "s_flbit_i32_b32" => Some("s_clz_i32_u32"),
        "s_flbit_i32_b64" => Some("s_clz_i32_u64"),
        "v_add_u32" => Some("v_add_nc_u32"),
        "v_sub_u32" => Some("v_sub_nc_u32"),
        "v_subrev_u32" => Some("v_subrev_nc_u32"),
        "v_add_u16" => Some("v_add_nc_u16"),
        // GFX9 "legacy" 16-bit mads: no op_sel, the high half of the
        // destination is zeroed
        "v_mad_legacy_u16" => Some("v_mad_u16"),
        "v_mad_legacy_i16" => Some("v_mad_i16"),
        "v_sub_u16" => Some("v_sub_nc_u16"),
        "v_subrev_u16" => Some("v_subrev_nc_u16"),
        "v_addc_co_u32" => Some("v_add_co_ci_u32"),
        "v_subb_co_u32" => Some("v_sub_co_ci_u32"),
        "v_subbrev_co_u32" => Some("v_subrev_co_ci_u32"),
        "v_ffbh_u32" => Some("v_clz_i32_u32"),
        "v_ffbl_b32" => Some("v_ctz_i32_b32"),
        "v_ffbh_i32" => Some("v_cls_i32"),
        _ => None,
    };
    if let Some(e) = exact {
        return format!("{e}{suffix}");
    }
    let mut b = base.replace("andn2", "and_not1").replace("orn2", "or_not1");
    if b.starts_with("s_load_dword") || b.starts_with("s_buffer_load_dword") {
        b = b
            .replace("dwordx16", "b512")
            .replace("dwordx8", "b256")
            .replace("dwordx4", "b128")
            .replace("dwordx3", "b96")
            .replace("dwordx2", "b64")
            .replace("dword", "b32");
    }
    if let Some(r) = b.strip_prefix("ds_") {
        let r = r
            .replace("read2st64_", "load_2addr_stride64_")
            .replace("read2_", "load_2addr_")
            .replace("read_", "load_")
            .replace("write2st64_", "store_2addr_stride64_")
            .replace("write2_", "store_2addr_")
            .replace("write_", "store_");
        b = format!("ds_{r}");
    }
    for seg in ["global_", "scratch_", "flat_"] {
        if let Some(r) = b.strip_prefix(seg) {
            let mem = [
                ("load_dwordx4", "load_b128"),
                ("load_dwordx3", "load_b96"),
                ("load_dwordx2", "load_b64"),
                ("load_dword", "load_b32"),
                ("load_ubyte", "load_u8"),
                ("load_sbyte", "load_i8"),
                ("load_ushort", "load_u16"),
                ("load_sshort", "load_i16"),
                ("store_dwordx4", "store_b128"),
                ("store_dwordx3", "store_b96"),
                ("store_dwordx2", "store_b64"),
                ("store_dword", "store_b32"),
                ("store_byte", "store_b8"),
                ("store_short", "store_b16"),
                ("atomic_add_x2", "atomic_add_u64"),
                ("atomic_sub_x2", "atomic_sub_u64"),
                ("atomic_swap_x2", "atomic_swap_b64"),
                ("atomic_cmpswap_x2", "atomic_cmpswap_b64"),
                ("atomic_smin_x2", "atomic_min_i64"),
                ("atomic_smax_x2", "atomic_max_i64"),
                ("atomic_umin_x2", "atomic_min_u64"),
                ("atomic_umax_x2", "atomic_max_u64"),
                ("atomic_and_x2", "atomic_and_b64"),
                ("atomic_or_x2", "atomic_or_b64"),
                ("atomic_xor_x2", "atomic_xor_b64"),
                ("atomic_inc_x2", "atomic_inc_u64"),
                ("atomic_dec_x2", "atomic_dec_u64"),
                ("atomic_add", "atomic_add_u32"),
                ("atomic_sub", "atomic_sub_u32"),
                ("atomic_swap", "atomic_swap_b32"),
                ("atomic_cmpswap", "atomic_cmpswap_b32"),
                ("atomic_smin", "atomic_min_i32"),
                ("atomic_smax", "atomic_max_i32"),
                ("atomic_umin", "atomic_min_u32"),
                ("atomic_umax", "atomic_max_u32"),
                ("atomic_and", "atomic_and_b32"),
                ("atomic_or", "atomic_or_b32"),
                ("atomic_xor", "atomic_xor_b32"),
                ("atomic_inc", "atomic_inc_u32"),
                ("atomic_dec", "atomic_dec_u32"),
            ];
            if let Some((_, to)) = mem.iter().find(|(from, _)| r == *from) {
                b = format!("{seg}{to}");
            }
        }
    }
    format!("{b}{suffix}")
}

fn parse_u128(s: &str) -> u128 {
    u128::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("bad hex {s}"))
}

const NOSPEC: &str =
    "w64: 0, hi: Note::Ok, sgpr: Note::Ok, spec: [\"\", \"\"], class: [\"\", \"\"], t16: false";

fn table(cpu: &str, text: &str, out: &mut String) {
    let upper = cpu.to_uppercase();
    let mut rows = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut formats = vec![String::from("-"); 128];
    let mut imgs: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(t) = line.strip_prefix("word ") {
            let (w, name) = t.split_once(' ').expect("word value name");
            let w = parse_u128(w);
            words.push(format!(
                "    ({w:#x}, OpInfo {{ enc: Enc::Vop1, form: Form::Plain, op: 0, name: {name:?}, sem: {name:?}, mask: 0, val: 0, mods: 0, w64: [0, 0, 0], sext: 0, flags: 0, opnds: &[] }}),\n"
            ));
            continue;
        }
        if let Some(t) = line.strip_prefix("imgtab ") {
            let mut it = t.split_whitespace();
            let id: usize = it.next().expect("imgtab id").parse().expect("imgtab id");
            let entries: Vec<String> = it.map(|e| format!("{e:?}")).collect();
            assert_eq!(entries.len(), 96, "imgtab {id}");
            let _ = writeln!(
                out,
                "static IMGTAB_{upper}_{id}: [&str; 96] = [{}];",
                entries.join(", ")
            );
            continue;
        }
        if let Some(t) = line.strip_prefix("img ") {
            let f: Vec<&str> = t.split_whitespace().collect();
            let (e, form) = enc(f[0]);
            let op = parse_u128(f[1]);
            let w: Vec<u8> = f[3].split(',').map(|x| x.parse().expect("w")).collect();
            let mut w5 = [0u8; 5];
            for (d, s) in w5.iter_mut().zip(&w) {
                *d = *s;
            }
            let canon = if f[4] == "-" {
                "None".to_string()
            } else {
                format!("Some({:?})", f[4])
            };
            imgs.push((
                format!(
                    "    ImgInfo {{ vd: {}, w: {w5:?}, nw: {}, canon: {canon}, tab: &IMGTAB_{upper}_{}, nsa: {}, gather: {}, dmask: {}, dim: {} }},\n",
                    f[2],
                    w.len(),
                    f[5],
                    f[6],
                    f[7].contains('g'),
                    f[7].contains('D'),
                    f[7].contains('M')
                ),
                format!("{e}, {form}, {op:#x}"),
            ));
            continue;
        }
        if let Some(f) = line.strip_prefix("fmt ") {
            let (v, t) = f.split_once(' ').expect("fmt value text");
            let v: usize = v.parse().expect("fmt value");
            formats[v] = t.to_string();
            continue;
        }
        rows.push(op_row(cpu, line));
    }
    emit(cpu, &formats, &words, &rows, &imgs, out);
}

/// One instruction row of the table: its `OpInfo` literal and its
/// `(enc, form, op)` key.
fn op_row(cpu: &str, line: &str) -> (String, String) {
    let mut it = line.split_whitespace();
    let (e, form) = enc(it.next().expect("enc"));
    let op = parse_u128(it.next().expect("op"));
    let name = it.next().expect("name");
    // MASK, VAL and MODS may carry a /<wave64 value>
    let mut w32w64 = || {
        let s = it.next().expect("mask/val/mods");
        let (a, b) = s.split_once('/').unwrap_or((s, s));
        (parse_u128(a), parse_u128(b))
    };
    let (mask, mask64) = w32w64();
    let (val, val64) = w32w64();
    let (mods, mods64) = w32w64();
    let sext = parse_u128(it.next().expect("sext"));
    let flags: u16 = it
        .next()
        .expect("flags")
        .chars()
        .map(|c| match c {
            'm' => 1,
            'k' => 2,
            'p' => 4,
            'v' => 8,
            'o' => 16,
            '2' => 32,
            'z' => 64,
            '3' => 128,
            'b' => 256,
            '-' => 0,
            other => panic!("unknown flag {other}"),
        })
        .sum();
    let mut ops = String::new();
    for o in it {
        if let Some(t) = o.strip_prefix('=') {
            let _ = write!(
                ops,
                "Opnd {{ fld: Fld::None, ty: Ty::Text({t:?}), {NOSPEC} }}, "
            );
        } else if o == "attr" {
            let _ = write!(ops, "Opnd {{ fld: Fld::None, ty: Ty::Attr, {NOSPEC} }}, ");
        } else if let Some(k) = o.strip_prefix("k32") {
            let b32 = k == ".b32";
            let _ = write!(
                ops,
                "Opnd {{ fld: Fld::Kimm, ty: Ty::Kimm({b32}), {NOSPEC} }}, "
            );
        } else {
            let (f, t) = o.split_once(':').expect("field:type");
            let (t, t16) = match t.strip_suffix("!t") {
                Some(t) => (t, true),
                None => (t, false),
            };
            let (t, w64, hi, sgpr, specs, classes) = ty(t);
            let _ = write!(
                ops,
                "Opnd {{ fld: {}, ty: {t}, w64: {w64}, hi: {hi}, sgpr: {sgpr}, spec: {specs}, class: {classes}, t16: {t16} }}, ",
                field(f)
            );
        }
    }
    let sem = if cpu == "gfx90a" || cpu == "gfx942" {
        gfx9_sem(name)
    } else {
        name.to_string()
    };
    (
        format!(
            "    OpInfo {{ enc: {e}, form: {form}, op: {op:#x}, name: {name:?}, sem: {sem:?}, mask: {mask:#x}, val: {val:#x}, mods: {mods:#x}, w64: [{mask64:#x}, {val64:#x}, {mods64:#x}], sext: {sext:#x}, flags: {flags}, opnds: &[{ops}] }},\n",
        ),
        format!("{e}, {form}, {op:#x}"),
    )
}

/// Writes one target's tables: formats, words, rows with their index,
/// images with theirs.
fn emit(
    cpu: &str,
    formats: &[String],
    words: &[String],
    rows: &[(String, String)],
    imgs: &[(String, String)],
    out: &mut String,
) {
    let upper = cpu.to_uppercase();
    let _ = writeln!(out, "pub(crate) static FORMATS_{upper}: [&str; 128] = [");
    for f in formats {
        let t = if f == "-" { "" } else { f.as_str() };
        let _ = writeln!(out, "    {t:?},");
    }
    out.push_str("];\n");
    let _ = writeln!(
        out,
        "pub(crate) static WORDS_{upper}: &[(u32, OpInfo)] = &["
    );
    for w in words {
        out.push_str(w);
    }
    out.push_str("];\n");
    let _ = writeln!(out, "pub(crate) static OPS_{upper}: &[OpInfo] = &[");
    for (r, _) in rows {
        out.push_str(r);
    }
    out.push_str("];\n");
    let _ = writeln!(
        out,
        "pub(crate) fn index_{cpu}(enc: Enc, form: Form, op: u16) -> Option<usize> {{\n    match (enc, form, op) {{"
    );
    for (i, (_, key)) in rows.iter().enumerate() {
        let _ = writeln!(out, "        ({key}) => Some({i}),");
    }
    out.push_str("        _ => None,\n    }\n}\n");
    let _ = writeln!(out, "pub(crate) static IMG_{upper}: &[ImgInfo] = &[");
    for (r, _) in imgs {
        out.push_str(r);
    }
    out.push_str("];\n");
    // gfx90a and gfx942 have no image rows: the match has only its fallback arm
    let _ = writeln!(
        out,
        "#[allow(clippy::match_single_binding)]\npub(crate) fn img_index_{cpu}(enc: Enc, form: Form, op: u16) -> Option<usize> {{\n    match (enc, form, op) {{"
    );
    for (i, (_, key)) in imgs.iter().enumerate() {
        let _ = writeln!(out, "        ({key}) => Some({i}),");
    }
    out.push_str("        _ => None,\n    }\n}\n");
}

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir");
    let out_dir = std::env::var("OUT_DIR").expect("out dir");
    let mut out = String::new();
    for cpu in ["gfx1100", "gfx1201", "gfx90a", "gfx942"] {
        let p = Path::new(&dir).join("data").join(format!("{cpu}.txt"));
        println!("cargo:rerun-if-changed={}", p.display());
        let text = std::fs::read_to_string(&p).expect("data file");
        table(cpu, &text, &mut out);
    }
    std::fs::write(Path::new(&out_dir).join("tables.rs"), out).expect("write tables");
}
