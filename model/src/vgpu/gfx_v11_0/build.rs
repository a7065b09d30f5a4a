//! The GC 11 / GC 12 block models, block by block: each function builds
//! one block model (or wires two together) from the part description,
//! in the order [`super::build`] lists them.

use super::{DoorbellPage, Files, MesInfo, hub_offsets, offsets, sdma_claims};
use crate::cp::CpModel;
use crate::dcn::DcnModel;
use crate::discovery::PartIp;
use crate::discovery::{PartIps, VramWindow};
use crate::error::ModelError;
use crate::hub::HubModel;
use crate::mc::{CID_MP0, Mc};
use crate::mec::Mec;
use crate::mes::MesApiVersion;
use crate::nbio::NbioModel;
use crate::parts::Part;
use crate::psp::{PspModel, PspPlacement, RlcStatus, firmware};
use crate::socblocks::SocBlocks;
use crate::vgpu::HostMemory;
use crate::vgpu::router::{Bus, Router};
use crate::{Seed, SimClock};
use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::ip::{Generation, hw_id};
use barebell::regs::Reg;
use barebell::regs::hub::{HubRegs, hub_for};
use barebell::regs::mp::PspRegs;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Register routes: the offsets each block model answers.
pub(super) type Routes = Vec<(BTreeSet<usize>, Arc<dyn RegisterBus + Send + Sync>)>;

/// What the part's IP entries and the register tables for their versions
/// give every later block.
pub(super) struct Placement {
    pub mp0: PartIp,
    pub gc: PartIp,
    pub nbif: PartIp,
    pub mmhub: PartIp,
    pub mmhub_regs: &'static HubRegs,
    pub gfxhub_regs: &'static HubRegs,
    pub psp_regs: PspRegs,
    pub nbio_regs: NbioTables,
}

/// The NBIO/NBIF registers the model routes to its NBIO block, and the
/// index/data pair for registers beyond the BAR, by IP version: the
/// offset tables of `nbio_4_3_0_offset.h` / `nbif_6_3_1_offset.h`
/// (`barebell::regs`, checked against those headers), chosen here, not
/// by the runtime's NBIO code.
pub(super) struct NbioTables {
    pub symbols: &'static [&'static [Reg]],
    pub rsmu_index: Reg,
    pub rsmu_data: Reg,
}

impl NbioTables {
    fn for_version(version: (u8, u8, u8)) -> Option<Self> {
        use barebell::regs::{nbif_6_3_1 as f, nbio_4_3_0 as n};
        match version {
            (4, 3, 0) => Some(NbioTables {
                symbols: &[n::init::ALL, n::ALL],
                rsmu_index: n::BIF_BX_PF0_RSMU_INDEX,
                rsmu_data: n::BIF_BX_PF0_RSMU_DATA,
            }),
            (6, 3, 1) => Some(NbioTables {
                symbols: &[f::ALL],
                rsmu_index: f::BIF_BX_PF0_RSMU_INDEX,
                rsmu_data: f::BIF_BX_PF0_RSMU_DATA,
            }),
            _ => None,
        }
    }
}

fn unsupported(what: &'static str, version: (u8, u8, u8)) -> ModelError {
    ModelError::Unsupported { what, version }
}

fn not_implemented(what: &'static str, g: Generation) -> ModelError {
    ModelError::NotImplemented(barebell::ip::Unsupported::new(what, g))
}

