//! Semantic tests: the suite's OpenCL C kernels (tests/kernels/suite.cl),
//! built with clang-19 for gfx1100 and gfx1201 in wave32 and wave64 and for
//! gfx942 and gfx90a in wave64, run by
//! `barebell_isa::launch` over host memory and compared with CPU references
//! computed here over seeded random inputs.

#![allow(clippy::panic)] // harness helpers panic with the failing kernel and target

mod common;
use common::*;

const N: usize = 1000;

/// Every kernel runs on gfx1100 and gfx1201 (wave32 and wave64) and on
/// gfx942 and gfx90a (wave64).
fn each(mut f: impl FnMut(barebell_isa::Target, bool)) {
    for (t, w64) in TARGETS {
        f(t, w64);
    }
    f(GFX942.0, GFX942.1);
    f(GFX90A.0, GFX90A.1);
}

fn run1(
    t: barebell_isa::Target,
    w64: bool,
    k: &str,
    args: &[Arg],
    n: u32,
    wg: u16,
) -> Vec<Vec<u8>> {
    match run(t, w64, k, args, [n, 1, 1], [wg, 1, 1], 1) {
        Ok(r) => r.bufs,
        Err(e) => panic!("{k} on {} wave{}: {e}", t.mcpu(), if w64 { 64 } else { 32 }),
    }
}

fn same_f32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

#[test]
fn vadd() {
    let mut r = Rng(1);
    let a: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    let b: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "vadd",
            &[buf(&a), buf(&b), buf(&vec![0f32; N]), val(N as i32)],
            N as u32,
            64,
        );
        let c: Vec<f32> = from_bytes(&o[2]);
        for i in 0..N {
            assert!(
                same_f32(c[i], a[i] + b[i]),
                "vadd[{i}] {} vs {}",
                c[i],
                a[i] + b[i]
            );
        }
    });
}

#[test]
fn iarith() {
    let mut r = Rng(2);
    let a: Vec<i32> = (0..N).map(|_| r.u32() as i32).collect();
    let b: Vec<i32> = (0..N)
        .map(|i| {
            if i % 9 == 0 {
                0
            } else if i % 7 == 0 {
                -1
            } else {
                r.u32() as i32 >> (r.u32() % 31)
            }
        })
        .collect();
    let reference = |x: i32, y: i32| -> i32 {
        let mut r = x.wrapping_mul(7).wrapping_sub(y);
        r ^= (x >> 3) | (y << 2);
        r = r.wrapping_add(((x as u32) >> 5) as i32);
        let ok = y != 0 && !(x == i32::MIN && y == -1);
        r = r.wrapping_add(if ok { x / y } else { 0 });
        r = r.wrapping_add(if ok { x % y } else { 0 });
        r = r.wrapping_add(x.max(y).wrapping_sub(x.min(y)));
        r.wrapping_add(((x as u32).wrapping_mul(y as u32) >> 7) as i32)
    };
    each(|t, w| {
        let o = run1(
            t,
            w,
            "iarith",
            &[buf(&a), buf(&b), buf(&vec![0i32; N]), val(N as i32)],
            N as u32,
            128,
        );
        let c: Vec<i32> = from_bytes(&o[2]);
        for i in 0..N {
            assert_eq!(
                c[i],
                reference(a[i], b[i]),
                "iarith[{i}] x={} y={}",
                a[i],
                b[i]
            );
        }
    });
}

#[test]
fn uarith64() {
    let mut r = Rng(3);
    let a: Vec<u64> = (0..N).map(|_| r.next()).collect();
    let b: Vec<u64> = (0..N)
        .map(|i| {
            if i % 11 == 0 {
                0
            } else {
                r.next() >> (r.u32() % 60)
            }
        })
        .collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "uarith64",
            &[buf(&a), buf(&b), buf(&vec![0u64; N]), val(N as i32)],
            N as u32,
            64,
        );
        let c: Vec<u64> = from_bytes(&o[2]);
        for i in 0..N {
            let (x, y) = (a[i], b[i]);
            let mut e = x.wrapping_mul(y).wrapping_add(x >> 13).wrapping_sub(y << 3);
            e ^= x.checked_div(y).unwrap_or(7);
            e = e.wrapping_add(((x as i64) >> 17) as u64);
            assert_eq!(c[i], e, "uarith64[{i}]");
        }
    });
}

