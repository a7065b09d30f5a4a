//! Kernel arguments: typed values checked against the metadata's `.args`,
//! then written, with every hidden argument, at the offsets the metadata
//! gives. No offset is assumed: a hidden argument the metadata does not
//! list is not written, and one it lists goes where it says.
//!
//! Hidden arguments are filled as CLR fills them in
//! `roc::VirtualGPU::submitKernelInternal()` (`rocclr/device/rocm/rocvirtual.cpp`),
//! for a HIP launch (no global offset, no device-side enqueue, no
//! cooperative groups):
//!
//! | value kind | value |
//! |---|---|
//! | `hidden_block_count_{x,y,z}` | workgroups along the axis (`global / local`); 1 on axes past the dimension count |
//! | `hidden_group_size_{x,y,z}` | work-items per workgroup along the axis; 1 past the dimension count |
//! | `hidden_remainder_{x,y,z}` | `global % local`, only for axes within the dimension count (always 0 for a HIP grid) |
//! | `hidden_grid_dims` | the dimension count |
//! | `hidden_global_offset_{x,y,z}` | 0 (HIP has no global offset) |
//! | `hidden_dynamic_lds_size` | the launch's dynamic LDS bytes |
//! | `hidden_queue_ptr` | the queue's `amd_queue_t` address |
//! | `hidden_private_base`, `hidden_shared_base` | the queue's `private_/group_segment_aperture_base_hi` |
//! | `hidden_heap_v1`, `hidden_hostcall_buffer`, `hidden_printf_buffer` | the caller's buffer, or 0 when it gives none (CLR allocates them; barebell does not) |
//! | `hidden_multigrid_sync_arg` | 0 (CLR: no cooperative launch) |
//! | `hidden_default_queue`, `hidden_completion_action` | 0 (CLR: no device-side enqueue) |
//! | `hidden_none` | nothing |
//!
//! CLR leaves entries it does not write as they were in the argument
//! buffer it copies; barebell zeroes the whole segment first, so those are 0.

use crate::layout::{ExplicitKind, ExplicitSlot, HiddenKind};
use crate::loader::Kernel;
use crate::metadata::{ArgMeta, ValueKind};

/// A by-value scalar, in one of the job format's types.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    /// IEEE binary16, as its bits.
    F16(u16),
    F32(f32),
    F64(f64),
}

impl Scalar {
    pub const fn size(&self) -> usize {
        match self {
            Scalar::I8(_) | Scalar::U8(_) => 1,
            Scalar::I16(_) | Scalar::U16(_) | Scalar::F16(_) => 2,
            Scalar::I32(_) | Scalar::U32(_) | Scalar::F32(_) => 4,
            Scalar::I64(_) | Scalar::U64(_) | Scalar::F64(_) => 8,
        }
    }

    /// Little-endian bytes in the low `size()` bytes of the result.
    pub fn to_le(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        match *self {
            Scalar::I8(v) => b[..1].copy_from_slice(&v.to_le_bytes()),
            Scalar::U8(v) => b[..1].copy_from_slice(&v.to_le_bytes()),
            Scalar::I16(v) => b[..2].copy_from_slice(&v.to_le_bytes()),
            Scalar::U16(v) | Scalar::F16(v) => b[..2].copy_from_slice(&v.to_le_bytes()),
            Scalar::I32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
            Scalar::U32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
            Scalar::F32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
            Scalar::I64(v) => b = v.to_le_bytes(),
            Scalar::U64(v) => b = v.to_le_bytes(),
            Scalar::F64(v) => b = v.to_le_bytes(),
        }
        b
    }

    /// `(size, little-endian bits in the low bytes)` in one match.
    #[inline(always)]
    pub const fn bits(&self) -> (u32, u64) {
        match *self {
            Scalar::I8(v) => (1, v as u8 as u64),
            Scalar::U8(v) => (1, v as u64),
            Scalar::I16(v) => (2, v as u16 as u64),
            Scalar::U16(v) | Scalar::F16(v) => (2, v as u64),
            Scalar::I32(v) => (4, v as u32 as u64),
            Scalar::U32(v) => (4, v as u64),
            Scalar::F32(v) => (4, v.to_bits() as u64),
            Scalar::I64(v) => (8, v as u64),
            Scalar::U64(v) => (8, v),
            Scalar::F64(v) => (8, v.to_bits()),
        }
    }