/// The IP instances the blocks sit on and their register tables.
pub(super) fn place(d: &PartIps<'_>) -> Result<Placement, ModelError> {
    let ip = |id: u16, ip: &'static str| d.ip(id, 0).ok_or(ModelError::MissingIp { ip });
    let (mp0, gc, nbif, mmhub) = (
        ip(hw_id::MP0, "MP0")?,
        ip(hw_id::GC, "GC")?,
        ip(hw_id::NBIF, "NBIF")?,
        ip(hw_id::MMHUB, "MMHUB")?,
    );
    let mmhub_regs = hub_for(hw_id::MMHUB, mmhub.version.triple())
        .ok_or_else(|| unsupported("MMHUB table", mmhub.version.triple()))?;
    let gfxhub_regs = hub_for(hw_id::GC, gc.version.triple())
        .ok_or_else(|| unsupported("GFXHUB table", gc.version.triple()))?;
    let mp0_v = mp0.version.triple();
    let psp_regs =
        PspRegs::for_version(mp0_v).ok_or_else(|| unsupported("PSP registers", mp0_v))?;
    let nbio_regs = NbioTables::for_version(nbif.version.triple())
        .ok_or_else(|| unsupported("NBIO registers", nbif.version.triple()))?;
    Ok(Placement {
        mp0,
        gc,
        nbif,
        mmhub,
        mmhub_regs,
        gfxhub_regs,
        psp_regs,
        nbio_regs,
    })
}

/// A hub register and the value the VBIOS leaves in it.
pub(super) type FbReg = (Arc<HubModel>, Reg, u32);

/// The MMHUB, the GFXHUB, and their FB registers' power-on values.
pub(super) type Hubs = (Arc<HubModel>, Arc<HubModel>, Vec<FbReg>);

/// The MMHUB and the GFXHUB, with what the VBIOS leaves in both hubs' FB
/// location and offset: BASE and TOP in 16 MiB units, TOP the last
/// 16 MiB (as `mmhub_v3_0_get_fb_location()` and tinygrad's
/// `AM_GMC.init_sw()` read them), OFFSET the physical address of VRAM
/// offset 0 in the same units. Returns those values too, for a mode-1
/// reset to put back.
pub(super) fn hubs(clock: &SimClock, part: &Part, pl: &Placement) -> Result<Hubs, ModelError> {
    let mmhub = Arc::new(HubModel::for_hub(clock, pl.mmhub.bases, pl.mmhub_regs));
    let gfxhub = Arc::new(HubModel::for_hub(clock, pl.gc.bases, pl.gfxhub_regs));
    let vram_bytes = u64::from(part.firmware.vram_mib) << 20;
    let fb_top = (part.fb_start + vram_bytes - 1) >> 24;
    let mut fb_regs = Vec::new();
    for (hub, regs, prefix) in [
        (&mmhub, pl.mmhub_regs.all, "MMMC_VM_FB_"),
        (&gfxhub, pl.gfxhub_regs.all, "GCMC_VM_FB_"),
    ] {
        for (field, value) in [
            ("LOCATION_BASE", part.fb_start >> 24),
            ("LOCATION_TOP", fb_top),
            ("OFFSET", part.fb_offset >> 24),
        ] {
            let r = regs
                .iter()
                .find(|r| r.name.strip_prefix(prefix) == Some(field))
                .ok_or(ModelError::Register {
                    name: "*MC_VM_FB_LOCATION_BASE/TOP, *MC_VM_FB_OFFSET",
                })?;
            hub.set_device_reg(*r, value as u32);
            fb_regs.push((hub.clone(), *r, value as u32));
        }
    }
    Ok((mmhub, gfxhub, fb_regs))
}

/// The display the VBIOS left, scanning out of VRAM 0, if the part has
/// one and its description lists a DMU.
pub(super) fn dcn(
    clock: &SimClock,
    part: &Part,
    d: &PartIps<'_>,
    memory: &HostMemory,
) -> Option<Arc<DcnModel>> {
    let display = part.display?;
    let dmu = d.ip(crate::discovery::DMU_HWID, 0)?;
    // SAFETY: VRAM's backing belongs to `memory`, which the VirtualGpu
    // owns and drops after every model; 4 KiB aligned; the host writing
    // it is what the model watches.
    let m = unsafe {
        DcnModel::new(
            clock,
            dmu.bases,
            display,
            memory.vram.as_ptr(),
            memory.vram_len as u64,
        )
    };
    Some(Arc::new(m))
}

