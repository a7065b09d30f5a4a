//! Typed errors: an instruction the interpreter does not implement stops the
//! wave with its text and address; bytes that are no instruction are an
//! illegal instruction; an unmapped kernel descriptor is a typed fault.

mod common;
use barebell_isa::Target;
use barebell_isa::exec::ExecError;
use barebell_isa::launch::{Dispatch, LaunchConfig, LaunchError, launch};
use common::HostMem;

const KD: u64 = 0x1000;
const CODE: u64 = 0x1100;

/// A wave32 kernel descriptor (offsets and bits from LLVM 19's
/// AMDHSAKernelDescriptor.h: entry offset at 16, rsrc1 at 48 with both
/// FLOAT_DENORM_MODE fields = 3 at bits 16..19, kernel_code_properties at 56
/// with ENABLE_WAVEFRONT_SIZE32 = bit 10).
fn kd() -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[16..24].copy_from_slice(&((CODE - KD) as i64).to_le_bytes());
    b[48..52].copy_from_slice(&(0xf_u32 << 16).to_le_bytes());
    b[56..58].copy_from_slice(&(1u16 << 10).to_le_bytes());
    b
}

fn dispatch() -> Dispatch {
    Dispatch {
        setup_dims: 1,
        workgroup_size: [32, 1, 1],
        grid_size: [32, 1, 1],
        kernel_object: KD,
        ..Dispatch::default()
    }
}

fn run(code: &[u8]) -> Result<barebell_isa::launch::Stats, LaunchError> {
    let mut mem = HostMem::default();
    mem.map(KD, kd());
    let mut c = code.to_vec();
    c.resize(256, 0);
    mem.map(CODE, c);
    launch(&mut mem, &LaunchConfig::new(Target::Gfx1100), &dispatch())
}

#[test]
fn unimplemented_instruction_is_named_with_its_address() {
    // v_mov_b32_e32 v0, 0 ; v_cubeid_f32 v0, v1, v2, v3 ; s_endpgm
    // (texts as llvm-mc-19 disassembles these bytes for gfx1100)
    let code = [
        0x80, 0x02, 0x00, 0x7e, 0x00, 0x00, 0x0c, 0xd6, 0x01, 0x05, 0x0e, 0x04, 0x00, 0x00, 0xb0,
        0xbf,
    ];
    match run(&code) {
        Err(LaunchError::Wave {
            error: ExecError::Unimplemented { pc, text },
            ..
        }) => {
            assert_eq!(pc, CODE + 4);
            assert_eq!(text, "v_cubeid_f32 v0, v1, v2, v3");
            let msg = LaunchError::Wave {
                workgroup: [0, 0, 0],
                wave: 0,
                error: ExecError::Unimplemented { pc, text },
            }
            .to_string();
            assert!(
                msg.contains("unimplemented instruction `v_cubeid_f32 v0, v1, v2, v3` at 0x1104"),
                "{msg}"
            );
        }
        other => panic!("expected an unimplemented-instruction error, got {other:?}"),
    }
}

#[test]
fn invalid_word_is_an_illegal_instruction() {
    // 0xffffffff is no gfx1100 instruction (llvm-mc-19: invalid encoding).
    let code = [0xff, 0xff, 0xff, 0xff];
    match run(&code) {
        Err(LaunchError::Wave {
            error: ExecError::Illegal { pc, word },
            ..
        }) => {
            assert_eq!((pc, word), (CODE, 0xffff_ffff));
        }
        other => panic!("expected an illegal-instruction error, got {other:?}"),
    }
}

#[test]
fn s_endpgm_alone_retires_one_wave() {
    let stats = run(&[0x00, 0x00, 0xb0, 0xbf]).unwrap();
    assert_eq!((stats.waves, stats.instructions), (1, 1));
}

#[test]
fn unmapped_kernel_descriptor_is_a_typed_fault() {
    let mut mem = HostMem::default();
    let e = launch(&mut mem, &LaunchConfig::new(Target::Gfx1100), &dispatch()).unwrap_err();
    assert!(
        matches!(e, LaunchError::Descriptor(f) if f.addr == KD && !f.write),
        "{e:?}"
    );
}