#[test]
fn farith_with_specials() {
    let mut r = Rng(4);
    let a: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    let b: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "farith",
            &[buf(&a), buf(&b), buf(&vec![0f32; 4 * N]), val(N as i32)],
            N as u32,
            256,
        );
        let c: Vec<f32> = from_bytes(&o[2]);
        for i in 0..N {
            let (x, y) = (a[i], b[i]);
            // clang contracts x*y+x into an FMA.
            let e = [
                x.mul_add(y, x),
                (-y).mul_add(0.5, x),
                x.max(y),
                x.min(y) * 2.0,
            ];
            for k in 0..4 {
                assert!(
                    same_f32(c[4 * i + k], e[k]),
                    "farith[{i}][{k}] x={x:e} y={y:e}: {} vs {}",
                    c[4 * i + k],
                    e[k]
                );
            }
        }
    });
}

#[test]
fn fdiv_correctly_rounded() {
    let mut r = Rng(5);
    let a: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    let b: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "fdiv",
            &[buf(&a), buf(&b), buf(&vec![0f32; N]), val(N as i32)],
            N as u32,
            64,
        );
        let c: Vec<f32> = from_bytes(&o[2]);
        for i in 0..N {
            let e = a[i] / b[i];
            // OpenCL allows 2.5 ulp; the compiler's sequence is usually exact.
            let ok = same_f32(c[i], e) || (c[i].to_bits() as i64 - e.to_bits() as i64).abs() <= 3;
            assert!(ok, "fdiv[{i}] {:e}/{:e}: {:e} vs {:e}", a[i], b[i], c[i], e);
        }
    });
}

#[test]
fn darith() {
    let mut r = Rng(6);
    let a: Vec<f64> = (0..N).map(|_| f64::from(r.f32_special()) * 1.5).collect();
    let b: Vec<f64> = (0..N).map(|_| f64::from(r.f32_special()) / 3.0).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "darith",
            &[buf(&a), buf(&b), buf(&vec![0f64; 2 * N]), val(N as i32)],
            N as u32,
            64,
        );
        let c: Vec<f64> = from_bytes(&o[2]);
        for i in 0..N {
            let (x, y) = (a[i], b[i]);
            let e = [x.mul_add(y, x) - y, x.max(y) + x.min(y) * 0.25];
            let e2 = [x * y + x - y, e[1]];
            for k in 0..2 {
                let g = c[2 * i + k];
                let ok = (g.is_nan() && e[k].is_nan())
                    || g == e[k]
                    || g == e2[k]
                    || (g.is_nan() && e2[k].is_nan());
                assert!(ok, "darith[{i}][{k}] x={x} y={y}: {g} vs {}", e[k]);
            }
        }
    });
}

#[test]
fn lds_reduce_with_barriers() {
    let mut r = Rng(7);
    let groups = 16;
    let a: Vec<i32> = (0..256 * groups)
        .map(|_| (r.u32() % 1000) as i32 - 500)
        .collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "lds_reduce",
            &[buf(&a), buf(&vec![0i32; groups])],
            (256 * groups) as u32,
            256,
        );
        let c: Vec<i32> = from_bytes(&o[1]);
        for g in 0..groups {
            let e: i32 = a[g * 256..(g + 1) * 256].iter().sum();
            assert_eq!(c[g], e, "group {g}");
        }
    });
}

#[test]
fn global_atomics_under_contention() {
    let mut r = Rng(8);
    let n = 4096;
    let a: Vec<i32> = (0..n).map(|_| r.u32() as i32 >> 8).collect();
    each(|t, w| {
        let init = [0i32, i32::MIN, i32::MAX, 0, 0];
        let o = run1(
            t,
            w,
            "atomics_global",
            &[buf(&a), buf(&init)],
            n as u32,
            128,
        );
        let c: Vec<i32> = from_bytes(&o[1]);
        let sum = a.iter().fold(0i32, |s, &x| s.wrapping_add(x));
        let or = a.iter().fold(0, |s, &x| s | x);
        let xor = a.iter().fold(0, |s, &x| s ^ x);
        assert_eq!(
            c,
            vec![
                sum,
                *a.iter().max().unwrap(),
                *a.iter().min().unwrap(),
                or,
                xor
            ]
        );
    });
}

#[test]
fn lds_atomics_histogram() {
    let mut r = Rng(9);
    let n = 2048;
    let a: Vec<u32> = (0..n).map(|_| r.u32()).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "atomics_lds",
            &[buf(&a), buf(&[0u32; 16])],
            n as u32,
            256,
        );
        let c: Vec<u32> = from_bytes(&o[1]);
        let mut e = [0u32; 16];
        for x in &a {
            e[(x & 15) as usize] += 1;
        }
        assert_eq!(c, e.to_vec());
    });
}

