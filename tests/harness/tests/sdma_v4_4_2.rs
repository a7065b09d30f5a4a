//! Issue 19 on MI300 (GC 9.4.3): SDMA 4.4.2 user queues mapped directly
//! by registers (tinygrad's way) and by HWS MAP_QUEUES with an SDMA
//! engine (KFD's way), run by the model's SDMA 4.4.2 engines on the
//! bases discovery gives each instance, fetching and copying through the
//! MMHUB 1.8 of the instance's AID.
//!
//! The rig plays the parts of the device not under test: it routes
//! registers to the 16 SDMA instances and the four MMHUBs, routes
//! doorbells as the NBIO would (an SDMA doorbell reaches instance `i`
//! when its index, within its 1024-doorbell process slice and less the
//! 512 mirror, lies in `0x100 + 10 i .. + 10`:
//! `aqua_vanjaram_doorbell_index_init()`), and, for the HWS path, loads
//! what the scheduler mapped into the engine as the firmware would
//! (*model convention*: the VMID's page-table base from MAP_PROCESS into
//! the AID's MMHUB, then the MQD's queue onto the engine).
//!
//! Expected values are written here by hand from `sdma_4_4_2_offset.h`,
//! `vega10_sdma_pkt_open.h`, `kfd_pm4_headers_ai.h`,
//! `kfd_packet_manager_v9.c`, `kfd_device_queue_manager.c`
//! (`allocate_doorbell()`), `aqua_vanjaram.c`, `amdgpu_doorbell.h` and
//! `mmhub_1_8_0_sh_mask.h`, never taken from the code under test.

use barebell::aql::doorbell::Doorbell;
use barebell::bus::{Block, RegisterBus};
use barebell::discovery::{Discovery, hw_id};
use barebell::gfx::hws::packets::{self, Engine, ProcessDesc, QueueDesc, SchedulingResources};
use barebell::gfx::hws::runlist::{self, ProcessQueues, Runlist, RunlistConfig};
use barebell::gfx::hws::{HiqMemory, HiqRing, Hws, HwsError};
use barebell::gmc::hub::v9::{HubV9Config, MMHUB_1_8};
use barebell::gmc::hub::{HubConfig, mmhub_v1_8};
use barebell::gmc::pagetable::{Flags, PteFormat, Table, TableArena};
use barebell::mem::Dev;
use barebell::regs::IpBases;
use barebell::sdma::map_v4_4_2::{self, HwsSdmaQueue, SdmaV442Error};
use barebell::sdma::{SdmaError, SdmaMemory, SdmaMqd};
use barebell_decode::pte_v9::{AccessV9, WalkFaultV9};
use barebell_decode::sdma_mqd_v9::SdmaMqdV9Fault;
use barebell_model::discovery::{self, MI300X, PartDesc};
use barebell_model::dma::Dma;
use barebell_model::hub_v9::{self, HubV9Model, HubV9Refusal};
use barebell_model::hws::{HwsConfig, HwsModel, HwsRefusal, QueueEngine, SdmaEngines};
use barebell_model::sdma::{SdmaHooks, SdmaModel, SdmaPort, SdmaStop, SdmaVmError};
use barebell_model::soc::RefusalLog;
use barebell_model::{SimClock, TickingClock};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// `AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_START` and engine `i`'s first
/// 64-bit doorbell: `0x100 + i * (20 >> 1)` (`sdma_doorbell_range` 20).
const fn sdma_engine_index(i: u32) -> u32 {
    0x100 + i * 10
}
/// Doorbells in the rig's BAR: two KFD process slices of 1024.
const DOORBELLS: usize = 2048;
/// HIQ ring dwords.
const HIQ: usize = 256;
/// Bound on each fence wait (host clock steps of 1 µs).
const BOUND_NS: u64 = 20_000_000;
/// A VA the page tables leave unmapped (PDB2 index 36 is empty).
const UNMAPPED: u64 = 0x1234_5678_9000;
/// KFD's first VMID on GC 9.4.3 (`gmc_v9_0_sw_init()`), the one the HWS
/// model gives the first process.
const FIRST_KFD_VMID: u8 = 3;

const RW: Flags = Flags {
    readable: true,
    writeable: true,
    executable: false,
    system: false,
    snooped: true,
};

/// `n` zeroed bytes, page aligned, leaked.
fn pages(n: usize) -> &'static mut [u8] {
    let layout = std::alloc::Layout::from_size_align(n.next_multiple_of(4096), 4096).unwrap();
    // SAFETY: a non-zero size; leaked, so the slice lives for the process.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout);
        assert!(!p.is_null());
        std::slice::from_raw_parts_mut(p, n)
    }
}

/// What one SDMA instance reaches: the AID's MMHUB for translations, the
/// doorbell BAR, routed as the NBIO would for this instance.
struct Port {
    instance: u32,
    hub: &'static HubV9Model,
    dma: &'static Dma,
    doorbells: &'static [AtomicU64],
}

impl SdmaPort for Port {
    fn translate(
        &self,
        vmid: u8,
        va: u64,
        access: barebell_model::gmc::Access,
    ) -> Result<(u64, u64), SdmaVmError> {
        let a = match access {
            barebell_model::gmc::Access::Write => AccessV9::Write,
            _ => AccessV9::Read,
        };
        let t = self
            .hub
            .translate(self.dma, 0, vmid, va, a)
            .map_err(|refusal| SdmaVmError::RefusedV9 { refusal })?;
        let run = t.page_bytes - (t.pa % t.page_bytes);
        if !self.dma.covers(t.pa, run) {
            return Err(SdmaVmError::Unbacked { pa: t.pa });
        }
        Ok((t.pa, run))
    }
    fn doorbell(&self, dword: u32) -> u64 {
        self.doorbells
            .get(dword as usize / 2)
            .map_or(0, |d| d.load(Ordering::Acquire))
    }
    fn routed(&self, dword: u32) -> bool {
        let index = (dword / 2) % 1024 % 512;
        let first = sdma_engine_index(self.instance);
        dword.is_multiple_of(2) && (first..first + 10).contains(&index)
    }
    fn now_ns(&self) -> u64 {
        0
    }
    fn hdp_flush(&self) -> Option<(u32, u32)> {
        Some(HDP_FLUSH)
    }
}

/// The HDP flush request and done registers (dwords) the rig's port
/// names, as the device's NBIO would (`nbio_v7_9_get_hdp_flush_req_offset()`
/// gives Linux its own; any pair serves the rig).
const HDP_FLUSH: (u32, u32) = (0x1_4106, 0x1_4107);

