//! PM4 compute queues: the HQDs a MEC runs without AQL packet processing
//! (`CP_HQD_AQL_CONTROL.CONTROL0` = 0). Linux's kernel compute queues are
//! such queues (`gfx_v11_0_compute_mqd_init()` never sets the AQL
//! control; only KFD's `update_mqd()` does, for AQL-format queues), and
//! so are tinygrad's default compute queues (`AM_GFX.setup_ring(...,
//! aql=False)`, `AMD_AQL=0`).
//!
//! What the model does, and where the rule comes from:
//! - The write pointer is a free-running count of dwords: the doorbell
//!   carries it (`gfx_v11_0_ring_set_wptr_compute()`:
//!   `WDOORBELL64(ring->doorbell_index, ring->wptr)`, after storing the
//!   same value at the wptr poll address), and so does the poll address
//!   when `CP_PQ_WPTR_POLL_CNTL` asks the CP to read it.
//! - The ring holds `2^(QUEUE_SIZE+1)` dwords; packet dwords wrap at its
//!   end.
//! - After each packet the CP stores its read pointer (dwords, wrapped
//!   to the ring) at the rptr report address, which the driver reads as
//!   one 32-bit word (`gfx_v11_0_ring_get_rptr_compute()`: "gfx11
//!   hardware is 32bit rptr"). **Model convention**: the report follows
//!   every packet; hardware reports per `RPTR_BLOCK_SIZE` block.
//! - A packet is taken only once all its dwords are announced.
//! - Packets are type-3 headers decoded with [`crate::decode::pm4`], the
//!   model's own reading of `nvd.h`.
//!
//! A graphics queue ([`Pm4Binding::gfx`], the ring MES maps for Linux's
//! `amdgpu_gfx_enable_kgq()`) takes the same packets plus the
//! graphics-state ones (`graphics_state`) and `COND_EXEC`; every PM4
//! ring takes `INDIRECT_BUFFER` (`ring_ib`).
//!
//! Executed: `NOP` (body skipped), the one-dword filler
//! `PACKET3(PACKET3_NOP, 0x3FFF)` Linux pads compute rings with
//! ([`crate::decode::pm4::NOP_FILLER`]), `WRITE_DATA` to memory
//! (`dst_sel` 5) or to a register (`dst_sel` 0), `SET_UCONFIG_REG` (the
//! ring test's `SCRATCH_REG0` store; register stores go to the device's
//! register bus, [`CpModel::take_register_stores`]), and the dispatch
//! packets of
//! [`super::pm4_compute`] (`SET_SH_REG`, `DISPATCH_DIRECT`,
//! `ACQUIRE_MEM`, `RELEASE_MEM`, `EVENT_WRITE`, `WAIT_REG_MEM`). Every
//! other packet stops the queue with [`Pm4Error::Unsupported`], naming the
//! opcode, and a field value the model does not execute with
//! [`Pm4Error::Field`]: the model never skips a packet it does not
//! execute.

use super::{CpError, CpModel};
use crate::decode::pm4::{self as d, opcode, write_data as wd};
use crate::gmc::Access;
use core::sync::atomic::Ordering;

/// Packets one queue may execute per [`CpModel::step`].
const PACKETS_PER_STEP: u32 = 64;

/// The dwords the packet with `header` takes: 1 for the NOP filler, the
/// header's count plus 2 for a type-3 packet; other types are refused.
pub(super) fn packet_dwords(header: u32) -> Result<u64, Pm4Error> {
    if header == d::NOP_FILLER {
        Ok(1)
    } else if d::HEADER_TYPE.get(header) == d::PACKET_TYPE3 {
        Ok(u64::from(d::HEADER_COUNT.get(header)) + 2)
    } else {
        Err(Pm4Error::NotType3 { header })
    }
}

/// A PM4 queue as the MEC hands it to the CP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pm4Binding {
    /// `CP_HQD_PQ_BASE` (a device address in the queue's space).
    pub ring_base: u64,
    /// Ring size in dwords (a power of two).
    pub ring_dwords: u64,
    /// `CP_HQD_PQ_RPTR_REPORT_ADDR` (0: none).
    pub rptr_report: u64,
    /// `CP_HQD_PQ_WPTR_POLL_ADDR` (0: none).
    pub wptr_poll: u64,
    /// `CP_HQD_PQ_WPTR` as loaded: dwords written so far.
    pub wptr: u64,
    /// `CP_HQD_PQ_RPTR` as loaded: where in the ring the CP starts
    /// reading (dwords, within the ring).
    pub rptr: u32,
    pub space: super::AddressSpace,
    /// The MEC pipe (compute); for a graphics queue, the ME pipe.
    pub pipe: u8,
    /// A graphics queue on the ME (`gfx_v11_0_gfx_mqd_init()`'s ring):
    /// it also takes the graphics-state packets, and the MEC pipes'
    /// running state does not gate it.
    pub gfx: bool,
}

