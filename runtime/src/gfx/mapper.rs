//! Putting a compute queue on the hardware: one trait, several mappers.
//!
//! A queue is memory (ring, `amd_queue_t`, MQD page, EOP buffer) plus a
//! doorbell. "Mapping" it means making one hardware queue slot (HQD) on a
//! MEC pipe load that MQD and listen on that doorbell. There are three ways
//! to get there, which users can compare:
//! - [`crate::gfx::mes::Mes`]: ask the MES scheduler (ADD_QUEUE), as KFD does on
//!   gfx11 and later;
//! - [`crate::gfx::hqd::DirectHqd`]: write the HQD registers ourselves, as
//!   tinygrad's AM driver does;
//! - [`crate::gfx::kiq::Kiq`]: PM4 MAP_QUEUES on the KIQ ring, the HWS style.
//!
//! Doorbells are allocated here, not by the mappers' back ends, so that a
//! collision is refused before anything reaches the device.

use crate::aql::queue::QueueMemory;
use crate::bus::{Block, BlockError, RegisterBus};
use crate::gfx::error::MapError;
use crate::gfx::grbm::GrbmSelect;
use crate::gfx::mqd::{AqlMqdParams, EOP_BYTES, EopBuffer, HqdRegisters, MqdPage};
use crate::ip::Generation;
use crate::mem::Dev;
use crate::regs::Reg;

/// The GC registers a mapper touches, per generation. GC 11.0.0 and
/// 12.0.0 place them identically; each set is checked against its own
/// `gc_*_offset.h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HqdRegs {
    pub generation: Generation,
    pub grbm_gfx_cntl: Reg,
    pub mqd_base_addr: Reg,
    pub hqd_active: Reg,
    pub doorbell_control: Reg,
    pub dequeue_request: Reg,
    pub eop_rptr: Reg,
    pub wptr_lo: Reg,
    pub wptr_hi: Reg,
    pub wptr_poll_addr: Reg,
    pub wptr_poll_addr_hi: Reg,
    pub wptr_poll_cntl1: Reg,
    pub doorbell_range_lower: Reg,
    pub doorbell_range_upper: Reg,
}

impl HqdRegs {
    pub const fn for_generation(g: Generation) -> Result<Self, crate::ip::Unsupported> {
        Ok(match g {
            Generation::Gfx90a | Generation::Gfx94 => {
                return Err(crate::ip::Unsupported::new("HQD register table", g));
            }
            Generation::Gfx11 => {
                use crate::regs::gc_11_0_0 as r;
                HqdRegs {
                    generation: g,
                    grbm_gfx_cntl: r::GRBM_GFX_CNTL,
                    mqd_base_addr: r::CP_MQD_BASE_ADDR,
                    hqd_active: r::CP_HQD_ACTIVE,
                    doorbell_control: r::CP_HQD_PQ_DOORBELL_CONTROL,
                    dequeue_request: r::CP_HQD_DEQUEUE_REQUEST,
                    eop_rptr: r::CP_HQD_EOP_RPTR,
                    wptr_lo: r::CP_HQD_PQ_WPTR_LO,
                    wptr_hi: r::CP_HQD_PQ_WPTR_HI,
                    wptr_poll_addr: r::CP_HQD_PQ_WPTR_POLL_ADDR,
                    wptr_poll_addr_hi: r::CP_HQD_PQ_WPTR_POLL_ADDR_HI,
                    wptr_poll_cntl1: r::CP_PQ_WPTR_POLL_CNTL1,
                    doorbell_range_lower: r::CP_MEC_DOORBELL_RANGE_LOWER,
                    doorbell_range_upper: r::CP_MEC_DOORBELL_RANGE_UPPER,
                }
            }
            Generation::Gfx12 => {
                use crate::regs::gc_12_0_0 as r;
                HqdRegs {
                    generation: g,
                    grbm_gfx_cntl: r::GRBM_GFX_CNTL,
                    mqd_base_addr: r::CP_MQD_BASE_ADDR,
                    hqd_active: r::CP_HQD_ACTIVE,
                    doorbell_control: r::CP_HQD_PQ_DOORBELL_CONTROL,
                    dequeue_request: r::CP_HQD_DEQUEUE_REQUEST,
                    eop_rptr: r::CP_HQD_EOP_RPTR,
                    wptr_lo: r::CP_HQD_PQ_WPTR_LO,
                    wptr_hi: r::CP_HQD_PQ_WPTR_HI,
                    wptr_poll_addr: r::CP_HQD_PQ_WPTR_POLL_ADDR,
                    wptr_poll_addr_hi: r::CP_HQD_PQ_WPTR_POLL_ADDR_HI,
                    wptr_poll_cntl1: r::CP_PQ_WPTR_POLL_CNTL1,
                    doorbell_range_lower: r::CP_MEC_DOORBELL_RANGE_LOWER,
                    doorbell_range_upper: r::CP_MEC_DOORBELL_RANGE_UPPER,
                }
            }
        })
    }

