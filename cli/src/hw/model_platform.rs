//! The hardware path's steps run against the device model: a platform
//! whose register aperture routes each register to the model that owns
//! it (discovery window, NBIO, MMHUB, GFXHUB, PSP), whose BAR0 is host
//! memory the MC model reads as VRAM, and whose DMA region sits in the
//! model IOMMU at a chosen bus address. What this checks: the hardware
//! chain's own glue (discovery read, NBIO, MMHUB and its GART with the
//! PSP buffers in GTT, the TMR in VRAM, PSP loading with the real blobs,
//! the RLC wait, GFXHUB) drives the models to the end with no refusal.
//! With a mapping, the GC registers go to a MEC model (HQDs, MES pipes,
//! the CP model behind them) and the chain goes on through the rings to
//! a mapped user queue whose barrier completed; the firmware models
//! (KIQ, MES) are found through the MEC once their rings are mapped and
//! serviced from the runtime's pauses ([`Models`]). The DMA region sits
//! at a fixed host address like the real one, and the CP model reaches
//! the ring area at VA = host address, as the GPU would through the
//! tables the `gmc` step wrote (which the tests walk with the hub model).
//! What it cannot check: anything the models do not model (a real PSP's
//! TOC, HDP caching, the VBIOS's FB location: preset to the rig's; the
//! CP model reads host memory directly rather than through the hub, and
//! does not know VMIDs).

use super::chain::{self, Bar0, Options, Platform};
use super::rings::{self, Pause, Service};
use crate::bringup::Step;
use crate::latency_target::MappingMode;
use barebell::bus::RegisterBus;
use barebell::discovery::{Discovery, boot, hw_id};
use barebell::hub::{HubRegs, hub_for};
use barebell::nbio::{MMIO_REG_HOLE_OFFSET, Nbio};
use barebell::psp::{GcRegs, Plan, PspRegs};
use barebell::regs::{IpBases, Reg};
use barebell_firmware_if::parse;
use barebell_sim::bar::BarWindow;
use barebell_sim::cp::CpModel;
use barebell_sim::discovery::VramWindow;
use barebell_sim::dma::Dma;
use barebell_sim::gmc::{Access, Gmc};
use barebell_sim::host::DoorbellPage;
use barebell_sim::hub::HubModel;
use barebell_sim::kiq::KiqModel;
use barebell_sim::mc::{CID_MP0, Mc};
use barebell_sim::mec::Mec;
use barebell_sim::mec_host::MecThread;
use barebell_sim::mes::{MesApiVersion, MesModel};
use barebell_sim::nbio::{NbioIp, NbioModel};
use barebell_sim::psp::rig::{self, BOOT_ORDER, MODEL_TMR, PartFirmware};
use barebell_sim::psp::{PspExpect, PspModel, PspPlacement};
use barebell_sim::thread::Idle;
use barebell_sim::{Seed, SimClock};
use core::ptr::NonNull;
use core::sync::atomic::AtomicU64;
use std::collections::HashSet;
use std::path::Path;

/// BAR5's length on Navi3x/Navi4x boards.
const REGS_BYTES: usize = 1 << 20;

/// Routes each register to the model that owns it; the MEC model takes
/// the rest.
struct Router {
    routes: Vec<(HashSet<usize>, &'static dyn RegisterBus)>,
    rest: &'static dyn RegisterBus,
}

impl Router {
    fn owner(&self, off: usize) -> &'static dyn RegisterBus {
        self.routes
            .iter()
            .find(|(set, _)| set.contains(&off))
            .map_or(self.rest, |(_, m)| *m)
    }
}

impl RegisterBus for Router {
    fn read32(&self, off: usize) -> u32 {
        self.owner(off).read32(off)
    }
    fn write32(&self, off: usize, v: u32) {
        self.owner(off).write32(off, v)
    }
}

/// The registers named `names` from a block's register list.
fn gc_names(all: &[Reg], names: &[&str]) -> Vec<Reg> {
    let found: Vec<Reg> = all
        .iter()
        .filter(|r| names.contains(&r.name))
        .copied()
        .collect();
    assert_eq!(found.len(), names.len(), "{names:?}");
    found
}

fn offsets(regs: &[Reg], bases: &IpBases) -> HashSet<usize> {
    regs.iter().filter_map(|r| r.byte_offset(bases)).collect()
}

struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
}
impl Bar0 for Buffer {
    fn len(&self) -> usize {
        self.len
    }
    fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    fn read32(&self, offset: usize) -> u32 {
        if offset + 4 > self.len {
            return u32::MAX;
        }
        // SAFETY: in bounds of the leaked buffer.
        unsafe { self.ptr.as_ptr().add(offset).cast::<u32>().read_unaligned() }
    }
}

fn leaked(len: usize) -> NonNull<u8> {
    let layout = std::alloc::Layout::from_size_align(len, 2 << 20).unwrap();
    // SAFETY: non-zero size.
    NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }).unwrap()
}

/// The PSP model's expectations from the part's hand-written list (as
/// the model rig builds them).
fn expect(part: &PartFirmware, dir: &Path, plan: Plan) -> PspExpect {
    let read = |name: &str, kind| {
        let bytes: &'static [u8] = Box::leak(std::fs::read(dir.join(name)).unwrap().into());
        parse(kind, bytes).unwrap()
    };
    let sos = read(part.sos, barebell_firmware_if::Kind::PspSos);
    let smu = read(part.smu.0, barebell_firmware_if::Kind::Smc);
    let section = |f: &barebell_firmware_if::Firmware<'static>, s: &str| {
        f.bytes(f.section(s).unwrap()).to_vec()
    };
    PspExpect {
        components: BOOT_ORDER
            .iter()
            .filter_map(|(n, c)| sos.section(n).map(|s| (*c, sos.bytes(s).to_vec())))
            .collect(),
        toc: section(&sos, "toc"),
        tmr_size: MODEL_TMR,
        smu: Some(section(&smu, part.smu.1)),
        gfx: part
            .gfx
            .iter()
            .map(|(t, kind, file, sec)| (*t, section(&read(file, *kind), sec)))
            .collect(),
        boot_time_tmr: !plan.setup_tmr,
    }
}

const BAR0_BYTES: usize = 64 << 20;
const DMA_BUS: u64 = 0x1_0000_0000;
const DMA_BYTES: usize = super::device::DMA_BYTES;

/// The DMA region at a fixed host address as the real one (each test
/// its own, tests run in parallel), so it cannot land in the GART.
fn dma_region() -> NonNull<u8> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let at = super::dma::DMA_VA + (1 << 40) + n * 2 * DMA_BYTES;
    // SAFETY: a fresh anonymous mapping at an address nothing else uses
    // (NOREPLACE), never unmapped: the models keep its addresses.
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            DMA_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    assert_eq!(p as usize, at, "mmap at {at:#x}");
    NonNull::new(p.cast()).unwrap()
}

/// The firmware models, found through the MEC as each ring is mapped,
/// serviced from the runtime's pauses; the CP model is stepped to idle
/// after each doorbell.
struct Models {
    mec: &'static Mec<'static>,
    api: MesApiVersion,
    sched: Option<&'static MesModel<'static, 'static>>,
    kiq: Option<&'static KiqModel<'static, 'static>>,
    pipe1: Option<&'static MesModel<'static, 'static>>,
}

impl Service for Models {
    fn kiq_loaded(&mut self) -> Pause {
        let k: &'static KiqModel<'static, 'static> =
            Box::leak(Box::new(KiqModel::from_mec(self.mec).expect("no KIQ HQD")));
        self.kiq = Some(k);
        Box::new(move || {
            k.service();
        })
    }
    fn mes_ring_mapped(&mut self, pipe: u8) -> Pause {
        let m = match pipe {
            0 => MesModel::from_mec(self.mec, self.api),
            p => MesModel::from_mec_pipe(self.mec, p, self.api),
        };
        let m: &'static MesModel<'static, 'static> = Box::leak(Box::new(m.expect("no MES ring")));
        if pipe == 0 {
            self.sched = Some(m);
        } else {
            self.pipe1 = Some(m);
        }
        Box::new(move || {
            m.service();
        })
    }
    fn process_maps(&mut self, ptb: u64, base: u64, len: u64) {
        self.sched
            .expect("process before the scheduler ring")
            .map_process_memory(ptb, base, len);
    }
    fn doorbell_rung(&mut self) {
        self.mec
            .run_until_idle(1_000_000)
            .expect("the MEC went idle");
    }
}

