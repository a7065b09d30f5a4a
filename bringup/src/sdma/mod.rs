//! SDMA engine 0 queue 0 on a brought-up device: the copy engine behind
//! `hipMemcpy` (issue 19).
//!
//! [`open`] works on the bring-up's result ([`crate::Gpu`]), after the
//! queue step: the SDMA ring, its read-pointer write-back and
//! write-pointer poll words are placed in what the queue step left of the
//! ring area (GPU VA = host address in the process tables), and the
//! queue runs in [`crate::queue::USER_VMID`] with the user memory and user
//! VRAM mapped ([`crate::gmc`]). By mapping:
//! - `direct`: engine 0 is unhalted and queue 0 loaded by registers, as
//!   tinygrad's AM binds its one SDMA queue (`AM_SDMA.init_hw`,
//!   `AM_SDMA.setup_ring`) and Linux's `sdma_v6_0_start()` /
//!   `sdma_v6_0_gfx_resume()` do for the kernel ring, with the doorbell
//!   `AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0` routed to SDMA through S2A
//!   entry 2 (`nbio_v4_3_sdma_doorbell_range()`, 20 dwords as
//!   `soc21_init_doorbell_index()` sizes it per instance). Linux and
//!   tinygrad run that ring in VMID 0; a *user* queue runs in the
//!   process's VMID, as KFD's MQD does (`update_mqd_sdma()` puts the
//!   queue's VMID in `RB_CNTL`): barebell's choice for a direct user
//!   queue.
//! - `mes`: on a bring-up whose user queue MES mapped, the engine is
//!   unhalted and S2A entry 2 set as the kernel driver does
//!   (`sdma_v6_0_start()` runs whether or not MES schedules user
//!   queues), then the queue is added by MES ADD_QUEUE with
//!   `MES_QUEUE_TYPE_SDMA` (`add_queue_mes()` for `KFD_QUEUE_TYPE_SDMA`,
//!   `mes_v11_0_add_hw_queue()`) and the MQD `update_mqd_sdma()` builds,
//!   in the process the queue step registered; MES picks the VMID.
//! - `kiq` on gfx11/gfx12: not built; refused with a typed error.
//!
//! On GC 9.4.3 (MI300X, MI308X: SDMA 4.4.2, [`barebell::sdma::map_v4_4_2`])
//! the queue is on SDMA instance 0 (AID 0), on that instance's own bases,
//! with amdgpu's doorbell for the instance (`sdma_engine[0]` = 0x100,
//! `aqua_vanjaram_doorbell_index_init()`; KFD's `allocate_doorbell()`
//! gives engine 0 queue 0 the same index):
//! - `direct` and `kiq`: loaded by registers in [`USER_VMID`]
//!   ([`map_v4_4_2::map_direct`], tinygrad's way); the instance
//!   translates through its AID's MMHUB, so [`USER_VMID`]'s context on
//!   every AID's MMHUB is pointed at the process tables first, as
//!   `kgd_gfx_v9_set_vm_context_page_table_base()` does for both hubs
//!   (`mmhub_v1_8_setup_vm_pt_regs()`; the queue step did the GFXHUBs),
//!   and that VMID's TLB flushed on each (`gmc_v9_0_flush_gpu_tlb()`);
//! - `hws`: through the HWS the bring-up's user queue was mapped by, in
//!   the same process (KFD's MAP_QUEUES with the SDMA engine,
//!   [`map_v4_4_2::prepare_hws`], via the queue's mapper); the HWS picks
//!   the VMID.
//!
//! A first FENCE proves the engine fetches before [`open`] returns.
//! Copies ([`CopyQueue::copy`]) are split into COPY_LINEAR packets of at
//! most `copy_max_bytes` and completed by a FENCE; a wait that ends
//! without the fence reads the GFXHUB's latched fault and returns it
//! ([`CopyError::Fault`]).

pub mod sdma_v4_0;
pub mod sdma_v4_4_2;
pub mod sdma_v6_0;

use crate::Gpu;
use crate::bus::Bus;
use crate::error::{BringupError, ErrorKind, QueueError, ResultAt};
use crate::queue::{Mapping, USER_VMID};
use crate::rings::Pauser;
use crate::sink::{Sink, Step};
use alloc::vec::Vec;
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::mapper::SdmaResources;
use barebell::gmc::hub::{HubError, VmFault, mmhub_v1_8, read_fault, v9};
use barebell::ip::hw_id;
use barebell::nbio::{Nbio, NbioError};
use barebell::regs::IpBases;
use barebell::regs::hub::HubRegs;
use barebell::sdma::SdmaMqd;
use barebell::sdma::map_v4_4_2;
use barebell::sdma::queue::RING_BYTES;
use barebell::sdma::{
    self, CopyDirection, QueueSetup, SdmaError, SdmaMemory, SdmaQueue, SdmaVersion,
};
use barebell::time::Clock;

