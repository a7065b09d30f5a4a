#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The interpreter where gfx90a and gfx942 differ: the same VOP2 word is
//! gfx90a's unfused `v_madmk_f32` and gfx942's fused `v_fmamk_f32`, and a
//! gfx90a MUBUF access the interpreter cannot serve stops the wave with a
//! typed error, never a panic.
//!
//! Code bytes are what `llvm-mc-19 -arch=amdgcn -mcpu=gfx90a
//! -show-encoding` assembles for the texts beside them;
//! `llvm-mc-19 -arch=amdgcn -mcpu=gfx942 -disassemble` reads the third
//! instruction of `MAD` as `v_fmamk_f32 v0, v0, 0x3f800800, v1`.

mod common;
use barebell_isa::Target;
use barebell_isa::exec::ExecError;
use barebell_isa::launch::{Dispatch, LaunchConfig, LaunchError, launch};
use common::HostMem;

const KD: u64 = 0x1000;
const CODE: u64 = 0x1100;
const OUT: u64 = 0x2000;

/// A wave64 kernel descriptor (LLVM 19's AMDHSAKernelDescriptor.h: entry
/// offset at 16, rsrc1 at 48 with both FLOAT_DENORM_MODE fields = 3 at
/// bits 16..19; kernel_code_properties at 56 left 0: wave64, no user
/// SGPRs).
fn kd() -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[16..24].copy_from_slice(&((CODE - KD) as i64).to_le_bytes());
    b[48..52].copy_from_slice(&(0xf_u32 << 16).to_le_bytes());
    b
}

fn run(target: Target, code: &[u8]) -> (Result<barebell_isa::launch::Stats, LaunchError>, u32) {
    let mut mem = HostMem::default();
    mem.map(KD, kd());
    let mut c = code.to_vec();
    c.resize(256, 0);
    mem.map(CODE, c);
    mem.map(OUT, vec![0xaa; 4]);
    let d = Dispatch {
        setup_dims: 1,
        workgroup_size: [64, 1, 1],
        grid_size: [64, 1, 1],
        kernel_object: KD,
        ..Dispatch::default()
    };
    let r = launch(&mut mem, &LaunchConfig::new(target), &d);
    let out = mem.regions[&OUT].clone();
    (r, u32::from_le_bytes([out[0], out[1], out[2], out[3]]))
}

/// v_mov_b32_e32 v1, 0xbf801000          ; -(1 + 2^-11)
/// v_mov_b32_e32 v0, 0x3f800800          ; 1 + 2^-12
/// v_madmk_f32 v0, v0, 0x3f800800, v1    ; gfx942: v_fmamk_f32
/// v_mov_b32_e32 v2, 0x2000
/// v_mov_b32_e32 v3, 0
/// global_store_dword v[2:3], v0, off
/// s_endpgm
const MAD: [u8; 48] = [
    0xff, 0x02, 0x02, 0x7e, 0x00, 0x10, 0x80, 0xbf, 0xff, 0x02, 0x00, 0x7e, 0x00, 0x08, 0x80, 0x3f,
    0x00, 0x03, 0x00, 0x2e, 0x00, 0x08, 0x80, 0x3f, 0xff, 0x02, 0x04, 0x7e, 0x00, 0x20, 0x00, 0x00,
    0x80, 0x02, 0x06, 0x7e, 0x00, 0x80, 0x70, 0xdc, 0x02, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x81, 0xbf,
];

/// (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 exactly. Fused (gfx942's
/// `v_fmamk_f32`), adding -(1 + 2^-11) leaves 2^-24 = 0x33800000. Unfused
/// (gfx90a's `v_madmk_f32`: ISD::FMAD, separately rounded), the product
/// rounds to 1 + 2^-11 first (2^-24 is half an f32 ulp at 1, a tie to the
/// even 1 + 2^-11), and the sum is +0.
#[test]
fn same_word_is_unfused_on_gfx90a_and_fused_on_gfx942() {
    let (r, v) = run(Target::Gfx942, &MAD);
    r.unwrap();
    assert_eq!(v, 0x3380_0000, "gfx942 v_fmamk_f32");
    let (r, v) = run(Target::Gfx90a, &MAD);
    r.unwrap();
    assert_eq!(v, 0, "gfx90a v_madmk_f32");
}

