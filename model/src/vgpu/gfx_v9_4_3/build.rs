//! The GC 9.4.3 block models, block by block: each function builds the
//! block models of one kind (per XCC, per AID, per instance) from the
//! part description, in the order [`super::build`] lists them.

use super::{
    MP0_C2PMSG_FIRST, MP0_C2PMSG_LAST, SDMA_FW, SdmaPort9, Unclaimed, Xlate, bases, bases8,
    instances,
};
use crate::SimClock;
use crate::cp::CpModel;
use crate::discovery::{self, IpDesc, VramWindow};
use crate::dma::Dma;
use crate::error::ModelError;
use crate::hub_v9::{self, HubV9Model};
use crate::ih::IhModel;
use crate::mc::{CID_MP0, Mc};
use crate::mec_v9_4_3::MecV943;
use crate::nbio::{NbioIp, NbioModel};
use crate::parts::Part;
use crate::pci_config::PciConfig;
use crate::psp::{PspModel, PspPlacement};
use crate::rlc_mec_v9_4_3::RlcMecV943;
use crate::sdma::{SdmaHooks, SdmaModel};
use crate::smu::SmuModel;
use crate::soc::RefusalLog;
use crate::vgpu::router::{Bus, Router};
use crate::vgpu::{Files, HostMemory};
use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

fn missing(ip: &'static str) -> ModelError {
    ModelError::MissingIp { ip }
}

/// The block versions a gfx9 part's IPs select (Linux's
/// `gmc_v9_0_set_gfxhub_funcs()`/`_set_mmhub_funcs()`, the NBIO, MP0 and
/// MP1 versions), so that one builder serves GC 9.4.2 and 9.4.3.
#[derive(Debug, Clone, Copy)]
pub(super) struct Flavour {
    pub gfxhub: hub_v9::V9Offsets,
    pub mmhub: hub_v9::V9Offsets,
    pub nbio: NbioIp,
    pub mp1: crate::smu::Mp1,
    pub mp0: (u8, u8, u8),
    pub gc: (u8, u8, u8),
}

impl Flavour {
    pub(super) fn of(i: &Instances) -> Result<Self, ModelError> {
        let unsupported = |what: &'static str, version| ModelError::Unsupported { what, version };
        let gc = i.xccs[0].version;
        let gfxhub = match gc {
            (9, 4, 3) => hub_v9::GFXHUB_1_2,
            (9, 4, 2) => hub_v9::GFXHUB_1_0,
            v => return Err(unsupported("gfx9 GFXHUB model of GC", v)),
        };
        let mm = i.aids[0].version;
        let mmhub = match mm {
            (1, 8, 0) => hub_v9::MMHUB_1_8,
            (9, 4, 2) => hub_v9::MMHUB_1_7,
            v => return Err(unsupported("gfx9 MMHUB model of MMHUB", v)),
        };
        let nb = i.nbifs[0].version;
        let nbio = NbioIp::from_version(nb).ok_or(unsupported("NBIO model", nb))?;
        let mp1 = crate::smu::Mp1::from_version(i.mp1.version)
            .ok_or(unsupported("SMU model of MP1", i.mp1.version))?;
        Ok(Flavour {
            gfxhub,
            mmhub,
            nbio,
            mp1,
            mp0: i.mp0.version,
            gc,
        })
    }

    /// GC 9.4.3 (MI300): SDMA 4.4.2 models, the PMFW scratch word.
    pub(super) fn is_9_4_3(&self) -> bool {
        self.gc == (9, 4, 3)
    }

    /// The MMHUB (by AID) SDMA instance `n` translates through: its AID's
    /// on GC 9.4.3 (`sdma_v4_4_2_sw_init()`: `AMDGPU_MMHUB0(aid_id)`),
    /// the one MMHUB on Aldebaran (`sdma_v4_0_sw_init()`:
    /// `AMDGPU_MMHUB0(0)`).
    pub(super) fn sdma_hub(&self, n: usize) -> usize {
        if self.is_9_4_3() {
            n / super::SDMA_PER_AID
        } else {
            0
        }
    }

