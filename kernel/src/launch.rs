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
use crate::layout::{ExplicitKind, ExplicitSlot};
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
    /// A prepared launch was asked to patch its kernarg image while its
    /// completion signal still shows the previous dispatch (which may
    /// still read the image) in flight.
    InFlight {
        value: i64,
    },
    /// A prepared launch's `dynamic_shared_pointer` argument asks for
    /// other LDS bytes than when it was prepared (the packet's group
    /// segment and the LDS offsets are fixed at preparation).
    LocalChanged {
        index: usize,
    },
    /// A [`Typed`] launch's argument type does not fit the slot (kind
    /// `kind`, `size` bytes).
    TypedMismatch {
        index: usize,
        name: Option<alloc::string::String>,
        kind: crate::metadata::ValueKind,
        size: u32,
    },
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
            LaunchError::InFlight { value } => write!(
                f,
                "the prepared launch's previous dispatch is still in flight (signal {value}); its kernargs cannot be rewritten yet"
            ),
            LaunchError::TypedMismatch {
                index,
                name,
                kind,
                size,
            } => {
                write!(f, "argument {index}")?;
                if let Some(n) = name {
                    write!(f, " ({n})")?;
                }
                write!(
                    f,
                    ": the argument type does not fit the kernel's {kind} of {size} bytes"
                )
            }
            LaunchError::LocalChanged { index } => write!(
                f,
                "argument {index}: dynamic LDS bytes differ from the prepared launch's; prepare it again"
            ),
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

/// A launch of one kernel with one geometry, prepared once (HIP's hot
/// path: check once, patch what changes).
///
/// [`Prepared::new`] runs every check [`prepare`] runs, writes the whole
/// kernarg image (explicit and hidden arguments) into the caller's buffer
/// and builds the packet, completion signal included. Each
/// [`Prepared::launch`] then only checks each explicit argument's kind and
/// size against its slot, stores its bytes at the slot's offset, arms the
/// signal and submits the packet: no allocation, no hidden-argument or
/// packet work.
///
/// Kernarg reuse: the image lives in the one buffer given to `new`, and
/// every launch rewrites it. A dispatch reads its kernargs until it
/// completes, so a launch is refused with [`LaunchError::InFlight`] while
/// the prepared signal is not below 1 (the previous dispatch has not
/// completed). The caller must not reset that signal while a dispatch
/// of this launch is in flight. To have several dispatches in flight,
/// prepare one `Prepared` per kernarg buffer and signal.
///
/// `dynamic_shared_pointer` arguments fix the packet's group segment and
/// their LDS offsets; a launch giving them other sizes is refused
/// ([`LaunchError::LocalChanged`]).
#[derive(Debug)]
pub struct Prepared<'k, 'm, 's> {
    slots: &'k [ExplicitSlot],
    kernel: &'k Kernel,
    /// The kernarg segment (exactly `segment_size` bytes) of the buffer
    /// given to `new`; every explicit slot lies inside it.
    image: &'m mut [u8],
    packet: KernelDispatchPacket,
    signal: &'s SignalMemory,
    /// LDS bytes the `dynamic_shared_pointer` arguments took; `None` when
    /// the kernel has none.
    local: Option<u64>,
}