/// An MC for a client of the MMHUB over `memory`'s VRAM and DMA region.
pub(super) fn mc_over(mmhub: &Arc<HubModel>, client: u16, memory: &HostMemory) -> Mc {
    let mut mc = Mc::new(mmhub.clone(), client);
    // SAFETY: both ranges belong to `memory`, which the VirtualGpu owns
    // and drops after every model (field order).
    unsafe {
        mc.back_vram(0, memory.vram.as_ptr(), memory.vram_len as u64);
        mc.map_bus(memory.dma_bus, memory.dma.as_ptr(), memory.dma_len as u64);
    }
    mc
}

/// The PSP (MP0), reaching memory as the MMHUB's MP0 client, expecting
/// the part's firmware.
pub(super) fn psp(
    clock: &SimClock,
    part: &Part,
    pl: &Placement,
    files: Files<'_>,
    mmhub: &Arc<HubModel>,
    memory: &HostMemory,
) -> Result<Arc<PspModel>, ModelError> {
    let g = part.generation;
    let rlc = RlcStatus::for_generation(g).ok_or(not_implemented("the RLC status registers", g))?;
    Ok(Arc::new(PspModel::new(
        clock,
        PspPlacement {
            regs: pl.psp_regs,
            mp0_bases: pl.mp0.bases,
            gc: Some(rlc),
            gc_bases: pl.gc.bases,
        },
        firmware::expect(&part.firmware, &mut |name| files.read(name))?,
        Arc::new(mc_over(mmhub, CID_MP0, memory)),
    )))
}