#[test]
fn wave_ops() {
    let mut r = Rng(10);
    let n = 256;
    let a: Vec<u32> = (0..n).map(|_| r.u32()).collect();
    each(|t, w| {
        let ws = if w { 64 } else { 32 };
        let o = run1(
            t,
            w,
            "wave_ops",
            &[buf(&a), buf(&vec![0u32; 3 * n])],
            n as u32,
            128,
        );
        let c: Vec<u32> = from_bytes(&o[1]);
        for i in 0..n {
            let lane = i % ws;
            let wave_base = i - lane;
            assert_eq!(c[3 * i], lane as u32, "lane id {i}");
            assert_eq!(c[3 * i + 1], a[wave_base], "readfirstlane {i}");
            assert_eq!(c[3 * i + 2], a[wave_base + (lane + 1) % ws], "bpermute {i}");
        }
    });
}

#[test]
fn implicit_kernel_arguments() {
    each(|t, w| {
        let o = run1(t, w, "implicit_args", &[buf(&[0u32; 8])], 1000, 64);
        let c: Vec<u32> = from_bytes(&o[0]);
        assert_eq!(&c[..7], &[16, 1, 1, 64, 1, 1, 1000 % 64]);
    });
}

#[test]
fn divergent_branches_and_loops() {
    let mut r = Rng(11);
    let a: Vec<i32> = (0..N).map(|_| (r.u32() % 4000) as i32 - 2000).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "divergent",
            &[buf(&a), buf(&vec![0i32; N]), val(N as i32)],
            N as u32,
            64,
        );
        let c: Vec<i32> = from_bytes(&o[1]);
        for i in 0..N {
            let x = a[i];
            let mut r = if x & 1 != 0 {
                x * 3
            } else if x & 2 != 0 {
                x - 100
            } else {
                -x
            };
            for k in 0..(x & 15) {
                r += k * x;
            }
            while r > 1000 {
                r >>= 1;
            }
            assert_eq!(c[i], r, "divergent[{i}] x={x}");
        }
    });
}

#[test]
fn private_array_in_scratch() {
    let mut r = Rng(12);
    let n = 200;
    let a: Vec<i32> = (0..n).map(|_| (r.u32() % 1000) as i32).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "private_array",
            &[buf(&a), buf(&vec![0i32; n]), val(n as i32)],
            n as u32,
            64,
        );
        let c: Vec<i32> = from_bytes(&o[1]);
        for i in 0..n {
            let x = a[i];
            let buf: Vec<i32> = (0..96).map(|k| x.wrapping_mul(k) + (k ^ x)).collect();
            let mut s = 0i32;
            for k in 0..96 {
                s = s.wrapping_add(buf[((k * 37 + x) % 96) as usize].wrapping_mul(k + 1));
            }
            assert_eq!(c[i], s, "private_array[{i}]");
        }
    });
}

#[test]
fn load_store_widths() {
    let mut r = Rng(13);
    let n = 256;
    let b8: Vec<u8> = (0..n).map(|_| r.u32() as u8).collect();
    let b16: Vec<u16> = (0..n).map(|_| r.u32() as u16).collect();
    let b32: Vec<u32> = (0..n).map(|_| r.u32()).collect();
    let b64: Vec<u64> = (0..n).map(|_| r.next()).collect();
    let b128: Vec<[u32; 4]> = (0..n)
        .map(|_| [r.u32(), r.u32(), r.u32(), r.u32()])
        .collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "widths",
            &[
                buf(&b8),
                buf(&b16),
                buf(&b32),
                buf(&b64),
                buf(&b128),
                buf(&vec![0u8; n]),
                buf(&vec![0u16; n]),
                buf(&vec![0u32; n]),
                buf(&vec![0u64; n]),
                buf(&vec![[0u32; 4]; n]),
            ],
            n as u32,
            64,
        );
        let o8: Vec<u8> = from_bytes(&o[5]);
        let o16: Vec<u16> = from_bytes(&o[6]);
        let o32: Vec<u32> = from_bytes(&o[7]);
        let o64: Vec<u64> = from_bytes(&o[8]);
        let o128: Vec<[u32; 4]> = from_bytes(&o[9]);
        for i in 0..n {
            assert_eq!(o8[i], b8[i].wrapping_add(1));
            assert_eq!(o16[i], b16[i].wrapping_mul(3));
            assert_eq!(o32[i], b32[i] ^ 0xdeadbeef);
            assert_eq!(o64[i], b64[i].wrapping_add(0x1_0000_0001));
            let v = b128[i];
            assert_eq!(o128[i], [v[3], v[2].wrapping_add(1), v[1], v[0] ^ 5]);
        }
    });
}

