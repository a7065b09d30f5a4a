//! GC 9.4.2 (Aldebaran: MI210, MI250): the GFX block of a one-GC part
//! without MES, as Linux's `gfx_v9_0.c` drives it.
//!
//! - the rlc step ([`rlc`]): `gfx_v9_0_hw_init()` with PSP loading up to
//!   the MEC ([`barebell::gfx::start_v9_0`]); the MEC is released there
//!   only when no KIQ follows;
//! - the rings and queue steps: GC 9.4.3's machinery
//!   ([`crate::gfx::gfx_v9_4_3::queue`]) with GC 9.4.2's description
//!   ([`crate::gfx::gfx_v9_4_3::xcc::GC_9_4_2`]: one GC, vega20's
//!   doorbells, `init_mqd()`, GFXHUB v1.0, the KIQ loaded into the MEC
//!   still halted from reset, `gfx_v9_0_cp_resume()`), mapped `hws`,
//!   `kiq` or `direct`;
//! - the teardown's KIQ down and MEC halt
//!   (`gfx_v9_0_cp_compute_enable(false)`) and GFXHUB v1.0 off.

use super::gfx_v9_4_3::xcc::{GC_9_4_2, kiqs_down};
use crate::error::{BringupError, ErrorKind, Outcome, ResultAt};
use crate::firmware::{self, FirmwareError, FirmwareSet, FirmwareSource};
use crate::gmc::Memory;
use crate::queue::Mapping;
use crate::sink::{Sink, Step};
use crate::{Gpu, Options};
use barebell::discovery::aldebaran::more_hw_id;
use barebell::gfx::start_v9_0 as start;
use barebell::gmc::hub::v9;
use barebell::mem::DeviceArena;
use barebell::nbio::Nbio;
use barebell::regs::gc_9_4_2 as r;

/// GC 9.4.2's block.
#[derive(Debug)]
pub struct GfxV9_0;

impl super::GfxBlock for GfxV9_0 {
    fn name(&self) -> &'static str {
        "GC 9.4.2"
    }

    fn mappings(&self) -> &'static [Mapping] {
        &Mapping::GFX94
    }

    fn refuse(&self, _: Mapping, _: (u8, u8, u8)) -> ErrorKind {
        ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
            "MES (GC 9.4.2 schedules with the HWS on the MEC: --mapping hws)",
            barebell::ip::Generation::Gfx90a,
        ))
    }

    fn rlc(
        &self,
        gpu: &Gpu<'_>,
        _: &Memory<'_>,
        _: &Nbio,
        set: &FirmwareSet,
        fw: &dyn FirmwareSource,
        opts: &Options,
        sink: &dyn Sink,
    ) -> Result<(), BringupError> {
        rlc(gpu, set, fw, super::gfx_v9_4_3::kiqs_follow(opts), sink)
    }

    fn queue_steps<'p>(
        &self,
        gpu: &mut Gpu<'p>,
        mem: &Memory<'p>,
        area: DeviceArena<'p>,
        uarea: DeviceArena<'p>,
        _: &FirmwareSet,
        _: &dyn FirmwareSource,
        mapping: Mapping,
        opts: &Options,
        sink: &'p dyn Sink,
    ) -> Result<(), BringupError> {
        super::gfx_v9_4_3::rings_and_queue(GC_9_4_2, gpu, mem, area, uarea, mapping, opts, sink)
    }

    fn flush_process_tlbs(&self, gpu: &Gpu<'_>) -> Result<(), BringupError> {
        super::gfx_v9_4_3::flush_kfd_vmids(GC_9_4_2, gpu)
    }

    /// The KIQ no queue took down (`gfx_v9_0_kiq_fini_register()`), then
    /// `gfx_v9_0_cp_compute_enable(false)`: `MEC_ME1_HALT | MEC_ME2_HALT`,
    /// then 50 µs.
    fn halt_mec(&self, gpu: &mut Gpu<'_>) -> Outcome {
        let kiqs = core::mem::take(&mut gpu.xcc_kiqs);
        let n_kiqs = kiqs.len();
        let gc = gpu.bus.block(gpu.ips.gc.bases);
        if !kiqs.is_empty()
            && let Err(e) = kiqs_down(&[gc], kiqs, gpu.platform.clock())
        {
            return Outcome::Failed(ErrorKind::Xcc(e));
        }
        let halt = barebell::regs::gc_9_4_3_rlc::CpMecCntl::new()
            .with_mec_me1_halt(true)
            .with_mec_me2_halt(true)
            .into_bits();
        if let Err(e) = gc.write(r::CP_MEC_CNTL, halt) {
            return Outcome::Failed(ErrorKind::Register(e));
        }
        barebell::time::delay(gpu.platform.clock(), start::DELAY_NS);
        match gc.read(r::CP_MEC_CNTL) {
            Ok(barebell::bus::ALL_ONES) => Outcome::Failed(ErrorKind::DeviceGone {
                register: "CP_MEC_CNTL",
            }),
            Ok(_) => Outcome::Done(alloc::format!(
                "{}CP_MEC_CNTL = {halt:#010x} (MEC_ME1/ME2 halted)",
                if n_kiqs > 0 {
                    "the KIQ taken down; "
                } else {
                    ""
                }
            )),
            Err(e) => Outcome::Failed(ErrorKind::Register(e)),
        }
    }

    /// `gfxhub_v1_0_gart_disable()`; the gmc step programmed it.
    fn gfxhub_off(&self, gpu: &Gpu<'_>) -> Outcome {
        if gpu.entered >= Step::Gmc {
            crate::gmc::gmc_v9_0::hubs_off_v9(
                &gpu.bus,
                &[gpu.ips.gc],
                &v9::GFXHUB_1_0,
                "GC instance",
            )
        } else {
            Outcome::NotNeeded("the GFXHUB was never programmed")
        }
    }
}