/// The MEC with its CP model, the BAR2 doorbell page it reads, and the
/// program counter its pipes must start at.
pub(super) fn mec(
    clock: &SimClock,
    part: &Part,
    pl: &Placement,
    files: Files<'_>,
    seed: Seed,
    memory: &HostMemory,
    psp: &PspModel,
) -> Result<(Box<DoorbellPage>, Arc<Mec>), ModelError> {
    let g = part.generation;
    let doorbells = DoorbellPage::boxed();
    let bar2 = &*doorbells as *const DoorbellPage as u64;
    let mut cp = CpModel::new(seed);
    cp.shader.target = match g {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(not_implemented("the CP model's gfx9 shader targets", g));
        }
        Generation::Gfx11 => barebell_isa::Target::Gfx1100,
        Generation::Gfx12 => barebell_isa::Target::Gfx1201,
    };
    // The registers PM4 packets name: SET_SH_REG offsets are absolute
    // dwords (GC segment 0 base + register), and the HDP flush pair a
    // register WAIT_REG_MEM writes and polls (`nbio_4_3_0_offset.h`,
    // `nbif_6_3_1_offset.h`).
    let dw = |r: Option<usize>| r.map(|b| (b / 4) as u32);
    let hdp_flush = match pl.nbif.version.triple() {
        (4, 3, 0) => {
            use crate::socregs::nbio_4_3_0 as n;
            dw(n::BIF_BX_PF0_GPU_HDP_FLUSH_REQ.byte_offset(&pl.nbif.bases)).zip(dw(
                n::BIF_BX_PF0_GPU_HDP_FLUSH_DONE.byte_offset(&pl.nbif.bases),
            ))
        }
        (6, 3, 1) => {
            use crate::socregs::nbif_6_3_1 as n;
            dw(n::BIF_BX_PF0_GPU_HDP_FLUSH_REQ.byte_offset(&pl.nbif.bases)).zip(dw(
                n::BIF_BX_PF0_GPU_HDP_FLUSH_DONE.byte_offset(&pl.nbif.bases),
            ))
        }
        _ => None,
    };
    cp.set_pm4_registers(crate::cp::Pm4Registers {
        gc_seg0: pl.gc.bases.0[0],
        hdp_flush,
    });
    // SAFETY: the doorbell page is owned by the VirtualGpu (boxed, so it
    // does not move) and the DMA region and VRAM backing by `memory`; all
    // outlive the CP model, and the device side uses them per the device
    // protocol (atomics, AQL, PM4 rings).
    unsafe {
        cp.dma_mut()
            .map(bar2, core::mem::size_of::<DoorbellPage>() as u64);
        cp.dma_mut()
            .map(memory.dma.as_ptr() as u64, memory.dma_len as u64);
        // The CP reads what a VMID's page tables map to local memory (a
        // PTE without SYSTEM): the translator returns VRAM backing
        // addresses, which the CP's accesses must reach. Found by AM's PM4
        // ring, which tinygrad places in VRAM (`PCIIfaceBase.alloc`:
        // `valloc(..., contiguous=True)`).
        cp.dma_mut()
            .map(memory.vram.as_ptr() as u64, memory.vram_len as u64);
    }
    // SAFETY: the doorbell page is boxed in the VirtualGpu (it does not
    // move, and the MEC, which the VirtualGpu also owns, is dropped with
    // it) and holds `DOORBELL_SLOTS` u64s, accessed only atomically.
    let mec = unsafe { Mec::new(clock, pl.gc.bases, g, bar2, crate::bar::DOORBELL_SLOTS, cp) };
    let mec = Arc::new(mec.ok_or(ModelError::Register {
        name: "CP_MQD_BASE_ADDR (the MEC model's HQD window)",
    })?);
    // Every MEC pipe must start where the MEC ucode does
    // (`gfx_v11_0_config_gfx_rs64()` programs it from this header).
    let mec_blob = files.read(part.mec_file)?;
    let pc = crate::cpregs::gfx_v2::pc_start(&mec_blob).ok_or_else(|| ModelError::BlobLacks {
        name: part.mec_file.into(),
        what: "gfx_firmware_header_v2_0 (the MEC start address)",
    })?;
    mec.expect_pc(pc);
    // So must the graphics PFP and ME pipes, from their own blobs
    // (`gfx_v11_0_config_gfx_rs64()` / `gfx_v12_0_config_gfx_rs64()`
    // read `adev->gfx.pfp_fw` / `me_fw`), named as the MEC blob is.
    for (engine, suffix) in [
        (crate::gfx_pipes::Engine::Pfp, "_pfp.bin"),
        (crate::gfx_pipes::Engine::Me, "_me.bin"),
    ] {
        let Some(stem) = part.mec_file.strip_suffix("_mec.bin") else {
            continue;
        };
        let name = alloc::format!("{stem}{suffix}");
        // A firmware set without the graphics blobs (a rig's) leaves the
        // address unchecked; the pipes' record still shows what they took.
        let Ok(blob) = files.read(&name) else {
            continue;
        };
        let pc = crate::cpregs::gfx_v2::pc_start(&blob).ok_or_else(|| ModelError::BlobLacks {
            name: name.clone(),
            what: "gfx_firmware_header_v2_0 (the PFP/ME start address)",
        })?;
        mec.expect_gfx_pc(engine, pc);
    }
    // The engines run only what the PSP's RLC autoload put in place.
    mec.set_loaded_firmware(psp.loaded());
    Ok((doorbells, mec))
}

/// GC's register list for the generation.
pub(super) fn gc_all(g: Generation) -> Result<&'static [Reg], ModelError> {
    match g {
        Generation::Gfx90a | Generation::Gfx94 => {
            Err(not_implemented("the gfx9 GC register tables", g))
        }
        Generation::Gfx11 => Ok(barebell::regs::gc_11_0_0::ALL),
        Generation::Gfx12 => Ok(barebell::regs::gc_12_0_0::ALL),
    }
}

/// The blocks the GC side routes to, before the SOC blocks: everything
/// but the SOC's own registers.
pub(super) struct GcSide<'a> {
    pub pl: &'a Placement,
    pub g: Generation,
    pub window: Arc<VramWindow>,
    pub nbio: Arc<NbioModel>,
    pub mmhub: Arc<HubModel>,
    pub gfxhub: Arc<HubModel>,
    pub psp: Arc<PspModel>,
    pub mec: Arc<Mec>,
}