/// Bound on the first fence and, by default, on each copy's wait.
pub const BOUND_NS: u64 = 2_000_000_000;
/// Doorbell dwords S2A entry 2 routes to SDMA for one instance
/// (`adev->doorbell_index.sdma_doorbell_range = 20`, `soc21.c`).
pub const SDMA_DOORBELL_RANGE: u8 = 20;

/// Why a copy failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyError {
    /// The ring or the wait failed with no fault latched.
    Sdma(SdmaError),
    /// The engine stopped on an access the GFXHUB refused: the fault it
    /// latched, and how the wait ended.
    Fault { fault: VmFault, error: SdmaError },
    /// The fault registers could not be read.
    Hub(HubError),
    /// The HDP flush before the submission failed.
    Nbio(NbioError),
}

impl core::fmt::Display for CopyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CopyError::Sdma(e) => write!(f, "{e}"),
            CopyError::Fault { fault, error } => {
                write!(f, "the SDMA engine faulted: {fault} ({error})")
            }
            CopyError::Hub(e) => write!(f, "reading the latched VM fault: {e}"),
            CopyError::Nbio(e) => write!(f, "HDP flush before the copy: {e}"),
        }
    }
}

impl From<SdmaError> for CopyError {
    fn from(e: SdmaError) -> Self {
        CopyError::Sdma(e)
    }
}

/// Where a queue's engine takes its VM faults: the GFXHUB of a gfx11/12
/// part (SDMA 6/7 are GFXHUB clients), or the MMHUB 1.8 of the AID an
/// SDMA 4.4.2 instance sits on (`ring->vm_hub = AMDGPU_MMHUB0(aid_id)`).
#[derive(Debug, Clone, Copy)]
enum FaultHub {
    Gfx(&'static HubRegs, IpBases),
    Mmhub18(IpBases),
    /// Aldebaran's one MMHUB 9.4.2, driven as MMHUB 1.7
    /// (`sdma_v4_0_sw_init()`: `AMDGPU_MMHUB0(0)`).
    Mmhub17(IpBases),
}

/// A mapped SDMA queue.
pub struct CopyQueue<'p> {
    queue: SdmaQueue<'p, dyn Clock + 'p, Pauser<'p>>,
    bus: Bus<'p>,
    /// The engine's registers: GC's bases on SDMA 6/7, the instance's own
    /// on SDMA 4.4.2.
    engine: IpBases,
    nbio: Nbio,
    hub: FaultHub,
    pub mapping: Mapping,
    /// What MES ADD_QUEUE mapped (MES mapping only), for REMOVE_QUEUE.
    mes_mapping: Option<barebell::gfx::mapper::Mapping>,
    pub version: SdmaVersion,
    /// The VMID the queue runs in: known for the direct mapping; MES
    /// picks its own (`None`).
    pub vmid: Option<u8>,
    /// The doorbell's 64-bit slot index.
    pub doorbell: u32,
}

impl core::fmt::Debug for CopyQueue<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CopyQueue")
            .field("mapping", &self.mapping)
            .field("version", &self.version)
            .field("vmid", &self.vmid)
            .field("doorbell", &self.doorbell)
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

fn sdma_err(e: SdmaError) -> BringupError {
    BringupError {
        step: Step::Queue,
        kind: ErrorKind::Sdma(e),
        teardown: None,
    }
}

/// Maps SDMA engine 0 queue 0 by `mapping` on a device the bring-up took
/// to its queue step, and runs a first fence through it, by the SDMA
/// version's block ([`SdmaBlock`]).
pub fn open<'p>(
    gpu: &mut Gpu<'p>,
    mapping: Mapping,
    sink: &dyn Sink,
) -> Result<CopyQueue<'p>, BringupError> {
    let block = gpu
        .blocks
        .sdma
        .ok_or(ErrorKind::MissingIp { ip: "SDMA0" })
        .at(Step::Queue)?;
    block.open(gpu, mapping, sink)
}

