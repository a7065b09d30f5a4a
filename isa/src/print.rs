//! LLVM-syntax printing: the text `llvm-objdump-19 -d` / `llvm-mc-19
//! --disassemble` give for the same bytes (AMDGPUInstPrinter's conventions).

use crate::decode::width;
use crate::inst::{Inst, Syntax, Target};
use crate::print_mem::{hex_signed, sign_extend};
use crate::table::{
    Enc, FLAG_BYTE_SEL, FLAG_INDEX_KEY, FLAG_MIX, FLAG_OPSEL3, FLAG_PERMLANE, FLAG_VCC_IN, Fld,
    Form, Imm, Note, OpInfo, Opnd, Simm, Ty,
};
use alloc::string::String;
use core::fmt::{self, Write};

/// An instruction ready to print in LLVM syntax.
#[derive(Debug, Clone, Copy)]
pub struct Display<'a> {
    pub inst: &'a Inst,
    pub syntax: Syntax,
}

impl Inst {
    /// LLVM-syntax text of the instruction.
    pub fn display(&self, syntax: Syntax) -> Display<'_> {
        Display { inst: self, syntax }
    }
}

pub(crate) fn reg_range(f: &mut dyn Write, prefix: &str, first: u32, width: u8) -> fmt::Result {
    if width == 1 {
        write!(f, "{prefix}{first}")
    } else {
        write!(f, "{prefix}[{first}:{}]", first + u32::from(width) - 1)
    }
}

/// SGPR alignment LLVM applies to a tuple of `width` dwords.
fn sgpr_align(width: u8) -> u32 {
    match width {
        1 => 1,
        2 => 2,
        _ => 4,
    }
}

/// Names a scalar register operand (values 0..=127 and the special sources).
pub(crate) fn scalar(f: &mut dyn Write, v: u32, width: u8, g9: bool) -> fmt::Result {
    let al = sgpr_align(width);
    if g9 {
        // GFX9 numbering: s0..s101, then flat_scratch and xnack_mask; m0
        // is 124 (AMDGPU register info for gfx9)
        match v {
            102 | 103 if width == 1 => {
                return f.write_str(if v == 102 {
                    "flat_scratch_lo"
                } else {
                    "flat_scratch_hi"
                });
            }
            102 | 103 => return f.write_str("flat_scratch"),
            104 | 105 if width == 1 => {
                return f.write_str(if v == 104 {
                    "xnack_mask_lo"
                } else {
                    "xnack_mask_hi"
                });
            }
            104 | 105 => return f.write_str("xnack_mask"),
            124 => return f.write_str("m0"),
            _ => {}
        }
    }
    match v {
        0..=105 => reg_range(f, "s", v / al * al, width),
        106 | 107 if width == 1 => f.write_str(if v == 106 { "vcc_lo" } else { "vcc_hi" }),
        106 | 107 => f.write_str("vcc"),
        108..=123 => reg_range(f, "ttmp", (v - 108) / al * al, width),
        124 => f.write_str("null"),
        125 => f.write_str("m0"),
        126 | 127 if width == 1 => f.write_str(if v == 126 { "exec_lo" } else { "exec_hi" }),
        126 | 127 => f.write_str("exec"),
        235 => f.write_str("src_shared_base"),
        236 => f.write_str("src_shared_limit"),
        237 => f.write_str("src_private_base"),
        238 => f.write_str("src_private_limit"),
        239 => f.write_str("src_pops_exiting_wave_id"),
        251 => f.write_str("src_vccz"),
        252 => f.write_str("src_execz"),
        253 => f.write_str("src_scc"),
        254 => f.write_str("src_lds_direct"),
        _ => write!(f, "/*unknown {v}*/"),
    }
}

const F32_INLINE: [(u32, &str); 9] = [
    (0x3f000000, "0.5"),
    (0xbf000000, "-0.5"),
    (0x3f800000, "1.0"),
    (0xbf800000, "-1.0"),
    (0x40000000, "2.0"),
    (0xc0000000, "-2.0"),
    (0x40800000, "4.0"),
    (0xc0800000, "-4.0"),
    (0x3e22f983, "0.15915494"),
];
const F16_INLINE: [(u32, &str); 9] = [
    (0x3800, "0.5"),
    (0xb800, "-0.5"),
    (0x3c00, "1.0"),
    (0xbc00, "-1.0"),
    (0x4000, "2.0"),
    (0xc000, "-2.0"),
    (0x4400, "4.0"),
    (0xc400, "-4.0"),
    (0x3118, "0.15915494"),
];
const BF16_INLINE: [(u32, &str); 9] = [
    (0x3f00, "0.5"),
    (0xbf00, "-0.5"),
    (0x3f80, "1.0"),
    (0xbf80, "-1.0"),
    (0x4000, "2.0"),
    (0xc000, "-2.0"),
    (0x4080, "4.0"),
    (0xc080, "-4.0"),
    (0x3e22, "0.15915494"),
];
/// High halves of the f64 inline constants.
const F64_INLINE_HI: [(u32, &str); 8] = [
    (0x3fe00000, "0.5"),
    (0xbfe00000, "-0.5"),
    (0x3ff00000, "1.0"),
    (0xbff00000, "-1.0"),
    (0x40000000, "2.0"),
    (0xc0000000, "-2.0"),
    (0x40100000, "4.0"),
    (0xc0100000, "-4.0"),
];
const FLOAT_TEXT: [&str; 9] = [
    "0.5",
    "-0.5",
    "1.0",
    "-1.0",
    "2.0",
    "-2.0",
    "4.0",
    "-4.0",
    "0.15915494",
];

