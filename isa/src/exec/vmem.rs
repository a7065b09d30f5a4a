//! LDS (DS) and flat/global/scratch memory instructions.

use super::*;

/// Size in bytes and sign-extension of a load/store by mnemonic suffix.
fn access(name: &str) -> Option<(u32, bool, bool, bool)> {
    // (bytes, signed, d16 (low half), d16_hi (high half))
    let hi = name.contains("_d16_hi");
    let d16 = name.contains("_d16") && !hi;
    let r = if name.ends_with("_u8") || name.ends_with("_b8") {
        (1, false)
    } else if name.ends_with("_i8") {
        (1, true)
    } else if name.ends_with("_u16") || name.ends_with("_b16") {
        (2, false)
    } else if name.ends_with("_i16") {
        (2, true)
    } else if name.ends_with("_b32") {
        (4, false)
    } else if name.ends_with("_b64") {
        (8, false)
    } else if name.ends_with("_b96") {
        (12, false)
    } else if name.ends_with("_b128") {
        (16, false)
    } else {
        return None;
    };
    Some((r.0, r.1, d16, hi))
}

fn atomic_of(op: &str) -> Option<(AtomicOp, u8)> {
    let (o, ty) = op.rsplit_once('_')?;
    let size = if ty.ends_with("64") { 8 } else { 4 };
    let a = match (o, ty) {
        ("swap", _) | ("storexchg", _) => AtomicOp::Swap,
        ("cmpswap", _) | ("cmpstore", _) => AtomicOp::CmpSwap,
        ("add", "f32") | ("add", "f64") => AtomicOp::FAdd,
        ("min", "f32") | ("min_num", "f32") | ("min", "f64") => AtomicOp::FMin,
        ("max", "f32") | ("max_num", "f32") | ("max", "f64") => AtomicOp::FMax,
        ("add", _) => AtomicOp::Add,
        ("sub", _) => AtomicOp::Sub,
        ("min", t) if t.starts_with('i') => AtomicOp::SMin,
        ("max", t) if t.starts_with('i') => AtomicOp::SMax,
        ("min", _) => AtomicOp::UMin,
        ("max", _) => AtomicOp::UMax,
        ("and", _) => AtomicOp::And,
        ("or", _) => AtomicOp::Or,
        ("xor", _) => AtomicOp::Xor,
        ("inc", _) => AtomicOp::Inc,
        ("dec", _) => AtomicOp::Dec,
        _ => return None,
    };
    Some((a, size))
}