/// Why a PM4 queue stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pm4Error {
    /// A header that is not a type-3 packet (types 0-2 are not used on
    /// gfx10+ compute rings).
    NotType3 { header: u32 },
    /// A type-3 packet the model does not execute.
    Unsupported { opcode: u8, name: &'static str },
    /// `WRITE_DATA` to a destination other than `dst_sel` 5 (memory,
    /// async; the only one the model executes).
    WriteDataDestination { dst_sel: u32 },
    /// A packet the model executes, with a field value it does not
    /// ([`super::pm4_compute`]).
    Field {
        packet: &'static str,
        what: &'static str,
        value: u32,
    },
    /// An AQL vendor packet's PM4 indirect buffer the CP cannot take
    /// ([`super::aql_ib`]): what is wrong, and the value.
    IndirectBuffer { what: &'static str, value: u64 },
}

impl core::fmt::Display for Pm4Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Pm4Error::NotType3 { header } => {
                write!(f, "header {header:#010x} is not a type-3 packet")
            }
            Pm4Error::Unsupported { opcode, name } => write!(
                f,
                "PM4 packet {name} (opcode {opcode:#04x}) is not executed by the model"
            ),
            Pm4Error::WriteDataDestination { dst_sel } => write!(
                f,
                "WRITE_DATA to dst_sel {dst_sel} is not executed by the model (memory and registers only)"
            ),
            Pm4Error::Field {
                packet,
                what,
                value,
            } => write!(
                f,
                "PM4 packet {packet}: {what} = {value:#x} is not executed by the model"
            ),
            Pm4Error::IndirectBuffer { what, value } => {
                write!(f, "PM4 indirect buffer: {what} ({value:#x})")
            }
        }
    }
}

/// A PM4 queue's state inside the CP.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pm4State {
    ring_dwords: u64,
    rptr_report: u64,
    wptr_poll: u64,
    /// Dwords consumed (free-running, as the write pointer).
    rptr: u64,
    packets: u64,
    /// A graphics queue ([`Pm4Binding::gfx`]).
    gfx: bool,
}

/// Per-queue counters of a PM4 queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pm4Stats {
    /// Dwords consumed.
    pub rptr: u64,
    /// Dwords announced (doorbell or poll).
    pub wptr: u64,
    /// Packets executed.
    pub packets: u64,
    pub halted: bool,
    /// The ring's size, `2^(QUEUE_SIZE+1)` dwords.
    pub ring_dwords: u64,
}

/// The CP reads from `CP_HQD_PQ_RPTR` (a position in the ring); the
/// model's free-running read count is placed on the write pointer's lap,
/// or the lap before when the position is past the write pointer's.
fn start_rptr(b: Pm4Binding) -> u64 {
    let mask = b.ring_dwords - 1;
    let r = (b.wptr & !mask) | u64::from(b.rptr) & mask;
    if super::later(r, b.wptr) {
        r.wrapping_sub(b.ring_dwords)
    } else {
        r
    }
}

impl CpModel {
    /// Maps a PM4 queue the MEC loaded on one of its pipes; woken by
    /// doorbell stores routed through [`CpModel::ring`] (value: the write
    /// pointer in dwords) and by the polls the registers ask for.
    pub fn bind_pm4(&mut self, b: Pm4Binding) -> Result<usize, CpError> {
        let q = self.queues.len();
        if !b.ring_dwords.is_power_of_two() || !b.ring_base.is_multiple_of(256) {
            return Err(CpError::BadDispatch {
                queue: q,
                id: 0,
                what: "PM4 ring size not a power of two or base not 256-byte aligned",
            });
        }
        self.queues.push(super::Queue {
            ring_base: b.ring_base,
            slots: b.ring_dwords,
            descriptor: 0,
            wake: super::Wake::Routed,
            space: b.space,
            pipe: (!b.gfx).then_some(b.pipe),
            announced: b.wptr,
            poll_once: false,
            profiling: false,
            in_flight: alloc::vec::Vec::new(),
            halted: false,
            unmapped: false,
            stuck: false,
            consumed: 0,
            stalls: 0,
            tlb: super::Tlb::default(),
            apertures: barebell_isa::exec::Apertures::default(),
            scratch_wait: None,
            scratch_requests: 0,
            ib_progress: None,
            pm4: Some(Pm4State {
                ring_dwords: b.ring_dwords,
                rptr_report: b.rptr_report,
                wptr_poll: b.wptr_poll,
                rptr: start_rptr(b),
                packets: 0,
                gfx: b.gfx,
            }),
        });
        Ok(q)
    }

