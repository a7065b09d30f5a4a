//! LLVM-syntax printing of the memory encodings (SMEM, DS, FLAT/GLOBAL/
//! SCRATCH, MUBUF/MTBUF/VBUFFER): the modifiers after the table-driven
//! operands, as AMDGPUInstPrinter writes them.

use crate::inst::{Inst, Syntax, Target};
use crate::table::{Enc, FLAG_OFFSET, FLAG_OFFSET01, FLAG_SWIZZLE};
use core::fmt::{self, Write};

/// `v` as a signed `bits`-bit number.
pub(crate) fn sign_extend(v: u32, bits: u32) -> i64 {
    i64::from(((v << (32 - bits)) as i32) >> (32 - bits))
}

/// A signed value in hex the way LLVM prints SMEM offsets (`-0x10`).
pub(crate) fn hex_signed(f: &mut dyn Write, v: i64) -> fmt::Result {
    if v < 0 {
        write!(f, "-{:#x}", -v)
    } else {
        write!(f, "{v:#x}")
    }
}

/// DS modifiers: offset (one 16-bit, two 8-bit, or a swizzle pattern),
/// then gds (gfx11, where the instruction has it).
pub(crate) fn ds_suffix(f: &mut dyn Write, inst: &Inst) -> fmt::Result {
    let w0 = inst.words[0];
    let (off0, off1) = (w0 & 0xff, (w0 >> 8) & 0xff);
    let info = inst.info;
    if info.has(FLAG_OFFSET01) {
        if off0 != 0 {
            write!(f, " offset0:{off0}")?;
        }
        if off1 != 0 {
            write!(f, " offset1:{off1}")?;
        }
    } else if info.has(FLAG_SWIZZLE) {
        swizzle(f, w0 & 0xffff)?;
    } else if info.has(FLAG_OFFSET) && w0 & 0xffff != 0 {
        write!(f, " offset:{}", w0 & 0xffff)?;
    }
    // gds: a modifier bit, or a bit the opcode requires set (ds_gws_*)
    if ((info.mods as u32 & w0) | (info.mask as u32 & info.val as u32)) >> 17 & 1 != 0 {
        f.write_str(" gds")?;
    }
    Ok(())
}

/// `ds_swizzle_b32` offset as AMDGPUInstPrinter::printSwizzle writes it.
fn swizzle(f: &mut dyn Write, imm: u32) -> fmt::Result {
    if imm == 0 {
        return Ok(());
    }
    f.write_str(" offset:")?;
    if imm & 0xff00 == 0x8000 {
        // quad permutation: four 2-bit lane selects
        f.write_str("swizzle(QUAD_PERM")?;
        for i in 0..4 {
            write!(f, ",{}", (imm >> (2 * i)) & 3)?;
        }
        return f.write_str(")");
    }
    if imm & 0x8000 != 0 {
        return write!(f, "{imm}");
    }
    // bitmask permutation: and/or/xor masks of 5 bits
    let and = imm & 0x1f;
    let or = (imm >> 5) & 0x1f;
    let xor = (imm >> 10) & 0x1f;
    if and == 0x1f && or == 0 && xor.count_ones() == 1 {
        return write!(f, "swizzle(SWAP,{xor})");
    }
    if and == 0x1f && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
        return write!(f, "swizzle(REVERSE,{})", xor + 1);
    }
    let group = 0x1f - and + 1;
    if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
        return write!(f, "swizzle(BROADCAST,{group},{or})");
    }
    f.write_str("swizzle(BITMASK_PERM,\"")?;
    let p0 = or ^ xor;
    let p1 = (0x1f & and | or) ^ xor;
    for bit in (0..5).rev() {
        let m = 1 << bit;
        let c = match (p0 & m != 0, p1 & m != 0) {
            (false, false) => '0',
            (true, true) => '1',
            (false, true) => 'p',
            (true, false) => 'i',
        };
        write!(f, "{c}")?;
    }
    f.write_str("\")")
}

