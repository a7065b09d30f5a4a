//! GC 9.4.3 compute after the RLC/MEC start: the runtime's KIQ per XCC
//! and the user queue's three mappings (direct, kiq, hws), driven against
//! the model's CP block (`barebell_model::mec_v9_4_3`) beside its RLC/MEC
//! start block, on 4 and 8 XCCs.
//!
//! Rig conventions (not hardware facts): the GC segment bases are model
//! values (no public MI300 discovery table); memory is one leaked arena
//! the device reaches at device address = host address, and the
//! translation is the model's `IdentityTranslate` (no GFXHUB: the rig
//! stands in for page tables that map VA = host address, the runtime's
//! `Dev` contract); the pause services the model and moves the model's
//! clock by 1 ms (so a 2.1 s bound is 2100 turns).
//!
//! Expected values are written by hand from the sources cited at each.

use barebell::aql::doorbell::DoorbellAperture;
use barebell::bus::{Block, RegisterBus};
use barebell::gfx::error::KiqTimeout;
use barebell::gfx::hws::{HwsError, runlist};
use barebell::gfx::mqd_v9::MQD_BYTES;
use barebell::mem::DeviceArena;
use barebell::regs::IpBases;
use barebell_bringup::Mapping;
use barebell_bringup::gfx::gfx_v9_4_3::xcc::{self as v9, XccError, XccKiq, XccQueue};
use barebell_decode::mqd_v9::MqdV9Fault;
use barebell_firmware_if::pm4::{self, QueueEngine};
use barebell_model::clock::HostClock;
use barebell_model::cp::CpModel;
use barebell_model::dma::Dma;
use barebell_model::mec_v9_4_3::{IdentityTranslate, MecV943, MecV943Refusal, Source};
use barebell_model::psp::LoadedFirmware;
use barebell_model::psp::iface::fw as mfw;
use barebell_model::rlc_mec_v9_4_3::{MecRefusal, RlcMecV943};
use barebell_model::{Seed, SimClock};
use std::collections::{BTreeMap, BTreeSet};
use std::ptr::NonNull;
use std::sync::Arc;

/// Model values: XCC `i`'s GC segment 0 at 0x10_0000 + i * 0x1_0000,
/// segment 1 (RLC) 0x2000 above (as tests/harness/tests/psp13.rs).
fn xcc_bases(n: usize) -> Vec<[u32; 8]> {
    (0..n as u32)
        .map(|i| {
            let b = 0x10_0000 + i * 0x1_0000;
            [b, b + 0x2000, 0, 0, 0, 0, 0, 0]
        })
        .collect()
}

/// `regCP_MEC_CNTL` (`gc_9_4_3_offset.h`, segment 0).
const CP_MEC_CNTL: u32 = 0x008d;
const ARENA_BYTES: usize = 4 << 20;

/// BAR5 for the rig: the CP block's offsets to it, the rest to the
/// RLC/MEC start block (the device's routing by register offset).
struct Bar5 {
    rlc: Arc<RlcMecV943>,
    mec: Arc<MecV943>,
    owned: BTreeSet<usize>,
    /// `CP_MEC_CNTL` byte offsets whose writes keep these bits set: a
    /// driver whose MEC release leaves an ME halted.
    stuck: BTreeMap<usize, u32>,
}

impl RegisterBus for Bar5 {
    fn read32(&self, o: usize) -> u32 {
        if self.owned.contains(&o) {
            self.mec.read32(o)
        } else {
            self.rlc.read32(o)
        }
    }
    fn write32(&self, o: usize, v: u32) {
        if self.owned.contains(&o) {
            self.mec.write32(o, v)
        } else {
            self.rlc
                .write32(o, v | self.stuck.get(&o).copied().unwrap_or(0))
        }
    }
}

type Kiqs = Vec<XccKiq<'static, &'static HostClock, PauseFn>>;

#[derive(Clone, Copy)]
struct PauseFn(&'static MecV943, &'static SimClock);

impl barebell::time::Pause for PauseFn {
    fn pause(&mut self) {
        self.0.service();
        self.1.advance(1_000_000);
    }
}

struct Rig {
    n: usize,
    mec: &'static MecV943,
    bus: &'static Bar5,
    bases: Vec<IpBases>,
    host: &'static HostClock,
    pause: PauseFn,
    area: DeviceArena<'static>,
    /// The user queue's part (its ring, pointers, EOP, signal).
    uarea: DeviceArena<'static>,
    doorbells: DoorbellAperture,
}

impl Rig {
    fn blocks(&self) -> Vec<Block<'static, Bar5>> {
        self.bases
            .iter()
            .map(|b| Block::new(self.bus, *b))
            .collect()
    }

    fn kiqs(&mut self, mask: u64) -> Result<Kiqs, XccError> {
        let blocks = self.blocks();
        v9::kiqs_up(
            v9::GC_9_4_3,
            &blocks,
            &mut self.area,
            &self.doorbells,
            self.host,
            self.pause,
            mask,
            None,
        )
    }

    fn queue(&mut self) -> XccQueue<'static, &'static HostClock, PauseFn> {
        v9::place_queue(
            v9::GC_9_4_3,
            &mut self.area,
            &mut self.uarea,
            &self.doorbells,
            self.n,
        )
        .unwrap()
    }

    /// Services the model up to `turns` times or until the signal is 0.
    fn run(&self, q: &XccQueue<'static, &'static HostClock, PauseFn>, turns: usize) {
        let mut p = self.pause;
        for _ in 0..turns {
            if q.signal.value() == 0 {
                break;
            }
            barebell::time::Pause::pause(&mut p);
        }
    }
}