#[test]
fn packed_f16() {
    let mut r = Rng(14);
    let n = 256;
    let h = |r: &mut Rng| half::f16::from_f32(((r.u32() % 2000) as f32 - 1000.0) / 64.0).to_bits();
    let a: Vec<u16> = (0..2 * n).map(|_| h(&mut r)).collect();
    let b: Vec<u16> = (0..2 * n).map(|_| h(&mut r)).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "packed_f16",
            &[buf(&a), buf(&b), buf(&vec![0u16; 2 * n])],
            n as u32,
            64,
        );
        let c: Vec<u16> = from_bytes(&o[2]);
        for i in 0..2 * n {
            let (x, y) = (half::f16::from_bits(a[i]), half::f16::from_bits(b[i]));
            // fused (v_pk_fma_f16) or separate rounding, as the compiler chose
            let fused = half::f16::from_f64(x.to_f64().mul_add(y.to_f64(), x.to_f64()));
            let sep = half::f16::from_f32((x * y).to_f32() + x.to_f32());
            assert!(
                c[i] == fused.to_bits() || c[i] == sep.to_bits(),
                "packed_f16[{i}]"
            );
        }
    });
}

#[test]
fn scalar_loop_and_2d_grid() {
    each(|t, w| {
        let o = run1(
            t,
            w,
            "scalar_loop",
            &[buf(&vec![0i32; 128]), val(77i32)],
            128,
            64,
        );
        let c: Vec<i32> = from_bytes(&o[0]);
        let s: i32 = (0..77).map(|k| k * k).sum();
        for (i, v) in c.iter().enumerate() {
            assert_eq!(*v, s + i as i32);
        }
        let (wd, ht) = (48u32, 20u32);
        let r = run(
            t,
            w,
            "grid2d",
            &[buf(&vec![0u32; (wd * ht) as usize]), val(wd)],
            [wd, ht, 1],
            [16, 4, 1],
            3,
        )
        .unwrap_or_else(|e| panic!("grid2d: {e}"));
        let c: Vec<u32> = from_bytes(&r.bufs[0]);
        for y in 0..ht {
            for x in 0..wd {
                assert_eq!(c[(y * wd + x) as usize], x * 1000 + y);
            }
        }
    });
}

#[test]
fn racy_kernel_depends_on_seed_and_correct_one_does_not() {
    let t = barebell_isa::Target::Gfx1100;
    let mut racy = std::collections::BTreeSet::new();
    let mut correct = std::collections::BTreeSet::new();
    for seed in 0..8 {
        let r = run(
            t,
            false,
            "racy",
            &[buf(&[0i32])],
            [256, 1, 1],
            [256, 1, 1],
            seed,
        )
        .unwrap();
        racy.insert(from_bytes::<i32>(&r.bufs[0])[0]);
        let a: Vec<i32> = (0..512).collect();
        let r = run(
            t,
            false,
            "atomics_global",
            &[buf(&a), buf(&[0i32, i32::MIN, i32::MAX, 0, 0])],
            [512, 1, 1],
            [128, 1, 1],
            seed,
        )
        .unwrap();
        correct.insert(from_bytes::<i32>(&r.bufs[1]));
    }
    assert!(racy.len() > 1, "racy kernel gave {racy:?} for every seed");
    assert_eq!(
        correct.len(),
        1,
        "atomic kernel differs across seeds: {correct:?}"
    );
}

#[test]
fn conversions() {
    let mut r = Rng(15);
    let a: Vec<f32> = (0..N).map(|_| r.f32_special() * 3.0).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "cvt",
            &[
                buf(&a),
                buf(&vec![0i32; N]),
                buf(&vec![0u32; N]),
                buf(&vec![0f32; N]),
                buf(&vec![0f64; N]),
                val(N as i32),
            ],
            N as u32,
            64,
        );
        let (oi, ou, of, od): (Vec<i32>, Vec<u32>, Vec<f32>, Vec<f64>) = (
            from_bytes(&o[1]),
            from_bytes(&o[2]),
            from_bytes(&o[3]),
            from_bytes(&o[4]),
        );
        for i in 0..N {
            let x = a[i];
            // The ISA saturates and maps NaN to 0, which Rust's `as` also does.
            assert_eq!(oi[i], x as i32, "cvt i32 {x}");
            assert_eq!(ou[i], x as u32, "cvt u32 {x}");
            assert!(same_f32(of[i], ((x * 3.0) as i32) as f32), "cvt f32 {x}");
            let e = f64::from(x) * 2.0;
            assert!(od[i] == e || (od[i].is_nan() && e.is_nan()), "cvt f64 {x}");
        }
    });
}

#[test]
fn compares_with_nan_and_inf() {
    let mut r = Rng(16);
    let a: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    let b: Vec<f32> = (0..N)
        .map(|i| if i % 5 == 0 { a[i] } else { r.f32_special() })
        .collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "cmpsel",
            &[buf(&a), buf(&b), buf(&vec![0i32; N]), val(N as i32)],
            N as u32,
            64,
        );
        let c: Vec<i32> = from_bytes(&o[2]);
        for i in 0..N {
            let (x, y) = (a[i], b[i]);
            let e = (x < y) as i32
                | ((x == y) as i32) << 1
                | ((x > y) as i32) << 2
                | (x.is_nan() as i32) << 3
                | (y.is_nan() as i32) << 4
                | (x.is_infinite() as i32) << 5;
            assert_eq!(c[i], e, "cmpsel x={x} y={y}");
        }
    });
}

