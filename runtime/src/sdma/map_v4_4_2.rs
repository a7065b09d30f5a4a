//! SDMA 4.4.2 user queues on GC 9.4.3 (MI300X, MI308X): the two ways a
//! queue reaches an engine, and the wait that reports the VM fault an
//! engine stopped on.
//!
//! - **Directly by registers** ([`map_direct`]), as tinygrad binds its one
//!   SDMA queue (`AM_SDMA.setup_ring` on `regSDMA_GFX` of one instance):
//!   the instance is unhalted (`sdma_v4_4_2_inst_enable()`) and its GFX
//!   queue loaded in `sdma_v4_4_2_gfx_resume()`'s order
//!   ([`super::load_queue_v4_4_2`]) on that instance's own bases.
//! - **By the HWS** ([`map_hws`]), as KFD maps a user SDMA queue in CPSCH
//!   mode: the v9 MQD (`init_mqd_sdma()` + `update_mqd_sdma()`,
//!   [`super::mqd_v9::V9SdmaMqd`]) in its page, then a runlist whose
//!   MAP_QUEUES selects the SDMA engine (`pm_map_queues_v9()`), sent on
//!   the HIQ (`map_queues_cpsch()`). The engine itself must run, which
//!   amdgpu arranges at init (`sdma_v4_4_2_inst_start()`); [`map_hws`]
//!   unhalts it first for the same reason.
//!
//! Either way the host then drives the ring with
//! [`super::SdmaQueue`] (the doorbell carries the write pointer in bytes,
//! `sdma_v4_4_2_ring_set_wptr()`), and [`wait`] turns a fence that never
//! comes into the fault the engine's VM hub latched: an SDMA 4.4.2
//! instance translates through its AID's MMHUB (`ring->vm_hub =
//! AMDGPU_MMHUB0(aid_id)`, `sdma_v4_4_2_sw_init()`).
//!
//! Bases: `sdma` is the SDMA instances' bases from discovery, by instance
//! (`adev->reg_offset[SDMA0_HWIP][i]`); on a one-partition part KFD's
//! engine number is the instance (`allocate_doorbell()` indexes
//! `sdma_doorbell_idx` by `node_id * engines + sdma_engine_id`, node 0).

use super::mqd_v9::{SdmaMqdQueue, SdmaMqdV9Error, V9SdmaMqd};
use super::queue::RING_BYTES;
use super::{QueueSetup, SdmaError, SdmaMemory, SdmaMqd, SdmaQueue, SdmaVersion};
use crate::aql::Doorbell;
use crate::bus::{BlockError, RegisterBus};
use crate::gfx::hws::packets::{Engine, ProcessDesc, QueueDesc};
use crate::gfx::hws::runlist::{self, ProcessQueues, Runlist, RunlistConfig};
use crate::gfx::hws::{Hws, HwsError};
use crate::gmc::hub::{HubError, VmFault, v9};
use crate::mem::Dev;
use crate::regs::IpBases;
use crate::time::{Clock, Pause};

/// Why mapping or waiting on an SDMA 4.4.2 queue failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaV442Error {
    /// No such SDMA instance among the bases discovery gave.
    Engine { engine: u8, engines: usize },
    /// An SDMA register could not be reached.
    Register(BlockError),
    /// The v9 MQD refused the queue.
    Mqd(SdmaMqdV9Error),
    /// The runlist was refused before sending, or the HWS did not
    /// complete it.
    Hws(HwsError),
    /// The ring or the fence wait failed with no fault latched.
    Sdma(SdmaError),
    /// The engine stopped on an access its MMHUB refused: the fault the
    /// hub latched, and how the wait ended.
    Fault { fault: VmFault, error: SdmaError },
    /// The fault registers could not be read.
    Hub(HubError),
    /// More queues for one process's runlist than [`map_hws_with`] holds.
    TooManyQueues { queues: usize, max: usize },
}

impl core::fmt::Display for SdmaV442Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SdmaV442Error::Engine { engine, engines } => write!(
                f,
                "SDMA engine {engine} does not exist: discovery lists {engines} SDMA 4.4.2 instances"
            ),
            SdmaV442Error::Register(e) => write!(f, "SDMA 4.4.2 register: {e}"),
            SdmaV442Error::Mqd(e) => write!(f, "SDMA 4.4.2 MQD: {e}"),
            SdmaV442Error::Hws(e) => write!(f, "mapping the SDMA queue through the HWS: {e}"),
            SdmaV442Error::Sdma(e) => write!(f, "{e}"),
            SdmaV442Error::Fault { fault, error } => {
                write!(f, "the SDMA 4.4.2 engine faulted: {fault} ({error})")
            }
            SdmaV442Error::Hub(e) => write!(f, "reading the latched VM fault: {e}"),
            SdmaV442Error::TooManyQueues { queues, max } => write!(
                f,
                "{queues} queues in one process's runlist: at most {max} are supported"
            ),
        }
    }
}

