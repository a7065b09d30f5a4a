//! Vector ALU semantics (VOP1/VOP2/VOPC/VOP3/VOP3P).
//!
//! Transcendentals (`v_exp_f32`, `v_log_f32`, `v_rcp_f32`, `v_rsq_f32`,
//! `v_sqrt_f32`, `v_sin_f32`, `v_cos_f32` and their f16/f64 forms) are
//! computed in f64 with `libm` and rounded once to the result type: the model
//! is at least as precise as the ISA's stated 1 ULP, so results can differ
//! from silicon in the last bit. `v_sin_f32`/`v_cos_f32` take their argument
//! in revolutions (sin(2πx)), as the ISA defines them.

use super::*;

type F3 = fn(u32, u32, u32) -> u32;
type F3w = fn(u64, u64, u64) -> u64;

fn fl(x: u32) -> f32 {
    f32::from_bits(x)
}
fn fb(x: f32) -> u32 {
    x.to_bits()
}
fn dl(x: u64) -> f64 {
    f64::from_bits(x)
}

/// A denormal f32 flushed to zero of the same sign.
fn ftz(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// gfx90a's unfused multiply-add (`v_mad_f32`, `v_mac_f32`, `v_madmk_f32`,
/// `v_madak_f32`): the product is rounded to f32 before the add (LLVM
/// selects them for ISD::FMAD, "the same result as the separately rounded
/// operations", ISDOpcodes.h), and they do not support denormals: LLVM
/// forms FMAD only when f32 denormals are flushed (SIISelLowering.cpp,
/// `isFMADLegal` / `hasMadMacF32Insts`), so inputs, product and result
/// are flushed here. `legacy` is `v_mad_legacy_f32`: DX9 rules, a zero
/// factor gives a zero product whatever the other (MI200 ISA reference,
/// V_MAD_LEGACY_F32).
fn mad_f32(a: u32, b: u32, c: u32, legacy: bool) -> u32 {
    let (a, b, c) = (ftz(fl(a)), ftz(fl(b)), ftz(fl(c)));
    let p = if legacy && (a == 0.0 || b == 0.0) {
        0.0
    } else {
        ftz(a * b)
    };
    fb(ftz(p + c))
}
fn db(x: f64) -> u64 {
    x.to_bits()
}
fn hl(x: u32) -> f32 {
    f16_to_f32(x & 0xffff)
}
fn hb(x: f32) -> u32 {
    f32_to_f16(x)
}

/// IEEE-mode min/max: a NaN operand yields the other operand.
fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        // -0 < +0
        if a.is_sign_negative() { a } else { b }
    } else {
        a.min(b)
    }
}
fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_positive() { a } else { b }
    } else {
        a.max(b)
    }
}
fn dmin(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else {
        a.min(b)
    }
}
fn dmax(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else {
        a.max(b)
    }
}

fn med3(a: f32, b: f32, c: f32) -> f32 {
    fmax(fmin(a, b), fmin(fmax(a, b), c))
}

/// V_BFE_U32 / V_BFE_I32 as LLVM folds them (`constantFoldBFE()` in
/// AMDGPUISelLowering.cpp): a field that fits below bit 32 is shifted up
/// to the top and back down (arithmetically when signed); one that
/// reaches past bit 31 is the source shifted down by the offset.
fn bfe(a: u32, off: u32, w: u32, signed: bool) -> u32 {
    let off = off & 31;
    let w = w & 31;
    if w == 0 {
        return 0;
    }
    match (off + w < 32, signed) {
        (true, true) => (((a << (32 - off - w)) as i32) >> (32 - w)) as u32,
        (true, false) => (a << (32 - off - w)) >> (32 - w),
        (false, true) => ((a as i32) >> off) as u32,
        (false, false) => a >> off,
    }
}

fn frexp_exp(x: f32) -> u32 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let (_, e) = libm::frexpf(x);
    e as u32
}

