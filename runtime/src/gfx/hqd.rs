//! Direct HQD programming: the CPU writes a MEC queue slot's registers.
//!
//! This is what KFD's `hqd_load_v11()` does for non-HWS queues and what
//! tinygrad's AM driver does for every queue: select the slot through
//! `GRBM_GFX_CNTL`, copy MQD dwords 128..=183 into the HQD window, enable
//! the doorbell, prime the write pointer and its poll, start the EOP
//! fetcher, and set `CP_HQD_ACTIVE`. Teardown is `hqd_destroy_v11()`: a
//! dequeue request, then a bounded wait for `CP_HQD_ACTIVE` to clear.
//!
//! Register accesses are selected per slot, so a `DirectHqd` must be the
//! only user of `GRBM_GFX_CNTL` while it runs (Linux holds `srbm_mutex`);
//! `&mut self` on every operation gives that for one mapper.

use crate::bus::{Block, BlockError, RegisterBus};
use crate::gfx::doorbells::Doorbells;
use crate::gfx::error::MapError;
use crate::gfx::grbm::{GrbmGfxCntl, GrbmSelect};
use crate::gfx::mapper::{HqdRegs, Mapping, QueueMapper, QueueResources};
use crate::gfx::mqd::{
    DoorbellControl, EOP_RPTR_INIT_FETCHER_SHIFT, HQD_ACTIVE_MASK, HQD_DWORDS, HQD_FIRST_DWORD,
    HqdRegisters, build_aql,
};
use crate::ip::Generation;
use crate::regs::IpBases;
use crate::time::Clock;
use barebell_facts::Fact;

/// `CP_HQD_DEQUEUE_REQUEST` value `DRAIN_PIPE` (`enum
/// hqd_dequeue_request_type` in `amdgpu_amdkfd_gfx_v11.c`; that enum lives
/// in a `.c` file, so no header fact checks it).
pub const DEQUEUE_DRAIN_PIPE: u32 = 1;
/// `CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ_MASK`.
pub const DEQUEUE_REQ_MASK: u32 = 0xF;
const _: () = assert!(DEQUEUE_DRAIN_PIPE & !DEQUEUE_REQ_MASK == 0);

/// MEC1 is ME 1 (`acquire_queue()`: `mec = pipe / pipes_per_mec + 1`).
pub const MEC1: u8 = 1;
/// Pipes per MEC and queues per pipe on gfx11/gfx12
/// (`gfx_v11_0_sw_init()`: `num_pipe_per_mec = 4`, `num_queue_per_pipe = 8`).
pub const PIPES: u8 = 4;
pub const QUEUES_PER_PIPE: u8 = 8;

/// How long a dequeue may take: barebell uses the bound Linux gives a MES
/// API call (2.1 s) for this wait too.
pub const DEQUEUE_TIMEOUT_NS: u64 = 2_100_000_000;

/// Maps queues by writing HQD registers directly.
#[derive(Debug)]
pub struct DirectHqd<B, C> {
    bus: B,
    clock: C,
    bases: IpBases,
    regs: HqdRegs,
    doorbells: Doorbells,
    /// Slot occupancy: bit `queue` of `busy[pipe]`.
    busy: [u8; PIPES as usize],
    /// Slots this mapper may use, same layout; KFD leaves pipe 0's first
    /// queues to the kernel's own rings, we let the caller choose.
    allowed: [u8; PIPES as usize],
    pub dequeue_timeout_ns: u64,
}

impl<B: RegisterBus, C: Clock> DirectHqd<B, C> {
    /// A mapper over `bus`, with the MEC doorbell range programmed from
    /// `doorbells`. Uses every slot of MEC1.
    pub fn new(
        bus: B,
        clock: C,
        bases: IpBases,
        generation: Generation,
        doorbells: Doorbells,
    ) -> Result<Self, MapError> {
        let regs = HqdRegs::for_generation(generation)?;
        doorbells.program(&bus, &regs, &bases)?;
        Ok(DirectHqd {
            bus,
            clock,
            bases,
            regs,
            doorbells,
            busy: [0; PIPES as usize],
            allowed: [0xFF; PIPES as usize],
            dequeue_timeout_ns: DEQUEUE_TIMEOUT_NS,
        })
    }

    /// Restricts the slots this mapper may use (bit `q` of `mask[p]`).
    pub fn set_allowed_slots(&mut self, mask: [u8; PIPES as usize]) {
        self.allowed = mask;
    }

    pub fn doorbells(&self) -> &Doorbells {
        &self.doorbells
    }

    pub fn bus(&self) -> &B {
        &self.bus
    }