    /// Selects ME `me`, pipe `pipe`, queue `queue` of `gc` (the GC block)
    /// for as long as the returned guard lives.
    pub fn select<'b, B: RegisterBus + ?Sized>(
        &self,
        gc: Block<'b, B>,
        me: u8,
        pipe: u8,
        queue: u8,
    ) -> Result<GrbmSelect<'b, B>, BlockError> {
        GrbmSelect::new(gc, self.grbm_gfx_cntl, me, pipe, queue)
    }

    /// Copies `image` into the selected slot's HQD window: MQD dword
    /// `128 + i` to the `i`-th register from `CP_MQD_BASE_ADDR`.
    pub fn load_window<B: RegisterBus + ?Sized>(
        &self,
        slot: &GrbmSelect<'_, B>,
        image: &HqdRegisters,
    ) -> Result<(), BlockError> {
        let gc = slot.block();
        for (i, w) in (0u32..).zip(image.dwords()) {
            let at = gc.offset_nth(self.mqd_base_addr, i, 1)?;
            gc.bus.write32(at, w);
        }
        Ok(())
    }
}

/// What a mapper needs to know about one queue, in GPU addresses.
///
/// Made only from [`Dev`] handles ([`QueueResources::aql`]), so every
/// address a mapper hands the device is device memory that outlives the
/// device's use of it; that is what lets [`QueueMapper::map`] be safe.
#[derive(Debug, Clone, Copy)]
pub struct QueueResources<'a> {
    pub(crate) mqd: Dev<'a, MqdPage>,
    pub(crate) eop: Dev<'a, EopBuffer>,
    pub(crate) ring_address: u64,
    pub(crate) ring_bytes: u64,
    pub(crate) read_index_address: u64,
    pub(crate) write_index_address: u64,
    /// 64-bit doorbell index in the doorbell BAR.
    pub(crate) doorbell: u32,
    pub(crate) vmid: u8,
}

impl<'a> QueueResources<'a> {
    /// The resources of an AQL queue in `mem`. GPU addresses are host
    /// addresses (the [`Dev`] contract).
    pub fn aql<const SLOTS: usize>(
        mem: Dev<'a, QueueMemory<SLOTS>>,
        mqd: Dev<'a, MqdPage>,
        eop: Dev<'a, EopBuffer>,
        doorbell: u32,
        vmid: u8,
    ) -> Self {
        QueueResources {
            mqd,
            eop,
            ring_address: mem.ring_address(),
            ring_bytes: (SLOTS * 64) as u64,
            read_index_address: mem.read_index_address(),
            write_index_address: mem.write_index_address(),
            doorbell,
            vmid,
        }
    }

    /// The resources of an AQL queue a process placed in its own address
    /// space: ring, read and write pointers at the GPU virtual addresses
    /// it names, as KFD's `set_queue_properties_from_user()` takes them
    /// from `kfd_ioctl_create_queue_args`; the MQD and EOP buffer are the
    /// driver's. `ring_bytes` is checked by the mapper's MQD rules.
    ///
    /// `process` (the VMID or process key, as [`QueueResources::aql`])
    /// must not be 0: the device reaches these addresses only through the
    /// process's page tables, which map only memory the driver owns, so a
    /// wrong address is a GPU fault there; in VMID 0 it would be a bus
    /// address. `None` for 0.
    #[allow(clippy::too_many_arguments)]
    pub fn process_aql(
        mqd: Dev<'a, MqdPage>,
        eop: Dev<'a, EopBuffer>,
        ring_address: u64,
        ring_bytes: u64,
        read_index_address: u64,
        write_index_address: u64,
        doorbell: u32,
        process: u8,
    ) -> Option<Self> {
        (process != 0).then_some(QueueResources {
            mqd,
            eop,
            ring_address,
            ring_bytes,
            read_index_address,
            write_index_address,
            doorbell,
            vmid: process,
        })
    }