fn lookup(table: &[(u32, &'static str)], v: u32) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == v).map(|(_, s)| *s)
}

fn inline_int(v: i64) -> bool {
    (-16..=64).contains(&v)
}

/// A literal constant as LLVM prints it for an operand of class `imm`.
fn literal(f: &mut dyn Write, lit: u32, imm: Imm) -> fmt::Result {
    let s32 = lit as i32;
    match imm {
        Imm::B32 | Imm::Reg | Imm::Msg => {
            if inline_int(s32.into()) {
                write!(f, "{s32}")
            } else if let Some(t) = lookup(&F32_INLINE, lit) {
                f.write_str(t)
            } else {
                write!(f, "{lit:#x}")
            }
        }
        Imm::B64 => {
            if inline_int(lit.into()) {
                write!(f, "{lit}")
            } else {
                write!(f, "{lit:#x}")
            }
        }
        Imm::F64 => {
            if lit == 0 {
                f.write_str("0")
            } else if let Some(t) = lookup(&F64_INLINE_HI, lit) {
                f.write_str(t)
            } else {
                write!(f, "{lit:#x}")
            }
        }
        Imm::F16 => {
            let lo = lit & 0xffff;
            let s16 = lo as u16 as i16;
            if inline_int(s16.into()) {
                write!(f, "{s16}")
            } else if let Some(t) = lookup(&F16_INLINE, lo) {
                f.write_str(t)
            } else {
                write!(f, "{lo:#x}")
            }
        }
        Imm::BF16 => {
            let lo = lit & 0xffff;
            let s16 = lo as u16 as i16;
            if inline_int(s16.into()) {
                write!(f, "{s16}")
            } else if let Some(t) = lookup(&BF16_INLINE, lo) {
                f.write_str(t)
            } else {
                write!(f, "{lo:#x}")
            }
        }
        Imm::I16 => {
            if inline_int(s32.into()) {
                write!(f, "{s32}")
            } else if let Some(t) = lookup(&F32_INLINE, lit) {
                f.write_str(t)
            } else {
                write!(f, "{:#x}", lit & 0xffff)
            }
        }
        Imm::V2F16 | Imm::V2I16 => {
            if inline_int(s32.into()) {
                write!(f, "{s32}")
            } else if let Some(t) = lookup(&F16_INLINE, lit) {
                f.write_str(t)
            } else {
                write!(f, "{lit:#x}")
            }
        }
        Imm::V2BF16 => {
            if inline_int(s32.into()) {
                write!(f, "{s32}")
            } else if let Some(t) = lookup(&BF16_INLINE, lit) {
                f.write_str(t)
            } else {
                write!(f, "{lit:#x}")
            }
        }
    }
}

/// An inline float constant (source values 240..=248).
fn inline_float(f: &mut dyn Write, v: u32, imm: Imm) -> fmt::Result {
    let i = (v - 240) as usize;
    match imm {
        Imm::B64 | Imm::F64 if v == 248 => f.write_str("0.15915494309189532"),
        Imm::I16 => write!(f, "{:#x}", F16_INLINE[i].0),
        _ => f.write_str(FLOAT_TEXT[i]),
    }
}

/// A 9-bit (or 8-bit scalar) source operand.
fn source(
    f: &mut dyn Write,
    v: u32,
    width: u8,
    imm: Imm,
    lit: Option<u32>,
    g9: bool,
) -> fmt::Result {
    match v {
        256..=511 => reg_range(f, "v", v - 256, width),
        128..=192 => write!(f, "{}", v - 128),
        193..=208 => write!(f, "-{}", v - 192),
        240..=248 => inline_float(f, v, imm),
        255 => literal(f, lit.unwrap_or(0), imm),
        _ => scalar(f, v, width, g9),
    }?;
    if imm == Imm::Reg && (128..=255).contains(&v) && !(235..=239).contains(&v) && v < 251
        || imm == Imm::Reg && v == 255
    {
        f.write_str("/*Invalid immediate*/")?;
    }
    Ok(())
}

fn simm(f: &mut dyn Write, name: &str, v: u32, style: Simm, syntax: Syntax) -> fmt::Result {
    match style {
        Simm::Hex => write!(f, "{v:#x}"),
        Simm::U16 => {
            if v <= 64 {
                write!(f, "{v}")
            } else {
                write!(f, "{v:#x}")
            }
        }
        Simm::UDec => write!(f, "{v}"),
        Simm::Special => special(f, name, v, syntax),
    }
}

fn special(f: &mut dyn Write, name: &str, v: u32, syntax: Syntax) -> fmt::Result {
    match name {
        "s_waitcnt" => {
            // gfx11: vm 15:10, lgkm 9:4, exp 2:0; GFX9: vm 3:0 and 15:14,
            // exp 6:4, lgkm 11:8
            let (vm, lgkm, exp, lgkm_max) = if syntax.target.is_gfx9() {
                (
                    (v & 0xf) | (v >> 14 & 3) << 4,
                    (v >> 8) & 0xf,
                    (v >> 4) & 7,
                    0xf,
                )
            } else {
                ((v >> 10) & 0x3f, (v >> 4) & 0x3f, v & 7, 0x3f)
            };
            let all = vm == 0x3f && lgkm == lgkm_max && exp == 7;
            let mut sep = "";
            if vm != 0x3f || all {
                write!(f, "vmcnt({vm})")?;
                sep = " ";
            }
            if exp != 7 || all {
                write!(f, "{sep}expcnt({exp})")?;
                sep = " ";
            }
            if lgkm != lgkm_max || all {
                write!(f, "{sep}lgkmcnt({lgkm})")?;
            }
            Ok(())
        }
        "s_delay_alu" => {
            const IDS: [&str; 12] = [
                "NO_DEP",
                "VALU_DEP_1",
                "VALU_DEP_2",
                "VALU_DEP_3",
                "VALU_DEP_4",
                "TRANS32_DEP_1",
                "TRANS32_DEP_2",
                "TRANS32_DEP_3",
                "FMA_ACCUM_CYCLE_1",
                "SALU_CYCLE_1",
                "SALU_CYCLE_2",
                "SALU_CYCLE_3",
            ];
            const SKIPS: [&str; 6] = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"];
            let id0 = (v & 0xf) as usize;
            let skip = ((v >> 4) & 7) as usize;
            let id1 = ((v >> 7) & 0xf) as usize;
            let mut sep = "";
            if id0 != 0 {
                let t = IDS
                    .get(id0)
                    .copied()
                    .unwrap_or("/* invalid instid value */");
                write!(f, "instid0({t})")?;
                sep = " | ";
            }
            if skip != 0 {
                let t = SKIPS
                    .get(skip)
                    .copied()
                    .unwrap_or("/* invalid instskip value */");
                write!(f, "{sep}instskip({t})")?;
                sep = " | ";
            }
            if id1 != 0 {
                let t = IDS
                    .get(id1)
                    .copied()
                    .unwrap_or("/* invalid instid value */");
                write!(f, "{sep}instid1({t})")?;
                sep = " | ";
            }
            if sep.is_empty() {
                f.write_str("0")?;
            }
            Ok(())
        }
        "s_sendmsg" | "s_sendmsghalt" => {
            // gfx11+: the message id is the low byte; the rest is ignored
            // when the id has a name.
            let id = v & 0xff;
            if let Some(n) = msg_name(syntax.target, id) {
                write!(f, "sendmsg({n})")
            } else if v == id {
                write!(f, "sendmsg({id}, 0, 0)")
            } else {
                write!(f, "{v}")
            }
        }
        "s_waitcnt_depctr" | "s_wait_alu" => depctr(f, v),
        "s_version" => version(f, v),
        "s_getreg_b32" | "s_setreg_b32" | "s_setreg_imm32_b32" => {
            let id = v & 63;
            let offset = (v >> 6) & 31;
            let size = ((v >> 11) & 31) + 1;
            f.write_str("hwreg(")?;
            match hwreg_name(syntax.target, id) {
                Some(n) => f.write_str(n)?,
                None => write!(f, "{id}")?,
            }
            if offset != 0 || size != 32 {
                write!(f, ", {offset}, {size}")?;
            }
            f.write_str(")")
        }
        "s_endpgm" => {
            if v != 0 {
                write!(f, "{v}")?;
            }
            Ok(())
        }
        _ => write!(f, "{v:#x}"),
    }
}

/// Hardware register names LLVM 19 prints in `hwreg(...)` (ids as
/// llvm-mc-19 names them for each target).
fn hwreg_name(target: Target, id: u32) -> Option<&'static str> {
    if target.is_gfx12() {
        Some(match id {
            1 => "HW_REG_MODE",
            2 => "HW_REG_STATUS",
            4 => "HW_REG_STATE_PRIV",
            5 => "HW_REG_GPR_ALLOC",
            6 => "HW_REG_LDS_ALLOC",
            7 => "HW_REG_IB_STS",
            10 => "HW_REG_PERF_SNAPSHOT_DATA",
            11 => "HW_REG_PERF_SNAPSHOT_PC_LO",
            12 => "HW_REG_PERF_SNAPSHOT_PC_HI",
            15 => "HW_REG_PERF_SNAPSHOT_DATA1",
            16 => "HW_REG_PERF_SNAPSHOT_DATA2",
            17 => "HW_REG_EXCP_FLAG_PRIV",
            18 => "HW_REG_EXCP_FLAG_USER",
            19 => "HW_REG_TRAP_CTRL",
            20 => "HW_REG_SCRATCH_BASE_LO",
            21 => "HW_REG_SCRATCH_BASE_HI",
            23 => "HW_REG_HW_ID1",
            24 => "HW_REG_HW_ID2",
            29 => "HW_REG_SHADER_CYCLES_LO",
            30 => "HW_REG_SHADER_CYCLES_HI",
            31 => "HW_REG_DVGPR_ALLOC_LO",
            32 => "HW_REG_DVGPR_ALLOC_HI",
            _ => return None,
        })
    } else {
        Some(match id {
            1 => "HW_REG_MODE",
            2 => "HW_REG_STATUS",
            3 => "HW_REG_TRAPSTS",
            5 => "HW_REG_GPR_ALLOC",
            6 => "HW_REG_LDS_ALLOC",
            7 => "HW_REG_IB_STS",
            15 => "HW_REG_SH_MEM_BASES",
            18 => "HW_REG_PERF_SNAPSHOT_PC_LO",
            19 => "HW_REG_PERF_SNAPSHOT_PC_HI",
            20 => "HW_REG_FLAT_SCR_LO",
            21 => "HW_REG_FLAT_SCR_HI",
            23 => "HW_REG_HW_ID1",
            24 => "HW_REG_HW_ID2",
            27 => "HW_REG_PERF_SNAPSHOT_DATA",
            29 => "HW_REG_SHADER_CYCLES",
            _ => return None,
        })
    }
}

/// Message names LLVM 19 prints in `sendmsg(...)` on gfx11/gfx12 (ids that
/// need an operation, like MSG_SYSMSG, never print by name there).
fn msg_name(target: Target, id: u32) -> Option<&'static str> {
    let g12 = target.is_gfx12();
    Some(match id {
        1 => "MSG_INTERRUPT",
        2 => "MSG_HS_TESSFACTOR",
        3 => "MSG_DEALLOC_VGPRS",
        5 if !g12 => "MSG_STALL_WAVE_GEN",
        6 if !g12 => "MSG_HALT_WAVES",
        9 => "MSG_GS_ALLOC_REQ",
        128 => "MSG_RTN_GET_DOORBELL",
        129 => "MSG_RTN_GET_DDID",
        130 => "MSG_RTN_GET_TMA",
        131 => "MSG_RTN_GET_REALTIME",
        132 => "MSG_RTN_SAVE_WAVE",
        133 => "MSG_RTN_GET_TBA",
        134 => "MSG_RTN_GET_TBA_TO_PC",
        135 if g12 => "MSG_RTN_GET_SE_AID_ID",
        _ => return None,
    })
}