/// 32-bit lane operations: (constant class, float operands?, function).
fn op32(base: &str) -> Option<(K, bool, F3)> {
    use K::*;
    let f: (K, bool, F3) = match base {
        // f32 arithmetic
        "v_add_f32" => (F32, true, |a, b, _| fb(fl(a) + fl(b))),
        "v_sub_f32" => (F32, true, |a, b, _| fb(fl(a) - fl(b))),
        "v_subrev_f32" => (F32, true, |a, b, _| fb(fl(b) - fl(a))),
        "v_mul_f32" => (F32, true, |a, b, _| fb(fl(a) * fl(b))),
        "v_mul_legacy_f32" | "v_mul_dx9_zero_f32" => (F32, true, |a, b, _| {
            if fl(a) == 0.0 || fl(b) == 0.0 {
                0
            } else {
                fb(fl(a) * fl(b))
            }
        }),
        "v_fma_f32" | "v_fmac_f32" => (F32, true, |a, b, c| fb(libm::fmaf(fl(a), fl(b), fl(c)))),
        "v_fmamk_f32" => (F32, true, |a, k, b| fb(libm::fmaf(fl(a), fl(k), fl(b)))),
        "v_fmaak_f32" => (F32, true, |a, b, k| fb(libm::fmaf(fl(a), fl(b), fl(k)))),
        // gfx90a (GFX9 before gfx940): unfused, denormals flushed
        "v_mad_f32" | "v_mac_f32" => (F32, true, |a, b, c| mad_f32(a, b, c, false)),
        "v_madmk_f32" => (F32, true, |a, k, b| mad_f32(a, k, b, false)),
        "v_madak_f32" => (F32, true, |a, b, k| mad_f32(a, b, k, false)),
        "v_mad_legacy_f32" => (F32, true, |a, b, c| mad_f32(a, b, c, true)),
        "v_min_f32" | "v_min_num_f32" => (F32, true, |a, b, _| fb(fmin(fl(a), fl(b)))),
        "v_max_f32" | "v_max_num_f32" => (F32, true, |a, b, _| fb(fmax(fl(a), fl(b)))),
        "v_min3_f32" | "v_min3_num_f32" => {
            (F32, true, |a, b, c| fb(fmin(fmin(fl(a), fl(b)), fl(c))))
        }
        "v_max3_f32" | "v_max3_num_f32" => {
            (F32, true, |a, b, c| fb(fmax(fmax(fl(a), fl(b)), fl(c))))
        }
        "v_med3_f32" | "v_med3_num_f32" => (F32, true, |a, b, c| fb(med3(fl(a), fl(b), fl(c)))),
        "v_maxmin_f32" | "v_maxmin_num_f32" => {
            (F32, true, |a, b, c| fb(fmin(fmax(fl(a), fl(b)), fl(c))))
        }
        "v_minmax_f32" | "v_minmax_num_f32" => {
            (F32, true, |a, b, c| fb(fmax(fmin(fl(a), fl(b)), fl(c))))
        }
        "v_ldexp_f32" => (F32, true, |a, b, _| fb(libm::ldexpf(fl(a), b as i32))),
        "v_div_fixup_f32" => (F32, true, |a, b, c| {
            // Special cases of D = N / D given quotient estimate a, divisor b,
            // numerator c (ISA: V_DIV_FIXUP_F32).
            let (q, d, n) = (fl(a), fl(b), fl(c));
            if d.is_nan() || n.is_nan() {
                return fb(if n.is_nan() { n } else { d });
            }
            if d == 0.0 && n == 0.0 {
                return 0x7fc0_0000;
            }
            if d.is_infinite() && n.is_infinite() {
                return 0x7fc0_0000;
            }
            let sign = (b ^ c) & 0x8000_0000;
            if d == 0.0 || n.is_infinite() {
                return sign | 0x7f80_0000;
            }
            if d.is_infinite() || n == 0.0 {
                return sign;
            }
            fb(q)
        }),
        "v_cubeid_f32" | "v_cubesc_f32" | "v_cubetc_f32" | "v_cubema_f32" => return None,
        // f32 unary
        "v_mov_b32" => (F32, false, |a, _, _| a),
        "v_not_b32" => (F32, false, |a, _, _| !a),
        "v_bfrev_b32" => (F32, false, |a, _, _| a.reverse_bits()),
        "v_clz_i32_u32" => (F32, false, |a, _, _| {
            if a == 0 { u32::MAX } else { a.leading_zeros() }
        }),
        "v_ctz_i32_b32" => (F32, false, |a, _, _| {
            if a == 0 { u32::MAX } else { a.trailing_zeros() }
        }),
        "v_cls_i32" => (F32, false, |a, _, _| {
            let x = if (a as i32) < 0 { !a } else { a };
            if x == 0 || x == u32::MAX {
                u32::MAX
            } else {
                x.leading_zeros() - 1
            }
        }),
        "v_fract_f32" => (F32, true, |a, _, _| {
            let x = fl(a);
            if x.is_infinite() {
                0x7fc0_0000
            } else {
                fb(x - libm::floorf(x))
            }
        }),
        "v_trunc_f32" => (F32, true, |a, _, _| fb(libm::truncf(fl(a)))),
        "v_ceil_f32" => (F32, true, |a, _, _| fb(libm::ceilf(fl(a)))),
        "v_floor_f32" => (F32, true, |a, _, _| fb(libm::floorf(fl(a)))),
        "v_rndne_f32" => (F32, true, |a, _, _| fb(libm::rintf(fl(a)))),
        "v_exp_f32" => (F32, true, |a, _, _| fb(libm::exp2(f64::from(fl(a))) as f32)),
        "v_log_f32" => (F32, true, |a, _, _| fb(libm::log2(f64::from(fl(a))) as f32)),
        "v_rcp_f32" | "v_rcp_iflag_f32" => {
            (F32, true, |a, _, _| fb((1.0 / f64::from(fl(a))) as f32))
        }
        "v_rsq_f32" => (F32, true, |a, _, _| {
            fb((1.0 / libm::sqrt(f64::from(fl(a)))) as f32)
        }),
        "v_sqrt_f32" => (F32, true, |a, _, _| fb(libm::sqrt(f64::from(fl(a))) as f32)),
        "v_sin_f32" => (F32, true, |a, _, _| {
            fb(libm::sin(f64::from(fl(a)) * core::f64::consts::TAU) as f32)
        }),
        "v_cos_f32" => (F32, true, |a, _, _| {
            fb(libm::cos(f64::from(fl(a)) * core::f64::consts::TAU) as f32)
        }),
        "v_frexp_mant_f32" => (F32, true, |a, _, _| {
            let x = fl(a);
            if x == 0.0 || !x.is_finite() {
                a
            } else {
                fb(libm::frexpf(x).0)
            }
        }),
        "v_frexp_exp_i32_f32" => (F32, true, |a, _, _| frexp_exp(fl(a))),
        // conversions
        "v_cvt_f32_i32" => (F32, false, |a, _, _| fb(a as i32 as f32)),
        "v_cvt_f32_u32" => (F32, false, |a, _, _| fb(a as f32)),
        "v_cvt_i32_f32" => (F32, true, |a, _, _| f32_to_i32(fl(a)) as u32),
        "v_cvt_u32_f32" => (F32, true, |a, _, _| f32_to_u32(fl(a))),
        "v_cvt_rpi_i32_f32" | "v_cvt_nearest_i32_f32" => (F32, true, |a, _, _| {
            f32_to_i32(libm::floorf(fl(a) + 0.5)) as u32
        }),
        "v_cvt_flr_i32_f32" | "v_cvt_floor_i32_f32" => {
            (F32, true, |a, _, _| f32_to_i32(libm::floorf(fl(a))) as u32)
        }
        "v_cvt_f16_f32" => (F32, true, |a, _, _| hb(fl(a))),
        "v_cvt_f32_f16" => (F16, true, |a, _, _| fb(hl(a))),
        "v_cvt_f32_ubyte0" => (F32, false, |a, _, _| fb((a & 0xff) as f32)),
        "v_cvt_f32_ubyte1" => (F32, false, |a, _, _| fb(((a >> 8) & 0xff) as f32)),
        "v_cvt_f32_ubyte2" => (F32, false, |a, _, _| fb(((a >> 16) & 0xff) as f32)),
        "v_cvt_f32_ubyte3" => (F32, false, |a, _, _| fb((a >> 24) as f32)),
        "v_cvt_pk_rtz_f16_f32" => (F32, true, |a, b, _| rtz_f16(fl(a)) | rtz_f16(fl(b)) << 16),
        "v_cvt_pk_u16_u32" => (F32, false, |a, b, _| {
            (a.min(0xffff)) | (b.min(0xffff)) << 16
        }),
        "v_cvt_pk_i16_i32" => (F32, false, |a, b, _| {
            let s = |x: u32| ((x as i32).clamp(-32768, 32767) as u32) & 0xffff;
            s(a) | s(b) << 16
        }),
        "v_cvt_u16_f16" => (F16, true, |a, _, _| {
            let x = hl(a);
            if x.is_nan() {
                0
            } else {
                x.clamp(0.0, 65535.0) as u32
            }
        }),
        "v_cvt_i16_f16" => (F16, true, |a, _, _| {
            let x = hl(a);
            if x.is_nan() {
                0
            } else {
                (x.clamp(-32768.0, 32767.0) as i32 as u32) & 0xffff
            }
        }),
        "v_cvt_f16_u16" => (F16, false, |a, _, _| hb((a & 0xffff) as f32)),
        "v_cvt_f16_i16" => (F16, false, |a, _, _| hb(f32::from(a as u16 as i16))),
        "v_cvt_i32_i16" => (F16, false, |a, _, _| a as u16 as i16 as i32 as u32),
        "v_cvt_u32_u16" => (F16, false, |a, _, _| a & 0xffff),
        // f16
        "v_add_f16" => (F16, true, |a, b, _| hb(hl(a) + hl(b))),
        "v_sub_f16" => (F16, true, |a, b, _| hb(hl(a) - hl(b))),
        "v_subrev_f16" => (F16, true, |a, b, _| hb(hl(b) - hl(a))),
        "v_mul_f16" => (F16, true, |a, b, _| hb(hl(a) * hl(b))),
        "v_fma_f16" | "v_fmac_f16" => (F16, true, |a, b, c| {
            hb(libm::fma(f64::from(hl(a)), f64::from(hl(b)), f64::from(hl(c))) as f32)
        }),
        "v_fmamk_f16" => (F16, true, |a, k, b| {
            hb(libm::fma(f64::from(hl(a)), f64::from(hl(k)), f64::from(hl(b))) as f32)
        }),
        "v_fmaak_f16" => (F16, true, |a, b, k| {
            hb(libm::fma(f64::from(hl(a)), f64::from(hl(b)), f64::from(hl(k))) as f32)
        }),
        "v_max_f16" | "v_max_num_f16" => (F16, true, |a, b, _| hb(fmax(hl(a), hl(b)))),
        "v_min_f16" | "v_min_num_f16" => (F16, true, |a, b, _| hb(fmin(hl(a), hl(b)))),
        "v_ldexp_f16" => (F16, true, |a, b, _| {
            hb(libm::ldexpf(hl(a), b as u16 as i16 as i32))
        }),
        "v_sqrt_f16" => (F16, true, |a, _, _| hb(libm::sqrtf(hl(a)))),
        "v_rcp_f16" => (F16, true, |a, _, _| hb(1.0 / hl(a))),
        "v_rsq_f16" => (F16, true, |a, _, _| hb(1.0 / libm::sqrtf(hl(a)))),
        "v_exp_f16" => (F16, true, |a, _, _| hb(libm::exp2f(hl(a)))),
        "v_log_f16" => (F16, true, |a, _, _| hb(libm::log2f(hl(a)))),
        "v_floor_f16" => (F16, true, |a, _, _| hb(libm::floorf(hl(a)))),
        "v_ceil_f16" => (F16, true, |a, _, _| hb(libm::ceilf(hl(a)))),
        "v_trunc_f16" => (F16, true, |a, _, _| hb(libm::truncf(hl(a)))),
        "v_rndne_f16" => (F16, true, |a, _, _| hb(libm::rintf(hl(a)))),
        // integer
        "v_add_nc_u32" | "v_add_u32" => (F32, false, |a, b, _| a.wrapping_add(b)),
        "v_sub_nc_u32" => (F32, false, |a, b, _| a.wrapping_sub(b)),
        "v_subrev_nc_u32" => (F32, false, |a, b, _| b.wrapping_sub(a)),
        "v_add_nc_i32" => (F32, false, |a, b, _| a.wrapping_add(b)),
        "v_sub_nc_i32" => (F32, false, |a, b, _| a.wrapping_sub(b)),
        "v_mul_lo_u32" => (F32, false, |a, b, _| a.wrapping_mul(b)),
        "v_mul_hi_u32" => (F32, false, |a, b, _| {
            ((u64::from(a) * u64::from(b)) >> 32) as u32
        }),
        "v_mul_hi_i32" => (F32, false, |a, b, _| {
            ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
        }),
        "v_mul_u32_u24" => (F32, false, |a, b, _| {
            (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff)
        }),
        "v_mul_hi_u32_u24" => (F32, false, |a, b, _| {
            ((u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff)) >> 32) as u32
        }),
        "v_mul_i32_i24" => (F32, false, |a, b, _| {
            (sext24(a).wrapping_mul(sext24(b))) as u32
        }),
        "v_mul_hi_i32_i24" => (F32, false, |a, b, _| {
            ((i64::from(sext24(a)) * i64::from(sext24(b))) >> 32) as u32
        }),
        "v_mad_u16" => (F16, false, |a, b, c| {
            a.wrapping_mul(b).wrapping_add(c) & 0xffff
        }),
        "v_mad_i16" => (F16, false, |a, b, c| {
            u32::from(
                (a as u16 as i16)
                    .wrapping_mul(b as u16 as i16)
                    .wrapping_add(c as u16 as i16) as u16,
            )
        }),
        // D.u32 = S0.u16 * S1.u16 + S2.u32, kept to 32 bits (the product
        // fits; the sum wraps, as every 32-bit integer VALU add does).
        "v_mad_u32_u16" => (F16, false, |a, b, c| {
            ((a & 0xffff) * (b & 0xffff)).wrapping_add(c)
        }),
        "v_mad_i32_i16" => (F16, false, |a, b, c| {
            (i32::from(a as u16 as i16) * i32::from(b as u16 as i16)).wrapping_add(c as i32) as u32
        }),
        "v_mad_u32_u24" => (F32, false, |a, b, c| {
            (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff).wrapping_add(c)
        }),
        "v_mad_i32_i24" => (F32, false, |a, b, c| {
            sext24(a).wrapping_mul(sext24(b)).wrapping_add(c as i32) as u32
        }),
        "v_min_i32" => (F32, false, |a, b, _| (a as i32).min(b as i32) as u32),
        "v_max_i32" => (F32, false, |a, b, _| (a as i32).max(b as i32) as u32),
        "v_min_u32" => (F32, false, |a, b, _| a.min(b)),
        "v_max_u32" => (F32, false, |a, b, _| a.max(b)),
        "v_min3_i32" => (F32, false, |a, b, c| {
            (a as i32).min(b as i32).min(c as i32) as u32
        }),
        "v_max3_i32" => (F32, false, |a, b, c| {
            (a as i32).max(b as i32).max(c as i32) as u32
        }),
        "v_min3_u32" => (F32, false, |a, b, c| a.min(b).min(c)),
        "v_max3_u32" => (F32, false, |a, b, c| a.max(b).max(c)),
        "v_med3_i32" => (F32, false, |a, b, c| {
            let (a, b, c) = (a as i32, b as i32, c as i32);
            a.min(b).max(a.max(b).min(c)) as u32
        }),
        "v_med3_u32" => (F32, false, |a, b, c| a.min(b).max(a.max(b).min(c))),
        "v_maxmin_u32" => (F32, false, |a, b, c| a.max(b).min(c)),
        "v_minmax_u32" => (F32, false, |a, b, c| a.min(b).max(c)),
        "v_maxmin_i32" => (F32, false, |a, b, c| {
            (a as i32).max(b as i32).min(c as i32) as u32
        }),
        "v_minmax_i32" => (F32, false, |a, b, c| {
            (a as i32).min(b as i32).max(c as i32) as u32
        }),
        "v_lshlrev_b32" => (F32, false, |a, b, _| b << (a & 31)),
        "v_lshrrev_b32" => (F32, false, |a, b, _| b >> (a & 31)),
        "v_ashrrev_i32" => (F32, false, |a, b, _| ((b as i32) >> (a & 31)) as u32),
        "v_and_b32" => (F32, false, |a, b, _| a & b),
        "v_or_b32" => (F32, false, |a, b, _| a | b),
        "v_xor_b32" => (F32, false, |a, b, _| a ^ b),
        "v_xnor_b32" => (F32, false, |a, b, _| !(a ^ b)),
        "v_and_or_b32" => (F32, false, |a, b, c| (a & b) | c),
        "v_or3_b32" => (F32, false, |a, b, c| a | b | c),
        "v_xor3_b32" => (F32, false, |a, b, c| a ^ b ^ c),
        "v_lshl_or_b32" => (F32, false, |a, b, c| (a << (b & 31)) | c),
        "v_lshl_add_u32" => (F32, false, |a, b, c| (a << (b & 31)).wrapping_add(c)),
        "v_add_lshl_u32" => (F32, false, |a, b, c| a.wrapping_add(b) << (c & 31)),
        "v_add3_u32" => (F32, false, |a, b, c| a.wrapping_add(b).wrapping_add(c)),
        "v_xad_u32" => (F32, false, |a, b, c| (a ^ b).wrapping_add(c)),
        "v_bfe_u32" => (F32, false, |a, b, c| bfe(a, b, c, false)),
        "v_bfe_i32" => (F32, false, |a, b, c| bfe(a, b, c, true)),
        "v_bfi_b32" => (F32, false, |a, b, c| (a & b) | (!a & c)),
        "v_bfm_b32" => (F32, false, |a, b, _| {
            (((1u64 << (a & 31)) - 1) as u32) << (b & 31)
        }),
        "v_alignbit_b32" => (F32, false, |a, b, c| {
            (((u64::from(a) << 32) | u64::from(b)) >> (c & 31)) as u32
        }),
        "v_alignbyte_b32" => (F32, false, |a, b, c| {
            (((u64::from(a) << 32) | u64::from(b)) >> ((c & 3) * 8)) as u32
        }),
        "v_perm_b32" => (F32, false, perm),
        "v_bcnt_u32_b32" => (F32, false, |a, b, _| a.count_ones().wrapping_add(b)),
        "v_sad_u32" => (F32, false, |a, b, c| a.abs_diff(b).wrapping_add(c)),
        "v_lerp_u8" => (F32, false, |a, b, c| {
            let mut r = 0;
            for i in 0..4 {
                let x = (a >> (8 * i)) & 0xff;
                let y = (b >> (8 * i)) & 0xff;
                let z = (c >> (8 * i)) & 1;
                r |= ((x + y + z) >> 1) << (8 * i);
            }
            r
        }),
        "v_pack_b32_f16" => (F16, true, |a, b, _| (a & 0xffff) | (b & 0xffff) << 16),
        // 16-bit integer (low halves)
        "v_add_nc_u16" => (F16, false, |a, b, _| a.wrapping_add(b) & 0xffff),
        "v_sub_nc_u16" => (F16, false, |a, b, _| a.wrapping_sub(b) & 0xffff),
        "v_mul_lo_u16" => (F16, false, |a, b, _| a.wrapping_mul(b) & 0xffff),
        "v_lshlrev_b16" => (F16, false, |a, b, _| (b << (a & 15)) & 0xffff),
        "v_lshrrev_b16" => (F16, false, |a, b, _| (b & 0xffff) >> (a & 15)),
        "v_ashrrev_i16" => (F16, false, |a, b, _| {
            ((b as u16 as i16 >> (a & 15)) as u16).into()
        }),
        "v_max_u16" => (F16, false, |a, b, _| (a & 0xffff).max(b & 0xffff)),
        "v_min_u16" => (F16, false, |a, b, _| (a & 0xffff).min(b & 0xffff)),
        "v_max_i16" => (F16, false, |a, b, _| {
            u32::from((a as u16 as i16).max(b as u16 as i16) as u16)
        }),
        "v_min_i16" => (F16, false, |a, b, _| {
            u32::from((a as u16 as i16).min(b as u16 as i16) as u16)
        }),
        _ => return None,
    };
    Some(f)
}

