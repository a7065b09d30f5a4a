//! The types decoding produces and every later stage reads: the
//! [`Target`] an instruction stream is for, the [`Syntax`] (target and wave
//! size) decoding and printing follow, and the decoded [`Inst`] with its
//! operand fields.

use crate::table::{Enc, Fld, Form, OpInfo};

/// The GPU an instruction stream is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// RDNA3 (Navi31), LLVM `gfx1100`.
    Gfx1100,
    /// RDNA4 (Navi48), LLVM `gfx1201`.
    Gfx1201,
    /// CDNA2 (MI210), LLVM `gfx90a`: GFX9 encodings, wave64 only. Its
    /// cache-policy bits print as glc/slc/scc where gfx942's print as
    /// sc0/nt/sc1, and its opcode set differs (no gfx940-only ops such as
    /// `v_mov_b64`): both follow `isa/data/gfx90a.txt`.
    Gfx90a,
    /// CDNA3 (MI300X/MI308X), LLVM `gfx942`: GFX9 encodings, wave64 only.
    Gfx942,
}

impl Target {
    /// LLVM's processor name.
    pub fn mcpu(self) -> &'static str {
        match self {
            Target::Gfx1100 => "gfx1100",
            Target::Gfx1201 => "gfx1201",
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
        }
    }

    /// Parses an LLVM processor name.
    pub fn from_mcpu(name: &str) -> Option<Target> {
        match name {
            "gfx1100" => Some(Target::Gfx1100),
            "gfx1201" => Some(Target::Gfx1201),
            "gfx90a" => Some(Target::Gfx90a),
            "gfx942" => Some(Target::Gfx942),
            _ => None,
        }
    }

    /// RDNA4 and later.
    pub fn is_gfx12(self) -> bool {
        matches!(self, Target::Gfx1201)
    }

    /// The GFX9 family (CDNA2, CDNA3): GFX9 encodings and register
    /// numbering (m0 is 124, flat_scratch and xnack_mask follow s101),
    /// wave64 only.
    pub fn is_gfx9(self) -> bool {
        matches!(self, Target::Gfx90a | Target::Gfx942)
    }

    /// gfx940 and later (gfx942): LLVM's `isGFX940` (AMDGPUBaseInfo.cpp),
    /// which names the FLAT/MUBUF cache-policy bits sc0/nt/sc1 where gfx90a
    /// names them glc/slc/scc (AMDGPUInstPrinter::printCPol).
    pub fn is_gfx940(self) -> bool {
        matches!(self, Target::Gfx942)
    }
}

/// Printing context: target and wave size (wave64 names `vcc`/`exec` where
/// wave32 names `vcc_lo`/`exec_lo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syntax {
    pub target: Target,
    pub wave64: bool,
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

    /// The first 96 encoding bits.
    pub fn bits(&self) -> u128 {
        u128::from(self.qword()) | u128::from(self.words[2]) << 64
    }

    /// Raw value of an operand field.
    pub fn field(&self, f: Fld) -> u32 {
        field_of(self.info.enc, self.bits(), f)
    }

    pub fn name(&self) -> &'static str {
        self.info.name
    }

    /// The name the interpreter dispatches on (see [`OpInfo::sem`]).
    pub fn sem(&self) -> &'static str {
        self.info.sem
    }

    /// The DPP form, if any.
    pub fn form(&self) -> Form {
        self.info.form
    }
}

pub(crate) fn field_of(enc: Enc, q: u128, f: Fld) -> u32 {
    let bits = |lo: u32, w: u32| ((q >> lo) & ((1u128 << w) - 1)) as u32;
    match (enc, f) {
        (Enc::Sop2, Fld::Sdst) | (Enc::Sopk, Fld::Sdst) | (Enc::Sop1, Fld::Sdst) => bits(16, 7),
        (Enc::Sop2, Fld::Ssrc1) | (Enc::Sopc, Fld::Ssrc1) => bits(8, 8),
        (_, Fld::Ssrc0) => bits(0, 8),
        (_, Fld::Simm16) => bits(0, 16),
        (Enc::Vop2, Fld::Vdst) | (Enc::Vop1, Fld::Vdst) => bits(17, 8),
        (Enc::Vop2, Fld::Vsrc1) | (Enc::Vopc, Fld::Vsrc1) => bits(9, 8),
        (Enc::Vop3 | Enc::Vop3p | Enc::Vinterp | Enc::Ldsdir, Fld::Vdst) => bits(0, 8),
        (Enc::Vop3, Fld::Sdst3) => bits(8, 7),
        (Enc::Vop3 | Enc::Vop3p | Enc::Vinterp, Fld::Src0) => bits(32, 9),
        (Enc::Vop3 | Enc::Vop3p | Enc::Vinterp, Fld::Src1) => bits(41, 9),
        (Enc::Vop3 | Enc::Vop3p | Enc::Vinterp, Fld::Src2) => bits(50, 9),
        (Enc::Vop3, Fld::Dsrc0) | (Enc::Vop3p, Fld::Dsrc0) => bits(64, 8),
        (_, Fld::SrcX0) => bits(0, 9),
        (_, Fld::VsrcX1) => bits(9, 8),
        (_, Fld::VdstX) => bits(56, 8),
        (_, Fld::SrcY0) => bits(32, 9),
        (_, Fld::VsrcY1) => bits(41, 8),
        // bit 0 of vdstY is the inverse of vdstX's
        (_, Fld::VdstY) => bits(49, 7) << 1 | (!bits(56, 1) & 1),
        (_, Fld::Sdata) => bits(6, 7),
        (_, Fld::Sbase) => bits(0, 6) << 1,
        (_, Fld::Soffset) => bits(57, 7),
        (_, Fld::SoffsetLo) => bits(32, 7),
        (_, Fld::SmemOff) => bits(32, 21),
        (_, Fld::SmemOff24) => bits(32, 24),
        (Enc::Ds | Enc::Flat | Enc::Global | Enc::Scratch, Fld::Vdst) => bits(56, 8),
        (_, Fld::Saddr) => bits(48, 7),
        (_, Fld::Vdst12) => bits(32, 8),
        (_, Fld::Vaddr) => bits(64, 8),
        (_, Fld::Vdata) => bits(55, 8),
        (_, Fld::Saddr12) => bits(0, 7),
        (_, Fld::Vdata11) => bits(40, 8),
        (_, Fld::Vaddr11) => bits(32, 8),
        (_, Fld::Srsrc) => bits(48, 5) << 2,
        (_, Fld::Soffset8) => bits(56, 8),
        (_, Fld::Vdata12) => bits(32, 8),
        (_, Fld::Rsrc) => bits(41, 7),
        (_, Fld::Soffset7) => bits(0, 7),
        (_, Fld::Ssamp) => bits(58, 5) << 2,
        (_, Fld::Rsrc9) => bits(41, 9),
        (_, Fld::Samp9) => bits(55, 9),
        (_, Fld::Addr) => bits(32, 8),
        (_, Fld::Data0) => bits(40, 8),
        (_, Fld::Data1) => bits(48, 8),
        (_, Fld::Dsrc0) => bits(32, 8),
        (_, Fld::Src0) => bits(0, 9),
        _ => 0,
    }
}
