//! Compute queues mapped by uni-MES's KIQ pipe: the gfx12 `--mapping
//! kiq`.
//!
//! gfx12 uni-MES has no PM4 KIQ. MES pipe 1 is the KIQ
//! (`mes_v12_0_kiq_hw_init()` names it in `RLC_CP_SCHEDULERS`) and speaks
//! the MES API; the driver maps its kernel compute queues there with
//! `amdgpu_gfx_mes_enable_kcq()` → `amdgpu_mes_map_legacy_queue()` →
//! `mes_v12_0_map_legacy_queue()`: an ADD_QUEUE with `map_legacy_kq`,
//! the HQD (`pipe_id`, `queue_id`), the doorbell, MQD and write-pointer
//! addresses, queue type COMPUTE, sent on `AMDGPU_MES_KIQ_PIPE`. No
//! SET_RESOURCES goes first (`amdgpu_gfx_mes_enable_kcq()` sends one
//! only without uni-MES). Unmapping is `mes_v12_0_unmap_legacy_queue()`
//! with `RESET_QUEUES`: a REMOVE_QUEUE with `unmap_legacy_queue`.
//!
//! The queue's MQD is built by barebell (AQL, its VMID) as for the other
//! mappers; only the channel differs from a PM4 MAP_QUEUES.

use crate::gfx::doorbells::Doorbells;
use crate::gfx::error::MapError;
use crate::gfx::mapper::{Mapping, QueueMapper, QueueResources};
use crate::gfx::mes::{Mes, V12};
use crate::gfx::mqd::build_aql;
use crate::ip::Generation;
use crate::time::{Clock, Pause};
use barebell_firmware_if::mes_api::{Frame, Le32, Le64, v12};

/// MEC1 pipes and queues the legacy mapper may use.
const PIPES: usize = crate::gfx::hqd::PIPES as usize;

/// Slots for kernel queues on gfx12: GC 12.0.x drivers use two pipes of
/// four queues (`gfx_v12_0_sw_init()`: `num_pipe_per_mec = 2`,
/// `num_queue_per_pipe = 4`) and give MES queues 2 and 3 of each
/// (`amdgpu_mes_init()`: `compute_hqd_mask = 0xc`), leaving 0 and 1.
pub const GFX12_KERNEL_SLOTS: [u8; PIPES] = [0x3, 0x3, 0, 0];

/// Maps compute queues with `map_legacy_kq` ADD_QUEUEs on uni-MES's KIQ
/// pipe.
pub struct LegacyQueues<'a, C, P, const N: usize> {
    pipe: Mes<'a, C, P, N, V12>,
    doorbells: Doorbells,
    busy: [u8; PIPES],
    allowed: [u8; PIPES],
}

impl<C, P, const N: usize> core::fmt::Debug for LegacyQueues<'_, C, P, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LegacyQueues")
            .field("busy", &self.busy)
            .field("allowed", &self.allowed)
            .finish_non_exhaustive()
    }
}

impl<'a, C: Clock, P: Pause, const N: usize> LegacyQueues<'a, C, P, N> {
    /// Over MES pipe 1's client (which has had its SET_HW_RSRC).
    pub fn new(pipe: Mes<'a, C, P, N, V12>, doorbells: Doorbells) -> Self {
        LegacyQueues {
            pipe,
            doorbells,
            busy: [0; PIPES],
            allowed: GFX12_KERNEL_SLOTS,
        }
    }

    /// Restricts the MEC1 slots used (bit `q` of `mask[pipe]`).
    pub fn set_allowed_slots(&mut self, mask: [u8; PIPES]) {
        self.allowed = mask;
    }

    /// The pipe's client (to tear down, or to send other frames).
    pub fn pipe(&mut self) -> &mut Mes<'a, C, P, N, V12> {
        &mut self.pipe
    }

    fn free_slot(&self) -> Option<(u8, u8)> {
        self.allowed
            .iter()
            .zip(self.busy)
            .enumerate()
            .find_map(|(p, (a, b))| {
                let free = a & !b;
                (free != 0).then_some((p as u8, free.trailing_zeros() as u8))
            })
    }
}

impl<C: Clock, P: Pause, const N: usize> QueueMapper for LegacyQueues<'_, C, P, N> {
    fn probe(&mut self) -> Result<(), MapError> {
        self.pipe().query_status().map_err(MapError::from)
    }

    fn map(&mut self, q: &QueueResources<'_>) -> Result<Mapping, MapError> {
        let (pipe, queue) = self.free_slot().ok_or(MapError::NoFreeSlot)?;
        self.doorbells.claim(q.doorbell)?;
        let params = q.mqd_params();
        if let Err(e) = build_aql(Generation::Gfx12, &q.mqd, &params) {
            self.doorbells.release(q.doorbell);
            return Err(e.into());
        }
        let mut f = v12::AddQueue::new();
        f.pipe_id = Le32::new(u32::from(pipe));
        f.queue_id = Le32::new(u32::from(queue));
        f.doorbell_offset = Le32::new(params.doorbell_dword);
        f.mqd_addr = Le64::new(params.mqd_address);
        f.wptr_addr = Le64::new(params.write_index_address);
        f.queue_type = Le32::new(v12::queue_type::COMPUTE);
        f.flags = Le32::new(
            v12::AddQueueFlags::new()
                .with_map_legacy_kq(true)
                .into_bits(),
        );
        // A frame that timed out may still be executed: the doorbell and
        // the slot stay reserved (see `Mes::submit`).
        if let Err(e) = self.pipe.submit("ADD_QUEUE (map_legacy_kq)", f) {
            if let Some(b) = self.busy.get_mut(usize::from(pipe)) {
                *b |= 1 << queue;
            }
            return Err(MapError::Mes(e));
        }
        if let Some(b) = self.busy.get_mut(usize::from(pipe)) {
            *b |= 1 << queue;
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
        let mapped = self.busy.get(p).is_some_and(|b| b & (1 << m.queue) != 0)
            && self.doorbells.is_used(m.doorbell);
        if !mapped {
            return Err(MapError::NotMapped {
                doorbell: m.doorbell,
            });
        }
        let mut f = v12::RemoveQueue::new();
        f.doorbell_offset = Le32::new(m.doorbell.saturating_mul(2));
        f.pipe_id = Le32::new(u32::from(m.pipe));
        f.queue_id = Le32::new(u32::from(m.queue));
        f.queue_type = Le32::new(v12::queue_type::COMPUTE);
        f.flags = Le32::new(
            v12::RemoveQueueFlags::new()
                .with_unmap_legacy_queue(true)
                .into_bits(),
        );
        self.pipe
            .submit("REMOVE_QUEUE (unmap_legacy_queue)", f)
            .map_err(MapError::Mes)?;
        if let Some(b) = self.busy.get_mut(p) {
            *b &= !(1 << m.queue);
        }
        self.doorbells.release(m.doorbell);
        Ok(())
    }
}
