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
//! 2. [`start`]: the start-of-day state (clean, left by another driver,
//!    left by barebell, malformed) read from the device, then a mode-1
//!    reset through the SMU (`amdgpu_device_mode1_reset()`), a partial
//!    re-init (tinygrad's `partial_boot`: the psp step skipped), or
//!    nothing;
//! 3. [`nbio`]: HDP flush remap, doorbell and self-ring apertures
//!    (`soc21_common_hw_init()`), then registers past BAR5 through the
//!    RSMU index/data pair (`amdgpu_device_indirect_rreg()`);
//! 4. [`gmc`]: FB location, GART placement (`amdgpu_gmc_gart_location()`),
//!    VMID0 tables in VRAM, PSP buffers in GTT, the TMR, MMHUB init and
//!    its TLB flush (`gmc_v11_0_hw_init()` / `gmc_v12_0_hw_init()`);
//! 5. [`ih`]: interrupt ring 0 in GTT, polled (`ih_v6_0_hw_init()`);
//! 6. [`psp`]: bootloader components, sOS, the GPCOM ring, LOAD_TOC, TMR,
//!    LOAD_IP_FW for every GFX ucode, AUTOLOAD_RLC (`psp_hw_start()`,
//!    `psp_load_non_psp_fw()`);
//! 7. [`gfx`] (rlc): the RLC autoload wait, the MEC program counters,
//!    GFXHUB init and flush, the MEC started (`gfx_v11_0_hw_init()`);
//! 8. with a mapping other than `direct`, [`gfx`] (mes): MES pipes started
//!    (`mes_v11_0_enable()`);
//! 9. [`rings`]: the KIQ and the MES scheduler ring, SET_HW_RSRC
//!    (`mes_v11_0_hw_init()` / `mes_v12_0_hw_init()`);
//! 10. [`queue`]: one AQL user queue mapped by MES ADD_QUEUE, KIQ
//!     MAP_QUEUES or direct HQD load, and a first packet through it.
//!
//! After discovery, [`blocks::choose`] picks one block per IP from the
//! versions found (GFX and GMC by GC, PSP by MP0, SDMA by SDMA0), and the
//! steps call them: no step matches on a generation.
//!
//! Steps report through a [`Sink`], never by printing. Errors are one
//! type, [`BringupError`] (`{ step, kind, teardown }`).
//!
//! Every exit tears the device down in reverse ([`teardown`]): an error
//! at any step runs the teardown before [`run`] returns it (the report
//! rides in the error), a [`Sink::cancelled`] caller gets
//! [`ErrorKind::Interrupted`] and the same teardown, and a successful
//! bring-up is torn down by [`Gpu::shutdown`].

#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod blocks;
pub mod bus;
pub mod discovery;
pub mod error;
pub mod firmware;
pub mod gfx;
pub mod gmc;
pub mod ih;
pub mod nbio;
pub mod process_vm;
pub mod psp;
pub mod queue;
pub mod recover;
pub mod rings;
pub mod sdma;
pub mod sink;
pub mod start;
pub mod teardown;
pub mod usermem;

pub use barebell::platform::Platform;
pub use error::{BringupError, ErrorKind, Outcome, Stage, TeardownReport};
#[cfg(feature = "std")]
pub use firmware::FirmwareDir;
pub use firmware::{FirmwareError, FirmwareSet, FirmwareSource};
pub use queue::{Mapping, UserQueue};
pub use sink::{Quiet, Sink, Step};
pub use usermem::{UserMemory, UserMemoryError};