    /// The job format's name of the type.
    pub const fn type_name(&self) -> &'static str {
        match self {
            Scalar::I8(_) => "i8",
            Scalar::U8(_) => "u8",
            Scalar::I16(_) => "i16",
            Scalar::U16(_) => "u16",
            Scalar::I32(_) => "i32",
            Scalar::U32(_) => "u32",
            Scalar::I64(_) => "i64",
            Scalar::U64(_) => "u64",
            Scalar::F16(_) => "f16",
            Scalar::F32(_) => "f32",
            Scalar::F64(_) => "f64",
        }
    }
}

/// One explicit kernel argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg<'a> {
    /// A `global_buffer` argument: the buffer's device address.
    Buffer(u64),
    /// A `by_value` scalar; its size must equal the metadata's.
    Scalar(Scalar),
    /// A `by_value` aggregate or vector as raw bytes of the metadata's size.
    Bytes(&'a [u8]),
    /// A `dynamic_shared_pointer` (OpenCL `__local T*`): this many LDS
    /// bytes are allocated after the kernel's static LDS and the argument
    /// receives their LDS offset, as CLR does.
    Local(u32),
}

impl Arg<'_> {
    fn what(&self) -> ArgWhat {
        match self {
            Arg::Buffer(_) => ArgWhat::Buffer,
            Arg::Scalar(s) => ArgWhat::Scalar(s.type_name(), s.size() as u32),
            Arg::Bytes(b) => ArgWhat::Bytes(b.len()),
            Arg::Local(_) => ArgWhat::Local,
        }
    }
}

/// What the caller passed, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgWhat {
    Buffer,
    Scalar(&'static str, u32),
    Bytes(usize),
    Local,
}

impl core::fmt::Display for ArgWhat {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ArgWhat::Buffer => f.write_str("a buffer"),
            ArgWhat::Scalar(t, n) => write!(f, "a {t} scalar ({n} bytes)"),
            ArgWhat::Bytes(n) => write!(f, "{n} raw bytes"),
            ArgWhat::Local => f.write_str("a dynamic LDS size"),
        }
    }
}

/// Values only the runtime knows, for the hidden arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HiddenValues {
    /// `amd_queue_t` address (`hidden_queue_ptr`).
    pub queue_ptr: u64,
    /// `amd_queue_t::private_segment_aperture_base_hi`.
    pub private_base_hi: u32,
    /// `amd_queue_t::group_segment_aperture_base_hi`.
    pub shared_base_hi: u32,
    pub heap: u64,
    pub hostcall_buffer: u64,
    pub printf_buffer: u64,
}

/// A launch's shape, HIP-style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Workgroups per axis (HIP `gridDim`).
    pub grid: [u32; 3],
    /// Work-items per workgroup per axis (HIP `blockDim`).
    pub block: [u32; 3],
    /// Dimension count written to the packet's `setup` and to
    /// `hidden_grid_dims` (HIP always launches 3).
    pub dims: u8,
    /// Dynamic LDS bytes (HIP `sharedMemBytes`).
    pub dynamic_lds: u32,
}

impl Geometry {
    /// A HIP launch: `hipLaunchKernel(f, grid, block, args, shmem, stream)`
    /// is always three-dimensional (`ihipLaunchKernel` builds a 3-D
    /// `NDRangeContainer`).
    pub const fn hip(grid: [u32; 3], block: [u32; 3], dynamic_lds: u32) -> Self {
        Geometry {
            grid,
            block,
            dims: 3,
            dynamic_lds,
        }
    }

    /// Work-items per axis, or the axis that overflows 32 bits.
    pub fn work_items(&self) -> Result<[u32; 3], u8> {
        let mut out = [0u32; 3];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.grid[i].checked_mul(self.block[i]).ok_or(i as u8)?;
        }
        Ok(out)
    }
}