/// The NBIO model's registers: its tables, the MMIO hole, the HDP flush
/// register itself (issue 15, see `crate::nbio`).
fn nbio_offsets(pl: &Placement, nbio: &NbioModel) -> BTreeSet<usize> {
    let mut set = BTreeSet::new();
    for list in pl.nbio_regs.symbols {
        set.extend(offsets(list, &pl.nbif.bases));
    }
    let hole = nbio.hole();
    set.extend((hole..hole + 4096).step_by(4));
    set.extend(nbio.direct_flush());
    set.extend(nbio.doorbell_int_cntl());
    set
}

/// The GC side's routes, in the order the router tries them after the
/// display's and the SOC blocks'.
pub(super) fn gc_routes(s: &GcSide<'_>) -> Result<Routes, ModelError> {
    let pl = s.pl;
    let g = s.g;
    let named = |names: &[&str]| -> Vec<Reg> {
        pl.gfxhub_regs
            .all
            .iter()
            .filter(|r| names.contains(&r.name))
            .copied()
            .collect()
    };
    let mes_regs = named(&[
        "GRBM_GFX_CNTL",
        "CP_MES_CNTL",
        "CP_MES_GP3_LO",
        "CP_MES_PRGRM_CNTR_START",
        "CP_MES_PRGRM_CNTR_START_HI",
    ]);
    let mp0_all = match pl.mp0.version.triple() {
        (13, 0, 0) => barebell::regs::mp_13_0_0::ALL,
        _ => barebell::regs::mp_14_0_2::ALL,
    };
    // The hub's registers are its VM and MC blocks; `gfxhub_regs.all` is
    // the whole GC list.
    let hub_own: Vec<Reg> = pl
        .gfxhub_regs
        .all
        .iter()
        .filter(|r| {
            ["GCVM_", "GCMC_", "GCUTCL2_", "GCL2"]
                .iter()
                .any(|p| r.name.starts_with(p))
        })
        .copied()
        .collect();
    let boot_regs: BTreeSet<usize> = crate::discovery::BOOT_REGS.into_iter().collect();
    let rlc = RlcStatus::for_generation(g).ok_or(not_implemented("the RLC status registers", g))?;
    let psp_gc = offsets(&[rlc.bootload_status, rlc.cp_stat], &pl.gc.bases);
    let mec: Arc<dyn RegisterBus + Send + Sync> = s.mec.clone();
    Ok(alloc::vec![
        (offsets(&mes_regs, &pl.gc.bases), mec.clone()),
        (boot_regs, s.window.clone()),
        (psp_gc, s.psp.clone()),
        (nbio_offsets(pl, &s.nbio), s.nbio.clone()),
        (
            hub_offsets(pl.mmhub_regs.all, pl.mmhub_regs, &pl.mmhub.bases),
            s.mmhub.clone(),
        ),
        (
            hub_offsets(&hub_own, pl.gfxhub_regs, &pl.gc.bases),
            s.gfxhub.clone(),
        ),
        (offsets(gc_all(g)?, &pl.gc.bases), mec.clone()),
        // The whole HQD window (`CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI`,
        // `struct v11_compute_mqd` dwords 128..=183), banked per slot by
        // the MEC model, including registers no table here names.
        (s.mec.window_offsets(), mec),
        (offsets(mp0_all, &pl.mp0.bases), s.psp.clone()),
    ])
}

