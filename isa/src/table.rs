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
    /// The Y component of a VOPD pair (a table key; instructions are `Vopd`).
    VopdY,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
    Mtbuf,
    /// Interpolation (v_interp_*_f32 with wait_exp).
    Vinterp,
    /// LDS direct/parameter loads (gfx12 VDSDIR).
    Ldsdir,
    /// Export.
    Exp,
    /// Image instructions (gfx11 MIMG, gfx12 VIMAGE/VSAMPLE).
    Mimg,
}

/// The form of a VOP instruction: plain, or with a DPP16 / DPP8 dword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    Plain,
    Dpp16,
    Dpp8,
    /// Variant of a memory encoding: which of the family's predicates hold
    /// (e.g. SMEM: soffset is null, offset is 0), one bit each.
    Var(u8),
}

/// What LLVM does with a register that an operand's class does not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// Accepted and printed plainly.
    Ok,
    /// The word is rejected.
    Invalid,
    /// Printed with "/*Invalid register, operand has 'CLASS' register
    /// class*/" after it.
    Class(&'static str),
    /// As `Class`, for every VGPR (not only v128 and up).
    All(&'static str),
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
    /// The source VGPR of a DPP control dword.
    Dsrc0,
    /// VOPD component fields.
    SrcX0,
    VsrcX1,
    VdstX,
    SrcY0,
    VsrcY1,
    VdstY,
    /// SMEM: data, base (register pairs), SGPR offset, signed offset
    /// (21 bits on gfx11, 24 on gfx12).
    Sdata,
    Sbase,
    Soffset,
    SmemOff,
    SmemOff24,
    /// GFX9 SMEM with imm = 0: the SGPR offset in the offset field's low
    /// bits.
    SoffsetLo,
    /// Vector memory (DS, gfx11 FLAT): address, data, second data VGPRs
    /// (the destination is `Vdst`).
    Addr,
    Data0,
    Data1,
    /// gfx11 FLAT scalar address (bits 54:48).
    Saddr,
    /// gfx12 VFLAT: destination, address, data and scalar address.
    Vdst12,
    Vaddr,
    Vdata,
    Saddr12,
    /// gfx11 MUBUF/MTBUF: data, address, resource (quads), scalar offset.
    Vdata11,
    Vaddr11,
    Srsrc,
    Soffset8,
    /// gfx12 VBUFFER: data, resource, scalar offset (the address is `Vaddr`).
    Vdata12,
    Rsrc,
    Soffset7,
    /// Images: gfx11 sampler (quads), gfx12 9-bit resource and sampler.
    Ssamp,
    Rsrc9,
    Samp9,
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
    /// Signed offset printed as a hex operand (SMEM).
    Off,
    /// LDS parameter `attrN.c` (attribute 15:10, channel 9:8).
    Attr,
    /// Image data and address registers (widths from [`ImgInfo`]).
    Mdata,
    Maddr,
    /// Literal constant operand: always hex, or (true) printed like a b32
    /// source literal.
    Kimm(bool),
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
    /// Register width in wave64 where it differs (WMMA), else 0.
    pub w64: u8,
    /// How a VGPR from v128 up is taken (16-bit `*_Lo128` classes) or any
    /// VGPR in a scalar-only operand.
    pub hi: Note,
    /// How an SGPR or TTMP in a 9-bit source is taken.
    pub sgpr: Note,
    /// LLVM's verdict on each of [`SPECIAL`] in this operand, in wave32 and
    /// wave64: `.` accepted, `x` rejected, `n` printed with the "Invalid
    /// register" note naming `class` (wave32 / wave64); `-` where the field
    /// cannot hold the value; empty for operands that take no scalar value.
    pub spec: [&'static str; 2],
    pub class: [&'static str; 2],
    /// A 16-bit VGPR operand (VGPR_16): prints `v<n>.l` / `v<n>.h`, bit 7 of
    /// the register number selecting the half.
    pub t16: bool,
}

/// The special scalar source values whose treatment differs per operand:
/// vcc_lo, vcc_hi, null, m0, exec_lo, exec_hi, src_shared_base/limit,
/// src_private_base/limit, src_pops_exiting_wave_id, src_vccz, src_execz,
/// src_scc, src_lds_direct.
pub const SPECIAL: [u32; 15] = [
    106, 107, 124, 125, 126, 127, 235, 236, 237, 238, 239, 251, 252, 253, 254,
];

impl Opnd {
    /// LLVM's verdict on special value `v` (b'.', b'x', b'n'), if probed.
    pub fn special(&self, v: u32, wave64: bool) -> Option<u8> {
        let i = SPECIAL.iter().position(|&s| s == v)?;
        self.spec[usize::from(wave64)].as_bytes().get(i).copied()
    }
}

/// VOP3P whose neg_lo/neg_hi bits print as negation and absolute value of
/// the source (`v_fma_mix*`).
pub const FLAG_MIX: u16 = 1;
/// VOP3P whose op_sel bits print as `index_key:N` (`v_swmmac*`).
pub const FLAG_INDEX_KEY: u16 = 2;
/// VOP3 whose op_sel prints as two entries (`v_permlane16_b32`).
pub const FLAG_PERMLANE: u16 = 4;
/// DPP whose implicit `vcc_lo` prints inside src1's absolute-value bars
/// (gfx12 `v_cndmask_b32_dpp`).
pub const FLAG_VCC_IN: u16 = 8;
/// Memory variant whose offset prints as an `offset:` modifier.
pub const FLAG_OFFSET: u16 = 16;
/// DS with two 8-bit offsets (`offset0:`/`offset1:`).
pub const FLAG_OFFSET01: u16 = 32;
/// `ds_swizzle_b32`: the offset prints as `swizzle(...)`.
pub const FLAG_SWIZZLE: u16 = 64;
/// A VOP3 op_sel lists three source slots though two sources print (the
/// tied src2 of `v_fmac_f16_e64`).
pub const FLAG_OPSEL3: u16 = 128;
/// op_sel bits print as `byte_sel:N` (gfx12 `v_cvt_sr_fp8/bf8_f32`,
/// `v_cvt_f32_fp8/bf8`).
pub const FLAG_BYTE_SEL: u16 = 256;

/// One opcode of one encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    pub enc: Enc,
    pub form: Form,
    pub op: u16,
    /// LLVM 19's mnemonic.
    pub name: &'static str,
    /// The mnemonic the interpreter dispatches on: `name`, or for gfx90a/gfx942
    /// the gfx11 name of the same operation (`build.rs`, `gfx9_sem`).
    pub sem: &'static str,
    /// Bits of the instruction (up to 96), outside the opcode and the
    /// operand fields, that must equal `val` for the word to be this
    /// instruction.
    pub mask: u128,
    pub val: u128,
    /// Modifier bits (VOP3/VOP3P/DPP) that this opcode prints.
    pub mods: u128,
    /// `mask`, `val` and `mods` in wave64 (they differ for some WMMA/SWMMAC
    /// rows: the 8-bit SWMMACs take a two-bit index_key there).
    pub w64: [u128; 3],
    /// The negation bits among `mods` that print as `sext(...)`.
    pub sext: u128,
    /// Printing quirks: [`FLAG_MIX`], [`FLAG_INDEX_KEY`], [`FLAG_PERMLANE`],
    /// [`FLAG_VCC_IN`], [`FLAG_OFFSET`], [`FLAG_OFFSET01`], [`FLAG_SWIZZLE`],
    /// [`FLAG_OPSEL3`], [`FLAG_BYTE_SEL`].
    pub flags: u16,
    /// Operands in print order.
    pub opnds: &'static [Opnd],
}

/// How an image instruction's data and address registers print (learned
/// from llvm-mc-19 by the table generator, see `learn_images`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImgInfo {
    /// The largest data register the initial decode accepts is 256 - vd.
    pub vd: u8,
    /// As `vd`, per address register (at most five).
    pub w: [u8; 5],
    pub nw: u8,
    /// Data width then address widths as printed when widening overflows
    /// v255 (base-36 digits), if that can happen.
    pub canon: Option<&'static str>,
    /// Per dim (8) x a16 (2) x key (6): data width then address widths
    /// (base-36 digits), or "x" for an invalid word.
    pub tab: &'static [&'static str; 96],
    /// gfx11 NSA dwords after the instruction.
    pub nsa: u8,
    /// The data size ignores dmask (gather4, msaa_load).
    pub gather: bool,
    /// dmask:/dim: print.
    pub dmask: bool,
    pub dim: bool,
}

impl OpInfo {
    /// `(mask, val)` for the wave size.
    pub fn fixed(&self, wave64: bool) -> (u128, u128) {
        if wave64 {
            (self.w64[0], self.w64[1])
        } else {
            (self.mask, self.val)
        }
    }

    /// The printed modifier bits for the wave size.
    pub fn mods_for(&self, wave64: bool) -> u128 {
        if wave64 { self.w64[2] } else { self.mods }
    }

    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }
}

include!(concat!(env!("OUT_DIR"), "/tables.rs"));