/// `n` XCCs whose MECs run, except those in `halted`, which stay halted
/// whatever the driver writes (`CP_MEC_CNTL` at its reset value).
fn rig(n: usize, halted: &[usize]) -> Rig {
    let stuck: Vec<(usize, u32)> = halted.iter().map(|x| (*x, 0x5000_0000)).collect();
    rig_stuck(n, &stuck)
}

/// `n` XCCs whose MECs run, except that XCC `x`'s `CP_MEC_CNTL` keeps the
/// bits `stuck` gives it, from the start and through every write.
fn rig_stuck(n: usize, stuck: &[(usize, u32)]) -> Rig {
    let clock: &'static SimClock = Box::leak(Box::new(SimClock::new()));
    let host: &'static HostClock = Box::leak(Box::new(clock.host_view(100)));
    let loaded = Arc::new(LoadedFirmware::autoloaded(
        clock,
        [mfw::RLC_G, mfw::CP_MEC, mfw::CP_MEC_ME1],
    ));
    let raw = xcc_bases(n);
    let rlc = Arc::new(RlcMecV943::new(clock, raw.clone(), loaded));
    // gfx_v9_4_3_xcc_cp_compute_enable(true): CP_MEC_CNTL = 0, but for
    // the stuck bits.
    let stuck: BTreeMap<usize, u32> = stuck
        .iter()
        .filter_map(|(x, bits)| Some(((raw.get(*x)?[0] + CP_MEC_CNTL) as usize * 4, *bits)))
        .collect();
    for b in &raw {
        let at = (b[0] + CP_MEC_CNTL) as usize * 4;
        rlc.write32(at, stuck.get(&at).copied().unwrap_or(0));
    }
    let arena: &'static mut [u64] = Box::leak(vec![0u64; ARENA_BYTES / 8].into_boxed_slice());
    let base = arena.as_mut_ptr() as u64;
    let mut dma = Dma::default();
    let mut cp = CpModel::new(Seed(7));
    // SAFETY: the arena is leaked (lives for the test process); device
    // and host touch it per the queue protocols (atomics, fences).
    unsafe {
        dma.map(base, ARENA_BYTES as u64);
        cp.dma_mut().map(base, ARENA_BYTES as u64);
    }
    let mec = Arc::new(MecV943::new(
        clock,
        raw.clone(),
        rlc.clone(),
        cp,
        dma,
        Arc::new(IdentityTranslate),
    ));
    let owned = mec.offsets().into_iter().collect();
    let bus: &'static Bar5 = Box::leak(Box::new(Bar5 {
        rlc,
        mec: mec.clone(),
        owned,
        stuck,
    }));
    let mec: &'static Arc<MecV943> = Box::leak(Box::new(mec));
    let mec: &'static MecV943 = mec;
    let (page, len) = mec.doorbell_page();
    // SAFETY: the page is boxed inside the leaked block; 8-byte slots.
    let doorbells = unsafe { DoorbellAperture::new(NonNull::new(page as *mut u8).unwrap(), len) };
    // SAFETY: the leaked arena, reached at device address = host address
    // by the model's DMA windows and identity translation.
    let area = unsafe { DeviceArena::new(NonNull::new(base as *mut u8).unwrap(), ARENA_BYTES / 2) };
    // SAFETY: the arena's second half, as above; the first half is `area`.
    let uarea = unsafe {
        DeviceArena::new(
            NonNull::new((base as *mut u8).add(ARENA_BYTES / 2)).unwrap(),
            ARENA_BYTES / 2,
        )
    };
    // gfx_v9_4_3_xcc_constants_init() and init_compute_vmid() on every
    // XCC, as the rlc step runs them: the compute VMIDs' apertures.
    for (x, b) in raw.iter().enumerate() {
        let gc = Block::new(bus, IpBases::new(b));
        barebell::gfx::init_v9_4_3::constants(&gc, x, 3).unwrap();
    }
    Rig {
        n,
        mec,
        bus,
        bases: raw.iter().map(|b| IpBases::new(b)).collect(),
        host,
        pause: PauseFn(mec, clock),
        area,
        uarea,
        doorbells,
    }
}

/// `queue_mask` for the user slot: MEC 1 (index 0) pipe 1 queue 0 is
/// bit 0 * 32 + 1 * 8 + 0 = 8 (`amdgpu_queue_mask_bit_to_set_resource_bit()`).
const USER_MASK: u64 = 1 << 8;
/// The user slot as the HQD registers name it: ME 1, pipe 1, queue 0.
const USER_HQD: (u32, u32, u32) = (1, 1, 0);
/// The KIQ slot `amdgpu_gfx_kiq_acquire()` picks: ME 2 pipe 1 queue 0.
const KIQ_HQD: (u32, u32, u32) = (2, 1, 0);
/// KFD's page-directory base as `amdgpu_gmc_pd_addr()` gives it: a page
/// address | AMDGPU_PTE_VALID (ignored by the identity translation).
const PD: u64 = 0x0000_0080_0010_0000 | 1;