#[test]
fn cas_loop_counter() {
    each(|t, w| {
        let o = run1(t, w, "cas_counter", &[buf(&[5u32])], 300, 64);
        assert_eq!(from_bytes::<u32>(&o[0])[0], 305);
    });
}

#[test]
fn transcendentals_within_model_precision() {
    let mut r = Rng(17);
    let a: Vec<f32> = (0..256)
        .map(|_| ((r.u32() % 20000) as f32 - 10000.0) / 100.0 + 0.37)
        .collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "transcend",
            &[buf(&a), buf(&vec![0f32; 4 * 256])],
            256,
            64,
        );
        let c: Vec<f32> = from_bytes(&o[1]);
        for i in 0..256 {
            let x = f64::from(a[i]);
            let e = [
                1.0 / x,
                x.abs().sqrt(),
                (x * 0.125).exp2(),
                (x.abs() + 1.0).log2(),
            ];
            for k in 0..4 {
                let g = f64::from(c[4 * i + k]);
                assert!(
                    (g - e[k]).abs() <= e[k].abs() * 2e-6,
                    "transcend[{i}][{k}] x={x}: {g} vs {}",
                    e[k]
                );
            }
        }
    });
}

#[test]
fn half_scalar_ops() {
    let mut r = Rng(18);
    let n = 256;
    let h = |r: &mut Rng| half::f16::from_f32(((r.u32() % 4000) as f32 - 2000.0) / 128.0).to_bits();
    let a: Vec<u16> = (0..n).map(|_| h(&mut r)).collect();
    let b: Vec<u16> = (0..n).map(|_| h(&mut r)).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "f16_scalar",
            &[buf(&a), buf(&b), buf(&vec![0f32; n])],
            n as u32,
            64,
        );
        let c: Vec<f32> = from_bytes(&o[2]);
        for i in 0..n {
            let (x, y) = (half::f16::from_bits(a[i]), half::f16::from_bits(b[i]));
            let e = (x + y).to_f32() + (x * y).to_f32();
            assert!(
                same_f32(c[i], e),
                "f16_scalar[{i}] {x} {y}: {} vs {e}",
                c[i]
            );
        }
    });
}

#[test]
fn sign_extending_loads() {
    let mut r = Rng(19);
    let n = 256;
    let c8: Vec<i8> = (0..n).map(|_| r.u32() as i8).collect();
    let s16: Vec<i16> = (0..n).map(|_| r.u32() as i16).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "signext",
            &[buf(&c8), buf(&s16), buf(&vec![0i32; n])],
            n as u32,
            64,
        );
        let c: Vec<i32> = from_bytes(&o[2]);
        for i in 0..n {
            assert_eq!(c[i], i32::from(c8[i]) * 2 + i32::from(s16[i]));
        }
    });
}

#[test]
fn unsigned_minmax_bitcounts() {
    let mut r = Rng(20);
    let n = 512;
    let a: Vec<u32> = (0..n)
        .map(|i| {
            if i % 13 == 0 {
                0
            } else {
                r.u32() >> (r.u32() % 32)
            }
        })
        .collect();
    let b: Vec<u32> = (0..n).map(|_| r.u32()).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "minmax_u",
            &[buf(&a), buf(&b), buf(&vec![0u32; n])],
            n as u32,
            128,
        );
        let c: Vec<u32> = from_bytes(&o[2]);
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            let e = x
                .max(y)
                .wrapping_sub(x.min(y))
                .wrapping_add(u32::from(x > y))
                .wrapping_add(x.leading_zeros())
                .wrapping_add(y.count_ones());
            assert_eq!(c[i], e);
        }
    });
}

#[test]
fn shifts_64bit() {
    let mut r = Rng(21);
    let n = 256;
    let a: Vec<i64> = (0..n).map(|_| r.next() as i64).collect();
    let s: Vec<u32> = (0..n).map(|_| r.u32()).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "shifts64",
            &[buf(&a), buf(&s), buf(&vec![0i64; 3 * n])],
            n as u32,
            64,
        );
        let c: Vec<i64> = from_bytes(&o[2]);
        for i in 0..n {
            let k = s[i] & 63;
            assert_eq!(c[3 * i], a[i] << k);
            assert_eq!(c[3 * i + 1], a[i] >> k);
            assert_eq!(c[3 * i + 2], ((a[i] as u64) >> k) as i64);
        }
    });
}