/// Issue 15: the SOC blocks tinygrad's AM drives (SMU, IH, SDMA, clock
/// gating and scratch, S2A), on the PSP's state, wired to the GC side:
/// what a mode-1 reset returns to power-on, the IH's inputs, the
/// doorbell path to the MEC.
pub(super) fn soc(
    clock: &SimClock,
    d: &PartIps<'_>,
    part: &Part,
    files: Files<'_>,
    s: &GcSide<'_>,
    fb_regs: Vec<FbReg>,
    memory: &HostMemory,
) -> Result<Arc<SocBlocks>, ModelError> {
    // What else a mode-1 reset returns to power-on (`SmuHooks`): the CP
    // (MEC, MES pipes, every HQD), both hubs' contexts and VMID0 (then
    // the FB location the IFWI programs again, *model convention*: the
    // same values as at power-on), the NBIO's doorbell apertures.
    let gpu_reset: Box<dyn Fn() + Send + Sync> = {
        let (mec, mm, gfx, nb) = (
            s.mec.clone(),
            s.mmhub.clone(),
            s.gfxhub.clone(),
            s.nbio.clone(),
        );
        Box::new(move || {
            mec.reset();
            mm.reset();
            gfx.reset();
            for (hub, r, v) in &fb_regs {
                hub.set_device_reg(*r, *v);
            }
            nb.reset();
        })
    };
    let soc = Arc::new(super::soc_blocks(
        clock,
        d,
        part.generation,
        part,
        files,
        &s.psp,
        gpu_reset,
    )?);
    // Issue 20: the IH writes its ring as the OSSSYS client of the MMHUB;
    // the hubs' UTCL2 faults and the SQ's wave errors raise IV entries in
    // it.
    soc.ih
        .connect(mc_over(&s.mmhub, crate::ih::CID_OSSSYS, memory));
    for (hub, mm) in [(&s.gfxhub, false), (&s.mmhub, true)] {
        let ih = soc.ih.clone();
        hub.set_interrupt(crate::hub::InterruptLine(Box::new(move |f| {
            ih.raise(crate::ih::IvEntry::vm_fault(mm, &f));
        })));
    }
    let ih = soc.ih.clone();
    s.mec.set_sq_line(Box::new(move |slot, e| {
        ih.raise(crate::ih::IvEntry::sq_error(slot, &e));
    }));
    let ih = soc.ih.clone();
    s.mec.set_eop_line(Box::new(move |slot, context| {
        ih.raise(crate::ih::IvEntry::cp_eop(slot, context));
    }));
    // Queue doorbells reach the MEC only through BAR2, the NBIO's doorbell
    // aperture and the S2A routing to the GC (entries 0 and 3). A dword
    // S2A entry 2 claims for SDMA (issue 19) goes there, not to the MEC.
    let (route, s2a) = (s.nbio.clone(), soc.s2a.clone());
    s.mec.set_doorbell_bridge(Box::new(move |dword, value| {
        if sdma_claims(s2a.entry(2), dword) {
            return false;
        }
        let entries = [s2a.entry(0), s2a.entry(3)];
        route.route_gc_doorbell(dword, value, entries) == crate::nbio::DoorbellOutcome::Rang
    }));
    Ok(soc)
}

/// What no block claims on a GC 11 / GC 12 part: logged by name (and in
/// strict mode refused) by the unknown-register log, then kept in the
/// MEC model's flat storage.
struct MecRest {
    mec: Arc<Mec>,
    unknown: crate::unknown::UnknownRegisters,
}

impl RegisterBus for MecRest {
    fn read32(&self, off: usize) -> u32 {
        if self.unknown.refuse(off, None) {
            0
        } else {
            self.mec.read32(off)
        }
    }
    fn write32(&self, off: usize, v: u32) {
        if !self.unknown.refuse(off, Some(v)) {
            self.mec.write32(off, v)
        }
    }
}

