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

fn ty(spec: &str) -> String {
    // FIELD:TYPE, TYPE is one of
    //   s<w> / v<w>            register of <w> dwords
    //   src<w>.<imm>           9-bit source, register of <w> dwords or constant
    //   s<w>.<imm>             8-bit scalar source
    //   imm.<style>            16-bit immediate
    //   k32                    32-bit literal constant (KIMM)
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
    if kind == "k32" {
        return "Ty::Kimm".into();
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
        other => panic!("unknown field {other}"),
    }
}

fn enc(name: &str) -> &'static str {
    match name {
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
        "smem" => "Enc::Smem",
        "ds" => "Enc::Ds",
        "mubuf" => "Enc::Mubuf",
        "flat0" | "vflat0" => "Enc::Flat",
        "flat1" | "vflat1" => "Enc::Scratch",
        "flat2" | "vflat2" => "Enc::Global",
        other => panic!("unknown encoding {other}"),
    }
}

fn parse_u64(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("bad hex {s}"))
}

fn table(cpu: &str, text: &str, mem: &str, out: &mut String) {
    let upper = cpu.to_uppercase();
    let mut rows = Vec::new();
    // Memory encodings: `CPU ENC OPCODE NAME` (operands printed by hand).
    for line in mem.lines() {
        let mut it = line.split_whitespace();
        let (Some(c), Some(e), Some(op), Some(name)) = (it.next(), it.next(), it.next(), it.next())
        else {
            continue;
        };
        if c != cpu {
            continue;
        }
        let op = parse_u64(op);
        rows.push((
            format!(
                "    OpInfo {{ enc: {}, op: {op:#x}, name: {name:?}, mask: 0, val: 0, mods: 0, opnds: &[] }},\n",
                enc(e)
            ),
            format!("{}, {op:#x}", enc(e)),
        ));
    }
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut it = line.split_whitespace();
        let e = it.next().expect("enc");
        let op = parse_u64(it.next().expect("op"));
        let name = it.next().expect("name");
        let mask = parse_u64(it.next().expect("mask"));
        let val = parse_u64(it.next().expect("val"));
        let mods = if e == "vop3" || e == "vop3p" {
            parse_u64(it.next().expect("mods"))
        } else {
            0
        };
        let mut ops = String::new();
        for o in it {
            if let Some(t) = o.strip_prefix('=') {
                let _ = write!(ops, "Opnd {{ fld: Fld::None, ty: Ty::Text({t:?}) }}, ");
            } else {
                let (f, t) = o.split_once(':').expect("field:type");
                let _ = write!(ops, "Opnd {{ fld: {}, ty: {} }}, ", field(f), ty(t));
            }
        }
        rows.push((
            format!(
                "    OpInfo {{ enc: {}, op: {op:#x}, name: {name:?}, mask: {mask:#x}, val: {val:#x}, mods: {mods:#x}, opnds: &[{ops}] }},\n",
                enc(e)
            ),
            format!("{}, {op:#x}", enc(e)),
        ));
    }
    let _ = writeln!(out, "pub(crate) static OPS_{upper}: &[OpInfo] = &[");
    for (r, _) in &rows {
        out.push_str(r);
    }
    out.push_str("];\n");
    let _ = writeln!(
        out,
        "pub(crate) fn index_{cpu}(enc: Enc, op: u16) -> Option<usize> {{\n    match (enc, op) {{"
    );
    for (i, (_, key)) in rows.iter().enumerate() {
        let _ = writeln!(out, "        ({key}) => Some({i}),");
    }
    out.push_str("        _ => None,\n    }\n}\n");
}

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir");
    let out_dir = std::env::var("OUT_DIR").expect("out dir");
    let mut out = String::new();
    let mp = Path::new(&dir).join("data").join("mem.txt");
    println!("cargo:rerun-if-changed={}", mp.display());
    let mem = std::fs::read_to_string(&mp).expect("mem data file");
    for cpu in ["gfx1100", "gfx1201"] {
        let mut text = String::new();
        for part in ["", "_vop3"] {
            let p = Path::new(&dir)
                .join("data")
                .join(format!("{cpu}{part}.txt"));
            println!("cargo:rerun-if-changed={}", p.display());
            if let Ok(t) = std::fs::read_to_string(&p) {
                text.push_str(&t);
            }
        }
        table(cpu, &text, &mem, &mut out);
    }
    std::fs::write(Path::new(&out_dir).join("tables.rs"), out).expect("write tables");
}
