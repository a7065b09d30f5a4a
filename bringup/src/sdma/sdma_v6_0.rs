//! SDMA 6.0 and 7.0 (GC 11, GC 12): engine 0 on GC's bases (their
//! registers are in GC's header), rung through S2A entry 2; `direct` by
//! registers, `mes` by MES ADD_QUEUE (see [`super`]).

use super::*;

/// SDMA 6.0 and 7.0's block; their differences are in the runtime's
/// [`SdmaVersion`] tables.
#[derive(Debug)]
pub struct SdmaV6_0;

impl SdmaBlock for SdmaV6_0 {
    fn name(&self) -> &'static str {
        "sdma_v6_0"
    }

    fn open<'p>(
        &self,
        gpu: &mut Gpu<'p>,
        mapping: Mapping,
        sink: &dyn Sink,
    ) -> Result<CopyQueue<'p>, BringupError> {
        open(gpu, mapping, sink)
    }

    /// Engine 0, on GC's bases.
    fn engines(&self, gpu: &Gpu<'_>) -> Vec<IpBases> {
        alloc::vec![gpu.ips.gc.bases]
    }
}

/// Maps SDMA engine 0 queue 0 by `mapping` on a device the bring-up took
/// to its queue step, and runs a first fence through it.
pub(super) fn open<'p>(
    gpu: &mut Gpu<'p>,
    mapping: Mapping,
    sink: &dyn Sink,
) -> Result<CopyQueue<'p>, BringupError> {
    let s = Step::Queue;
    if mapping == Mapping::Kiq {
        return Err(ErrorKind::Unsupported {
            what: "SDMA queues mapped by the KIQ (barebell maps them by registers or MES there) on GC",
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
    // From here the engine may be unhalted: the teardown halts it.
    gpu.sdma_started = true;
    let (mem, mqd, nbio) = queue_memory(gpu)?;
    let p = gpu.platform;
    let version = SdmaVersion::for_generation(gpu.ips.generation).at(s)?;
    let index = doorbell_index::SDMA_ENGINE0;
    let db = crate::rings::doorbell(gpu, index, s)?;
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
                    engine: 0,
                    queue: 0,
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
            "SDMA queue ready: {} engine 0, {} mapping, ring {:#x} ({} KiB), VMID {}, {}; first fence {} written",
            version.name(),
            mapping.name(),
            ring,
            RING_BYTES >> 10,
            vmid.map_or_else(|| "picked by MES".into(), |v| alloc::format!("{v}")),
            barebell::aql::doorbell::Slot::new(index),
            seq
        ),
    );
    Ok(CopyQueue {
        queue,
        bus: gpu.bus.clone(),
        engine: gc,
        nbio,
        hub: FaultHub::Gfx(hub, gc),
        mapping,
        mes_mapping,
        version,
        vmid,
        doorbell: index,
    })
}
