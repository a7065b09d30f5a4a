//! The `NT_AMDGPU_METADATA` note: code object v4/v5/v6 kernel metadata.
//!
//! The keys and value kinds are those of LLVM's AMDGPUUsage ("Code Object
//! V3 to V6 Metadata") as LLVM 19's `AMDGPUHSAMetadataStreamer` writes
//! them. Everything the loader and the kernarg writer read is checked here
//! once: required keys present, numbers in range, every argument inside the
//! kernarg segment. Later stages then index without further checks.

use crate::msgpack::{self, Value};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// `.value_kind` of a kernel argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueKind {
    ByValue,
    GlobalBuffer,
    DynamicSharedPointer,
    Sampler,
    Image,
    Pipe,
    Queue,
    HiddenGlobalOffsetX,
    HiddenGlobalOffsetY,
    HiddenGlobalOffsetZ,
    HiddenNone,
    HiddenPrintfBuffer,
    HiddenHostcallBuffer,
    HiddenDefaultQueue,
    HiddenCompletionAction,
    HiddenMultigridSyncArg,
    HiddenHeapV1,
    HiddenBlockCountX,
    HiddenBlockCountY,
    HiddenBlockCountZ,
    HiddenGroupSizeX,
    HiddenGroupSizeY,
    HiddenGroupSizeZ,
    HiddenRemainderX,
    HiddenRemainderY,
    HiddenRemainderZ,
    HiddenGridDims,
    HiddenPrivateBase,
    HiddenSharedBase,
    HiddenQueuePtr,
    HiddenDynamicLdsSize,
    /// A kind this loader does not know; a launch of the kernel is refused.
    Other(String),
}

/// The value-kind strings, in LLVM's spelling.
const KINDS: &[(&str, ValueKind)] = &[
    ("by_value", ValueKind::ByValue),
    ("global_buffer", ValueKind::GlobalBuffer),
    ("dynamic_shared_pointer", ValueKind::DynamicSharedPointer),
    ("sampler", ValueKind::Sampler),
    ("image", ValueKind::Image),
    ("pipe", ValueKind::Pipe),
    ("queue", ValueKind::Queue),
    ("hidden_global_offset_x", ValueKind::HiddenGlobalOffsetX),
    ("hidden_global_offset_y", ValueKind::HiddenGlobalOffsetY),
    ("hidden_global_offset_z", ValueKind::HiddenGlobalOffsetZ),
    ("hidden_none", ValueKind::HiddenNone),
    ("hidden_printf_buffer", ValueKind::HiddenPrintfBuffer),
    ("hidden_hostcall_buffer", ValueKind::HiddenHostcallBuffer),
    ("hidden_default_queue", ValueKind::HiddenDefaultQueue),
    (
        "hidden_completion_action",
        ValueKind::HiddenCompletionAction,
    ),
    (
        "hidden_multigrid_sync_arg",
        ValueKind::HiddenMultigridSyncArg,
    ),
    ("hidden_heap_v1", ValueKind::HiddenHeapV1),
    ("hidden_block_count_x", ValueKind::HiddenBlockCountX),
    ("hidden_block_count_y", ValueKind::HiddenBlockCountY),
    ("hidden_block_count_z", ValueKind::HiddenBlockCountZ),
    ("hidden_group_size_x", ValueKind::HiddenGroupSizeX),
    ("hidden_group_size_y", ValueKind::HiddenGroupSizeY),
    ("hidden_group_size_z", ValueKind::HiddenGroupSizeZ),
    ("hidden_remainder_x", ValueKind::HiddenRemainderX),
    ("hidden_remainder_y", ValueKind::HiddenRemainderY),
    ("hidden_remainder_z", ValueKind::HiddenRemainderZ),
    ("hidden_grid_dims", ValueKind::HiddenGridDims),
    ("hidden_private_base", ValueKind::HiddenPrivateBase),
    ("hidden_shared_base", ValueKind::HiddenSharedBase),
    ("hidden_queue_ptr", ValueKind::HiddenQueuePtr),
    ("hidden_dynamic_lds_size", ValueKind::HiddenDynamicLdsSize),
];

impl ValueKind {
    pub fn parse(s: &str) -> ValueKind {
        KINDS
            .iter()
            .find(|(k, _)| *k == s)
            .map_or_else(|| ValueKind::Other(s.to_string()), |(_, v)| v.clone())
    }

