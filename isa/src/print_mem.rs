//! LLVM-syntax printing of the memory encodings (SMEM, DS, FLAT/GLOBAL/
//! SCRATCH, MUBUF cache controls). Operand shapes follow from the mnemonic.

use crate::decode::Inst;
use crate::print::{Syntax, hex_signed, reg_range, scalar, sign_extend};
use crate::table::{Enc, FLAG_OFFSET, FLAG_OFFSET01, FLAG_SWIZZLE};
use core::fmt::{self, Write};

fn data_width(name: &str) -> u8 {
    if name.ends_with("_b64")
        || name.ends_with("_u64")
        || name.ends_with("_i64")
        || name.ends_with("_f64")
    {
        2
    } else if name.ends_with("_b96") {
        3
    } else if name.ends_with("_b128") {
        4
    } else {
        1
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
    if (info.mods as u32 & w0) >> 17 & 1 != 0 {
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
    if g12 {
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

/// DS operand shape from the mnemonic: (returns data, has data0, has
/// data1, two addresses).
pub(crate) fn ds_shape(name: &str) -> (bool, bool, bool, bool) {
    let op = name.strip_prefix("ds_").unwrap_or(name);
    let two = op.contains("2addr");
    let rtn = op.contains("_rtn_")
        || op.starts_with("load")
        || op.starts_with("bpermute")
        || op.starts_with("permute");
    let two_data =
        op.starts_with("cmpstore") || op.starts_with("mskor") || (two && op.starts_with("store"));
    let has_data = !op.starts_with("load");
    (rtn, has_data, two_data, two)
}

/// Whether LLVM accepts the operand fields of a memory word (unused
/// register fields must be zero, FLAT has no SADDR).
pub(crate) fn mem_fields_ok(inst: &Inst, gfx12: bool) -> bool {
    let name = inst.info.name;
    let (w0, w1) = (inst.words[0], inst.words[1]);
    match inst.info.enc {
        Enc::Ds => {
            let (rtn, has_data, two_data, _) = ds_shape(name);
            let d0 = (w1 >> 8) & 0xff;
            let d1 = (w1 >> 16) & 0xff;
            let vdst = w1 >> 24;
            (rtn || vdst == 0)
                && (has_data || d0 == 0)
                && (two_data || d1 == 0)
                && (gfx12 || w0 >> 17 & 1 == 0)
        }
        Enc::Flat | Enc::Global | Enc::Scratch if !gfx12 => {
            let (seg, op) = name.split_once('_').unwrap_or(("", ""));
            let load = op.starts_with("load");
            let atomic = op.starts_with("atomic");
            let glc = (w0 >> 14) & 1 != 0;
            let data = (w1 >> 8) & 0xff;
            let saddr = (w1 >> 16) & 0x7f;
            let vdst = w1 >> 24;
            (seg != "flat" || saddr == 124)
                && (load || (atomic && glc) || vdst == 0)
                && (!load || data == 0)
        }
        _ => true,
    }
}

pub(crate) fn mem(f: &mut dyn Write, inst: &Inst, syntax: Syntax) -> fmt::Result {
    let name = inst.info.name;
    let (w0, w1) = (inst.words[0], inst.words[1]);
    let g12 = syntax.target.is_gfx12();
    f.write_str(name)?;
    match inst.info.enc {
        Enc::Smem => {
            let sdata = (w0 >> 6) & 0x7f;
            let sbase = (w0 & 0x3f) * 2;
            let buffer = name.starts_with("s_buffer");
            let n: u8 = match name.rsplit('_').next().unwrap_or("") {
                "b64" => 2,
                "b96" => 3,
                "b128" => 4,
                "b256" => 8,
                "b512" => 16,
                _ => 1,
            };
            if matches!(name, "s_dcache_inv" | "s_gl1_inv" | "s_icache_inv") {
                return Ok(());
            }
            f.write_str(" ")?;
            scalar(f, sdata, n)?;
            f.write_str(", ")?;
            scalar(f, sbase, if buffer { 4 } else { 2 })?;
            let (offset, soff) = if g12 {
                (i64::from(((w1 & 0xff_ffff) << 8) as i32 >> 8), w1 >> 25)
            } else {
                (i64::from(((w1 & 0x1f_ffff) << 11) as i32 >> 11), w1 >> 25)
            };
            f.write_str(", ")?;
            if g12 {
                if soff != 124 {
                    scalar(f, soff, 1)?;
                    f.write_str(" offset:")?;
                }
                hex_signed(f, offset)?;
            } else if soff != 124 || offset == 0 {
                scalar(f, soff, 1)?;
                if offset != 0 {
                    f.write_str(" offset:")?;
                    hex_signed(f, offset)?;
                }
            } else {
                hex_signed(f, offset)?;
            }
            if !g12 {
                if w0 >> 14 & 1 != 0 {
                    f.write_str(" glc")?;
                }
                if w0 >> 13 & 1 != 0 {
                    f.write_str(" dlc")?;
                }
            }
            Ok(())
        }
        Enc::Ds => {
            let off0 = w0 & 0xff;
            let off1 = (w0 >> 8) & 0xff;
            let addr = w1 & 0xff;
            let d0 = (w1 >> 8) & 0xff;
            let d1 = (w1 >> 16) & 0xff;
            let vdst = w1 >> 24;
            let op = name.strip_prefix("ds_").unwrap_or(name);
            let dw = data_width(name);
            let two = op.contains("2addr");
            let rtn = op.contains("_rtn_")
                || op.starts_with("load")
                || op.starts_with("bpermute")
                || op.starts_with("permute");
            let two_data = op.starts_with("cmpstore")
                || op.starts_with("mskor")
                || (two && op.starts_with("store"));
            let has_data = !op.starts_with("load");
            let mut sep = " ";
            if rtn {
                let w = if two && (op.starts_with("load") || op.starts_with("storexchg")) {
                    2 * dw
                } else {
                    dw
                };
                f.write_str(sep)?;
                reg_range(f, "v", vdst, w)?;
                sep = ", ";
            }
            f.write_str(sep)?;
            reg_range(f, "v", addr, 1)?;
            if has_data {
                f.write_str(", ")?;
                reg_range(f, "v", d0, dw)?;
                if two_data {
                    f.write_str(", ")?;
                    reg_range(f, "v", d1, dw)?;
                }
            }
            if two {
                if off0 != 0 {
                    write!(f, " offset0:{off0}")?;
                }
                if off1 != 0 {
                    write!(f, " offset1:{off1}")?;
                }
            } else {
                let o = off0 | off1 << 8;
                if o != 0 {
                    write!(f, " offset:{o}")?;
                }
            }
            if !g12 && w0 >> 17 & 1 != 0 {
                f.write_str(" gds")?;
            }
            Ok(())
        }
        Enc::Mubuf => Ok(()),
        _ => {
            let w2 = inst.words[2];
            let (offset, addr, data, saddr, vdst) = if g12 {
                (
                    i64::from((w2 as i32) >> 8),
                    w2 & 0xff,
                    (w1 >> 23) & 0xff,
                    w0 & 0x7f,
                    w1 & 0xff,
                )
            } else {
                (
                    i64::from(((w0 & 0x1fff) << 19) as i32 >> 19),
                    w1 & 0xff,
                    (w1 >> 8) & 0xff,
                    (w1 >> 16) & 0x7f,
                    w1 >> 24,
                )
            };
            let (seg, op) = name.split_once('_').unwrap_or(("", ""));
            if matches!(op, "inv" | "wb" | "wbinv") {
                return gfx12_cache(f, w1);
            }
            let dw = data_width(name);
            let atomic = op.starts_with("atomic");
            let glc = if g12 {
                (w1 >> 20) & 1 != 0
            } else {
                (w0 >> 14) & 1 != 0
            };
            let load = op.starts_with("load");
            let saddr_on = saddr != 124 && saddr != 125;
            let mut sep = " ";
            if load || (atomic && glc) {
                f.write_str(sep)?;
                reg_range(f, "v", vdst, dw)?;
                sep = ", ";
            }
            f.write_str(sep)?;
            match seg {
                "scratch" => {
                    let sve = if g12 {
                        (w1 >> 17) & 1 != 0
                    } else {
                        (w1 >> 23) & 1 != 0
                    };
                    if sve {
                        reg_range(f, "v", addr, 1)?
                    } else {
                        f.write_str("off")?
                    }
                }
                "global" => reg_range(f, "v", addr, if saddr_on { 1 } else { 2 })?,
                _ => reg_range(f, "v", addr, 2)?,
            }
            if !load {
                f.write_str(", ")?;
                let w = if op.starts_with("atomic_cmpswap") {
                    2 * dw
                } else {
                    dw
                };
                reg_range(f, "v", data, w)?;
            }
            if seg != "flat" {
                f.write_str(", ")?;
                if saddr_on {
                    scalar(f, saddr, if seg == "global" { 2 } else { 1 })?;
                } else {
                    f.write_str("off")?;
                }
            }
            if offset != 0 {
                write!(f, " offset:{offset}")?;
            }
            if g12 {
                gfx12_th(f, w1, atomic, load)?;
            } else {
                if glc {
                    f.write_str(" glc")?;
                }
                if (w0 >> 15) & 1 != 0 {
                    f.write_str(" slc")?;
                }
                if (w0 >> 13) & 1 != 0 {
                    f.write_str(" dlc")?;
                }
            }
            Ok(())
        }
    }
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

fn gfx12_cache(f: &mut dyn Write, w1: u32) -> fmt::Result {
    let scope = (w1 >> 18) & 3;
    if scope != 0 {
        write!(f, " scope:{}", SCOPES[scope as usize])?;
    }
    Ok(())
}

fn gfx12_th(f: &mut dyn Write, w1: u32, atomic: bool, load: bool) -> fmt::Result {
    let th = (w1 >> 20) & 7;
    if th != 0 {
        if atomic {
            let t = match th {
                1 => "TH_ATOMIC_RETURN",
                2 => "TH_ATOMIC_NT",
                3 => "TH_ATOMIC_NT_RETURN",
                4 => "TH_ATOMIC_CASCADE_RT",
                6 => "TH_ATOMIC_CASCADE_NT",
                _ => "",
            };
            if !t.is_empty() {
                write!(f, " th:{t}")?;
            }
        } else {
            let t = if load {
                [
                    "",
                    "TH_LOAD_NT",
                    "TH_LOAD_HT",
                    "TH_LOAD_BYPASS",
                    "TH_LOAD_LU",
                    "TH_LOAD_NT_RT",
                    "TH_LOAD_RT_NT",
                    "TH_LOAD_NT_HT",
                ][th as usize]
            } else {
                [
                    "",
                    "TH_STORE_NT",
                    "TH_STORE_HT",
                    "TH_STORE_BYPASS",
                    "TH_STORE_LU",
                    "TH_STORE_NT_RT",
                    "TH_STORE_RT_NT",
                    "TH_STORE_NT_HT",
                ][th as usize]
            };
            write!(f, " th:{t}")?;
        }
    }
    gfx12_cache(f, w1)
}