/// BAR5's router over `routes` (earlier routes win over later ones),
/// with the MEC model as catch-all, and the RSMU index/data pair that
/// reaches offsets past the BAR.
pub(super) fn router(
    s: &GcSide<'_>,
    d: &PartIps<'_>,
    soc: &Arc<SocBlocks>,
    routes: Routes,
) -> Result<(Router, (usize, usize)), ModelError> {
    let pl = s.pl;
    let (grbm_soft_reset, spi_queue_reset) = match s.g {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(not_implemented("the GC reset registers", s.g));
        }
        Generation::Gfx11 => (
            crate::socregs::gc_11_0_0::GRBM_SOFT_RESET,
            crate::socregs::gc_11_0_0::SPI_COMPUTE_QUEUE_RESET,
        ),
        Generation::Gfx12 => (
            crate::socregs::gc_12_0_0::GRBM_SOFT_RESET,
            crate::socregs::gc_12_0_0::SPI_COMPUTE_QUEUE_RESET,
        ),
    };
    let at = |r: Reg, bases| {
        r.byte_offset(bases)
            .ok_or(ModelError::Register { name: r.name })
    };
    let rest: Bus = Arc::new(MecRest {
        mec: s.mec.clone(),
        unknown: crate::unknown::UnknownRegisters::new(d, soc.log.clone()),
    });
    let mut router = Router::new(rest);
    for (set, to) in routes.iter().rev() {
        router.claim(set.iter().copied(), to);
    }
    // Issue 20: the CP reset registers the power block stores, which the
    // MEC model acts on (`GRBM_SOFT_RESET`, `SPI_COMPUTE_QUEUE_RESET`);
    // and a mode-1 reset through the SMU's mailbox returns the CP to its
    // reset state too.
    let cp_reset = (
        at(grbm_soft_reset, &pl.gc.bases)?,
        at(spi_queue_reset, &pl.gc.bases)?,
    );
    let (mec, smu, smu_offsets) = (s.mec.clone(), soc.smu.clone(), soc.smu.offsets());
    let mode1_seen = AtomicUsize::new(0);
    router.tap(Box::new(move |off, v| {
        if off == cp_reset.0 {
            mec.grbm_soft_reset(v);
        } else if off == cp_reset.1 {
            mec.spi_queue_reset(v);
        } else if smu_offsets.contains(&off) {
            let n = smu
                .events()
                .iter()
                .filter(|e| matches!(e, crate::smu::SmuEvent::Mode1Reset))
                .count();
            if mode1_seen.swap(n, Ordering::Relaxed) != n {
                // Model convention: a mode-1 reset resets the whole ASIC
                // (`amdgpu_device_mode1_reset()` re-inits every block), so
                // the compute CP returns to what a CP soft reset leaves.
                mec.hard_reset();
            }
        }
    }));
    let rsmu = &pl.nbio_regs;
    let index = at(rsmu.rsmu_index, &pl.nbif.bases)?;
    let data = at(rsmu.rsmu_data, &pl.nbif.bases)?;
    Ok((router, (index, data)))
}

/// The MES model's view of the part: its API version and what it checks
/// SET_HW_RSRC and ADD_QUEUE against.
pub(super) fn mes(part: &Part, pl: &Placement) -> Result<(MesApiVersion, MesInfo), ModelError> {
    let g = part.generation;
    let api = match g {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(not_implemented("MES (GC 9.4.x has none)", g));
        }
        Generation::Gfx11 => MesApiVersion::V11,
        Generation::Gfx12 => MesApiVersion::V12,
    };
    let ctx1_cntl = gc_all(g)?
        .iter()
        .find(|r| r.name == "GCVM_CONTEXT1_CNTL")
        .and_then(|r| r.byte_offset(&pl.gc.bases))
        .ok_or(ModelError::Register {
            name: "GCVM_CONTEXT1_CNTL",
        })?;
    Ok((api, MesInfo::of(&part.firmware.desc, ctx1_cntl)))
}

/// Writes the discovery table where the IFWI leaves it, at VRAM size
/// − 64 KiB (`amdgpu_discovery.c`: `DISCOVERY_TMR_OFFSET`), when the
/// VRAM backing reaches that far: a driver with a large BAR0 reads it
/// there (tinygrad's `AMDev._run_discovery`).
pub(super) fn place_discovery(part: &Part, memory: &HostMemory, table: &[u8]) {
    let vram = u64::from(part.firmware.vram_mib) << 20;
    let Some(at) = vram.checked_sub(64 << 10) else {
        return;
    };
    let end = at + table.len() as u64;
    if end > memory.vram_len as u64 {
        return;
    }
    let at = at as usize;
    // SAFETY: `at..end` lies inside the VRAM backing (checked above),
    // which the device owns; nothing else runs on the device yet
    // (called from `new`).
    unsafe {
        core::ptr::copy_nonoverlapping(table.as_ptr(), memory.vram.as_ptr().add(at), table.len());
    }
}