/// `s_waitcnt_depctr` / `s_wait_alu` operand: the named counter fields
/// (name, offset, width; the default is all ones) when no other bit is set,
/// the non-default ones only unless all are default; else hex.
fn depctr(f: &mut dyn Write, v: u32) -> fmt::Result {
    const FIELDS: [(&str, u32, u32); 7] = [
        ("depctr_hold_cnt", 7, 1),
        ("depctr_sa_sdst", 0, 1),
        ("depctr_va_vdst", 12, 4),
        ("depctr_va_sdst", 9, 3),
        ("depctr_va_ssrc", 8, 1),
        ("depctr_va_vcc", 1, 1),
        ("depctr_vm_vsrc", 2, 3),
    ];
    let used: u32 = FIELDS.iter().map(|(_, o, w)| ((1 << w) - 1) << o).sum();
    if v & !used != 0 {
        return write!(f, "{v:#x}");
    }
    let val = |o: u32, w: u32| (v >> o) & ((1 << w) - 1);
    let all_default = FIELDS.iter().all(|&(_, o, w)| val(o, w) == (1 << w) - 1);
    let mut sep = "";
    for &(name, o, w) in &FIELDS {
        let x = val(o, w);
        if x != (1 << w) - 1 || all_default {
            write!(f, "{sep}{name}({x})")?;
            sep = " ";
        }
    }
    Ok(())
}

