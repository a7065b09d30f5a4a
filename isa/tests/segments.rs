//! The dispatch packet's segment sizes bound what a kernel reaches: LDS by
//! `group_segment_size` in whole allocation blocks (AMDGPUUsage's
//! `GRANULATED_LDS_SIZE` unit, 128 dwords on GFX7–GFX11), scratch by
//! `private_segment_size` in whole 1 KiB waves (ROCR's dynamic scratch
//! handler), whatever the kernel descriptor claims.
//!
//! Code bytes are what llvm-mc-19 assembles for gfx1100 (texts beside).

mod common;
use barebell_isa::Target;
use barebell_isa::exec::ExecError;
use barebell_isa::launch::{Dispatch, LaunchConfig, LaunchError, Stats, launch};
use common::HostMem;

const KD: u64 = 0x1000;
const CODE: u64 = 0x1100;

/// A wave32 kernel descriptor (LLVM 19's AMDHSAKernelDescriptor.h: group
/// and private fixed sizes at 0 and 4, entry offset at 16, rsrc1 at 48
/// with both FLOAT_DENORM_MODE fields 3, kernel_code_properties at 56
/// with ENABLE_WAVEFRONT_SIZE32, bit 10).
fn kd(group_fixed: u32, private_fixed: u32) -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[0..4].copy_from_slice(&group_fixed.to_le_bytes());
    b[4..8].copy_from_slice(&private_fixed.to_le_bytes());
    b[16..24].copy_from_slice(&((CODE - KD) as i64).to_le_bytes());
    b[48..52].copy_from_slice(&(0xf_u32 << 16).to_le_bytes());
    b[56..58].copy_from_slice(&(1u16 << 10).to_le_bytes());
    b
}

fn run(kd: Vec<u8>, code: &[u8], group: u32, private: u32) -> Result<Stats, LaunchError> {
    let mut mem = HostMem::default();
    mem.map(KD, kd);
    let mut c = code.to_vec();
    c.resize(256, 0);
    mem.map(CODE, c);
    let d = Dispatch {
        setup_dims: 1,
        workgroup_size: [32, 1, 1],
        grid_size: [32, 1, 1],
        kernel_object: KD,
        group_segment_size: group,
        private_segment_size: private,
        ..Dispatch::default()
    };
    launch(&mut mem, &LaunchConfig::new(Target::Gfx1100), &d)
}

/// `v_mov_b32_e32 v0, addr ; ds_store_b32 v0, v1 ; s_endpgm`.
fn lds_store_at(addr: u32) -> Vec<u8> {
    let mut c = vec![0xff, 0x02, 0x00, 0x7e];
    c.extend_from_slice(&addr.to_le_bytes());
    c.extend_from_slice(&[0x00, 0x00, 0x34, 0xd8, 0x00, 0x01, 0x00, 0x00]);
    c.extend_from_slice(&[0x00, 0x00, 0xb0, 0xbf]);
    c
}

/// `scratch_store_b32 off, v1, off offset:16 ; s_endpgm`: bytes 16..20 of
/// each lane's private segment.
const SCRATCH_STORE_AT_16: [u8; 12] = [
    0x10, 0x00, 0x69, 0xdc, 0x00, 0x01, 0x7c, 0x00, 0x00, 0x00, 0xb0, 0xbf,
];

#[test]
fn lds_past_the_packets_group_segment_faults() {
    // The descriptor claims 4 KiB of static LDS; the packet gives 1 KiB,
    // two whole blocks: a store at byte 1024 is outside the allocation.
    match run(kd(4096, 0), &lds_store_at(1024), 1024, 0) {
        Err(LaunchError::Wave {
            error: ExecError::LdsOutOfRange { addr, size, .. },
            ..
        }) => assert_eq!((addr, size), (1024, 4)),
        other => panic!("{other:?}"),
    }
    // The last dword of the allocation is inside it.
    run(kd(4096, 0), &lds_store_at(1020), 1024, 0).unwrap();
}

#[test]
fn lds_is_allocated_in_whole_blocks() {
    // A packet asking for 4 bytes gets one 512-byte block (128 dwords,
    // AMDGPUUsage's GFX7-GFX11 granularity): its last dword is reachable,
    // the next block is not.
    run(kd(0, 0), &lds_store_at(508), 4, 0).unwrap();
    match run(kd(0, 0), &lds_store_at(512), 4, 0) {
        Err(LaunchError::Wave {
            error: ExecError::LdsOutOfRange { addr: 512, .. },
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn scratch_past_the_packets_private_segment_faults() {
    // The descriptor says the kernel uses 64 private bytes per lane; a
    // packet that declares none gives it no scratch, so the store faults
    // instead of using scratch the CP never allocated.
    match run(kd(0, 64), &SCRATCH_STORE_AT_16, 0, 0) {
        Err(LaunchError::Wave {
            error: ExecError::ScratchOutOfRange { addr: 16, .. },
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // A packet declaring 16 bytes per wave32 lane is rounded to a whole
    // 1 KiB wave, 32 bytes per lane: bytes 16..20 are inside.
    run(kd(0, 64), &SCRATCH_STORE_AT_16, 0, 16).unwrap();
    // Declaring what the descriptor says runs too.
    run(kd(0, 64), &SCRATCH_STORE_AT_16, 0, 64).unwrap();
}