#[test]
fn bit_operations() {
    let mut r = Rng(22);
    let n = 256;
    let a: Vec<u32> = (0..n).map(|_| r.u32()).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "bitops",
            &[buf(&a), buf(&vec![0u32; n])],
            n as u32,
            64,
        );
        let c: Vec<u32> = from_bytes(&o[1]);
        for i in 0..n {
            let x = a[i];
            let e = (x & 0xff00_ff00)
                | ((x >> 4) & 0x000f_000f)
                | x.rotate_left(7) ^ x.wrapping_mul(0x9e37_79b9);
            assert_eq!(c[i], e);
        }
    });
}

#[test]
fn matmul_tiles_in_lds() {
    let mut r = Rng(23);
    let a: Vec<f32> = (0..256).map(|_| (r.u32() % 100) as f32 / 8.0).collect();
    let b: Vec<f32> = (0..256).map(|_| (r.u32() % 100) as f32 / 16.0).collect();
    each(|t, w| {
        let res = run(
            t,
            w,
            "matmul16",
            &[buf(&a), buf(&b), buf(&[0f32; 256])],
            [16, 16, 1],
            [16, 16, 1],
            1,
        )
        .unwrap_or_else(|e| panic!("matmul16: {e}"));
        let c: Vec<f32> = from_bytes(&res.bufs[2]);
        for y in 0..16 {
            for x in 0..16 {
                let mut s = 0f32;
                for k in 0..16 {
                    s = a[y * 16 + k].mul_add(b[k * 16 + x], s);
                }
                // products of multiples of 1/128 below 2^24/128 are exact either way
                assert_eq!(c[y * 16 + x], s, "C[{y}][{x}]");
            }
        }
    });
}

#[test]
fn inclusive_scan_in_lds() {
    let mut r = Rng(24);
    let a: Vec<u32> = (0..1024).map(|_| r.u32() % 100).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "scan_lds",
            &[buf(&a), buf(&vec![0u32; 1024])],
            1024,
            256,
        );
        let c: Vec<u32> = from_bytes(&o[1]);
        for g in 0..4 {
            let mut s = 0;
            for i in 0..256 {
                s += a[g * 256 + i];
                assert_eq!(c[g * 256 + i], s, "scan[{g}][{i}]");
            }
        }
    });
}

#[test]
fn global_histogram_and_u64_atomics() {
    let mut r = Rng(25);
    let a: Vec<u32> = (0..3000).map(|_| r.u32()).collect();
    let b: Vec<u64> = (0..3000).map(|_| r.next() >> 8).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "atomic_inc_hist",
            &[buf(&a), buf(&[0u32; 64])],
            3000,
            128,
        );
        let mut e = [0u32; 64];
        for x in &a {
            e[(x % 64) as usize] += 1;
        }
        assert_eq!(from_bytes::<u32>(&o[1]), e.to_vec());
        let o = run1(t, w, "atomic_u64", &[buf(&b), buf(&[7u64])], 3000, 128);
        let s = b.iter().fold(7u64, |s, x| s.wrapping_add(*x));
        assert_eq!(from_bytes::<u64>(&o[1])[0], s);
    });
}

#[test]
fn double_division() {
    let mut r = Rng(26);
    let a: Vec<f64> = (0..256)
        .map(|_| f64::from(r.f32_special()) * 1.25)
        .collect();
    let b: Vec<f64> = (0..256).map(|_| f64::from(r.f32_special()) + 0.5).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "ddiv",
            &[buf(&a), buf(&b), buf(&[0f64; 256])],
            256,
            64,
        );
        let c: Vec<f64> = from_bytes(&o[2]);
        for i in 0..256 {
            let e = a[i] / b[i];
            let ok = (c[i].is_nan() && e.is_nan())
                || c[i] == e
                || (c[i].to_bits() as i64 - e.to_bits() as i64).abs() <= 1;
            assert!(ok, "ddiv[{i}] {}/{}: {} vs {e}", a[i], b[i], c[i]);
        }
    });
}

#[test]
fn short_arithmetic() {
    let mut r = Rng(27);
    let a: Vec<i16> = (0..256).map(|_| r.u32() as i16).collect();
    let b: Vec<i16> = (0..256).map(|_| r.u32() as i16).collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "short_ops",
            &[buf(&a), buf(&b), buf(&[0i16; 256])],
            256,
            64,
        );
        let c: Vec<i16> = from_bytes(&o[2]);
        for i in 0..256 {
            let (x, y) = (i32::from(a[i]), i32::from(b[i]));
            let e = (x * y + (x >> 2) - (y & 0x7f)) as i16;
            assert_eq!(c[i], e, "short_ops[{i}]");
        }
    });
}