    fn free_slot(&self) -> Option<(u8, u8)> {
        for pipe in 0..PIPES {
            let p = usize::from(pipe);
            let free = self.allowed.get(p).copied().unwrap_or(0)
                & !self.busy.get(p).copied().unwrap_or(0xFF);
            if free != 0 {
                return Some((pipe, free.trailing_zeros() as u8));
            }
        }
        None
    }

    fn gc(&self) -> Block<'_, B> {
        Block::new(&self.bus, self.bases)
    }

    /// Loads `hqd` into the selected slot (`hqd_load_v11()`).
    fn load(
        &self,
        slot: &GrbmSelect<'_, B>,
        pipe: u8,
        queue: u8,
        hqd: &HqdRegisters,
    ) -> Result<(), MapError> {
        let r = &self.regs;
        let gc = slot.block();
        if gc.read(r.hqd_active)? & HQD_ACTIVE_MASK != 0 {
            return Err(MapError::HqdBusy { pipe, queue });
        }
        r.load_window(slot, hqd)?;
        let doorbell = DoorbellControl::from_bits(hqd.cp_hqd_pq_doorbell_control)
            .with_doorbell_en(true)
            .into_bits();
        gc.write(r.doorbell_control, doorbell)?;
        // A fresh MQD has rptr = wptr = 0, so `hqd_load_v11()`'s guessed
        // wptr is the MQD's own (zero) value.
        gc.write(r.wptr_lo, hqd.cp_hqd_pq_wptr_lo)?;
        gc.write(r.wptr_hi, hqd.cp_hqd_pq_wptr_hi)?;
        gc.write(r.wptr_poll_addr, hqd.cp_hqd_pq_wptr_poll_addr_lo)?;
        gc.write(r.wptr_poll_addr_hi, hqd.cp_hqd_pq_wptr_poll_addr_hi)?;
        // `get_queue_mask()`: bit (pipe * queues_per_pipe + queue); Linux
        // writes the whole register with this one bit.
        let bit = u32::from(pipe) * u32::from(QUEUES_PER_PIPE) + u32::from(queue);
        gc.write(r.wptr_poll_cntl1, 1u32 << (bit & 31))?;
        gc.write(
            r.eop_rptr,
            hqd.cp_hqd_eop_rptr | 1 << EOP_RPTR_INIT_FETCHER_SHIFT,
        )?;
        gc.write(r.hqd_active, hqd.cp_hqd_active | HQD_ACTIVE_MASK)?;
        Ok(())
    }

    /// Dequeues the selected slot and waits for it to go inactive
    /// (`hqd_destroy_v11()` with DRAIN_PIPE).
    fn dequeue(&self, slot: &GrbmSelect<'_, B>) -> Result<(), MapError> {
        let r = &self.regs;
        let gc = slot.block();
        gc.write(r.dequeue_request, DEQUEUE_DRAIN_PIPE)?;
        gc.poll(
            &self.clock,
            r.hqd_active,
            HQD_ACTIVE_MASK,
            0,
            "CP_HQD_ACTIVE clear after dequeue",
            self.dequeue_timeout_ns,
        )
        .map_err(|e| match e {
            BlockError::Wait(w) => MapError::Dequeue(w),
            e => MapError::Register(e),
        })?;
        Ok(())
    }
}

impl<B: RegisterBus, C: Clock> QueueMapper for DirectHqd<B, C> {
    fn map(&mut self, q: &QueueResources<'_>) -> Result<Mapping, MapError> {
        // Nothing reaches the device until the doorbell, the slot and the
        // MQD are known to be good.
        let (pipe, queue) = self.free_slot().ok_or(MapError::NoFreeSlot)?;
        self.doorbells.claim(q.doorbell)?;
        let params = q.mqd_params();
        let hqd = match build_aql(self.regs.generation, &q.mqd, &params) {
            Ok(h) => h,
            Err(e) => {
                self.doorbells.release(q.doorbell);
                return Err(e.into());
            }
        };
        // The slot stays selected only while the guard lives: every exit,
        // errors included, selects ME 0 pipe 0 queue 0 again.
        let loaded = self
            .regs
            .select(self.gc(), MEC1, pipe, queue)
            .map_err(MapError::from)
            .and_then(|slot| self.load(&slot, pipe, queue, &hqd));
        if let Err(e) = loaded {
            self.doorbells.release(q.doorbell);
            return Err(e);
        }
        if let Some(bits) = self.busy.get_mut(usize::from(pipe)) {
            *bits |= 1 << queue;
        }
        Ok(Mapping {
            doorbell: q.doorbell,
            mqd_address: params.mqd_address,
            pipe,
            queue,
            vmid: q.vmid,
        })
    }