    /// The MQD page.
    pub fn mqd(&self) -> Dev<'a, MqdPage> {
        self.mqd
    }

    /// The EOP buffer.
    pub fn eop(&self) -> Dev<'a, EopBuffer> {
        self.eop
    }

    /// The 64-bit doorbell index.
    pub fn doorbell(&self) -> u32 {
        self.doorbell
    }

    /// The HQD's VMID (direct and KIQ mapping) or the process key (MES).
    pub fn vmid(&self) -> u8 {
        self.vmid
    }

    /// The MQD parameters for these resources.
    pub fn mqd_params(&self) -> AqlMqdParams {
        AqlMqdParams {
            mqd_address: self.mqd.address(),
            ring_address: self.ring_address,
            ring_bytes: self.ring_bytes,
            read_index_address: self.read_index_address,
            write_index_address: self.write_index_address,
            doorbell_dword: self.doorbell.saturating_mul(2),
            eop_address: self.eop.address(),
            eop_bytes: EOP_BYTES,
            vmid: self.vmid,
        }
    }
}

/// A mapped queue: enough to unmap it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    pub doorbell: u32,
    pub mqd_address: u64,
    /// MEC pipe and queue slot (direct HQD / KIQ); MES picks its own and
    /// does not tell, so these are 0 for MES.
    pub pipe: u8,
    pub queue: u8,
    pub vmid: u8,
}

/// Maps and unmaps compute queues. Implementations claim the doorbell
/// before touching the device, so a collision is an error with nothing
/// sent.
/// An SDMA queue for a mapper: its MQD page, its placement (ring,
/// pointers, doorbell; the VMID field is ignored under MES) and engine
/// version, and the process key it belongs to (as [`QueueResources`]'s
/// `vmid` names it for MES).
#[derive(Debug, Clone, Copy)]
pub struct SdmaResources<'a> {
    pub mqd: Dev<'a, crate::sdma::SdmaMqd>,
    pub setup: crate::sdma::QueueSetup,
    pub version: crate::sdma::SdmaVersion,
    pub process: u8,
    /// The engine and the queue on it (KFD's `sdma_engine_id`,
    /// `sdma_queue_id`, from `allocate_sdma_queue()`). Mappers that place
    /// one queue on engine 0 (MES, GC 9.4.3's HWS) take 0 and 0 only.
    pub engine: u8,
    pub queue: u32,
}

