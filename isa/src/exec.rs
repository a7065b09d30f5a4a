//! The wave interpreter: one instruction at a time on a wave's registers,
//! its workgroup's LDS and per-lane scratch, and global memory through
//! [`Memory`].
//!
//! Semantics follow the RDNA3/RDNA4 ISA references. Memory instructions
//! complete in order as they issue; the wait counters are still counted per
//! type (see [`Counters`]) so `s_waitcnt`/`s_wait_*` have something to wait
//! on, and they never block. Anything not implemented stops the wave with
//! [`ExecError::Unimplemented`] naming the instruction and its address.

use crate::decode::decode;
use crate::inst::{Inst, Syntax, Target};
use crate::mem::{AtomicOp, MemFault, Memory};
use crate::table::Enc;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

/// Why a wave stopped abnormally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecError {
    /// The wave reached an instruction the interpreter does not implement.
    Unimplemented { pc: u64, text: String },
    /// The bytes at `pc` are not a valid instruction (illegal instruction).
    Illegal { pc: u64, word: u32 },
    /// A memory access faulted.
    Fault { pc: u64, fault: MemFault },
    /// An LDS access outside the workgroup's allocation.
    LdsOutOfRange { pc: u64, addr: u32, size: u32 },
    /// A scratch access outside the lane's private segment.
    ScratchOutOfRange { pc: u64, addr: u64 },
    /// A register index outside the wave's allocation.
    RegisterOutOfRange {
        pc: u64,
        what: &'static str,
        index: u32,
    },
}

impl ExecError {
    /// The address of the instruction that failed.
    pub fn pc(&self) -> u64 {
        match self {
            ExecError::Unimplemented { pc, .. }
            | ExecError::Illegal { pc, .. }
            | ExecError::Fault { pc, .. }
            | ExecError::LdsOutOfRange { pc, .. }
            | ExecError::ScratchOutOfRange { pc, .. }
            | ExecError::RegisterOutOfRange { pc, .. } => *pc,
        }
    }
}

impl core::fmt::Display for ExecError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ExecError::Unimplemented { pc, text } => {
                write!(f, "unimplemented instruction `{text}` at {pc:#x}")
            }
            ExecError::Illegal { pc, word } => {
                write!(f, "illegal instruction {word:#010x} at {pc:#x}")
            }
            ExecError::Fault { pc, fault } => write!(f, "memory fault at {pc:#x}: {fault}"),
            ExecError::LdsOutOfRange { pc, addr, size } => write!(
                f,
                "LDS access of {size} bytes at {addr:#x} outside the workgroup's allocation (instruction at {pc:#x})"
            ),
            ExecError::ScratchOutOfRange { pc, addr } => write!(
                f,
                "scratch access at {addr:#x} outside the private segment (instruction at {pc:#x})"
            ),
            ExecError::RegisterOutOfRange { pc, what, index } => {
                write!(f, "{what} {index} outside the wave's allocation at {pc:#x}")
            }
        }
    }
}

/// Outstanding-operation counters by type (vm/ds/km/store), incremented at
/// issue and decremented at completion (immediately, in this model).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub load: u32,
    pub store: u32,
    pub ds: u32,
    pub km: u32,
    /// Operations issued over the wave's life, by the same types.
    pub issued: [u64; 4],
}

/// What a wave does after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    /// Waits at a workgroup barrier.
    Barrier,
    End,
}

/// A wave's architectural state.
#[derive(Debug, Clone)]
pub struct Wave {
    /// s0..s105, vcc (106, 107), ttmp0..15 (108..123), null, m0, exec.
    pub s: [u32; 128],
    pub scc: bool,
    pub pc: u64,
    /// VGPRs, register-major: `v[reg * wave_size + lane]`.
    pub v: Vec<u32>,
    pub nvgpr: u32,
    pub wave_size: u32,
    /// Private segment bytes per lane, `scratch[lane * size + addr]`.
    pub scratch: Vec<u8>,
    pub scratch_per_lane: u32,
    /// Where flat addresses reach LDS and scratch.
    pub apertures: Apertures,
    pub counters: Counters,
    pub done: bool,
    /// The scalar operand that reads as zero and drops writes: NULL (124)
    /// from gfx10; gfx9 has none, its 124 is M0 (AMDGPUUsage's operand
    /// tables; `SIRegisterInfo.td` gives M0 encoding 124 on gfx9 and 125
    /// on gfx10+, where SGPR_NULL takes 124).
    pub null: Option<u32>,
    /// Whether the dispatch preserves denormals (`COMPUTE_PGM_RSRC1`
    /// `FLOAT_DENORM_MODE_32` and `_16_64` both 3). Flushing is not
    /// modelled: a wave that flushes runs integer work only, and its
    /// first floating-point VALU instruction is refused ([`Interp::step`]).
    pub denormals_preserved: bool,
}

/// Aperture bases a wave uses when its launch names none (a model
/// convention for a bare interpreter run; the device model passes the
/// queue's VMID's `SH_MEM_BASES`, [`Apertures::from_sh_mem_bases`]).
pub const SHARED_APERTURE: u64 = 0x1000_0000_0000_0000;
pub const PRIVATE_APERTURE: u64 = 0x2000_0000_0000_0000;
/// Each aperture is 4 GiB (`adev->gmc.shared_aperture_end` =
/// start + 4 GiB - 1, `gmc_v9_0_sw_init()` and its gfx11/gfx12 twins).
const APERTURE_SIZE: u64 = 1 << 32;

/// Where a wave's flat addresses reach LDS (shared) and scratch
/// (private): what `src_shared_base`/`src_private_base` read and what a
/// FLAT access is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Apertures {
    pub shared: u64,
    pub private: u64,
}

impl Default for Apertures {
    fn default() -> Self {
        Apertures {
            shared: SHARED_APERTURE,
            private: PRIVATE_APERTURE,
        }
    }
}