impl<M: Memory> Interp<'_, M> {
    fn lds_range(sh: &Shared<'_>, addr: u32, size: u32, ctx: &Ctx) -> Result<usize, ExecError> {
        let end = addr as usize + size as usize;
        if end > sh.lds.len() {
            return Err(ExecError::LdsOutOfRange {
                pc: ctx.pc,
                addr,
                size,
            });
        }
        Ok(addr as usize)
    }

    pub(super) fn ds(
        &mut self,
        w: &mut Wave,
        sh: &mut Shared<'_>,
        inst: &Inst,
        ctx: &Ctx,
    ) -> Result<Flow, ExecError> {
        let name = inst.sem();
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let off0 = w0 & 0xff;
        let off1 = (w0 >> 8) & 0xff;
        let offset = off0 | off1 << 8;
        let addr_r = w1 & 0xff;
        let d0 = (w1 >> 8) & 0xff;
        let d1 = (w1 >> 16) & 0xff;
        let vdst = w1 >> 24;
        let exec = w.exec();
        let ws = w.wave_size;
        w.counters.issued[2] += 1;
        let op = name.strip_prefix("ds_").unwrap_or(name);
        if op == "nop" {
            return Ok(Flow::Next);
        }
        if op == "bpermute_b32" || op == "permute_b32" {
            let mut vals = [0u32; 64];
            let mut addrs = [0u32; 64];
            for lane in 0..ws {
                vals[lane as usize] = w.vget(d0, lane);
                addrs[lane as usize] = w.vget(addr_r, lane).wrapping_add(offset);
            }
            let mut out = [0u32; 64];
            for lane in 0..ws {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let sel = (addrs[lane as usize] >> 2) % ws;
                if op == "bpermute_b32" {
                    out[lane as usize] = vals[sel as usize];
                } else {
                    out[sel as usize] = vals[lane as usize];
                }
            }
            for lane in 0..ws {
                if exec >> lane & 1 != 0 {
                    w.vset(vdst, lane, out[lane as usize]);
                }
            }
            return Ok(Flow::Next);
        }
        // two-address forms
        if let Some(rest) = op
            .strip_prefix("load_2addr_")
            .map(|r| (false, r))
            .or_else(|| op.strip_prefix("store_2addr_").map(|r| (true, r)))
        {
            let (store, rest) = rest;
            let (stride64, ty) = match rest.strip_prefix("stride64_") {
                Some(t) => (true, t),
                None => (false, rest),
            };
            let sz = if ty.ends_with("64") { 8u32 } else { 4 };
            let mul = sz * if stride64 { 64 } else { 1 };
            for lane in 0..ws {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let a = w.vget(addr_r, lane);
                for (k, off) in [off0, off1].into_iter().enumerate() {
                    let ad = a.wrapping_add(off * mul);
                    let at = Self::lds_range(sh, ad, sz, ctx)?;
                    let n = (sz / 4) as usize;
                    if store {
                        let src = if k == 0 { d0 } else { d1 };
                        for j in 0..n {
                            let v = w.vget(src + j as u32, lane).to_le_bytes();
                            sh.lds[at + 4 * j..at + 4 * j + 4].copy_from_slice(&v);
                        }
                    } else {
                        for j in 0..n {
                            let b = &sh.lds[at + 4 * j..at + 4 * j + 4];
                            let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                            w.vset(vdst + (k * n + j) as u32, lane, v);
                        }
                    }
                }
            }
            return Ok(Flow::Next);
        }
        if let Some(rest) = op.strip_prefix("store_") {
            let Some((sz, _, _, hi)) = access(op) else {
                unimpl!(self, ctx, inst)
            };
            let _ = rest;
            for lane in 0..ws {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let ad = w.vget(addr_r, lane).wrapping_add(offset);
                let at = Self::lds_range(sh, ad, sz, ctx)?;
                let mut bytes = [0u8; 16];
                for j in 0..sz.div_ceil(4) {
                    let mut v = w.vget(d0 + j, lane);
                    if hi {
                        v >>= 16;
                    }
                    bytes[4 * j as usize..4 * j as usize + 4].copy_from_slice(&v.to_le_bytes());
                }
                sh.lds[at..at + sz as usize].copy_from_slice(&bytes[..sz as usize]);
            }
            return Ok(Flow::Next);
        }
        if op.starts_with("load_") {
            let Some((sz, signed, d16, hi)) = access(op) else {
                unimpl!(self, ctx, inst)
            };
            for lane in 0..ws {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let ad = w.vget(addr_r, lane).wrapping_add(offset);
                let at = Self::lds_range(sh, ad, sz, ctx)?;
                let mut b = [0u8; 16];
                b[..sz as usize].copy_from_slice(&sh.lds[at..at + sz as usize]);
                write_loaded(w, vdst, lane, &b, sz, signed, d16, hi);
            }
            return Ok(Flow::Next);
        }
        // atomics: ds_<op>[_rtn]_<ty>
        let (rtn, aop) = match op.split_once("_rtn_") {
            Some((o, t)) => (true, alloc::format!("{o}_{t}")),
            None => (false, op.to_string()),
        };
        let Some((a, size)) = atomic_of(&aop) else {
            unimpl!(self, ctx, inst)
        };
        for lane in 0..ws {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let ad = w.vget(addr_r, lane).wrapping_add(offset);
            let at = Self::lds_range(sh, ad, u32::from(size), ctx)?;
            let n = usize::from(size);
            let mut ob = [0u8; 8];
            ob[..n].copy_from_slice(&sh.lds[at..at + n]);
            let old = u64::from_le_bytes(ob);
            let rd = |r: u32| -> u64 {
                if size == 8 {
                    u64::from(w.vget(r, lane)) | u64::from(w.vget(r + 1, lane)) << 32
                } else {
                    u64::from(w.vget(r, lane))
                }
            };
            // ds_cmpstore: data0 is the comparand, data1 the new value.
            let (src, cmp) = if a == AtomicOp::CmpSwap {
                (rd(d1), rd(d0))
            } else {
                (rd(d0), 0)
            };
            let new = a.apply(old, src, cmp, size);
            sh.lds[at..at + n].copy_from_slice(&new.to_le_bytes()[..n]);
            if rtn {
                w.vset(vdst, lane, old as u32);
                if size == 8 {
                    w.vset(vdst + 1, lane, (old >> 32) as u32);
                }
            }
        }
        Ok(Flow::Next)
    }

    pub(super) fn flat(
        &mut self,
        w: &mut Wave,
        sh: &mut Shared<'_>,
        inst: &Inst,
        ctx: &Ctx,
    ) -> Result<Flow, ExecError> {
        let name = inst.sem();
        let (w0, w1, w2) = (inst.words[0], inst.words[1], inst.words[2]);
        let g12 = self.syntax.target.is_gfx12();
        let (offset, addr_r, data, saddr, vdst, glc, sve) = if self.syntax.target.is_gfx9() {
            // GFX9: offset 12:0, sve 13, sc0 16 (atomics return); saddr 0x7f
            // is off
            (
                i64::from(((w0 & 0x1fff) << 19) as i32 >> 19),
                w1 & 0xff,
                (w1 >> 8) & 0xff,
                (w1 >> 16) & 0x7f,
                w1 >> 24,
                (w0 >> 16) & 1 == 1,
                (w0 >> 13) & 1 == 1,
            )
        } else if g12 {
            (
                i64::from((w2 as i32) >> 8),
                w2 & 0xff,
                (w1 >> 23) & 0xff,
                w0 & 0x7f,
                w1 & 0xff,
                (w1 >> 20) & 1 == 1,
                (w1 >> 17) & 1 == 1,
            )
        } else {
            (
                i64::from(((w0 & 0x1fff) << 19) as i32 >> 19),
                w1 & 0xff,
                (w1 >> 8) & 0xff,
                (w1 >> 16) & 0x7f,
                w1 >> 24,
                (w0 >> 14) & 1 == 1,
                (w1 >> 23) & 1 == 1,
            )
        };
        let (seg, op) = name.split_once('_').unwrap_or(("", ""));
        if matches!(op, "inv" | "wb" | "wbinv") {
            return Ok(Flow::Next);
        }
        let exec = w.exec();
        let ws = w.wave_size;
        let saddr_on = saddr != 124 && saddr != 125 && saddr != 0x7f;
        // Lane address: (kind, address). kind 0 global, 1 LDS, 2 scratch.
        let lane_addr = |w: &Wave, lane: u32| -> (u8, u64) {
            match seg {
                "scratch" => {
                    let mut a = offset as u64;
                    if saddr_on {
                        a = a.wrapping_add(u64::from(w.s[saddr as usize]));
                    }
                    if sve {
                        a = a.wrapping_add(u64::from(w.vget(addr_r, lane)));
                    }
                    (2, a & 0xffff_ffff)
                }
                "global" => {
                    let base = if saddr_on {
                        (u64::from(w.s[saddr as usize]) | u64::from(w.s[saddr as usize + 1]) << 32)
                            .wrapping_add(u64::from(w.vget(addr_r, lane)))
                    } else {
                        u64::from(w.vget(addr_r, lane)) | u64::from(w.vget(addr_r + 1, lane)) << 32
                    };
                    (0, base.wrapping_add(offset as u64))
                }
                _ => {
                    let a = (u64::from(w.vget(addr_r, lane))
                        | u64::from(w.vget(addr_r + 1, lane)) << 32)
                        .wrapping_add(offset as u64);
                    w.apertures.classify(a)
                }
            }
        };
        if let Some(aop) = op.strip_prefix("atomic_") {
            let Some((a, size)) = atomic_of(aop) else {
                unimpl!(self, ctx, inst)
            };
            w.counters.issued[0] += 1;
            for lane in 0..ws {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let (kind, ad) = lane_addr(w, lane);
                let rd = |r: u32| -> u64 {
                    if size == 8 {
                        u64::from(w.vget(r, lane)) | u64::from(w.vget(r + 1, lane)) << 32
                    } else {
                        u64::from(w.vget(r, lane))
                    }
                };
                // cmpswap: data holds {new, cmp}.
                let (src, cmp) = if a == AtomicOp::CmpSwap {
                    (rd(data), rd(data + u32::from(size) / 4))
                } else {
                    (rd(data), 0)
                };
                let old = match kind {
                    0 => self
                        .mem
                        .atomic(ad, a, size, src, cmp)
                        .map_err(|fault| ExecError::Fault { pc: ctx.pc, fault })?,
                    1 => {
                        let at = Self::lds_range(sh, ad as u32, u32::from(size), ctx)?;
                        let n = usize::from(size);
                        let mut ob = [0u8; 8];
                        ob[..n].copy_from_slice(&sh.lds[at..at + n]);
                        let old = u64::from_le_bytes(ob);
                        let new = a.apply(old, src, cmp, size);
                        sh.lds[at..at + n].copy_from_slice(&new.to_le_bytes()[..n]);
                        old
                    }
                    _ => {
                        let at = scratch_at(w, lane, ad, u32::from(size), ctx)?;
                        let n = usize::from(size);
                        let mut ob = [0u8; 8];
                        ob[..n].copy_from_slice(&w.scratch[at..at + n]);
                        let old = u64::from_le_bytes(ob);
                        let new = a.apply(old, src, cmp, size);
                        w.scratch[at..at + n].copy_from_slice(&new.to_le_bytes()[..n]);
                        old
                    }
                };
                if glc {
                    w.vset(vdst, lane, old as u32);
                    if size == 8 {
                        w.vset(vdst + 1, lane, (old >> 32) as u32);
                    }
                }
            }
            return Ok(Flow::Next);
        }
        let Some((sz, signed, d16, hi)) = access(op) else {
            unimpl!(self, ctx, inst)
        };
        let store = op.starts_with("store");
        if !store && !op.starts_with("load") {
            unimpl!(self, ctx, inst)
        }
        w.counters.issued[if store { 1 } else { 0 }] += 1;
        for lane in 0..ws {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let (kind, ad) = lane_addr(w, lane);
            let mut b = [0u8; 16];
            let n = sz as usize;
            if store {
                for j in 0..sz.div_ceil(4) {
                    let mut v = w.vget(data + j, lane);
                    if hi {
                        v >>= 16;
                    }
                    b[4 * j as usize..4 * j as usize + 4].copy_from_slice(&v.to_le_bytes());
                }
                match kind {
                    0 => self
                        .mem
                        .write(ad, &b[..n])
                        .map_err(|fault| ExecError::Fault { pc: ctx.pc, fault })?,
                    1 => {
                        let at = Self::lds_range(sh, ad as u32, sz, ctx)?;
                        sh.lds[at..at + n].copy_from_slice(&b[..n]);
                    }
                    _ => {
                        let at = scratch_at(w, lane, ad, sz, ctx)?;
                        w.scratch[at..at + n].copy_from_slice(&b[..n]);
                    }
                }
            } else {
                match kind {
                    0 => self
                        .mem
                        .read(ad, &mut b[..n])
                        .map_err(|fault| ExecError::Fault { pc: ctx.pc, fault })?,
                    1 => {
                        let at = Self::lds_range(sh, ad as u32, sz, ctx)?;
                        b[..n].copy_from_slice(&sh.lds[at..at + n]);
                    }
                    _ => {
                        let at = scratch_at(w, lane, ad, sz, ctx)?;
                        b[..n].copy_from_slice(&w.scratch[at..at + n]);
                    }
                }
                write_loaded(w, vdst, lane, &b, sz, signed, d16, hi);
            }
        }
        Ok(Flow::Next)
    }
}