/// `s_version` operand: the version (a name where LLVM has one) OR-ed
/// with the W64/W32/MDP bits as an expression; hex if bits 12:8 are set.
fn version(f: &mut dyn Write, v: u32) -> fmt::Result {
    if v & 0x1f00 != 0 {
        return write!(f, "{v:#x}");
    }
    let mut text = match v & 0xff {
        0 => String::from("UC_VERSION_GFX7"),
        4 => String::from("UC_VERSION_GFX10"),
        6 => String::from("UC_VERSION_GFX11"),
        9 => String::from("UC_VERSION_GFX12"),
        n => alloc::format!("{n}"),
    };
    let mut nested = false;
    for (bit, name) in [
        (13, "UC_VERSION_W64_BIT"),
        (14, "UC_VERSION_W32_BIT"),
        (15, "UC_VERSION_MDP_BIT"),
    ] {
        if v >> bit & 1 != 0 {
            text = if nested {
                alloc::format!("({text})|{name}")
            } else {
                alloc::format!("{text}|{name}")
            };
            nested = true;
        }
    }
    f.write_str(&text)
}

/// LLVM's "Invalid register" note for a register the operand's class does
/// not hold.
fn note(f: &mut dyn Write, class: &str) -> fmt::Result {
    write!(
        f,
        "/*Invalid register, operand has '{class}' register class*/"
    )
}

