//! `barebell bringup`: the named bring-up steps, run against the device
//! model.
//!
//! Steps, in order (each follows the Linux function named):
//! - `discovery`: read the IP discovery table from VRAM through
//!   `MM_INDEX`/`MM_DATA` (`amdgpu_discovery_read_binary_from_mem()`),
//!   parse it and resolve the MP0 and GC register bases
//!   (`amdgpu_discovery_reg_base_init()`);
//! - `nbio`: HDP flush remap, doorbell and self-ring apertures
//!   (`soc21_common_hw_init()`, `nbio_v4_3_remap_hdp_registers()`,
//!   `nbio_v4_3_enable_doorbell_aperture()`), on the NBIO model;
//! - `gmc`: VMID0 page tables in VRAM below the boot region, then GFXHUB
//!   and MMHUB init (`gmc_v11_0_gart_enable()`: GFXHUB 3.0 + MMHUB 3.0.0
//!   on Navi31; `gmc_v12_0_gart_enable()`: GFXHUB 12.0 + MMHUB 4.1.0 on
//!   Navi48) on hub models, which must then translate through the
//!   runtime's tables. They run on their own models, beside the PSP model;
//! - `psp`: bootloader component loads, the GPCOM ring, LOAD_TOC, SMU and
//!   TMR, LOAD_IP_FW for every GFX ucode, AUTOLOAD_RLC (`psp_hw_start()`,
//!   `psp_load_non_psp_fw()`), with the PSP model reaching its buffers
//!   only through the MMHUB's VMID0 (GTT buffers behind the runtime's
//!   tables, MMHUB init by the runtime; see `barebell_model::psp::rig`);
//! - `rlc`: the bounded wait for the RLC autoload
//!   (`gfx_v11_0_wait_for_rlc_autoload_complete()`).
//!
//! - with `--mapping mes|direct|kiq`: MES start, the rings that mapping
//!   needs, one user queue and a dispatch (`bringup_queue`).
//!
//! There is no hardware target:
//! the model is the only target, and nothing here has run on a GPU.

use barebell::bus::trace::{Access, Symbols, TraceBus};
use barebell::discovery::{Discovery, TABLE_BYTES, boot, hw_id, read_from_vram};
use barebell::psp::{self, Image, Psp};
use barebell::regs::{IpBases, Reg};
use barebell_model::discovery::VramWindow;
use barebell_model::psp::rig::{self, PartFirmware};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Discovery,
    Nbio,
    Gmc,
    Psp,
    Rlc,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartName {
    /// A Navi31-class part: GC 11.0.0, MP0 13.0.0.
    Navi31,
    /// A Navi48-class part: GC 12.0.1, MP0 14.0.3.
    Navi48,
}

#[derive(Args, Debug, Clone)]
pub struct BringupArgs {
    /// Stop after this step.
    #[arg(long, value_enum, default_value = "rlc")]
    pub until: Step,
    /// Which model part to bring up.
    #[arg(long, value_enum, default_value = "navi31")]
    pub part: PartName,
    /// Print every register access, with register names.
    #[arg(long)]
    pub trace: bool,
    /// After RLC: start MES, map a user queue this way, run a dispatch and
    /// print `queue ready`.
    #[arg(long, value_enum)]
    mapping: Option<crate::latency_target::MappingMode>,
    /// Where the amdgpu firmware blobs are.
    #[arg(long, default_value = "/lib/firmware/amdgpu")]
    firmware_dir: PathBuf,
    /// The device: the model (default) or a GPU (unverified on hardware).
    #[command(flatten)]
    pub target: crate::hw::TargetArgs,
}

/// The register tables `--trace` resolves names from for the given IP
/// instances, through the runtime's header table (the model and hardware
/// paths share it).
pub(crate) fn symbol_blocks(
    ips: &[&barebell::discovery::IpInfo],
) -> Vec<(&'static [Reg], IpBases)> {
    ips.iter()
        .flat_map(|ip| {
            barebell::regs::registers_for(ip.hw_id, ip.version.triple())
                .iter()
                .map(|t| (*t, ip.bases))
        })
        .collect()
}