/// FLAT/GLOBAL/SCRATCH modifiers: offset, then glc/slc/dlc (gfx11) or
/// th/scope (gfx12).
pub(crate) fn flat_suffix(f: &mut dyn Write, inst: &Inst, syntax: Syntax) -> fmt::Result {
    let info = inst.info;
    let (w0, w1, w2) = (inst.words[0], inst.words[1], inst.words[2]);
    let mods = info.mods;
    if syntax.target.is_gfx12() {
        let off = sign_extend(w2 >> 8, 24);
        if info.has(FLAG_OFFSET) && off != 0 {
            write!(f, " offset:{off}")?;
        }
        if mods >> 50 & 0x1b != 0 || info.form != crate::table::Form::Plain {
            let name = info.name;
            gfx12_cpol(
                f,
                (w1 >> 20) & 7,
                (w1 >> 18) & 3,
                name.contains("_store"),
                name.contains("_atomic"),
            )?;
        }
        return Ok(());
    }
    if syntax.target.is_gfx9() {
        // GFX9 cache policy: bits 16, 17 and 25, which LLVM's
        // AMDGPUInstPrinter::printCPol names sc0/nt/sc1 on gfx940+
        // (gfx942) and glc/slc/scc on gfx90a, in that order
        let (b16, b17, b25) = if syntax.target.is_gfx940() {
            (" sc0", " nt", " sc1")
        } else {
            (" glc", " slc", " scc")
        };
        if info.has(FLAG_OFFSET) {
            let raw = w0 & 0x1fff;
            if raw != 0 {
                if info.enc == Enc::Flat {
                    write!(f, " offset:{raw}")?;
                } else {
                    write!(f, " offset:{}", sign_extend(raw, 13))?;
                }
            }
        }
        if w0 >> 16 & 1 != 0 {
            f.write_str(b16)?;
        }
        if (mods as u32 & w0) >> 17 & 1 != 0 {
            f.write_str(b17)?;
        }
        if (mods as u32 & w0) >> 25 & 1 != 0 {
            f.write_str(b25)?;
        }
        return Ok(());
    }
    if info.has(FLAG_OFFSET) {
        let raw = w0 & 0x1fff;
        if raw != 0 {
            if info.enc == Enc::Flat {
                write!(f, " offset:{raw}")?;
            } else {
                write!(f, " offset:{}", sign_extend(raw, 13))?;
            }
        }
    }
    if w0 >> 14 & 1 != 0 {
        f.write_str(" glc")?;
    }
    if (mods as u32 & w0) >> 15 & 1 != 0 {
        f.write_str(" slc")?;
    }
    if (mods as u32 & w0) >> 13 & 1 != 0 {
        f.write_str(" dlc")?;
    }
    Ok(())
}

/// MUBUF/MTBUF/VBUFFER modifiers: format (tbuffer), idxen, offen,
/// offset, cache policy, tfe.
pub(crate) fn buf_suffix(f: &mut dyn Write, inst: &Inst, syntax: Syntax) -> fmt::Result {
    let info = inst.info;
    let (w0, w1, w2) = (inst.words[0], inst.words[1], inst.words[2]);
    let mods = info.mods;
    let g12 = syntax.target.is_gfx12();
    if syntax.target.is_gfx9() {
        // GFX9 MUBUF: offen 12, idxen 13, lds 16, offset 11:0; cache policy glc 14,
        // slc 17, scc 15 on gfx90a and sc0 14, nt 17, sc1 15 on gfx940+
        // (AMDGPUInstPrinter::printCPol prints them in that order)
        if w0 >> 13 & 1 != 0 {
            f.write_str(" idxen")?;
        }
        if w0 >> 12 & 1 != 0 {
            f.write_str(" offen")?;
        }
        let offset = w0 & 0xfff;
        if info.has(FLAG_OFFSET) && offset != 0 {
            write!(f, " offset:{offset}")?;
        }
        let (b14, b17, b15) = if syntax.target.is_gfx940() {
            (" sc0", " nt", " sc1")
        } else {
            (" glc", " slc", " scc")
        };
        if w0 >> 14 & 1 != 0 {
            f.write_str(b14)?;
        }
        if (mods as u32 & w0) >> 17 & 1 != 0 {
            f.write_str(b17)?;
        }
        if (mods as u32 & w0) >> 15 & 1 != 0 {
            f.write_str(b15)?;
        }
        // the *_LDS opcodes (their own rows: no vdata) print lds last
        if w0 >> 16 & 1 != 0 {
            f.write_str(" lds")?;
        }
        return Ok(());
    }
    let (format, idxen, offen, offset, tfe) = if g12 {
        (
            (w1 >> 23) & 0x7f,
            w1 >> 31 & 1,
            w1 >> 30 & 1,
            sign_extend(w2 >> 8, 24),
            w0 >> 22 & 1,
        )
    } else {
        (
            (w0 >> 19) & 0x7f,
            w1 >> 23 & 1,
            w1 >> 22 & 1,
            i64::from(w0 & 0xfff),
            w1 >> 21 & 1,
        )
    };
    if info.name.starts_with("tbuffer_") {
        let table = match syntax.target {
            Target::Gfx1201 => &crate::table::FORMATS_GFX1201,
            // the GFX9 tables have no MTBUF rows (their formats are empty)
            Target::Gfx90a => &crate::table::FORMATS_GFX90A,
            Target::Gfx942 => &crate::table::FORMATS_GFX942,
            Target::Gfx1100 => &crate::table::FORMATS_GFX1100,
        };
        let t = table[format as usize];
        if !t.is_empty() {
            write!(f, " {t}")?;
        }
    }
    if idxen != 0 {
        f.write_str(" idxen")?;
    }
    if offen != 0 {
        f.write_str(" offen")?;
    }
    if info.has(FLAG_OFFSET) && offset != 0 {
        write!(f, " offset:{offset}")?;
    }
    if g12 {
        if mods >> 50 & 0x1b != 0 || w1 >> 20 & 1 != 0 {
            let name = info.name;
            gfx12_cpol(
                f,
                (w1 >> 20) & 7,
                (w1 >> 18) & 3,
                name.contains("_store"),
                name.contains("_atomic"),
            )?;
        }
    } else {
        if w0 >> 14 & 1 != 0 {
            f.write_str(" glc")?;
        }
        if (mods as u32 & w0) >> 12 & 1 != 0 {
            f.write_str(" slc")?;
        }
        if (mods as u32 & w0) >> 13 & 1 != 0 {
            f.write_str(" dlc")?;
        }
    }
    if tfe != 0 {
        f.write_str(" tfe")?;
    }
    Ok(())
}