    /// LLVM's spelling.
    pub fn as_str(&self) -> &str {
        match self {
            ValueKind::Other(s) => s,
            k => KINDS
                .iter()
                .find(|(_, v)| v == k)
                .map_or("?", |(name, _)| name),
        }
    }

    /// Hidden arguments are filled by the runtime, never by the caller.
    /// (A plain match: this runs for every argument on the launch path.)
    pub fn is_hidden(&self) -> bool {
        match self {
            ValueKind::ByValue
            | ValueKind::GlobalBuffer
            | ValueKind::DynamicSharedPointer
            | ValueKind::Sampler
            | ValueKind::Image
            | ValueKind::Pipe
            | ValueKind::Queue => false,
            ValueKind::Other(s) => s.starts_with("hidden_"),
            _ => true,
        }
    }
}

impl core::fmt::Display for ValueKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `.address_space` of a pointer argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressSpace {
    Private,
    Global,
    Constant,
    Local,
    Generic,
    Region,
}

impl AddressSpace {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "private" => Self::Private,
            "global" => Self::Global,
            "constant" => Self::Constant,
            "local" => Self::Local,
            "generic" => Self::Generic,
            "region" => Self::Region,
            _ => return None,
        })
    }
}

/// One entry of a kernel's `.args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgMeta {
    pub name: Option<String>,
    pub type_name: Option<String>,
    pub offset: u32,
    pub size: u32,
    pub value_kind: ValueKind,
    pub address_space: Option<AddressSpace>,
    pub pointee_align: Option<u32>,
}

impl ArgMeta {
    /// How errors refer to the argument: `2 ("x", float*)`.
    pub fn label(&self, index: usize) -> ArgLabel<'_> {
        ArgLabel { index, arg: self }
    }
}

/// Display helper naming an argument by index, name and type.
#[derive(Debug, Clone, Copy)]
pub struct ArgLabel<'a> {
    index: usize,
    arg: &'a ArgMeta,
}

impl core::fmt::Display for ArgLabel<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "argument {}", self.index)?;
        match (&self.arg.name, &self.arg.type_name) {
            (Some(n), Some(t)) => write!(f, " ({n}: {t})"),
            (Some(n), None) => write!(f, " ({n})"),
            (None, Some(t)) => write!(f, " ({t})"),
            (None, None) => Ok(()),
        }
    }
}

/// One entry of `amdhsa.kernels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMeta {
    pub name: String,
    /// The descriptor symbol, `NAME.kd`.
    pub symbol: String,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_align: u32,
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub wavefront_size: u32,
    pub sgpr_count: u32,
    pub vgpr_count: u32,
    pub max_flat_workgroup_size: u32,
    pub uses_dynamic_stack: bool,
    pub reqd_workgroup_size: Option<[u32; 3]>,
    pub uniform_work_group_size: bool,
    /// All arguments in metadata order, explicit ones first.
    pub args: Vec<ArgMeta>,
}

impl KernelMeta {
    /// The arguments a caller supplies (everything not `hidden_*`).
    pub fn explicit_args(&self) -> impl Iterator<Item = (usize, &ArgMeta)> {
        self.args
            .iter()
            .enumerate()
            .filter(|(_, a)| !a.value_kind.is_hidden())
    }

    pub fn explicit_count(&self) -> usize {
        self.explicit_args().count()
    }
}