impl Apertures {
    /// The apertures `SH_MEM_BASES` sets: `SHARED_BASE` (bits 31:16) and
    /// `PRIVATE_BASE` (bits 15:0) are bits 63:48 of each aperture's start
    /// (the same fields in `gc_9_4_3_sh_mask.h`, `gc_11_0_0_sh_mask.h`,
    /// `gc_12_0_0_sh_mask.h`; `compute_sh_mem_bases_64bit()`).
    ///
    /// Equal bases put scratch right after LDS: `init_compute_vmid()`
    /// writes 0x6000 to both and documents "LDS: 0x60000000'00000000 -
    /// 0x60000001'00000000 (4GB), Scratch: 0x60000001'00000000 -
    /// 0x60000002'00000000" (`gfx_v9_4_3.c`, `gfx_v11_0.c`).
    pub const fn from_sh_mem_bases(bases: u32) -> Apertures {
        let shared = ((bases >> 16) as u64) << 48;
        let mut private = ((bases & 0xffff) as u64) << 48;
        if private == shared {
            private = shared.wrapping_add(APERTURE_SIZE);
        }
        Apertures { shared, private }
    }

    /// Which aperture flat address `a` falls in: 1 (LDS) or 2 (scratch)
    /// with the offset inside it, or 0 (global) with `a` itself.
    pub fn classify(&self, a: u64) -> (u8, u64) {
        if a.wrapping_sub(self.shared) < APERTURE_SIZE {
            (1, a - self.shared)
        } else if a.wrapping_sub(self.private) < APERTURE_SIZE {
            (2, a - self.private)
        } else {
            (0, a)
        }
    }
}

impl Wave {
    pub fn new(wave_size: u32, nvgpr: u32, scratch_per_lane: u32) -> Wave {
        Wave {
            s: [0; 128],
            scc: false,
            pc: 0,
            v: vec![0; (nvgpr * wave_size) as usize],
            nvgpr,
            wave_size,
            scratch: vec![0; (scratch_per_lane * wave_size) as usize],
            scratch_per_lane,
            apertures: Apertures::default(),
            counters: Counters::default(),
            done: false,
            null: Some(124),
            denormals_preserved: true,
        }
    }

    /// The wave for `target`: gfx9 keeps M0 in operand 124 and has no
    /// NULL operand.
    pub fn for_target(mut self, target: crate::inst::Target) -> Wave {
        self.null = if target.is_gfx9() { None } else { Some(124) };
        self
    }

    pub fn exec(&self) -> u64 {
        if self.wave_size == 32 {
            u64::from(self.s[126])
        } else {
            u64::from(self.s[126]) | u64::from(self.s[127]) << 32
        }
    }
    fn set_exec(&mut self, m: u64) {
        self.s[126] = m as u32;
        if self.wave_size == 64 {
            self.s[127] = (m >> 32) as u32;
        }
    }
    fn vcc(&self) -> u64 {
        self.mask_at(106)
    }
    fn mask_at(&self, r: u32) -> u64 {
        let r = r as usize & 127;
        if self.wave_size == 32 {
            u64::from(self.s[r])
        } else {
            u64::from(self.s[r]) | u64::from(self.s[(r + 1) & 127]) << 32
        }
    }
    fn set_mask_at(&mut self, r: u32, m: u64) {
        let r = r as usize & 127;
        if self.null == Some(r as u32) {
            return;
        }
        self.s[r] = m as u32;
        if self.wave_size == 64 {
            self.s[(r + 1) & 127] = (m >> 32) as u32;
        }
    }
    fn sset(&mut self, r: u32, v: u32) {
        if r < 128 && self.null != Some(r) {
            self.s[r as usize] = v;
        }
    }
    fn sset64(&mut self, r: u32, v: u64) {
        self.sset(r, v as u32);
        self.sset(r + 1, (v >> 32) as u32);
    }
    #[inline]
    fn vget(&self, reg: u32, lane: u32) -> u32 {
        self.v
            .get((reg * self.wave_size + lane) as usize)
            .copied()
            .unwrap_or(0)
    }
    #[inline]
    fn vset(&mut self, reg: u32, lane: u32, val: u32) {
        if let Some(x) = self.v.get_mut((reg * self.wave_size + lane) as usize) {
            *x = val;
        }
    }
}

/// The workgroup-shared state a wave's instructions touch.
#[derive(Debug)]
pub struct Shared<'a> {
    pub lds: &'a mut [u8],
    pub target: Target,
}

/// Operand value class for constants (which inline-float encoding to use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    F32,
    F16,
    F64,
}

fn inline_const(v: u32, k: K) -> Option<u64> {
    Some(match v {
        128..=192 => u64::from(v - 128),
        193..=208 => (-(i64::from(v) - 192)) as u64,
        240..=248 => {
            let i = (v - 240) as usize;
            match k {
                K::F32 => u64::from(
                    [
                        0x3f000000u32,
                        0xbf000000,
                        0x3f800000,
                        0xbf800000,
                        0x40000000,
                        0xc0000000,
                        0x40800000,
                        0xc0800000,
                        0x3e22f983,
                    ][i],
                ),
                K::F16 => u64::from(
                    [
                        0x3800u32, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
                    ][i],
                ),
                K::F64 => [
                    0x3fe0000000000000u64,
                    0xbfe0000000000000,
                    0x3ff0000000000000,
                    0xbff0000000000000,
                    0x4000000000000000,
                    0xc000000000000000,
                    0x4010000000000000,
                    0xc010000000000000,
                    0x3fc45f306dc9c882,
                ][i],
            }
        }
        _ => return None,
    })
}

/// A resolved source: a scalar value (same for all lanes) or a VGPR.
#[derive(Debug, Clone, Copy)]
enum Src {
    Const(u64),
    V(u32),
}

fn f16_to_f32(h: u32) -> f32 {
    half::f16::from_bits(h as u16).to_f32()
}
fn f32_to_f16(f: f32) -> u32 {
    u32::from(half::f16::from_f32(f).to_bits())
}

/// Executes instructions of one wave.
pub struct Interp<'m, M: Memory> {
    pub mem: &'m mut M,
    pub syntax: Syntax,
    /// Lane-instructions retired (active lanes summed over vector
    /// instructions, plus one per scalar instruction).
    pub lane_instructions: u64,
    pub instructions: u64,
    cache: Vec<(u64, Inst)>,
}