/// An argument list that does not match the kernel, or a kernarg buffer
/// that cannot hold it. Nothing has been written when this is returned.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgError {
    /// Wrong number of explicit arguments.
    Count { expected: usize, given: usize },
    /// An argument of the wrong kind (a scalar where a buffer goes, …).
    Kind {
        index: usize,
        name: Option<alloc::string::String>,
        expected: ValueKind,
        given: ArgWhat,
    },
    /// A by-value argument of the wrong size.
    Size {
        index: usize,
        name: Option<alloc::string::String>,
        expected: u32,
        given: ArgWhat,
    },
    /// A value kind barebell does not fill (images, samplers, pipes, …).
    Unsupported { index: usize, kind: ValueKind },
    /// The kernarg buffer is smaller than the kernel's segment.
    BufferTooSmall { needed: u32, given: usize },
    /// The kernarg buffer's device address is not aligned as required
    /// (the larger of 16 and `.kernarg_segment_align`).
    BufferMisaligned { address: u64, align: u32 },
    /// The LDS the launch needs exceeds what a workgroup may have.
    Lds { needed: u64, limit: u32 },
}

impl core::fmt::Display for ArgError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let named =
            |f: &mut core::fmt::Formatter<'_>, i: usize, n: &Option<alloc::string::String>| {
                write!(f, "argument {i}")?;
                if let Some(n) = n {
                    write!(f, " ({n})")?;
                }
                Ok(())
            };
        match self {
            ArgError::Count { expected, given } => write!(
                f,
                "the kernel takes {expected} arguments; {given} were given"
            ),
            ArgError::Kind {
                index,
                name,
                expected,
                given,
            } => {
                named(f, *index, name)?;
                write!(f, ": the kernel expects {expected}; got {given}")
            }
            ArgError::Size {
                index,
                name,
                expected,
                given,
            } => {
                named(f, *index, name)?;
                write!(
                    f,
                    ": the kernel expects {expected} bytes by value; got {given}"
                )
            }
            ArgError::Unsupported { index, kind } => write!(
                f,
                "argument {index}: value kind {kind} is not one barebell fills"
            ),
            ArgError::BufferTooSmall { needed, given } => write!(
                f,
                "the kernarg buffer holds {given} bytes; the kernel's segment is {needed}"
            ),
            ArgError::BufferMisaligned { address, align } => write!(
                f,
                "kernarg address {address:#x} is not {align}-byte aligned"
            ),
            ArgError::Lds { needed, limit } => write!(
                f,
                "the launch needs {needed} bytes of LDS per workgroup; the part allows {limit}"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ArgError {}

fn kind_error(index: usize, meta: &ArgMeta, given: ArgWhat) -> ArgError {
    ArgError::Kind {
        index,
        name: meta.name.clone(),
        expected: meta.value_kind.clone(),
        given,
    }
}

/// Checks `args` against the kernel's arguments; returns the LDS bytes
/// the `dynamic_shared_pointer` arguments add (their offsets start at the
/// kernel's static LDS size, each aligned to its `.pointee_align`).
pub fn check_args(kernel: &Kernel, args: &[Arg<'_>]) -> Result<u64, ArgError> {
    let l = &kernel.layout;
    if l.explicit.len() != args.len() {
        return Err(ArgError::Count {
            expected: l.explicit.len(),
            given: args.len(),
        });
    }
    let static_lds = u64::from(l.static_lds);
    let mut lds = static_lds;
    for (slot, a) in l.explicit.iter().zip(args) {
        let ok = match (slot.kind, a) {
            (ExplicitKind::Buffer, Arg::Buffer(_)) => slot.size == 8,
            (ExplicitKind::ByValue, Arg::Scalar(s)) => s.size() == slot.size as usize,
            (ExplicitKind::ByValue, Arg::Bytes(b)) => b.len() == slot.size as usize,
            (ExplicitKind::Local, Arg::Local(bytes)) => {
                let align = u64::from(slot.pointee_align);
                lds = lds.div_ceil(align) * align + u64::from(*bytes);
                slot.size == 4 || slot.size == 8
            }
            _ => false,
        };
        if !ok {
            return Err(arg_error(kernel, slot, a));
        }
    }
    if let Some(index) = l.unknown_hidden {
        return Err(ArgError::Unsupported {
            index,
            kind: kernel
                .meta
                .args
                .get(index)
                .map_or(ValueKind::HiddenNone, |m| m.value_kind.clone()),
        });
    }
    Ok(lds - static_lds)
}

/// The error for an argument that failed the check (off the fast path).
#[cold]
pub(crate) fn arg_error(kernel: &Kernel, slot: &ExplicitSlot, a: &Arg<'_>) -> ArgError {
    let index = usize::from(slot.index);
    let Some(m) = kernel.meta.args.get(index) else {
        return ArgError::Count {
            expected: kernel.layout.explicit.len(),
            given: 0,
        };
    };
    match (slot.kind, a) {
        (ExplicitKind::Unsupported, _) => ArgError::Unsupported {
            index,
            kind: m.value_kind.clone(),
        },
        (ExplicitKind::Local, Arg::Local(_)) => ArgError::Unsupported {
            index,
            kind: m.value_kind.clone(),
        },
        (ExplicitKind::Buffer, Arg::Buffer(_))
        | (ExplicitKind::ByValue, Arg::Scalar(_) | Arg::Bytes(_)) => ArgError::Size {
            index,
            name: m.name.clone(),
            expected: m.size,
            given: a.what(),
        },
        _ => kind_error(index, m, a.what()),
    }
}

/// Where a kernarg segment is written: a host view and its device address.
#[derive(Debug)]
pub struct KernargBuffer<'m> {
    pub host: &'m mut [u8],
    pub device_address: u64,
}

/// Stores the low `size` bytes of `value` at `at` (bounds were checked at
/// load: every argument lies inside the segment).
#[inline(always)]
fn put(out: &mut [u8], at: u32, size: u8, value: u64) {
    let at = at as usize;
    let b = value.to_le_bytes();
    match size {
        8 => {
            if let Some(d) = out.get_mut(at..at + 8) {
                d.copy_from_slice(&b);
            }
        }
        4 => {
            if let Some(d) = out.get_mut(at..at + 4) {
                d.copy_from_slice(&b[..4]);
            }
        }
        2 => {
            if let Some(d) = out.get_mut(at..at + 2) {
                d.copy_from_slice(&b[..2]);
            }
        }
        n => {
            let n = usize::from(n.min(8));
            if let Some(d) = out.get_mut(at..at + n) {
                d.copy_from_slice(&b[..n]);
            }
        }
    }
}

/// Checks the arguments and the buffer, then writes the whole segment:
/// zeroes, explicit arguments, hidden arguments. Returns the LDS bytes
/// the `dynamic_shared_pointer` arguments take.
pub fn write_kernargs(
    kernel: &Kernel,
    geometry: &Geometry,
    args: &[Arg<'_>],
    hidden: &HiddenValues,
    buf: &mut KernargBuffer<'_>,
) -> Result<u64, ArgError> {
    let local_bytes = check_args(kernel, args)?;
    fill(kernel, geometry, args, hidden, buf)?;
    Ok(local_bytes)
}

/// [`write_kernargs`] for arguments already passed through [`check_args`].
pub(crate) fn fill(
    kernel: &Kernel,
    geometry: &Geometry,
    args: &[Arg<'_>],
    hidden: &HiddenValues,
    buf: &mut KernargBuffer<'_>,
) -> Result<(), ArgError> {
    let l = &kernel.layout;
    let size = l.segment_size;
    if buf.host.len() < size as usize {
        return Err(ArgError::BufferTooSmall {
            needed: size,
            given: buf.host.len(),
        });
    }
    if !buf
        .device_address
        .is_multiple_of(u64::from(l.segment_align))
    {
        return Err(ArgError::BufferMisaligned {
            address: buf.device_address,
            align: l.segment_align,
        });
    }
    let out = &mut buf.host[..size as usize];
    out.fill(0);

    // Explicit arguments.
    let mut lds = u64::from(l.static_lds);
    for (slot, a) in l.explicit.iter().zip(args) {
        match *a {
            Arg::Buffer(addr) => put(out, slot.offset, 8, addr),
            Arg::Scalar(s) => put(
                out,
                slot.offset,
                s.size() as u8,
                u64::from_le_bytes(s.to_le()),
            ),
            Arg::Bytes(b) => {
                let at = slot.offset as usize;
                if let Some(d) = out.get_mut(at..at + b.len()) {
                    d.copy_from_slice(b);
                }
            }
            Arg::Local(bytes) => {
                let align = u64::from(slot.pointee_align);
                lds = lds.div_ceil(align) * align;
                put(out, slot.offset, slot.size.min(8) as u8, lds);
                lds += u64::from(bytes);
            }
        }
    }

    // Hidden arguments, where the metadata puts them.
    let g = geometry;
    let dims = usize::from(g.dims.clamp(1, 3));
    for h in &l.hidden {
        let value = match h.kind {
            HiddenKind::BlockCount(a) => {
                let a = usize::from(a);
                if a < dims { u64::from(g.grid[a]) } else { 1 }
            }
            HiddenKind::GroupSize(a) => {
                let a = usize::from(a);
                if a < dims { u64::from(g.block[a]) } else { 1 }
            }
            HiddenKind::GridDims => dims as u64,
            HiddenKind::DynamicLdsSize => u64::from(g.dynamic_lds),
            HiddenKind::QueuePtr => hidden.queue_ptr,
            HiddenKind::PrivateBase => u64::from(hidden.private_base_hi),
            HiddenKind::SharedBase => u64::from(hidden.shared_base_hi),
            HiddenKind::Heap => hidden.heap,
            HiddenKind::Hostcall => hidden.hostcall_buffer,
            HiddenKind::Printf => hidden.printf_buffer,
        };
        put(out, h.offset, h.size, value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_bytes_are_little_endian_and_sized() {
        assert_eq!(Scalar::U16(0x1234).to_le()[..2], [0x34, 0x12]);
        assert_eq!(Scalar::F32(1.0).to_le()[..4], 1.0f32.to_le_bytes());
        assert_eq!(Scalar::I8(-1).size(), 1);
        assert_eq!(Scalar::F64(0.0).size(), 8);
    }

    /// `hidden_private_base` / `hidden_shared_base` are emitted only for
    /// targets without aperture registers (not gfx11/gfx12), so no test
    /// kernel carries them; this metadata places them by hand.
    #[test]
    fn apertures_and_unknown_hidden_kinds() {
        use crate::descriptor::KernelDescriptor;
        use crate::layout::ArgLayout;
        use crate::metadata::{ArgMeta, KernelMeta};
        let arg = |kind: &str, offset, size| ArgMeta {
            name: None,
            type_name: None,
            offset,
            size,
            value_kind: ValueKind::parse(kind),
            address_space: None,
            pointee_align: None,
        };
        let mut meta = KernelMeta {
            name: "k".into(),
            symbol: "k.kd".into(),
            kernarg_segment_size: 32,
            kernarg_segment_align: 8,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            wavefront_size: 32,
            sgpr_count: 0,
            vgpr_count: 0,
            max_flat_workgroup_size: 256,
            uses_dynamic_stack: false,
            reqd_workgroup_size: None,
            uniform_work_group_size: false,
            args: alloc::vec![
                arg("hidden_private_base", 8, 4),
                arg("hidden_shared_base", 12, 4),
                arg("hidden_queue_ptr", 16, 8),
            ],
        };
        let kernel = |meta: &KernelMeta| Kernel {
            layout: ArgLayout::new(meta),
            meta: meta.clone(),
            descriptor: KernelDescriptor {
                raw: Default::default(),
            },
            descriptor_address: 0,
            entry_address: 0,
        };
        let hidden = HiddenValues {
            queue_ptr: 0x1122_3344_5566_7788,
            private_base_hi: 0xaaaa_0001,
            shared_base_hi: 0xbbbb_0002,
            ..Default::default()
        };
        let mut host = [0xffu8; 32];
        let g = Geometry::hip([1, 1, 1], [1, 1, 1], 0);
        write_kernargs(
            &kernel(&meta),
            &g,
            &[],
            &hidden,
            &mut KernargBuffer {
                host: &mut host,
                device_address: 0x1000,
            },
        )
        .unwrap();
        assert_eq!(host[..8], [0; 8]);
        assert_eq!(host[8..12], 0xaaaa_0001u32.to_le_bytes());
        assert_eq!(host[12..16], 0xbbbb_0002u32.to_le_bytes());
        assert_eq!(host[16..24], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(host[24..], [0; 8]);

        meta.args.push(arg("hidden_from_the_future", 24, 8));
        let e = check_args(&kernel(&meta), &[]).unwrap_err();
        assert_eq!(
            e,
            ArgError::Unsupported {
                index: 3,
                kind: ValueKind::Other("hidden_from_the_future".into())
            }
        );
    }

    #[test]
    fn work_items_overflow_names_the_axis() {
        let g = Geometry::hip([1, 1 << 20, 1], [1, 1 << 12, 1], 0);
        assert_eq!(g.work_items(), Err(1));
        let g = Geometry::hip([4, 2, 1], [256, 1, 1], 0);
        assert_eq!(g.work_items(), Ok([1024, 2, 1]));
    }
}