    /// The SDMA engines and doorbell plan the HWS maps SDMA queues by:
    /// `aqua_vanjaram_doorbell_index_init()` on GC 9.4.3,
    /// `vega20_doorbell_index_init()` on Aldebaran (`soc15.c` uses it for
    /// every soc15 part but Vega10).
    pub(super) fn sdma_engines(&self, engines: usize) -> crate::hws::SdmaEngines {
        let engines = u8::try_from(engines).unwrap_or(u8::MAX);
        if self.is_9_4_3() {
            crate::hws::SdmaEngines::aqua_vanjaram(engines)
        } else {
            crate::hws::SdmaEngines::vega20(engines)
        }
    }
}

/// The IP instances the blocks sit on, from the part description.
pub(super) struct Instances {
    pub xccs: Vec<&'static IpDesc>,
    pub aids: Vec<&'static IpDesc>,
    pub nbifs: Vec<&'static IpDesc>,
    pub sdma: Vec<&'static IpDesc>,
    pub mp0: &'static IpDesc,
    pub mp1: &'static IpDesc,
    pub osssys: &'static IpDesc,
}

pub(super) fn instances_of(part: &Part) -> Result<Instances, ModelError> {
    let first = |hw: u16, name: &'static str| -> Result<&'static IpDesc, ModelError> {
        instances(part, hw).first().copied().ok_or(missing(name))
    };
    let i = Instances {
        xccs: instances(part, discovery::GC_HWID),
        aids: instances(part, discovery::MMHUB_HWID),
        nbifs: instances(part, discovery::NBIF_HWID),
        sdma: instances(part, discovery::SDMA0_HWID),
        mp0: first(discovery::MP0_HWID, "MP0")?,
        mp1: first(discovery::MP1_HWID, "MP1")?,
        osssys: first(discovery::OSSSYS_HWID, "OSSSYS")?,
    };
    if i.xccs.is_empty() {
        return Err(missing("GC"));
    }
    if i.aids.is_empty() {
        return Err(missing("MMHUB"));
    }
    if i.nbifs.is_empty() {
        return Err(missing("NBIO"));
    }
    Ok(i)
}

/// Every XCC's GFXHUB v1.2 and every AID's MMHUB 1.8, with what the IFWI
/// leaves in every hub's FB location and offset
/// (`mmhub_v1_8_get_fb_location()` reads BASE and TOP in 16 MiB units;
/// `_get_mc_fb_offset()` OFFSET): the part's FB start, its last 16 MiB,
/// and the physical address of VRAM offset 0.
///
/// A hive member ([`Part::xgmi`]) also finds its place in
/// `MC_VM_XGMI_LFB_CNTL` (`PF_LFB_REGION` = its node, `PF_MAX_REGION` =
/// the last node) and `MC_VM_XGMI_LFB_SIZE` (the segment, 16 MiB units),
/// which `gfxhub_v1_2_get_xgmi_info()` reads on XCC 0 and tinygrad's
/// `AM_GMC.init_sw` reads as `regGCMC_VM_XGMI_LFB_CNTL/SIZE`; and its FB
/// spans every node's segment, as `mmhub_v1_8_get_fb_location()` keeps it
/// for `fb_start/fb_end` while `amdgpu_gmc_vram_location()` puts this
/// GPU's VRAM at `fb_start + node * segment` (*model convention*: the
/// same values on every hub of the GPU; Linux reads XCC 0's and AID 0's).
pub(super) fn hubs(
    part: &Part,
    i: &Instances,
    f: &Flavour,
) -> (Vec<Arc<HubV9Model>>, Vec<Arc<HubV9Model>>) {
    let gfxhubs: Vec<Arc<HubV9Model>> = i
        .xccs
        .iter()
        .map(|x| Arc::new(HubV9Model::new(f.gfxhub, bases8(x)[0])))
        .collect();
    let mmhubs: Vec<Arc<HubV9Model>> = i
        .aids
        .iter()
        .map(|a| Arc::new(HubV9Model::new(f.mmhub, bases8(a)[0])))
        .collect();
    let vram_bytes = u64::from(part.firmware.vram_mib) << 20;
    let fb_bytes = match part.xgmi {
        Some(x) => u64::from(x.nodes) * x.segment,
        None => vram_bytes,
    };
    let fb_top = (part.fb_start + fb_bytes - 1) >> 24;
    for h in gfxhubs.iter().chain(&mmhubs) {
        let o = h.offsets;
        h.set_device_reg(o.fb_location_base, (part.fb_start >> 24) as u32);
        h.set_device_reg(o.fb_location_top, fb_top as u32);
        h.set_device_reg(o.fb_offset, (part.fb_offset >> 24) as u32);
        if let Some(x) = part.xgmi {
            let cntl = u32::from(x.node) & hub_v9::PF_LFB_REGION
                | (u32::from(x.nodes.saturating_sub(1)) << hub_v9::PF_MAX_REGION_SHIFT)
                    & hub_v9::PF_MAX_REGION_MASK;
            h.set_device_reg(o.xgmi_lfb_cntl, cntl);
            h.set_device_reg(
                o.xgmi_lfb_size,
                (x.segment >> 24) as u32 & hub_v9::PF_LFB_SIZE,
            );
        }
    }
    (gfxhubs, mmhubs)
}