impl From<BlockError> for SdmaV442Error {
    fn from(e: BlockError) -> Self {
        SdmaV442Error::Register(e)
    }
}
impl From<SdmaMqdV9Error> for SdmaV442Error {
    fn from(e: SdmaMqdV9Error) -> Self {
        SdmaV442Error::Mqd(e)
    }
}
impl From<HwsError> for SdmaV442Error {
    fn from(e: HwsError) -> Self {
        SdmaV442Error::Hws(e)
    }
}
impl From<SdmaError> for SdmaV442Error {
    fn from(e: SdmaError) -> Self {
        SdmaV442Error::Sdma(e)
    }
}

fn instance(sdma: &[IpBases], engine: u8) -> Result<IpBases, SdmaV442Error> {
    sdma.get(usize::from(engine))
        .copied()
        .ok_or(SdmaV442Error::Engine {
            engine,
            engines: sdma.len(),
        })
}

/// Maps a ring on SDMA 4.4.2 instance `engine` directly by registers (the
/// tinygrad way, see the module docs): unhalts the instance, loads its GFX
/// queue with `mem`'s ring (GPU VA = host address), `doorbell_index` (the
/// 64-bit doorbell slot `doorbell` stores to; amdgpu's own ring on the
/// instance uses `adev->doorbell_index.sdma_engine[engine]`,
/// [`runlist::SdmaDoorbells::engine_index`]) and `vmid`, and returns the
/// host side of the queue.
#[allow(clippy::too_many_arguments)]
pub fn map_direct<'a, B, C, P>(
    bus: &B,
    sdma: &[IpBases],
    engine: u8,
    mem: Dev<'a, SdmaMemory>,
    doorbell: Doorbell,
    doorbell_index: u32,
    vmid: u8,
    clock: &'a C,
    pause: P,
) -> Result<SdmaQueue<'a, C, P>, SdmaV442Error>
where
    B: RegisterBus + ?Sized,
    C: Clock + ?Sized,
    P: Pause,
{
    let bases = instance(sdma, engine)?;
    let q = SdmaQueue::new(mem, doorbell, SdmaVersion::V4_4_2, clock, pause);
    let (ring, rptr_addr, wptr_addr) = q.addresses();
    let setup = QueueSetup {
        ring,
        ring_bytes: RING_BYTES,
        rptr_addr,
        wptr_addr,
        doorbell_index,
        vmid,
    };
    // No `SDMA_F32_CNTL` write: the PSP loaded the firmware, and then
    // `sdma_v4_4_2_inst_start()` leaves `HALT` alone
    // (`sdma_v4_4_2_inst_enable()` returns before it under
    // `AMDGPU_FW_LOAD_PSP`); the engine runs with its firmware.
    super::load_queue_v4_4_2(bus, bases, &setup)?;
    Ok(q)
}

/// What [`map_hws`] maps: the process, the engine and queue KFD's
/// `allocate_sdma_queue()` picked, the MQD page, the runlist IB and the
/// packet manager's view of the device.
#[derive(Debug)]
pub struct HwsSdmaQueue<'a, 'ib> {
    pub process: ProcessDesc,
    pub engine: u8,
    /// `sdma_queue_id` (0..8 on SDMA 4.4.2).
    pub queue: u32,
    pub mqd: Dev<'a, SdmaMqd>,
    /// Doorbell dword in the doorbell BAR (`q->properties.doorbell_off`):
    /// the process slice's first dword + 2 ×
    /// [`runlist::SdmaDoorbells::queue_index`]; `doorbell` must store
    /// there.
    pub doorbell_dword: u32,
    pub ib: &'ib mut [u32],
    pub ib_address: u64,
    /// `with_sdma_engines()` set to the part's SDMA instances.
    pub config: RunlistConfig,
}

