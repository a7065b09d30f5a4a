//! The model CP's own reading of the AQL memory it consumes: packet
//! headers and bodies, `amd_queue_t` and `amd_signal_t`.
//!
//! Written from ROCR's public headers (`hsa.h`, `hsa_ext_amd.h`,
//! `amd_hsa_queue.h`, `amd_hsa_signal.h`), not from the runtime's AQL
//! types, so a layout or encoding bug in the runtime
//! shows up as a packet the CP refuses or misreads. Every offset and
//! value here is a conformance fact ([`FACTS`]).

use barebell_facts::Fact;

/// Packet header fields (`hsa_packet_header_t`, `hsa_packet_header_width_t`).
pub mod header {
    /// `HSA_PACKET_HEADER_TYPE` / `_WIDTH_TYPE`.
    pub const TYPE_SHIFT: u32 = 0;
    pub const TYPE_WIDTH: u32 = 8;
    /// `HSA_PACKET_HEADER_BARRIER` / `_WIDTH_BARRIER`.
    pub const BARRIER_SHIFT: u32 = 8;
    pub const BARRIER_WIDTH: u32 = 1;
    /// `HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE` / width.
    pub const ACQUIRE_SHIFT: u32 = 9;
    pub const ACQUIRE_WIDTH: u32 = 2;
    /// `HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE` / width.
    pub const RELEASE_SHIFT: u32 = 11;
    pub const RELEASE_WIDTH: u32 = 2;
    /// Bits above the release scope: no field is defined there.
    pub const RESERVED_MASK: u16 = !((1u16 << (RELEASE_SHIFT + RELEASE_WIDTH)) - 1);

    /// `hsa_packet_type_t`.
    pub const VENDOR_SPECIFIC: u16 = 0;
    pub const INVALID: u16 = 1;
    pub const KERNEL_DISPATCH: u16 = 2;
    pub const BARRIER_AND: u16 = 3;
    pub const AGENT_DISPATCH: u16 = 4;
    pub const BARRIER_OR: u16 = 5;

    /// `hsa_fence_scope_t`; 3 is not defined.
    pub const SCOPE_NONE: u16 = 0;
    pub const SCOPE_AGENT: u16 = 1;
    pub const SCOPE_SYSTEM: u16 = 2;
    pub const SCOPE_RESERVED: u16 = 3;

    fn field(h: u16, shift: u32, width: u32) -> u16 {
        (h >> shift) & ((1 << width) - 1)
    }

    pub fn packet_type(h: u16) -> u16 {
        field(h, TYPE_SHIFT, TYPE_WIDTH)
    }
    pub fn barrier(h: u16) -> bool {
        field(h, BARRIER_SHIFT, BARRIER_WIDTH) != 0
    }
    pub fn acquire(h: u16) -> u16 {
        field(h, ACQUIRE_SHIFT, ACQUIRE_WIDTH)
    }
    pub fn release(h: u16) -> u16 {
        field(h, RELEASE_SHIFT, RELEASE_WIDTH)
    }
}

/// Byte offsets inside a 64-byte packet.
pub mod packet {
    /// `hsa_kernel_dispatch_packet_t`.
    pub const SETUP: usize = 2;
    pub const WORKGROUP_SIZE_X: usize = 4;
    pub const GRID_SIZE_X: usize = 12;
    pub const PRIVATE_SEGMENT_SIZE: usize = 24;
    pub const GROUP_SEGMENT_SIZE: usize = 28;
    pub const KERNEL_OBJECT: usize = 32;
    pub const KERNARG_ADDRESS: usize = 40;
    /// Every packet kind keeps its completion signal here.
    pub const COMPLETION_SIGNAL: usize = 56;
    /// `HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS` / width.
    pub const SETUP_DIMENSIONS_SHIFT: u32 = 0;
    pub const SETUP_DIMENSIONS_WIDTH: u32 = 2;
    /// `hsa_barrier_and_packet_t::dep_signal` (five handles).
    pub const DEP_SIGNAL: usize = 8;
    pub const DEP_SIGNALS: usize = 5;
    /// `hsa_amd_vendor_packet_header_t::AmdFormat` (byte 2).
    pub const AMD_FORMAT: usize = 2;
    /// `hsa_amd_barrier_value_packet_t`.
    pub const BV_SIGNAL: usize = 8;
    pub const BV_VALUE: usize = 16;
    pub const BV_MASK: usize = 24;
    pub const BV_COND: usize = 32;
    /// `HSA_AMD_PACKET_TYPE_BARRIER_VALUE`.
    pub const AMD_BARRIER_VALUE: u8 = 2;
    /// ROCR's `AMD_AQL_FORMAT_PM4_IB` (ROCR's `amd_aql_queue.cpp` uses 1
    /// in the vendor header's format byte; no public header names it, so
    /// this value is not a checked fact).
    pub const AMD_FORMAT_PM4_IB: u8 = 1;
}