fn up_and_run(n: usize, mapping: Mapping) {
    let mut r = rig(n, &[]);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    for x in 0..n {
        assert!(r.mec.kiq_running(x), "XCC {x} KIQ");
        assert!(r.mec.hqd_active(x, KIQ_HQD), "XCC {x} KIQ HQD");
    }
    let mut q = r.queue();
    let blocks = r.blocks();
    let (source, slot) = match mapping {
        Mapping::Direct => {
            v9::map_direct(&mut q, &blocks, 3).unwrap();
            (Source::Direct, USER_HQD)
        }
        Mapping::Kiq => {
            v9::map_kiq(&mut q, &mut kiqs, 3).unwrap();
            (Source::Kiq, USER_HQD)
        }
        Mapping::Mes => unreachable!("GC 9.4.3 has no MES; the cases below never ask for it"),
        Mapping::Hws => {
            // KFD's HWS queue mask: all 32 MEC 1 slots but amdgpu's bit 0.
            let mask = runlist::queue_mask(4, 8, 1);
            assert_eq!(mask, 0xFFFF_FFFE);
            let (host, pause) = (r.host, r.pause);
            v9::map_hws(
                &mut q,
                &mut kiqs,
                &mut r.area,
                &r.doorbells,
                host,
                pause,
                mask,
                PD,
                None,
            )
            .unwrap();
            let hws = r.mec.hws().expect("the HIQ was mapped");
            // The first KFD VMID on GC 9.4.3 is 3 (gmc_v9_0_sw_init()).
            assert_eq!(hws.mec_queues().len(), 1);
            assert_eq!(hws.mec_queues()[0].vmid, 3);
            assert_eq!(hws.mec_queues()[0].doorbell_offset, 0x20);
            // The HIQ: KFD_CIK_HIQ_PIPE 4 = ME 2 pipe 0, queue 0, on every
            // XCC (hiq_load_mqd_kiq_v9_4_3()).
            for x in 0..n {
                assert!(r.mec.hqd_active(x, (2, 0, 0)), "XCC {x} HIQ");
            }
            (Source::Hws, barebell_model::mec_v9_4_3::HWS_SLOT)
        }
    };
    assert_eq!(r.mec.refusals(), vec![]);
    let queues = r.mec.queues();
    assert_eq!(queues.len(), 1);
    let qv = &queues[0];
    assert_eq!(qv.source, source);
    // USERQUEUE_START (0x10) as a dword offset.
    assert_eq!(qv.doorbell_dword, 0x20);
    assert!(qv.cp.is_some(), "the queue reached the CP");
    let layout = q.layout.unwrap();
    for x in 0..n {
        assert!(r.mec.hqd_active(x, slot), "XCC {x} holds the queue");
        // init_mqd_v9_4_3(): XCC x's MQD at x * sizeof(struct v9_mqd).
        let m = qv.members.iter().find(|m| m.0 == x).unwrap();
        assert_eq!(m.2, layout.address + (x * 2048) as u64);
    }
    assert_eq!(MQD_BYTES, 2048);
    // A barrier and a doorbell store; the signal goes 1 -> 0 once.
    let p = q.barrier().unwrap();
    let id = q.queue.submit(&p, r.host, 1_000_000_000).unwrap();
    assert_eq!(id, 0);
    r.run(&q, 200);
    assert_eq!(q.signal.value(), 0);
    for _ in 0..20 {
        barebell::time::Pause::pause(&mut r.pause);
    }
    assert_eq!(q.signal.value(), 0, "completed exactly once");
    assert_eq!(q.queue.read_index(), 1);
    // The CP ran the queue as one queue over every XCC.
    assert_eq!(r.mec.cp().shader.xccs, n as u32);
    // Teardown.
    q.unmap(&blocks, &mut kiqs, &r.host).unwrap();
    for x in 0..n {
        assert!(!r.mec.hqd_active(x, slot), "XCC {x} dequeued");
    }
    assert!(r.mec.queues()[0].cp.is_none(), "off the CP");
    if mapping == Mapping::Hws {
        // The HIQ (ME 2 pipe 0 queue 0 on XCC 0) went with it.
        assert!(!r.mec.hqd_active(0, (2, 0, 0)));
        assert!(r.mec.hws().is_none());
    }
    v9::kiqs_down(&blocks, kiqs, &r.host).unwrap();
    for x in 0..n {
        assert!(!r.mec.kiq_running(x), "XCC {x} KIQ down");
        assert!(!r.mec.hqd_active(x, KIQ_HQD));
    }
    assert_eq!(r.mec.refusals(), vec![]);
}

#[test]
fn direct_on_4_xccs() {
    up_and_run(4, Mapping::Direct);
}
#[test]
fn direct_on_8_xccs() {
    up_and_run(8, Mapping::Direct);
}
#[test]
fn kiq_on_4_xccs() {
    up_and_run(4, Mapping::Kiq);
}
#[test]
fn kiq_on_8_xccs() {
    up_and_run(8, Mapping::Kiq);
}
#[test]
fn hws_on_4_xccs() {
    up_and_run(4, Mapping::Hws);
}
#[test]
fn hws_on_8_xccs() {
    up_and_run(8, Mapping::Hws);
}