impl<M: Memory> core::fmt::Debug for Interp<'_, M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Interp")
            .field("instructions", &self.instructions)
            .finish()
    }
}

struct Ctx {
    pc: u64,
}

/// Whether a VALU mnemonic computes on floating-point values (its type
/// suffixes name an f16, bf16, f32 or f64 operand or result), so that a
/// denormal flush mode could change its result.
fn is_float_op(name: &str) -> bool {
    ["_f16", "_f32", "_f64", "_bf16"]
        .iter()
        .any(|t| name.contains(t))
}

macro_rules! unimpl {
    ($self:ident, $ctx:ident, $inst:ident) => {
        return Err(ExecError::Unimplemented {
            pc: $ctx.pc,
            text: $inst.display($self.syntax).to_string(),
        })
    };
}

impl<'m, M: Memory> Interp<'m, M> {
    pub fn new(mem: &'m mut M, syntax: Syntax) -> Self {
        Interp {
            mem,
            syntax,
            lane_instructions: 0,
            instructions: 0,
            cache: Vec::new(),
        }
    }

    /// Fetches and decodes the instruction at `pc` (cached by address).
    fn fetch(&mut self, pc: u64) -> Result<Inst, ExecError> {
        // Small direct-mapped cache keyed by address.
        let slot = ((pc >> 2) & 4095) as usize;
        if self.cache.is_empty() {
            self.cache = vec![(u64::MAX, dummy_inst()); 4096];
        }
        if let Some((a, i)) = self.cache.get(slot)
            && *a == pc
        {
            return Ok(*i);
        }
        let mut b = [0u8; 16];
        // Read what is mapped: a kernel may end close to a mapping's end.
        let mut n = 16;
        while n >= 4 {
            if self.mem.fetch(pc, &mut b[..n]).is_ok() {
                break;
            }
            n -= 4;
        }
        if n < 4 {
            let mut w = [0u8; 4];
            let fault = self.mem.fetch(pc, &mut w).err().unwrap_or(MemFault {
                addr: pc,
                len: 4,
                write: false,
            });
            return Err(ExecError::Fault { pc, fault });
        }
        let word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let inst = decode(self.syntax, &b[..n]).map_err(|_| ExecError::Illegal { pc, word })?;
        // v_illegal (the all-zero dword) decodes, and raises an illegal
        // instruction when executed
        if inst.info.name == "v_illegal" {
            return Err(ExecError::Illegal { pc, word });
        }
        if let Some(s) = self.cache.get_mut(slot) {
            *s = (pc, inst);
        }
        Ok(inst)
    }

    /// Runs one instruction of `w`.
    pub fn step(&mut self, w: &mut Wave, sh: &mut Shared<'_>) -> Result<Flow, ExecError> {
        let pc = w.pc;
        let inst = self.fetch(pc)?;
        let ctx = Ctx { pc };
        w.pc = pc.wrapping_add(u64::from(inst.len));
        self.instructions += 1;
        let valu = matches!(
            inst.info.enc,
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p | Enc::Vopd
        );
        if valu && !w.denormals_preserved && is_float_op(inst.sem()) {
            // FLOAT_DENORM_MODE 0-2 flush f32 (or f16/f64) denormal inputs
            // or results to zero (the MI200 ISA reference's MODE register,
            // FP_DENORM); the model computes with denormals kept, so a
            // float instruction under a flushing mode could differ.
            return Err(ExecError::Unimplemented {
                pc,
                text: alloc::format!(
                    "{} under a FLOAT_DENORM_MODE that flushes denormals (only 3, preserve, is modelled for floating-point work)",
                    inst.display(self.syntax)
                ),
            });
        }
        let r = match inst.info.enc {
            Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc => self.salu(w, &inst, &ctx),
            Enc::Sopp => self.sopp(w, &inst, &ctx),
            Enc::Smem => self.smem(w, &inst, &ctx),
            // GFX9 (gfx90a/gfx942) SDWA is decoded and printed, not interpreted
            Enc::Vop1 | Enc::Vop2 if crate::decode::is_sdwa(self.syntax.target, &inst) => {
                unimpl!(self, ctx, inst)
            }
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p => self.valu(w, &inst, &ctx),
            Enc::Ds => self.ds(w, sh, &inst, &ctx),
            Enc::Flat | Enc::Global | Enc::Scratch => self.flat(w, sh, &inst, &ctx),
            Enc::Mubuf => self.mubuf(w, &inst, &ctx),
            Enc::Vopd => self.vopd(w, &inst, &ctx),
            _ => unimpl!(self, ctx, inst),
        };
        if matches!(
            inst.info.enc,
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p
        ) {
            self.lane_instructions += u64::from(w.exec().count_ones());
        } else {
            self.lane_instructions += 1;
        }
        r
    }

    // ---------------------------------------------------------------- scalar

    fn sread(&self, w: &Wave, v: u32, lit: Option<u32>, k: K) -> u32 {
        match v {
            0..=127 => w.s[v as usize],
            251 => u32::from(w.vcc() == 0),
            252 => u32::from(w.exec() == 0),
            253 => u32::from(w.scc),
            255 => lit.unwrap_or(0),
            235..=238 => (self.sread64(w, v, lit, k) >> 32) as u32,
            _ => inline_const(v, k).unwrap_or(0) as u32,
        }
    }

    fn sread64(&self, w: &Wave, v: u32, lit: Option<u32>, k: K) -> u64 {
        match v {
            0..=127 => u64::from(w.s[v as usize]) | u64::from(w.s[(v as usize + 1) & 127]) << 32,
            255 => {
                let l = u64::from(lit.unwrap_or(0));
                if k == K::F64 { l << 32 } else { l }
            }
            235 => w.apertures.shared,
            236 => w.apertures.shared.wrapping_add(APERTURE_SIZE - 1),
            237 => w.apertures.private,
            238 => w.apertures.private.wrapping_add(APERTURE_SIZE - 1),
            251..=253 => u64::from(self.sread(w, v, lit, k)),
            _ => inline_const(v, if k == K::F32 { K::F64 } else { k }).unwrap_or(0),
        }
    }

