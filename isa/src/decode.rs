//! Instruction decoding: bytes to [`Inst`].
//!
//! The verdicts follow LLVM 19's `AMDGPUDisassembler::getInstruction`, which
//! tries the 96-bit forms first (DPP of VOP3/VOP3P, gfx12 memory and image
//! encodings), then the 64-bit ones, then the 32-bit ones, each only when
//! enough bytes remain, so that a word both decoders see gets the same length
//! and the same verdict. `cargo xtask isa-diff` holds the two together.

use crate::inst::{Inst, Syntax, Target, field_of};
use crate::table::{Enc, Fld, Form, Imm, Note, OpInfo, Opnd, Ty};

/// The opcode tables decoding reads, by target.
impl Target {
    /// Whole dwords that are instructions of their own (v_illegal).
    fn words(self) -> &'static [(u32, OpInfo)] {
        match self {
            Target::Gfx1100 => crate::table::WORDS_GFX1100,
            Target::Gfx1201 => crate::table::WORDS_GFX1201,
            Target::Gfx90a => crate::table::WORDS_GFX90A,
            Target::Gfx942 => crate::table::WORDS_GFX942,
        }
    }

    fn table(self) -> &'static [OpInfo] {
        match self {
            Target::Gfx1100 => crate::table::OPS_GFX1100,
            Target::Gfx1201 => crate::table::OPS_GFX1201,
            Target::Gfx90a => crate::table::OPS_GFX90A,
            Target::Gfx942 => crate::table::OPS_GFX942,
        }
    }

    pub(crate) fn index(self, enc: Enc, form: Form, op: u16) -> Option<&'static OpInfo> {
        let i = match self {
            Target::Gfx1100 => crate::table::index_gfx1100(enc, form, op),
            Target::Gfx1201 => crate::table::index_gfx1201(enc, form, op),
            Target::Gfx90a => crate::table::index_gfx90a(enc, form, op),
            Target::Gfx942 => crate::table::index_gfx942(enc, form, op),
        }?;
        self.table().get(i)
    }
}

/// Why bytes are not an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the instruction needs (the stream ended).
    Truncated,
    /// No instruction of the target has this encoding (LLVM prints
    /// `<unknown>`): an illegal instruction.
    Invalid { word: u32 },
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "instruction runs past the end of the code"),
            DecodeError::Invalid { word } => {
                write!(f, "{word:#010x} is not a valid instruction encoding")
            }
        }
    }
}

