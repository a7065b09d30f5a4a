//! The JSON job format of `barebell run JOB.json`:
//!
//! ```json
//! {
//!   "code_object": "k.co", "kernel": "saxpy",
//!   "grid": [4, 1, 1], "block": [256, 1, 1], "dynamic_lds_bytes": 0,
//!   "buffers": {
//!     "y":   {"type": "f32", "values": [1.0, 2.0]},
//!     "x":   {"type": "f32", "count": 1024, "fill": 0.5},
//!     "out": {"type": "u32", "count": 16, "fill": 0}
//!   },
//!   "args": [{"buffer": "y"}, {"buffer": "x"}, {"f32": 2.0}, {"u32": 1024}]
//! }
//! ```
//!
//! Types: `i8 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64`. `grid` and `block`
//! have one to three entries (`grid` counts workgroups, `block` work-items
//! per workgroup, as in HIP); the entry count is the launch's dimension
//! count. [`Job::parse`] checks the file on its own; [`Job::check`] checks
//! it against a kernel's metadata, naming the argument that does not fit,
//! before anything is allocated or launched.

use crate::kernarg::{Arg, Geometry, Scalar};
use crate::metadata::{KernelMeta, ValueKind};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::{Number, Value};

/// An element or scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
}

impl ElemType {
    pub const ALL: [ElemType; 11] = [
        ElemType::I8,
        ElemType::U8,
        ElemType::I16,
        ElemType::U16,
        ElemType::I32,
        ElemType::U32,
        ElemType::I64,
        ElemType::U64,
        ElemType::F16,
        ElemType::F32,
        ElemType::F64,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            ElemType::I8 => "i8",
            ElemType::U8 => "u8",
            ElemType::I16 => "i16",
            ElemType::U16 => "u16",
            ElemType::I32 => "i32",
            ElemType::U32 => "u32",
            ElemType::I64 => "i64",
            ElemType::U64 => "u64",
            ElemType::F16 => "f16",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }

    pub const fn size(self) -> usize {
        match self {
            ElemType::I8 | ElemType::U8 => 1,
            ElemType::I16 | ElemType::U16 | ElemType::F16 => 2,
            ElemType::I32 | ElemType::U32 | ElemType::F32 => 4,
            ElemType::I64 | ElemType::U64 | ElemType::F64 => 8,
        }
    }

    /// A JSON number as this type; `None` if it does not fit (integers
    /// must be integral and in range).
    pub fn scalar(self, n: &Number) -> Option<Scalar> {
        let int = || -> Option<i128> {
            if let Some(u) = n.as_u64() {
                Some(i128::from(u))
            } else {
                n.as_i64().map(i128::from)
            }
        };
        let float = n.as_f64();
        Some(match self {
            ElemType::I8 => Scalar::I8(i8::try_from(int()?).ok()?),
            ElemType::U8 => Scalar::U8(u8::try_from(int()?).ok()?),
            ElemType::I16 => Scalar::I16(i16::try_from(int()?).ok()?),
            ElemType::U16 => Scalar::U16(u16::try_from(int()?).ok()?),
            ElemType::I32 => Scalar::I32(i32::try_from(int()?).ok()?),
            ElemType::U32 => Scalar::U32(u32::try_from(int()?).ok()?),
            ElemType::I64 => Scalar::I64(i64::try_from(int()?).ok()?),
            ElemType::U64 => Scalar::U64(u64::try_from(int()?).ok()?),
            ElemType::F16 => Scalar::F16(half::f16::from_f64(float?).to_bits()),
            ElemType::F32 => Scalar::F32(float? as f32),
            ElemType::F64 => Scalar::F64(float?),
        })
    }

    /// Decodes one element (`bytes.len() == self.size()`) as JSON.
    pub fn decode(self, bytes: &[u8]) -> Value {
        let mut b = [0u8; 8];
        let n = self.size().min(bytes.len());
        b[..n].copy_from_slice(&bytes[..n]);
        let u = u64::from_le_bytes(b);
        match self {
            ElemType::I8 => Value::from(u as u8 as i8),
            ElemType::U8 => Value::from(u as u8),
            ElemType::I16 => Value::from(u as u16 as i16),
            ElemType::U16 => Value::from(u as u16),
            ElemType::I32 => Value::from(u as u32 as i32),
            ElemType::U32 => Value::from(u as u32),
            ElemType::I64 => Value::from(u as i64),
            ElemType::U64 => Value::from(u),
            ElemType::F16 => float_value(half::f16::from_bits(u as u16).to_f64()),
            ElemType::F32 => float_value(f64::from(f32::from_bits(u as u32))),
            ElemType::F64 => float_value(f64::from_bits(u)),
        }
    }
}