fn scratch_at(w: &Wave, lane: u32, addr: u64, size: u32, ctx: &Ctx) -> Result<usize, ExecError> {
    if addr + u64::from(size) > u64::from(w.scratch_per_lane) {
        return Err(ExecError::ScratchOutOfRange { pc: ctx.pc, addr });
    }
    Ok((lane * w.scratch_per_lane) as usize + addr as usize)
}

#[allow(clippy::too_many_arguments)]
fn write_loaded(
    w: &mut Wave,
    vdst: u32,
    lane: u32,
    b: &[u8; 16],
    sz: u32,
    signed: bool,
    d16: bool,
    hi: bool,
) {
    if sz >= 4 {
        for j in 0..sz / 4 {
            let o = 4 * j as usize;
            w.vset(
                vdst + j,
                lane,
                u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]),
            );
        }
        return;
    }
    let raw = if sz == 1 {
        u32::from(b[0])
    } else {
        u32::from(u16::from_le_bytes([b[0], b[1]]))
    };
    let v = if signed {
        if sz == 1 {
            raw as u8 as i8 as i32 as u32
        } else {
            raw as u16 as i16 as i32 as u32
        }
    } else {
        raw
    };
    if d16 || hi {
        let old = w.vget(vdst, lane);
        let v = v & 0xffff;
        w.vset(
            vdst,
            lane,
            if hi {
                (old & 0xffff) | v << 16
            } else {
                (old & 0xffff_0000) | v
            },
        );
    } else {
        w.vset(vdst, lane, v);
    }
}