#[test]
fn v_illegal_is_an_illegal_instruction() {
    // s_nop 0 ; v_illegal (the all-zero dword; llvm-mc-19 prints `v_illegal`)
    let code = [0x00, 0x00, 0x80, 0xbf, 0x00, 0x00, 0x00, 0x00];
    match run(&code) {
        Err(LaunchError::Wave {
            error: ExecError::Illegal { pc, word },
            ..
        }) => {
            assert_eq!((pc, word), (CODE + 4, 0));
        }
        other => panic!("expected an illegal-instruction error, got {other:?}"),
    }
}

/// Found by the `interp` fuzz target: a private segment size near
/// `u32::MAX` overflowed `scratch_per_lane * wave_size` in `Wave::new`
/// ("attempt to multiply with overflow"); it is now a typed refusal.
#[test]
fn a_private_segment_past_a_waves_scratch_is_a_bad_packet() {
    let mut mem = HostMem::default();
    mem.map(KD, kd());
    mem.map(CODE, vec![0x00, 0x00, 0xb0, 0xbf]);
    let d = Dispatch {
        private_segment_size: u32::MAX / 16,
        ..dispatch()
    };
    match launch(&mut mem, &LaunchConfig::new(Target::Gfx1100), &d) {
        Err(LaunchError::BadPacket(why)) => assert!(why.contains("scratch"), "{why}"),
        other => panic!("{other:?}"),
    }
}

/// A packet's group segment past the 64 KiB of LDS a workgroup has is
/// refused; the descriptor's fixed size, which the packet already
/// includes, is not added again (a descriptor claiming `u32::MAX` with a
/// packet within the LDS runs).
#[test]
fn a_group_segment_past_the_lds_is_a_bad_packet() {
    let mut mem = HostMem::default();
    let mut k = kd();
    k[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    mem.map(KD, k);
    mem.map(CODE, vec![0x00, 0x00, 0xb0, 0xbf]);
    let fits = Dispatch {
        group_segment_size: 64 * 1024,
        ..dispatch()
    };
    assert!(launch(&mut mem, &LaunchConfig::new(Target::Gfx1100), &fits).is_ok());
    for size in [64 * 1024 + 1, u32::MAX] {
        let d = Dispatch {
            group_segment_size: size,
            ..dispatch()
        };
        match launch(&mut mem, &LaunchConfig::new(Target::Gfx1100), &d) {
            Err(LaunchError::BadPacket(why)) => assert!(why.contains("LDS"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}

/// A flushing denormal mode (`FLOAT_DENORM_MODE_32`/`_16_64` 0: flush
/// inputs and results, the MI200 and RDNA3 ISA references' MODE.FP_DENORM)
/// is not modelled for floating-point work: integer work runs under it
/// (ROCR's blit kernels carry such a mode and move bytes only), and the
/// first float instruction is refused with the reason.
#[test]
fn a_flushing_denorm_mode_runs_integer_work_and_refuses_float_work() {
    let flushing = || {
        let mut b = kd();
        b[48..52].copy_from_slice(&0u32.to_le_bytes());
        b
    };
    let go = |code: &[u8]| {
        let mut mem = HostMem::default();
        mem.map(KD, flushing());
        let mut c = code.to_vec();
        c.resize(256, 0);
        mem.map(CODE, c);
        launch(&mut mem, &LaunchConfig::new(Target::Gfx1100), &dispatch())
    };
    // v_mov_b32_e32 v0, 0 ; s_endpgm (llvm-mc-19, gfx1100)
    let int = [0x80, 0x02, 0x00, 0x7e, 0x00, 0x00, 0xb0, 0xbf];
    assert!(go(&int).is_ok(), "{:?}", go(&int));
    // v_add_f32_e32 v0, v1, v2 ; s_endpgm
    let float = [0x01, 0x05, 0x00, 0x06, 0x00, 0x00, 0xb0, 0xbf];
    match go(&float) {
        Err(LaunchError::Wave {
            error: ExecError::Unimplemented { pc, text },
            ..
        }) => {
            assert_eq!(pc, CODE);
            assert!(
                text.starts_with("v_add_f32_e32 v0, v1, v2 under a FLOAT_DENORM_MODE"),
                "{text}"
            );
        }
        other => panic!("expected the float instruction refused, got {other:?}"),
    }
    // The same code with denormals preserved runs.
    assert!(run(&float).is_ok());
}
