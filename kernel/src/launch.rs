//! HIP-style kernel launch: one call checks the arguments against the
//! metadata, writes the kernarg segment, builds the AQL kernel-dispatch
//! packet and submits it; it returns a completion handle.
//!
//! Meaning of the numbers follows `hipLaunchKernel`: `grid` counts
//! workgroups (`gridDim`), `block` work-items per workgroup (`blockDim`).
//! The packet's fields follow CLR's `roc::VirtualGPU::submitKernelInternal()`:
//! grid size in work-items (`gridDim × blockDim`), workgroup size, group
//! segment = the kernel's static LDS + dynamic LDS, private segment = the
//! kernel's fixed private size, or for a kernel with a dynamic stack the
//! larger of that and the stack size, capped at 16 KiB; header with the
//! barrier bit and system-scope acquire and release (CLR's
//! `dispatchPacketHeader_`).
//!
//! Nothing on this path allocates: the kernel, arguments and buffers are
//! the caller's.

use crate::kernarg::{self, Arg, ArgError, Geometry, HiddenValues, KernargBuffer};
use crate::loader::Kernel;
use crate::scratch::QueueScratch;
use crate::target::Part;
use barebell::aql::packet::{
    Fences, KernelDispatchPacket, PacketType, SETUP_DIMENSIONS_SHIFT, SignalHandle,
};
use barebell::aql::queue::{AqlQueue, SubmitError};
use barebell::aql::signal::{Condition, SignalMemory, SignalTimeout};
use barebell::time::Clock;

/// CLR caps a dynamic-stack kernel's private segment at 16 KiB.
pub const DYNAMIC_STACK_CAP: u32 = 16 * 1024;
/// HIP's default device stack size (CLR `Device::stack_size_{1024}`).
pub const HIP_DEFAULT_STACK: u32 = 1024;
/// Work-items per workgroup the packet can describe per axis (16 bits)
/// and the hardware's flat limit.
pub const MAX_FLAT_WORKGROUP: u32 = 1024;

/// Why a launch did not happen. Argument and geometry errors are found
/// before anything is written.
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchError {
    Args(ArgError),
    /// A zero grid or block along an axis.
    Zero {
        what: &'static str,
        axis: u8,
    },
    /// `dims` outside 1..=3, or an axis past `dims` that is not 1.
    Dims {
        dims: u8,
        axis: u8,
    },
    /// Work-items along an axis do not fit 32 bits.
    GridOverflow {
        axis: u8,
    },
    /// A workgroup larger than the kernel allows
    /// (`.max_flat_workgroup_size`) or than 1024.
    WorkgroupTooLarge {
        size: u64,
        limit: u32,
    },
    /// The kernel was compiled for one workgroup size only.
    WorkgroupNotRequired {
        given: [u32; 3],
        required: [u32; 3],
    },
    /// The kernel needs private memory and the queue has no scratch.
    NoScratch {
        kernel_bytes: u32,
    },
    /// The queue's scratch is smaller than the kernel needs per lane.
    ScratchTooSmall {
        kernel_bytes: u32,
        queue_bytes: u64,
    },
    Submit(SubmitError),
}

impl core::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LaunchError::Args(e) => write!(f, "{e}"),
            LaunchError::Zero { what, axis } => write!(f, "{what} is zero along axis {axis}"),
            LaunchError::Dims { dims, axis } => write!(
                f,
                "a {dims}-dimensional launch has grid or block size other than 1 on axis {axis} (or dims is not 1-3)"
            ),
            LaunchError::GridOverflow { axis } => {
                write!(f, "grid × block along axis {axis} exceeds 2^32 work-items")
            }
            LaunchError::WorkgroupTooLarge { size, limit } => write!(
                f,
                "a workgroup of {size} work-items exceeds the kernel's limit of {limit}"
            ),
            LaunchError::WorkgroupNotRequired { given, required } => write!(
                f,
                "block {given:?} differs from the kernel's required workgroup size {required:?}"
            ),
            LaunchError::NoScratch { kernel_bytes } => write!(
                f,
                "the kernel needs {kernel_bytes} private bytes per work-item and the queue has no scratch"
            ),
            LaunchError::ScratchTooSmall {
                kernel_bytes,
                queue_bytes,
            } => write!(
                f,
                "the kernel needs {kernel_bytes} private bytes per work-item; the queue's scratch gives {queue_bytes}"
            ),
            LaunchError::Submit(e) => write!(f, "{e}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for LaunchError {}

impl From<ArgError> for LaunchError {
    fn from(e: ArgError) -> Self {
        LaunchError::Args(e)
    }
}

/// Checks the geometry against the kernel; returns grid size in
/// work-items.
pub fn check_geometry(kernel: &Kernel, g: &Geometry) -> Result<[u32; 3], LaunchError> {
    if !(1..=3).contains(&g.dims) {
        return Err(LaunchError::Dims {
            dims: g.dims,
            axis: 0,
        });
    }
    for axis in 0..3u8 {
        let i = usize::from(axis);
        if g.grid[i] == 0 {
            return Err(LaunchError::Zero { what: "grid", axis });
        }
        if g.block[i] == 0 {
            return Err(LaunchError::Zero {
                what: "block",
                axis,
            });
        }
        if axis >= g.dims && (g.grid[i] != 1 || g.block[i] != 1) {
            return Err(LaunchError::Dims { dims: g.dims, axis });
        }
    }
    let items = g
        .work_items()
        .map_err(|axis| LaunchError::GridOverflow { axis })?;
    let flat = u64::from(g.block[0]) * u64::from(g.block[1]) * u64::from(g.block[2]);
    let limit = kernel.meta.max_flat_workgroup_size.min(MAX_FLAT_WORKGROUP);
    if flat > u64::from(limit) {
        return Err(LaunchError::WorkgroupTooLarge { size: flat, limit });
    }
    if let Some(req) = kernel.meta.reqd_workgroup_size.filter(|r| *r != g.block) {
        return Err(LaunchError::WorkgroupNotRequired {
            given: g.block,
            required: req,
        });
    }
    Ok(items)
}

/// Private bytes per work-item the packet asks for (CLR's rule).
pub fn private_segment_size(kernel: &Kernel, stack_bytes: u32) -> u32 {
    let fixed = kernel.meta.private_segment_fixed_size;
    if kernel.meta.uses_dynamic_stack {
        fixed.max(stack_bytes).min(DYNAMIC_STACK_CAP)
    } else {
        fixed
    }
}

/// Everything about the queue a launch needs besides the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchContext {
    pub part: Part,
    /// The scratch the queue was set up with, if any.
    pub scratch: Option<QueueScratch>,
    pub hidden: HiddenValues,
    pub fences: Fences,
    /// Device stack bytes for dynamic-stack kernels.
    pub stack_bytes: u32,
}