type Mapped = (rings::Ready, &'static Mec<'static>);

fn run_part(
    part: PartFirmware,
    nbio_ip: NbioIp,
    mapping: Option<MappingMode>,
    mes_files: [&str; 2],
) -> Option<Mapped> {
    let dir = Path::new("/lib/firmware/amdgpu");
    let clock: &'static SimClock = Box::leak(Box::new(SimClock::new()));
    let (table, _) = barebell_sim::discovery::build(&part.desc);
    let d = Discovery::parse(&table).unwrap();
    let ip = |id| d.ip(id, 0).unwrap();
    let (mp0, gc, nbif, mmhub) = (
        ip(hw_id::MP0),
        ip(hw_id::GC),
        ip(hw_id::NBIF),
        ip(hw_id::MMHUB),
    );
    let mmhub_regs: &'static HubRegs = hub_for(hw_id::MMHUB, mmhub.version.triple()).unwrap();
    let gfxhub_regs: &'static HubRegs = hub_for(hw_id::GC, gc.version.triple()).unwrap();
    let regs = PspRegs::for_version(mp0.version.triple()).unwrap();
    let plan = Plan::for_version(mp0.version.triple()).unwrap();
    let gc_regs = GcRegs::for_version(gc.version.triple()).unwrap();

    let window: &'static VramWindow<'static> = Box::leak(Box::new(VramWindow::new(
        clock,
        part.vram_mib,
        table.clone(),
    )));
    let nbio_regs = Nbio::for_version(nbif.version.triple(), nbif.bases).unwrap();
    let nbio: &'static NbioModel<'static> = Box::leak(Box::new(NbioModel::new(
        clock,
        nbio_ip,
        nbif.bases,
        MMIO_REG_HOLE_OFFSET as usize,
    )));
    let mmhub_model: &'static HubModel<'static> =
        Box::leak(Box::new(HubModel::for_hub(clock, mmhub.bases, mmhub_regs)));
    let gfxhub_model: &'static HubModel<'static> =
        Box::leak(Box::new(HubModel::for_hub(clock, gc.bases, gfxhub_regs)));
    // What the VBIOS leaves in the FB location: the rig's FB start.
    let fb_reg = mmhub_regs
        .all
        .iter()
        .find(|r| r.name == "MMMC_VM_FB_LOCATION_BASE")
        .unwrap();
    mmhub_model.write32(
        fb_reg.byte_offset(&mmhub.bases).unwrap(),
        (rig::FB_START >> 24) as u32,
    );

    let vram = leaked(BAR0_BYTES);
    let dma = dma_region();
    let mut mc = Mc::new(mmhub_model, CID_MP0);
    // SAFETY: both buffers are leaked, so they outlive the model.
    unsafe {
        mc.back_vram(0, vram.as_ptr(), BAR0_BYTES as u64);
        mc.map_bus(DMA_BUS, dma.as_ptr(), DMA_BYTES as u64);
    }
    let mc: &'static Mc<'static> = Box::leak(Box::new(mc));
    let place = PspPlacement {
        regs,
        mp0_bases: mp0.bases,
        gc: gc_regs,
        gc_bases: gc.bases,
    };
    let psp: &'static PspModel<'static> = Box::leak(Box::new(PspModel::new(
        clock,
        place,
        expect(&part, dir, plan),
        mc,
    )));

    let boot_regs: HashSet<usize> = boot::ALL.iter().map(|r| r.offset as usize * 4).collect();
    let mut nbio_set = HashSet::new();
    for list in nbio_regs.regs.symbols {
        nbio_set.extend(offsets(list, &nbif.bases));
    }
    nbio_set
        .extend((MMIO_REG_HOLE_OFFSET as usize..MMIO_REG_HOLE_OFFSET as usize + 4096).step_by(4));
    let psp_gc: HashSet<usize> =
        offsets(&[gc_regs.rlc_bootload_status, gc_regs.cp_stat], &gc.bases);
    let generation = match gfxhub_regs.generation {
        barebell::hub::Generation::Gfx11 => barebell::mqd::Generation::Gfx11,
        barebell::hub::Generation::Gfx12 => barebell::mqd::Generation::Gfx12,
    };
    // BAR2 stand-in: the doorbell page the MEC model watches.
    let doorbells: &'static DoorbellPage =
        Box::leak(Box::new(DoorbellPage([const { AtomicU64::new(0) }; 512])));
    let bar2 = doorbells as *const DoorbellPage as u64;
    let mut cp = CpModel::new(Seed(1));
    // SAFETY: the doorbell page and the DMA region are leaked and only
    // reached per the device protocol.
    unsafe {
        cp.dma_mut().map(bar2, 4096);
        cp.dma_mut().map(dma.as_ptr() as u64, DMA_BYTES as u64);
    }
    let mec: &'static Mec<'static> = Box::leak(Box::new(
        Mec::new(clock, gc.bases, generation, bar2, cp).unwrap(),
    ));
    let mes_regs = gc_names(
        gfxhub_regs.all,
        &[
            "GRBM_GFX_CNTL",
            "CP_MES_CNTL",
            "CP_MES_GP3_LO",
            "CP_MES_PRGRM_CNTR_START",
            "CP_MES_PRGRM_CNTR_START_HI",
        ],
    );
    // Every other GC register (HQDs, doorbell range, KIQ) is the MEC's
    // too, after the hub's and the PSP's own.
    let gc_all = match generation {
        barebell::mqd::Generation::Gfx11 => barebell::regs::gc_11_0_0::ALL,
        barebell::mqd::Generation::Gfx12 => barebell::regs::gc_12_0_0::ALL,
    };
    let mp0_all = match mp0.version.triple() {
        (13, 0, 0) => barebell::regs::mp_13_0_0::ALL,
        _ => barebell::regs::mp_14_0_2::ALL,
    };
    // The hub's registers are its VM and MC blocks; `gfxhub_regs.all`
    // is the whole GC list.
    let hub_own: Vec<Reg> = gfxhub_regs
        .all
        .iter()
        .filter(|r| {
            ["GCVM_", "GCMC_", "GCUTCL2_", "GCL2"]
                .iter()
                .any(|p| r.name.starts_with(p))
        })
        .copied()
        .collect();
    let router: &'static Router = Box::leak(Box::new(Router {
        routes: vec![
            (offsets(&mes_regs, &gc.bases), mec as &dyn RegisterBus),
            (boot_regs, window),
            (psp_gc, psp),
            (nbio_set, nbio),
            (offsets(mmhub_regs.all, &mmhub.bases), mmhub_model),
            (offsets(&hub_own, &gc.bases), gfxhub_model),
            (offsets(gc_all, &gc.bases), mec),
            (offsets(mp0_all, &mp0.bases), psp),
        ],
        // What no list names: the HQD, MQD and KIQ registers, which the
        // runtime's register tables name but the GC symbol list lacks.
        rest: mec,
    }));
    let bar0 = Buffer {
        ptr: vram,
        len: BAR0_BYTES,
    };
    let chunks: &'static [u64] = Box::leak(Box::new([DMA_BUS, DMA_BUS + (DMA_BYTES / 2) as u64]));
    // BAR5 as a real board maps it: 1 MiB; anything past it must go
    // through the NBIO's index/data pair or it is lost (counted).
    let bar5: &'static BarWindow<&'static Router> = Box::leak(Box::new(BarWindow::new(
        router,
        REGS_BYTES,
        nbio_regs.regs.rsmu_index.byte_offset(&nbif.bases).unwrap(),
        nbio_regs.regs.rsmu_data.byte_offset(&nbif.bases).unwrap(),
    )));
    let platform: &'static Platform<'static> = Box::leak(Box::new(Platform {
        regs: bar5,
        regs_len: REGS_BYTES,
        vram: Box::leak(Box::new(bar0)),
        dma: (dma, DMA_BYTES),
        dma_chunks: chunks,
        doorbell_bus: 0x00FC_0000_0000,
        doorbells: (NonNull::from(doorbells).cast(), 4096),
    }));
    let o = Options {
        until: Step::Rlc,
        trace: false,
        mapping,
        firmware_dir: dir,
    };
    let api = match generation {
        barebell::mqd::Generation::Gfx11 => MesApiVersion::V11,
        barebell::mqd::Generation::Gfx12 => MesApiVersion::V12,
    };
    let mut models = Models {
        mec,
        api,
        sched: None,
        kiq: None,
        pipe1: None,
    };
    let ready = chain::run(platform, &o, &mut models).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\ndoorbells {:x?} bar {:#x} page {:p} kiq {:x?}\nKIQ model: {:?}\nMES pipe 1: {:?}\nscheduler: {:?}\nMEC: {:?}",
            part.desc.name,
            doorbells.0[..16].iter().map(|a| a.load(core::sync::atomic::Ordering::Relaxed)).collect::<Vec<_>>(),
            mec.doorbell_bar(),
            doorbells,
            mec.kiq_hqd(),
            models.kiq.map(|k| k.log()),
            models.pipe1.map(|m| m.log()),
            models.sched.map(|m| m.log()),
            mec.events()
        )
    });
    assert!(psp.refusals().is_empty(), "{:?}", psp.refusals());
    assert_eq!(bar5.counts().beyond, 0, "an access past BAR5 was lost");
    assert!(psp.sos_running());
    assert!(nbio.hdp_flushes() >= 1, "no HDP flush after the remap");
    assert!(mmhub_model.vmid0().is_some(), "MMHUB VMID0 not enabled");
    assert!(gfxhub_model.vmid0().is_some(), "GFXHUB VMID0 not enabled");
    let (Some(mode), Some(ready)) = (mapping, ready) else {
        assert!(mapping.is_none(), "a mapping must end in a queue");
        return None;
    };
    // Each MES pipe's program counter is its blob's `mes_uc_start_addr`
    // >> 2, read here straight from the header bytes (offsets 56/60 of
    // `mes_firmware_header_v1_0`, checked against amdgpu_ucode.h by
    // firmware-if's facts).
    let start = |file: &str| {
        let b = std::fs::read(dir.join(file)).unwrap();
        let lo = u32::from_le_bytes(b[56..60].try_into().unwrap());
        let hi = u32::from_le_bytes(b[60..64].try_into().unwrap());
        (u64::from(hi) << 32 | u64::from(lo)) >> 2
    };
    let pipes = mec.mes_pipes();
    assert_eq!(pipes[0], (start(mes_files[0]), true), "{}", part.desc.name);
    assert_eq!(pipes[1], (start(mes_files[1]), true), "{}", part.desc.name);

    // The barrier completed, and the GPU would find the queue's ring at
    // its host address: the GFXHUB model walks VMID0's tables (in the
    // BAR0 buffer, VRAM offset 0) to the DMA region's bus address.
    assert_eq!(ready.signal.value(), 0, "completion signal");
    let mut walk = Dma::default();
    // SAFETY: the BAR0 buffer is leaked.
    unsafe { walk.map_at(0, vram.as_ptr(), BAR0_BYTES as u64) };
    let ring = ready.queue.memory().ring_address();
    let t = gfxhub_model
        .translate(&walk, ring, Access::Read)
        .unwrap_or_else(|e| panic!("VMID0 walk of {ring:#x}: {e:?}"));
    assert!(t.system, "ring PTE without SYSTEM");
    assert_eq!(t.pa, DMA_BUS + (ring - dma.as_ptr() as u64));
    assert!(mec.cp().errors().is_empty(), "{:?}", mec.cp().errors());
    if mode != MappingMode::Mes {
        // Direct/KIQ: the queue runs in USER_VMID, whose context now
        // names the process tables.
        assert_eq!(ready.mapping.vmid, rings::USER_VMID);
        let lo = gfxhub_regs.ctx1_base_lo.byte_offset(&gc.bases).unwrap()
            + (u32::from(rings::USER_VMID) - 1) as usize
                * gfxhub_regs.ctx_addr_distance() as usize
                * 4;
        let base = u64::from(router.read32(lo)) | u64::from(router.read32(lo + 4)) << 32;
        assert_eq!(base & 1, 1, "VMID {} base not valid", rings::USER_VMID);
        // The tables that context names map the ring at its host
        // address too (the GMC model's walker, in the part's format).
        let gfx12 = generation == barebell::mqd::Generation::Gfx12;
        let t = Gmc::new(&walk, base & !0xFFF, gfx12)
            .translate(ring, Access::Read)
            .unwrap_or_else(|e| panic!("process walk of {ring:#x}: {e:?}"));
        assert!(t.system, "process PTE without SYSTEM");
        assert_eq!(t.pa, DMA_BUS + (ring - dma.as_ptr() as u64));
    }
    Some((ready, mec))
}

