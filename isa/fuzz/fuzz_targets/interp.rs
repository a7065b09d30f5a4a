//! The ISA interpreter on arbitrary code, through `launch::launch` as the
//! model's CP dispatches: input is `[flags][64-byte kernel descriptor]
//! [code]`. The target (gfx1100, gfx1201, gfx942, gfx90a) and the launch shape
//! come from `flags`; the descriptor's entry offset is pinned to the code
//! and its denorm modes to 3 (the only ones modelled) so that mutations
//! reach the interpreter. Memory is a sparse map (descriptor + code,
//! kernargs, a data buffer; everything else faults) and the dispatch is
//! bounded at 20 000 instructions, so a spinning kernel ends in
//! `LaunchError::Timeout`. Any outcome but a panic is accepted.
#![no_main]

use barebell_isa::Target;
use barebell_isa::kd::{KD_SIZE, KERNEL_CODE_ENTRY_BYTE_OFFSET};
use barebell_isa::launch::{Dispatch, LaunchConfig, LaunchError, launch};
use barebell_isa::mem::{MemFault, Memory};
use libfuzzer_sys::fuzz_target;

const CODE_BASE: u64 = 0x1000;
const ENTRY: usize = 256;
const KERNARG: u64 = 0x10_0000;
const DATA: u64 = 0x20_0000;
const BUDGET: u64 = 20_000;

struct Regions(Vec<(u64, Vec<u8>)>);

impl Regions {
    fn find(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        self.0.iter_mut().find_map(|(base, r)| {
            let off = usize::try_from(addr.checked_sub(*base)?).ok()?;
            r.get_mut(off..off.checked_add(len)?)
        })
    }
}

impl Memory for Regions {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        let len = buf.len();
        let fault = MemFault {
            addr,
            len: len as u32,
            write: false,
        };
        buf.copy_from_slice(self.find(addr, len).ok_or(fault)?);
        Ok(())
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let fault = MemFault {
            addr,
            len: data.len() as u32,
            write: true,
        };
        self.find(addr, data.len())
            .ok_or(fault)?
            .copy_from_slice(data);
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    if rest.len() < KD_SIZE {
        return;
    }
    let (kd, code) = rest.split_at(KD_SIZE);
    let target = match flags & 3 {
        0 => Target::Gfx1100,
        1 => Target::Gfx1201,
        2 => Target::Gfx942,
        _ => Target::Gfx90a,
    };
    let mut image = vec![0u8; ENTRY];
    image[..KD_SIZE].copy_from_slice(kd);
    image[KERNEL_CODE_ENTRY_BYTE_OFFSET..KERNEL_CODE_ENTRY_BYTE_OFFSET + 8]
        .copy_from_slice(&(ENTRY as i64).to_le_bytes());
    // COMPUTE_PGM_RSRC1 (offset 48): FLOAT_DENORM_MODE_32/16_64 = 3.
    image[50] |= 0x0f;
    image.extend_from_slice(code);
    image.extend_from_slice(&[0u8; 64]);
    let mut mem = Regions(vec![
        (CODE_BASE, image),
        (KERNARG, (0..4096u32).map(|i| (i * 7) as u8).collect()),
        (DATA, vec![0u8; 64 * 1024]),
    ]);
    // Kernargs point into the data buffer.
    for i in 0..8u64 {
        let at = (i * 8) as usize;
        if let Some(r) = mem.find(KERNARG + at as u64, 8) {
            r.copy_from_slice(&(DATA + i * 0x1000).to_le_bytes());
        }
    }
    let lanes = [1u16, 32, 64, 128][usize::from((flags >> 2) & 3)];
    let groups = u32::from((flags >> 4) & 3) + 1;
    let mut cfg = LaunchConfig::new(target);
    cfg.max_instructions = BUDGET;
    cfg.seed = u64::from(flags >> 6);
    let d = Dispatch {
        setup_dims: 1,
        workgroup_size: [lanes, 1, 1],
        grid_size: [u32::from(lanes) * groups, 1, 1],
        private_segment_size: 64,
        group_segment_size: 256,
        kernel_object: CODE_BASE,
        kernarg_address: KERNARG,
        packet_address: 0,
        queue_address: 0,
        dispatch_id: 0,
    };
    match launch(&mut mem, &cfg, &d) {
        Ok(_) => {}
        Err(LaunchError::Timeout { instructions }) => assert!(instructions > BUDGET),
        Err(_) => {}
    }
});