use crate::bus::Bus;
use crate::error::{At, ResultAt};
use alloc::vec::Vec;
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
    /// Where that VRAM is mapped ([`gmc::UserVramVa`]).
    pub user_vram_va: gmc::UserVramVa,
    /// Process page tables kept free for buffers mapped after the
    /// bring-up ([`Gpu::map_process`]); 0 by default.
    pub spare_tables: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            until: Step::Queue,
            mapping: None,
            user_memory: usermem::DEFAULT_BYTES,
            user_vram: 0,
            user_vram_va: gmc::UserVramVa::Fixed,
            spare_tables: 0,
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
    /// The IP blocks the discovered versions select ([`blocks::choose`]),
    /// chosen once after discovery; the steps and the teardown call them.
    pub blocks: blocks::Blocks,
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
    /// What the queue step left of the ring area's driver part (GPU VA =
    /// host address in VMID0 only: MQDs, the rings the driver drives),
    /// for queues made after the bring-up ([`sdma`]).
    pub ring_area: Option<barebell::mem::DeviceArena<'p>>,
    /// What the queue step left of the ring area's user part (GPU VA =
    /// host address in VMID0 and the process tables: a user queue's
    /// ring, pointers, EOP buffer, signals).
    pub user_rings: Option<barebell::mem::DeviceArena<'p>>,
    /// Interrupt ring 0 (after [`Step::Ih`]).
    pub ih: Option<barebell::ih::IhRing<'p>>,
    /// The GFXHUB's register table and the process tables' root.
    pub gfxhub: Option<&'static barebell::regs::hub::HubRegs>,
    pub process_root: Option<u64>,
    /// The process tables after the queue step, for buffers mapped later
    /// ([`Gpu::map_process`]).
    process_tables: Option<barebell::gmc::pagetable::TableArena<'p>>,
    /// What the start step found and did (absent if it did not run).
    pub start: Option<start::StartReport>,
    /// The last step that completed.
    pub reached: Step,
    /// The last step that was begun (it may have failed half-way): what
    /// the teardown undoes.
    pub entered: Step,
    /// Whether the MES step was begun (never with the direct mapping).
    mes_started: bool,
    /// Whether an SDMA queue was opened ([`sdma::open`] may have
    /// unhalted engines); the teardown halts them.
    sdma_started: bool,
    /// Set when the teardown ran, so that dropping the `Gpu` without a
    /// [`Gpu::shutdown`] (a panic unwinding, an early return) still tears
    /// the device down, once.
    torn_down: bool,
    /// The XCCs' KIQs (GC 9.4.3's block) while no user queue holds them (a
    /// bring-up stopped after the rings step, or a queue step that failed
    /// before mapping); the teardown takes them down.
    xcc_kiqs: Vec<gfx::gfx_v9_4_3::xcc::XccKiqClient<'p>>,
    sink: &'p dyn Sink,
}

impl<'p> Gpu<'p> {
    /// The device memory for user work (see [`usermem`]); `None` before
    /// the gmc step.
    pub fn user_memory(&mut self) -> Option<&mut UserMemory<'p>> {
        self.user.as_mut()
    }

    /// The VM faults the GFXHUB and the MMHUB have latched
    /// (`GCVM_L2_PROTECTION_FAULT_STATUS` and its MMHUB twin, decoded as
    /// `gmc_v11_0_process_interrupt()` prints them), or none before the
    /// gmc step set the hubs up.
    pub fn latched_faults(
        &self,
    ) -> Result<Vec<barebell::gmc::hub::VmFault>, barebell::gmc::hub::HubError> {
        self.blocks.gmc.latched_faults(self)
    }

    /// Every interrupt the IH wrote since the last call, decoded (VM
    /// faults with their address, VMID and hub; SQ errors with their
    /// kind, VMID and queue); none before the ih step ran.
    pub fn poll_interrupts(&mut self) -> Result<Vec<barebell::ih::Interrupt>, BringupError> {
        let mut out = Vec::new();
        if let Some(ring) = self.ih.as_mut() {
            ring.poll(&self.bus, |i| out.push(i)).at(Step::Ih)?;
        }
        Ok(out)
    }

    /// Waits up to `bound_ns` (platform time) for at least one interrupt,
    /// pausing on the platform between looks.
    pub fn wait_interrupts(
        &mut self,
        bound_ns: u64,
    ) -> Result<Vec<barebell::ih::Interrupt>, BringupError> {
        let mut out = Vec::new();
        let p = self.platform;
        match self.ih.as_mut() {
            Some(ring) => {
                ring.wait(&self.bus, p.clock(), bound_ns, &mut || p.pause(), |i| {
                    out.push(i)
                })
                .at(Step::Ih)?;
            }
            None => {
                return Err(ErrorKind::Ih(barebell::ih::IhError::Timeout { bound_ns }))
                    .at(Step::Ih);
            }
        }
        Ok(out)
    }

    /// Tears the device down in reverse order ([`teardown`]): the user
    /// queue unmapped, MES and the MEC halted, the PSP ring destroyed,
    /// the doorbell apertures closed, bus mastering cleared, the user
    /// memory dropped. Every stage runs even when an earlier one failed;
    /// the report says what each did.
    pub fn shutdown(mut self) -> TeardownReport {
        let sink = self.sink;
        teardown::run(&mut self, sink)
    }

    /// Lets the device go with no teardown, as a process killed mid-run
    /// would: everything stays running and points at memory the caller
    /// still owns. For simulating such a run (what the next bring-up
    /// finds, `model-host`'s start states) and for inspecting a brought-up
    /// model afterwards; a driver wants [`Gpu::shutdown`], which dropping
    /// a `Gpu` also runs.
    pub fn abandon(mut self) {
        self.torn_down = true;
    }
}