/// The rlc step on GC 9.4.2: `gfx_v9_0_hw_init()` with PSP loading, as
/// far as a running MEC ([`barebell::gfx::start_v9_0`]: golden settings
/// for the die SMUIO names, the constants, the RLC restarted, the MEC
/// released).
pub fn rlc(
    gpu: &Gpu<'_>,
    set: &FirmwareSet,
    fw: &dyn FirmwareSource,
    kiq_follows: bool,
    sink: &dyn Sink,
) -> Result<(), BringupError> {
    let s = Step::Rlc;
    let name = set
        .gfx
        .iter()
        .find(|n| n.ends_with("_rlc.bin"))
        .ok_or(FirmwareError::Lacks {
            name: "aldebaran_rlc.bin".into(),
            what: "an RLC blob in the firmware set",
        })
        .at(s)?;
    let bytes = fw.load(name).at(s)?;
    let rlc = firmware::parse_named(name, &bytes).at(s)?;
    // `adev->gfx.rlc.is_rlc_v2_1` (`amdgpu_gfx_rlc_init_microcode()`).
    let v2_1 = rlc.container.header_version() >= (2, 1);
    let gc = gpu.bus.block(gpu.ips.gc.bases);
    let clock = gpu.platform.clock();
    // smuio_v13_0_get_die_id(): SMUIO_MCM_CONFIG.DIE_ID.
    let smuio = gpu
        .ips
        .all
        .iter()
        .find(|i| i.hw_id == more_hw_id::SMUIO && i.instance == 0)
        .ok_or(ErrorKind::MissingIp { ip: "SMUIO" })
        .at(s)?;
    let mcm = gpu.bus.block(smuio.bases).read(r::SMUIO_MCM_CONFIG).at(s)?;
    if mcm == barebell::bus::ALL_ONES {
        return Err(ErrorKind::DeviceGone {
            register: r::SMUIO_MCM_CONFIG.name,
        })
        .at(s);
    }
    let die = mcm & r::DIE_ID_MASK;
    start::golden(&gc, die).at(s)?;
    start::constants(&gc).at(s)?;
    start::rlc_resume(&gc, clock, v2_1).at(s)?;
    if !kiq_follows {
        start::mec_start(&gc, clock).at(s)?;
    }
    sink.step(
        s,
        format_args!(
            "GC 9.4.2 (die {die}): golden settings (GB_ADDR_CONFIG {:#x}, TCP channel steering of die {die}); SH_MEM_CONFIG {:#x} on VMIDs 0-{}, SH_MEM_BASES 0 (VMID 0) and {:#x}, KFD VMIDs {}-15 {:#x}/{:#x} with GDS/GWS/OA cleared; RLC stopped and restarted (PSP-loaded), CGCG off, {}, SPM VMID 0xf; {}",
            start::GOLDEN[0].2,
            start::vmid_sh_mem_config().into_bits(),
            start::FIRST_KFD_VMID - 1,
            barebell::gfx::init_v9_4_3::vmid_sh_mem_bases().into_bits(),
            start::FIRST_KFD_VMID,
            start::compute_sh_mem_config().into_bits(),
            start::compute_sh_mem_bases().into_bits(),
            if v2_1 {
                "save/restore machine on (RLC v2.1 firmware)"
            } else {
                "no save/restore machine (RLC firmware before v2.1)"
            },
            if kiq_follows {
                "MEC left halted from reset for the rings step, which loads the KIQ, then releases it (gfx_v9_0_cp_resume())"
            } else {
                "MEC released (CP_MEC_CNTL 0)"
            },
        ),
    );
    Ok(())
}

