//! Instruction decoding: bytes to [`Inst`].
//!
//! The order in which encodings are tried follows LLVM 19's
//! `AMDGPUDisassembler::getInstruction` (96-bit forms, then 64-bit, then
//! 32-bit, each only when enough bytes remain), so that a word both decoders
//! see gets the same length and the same verdict.

use crate::table::{Enc, Fld, Imm, OpInfo, Ty};

/// The GPU an instruction stream is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// RDNA3 (Navi31), LLVM `gfx1100`.
    Gfx1100,
    /// RDNA4 (Navi48), LLVM `gfx1201`.
    Gfx1201,
}

impl Target {
    /// LLVM's processor name.
    pub fn mcpu(self) -> &'static str {
        match self {
            Target::Gfx1100 => "gfx1100",
            Target::Gfx1201 => "gfx1201",
        }
    }

    /// Parses an LLVM processor name.
    pub fn from_mcpu(name: &str) -> Option<Target> {
        match name {
            "gfx1100" => Some(Target::Gfx1100),
            "gfx1201" => Some(Target::Gfx1201),
            _ => None,
        }
    }

    /// RDNA4 and later.
    pub fn is_gfx12(self) -> bool {
        matches!(self, Target::Gfx1201)
    }

    fn table(self) -> &'static [OpInfo] {
        match self {
            Target::Gfx1100 => crate::table::OPS_GFX1100,
            Target::Gfx1201 => crate::table::OPS_GFX1201,
        }
    }

    fn index(self, enc: Enc, op: u16) -> Option<&'static OpInfo> {
        let i = match self {
            Target::Gfx1100 => crate::table::index_gfx1100(enc, op),
            Target::Gfx1201 => crate::table::index_gfx1201(enc, op),
        }?;
        self.table().get(i)
    }
}

/// Why bytes are not an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the instruction needs (the stream ended).
    Truncated,
    /// No instruction of the target has this encoding (LLVM prints `<unknown>`).
    Invalid { word: u32 },
    /// An encoding family this crate does not decode (image, export,
    /// interpolation): LLVM may know it, we do not.
    Unsupported { word: u32, family: &'static str },
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "instruction runs past the end of the code"),
            DecodeError::Invalid { word } => {
                write!(f, "{word:#010x} is not a valid instruction encoding")
            }
            DecodeError::Unsupported { word, family } => write!(
                f,
                "{word:#010x} is a {family} instruction, which this decoder does not support"
            ),
        }
    }
}

/// A decoded instruction: the opcode row and the raw dwords it occupies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inst {
    pub info: &'static OpInfo,
    /// The instruction's dwords (up to three, then the literal if any).
    pub words: [u32; 4],
    /// Length in bytes (4, 8, 12 or 16).
    pub len: u8,
    /// The literal constant, if the instruction carries one.
    pub literal: Option<u32>,
}

impl Inst {
    /// The first 64 encoding bits.
    pub fn qword(&self) -> u64 {
        u64::from(self.words[0]) | u64::from(self.words[1]) << 32
    }

    /// Raw value of an operand field.
    pub fn field(&self, f: Fld) -> u32 {
        field_of(self.info.enc, self.qword(), f)
    }

    pub fn name(&self) -> &'static str {
        self.info.name
    }
}

pub(crate) fn field_of(enc: Enc, q: u64, f: Fld) -> u32 {
    let bits = |lo: u32, w: u32| ((q >> lo) & ((1u64 << w) - 1)) as u32;
    match (enc, f) {
        (Enc::Sop2, Fld::Sdst) | (Enc::Sopk, Fld::Sdst) | (Enc::Sop1, Fld::Sdst) => bits(16, 7),
        (Enc::Sop2, Fld::Ssrc1) | (Enc::Sopc, Fld::Ssrc1) => bits(8, 8),
        (_, Fld::Ssrc0) => bits(0, 8),
        (_, Fld::Simm16) => bits(0, 16),
        (Enc::Vop2, Fld::Vdst) | (Enc::Vop1, Fld::Vdst) => bits(17, 8),
        (Enc::Vop2, Fld::Vsrc1) | (Enc::Vopc, Fld::Vsrc1) => bits(9, 8),
        (Enc::Vop3, Fld::Vdst) | (Enc::Vop3p, Fld::Vdst) => bits(0, 8),
        (Enc::Vop3, Fld::Sdst3) => bits(8, 7),
        (Enc::Vop3, Fld::Src0) | (Enc::Vop3p, Fld::Src0) => bits(32, 9),
        (Enc::Vop3, Fld::Src1) | (Enc::Vop3p, Fld::Src1) => bits(41, 9),
        (Enc::Vop3, Fld::Src2) | (Enc::Vop3p, Fld::Src2) => bits(50, 9),
        (_, Fld::Src0) => bits(0, 9),
        _ => 0,
    }
}