fn sext24(a: u32) -> i32 {
    ((a << 8) as i32) >> 8
}

fn rtz_f16(x: f32) -> u32 {
    // Round toward zero: the nearest conversion, stepped back if it rounded
    // away from zero.
    let h = half::f16::from_f32(x);
    let back = h.to_f32();
    if x.is_finite() && back.abs() > x.abs() {
        let b = h.to_bits();
        u32::from(b - 1)
    } else {
        u32::from(h.to_bits())
    }
}

fn perm(a: u32, b: u32, sel: u32) -> u32 {
    let bytes = (u64::from(a) << 32) | u64::from(b);
    let mut r = 0u32;
    for i in 0..4 {
        let s = (sel >> (8 * i)) & 0xff;
        let byte = match s {
            0..=7 => ((bytes >> (8 * s)) & 0xff) as u32,
            8..=11 => {
                let src = ((bytes >> (8 * (2 * (s - 8) + 1))) & 0xff) as u32;
                if src & 0x80 != 0 { 0xff } else { 0 }
            }
            12 => 0,
            _ => 0xff,
        };
        r |= byte << (8 * i);
    }
    r
}

/// 64-bit lane operations.
fn op64(base: &str) -> Option<(bool, F3w)> {
    let f: (bool, F3w) = match base {
        "v_add_f64" => (true, |a, b, _| db(dl(a) + dl(b))),
        "v_mul_f64" => (true, |a, b, _| db(dl(a) * dl(b))),
        "v_fma_f64" | "v_fmac_f64" | "v_div_fmas_f64" => {
            (true, |a, b, c| db(libm::fma(dl(a), dl(b), dl(c))))
        }
        "v_div_fixup_f64" => (true, |a, b, c| {
            // ISA V_DIV_FIXUP_F64: quotient estimate a, divisor b, numerator c.
            let (d, n) = (dl(b), dl(c));
            if d.is_nan() || n.is_nan() {
                return db(if n.is_nan() { n } else { d });
            }
            if (d == 0.0 && n == 0.0) || (d.is_infinite() && n.is_infinite()) {
                return 0x7ff8_0000_0000_0000;
            }
            let sign = (b ^ c) & (1 << 63);
            if d == 0.0 || n.is_infinite() {
                return sign | 0x7ff0_0000_0000_0000;
            }
            if d.is_infinite() || n == 0.0 {
                return sign;
            }
            a
        }),
        "v_min_f64" | "v_min_num_f64" => (true, |a, b, _| db(dmin(dl(a), dl(b)))),
        "v_max_f64" | "v_max_num_f64" => (true, |a, b, _| db(dmax(dl(a), dl(b)))),
        "v_trunc_f64" => (true, |a, _, _| db(libm::trunc(dl(a)))),
        "v_ceil_f64" => (true, |a, _, _| db(libm::ceil(dl(a)))),
        "v_floor_f64" => (true, |a, _, _| db(libm::floor(dl(a)))),
        "v_rndne_f64" => (true, |a, _, _| db(libm::rint(dl(a)))),
        "v_fract_f64" => (true, |a, _, _| db(dl(a) - libm::floor(dl(a)))),
        "v_sqrt_f64" => (true, |a, _, _| db(libm::sqrt(dl(a)))),
        "v_rcp_f64" => (true, |a, _, _| db(1.0 / dl(a))),
        "v_rsq_f64" => (true, |a, _, _| db(1.0 / libm::sqrt(dl(a)))),
        "v_mov_b64" => (false, |a, _, _| a),
        "v_lshlrev_b64" => (false, |a, b, _| b << (a & 63)),
        "v_lshrrev_b64" => (false, |a, b, _| b >> (a & 63)),
        "v_ashrrev_i64" => (false, |a, b, _| ((b as i64) >> (a & 63)) as u64),
        // gfx940+ (CDNA3 ISA V_LSHL_ADD_U64): (S0 << S1[2:0]) + S2
        "v_lshl_add_u64" => (false, |a, b, c| (a << (b & 7)).wrapping_add(c)),
        _ => return None,
    };
    Some(f)
}