/// An MC for a client of `hub` over `memory`'s VRAM and DMA region.
fn mc_over(hub: &Arc<HubV9Model>, client: u16, memory: &HostMemory) -> Mc {
    let mut mc = Mc::new(hub.clone(), client);
    let (vram, vram_len, dma, dma_len) = memory.regions();
    // SAFETY: both ranges belong to `memory`, which the device owns
    // and drops after every model (field order).
    unsafe {
        mc.back_vram(0, vram.as_ptr(), vram_len as u64);
        mc.map_bus(memory.dma_bus, dma.as_ptr(), dma_len as u64);
    }
    mc
}

/// The PSP on MP0 13.0.6 (or 13.0.2): an MMHUB client of AID 0 (`mmhub_v1_8`'s
/// client list names MP0 as on the other hubs; the model uses the same
/// id), expecting the part's firmware.
pub(super) fn psp(
    clock: &SimClock,
    files: Files<'_>,
    (i, f): (&Instances, &Flavour),
    mmhub0: &Arc<HubV9Model>,
    memory: &HostMemory,
    pmfw: u32,
) -> Result<Arc<PspModel>, ModelError> {
    let (expect, regs) = match f.mp0 {
        (13, 0, 6) => {
            // The sOS set the bootloader takes follows the PMFW the SMU
            // runs: the auxiliary one below 85.115.0
            // (`psp_v13_0_is_aux_sos_load_required()`).
            let aux = pmfw < crate::psp::mp13_0_6::PRIMARY_SOS_MIN_PMFW;
            (
                crate::psp::mp13_0_6::expect(&mut |name| files.read(name), aux)?,
                barebell::regs::mp::PspRegs::MP0_13_0_6,
            )
        }
        (13, 0, 2) => (
            crate::psp::mp13_0_2::expect(&mut |name| files.read(name))?,
            barebell::regs::mp::PspRegs::MP0_13_0_2,
        ),
        v => {
            return Err(ModelError::Unsupported {
                what: "PSP model of MP0",
                version: v,
            });
        }
    };
    Ok(Arc::new(PspModel::new(
        clock,
        PspPlacement {
            regs,
            mp0_bases: bases(i.mp0),
            gc: None,
            gc_bases: bases(i.xccs[0]),
        },
        expect,
        Arc::new(mc_over(mmhub0, CID_MP0, memory)),
    )))
}

/// NBIO 7.9, one per AID (`nbio_v7_9_init_registers()` writes each AID's
/// fence), or Aldebaran's one NBIO 7.4.4; the first owns the HDP hole of
/// the register BAR.
pub(super) fn nbios(clock: &SimClock, i: &Instances, ip: NbioIp) -> Vec<Arc<NbioModel>> {
    i.nbifs
        .iter()
        .map(|n| Arc::new(NbioModel::new(clock, ip, bases(n), ip.hole())))
        .collect()
}