    /// A PM4 queue's counters (`None` for an AQL queue or an unknown id).
    pub fn pm4_stats(&self, q: usize) -> Option<Pm4Stats> {
        let x = self.queues.get(q)?;
        let p = x.pm4?;
        Some(Pm4Stats {
            rptr: p.rptr,
            wptr: x.announced,
            packets: p.packets,
            halted: x.halted,
            ring_dwords: p.ring_dwords,
        })
    }

    pub(super) fn pm4_dword(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        index: u64,
    ) -> Result<u32, CpError> {
        let va = ring + (index & (n - 1)) * 4;
        let h = self.host(q, va, 4, Access::Read, "PM4 ring")?;
        Ok(self
            .dma
            .u32(h, "PM4 ring")
            .map_err(|fault| CpError::Dma { queue: q, fault })?
            .load(Ordering::Acquire))
    }

    /// Executes the announced packets of PM4 queue `q` (at most
    /// [`PACKETS_PER_STEP`]). Returns whether any ran.
    pub(super) fn process_pm4(&mut self, q: usize) -> bool {
        match self.try_pm4(q) {
            Ok(n) => n > 0,
            Err(e) => {
                self.fail(q, e);
                false
            }
        }
    }

    fn try_pm4(&mut self, q: usize) -> Result<u32, CpError> {
        let Some(queue) = self.queues.get(q) else {
            return Ok(0);
        };
        if queue.halted || queue.unmapped {
            return Ok(0);
        }
        if let Some(p) = queue.pipe
            && self.running_pipes >> p & 1 == 0
        {
            return Ok(0);
        }
        let Some(st) = queue.pm4 else {
            return Ok(0);
        };
        let (ring, n) = (queue.ring_base, st.ring_dwords);
        if (self.wptr_polling || queue.poll_once) && st.wptr_poll != 0 {
            let w = self
                .u64_at(q, st.wptr_poll, Access::Read, "PM4 wptr poll")?
                .load(Ordering::Acquire);
            if let Some(x) = self.queues.get_mut(q) {
                if super::later(w, x.announced) {
                    x.announced = w;
                }
                x.poll_once = false;
            }
        }
        let wptr = self.queues.get(q).map_or(0, |x| x.announced);
        let mut rptr = st.rptr;
        let mut done = 0;
        while done < PACKETS_PER_STEP && super::later(wptr, rptr) {
            let header = self.pm4_dword(q, ring, n, rptr)?;
            let len = packet_dwords(header).map_err(|why| CpError::Pm4 {
                queue: q,
                rptr,
                why,
            })?;
            if wptr.wrapping_sub(rptr) < len {
                // Not all of the packet is announced yet.
                if let Some(x) = self.queues.get_mut(q) {
                    x.stalls += 1;
                }
                break;
            }
            let mut skip = 0;
            if header != d::NOP_FILLER {
                let ran = match d::HEADER_OPCODE.get(header) {
                    opcode::COND_EXEC => match self.cond_exec(q, ring, n, rptr, header)? {
                        // The discarded dwords must be there too.
                        Some(k) if wptr.wrapping_sub(rptr) < len + k => false,
                        Some(k) => {
                            skip = k;
                            true
                        }
                        None => true,
                    },
                    opcode::INDIRECT_BUFFER => self.ring_ib(q, ring, n, rptr, header, st.gfx)?,
                    _ => self.pm4_packet(q, ring, n, rptr, header)?,
                };
                if !ran {
                    // A wait not met yet: the packet stays, tried again at
                    // the next step.
                    break;
                }
            }
            rptr = rptr.wrapping_add(len + skip);
            done += 1;
            if let Some(p) = self.queues.get_mut(q).and_then(|x| x.pm4.as_mut()) {
                p.rptr = rptr;
                p.packets += 1;
            }
            if let Some(x) = self.queues.get_mut(q) {
                x.consumed += 1;
            }
            if st.rptr_report != 0 {
                self.u32_at(q, st.rptr_report, Access::Write, "PM4 rptr report")?
                    .store((rptr & (n - 1)) as u32, Ordering::Release);
            }
        }
        Ok(done)
    }