/// `gfx_v9_4_3_xcc_kiq_init_register()` on XCC 1 of 4: the MEC doorbell
/// range `((0 + 1 * 0x20) * 2) << 2` = 0x100 to `((0x1F + 0x20) * 2) << 2`
/// = 0x1F8, the KIQ doorbell dword `(0 + 1 * 0x20) << 1` = 0x40.
#[test]
fn kiq_registers_follow_linux() {
    let mut r = rig(4, &[]);
    let _kiqs = r.kiqs(USER_MASK).unwrap();
    let b = r.blocks();
    use barebell::regs::gc_9_4_3 as g;
    assert_eq!(b[1].read(g::CP_MEC_DOORBELL_RANGE_LOWER).unwrap(), 0x100);
    assert_eq!(b[1].read(g::CP_MEC_DOORBELL_RANGE_UPPER).unwrap(), 0x1F8);
    // RLC_CP_SCHEDULERS.scheduler0 = 2 << 5 | 1 << 3 | 0, | 0x80.
    assert_eq!(b[1].read(g::RLC_CP_SCHEDULERS).unwrap() & 0xFF, 0xC8);
    // CP_PQ_STATUS.DOORBELL_ENABLE (bit 1).
    assert_eq!(b[1].read(g::CP_PQ_STATUS).unwrap() & 2, 2);
    b[1].write(g::GRBM_GFX_CNTL, 2 << 2 | 1).unwrap();
    let dbc = b[1].read(g::CP_HQD_PQ_DOORBELL_CONTROL).unwrap();
    assert_eq!((dbc >> 2) & 0x3FF_FFFF, 0x40);
    assert_eq!(dbc >> 30 & 1, 1, "DOORBELL_EN");
    // gfx_v9_4_3_xcc_mqd_init() read-modify-writes PQ_CONTROL and
    // EOP_CONTROL: the other fields keep their reset values
    // (gc_9_0_default.h; the model's convention for GC 9.4.3).
    let reset = |name: &str| {
        barebell_tests::linux_define("include/asic_reg/gc/gc_9_0_default.h", name) as u32
    };
    // PQ_CONTROL: QUEUE_SIZE (bits 0-5) = log2(256 dwords) - 1 = 7,
    // PRIV_STATE (30) and KMD_QUEUE (31) set, RPTR_BLOCK_SIZE (bits 8-13)
    // 0 (Linux's REG_SET_FIELD of an already-shifted value masks it away).
    let pq = b[1].read(g::CP_HQD_PQ_CONTROL).unwrap();
    let pq_reset = reset("mmCP_HQD_PQ_CONTROL_DEFAULT");
    assert_eq!(pq, pq_reset & !0x3F3F | 7 | 1 << 30 | 1 << 31);
    // EOP_CONTROL: EOP_SIZE (bits 0-5) = order_base_2(GFX9_MEC_HPD_SIZE
    // / 4) - 1 = order_base_2(4096 / 4) - 1 = 9.
    let eop = b[1].read(g::CP_HQD_EOP_CONTROL).unwrap();
    assert_eq!(eop, reset("mmCP_HQD_EOP_CONTROL_DEFAULT") & !0x3F | 9);
    b[1].write(g::GRBM_GFX_CNTL, 0).unwrap();
}

/// ME 2 halted while ME 1 runs (`CP_MEC_CNTL` = `MEC_ME2_HALT` alone,
/// `gc_9_4_3_sh_mask.h`): the KIQ lives on ME 2 pipe 1, so it never
/// runs and its SET_RESOURCES fence never comes. Before the model checked
/// every ME, only ME 1's halt bit and pipe 0's reset counted, and a
/// bring-up that left ME 2 halted passed.
#[test]
fn a_halted_me_2_runs_no_kiq_while_me_1_runs() {
    let mut r = rig_stuck(1, &[(0, 0x1000_0000)]);
    match r.kiqs(USER_MASK) {
        Err(XccError::KiqPacket {
            xcc: 0,
            error:
                KiqTimeout {
                    packet: "SET_RESOURCES",
                    ..
                },
        }) => {}
        other => panic!("a KIQ answered on a halted ME 2: {other:?}"),
    }
    // Loaded while halted (as Linux loads it), never running.
    assert!(r.mec.hqd_active(0, KIQ_HQD));
    assert!(!r.mec.kiq_running(0));
    assert_eq!(r.mec.refusals(), vec![]);
}

/// The KIQ loaded the way barebell did before: into an MEC already
/// released, then SET_RESOURCES. `gfx_v9_4_3_xcc_cp_resume()` loads it
/// with the MEC halted and releases the MEC after; the model refuses the
/// other order (its convention: the firmware takes its KIQ when it leaves
/// halt), so the KIQ never runs.
#[test]
fn a_kiq_loaded_into_a_running_mec_is_refused() {
    use barebell::gfx::kiq::KiqMemory;
    use barebell::gfx::mqd::{EopBuffer, MqdPage};
    use barebell::gfx::queue_v9::{KiqV9Parts, kiq_doorbell_index, kiq_resume};
    let mut r = rig(1, &[]);
    let blocks = r.blocks();
    let parts = KiqV9Parts {
        ring: r.area.put(KiqMemory::<{ v9::KIQ_RING }>::new()).unwrap(),
        mqd: r.area.put(MqdPage::new()).unwrap(),
        eop: r.area.put(EopBuffer::new()).unwrap(),
        doorbell_index: kiq_doorbell_index(0),
        mec_range: barebell::gfx::mqd_v9::linux_mec_range(0),
    };
    kiq_resume(blocks[0], &r.host, 0, &parts).unwrap();
    assert_eq!(
        r.mec.refusals(),
        vec![MecV943Refusal::KiqWhileRunning {
            xcc: 0,
            slot: KIQ_HQD
        }]
    );
    assert!(!r.mec.kiq_running(0));
    // The order Linux uses (halt, load, release) brings it up.
    assert!(r.kiqs(USER_MASK).is_ok());
    assert!(r.mec.kiq_running(0));
}