    fn unmap(&mut self, m: &Mapping) -> Result<(), MapError> {
        let p = usize::from(m.pipe);
        let mapped = m.queue < QUEUES_PER_PIPE
            && self.busy.get(p).is_some_and(|b| b & (1 << m.queue) != 0)
            && self.doorbells.is_used(m.doorbell);
        if !mapped {
            return Err(MapError::NotMapped {
                doorbell: m.doorbell,
            });
        }
        // On a dequeue timeout the slot stays marked busy: the hardware
        // still owns it, and reusing it would load over a live queue.
        self.regs
            .select(self.gc(), MEC1, m.pipe, m.queue)
            .map_err(MapError::from)
            .and_then(|slot| self.dequeue(&slot))?;
        if let Some(bits) = self.busy.get_mut(p) {
            *bits &= !(1 << m.queue);
        }
        self.doorbells.release(m.doorbell);
        Ok(())
    }
}

macro_rules! window_facts {
    ($regs:path, $struct_h:literal, $ctype:literal, $($reg:ident = $field:literal),* $(,)?) => {
        [
            $(Fact::offset($struct_h, $ctype, $field,
                ((HQD_FIRST_DWORD as u32 + ({ use $regs as r; r::$reg.offset - r::CP_MQD_BASE_ADDR.offset })) * 4) as usize),)*
        ]
    };
}

macro_rules! grbm_facts {
    ($h:literal) => {
        [
            Fact::constant(
                $h,
                "GRBM_GFX_CNTL__PIPEID_MASK",
                GrbmGfxCntl::new().with_pipeid(3).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "GRBM_GFX_CNTL__MEID_MASK",
                GrbmGfxCntl::new().with_meid(3).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "GRBM_GFX_CNTL__VMID_MASK",
                GrbmGfxCntl::new().with_vmid(0xF).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "GRBM_GFX_CNTL__QUEUEID_MASK",
                GrbmGfxCntl::new().with_queueid(7).into_bits() as u64,
            ),
            Fact::constant(
                $h,
                "GRBM_GFX_CNTL__CTXID_MASK",
                GrbmGfxCntl::new().with_ctxid(7).into_bits() as u64,
            ),
        ]
    };
}

const _: () = assert!(HQD_DWORDS == 56);

/// Each register `DirectHqd` writes individually sits at the MQD dword the
/// window arithmetic assumes (register offset - `CP_MQD_BASE_ADDR` + 128),
/// checked against both MQD headers; and the `GRBM_GFX_CNTL` fields.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    window_facts!(
        crate::regs::gc_11_0_0,
        "v11_structs.h",
        "struct v11_compute_mqd",
        CP_HQD_ACTIVE = "cp_hqd_active",
        CP_HQD_PQ_DOORBELL_CONTROL = "cp_hqd_pq_doorbell_control",
        CP_HQD_DEQUEUE_REQUEST = "cp_hqd_dequeue_request",
        CP_HQD_EOP_RPTR = "cp_hqd_eop_rptr",
        CP_HQD_PQ_WPTR_LO = "cp_hqd_pq_wptr_lo",
        CP_HQD_PQ_WPTR_HI = "cp_hqd_pq_wptr_hi",
        CP_HQD_PQ_WPTR_POLL_ADDR = "cp_hqd_pq_wptr_poll_addr_lo",
        CP_HQD_PQ_WPTR_POLL_ADDR_HI = "cp_hqd_pq_wptr_poll_addr_hi",
    ),
    window_facts!(
        crate::regs::gc_12_0_0,
        "v12_structs.h",
        "struct v12_compute_mqd",
        CP_HQD_ACTIVE = "cp_hqd_active",
        CP_HQD_PQ_DOORBELL_CONTROL = "cp_hqd_pq_doorbell_control",
        CP_HQD_DEQUEUE_REQUEST = "cp_hqd_dequeue_request",
        CP_HQD_EOP_RPTR = "cp_hqd_eop_rptr",
        CP_HQD_PQ_WPTR_LO = "cp_hqd_pq_wptr_lo",
        CP_HQD_PQ_WPTR_HI = "cp_hqd_pq_wptr_hi",
        CP_HQD_PQ_WPTR_POLL_ADDR = "cp_hqd_pq_wptr_poll_addr_lo",
        CP_HQD_PQ_WPTR_POLL_ADDR_HI = "cp_hqd_pq_wptr_poll_addr_hi",
    ),
    grbm_facts!("gc_11_0_0_sh_mask.h"),
    grbm_facts!("gc_12_0_0_sh_mask.h"),
    [
        Fact::constant(
            "gc_11_0_0_sh_mask.h",
            "CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ_MASK",
            DEQUEUE_REQ_MASK as u64
        ),
        Fact::constant(
            "gc_12_0_0_sh_mask.h",
            "CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ_MASK",
            DEQUEUE_REQ_MASK as u64
        ),
    ],
);
