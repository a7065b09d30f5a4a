//! SDMA 4.4.0 (GC 9.4.2, Aldebaran / MI210), which Linux drives with
//! `sdma_v4_0.c`: five instances, each on its own register base
//! ([`barebell::sdma::sdma_v4_4_0::instance_bases`]), all translating
//! through the one MMHUB (`AMDGPU_MMHUB0(0)`).
//!
//! Start ([`SdmaBlock::start`]): every instance unhalted, as
//! `sdma_v4_0_start()` does through `sdma_v4_0_enable(adev, true)` even
//! though the PSP loaded the firmware. User queues then go through the
//! HWS: KFD's `create_queue_cpsch()` builds a `struct v9_sdma_mqd` and
//! adds the queue to the runlist; the HWS loads it onto one of the
//! engine's RLC queues. [`open`] here maps engine 0 queue 0 that way
//! (`hws` mapping only: loading a queue by registers on 4.4.0 is not
//! built, and refused with the reason).
//!
//! Not done (nothing the model checks): `sdma_v4_0_ctx_switch_enable()`
//! (`SDMA0_CNTL.AUTO_CTXSW_ENABLE`, the phase quanta), the golden
//! registers of `sdma_v4_0_init_golden_registers()`, the kernel's own GFX
//! and page rings, and `sdma_v4_0_rlc_resume()`'s doorbell setup.

use super::*;
use barebell::sdma::sdma_v4_4_0;

/// SDMA 4.4.0's block.
#[derive(Debug)]
pub struct SdmaV4_0;

impl SdmaBlock for SdmaV4_0 {
    fn name(&self) -> &'static str {
        "sdma_v4_0"
    }

    fn open<'p>(
        &self,
        gpu: &mut Gpu<'p>,
        mapping: Mapping,
        sink: &dyn Sink,
    ) -> Result<CopyQueue<'p>, BringupError> {
        open(self, gpu, mapping, sink)
    }

    /// Every instance (`sdma_v4_0_hw_fini()` → `sdma_v4_0_enable(adev,
    /// false)` halts them all).
    fn engines(&self, gpu: &Gpu<'_>) -> Vec<IpBases> {
        bases(gpu)
    }

    /// `sdma_v4_0_enable(adev, true)`: `SDMA0_F32_CNTL.HALT` cleared on
    /// every instance.
    fn start(&self, gpu: &mut Gpu<'_>) -> Result<(), BringupError> {
        // From here engines may run: the teardown halts them.
        gpu.sdma_started = true;
        for b in bases(gpu) {
            sdma::unhalt(&gpu.bus, b, SdmaVersion::V4_4_0)
                .map_err(|e| ErrorKind::Sdma(SdmaError::Register(e)))
                .at(Step::Queue)?;
        }
        Ok(())
    }
}

/// Every SDMA 4.4.0 instance's register base, in instance order.
pub fn bases(gpu: &Gpu<'_>) -> Vec<IpBases> {
    let mask = gpu.ips.topology.sdma_mask;
    (0..32u8)
        .filter(|i| mask >> i & 1 != 0)
        .filter_map(|i| {
            gpu.ips
                .all
                .iter()
                .find(|ip| ip.hw_id == hw_id::SDMA0 && ip.instance == i)
                .map(|ip| sdma_v4_4_0::instance_bases(i, &ip.bases))
        })
        .collect()
}

/// [`open`] on GC 9.4.2 (see the module docs): engine 0 queue 0 through
/// the HWS.
fn open<'p>(
    block: &SdmaV4_0,
    gpu: &mut Gpu<'p>,
    mapping: Mapping,
    sink: &dyn Sink,
) -> Result<CopyQueue<'p>, BringupError> {
    let s = Step::Queue;
    let version = SdmaVersion::V4_4_0;
    if mapping != Mapping::Hws {
        return Err(ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
            "an SDMA 4.4.0 queue without the HWS (--mapping hws maps it)",
            gpu.ips.generation,
        )))
        .at(s);
    }
    if gpu.queue.as_ref().map(|q| q.mode) != Some(Mapping::Hws) {
        return Err(ErrorKind::Queue(QueueError::NoScheduler)).at(s);
    }
    let engines = u8::try_from(bases(gpu).len()).unwrap_or(u8::MAX);
    let index = barebell::gfx::hws::runlist::SdmaDoorbells::vega20(engines)
        .queue_index(0, 0)
        .ok_or(ErrorKind::MissingIp { ip: "SDMA0" })
        .at(s)?;
    let engine = *bases(gpu)
        .first()
        .ok_or(ErrorKind::MissingIp { ip: "SDMA0" })
        .at(s)?;
    let mmhub = gpu
        .ips
        .aids(hw_id::MMHUB)
        .first()
        .map(|a| a.bases)
        .ok_or(ErrorKind::MissingIp { ip: "MMHUB" })
        .at(s)?;
    block.start(gpu)?;
    let (mem, mqd, nbio) = queue_memory(gpu)?;
    let p = gpu.platform;
    let db = crate::rings::doorbell(gpu, index, s)?;
    let mut queue = SdmaQueue::new(mem, db, version, p.clock(), Pauser(p));
    let (ring, rptr_addr, wptr_addr) = queue.addresses();
    let setup = QueueSetup {
        ring,
        ring_bytes: RING_BYTES,
        rptr_addr,
        wptr_addr,
        doorbell_index: index,
        vmid: 0,
    };
    let m = gpu
        .queue
        .as_mut()
        .ok_or(ErrorKind::Queue(QueueError::NoScheduler))
        .at(s)?
        .mapper_mut()
        .map_sdma(&SdmaResources {
            mqd,
            setup,
            version,
            process: 0,
            engine: 0,
            queue: 0,
        })
        .map_err(ErrorKind::Map)
        .at(s)?;
    if let Some(presence) = crate::recover::presence(gpu) {
        queue.set_presence(presence);
    }
    let seq = queue.push_fence(BOUND_NS).map_err(sdma_err)?;
    queue.commit();
    queue.wait(seq, BOUND_NS).map_err(sdma_err)?;
    sink.step(
        s,
        format_args!(
            "SDMA queue ready: {} engine 0 queue 0 (every instance unhalted, sdma_v4_0_enable()), hws mapping, ring {:#x} ({} KiB), VMID picked by the HWS, {}; first fence {} written",
            version.name(),
            queue.addresses().0,
            RING_BYTES >> 10,
            barebell::aql::doorbell::Slot::new(index),
            seq
        ),
    );
    Ok(CopyQueue {
        queue,
        bus: gpu.bus.clone(),
        engine,
        nbio,
        hub: FaultHub::Mmhub17(mmhub),
        mapping,
        mes_mapping: Some(m),
        version,
        vmid: None,
        doorbell: index,
    })
}
