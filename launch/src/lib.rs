//! barebell-launch: kernels on a device the one bring-up brought up, the
//! model GPU (`VirtualGpu`) or a GPU through VFIO or sysfs alike: only
//! the [`Platform`](barebell::platform::Platform) under the
//! [`Gpu`] differs.
//!
//! ```text
//! let gpu = barebell_bringup::run(platform, &firmware, &options, &sink)?;
//! let mut l = Launcher::new(gpu)?;             // the mapped queue, user memory
//! let code = l.load(&code_object_bytes)?;      // into user memory
//! l.launch(&code, "vadd", &args, &geometry)?;  // kernargs, packet, doorbell
//! l.wait(DISPATCH_BOUND_NS, &NoWatch)?;        // completion signal, bounded
//! let report = l.shutdown();                   // the device torn down
//! ```
//!
//! Code objects, kernargs, buffers and queue scratch go into the
//! bring-up's user memory ([`barebell_bringup::usermem`]): DMA-region
//! pages mapped at GPU VA = host address in the process page tables the
//! user queue's VMID walks, so the CP reads them through that VMID. The
//! dispatch goes onto the user queue the bring-up mapped; the wait pauses
//! on the platform between looks (on the model, the pause is where the CP
//! runs).
//!
//! `no_std` + `alloc` (loading a code object allocates its tables); the
//! submit itself is `barebell_kernel::launch`, which does not.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;

mod error;
pub mod scratch;
pub mod wait;

pub use error::LaunchError;
pub use wait::{NoWatch, Watch};

use alloc::string::ToString;
use barebell::mem::DmaView;
use barebell_bringup::{Gpu, TeardownReport, UserMemory, UserQueue};
use barebell_kernel::launch::private_segment_size;
use barebell_kernel::scratch::{ScratchPart, ScratchPlan};
use barebell_kernel::{
    Arg, CodeObject, DeviceImage, Geometry, KernargBuffer, Kernel, LaunchContext, LoadedCode, Part,
};

/// Bound on the wait for one dispatch's completion, platform time.
pub const DISPATCH_BOUND_NS: u64 = 2_000_000_000;
/// Bound on the submit's wait for ring space.
pub const SUBMIT_BOUND_NS: u64 = 1_000_000_000;

/// The code-object part of a brought-up device, from the GC version
/// discovery read: the same answer on the model (whose discovery table
/// says 11.0.0, 12.0.1 or 9.4.3; 9.4.2 from Aldebaran's fixed list) as on
/// a GPU. GC 9.4.3 is mi300x with 8
/// live XCCs and mi308x with 4 (the XCC count discovery's `xcc_mask`
/// gives; the mi308x layout is the model's). Other GC versions and XCC
/// counts are refused: no other part is described to the loader.
pub fn code_part(gpu: &Gpu<'_>) -> Result<Part, LaunchError> {
    let gc = gpu.ips.gc.version.triple();
    let xccs = gpu.ips.topology.num_xcc();
    match (gc, xccs) {
        ((11, 0, 0), _) => Ok(Part::NAVI31),
        ((12, 0, 1), _) => Ok(Part::NAVI48),
        ((9, 4, 3), 8) => Ok(Part::MI300X),
        ((9, 4, 3), 4) => Ok(Part::MI308X),
        ((9, 4, 2), _) => Ok(Part::MI210),
        _ => Err(LaunchError::UnknownPart { gc, xccs }),
    }
}

/// Parses `bytes` as a code object, checks it fits `part` and loads it
/// into the bytes `alloc(len, align)` gives (their address is the device
/// address).
pub fn load_with<'m>(
    part: &Part,
    bytes: &[u8],
    alloc: impl FnOnce(usize, usize) -> Result<DmaView<'m>, LaunchError>,
) -> Result<LoadedCode, LaunchError> {
    let co = CodeObject::parse(bytes).map_err(LaunchError::CodeObject)?;
    co.check(part).map_err(LaunchError::CodeObject)?;
    let too_large = LaunchError::TooLarge {
        what: "code object image",
    };
    let size = usize::try_from(co.image_size).map_err(|_| too_large.clone())?;
    let align = usize::try_from(co.image_align.max(256)).map_err(|_| too_large)?;
    let view = alloc(size, align)?;
    let device_address = view.address();
    // SAFETY: fresh bytes no dispatch has been given yet; the loader
    // fills them before any kernel in them runs, and the device only
    // reads code.
    let host = unsafe { view.into_host_bytes() };
    co.load(
        part,
        DeviceImage {
            host,
            device_address,
        },
    )
    .map_err(LaunchError::CodeObject)
}