#[test]
fn float4_vectors() {
    let mut r = Rng(28);
    let a: Vec<[f32; 4]> = (0..256)
        .map(|_| [0; 4].map(|_: i32| (r.u32() % 1000) as f32 / 4.0))
        .collect();
    let b: Vec<[f32; 4]> = (0..256)
        .map(|_| [0; 4].map(|_: i32| (r.u32() % 1000) as f32 / 8.0))
        .collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "float4_ops",
            &[buf(&a), buf(&b), buf(&[[0f32; 4]; 256])],
            256,
            64,
        );
        let c: Vec<[f32; 4]> = from_bytes(&o[2]);
        for i in 0..256 {
            for k in 0..4 {
                let e = a[i][k].mul_add(2.0, b[i][k]) - (k + 1) as f32;
                let e2 = a[i][k] * 2.0 + b[i][k] - (k + 1) as f32;
                assert!(
                    c[i][k] == e || c[i][k] == e2,
                    "float4[{i}][{k}]: {:?} a {:?} b {:?}",
                    c[i],
                    a[i],
                    b[i]
                );
            }
        }
    });
}

#[test]
fn transpose_through_lds() {
    let n = 64u32;
    let a: Vec<u32> = (0..n * n).collect();
    each(|t, w| {
        let res = run(
            t,
            w,
            "transpose_lds",
            &[buf(&a), buf(&vec![0u32; (n * n) as usize]), val(n)],
            [n, n, 1],
            [16, 16, 1],
            5,
        )
        .unwrap_or_else(|e| panic!("transpose: {e}"));
        let c: Vec<u32> = from_bytes(&res.bufs[1]);
        for y in 0..n {
            for x in 0..n {
                assert_eq!(c[(x * n + y) as usize], a[(y * n + x) as usize]);
            }
        }
    });
}

#[test]
fn grid_stride_loop() {
    let mut r = Rng(29);
    let n = 5000;
    let a: Vec<i32> = (0..n).map(|_| (r.u32() % 10000) as i32).collect();
    each(|t, w| {
        // 4 workgroups of 64 cover the array in strides of 256
        let o = run1(
            t,
            w,
            "grid_stride",
            &[buf(&a), buf(&vec![0i32; n]), val(n as i32)],
            256,
            64,
        );
        let c: Vec<i32> = from_bytes(&o[1]);
        for i in 0..n {
            assert_eq!(c[i], a[i] * 3 + 1);
        }
    });
}

#[test]
fn saturating_clamp_to_u8() {
    let mut r = Rng(30);
    let a: Vec<i32> = (0..256).map(|_| (r.u32() % 1000) as i32 - 300).collect();
    each(|t, w| {
        let o = run1(t, w, "clamp_sat", &[buf(&a), buf(&[0u8; 256])], 256, 64);
        let c: Vec<u8> = from_bytes(&o[1]);
        for i in 0..256 {
            assert_eq!(c[i], a[i].clamp(0, 255) as u8);
        }
    });
}

#[test]
fn float_to_half_rounding() {
    let mut r = Rng(31);
    let a: Vec<f32> = (0..512).map(|_| r.f32_special() / 8.0).collect();
    each(|t, w| {
        let o = run1(t, w, "to_half", &[buf(&a), buf(&[0u16; 512])], 512, 64);
        let c: Vec<u16> = from_bytes(&o[1]);
        for i in 0..512 {
            let e = half::f16::from_f32(a[i]);
            assert!(
                c[i] == e.to_bits() || (e.is_nan() && half::f16::from_bits(c[i]).is_nan()),
                "to_half[{i}] {}",
                a[i]
            );
        }
    });
}

#[test]
fn lds_neighbour_pairs() {
    let mut r = Rng(32);
    let a: Vec<u32> = (0..512).map(|_| r.u32() % 1000).collect();
    each(|t, w| {
        let o = run1(t, w, "lds_pairs", &[buf(&a), buf(&[0u32; 512])], 512, 256);
        let c: Vec<u32> = from_bytes(&o[1]);
        for i in 0..512 {
            let next = if i % 256 == 255 { 0 } else { a[i + 1] };
            assert_eq!(c[i], a[i] + next);
        }
    });
}

#[test]
fn lds_min_max_atomics() {
    let mut r = Rng(33);
    let a: Vec<i32> = (0..1024).map(|_| r.u32() as i32).collect();
    each(|t, w| {
        let o = run1(t, w, "lds_minmax", &[buf(&a), buf(&[0i32; 8])], 1024, 256);
        let c: Vec<i32> = from_bytes(&o[1]);
        for g in 0..4 {
            let s = &a[g * 256..(g + 1) * 256];
            assert_eq!(
                (c[2 * g], c[2 * g + 1]),
                (*s.iter().min().unwrap(), *s.iter().max().unwrap())
            );
        }
    });
}