    /// `COND_EXEC` (`gfx_v11_0_ring_emit_init_cond_exec()`): the dword at
    /// the packet's address decides; `Some(dwords)` to discard after the
    /// packet when it is 0, `None` to go on ("discard following DWs if
    /// *cond_exec_gpu_addr==0").
    fn cond_exec(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        at: u64,
        header: u32,
    ) -> Result<Option<u64>, CpError> {
        let field = |what, value| CpError::Pm4 {
            queue: q,
            rptr: at,
            why: Pm4Error::Field {
                packet: "COND_EXEC",
                what,
                value,
            },
        };
        let dwords = u64::from(d::HEADER_COUNT.get(header)) + 2;
        if dwords != d::graphics::COND_EXEC_DWORDS as u64 {
            return Err(field("packet length", dwords as u32));
        }
        let lo = self.pm4_dword(q, ring, n, at + 1)?;
        let hi = self.pm4_dword(q, ring, n, at + 2)?;
        let count = self.pm4_dword(q, ring, n, at + 4)?;
        let addr = u64::from(lo) | u64::from(hi) << 32;
        if !addr.is_multiple_of(4) {
            return Err(field("condition address not dword aligned", lo));
        }
        let v = self
            .u32_at(q, addr, Access::Read, "COND_EXEC condition")?
            .load(Ordering::Acquire);
        Ok((v == 0).then_some(u64::from(count)))
    }

    /// `INDIRECT_BUFFER` on a PM4 ring (`gfx_v11_0_ring_emit_ib_gfx()`,
    /// `_compute()`, `gfx_v9_4_3_ring_emit_ib_compute()`): dwords 1/2 the
    /// IB's address, 3 its size in dwords, its VMID in bits 27:24 and, on
    /// a compute queue, `INDIRECT_BUFFER_VALID`. The IB runs in the
    /// queue's own address space (another VMID is refused, not modelled)
    /// with the same packets the ring takes but `COND_EXEC` and a nested
    /// `INDIRECT_BUFFER`.
    fn ring_ib(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        at: u64,
        header: u32,
        gfx: bool,
    ) -> Result<bool, CpError> {
        use d::compute::indirect_buffer as ib;
        let field = |what, value| CpError::Pm4 {
            queue: q,
            rptr: at,
            why: Pm4Error::Field {
                packet: "INDIRECT_BUFFER",
                what,
                value,
            },
        };
        let dwords = u64::from(d::HEADER_COUNT.get(header)) + 2;
        if dwords != ib::DWORDS as u64 {
            return Err(field("packet length", dwords as u32));
        }
        let lo = self.pm4_dword(q, ring, n, at + 1)?;
        let hi = self.pm4_dword(q, ring, n, at + 2)?;
        let control = self.pm4_dword(q, ring, n, at + 3)?;
        let address = u64::from(lo) | u64::from(hi) << 32;
        if !address.is_multiple_of(4) {
            return Err(field("address not dword aligned", lo));
        }
        let size = u64::from(ib::SIZE.get(control));
        if size == 0 {
            return Err(field("size of 0 dwords", control));
        }
        if !gfx && ib::VALID.get(control) == 0 {
            return Err(field(
                "INDIRECT_BUFFER_VALID clear on a compute queue",
                control,
            ));
        }
        let vmid = d::graphics::IB_VMID.get(control);
        let own = match self.queues.get(q).map(|x| x.space) {
            Some(super::AddressSpace::Vmid(v)) => u32::from(v),
            _ => 0,
        };
        if vmid != own {
            return Err(field(
                "an IB in another VMID than its queue's (not modelled)",
                vmid,
            ));
        }
        self.run_ib(q, at, address, size)
    }