pub trait QueueMapper {
    /// Builds the queue's MQD and makes the hardware run it. Every address
    /// the device is given comes from `q`'s [`Dev`] handles. `q`'s MQD
    /// page must not be mapped already (a device-level error, see
    /// [`MqdPage`]): unmap a queue before mapping its page again.
    fn map(&mut self, q: &QueueResources<'_>) -> Result<Mapping, MapError>;

    /// Takes the queue off the hardware and frees its doorbell.
    fn unmap(&mut self, m: &Mapping) -> Result<(), MapError>;

    /// Asks the scheduler behind this mapper for a sign of life, bounded
    /// by its own wait (MES `QUERY_SCHEDULER_STATUS`, as
    /// `mes_v11_0_hw_init()` does; the KIQ: its SET_RESOURCES again, which
    /// `amdgpu_gfx_enable_kcq()` sends on every enable). A mapper with no
    /// firmware behind it (direct HQD) has nothing to ask.
    fn probe(&mut self) -> Result<(), MapError> {
        Ok(())
    }

    /// Resets mapped queue `m` in place through the scheduler's own reset
    /// API, if it has one (MES `RESET`); `Ok(false)` if this mapper has
    /// none. The queue stays mapped: [`QueueMapper::unmap`] it after.
    fn reset_queue(&mut self, m: &Mapping) -> Result<bool, MapError> {
        let _ = m;
        Ok(false)
    }

    /// Maps an SDMA queue. Only MES does (`add_queue_mes()` for
    /// `KFD_QUEUE_TYPE_SDMA`); others refuse.
    fn map_sdma(&mut self, q: &SdmaResources<'_>) -> Result<Mapping, MapError> {
        let _ = q;
        Err(MapError::SdmaUnsupported { mapper: "this" })
    }

    /// Takes an SDMA queue [`QueueMapper::map_sdma`] mapped off the
    /// hardware (`remove_queue_mes()` for `KFD_QUEUE_TYPE_SDMA`); others
    /// refuse.
    fn unmap_sdma(&mut self, m: &Mapping) -> Result<(), MapError> {
        let _ = m;
        Err(MapError::SdmaUnsupported { mapper: "this" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aql::QueueMemory;

    /// A mapper with no scheduler behind it (the direct HQD, the PM4 KIQ
    /// and the HWS do not override these) has no per-queue reset to run,
    /// so it says `Ok(false)` and the recovery ladder takes its next rung
    /// rather than count the queue as reset; it has nothing to probe; and
    /// only MES maps SDMA queues (`add_queue_mes()`).
    #[test]
    fn a_mapper_without_a_scheduler_has_no_reset_and_no_sdma() {
        struct Bare;
        impl QueueMapper for Bare {
            fn map(&mut self, _: &QueueResources<'_>) -> Result<Mapping, MapError> {
                Err(MapError::NoFreeSlot)
            }
            fn unmap(&mut self, _: &Mapping) -> Result<(), MapError> {
                Ok(())
            }
        }
        let m = Mapping {
            doorbell: 0x1d,
            mqd_address: 0x1000,
            pipe: 0,
            queue: 1,
            vmid: 8,
        };
        assert_eq!(Bare.reset_queue(&m), Ok(false));
        assert_eq!(Bare.probe(), Ok(()));
        assert!(matches!(
            Bare.unmap_sdma(&m),
            Err(MapError::SdmaUnsupported { .. })
        ));
    }

    /// What a mapper reads back is what the queue's owner handed over:
    /// the process key or VMID, the doorbell, the MQD and EOP buffer, and
    /// the ring whose size the slot count gives (64 bytes per packet).
    #[test]
    fn the_resources_read_back_as_given() {
        extern crate alloc;
        let mem = alloc::boxed::Box::leak(alloc::boxed::Box::new(QueueMemory::<128>::new()));
        let mqd = alloc::boxed::Box::leak(alloc::boxed::Box::new(MqdPage::new()));
        let eop = alloc::boxed::Box::leak(alloc::boxed::Box::new(EopBuffer::new()));
        // SAFETY: leaked, so they stay allocated; no device is given them.
        let (mem, mqd, eop) =
            unsafe { (Dev::assume(&*mem), Dev::assume(&*mqd), Dev::assume(&*eop)) };
        let q = QueueResources::aql(mem, mqd, eop, 0x1d, 9);
        assert_eq!((q.vmid(), q.doorbell()), (9, 0x1d));
        assert_eq!(q.mqd().address(), mqd.address());
        assert_eq!(q.eop().address(), eop.address());
        let p = q.mqd_params();
        assert_eq!(p.ring_bytes, 128 * 64);
        assert_eq!(p.ring_address, mem.ring_address());
        assert!(
            QueueResources::process_aql(mqd, eop, 0x1000, 4096, 0x2000, 0x2008, 0x1d, 0).is_none()
        );
        let u =
            QueueResources::process_aql(mqd, eop, 0x1000, 4096, 0x2000, 0x2008, 0x1e, 3).unwrap();
        assert_eq!((u.vmid(), u.doorbell()), (3, 0x1e));
        let p = u.mqd_params();
        assert_eq!((p.ring_address, p.ring_bytes), (0x1000, 4096));
        assert_eq!(
            (p.read_index_address, p.write_index_address),
            (0x2000, 0x2008)
        );
    }
}