/// The guard: a `Gpu` dropped without [`Gpu::shutdown`] (a panic
/// unwinding through its owner, an early `?` return) tears the device
/// down here, before the owner's DMA memory can go back, so nothing the
/// device still points at is freed under it. The stages report to the
/// bring-up's sink as usual.
impl Drop for Gpu<'_> {
    fn drop(&mut self) {
        if self.torn_down {
            return;
        }
        let sink = self.sink;
        sink.step(
            Step::Teardown,
            format_args!(
                "the device was let go without a shutdown (a panic or an early return): tearing it down"
            ),
        );
        let _ = teardown::run(self, sink);
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
    // `amdgpu_pci_probe()` → `pci_set_master()` before the device is
    // touched; the teardown clears it last. A platform that cannot write
    // PCI_COMMAND left it as it found it (the CLI's VFIO and sysfs
    // targets set it when they open the device).
    platform.set_bus_master(true);
    // tinygrad's `AMDev.__init__` starts with `_disable_aspm()` (ASPM
    // Control cleared in the GPU's Link Control) before any BAR access:
    // with L1 on across retimers, register reads come back as all ones.
    // Linux leaves ASPM to the PCI core's policy; barebell follows
    // tinygrad's silicon lesson. Done again after a mode-1 reset.
    let aspm = platform.disable_aspm();
    let cancelled = |st: Step| -> Result<(), BringupError> {
        if sink.cancelled() {
            Err(ErrorKind::Interrupted.at(st))
        } else {
            Ok(())
        }
    };
    // 1. discovery
    let ips = match cancelled(Step::Discovery).and_then(|()| discovery::run(platform, sink)) {
        Ok(ips) => ips,
        Err(e) => return Err(e.with_teardown(teardown::before_discovery(platform, sink))),
    };
    sink.discovered(&ips.all);
    sink.step(
        Step::Discovery,
        format_args!(
            "PCIe ASPM {} before the first register access",
            if aspm {
                "disabled (Link Control ASPM Control = 0)"
            } else {
                "left as the platform has it (no config-space access)"
            }
        ),
    );
    let blocks = match blocks::choose(&ips) {
        Ok(b) => b,
        Err(e) => {
            return Err(e
                .at(Step::Discovery)
                .with_teardown(teardown::before_discovery(platform, sink)));
        }
    };
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
        blocks,
        memory: None,
        queue: None,
        user: None,
        user_vram: None,
        ring_area: None,
        user_rings: None,
        ih: None,
        gfxhub: None,
        process_root: None,
        process_tables: None,
        start: None,
        reached: Step::Discovery,
        entered: Step::Discovery,
        mes_started: false,
        sdma_started: false,
        torn_down: false,
        xcc_kiqs: Vec::new(),
        sink,
    };
    match steps(&mut gpu, fw, opts, sink) {
        Ok(()) => {
            // tinygrad's end of boot: the signature and "initialized"
            // once the firmware is in place (the rlc step ran), so that
            // the next run may re-init partially after this one's
            // teardown (which clears SCRATCH_REG6).
            if gpu.reached >= Step::Rlc {
                let g = gpu.ips.generation;
                match start::write_signature(
                    &gpu.bus,
                    &start::gc_bases(&gpu.ips),
                    g,
                    Some(start::SIGNATURE),
                    1,
                ) {
                    Ok(()) => sink.step(
                        gpu.reached,
                        format_args!(
                            "signature: SCRATCH_REG7 = {:#010x}, SCRATCH_REG6 = 1 (running)",
                            start::SIGNATURE
                        ),
                    ),
                    Err(e) => {
                        let report = gpu.shutdown();
                        return Err(e.at(Step::Rlc).with_teardown(report));
                    }
                }
            }
            Ok(gpu)
        }
        Err(e) => {
            let report = gpu.shutdown();
            Err(e.with_teardown(report))
        }
    }
}