/// A brought-up device ready for kernels: its mapped user queue, its
/// user memory and the code-object part discovery found.
pub struct Launcher<'p> {
    gpu: Gpu<'p>,
    part: Part,
    /// The sizes queue scratch is planned from; `None` refuses kernels
    /// with private memory ([`LaunchError::NoScratchPart`]).
    scratch: Option<ScratchPart>,
}

impl core::fmt::Debug for Launcher<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Launcher")
            .field("part", &self.part)
            .field("queue", &self.gpu.queue)
            .finish_non_exhaustive()
    }
}

impl<'p> Launcher<'p> {
    /// Takes a device brought up to its queue step. One that cannot be
    /// used (no queue, no user memory, a part the loader does not know)
    /// is torn down, and the error comes back with the teardown's report.
    pub fn new(gpu: Gpu<'p>) -> Result<Self, (LaunchError, TeardownReport)> {
        let part = match (code_part(&gpu), &gpu.queue, &gpu.user) {
            (Ok(p), Some(_), Some(_)) => p,
            (Err(e), _, _) => return Err((e, gpu.shutdown())),
            (_, None, _) => return Err((LaunchError::NoQueue, gpu.shutdown())),
            (_, _, None) => return Err((LaunchError::NoUserMemory, gpu.shutdown())),
        };
        Ok(Launcher {
            gpu,
            part,
            scratch: None,
        })
    }

    /// Plans queue scratch from `part`'s CU and shader-engine counts for
    /// kernels that need private memory.
    pub fn with_scratch(mut self, part: ScratchPart) -> Self {
        self.scratch = Some(part);
        self
    }

    /// The code-object part discovery found.
    pub fn part(&self) -> Part {
        self.part
    }