/// The MEC of XCC 2 stays halted (`CP_MEC_CNTL` at its reset value
/// 0x50000000): its KIQ never runs, so its SET_RESOURCES fence never
/// comes (a typed timeout naming XCC 2), and a direct queue over all four
/// XCCs is refused there and runs nothing.
#[test]
fn a_halted_mec_runs_nothing() {
    let mut r = rig(4, &[2]);
    match r.kiqs(USER_MASK) {
        Err(XccError::KiqPacket {
            xcc: 2,
            error:
                KiqTimeout {
                    packet: "SET_RESOURCES",
                    ..
                },
        }) => {}
        other => panic!("{other:?} {:?}", r.mec.refusals()),
    }
    // The KIQ was loaded on XCC 2 with its MEC halted, as Linux loads it,
    // but never runs ...
    assert!(r.mec.hqd_active(2, KIQ_HQD));
    assert!(!r.mec.kiq_running(2));
    assert_eq!(r.mec.refusals(), vec![]);
    let mut q = r.queue();
    let blocks = r.blocks();
    v9::map_direct(&mut q, &blocks, 3).unwrap();
    // ... and the user queue's ME 1 pipe 1 is halted there too.
    let halted_user = MecV943Refusal::Mec(MecRefusal::Halted {
        xcc: 2,
        me: 1,
        pipe: 1,
        cp_mec_cntl: 0x5000_0000,
    });
    assert_eq!(r.mec.refusals(), vec![halted_user]);
    assert!(!r.mec.hqd_active(2, USER_HQD));
    assert!(r.mec.queues().iter().all(|q| q.cp.is_none()));
    let p = q.barrier().unwrap();
    q.queue.submit(&p, r.host, 1_000_000_000).unwrap();
    r.run(&q, 100);
    assert_eq!(q.signal.value(), 1, "nothing ran");
    assert_eq!(q.queue.read_index(), 0);
}

/// XCC 1's MQD names another ring than XCC 0's: `init_mqd_v9_4_3()`
/// copies one ring into every XCC's MQD, so the model refuses the queue
/// when its last XCC is mapped; the KIQ halts on that MAP_QUEUES and the
/// caller gets the KIQ's typed timeout.
#[test]
fn mqds_disagreeing_across_xccs_are_refused() {
    let mut r = rig(4, &[]);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    let mut q = r.queue();
    let layout = q.build(3).unwrap();
    // cp_hqd_pq_base_lo is v9_mqd dword 136 (v9_structs.h).
    let at = layout.address + 2048 + 136 * 4;
    // SAFETY: inside the leaked arena's MQD pages, not mapped yet.
    unsafe {
        let p = at as *mut u32;
        p.write_volatile(p.read_volatile() + 0x10);
    }
    match v9::map_kiq_built(&mut q, &mut kiqs, 3, layout) {
        Err(XccError::KiqPacket {
            xcc: 3,
            error:
                KiqTimeout {
                    packet: "MAP_QUEUES",
                    ..
                },
        }) => {}
        other => panic!("{other:?} {:?}", r.mec.refusals()),
    }
    assert_eq!(
        r.mec.refusals(),
        vec![MecV943Refusal::Mqd {
            xcc: 1,
            fault: MqdV9Fault::Diverges {
                xcc: 1,
                what: "ring"
            }
        }]
    );
    assert!(!r.mec.kiq_running(3));
    assert!(r.mec.queues().iter().all(|q| q.cp.is_none()));
}

/// KIQ MAP_QUEUES with doorbell dword 0x200 (byte 0x800), outside XCC
/// 0's MEC doorbell range 0..=0xF8 (USERQUEUE_END 0x1F times 2, shifted
/// left by 2), naming an MQD built for another doorbell. The range is no
/// longer a refusal: KFD's HIQ and queues ring doorbells past the kernel's
/// range (`kfd_doorbell_init()`; the Linux peer's HIQ is dword 0xc00), and
/// the range only decides what wakes a power-gated GC (gfx_v9_0's
/// `gfx_v9_0_kiq_init_register()`). The model refused the packet for the
/// range before; now it refuses it for the mismatch with its MQD.
#[test]
fn kiq_map_queues_is_not_refused_for_the_doorbell_range() {
    let mut r = rig(4, &[]);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    let mut q = r.queue();
    let layout = q.build(3).unwrap();
    let p = pm4::map_queues(
        QueueEngine::Compute,
        1,
        0,
        0x200,
        layout.address,
        q.memory.write_index_address(),
    );
    let e = kiqs[0].kiq.submit("MAP_QUEUES", &p).unwrap_err();
    assert_eq!(e.packet, "MAP_QUEUES");
    assert_eq!(
        r.mec.refusals(),
        vec![MecV943Refusal::KiqPacket {
            xcc: 0,
            opcode: 0xA2,
            what: "the MQD names another doorbell than the packet",
        }]
    );
}

/// A page holding a wave32 kernel descriptor at 0 and `s_endpgm` at 256
/// (LLVM 19 `AMDHSAKernelDescriptor.h`: kernel_code_entry_byte_offset at
/// 16, compute_pgm_rsrc1 at 48 with both FLOAT_DENORM_MODE fields 3,
/// kernel_code_properties at 56, ENABLE_WAVEFRONT_SIZE32 bit 10).
#[repr(C, align(4096))]
struct KernelPage([u8; 4096]);