/// Steps 2 to 9, recording in `gpu` how far they got.
fn steps<'p>(
    gpu: &mut Gpu<'p>,
    fw: &dyn FirmwareSource,
    opts: &Options,
    sink: &'p dyn Sink,
) -> Result<(), BringupError> {
    if opts.stops_after(Step::Discovery) {
        return Ok(());
    }
    check_mapping(gpu, opts)?;
    // 2. the start-of-day state
    enter(gpu, sink, Step::Start)?;
    let start = start::run(gpu, sink)?;
    gpu.start = Some(start);
    gpu.reached = Step::Start;
    if opts.stops_after(Step::Start) {
        return Ok(());
    }
    // 3. nbio
    enter(gpu, sink, Step::Nbio)?;
    let nbio = nbio::run(gpu, sink)?;
    gpu.reached = Step::Nbio;
    if opts.stops_after(Step::Nbio) {
        return Ok(());
    }
    // 4. gmc
    enter(gpu, sink, Step::Gmc)?;
    let mut mem = gmc::run(
        gpu,
        &nbio,
        opts.user_memory,
        (opts.user_vram, opts.user_vram_va, opts.spare_tables),
        sink,
    )?;
    gpu.memory = Some(mem.report());
    gpu.user = mem.take_user_memory();
    gpu.user_vram = mem.take_user_vram();
    gpu.gfxhub = mem.hubs.map(|h| h.gfxhub);
    gpu.process_root = Some(mem.process.root());
    gpu.reached = Step::Gmc;
    if opts.stops_after(Step::Gmc) {
        return Ok(());
    }
    // 5. ih
    enter(gpu, sink, Step::Ih)?;
    gpu.ih = Some(ih::run(gpu, &mut mem, sink)?);
    gpu.reached = Step::Ih;
    if opts.stops_after(Step::Ih) {
        return Ok(());
    }
    // 6. psp
    enter(gpu, sink, Step::Psp)?;
    let set = psp_step(gpu, &mut mem, start.action, fw, sink)?;
    gpu.reached = Step::Psp;
    if opts.stops_after(Step::Psp) {
        return Ok(());
    }
    // 7. rlc, GFXHUB
    enter(gpu, sink, Step::Rlc)?;
    gpu.blocks.gfx.rlc(gpu, &mem, &nbio, &set, fw, opts, sink)?;
    gpu.reached = Step::Rlc;
    let Some(mapping) = opts.mapping else {
        return Ok(());
    };
    if opts.stops_after(Step::Rlc) {
        return Ok(());
    }
    // 8. the schedulers, 9. the rings, 10. the user queue, by the GC
    // version's block. `direct` needs no scheduler: tinygrad's AM driver
    // loads its one compute queue straight into MEC pipe 0 queue 0 with
    // no KIQ and no MES running, so the best-proven path is not gated
    // behind the least-proven one.
    let area = mem.take_ring_area();
    let uarea = mem.take_user_rings();
    let r = gpu
        .blocks
        .gfx
        .queue_steps(gpu, &mem, area, uarea, &set, fw, mapping, opts, sink);
    gpu.process_tables = Some(mem.into_process_tables());
    r
}

/// Enters step `st` in `gpu`, unless the sink asks to stop.
pub(crate) fn enter(gpu: &mut Gpu<'_>, sink: &dyn Sink, st: Step) -> Result<(), BringupError> {
    if sink.cancelled() {
        return Err(ErrorKind::Interrupted.at(st));
    }
    gpu.entered = st;
    Ok(())
}

/// Refuses a mapping the part's scheduler does not offer before the
/// device is touched (the GC block's [`gfx::GfxBlock::mappings`]): GC
/// 9.4.3 has no MES (KFD's CPSCH runs the HWS on the MEC); gfx11/gfx12
/// have MES and no HWS.
fn check_mapping(gpu: &Gpu<'_>, opts: &Options) -> Result<(), BringupError> {
    let gfx = gpu.blocks.gfx;
    match opts.mapping {
        Some(m) if !gfx.mappings().contains(&m) => {
            Err(gfx.refuse(m, gpu.ips.gc.version.triple())).at(Step::Start)
        }
        _ => Ok(()),
    }
}

/// Step 6: psp, unless the firmware barebell's earlier run loaded is in
/// place (tinygrad's partial boot skips its PSP init the same way).
fn psp_step(
    gpu: &Gpu<'_>,
    mem: &mut gmc::Memory<'_>,
    action: start::Action,
    fw: &dyn FirmwareSource,
    sink: &dyn Sink,
) -> Result<FirmwareSet, BringupError> {
    if action == start::Action::PartialReinit {
        let set = psp::firmware_set(gpu)?;
        sink.step(
            Step::Psp,
            format_args!(
                "skipped: sOS, PMFW and the RLC autoload's images are in place from barebell's earlier run (partial re-init)"
            ),
        );
        Ok(set)
    } else {
        psp::run(gpu, mem, fw, sink)
    }
}