    /// `s_getreg_b32`'s value for `simm16` (`{size - 1[15:11],
    /// offset[10:6], id[5:0]}`, SOPK in the ISA references): on GFX9,
    /// `HW_REG_SH_MEM_BASES` (id 15, LLVM's `ID_MEM_BASES`) reads the
    /// wave's `SH_MEM_BASES` back from its apertures
    /// ([`Apertures::from_sh_mem_bases`]'s inverse: `PRIVATE_BASE` 15:0,
    /// `SHARED_BASE` 31:16), which gfx90a code reads to build flat
    /// private and shared addresses (AMDGPUUsage: GFX9 has no aperture
    /// registers before gfx940 reads them so). **Model convention**:
    /// every other hardware register reads 0.
    fn getreg(&self, w: &Wave, simm16: u16) -> u32 {
        const ID_MEM_BASES: u16 = 15;
        let (id, offset, size) = (simm16 & 0x3f, (simm16 >> 6) & 0x1f, (simm16 >> 11) + 1);
        let full = if id == ID_MEM_BASES && self.syntax.target.is_gfx9() {
            let private = (w.apertures.private >> 48) as u32 & 0xffff;
            let shared = (w.apertures.shared >> 48) as u32 & 0xffff;
            shared << 16 | private
        } else {
            0
        };
        let mask = if size >= 32 {
            u32::MAX
        } else {
            (1u32 << size) - 1
        };
        (full >> offset) & mask
    }