/// What the bring-up asks of an SDMA version, chosen with the other
/// blocks after discovery by SDMA0's version, as Linux's
/// `amdgpu_discovery_set_sdma_ip_blocks()` picks `sdma_v4_4_2`,
/// `sdma_v6_0` or `sdma_v7_0`.
pub trait SdmaBlock: Sync + core::fmt::Debug {
    /// The version, as Linux names the block.
    fn name(&self) -> &'static str;
    /// [`open`] on this version.
    fn open<'p>(
        &self,
        gpu: &mut Gpu<'p>,
        mapping: Mapping,
        sink: &dyn Sink,
    ) -> Result<CopyQueue<'p>, BringupError>;
    /// The registers of every engine the teardown halts.
    fn engines(&self, gpu: &Gpu<'_>) -> Vec<IpBases>;
    /// Starts the engines for queues a scheduler maps later (the HWS's
    /// user SDMA queues), as the version's `hw_init` does. Versions whose
    /// engines run with the firmware the PSP loaded, or whose [`open`]
    /// starts its own engine, have nothing to do.
    fn start(&self, gpu: &mut Gpu<'_>) -> Result<(), BringupError> {
        let _ = gpu;
        Ok(())
    }
}

/// Starts the SDMA engines of `gpu` for queues the HWS maps
/// ([`SdmaBlock::start`]); the teardown halts them again.
pub fn start(gpu: &mut Gpu<'_>) -> Result<(), BringupError> {
    let block = gpu
        .blocks
        .sdma
        .ok_or(ErrorKind::MissingIp { ip: "SDMA0" })
        .at(Step::Queue)?;
    block.start(gpu)
}

/// A queue's memory: the ring and its pointers in the user part (process
/// tables), as `set_queue_properties_from_user()` in `kfd_chardev.c`
/// takes them from user memory; the MQD in the driver part (VMID0 only),
/// as `allocate_sdma_mqd()` in `kfd_mqd_manager.c` carves it from the
/// kernel GTT buffer `allocate_hiq_sdma_mqd()` gets. Then the NBIO whose
/// HDP a copy flushes.
fn queue_memory<'p>(
    gpu: &mut Gpu<'p>,
) -> Result<
    (
        barebell::mem::Dev<'p, SdmaMemory>,
        barebell::mem::Dev<'p, SdmaMqd>,
        Nbio,
    ),
    BringupError,
> {
    let s = Step::Queue;
    let mem = gpu
        .user_rings
        .as_mut()
        .ok_or(ErrorKind::Queue(QueueError::NoScheduler))
        .at(s)?
        .put(SdmaMemory::new())
        .at(s)?;
    let mqd = gpu
        .ring_area
        .as_mut()
        .ok_or(ErrorKind::Queue(QueueError::NoScheduler))
        .at(s)?
        .put(SdmaMqd::new())
        .at(s)?;
    let nbio = Nbio::for_version(gpu.ips.nbif.version.triple(), gpu.ips.nbif.bases)
        .map_err(ErrorKind::Nbio)
        .at(s)?;
    Ok((mem, mqd, nbio))
}

/// The block for SDMA0 `version`, or `None` if barebell has none.
pub fn block_for(version: (u8, u8, u8)) -> Option<&'static dyn SdmaBlock> {
    match version {
        (4, 4, 2) => Some(&sdma_v4_4_2::SdmaV4_4_2),
        (4, 4, 0) => Some(&sdma_v4_0::SdmaV4_0),
        (6, 0, _) | (7, 0, _) => Some(&sdma_v6_0::SdmaV6_0),
        _ => None,
    }
}