/// One dispatch on the direct-mapped queue over 8 XCCs: 512 work-items
/// in workgroups of 32 are 16 workgroups; `init_mqd_v9_4_3()` sets
/// `compute_tg_chunk_size` 1, so the XCCs take them one at a time in
/// turn, 2 each; the signal (1) is decremented once for the packet.
/// The split does not depend on the ISA: the CP model's default gfx1100
/// target runs the one `s_endpgm` (bytes 00 00 b0 bf), as in
/// tests/harness/tests/dispatch.rs.
#[test]
fn one_dispatch_is_split_over_eight_xccs_and_signals_once() {
    use barebell::aql::packet::Dispatch;
    let mut r = rig(8, &[]);
    let _kiqs = r.kiqs(USER_MASK).unwrap();
    let mut page = KernelPage([0; 4096]);
    page.0[16..24].copy_from_slice(&256i64.to_le_bytes());
    page.0[48..52].copy_from_slice(&(0xf_u32 << 16).to_le_bytes());
    page.0[56..58].copy_from_slice(&(1u16 << 10).to_le_bytes());
    page.0[256..260].copy_from_slice(&[0x00, 0x00, 0xb0, 0xbf]);
    let kd = r.area.put(page).unwrap().address();
    let mut q = r.queue();
    let blocks = r.blocks();
    v9::map_direct(&mut q, &blocks, 3).unwrap();
    let p = Dispatch::linear(512, 32, kd, 0)
        .signal(q.signal.handle())
        .packet()
        .unwrap();
    q.queue.submit(&p, r.host, 1_000_000_000).unwrap();
    r.run(&q, 500);
    assert_eq!(r.mec.cp().errors(), []);
    assert_eq!(q.signal.value(), 0);
    let cp = r.mec.cp();
    assert_eq!(cp.shader.dispatches, 1);
    assert_eq!(cp.shader.last.workgroups, 16);
    assert_eq!(cp.shader.xcc_workgroups, [2; 8]);
}

/// A MEC halted after its queue ran (`CP_MEC_CNTL` back to its reset
/// value 0x50000000, `MEC_ME1_HALT | MEC_ME2_HALT`) stays halted: the
/// queue spanning its XCC leaves the CP and a second barrier is never
/// consumed.
#[test]
fn a_mec_halted_later_stops_the_queue() {
    let mut r = rig(4, &[]);
    let _kiqs = r.kiqs(USER_MASK).unwrap();
    let mut q = r.queue();
    let blocks = r.blocks();
    v9::map_direct(&mut q, &blocks, 3).unwrap();
    let p = q.barrier().unwrap();
    q.queue.submit(&p, r.host, 1_000_000_000).unwrap();
    r.run(&q, 200);
    assert_eq!(q.signal.value(), 0);
    let b1 = xcc_bases(4)[1][0];
    r.bus.write32((b1 + CP_MEC_CNTL) as usize * 4, 0x5000_0000);
    q.signal.reset(1);
    q.queue.submit(&p, r.host, 1_000_000_000).unwrap();
    r.run(&q, 100);
    assert_eq!(q.signal.value(), 1, "nothing ran after the halt");
    assert_eq!(q.queue.read_index(), 1);
    assert_eq!(
        r.mec.refusals(),
        vec![MecV943Refusal::Mec(MecRefusal::Halted {
            xcc: 1,
            me: 1,
            pipe: 0,
            cp_mec_cntl: 0x5000_0000
        })]
    );
    assert!(r.mec.queues()[0].cp.is_none());
}

/// Unmapped (`destroy_mqd_v9_4_3()`) and mapped again, the queue runs
/// its next packet: the new mapping starts from the queue's read index
/// (1), so only the new doorbell store announces work.
#[test]
fn a_direct_queue_mapped_again_runs_again() {
    let mut r = rig(4, &[]);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    let mut q = r.queue();
    let blocks = r.blocks();
    let p = q.barrier().unwrap();
    for round in 0..2u64 {
        v9::map_direct(&mut q, &blocks, 3).unwrap();
        q.signal.reset(1);
        assert_eq!(q.queue.submit(&p, r.host, 1_000_000_000).unwrap(), round);
        r.run(&q, 200);
        assert_eq!(q.signal.value(), 0, "round {round}");
        q.unmap(&blocks, &mut kiqs, &r.host).unwrap();
    }
    assert_eq!(r.mec.refusals(), vec![]);
    assert_eq!(r.mec.queues().len(), 2);
}