/// The note (if any) LLVM prints after value `v` of operand `o`: a VGPR
/// (`v >= 256`, or any value of an 8-bit VGPR field when `vfield`), an SGPR
/// or TTMP, or a special register.
fn operand_note(f: &mut dyn Write, o: &Opnd, v: u32, vfield: bool, wave64: bool) -> fmt::Result {
    let vgpr = if vfield { Some(v) } else { v.checked_sub(256) };
    if let Some(r) = vgpr {
        return match o.hi {
            Note::All(c) => note(f, c),
            Note::Class(c) if r >= 128 => note(f, c),
            _ => Ok(()),
        };
    }
    match v {
        0..=105 | 108..=123 => {
            if let Note::Class(c) = o.sgpr {
                // the operand's class in this wave size, where probed
                let w = o.class[usize::from(wave64)];
                note(f, if w.is_empty() { c } else { w })?;
            }
        }
        _ => {
            if o.special(v, wave64) == Some(b'n') {
                note(f, o.class[usize::from(wave64)])?;
            }
        }
    }
    Ok(())
}

/// A source operand with neg/abs modifiers as AMDGPUInstPrinter writes
/// them: `-|x|` for registers, `neg(x)` for a negated constant without abs.
#[allow(clippy::too_many_arguments)]
fn modded(
    f: &mut dyn Write,
    o: &Opnd,
    v: u32,
    vfield: bool,
    width: u8,
    imm: Imm,
    lit: Option<u32>,
    neg: bool,
    abs: bool,
    sext: bool,
    syntax: Syntax,
    inner: Option<&str>,
) -> fmt::Result {
    let wave64 = syntax.wave64;
    let is_const = !vfield && (128..=255).contains(&v) && !matches!(v, 235..=239 | 251..=254);
    let neg_mnemo = neg && !abs && is_const;
    if sext {
        f.write_str("sext(")?;
    } else if neg {
        f.write_str(if neg_mnemo { "neg(" } else { "-" })?;
    }
    if abs {
        f.write_str("|")?;
    }
    let vgpr = if vfield { Some(v) } else { v.checked_sub(256) };
    match vgpr {
        Some(r) if o.t16 => {
            let half = if r & 0x80 != 0 { "h" } else { "l" };
            write!(f, "v{}.{half}", r & 0x7f)?;
        }
        Some(r) => reg_range(f, "v", r, width)?,
        None => source(f, v, width, imm, lit, syntax.target.is_gfx9())?,
    }
    operand_note(f, o, v, vfield, wave64)?;
    if let Some(t) = inner {
        write!(f, ", {t}")?;
    }
    if abs {
        f.write_str("|")?;
    }
    if neg_mnemo || sext {
        f.write_str(")")?;
    }
    Ok(())
}

/// Which source (0..2) an operand field is, for its modifier bits.
fn src_index(fld: Fld) -> Option<u32> {
    match fld {
        Fld::Src0 | Fld::Dsrc0 => Some(0),
        Fld::Src1 | Fld::Vsrc1 => Some(1),
        Fld::Src2 => Some(2),
        _ => None,
    }
}

