//! The packets a PM4 compute queue carries for a dispatch, as tinygrad
//! 0.14.0's `AMDComputeQueue` (`ops_amd.py`) emits them and as Linux's
//! `gfx_v11_0.c` does for its own compute rings. Encodings:
//! [`crate::decode::pm4::compute`] (`nvd.h`, `kfd_pm4_headers_ai.h`,
//! `gc_11_0_0_sh_mask.h`).
//!
//! What the model does with each, and why:
//! - `SET_SH_REG`: stores the `COMPUTE_*` registers from
//!   `COMPUTE_DISPATCH_INITIATOR` to `COMPUTE_USER_DATA_15` (GC dwords
//!   0x1ba0..0x1bf0, `gc_11_0_0_offset.h`), per queue (**model
//!   convention**: a real pipe keeps one set per queue slot too, which is
//!   why tinygrad writes all of them before each dispatch). A register
//!   outside that window stops the queue, named by its offset.
//! - `DISPATCH_DIRECT`: runs the waves on the model's shader engines
//!   ([`crate::wave::Shader::dispatch_registers`]) from those registers:
//!   entry `COMPUTE_PGM_LO/HI` << 8, `RSRC1/2/3`, wave32 from the
//!   initiator's `CS_W32_EN`, user SGPRs from `COMPUTE_USER_DATA_*`,
//!   group size from `COMPUTE_NUM_THREAD_*`, thread-group counts from the
//!   packet, LDS from `RSRC2.LDS_SIZE` (512-byte units, tinygrad's
//!   `AMDProgram`: `(group_segment_size + 511) // 512`), scratch per lane
//!   from `COMPUTE_TMPRING_SIZE.WAVESIZE` (256-byte units per wave) when
//!   `RSRC2` enables the private segment. The dispatch completes before
//!   the next packet (**model convention**: the waves run to their end
//!   inside the packet). `USE_THREAD_DIMENSIONS`, a non-zero start or a
//!   clear `COMPUTE_SHADER_EN` stop the queue.
//! - `ACQUIRE_MEM` (8 dwords; 7 on gfx9, which has no `GCR_CNTL`),
//!   `EVENT_WRITE(CS_PARTIAL_FLUSH)`: nothing to wait for or
//!   write back: the model's shader and CP access memory directly, with
//!   no caches, and every dispatch has ended when its packet is done.
//! - `RELEASE_MEM` at end of pipe (`CACHE_FLUSH_AND_INV_TS_EVENT`, index
//!   5: `gfx_v11_0_ring_emit_fence()`, tinygrad's `release_mem`): writes
//!   nothing, the low 32 bits, 64 bits or the GPU clock (the model's
//!   nanosecond counter, **model value**) to memory. `INT_SEL` 1
//!   (interrupt only) or 2 (interrupt once the write is confirmed, what
//!   `amdgpu_fence_emit()`'s fences ask for) then raises the end-of-pipe
//!   interrupt with the packet's context id (dword 7, `src_data[0]` in
//!   `gfx_v11_0_eop_irq()`), handed to the device's interrupt line
//!   ([`CpModel::take_eop_interrupts`]); other `INT_SEL` values stop the
//!   queue.
//! - `WAIT_REG_MEM` on memory: compares `(value & mask)` with the
//!   reference by the function `nvd.h` lists; a wait not yet met stalls
//!   the queue at the packet, which is tried again at the next CP step
//!   (so a host waiting on the model never blocks it: the wait is the
//!   host's, bounded by its own clock).
//! - `WAIT_REG_MEM` on registers: only the write-then-wait pair on the
//!   HDP flush registers (`BIF_BX_PF0_GPU_HDP_FLUSH_REQ/DONE`), which
//!   tinygrad's `memory_barrier` and Linux's `gfx_v11_0_ring_emit_hdp_flush()`
//!   emit: the model's HDP holds no writes, so the flush is done at once
//!   and `DONE` reads what was requested (**model convention**). Any other
//!   register wait stops the queue.
//! - `INDIRECT_BUFFER` on a ring (Linux's IB tests and jobs,
//!   `gfx_v11_0_ring_emit_ib_compute()`; tinygrad's bound queues,
//!   `AMDComputeQueue.bind`): run by [`super::pm4`] (`ring_ib`), in the
//!   queue's own VMID.

use super::pm4::Pm4Error;
use super::{CpError, CpModel};
use crate::decode::pm4::{self as d, compute as c, opcode};
use crate::gmc::Access;
use crate::log::Keep;
use core::sync::atomic::Ordering;

/// GC dword offset of `COMPUTE_DISPATCH_INITIATOR`, the window's first
/// register (`gc_11_0_0_offset.h`).
const WINDOW_START: u32 = 0x1ba0;
/// Registers in the window, through `COMPUTE_USER_DATA_15` (0x1bef).
pub(super) const WINDOW: usize = 0x50;