#[test]
fn double_conversions() {
    let mut r = Rng(34);
    let a: Vec<f64> = (0..256)
        .map(|_| f64::from(r.f32_special()) * 1.75)
        .collect();
    each(|t, w| {
        let o = run1(
            t,
            w,
            "dcvt",
            &[buf(&a), buf(&[0i32; 256]), buf(&[0f32; 256])],
            256,
            64,
        );
        let (ci, cf): (Vec<i32>, Vec<f32>) = (from_bytes(&o[1]), from_bytes(&o[2]));
        for i in 0..256 {
            assert_eq!(ci[i], a[i] as i32, "dcvt i32 {}", a[i]);
            assert!(same_f32(cf[i], a[i] as f32), "dcvt f32 {}", a[i]);
        }
    });
}

/// One gfx942 dispatch run by 8 XCCs (MI300X in SPX mode) and by 4
/// (MI308X), each launch taking its round-robin share: every element is
/// written once and right, and each XCC ran the workgroups the deal gives
/// it. 1000 elements in workgroups of 64 are 16 workgroups (the last one
/// partial); with chunk 1 and 8 XCCs that is 2 each; with 4 XCCs and
/// chunk 2, XCC k gets chunks k and k + 4: 4 workgroups each; with 3 XCCs
/// and chunk 1, XCC 0 gets ids 0, 3, .., 15 (6) and the others 5.
#[test]
fn one_gfx942_dispatch_split_between_xccs() {
    use barebell_isa::launch::Share;
    let mut r = Rng(40);
    let a: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    let b: Vec<f32> = (0..N).map(|_| r.f32_special()).collect();
    for (parts, chunk, want) in [
        (8u32, 1u32, vec![2u64; 8]),
        (4, 2, vec![4; 4]),
        (3, 1, vec![6, 5, 5]),
    ] {
        let shares: Vec<Share> = (0..parts)
            .map(|index| Share {
                parts,
                index,
                chunk,
            })
            .collect();
        let (run, per) = run_shares(
            GFX942.0,
            GFX942.1,
            "vadd",
            &[buf(&a), buf(&b), buf(&vec![0f32; N]), val(N as i32)],
            [N as u32, 1, 1],
            [64, 1, 1],
            7,
            &shares,
        )
        .unwrap_or_else(|e| panic!("vadd split {parts}x{chunk}: {e}"));
        let got: Vec<u64> = per.iter().map(|s| s.workgroups).collect();
        assert_eq!(got, want, "{parts} XCCs, chunk {chunk}");
        let c: Vec<f32> = from_bytes(&run.bufs[2]);
        for i in 0..N {
            assert!(
                same_f32(c[i], a[i] + b[i]),
                "vadd[{i}] split {parts}x{chunk}"
            );
        }
    }
}

/// FLAT accesses reach LDS through the shared aperture the launch names:
/// with the apertures `SH_MEM_BASES` 0x00010002 gives (what
/// `update_qpd_v9()` puts in a GC 9.4.3 process's MAP_PROCESS: LDS at
/// 1 << 48, scratch at 2 << 48), a generic pointer to `__local` slot 0
/// is 1 << 48 plus its LDS offset, and stores and loads through generic
/// pointers land in the work-group's LDS. With the interpreter's old
/// fixed apertures the address would read 0x1000_0000_0000_0000.
#[test]
fn flat_lds_uses_the_launchs_shared_aperture() {
    let ap = barebell_isa::exec::Apertures::from_sh_mem_bases(0x0001_0002);
    assert_eq!((ap.shared, ap.private), (1 << 48, 2 << 48));
    let n = 256usize;
    let a: Vec<i32> = (0..n as i32).collect();
    each(|t, w| {
        let (r, _) = run_apertures(
            t,
            w,
            "flat_lds",
            &[buf(&a), buf(&vec![0i32; n]), buf(&[0u64])],
            [n as u32, 1, 1],
            [64, 1, 1],
            1,
            &[barebell_isa::launch::Share::ALL],
            ap,
        )
        .unwrap_or_else(|e| panic!("flat_lds on {}: {e}", t.mcpu()));
        let o: Vec<i32> = from_bytes(&r.bufs[1]);
        for (i, got) in o.iter().enumerate() {
            let next = i / 64 * 64 + (i % 64 + 1) % 64;
            assert_eq!(*got, 3 * a[next], "flat_lds[{i}] on {}", t.mcpu());
        }
        let addr: Vec<u64> = from_bytes(&r.bufs[2]);
        assert_eq!(addr[0] >> 32, 1 << 16, "{:#x} on {}", addr[0], t.mcpu());
    });
}