impl<'p> CopyQueue<'p> {
    /// The ring, for inspection.
    pub fn queue(&self) -> &SdmaQueue<'p, dyn Clock + 'p, Pauser<'p>> {
        &self.queue
    }

    /// The ring, to push packets of any kind
    /// ([`barebell::sdma::pkt::Packet`]) and publish them.
    pub fn queue_mut(&mut self) -> &mut SdmaQueue<'p, dyn Clock + 'p, Pauser<'p>> {
        &mut self.queue
    }

    /// Flushes the HDP (host writes to VRAM through BAR0 become visible
    /// to the engine: `amdgpu_device_flush_hdp()` before a submission),
    /// then submits the copy of `bytes` from `src` to `dst` (GPU VAs of
    /// the queue's VMID) and its fence; returns the fence's sequence
    /// number.
    pub fn submit_copy(&mut self, dst: u64, src: u64, bytes: u64) -> Result<u32, CopyError> {
        crate::nbio::flush_hdp(&self.bus, &self.nbio).map_err(CopyError::Nbio)?;
        Ok(self.queue.submit_copy(src, dst, bytes, BOUND_NS)?)
    }

    /// Submits a fill of `bytes` at `dst` with the dword `data`, and its
    /// fence.
    pub fn submit_fill(&mut self, dst: u64, data: u32, bytes: u64) -> Result<u32, CopyError> {
        self.queue.push_fill(dst, data, bytes, BOUND_NS)?;
        let seq = self.queue.push_fence(BOUND_NS)?;
        self.queue.commit();
        Ok(seq)
    }

    /// Waits up to `bound_ns` for fence `seq`; if it does not come and the
    /// engine's hub (the GFXHUB; on SDMA 4.4.2 its AID's MMHUB) latched a
    /// fault, the fault.
    pub fn wait(&mut self, seq: u32, bound_ns: u64) -> Result<(), CopyError> {
        match self.queue.wait(seq, bound_ns) {
            Ok(()) => Ok(()),
            // No fault registers to read on a device that is gone.
            Err(error @ SdmaError::DeviceGone { .. }) => Err(CopyError::Sdma(error)),
            Err(error) => {
                let fault = match self.hub {
                    FaultHub::Gfx(regs, bases) => read_fault(&self.bus, &bases, regs),
                    FaultHub::Mmhub18(bases) => v9::read_fault(&self.bus, &bases, &v9::MMHUB_1_8),
                    FaultHub::Mmhub17(bases) => v9::read_fault(&self.bus, &bases, &v9::MMHUB_1_7),
                }
                .map_err(CopyError::Hub)?;
                match fault {
                    Some(fault) => Err(CopyError::Fault { fault, error }),
                    None => Err(CopyError::Sdma(error)),
                }
            }
        }
    }

    /// `hipMemcpy(dst, src, bytes, direction)`: the direction only names
    /// the buffers (the engine copies VA to VA in the queue's VMID).
    pub fn copy(
        &mut self,
        dst: u64,
        src: u64,
        bytes: u64,
        _direction: CopyDirection,
    ) -> Result<(), CopyError> {
        let seq = self.submit_copy(dst, src, bytes)?;
        self.wait(seq, BOUND_NS)
    }

    /// Takes the queue off the engine: a queue MES mapped by MES
    /// REMOVE_QUEUE on `gpu`'s scheduler (`remove_queue_mes()`), a
    /// directly loaded one by stopping the engine's queue
    /// (`sdma_v6_0_gfx_stop()`, `sdma_v4_4_2_inst_gfx_stop()`), one the
    /// GC 9.4.3 HWS mapped through that HWS (see
    /// [`crate::gfx::gfx_v9_4_3::queue::XccUnmapper`]). Before `gpu`'s teardown, which
    /// does not know this queue.
    pub fn stop(self, gpu: &mut Gpu<'_>) -> Result<(), BringupError> {
        match (self.mapping, self.mes_mapping) {
            (Mapping::Direct | Mapping::Kiq, _) => {
                sdma::stop_queue(&self.bus, self.engine, self.version).at(Step::Unmap)
            }
            (_, Some(m)) => gpu
                .queue
                .as_mut()
                .ok_or(ErrorKind::Queue(QueueError::NoScheduler))
                .at(Step::Unmap)?
                .mapper_mut()
                .unmap_sdma(&m)
                .map_err(ErrorKind::Map)
                .at(Step::Unmap),
            (_, None) => Err(ErrorKind::Queue(QueueError::NoScheduler)).at(Step::Unmap),
        }
    }
}

#[cfg(test)]
mod block_tests {
    use super::block_for;

    #[test]
    fn each_sdma_version_gets_its_block() {
        // amdgpu_discovery_set_sdma_ip_blocks(): 4.4.2 → sdma_v4_4_2,
        // 6.0.x → sdma_v6_0, 7.0.x → sdma_v7_0 (one block here).
        assert_eq!(block_for((4, 4, 2)).unwrap().name(), "sdma_v4_4_2");
        assert_eq!(block_for((6, 0, 0)).unwrap().name(), "sdma_v6_0");
        assert_eq!(block_for((7, 0, 1)).unwrap().name(), "sdma_v6_0");
        // 4.4.0 (Aldebaran) → sdma_v4_0.
        assert_eq!(block_for((4, 4, 0)).unwrap().name(), "sdma_v4_0");
        assert!(block_for((5, 2, 0)).is_none());
    }
}