/// Width (in dwords) of sources 0..2 and the destination of a 64-bit-capable
/// operation: shifts take a 32-bit amount.
fn widths64(base: &str) -> [bool; 3] {
    match base {
        "v_lshlrev_b64" | "v_lshrrev_b64" | "v_ashrrev_i64" => [false, true, false],
        "v_ldexp_f64" => [true, false, false],
        "v_lshl_add_u64" => [true, false, true],
        _ => [true, true, true],
    }
}

impl<M: Memory> Interp<'_, M> {
    pub(super) fn valu(&mut self, w: &mut Wave, inst: &Inst, ctx: &Ctx) -> Result<Flow, ExecError> {
        let name = inst.sem();
        let base = name
            .strip_suffix("_e32")
            .or_else(|| name.strip_suffix("_e64"))
            .unwrap_or(name);
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let lit = inst.literal;
        let enc = inst.info.enc;
        // fields
        let (vdst, s, sdst, abs, neg, clamp, omod) = match enc {
            Enc::Vop2 => (
                (w0 >> 17) & 0xff,
                [w0 & 0x1ff, 256 + ((w0 >> 9) & 0xff), 0],
                106,
                0,
                0,
                false,
                0,
            ),
            Enc::Vop1 => ((w0 >> 17) & 0xff, [w0 & 0x1ff, 0, 0], 106, 0, 0, false, 0),
            Enc::Vopc => (
                0,
                [w0 & 0x1ff, 256 + ((w0 >> 9) & 0xff), 0],
                106,
                0,
                0,
                false,
                0,
            ),
            _ => (
                w0 & 0xff,
                [w1 & 0x1ff, (w1 >> 9) & 0x1ff, (w1 >> 18) & 0x1ff],
                (w0 >> 8) & 0x7f,
                (w0 >> 8) & 7,
                (w1 >> 29) & 7,
                (w0 >> 15) & 1 == 1,
                (w1 >> 27) & 3,
            ),
        };
        let exec = w.exec();
        let ws = w.wave_size;
        // VOP3 forms whose bits 8..14 are a scalar destination have no abs.
        let has_sdst = enc == Enc::Vop3
            && inst
                .info
                .opnds
                .iter()
                .any(|o| o.fld == crate::table::Fld::Sdst3);
        let abs = if has_sdst { 0 } else { abs };

        if enc == Enc::Vop3p {
            return self.vop3p(w, inst, ctx, base, vdst, s);
        }

        // compares
        if let Some(rest) = base
            .strip_prefix("v_cmp_")
            .map(|r| (false, r))
            .or_else(|| base.strip_prefix("v_cmpx_").map(|r| (true, r)))
        {
            let (x, rest) = rest;
            let (op, ty) = rest.split_once('_').unwrap_or(("", ""));
            let k = match ty {
                "f16" | "i16" | "u16" => K::F16,
                "f64" | "i64" | "u64" => K::F64,
                _ => K::F32,
            };
            let wide = k == K::F64;
            let a = self.resolve(w, s[0], lit, k, wide);
            let b = self.resolve(
                w,
                s[1],
                lit,
                if op == "class" { K::F32 } else { k },
                wide && op != "class",
            );
            let mut m = 0u64;
            for lane in 0..ws {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let r = if op == "class" {
                    let cls = self.get(w, b, lane);
                    let v = match ty {
                        "f64" => dl(self.get64(w, a, lane)),
                        "f16" => f64::from(hl(self.get(w, a, lane))),
                        _ => f64::from(fl(self.get(w, a, lane))),
                    };
                    let v = if abs & 1 != 0 { v.abs() } else { v };
                    let v = if neg & 1 != 0 { -v } else { v };
                    class_of(v, cls, ty)
                } else {
                    match ty {
                        "f32" | "f16" | "f64" => {
                            let get = |src: Src, i: u32| -> f64 {
                                let v = match ty {
                                    "f64" => dl(self.get64(w, src, lane)),
                                    "f16" => f64::from(hl(self.get(w, src, lane))),
                                    _ => f64::from(fl(self.get(w, src, lane))),
                                };
                                let v = if abs >> i & 1 != 0 { v.abs() } else { v };
                                if neg >> i & 1 != 0 { -v } else { v }
                            };
                            cmp_float(op, get(a, 0), get(b, 1))
                        }
                        "i32" => cmp_int(
                            op,
                            i64::from(self.get(w, a, lane) as i32),
                            i64::from(self.get(w, b, lane) as i32),
                        ),
                        "u32" => cmp_int(
                            op,
                            i64::from(self.get(w, a, lane)),
                            i64::from(self.get(w, b, lane)),
                        ),
                        "i16" => cmp_int(
                            op,
                            i64::from(self.get(w, a, lane) as u16 as i16),
                            i64::from(self.get(w, b, lane) as u16 as i16),
                        ),
                        "u16" => cmp_int(
                            op,
                            i64::from(self.get(w, a, lane) & 0xffff),
                            i64::from(self.get(w, b, lane) & 0xffff),
                        ),
                        "i64" => {
                            let (p, q) =
                                (self.get64(w, a, lane) as i64, self.get64(w, b, lane) as i64);
                            cmp_i128(op, i128::from(p), i128::from(q))
                        }
                        "u64" => {
                            let (p, q) = (self.get64(w, a, lane), self.get64(w, b, lane));
                            cmp_i128(op, i128::from(p), i128::from(q))
                        }
                        _ => unimpl!(self, ctx, inst),
                    }
                };
                if r {
                    m |= 1 << lane;
                }
            }
            if x {
                w.set_exec(m);
            } else {
                let d = if enc == Enc::Vop3 { vdst } else { 106 };
                w.set_mask_at(d, m);
            }
            return Ok(Flow::Next);
        }

        match base {
            "v_cndmask_b32" => {
                let a = self.resolve(w, s[0], lit, K::F32, false);
                let b = self.resolve(w, s[1], lit, K::F32, false);
                let mask = if enc == Enc::Vop3 {
                    w.mask_at(s[2])
                } else {
                    w.vcc()
                };
                self.check_vgpr(w, vdst, 1, ctx)?;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let (mut x, mut y) = (self.get(w, a, lane), self.get(w, b, lane));
                    if enc == Enc::Vop3 {
                        if abs & 1 != 0 {
                            x &= 0x7fff_ffff
                        }
                        if neg & 1 != 0 {
                            x ^= 0x8000_0000
                        }
                        if abs & 2 != 0 {
                            y &= 0x7fff_ffff
                        }
                        if neg & 2 != 0 {
                            y ^= 0x8000_0000
                        }
                    }
                    w.vset(vdst, lane, if mask >> lane & 1 != 0 { y } else { x });
                }
                return Ok(Flow::Next);
            }
            "v_add_co_u32" | "v_sub_co_u32" | "v_subrev_co_u32" | "v_add_co_ci_u32"
            | "v_sub_co_ci_u32" | "v_subrev_co_ci_u32" => {
                let a = self.resolve(w, s[0], lit, K::F32, false);
                let b = self.resolve(w, s[1], lit, K::F32, false);
                let cin = if base.ends_with("ci_u32") {
                    if enc == Enc::Vop3 {
                        w.mask_at(s[2])
                    } else {
                        w.vcc()
                    }
                } else {
                    0
                };
                let cdst = if enc == Enc::Vop3 { sdst } else { 106 };
                self.check_vgpr(w, vdst, 1, ctx)?;
                let mut m = 0u64;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let (x, y) = (
                        u64::from(self.get(w, a, lane)),
                        u64::from(self.get(w, b, lane)),
                    );
                    let c = (cin >> lane) & 1;
                    let (r, carry) = match base {
                        "v_add_co_u32" | "v_add_co_ci_u32" => {
                            let r = x + y + c;
                            (r as u32, r >> 32 != 0)
                        }
                        "v_sub_co_u32" | "v_sub_co_ci_u32" => {
                            let r = x.wrapping_sub(y).wrapping_sub(c);
                            (r as u32, y + c > x)
                        }
                        _ => {
                            let r = y.wrapping_sub(x).wrapping_sub(c);
                            (r as u32, x + c > y)
                        }
                    };
                    w.vset(vdst, lane, r);
                    if carry {
                        m |= 1 << lane;
                    }
                }
                let old = w.mask_at(cdst);
                w.set_mask_at(cdst, (old & !exec) | m);
                return Ok(Flow::Next);
            }
            "v_mad_u64_u32" | "v_mad_i64_i32" | "v_mad_co_u64_u32" | "v_mad_co_i64_i32" => {
                let a = self.resolve(w, s[0], lit, K::F32, false);
                let b = self.resolve(w, s[1], lit, K::F32, false);
                let c = self.resolve(w, s[2], lit, K::F64, true);
                let signed = base.contains("i64");
                self.check_vgpr(w, vdst, 2, ctx)?;
                let mut m = 0u64;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let (x, y, z) = (
                        self.get(w, a, lane),
                        self.get(w, b, lane),
                        self.get64(w, c, lane),
                    );
                    let (r, ov) = if signed {
                        let p = i128::from(x as i32) * i128::from(y as i32) + i128::from(z as i64);
                        (
                            p as u64,
                            p > i128::from(i64::MAX) || p < i128::from(i64::MIN),
                        )
                    } else {
                        let p = u128::from(x) * u128::from(y) + u128::from(z);
                        (p as u64, p >> 64 != 0)
                    };
                    w.vset(vdst, lane, r as u32);
                    w.vset(vdst + 1, lane, (r >> 32) as u32);
                    if ov {
                        m |= 1 << lane;
                    }
                }
                let old = w.mask_at(sdst);
                w.set_mask_at(sdst, (old & !exec) | m);
                return Ok(Flow::Next);
            }
            "v_readfirstlane_b32" => {
                let a = self.resolve(w, s[0], lit, K::F32, false);
                let lane = if exec == 0 { 0 } else { exec.trailing_zeros() };
                let v = self.get(w, a, lane);
                w.sset(vdst, v);
                return Ok(Flow::Next);
            }
            "v_readlane_b32" => {
                let a = self.resolve(w, s[0], lit, K::F32, false);
                let lane = self.sread(w, s[1], lit, K::F32) % ws;
                let v = self.get(w, a, lane);
                w.sset(vdst, v);
                return Ok(Flow::Next);
            }
            "v_writelane_b32" => {
                let v = self.sread(w, s[0], lit, K::F32);
                let lane = self.sread(w, s[1], lit, K::F32) % ws;
                w.vset(vdst, lane, v);
                return Ok(Flow::Next);
            }
            "v_mbcnt_lo_u32_b32" | "v_mbcnt_hi_u32_b32" => {
                let a = self.resolve(w, s[0], lit, K::F32, false);
                let b = self.resolve(w, s[1], lit, K::F32, false);
                self.check_vgpr(w, vdst, 1, ctx)?;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let mask = self.get(w, a, lane);
                    let below: u32 = if base.contains("_lo_") {
                        if lane >= 32 {
                            mask.count_ones()
                        } else {
                            (mask & ((1u64 << lane) - 1) as u32).count_ones()
                        }
                    } else if lane <= 32 {
                        0
                    } else {
                        (mask & ((1u64 << (lane - 32)) - 1) as u32).count_ones()
                    };
                    let v = below.wrapping_add(self.get(w, b, lane));
                    w.vset(vdst, lane, v);
                }
                return Ok(Flow::Next);
            }
            "v_nop" => return Ok(Flow::Next),
            "v_div_scale_f32" => {
                // Model: no pre-scaling is ever needed (no denormal/overflow
                // risk checks); returns the selected operand and clears vcc.
                let a = self.resolve(w, s[0], lit, K::F32, false);
                let b = self.resolve(w, s[1], lit, K::F32, false);
                let c = self.resolve(w, s[2], lit, K::F32, false);
                self.check_vgpr(w, vdst, 1, ctx)?;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let (x, y, z) = (
                        self.get(w, a, lane),
                        self.get(w, b, lane),
                        self.get(w, c, lane),
                    );
                    let v = if x == y { x } else { z };
                    let v = if neg & 1 != 0 && x == y {
                        v ^ 0x8000_0000
                    } else {
                        v
                    };
                    let _ = (y, z);
                    w.vset(vdst, lane, v);
                }
                let old = w.mask_at(sdst);
                w.set_mask_at(sdst, old & !exec);
                return Ok(Flow::Next);
            }
            "v_div_scale_f64" => {
                // Model: no pre-scaling (see v_div_scale_f32); D = S0, VCC = 0.
                let a = self.resolve(w, s[0], lit, K::F64, true);
                self.check_vgpr(w, vdst, 2, ctx)?;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let mut v = self.get64(w, a, lane);
                    if neg & 1 != 0 {
                        v ^= 1 << 63;
                    }
                    w.vset(vdst, lane, v as u32);
                    w.vset(vdst + 1, lane, (v >> 32) as u32);
                }
                let old = w.mask_at(sdst);
                w.set_mask_at(sdst, old & !exec);
                return Ok(Flow::Next);
            }
            "v_div_fmas_f32" => {
                let a = self.resolve(w, s[0], lit, K::F32, false);
                let b = self.resolve(w, s[1], lit, K::F32, false);
                let c = self.resolve(w, s[2], lit, K::F32, false);
                self.check_vgpr(w, vdst, 1, ctx)?;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let m = |v: u32, i: u32| {
                        let v = if abs >> i & 1 != 0 {
                            v & 0x7fff_ffff
                        } else {
                            v
                        };
                        if neg >> i & 1 != 0 {
                            v ^ 0x8000_0000
                        } else {
                            v
                        }
                    };
                    let r = libm::fmaf(
                        fl(m(self.get(w, a, lane), 0)),
                        fl(m(self.get(w, b, lane), 1)),
                        fl(m(self.get(w, c, lane), 2)),
                    );
                    w.vset(vdst, lane, fb(r));
                }
                return Ok(Flow::Next);
            }
            _ => {}
        }

        // 64-bit arithmetic
        if let Some((is_float, f)) = op64(base) {
            let wid = widths64(base);
            let srcs = [
                self.resolve(w, s[0], lit, K::F64, wid[0]),
                self.resolve(w, s[1], lit, K::F64, wid[1]),
                // v_fmac_f64 accumulates into its destination
                if base == "v_fmac_f64" {
                    Src::V(vdst)
                } else {
                    self.resolve(w, s[2], lit, K::F64, wid[2])
                },
            ];
            self.check_vgpr(w, vdst, 2, ctx)?;
            for lane in 0..ws {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let mut v = [0u64; 3];
                for i in 0..3 {
                    v[i] = if wid[i] {
                        self.get64(w, srcs[i], lane)
                    } else {
                        u64::from(self.get(w, srcs[i], lane))
                    };
                    if is_float {
                        if abs >> i & 1 != 0 {
                            v[i] &= !(1 << 63);
                        }
                        if neg >> i & 1 != 0 {
                            v[i] ^= 1 << 63;
                        }
                    }
                }
                let mut r = f(v[0], v[1], v[2]);
                if is_float {
                    r = omod_clamp64(r, omod, clamp);
                }
                w.vset(vdst, lane, r as u32);
                w.vset(vdst + 1, lane, (r >> 32) as u32);
            }
            return Ok(Flow::Next);
        }

        // 64-bit conversions
        match base {
            "v_cvt_f64_f32" | "v_cvt_f64_i32" | "v_cvt_f64_u32" => {
                let a = self.resolve(w, s[0], lit, K::F32, false);
                self.check_vgpr(w, vdst, 2, ctx)?;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let x = self.get(w, a, lane);
                    let r = match base {
                        "v_cvt_f64_f32" => {
                            let mut f = f64::from(fl(x));
                            if abs & 1 != 0 {
                                f = f.abs()
                            }
                            if neg & 1 != 0 {
                                f = -f
                            }
                            f
                        }
                        "v_cvt_f64_i32" => f64::from(x as i32),
                        _ => f64::from(x),
                    };
                    let r = db(r);
                    w.vset(vdst, lane, r as u32);
                    w.vset(vdst + 1, lane, (r >> 32) as u32);
                }
                return Ok(Flow::Next);
            }
            "v_cvt_f32_f64" | "v_cvt_i32_f64" | "v_cvt_u32_f64" => {
                let a = self.resolve(w, s[0], lit, K::F64, true);
                self.check_vgpr(w, vdst, 1, ctx)?;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let mut x = dl(self.get64(w, a, lane));
                    if abs & 1 != 0 {
                        x = x.abs()
                    }
                    if neg & 1 != 0 {
                        x = -x
                    }
                    let r = match base {
                        "v_cvt_f32_f64" => fb(x as f32),
                        "v_cvt_i32_f64" => {
                            if x.is_nan() {
                                0
                            } else {
                                x as i32 as u32
                            }
                        }
                        _ => {
                            if x.is_nan() {
                                0
                            } else {
                                x as u32
                            }
                        }
                    };
                    w.vset(vdst, lane, r);
                }
                return Ok(Flow::Next);
            }
            "v_ldexp_f64" => {
                let a = self.resolve(w, s[0], lit, K::F64, true);
                let b = self.resolve(w, s[1], lit, K::F32, false);
                self.check_vgpr(w, vdst, 2, ctx)?;
                for lane in 0..ws {
                    if exec >> lane & 1 == 0 {
                        continue;
                    }
                    let x = dl(self.get64(w, a, lane));
                    let r = db(libm::ldexp(x, self.get(w, b, lane) as i32));
                    w.vset(vdst, lane, r as u32);
                    w.vset(vdst + 1, lane, (r >> 32) as u32);
                }
                return Ok(Flow::Next);
            }
            _ => {}
        }

        // 32-bit lane ops
        let Some((k, is_float, f)) = op32(base) else {
            unimpl!(self, ctx, inst)
        };
        let nsrc = inst.info.opnds.len();
        let mut srcs = [Src::Const(0); 3];
        // VOP2 fmac/fmamk/fmaak read the destination / literal as the third operand.
        match base {
            "v_fmac_f32" | "v_fmac_f16" | "v_fmac_dx9_zero_f32" | "v_mac_f32" => {
                srcs[0] = self.resolve(w, s[0], lit, k, false);
                srcs[1] = self.resolve(w, s[1], lit, k, false);
                srcs[2] = Src::V(vdst);
            }
            "v_fmamk_f32" | "v_fmamk_f16" | "v_madmk_f32" => {
                srcs[0] = self.resolve(w, s[0], lit, k, false);
                srcs[1] = Src::Const(u64::from(lit.unwrap_or(0)));
                srcs[2] = self.resolve(w, s[1], lit, k, false);
            }
            "v_fmaak_f32" | "v_fmaak_f16" | "v_madak_f32" => {
                srcs[0] = self.resolve(w, s[0], lit, k, false);
                srcs[1] = self.resolve(w, s[1], lit, k, false);
                srcs[2] = Src::Const(u64::from(lit.unwrap_or(0)));
            }
            _ => {
                for i in 0..3 {
                    srcs[i] = self.resolve(w, s[i], lit, k, false);
                }
            }
        }
        let _ = nsrc;
        self.check_vgpr(w, vdst, 1, ctx)?;
        let opsel = if enc == Enc::Vop3 {
            (w0 >> 11) & 0xf
        } else {
            0
        };
        let f16 = k == K::F16;
        let fsign = if f16 { 0x8000u32 } else { 0x8000_0000 };
        for lane in 0..ws {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let mut v = [0u32; 3];
            for i in 0..3 {
                let mut x = self.get(w, srcs[i], lane);
                if f16 && opsel >> i & 1 != 0 {
                    x >>= 16;
                }
                if is_float {
                    if abs >> i & 1 != 0 {
                        x &= !fsign;
                    }
                    if neg >> i & 1 != 0 {
                        x ^= fsign;
                    }
                }
                v[i] = x;
            }
            let mut r = f(v[0], v[1], v[2]);
            if is_float && (omod != 0 || clamp) {
                r = if f16 {
                    omod_clamp16(r, omod, clamp)
                } else {
                    omod_clamp32(r, omod, clamp)
                };
            }
            if f16
                && base != "v_cvt_f32_f16"
                && !base.starts_with("v_cvt_i32")
                && !base.starts_with("v_cvt_u32")
                && base != "v_pack_b32_f16"
            {
                // 16-bit results leave the other half of the register alone.
                let old = w.vget(vdst, lane);
                r = if opsel & 8 != 0 {
                    (old & 0xffff) | (r << 16)
                } else {
                    (old & 0xffff_0000) | (r & 0xffff)
                };
            }
            w.vset(vdst, lane, r);
        }
        Ok(Flow::Next)
    }

    fn vop3p(
        &mut self,
        w: &mut Wave,
        inst: &Inst,
        ctx: &Ctx,
        base: &str,
        vdst: u32,
        s: [u32; 3],
    ) -> Result<Flow, ExecError> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let lit = inst.literal;
        let neg_hi = (w0 >> 8) & 7;
        let opsel = (w0 >> 11) & 7;
        let opsel_hi = ((w1 >> 27) & 3) | ((w0 >> 14) & 1) << 2;
        let neg = (w1 >> 29) & 7;
        let clamp = (w0 >> 15) & 1 == 1;
        let exec = w.exec();
        if base == "v_pk_mov_b32" {
            // gfx90a+ (LLVM's HasPkMovB32): the low result dword is S0's
            // dword op_sel[0], the high one S1's dword op_sel[1] (LLVM
            // expands a 64-bit move to it with op_sel:[0,1],
            // SIInstrInfo::expandPostRAPseudo V_MOV_B64_PSEUDO)
            let wide = |v: u32| !(128..=255).contains(&v);
            let a = self.resolve(w, s[0], lit, K::F32, wide(s[0]));
            let b = self.resolve(w, s[1], lit, K::F32, wide(s[1]));
            self.check_vgpr(w, vdst, 2, ctx)?;
            let dword = |x: u64, sel: bool| if sel { (x >> 32) as u32 } else { x as u32 };
            for lane in 0..w.wave_size {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let lo = dword(self.get64(w, a, lane), opsel & 1 != 0);
                let hi = dword(self.get64(w, b, lane), opsel & 2 != 0);
                w.vset(vdst, lane, lo);
                w.vset(vdst + 1, lane, hi);
            }
            return Ok(Flow::Next);
        }
        type P = fn(f32, f32, f32) -> f32;
        // CDNA3 packed f32 (two dwords of a register pair): op_sel /
        // op_sel_hi pick the source dword of the low / high result, neg /
        // neg_hi negate a source of the low / high result.
        let f32p: Option<P> = match base {
            "v_pk_fma_f32" => Some(libm::fmaf),
            "v_pk_mul_f32" => Some(|a, b, _| a * b),
            "v_pk_add_f32" => Some(|a, b, _| a + b),
            _ => None,
        };
        if let Some(f) = f32p {
            // constants are 32-bit values (in the low dword)
            let wide = |v: u32| !(128..=255).contains(&v);
            let srcs = [
                self.resolve(w, s[0], lit, K::F32, wide(s[0])),
                self.resolve(w, s[1], lit, K::F32, wide(s[1])),
                self.resolve(w, s[2], lit, K::F32, wide(s[2])),
            ];
            self.check_vgpr(w, vdst, 2, ctx)?;
            for lane in 0..w.wave_size {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let mut lo = [0f32; 3];
                let mut hi = [0f32; 3];
                for i in 0..3 {
                    let x = self.get64(w, srcs[i], lane);
                    let pick = |sel: u32| {
                        if sel >> i & 1 != 0 {
                            (x >> 32) as u32
                        } else {
                            x as u32
                        }
                    };
                    let l = pick(opsel) ^ if neg >> i & 1 != 0 { 1 << 31 } else { 0 };
                    let h = pick(opsel_hi) ^ if neg_hi >> i & 1 != 0 { 1 << 31 } else { 0 };
                    lo[i] = fl(l);
                    hi[i] = fl(h);
                }
                let mut rl = f(lo[0], lo[1], lo[2]);
                let mut rh = f(hi[0], hi[1], hi[2]);
                if clamp {
                    rl = rl.clamp(0.0, 1.0);
                    rh = rh.clamp(0.0, 1.0);
                }
                w.vset(vdst, lane, fb(rl));
                w.vset(vdst + 1, lane, fb(rh));
            }
            return Ok(Flow::Next);
        }
        let f: P = match base {
            "v_pk_add_f16" => |a, b, _| a + b,
            "v_pk_mul_f16" => |a, b, _| a * b,
            "v_pk_fma_f16" => |a, b, c| libm::fma(f64::from(a), f64::from(b), f64::from(c)) as f32,
            "v_pk_max_f16" | "v_pk_max_num_f16" => fmax_p,
            "v_pk_min_f16" | "v_pk_min_num_f16" => fmin_p,
            _ => {
                return self.vop3p_int(w, inst, ctx, base, vdst, s);
            }
        };
        let srcs = [
            self.resolve(w, s[0], lit, K::F16, false),
            self.resolve(w, s[1], lit, K::F16, false),
            self.resolve(w, s[2], lit, K::F16, false),
        ];
        self.check_vgpr(w, vdst, 1, ctx)?;
        for lane in 0..w.wave_size {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let mut lo = [0f32; 3];
            let mut hi = [0f32; 3];
            for i in 0..3 {
                let x = self.get(w, srcs[i], lane);
                let l = if opsel >> i & 1 != 0 {
                    x >> 16
                } else {
                    x & 0xffff
                };
                let h = if opsel_hi >> i & 1 != 0 {
                    x >> 16
                } else {
                    x & 0xffff
                };
                let l = if neg >> i & 1 != 0 { l ^ 0x8000 } else { l };
                let h = if neg_hi >> i & 1 != 0 { h ^ 0x8000 } else { h };
                lo[i] = hl(l);
                hi[i] = hl(h);
            }
            let mut rl = f(lo[0], lo[1], lo[2]);
            let mut rh = f(hi[0], hi[1], hi[2]);
            if clamp {
                rl = rl.clamp(0.0, 1.0);
                rh = rh.clamp(0.0, 1.0);
            }
            w.vset(vdst, lane, hb(rl) | hb(rh) << 16);
        }
        Ok(Flow::Next)
    }

    fn vop3p_int(
        &mut self,
        w: &mut Wave,
        inst: &Inst,
        ctx: &Ctx,
        base: &str,
        vdst: u32,
        s: [u32; 3],
    ) -> Result<Flow, ExecError> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let lit = inst.literal;
        let opsel = (w0 >> 11) & 7;
        let opsel_hi = ((w1 >> 27) & 3) | ((w0 >> 14) & 1) << 2;
        type P = fn(u32, u32, u32) -> u32;
        let f: P = match base {
            "v_pk_add_u16" | "v_pk_add_i16" => |a, b, _| a.wrapping_add(b),
            "v_pk_sub_u16" | "v_pk_sub_i16" => |a, b, _| a.wrapping_sub(b),
            "v_pk_mul_lo_u16" => |a, b, _| a.wrapping_mul(b),
            "v_pk_lshlrev_b16" => |a, b, _| b << (a & 15),
            "v_pk_lshrrev_b16" => |a, b, _| b >> (a & 15),
            "v_pk_max_u16" => |a, b, _| a.max(b),
            "v_pk_min_u16" => |a, b, _| a.min(b),
            "v_pk_mad_u16" => |a, b, c| a.wrapping_mul(b).wrapping_add(c),
            _ => unimpl!(self, ctx, inst),
        };
        let srcs = [
            self.resolve(w, s[0], lit, K::F16, false),
            self.resolve(w, s[1], lit, K::F16, false),
            self.resolve(w, s[2], lit, K::F16, false),
        ];
        self.check_vgpr(w, vdst, 1, ctx)?;
        let exec = w.exec();
        for lane in 0..w.wave_size {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let mut lo = [0u32; 3];
            let mut hi = [0u32; 3];
            for i in 0..3 {
                let x = self.get(w, srcs[i], lane);
                lo[i] = if opsel >> i & 1 != 0 {
                    x >> 16
                } else {
                    x & 0xffff
                };
                hi[i] = if opsel_hi >> i & 1 != 0 {
                    x >> 16
                } else {
                    x & 0xffff
                };
            }
            let rl = f(lo[0], lo[1], lo[2]) & 0xffff;
            let rh = f(hi[0], hi[1], hi[2]) & 0xffff;
            w.vset(vdst, lane, rl | rh << 16);
        }
        Ok(Flow::Next)
    }
}

