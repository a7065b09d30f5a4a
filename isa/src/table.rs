//! Opcode tables: what each opcode of each encoding is called and how its
//! operands print.
//!
//! The rows come from `data/<cpu>.txt` (turned into Rust by `build.rs`). Those
//! files were written by `tools/gen_tables.py`, which asked `llvm-mc-19` at
//! development time; `cargo xtask isa-diff` re-checks them against LLVM 19 on
//! every CI run (the suite's code objects and a million random words per
//! target).

/// Instruction encodings (the families of the RDNA3/RDNA4 ISA references).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enc {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    Vop3,
    Vop3p,
    Vopd,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
    Mtbuf,
}

/// An operand field of an encoding. Where it sits depends on the encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fld {
    /// No field: fixed text.
    None,
    Sdst,
    Ssrc0,
    Ssrc1,
    Simm16,
    Vdst,
    Vsrc1,
    Src0,
    Src1,
    Src2,
    /// The literal dword after the instruction used as a constant operand.
    Kimm,
    /// VOP3's scalar destination (VOP3SD, VOPC promoted to VOP3).
    Sdst3,
}

/// How an immediate in a source operand prints (LLVM's operand types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imm {
    /// 32-bit integer or float operand.
    B32,
    /// 64-bit integer operand (32-bit literal zero-extended).
    B64,
    /// 64-bit float operand (32-bit literal is the high half).
    F64,
    F16,
    I16,
    V2F16,
    V2I16,
    BF16,
    V2BF16,
    /// Register-only operand: constants print with an "Invalid immediate" note.
    Reg,
    /// `sendmsg(...)` operand of `s_sendmsg_rtn_*`.
    Msg,
}

/// How a 16-bit immediate field prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simm {
    /// Always hexadecimal.
    Hex,
    /// Decimal up to 64, hexadecimal above.
    U16,
    /// Unsigned decimal.
    UDec,
    /// Printed by a per-instruction formatter (waitcnt, hwreg, sendmsg, ...).
    Special,
}

/// Operand type: what the field holds and how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// Scalar register (tuple of `n` dwords) in a 7/8-bit scalar field.
    SReg(u8),
    /// Vector register (tuple of `n` dwords) in an 8-bit field.
    VReg(u8),
    /// 8-bit scalar source of `n` dwords.
    SSrc(u8, Imm),
    /// 9-bit vector-or-scalar source of `n` dwords.
    Src(u8, Imm),
    /// 16-bit immediate.
    Simm(Simm),
    /// Literal constant operand.
    Kimm,
    /// A lane mask in scalar registers: one SGPR in wave32, a pair in wave64.
    Mask,
    /// Fixed text (`vcc_lo` prints `vcc` in wave64).
    Text(&'static str),
}

/// One printed operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opnd {
    pub fld: Fld,
    pub ty: Ty,
}

/// One opcode of one encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    pub enc: Enc,
    pub op: u16,
    /// LLVM 19's mnemonic.
    pub name: &'static str,
    /// Bits of the first 64 encoding bits, outside the opcode and the operand
    /// fields, that must equal `val` for the word to be this instruction.
    pub mask: u64,
    pub val: u64,
    /// VOP3/VOP3P modifier bits (of the first 64) that this opcode prints.
    pub mods: u64,
    /// Operands in print order.
    pub opnds: &'static [Opnd],
}

include!(concat!(env!("OUT_DIR"), "/tables.rs"));