impl LaunchContext {
    /// CLR's defaults: barrier bit, system-scope fences, HIP's 1 KiB stack.
    pub const fn new(part: Part, queue_ptr: u64) -> Self {
        LaunchContext {
            part,
            scratch: None,
            hidden: HiddenValues {
                queue_ptr,
                private_base_hi: 0,
                shared_base_hi: 0,
                heap: 0,
                hostcall_buffer: 0,
                printf_buffer: 0,
            },
            fences: Fences::SYSTEM.with_barrier(true),
            stack_bytes: HIP_DEFAULT_STACK,
        }
    }
}

/// Checks the kernel's private segment against the queue's scratch.
pub fn check_scratch(
    kernel: &Kernel,
    private: u32,
    scratch: Option<QueueScratch>,
) -> Result<(), LaunchError> {
    if private == 0 {
        return Ok(());
    }
    let Some(s) = scratch else {
        return Err(LaunchError::NoScratch {
            kernel_bytes: private,
        });
    };
    let have = s.per_lane(kernel.descriptor.wavefront_size());
    if u64::from(private) > have {
        return Err(LaunchError::ScratchTooSmall {
            kernel_bytes: private,
            queue_bytes: have,
        });
    }
    Ok(())
}

/// Checks everything and writes the kernarg segment; returns the packet
/// (header included) ready to submit.
pub fn prepare(
    ctx: &LaunchContext,
    kernel: &Kernel,
    geometry: &Geometry,
    args: &[Arg<'_>],
    kernargs: &mut KernargBuffer<'_>,
    completion: SignalHandle,
) -> Result<KernelDispatchPacket, LaunchError> {
    let items = check_geometry(kernel, geometry)?;
    let local = kernarg::check_args(kernel, args)?;
    let private = private_segment_size(kernel, ctx.stack_bytes);
    check_scratch(kernel, private, ctx.scratch)?;
    let group =
        u64::from(kernel.meta.group_segment_fixed_size) + local + u64::from(geometry.dynamic_lds);
    if group > u64::from(ctx.part.lds_bytes_per_workgroup) {
        return Err(ArgError::Lds {
            needed: group,
            limit: ctx.part.lds_bytes_per_workgroup,
        }
        .into());
    }
    kernarg::fill(kernel, geometry, args, &ctx.hidden, kernargs)?;
    Ok(KernelDispatchPacket {
        header: ctx.fences.header(PacketType::KernelDispatch).into_bits(),
        setup: u16::from(geometry.dims) << SETUP_DIMENSIONS_SHIFT,
        // check_geometry bounded each axis by the flat limit (<= 1024).
        workgroup_size_x: geometry.block[0] as u16,
        workgroup_size_y: geometry.block[1] as u16,
        workgroup_size_z: geometry.block[2] as u16,
        reserved0: 0,
        grid_size_x: items[0],
        grid_size_y: items[1],
        grid_size_z: items[2],
        private_segment_size: private,
        group_segment_size: group as u32,
        kernel_object: kernel.descriptor_address,
        kernarg_address: kernargs.device_address,
        reserved2: 0,
        completion_signal: completion,
    })
}

/// A submitted launch.
#[derive(Debug)]
pub struct Completion<'s> {
    /// The packet's id in the queue.
    pub packet_id: u64,
    pub signal: &'s SignalMemory,
}

impl Completion<'_> {
    /// Waits (bounded) until the CP has decremented the signal to 0.
    pub fn wait<C: Clock + ?Sized>(&self, clock: &C, timeout_ns: u64) -> Result<(), SignalTimeout> {
        self.signal
            .wait(Condition::Lt, 1, clock, timeout_ns)
            .map(|_| ())
    }

    pub fn is_done(&self) -> bool {
        self.signal.value() < 1
    }
}

/// One launch: check, write kernargs, build the packet, arm the signal
/// (value 1) and submit. The signal must not be in use by another packet.
#[allow(clippy::too_many_arguments)]
pub fn launch<'s, const SLOTS: usize, C: Clock + ?Sized>(
    queue: &AqlQueue<'_, SLOTS>,
    ctx: &LaunchContext,
    kernel: &Kernel,
    geometry: &Geometry,
    args: &[Arg<'_>],
    kernargs: &mut KernargBuffer<'_>,
    signal: &'s SignalMemory,
    clock: &C,
    timeout_ns: u64,
) -> Result<Completion<'s>, LaunchError> {
    let packet = prepare(ctx, kernel, geometry, args, kernargs, signal.handle())?;
    signal.reset(1);
    let packet_id = queue
        .submit(&packet, clock, timeout_ns)
        .map_err(LaunchError::Submit)?;
    Ok(Completion { packet_id, signal })
}