/// s_mov_b64 s[4:5], 0
/// s_mov_b64 s[6:7], 0
/// buffer_load_dword v0, off, s[4:7], 0
/// s_endpgm
///
/// A plain buffer descriptor (no ADD_TID_ENABLE: not the private segment
/// buffer) is not modelled: a typed stop naming the instruction.
#[test]
fn a_plain_buffer_access_on_gfx90a_is_a_typed_stop() {
    let code = [
        0x80, 0x01, 0x84, 0xbe, 0x80, 0x01, 0x86, 0xbe, 0x00, 0x00, 0x50, 0xe0, 0x00, 0x00, 0x01,
        0x80, 0x00, 0x00, 0x81, 0xbf,
    ];
    let (r, _) = run(Target::Gfx90a, &code);
    match r {
        Err(LaunchError::Wave {
            error: ExecError::Unimplemented { pc, text },
            ..
        }) => {
            assert_eq!(pc, CODE + 8);
            assert_eq!(text, "buffer_load_dword v0, off, s[4:7], 0");
        }
        other => panic!("expected an unimplemented-instruction error, got {other:?}"),
    }
}

/// s_getreg_b32 s8, hwreg(HW_REG_SH_MEM_BASES, 0, 16)
/// s_getreg_b32 s9, hwreg(HW_REG_SH_MEM_BASES, 16, 16)
/// v_mov_b32_e32 v0, s8
/// v_mov_b32_e32 v1, s9
/// v_mov_b32_e32 v2, 0x2000
/// v_mov_b32_e32 v3, 0
/// global_store_dwordx2 v[2:3], v[0:1], off
/// s_endpgm
const GETREG_MEM_BASES: [u8; 48] = [
    0x0f, 0x78, 0x88, 0xb8, 0x0f, 0x7c, 0x89, 0xb8, 0x08, 0x02, 0x00, 0x7e, 0x09, 0x02, 0x02, 0x7e,
    0xff, 0x02, 0x04, 0x7e, 0x00, 0x20, 0x00, 0x00, 0x80, 0x02, 0x06, 0x7e, 0x00, 0x80, 0x74, 0xdc,
    0x02, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x81, 0xbf, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// gfx90a code builds flat private addresses from `SH_MEM_BASES`
/// (clang-19 reads `hwreg(HW_REG_SH_MEM_BASES, 0, 16)` and shifts it to
/// the address's high dword; HIP's private arrays compile so): the wave
/// reads its VMID's `PRIVATE_BASE` (15:0) and `SHARED_BASE` (31:16), here
/// KFD's gfx9 apertures (`compute_sh_mem_bases_64bit()`: LDS at 1 << 48,
/// scratch at 2 << 48). Before the interpreter answered it, every
/// `s_getreg_b32` read 0 and such a kernel's first private store went to
/// virtual address 0x10.
#[test]
fn sh_mem_bases_reads_the_waves_apertures() {
    let mut mem = HostMem::default();
    mem.map(KD, kd());
    let mut c = GETREG_MEM_BASES.to_vec();
    c.resize(256, 0);
    mem.map(CODE, c);
    mem.map(OUT, vec![0xaa; 8]);
    let d = Dispatch {
        setup_dims: 1,
        workgroup_size: [64, 1, 1],
        grid_size: [64, 1, 1],
        kernel_object: KD,
        ..Dispatch::default()
    };
    let cfg = LaunchConfig {
        apertures: barebell_isa::exec::Apertures::from_sh_mem_bases(0x0001_0002),
        ..LaunchConfig::new(Target::Gfx90a)
    };
    launch(&mut mem, &cfg, &d).unwrap();
    let out = &mem.regions[&OUT];
    assert_eq!(u32::from_le_bytes([out[0], out[1], out[2], out[3]]), 2);
    assert_eq!(u32::from_le_bytes([out[4], out[5], out[6], out[7]]), 1);
}