/// The IH on OSSSYS 4.4.2, writing its ring as the OSSSYS client of AID
/// 0's MMHUB.
pub(super) fn ih(
    clock: &SimClock,
    i: &Instances,
    log: &Arc<RefusalLog>,
    mmhub0: &Arc<HubV9Model>,
    memory: &HostMemory,
) -> Result<Arc<IhModel>, ModelError> {
    let o = i.osssys;
    let ih = Arc::new(
        IhModel::new(clock, o.version, &bases(o), log.clone()).ok_or(ModelError::Unsupported {
            what: "IH model of OSSSYS",
            version: o.version,
        })?,
    );
    ih.connect(mc_over(mmhub0, crate::ih::CID_OSSSYS, memory));
    Ok(ih)
}

/// SDMA 4.4.2: every instance the part lists, on its own bases. Each runs
/// only once the PSP put its microcode in place: `psp_load_non_psp_fw()`
/// loads SDMA0..3, one per SDMA of an AID (the model's `mp13_0_6`
/// expectations), so instance `i` needs `GFX_FW_TYPE_SDMA<i % 4>`.
pub(super) fn sdma(
    clock: &SimClock,
    (i, f): (&Instances, &Flavour),
    psp: &PspModel,
    log: &Arc<RefusalLog>,
) -> Result<Vec<Arc<SdmaModel>>, ModelError> {
    let mut out = Vec::new();
    for (n, ip) in i.sdma.iter().enumerate() {
        let loaded = psp.loaded();
        let hooks = |kind: u32| SdmaHooks {
            code_loaded: Box::new(move || loaded.has(kind)),
        };
        let m = if f.is_9_4_3() {
            let kind = SDMA_FW[n % SDMA_FW.len()];
            SdmaModel::new_v4_4_2(clock, &bases(ip), hooks(kind), log.clone())
        } else {
            // Aldebaran: `psp_get_fw_type()` sends `AMDGPU_UCODE_ID_SDMA0..4`
            // as `GFX_FW_TYPE_SDMA0..4`.
            let kind = *SDMA_FW_ALDEBARAN
                .get(n)
                .ok_or(missing("a PSP firmware type for this SDMA instance"))?;
            SdmaModel::new_v4_4_0(
                clock,
                &sdma_v4_0_base(n, &bases(ip)),
                hooks(kind),
                log.clone(),
            )
        }
        .ok_or(ModelError::Unsupported {
            what: "SDMA 4.4 model",
            version: ip.version,
        })?;
        out.push(Arc::new(m));
    }
    Ok(out)
}

/// The PSP firmware type of Aldebaran's five SDMA instances
/// (`psp_get_fw_type()`: `AMDGPU_UCODE_ID_SDMA0..4` →
/// `GFX_FW_TYPE_SDMA0..4`).
const SDMA_FW_ALDEBARAN: [u32; 5] = [
    crate::psp::iface::fw::SDMA0,
    crate::psp::iface::fw::SDMA1,
    crate::psp::iface::fw::SDMA2,
    crate::psp::iface::fw::SDMA3,
    crate::psp::iface::fw::SDMA4,
];

/// SDMA 4.4.0 instance `n`'s register base, as one segment-0 base:
/// `sdma_v4_0_get_reg_offset()` adds the offset to segment 0 of
/// `SDMA0_HWIP`/`SDMA1_HWIP` for instances 0 and 1, and to segment 1 of
/// `SDMA2_HWIP`..`SDMA7_HWIP` for the rest.
pub(super) fn sdma_v4_0_base(n: usize, b: &barebell::regs::IpBases) -> barebell::regs::IpBases {
    let seg = if n < 2 { 0 } else { 1 };
    barebell::regs::IpBases::new(&[b.0[seg]])
}