fn fmax_p(a: f32, b: f32, _: f32) -> f32 {
    fmax(a, b)
}
fn fmin_p(a: f32, b: f32, _: f32) -> f32 {
    fmin(a, b)
}

fn cmp_i128(op: &str, a: i128, b: i128) -> bool {
    match op {
        "eq" => a == b,
        "ne" | "lg" => a != b,
        "gt" => a > b,
        "ge" => a >= b,
        "lt" => a < b,
        "le" => a <= b,
        "t" => true,
        _ => false,
    }
}

/// V_CMP_CLASS: bit 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
/// 6 +0, 7 +denormal, 8 +normal, 9 +inf.
fn class_of(v: f64, cls: u32, ty: &str) -> bool {
    let min_normal = match ty {
        "f16" => 6.103_515_625e-5,
        "f64" => f64::MIN_POSITIVE,
        _ => f64::from(f32::MIN_POSITIVE),
    };
    let bit = if v.is_nan() {
        // The model's NaNs are quiet after conversion to f64; signalling
        // NaNs are classified as quiet (model convention).
        1
    } else if v.is_infinite() {
        if v < 0.0 { 2 } else { 9 }
    } else if v == 0.0 {
        if v.is_sign_negative() { 5 } else { 6 }
    } else if v.abs() < min_normal {
        if v < 0.0 { 4 } else { 7 }
    } else if v < 0.0 {
        3
    } else {
        8
    };
    cls >> bit & 1 != 0
}

