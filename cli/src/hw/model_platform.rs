//! The hardware path's steps run against the device model: a platform
//! whose register aperture routes each register to the model that owns
//! it (discovery window, NBIO, MMHUB, GFXHUB, PSP), whose BAR0 is host
//! memory the MC model reads as VRAM, and whose DMA region sits in the
//! model IOMMU at a chosen bus address. What this checks: the hardware
//! chain's own glue (discovery read, NBIO, MMHUB and its GART with the
//! PSP buffers in GTT, the TMR in VRAM, PSP loading with the real blobs,
//! the RLC wait, GFXHUB) drives the models to the end with no refusal.
//! What it cannot check: anything the models do not model (a real PSP's
//! TOC, HDP caching, the VBIOS's FB location: preset to the rig's).

use super::chain::{self, Bar0, HwError, Options, Platform};
use crate::bringup::Step;
use crate::latency_target::MappingMode;
use barebell::bus::RegisterBus;
use barebell::discovery::{Discovery, boot, hw_id};
use barebell::hub::{HubRegs, hub_for};
use barebell::nbio::{MMIO_REG_HOLE_OFFSET, Nbio};
use barebell::psp::{GcRegs, Plan, PspRegs};
use barebell::regs::{IpBases, Reg};
use barebell_firmware_if::parse;
use barebell_sim::cp::CpModel;
use barebell_sim::discovery::VramWindow;
use barebell_sim::hub::HubModel;
use barebell_sim::mc::{CID_MP0, Mc};
use barebell_sim::mec::Mec;
use barebell_sim::nbio::{NbioIp, NbioModel};
use barebell_sim::psp::rig::{self, BOOT_ORDER, MODEL_TMR, PartFirmware};
use barebell_sim::psp::{PspExpect, PspModel, PspPlacement};
use barebell_sim::{Seed, SimClock};
use core::ptr::NonNull;
use std::collections::HashSet;
use std::path::Path;

/// Routes each register to the model that owns it; the PSP model takes
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
const DMA_BYTES: usize = 2 << 20;

fn run_part(
    part: PartFirmware,
    nbio_ip: NbioIp,
    mapping: Option<MappingMode>,
    mes_files: [&str; 2],
) {
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
    let dma = leaked(DMA_BYTES);
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
    let mec: &'static Mec<'static> = Box::leak(Box::new(
        Mec::new(
            clock,
            gc.bases,
            generation,
            0x00FC_0000_0000,
            CpModel::new(Seed(1)),
        )
        .unwrap(),
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
    let router: &'static Router = Box::leak(Box::new(Router {
        routes: vec![
            (offsets(&mes_regs, &gc.bases), mec as &dyn RegisterBus),
            (boot_regs, window),
            (psp_gc, psp),
            (nbio_set, nbio),
            (offsets(mmhub_regs.all, &mmhub.bases), mmhub_model),
            (offsets(gfxhub_regs.all, &gc.bases), gfxhub_model),
        ],
        rest: psp,
    }));
    let bar0 = Buffer {
        ptr: vram,
        len: BAR0_BYTES,
    };
    let platform = Platform {
        regs: router,
        vram: &bar0,
        dma: (dma, DMA_BYTES, DMA_BUS),
        doorbell_bus: 0x00FC_0000_0000,
    };
    let o = Options {
        until: Step::Rlc,
        trace: false,
        mapping,
        firmware_dir: dir,
    };
    match (chain::run(&platform, &o), mapping) {
        (Ok(()), None) => {}
        // With a mapping the chain starts MES and stops, typed, at the
        // rings it has not built for hardware. Each pipe's program counter
        // must be its blob's `mes_uc_start_addr` >> 2, read here straight
        // from the header bytes (offsets 56/60 of `mes_firmware_header_v1_0`,
        // checked against amdgpu_ucode.h by firmware-if's facts).
        (Err(HwError::NotBuilt { step: "rings", .. }), Some(_)) => {
            let start = |file: &str| {
                let b = std::fs::read(dir.join(file)).unwrap();
                let lo = u32::from_le_bytes(b[56..60].try_into().unwrap());
                let hi = u32::from_le_bytes(b[60..64].try_into().unwrap());
                (u64::from(hi) << 32 | u64::from(lo)) >> 2
            };
            let pipes = mec.mes_pipes();
            assert_eq!(pipes[0], (start(mes_files[0]), true), "{}", part.desc.name);
            assert_eq!(pipes[1], (start(mes_files[1]), true), "{}", part.desc.name);
        }
        (r, _) => panic!("{}: {r:?}", part.desc.name),
    }
    assert!(psp.refusals().is_empty(), "{:?}", psp.refusals());
    assert!(psp.sos_running());
    assert!(nbio.hdp_flushes() >= 1, "no HDP flush after the remap");
    assert!(mmhub_model.vmid0().is_some(), "MMHUB VMID0 not enabled");
    assert!(gfxhub_model.vmid0().is_some(), "GFXHUB VMID0 not enabled");
}

#[test]
fn navi31_comes_up_to_rlc_through_the_hardware_steps() {
    run_part(rig::navi31(), NbioIp::Nbio4_3_0, None, NAVI31_MES);
}

const NAVI31_MES: [&str; 2] = ["gc_11_0_0_mes_2.bin", "gc_11_0_0_mes1.bin"];
const NAVI48_MES: [&str; 2] = ["gc_12_0_1_uni_mes.bin", "gc_12_0_1_uni_mes.bin"];

#[test]
fn with_a_mapping_navi31_starts_mes_then_stops_at_the_rings() {
    let m = Some(MappingMode::Mes);
    run_part(rig::navi31(), NbioIp::Nbio4_3_0, m, NAVI31_MES);
}

#[test]
fn with_a_mapping_navi48_starts_mes_then_stops_at_the_rings() {
    let m = Some(MappingMode::Direct);
    run_part(rig::navi48(), NbioIp::Nbif6_3_1, m, NAVI48_MES);
}

#[test]
fn navi48_comes_up_to_rlc_through_the_hardware_steps() {
    run_part(rig::navi48(), NbioIp::Nbif6_3_1, None, NAVI48_MES);
}
