//! barebell-bringup: the one bring-up sequence.
//!
//! [`run`] takes a device from power-on state to a mapped user queue,
//! over any [`Platform`]: a GPU through VFIO or sysfs (the CLI's hardware
//! targets), the unikernel's device, or the device model's `VirtualGpu`
//! (the CLI's default target, the tests and the benches). There is no
//! other copy of this order anywhere: the model runs exactly the code a
//! GPU would run, and only the platform differs.
//!
//! The steps, in Linux's IP-block order (`amdgpu_device_ip_init()` →
//! each block's `hw_init`), each citing the Linux function it follows in
//! its module:
//!
//! 1. [`discovery`]: wait for the IFWI, read the IP discovery table at
//!    VRAM size − 64 KiB, resolve every block's register bases
//!    (`amdgpu_discovery_reg_base_init()`);
//! 2. [`nbio`]: HDP flush remap, doorbell and self-ring apertures
//!    (`soc21_common_hw_init()`), then registers past BAR5 through the
//!    RSMU index/data pair (`amdgpu_device_indirect_rreg()`);
//! 3. [`gmc`]: FB location, GART placement (`amdgpu_gmc_gart_location()`),
//!    VMID0 tables in VRAM, PSP buffers in GTT, the TMR, MMHUB init and
//!    its TLB flush (`gmc_v11_0_hw_init()` / `gmc_v12_0_hw_init()`);
//! 4. [`psp`]: bootloader components, sOS, the GPCOM ring, LOAD_TOC, TMR,
//!    LOAD_IP_FW for every GFX ucode, AUTOLOAD_RLC (`psp_hw_start()`,
//!    `psp_load_non_psp_fw()`);
//! 5. [`gfx`] (rlc): the RLC autoload wait, the MEC program counters,
//!    GFXHUB init and flush, the MEC started (`gfx_v11_0_hw_init()`);
//! 6. with a mapping other than `direct`, [`gfx`] (mes): MES pipes started
//!    (`mes_v11_0_enable()`);
//! 7. [`rings`]: the KIQ and the MES scheduler ring, SET_HW_RSRC
//!    (`mes_v11_0_hw_init()` / `mes_v12_0_hw_init()`);
//! 8. [`queue`]: one AQL user queue mapped by MES ADD_QUEUE, KIQ
//!    MAP_QUEUES or direct HQD load, and a first packet through it.
//!
//! Steps report through a [`Sink`], never by printing. Errors are one
//! type, [`BringupError`] (`{ step, kind }`).

#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod bus;
pub mod discovery;
pub mod error;
pub mod firmware;
pub mod gfx;
pub mod gmc;
pub mod nbio;
pub mod psp;
pub mod queue;
pub mod rings;
pub mod sdma;
pub mod sink;
pub mod usermem;

pub use barebell::platform::Platform;
pub use error::{BringupError, ErrorKind};
#[cfg(feature = "std")]
pub use firmware::FirmwareDir;
pub use firmware::{FirmwareError, FirmwareSet, FirmwareSource};
pub use queue::{Mapping, UserQueue};
pub use sink::{Quiet, Sink, Step};
pub use usermem::{UserMemory, UserMemoryError};

use crate::bus::Bus;
use crate::error::ResultAt;
use barebell::aql::DoorbellAperture;

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The last step to run. Steps after [`Step::Rlc`] run only with a
    /// mapping.
    pub until: Step,
    /// How to map the user queue; `None` stops after [`Step::Rlc`].
    pub mapping: Option<Mapping>,
    /// Bytes of the DMA region kept as user memory (whole 4 KiB pages):
    /// code objects, kernargs, buffers and scratch, mapped for the user
    /// queue ([`usermem`]); [`usermem::DEFAULT_BYTES`] by default.
    pub user_memory: usize,
    /// Bytes of VRAM mapped into the process tables for user buffers
    /// (device memory for copies; [`gmc::USER_VRAM_VA`]); 0 by default.
    pub user_vram: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            until: Step::Queue,
            mapping: None,
            user_memory: usermem::DEFAULT_BYTES,
            user_vram: 0,
        }
    }
}

impl Options {
    fn stops_after(&self, s: Step) -> bool {
        self.until == s || (self.mapping.is_none() && s == Step::Rlc)
    }
}

/// A device after the bring-up: what later work (the latency loop,
/// kernel launches, unmapping) needs.
pub struct Gpu<'p> {
    pub platform: &'p dyn Platform,
    /// The register bus every later access goes through (BAR5, the RSMU
    /// pair past it, the trace).
    pub bus: Bus<'p>,
    /// The platform's doorbell aperture (BAR2), which hands out the
    /// rings' and queues' doorbells.
    pub doorbells: DoorbellAperture,
    /// Discovered versions and bases.
    pub ips: discovery::Ips,
    /// The memory layout the gmc step built (absent if it did not run).
    pub memory: Option<gmc::LayoutReport>,
    /// The mapped user queue (with a mapping, after [`Step::Queue`]).
    pub queue: Option<UserQueue<'p>>,
    /// Device memory for user work, mapped in the page tables the user
    /// queue runs in (after [`Step::Gmc`]; see [`usermem`]).
    pub user: Option<UserMemory<'p>>,
    /// VRAM for user buffers, mapped in the process tables (after
    /// [`Step::Gmc`], if [`Options::user_vram`] asked for it).
    pub user_vram: Option<usermem::UserVram<'p>>,
    /// What the queue step left of the ring area (GPU VA = host address
    /// in VMID0 and the process tables), for queues made after the
    /// bring-up ([`sdma`]).
    pub ring_area: Option<barebell::mem::DeviceArena<'p>>,
    /// The GFXHUB's register table and the process tables' root.
    pub gfxhub: Option<&'static barebell::regs::hub::HubRegs>,
    pub process_root: Option<u64>,
    /// The last step that completed.
    pub reached: Step,
}