fn omod_clamp32(r: u32, omod: u32, clamp: bool) -> u32 {
    let mut x = fl(r);
    x = match omod {
        1 => x * 2.0,
        2 => x * 4.0,
        3 => x * 0.5,
        _ => x,
    };
    if clamp {
        x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    }
    fb(x)
}
fn omod_clamp16(r: u32, omod: u32, clamp: bool) -> u32 {
    let mut x = hl(r);
    x = match omod {
        1 => x * 2.0,
        2 => x * 4.0,
        3 => x * 0.5,
        _ => x,
    };
    if clamp {
        x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    }
    hb(x)
}
fn omod_clamp64(r: u64, omod: u32, clamp: bool) -> u64 {
    let mut x = dl(r);
    x = match omod {
        1 => x * 2.0,
        2 => x * 4.0,
        3 => x * 0.5,
        _ => x,
    };
    if clamp {
        x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    }
    db(x)
}

impl<M: Memory> Interp<'_, M> {
    /// VOPD: two independent VALU operations; both read their sources
    /// before either writes (ISA: dual-issue semantics).
    pub(super) fn vopd(&mut self, w: &mut Wave, inst: &Inst, ctx: &Ctx) -> Result<Flow, ExecError> {
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let lit = inst.literal;
        let vdstx = w1 >> 24;
        let vdsty = (((w1 >> 17) & 0x7f) << 1) | (!vdstx & 1);
        let halves = [
            (
                (w0 >> 22) & 0xf,
                vdstx,
                w0 & 0x1ff,
                256 + ((w0 >> 9) & 0xff),
            ),
            (
                (w0 >> 17) & 0x1f,
                vdsty,
                w1 & 0x1ff,
                256 + ((w1 >> 9) & 0xff),
            ),
        ];
        let exec = w.exec();
        let vcc = w.vcc();
        let mut results: [alloc::vec::Vec<(u32, u32)>; 2] =
            [alloc::vec::Vec::new(), alloc::vec::Vec::new()];
        let infos = [
            Some(inst.info),
            crate::decode::vopd_y(self.syntax.target, inst),
        ];
        for (h, (_, vdst, src0, vsrc1)) in halves.into_iter().enumerate() {
            let Some(name) = infos[h].and_then(|i| i.name.strip_prefix("v_dual_")) else {
                unimpl!(self, ctx, inst)
            };
            let a = self.resolve(w, src0, lit, K::F32, false);
            let b = self.resolve(w, vsrc1, lit, K::F32, false);
            let k = Src::Const(u64::from(lit.unwrap_or(0)));
            self.check_vgpr(w, vdst, 1, ctx)?;
            let (f, srcs): (Option<F3>, [Src; 3]) = match name {
                "mov_b32" => (None, [a, a, a]),
                "cndmask_b32" => (None, [a, b, a]),
                "fmac_f32" => (op32("v_fmac_f32").map(|x| x.2), [a, b, Src::V(vdst)]),
                "fmaak_f32" => (op32("v_fmaak_f32").map(|x| x.2), [a, b, k]),
                "fmamk_f32" => (op32("v_fmamk_f32").map(|x| x.2), [a, k, b]),
                n => {
                    let full = alloc::format!("v_{n}");
                    match op32(&full) {
                        Some(x) => (Some(x.2), [a, b, b]),
                        None => unimpl!(self, ctx, inst),
                    }
                }
            };
            for lane in 0..w.wave_size {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let v = match (name, f) {
                    ("mov_b32", _) => self.get(w, a, lane),
                    ("cndmask_b32", _) => {
                        if vcc >> lane & 1 != 0 {
                            self.get(w, b, lane)
                        } else {
                            self.get(w, a, lane)
                        }
                    }
                    (_, Some(f)) => f(
                        self.get(w, srcs[0], lane),
                        self.get(w, srcs[1], lane),
                        self.get(w, srcs[2], lane),
                    ),
                    _ => 0,
                };
                results[h].push((lane, v));
            }
            let _ = vdst;
        }
        for (h, (_, vdst, _, _)) in halves.into_iter().enumerate() {
            for &(lane, v) in &results[h] {
                w.vset(vdst, lane, v);
            }
        }
        Ok(Flow::Next)
    }
}