/// DPP control text after the operands.
fn dpp_suffix(f: &mut dyn Write, inst: &Inst) -> fmt::Result {
    let (sel, ctrl) = match inst.info.enc {
        Enc::Vop3 | Enc::Vop3p => ((inst.words[1] & 0x1ff), inst.words[2]),
        _ => ((inst.words[0] & 0x1ff), inst.words[1]),
    };
    if inst.info.form == Form::Dpp8 {
        f.write_str(" dpp8:[")?;
        for i in 0..8 {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}", (ctrl >> (8 + 3 * i)) & 7)?;
        }
        f.write_str("]")?;
        if sel == 234 {
            f.write_str(" fi:1")?;
        }
        return Ok(());
    }
    let c = (ctrl >> 8) & 0x1ff;
    f.write_str(" ")?;
    match c {
        0..=0xff => write!(
            f,
            "quad_perm:[{},{},{},{}]",
            c & 3,
            (c >> 2) & 3,
            (c >> 4) & 3,
            (c >> 6) & 3
        )?,
        0x101..=0x10f => write!(f, "row_shl:{}", c & 0xf)?,
        0x111..=0x11f => write!(f, "row_shr:{}", c & 0xf)?,
        0x121..=0x12f => write!(f, "row_ror:{}", c & 0xf)?,
        0x130 => f.write_str("/* wave_shl is not supported starting from GFX10 */")?,
        0x134 => f.write_str("/* wave_rol is not supported starting from GFX10 */")?,
        0x138 => f.write_str("/* wave_shr is not supported starting from GFX10 */")?,
        0x13c => f.write_str("/* wave_ror is not supported starting from GFX10 */")?,
        0x140 => f.write_str("row_mirror")?,
        0x141 => f.write_str("row_half_mirror")?,
        0x142 | 0x143 => f.write_str("/* row_bcast is not supported starting from GFX10 */")?,
        0x150..=0x15f => write!(f, "row_share:{}", c & 0xf)?,
        0x160..=0x16f => write!(f, "row_xmask:{}", c & 0xf)?,
        _ => f.write_str("/* Invalid dpp_ctrl value */")?,
    }
    write!(
        f,
        " row_mask:{:#x} bank_mask:{:#x}",
        ctrl >> 28,
        (ctrl >> 24) & 0xf
    )?;
    if (ctrl >> 19) & 1 != 0 {
        f.write_str(" bound_ctrl:1")?;
    }
    if (ctrl >> 18) & 1 != 0 {
        f.write_str(" fi:1")?;
    }
    Ok(())
}

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inst = self.inst;
        let info = inst.info;
        if info.enc == Enc::Vopd {
            return vopd(f, inst, self.syntax);
        }
        if info.enc == Enc::Exp {
            return crate::print_mem::export(f, inst);
        }
        if crate::decode::is_sdwa(self.syntax.target, inst) {
            return sdwa(f, inst);
        }
        operands(f, inst, info, self.syntax)?;
        match info.enc {
            Enc::Vinterp => write!(f, " wait_exp:{}", (inst.words[0] >> 8) & 7),
            Enc::Ldsdir => {
                let w0 = inst.words[0];
                if self.syntax.target.is_gfx12() {
                    write!(
                        f,
                        " wait_va_vdst:{} wait_vm_vsrc:{}",
                        (w0 >> 16) & 0xf,
                        (w0 >> 23) & 1
                    )
                } else {
                    write!(f, " wait_vdst:{}", (w0 >> 16) & 0xf)
                }
            }
            Enc::Mubuf | Enc::Mtbuf => crate::print_mem::buf_suffix(f, inst, self.syntax),
            Enc::Mimg => crate::print_mem::image_suffix(f, inst, self.syntax),
            Enc::Smem => crate::print_mem::smem_suffix(f, inst, self.syntax),
            Enc::Ds => crate::print_mem::ds_suffix(f, inst),
            Enc::Flat | Enc::Global | Enc::Scratch => {
                crate::print_mem::flat_suffix(f, inst, self.syntax)
            }
            _ => Ok(()),
        }
    }
}