/// `GRBM_GFX_INDEX` broadcasting to every SE, SH and instance: what
/// `gfx_v9_0_select_se_sh(adev, ~0, ~0, ~0)` writes.
pub const GRBM_GFX_INDEX_BROADCAST: u32 = r::GRBM_GFX_INDEX_SE_BROADCAST_WRITES_MASK
    | r::GRBM_GFX_INDEX_SH_BROADCAST_WRITES_MASK
    | r::GRBM_GFX_INDEX_INSTANCE_BROADCAST_WRITES_MASK;

/// The active CUs of a GC 9.4.2 whose arrays are `shader_engines` ×
/// `sh_per_se` × `cu_per_sh` (`gfx.config.max_*`, from the VBIOS
/// `gfx_info`), counted as `gfx_v9_0_get_cu_info()` counts them: each
/// SE/SH selected through `GRBM_GFX_INDEX` (instance broadcast), the CUs
/// neither `CC_GC_SHADER_ARRAY_CONFIG` nor `GC_USER_SHADER_ARRAY_CONFIG`
/// marks inactive counted below `cu_per_sh`, then the index set back to
/// broadcast. Linux refuses more than 16 arrays (`-EINVAL`); so does
/// this, and any GC but 9.4.2 (its registers sit elsewhere).
pub fn active_cus(
    gpu: &Gpu<'_>,
    shader_engines: u32,
    sh_per_se: u32,
    cu_per_sh: u32,
) -> Result<u32, ErrorKind> {
    let v = gpu.ips.gc.version;
    let version = (v.major, v.minor, v.revision);
    if version != (9, 4, 2) {
        return Err(ErrorKind::Unsupported {
            what: "counting CUs through GC 9.4.2's shader-array registers on GC",
            version,
        });
    }
    if shader_engines.saturating_mul(sh_per_se) > 16 || cu_per_sh > 16 {
        return Err(ErrorKind::Unsupported {
            what: "more than 16 shader arrays or CUs per array (gfx_v9_0_get_cu_info() refuses them) on GC",
            version,
        });
    }
    let gc = gpu.bus.block(gpu.ips.gc.bases);
    let slots = (1u32 << cu_per_sh) - 1;
    let mut active = 0;
    for se in 0..shader_engines {
        for sh in 0..sh_per_se {
            let index = r::GRBM_GFX_INDEX_INSTANCE_BROADCAST_WRITES_MASK
                | se << r::GRBM_GFX_INDEX_SE_INDEX_SHIFT
                | sh << r::GRBM_GFX_INDEX_SH_INDEX_SHIFT;
            gc.write(r::GRBM_GFX_INDEX, index)
                .map_err(ErrorKind::Register)?;
            let off = gc
                .read(r::CC_GC_SHADER_ARRAY_CONFIG)
                .map_err(ErrorKind::Register)?
                | gc.read(r::GC_USER_SHADER_ARRAY_CONFIG)
                    .map_err(ErrorKind::Register)?;
            active += (!(off >> r::INACTIVE_CUS_SHIFT) & slots).count_ones();
        }
    }
    gc.write(r::GRBM_GFX_INDEX, GRBM_GFX_INDEX_BROADCAST)
        .map_err(ErrorKind::Register)?;
    Ok(active)
}