fn dword(bytes: &[u8], i: usize) -> Option<u32> {
    let b = bytes.get(i * 4..i * 4 + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Whether an SGPR index starts a `width`-dword tuple LLVM knows: tuples of
/// 2 are even-aligned, wider ones 4-aligned, and none runs past s105 (the
/// index is rounded down to the alignment first).
pub(crate) fn sgpr_ok(v: u32, width: u8) -> bool {
    let n = match width {
        1 | 2 => return true,
        3 | 4 => 26,
        8 => 25,
        16 => 23,
        _ => return false,
    };
    v >> 2 < n
}

/// As [`sgpr_ok`] for TTMP index `t` (0..=15).
pub(crate) fn ttmp_ok(t: u32, width: u8) -> bool {
    match width {
        1..=4 => true,
        8 => t >> 2 < 3,
        16 => t >> 2 < 1,
        _ => false,
    }
}

/// Default verdict for a special value where the operand was not probed:
/// LLVM's 32-bit and 64-bit special-register decoders.
fn special_default(v: u32, width: u8) -> bool {
    match v {
        106 | 124 | 126 | 235..=239 | 251..=253 => true,
        107 | 125 | 127 | 254 => width == 1,
        _ => false,
    }
}

/// Whether LLVM accepts scalar-or-constant value `v` (below 256) in operand
/// `o` of `width` dwords.
fn scalar_ok(o: &Opnd, v: u32, width: u8, wave64: bool) -> bool {
    match v {
        0..=105 => sgpr_ok(v, width) && o.sgpr != Note::Invalid,
        108..=123 => ttmp_ok(v - 108, width) && o.sgpr != Note::Invalid,
        128..=208 | 240..=248 | 255 => true,
        _ => match o.special(v, wave64) {
            Some(b'x') => false,
            Some(_) => true,
            None => special_default(v, width),
        },
    }
}

/// Whether LLVM accepts VGPR `r` (0..=255) as a `width`-dword tuple in `o`.
fn vgpr_ok(o: &Opnd, r: u32, width: u8) -> bool {
    r + u32::from(width) <= 256 && !(r >= 128 && o.hi == Note::Invalid)
}

/// The operand's register width in this wave size.
pub(crate) fn width(o: &Opnd, w: u8, wave64: bool) -> u8 {
    if wave64 && o.w64 != 0 { o.w64 } else { w }
}

/// Checks a decoded word's operands against LLVM's decoders; returns
/// whether a literal dword follows, or `None` if LLVM rejects the word.
fn operands_ok(info: &OpInfo, q: u128, wave64: bool) -> Option<bool> {
    let mut lit = false;
    for o in info.opnds {
        let v = field_of(info.enc, q, o.fld);
        match o.ty {
            Ty::Src(w, imm) => {
                let w = width(o, w, wave64);
                if v >= 256 {
                    if !vgpr_ok(o, v - 256, w) {
                        return None;
                    }
                } else if !scalar_ok(o, v, w, wave64) {
                    return None;
                } else if v == 255 && imm != Imm::Msg {
                    lit = true;
                }
            }
            Ty::SSrc(_, Imm::Msg) => {}
            Ty::SSrc(w, _) => {
                if !scalar_ok(o, v, w, wave64) {
                    return None;
                }
                lit |= v == 255;
            }
            Ty::SReg(w) => {
                let w = width(o, w, wave64);
                let ok = match v {
                    0..=105 => sgpr_ok(v, w),
                    108..=123 => ttmp_ok(v - 108, w),
                    _ => match o.special(v, wave64) {
                        Some(b'x') => false,
                        Some(_) => true,
                        None => special_default(v, w),
                    },
                };
                if !ok {
                    return None;
                }
            }
            Ty::Mask => {
                let w = if wave64 { 2 } else { 1 };
                let ok = match v {
                    256.. => vgpr_ok(o, v - 256, w),
                    0..=105 => sgpr_ok(v, w),
                    108..=123 => ttmp_ok(v - 108, w),
                    128..=208 | 240..=248 | 255 => true,
                    _ => match o.special(v, wave64) {
                        Some(b'x') => false,
                        Some(_) => true,
                        None => special_default(v, w),
                    },
                };
                if !ok {
                    return None;
                }
                lit |= v == 255;
            }
            Ty::VReg(w) => {
                if !vgpr_ok(o, v, width(o, w, wave64)) {
                    return None;
                }
            }
            Ty::Kimm(_) => lit = true,
            Ty::Simm(_) | Ty::Text(_) | Ty::Off | Ty::Attr | Ty::Mdata | Ty::Maddr => {}
        }
    }
    Some(lit)
}

/// Decodes a table-driven encoding (SOP*, VOP*, their DPP forms) whose
/// instruction is `n` dwords before any literal.
fn decode_row(
    syntax: Syntax,
    bytes: &[u8],
    enc: Enc,
    form: Form,
    op: u32,
    n: usize,
) -> Result<Inst, DecodeError> {
    let w0 = dword(bytes, 0).unwrap_or(0);
    let bad = DecodeError::Invalid { word: w0 };
    if bytes.len() < n * 4 {
        return Err(bad);
    }
    let info = syntax.target.index(enc, form, op as u16).ok_or(bad)?;
    let mut words = [0u32; 4];
    for (i, w) in words.iter_mut().enumerate().take(n) {
        *w = dword(bytes, i).unwrap_or(0);
    }
    let q = u128::from(words[0]) | u128::from(words[1]) << 32 | u128::from(words[2]) << 64;
    let (mask, val) = info.fixed(syntax.wave64);
    if q & mask != val {
        return Err(bad);
    }
    let lit = operands_ok(info, q, syntax.wave64).ok_or(bad)?;
    let mut len = n * 4;
    let mut literal = None;
    if lit {
        let l = dword(bytes, n).ok_or(bad)?;
        words[n] = l;
        literal = Some(l);
        len += 4;
    }
    Ok(Inst {
        info,
        words,
        len: len as u8,
        literal,
    })
}

/// Identifies the encoding family of a first dword.
pub(crate) fn family(target: Target, w: u32) -> Option<Enc> {
    if w >> 31 == 0 {
        return Some(match w >> 25 {
            0x3f => Enc::Vop1,
            0x3e => Enc::Vopc,
            _ => Enc::Vop2,
        });
    }
    if w >> 30 == 0b10 {
        return Some(match w >> 23 {
            0x17d => Enc::Sop1,
            0x17e => Enc::Sopc,
            0x17f => Enc::Sopp,
            _ if w >> 28 == 0b1011 => Enc::Sopk,
            _ => Enc::Sop2,
        });
    }
    if target.is_gfx9() {
        // GFX9: VOP3P is 31:23 = 110100111 inside VOP3's 110100
        return match w >> 26 {
            0b110100 if w >> 23 == 0x1a7 => Some(Enc::Vop3p),
            0b110100 => Some(Enc::Vop3),
            0b110000 => Some(Enc::Smem),
            0b110110 => Some(Enc::Ds),
            0b110111 => Some(Enc::Flat),
            0b111000 => Some(Enc::Mubuf),
            0b111010 => Some(Enc::Mtbuf),
            _ => None,
        };
    }
    let g12 = target.is_gfx12();
    match (w >> 26, w >> 24) {
        (0b110101, _) => Some(Enc::Vop3),
        (_, 0xcc) => Some(Enc::Vop3p),
        (0b110010, _) => Some(Enc::Vopd),
        (0b111101, _) => Some(Enc::Smem),
        (0b110110, _) => Some(Enc::Ds),
        (0b110111, _) if !g12 => Some(Enc::Flat),
        (0b111000, _) if !g12 => Some(Enc::Mubuf),
        (0b111010, _) if !g12 => Some(Enc::Mtbuf),
        (_, 0xcd) => Some(Enc::Vinterp),
        (_, 0xce) => Some(Enc::Ldsdir),
        (0b111110, _) => Some(Enc::Exp),
        (0b111100, _) if !g12 => Some(Enc::Mimg),
        (0b110100 | 0b111001, _) if g12 => Some(Enc::Mimg),
        (0b111011, _) if g12 => Some(Enc::Flat),
        (0b110001, _) if g12 => Some(Enc::Mubuf),
        _ => None,
    }
}

/// FLAT/GLOBAL/SCRATCH (gfx11: 64 bits, segment 17:16, opcode 24:18;
/// gfx12: 96 bits, segment 25:24, opcode 21:14). Variants: the scalar
/// address is null (bit 0), atomics return (gfx11 glc / gfx12 th bit 0,
/// bit 1), scratch takes a VGPR address (bit 2).
fn decode_flat(syntax: Syntax, bytes: &[u8], w0: u32) -> Result<Inst, DecodeError> {
    let w1 = dword(bytes, 1).unwrap_or(0);
    let (seg, op, var, n) = if syntax.target.is_gfx9() {
        // GFX9: segment 15:14; variants: saddr is off (0x7f), sc0, sve (13)
        let var = u8::from((w1 >> 16) & 0x7f == 0x7f)
            | u8::from(w0 >> 16 & 1 != 0) << 1
            | u8::from(w0 >> 13 & 1 != 0) << 2;
        ((w0 >> 14) & 3, (w0 >> 18) & 0x7f, var, 2)
    } else if syntax.target.is_gfx12() {
        let var = u8::from(w0 & 0x7f == 124)
            | u8::from(w1 >> 20 & 1 != 0) << 1
            | u8::from(w1 >> 17 & 1 != 0) << 2;
        ((w0 >> 24) & 3, (w0 >> 14) & 0xff, var, 3)
    } else {
        let var = u8::from((w1 >> 16) & 0x7f == 124)
            | u8::from(w0 >> 14 & 1 != 0) << 1
            | u8::from(w1 >> 23 & 1 != 0) << 2;
        ((w0 >> 16) & 3, (w0 >> 18) & 0x7f, var, 2)
    };
    let enc = match seg {
        0 => Enc::Flat,
        1 => Enc::Scratch,
        2 => Enc::Global,
        _ => return Err(DecodeError::Invalid { word: w0 }),
    };
    decode_row(syntax, bytes, enc, Form::Var(var), op, n)
}

/// The Y component of a decoded VOPD pair (its X component is `info`).
pub fn vopd_y(target: Target, inst: &Inst) -> Option<&'static OpInfo> {
    target.index(
        Enc::VopdY,
        Form::Plain,
        ((inst.words[0] >> 17) & 0x1f) as u16,
    )
}

/// VOPD (wave32 only): X opcode in 25:22, Y opcode in 21:17, both from
/// the tables; one literal dword serves both components.
fn decode_vopd(syntax: Syntax, bytes: &[u8], w0: u32) -> Result<Inst, DecodeError> {
    let bad = DecodeError::Invalid { word: w0 };
    if syntax.wave64 || bytes.len() < 8 {
        return Err(bad);
    }
    let t = syntax.target;
    let x = t
        .index(Enc::Vopd, Form::Plain, ((w0 >> 22) & 0xf) as u16)
        .ok_or(bad)?;
    let y = t
        .index(Enc::VopdY, Form::Plain, ((w0 >> 17) & 0x1f) as u16)
        .ok_or(bad)?;
    let w1 = dword(bytes, 1).unwrap_or(0);
    let q = u128::from(w0) | u128::from(w1) << 32;
    if q & x.mask != x.val || q & y.mask != y.val {
        return Err(bad);
    }
    let lx = operands_ok(x, q, false).ok_or(bad)?;
    let ly = operands_ok(y, q, false).ok_or(bad)?;
    let mut words = [w0, w1, 0, 0];
    let mut len = 8;
    let mut literal = None;
    if lx || ly {
        let l = dword(bytes, 2).ok_or(bad)?;
        words[2] = l;
        literal = Some(l);
        len = 12;
    }
    Ok(Inst {
        info: x,
        words,
        len,
        literal,
    })
}

/// Images: gfx11 MIMG (variant: NSA, whose address dwords follow), gfx12
/// VIMAGE (variant 0) and VSAMPLE (variant 1); then the register widths
/// must work out as LLVM's resizing does (`image::shape`).
fn decode_image(syntax: Syntax, bytes: &[u8], w0: u32) -> Result<Inst, DecodeError> {
    let bad = DecodeError::Invalid { word: w0 };
    let t = syntax.target;
    let inst = if t.is_gfx12() {
        let var = u8::from(w0 >> 26 == 0b111001);
        decode_row(
            syntax,
            bytes,
            Enc::Mimg,
            Form::Var(var),
            (w0 >> 14) & 0xff,
            3,
        )?
    } else {
        let nsa = (w0 & 1) as u8;
        let op = (w0 >> 18) & 0xff;
        let mut inst = decode_row(syntax, bytes, Enc::Mimg, Form::Var(nsa), op, 2)?;
        if nsa == 1 {
            let img = crate::image::info(t, Form::Var(1), op as u16).ok_or(bad)?;
            let n = usize::from(img.nsa);
            if inst.literal.is_some() || bytes.len() < 8 + 4 * n {
                return Err(bad);
            }
            for i in 0..n {
                inst.words[2 + i] = dword(bytes, 2 + i).ok_or(bad)?;
            }
            inst.len = (8 + 4 * n) as u8;
        }
        inst
    };
    if crate::image::shape(t, &inst).is_none() {
        return Err(bad);
    }
    Ok(inst)
}

/// Export has no opcode: every word with the prefix is valid (the
/// target, enables, done and row_en fields print; the rest is ignored).
pub(crate) static EXP_INFO: OpInfo = OpInfo {
    enc: Enc::Exp,
    form: Form::Plain,
    op: 0,
    name: "exp",
    sem: "exp",
    mask: 0,
    val: 0,
    mods: 0,
    w64: [0, 0, 0],
    sext: 0,
    flags: 0,
    opnds: &[],
};
pub(crate) static EXPORT_INFO: OpInfo = OpInfo {
    name: "export",
    sem: "export",
    ..EXP_INFO
};

/// DPP selector in a source-0 field: 250 is DPP16, 233/234 DPP8.
fn dpp_form(src0: u32) -> Form {
    match src0 {
        250 => Form::Dpp16,
        233 | 234 => Form::Dpp8,
        _ => Form::Plain,
    }
}

/// Whether a decoded GFX9 (gfx90a/gfx942) VOP1/VOP2 instruction is in its SDWA form
/// (source 0 is 249 and a selector dword follows).
pub fn is_sdwa(target: Target, inst: &Inst) -> bool {
    target.is_gfx9()
        && matches!(inst.info.enc, Enc::Vop1 | Enc::Vop2)
        && inst.words[0] & 0x1ff == 249
        && inst.len == 8
}

/// GFX9 (gfx90a/gfx942) SDWA (VOP1/VOP2 with source 0 = 249): the subset barebell-isa
/// prints as LLVM does. Dword 1: src0 7:0, dst_sel 10:8, dst_unused 12:11,
/// clamp 13, omod 15:14, src0_sel 18:16, src0 sext/neg/abs 21:19, s0 23,
/// src1_sel 26:24, src1 sext/neg/abs 29:27, s1 31. Only VGPR sources
/// without modifiers, clamp or omod, and opcodes whose operands are
/// `vdst, src0[, vsrc1]`, are decoded; other SDWA words are refused
/// (a documented gap: LLVM accepts many of them).
fn decode_sdwa(syntax: Syntax, bytes: &[u8], enc: Enc, op: u32) -> Result<Inst, DecodeError> {
    let w0 = dword(bytes, 0).ok_or(DecodeError::Truncated)?;
    let bad = DecodeError::Invalid { word: w0 };
    let w1 = dword(bytes, 1).ok_or(bad)?;
    let info = syntax
        .target
        .index(enc, Form::Plain, op as u16)
        .ok_or(bad)?;
    let shape_ok = match (enc, info.opnds) {
        (Enc::Vop1, [a, b]) => a.fld == Fld::Vdst && b.fld == Fld::Src0,
        (Enc::Vop2, [a, b, c]) => a.fld == Fld::Vdst && b.fld == Fld::Src0 && c.fld == Fld::Vsrc1,
        _ => false,
    };
    // clamp, omod, source modifiers and the SGPR bits (and bits 22, 30)
    let mods = 0xf8f8_e000u32;
    let sels_ok =
        (w1 >> 8) & 7 <= 6 && (w1 >> 11) & 3 <= 2 && (w1 >> 16) & 7 <= 6 && (w1 >> 24) & 7 <= 6;
    if !shape_ok || !info.name.ends_with("_e32") || w1 & mods != 0 || !sels_ok {
        return Err(bad);
    }
    Ok(Inst {
        info,
        words: [w0, w1, 0, 0],
        len: 8,
        literal: None,
    })
}

/// Decodes the instruction at the start of `bytes` for `syntax`'s target
/// and wave size.
pub fn decode(syntax: Syntax, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let target = syntax.target;
    let w0 = dword(bytes, 0).ok_or(DecodeError::Truncated)?;
    let bad = DecodeError::Invalid { word: w0 };
    if let Some((_, info)) = target.words().iter().find(|(w, _)| *w == w0) {
        return Ok(Inst {
            info,
            words: [w0, 0, 0, 0],
            len: 4,
            literal: None,
        });
    }
    let enc = family(target, w0).ok_or(bad)?;
    let w1 = dword(bytes, 1).unwrap_or(0);
    let row = |enc, form, op, n| decode_row(syntax, bytes, enc, form, op, n);
    match enc {
        Enc::Sop2 => row(enc, Form::Plain, (w0 >> 23) & 0x7f, 1),
        Enc::Sopk => row(enc, Form::Plain, (w0 >> 23) & 0x1f, 1),
        Enc::Sop1 => row(enc, Form::Plain, (w0 >> 8) & 0xff, 1),
        Enc::Sopc | Enc::Sopp => row(enc, Form::Plain, (w0 >> 16) & 0x7f, 1),
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc => {
            let op = match enc {
                Enc::Vop2 => (w0 >> 25) & 0x3f,
                Enc::Vop1 => (w0 >> 9) & 0xff,
                _ => (w0 >> 17) & 0xff,
            };
            if target.is_gfx9() && w0 & 0x1ff == 249 && enc != Enc::Vopc {
                return decode_sdwa(syntax, bytes, enc, op);
            }
            // LLVM tries the DPP form first and falls back to the plain one
            // (which takes the selector as src0 only if it has no src0).
            match dpp_form(w0 & 0x1ff) {
                Form::Plain => row(enc, Form::Plain, op, 1),
                form => row(enc, form, op, 2).or_else(|_| row(enc, Form::Plain, op, 1)),
            }
        }
        Enc::Vop3 | Enc::Vop3p if target.is_gfx9() => {
            let op = if enc == Enc::Vop3 {
                (w0 >> 16) & 0x3ff
            } else {
                (w0 >> 16) & 0x7f
            };
            // GFX9 VOP3/VOP3P take no literal: source 255 is invalid.
            let q = u64::from(w0) | u64::from(w1) << 32;
            if (0..3).any(|i| (q >> (32 + 9 * i)) & 0x1ff == 255) {
                let inst = row(enc, Form::Plain, op, 2)?;
                if inst.literal.is_some() {
                    return Err(bad);
                }
                return Ok(inst);
            }
            row(enc, Form::Plain, op, 2)
        }
        Enc::Vop3 | Enc::Vop3p => {
            let op = if enc == Enc::Vop3 {
                (w0 >> 16) & 0x3ff
            } else {
                (w0 >> 16) & 0x7f
            };
            match dpp_form(w1 & 0x1ff) {
                Form::Plain => row(enc, Form::Plain, op, 2),
                form => row(enc, form, op, 3).or_else(|_| row(enc, Form::Plain, op, 2)),
            }
        }
        Enc::Smem if target.is_gfx9() => {
            // GFX9: imm (17) = 0 with soe (14) = 0 is the SGPR-offset form
            // (plain); with imm = 1 the variants are soe (bit 0) and offset
            // 0 (bit 1)
            let op = (w0 >> 18) & 0xff;
            match (w0 >> 17 & 1, w0 >> 14 & 1) {
                (0, 0) => row(enc, Form::Plain, op, 2),
                (0, _) => Err(bad),
                (_, soe) => {
                    let var = soe as u8 | u8::from(w1 & 0x1f_ffff == 0) << 1;
                    row(enc, Form::Var(var), op, 2)
                }
            }
        }
        Enc::Smem => {
            // variants: soffset is null (bit 0), offset is 0 (bit 1, gfx11)
            let null = u8::from(w1 >> 25 == 124);
            let (op, var) = if target.is_gfx12() {
                ((w0 >> 13) & 0x3f, null)
            } else {
                ((w0 >> 18) & 0xff, null | u8::from(w1 & 0x1f_ffff == 0) << 1)
            };
            row(enc, Form::Var(var), op, 2)
        }
        Enc::Ds if target.is_gfx9() => row(enc, Form::Plain, (w0 >> 17) & 0xff, 2),
        Enc::Ds => row(enc, Form::Plain, (w0 >> 18) & 0xff, 2),
        // GFX9 MUBUF (the table has no MTBUF rows for gfx90a/gfx942);
        // variants: offen (12), idxen (13), glc/sc0 (14), lds (16); op
        // 24:18
        Enc::Mubuf if target.is_gfx9() => {
            let var = u8::from(w0 >> 12 & 1 != 0)
                | u8::from(w0 >> 13 & 1 != 0) << 1
                | u8::from(w0 >> 14 & 1 != 0) << 2
                | u8::from(w0 >> 16 & 1 != 0) << 3;
            row(enc, Form::Var(var), (w0 >> 18) & 0x7f, 2)
        }
        Enc::Mubuf | Enc::Mtbuf if target.is_gfx9() => Err(bad),
        Enc::Mubuf | Enc::Mtbuf if target.is_gfx12() => {
            // VBUFFER; variants: offen, idxen, tfe, th bit 0
            let var = u8::from(w1 >> 30 & 1 != 0)
                | u8::from(w1 >> 31 & 1 != 0) << 1
                | u8::from(w0 >> 22 & 1 != 0) << 2
                | u8::from(w1 >> 20 & 1 != 0) << 3;
            row(Enc::Mubuf, Form::Var(var), (w0 >> 14) & 0xff, 3)
        }
        Enc::Mubuf | Enc::Mtbuf => {
            // variants: offen, idxen, tfe, glc
            let var = u8::from(w1 >> 22 & 1 != 0)
                | u8::from(w1 >> 23 & 1 != 0) << 1
                | u8::from(w1 >> 21 & 1 != 0) << 2
                | u8::from(w0 >> 14 & 1 != 0) << 3;
            let op = if enc == Enc::Mubuf {
                (w0 >> 18) & 0xff
            } else {
                (w0 >> 15) & 0xf
            };
            row(enc, Form::Var(var), op, 2)
        }
        Enc::Flat => decode_flat(syntax, bytes, w0),
        Enc::Mimg => decode_image(syntax, bytes, w0),
        Enc::Vinterp => row(enc, Form::Plain, (w0 >> 16) & 0x7f, 2),
        Enc::Ldsdir => row(enc, Form::Plain, (w0 >> 20) & 3, 1),
        Enc::Exp if bytes.len() >= 8 => Ok(Inst {
            info: if target.is_gfx12() {
                &EXPORT_INFO
            } else {
                &EXP_INFO
            },
            words: [w0, w1, 0, 0],
            len: 8,
            literal: None,
        }),
        Enc::Vopd => decode_vopd(syntax, bytes, w0),
        _ => Err(bad),
    }
}
