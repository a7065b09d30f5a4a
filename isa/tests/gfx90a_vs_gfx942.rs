#![allow(clippy::unwrap_used, clippy::expect_used)]
//! gfx90a (CDNA2, MI210) and gfx942 (CDNA3, MI300) share the GFX9
//! encodings but not their printing or their opcode sets: the same words
//! decode differently on the two targets, as llvm-mc-19 says.
//!
//! Every expected string below is llvm-mc-19's output, produced by
//!
//!     llvm-mc-19 -arch=amdgcn -mcpu=gfx90a -disassemble < words.txt
//!     llvm-mc-19 -arch=amdgcn -mcpu=gfx942 -disassemble < words.txt
//!
//! with `words.txt` holding the byte lists beside each case (the words
//! themselves are what `llvm-mc-19 -arch=amdgcn -mcpu=gfx90a
//! -show-encoding` assembles for the gfx90a text, or `-mcpu=gfx942` for the
//! gfx942-only instructions). The cache-policy names follow LLVM's
//! AMDGPUInstPrinter::printCPol: bits GLC, SLC and SCC of the `cpol`
//! operand print as glc/slc/scc on gfx90a and as sc0/nt/sc1 on gfx940+.

use barebell_isa::{DecodeError, Syntax, Target, decode};

const GFX90A: Syntax = Syntax {
    target: Target::Gfx90a,
    wave64: true,
};
const GFX942: Syntax = Syntax {
    target: Target::Gfx942,
    wave64: true,
};

/// The text barebell-isa prints for the first instruction of `bytes`, or
/// `None` when it decodes no instruction there (LLVM: "invalid instruction
/// encoding").
fn text(syntax: Syntax, bytes: &[u8]) -> Option<String> {
    match decode(syntax, bytes) {
        Ok(i) => {
            assert_eq!(usize::from(i.len), bytes.len(), "{bytes:02x?}");
            Some(i.display(syntax).to_string())
        }
        Err(e) => {
            // a whole instruction is always given: only Invalid may come
            assert!(
                matches!(e, DecodeError::Invalid { .. }),
                "{bytes:02x?}: {e}"
            );
            None
        }
    }
}

/// (bytes, llvm-mc-19 -mcpu=gfx90a, llvm-mc-19 -mcpu=gfx942); `None` is
/// llvm-mc-19's "invalid instruction encoding".
const CASES: &[(&[u8], Option<&str>, Option<&str>)] = &[
    // GLOBAL: cache-policy bits 16 and 17
    (
        &[0x00, 0x80, 0x53, 0xdc, 0x02, 0x00, 0x7f, 0x01],
        Some("global_load_dword v1, v[2:3], off glc slc"),
        Some("global_load_dword v1, v[2:3], off sc0 nt"),
    ),
    // GLOBAL: cache-policy bit 25
    (
        &[0x00, 0x80, 0x50, 0xde, 0x02, 0x00, 0x7f, 0x01],
        Some("global_load_dword v1, v[2:3], off scc"),
        Some("global_load_dword v1, v[2:3], off sc1"),
    ),
    // MUBUF: cache-policy bits 14 and 17
    (
        &[0x04, 0x50, 0x52, 0xe0, 0x02, 0x01, 0x01, 0x03],
        Some("buffer_load_dword v1, v2, s[4:7], s3 offen offset:4 glc slc"),
        Some("buffer_load_dword v1, v2, s[4:7], s3 offen offset:4 sc0 nt"),
    ),
    // MUBUF: bits 14, 17 and 15
    (
        &[0x04, 0xd0, 0x52, 0xe0, 0x02, 0x01, 0x01, 0x03],
        Some("buffer_load_dword v1, v2, s[4:7], s3 offen offset:4 glc slc scc"),
        Some("buffer_load_dword v1, v2, s[4:7], s3 offen offset:4 sc0 nt sc1"),
    ),
    // MUBUF with lds (bit 16: LLVM's *_LDS opcode, no vdata), all three
    // cache bits
    (
        &[0x04, 0xd0, 0x53, 0xe0, 0x02, 0x00, 0x01, 0x03],
        Some("buffer_load_dword v2, s[4:7], s3 offen offset:4 glc slc scc lds"),
        Some("buffer_load_dword v2, s[4:7], s3 offen offset:4 sc0 nt sc1 lds"),
    ),
    // MUBUF atomic returning its pre-op value: glc on gfx90a, sc0 on gfx942
    (
        &[0x00, 0x50, 0x08, 0xe1, 0x02, 0x01, 0x01, 0x80],
        Some("buffer_atomic_add v1, v2, s[4:7], 0 offen glc"),
        Some("buffer_atomic_add v1, v2, s[4:7], 0 offen sc0"),
    ),
    // VOP1 0x38: v_mov_b64 exists from gfx940 on only
    (
        &[0x02, 0x71, 0x00, 0x7e],
        None,
        Some("v_mov_b64_e32 v[0:1], v[2:3]"),
    ),
    // VOP2 0x17 with a literal: gfx90a's unfused v_madmk_f32 is gfx942's
    // fused v_fmamk_f32
    (
        &[0x01, 0x05, 0x00, 0x2e, 0xdb, 0x0f, 0x49, 0x40],
        Some("v_madmk_f32 v0, v1, 0x40490fdb, v2"),
        Some("v_fmamk_f32 v0, v1, 0x40490fdb, v2"),
    ),
    // MUBUF 0x29: gfx90a's buffer_invl2 is gfx942's buffer_inv
    (
        &[0x00, 0x00, 0xa4, 0xe0, 0x00, 0x00, 0x00, 0x00],
        Some("buffer_invl2"),
        Some("buffer_inv"),
    ),
];

#[test]
fn same_words_decode_as_llvm_mc_19_says_on_each_target() {
    for &(bytes, want90a, want942) in CASES {
        assert_eq!(
            text(GFX90A, bytes).as_deref(),
            want90a,
            "gfx90a {bytes:02x?}"
        );
        assert_eq!(
            text(GFX942, bytes).as_deref(),
            want942,
            "gfx942 {bytes:02x?}"
        );
        // the point of the case: the two targets disagree
        assert_ne!(want90a, want942);
    }
}

/// gfx942-only VOP3 `v_lshl_add_u64` (VOP3 0x208): llvm-mc-19
/// `-mcpu=gfx942 -show-encoding` assembles `v_lshl_add_u64 v[0:1], v[2:3],
/// 2, v[4:5]` to these bytes; `-mcpu=gfx90a -disassemble` calls them an
/// invalid instruction encoding.
#[test]
fn gfx940_only_vop3_is_invalid_on_gfx90a() {
    let b = [0x00, 0x00, 0x08, 0xd2, 0x02, 0x05, 0x11, 0x04];
    assert_eq!(
        text(GFX942, &b).as_deref(),
        Some("v_lshl_add_u64 v[0:1], v[2:3], 2, v[4:5]")
    );
    assert_eq!(text(GFX90A, &b), None);
}

#[test]
fn gfx90a_names_and_elf_machine() {
    assert_eq!(Target::from_mcpu("gfx90a"), Some(Target::Gfx90a));
    assert_eq!(Target::Gfx90a.mcpu(), "gfx90a");
    assert!(Target::Gfx90a.is_gfx9());
    assert!(!Target::Gfx90a.is_gfx940());
    assert!(Target::Gfx942.is_gfx940());
    // EF_AMDGPU_MACH_AMDGCN_GFX90A in LLVM's ELF.h
    assert_eq!(barebell_isa::objdump::EF_AMDGPU_MACH_AMDGCN_GFX90A, 0x03f);
}