fn run_mapped(part: PartFirmware, nbio: NbioIp, mode: MappingMode, mes: [&str; 2]) {
    let (ready, _) = run_part(part, nbio, Some(mode), mes).unwrap();
    ready.unmap().unwrap();
}

#[test]
fn navi31_comes_up_to_rlc_through_the_hardware_steps() {
    assert!(run_part(rig::navi31(), NbioIp::Nbio4_3_0, None, NAVI31_MES).is_none());
}

const NAVI31_MES: [&str; 2] = ["gc_11_0_0_mes_2.bin", "gc_11_0_0_mes1.bin"];
const NAVI48_MES: [&str; 2] = ["gc_12_0_1_uni_mes.bin", "gc_12_0_1_uni_mes.bin"];

#[test]
fn navi31_reaches_queue_ready_by_mes() {
    run_mapped(
        rig::navi31(),
        NbioIp::Nbio4_3_0,
        MappingMode::Mes,
        NAVI31_MES,
    );
}

#[test]
fn navi31_reaches_queue_ready_by_direct_hqd() {
    run_mapped(
        rig::navi31(),
        NbioIp::Nbio4_3_0,
        MappingMode::Direct,
        NAVI31_MES,
    );
}

#[test]
fn navi31_reaches_queue_ready_by_kiq() {
    run_mapped(
        rig::navi31(),
        NbioIp::Nbio4_3_0,
        MappingMode::Kiq,
        NAVI31_MES,
    );
}