/// `gc_11_0_0_offset.h` GC dword offsets, relative to [`WINDOW_START`].
mod reg {
    pub const START_X: usize = 0x1ba4 - 0x1ba0;
    pub const NUM_THREAD_X: usize = 0x1ba7 - 0x1ba0;
    pub const PGM_LO: usize = 0x1bac - 0x1ba0;
    pub const PGM_HI: usize = 0x1bad - 0x1ba0;
    pub const PGM_RSRC1: usize = 0x1bb2 - 0x1ba0;
    pub const PGM_RSRC2: usize = 0x1bb3 - 0x1ba0;
    pub const TMPRING_SIZE: usize = 0x1bb8 - 0x1ba0;
    pub const PGM_RSRC3: usize = 0x1bc8 - 0x1ba0;
    pub const USER_DATA_0: usize = 0x1be0 - 0x1ba0;
}

/// Where the CP finds the registers its packets name: the GC's segment-0
/// base (SET_SH_REG offsets are absolute dwords minus
/// `PACKET3_SET_SH_REG_START`, as `gfx_v11_0.c` computes them from
/// `SOC15_REG_OFFSET(GC, 0, ...)`), and the HDP flush pair (absolute
/// dwords) a register `WAIT_REG_MEM` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pm4Registers {
    pub gc_seg0: u32,
    pub hdp_flush: Option<(u32, u32)>,
}

/// `WAIT_REG_MEM`'s comparison (`nvd.h`: 0 always, 1 <, 2 <=, 3 ==, 4 !=,
/// 5 >=, 6 >); `None` for the reserved 7.
pub(crate) fn compare(function: u32, value: u32, reference: u32) -> Option<bool> {
    Some(match function {
        0 => true,
        1 => value < reference,
        2 => value <= reference,
        3 => value == reference,
        4 => value != reference,
        5 => value >= reference,
        6 => value > reference,
        _ => return None,
    })
}

impl CpModel {
    /// Tells the CP where its packets' registers are ([`Pm4Registers`]).
    pub fn set_pm4_registers(&mut self, r: Pm4Registers) {
        self.pm4_registers = r;
    }

    /// The registers PM4 packets name (the SDMA engines poll the same
    /// HDP flush pair).
    pub fn pm4_registers(&self) -> Pm4Registers {
        self.pm4_registers
    }