#[allow(clippy::too_many_arguments)]
/// Maps a ring on SDMA 4.4.2 engine `q.engine` through the HWS (the KFD
/// way, see the module docs): writes the v9 MQD
/// (VMID 0: the scheduler gives the process its VMID), builds a runlist
/// of `q.process` with this one SDMA queue and sends it with `hws` (a
/// client whose SET_RESOURCES went out). Returns the host side of the
/// queue and the runlist sent.
pub fn map_hws<'a, C, P, HC, HP, const R: usize>(
    sdma: &[IpBases],
    hws: &mut Hws<'_, HC, HP, R>,
    q: HwsSdmaQueue<'a, '_>,
    mem: Dev<'a, SdmaMemory>,
    doorbell: Doorbell,
    clock: &'a C,
    pause: P,
) -> Result<(SdmaQueue<'a, C, P>, Runlist), SdmaV442Error>
where
    C: Clock + ?Sized,
    P: Pause,
    HC: Clock,
    HP: Pause,
{
    instance(sdma, q.engine)?;
    let ring = SdmaQueue::new(mem, doorbell, SdmaVersion::V4_4_2, clock, pause);
    let rl = prepare_hws(sdma, q, ring.addresses(), &[])?;
    hws.run_list(&rl)?;
    Ok((ring, rl))
}

/// Queues a process may hold in one [`prepare_hws`] runlist besides the
/// SDMA queue (a fixed bound: no heap here).
pub const MAX_OTHER_QUEUES: usize = 7;

/// [`map_hws`] up to the RUN_LIST, for a ring the caller already placed
/// (`ring`: its address, read-pointer write-back and write-pointer poll
/// addresses, as [`SdmaQueue::addresses`] gives them), in a process that
/// already has `others` mapped (its compute queues): builds the runlist
/// into `q.ib` naming them first, then the SDMA queue, as
/// `pm_create_runlist_ib()` walks a process's queue list in creation
/// order (a new RUN_LIST replaces the scheduler's runlist,
/// `map_queues_cpsch()`, so a process's queues must all be in it) and
/// writes the MQD (no register write: `HALT` is left alone, see
/// [`map_direct`]). The caller sends the
/// returned runlist ([`Hws::run_list`]) once `q.ib` is in device memory.
pub fn prepare_hws(
    sdma: &[IpBases],
    q: HwsSdmaQueue<'_, '_>,
    ring: (u64, u64, u64),
    others: &[QueueDesc],
) -> Result<Runlist, SdmaV442Error> {
    instance(sdma, q.engine)?;
    let (ring_address, rptr_address, wptr_address) = ring;
    let m = V9SdmaMqd::build(&SdmaMqdQueue {
        ring_address,
        ring_bytes: RING_BYTES as u64,
        rptr_address,
        doorbell_dword: q.doorbell_dword,
        vmid: 0,
        engine: u32::from(q.engine),
        queue: q.queue,
    })?;
    let own = QueueDesc {
        engine: Engine::Sdma { id: q.engine },
        ..QueueDesc::compute(q.doorbell_dword, q.mqd.address(), wptr_address)
    };
    if others.len() > MAX_OTHER_QUEUES {
        return Err(SdmaV442Error::TooManyQueues {
            queues: others.len() + 1,
            max: MAX_OTHER_QUEUES + 1,
        });
    }
    let mut desc = [own; MAX_OTHER_QUEUES + 1];
    desc[..others.len()].copy_from_slice(others);
    desc[others.len()] = own;
    let procs = [ProcessQueues {
        process: q.process,
        queues: &desc[..=others.len()],
    }];
    // Refuse what KFD would before anything reaches the device.
    let rl = runlist::build(&q.config, &procs, q.ib, q.ib_address)?;
    // `HALT` left alone, as in [`map_direct`].
    q.mqd.get().write(&m.dwords());
    Ok(rl)
}

/// Waits up to `bound_ns` for fence `seq` on an SDMA 4.4.2 queue; if it
/// does not come and the engine's MMHUB (`mmhub`: its AID's MMHUB 1.8
/// bases) latched a fault, that fault ([`SdmaV442Error::Fault`]).
pub fn wait<B, C, P>(
    queue: &mut SdmaQueue<'_, C, P>,
    seq: u32,
    bound_ns: u64,
    bus: &B,
    mmhub: &IpBases,
) -> Result<(), SdmaV442Error>
where
    B: RegisterBus + ?Sized,
    C: Clock + ?Sized,
    P: Pause,
{
    match queue.wait(seq, bound_ns) {
        Ok(()) => Ok(()),
        Err(error @ SdmaError::DeviceGone { .. }) => Err(SdmaV442Error::Sdma(error)),
        Err(error) => match v9::read_fault(bus, mmhub, &v9::MMHUB_1_8) {
            Ok(Some(fault)) => Err(SdmaV442Error::Fault { fault, error }),
            Ok(None) => Err(SdmaV442Error::Sdma(error)),
            Err(e) => Err(SdmaV442Error::Hub(e)),
        },
    }
}

/// `hipMemcpy` on an SDMA 4.4.2 queue: COPY_LINEAR packets of at most
/// [`super::pkt::COPY_MAX_BYTES`] (22-bit counts on 4.4.2), a FENCE, the
/// doorbell, then [`wait`]. Returns how many COPY_LINEAR packets it took.
pub fn copy<B, C, P>(
    queue: &mut SdmaQueue<'_, C, P>,
    src: u64,
    dst: u64,
    bytes: u64,
    bound_ns: u64,
    bus: &B,
    mmhub: &IpBases,
) -> Result<u32, SdmaV442Error>
where
    B: RegisterBus + ?Sized,
    C: Clock + ?Sized,
    P: Pause,
{
    let packets = queue.push_copy(src, dst, bytes, bound_ns)?;
    let seq = queue.push_fence(bound_ns)?;
    queue.commit();
    wait(queue, seq, bound_ns, bus, mmhub)?;
    Ok(packets)
}