#[cfg(test)]
mod tests {
    use super::{op32, op64};

    /// Operands at the edges of every integer and float class.
    const EDGES32: [u32; 10] = [
        0,
        1,
        0x7f,
        0x8000,
        0xffff,
        0x7fff_ffff,
        0x8000_0000,
        0xff80_0000,
        0x7fc0_0000,
        u32::MAX,
    ];

    /// No lane operation of any target's table panics, whatever its
    /// operands (debug builds check every arithmetic overflow): the
    /// interpreter must fault or compute, never crash, on what a kernel
    /// holds. The fuzzer found `v_mad_u32_u16` overflowing on
    /// 0xffff * 0xffff + 0xffff_ffff.
    #[test]
    fn no_lane_operation_panics_on_edge_operands() {
        let names = crate::table::OPS_GFX1100
            .iter()
            .chain(crate::table::OPS_GFX1201)
            .chain(crate::table::OPS_GFX90A)
            .chain(crate::table::OPS_GFX942)
            .map(|o| o.sem);
        let mut ran = 0;
        for name in names {
            let base = name
                .strip_suffix("_e32")
                .or_else(|| name.strip_suffix("_e64"))
                .unwrap_or(name);
            if let Some((_, _, f)) = op32(base) {
                for a in EDGES32 {
                    for b in EDGES32 {
                        for c in EDGES32 {
                            let _ = f(a, b, c);
                        }
                    }
                }
                ran += 1;
            }
            if let Some((_, f)) = op64(base) {
                for a in EDGES32 {
                    for b in EDGES32 {
                        let (a, b) = (u64::from(a) << 32 | u64::from(b), u64::from(b) << 32);
                        let _ = f(a, b, u64::MAX);
                        let _ = f(b, a, 0);
                    }
                }
                ran += 1;
            }
        }
        assert!(ran > 100, "only {ran} lane operations found in the tables");
    }
}