fn dword(bytes: &[u8], i: usize) -> Option<u32> {
    let b = bytes.get(i * 4..i * 4 + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Whether a source value is a register or constant LLVM accepts for an
/// operand of `width` dwords (`vgpr`: the field is 9 bits wide).
fn src_ok(v: u32, width: u8) -> bool {
    if v >= 256 {
        // VGPR tuples must not run past v255.
        return (v - 256) + u32::from(width) <= 256;
    }
    match v {
        0..=105 | 108..=124 | 126 | 128..=208 | 235..=248 | 251..=253 | 255 => true,
        106 => true,
        107 | 125 | 127 | 254 => width == 1,
        _ => false,
    }
}

/// Whether a 7-bit scalar destination can name a `width`-dword tuple.
fn sdst_ok(v: u32, width: u8) -> bool {
    match v {
        107 | 125 | 127 => width == 1,
        _ => true,
    }
}

/// 16-bit VOP1/VOP2/VOPC (e32) forms address only v0..v127 (LLVM's
/// `*_Lo128` register classes): true if the destination is such a register.
pub(crate) fn lo128_dst(name: &str) -> bool {
    if name.contains("_pk_") || name.starts_with("v_cmp") || name.starts_with("v_readfirstlane") {
        return false;
    }
    let base = name.strip_suffix("_e32").unwrap_or(name);
    let mut parts = base.split('_').skip(1);
    // first type-looking suffix
    parts
        .find(|p| {
            matches!(
                *p,
                "f16"
                    | "i16"
                    | "u16"
                    | "b16"
                    | "f32"
                    | "i32"
                    | "u32"
                    | "b32"
                    | "f64"
                    | "i64"
                    | "u64"
                    | "b64"
                    | "u8"
                    | "i8"
                    | "i4"
            )
        })
        .is_some_and(|t| matches!(t, "f16" | "i16" | "u16" | "b16"))
}

/// Identifies the encoding family of a first dword.
pub(crate) fn family(target: Target, w: u32) -> Result<Enc, &'static str> {
    if w >> 31 == 0 {
        return Ok(match w >> 25 {
            0x3f => Enc::Vop1,
            0x3e => Enc::Vopc,
            _ => Enc::Vop2,
        });
    }
    if w >> 30 == 0b10 {
        return Ok(match w >> 23 {
            0x17d => Enc::Sop1,
            0x17e => Enc::Sopc,
            0x17f => Enc::Sopp,
            _ if w >> 28 == 0b1011 => Enc::Sopk,
            _ => Enc::Sop2,
        });
    }
    let p6 = w >> 26;
    let p8 = w >> 24;
    match (p6, p8) {
        (0b110101, _) => Ok(Enc::Vop3),
        (_, 0xcc) => Ok(Enc::Vop3p),
        (0b110010, _) => Ok(Enc::Vopd),
        (0b111101, _) => Ok(Enc::Smem),
        (0b110110, _) => Ok(Enc::Ds),
        (_, 0xcd) => Err("VINTERP"),
        (_, 0xce) => Err("LDSDIR"),
        (0b111110, _) => Err("EXP"),
        (0b110111, _) if !target.is_gfx12() => Ok(Enc::Flat),
        (0b111000, _) if !target.is_gfx12() => Ok(Enc::Mubuf),
        (0b111010, _) if !target.is_gfx12() => Ok(Enc::Mtbuf),
        (0b111100, _) if !target.is_gfx12() => Err("MIMG"),
        (0b111011, _) if target.is_gfx12() => Ok(Enc::Flat),
        (0b110001, _) if target.is_gfx12() => Ok(Enc::Mubuf),
        (0b110100, _) | (0b111001, _) if target.is_gfx12() => Err("VIMAGE/VSAMPLE"),
        _ => Err(""),
    }
}

fn lookup_mem(
    target: Target,
    enc: Enc,
    op: u16,
    bytes: &[u8],
    w0: u32,
    n: usize,
) -> Result<Inst, DecodeError> {
    if bytes.len() < n * 4 {
        return Err(DecodeError::Invalid { word: w0 });
    }
    let info = target
        .index(enc, op)
        .ok_or(DecodeError::Invalid { word: w0 })?;
    let mut words = [0u32; 4];
    for (i, w) in words.iter_mut().enumerate().take(n) {
        *w = dword(bytes, i).unwrap_or(0);
    }
    let inst = Inst {
        info,
        words,
        len: (n * 4) as u8,
        literal: None,
    };
    if !crate::print_mem::mem_fields_ok(&inst, target.is_gfx12()) {
        return Err(DecodeError::Invalid { word: w0 });
    }
    Ok(inst)
}

/// gfx11 FLAT/GLOBAL/SCRATCH: segment in bits 17:16, opcode in 24:18.
fn decode_flat(target: Target, bytes: &[u8], w0: u32) -> Result<Inst, DecodeError> {
    let enc = match (w0 >> 16) & 3 {
        0 => Enc::Flat,
        1 => Enc::Scratch,
        2 => Enc::Global,
        _ => return Err(DecodeError::Invalid { word: w0 }),
    };
    lookup_mem(target, enc, ((w0 >> 18) & 0x7f) as u16, bytes, w0, 2)
}

/// gfx12 VFLAT/VGLOBAL/VSCRATCH: segment in bits 25:24, opcode in 21:14.
fn decode_vflat(target: Target, bytes: &[u8], w0: u32) -> Result<Inst, DecodeError> {
    let enc = match (w0 >> 24) & 3 {
        0 => Enc::Flat,
        1 => Enc::Scratch,
        2 => Enc::Global,
        _ => return Err(DecodeError::Invalid { word: w0 }),
    };
    lookup_mem(target, enc, ((w0 >> 14) & 0xff) as u16, bytes, w0, 3)
}

/// VOPD component opcodes (X: 4 bits, Y: 5 bits) by target; `None` where
/// LLVM 19 has none.
pub(crate) fn vopd_name(target: Target, op: u32) -> Option<&'static str> {
    Some(match op {
        0 => "fmac_f32",
        1 => "fmaak_f32",
        2 => "fmamk_f32",
        3 => "mul_f32",
        4 => "add_f32",
        5 => "sub_f32",
        6 => "subrev_f32",
        7 => "mul_dx9_zero_f32",
        8 => "mov_b32",
        9 => "cndmask_b32",
        10 if target.is_gfx12() => "max_num_f32",
        11 if target.is_gfx12() => "min_num_f32",
        10 => "max_f32",
        11 => "min_f32",
        12 if !target.is_gfx12() => "dot2acc_f32_f16",
        13 if !target.is_gfx12() => "dot2acc_f32_bf16",
        16 => "add_nc_u32",
        17 => "lshlrev_b32",
        18 => "and_b32",
        _ => return None,
    })
}