/// Export: target, the four sources (`off` where not enabled), done and
/// row_en (AMDGPUInstPrinter::printExpTgt / printExpSrcN).
pub(crate) fn export(f: &mut dyn Write, inst: &Inst) -> fmt::Result {
    let (w0, w1) = (inst.words[0], inst.words[1]);
    f.write_str(inst.info.name)?;
    let tgt = (w0 >> 4) & 0x3f;
    match tgt {
        0..=7 => write!(f, " mrt{tgt}")?,
        8 => f.write_str(" mrtz")?,
        12..=16 => write!(f, " pos{}", tgt - 12)?,
        20 => f.write_str(" prim")?,
        21 | 22 => write!(f, " dual_src_blend{}", tgt - 21)?,
        _ => write!(f, " invalid_target_{tgt}")?,
    }
    for i in 0..4 {
        f.write_str(if i == 0 { " " } else { ", " })?;
        if w0 >> i & 1 != 0 {
            write!(f, "v{}", (w1 >> (8 * i)) & 0xff)?;
        } else {
            f.write_str("off")?;
        }
    }
    if w0 >> 11 & 1 != 0 {
        f.write_str(" done")?;
    }
    if w0 >> 13 & 1 != 0 {
        f.write_str(" row_en")?;
    }
    Ok(())
}

/// Image modifiers: dmask, dim, then the bits the instruction prints, in
/// LLVM's order (gfx11: unorm glc slc dlc r128 a16 tfe lwe d16; gfx12:
/// unorm th/scope r128 a16 tfe lwe d16).
pub(crate) fn image_suffix(f: &mut dyn Write, inst: &Inst, syntax: Syntax) -> fmt::Result {
    const DIMS: [&str; 8] = [
        "1D",
        "2D",
        "3D",
        "CUBE",
        "1D_ARRAY",
        "2D_ARRAY",
        "2D_MSAA",
        "2D_MSAA_ARRAY",
    ];
    let info = inst.info;
    let Some(img) = crate::image::info(syntax.target, info.form, info.op) else {
        return Ok(());
    };
    let q = inst.bits() & info.mods;
    let bit = |b: u32| q >> b & 1 != 0;
    let (w0, w1) = (inst.words[0], inst.words[1]);
    let g12 = syntax.target.is_gfx12();
    let (dmask, dim) = if g12 {
        ((w0 >> 22) & 0xf, w0 & 7)
    } else {
        ((w0 >> 8) & 0xf, (w0 >> 2) & 7)
    };
    if img.dmask && dmask != 0 {
        write!(f, " dmask:{dmask:#x}")?;
    }
    if img.dim {
        write!(f, " dim:SQ_RSRC_IMG_{}", DIMS[dim as usize])?;
    }
    let names: &[(u32, &str)] = if g12 {
        &[
            (13, " unorm"),
            (999, ""),
            (4, " r128"),
            (6, " a16"),
            (55, " tfe"),
            (3, " tfe"),
            (40, " lwe"),
            (5, " d16"),
        ]
    } else {
        &[
            (7, " unorm"),
            (14, " glc"),
            (12, " slc"),
            (13, " dlc"),
            (15, " r128"),
            (16, " a16"),
            (53, " tfe"),
            (54, " lwe"),
            (17, " d16"),
        ]
    };
    for &(b, name) in names {
        if b == 999 {
            if info.mods >> 50 & 0x1b != 0 {
                let n = info.name;
                gfx12_cpol(
                    f,
                    (w1 >> 20) & 7,
                    (w1 >> 18) & 3,
                    n.starts_with("image_store"),
                    n.starts_with("image_atomic"),
                )?;
            }
        } else if bit(b) {
            f.write_str(name)?;
        }
    }
    Ok(())
}