/// The registers of the 16 SDMA instances and the four MMHUBs.
struct Bus {
    sdma: &'static [SdmaModel],
    owner: std::collections::BTreeMap<usize, usize>,
    hubs: &'static [HubV9Model],
}

impl Bus {
    fn hub_for(&self, at: usize) -> Option<&HubV9Model> {
        let dword = (at / 4) as u32;
        self.hubs.iter().rev().find(|h| h.base <= dword)
    }
}

impl RegisterBus for Bus {
    fn read32(&self, at: usize) -> u32 {
        if let Some(&i) = self.owner.get(&at) {
            return self.sdma[i].read32(at);
        }
        self.hub_for(at).map_or(0, |h| h.read32(at))
    }
    fn write32(&self, at: usize, v: u32) {
        if let Some(&i) = self.owner.get(&at) {
            return self.sdma[i].write32(at, v);
        }
        if let Some(h) = self.hub_for(at) {
            h.write32(at, v);
        }
    }
}

type HwsClient = Hws<'static, TickingClock, Box<dyn FnMut()>, HIQ>;

struct Rig {
    bus: &'static Bus,
    sdma_bases: Vec<IpBases>,
    mmhub_bases: Vec<IpBases>,
    doorbells: &'static [AtomicU64],
    root: u64,
    hws_model: &'static HwsModel,
    hws: HwsClient,
    clock: &'static TickingClock,
    /// Source and destination buffers (mapped VA = host address).
    src: &'static mut [u8],
    dst: &'static mut [u8],
    ib: &'static mut [u32],
    mqd: &'static SdmaMqd,
    mem: &'static SdmaMemory,
    /// A second ring memory, for a second queue at once.
    mem2: &'static SdmaMemory,
}

/// Discovery of `part` as the runtime parses it: each SDMA instance's
/// bases and each AID's MMHUB bases.
fn bases(part: &PartDesc) -> (Vec<IpBases>, Vec<IpBases>) {
    let blob = discovery::build(part).0;
    let d = Discovery::parse(&blob).unwrap();
    let t = d.topology();
    let sdma = (0..32u8)
        .filter(|i| t.sdma_mask >> i & 1 != 0)
        .map(|i| d.ip(hw_id::SDMA0, i).unwrap().bases)
        .collect();
    // Every AID's MMHUB the table lists (a harvested part may leave an
    // AID out of `aid_mask` while the rig still routes its registers).
    let mmhub = (0..4u8)
        .map(|a| d.ip(hw_id::MMHUB, a).unwrap().bases)
        .collect();
    (sdma, mmhub)
}

/// Every SDMA 4.4.2 instance and AID MMHUB of the part, on one bus.
fn sdma_bus(sdma_bases: &[IpBases], mmhub_bases: &[IpBases]) -> &'static Bus {
    let clock = SimClock::new();
    let log = Arc::new(RefusalLog::new());
    let sdma: &'static [SdmaModel] = Box::leak(
        sdma_bases
            .iter()
            .map(|b| {
                SdmaModel::new_v4_4_2(
                    &clock,
                    b,
                    SdmaHooks {
                        code_loaded: Box::new(|| true),
                    },
                    log.clone(),
                )
                .unwrap()
            })
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let hubs: &'static [HubV9Model] = Box::leak(
        mmhub_bases
            .iter()
            .map(|b| HubV9Model::new(hub_v9::MMHUB_1_8, b.0[0]))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let mut owner = std::collections::BTreeMap::new();
    for (i, s) in sdma.iter().enumerate() {
        for o in s.offsets() {
            assert!(owner.insert(o, i).is_none(), "instances overlap at {o:#x}");
        }
    }
    Box::leak(Box::new(Bus { sdma, owner, hubs }))
}

/// The HWS model on the HIQ `hiq` (doorbell `hiq_doorbell`) over
/// `engines` SDMA instances, and its client, which runs the model in
/// its pauses.
fn hws_on(
    hiq: &'static HiqMemory<HIQ>,
    hiq_doorbell: &'static AtomicU64,
    engines: u8,
    dma: &'static Dma,
) -> (&'static HwsModel, HwsClient) {
    // The HWS model on a HIQ, and its client.
    let hws_model: &'static HwsModel = Box::leak(Box::new(HwsModel::new(HwsConfig {
        ring: hiq.ring_address(),
        ring_dwords: HIQ as u64,
        doorbell: hiq_doorbell as *const AtomicU64 as u64,
        map_process_dwords: 21,
    })));
    hws_model.set_sdma(SdmaEngines::aqua_vanjaram(engines));
    // SAFETY: the slot is leaked, 8-aligned, read by the model atomically.
    let hiq_db = unsafe {
        Doorbell::from_ptr(NonNull::new(hiq_doorbell as *const AtomicU64 as *mut u64).unwrap())
    }
    .unwrap();
    let pause: Box<dyn FnMut()> = Box::new(move || {
        hws_model.service(dma);
    });
    let mut hws = Hws::new(
        HiqRing {
            // SAFETY: `hiq` is leaked and mapped at its host address.
            memory: unsafe { Dev::assume(hiq) },
            doorbell: hiq_db,
        },
        TickingClock::new(1_000),
        pause,
    )
    .unwrap();
    hws.timeout_ns = 2_000_000;
    (hws_model, hws)
}