    /// The brought-up device (for SDMA queues, user VRAM, introspection).
    pub fn gpu(&self) -> &Gpu<'p> {
        &self.gpu
    }

    pub fn gpu_mut(&mut self) -> &mut Gpu<'p> {
        &mut self.gpu
    }

    /// The user queue the bring-up mapped.
    pub fn queue(&self) -> Result<&UserQueue<'p>, LaunchError> {
        self.gpu.queue.as_ref().ok_or(LaunchError::NoQueue)
    }

    fn user(&mut self) -> Result<&mut UserMemory<'p>, LaunchError> {
        self.gpu.user.as_mut().ok_or(LaunchError::NoUserMemory)
    }

    /// `len` zeroed bytes of user memory aligned to `align` (rounded up to
    /// a power of two), as a volatile view (the device may write them);
    /// `what` names them in the error.
    pub fn alloc(
        &mut self,
        len: usize,
        align: usize,
        what: &'static str,
    ) -> Result<DmaView<'p>, LaunchError> {
        let align = align.max(1).next_power_of_two();
        self.user()?
            .alloc(len, align)
            .map_err(|error| LaunchError::Memory { what, error })
    }

    /// Parses, checks and loads a code object into user memory.
    pub fn load(&mut self, bytes: &[u8]) -> Result<LoadedCode, LaunchError> {
        let part = self.part;
        load_with(&part, bytes, |len, align| {
            self.alloc(len, align, "code object")
        })
    }

    /// The launch context of the mapped queue for `kernel`, with queue
    /// scratch from user memory when the kernel needs private memory
    /// (sized as ROCR sizes it, from [`Launcher::with_scratch`]'s counts).
    pub fn context(&mut self, kernel: &Kernel) -> Result<LaunchContext, LaunchError> {
        let descriptor = self.queue()?.queue.memory().descriptor_address();
        let mut ctx = LaunchContext::new(self.part, descriptor);
        let private = private_segment_size(kernel, ctx.stack_bytes);
        if private == 0 {
            return Ok(ctx);
        }
        let sizes = self.scratch.ok_or(LaunchError::NoScratchPart { private })?;
        let plan = ScratchPlan::new(&sizes, private).map_err(LaunchError::Scratch)?;
        let bytes =
            usize::try_from(plan.bytes).map_err(|_| LaunchError::TooLarge { what: "scratch" })?;
        let backing = self
            .user()?
            .alloc(bytes, 256)
            .map_err(|error| LaunchError::ScratchMemory { bytes, error })?
            .address();
        // SAFETY: the `amd_queue_t` of the mapped user queue, in the ring
        // area, which stays mapped while the device lives; its last packet
        // completed, so no dispatch reads these fields now.
        unsafe { scratch::write_queue_scratch(descriptor, &plan, backing) };
        ctx.scratch = Some(plan.grant());
        Ok(ctx)
    }

    /// Launches `kernel` of `code` over `geometry` with `args` on the
    /// mapped queue: kernargs in user memory, queue scratch if the kernel
    /// needs it, the completion signal armed, the packet submitted.
    /// Returns the packet's id; [`Launcher::wait`] waits for it.
    ///
    /// Each launch takes fresh kernargs (and scratch, if needed) from the
    /// user memory, a bump allocator released only by the teardown: for
    /// many launches of one kernel, prepare it once with
    /// [`barebell_kernel::Prepared`] in memory from [`Launcher::alloc`].
    pub fn launch(
        &mut self,
        code: &LoadedCode,
        kernel: &str,
        args: &[Arg<'_>],
        geometry: &Geometry,
    ) -> Result<u64, LaunchError> {
        let k = code.kernel(kernel).map_err(|error| LaunchError::Kernel {
            name: kernel.to_string(),
            error,
        })?;
        let ctx = self.context(k)?;
        self.launch_in(&ctx, k, args, geometry)
    }

    /// [`Launcher::launch`] with a context the caller made (and may reuse).
    pub fn launch_in(
        &mut self,
        ctx: &LaunchContext,
        kernel: &Kernel,
        args: &[Arg<'_>],
        geometry: &Geometry,
    ) -> Result<u64, LaunchError> {
        let len = kernel.meta.kernarg_segment_size.max(16) as usize;
        let align = kernel.meta.kernarg_segment_align.max(16) as usize;
        let view = self.alloc(len, align, "kernargs")?;
        let device_address = view.address();
        // SAFETY: fresh bytes the launch fills before the dispatch that
        // reads them; the device only reads kernargs.
        let host = unsafe { view.into_host_bytes() };
        let mut kernargs = KernargBuffer {
            host,
            device_address,
        };
        let q = self.queue()?;
        let clock = self.gpu.platform.clock();
        barebell_kernel::launch(
            &q.queue,
            ctx,
            kernel,
            geometry,
            args,
            &mut kernargs,
            q.signal,
            clock,
            SUBMIT_BOUND_NS,
        )
        .map(|done| done.packet_id)
        .map_err(LaunchError::Launch)
    }

    /// Waits, at most `bound_ns` of platform time, for the last launch's
    /// completion signal ([`wait::wait`]).
    pub fn wait(&self, bound_ns: u64, watch: &dyn Watch) -> Result<(), LaunchError> {
        let q = self.queue()?;
        wait::wait(self.gpu.platform, q, q.signal, bound_ns, watch)
    }

    /// Tears the device down in reverse (`Gpu::shutdown`: the queue
    /// unmapped, MES and the MEC halted, the PSP ring destroyed, the IH
    /// ring disabled, the doorbell apertures closed, bus mastering off,
    /// the memory released).
    pub fn shutdown(self) -> TeardownReport {
        self.gpu.shutdown()
    }
}