/// A table-driven instruction (or VOPD component `info`): mnemonic,
/// operands and modifiers.
fn operands(f: &mut dyn Write, inst: &Inst, info: &OpInfo, syntax: Syntax) -> fmt::Result {
    {
        f.write_str(info.name)?;
        let q = inst.bits();
        let mods = info.mods_for(syntax.wave64);
        let wave64 = syntax.wave64;
        let vop3 = info.enc == Enc::Vop3 || info.has(FLAG_MIX);
        let vinterp = info.enc == Enc::Vinterp;
        let dpp32 =
            info.form == Form::Dpp16 && matches!(info.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc);
        let bit = |pos: u32| mods >> pos & 1 != 0 && q >> pos & 1 != 0;
        // (neg, abs, sext) of a source
        let src_mods = |fld: Fld| -> (bool, bool, bool) {
            let Some(i) = src_index(fld) else {
                return (false, false, false);
            };
            let (n, a) = if vop3 {
                (61 + i, 8 + i)
            } else if vinterp {
                // bits 10:8 are wait_exp: no absolute value
                (61 + i, 127)
            } else if dpp32 && i < 2 {
                (52 + 2 * i, 53 + 2 * i)
            } else {
                return (false, false, false);
            };
            let sext = info.sext >> n & 1 != 0;
            (bit(n) && !sext, bit(a), bit(n) && sext)
        };
        let mut sep = " ";
        let mut it = info.opnds.iter().peekable();
        while let Some(o) = it.next() {
            let v = inst.field(o.fld);
            if o.ty == Ty::Simm(Simm::Special) && info.name == "s_endpgm" && v == 0 {
                continue;
            }
            f.write_str(sep)?;
            sep = ", ";
            match o.ty {
                Ty::SReg(3) if (108..=123).contains(&v) => {
                    // LLVM has no 96-bit TTMP tuples: one TTMP, noted
                    write!(f, "ttmp{}", v - 108)?;
                    note(f, o.class[usize::from(wave64)])?;
                }
                Ty::SReg(w) => {
                    scalar(f, v, width(o, w, wave64), syntax.target.is_gfx9())?;
                    operand_note(f, o, v, false, wave64)?;
                }
                Ty::Mask => {
                    let w = if wave64 { 2 } else { 1 };
                    modded(
                        f,
                        o,
                        v,
                        false,
                        w,
                        Imm::Reg,
                        inst.literal,
                        false,
                        false,
                        false,
                        syntax,
                        None,
                    )?;
                }
                Ty::VReg(w) => {
                    let (neg, abs, sext) = src_mods(o.fld);
                    let w = width(o, w, wave64);
                    // gfx12 v_cndmask_b32_dpp prints its carry inside |src1|
                    let inner = match it.peek() {
                        Some(Opnd {
                            ty: Ty::Text(t), ..
                        }) if abs && info.has(FLAG_VCC_IN) => {
                            it.next();
                            Some(if wave64 && *t == "vcc_lo" { "vcc" } else { *t })
                        }
                        _ => None,
                    };
                    modded(
                        f,
                        o,
                        v,
                        true,
                        w,
                        Imm::B32,
                        None,
                        neg,
                        abs,
                        sext,
                        syntax,
                        inner,
                    )?;
                }
                Ty::Src(_, Imm::Msg) | Ty::SSrc(_, Imm::Msg) => {
                    // s_sendmsg_rtn_*: the field is a message id
                    special(f, "s_sendmsg", v, syntax)?;
                }
                Ty::Src(w, imm) | Ty::SSrc(w, imm) => {
                    let (neg, abs, sext) = src_mods(o.fld);
                    let w = width(o, w, wave64);
                    modded(
                        f,
                        o,
                        v,
                        false,
                        w,
                        imm,
                        inst.literal,
                        neg,
                        abs,
                        sext,
                        syntax,
                        None,
                    )?;
                }
                Ty::Off => {
                    let bits = if o.fld == Fld::SmemOff24 { 24 } else { 21 };
                    hex_signed(f, sign_extend(v, bits))?;
                }
                Ty::Mdata | Ty::Maddr => {
                    let Some(sh) = crate::image::shape(syntax.target, inst) else {
                        return Ok(());
                    };
                    if o.ty == Ty::Mdata {
                        reg_range(f, "v", sh.vdata, sh.data_width)?;
                    } else if sh.list && sh.naddr > 1 {
                        f.write_str("[")?;
                        for (j, &(r, w)) in sh.addr.iter().take(sh.naddr.into()).enumerate() {
                            if j > 0 {
                                f.write_str(", ")?;
                            }
                            reg_range(f, "v", r, w)?;
                        }
                        f.write_str("]")?;
                    } else {
                        reg_range(f, "v", sh.addr[0].0, sh.addr[0].1)?;
                    }
                }
                Ty::Attr => {
                    let w0 = inst.words[0];
                    let chan = ["x", "y", "z", "w"][(w0 >> 8) as usize & 3];
                    write!(f, "attr{}.{chan}", (w0 >> 10) & 0x3f)?;
                }
                Ty::Kimm(false) => write!(f, "{:#x}", inst.literal.unwrap_or(0))?,
                Ty::Kimm(true) => literal(f, inst.literal.unwrap_or(0), Imm::B32)?,
                Ty::Simm(style) => simm(f, info.name, v, style, syntax)?,
                Ty::Text(t) => {
                    if wave64 && t == "vcc_lo" {
                        f.write_str("vcc")?;
                    } else {
                        f.write_str(t)?;
                    }
                }
            }
        }
        let nsrc = info
            .opnds
            .iter()
            .filter(|o| matches!(o.fld, Fld::Src0 | Fld::Src1 | Fld::Src2 | Fld::Dsrc0))
            .count();
        if info.enc == Enc::Vop3p {
            let bitq = |pos: u32| (q >> pos) & 1;
            let list = |f: &mut dyn Write, label: &str, pos: [u32; 3]| -> fmt::Result {
                write!(f, " {label}:[")?;
                for (i, p) in pos.iter().take(nsrc).enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}", bitq(*p))?;
                }
                f.write_str("]")
            };
            let opsel = [11u32, 12, 13];
            let opsel_hi = [59u32, 60, 14];
            let neg_lo = [61u32, 62, 63];
            let neg_hi = [8u32, 9, 10];
            let any = |pos: [u32; 3], want: u128| (0..nsrc).any(|i| (q >> pos[i]) & 1 == want);
            if info.has(FLAG_INDEX_KEY) {
                let k = (q & mods) >> 11 & 3;
                if k != 0 {
                    write!(f, " index_key:{k}")?;
                }
            } else if mods & (7 << 11) != 0 && any(opsel, 1) {
                list(f, "op_sel", opsel)?;
            }
            // op_sel_hi defaults to 1 for packed math, 0 for v_fma_mix*
            let hi_default = if info.has(FLAG_MIX) { 0 } else { 1 };
            if mods & (3 << 59 | 1 << 14) != 0 && any(opsel_hi, 1 - hi_default) {
                list(f, "op_sel_hi", opsel_hi)?;
            }
            if !info.has(FLAG_MIX) && mods & (7 << 61) != 0 && any(neg_lo, 1) {
                list(f, "neg_lo", neg_lo)?;
            }
            if !info.has(FLAG_MIX) && mods & (7 << 8) != 0 && any(neg_hi, 1) {
                list(f, "neg_hi", neg_hi)?;
            }
            if mods & (1 << 15) != 0 && q >> 15 & 1 != 0 {
                f.write_str(" clamp")?;
            }
        }
        if vinterp && mods & (1 << 15) != 0 && q >> 15 & 1 != 0 {
            // VINTERP prints clamp before op_sel
            f.write_str(" clamp")?;
        }
        if info.enc == Enc::Vop3 || vinterp {
            let opsel = (q & mods) >> 11 & 0xf;
            if info.has(FLAG_BYTE_SEL) {
                // as llvm-mc-19 prints them: v_cvt_sr_* take op_sel bits
                // 13 (low) and 14 (high), v_cvt_f32_fp8/bf8 (and pk) bits 12
                // (low) and 11 (high)
                let b = if mods & (3 << 13) != 0 {
                    (q >> 13) & 3
                } else {
                    (q >> 12) & 1 | ((q >> 11) & 1) << 1
                };
                if b != 0 {
                    write!(f, " byte_sel:{b}")?;
                }
            } else if info.has(FLAG_PERMLANE) {
                if opsel != 0 {
                    write!(f, " op_sel:[{},{}]", opsel & 1, opsel >> 1 & 1)?;
                }
            } else if opsel != 0 {
                f.write_str(" op_sel:[")?;
                let slots = if info.has(FLAG_OPSEL3) { 3 } else { nsrc };
                for i in 0..slots {
                    write!(f, "{},", opsel >> i & 1)?;
                }
                write!(f, "{}]", opsel >> 3 & 1)?;
            }
            if !vinterp && mods & (1 << 15) != 0 && q >> 15 & 1 != 0 {
                f.write_str(" clamp")?;
            }
            if mods & (3 << 59) != 0 {
                match (q >> 59) & 3 {
                    1 => f.write_str(" mul:2")?,
                    2 => f.write_str(" mul:4")?,
                    3 => f.write_str(" div:2")?,
                    _ => {}
                }
            }
        }
        if matches!(info.form, Form::Dpp16 | Form::Dpp8) {
            dpp_suffix(f, inst)?;
        }
        Ok(())
    }
}

