//! Image instructions (gfx11 MIMG, gfx12 VIMAGE/VSAMPLE): how wide the
//! data and address registers print.
//!
//! LLVM decodes an image word as one instruction variant and then resizes
//! its data register from dmask, d16 and tfe and its address registers
//! from dim and a16 (`AMDGPUDisassembler::convertMIMGInst`), keeping the
//! variant it decoded when no resized one exists or when a resized register
//! would run past v255. The tables generated from llvm-mc-19 hold the
//! printed widths for every dim, a16 and data size, the registers the first
//! decode accepts, and the widths printed when resizing overflows.

use crate::inst::{Inst, Target};
use crate::table::{Enc, Form, ImgInfo};

/// Printed registers of an image instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub vdata: u32,
    pub data_width: u8,
    /// Address registers (first register, width); `naddr` of them.
    pub addr: [(u32, u8); 5],
    pub naddr: u8,
    /// The address prints as a bracketed list (NSA / gfx12).
    pub list: bool,
}

fn digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'z' => c - b'a' + 10,
        _ => 0,
    }
}

pub(crate) fn info(target: Target, form: Form, op: u16) -> Option<&'static ImgInfo> {
    let (i, t) = match target {
        Target::Gfx1100 => (
            crate::table::img_index_gfx1100(Enc::Mimg, form, op)?,
            crate::table::IMG_GFX1100,
        ),
        Target::Gfx1201 => (
            crate::table::img_index_gfx1201(Enc::Mimg, form, op)?,
            crate::table::IMG_GFX1201,
        ),
        Target::Gfx90a => (
            crate::table::img_index_gfx90a(Enc::Mimg, form, op)?,
            crate::table::IMG_GFX90A,
        ),
        Target::Gfx942 => (
            crate::table::img_index_gfx942(Enc::Mimg, form, op)?,
            crate::table::IMG_GFX942,
        ),
    };
    t.get(i)
}

/// The data and address registers as LLVM prints them, or `None` when LLVM
/// rejects the word.
pub fn shape(target: Target, inst: &Inst) -> Option<Shape> {
    let img = info(target, inst.info.form, inst.info.op)?;
    let (w0, w1, w2) = (inst.words[0], inst.words[1], inst.words[2]);
    let g12 = target.is_gfx12();
    let sample = inst.info.form == Form::Var(1);
    let (dim, a16, d16, tfe, dmask) = if g12 {
        let tfe = if sample { w0 >> 3 & 1 } else { w1 >> 23 & 1 };
        (w0 & 7, w0 >> 6 & 1, w0 >> 5 & 1, tfe, (w0 >> 22) & 0xf)
    } else {
        (
            (w0 >> 2) & 7,
            w0 >> 16 & 1,
            w0 >> 17 & 1,
            w1 >> 21 & 1,
            (w0 >> 8) & 0xf,
        )
    };
    // LLVM's data size: gather4-style 4, else the dmask channels; d16 packs
    // two per register; tfe adds one.
    let mut size = if img.gather {
        4
    } else {
        dmask.count_ones().max(1)
    };
    if d16 != 0 {
        size = size.div_ceil(2);
    }
    size += tfe;
    let key = (size.clamp(1, 5) - 1) as usize;
    let entry = img.tab[(dim as usize) * 12 + (a16 as usize) * 6 + key].as_bytes();
    if entry == b"x" {
        return None;
    }
    let vdata = if g12 { w1 & 0xff } else { (w1 >> 8) & 0xff };
    let mut regs = [0u32; 5];
    if g12 {
        for (j, r) in regs.iter_mut().take(4).enumerate() {
            *r = (w2 >> (8 * j)) & 0xff;
        }
        regs[4] = w1 >> 24;
    } else {
        regs[0] = w1 & 0xff;
        for (j, r) in regs.iter_mut().enumerate().skip(1) {
            *r = (w2 >> (8 * (j - 1))) & 0xff;
        }
    }
    // the first decode's registers must fit its widths
    if vdata + u32::from(img.vd) > 256 {
        return None;
    }
    for (r, w) in regs.iter().zip(img.w).take(usize::from(img.nw)) {
        if r + u32::from(w) > 256 {
            return None;
        }
    }
    // resizing past v255 keeps the first decode
    let mut spec = entry;
    let grows = |w: u8, reg: u32, limit: u8| w > limit && reg + u32::from(w) > 256;
    let mut overflow = grows(digit(entry[0]), vdata, img.vd);
    for (j, &c) in entry[1..].iter().enumerate() {
        if j < usize::from(img.nw) && grows(digit(c), regs[j], img.w[j]) {
            overflow = true;
        }
    }
    if overflow && let Some(c) = img.canon {
        spec = c.as_bytes();
    }
    let mut addr = [(0u32, 0u8); 5];
    let naddr = (spec.len() - 1).min(5);
    for (j, a) in addr.iter_mut().take(naddr).enumerate() {
        *a = (regs[j], digit(spec[j + 1]));
    }
    Some(Shape {
        vdata,
        data_width: digit(spec[0]),
        addr,
        naddr: naddr as u8,
        list: g12 || inst.info.form == Form::Var(1),
    })
}