/// A direct queue in a VMID whose SH_MEM still holds its reset value 0:
/// `gfx_v9_4_3_xcc_init_compute_vmid()` never ran for it, so its LDS and
/// scratch apertures would sit at flat address 0. The model refuses the
/// queue once its last XCC is loaded, naming the XCC and VMID.
#[test]
fn a_queue_in_a_vmid_without_apertures_is_refused() {
    let mut r = rig(2, &[]);
    // The KIQs set each XCC's MEC doorbell range, as in `up_and_run`.
    let _kiqs = r.kiqs(USER_MASK).unwrap();
    // VMID 2 is below the KFD VMIDs (3..15): constants_init() gave it
    // SH_MEM_BASES 0x20001000 but only the compute VMIDs 64-bit mode;
    // clear it on XCC 1 to the reset value.
    let gc1 = r.blocks()[1];
    gc1.write(barebell::regs::gc_9_4_3::GRBM_GFX_CNTL, 2 << 4)
        .unwrap();
    gc1.write(barebell::regs::gc_9_4_3::SH_MEM_CONFIG, 0)
        .unwrap();
    gc1.write(barebell::regs::gc_9_4_3::SH_MEM_BASES, 0)
        .unwrap();
    gc1.write(barebell::regs::gc_9_4_3::GRBM_GFX_CNTL, 0)
        .unwrap();
    let mut q = r.queue();
    let blocks = r.blocks();
    v9::map_direct(&mut q, &blocks, 2).unwrap();
    assert_eq!(
        r.mec.refusals(),
        vec![MecV943Refusal::AperturesUnset {
            xcc: 1,
            vmid: 2,
            config: 0,
            bases: 0
        }]
    );
    assert!(r.mec.queues().iter().all(|q| q.cp.is_none()));
}

/// UNMAP_QUEUES on a hung queue, by action: PREEMPT_QUEUES drains, and a
/// hung queue's waves never drain, so the preemption never completes
/// and the KIQ halts on it (a typed timeout naming the packet); the
/// RESET_QUEUES `gfx_v9_4_3_kiq_unmap_queues()` sends kills the waves
/// and takes the queue down at once.
#[test]
fn unmap_of_a_hung_queue_resets_but_never_preempts() {
    let mut r = rig(2, &[]);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    let mut q = r.queue();
    v9::map_kiq(&mut q, &mut kiqs, 3).unwrap();
    assert!(r.mec.queues()[0].cp.is_some());
    assert!(r.mec.hang_doorbell(0x20));
    let unmap = |action| pm4::unmap_queues(action, false, 0x20, (0, 0));
    let preempt = kiqs[0]
        .kiq
        .submit("UNMAP_QUEUES", &unmap(pm4::unmap_action::PREEMPT_QUEUES));
    assert!(
        matches!(
            preempt,
            Err(KiqTimeout {
                packet: "UNMAP_QUEUES",
                ..
            })
        ),
        "{preempt:?}"
    );
    assert!(r.mec.hqd_active(0, USER_HQD), "a hung queue was preempted");
    kiqs[1]
        .kiq
        .submit("UNMAP_QUEUES", &unmap(pm4::unmap_action::RESET_QUEUES))
        .unwrap();
    assert!(!r.mec.hqd_active(1, USER_HQD));
    assert!(r.mec.queues().iter().all(|q| q.cp.is_none()));
}

/// The HWS's UNMAP_QUEUES on GC 9.4.3: a PREEMPT of a hung queue is
/// abandoned (the packet and its fence complete, the queue stays mapped,
/// each XCC's HIQ MQD logs its doorbell in `queue_doorbell_id0`: the
/// comment in `unmap_queues_cpsch()`), so the unmap must read those
/// fields (`check_preemption_failed_v9_4_3()`) and say so instead of
/// reporting success. RESET_QUEUES (`reset_queues_cpsch()`) kills the
/// waves and takes the queue off; the unmap then completes.
#[test]
fn hws_preemption_of_a_hung_queue_is_abandoned_and_reset_takes_it_off() {
    let n = 2;
    let mut r = rig(n, &[]);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    let mut q = r.queue();
    let blocks = r.blocks();
    let (host, pause) = (r.host, r.pause);
    let mask = runlist::queue_mask(4, 8, 1);
    v9::map_hws(
        &mut q,
        &mut kiqs,
        &mut r.area,
        &r.doorbells,
        host,
        pause,
        mask,
        PD,
        None,
    )
    .unwrap();
    assert!(r.mec.queues()[0].cp.is_some(), "the queue reached the CP");
    assert!(r.mec.hang_doorbell(0x20));
    let e = q.unmap(&blocks, &mut kiqs, &r.host).unwrap_err();
    assert!(
        matches!(
            e,
            XccError::Hws(HwsError::PreemptionFailed {
                xcc: 0,
                doorbell_offset: 0x20
            })
        ),
        "{e}"
    );
    assert!(r.mec.hws().is_some(), "the HWS stays up for the reset");
    assert!(
        r.mec.queues().iter().any(|q| q.cp.is_some()),
        "still on the CP"
    );
    for x in 0..n {
        assert!(r.mec.hqd_active(x, barebell_model::mec_v9_4_3::HWS_SLOT));
    }
    // The reset: waves killed, queue off every XCC.
    assert!(q.reset().unwrap());
    assert!(r.mec.queues().iter().all(|q| q.cp.is_none()), "off the CP");
    for x in 0..n {
        assert!(!r.mec.hqd_active(x, barebell_model::mec_v9_4_3::HWS_SLOT));
    }
    q.unmap(&blocks, &mut kiqs, &r.host).unwrap();
    assert!(r.mec.hws().is_none());
    v9::kiqs_down(&blocks, kiqs, &r.host).unwrap();
    assert_eq!(r.mec.refusals(), vec![]);
}