/// What a mode-1 reset touches besides the SMU.
pub(super) struct ResetScope {
    pub nbios: Vec<Arc<NbioModel>>,
    pub ih: Arc<IhModel>,
    pub sdma: Vec<Arc<SdmaModel>>,
    pub bus_master: Arc<AtomicBool>,
    pub pci: Arc<PciConfig>,
    pub psp: Arc<PspModel>,
    /// The RLC/MEC start registers and the CP of every XCC.
    pub rlc_mec: Arc<RlcMecV943>,
    pub mec: Arc<MecV943>,
    /// The part's place in an XGMI hive ([`Part::xgmi`]).
    pub hive: Option<crate::parts::Xgmi>,
}

/// The SMU on MP1 13.0.6. Its PMFW is the boot firmware's (MI300's PSP
/// loads no SMU image), so it runs from power-on. A mode-1 reset returns
/// the PSP (to its bootloader: sOS gone, `C2PMSG_81` 0, which
/// `amdgpu_device_mode1_reset()` then waits on), the NBIOs, the IH, the
/// SDMA engines and PCI config to power-on (model convention, as for the
/// gfx11 parts).
pub(super) fn smu(
    clock: &SimClock,
    (i, f): (&Instances, &Flavour),
    r: ResetScope,
    log: Arc<RefusalLog>,
    pmfw: u32,
) -> Result<Arc<SmuModel>, ModelError> {
    let bm = r.bus_master.clone();
    let hive_log = log.clone();
    let hooks = crate::smu::SmuHooks {
        firmware_loaded: Box::new(|| true),
        mode1_reset: Box::new(move || {
            // *Model rule*: a hive member is never reset alone. Linux
            // resets every node of a hive together (`amdgpu_device_init()`
            // sets `xgmi.pending_reset`, "Pending hive reset."; recovery's
            // `amdgpu_do_asic_reset()` resets "all XGMI hive nodes ASAP"
            // for the links' negotiation), and tinygrad refuses
            // (`AMDev.__init__`: "Malformed state. Use
            // extra/amdpci/hive_reset.py to reset the hive"), having seen
            // one GPU's reset take the fabric down. The model has no
            // fabric to lose: it logs the refusal and resets this GPU.
            if let Some(x) = r.hive.filter(|x| x.nodes > 1) {
                hive_log.push(
                    "SMU",
                    alloc::format!(
                        "mode-1 reset of XGMI node {} of {} alone: a hive is reset as a whole \
                         (amdgpu_do_asic_reset() resets every node together; tinygrad refuses a \
                         hive member)",
                        x.node,
                        x.nodes
                    ),
                );
            }
            for n in &r.nbios {
                n.reset();
            }
            r.ih.reset();
            for e in &r.sdma {
                e.reset();
            }
            r.pci.reset();
            r.psp.mode1_reset();
            r.rlc_mec.reset();
            r.mec.reset();
        }),
        bus_master: Box::new(move || bm.load(Ordering::Relaxed)),
    };
    let mp1 = i.mp1;
    Ok(Arc::new(
        SmuModel::new(
            clock,
            f.mp1,
            &bases(mp1),
            pmfw,
            // Aldebaran's DPM messages are not modelled (refused): no tables.
            if f.is_9_4_3() {
                crate::smu::DpmTables::mi300()
            } else {
                crate::smu::DpmTables(Vec::new())
            },
            hooks,
            log,
        )
        .ok_or(ModelError::Unsupported {
            what: "SMU model of MP1",
            version: mp1.version,
        })?,
    ))
}