/// `amd_queue_t` (`amd_hsa_queue.h`).
pub mod queue {
    pub const WRITE_DISPATCH_ID: u64 = 56;
    pub const READ_DISPATCH_ID: u64 = 128;
    pub const QUEUE_PROPERTIES: u64 = 180;
    pub const QUEUE_INACTIVE_SIGNAL: u64 = 192;
    /// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT`.
    pub const ENABLE_PROFILING_SHIFT: u32 = 3;
    /// What the CP stores into `queue_inactive_signal` when a dispatch
    /// needs more scratch than the queue has: bit 0 for a wave64 kernel,
    /// bit 10 for a wave32 one. ROCR's `AqlQueue::DynamicScratchHandler`
    /// (5.2.3, `amd_aql_queue.cpp`) takes `error_code & 0x401` as
    /// "insufficient scratch" and the bit as the wave size; no public
    /// header names the codes, so they rest on that citation.
    pub const INSUFFICIENT_SCRATCH_WAVE64: i64 = 0x1;
    pub const INSUFFICIENT_SCRATCH_WAVE32: i64 = 0x400;
}

/// `amd_signal_t` (`amd_hsa_signal.h`).
pub mod signal {
    pub const VALUE: u64 = 8;
    pub const EVENT_MAILBOX_PTR: u64 = 16;
    pub const EVENT_ID: u64 = 24;
    pub const START_TS: u64 = 32;
    pub const END_TS: u64 = 40;
}

/// `hsa_signal_condition_t`.
pub mod condition {
    pub const EQ: u32 = 0;
    pub const NE: u32 = 1;
    pub const LT: u32 = 2;
    pub const GTE: u32 = 3;

    /// Whether `value cond compare` holds; `None` for an undefined code.
    pub fn holds(cond: u32, value: i64, compare: i64) -> Option<bool> {
        Some(match cond {
            EQ => value == compare,
            NE => value != compare,
            LT => value < compare,
            GTE => value >= compare,
            _ => return None,
        })
    }
}

const HSA: &str = "hsa/hsa.h";
const HSA_AMD: &str = "hsa/hsa_ext_amd.h";
const Q: &str = "hsa/amd_hsa_queue.h";
const S: &str = "hsa/amd_hsa_signal.h";
const DISPATCH: &str = "hsa_kernel_dispatch_packet_t";

const fn k(h: &'static str, e: &'static str, v: u64) -> Fact {
    Fact::constant(h, e, v)
}
const fn at(h: &'static str, t: &'static str, f: &'static str, v: u64) -> Fact {
    Fact::offset(h, t, f, v as usize)
}