    fn salu(&mut self, w: &mut Wave, inst: &Inst, ctx: &Ctx) -> Result<Flow, ExecError> {
        let name = inst.sem();
        let q = inst.words[0];
        let sdst = (q >> 16) & 0x7f;
        let lit = inst.literal;
        let is64 = |s: &str| s.ends_with("_b64") || s.ends_with("_u64") || s.ends_with("_i64");
        // float inline constants: the f32 encoding for 32-bit operations,
        // the f64 one for 64-bit operations
        let k = if name.contains("_f32") || name.contains("_f16") || !is64(name) {
            K::F32
        } else {
            K::F64
        };
        match inst.info.enc {
            Enc::Sopk => {
                let imm = q & 0xffff;
                let simm = i32::from(imm as u16 as i16) as u32;
                let d = w.s[sdst as usize];
                match name {
                    "s_movk_i32" => w.sset(sdst, simm),
                    "s_cmovk_i32" => {
                        if w.scc {
                            w.sset(sdst, simm)
                        }
                    }
                    "s_addk_i32" | "s_addk_co_i32" => {
                        let (r, o) = (d as i32).overflowing_add(simm as i32);
                        w.scc = o;
                        w.sset(sdst, r as u32);
                    }
                    "s_mulk_i32" => w.sset(sdst, (d as i32).wrapping_mul(simm as i32) as u32),
                    "s_version" | "s_waitcnt_vscnt" | "s_waitcnt_vmcnt" | "s_waitcnt_expcnt"
                    | "s_waitcnt_lgkmcnt" | "s_setreg_b32" | "s_setreg_imm32_b32" => {}
                    "s_getreg_b32" => {
                        let v = self.getreg(w, imm as u16);
                        w.sset(sdst, v)
                    }
                    _ => {
                        if let Some(c) = name.strip_prefix("s_cmpk_") {
                            let (op, ty) = c.split_once('_').unwrap_or(("", ""));
                            let (a, b) = if ty == "u32" {
                                (i64::from(d), i64::from(imm))
                            } else {
                                (i64::from(d as i32), i64::from(simm as i32))
                            };
                            w.scc = cmp_int(op, a, b);
                        } else {
                            unimpl!(self, ctx, inst)
                        }
                    }
                }
                return Ok(Flow::Next);
            }
            Enc::Sopc => {
                let (s0, s1) = (q & 0xff, (q >> 8) & 0xff);
                let c = name.strip_prefix("s_").unwrap_or(name);
                if let Some(rest) = c.strip_prefix("cmp_") {
                    let (op, ty) = rest.split_once('_').unwrap_or(("", ""));
                    w.scc = match ty {
                        "i32" => cmp_int(
                            op,
                            i64::from(self.sread(w, s0, lit, k) as i32),
                            i64::from(self.sread(w, s1, lit, k) as i32),
                        ),
                        "u32" => cmp_int(
                            op,
                            i64::from(self.sread(w, s0, lit, k)),
                            i64::from(self.sread(w, s1, lit, k)),
                        ),
                        "u64" => {
                            let a = self.sread64(w, s0, lit, K::F64);
                            let b = self.sread64(w, s1, lit, K::F64);
                            if op == "eq" { a == b } else { a != b }
                        }
                        "f32" => cmp_float(
                            op,
                            f64::from(f32::from_bits(self.sread(w, s0, lit, K::F32))),
                            f64::from(f32::from_bits(self.sread(w, s1, lit, K::F32))),
                        ),
                        _ => unimpl!(self, ctx, inst),
                    };
                } else if let Some(rest) = c.strip_prefix("bitcmp") {
                    let bit =
                        self.sread(w, s1, lit, k) & if rest.ends_with("64") { 63 } else { 31 };
                    let v = if rest.ends_with("64") {
                        self.sread64(w, s0, lit, K::F64)
                    } else {
                        u64::from(self.sread(w, s0, lit, k))
                    };
                    let set = (v >> bit) & 1 == 1;
                    w.scc = if rest.starts_with('0') { !set } else { set };
                } else {
                    unimpl!(self, ctx, inst)
                }
                return Ok(Flow::Next);
            }
            Enc::Sop1 => {
                let s0 = q & 0xff;
                // gfx12 split barrier: the signal half; s_barrier_wait blocks.
                if matches!(name, "s_barrier_signal" | "s_barrier_signal_isfirst") {
                    return Ok(Flow::Next);
                }
                if is64(name)
                    && !name.starts_with("s_bcnt")
                    && !name.starts_with("s_ctz")
                    && !name.starts_with("s_clz")
                    && !name.starts_with("s_cls")
                {
                    let a = self.sread64(w, s0, lit, K::F64);
                    let exec = w.exec();
                    let r = match name {
                        "s_mov_b64" => a,
                        "s_not_b64" => {
                            w.scc = !a != 0;
                            !a
                        }
                        "s_getpc_b64" => w.pc,
                        "s_setpc_b64" => {
                            w.pc = a;
                            return Ok(Flow::Next);
                        }
                        "s_swappc_b64" => {
                            let ret = w.pc;
                            w.pc = a;
                            ret
                        }
                        "s_and_saveexec_b64"
                        | "s_or_saveexec_b64"
                        | "s_xor_saveexec_b64"
                        | "s_and_not1_saveexec_b64"
                        | "s_or_not1_saveexec_b64" => {
                            let ne = match name {
                                "s_and_saveexec_b64" => a & exec,
                                "s_or_saveexec_b64" => a | exec,
                                "s_xor_saveexec_b64" => a ^ exec,
                                "s_and_not1_saveexec_b64" => a & !exec,
                                _ => a | !exec,
                            };
                            w.set_exec(ne);
                            w.scc = ne != 0;
                            exec
                        }
                        "s_brev_b64" => a.reverse_bits(),
                        "s_cmov_b64" => {
                            if !w.scc {
                                return Ok(Flow::Next);
                            }
                            a
                        }
                        _ => unimpl!(self, ctx, inst),
                    };
                    w.sset64(sdst, r);
                    return Ok(Flow::Next);
                }
                let a = if name.ends_with("_b64") {
                    0
                } else {
                    self.sread(w, s0, lit, k)
                };
                let a64 = self.sread64(w, s0, lit, K::F64);
                let exec = w.exec();
                let r: u32 = match name {
                    "s_mov_b32" => a,
                    "s_cmov_b32" => {
                        if !w.scc {
                            return Ok(Flow::Next);
                        }
                        a
                    }
                    "s_not_b32" => {
                        w.scc = !a != 0;
                        !a
                    }
                    "s_brev_b32" => a.reverse_bits(),
                    "s_bcnt1_i32_b32" => {
                        w.scc = a != 0;
                        a.count_ones()
                    }
                    "s_bcnt1_i32_b64" => {
                        w.scc = a64 != 0;
                        a64.count_ones()
                    }
                    "s_bcnt0_i32_b32" => {
                        let r = a.count_zeros();
                        w.scc = r != 0;
                        r
                    }
                    "s_ctz_i32_b32" => {
                        if a == 0 {
                            u32::MAX
                        } else {
                            a.trailing_zeros()
                        }
                    }
                    "s_ctz_i32_b64" => {
                        if a64 == 0 {
                            u32::MAX
                        } else {
                            a64.trailing_zeros()
                        }
                    }
                    "s_clz_i32_u32" => {
                        if a == 0 {
                            u32::MAX
                        } else {
                            a.leading_zeros()
                        }
                    }
                    "s_sext_i32_i8" => a as u8 as i8 as i32 as u32,
                    "s_sext_i32_i16" => a as u16 as i16 as i32 as u32,
                    "s_abs_i32" => {
                        let r = (a as i32).unsigned_abs();
                        w.scc = r != 0;
                        r
                    }
                    "s_and_saveexec_b32"
                    | "s_or_saveexec_b32"
                    | "s_xor_saveexec_b32"
                    | "s_and_not1_saveexec_b32"
                    | "s_or_not1_saveexec_b32"
                    | "s_and_not0_saveexec_b32" => {
                        let a = u64::from(a);
                        let e = exec & 0xffff_ffff;
                        let ne = match name {
                            "s_and_saveexec_b32" => a & e,
                            "s_or_saveexec_b32" => a | e,
                            "s_xor_saveexec_b32" => a ^ e,
                            "s_and_not1_saveexec_b32" => a & !e,
                            "s_and_not0_saveexec_b32" => !a & e,
                            _ => a | !e,
                        } & 0xffff_ffff;
                        w.set_exec(ne);
                        w.scc = ne != 0;
                        e as u32
                    }
                    "s_bitset0_b32" => w.s[sdst as usize] & !(1 << (a & 31)),
                    "s_bitset1_b32" => w.s[sdst as usize] | (1 << (a & 31)),
                    "s_cvt_f32_i32" => (a as i32 as f32).to_bits(),
                    "s_cvt_f32_u32" => (a as f32).to_bits(),
                    "s_cvt_i32_f32" => f32_to_i32(f32::from_bits(a)) as u32,
                    "s_cvt_u32_f32" => f32_to_u32(f32::from_bits(a)),
                    "s_cvt_f32_f16" => f16_to_f32(a).to_bits(),
                    "s_cvt_f16_f32" => f32_to_f16(f32::from_bits(a)),
                    _ => unimpl!(self, ctx, inst),
                };
                w.sset(sdst, r);
                return Ok(Flow::Next);
            }
            _ => {}
        }
        // SOP2
        let (s0, s1) = (q & 0xff, (q >> 8) & 0xff);
        if is64(name) && !matches!(name, "s_bfm_b64") {
            let a = self.sread64(w, s0, lit, K::F64);
            let shift_like = matches!(
                name,
                "s_lshl_b64" | "s_lshr_b64" | "s_ashr_i64" | "s_bfe_u64" | "s_bfe_i64"
            );
            let b = if shift_like {
                u64::from(self.sread(w, s1, lit, k))
            } else {
                self.sread64(w, s1, lit, K::F64)
            };
            let r = match name {
                "s_and_b64" => a & b,
                "s_or_b64" => a | b,
                "s_xor_b64" => a ^ b,
                "s_nand_b64" => !(a & b),
                "s_nor_b64" => !(a | b),
                "s_xnor_b64" => !(a ^ b),
                "s_and_not1_b64" => a & !b,
                "s_or_not1_b64" => a | !b,
                "s_lshl_b64" => a << (b & 63),
                "s_lshr_b64" => a >> (b & 63),
                "s_ashr_i64" => ((a as i64) >> (b & 63)) as u64,
                "s_cselect_b64" => {
                    let r = if w.scc { a } else { b };
                    w.sset64(sdst, r);
                    return Ok(Flow::Next);
                }
                "s_add_nc_u64" => {
                    w.sset64(sdst, a.wrapping_add(b));
                    return Ok(Flow::Next);
                }
                "s_sub_nc_u64" => {
                    w.sset64(sdst, a.wrapping_sub(b));
                    return Ok(Flow::Next);
                }
                "s_mul_u64" => {
                    w.sset64(sdst, a.wrapping_mul(b));
                    return Ok(Flow::Next);
                }
                "s_bfe_u64" | "s_bfe_i64" => {
                    let off = b & 63;
                    let width = (b >> 16) & 127;
                    if width == 0 {
                        0
                    } else {
                        let v = a >> off;
                        let m = if width >= 64 {
                            u64::MAX
                        } else {
                            (1u64 << width) - 1
                        };
                        let v = v & m;
                        if name.ends_with("i64") && width < 64 && (v >> (width - 1)) & 1 == 1 {
                            v | !m
                        } else {
                            v
                        }
                    }
                }
                _ => unimpl!(self, ctx, inst),
            };
            w.scc = r != 0;
            w.sset64(sdst, r);
            return Ok(Flow::Next);
        }
        let a = self.sread(w, s0, lit, k);
        let b = self.sread(w, s1, lit, k);
        let r: u32 = match name {
            "s_add_u32" | "s_add_co_u32" => {
                let (r, c) = a.overflowing_add(b);
                w.scc = c;
                r
            }
            "s_sub_u32" | "s_sub_co_u32" => {
                let (r, c) = a.overflowing_sub(b);
                w.scc = c;
                r
            }
            "s_add_i32" | "s_add_co_i32" => {
                let (r, o) = (a as i32).overflowing_add(b as i32);
                w.scc = o;
                r as u32
            }
            "s_sub_i32" | "s_sub_co_i32" => {
                let (r, o) = (a as i32).overflowing_sub(b as i32);
                w.scc = o;
                r as u32
            }
            "s_addc_u32" | "s_add_co_ci_u32" => {
                let s = u64::from(a) + u64::from(b) + u64::from(w.scc);
                w.scc = s >> 32 != 0;
                s as u32
            }
            "s_subb_u32" | "s_sub_co_ci_u32" => {
                let s = i64::from(a) - i64::from(b) - i64::from(w.scc);
                w.scc = s < 0;
                s as u32
            }
            "s_and_b32" => a & b,
            "s_or_b32" => a | b,
            "s_xor_b32" => a ^ b,
            "s_nand_b32" => !(a & b),
            "s_nor_b32" => !(a | b),
            "s_xnor_b32" => !(a ^ b),
            "s_and_not1_b32" => a & !b,
            "s_or_not1_b32" => a | !b,
            "s_lshl_b32" => a << (b & 31),
            "s_lshr_b32" => a >> (b & 31),
            "s_ashr_i32" => ((a as i32) >> (b & 31)) as u32,
            "s_lshl1_add_u32" | "s_lshl2_add_u32" | "s_lshl3_add_u32" | "s_lshl4_add_u32" => {
                let n = u32::from(name.as_bytes()[6] - b'0');
                let s = (u64::from(a) << n) + u64::from(b);
                w.scc = s >> 32 != 0;
                s as u32
            }
            "s_min_i32" => {
                w.scc = (a as i32) < (b as i32);
                (a as i32).min(b as i32) as u32
            }
            "s_min_u32" => {
                w.scc = a < b;
                a.min(b)
            }
            "s_max_i32" => {
                w.scc = (a as i32) > (b as i32);
                (a as i32).max(b as i32) as u32
            }
            "s_max_u32" => {
                w.scc = a > b;
                a.max(b)
            }
            "s_mul_i32" => {
                w.sset(sdst, (a as i32).wrapping_mul(b as i32) as u32);
                return Ok(Flow::Next);
            }
            "s_mul_hi_u32" => {
                w.sset(sdst, ((u64::from(a) * u64::from(b)) >> 32) as u32);
                return Ok(Flow::Next);
            }
            "s_mul_hi_i32" => {
                w.sset(
                    sdst,
                    ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32,
                );
                return Ok(Flow::Next);
            }
            "s_cselect_b32" => {
                w.sset(sdst, if w.scc { a } else { b });
                return Ok(Flow::Next);
            }
            "s_bfe_u32" | "s_bfe_i32" => {
                let off = b & 31;
                let width = (b >> 16) & 127;
                if width == 0 {
                    0
                } else {
                    let v = a >> off;
                    let m = if width >= 32 {
                        u32::MAX
                    } else {
                        (1u32 << width) - 1
                    };
                    let v = v & m;
                    if name.ends_with("i32") && width < 32 && (v >> (width - 1)) & 1 == 1 {
                        v | !m
                    } else {
                        v
                    }
                }
            }
            "s_bfm_b32" => {
                let m = if b & 31 == 0 && a & 31 == 0 {
                    0
                } else {
                    ((1u64 << (a & 31)) - 1) as u32
                };
                w.sset(sdst, m << (b & 31));
                return Ok(Flow::Next);
            }
            "s_bfm_b64" => {
                let m = (1u64 << (a & 63)).wrapping_sub(1);
                w.sset64(sdst, m << (b & 63));
                return Ok(Flow::Next);
            }
            "s_pack_ll_b32_b16" => {
                w.sset(sdst, (a & 0xffff) | (b << 16));
                return Ok(Flow::Next);
            }
            "s_pack_lh_b32_b16" => {
                w.sset(sdst, (a & 0xffff) | (b & 0xffff_0000));
                return Ok(Flow::Next);
            }
            "s_pack_hh_b32_b16" => {
                w.sset(sdst, (a >> 16) | (b & 0xffff_0000));
                return Ok(Flow::Next);
            }
            "s_pack_hl_b32_b16" => {
                w.sset(sdst, (a >> 16) | (b << 16));
                return Ok(Flow::Next);
            }
            "s_absdiff_i32" => (a as i32).wrapping_sub(b as i32).unsigned_abs(),
            _ => unimpl!(self, ctx, inst),
        };
        w.scc = match name {
            "s_add_u32" | "s_sub_u32" | "s_add_i32" | "s_sub_i32" | "s_addc_u32" | "s_subb_u32"
            | "s_add_co_u32" | "s_sub_co_u32" | "s_add_co_i32" | "s_sub_co_i32"
            | "s_add_co_ci_u32" | "s_sub_co_ci_u32" | "s_min_i32" | "s_min_u32" | "s_max_i32"
            | "s_max_u32" | "s_lshl1_add_u32" | "s_lshl2_add_u32" | "s_lshl3_add_u32"
            | "s_lshl4_add_u32" => w.scc,
            _ => r != 0,
        };
        w.sset(sdst, r);
        Ok(Flow::Next)
    }

