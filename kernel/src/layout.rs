//! A kernel's arguments reduced at load time to what a launch reads: the
//! explicit and hidden slots of the metadata's `.args`, with the segment
//! size and alignment. [`crate::loader`] builds one per kernel;
//! [`crate::kernarg`] checks and writes arguments against it.

use crate::metadata::{KernelMeta, ValueKind};
use alloc::vec::Vec;

/// HSA requires kernarg segments 16-byte aligned (ROCR allocates them so).
pub const KERNARG_MIN_ALIGN: u32 = 16;

/// How an explicit argument is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplicitKind {
    Buffer,
    ByValue,
    Local,
    /// Images, samplers, pipes, queues, unknown kinds: refused at launch.
    Unsupported,
}

/// An explicit argument, compactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExplicitSlot {
    /// Index in the metadata's `.args`.
    pub index: u16,
    pub kind: ExplicitKind,
    pub offset: u32,
    pub size: u32,
    pub pointee_align: u32,
}

/// The runtime values a hidden argument can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiddenKind {
    BlockCount(u8),
    GroupSize(u8),
    GridDims,
    DynamicLdsSize,
    QueuePtr,
    PrivateBase,
    SharedBase,
    Heap,
    Hostcall,
    Printf,
}

/// A hidden argument, compactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HiddenSlot {
    pub kind: HiddenKind,
    pub offset: u32,
    /// 1 to 8 bytes are written.
    pub size: u8,
}

/// A kernel's arguments, reduced at load time to what a launch reads, so
/// the launch path walks two short arrays.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArgLayout {
    pub explicit: Vec<ExplicitSlot>,
    pub hidden: Vec<HiddenSlot>,
    /// The first `hidden_*` kind this loader does not know, if any (such
    /// a kernel is refused at launch: its value cannot be filled).
    pub unknown_hidden: Option<usize>,
    pub segment_size: u32,
    pub segment_align: u32,
    pub static_lds: u32,
}

impl ArgLayout {
    pub fn new(meta: &KernelMeta) -> Self {
        let mut l = ArgLayout {
            segment_size: meta.kernarg_segment_size,
            segment_align: meta.kernarg_segment_align.max(KERNARG_MIN_ALIGN),
            static_lds: meta.group_segment_fixed_size,
            ..Default::default()
        };
        for (i, m) in meta.args.iter().enumerate() {
            let hidden = |kind| HiddenSlot {
                kind,
                offset: m.offset,
                size: m.size.min(8) as u8,
            };
            let h = match &m.value_kind {
                ValueKind::HiddenBlockCountX => hidden(HiddenKind::BlockCount(0)),
                ValueKind::HiddenBlockCountY => hidden(HiddenKind::BlockCount(1)),
                ValueKind::HiddenBlockCountZ => hidden(HiddenKind::BlockCount(2)),
                ValueKind::HiddenGroupSizeX => hidden(HiddenKind::GroupSize(0)),
                ValueKind::HiddenGroupSizeY => hidden(HiddenKind::GroupSize(1)),
                ValueKind::HiddenGroupSizeZ => hidden(HiddenKind::GroupSize(2)),
                ValueKind::HiddenGridDims => hidden(HiddenKind::GridDims),
                ValueKind::HiddenDynamicLdsSize => hidden(HiddenKind::DynamicLdsSize),
                ValueKind::HiddenQueuePtr => hidden(HiddenKind::QueuePtr),
                ValueKind::HiddenPrivateBase => hidden(HiddenKind::PrivateBase),
                ValueKind::HiddenSharedBase => hidden(HiddenKind::SharedBase),
                ValueKind::HiddenHeapV1 => hidden(HiddenKind::Heap),
                ValueKind::HiddenHostcallBuffer => hidden(HiddenKind::Hostcall),
                ValueKind::HiddenPrintfBuffer => hidden(HiddenKind::Printf),
                // Zero-valued (the segment is zeroed before filling):
                // remainders and global offsets are 0 for a HIP grid; no
                // cooperative launch, no device-side enqueue.
                ValueKind::HiddenRemainderX
                | ValueKind::HiddenRemainderY
                | ValueKind::HiddenRemainderZ
                | ValueKind::HiddenGlobalOffsetX
                | ValueKind::HiddenGlobalOffsetY
                | ValueKind::HiddenGlobalOffsetZ
                | ValueKind::HiddenMultigridSyncArg
                | ValueKind::HiddenDefaultQueue
                | ValueKind::HiddenCompletionAction
                | ValueKind::HiddenNone => continue,
                k if k.is_hidden() => {
                    l.unknown_hidden.get_or_insert(i);
                    continue;
                }
                k => {
                    let kind = match k {
                        ValueKind::GlobalBuffer => ExplicitKind::Buffer,
                        ValueKind::ByValue => ExplicitKind::ByValue,
                        ValueKind::DynamicSharedPointer => ExplicitKind::Local,
                        _ => ExplicitKind::Unsupported,
                    };
                    l.explicit.push(ExplicitSlot {
                        index: i as u16,
                        kind,
                        offset: m.offset,
                        size: m.size,
                        pointee_align: m.pointee_align.unwrap_or(1).max(1),
                    });
                    continue;
                }
            };
            l.hidden.push(h);
        }
        l
    }
}
