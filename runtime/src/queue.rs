//! The user-mode queue descriptor the CP reads: `amd_queue_t`.
//!
//! The CP is told only the address of `read_dispatch_id` (the MQD's
//! `cp_hqd_pq_rptr_report_addr`) and of `write_dispatch_id`
//! (`cp_hqd_pq_wptr_poll_addr`); it finds the rest of the descriptor by
//! fixed offsets from there. So the two indices must live inside a
//! complete, correctly laid out `amd_queue_t`, not in a struct of our own
//! design. [`FACTS`] pins that layout to ROCR's `amd_hsa_queue.h`.

use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `hsa_queue_t` (large model).
#[derive(Debug, Clone, Copy, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct HsaQueue {
    /// `hsa_queue_type32_t`.
    pub type_: u32,
    /// Bit set of `hsa_queue_feature_t`.
    pub features: u32,
    pub base_address: u64,
    pub doorbell_signal: u64,
    /// Number of packets in the ring.
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// `amd_queue_t`: 256 bytes, 64-byte aligned.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C, align(64))]
pub struct AmdQueue {
    pub hsa_queue: HsaQueue,
    pub reserved1: [u32; 4],
    pub write_dispatch_id: u64,
    pub group_segment_aperture_base_hi: u32,
    pub private_segment_aperture_base_hi: u32,
    pub max_cu_id: u32,
    pub max_wave_id: u32,
    pub max_legacy_doorbell_dispatch_id_plus_1: u64,
    pub legacy_doorbell_lock: u32,
    pub reserved2: [u32; 9],
    pub read_dispatch_id: u64,
    pub read_dispatch_id_field_base_byte_offset: u32,
    pub compute_tmpring_size: u32,
    pub scratch_resource_descriptor: [u32; 4],
    pub scratch_backing_memory_location: u64,
    pub scratch_backing_memory_byte_size: u64,
    pub scratch_wave64_lane_byte_size: u32,
    pub queue_properties: u32,
    pub reserved3: [u32; 2],
    pub queue_inactive_signal: u64,
    pub reserved4: [u32; 14],
}

/// `HSA_QUEUE_TYPE_MULTI`: several producers may reserve slots.
pub const HSA_QUEUE_TYPE_MULTI: u32 = 0;
/// `HSA_QUEUE_FEATURE_KERNEL_DISPATCH`.
pub const HSA_QUEUE_FEATURE_KERNEL_DISPATCH: u32 = 1;
/// `AMD_QUEUE_PROPERTIES_IS_PTR64` bit position.
pub const AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT: u32 = 1;
/// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING` bit position: with it set the CP
/// writes start/end timestamps into completion signals.
pub const AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT: u32 = 3;

const _: () = {
    assert!(core::mem::size_of::<AmdQueue>() == 256);
    assert!(core::mem::align_of::<AmdQueue>() == 64);
    assert!(core::mem::offset_of!(AmdQueue, write_dispatch_id) == 56);
    assert!(core::mem::offset_of!(AmdQueue, read_dispatch_id) == 128);
};

const Q: &str = "hsa/amd_hsa_queue.h";

/// Layout facts checked against ROCR's `hsa.h` and `amd_hsa_queue.h`.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!("hsa/hsa.h", HsaQueue = "hsa_queue_t" {
        type_ = "type", features = "features", base_address = "base_address",
        doorbell_signal = "doorbell_signal", size = "size", reserved1 = "reserved1", id = "id",
    }),
    layout_facts!(Q, AmdQueue = "amd_queue_t" {
        hsa_queue = "hsa_queue",
        write_dispatch_id = "write_dispatch_id",
        group_segment_aperture_base_hi = "group_segment_aperture_base_hi",
        private_segment_aperture_base_hi = "private_segment_aperture_base_hi",
        max_cu_id = "max_cu_id", max_wave_id = "max_wave_id",
        max_legacy_doorbell_dispatch_id_plus_1 = "max_legacy_doorbell_dispatch_id_plus_1",
        legacy_doorbell_lock = "legacy_doorbell_lock",
        read_dispatch_id = "read_dispatch_id",
        read_dispatch_id_field_base_byte_offset = "read_dispatch_id_field_base_byte_offset",
        compute_tmpring_size = "compute_tmpring_size",
        scratch_resource_descriptor = "scratch_resource_descriptor",
        scratch_backing_memory_location = "scratch_backing_memory_location",
        scratch_backing_memory_byte_size = "scratch_backing_memory_byte_size",
        scratch_wave64_lane_byte_size = "scratch_wave64_lane_byte_size",
        queue_properties = "queue_properties",
        queue_inactive_signal = "queue_inactive_signal",
    }),
    [
        Fact::constant(
            Q,
            "__alignof__(amd_queue_t)",
            core::mem::align_of::<AmdQueue>() as u64
        ),
        Fact::constant(
            "hsa/hsa.h",
            "HSA_QUEUE_TYPE_MULTI",
            HSA_QUEUE_TYPE_MULTI as u64
        ),
        Fact::constant(
            "hsa/hsa.h",
            "HSA_QUEUE_FEATURE_KERNEL_DISPATCH",
            HSA_QUEUE_FEATURE_KERNEL_DISPATCH as u64
        ),
        Fact::constant(
            Q,
            "AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT",
            AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT as u64
        ),
        Fact::constant(
            Q,
            "AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT",
            AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT as u64
        ),
    ],
);