    fn sopp(&mut self, w: &mut Wave, inst: &Inst, ctx: &Ctx) -> Result<Flow, ExecError> {
        let imm = inst.words[0] & 0xffff;
        let target = w.pc.wrapping_add((i64::from(imm as u16 as i16) * 4) as u64);
        let take = match inst.sem() {
            "s_branch" => true,
            "s_cbranch_scc0" => !w.scc,
            "s_cbranch_scc1" => w.scc,
            "s_cbranch_vccz" => w.vcc() == 0,
            "s_cbranch_vccnz" => w.vcc() != 0,
            "s_cbranch_execz" => w.exec() == 0,
            "s_cbranch_execnz" => w.exec() != 0,
            "s_endpgm" => {
                w.done = true;
                return Ok(Flow::End);
            }
            "s_barrier" | "s_barrier_wait" => return Ok(Flow::Barrier),
            "s_waitcnt"
            | "s_wait_loadcnt"
            | "s_wait_storecnt"
            | "s_wait_dscnt"
            | "s_wait_kmcnt"
            | "s_wait_expcnt"
            | "s_wait_samplecnt"
            | "s_wait_bvhcnt"
            | "s_wait_loadcnt_dscnt"
            | "s_wait_storecnt_dscnt"
            | "s_wait_alu"
            | "s_wait_idle"
            | "s_waitcnt_depctr" => {
                // Every operation has completed by now; the counters are zero.
                w.counters.load = 0;
                w.counters.store = 0;
                w.counters.ds = 0;
                w.counters.km = 0;
                false
            }
            "s_nop"
            | "s_delay_alu"
            | "s_clause"
            | "s_sendmsg"
            | "s_setprio"
            | "s_sleep"
            | "s_icache_inv"
            | "s_set_inst_prefetch_distance"
            | "s_code_end"
            | "s_trap" => false,
            _ => unimpl!(self, ctx, inst),
        };
        if take {
            w.pc = target;
        }
        Ok(Flow::Next)
    }