impl<'k, 'm, 's> Prepared<'k, 'm, 's> {
    /// Checks everything and writes the full kernarg image of `args`
    /// into `kernargs`, which the prepared launch keeps.
    pub fn new(
        ctx: &LaunchContext,
        kernel: &'k Kernel,
        geometry: &Geometry,
        args: &[Arg<'_>],
        kernargs: KernargBuffer<'m>,
        signal: &'s SignalMemory,
    ) -> Result<Self, LaunchError> {
        let mut kb = kernargs;
        let packet = prepare(ctx, kernel, geometry, args, &mut kb, signal.handle())?;
        let size = kernel.layout.segment_size;
        // `prepare` checked the buffer holds the segment; the slots must
        // lie inside it for `launch`'s unchecked stores.
        for s in &kernel.layout.explicit {
            if u64::from(s.offset) + u64::from(s.size) > u64::from(size) {
                return Err(ArgError::BufferTooSmall {
                    needed: s.offset.saturating_add(s.size),
                    given: size as usize,
                }
                .into());
            }
        }
        let host = kb.host;
        let given = host.len();
        let Some(image) = host.get_mut(..size as usize) else {
            return Err(ArgError::BufferTooSmall {
                needed: size,
                given,
            }
            .into());
        };
        let has_local = kernel
            .layout
            .explicit
            .iter()
            .any(|s| s.kind == ExplicitKind::Local);
        let local = if has_local {
            Some(kernarg::check_args(kernel, args)?)
        } else {
            None
        };
        Ok(Prepared {
            slots: &kernel.layout.explicit,
            kernel,
            image,
            packet,
            signal,
            local,
        })
    }

    /// The packet every launch submits.
    pub fn packet(&self) -> &KernelDispatchPacket {
        &self.packet
    }

    /// The kernarg image as the next launch's dispatch will read it.
    pub fn kernargs(&self) -> &[u8] {
        self.image
    }

    /// Rewrites the explicit arguments in the image (checking each
    /// against its slot) without submitting. On an error nothing is
    /// submitted; arguments before the refused one may have been
    /// rewritten, which is harmless as every launch rewrites them all.
    /// Unlike [`Prepared::launch`] it does not look at the signal: the
    /// caller must know no dispatch of this launch is in flight.
    #[inline]
    pub fn patch(&mut self, args: &[Arg<'_>]) -> Result<&KernelDispatchPacket, LaunchError> {
        match self.patch_fast(args) {
            Ok(()) => Ok(&self.packet),
            Err(miss) => Err(self.miss_error(args, miss)),
        }
    }

    /// The hot loop: a miss carries only the index of the refused
    /// argument (`usize::MAX`: the count); the error is built cold.
    #[inline(always)]
    fn patch_fast(&mut self, args: &[Arg<'_>]) -> Result<(), usize> {
        if args.len() != self.slots.len() {
            return Err(usize::MAX);
        }
        let base = self.image.as_mut_ptr();
        let n = args.len();
        let (sp, ap) = (self.slots.as_ptr(), args.as_ptr());
        let mut i = 0;
        while i < n {
            // SAFETY: `i < n`, the length of both slices.
            let (slot, a) = unsafe { (&*sp.add(i), &*ap.add(i)) };
            // SAFETY: `new` checked `offset + size <= image.len()` for
            // every slot, so `at` and the `size` bytes after it are in
            // the image.
            let at = unsafe { base.add(slot.offset as usize) };
            match *a {
                Arg::Buffer(v) => {
                    if slot.kind != ExplicitKind::Buffer {
                        return Err(i);
                    }
                    // SAFETY: `prepare` checked a buffer slot's size is 8.
                    unsafe { at.cast::<u64>().write_unaligned(v) }
                }
                Arg::Scalar(s) => {
                    let (n, v) = s.bits();
                    if slot.kind != ExplicitKind::ByValue || slot.size != n {
                        return Err(i);
                    }
                    // SAFETY: the slot holds `n` bytes at `at`.
                    unsafe {
                        match n {
                            8 => at.cast::<u64>().write_unaligned(v),
                            4 => at.cast::<u32>().write_unaligned(v as u32),
                            2 => at.cast::<u16>().write_unaligned(v as u16),
                            _ => at.write(v as u8),
                        }
                    }
                }
                Arg::Bytes(b) => {
                    if slot.kind != ExplicitKind::ByValue || slot.size as usize != b.len() {
                        return Err(i);
                    }
                    // SAFETY: the slot holds `b.len()` bytes at `at`; `b`
                    // is caller memory, not the image (`&mut self`).
                    unsafe { core::ptr::copy_nonoverlapping(b.as_ptr(), at, b.len()) }
                }
                Arg::Local(_) => {
                    if slot.kind != ExplicitKind::Local {
                        return Err(i);
                    }
                }
            }
            i += 1;
        }
        if let Some(total) = self.local
            && !self.local_unchanged(args, total)
        {
            return Err(usize::MAX - 1);
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn miss_error(&self, args: &[Arg<'_>], miss: usize) -> LaunchError {
        if miss == usize::MAX {
            return ArgError::Count {
                expected: self.slots.len(),
                given: args.len(),
            }
            .into();
        }
        if let (Some(slot), Some(a)) = (self.slots.get(miss), args.get(miss)) {
            // `prepare` accepted a Local slot's size; a Local argument
            // for it never misses.
            return kernarg::arg_error(self.kernel, slot, a).into();
        }
        LaunchError::LocalChanged {
            index: self.changed_local(args),
        }
    }

    /// Patches the arguments, arms the signal (value 1) and submits.
    #[inline]
    pub fn launch<const SLOTS: usize, C: Clock + ?Sized>(
        &mut self,
        queue: &AqlQueue<'_, SLOTS>,
        args: &[Arg<'_>],
        clock: &C,
        timeout_ns: u64,
    ) -> Result<Completion<'s>, LaunchError> {
        let value = self.signal.value();
        if value >= 1 {
            return Err(LaunchError::InFlight { value });
        }
        if let Err(miss) = self.patch_fast(args) {
            return Err(self.miss_error(args, miss));
        }
        let signal = self.signal;
        signal.reset(1);
        let packet_id = queue
            .submit(&self.packet, clock, timeout_ns)
            .map_err(LaunchError::Submit)?;
        Ok(Completion { packet_id, signal })
    }

    /// Recomputes the LDS offsets of the `dynamic_shared_pointer`
    /// arguments as `prepare` does and compares them with the image's
    /// (which launches never rewrite) and the total with the prepared
    /// one: equal offsets and total mean equal sizes. Returns the first
    /// argument that differs, if any.
    fn first_changed_local(&self, args: &[Arg<'_>], total: u64) -> Option<usize> {
        let static_lds = u64::from(self.kernel.layout.static_lds);
        let mut lds = static_lds;
        let mut last = 0;
        for (slot, a) in self.slots.iter().zip(args) {
            if let (ExplicitKind::Local, Arg::Local(bytes)) = (slot.kind, a) {
                let align = u64::from(slot.pointee_align);
                lds = lds.div_ceil(align) * align;
                let at = slot.offset as usize;
                let n = (slot.size as usize).min(8);
                let mut b = [0u8; 8];
                if let (Some(d), Some(src)) = (b.get_mut(..n), self.image.get(at..at + n)) {
                    d.copy_from_slice(src);
                }
                last = usize::from(slot.index);
                if u64::from_le_bytes(b) != lds {
                    return Some(last);
                }
                lds += u64::from(*bytes);
            }
        }
        (lds - static_lds != total).then_some(last)
    }

    #[cold]
    #[inline(never)]
    fn local_unchanged(&self, args: &[Arg<'_>], total: u64) -> bool {
        self.first_changed_local(args, total).is_none()
    }

    fn changed_local(&self, args: &[Arg<'_>]) -> usize {
        self.local
            .and_then(|t| self.first_changed_local(args, t))
            .unwrap_or(0)
    }
}

/// A `global_buffer` argument of a [`Typed`] launch: the device address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffer(pub u64);

/// A value a [`Typed`] launch stores straight into a slot: its kind and
/// size are its type's, checked against the metadata once, at
/// [`Prepared::typed`].
pub trait SlotValue: Copy {
    const KIND: ExplicitKind;
    /// Bytes stored: 1, 2, 4 or 8.
    const SIZE: u32;
    /// Little-endian value in the low `SIZE` bytes.
    fn bits(self) -> u64;
}

impl SlotValue for Buffer {
    const KIND: ExplicitKind = ExplicitKind::Buffer;
    const SIZE: u32 = 8;
    #[inline(always)]
    fn bits(self) -> u64 {
        self.0
    }
}

macro_rules! slot_scalar {
    ($($t:ty, $n:expr, |$v:ident| $e:expr;)*) => {$(
        impl SlotValue for $t {
            const KIND: ExplicitKind = ExplicitKind::ByValue;
            const SIZE: u32 = $n;
            #[inline(always)]
            fn bits(self) -> u64 {
                let $v = self;
                $e
            }
        }
    )*};
}

slot_scalar! {
    u8, 1, |v| u64::from(v);
    i8, 1, |v| u64::from(v as u8);
    u16, 2, |v| u64::from(v);
    i16, 2, |v| u64::from(v as u16);
    u32, 4, |v| u64::from(v);
    i32, 4, |v| u64::from(v as u32);
    f32, 4, |v| u64::from(v.to_bits());
    u64, 8, |v| v;
    i64, 8, |v| v as u64;
    f64, 8, |v| v.to_bits();
}

/// Most explicit arguments a [`Typed`] launch takes.
pub const MAX_TYPED_ARGS: usize = 8;

/// A tuple of [`SlotValue`]s: a kernel's whole explicit argument list.
pub trait ArgTuple: Copy {
    const LEN: usize;
    /// Index of the first element whose kind or size differs from its
    /// slot's.
    fn mismatch(slots: &[ExplicitSlot]) -> Option<usize>;
    /// Stores every element at its offset.
    ///
    /// # Safety
    /// `base + offsets[i]` must be valid for writes of element `i`'s
    /// `SIZE` bytes for every `i < LEN`.
    unsafe fn store(self, base: *mut u8, offsets: &[u32; MAX_TYPED_ARGS]);
}

#[inline(always)]
fn slot_mismatch<V: SlotValue>(slot: Option<&ExplicitSlot>) -> bool {
    slot.is_none_or(|s| s.kind != V::KIND || s.size != V::SIZE)
}

/// # Safety
/// `at` valid for writes of `V::SIZE` bytes.
#[inline(always)]
unsafe fn store_one<V: SlotValue>(at: *mut u8, v: V) {
    let b = v.bits();
    // SAFETY: the caller's contract; `SIZE` is a constant, so one arm
    // remains.
    unsafe {
        match V::SIZE {
            8 => at.cast::<u64>().write_unaligned(b),
            4 => at.cast::<u32>().write_unaligned(b as u32),
            2 => at.cast::<u16>().write_unaligned(b as u16),
            _ => at.write(b as u8),
        }
    }
}

macro_rules! arg_tuple {
    ($len:expr; $($t:ident $i:tt),*) => {
        impl<$($t: SlotValue),*> ArgTuple for ($($t,)*) {
            const LEN: usize = $len;
            #[allow(unused_variables)]
            fn mismatch(slots: &[ExplicitSlot]) -> Option<usize> {
                $(if slot_mismatch::<$t>(slots.get($i)) {
                    return Some($i);
                })*
                None
            }
            #[inline(always)]
            #[allow(unused_variables)]
            unsafe fn store(self, base: *mut u8, offsets: &[u32; MAX_TYPED_ARGS]) {
                // SAFETY: the caller's contract, element by element.
                $(unsafe { store_one(base.add(offsets[$i] as usize), self.$i) };)*
            }
        }
    };
}

arg_tuple!(0;);
arg_tuple!(1; A 0);
arg_tuple!(2; A 0, B 1);
arg_tuple!(3; A 0, B 1, C 2);
arg_tuple!(4; A 0, B 1, C 2, D 3);
arg_tuple!(5; A 0, B 1, C 2, D 3, E 4);
arg_tuple!(6; A 0, B 1, C 2, D 3, E 4, F 5);
arg_tuple!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
arg_tuple!(8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// A [`Prepared`] launch bound to a Rust argument type: kinds and sizes
/// were checked once, so a launch stores each value at its offset, arms
/// the signal and submits (the hot path HIP takes for a loaded kernel).
#[derive(Debug)]
pub struct Typed<'p, 'k, 'm, 's, A: ArgTuple> {
    prepared: &'p mut Prepared<'k, 'm, 's>,
    offsets: [u32; MAX_TYPED_ARGS],
    _args: core::marker::PhantomData<A>,
}

impl<'k, 'm, 's> Prepared<'k, 'm, 's> {
    /// Binds the launch to the argument type `A`, checking each
    /// element's kind and size against its slot. A kernel with
    /// `dynamic_shared_pointer` arguments (or more than
    /// [`MAX_TYPED_ARGS`]) is refused: use [`Prepared::launch`].
    pub fn typed<A: ArgTuple>(&mut self) -> Result<Typed<'_, 'k, 'm, 's, A>, LaunchError> {
        if A::LEN != self.slots.len() || A::LEN > MAX_TYPED_ARGS {
            return Err(ArgError::Count {
                expected: self.slots.len(),
                given: A::LEN,
            }
            .into());
        }
        if let Some(i) = A::mismatch(self.slots) {
            let index = self.slots.get(i).map_or(i, |s| usize::from(s.index));
            let kind = self
                .kernel
                .meta
                .args
                .get(index)
                .map_or(crate::metadata::ValueKind::HiddenNone, |m| {
                    m.value_kind.clone()
                });
            let name = self
                .kernel
                .meta
                .args
                .get(index)
                .and_then(|m| m.name.clone());
            let expected = self.slots.get(i).map_or(0, |s| s.size);
            return Err(LaunchError::TypedMismatch {
                index,
                name,
                kind,
                size: expected,
            });
        }
        let mut offsets = [0u32; MAX_TYPED_ARGS];
        for (o, s) in offsets.iter_mut().zip(self.slots) {
            *o = s.offset;
        }
        Ok(Typed {
            prepared: self,
            offsets,
            _args: core::marker::PhantomData,
        })
    }
}

impl<'s, A: ArgTuple> Typed<'_, '_, '_, 's, A> {
    /// Stores `args` in the image without submitting. Unlike
    /// [`Typed::launch`] it does not look at the signal: the caller must
    /// know no dispatch of this launch is in flight.
    #[inline]
    pub fn patch(&mut self, args: A) -> &KernelDispatchPacket {
        let base = self.prepared.image.as_mut_ptr();
        // SAFETY: `typed` checked each element's size equals its slot's,
        // and `Prepared::new` that every slot lies inside the image.
        unsafe { args.store(base, &self.offsets) };
        &self.prepared.packet
    }

    /// Stores `args`, arms the signal (value 1) and submits. Refused
    /// with [`LaunchError::InFlight`] while the previous dispatch has
    /// not completed.
    #[inline]
    pub fn launch<const SLOTS: usize, C: Clock + ?Sized>(
        &mut self,
        queue: &AqlQueue<'_, SLOTS>,
        args: A,
        clock: &C,
        timeout_ns: u64,
    ) -> Result<Completion<'s>, LaunchError> {
        let signal = self.prepared.signal;
        let value = signal.value();
        if value >= 1 {
            return Err(LaunchError::InFlight { value });
        }
        self.patch(args);
        signal.reset(1);
        let packet_id = queue
            .submit(&self.prepared.packet, clock, timeout_ns)
            .map_err(LaunchError::Submit)?;
        Ok(Completion { packet_id, signal })
    }
}