#[test]
fn navi48_reaches_queue_ready_by_mes() {
    run_mapped(
        rig::navi48(),
        NbioIp::Nbif6_3_1,
        MappingMode::Mes,
        NAVI48_MES,
    );
}

#[test]
fn navi48_reaches_queue_ready_by_direct_hqd() {
    run_mapped(
        rig::navi48(),
        NbioIp::Nbif6_3_1,
        MappingMode::Direct,
        NAVI48_MES,
    );
}

#[test]
fn navi48_reaches_queue_ready_by_kiq() {
    run_mapped(
        rig::navi48(),
        NbioIp::Nbif6_3_1,
        MappingMode::Kiq,
        NAVI48_MES,
    );
}

#[test]
fn navi48_comes_up_to_rlc_through_the_hardware_steps() {
    assert!(run_part(rig::navi48(), NbioIp::Nbif6_3_1, None, NAVI48_MES).is_none());
}

/// The hardware path's latency loop (the barrier it measures on a GPU,
/// `latency::run::measure`) over the queue the chain mapped, with the
/// MEC model on a thread as the CP: every iteration completes (signal
/// back at 0 each time, else `measure` fails) and every phase took time.
#[test]
fn hardware_latency_loop_runs_against_the_model_platform() {
    use barebell::latency::run::{Params, Sample, measure};
    use barebell::latency::tsc::{self, TscScale};
    let (ready, mec) = run_part(
        rig::navi31(),
        NbioIp::Nbio4_3_0,
        Some(MappingMode::Direct),
        NAVI31_MES,
    )
    .unwrap();
    let target = super::into_target(ready);
    let packet = rings::barrier(target.signal).unwrap();
    let scale = TscScale::from_hz(tsc::features().cpuid_hz.unwrap_or(2_000_000_000)).unwrap();
    let params = Params {
        batch: 1,
        pace_ns: 0,
        bound_ns: 2_000_000_000,
        jitter_ns: 0,
    };
    let thread = MecThread::spawn_with(mec, Vec::new(), Idle::YieldAfter(64), || {}).unwrap();
    let mut samples = vec![Sample::default(); 300];
    let r = measure(
        &target.queue,
        &packet,
        target.signal,
        scale,
        params,
        0,
        &mut samples,
    );
    thread.stop().unwrap();
    r.unwrap();
    assert_eq!(target.signal.value(), 0);
    for (i, s) in samples.iter().enumerate() {
        assert!(s.pickup + s.completion > 0, "iteration {i}: {s:?}");
        assert!(s.total() > 0, "iteration {i}: {s:?}");
    }
    assert!(mec.cp().errors().is_empty(), "{:?}", mec.cp().errors());
    target.finish().unwrap();
}