pub fn run(args: BringupArgs) -> ExitCode {
    let result = match args.target.hardware() {
        Some(t) => crate::hw::bringup(t, args.until, args.trace, args.mapping, &args.firmware_dir),
        None => bring_up(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barebell bringup: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bring_up(args: &BringupArgs) -> Result<(), String> {
    let part: PartFirmware = match args.part {
        PartName::Navi31 => rig::navi31(),
        PartName::Navi48 => rig::navi48(),
    };
    let mut r = rig::rig(&args.firmware_dir, &part, |_| {})?;
    println!("part {} (device model)", part.desc.name);

    // discovery: read the table through the MM_INDEX/MM_DATA window at
    // VRAM size - 64 KiB, then parse it.
    let vram_mib = match args.part {
        // RX 7900 XTX and RX 9070 XT board sizes.
        PartName::Navi31 => 24 * 1024,
        PartName::Navi48 => 16 * 1024,
    };
    let window = VramWindow::new(r.clock, vram_mib, r.table.clone());
    let boot_blocks = [(boot::ALL, IpBases::default())];
    let trace = args.trace;
    let traced = TraceBus::new(
        &window,
        Symbols {
            blocks: &boot_blocks,
        },
        move |a: Access| {
            if trace {
                println!("  {a}");
            }
        },
    );
    let mut table = vec![0u8; TABLE_BYTES];
    let pos = read_from_vram(&traced, r.clock, 2_000_000_000, &mut table)
        .map_err(|e| format!("discovery read: {e:?}"))?;
    let d = Discovery::parse(&table).map_err(|e| format!("discovery: {e}"))?;
    println!("step discovery: table read at VRAM {pos:#x} ({vram_mib} MiB board)");
    let mp0 = d.ip(hw_id::MP0, 0).ok_or("no MP0")?;
    let gc = d.ip(hw_id::GC, 0).ok_or("no GC")?;
    println!(
        "step discovery: {} IP instances; GC {:?} bases {:x?}; MP0 {:?} bases {:x?}",
        d.ip_count(),
        gc.version.triple(),
        &gc.bases.0[..usize::from(gc.num_bases).min(8)],
        mp0.version.triple(),
        &mp0.bases.0[..usize::from(mp0.num_bases).min(8)],
    );
    if args.until == Step::Discovery {
        return Ok(());
    }
    // Kept alive for the steps below: VMID0 on both hubs.
    let gmc = nbio_and_gmc(args, r.clock, &d, vram_mib)?;
    if matches!(args.until, Step::Nbio | Step::Gmc) {
        return Ok(());
    }
    // The PSP is an MMHUB client: its buffers go into the gmc step's
    // VMID0 and its accesses through that step's MMHUB model.
    let gmc = Box::leak(Box::new(gmc.ok_or("psp: no gmc state")?));
    let tables = barebell_model::psp::rig::TableMemory {
        device: gmc.tables_at.offset,
        host: gmc.tables_host,
        len: gmc.tables_at.size,
    };
    // SAFETY: the gmc step's tables are leaked and `gmc` is leaked, so
    // both outlive the model; `device` is the VRAM offset its PDEs use.
    unsafe {
        rig::behind(
            &mut r,
            &gmc.mmhub.model,
            tables,
            &mut gmc.vmid0,
            &mut gmc.vram,
            rig::Layout::default(),
        )
    }
    .map_err(|e| format!("psp: {e}"))?;

    let blocks = symbol_blocks(&[&mp0, &gc]);
    let symbols = Symbols { blocks: &blocks };
    let bus = TraceBus::new(r.model, symbols, move |a: Access| {
        if trace {
            println!("  {a}");
        }
    });
    let bufs = r.bufs.take().ok_or("buffers already taken")?;
    // A command that times out reports the fault the MMHUB latched.
    let g = r.gtt;
    println!(
        "step psp: behind the gmc step's {} VMID0: GTT fw_pri {:#x} ring {:#x} cmd {:#x} fence {:#x} (GART, SYSTEM|SNOOPED PTEs); TMR MC {:#x} (VRAM)",
        r.hub_regs.name, g.fw_pri.va, g.ring.va, g.cmd.va, g.fence.va, r.tmr.mc_addr
    );
    let mut p = Psp::new(&bus, r.clock, r.regs, &mp0.bases, bufs)
        .map_err(|e| format!("psp: {e}"))?
        .with_fault_hub(r.fault_hub());
    let mut images = vec![
        Image {
            fw_type: 0,
            bytes: &[]
        };
        64
    ];
    let n = psp::gfx_images(&r.blobs, &mut images).map_err(|e| format!("psp: {e}"))?;
    let report = psp::load_firmware(
        &mut p,
        r.plan,
        &r.sos,
        Some(r.smu),
        &images[..n],
        Some(r.tmr),
    )
    .map_err(|e| match (e, p.vm_fault()) {
        // A fence timeout already carries the fault.
        (psp::PspError::FenceTimeout { .. }, _) | (_, None) => format!("psp: {e}"),
        (_, Some(f)) => format!("psp: {e}; MMHUB latched: {f}"),
    })?;
    println!(
        "step psp: {} bootloader components, TMR size {:#x} (model value), {} LOAD_IP_FW, AUTOLOAD_RLC sent",
        report.components, report.tmr_size, report.ip_fw_loads
    );
    if args.until == Step::Psp {
        return Ok(());
    }
    p.wait_rlc_autoload(r.gc_regs, &gc.bases)
        .map_err(|e| format!("rlc: {e}"))?;
    println!("step rlc: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle");
    let refused = r.model.refusals();
    if !refused.is_empty() {
        return Err(format!("the model refused requests: {refused:?}"));
    }
    let faults = r.mc.faults();
    if !faults.is_empty() {
        return Err(format!("the PSP's memory accesses faulted: {faults:?}"));
    }
    if let Some(mode) = args.mapping {
        let generation = match args.part {
            PartName::Navi31 => barebell::ip::Generation::Gfx11,
            PartName::Navi48 => barebell::ip::Generation::Gfx12,
        };
        crate::bringup_queue::run(generation, mode, 1)?;
    }
    Ok(())
}

/// The `nbio` and `gmc` steps, each in its own module. Returns the `gmc`
/// step's hubs, VRAM allocator and VMID0 tables (`None` when stopping
/// after `nbio`), which later steps keep using.
fn nbio_and_gmc<'c>(
    args: &BringupArgs,
    clock: &'c barebell_model::SimClock,
    d: &Discovery<'_>,
    vram_mib: u32,
) -> Result<Option<crate::bringup_gmc::GmcState<'c>>, String> {
    crate::bringup_nbio::step(args, clock, d)?;
    if args.until == Step::Nbio {
        return Ok(None);
    }
    crate::bringup_gmc::step(args, clock, d, vram_mib).map(Some)
}