fn vopd(f: &mut dyn Write, inst: &Inst, syntax: Syntax) -> fmt::Result {
    operands(f, inst, inst.info, syntax)?;
    if let Some(y) = crate::decode::vopd_y(syntax.target, inst) {
        f.write_str(" :: ")?;
        operands(f, inst, y, syntax)?;
    }
    Ok(())
}

/// GFX9 (gfx90a/gfx942) SDWA (the subset `decode` accepts: VGPR sources, no modifiers):
/// `NAME_sdwa vdst, src0[, src1] dst_sel:.. dst_unused:.. src0_sel:..
/// [src1_sel:..]`, as AMDGPUInstPrinter::printSDWASel writes the selectors.
fn sdwa(f: &mut dyn Write, inst: &Inst) -> fmt::Result {
    const SEL: [&str; 7] = [
        "BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD",
    ];
    const UNUSED: [&str; 3] = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"];
    let (w0, w1) = (inst.words[0], inst.words[1]);
    let name = inst
        .info
        .name
        .strip_suffix("_e32")
        .unwrap_or(inst.info.name);
    let sel = |v: u32| SEL.get(v as usize).copied().unwrap_or("?");
    write!(f, "{name}_sdwa v{}, v{}", (w0 >> 17) & 0xff, w1 & 0xff)?;
    let vop2 = inst.info.enc == Enc::Vop2;
    if vop2 {
        write!(f, ", v{}", (w0 >> 9) & 0xff)?;
    }
    write!(
        f,
        " dst_sel:{} dst_unused:{} src0_sel:{}",
        sel((w1 >> 8) & 7),
        UNUSED
            .get(((w1 >> 11) & 3) as usize)
            .copied()
            .unwrap_or("?"),
        sel((w1 >> 16) & 7)
    )?;
    if vop2 {
        write!(f, " src1_sel:{}", sel((w1 >> 24) & 7))?;
    }
    Ok(())
}