/// The CP of every XCC on one gfx942 CP model, reading the DMA region
/// and VRAM by host address once [`Xlate`] translated; returns the block,
/// the translator, and the DMA chunks' bus addresses.
pub(super) fn mec(
    clock: &SimClock,
    seed: crate::Seed,
    i: &Instances,
    rlc_mec: &Arc<RlcMecV943>,
    gfxhubs: &[Arc<HubV9Model>],
    memory: &HostMemory,
    chunk_bus: &[u64],
) -> (Arc<MecV943>, Arc<Xlate>) {
    let (vram, vram_len, dma, dma_len) = memory.regions();
    let mut cp = CpModel::new(seed);
    // GC 9.4.3's; GC 9.4.2's part sets gfx90a after (`vgpu/gfx_v9_4_3.rs`).
    cp.shader.target = barebell_isa::Target::Gfx942;
    // The registers PM4 packets name (AQL vendor packets' indirect
    // buffers, `crate::cp`): XCC 0's GC segment 0, and AID 0's HDP flush
    // pair, the absolute dwords tinygrad's `memory_barrier` waits on
    // (`BIF_BX_PF0_GPU_HDP_FLUSH_REQ/DONE`, `nbio_7_9_0_offset.h`), as
    // `nbio_v7_9_get_hdp_flush_req_offset()` gives them to Linux.
    let dword = |r: crate::socregs::Reg, ip: Option<&&IpDesc>| {
        ip.and_then(|ip| r.byte_offset(&super::bases(ip)))
            .and_then(|b| u32::try_from(b / 4).ok())
    };
    {
        use crate::socregs::nbio_7_9_0 as n;
        let nbio = i.nbifs.first();
        cp.set_pm4_registers(crate::cp::Pm4Registers {
            gc_seg0: i.xccs.first().map_or(0, |x| super::bases(x).0[0]),
            hdp_flush: dword(n::BIF_BX_PF0_GPU_HDP_FLUSH_REQ, nbio)
                .zip(dword(n::BIF_BX_PF0_GPU_HDP_FLUSH_DONE, nbio)),
        });
    }
    let mut kdma = Dma::default();
    // SAFETY: the DMA region and VRAM backing belong to `memory`, which
    // the device owns and drops after the CP block (field order); the
    // device side reaches them per the device protocol.
    unsafe {
        cp.dma_mut().map(dma.as_ptr() as u64, dma_len as u64);
        cp.dma_mut().map(vram.as_ptr() as u64, vram_len as u64);
        kdma.map(dma.as_ptr() as u64, dma_len as u64);
        kdma.map(vram.as_ptr() as u64, vram_len as u64);
    }
    let xlate = Arc::new(Xlate {
        gfxhubs: gfxhubs.to_vec(),
        backing: crate::vgpu::backing::Backing::new(memory, chunk_bus),
    });
    let mec = Arc::new(MecV943::new(
        clock,
        i.xccs.iter().map(|x| bases8(x)).collect(),
        rlc_mec.clone(),
        cp,
        kdma,
        xlate.clone(),
    ));
    mec.set_aid_mmhubs(
        i.aids.iter().map(|a| bases8(a)[0]).collect(),
        i.xccs.len() / i.aids.len().max(1),
    );
    (mec, xlate)
}

/// Each SDMA engine's port: its AID's MMHUB, the XCCs' translator, the
/// doorbell page the MEC block reads, AID 0's NBIO.
pub(super) fn connect_sdma(
    clock: &SimClock,
    (sdma, f): (&[Arc<SdmaModel>], &Flavour),
    mmhubs: &[Arc<HubV9Model>],
    xlate: &Arc<Xlate>,
    mec: &MecV943,
    (nbio0, ih): (&Arc<NbioModel>, &Arc<crate::ih::IhModel>),
) -> Result<(), ModelError> {
    let (page, page_bytes) = mec.doorbell_page();
    let engines = f.sdma_engines(sdma.len());
    let hdp_flush = mec.cp().pm4_registers().hdp_flush;
    for (n, e) in sdma.iter().enumerate() {
        let hub = mmhubs
            .get(f.sdma_hub(n))
            .ok_or(missing("MMHUB of an SDMA instance's AID"))?
            .clone();
        let aid_prefix = hub.base & !crate::decode::sdma::SRBM_ADDR.mask();
        e.set_port(Arc::new(SdmaPort9 {
            instance: n as u8,
            engines,
            hub,
            xlate: xlate.clone(),
            doorbells: page,
            slots: page_bytes / 8,
            nbio: nbio0.clone(),
            clock: clock.clone(),
            hdp_flush,
            aid_prefix,
            ih: ih.clone(),
            trap: if f.is_9_4_3() {
                crate::ih::IvEntry::sdma_trap_v4_4_2
            } else {
                crate::ih::IvEntry::sdma_trap_v4_0
            },
        }));
    }
    Ok(())
}

