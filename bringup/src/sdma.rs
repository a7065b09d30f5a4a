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
//! - `kiq` (HWS MAP_QUEUES with engine SDMA): not built; refused with a
//!   typed error.
//!
//! A first FENCE proves the engine fetches before [`open`] returns.
//! Copies ([`CopyQueue::copy`]) are split into COPY_LINEAR packets of at
//! most `copy_max_bytes` and completed by a FENCE; a wait that ends
//! without the fence reads the GFXHUB's latched fault and returns it
//! ([`CopyError::Fault`]).

use crate::Gpu;
use crate::bus::Bus;
use crate::error::{BringupError, ErrorKind, QueueError, ResultAt};
use crate::queue::{Mapping, USER_VMID};
use crate::rings::Pauser;
use crate::sink::{Sink, Step};
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::mapper::SdmaResources;
use barebell::gmc::hub::{HubError, VmFault, read_fault};
use barebell::nbio::{Nbio, NbioError};
use barebell::regs::IpBases;
use barebell::regs::hub::HubRegs;
use barebell::sdma::SdmaMqd;
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

/// A mapped SDMA queue.
pub struct CopyQueue<'p> {
    queue: SdmaQueue<'p, dyn Clock + 'p, Pauser<'p>>,
    bus: Bus<'p>,
    gc: IpBases,
    nbio: Nbio,
    gfxhub: &'static HubRegs,
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
/// to its queue step, and runs a first fence through it.
pub fn open<'p>(
    gpu: &mut Gpu<'p>,
    mapping: Mapping,
    sink: &dyn Sink,
) -> Result<CopyQueue<'p>, BringupError> {
    let s = Step::Queue;
    if mapping == Mapping::Kiq {
        return Err(ErrorKind::Unsupported {
            what: "SDMA queues mapped by the KIQ/HWS (issue 19: not built) on GC",
            version: gpu.ips.gc.version.triple(),
        })
        .at(s);
    }
    if mapping == Mapping::Mes && gpu.queue.as_ref().map(|q| q.mode) != Some(Mapping::Mes) {
        return Err(ErrorKind::Queue(QueueError::NoScheduler)).at(s);
    }
    let (Some(hub), Some(root)) = (gpu.gfxhub, gpu.process_root) else {
        return Err(ErrorKind::Queue(QueueError::NoScheduler)).at(s);
    };
    let area = gpu
        .ring_area
        .as_mut()
        .ok_or(ErrorKind::Queue(QueueError::NoScheduler))
        .at(s)?;
    let mem = area.put(SdmaMemory::new()).at(s)?;
    let mqd = area.put(SdmaMqd::new()).at(s)?;
    let p = gpu.platform;
    let version = SdmaVersion::for_generation(gpu.ips.generation).at(s)?;
    let index = doorbell_index::SDMA_ENGINE0;
    let db = crate::rings::doorbell(gpu, index, s)?;
    let nbio = Nbio::for_version(gpu.ips.nbif.version.triple(), gpu.ips.nbif.bases)
        .map_err(ErrorKind::Nbio)
        .at(s)?;
    if mapping == Mapping::Direct {
        crate::queue::point_vmid(gpu, hub, root)?;
    }
    let mut queue = SdmaQueue::new(mem, db, version, p.clock(), Pauser(p));
    if let Some(presence) = crate::recover::presence(gpu) {
        queue.set_presence(presence);
    }
    let (ring, rptr_addr, wptr_addr) = queue.addresses();
    let setup = QueueSetup {
        ring,
        ring_bytes: RING_BYTES,
        rptr_addr,
        wptr_addr,
        doorbell_index: index,
        vmid: USER_VMID,
    };
    let gc = gpu.ips.gc.bases;
    barebell::nbio::sdma_doorbell_range(
        &gpu.bus,
        &nbio,
        setup.doorbell_dword(),
        SDMA_DOORBELL_RANGE,
    )
    .map_err(ErrorKind::Nbio)
    .at(s)?;
    sdma::unhalt(&gpu.bus, gc, version).at(s)?;
    let mut mes_mapping = None;
    let vmid = match mapping {
        Mapping::Mes => {
            let uq = gpu
                .queue
                .as_mut()
                .ok_or(ErrorKind::Queue(QueueError::NoScheduler))
                .at(s)?;
            let process = uq.mapping.vmid;
            let m = uq
                .mapper_mut()
                .map_sdma(&SdmaResources {
                    mqd,
                    setup,
                    version,
                    process,
                })
                .map_err(ErrorKind::Map)
                .at(s)?;
            mes_mapping = Some(m);
            None
        }
        _ => {
            sdma::load_queue(&gpu.bus, gc, version, &setup).at(s)?;
            Some(USER_VMID)
        }
    };
    let seq = queue.push_fence(BOUND_NS).map_err(sdma_err)?;
    queue.commit();
    queue.wait(seq, BOUND_NS).map_err(sdma_err)?;
    sink.step(
        s,
        format_args!(
            "SDMA queue ready: {} engine 0, {} mapping, ring {:#x} ({} KiB), VMID {}, doorbell {:#x}; first fence {} written",
            version.name(),
            mapping.name(),
            ring,
            RING_BYTES >> 10,
            vmid.map_or_else(|| "picked by MES".into(), |v| alloc::format!("{v}")),
            index,
            seq
        ),
    );
    Ok(CopyQueue {
        queue,
        bus: gpu.bus.clone(),
        gc,
        nbio,
        gfxhub: hub,
        mapping,
        mes_mapping,
        version,
        vmid,
        doorbell: index,
    })
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
    /// GFXHUB latched a fault, the fault.
    pub fn wait(&mut self, seq: u32, bound_ns: u64) -> Result<(), CopyError> {
        match self.queue.wait(seq, bound_ns) {
            Ok(()) => Ok(()),
            // No fault registers to read on a device that is gone.
            Err(error @ SdmaError::DeviceGone { .. }) => Err(CopyError::Sdma(error)),
            Err(error) => {
                match read_fault(&self.bus, &self.gc, self.gfxhub).map_err(CopyError::Hub)? {
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
    /// (`sdma_v6_0_gfx_stop()`). Before `gpu`'s teardown, which does not
    /// know this queue.
    pub fn stop(self, gpu: &mut Gpu<'_>) -> Result<(), BringupError> {
        match (self.mapping, self.mes_mapping) {
            (Mapping::Direct, _) => {
                sdma::stop_queue(&self.bus, self.gc, self.version).at(Step::Unmap)
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