/// `SQ_BUF_RSRC_WORD3.ADD_TID_ENABLE` (bit 23, `gc_9_4_3_sh_mask.h`; the
/// kernel crate's `srd9` checks the same shift): set in the private
/// segment buffer descriptor ROCR and the launch give a GFX9 wave, whose
/// swizzled scratch is what MUBUF reaches through it.
const RSRC3_ADD_TID_ENABLE: u32 = 1 << 23;

impl<M: Memory> Interp<'_, M> {
    /// GFX9 (gfx90a) MUBUF: the scratch accesses clang-19 emits before
    /// gfx940 (`buffer_load/store_* ... offen` through the private segment
    /// buffer), and the cache write-back/invalidate operations (no caches
    /// are modelled). Fields: offset 11:0, offen 12, idxen 13, lds 16;
    /// vaddr 39:32, vdata 47:40, srsrc 52:48, acc 55, soffset 63:56.
    ///
    /// Only a descriptor with ADD_TID_ENABLE (a swizzled private segment)
    /// is served: with ELEMENT_SIZE 4 and INDEX_STRIDE 64 the hardware puts
    /// byte `o` of lane `l` at `base + soffset + (o / 4) * 256 + l * 4 +
    /// o % 4`, so a lane's private offset is `(base + soffset) / 64 +
    /// offset + vaddr` (LLVM's MUBUF stack pointer is wave-scaled for this
    /// reason, SIFrameLowering). **Model convention**: the wave's slice
    /// starts at private offset 0, as the flat `scratch_*` path assumes.
    /// Anything else (a plain buffer, idxen, lds, AGPR data, atomics,
    /// formats, a wave offset that is not a multiple of 256) stops the
    /// wave with `ExecError::Unimplemented`.
    pub(super) fn mubuf9(
        &mut self,
        w: &mut Wave,
        inst: &Inst,
        ctx: &Ctx,
    ) -> Result<Flow, ExecError> {
        let name = inst.info.name;
        if matches!(
            name,
            "buffer_wbinvl1" | "buffer_wbinvl1_vol" | "buffer_wbl2" | "buffer_invl2" | "buffer_inv"
        ) {
            return Ok(Flow::Next);
        }
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let offset = u64::from(w0 & 0xfff);
        let offen = w0 >> 12 & 1 == 1;
        let idxen = w0 >> 13 & 1 == 1;
        let lds = w0 >> 16 & 1 == 1;
        let vaddr = w1 & 0xff;
        let vdata = (w1 >> 8) & 0xff;
        let srsrc = ((w1 >> 16) & 0x1f) as usize * 4;
        let acc = w1 >> 23 & 1 == 1;
        let soffset = w1 >> 24;
        let Some(op) = name.strip_prefix("buffer_") else {
            unimpl!(self, ctx, inst)
        };
        // the gfx11 memory suffixes `access` reads
        let (store, ty) = if let Some(t) = op.strip_prefix("load_") {
            (false, t)
        } else if let Some(t) = op.strip_prefix("store_") {
            (true, t)
        } else {
            unimpl!(self, ctx, inst)
        };
        let ty = match ty {
            "dword" => "_b32",
            "dwordx2" => "_b64",
            "dwordx3" => "_b96",
            "dwordx4" => "_b128",
            "ubyte" => "_u8",
            "sbyte" => "_i8",
            "ushort" => "_u16",
            "sshort" => "_i16",
            "byte" => "_b8",
            "short" => "_b16",
            _ => unimpl!(self, ctx, inst),
        };
        let Some((sz, signed, _, _)) = access(ty) else {
            unimpl!(self, ctx, inst)
        };
        let rsrc = match w.s.get(srsrc..srsrc + 4) {
            Some(r) => [r[0], r[1], r[2], r[3]],
            None => unimpl!(self, ctx, inst),
        };
        if idxen || lds || acc || rsrc[3] & RSRC3_ADD_TID_ENABLE == 0 {
            unimpl!(self, ctx, inst)
        }
        let base = u64::from(rsrc[0]) | u64::from(rsrc[1] & 0xffff) << 32;
        let wave_off = base.wrapping_add(u64::from(self.sread(w, soffset, None, K::F32)));
        if wave_off % 256 != 0 {
            unimpl!(self, ctx, inst)
        }
        let lane_base = wave_off / 64 + offset;
        self.check_vgpr(w, vdata, sz.div_ceil(4), ctx)?;
        if offen {
            self.check_vgpr(w, vaddr, 1, ctx)?;
        }
        let exec = w.exec();
        w.counters.issued[if store { 1 } else { 0 }] += 1;
        let n = sz as usize;
        for lane in 0..w.wave_size {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let ad = if offen {
                (lane_base + u64::from(w.vget(vaddr, lane))) & 0xffff_ffff
            } else {
                lane_base & 0xffff_ffff
            };
            let at = scratch_at(w, lane, ad, sz, ctx)?;
            let mut b = [0u8; 16];
            if store {
                for j in 0..sz.div_ceil(4) {
                    let v = w.vget(vdata + j, lane);
                    b[4 * j as usize..4 * j as usize + 4].copy_from_slice(&v.to_le_bytes());
                }
                w.scratch[at..at + n].copy_from_slice(&b[..n]);
            } else {
                b[..n].copy_from_slice(&w.scratch[at..at + n]);
                write_loaded(w, vdata, lane, &b, sz, signed, false, false);
            }
        }
        Ok(Flow::Next)
    }
}