    /// Executes compute packet `op` (header at ring dword `at`, `body`
    /// dwords after it). `Ok(false)`: a wait not yet met, the packet stays.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pm4_compute(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        at: u64,
        op: u32,
        body: u64,
    ) -> Result<bool, CpError> {
        let stop = |why| CpError::Pm4 {
            queue: q,
            rptr: at,
            why,
        };
        let field = |what: &'static str, value: u32| {
            stop(Pm4Error::Field {
                packet: d::opcode_name(op),
                what,
                value,
            })
        };
        let want = |dwords: usize| -> Result<(), CpError> {
            if body + 1 != dwords as u64 {
                return Err(field("packet length", body as u32 + 1));
            }
            Ok(())
        };
        let dw = |cp: &mut CpModel, i: u64| cp.pm4_dword(q, ring, n, at + i);
        match op {
            opcode::SET_SH_REG => {
                let off = dw(self, 1)?;
                // Checked: the offset is the driver's.
                let gc = c::SET_SH_REG_START
                    .checked_add(off)
                    .and_then(|x| x.checked_sub(self.pm4_registers.gc_seg0))
                    .and_then(|x| x.checked_sub(WINDOW_START))
                    .map(|x| x as usize);
                let count = body.saturating_sub(1) as usize;
                let Some(first) = gc.filter(|&g| g + count <= WINDOW) else {
                    return Err(field(
                        "register outside COMPUTE_DISPATCH_INITIATOR..COMPUTE_USER_DATA_15 (SH offset)",
                        off,
                    ));
                };
                for i in 0..count {
                    let v = dw(self, 2 + i as u64)?;
                    let regs = self.pm4_sh.entry(q).or_insert([0; WINDOW]);
                    if let Some(r) = regs.get_mut(first + i) {
                        *r = v;
                    }
                }
                Ok(true)
            }
            opcode::ACQUIRE_MEM => {
                // gfx9 has no GCR_CNTL dword (`gfx_v9_4_3_emit_mem_sync()`,
                // `gfx_v9_0_emit_mem_sync()`).
                want(if self.shader.target.is_gfx9() {
                    c::ACQUIRE_MEM_DWORDS_GFX9
                } else {
                    c::ACQUIRE_MEM_DWORDS
                })?;
                Ok(true)
            }
            opcode::EVENT_WRITE => {
                let e = dw(self, 1)?;
                let ty = c::event_write::EVENT_TYPE.get(e);
                if ty != c::CS_PARTIAL_FLUSH {
                    return Err(field("event type (CS_PARTIAL_FLUSH only)", ty));
                }
                Ok(true)
            }
            opcode::RELEASE_MEM => {
                want(c::release_mem::DWORDS)?;
                self.release_mem(q, ring, n, at).map_err(|e| match e {
                    Ok((what, value)) => field(what, value),
                    Err(e) => e,
                })?;
                Ok(true)
            }
            opcode::WAIT_REG_MEM => {
                want(c::wait_reg_mem::DWORDS)?;
                self.wait_reg_mem(q, ring, n, at).map_err(|e| match e {
                    Ok((what, value)) => field(what, value),
                    Err(e) => e,
                })
            }
            opcode::DISPATCH_DIRECT => {
                want(c::DISPATCH_DIRECT_DWORDS)?;
                self.dispatch_direct(q, ring, n, at).map_err(|e| match e {
                    Ok((what, value)) => field(what, value),
                    Err(e) => e,
                })?;
                Ok(true)
            }
            _ => Err(stop(Pm4Error::Unsupported {
                opcode: op as u8,
                name: d::opcode_name(op),
            })),
        }
    }

    /// `RELEASE_MEM`'s data write. `Err(Ok(..))`: a field the model
    /// refuses, with its value.
    fn release_mem(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        at: u64,
    ) -> Result<(), Result<(&'static str, u32), CpError>> {
        use c::release_mem as r;
        let dw = |cp: &mut CpModel, i: u64| cp.pm4_dword(q, ring, n, at + i).map_err(Err);
        let (event, sel) = (dw(self, 1)?, dw(self, 2)?);
        let ty = r::EVENT_TYPE.get(event);
        if ty != c::CACHE_FLUSH_AND_INV_TS_EVENT {
            return Err(Ok(("event type (CACHE_FLUSH_AND_INV_TS_EVENT only)", ty)));
        }
        let index = r::EVENT_INDEX.get(event);
        if index != r::INDEX_END_OF_PIPE {
            return Err(Ok(("event index (end of pipe only)", index)));
        }
        let int_sel = r::INT_SEL.get(sel);
        if int_sel > 2 {
            return Err(Ok((
                "INT_SEL (none, interrupt, or interrupt after the write only)",
                int_sel,
            )));
        }
        let dst = r::DST_SEL.get(sel);
        if dst > 1 {
            return Err(Ok(("DST_SEL (memory or L2 only)", dst)));
        }
        let addr = u64::from(dw(self, 3)?) | u64::from(dw(self, 4)?) << 32;
        let data = u64::from(dw(self, 5)?) | u64::from(dw(self, 6)?) << 32;
        self.release_data(q, r::DATA_SEL.get(sel), addr, data)?;
        if int_sel != 0 {
            let context = dw(self, 7)?;
            self.eop_interrupts.keep((q, context));
        }
        Ok(())
    }

    /// `RELEASE_MEM`'s write by `DATA_SEL`.
    fn release_data(
        &mut self,
        q: usize,
        data_sel: u32,
        addr: u64,
        data: u64,
    ) -> Result<(), Result<(&'static str, u32), CpError>> {
        use c::release_mem as r;
        match data_sel {
            r::DATA_NONE => Ok(()),
            r::DATA_32 => {
                if !addr.is_multiple_of(4) {
                    return Err(Ok(("address not dword aligned", addr as u32)));
                }
                self.u32_at(q, addr, Access::Write, "RELEASE_MEM destination")
                    .map_err(Err)?
                    .store(data as u32, Ordering::Release);
                Ok(())
            }
            s @ (r::DATA_64 | r::DATA_GPU_CLOCK) => {
                if !addr.is_multiple_of(8) {
                    return Err(Ok(("address not 8-byte aligned", addr as u32)));
                }
                let v = if s == r::DATA_64 { data } else { self.now_ns };
                self.u64_at(q, addr, Access::Write, "RELEASE_MEM destination")
                    .map_err(Err)?
                    .store(v, Ordering::Release);
                Ok(())
            }
            other => Err(Ok(("DATA_SEL", other))),
        }
    }

    /// `WAIT_REG_MEM`: whether the condition holds (the packet is done).
    fn wait_reg_mem(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        at: u64,
    ) -> Result<bool, Result<(&'static str, u32), CpError>> {
        use c::wait_reg_mem as w;
        let dw = |cp: &mut CpModel, i: u64| cp.pm4_dword(q, ring, n, at + i).map_err(Err);
        let control = dw(self, 1)?;
        let (a0, a1, reference, mask) = (dw(self, 2)?, dw(self, 3)?, dw(self, 4)?, dw(self, 5)?);
        let function = w::FUNCTION.get(control);
        let value = match (w::MEM_SPACE.get(control), w::OPERATION.get(control)) {
            (1, 0) => {
                let addr = u64::from(a0) | u64::from(a1) << 32;
                if !addr.is_multiple_of(4) {
                    return Err(Ok(("poll address not dword aligned", a0)));
                }
                self.u32_at(q, addr, Access::Read, "WAIT_REG_MEM poll address")
                    .map_err(Err)?
                    .load(Ordering::Acquire)
            }
            (0, 1) if self.pm4_registers.hdp_flush == Some((a0, a1)) => reference,
            (0, _) => return Err(Ok(("register (only the HDP flush REQ/DONE pair)", a0))),
            (space, op) => {
                return Err(Ok(("memory space / operation", space << 8 | op)));
            }
        };
        let Some(met) = compare(function, value & mask, reference) else {
            return Err(Ok(("function", function)));
        };
        if !met && let Some(x) = self.queues.get_mut(q) {
            x.stalls += 1;
        }
        Ok(met)
    }

    /// `DISPATCH_DIRECT`: the waves, from the queue's `COMPUTE_*`
    /// registers.
    fn dispatch_direct(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        at: u64,
    ) -> Result<(), Result<(&'static str, u32), CpError>> {
        use c::initiator as i;
        let dw = |cp: &mut CpModel, k: u64| cp.pm4_dword(q, ring, n, at + k).map_err(Err);
        let groups = [dw(self, 1)?, dw(self, 2)?, dw(self, 3)?];
        let init = dw(self, 4)?;
        if !i::COMPUTE_SHADER_EN.is_set(init) {
            return Err(Ok((
                "COMPUTE_DISPATCH_INITIATOR without COMPUTE_SHADER_EN",
                init,
            )));
        }
        if i::USE_THREAD_DIMENSIONS.is_set(init) {
            return Err(Ok(("USE_THREAD_DIMENSIONS (not modelled)", init)));
        }
        let regs = self.pm4_sh.get(&q).copied().unwrap_or([0; WINDOW]);
        let r = |k: usize| regs.get(k).copied().unwrap_or(0);
        if (0..3).any(|k| r(reg::START_X + k) != 0) {
            return Err(Ok((
                "COMPUTE_START_X/Y/Z not 0 (not modelled)",
                r(reg::START_X),
            )));
        }
        let wave32 = i::CS_W32_EN.is_set(init);
        let (rsrc1, rsrc2, rsrc3) = (r(reg::PGM_RSRC1), r(reg::PGM_RSRC2), r(reg::PGM_RSRC3));
        let lanes = if wave32 { 32 } else { 64 };
        // RSRC2 bit 0: ENABLE_PRIVATE_SEGMENT (SCRATCH_EN). gfx12's
        // `COMPUTE_TMPRING_SIZE.WAVESIZE` is wider (`gc_12_0_0_sh_mask.h`
        // 0x3FFFF000) in units the model does not know: refused there.
        if rsrc2 & 1 != 0 && self.shader.target.is_gfx12() {
            return Err(Ok((
                "scratch on gfx12 (TMPRING_SIZE units not modelled)",
                rsrc2,
            )));
        }
        let private = if rsrc2 & 1 != 0 {
            c::TMPRING_WAVESIZE.get(r(reg::TMPRING_SIZE)) * 256 / lanes
        } else {
            0
        };
        let mut user_data = [0u32; 16];
        for (k, u) in user_data.iter_mut().enumerate() {
            *u = r(reg::USER_DATA_0 + k);
        }
        let nt = |k: usize| c::NUM_THREAD_FULL.get(r(reg::NUM_THREAD_X + k)) as u16;
        let rd = barebell_isa::launch::RegisterDispatch {
            entry: (u64::from(r(reg::PGM_LO)) | u64::from(r(reg::PGM_HI)) << 32) << 8,
            rsrc1,
            rsrc2,
            rsrc3,
            wave32,
            user_data,
            workgroup_size: [nt(0), nt(1), nt(2)],
            groups,
            private_segment_size: private,
            group_segment_size: c::RSRC2_LDS_SIZE.get(rsrc2) * 512,
        };
        let (space, apertures) = self.queues.get(q).map_or(
            (
                crate::gmc::AddressSpace::Identity,
                barebell_isa::exec::Apertures::default(),
            ),
            |x| (x.space, x.apertures),
        );
        let view = super::QueueView::new(&self.dma, self.translator.as_deref(), space);
        self.shader
            .dispatch_registers(&view, &rd, apertures)
            .map_err(|fault| {
                Err(CpError::Kernel {
                    queue: q,
                    id: at,
                    fault,
                })
            })?;
        Ok(())
    }
}