pub(crate) static VOPD_INFO: OpInfo = OpInfo {
    enc: Enc::Vopd,
    op: 0,
    name: "v_dual",
    mask: 0,
    val: 0,
    mods: 0,
    opnds: &[],
};

fn decode_vopd(target: Target, bytes: &[u8], w0: u32) -> Result<Inst, DecodeError> {
    let w1 = dword(bytes, 1).ok_or(DecodeError::Invalid { word: w0 })?;
    let opx = (w0 >> 22) & 0xf;
    let opy = (w0 >> 17) & 0x1f;
    let (Some(nx), Some(ny)) = (vopd_name(target, opx), vopd_name(target, opy)) else {
        return Err(DecodeError::Invalid { word: w0 });
    };
    if opx >= 16 {
        return Err(DecodeError::Invalid { word: w0 });
    }
    let kimm = |n: &str| n.starts_with("fmaak") || n.starts_with("fmamk");
    let lit = (w0 & 0x1ff) == 255 || (w1 & 0x1ff) == 255 || kimm(nx) || kimm(ny);
    let mut words = [w0, w1, 0, 0];
    let mut len = 8;
    let mut literal = None;
    if lit {
        let l = dword(bytes, 2).ok_or(DecodeError::Invalid { word: w0 })?;
        words[2] = l;
        literal = Some(l);
        len = 12;
    }
    Ok(Inst {
        info: &VOPD_INFO,
        words,
        len,
        literal,
    })
}