fn rig(part: &PartDesc, buffer_bytes: usize) -> Rig {
    let (sdma_bases, mmhub_bases) = bases(part);
    let bus = sdma_bus(&sdma_bases, &mmhub_bases);
    let (sdma, hubs) = (bus.sdma, bus.hubs);

    // Memory: page tables, the SDMA ring memory, MQD, buffers, doorbells,
    // HIQ and IB, all reachable by the model at their host addresses.
    let tables: &'static mut [Table] = Box::leak(vec![Table::EMPTY; 64].into_boxed_slice());
    let tables_at = tables.as_ptr() as u64;
    let src = pages(buffer_bytes);
    let dst = pages(buffer_bytes);
    let doorbells: &'static [AtomicU64] = Box::leak(
        (0..DOORBELLS)
            .map(|_| AtomicU64::new(0))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let hiq: &'static HiqMemory<HIQ> = Box::leak(Box::new(HiqMemory::new()));
    let hiq_doorbell: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
    let ib: &'static mut [u32] = Box::leak(vec![0u32; 1024].into_boxed_slice());
    let mqd: &'static SdmaMqd = Box::leak(Box::new(SdmaMqd::new()));
    let mem: &'static SdmaMemory = Box::leak(Box::new(SdmaMemory::new()));
    let mem_at = mem as *const SdmaMemory as u64;
    let mem2: &'static SdmaMemory = Box::leak(Box::new(SdmaMemory::new()));
    let mem_bytes = (std::mem::size_of::<SdmaMemory>() as u64).next_multiple_of(4096);
    let mut dma = Dma::default();
    // SAFETY: every range is leaked, so it outlives the model; the host
    // and the model meet through atomics or the doorbell/fence protocol.
    unsafe {
        dma.map(tables_at, 64 * 4096);
        dma.map(src.as_ptr() as u64, src.len() as u64);
        dma.map(dst.as_ptr() as u64, dst.len() as u64);
        dma.map(
            hiq.ring_address(),
            std::mem::size_of::<HiqMemory<HIQ>>() as u64,
        );
        dma.map(hiq_doorbell as *const AtomicU64 as u64, 8);
        dma.map(ib.as_ptr() as u64, 4096);
        dma.map(mqd as *const SdmaMqd as u64, 4096);
        dma.map(mem_at, mem_bytes);
        dma.map(mem2 as *const SdmaMemory as u64, mem_bytes);
    }
    let root = {
        let mut a = TableArena::new(tables, tables_at, PteFormat::Gfx9TranslateFurther);
        for b in [&*src, &*dst] {
            let at = b.as_ptr() as u64;
            a.map(at, at, (b.len() as u64).next_multiple_of(4096), RW, false)
                .unwrap();
        }
        for m in [mem_at, mem2 as *const SdmaMemory as u64] {
            a.map(m, m, mem_bytes, RW, false).unwrap();
        }
        a.root()
    };
    // MMHUB 1.8 on every AID as mmhub_v1_8_gart_enable() leaves it; VMID
    // 0's context is the GART's, here the user tables (tinygrad runs its
    // SDMA queue in VMID 0).
    let aids: Vec<Block<'_, Bus>> = mmhub_bases.iter().map(|b| Block::new(bus, *b)).collect();
    mmhub_v1_8::gart_enable(
        &aids,
        &HubV9Config::new(HubConfig {
            pt_base: root,
            start: 0,
            end: (1 << 48) - 1,
            fb_start: 0x80_0000_0000,
            fb_end: 0x80_0000_0000 + (192 << 30) - 1,
            agp_start: 0xFFFF_FFFF_FFFF,
            agp_end: 0,
            default_page: 0x1000,
            dummy_page: 0x2000,
        }),
    )
    .unwrap();
    let dma: &'static Dma = Box::leak(Box::new(dma));
    for (i, s) in sdma.iter().enumerate() {
        s.set_port(Arc::new(Port {
            instance: i as u32,
            // `adev->sdma.num_inst_per_aid = 4`: instance i is on AID i / 4.
            hub: &hubs[i / 4],
            dma,
            doorbells,
        }));
    }

    let (hws_model, hws) = hws_on(hiq, hiq_doorbell, sdma.len() as u8, dma);
    let clock: &'static TickingClock = Box::leak(Box::new(TickingClock::new(1_000)));
    Rig {
        bus,
        sdma_bases,
        mmhub_bases,
        doorbells,
        root,
        hws_model,
        hws,
        clock,
        src,
        dst,
        ib,
        mqd,
        mem,
        mem2,
    }
}

impl Rig {
    /// The ring memory, mapped in the tables at VA = host address (one
    /// queue a rig; mapping it again zeroes its pointers).
    fn ring_memory(&self) -> &'static SdmaMemory {
        self.mem
    }

    fn doorbell(&self, dword: u32) -> Doorbell {
        let slot = &self.doorbells[dword as usize / 2];
        // SAFETY: a leaked, 8-aligned slot the model reads atomically.
        unsafe { Doorbell::from_ptr(NonNull::new(slot as *const AtomicU64 as *mut u64).unwrap()) }
            .unwrap()
    }

    /// The pause that runs the device while the host waits.
    fn pause(&self) -> impl FnMut() + use<> {
        let sdma = self.bus.sdma;
        move || {
            for s in sdma {
                s.service();
            }
        }
    }

    fn resources(&mut self) {
        let vmids = runlist::compute_vmid_bitmap(runlist::FIRST_KFD_VMID_GC_9_4_3);
        let mask = runlist::queue_mask(4, 8, 1);
        self.hws
            .set_resources(&SchedulingResources::kfd(vmids, mask))
            .unwrap();
    }

    /// What the firmware does with an SDMA queue the scheduler mapped
    /// (*model convention*): the process's page-table base into VMID
    /// `vmid`'s context of the engine's AID's MMHUB, then the MQD's queue
    /// onto the engine.
    fn start_hws_sdma(&self) {
        for q in self.hws_model.sdma_queues() {
            let vmid = q.vmid.unwrap();
            let p = self
                .hws_model
                .processes()
                .into_iter()
                .find(|p| p.pasid == q.pasid)
                .unwrap();
            let aid = usize::from(q.engine) / 4;
            let b = Block::new(self.bus, self.mmhub_bases[aid]);
            let d = MMHUB_1_8.ctx_addr_distance();
            let lo = b
                .offset_nth(MMHUB_1_8.ctx0_base_lo, u32::from(vmid), d)
                .unwrap();
            let hi = b
                .offset_nth(MMHUB_1_8.ctx0_base_hi, u32::from(vmid), d)
                .unwrap();
            self.bus.write32(lo, p.page_table_base as u32);
            self.bus.write32(hi, (p.page_table_base >> 32) as u32);
            self.bus.sdma[usize::from(q.engine)]
                .map_scheduled(q.engine_queue().unwrap())
                .unwrap();
        }
    }
}