impl<'p> Gpu<'p> {
    /// The device memory for user work (see [`usermem`]); `None` before
    /// the gmc step.
    pub fn user_memory(&mut self) -> Option<&mut UserMemory<'p>> {
        self.user.as_mut()
    }
}

impl core::fmt::Debug for Gpu<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Gpu")
            .field("platform", &self.platform.name())
            .field("reached", &self.reached)
            .field("memory", &self.memory)
            .field("queue", &self.queue)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

/// Brings `platform` up as far as `opts` says, reporting to `sink`, with
/// firmware from `fw`.
///
/// A platform can be brought up once: its DMA region and VRAM are handed
/// to the device by this call. A second call on the same platform is
/// refused before anything touches the device.
pub fn run<'p>(
    platform: &'p dyn Platform,
    fw: &dyn FirmwareSource,
    opts: &Options,
    sink: &'p dyn Sink,
) -> Result<Gpu<'p>, BringupError> {
    if !platform.claim() {
        return Err(ErrorKind::AlreadyClaimed {
            platform: platform.name().into(),
        })
        .at(Step::Discovery);
    }
    // 1. discovery
    let ips = discovery::run(platform, sink)?;
    let db = platform.doorbells();
    // SAFETY: the platform maps its doorbell aperture, `db.len` bytes
    // valid for aligned 64-bit stores, for as long as it lives (its
    // `unsafe impl`); the doorbells handed out are used by what this call
    // returns, which borrows the platform for 'p.
    let doorbells = unsafe { DoorbellAperture::new(db.host, db.len) };
    let mut gpu = Gpu {
        platform,
        bus: Bus::direct(platform, sink),
        doorbells,
        ips,
        memory: None,
        queue: None,
        user: None,
        user_vram: None,
        ring_area: None,
        gfxhub: None,
        process_root: None,
        reached: Step::Discovery,
    };
    if opts.stops_after(Step::Discovery) {
        return Ok(gpu);
    }
    // 2. nbio
    let nbio = nbio::run(&mut gpu, sink)?;
    gpu.reached = Step::Nbio;
    if opts.stops_after(Step::Nbio) {
        return Ok(gpu);
    }
    // 3. gmc
    let mut mem = gmc::run(&gpu, &nbio, opts.user_memory, opts.user_vram, sink)?;
    gpu.memory = Some(mem.report());
    gpu.user = mem.take_user_memory();
    gpu.user_vram = mem.take_user_vram();
    gpu.gfxhub = Some(mem.gfxhub);
    gpu.process_root = Some(mem.process.root());
    gpu.reached = Step::Gmc;
    if opts.stops_after(Step::Gmc) {
        return Ok(gpu);
    }
    // 4. psp
    let set = psp::run(&gpu, &mut mem, fw, sink)?;
    gpu.reached = Step::Psp;
    if opts.stops_after(Step::Psp) {
        return Ok(gpu);
    }
    // 5. rlc, GFXHUB
    gfx::rlc(&gpu, &mem, &nbio, &set, fw, sink)?;
    gpu.reached = Step::Rlc;
    let Some(mapping) = opts.mapping else {
        return Ok(gpu);
    };
    if opts.stops_after(Step::Rlc) {
        return Ok(gpu);
    }
    // 6. MES start and 7. the rings: `direct` needs neither. tinygrad's
    // AM driver loads its one compute queue straight into MEC pipe 0
    // queue 0 with no KIQ and no MES running, so the best-proven path is
    // not gated behind the least-proven one.
    let mut area = mem.take_ring_area();
    let rings = if mapping == Mapping::Direct {
        for st in [Step::Mes, Step::Rings] {
            sink.step(
                st,
                format_args!("skipped: the direct mapping needs neither MES nor the KIQ"),
            );
            gpu.reached = st;
            if opts.stops_after(st) {
                return Ok(gpu);
            }
        }
        None
    } else {
        let versions = gfx::mes_start(&gpu, &set, fw, sink)?;
        gpu.reached = Step::Mes;
        if opts.stops_after(Step::Mes) {
            return Ok(gpu);
        }
        let rings = rings::run(&gpu, &mut area, versions, sink)?;
        gpu.reached = Step::Rings;
        if opts.stops_after(Step::Rings) {
            return Ok(gpu);
        }
        Some(rings)
    };
    // 8. the user queue
    let q = queue::run(&gpu, &mem, &mut area, rings, mapping, sink)?;
    gpu.queue = Some(q);
    gpu.ring_area = Some(area);
    gpu.reached = Step::Queue;
    Ok(gpu)
}