    fn smem(&mut self, w: &mut Wave, inst: &Inst, ctx: &Ctx) -> Result<Flow, ExecError> {
        let name = inst.sem();
        let (w0, w1) = (inst.words[0], inst.words[1]);
        let sbase = (w0 & 0x3f) * 2;
        let sdata = (w0 >> 6) & 0x7f;
        let g12 = self.syntax.target.is_gfx12();
        let offset = if g12 {
            i64::from(((w1 & 0xff_ffff) << 8) as i32 >> 8)
        } else {
            i64::from(((w1 & 0x1f_ffff) << 11) as i32 >> 11)
        };
        let soff = w1 >> 25;
        let (offset, soffv) = if self.syntax.target.is_gfx9() {
            // GFX9: imm (17) selects an immediate offset, else the offset
            // field names an SGPR; soe (14) adds the SGPR in 63:57
            let imm = (w0 >> 17) & 1 == 1;
            let soe = (w0 >> 14) & 1 == 1;
            let off = if imm {
                offset
            } else {
                i64::from(self.sread(w, w1 & 0x7f, None, K::F32))
            };
            let so = if soe {
                u64::from(self.sread(w, soff, None, K::F32))
            } else {
                0
            };
            (off, so)
        } else if soff == 124 {
            (offset, 0)
        } else {
            (offset, u64::from(self.sread(w, soff, None, K::F32)))
        };
        // GFX12's sub-dword scalar loads (`s_load_u8/i8/u16/i16` and their
        // `s_buffer_` forms, new in LLVM's GFX12 SMEM table): one SGPR,
        // zero- or sign-extended. Byte loads take any address; 16-bit loads
        // drop address bit 0 as dword loads drop bits 1:0 (a model
        // convention for a misaligned address, which LLVM never emits).
        if let Some((bytes, signed)) = match name
            .trim_start_matches("s_buffer_")
            .trim_start_matches("s_")
        {
            "load_u8" => Some((1usize, false)),
            "load_i8" => Some((1, true)),
            "load_u16" => Some((2, false)),
            "load_i16" => Some((2, true)),
            _ => None,
        } {
            let base = if name.starts_with("s_buffer") {
                u64::from(w.s[sbase as usize]) | u64::from(w.s[sbase as usize + 1] & 0xffff) << 32
            } else {
                u64::from(w.s[sbase as usize]) | u64::from(w.s[sbase as usize + 1]) << 32
            };
            let addr = base.wrapping_add(offset as u64).wrapping_add(soffv) & !(bytes as u64 - 1);
            let mut buf = [0u8; 2];
            self.mem
                .read(addr, &mut buf[..bytes])
                .map_err(|fault| ExecError::Fault { pc: ctx.pc, fault })?;
            let v = match (bytes, signed) {
                (1, false) => u32::from(buf[0]),
                (1, true) => buf[0] as i8 as i32 as u32,
                (_, false) => u32::from(u16::from_le_bytes(buf)),
                (_, true) => i16::from_le_bytes(buf) as i32 as u32,
            };
            w.sset(sdata, v);
            w.counters.issued[3] += 1;
            return Ok(Flow::Next);
        }
        let n = match name {
            "s_load_b32" | "s_buffer_load_b32" => 1,
            "s_load_b64" | "s_buffer_load_b64" => 2,
            "s_load_b96" | "s_buffer_load_b96" => 3,
            "s_load_b128" | "s_buffer_load_b128" => 4,
            "s_load_b256" | "s_buffer_load_b256" => 8,
            "s_load_b512" | "s_buffer_load_b512" => 16,
            "s_dcache_inv" | "s_gl1_inv" => return Ok(Flow::Next),
            _ => unimpl!(self, ctx, inst),
        };
        let base = if name.starts_with("s_buffer") {
            u64::from(w.s[sbase as usize]) | u64::from(w.s[sbase as usize + 1] & 0xffff) << 32
        } else {
            u64::from(w.s[sbase as usize]) | u64::from(w.s[sbase as usize + 1]) << 32
        };
        let addr = base.wrapping_add(offset as u64).wrapping_add(soffv) & !3;
        let mut buf = [0u8; 64];
        self.mem
            .read(addr, &mut buf[..n * 4])
            .map_err(|fault| ExecError::Fault { pc: ctx.pc, fault })?;
        let al = match n {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        let d = sdata / al * al;
        for i in 0..n {
            let c = &buf[i * 4..i * 4 + 4];
            w.sset(d + i as u32, u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        }
        w.counters.issued[3] += 1;
        Ok(Flow::Next)
    }

    fn mubuf(&mut self, w: &mut Wave, inst: &Inst, ctx: &Ctx) -> Result<Flow, ExecError> {
        if self.syntax.target.is_gfx9() {
            return self.mubuf9(w, inst, ctx);
        }
        match inst.sem() {
            "buffer_gl0_inv" | "buffer_gl1_inv" => Ok(Flow::Next),
            _ => unimpl!(self, ctx, inst),
        }
    }
}

fn dummy_inst() -> Inst {
    Inst {
        info: &crate::table::OPS_GFX1100[0],
        words: [0; 4],
        len: 4,
        literal: None,
    }
}

pub(crate) fn cmp_int(op: &str, a: i64, b: i64) -> bool {
    match op {
        "eq" => a == b,
        "lg" | "ne" => a != b,
        "gt" => a > b,
        "ge" => a >= b,
        "lt" => a < b,
        "le" => a <= b,
        "t" => true,
        _ => false,
    }
}

pub(crate) fn cmp_float(op: &str, a: f64, b: f64) -> bool {
    use core::cmp::Ordering::{Equal, Greater, Less};
    // None: unordered (a NaN operand).
    let o = a.partial_cmp(&b);
    match op {
        "f" => false,
        "lt" => o == Some(Less),
        "eq" => o == Some(Equal),
        "le" => matches!(o, Some(Less | Equal)),
        "gt" => o == Some(Greater),
        "lg" => matches!(o, Some(Less | Greater)),
        "ge" => matches!(o, Some(Greater | Equal)),
        "o" => o.is_some(),
        "u" => o.is_none(),
        "nge" => !matches!(o, Some(Greater | Equal)),
        "nlg" => !matches!(o, Some(Less | Greater)),
        "ngt" => o != Some(Greater),
        "nle" => !matches!(o, Some(Less | Equal)),
        "neq" => o != Some(Equal),
        "nlt" => o != Some(Less),
        "t" => true,
        _ => false,
    }
}

/// f32 to i32 as V_CVT_I32_F32: NaN gives 0, out of range saturates.
pub(crate) fn f32_to_i32(f: f32) -> i32 {
    if f.is_nan() { 0 } else { f as i32 }
}
pub(crate) fn f32_to_u32(f: f32) -> u32 {
    if f.is_nan() { 0 } else { f as u32 }
}

impl<M: Memory> Interp<'_, M> {
    fn resolve(&self, w: &Wave, v: u32, lit: Option<u32>, k: K, wide: bool) -> Src {
        if v >= 256 {
            return Src::V(v - 256);
        }
        if wide {
            Src::Const(self.sread64(w, v, lit, k))
        } else {
            Src::Const(u64::from(self.sread(w, v, lit, k)))
        }
    }

    #[inline]
    fn get(&self, w: &Wave, s: Src, lane: u32) -> u32 {
        match s {
            Src::Const(c) => c as u32,
            Src::V(r) => w.vget(r, lane),
        }
    }
    #[inline]
    fn get64(&self, w: &Wave, s: Src, lane: u32) -> u64 {
        match s {
            Src::Const(c) => c,
            Src::V(r) => u64::from(w.vget(r, lane)) | u64::from(w.vget(r + 1, lane)) << 32,
        }
    }

    fn check_vgpr(&self, w: &Wave, reg: u32, n: u32, ctx: &Ctx) -> Result<(), ExecError> {
        if reg + n > w.nvgpr {
            return Err(ExecError::RegisterOutOfRange {
                pc: ctx.pc,
                what: "VGPR",
                index: reg + n - 1,
            });
        }
        Ok(())
    }
}

pub(crate) mod valu;
pub(crate) mod vmem;

#[cfg(test)]
mod aperture_tests {
    use super::Apertures;

    /// Worked by hand: KFD's GC 9.4.3 process bases 0x00010002 (LDS
    /// 1 << 48, scratch 2 << 48, `kfd_init_apertures_v9()`), and
    /// `init_compute_vmid()`'s 0x60006000 with its documented layout.
    #[test]
    fn sh_mem_bases_place_the_apertures() {
        let a = Apertures::from_sh_mem_bases(0x0001_0002);
        assert_eq!(
            (a.shared, a.private),
            (0x0001_0000_0000_0000, 0x0002_0000_0000_0000)
        );
        let b = Apertures::from_sh_mem_bases(0x6000_6000);
        assert_eq!(
            (b.shared, b.private),
            (0x6000_0000_0000_0000, 0x6000_0001_0000_0000)
        );
        assert_eq!(b.classify(0x6000_0000_0000_0010), (1, 0x10));
        assert_eq!(b.classify(0x6000_0001_0000_0020), (2, 0x20));
        assert_eq!(b.classify(0x7fff_0000_1000), (0, 0x7fff_0000_1000));
    }
}