/// The blocks BAR5 routes to.
pub(super) struct Routed<'a> {
    pub i: &'a Instances,
    pub gfxhubs: &'a [Arc<HubV9Model>],
    pub mmhubs: &'a [Arc<HubV9Model>],
    pub rlc_mec: &'a Arc<RlcMecV943>,
    pub mec: &'a Arc<MecV943>,
    pub psp: &'a Arc<PspModel>,
    pub nbios: &'a [Arc<NbioModel>],
    pub ih: &'a Arc<IhModel>,
    pub smu: &'a Arc<SmuModel>,
    pub sdma: &'a [Arc<SdmaModel>],
    pub window: &'a Arc<VramWindow>,
    /// What `MP1_PUB_SCRATCH0` reads.
    pub pmfw: u32,
    pub flavour: &'a Flavour,
    /// The part's XCCs and their shader arrays.
    pub xcc: Option<crate::parts::XccCount>,
}

/// The router: byte ranges (the hubs, MP0's C2PMSG block, the HDP hole)
/// and single registers (the rest), the boot registers last so they win.
pub(super) fn router(r: &Routed<'_>, rest: &Arc<Unclaimed>) -> Router {
    let rest: Bus = rest.clone();
    let mut router = Router::new(rest);
    let nb0: Bus = r.nbios[0].clone();
    let hole = r.flavour.nbio.hole();
    router.claim_range(hole..=hole + 4092, nb0);
    for h in r.gfxhubs.iter().chain(r.mmhubs) {
        router.claim_range(h.byte_range(), h.clone());
    }
    let m0 = bases(r.i.mp0).0[0] as usize;
    router.claim_range(
        (m0 + MP0_C2PMSG_FIRST as usize) * 4..=(m0 + MP0_C2PMSG_LAST as usize) * 4,
        r.psp.clone(),
    );
    let mut claim = |offs: &mut dyn Iterator<Item = usize>, to: Bus| router.claim(offs, &to);
    // Registers kept as written (see `stored`), before the blocks that
    // model a register, so a block's claim wins.
    let stored = Arc::new(super::stored::Stored::new(
        &r.i.xccs,
        &r.i.sdma,
        &r.i.nbifs,
        r.flavour.is_9_4_3(),
    ));
    claim(&mut stored.offsets().into_iter(), stored.clone());
    if let Some(count) = r.xcc {
        let arrays = Arc::new(super::shader_arrays::ShaderArrays::new(
            &r.i.xccs,
            count,
            r.flavour.is_9_4_3(),
        ));
        claim(&mut arrays.offsets().into_iter(), arrays.clone());
    }
    claim(&mut r.rlc_mec.offsets().into_iter(), r.rlc_mec.clone());
    claim(&mut r.mec.offsets().into_iter(), r.mec.clone());
    for (n, model) in r.i.nbifs.iter().zip(r.nbios) {
        let b = bases(n);
        let offs = r
            .flavour
            .nbio
            .registers()
            .iter()
            .filter_map(|reg| reg.byte_offset(&b));
        claim(&mut offs.collect::<Vec<_>>().into_iter(), model.clone());
    }
    claim(&mut r.ih.offsets().into_iter(), r.ih.clone());
    claim(&mut r.smu.offsets().into_iter(), r.smu.clone());
    for e in r.sdma {
        claim(&mut e.offsets().into_iter(), e.clone());
    }
    if r.flavour.is_9_4_3() {
        claim(
            &mut [super::MP1_PUB_SCRATCH0].into_iter(),
            Arc::new(super::PubScratch(r.pmfw)),
        );
    }
    // Last: the boot registers the IFWI answers (the VRAM size in the
    // NBIO's RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE, the MM_INDEX window onto
    // the discovery table, MP0's IFWI-done flag) win over the blocks'.
    claim(
        &mut [
            discovery::MM_INDEX,
            discovery::MM_DATA,
            discovery::MM_INDEX_HI,
            discovery::RCC_CONFIG_MEMSIZE,
            discovery::MP0_SMN_C2PMSG_33,
        ]
        .into_iter(),
        r.window.clone(),
    );
    router
}