/// The KIQ ring as `gfx_v9_4_3_ring_funcs_kiq` fills it (one-dword
/// `PACKET3(PACKET3_NOP, 0x3FFF)` pads) and the register stores its ring
/// test makes (`gfx_v9_4_3_ring_test_ring()`: `SET_UCONFIG_REG` of the
/// XCC's `SCRATCH_REG0`, an offset from `PACKET3_SET_UCONFIG_REG_START`,
/// 0xC000). The old model read a pad as a 0x4001-dword packet (the
/// submit timed out) and halted on `SET_UCONFIG_REG`. Found by the Linux
/// peer ("ring kiq_0.2.1.0 test failed").
#[test]
fn a_kiq_skips_pads_and_its_register_stores_reach_the_bus() {
    let mut r = rig(2, &[]);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    const NOP_FILLER: u32 = 3 << 30 | 0x3FFF << 16 | 0x10 << 8;
    kiqs[1].kiq.submit("pads", &[NOP_FILLER; 3]).unwrap();
    kiqs[1]
        .kiq
        .submit(
            "SET_UCONFIG_REG",
            &[3 << 30 | 1 << 16 | 0x79 << 8, 0x40, 0xDEAD_BEEF],
        )
        .unwrap();
    assert_eq!(
        r.mec.take_register_stores(),
        vec![(0xC040 * 4, 0xDEAD_BEEF)]
    );
    assert_eq!(r.mec.refusals(), vec![]);
}

/// The TLB flush Linux puts on a GC 9.4.3 KIQ once the KIQ is up
/// (`amdgpu_gmc_fw_reg_write_reg_wait()` → `gfx_v9_4_3_wait_reg_mem()`
/// with `OPERATION` 1): the KIQ writes `ref` to the request register and
/// waits until the acknowledge register's masked value equals the mask
/// (`amdgpu_ring_emit_reg_write_reg_wait_helper()`'s equivalent). The
/// registers are absolute (outside the XCC ranges), so they stay as sent.
/// The old model halted on the packet ("failed to write reg 1af4 wait reg
/// 1b06" in the Linux peer's dmesg).
#[test]
fn a_kiq_writes_then_waits_on_a_register() {
    let mut r = rig(2, &[]);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    let (req, ack, inv, vmid_bit) = (0x1af4u32, 0x1b06u32, 0x00f8_0008u32, 1u32 << 3);
    // PACKET3(WAIT_REG_MEM, 5): MEM_SPACE 0, OPERATION 1, FUNCTION 3.
    let wait = [
        3 << 30 | 5 << 16 | 0x3C << 8,
        1 << 6 | 3,
        req,
        ack,
        inv,
        vmid_bit,
        0x20,
    ];
    // Nothing acknowledges yet: the submit's bounded wait runs out.
    assert!(kiqs[0].kiq.submit("write, wait", &wait).is_err());
    assert_eq!(r.mec.take_register_stores(), vec![(req * 4, inv)]);
    assert_eq!(r.mec.register_waits(), vec![ack * 4]);
    // An acknowledge without the VMID's bit does not end the wait.
    r.mec.register_values(&[(ack * 4, 0x1)]);
    r.mec.service();
    assert_eq!(r.mec.register_waits(), vec![ack * 4]);
    // With it, the wait ends; the request was written once.
    r.mec.register_values(&[(ack * 4, vmid_bit | 0x1)]);
    r.mec.service();
    assert_eq!(r.mec.register_waits(), Vec::<u32>::new());
    assert_eq!(r.mec.take_register_stores(), vec![]);
    assert_eq!(r.mec.refusals(), vec![]);
}

/// An AID's MMHUB TLB flush as Linux sends it to KIQ 0
/// (`gmc_v9_0_flush_gpu_tlb()` → `gfx_v9_4_3_ring_emit_reg_write_reg_wait()`
/// = `WRITE_DATA` of the request, then `WAIT_REG_MEM` on the acknowledge,
/// both through `gfx_v9_4_3_normalize_xcc_reg_offset()`, which cuts MMHUB
/// 1.8's 0x1abd4 / 0x1abe6 to 0xabd4 / 0xabe6). The model takes those as
/// the invalidation registers of the MMHUB of the XCC's AID (a model
/// convention, see `MecV943::xcc_register`); any other register in the
/// XCC ranges stays the XCC's own.
#[test]
fn a_kiq_mmhub_flush_reaches_the_aids_mmhub() {
    let mut r = rig(2, &[]);
    // AID 0 and 1 MMHUB bases (dwords), one XCC per AID in this rig.
    r.mec.set_aid_mmhubs(vec![0x1_A000, 0x401_A000], 1);
    let mut kiqs = r.kiqs(USER_MASK).unwrap();
    let (req, ack) = (0xabd4u32, 0xabe6u32);
    // PACKET3(WRITE_DATA, 3): dst_sel 0, one address; the request.
    let write = [3 << 30 | 3 << 16 | 0x37 << 8, 1 << 16, req, 0, 0x00f8_0001];
    kiqs[1].kiq.submit("flush request", &write).unwrap();
    assert_eq!(
        r.mec.take_register_stores(),
        vec![(0x401_abd4 * 4, 0x00f8_0001)]
    );
    // PACKET3(WAIT_REG_MEM, 5): register, wait, equal; ack & 1 == 1.
    let wait = [3 << 30 | 5 << 16 | 0x3C << 8, 3, ack, 0, 1, 1, 0x20];
    assert!(kiqs[1].kiq.submit("flush wait", &wait).is_err());
    assert_eq!(r.mec.register_waits(), vec![0x401_abe6 * 4]);
    // A GC register in the same range stays the XCC's.
    assert_eq!(r.mec.xcc_register(0, 0xa000), 0xa000);
    assert_eq!(r.mec.refusals(), vec![]);
}