    /// Executes the type-3 packet whose header (at ring dword `at`) is
    /// `header`; `Ok(false)` when it waits (`WAIT_REG_MEM` not met).
    pub(super) fn pm4_packet(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        at: u64,
        header: u32,
    ) -> Result<bool, CpError> {
        let op = d::HEADER_OPCODE.get(header);
        let body = u64::from(d::HEADER_COUNT.get(header)) + 1;
        let stop = |why| CpError::Pm4 {
            queue: q,
            rptr: at,
            why,
        };
        match op {
            opcode::NOP => Ok(true),
            opcode::WRITE_DATA => {
                let control = self.pm4_dword(q, ring, n, at + 1)?;
                let dst = wd::DST_SEL.get(control);
                if dst != wd::DST_MEMORY && dst != wd::DST_REGISTER {
                    return Err(stop(Pm4Error::WriteDataDestination { dst_sel: dst }));
                }
                let lo = self.pm4_dword(q, ring, n, at + 2)?;
                let hi = self.pm4_dword(q, ring, n, at + 3)?;
                let addr = u64::from(lo) | u64::from(hi) << 32;
                let one = wd::WR_ONE_ADDR.is_set(control);
                if dst == wd::DST_REGISTER {
                    // A dword offset into the register space.
                    let Ok(reg) = u32::try_from(addr) else {
                        return Err(stop(Pm4Error::WriteDataDestination { dst_sel: dst }));
                    };
                    for i in 0..body.saturating_sub(3) {
                        let v = self.pm4_dword(q, ring, n, at + 4 + i)?;
                        let r = if one { reg } else { reg.wrapping_add(i as u32) };
                        self.register_stores.push((q, r.wrapping_mul(4), v));
                    }
                    return Ok(true);
                }
                for i in 0..body.saturating_sub(3) {
                    let v = self.pm4_dword(q, ring, n, at + 4 + i)?;
                    let to = if one { addr } else { addr + 4 * i };
                    self.u32_at(q, to, Access::Write, "WRITE_DATA destination")?
                        .store(v, Ordering::Release);
                }
                Ok(true)
            }
            opcode::SET_UCONFIG_REG => {
                // Dword 1: the first register's offset from
                // `PACKET3_SET_UCONFIG_REG_START`; then its value and the
                // next registers'.
                let off = self.pm4_dword(q, ring, n, at + 1)?;
                let reg = d::compute::SET_UCONFIG_REG_START.wrapping_add(off);
                for i in 0..body.saturating_sub(1) {
                    let v = self.pm4_dword(q, ring, n, at + 2 + i)?;
                    let r = reg.wrapping_add(i as u32);
                    self.register_stores.push((q, r.wrapping_mul(4), v));
                }
                Ok(true)
            }
            opcode::PREAMBLE_CNTL
            | opcode::CONTEXT_CONTROL
            | opcode::CLEAR_STATE
            | opcode::SET_CONTEXT_REG => self.graphics_state(q, ring, n, at, op, body),
            _ => self.pm4_compute(q, ring, n, at, op, body),
        }
    }

    /// The graphics-state packets `gfx_v11_0_cp_gfx_start()` sends before
    /// any work (`PREAMBLE_CNTL` begin/end of the clear state,
    /// `CONTEXT_CONTROL`, the `SET_CONTEXT_REG`s of the clear-state
    /// section, `CLEAR_STATE`): taken on a graphics queue only, checked
    /// for their length, the preamble's two values and the context
    /// registers' window (`PACKET3_SET_CONTEXT_REG_START`.._END), and
    /// otherwise without effect (*model convention*: the model has no
    /// graphics pipeline, so nothing it runs reads context state).
    fn graphics_state(
        &mut self,
        q: usize,
        ring: u64,
        n: u64,
        at: u64,
        op: u32,
        body: u64,
    ) -> Result<bool, CpError> {
        use d::graphics as g;
        let gfx = self
            .queues
            .get(q)
            .and_then(|x| x.pm4)
            .is_some_and(|p| p.gfx);
        let stop = |why| CpError::Pm4 {
            queue: q,
            rptr: at,
            why,
        };
        if !gfx {
            return Err(stop(Pm4Error::Unsupported {
                opcode: op as u8,
                name: d::opcode_name(op),
            }));
        }
        let field = |what, value| {
            stop(Pm4Error::Field {
                packet: d::opcode_name(op),
                what,
                value,
            })
        };
        let want = |dwords: u64| {
            if body == dwords {
                Ok(())
            } else {
                Err(field("packet length", body as u32 + 1))
            }
        };
        match op {
            opcode::PREAMBLE_CNTL => {
                want(1)?;
                let v = self.pm4_dword(q, ring, n, at + 1)?;
                if v != g::PREAMBLE_BEGIN_CLEAR_STATE && v != g::PREAMBLE_END_CLEAR_STATE {
                    return Err(field("preamble control", v));
                }
            }
            opcode::CONTEXT_CONTROL => want(2)?,
            opcode::CLEAR_STATE => want(1)?,
            _ => {
                let off = self.pm4_dword(q, ring, n, at + 1)?;
                let end = g::SET_CONTEXT_REG_START
                    .checked_add(off)
                    .and_then(|r| r.checked_add(body.saturating_sub(1) as u32));
                if body < 2 || end.is_none_or(|e| e > g::SET_CONTEXT_REG_END) {
                    return Err(field("context register outside the context window", off));
                }
            }
        }
        Ok(true)
    }
}