fn fill(b: &mut [u8], seed: u8) {
    for (i, x) in b.iter_mut().enumerate() {
        *x = (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8;
    }
}

/// Copies `bytes` from `src + so` to `dst + do_` and checks every byte of
/// the destination region and a 64-byte guard after it.
fn copy_and_check(
    rig: &mut Rig,
    queue: &mut barebell::sdma::SdmaQueue<'static, TickingClock, impl FnMut()>,
    engine: usize,
    so: usize,
    do_: usize,
    bytes: usize,
    packets: u32,
) {
    fill(rig.src, bytes as u8);
    rig.dst.fill(0xEE);
    let src = rig.src.as_ptr() as u64 + so as u64;
    let dst = rig.dst.as_ptr() as u64 + do_ as u64;
    let before = rig.bus.sdma[engine].stats();
    let n = map_v4_4_2::copy(
        queue,
        src,
        dst,
        bytes as u64,
        BOUND_NS,
        rig.bus,
        &rig.mmhub_bases[engine / 4],
    )
    .unwrap();
    assert_eq!(n, packets);
    assert!(
        rig.dst[do_..do_ + bytes] == rig.src[so..so + bytes],
        "{bytes} bytes differ"
    );
    assert!(rig.dst[..do_].iter().all(|b| *b == 0xEE));
    assert!(
        rig.dst[do_ + bytes..do_ + bytes + 64]
            .iter()
            .all(|b| *b == 0xEE)
    );
    let after = rig.bus.sdma[engine].stats();
    assert_eq!(after.copied_bytes - before.copied_bytes, bytes as u64);
    // COPY_LINEARs + one FENCE.
    assert_eq!(after.packets - before.packets, u64::from(packets) + 1);
}

/// 4 MiB per COPY_LINEAR: COUNT is bits 21:0 of byte count − 1
/// (`vega10_sdma_pkt_open.h`), so 2 × 4 MiB + 5 bytes need three.
const SEVERAL: usize = 2 * (4 << 20) + 5;

#[test]
fn direct_queue_on_sdma_instance_5_copies_byte_exact() {
    let mut rig = rig(&MI300X, SEVERAL + 8192);
    assert_eq!(rig.sdma_bases.len(), 16, "MI300X: 4 SDMA per AID, 4 AIDs");
    let engine = 5u8;
    // amdgpu's ring doorbell on instance 5: sdma_engine[5] = 0x100 + 50.
    let index = sdma_engine_index(5);
    assert_eq!(index, 0x132);
    let mem = rig.ring_memory();
    let pause = rig.pause();
    let mut q = map_v4_4_2::map_direct(
        rig.bus,
        &rig.sdma_bases,
        engine,
        // SAFETY: leaked and mapped in the tables at its host address.
        unsafe { Dev::assume(mem) },
        rig.doorbell(index * 2),
        index,
        0,
        rig.clock,
        pause,
    )
    .unwrap();
    let s = &rig.bus.sdma[5];
    assert!(s.running());
    let got = s.queue().unwrap();
    // RB_SIZE 14 (64 KiB = 2^14 dwords), VMID 0, doorbell dword 0x264.
    assert_eq!(got.bytes, 64 << 10);
    assert_eq!((got.vmid, got.doorbell), (0, Some(0x264)));
    assert_eq!(got.ring, mem.ring.as_ptr() as u64);
    // The other instances were not touched.
    assert!(
        rig.bus
            .sdma
            .iter()
            .enumerate()
            .all(|(i, s)| i == 5 || s.queue().is_none())
    );
    copy_and_check(&mut rig, &mut q, 5, 0, 0, 1, 1);
    copy_and_check(&mut rig, &mut q, 5, 1, 3, 4096 + 3, 1);
    copy_and_check(&mut rig, &mut q, 5, 0, 4096, SEVERAL, 3);
    // The read pointer is written back in bytes.
    assert_eq!(q.rptr(), q.wptr());
}

/// Engine 0's queue loaded by registers as `sdma_v4_4_2_gfx_resume()`
/// does (`map_v4_4_2::map_direct`), on amdgpu's doorbell for it: the
/// queue, its ring memory, and the doorbell's 64-bit index.
fn engine0(
    rig: &Rig,
) -> (
    barebell::sdma::SdmaQueue<'static, TickingClock, impl FnMut() + use<>>,
    &'static SdmaMemory,
    u32,
) {
    let index = sdma_engine_index(0);
    let mem = rig.ring_memory();
    let q = map_v4_4_2::map_direct(
        rig.bus,
        &rig.sdma_bases,
        0,
        // SAFETY: leaked and mapped in the tables at its host address.
        unsafe { Dev::assume(mem) },
        rig.doorbell(index * 2),
        index,
        0,
        rig.clock,
        rig.pause(),
    )
    .unwrap();
    (q, mem, index)
}

/// Linux's own packets on a directly loaded queue:
/// `sdma_v4_4_2_ring_test_ring()` (WRITE_LINEAR of one dword, COUNT 0),
/// then `sdma_v4_4_2_ring_test_ib()` as `amdgpu_ib_schedule()` emits it:
/// the HDP flush POLL_REGMEM of `sdma_v4_4_2_ring_emit_hdp_flush()`
/// (`hdp_flush` 1, DONE then REQ as byte offsets), NOPs to the 8-dword
/// boundary and INDIRECT (`sdma_v4_4_2_ring_emit_ib()`), FENCE and TRAP
/// (`sdma_v4_4_2_ring_emit_fence()`). The IB holds WRITE_LINEAR and three
/// NOPs (`ib.length_dw = 8`). Before: the engine refused header 0x2 (the
/// WRITE_LINEAR was not decoded) and amdgpu's "ring sdma0.0 test
/// failed".
#[test]
fn linux_ring_and_ib_tests_run_on_a_direct_queue() {
    let rig = rig(&MI300X, 8192);
    let (q, mem, index) = engine0(&rig);
    let mut wptr = (q.wptr() / 4) as usize;
    let dst = rig.dst.as_ptr() as u64;
    let ib_at = rig.src.as_ptr() as u64;
    let lo = |a: u64| a as u32;
    let hi = |a: u64| (a >> 32) as u32;
    let push = |wptr: &mut usize, dwords: &[u32]| {
        for d in dwords {
            mem.ring[*wptr % mem.ring.len()].store(*d, Ordering::Release);
            *wptr += 1;
        }
        rig.doorbells[index as usize].store(*wptr as u64 * 4, Ordering::Release);
        rig.bus.sdma[0].service();
    };
    // The ring test: one dword, 0xDEADBEEF, at dst.
    push(&mut wptr, &[0x2, lo(dst), hi(dst), 0, 0xDEAD_BEEF]);
    assert_eq!(&rig.dst[..4], &0xDEAD_BEEFu32.to_le_bytes());
    // The IB: WRITE_LINEAR of 0xCAFEF00D at dst + 8, three NOPs.
    let ib = [0x2, lo(dst + 8), hi(dst + 8), 0, 0xCAFE_F00D, 0, 0, 0];
    for (i, d) in ib.iter().enumerate() {
        // SAFETY: `src` is a leaked, page-aligned buffer of 8 KiB.
        unsafe { (ib_at as *mut u32).add(i).write_volatile(*d) };
    }
    let (req, done) = HDP_FLUSH;
    let poll_hdp = 8 | 1 << 26 | 3 << 28;
    let mut frame = vec![poll_hdp, done << 2, req << 2, 1, 1, 0xfff << 16 | 10];
    // NOPs so the INDIRECT ends on an 8-dword boundary.
    while !(wptr + frame.len() + 6).is_multiple_of(8) {
        frame.push(0);
    }
    frame.extend([4, lo(ib_at), hi(ib_at), 8, 0, 0]);
    frame.extend([5, lo(dst + 16), hi(dst + 16), 7, 6, 0]);
    push(&mut wptr, &frame);
    assert_eq!(&rig.dst[8..12], &0xCAFE_F00Du32.to_le_bytes());
    assert_eq!(&rig.dst[16..20], &7u32.to_le_bytes());
    let s = &rig.bus.sdma[0];
    assert_eq!(s.stopped(), None);
    assert_eq!(s.pointers().0, wptr as u64 * 4);
    assert!(s.troubles().is_empty(), "{:?}", s.troubles());
}

/// The TLB flush Linux puts on an SDMA ring before a job in another VMID
/// (`amdgpu_gmc_emit_flush_gpu_tlb()` → `sdma_v4_4_2_ring_emit_wreg()`:
/// SRBM_WRITE with `BYTE_EN(0xf)`; `sdma_v4_4_2_ring_emit_reg_wait()`:
/// POLL_REGMEM on a register, its byte offset in dword 1): the store
/// reaches the device's register bus, and the engine waits until the
/// device reads the acknowledge register with the bit set. Before: the
/// engine refused header 0xf000000e.
#[test]
fn an_srbm_write_and_a_register_poll_go_through_the_device() {
    let rig = rig(&MI300X, 8192);
    let (q, mem, index) = engine0(&rig);
    let at = (q.wptr() / 4) as usize;
    let (req, ack) = (0x1abd4u32, 0x1abe6u32);
    let packets = [
        14 | 0xf << 28,
        req,
        0x00f8_0008,
        8 | 3 << 28,
        ack << 2,
        0,
        1 << 3,
        1 << 3,
        0xfff << 16 | 10,
    ];
    for (i, d) in packets.iter().enumerate() {
        mem.ring[at + i].store(*d, Ordering::Release);
    }
    rig.doorbells[index as usize].store((at + packets.len()) as u64 * 4, Ordering::Release);
    let s = &rig.bus.sdma[0];
    s.service();
    assert_eq!(s.take_register_stores(), vec![(req * 4, 0x00f8_0008)]);
    assert_eq!(s.register_waits(), vec![ack * 4]);
    s.register_values(&[(ack * 4, 0)]);
    s.service();
    assert_eq!(s.register_waits(), vec![ack * 4], "bit 3 not set yet");
    s.register_values(&[(ack * 4, 1 << 3)]);
    s.service();
    assert_eq!(s.register_waits(), Vec::<u32>::new());
    assert_eq!(s.pointers().0, (at + packets.len()) as u64 * 4);
    assert_eq!(s.stopped(), None);
}

/// COND_EXE as `amdgpu_ib_schedule()` opens a frame with it
/// (`init_cond_exec`: the address of `ring->cond_exe_gpu_addr`, reference
/// 1, then the dwords it covers): the covered WRITE_LINEAR runs when the
/// dword reads 1 and is skipped when it reads 0.
#[test]
fn cond_exe_runs_or_skips_what_it_covers() {
    let rig = rig(&MI300X, 8192);
    let (q, mem, index) = engine0(&rig);
    let mut wptr = (q.wptr() / 4) as usize;
    let dst = rig.dst.as_ptr() as u64;
    let cond = dst + 256;
    let (lo, hi) = (|a: u64| a as u32, |a: u64| (a >> 32) as u32);
    for (flag, value, at) in [(1u32, 0x1111u32, 0u64), (0, 0x2222, 4)] {
        rig.dst[256..260].copy_from_slice(&flag.to_le_bytes());
        let frame = [
            9,
            lo(cond),
            hi(cond),
            1,
            5,
            0x2,
            lo(dst + at),
            hi(dst + at),
            0,
            value,
        ];
        for d in frame {
            mem.ring[wptr % mem.ring.len()].store(d, Ordering::Release);
            wptr += 1;
        }
        rig.doorbells[index as usize].store(wptr as u64 * 4, Ordering::Release);
        rig.bus.sdma[0].service();
    }
    assert_eq!(&rig.dst[0..4], &0x1111u32.to_le_bytes(), "run on 1");
    assert_eq!(&rig.dst[4..8], &[0; 4], "skipped on 0");
    let s = &rig.bus.sdma[0];
    assert_eq!(s.pointers().0, wptr as u64 * 4);
    assert_eq!(s.stopped(), None);
}

/// PTEPDE GEN as `sdma_v4_4_2_vm_set_pte_pde()` emits it for a page-table
/// update: entry `i` is `(value + i * incr) | flags`, what the CPU backend
/// (`amdgpu_vm_cpu_update()`) writes for the same range.
#[test]
fn ptepde_gen_writes_the_entries_the_cpu_backend_would() {
    let rig = rig(&MI300X, 8192);
    let (q, mem, index) = engine0(&rig);
    let at = (q.wptr() / 4) as usize;
    let pe = rig.dst.as_ptr() as u64 + 64;
    let (flags, value, incr) = (0x71u64, 0x80_0000_0000u64, 0x1000u32);
    let packet = [
        12,
        pe as u32,
        (pe >> 32) as u32,
        flags as u32,
        0,
        value as u32,
        (value >> 32) as u32,
        incr,
        0,
        3 - 1,
    ];
    for (i, d) in packet.iter().enumerate() {
        mem.ring[at + i].store(*d, Ordering::Release);
    }
    rig.doorbells[index as usize].store((at + packet.len()) as u64 * 4, Ordering::Release);
    rig.bus.sdma[0].service();
    assert_eq!(
        rig.bus.sdma[0].stopped(),
        None,
        "{:?}",
        rig.bus.sdma[0].troubles()
    );
    for i in 0..3usize {
        let got = u64::from_le_bytes(rig.dst[64 + 8 * i..72 + 8 * i].try_into().unwrap());
        assert_eq!(got, (value + 0x1000 * i as u64) | flags, "entry {i}");
    }
    assert_eq!(&rig.dst[88..96], &[0; 8], "three entries only");
    assert_eq!(rig.bus.sdma[0].stopped(), None);
}

/// An HDP flush POLL_REGMEM (`hdp_flush` set) naming registers other than
/// the NBIO's flush pair stops the queue, named: the model never passes a
/// flush it does not model.
#[test]
fn a_register_poll_other_than_the_hdp_flush_is_refused() {
    let rig = rig(&MI300X, 8192);
    let (q, mem, index) = engine0(&rig);
    let at = (q.wptr() / 4) as usize;
    let (req, done) = HDP_FLUSH;
    // The pair swapped: poll REQ, write DONE.
    let poll = [8 | 1 << 26 | 3 << 28, req << 2, done << 2, 1, 1, 10];
    for (i, d) in poll.iter().enumerate() {
        mem.ring[at + i].store(*d, Ordering::Release);
    }
    rig.doorbells[index as usize].store((at + poll.len()) as u64 * 4, Ordering::Release);
    rig.bus.sdma[0].service();
    assert!(matches!(
        rig.bus.sdma[0].stopped(),
        Some(SdmaStop::Refused { why, .. }) if why.contains("HDP flush")
    ));
}

#[test]
fn direct_copy_into_an_unmapped_range_returns_the_latched_mmhub_fault() {
    let rig = rig(&MI300X, 8192);
    let mem = rig.ring_memory();
    let index = sdma_engine_index(0);
    let mut q = map_v4_4_2::map_direct(
        rig.bus,
        &rig.sdma_bases,
        0,
        // SAFETY: leaked and mapped in the tables at its host address.
        unsafe { Dev::assume(mem) },
        rig.doorbell(index * 2),
        index,
        0,
        rig.clock,
        rig.pause(),
    )
    .unwrap();
    let e = map_v4_4_2::copy(
        &mut q,
        rig.src.as_ptr() as u64,
        UNMAPPED + 0x10,
        100,
        BOUND_NS,
        rig.bus,
        &rig.mmhub_bases[0],
    )
    .unwrap_err();
    let SdmaV442Error::Fault { fault, error } = e else {
        panic!("expected the latched fault, got {e}");
    };
    assert!(matches!(
        error,
        SdmaError::Timeout {
            seq: 1,
            fence: 0,
            ..
        }
    ));
    // VM_L2_PROTECTION_FAULT_STATUS (mmhub_1_8_0_sh_mask.h): RW bit 18 for
    // the write, VMID 0 at 23:20; the model's code for an empty entry is
    // MAPPING_ERROR (bit 8). The page address from ADDR_HI4:LO32 << 12.
    assert_eq!(fault.hub, "MMHUB 1.8");
    assert_eq!(fault.addr, UNMAPPED);
    assert_eq!(
        (fault.vmid, fault.write, fault.mapping_error),
        (0, true, true)
    );
    assert_eq!(fault.status, 0x100 | 1 << 18);
    // The engine stopped on the write of its COPY_LINEAR.
    match rig.bus.sdma[0].stopped() {
        Some(SdmaStop::Vm {
            va, write, error, ..
        }) => {
            assert_eq!((va, write), (UNMAPPED + 0x10, true));
            assert_eq!(
                error,
                SdmaVmError::RefusedV9 {
                    refusal: HubV9Refusal::Fault(WalkFaultV9::Invalid { level: 0 })
                }
            );
        }
        other => panic!("engine did not stop on the fault: {other:?}"),
    }
    assert!(e.to_string().contains("MMHUB 1.8 protection fault"));
}

/// An HWS-mapped queue on engine `engine` queue `queue`: resources, the v9
/// MQD, the runlist, then the firmware's part.
fn hws_queue(
    rig: &mut Rig,
    engine: u8,
    queue: u32,
    config: RunlistConfig,
) -> Result<barebell::sdma::SdmaQueue<'static, TickingClock, impl FnMut() + 'static>, SdmaV442Error>
{
    rig.resources();
    let d = runlist::SdmaDoorbells::gc_9_4_3(16);
    let dword = d.queue_index(engine, queue).unwrap() * 2;
    let mem = rig.ring_memory();
    let ib_address = rig.ib.as_ptr() as u64;
    let pause = rig.pause();
    let db = rig.doorbell(dword);
    let (q, _) = map_v4_4_2::map_hws(
        &rig.sdma_bases,
        &mut rig.hws,
        HwsSdmaQueue {
            process: ProcessDesc::new(0x8001, rig.root | 1),
            engine,
            queue,
            // SAFETY: leaked and mapped in the model's memory.
            mqd: unsafe { Dev::assume(rig.mqd) },
            doorbell_dword: dword,
            ib: &mut *rig.ib,
            ib_address,
            config,
        },
        // SAFETY: leaked and mapped in the tables at its host address.
        unsafe { Dev::assume(mem) },
        db,
        rig.clock,
        pause,
    )?;
    rig.start_hws_sdma();
    Ok(q)
}

#[test]
fn hws_mapped_queue_on_sdma_engine_1_copies_byte_exact() {
    let mut rig = rig(&MI300X, SEVERAL + 8192);
    let cfg = RunlistConfig::gc_9_4_3(0, 1).with_sdma_engines(16);
    // Engine 1 queue 3: 0x10A aligned up to 0x10C (the Debian 6.12
    // source's allocate_doorbell(); upstream has no alignment), odd queue
    // + 512, + 3 / 2: index 0x30D, dword 0x61A.
    let mut q = hws_queue(&mut rig, 1, 3, cfg).unwrap();
    let mapped = rig.hws_model.sdma_queues();
    assert_eq!(mapped.len(), 1);
    let m = mapped[0];
    assert_eq!((m.engine, m.queue, m.doorbell_offset), (1, 3, 0x61A));
    assert_eq!(m.vmid, Some(FIRST_KFD_VMID));
    assert_eq!(rig.hws_model.queues()[0].engine, QueueEngine::Sdma(1));
    // The MQD as update_mqd_sdma() (v9) fills it, decoded by the model:
    // RB_SIZE 14, VMID 0 (the HWS supplies it), write-back timer 6.
    assert_eq!(m.mqd.ring_bytes, 64 << 10);
    assert_eq!((m.mqd.vmid, m.mqd.rptr_writeback_timer), (0, 6));
    assert_eq!((m.mqd.engine, m.mqd.queue, m.mqd.dummy_reg), (1, 3, 0xf));
    let on = rig.bus.sdma[1].queue().unwrap();
    assert_eq!((on.vmid, on.doorbell), (3, Some(0x61A)));
    copy_and_check(&mut rig, &mut q, 1, 0, 0, 1, 1);
    copy_and_check(&mut rig, &mut q, 1, 1, 3, 4096 + 3, 1);
    copy_and_check(&mut rig, &mut q, 1, 0, 4096, SEVERAL, 3);
}

#[test]
fn hws_mapped_copy_into_an_unmapped_range_returns_the_fault_in_the_kfd_vmid() {
    let mut rig = rig(&MI300X, 8192);
    let cfg = RunlistConfig::gc_9_4_3(0, 1).with_sdma_engines(16);
    let mut q = hws_queue(&mut rig, 6, 0, cfg).unwrap();
    let e = map_v4_4_2::copy(
        &mut q,
        rig.src.as_ptr() as u64,
        UNMAPPED,
        4096 + 3,
        BOUND_NS,
        rig.bus,
        // Engine 6 is on AID 1.
        &rig.mmhub_bases[1],
    )
    .unwrap_err();
    let SdmaV442Error::Fault { fault, .. } = e else {
        panic!("expected the latched fault, got {e}");
    };
    // VMID 3 (the first KFD VMID) at bits 23:20, RW, MAPPING_ERROR.
    assert_eq!(fault.status, 0x100 | 1 << 18 | 3 << 20);
    assert_eq!((fault.addr, fault.vmid), (UNMAPPED, 3));
    // AID 0's MMHUB latched nothing.
    assert!(!rig.bus.hubs[0].fault_latched());
}

#[test]
fn runtime_refuses_sdma_queues_kfd_would_not_build() {
    let mut rig = rig(&MI300X, 4096);
    // Engines the part does not have: none configured, then 13 of 16.
    let e = hws_queue(&mut rig, 0, 0, RunlistConfig::gc_9_4_3(0, 1)).unwrap_err();
    assert_eq!(
        e,
        SdmaV442Error::Hws(HwsError::SdmaEngine {
            pasid: 0x8001,
            engine: 0,
            engines: 0
        })
    );
    let cfg = RunlistConfig::gc_9_4_3(0, 1).with_sdma_engines(13);
    let e = hws_queue(&mut rig, 13, 0, cfg).unwrap_err();
    assert!(matches!(
        e,
        SdmaV442Error::Hws(HwsError::SdmaEngine {
            engine: 13,
            engines: 13,
            ..
        })
    ));
    assert!(e.to_string().contains("SDMA engine 13 does not exist"));
    // An engine beyond discovery's instances, mapped directly.
    let mem = rig.ring_memory();
    let e = map_v4_4_2::map_direct(
        rig.bus,
        &rig.sdma_bases,
        16,
        // SAFETY: leaked and mapped.
        unsafe { Dev::assume(mem) },
        rig.doorbell(0),
        0,
        0,
        rig.clock,
        rig.pause(),
    )
    .err()
    .unwrap();
    assert_eq!(
        e,
        SdmaV442Error::Engine {
            engine: 16,
            engines: 16
        }
    );
    // Nothing reached the scheduler.
    assert!(rig.hws_model.runlist().is_none());
}

/// Sends a hand-assembled runlist (MAP_PROCESS + one MAP_QUEUES) past the
/// runtime's checks, so the model's own refusal shows.
fn raw_runlist(rig: &mut Rig, q: QueueDesc) -> Result<(), HwsError> {
    rig.resources();
    let mut n = packets::map_process(
        packets::MapProcessForm::Aldebaran,
        &ProcessDesc::new(0x8002, rig.root | 1),
        1,
        &mut rig.ib[..21],
    )
    .unwrap();
    let mq = packets::map_queues(&q, false, false);
    rig.ib[n..n + 7].copy_from_slice(&mq);
    n += 7;
    rig.hws.run_list(&Runlist {
        ib_address: rig.ib.as_ptr() as u64,
        ib_dwords: n as u32,
        process_cnt: 1,
        over_subscribed: false,
        processes: 1,
        queues: 1,
    })
}

fn sdma_desc(rig: &Rig, id: u8, doorbell: u32) -> QueueDesc {
    QueueDesc {
        engine: Engine::Sdma { id },
        ..QueueDesc::compute(
            doorbell,
            rig.mqd as *const SdmaMqd as u64,
            rig.ib.as_ptr() as u64 + 4000,
        )
    }
}

/// A valid v9 SDMA MQD for `engine`/`queue` on doorbell `dword`, as
/// `update_mqd_sdma()` writes it (RB_SIZE 10: 4 KiB).
fn write_mqd(rig: &Rig, engine: u32, queue: u32, dword: u32) {
    let mut m = [0u32; 128];
    m[0] = 10 << 1 | 1 << 12 | 6 << 16;
    m[1] = 0x100;
    m[9] = 0x2000;
    m[22] = dword << 2;
    m[27] = 0xf;
    m[126] = engine;
    m[127] = queue;
    rig.mqd.write(&m);
}

#[test]
fn model_refuses_an_sdma_engine_the_part_does_not_have() {
    // MI300X with SDMA 13..15 harvested: 13 instances.
    let part = PartDesc {
        harvested: &[
            (discovery::SDMA0_HWID, 13),
            (discovery::SDMA0_HWID, 14),
            (discovery::SDMA0_HWID, 15),
        ],
        ..MI300X
    };
    let mut rig = rig(&part, 4096);
    assert_eq!(rig.sdma_bases.len(), 13);
    // Engine 13: extended_engine_sel 2 (sdma8_to_15), engine_sel 5; its
    // doorbell 0x184 (0x182 aligned to 4) * 2.
    write_mqd(&rig, 13, 0, 0x308);
    let q = sdma_desc(&rig, 13, 0x308);
    let e = raw_runlist(&mut rig, q).unwrap_err();
    assert!(
        matches!(
            e,
            HwsError::FenceTimeout {
                packet: "RUN_LIST",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        rig.hws_model.refusal(),
        Some(HwsRefusal::SdmaEngineOutOfRange {
            doorbell_offset: 0x308,
            engine: 13,
            engines: 13
        })
    );
}

#[test]
fn model_refuses_an_mqd_that_is_not_a_v9_sdma_mqd() {
    let mut rig = rig(&MI300X, 4096);
    // The MQD page left zero: RB_SIZE 0, a ring under 256 bytes.
    let q = sdma_desc(&rig, 0, 0x200);
    let e = raw_runlist(&mut rig, q).unwrap_err();
    assert!(matches!(e, HwsError::FenceTimeout { .. }), "{e}");
    let r = rig.hws_model.refusal().unwrap();
    assert_eq!(
        r,
        HwsRefusal::SdmaMqd {
            doorbell_offset: 0x200,
            address: rig.mqd as *const SdmaMqd as u64,
            fault: SdmaMqdV9Fault::RingSize { field: 0 }
        }
    );
    assert!(r.to_string().contains("not a v9 SDMA MQD"));
}

#[test]
fn model_refuses_a_doorbell_outside_the_engines_range() {
    let mut rig = rig(&MI300X, 4096);
    // Engine 2's doorbells are 0x114..0x11E (and +512); 0x11E is engine
    // 3's first, dword 0x23C.
    write_mqd(&rig, 2, 0, 0x23C);
    let q = sdma_desc(&rig, 2, 0x23C);
    let e = raw_runlist(&mut rig, q).unwrap_err();
    assert!(matches!(e, HwsError::FenceTimeout { .. }), "{e}");
    assert_eq!(
        rig.hws_model.refusal(),
        Some(HwsRefusal::SdmaDoorbellOutOfRange {
            doorbell_offset: 0x23C,
            engine: 2,
            first: 0x114,
            end: 0x11E
        })
    );
    // The runtime's builder refuses the same queue before sending.
    let cfg = RunlistConfig::gc_9_4_3(0, 1).with_sdma_engines(16);
    let procs = [ProcessQueues {
        process: ProcessDesc::new(9, rig.root | 1),
        queues: &[sdma_desc(&rig, 2, 0x23C)],
    }];
    assert_eq!(
        runlist::build(&cfg, &procs, &mut [0u32; 64], 0x1000),
        Err(HwsError::SdmaDoorbellOutOfRange {
            pasid: 9,
            engine: 2,
            doorbell_offset: 0x23C
        })
    );
}

#[test]
fn model_refuses_an_mqd_for_another_engine() {
    let mut rig = rig(&MI300X, 4096);
    // A valid MQD of engine 1 named by a MAP_QUEUES for engine 0.
    write_mqd(&rig, 1, 0, 0x200);
    let q = sdma_desc(&rig, 0, 0x200);
    let e = raw_runlist(&mut rig, q).unwrap_err();
    assert!(matches!(e, HwsError::FenceTimeout { .. }), "{e}");
    assert!(matches!(
        rig.hws_model.refusal(),
        Some(HwsRefusal::BadQueue {
            doorbell_offset: 0x200,
            ..
        })
    ));
}

#[test]
fn constant_fill_and_two_instances_at_once() {
    let rig = rig(&MI300X, 3 * 4096);
    // Instance 0 (AID 0) and instance 12 (AID 3), both by registers, each
    // on the bases discovery gives it: doorbells 0x100 and 0x100 + 120 =
    // 0x178 (dwords 0x200 and 0x2F0).
    let (i0, i12) = (sdma_engine_index(0), sdma_engine_index(12));
    assert_eq!((i0 * 2, i12 * 2), (0x200, 0x2F0));
    let mut q0 = map_v4_4_2::map_direct(
        rig.bus,
        &rig.sdma_bases,
        0,
        // SAFETY: leaked and mapped in the tables at its host address.
        unsafe { Dev::assume(rig.mem) },
        rig.doorbell(i0 * 2),
        i0,
        0,
        rig.clock,
        rig.pause(),
    )
    .unwrap();
    let mut q12 = map_v4_4_2::map_direct(
        rig.bus,
        &rig.sdma_bases,
        12,
        // SAFETY: leaked and mapped in the tables at its host address.
        unsafe { Dev::assume(rig.mem2) },
        rig.doorbell(i12 * 2),
        i12,
        0,
        rig.clock,
        rig.pause(),
    )
    .unwrap();
    assert_eq!(rig.bus.sdma[12].queue().unwrap().doorbell, Some(0x2F0));
    // CONSTANT_FILL of 8 KiB + 4 with 0xDEADBEEF on instance 0 (bytes EF
    // BE AD DE repeated, little-endian), a copy of 4 KiB on instance 12,
    // both published before either is waited for.
    rig.dst.fill(0);
    fill(rig.src, 7);
    let dst = rig.dst.as_ptr() as u64;
    assert_eq!(
        q0.push_fill(dst + 4, 0xDEAD_BEEF, 8192 + 4, BOUND_NS)
            .unwrap(),
        1
    );
    let s0 = q0.push_fence(BOUND_NS).unwrap();
    assert_eq!(
        q12.push_copy(rig.src.as_ptr() as u64, dst + 8200, 4000, BOUND_NS)
            .unwrap(),
        1
    );
    let s12 = q12.push_fence(BOUND_NS).unwrap();
    q0.commit();
    q12.commit();
    map_v4_4_2::wait(&mut q0, s0, BOUND_NS, rig.bus, &rig.mmhub_bases[0]).unwrap();
    map_v4_4_2::wait(&mut q12, s12, BOUND_NS, rig.bus, &rig.mmhub_bases[3]).unwrap();
    assert!(rig.dst[..4].iter().all(|b| *b == 0));
    for (i, b) in rig.dst[4..4 + 8196].iter().enumerate() {
        assert_eq!(*b, [0xEF, 0xBE, 0xAD, 0xDE][i % 4], "byte {i}");
    }
    assert!(rig.dst[8200..8200 + 4000] == rig.src[..4000]);
    assert!(rig.dst[8200 + 4000..].iter().all(|b| *b == 0));
    let (a, b) = (rig.bus.sdma[0].stats(), rig.bus.sdma[12].stats());
    assert_eq!((a.filled_bytes, a.copied_bytes, a.fences), (8196, 0, 1));
    assert_eq!((b.filled_bytes, b.copied_bytes, b.fences), (0, 4000, 1));
    // Each FENCE wrote its queue's sequence number.
    assert_eq!((q0.fence(), q12.fence()), (s0, s12));
}