/// The whole note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `amdhsa.version` (1.1 for v4, 1.2 for v5, 1.3 for v6).
    pub version: [u64; 2],
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx1100`.
    pub target: Option<String>,
    pub kernels: Vec<KernelMeta>,
}

/// What is wrong with the metadata; `kernel` and `arg` locate it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataError {
    pub kernel: Option<String>,
    pub arg: Option<usize>,
    pub problem: MetadataProblem,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataProblem {
    Msgpack(msgpack::MsgpackError),
    /// A required key is missing or has the wrong type.
    Key(&'static str),
    /// A number that does not fit where it goes.
    OutOfRange {
        key: &'static str,
        value: u64,
    },
    /// An argument outside the kernarg segment.
    ArgOutsideSegment {
        offset: u32,
        size: u32,
        segment: u32,
    },
    /// `.kernarg_segment_align` is not a power of two.
    BadAlign(u32),
    /// The same symbol listed for two kernels.
    DuplicateSymbol,
}

impl core::fmt::Display for MetadataError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("AMDGPU metadata")?;
        if let Some(k) = &self.kernel {
            write!(f, ", kernel {k}")?;
        }
        if let Some(a) = self.arg {
            write!(f, ", argument {a}")?;
        }
        f.write_str(": ")?;
        match &self.problem {
            MetadataProblem::Msgpack(e) => write!(f, "{e}"),
            MetadataProblem::Key(k) => write!(f, "key {k} is missing or has the wrong type"),
            MetadataProblem::OutOfRange { key, value } => {
                write!(f, "{key} = {value} is out of range")
            }
            MetadataProblem::ArgOutsideSegment {
                offset,
                size,
                segment,
            } => write!(
                f,
                "{size} bytes at offset {offset} do not fit the {segment}-byte kernarg segment"
            ),
            MetadataProblem::BadAlign(a) => {
                write!(f, ".kernarg_segment_align {a} is not a power of two")
            }
            MetadataProblem::DuplicateSymbol => f.write_str("its symbol is listed twice"),
        }
    }
}

struct Ctx<'k> {
    kernel: Option<&'k str>,
    arg: Option<usize>,
}

impl Ctx<'_> {
    fn err(&self, problem: MetadataProblem) -> MetadataError {
        MetadataError {
            kernel: self.kernel.map(|s| s.to_string()),
            arg: self.arg,
            problem,
        }
    }

    fn u32(&self, map: &Value<'_>, key: &'static str) -> Result<u32, MetadataError> {
        let v = map
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| self.err(MetadataProblem::Key(key)))?;
        u32::try_from(v).map_err(|_| self.err(MetadataProblem::OutOfRange { key, value: v }))
    }

    fn opt_str(&self, map: &Value<'_>, key: &'static str) -> Result<Option<String>, MetadataError> {
        match map.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| self.err(MetadataProblem::Key(key))),
        }
    }

    fn opt_bool(&self, map: &Value<'_>, key: &'static str) -> Result<bool, MetadataError> {
        match map.get(key) {
            None => Ok(false),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| self.err(MetadataProblem::Key(key))),
        }
    }
}

fn parse_arg(ctx: &Ctx<'_>, v: &Value<'_>, segment: u32) -> Result<ArgMeta, MetadataError> {
    if v.as_map().is_none() {
        return Err(ctx.err(MetadataProblem::Key(".args")));
    }
    let offset = ctx.u32(v, ".offset")?;
    let size = ctx.u32(v, ".size")?;
    let kind = v
        .get(".value_kind")
        .and_then(Value::as_str)
        .ok_or_else(|| ctx.err(MetadataProblem::Key(".value_kind")))?;
    let address_space = match v.get(".address_space") {
        None => None,
        Some(s) => Some(
            s.as_str()
                .and_then(AddressSpace::parse)
                .ok_or_else(|| ctx.err(MetadataProblem::Key(".address_space")))?,
        ),
    };
    let pointee_align = match v.get(".pointee_align") {
        None => None,
        Some(_) => Some(ctx.u32(v, ".pointee_align")?),
    };
    if u64::from(offset) + u64::from(size) > u64::from(segment) {
        return Err(ctx.err(MetadataProblem::ArgOutsideSegment {
            offset,
            size,
            segment,
        }));
    }
    Ok(ArgMeta {
        name: ctx.opt_str(v, ".name")?,
        type_name: ctx.opt_str(v, ".type_name")?,
        offset,
        size,
        value_kind: ValueKind::parse(kind),
        address_space,
        pointee_align,
    })
}

fn parse_kernel(v: &Value<'_>) -> Result<KernelMeta, MetadataError> {
    let anon = Ctx {
        kernel: None,
        arg: None,
    };
    if v.as_map().is_none() {
        return Err(anon.err(MetadataProblem::Key("amdhsa.kernels")));
    }
    let name = v
        .get(".name")
        .and_then(Value::as_str)
        .ok_or_else(|| anon.err(MetadataProblem::Key(".name")))?;
    let ctx = Ctx {
        kernel: Some(name),
        arg: None,
    };
    let symbol = v
        .get(".symbol")
        .and_then(Value::as_str)
        .ok_or_else(|| ctx.err(MetadataProblem::Key(".symbol")))?;
    let kernarg_segment_size = ctx.u32(v, ".kernarg_segment_size")?;
    let kernarg_segment_align = ctx.u32(v, ".kernarg_segment_align")?;
    if !kernarg_segment_align.is_power_of_two() {
        return Err(ctx.err(MetadataProblem::BadAlign(kernarg_segment_align)));
    }
    let reqd_workgroup_size = match v.get(".reqd_workgroup_size") {
        None => None,
        Some(r) => {
            let a = r
                .as_array()
                .filter(|a| a.len() == 3)
                .ok_or_else(|| ctx.err(MetadataProblem::Key(".reqd_workgroup_size")))?;
            let mut out = [0u32; 3];
            for (o, x) in out.iter_mut().zip(a) {
                *o = x
                    .as_u64()
                    .and_then(|x| u32::try_from(x).ok())
                    .ok_or_else(|| ctx.err(MetadataProblem::Key(".reqd_workgroup_size")))?;
            }
            Some(out)
        }
    };
    let mut args = Vec::new();
    if let Some(list) = v.get(".args") {
        let list = list
            .as_array()
            .ok_or_else(|| ctx.err(MetadataProblem::Key(".args")))?;
        for (i, a) in list.iter().enumerate() {
            let actx = Ctx {
                kernel: Some(name),
                arg: Some(i),
            };
            args.push(parse_arg(&actx, a, kernarg_segment_size)?);
        }
    }
    Ok(KernelMeta {
        name: name.to_string(),
        symbol: symbol.to_string(),
        kernarg_segment_size,
        kernarg_segment_align,
        group_segment_fixed_size: ctx.u32(v, ".group_segment_fixed_size")?,
        private_segment_fixed_size: ctx.u32(v, ".private_segment_fixed_size")?,
        wavefront_size: ctx.u32(v, ".wavefront_size")?,
        sgpr_count: ctx.u32(v, ".sgpr_count")?,
        vgpr_count: ctx.u32(v, ".vgpr_count")?,
        max_flat_workgroup_size: ctx.u32(v, ".max_flat_workgroup_size")?,
        uses_dynamic_stack: ctx.opt_bool(v, ".uses_dynamic_stack")?,
        reqd_workgroup_size,
        uniform_work_group_size: ctx.opt_bool(v, ".uniform_work_group_size")?,
        args,
    })
}

/// Parses the descriptor bytes of an `NT_AMDGPU_METADATA` note.
pub fn parse(desc: &[u8]) -> Result<Metadata, MetadataError> {
    let root_ctx = Ctx {
        kernel: None,
        arg: None,
    };
    let root = msgpack::decode(desc).map_err(|e| root_ctx.err(MetadataProblem::Msgpack(e)))?;
    let version = root
        .get("amdhsa.version")
        .and_then(Value::as_array)
        .filter(|a| a.len() == 2)
        .and_then(|a| Some([a[0].as_u64()?, a[1].as_u64()?]))
        .ok_or_else(|| root_ctx.err(MetadataProblem::Key("amdhsa.version")))?;
    let target = root_ctx.opt_str(&root, "amdhsa.target")?;
    let list = root
        .get("amdhsa.kernels")
        .and_then(Value::as_array)
        .ok_or_else(|| root_ctx.err(MetadataProblem::Key("amdhsa.kernels")))?;
    let mut kernels: Vec<KernelMeta> = Vec::with_capacity(list.len());
    for k in list {
        let k = parse_kernel(k)?;
        if kernels.iter().any(|o| o.symbol == k.symbol) {
            return Err(MetadataError {
                kernel: Some(k.name),
                arg: None,
                problem: MetadataProblem::DuplicateSymbol,
            });
        }
        kernels.push(k);
    }
    Ok(Metadata {
        version,
        target,
        kernels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_spelling() {
        for (s, k) in KINDS {
            assert_eq!(&ValueKind::parse(s), k);
            assert_eq!(k.as_str(), *s);
            // The match agrees with LLVM's naming convention.
            assert_eq!(k.is_hidden(), s.starts_with("hidden_"), "{s}");
        }
        assert_eq!(
            ValueKind::parse("hidden_future_thing"),
            ValueKind::Other("hidden_future_thing".to_string())
        );
        assert!(ValueKind::parse("hidden_future_thing").is_hidden());
        assert!(!ValueKind::GlobalBuffer.is_hidden());
    }
}