/// JSON has no NaN or infinity; those print as strings.
fn float_value(v: f64) -> Value {
    Number::from_f64(v).map_or_else(|| Value::String(format!("{v}")), Value::Number)
}

/// A buffer of the job.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    #[serde(rename = "type")]
    pub ty: ElemType,
    #[serde(default)]
    pub values: Option<Vec<Number>>,
    #[serde(default)]
    pub count: Option<u64>,
    #[serde(default)]
    pub fill: Option<Number>,
}

/// One argument: a buffer by name or a typed scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    Buffer(String),
    Scalar(ElemType, Scalar),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    code_object: String,
    kernel: String,
    grid: Vec<u32>,
    block: Vec<u32>,
    #[serde(default)]
    dynamic_lds_bytes: u32,
    #[serde(default)]
    buffers: BTreeMap<String, BufferSpec>,
    #[serde(default)]
    args: Vec<BTreeMap<String, Value>>,
}

/// A parsed, self-consistent job.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub code_object: String,
    pub kernel: String,
    pub geometry: Geometry,
    pub buffers: BTreeMap<String, BufferSpec>,
    pub args: Vec<ArgSpec>,
}

/// A grid that looks like a global size ([`Job::grid_hint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridHint {
    /// 0 for x, 1 for y, 2 for z.
    pub axis: usize,
    pub grid: u64,
    pub block: u64,
    /// Work-items along the axis: grid × block.
    pub items: u64,
    /// Elements in the job's largest buffer.
    pub largest: u64,
}

impl core::fmt::Display for GridHint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let axis = ["x", "y", "z"].get(self.axis).copied().unwrap_or("?");
        write!(
            f,
            "grid counts workgroups, not work-items: {} workgroups of {} in {axis} launch {} work-items, more than the largest buffer's {} elements; if {} was meant as the global size, the grid is {}",
            self.grid,
            self.block,
            self.items,
            self.largest,
            self.grid,
            self.grid / self.block.max(1),
        )
    }
}

/// Largest buffer a job may ask for (elements), so a typo cannot ask the
/// host for terabytes.
pub const MAX_ELEMENTS: u64 = 1 << 28;

/// Largest total of all a job's buffers (bytes): 1 GiB. The per-buffer
/// cap alone does not bound a job with many buffers.
pub const MAX_JOB_BYTES: u64 = 1 << 30;

