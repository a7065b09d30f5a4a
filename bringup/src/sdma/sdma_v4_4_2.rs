//! SDMA 4.4.2 (GC 9.4.3): instance 0 on its own bases, on AID 0; `direct`
//! and `kiq` by registers, `hws` through the HWS (see [`super`]).

use super::*;

/// SDMA 4.4.2's block.
#[derive(Debug)]
pub struct SdmaV4_4_2;

impl SdmaBlock for SdmaV4_4_2 {
    fn name(&self) -> &'static str {
        "sdma_v4_4_2"
    }

    fn open<'p>(
        &self,
        gpu: &mut Gpu<'p>,
        mapping: Mapping,
        sink: &dyn Sink,
    ) -> Result<CopyQueue<'p>, BringupError> {
        open(gpu, mapping, sink)
    }

    /// Every instance (`sdma_v4_4_2_hw_fini()` halts them all).
    fn engines(&self, gpu: &Gpu<'_>) -> Vec<IpBases> {
        sdma_v4_4_2_bases(gpu)
    }
}

/// The bases of every SDMA 4.4.2 instance discovery lists on `gpu`, in
/// instance order (`adev->reg_offset[SDMA0_HWIP][i]` for `i` in
/// `sdma_mask`).
pub fn sdma_v4_4_2_bases(gpu: &Gpu<'_>) -> Vec<IpBases> {
    let mask = gpu.ips.topology.sdma_mask;
    (0..32u8)
        .filter(|i| mask >> i & 1 != 0)
        .filter_map(|i| {
            gpu.ips
                .all
                .iter()
                .rev()
                .find(|ip| ip.hw_id == hw_id::SDMA0 && ip.instance == i)
                .map(|ip| ip.bases)
        })
        .collect()
}

/// GC 9.4.3's `direct` and `kiq` SDMA mapping: the user VMID's page
/// tables on every AID's MMHUB
/// (`kgd_gfx_v9_set_vm_context_page_table_base()` reaches the MMHUBs too;
/// the queue step pointed every XCC's GFXHUB), that VMID's TLB flushed,
/// then instance 0's queue programmed by its registers.
#[allow(clippy::too_many_arguments)]
fn map_v4_4_2_by_registers<'p>(
    gpu: &Gpu<'p>,
    aids: &[barebell::discovery::IpInfo],
    bases: &[IpBases],
    root: u64,
    mem: barebell::mem::Dev<'p, SdmaMemory>,
    db: barebell::aql::Doorbell,
    index: u32,
) -> Result<SdmaQueue<'p, dyn Clock + 'p, Pauser<'p>>, BringupError> {
    let s = Step::Queue;
    let p = gpu.platform;
    let blocks: Vec<_> = aids.iter().map(|a| gpu.bus.block(a.bases)).collect();
    let pd = root | 1;
    mmhub_v1_8::setup_vm_pt_regs(&blocks, u32::from(USER_VMID), pd).at(s)?;
    for b in &blocks {
        v9::flush_gpu_tlb(b, p.clock(), &v9::MMHUB_1_8, u32::from(USER_VMID), 0).at(s)?;
    }
    map_v4_4_2::map_direct(
        &gpu.bus,
        bases,
        0,
        mem,
        db,
        index,
        USER_VMID,
        p.clock(),
        Pauser(p),
    )
    .map_err(|e| ErrorKind::Map(barebell::gfx::error::MapError::SdmaV442(e)))
    .at(s)
}

/// [`open`] on GC 9.4.3 (see the module docs): SDMA 4.4.2 instance 0.
pub(super) fn open<'p>(
    gpu: &mut Gpu<'p>,
    mapping: Mapping,
    sink: &dyn Sink,
) -> Result<CopyQueue<'p>, BringupError> {
    let s = Step::Queue;
    let version = SdmaVersion::V4_4_2;
    if mapping == Mapping::Mes {
        return Err(ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
            "MES (GC 9.4.3 maps SDMA queues with the HWS: --mapping hws)",
            gpu.ips.generation,
        )))
        .at(s);
    }
    if mapping == Mapping::Hws && gpu.queue.as_ref().map(|q| q.mode) != Some(Mapping::Hws) {
        return Err(ErrorKind::Queue(QueueError::NoScheduler)).at(s);
    }
    let root = gpu
        .process_root
        .ok_or(ErrorKind::Queue(QueueError::NoScheduler))
        .at(s)?;
    // From here instances may be unhalted: the teardown halts them.
    gpu.sdma_started = true;
    let bases = sdma_v4_4_2_bases(gpu);
    let engines = u8::try_from(bases.len()).unwrap_or(u8::MAX);
    let index = barebell::gfx::hws::runlist::SdmaDoorbells::gc_9_4_3(engines)
        .engine_index(0)
        .ok_or(ErrorKind::MissingIp { ip: "SDMA0" })
        .at(s)?;
    let engine = *bases
        .first()
        .ok_or(ErrorKind::MissingIp { ip: "SDMA0" })
        .at(s)?;
    // Instance 0 is on AID 0: its MMHUB takes the faults.
    let aids = gpu.ips.aids(hw_id::MMHUB);
    let mmhub0 = aids
        .first()
        .map(|a| a.bases)
        .ok_or(ErrorKind::MissingIp { ip: "MMHUB" })
        .at(s)?;
    let (mem, mqd, nbio) = queue_memory(gpu)?;
    let p = gpu.platform;
    let db = crate::rings::doorbell(gpu, index, s)?;
    let mut mes_mapping = None;
    let (mut queue, vmid) = match mapping {
        Mapping::Hws => {
            let queue = SdmaQueue::new(mem, db, version, p.clock(), Pauser(p));
            let (ring, rptr_addr, wptr_addr) = queue.addresses();
            let setup = QueueSetup {
                ring,
                ring_bytes: RING_BYTES,
                rptr_addr,
                wptr_addr,
                doorbell_index: index,
                vmid: 0,
            };
            let uq = gpu
                .queue
                .as_mut()
                .ok_or(ErrorKind::Queue(QueueError::NoScheduler))
                .at(s)?;
            let m = uq
                .mapper_mut()
                .map_sdma(&SdmaResources {
                    mqd,
                    engine: 0,
                    queue: 0,
                    setup,
                    version,
                    process: 0,
                })
                .map_err(ErrorKind::Map)
                .at(s)?;
            mes_mapping = Some(m);
            (queue, None)
        }
        _ => {
            let q = map_v4_4_2_by_registers(gpu, &aids, &bases, root, mem, db, index)?;
            (q, Some(USER_VMID))
        }
    };
    if let Some(presence) = crate::recover::presence(gpu) {
        queue.set_presence(presence);
    }
    let seq = queue.push_fence(BOUND_NS).map_err(sdma_err)?;
    queue.commit();
    queue.wait(seq, BOUND_NS).map_err(sdma_err)?;
    sink.step(
        s,
        format_args!(
            "SDMA queue ready: {} instance 0 (AID 0), {} mapping, ring {:#x} ({} KiB), VMID {}, {}; first fence {} written",
            version.name(),
            mapping.name(),
            queue.addresses().0,
            RING_BYTES >> 10,
            vmid.map_or_else(|| "picked by the HWS".into(), |v| alloc::format!("{v}")),
            barebell::aql::doorbell::Slot::new(index),
            seq
        ),
    );
    Ok(CopyQueue {
        queue,
        bus: gpu.bus.clone(),
        engine,
        nbio,
        hub: FaultHub::Mmhub18(mmhub0),
        mapping,
        mes_mapping,
        version,
        vmid,
        doorbell: index,
    })
}