/// SMEM modifiers after the operands: the offset (variants that print it
/// as a modifier), then glc/dlc (gfx11) or th/scope (gfx12).
pub(crate) fn smem_suffix(f: &mut dyn Write, inst: &Inst, syntax: Syntax) -> fmt::Result {
    let (w0, w1) = (inst.words[0], inst.words[1]);
    let g12 = syntax.target.is_gfx12();
    if inst.info.has(FLAG_OFFSET) {
        f.write_str(" offset:")?;
        if g12 {
            hex_signed(f, sign_extend(w1 & 0xff_ffff, 24))?;
        } else {
            hex_signed(f, sign_extend(w1 & 0x1f_ffff, 21))?;
        }
    }
    // cache policy bits, where the instruction has them
    let mods = inst.info.mods as u32;
    if syntax.target.is_gfx9() {
        if (mods & w0) >> 16 & 1 != 0 {
            f.write_str(" glc")?;
        }
    } else if g12 {
        // th in bits 24:23, scope in 22:21
        if mods & 0x1e0_0000 != 0 {
            gfx12_cpol(f, (w0 >> 23) & 3, (w0 >> 21) & 3, false, false)?;
        }
    } else {
        if (mods & w0) >> 14 & 1 != 0 {
            f.write_str(" glc")?;
        }
        if (mods & w0) >> 13 & 1 != 0 {
            f.write_str(" dlc")?;
        }
    }
    Ok(())
}

const SCOPES: [&str; 4] = ["SCOPE_CU", "SCOPE_SE", "SCOPE_DEV", "SCOPE_SYS"];

/// gfx12 cache policy as AMDGPUInstPrinter::printTH / printScope write it:
/// `th` (3 bits) names depend on store/atomic, then `scope` (2 bits).
pub(crate) fn gfx12_cpol(
    f: &mut dyn Write,
    th: u32,
    scope: u32,
    store: bool,
    atomic: bool,
) -> fmt::Result {
    if th != 0 {
        f.write_str(" th:")?;
        if atomic {
            f.write_str("TH_ATOMIC_")?;
            if th & 4 != 0 {
                if scope >= 2 {
                    f.write_str(if th & 2 != 0 {
                        "CASCADE_NT"
                    } else {
                        "CASCADE_RT"
                    })?;
                } else {
                    write!(f, "{th:#x}")?;
                }
            } else if th & 2 != 0 {
                f.write_str(if th & 1 != 0 { "NT_RETURN" } else { "NT" })?;
            } else {
                f.write_str("RETURN")?;
            }
        } else if !store && th == 7 {
            write!(f, "{th:#x}")?;
        } else {
            f.write_str(if store { "TH_STORE_" } else { "TH_LOAD_" })?;
            f.write_str(match th {
                1 => "NT",
                2 => "HT",
                3 if scope == 3 => "BYPASS",
                3 if store => "RT_WB",
                3 => "LU",
                4 => "NT_RT",
                5 => "RT_NT",
                6 => "NT_HT",
                _ => "NT_WB",
            })?;
        }
    }
    if scope != 0 {
        write!(f, " scope:{}", SCOPES[scope as usize & 3])?;
    }
    Ok(())
}