/// What is wrong with a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobError {
    /// Not JSON, or not the job's shape; serde's message.
    Syntax(String),
    /// `grid` or `block` without one to three entries.
    Dims { field: &'static str, len: usize },
    /// A buffer that is neither `values` nor `count` (+ optional `fill`).
    BufferShape { buffer: String },
    /// A buffer element or fill value that does not fit the type.
    BufferValue {
        buffer: String,
        index: Option<usize>,
        ty: &'static str,
    },
    /// A buffer larger than [`MAX_ELEMENTS`].
    BufferTooLarge { buffer: String, count: u64 },
    /// Buffers adding up to more than [`MAX_JOB_BYTES`].
    JobTooLarge { bytes: u64 },
    /// An argument that is not one `{"buffer": NAME}` or `{TYPE: NUMBER}`.
    ArgShape { index: usize },
    /// An argument's number that does not fit its type.
    ArgValue { index: usize, ty: &'static str },
    /// An argument naming a buffer the job does not define.
    UnknownBuffer { index: usize, buffer: String },
    /// Argument count differs from the kernel's explicit arguments.
    ArgCount {
        kernel: String,
        expected: usize,
        given: usize,
    },
    /// An argument that does not fit the kernel's metadata.
    ArgMismatch {
        index: usize,
        name: String,
        why: String,
    },
}

impl core::fmt::Display for JobError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            JobError::Syntax(e) => write!(f, "job file: {e}"),
            JobError::Dims { field, len } => {
                write!(f, "job {field} has {len} entries; it needs 1 to 3")
            }
            JobError::BufferShape { buffer } => write!(
                f,
                "buffer {buffer}: give either \"values\", or \"count\" with an optional \"fill\""
            ),
            JobError::BufferValue { buffer, index, ty } => match index {
                Some(i) => write!(f, "buffer {buffer}: value {i} is not a valid {ty}"),
                None => write!(f, "buffer {buffer}: fill is not a valid {ty}"),
            },
            JobError::BufferTooLarge { buffer, count } => write!(
                f,
                "buffer {buffer}: {count} elements is more than the {MAX_ELEMENTS} a job may ask for"
            ),
            JobError::JobTooLarge { bytes } => write!(
                f,
                "the job's buffers add up to {bytes} bytes, more than the {MAX_JOB_BYTES} a job may ask for"
            ),
            JobError::ArgShape { index } => write!(
                f,
                "argument {index}: write {{\"buffer\": NAME}} or {{TYPE: NUMBER}} with TYPE one of i8 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64"
            ),
            JobError::ArgValue { index, ty } => {
                write!(f, "argument {index}: the value is not a valid {ty}")
            }
            JobError::UnknownBuffer { index, buffer } => {
                write!(f, "argument {index}: no buffer named {buffer} in the job")
            }
            JobError::ArgCount {
                kernel,
                expected,
                given,
            } => write!(
                f,
                "kernel {kernel} takes {expected} arguments; the job gives {given}"
            ),
            JobError::ArgMismatch { index, name, why } => {
                write!(f, "argument {index} ({name}): {why}")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for JobError {}

fn geometry_axis(field: &'static str, v: &[u32]) -> Result<[u32; 3], JobError> {
    if v.is_empty() || v.len() > 3 {
        return Err(JobError::Dims {
            field,
            len: v.len(),
        });
    }
    let mut out = [1u32; 3];
    out[..v.len()].copy_from_slice(v);
    Ok(out)
}

impl Job {
    /// Parses and checks a job on its own (no kernel needed).
    pub fn parse(text: &str) -> Result<Job, JobError> {
        let raw: RawJob =
            serde_json::from_str(text).map_err(|e| JobError::Syntax(e.to_string()))?;
        let grid = geometry_axis("grid", &raw.grid)?;
        let block = geometry_axis("block", &raw.block)?;
        let dims = raw.grid.len().max(raw.block.len()) as u8;
        let mut total: u64 = 0;
        for (name, b) in &raw.buffers {
            let shape_ok = match (&b.values, b.count) {
                (Some(_), None) => b.fill.is_none(),
                (None, Some(_)) => true,
                _ => false,
            };
            if !shape_ok {
                return Err(JobError::BufferShape {
                    buffer: name.clone(),
                });
            }
            if let Some(count) = b.count.filter(|&c| c > MAX_ELEMENTS) {
                return Err(JobError::BufferTooLarge {
                    buffer: name.clone(),
                    count,
                });
            }
            let bad = |index| JobError::BufferValue {
                buffer: name.clone(),
                index,
                ty: b.ty.name(),
            };
            if let Some(vals) = &b.values {
                if vals.len() as u64 > MAX_ELEMENTS {
                    return Err(JobError::BufferTooLarge {
                        buffer: name.clone(),
                        count: vals.len() as u64,
                    });
                }
                for (i, v) in vals.iter().enumerate() {
                    b.ty.scalar(v).ok_or_else(|| bad(Some(i)))?;
                }
            }
            if let Some(f) = &b.fill {
                b.ty.scalar(f).ok_or_else(|| bad(None))?;
            }
            // Both factors are bounded (2^28 elements, 8 bytes), so the
            // product fits; the sum saturates rather than wraps.
            let count = b
                .count
                .unwrap_or_else(|| b.values.as_ref().map_or(0, |v| v.len() as u64));
            total = total.saturating_add(count * b.ty.size() as u64);
            if total > MAX_JOB_BYTES {
                return Err(JobError::JobTooLarge { bytes: total });
            }
        }
        let mut args = Vec::with_capacity(raw.args.len());
        for (index, a) in raw.args.iter().enumerate() {
            let mut it = a.iter();
            let (Some((key, value)), None) = (it.next(), it.next()) else {
                return Err(JobError::ArgShape { index });
            };
            if key == "buffer" {
                let name = value.as_str().ok_or(JobError::ArgShape { index })?;
                if !raw.buffers.contains_key(name) {
                    return Err(JobError::UnknownBuffer {
                        index,
                        buffer: name.to_string(),
                    });
                }
                args.push(ArgSpec::Buffer(name.to_string()));
            } else {
                let ty = ElemType::from_name(key).ok_or(JobError::ArgShape { index })?;
                let n = value.as_number().ok_or(JobError::ArgShape { index })?;
                let s = ty.scalar(n).ok_or(JobError::ArgValue {
                    index,
                    ty: ty.name(),
                })?;
                args.push(ArgSpec::Scalar(ty, s));
            }
        }
        Ok(Job {
            code_object: raw.code_object,
            kernel: raw.kernel,
            geometry: Geometry {
                grid,
                block,
                dims,
                dynamic_lds: raw.dynamic_lds_bytes,
            },
            buffers: raw.buffers,
            args,
        })
    }

    /// Checks the arguments against the kernel's metadata: count, kind
    /// (buffer or by-value) and size, naming the argument that differs.
    pub fn check(&self, meta: &KernelMeta) -> Result<(), JobError> {
        let expected = meta.explicit_count();
        if expected != self.args.len() {
            return Err(JobError::ArgCount {
                kernel: meta.name.clone(),
                expected,
                given: self.args.len(),
            });
        }
        for ((index, m), a) in meta.explicit_args().zip(&self.args) {
            let name = m
                .name
                .clone()
                .or_else(|| m.type_name.clone())
                .unwrap_or_else(|| "unnamed".to_string());
            let mismatch = |why: String| JobError::ArgMismatch {
                index,
                name: name.clone(),
                why,
            };
            match (&m.value_kind, a) {
                (ValueKind::GlobalBuffer, ArgSpec::Buffer(_)) => {}
                (ValueKind::GlobalBuffer, ArgSpec::Scalar(t, _)) => {
                    return Err(mismatch(format!(
                        "the kernel expects a buffer; the job gives a {} scalar",
                        t.name()
                    )));
                }
                (ValueKind::ByValue, ArgSpec::Scalar(t, _)) => {
                    if t.size() != m.size as usize {
                        return Err(mismatch(format!(
                            "the kernel expects {} bytes by value; the job gives a {} ({} bytes)",
                            m.size,
                            t.name(),
                            t.size()
                        )));
                    }
                }
                (ValueKind::ByValue, ArgSpec::Buffer(b)) => {
                    return Err(mismatch(format!(
                        "the kernel expects a {}-byte value; the job gives buffer {b}",
                        m.size
                    )));
                }
                (k, _) => {
                    return Err(mismatch(format!(
                        "value kind {k} cannot be given in a job file"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Bytes all the job's buffers take (at most [`MAX_JOB_BYTES`], as
    /// [`Job::parse`] checked), before any is built.
    pub fn total_bytes(&self) -> u64 {
        self.buffers
            .values()
            .map(|b| {
                let n = b
                    .count
                    .unwrap_or_else(|| b.values.as_ref().map_or(0, |v| v.len() as u64));
                n.saturating_mul(b.ty.size() as u64)
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Elements in the job's largest buffer (0 without buffers).
    fn largest_buffer(&self) -> u64 {
        self.buffers
            .values()
            .map(|b| {
                b.count
                    .unwrap_or_else(|| b.values.as_ref().map_or(0, |v| v.len() as u64))
            })
            .max()
            .unwrap_or(0)
    }

    /// A grid that reads like OpenCL's global size rather than a count of
    /// workgroups (`grid` is HIP's `gridDim`, [`Geometry::grid`]): an axis
    /// whose work-items (grid × block) exceed the largest buffer although
    /// the grid alone fits it and is a whole number of blocks. `None` when
    /// the geometry is plausible, with one-item blocks, or without buffers.
    pub fn grid_hint(&self) -> Option<GridHint> {
        let largest = self.largest_buffer();
        let g = &self.geometry;
        (0..usize::from(g.dims).min(3)).find_map(|axis| {
            let (grid, block) = (u64::from(g.grid[axis]), u64::from(g.block[axis]));
            let items = grid.saturating_mul(block);
            (block > 1 && largest > 0 && grid <= largest && items > largest && grid % block == 0)
                .then_some(GridHint {
                    axis,
                    grid,
                    block,
                    items,
                    largest,
                })
        })
    }

    /// A buffer's initial contents, little-endian.
    pub fn buffer_bytes(&self, name: &str) -> Option<Vec<u8>> {
        let b = self.buffers.get(name)?;
        let size = b.ty.size();
        let mut out = Vec::new();
        if let Some(vals) = &b.values {
            out.reserve(vals.len() * size);
            for v in vals {
                let s = b.ty.scalar(v)?;
                out.extend_from_slice(&s.to_le()[..size]);
            }
        } else {
            let count = usize::try_from(b.count?).ok()?;
            let fill = match &b.fill {
                Some(f) => b.ty.scalar(f)?.to_le(),
                None => [0; 8],
            };
            out.reserve(count * size);
            for _ in 0..count {
                out.extend_from_slice(&fill[..size]);
            }
        }
        Some(out)
    }

    /// The launch arguments, given each buffer's device address.
    pub fn launch_args(&self, addresses: &BTreeMap<String, u64>) -> Option<Vec<Arg<'static>>> {
        self.args
            .iter()
            .map(|a| match a {
                ArgSpec::Buffer(n) => addresses.get(n).map(|&addr| Arg::Buffer(addr)),
                ArgSpec::Scalar(_, s) => Some(Arg::Scalar(*s)),
            })
            .collect()
    }

    /// A buffer's contents as JSON values of its type.
    pub fn decode_buffer(&self, name: &str, bytes: &[u8]) -> Option<Vec<Value>> {
        let ty = self.buffers.get(name)?.ty;
        Some(
            bytes
                .chunks_exact(ty.size())
                .map(|c| ty.decode(c))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::ArgMeta;

    fn job_with_buffers(buffers: &[(&str, &str, u64)]) -> String {
        let b: Vec<String> = buffers
            .iter()
            .map(|(n, t, c)| alloc::format!("\"{n}\": {{\"type\": \"{t}\", \"count\": {c}}}"))
            .collect();
        alloc::format!(
            "{{\"code_object\": \"k.co\", \"kernel\": \"k\", \"grid\": [1], \"block\": [1], \"buffers\": {{{}}}, \"args\": []}}",
            b.join(", ")
        )
    }

    #[test]
    fn the_buffers_together_are_capped_not_only_each_one() {
        // One buffer of exactly the total cap is a job; two of them are not.
        let one = job_with_buffers(&[("a", "u32", MAX_ELEMENTS)]);
        assert!(Job::parse(&one).is_ok());
        assert_eq!(Job::parse(&one).map(|j| j.total_bytes()), Ok(MAX_JOB_BYTES));
        let two = job_with_buffers(&[("a", "u32", MAX_ELEMENTS), ("b", "u8", 1)]);
        let e = Job::parse(&two).unwrap_err();
        assert_eq!(
            e,
            JobError::JobTooLarge {
                bytes: MAX_JOB_BYTES + 1
            }
        );
        assert!(e.to_string().contains("add up to"), "{e}");
        // Many buffers each under the per-buffer cap.
        let many: Vec<(String, u64)> = (0..64)
            .map(|i| (alloc::format!("b{i}"), 1u64 << 27))
            .collect();
        let refs: Vec<(&str, &str, u64)> =
            many.iter().map(|(n, c)| (n.as_str(), "f64", *c)).collect();
        assert!(matches!(
            Job::parse(&job_with_buffers(&refs)),
            Err(JobError::JobTooLarge { .. })
        ));
    }

    fn geometry_job(grid: &str, block: &str, count: u64) -> Job {
        let text = alloc::format!(
            "{{\"code_object\": \"k.co\", \"kernel\": \"k\", \"grid\": {grid}, \"block\": {block}, \"buffers\": {{\"a\": {{\"type\": \"f32\", \"count\": {count}}}}}, \"args\": []}}"
        );
        Job::parse(&text).unwrap()
    }

    #[test]
    fn a_grid_that_reads_like_a_global_size_gets_a_hint() {
        // The user's case: 1024 elements, 64-item blocks, the OpenCL
        // global size 1024 written as the grid: 65536 work-items.
        let h = geometry_job("[1024]", "[64]", 1024).grid_hint().unwrap();
        assert_eq!(
            (h.axis, h.grid, h.block, h.items, h.largest),
            (0, 1024, 64, 65536, 1024)
        );
        let text = h.to_string();
        assert!(text.contains("grid counts workgroups"), "{text}");
        assert!(text.ends_with("the grid is 16"), "{text}");
        // The same launch written in workgroups is not hinted at.
        assert_eq!(geometry_job("[16]", "[64]", 1024).grid_hint(), None);
        // A grid rounding the buffer up to whole blocks is plausible.
        assert_eq!(geometry_job("[17]", "[64]", 1030).grid_hint(), None);
        // The y axis of a 2-D launch.
        let h = geometry_job("[1, 512]", "[1, 8]", 512).grid_hint().unwrap();
        assert_eq!((h.axis, h.items), (1, 4096));
        // One-item blocks make grid and global size the same thing.
        assert_eq!(geometry_job("[1024]", "[1]", 16).grid_hint(), None);
    }

    const ISSUE_JOB: &str = r#"{
      "code_object": "k.co", "kernel": "saxpy",
      "grid": [4, 1, 1], "block": [256, 1, 1], "dynamic_lds_bytes": 0,
      "buffers": {
        "y":   {"type": "f32", "values": [1.0, 2.0]},
        "x":   {"type": "f32", "count": 1024, "fill": 0.5},
        "out": {"type": "u32", "count": 16, "fill": 0}
      },
      "args": [{"buffer": "y"}, {"buffer": "x"}, {"f32": 2.0}, {"u32": 1024}]
    }"#;

    fn arg(kind: &str, size: u32, name: &str) -> ArgMeta {
        ArgMeta {
            name: Some(name.to_string()),
            type_name: None,
            offset: 0,
            size,
            value_kind: ValueKind::parse(kind),
            address_space: None,
            pointee_align: None,
        }
    }

    fn saxpy() -> KernelMeta {
        KernelMeta {
            name: "saxpy".into(),
            symbol: "saxpy.kd".into(),
            kernarg_segment_size: 64,
            kernarg_segment_align: 8,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            wavefront_size: 32,
            sgpr_count: 0,
            vgpr_count: 0,
            max_flat_workgroup_size: 1024,
            uses_dynamic_stack: false,
            reqd_workgroup_size: None,
            uniform_work_group_size: false,
            args: alloc::vec![
                arg("global_buffer", 8, "y"),
                arg("global_buffer", 8, "x"),
                arg("by_value", 4, "a"),
                arg("by_value", 4, "n"),
                arg("hidden_block_count_x", 4, "hb"),
            ],
        }
    }

    #[test]
    fn the_issue_example_parses_and_fits_its_kernel() {
        let job = Job::parse(ISSUE_JOB).unwrap();
        assert_eq!(job.geometry.grid, [4, 1, 1]);
        assert_eq!(job.geometry.block, [256, 1, 1]);
        assert_eq!(job.geometry.dims, 3);
        job.check(&saxpy()).unwrap();
        let y = job.buffer_bytes("y").unwrap();
        assert_eq!(y, [1.0f32.to_le_bytes(), 2.0f32.to_le_bytes()].concat());
        assert_eq!(job.buffer_bytes("x").unwrap().len(), 4096);
        assert_eq!(job.buffer_bytes("out").unwrap(), alloc::vec![0u8; 64]);
        let mut addr = BTreeMap::new();
        addr.insert("y".to_string(), 0x1000u64);
        addr.insert("x".to_string(), 0x2000u64);
        addr.insert("out".to_string(), 0x3000u64);
        assert_eq!(
            job.launch_args(&addr).unwrap(),
            alloc::vec![
                Arg::Buffer(0x1000),
                Arg::Buffer(0x2000),
                Arg::Scalar(Scalar::F32(2.0)),
                Arg::Scalar(Scalar::U32(1024)),
            ]
        );
        let back = job.decode_buffer("y", &y).unwrap();
        assert_eq!(back, alloc::vec![Value::from(1.0), Value::from(2.0)]);
    }

    #[test]
    fn mismatches_name_the_argument() {
        let job =
            Job::parse(&ISSUE_JOB.replace(r#"{"f32": 2.0}"#, r#"{"buffer": "out"}"#)).unwrap();
        let e = job.check(&saxpy()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "argument 2 (a): the kernel expects a 4-byte value; the job gives buffer out"
        );
        let job = Job::parse(&ISSUE_JOB.replace(r#"{"u32": 1024}"#, r#"{"u64": 1024}"#)).unwrap();
        let e = job.check(&saxpy()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("argument 3 (n): the kernel expects 4 bytes")
        );
        let job = Job::parse(&ISSUE_JOB.replace(r#"{"buffer": "y"}"#, r#"{"i32": 7}"#)).unwrap();
        let e = job.check(&saxpy()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("argument 0 (y): the kernel expects a buffer")
        );
        let job = Job::parse(&ISSUE_JOB.replace(r#", {"u32": 1024}]"#, "]")).unwrap();
        assert_eq!(
            job.check(&saxpy()).unwrap_err(),
            JobError::ArgCount {
                kernel: "saxpy".into(),
                expected: 4,
                given: 3
            }
        );
    }

    #[test]
    fn malformed_jobs_are_refused_with_reasons() {
        let cases: &[(&str, &str, &str)] = &[
            (
                r#""grid": [4, 1, 1]"#,
                r#""grid": []"#,
                "job grid has 0 entries",
            ),
            (
                r#""block": [256, 1, 1]"#,
                r#""block": [1,1,1,1]"#,
                "job block has 4 entries",
            ),
            (
                r#"{"u32": 1024}"#,
                r#"{"u8": 1024}"#,
                "argument 3: the value is not a valid u8",
            ),
            (
                r#"{"u32": 1024}"#,
                r#"{"u32": -1}"#,
                "argument 3: the value is not a valid u32",
            ),
            (
                r#"{"u32": 1024}"#,
                r#"{"u32": 1.5}"#,
                "argument 3: the value is not a valid u32",
            ),
            (r#"{"u32": 1024}"#, r#"{"q32": 1}"#, "argument 3: write"),
            (
                r#"{"u32": 1024}"#,
                r#"{"u32": 1, "i8": 2}"#,
                "argument 3: write",
            ),
            (
                r#"{"buffer": "x"}"#,
                r#"{"buffer": "z"}"#,
                "argument 1: no buffer named z",
            ),
            (
                r#""count": 16, "fill": 0"#,
                r#""count": 16, "values": [1]"#,
                "buffer out: give either",
            ),
            (r#""fill": 0}"#, r#""fill": -1}"#, "buffer out: fill is not"),
            (r#"[1.0, 2.0]"#, r#"[1.0, "a"]"#, "job file:"),
            (
                r#""count": 1024"#,
                r#""count": 99999999999"#,
                "buffer x: 99999999999 elements",
            ),
        ];
        for (from, to, want) in cases {
            let text = ISSUE_JOB.replacen(from, to, 1);
            assert_ne!(text, ISSUE_JOB, "{from}");
            let e = Job::parse(&text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{to}: {e}");
        }
    }

    #[test]
    fn every_type_round_trips() {
        for t in ElemType::ALL {
            let n: Number = serde_json::from_str("3").unwrap();
            let s = t.scalar(&n).unwrap();
            assert_eq!(s.size(), t.size());
            let v = t.decode(&s.to_le()[..t.size()]);
            assert_eq!(v.as_f64(), Some(3.0), "{}", t.name());
        }
        let n: Number = serde_json::from_str("-128").unwrap();
        assert_eq!(ElemType::I8.scalar(&n), Some(Scalar::I8(-128)));
        let n: Number = serde_json::from_str("0.5").unwrap();
        // 0.5 in binary16 is 0x3800 (sign 0, exponent 14, mantissa 0).
        assert_eq!(ElemType::F16.scalar(&n), Some(Scalar::F16(0x3800)));
    }
}