/// Every AQL fact the CP model reads memory by.
pub const FACTS: &[Fact] = &[
    k(HSA, "HSA_PACKET_HEADER_TYPE", header::TYPE_SHIFT as u64),
    k(
        HSA,
        "HSA_PACKET_HEADER_WIDTH_TYPE",
        header::TYPE_WIDTH as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_HEADER_BARRIER",
        header::BARRIER_SHIFT as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_HEADER_WIDTH_BARRIER",
        header::BARRIER_WIDTH as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE",
        header::ACQUIRE_SHIFT as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE",
        header::ACQUIRE_WIDTH as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE",
        header::RELEASE_SHIFT as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE",
        header::RELEASE_WIDTH as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_TYPE_VENDOR_SPECIFIC",
        header::VENDOR_SPECIFIC as u64,
    ),
    k(HSA, "HSA_PACKET_TYPE_INVALID", header::INVALID as u64),
    k(
        HSA,
        "HSA_PACKET_TYPE_KERNEL_DISPATCH",
        header::KERNEL_DISPATCH as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_TYPE_BARRIER_AND",
        header::BARRIER_AND as u64,
    ),
    k(
        HSA,
        "HSA_PACKET_TYPE_AGENT_DISPATCH",
        header::AGENT_DISPATCH as u64,
    ),
    k(HSA, "HSA_PACKET_TYPE_BARRIER_OR", header::BARRIER_OR as u64),
    k(HSA, "HSA_FENCE_SCOPE_NONE", header::SCOPE_NONE as u64),
    k(HSA, "HSA_FENCE_SCOPE_AGENT", header::SCOPE_AGENT as u64),
    k(HSA, "HSA_FENCE_SCOPE_SYSTEM", header::SCOPE_SYSTEM as u64),
    at(HSA, DISPATCH, "setup", packet::SETUP as u64),
    at(
        HSA,
        DISPATCH,
        "workgroup_size_x",
        packet::WORKGROUP_SIZE_X as u64,
    ),
    at(HSA, DISPATCH, "grid_size_x", packet::GRID_SIZE_X as u64),
    at(
        HSA,
        DISPATCH,
        "private_segment_size",
        packet::PRIVATE_SEGMENT_SIZE as u64,
    ),
    at(
        HSA,
        DISPATCH,
        "group_segment_size",
        packet::GROUP_SEGMENT_SIZE as u64,
    ),
    at(HSA, DISPATCH, "kernel_object", packet::KERNEL_OBJECT as u64),
    at(
        HSA,
        DISPATCH,
        "kernarg_address",
        packet::KERNARG_ADDRESS as u64,
    ),
    at(
        HSA,
        DISPATCH,
        "completion_signal",
        packet::COMPLETION_SIGNAL as u64,
    ),
    k(
        HSA,
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS",
        packet::SETUP_DIMENSIONS_SHIFT as u64,
    ),
    k(
        HSA,
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS",
        packet::SETUP_DIMENSIONS_WIDTH as u64,
    ),
    at(
        HSA,
        "hsa_barrier_and_packet_t",
        "dep_signal",
        packet::DEP_SIGNAL as u64,
    ),
    at(
        HSA,
        "hsa_barrier_or_packet_t",
        "dep_signal",
        packet::DEP_SIGNAL as u64,
    ),
    k(
        HSA,
        "sizeof(((hsa_barrier_and_packet_t *)0)->dep_signal) / sizeof(hsa_signal_t)",
        packet::DEP_SIGNALS as u64,
    ),
    at(
        HSA,
        "hsa_barrier_and_packet_t",
        "completion_signal",
        packet::COMPLETION_SIGNAL as u64,
    ),
    at(
        HSA_AMD,
        "hsa_amd_vendor_packet_header_t",
        "AmdFormat",
        packet::AMD_FORMAT as u64,
    ),
    at(
        HSA_AMD,
        "hsa_amd_barrier_value_packet_t",
        "signal",
        packet::BV_SIGNAL as u64,
    ),
    at(
        HSA_AMD,
        "hsa_amd_barrier_value_packet_t",
        "value",
        packet::BV_VALUE as u64,
    ),
    at(
        HSA_AMD,
        "hsa_amd_barrier_value_packet_t",
        "mask",
        packet::BV_MASK as u64,
    ),
    at(
        HSA_AMD,
        "hsa_amd_barrier_value_packet_t",
        "cond",
        packet::BV_COND as u64,
    ),
    at(
        HSA_AMD,
        "hsa_amd_barrier_value_packet_t",
        "completion_signal",
        packet::COMPLETION_SIGNAL as u64,
    ),
    k(
        HSA_AMD,
        "HSA_AMD_PACKET_TYPE_BARRIER_VALUE",
        packet::AMD_BARRIER_VALUE as u64,
    ),
    at(
        Q,
        "amd_queue_t",
        "write_dispatch_id",
        queue::WRITE_DISPATCH_ID,
    ),
    at(
        Q,
        "amd_queue_t",
        "read_dispatch_id",
        queue::READ_DISPATCH_ID,
    ),
    at(
        Q,
        "amd_queue_t",
        "queue_properties",
        queue::QUEUE_PROPERTIES,
    ),
    at(
        Q,
        "amd_queue_t",
        "queue_inactive_signal",
        queue::QUEUE_INACTIVE_SIGNAL,
    ),
    k(
        Q,
        "AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT",
        queue::ENABLE_PROFILING_SHIFT as u64,
    ),
    at(S, "amd_signal_t", "value", signal::VALUE),
    at(
        S,
        "amd_signal_t",
        "event_mailbox_ptr",
        signal::EVENT_MAILBOX_PTR,
    ),
    at(S, "amd_signal_t", "event_id", signal::EVENT_ID),
    at(S, "amd_signal_t", "start_ts", signal::START_TS),
    at(S, "amd_signal_t", "end_ts", signal::END_TS),
    k(HSA, "HSA_SIGNAL_CONDITION_EQ", condition::EQ as u64),
    k(HSA, "HSA_SIGNAL_CONDITION_NE", condition::NE as u64),
    k(HSA, "HSA_SIGNAL_CONDITION_LT", condition::LT as u64),
    k(HSA, "HSA_SIGNAL_CONDITION_GTE", condition::GTE as u64),
];