/// Decodes the instruction at the start of `bytes`.
pub fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let w0 = dword(bytes, 0).ok_or(DecodeError::Truncated)?;
    let enc = match family(target, w0) {
        Ok(e) => e,
        Err("") => return Err(DecodeError::Invalid { word: w0 }),
        Err(family) => return Err(DecodeError::Unsupported { word: w0, family }),
    };
    let (op, dwords) = match enc {
        Enc::Sop2 => ((w0 >> 23) & 0x7f, 1),
        Enc::Sopk => ((w0 >> 23) & 0x1f, 1),
        Enc::Sop1 => ((w0 >> 8) & 0xff, 1),
        Enc::Sopc | Enc::Sopp => ((w0 >> 16) & 0x7f, 1),
        Enc::Vop2 => ((w0 >> 25) & 0x3f, 1),
        Enc::Vop1 => ((w0 >> 9) & 0xff, 1),
        Enc::Vopc => ((w0 >> 17) & 0xff, 1),
        Enc::Vop3 => ((w0 >> 16) & 0x3ff, 2),
        Enc::Vop3p => ((w0 >> 16) & 0x7f, 2),
        Enc::Smem if target.is_gfx12() => ((w0 >> 13) & 0x3f, 2),
        Enc::Smem => ((w0 >> 18) & 0xff, 2),
        Enc::Ds => ((w0 >> 18) & 0xff, 2),
        Enc::Mubuf => ((w0 >> 18) & 0xff, 2),
        Enc::Flat if target.is_gfx12() => return decode_vflat(target, bytes, w0),
        Enc::Flat => return decode_flat(target, bytes, w0),
        Enc::Vopd => return decode_vopd(target, bytes, w0),
        _ => return Err(DecodeError::Invalid { word: w0 }),
    };
    if dwords == 2 && bytes.len() < 8 {
        return Err(DecodeError::Invalid { word: w0 });
    }
    if matches!(enc, Enc::Smem | Enc::Ds | Enc::Mubuf) {
        return lookup_mem(target, enc, op as u16, bytes, w0, 2);
    }
    let info = target
        .index(enc, op as u16)
        .ok_or(DecodeError::Invalid { word: w0 })?;
    let w1 = if dwords >= 2 {
        dword(bytes, 1).unwrap_or(0)
    } else {
        0
    };
    let q = u64::from(w0) | u64::from(w1) << 32;
    if q & info.mask != info.val {
        return Err(DecodeError::Invalid { word: w0 });
    }
    let mut needs_literal = false;
    if matches!(enc, Enc::Vop1 | Enc::Vop2) && lo128_dst(info.name) && (w0 >> 17) & 0x80 != 0 {
        return Err(DecodeError::Invalid { word: w0 });
    }
    for o in info.opnds {
        let v = field_of(enc, q, o.fld);
        match o.ty {
            Ty::Src(w, imm) => {
                // DPP selectors in a 32-bit VOP word are separate encodings.
                if matches!(enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc) && matches!(v, 233 | 234 | 250)
                {
                    return Err(DecodeError::Unsupported {
                        word: w0,
                        family: "DPP",
                    });
                }
                if !src_ok(v, w) {
                    return Err(DecodeError::Invalid { word: w0 });
                }
                if v == 255 && imm != Imm::Msg {
                    needs_literal = true;
                }
            }
            Ty::SSrc(w, _) => {
                if v > 255 || !src_ok(v, w) {
                    return Err(DecodeError::Invalid { word: w0 });
                }
                if v == 255 {
                    needs_literal = true;
                }
            }
            Ty::SReg(w) if !sdst_ok(v, w) => {
                return Err(DecodeError::Invalid { word: w0 });
            }
            Ty::Kimm => needs_literal = true,
            _ => {}
        }
    }
    let mut words = [w0, w1, 0, 0];
    let mut len = dwords * 4;
    let mut literal = None;
    if needs_literal {
        let lit = dword(bytes, dwords).ok_or(DecodeError::Invalid { word: w0 })?;
        words[dwords] = lit;
        literal = Some(lit);
        len += 4;
    }
    Ok(Inst {
        info,
        words,
        len: len as u8,
        literal,
    })
}
